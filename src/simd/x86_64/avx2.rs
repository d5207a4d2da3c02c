//! The `Avx2` tier's generic kernels: every pair and round trip of every registry format
//! (`fill_registry`, which the table builds on before its override list,
//! `arch/x86_64/tables.rs`), and the block kernels (`fill_block`) under the hand-written ones
//! of `arch/x86_64/avx2_block.rs` that measured faster.
//!
//! [`Vector`] for AVX2 (with FMA and F16C): 8 lanes in a `__m256i`, lane masks as all-ones
//! lanes, partial loads and stores through a zeroed stack buffer (the `n` elements are
//! copied in or out with `copy_nonoverlapping`, so nothing outside them is touched), and the
//! instantiation of the generic kernels for the `Avx2` tier.
//!
//! AVX2 has no rounding immediates for arithmetic: [`Vector::fma_rne`] and
//! [`Vector::load_f64_odd`] use MXCSR's rounding control, so a kernel whose source or
//! destination needs them (`NEEDS_RN`) runs under the default rounding: when MXCSR.RC is not
//! round to nearest, the entry point loads a copy of MXCSR with RC cleared for the call and
//! restores the caller's MXCSR (flags included) afterwards. FTZ and DAZ are left as they are:
//! the algorithms' arguments cover them.

use core::arch::x86_64::*;

use crate::simd::{Vector, buffered, unbuffer};

/// 8 lanes of 32 bits.
#[derive(Clone, Copy)]
pub(crate) struct V256(__m256i);

/// `n <= 16` bytes at `p` (the rest zero) zero-extended to 16-bit words in the order of
/// `order`: the 16 bytes in both 128-bit lanes (from memory, `VBROADCASTI128` is a load
/// alone), then one in-lane `VPSHUFB`, whose index bytes with bit 7 set give the zero high
/// bytes. `load_u8_words` and `load_u8_top_words` differ only in `order`.
///
/// # Safety
/// The CPU has AVX2; `p` is valid for reading `n` bytes (`buffered` copies a short tail, so
/// nothing past them is read).
#[inline(always)]
unsafe fn bytes_to_words(p: *const u8, n: usize, order: __m256i) -> V256 {
    // SAFETY: the caller's guarantee: 16 bytes read in place only when `n == 16`.
    unsafe {
        let b = if n == 16 {
            _mm_loadu_si128(p.cast())
        } else {
            _mm_loadu_si128(buffered::<16>(p, n).as_ptr().cast())
        };
        V256(_mm256_shuffle_epi8(_mm256_broadcastsi128_si256(b), order))
    }
}

/// `n` as the count operand of the shifts that take one from a register (LLVM turns a
/// constant count into the immediate form).
#[inline(always)]
unsafe fn count(n: u32) -> __m128i {
    // SAFETY: SSE2, which every x86-64 CPU has.
    unsafe { _mm_cvtsi32_si128(n as i32) }
}

/// Exact f32 → f64 of 4 lanes of f32 bits, independent of MXCSR: `VCVTPS2PD` is exact except
/// that DAZ reads an f32 denormal as ±0, so the denormal's value, `fraction * 2^-149` (an
/// exact integer conversion and power-of-two product, a normal f64), is merged in with an
/// `VMAXPD` of magnitudes: it is the right value for a denormal lane and below `|d|` for every
/// other (normal, Inf, zero). `VMAXPD` returns its second operand when either is NaN, so a
/// NaN `|d|` (payload kept) passes. None of these inputs is an f64 denormal and nothing
/// rounds, so MXCSR cannot change the result. Then the sign of `d` is put back.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(crate) fn widen_pd_any(x: __m128i) -> __m256d {
    let d = _mm256_cvtps_pd(_mm_castsi128_ps(x));
    let sign = _mm256_set1_pd(-0.0);
    let frac = _mm256_cvtepi32_pd(_mm_and_si128(x, _mm_set1_epi32(0x007F_FFFF)));
    let tiny = _mm256_mul_pd(frac, _mm256_set1_pd(f64::from_bits(0x36A0_0000_0000_0000)));
    let mag = _mm256_max_pd(tiny, _mm256_andnot_pd(sign, d));
    _mm256_or_pd(mag, _mm256_and_pd(sign, d))
}

/// 4 f64 (as 64-bit lanes) rounded to odd into f32 bits under round-to-nearest MXCSR:
/// `t = RNE(x)`; where `t` widened back differs from `x`, the truncation is `t` when
/// `|t| < |x|` and the next f32 toward zero (`t - 1` on the bits) when `|t| > |x|`, and its
/// lowest bit is set. An overflow to Inf comes back as f32::MAX with the bit set (odd), as
/// truncation gives; Inf and zero are exact; a NaN compares unequal and keeps a non-zero
/// fraction. Below 2^-126, FTZ and DAZ may change the bits, but the sign is kept and the
/// result stays below 2^-126, which is all the callers need ([`Vector::load_f64_odd`]).
#[inline(always)]
unsafe fn odd4(x: __m256d) -> __m128i {
    // SAFETY: the caller has the features and MXCSR.RC is round to nearest.
    unsafe {
        let t = _mm256_cvtpd_ps(x);
        let back = _mm256_cvtps_pd(t);
        let sign = _mm256_set1_pd(-0.0);
        let (ax, ab) = (_mm256_andnot_pd(sign, x), _mm256_andnot_pd(sign, back));
        let exact = _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_EQ_OQ>(x, back));
        let up = _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_GT_OQ>(ab, ax));
        // 64-bit masks to 32-bit lanes: the low dword of each 64-bit lane, packed.
        let pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
        let exact = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(exact, pick));
        let up = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(up, pick));
        let t = _mm_castps_si128(t);
        // up is all ones (-1) where |t| > |x|: adding it steps toward zero.
        let trunc = _mm_add_epi32(t, up);
        let odd = _mm_or_si128(trunc, _mm_set1_epi32(1));
        _mm_blendv_epi8(odd, t, exact)
    }
}

/// 8 f64 (as 64-bit lanes) compressed to their high words with a sticky bit.
#[inline(always)]
unsafe fn hi_sticky(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: the caller has the features.
    unsafe {
        let (fa, fb) = (_mm256_castsi256_ps(a), _mm256_castsi256_ps(b));
        // Per 128-bit lane: a's dwords 1, 3, b's dwords 1, 3 (high words), and 0, 2 (low).
        let hi = _mm256_castps_si256(_mm256_shuffle_ps::<0b11_01_11_01>(fa, fb));
        let lo = _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(fa, fb));
        let zero = _mm256_cmpeq_epi32(lo, _mm256_setzero_si256());
        let w = _mm256_or_si256(hi, _mm256_andnot_si256(zero, _mm256_set1_epi32(1)));
        // Lanes are a0 a1 b0 b1 | a2 a3 b2 b3: restore the order a0..a3 b0..b3.
        _mm256_permute4x64_epi64::<0b11_01_10_00>(w)
    }
}

/// 8 lanes of f32 bits rounded to F16 codes: `VCVTPS2PH` with the rounding in the immediate
/// (the IEEE conversion the codec specifies, whatever MXCSR.RC holds; DAZ only zeroes f32
/// denormals, which give ±0 either way). With `sat`, ±Inf becomes ±MAX.
#[inline(always)]
unsafe fn to_f16(x: __m256i, sat: bool) -> __m128i {
    // SAFETY: the caller has the features.
    unsafe {
        let h = _mm256_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT }>(_mm256_castsi256_ps(x));
        if sat {
            let inf = _mm_cmpeq_epi16(
                _mm_and_si128(h, _mm_set1_epi16(0x7FFF)),
                _mm_set1_epi16(0x7C00),
            );
            // inf is -1 in those 16-bit lanes: adding it subtracts one.
            _mm_add_epi16(h, inf)
        } else {
            h
        }
    }
}

/// The split-layout FP4 code indices of the 16 bytes broadcast in `b` (byte `j` of each
/// 128-bit half holds codes `j` and `j + 16` of its block in its low and high nibble): each
/// lane holds its 8 bytes twice, the first copy's low nibbles, the second's high nibbles
/// (the shift by 4 in 16-bit units leaves a byte's high nibble in its low nibble; `nib`,
/// 0x0F in every byte, masks the bits above off).
///
/// # Safety
/// The CPU has AVX2 (inlined into the instantiations' `#[target_feature]` functions).
#[inline(always)]
unsafe fn split_nibbles(b: __m256i, nib: __m256i) -> __m256i {
    // SAFETY: register operations only; the caller has AVX2.
    unsafe {
        let x = _mm256_shuffle_epi8(
            b,
            _mm256_setr_epi8(
                0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, //
                8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15,
            ),
        );
        let y = _mm256_srli_epi16::<4>(x);
        _mm256_and_si256(_mm256_blend_epi32::<0b1100_1100>(x, y), nib)
    }
}

impl Vector for V256 {
    const FUSED_FMA: bool = true;
    const MUL_KEEPS_QNAN: bool = true;
    const LANES: usize = 8;
    type Mask = __m256i;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: (this method and every one below) the caller has the features (`Vector`'s contract), and
        // the memory methods touch only the `n` elements the caller vouches for: full
        // vectors when `n == 8`, else a copy of exactly those bytes through a buffer.
        unsafe { V256(_mm256_set1_epi32(x as i32)) }
    }
    #[inline(always)]
    unsafe fn and(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_and_si256(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn or(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_or_si256(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn or_and(self, b: Self, c: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_or_si256(self.0, _mm256_and_si256(b.0, c.0))) }
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_add_epi32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn sub(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_sub_epi32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn shl(self, n: u32) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_sll_epi32(self.0, count(n))) }
    }
    #[inline(always)]
    unsafe fn shr(self, n: u32) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_srl_epi32(self.0, count(n))) }
    }
    #[inline(always)]
    unsafe fn min_u32(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_min_epu32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn max_u32(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_max_epu32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn reduce_max_u32(self) -> u32 {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            let m = _mm_max_epu32(
                _mm256_castsi256_si128(self.0),
                _mm256_extracti128_si256::<1>(self.0),
            );
            // Swap 64-bit halves, then 32-bit neighbours: every lane ends up with the maximum.
            let m = _mm_max_epu32(m, _mm_shuffle_epi32::<0x4E>(m));
            let m = _mm_max_epu32(m, _mm_shuffle_epi32::<0xB1>(m));
            _mm_cvtsi128_si32(m) as u32
        }
    }
    #[inline(always)]
    unsafe fn reduce_max_each(v: &[Self; 16]) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract); no memory is touched.
        unsafe {
            // Per 128-bit half: neighbours' interleaves, then their 64-bit interleaves, each
            // followed by a maximum, leave lane `j` of a half with the half's maximum of
            // vector `j` (of four); the two halves' results of vectors 0..4 and 4..8 are
            // then paired by a 128-bit permute and a last maximum.
            // (Macros, not closures: a closure would be a function without the features.)
            macro_rules! p {
                ($a:expr, $b:expr) => {{
                    let (a, b) = ($a, $b);
                    _mm256_max_epu32(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b))
                }};
            }
            macro_rules! q {
                ($a:expr, $b:expr) => {{
                    let (a, b) = ($a, $b);
                    _mm256_max_epu32(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b))
                }};
            }
            let lo = q!(p!(v[0].0, v[1].0), p!(v[2].0, v[3].0));
            let hi = q!(p!(v[4].0, v[5].0), p!(v[6].0, v[7].0));
            V256(_mm256_max_epu32(
                _mm256_permute2x128_si256::<0x20>(lo, hi),
                _mm256_permute2x128_si256::<0x31>(lo, hi),
            ))
        }
    }
    #[inline(always)]
    unsafe fn lookup_u16(self, t: &[Self; 2]) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            // The table's low bytes then high bytes in each 128-bit half (words 0-7 | 8-15),
            // then in 64-bit order 0, 2, 1, 3: [low bytes of words 0-15 | high bytes], each
            // plane then broadcast to both halves for the in-half `VPSHUFB`.
            let split = _mm256_setr_epi8(
                0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, //
                0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
            );
            let p = _mm256_permute4x64_epi64::<0xD8>(_mm256_shuffle_epi8(t[0].0, split));
            let lo = _mm256_permute2x128_si256::<0x00>(p, p);
            let hi = _mm256_permute2x128_si256::<0x11>(p, p);
            // Byte indices: the word's index in its low byte for the low plane and in its high
            // byte for the high plane; 0x80 in the other byte makes `VPSHUFB` write zero there
            // (the indices are below 128, so the shift does not mix the two words, and
            // `VPSHUFB` reads the low 4 bits of an index byte whose bit 7 is clear).
            let il = _mm256_or_si256(self.0, _mm256_set1_epi16(0x8000u16 as i16));
            let ih = _mm256_or_si256(_mm256_slli_epi16::<8>(self.0), _mm256_set1_epi16(0x0080));
            V256(_mm256_or_si256(
                _mm256_shuffle_epi8(lo, il),
                _mm256_shuffle_epi8(hi, ih),
            ))
        }
    }
    #[inline(always)]
    unsafe fn inc(self, m: __m256i) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). A true lane is -1.
        unsafe { V256(_mm256_sub_epi32(self.0, m)) }
    }
    const FAST_LOOKUP16: bool = true;
    #[inline(always)]
    unsafe fn lookup16(t: &[Self; 4], idx: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). VPERMD uses the low 3
        // bits of each index; bit 3 picks the table half.
        unsafe {
            let lo = _mm256_permutevar8x32_epi32(t[0].0, idx.0);
            let hi = _mm256_permutevar8x32_epi32(t[1].0, idx.0);
            let upper = _mm256_cmpgt_epi32(idx.0, _mm256_set1_epi32(7));
            V256(_mm256_blendv_epi8(lo, hi, upper))
        }
    }
    const FP4_PLANES: bool = true;
    #[inline(always)]
    unsafe fn fp4_block_words<const SPLIT: bool>(p: *const u8, t: *const u8) -> [Self; 4] {
        // SAFETY: the caller has the features and vouches for the 16 bytes at `p` and the 32
        // at `t` (`Vector`'s contract); each load reads 16 of them.
        unsafe {
            let b = _mm256_broadcastsi128_si256(_mm_loadu_si128(p.cast()));
            let lo = _mm256_broadcastsi128_si256(_mm_loadu_si128(t.cast()));
            let hi = _mm256_broadcastsi128_si256(_mm_loadu_si128(t.add(16).cast()));
            let nib = _mm256_set1_epi8(0x0F);
            // One code index a byte, arranged so that the in-lane unpacks below give the
            // words in order: bytes 0..8 of the low 128-bit lane are codes 0..8, of the
            // high lane codes 8..16; bytes 8..16 codes 16..24 and 24..32.
            let idx = if SPLIT {
                // Code j < 16 is the low nibble of byte j, code j + 16 its high nibble.
                split_nibbles(b, nib)
            } else {
                // Planar: byte j holds codes 2j and 2j + 1. Bytes 0..4, 8..12 to the low
                // lane's words and 4..8, 12..16 to the high lane's, zero-extended; then
                // `w | w << 4` puts the high nibble in the word's high byte, so that, masked,
                // byte 2k is code 2j and byte 2k + 1 code 2j + 1.
                let z = -128i8;
                let w = _mm256_shuffle_epi8(
                    b,
                    _mm256_setr_epi8(
                        0, z, 1, z, 2, z, 3, z, 8, z, 9, z, 10, z, 11, z, //
                        4, z, 5, z, 6, z, 7, z, 12, z, 13, z, 14, z, 15, z,
                    ),
                );
                _mm256_and_si256(_mm256_or_si256(w, _mm256_slli_epi16::<4>(w)), nib)
            };
            // The indices are below 16, so `VPSHUFB` reads each plane's byte `code`.
            let l = _mm256_shuffle_epi8(lo, idx);
            let h = _mm256_shuffle_epi8(hi, idx);
            let z = _mm256_setzero_si256();
            [
                V256(_mm256_unpacklo_epi8(l, h)),
                V256(_mm256_unpackhi_epi8(l, h)),
                V256(z),
                V256(z),
            ]
        }
    }
    #[inline(always)]
    unsafe fn fp4_pair_words<const SPLIT: bool>(
        p: *const u8,
        ta: *const u8,
        tb: *const u8,
    ) -> [Self; 4] {
        // SAFETY: the caller has the features and vouches for the 16 bytes at `p` and the 32
        // at `ta` and `tb` (`Vector`'s contract); each load reads 16 of them.
        unsafe {
            let b = _mm256_broadcastsi128_si256(_mm_loadu_si128(p.cast()));
            // Each block's planes in both 128-bit lanes (`VBROADCASTI128` from memory is a
            // load alone, no shuffle).
            let bc = |t: *const u8| _mm256_broadcastsi128_si256(_mm_loadu_si128(t.cast()));
            let (al, ah, bl, bh) = (bc(ta), bc(ta.add(16)), bc(tb), bc(tb.add(16)));
            let nib = _mm256_set1_epi8(0x0F);
            // One code index a byte: in each lane A's 8 codes, then B's 8; the low lane
            // holds each block's codes 0..8, the high lane its codes 8..16.
            let idx = if SPLIT {
                // Byte j of a block holds its codes j and j + 8: the low nibbles in the low
                // lane, the high nibbles (shifted down by 4 in 16-bit units) in the high one.
                let y = _mm256_srli_epi16::<4>(b);
                _mm256_and_si256(_mm256_blend_epi32::<0b1111_0000>(b, y), nib)
            } else {
                // Planar: byte j of a block holds its codes 2j and 2j + 1. A's bytes 0..4 and
                // B's (8..12) to the low lane's words, A's 4..8 and B's 12..16 to the high
                // lane's, zero-extended; then `w | w << 4` masked: byte 2k is the low nibble,
                // byte 2k + 1 the high one.
                let z = -128i8;
                let w = _mm256_shuffle_epi8(
                    b,
                    _mm256_setr_epi8(
                        0, z, 1, z, 2, z, 3, z, 8, z, 9, z, 10, z, 11, z, //
                        4, z, 5, z, 6, z, 7, z, 12, z, 13, z, 14, z, 15, z,
                    ),
                );
                _mm256_and_si256(_mm256_or_si256(w, _mm256_slli_epi16::<4>(w)), nib)
            };
            // A's planes looked up by all 16 indices of each lane (only A's 8 are kept by
            // the low unpack), B's likewise (kept by the high unpack): each block's 16 words
            // in order, the low lane its words 0..8.
            let wa =
                _mm256_unpacklo_epi8(_mm256_shuffle_epi8(al, idx), _mm256_shuffle_epi8(ah, idx));
            let wb =
                _mm256_unpackhi_epi8(_mm256_shuffle_epi8(bl, idx), _mm256_shuffle_epi8(bh, idx));
            let z = _mm256_setzero_si256();
            [V256(wa), V256(wb), V256(z), V256(z)]
        }
    }
    const WORDS: bool = true;
    #[inline(always)]
    unsafe fn load_u8_words(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` bytes at `p`; see `splat`.
        unsafe {
            let z = -128i8;
            let order = _mm256_setr_epi8(
                0, z, 1, z, 2, z, 3, z, 4, z, 5, z, 6, z, 7, z, //
                8, z, 9, z, 10, z, 11, z, 12, z, 13, z, 14, z, 15, z,
            );
            bytes_to_words(p, n, order)
        }
    }
    #[inline(always)]
    unsafe fn store_words(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` words at `p`; see `splat`.
        unsafe {
            if n == 16 {
                _mm256_storeu_si256(p.cast(), self.0);
            } else {
                let mut buf = [0u8; 32];
                _mm256_storeu_si256(buf.as_mut_ptr().cast(), self.0);
                unbuffer(&buf, p, 2 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn add16(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_add_epi16(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn shl16(self, n: u32) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_sll_epi16(self.0, count(n))) }
    }
    #[inline(always)]
    unsafe fn eq16(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_cmpeq_epi16(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn gt16(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_cmpgt_epi16(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn blend(m: Self, t: Self, f: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `m`'s bytes are all
        // ones or all zeros, so the byte blend is the bit-wise select.
        unsafe { V256(_mm256_blendv_epi8(f.0, t.0, m.0)) }
    }
    #[inline(always)]
    unsafe fn where_nonzero16(self, m: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `VPSIGNW` keeps a word
        // where `m`'s is positive (the contract: below 0x8000, so every non-zero one) and
        // zeroes it where `m`'s is zero.
        unsafe { V256(_mm256_sign_epi16(self.0, m.0)) }
    }
    #[inline(always)]
    unsafe fn words_lo(self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(self.0))) }
    }
    #[inline(always)]
    unsafe fn words_hi(self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_cvtepu16_epi32(_mm256_extracti128_si256::<1>(self.0))) }
    }
    const TOP_WORDS: bool = true;
    #[inline(always)]
    unsafe fn load_u8_top_words(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` bytes at `p`; see `splat`.
        unsafe {
            // Bytes 0..4 and 8..12 to the low lane's words, 4..8 and 12..16 to the high lane's.
            let z = -128i8;
            let order = _mm256_setr_epi8(
                0, z, 1, z, 2, z, 3, z, 8, z, 9, z, 10, z, 11, z, //
                4, z, 5, z, 6, z, 7, z, 12, z, 13, z, 14, z, 15, z,
            );
            bytes_to_words(p, n, order)
        }
    }
    #[inline(always)]
    unsafe fn top_words(self) -> [Self; 2] {
        // SAFETY: the caller has the features (`Vector`'s contract). Per 128-bit lane, the
        // unpacks take words 0..4 (low) or 4..8 (high): elements 0..4 | 4..8 and 8..12 |
        // 12..16 in the order `load_u8_top_words` chose.
        unsafe {
            let z = _mm256_setzero_si256();
            [
                V256(_mm256_unpacklo_epi16(z, self.0)),
                V256(_mm256_unpackhi_epi16(z, self.0)),
            ]
        }
    }
    const F16_WORDS: bool = true;
    #[inline(always)]
    unsafe fn f16_words_lo(self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `VCVTPH2PS` is exact and
        // ignores MXCSR.
        unsafe {
            V256(_mm256_castps_si256(_mm256_cvtph_ps(
                _mm256_castsi256_si128(self.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn f16_words_hi(self) -> Self {
        // SAFETY: as for `f16_words_lo`.
        unsafe {
            V256(_mm256_castps_si256(_mm256_cvtph_ps(
                _mm256_extracti128_si256::<1>(self.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn eq(self, b: Self) -> __m256i {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { _mm256_cmpeq_epi32(self.0, b.0) }
    }
    #[inline(always)]
    unsafe fn gt_i32(self, b: Self) -> __m256i {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { _mm256_cmpgt_epi32(self.0, b.0) }
    }
    #[inline(always)]
    unsafe fn any(m: __m256i) -> bool {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { _mm256_testz_si256(m, m) == 0 }
    }
    #[inline(always)]
    unsafe fn any_nan4(v: &[Self; 4]) -> bool {
        // SAFETY: the caller has the features (`Vector`'s contract). An unordered compare is
        // true in a lane where either operand is a NaN, whatever MXCSR holds.
        unsafe {
            let (x0, x1) = (_mm256_castsi256_ps(v[0].0), _mm256_castsi256_ps(v[1].0));
            let (x2, x3) = (_mm256_castsi256_ps(v[2].0), _mm256_castsi256_ps(v[3].0));
            let a = _mm256_cmp_ps::<_CMP_UNORD_Q>(x0, x1);
            let b = _mm256_cmp_ps::<_CMP_UNORD_Q>(x2, x3);
            let n = _mm256_or_ps(a, b);
            _mm256_testz_ps(n, n) == 0
        }
    }
    #[inline(always)]
    unsafe fn select(m: __m256i, t: Self, f: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_blendv_epi8(f.0, t.0, m)) }
    }
    #[inline(always)]
    unsafe fn ones_where(self, m: __m256i) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). The compares' masks are
        // all-ones or zero lanes, so the OR is the select.
        unsafe { V256(_mm256_or_si256(self.0, m)) }
    }
    #[inline(always)]
    unsafe fn fma_rne(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). MXCSR.RC is round to
        // nearest: the entry points see to it (module docs).
        unsafe {
            let (a, b, c) = (
                _mm256_castsi256_ps(a.0),
                _mm256_castsi256_ps(b.0),
                _mm256_castsi256_ps(c.0),
            );
            V256(_mm256_castps_si256(_mm256_fmadd_ps(a, b, c)))
        }
    }
    #[inline(always)]
    unsafe fn mul_ieee(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract); MXCSR is the block
        // kernels' `0x1F80` (the trait's contract).
        unsafe {
            let (a, b) = (_mm256_castsi256_ps(self.0), _mm256_castsi256_ps(b.0));
            V256(_mm256_castps_si256(_mm256_mul_ps(a, b)))
        }
    }
    #[inline(always)]
    unsafe fn div_ieee(self, b: Self) -> Self {
        // SAFETY: as `mul_ieee`.
        unsafe {
            let (a, b) = (_mm256_castsi256_ps(self.0), _mm256_castsi256_ps(b.0));
            V256(_mm256_castps_si256(_mm256_div_ps(a, b)))
        }
    }
    #[inline(always)]
    unsafe fn sub_ieee(self, b: Self) -> Self {
        // SAFETY: as `mul_ieee`.
        unsafe {
            let (a, b) = (_mm256_castsi256_ps(self.0), _mm256_castsi256_ps(b.0));
            V256(_mm256_castps_si256(_mm256_sub_ps(a, b)))
        }
    }
    #[inline(always)]
    unsafe fn madd16(self, w: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_madd_epi16(self.0, w.0)) }
    }
    #[inline(always)]
    unsafe fn cvt_u24_f32(self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_castps_si256(_mm256_cvtepi32_ps(self.0))) }
    }
    #[inline(always)]
    unsafe fn mul_exact_f32(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            let p = _mm256_mul_ps(_mm256_castsi256_ps(self.0), _mm256_castsi256_ps(b.0));
            V256(_mm256_castps_si256(p))
        }
    }

    #[inline(always)]
    unsafe fn mul_rne(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). MXCSR.RC is round to
        // nearest: the block entry points see to it (`simd/x86_64/mod.rs`, `RoundNearest`).
        unsafe {
            let p = _mm256_mul_ps(_mm256_castsi256_ps(self.0), _mm256_castsi256_ps(b.0));
            V256(_mm256_castps_si256(p))
        }
    }
    #[inline(always)]
    unsafe fn div_rne(self, b: Self) -> Self {
        // SAFETY: as for `mul_rne`.
        unsafe {
            let q = _mm256_div_ps(_mm256_castsi256_ps(self.0), _mm256_castsi256_ps(b.0));
            V256(_mm256_castps_si256(q))
        }
    }

    #[inline(always)]
    unsafe fn load_u8(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let b = if n == 8 {
                _mm_loadl_epi64(p.cast())
            } else {
                _mm_loadl_epi64(buffered::<8>(p, n).as_ptr().cast())
            };
            V256(_mm256_cvtepu8_epi32(b))
        }
    }
    #[inline(always)]
    unsafe fn load_u16(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let h = if n == 8 {
                _mm_loadu_si128(p.cast())
            } else {
                _mm_loadu_si128(buffered::<16>(p, 2 * n).as_ptr().cast())
            };
            V256(_mm256_cvtepu16_epi32(h))
        }
    }
    #[inline(always)]
    unsafe fn load_u32(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            if n == 8 {
                V256(_mm256_loadu_si256(p.cast()))
            } else {
                V256(_mm256_loadu_si256(buffered::<32>(p, 4 * n).as_ptr().cast()))
            }
        }
    }
    #[inline(always)]
    unsafe fn load_f16(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let h = if n == 8 {
                _mm_loadu_si128(p.cast())
            } else {
                _mm_loadu_si128(buffered::<16>(p, 2 * n).as_ptr().cast())
            };
            V256(_mm256_castps_si256(_mm256_cvtph_ps(h)))
        }
    }
    #[inline(always)]
    unsafe fn load_f64_odd(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let (a, b) = if n == 8 {
                (_mm256_loadu_pd(p.cast()), _mm256_loadu_pd(p.add(32).cast()))
            } else {
                let buf = buffered::<64>(p, 8 * n);
                (
                    _mm256_loadu_pd(buf.as_ptr().cast()),
                    _mm256_loadu_pd(buf.as_ptr().add(32).cast()),
                )
            };
            V256(_mm256_set_m128i(odd4(b), odd4(a)))
        }
    }
    #[inline(always)]
    unsafe fn load_f64_hi(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let (a, b) = if n == 8 {
                (
                    _mm256_loadu_si256(p.cast()),
                    _mm256_loadu_si256(p.add(32).cast()),
                )
            } else {
                let buf = buffered::<64>(p, 8 * n);
                (
                    _mm256_loadu_si256(buf.as_ptr().cast()),
                    _mm256_loadu_si256(buf.as_ptr().add(32).cast()),
                )
            };
            V256(hi_sticky(a, b))
        }
    }
    #[inline(always)]
    unsafe fn load_nibbles(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let bytes = if n == 8 {
                _mm_cvtsi32_si128(p.cast::<i32>().read_unaligned())
            } else {
                _mm_cvtsi32_si128(i32::from_le_bytes(buffered::<4>(p, n.div_ceil(2))))
            };
            // Each byte twice (b0 b0 b1 b1 ...), widened, then the odd lanes shifted by 4.
            let v = _mm256_cvtepu8_epi32(_mm_unpacklo_epi8(bytes, bytes));
            let v = _mm256_srlv_epi32(v, _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4));
            V256(_mm256_and_si256(v, _mm256_set1_epi32(0xF)))
        }
    }

    #[inline(always)]
    unsafe fn store_u8(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            // Byte 0 of each dword to the low 4 bytes of each 128-bit half, then the halves
            // side by side.
            let idx = _mm256_setr_epi8(
                0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1,
                -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
            );
            let s = _mm256_shuffle_epi8(self.0, idx);
            let b = _mm_unpacklo_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
            if n == 8 {
                _mm_storel_epi64(p.cast(), b);
            } else {
                let mut buf = [0u8; 16];
                _mm_storeu_si128(buf.as_mut_ptr().cast(), b);
                unbuffer(&buf, p, n);
            }
        }
    }
    const BYTES4: bool = true;
    #[inline(always)]
    unsafe fn bytes4_of(v: [Self; 4], k: u32) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract); no memory is touched.
        unsafe {
            // Vector j's byte k of the four lanes of each 128-bit half goes to bytes 4j..4j + 4
            // of that half (index bytes with bit 7 set give zero), so the ORs leave, per
            // half, four elements of vector 0, 1, 2 and 3: the packs' order (`signs4`).
            // The index of vector j: (4i + k) at byte 4j + i, for i < 4, and -128 (zero)
            // elsewhere; written out so that it is a constant in every build profile.
            let z = -128i8;
            let (a, b, c, d) = (k as i8, 4 + k as i8, 8 + k as i8, 12 + k as i8);
            let i0 = _mm256_setr_epi8(
                a, b, c, d, z, z, z, z, z, z, z, z, z, z, z, z, //
                a, b, c, d, z, z, z, z, z, z, z, z, z, z, z, z,
            );
            let i1 = _mm256_setr_epi8(
                z, z, z, z, a, b, c, d, z, z, z, z, z, z, z, z, //
                z, z, z, z, a, b, c, d, z, z, z, z, z, z, z, z,
            );
            let i2 = _mm256_setr_epi8(
                z, z, z, z, z, z, z, z, a, b, c, d, z, z, z, z, //
                z, z, z, z, z, z, z, z, a, b, c, d, z, z, z, z,
            );
            let i3 = _mm256_setr_epi8(
                z, z, z, z, z, z, z, z, z, z, z, z, a, b, c, d, //
                z, z, z, z, z, z, z, z, z, z, z, z, a, b, c, d,
            );
            let g01 = _mm256_or_si256(
                _mm256_shuffle_epi8(v[0].0, i0),
                _mm256_shuffle_epi8(v[1].0, i1),
            );
            let g23 = _mm256_or_si256(
                _mm256_shuffle_epi8(v[2].0, i2),
                _mm256_shuffle_epi8(v[3].0, i3),
            );
            V256(_mm256_or_si256(g01, g23))
        }
    }
    #[inline(always)]
    unsafe fn signs4(v: [Self; 4]) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). Signed saturation keeps
        // each lane's sign through dwords → words → bytes, and within each 128-bit half the
        // packs leave four elements of each vector in turn, as `bytes4_of` does.
        unsafe {
            let ab = _mm256_packs_epi32(v[0].0, v[1].0);
            let cd = _mm256_packs_epi32(v[2].0, v[3].0);
            let b = _mm256_packs_epi16(ab, cd);
            V256(_mm256_cmpgt_epi8(_mm256_setzero_si256(), b))
        }
    }
    #[inline(always)]
    unsafe fn store_bytes4(self, p: *mut u8) {
        // SAFETY: the caller has the features and vouches for the 32 bytes at `p`. Dword 4h + j
        // holds elements 8j + 4h.., which belong at dword 2j + h.
        unsafe {
            let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
            _mm256_storeu_si256(p.cast(), _mm256_permutevar8x32_epi32(self.0, order));
        }
    }
    #[inline(always)]
    unsafe fn min_u8(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_min_epu8(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn eq8(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_cmpeq_epi8(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn store4_u8(v: [Self; 4], p: *mut u8) {
        // SAFETY: the caller has the features and vouches for the 32 bytes at `p`.
        unsafe {
            // The low bytes alone (the packs saturate, so the bits above must be cleared).
            let m = _mm256_set1_epi32(0xFF);
            let a = _mm256_and_si256(v[0].0, m);
            let b = _mm256_and_si256(v[1].0, m);
            let c = _mm256_and_si256(v[2].0, m);
            let d = _mm256_and_si256(v[3].0, m);
            // Within each 128-bit half: words [a0-3, b0-3 | a4-7, b4-7], then bytes
            // [a0-3, b0-3, c0-3, d0-3 | a4-7, b4-7, c4-7, d4-7]; the dword permute puts the
            // four-byte groups in element order.
            let ab = _mm256_packus_epi32(a, b);
            let cd = _mm256_packus_epi32(c, d);
            let bytes = _mm256_packus_epi16(ab, cd);
            let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
            _mm256_storeu_si256(p.cast(), _mm256_permutevar8x32_epi32(bytes, order));
        }
    }
    #[inline(always)]
    unsafe fn store_u16(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let idx = _mm256_setr_epi8(
                0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5, 8, 9, 12, 13,
                -1, -1, -1, -1, -1, -1, -1, -1,
            );
            let s = _mm256_shuffle_epi8(self.0, idx);
            let h = _mm256_castsi256_si128(_mm256_permute4x64_epi64::<0b00_00_10_00>(s));
            if n == 8 {
                _mm_storeu_si128(p.cast(), h);
            } else {
                let mut buf = [0u8; 16];
                _mm_storeu_si128(buf.as_mut_ptr().cast(), h);
                unbuffer(&buf, p, 2 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_u32(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            if n == 8 {
                _mm256_storeu_si256(p.cast(), self.0);
            } else {
                let mut buf = [0u8; 32];
                _mm256_storeu_si256(buf.as_mut_ptr().cast(), self.0);
                unbuffer(&buf, p, 4 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_f64(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let lo = widen_pd_any(_mm256_castsi256_si128(self.0));
            let hi = widen_pd_any(_mm256_extracti128_si256::<1>(self.0));
            if n == 8 {
                _mm256_storeu_pd(p.cast(), lo);
                _mm256_storeu_pd(p.add(32).cast(), hi);
            } else {
                let mut buf = [0u8; 64];
                _mm256_storeu_pd(buf.as_mut_ptr().cast(), lo);
                _mm256_storeu_pd(buf.as_mut_ptr().add(32).cast(), hi);
                unbuffer(&buf, p, 8 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_f16(self, p: *mut u8, n: usize, sat: bool) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            let h = to_f16(self.0, sat);
            if n == 8 {
                _mm_storeu_si128(p.cast(), h);
            } else {
                let mut buf = [0u8; 16];
                _mm_storeu_si128(buf.as_mut_ptr().cast(), h);
                unbuffer(&buf, p, 2 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn round_f16(self, sat: bool) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V256(_mm256_castps_si256(_mm256_cvtph_ps(to_f16(self.0, sat)))) }
    }
    #[inline(always)]
    unsafe fn store_nibbles(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` elements at `p`; see `splat`.
        unsafe {
            // As 64-bit lanes, `v | v >> 28` holds lane 2i | lane 2i+1 << 4 in its low byte
            // (both codes below 16); bytes 0 and 8 of each half are the four results.
            let v = _mm256_or_si256(self.0, _mm256_srli_epi64::<28>(self.0));
            let idx = _mm256_setr_epi8(
                0, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 8, -1, -1, -1, -1,
                -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
            );
            let s = _mm256_shuffle_epi8(v, idx);
            let b = _mm_unpacklo_epi16(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
            let bytes = (_mm_cvtsi128_si32(b) as u32).to_le_bytes();
            if n == 8 {
                p.cast::<[u8; 4]>().write_unaligned(bytes);
            } else {
                unbuffer(&bytes, p, n.div_ceil(2));
            }
        }
    }
    #[inline(always)]
    unsafe fn lookup8(self, t: &[u8; 16]) -> Self {
        // SAFETY: the caller has the features; `t` is 16 readable bytes. The indices are
        // below 16 (bit 7 clear), so `VPSHUFB` reads byte `index` of the table copy in the
        // index's own 128-bit half.
        unsafe {
            let tab = _mm256_broadcastsi128_si256(_mm_loadu_si128(t.as_ptr().cast()));
            V256(_mm256_shuffle_epi8(tab, self.0))
        }
    }
    #[inline(always)]
    unsafe fn store_nibbles_b4(self, p: *mut u8) {
        // SAFETY: the caller has the features and vouches for the 16 bytes at `p`.
        unsafe {
            // Per 128-bit half the bytes are [a0-3, b0-3, c0-3, d0-3 | a4-7, …] (`bytes4_of`):
            // as in `store_nibbles4`, `w | w >> 4` leaves each pair's byte in the low byte of
            // its word, the word pack keeps those bytes, and the word interleave of the two
            // halves gives element order.
            let b = self.0;
            let w = _mm256_and_si256(
                _mm256_or_si256(b, _mm256_srli_epi16::<4>(b)),
                _mm256_set1_epi16(0xFF),
            );
            let w = _mm256_packus_epi16(w, w);
            let out =
                _mm_unpacklo_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256::<1>(w));
            _mm_storeu_si128(p.cast(), out);
        }
    }
    #[inline(always)]
    unsafe fn store_nibbles_halves_b4(self, p: *mut u8) {
        // SAFETY: the caller has the features and vouches for the 16 bytes at `p`.
        unsafe {
            // Per 128-bit half the bytes are [a0-3, b0-3, c0-3, d0-3 | a4-7, …] (`bytes4_of`;
            // a, b, c, d the elements 0-7, 8-15, 16-23, 24-31): the half shifted down by 8
            // bytes and its codes moved to the high nibbles (below 16, so the word shift
            // keeps them in their byte) pairs a with c and b with d in the low 8 bytes, and
            // the dword interleave of the halves gives a0-3, a4-7, b0-3, b4-7.
            let hi = _mm256_slli_epi16::<4>(_mm256_srli_si256::<8>(self.0));
            let t = _mm256_or_si256(self.0, hi);
            let out =
                _mm_unpacklo_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256::<1>(t));
            _mm_storeu_si128(p.cast(), out);
        }
    }
    #[inline(always)]
    unsafe fn store_nibbles4(v: [Self; 4], p: *mut u8) {
        // SAFETY: the caller has the features and vouches for the 16 bytes at `p`.
        unsafe {
            // The codes as bytes, per 128-bit half [a0-3, b0-3, c0-3, d0-3 | a4-7, …] (the
            // packs saturate nothing: every lane is below 16). In each 16-bit word the pair
            // 2k, 2k + 1 sits as `lo | hi << 8`; `w | w >> 4` puts `lo | hi << 4` in its low
            // byte, and the word pack keeps that byte: per half the pairs of a0-3, b0-3,
            // c0-3, d0-3 (two bytes each), then the word interleave of the two halves puts
            // a0-3, a4-7, b0-3, … in element order.
            let ab = _mm256_packus_epi32(v[0].0, v[1].0);
            let cd = _mm256_packus_epi32(v[2].0, v[3].0);
            let b = _mm256_packus_epi16(ab, cd);
            let w = _mm256_and_si256(
                _mm256_or_si256(b, _mm256_srli_epi16::<4>(b)),
                _mm256_set1_epi16(0xFF),
            );
            let w = _mm256_packus_epi16(w, w);
            let out =
                _mm_unpacklo_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256::<1>(w));
            _mm_storeu_si128(p.cast(), out);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The instantiation: the generic kernels compiled for AVX2.
// ---------------------------------------------------------------------------------------

use crate::arch::Isa;
use crate::block::spec::kernels::{BlockKernels, NvRows};
use crate::block::spec::{BlockDest, BlockSource};
use crate::options::Policy;
use crate::simd::generic::block::{mx, nvfp4};
use crate::simd::generic::kernels::{Dst, Src, run};
use crate::simd::generic::registry::fill_registry_items;

/// The generic kernel from `S` to `D`, compiled for AVX2.
///
/// # Safety
/// As for [`RawKernel`](crate::arch::RawKernel); the CPU has the `Avx2` tier's features.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn k<S: Src, D: Dst>(src: *const u8, dst: *mut u8, len: usize, p: Policy) {
    // SAFETY: forwarded contract; the features are enabled on this function, and the table
    // that holds it is chosen only when `avx2_available` found them.
    unsafe {
        // MXCSR.RC must be round to nearest for the multiply-add and the f64 conversion: when
        // it is not (rare), a copy with RC cleared is loaded for the call and the caller's
        // MXCSR (flags included) is put back after it. The asm blocks are not `nomem`, so
        // the kernel's loads and stores, and the arithmetic that depends on them, stay
        // between the two.
        // A kernel that does not need it reads no MXCSR: `STMXCSR` is not free, and a short
        // call would pay it on every call.
        // Nor does one under round to nearest, which is found without `STMXCSR` (see
        // `rounds_to_nearest`); only another mode reads MXCSR, to switch it and back.
        if !(S::NEEDS_RN || D::NEEDS_RN) || super::rounds_to_nearest() {
            return run::<V256, S, D>(src, dst, len, p);
        }
        let saved = super::mxcsr();
        let switch = saved & 0x6000 != 0;
        if switch {
            super::load_mxcsr(saved & !0x6000);
        }
        run::<V256, S, D>(src, dst, len, p);
        if switch {
            super::load_mxcsr(saved);
        }
    }
}

// `fill_registry(t, from)`: every pair and round trip of the registry's formats from index
// `from` on, as generic kernels at 256 bits (`simd/generic/registry.rs`).
crate::format::for_each_format!(fill_registry_items);

/// The generic MX block kernels (`simd/generic/block/mx.rs`) compiled for AVX2.
struct Blocks;

/// [`mx::dequant`] at 256 bits.
///
/// # Safety
/// The `MxDequantFn` contract; the CPU has the `Avx2` tier's features.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn mx_dequant<E: mx::Element, D: mx::Dest>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    // SAFETY: forwarded contract; the features are enabled on this function. MXCSR plays no
    // part: the widening's one float instruction is an exact product of normal operands,
    // and `VCVTPS2PH` carries its rounding in the immediate.
    unsafe { mx::dequant::<V256, E, D>(codes, scales, blocks, dst) }
}

/// [`mx::quant`] at 256 bits, under MXCSR.RC = nearest (as [`k`] runs the kernels that
/// `NEEDS_RN`: a copy of MXCSR with RC cleared for the call when it is not, the caller's
/// put back after it; FTZ and DAZ stay, the algorithm's argument covers them).
///
/// # Safety
/// The `MxQuantFn` contract; the CPU has the `Avx2` tier's features.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn mx_quant<E: mx::Element, const CEIL: bool>(
    src: *const u8,
    blocks: usize,
    codes: *mut u8,
    scales: *mut u8,
) {
    // SAFETY: forwarded contract; the features are enabled on this function; the asm
    // blocks that switch MXCSR are not `nomem`, so the kernel's memory accesses and the
    // arithmetic that depends on them stay between them.
    unsafe {
        let saved = super::mxcsr();
        let switch = saved & 0x6000 != 0;
        if switch {
            super::load_mxcsr(saved & !0x6000);
        }
        mx::quant::<V256, E, CEIL, crate::simd::generic::block::fp8::Layer>(
            src, blocks, codes, scales,
        );
        if switch {
            super::load_mxcsr(saved);
        }
    }
}

impl mx::Inst for Blocks {
    const ISA: Isa = Isa::Avx2;
    unsafe fn dequant<E: mx::Element, D: mx::Dest>(
        codes: *const u8,
        scales: *const u8,
        blocks: usize,
        dst: *mut u8,
    ) {
        // SAFETY: forwarded contract; a table that holds this is chosen only when
        // `avx2_available` found the features.
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

/// Sets the MX `Ocp`/`Ceil` block-kernel slots to the generic kernels at 256 bits (see
/// [`fill_block`]).
const fn fill_block_mx(t: &mut BlockKernels) {
    mx::fill::<Blocks>(t);
}

crate::simd::generic::block::instantiate_profiles!(
    V256,
    "avx2,fma,f16c",
    crate::simd::x86_64::RoundNearest::new()
);

// ---------------------------------------------------------------------------------------
// The block kernels at 256 bits (registered in the `Avx2` block table, unlike the element
// kernels above).
// ---------------------------------------------------------------------------------------

crate::simd::generic::block::instances::block_instances!(
    V256,
    [#[target_feature(enable = "avx2,fma,f16c")]],
    crate::simd::x86_64::RoundNearest::new()
);

/// Sets every block-kernel slot (`src/block/spec/kernels.rs`) the generic layer serves, at 256
/// bits: the MX `Ocp`/`Ceil`, `Ggml` and `Mlx` kernels and the ggml layout, NVFP4, block FP8,
/// `amax` and the fused scaled building blocks. The `Avx2` block table then puts its
/// override list on top (`arch/x86_64/block_tables.rs`): the hand-written MX `Ocp`/`Ceil`
/// kernels, `amax` and block FP8 dequantization of `arch/x86_64/avx2_block.rs`, which measured
/// faster (MXFP4 → BF16 1.9–2.1 against 1.0–1.25 Gelem/s, MXFP8 → BF16 0.90–0.96 against
/// 0.53–0.57, alternating builds under load on the Zen 4 VM,
/// `cargo bench --bench block -- '8x4096/.*-avx2$'`), but for the MX dequantizations whose
/// generic kernels have since measured faster (the word and byte-plane paths; that file
/// lists them) and the MXFP4 quantizations.
pub(crate) const fn fill_block(t: &mut BlockKernels) {
    fill_block_mx(t);
    fill_block_profiles(t);
    t.generic_isa = Isa::Avx2;
    block_kernels::fill_block(t);
    // NVFP4: every profile, layout and type.
    nvfp4::nv_fill!(t, nv_dq, nv_q);
}

/// The generic NVFP4 dequantization (`simd/generic/block/nvfp4.rs`) compiled for AVX2, run
/// under the block kernels' MXCSR (`MxcsrDefault`: AVX2 has no rounding immediates, and
/// FTZ/DAZ would change the IEEE operations).
///
/// # Safety
/// As for [`NvFn`](crate::block::spec::kernels::NvFn); the CPU has the `Avx2` tier's features.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn nv_dq<const P: usize, const L: usize, D: BlockDest>(a: &NvRows) -> bool {
    let _env = super::MxcsrDefault::new();
    // SAFETY: forwarded contract; the features are enabled on this function and MXCSR is
    // the kernels' for the call.
    unsafe { nvfp4::dequantize::<V256, P, L, D>(a) }
}

/// The generic NVFP4 quantization compiled for AVX2, as [`nv_dq`].
///
/// # Safety
/// As for [`nv_dq`].
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn nv_q<const P: usize, const L: usize, S: BlockSource>(a: &NvRows) -> bool {
    let _env = super::MxcsrDefault::new();
    // SAFETY: as in `nv_dq`.
    unsafe { nvfp4::quantize::<V256, P, L, S>(a) }
}
