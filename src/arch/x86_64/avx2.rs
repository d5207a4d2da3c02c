//! The `Avx2` backend: AVX2 + FMA + F16C (Haswell, Zen 1 and later), 256-bit vectors.
//!
//! Every kernel gives exactly the bits of the scalar codec ([`crate::codec`]) for every input,
//! whatever MXCSR holds. Rounding instructions take their mode from the immediate
//! (`VCVTPS2PH` with immediate 0: round to nearest even), and every other floating-point
//! instruction used here either cannot round or flush for the operands it gets, or its
//! result does not matter when it does (each use says why). The rest is integer arithmetic.
//! (Rust's `_mm256_cvtps_ph` takes only the 3 rounding bits of the immediate, so exception
//! *flags* may be set in MXCSR; with the default masked exceptions that has no effect.)
//!
//! # Narrowing f32
//!
//! * **F16**: `VCVTPS2PH` is the IEEE conversion the codec specifies: round to nearest even,
//!   subnormal results kept (it ignores MXCSR.FTZ), NaN keeps the sign and top 10 payload
//!   bits and becomes quiet, overflow gives ±Inf. MXCSR.DAZ would read an f32 subnormal
//!   input as zero, but every f32 subnormal is below 2^-126, far below half the smallest F16
//!   subnormal (2^-25), so it narrows to ±0 either way. `Saturate` then turns ±Inf
//!   (magnitude `0x7C00`, what overflow and Inf give) into ±MAX: adding the all-ones compare
//!   mask subtracts 1, and `0x7C00 - 1 = 0x7BFF` leaves the sign bit alone.
//! * **BF16**: integer rounding `(x + 0x7FFF + ((x >> 16) & 1)) >> 16` on the whole word.
//!   The bias 127 is shared, so this is the codec's algorithm with a shift of 16 for normal
//!   and subnormal inputs alike; a carry out of the fraction moves into the exponent (values
//!   from the top tie on round to Inf, as they must). NaN lanes, found with an unordered
//!   compare (DAZ cannot make a NaN ordered), add nothing and get `(x >> 16) | 0x40`.
//!   `Saturate` maps `0x7F80` to `0x7F7F` with the compare-and-add trick of F16.
//!   `VPACKUSDW` packs 32 → 16 bits within 128-bit halves, so a `VPERMQ` restores the order.
//!   The 32-element step first tests its block for NaN (one unordered compare per two
//!   vectors, one `VTESTPS`); a block without NaN skips the NaN lanes' masking and saturates
//!   with two minimums instead ([`saturate_bf16_no_nan`]): 32 instead of 46 vector
//!   instructions per 32 elements with `Saturate`.
//! * **F8E4M3, F8E5M2**: no slice kernel here any more; the generic one serves them (its
//!   byte finish, `lanes::narrow4`, measured as fast as this file's, which it replaced). The
//!   two cores below remain for the block kernels of `avx2_block.rs` (MX quantization).
//! * **fp8, MXCSR rounding to nearest** (the usual case; the callers find it once per call
//!   with `simd::x86_64::rounds_to_nearest`): the fused multiply-add method of the `avx512` module docs
//!   ([`f32_to_f8_fma`]), whose one rounding instruction, `VFMADD`, has no rounding immediate
//!   on AVX2 and so rounds as MXCSR says. FTZ and DAZ cannot change its result (argued
//!   there). The code bytes of four vectors are gathered with `VPSHUFB` and one `VPERMD`;
//!   NaN lanes are marked 0xFF before the gather and become the NaN code with one byte
//!   minimum, and the signs come from two signed-saturating packs of the inputs, which leave
//!   them in the same byte order.
//! * **fp8, any other rounding mode**: two candidate codes per lane, each exact
//!   in its own range, merged with an unsigned minimum ([`f32_to_f8_codes16`]):
//!   - *normal range* (|x| ≥ 2^emin, the target's smallest normal): the bits re-biased and
//!     rounded to nearest even with a constant shift, `(a - (E0 << 23) + half - 1 + lsb) >> s`
//!     plus the implicit bit `1 << MAN_BITS`. Below 2^emin the subtraction wraps and the
//!     candidate is huge, except within half a quantum of 2^emin, where it is the smallest
//!     normal code, which is then the right answer.
//!   - *subnormal range*: `VCVTPS2PH` (round to nearest even) of `|x| · 2^(BIAS+MAN_BITS-25)`.
//!     That factor puts the target's subnormal quantum on the F16 subnormal quantum 2^-24,
//!     so the F16 code is the number of target quanta, rounded once. The product is exact
//!     unless it is below 2^-126, where the rounding, FTZ or a DAZ-zeroed input all give
//!     the correct 0. At or above 2^emin this count of quanta (or any F16 normal code) is at
//!     least the true code, because the target's spacing there is at least one quantum.
//!
//!   So the minimum is the rounded code everywhere. Overflow and ±Inf give codes above MAX;
//!   every format's non-saturating overflow code is `MAX + 1`, so one unsigned minimum with
//!   `MAX` or `MAX + 1` applies either policy (overflow is decided on the rounded value, as
//!   the codec does). NaN lanes are those whose F16 candidate is NaN; their code is above
//!   that limit, so an unsigned maximum inserts it. The sign is ORed in last. Nothing is
//!   rounded twice: the F16 conversion only ever rounds at the target's own quantum.
//!
//! # Narrowing f64: one rounding
//!
//! Each f64 is compressed to 32 bits without losing the rounding decision: its high word
//! (sign, 11-bit exponent, top 20 fraction bits) with bit 0 ORed with "the low word is not
//! zero". That is the f64 rounded to odd at 21 significant bits, and every target keeps at
//! most 11, so the sticky bit lies strictly below the rounding bit: a dropped part below
//! half stays below, an exact half with a non-zero low word becomes "above half", an exact
//! half stays exact. Rounding the compressed word to nearest even therefore equals a single
//! rounding of the f64. A NaN stays a NaN (the sticky bit keeps one whose payload lies only
//! in the low word above `0x7FF00000`) with its top payload bits intact.
//!
//! * **F16**: the compressed word becomes the f32 with the same sign, exponent and 21
//!   significant bits by re-biasing the exponent (exact for every exponent f32 has).
//!   Magnitudes at or above 2^16 are first clamped to 2^16 (still above the F16 overflow
//!   threshold 65520), those below 2^-126 to ±0 (they narrow to ±0 anyway; an f32 subnormal
//!   that DAZ reads as zero does too), and Inf/NaN are re-biased to f32 Inf/NaN with the
//!   payload kept. Then `VCVTPS2PH` rounds that round-to-odd value to nearest even, exactly
//!   as for f32, which equals one rounding of the f64.
//! * **BF16, F8E4M3, F8E5M2**: the codec's algorithm on the compressed words in 32-bit lanes
//!   ([`round_mag`]): one code path for normal and subnormal results with `VPSRLVD`
//!   variable shifts, then the policy minimum, NaN maximum and sign as for fp8 above.
//!
//! # Widening
//!
//! * **F16 → f32**: `VCVTPH2PS`, exact, NaN quieted with payload kept; it ignores MXCSR
//!   (DAZ does not apply to its half-precision inputs).
//! * **F8E5M2 → f32**: `code << 8` is the F16 code of the same value (same exponent field,
//!   fraction padded with zeros), then `VCVTPH2PS`.
//! * **F8E4M3 → f64** (and → f32 for `vcvt::vector` and the block kernels; the slice
//!   kernel to f32 is the generic one): `(code & 0x7F) << 7`, with the sign moved to bit 15, read as F16 is
//!   the E4M3 value times 2^-8 for every normal and subnormal code (biases 7 and 15 differ
//!   by 8, and E4M3 subnormals land on F16 subnormals with the same fraction bits).
//!   `VCVTPH2PS` widens it exactly and `VMULPS` by 256 restores the value: the product is
//!   exact, and its inputs and result are normal or zero, so MXCSR cannot change it. The NaN
//!   codes are first turned into the F16 quiet NaN `0x7E00 | sign`, which widens to
//!   `0x7FC00000 | sign` and passes through the multiplication unchanged.
//! * **BF16 → f32**: zero-extend and shift left by 16.
//! * **→ f64**: widen to f32, then `VCVTPS2PD`: exact, NaN quieted with payload kept. Its
//!   only MXCSR dependence is DAZ on f32 subnormal inputs, and only BF16 produces those;
//!   for BF16 the subnormal values are also computed exactly in f64 (the fraction, converted
//!   exactly, times 2^-149) and merged with an `VMAXPD` of magnitudes (see [`widen_pd_any`]).
//!
//! # Loops
//!
//! Each kernel has an unrolled 16- or 32-element step and an 8-element step, both without
//! per-element branches. When the slice has fewer than 8 elements, they are copied to a
//! stack buffer, converted by the 8-element step and copied back; otherwise the remainder
//! is one overlapping 8-element step that ends at the slice end (it rewrites a few elements
//! with the same values; source and destination never overlap). Widening kernels also start
//! with one such overlapping step when the destination is not 32-byte aligned (and the slice
//! is long enough to gain from it), so that the main loop's 32-byte stores do not straddle
//! cache lines. No access is made outside the two
//! slices, and loads and stores are unaligned. The overflow policy is chosen once per call.

use core::arch::x86_64::*;
use core::marker::PhantomData;
use core::ptr;

use super::Fp8Fma;
use crate::arch::Kernels;
use crate::codec::Format;
use crate::options::Policy;
use crate::{BF16, F8E4M3, F8E5M2, F16, Overflow};

// ---------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------

/// All 32-bit lanes set to `x`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn splat(x: u32) -> __m256i {
    _mm256_set1_epi32(x as i32)
}

/// All 16-bit lanes set to `x`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn splat16(x: u16) -> __m256i {
    _mm256_set1_epi16(x as i16)
}

/// Logical right shift of every 32-bit lane by the constant `n` (folded to `VPSRLD imm`).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn srl(a: __m256i, n: u32) -> __m256i {
    _mm256_srlv_epi32(a, splat(n))
}

/// `Saturate` fix-up for 16-bit codes: a lane whose magnitude is `inf` (the code right above
/// MAX) becomes MAX. The compare mask is all ones (-1) in such a lane, so the add subtracts 1;
/// the magnitude is at least 0x7C00 there, so the sign bit is not touched.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn saturate16(h: __m256i, inf: u16) -> __m256i {
    let is_inf = _mm256_cmpeq_epi16(_mm256_and_si256(h, splat16(0x7FFF)), splat16(inf));
    _mm256_add_epi16(h, is_inf)
}

/// Packs 8 codes (each < 256, in 32-bit lanes, in order) into the low 8 bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn pack_bytes8(r: __m256i) -> __m128i {
    let w = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256::<1>(r));
    _mm_packus_epi16(w, w)
}

/// Packs 2 × 8 codes (each < 65536, in 32-bit lanes, in order) into 16 words in order.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn pack_words(r0: __m256i, r1: __m256i) -> __m256i {
    // VPACKUSDW interleaves the 128-bit halves: [r0 0-3, r1 0-3 | r0 4-7, r1 4-7]; the
    // 64-bit permute 0xD8 (order 0, 2, 1, 3) restores [r0 0-7 | r1 0-7].
    _mm256_permute4x64_epi64::<0xD8>(_mm256_packus_epi32(r0, r1))
}

/// Packs 8 codes (each < 65536, in 32-bit lanes, in order) into 8 words in order.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn pack_words8(r: __m256i) -> __m128i {
    _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256::<1>(r))
}

// ---------------------------------------------------------------------------------------
// The integer narrowing core
// ---------------------------------------------------------------------------------------

/// Rounds source magnitudes `a` (32-bit lanes, sign clear, finite, with `SRC_MAN` fraction
/// bits below a biased exponent with bias `SRC_BIAS`) to the magnitude code of `F`, round to
/// nearest even, without the overflow clamp: a result above `F::MAX` means overflow.
///
/// With `sh = SRC_MAN - F::MAN_BITS` and `ne` the source exponent of `F`'s smallest normal,
/// the scalar codec computes `rne(a - ((ne - 1) << SRC_MAN), sh)` for a normal result and
/// `rne(m, sh + ne - e)` for a subnormal one, where `m` is the significand with its implicit
/// bit. Both are `rne(v, s)` with
///
/// * `v = max(a - ((ne - 1) << SRC_MAN), m)`: for `e >= ne` the left side is `m` plus
///   `(e - ne) << SRC_MAN`, at least `m`; for `e < ne` it is below the implicit bit (or
///   negative, hence the signed maximum) and `m` wins;
/// * `s = max((sh + ne) - e, sh)`.
///
/// The implicit bit is also set for exponent 0 (f64 subnormals). That changes the value but
/// not the result: such values lie far below half the targets' smallest subnormal and round
/// to zero with or without it. Shift counts above 31 are capped at 31: a count of 31 or
/// more only occurs for a subnormal result, where `v = m < 2^21`, and then
/// `v + half - 1 + lsb < 2^21 + 2^30 < 2^31` shifts to 0, the correct rounding of a value
/// below 2^-10 of the smallest subnormal.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn round_mag<F: Format, const SRC_MAN: u32, const SRC_BIAS: i32>(a: __m256i) -> __m256i {
    let sh = SRC_MAN - F::MAN_BITS;
    let ne = (SRC_BIAS - F::BIAS + 1) as u32;
    let e = srl(a, SRC_MAN);
    let s = _mm256_max_epi32(_mm256_sub_epi32(splat(sh + ne), e), splat(sh));
    // Capping s at 31 changes no result (a shift of 31 or more only happens for v < 2^21,
    // which rounds to 0 either way), and it lets the compiler see that every shift count
    // below is under 32: without that, it guards each VPSRLVD with a compare and a mask,
    // as for a shift whose count may be out of range (five extra instructions per vector).
    let s = _mm256_min_epi32(s, splat(31));
    let m = _mm256_or_si256(
        _mm256_and_si256(a, splat((1 << SRC_MAN) - 1)),
        splat(1 << SRC_MAN),
    );
    let v = _mm256_max_epi32(_mm256_sub_epi32(a, splat((ne - 1) << SRC_MAN)), m);
    // half - 1 = 2^(s-1) - 1 = all ones shifted right by 33 - s (0 for s >= 33).
    let half_m1 = _mm256_srlv_epi32(splat(u32::MAX), _mm256_sub_epi32(splat(33), s));
    // Ties to even: add half - 1 plus the lowest kept bit, then drop s bits.
    let lsb = _mm256_and_si256(_mm256_srlv_epi32(v, s), splat(1));
    _mm256_srlv_epi32(_mm256_add_epi32(_mm256_add_epi32(v, half_m1), lsb), s)
}

/// Completes a code from [`round_mag`]'s result `mag`: overflow policy, NaN and sign.
/// `a` is the source magnitude (NaN iff above `inf`, the source's +Inf bits), `signed` holds
/// the sign in bit 31, and `SRC_MAN` is the source's fraction width (for F16/BF16 payloads).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn finish<F: Format, const SAT: bool, const SRC_MAN: u32>(
    mag: __m256i,
    a: __m256i,
    signed: __m256i,
    inf: u32,
) -> __m256i {
    // The non-saturating overflow code is MAX + 1 in every format, and ±Inf sources round
    // above MAX, so one unsigned minimum applies either policy to overflow and Inf alike.
    let limit = if SAT { F::MAX } else { F::OVERFLOW_NONSAT };
    debug_assert!(F::OVERFLOW_NONSAT == F::MAX + 1);
    let mag = _mm256_min_epu32(mag, splat(limit));
    // NaN: the codec's NaN code. For 16-bit formats it keeps the top MAN_BITS payload bits
    // and the quiet bit (F::nan_from_f32 of the source's Inf bits is exactly
    // "exponent all ones + quiet bit"); fp8 NaN codes are constants. Every NaN code is at
    // least the limit, so an unsigned maximum with the masked code inserts it.
    let quiet = splat(F::nan_from_f32(0x7F80_0000));
    let nan = if F::BITS == 16 {
        let payload = srl(a, SRC_MAN - F::MAN_BITS);
        _mm256_or_si256(
            _mm256_and_si256(payload, splat((1 << F::MAN_BITS) - 1)),
            quiet,
        )
    } else {
        quiet
    };
    let is_nan = _mm256_cmpgt_epi32(a, splat(inf));
    let mag = _mm256_max_epu32(mag, _mm256_and_si256(is_nan, nan));
    // The sign bit moves from bit 31 to the format's top bit.
    let sign = _mm256_and_si256(srl(signed, 32 - F::BITS), splat(1 << (F::BITS - 1)));
    _mm256_or_si256(mag, sign)
}

/// fp8 codes of 16 f32 (bit patterns in `x0`, `x1`), in 16-bit lanes in the order of
/// `VPACKUSDW(x0, x1)`: `[x0 0-3, x1 0-3 | x0 4-7, x1 4-7]`.
///
/// Two candidate codes per lane, each exact in its own range, merged by an unsigned minimum
/// (see "f32 → F8E4M3 / F8E5M2" in the module docs).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn f32_to_f8_codes16<F: Format, const SAT: bool>(x0: __m256i, x1: __m256i) -> __m256i {
    let abs = splat(0x7FFF_FFFF);
    let (a0, a1) = (_mm256_and_si256(x0, abs), _mm256_and_si256(x1, abs));
    // Normal candidate: the bits re-biased so that the target's smallest normal 2^emin has
    // exponent field 0, rounded to nearest even at bit s, plus the implicit bit moved into
    // the target's exponent field 1. Below 2^emin the subtraction wraps (to at least
    // 2^32 - 2^30, so at least 1536 after the shift, above every code), except within half
    // a quantum of 2^emin, where it gives the smallest normal code, which is right there.
    let s = 23 - F::MAN_BITS;
    let e0 = (127 + 1 - F::BIAS) as u32; // f32 exponent field of 2^emin
    let bias = ((1u32 << (s - 1)) - 1).wrapping_sub(e0 << 23);
    let normal = |a: __m256i| {
        // (a - (e0 << 23)) has the same low s bits as a, so the kept lsb is (a >> s) & 1.
        let lsb = _mm256_and_si256(srl(a, s), splat(1));
        let r = srl(_mm256_add_epi32(_mm256_add_epi32(a, splat(bias)), lsb), s);
        _mm256_add_epi32(r, splat(1 << F::MAN_BITS))
    };
    // Results are below 2^(32 - s) + 2^MAN_BITS < 2^16, so the signed-to-unsigned
    // saturating pack keeps them.
    let n = _mm256_packus_epi32(normal(a0), normal(a1));
    // Subnormal candidate: |x| * 2^(BIAS + MAN_BITS - 25) puts the target's subnormal
    // quantum 2^(1 - BIAS - MAN_BITS) on the F16 subnormal quantum 2^-24, so VCVTPS2PH with
    // round-to-nearest-even (immediate, not MXCSR) yields the number of target quanta,
    // rounded once, while that stays below 2^10 (an F16 subnormal). Above the target's
    // smallest normal that count (or any larger F16 code) is at least the true code, so
    // the minimum picks the normal candidate there. The product is exact whenever it is at
    // least 2^-126; below that (or if FTZ/DAZ flush it) the true result is 0 either way.
    let scale = _mm256_set1_ps(f32::from_bits(
        ((127 + F::BIAS + F::MAN_BITS as i32 - 25) as u32) << 23,
    ));
    let h0 = _mm256_cvtps_ph::<0>(_mm256_mul_ps(_mm256_castsi256_ps(a0), scale));
    let h1 = _mm256_cvtps_ph::<0>(_mm256_mul_ps(_mm256_castsi256_ps(a1), scale));
    // [h0 | h1] in 64-bit groups 0, 2, 1, 3 is the VPACKUSDW order.
    let sub = _mm256_permute4x64_epi64::<0xD8>(_mm256_set_m128i(h1, h0));
    let code = _mm256_min_epu16(n, sub);
    // Overflow and ±Inf (codes above MAX): the non-saturating code is MAX + 1, so one
    // unsigned minimum applies either policy.
    let limit = if SAT { F::MAX } else { F::OVERFLOW_NONSAT };
    debug_assert!(F::OVERFLOW_NONSAT == F::MAX + 1);
    let mut code = _mm256_min_epu16(code, splat16(limit as u16));
    // NaN: exactly the lanes whose F16 candidate is a NaN (the product of a NaN is a NaN).
    // The NaN code is at least the limit, so a maximum inserts it. (For E4M3 without
    // saturation the limit 0x7F already is the NaN code.)
    let nan_code = F::nan_from_f32(0x7FC0_0000);
    if nan_code != limit {
        let is_nan = _mm256_cmpgt_epi16(sub, splat16(0x7C00));
        code = _mm256_max_epu16(code, _mm256_and_si256(is_nan, splat16(nan_code as u16)));
    }
    // Sign: the signed-saturating pack keeps each f32's sign in bit 15; move it to bit 7.
    let sign = _mm256_srli_epi16::<8>(_mm256_packs_epi32(x0, x1));
    _mm256_or_si256(code, _mm256_and_si256(sign, splat16(0x80)))
}

/// Loads 8 f64 and compresses each to 32 bits (see the module docs): returns the high words
/// (sign in bit 31) and the magnitudes with the sticky bit, both in the lane order
/// `[0, 1, 4, 5, 2, 3, 6, 7]` of `VSHUFPS`.
///
/// # Safety
/// `src` must be readable for 64 bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn load_f64x8(src: *const u8) -> (__m256i, __m256i) {
    // SAFETY: the caller guarantees 64 readable bytes; the loads are unaligned.
    let (v0, v1) = unsafe {
        (
            _mm256_loadu_ps(src.cast()),
            _mm256_loadu_ps(src.add(32).cast()),
        )
    };
    // Odd 32-bit words are the high halves, even ones the low halves (little endian).
    let hi = _mm256_castps_si256(_mm256_shuffle_ps::<0xDD>(v0, v1));
    let lo = _mm256_castps_si256(_mm256_shuffle_ps::<0x88>(v0, v1));
    // min(lo, 1) is 1 exactly when any low bit is set: the sticky bit.
    let sticky = _mm256_min_epu32(lo, splat(1));
    let a = _mm256_or_si256(_mm256_and_si256(hi, splat(0x7FFF_FFFF)), sticky);
    (hi, a)
}

/// 8 f64 to codes of `F` (in 32-bit lanes, order `[0, 1, 4, 5, 2, 3, 6, 7]`).
///
/// # Safety
/// `src` must be readable for 64 bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn f64_codes<F: Format, const SAT: bool>(src: *const u8) -> __m256i {
    // SAFETY: forwarded.
    let (hi, a) = unsafe { load_f64x8(src) };
    let mag = round_mag::<F, 20, 1023>(a);
    finish::<F, SAT, 20>(mag, a, hi, 0x7FF0_0000)
}

/// 8 f64 to F16 codes in order (see "f64 → F16" in the module docs), before `Saturate`.
///
/// # Safety
/// `src` must be readable for 64 bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn f64_to_f16x8(src: *const u8) -> __m128i {
    // SAFETY: forwarded.
    let (hi, a) = unsafe { load_f64x8(src) };
    // Inf/NaN lanes (compressed magnitude >= 0x7FF00000).
    let special = _mm256_cmpgt_epi32(a, splat(0x7FEF_FFFF));
    // Clamp finite magnitudes to at most 2^16 (high word 0x40F00000); the bound is all ones
    // in special lanes, so they pass unchanged.
    let t = _mm256_min_epu32(a, _mm256_or_si256(special, splat(0x40F0_0000)));
    // Clamp below at f64 exponent field 896 (magnitudes under 2^-126): re-biasing gives f32
    // exponent field 0, i.e. ±0 or an f32 subnormal, and both narrow to ±0 (DAZ or not),
    // as every magnitude under 2^-126 does.
    let t = _mm256_max_epi32(t, splat(896 << 20));
    // Re-bias 1023 -> 127 (subtract 896 << 20) for finite lanes, 2047 -> 255 (subtract
    // 1792 << 20) for Inf/NaN, then move the 20 fraction bits + sticky up by 3 into f32
    // position. The exponent fits in 8 bits after the clamps, so nothing reaches bit 31.
    let bias = _mm256_add_epi32(
        _mm256_and_si256(special, splat(896 << 20)),
        splat(896 << 20),
    );
    let f = _mm256_slli_epi32::<3>(_mm256_sub_epi32(t, bias));
    let f = _mm256_or_si256(f, _mm256_and_si256(hi, splat(0x8000_0000)));
    // Undo the VSHUFPS lane order: 64-bit groups [0,1][4,5][2,3][6,7] -> 0, 2, 1, 3.
    let f = _mm256_permute4x64_epi64::<0xD8>(f);
    // Immediate 0: round to nearest even, not MXCSR.RC.
    _mm256_cvtps_ph::<0>(_mm256_castsi256_ps(f))
}

/// BF16 codes of 8 f32 bit patterns, in 32-bit lanes, before `Saturate`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn f32_to_bf16_codes(x: __m256i) -> __m256i {
    // NaN lanes: an unordered self-compare finds them whatever MXCSR holds (DAZ only
    // zeroes subnormals, which are ordered).
    let xf = _mm256_castsi256_ps(x);
    let is_nan = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(xf, xf));
    // Round to nearest even at bit 16: add 0x7FFF plus the lowest kept bit. The sign bit is
    // part of x and never changes: the largest non-NaN magnitude, 0x7F800000 (Inf), plus
    // 0x8000 stays below 0x80000000. NaN lanes add nothing (a carry could change the
    // payload) and get the quiet bit instead: (x >> 16) | 0x40.
    let lsb = _mm256_and_si256(srl(x, 16), splat(1));
    let bias = _mm256_andnot_si256(is_nan, _mm256_add_epi32(lsb, splat(0x7FFF)));
    let r = srl(_mm256_add_epi32(x, bias), 16);
    _mm256_or_si256(r, _mm256_and_si256(is_nan, splat(0x40)))
}

/// BF16 codes of 8 f32 bit patterns none of which is a NaN, in 32-bit lanes, before
/// `Saturate`: [`f32_to_bf16_codes`] without its NaN lanes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn bf16_rne_no_nan(x: __m256i) -> __m256i {
    // Round to nearest even at bit 16 (see f32_to_bf16_codes; without NaN nothing carries
    // into the sign bit).
    let lsb = _mm256_and_si256(srl(x, 16), splat(1));
    srl(
        _mm256_add_epi32(x, _mm256_add_epi32(lsb, splat(0x7FFF))),
        16,
    )
}

/// `Saturate` for 16 BF16 codes none of which is a NaN: ±Inf (`0x7F80`, `0xFF80`) become
/// ±MAX (`0x7F7F`, `0xFF7F`). A signed minimum with `0x7F7F` clamps the positive codes and
/// leaves the negative ones (negative as i16) alone; an unsigned minimum with `0xFF7F` then
/// clamps the negative codes and leaves the positive ones (below `0x8000`) alone. Without
/// NaN codes (`0x7FC0` and up in magnitude), no other code lies above either bound.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn saturate_bf16_no_nan(h: __m256i) -> __m256i {
    _mm256_min_epu16(_mm256_min_epi16(h, splat16(0x7F7F)), splat16(0xFF7F))
}

// ---------------------------------------------------------------------------------------
// Loop driver
// ---------------------------------------------------------------------------------------

/// The two steps of a kernel.
pub(super) trait Steps {
    /// Source element size in bytes.
    const S: usize;
    /// Destination element size in bytes.
    const D: usize;
    /// Elements per large step.
    const BIG: usize;
    /// Converts `BIG` elements.
    ///
    /// # Safety
    /// `src` readable for `BIG * S` bytes, `dst` writable for `BIG * D` bytes, and the CPU
    /// has AVX2, FMA and F16C.
    unsafe fn big(src: *const u8, dst: *mut u8);
    /// Converts 8 elements.
    ///
    /// # Safety
    /// `src` readable for `8 * S` bytes, `dst` writable for `8 * D` bytes, and the CPU has
    /// AVX2, FMA and F16C.
    unsafe fn small(src: *const u8, dst: *mut u8);
}

/// Loads 32 f32 (four vectors) at `src`, unaligned.
///
/// # Safety
/// `src` readable for 128 bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn load_f32x32(src: *const u8) -> [__m256i; 4] {
    let s = src.cast::<__m256i>();
    // SAFETY: the four 32-byte loads cover the caller's 128 readable bytes.
    unsafe {
        [
            _mm256_loadu_si256(s),
            _mm256_loadu_si256(s.add(1)),
            _mm256_loadu_si256(s.add(2)),
            _mm256_loadu_si256(s.add(3)),
        ]
    }
}

/// Elements per small step.
const SMALL: usize = 8;

/// Runs kernel `K` over `len` elements.
///
/// # Safety
/// `src` readable for `len * K::S` bytes, `dst` writable for `len * K::D` bytes, no overlap
/// (see [`RawKernel`](crate::arch::RawKernel)), and the CPU has AVX2, FMA and F16C.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn drive<K: Steps>(src: *const u8, dst: *mut u8, len: usize) {
    const { assert!(SMALL * K::S <= 64 && SMALL * K::D <= 64) };
    let mut i = 0;
    // Widening writes 32 bytes per 8 elements; stores that straddle cache lines halve the
    // store rate. If the destination is element-aligned but not 32-byte aligned, convert
    // the first 8 elements and continue from the first 32-byte boundary (fewer than 8
    // elements in), rewriting a few of them with the same values. Short slices skip this:
    // there the extra step costs more than the split stores.
    if K::D >= 4 && len >= 4 * K::BIG {
        let mis = dst as usize % 32;
        if mis != 0 && mis.is_multiple_of(K::D) {
            // SAFETY: len >= BIG >= 8, so elements 0..8 are inside the slices.
            unsafe { K::small(src, dst) };
            i = (32 - mis) / K::D;
        }
    }
    while len - i >= K::BIG {
        // SAFETY: elements i..i + BIG are inside the slices (i + BIG <= len).
        unsafe { K::big(src.add(i * K::S), dst.add(i * K::D)) };
        i += K::BIG;
    }
    while len - i >= SMALL {
        // SAFETY: elements i..i + 8 are inside the slices.
        unsafe { K::small(src.add(i * K::S), dst.add(i * K::D)) };
        i += SMALL;
    }
    if i == len {
        return;
    }
    if len >= SMALL {
        // Overlapping last step: elements len - 8..len are inside the slices; the ones
        // already written are rewritten with the same values.
        let j = len - SMALL;
        // SAFETY: as stated, j + 8 == len.
        unsafe { K::small(src.add(j * K::S), dst.add(j * K::D)) };
    } else {
        // Fewer than 8 elements: convert through stack buffers (zeros pad the source).
        let mut sbuf = [0u8; 64];
        let mut dbuf = [0u8; 64];
        // SAFETY: len < 8 elements fit in both 64-byte buffers (asserted above); the slices
        // hold len elements; buffers and slices are distinct.
        unsafe {
            ptr::copy_nonoverlapping(src, sbuf.as_mut_ptr(), len * K::S);
            K::small(sbuf.as_ptr(), dbuf.as_mut_ptr());
            ptr::copy_nonoverlapping(dbuf.as_ptr(), dst, len * K::D);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Narrowing kernels
// ---------------------------------------------------------------------------------------

/// 8 f32 to 8 F16 codes in order: the 8-element step of f32 → F16, and
/// `vcvt::vector::avx2::f32x8_to_f16`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(crate) fn f32x8_to_f16<const SAT: bool>(x: __m256) -> __m128i {
    // Immediate 0: round to nearest even, not MXCSR.RC.
    let h = _mm256_cvtps_ph::<0>(x);
    if SAT {
        _mm256_castsi256_si128(saturate16(_mm256_castsi128_si256(h), 0x7C00))
    } else {
        h
    }
}

/// 8 f32 (bit patterns) to 8 BF16 codes in order: the 8-element step of f32 → BF16, and
/// `vcvt::vector::avx2::f32x8_to_bf16`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(crate) fn f32x8_to_bf16<const SAT: bool>(x: __m256i) -> __m128i {
    let h = pack_words8(f32_to_bf16_codes(x));
    if SAT {
        _mm256_castsi256_si128(saturate16(_mm256_castsi128_si256(h), 0x7F80))
    } else {
        h
    }
}

/// 8 f32 (bit patterns) to 8 fp8 codes of `F` in the low 8 bytes (the high 8 bytes repeat
/// them) by the integer core, which no MXCSR setting changes: the 8-element step of the
/// integer f32 → F8E4M3/F8E5M2 kernel, and `vcvt::vector::avx2::f32x8_to_e4m3`/`_e5m2`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(crate) fn f32x8_to_f8<F: Format, const SAT: bool>(x: __m256i) -> __m128i {
    // Both halves convert the same 8 values; 64-bit order 0, 2, 1, 3 puts elements 0-7
    // in the low 128 bits.
    let w = _mm256_permute4x64_epi64::<0xD8>(f32_to_f8_codes16::<F, SAT>(x, x));
    let w = _mm256_castsi256_si128(w);
    _mm_packus_epi16(w, w)
}

/// f32 → BF16.
struct F32ToBf16<const SAT: bool>;

impl<const SAT: bool> Steps for F32ToBf16<SAT> {
    const S: usize = 4;
    const D: usize = 2;
    const BIG: usize = 32;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        // SAFETY: 32 f32 readable at src.
        let [x0, x1, x2, x3] = unsafe { load_f32x32(src) };
        // Any NaN among the 32? An unordered compare of two vectors is true in a lane where
        // either is a NaN (DAZ cannot make a NaN ordered), and VTESTPS reads the sign bits
        // of the all-ones masks. Inputs without NaN (the common case) take the shorter
        // rounding; a block with a NaN takes the general one. Both give the codec's bits.
        let f = |x: __m256i| _mm256_castsi256_ps(x);
        let nan = _mm256_or_ps(
            _mm256_cmp_ps::<_CMP_UNORD_Q>(f(x0), f(x1)),
            _mm256_cmp_ps::<_CMP_UNORD_Q>(f(x2), f(x3)),
        );
        let (a, b) = if _mm256_testz_ps(nan, nan) == 1 {
            let mut a = pack_words(bf16_rne_no_nan(x0), bf16_rne_no_nan(x1));
            let mut b = pack_words(bf16_rne_no_nan(x2), bf16_rne_no_nan(x3));
            if SAT {
                a = saturate_bf16_no_nan(a);
                b = saturate_bf16_no_nan(b);
            }
            (a, b)
        } else {
            let mut a = pack_words(f32_to_bf16_codes(x0), f32_to_bf16_codes(x1));
            let mut b = pack_words(f32_to_bf16_codes(x2), f32_to_bf16_codes(x3));
            if SAT {
                a = saturate16(a, 0x7F80);
                b = saturate16(b, 0x7F80);
            }
            (a, b)
        };
        let d = dst.cast::<__m256i>();
        // SAFETY: 32 u16 writable at dst.
        unsafe {
            _mm256_storeu_si256(d, a);
            _mm256_storeu_si256(d.add(1), b);
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 f32 readable at src.
        let x = unsafe { _mm256_loadu_si256(src.cast()) };
        let h = f32x8_to_bf16::<SAT>(x);
        // SAFETY: 8 u16 writable at dst.
        unsafe { _mm_storeu_si128(dst.cast(), h) };
    }
}

/// Whether MXCSR's rounding control (bits 13-14) is round to nearest, which the fused
/// multiply-add of [`F32ToF8Fma`] needs (AVX2 has no rounding immediate for it): found by
/// `simd::x86_64::rounds_to_nearest`'s two additions, without `STMXCSR`.
///
/// # Safety
/// The CPU has AVX.
#[inline]
pub(super) unsafe fn mxcsr_rounds_to_nearest() -> bool {
    // SAFETY: forwarded contract.
    unsafe { crate::simd::x86_64::rounds_to_nearest() }
}

/// The `VPSHUFB` index of [`super::fp8_code_gather_lane`] in both 128-bit lanes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn code_gather_index(j: usize) -> __m256i {
    let [a, b, c, d] = super::fp8_code_gather_lane(j);
    _mm256_setr_epi32(a, b, c, d, a, b, c, d)
}

/// `8 * N` f32 (N vectors) to fp8 codes by one fused multiply-add per vector (the method
/// of the `avx512` module docs, "Narrowing f32"): code `8j + i` of the result is element
/// `i` of vector `j`.
///
/// `VFMADD` rounds as MXCSR says, so this is exact only when MXCSR rounds to nearest (the
/// table entries check, see [`mxcsr_rounds_to_nearest`]). FTZ and DAZ cannot change it: a
/// denormal input reads as zero or as itself, and either rounds to ±0; the sum is at least
/// 2^7, so it is never flushed; the compare, minimum and maximum do not round.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn f32_to_f8_fma<F: Format, const SAT: bool, const N: usize>(
    x: [__m256i; N],
) -> __m256i {
    const { assert!(N == 1 || N == 4) };
    let cap_code = if SAT { F::MAX } else { F::OVERFLOW_NONSAT };
    let c = const {
        Fp8Fma::new(
            F::MAN_BITS,
            F::BIAS,
            if SAT { F::MAX } else { F::OVERFLOW_NONSAT },
        )
    };
    let nan_code = F::nan_from_f32(0x7FC0_0000);
    // E4M3 without `Saturate`: NaN already gets the overflow code, its NaN.
    let fix_nan = nan_code != cap_code;
    let mut g = _mm256_setzero_si256();
    for (j, &xj) in x.iter().enumerate() {
        let xf = _mm256_castsi256_ps(xj);
        let a = _mm256_and_ps(xf, _mm256_castsi256_ps(splat(0x7FFF_FFFF)));
        // a = min(|x|, cap); VMINPS returns its second operand when either is NaN, so a NaN
        // lane becomes `cap` here and is marked below.
        let a = _mm256_min_ps(a, _mm256_set1_ps(c.cap));
        let m = _mm256_max_ps(a, _mm256_set1_ps(c.min_normal));
        let t = _mm256_and_ps(m, _mm256_castsi256_ps(splat(0x7F80_0000)));
        let sum = _mm256_fmadd_ps(t, _mm256_set1_ps(c.k), a);
        let mut p = _mm256_madd_epi16(_mm256_castps_si256(sum), splat(c.weights as u32));
        if fix_nan {
            // An all-ones NaN lane: its code byte becomes 0xFF, above every code.
            let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(xf, xf);
            p = _mm256_or_si256(p, _mm256_castps_si256(nan));
        }
        g = _mm256_or_si256(g, _mm256_shuffle_epi8(p, code_gather_index(j)));
    }
    if fix_nan {
        // 0xFF becomes the NaN code; every other code is at most `cap_code`, below it.
        g = _mm256_min_epu8(g, _mm256_set1_epi8(nan_code as i8));
    }
    // Signs: signed-saturating packs keep each f32's sign bit, and packing dwords to words
    // to bytes leaves vector j's elements of each 128-bit lane in its 32-bit lane j, as in
    // `g`.
    let v = |j: usize| x[j.min(N - 1)];
    let signs = _mm256_packs_epi16(
        _mm256_packs_epi32(v(0), v(1)),
        _mm256_packs_epi32(v(2), v(3)),
    );
    g = _mm256_or_si256(g, _mm256_and_si256(signs, _mm256_set1_epi8(0x80u8 as i8)));
    // 32-bit lane 4L + j holds elements 8j + 4L.., which belong at 32-bit lane 2j + L.
    _mm256_permutevar8x32_epi32(g, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
}

/// The permutation that undoes [`load_f64x8`]'s lane order after `VPACKUSDW` of two such
/// vectors: 32-bit groups (word pairs) `[0,1][4,5][8,9][12,13][2,3][6,7][10,11][14,15]`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn unshuffle_words(w: __m256i) -> __m256i {
    _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
}

/// 32 f64 to 32 fp8 codes in order: the integer core in 32-bit lanes for the rounding, then
/// the overflow policy, NaN and sign on bytes, once per 32 instead of once per 8 elements.
///
/// # Safety
/// `src` readable for 256 bytes, `dst` writable for 32 bytes, and the CPU has AVX2, FMA and
/// F16C.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn f64_to_f8x32<F: Format, const SAT: bool>(src: *const u8, dst: *mut u8) {
    // SAFETY: 256 bytes readable at src (the caller's contract).
    let [(h0, a0), (h1, a1), (h2, a2), (h3, a3)] = unsafe {
        [
            load_f64x8(src),
            load_f64x8(src.add(64)),
            load_f64x8(src.add(128)),
            load_f64x8(src.add(192)),
        ]
    };
    let mag = |a| round_mag::<F, 20, 1023>(a);
    // Unsigned saturating packs of signed inputs: every magnitude here is below 2^14 (the
    // largest, from a NaN, is at most (2^31 - ((ne - 1) << 20)) >> sh + 1 with ne >= 1009
    // and sh >= 17), so none reads as negative, and one above 255 (overflow) becomes 255, still above every limit below,
    // so the policy minimum sees overflow as before.
    let m = _mm256_packus_epi16(
        _mm256_packus_epi32(mag(a0), mag(a1)),
        _mm256_packus_epi32(mag(a2), mag(a3)),
    );
    let limit = if SAT { F::MAX } else { F::OVERFLOW_NONSAT };
    debug_assert!(F::OVERFLOW_NONSAT == F::MAX + 1);
    let m = _mm256_min_epu8(m, _mm256_set1_epi8(limit as i8));
    // NaN lanes (compressed magnitude above the f64 Inf's high word): the all-ones masks
    // stay all ones through the signed saturating packs; the NaN code is at least the
    // limit, so an unsigned maximum inserts it.
    let inf = splat(0x7FF0_0000);
    let nan = |a| _mm256_cmpgt_epi32(a, inf);
    let is_nan = _mm256_packs_epi16(
        _mm256_packs_epi32(nan(a0), nan(a1)),
        _mm256_packs_epi32(nan(a2), nan(a3)),
    );
    let nan_code = _mm256_set1_epi8(F::nan_from_f32(0x7FC0_0000) as i8);
    let m = _mm256_max_epu8(m, _mm256_and_si256(is_nan, nan_code));
    // Sign: signed saturating packs keep each high word's sign in the byte's bit 7.
    let sign = _mm256_packs_epi16(_mm256_packs_epi32(h0, h1), _mm256_packs_epi32(h2, h3));
    let b = _mm256_or_si256(m, _mm256_and_si256(sign, _mm256_set1_epi8(0x80u8 as i8)));
    // Order: each 8-element group k arrives as [k0 k1 k4 k5 | k2 k3 k6 k7] (load_f64x8), and
    // the packs interleave 128-bit halves, so the bytes are, in pairs,
    // [e01 e45 f01 f45 g01 g45 h01 h45 | e23 e67 f23 f67 g23 g67 h23 h67] for groups e-h.
    // VPERMD of 4-byte units gives [e01 e45 e23 e67 f01 f45 f23 f67 | g.. h..], and VPSHUFB
    // swaps the middle pairs of each 8 bytes.
    let b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    let swap = _mm256_setr_epi8(
        0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15, //
        0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15,
    );
    let b = _mm256_shuffle_epi8(b, swap);
    // SAFETY: 32 bytes writable at dst; unaligned store.
    unsafe { _mm256_storeu_si256(dst.cast(), b) };
}

/// f64 → F16.
struct F64ToF16<const SAT: bool>;

impl<const SAT: bool> Steps for F64ToF16<SAT> {
    const S: usize = 8;
    const D: usize = 2;
    const BIG: usize = 32;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        // SAFETY: 32 f64 (256 bytes) readable at src.
        let [h0, h1, h2, h3] = unsafe {
            [
                f64_to_f16x8(src),
                f64_to_f16x8(src.add(64)),
                f64_to_f16x8(src.add(128)),
                f64_to_f16x8(src.add(192)),
            ]
        };
        let d = dst.cast::<__m128i>();
        if SAT {
            let a = saturate16(_mm256_set_m128i(h1, h0), 0x7C00);
            let b = saturate16(_mm256_set_m128i(h3, h2), 0x7C00);
            // SAFETY: 32 u16 writable at dst.
            unsafe {
                _mm256_storeu_si256(d.cast(), a);
                _mm256_storeu_si256(d.add(2).cast(), b);
            }
        } else {
            // SAFETY: as above.
            unsafe {
                _mm_storeu_si128(d, h0);
                _mm_storeu_si128(d.add(1), h1);
                _mm_storeu_si128(d.add(2), h2);
                _mm_storeu_si128(d.add(3), h3);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 f64 readable at src.
        let mut h = unsafe { f64_to_f16x8(src) };
        if SAT {
            h = _mm256_castsi256_si128(saturate16(_mm256_castsi128_si256(h), 0x7C00));
        }
        // SAFETY: 8 u16 writable at dst.
        unsafe { _mm_storeu_si128(dst.cast(), h) };
    }
}

/// f64 → BF16, F8E4M3 or F8E5M2 by the integer core.
struct F64ToInt<F, const SAT: bool>(PhantomData<F>);

impl<F: Format, const SAT: bool> Steps for F64ToInt<F, SAT> {
    const S: usize = 8;
    const D: usize = (F::BITS / 8) as usize;
    const BIG: usize = 32;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        if F::BITS == 8 {
            // SAFETY: forwarded (32 f64 readable, 32 bytes writable).
            unsafe { f64_to_f8x32::<F, SAT>(src, dst) };
            return;
        }
        // SAFETY: 32 f64 (256 bytes) readable at src.
        let [r0, r1, r2, r3] = unsafe {
            [
                f64_codes::<F, SAT>(src),
                f64_codes::<F, SAT>(src.add(64)),
                f64_codes::<F, SAT>(src.add(128)),
                f64_codes::<F, SAT>(src.add(192)),
            ]
        };
        // Codes are < 65536, so VPACKUSDW keeps them; then restore the element order.
        let w01 = unshuffle_words(_mm256_packus_epi32(r0, r1));
        let w23 = unshuffle_words(_mm256_packus_epi32(r2, r3));
        if F::BITS == 16 {
            let (w01, w23) = if SAT {
                (saturate16(w01, 0x7F80), saturate16(w23, 0x7F80))
            } else {
                (w01, w23)
            };
            let d = dst.cast::<__m256i>();
            // SAFETY: 32 u16 writable at dst.
            unsafe {
                _mm256_storeu_si256(d, w01);
                _mm256_storeu_si256(d.add(1), w23);
            }
        } else {
            // Bytes: VPACKUSWB gives [0-7, 16-23 | 8-15, 24-31]; 64-bit order 0, 2, 1, 3.
            let b = _mm256_permute4x64_epi64::<0xD8>(_mm256_packus_epi16(w01, w23));
            // SAFETY: 32 bytes writable at dst.
            unsafe { _mm256_storeu_si256(dst.cast(), b) };
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 f64 readable at src.
        let r = unsafe { f64_codes::<F, SAT>(src) };
        // Undo the lane order [0,1,4,5,2,3,6,7]: 64-bit groups 0, 2, 1, 3.
        let r = _mm256_permute4x64_epi64::<0xD8>(r);
        if F::BITS == 16 {
            let mut h = pack_words8(r);
            if SAT {
                h = _mm256_castsi256_si128(saturate16(_mm256_castsi128_si256(h), 0x7F80));
            }
            // SAFETY: 8 u16 writable at dst.
            unsafe { _mm_storeu_si128(dst.cast(), h) };
        } else {
            // SAFETY: 8 bytes writable at dst.
            unsafe { _mm_storel_epi64(dst.cast(), pack_bytes8(r)) };
        }
    }
}

// ---------------------------------------------------------------------------------------
// Widening kernels
// ---------------------------------------------------------------------------------------

/// 8 F16 codes (in 16-bit lanes) to f32.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(crate) fn f16_to_f32x8(h: __m128i) -> __m256 {
    _mm256_cvtph_ps(h)
}

/// 8 E4M3 codes (in 16-bit lanes, zero-extended) to f32 (see the module docs).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn e4m3_to_f32x8(c: __m128i) -> __m256 {
    // (code << 7): fraction and exponent land in F16 position; the sign lands in bit 14,
    // where the F16 exponent's top bit must be 0. Adding bit 14 to itself moves it to bit 15.
    let h = _mm_slli_epi16::<7>(c);
    let h = _mm_add_epi16(h, _mm_and_si128(h, _mm_set1_epi16(0x4000)));
    // NaN (magnitude 0x7F) gives 0x3F80 | sign; XOR with 0x3F80 ^ 0x7E00 makes it the F16
    // quiet NaN 0x7E00 | sign.
    let is_nan = _mm_cmpeq_epi16(_mm_and_si128(c, _mm_set1_epi16(0x7F)), _mm_set1_epi16(0x7F));
    let h = _mm_xor_si128(h, _mm_and_si128(is_nan, _mm_set1_epi16(0x3F80 ^ 0x7E00)));
    // Exact: see the module docs (normal inputs and results, power-of-two factor).
    _mm256_mul_ps(_mm256_cvtph_ps(h), _mm256_set1_ps(256.0))
}

/// 8 E4M3 codes (the low 8 bytes) to f32: the 8-element step of E4M3 → f32, and
/// `vcvt::vector::avx2::e4m3x8_to_f32`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(crate) fn e4m3_bytes_to_f32x8(c: __m128i) -> __m256 {
    e4m3_to_f32x8(_mm_cvtepu8_epi16(c))
}

/// 16 E4M3 codes (bytes) to the F16 codes `e4m3_to_f32x8` builds (value times 2^-8, NaN as
/// the F16 quiet NaN), in the 16-bit lanes of a 256-bit vector: the large steps do the
/// integer part 16 lanes at a time.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn e4m3_to_f16x16(c: __m128i) -> __m256i {
    // Sign-extended, then shifted left by 7: fraction and exponent land in F16 position and
    // the sign fills bits 14 and 15; clearing bit 14 leaves `(code & 0x7F) << 7 | sign`.
    let w = _mm256_cvtepi8_epi16(c);
    let h = _mm256_and_si256(_mm256_slli_epi16::<7>(w), splat16(0xBFFF));
    // NaN (low 7 bits all ones): magnitude 0x3F80 becomes 0x7E00 by XOR, sign untouched.
    let is_nan = _mm256_cmpeq_epi16(_mm256_and_si256(w, splat16(0x7F)), splat16(0x7F));
    _mm256_xor_si256(h, _mm256_and_si256(is_nan, splat16(0x3F80 ^ 0x7E00)))
}

/// 8 E5M2 codes (in the low 8 bytes) to f32: `code << 8` is the F16 code of the same value.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(crate) fn e5m2_to_f32x8(c: __m128i) -> __m256 {
    _mm256_cvtph_ps(_mm_unpacklo_epi8(_mm_setzero_si128(), c))
}

/// 8 BF16 codes (in 16-bit lanes) to f32 bits: zero-extend, shift left by 16.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(crate) fn bf16_to_f32x8(h: __m128i) -> __m256i {
    _mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(h))
}

/// Exact f32 → f64 of 4 values that are never f32 subnormals (so MXCSR.DAZ cannot apply).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn widen_pd(f: __m128) -> __m256d {
    _mm256_cvtps_pd(f)
}

pub(super) use crate::simd::x86_64::avx2::widen_pd_any;

/// Stores 8 f32 (as `__m256`) widened to f64: 64 bytes.
///
/// # Safety
/// `dst` writable for 64 bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn store_pd8(dst: *mut u8, f: __m256) {
    let lo = widen_pd(_mm256_castps256_ps128(f));
    let hi = widen_pd(_mm256_extractf128_ps::<1>(f));
    // SAFETY: 64 bytes writable at dst; unaligned stores.
    unsafe {
        _mm256_storeu_pd(dst.cast(), lo);
        _mm256_storeu_pd(dst.add(32).cast(), hi);
    }
}

/// Which narrow format a widening kernel reads.
pub(super) trait WidenFrom {
    /// Bytes per code.
    const SIZE: usize;
    /// Loads 8 codes at `src`.
    ///
    /// # Safety
    /// `src` readable for `8 * SIZE` bytes; AVX2, FMA and F16C present.
    unsafe fn load8(src: *const u8) -> __m128i;
    /// The 8 codes (as loaded) widened to f32 bits.
    ///
    /// # Safety
    /// AVX2, FMA and F16C present.
    unsafe fn to_f32(c: __m128i) -> __m256;
    /// Loads 16 codes at `src` and widens them to f32 (the large steps' unit).
    ///
    /// # Safety
    /// `src` readable for `16 * SIZE` bytes; AVX2, FMA and F16C present.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn load16_to_f32(src: *const u8) -> [__m256; 2] {
        // SAFETY: two 8-code loads inside the 16 codes; the features are the caller's.
        unsafe {
            [
                Self::to_f32(Self::load8(src)),
                Self::to_f32(Self::load8(src.add(8 * Self::SIZE))),
            ]
        }
    }
}

/// Loads 8 bytes into the low half (MOVQ reads exactly 8 bytes).
///
/// # Safety
/// `src` readable for 8 bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn load_bytes8(src: *const u8) -> __m128i {
    // SAFETY: forwarded.
    unsafe { _mm_loadl_epi64(src.cast()) }
}

/// Loads 8 words (16 bytes).
///
/// # Safety
/// `src` readable for 16 bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn load_words8(src: *const u8) -> __m128i {
    // SAFETY: forwarded.
    unsafe { _mm_loadu_si128(src.cast()) }
}

impl WidenFrom for F16 {
    const SIZE: usize = 2;
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn load8(src: *const u8) -> __m128i {
        // SAFETY: forwarded.
        unsafe { load_words8(src) }
    }
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn to_f32(c: __m128i) -> __m256 {
        f16_to_f32x8(c)
    }
}

impl WidenFrom for BF16 {
    const SIZE: usize = 2;
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn load8(src: *const u8) -> __m128i {
        // SAFETY: forwarded.
        unsafe { load_words8(src) }
    }
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn to_f32(c: __m128i) -> __m256 {
        _mm256_castsi256_ps(bf16_to_f32x8(c))
    }
}

impl WidenFrom for F8E4M3 {
    const SIZE: usize = 1;
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn load8(src: *const u8) -> __m128i {
        // SAFETY: forwarded.
        unsafe { load_bytes8(src) }
    }
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn to_f32(c: __m128i) -> __m256 {
        e4m3_bytes_to_f32x8(c)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn load16_to_f32(src: *const u8) -> [__m256; 2] {
        // SAFETY: 16 bytes readable at src (the caller's guarantee).
        let c = unsafe { _mm_loadu_si128(src.cast()) };
        let h = e4m3_to_f16x16(c);
        let f = |h: __m128i| _mm256_mul_ps(_mm256_cvtph_ps(h), _mm256_set1_ps(256.0));
        [
            f(_mm256_castsi256_si128(h)),
            f(_mm256_extracti128_si256::<1>(h)),
        ]
    }
}

impl WidenFrom for F8E5M2 {
    const SIZE: usize = 1;
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn load8(src: *const u8) -> __m128i {
        // SAFETY: forwarded.
        unsafe { load_bytes8(src) }
    }
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn to_f32(c: __m128i) -> __m256 {
        e5m2_to_f32x8(c)
    }
}

/// Narrow format → f32.
struct ToF32<F>(PhantomData<F>);

impl<F: WidenFrom> Steps for ToF32<F> {
    const S: usize = F::SIZE;
    const D: usize = 4;
    const BIG: usize = 32;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        let d = dst.cast::<f32>();
        for k in 0..2 {
            // SAFETY: 32 codes readable at src and 32 f32 writable at dst; step k touches
            // codes and results 16k..16k + 16.
            unsafe {
                let [f0, f1] = F::load16_to_f32(src.add(16 * k * F::SIZE));
                _mm256_storeu_ps(d.add(16 * k), f0);
                _mm256_storeu_ps(d.add(16 * k + 8), f1);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 codes readable at src, 8 f32 writable at dst.
        unsafe { _mm256_storeu_ps(dst.cast(), F::to_f32(F::load8(src))) };
    }
}

/// F16, E4M3 or E5M2 → f64 (values never f32 subnormal).
struct ToF64<F>(PhantomData<F>);

impl<F: WidenFrom> Steps for ToF64<F> {
    const S: usize = F::SIZE;
    const D: usize = 8;
    const BIG: usize = 32;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        for k in 0..2 {
            // SAFETY: 32 codes readable at src and 32 f64 writable at dst; step k touches
            // codes and results 16k..16k + 16.
            unsafe {
                let [f0, f1] = F::load16_to_f32(src.add(16 * k * F::SIZE));
                store_pd8(dst.add(128 * k), f0);
                store_pd8(dst.add(128 * k + 64), f1);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 codes readable at src, 8 f64 writable at dst.
        unsafe { store_pd8(dst, F::to_f32(F::load8(src))) };
    }
}

// ---------------------------------------------------------------------------------------
// Table
// ---------------------------------------------------------------------------------------

/// Defines a table entry for a narrowing kernel: one branch on the policy, then the loop.
macro_rules! narrow_kernel {
    ($name:ident, $sat:ty, $nonsat:ty) => {
        /// # Safety
        /// See [`RawKernel`](crate::arch::RawKernel).
        unsafe fn $name(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
            // SAFETY: the caller passes valid, non-overlapping ranges of `len` elements
            // (RawKernel's contract, which `drive` forwards), and this table is only used
            // through `Backend::Avx2`, which dispatch selects only after `avx2_available()`
            // confirmed AVX2, FMA and F16C.
            unsafe {
                match policy.overflow {
                    Overflow::Saturate => drive::<$sat>(src, dst, len),
                    Overflow::NonSaturating => drive::<$nonsat>(src, dst, len),
                }
            }
        }
    };
}

/// Defines a table entry for a widening kernel (the policy does not apply).
macro_rules! widen_kernel {
    ($name:ident, $steps:ty) => {
        /// # Safety
        /// See [`RawKernel`](crate::arch::RawKernel).
        unsafe fn $name(src: *const u8, dst: *mut u8, len: usize, _policy: Policy) {
            // SAFETY: as for the narrowing kernels: valid ranges from the caller, and the
            // CPU features were checked before `Backend::Avx2` could be selected.
            unsafe { drive::<$steps>(src, dst, len) }
        }
    };
}

narrow_kernel!(f32_to_bf16, F32ToBf16<true>, F32ToBf16<false>);

narrow_kernel!(f64_to_f16, F64ToF16<true>, F64ToF16<false>);
narrow_kernel!(f64_to_bf16, F64ToInt<BF16, true>, F64ToInt<BF16, false>);
narrow_kernel!(
    f64_to_e4m3,
    F64ToInt<F8E4M3, true>,
    F64ToInt<F8E4M3, false>
);
narrow_kernel!(
    f64_to_e5m2,
    F64ToInt<F8E5M2, true>,
    F64ToInt<F8E5M2, false>
);
widen_kernel!(f16_to_f32, ToF32<F16>);
widen_kernel!(bf16_to_f32, ToF32<BF16>);
widen_kernel!(e5m2_to_f32, ToF32<F8E5M2>);
widen_kernel!(f16_to_f64, ToF64<F16>);
widen_kernel!(e4m3_to_f64, ToF64<F8E4M3>);
widen_kernel!(e5m2_to_f64, ToF64<F8E5M2>);

/// Sets this file's kernels in an AVX2 table (`tables.rs` composes the tables).
pub(super) const fn set(t: &mut Kernels) {
    t.set::<f32, BF16>(f32_to_bf16);
    t.set::<f64, F16>(f64_to_f16);
    t.set::<f64, BF16>(f64_to_bf16);
    t.set::<f64, F8E4M3>(f64_to_e4m3);
    t.set::<f64, F8E5M2>(f64_to_e5m2);
    t.set::<F16, f32>(f16_to_f32);
    t.set::<BF16, f32>(bf16_to_f32);
    t.set::<F8E5M2, f32>(e5m2_to_f32);
    t.set::<F16, f64>(f16_to_f64);
    t.set::<F8E4M3, f64>(e4m3_to_f64);
    t.set::<F8E5M2, f64>(e5m2_to_f64);
}
