//! The aarch64 backends' block-kernel table (`src/block/kernels.rs`), composed in one place:
//! the hand-written NEON block kernels, with the block kernels of the width-generic layer
//! (`simd/aarch64/neon.rs`, `fill_block`) on top: the MX `Ocp`/`Ceil` slots, at the same
//! 128-bit width, so that one algorithm serves every tier. They were tested under qemu
//! (`.ci/aarch64.sh`) but not timed on aarch64 hardware (none was available); the hand-written
//! MX kernels of `neon_block.rs` stay in the table's base, and removing the `fill_block` line
//! brings them back if hardware shows them faster.

use super::neon_block;
use crate::arch::Isa;
use crate::block::kernels::BlockKernels;
use crate::simd::aarch64::neon;

const fn neon_table() -> BlockKernels {
    let mut t = BlockKernels::empty();
    neon_block::set(&mut t);
    t.tag_filled(Isa::Neon);
    neon::fill_block(&mut t);
    t
}

/// The block kernels of both aarch64 backends (`Neon`, `NeonBf16`).
pub(crate) static NEON: BlockKernels = neon_table();
