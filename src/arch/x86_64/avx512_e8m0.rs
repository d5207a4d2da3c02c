//! E8M0 ↔ F16 on the AVX-512 tiers, in 16-bit lanes: 32 values a vector, integer only.
//!
//! # E8M0 → F16 ([`e8m0_to_f16`])
//!
//! Code `c` is 2^(c − 127). With `cc = min(c, 143)` (2^16 and up all overflow F16) in a
//! 16-bit lane, its F16 code (rounded to nearest even, which only the underflow needs: 2^-25
//! and below are `+0`, the tie at 2^-25 going to the even `+0`) is the OR of
//!
//! * the normal part `(cc −sat 112) << 10`: `(c − 112) << 10` for `113 <= c <= 142`, zero for
//!   `c <= 112` (the unsigned saturating subtract), and `31 << 10 = 0x7C00` (+Inf) for
//!   `cc = 143`;
//! * the subnormal part `0x200 >> (112 − cc)` (`VPSRLVW`): `1 << (cc − 103)` for
//!   `103 <= cc <= 112`, zero for `cc <= 102` (a shift of 10 or more) and for `cc >= 113`
//!   (`112 − cc` wraps to at least `0xFFE1`, and `VPSRLVW` gives zero for counts above 15).
//!
//! `Saturate` turns the overflow lanes (`cc = 143`) into MAX, `0x7BFF`, and code `0xFF` (NaN)
//! becomes `0x7E00`, the F16 code of the quiet NaN `0x7FC00000` that widening gives (the
//! other NaN policies are the dispatcher's, `Kernels::set_direct`).
//!
//! # F16 → E8M0 ([`f16_to_e8m0`])
//!
//! For a positive normal F16 code `h` (`0x0400..=0x7BFF`) the nearest power of two in linear
//! space, ties up, is the exponent plus one when the fraction is at least one half, so the
//! code is `((h + 0x200) >> 10) + 112` (the carry of the fraction's top bit moving into the
//! exponent field; at most `31 + 112 = 143`, no E8M0 overflow). Zeros, negative values,
//! ±Inf and NaN give `0xFF` (E8M0 has no zero and no sign; NaN under `Preserve`, the other NaN
//! policies being the dispatcher's). F16 subnormals, rare in data, need the position of their
//! leading bit: a vector holding one converts its 32 values by `VCVTPH2PS` and the f32 rule
//! (`f32_e8m0`), which is exact for them.
//!
//! No float instruction acts on the E8M0 → F16 path, and `VCVTPH2PS` is exact and ignores
//! MXCSR (DAZ does not apply to half-precision inputs), so MXCSR cannot change any result.

use core::arch::x86_64::*;

use crate::arch::Kernels;
use crate::options::Policy;
use crate::{F8E8M0, F16, Overflow};

/// Values a step.
const STEP: usize = 32;

/// The F16 codes of 32 E8M0 codes (`c`, zero-extended to words), module docs.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn f16_words<const SAT: bool>(c: __m512i) -> __m512i {
    let w = _mm512_set1_epi16;
    let cc = _mm512_min_epu16(c, w(143));
    let normal = _mm512_slli_epi16::<10>(_mm512_subs_epu16(cc, w(112)));
    let sub = _mm512_srlv_epi16(w(0x200), _mm512_sub_epi16(w(112), cc));
    let mut h = _mm512_or_si512(normal, sub);
    if SAT {
        let inf = _mm512_cmpeq_epi16_mask(cc, w(143));
        h = _mm512_mask_sub_epi16(h, inf, h, w(1));
    }
    let nan = _mm512_cmpeq_epi16_mask(c, w(0xFF));
    _mm512_mask_mov_epi16(h, nan, w(0x7E00))
}

/// E8M0 → F16 over `len` values.
///
/// # Safety
/// [`RawKernel`](crate::arch::RawKernel) contract; the CPU has the `Avx512` tier's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn e8m0_f16<const SAT: bool>(src: *const u8, dst: *mut u8, len: usize) {
    let mut i = 0;
    while len - i >= STEP {
        // SAFETY: values i..i + 32 are inside both slices: 32 bytes read, 64 written.
        unsafe {
            let c = _mm512_cvtepu8_epi16(_mm256_loadu_si256(src.add(i).cast()));
            _mm512_storeu_si512(dst.add(2 * i).cast(), f16_words::<SAT>(c));
        }
        i += STEP;
    }
    let n = len - i;
    if n > 0 {
        let k: __mmask32 = (1u32 << n) - 1;
        // SAFETY: the masks enable values i..i + n only (n < 32), inside both slices;
        // masked-off lanes are neither read nor written.
        unsafe {
            let c = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(k, src.add(i).cast()));
            _mm512_mask_storeu_epi16(dst.add(2 * i).cast(), k, f16_words::<SAT>(c));
        }
    }
}

/// The E8M0 codes of 16 f32 (bits `x`, exact F16 values, so never an f32 subnormal) in
/// 32-bit lanes: `((x + 0x400000) >> 23)` for positive finite non-zero `x` (ties up, as
/// for F16 above), `0xFF` otherwise.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn f32_e8m0(x: __m512i) -> __m512i {
    let code = _mm512_srli_epi32::<23>(_mm512_add_epi32(x, _mm512_set1_epi32(0x40_0000)));
    // Signed 1 ..= 0x7F7FFFFF: positive, non-zero, finite.
    let ok = _mm512_cmplt_epu32_mask(
        _mm512_sub_epi32(x, _mm512_set1_epi32(1)),
        _mm512_set1_epi32(0x7F7F_FFFF),
    );
    _mm512_mask_mov_epi32(_mm512_set1_epi32(0xFF), ok, code)
}

/// The E8M0 codes of 32 F16 codes `h` as bytes (module docs).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn e8m0_bytes(h: __m512i) -> __m256i {
    let w = _mm512_set1_epi16;
    // 0x0400 ..= 0x7BFF: positive normal.
    let normal = _mm512_cmplt_epu16_mask(_mm512_sub_epi16(h, w(0x400)), w(0x7800));
    // 0x0001 ..= 0x03FF: positive subnormal.
    let sub = _mm512_cmplt_epu16_mask(_mm512_sub_epi16(h, w(1)), w(0x3FF));
    if sub != 0 {
        // Both halves through f32 (rare: a positive F16 subnormal in these 32 values).
        let lo = _mm512_castps_si512(_mm512_cvtph_ps(_mm512_castsi512_si256(h)));
        let hi = _mm512_castps_si512(_mm512_cvtph_ps(_mm512_extracti64x4_epi64::<1>(h)));
        let (lo, hi) = (
            _mm512_cvtepi32_epi8(f32_e8m0(lo)),
            _mm512_cvtepi32_epi8(f32_e8m0(hi)),
        );
        return _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
    }
    let code = _mm512_add_epi16(
        _mm512_srli_epi16::<10>(_mm512_add_epi16(h, w(0x200))),
        w(112),
    );
    _mm512_cvtepi16_epi8(_mm512_mask_mov_epi16(w(0xFF), normal, code))
}

/// F16 → E8M0 over `len` values.
///
/// # Safety
/// [`RawKernel`](crate::arch::RawKernel) contract; the CPU has the `Avx512` tier's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn f16_e8m0(src: *const u8, dst: *mut u8, len: usize) {
    let mut i = 0;
    while len - i >= STEP {
        // SAFETY: values i..i + 32 are inside both slices: 64 bytes read, 32 written.
        unsafe {
            let h = _mm512_loadu_si512(src.add(2 * i).cast());
            _mm256_storeu_si256(dst.add(i).cast(), e8m0_bytes(h));
        }
        i += STEP;
    }
    let n = len - i;
    if n > 0 {
        let k: __mmask32 = (1u32 << n) - 1;
        // SAFETY: the masks enable values i..i + n only (n < 32), inside both slices;
        // masked-off lanes are neither read nor written (they load as zeros, which the
        // conversion maps to 0xFF without touching memory).
        unsafe {
            let h = _mm512_maskz_loadu_epi16(k, src.add(2 * i).cast());
            _mm256_mask_storeu_epi8(dst.add(i).cast(), k, e8m0_bytes(h));
        }
    }
}

/// The `E8M0 → F16` kernel.
///
/// # Safety
/// [`RawKernel`](crate::arch::RawKernel) contract; the table holding it is chosen only when
/// `avx512_available` found the `Avx512` tier's features.
unsafe fn e8m0_to_f16(src: *const u8, dst: *mut u8, len: usize, p: Policy) {
    // SAFETY: forwarded contract; the features are the tier's.
    unsafe {
        match p.overflow {
            Overflow::Saturate => e8m0_f16::<true>(src, dst, len),
            Overflow::NonSaturating => e8m0_f16::<false>(src, dst, len),
        }
    }
}

/// The `F16 → E8M0` kernel (no F16 value overflows E8M0, so no policy applies here).
///
/// # Safety
/// As for [`e8m0_to_f16`].
unsafe fn f16_to_e8m0(src: *const u8, dst: *mut u8, len: usize, _p: Policy) {
    // SAFETY: forwarded contract; the features are the tier's.
    unsafe { f16_e8m0(src, dst, len) }
}

/// Sets E8M0 → F16 and F16 → E8M0. Measured against the generic 512-bit kernels and the
/// `avx2` ones in docs/performance.md, "E8M0 ↔ F16 in 16-bit lanes" (1.4× and 2.2× the generic
/// kernels on the Intel VM).
pub(super) const fn set(t: &mut Kernels) {
    t.set_direct::<F8E8M0, F16>(e8m0_to_f16);
    t.set_direct::<F16, F8E8M0>(f16_to_e8m0);
}
