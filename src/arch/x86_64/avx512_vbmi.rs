//! The `Avx512Vbmi` backend: the `Avx512` kernels, except that F8E4M3 widens to f32 and f64,
//! F8E5M2 to f64, the one-byte formats whose every value BF16 and F16 hold exactly
//! (F8E4M3, the three fnuz formats, both fp6 formats, F4E2M1, F8E3M4, F8E4M3IEEE) convert to
//! BF16 and F16 in one pass, F8E5M2 converts to BF16 the same way, and the fnuz formats,
//! fp6, F8E3M4 and F8E4M3IEEE widen to f32 ([`to32`]), through
//! byte table lookups (`VPERMI2B`/`VPERMT2B`, AVX512_VBMI: Ice Lake, Sapphire
//! Rapids, Zen 4 and later).
//!
//! # Narrow → BF16/F16 by table ([`to16`])
//!
//! For these sources the two-pass route (widen to f32, narrow once) returns the value
//! itself, so each code's result is a fixed 16-bit word: the tables hold its low and high
//! bytes, built at compile time from a restatement of the codec's widening ([`wide_mag`],
//! [`word16`], which fail the build on any inexact entry). E4M3 and fnuz codes index a
//! 128-entry magnitude table and OR their bit 7 in as the sign (fnuz's `0x80`, which that
//! makes −0, is then replaced by its NaN word); fp6 and fp4 codes index a table of whole
//! codes. `VPERMB` with [`order`]`(1)` first reorders the 64 codes so that the byte unpacks
//! leave the words in element order. On the Zen 4 VM
//! (`throughput --size 1024 --backend avx512-vbmi,avx512`, five alternating runs, medians,
//! el/ns, the `avx512` column running the previous kernels): F8E4M3FNUZ → BF16 23.8
//! against 4.98, F6E2M3 → BF16 30.1 against 5.11, F6E3M2 → F16 28.7 against 7.70, F4E2M1 →
//! BF16 29.0 against 24.5 and → F16 30.8 against 24.3 (the `avx2_direct` tables).
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

use super::avx512::{self, BLOCK, E4M3, E5M2};
use crate::arch::Kernels;
use crate::codec::Format;
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
pub(super) struct Tables {
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

/// f32 bits of the magnitude code `m` (sign clear, not a NaN code) of format `F`, a finite
/// value (for a format with infinities, `m`'s exponent field is not all ones):
/// `codec::ieee_widen_f32` restated (it is not a `const fn`: its NaN rules are trait
/// methods); `tests/narrow_pairs.rs` checks every code of every pair that uses it against
/// the independent oracle.
const fn wide_mag<F: Format>(m: u32) -> u32 {
    assert!(!F::HAS_INF || m >> F::MAN_BITS != (1 << F::EXP_BITS) - 1);
    let exp = m >> F::MAN_BITS;
    let man = m & ((1 << F::MAN_BITS) - 1);
    if exp == 0 && man == 0 {
        0
    } else if exp == 0 {
        // man · 2^(1 − BIAS − MAN_BITS), normal in f32, its leading one at bit p.
        let p = 31 - man.leading_zeros();
        let e32 = (1 - F::BIAS - F::MAN_BITS as i32 + p as i32 + 127) as u32;
        (e32 << 23) | ((man << (23 - p)) & 0x007F_FFFF)
    } else {
        ((exp + 127 - F::BIAS as u32) << 23) | (man << (23 - F::MAN_BITS))
    }
}

/// The 16-bit word of f32 bits `w` that BF16 (`!f16`) or F16 holds exactly: BF16 is the top
/// half (the build fails if the low half is not zero); F16 re-biases a normal value or
/// shifts a subnormal one into place (the build fails if a bit would be lost or the value
/// is out of F16's range). NaNs are passed as the f32 quiet NaN with its sign, and give what
/// vcvt's f32 → BF16/F16 narrowing keeps of it under `NanPolicy::Preserve`.
const fn word16(w: u32, f16: bool) -> u16 {
    let sign = ((w >> 16) & 0x8000) as u16;
    let a = w & 0x7FFF_FFFF;
    if !f16 {
        assert!(w & 0xFFFF == 0, "exact in BF16");
        return (w >> 16) as u16;
    }
    if a == 0 {
        sign
    } else if a == 0x7FC0_0000 {
        sign | 0x7E00
    } else {
        let exp = (a >> 23) as i32 - 127;
        let sig = (a & 0x007F_FFFF) | 0x0080_0000;
        assert!(exp <= 15, "finite in F16");
        if exp >= -14 {
            assert!(a & 0x1FFF == 0, "at most 10 fraction bits");
            sign | (((exp + 15) as u16) << 10) | ((a >> 13) & 0x3FF) as u16
        } else {
            // An F16 subnormal: the value in units of 2^-24.
            let shift = (-1 - exp) as u32;
            assert!(shift < 24 && sig & ((1 << shift) - 1) == 0, "exact in F16");
            sign | (sig >> shift) as u16
        }
    }
}

/// How [`to16`] looks codes up.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A 128-entry table of magnitudes, the code's bit 7 ORed in as the sign (E4M3).
    Signed,
    /// As `Signed`, and code `0x80` (the fnuz NaN) replaced by the table's `nan` word.
    Fnuz,
    /// The whole code in the table's low 7 bits (fp6, fp4: entry `m` is code `m` with the
    /// bits above the format's width ignored, as the codec ignores them; bit 7 too).
    Whole,
}

/// The 16-bit tables of a narrow format → BF16/F16 pair, and the NaN word of `Mode::Fnuz`.
pub(super) struct Tables16 {
    pub(super) t: Tables,
    mode: Mode,
    nan: u16,
}

/// The tables of format `F` → BF16 (`!f16`) or F16: every value of these formats is exact in
/// both, so each code's result is one fixed word (no rounding, no overflow).
const fn tables16_of<F: Format>(mode: Mode, f16: bool) -> Tables16 {
    let mut t = Tables {
        lo: [0; 128],
        hi: [0; 128],
    };
    let mut m = 0;
    while m < 128 {
        let w = match mode {
            // E4M3's magnitude NaN code 0x7F: the f32 quiet NaN.
            Mode::Signed if m == 0x7F => 0x7FC0_0000,
            Mode::Signed | Mode::Fnuz => wide_mag::<F>(m as u32),
            Mode::Whole => {
                let c = m as u32 & F::CODE_MASK;
                ((c & F::SIGN_BIT != 0) as u32) << 31 | wide_mag::<F>(c & F::MAG_MASK)
            }
        };
        let v = word16(w, f16);
        assert!(
            matches!(mode, Mode::Whole) || v >> 15 == 0,
            "magnitudes have a clear sign bit"
        );
        t.lo[m] = v as u8;
        t.hi[m] = (v >> 8) as u8;
        m += 1;
    }
    // The fnuz NaN widens to the negative quiet NaN (`nan_to_f32` of those formats).
    let nan = word16(0xFFC0_0000, f16);
    Tables16 { t, mode, nan }
}

static E4M3_F32: Tables = tables(E4M3, false);
static E4M3_BF16: Tables16 = tables16_of::<crate::F8E4M3>(Mode::Signed, false);
static E4M3_F16: Tables16 = tables16_of::<crate::F8E4M3>(Mode::Signed, true);
static E4M3FNUZ_BF16: Tables16 = tables16_of::<crate::F8E4M3FNUZ>(Mode::Fnuz, false);
static E4M3FNUZ_F16: Tables16 = tables16_of::<crate::F8E4M3FNUZ>(Mode::Fnuz, true);
static E5M2FNUZ_BF16: Tables16 = tables16_of::<crate::F8E5M2FNUZ>(Mode::Fnuz, false);
static E5M2FNUZ_F16: Tables16 = tables16_of::<crate::F8E5M2FNUZ>(Mode::Fnuz, true);
static E2M3_BF16: Tables16 = tables16_of::<crate::F6E2M3>(Mode::Whole, false);
static E2M3_F16: Tables16 = tables16_of::<crate::F6E2M3>(Mode::Whole, true);
static E3M2_BF16: Tables16 = tables16_of::<crate::F6E3M2>(Mode::Whole, false);
static E3M2_F16: Tables16 = tables16_of::<crate::F6E3M2>(Mode::Whole, true);
static E2M1_BF16: Tables16 = tables16_of::<crate::F4E2M1>(Mode::Whole, false);
static E2M1_F16: Tables16 = tables16_of::<crate::F4E2M1>(Mode::Whole, true);
static E4M3B11FNUZ_BF16: Tables16 = tables16_of::<crate::F8E4M3B11FNUZ>(Mode::Fnuz, false);
static E4M3B11FNUZ_F16: Tables16 = tables16_of::<crate::F8E4M3B11FNUZ>(Mode::Fnuz, true);

/// The tables of an IEEE-like signed one-byte format with infinities and NaNs (F8E3M4,
/// F8E4M3IEEE) → BF16 (`!f16`) or F16: finite magnitudes as in [`tables16_of`], the
/// infinity as the destination's infinity or, under `Overflow::Saturate` (`sat`), its MAX
/// (the f32 → BF16/F16 narrowing saturates an infinity so), and every NaN magnitude as the
/// quiet NaN (these formats widen a NaN to the quiet NaN of its sign, payload dropped:
/// `nan_to_f32` of `src/format/f8e3m4.rs` and `f8e4m3ieee.rs`). Every finite value of both
/// formats is exact in BF16 and F16 ([`word16`] fails the build otherwise).
const fn tables16_ieee<F: Format>(f16: bool, sat: bool) -> Tables16 {
    assert!(F::HAS_INF && F::SIGNED && F::BITS == 8);
    let mut t = Tables {
        lo: [0; 128],
        hi: [0; 128],
    };
    let top = (1 << F::EXP_BITS) - 1;
    let mut m = 0;
    while m < 128 {
        let v = if (m as u32) >> F::MAN_BITS != top {
            word16(wide_mag::<F>(m as u32), f16)
        } else if m as u32 & ((1 << F::MAN_BITS) - 1) != 0 {
            word16(0x7FC0_0000, f16)
        } else if sat {
            // The destination's MAX.
            if f16 { 0x7BFF } else { 0x7F7F }
        } else if f16 {
            0x7C00
        } else {
            0x7F80
        };
        t.lo[m] = v as u8;
        t.hi[m] = (v >> 8) as u8;
        m += 1;
    }
    Tables16 {
        t,
        mode: Mode::Signed,
        nan: 0,
    }
}

static E3M4_BF16: Tables16 = tables16_ieee::<crate::F8E3M4>(false, false);
static E3M4_F16: Tables16 = tables16_ieee::<crate::F8E3M4>(true, false);
static E3M4_BF16_SAT: Tables16 = tables16_ieee::<crate::F8E3M4>(false, true);
static E3M4_F16_SAT: Tables16 = tables16_ieee::<crate::F8E3M4>(true, true);
static E4M3IEEE_BF16: Tables16 = tables16_ieee::<crate::F8E4M3IEEE>(false, false);
static E4M3IEEE_F16: Tables16 = tables16_ieee::<crate::F8E4M3IEEE>(true, false);
static E4M3IEEE_BF16_SAT: Tables16 = tables16_ieee::<crate::F8E4M3IEEE>(false, true);
static E4M3IEEE_F16_SAT: Tables16 = tables16_ieee::<crate::F8E4M3IEEE>(true, true);
/// F8E5M2 → BF16: the top halves of the f32 widening's bits ([`tables`]), which are the BF16
/// words, since every E5M2 value is exact in BF16 and BF16 is the top half of f32. E5M2's
/// infinity and NaN payloads, which [`wide_mag`] does not state, come from [`wide_bits`]: a
/// NaN widens to `0x7FC0_0000 | payload << 21`, whose top half is what the f32 → BF16
/// narrowing keeps of it under `NanPolicy::Preserve` (the quiet bit is already set).
static E5M2_BF16: Tables16 = Tables16 {
    t: tables(E5M2, false),
    mode: Mode::Signed,
    nan: 0,
};
/// [`E5M2_BF16`] under `Overflow::Saturate`, where the infinity (magnitude code `0x7C`)
/// becomes BF16's MAX (`0x7F7F`), as the f32 → BF16 narrowing saturates it; BF16 holds every
/// finite E5M2 value, so nothing else changes.
static E5M2_BF16_SAT: Tables16 = {
    let mut t = tables(E5M2, false);
    t.lo[0x7C] = 0x7F;
    t.hi[0x7C] = 0x7F;
    Tables16 {
        t,
        mode: Mode::Signed,
        nan: 0,
    }
};

/// The tables of pair number `K` of [`set`]'s list (even: → BF16, odd: → F16, but: 12 and 15
/// are F8E4M3B11FNUZ → BF16 and → F16, 13 and 14 F8E5M2 → BF16 without and with `Saturate`;
/// 16..20 F8E3M4 → BF16, → F16, then the two under `Saturate`; 20..24 the same for
/// F8E4M3IEEE).
pub(super) const fn pair16(k: u8) -> &'static Tables16 {
    match k {
        0 => &E4M3_BF16,
        1 => &E4M3_F16,
        2 => &E4M3FNUZ_BF16,
        3 => &E4M3FNUZ_F16,
        4 => &E5M2FNUZ_BF16,
        5 => &E5M2FNUZ_F16,
        6 => &E2M3_BF16,
        7 => &E2M3_F16,
        8 => &E3M2_BF16,
        9 => &E3M2_F16,
        10 => &E2M1_BF16,
        12 => &E4M3B11FNUZ_BF16,
        13 => &E5M2_BF16,
        14 => &E5M2_BF16_SAT,
        15 => &E4M3B11FNUZ_F16,
        16 => &E3M4_BF16,
        17 => &E3M4_F16,
        18 => &E3M4_BF16_SAT,
        19 => &E3M4_F16_SAT,
        20 => &E4M3IEEE_BF16,
        21 => &E4M3IEEE_F16,
        22 => &E4M3IEEE_BF16_SAT,
        23 => &E4M3IEEE_F16_SAT,
        _ => &E2M1_F16,
    }
}
static E4M3_F64: Tables = tables(E4M3, true);
static E5M2_F64: Tables = tables(E5M2, true);

/// The four table registers of a kernel.
#[derive(Clone, Copy)]
pub(super) struct Lut {
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
    load_tables(t)
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
pub(super) struct Idx(pub(super) [u8; 64]);

pub(super) static ORDER_16: Idx = Idx(order(1));
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

/// Widens `len` fp8 codes of format `FMT` to f32 (`WIDE64 == false`) or f64.
///
/// # Safety
/// [`crate::arch::RawKernel`] contract, and the CPU has this backend's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn widen_fp8<const FMT: u8, const WIDE64: bool>(src: *const u8, dst: *mut u8, len: usize) {
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
                    avx512::store512(d.add(64 * k), v);
                }
            } else {
                let d = dst.add(4 * i);
                for (k, v) in widen64_f32(t, ord, c).into_iter().enumerate() {
                    avx512::store512(d.add(64 * k), v);
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

/// The four table registers of `t` (its low-byte and high-byte tables, two each).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
pub(super) fn load_tables(t: &'static Tables) -> Lut {
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

/// The 16-bit words of 64 codes `c` in element order (`ord` = [`ORDER_16`]): elements 0..32
/// in the first vector, 32..64 in the second.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
pub(super) fn words16(t: Lut, p: &Tables16, ord: __m512i, c: __m512i) -> (__m512i, __m512i) {
    let c = _mm512_permutexvar_epi8(ord, c);
    let (lo, hi) = if p.mode == Mode::Whole {
        // Bit 7 (and, through the table, the bits above the format's width) ignored.
        (
            _mm512_permutex2var_epi8(t.lo0, c, t.lo1),
            _mm512_permutex2var_epi8(t.hi0, c, t.hi1),
        )
    } else {
        lookup(t, c)
    };
    let (lo, hi) = if p.mode == Mode::Fnuz {
        // Code 0x80, which the lookup made −0, is the NaN.
        let nan = _mm512_cmpeq_epi8_mask(c, _mm512_set1_epi8(i8::MIN));
        (
            _mm512_mask_mov_epi8(lo, nan, _mm512_set1_epi8(p.nan as i8)),
            _mm512_mask_mov_epi8(hi, nan, _mm512_set1_epi8((p.nan >> 8) as i8)),
        )
    } else {
        (lo, hi)
    };
    (_mm512_unpacklo_epi8(lo, hi), _mm512_unpackhi_epi8(lo, hi))
}

/// Converts `len` one-byte codes to BF16 or F16 by table, pair `K` of [`pair16`]. Every
/// value of these formats is exact in both, so the result is the value itself (the one
/// rounding of the two-pass route changes nothing) and no overflow policy has anything to
/// do (their largest values are finite in both); NaN codes give what
/// `NanPolicy::Preserve` keeps of the widened NaN, and the other NaN policies run the
/// two-pass route with its NaN patch (`Kernels::set_direct`). `order(1)` puts the words in
/// element order.
///
/// # Safety
/// [`crate::arch::RawKernel`] contract, and the CPU has this backend's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn to16<const K: u8>(src: *const u8, dst: *mut u8, len: usize) {
    let p = pair16(K);
    let t = load_tables(&p.t);
    // SAFETY: a 64-byte load of a static 64-byte array.
    let ord = unsafe { _mm512_loadu_si512(ORDER_16.0.as_ptr().cast()) };
    let end = src.wrapping_add(len);
    let mut i = 0;
    while len - i >= BLOCK {
        avx512::prefetch_ahead(src.wrapping_add(i), end, BLOCK);
        // SAFETY: elements i..i+64 are in bounds of both slices (len - i >= 64): a 64-byte
        // load, and 128 bytes of stores at element i.
        unsafe {
            let (w0, w1) = words16(t, p, ord, _mm512_loadu_si512(src.add(i).cast()));
            avx512::store512(dst.add(2 * i), w0);
            avx512::store512(dst.add(2 * i + 64), w1);
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
        let (w0, w1) = words16(t, p, ord, _mm512_maskz_loadu_epi8(k, src.add(i).cast()));
        let d = dst.cast::<i16>().add(i);
        _mm512_mask_storeu_epi16(d, k as __mmask32, w0);
        if n > 32 {
            _mm512_mask_storeu_epi16(d.add(32), (k >> 32) as __mmask32, w1);
        }
    }
}

/// Widens `len` one-byte codes to f32 by the BF16 table of pair `K` of [`pair16`] (`K` even):
/// every value of these formats is exact in BF16, so its f32 bits are its BF16 word
/// followed by 16 zero bits (the fnuz NaN word is the top half of the `0xFFC00000` the
/// codec gives it). The words come in [`order`]`(2)`, and the placing of "Placing the bytes"
/// puts them into the top halves of the f32 lanes.
///
/// # Safety
/// [`crate::arch::RawKernel`] contract, and the CPU has this backend's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn to32<const K: u8>(src: *const u8, dst: *mut u8, len: usize) {
    const { assert!(K & 1 == 0, "a BF16 table") };
    let p = pair16(K);
    let t = load_tables(&p.t);
    // SAFETY: a 64-byte load of a static 64-byte array.
    let ord = unsafe { _mm512_loadu_si512(ORDER_F32.0.as_ptr().cast()) };
    let top = _mm512_set1_epi32(0xFFFF_0000_u32 as i32);
    let f32s = |c: __m512i| {
        let (w0, w1) = words16(t, p, ord, c);
        [
            _mm512_slli_epi32::<16>(w0),
            _mm512_and_si512(w0, top),
            _mm512_slli_epi32::<16>(w1),
            _mm512_and_si512(w1, top),
        ]
    };
    let end = src.wrapping_add(len);
    let mut i = 0;
    while len - i >= BLOCK {
        avx512::prefetch_ahead(src.wrapping_add(i), end, BLOCK);
        // SAFETY: elements i..i+64 are in bounds of both slices (len - i >= 64): a 64-byte
        // load, and 256 bytes of stores at element i.
        unsafe {
            let d = dst.add(4 * i);
            for (k, v) in f32s(_mm512_loadu_si512(src.add(i).cast()))
                .into_iter()
                .enumerate()
            {
                avx512::store512(d.add(64 * k), v);
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
        let d = dst.cast::<i32>().add(i);
        for (q, v) in f32s(_mm512_maskz_loadu_epi8(k, src.add(i).cast()))
            .into_iter()
            .enumerate()
        {
            if 16 * q >= n {
                break;
            }
            _mm512_mask_storeu_epi32(d.add(16 * q), (k >> (16 * q)) as __mmask16, v);
        }
    }
}

/// Table entry: the codes of pair `K` of [`pair16`] to f32 ([`to32`]).
///
/// # Safety
/// As for [`entry_widen_fp8`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn entry_to32<const K: u8>(src: *const u8, dst: *mut u8, len: usize, _o: Policy) {
    // SAFETY: forwarded contract; the features are present (see `entry_widen_fp8`).
    unsafe { to32::<K>(src, dst, len) }
}

/// Table entry: pair `K` of [`pair16`], one pass ([`to16`]).
///
/// # Safety
/// As for [`entry_widen_fp8`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn entry_to16<const K: u8>(src: *const u8, dst: *mut u8, len: usize, _o: Policy) {
    // SAFETY: forwarded contract; the features are present (see `entry_widen_fp8`).
    unsafe { to16::<K>(src, dst, len) }
}

/// Table entry: a pair whose source has an infinity (F8E5M2 → BF16, F8E3M4 and F8E4M3IEEE →
/// BF16 and F16), one pass ([`to16`]), under the overflow policy: pair `K` of [`pair16`]
/// keeps the infinity, pair `SAT` makes it the destination's MAX.
///
/// # Safety
/// As for [`entry_widen_fp8`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn entry_to16_inf<const K: u8, const SAT: u8>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    o: Policy,
) {
    // SAFETY: forwarded contract; the features are present (see `entry_widen_fp8`).
    unsafe {
        match o.overflow {
            crate::Overflow::Saturate => to16::<SAT>(src, dst, len),
            crate::Overflow::NonSaturating => to16::<K>(src, dst, len),
        }
    }
}

/// Table entry: fp8 format `FMT` to f32 (`WIDE64 == false`) or f64.
///
/// # Safety
/// [`crate::arch::RawKernel`]: in particular the CPU has AVX-512 F/BW/VL/DQ, AVX512_VBMI,
/// AVX2, FMA and F16C, which the dispatcher checks (`avx512_vbmi_available`) before handing
/// out this table.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn entry_widen_fp8<const FMT: u8, const WIDE64: bool>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    _o: Policy,
) {
    // SAFETY: forwarded contract; the features are present (see above).
    unsafe { widen_fp8::<FMT, WIDE64>(src, dst, len) }
}

/// Sets this file's kernels in an AVX-512 VBMI table (`tables.rs` composes the tables).
pub(super) const fn set(t: &mut Kernels) {
    // F8E5M2 → f32 stays on the `Avx512` kernel (`code << 8` and `VCVTPH2PS`), which
    // measured as fast as this one (see the module docs).
    t.set::<crate::F8E4M3, f32>(entry_widen_fp8::<E4M3, false>);
    t.set::<crate::F8E4M3, f64>(entry_widen_fp8::<E4M3, true>);
    t.set::<crate::F8E5M2, f64>(entry_widen_fp8::<E5M2, true>);
    // The one-byte formats exact in BF16 and F16 → BF16 and → F16 in one pass, by table
    // (`to16`; `pair16` numbers the pairs).
    use crate::{BF16, F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ, F8E5M2FNUZ, F16};
    t.set_direct::<F8E4M3, BF16>(entry_to16::<0>);
    t.set_direct::<F8E4M3, F16>(entry_to16::<1>);
    t.set_direct::<F8E4M3FNUZ, BF16>(entry_to16::<2>);
    t.set_direct::<F8E4M3FNUZ, F16>(entry_to16::<3>);
    t.set_direct::<F8E5M2FNUZ, BF16>(entry_to16::<4>);
    t.set_direct::<F8E5M2FNUZ, F16>(entry_to16::<5>);
    t.set_direct::<F6E2M3, BF16>(entry_to16::<6>);
    t.set_direct::<F6E2M3, F16>(entry_to16::<7>);
    t.set_direct::<F6E3M2, BF16>(entry_to16::<8>);
    t.set_direct::<F6E3M2, F16>(entry_to16::<9>);
    t.set_direct::<F4E2M1, BF16>(entry_to16::<10>);
    t.set_direct::<F4E2M1, F16>(entry_to16::<11>);
    t.set_direct::<crate::F8E5M2, BF16>(entry_to16_inf::<13, 14>);
    // The newest formats exact in BF16 and F16 (F8E5M3FNU, unsigned with 256 codes, has no
    // table here).
    use crate::{F8E3M4, F8E4M3B11FNUZ, F8E4M3IEEE};
    t.set_direct::<F8E4M3B11FNUZ, BF16>(entry_to16::<12>);
    t.set_direct::<F8E4M3B11FNUZ, F16>(entry_to16::<15>);
    t.set_direct::<F8E3M4, BF16>(entry_to16_inf::<16, 18>);
    t.set_direct::<F8E3M4, F16>(entry_to16_inf::<17, 19>);
    t.set_direct::<F8E4M3IEEE, BF16>(entry_to16_inf::<20, 22>);
    t.set_direct::<F8E4M3IEEE, F16>(entry_to16_inf::<21, 23>);
    // The same BF16 tables widen to f32 (`to32`). F4E2M1 → f32 keeps the AVX2 `VPSHUFB`
    // table kernel, which this one only matched (docs/performance.md).
    t.set::<F8E4M3FNUZ, f32>(entry_to32::<2>);
    t.set::<F8E5M2FNUZ, f32>(entry_to32::<4>);
    t.set::<F6E2M3, f32>(entry_to32::<6>);
    t.set::<F6E3M2, f32>(entry_to32::<8>);
    t.set::<crate::F8E4M3B11FNUZ, f32>(entry_to32::<12>);
    // The non-saturating BF16 tables of F8E3M4 and F8E4M3IEEE hold the top halves of the f32
    // widening: the exact values, ±Inf, and the quiet NaN of the code's sign.
    t.set::<F8E3M4, f32>(entry_to32::<16>);
    t.set::<F8E4M3IEEE, f32>(entry_to32::<20>);
}
