//! 8-bit E4M3 with bias 11, "fnuz" ([`F8E4M3B11FNUZ`], `float8_e4m3b11fnuz` in ml_dtypes,
//! used by TPUs): 1 sign, 4 exponent and 3 fraction bits, **bias 11**, no infinities, no
//! negative zero. The code `0x80` (what would be −0) is the only NaN; every other code is
//! finite, up to `0x7F` = 30; the smallest subnormal is 2^-13.
//!
//! Rules, as for [`F8E4M3FNUZ`](crate::F8E4M3FNUZ): results that round to zero are `+0`;
//! overflow under [`Overflow::NonSaturating`], ±Inf under it and every NaN give `0x80`;
//! `Saturate` gives ±30. `0x80` widens to the negative quiet NaN `0xFFC00000` (ml_dtypes
//! gives the same).

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// An fp8 E4M3 value with bias 11, "fnuz" (`float8_e4m3b11fnuz`): range ±30,
    /// 4 significant bits, no infinity, no negative zero, one NaN (`0x80`).
    ///
    /// Narrowing uses [`Overflow::Saturate`] unless told otherwise.
    ///
    /// ```
    /// use vcvt::{F8E4M3B11FNUZ, Overflow};
    /// assert_eq!(F8E4M3B11FNUZ::from_f32(1.0).to_bits(), 0x58);
    /// assert_eq!(F8E4M3B11FNUZ::from_f32(100.0), F8E4M3B11FNUZ::MAX);
    /// assert_eq!(F8E4M3B11FNUZ::MAX.to_f32(), 30.0);
    /// assert_eq!(F8E4M3B11FNUZ::from_f32_with(100.0, Overflow::NonSaturating).to_bits(), 0x80);
    /// assert_eq!(F8E4M3B11FNUZ::from_f32(-0.0).to_bits(), 0x00); // no negative zero
    /// ```
    F8E4M3B11FNUZ(u8), example = "1.5"
}
signed_consts!(F8E4M3B11FNUZ(u8));

impl F8E4M3B11FNUZ {
    /// The NaN (`0x80`), the format's only one.
    pub const NAN: F8E4M3B11FNUZ = F8E4M3B11FNUZ(0x80);
}

impl Format for F8E4M3B11FNUZ {
    const EXP_BITS: u32 = 4;
    const MAN_BITS: u32 = 3;
    const BIAS: i32 = 11;
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
