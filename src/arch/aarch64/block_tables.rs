//! The aarch64 backends' block-kernel table (`src/block/spec/kernels.rs`), composed in one place,
//! in the order every tier follows: the width-generic layer's block kernels at 128 bits
//! (`simd/aarch64/neon.rs`, `fill_block`) for every slot they serve, then the one
//! hand-written override, block FP8 dequantization (`neon_block.rs`).
//!
//! The generic MX kernels replaced hand-written NEON ones; neither was timed on aarch64
//! hardware (none was available), both passed the same tests under qemu (`.ci/aarch64.sh`).

use super::neon_block;
use crate::arch::Isa;
use crate::block::spec::kernels::BlockKernels;
use crate::simd::aarch64::neon;

const fn neon_table() -> BlockKernels {
    let mut t = BlockKernels::empty();
    neon::fill_block(&mut t);
    neon_block::set(&mut t);
    t.tag_filled(Isa::Neon);
    t
}

/// The block kernels of both aarch64 backends (`Neon`, `NeonBf16`).
pub(crate) static NEON: BlockKernels = neon_table();
