//! 8-bit E4M3 "fnuz" ([`F8E4M3FNUZ`], `float8_e4m3fnuz` in ml_dtypes and PyTorch,
//! `F8_E4M3FNUZ` in safetensors; AMD MI300 and Graphcore): 1 sign, 4 exponent and 3
//! fraction bits, **bias 8**, no infinities, no negative zero. The code `0x80` (what would
//! be −0) is the only NaN; every other code is finite, up to `0x7F` = 240.
//!
//! Rules: results that round to zero are `+0` (the format has no −0); overflow under
//! [`Overflow::NonSaturating`], ±Inf under it and every NaN give `0x80`; `Saturate` gives
//! ±240. `0x80` widens to the negative quiet NaN `0xFFC00000` (its sign bit is set; ml_dtypes
//! gives the same).

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// An fp8 E4M3 "fnuz" value (`float8_e4m3fnuz`): range ±240, 4 significant bits, no
    /// infinity, no negative zero, one NaN (`0x80`).
    ///
    /// Narrowing uses [`Overflow::Saturate`] unless told otherwise.
    ///
    /// ```
    /// use vcvt::{F8E4M3FNUZ, Overflow};
    /// assert_eq!(F8E4M3FNUZ::from_f32(240.0).to_bits(), 0x7F);
    /// assert_eq!(F8E4M3FNUZ::from_f32(1000.0), F8E4M3FNUZ::MAX);
    /// assert_eq!(F8E4M3FNUZ::from_f32_with(1000.0, Overflow::NonSaturating).to_bits(), 0x80);
    /// assert_eq!(F8E4M3FNUZ::from_f32(-0.0).to_bits(), 0x00); // no negative zero
    /// assert!(F8E4M3FNUZ::from_bits(0x80).is_nan());
    /// ```
    F8E4M3FNUZ(u8), example = "1.5"
}
signed_consts!(F8E4M3FNUZ(u8));

impl F8E4M3FNUZ {
    /// The NaN (`0x80`), the format's only one.
    pub const NAN: F8E4M3FNUZ = F8E4M3FNUZ(0x80);
}

impl Format for F8E4M3FNUZ {
    const EXP_BITS: u32 = 4;
    const MAN_BITS: u32 = 3;
    const BIAS: i32 = 8;
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
