//! 8-bit E3M4 ([`F8E3M4`], `float8_e3m4` in ml_dtypes): 1 sign, 3 exponent and 4 fraction
//! bits, bias 3, with infinities and NaNs as IEEE 754 lays them out (the all-ones exponent
//! holds ±Inf with a zero fraction and NaN otherwise). Largest finite value 15.5, smallest
//! normal 0.25, smallest subnormal 2^-6.
//!
//! NaN rule: every NaN narrows to the canonical quiet NaN `0x78 | sign` (payloads are not
//! kept, as ml_dtypes does); every NaN code widens to the quiet f32 NaN of its sign,
//! `0x7FC00000 | sign` (ml_dtypes gives the same).

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// An fp8 E3M4 value (`float8_e3m4`): range ±15.5, 5 significant bits, with ±Inf and
    /// NaN.
    ///
    /// Narrowing uses [`Overflow::Saturate`] unless told otherwise (values that round above
    /// 15.5, and ±Inf, become ±15.5); with [`Overflow::NonSaturating`] they become ±Inf, as
    /// ml_dtypes' `astype` gives.
    ///
    /// ```
    /// use vcvt::{F8E3M4, Overflow};
    /// assert_eq!(F8E3M4::from_f32(1.0).to_bits(), 0x30);
    /// assert_eq!(F8E3M4::from_f32(100.0), F8E3M4::MAX);
    /// assert_eq!(F8E3M4::from_f32_with(100.0, Overflow::NonSaturating), F8E3M4::INFINITY);
    /// assert_eq!(F8E3M4::MAX.to_f32(), 15.5);
    /// assert_eq!(F8E3M4::from_f32(f32::NAN).to_bits(), 0x78);
    /// ```
    F8E3M4(u8), example = "1.5"
}
signed_consts!(F8E3M4(u8), neg_zero);

impl F8E3M4 {
    /// Positive infinity (`0x70`).
    pub const INFINITY: F8E3M4 = F8E3M4(0x70);
    /// Negative infinity (`0xF0`).
    pub const NEG_INFINITY: F8E3M4 = F8E3M4(0xF0);
    /// The canonical NaN (`0x78`), the code every positive NaN narrows to.
    pub const NAN: F8E3M4 = F8E3M4(0x78);
}

impl Format for F8E3M4 {
    const EXP_BITS: u32 = 3;
    const MAN_BITS: u32 = 4;
    const MAX: u32 = 0x6F;
    const HAS_INF: bool = true;
    // Every NaN narrows to this one code (with the sign); widening treats every code above
    // Inf's as NaN, as IEEE does.
    const NAN: NanKind = NanKind::Fixed {
        code: 0x78,
        signed: true,
    };
    const DEFAULT_OVERFLOW: Overflow = Overflow::Saturate;

    #[inline(always)]
    fn nan_to_f32(c: u32) -> u32 {
        // The quiet NaN of the code's sign, payload dropped (ml_dtypes widens the same way).
        ((c & 0x80) << 24) | 0x7FC0_0000
    }
}
