//! The x86-64 backends' kernel tables, composed in one place.
//!
//! Each tier starts from the tier below it (every AVX-512 CPU has AVX2, FMA and F16C, which
//! `avx512_available` checks), tags the slots it sets with its own ISA, and sets, in order:
//! the generic kernels of `simd/x86_64` at its width, then the hand-written kernels of its
//! files, which win where both exist (special instructions such as `VCVTPS2PH`,
//! `VCVTNE2PS2BF16` and `VPERMI2B` tables, and loops tuned for the first four formats).
//! `Backend::kernel` reports the result per pair; `tests/kernels.rs` checks that every pair
//! runs at its tier's width.

#[cfg(vcvt_avx512fp16)]
use super::avx512_fp16;
use super::{avx2, avx2_direct, avx2_small, avx512, avx512_bf16, avx512_e8m0, avx512_vbmi};
use crate::arch::{Isa, Kernels, scalar};
use crate::backend::Override;
use crate::simd::x86_64 as generic;

/// `Avx2`: the generic kernels of every registry format at 256 bits
/// (`generic::avx2::fill_registry`), then the override list ([`AVX2_OVERRIDES`]): the
/// hand-written kernels of `avx2_small`, `avx2_direct` and `avx2` that measured at least
/// 10% faster than the generic kernel of their pair.
const fn avx2_table() -> Kernels {
    let mut t = avx2_generic_table();
    avx2_hand_written(&mut t);
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

/// The base of the AVX-512 tables: the `Avx2` table's generic kernels and hand-written
/// kernels, with the narrow → BF16 pairs that the AVX-512 tiers' measurements (Zen 4 VM,
/// `tests/kernels.rs`'s exception list) found best in two passes kept so. The
/// AVX-512 tiers serve every pair they have no kernel of their own for with this base's
/// AVX2 kernel, all of which run in this crate's tests on any AVX2 CPU.
const fn avx512_base() -> Kernels {
    use crate::{BF16, F6E2M3, F6E3M2, F8E4M3FNUZ, F8E5M2FNUZ};
    let mut t = avx2_generic_table();
    avx2_hand_written(&mut t);
    t.two_pass::<F8E4M3FNUZ, BF16>();
    t.two_pass::<F8E5M2FNUZ, BF16>();
    t.two_pass::<F6E2M3, BF16>();
    t.two_pass::<F6E3M2, BF16>();
    t
}

/// `Avx512`: the generic kernels where they measured faster (see `generic::avx512::fill`),
/// under `avx512`'s own for f32/f64 ↔ F16, BF16, F8E4M3 and F8E5M2 and `avx512_e8m0`'s for
/// E8M0 ↔ F16.
const fn avx512_table() -> Kernels {
    let mut t = avx512_base();
    t.tag(Isa::Avx512);
    generic::avx512::fill(&mut t);
    generic::avx512::fill_newer(&mut t);
    avx512::set(&mut t);
    avx512_e8m0::set(&mut t);
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

/// `Avx512Fp16`: `Avx512Bf16` plus the AVX512_FP16 kernels of its override list
/// ([`avx512_fp16::OVERRIDES`]); without a compiler that has them, `Avx512Bf16`'s table (the
/// tier is then never available).
const fn avx512_fp16_table() -> Kernels {
    #[allow(unused_mut)]
    let mut t = avx512_bf16_table();
    #[cfg(vcvt_avx512fp16)]
    avx512_fp16::set(&mut t);
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
/// The `Avx512Fp16` backend's kernels.
pub(crate) static AVX512_FP16: Kernels = avx512_fp16_table();

/// The `Avx512Fp16` override list (empty without the tier's kernels).
#[cfg(vcvt_avx512fp16)]
pub(crate) use super::avx512_fp16::OVERRIDES as AVX512_FP16_OVERRIDES;
/// The `Avx512Fp16` override list (empty without the tier's kernels).
#[cfg(not(vcvt_avx512fp16))]
pub(crate) const AVX512_FP16_OVERRIDES: &[Override] = &[];

/// The `Avx2` override list: every pair where a hand-written kernel of `avx2`,
/// `avx2_small` or `avx2_direct` replaces the generic 256-bit kernel, with
/// what makes it faster and its rate over the generic kernel's: medians of six runs (five for F16 → E8M0, three for E8M0 → F16) of
/// `cargo run --release --example throughput -- --generic --size 1024 --backend avx2` (1 Ki
/// values, both kernels timed in alternating batches on the same buffers) on the AMD Zen 3
/// VM (docs/performance.md). A kernel stays only at a ratio of 1.1 or more;
/// `tests/kernels.rs` fails when this list and the tables disagree.
pub(crate) const AVX2_OVERRIDES: &[Override] = &[
    Override {
        pair: "f64 -> F16",
        wins_by: "the f64's high word with a sticky bit, one integer rounding (`VPSRLVD`) in 32-bit lanes",
        ratio: 1.56,
    },
    Override {
        pair: "F16 -> f32",
        wins_by: "`VCVTPH2PS`, 32 values per step, stores aligned to 32 bytes",
        ratio: 1.20,
    },
    Override {
        pair: "F16 -> f64",
        wins_by: "`VCVTPH2PS`, 32 values per step, stores aligned to 32 bytes",
        ratio: 2.54,
    },
    Override {
        pair: "f32 -> BF16",
        wins_by: "integer RNE on whole words, `VPACKUSDW`, one NaN test per 32 values",
        ratio: 2.03,
    },
    Override {
        pair: "f64 -> BF16",
        wins_by: "the f64's high word with a sticky bit, one integer rounding (`VPSRLVD`) in 32-bit lanes",
        ratio: 3.87,
    },
    Override {
        pair: "BF16 -> f32",
        wins_by: "zero words unpacked below the codes, 32 values per step, aligned stores",
        ratio: 1.21,
    },
    Override {
        pair: "f64 -> F8E4M3",
        wins_by: "the f64's high word with a sticky bit, one integer rounding (`VPSRLVD`) in 32-bit lanes",
        ratio: 1.73,
    },
    Override {
        pair: "F8E4M3 -> f64",
        wins_by: "`(c & 0x7F) << 7` read as F16 (`VCVTPH2PS`) times 2^8, in 32-bit lanes",
        ratio: 1.68,
    },
    Override {
        pair: "f64 -> F8E5M2",
        wins_by: "the f64's high word with a sticky bit, one integer rounding (`VPSRLVD`) in 32-bit lanes",
        ratio: 1.52,
    },
    Override {
        pair: "F8E5M2 -> f32",
        wins_by: "`c << 8` is the F16 code: one shift, then `VCVTPH2PS` or the store",
        ratio: 1.27,
    },
    Override {
        pair: "F8E5M2 -> f64",
        wins_by: "`c << 8` is the F16 code: one shift, then `VCVTPH2PS` or the store",
        ratio: 2.40,
    },
    Override {
        pair: "f64 -> F8E4M3FNUZ",
        wins_by: "the f64's high word with a sticky bit, one integer rounding (`VPSRLVD`) in 32-bit lanes",
        ratio: 1.17,
    },
    Override {
        pair: "F8E4M3FNUZ -> f32",
        wins_by: "F16 codes built in 16-bit lanes (`f16_codes16`), `VCVTPH2PS`, one exact product",
        ratio: 1.27,
    },
    Override {
        pair: "F8E4M3FNUZ -> f64",
        wins_by: "F16 codes built in 16-bit lanes (`f16_codes16`), `VCVTPH2PS`, one exact product",
        ratio: 2.18,
    },
    Override {
        pair: "f64 -> F8E5M2FNUZ",
        wins_by: "the f64's high word with a sticky bit, one integer rounding (`VPSRLVD`) in 32-bit lanes",
        ratio: 1.26,
    },
    Override {
        pair: "F8E5M2FNUZ -> f32",
        wins_by: "F16 codes built in 16-bit lanes (`f16_codes16`), `VCVTPH2PS`, one exact product",
        ratio: 1.19,
    },
    Override {
        pair: "F8E5M2FNUZ -> f64",
        wins_by: "F16 codes built in 16-bit lanes (`f16_codes16`), `VCVTPH2PS`, one exact product",
        ratio: 2.86,
    },
    Override {
        pair: "f64 -> F6E2M3",
        wins_by: "the f64's high word with a sticky bit, one integer rounding (`VPSRLVD`) in 32-bit lanes",
        ratio: 1.50,
    },
    Override {
        pair: "F6E2M3 -> f64",
        wins_by: "`VPSHUFB` tables of the result's bytes, no arithmetic",
        ratio: 2.19,
    },
    Override {
        pair: "f64 -> F6E3M2",
        wins_by: "the f64's high word with a sticky bit, one integer rounding (`VPSRLVD`) in 32-bit lanes",
        ratio: 1.51,
    },
    Override {
        pair: "F6E3M2 -> f64",
        wins_by: "`VPSHUFB` tables of the result's bytes, no arithmetic",
        ratio: 2.19,
    },
    Override {
        pair: "f64 -> F4E2M1",
        wins_by: "the f64's high word with a sticky bit, one integer rounding (`VPSRLVD`) in 32-bit lanes",
        ratio: 1.48,
    },
    Override {
        pair: "F4E2M1 -> f32",
        wins_by: "`VPSHUFB` tables of the result's bytes, no arithmetic",
        ratio: 1.68,
    },
    Override {
        pair: "F4E2M1 -> f64",
        wins_by: "`VPSHUFB` tables of the result's bytes, no arithmetic",
        ratio: 2.50,
    },
    Override {
        pair: "f64 -> F4E2M1x2",
        wins_by: "the f64's high word with a sticky bit, one integer rounding (`VPSRLVD`) in 32-bit lanes",
        ratio: 1.43,
    },
    Override {
        pair: "F4E2M1x2 -> f32",
        wins_by: "nibbles split with `VPUNPCKLBW`, then `VPSHUFB` tables of the result's bytes",
        ratio: 2.99,
    },
    Override {
        pair: "F4E2M1x2 -> f64",
        wins_by: "nibbles split with `VPUNPCKLBW`, then `VPSHUFB` tables of the result's bytes",
        ratio: 2.75,
    },
    Override {
        pair: "f32 -> F8E8M0",
        wins_by: "integer exponent rounding and a saturating pack to bytes",
        ratio: 1.25,
    },
    Override {
        pair: "F8E8M0 -> f32",
        wins_by: "the result's bytes assembled from `c >> 1` and `(c & 1) << 7` (32 codes per step)",
        ratio: 2.24,
    },
    Override {
        pair: "F16 -> BF16",
        wins_by: "`VCVTPH2PS` and the integer BF16 rounding with `VPACKUSDW`",
        ratio: 1.89,
    },
    Override {
        pair: "F8E5M2 -> F16",
        wins_by: "`c << 8` is the F16 code: one shift, then `VCVTPH2PS` or the store",
        ratio: 3.12,
    },
    Override {
        pair: "F8E5M2 -> BF16",
        wins_by: "`c << 8` is the F16 code: one shift, then `VCVTPH2PS` or the store",
        ratio: 1.57,
    },
    Override {
        pair: "F8E5M2FNUZ -> F16",
        wins_by: "the F16 code built in 16-bit lanes (`f16_codes16`) and stored: one pass, no conversion",
        ratio: 4.37,
    },
    Override {
        pair: "F4E2M1 -> F16",
        wins_by: "`VPSHUFB` tables of the result's bytes, no arithmetic",
        ratio: 3.05,
    },
    Override {
        pair: "F4E2M1 -> BF16",
        wins_by: "`VPSHUFB` tables of the result's bytes, no arithmetic",
        ratio: 2.90,
    },
    Override {
        pair: "F4E2M1x2 -> F16",
        wins_by: "nibbles split with `VPUNPCKLBW`, then `VPSHUFB` tables of the result's bytes",
        ratio: 4.29,
    },
    Override {
        pair: "F4E2M1x2 -> BF16",
        wins_by: "nibbles split with `VPUNPCKLBW`, then `VPSHUFB` tables of the result's bytes",
        ratio: 7.87,
    },
    Override {
        pair: "F8E8M0 -> F16",
        wins_by: "the F16 code's two bytes built as byte planes (two `VPSHUFB` tables for the subnormals), 32 codes per step",
        ratio: 4.24,
    },
    Override {
        pair: "F8E8M0 -> BF16",
        wins_by: "the result's bytes assembled from `c >> 1` and `(c & 1) << 7` (32 codes per step)",
        ratio: 4.73,
    },
    Override {
        pair: "F16 -> F8E8M0",
        wins_by: "one pass: `VCVTPH2PS`, the integer E8M0 rounding, a saturating pack to bytes",
        ratio: 1.82,
    },
];
