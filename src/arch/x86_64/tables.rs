//! The x86-64 backends' kernel tables, composed in one place.
//!
//! Each tier starts from the tier below it (every AVX-512 CPU has AVX2, FMA and F16C, which
//! `avx512_available` checks), tags the slots it sets with its own ISA, and sets, in order:
//! the generic kernels of `simd/x86_64` at its width, then the hand-written kernels of its
//! files, which win where both exist (special instructions such as `VCVTPS2PH`,
//! `VCVTNE2PS2BF16` and `VPERMI2B` tables, and loops tuned for the first four formats).
//! `Backend::kernel` reports the result per pair; `tests/kernels.rs` checks that every pair
//! runs at its tier's width.

use super::{avx2, avx2_direct, avx2_small, avx512, avx512_bf16, avx512_vbmi};
use crate::arch::{Isa, Kernels, scalar};
use crate::simd::x86_64 as generic;

/// `Avx2`: the newer formats' kernels of `avx2_small`, the hand-written direct kernels of
/// `avx2_direct`, and `avx2`'s own for the first four formats.
const fn avx2_table() -> Kernels {
    let mut t = scalar::scalar_kernels();
    t.tag(Isa::Avx2);
    avx2_small::set(&mut t);
    // The generic AVX2 kernels (`generic::avx2::fill`) are not registered: on the Zen 4 VM they
    // measured slower than these hand-written kernels and than the two-pass routes they would
    // replace (docs/performance.md, "Every pair at 1 Ki elements").
    avx2_direct::set(&mut t);
    avx2::set(&mut t);
    generic::avx2::fill_round_trips(&mut t);
    t
}

/// `Avx512`: the generic kernels where they measured faster (see `generic::avx512::fill`),
/// under `avx512`'s own for f32/f64 ↔ F16, BF16, F8E4M3 and F8E5M2.
const fn avx512_table() -> Kernels {
    let mut t = avx2_table();
    t.tag(Isa::Avx512);
    generic::avx512::fill(&mut t);
    avx512::set(&mut t);
    t
}

/// `Avx512Vbmi`: `Avx512` plus the `VPERMI2B` widenings of F8E4M3 and F8E5M2.
const fn avx512_vbmi_table() -> Kernels {
    let mut t = avx512_table();
    avx512_vbmi::set(&mut t);
    t
}

/// `Avx512Bf16`: `Avx512Vbmi` plus `VCVTNE2PS2BF16` for f32 → BF16.
const fn avx512_bf16_table() -> Kernels {
    let mut t = avx512_vbmi_table();
    avx512_bf16::set(&mut t);
    t
}

/// The `Avx2` backend's kernels.
pub(crate) static AVX2: Kernels = avx2_table();
/// The `Avx512` backend's kernels.
pub(crate) static AVX512: Kernels = avx512_table();
/// The `Avx512Vbmi` backend's kernels.
pub(crate) static AVX512_VBMI: Kernels = avx512_vbmi_table();
/// The `Avx512Bf16` backend's kernels.
pub(crate) static AVX512_BF16: Kernels = avx512_bf16_table();
