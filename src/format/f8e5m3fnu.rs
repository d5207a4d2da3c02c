//! 8-bit unsigned E5M3 ([`F8E5M3FNU`], `float8_e5m3fnu` in ml_dtypes, UE5M3 in LLVM): no
//! sign, 5 exponent and 3 fraction bits, bias 15, no infinities. Every code is finite but
//! `0xFF`, the only NaN; the largest is `0xFE` = 114688, the smallest normal 2^-14, the
//! smallest subnormal 2^-17. Zero is `0x00`.
//!
//! Rules:
//! * negative values have no code: every negative source but −0 (negative subnormals and
//!   values that would round to zero included, and −Inf) gives the NaN `0xFF`, as ml_dtypes
//!   does; −0 gives `+0`;
//! * NaN sources give `0xFF`, or `0xFE` (MAX) under
//!   [`NanPolicy::ToMax`](crate::NanPolicy::ToMax);
//! * values that round above 114688, and +Inf, give `0xFE` under [`Overflow::Saturate`]
//!   (the default) and `0xFF` under [`Overflow::NonSaturating`] (what ml_dtypes' `astype`
//!   gives);
//! * `0xFF` widens to the quiet NaN `0x7FC00000`.

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// An unsigned fp8 E5M3 value (`float8_e5m3fnu`): from 0 to 114688, 4 significant bits,
    /// no sign, no infinity, one NaN (`0xFF`).
    ///
    /// Narrowing uses [`Overflow::Saturate`] unless told otherwise; negative values (but
    /// −0, which gives `+0`) give NaN.
    ///
    /// ```
    /// use vcvt::{F8E5M3FNU, Overflow};
    /// assert_eq!(F8E5M3FNU::from_f32(1.0).to_bits(), 0x78);
    /// assert_eq!(F8E5M3FNU::from_f32(1.0e9), F8E5M3FNU::MAX);
    /// assert_eq!(F8E5M3FNU::MAX.to_f32(), 114688.0);
    /// assert!(F8E5M3FNU::from_f32_with(1.0e9, Overflow::NonSaturating).is_nan());
    /// assert!(F8E5M3FNU::from_f32(-1.0).is_nan()); // no sign
    /// assert_eq!(F8E5M3FNU::from_f32(-0.0).to_bits(), 0x00);
    /// ```
    F8E5M3FNU(u8), example = "1.5"
}

impl F8E5M3FNU {
    /// Zero (`0x00`).
    pub const ZERO: F8E5M3FNU = F8E5M3FNU(0x00);
    /// One (`0x78`).
    pub const ONE: F8E5M3FNU = F8E5M3FNU(0x78);
    /// The smallest positive normal value, 2^-14 (`0x08`).
    pub const MIN_POSITIVE: F8E5M3FNU = F8E5M3FNU(0x08);
    /// The smallest positive subnormal value, 2^-17 (`0x01`).
    pub const MIN_POSITIVE_SUBNORMAL: F8E5M3FNU = F8E5M3FNU(0x01);
    /// Machine epsilon, 2^-3: the difference between 1.0 and the next larger value.
    pub const EPSILON: F8E5M3FNU = F8E5M3FNU(0x60);
    /// The NaN (`0xFF`), the format's only one.
    pub const NAN: F8E5M3FNU = F8E5M3FNU(0xFF);
}

impl Format for F8E5M3FNU {
    const EXP_BITS: u32 = 5;
    const MAN_BITS: u32 = 3;
    const SIGNED: bool = false;
    const MAX: u32 = 0xFE;
    const HAS_INF: bool = false;
    const NAN: NanKind = NanKind::Fixed {
        code: 0xFF,
        signed: false,
    };
    const NEG_ZERO: bool = false;
    const DEFAULT_OVERFLOW: Overflow = Overflow::Saturate;

    #[inline(always)]
    fn nan_to_f32(_c: u32) -> u32 {
        0x7FC0_0000
    }
}
