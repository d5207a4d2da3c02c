//! OCP 8-bit E4M3 ([`F8E4M3`], called `float8_e4m3fn` in ml_dtypes and PyTorch): 1 sign,
//! 4 exponent and 3 fraction bits, bias 7, no infinities; the all-ones exponent holds
//! finite values except for `S.1111.111`, the only NaN of each sign.
//!
//! NaN rule: every NaN narrows to `0x7F | sign`; NaN widens to the quiet NaN
//! `0x7FC00000 | sign`.

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// An OCP fp8 E4M3 value (`float8_e4m3fn`): range ±448, 4 significant bits, no infinity.
    ///
    /// Narrowing uses [`Overflow::Saturate`] unless told otherwise: values above 464 (and
    /// ±Inf) become ±448. With [`Overflow::NonSaturating`] they become NaN, as in ml_dtypes.
    ///
    /// ```
    /// use vcvt::{F8E4M3, Overflow};
    /// assert_eq!(F8E4M3::from_f32(464.0), F8E4M3::MAX); // the tie rounds to 448 (even)
    /// assert_eq!(F8E4M3::from_f32(1000.0), F8E4M3::MAX);
    /// assert!(F8E4M3::from_f32_with(465.0, Overflow::NonSaturating).is_nan());
    /// assert_eq!(F8E4M3::MAX.to_f32(), 448.0);
    /// ```
    ///
    /// Text: `{}` prints the shortest string that parses back, which with 3 fraction bits
    /// is often not the exact value: 448 prints `450` (every value from 432 to 464 reads as
    /// 448), 1.25 prints `1.3`. [`F8E4M3::exact`] prints the exact value.
    ///
    /// ```
    /// use vcvt::F8E4M3;
    /// assert_eq!(F8E4M3::MAX.to_string(), "450");
    /// assert_eq!(F8E4M3::MAX.exact().to_string(), "448");
    /// assert_eq!("450".parse::<F8E4M3>().unwrap(), F8E4M3::MAX);
    /// assert_eq!("inf".parse::<F8E4M3>().unwrap(), F8E4M3::MAX); // Saturate by default
    /// ```
    F8E4M3(u8), example = "1.5"
}
signed_consts!(F8E4M3(u8), neg_zero);

impl F8E4M3 {
    /// The NaN (`0x7F`); E4M3 has one NaN code per sign.
    pub const NAN: F8E4M3 = F8E4M3(0x7F);
}

impl Format for F8E4M3 {
    const EXP_BITS: u32 = 4;
    const MAN_BITS: u32 = 3;
    const MAX: u32 = 0x7E;
    const HAS_INF: bool = false;
    const NAN: NanKind = NanKind::Fixed {
        code: 0x7F,
        signed: true,
    };
    const DEFAULT_OVERFLOW: Overflow = Overflow::Saturate;

    #[inline(always)]
    fn nan_to_f32(c: u32) -> u32 {
        ((c & 0x80) << 24) | 0x7FC0_0000
    }
}
