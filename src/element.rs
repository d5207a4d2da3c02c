//! The element types a slice may hold, and the sealed trait naming the supported pairs.

use crate::{BF16, F8E4M3, F8E5M2, F16, Overflow};

pub(crate) mod private {
    use crate::Overflow;

    /// Seals [`Element`](super::Element): only this crate's types are elements.
    pub trait Sealed {}

    /// Which kernel of a backend's table a pair uses, and its default overflow policy.
    /// Public but unnameable, so that [`ConvertTo`](super::ConvertTo) cannot be implemented
    /// outside this crate.
    #[derive(Clone, Copy, Debug)]
    pub struct Pair {
        pub(crate) index: usize,
        pub(crate) default_overflow: Overflow,
    }
}

/// A type that a slice passed to `vcvt` may hold: `f32`, `f64`, [`F16`], [`BF16`],
/// [`F8E4M3`], [`F8E5M2`] (and `half::f16`/`half::bf16` with the `half` feature).
///
/// Sealed: it cannot be implemented outside this crate.
pub trait Element: private::Sealed + Copy + Send + Sync + 'static {}

/// `Self` converts to `D`: implemented for f32 and f64 to and from each narrow format.
///
/// An unsupported pair does not compile:
///
/// ```compile_fail
/// let src = [1.0f32; 4];
/// let mut dst = [0.0f64; 4];
/// vcvt::convert_slice(&src, &mut dst); // f32 -> f64 is not a vcvt pair
/// ```
///
/// ```compile_fail
/// let src = [vcvt::F16::ONE; 4];
/// let mut dst = [vcvt::BF16::ZERO; 4];
/// vcvt::convert_slice(&src, &mut dst); // narrow -> narrow is not a vcvt pair
/// ```
pub trait ConvertTo<D: Element>: Element {
    #[doc(hidden)]
    const PAIR: private::Pair;
}

/// Number of kernels in a backend's table.
pub(crate) const PAIRS: usize = 16;

/// Table index of the narrowing kernel `wide -> fmt` (`wide`: 0 = f32, 1 = f64;
/// `fmt`: 0 = F16, 1 = BF16, 2 = F8E4M3, 3 = F8E5M2).
pub(crate) const fn narrow_index(wide: usize, fmt: usize) -> usize {
    wide * 4 + fmt
}

/// Table index of the widening kernel `fmt -> wide`.
pub(crate) const fn widen_index(wide: usize, fmt: usize) -> usize {
    8 + wide * 4 + fmt
}

macro_rules! elements {
    ($($t:ty),*) => { $(impl private::Sealed for $t {} impl Element for $t {})* };
}
elements!(f32, f64, F16, BF16, F8E4M3, F8E5M2);

macro_rules! pairs {
    ($($narrow:ty => $fmt:expr, $default:expr;)*) => {$(
        impl ConvertTo<$narrow> for f32 {
            const PAIR: private::Pair =
                private::Pair { index: narrow_index(0, $fmt), default_overflow: $default };
        }
        impl ConvertTo<$narrow> for f64 {
            const PAIR: private::Pair =
                private::Pair { index: narrow_index(1, $fmt), default_overflow: $default };
        }
        impl ConvertTo<f32> for $narrow {
            const PAIR: private::Pair =
                private::Pair { index: widen_index(0, $fmt), default_overflow: $default };
        }
        impl ConvertTo<f64> for $narrow {
            const PAIR: private::Pair =
                private::Pair { index: widen_index(1, $fmt), default_overflow: $default };
        }
    )*};
}

pairs! {
    F16 => 0, F16::DEFAULT_OVERFLOW;
    BF16 => 1, BF16::DEFAULT_OVERFLOW;
    F8E4M3 => 2, F8E4M3::DEFAULT_OVERFLOW;
    F8E5M2 => 3, F8E5M2::DEFAULT_OVERFLOW;
}

#[cfg(feature = "half")]
mod half_interop {
    use super::*;

    elements!(half::f16, half::bf16);
    // `half::f16` and `half::bf16` are `repr(transparent)` over `u16` with the same bit
    // layouts as `F16` and `BF16`, so they share those kernels.
    pairs! {
        half::f16 => 0, F16::DEFAULT_OVERFLOW;
        half::bf16 => 1, BF16::DEFAULT_OVERFLOW;
    }

    impl From<half::f16> for F16 {
        fn from(x: half::f16) -> F16 {
            F16::from_bits(x.to_bits())
        }
    }
    impl From<F16> for half::f16 {
        fn from(x: F16) -> half::f16 {
            half::f16::from_bits(x.to_bits())
        }
    }
    impl From<half::bf16> for BF16 {
        fn from(x: half::bf16) -> BF16 {
            BF16::from_bits(x.to_bits())
        }
    }
    impl From<BF16> for half::bf16 {
        fn from(x: BF16) -> half::bf16 {
            half::bf16::from_bits(x.to_bits())
        }
    }
}

/// The overflow policy a call uses for pair `P`.
#[inline(always)]
pub(crate) fn resolve_overflow(pair: private::Pair, chosen: Option<Overflow>) -> Overflow {
    match chosen {
        Some(o) => o,
        None => pair.default_overflow,
    }
}
