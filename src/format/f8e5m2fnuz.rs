//! 8-bit E5M2 "fnuz" ([`F8E5M2FNUZ`], `float8_e5m2fnuz` in ml_dtypes and PyTorch,
//! `F8_E5M2FNUZ` in safetensors; AMD MI300 and Graphcore): 1 sign, 5 exponent and 2
//! fraction bits, **bias 16**, no infinities, no negative zero. The code `0x80` (what would
//! be −0) is the only NaN; every other code is finite, up to `0x7F` = 57344.
//!
//! Rules: results that round to zero are `+0` (the format has no −0); overflow under
//! [`Overflow::NonSaturating`], ±Inf under it and every NaN give `0x80`; `Saturate` gives
//! ±57344. `0x80` widens to the negative quiet NaN `0xFFC00000` (its sign bit is set; ml_dtypes
//! gives the same).

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// An fp8 E5M2 "fnuz" value (`float8_e5m2fnuz`): range ±57344, 3 significant bits, no
    /// infinity, no negative zero, one NaN (`0x80`).
    ///
    /// Narrowing uses [`Overflow::Saturate`] unless told otherwise.
    ///
    /// ```
    /// use vcvt::{F8E5M2FNUZ, Overflow};
    /// assert_eq!(F8E5M2FNUZ::from_f32(57344.0).to_bits(), 0x7F);
    /// assert_eq!(F8E5M2FNUZ::from_f32(1.0e6), F8E5M2FNUZ::MAX);
    /// assert_eq!(F8E5M2FNUZ::from_f32_with(1.0e6, Overflow::NonSaturating).to_bits(), 0x80);
    /// assert_eq!(F8E5M2FNUZ::from_f32(-0.0).to_bits(), 0x00); // no negative zero
    /// assert!(F8E5M2FNUZ::from_bits(0x80).is_nan());
    /// ```
    F8E5M2FNUZ(u8), example = "1.5"
}
signed_consts!(F8E5M2FNUZ(u8));

impl F8E5M2FNUZ {
    /// The NaN (`0x80`), the format's only one.
    pub const NAN: F8E5M2FNUZ = F8E5M2FNUZ(0x80);
}

impl Format for F8E5M2FNUZ {
    const EXP_BITS: u32 = 5;
    const MAN_BITS: u32 = 2;
    const BIAS: i32 = 16;
    const MAX: u32 = 0x7F;
    const HAS_INF: bool = false;
    const NAN: NanKind = NanKind::Fixed {
        code: 0x80,
        signed: false,
    };
    const NEG_ZERO: bool = false;
    const DEFAULT_OVERFLOW: Overflow = Overflow::Saturate;

    #[inline(always)]
    fn nan_to_f32(_c: u32) -> u32 {
        // The code's sign bit is set: a negative quiet NaN, as ml_dtypes widens it.
        0xFFC0_0000
    }
}
