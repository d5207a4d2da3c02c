//! MX fp4 E2M1 ([`F4E2M1`], `float4_e2m1fn` in ml_dtypes; two per byte in [`F4E2M1x2`](crate::F4E2M1x2)): 1 sign, 2 exponent and 1 fraction bits,
//! bias 1, range ±6.0, no infinity and no NaN. One value per byte, in the low 4 bits (as
//! ml_dtypes and torchao store it).
//!
//! Rules: overflow and ±Inf always saturate to ±6.0 (there is nothing else to go to),
//! whatever the [`Overflow`] policy; a NaN source becomes ±6.0 with the NaN's sign under
//! every [`NanPolicy`](crate::NanPolicy). Widening ignores the byte's unused high bits
//! (a byte `b` widens as `b & 0xF`), so a dirty byte never affects another
//! element; narrowing always writes them as zero.

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// An MX fp4 E2M1 value (`float4_e2m1fn`): range ±6.0, 2 significant bits, no infinity, no NaN.
    ///
    /// Stored one per byte in the low 4 bits. Overflow, ±Inf and NaN saturate (see the
    /// module docs of the format for NaN).
    ///
    /// ```
    /// use vcvt::F4E2M1;
    /// assert_eq!(F4E2M1::from_f32(1.0e6), F4E2M1::MAX);
    /// assert_eq!(F4E2M1::MAX.to_f32(), 6.0);
    /// assert_eq!(F4E2M1::from_f32(f32::NAN), F4E2M1::MAX);
    /// assert_eq!(F4E2M1::from_bits(0x9).to_f32(), -0.5);
    /// ```
    F4E2M1(u8), example = "1.5"
}
signed_consts!(F4E2M1(u8), neg_zero);

impl Format for F4E2M1 {
    const EXP_BITS: u32 = 2;
    const MAN_BITS: u32 = 1;
    const MAX: u32 = 0x7;
    const HAS_INF: bool = false;
    const NAN: NanKind = NanKind::None;
    const DEFAULT_OVERFLOW: Overflow = Overflow::Saturate;

    #[inline(always)]
    fn nan_to_f32(_c: u32) -> u32 {
        // No code is NaN; never called.
        0x7FC0_0000
    }
}
