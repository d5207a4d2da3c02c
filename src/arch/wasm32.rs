//! The wasm32 `simd128` backend's kernel table, composed in one place: the portable
//! kernels (`portable.rs`, vectorised by the compiler) that measured faster than Scalar,
//! then the generic kernels of `simd/wasm32/simd128.rs` on top, for the pairs where they
//! measured faster than what ran before them (README.md, "WebAssembly").

use super::{Isa, Kernels, portable};
use crate::simd::wasm32::simd128;

/// The `simd128` table.
const fn simd128_table() -> Kernels {
    let mut t = portable::table();
    t.tag(Isa::Simd128);
    simd128::fill(&mut t);
    t
}

/// The `simd128` backend's kernels.
pub(crate) static SIMD128: Kernels = simd128_table();
