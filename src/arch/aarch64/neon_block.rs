//! NEON block kernels (`src/block/kernels.rs`): MX dequantization and quantization and
//! block FP8 dequantization, bit for bit the scalar loops of `src/block/` (the
//! specification), whatever FPCR holds.
//!
//! # FPCR
//!
//! Almost everything here is integer AdvSIMD, which FPCR does not affect. Two operations are
//! floating point: `FMUL` (the rounded f32 product of block FP8) and `FCVTN` (f32 → F16
//! narrowing of a product that may need rounding). Both obey FPCR (rounding mode, `FZ`,
//! `FZ16`, `DN`, `AHP`, `AH`), so the kernels that use them hold an [`Fpcr0`] for the call:
//! it reads FPCR once (`MRS`) and, only if it is not 0 already, sets it to 0 (the reset
//! value: round to nearest even, no flushing, NaN operands propagated, IEEE binary16, no
//! traps) and restores the caller's value when dropped (also on unwinding). Under FPCR = 0,
//! `FMUL` is the IEEE product (subnormals kept, a quiet NaN operand returned unchanged) and
//! `FCVTN` the IEEE narrowing (nearest even, F16 subnormals kept, a NaN quieted with its top
//! payload bits kept), which is what `soft::mul` and `codec::narrow_f32` specify. Both are
//! issued as `asm!` statements, like the `MSR`s: the compiler does not model FPCR and could
//! move an intrinsic's floating-point operation across the `MSR`, but it keeps
//! side-effecting `asm!` statements in program order. Rust code between the two `MSR`s runs
//! under FPCR = 0, the environment Rust assumes anyway (the scalar fallbacks are integer
//! code). Cost: one `MRS` and a not-taken branch per call, two `MSR`s only for a caller with
//! a non-default FPCR.
//!
//! # Element values (integer)
//!
//! Every MX element value (and every E4M3 value) is exact in BF16, and its f32 bits have a
//! zero low half, so the kernels widen codes to *BF16 words* (the top 16 bits of the f32
//! `mx::decode` gives), 8 per vector:
//!
//! * E4M3 / E5M2: for normal codes the word is an affine function of the magnitude,
//!   `(mag << (7 − MAN)) + ((127 − bias) << 7)` (the exponent field lands on BF16's, the
//!   fraction on the top of BF16's fraction, then the bias difference is added; no carry
//!   reaches the sign: the largest result is below 0x4800). Zero, the subnormals and
//!   Inf/NaN are looked up (`TBL`) at `(mag + OFF) & 0x7F` (E4M3: `OFF = 1`, 0x7F → 0 and
//!   0..=14 → 1..=15; E5M2: `OFF = 4`, 0x7C..=0x7F → 0..=3 and 0..=11 → 4..=15) in a 16-entry
//!   table computed from `codec::widen_f32` itself; the sign is OR-ed back in.
//! * fp6: the 32 magnitudes are a 32-entry two-register `TBL` (per byte plane) computed the
//!   same way.
//!
//! # MX dequantization (`mx_dequant`)
//!
//! Scale bytes `LO..=HI` (the same ranges as the AVX2 kernels: every non-zero finite product
//! is a normal f32) take the SIMD path, `0xFF` stores the canonical NaN block, the others run
//! the scalar `mx::dequantize_block` through a stack buffer. Inside `LO..=HI` the product
//! `value · 2^(s − 127)` of a word with exponent field in 1..=254 is the word plus
//! `(s − 127) << 7`: the field stays in 1..=254, so no carry or borrow leaves it (a 16-bit
//! wrapping add of a negative step is the subtraction). Zero, Inf and NaN words are kept
//! (`x · 2^k` is `x` for them). Then:
//!
//! * f32: the word shifted left by 16 (`SHLL`), exact; a NaN keeps its bits, as
//!   `f32::from_bits` does in the scalar code.
//! * BF16: the word itself; a NaN gets its quiet bit (0x40) as vcvt's f32 → BF16 narrowing
//!   gives it (E4M3's NaN has it already).
//! * F16: one rounding of the f32 by `FCVTN` (under [`Fpcr0`]).
//! * **E2M1**: per block, the 16 destination codes of the 16 E2M1 codes times `2^(s − 127)`
//!   (BF16: a constant table plus `(s − 127) << 7` on the 14 non-zero codes; f32: the BF16
//!   table, shifted after the lookup; F16: the F16 table plus `(s − 127) << 10` when every
//!   product is a normal F16, `s` in 114..=140 (exponents 14..=17 of 0.5..6 stay in 1..=30;
//!   at most 2 significant bits, so exact), else the 16 products narrowed by the scalar
//!   `codec::narrow_f32`), split into a low-byte and a high-byte table; two `TBL`s per
//!   16 nibbles. No floating point: FPCR does not matter.
//!
//! # Block FP8 dequantization (`fp8_dequant`)
//!
//! `dst[i] = D(f32(f32(code) · scale))`: the word widened to f32 (`SHLL`, exact), one
//! `FMUL` by the scale (FPCR 0, finite scale; a NaN or infinite scale runs the scalar
//! `fp8::dequantize_run`), then f32 as is, BF16 by the integer
//! round to nearest even `(x + 0x7FFF + lsb) >> 16` (`ADDHN`; the only NaNs are
//! `0x7FC00000 | sign`, whose top half that keeps, as vcvt's narrowing does), F16 by
//! `FCVTN`. A run's last `len % 16` codes go through 16-element stack buffers.
//!
//! # MX quantization (`mx_quant`)
//!
//! As the AVX2 kernels (`avx2_block`): the block's `amax` is the unsigned maximum of the
//! magnitude bits (`UMAXV`), the scale byte is the scalar rule (`Ceil`'s division replaced by
//! the same integer formula for large `amax`), `0xFF` writes zero codes, scales `18..=254`
//! get `y = x · 2^(127 − s)` by an exponent-field add (lanes whose product would not be a
//! normal f32 become `±0`, which the scalar code also gives them, see `avx2_block`), and the
//! codes are the integer f32 → fp8 narrowing of the `neon` module (`fp8_mag_x4`, which is
//! generic in the format's exponent bias and fraction width and therefore narrows to the
//! fp6 and fp4 elements too: the same formula, saturated by the unsigned minimum with the
//! element's largest magnitude code), with the sign of `x`. E2M1 codes are paired into
//! bytes. Scales 0..=17 run the scalar `mx::quantize_row` through stack buffers.
//!
//! Kernels take whole blocks only (the slots' contract); loads and stores are unaligned and
//! stay inside the ranges the contract gives.

use core::arch::aarch64::*;
use core::arch::asm;
use core::mem::MaybeUninit;
use core::ptr;

use super::neon::{Fp8Consts, fp8_mag_x4, load, store};
use crate::block::kernels::{BlockKernels, Fp8DequantFn, MxDequantFn, MxQuantFn};
use crate::block::spec::{self, mx::MxRule};
use crate::block::{BlockDest, MxElement};
use crate::codec::{self, Code, Format};
// The FPCR guard (FPCR = 0 for its lifetime) is the vector layer's, shared with the generic
// NEON kernels.
use crate::simd::aarch64::Fpcr0;
use crate::{BF16, F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E5M2, F16, Overflow};

/// Values per MX block.
const BLOCK: usize = 32;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// `FMUL` of 4 f32 lanes (bits), as an `asm!` statement so that it stays between the `MSR`s
/// of an [`Fpcr0`] (module docs).
///
/// # Safety
/// FPCR must be 0 (then this is the IEEE product).
#[inline]
#[target_feature(enable = "neon")]
unsafe fn fmul(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
    let r: uint32x4_t;
    // SAFETY: a register-only multiplication.
    unsafe {
        asm!(
            "fmul {r:v}.4s, {a:v}.4s, {b:v}.4s",
            r = lateout(vreg) r,
            a = in(vreg) a,
            b = in(vreg) b,
            options(nomem, nostack, preserves_flags)
        )
    };
    r
}

/// `FCVTN`/`FCVTN2`: 8 f32 (bits) to F16 codes.
///
/// # Safety
/// FPCR must be 0 (then this is the IEEE narrowing, nearest even, the contract of
/// `codec::narrow_f32` for F16 with NaN preserved).
#[inline]
#[target_feature(enable = "neon")]
unsafe fn fcvtn_f16(a: uint32x4_t, b: uint32x4_t) -> uint16x8_t {
    let r: uint16x8_t;
    // SAFETY: register-only conversions; `r` is an `out` operand, so it is allocated apart
    // from `a` and `b` and FCVTN2 (which keeps the low half) reads `b` intact.
    unsafe {
        asm!(
            "fcvtn {r:v}.4h, {a:v}.4s",
            "fcvtn2 {r:v}.8h, {b:v}.4s",
            r = out(vreg) r,
            a = in(vreg) a,
            b = in(vreg) b,
            options(nomem, nostack, preserves_flags)
        )
    };
    r
}

/// The 16 BF16 words (top halves of the f32 bits of `codec::widen_f32`) of codes
/// `(i + off) & 0x7F` (for `i < n`) of format `F`, split into low and high byte planes of up
/// to 32 entries.
fn word_table<F: Format>(off: u32, n: usize) -> [[u8; 32]; 2] {
    let mut t = [[0u8; 32]; 2];
    let (lo, hi) = t.split_at_mut(1);
    for (i, (l, h)) in lo[0].iter_mut().zip(hi[0].iter_mut()).take(n).enumerate() {
        let w = codec::widen_f32::<F>((i as u32 + off) & 0x7F);
        // Every element value has at most 4 significant bits: the low half is zero.
        debug_assert_eq!(w & 0xFFFF, 0);
        *l = (w >> 16) as u8;
        *h = (w >> 24) as u8;
    }
    t
}

/// Zips two byte vectors into 16-bit words: `lo` the low bytes, `hi` the high bytes.
#[inline]
#[target_feature(enable = "neon")]
fn zip16(lo: uint8x16_t, hi: uint8x16_t) -> [uint16x8_t; 2] {
    [
        vreinterpretq_u16_u8(vzip1q_u8(lo, hi)),
        vreinterpretq_u16_u8(vzip2q_u8(lo, hi)),
    ]
}

// ---------------------------------------------------------------------------------------
// Destinations
// ---------------------------------------------------------------------------------------

/// A dequantization destination: f32, BF16 or F16.
trait Dest {
    /// The destination type, for the scalar fallbacks.
    type T: BlockDest;
    /// Bytes per value.
    const SIZE: usize;
    /// The bits of the canonical NaN (`+NaN` `0x7FC00000` narrowed), as `T`'s code.
    const NAN: u32;
    /// Whether [`store_words`](Self::store_words) needs FPCR = 0.
    const NEEDS_FPCR: bool;
    /// Stores 16 values given as exact BF16 words (the f32 of each value's top half; the
    /// value is rounded once to `T`).
    ///
    /// # Safety
    /// `d` writable for `16 · SIZE` bytes; FPCR is 0 if `NEEDS_FPCR`.
    unsafe fn store_words(d: *mut u8, w: [uint16x8_t; 2]);
    /// The 16 table words of the E2M1 codes times `2^(s − 127)`, `s` in 2..=252 (see
    /// [`store_table_words`](Self::store_table_words)).
    ///
    /// # Safety
    /// NEON present.
    unsafe fn e2m1_table(s: u8) -> [uint16x8_t; 2];
    /// Stores 16 words looked up in [`e2m1_table`](Self::e2m1_table): `T`'s codes for BF16
    /// and F16, BF16 words for f32.
    ///
    /// # Safety
    /// `d` writable for `16 · SIZE` bytes.
    unsafe fn store_table_words(d: *mut u8, w: [uint16x8_t; 2]);
    /// Stores 16 f32 values rounded to nearest even to `T`, where every NaN among them is
    /// `0x7FC00000 | sign`.
    ///
    /// # Safety
    /// `d` writable for `16 · SIZE` bytes; FPCR is 0.
    unsafe fn store_rounded(d: *mut u8, v: [uint32x4_t; 4]);
}

/// f32 destination.
struct ToF32;
/// BF16 destination.
struct ToBf16;
/// F16 destination.
struct ToF16;

/// The BF16 codes of the 16 E2M1 codes (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives).
static E2M1_BF16: [u16; 16] = [
    0x0000, 0x3F00, 0x3F80, 0x3FC0, 0x4000, 0x4040, 0x4080, 0x40C0, //
    0x8000, 0xBF00, 0xBF80, 0xBFC0, 0xC000, 0xC040, 0xC080, 0xC0C0,
];
/// The F16 codes of the 16 E2M1 codes.
static E2M1_F16: [u16; 16] = [
    0x0000, 0x3800, 0x3C00, 0x3E00, 0x4000, 0x4200, 0x4400, 0x4600, //
    0x8000, 0xB800, 0xBC00, 0xBE00, 0xC000, 0xC200, 0xC400, 0xC600,
];

/// `table` with `step` added to its 14 non-zero entries (every entry but ±0, 0 and 8).
#[inline]
#[target_feature(enable = "neon")]
fn scaled_table(table: &[u16; 16], step: u16) -> [uint16x8_t; 2] {
    // SAFETY: two 8-lane loads inside the 16 entries of a static table.
    let t = unsafe { [vld1q_u16(table.as_ptr()), vld1q_u16(table.as_ptr().add(8))] };
    let s = vdupq_n_u16(step);
    // Entries whose magnitude bits are non-zero get the step (a 16-bit wrapping add).
    t.map(|t| vaddq_u16(t, vandq_u16(vtstq_u16(t, vdupq_n_u16(0x7FFF)), s)))
}

/// The BF16 table of E2M1 times `2^(s − 127)`, `s` in 2..=252: exponent fields 126..=129
/// plus `s − 127` stay in 1..=254.
#[inline]
#[target_feature(enable = "neon")]
fn e2m1_bf16_table(s: u8) -> [uint16x8_t; 2] {
    scaled_table(&E2M1_BF16, ((s as i32 - 127) << 7) as u16)
}

impl Dest for ToF32 {
    type T = f32;
    const SIZE: usize = 4;
    const NAN: u32 = 0x7FC0_0000;
    const NEEDS_FPCR: bool = false;

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_words(d: *mut u8, w: [uint16x8_t; 2]) {
        // SHLL #16: the word is the f32's top half, its low half zero.
        let v = [
            vshll_n_u16::<16>(vget_low_u16(w[0])),
            vshll_high_n_u16::<16>(w[0]),
            vshll_n_u16::<16>(vget_low_u16(w[1])),
            vshll_high_n_u16::<16>(w[1]),
        ];
        // SAFETY: forwarded: 64 bytes writable at d.
        unsafe { Self::store_rounded(d, v) }
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn e2m1_table(s: u8) -> [uint16x8_t; 2] {
        e2m1_bf16_table(s)
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_table_words(d: *mut u8, w: [uint16x8_t; 2]) {
        // SAFETY: forwarded (BF16 words, no FPCR needed for f32).
        unsafe { Self::store_words(d, w) }
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_rounded(d: *mut u8, v: [uint32x4_t; 4]) {
        // SAFETY: 64 bytes writable at d: four 16-byte stores.
        unsafe {
            for (j, x) in v.into_iter().enumerate() {
                store(d.add(16 * j), vreinterpretq_u8_u32(x));
            }
        }
    }
}

/// Stores 16 words (32 bytes).
///
/// # Safety
/// `d` writable for 32 bytes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn store_u16x16(d: *mut u8, w: [uint16x8_t; 2]) {
    // SAFETY: forwarded: two 16-byte stores.
    unsafe {
        store(d, vreinterpretq_u8_u16(w[0]));
        store(d.add(16), vreinterpretq_u8_u16(w[1]));
    }
}

impl Dest for ToBf16 {
    type T = BF16;
    const SIZE: usize = 2;
    const NAN: u32 = 0x7FC0;
    const NEEDS_FPCR: bool = false;

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_words(d: *mut u8, w: [uint16x8_t; 2]) {
        // The word is the exact value; a NaN (magnitude above 0x7F80) gets the quiet bit,
        // as vcvt's f32 -> BF16 narrowing keeps the top half of a NaN and sets it.
        let q = |w: uint16x8_t| {
            let nan = vcgtq_u16(vandq_u16(w, vdupq_n_u16(0x7FFF)), vdupq_n_u16(0x7F80));
            vorrq_u16(w, vandq_u16(nan, vdupq_n_u16(0x40)))
        };
        // SAFETY: forwarded: 32 bytes writable at d.
        unsafe { store_u16x16(d, w.map(q)) }
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn e2m1_table(s: u8) -> [uint16x8_t; 2] {
        e2m1_bf16_table(s)
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_table_words(d: *mut u8, w: [uint16x8_t; 2]) {
        // SAFETY: forwarded: 32 bytes writable at d.
        unsafe { store_u16x16(d, w) }
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_rounded(d: *mut u8, v: [uint32x4_t; 4]) {
        // Round to nearest even at bit 16: ADDHN returns the top half of x + 0x7FFF + lsb.
        // The carry ripples into the exponent as rounding to the next binade (and past MAX
        // to Inf) must; no sum wraps (x <= 0xFFC00000 for the NaNs that occur, and below
        // 0xFF800000 otherwise). A NaN 0x7FC00000 | sign has lsb 0 and keeps its top half.
        let r = |x: uint32x4_t| {
            let lsb = vandq_u32(vshrq_n_u32::<16>(x), vdupq_n_u32(1));
            vaddhn_u32(x, vaddq_u32(lsb, vdupq_n_u32(0x7FFF)))
        };
        let w = [
            vcombine_u16(r(v[0]), r(v[1])),
            vcombine_u16(r(v[2]), r(v[3])),
        ];
        // SAFETY: forwarded: 32 bytes writable at d.
        unsafe { store_u16x16(d, w) }
    }
}

impl Dest for ToF16 {
    type T = F16;
    const SIZE: usize = 2;
    const NAN: u32 = 0x7E00;
    const NEEDS_FPCR: bool = true;

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_words(d: *mut u8, w: [uint16x8_t; 2]) {
        let v = [
            vshll_n_u16::<16>(vget_low_u16(w[0])),
            vshll_high_n_u16::<16>(w[0]),
            vshll_n_u16::<16>(vget_low_u16(w[1])),
            vshll_high_n_u16::<16>(w[1]),
        ];
        // SAFETY: forwarded (FPCR is 0).
        unsafe { Self::store_rounded(d, v) }
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn e2m1_table(s: u8) -> [uint16x8_t; 2] {
        if (114..=140).contains(&s) {
            // Every non-zero product is a normal F16 (exponent fields 14..=17 moved by
            // s - 127 stay in 1..=30) of at most 2 significant bits: exact, the field add.
            scaled_table(&E2M1_F16, ((s as i32 - 127) << 10) as u16)
        } else {
            // F16 subnormals or overflow: the scalar narrowing of the exact f32 products.
            let mut t = [0u16; 16];
            for (c, o) in t.iter_mut().enumerate() {
                let k = s as i32 - 127;
                let b = (E2M1_BF16[c] as u32) << 16;
                let x = if b & 0x7FFF_FFFF == 0 {
                    b
                } else {
                    b.wrapping_add((k << 23) as u32)
                };
                *o = F16::from_f32_bits(x).code() as u16;
            }
            // SAFETY: two 8-lane loads inside the 16 entries of a local table.
            unsafe { [vld1q_u16(t.as_ptr()), vld1q_u16(t.as_ptr().add(8))] }
        }
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_table_words(d: *mut u8, w: [uint16x8_t; 2]) {
        // SAFETY: forwarded: 32 bytes writable at d.
        unsafe { store_u16x16(d, w) }
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_rounded(d: *mut u8, v: [uint32x4_t; 4]) {
        // SAFETY: FPCR is 0 (forwarded), 32 bytes writable at d.
        unsafe {
            let w = [fcvtn_f16(v[0], v[1]), fcvtn_f16(v[2], v[3])];
            store_u16x16(d, w)
        }
    }
}

/// Stores the canonical NaN block: 32 values of `D::NAN`.
///
/// # Safety
/// `d` writable for `32 · D::SIZE` bytes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn store_nan_block<D: Dest>(d: *mut u8) {
    let v = if D::SIZE == 4 {
        vreinterpretq_u8_u32(vdupq_n_u32(D::NAN))
    } else {
        vreinterpretq_u8_u16(vdupq_n_u16(D::NAN as u16))
    };
    // SAFETY: 32 · SIZE bytes writable at d: 2 · SIZE 16-byte stores.
    unsafe {
        for j in 0..2 * D::SIZE {
            store(d.add(16 * j), v);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Element widening to BF16 words
// ---------------------------------------------------------------------------------------

/// Per-call tables of an element's widening.
struct Tables {
    lo: uint8x16x2_t,
    hi: uint8x16x2_t,
}

impl Tables {
    /// Loads a [`word_table`].
    #[inline]
    #[target_feature(enable = "neon")]
    fn new(t: &[[u8; 32]; 2]) -> Tables {
        // SAFETY: each plane is 32 bytes: two 16-byte loads.
        unsafe {
            Tables {
                lo: uint8x16x2_t(load(t[0].as_ptr()), load(t[0].as_ptr().add(16))),
                hi: uint8x16x2_t(load(t[1].as_ptr()), load(t[1].as_ptr().add(16))),
            }
        }
    }
}

/// An MX element with a SIMD widening to BF16 words.
trait Elem {
    const ELEMENT: MxElement;
    /// Code bytes per block.
    const BYTES: usize;
    /// The scale bytes for which every non-zero finite product is a normal f32:
    /// `1 − log2(smallest subnormal)..=254 − emax`.
    const LO: u8;
    const HI: u8;
    /// The format, for the narrowing constants.
    type F: Format;
    /// The per-call tables.
    fn tables() -> [[u8; 32]; 2];
    /// The BF16 words of 16 codes (one per byte).
    ///
    /// # Safety
    /// NEON present.
    unsafe fn words(c: uint8x16_t, t: &Tables) -> [uint16x8_t; 2];
}

/// E4M3/E5M2 words: the affine formula for normal codes, the table for the others (module
/// docs). `SH = 7 − MAN`, `REBIAS = (127 − bias) << 7`.
#[inline]
#[target_feature(enable = "neon")]
fn fp8_words<const SH: i32, const REBIAS: u16, const OFF: u8>(
    c: uint8x16_t,
    t: &Tables,
) -> [uint16x8_t; 2] {
    let mag = vandq_u8(c, vdupq_n_u8(0x7F));
    let f = [
        vshll_n_u8::<SH>(vget_low_u8(mag)),
        vshll_high_n_u8::<SH>(mag),
    ]
    .map(|f| vaddq_u16(f, vdupq_n_u16(REBIAS)));
    let idx = vandq_u8(vaddq_u8(mag, vdupq_n_u8(OFF)), vdupq_n_u8(0x7F));
    let in_table = vcltq_u8(idx, vdupq_n_u8(16));
    let tw = zip16(vqtbl1q_u8(t.lo.0, idx), vqtbl1q_u8(t.hi.0, idx));
    let sel = zip16(in_table, in_table);
    // The sign bit moved from bit 7 of the byte to bit 15 of the word.
    let sign = zip16(vdupq_n_u8(0), vandq_u8(c, vdupq_n_u8(0x80)));
    [0, 1].map(|j| vorrq_u16(vbslq_u16(sel[j], tw[j], f[j]), sign[j]))
}

impl Elem for F8E4M3 {
    const ELEMENT: MxElement = MxElement::E4M3;
    const BYTES: usize = 32;
    const LO: u8 = 10;
    const HI: u8 = 246;
    type F = F8E4M3;

    fn tables() -> [[u8; 32]; 2] {
        word_table::<F8E4M3>(0x7F, 16)
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn words(c: uint8x16_t, t: &Tables) -> [uint16x8_t; 2] {
        fp8_words::<4, { 120 << 7 }, 1>(c, t)
    }
}

impl Elem for F8E5M2 {
    const ELEMENT: MxElement = MxElement::E5M2;
    const BYTES: usize = 32;
    const LO: u8 = 17;
    const HI: u8 = 239;
    type F = F8E5M2;

    fn tables() -> [[u8; 32]; 2] {
        word_table::<F8E5M2>(0x7C, 16)
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn words(c: uint8x16_t, t: &Tables) -> [uint16x8_t; 2] {
        fp8_words::<5, { 112 << 7 }, 4>(c, t)
    }
}

/// fp6 elements (one per byte, the high two bits ignored): a 32-entry lookup of the
/// magnitude, the sign (bit 5) moved to bit 15.
macro_rules! fp6_elem {
    ($t:ty, $e:ident, $lo:expr, $hi:expr) => {
        impl Elem for $t {
            const ELEMENT: MxElement = MxElement::$e;
            const BYTES: usize = 32;
            const LO: u8 = $lo;
            const HI: u8 = $hi;
            type F = $t;

            fn tables() -> [[u8; 32]; 2] {
                word_table::<$t>(0, 32)
            }

            #[inline]
            #[target_feature(enable = "neon")]
            unsafe fn words(c: uint8x16_t, t: &Tables) -> [uint16x8_t; 2] {
                let mag = vandq_u8(c, vdupq_n_u8(0x1F));
                let w = zip16(vqtbl2q_u8(t.lo, mag), vqtbl2q_u8(t.hi, mag));
                // Bit 5 shifted to bit 7 of the high byte: bit 15 of the word.
                let s = vandq_u8(vshlq_n_u8::<2>(c), vdupq_n_u8(0x80));
                let sign = zip16(vdupq_n_u8(0), s);
                [vorrq_u16(w[0], sign[0]), vorrq_u16(w[1], sign[1])]
            }
        }
    };
}
fp6_elem!(F6E2M3, E2M3, 4, 252);
fp6_elem!(F6E3M2, E3M2, 5, 250);

// ---------------------------------------------------------------------------------------
// MX dequantization
// ---------------------------------------------------------------------------------------

/// One block by the scalar `mx::dequantize_block`, through a stack buffer (the destination
/// need not be aligned for `D::T`).
///
/// # Safety
/// `c` readable for `bytes` bytes, `d` writable for `32 · D::SIZE` bytes.
#[cold]
#[inline(never)]
unsafe fn mx_dequant_scalar<D: Dest>(
    element: MxElement,
    bytes: usize,
    c: *const u8,
    s: u8,
    d: *mut u8,
) {
    // SAFETY: `c` is readable for `bytes` bytes (u8, no alignment needed).
    let codes = unsafe { core::slice::from_raw_parts(c, bytes) };
    let mut out = [MaybeUninit::<D::T>::uninit(); BLOCK];
    spec::mx_dequantize_block::<D::T>(element, codes, 0, s, &mut out);
    // SAFETY: `dequantize_block` initialised all 32 values; they are 32 · SIZE bytes, which
    // `d` can take; the buffer is a distinct local.
    unsafe { ptr::copy_nonoverlapping(out.as_ptr().cast::<u8>(), d, BLOCK * D::SIZE) };
}

/// MX dequantization of `blocks` whole blocks of a byte-per-code element.
///
/// # Safety
/// The `MxDequantFn` contract for element `E` and destination `D`.
#[target_feature(enable = "neon")]
unsafe fn mx_dequant<E: Elem, D: Dest>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    // FCVTN (F16) needs FPCR = 0; the others use no floating point.
    let _fpcr = D::NEEDS_FPCR.then(Fpcr0::new);
    let t = Tables::new(&E::tables());
    for b in 0..blocks {
        // SAFETY: b < blocks, so scale b, code bytes 32b..32b + 32 and values
        // 32b..32b + 32 are inside the caller's ranges; FPCR is 0 if D needs it.
        unsafe {
            let s = scales.add(b).read();
            let c = codes.add(b * E::BYTES);
            let d = dst.add(b * BLOCK * D::SIZE);
            if (E::LO..=E::HI).contains(&s) {
                // Exponent-field step for words with a field in 1..=254 (module docs):
                // field - 0x80 (wrapping) is below 0x7F00 exactly for those.
                let step = vdupq_n_u16(((s as i32 - 127) << 7) as u16);
                let scale = |w: uint16x8_t| {
                    let e = vsubq_u16(vandq_u16(w, vdupq_n_u16(0x7F80)), vdupq_n_u16(0x80));
                    let finite = vcltq_u16(e, vdupq_n_u16(0x7F00));
                    vaddq_u16(w, vandq_u16(finite, step))
                };
                for h in 0..2 {
                    let w = E::words(load(c.add(16 * h)), &t);
                    D::store_words(d.add(16 * h * D::SIZE), w.map(scale));
                }
            } else if s == 0xFF {
                store_nan_block::<D>(d);
            } else {
                mx_dequant_scalar::<D>(E::ELEMENT, E::BYTES, c, s, d);
            }
        }
    }
}

/// MX dequantization of `blocks` whole E2M1 blocks (16 bytes each): per-block tables.
///
/// # Safety
/// The `MxDequantFn` contract for E2M1 and destination `D`.
#[target_feature(enable = "neon")]
unsafe fn mx_dequant_e2m1<D: Dest>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    // The byte planes of the current scale's table (recomputed when the scale changes).
    let mut last = 0u8;
    let mut planes = (vdupq_n_u8(0), vdupq_n_u8(0));
    let nib = vdupq_n_u8(0x0F);
    for b in 0..blocks {
        // SAFETY: b < blocks, so scale b, code bytes 16b..16b + 16 and values
        // 32b..32b + 32 are inside the caller's ranges.
        unsafe {
            let s = scales.add(b).read();
            let c = codes.add(b * 16);
            let d = dst.add(b * BLOCK * D::SIZE);
            if (2..=252).contains(&s) {
                if s != last {
                    let t = D::e2m1_table(s).map(|t| vreinterpretq_u8_u16(t));
                    // Even bytes (low) and odd bytes (high) of the 16 little-endian words.
                    planes = (vuzp1q_u8(t[0], t[1]), vuzp2q_u8(t[0], t[1]));
                    last = s;
                }
                let v = load(c);
                let lo = vandq_u8(v, nib);
                let hi = vshrq_n_u8::<4>(v);
                // Codes in value order: byte j holds values 2j (low nibble), 2j + 1 (high).
                for (h, idx) in [vzip1q_u8(lo, hi), vzip2q_u8(lo, hi)]
                    .into_iter()
                    .enumerate()
                {
                    let w = zip16(vqtbl1q_u8(planes.0, idx), vqtbl1q_u8(planes.1, idx));
                    D::store_table_words(d.add(16 * h * D::SIZE), w);
                }
            } else if s == 0xFF {
                store_nan_block::<D>(d);
            } else {
                mx_dequant_scalar::<D>(MxElement::E2M1, 16, c, s, d);
            }
        }
    }
}

/// The table entry of [`mx_dequant`].
///
/// # Safety
/// The `MxDequantFn` contract.
unsafe fn mx_dequant_entry<E: Elem, D: Dest>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    // SAFETY: the caller's ranges are forwarded; this table is only reachable through the
    // NEON backends, chosen (or accepted by `check_backend`) only when `neon_available()`
    // confirmed AdvSIMD.
    unsafe { mx_dequant::<E, D>(codes, scales, blocks, dst) }
}

/// The table entry of [`mx_dequant_e2m1`].
///
/// # Safety
/// The `MxDequantFn` contract.
unsafe fn mx_dequant_e2m1_entry<D: Dest>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    // SAFETY: as in `mx_dequant_entry`.
    unsafe { mx_dequant_e2m1::<D>(codes, scales, blocks, dst) }
}

// ---------------------------------------------------------------------------------------
// Block FP8 dequantization
// ---------------------------------------------------------------------------------------

/// Block FP8 dequantization by the scalar `fp8::dequantize_run`, 32 values at a time
/// through a stack buffer (the destination need not be aligned for `D::T`).
///
/// # Safety
/// `codes` readable for `len` bytes, `dst` writable for `len` values.
#[cold]
#[inline(never)]
unsafe fn fp8_dequant_scalar<D: Dest>(codes: *const u8, scale: u32, len: usize, dst: *mut u8) {
    let mut out = [MaybeUninit::<D::T>::uninit(); 32];
    let mut i = 0;
    while i < len {
        let n = (len - i).min(32);
        // SAFETY: codes i..i + n are readable bytes (u8, no alignment needed).
        let c = unsafe { core::slice::from_raw_parts(codes.add(i), n) };
        spec::fp8_dequantize_run::<D::T>(c, scale, &mut out[..n]);
        // SAFETY: the n values are initialised; values i..i + n (n · SIZE bytes) are
        // writable at dst; the buffer is a distinct local.
        unsafe {
            ptr::copy_nonoverlapping(out.as_ptr().cast::<u8>(), dst.add(i * D::SIZE), n * D::SIZE)
        };
        i += n;
    }
}

/// 16 E4M3 codes times `f`, each rounded once to f32 (FPCR 0), stored rounded to `D`.
///
/// # Safety
/// `c` readable for 16 bytes, `d` writable for `16 · D::SIZE` bytes; FPCR is 0.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn fp8_x16<D: Dest>(c: *const u8, f: uint32x4_t, t: &Tables, d: *mut u8) {
    // SAFETY: 16 bytes readable at c; NEON is this function's feature.
    let w = unsafe { F8E4M3::words(load(c), t) };
    // The exact f32 of each code (SHLL #16), then one FMUL: under FPCR 0 the IEEE product,
    // a quiet NaN code returned as it is (the scale is finite).
    // SAFETY: FPCR is 0 (the caller's guarantee).
    let m = |x: uint32x4_t| unsafe { fmul(x, f) };
    let v = [
        m(vshll_n_u16::<16>(vget_low_u16(w[0]))),
        m(vshll_high_n_u16::<16>(w[0])),
        m(vshll_n_u16::<16>(vget_low_u16(w[1]))),
        m(vshll_high_n_u16::<16>(w[1])),
    ];
    // SAFETY: forwarded.
    unsafe { D::store_rounded(d, v) }
}

/// Block FP8 dequantization of one row (the `Fp8DequantFn` slot), FPCR read once.
///
/// # Safety
/// The `Fp8DequantFn` contract.
#[target_feature(enable = "neon")]
unsafe fn fp8_dequant_row<D: Dest>(
    codes: *const u8,
    scales: *const u8,
    tile_cols: usize,
    cols: usize,
    dst: *mut u8,
) {
    let _fpcr = Fpcr0::new();
    let t = Tables::new(&F8E4M3::tables());
    let mut lo = 0;
    let mut tile = 0;
    while lo < cols {
        let len = tile_cols.min(cols - lo);
        // SAFETY: tile < cols.div_ceil(tile_cols), so its 4 scale bytes are readable.
        let scale = unsafe { scales.add(4 * tile).cast::<u32>().read_unaligned() }.to_le();
        // SAFETY: codes lo..lo + len and values lo..lo + len are inside the caller's ranges.
        let (c, d) = unsafe { (codes.add(lo), dst.add(lo * D::SIZE)) };
        if scale & 0x7FFF_FFFF >= 0x7F80_0000 {
            // A NaN or infinite scale (rare; its NaN results follow `soft::mul`).
            // SAFETY: forwarded.
            unsafe { fp8_dequant_scalar::<D>(c, scale, len, d) };
        } else {
            let f = vdupq_n_u32(scale);
            let mut i = 0;
            while len - i >= 16 {
                // SAFETY: codes/values i..i + 16 of the tile are in range; FPCR is 0.
                unsafe { fp8_x16::<D>(c.add(i), f, &t, d.add(i * D::SIZE)) };
                i += 16;
            }
            if i < len {
                let n = len - i;
                // Fewer than 16 left: through stack buffers; the padding codes (0) are
                // converted and dropped.
                let mut cbuf = [0u8; 16];
                let mut dbuf = [0u8; 64];
                // SAFETY: codes i..len are n < 16 readable bytes and values i..len are
                // n · SIZE writable bytes; the buffers hold 16 codes and 16 values of at
                // most 4 bytes and are distinct locals; FPCR is 0.
                unsafe {
                    ptr::copy_nonoverlapping(c.add(i), cbuf.as_mut_ptr(), n);
                    fp8_x16::<D>(cbuf.as_ptr(), f, &t, dbuf.as_mut_ptr());
                    ptr::copy_nonoverlapping(dbuf.as_ptr(), d.add(i * D::SIZE), n * D::SIZE);
                }
            }
        }
        lo += len;
        tile += 1;
    }
}

/// The table entry of [`fp8_dequant_row`].
///
/// # Safety
/// The `Fp8DequantFn` contract.
unsafe fn fp8_dequant_entry<D: Dest>(
    codes: *const u8,
    scales: *const u8,
    tile_cols: usize,
    cols: usize,
    dst: *mut u8,
) {
    // SAFETY: as in `mx_dequant_entry`.
    unsafe { fp8_dequant_row::<D>(codes, scales, tile_cols, cols, dst) }
}

// ---------------------------------------------------------------------------------------
// MX quantization
// ---------------------------------------------------------------------------------------

/// One block by the scalar `mx::quantize_row`, through stack buffers (the source need
/// not be aligned for f32).
///
/// # Safety
/// `x` readable for 128 bytes, `c` writable for `bytes` bytes, `scale` writable.
#[cold]
#[inline(never)]
unsafe fn mx_quant_scalar(
    element: MxElement,
    bytes: usize,
    rule: MxRule,
    x: *const u8,
    c: *mut u8,
    scale: *mut u8,
) {
    let mut src = [0f32; BLOCK];
    let mut codes = [MaybeUninit::<u8>::uninit(); BLOCK];
    let mut s = [MaybeUninit::<u8>::uninit(); 1];
    // SAFETY: 128 bytes readable at x; the buffer is a distinct local of 128 bytes.
    unsafe { ptr::copy_nonoverlapping(x, src.as_mut_ptr().cast::<u8>(), 4 * BLOCK) };
    spec::mx_quantize_row::<f32>(element, rule, &src, &mut codes[..bytes], &mut s);
    // SAFETY: `quantize_row` initialised the `bytes` codes and the scale; `c` takes `bytes`
    // bytes and `scale` one; the buffers are distinct locals.
    unsafe {
        ptr::copy_nonoverlapping(codes.as_ptr().cast::<u8>(), c, bytes);
        scale.write(s[0].assume_init());
    }
}

/// The scale byte of a block with largest magnitude bits `amax`: `mx::scale_byte`, with
/// the `Ceil` rule's f32 division replaced by the integer formula of `avx2_block` for
/// normal quotients: `b = ea − emax + [fa > fm]`, i.e.
/// `((amax + 0x7FFFFF − fm) >> 23) − emax` (the carry out of the fraction is the
/// comparison), clamped to 254, when `ea ≥ emax + 2` (the quotient is then a normal f32).
#[inline(always)]
fn scale_byte<const CEIL: bool>(element: MxElement, amax: u32) -> u8 {
    let emax = element.emax() as u32;
    if CEIL && amax < 0x7F80_0000 && amax >> 23 >= emax + 2 {
        let fm = element.max().to_bits() & 0x007F_FFFF;
        (((amax + (0x007F_FFFF - fm)) >> 23) - emax).min(254) as u8
    } else {
        let rule = if CEIL { MxRule::Ceil } else { MxRule::Ocp };
        spec::mx_scale_byte(element, rule, amax)
    }
}

/// Lowest and highest scale byte of the SIMD quantization path (`avx2_block` docs).
const Q_LO: u8 = 18;
const Q_HI: u8 = 254;

/// MX quantization of `blocks` whole blocks of f32, any element (`fp8_mag_x4` narrows to
/// each: module docs).
///
/// # Safety
/// The `MxQuantFn` contract for element `E`.
#[target_feature(enable = "neon")]
unsafe fn mx_quant<E: Elem, const CEIL: bool>(
    src: *const u8,
    blocks: usize,
    codes: *mut u8,
    scales: *mut u8,
) {
    let rule = if CEIL { MxRule::Ceil } else { MxRule::Ocp };
    let k = Fp8Consts::new::<E::F>(Overflow::Saturate);
    let abs = vdupq_n_u32(0x7FFF_FFFF);
    let bits = <E::F as Format>::BITS;
    let packed = bits == 4;
    for b in 0..blocks {
        // SAFETY: block b < blocks: its 128 source bytes, its code bytes and its scale byte
        // are inside the caller's ranges.
        let (p, c, sp) = unsafe {
            (
                src.add(b * 4 * BLOCK),
                codes.add(b * E::BYTES),
                scales.add(b),
            )
        };
        // SAFETY: 128 bytes readable at p: eight 16-byte loads.
        let x: [uint32x4_t; 8] =
            core::array::from_fn(|j| unsafe { vreinterpretq_u32_u8(load(p.add(16 * j))) });
        let a = x.map(|v| vandq_u32(v, abs));
        // The magnitudes' unsigned maximum orders them as values, NaN above +Inf.
        let m = vmaxvq_u32(a.into_iter().fold(vdupq_n_u32(0), |p, q| vmaxq_u32(p, q)));
        let s = scale_byte::<CEIL>(E::ELEMENT, m);
        if (Q_LO..=Q_HI).contains(&s) {
            // y = x · 2^kk, kk = 127 - s (module docs): lanes whose magnitude bits are at
            // least max(1, 1 - kk) << 23 get kk added to the exponent field, the others
            // become ±0 (magnitude 0; the sign is taken from x below).
            let kk = 127 - s as i32;
            let step = vdupq_n_u32((kk << 23) as u32);
            let below = vdupq_n_u32(((1.max(1 - kk) as u32) << 23) - 1);
            let mag = a.map(|a| {
                let keep = vcgtq_u32(a, below);
                fp8_mag_x4(vandq_u32(keep, vaddq_u32(a, step)), &k)
            });
            // Code = magnitude code | sign of x at the element's top bit.
            let code: [uint32x4_t; 8] = core::array::from_fn(|j| {
                let sign = vshlq_u32(vshrq_n_u32::<31>(x[j]), vdupq_n_s32(bits as i32 - 1));
                vorrq_u32(mag[j], sign)
            });
            // Every code is below 256: narrow 32 -> 16 -> 8 bits keeps it.
            let n16: [uint16x8_t; 4] = core::array::from_fn(|j| {
                vcombine_u16(vmovn_u32(code[2 * j]), vmovn_u32(code[2 * j + 1]))
            });
            let n8 = [
                vcombine_u8(vmovn_u16(n16[0]), vmovn_u16(n16[1])),
                vcombine_u8(vmovn_u16(n16[2]), vmovn_u16(n16[3])),
            ];
            // SAFETY: E::BYTES bytes writable at c, scale b writable.
            unsafe {
                sp.write(s);
                if packed {
                    // Values 2j (even bytes) in the low nibble, 2j + 1 (odd) in the high.
                    let even = vuzp1q_u8(n8[0], n8[1]);
                    let odd = vuzp2q_u8(n8[0], n8[1]);
                    store(c, vorrq_u8(even, vshlq_n_u8::<4>(odd)));
                } else {
                    store(c, n8[0]);
                    store(c.add(16), n8[1]);
                }
            }
        } else if s == 0xFF {
            // A NaN or infinity in the block: scale 0xFF and zero codes.
            // SAFETY: as above.
            unsafe {
                sp.write(s);
                ptr::write_bytes(c, 0, E::BYTES);
            }
        } else {
            // SAFETY: as above (the scalar code writes the same scale byte).
            unsafe { mx_quant_scalar(E::ELEMENT, E::BYTES, rule, p, c, sp) };
        }
    }
}

/// The table entry of [`mx_quant`].
///
/// # Safety
/// The `MxQuantFn` contract.
unsafe fn mx_quant_entry<E: Elem, const CEIL: bool>(
    src: *const u8,
    blocks: usize,
    codes: *mut u8,
    scales: *mut u8,
) {
    // SAFETY: as in `mx_dequant_entry`.
    unsafe { mx_quant::<E, CEIL>(src, blocks, codes, scales) }
}

/// E2M1 as a quantization element: `fp8_mag_x4` with E2M1's constants, codes packed.
struct E2m1;

impl Elem for E2m1 {
    const ELEMENT: MxElement = MxElement::E2M1;
    const BYTES: usize = 16;
    const LO: u8 = 2;
    const HI: u8 = 252;
    type F = F4E2M1;

    fn tables() -> [[u8; 32]; 2] {
        [[0; 32]; 2]
    }

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn words(_c: uint8x16_t, _t: &Tables) -> [uint16x8_t; 2] {
        // Not used: E2M1 dequantization has its own per-block tables.
        [vdupq_n_u16(0); 2]
    }
}

// ---------------------------------------------------------------------------------------
// Table
// ---------------------------------------------------------------------------------------

/// The three destinations of element `E`, in `DestKind` order.
const fn dequant_row<E: Elem>() -> [Option<MxDequantFn>; 3] {
    [
        Some(mx_dequant_entry::<E, ToF32>),
        Some(mx_dequant_entry::<E, ToBf16>),
        Some(mx_dequant_entry::<E, ToF16>),
    ]
}

/// The five elements of one rule, in `MxElement` order.
const fn quant_row<const CEIL: bool>() -> [Option<MxQuantFn>; 5] {
    [
        Some(mx_quant_entry::<F8E4M3, CEIL>),
        Some(mx_quant_entry::<F8E5M2, CEIL>),
        Some(mx_quant_entry::<F6E2M3, CEIL>),
        Some(mx_quant_entry::<F6E3M2, CEIL>),
        Some(mx_quant_entry::<E2m1, CEIL>),
    ]
}

/// Sets every slot of `t` to the NEON block kernels (both aarch64 backends): the table
/// starts here.
pub(crate) const fn set(t: &mut BlockKernels) {
    *t = BlockKernels {
        mx_dequant: [
            dequant_row::<F8E4M3>(),
            dequant_row::<F8E5M2>(),
            dequant_row::<F6E2M3>(),
            dequant_row::<F6E3M2>(),
            [
                Some(mx_dequant_e2m1_entry::<ToF32> as MxDequantFn),
                Some(mx_dequant_e2m1_entry::<ToBf16>),
                Some(mx_dequant_e2m1_entry::<ToF16>),
            ],
        ],
        mx_quant: [quant_row::<false>(), quant_row::<true>()],
        fp8_dequant: [
            Some(fp8_dequant_entry::<ToF32> as Fp8DequantFn),
            Some(fp8_dequant_entry::<ToBf16>),
            Some(fp8_dequant_entry::<ToF16>),
        ],
        // The scalar `amax` loop is already vectorised (`UMAX`): NEON is baseline on aarch64.
        amax: [None; 3],
        products: None,
        ..BlockKernels::empty()
    };
}

// The element indices agree with the table order (checked at compile time).
const _: () = {
    assert!(<F4E2M1 as Format>::BITS == 4 && <F6E2M3 as Format>::BITS == 6);
    assert!(MxElement::E2M1 as usize == 4 && MxElement::E4M3 as usize == 0);
};
