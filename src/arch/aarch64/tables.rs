//! The aarch64 backends' kernel tables, composed in one place: `neon` is the Scalar table
//! with the generic kernels of every registry format (`simd/aarch64`'s `fill_registry`: every
//! pair at 128 bits, the narrow ↔ narrow pairs and round trips in one pass), then the hand-written kernels of `neon_small` (the
//! formats added after the first four) and `neon` (the first four) on top for the f32/f64
//! pairs they have; `neon-bf16` replaces the BF16 narrowings with BFCVTN ones.
//! `Backend::kernel` reports the result per pair; `tests/kernels.rs` checks that every pair
//! runs at 128 bits in one pass.

use super::{neon, neon_bf16, neon_small};
use crate::arch::{Isa, Kernels, scalar};
use crate::simd::aarch64::neon as generic;

/// The `neon` table.
const fn neon_table() -> Kernels {
    let mut t = scalar::scalar_kernels();
    t.tag(Isa::Neon);
    generic::fill_registry(&mut t, 0);
    neon_small::set(&mut t);
    neon::set(&mut t);
    t
}

/// The `neon-bf16` table.
const fn neon_bf16_table() -> Kernels {
    let mut t = neon_table();
    neon_bf16::set(&mut t);
    t
}

/// The `neon` backend's kernels.
pub(crate) static NEON: Kernels = neon_table();
/// The `neon-bf16` backend's kernels: the `neon` ones with BFCVTN for f32/f64 -> BF16.
pub(crate) static NEON_BF16: Kernels = neon_bf16_table();
