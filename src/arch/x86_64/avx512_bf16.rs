//! The `Avx512Bf16` backend: the `Avx512Vbmi` kernels, except that f32 → BF16 runs on
//! `VCVTNE2PS2BF16` (AVX512_BF16: Cooper Lake, Sapphire Rapids, Zen 4 and later), and F16 →
//! BF16 runs on `VCVTPH2PS` followed by the same instruction ([`to_bf16`]). The tier
//! requires AVX512_VBMI as well, so that the best tier has every faster kernel; Cooper Lake,
//! the one CPU with AVX512_BF16 but without AVX512_VBMI, runs the `Avx512` tier.
//!
//! # Why the instruction is exact here, and where it is not
//!
//! `VCVTNE2PS2BF16` rounds to nearest even whatever MXCSR holds (it neither reads nor
//! writes MXCSR), and its NaN result is the input's top 16 bits with the quiet bit set,
//! which is the codec's NaN rule. Its one difference from the contract is the f32 subnormal
//! input: the instruction reads it as ±0, while the contract rounds it to a BF16 subnormal
//! (`0x007FFFFF` must give `0x0080`, not `0x0000`). BF16 shares f32's exponent range, so a
//! normal input never gives a subnormal result and no other case differs. (`hardware.rs`
//! in the tests checks this for all 2^32 inputs on any CPU that has the instruction.)
//!
//! The fix costs two instructions per vector and no branch. A lane whose exponent field is
//! zero (±0 or subnormal, `|x| = m * 2^-149`) gets that field set to 1 before the
//! conversion: `x' = x | 0x00800000` is `±(2^-126 + m * 2^-149)`, a normal number, which the
//! instruction rounds exactly. Its code is `sign | (0x80 + RNE(m / 2^16))`: adding
//! `0x00800000` to the bits changes neither the 16 bits rounded away nor the parity of the
//! kept part (its bit 16 is zero), so the rounding decision is the one the contract makes
//! for `x`. Subtracting `0x80` from those lanes' codes then leaves `sign | RNE(m / 2^16)`,
//! the contract's code for `x` (a carry to `0x100` becomes `0x80`, the smallest normal, as
//! it must; ±0 becomes ±0).
//!
//! `Saturate`: the instruction's result is ±Inf (magnitude `0x7F80`) exactly when the input
//! is ±Inf or rounds above MAX, which `Saturate` maps to ±MAX (`0x7F7F`) by subtracting 1.
//! NaN magnitudes are above `0x7F80` and stay.
//!
//! The loop converts 64 elements per iteration (two pairs of vectors, each pair one
//! instruction); the last `len % 64` elements use the `Avx512` kernel's masked steps.

use core::arch::x86_64::*;

use super::avx512::{self, BF16, BLOCK};
use crate::Overflow;
use crate::arch::Kernels;
use crate::options::Policy;

/// `x` (f32 bits) with the exponent field of its ±0 and subnormal lanes set to 1, and the
/// mask of those lanes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")]
fn lift_tiny(x: __m512i) -> (__m512i, __mmask16) {
    let tiny = _mm512_testn_epi32_mask(x, _mm512_set1_epi32(0x7F80_0000));
    (
        _mm512_mask_or_epi32(x, tiny, x, _mm512_set1_epi32(0x0080_0000)),
        tiny,
    )
}

/// `Saturate`'s fix-up of 32 BF16 codes: ±Inf (magnitude `0x7F80`) becomes ±MAX (`0x7F7F`)
/// by subtracting 1; NaN magnitudes lie above `0x7F80` and stay.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")]
fn saturate_inf(b: __m512i) -> __m512i {
    let mag = _mm512_and_si512(b, _mm512_set1_epi16(0x7FFF));
    let inf = _mm512_cmpeq_epi16_mask(mag, _mm512_set1_epi16(0x7F80));
    _mm512_mask_sub_epi16(b, inf, b, _mm512_set1_epi16(1))
}

/// 32 f32 (`lo` holds elements 0..16, `hi` 16..32) to 32 BF16 codes in order.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")]
fn bf16x32<const SAT: bool>(lo: __m512i, hi: __m512i) -> __m512i {
    let (lo, k_lo) = lift_tiny(lo);
    let (hi, k_hi) = lift_tiny(hi);
    // The second operand fills result lanes 0..16, the first lanes 16..32.
    let b = _mm512_cvtne2ps_pbh(_mm512_castsi512_ps(hi), _mm512_castsi512_ps(lo));
    // SAFETY: `__m512bh` and `__m512i` are both 64 bytes of plain bits with no invalid
    // values; the transmute only relabels the vector.
    let b = unsafe { core::mem::transmute::<__m512bh, __m512i>(b) };
    // Undo the lift: lane j of the result is element j, so the masks concatenate.
    let tiny = _mm512_kunpackw(k_hi.into(), k_lo.into());
    let b = _mm512_mask_sub_epi16(b, tiny, b, _mm512_set1_epi16(0x80));
    if SAT { saturate_inf(b) } else { b }
}

/// Narrows `len` f32 to BF16.
///
/// # Safety
/// [`crate::arch::RawKernel`] contract, and the CPU has this backend's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")]
unsafe fn narrow_f32_bf16<const SAT: bool>(src: *const u8, dst: *mut u8, len: usize) {
    let s = src.cast::<f32>();
    let end = src.wrapping_add(4 * len);
    let mut i = 0;
    while len - i >= BLOCK {
        avx512::prefetch_ahead(s.wrapping_add(i).cast(), end, BLOCK * 4);
        // SAFETY: elements i..i+64 are in bounds of both slices (len - i >= 64): four
        // 64-byte loads from the source, 128 bytes of stores to the destination.
        unsafe {
            let p = s.add(i);
            let x = [
                _mm512_loadu_si512(p.cast()),
                _mm512_loadu_si512(p.add(16).cast()),
                _mm512_loadu_si512(p.add(32).cast()),
                _mm512_loadu_si512(p.add(48).cast()),
            ];
            let d = dst.add(2 * i);
            avx512::store512(d, bf16x32::<SAT>(x[0], x[1]));
            avx512::store512(d.add(64), bf16x32::<SAT>(x[2], x[3]));
        }
        i += BLOCK;
    }
    // SAFETY: elements i..len of both slices, fewer than 64: in bounds by the contract; the
    // CPU has the `Avx512` backend's features, a subset of this one's.
    unsafe { avx512::narrow_f32::<BF16, SAT>(src.add(4 * i), dst.add(2 * i), len - i) }
}

/// Table entry: f32 to BF16.
///
/// # Safety
/// [`crate::arch::RawKernel`]: in particular the CPU has AVX-512 F/BW/VL/DQ, AVX512_BF16,
/// AVX512_VBMI, AVX2, FMA and F16C, which the dispatcher checks (`avx512_bf16_available`)
/// before handing out this table.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")]
unsafe fn entry_f32_to_bf16(src: *const u8, dst: *mut u8, len: usize, o: Policy) {
    // SAFETY: forwarded contract; the features are present (see above).
    unsafe {
        match o.overflow {
            Overflow::Saturate => narrow_f32_bf16::<true>(src, dst, len),
            Overflow::NonSaturating => narrow_f32_bf16::<false>(src, dst, len),
        }
    }
}

/// 32 F16 words (`h`) to 32 BF16 words in order: `VCVTPH2PS` (exact, every F16 a normal f32
/// or zero, NaN quieted with its payload kept; it ignores MXCSR), then `VCVTNE2PS2BF16`,
/// whose one rounding is the contract's and whose only difference from it, f32 subnormal
/// inputs, no F16 produces (module docs). No F16 overflows BF16 (65504 rounds to 65536), so
/// a result of magnitude `0x7F80` comes from ±Inf, which `Saturate` makes ±MAX.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")]
fn bf16_from_f16x32<const SAT: bool>(h: __m512i) -> __m512i {
    let lo = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
    let hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64::<1>(h));
    // The second operand fills result lanes 0..16, the first lanes 16..32.
    let b = _mm512_cvtne2ps_pbh(hi, lo);
    // SAFETY: `__m512bh` and `__m512i` are both 64 bytes of plain bits with no invalid
    // values; the transmute only relabels the vector.
    let b = unsafe { core::mem::transmute::<__m512bh, __m512i>(b) };
    if SAT { saturate_inf(b) } else { b }
}

/// Converts `len` F16 values to BF16 in one pass, 64 per iteration, the rest in masked steps
/// of 32.
///
/// # Safety
/// [`crate::arch::RawKernel`] contract, and the CPU has this backend's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")]
unsafe fn to_bf16<const SAT: bool>(src: *const u8, dst: *mut u8, len: usize) {
    let end = src.wrapping_add(2 * len);
    let mut i = 0;
    while len - i >= BLOCK {
        avx512::prefetch_ahead(src.wrapping_add(2 * i), end, BLOCK * 2);
        // SAFETY: values i..i+64 are in bounds of both slices (len - i >= 64): two 64-byte
        // loads of 32 values each, 128 bytes of stores.
        unsafe {
            let p = src.add(2 * i);
            let d = dst.add(2 * i);
            let (h0, h1) = (
                _mm512_loadu_si512(p.cast()),
                _mm512_loadu_si512(p.add(64).cast()),
            );
            avx512::store512(d, bf16_from_f16x32::<SAT>(h0));
            avx512::store512(d.add(64), bf16_from_f16x32::<SAT>(h1));
        }
        i += BLOCK;
    }
    while i < len {
        let n = (len - i).min(32);
        let k = (u32::MAX >> (32 - n)) as __mmask32;
        // SAFETY: the mask enables values i..i+n only (n <= len - i), for the load and the
        // store; masked-off lanes are not accessed.
        unsafe {
            let h = _mm512_maskz_loadu_epi16(k, src.add(2 * i).cast());
            _mm512_mask_storeu_epi16(dst.add(2 * i).cast(), k, bf16_from_f16x32::<SAT>(h));
        }
        i += n;
    }
}

/// Table entry: F16 to BF16, in one pass.
///
/// # Safety
/// As for [`entry_f32_to_bf16`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")]
unsafe fn entry_to_bf16(src: *const u8, dst: *mut u8, len: usize, o: Policy) {
    // SAFETY: forwarded contract; the features are present (see `entry_f32_to_bf16`).
    unsafe {
        match o.overflow {
            Overflow::Saturate => to_bf16::<true>(src, dst, len),
            Overflow::NonSaturating => to_bf16::<false>(src, dst, len),
        }
    }
}

/// Sets this file's kernels in an AVX-512 BF16 table (`tables.rs` composes the tables).
pub(super) const fn set(t: &mut Kernels) {
    t.set::<f32, crate::BF16>(entry_f32_to_bf16);
    t.set_direct::<crate::F16, crate::BF16>(entry_to_bf16);
}
