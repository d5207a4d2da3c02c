//! x86-64 backends and their run-time detection.
//!
//! With `std`, detection uses `is_x86_feature_detected!` (which caches CPUID itself); the
//! dispatcher calls it once and caches its own choice. Without `std`, a backend is available
//! only if the build enables its target features at compile time.

pub(crate) mod avx2;
pub(crate) mod avx2_block;
mod avx2_direct;
mod avx2_small;
pub(crate) mod avx512;
pub(crate) mod avx512_bf16;
mod avx512_block;
mod avx512_e8m0;
#[cfg(vcvt_avx512fp16)]
pub(crate) mod avx512_fp16;
pub(crate) mod avx512_vbmi;
mod avx512_vbmi_block;
pub(crate) mod block_tables;
pub(crate) mod tables;

use core::sync::atomic::{AtomicUsize, Ordering};

/// Whether MXCSR is the default: round to nearest even, no FTZ, no DAZ, all six exceptions
/// masked (`0x1F80`); the six sticky exception flags (bits 0-5) may be set. Under it the
/// SSE/AVX f32 operations are the IEEE ones, subnormals included.
#[inline]
pub(crate) fn mxcsr_is_default() -> bool {
    mxcsr() & !0x3F == 0x1F80
}

pub(crate) use crate::simd::x86_64::mxcsr;

/// AVX2 + FMA + F16C: the `Avx2` tier.
pub(crate) fn avx2_available() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("f16c")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(all(
            target_feature = "avx2",
            target_feature = "fma",
            target_feature = "f16c"
        ))
    }
}

/// AVX-512 F/BW/VL/DQ (plus the AVX2 tier, which every such CPU has): the `Avx512` tier.
pub(crate) fn avx512_available() -> bool {
    #[cfg(feature = "std")]
    {
        avx2_available()
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512dq")
    }
    #[cfg(not(feature = "std"))]
    {
        avx2_available()
            && cfg!(all(
                target_feature = "avx512f",
                target_feature = "avx512bw",
                target_feature = "avx512vl",
                target_feature = "avx512dq"
            ))
    }
}

/// The `Avx512` tier plus AVX512_VBMI: the `Avx512Vbmi` tier.
pub(crate) fn avx512_vbmi_available() -> bool {
    #[cfg(feature = "std")]
    {
        avx512_available() && std::is_x86_feature_detected!("avx512vbmi")
    }
    #[cfg(not(feature = "std"))]
    {
        avx512_available() && cfg!(target_feature = "avx512vbmi")
    }
}

/// The `Avx512Vbmi` tier plus AVX512_BF16: the `Avx512Bf16` tier.
pub(crate) fn avx512_bf16_available() -> bool {
    #[cfg(feature = "std")]
    {
        avx512_vbmi_available() && std::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(feature = "std"))]
    {
        avx512_vbmi_available() && cfg!(target_feature = "avx512bf16")
    }
}

/// The `Avx512Bf16` tier plus AVX512_FP16: the `Avx512Fp16` tier. Always false when the
/// compiler lacks the stable AVX512_FP16 intrinsics (`build.rs`), since the tier's kernels
/// are then not compiled.
pub(crate) fn avx512_fp16_available() -> bool {
    #[cfg(all(vcvt_avx512fp16, feature = "std"))]
    {
        avx512_bf16_available() && std::is_x86_feature_detected!("avx512fp16")
    }
    #[cfg(all(vcvt_avx512fp16, not(feature = "std")))]
    {
        avx512_bf16_available() && cfg!(target_feature = "avx512fp16")
    }
    #[cfg(not(vcvt_avx512fp16))]
    {
        false
    }
}

/// The environment variable that sets the size (source plus destination bytes) from which
/// conversions write their destination with streaming stores (`src/stream.rs`, and the
/// crate docs, "Backends").
#[cfg(feature = "std")]
const STREAM_ENV_VAR: &str = "VCVT_STREAM_MIN_BYTES";

/// Conversions that move at least this many bytes (source plus destination) use streaming
/// stores for their destination: three quarters of the last-level cache, as reported by
/// CPUID leaf 4 (Intel) or 0x8000001D (AMD), or 32 MiB when neither reports one. With
/// `std`, the environment variable `VCVT_STREAM_MIN_BYTES` (a byte count; read once)
/// overrides it (0 streams every conversion, a huge value none; empty is unset, and
/// anything else that is not a decimal byte count panics on the first conversion that
/// reads it, naming the variable).
pub(crate) fn stream_min_bytes() -> usize {
    let v = stream_min_bytes_cached();
    if v != 0 {
        return v;
    }
    let v = compute_stream_min_bytes().max(1);
    STREAM_MIN_BYTES.store(v, Ordering::Relaxed);
    v
}

/// The cached [`stream_min_bytes`], or 0 before it is first computed.
#[inline(always)]
pub(crate) fn stream_min_bytes_cached() -> usize {
    STREAM_MIN_BYTES.load(Ordering::Relaxed)
}

/// 0: not computed yet (a computed 0 is stored as 1, which behaves the same).
static STREAM_MIN_BYTES: AtomicUsize = AtomicUsize::new(0);

#[cold]
fn compute_stream_min_bytes() -> usize {
    #[cfg(feature = "std")]
    if let Some(s) = std::env::var_os(STREAM_ENV_VAR) {
        // A value that is not a byte count is a mistake to report, not to ignore: the
        // process would otherwise run with a threshold its user did not ask for.
        match s
            .to_str()
            .map(str::trim)
            .and_then(|t| t.parse::<usize>().ok())
        {
            Some(v) => return v,
            None if s.is_empty() => {}
            None => panic!(
                "vcvt: {STREAM_ENV_VAR}={s:?} is not a byte count (a decimal integer such as 0 \
                 or 25165824)"
            ),
        }
    }
    match last_level_cache_bytes() {
        Some(b) => b / 4 * 3,
        None => 32 << 20,
    }
}

/// CPUID with a sub-leaf.
#[allow(unused_unsafe)]
fn cpuid(leaf: u32, sub: u32) -> core::arch::x86_64::CpuidResult {
    // SAFETY: every x86-64 CPU has CPUID. (The intrinsic is a safe function in newer Rust
    // and an unsafe one in the crate's MSRV, hence the `allow`.)
    unsafe { core::arch::x86_64::__cpuid_count(leaf, sub) }
}

/// The size of the largest cache CPUID describes (deterministic cache parameters); `None`
/// under Miri, which cannot run `CPUID` (inline assembly).
fn last_level_cache_bytes() -> Option<usize> {
    if cfg!(miri) {
        return None;
    }
    let __cpuid_count = cpuid;
    let max_leaf = __cpuid_count(0, 0).eax;
    let max_ext = __cpuid_count(0x8000_0000, 0).eax;
    let leaf = if max_leaf >= 4 {
        4
    } else if max_ext >= 0x8000_001D {
        0x8000_001D
    } else {
        return None;
    };
    let mut best = None;
    for sub in 0..16 {
        let r = __cpuid_count(leaf, sub);
        // Cache type 0: no more caches.
        if r.eax & 0x1F == 0 {
            break;
        }
        let ways = ((r.ebx >> 22) & 0x3FF) as usize + 1;
        let partitions = ((r.ebx >> 12) & 0x3FF) as usize + 1;
        let line = (r.ebx & 0xFFF) as usize + 1;
        let sets = r.ecx as usize + 1;
        let size = ways * partitions * line * sets;
        best = Some(best.map_or(size, |b: usize| b.max(size)));
    }
    best
}

/// The constants of the fused multiply-add narrowing, shared with the generic kernels.
pub(crate) use crate::simd::generic::lanes::Fp8Fma;

/// One 128-bit lane of the `VPSHUFB` index that gathers the fp8 codes of the fused
/// multiply-add narrowing (byte 1 of each 32-bit lane) into 32-bit lane `j` of the 128-bit
/// lane, zeroing the other bytes (an index byte of 0x80 gives 0).
pub(crate) const fn fp8_code_gather_lane(j: usize) -> [i32; 4] {
    let mut lane = [0x8080_8080u32 as i32; 4];
    lane[j] = 0x0D09_0501;
    lane
}
