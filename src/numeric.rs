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
//! E8M0 (no sign, no zero) has only `Bounded`, `NumCast`, `ToPrimitive` and `FromPrimitive`.
//! `Float` and `FloatCore` are not implemented.

use num_traits::{Bounded, FromPrimitive, Num, NumCast, One, ToPrimitive, Zero};

use crate::{BF16, F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F16};

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
    F16, BF16, F8E4M3, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1
);
