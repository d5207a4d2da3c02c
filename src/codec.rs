//! The scalar reference codec shared by every format: the specification that every
//! SIMD kernel must reproduce bit for bit.
//!
//! Every signed format here is an IEEE-style binary format (sign, biased exponent, fraction
//! with an implicit leading one for normal numbers, subnormals at the lowest exponent). They
//! differ in their field widths and bias, in how the largest exponent is used (F16, BF16 and
//! E5M2 hold Inf and NaN there; E4M3 spends it on finite values but one NaN code per sign;
//! fnuz and fp6/fp4 spend all of it on finite values), in their NaN code (IEEE payloads, one
//! fixed code, the fnuz `0x80`, or none at all), in whether they have a negative zero (fnuz do
//! not) and in their default overflow policy. [`Format`] captures those differences as
//! constants, and the functions below are written once against it. E8M0 (no sign, no
//! fraction, ties up) overrides the three entry points in its own file.
//!
//! # Narrowing (round to nearest, ties to even, from the source value)
//!
//! A finite source magnitude `a` (its bits with the sign cleared) is handled in one of two
//! ways:
//!
//! * If its exponent is at or above the target's smallest normal exponent, subtracting the
//!   difference of the biases (shifted into the exponent field) turns `a` into the target
//!   encoding with too many fraction bits. Dropping the extra bits with round-to-nearest-even
//!   on the *integer* `(r + half - 1 + lsb) >> shift` is exact: a carry out of the fraction
//!   moves into the exponent, which is what rounding up to the next binade must do, and a
//!   carry out of the largest exponent yields a code above `MAX`, which is overflow.
//! * Otherwise the result is subnormal (or zero, or the smallest normal after rounding up):
//!   the significand with its implicit bit, shifted right by the distance between the source
//!   exponent and the target's subnormal quantum, again with the integer rounding above.
//!   Shifts are clamped below the word size; a clamped shift still rounds to zero because the
//!   significand is then smaller than half the quantum.
//!
//! Overflow is decided on the rounded code (`> MAX`), so for E4M3 464 rounds to 448 and only
//! values above 464 overflow. f64 sources take the same path on 64-bit words, which rounds
//! exactly once: there is no intermediate f32. The overflow policy, the NaN policy and the
//! missing negative zero of fnuz are applied after the rounding, separately from it.
//!
//! # Widening
//!
//! Widening is exact. Bits above the format's width (fp6, fp4 in a byte) are ignored. Normal
//! codes re-bias their exponent; subnormal codes are normalised with a leading-zero count; NaN
//! codes follow each format's rule ([`Format::nan_to_f32`]). Widening
//! to f64 is defined as widening to f32 followed by the exact IEEE f32→f64 conversion (payload
//! kept, quiet bit set on a NaN), which is what `VCVTPS2PD` and `FCVTL` do.

use crate::Overflow;
use crate::options::{NanPolicy, Policy};

/// How a format encodes NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NanKind {
    /// IEEE style: the all-ones exponent with a non-zero fraction, both signs (F16, BF16).
    /// Narrowing keeps the sign and the top payload bits and sets the quiet bit.
    Ieee,
    /// One NaN code: `code` ORed with the sign where `signed`, else exactly `code`
    /// (E4M3 `0x7F | sign`, E5M2 `0x7E | sign` as its narrowing result, fnuz `0x80`, E8M0
    /// `0xFF`).
    Fixed { code: u32, signed: bool },
    /// No NaN code at all (fp6, fp4).
    None,
}

/// Field widths and special-value rules of a narrow format: its definition, from which the
/// generic codec below derives every conversion. A format whose arithmetic is not
/// IEEE-like (E8M0) overrides [`Format::narrow32`], [`Format::narrow64`] and
/// [`Format::widen32`].
pub(crate) trait Format {
    /// Exponent field width.
    const EXP_BITS: u32;
    /// Fraction field width.
    const MAN_BITS: u32;
    /// Whether the format has a sign bit (every format but E8M0).
    const SIGNED: bool = true;
    /// Exponent bias (`2^(EXP_BITS-1) - 1` unless the format says otherwise, as fnuz does).
    const BIAS: i32 = (1 << (Self::EXP_BITS - 1)) - 1;
    /// Magnitude code of the largest finite value.
    const MAX: u32;
    /// Whether the all-ones exponent with a zero fraction is infinity.
    const HAS_INF: bool;
    /// How NaN is encoded.
    const NAN: NanKind;
    /// Whether the format has a negative zero (fnuz formats do not: their `0x80` is NaN, and
    /// results that round to zero are `+0`).
    const NEG_ZERO: bool = true;
    /// Overflow policy used when the caller does not choose one.
    const DEFAULT_OVERFLOW: Overflow;

    /// Total width in bits.
    const BITS: u32 = Self::SIGNED as u32 + Self::EXP_BITS + Self::MAN_BITS;
    /// The sign bit of a code (0 for unsigned formats).
    const SIGN_BIT: u32 = if Self::SIGNED {
        1 << (Self::BITS - 1)
    } else {
        0
    };
    /// Mask of the bits a code may use; stored bits above it (fp6, fp4) are ignored.
    const CODE_MASK: u32 = (1 << Self::BITS) - 1;
    /// Mask of the magnitude (everything but the sign).
    const MAG_MASK: u32 = Self::CODE_MASK & !Self::SIGN_BIT;
    /// Magnitude code of infinity (meaningful only when `HAS_INF`).
    const INF: u32 = ((1 << Self::EXP_BITS) - 1) << Self::MAN_BITS;
    /// The code (without the sign) that overflow gives under [`Overflow::NonSaturating`]:
    /// Inf where the format has it, else its NaN, else `MAX` (fp6, fp4 always saturate).
    const OVERFLOW_NONSAT: u32 = if Self::HAS_INF {
        Self::INF
    } else {
        match Self::NAN {
            NanKind::Fixed { code, .. } => code,
            _ => Self::MAX,
        }
    };

    /// The code for a NaN source under [`NanPolicy::Preserve`], without the sign, from the
    /// f32 NaN's magnitude bits `a`.
    #[inline(always)]
    fn nan_from_f32(a: u32) -> u32 {
        match Self::NAN {
            NanKind::Ieee => {
                Self::INF
                    | (1 << (Self::MAN_BITS - 1))
                    | ((a >> (23 - Self::MAN_BITS)) & frac_mask::<Self>())
            }
            NanKind::Fixed { code, .. } => code,
            NanKind::None => Self::MAX,
        }
    }

    /// Like [`Format::nan_from_f32`] for an f64 NaN's magnitude bits.
    #[inline(always)]
    fn nan_from_f64(a: u64) -> u32 {
        match Self::NAN {
            NanKind::Ieee => {
                Self::INF
                    | (1 << (Self::MAN_BITS - 1))
                    | ((a >> (52 - Self::MAN_BITS)) as u32 & frac_mask::<Self>())
            }
            NanKind::Fixed { code, .. } => code,
            NanKind::None => Self::MAX,
        }
    }

    /// Whether a code (high bits already masked off) is NaN.
    #[inline(always)]
    fn is_nan_code(c: u32) -> bool {
        if Self::HAS_INF {
            // IEEE style, whatever code narrowing writes (E5M2 writes only 0x7E).
            return c & Self::MAG_MASK > Self::INF;
        }
        match Self::NAN {
            NanKind::Fixed { code, signed: true } => c & Self::MAG_MASK == code,
            NanKind::Fixed {
                code,
                signed: false,
            } => c == code,
            NanKind::Ieee | NanKind::None => false,
        }
    }

    /// The f32 bits that NaN code `c` (sign included) widens to.
    fn nan_to_f32(c: u32) -> u32;

    /// Narrows f32 bits to a code (the generic IEEE-like codec unless overridden).
    #[inline(always)]
    fn narrow32(x: u32, p: Policy) -> u32 {
        ieee_narrow_f32::<Self>(x, p)
    }

    /// Narrows f64 bits to a code with a single rounding.
    #[inline(always)]
    fn narrow64(x: u64, p: Policy) -> u32 {
        ieee_narrow_f64::<Self>(x, p)
    }

    /// Widens a code (high bits already masked off) to f32 bits, exactly.
    #[inline(always)]
    fn widen32(c: u32) -> u32 {
        ieee_widen_f32::<Self>(c)
    }
}

/// Mask of a format's fraction field.
#[inline(always)]
pub(crate) const fn frac_mask<F: Format + ?Sized>() -> u32 {
    (1 << F::MAN_BITS) - 1
}

/// Conversion between an element type and its code held in a `u32`.
pub(crate) trait Code: Copy {
    /// The element with this code (the high bits of `c` beyond the format's width are zero).
    fn from_code(c: u32) -> Self;
    /// The element's stored bits (for fp6/fp4, possibly with high bits set: mask them).
    fn code(self) -> u32;
}

/// The code that an overflowing value (or an infinity) with sign bit `sign` becomes.
#[inline(always)]
pub(crate) fn overflow_code<F: Format + ?Sized>(sign: u32, overflow: Overflow) -> u32 {
    match overflow {
        Overflow::Saturate => sign | F::MAX,
        Overflow::NonSaturating => match F::NAN {
            NanKind::Fixed {
                code,
                signed: false,
            } if !F::HAS_INF => code,
            _ => sign | F::OVERFLOW_NONSAT,
        },
    }
}

/// The code that a NaN source with sign bit `sign` becomes; `preserve` is the magnitude
/// code of [`NanPolicy::Preserve`] (from [`Format::nan_from_f32`] or `nan_from_f64`).
#[inline(always)]
pub(crate) fn nan_code<F: Format + ?Sized>(sign: u32, preserve: u32, nan: NanPolicy) -> u32 {
    match (nan, F::NAN) {
        (NanPolicy::ToMax, _) | (_, NanKind::None) => sign | F::MAX,
        (NanPolicy::Preserve, NanKind::Ieee) => sign | preserve,
        (NanPolicy::Canonical, NanKind::Ieee) => sign | F::INF | (1 << (F::MAN_BITS - 1)),
        (_, NanKind::Fixed { code, signed }) => {
            if signed {
                sign | code
            } else {
                code
            }
        }
    }
}

/// The finished code of a rounded finite magnitude `mag` with sign bit `sign`.
#[inline(always)]
fn finish<F: Format + ?Sized>(sign: u32, mag: u32, overflow: Overflow) -> u32 {
    if mag > F::MAX {
        overflow_code::<F>(sign, overflow)
    } else if !F::NEG_ZERO && mag == 0 {
        0
    } else {
        sign | mag
    }
}

/// Integer round-to-nearest-even of `r / 2^s` for `1 <= s <= 31`.
#[inline(always)]
fn rne_shift_u32(r: u32, s: u32) -> u32 {
    // half - 1 + lsb: below half rounds down, above rounds up, exactly half rounds up only
    // when the kept part is odd.
    (r + ((1 << (s - 1)) - 1) + ((r >> s) & 1)) >> s
}

/// Integer round-to-nearest-even of `r / 2^s` for `1 <= s <= 63`.
#[inline(always)]
fn rne_shift_u64(r: u64, s: u32) -> u64 {
    (r + ((1 << (s - 1)) - 1) + ((r >> s) & 1)) >> s
}

/// Narrows f32 bits to format `F`'s code under policy `p`.
#[inline(always)]
pub(crate) fn narrow_f32<F: Format>(x: u32, p: Policy) -> u32 {
    F::narrow32(x, p)
}

/// Narrows f64 bits to format `F`'s code with a single rounding, under policy `p`.
#[inline(always)]
pub(crate) fn narrow_f64<F: Format>(x: u64, p: Policy) -> u32 {
    F::narrow64(x, p)
}

/// Widens a stored code of format `F` to f32 bits, exactly (bits above the format's width
/// are ignored).
#[inline(always)]
pub(crate) fn widen_f32<F: Format>(c: u32) -> u32 {
    F::widen32(c & F::CODE_MASK)
}

/// The code of a negative, non-NaN source in an unsigned format (`SIGNED == false`, with a
/// fraction: F8E5M3FNU): `-0` is `+0`, every other negative value (down to the smallest
/// subnormal, and −Inf) has no code and gives the format's NaN, whatever the policy
/// (ml_dtypes does the same; the NaN policy is about NaN sources). An unsigned format
/// without a NaN code would need a rule of its own: the assertion keeps one from slipping in.
#[inline(always)]
fn unsigned_negative<F: Format + ?Sized>(zero: bool) -> u32 {
    match F::NAN {
        NanKind::Fixed { code, .. } => {
            if zero {
                0
            } else {
                code
            }
        }
        NanKind::Ieee | NanKind::None => panic!("an unsigned format needs a fixed NaN code"),
    }
}

/// The generic narrowing of f32 bits for an IEEE-like signed or unsigned format.
#[inline(always)]
fn ieee_narrow_f32<F: Format + ?Sized>(x: u32, p: Policy) -> u32 {
    let a = x & 0x7FFF_FFFF;
    if !F::SIGNED && x >> 31 != 0 && a <= 0x7F80_0000 {
        return unsigned_negative::<F>(a == 0);
    }
    let sign = if F::SIGNED {
        (x >> 31) << (F::BITS - 1)
    } else {
        0
    };
    if a >= 0x7F80_0000 {
        return if a > 0x7F80_0000 {
            nan_code::<F>(sign, F::nan_from_f32(a), p.nan)
        } else {
            overflow_code::<F>(sign, p.overflow)
        };
    }
    let e = (a >> 23) as i32;
    let mag = if e - 127 + F::BIAS >= 1 {
        // Normal in the target: re-bias and drop 23 - MAN_BITS fraction bits.
        let r = a - (((127 - F::BIAS) as u32) << 23);
        rne_shift_u32(r, 23 - F::MAN_BITS)
    } else {
        // Subnormal in the target: value = m * 2^(e_eff - 150), quantum 2^(1 - BIAS - MAN_BITS).
        let m = (a & 0x007F_FFFF) | if e != 0 { 0x0080_0000 } else { 0 };
        let e_eff = if e != 0 { e } else { 1 };
        let s = (151 - F::BIAS - F::MAN_BITS as i32 - e_eff).min(31) as u32;
        rne_shift_u32(m, s)
    };
    finish::<F>(sign, mag, p.overflow)
}

/// The generic narrowing of f64 bits (one rounding) for an IEEE-like format.
#[inline(always)]
fn ieee_narrow_f64<F: Format + ?Sized>(x: u64, p: Policy) -> u32 {
    let a = x & 0x7FFF_FFFF_FFFF_FFFF;
    if !F::SIGNED && x >> 63 != 0 && a <= 0x7FF0_0000_0000_0000 {
        return unsigned_negative::<F>(a == 0);
    }
    let sign = if F::SIGNED {
        ((x >> 63) as u32) << (F::BITS - 1)
    } else {
        0
    };
    if a >= 0x7FF0_0000_0000_0000 {
        return if a > 0x7FF0_0000_0000_0000 {
            nan_code::<F>(sign, F::nan_from_f64(a), p.nan)
        } else {
            overflow_code::<F>(sign, p.overflow)
        };
    }
    let e = (a >> 52) as i32;
    let mag = if e - 1023 + F::BIAS >= 1 {
        let r = a - (((1023 - F::BIAS) as u64) << 52);
        rne_shift_u64(r, 52 - F::MAN_BITS)
    } else {
        let m = (a & 0x000F_FFFF_FFFF_FFFF) | if e != 0 { 1 << 52 } else { 0 };
        let e_eff = if e != 0 { e } else { 1 };
        let s = (1076 - F::BIAS - F::MAN_BITS as i32 - e_eff).min(63) as u32;
        rne_shift_u64(m, s)
    };
    // Anything that does not fit in 32 bits is far above MAX.
    let mag = u32::try_from(mag).unwrap_or(u32::MAX);
    finish::<F>(sign, mag, p.overflow)
}

/// The generic widening of a code (high bits masked off) for an IEEE-like format.
#[inline(always)]
fn ieee_widen_f32<F: Format + ?Sized>(c: u32) -> u32 {
    if F::is_nan_code(c) {
        return F::nan_to_f32(c);
    }
    let sign = ((c & F::SIGN_BIT) != 0) as u32;
    let sign = sign << 31;
    let mag = c & F::MAG_MASK;
    let exp = mag >> F::MAN_BITS;
    let man = mag & frac_mask::<F>();
    let bits = if F::HAS_INF && mag == F::INF {
        0x7F80_0000
    } else if exp == 0 {
        if man == 0 {
            0
        } else if F::BIAS == 127 {
            // BF16 shares f32's exponent range: its subnormals are f32 subnormals.
            man << (23 - F::MAN_BITS)
        } else {
            // man * 2^(1 - BIAS - MAN_BITS), a normal f32 for the narrower exponent ranges;
            // its leading one is at bit p.
            let p = 31 - man.leading_zeros();
            let e32 = (1 - F::BIAS - F::MAN_BITS as i32 + p as i32 + 127) as u32;
            (e32 << 23) | ((man << (23 - p)) & 0x007F_FFFF)
        }
    } else {
        ((exp + 127 - F::BIAS as u32) << 23) | (man << (23 - F::MAN_BITS))
    };
    sign | bits
}

/// The exact IEEE conversion of f32 bits to f64 bits (a NaN keeps its sign and payload and
/// becomes quiet).
///
/// Integer-only on purpose: a float `as f64` would flush f32 subnormals (BF16 subnormals
/// widen to them) under MXCSR.DAZ or FPCR.FZ, and the contract must not depend on either.
#[inline(always)]
pub(crate) const fn f32_bits_to_f64_bits(x: u32) -> u64 {
    let sign = ((x >> 31) as u64) << 63;
    let a = x & 0x7FFF_FFFF;
    sign | if a > 0x7F80_0000 {
        // NaN: payload moved to the top of the f64 fraction, quiet bit set.
        0x7FF8_0000_0000_0000 | ((a as u64 & 0x003F_FFFF) << 29)
    } else if a == 0x7F80_0000 {
        0x7FF0_0000_0000_0000
    } else if a >= 0x0080_0000 {
        // Normal: the fields move up 29 bits and the exponent is re-biased by 1023 - 127.
        ((a as u64) << 29) + ((1023 - 127) << 52)
    } else if a == 0 {
        0
    } else {
        // Subnormal a * 2^-149 with its leading one at bit p: f64 exponent p - 149.
        let p = 31 - a.leading_zeros();
        ((p as u64 + 1023 - 149) << 52) | (((a as u64) << (52 - p)) & 0x000F_FFFF_FFFF_FFFF)
    }
}
