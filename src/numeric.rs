//! `num-traits` support (feature `num-traits`) and the arithmetic operators that its `Num`
//! requires.
//!
//! # Arithmetic
//!
//! `+ - * / %` and unary `-` compute in `f64` from the exact widened operands and round the
//! result once to the format (ties to even, the format's default overflow and NaN
//! policies, as `from_f64`). That is the correctly rounded result: `f64` has 53 significant
//! bits, at least `2p + 2` for every format here (`p` ≤ 11), and for `+ - * /` a rounding to
//! `f64` followed by a rounding to `p` bits then equals a single rounding to `p` bits
//! (Figueroa, "When is double rounding innocuous?", 1995); `%` is exact in both. The operand
//! ranges stay far inside `f64`'s normal range.
//!
//! ```
//! use num_traits::{Bounded, Num, One, Zero};
//! use vcvt::{F16, F8E4M3};
//!
//! assert_eq!(F16::one() + F16::one(), F16::from_f32(2.0));
//! assert!(F8E4M3::zero().is_zero());
//! assert_eq!(F8E4M3::max_value() + F8E4M3::one(), F8E4M3::MAX); // saturates, the fp8 default
//! assert_eq!(F16::from_str_radix("0.1", 10).unwrap(), F16::from_f64(0.1));
//! ```
//!
//! E8M0 (no sign, no zero) and E5M3FNU (no sign) have only `Bounded`, `NumCast`,
//! `ToPrimitive` and `FromPrimitive`.
//!
//! # `FloatCore`
//!
//! [`F16`] and [`BF16`] implement [`FloatCore`] (no `std` needed): they have infinities and
//! NaN, and their arithmetic is IEEE's (overflow gives ±inf). The other formats do not:
//! E4M3, the fnuz formats, fp6 and fp4 have no infinity to return from `infinity()`, and
//! E5M2's default policy saturates, so `inf + 1` would be `MAX`.
//!
//! The methods are exact where `f32`'s are: `floor`, `ceil`, `round` (half away from zero),
//! `trunc`, `fract`, `abs`, `signum`, `min`, `max`, `clamp` and the classification give the
//! value `f32`'s method gives on the widened value (which is representable), `recip` is
//! `1/x` rounded once, and `integer_decode` returns `(m, e, s)` with `s·m·2^e` the value (as
//! `f32`'s: `m` includes the implicit bit; for zero, `m = 0`). `powi`, `to_degrees` and
//! `to_radians` compute in `f64` and round once at the end: `powi` is exact in `f64` while the
//! power fits in 53 bits (`|n| ≤ 4` for F16, `|n| ≤ 6` for BF16, positive `n`), and otherwise
//! within `|n|·2^-52` relative error before the final rounding, so correctly rounded unless
//! the exact power lies that close to a midpoint.
//!
//! ```
//! use num_traits::float::FloatCore;
//! use vcvt::F16;
//!
//! let x = F16::from_f32(-2.5);
//! assert_eq!(FloatCore::floor(x), F16::from_f32(-3.0));
//! assert_eq!(FloatCore::round(x), F16::from_f32(-3.0));
//! assert_eq!(FloatCore::fract(x), F16::from_f32(-0.5));
//! assert_eq!(F16::max_value() + F16::max_value(), <F16 as FloatCore>::infinity());
//! assert_eq!(FloatCore::integer_decode(x), (1280, -9, -1));
//! ```

use num_traits::float::FloatCore;
use num_traits::{Bounded, FromPrimitive, Num, NumCast, One, ToPrimitive, Zero};

use crate::{
    BF16, F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FNUZ, F8E4M3IEEE, F8E5M2,
    F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16,
};

/// `x` as an `f64` rounded to odd at 53 bits: exact below 2^53, and otherwise carrying a
/// sticky last bit, so that rounding it again to 11 bits or fewer gives the correctly
/// rounded result of `x` (one rounding).
fn u64_to_f64_odd(x: u64) -> f64 {
    if x < 1 << 53 {
        return x as f64;
    }
    let shift = 64 - x.leading_zeros() - 53;
    let mut t = x >> shift;
    if x & ((1 << shift) - 1) != 0 {
        t |= 1;
    }
    (t as f64) * f64::from_bits(<u64 as core::convert::From<u32>>::from(1023 + shift) << 52)
}

fn i64_to_f64_odd(x: i64) -> f64 {
    let a = u64_to_f64_odd(x.unsigned_abs());
    if x < 0 { -a } else { a }
}

/// The `num_traits::ParseFloatError` of the same kind as a core `ParseFloatError`.
fn radix_error(e: core::num::ParseFloatError) -> num_traits::ParseFloatError {
    let empty = "".parse::<f32>().err() == Some(e);
    num_traits::ParseFloatError {
        kind: if empty {
            num_traits::FloatErrorKind::Empty
        } else {
            num_traits::FloatErrorKind::Invalid
        },
    }
}

macro_rules! common {
    ($($t:ident, $min:expr;)*) => {$(
        impl Bounded for $t {
            fn min_value() -> Self {
                $min
            }
            fn max_value() -> Self {
                $t::MAX
            }
        }

        impl ToPrimitive for $t {
            fn to_i64(&self) -> Option<i64> {
                ToPrimitive::to_i64(&$t::to_f64(*self))
            }
            fn to_u64(&self) -> Option<u64> {
                ToPrimitive::to_u64(&$t::to_f64(*self))
            }
            fn to_f32(&self) -> Option<f32> {
                Some($t::to_f32(*self))
            }
            fn to_f64(&self) -> Option<f64> {
                Some($t::to_f64(*self))
            }
        }

        impl FromPrimitive for $t {
            /// Rounded once (integers above 2^53 too).
            fn from_i64(n: i64) -> Option<Self> {
                Some($t::from_f64(i64_to_f64_odd(n)))
            }
            /// Rounded once (integers above 2^53 too).
            fn from_u64(n: u64) -> Option<Self> {
                Some($t::from_f64(u64_to_f64_odd(n)))
            }
            fn from_f32(n: f32) -> Option<Self> {
                Some($t::from_f32(n))
            }
            fn from_f64(n: f64) -> Option<Self> {
                Some($t::from_f64(n))
            }
        }

        impl NumCast for $t {
            /// Through the source's `to_f64` (exact for `f32`, `f64` and integers below 2^53),
            /// then rounded once.
            fn from<N: ToPrimitive>(n: N) -> Option<Self> {
                n.to_f64().map($t::from_f64)
            }
        }
    )*};
}

common! {
    F16, F16::MIN;
    BF16, BF16::MIN;
    F8E4M3, F8E4M3::MIN;
    F8E5M2, F8E5M2::MIN;
    F8E4M3FNUZ, F8E4M3FNUZ::MIN;
    F8E5M2FNUZ, F8E5M2FNUZ::MIN;
    F6E2M3, F6E2M3::MIN;
    F6E3M2, F6E3M2::MIN;
    F4E2M1, F4E2M1::MIN;
    F8E8M0, F8E8M0::MIN_POSITIVE;
    F8E3M4, F8E3M4::MIN;
    F8E4M3IEEE, F8E4M3IEEE::MIN;
    F8E4M3B11FNUZ, F8E4M3B11FNUZ::MIN;
    F8E5M3FNU, F8E5M3FNU::ZERO;
}

macro_rules! signed {
    ($($t:ident),*) => {$(
        arith!($t, Add, add, AddAssign, add_assign, +);
        arith!($t, Sub, sub, SubAssign, sub_assign, -);
        arith!($t, Mul, mul, MulAssign, mul_assign, *);
        arith!($t, Div, div, DivAssign, div_assign, /);
        arith!($t, Rem, rem, RemAssign, rem_assign, %);

        impl core::ops::Neg for $t {
            type Output = $t;
            fn neg(self) -> $t {
                $t::from_f64(-self.to_f64())
            }
        }

        impl Zero for $t {
            fn zero() -> Self {
                $t::ZERO
            }
            fn is_zero(&self) -> bool {
                *self == $t::ZERO
            }
        }

        impl One for $t {
            fn one() -> Self {
                $t::ONE
            }
        }

        impl Num for $t {
            type FromStrRadixErr = num_traits::ParseFloatError;

            /// Radix 10 is this type's `FromStr` (correctly rounded); other radices go
            /// through `f64`'s `from_str_radix` (not guaranteed to round once).
            fn from_str_radix(s: &str, radix: u32) -> Result<Self, Self::FromStrRadixErr> {
                if radix == 10 {
                    s.parse().map_err(radix_error)
                } else {
                    <f64 as Num>::from_str_radix(s, radix).map($t::from_f64)
                }
            }
        }
    )*};
}

macro_rules! arith {
    ($t:ident, $tr:ident, $m:ident, $tra:ident, $ma:ident, $op:tt) => {
        impl core::ops::$tr for $t {
            type Output = $t;
            /// Computed exactly enough in `f64`, rounded once (see `vcvt::numeric` docs).
            fn $m(self, rhs: $t) -> $t {
                $t::from_f64(self.to_f64() $op rhs.to_f64())
            }
        }
        impl core::ops::$tra for $t {
            fn $ma(&mut self, rhs: $t) {
                *self = *self $op rhs;
            }
        }
    };
}

signed!(
    F16,
    BF16,
    F8E4M3,
    F8E5M2,
    F8E4M3FNUZ,
    F8E5M2FNUZ,
    F6E2M3,
    F6E3M2,
    F4E2M1,
    F8E3M4,
    F8E4M3IEEE,
    F8E4M3B11FNUZ
);

/// `a` rounded toward zero to an integer, for `0 <= a < 2^52` (exact).
fn trunc_pos(a: f64) -> f64 {
    (a as u64) as f64
}

macro_rules! float_core {
    ($($t:ident($b:ty)),*) => {$(
        impl $t {
            /// The value with the sign bit of `self` and the magnitude `f(|self|)` (an `f64`
            /// that is a value of the format), for the integer rounding functions. NaN,
            /// infinities and values from 2^MAN_BITS up (all integers) are returned as they are.
            fn on_magnitude(self, f: impl Fn(f64) -> f64) -> $t {
                let sign = (self.to_bits() as u32) & <$t as crate::codec::Format>::SIGN_BIT;
                let a = self.to_f64();
                let a = if a < 0.0 { -a } else { a };
                let big = (1u32 << <$t as crate::codec::Format>::MAN_BITS) as f64;
                if a.is_nan() || a >= big {
                    return self;
                }
                let m = $t::from_f64(f(a)).to_bits();
                $t::from_bits(m | sign as $b)
            }
        }

        impl FloatCore for $t {
            fn infinity() -> Self {
                $t::INFINITY
            }
            fn neg_infinity() -> Self {
                $t::NEG_INFINITY
            }
            fn nan() -> Self {
                $t::NAN
            }
            fn neg_zero() -> Self {
                $t::NEG_ZERO
            }
            fn min_value() -> Self {
                $t::MIN
            }
            fn min_positive_value() -> Self {
                $t::MIN_POSITIVE
            }
            fn epsilon() -> Self {
                $t::EPSILON
            }
            fn max_value() -> Self {
                $t::MAX
            }
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                $t::is_infinite(self)
            }
            fn is_finite(self) -> bool {
                $t::is_finite(self)
            }
            fn is_normal(self) -> bool {
                FloatCore::classify(self) == core::num::FpCategory::Normal
            }
            fn is_subnormal(self) -> bool {
                FloatCore::classify(self) == core::num::FpCategory::Subnormal
            }
            fn classify(self) -> core::num::FpCategory {
                use core::num::FpCategory;
                let mag = (self.to_bits() as u32) & <$t as crate::codec::Format>::MAG_MASK;
                if $t::is_nan(self) {
                    FpCategory::Nan
                } else if $t::is_infinite(self) {
                    FpCategory::Infinite
                } else if mag == 0 {
                    FpCategory::Zero
                } else if mag >> <$t as crate::codec::Format>::MAN_BITS == 0 {
                    FpCategory::Subnormal
                } else {
                    FpCategory::Normal
                }
            }
            fn floor(self) -> Self {
                if self.is_sign_negative() {
                    self.on_magnitude(|a| {
                        let t = trunc_pos(a);
                        if t < a { t + 1.0 } else { t }
                    })
                } else {
                    self.on_magnitude(trunc_pos)
                }
            }
            fn ceil(self) -> Self {
                if self.is_sign_negative() {
                    self.on_magnitude(trunc_pos)
                } else {
                    self.on_magnitude(|a| {
                        let t = trunc_pos(a);
                        if t < a { t + 1.0 } else { t }
                    })
                }
            }
            /// Half away from zero, as `f32::round`.
            fn round(self) -> Self {
                // `a + 0.5` is exact for `0.5 <= a < 2^MAN_BITS` (at most 2·MAN_BITS + 2
                // significant bits).
                self.on_magnitude(|a| if a < 0.5 { 0.0 } else { trunc_pos(a + 0.5) })
            }
            fn trunc(self) -> Self {
                self.on_magnitude(trunc_pos)
            }
            /// `self - self.trunc()`, exact (NaN for infinities, as `f32`).
            fn fract(self) -> Self {
                $t::from_f64(self.to_f64() - FloatCore::trunc(self).to_f64())
            }
            fn abs(self) -> Self {
                $t::from_bits(self.to_bits() & !(<$t as crate::codec::Format>::SIGN_BIT as $b))
            }
            fn signum(self) -> Self {
                if $t::is_nan(self) {
                    self
                } else if self.is_sign_negative() {
                    -$t::ONE
                } else {
                    $t::ONE
                }
            }
            fn is_sign_positive(self) -> bool {
                $t::is_sign_positive(self)
            }
            fn is_sign_negative(self) -> bool {
                $t::is_sign_negative(self)
            }
            /// As `f32::min` (a NaN operand is ignored).
            fn min(self, other: Self) -> Self {
                $t::from_f32(self.to_f32().min(other.to_f32()))
            }
            /// As `f32::max` (a NaN operand is ignored).
            fn max(self, other: Self) -> Self {
                $t::from_f32(self.to_f32().max(other.to_f32()))
            }
            /// `1/x`, rounded once.
            fn recip(self) -> Self {
                $t::from_f64(1.0 / self.to_f64())
            }
            /// In `f64` by repeated squaring, rounded once at the end (see the module docs).
            fn powi(self, n: i32) -> Self {
                let mut base = self.to_f64();
                let mut e = n.unsigned_abs();
                let mut acc = 1.0f64;
                while e > 0 {
                    if e & 1 == 1 {
                        acc *= base;
                    }
                    base *= base;
                    e >>= 1;
                }
                $t::from_f64(if n < 0 { 1.0 / acc } else { acc })
            }
            /// In `f64`, rounded once.
            fn to_degrees(self) -> Self {
                $t::from_f64(self.to_f64() * (180.0 / core::f64::consts::PI))
            }
            /// In `f64`, rounded once.
            fn to_radians(self) -> Self {
                $t::from_f64(self.to_f64() * (core::f64::consts::PI / 180.0))
            }
            /// `(m, e, s)` with `s·m·2^e` the value, as `f32::integer_decode`.
            fn integer_decode(self) -> (u64, i16, i8) {
                let man_bits = <$t as crate::codec::Format>::MAN_BITS;
                let bias = <$t as crate::codec::Format>::BIAS;
                let bits = (self.to_bits() as u32);
                let sign = if self.is_sign_negative() { -1 } else { 1 };
                let mag = bits & <$t as crate::codec::Format>::MAG_MASK;
                let exp = (mag >> man_bits) as i32;
                let frac = mag & ((1 << man_bits) - 1);
                let m = if exp == 0 { frac << 1 } else { frac | (1 << man_bits) };
                (m as u64, (exp - bias - man_bits as i32) as i16, sign)
            }
        }
    )*};
}

float_core!(F16(u16), BF16(u16));
