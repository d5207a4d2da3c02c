//! IEEE 754 binary16 ([`F16`]): 1 sign, 5 exponent and 10 fraction bits, bias 15.
//!
//! NaN rule: narrowing keeps the sign and the top 10 payload bits and sets the quiet bit
//! (what x86 `VCVTPS2PH` and Arm `FCVTN` produce); widening keeps the payload and sets the
//! quiet bit (what `VCVTPH2PS` does).

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// An IEEE 754 binary16 value ("half precision", `f16`).
    ///
    /// Range ±65504, 11 significant bits, subnormals down to 2^-24. Narrowing uses
    /// [`Overflow::NonSaturating`] unless told otherwise (overflow gives ±Inf, as IEEE says).
    ///
    /// ```
    /// use vcvt::F16;
    /// assert_eq!(F16::from_f32(65504.0), F16::MAX);
    /// assert_eq!(F16::from_f32(65520.0), F16::INFINITY); // the tie at the top rounds up
    /// assert_eq!(F16::from_f64(65520.0 - 1e-9), F16::MAX); // a single rounding from f64
    /// assert_eq!(F16::MIN_POSITIVE_SUBNORMAL.to_f32(), 2f32.powi(-24));
    /// ```
    F16(u16), example = "1.5"
}
signed_consts!(F16(u16), neg_zero);

impl F16 {
    /// Positive infinity.
    pub const INFINITY: F16 = F16(0x7C00);
    /// Negative infinity.
    pub const NEG_INFINITY: F16 = F16(0xFC00);
    /// The canonical quiet NaN (`0x7E00`).
    pub const NAN: F16 = F16(0x7E00);
}

impl Format for F16 {
    const EXP_BITS: u32 = 5;
    const MAN_BITS: u32 = 10;
    const MAX: u32 = 0x7BFF;
    const HAS_INF: bool = true;
    const NAN: NanKind = NanKind::Ieee;
    const DEFAULT_OVERFLOW: Overflow = Overflow::NonSaturating;

    #[inline(always)]
    fn nan_to_f32(c: u32) -> u32 {
        // As VCVTPH2PS: sign and payload kept, quiet bit set.
        ((c & 0x8000) << 16) | 0x7FC0_0000 | ((c & 0x03FF) << 13)
    }
}
