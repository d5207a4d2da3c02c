//! MX fp6 E3M2 ([`F6E3M2`], `float6_e3m2fn` in ml_dtypes, `F6_E3M2` in safetensors): 1 sign, 3 exponent and 2 fraction bits,
//! bias 3, range ±28.0, no infinity and no NaN. One value per byte, in the low 6 bits (as
//! ml_dtypes and torchao store it).
//!
//! Rules: overflow and ±Inf always saturate to ±28.0 (there is nothing else to go to),
//! whatever the [`Overflow`] policy; a NaN source becomes ±28.0 with the NaN's sign under
//! every [`NanPolicy`](crate::NanPolicy). Widening ignores the byte's unused high bits
//! (a byte `b` widens as `b & 0x3F`), so a dirty byte never affects another
//! element; narrowing always writes them as zero.

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// An MX fp6 E3M2 value (`float6_e3m2fn`): range ±28.0, 3 significant bits, no infinity, no NaN.
    ///
    /// Stored one per byte in the low 6 bits. Overflow, ±Inf and NaN saturate (see the
    /// module docs of the format for NaN).
    ///
    /// ```
    /// use vcvt::F6E3M2;
    /// assert_eq!(F6E3M2::from_f32(1.0e6), F6E3M2::MAX);
    /// assert_eq!(F6E3M2::MAX.to_f32(), 28.0);
    /// assert_eq!(F6E3M2::from_f32(f32::NAN), F6E3M2::MAX);
    /// assert_eq!(F6E3M2::from_bits(0x21).to_f32(), -0.0625);
    /// ```
    F6E3M2(u8), example = "1.5"
}
signed_consts!(F6E3M2(u8), neg_zero);

impl Format for F6E3M2 {
    const EXP_BITS: u32 = 3;
    const MAN_BITS: u32 = 2;
    const MAX: u32 = 0x1F;
    const HAS_INF: bool = false;
    const NAN: NanKind = NanKind::None;
    const DEFAULT_OVERFLOW: Overflow = Overflow::Saturate;

    #[inline(always)]
    fn nan_to_f32(_c: u32) -> u32 {
        // No code is NaN; never called.
        0x7FC0_0000
    }
}
