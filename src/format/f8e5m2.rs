//! OCP 8-bit E5M2 ([`F8E5M2`]): 1 sign, 5 exponent and 2 fraction bits, bias 15, with
//! infinities and NaNs like IEEE binary16; an E5M2 code is the top byte of the binary16
//! with the same value.
//!
//! NaN rule: every NaN narrows to `0x7E | sign`; a NaN widens exactly as the binary16 with
//! the same top byte does (quiet bit set, payload kept).

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// An OCP fp8 E5M2 value: range ±57344, 3 significant bits, with ±Inf and NaN.
    ///
    /// Narrowing uses [`Overflow::Saturate`] unless told otherwise (values that round above
    /// 57344, and ±Inf, become ±57344); with [`Overflow::NonSaturating`] they become ±Inf.
    ///
    /// ```
    /// use vcvt::{F8E5M2, Overflow};
    /// assert_eq!(F8E5M2::from_f32(1.0e9), F8E5M2::MAX);
    /// assert_eq!(F8E5M2::from_f32_with(1.0e9, Overflow::NonSaturating), F8E5M2::INFINITY);
    /// assert_eq!(F8E5M2::MAX.to_f32(), 57344.0);
    /// ```
    ///
    /// Text: `{}` prints the shortest string that parses back: 57344 prints `60000` (the
    /// values between 53248 and 61440 read as 57344); [`F8E5M2::exact`] prints `57344`. A
    /// literal `inf` is a value beyond every limit, so under the default
    /// [`Overflow::Saturate`] it parses to `MAX`: an infinity printed as `inf` reads back as
    /// ±57344 unless [`F8E5M2::from_str_with`] is given [`Overflow::NonSaturating`].
    ///
    /// ```
    /// use vcvt::{F8E5M2, Overflow};
    /// assert_eq!(F8E5M2::MAX.to_string(), "60000");
    /// assert_eq!(F8E5M2::MAX.exact().to_string(), "57344");
    /// assert_eq!(F8E5M2::INFINITY.to_string(), "inf");
    /// assert_eq!("inf".parse::<F8E5M2>().unwrap(), F8E5M2::MAX);
    /// assert_eq!(F8E5M2::from_str_with("inf", Overflow::NonSaturating).unwrap(), F8E5M2::INFINITY);
    /// ```
    F8E5M2(u8), example = "1.5"
}
signed_consts!(F8E5M2(u8), neg_zero);

impl F8E5M2 {
    /// Positive infinity.
    pub const INFINITY: F8E5M2 = F8E5M2(0x7C);
    /// Negative infinity.
    pub const NEG_INFINITY: F8E5M2 = F8E5M2(0xFC);
    /// The canonical NaN (`0x7E`), the code every NaN narrows to.
    pub const NAN: F8E5M2 = F8E5M2(0x7E);
}

impl Format for F8E5M2 {
    const EXP_BITS: u32 = 5;
    const MAN_BITS: u32 = 2;
    const MAX: u32 = 0x7B;
    const HAS_INF: bool = true;
    // Every NaN narrows to this one code (with the sign); widening treats all three NaN
    // codes per sign as IEEE does.
    const NAN: NanKind = NanKind::Fixed {
        code: 0x7E,
        signed: true,
    };
    const DEFAULT_OVERFLOW: Overflow = Overflow::Saturate;

    #[inline(always)]
    fn nan_to_f32(c: u32) -> u32 {
        // As binary16 `c << 8` widens: sign and payload kept, quiet bit set.
        ((c & 0x80) << 24) | 0x7FC0_0000 | ((c & 0x03) << 21)
    }
}
