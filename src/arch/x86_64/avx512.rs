//! The `Avx512` backend: AVX-512 F/BW/VL/DQ kernels (plus F16C, which every such CPU has).
//!
//! Every kernel gives exactly the bits of [`crate::codec`] for every input, whatever MXCSR
//! holds: each rounding instruction carries its rounding mode in the instruction (`{rn-sae}`
//! or `{rz-sae}`), and every place where flush-to-zero (FTZ) or denormals-are-zero (DAZ)
//! could touch a value is either unreachable or cannot change the result (argued at each
//! step below).
//!
//! # Loops
//!
//! A kernel converts 64 elements per iteration (four 16-lane vectors, so that the
//! independent chains hide latency and a 64-element call is one iteration), then at most four
//! 16-lane steps with masked loads and stores for the rest. Masked-off lanes are neither
//! read nor written (AVX-512 masked accesses do not fault on them), so no kernel touches
//! memory outside its slices. Loads and stores are unaligned. The overflow policy is a const
//! generic, chosen once per call by the table entry. The block loops prefetch the source
//! 2 KiB ahead (only lines inside the source): with long loop bodies the core otherwise
//! keeps too few DRAM reads in flight on large slices.
//!
//! Conversions larger than the last-level cache reach these kernels a chunk at a time,
//! through the streaming route of `src/stream.rs`, which writes the destination with
//! non-temporal stores; the kernels themselves always store ordinarily.
//!
//! # Narrowing f32
//!
//! * **F16**: `VCVTPS2PH {rn}` is the IEEE conversion the codec specifies (RNE, subnormals
//!   kept, NaN: sign, top 10 payload bits, quiet bit). Its result does not depend on DAZ
//!   either: a denormal f32 is below 2^-126, far under half the smallest F16 subnormal
//!   (2^-25), so it gives ±0 whether it is read as itself or as zero. `Saturate` turns the
//!   code 0x7C00 (what overflow and ±Inf give; NaN codes are above it) into 0x7BFF.
//! * **BF16**: integer RNE on the bits, `(x + 0x7FFF + ((x >> 16) & 1)) >> 16`, which is
//!   exact for every finite input and ±Inf, subnormals included (no float instruction, so
//!   no DAZ); NaN lanes take `(x >> 16) | 0x40` instead. `Saturate` first clamps the
//!   magnitude to 0x7F7F7FFF, the largest f32 that rounds to BF16 MAX.
//! * **F8E4M3, F8E5M2** ([`fp8_from_f32`]): one fused multiply-add does the rounding. With
//!   `a = min(|x|, cap)`, `e = max(exponent of a, emin)` (so `2^e` is the binade of `a`, or
//!   the smallest normal for the target's subnormals) and `t = 2^e`, the target quantum is
//!   `2^(e - MAN_BITS)` everywhere. Let `c = t * K` with `K = 2^(23 - MAN_BITS) * (1 +
//!   D * 2^-23)`: `c` is exact, its ulp is the target quantum, and `c + a` stays in the
//!   binade of `c` (`a < 2^(e+1)`, and `D` is small). So `s = fma{rn}(t, K, a)` is `c`
//!   plus `q` quanta, `q = a / quantum` rounded to nearest even (`D` is even, so the
//!   parity of `s` is that of `q`), and the low 16 bits of `s` are `D + q`. The code is
//!   `q` plus `2^MAN_BITS * (e - emin)`, and the exponent field `E` of `s` (bits 23..30,
//!   so the high 16-bit half holds `E << 7`) is `e` plus a constant, so `VPMADDWD` with
//!   weights 256 (low half) and `2^(MAN_BITS + 1)` (high half) gives
//!   `256 * (D + q + 2^MAN_BITS * E)`, whose bits 8..15 are the code once `D` is chosen
//!   to cancel the constants modulo 256 (152 for E4M3, 232 for E5M2). `cap` is the
//!   overflow code's value without `Saturate` (E4M3 480 = NaN, E5M2 2^16 = Inf; every
//!   larger magnitude rounds to that code too) and MAX with it. NaN lanes, found with an
//!   ordered compare, take the NaN code through the `VPMADDWD` write mask, and the sign is
//!   OR-ed into bit 15. MXCSR: the clamp (`VRANGEPS`), the maximum and the multiply-add
//!   carry `{sae}`/`{rn-sae}`; under DAZ a denormal input reads as zero, and it rounds to
//!   ±0 in both formats anyway (it is below 2^-126, under a quarter of the smallest
//!   quantum); `s` is at least `2^(emin + 23 - MAN_BITS)` (2^14, 2^7), out of FTZ's
//!   reach. The main loop gathers the code bytes of four vectors with `VPSHUFB` and one
//!   `VPERMD`, and takes the signs of all 64 from two rounds of signed-saturating packs of
//!   the inputs, which leave them in the gathered order ([`fp8x64_from_f32`]); the
//!   remainder steps OR each vector's signs in with a shift.
//! * **F8E4M3FNUZ, F8E5M2FNUZ**: the same steps with their constants (bias 8 and 16).
//!   Without `Saturate` the clamp is the value just past MAX (256, 2^16), whose code the same
//!   arithmetic makes `0x80`, their NaN; NaN lanes take `0x80` too. Only codes with magnitude
//!   bits take the sign: these formats have no −0 (a negative value that rounds to zero is
//!   `+0`), and their NaN has no sign.
//!
//! # Narrowing f64: one rounding
//!
//! * **F16, F8E4M3, F8E5M2**: the f64 is first rounded to *odd* into f32: `vcvtpd2ps {rz}`
//!   truncates, and where that was inexact the f32's lowest bit is set. Round-to-odd to a
//!   precision with at least two more bits than the target, followed by RNE to the target,
//!   equals a single RNE, and f32 has 13 or more bits more than these targets in every
//!   range that matters. Values above f32::MAX truncate to f32::MAX (odd), which overflows
//!   every target as the source does; NaN stays NaN with the top payload bits the targets
//!   keep. Then the f32 kernel above runs. Where the truncated value is a normal f32,
//!   truncation drops exactly the f64's low 29 fraction bits, so "inexact" is one bit test
//!   of those. Below 2^-126 that test can be wrong, FTZ can flush the truncated value and
//!   DAZ can read a denormal f64 as zero, but these targets round everything below 2^-25
//!   to ±0 anyway (the sign survives).
//! * **BF16** ([`bf16_from_f64`]): the fused multiply-add method of the fp8 formats, in f64:
//!   BF16's subnormals reach 2^-133, where the f32 route would need more care, and the f64
//!   sum rounds once from the source. With 7 fraction bits, `K = 2^45 * (1 + D * 2^-52)`,
//!   and the sum's exponent field sits right above bit 52, so `s + (s >> 45)` has the code
//!   in its low 16 bits (`D = 10496`). NaN lanes take `0x7FC0` plus the top 7 fraction
//!   bits, and bit 15 is the source's sign. The clamp, maximum and multiply-add carry
//!   `{sae}`/`{rn-sae}`; a DAZ-read denormal f64 rounds to ±0 either way, and the sum is
//!   at least 2^-81, out of FTZ's reach.
//!
//! # Widening
//!
//! * **F16 → f32**: `VCVTPH2PS`, exact, NaN quieted with payload kept; it ignores MXCSR.
//! * **BF16 → f32**: zero-extend and shift left by 16 (integer only).
//! * **F8E5M2 → f32**: `code << 8` is the F16 with the same value (same exponent field,
//!   fraction padded with zeros), then `VCVTPH2PS`.
//! * **F8E4M3 → f32**: `(code & 0x7F) << 7 | (code & 0x80) << 8` is the F16 of the E4M3 value
//!   times 2^-8 (E4M3 re-biased from 7 to 15 with the same fraction; its subnormals land on
//!   F16 subnormals with the same bits), so `VCVTPH2PS` and an exact multiply by 256 widen
//!   every finite code; the products are normal f32, out of FTZ/DAZ reach. The NaN codes
//!   `S.1111.111` (which the F16 reading makes ±480) are replaced by `0x7FC00000 | sign`.
//! * **to f64**: widen to f32, then `VCVTPS2PD` (exact, NaN quieted with payload kept).
//!   Only BF16 produces f32 denormals, which DAZ would flush in `VCVTPS2PD`: those lanes
//!   are rebuilt as `cvtdq2pd(fraction bits) * 2^-149` (exact, normal f64) with the sign.

use core::arch::x86_64::*;

use super::Fp8Fma;
use crate::Overflow;
use crate::arch::Kernels;
use crate::options::Policy;

/// Format numbers, as in the table indices.
pub(crate) const F16: u8 = 0;
pub(crate) const BF16: u8 = 1;
pub(crate) const E4M3: u8 = 2;
pub(crate) const E5M2: u8 = 3;
/// F8E4M3FNUZ and F8E5M2FNUZ: narrowed from f32 only (the fused multiply-add narrowing).
pub(crate) const E4M3FNUZ: u8 = 4;
pub(crate) const E5M2FNUZ: u8 = 5;

/// Whether format `fmt` is one of the one-byte formats of the fused multiply-add narrowing.
const fn is_fp8(fmt: u8) -> bool {
    matches!(fmt, E4M3 | E5M2 | E4M3FNUZ | E5M2FNUZ)
}

/// Whether format `fmt` is a "fnuz" one: no −0, and the NaN code `0x80` has no sign.
const fn is_fnuz(fmt: u8) -> bool {
    matches!(fmt, E4M3FNUZ | E5M2FNUZ)
}

/// Round to nearest even, exceptions suppressed (overrides MXCSR.RC).
const RNE: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
/// Round toward zero, exceptions suppressed (overrides MXCSR.RC).
const RZ: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
/// Suppress all exceptions (for instructions that do not round).
const SAE: i32 = _MM_FROUND_NO_EXC;

/// Elements per unrolled main-loop iteration.
pub(super) const BLOCK: usize = 64;
/// Elements per vector step (16 f32 lanes).
const STEP: usize = 16;
/// How far ahead of the block being converted the source is prefetched, in bytes.
const PREFETCH: usize = 2048;

/// Prefetches the `bytes` source bytes at `p + PREFETCH` if they lie inside the source,
/// which ends at `end` (a hint: it never faults and changes no result). Large slices stream
/// from DRAM, and a long loop body otherwise keeps few cache-line reads in flight.
#[inline(always)]
pub(super) fn prefetch_ahead(p: *const u8, end: *const u8, bytes: usize) {
    let ahead = p.wrapping_add(PREFETCH);
    if (end as usize).saturating_sub(ahead as usize) >= bytes {
        let mut o = 0;
        while o < bytes {
            // SAFETY: prefetching is a hint that does not access memory architecturally, and
            // the line lies inside the source slice anyway (checked above).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(o).cast()) };
            o += 64;
        }
    }
}

/// A 32-bit pattern as the `i32` that the `set1` intrinsics take.
#[inline(always)]
const fn c32(x: u32) -> i32 {
    x as i32
}

/// Mask of the first `n` of 16 lanes, `n <= 16`.
#[inline(always)]
fn mask16(n: usize) -> __mmask16 {
    debug_assert!(n <= STEP);
    ((1u32 << n) - 1) as __mmask16
}

/// Stores 64 bytes at `p`.
///
/// # Safety
/// `p` valid for writing 64 bytes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
pub(super) unsafe fn store512(p: *mut u8, v: __m512i) {
    // SAFETY: the caller's guarantee.
    unsafe { _mm512_storeu_si512(p.cast(), v) }
}

/// Stores 32 bytes at `p`.
///
/// # Safety
/// `p` valid for writing 32 bytes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn store256(p: *mut u8, v: __m256i) {
    // SAFETY: the caller's guarantee.
    unsafe { _mm256_storeu_si256(p.cast(), v) }
}

// ---------------------------------------------------------------------------------------
// Narrowing, one 16-lane vector at a time
// ---------------------------------------------------------------------------------------

/// 16 f32 to F16 codes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn f16_from_f32<const SAT: bool>(x: __m512i) -> __m256i {
    let h = _mm512_cvtps_ph::<RNE>(_mm512_castsi512_ps(x));
    if SAT {
        // Magnitude 0x7C00 is ±Inf, which only overflow or an infinite source produce
        // (NaN magnitudes are above it); one less is ±MAX.
        let mag = _mm256_and_si256(h, _mm256_set1_epi16(0x7FFF));
        let inf = _mm256_cmpeq_epi16_mask(mag, _mm256_set1_epi16(0x7C00));
        _mm256_mask_sub_epi16(h, inf, h, _mm256_set1_epi16(1))
    } else {
        h
    }
}

/// 16 f32 to BF16 codes, in the high half of each 32-bit lane.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn bf16_from_f32<const SAT: bool>(x: __m512i) -> __m512i {
    // Unordered compare of x with itself: true exactly for NaN (DAZ cannot make a NaN).
    let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(_mm512_castsi512_ps(x), _mm512_castsi512_ps(x));
    let y = if SAT {
        // Clamp |x| to 0x7F7F7FFF, the largest f32 below the tie 0x7F7F8000 that would round
        // up to Inf. As signed integers positive floats are positive and negative floats
        // negative, so the signed minimum clamps only positive lanes; after it every positive
        // lane is below 0x80000000, so the unsigned minimum with 0xFF7F7FFF clamps only
        // negative lanes.
        let p = _mm512_min_epi32(x, _mm512_set1_epi32(0x7F7F_7FFF));
        _mm512_min_epu32(p, _mm512_set1_epi32(c32(0xFF7F_7FFF)))
    } else {
        x
    };
    // RNE of the top 16 bits: add half - 1, plus 1 if the kept part is odd. For |y| up to
    // 0x7F800000 (Inf) the sum stays below the sign bit, and the carry into the exponent is
    // exactly rounding up into the next binade (or to Inf).
    let lsb = _mm512_and_si512(_mm512_srli_epi32::<16>(y), _mm512_set1_epi32(1));
    let r = _mm512_add_epi32(_mm512_add_epi32(y, _mm512_set1_epi32(0x7FFF)), lsb);
    // NaN: the top 16 bits with the quiet bit (0x00400000 in f32) set.
    _mm512_mask_or_epi32(r, nan, x, _mm512_set1_epi32(0x0040_0000))
}

/// 16 f32 to F8E4M3 (`FMT == E4M3`), F8E5M2 or fnuz codes, sign included, in bits 8..15 of each
/// 32-bit lane (the bits above are not zero). See "Narrowing f32" in the module docs.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn fp8_from_f32<const FMT: u8, const SAT: bool>(x: __m512i) -> __m512i {
    let p = fp8_mag_from_f32::<FMT, SAT>(x);
    // p | ((x >> 16) & 0x8000): the sign moves to bit 15 (ternary-logic table A | (B & C)).
    // The fnuz formats sign only the codes with magnitude bits (not zero, not NaN 0x80).
    let signed = if is_fnuz(FMT) {
        _mm512_test_epi32_mask(p, _mm512_set1_epi32(0x7F00))
    } else {
        !0
    };
    _mm512_mask_ternarylogic_epi32::<0xF8>(
        p,
        signed,
        _mm512_srli_epi32::<16>(x),
        _mm512_set1_epi32(0x8000),
    )
}

/// [`fp8_from_f32`] without the sign: the code magnitude (at most 0x7F, so bit 15 is 0) in
/// bits 8..15 of each 32-bit lane.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn fp8_mag_from_f32<const FMT: u8, const SAT: bool>(x: __m512i) -> __m512i {
    fp8_mag::<FMT, SAT, true>(x)
}

/// [`fp8_mag_from_f32`], with the NaN lanes' code (`NAN`) or for lanes known not to be NaN
/// (`!NAN`: one compare and the write mask fewer).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn fp8_mag<const FMT: u8, const SAT: bool, const NAN: bool>(x: __m512i) -> __m512i {
    // The clamp is MAX with `Saturate`, else the overflow code's value (E4M3 480 = 0x7F,
    // its NaN; E5M2 2^16 = 0x7C, Inf; the fnuz formats 256 and 2^16 = 0x80, their NaN).
    let c = match (FMT, SAT) {
        (E4M3, false) => const { Fp8Fma::new(3, 7, 0x7F) },
        (E4M3, true) => const { Fp8Fma::new(3, 7, 0x7E) },
        (E5M2, false) => const { Fp8Fma::new(2, 15, 0x7C) },
        (E5M2, true) => const { Fp8Fma::new(2, 15, 0x7B) },
        (E4M3FNUZ, false) => const { Fp8Fma::new(3, 8, 0x80) },
        (E4M3FNUZ, true) => const { Fp8Fma::new(3, 8, 0x7F) },
        (E5M2FNUZ, false) => const { Fp8Fma::new(2, 16, 0x80) },
        _ => const { Fp8Fma::new(2, 16, 0x7F) },
    };
    let nan_code = match FMT {
        E4M3 => 0x7F,
        E5M2 => 0x7E,
        _ => 0x80,
    };

    let xf = _mm512_castsi512_ps(x);
    // a = min(|x|, cap) (VRANGEPS absolute minimum with the sign cleared; NaN lanes, which
    // it makes `cap` or a NaN, are replaced below).
    let a = _mm512_range_round_ps::<0x0A, SAE>(xf, _mm512_set1_ps(c.cap));
    // t = 2^e, e = max(exponent of a, emin): the target's quantum is 2^(e - MAN_BITS).
    let m = _mm512_max_round_ps::<SAE>(a, _mm512_set1_ps(c.min_normal));
    let t = _mm512_and_si512(_mm512_castps_si512(m), _mm512_set1_epi32(0x7F80_0000));
    // s = RNE(t * K + a): t * K is exact, its ulp is the target quantum, and the sum stays
    // in its binade, so s = t * K + q * quantum with q = a / quantum rounded to nearest
    // even, and the low 16 bits of s hold D + q.
    let s = _mm512_fmadd_round_ps::<RNE>(_mm512_castsi512_ps(t), _mm512_set1_ps(c.k), a);
    // 256 * (low half) + weight * (high half) puts (D + q + exponent term) mod 256, which
    // is the code, in bits 8..15. NaN lanes (not ordered; DAZ cannot make a NaN) take the
    // NaN code instead, through the write mask.
    if !NAN {
        return _mm512_madd_epi16(_mm512_castps_si512(s), _mm512_set1_epi32(c.weights));
    }
    let num = _mm512_cmp_ps_mask::<_CMP_ORD_Q>(xf, xf);
    _mm512_mask_madd_epi16(
        _mm512_set1_epi32(nan_code << 8),
        num,
        _mm512_castps_si512(s),
        _mm512_set1_epi32(c.weights),
    )
}

/// 64 f32 (four vectors) to 64 F8E4M3 or F8E5M2 codes in order.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
pub(crate) fn fp8x64_from_f32<const FMT: u8, const SAT: bool>(x: [__m512i; 4]) -> __m512i {
    fp8x64_of::<FMT, SAT, true>(x)
}

/// [`fp8x64_from_f32`] of 64 f32 none of which is NaN (the block FP8 quotients of a tile
/// without NaN or infinity).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
pub(crate) fn fp8x64_from_f32_no_nan<const FMT: u8, const SAT: bool>(x: [__m512i; 4]) -> __m512i {
    fp8x64_of::<FMT, SAT, false>(x)
}

/// [`fp8x64_from_f32`], NaN lanes handled where `NAN`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn fp8x64_of<const FMT: u8, const SAT: bool, const NAN: bool>(x: [__m512i; 4]) -> __m512i {
    // Vector j moves the code bytes (byte 1 of each 32-bit lane) of every 128-bit lane into
    // 32-bit lane j of that 128-bit lane and zeroes the rest (shuffle index 0x80).
    let gather = |v: __m512i, j: usize| _mm512_shuffle_epi8(v, shuffle_index(j));
    let g = x.map(|v| fp8_mag::<FMT, SAT, NAN>(v));
    let g0 = gather(g[0], 0);
    let g1 = gather(g[1], 1);
    let g2 = gather(g[2], 2);
    let g3 = gather(g[3], 3);
    // The four are disjoint: OR them (ternary-logic table A | B | C, then one OR).
    let o = _mm512_or_si512(_mm512_ternarylogic_epi32::<0xFE>(g0, g1, g2), g3);
    // 32-bit lane 4L + j now holds elements 16j + 4L .. 16j + 4L + 3. The signs: signed
    // saturating packs keep each f32's sign bit, and packing dwords of x0, x1 (and x2, x3)
    // to words, then those to bytes, leaves in 32-bit lane 4L + j the bytes of elements
    // 4L .. 4L + 3 of vector j, the same order. Three packs and one ternary logic
    // (A | (B & C)) instead of a shift and a ternary logic per vector.
    let signs = _mm512_packs_epi16(
        _mm512_packs_epi32(x[0], x[1]),
        _mm512_packs_epi32(x[2], x[3]),
    );
    let with_signs = _mm512_ternarylogic_epi32::<0xF8>(o, signs, _mm512_set1_epi8(0x80u8 as i8));
    // The fnuz formats sign only the codes with magnitude bits (not zero, not NaN 0x80).
    let o = if is_fnuz(FMT) {
        let k = _mm512_test_epi8_mask(o, _mm512_set1_epi8(0x7F));
        _mm512_mask_mov_epi8(o, k, with_signs)
    } else {
        with_signs
    };
    // Elements 16j + 4L .. 16j + 4L + 3 belong at 32-bit lane 4j + L.
    _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15),
        o,
    )
}

/// The `VPSHUFB` index of [`super::fp8_code_gather_lane`] in every 128-bit lane.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn shuffle_index(j: usize) -> __m512i {
    let [a, b, c, d] = super::fp8_code_gather_lane(j);
    _mm512_broadcast_i32x4(_mm_setr_epi32(a, b, c, d))
}

/// 16 f32 lanes narrowed to format `FMT`: 16-bit codes (F16, BF16) or 8-bit codes in the low
/// bits of 32-bit lanes. F16 comes back in a 256-bit vector, BF16 in the high halves of
/// 32-bit lanes, fp8 in the low bytes of 32-bit lanes (the remainder steps' conversion, and
/// `vcvt::vector::avx512`'s, which packs it as the remainder steps' masked stores do).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
pub(crate) fn narrow16<const FMT: u8, const SAT: bool>(x: __m512i) -> __m512i {
    match FMT {
        F16 => _mm512_castsi256_si512(f16_from_f32::<SAT>(x)),
        BF16 => bf16_from_f32::<SAT>(x),
        // The code sits in bits 8..15 (see `fp8_from_f32`); the stores keep the low byte.
        _ => _mm512_srli_epi32::<8>(fp8_from_f32::<FMT, SAT>(x)),
    }
}

/// Rounds 8 f64 to odd in f32 for the targets F16, F8E4M3 and F8E5M2, exactly for every
/// lane whose truncation is at least 2^-126.
///
/// Where the truncated f32 is normal, truncation drops exactly the low 29 fraction bits of
/// the f64, so "inexact" is "those bits are not all zero": one `VPTESTMQ` instead of a
/// conversion back and a compare. Inf has zero low bits (exact); a NaN stays a NaN whatever
/// its lowest bit, and the targets keep only its top payload bits. Where the truncated
/// value is below 2^-126 (f32 subnormal, or flushed by FTZ, or a DAZ-read input) the
/// sticky bit may be wrong, but these targets round everything below 2^-25 to ±0 (the sign
/// survives truncation and flushing).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn f32_odd_from_f64(x: __m512d) -> __m256i {
    let t = _mm256_castps_si256(_mm512_cvt_roundpd_ps::<RZ>(x));
    let inexact = _mm512_test_epi64_mask(_mm512_castpd_si512(x), _mm512_set1_epi64(0x1FFF_FFFF));
    _mm256_mask_or_epi32(t, inexact, t, _mm256_set1_epi32(1))
}

/// 8 f64 to BF16 codes, sign included, in the low 16 bits of each 64-bit lane (the bits
/// above are not zero): the fused multiply-add method of "Narrowing f32" in f64, one
/// rounding from the source (see "Narrowing f64" in the module docs).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn bf16_from_f64<const SAT: bool>(x: __m512d) -> __m512i {
    // The clamp: BF16 MAX (0x7F7F, (2 - 2^-7) * 2^127) with `Saturate`, else 2^128, whose
    // code 0x7F80 is Inf.
    let cap: u64 = if SAT {
        ((127 + 1023) << 52) | (0x7F << 45)
    } else {
        (128 + 1023) << 52
    };
    // BF16 keeps 7 fraction bits and its smallest normal is 2^-126, so with
    // t = 2^max(e, -126) the quantum is 2^(e - 7), and K = 2^45 * (1 + D * 2^-52) has it as
    // its ulp once multiplied by t. The sum s = t * K + q * quantum has the exponent field
    // E = e + 1068 and the low fraction bits D + q (bits 45..51 are zero), so the low 16
    // bits of s + (s >> 45) are D + q + 128 * E, and the code is q + 128 * (e + 126):
    // D = -128 * 942 mod 2^16 = 10496, which is even (ties stay even).
    let k: u64 = ((1023 + 45) << 52) | 10496;
    let a = _mm512_range_round_pd::<0x0A, SAE>(x, _mm512_set1_pd(f64::from_bits(cap)));
    let m = _mm512_max_round_pd::<SAE>(a, _mm512_set1_pd(f64::from_bits((1023 - 126) << 52)));
    let t = _mm512_and_si512(_mm512_castpd_si512(m), _mm512_set1_epi64(0x7FF0 << 48));
    let sum =
        _mm512_fmadd_round_pd::<RNE>(_mm512_castsi512_pd(t), _mm512_set1_pd(f64::from_bits(k)), a);
    let sum = _mm512_castpd_si512(sum);
    let high = _mm512_srli_epi64::<45>(sum);
    // NaN lanes (VRANGEPD gives them `cap`) take the codec's BF16 NaN instead: 0x7FC0 | the
    // top 7 fraction bits, which `x >> 45` holds below the exponent bits 7..14.
    let nan_code = _mm512_or_si512(
        _mm512_srli_epi64::<45>(_mm512_castpd_si512(x)),
        _mm512_set1_epi64(0x40),
    );
    let num = _mm512_cmp_pd_mask::<_CMP_ORD_Q>(x, x);
    let code = _mm512_mask_add_epi64(nan_code, num, sum, high);
    // Bit 15 from the source's sign, bits 0..15 from the code (ternary-logic table C ? B : A).
    _mm512_ternarylogic_epi64::<0xD8>(
        code,
        _mm512_srli_epi64::<48>(_mm512_castpd_si512(x)),
        _mm512_set1_epi64(0x8000),
    )
}

/// 32 f64 (four vectors) to 32 BF16 codes in order.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn bf16x32_from_f64<const SAT: bool>(x: [__m512d; 4]) -> __m512i {
    let c = x.map(|v| bf16_from_f64::<SAT>(v));
    // 16-bit lane 4j of each 64-bit lane: from the first vector for j < 8, the second after.
    let idx = _mm512_set_epi16(
        60, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0, 60, 56, 52, 48, 44, 40, 36,
        32, 28, 24, 20, 16, 12, 8, 4, 0,
    );
    let lo = _mm512_permutex2var_epi16(c[0], idx, c[1]);
    let hi = _mm512_permutex2var_epi16(c[2], idx, c[3]);
    _mm512_inserti64x4::<1>(lo, _mm512_castsi512_si256(hi))
}

/// 16 f64 (two vectors) rounded to odd in f32, from which the f32 step of F16, F8E4M3 or
/// F8E5M2 gives the single RNE result.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn f32_from_f64_pair(x0: __m512d, x1: __m512d) -> __m512i {
    let (lo, hi) = (f32_odd_from_f64(x0), f32_odd_from_f64(x1));
    _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
}

// ---------------------------------------------------------------------------------------
// Narrowing loops
// ---------------------------------------------------------------------------------------

/// Stores the 64 codes of four `narrow16` results at `dst` (64 elements of format `FMT`).
///
/// # Safety
/// `dst` must be valid for writing 64 elements of the format.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
pub(super) unsafe fn store64<const FMT: u8>(dst: *mut u8, v: [__m512i; 4]) {
    match FMT {
        F16 => {
            for (j, h) in v.into_iter().enumerate() {
                // SAFETY: 16 codes of 2 bytes at element 16*j < 64; in bounds by contract.
                unsafe { store256(dst.add(32 * j), _mm512_castsi512_si256(h)) };
            }
        }
        BF16 => {
            // The codes are the high (odd) 16-bit halves: gather them from two vectors.
            let idx = _mm512_set_epi16(
                63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29, 27, 25, 23,
                21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1,
            );
            let p0 = _mm512_permutex2var_epi16(v[0], idx, v[1]);
            let p1 = _mm512_permutex2var_epi16(v[2], idx, v[3]);
            // SAFETY: 2 x 32 codes of 2 bytes = 64 elements; in bounds by contract.
            unsafe {
                store512(dst, p0);
                store512(dst.add(64), p1);
            }
        }
        _ => {
            // Codes are below 0x100: two saturating packs keep them. Within each 128-bit
            // lane the bytes end up as [v0 v1 v2 v3] (4 each), so dword j of the result
            // must come from dword 4 * (j % 4) + j / 4.
            let w0 = _mm512_packus_epi32(v[0], v[1]);
            let w1 = _mm512_packus_epi32(v[2], v[3]);
            let b = _mm512_packus_epi16(w0, w1);
            let idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
            // SAFETY: 64 one-byte codes; in bounds by contract.
            unsafe { store512(dst, _mm512_permutexvar_epi32(idx, b)) };
        }
    }
}

/// Stores the first `n` (at most 16) codes of one `narrow16` result at `dst`.
///
/// # Safety
/// `dst` must be valid for writing `n` elements of the format.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn store_tail<const FMT: u8>(dst: *mut u8, k: __mmask16, v: __m512i) {
    // SAFETY: the mask enables exactly the lanes the caller may write; masked-off lanes are
    // not accessed.
    unsafe {
        match FMT {
            F16 => _mm256_mask_storeu_epi16(dst.cast(), k, _mm512_castsi512_si256(v)),
            BF16 => _mm512_mask_cvtepi32_storeu_epi16(dst.cast(), k, _mm512_srli_epi32::<16>(v)),
            _ => _mm512_mask_cvtepi32_storeu_epi8(dst.cast(), k, v),
        }
    }
}

/// Bytes per element of format `FMT`.
const fn narrow_size(fmt: u8) -> usize {
    if fmt == F16 || fmt == BF16 { 2 } else { 1 }
}

/// Narrows `len` f32 to format `FMT`.
///
/// # Safety
/// [`RawKernel`](crate::arch::RawKernel) contract, and the CPU has this backend's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
pub(super) unsafe fn narrow_f32<const FMT: u8, const SAT: bool>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let src = src.cast::<f32>();
    let size = narrow_size(FMT);
    let mut i = 0;
    let end = src.wrapping_add(len).cast::<u8>();
    while len - i >= BLOCK {
        prefetch_ahead(src.wrapping_add(i).cast(), end, BLOCK * 4);
        if is_fp8(FMT) {
            // SAFETY: elements i..i+64 are in bounds of both slices (len - i >= 64): four
            // 64-byte loads, one 64-byte store.
            unsafe {
                let p = src.add(i);
                let x = [
                    _mm512_loadu_si512(p.cast()),
                    _mm512_loadu_si512(p.add(16).cast()),
                    _mm512_loadu_si512(p.add(32).cast()),
                    _mm512_loadu_si512(p.add(48).cast()),
                ];
                store512(dst.add(i), fp8x64_from_f32::<FMT, SAT>(x));
            }
            i += BLOCK;
            continue;
        }
        // SAFETY: elements i..i+64 are in bounds of both slices (len - i >= 64).
        unsafe {
            let p = src.add(i);
            let v = [
                narrow16::<FMT, SAT>(_mm512_loadu_si512(p.cast())),
                narrow16::<FMT, SAT>(_mm512_loadu_si512(p.add(16).cast())),
                narrow16::<FMT, SAT>(_mm512_loadu_si512(p.add(32).cast())),
                narrow16::<FMT, SAT>(_mm512_loadu_si512(p.add(48).cast())),
            ];
            store64::<FMT>(dst.add(i * size), v);
        }
        i += BLOCK;
    }
    while i < len {
        let k = mask16((len - i).min(STEP));
        // SAFETY: the mask covers elements i..min(i+16, len) only; the rest are not accessed.
        unsafe {
            let x = _mm512_maskz_loadu_epi32(k, src.add(i).cast());
            store_tail::<FMT>(dst.add(i * size), k, narrow16::<FMT, SAT>(x));
        }
        i += STEP;
    }
}

/// Narrows `len` F16 (`SRC == F16`) or BF16 (`SRC == BF16`) values to F8E4M3/F8E5M2
/// (`FMT`) in one pass: [`widen16`]
/// (exact: `VCVTPH2PS`, or the BF16 bits moved up) feeds the hand-written f32 narrowing of
/// [`narrow_f32`] in registers. Every F16 and BF16 value is exactly an f32, so the one
/// rounding is the narrowing's, from the source value, as the two-pass route computes it,
/// under the overflow policy (`SAT`) and `NanPolicy::Preserve` (the sign and the NaN code);
/// neither step reads MXCSR's rounding, and F16 subnormals widen to normal f32.
///
/// # Safety
/// [`RawKernel`](crate::arch::RawKernel) contract, and the CPU has this backend's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn fp8_from_16<const SRC: u8, const FMT: u8, const SAT: bool>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let mut i = 0;
    let end = src.wrapping_add(2 * len);
    while len - i >= BLOCK {
        prefetch_ahead(src.wrapping_add(2 * i), end, BLOCK * 2);
        // SAFETY: elements i..i+64 are in bounds of both slices (len - i >= 64): four
        // 32-byte loads (128 bytes of 2-byte values), one 64-byte store.
        unsafe {
            let p = src.add(2 * i);
            let x = [0, 1, 2, 3].map(|j| widen16::<SRC>(_mm256_loadu_si256(p.add(32 * j).cast())));
            store512(dst.add(i), fp8x64_from_f32::<FMT, SAT>(x));
        }
        i += BLOCK;
    }
    while i < len {
        let k = mask16((len - i).min(STEP));
        // SAFETY: the mask covers elements i..min(i+16, len) only; the rest are not accessed.
        unsafe {
            let h = _mm256_maskz_loadu_epi16(k, src.add(2 * i).cast());
            store_tail::<FMT>(dst.add(i), k, narrow16::<FMT, SAT>(widen16::<SRC>(h)));
        }
        i += STEP;
    }
}

/// Table entry: F16 or BF16 (`SRC`) to F8E4M3 or F8E5M2 (`FMT`), one pass
/// ([`fp8_from_16`]).
///
/// # Safety
/// As [`entry_narrow_f32`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn entry_fp8_from_16<const SRC: u8, const FMT: u8>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    o: Policy,
) {
    // SAFETY: as in `entry_narrow_f32`.
    unsafe {
        match o.overflow {
            Overflow::Saturate => fp8_from_16::<SRC, FMT, true>(src, dst, len),
            Overflow::NonSaturating => fp8_from_16::<SRC, FMT, false>(src, dst, len),
        }
    }
}

/// Narrows `len` f64 to format `FMT` with a single rounding.
///
/// # Safety
/// [`RawKernel`](crate::arch::RawKernel) contract, and the CPU has this backend's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn narrow_f64<const FMT: u8, const SAT: bool>(src: *const u8, dst: *mut u8, len: usize) {
    let src = src.cast::<f64>();
    let size = narrow_size(FMT);
    let mut i = 0;
    let end = src.wrapping_add(len).cast::<u8>();
    while len - i >= BLOCK {
        prefetch_ahead(src.wrapping_add(i).cast(), end, BLOCK * 8);
        if FMT == BF16 {
            // SAFETY: elements i..i+64 are in bounds of both slices (len - i >= 64): eight
            // 64-byte loads, two 64-byte stores.
            unsafe {
                let p = src.add(i);
                let x = |j: usize| _mm512_loadu_pd(p.add(8 * j));
                let d = dst.add(2 * i);
                store512(d, bf16x32_from_f64::<SAT>([x(0), x(1), x(2), x(3)]));
                store512(d.add(64), bf16x32_from_f64::<SAT>([x(4), x(5), x(6), x(7)]));
            }
            i += BLOCK;
            continue;
        }
        // SAFETY: elements i..i+64 are in bounds of both slices (len - i >= 64).
        unsafe {
            let p = src.add(i);
            let mut v = [_mm512_setzero_si512(); 4];
            for (j, o) in v.iter_mut().enumerate() {
                let x0 = _mm512_loadu_pd(p.add(16 * j));
                let x1 = _mm512_loadu_pd(p.add(16 * j + 8));
                *o = f32_from_f64_pair(x0, x1);
            }
            if FMT == E4M3 || FMT == E5M2 {
                // The f32 rounded to odd keeps enough bits for one RNE to the target.
                store512(dst.add(i), fp8x64_from_f32::<FMT, SAT>(v));
            } else {
                store64::<FMT>(dst.add(i * size), v.map(|x| narrow16::<FMT, SAT>(x)));
            }
        }
        i += BLOCK;
    }
    while i < len {
        let k = mask16((len - i).min(STEP));
        // SAFETY: each half-mask covers only elements below len; the rest are not accessed.
        unsafe {
            let (k0, k1) = (k as __mmask8, (k >> 8) as __mmask8);
            let x0 = _mm512_maskz_loadu_pd(k0, src.add(i));
            let x1 = _mm512_maskz_loadu_pd(k1, src.add(i + 8));
            if FMT == BF16 {
                let d = dst.add(2 * i).cast::<i16>();
                _mm512_mask_cvtepi64_storeu_epi16(d.cast(), k0, bf16_from_f64::<SAT>(x0));
                _mm512_mask_cvtepi64_storeu_epi16(d.add(8).cast(), k1, bf16_from_f64::<SAT>(x1));
                i += STEP;
                continue;
            }
            let x = f32_from_f64_pair(x0, x1);
            store_tail::<FMT>(dst.add(i * size), k, narrow16::<FMT, SAT>(x));
        }
        i += STEP;
    }
}

// ---------------------------------------------------------------------------------------
// Widening
// ---------------------------------------------------------------------------------------

/// Loads 16 codes of format `FMT` (masked by `k`) into the layout `widen16` takes: 16-bit
/// lanes of a 256-bit vector for F16/BF16, bytes of a 128-bit vector (in the low part) for
/// fp8.
///
/// # Safety
/// `src` must be valid for reading the lanes enabled in `k`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn load16<const FMT: u8>(src: *const u8, k: __mmask16) -> __m256i {
    // SAFETY: only lanes enabled in `k` are read (the caller's guarantee).
    unsafe {
        if FMT == F16 || FMT == BF16 {
            _mm256_maskz_loadu_epi16(k, src.cast())
        } else {
            _mm256_castsi128_si256(_mm_maskz_loadu_epi8(k, src.cast()))
        }
    }
}

/// 16 codes of format `FMT` to f32 bits (the widening steps' conversion, and
/// `vcvt::vector::avx512`'s).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
pub(crate) fn widen16<const FMT: u8>(c: __m256i) -> __m512i {
    match FMT {
        F16 => _mm512_castps_si512(_mm512_cvtph_ps(c)),
        BF16 => _mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(c)),
        E5M2 => {
            // E5M2 is F16 with the low 8 fraction bits cut off: `code << 8` is that F16.
            let h = _mm256_slli_epi16::<8>(_mm256_cvtepu8_epi16(_mm256_castsi256_si128(c)));
            _mm512_castps_si512(_mm512_cvtph_ps(h))
        }
        _ => {
            let b = _mm256_castsi256_si128(c);
            // Sign-extended to 16 bits and shifted left by 7, the fraction and exponent land
            // in F16's low 14 bits and the sign fills bits 14 and 15; clearing bit 14 leaves
            // `(code & 0x7F) << 7 | (code & 0x80) << 8`: the F16 of value * 2^-8.
            let h = _mm256_slli_epi16::<7>(_mm256_cvtepi8_epi16(b));
            let h = _mm256_and_si256(h, _mm256_set1_epi16(c32(0xBFFF) as i16));
            let f = _mm512_mul_round_ps::<RNE>(_mm512_cvtph_ps(h), _mm512_set1_ps(256.0));
            // NaN codes: the low 7 bits all ones, i.e. code | 0x80 == 0xFF.
            let nan = _mm_cmpeq_epi8_mask(_mm_or_si128(b, _mm_set1_epi8(c32(0x80) as i8)), {
                _mm_set1_epi8(-1)
            });
            // NaN lanes: (f & sign) | 0x7FC00000 (ternary-logic table (A & B) | C).
            _mm512_mask_ternarylogic_epi32::<0xEA>(
                _mm512_castps_si512(f),
                nan,
                _mm512_set1_epi32(c32(0x8000_0000)),
                _mm512_set1_epi32(0x7FC0_0000),
            )
        }
    }
}

/// 32 fp8 codes (bytes) to F16 codes in 16-bit lanes, for the main loop: for E5M2 the F16
/// of the same value, for E4M3 the F16 of the value times 2^-8 (NaN: the F16 quiet NaN,
/// with the sign). The same mappings as [`widen16`], 32 lanes at a time.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn fp8x32_to_f16<const FMT: u8>(c: __m256i) -> __m512i {
    if FMT == E5M2 {
        return _mm512_slli_epi16::<8>(_mm512_cvtepu8_epi16(c));
    }
    // As in `widen16`: `(code & 0x7F) << 7 | (code & 0x80) << 8`.
    let h = _mm512_slli_epi16::<7>(_mm512_cvtepi8_epi16(c));
    let h = _mm512_and_si512(h, _mm512_set1_epi16(c32(0xBFFF) as i16));
    // NaN codes (low 7 bits all ones) give magnitude 0x3F80 here; adding 0x3E80 makes it
    // the F16 quiet NaN 0x7E00 without touching the sign, and `VCVTPH2PS` and the multiply
    // by 256 then keep `0x7FC00000 | sign`.
    let nan = _mm512_cmpeq_epi16_mask(
        _mm512_and_si512(h, _mm512_set1_epi16(0x7FFF)),
        _mm512_set1_epi16(0x3F80),
    );
    _mm512_mask_add_epi16(h, nan, h, _mm512_set1_epi16(0x3E80))
}

/// 16 F16 codes from [`fp8x32_to_f16`] to f32 bits.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn f32_from_fp8_f16<const FMT: u8>(h: __m256i) -> __m512i {
    let f = _mm512_cvtph_ps(h);
    if FMT == E4M3 {
        // Exact: a power-of-two scaling of values from 2^-17 up, normal in and out.
        _mm512_castps_si512(_mm512_mul_round_ps::<RNE>(f, _mm512_set1_ps(256.0)))
    } else {
        _mm512_castps_si512(f)
    }
}

/// Widens 8 f32 (as bits, from a BF16) to f64 without relying on DAZ being clear.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
fn f64_from_f32_bits<const FMT: u8>(x: __m256i) -> __m512d {
    let d = _mm512_cvtps_pd(_mm256_castsi256_ps(x));
    if FMT == BF16 {
        // Exponent field zero: zero or denormal (which DAZ would read as zero). The value is
        // fraction * 2^-149: exact integer conversion and power-of-two scaling, a normal
        // f64; the sign comes from `d` (a DAZ-read denormal keeps its sign).
        let sub = _mm256_testn_epi32_mask(x, _mm256_set1_epi32(0x7F80_0000));
        let frac = _mm256_and_si256(x, _mm256_set1_epi32(0x007F_FFFF));
        let scale = _mm512_set1_pd(f64::from_bits((1023 - 149) << 52));
        let m = _mm512_mul_round_pd::<RNE>(_mm512_cvtepi32_pd(frac), scale);
        // (d & sign) | m (ternary-logic table (A & B) | C).
        _mm512_castsi512_pd(_mm512_mask_ternarylogic_epi64::<0xEA>(
            _mm512_castpd_si512(d),
            sub,
            _mm512_set1_epi64(i64::MIN),
            _mm512_castpd_si512(m),
        ))
    } else {
        d
    }
}

/// Widens `len` codes of format `FMT` to f32 (`WIDE64 == false`) or f64.
///
/// # Safety
/// [`RawKernel`](crate::arch::RawKernel) contract, and the CPU has this backend's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn widen<const FMT: u8, const WIDE64: bool>(src: *const u8, dst: *mut u8, len: usize) {
    let size = narrow_size(FMT);
    let mut i = 0;
    let end = src.wrapping_add(len * size);
    while (FMT == E4M3 || FMT == E5M2) && len - i >= BLOCK {
        prefetch_ahead(src.wrapping_add(i), end, BLOCK);
        for j in 0..2 {
            let e = i + 32 * j;
            // SAFETY: elements e..e+32 are in bounds of both slices (len - i >= 64): one
            // 32-byte load; the stores cover elements e..e+32.
            unsafe {
                let h = fp8x32_to_f16::<FMT>(_mm256_loadu_si256(src.add(e).cast()));
                let lo = f32_from_fp8_f16::<FMT>(_mm512_castsi512_si256(h));
                let hi = f32_from_fp8_f16::<FMT>(_mm512_extracti64x4_epi64::<1>(h));
                store_wide_full::<FMT, WIDE64>(dst, e, lo);
                store_wide_full::<FMT, WIDE64>(dst, e + 16, hi);
            }
        }
        i += BLOCK;
    }
    while len - i >= BLOCK {
        prefetch_ahead(src.wrapping_add(i * size), end, BLOCK * size);
        for j in 0..4 {
            let e = i + 16 * j;
            // SAFETY: elements e..e+16 are in bounds of both slices (len - i >= 64).
            unsafe {
                let c = load16::<FMT>(src.add(e * size), 0xFFFF);
                store_wide_full::<FMT, WIDE64>(dst, e, widen16::<FMT>(c));
            }
        }
        i += BLOCK;
    }
    while i < len {
        let k = mask16((len - i).min(STEP));
        // SAFETY: the mask covers elements i..min(i+16, len) only; the rest are not accessed.
        unsafe {
            let c = load16::<FMT>(src.add(i * size), k);
            store_wide::<FMT, WIDE64>(dst, i, k, widen16::<FMT>(c));
        }
        i += STEP;
    }
}

/// Stores 16 widened lanes (f32 bits `w`) as f32 or f64 at element `i` of `dst`, masked by
/// `k`.
///
/// # Safety
/// `dst` must be valid for writing the elements `i + j` for the lanes `j` enabled in `k`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn store_wide<const FMT: u8, const WIDE64: bool>(
    dst: *mut u8,
    i: usize,
    k: __mmask16,
    w: __m512i,
) {
    if WIDE64 {
        let lo = f64_from_f32_bits::<FMT>(_mm512_castsi512_si256(w));
        let hi = f64_from_f32_bits::<FMT>(_mm512_extracti64x4_epi64::<1>(w));
        let p = dst.cast::<f64>().wrapping_add(i);
        // SAFETY: the low and high half-masks enable only lanes the caller may write.
        unsafe {
            _mm512_mask_storeu_pd(p, k as __mmask8, lo);
            _mm512_mask_storeu_pd(p.wrapping_add(8), (k >> 8) as __mmask8, hi);
        }
    } else {
        let p = dst.cast::<f32>().wrapping_add(i);
        // SAFETY: the mask enables only lanes the caller may write.
        unsafe { _mm512_mask_storeu_epi32(p.cast(), k, w) };
    }
}

/// Stores 16 widened lanes (f32 bits `w`) as f32 or f64 at element `i` of `dst`.
///
/// # Safety
/// `dst` must be valid for writing the elements `i..i + 16`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn store_wide_full<const FMT: u8, const WIDE64: bool>(dst: *mut u8, i: usize, w: __m512i) {
    if WIDE64 {
        let lo = f64_from_f32_bits::<FMT>(_mm512_castsi512_si256(w));
        let hi = f64_from_f32_bits::<FMT>(_mm512_extracti64x4_epi64::<1>(w));
        let p = dst.wrapping_add(8 * i);
        // SAFETY: 16 f64 (128 bytes) writable at element i.
        unsafe {
            store512(p, _mm512_castpd_si512(lo));
            store512(p.wrapping_add(64), _mm512_castpd_si512(hi));
        }
    } else {
        // SAFETY: 16 f32 (64 bytes) writable at element i.
        unsafe { store512(dst.wrapping_add(4 * i), w) };
    }
}

// ---------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------

/// Table entry: f32 to format `FMT`.
///
/// # Safety
/// [`RawKernel`](crate::arch::RawKernel): in particular the CPU has AVX-512 F/BW/VL/DQ, AVX2, FMA and F16C, which
/// the dispatcher checks (`avx512_available`) before handing out this table.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn entry_narrow_f32<const FMT: u8>(src: *const u8, dst: *mut u8, len: usize, o: Policy) {
    // SAFETY: forwarded contract; the features are present (see above).
    unsafe {
        match o.overflow {
            Overflow::Saturate => narrow_f32::<FMT, true>(src, dst, len),
            Overflow::NonSaturating => narrow_f32::<FMT, false>(src, dst, len),
        }
    }
}

/// Table entry: f64 to format `FMT`.
///
/// # Safety
/// As [`entry_narrow_f32`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn entry_narrow_f64<const FMT: u8>(src: *const u8, dst: *mut u8, len: usize, o: Policy) {
    // SAFETY: as in `entry_narrow_f32`.
    unsafe {
        match o.overflow {
            Overflow::Saturate => narrow_f64::<FMT, true>(src, dst, len),
            Overflow::NonSaturating => narrow_f64::<FMT, false>(src, dst, len),
        }
    }
}

/// Table entry: format `FMT` to f32 (`WIDE64 == false`) or f64.
///
/// # Safety
/// As [`entry_narrow_f32`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn entry_widen<const FMT: u8, const WIDE64: bool>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    _o: Policy,
) {
    // SAFETY: as in `entry_narrow_f32`.
    unsafe { widen::<FMT, WIDE64>(src, dst, len) }
}

/// Sets this file's kernels in an AVX-512 table (`tables.rs` composes the tables).
pub(super) const fn set(t: &mut Kernels) {
    use crate::format as f;
    t.set::<f32, f::F16>(entry_narrow_f32::<F16>);
    t.set::<f32, f::BF16>(entry_narrow_f32::<BF16>);
    t.set::<f32, f::F8E4M3>(entry_narrow_f32::<E4M3>);
    t.set::<f32, f::F8E5M2>(entry_narrow_f32::<E5M2>);
    t.set::<f32, f::F8E4M3FNUZ>(entry_narrow_f32::<E4M3FNUZ>);
    t.set::<f32, f::F8E5M2FNUZ>(entry_narrow_f32::<E5M2FNUZ>);
    t.set::<f64, f::F16>(entry_narrow_f64::<F16>);
    t.set::<f64, f::BF16>(entry_narrow_f64::<BF16>);
    t.set::<f64, f::F8E4M3>(entry_narrow_f64::<E4M3>);
    t.set::<f64, f::F8E5M2>(entry_narrow_f64::<E5M2>);
    t.set::<f::F16, f32>(entry_widen::<F16, false>);
    t.set::<f::BF16, f32>(entry_widen::<BF16, false>);
    t.set::<f::F8E4M3, f32>(entry_widen::<E4M3, false>);
    t.set::<f::F8E5M2, f32>(entry_widen::<E5M2, false>);
    t.set::<f::F16, f64>(entry_widen::<F16, true>);
    t.set::<f::BF16, f64>(entry_widen::<BF16, true>);
    t.set::<f::F8E4M3, f64>(entry_widen::<E4M3, true>);
    t.set::<f::F8E5M2, f64>(entry_widen::<E5M2, true>);
    // F16/BF16 → F8E4M3/F8E5M2 in one pass through the hand-written f32 narrowing.
    t.set_direct::<f::F16, f::F8E4M3>(entry_fp8_from_16::<F16, E4M3>);
    t.set_direct::<f::BF16, f::F8E4M3>(entry_fp8_from_16::<BF16, E4M3>);
    t.set_direct::<f::F16, f::F8E5M2>(entry_fp8_from_16::<F16, E5M2>);
    t.set_direct::<f::BF16, f::F8E5M2>(entry_fp8_from_16::<BF16, E5M2>);
}
