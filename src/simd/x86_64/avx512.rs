//! [`Vector`] for AVX-512 (F/BW/VL/DQ, plus the AVX2, FMA and F16C every such CPU has):
//! 16 lanes in a `__m512i`, lane masks in `__mmask16` registers, partial loads and stores
//! through masks (masked-off lanes are neither read nor written and do not fault), and the
//! instantiation of the generic kernels for the `Avx512` tiers.

use core::arch::x86_64::*;

use crate::simd::Vector;

/// Round to nearest even, exceptions suppressed (overrides MXCSR.RC).
const RNE: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
/// Round toward zero, exceptions suppressed (overrides MXCSR.RC).
const RZ: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;

/// 16 lanes of 32 bits.
#[derive(Clone, Copy)]
pub(crate) struct V512(__m512i);

/// Mask of the first `n` of 16 lanes, `n <= 16`.
#[inline(always)]
fn mask16(n: usize) -> __mmask16 {
    debug_assert!(n <= 16);
    ((1u32 << n) - 1) as __mmask16
}

/// `x` as the count operand of the `VPSRLD`/`VPSLLD` forms that take one from a register
/// (LLVM turns a constant count into the immediate form).
#[inline(always)]
unsafe fn count(n: u32) -> __m128i {
    // SAFETY: SSE2, which every x86-64 CPU has.
    unsafe { _mm_cvtsi32_si128(n as i32) }
}

/// Compresses 8 f64 to their high words with a sticky bit (`hi | (lo != 0)`).
#[inline(always)]
unsafe fn hi_sticky(x: __m512i) -> __m256i {
    // SAFETY: the caller has the features (`Vector`'s contract).
    unsafe {
        let hi = _mm512_srli_epi64::<32>(x);
        let sticky = _mm512_test_epi64_mask(x, _mm512_set1_epi64(0xFFFF_FFFF));
        _mm512_cvtepi64_epi32(_mm512_mask_or_epi64(hi, sticky, hi, _mm512_set1_epi64(1)))
    }
}

/// Rounds 8 f64 to odd into f32 bits: truncation (`{rz-sae}`), then the lowest bit set where
/// it was inexact. Where the truncated f32 is normal, truncation drops exactly the f64's low
/// 29 fraction bits, so "inexact" is one bit test of those; values above f32::MAX truncate
/// to f32::MAX (odd), which overflows every target as the source does; Inf is exact; NaN
/// stays NaN. Below 2^-126 (f32 subnormal, FTZ, DAZ) the bits may be off, with the sign kept.
#[inline(always)]
unsafe fn odd_from_f64(x: __m512d) -> __m256i {
    // SAFETY: the caller has the features (`Vector`'s contract).
    unsafe {
        let t = _mm256_castps_si256(_mm512_cvt_roundpd_ps::<RZ>(x));
        let inexact =
            _mm512_test_epi64_mask(_mm512_castpd_si512(x), _mm512_set1_epi64(0x1FFF_FFFF));
        _mm256_mask_or_epi32(t, inexact, t, _mm256_set1_epi32(1))
    }
}

/// 8 lanes of f32 bits to f64, exactly whatever MXCSR holds: `VCVTPS2PD` (exact; NaN quieted
/// with its payload kept), except that DAZ would read an f32 denormal as zero, so those lanes
/// (exponent field zero) are rebuilt as `fraction * 2^-149` (an exact integer conversion and
/// an exact power-of-two product, a normal f64) with the sign of the source.
#[inline(always)]
unsafe fn f64_from_bits(x: __m256i) -> __m512d {
    // SAFETY: the caller has the features (`Vector`'s contract).
    unsafe {
        let d = _mm512_cvtps_pd(_mm256_castsi256_ps(x));
        let sub = _mm256_testn_epi32_mask(x, _mm256_set1_epi32(0x7F80_0000));
        let frac = _mm256_and_si256(x, _mm256_set1_epi32(0x007F_FFFF));
        let scale = _mm512_set1_pd(f64::from_bits((1023 - 149) << 52));
        let m = _mm512_mul_round_pd::<RNE>(_mm512_cvtepi32_pd(frac), scale);
        let sign = _mm512_castsi512_pd(_mm512_slli_epi64::<63>(_mm512_srli_epi64::<31>(
            _mm512_cvtepu32_epi64(x),
        )));
        _mm512_mask_or_pd(d, sub, m, sign)
    }
}

/// 16 lanes of f32 bits rounded to F16 codes. `VCVTPS2PH` with the rounding in the
/// immediate is the IEEE conversion the codec specifies, whatever MXCSR.RC holds; DAZ can
/// only zero f32 denormal inputs, which are far below half the smallest F16 subnormal and
/// give ±0 either way. With `sat`, ±Inf (what overflow gives; NaN codes are above it)
/// becomes ±MAX.
#[inline(always)]
unsafe fn to_f16(x: __m512i, sat: bool) -> __m256i {
    // SAFETY: the caller has the features (`Vector`'s contract).
    unsafe {
        let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT }>(_mm512_castsi512_ps(x));
        if sat {
            let inf = _mm256_cmpeq_epi16_mask(
                _mm256_and_si256(h, _mm256_set1_epi16(0x7FFF)),
                _mm256_set1_epi16(0x7C00),
            );
            _mm256_mask_sub_epi16(h, inf, h, _mm256_set1_epi16(1))
        } else {
            h
        }
    }
}

impl Vector for V512 {
    const FUSED_FMA: bool = true;
    const MUL_KEEPS_QNAN: bool = true;
    const LANES: usize = 16;
    type Mask = __mmask16;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: (this method and every one below) the caller has the features (`Vector`'s contract), and
        // the memory methods touch only the `n` elements the caller vouches for, through
        // masks whose masked-off lanes are neither read nor written.
        unsafe { V512(_mm512_set1_epi32(x as i32)) }
    }
    #[inline(always)]
    unsafe fn and(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_and_si512(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn or(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_or_si512(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn or_and(self, b: Self, c: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). Ternary-logic table
        // A | (B & C).
        unsafe { V512(_mm512_ternarylogic_epi32::<0xF8>(self.0, b.0, c.0)) }
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_add_epi32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn sub(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_sub_epi32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn shl(self, n: u32) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_sll_epi32(self.0, count(n))) }
    }
    #[inline(always)]
    unsafe fn shr(self, n: u32) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_srl_epi32(self.0, count(n))) }
    }
    #[inline(always)]
    unsafe fn min_u32(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_min_epu32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn max_u32(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_max_epu32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn reduce_max_u32(self) -> u32 {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { _mm512_reduce_max_epu32(self.0) }
    }
    #[inline(always)]
    unsafe fn reduce_max_each(v: &[Self; 16]) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract); no memory is touched.
        unsafe {
            // Per 128-bit quarter, as AVX2 per half: neighbours' interleaves, then their
            // 64-bit interleaves, each followed by a maximum, leave lane `j` of quarter `q`
            // of `g[k]` with quarter `q`'s maximum of vector `4k + j`. Two rounds of
            // `VSHUFI32X4` and maxima then fold the four quarters of each `g[k]` into
            // quarter `k` of the result: lane `4k + j` is the maximum of vector `4k + j`.
            // (Macros, not closures: a closure would be a function without the features.)
            macro_rules! p {
                ($a:expr, $b:expr) => {{
                    let (a, b) = ($a, $b);
                    _mm512_max_epu32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b))
                }};
            }
            macro_rules! q {
                ($a:expr, $b:expr) => {{
                    let (a, b) = ($a, $b);
                    _mm512_max_epu32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b))
                }};
            }
            let g = [
                q!(p!(v[0].0, v[1].0), p!(v[2].0, v[3].0)),
                q!(p!(v[4].0, v[5].0), p!(v[6].0, v[7].0)),
                q!(p!(v[8].0, v[9].0), p!(v[10].0, v[11].0)),
                q!(p!(v[12].0, v[13].0), p!(v[14].0, v[15].0)),
            ];
            // [a.Q0, a.Q1, b.Q0, b.Q1] against [a.Q2, a.Q3, b.Q2, b.Q3]: quarters 0, 1 hold
            // `a`'s two partial maxima, 2, 3 `b`'s.
            macro_rules! fold {
                ($a:expr, $b:expr, $lo:literal, $hi:literal) => {{
                    let (a, b) = ($a, $b);
                    _mm512_max_epu32(
                        _mm512_shuffle_i32x4::<$lo>(a, b),
                        _mm512_shuffle_i32x4::<$hi>(a, b),
                    )
                }};
            }
            let m01 = fold!(g[0], g[1], 0b01_00_01_00, 0b11_10_11_10);
            let m23 = fold!(g[2], g[3], 0b01_00_01_00, 0b11_10_11_10);
            // Quarters 0 and 2 of each against 1 and 3: [g0, g1, g2, g3] in order.
            V512(fold!(m01, m23, 0b10_00_10_00, 0b11_01_11_01))
        }
    }
    #[inline(always)]
    unsafe fn unzip_words(self) -> Self {
        // Word j < 16 from word 2j, word 16 + j from word 2j + 1.
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            let idx = _mm512_set_epi16(
                31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1, 30, 28, 26, 24, 22, 20,
                18, 16, 14, 12, 10, 8, 6, 4, 2, 0,
            );
            V512(_mm512_permutexvar_epi16(idx, self.0))
        }
    }
    #[inline(always)]
    unsafe fn lookup_u16(self, t: &[Self; 2]) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `VPERMW` reads the low 5
        // bits of each index word: the indices below 16 read only the table's words, and
        // the others' words are unspecified.
        unsafe { V512(_mm512_permutexvar_epi16(self.0, t[0].0)) }
    }
    #[inline(always)]
    unsafe fn inc(self, m: __mmask16) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            V512(_mm512_mask_add_epi32(
                self.0,
                m,
                self.0,
                _mm512_set1_epi32(1),
            ))
        }
    }
    const FAST_LOOKUP16: bool = true;
    #[inline(always)]
    unsafe fn lookup16(t: &[Self; 4], idx: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). VPERMD uses the low 4
        // bits of each index.
        unsafe { V512(_mm512_permutexvar_epi32(idx.0, t[0].0)) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_xor_si512(self.0, b.0)) }
    }
    const WORD_LOOKUP: bool = true;
    #[inline(always)]
    unsafe fn lookup_words(self, t: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `VPERMW` reads the low 5
        // bits of each index word, which are the whole index (below 32).
        unsafe { V512(_mm512_permutexvar_epi16(self.0, t.0)) }
    }
    #[inline(always)]
    unsafe fn load_u32_halves(p: *const u8, q: *const u8) -> Self {
        // SAFETY: the caller has the features and vouches for 32 bytes at `p` and at `q`.
        unsafe {
            let lo = _mm256_loadu_si256(p.cast());
            V512(_mm512_inserti64x4::<1>(
                _mm512_castsi256_si512(lo),
                _mm256_loadu_si256(q.cast()),
            ))
        }
    }
    #[inline(always)]
    unsafe fn load_nibble_words<const SPLIT: bool>(p: *const u8) -> Self {
        // SAFETY: the caller has the features and vouches for the 16 bytes at `p`.
        unsafe {
            let x = _mm_loadu_si128(p.cast());
            if SPLIT {
                // Sub-block 0's low nibbles, its high nibbles, then sub-block 1's, as bytes,
                // then widened to words.
                let m = _mm_set1_epi8(0xF);
                let lo = _mm_and_si128(x, m);
                let hi = _mm_and_si128(_mm_srli_epi16::<4>(x), m);
                let a = _mm_unpacklo_epi64(lo, hi);
                let b = _mm_unpackhi_epi64(lo, hi);
                let ab = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(a), b);
                V512(_mm512_cvtepu8_epi16(ab))
            } else {
                // Byte j in dword j: `b | b << 12` has its low nibble in bits 0..3 and its
                // high nibble in bits 16..19, which the mask keeps (ternary-logic table
                // (A | B) & C).
                let b = _mm512_cvtepu8_epi32(x);
                V512(_mm512_ternarylogic_epi32::<0xA8>(
                    b,
                    _mm512_slli_epi32::<12>(b),
                    _mm512_set1_epi32(0x000F_000F),
                ))
            }
        }
    }
    #[inline(always)]
    unsafe fn f16_codes(self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_cvtepu16_epi32(to_f16(self.0, false))) }
    }
    #[inline(always)]
    unsafe fn eq(self, b: Self) -> __mmask16 {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { _mm512_cmpeq_epi32_mask(self.0, b.0) }
    }
    #[inline(always)]
    unsafe fn gt_i32(self, b: Self) -> __mmask16 {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { _mm512_cmpgt_epi32_mask(self.0, b.0) }
    }
    #[inline(always)]
    unsafe fn any(m: __mmask16) -> bool {
        m != 0
    }
    #[inline(always)]
    unsafe fn any_nan4(v: &[Self; 4]) -> bool {
        // SAFETY: the caller has the features (`Vector`'s contract). An unordered compare is
        // true in a lane where either operand is a NaN, whatever MXCSR holds.
        unsafe {
            let (x0, x1) = (_mm512_castsi512_ps(v[0].0), _mm512_castsi512_ps(v[1].0));
            let (x2, x3) = (_mm512_castsi512_ps(v[2].0), _mm512_castsi512_ps(v[3].0));
            let a = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x0, x1);
            let b = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x2, x3);
            (a | b) != 0
        }
    }
    #[inline(always)]
    unsafe fn select(m: __mmask16, t: Self, f: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_mask_blend_epi32(m, f.0, t.0)) }
    }
    #[inline(always)]
    unsafe fn select_or_and(m: __mmask16, a: Self, b: Self, c: Self, f: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). Where `m`, ternary-logic
        // table A | (B & C) of `a`, `b`, `c`; elsewhere `f` (the instruction's first operand
        // doubles as the destination, so `f` is moved into place first).
        unsafe {
            let r = _mm512_mask_mov_epi32(f.0, m, a.0);
            V512(_mm512_mask_ternarylogic_epi32::<0xF8>(r, m, b.0, c.0))
        }
    }
    #[inline(always)]
    unsafe fn fma_rne(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            let (a, b, c) = (
                _mm512_castsi512_ps(a.0),
                _mm512_castsi512_ps(b.0),
                _mm512_castsi512_ps(c.0),
            );
            V512(_mm512_castps_si512(_mm512_fmadd_round_ps::<RNE>(a, b, c)))
        }
    }
    #[inline(always)]
    unsafe fn mul_ieee(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `{rn-sae}`; FTZ and
        // DAZ are clear under the block kernels' MXCSR (the trait's contract).
        unsafe {
            let (a, b) = (_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(b.0));
            V512(_mm512_castps_si512(_mm512_mul_round_ps::<RNE>(a, b)))
        }
    }
    #[inline(always)]
    unsafe fn div_ieee(self, b: Self) -> Self {
        // SAFETY: as `mul_ieee`.
        unsafe {
            let (a, b) = (_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(b.0));
            V512(_mm512_castps_si512(_mm512_div_round_ps::<RNE>(a, b)))
        }
    }
    #[inline(always)]
    unsafe fn sub_ieee(self, b: Self) -> Self {
        // SAFETY: as `mul_ieee`.
        unsafe {
            let (a, b) = (_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(b.0));
            V512(_mm512_castps_si512(_mm512_sub_round_ps::<RNE>(a, b)))
        }
    }
    #[inline(always)]
    unsafe fn load_nibbles_split(p: *const u8) -> [Self; 4] {
        // SAFETY: the caller has the features and vouches for the 8 bytes at `p`.
        unsafe {
            // The low nibbles in bytes 0..8, the high ones in bytes 8..16, then widened.
            let b = _mm_loadl_epi64(p.cast());
            let m = _mm_set1_epi8(0xF);
            let lo = _mm_and_si128(b, m);
            let hi = _mm_and_si128(_mm_srli_epi16::<4>(b), m);
            let v = V512(_mm512_cvtepu8_epi32(_mm_unpacklo_epi64(lo, hi)));
            [v; 4]
        }
    }
    #[inline(always)]
    unsafe fn store_nibbles_split(v: [Self; 4], p: *mut u8) {
        // SAFETY: the caller has the features and vouches for the 8 bytes at `p`.
        unsafe {
            // Codes below 16: byte j | byte j + 8 << 4 (the 16-bit shift moves no bit
            // across a byte, the bytes being below 16).
            let b = _mm512_cvtepi32_epi8(v[0].0);
            let r = _mm_or_si128(b, _mm_slli_epi16::<4>(_mm_srli_si128::<8>(b)));
            _mm_storel_epi64(p.cast(), r);
        }
    }
    #[inline(always)]
    unsafe fn madd16(self, w: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_madd_epi16(self.0, w.0)) }
    }
    #[inline(always)]
    unsafe fn cvt_u24_f32(self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_castps_si512(_mm512_cvtepi32_ps(self.0))) }
    }
    #[inline(always)]
    unsafe fn mul_exact_f32(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            let p =
                _mm512_mul_round_ps::<RNE>(_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(b.0));
            V512(_mm512_castps_si512(p))
        }
    }

    #[inline(always)]
    unsafe fn mul_rne(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `{rn-sae}`: round to
        // nearest even whatever MXCSR.RC says.
        unsafe {
            let p =
                _mm512_mul_round_ps::<RNE>(_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(b.0));
            V512(_mm512_castps_si512(p))
        }
    }
    /// The truncated product (`{rz-sae}`) with its last bit set where the exact error is not
    /// zero: four operations instead of the default's dozen. The residual `x · s − t` of a
    /// truncated product is exact wherever it is normal (as for a rounded one), and
    /// "not equal to zero, ordered" leaves the lanes of `±Inf` (whose residual is NaN) and
    /// NaN as they are. A product beyond f32's range truncates to `±MAX`, which is odd.
    #[inline(always)]
    unsafe fn mul_odd(self, s: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract); register operands only.
        unsafe {
            let (x, s) = (_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(s.0));
            let t = _mm512_mul_round_ps::<RZ>(x, s);
            let e = _mm512_fmsub_round_ps::<RNE>(x, s, t);
            let inexact = _mm512_cmp_ps_mask::<_CMP_NEQ_OQ>(e, _mm512_setzero_ps());
            let t = _mm512_castps_si512(t);
            V512(_mm512_mask_or_epi32(t, inexact, t, _mm512_set1_epi32(1)))
        }
    }
    #[inline(always)]
    unsafe fn div_rne(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `{rn-sae}`, as above.
        unsafe {
            let q =
                _mm512_div_round_ps::<RNE>(_mm512_castsi512_ps(self.0), _mm512_castsi512_ps(b.0));
            V512(_mm512_castps_si512(q))
        }
    }

    /// Markstein's correction, twice. `y = RN(1/b)` has a relative error below `2^-24` (half
    /// an ulp of `1/b` is at most `2^-24 · 1/b`). `q0 = RN(x · y)` is within 1.5 ulps of
    /// `x / b`; the first correction `q1 = RN(q0 + RN(x − b·q0) · y)` leaves the error
    /// `(x/b − q0)(b·y − 1)` (below `2^-22` ulp) plus its own rounding, so `q1` is within
    /// one ulp. Markstein's theorem (a reciprocal with relative error below `2^-p` and a
    /// quotient within one ulp: Markstein 1990; Cornea, Harrison, Tang, *Scientific
    /// Computing on Itanium-based Systems*, 2002) then makes the residual `x − b·q1` exact
    /// and `q2 = RN(q1 + (x − b·q1) · y)` the correctly rounded quotient. Each step is one
    /// `{rn-sae}` product or fused multiply-add, so MXCSR.RC plays no part. The theorem
    /// needs no underflow: for `|x / b| >= 2^-20` and `b >= 2^-60`, `x` and every non-zero
    /// residual are multiples of `2^(e_b + e_q − 46) >= 2^-126`, normal, so DAZ and FTZ
    /// leave them alone. Below that the steps stay within a few ulps of a value under
    /// `2^-20` (or give zero), under `2^-19`. The sign: `b > 0`, so the quotient has `x`'s.
    /// The residual is taken as `r = q·b − x` and the step as `q − r·y` (the same values as
    /// `x − q·b` and `q + (x − q·b)·y`, negation being exact), so that a zero keeps `x`'s
    /// sign with no fix: for `x = ±0`, `q0 = ±0`, `r = (±0) − (±0) = +0` and `q − r·y` is
    /// `(±0) + (−0)`, `±0` again; where `x · y` underflows or is flushed, `q0` is a zero of
    /// `x`'s sign and `q0 − r·y = q0 + x·y` has `x`'s sign whether it rounds to a zero or
    /// not; elsewhere the exact value `q − r·y` is not zero. (`internals.rs`,
    /// `avx512_div_recip_is_the_division`, checks the sign of every small quotient, zeros
    /// included, under FTZ and DAZ too.)
    #[inline(always)]
    unsafe fn div_recip_rne(self, b: Self, y: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract); register operands only.
        unsafe {
            let x = _mm512_castsi512_ps(self.0);
            let (b, y) = (_mm512_castsi512_ps(b.0), _mm512_castsi512_ps(y.0));
            let q0 = _mm512_mul_round_ps::<RNE>(x, y);
            let r0 = _mm512_fmsub_round_ps::<RNE>(q0, b, x);
            let q1 = _mm512_fnmadd_round_ps::<RNE>(r0, y, q0);
            let r1 = _mm512_fmsub_round_ps::<RNE>(q1, b, x);
            V512(_mm512_castps_si512(_mm512_fnmadd_round_ps::<RNE>(
                r1, y, q1,
            )))
        }
    }
    #[inline(always)]
    unsafe fn load_u8(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let b = if n == 16 {
                _mm_loadu_si128(p.cast())
            } else {
                _mm_maskz_loadu_epi8(mask16(n), p.cast())
            };
            V512(_mm512_cvtepu8_epi32(b))
        }
    }
    #[inline(always)]
    unsafe fn load_u16(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let h = if n == 16 {
                _mm256_loadu_si256(p.cast())
            } else {
                _mm256_maskz_loadu_epi16(mask16(n), p.cast())
            };
            V512(_mm512_cvtepu16_epi32(h))
        }
    }
    #[inline(always)]
    unsafe fn load_u32(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            if n == 16 {
                V512(_mm512_loadu_si512(p.cast()))
            } else {
                V512(_mm512_maskz_loadu_epi32(mask16(n), p.cast()))
            }
        }
    }
    #[inline(always)]
    unsafe fn load_f16(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let h = if n == 16 {
                _mm256_loadu_si256(p.cast())
            } else {
                _mm256_maskz_loadu_epi16(mask16(n), p.cast())
            };
            V512(_mm512_castps_si512(_mm512_cvtph_ps(h)))
        }
    }
    #[inline(always)]
    unsafe fn load_f64_odd(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let (lo, hi) = if n == 16 {
                (_mm512_loadu_pd(p.cast()), _mm512_loadu_pd(p.add(64).cast()))
            } else {
                let k = mask16(n);
                (
                    _mm512_maskz_loadu_pd(k as u8, p.cast()),
                    // Lanes 8.. of the mask: none when n <= 8, so nothing past the slice.
                    _mm512_maskz_loadu_pd((k >> 8) as u8, p.add(64).cast()),
                )
            };
            let v = _mm512_castsi256_si512(odd_from_f64(lo));
            V512(_mm512_inserti64x4::<1>(v, odd_from_f64(hi)))
        }
    }
    #[inline(always)]
    unsafe fn load_f64_hi(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let (lo, hi) = if n == 16 {
                (
                    _mm512_loadu_si512(p.cast()),
                    _mm512_loadu_si512(p.add(64).cast()),
                )
            } else {
                let k = mask16(n);
                (
                    _mm512_maskz_loadu_epi64(k as u8, p.cast()),
                    _mm512_maskz_loadu_epi64((k >> 8) as u8, p.add(64).cast()),
                )
            };
            let v = _mm512_castsi256_si512(hi_sticky(lo));
            V512(_mm512_inserti64x4::<1>(v, hi_sticky(hi)))
        }
    }
    #[inline(always)]
    unsafe fn load_nibbles(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            // Byte i of the 8 goes to 64-bit lane i; `b | b << 28` puts its low nibble in the
            // lane's low dword (bits 0..3) and its high nibble in the high dword (bits
            // 0..3 of it); the mask keeps those.
            let bytes = if n == 16 {
                _mm_loadl_epi64(p.cast())
            } else {
                _mm_maskz_loadu_epi8(mask16(n.div_ceil(2)), p.cast())
            };
            let b = _mm512_cvtepu8_epi64(bytes);
            let v = _mm512_or_si512(b, _mm512_slli_epi64::<28>(b));
            V512(_mm512_and_si512(v, _mm512_set1_epi32(0xF)))
        }
    }

    #[inline(always)]
    unsafe fn store_u8(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            if n == 16 {
                _mm_storeu_si128(p.cast(), _mm512_cvtepi32_epi8(self.0));
            } else {
                _mm512_mask_cvtepi32_storeu_epi8(p.cast(), mask16(n), self.0);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_u16(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            if n == 16 {
                _mm256_storeu_si256(p.cast(), _mm512_cvtepi32_epi16(self.0));
            } else {
                _mm512_mask_cvtepi32_storeu_epi16(p.cast(), mask16(n), self.0);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_u32(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            if n == 16 {
                _mm512_storeu_si512(p.cast(), self.0);
            } else {
                _mm512_mask_storeu_epi32(p.cast(), mask16(n), self.0);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_u32_in_lines(self, p: *mut u8) {
        // SAFETY: the caller has the features and vouches for the 16 lanes at `p`, 4-byte
        // aligned. Off a line by `o = 4k` bytes, the lanes belong at lanes `k..16` of the line
        // that holds `p` (lanes `0..16 − k`) and at lanes `0..k` of the next (lanes
        // `16 − k..16`): rotated up by `k` lanes, lane `j` holds lane `(j − k) mod 16`, and
        // two masked stores at the two line starts write exactly the 64 bytes `p..p + 64`
        // (masked-off lanes are not accessed, so the line start before `p` is never
        // touched).
        unsafe {
            let o = p as usize & 63;
            if o == 0 {
                _mm512_storeu_si512(p.cast(), self.0);
                return;
            }
            debug_assert!(o.is_multiple_of(4));
            let k = (o / 4) as u32;
            let idx = _mm512_and_si512(
                _mm512_sub_epi32(
                    _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                    _mm512_set1_epi32(k as i32),
                ),
                _mm512_set1_epi32(15),
            );
            let r = _mm512_permutexvar_epi32(idx, self.0);
            let line = p.wrapping_sub(o);
            let high: __mmask16 = !((1u16 << k) - 1);
            _mm512_mask_storeu_epi32(line.cast(), high, r);
            _mm512_mask_storeu_epi32(line.wrapping_add(64).cast(), !high, r);
        }
    }
    #[inline(always)]
    unsafe fn store_f64(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let lo = f64_from_bits(_mm512_castsi512_si256(self.0));
            let hi = f64_from_bits(_mm512_extracti64x4_epi64::<1>(self.0));
            if n == 16 {
                _mm512_storeu_pd(p.cast(), lo);
                _mm512_storeu_pd(p.add(64).cast(), hi);
            } else {
                let k = mask16(n);
                _mm512_mask_storeu_pd(p.cast(), k as u8, lo);
                _mm512_mask_storeu_pd(p.add(64).cast(), (k >> 8) as u8, hi);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_f16(self, p: *mut u8, n: usize, sat: bool) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let h = to_f16(self.0, sat);
            if n == 16 {
                _mm256_storeu_si256(p.cast(), h);
            } else {
                _mm256_mask_storeu_epi16(p.cast(), mask16(n), h);
            }
        }
    }
    #[inline(always)]
    unsafe fn round_f16(self, sat: bool) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V512(_mm512_castps_si512(_mm512_cvtph_ps(to_f16(self.0, sat)))) }
    }
    #[inline(always)]
    unsafe fn store_nibbles(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            // As 64-bit lanes, `v | v >> 28` holds lane 2i | lane 2i+1 << 4 in its low byte
            // (both codes are below 16), and VPMOVQB keeps that byte.
            let v = _mm512_or_si512(self.0, _mm512_srli_epi64::<28>(self.0));
            if n == 16 {
                _mm_storel_epi64(p.cast(), _mm512_cvtepi64_epi8(v));
            } else {
                _mm512_mask_cvtepi64_storeu_epi8(p.cast(), mask16(n.div_ceil(2)) as u8, v);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The instantiation: every generic kernel compiled for this ISA.
// ---------------------------------------------------------------------------------------

use crate::arch::{Isa, Kernels};
use crate::block::spec::kernels::{BlockKernels, NvRows};
use crate::block::spec::{BlockDest, BlockSource};
use crate::options::Policy;
use crate::simd::generic::block::fp8;
use crate::simd::generic::block::mx;
use crate::simd::generic::block::nvfp4;
use crate::simd::generic::kernels::{
    Brain, Code, Dst, E8m0, E8m0Hi, F32, F64, F64Hi, F64Odd, Half, Packed, RoundTrip,
    RoundTripBf16, RoundTripE8m0, RoundTripF16, Src, run,
};
use crate::simd::generic::lanes;

/// The generic kernel from `S` to `D`, compiled for AVX-512.
///
/// # Safety
/// As for [`RawKernel`](crate::arch::RawKernel); the CPU has the `Avx512` tier's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn k<S: Src, D: Dst>(src: *const u8, dst: *mut u8, len: usize, p: Policy) {
    // SAFETY: forwarded contract; the features are enabled on this function, and the table
    // that holds it is chosen only when `avx512_available` found them.
    unsafe { run::<V512, S, D>(src, dst, len, p) }
}

/// Registers an IEEE-like leaf format's narrowings (f32, f64, F16 and BF16 sources, one pass)
/// and its fused round trip.
macro_rules! narrowings {
    ($t:ident, $f:ty) => {
        $t.set_all_policies::<f32, $f>(k::<F32, Code<$f>>);
        $t.set_all_policies::<f64, $f>(k::<F64Odd, Code<$f>>);
        $t.set_direct::<crate::F16, $f>(k::<Half, Code<$f>>);
        $t.set_direct::<crate::BF16, $f>(k::<Brain, Code<$f>>);
    };
}

/// Fills `t` with this ISA's generic kernels where they measured faster than what the tier ran
/// before (`throughput --full --size 1024 --backend avx512-bf16,avx2`, medians of three runs
/// on the Zen 4 VM; docs/performance.md, "Every pair at 1 Ki elements"): every narrowing of the formats
/// added after the first four (f32, f64, F16 and BF16 sources), F16/BF16 → F8E4M3/F8E5M2 in
/// one pass, the fused round trips but E4M3's and E5M2's, the fnuz and E8M0 widenings to f32 (E8M0 to
/// f64 too), and the fnuz, fp6, E4M3 and E8M0 → F16 pairs. The other pairs keep the AVX2
/// kernels they ran (the fp6/fp4 table widenings, the `avx2_direct` kernels), which measured
/// faster than the generic ones here, or two passes (fnuz and fp6 → BF16, where the generic
/// BF16 rounding measured slower than the widening and the `VCVTNE2PS2BF16` narrowing one
/// after the other); `tests/kernels.rs` lists them. The `Avx512` table then puts its
/// hand-written kernels on top for f32/f64 ↔ F16, BF16, F8E4M3 and F8E5M2.
pub(crate) const fn fill(t: &mut Kernels) {
    use crate::{
        BF16, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F16,
    };
    narrowings!(t, F8E4M3FNUZ);
    narrowings!(t, F8E5M2FNUZ);
    narrowings!(t, F6E2M3);
    narrowings!(t, F6E3M2);
    narrowings!(t, F4E2M1);
    // E4M3 and E5M2: the hand-written f32/f64 kernels replace these after `fill`; their
    // round trips are the fused generic ones below.
    narrowings!(t, F8E4M3);
    narrowings!(t, F8E5M2);
    t.set_round_trip::<F8E4M3>(k::<F32, RoundTrip<F8E4M3>>);
    t.set_round_trip::<F8E5M2>(k::<F32, RoundTrip<F8E5M2>>);
    t.set_round_trip::<F8E4M3FNUZ>(k::<F32, RoundTrip<F8E4M3FNUZ>>);
    t.set_round_trip::<F8E5M2FNUZ>(k::<F32, RoundTrip<F8E5M2FNUZ>>);
    t.set_round_trip::<F6E2M3>(k::<F32, RoundTrip<F6E2M3>>);
    t.set_round_trip::<F6E3M2>(k::<F32, RoundTrip<F6E3M2>>);
    t.set_round_trip::<F4E2M1>(k::<F32, RoundTrip<F4E2M1>>);
    t.set_all_policies::<F8E4M3FNUZ, f32>(k::<Code<F8E4M3FNUZ>, F32>);
    t.set_all_policies::<F8E5M2FNUZ, f32>(k::<Code<F8E5M2FNUZ>, F32>);
    t.set_direct::<F8E4M3FNUZ, F16>(k::<Code<F8E4M3FNUZ>, Half>);
    t.set_direct::<F8E5M2FNUZ, F16>(k::<Code<F8E5M2FNUZ>, Half>);
    t.set_direct::<F6E2M3, F16>(k::<Code<F6E2M3>, Half>);
    t.set_direct::<F6E3M2, F16>(k::<Code<F6E3M2>, Half>);
    t.set_direct::<F8E4M3, F16>(k::<Code<F8E4M3>, Half>);

    t.set_all_policies::<f32, F4E2M1x2>(k::<F32, Packed>);
    t.set_all_policies::<f64, F4E2M1x2>(k::<F64Odd, Packed>);
    t.set_direct::<F16, F4E2M1x2>(k::<Half, Packed>);
    t.set_direct::<BF16, F4E2M1x2>(k::<Brain, Packed>);

    t.set_all_policies::<f32, F8E8M0>(k::<F32, E8m0>);
    t.set_all_policies::<f64, F8E8M0>(k::<F64Hi, E8m0Hi>);
    t.set_all_policies::<F8E8M0, f32>(k::<E8m0, F32>);
    t.set_all_policies::<F8E8M0, f64>(k::<E8m0, F64>);
    t.set_direct::<F8E8M0, F16>(k::<E8m0, Half>);
    t.set_direct::<F16, F8E8M0>(k::<Half, E8m0>);
    t.set_direct::<BF16, F8E8M0>(k::<Brain, E8m0>);

    t.set_direct::<BF16, F16>(k::<Brain, Half>);

    t.set_round_trip::<F8E8M0>(k::<F32, RoundTripE8m0>);
    t.set_round_trip::<F16>(k::<F32, RoundTripF16>);
    t.set_round_trip::<BF16>(k::<F32, RoundTripBf16>);
}

/// Sets the generic 512-bit kernels of the formats registered after [`fill`]'s selection
/// (F8E3M4, F8E4M3IEEE, F8E4M3B11FNUZ, F8E5M3FNU; the AVX-512 tiers ran the generic 256-bit
/// kernels of the `Avx2` table for them) where they measured at least as fast on the Intel
/// VM (`throughput --size 1024 --backend avx512-fp16` and `avx512-bf16`, one binary with
/// and one without them, alternating, two runs each; docs/performance.md, "The four newest
/// formats at 512 bits"): f64 → X (2.0–2.4×), X → f32 (1.3–1.7×), X → f64 (1.3–1.8×), X → F16
/// (1.0–1.15×; F8E5M3FNU 2.5–3.3×), F16 and BF16 → X (1.0–1.2×), the round trips
/// (1.4–1.9×), and f32 → F8E5M3FNU (1.3–1.4×). The others keep the 256-bit kernels: X → BF16
/// (0.53–0.62: the generic BF16 rounding at 512 bits, as for the fnuz and fp6 formats in
/// [`fill`]) and f32 → the three signed formats (0.92–0.97 in three of four runs).
pub(crate) const fn fill_newer(t: &mut Kernels) {
    use crate::simd::generic::kernels::F64Code;
    use crate::{F8E3M4, F8E4M3B11FNUZ, F8E4M3IEEE, F8E5M3FNU, F16};
    macro_rules! newer {
        ($f:ty) => {
            t.set_all_policies::<f64, $f>(k::<F64Code<$f>, Code<$f>>);
            t.set_all_policies::<$f, f32>(k::<Code<$f>, F32>);
            t.set_all_policies::<$f, f64>(k::<Code<$f>, F64>);
            t.set_direct::<$f, F16>(k::<Code<$f>, Half>);
            t.set_round_trip::<$f>(k::<F32, RoundTrip<$f>>);
            t.set_direct::<F16, $f>(k::<Half, Code<$f>>);
            t.set_direct::<crate::BF16, $f>(k::<Brain, Code<$f>>);
        };
    }
    newer!(F8E3M4);
    newer!(F8E4M3IEEE);
    newer!(F8E4M3B11FNUZ);
    newer!(F8E5M3FNU);
    t.set_all_policies::<f32, F8E5M3FNU>(k::<F32, Code<F8E5M3FNU>>);
}

/// The generic MX block kernels (`simd/generic/block/mx.rs`) compiled for AVX-512.
struct Blocks;

/// [`mx::dequant`] at 512 bits.
///
/// # Safety
/// The `MxDequantFn` contract; the CPU has the `Avx512` tier's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn mx_dequant<E: mx::Element, D: mx::Dest>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    // SAFETY: forwarded contract; the features are enabled on this function. Nothing here
    // reads MXCSR: the widening's one float instruction is an exact product, and
    // `VCVTPS2PH` carries its rounding in the immediate.
    unsafe { mx::dequant::<V512, E, D>(codes, scales, blocks, dst) }
}

/// The generic NVFP4 dequantization (`simd/generic/block/nvfp4.rs`) compiled for AVX-512,
/// run under the block kernels' MXCSR (`MxcsrDefault`).
///
/// # Safety
/// As for [`NvFn`](crate::block::spec::kernels::NvFn); the CPU has the `Avx512` tier's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn nv_dq<const P: usize, const L: usize, D: BlockDest>(a: &NvRows) -> bool {
    let _env = super::MxcsrDefault::new();
    // SAFETY: forwarded contract; the features are enabled on this function and MXCSR is
    // the kernels' for the call.
    unsafe { nvfp4::dequantize::<V512, P, L, D>(a) }
}

/// The generic NVFP4 quantization compiled for AVX-512, as [`nv_dq`].
///
/// # Safety
/// As for [`nv_dq`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn nv_q<const P: usize, const L: usize, S: BlockSource>(a: &NvRows) -> bool {
    let _env = super::MxcsrDefault::new();
    // SAFETY: as in `nv_dq`.
    unsafe { nvfp4::quantize::<V512, P, L, S>(a) }
}

/// [`mx::quant`] at 512 bits.
///
/// # Safety
/// The `MxQuantFn` contract; the CPU has the `Avx512` tier's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn mx_quant<E: mx::Element, const CEIL: bool>(
    src: *const u8,
    blocks: usize,
    codes: *mut u8,
    scales: *mut u8,
) {
    // SAFETY: forwarded contract; the features are enabled on this function, and the
    // multiply-add carries its rounding (`{rn-sae}`), so MXCSR plays no part.
    unsafe { mx::quant::<V512, E, CEIL, Fp8x64>(src, blocks, codes, scales) }
}

impl mx::Inst for Blocks {
    const ISA: Isa = Isa::Avx512;
    unsafe fn dequant<E: mx::Element, D: mx::Dest>(
        codes: *const u8,
        scales: *const u8,
        blocks: usize,
        dst: *mut u8,
    ) {
        // SAFETY: forwarded contract; the table that holds this is chosen only when
        // `avx512_available` found the features.
        unsafe { mx_dequant::<E, D>(codes, scales, blocks, dst) }
    }
    unsafe fn quant<E: mx::Element, const CEIL: bool>(
        src: *const u8,
        blocks: usize,
        codes: *mut u8,
        scales: *mut u8,
    ) {
        // SAFETY: as for `dequant`.
        unsafe { mx_quant::<E, CEIL>(src, blocks, codes, scales) }
    }
}

/// Sets the block-kernel slots (`src/block/spec/kernels.rs`) that this instantiation serves
/// instead of the table below it (the hand-written 256-bit AVX2 kernels): every MX
/// `Ocp`/`Ceil` dequantization and quantization. Measured (`cargo bench --bench block --
/// '8x4096/.*-(avx512-bf16|avx2)$'`, two runs under load; docs/performance.md, "Block paths under
/// load"): MXFP4 → BF16 1.65–1.85× and f32 → MXFP4 `Ceil` 1.1–1.75× the AVX2 kernels,
/// MXFP8 → BF16 0.96–1.01× (within noise); the other elements and destinations run the same
/// code paths and were not timed one by one. Also the `Ggml` and `Mlx` profiles, `amax`, block
/// FP8 quantization and dequantization and the fused scaled building blocks at 512 bits.
/// `block_tables.rs` puts two overrides of block FP8 dequantization on top: to BF16/F16 the
/// table kernel of `avx512_fp8.rs`, and to f32 the hand-written AVX2 kernel, which
/// measured as fast or faster than the generic one at 512 bits (`cargo bench --bench block -- fp8_scaled_8x4096`, six runs
/// under load: medians 0.44 against 0.41 el/ns; docs/performance.md, "Block paths under
/// load").
pub(crate) const fn fill_block(t: &mut BlockKernels) {
    mx::fill::<Blocks>(t);
    // The MX `Ggml` and `Mlx` profiles and the ggml layout.
    fill_block_profiles(t);
    t.generic_isa = Isa::Avx512;
    // Block FP8, `amax` and the fused scaled building blocks.
    block_kernels::fill_block(t);
    // NVFP4: every profile, layout and type.
    nvfp4::nv_fill!(t, nv_dq, nv_q);
}

crate::simd::generic::block::instantiate_profiles!(
    V512,
    "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c",
    ()
);

/// The block FP8 quantization's last step on this vector ([`fp8::Put4`], also the MX E4M3
/// quantization's): the f32 → F8E4M3 element kernel's narrowing of 64 values
/// (`fp8x64_from_f32_no_nan` of `arch/x86_64/avx512.rs`, saturating), the same codes as the generic narrowing (both proven equal to the codec under
/// every MXCSR setting by the element tests), where the generic 512-bit narrowing has no
/// byte gather and stores each vector with `VPMOVDB`. On the Intel VM (`block_quant
/// fp8block` on `avx512-fp16`) `Ue8m0` went from 0.43 to 0.52 of f32 → F8E4M3
/// (docs/performance.md).
pub(crate) struct Fp8x64;

impl fp8::Put4<V512> for Fp8x64 {
    const FAST: bool = true;
    #[inline(always)]
    unsafe fn put4(_: &lanes::Narrow<V512>, x: [V512; 4], q: *mut u8) {
        // SAFETY: the caller's guarantee: the CPU has V512's features (those the element
        // kernel enables) and `q` is writable for the 64 bytes of the one store.
        unsafe {
            let v = [x[0].0, x[1].0, x[2].0, x[3].0];
            // `Put4`'s values are finite: no NaN lane to fix.
            let codes = crate::arch::x86_64::avx512::fp8x64_from_f32_no_nan::<
                { crate::arch::x86_64::avx512::E4M3 },
                true,
            >(v);
            _mm512_storeu_si512(q.cast(), codes);
        }
    }
}

crate::simd::generic::block::instances::block_instances!(
    V512,
    [#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]],
    crate::simd::generic::block::run::Unguarded,
    Fp8x64
);

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    use super::V512;
    use crate::simd::Vector;

    /// 16 quotients `x[i] / b` by `V512::div_recip_rne`, under MXCSR `csr`.
    ///
    /// # Safety
    /// The CPU has the `Avx512` tier's features.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
    unsafe fn quotients(x: &[u32; 16], b: u32, csr: u32) -> [u32; 16] {
        let mut out = [0u32; 16];
        // SAFETY: 16 lanes read from and written to 16-element arrays; the features are
        // this function's; `csr` is a valid MXCSR value, restored before returning.
        unsafe {
            let saved = super::super::mxcsr();
            super::super::load_mxcsr(csr);
            let bv = V512::splat(b);
            let y = V512::splat(0x3F80_0000).div_rne(bv);
            let q = V512::load_u32(x.as_ptr().cast(), 16).div_recip_rne(bv, y);
            super::super::load_mxcsr(saved);
            q.store_u32(out.as_mut_ptr().cast(), 16);
        }
        out
    }

    /// `div_recip_rne` against the IEEE division of the CPU (`x / b` in Rust, under the
    /// default MXCSR): every significand of `x` (one exponent) for 120 divisors (their
    /// significands all ones, all zeros, near both, and random; exponents across the
    /// method's range), then random pairs of every exponent, with the sign of zero and the
    /// bound below `2^-20`; each batch also under round-toward-zero with FTZ and DAZ.
    pub fn div_recip_is_the_division() {
        if !crate::arch::x86_64::avx512_available() {
            return;
        }
        let mut rng = 0x5EED_D1F1_u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let hostile = 0x1F80 | 0x6000 | 0x8000 | 0x0040;
        let check = |x: &[u32; 16], b: u32, csr: u32| {
            // SAFETY: the features were checked above.
            let got = unsafe { quotients(x, b, csr) };
            for (&xi, &g) in x.iter().zip(&got) {
                let want = (f32::from_bits(xi) / f32::from_bits(b)).to_bits();
                let big = f32::from_bits(want).abs() >= f32::from_bits(0x3580_0000); // 2^-20
                let ok = if big {
                    g == want
                } else {
                    g >> 31 == xi >> 31 && g & 0x7FFF_FFFF < 0x3600_0000 // 2^-19
                };
                assert!(
                    ok,
                    "{xi:#010x} / {b:#010x}: got {g:#010x}, want {want:#010x}"
                );
            }
        };
        let mut divisors = std::vec![
            0x3FFF_FFFF,
            0x3F80_0000,
            0x3F80_0001,
            0x3FFF_FFFE,
            0x3FC0_0000
        ];
        for _ in 0..115 {
            let r = next() as u32;
            let m = match r % 4 {
                0 => 0x007F_FF00 | (r >> 8) & 0xFF,
                1 => (r >> 8) & 0xFF,
                _ => r >> 9,
            };
            divisors.push(m | (127 - 59 + (r >> 2) % 119) << 23);
        }
        for &b in &divisors {
            let e = (next() % 40) as u32 + 107;
            for base in (0..1u32 << 23).step_by(16) {
                let x: [u32; 16] = core::array::from_fn(|i| (e << 23) | (base + i as u32));
                check(&x, b, 0x1F80);
            }
            // Random x of magnitude below 2^40 (so |x / b| < 2^100), under hostile MXCSR.
            let x: [u32; 16] = core::array::from_fn(|_| {
                let v = next() as u32;
                (v & 0x807F_FFFF) | ((v >> 8) % 168) << 23
            });
            check(&x, b, hostile);
        }
        for _ in 0..200_000 {
            let r = next();
            // Exponents that keep |x / b| below 2^100 (and x finite).
            let b = (r as u32 & 0x007F_FFFF) | (127 - 60 + (r >> 23) as u32 % 121) << 23;
            let x: [u32; 16] = core::array::from_fn(|i| {
                let v = next() as u32;
                // Every exponent up to 2^40 (so |x / b| < 2^100), zeros and denormals too.
                let e = (v >> 8) % 168;
                match i {
                    0 => v & 0x8000_0000,
                    1 => v & 0x8000_00FF,
                    _ => (v & 0x807F_FFFF) | e << 23,
                }
            });
            check(&x, b, 0x1F80);
            check(&x, b, hostile);
        }
    }
}
