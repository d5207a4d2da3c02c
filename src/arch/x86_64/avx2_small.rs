//! AVX2 kernels for the formats added after the first four: fnuz fp8 ([`F8E4M3FNUZ`],
//! [`F8E5M2FNUZ`]), fp6 ([`F6E2M3`], [`F6E3M2`]), fp4 ([`F4E2M1`], and packed two per byte
//! in [`F4E2M1x2`]) and E8M0 ([`F8E8M0`]), to and from f32 and f64: the ones in the `Avx2`
//! override list (`arch/x86_64/tables.rs`). The f32 → fnuz, fp6, fp4 and packed FP4
//! narrowings and the fp6 → f32 widenings are the generic kernels, which measured as fast;
//! the f32 rounding core below ([`f32_codes16`]) still serves the block kernels of
//! `avx2_block`.
//!
//! The same rules as in the `avx2` module hold: every kernel gives exactly the scalar
//! codec's bits ([`crate::codec`], [`F8E8M0`]'s own codec, the packed layout of
//! `arch::scalar`) whatever MXCSR holds, rounding instructions take their rounding mode from
//! an immediate, and every other floating-point instruction used here is exact for the
//! operands it gets (each use says why). Everything else is integer arithmetic. One kernel
//! family is written against the [`Format`] constants for fnuz, fp6 and fp4; E8M0 has its
//! own.
//!
//! # Narrowing f32 to fnuz, fp6, fp4
//!
//! The rounding is the two-candidate method of the `avx2` module ("F8E4M3, F8E5M2, any
//! other rounding mode"), which only depends on `MAN_BITS` and `BIAS`:
//!
//! * the *normal candidate* `((a - (e0 << 23) + half - 1 + lsb) >> s) + (1 << MAN_BITS)`
//!   with `s = 23 - MAN_BITS` and `e0` the f32 exponent field of the target's smallest
//!   normal 2^emin. Below 2^emin the subtraction wraps to at least `2^32 - 2^30` (as
//!   `e0 <= 127` for every bias here, `BIAS >= 1`), which is at least
//!   `3 · 2^(30 - s) >= 768` after the shift (`s <= 22`), above every code of these
//!   formats (MAX is at most 0x7F), except within half a quantum of 2^emin, where the
//!   candidate is the smallest normal code, the right answer there. Every candidate is below
//!   `2^(32 - s) + 2^MAN_BITS <= 2^12 + 8`, so the signed packs to 16 bits keep it;
//! * the *subnormal candidate* `VCVTPS2PH(|x| · 2^(BIAS + MAN_BITS - 25))` (immediate 0:
//!   round to nearest even), the number of target subnormal quanta rounded once (the
//!   target's subnormal codes, below 2^MAN_BITS <= 8, are F16 subnormals, so the count is
//!   exact in F16); at or above 2^emin it is at least the true code. The product is exact
//!   when it is at least 2^-126, and otherwise the true result is 0, which rounding,
//!   FTZ or a DAZ-zeroed input also give.
//!
//! Their unsigned minimum is the rounded magnitude code, or a code above MAX for overflow,
//! ±Inf (normal candidate above MAX, F16 candidate `0x7C00`) and NaN (both above MAX, the
//! F16 one a NaN). Only the finishing step differs from the OCP fp8 kernels, whose
//! assumptions (sign in bit 7, `OVERFLOW_NONSAT == MAX + 1` with a signed overflow code,
//! NaN codes at least that limit) do not hold here ([`finish16`], [`finish32`]):
//!
//! * **fp6, fp4** (no NaN, no Inf): the magnitude is `min(code, MAX)` under both overflow
//!   policies, so overflow, ±Inf and NaN give MAX; the sign, taken from the source's sign
//!   bit, is ORed in at bit `BITS - 1`. That is also the codec's NaN result (±MAX with the
//!   NaN's sign) under every NaN policy, so these kernels serve every policy.
//! * **fnuz**: the magnitude is `min(code, limit)` with `limit = MAX` (`Saturate`) or
//!   `0x80` (`NonSaturating`: overflow and ±Inf give the unsigned NaN code `0x80`, which is
//!   `MAX + 1` with the sign bit's position); NaN lanes (F16 candidate above `0x7C00`) are
//!   raised to `0x80` with an unsigned maximum. The sign bit is kept only where the
//!   magnitude is not zero: `sign & (mag + 0x7F)` keeps bit 7 exactly for `1 <= mag <= 0x80`
//!   (so a result that rounds to zero is `+0`, and `0x80 | sign` is `0x80`). NaN sources
//!   give `0x80`, the `Preserve` (and `Canonical`) result; `ToMax` is patched by the
//!   dispatcher.
//!
//! # Narrowing f64 to fnuz, fp6, fp4
//!
//! Each f64 is compressed to its high word with a sticky bit (`avx2::load_f64x8`, argued
//! in the `avx2` module docs: rounding the compressed word once equals rounding the f64
//! once), rounded by `avx2::round_mag` in 32-bit lanes, then finished as above.
//!
//! # Packed FP4
//!
//! Narrowing converts values to FP4 codes as above, then joins each pair of code bytes into
//! one byte with `VPMADDUBSW` (weights 1 and 16: `lo + 16 · hi`, at most 255, so nothing
//! saturates). Widening splits each byte into its two nibbles (`b & 0xF`, `(b >> 4) & 0xF`)
//! and interleaves them with `VPUNPCKLBW`, which yields the codes in element order. Kernels
//! work on pairs of values; an odd last value goes through a stack buffer on its own (its
//! missing partner is a zero source, code `+0`, as the format's length rule wants).
//!
//! # Widening fp6, fp4
//!
//! Table lookup, 32 codes at a time ([`lut_f32x32`]): every fp6/fp4 value has at most 4
//! significant bits, so its f32 bits are zero below bit 16, and bytes 3 and 2 come from
//! `VPSHUFB` tables computed at compile time from the format's constants. fp4 indexes its
//! 16-entry tables with the whole code (`c & 0xF`, which also drops the byte's unused high
//! bits); fp6 indexes two 16-entry tables per byte with the low 4 magnitude bits, picks
//! one with `VPBLENDVB` on magnitude bit 4, and ORs in the sign (bit 5; bits 6 and 7 are
//! never read). Two rounds of in-lane unpacks with zero bytes build the f32 bits. No
//! floating-point instruction is involved.
//!
//! # Widening fnuz
//!
//! Every fnuz value is exactly an F16 value times a power of two, built from the code in
//! 16-bit lanes, 16 codes at a time ([`f16_codes16`]):
//!
//! * **E4M3FNUZ** (4 exponent bits; the method is written for any format with at most 4):
//!   `(c << (16 - BITS))` puts the sign at bit 15 (and would drop the unused high bits of
//!   a narrower format's byte); an arithmetic shift right by `5 - EXP_BITS` then moves the
//!   exponent and fraction to the bottom of the F16 exponent and the top of the F16
//!   fraction, and the copies of the sign between them are cleared. Read as F16 this is the
//!   value times 2^(BIAS - 15), for normal and subnormal codes alike (a subnormal code's
//!   fraction lands on an F16 subnormal with the same scale). `VCVTPH2PS` widens it exactly
//!   (it ignores MXCSR) and `VMULPS` by 2^(15 - BIAS) restores the value: its inputs are
//!   normal or zero, the product is exact (a power-of-two factor) and normal (the smallest
//!   value is 2^-10), so no rounding mode, FTZ or DAZ can change it.
//! * **E5M2FNUZ** (5 exponent bits, bias 16): its exponent field 31 is finite, so the E5M2
//!   trick (`c << 8` is an F16 code) would give Inf/NaN; instead the F16 code of the value
//!   itself, which exists for every code (57344 and 2^-17 are F16 values), is halved in
//!   the integer domain: with `m = mag << 8` (the F16 code of twice the value), the F16
//!   code of the value is `m - 0x400` when that exponent stays normal (field >= 2) and
//!   `m >> 1` otherwise (exponent field 0 or 1 becomes an F16 subnormal with the fraction
//!   shifted once; the bit shifted out is zero). The larger of the two (signed 16-bit) is
//!   always the right one, see [`f16_codes16`].
//!
//! The fnuz NaN `0x80` gives the F16 code `0x8000` (−0) above; it becomes the F16 quiet
//! NaN `0xFE00`, which widens to `0xFFC00000`, the codec's result, and passes `VMULPS`
//! unchanged (a quiet NaN operand is returned as is).
//!
//! # E8M0
//!
//! * **Narrowing f32** (8 per vector, 32-bit lanes): for a normal positive `x` the code is
//!   `(x + 0x400000) >> 23`, the exponent plus one when the fraction is at least one half
//!   (ties up, the carry moving into the exponent); for an f32 subnormal it is `x >=
//!   0x600000` (nearest of 2^-127 and 2^-126, tie up), which the same formula gives with
//!   `0x200000` instead of `0x400000`, so the addend is lowered by `0x200000` in lanes below
//!   `0x800000`. Lanes whose source is zero, negative, ±Inf or NaN (`x <= 0` or
//!   `x >= 0x7F800000` as a signed integer) are ORed with 0xFF. Codes above 254 (overflow
//!   gives 255, and a flagged lane at most 0x1FF) are turned into 0xFF by the unsigned
//!   saturating pack to bytes: that is the `NonSaturating` result; `Saturate` first clamps
//!   the unflagged code to 0xFE. NaN gives 0xFF (`Preserve`); `ToMax` is patched by the
//!   dispatcher.
//! * **Narrowing f64** is the generic kernel's (`simd/generic`), which measured as fast.
//! * **Widening**: `c << 23` is the f32 of code `c` for `1..=254`; code 0 (2^-127, the f32
//!   subnormal `0x00400000`) and code 255 (`0x7F800000` after the shift) also get bit 22
//!   set, giving 2^-127 and the quiet NaN `0x7FC00000`. The large steps build bytes 3
//!   (`c >> 1`) and 2 (`(c & 1) << 7`, plus `0x40` for codes 0 and 255) of 32 codes at
//!   once and assemble them like the fp6/fp4 tables' outputs; the small steps work in
//!   32-bit lanes (`c << 23`, an unsigned maximum with `0x00400000` for code 0, bit 22
//!   ORed in where the result is `0x7F800000`). To f64, the f32 widening is followed by
//!   `avx2::widen_pd_any`, which is exact for f32 subnormals under DAZ too.
//!
//! # Widening to f64
//!
//! f32 results, then `VCVTPS2PD`: exact, NaN payload kept and quieted. Its only MXCSR
//! dependence is DAZ on f32 subnormal inputs, and only E8M0 (code 0) produces one (handled
//! as said above).
//!
//! # Loops
//!
//! [`drive`] is the `avx2` module's loop (a large step, small steps, an overlapping last
//! small step, a stack buffer for slices shorter than one small step, and an aligning
//! first step for widening), with the small step's length a parameter of the kernel (8
//! values, or 4 or 8 pairs of values for the packed kernels, whose elements are pairs).
//! [`drive_pack`] and [`drive_unpack`] run it over the pairs and convert an odd last value
//! through a stack buffer.
//! No access is made outside the two slices; loads and stores are unaligned.

use core::arch::x86_64::*;
use core::marker::PhantomData;
use core::ptr;

use super::avx2::{
    load_f64x8, pack_bytes8, round_mag, splat, splat16, srl, store_pd8, widen_pd_any,
};
use crate::arch::Kernels;
use crate::codec::{Format, NanKind};
use crate::options::Policy;
use crate::{F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E4M3FNUZ, F8E5M2FNUZ, F8E8M0, F16, Overflow};

// ---------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------

/// Logical right shift of every 16-bit lane by `n` (a constant: folded to `VPSRLW imm`).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn srl16(a: __m256i, n: u32) -> __m256i {
    _mm256_srl_epi16(a, _mm_cvtsi32_si128(n as i32))
}

/// Left shift of every 16-bit lane by `n` (a constant: folded to `VPSLLW imm`).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn sll16(a: __m256i, n: u32) -> __m256i {
    _mm256_sll_epi16(a, _mm_cvtsi32_si128(n as i32))
}

/// Arithmetic right shift of every 16-bit lane by `n` (a constant: folded to `VPSRAW imm`).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn sra16(a: __m256i, n: u32) -> __m256i {
    _mm256_sra_epi16(a, _mm_cvtsi32_si128(n as i32))
}

/// Whether `F` is an fnuz format (else an fp6/fp4 one), checking at compile time that it
/// has the shape this module's kernels assume.
const fn is_fnuz<F: Format>() -> bool {
    match F::NAN {
        // fp6, fp4: no NaN, no Inf, a negative zero; overflow always saturates.
        NanKind::None => {
            assert!(F::NEG_ZERO && !F::HAS_INF && F::OVERFLOW_NONSAT == F::MAX);
            false
        }
        // fnuz: the one unsigned NaN is the sign bit alone, right above MAX, and it is the
        // non-saturating overflow code; no negative zero, no Inf.
        NanKind::Fixed {
            code,
            signed: false,
        } => {
            assert!(!F::NEG_ZERO && !F::HAS_INF && F::SIGNED);
            assert!(code == F::SIGN_BIT && F::MAX == code - 1 && F::OVERFLOW_NONSAT == code);
            true
        }
        _ => panic!("not a format of this module"),
    }
}

/// The magnitude limit of the overflow policy: MAX, or the fnuz NaN under `NonSaturating`.
const fn limit<F: Format, const SAT: bool>() -> u32 {
    if SAT || !is_fnuz::<F>() {
        F::MAX
    } else {
        F::OVERFLOW_NONSAT
    }
}

// ---------------------------------------------------------------------------------------
// Loop driver
// ---------------------------------------------------------------------------------------

/// The two steps of a kernel. An element is one value, or one pair of values for a packed
/// kernel (one packed byte).
trait Steps {
    /// Source bytes per element.
    const S: usize;
    /// Destination bytes per element.
    const D: usize;
    /// Elements per large step.
    const BIG: usize;
    /// Elements per small step.
    const SMALL: usize;
    /// Converts `BIG` elements.
    ///
    /// # Safety
    /// `src` readable for `BIG * S` bytes, `dst` writable for `BIG * D` bytes, and the CPU
    /// has AVX2, FMA and F16C.
    unsafe fn big(src: *const u8, dst: *mut u8);
    /// Converts `SMALL` elements.
    ///
    /// # Safety
    /// `src` readable for `SMALL * S` bytes, `dst` writable for `SMALL * D` bytes, and the
    /// CPU has AVX2, FMA and F16C.
    unsafe fn small(src: *const u8, dst: *mut u8);
}

/// Size of the stack buffers of [`drive`].
const BUF: usize = 128;

/// Runs kernel `K` over `len` elements.
///
/// # Safety
/// `src` readable for `len * K::S` bytes, `dst` writable for `len * K::D` bytes, no overlap,
/// and the CPU has AVX2, FMA and F16C.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn drive<K: Steps>(src: *const u8, dst: *mut u8, len: usize) {
    const { assert!(K::SMALL * K::S <= BUF && K::SMALL * K::D <= BUF && K::SMALL <= K::BIG) };
    let mut i = 0;
    // Widening: as in the avx2 module, one overlapping small step first when the
    // destination is element-aligned but not 32-byte aligned, so that the main loop's
    // 32-byte stores do not straddle cache lines (the step covers at least 32 bytes).
    if K::D >= 4 && K::SMALL * K::D >= 32 && len >= 4 * K::BIG {
        let mis = dst as usize % 32;
        if mis != 0 && mis.is_multiple_of(K::D) {
            // SAFETY: len >= BIG >= SMALL, so elements 0..SMALL are inside the slices.
            unsafe { K::small(src, dst) };
            i = (32 - mis) / K::D;
        }
    }
    while len - i >= K::BIG {
        // SAFETY: elements i..i + BIG are inside the slices (i + BIG <= len).
        unsafe { K::big(src.add(i * K::S), dst.add(i * K::D)) };
        i += K::BIG;
    }
    while len - i >= K::SMALL {
        // SAFETY: elements i..i + SMALL are inside the slices.
        unsafe { K::small(src.add(i * K::S), dst.add(i * K::D)) };
        i += K::SMALL;
    }
    if i == len {
        return;
    }
    if len >= K::SMALL {
        // Overlapping last step: elements len - SMALL..len are inside the slices; the ones
        // already written are rewritten with the same values.
        let j = len - K::SMALL;
        // SAFETY: as stated, j + SMALL == len.
        unsafe { K::small(src.add(j * K::S), dst.add(j * K::D)) };
    } else {
        // Fewer than SMALL elements: convert through stack buffers (zeros pad the source).
        let mut sbuf = [0u8; BUF];
        let mut dbuf = [0u8; BUF];
        // SAFETY: len < SMALL elements fit in both buffers (asserted above); the slices
        // hold len elements; buffers and slices are distinct.
        unsafe {
            ptr::copy_nonoverlapping(src, sbuf.as_mut_ptr(), len * K::S);
            K::small(sbuf.as_ptr(), dbuf.as_mut_ptr());
            ptr::copy_nonoverlapping(dbuf.as_ptr(), dst, len * K::D);
        }
    }
}

/// Runs a packed narrowing kernel `K` (elements: pairs of `W`-byte values in, one byte out)
/// over `len` values: `len / 2` pairs, then an odd last value paired with a zero source.
///
/// # Safety
/// `src` readable for `len * W` bytes, `dst` writable for `len.div_ceil(2)` bytes, no
/// overlap, and the CPU has AVX2, FMA and F16C.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn drive_pack<K: Steps, const W: usize>(src: *const u8, dst: *mut u8, len: usize) {
    const { assert!(K::S == 2 * W && K::D == 1 && W <= 8) };
    // SAFETY: len / 2 pairs are 2 * (len / 2) <= len source values and len / 2 bytes.
    unsafe { drive::<K>(src, dst, len / 2) };
    if len % 2 == 1 {
        // The last value and a zero (code +0, the format's filler for the spare nibble).
        let mut pair = [0u8; 16];
        let mut out = 0u8;
        // SAFETY: value len - 1 is W readable bytes at (len - 1) * W; the pair buffer holds
        // 2 * W <= 16 bytes; one pair converts to one byte, written to byte len / 2, the
        // last of the len.div_ceil(2) destination bytes.
        unsafe {
            ptr::copy_nonoverlapping(src.add((len - 1) * W), pair.as_mut_ptr(), W);
            drive::<K>(pair.as_ptr(), &mut out, 1);
            dst.add(len / 2).write(out);
        }
    }
}

/// Runs a packed widening kernel `K` (elements: one byte in, a pair of `W`-byte values
/// out) over `len` values: `len / 2` pairs, then an odd last value from the low nibble of
/// the last byte.
///
/// # Safety
/// `src` readable for `len.div_ceil(2)` bytes, `dst` writable for `len * W` bytes, no
/// overlap, and the CPU has AVX2, FMA and F16C.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn drive_unpack<K: Steps, const W: usize>(src: *const u8, dst: *mut u8, len: usize) {
    const { assert!(K::S == 1 && K::D == 2 * W && W <= 8) };
    // SAFETY: len / 2 bytes and 2 * (len / 2) <= len values.
    unsafe { drive::<K>(src, dst, len / 2) };
    if len % 2 == 1 {
        let mut pair = [0u8; 16];
        // SAFETY: byte len / 2 is the last of the len.div_ceil(2) source bytes; it widens
        // to two values (2 * W <= 16 bytes) in the buffer, and the first (its low nibble)
        // is value len - 1, whose W bytes are the last of the destination.
        unsafe {
            drive::<K>(src.add(len / 2), pair.as_mut_ptr(), 1);
            ptr::copy_nonoverlapping(pair.as_ptr(), dst.add((len - 1) * W), W);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Narrowing: fnuz, fp6, fp4
// ---------------------------------------------------------------------------------------

/// Finishes 16 rounded magnitude codes `code` (16-bit lanes) of `F`: overflow policy, NaN
/// and sign (see the module docs). `sub` is the F16 subnormal candidate (a NaN there marks
/// a NaN source) and `signs` holds each source's sign in bit 15, all in the same lanes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn finish16<F: Format, const SAT: bool>(code: __m256i, sub: __m256i, signs: __m256i) -> __m256i {
    let fnuz = const { is_fnuz::<F>() };
    let mut mag = _mm256_min_epu16(code, splat16(limit::<F, SAT>() as u16));
    // Bit 15 moves to the format's sign bit, BITS - 1.
    let mut sign = _mm256_and_si256(srl16(signs, 16 - F::BITS), splat16(F::SIGN_BIT as u16));
    if fnuz {
        // NaN lanes: F16 candidate above Inf (0x7C00; the candidate is a magnitude, so the
        // signed compare is unsigned here). 0x80 is above every other magnitude.
        let is_nan = _mm256_cmpgt_epi16(sub, splat16(0x7C00));
        mag = _mm256_max_epu16(mag, _mm256_and_si256(is_nan, splat16(F::SIGN_BIT as u16)));
        // mag + 0x7F has bit 7 set exactly for 1 <= mag <= 0x80: no sign on a zero.
        sign = _mm256_and_si256(
            sign,
            _mm256_add_epi16(mag, splat16((F::SIGN_BIT - 1) as u16)),
        );
    }
    _mm256_or_si256(mag, sign)
}

/// Codes of `F` (fnuz, fp6, fp4) of 16 f32 (bit patterns in `x0`, `x1`), in 16-bit lanes
/// in the order of `VPACKUSDW(x0, x1)`: `[x0 0-3, x1 0-3 | x0 4-7, x1 4-7]`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn f32_codes16<F: Format, const SAT: bool>(x0: __m256i, x1: __m256i) -> __m256i {
    let abs = splat(0x7FFF_FFFF);
    let (a0, a1) = (_mm256_and_si256(x0, abs), _mm256_and_si256(x1, abs));
    // Normal candidate (module docs): re-biased so that 2^emin has exponent field 0,
    // rounded to nearest even at bit s, plus the implicit bit.
    let s = 23 - F::MAN_BITS;
    let e0 = (127 + 1 - F::BIAS) as u32;
    let bias = ((1u32 << (s - 1)) - 1).wrapping_sub(e0 << 23);
    let normal = |a: __m256i| {
        // (a - (e0 << 23)) has the same low s bits as a, so the kept lsb is (a >> s) & 1.
        let lsb = _mm256_and_si256(srl(a, s), splat(1));
        let r = srl(_mm256_add_epi32(_mm256_add_epi32(a, splat(bias)), lsb), s);
        _mm256_add_epi32(r, splat(1 << F::MAN_BITS))
    };
    // Candidates are below 2^(32 - s) + 2^MAN_BITS <= 2^12 + 8: the pack keeps them.
    let n = _mm256_packus_epi32(normal(a0), normal(a1));
    // Subnormal candidate: |x| * 2^(BIAS + MAN_BITS - 25) puts the target's subnormal
    // quantum on the F16 one (2^-24); VCVTPS2PH with immediate 0 rounds to nearest even.
    // The product is exact when at least 2^-126; otherwise (or flushed by FTZ/DAZ) the
    // true result is 0, as is the F16 code.
    let scale = _mm256_set1_ps(f32::from_bits(
        ((127 + F::BIAS + F::MAN_BITS as i32 - 25) as u32) << 23,
    ));
    let h0 = _mm256_cvtps_ph::<0>(_mm256_mul_ps(_mm256_castsi256_ps(a0), scale));
    let h1 = _mm256_cvtps_ph::<0>(_mm256_mul_ps(_mm256_castsi256_ps(a1), scale));
    // [h0 | h1] in 64-bit groups 0, 2, 1, 3 is the VPACKUSDW order.
    let sub = _mm256_permute4x64_epi64::<0xD8>(_mm256_set_m128i(h1, h0));
    let code = _mm256_min_epu16(n, sub);
    // The signed-saturating pack keeps each f32's sign in bit 15.
    finish16::<F, SAT>(code, sub, _mm256_packs_epi32(x0, x1))
}

/// Code bytes (each below 256, as 16-bit lanes in `VPACKUSDW` order) of four vectors to 32
/// bytes in element order.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn order_bytes(w01: __m256i, w23: __m256i) -> __m256i {
    // VPACKUSWB gives 32-bit groups [0-3, 8-11, 16-19, 24-27 | 4-7, 12-15, 20-23, 28-31].
    _mm256_permutevar8x32_epi32(
        _mm256_packus_epi16(w01, w23),
        _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7),
    )
}

/// Joins 32 FP4 code bytes (each below 16, in order) pairwise: word `i` is
/// `code[2i] | code[2i + 1] << 4` (`VPMADDUBSW` with weights 1 and 16; at most 255).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn pair_nibbles(b: __m256i) -> __m256i {
    _mm256_maddubs_epi16(b, splat16(0x1001))
}

// ---------------------------------------------------------------------------------------
// Narrowing: 8 codes at a time in 32-bit lanes (f64 sources, E8M0)
// ---------------------------------------------------------------------------------------

/// A narrowing to bytes that computes 8 codes in 32-bit lanes.
trait Codes8 {
    /// Source bytes per value.
    const S: usize;
    /// 8 codes of the values at `src`, in 32-bit lanes in element order. A lane above 255
    /// means 255 (the unsigned saturating packs to bytes make it so); none exceeds 0xFFFF.
    ///
    /// # Safety
    /// `src` readable for `8 * S` bytes; AVX2, FMA and F16C present.
    unsafe fn codes8(src: *const u8) -> __m256i;
}

/// Runs a [`Codes8`] narrowing: 32 values per large step, 8 per small one.
struct ByDwords<C>(PhantomData<C>);

/// 32 codes (four vectors of [`Codes8::codes8`]) to 32 bytes in order.
///
/// # Safety
/// `src` readable for `32 * C::S` bytes; AVX2, FMA and F16C present.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn codes32<C: Codes8>(src: *const u8) -> __m256i {
    // SAFETY: four groups of 8 values inside the 32.
    let [c0, c1, c2, c3] = unsafe {
        [
            C::codes8(src),
            C::codes8(src.add(8 * C::S)),
            C::codes8(src.add(16 * C::S)),
            C::codes8(src.add(24 * C::S)),
        ]
    };
    // Lanes are at most 0xFFFF, so VPACKUSDW keeps them; its order is VPACKUSDW's.
    order_bytes(_mm256_packus_epi32(c0, c1), _mm256_packus_epi32(c2, c3))
}

impl<C: Codes8> Steps for ByDwords<C> {
    const S: usize = C::S;
    const D: usize = 1;
    const BIG: usize = 32;
    const SMALL: usize = 8;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        // SAFETY: 32 values readable at src, 32 bytes writable at dst.
        unsafe { _mm256_storeu_si256(dst.cast(), codes32::<C>(src)) };
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 values readable at src; 8 bytes writable at dst (MOVQ stores 8).
        unsafe { _mm_storel_epi64(dst.cast(), pack_bytes8(C::codes8(src))) };
    }
}

/// f64 → fnuz, fp6 or fp4 codes.
struct F64Small<F, const SAT: bool>(PhantomData<F>);

impl<F: Format, const SAT: bool> Codes8 for F64Small<F, SAT> {
    const S: usize = 8;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn codes8(src: *const u8) -> __m256i {
        // SAFETY: 64 bytes readable at src.
        let (hi, a) = unsafe { load_f64x8(src) };
        let r = finish32::<F, SAT>(round_mag::<F, 20, 1023>(a), a, hi);
        // Undo load_f64x8's lane order [0,1,4,5,2,3,6,7]: 64-bit groups 0, 2, 1, 3.
        _mm256_permute4x64_epi64::<0xD8>(r)
    }
}

/// [`finish16`] in 32-bit lanes for f64 sources: `mag` from `round_mag`, `a` the
/// compressed magnitude (NaN iff above `0x7FF00000`), `hi` the high word (sign in bit 31).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn finish32<F: Format, const SAT: bool>(mag: __m256i, a: __m256i, hi: __m256i) -> __m256i {
    let fnuz = const { is_fnuz::<F>() };
    // round_mag's results stay below 2^14 (argued in the avx2 module), so the unsigned
    // minimum sees overflow, Inf and NaN as above MAX.
    let mut mag = _mm256_min_epu32(mag, splat(limit::<F, SAT>()));
    let mut sign = _mm256_and_si256(srl(hi, 32 - F::BITS), splat(F::SIGN_BIT));
    if fnuz {
        let is_nan = _mm256_cmpgt_epi32(a, splat(0x7FF0_0000));
        mag = _mm256_max_epu32(mag, _mm256_and_si256(is_nan, splat(F::SIGN_BIT)));
        // As in finish16: no sign on a zero magnitude.
        sign = _mm256_and_si256(sign, _mm256_add_epi32(mag, splat(F::SIGN_BIT - 1)));
    }
    _mm256_or_si256(mag, sign)
}

/// f64 → packed FP4; an element is a pair of values (16 bytes in, 1 byte out).
struct F64ToPacked;

impl Steps for F64ToPacked {
    const S: usize = 16;
    const D: usize = 1;
    const BIG: usize = 16;
    const SMALL: usize = 4;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        // SAFETY: 32 f64 readable at src.
        let b = unsafe { codes32::<F64Small<F4E2M1, true>>(src) };
        // 16 words in order; VPACKUSWB puts bytes 0-7 in 64-bit group 0 and 8-15 in
        // group 2.
        let p = pair_nibbles(b);
        let p = _mm256_permute4x64_epi64::<0x08>(_mm256_packus_epi16(p, p));
        // SAFETY: 16 bytes writable at dst.
        unsafe { _mm_storeu_si128(dst.cast(), _mm256_castsi256_si128(p)) };
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 f64 readable at src.
        let c = unsafe { F64Small::<F4E2M1, true>::codes8(src) };
        // Each 64-bit lane holds two codes (below 16) in its two dwords: shifting the
        // high one down by 28 puts it at bits 4-7 of the low dword.
        let q = _mm256_or_si256(c, _mm256_srli_epi64::<28>(c));
        // The low dwords (0, 2, 4, 6) hold the 4 bytes (each at most 0xFF); the high ones
        // (a lone code) land in bytes that are not stored.
        let q = _mm256_permutevar8x32_epi32(q, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
        let b = pack_bytes8(q);
        // SAFETY: 4 bytes writable at dst.
        unsafe { dst.cast::<i32>().write_unaligned(_mm_cvtsi128_si32(b)) };
    }
}

// ---------------------------------------------------------------------------------------
// Narrowing: E8M0
// ---------------------------------------------------------------------------------------

/// f32 → E8M0 codes.
struct F32E8M0<const SAT: bool>;

impl<const SAT: bool> Codes8 for F32E8M0<SAT> {
    const S: usize = 4;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn codes8(src: *const u8) -> __m256i {
        // SAFETY: 32 bytes readable at src.
        let x = unsafe { _mm256_loadu_si256(src.cast()) };
        e8m0_codes8::<SAT, true>(x)
    }
}

/// The E8M0 codes of 8 f32 (bits `x`), in 32-bit lanes (a lane above 255 means 255). With
/// `F32_SUB` false the caller guarantees that no lane is an f32 subnormal (values widened
/// from F16 are not), which saves their addend.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn e8m0_codes8<const SAT: bool, const F32_SUB: bool>(x: __m256i) -> __m256i {
    // Addend 0x400000 (ties up at the fraction's half), 0x200000 for the f32 subnormals
    // (and lanes that are flagged below anyway): `x < 0x800000` signed.
    let add = if F32_SUB {
        let tiny = _mm256_cmpgt_epi32(splat(0x0080_0000), x);
        _mm256_sub_epi32(
            splat(0x0040_0000),
            _mm256_and_si256(tiny, splat(0x0020_0000)),
        )
    } else {
        splat(0x0040_0000)
    };
    // Logical shift: at most 0x1FF, whatever x is.
    let mut c = srl(_mm256_add_epi32(x, add), 23);
    if SAT {
        // A finite positive source gives at most 255 (overflow); clamp it to MAX.
        c = _mm256_min_epu32(c, splat(0xFE));
    }
    // Zero, negative, ±Inf, NaN: x <= 0 or x >= 0x7F800000 as signed integers.
    let bad = _mm256_or_si256(
        _mm256_cmpgt_epi32(splat(1), x),
        _mm256_cmpgt_epi32(x, splat(0x7F7F_FFFF)),
    );
    // 0xFF, or above it (saturated to 0xFF by the byte pack).
    _mm256_or_si256(c, _mm256_and_si256(bad, splat(0xFF)))
}

/// F16 → E8M0 codes in one pass: `VCVTPH2PS` (exact, MXCSR-independent: DAZ does not apply
/// to its half-precision inputs), then the f32 → E8M0 rounding of [`e8m0_codes8`]. An F16
/// subnormal widens to a normal f32, so the subnormal addend is never needed.
struct F16E8M0<const SAT: bool>;

impl<const SAT: bool> Codes8 for F16E8M0<SAT> {
    const S: usize = 2;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn codes8(src: *const u8) -> __m256i {
        // SAFETY: 16 bytes readable at src.
        let h = unsafe { _mm_loadu_si128(src.cast()) };
        e8m0_codes8::<SAT, false>(_mm256_castps_si256(_mm256_cvtph_ps(h)))
    }
}

// ---------------------------------------------------------------------------------------
// Widening
// ---------------------------------------------------------------------------------------

/// F16 codes (16-bit lanes) of 16 codes of `F` (fnuz, fp6, fp4; bytes of `c`, high unused
/// bits ignored): the value times 2^(BIAS - 15), or for E5M2FNUZ the value itself; the
/// fnuz NaN becomes the F16 NaN `0xFE00` (module docs).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn f16_codes16<F: Format>(c: __m128i) -> __m256i {
    let fnuz = const { is_fnuz::<F>() };
    // The only 5-exponent-bit format here is E5M2FNUZ (the branch below is written for it).
    const { assert!(F::EXP_BITS <= 4 || (F::EXP_BITS == 5 && F::MAN_BITS == 2 && F::BIAS == 16)) };
    let w = _mm256_cvtepu8_epi16(c);
    // Sign to bit 15, magnitude right below it; bits above the format's width fall out.
    let t = sll16(w, 16 - F::BITS);
    let h = if F::EXP_BITS <= 4 {
        // Exponent to the bottom of the F16 exponent field, fraction to the top of the F16
        // fraction; the arithmetic shift copies the sign into the bits in between, which
        // the mask clears.
        let k = 5 - F::EXP_BITS;
        _mm256_and_si256(sra16(t, k), splat16(0x8000 | (0x7FFF >> k)))
    } else {
        // m = F16 code of twice the value (the E5M2 layout). The value's F16 code is
        // m - 0x400 for exponent fields 2..=31 (m >= 0x800, so m - 0x400 >= m / 2), and
        // m >> 1 for fields 0 and 1 (m < 0x800, so m - 0x400 < m / 2, possibly negative):
        // the signed maximum picks the right one.
        let m = _mm256_and_si256(t, splat16(0x7F00));
        let v = _mm256_max_epi16(srl16(m, 1), _mm256_sub_epi16(m, splat16(0x400)));
        _mm256_or_si256(v, _mm256_and_si256(t, splat16(0x8000)))
    };
    if fnuz {
        // 0x80 gave 0x8000 (-0): make it the F16 quiet NaN 0xFE00.
        let is_nan = _mm256_cmpeq_epi16(h, splat16(0x8000));
        _mm256_or_si256(h, _mm256_and_si256(is_nan, splat16(0x7E00)))
    } else {
        h
    }
}

/// 8 F16 codes from [`f16_codes16`] to the f32 values of `F`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn f16_to_value<F: Format>(h: __m128i) -> __m256 {
    // VCVTPH2PS is exact and ignores MXCSR.
    let f = _mm256_cvtph_ps(h);
    if F::EXP_BITS <= 4 {
        // Times 2^(15 - BIAS): exact (power of two), normal inputs and results (module
        // docs), and a NaN passes unchanged.
        _mm256_mul_ps(
            f,
            _mm256_set1_ps(f32::from_bits(((127 + 15 - F::BIAS) as u32) << 23)),
        )
    } else {
        f
    }
}

/// A narrow format that widens 8 or 16 codes (bytes) to f32 at a time.
trait WidenCodes {
    /// Whether some code widens to an f32 subnormal (then f64 needs `widen_pd_any`).
    const F32_SUBNORMAL: bool;
    /// The 16 codes (bytes) of `c` widened to f32, in order.
    ///
    /// # Safety
    /// AVX2, FMA and F16C present.
    unsafe fn f32x16(c: __m128i) -> [__m256; 2];
    /// The 8 codes in the low 8 bytes of `c` widened to f32, in order.
    ///
    /// # Safety
    /// AVX2, FMA and F16C present.
    unsafe fn f32x8(c: __m128i) -> __m256;
    /// The 32 codes (bytes) of `c` widened to f32, in order (the large steps' unit).
    ///
    /// # Safety
    /// AVX2, FMA and F16C present.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn f32x32(c: __m256i) -> [__m256; 4] {
        // SAFETY: the features are the caller's.
        let ([f0, f1], [f2, f3]) = unsafe {
            (
                Self::f32x16(_mm256_castsi256_si128(c)),
                Self::f32x16(_mm256_extracti128_si256::<1>(c)),
            )
        };
        [f0, f1, f2, f3]
    }
}

/// The [`WidenCodes`] of an fnuz, fp6 or fp4 format, by way of F16 codes.
macro_rules! widen_via_f16 {
    ($($f:ty),*) => {$(
        impl WidenCodes for $f {
            const F32_SUBNORMAL: bool = false;

            #[inline]
            #[target_feature(enable = "avx2,fma,f16c")]
            unsafe fn f32x16(c: __m128i) -> [__m256; 2] {
                let h = f16_codes16::<$f>(c);
                [
                    f16_to_value::<$f>(_mm256_castsi256_si128(h)),
                    f16_to_value::<$f>(_mm256_extracti128_si256::<1>(h)),
                ]
            }

            #[inline]
            #[target_feature(enable = "avx2,fma,f16c")]
            unsafe fn f32x8(c: __m128i) -> __m256 {
                f16_to_value::<$f>(_mm256_castsi256_si128(f16_codes16::<$f>(c)))
            }
        }
    )*};
}

widen_via_f16!(F8E4M3FNUZ, F8E5M2FNUZ);

/// The f32 bits of magnitude code `m` of `F` (fp6, fp4), for the widening tables: the
/// definition of an IEEE-like code (a subnormal code is normalised on its leading one).
const fn f32_of_mag<F: Format>(m: u32) -> u32 {
    let (e, f) = (m >> F::MAN_BITS, m & ((1 << F::MAN_BITS) - 1));
    if e == 0 {
        if f == 0 {
            return 0;
        }
        // f * 2^(1 - BIAS - MAN_BITS) with f's leading one at bit p.
        let p = 31 - f.leading_zeros();
        let e32 = (p as i32 + 1 - F::BIAS - F::MAN_BITS as i32 + 127) as u32;
        (e32 << 23) | ((f << (23 - p)) & 0x007F_FFFF)
    } else {
        (((e as i32 - F::BIAS + 127) as u32) << 23) | (f << (23 - F::MAN_BITS))
    }
}

/// A `VPSHUFB` table: byte `byte` (2 or 3) of the f32 bits of codes `16 * half..16 * half +
/// 16` of `F`. For fp4 the index is the whole code (sign included); for fp6 it is the
/// magnitude (the sign is ORed in separately).
const fn widen_table<F: Format>(byte: u32, half: u32) -> [u8; 16] {
    let mut t = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        let code = 16 * half + i;
        let bits = if F::BITS == 4 {
            f32_of_mag::<F>(code & F::MAG_MASK) | ((code >> 3) << 31)
        } else {
            f32_of_mag::<F>(code)
        };
        // Every value has at most 4 significant bits: the low 16 bits of the f32 are 0.
        assert!(bits & 0xFFFF == 0);
        t[i as usize] = (bits >> (8 * byte)) as u8;
        i += 1;
    }
    t
}

/// A 16-byte table in both 128-bit lanes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn table(t: &[u8; 16]) -> __m256i {
    // SAFETY: reads the 16 bytes of `t`, unaligned.
    _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(t.as_ptr().cast()) })
}

/// 32 codes of fp6 or fp4 `F` (bytes of `c`, in order; unused high bits ignored) to f32, in
/// order, by table lookup: `VPSHUFB` gives bytes 3 and 2 of each result (the other two are
/// zero), and two rounds of in-lane unpacks with zeros build the f32 bits. Integer only.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn lut_f32x32<F: Format>(c: __m256i) -> [__m256; 4] {
    const { assert!(F::BITS == 4 || F::BITS == 6) };
    let c = planes_order(c);
    // The table index: the low 4 bits (bit 7 clear, which VPSHUFB would read as "zero").
    let idx = _mm256_and_si256(c, _mm256_set1_epi8(0x0F));
    let look = |k: u32, half: u32| {
        let t = match (k, half) {
            (3, 0) => const { widen_table::<F>(3, 0) },
            (2, 0) => const { widen_table::<F>(2, 0) },
            (3, _) => const { widen_table::<F>(3, 1) },
            _ => const { widen_table::<F>(2, 1) },
        };
        _mm256_shuffle_epi8(table(&t), idx)
    };
    let (hi, lo) = if F::BITS == 4 {
        (look(3, 0), look(2, 0))
    } else {
        // Magnitude bit 4 moves to bit 7 of its byte, which VPBLENDVB reads (the 16-bit
        // shift also moves bits across bytes, but none into a bit 7).
        let sel = _mm256_slli_epi16::<3>(c);
        let pick = |k| _mm256_blendv_epi8(look(k, 0), look(k, 1), sel);
        // The sign, bit 5, to bit 7 of the top byte.
        let sign = _mm256_and_si256(_mm256_slli_epi16::<2>(c), _mm256_set1_epi8(0x80u8 as i8));
        (_mm256_or_si256(pick(3), sign), pick(2))
    };
    planes_to_f32(lo, hi)
}

/// Arranges 32 code bytes (in order) for [`planes_to_f32`]: 32-bit groups of codes
/// `[0-3, 8-11, 16-19, 24-27 | 4-7, 12-15, 20-23, 28-31]`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn planes_order(c: __m256i) -> __m256i {
    _mm256_permutevar8x32_epi32(c, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7))
}

/// Builds 32 f32 from bytes 2 (`lo`) and 3 (`hi`) of each (bytes 0 and 1 zero), given in
/// the order of [`planes_order`]. The unpacks work within 128-bit lanes: the first gives
/// words `[0-3, 8-11 | 4-7, 12-15]` and `[16-19, 24-27 | 20-23, 28-31]`, the second the f32
/// of codes `[0-3 | 4-7]`, `[8-11 | 12-15]`, `[16-19 | 20-23]`, `[24-27 | 28-31]`: in order.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn planes_to_f32(lo: __m256i, hi: __m256i) -> [__m256; 4] {
    let (w0, w1) = (_mm256_unpacklo_epi8(lo, hi), _mm256_unpackhi_epi8(lo, hi));
    let z = _mm256_setzero_si256();
    let f = |x: __m256i| _mm256_castsi256_ps(x);
    [
        f(_mm256_unpacklo_epi16(z, w0)),
        f(_mm256_unpackhi_epi16(z, w0)),
        f(_mm256_unpacklo_epi16(z, w1)),
        f(_mm256_unpackhi_epi16(z, w1)),
    ]
}

/// The [`WidenCodes`] of an fp6 or fp4 format, by table lookup ([`lut_f32x32`]).
macro_rules! widen_via_table {
    ($($f:ty),*) => {$(
        impl WidenCodes for $f {
            const F32_SUBNORMAL: bool = false;

            #[inline]
            #[target_feature(enable = "avx2,fma,f16c")]
            unsafe fn f32x16(c: __m128i) -> [__m256; 2] {
                let [f0, f1, _, _] = lut_f32x32::<$f>(_mm256_castsi128_si256(c));
                [f0, f1]
            }

            #[inline]
            #[target_feature(enable = "avx2,fma,f16c")]
            unsafe fn f32x8(c: __m128i) -> __m256 {
                lut_f32x32::<$f>(_mm256_castsi128_si256(c))[0]
            }

            #[inline]
            #[target_feature(enable = "avx2,fma,f16c")]
            unsafe fn f32x32(c: __m256i) -> [__m256; 4] {
                lut_f32x32::<$f>(c)
            }
        }
    )*};
}

widen_via_table!(F6E2M3, F6E3M2, F4E2M1);

/// 8 E8M0 codes (32-bit lanes) to f32 bits (module docs).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn e8m0_to_f32x8(c: __m256i) -> __m256 {
    let t = _mm256_slli_epi32::<23>(c);
    // Code 0: 2^-127 = 0x00400000; every other code is at least 0x00800000 here.
    let t = _mm256_max_epu32(t, splat(0x0040_0000));
    // Code 255: 0x7F800000 | 0x00400000 = 0x7FC00000, the quiet NaN.
    let nan = _mm256_cmpeq_epi32(t, splat(0x7F80_0000));
    _mm256_castsi256_ps(_mm256_or_si256(
        t,
        _mm256_and_si256(nan, splat(0x0040_0000)),
    ))
}

impl WidenCodes for F8E8M0 {
    const F32_SUBNORMAL: bool = true;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn f32x16(c: __m128i) -> [__m256; 2] {
        [
            e8m0_to_f32x8(_mm256_cvtepu8_epi32(c)),
            e8m0_to_f32x8(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(c, c))),
        ]
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn f32x8(c: __m128i) -> __m256 {
        e8m0_to_f32x8(_mm256_cvtepu8_epi32(c))
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn f32x32(c: __m256i) -> [__m256; 4] {
        // The same bits as e8m0_to_f32x8, built as bytes 3 and 2 on 32 codes at once (the
        // other two bytes are zero for every code).
        let c = planes_order(c);
        // Byte 3 = c >> 1 (the 16-bit shift moves the next byte's bit 0 into bit 7: masked).
        let hi = _mm256_and_si256(_mm256_srli_epi16::<1>(c), _mm256_set1_epi8(0x7F));
        // Byte 2 bit 7 = c & 1 (the 16-bit shift moves each byte's bit 0 to its own bit 7;
        // the mask drops what it moves across bytes) ...
        let lo = _mm256_and_si256(_mm256_slli_epi16::<7>(c), _mm256_set1_epi8(0x80u8 as i8));
        // ... and bit 6 set for codes 0 (0x00400000 = 2^-127) and 255 (0x7FC00000, NaN).
        let special = _mm256_or_si256(
            _mm256_cmpeq_epi8(c, _mm256_setzero_si256()),
            _mm256_cmpeq_epi8(c, _mm256_set1_epi8(-1)),
        );
        let lo = _mm256_or_si256(lo, _mm256_and_si256(special, _mm256_set1_epi8(0x40)));
        planes_to_f32(lo, hi)
    }
}

/// Stores 8 f32 (as `__m256`) at `dst`, or widened to f64 when `F64` (exactly, for f32
/// subnormals too when `subnormal`, a constant at every call).
///
/// # Safety
/// `dst` writable for 32 bytes (f32) or 64 bytes (f64); AVX2, FMA and F16C present.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn store8<const F64: bool>(dst: *mut u8, f: __m256, subnormal: bool) {
    if !F64 {
        // SAFETY: 32 bytes writable.
        unsafe { _mm256_storeu_ps(dst.cast(), f) };
    } else if !subnormal {
        // SAFETY: 64 bytes writable; VCVTPS2PD is exact for values that are not f32
        // subnormals (the callers' values).
        unsafe { store_pd8(dst, f) };
    } else {
        let x = _mm256_castps_si256(f);
        let lo = widen_pd_any(_mm256_castsi256_si128(x));
        let hi = widen_pd_any(_mm256_extracti128_si256::<1>(x));
        // SAFETY: 64 bytes writable.
        unsafe {
            _mm256_storeu_pd(dst.cast(), lo);
            _mm256_storeu_pd(dst.add(32).cast(), hi);
        }
    }
}

/// A narrow format (one code per byte) → f32 (`F64 == false`) or f64.
struct Widen<F, const F64: bool>(PhantomData<F>);

impl<F: WidenCodes, const F64: bool> Steps for Widen<F, F64> {
    const S: usize = 1;
    const D: usize = if F64 { 8 } else { 4 };
    const BIG: usize = 32;
    const SMALL: usize = 8;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        // SAFETY: 32 codes readable at src, 32 results writable at dst; the four stores
        // cover results 0-7, 8-15, 16-23, 24-31.
        unsafe {
            let f = F::f32x32(_mm256_loadu_si256(src.cast()));
            for (k, fk) in f.into_iter().enumerate() {
                store8::<F64>(dst.add(8 * k * Self::D), fk, F::F32_SUBNORMAL);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 codes readable at src (MOVQ loads exactly 8), 8 results writable.
        unsafe {
            let f = F::f32x8(_mm_loadl_epi64(src.cast()));
            store8::<F64>(dst, f, F::F32_SUBNORMAL);
        }
    }
}

/// Splits packed bytes into FP4 codes in element order: the low 8 bytes of `b` give 16
/// codes (the first result), the high 8 bytes the next 16.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn unpack_nibbles(b: __m128i) -> (__m128i, __m128i) {
    let mask = _mm_set1_epi8(0x0F);
    let lo = _mm_and_si128(b, mask);
    // A 16-bit shift moves bits between bytes; the mask removes them.
    let hi = _mm_and_si128(_mm_srli_epi16::<4>(b), mask);
    // Byte i gives codes 2i (low nibble) and 2i + 1 (high nibble).
    (_mm_unpacklo_epi8(lo, hi), _mm_unpackhi_epi8(lo, hi))
}

/// Packed FP4 → f32 or f64; an element is a pair of values (one byte in).
struct Unpack<const F64: bool>;

impl<const F64: bool> Steps for Unpack<F64> {
    const S: usize = 1;
    const D: usize = if F64 { 16 } else { 8 };
    const BIG: usize = 16;
    const SMALL: usize = 4;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        let w = Self::D / 2;
        // SAFETY: 16 bytes readable at src.
        let (c0, c1) = unpack_nibbles(unsafe { _mm_loadu_si128(src.cast()) });
        // SAFETY: 32 values (16 pairs) writable at dst; the four stores cover values
        // 0-7, 8-15, 16-23, 24-31.
        unsafe {
            let f = F4E2M1::f32x32(_mm256_set_m128i(c1, c0));
            for (k, fk) in f.into_iter().enumerate() {
                store8::<F64>(dst.add(8 * k * w), fk, false);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 4 bytes readable at src.
        let b = _mm_cvtsi32_si128(unsafe { src.cast::<i32>().read_unaligned() });
        let (c, _) = unpack_nibbles(b);
        // SAFETY: 8 values (4 pairs) writable at dst.
        unsafe { store8::<F64>(dst, F4E2M1::f32x8(c), false) };
    }
}

// ---------------------------------------------------------------------------------------
// Table
// ---------------------------------------------------------------------------------------

/// A narrowing table entry: one branch on the overflow policy, then the loop.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
unsafe fn narrow<Sat: Steps, NonSat: Steps>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    policy: Policy,
) {
    // SAFETY: the caller passes valid, non-overlapping ranges of `len` elements
    // (RawKernel's contract), and the AVX2 table (which the AVX-512 tables start from) is
    // only used after `avx2_available()` confirmed AVX2, FMA and F16C.
    unsafe {
        match policy.overflow {
            Overflow::Saturate => drive::<Sat>(src, dst, len),
            Overflow::NonSaturating => drive::<NonSat>(src, dst, len),
        }
    }
}

/// f64 → fnuz, fp6 or fp4.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
unsafe fn f64_to<F: Format>(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    // SAFETY: forwarded contract.
    unsafe {
        narrow::<ByDwords<F64Small<F, true>>, ByDwords<F64Small<F, false>>>(src, dst, len, policy)
    }
}

/// f32 → E8M0.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
unsafe fn f32_to_e8m0(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    // SAFETY: forwarded contract.
    unsafe { narrow::<ByDwords<F32E8M0<true>>, ByDwords<F32E8M0<false>>>(src, dst, len, policy) }
}

/// F16 → E8M0, one pass (a direct kernel: `NanPolicy::Preserve`, both overflow policies).
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
unsafe fn f16_to_e8m0(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    // SAFETY: forwarded contract.
    unsafe { narrow::<ByDwords<F16E8M0<true>>, ByDwords<F16E8M0<false>>>(src, dst, len, policy) }
}

/// f64 → packed FP4.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel): `len` values in, `len.div_ceil(2)` bytes out.
unsafe fn f64_to_packed(src: *const u8, dst: *mut u8, len: usize, _policy: Policy) {
    // SAFETY: as for f32_to_packed.
    unsafe { drive_pack::<F64ToPacked, 8>(src, dst, len) }
}

/// A narrow format → f32 or f64.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
unsafe fn widen<F: WidenCodes, const F64: bool>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    _policy: Policy,
) {
    // SAFETY: as for `narrow`.
    unsafe { drive::<Widen<F, F64>>(src, dst, len) }
}

/// Packed FP4 → f32 or f64.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel): `len.div_ceil(2)` bytes in, `len` values out.
unsafe fn unpack<const F64: bool>(src: *const u8, dst: *mut u8, len: usize, _policy: Policy) {
    // SAFETY: the caller's ranges are drive_unpack's; the features as in `narrow`.
    unsafe {
        if F64 {
            drive_unpack::<Unpack<true>, 8>(src, dst, len)
        } else {
            drive_unpack::<Unpack<false>, 4>(src, dst, len)
        }
    }
}

/// Puts this module's kernels into the AVX2 table `t`.
///
/// fnuz and E8M0 narrowing implement [`NanPolicy::Preserve`](crate::NanPolicy::Preserve)
/// (`set`; the dispatcher patches NaN sources for the other policies). fp6/fp4 narrowing
/// gives ±MAX for a NaN under every policy, packed pairs must serve every policy, and
/// widening has no NaN policy: those use `set_all_policies`.
pub(super) const fn set(t: &mut Kernels) {
    t.set::<f32, F8E8M0>(f32_to_e8m0);
    t.set_direct::<F16, F8E8M0>(f16_to_e8m0);

    t.set::<f64, F8E4M3FNUZ>(f64_to::<F8E4M3FNUZ>);
    t.set::<f64, F8E5M2FNUZ>(f64_to::<F8E5M2FNUZ>);
    t.set_all_policies::<f64, F6E2M3>(f64_to::<F6E2M3>);
    t.set_all_policies::<f64, F6E3M2>(f64_to::<F6E3M2>);
    t.set_all_policies::<f64, F4E2M1>(f64_to::<F4E2M1>);
    t.set_all_policies::<f64, F4E2M1x2>(f64_to_packed);

    t.set_all_policies::<F8E4M3FNUZ, f32>(widen::<F8E4M3FNUZ, false>);
    t.set_all_policies::<F8E5M2FNUZ, f32>(widen::<F8E5M2FNUZ, false>);
    t.set_all_policies::<F4E2M1, f32>(widen::<F4E2M1, false>);
    t.set_all_policies::<F4E2M1x2, f32>(unpack::<false>);
    t.set_all_policies::<F8E8M0, f32>(widen::<F8E8M0, false>);

    t.set_all_policies::<F8E4M3FNUZ, f64>(widen::<F8E4M3FNUZ, true>);
    t.set_all_policies::<F8E5M2FNUZ, f64>(widen::<F8E5M2FNUZ, true>);
    t.set_all_policies::<F6E2M3, f64>(widen::<F6E2M3, true>);
    t.set_all_policies::<F6E3M2, f64>(widen::<F6E3M2, true>);
    t.set_all_policies::<F4E2M1, f64>(widen::<F4E2M1, true>);
    t.set_all_policies::<F4E2M1x2, f64>(unpack::<true>);
}
