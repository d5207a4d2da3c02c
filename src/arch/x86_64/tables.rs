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
use crate::backend::Override;
use crate::simd::x86_64 as generic;

/// `Avx2`: the generic kernels of every registry format at 256 bits
/// (`generic::avx2::fill_registry`), then the override list: the newer formats' kernels of
/// `avx2_small`, the hand-written direct kernels of `avx2_direct`, `avx2`'s own for the
/// first four formats, and the pairs that measured faster in two passes of those than in
/// the generic one-pass kernel ([`avx2_two_pass`]).
const fn avx2_table() -> Kernels {
    let mut t = avx2_generic_table();
    avx2_hand_written(&mut t);
    avx2_two_pass(&mut t);
    t
}

/// The `Avx2` table before its override list: Scalar, then the generic kernels of every
/// registry format at 256 bits. Kept as a table of its own so that the throughput example
/// (`--generic`) times every override beside the generic kernel it replaces, and
/// `tests/kernels.rs` checks the override list against the difference of the two tables.
const fn avx2_generic_table() -> Kernels {
    let mut t = scalar::scalar_kernels();
    t.tag(Isa::Avx2);
    generic::avx2::fill_registry(&mut t, 0);
    t
}

/// The hand-written AVX2 kernels.
const fn avx2_hand_written(t: &mut Kernels) {
    avx2_small::set(t);
    avx2_direct::set(t);
    avx2::set(t);
}

/// The narrow ↔ narrow pairs that run two passes of the AVX2 kernels (through a stack
/// buffer: the hand-written widening to f32, then the narrowing) instead of the generic
/// one-pass kernel, because the two passes measured at least 10% faster. Ratios are one
/// pass ÷ two passes, medians of five alternating runs of the two builds on the Zen 3 VM
/// (`throughput --full --size 1024 --backend avx2`, 1 Ki values; docs/performance.md):
///
/// | pair | one pass ÷ two passes | why the generic kernel loses |
/// |---|---|---|
/// | F8E4M3FNUZ, F8E5M2FNUZ → BF16 | 0.40, 0.43 | its BF16 rounding of every lane, against a `VPSHUFB` table widening and `VPACKUSDW` |
/// | F6E2M3, F6E3M2 → BF16 | 0.52, 0.52 | the same |
/// | F8E4M3FNUZ, F8E5M2FNUZ → F16 | 0.62, 0.63 | `VCVTPS2PH` after the arithmetic widening, against the table widening |
/// | F8E8M0 → F16 | 0.75 | the same |
/// | F16, BF16 → F8E8M0 | 0.54, 0.60 | the generic E8M0 narrowing, against `avx2_small`'s |
///
/// The formats after these (from `F8E3M4` on) have no hand-written AVX2 kernel: the generic
/// one-pass kernels serve them.
const fn avx2_two_pass(t: &mut Kernels) {
    use crate::{F8E5M2FNUZ, F8E8M0, F16};
    t.two_pass::<F8E5M2FNUZ, F16>();
    t.two_pass::<F8E8M0, F16>();
    t.two_pass::<F16, F8E8M0>();
}

/// The base of the AVX-512 tables: the `Avx2` table as it was before the registry fill (the
/// hand-written kernels and the generic fused round trips of the leaf formats over Scalar),
/// plus the generic 256-bit kernels of the formats from `F8E3M4` on, which have no AVX-512
/// registration yet (their 512-bit instantiation has not run on an AVX-512 CPU). The AVX-512
/// tiers' own selections were measured against this base.
const fn avx512_base() -> Kernels {
    let mut t = scalar::scalar_kernels();
    t.tag(Isa::Avx2);
    avx2_hand_written(&mut t);
    generic::avx2::fill_leaf_round_trips(&mut t);
    generic::avx2::fill_registry(&mut t, crate::format::index::F8E3M4);
    t
}

/// `Avx512`: the generic kernels where they measured faster (see `generic::avx512::fill`),
/// under `avx512`'s own for f32/f64 ↔ F16, BF16, F8E4M3 and F8E5M2.
const fn avx512_table() -> Kernels {
    let mut t = avx512_base();
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
/// The `Avx2` backend's generic kernels alone ([`avx2_generic_table`]).
pub(crate) static AVX2_GENERIC: Kernels = avx2_generic_table();
/// The `Avx512` backend's kernels.
pub(crate) static AVX512: Kernels = avx512_table();
/// The `Avx512Vbmi` backend's kernels.
pub(crate) static AVX512_VBMI: Kernels = avx512_vbmi_table();
/// The `Avx512Bf16` backend's kernels.
pub(crate) static AVX512_BF16: Kernels = avx512_bf16_table();

/// The `Avx2` override list (see [`avx2_table`]).
pub(crate) const AVX2_OVERRIDES: &[Override] = &[];
