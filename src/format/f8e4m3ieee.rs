//! 8-bit IEEE-style E4M3 ([`F8E4M3IEEE`], `float8_e4m3` in ml_dtypes): 1 sign, 4 exponent
//! and 3 fraction bits, bias 7, with infinities and NaNs as IEEE 754 lays them out (the
//! all-ones exponent holds ±Inf with a zero fraction and NaN otherwise). Largest finite
//! value 240. Not the OCP E4M3 of [`F8E4M3`](crate::F8E4M3) (`float8_e4m3fn`), which spends
//! that exponent on values up to 448 and has no infinity.
//!
//! NaN rule: every NaN narrows to the canonical quiet NaN `0x7C | sign` (payloads are not
//! kept, as ml_dtypes does); every NaN code widens to the quiet f32 NaN of its sign,
//! `0x7FC00000 | sign` (ml_dtypes gives the same).

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// An IEEE-style fp8 E4M3 value (`float8_e4m3`): range ±240, 4 significant bits, with
    /// ±Inf and NaN.
    ///
    /// Narrowing uses [`Overflow::Saturate`] unless told otherwise (values that round above
    /// 240, and ±Inf, become ±240); with [`Overflow::NonSaturating`] they become ±Inf, as
    /// ml_dtypes' `astype` gives.
    ///
    /// ```
    /// use vcvt::{F8E4M3IEEE, Overflow};
    /// assert_eq!(F8E4M3IEEE::from_f32(1.0).to_bits(), 0x38);
    /// assert_eq!(F8E4M3IEEE::from_f32(1000.0), F8E4M3IEEE::MAX);
    /// assert_eq!(F8E4M3IEEE::from_f32_with(1000.0, Overflow::NonSaturating), F8E4M3IEEE::INFINITY);
    /// assert_eq!(F8E4M3IEEE::MAX.to_f32(), 240.0);
    /// ```
    F8E4M3IEEE(u8), example = "1.5"
}
signed_consts!(F8E4M3IEEE(u8), neg_zero);

impl F8E4M3IEEE {
    /// Positive infinity (`0x78`).
    pub const INFINITY: F8E4M3IEEE = F8E4M3IEEE(0x78);
    /// Negative infinity (`0xF8`).
    pub const NEG_INFINITY: F8E4M3IEEE = F8E4M3IEEE(0xF8);
    /// The canonical NaN (`0x7C`), the code every positive NaN narrows to.
    pub const NAN: F8E4M3IEEE = F8E4M3IEEE(0x7C);
}

impl Format for F8E4M3IEEE {
    const EXP_BITS: u32 = 4;
    const MAN_BITS: u32 = 3;
    const MAX: u32 = 0x77;
    const HAS_INF: bool = true;
    // Every NaN narrows to this one code (with the sign); widening treats every code above
    // Inf's as NaN, as IEEE does.
    const NAN: NanKind = NanKind::Fixed {
        code: 0x7C,
        signed: true,
    };
    const DEFAULT_OVERFLOW: Overflow = Overflow::Saturate;

    #[inline(always)]
    fn nan_to_f32(c: u32) -> u32 {
        // The quiet NaN of the code's sign, payload dropped (ml_dtypes widens the same way).
        ((c & 0x80) << 24) | 0x7FC0_0000
    }
}
