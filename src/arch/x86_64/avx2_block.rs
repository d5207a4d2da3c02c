//! AVX2 block kernels (`src/block/spec/kernels.rs`): MX dequantization and quantization and
//! block FP8 dequantization, bit for bit the scalar loops of `src/block/` (the
//! specification), whatever MXCSR holds.
//!
//! # MX dequantization (`mx_dequant`)
//!
//! The scalar code rounds the exact product `decode(code) · 2^(s − 127)` once to the
//! destination. Every element value has at most 4 significant bits, so whenever the
//! product of every non-zero code of the element is a *normal* f32, it is exact in f32, and
//! rounding that f32 once to BF16 or F16 is the scalar result. For each element that holds
//! for the scale bytes `LO..=HI` with `LO = 1 − log2(smallest subnormal)` (the smallest
//! product is at least 2^-126) and `HI = 254 − emax` (the largest is below 2^128): E4M3
//! 10..=246, E5M2 17..=239, E2M3 4..=252, E3M2 5..=250, E2M1 2..=252. Such blocks take the
//! SIMD path; scale `0xFF` stores the canonical NaN block; the few other scales (tiny or
//! huge blocks, whose products can be f32 subnormals or overflow) run the scalar
//! `mx::dequantize_block` through stack buffers.
//!
//! * **f32 values of the codes**, exact and without MXCSR dependence: E4M3 by the F16 trick
//!   of the `avx2` module (`e4m3_to_f16x16`: the value times 2^-8 as an F16 code, NaN as the
//!   F16 quiet NaN with the code's sign), E5M2 as `code << 8` (an F16 code), both widened by
//!   `VCVTPH2PS` (exact, ignores MXCSR, quiets NaN keeping the payload); fp6 by the
//!   `avx2_small` table lookup (`lut_f32x32`, integer only).
//! * **scaling**: one `VMULPS` by the power of two `2^(s − 127)` (E4M3: `2^(s − 119)`, which
//!   also undoes the 2^-8). Its operands are normal (or zero, Inf, quiet NaN) and, inside
//!   `LO..=HI`, its result is a normal f32 or zero: the product is exact, so neither the
//!   rounding mode nor FTZ/DAZ can change it; a quiet NaN operand is returned unchanged
//!   and an infinity stays infinite; nothing raises an exception.
//! * **destination**: f32 as is; BF16 by truncation (`x >> 16`: at most 4 significant
//!   bits, so the low half is zero; a quiet NaN's top half is what vcvt's f32 → BF16
//!   narrowing keeps, the quiet bit already set); F16 by `VCVTPS2PH` with immediate 0 (round
//!   to nearest even, not MXCSR.RC, F16 subnormals kept whatever FTZ says; its inputs are
//!   normal, so DAZ does not apply), the IEEE narrowing vcvt specifies, NaN included.
//! * **E2M1** takes a shorter route: per block, the 16 BF16 codes of the E2M1 codes times
//!   `2^(s − 127)` (a constant table plus `(s − 127) << 7` in the exponent field of the
//!   14 non-zero codes; exact inside `LO..=HI` because the scaled exponents stay in 1..=254,
//!   so no carry or borrow reaches the sign bit), split into a low-byte and a high-byte
//!   `VPSHUFB` table. Each 16-byte run of packed codes then costs two nibble lookups per
//!   byte plane and the interleaves. f32 is the BF16 code shifted left by 16 (exact), F16
//!   is `VCVTPS2PH` of that f32 (one rounding).
//!
//! # Block FP8 dequantization (`fp8_dequant`)
//!
//! `dst[i] = D(f32(f32(code) · scale))`: the f32 product is rounded, so it is computed with
//! `VMULPS` only when MXCSR is the default (`0x1F80`, exception flags ignored: round to
//! nearest even, no FTZ, no DAZ, all exceptions masked), checked once per call with
//! `STMXCSR`; otherwise, and for a NaN or infinite scale (whose NaN rules differ from x86's
//! default NaN), the scalar `fp8::dequantize_run` runs. Under the default MXCSR `VMULPS` is
//! the IEEE product: round to nearest even, subnormals kept. For a normal scale below 2^8
//! (DeepSeek's `weight_scale_inv` always is) the codes widen in integer arithmetic to their
//! value times 2^-120 and are multiplied by `2^120 · scale` (`fp8_products_int`). Otherwise
//! the code is widened as
//! `h = code · 2^-8` (exact, see above) and multiplied by `256 · scale` (for a normal
//! scale below 2^120: exponent field plus 8, exact): `h · (256 · scale)` is the same real
//! number as `code · scale`, so one `VMULPS` rounds it exactly once. For other scales
//! (zero, subnormal, at least 2^120), `h · 256` (exact) is multiplied by `scale`. A NaN code
//! widens to the quiet NaN `0x7FC00000 | sign`, which `VMULPS` returns as is: the
//! `soft::mul` rule (the first NaN operand, quieted). No invalid `0 · Inf` can occur (codes
//! are finite or NaN, the scale is finite), so every NaN product is `0x7FC00000 | sign`.
//! BF16 rounds with the integer round to nearest even of the `avx2` module, which keeps
//! such a NaN's top half (`0x7FC0 | sign`, vcvt's narrowing), F16 with `VCVTPS2PH`
//! (immediate 0), the narrowing `codec::narrow_f32` specifies. A run's last `len % 32`
//! codes go through 32-element stack buffers (zero padding), so nothing is read or
//! written outside the slices.
//!
//! **BF16 by a table per tile.** To BF16, when MXCSR.RC rounds to nearest (found by
//! `simd::x86_64::rounds_to_nearest`, without `STMXCSR`) and the scale's exponent field
//! `e` is in `10..=244` (either sign), a tile needs 16 products instead of one per value.
//! Every E4M3 code is `±i · 2^(E' − 10)` with `i` its fraction `M` plus 8 if its exponent
//! field `E` is not 0, and `E' = max(E, 1)`; the codes `0x00..=0x0F` are `i · 2^-9` for
//! `i = 0..16`. The table holds `T[i] = BF16(f32(i · 2^-9 · scale))` (one `VMULPS` of
//! exact operands, then the integer round to nearest even), and a code's result is
//! `T[i] + ((E' − 1) << 7)` with the code's sign bit flipped into it (`XOR`): for `i ≥ 1`
//! the product `i · 2^-9 · |scale|` is at least `2^-9 · 2^(10 − 127) = 2^-126` (a normal
//! f32), and `code · scale` is that times `2^(E' − 1)`, at most `448 · 2^(244 − 126) <
//! 2^127`; between those bounds, rounding to f32 and then to BF16 commutes with the exact
//! scaling by a power of two, which adds `E' − 1` to the exponent field of the BF16 code
//! (a carry of the rounding into the exponent included) without reaching 255. `T[0]` is
//! `0 · scale = ±0` with the scale's sign, and `E = 0` there, so nothing is added; flipping
//! the sign gives the product's sign in every case, as `soft::mul` does. No operand or
//! result is subnormal, so FTZ and DAZ cannot change the table. The NaN codes (`0x7F`,
//! `0xFF`) become `0x7FC0 | sign`, the BF16 of the element widening's NaN that `soft::mul`
//! returns as is. The lookups are one `VPSHUFB` per byte plane for 32 codes (index
//! `M | (E ≠ 0) · 8`), then word arithmetic; a run's last values are one 16-value step
//! that ends at the run's end (rewriting some values with the same bits), or, below 16
//! values, go through 16-value stack buffers.
//!
//! # MX quantization (`mx_quant`)
//!
//! Per block of 32 f32: `amax` is the unsigned maximum of the magnitude bits (a NaN is
//! above `+Inf`, as `amax_bits` orders them) and the scale byte is the scalar
//! `mx::scale_byte` of it (one per 32 values; for `Ceil` its division is `soft::div`).
//! Scale `0xFF` (a NaN or infinity in the block) writes zero codes. For scales
//! `18..=254` the codes are one rounding of `y = x · 2^k`, `k = 127 − s` in `−127..=109`.
//!
//! For scales `18..=253`, `y` is one `VMULPS` by the normal f32 `2^k` (`k ≥ −126`), which
//! gives the same codes under every MXCSR: a product that is a normal f32 is exact (no
//! rounding, so neither the rounding mode nor FTZ can change it); every other product is
//! below 2^-126 in magnitude, where `x` itself was tiny (an f32 subnormal or `e + k ≤ 0`):
//! the exact value is below `2^(k − 126) ≤ 2^-17`, so whatever MXCSR does to it (round it,
//! flush it to ±0, or, with DAZ, read a subnormal `x` as ±0) it stays below half the
//! smallest subnormal of every element (E5M2's, 2^-16, is the smallest) and narrows to ±0
//! with its sign, as the scalar code does.
//!
//! Scale 254 (whose `2^-127` is an f32 subnormal, which DAZ would read as zero) computes
//! `y` in integer arithmetic:
//!
//! * a lane whose exponent field `e` has `e ≥ 1` and `e + k ≥ 1` gets `x + (k << 23)`: the
//!   same sign and fraction with exponent `e + k`, exactly `x · 2^k` (the field is
//!   `e − 127 ≤ 127`: the block has no infinity, so `e ≤ 254`);
//! * every other lane (zero, f32 subnormal, or `e + k ≤ 0`) becomes `±0` with its sign:
//!   its `|y|` is below `2^(k − 126) ≤ 2^-17`, so the scalar code is `±0` too.
//!
//! then the f32 → element narrowing of the `avx2` (E4M3, E5M2: `f32_to_f8_codes16`) or
//! `avx2_small` (fp6: `f32_codes16`) module with `Saturate`, whose results do not
//! depend on MXCSR. (E2M1 is quantized by the generic kernel, which measured faster.) Blocks with
//! scales 0..=17 (tiny blocks, whose f32 subnormal values can give non-zero codes) run the
//! scalar `mx::quantize_row` through stack buffers.
//!
//! Kernels take whole blocks only (the slots' contract); loads and stores are unaligned
//! and stay inside the ranges the contract gives.

use core::arch::x86_64::*;
use core::mem::MaybeUninit;
use core::ptr;

use super::avx2::{
    bf16_rne_no_nan, e4m3_to_f16x16, f32_to_f8_codes16, f32_to_f8_fma, load_f32x32,
    mxcsr_rounds_to_nearest, pack_words, splat, splat16, srl,
};
use super::avx2_small::{f32_codes16, lut_f32x32, order_bytes};
use crate::block::spec::kernels::{AmaxFn, BlockKernels, Fp8DequantFn, LookupFn, ProductsFn};
use crate::block::spec::mx::MxElement;
use crate::block::spec::{self, mx::MxRule};
use crate::block::spec::{BlockDest, DestKind};
use crate::codec::Format;
use crate::{BF16, F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E5M2, F16};

/// Values per MX block.
const BLOCK: usize = 32;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// `2^e` in every f32 lane, for `−126 ≤ e ≤ 127` (a normal f32: biased exponent `e + 127`
/// in 1..=254, fraction zero).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn pow2(e: i32) -> __m256 {
    debug_assert!((-126..=127).contains(&e));
    _mm256_castsi256_ps(splat(((e + 127) as u32) << 23))
}

/// The unsigned maximum of the eight 32-bit lanes of `m`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn hmax_epu32(m: __m256i) -> u32 {
    let m = _mm_max_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
    // Swap 64-bit halves, then 32-bit neighbours: every lane ends up with the maximum.
    let m = _mm_max_epu32(m, _mm_shuffle_epi32::<0x4E>(m));
    let m = _mm_max_epu32(m, _mm_shuffle_epi32::<0xB1>(m));
    _mm_cvtsi128_si32(m) as u32
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
    /// Stores 32 f32 values (in order) each of which is an f32 value whose rounding to `T`
    /// is wanted, where the rounding is exact or done by an instruction that ignores MXCSR
    /// for these inputs (normal, zero, Inf or quiet NaN; at most 4 significant bits for
    /// BF16).
    ///
    /// # Safety
    /// `dst` writable for `32 · SIZE` bytes; AVX2, FMA and F16C present.
    unsafe fn store_exact(dst: *mut u8, v: [__m256; 4]);
    /// Stores 32 f32 values rounded to nearest even to `T`, where every NaN among them is
    /// a canonical quiet NaN (`0x7FC00000` with either sign). May assume the default MXCSR.
    ///
    /// # Safety
    /// As for [`store_exact`](Self::store_exact), and MXCSR is the default.
    unsafe fn store_rounded(dst: *mut u8, v: [__m256; 4]);
    /// Stores 32 BF16 codes given as the 16-bit lanes of `a` (values 0-7 | 16-23) and `b`
    /// (values 8-15 | 24-31), each a normal BF16 value, zero, of at most 2 significant bits.
    ///
    /// # Safety
    /// As for [`store_exact`](Self::store_exact).
    unsafe fn store_bf16_words(dst: *mut u8, a: __m256i, b: __m256i);
    /// Whether block FP8 dequantization may run [`fp8_bf16_table`] (BF16 only).
    const TABLE: bool = false;
}

/// f32 destination.
struct ToF32;
/// BF16 destination.
struct ToBf16;
/// F16 destination.
struct ToF16;

/// The f32 (BF16 code shifted left by 16) of the words of [`Dest::store_bf16_words`], in
/// order. `VPUNPCKL/HWD` with zeros work within 128-bit lanes: `[0-3 | 16-19]`,
/// `[4-7 | 20-23]`, `[8-11 | 24-27]`, `[12-15 | 28-31]`; `VPERM2I128` puts them in order.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn bf16_words_to_f32(a: __m256i, b: __m256i) -> [__m256; 4] {
    let z = _mm256_setzero_si256();
    let (a0, a1) = (_mm256_unpacklo_epi16(z, a), _mm256_unpackhi_epi16(z, a));
    let (b0, b1) = (_mm256_unpacklo_epi16(z, b), _mm256_unpackhi_epi16(z, b));
    let f = _mm256_castsi256_ps;
    [
        f(_mm256_permute2x128_si256::<0x20>(a0, a1)),
        f(_mm256_permute2x128_si256::<0x20>(b0, b1)),
        f(_mm256_permute2x128_si256::<0x31>(a0, a1)),
        f(_mm256_permute2x128_si256::<0x31>(b0, b1)),
    ]
}

impl Dest for ToF32 {
    type T = f32;
    const SIZE: usize = 4;
    const NAN: u32 = 0x7FC0_0000;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store_exact(dst: *mut u8, v: [__m256; 4]) {
        let d = dst.cast::<f32>();
        // SAFETY: 32 f32 (128 bytes) writable at dst; unaligned stores.
        unsafe {
            _mm256_storeu_ps(d, v[0]);
            _mm256_storeu_ps(d.add(8), v[1]);
            _mm256_storeu_ps(d.add(16), v[2]);
            _mm256_storeu_ps(d.add(24), v[3]);
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store_rounded(dst: *mut u8, v: [__m256; 4]) {
        // SAFETY: forwarded; f32 needs no rounding.
        unsafe { Self::store_exact(dst, v) }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store_bf16_words(dst: *mut u8, a: __m256i, b: __m256i) {
        // SAFETY: forwarded; every BF16 value is an f32 value.
        unsafe { Self::store_exact(dst, bf16_words_to_f32(a, b)) }
    }
}

impl Dest for ToBf16 {
    type T = BF16;
    const SIZE: usize = 2;
    const NAN: u32 = 0x7FC0;
    const TABLE: bool = true;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store_exact(dst: *mut u8, v: [__m256; 4]) {
        // Truncation: the low 16 bits are zero (at most 4 significant bits), and a quiet
        // NaN's top half already has the quiet bit. The halves are below 65536, so the
        // unsigned-saturating pack of `pack_words` keeps them.
        let t = |x: __m256| srl(_mm256_castps_si256(x), 16);
        let d = dst.cast::<__m256i>();
        // SAFETY: 32 u16 (64 bytes) writable at dst.
        unsafe {
            _mm256_storeu_si256(d, pack_words(t(v[0]), t(v[1])));
            _mm256_storeu_si256(d.add(1), pack_words(t(v[2]), t(v[3])));
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store_rounded(dst: *mut u8, v: [__m256; 4]) {
        // The integer round to nearest even at bit 16. Without NaN lanes handled apart: a
        // canonical quiet NaN `0x7FC00000 | sign` plus 0x7FFF (its bit 16 is 0) keeps its
        // top half, `0x7FC0 | sign`, which is what vcvt's f32 -> BF16 narrowing gives it.
        let r = |x: __m256| bf16_rne_no_nan(_mm256_castps_si256(x));
        let (a, b) = (pack_words(r(v[0]), r(v[1])), pack_words(r(v[2]), r(v[3])));
        let d = dst.cast::<__m256i>();
        // SAFETY: 32 u16 (64 bytes) writable at dst.
        unsafe {
            _mm256_storeu_si256(d, a);
            _mm256_storeu_si256(d.add(1), b);
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store_bf16_words(dst: *mut u8, a: __m256i, b: __m256i) {
        let d = dst.cast::<__m256i>();
        // SAFETY: 32 u16 (64 bytes) writable at dst. [0-7 | 8-15] and [16-23 | 24-31].
        unsafe {
            _mm256_storeu_si256(d, _mm256_permute2x128_si256::<0x20>(a, b));
            _mm256_storeu_si256(d.add(1), _mm256_permute2x128_si256::<0x31>(a, b));
        }
    }
}

impl Dest for ToF16 {
    type T = F16;
    const SIZE: usize = 2;
    const NAN: u32 = 0x7E00;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store_exact(dst: *mut u8, v: [__m256; 4]) {
        let d = dst.cast::<__m128i>();
        // Immediate 0: round to nearest even whatever MXCSR.RC says; VCVTPS2PH keeps F16
        // subnormal results under FTZ, and DAZ does not touch these normal inputs.
        // SAFETY: 32 u16 (64 bytes) writable at dst.
        unsafe {
            _mm_storeu_si128(d, _mm256_cvtps_ph::<0>(v[0]));
            _mm_storeu_si128(d.add(1), _mm256_cvtps_ph::<0>(v[1]));
            _mm_storeu_si128(d.add(2), _mm256_cvtps_ph::<0>(v[2]));
            _mm_storeu_si128(d.add(3), _mm256_cvtps_ph::<0>(v[3]));
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store_rounded(dst: *mut u8, v: [__m256; 4]) {
        // SAFETY: forwarded; under the default MXCSR (no DAZ) VCVTPS2PH is the IEEE
        // narrowing for f32 subnormal inputs too.
        unsafe { Self::store_exact(dst, v) }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store_bf16_words(dst: *mut u8, a: __m256i, b: __m256i) {
        // SAFETY: forwarded; the f32 values are normal or zero.
        unsafe { Self::store_exact(dst, bf16_words_to_f32(a, b)) }
    }
}

/// Stores the canonical NaN block: 32 values of `D::NAN`.
///
/// # Safety
/// `dst` writable for `32 · D::SIZE` bytes; AVX2, FMA and F16C present.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn store_nan_block<D: Dest>(dst: *mut u8) {
    let v = if D::SIZE == 4 {
        splat(D::NAN)
    } else {
        splat16(D::NAN as u16)
    };
    let d = dst.cast::<__m256i>();
    // SAFETY: 32 · SIZE bytes writable at dst: SIZE 32-byte stores.
    unsafe {
        for j in 0..D::SIZE {
            _mm256_storeu_si256(d.add(j), v);
        }
    }
}

// ---------------------------------------------------------------------------------------
// MX dequantization
// ---------------------------------------------------------------------------------------

/// An MX element with a SIMD dequantization of one block.
trait MxElem {
    const ELEMENT: MxElement;
    /// Code bytes per block.
    const BYTES: usize;
    /// The scale bytes for which every non-zero finite product is a normal f32 (module
    /// docs): `1 − log2(smallest subnormal)..=254 − emax`.
    const LO: u8;
    const HI: u8;
    /// Dequantizes the block of codes at `c` with scale byte `s` (in `LO..=HI`) into `d`.
    ///
    /// # Safety
    /// `c` readable for `BYTES` bytes, `d` writable for `32 · D::SIZE` bytes; AVX2, FMA and
    /// F16C present.
    unsafe fn dequant<D: Dest>(c: *const u8, s: u8, d: *mut u8);
}

impl MxElem for F8E4M3 {
    const ELEMENT: MxElement = MxElement::E4M3;
    const BYTES: usize = 32;
    const LO: u8 = 10;
    const HI: u8 = 246;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn dequant<D: Dest>(c: *const u8, s: u8, d: *mut u8) {
        // SAFETY: 32 code bytes readable at c.
        let v = unsafe { _mm256_loadu_si256(c.cast()) };
        let h0 = e4m3_to_f16x16(_mm256_castsi256_si128(v));
        let h1 = e4m3_to_f16x16(_mm256_extracti128_si256::<1>(v));
        // The F16 codes are the values times 2^-8: the factor 2^(s - 127 + 8) is normal for
        // s <= 246, and the products are exact (module docs).
        let f = pow2(s as i32 - 119);
        let w = |h: __m128i| _mm256_mul_ps(_mm256_cvtph_ps(h), f);
        let x = [
            w(_mm256_castsi256_si128(h0)),
            w(_mm256_extracti128_si256::<1>(h0)),
            w(_mm256_castsi256_si128(h1)),
            w(_mm256_extracti128_si256::<1>(h1)),
        ];
        // SAFETY: forwarded.
        unsafe { D::store_exact(d, x) }
    }
}

impl MxElem for F8E5M2 {
    const ELEMENT: MxElement = MxElement::E5M2;
    const BYTES: usize = 32;
    const LO: u8 = 17;
    const HI: u8 = 239;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn dequant<D: Dest>(c: *const u8, s: u8, d: *mut u8) {
        // SAFETY: 32 code bytes readable at c.
        let v = unsafe { _mm256_loadu_si256(c.cast()) };
        let (lo, hi) = (_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
        // `code << 8` is the F16 code of the same value: bytes interleaved after a zero.
        let z = _mm_setzero_si128();
        let f = pow2(s as i32 - 127);
        let w = |h: __m128i| _mm256_mul_ps(_mm256_cvtph_ps(h), f);
        let x = [
            w(_mm_unpacklo_epi8(z, lo)),
            w(_mm_unpackhi_epi8(z, lo)),
            w(_mm_unpacklo_epi8(z, hi)),
            w(_mm_unpackhi_epi8(z, hi)),
        ];
        // SAFETY: forwarded.
        unsafe { D::store_exact(d, x) }
    }
}

/// fp6 elements (one per byte, the high two bits ignored) through the table widening.
macro_rules! fp6_elem {
    ($t:ty, $e:ident, $lo:expr, $hi:expr) => {
        impl MxElem for $t {
            const ELEMENT: MxElement = MxElement::$e;
            const BYTES: usize = 32;
            const LO: u8 = $lo;
            const HI: u8 = $hi;

            #[inline]
            #[target_feature(enable = "avx2,fma,f16c")]
            unsafe fn dequant<D: Dest>(c: *const u8, s: u8, d: *mut u8) {
                // SAFETY: 32 code bytes readable at c.
                let v = unsafe { _mm256_loadu_si256(c.cast()) };
                let f = pow2(s as i32 - 127);
                let x = lut_f32x32::<$t>(v).map(|x| _mm256_mul_ps(x, f));
                // SAFETY: forwarded.
                unsafe { D::store_exact(d, x) }
            }
        }
    };
}
fp6_elem!(F6E2M3, E2M3, 4, 252);
fp6_elem!(F6E3M2, E3M2, 5, 250);

/// The BF16 codes of the 16 E2M1 codes (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives).
static E2M1_BF16: [u16; 16] = [
    0x0000, 0x3F00, 0x3F80, 0x3FC0, 0x4000, 0x4040, 0x4080, 0x40C0, //
    0x8000, 0xBF00, 0xBF80, 0xBFC0, 0xC000, 0xC040, 0xC080, 0xC0C0,
];
/// All ones for the E2M1 codes with a non-zero value (every code but ±0).
static E2M1_NONZERO: [u16; 16] = [
    0, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, //
    0, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF,
];

impl MxElem for F4E2M1 {
    const ELEMENT: MxElement = MxElement::E2M1;
    const BYTES: usize = 16;
    const LO: u8 = 2;
    const HI: u8 = 252;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn dequant<D: Dest>(c: *const u8, s: u8, d: *mut u8) {
        // SAFETY: each load reads one 32-byte constant table.
        let (base, nonzero) = unsafe {
            (
                _mm256_loadu_si256(E2M1_BF16.as_ptr().cast()),
                _mm256_loadu_si256(E2M1_NONZERO.as_ptr().cast()),
            )
        };
        // Scaled table: (s - 127) << 7 added to the exponent field of the non-zero codes
        // (module docs: exponents stay in 1..=254, so the sign bit is untouched; the 16-bit
        // add wraps for a negative step, which is the subtraction wanted).
        let step = splat16((((s as i32) - 127) << 7) as u16);
        let t = _mm256_add_epi16(base, _mm256_and_si256(nonzero, step));
        // Low bytes then high bytes of each 128-bit half (codes 0-7 | 8-15), then 64-bit
        // order 0, 2, 1, 3: [low bytes of codes 0-15 | high bytes of codes 0-15].
        let split = _mm256_setr_epi8(
            0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, //
            0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
        );
        let t = _mm256_permute4x64_epi64::<0xD8>(_mm256_shuffle_epi8(t, split));
        let tlo = _mm256_permute2x128_si256::<0x00>(t, t);
        let thi = _mm256_permute2x128_si256::<0x11>(t, t);
        // SAFETY: 16 code bytes readable at c.
        let b = unsafe { _mm_loadu_si128(c.cast()) };
        let nib = _mm_set1_epi8(0x0F);
        let lo = _mm_and_si128(b, nib);
        let hi = _mm_and_si128(_mm_srli_epi16::<4>(b), nib);
        // Codes in value order: byte j holds values 2j (low nibble) and 2j + 1 (high).
        let idx = _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
        let l = _mm256_shuffle_epi8(tlo, idx);
        let h = _mm256_shuffle_epi8(thi, idx);
        // Words [0-7 | 16-23] and [8-15 | 24-31].
        let a = _mm256_unpacklo_epi8(l, h);
        let bw = _mm256_unpackhi_epi8(l, h);
        // SAFETY: forwarded.
        unsafe { D::store_bf16_words(d, a, bw) }
    }
}

/// One block by the scalar `mx::dequantize_block`, through a stack buffer (the destination
/// need not be aligned for `D::T`).
///
/// # Safety
/// `c` readable for `E::BYTES` bytes, `d` writable for `32 · D::SIZE` bytes.
#[cold]
#[inline(never)]
unsafe fn mx_dequant_scalar<E: MxElem, D: Dest>(c: *const u8, s: u8, d: *mut u8) {
    // SAFETY: `c` is readable for E::BYTES bytes (u8, no alignment needed).
    let codes = unsafe { core::slice::from_raw_parts(c, E::BYTES) };
    let mut out = [MaybeUninit::<D::T>::uninit(); BLOCK];
    spec::mx_dequantize_block::<D::T>(E::ELEMENT, codes, 0, s, &mut out);
    // SAFETY: `dequantize_block` initialised all 32 values; they are 32 · SIZE bytes, which
    // `d` can take; the buffer is a distinct local.
    unsafe { ptr::copy_nonoverlapping(out.as_ptr().cast::<u8>(), d, BLOCK * D::SIZE) };
}

/// MX dequantization of `blocks` whole blocks.
///
/// # Safety
/// The `MxDequantFn` contract for element `E` and destination `D`; AVX2, FMA and F16C.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn mx_dequant<E: MxElem, D: Dest>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    for b in 0..blocks {
        // SAFETY: b < blocks, so scale b, code bytes b · BYTES.. + BYTES and values
        // 32b..32b + 32 are inside the caller's ranges.
        unsafe {
            let s = scales.add(b).read();
            let c = codes.add(b * E::BYTES);
            let d = dst.add(b * BLOCK * D::SIZE);
            if (E::LO..=E::HI).contains(&s) {
                E::dequant::<D>(c, s, d);
            } else if s == 0xFF {
                store_nan_block::<D>(d);
            } else {
                mx_dequant_scalar::<E, D>(c, s, d);
            }
        }
    }
}

/// The table entry of [`mx_dequant`].
///
/// # Safety
/// The `MxDequantFn` contract.
unsafe fn mx_dequant_entry<E: MxElem, D: Dest>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    // SAFETY: the caller's ranges are forwarded; this table is only reachable through the
    // AVX2 and AVX-512 backends, which are chosen (or accepted by `check_backend`) only
    // when `avx2_available()` confirmed AVX2, FMA and F16C.
    unsafe { mx_dequant::<E, D>(codes, scales, blocks, dst) }
}

// ---------------------------------------------------------------------------------------
// Block FP8 dequantization
// ---------------------------------------------------------------------------------------

/// 32 E4M3 codes at `c` times the scale, rounded once to f32 (default MXCSR): see the
/// module docs. `TWO`: multiply by 256 and then by `f` (when `256 · scale` overflows),
/// else by `f = 256 · scale` alone.
///
/// # Safety
/// `c` readable for 32 bytes; AVX2, FMA and F16C present; MXCSR is the default.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn fp8_products<const TWO: bool>(c: *const u8, f: __m256) -> [__m256; 4] {
    // SAFETY: 32 code bytes readable at c.
    let v = unsafe { _mm256_loadu_si256(c.cast()) };
    let h0 = e4m3_to_f16x16(_mm256_castsi256_si128(v));
    let h1 = e4m3_to_f16x16(_mm256_extracti128_si256::<1>(v));
    let w = |h: __m128i| {
        let x = _mm256_cvtph_ps(h);
        if TWO {
            // x · 256 is exact (normal operands and result), then one rounding.
            _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(256.0)), f)
        } else {
            _mm256_mul_ps(x, f)
        }
    };
    [
        w(_mm256_castsi256_si128(h0)),
        w(_mm256_extracti128_si256::<1>(h0)),
        w(_mm256_castsi256_si128(h1)),
        w(_mm256_extracti128_si256::<1>(h1)),
    ]
}

/// 32 E4M3 codes at `c` times the scale, rounded once to f32 (default MXCSR), for a
/// normal scale below 2^8: `f = scale · 2^120`.
///
/// The f32 with bits `sign << 31 | (code & 0x7F) << 20` is the code's value times 2^-120,
/// exactly, for every finite code: the E4M3 exponent and fraction fields land in f32's
/// with the bias difference 120 left out, and E4M3's subnormals (exponent field 0) land on
/// f32 subnormals with the same fraction. The f32 product of it with `f` is therefore the
/// real `code · scale` rounded once (the default MXCSR keeps subnormal operands). `slli 24`
/// puts the code's sign at bit 31 and its magnitude at bits 24..31, `srai 4` moves the
/// magnitude to bits 20..27 while copying the sign into bits 27..31, and the mask keeps the
/// sign and the 7 magnitude bits. A NaN code (`0x7F`/`0xFF`) becomes the canonical
/// `0x7FC00000 | sign` the element widening gives (what the scalar `soft::mul` returns).
///
/// # Safety
/// `c` readable for 32 bytes; AVX2, FMA and F16C present; MXCSR is the default.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn fp8_products_int(c: *const u8, f: __m256) -> [__m256; 4] {
    // SAFETY: 32 code bytes readable at c.
    let v = unsafe { _mm256_loadu_si256(c.cast()) };
    let has_nan = _mm256_movemask_epi8(_mm256_cmpeq_epi8(
        _mm256_and_si256(v, _mm256_set1_epi8(0x7F)),
        _mm256_set1_epi8(0x7F),
    )) != 0;
    let lo = _mm256_castsi256_si128(v);
    let hi = _mm256_extracti128_si256::<1>(v);
    let w = |q: __m128i| {
        let d = _mm256_cvtepu8_epi32(q);
        let bits = _mm256_and_si256(
            _mm256_srai_epi32::<4>(_mm256_slli_epi32::<24>(d)),
            splat(0x87F0_0000),
        );
        let y = _mm256_mul_ps(_mm256_castsi256_ps(bits), f);
        if has_nan {
            let nan = _mm256_cmpeq_epi32(
                _mm256_and_si256(bits, splat(0x7FFF_FFFF)),
                splat(0x07F0_0000),
            );
            let q = _mm256_or_si256(
                _mm256_and_si256(bits, splat(0x8000_0000)),
                splat(0x7FC0_0000),
            );
            _mm256_blendv_ps(y, _mm256_castsi256_ps(q), _mm256_castsi256_ps(nan))
        } else {
            y
        }
    };
    [
        w(lo),
        w(_mm_unpackhi_epi64(lo, lo)),
        w(hi),
        w(_mm_unpackhi_epi64(hi, hi)),
    ]
}

/// [`fp8_products`] (`MODE` 0: `f = 256 · scale`; 1: `f = scale`, times 256 first) or
/// [`fp8_products_int`] (`MODE` 2: `f = 2^120 · scale`).
///
/// # Safety
/// As for those.
#[inline(always)]
unsafe fn fp8_products_mode<const MODE: u8>(c: *const u8, f: __m256) -> [__m256; 4] {
    // SAFETY: forwarded.
    unsafe {
        match MODE {
            0 => fp8_products::<false>(c, f),
            1 => fp8_products::<true>(c, f),
            _ => fp8_products_int(c, f),
        }
    }
}

/// Block FP8 dequantization with `VMULPS` under the default MXCSR, finite `scale`.
///
/// # Safety
/// The `Fp8DequantFn` contract; AVX2, FMA and F16C present; MXCSR is the default.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn fp8_dequant_simd<D: Dest, const MODE: u8>(
    codes: *const u8,
    f: __m256,
    len: usize,
    dst: *mut u8,
) {
    let mut i = 0;
    while len - i >= 32 {
        // SAFETY: codes i..i + 32 and values i..i + 32 are inside the caller's ranges; the
        // features and MXCSR are the caller's.
        unsafe {
            D::store_rounded(
                dst.add(i * D::SIZE),
                fp8_products_mode::<MODE>(codes.add(i), f),
            )
        };
        i += 32;
    }
    if i < len {
        let n = len - i;
        // Fewer than 32 left: through stack buffers; the padding codes (0) are converted
        // and dropped.
        let mut cbuf = [0u8; 32];
        let mut dbuf = [0u8; 128];
        // SAFETY: codes i..len are n < 32 readable bytes and values i..len are n · SIZE
        // writable bytes; the buffers hold 32 codes and 32 values of at most 4 bytes and
        // are distinct locals.
        unsafe {
            ptr::copy_nonoverlapping(codes.add(i), cbuf.as_mut_ptr(), n);
            D::store_rounded(
                dbuf.as_mut_ptr(),
                fp8_products_mode::<MODE>(cbuf.as_ptr(), f),
            );
            ptr::copy_nonoverlapping(dbuf.as_ptr(), dst.add(i * D::SIZE), n * D::SIZE);
        }
    }
}

/// Block FP8 dequantization by the scalar `fp8::dequantize_run`, 32 values at a time
/// through a stack buffer (the destination need not be aligned for `D::T`).
///
/// # Safety
/// The `Fp8DequantFn` contract.
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

/// The table entry of the block FP8 dequantization: one row, MXCSR read once. Compiled
/// with the kernels' target features so that the per-tile steps inline into its loop.
///
/// # Safety
/// The `Fp8DequantFn` contract; this table is only reachable through backends chosen
/// after `avx2_available()` confirmed AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn fp8_dequant_row<D: Dest>(
    codes: *const u8,
    scales: *const u8,
    tile_cols: usize,
    cols: usize,
    dst: *mut u8,
) {
    // The BF16 table needs only round to nearest (its products are normal), which the probe
    // finds without `STMXCSR`; the other paths need the whole default MXCSR, read once, on
    // the first tile that takes one of them.
    // SAFETY: this function is compiled for AVX2 (and so AVX) and runs only where it is.
    let nearest = D::TABLE && unsafe { crate::simd::x86_64::rounds_to_nearest() };
    let mut default = None;
    let mut lo = 0;
    let mut t = 0;
    while lo < cols {
        let len = tile_cols.min(cols - lo);
        // SAFETY: tile t < cols.div_ceil(tile_cols), so its 4 scale bytes are readable.
        let scale = unsafe { scales.add(4 * t).cast::<u32>().read_unaligned() }.to_le();
        let (c, d) = (
            // SAFETY: values lo..lo + len of the row are inside the caller's ranges.
            unsafe { codes.add(lo) },
            // SAFETY: as above.
            unsafe { dst.add(lo * D::SIZE) },
        );
        if nearest && (TABLE_LO..=TABLE_HI).contains(&((scale >> 23) & 0xFF)) {
            // SAFETY: as above; MXCSR.RC is round to nearest (the probe); the scale's
            // exponent field is in the table's range; AVX2 (this function's features).
            unsafe { fp8_bf16_table(c, scale, len, d) };
        } else {
            let default = *default.get_or_insert_with(super::mxcsr_is_default);
            // SAFETY: as above.
            unsafe { fp8_dequant_tile::<D>(c, scale, len, d, default) };
        }
        lo += len;
        t += 1;
    }
}

/// The scale exponent fields (both signs) for which [`fp8_bf16_table`] is exact: every
/// product `code · scale` of a non-zero finite code is then a normal f32 below 2^127 (see
/// the module docs).
const TABLE_LO: u32 = 10;
/// See [`TABLE_LO`].
const TABLE_HI: u32 = 244;

/// The per-tile table of [`fp8_bf16_table`]: the BF16 codes of `i · 2^-9 · scale` for
/// `i = 0..16` (the E4M3 codes `0x00..=0x0F`, whose exponent field is 0 or 1), as their
/// low bytes and their high bytes, each plane repeated in both 128-bit lanes for `VPSHUFB`.
///
/// # Safety
/// AVX2 present; MXCSR.RC is round to nearest; the scale's exponent field is in
/// `TABLE_LO..=TABLE_HI`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn fp8_bf16_planes(scale: u32) -> (__m256i, __m256i) {
    let s = _mm256_set1_ps(f32::from_bits(scale));
    // i · 2^-9: exact f32 constants; each product is one rounding (round to nearest even)
    // of a normal f32 (|product| >= 2^-9 · 2^(TABLE_LO - 127) = 2^-126 for i >= 1), or ±0.
    let q = 1.0 / 512.0;
    let i0 = _mm256_setr_ps(0.0, q, 2.0 * q, 3.0 * q, 4.0 * q, 5.0 * q, 6.0 * q, 7.0 * q);
    let i1 = _mm256_add_ps(i0, _mm256_set1_ps(8.0 * q));
    let p0 = _mm256_castps_si256(_mm256_mul_ps(i0, s));
    let p1 = _mm256_castps_si256(_mm256_mul_ps(i1, s));
    // 16 BF16 codes in order (finite products: no NaN to keep).
    let w = pack_words(bf16_rne_no_nan(p0), bf16_rne_no_nan(p1));
    // Per 128-bit lane: low bytes of its 8 words, then their high bytes.
    let split = _mm256_setr_epi8(
        0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, //
        0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
    );
    let b = _mm256_shuffle_epi8(w, split);
    // 64-bit units: lo 0-7, hi 0-7, lo 8-15, hi 8-15.
    (
        _mm256_permute4x64_epi64::<0b10_00_10_00>(b),
        _mm256_permute4x64_epi64::<0b11_01_11_01>(b),
    )
}

/// 32 E4M3 codes (`c`, bytes in order) dequantized to BF16 through the tables of
/// [`fp8_bf16_planes`]: the codes `0..16` of each 128-bit lane's 8 low and 8 high values, as
/// two vectors `[0-7 | 16-23]` and `[8-15 | 24-31]` of words. See the module docs.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn fp8_bf16_words(c: __m256i, lo: __m256i, hi: __m256i) -> (__m256i, __m256i) {
    // Table index: the fraction, plus 8 where the exponent field is not 0.
    let sub = _mm256_cmpeq_epi8(
        _mm256_and_si256(c, _mm256_set1_epi8(0x78)),
        _mm256_setzero_si256(),
    );
    let idx = _mm256_or_si256(
        _mm256_and_si256(c, _mm256_set1_epi8(7)),
        _mm256_andnot_si256(sub, _mm256_set1_epi8(8)),
    );
    let (tl, th) = (_mm256_shuffle_epi8(lo, idx), _mm256_shuffle_epi8(hi, idx));
    let one = |t: __m256i, w: __m256i| {
        // w = code · 0x0101: exponent field at bits 3..7, sign at bit 15.
        // (max(E, 1) − 1) << 7 = ((E << 3) −sat 8) << 4, added to the exponent field.
        let e = _mm256_slli_epi16::<4>(_mm256_subs_epu16(
            _mm256_and_si256(w, splat16(0x78)),
            splat16(8),
        ));
        let sign = _mm256_and_si256(w, splat16(0x8000));
        let r = _mm256_xor_si256(_mm256_add_epi16(t, e), sign);
        // NaN codes (0x7F, 0xFF): the quiet NaN with the code's sign.
        let nan = _mm256_cmpeq_epi16(_mm256_and_si256(w, splat16(0x7F)), splat16(0x7F));
        _mm256_blendv_epi8(r, _mm256_or_si256(sign, splat16(0x7FC0)), nan)
    };
    (
        one(_mm256_unpacklo_epi8(tl, th), _mm256_unpacklo_epi8(c, c)),
        one(_mm256_unpackhi_epi8(tl, th), _mm256_unpackhi_epi8(c, c)),
    )
}

/// Block FP8 dequantization of one tile's run to BF16 by a table of 16 products per tile
/// (see the module docs): `VPSHUFB` lookups and word arithmetic, no product per value.
///
/// # Safety
/// `codes` readable for `len` bytes, `dst` writable for `len` BF16 values; AVX2, FMA and
/// F16C present; MXCSR.RC is round to nearest; the scale's exponent field is in
/// `TABLE_LO..=TABLE_HI`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn fp8_bf16_table(codes: *const u8, scale: u32, len: usize, dst: *mut u8) {
    // SAFETY: the caller's conditions.
    let (lo, hi) = unsafe { fp8_bf16_planes(scale) };
    // 32 values from element i (32 codes readable, 64 bytes writable).
    let step32 = |i: usize| {
        // SAFETY: the callers below pass i + 32 <= len.
        unsafe {
            let (a, b) = fp8_bf16_words(_mm256_loadu_si256(codes.add(i).cast()), lo, hi);
            let d = dst.add(2 * i).cast::<__m256i>();
            _mm256_storeu_si256(d, _mm256_permute2x128_si256::<0x20>(a, b));
            _mm256_storeu_si256(d.add(1), _mm256_permute2x128_si256::<0x31>(a, b));
        }
    };
    // 16 values from element i (16 codes readable, 32 bytes writable); the upper lane of
    // the vector is zero codes, converted and dropped.
    let step16 = |i: usize| {
        // SAFETY: the callers below pass i + 16 <= len.
        unsafe {
            let c = _mm256_zextsi128_si256(_mm_loadu_si128(codes.add(i).cast()));
            let (a, b) = fp8_bf16_words(c, lo, hi);
            let d = dst.add(2 * i).cast::<__m256i>();
            _mm256_storeu_si256(d, _mm256_permute2x128_si256::<0x20>(a, b));
        }
    };
    let mut i = 0;
    while len - i >= 32 {
        step32(i);
        i += 32;
    }
    if len - i >= 16 {
        step16(i);
        i += 16;
    }
    if i == len {
        return;
    }
    if len >= 16 {
        // The last 16 values, overlapping some already written (with the same bits).
        step16(len - 16);
        return;
    }
    // Fewer than 16 values: through stack buffers (zero padding codes, converted and
    // dropped).
    let mut cbuf = [0u8; 16];
    let mut dbuf = [0u16; 16];
    // SAFETY: codes 0..len (len < 16) are readable and values 0..len writable; the buffers
    // hold 16 codes and 16 values and are distinct locals.
    unsafe {
        ptr::copy_nonoverlapping(codes, cbuf.as_mut_ptr(), len);
        let (a, b) = fp8_bf16_words(
            _mm256_zextsi128_si256(_mm_loadu_si128(cbuf.as_ptr().cast())),
            lo,
            hi,
        );
        _mm256_storeu_si256(
            dbuf.as_mut_ptr().cast(),
            _mm256_permute2x128_si256::<0x20>(a, b),
        );
        ptr::copy_nonoverlapping(dbuf.as_ptr().cast::<u8>(), dst, 2 * len);
    }
}

/// Block FP8 dequantization of one tile's run of a row.
///
/// # Safety
/// `codes` readable for `len` bytes, `dst` writable for `len` values; `default` says
/// whether MXCSR is the default (read by the caller); AVX2, FMA and F16C.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn fp8_dequant_tile<D: Dest>(
    codes: *const u8,
    scale: u32,
    len: usize,
    dst: *mut u8,
    default: bool,
) {
    if scale & 0x7FFF_FFFF >= 0x7F80_0000 || !default {
        // A NaN or infinite scale (rare; its NaN results follow `soft::mul`, not x86's
        // default NaN), or an MXCSR under which VMULPS would round differently.
        // SAFETY: forwarded contract.
        unsafe { fp8_dequant_scalar::<D>(codes, scale, len, dst) };
        return;
    }
    // SAFETY: the caller's ranges are forwarded; MXCSR was found to be the default by the
    // caller; this table is only reachable through backends chosen after `avx2_available()`
    // confirmed AVX2, FMA and F16C.
    unsafe {
        let e = (scale >> 23) & 0xFF;
        if (1..=134).contains(&e) {
            // 2^120 · scale: exponent field e + 120 <= 254, a normal f32, exact.
            let f = _mm256_set1_ps(f32::from_bits(scale + (120 << 23)));
            fp8_dequant_simd::<D, 2>(codes, f, len, dst)
        } else if (1..=246).contains(&e) {
            // 256 · scale: exponent field e + 8 <= 254, a normal f32, exact.
            let f = _mm256_set1_ps(f32::from_bits(scale + (8 << 23)));
            fp8_dequant_simd::<D, 0>(codes, f, len, dst)
        } else {
            // A subnormal or zero scale, or 256 · scale above f32's range.
            let f = _mm256_set1_ps(f32::from_bits(scale));
            fp8_dequant_simd::<D, 1>(codes, f, len, dst)
        }
    }
}

// ---------------------------------------------------------------------------------------
// MX quantization
// ---------------------------------------------------------------------------------------

/// An MX element with a SIMD narrowing of one block's scaled values.
trait QuantElem: MxElem {
    /// Stores the codes of the 32 f32 (bit patterns, in order) `y`, each a normal f32 or ±0:
    /// one rounding to nearest even, saturated.
    ///
    /// # Safety
    /// `c` writable for `BYTES` bytes; AVX2, FMA and F16C present.
    unsafe fn store_codes(c: *mut u8, y: [__m256i; 4]);
    /// [`store_codes`](Self::store_codes) when MXCSR rounds to nearest (FTZ and DAZ may
    /// be set): E4M3 and E5M2 use the faster fused multiply-add narrowing of the `avx2`
    /// module, which depends on the rounding mode only.
    ///
    /// # Safety
    /// As for [`store_codes`](Self::store_codes), and MXCSR rounds to nearest.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store_codes_rn(c: *mut u8, y: [__m256i; 4]) {
        // SAFETY: forwarded.
        unsafe { Self::store_codes(c, y) }
    }
}

/// E4M3 and E5M2 by the integer narrowing of the `avx2` module.
macro_rules! quant_f8 {
    ($($t:ty),*) => {$(
        impl QuantElem for $t {
            #[inline]
            #[target_feature(enable = "avx2,fma,f16c")]
            unsafe fn store_codes(c: *mut u8, y: [__m256i; 4]) {
                let w01 = f32_to_f8_codes16::<$t, true>(y[0], y[1]);
                let w23 = f32_to_f8_codes16::<$t, true>(y[2], y[3]);
                // SAFETY: 32 bytes writable at c.
                unsafe { _mm256_storeu_si256(c.cast(), order_bytes(w01, w23)) };
            }

            #[inline]
            #[target_feature(enable = "avx2,fma,f16c")]
            unsafe fn store_codes_rn(c: *mut u8, y: [__m256i; 4]) {
                // SAFETY: 32 bytes writable at c.
                unsafe { _mm256_storeu_si256(c.cast(), f32_to_f8_fma::<$t, true, 4>(y)) };
            }
        }
    )*};
}
quant_f8!(F8E4M3, F8E5M2);

/// fp6 by the integer narrowing of the `avx2_small` module.
macro_rules! quant_fp6 {
    ($($t:ty),*) => {$(
        impl QuantElem for $t {
            #[inline]
            #[target_feature(enable = "avx2,fma,f16c")]
            unsafe fn store_codes(c: *mut u8, y: [__m256i; 4]) {
                let w01 = f32_codes16::<$t, true>(y[0], y[1]);
                let w23 = f32_codes16::<$t, true>(y[2], y[3]);
                // SAFETY: 32 bytes writable at c.
                unsafe { _mm256_storeu_si256(c.cast(), order_bytes(w01, w23)) };
            }
        }
    )*};
}
quant_fp6!(F6E2M3, F6E3M2);

/// One block by the scalar `mx::quantize_row`, through stack buffers (the source need
/// not be aligned for f32).
///
/// # Safety
/// `x` readable for 128 bytes, `c` writable for `E::BYTES` bytes, `scale` writable.
#[cold]
#[inline(never)]
unsafe fn mx_quant_scalar<E: MxElem>(rule: MxRule, x: *const u8, c: *mut u8, scale: *mut u8) {
    let mut src = [0f32; BLOCK];
    let mut codes = [MaybeUninit::<u8>::uninit(); BLOCK];
    let mut s = [MaybeUninit::<u8>::uninit(); 1];
    // SAFETY: 128 bytes readable at x; the buffer is a distinct local of 128 bytes.
    unsafe { ptr::copy_nonoverlapping(x, src.as_mut_ptr().cast::<u8>(), 4 * BLOCK) };
    spec::mx_quantize_row::<f32>(E::ELEMENT, rule, &src, &mut codes[..E::BYTES], &mut s);
    // SAFETY: `quantize_row` initialised the E::BYTES codes and the scale; `c` takes
    // E::BYTES bytes and `scale` one; the buffers are distinct locals.
    unsafe {
        ptr::copy_nonoverlapping(codes.as_ptr().cast::<u8>(), c, E::BYTES);
        scale.write(s[0].assume_init());
    }
}

/// Lowest and highest scale byte of the SIMD quantization path (module docs).
const Q_LO: u8 = 18;
const Q_HI: u8 = 254;
/// Highest scale byte whose reciprocal `2^(127 − s)` is a normal f32 (the multiply path).
const Q_MUL: u8 = 253;

/// Blocks per pass of [`mx_quant`] (4 KiB of f32 values fits in L1).
const CHUNK: usize = 32;

/// MX quantization of `blocks` whole blocks of f32.
///
/// Two passes per chunk of up to [`CHUNK`] blocks: the scale bytes (and each block's
/// integer constants), then the codes. The scale of a block is a long dependency chain
/// (horizontal maximum, scalar scale rule, broadcast) that the whole narrowing of the
/// block would wait on; computing all of a chunk's scales first lets their chains overlap
/// and the narrowing pass start from constants already in memory.
///
/// # Safety
/// The `MxQuantFn` contract for element `E`; AVX2, FMA and F16C.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn mx_quant<E: QuantElem, const CEIL: bool, const RN: bool>(
    src: *const u8,
    blocks: usize,
    codes: *mut u8,
    scales: *mut u8,
) {
    let rule = if CEIL { MxRule::Ceil } else { MxRule::Ocp };
    let abs = splat(0x7FFF_FFFF);
    let sign = splat(0x8000_0000);
    let mut sbuf = [0u8; CHUNK];
    let mut start = 0;
    while start < blocks {
        let n = (blocks - start).min(CHUNK);
        for (j, slot) in sbuf[..n].iter_mut().enumerate() {
            // SAFETY: block start + j < blocks: its 128 bytes are readable.
            let x = unsafe { load_f32x32(src.add((start + j) * 4 * BLOCK)) };
            let a = x.map(|v| _mm256_and_si256(v, abs));
            // The magnitudes' unsigned maximum orders them as values, NaN above +Inf.
            let m = _mm256_max_epu32(_mm256_max_epu32(a[0], a[1]), _mm256_max_epu32(a[2], a[3]));
            *slot = spec::mx_scale_byte_fast::<CEIL>(E::ELEMENT, hmax_epu32(m));
        }
        for (j, &s) in sbuf[..n].iter().enumerate() {
            // SAFETY: block b = start + j < blocks: values 32b..32b + 32 (128 bytes), code
            // bytes b · BYTES.. + BYTES and scale b are inside the caller's ranges.
            let (p, c, sp) = unsafe {
                let b = start + j;
                (
                    src.add(b * 4 * BLOCK),
                    codes.add(b * E::BYTES),
                    scales.add(b),
                )
            };
            if (Q_LO..=Q_MUL).contains(&s) {
                // y = x · 2^k with one VMULPS (see "Scaling by a multiply" in the module
                // docs: the product is exact or irrelevant under every MXCSR).
                // SAFETY: 128 bytes readable at p.
                let x = unsafe { load_f32x32(p) };
                let f = pow2(127 - s as i32);
                let y = |v: __m256i| _mm256_castps_si256(_mm256_mul_ps(_mm256_castsi256_ps(v), f));
                // SAFETY: E::BYTES bytes writable at c, scale b writable.
                unsafe {
                    sp.write(s);
                    if RN {
                        E::store_codes_rn(c, x.map(y));
                    } else {
                        E::store_codes(c, x.map(y));
                    }
                }
            } else if (Q_LO..=Q_HI).contains(&s) {
                // SAFETY: 128 bytes readable at p.
                let x = unsafe { load_f32x32(p) };
                // y = x · 2^k, k = 127 - s, in integer arithmetic (module docs): lanes whose
                // magnitude bits are at least max(1, 1 - k) << 23 (e >= 1 and e + k >= 1)
                // get k added to the exponent field, the others keep only their sign (±0).
                let k = 127 - s as i32;
                let add = splat((k << 23) as u32);
                let min = splat(((1.max(1 - k) as u32) << 23) - 1);
                // Magnitudes are below 2^31, so the signed compare is an unsigned one.
                let y = |v: __m256i| {
                    let a = _mm256_and_si256(v, abs);
                    let keep = _mm256_cmpgt_epi32(a, min);
                    _mm256_or_si256(
                        _mm256_and_si256(keep, _mm256_add_epi32(a, add)),
                        _mm256_and_si256(v, sign),
                    )
                };
                // SAFETY: E::BYTES bytes writable at c, scale b writable.
                unsafe {
                    sp.write(s);
                    if RN {
                        E::store_codes_rn(c, x.map(y));
                    } else {
                        E::store_codes(c, x.map(y));
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
                unsafe { mx_quant_scalar::<E>(rule, p, c, sp) };
            }
        }
        start += n;
    }
}

/// The table entry of [`mx_quant`].
///
/// # Safety
/// The `MxQuantFn` contract.
unsafe fn mx_quant_entry<E: QuantElem, const CEIL: bool>(
    src: *const u8,
    blocks: usize,
    codes: *mut u8,
    scales: *mut u8,
) {
    // SAFETY: the caller's ranges are forwarded; this table is only reachable through
    // backends chosen after `avx2_available()` confirmed AVX2, FMA and F16C; the `RN`
    // variant runs only when MXCSR was just found to round to nearest.
    unsafe {
        if mxcsr_rounds_to_nearest() {
            mx_quant::<E, CEIL, true>(src, blocks, codes, scales)
        } else {
            mx_quant::<E, CEIL, false>(src, blocks, codes, scales)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Table
// ---------------------------------------------------------------------------------------

/// The hand-written dequantization of element `E` into destination `D`, in its slot.
const fn put_dequant<E: MxElem, D: Dest>(t: &mut BlockKernels, d: DestKind) {
    t.mx_dequant[E::ELEMENT as usize][d as usize] = Some(mx_dequant_entry::<E, D>);
}

/// The hand-written quantizations of one rule, E4M3, E5M2, E2M3 and E3M2 (E2M1 keeps the
/// generic kernel: see [`set`]).
const fn put_quant<const CEIL: bool>(t: &mut BlockKernels) {
    let row = &mut t.mx_quant[CEIL as usize];
    row[MxElement::E4M3 as usize] = Some(mx_quant_entry::<F8E4M3, CEIL>);
    row[MxElement::E5M2 as usize] = Some(mx_quant_entry::<F8E5M2, CEIL>);
    row[MxElement::E2M3 as usize] = Some(mx_quant_entry::<F6E2M3, CEIL>);
    row[MxElement::E3M2 as usize] = Some(mx_quant_entry::<F6E3M2, CEIL>);
}

/// The largest `bits & 0x7FFFFFFF` of `n` f32 values: LLVM vectorises the loop with
/// `VPAND`/`VPMAXUD` (an unsigned maximum of the magnitude bits orders magnitudes as values
/// and NaNs above infinity).
///
/// # Safety
/// `src` readable for `n` f32 values and 4-byte aligned; the CPU has AVX2.
#[target_feature(enable = "avx2")]
unsafe fn amax_u32(src: *const u8, n: usize) -> u32 {
    // SAFETY: the caller's contract: `n` aligned, initialised f32 values (as u32 bits).
    let s = unsafe { core::slice::from_raw_parts(src.cast::<u32>(), n) };
    s.iter().fold(0, |m, &x| m.max(x & 0x7FFF_FFFF))
}

/// The largest `bits & 0x7FFF` of `n` BF16 or F16 codes (`VPMAXUW`), as [`amax_u32`].
///
/// # Safety
/// `src` readable for `n` u16 values and 2-byte aligned; the CPU has AVX2.
#[target_feature(enable = "avx2")]
unsafe fn amax_u16(src: *const u8, n: usize) -> u32 {
    // SAFETY: the caller's contract: `n` aligned, initialised 16-bit codes.
    let s = unsafe { core::slice::from_raw_parts(src.cast::<u16>(), n) };
    u32::from(s.iter().fold(0, |m, &x| m.max(x & 0x7FFF)))
}

/// The scaled building blocks' products, the portable loop compiled for AVX2 (LLVM
/// vectorises it four f64 lanes wide, the selects as `VBLENDVPD`).
///
/// # Safety
/// `bits` readable and `out` writable for `n` aligned values; the CPU has AVX2.
#[target_feature(enable = "avx2")]
unsafe fn products_avx2(bits: *const u32, n: usize, s: f64, out: *mut f64) {
    // SAFETY: the caller's contract: `n` aligned values each, not overlapping (`out` is a
    // distinct buffer).
    let (b, o) = unsafe {
        (
            core::slice::from_raw_parts(bits, n),
            core::slice::from_raw_parts_mut(out, n),
        )
    };
    crate::block::spec::products(b, s, o);
}

/// The `lookup` slot of the two-byte destinations (`dequantize_scaled`'s per-call table,
/// `src/block/scaled.rs`). A table that repeats every 16 words (a four-bit format's: the
/// caller repeats it, as the codec reads no bit above a format's width) or every 64 (a
/// six-bit format's) is held as 16-byte planes, its words' low and high bytes, and 32 codes
/// are looked up by `VPSHUFB` ([`planes16`]); any other table, and the last `n % 32` codes,
/// take the plain loop.
///
/// # Safety
/// The `LookupFn` contract; the table holding this is chosen only when AVX2 was found.
#[target_feature(enable = "avx2")]
unsafe fn lookup16(table: *const u8, src: *const u8, n: usize, dst: *mut u8) {
    // SAFETY: the caller's contract: 256 aligned words at `table`, `n` codes at `src`, `n`
    // aligned words at `dst`, which nothing else accesses during the call.
    let (t, codes, out) = unsafe {
        (
            &*table.cast::<[u16; 256]>(),
            core::slice::from_raw_parts(src, n),
            core::slice::from_raw_parts_mut(dst.cast::<u16>(), n),
        )
    };
    let mut i = 0;
    if t.chunks_exact(16).all(|c| c == &t[..16]) {
        // SAFETY: AVX2 (this function's feature); the table repeats every 16 words; `out`
        // and `codes` have `n` entries each.
        i = unsafe { planes16::<1>(t, codes, out) };
    } else if t.chunks_exact(64).all(|c| c == &t[..64]) {
        // SAFETY: as above; the table repeats every 64 words.
        i = unsafe { planes16::<4>(t, codes, out) };
    }
    for (d, &c) in out[i..].iter_mut().zip(&codes[i..]) {
        *d = t[usize::from(c)];
    }
}

/// The whole 32-code steps of [`lookup16`] for a table repeating every `16 · G` words
/// (`G` 1 or 4); returns the number of codes done. Group `g` of 16 words is two planes (its
/// words' low and high bytes), each one `VPSHUFB` lookup by the code's low 4 bits (the code
/// masked to the period's bits, so bit 7 is clear and the lookup never zeroes); with four
/// groups, bits 4 and 5 then pick the group by two rounds of `VPBLENDVB` (which reads bit 7
/// of each byte: the code shifted left by 3, then by 2, as 16-bit lanes, whose bits crossing
/// into the next byte land below its bit 7). Two byte unpacks make the words.
///
/// # Safety
/// The CPU has AVX2; `t` repeats every `16 · G` words; `out` is as long as `codes`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn planes16<const G: usize>(t: &[u16; 256], codes: &[u8], out: &mut [u16]) -> usize {
    let mut lo = [_mm256_setzero_si256(); 4];
    let mut hi = [_mm256_setzero_si256(); 4];
    for g in 0..G {
        let l: [u8; 16] = core::array::from_fn(|k| t[16 * g + k] as u8);
        let h: [u8; 16] = core::array::from_fn(|k| (t[16 * g + k] >> 8) as u8);
        // SAFETY: 16-byte loads of the two local planes; the features are this function's.
        unsafe {
            let l = _mm_loadu_si128(l.as_ptr().cast());
            let h = _mm_loadu_si128(h.as_ptr().cast());
            lo[g] = _mm256_set_m128i(l, l);
            hi[g] = _mm256_set_m128i(h, h);
        }
    }
    let m = _mm256_set1_epi8((16 * G - 1) as i8);
    let n = codes.len().min(out.len());
    let mut i = 0;
    while n - i >= 32 {
        // SAFETY: codes i..i + 32 and words i..i + 32 (64 bytes) lie below `n`; the features
        // are this function's.
        unsafe {
            let c = _mm256_and_si256(_mm256_loadu_si256(codes.as_ptr().add(i).cast()), m);
            let pick = |p: &[__m256i; 4]| {
                let v0 = _mm256_shuffle_epi8(p[0], c);
                if G == 1 {
                    return v0;
                }
                let b4 = _mm256_slli_epi16::<3>(c);
                let v01 = _mm256_blendv_epi8(v0, _mm256_shuffle_epi8(p[1], c), b4);
                let v2 = _mm256_shuffle_epi8(p[2], c);
                let v23 = _mm256_blendv_epi8(v2, _mm256_shuffle_epi8(p[3], c), b4);
                _mm256_blendv_epi8(v01, v23, _mm256_slli_epi16::<2>(c))
            };
            let l = pick(&lo);
            let h = pick(&hi);
            // In each 128-bit lane, the words of its codes 0..8 and 8..16: lane 0 holds
            // codes 0..16, lane 1 codes 16..32.
            let a = _mm256_unpacklo_epi8(l, h);
            let b = _mm256_unpackhi_epi8(l, h);
            let p = out.as_mut_ptr().add(i).cast::<u8>();
            _mm256_storeu_si256(p.cast(), _mm256_permute2x128_si256::<0x20>(a, b));
            _mm256_storeu_si256(p.add(32).cast(), _mm256_permute2x128_si256::<0x31>(a, b));
        }
        i += 32;
    }
    i
}

/// Puts the AVX2 block kernels of this file into `t` (also the base of the AVX-512 tiers,
/// which have AVX2, FMA and F16C), over the generic kernels `t` starts with
/// (`block_tables.rs`), in the slots where they measured faster; the other slots keep the
/// generic kernel.
///
/// MX slots left to the generic kernels, which measured faster (`cargo bench --bench block
/// -- 'mx_dequant_8x4096/.*-avx2$'` for the dequantizations, `VCVT_AB_BATCHES=61 cargo run
/// --release --example block_quant -- mx` for the quantizations; two builds alternating,
/// medians, AMD EPYC Zen 3; docs/performance.md):
/// * E4M3, E2M3 and E3M2 to BF16 (BF16 words with the scale in the exponent field: 1.37×,
///   1.22×, 1.22×) and E2M1 to BF16 and f32 (one row of byte planes per block: 1.73×,
///   1.28×);
/// * the E2M1 quantizations under both rules (block maxima by one transposing reduction,
///   a block's codes finished in bytes: 1.31× `Ceil`, 1.36× `Ocp`).
///
/// E5M2 to BF16 keeps the `code << 8` F16 kernel here (the generic one ran at 0.45–0.7 of
/// it), the MXFP8 quantizations keep theirs (the generic ones ran at 0.90–0.94), and the F16
/// destinations, E4M3/E2M3/E3M2 to f32 and the MXFP6 quantizations keep theirs (not
/// measured).
pub(crate) const fn set(t: &mut BlockKernels) {
    use DestKind::{Bf16, F16 as ToHalf, F32 as ToSingle};
    put_dequant::<F8E4M3, ToF32>(t, ToSingle);
    put_dequant::<F8E4M3, ToF16>(t, ToHalf);
    put_dequant::<F8E5M2, ToF32>(t, ToSingle);
    put_dequant::<F8E5M2, ToBf16>(t, Bf16);
    put_dequant::<F8E5M2, ToF16>(t, ToHalf);
    put_dequant::<F6E2M3, ToF32>(t, ToSingle);
    put_dequant::<F6E2M3, ToF16>(t, ToHalf);
    put_dequant::<F6E3M2, ToF32>(t, ToSingle);
    put_dequant::<F6E3M2, ToF16>(t, ToHalf);
    put_dequant::<F4E2M1, ToF16>(t, ToHalf);
    put_quant::<false>(t);
    put_quant::<true>(t);
    t.fp8_dequant = [
        Some(fp8_dequant_row::<ToF32> as Fp8DequantFn),
        Some(fp8_dequant_row::<ToBf16>),
        Some(fp8_dequant_row::<ToF16>),
    ];
    set_fp8_dequant_f32(t);
    t.amax = [
        Some(amax_u32 as AmaxFn),
        Some(amax_u16 as AmaxFn),
        Some(amax_u16 as AmaxFn),
    ];
    t.products = Some(products_avx2 as ProductsFn);
    t.lookup[Bf16 as usize] = Some(lookup16 as LookupFn);
    t.lookup[ToHalf as usize] = Some(lookup16 as LookupFn);
    // F4E2M1 (fused slot 6): two `VPSHUFB` per 32 codes beat the fused kernel, 17–18.5
    // against 9.8 el/ns to BF16; F8E3M4 (slot 7): the table's loop, 4.9–5.1 against 2.2
    // (docs/performance.md, "`dequantize_scaled` with any scale").
    t.table_first[6] = true;
    t.table_first[7] = true;
}

/// Sets the block FP8 dequantization to f32 of this file: the AVX-512 tiers' override of
/// that slot too (`block_tables.rs`).
pub(crate) const fn set_fp8_dequant_f32(t: &mut BlockKernels) {
    t.fp8_dequant[0] = Some(fp8_dequant_row::<ToF32> as Fp8DequantFn);
}

// The element codes' constants agree with the formats (checked at compile time).
const _: () = {
    assert!(<F4E2M1 as Format>::BITS == 4 && <F6E2M3 as Format>::BITS == 6);
    assert!(MxElement::E2M1 as usize == 4 && MxElement::E4M3 as usize == 0);
};
