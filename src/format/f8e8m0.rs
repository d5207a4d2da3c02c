//! The MX block-scale format E8M0 ([`F8E8M0`], `float8_e8m0fnu` in ml_dtypes and PyTorch,
//! `F8_E8M0` in safetensors): 8 exponent bits, bias 127, no sign, no fraction. Code `c`
//! is 2^(c − 127) for `c` in `0..=254`, so `0x00` is 2^-127 (an f32 subnormal) and `0xFE`
//! is 2^127; `0xFF` is the only NaN. There is no zero, no infinity and no sign.
//!
//! # Narrowing
//!
//! To the nearest power of two **in linear space**, ties **up**: between 2^k and 2^(k+1)
//! the midpoint is 1.5 · 2^k, and 1.5 · 2^k itself goes to 2^(k+1) (ml_dtypes and PyTorch
//! agree on ties). Then:
//!
//! * values below 2^-127, down to the smallest f32/f64 subnormal, give `0x00`: 2^-127 is
//!   the nearest representable value (the format has no zero to round to);
//! * a value that rounds above 2^127 (that is, at least 1.5 · 2^127) overflows: `0xFE`
//!   under [`Overflow::Saturate`] (the default), `0xFF` under [`Overflow::NonSaturating`];
//! * zero (of either sign), negative values and ±Inf give `0xFF` (nothing represents them);
//! * NaN gives `0xFF`, or `0xFE` under [`NanPolicy::ToMax`](crate::NanPolicy::ToMax).
//!
//! **Deliberate difference:** ml_dtypes 0.6 and PyTorch give `0x01` (2^-126) for the f32
//! inputs in (2^-127, 1.5 · 2^-127), whose nearest power of two is 2^-127 (`0x00`): vcvt
//! gives `0x00`. PyTorch also gives `0x00` for ±0 and ignores the sign of negative inputs.
//!
//! # Widening
//!
//! Exact: `0x00` gives the f32 subnormal `0x00400000` (built from bits, so flush-to-zero
//! settings cannot change it), `0xFF` the quiet NaN `0x7FC00000`.

use crate::codec::{Format, NanKind};
use crate::options::{NanPolicy, Policy};
use crate::{Overflow, options};

narrow_type! {
    /// An E8M0 block scale (`float8_e8m0fnu`): a power of two from 2^-127 to 2^127, or NaN.
    ///
    /// Narrowing rounds to the nearest power of two in linear space, ties up, and uses
    /// [`Overflow::Saturate`] unless told otherwise. `Default` is the all-zero code, 2^-127:
    /// the format has no zero.
    ///
    /// ```
    /// use vcvt::F8E8M0;
    /// assert_eq!(F8E8M0::from_f32(1.0), F8E8M0::ONE);
    /// assert_eq!(F8E8M0::from_f32(3.0).to_f32(), 4.0); // 3 = 1.5 * 2: the tie goes up
    /// assert_eq!(F8E8M0::from_f32(2.9).to_f32(), 2.0);
    /// assert!(F8E8M0::from_f32(0.0).is_nan()); // no zero
    /// assert!(F8E8M0::from_f32(-4.0).is_nan()); // no sign
    /// assert_eq!(F8E8M0::from_bits(0).to_f32(), 2f32.powi(-127));
    /// ```
    ///
    /// Text: E8M0 prints its exact value (with nearest rounding every power of two would
    /// have a one-digit shortest string, 1024 → `1000`). Parsing rounds to the nearest power
    /// of two in linear space, ties up, as narrowing does; a positive value below 2^-127
    /// (`1e-400` included) gives 2^-127, zero and negative values give NaN, and `inf` or a
    /// value above the range follows the overflow policy (`MAX` under `Saturate`).
    ///
    /// ```
    /// use vcvt::F8E8M0;
    /// assert_eq!(F8E8M0::from_f32(1024.0).to_string(), "1024");
    /// assert_eq!(format!("{:e}", F8E8M0::from_f32(0.125)), "1.25e-1");
    /// assert_eq!("3".parse::<F8E8M0>().unwrap().to_f32(), 4.0);
    /// ```
    F8E8M0(u8), example = "0.5"
}

impl F8E8M0 {
    /// One (`0x7F`).
    pub const ONE: F8E8M0 = F8E8M0(0x7F);
    /// The smallest value, 2^-127 (`0x00`).
    pub const MIN_POSITIVE: F8E8M0 = F8E8M0(0x00);
    /// The NaN (`0xFF`), the format's only one.
    pub const NAN: F8E8M0 = F8E8M0(0xFF);

    /// The power of two `2^exp`, for `exp` in `-127..=127`; `None` outside that range.
    ///
    /// ```
    /// assert_eq!(vcvt::F8E8M0::from_exponent(3).unwrap().to_f32(), 8.0);
    /// assert!(vcvt::F8E8M0::from_exponent(128).is_none());
    /// ```
    pub const fn from_exponent(exp: i32) -> Option<F8E8M0> {
        if exp >= -127 && exp <= 127 {
            Some(F8E8M0((exp + 127) as u8))
        } else {
            None
        }
    }

    /// The exponent `e` of the value `2^e` (`-127..=127`), or `None` for NaN.
    ///
    /// ```
    /// assert_eq!(vcvt::F8E8M0::from_f32(0.25).exponent(), Some(-2));
    /// ```
    pub const fn exponent(self) -> Option<i32> {
        if self.0 == 0xFF {
            None
        } else {
            Some(self.0 as i32 - 127)
        }
    }
}

/// The code of a NaN source.
#[inline(always)]
fn nan(p: Policy) -> u32 {
    match p.nan {
        NanPolicy::ToMax => 0xFE,
        NanPolicy::Preserve | NanPolicy::Canonical => 0xFF,
    }
}

/// The code of a value that rounds above 2^127.
#[inline(always)]
fn overflow(p: Policy) -> u32 {
    match p.overflow {
        Overflow::Saturate => 0xFE,
        Overflow::NonSaturating => 0xFF,
    }
}

impl Format for F8E8M0 {
    const EXP_BITS: u32 = 8;
    const MAN_BITS: u32 = 0;
    const SIGNED: bool = false;
    const MAX: u32 = 0xFE;
    const HAS_INF: bool = false;
    const NAN: NanKind = NanKind::Fixed {
        code: 0xFF,
        signed: false,
    };
    const DEFAULT_OVERFLOW: Overflow = Overflow::Saturate;

    #[inline(always)]
    fn nan_to_f32(_c: u32) -> u32 {
        0x7FC0_0000
    }

    #[inline(always)]
    fn narrow32(x: u32, p: options::Policy) -> u32 {
        let a = x & 0x7FFF_FFFF;
        if a > 0x7F80_0000 {
            return nan(p);
        }
        if x != a || a == 0 || a == 0x7F80_0000 {
            // Negative, zero or infinite: nothing represents it.
            return 0xFF;
        }
        if a < 0x0080_0000 {
            // f32 subnormal a * 2^-149, below 2^-126: nearest of 2^-127 (0x00400000) and
            // 2^-126, the tie 1.5 * 2^-127 (0x00600000) going up; everything below 2^-127
            // also goes to 2^-127, the smallest code.
            return (a >= 0x0060_0000) as u32;
        }
        // Normal 2^(e-127) * (1 + f): the code is e, plus one when f >= 1/2 (ties up), which
        // adding half of the exponent's unit to the bits does, carrying into the exponent.
        let c = (a + 0x0040_0000) >> 23;
        if c > 0xFE { overflow(p) } else { c }
    }

    #[inline(always)]
    fn narrow64(x: u64, p: options::Policy) -> u32 {
        let a = x & 0x7FFF_FFFF_FFFF_FFFF;
        if a > 0x7FF0_0000_0000_0000 {
            return nan(p);
        }
        if x != a || a == 0 || a == 0x7FF0_0000_0000_0000 {
            return 0xFF;
        }
        // The nearest power of two, ties up, is 2^(e - 1023) times 2 when f >= 1/2: the same
        // carry as for f32 (for f64 subnormals too, which are all far below 2^-127).
        let k = ((a + (1 << 51)) >> 52) as i32 - 1023;
        if k > 127 {
            overflow(p)
        } else {
            // Below 2^-127 the nearest code is the smallest one.
            (k.max(-127) + 127) as u32
        }
    }

    #[inline(always)]
    fn widen32(c: u32) -> u32 {
        match c {
            0xFF => 0x7FC0_0000,
            // 2^-127 is the f32 subnormal with only bit 22 set.
            0x00 => 0x0040_0000,
            _ => c << 23,
        }
    }
}
