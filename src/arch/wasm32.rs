//! The wasm32 `simd128` backend's kernel table, composed in one place: the portable
//! kernels (`portable.rs`, vectorised by the compiler) that measured faster than Scalar,
//! then the generic kernels of `simd/wasm32/simd128.rs` on top, for the pairs where they
//! measured faster than what ran before them (docs/performance.md, "WebAssembly `simd128`").

use super::{Isa, Kernels, portable};
use crate::block::spec::kernels::BlockKernels;
use crate::simd::wasm32::simd128;

/// The `simd128` table.
const fn simd128_table() -> Kernels {
    let mut t = portable::table();
    t.tag(Isa::Simd128);
    simd128::fill(&mut t);
    // The formats from F8E3M4 on: every pair from the registry (they came after the
    // measurements behind `fill`'s selection, and ran Scalar before it).
    simd128::fill_registry(&mut t, crate::format::index::F8E3M4);
    t
}

/// The `simd128` backend's kernels.
pub(crate) static SIMD128: Kernels = simd128_table();

/// The `simd128` backend's block kernels: those of the generic layer (`simd128::fill_block`);
/// the slots it leaves empty run the scalar specification.
const fn simd128_block_table() -> BlockKernels {
    let mut t = BlockKernels::empty();
    simd128::fill_block(&mut t);
    t
}

/// The `simd128` backend's block kernels.
pub(crate) static SIMD128_BLOCK: BlockKernels = simd128_block_table();
