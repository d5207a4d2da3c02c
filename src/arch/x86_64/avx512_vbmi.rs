//! The `Avx512Vbmi` backend: the `Avx512` kernels, except that F8E4M3 widens to f32 and f64,
//! and F8E5M2 to f64, through byte table lookups (`VPERMI2B`/`VPERMT2B`, AVX512_VBMI: Ice
//! Lake, Sapphire Rapids, Zen 4 and later).
//!
//! # Why a table
//!
//! An fp8 code has 128 magnitudes, and `VPERMI2B` looks a byte up in a 128-byte table held
//! in two registers (it reads the low 7 bits of each index byte and ignores the 8th, which
//! is the fp8 sign). Every fp8 value is exact in f32 and f64 with at most three fraction
//! bits, so its widened bits are zero below the top 16 (f32: sign, 8 exponent bits, 7
//! fraction bits; f64: sign, 11 exponent bits, 4 fraction bits), NaN payloads included.
//! Two lookups per 64 codes give those 16 bits as a low byte `L` and a high byte `H`, and
//! one ternary-logic step ORs the code's sign into `H`. The tables come from
//! [`wide_bits`], a `const fn` that states the codec's widening rule for the two formats
//! (exact re-biasing, subnormal codes normalised, the NaN rules of `F8E4M3`/`F8E5M2`); the
//! build checks that every entry has zero low bits, and `tests/widen.rs` checks every code
//! on this backend against the independent oracle.
//!
//! No float instruction is involved, so MXCSR (DAZ, FTZ, rounding) cannot matter.
//!
//! # Placing the bytes
//!
//! The 16-bit values must end up in the top half of each 32-bit (f32) or 64-bit (f64)
//! lane, in element order. One single-source `VPERMB` first reorders the 64 codes (the
//! lookups follow the codes, so `L` and `H` come out in that order), and `VPUNPCKLBW` and
//! `VPUNPCKHBW` of `L` and `H` then give two vectors of 16-bit values, each lane holding
//! elements a fixed distance apart ([`order`]):
//!
//! * *f32*: 32-bit lane `j` of the first vector holds elements `j` (low half) and `16 + j`
//!   (high half). Shifting each lane left by 16 gives elements 0..16; clearing the low 16
//!   bits gives elements 16..32. The second vector gives 32..64 the same way.
//! * *f64*: 64-bit lane `j` holds elements `j`, `8 + j`, `16 + j`, `24 + j` (low to high).
//!   Shifts left by 48, 32 and 16 (the last two then masked to the top 16 bits) and one AND
//!   give four vectors of eight f64.
//!
//! A call's last `len % 64` codes are one more block with a masked load and masked stores:
//! masked-off lanes are neither read nor written.
//!
//! # Which pairs use it
//!
//! On the Emerald Rapids machine this was measured on, the two-source byte permutes cost two
//! cycles each (a dependency-free loop of `VPERMT2B zmm` ran at half the rate of `VPERMB`
//! and `VPERMT2D`), so 64 codes cost 7 cycles of the shuffle port: 4 for the lookups, 1 for
//! the reordering and 2 for the unpacks. (A first version placed the bytes with two
//! `VPERMT2B`s instead, 8 cycles, and measured about 25% slower.) That beats the `Avx512`
//! kernels where those do more: F8E4M3 → f32 (sign extension, shift, mask, NaN compare and
//! fix-up, `VCVTPH2PS` and a multiply per 16; about 46-51 against 77-92 ns per 1 Ki codes
//! in four alternating runs of the criterion bench) and both fp8 formats to f64 (the f32
//! path plus `VCVTPS2PD`; 64-83 against 115-144 ns). F8E5M2 → f32 needs only a zero
//! extension, a shift and `VCVTPH2PS`; there the two kernels measured the same (46-48 ns),
//! so that pair keeps the `Avx512` kernel.

use core::arch::x86_64::*;

use super::avx512::{self, BLOCK, E4M3, E5M2, run_split, run_split_cold};
use crate::arch::Kernels;
use crate::options::Policy;

/// f32 (`wide64 == false`) or f64 bits of the fp8 magnitude code `m` (`m < 128`) of format
/// `fmt`. The f32 part restates `codec::widen_f32` for the two fp8 formats, because that
/// function is generic over a trait whose methods cannot run in a `const` context; the f64
/// step is the codec's own `f32_bits_to_f64_bits`.
const fn wide_bits(fmt: u8, m: u32, wide64: bool) -> u64 {
    let (exp_bits, man_bits) = if fmt == E4M3 { (4, 3) } else { (5, 2) };
    let bias = (1 << (exp_bits - 1)) - 1;
    let exp = m >> man_bits;
    let man = m & ((1 << man_bits) - 1);
    let f32_bits: u32 = if fmt == E4M3 && m == 0x7F {
        // E4M3's NaN: the canonical quiet NaN.
        0x7FC0_0000
    } else if fmt == E5M2 && m > 0x7C {
        // E5M2's NaNs widen as the binary16 `m << 8` does: payload kept, quiet bit set.
        0x7FC0_0000 | ((m & 0x03) << 21)
    } else if fmt == E5M2 && m == 0x7C {
        0x7F80_0000
    } else if exp == 0 && man == 0 {
        0
    } else if exp == 0 {
        // man * 2^(1 - bias - man_bits), normal in f32, with its leading one at bit p.
        let p = 31 - man.leading_zeros();
        let e32 = 127 + 1 + p - bias - man_bits;
        (e32 << 23) | ((man << (23 - p)) & 0x007F_FFFF)
    } else {
        ((exp + 127 - bias) << 23) | (man << (23 - man_bits))
    };
    if wide64 {
        // The codec's exact f32 → f64 step (a `const fn`).
        crate::codec::f32_bits_to_f64_bits(f32_bits)
    } else {
        f32_bits as u64
    }
}

/// The two 128-byte tables of one format and destination: the low and the high byte of the
/// top 16 bits of each magnitude's widened bits.
#[repr(C, align(64))]
struct Tables {
    lo: [u8; 128],
    hi: [u8; 128],
}

/// The tables of format `fmt` for f32 (`wide64 == false`) or f64 destinations; evaluated at
/// compile time, where a failed check stops the build.
const fn tables(fmt: u8, wide64: bool) -> Tables {
    let shift = if wide64 { 48 } else { 16 };
    let mut t = Tables {
        lo: [0; 128],
        hi: [0; 128],
    };
    let mut m = 0;
    while m < 128 {
        let w = wide_bits(fmt, m as u32, wide64);
        // The layout this kernel relies on: nothing below the top 16 bits.
        assert!(w & ((1 << shift) - 1) == 0);
        assert!(w >> (shift + 15) == 0, "magnitudes have a clear sign bit");
        t.lo[m] = (w >> shift) as u8;
        t.hi[m] = (w >> (shift + 8)) as u8;
        m += 1;
    }
    t
}

/// F16 bits of an f32 value that F16 holds exactly and as a normal number (every non-zero
/// finite E4M3 value: 2^-9 ≤ |x| ≤ 448, at most 4 significant bits), or of zero, or the
/// quiet NaN (`0x7FC00000` → `0x7E00`, what vcvt's f32 → F16 narrowing keeps of it). The
/// sign is clear (magnitudes only).
const fn f16_of_exact(f32_bits: u32) -> u16 {
    if f32_bits == 0 {
        0
    } else if f32_bits == 0x7FC0_0000 {
        0x7E00
    } else {
        let exp = (f32_bits >> 23) as i32 - 127;
        assert!(-14 <= exp && exp <= 15, "a normal F16 exponent");
        assert!(f32_bits & 0x1FFF == 0, "at most 10 fraction bits");
        (((exp + 15) as u16) << 10) | ((f32_bits >> 13) & 0x3FF) as u16
    }
}

/// The 16-bit tables of F8E4M3 → BF16 (`f16 == false`: the top half of the f32 bits, which
/// every E4M3 value, NaN included, leaves zero below) or → F16.
const fn tables16(f16: bool) -> Tables {
    let mut t = Tables {
        lo: [0; 128],
        hi: [0; 128],
    };
    let mut m = 0;
    while m < 128 {
        let w = wide_bits(E4M3, m as u32, false) as u32;
        assert!(w & 0xFFFF == 0, "exact in BF16");
        let v = if f16 {
            f16_of_exact(w)
        } else {
            (w >> 16) as u16
        };
        assert!(v >> 15 == 0, "magnitudes have a clear sign bit");
        t.lo[m] = v as u8;
        t.hi[m] = (v >> 8) as u8;
        m += 1;
    }
    t
}

static E4M3_F32: Tables = tables(E4M3, false);
static E4M3_BF16: Tables = tables16(false);
static E4M3_F16: Tables = tables16(true);
static E4M3_F64: Tables = tables(E4M3, true);
static E5M2_F64: Tables = tables(E5M2, true);

/// The four table registers of a kernel.
#[derive(Clone, Copy)]
struct Lut {
    lo0: __m512i,
    lo1: __m512i,
    hi0: __m512i,
    hi1: __m512i,
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
fn load_lut<const FMT: u8, const WIDE64: bool>() -> Lut {
    // F8E5M2 → f32 stays on the `Avx512` kernel (see `table`), so it has no table here.
    const { assert!(FMT == E4M3 || (FMT == E5M2 && WIDE64)) };
    let t: &Tables = match (FMT, WIDE64) {
        (E4M3, false) => &E4M3_F32,
        (E4M3, true) => &E4M3_F64,
        _ => &E5M2_F64,
    };
    // SAFETY: each load reads 64 bytes inside a 128-byte array of the static `t`.
    unsafe {
        Lut {
            lo0: _mm512_loadu_si512(t.lo.as_ptr().cast()),
            lo1: _mm512_loadu_si512(t.lo.as_ptr().add(64).cast()),
            hi0: _mm512_loadu_si512(t.hi.as_ptr().cast()),
            hi1: _mm512_loadu_si512(t.hi.as_ptr().add(64).cast()),
        }
    }
}

/// The low and high bytes of the top 16 bits of the widened values of 64 codes, the code's
/// sign included in the high byte.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
fn lookup(t: Lut, c: __m512i) -> (__m512i, __m512i) {
    // Each index byte selects with its low 7 bits (bit 6: which register); bit 7, the sign,
    // is ignored.
    let lo = _mm512_permutex2var_epi8(t.lo0, c, t.lo1);
    let hi = _mm512_permutex2var_epi8(t.hi0, c, t.hi1);
    // (c & 0x80) | hi: ternary-logic table (A & B) | C.
    let hi = _mm512_ternarylogic_epi32::<0xEA>(c, _mm512_set1_epi8(i8::MIN), hi);
    (lo, hi)
}

/// Byte indices for `VPERMB` that order 64 codes so that `VPUNPCKLBW`/`VPUNPCKHBW` of their
/// low and high bytes put `n` elements (`n = 2` for f32, 4 for f64) into each `2n`-byte lane
/// of two vectors: lane `j` of the first holds, from its low end, elements `j`,
/// `j + 32 / n`, ... of codes 0..32, the second the same of codes 32..64.
///
/// `VPUNPCKLBW` fills 16-bit word `w` (0..8) of each 128-bit block `k` from byte `16k + w` of
/// its operands, which is word `8k + w` of the result, so that byte must hold element
/// `(32 / n) * ((8k + w) % n) + (8k + w) / n`; `VPUNPCKHBW` reads bytes `16k + 8 + w` for the
/// second vector, which takes the codes 32 higher.
const fn order(n: usize) -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut k = 0;
    while k < 4 {
        let mut w = 0;
        while w < 8 {
            let g = 8 * k + w;
            let e = (32 / n) * (g % n) + g / n;
            idx[16 * k + w] = e as u8;
            idx[16 * k + 8 + w] = (32 + e) as u8;
            w += 1;
        }
        k += 1;
    }
    idx
}

#[repr(C, align(64))]
struct Idx([u8; 64]);

static ORDER_16: Idx = Idx(order(1));
static ORDER_F32: Idx = Idx(order(2));
static ORDER_F64: Idx = Idx(order(4));

/// The low and high bytes of 64 codes' top 16 bits, interleaved into 16-bit words in the
/// order of [`order`]: `ord` holds its indices.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
fn words(t: Lut, ord: __m512i, c: __m512i) -> (__m512i, __m512i) {
    // Reordering the codes before the lookups is one single-source permute; the lookups
    // follow the codes, and the unpacks then interleave within 128-bit blocks.
    let (lo, hi) = lookup(t, _mm512_permutexvar_epi8(ord, c));
    (_mm512_unpacklo_epi8(lo, hi), _mm512_unpackhi_epi8(lo, hi))
}

/// Widens 64 codes (`c`) to f32 bits, as four vectors of 16 in order.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
fn widen64_f32(t: Lut, ord: __m512i, c: __m512i) -> [__m512i; 4] {
    let (w0, w1) = words(t, ord, c);
    let top = _mm512_set1_epi32(0xFFFF_0000_u32 as i32);
    [
        _mm512_slli_epi32::<16>(w0),
        _mm512_and_si512(w0, top),
        _mm512_slli_epi32::<16>(w1),
        _mm512_and_si512(w1, top),
    ]
}

/// Widens 64 codes (`c`) to f64 bits, as eight vectors of 8 in order.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
fn widen64_f64(t: Lut, ord: __m512i, c: __m512i) -> [__m512i; 8] {
    let (w0, w1) = words(t, ord, c);
    let top = _mm512_set1_epi64(0xFFFF_0000_0000_0000_u64 as i64);
    [
        _mm512_slli_epi64::<48>(w0),
        _mm512_and_si512(_mm512_slli_epi64::<32>(w0), top),
        _mm512_and_si512(_mm512_slli_epi64::<16>(w0), top),
        _mm512_and_si512(w0, top),
        _mm512_slli_epi64::<48>(w1),
        _mm512_and_si512(_mm512_slli_epi64::<32>(w1), top),
        _mm512_and_si512(_mm512_slli_epi64::<16>(w1), top),
        _mm512_and_si512(w1, top),
    ]
}

/// Widens `len` fp8 codes of format `FMT` to f32 (`WIDE64 == false`) or f64, the 64-element
/// blocks with streaming stores when `NT`.
///
/// # Safety
/// [`crate::arch::RawKernel`] contract, the CPU has this backend's features, and `dst` is
/// 64-byte aligned when `NT`.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn widen_fp8<const FMT: u8, const WIDE64: bool, const NT: bool>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let t = load_lut::<FMT, WIDE64>();
    let ord = if WIDE64 { &ORDER_F64 } else { &ORDER_F32 };
    // SAFETY: a 64-byte load of a static 64-byte array.
    let ord = unsafe { _mm512_loadu_si512(ord.0.as_ptr().cast()) };
    let end = src.wrapping_add(len);
    let mut i = 0;
    while len - i >= BLOCK {
        avx512::prefetch_ahead(src.wrapping_add(i), end, BLOCK);
        // SAFETY: elements i..i+64 are in bounds of both slices (len - i >= 64): a 64-byte
        // load, and 256 (f32) or 512 (f64) bytes of stores at element i.
        unsafe {
            let c = _mm512_loadu_si512(src.add(i).cast());
            if WIDE64 {
                let d = dst.add(8 * i);
                for (k, v) in widen64_f64(t, ord, c).into_iter().enumerate() {
                    avx512::store512::<NT>(d.add(64 * k), v);
                }
            } else {
                let d = dst.add(4 * i);
                for (k, v) in widen64_f32(t, ord, c).into_iter().enumerate() {
                    avx512::store512::<NT>(d.add(64 * k), v);
                }
            }
        }
        i += BLOCK;
    }
    let n = len - i;
    if n == 0 {
        return;
    }
    // Fewer than 64 codes left: lane k of the mask enables element i + k.
    let k: __mmask64 = (1u64 << n) - 1;
    // SAFETY: the masked load reads bytes i..i+n of the source only; each masked store
    // writes only the elements i + k (k < n) that its mask bits enable, all inside `dst`.
    unsafe {
        let c = _mm512_maskz_loadu_epi8(k, src.add(i).cast());
        if WIDE64 {
            let d = dst.cast::<i64>().add(i);
            for (q, v) in widen64_f64(t, ord, c).into_iter().enumerate() {
                if 8 * q >= n {
                    break;
                }
                _mm512_mask_storeu_epi64(d.add(8 * q), (k >> (8 * q)) as __mmask8, v);
            }
        } else {
            let d = dst.cast::<i32>().add(i);
            for (q, v) in widen64_f32(t, ord, c).into_iter().enumerate() {
                if 16 * q >= n {
                    break;
                }
                _mm512_mask_storeu_epi32(d.add(16 * q), (k >> (16 * q)) as __mmask16, v);
            }
        }
    }
}

/// The two table registers of one 128-byte table.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
fn load_lut16(t: &'static Tables) -> Lut {
    // SAFETY: each load reads 64 bytes inside a 128-byte array of the static `t`.
    unsafe {
        Lut {
            lo0: _mm512_loadu_si512(t.lo.as_ptr().cast()),
            lo1: _mm512_loadu_si512(t.lo.as_ptr().add(64).cast()),
            hi0: _mm512_loadu_si512(t.hi.as_ptr().cast()),
            hi1: _mm512_loadu_si512(t.hi.as_ptr().add(64).cast()),
        }
    }
}

/// Converts `len` F8E4M3 codes to 16-bit codes (BF16 when `!F16`, else F16) by table: every
/// E4M3 value is exact in both, so the result is the value itself, the one rounding of the
/// two-pass route changing nothing, and no overflow policy has anything to do (E4M3's
/// largest, 448, is finite in both); the NaN codes give what `NanPolicy::Preserve` keeps of
/// the widened NaN (`0x7FC0` / `0x7E00` with the sign), the other policies run the
/// two-pass route with its NaN patch (`Kernels::set_direct`). `order(1)` puts the words in
/// element order: the first unpack gives elements 0..32, the second 32..64.
///
/// # Safety
/// [`crate::arch::RawKernel`] contract, the CPU has this backend's features, and `dst` is
/// 64-byte aligned when `NT`.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn e4m3_to_16<const F16: bool, const NT: bool>(src: *const u8, dst: *mut u8, len: usize) {
    let t = load_lut16(if F16 { &E4M3_F16 } else { &E4M3_BF16 });
    // SAFETY: a 64-byte load of a static 64-byte array.
    let ord = unsafe { _mm512_loadu_si512(ORDER_16.0.as_ptr().cast()) };
    let end = src.wrapping_add(len);
    let mut i = 0;
    while len - i >= BLOCK {
        avx512::prefetch_ahead(src.wrapping_add(i), end, BLOCK);
        // SAFETY: elements i..i+64 are in bounds of both slices (len - i >= 64): a 64-byte
        // load, and 128 bytes of stores at element i.
        unsafe {
            let (w0, w1) = words(t, ord, _mm512_loadu_si512(src.add(i).cast()));
            avx512::store512::<NT>(dst.add(2 * i), w0);
            avx512::store512::<NT>(dst.add(2 * i + 64), w1);
        }
        i += BLOCK;
    }
    let n = len - i;
    if n == 0 {
        return;
    }
    // Fewer than 64 codes left: lane k of the mask enables element i + k.
    let k: __mmask64 = (1u64 << n) - 1;
    // SAFETY: the masked load reads bytes i..i+n of the source only; each masked store
    // writes only the elements i + k (k < n) that its mask bits enable, all inside `dst`.
    unsafe {
        let (w0, w1) = words(t, ord, _mm512_maskz_loadu_epi8(k, src.add(i).cast()));
        let d = dst.cast::<i16>().add(i);
        _mm512_mask_storeu_epi16(d, k as __mmask32, w0);
        if n > 32 {
            _mm512_mask_storeu_epi16(d.add(32), (k >> 32) as __mmask32, w1);
        }
    }
}

/// Table entry: F8E4M3 → BF16 (`F16 == false`) or → F16, one pass ([`e4m3_to_16`]).
///
/// # Safety
/// As for [`entry_widen_fp8`].
unsafe fn entry_e4m3_to_16<const F16: bool>(src: *const u8, dst: *mut u8, len: usize, _o: Policy) {
    // SAFETY: forwarded contract; the features are present (see `entry_widen_fp8`);
    // `run_split` passes NT = true only for a destination part that starts 64-byte aligned.
    unsafe { run_split!(e4m3_to_16[F16](src, dst, len, 1, 2)) }
}

/// Table entry: fp8 format `FMT` to f32 (`WIDE64 == false`) or f64.
///
/// # Safety
/// [`crate::arch::RawKernel`]: in particular the CPU has AVX-512 F/BW/VL/DQ, AVX512_VBMI,
/// AVX2, FMA and F16C, which the dispatcher checks (`avx512_vbmi_available`) before handing
/// out this table.
unsafe fn entry_widen_fp8<const FMT: u8, const WIDE64: bool>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    _o: Policy,
) {
    let ds = if WIDE64 { 8 } else { 4 };
    // SAFETY: forwarded contract; the features are present (see above); `run_split` passes
    // NT = true only for a destination part that starts 64-byte aligned.
    unsafe { run_split!(widen_fp8[FMT, WIDE64](src, dst, len, 1, ds)) }
}

/// Sets this file's kernels in an AVX-512 VBMI table (`tables.rs` composes the tables).
pub(super) const fn set(t: &mut Kernels) {
    // F8E5M2 → f32 stays on the `Avx512` kernel (`code << 8` and `VCVTPH2PS`), which
    // measured as fast as this one (see the module docs).
    t.set::<crate::F8E4M3, f32>(entry_widen_fp8::<E4M3, false>);
    t.set::<crate::F8E4M3, f64>(entry_widen_fp8::<E4M3, true>);
    t.set::<crate::F8E5M2, f64>(entry_widen_fp8::<E5M2, true>);
    // F8E4M3 → BF16 and → F16 in one pass, by table (`e4m3_to_16`).
    t.set_direct::<crate::F8E4M3, crate::BF16>(entry_e4m3_to_16::<false>);
    t.set_direct::<crate::F8E4M3, crate::F16>(entry_e4m3_to_16::<true>);
}
