//! The `Avx512Fp16` backend: the `Avx512Bf16` kernels, except that F16 and BF16 narrow to
//! the one-byte formats on 32 16-bit lanes per vector (AVX512_FP16: Sapphire Rapids and later
//! Intel server cores), instead of widening to 16 f32 lanes first: F16 → F8E4M3, F8E5M2,
//! F8E4M3FNUZ, F8E4M3B11FNUZ, F8E3M4, F8E4M3IEEE, F6E2M3, F6E3M2, F4E2M1, and BF16 → each of
//! those but F8E5M2.
//!
//! The tier needs a compiler with stable AVX512_FP16 intrinsics (Rust 1.94; `build.rs` sets
//! `vcvt_avx512fp16`). Built with an older one, the backend has the `Avx512Bf16` table and
//! is never available. Each kernel is kept only where it measured at least 10% faster than
//! the `avx512-bf16` kernel of its pair on the same machine ([`OVERRIDES`]).
//!
//! # F16 → F8E4M3: the fused multiply-add narrowing in F16
//!
//! The f32 method of `avx512.rs` ("Narrowing f32"), carried out in F16 arithmetic on the
//! F16 source itself (every F16 is its own exact value, so there is one rounding, the
//! multiply-add's). With `a = min(|h|, cap)` (an integer minimum of the magnitude bits,
//! which orders non-negative F16 like their values), `e = max(exponent of a, -6)` and
//! `t = 2^e` (the exponent bits of `max(a, 2^-6)`), the E4M3 quantum is `2^(e-3)`, which is
//! the ulp of `c = t * 144` (`144 = 2^7 * (1 + 128 * 2^-10)`, exact in F16). So
//! `s = fma{rn}(t, 144, a)` is `c` plus `q` quanta, `q = a / 2^(e-3)` rounded to nearest
//! even (`c`'s fraction, 128, is even, so the parity of `s` is that of `q`), and `s` stays
//! in `c`'s binade (`a < 2^(e+1)`, 16 quanta). `s` has the fraction field `M = 128 + q`
//! (below 256, so its low byte) and the exponent field `E = e + 22` (bits 10..14, so its
//! high byte is `4E`). `VPMADDUBSW` with byte weights (1, 2) gives `M + 8E =
//! q + 8(e + 6) + 256`, whose low byte is the code `q + 8 * (e - emin)`: the subnormal
//! codes for `e = -6, a < 2^-6`, and a carry of `q` into the next binade gives that binade's
//! first code, as it must.
//!
//! `cap` is 480 (`0x7F`, the NaN code, which every larger magnitude rounds to) without
//! `Saturate`, and 448 (MAX) with it. ±Inf and NaN magnitudes are above `0x7C00` and so
//! clamp to `cap` too: that is the contract for ±Inf in both policies and for NaN without
//! `Saturate` (`0x7F | sign`); with `Saturate` a NaN compare puts `0x7F` back. The sign is
//! then added to the low byte (`+ 0x80` on lanes whose F16 sign bit is set; the code is
//! below 0x80, so this sets bit 7). MXCSR: the multiply-add carries `{rn-sae}`; AVX512_FP16
//! arithmetic ignores DAZ and FTZ for F16 operands, and if it did not, a DAZ-read subnormal
//! `a` is below 2^-14, under the 2^-10 that rounds to the smallest E4M3 subnormal, and `s`
//! is at least 2, out of FTZ's reach.
//!
//! # The other formats
//!
//! The same steps serve every format with 1 to 4 fraction bits whose largest binade keeps the
//! sum `s` finite in F16 (not the E5 formats): with `m` fraction bits, bias `b` and `emin = 1 -
//! b`, `K = 2^(10-m) * (1 + D * 2^-10)`, `s`'s exponent field is `E = e + 25 - m`, `VPMADDUBSW`
//! weighs the high byte by `2^(m-2)` (for `m = 1` it weighs the bytes 2 and 1 and the sum is
//! halved: `(2M + 4E) / 2` is exact), and `D` is the even number below `256 - 2^(m+1)` that
//! makes `D + 2^m * (25 - m + emin)` a multiple of 256 ([`Fma16`]). `t` takes the exponent bits
//! of `a` first and the maximum with `2^emin` second (the same result for every `emin` F16 has
//! as a normal exponent, and still a power of two for `2^-15`). What the clamp gives is each
//! format's overflow code: MAX with `Saturate`; without it Inf (`0x78` E4M3IEEE, `0x70` E3M4),
//! or for the fnuz formats the value just past MAX (`256` for E4M3FNUZ, `32` for E4M3B11FNUZ),
//! whose code the same arithmetic makes `0x80`, their NaN. fp6 and fp4 saturate in both
//! policies and turn NaN into ±MAX, so the clamp is their whole story. Where the clamp does not
//! give the NaN code (E4M3 and the fnuz formats with `Saturate`; E4M3IEEE and E3M4 always), NaN
//! lanes take it by a mask. The sign is added as the format's sign bit (`0x20` for fp6, `0x08`
//! for fp4), except that the fnuz formats have no −0 and an unsigned NaN: their lanes whose
//! code has no magnitude bits (zero, and `0x80`) take none.
//!
//! # BF16 sources
//!
//! BF16 has 7 fraction bits, so every BF16 from 2^-14 up to F16's largest is exactly an F16:
//! the magnitude, first clamped to the cap (exact in BF16: at most four fraction bits), is
//! moved to F16 bits as `(b - 0x3800) << 3` (exponent rebiased from 127 to 15, fraction padded
//! with zeros), and the F16 steps above follow. A magnitude below 2^-14 saturates in the
//! subtraction to a pattern below `0x400`: an F16 below 2^-14 that is not the source's value,
//! but every format here rounds both to zero (the smallest halfway point, E4M3B11FNUZ's, is
//! 2^-14), with the sign taken from the BF16. NaN lanes are the magnitudes above `0x7F80`.
//!
//! # F16 → F8E5M2: integer rounding of the top byte
//!
//! E5M2 is F16 with the low 8 fraction bits dropped (same sign, exponent field and bias), so
//! the code is the high byte of `h + 0x7F + (bit 8 of h)`: round to nearest even on the
//! word, sign included (no finite or infinite magnitude carries into bit 15: the largest,
//! `0x7C00`, gives `0x7C7F`). Every magnitude from `0x7B80` (61440, the midpoint between MAX
//! and 2^16) up, ±Inf included, becomes `0x7C`, Inf: the `NonSaturating` contract. With
//! `Saturate` the magnitude is first clamped to `0x7B7F` (the largest that rounds to MAX):
//! an unsigned minimum with `0xFB7F` clamps the negative words, and a signed minimum with
//! `0x7B7F` the positive ones, each leaving the other sign alone. NaN lanes (an unordered
//! F16 compare, which reads no MXCSR field that can change it) take `0x7E | sign`. No step
//! rounds in floating point.
//!
//! # Loops
//!
//! 64 values per iteration (two vectors of 32 F16); the codes of both, one byte of each
//! 16-bit lane, are gathered in order by one `VPERMT2B` and stored with one 64-byte store.
//! The rest, fewer than 64, runs in steps of 32 with masked loads and a masked truncating
//! store (`VPMOVWB`); masked-off lanes are neither read nor written.

// This module is compiled only with Rust 1.94 or later (`build.rs`), where these
// intrinsics are stable; older compilers never see it.
#![allow(clippy::incompatible_msrv)]

use core::arch::x86_64::*;

use super::avx512;
use crate::Overflow;
use crate::arch::Kernels;
use crate::backend::Override;
use crate::options::Policy;

/// Round to nearest even, exceptions suppressed (overrides MXCSR.RC).
const RNE: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

/// F16 values per vector.
const STEP: usize = 32;
/// F16 values per main-loop iteration.
const BLOCK: usize = 64;

/// The destination formats of this file's kernels.
const E4M3: u8 = 0;
const E5M2: u8 = 1;
const E2M3: u8 = 2;
const E3M2: u8 = 3;
const E4M3FNUZ: u8 = 4;
const E4M3B11FNUZ: u8 = 5;
const E3M4: u8 = 6;
const E4M3IEEE: u8 = 7;
const E2M1: u8 = 8;

/// The source formats.
const SRC_F16: u8 = 0;
const SRC_BF16: u8 = 1;

/// The constants of the F16 fused multiply-add narrowing to one format under one overflow
/// policy, as F16 bit patterns and byte weights.
#[derive(Clone, Copy)]
struct Fma16 {
    /// The clamp: the value of the code every larger magnitude rounds to.
    cap: u16,
    /// `2^emin`, the format's smallest normal (an F16 subnormal when `emin < -14`).
    min_normal: u16,
    /// `K = 2^(10 - m) * (1 + D * 2^-10)`.
    k: u16,
    /// `VPMADDUBSW` weights: 1 for the low byte, `2^(m - 2)` for the high byte; for `m = 1`,
    /// 2 and 1, and the sum is halved.
    weights: u16,
    /// Whether the `VPMADDUBSW` sum is halved (`m = 1`).
    halve: bool,
    /// The code's sign bit.
    sign: u16,
    /// The code NaN lanes take (before the sign), where the clamp does not give it.
    nan: Option<u16>,
    /// "fnuz": no −0, and the NaN code `0x80` has no sign: lanes whose code magnitude is 0
    /// (a zero, and the NaN code itself) take no sign.
    fnuz: bool,
}

impl Fma16 {
    /// The constants for `m` fraction bits (1 to 4), bias `bias` and the clamp code
    /// `cap_code`.
    const fn new(m: u32, bias: i32, cap_code: u32, sign: u16) -> Fma16 {
        let emin = 1 - bias;
        let cap_exp = (cap_code >> m) as i32 - bias + 15;
        let cap = ((cap_exp as u32) << 10) | ((cap_code & ((1 << m) - 1)) << (10 - m));
        // s = 2^(e + 10 - m) * (1 + (D + q) * 2^-10) has the fraction field D + q (below 256)
        // and the exponent field E = e + 25 - m, so VPMADDUBSW gives D + q + 2^m * E; the
        // code is q + 2^m * (e - emin), so D cancels 2^m * (25 - m + emin) modulo 256.
        let d = (-((1i32 << m) * (25 - m as i32 + emin))).rem_euclid(256) as u32;
        assert!(d & 1 == 0 && d + (2 << m) < 256 && m >= 1 && m <= 4);
        // The largest sum, 2^(emax + 10 - m) * (1 + (D + 2^(m+1)) / 1024), must be finite.
        assert!(cap_exp + 10 - m as i32 <= 30 && emin >= -15);
        let min_normal = if emin >= -14 {
            ((emin + 15) as u16) << 10
        } else {
            0x0200 // 2^-15, an F16 subnormal
        };
        Fma16 {
            cap: cap as u16,
            min_normal,
            k: (((25 - m) << 10) | d) as u16,
            // m = 1: 2 * (D + q) + 4E, halved, is D + q + 2E.
            weights: if m == 1 {
                0x0102
            } else {
                (((1 << m) >> 2) << 8 | 1) as u16
            },
            halve: m == 1,
            sign,
            nan: None,
            fnuz: false,
        }
    }

    /// With NaN lanes set to `code`.
    const fn nan(self, code: u16) -> Fma16 {
        Fma16 {
            nan: Some(code),
            ..self
        }
    }

    /// With the "fnuz" sign rule.
    const fn fnuz(self) -> Fma16 {
        Fma16 { fnuz: true, ..self }
    }

    /// The constants of format `fmt` under the overflow policy `sat` (the clamp is MAX with
    /// `Saturate`, else the code overflow gives, whose value every larger magnitude rounds
    /// to: NaN for E4M3, Inf for E4M3IEEE/E3M4, the NaN code `0x80` for the fnuz formats).
    const fn of(fmt: u8, sat: bool) -> Fma16 {
        match (fmt, sat) {
            (E4M3, true) => Fma16::new(3, 7, 0x7E, 0x80).nan(0x7F),
            (E4M3, false) => Fma16::new(3, 7, 0x7F, 0x80),
            // fp6 always saturates, and has no NaN code (NaN becomes ±MAX).
            (E2M3, _) => Fma16::new(3, 1, 0x1F, 0x20),
            (E3M2, _) => Fma16::new(2, 3, 0x1F, 0x20),
            // fp4 likewise.
            (E2M1, _) => Fma16::new(1, 1, 0x7, 0x08),
            (E4M3FNUZ, true) => Fma16::new(3, 8, 0x7F, 0x80).nan(0x80).fnuz(),
            (E4M3FNUZ, false) => Fma16::new(3, 8, 0x80, 0x80).fnuz(),
            (E4M3B11FNUZ, true) => Fma16::new(3, 11, 0x7F, 0x80).nan(0x80).fnuz(),
            (E4M3B11FNUZ, false) => Fma16::new(3, 11, 0x80, 0x80).fnuz(),
            (E3M4, true) => Fma16::new(4, 3, 0x6F, 0x80).nan(0x78),
            (E3M4, false) => Fma16::new(4, 3, 0x70, 0x80).nan(0x78),
            (E4M3IEEE, true) => Fma16::new(3, 7, 0x77, 0x80).nan(0x7C),
            (E4M3IEEE, false) => Fma16::new(3, 7, 0x78, 0x80).nan(0x7C),
            // E5M2 takes the integer route (`words`), but its branch still instantiates the
            // function: give it E4M3's constants, which it never uses.
            _ => Fma16::new(3, 7, 0x7E, 0x80),
        }
    }
}

/// 32 F16 or BF16 (`SRC`) values (`x`) to 32 codes of format `FMT` (every format but E5M2),
/// sign included, in the low byte of each 16-bit lane (the high byte is junk). See "F16 →
/// F8E4M3" in the module docs, and "The other formats" for the constants ([`Fma16`]) and
/// "BF16 sources".
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512fp16,avx2,fma,f16c")]
fn fma_words<const SRC: u8, const FMT: u8, const SAT: bool>(x: __m512i) -> __m512i {
    let c = const { Fma16::of(FMT, SAT) };
    let w16 = |v: u16| _mm512_set1_epi16(v as i16);
    let mag = _mm512_and_si512(x, w16(0x7FFF));
    let (a, nan) = if SRC == SRC_F16 {
        let xf = _mm512_castsi512_ph(x);
        (
            _mm512_min_epu16(mag, w16(c.cap)),
            _mm512_cmp_ph_mask::<_CMP_UNORD_Q>(xf, xf),
        )
    } else {
        // The BF16 magnitude clamped to the cap (whose BF16 bits are exact: it has at most
        // four fraction bits), then moved to F16: exponent rebiased by 127 - 15 = 112, the
        // fraction padded with three zeros. Magnitudes below 2^-14 become patterns below
        // 0x400 (the subtraction saturates at 0): F16 values below 2^-14, which round to
        // zero as the sources do (module docs, "BF16 sources").
        let cap_b = (c.cap >> 3) + 0x3800;
        let b = _mm512_min_epu16(mag, w16(cap_b));
        let a = _mm512_slli_epi16::<3>(_mm512_subs_epu16(b, w16(0x3800)));
        (a, _mm512_cmpgt_epu16_mask(mag, w16(0x7F80)))
    };
    // t = 2^e: the exponent bits of a, at least 2^emin (the maximum after the AND, so that
    // a subnormal 2^emin works).
    let t = _mm512_max_epu16(_mm512_and_si512(a, w16(0x7C00)), w16(c.min_normal));
    let s = _mm512_fmadd_round_ph::<RNE>(
        _mm512_castsi512_ph(t),
        _mm512_castsi512_ph(w16(c.k)),
        _mm512_castsi512_ph(a),
    );
    let w = _mm512_maddubs_epi16(_mm512_castph_si512(s), w16(c.weights));
    let w = if c.halve {
        _mm512_srli_epi16::<1>(w)
    } else {
        w
    };
    let w = match c.nan {
        Some(code) => _mm512_mask_mov_epi16(w, nan, w16(code)),
        None => w,
    };
    let neg = _mm512_movepi16_mask(x);
    let neg = if c.fnuz {
        // No sign on a zero code or on the NaN code 0x80.
        neg & _mm512_test_epi16_mask(w, w16(0x7F))
    } else {
        neg
    };
    _mm512_mask_add_epi16(w, neg, w, w16(c.sign))
}

/// 32 F16 (`h`) to 32 F8E5M2 codes, sign included, in the high byte of each 16-bit lane.
/// See "F16 → F8E5M2" in the module docs.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512fp16,avx2,fma,f16c")]
fn e5m2_words<const SAT: bool>(h: __m512i) -> __m512i {
    let w16 = |v: u16| _mm512_set1_epi16(v as i16);
    let x = if SAT {
        _mm512_min_epi16(_mm512_min_epu16(h, w16(0xFB7F)), w16(0x7B7F))
    } else {
        h
    };
    let odd = _mm512_test_epi16_mask(x, w16(0x0100));
    let r = _mm512_add_epi16(x, w16(0x007F));
    let r = _mm512_mask_add_epi16(r, odd, r, w16(1));
    let hf = _mm512_castsi512_ph(h);
    let nan = _mm512_cmp_ph_mask::<_CMP_UNORD_Q>(hf, hf);
    // (h & 0x8000) | 0x7E00 (ternary-logic table (A & B) | C).
    let nan_code = _mm512_ternarylogic_epi32::<0xEA>(h, w16(0x8000), w16(0x7E00));
    _mm512_mask_mov_epi16(r, nan, nan_code)
}

/// The codes of 32 F16 or BF16 (`SRC`) values in one byte of each 16-bit lane: the high
/// byte for E5M2 (from F16 only), the low byte for the others.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512fp16,avx2,fma,f16c")]
fn words<const SRC: u8, const FMT: u8, const SAT: bool>(x: __m512i) -> __m512i {
    if FMT == E5M2 {
        e5m2_words::<SAT>(x)
    } else {
        fma_words::<SRC, FMT, SAT>(x)
    }
}

/// The `VPERMT2B` index that gathers byte `ODD` (0 or 1) of every 16-bit lane of two
/// vectors, in order (index bit 6 selects the second vector).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512fp16,avx2,fma,f16c")]
fn gather_index<const ODD: u8>() -> __m512i {
    let ix: [u8; 64] = core::array::from_fn(|i| (2 * i) as u8 + ODD);
    // SAFETY: `[u8; 64]` and `__m512i` are both 64 bytes of plain bits.
    unsafe { core::mem::transmute::<[u8; 64], __m512i>(ix) }
}

/// Narrows `len` F16 or BF16 (`SRC`) values to format `FMT` under the overflow policy `SAT`
/// and `NanPolicy::Preserve`.
///
/// # Safety
/// [`RawKernel`](crate::arch::RawKernel) contract, and the CPU has this backend's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512fp16,avx2,fma,f16c")]
unsafe fn narrow16<const SRC: u8, const FMT: u8, const SAT: bool>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let odd = FMT == E5M2;
    let index = if odd {
        gather_index::<1>()
    } else {
        gather_index::<0>()
    };
    let end = src.wrapping_add(2 * len);
    let mut i = 0;
    while len - i >= BLOCK {
        avx512::prefetch_ahead(src.wrapping_add(2 * i), end, BLOCK * 2);
        // SAFETY: values i..i+64 are in bounds of both slices (len - i >= 64): two 64-byte
        // loads (128 bytes of 16-bit values) from the source, one 64-byte store to the
        // destination.
        unsafe {
            let p = src.add(2 * i);
            let lo = words::<SRC, FMT, SAT>(_mm512_loadu_si512(p.cast()));
            let hi = words::<SRC, FMT, SAT>(_mm512_loadu_si512(p.add(64).cast()));
            avx512::store512(dst.add(i), _mm512_permutex2var_epi8(lo, index, hi));
        }
        i += BLOCK;
    }
    while i < len {
        let n = (len - i).min(STEP);
        let k = (u32::MAX >> (32 - n)) as __mmask32;
        // SAFETY: the mask covers values i..i+n only (n <= len - i); the rest are not
        // accessed.
        unsafe {
            let x = _mm512_maskz_loadu_epi16(k, src.add(2 * i).cast());
            let w = words::<SRC, FMT, SAT>(x);
            let w = if odd { _mm512_srli_epi16::<8>(w) } else { w };
            _mm512_mask_cvtepi16_storeu_epi8(dst.add(i).cast(), k, w);
        }
        i += n;
    }
}

/// Table entry: F16 or BF16 (`SRC`) to format `FMT`, in one pass.
///
/// # Safety
/// [`crate::arch::RawKernel`]: in particular the CPU has AVX-512 F/BW/VL/DQ, AVX512_VBMI,
/// AVX512_FP16, AVX2, FMA and F16C, which the dispatcher checks (`avx512_fp16_available`)
/// before handing out this table.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512fp16,avx2,fma,f16c")]
unsafe fn entry<const SRC: u8, const FMT: u8>(src: *const u8, dst: *mut u8, len: usize, o: Policy) {
    // SAFETY: forwarded contract; the features are present (see above).
    unsafe {
        match o.overflow {
            Overflow::Saturate => narrow16::<SRC, FMT, true>(src, dst, len),
            Overflow::NonSaturating => narrow16::<SRC, FMT, false>(src, dst, len),
        }
    }
}

/// Sets this file's kernels in the AVX512_FP16 table (`tables.rs` composes the tables).
pub(super) const fn set(t: &mut Kernels) {
    use crate::format as f;
    t.set_direct::<f::F16, f::F8E4M3>(entry::<SRC_F16, E4M3>);
    t.set_direct::<f::F16, f::F8E5M2>(entry::<SRC_F16, E5M2>);
    t.set_direct::<f::F16, f::F6E2M3>(entry::<SRC_F16, E2M3>);
    t.set_direct::<f::F16, f::F6E3M2>(entry::<SRC_F16, E3M2>);
    t.set_direct::<f::F16, f::F8E4M3FNUZ>(entry::<SRC_F16, E4M3FNUZ>);
    t.set_direct::<f::F16, f::F8E4M3B11FNUZ>(entry::<SRC_F16, E4M3B11FNUZ>);
    t.set_direct::<f::F16, f::F8E3M4>(entry::<SRC_F16, E3M4>);
    t.set_direct::<f::F16, f::F8E4M3IEEE>(entry::<SRC_F16, E4M3IEEE>);
    t.set_direct::<f::F16, f::F4E2M1>(entry::<SRC_F16, E2M1>);
    t.set_direct::<f::BF16, f::F8E4M3>(entry::<SRC_BF16, E4M3>);
    t.set_direct::<f::BF16, f::F6E2M3>(entry::<SRC_BF16, E2M3>);
    t.set_direct::<f::BF16, f::F6E3M2>(entry::<SRC_BF16, E3M2>);
    t.set_direct::<f::BF16, f::F8E4M3FNUZ>(entry::<SRC_BF16, E4M3FNUZ>);
    t.set_direct::<f::BF16, f::F8E4M3B11FNUZ>(entry::<SRC_BF16, E4M3B11FNUZ>);
    t.set_direct::<f::BF16, f::F8E3M4>(entry::<SRC_BF16, E3M4>);
    t.set_direct::<f::BF16, f::F8E4M3IEEE>(entry::<SRC_BF16, E4M3IEEE>);
    t.set_direct::<f::BF16, f::F4E2M1>(entry::<SRC_BF16, E2M1>);
}

/// The `Avx512Fp16` override list: every pair where this file's kernel replaces the
/// `avx512-bf16` kernel, with what makes it faster and its rate over that kernel's: medians
/// of three runs of `cargo run --release --example throughput -- --generic --size 1024
/// --backend avx512-fp16` (both kernels timed in alternating batches on the same buffers;
/// the "generic" column is the `avx512-bf16` table) on an Intel Xeon with AVX512_FP16
/// (Sapphire/Emerald Rapids class, 2 vCPU VM; docs/performance.md). `tests/kernels.rs`
/// fails when this list and the tables disagree.
pub(crate) const OVERRIDES: &[Override] = &[
    Override {
        pair: "F16 -> F8E4M3",
        wins_by: "the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes, no widening to f32",
        ratio: 1.72,
    },
    Override {
        pair: "F16 -> F8E5M2",
        wins_by: "integer round-to-nearest-even of the F16 word's top byte on 32 lanes, one `VPERMT2B` per 64 codes",
        ratio: 2.11,
    },
    Override {
        pair: "F16 -> F8E4M3FNUZ",
        wins_by: "the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes, no widening to f32",
        ratio: 2.75,
    },
    Override {
        pair: "F16 -> F8E4M3B11FNUZ",
        wins_by: "the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes, no widening to f32",
        ratio: 2.75,
    },
    Override {
        pair: "F16 -> F8E3M4",
        wins_by: "the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes, no widening to f32",
        ratio: 2.93,
    },
    Override {
        pair: "F16 -> F8E4M3IEEE",
        wins_by: "the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes, no widening to f32",
        ratio: 2.86,
    },
    Override {
        pair: "F16 -> F6E2M3",
        wins_by: "the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes, no widening to f32",
        ratio: 2.24,
    },
    Override {
        pair: "F16 -> F6E3M2",
        wins_by: "the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes, no widening to f32",
        ratio: 2.24,
    },
    Override {
        pair: "F16 -> F4E2M1",
        wins_by: "the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes, no widening to f32",
        ratio: 2.10,
    },
    Override {
        pair: "BF16 -> F8E4M3",
        wins_by: "BF16 moved to F16 bits, then the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes",
        ratio: 1.54,
    },
    Override {
        pair: "BF16 -> F8E4M3FNUZ",
        wins_by: "BF16 moved to F16 bits, then the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes",
        ratio: 2.28,
    },
    Override {
        pair: "BF16 -> F8E4M3B11FNUZ",
        wins_by: "BF16 moved to F16 bits, then the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes",
        ratio: 2.33,
    },
    Override {
        pair: "BF16 -> F8E3M4",
        wins_by: "BF16 moved to F16 bits, then the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes",
        ratio: 2.56,
    },
    Override {
        pair: "BF16 -> F8E4M3IEEE",
        wins_by: "BF16 moved to F16 bits, then the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes",
        ratio: 2.57,
    },
    Override {
        pair: "BF16 -> F6E2M3",
        wins_by: "BF16 moved to F16 bits, then the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes",
        ratio: 1.97,
    },
    Override {
        pair: "BF16 -> F6E3M2",
        wins_by: "BF16 moved to F16 bits, then the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes",
        ratio: 1.97,
    },
    Override {
        pair: "BF16 -> F4E2M1",
        wins_by: "BF16 moved to F16 bits, then the fused multiply-add rounding in F16 (`VFMADD*PH`) on 32 lanes",
        ratio: 1.82,
    },
];
