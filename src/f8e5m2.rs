//! OCP 8-bit E5M2 ([`F8E5M2`]): 1 sign, 5 exponent and 2 fraction bits, bias 15, with
//! infinities and NaNs like IEEE binary16; an E5M2 code is the top byte of the binary16
//! with the same value.
//!
//! NaN rule: every NaN narrows to `0x7E | sign`; a NaN widens exactly as the binary16 with
//! the same top byte does (quiet bit set, payload kept).

use crate::Overflow;
use crate::codec::Format;

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
    F8E5M2(u8), example = "1.5"
}

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
    const OVERFLOW_NONSAT: u32 = 0x7C;
    const HAS_INF: bool = true;
    const DEFAULT_OVERFLOW: Overflow = Overflow::Saturate;

    #[inline(always)]
    fn mag_is_nan(mag: u32) -> bool {
        mag > 0x7C
    }
    #[inline(always)]
    fn nan_from_f32(_a: u32) -> u32 {
        0x7E
    }
    #[inline(always)]
    fn nan_from_f64(_a: u64) -> u32 {
        0x7E
    }
    #[inline(always)]
    fn nan_to_f32(mag: u32) -> u32 {
        // As binary16 `mag << 8` widens: payload kept, quiet bit set.
        0x7FC0_0000 | ((mag & 0x03) << 21)
    }
}
