//! Which block-kernel table serves a backend. The API files of `src/block/` ask here; the
//! tables themselves are composed in `src/arch/<arch>/block_tables.rs` and `src/arch/wasm32.rs`.

use super::spec::kernels::BlockKernels;
use crate::{Backend, Error};

static SCALAR: BlockKernels = BlockKernels::empty();

/// The table of `backend` (whether or not it runs here).
pub(crate) fn table(backend: Backend) -> &'static BlockKernels {
    match backend {
        Backend::Scalar => &SCALAR,
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => &crate::arch::x86_64::block_tables::AVX2,
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => &crate::arch::x86_64::block_tables::AVX512,
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512Vbmi | Backend::Avx512Bf16 => {
            &crate::arch::x86_64::block_tables::AVX512_VBMI
        }
        #[cfg(all(target_arch = "x86_64", vcvt_avx512fp16))]
        Backend::Avx512Fp16 => &crate::arch::x86_64::block_tables::AVX512_FP16,
        #[cfg(all(target_arch = "x86_64", not(vcvt_avx512fp16)))]
        Backend::Avx512Fp16 => &crate::arch::x86_64::block_tables::AVX512_VBMI,
        #[cfg(target_arch = "aarch64")]
        Backend::Neon | Backend::NeonBf16 => &crate::arch::aarch64::block_tables::NEON,
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Backend::Simd128 => &crate::arch::wasm32::SIMD128_BLOCK,
        #[allow(unreachable_patterns)]
        _ => &SCALAR,
    }
}

/// The table of the active backend.
pub(crate) fn active() -> &'static BlockKernels {
    table(Backend::active())
}

/// The chosen backend (the active one when `None`), or the error saying that it cannot run
/// here.
#[inline]
pub(crate) fn resolve(backend: Option<Backend>) -> Result<Backend, Error> {
    match backend {
        Some(b) if !b.is_available() => Err(Error::BackendUnavailable { backend: b }),
        Some(b) => Ok(b),
        None => Ok(Backend::active()),
    }
}

/// The table of the chosen backend (the active one when `None`), or the error saying that
/// it cannot run here.
pub(crate) fn check_backend(backend: Option<Backend>) -> Result<&'static BlockKernels, Error> {
    let b = match backend {
        Some(b) if !b.is_available() => return Err(Error::BackendUnavailable { backend: b }),
        Some(b) => b,
        None => Backend::active(),
    };
    Ok(table(b))
}
