//! bfloat16 ([`BF16`]): the top half of an IEEE binary32, 1 sign, 8 exponent and 7 fraction
//! bits, bias 127.
//!
//! NaN rule: narrowing keeps the sign and the top 7 payload bits and sets the quiet bit;
//! widening to f32 is the plain 16-bit shift (a signalling NaN stays signalling, as the
//! bits say); widening to f64 goes through that f32 and the IEEE f32→f64 conversion, which
//! quiets it.

use crate::Overflow;
use crate::codec::{Format, NanKind};

narrow_type! {
    /// A bfloat16 value: f32's range with 8 significant bits.
    ///
    /// Narrowing rounds to nearest even and keeps subnormals (unlike `VCVTNEPS2BF16`, which
    /// flushes them). It uses [`Overflow::NonSaturating`] unless told otherwise.
    ///
    /// ```
    /// use vcvt::BF16;
    /// assert_eq!(BF16::from_f32(1.0).to_bits(), 0x3F80);
    /// assert_eq!(BF16::from_f32(f32::from_bits(0x007F_FFFF)).to_bits(), 0x0080); // subnormal kept
    /// assert_eq!(BF16::from_bits(0x4049).to_f32(), f32::from_bits(0x4049_0000));
    /// ```
    BF16(u16), example = "1.5"
}
signed_consts!(BF16(u16), neg_zero);

impl BF16 {
    /// Positive infinity.
    pub const INFINITY: BF16 = BF16(0x7F80);
    /// Negative infinity.
    pub const NEG_INFINITY: BF16 = BF16(0xFF80);
    /// The canonical quiet NaN (`0x7FC0`).
    pub const NAN: BF16 = BF16(0x7FC0);
}

impl Format for BF16 {
    const EXP_BITS: u32 = 8;
    const MAN_BITS: u32 = 7;
    const MAX: u32 = 0x7F7F;
    const HAS_INF: bool = true;
    const NAN: NanKind = NanKind::Ieee;
    const DEFAULT_OVERFLOW: Overflow = Overflow::NonSaturating;

    #[inline(always)]
    fn nan_to_f32(c: u32) -> u32 {
        // The plain 16-bit shift: every bit kept.
        c << 16
    }
}
