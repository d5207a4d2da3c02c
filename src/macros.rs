//! The part of every narrow element type that does not depend on the format: generated
//! once here so that the types cannot drift apart.

/// Defines a narrow element type: a `#[repr(transparent)]` newtype over its bits with the
/// conversion methods, comparisons, formatting and `Pod` glue. The format's constants come
/// from its [`Format`](crate::codec::Format) impl.
macro_rules! narrow_type {
    (
        $(#[$meta:meta])*
        $name:ident($bits:ty), example = $example:literal
    ) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Default)]
        pub struct $name($bits);

        // SAFETY: a `repr(transparent)` wrapper of an integer: no padding, every bit pattern
        // is a valid value (codes outside the format are defined to be masked or NaN), and
        // the all-zero pattern is valid.
        unsafe impl bytemuck::Zeroable for $name {}
        // SAFETY: as above; the type is `Copy + 'static` and has no interior mutability.
        unsafe impl bytemuck::Pod for $name {}

        impl crate::codec::Code for $name {
            #[inline(always)]
            fn from_code(c: u32) -> Self {
                Self(c as $bits)
            }
            #[inline(always)]
            fn code(self) -> u32 {
                self.0 as u32
            }
        }

        impl $name {
            /// The largest finite value.
            pub const MAX: Self = Self(<Self as crate::codec::Format>::MAX as $bits);
            /// Number of significant binary digits, counting the implicit leading one.
            pub const MANTISSA_DIGITS: u32 = <Self as crate::codec::Format>::MAN_BITS + 1;
            /// The overflow policy that [`Self::from_f32`], [`Self::from_f64`] and the slice
            /// functions use when the caller does not choose one.
            pub const DEFAULT_OVERFLOW: crate::Overflow =
                <Self as crate::codec::Format>::DEFAULT_OVERFLOW;

            /// Builds a value from its bit pattern.
            #[doc = concat!("Bits above the format's ", stringify!($name), " width (if any) are cleared.")]
            #[inline]
            pub const fn from_bits(bits: $bits) -> Self {
                Self(bits & <Self as crate::codec::Format>::CODE_MASK as $bits)
            }

            /// The value's bit pattern.
            #[inline]
            pub const fn to_bits(self) -> $bits {
                self.0
            }

            #[doc = concat!("Rounds an `f32` to the nearest `", stringify!($name), "`, ties to even, with the format's")]
            /// default overflow policy ([`Self::DEFAULT_OVERFLOW`]).
            ///
            /// ```
            #[doc = concat!("use vcvt::", stringify!($name), ";")]
            #[doc = concat!("let x = ", stringify!($name), "::from_f32(", $example, ");")]
            #[doc = concat!("assert_eq!(x.to_f32(), ", $example, ");")]
            /// ```
            #[inline]
            pub fn from_f32(x: f32) -> Self {
                Self::from_f32_with(x, Self::DEFAULT_OVERFLOW)
            }

            /// Rounds an `f32` to the nearest value, ties to even, with the given overflow policy.
            #[inline]
            pub fn from_f32_with(x: f32, overflow: crate::Overflow) -> Self {
                Self(crate::codec::narrow_f32::<Self>(
                    x.to_bits(),
                    crate::options::Policy::overflow(overflow),
                ) as $bits)
            }

            /// Rounds an `f32` to the nearest value, ties to even, with the overflow and NaN
            /// policies of `options` (what the slice functions do with the same options).
            #[inline]
            pub fn from_f32_opts(x: f32, options: crate::Options) -> Self {
                Self(crate::codec::narrow_f32::<Self>(
                    x.to_bits(),
                    options.resolve(Self::DEFAULT_OVERFLOW),
                ) as $bits)
            }

            /// Rounds an `f64` to the nearest value with a single rounding (never through `f32`),
            /// ties to even, with the format's default overflow policy.
            ///
            /// ```
            #[doc = concat!("use vcvt::", stringify!($name), ";")]
            #[doc = concat!("let x = ", stringify!($name), "::from_f64(", $example, ");")]
            #[doc = concat!("assert_eq!(x.to_f64(), ", $example, ");")]
            /// ```
            #[inline]
            pub fn from_f64(x: f64) -> Self {
                Self::from_f64_with(x, Self::DEFAULT_OVERFLOW)
            }

            /// Rounds an `f64` to the nearest value with a single rounding, ties to even, with
            /// the given overflow policy.
            #[inline]
            pub fn from_f64_with(x: f64, overflow: crate::Overflow) -> Self {
                Self(crate::codec::narrow_f64::<Self>(
                    x.to_bits(),
                    crate::options::Policy::overflow(overflow),
                ) as $bits)
            }

            /// Rounds an `f64` to the nearest value with a single rounding, with the overflow
            /// and NaN policies of `options`.
            #[inline]
            pub fn from_f64_opts(x: f64, options: crate::Options) -> Self {
                Self(crate::codec::narrow_f64::<Self>(
                    x.to_bits(),
                    options.resolve(Self::DEFAULT_OVERFLOW),
                ) as $bits)
            }

            /// Widens to `f32`, exactly.
            #[inline]
            pub fn to_f32(self) -> f32 {
                f32::from_bits(crate::codec::widen_f32::<Self>(self.0 as u32))
            }

            /// Widens to `f64`, exactly.
            #[inline]
            pub fn to_f64(self) -> f64 {
                f64::from_bits(crate::codec::f32_bits_to_f64_bits(
                    crate::codec::widen_f32::<Self>(self.0 as u32),
                ))
            }

            /// The code with any bits above the format's width cleared.
            #[inline(always)]
            const fn clean(self) -> u32 {
                self.0 as u32 & <Self as crate::codec::Format>::CODE_MASK
            }

            /// Whether the value is NaN (never, for formats without a NaN code).
            #[inline]
            pub fn is_nan(self) -> bool {
                <Self as crate::codec::Format>::is_nan_code(self.clean())
            }

            /// Whether the value is positive or negative infinity (never, for formats without one).
            #[inline]
            pub fn is_infinite(self) -> bool {
                <Self as crate::codec::Format>::HAS_INF
                    && self.clean() & <Self as crate::codec::Format>::MAG_MASK
                        == <Self as crate::codec::Format>::INF
            }

            /// Whether the value is neither infinite nor NaN.
            #[inline]
            pub fn is_finite(self) -> bool {
                !self.is_nan() && !self.is_infinite()
            }
        }

        impl PartialEq for $name {
            /// IEEE equality: NaN is equal to nothing, `-0 == +0`; bits above the format's
            /// width are ignored.
            #[inline]
            fn eq(&self, other: &Self) -> bool {
                let (a, b) = (self.clean(), other.clean());
                !self.is_nan()
                    && !other.is_nan()
                    && (a == b || (a | b) & <Self as crate::codec::Format>::MAG_MASK == 0
                        && <Self as crate::codec::Format>::SIGNED
                        && <Self as crate::codec::Format>::NEG_ZERO)
            }
        }

        impl PartialOrd for $name {
            /// IEEE ordering: NaN is unordered, `-0 == +0`.
            #[inline]
            fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
                // Widening is exact, so comparing the f32 values compares the values.
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        text_impls!($name($bits));

        impl From<$name> for f32 {
            #[inline]
            fn from(x: $name) -> f32 {
                x.to_f32()
            }
        }

        impl From<$name> for f64 {
            #[inline]
            fn from(x: $name) -> f64 {
                x.to_f64()
            }
        }
    };
}

/// The constants and sign methods of a signed format: every format but E8M0. `neg_zero`
/// adds `NEG_ZERO` (fnuz formats have no negative zero).
macro_rules! signed_consts {
    ($name:ident($bits:ty) $(, $neg_zero:ident)?) => {
        impl $name {
            /// Positive zero.
            pub const ZERO: Self = Self(0);
            /// One.
            pub const ONE: Self = Self(
                ((<Self as crate::codec::Format>::BIAS as u32)
                    << <Self as crate::codec::Format>::MAN_BITS) as $bits,
            );
            /// The most negative finite value (`-MAX`).
            pub const MIN: Self = Self(
                (<Self as crate::codec::Format>::MAX | <Self as crate::codec::Format>::SIGN_BIT)
                    as $bits,
            );
            /// The smallest positive normal value.
            pub const MIN_POSITIVE: Self = Self(1 << <Self as crate::codec::Format>::MAN_BITS);
            /// The smallest positive subnormal value.
            pub const MIN_POSITIVE_SUBNORMAL: Self = Self(1);
            /// Machine epsilon: the difference between 1.0 and the next larger value.
            pub const EPSILON: Self = Self({
                let bias = <Self as crate::codec::Format>::BIAS as u32;
                let man = <Self as crate::codec::Format>::MAN_BITS;
                if bias > man {
                    // 2^-MAN_BITS is normal: exponent field BIAS - MAN_BITS.
                    (bias - man) << man
                } else {
                    // 2^-MAN_BITS is subnormal: 2^(BIAS - 1) quanta of 2^(1 - BIAS - MAN_BITS).
                    1 << (bias - 1)
                }
            } as $bits);

            /// Whether the sign bit is set (including on `-0.0` and on NaNs with a negative sign).
            #[inline]
            pub fn is_sign_negative(self) -> bool {
                self.clean() & <Self as crate::codec::Format>::SIGN_BIT != 0
            }

            /// Whether the sign bit is clear.
            #[inline]
            pub fn is_sign_positive(self) -> bool {
                !self.is_sign_negative()
            }
        }
        $(signed_consts!(@$neg_zero $name($bits));)?
    };
    (@neg_zero $name:ident($bits:ty)) => {
        impl $name {
            /// Negative zero.
            pub const NEG_ZERO: Self = Self(<Self as crate::codec::Format>::SIGN_BIT as $bits);
        }
    };
}

/// The text traits of a narrow element type (see `src/text.rs`): `Display`, `Debug`,
/// `LowerExp`, `UpperExp` (shortest round-trip digits), the bit-printing traits, `FromStr`
/// (correctly rounded), `from_str_with` and the [`Exact`](crate::Exact) adapter.
macro_rules! text_impls {
    ($name:ident($bits:ty)) => {
        impl $name {
            /// Parses a decimal string like [`str::parse`] does, with the given overflow
            /// policy instead of [`Self::DEFAULT_OVERFLOW`].
            ///
            /// The grammar and the errors are `f32::from_str`'s. The result is the exact
            /// decimal value rounded once to the nearest code, ties to even, for strings of
            /// any length; then the overflow policy applies as in [`Self::from_f64_with`].
            /// `inf` and `infinity` are values beyond every limit, so they overflow like a
            /// large finite value: under [`Overflow::Saturate`](crate::Overflow::Saturate)
            /// they give ±MAX (even in a format that has infinities).
            ///
            /// ```
            /// use vcvt::Overflow;
            #[doc = concat!("let x = vcvt::", stringify!($name), "::from_str_with(\"1e300\", Overflow::Saturate)?;")]
            #[doc = concat!("assert_eq!(x, vcvt::", stringify!($name), "::MAX);")]
            /// # Ok::<(), core::num::ParseFloatError>(())
            /// ```
            pub fn from_str_with(
                s: &str,
                overflow: crate::Overflow,
            ) -> Result<Self, core::num::ParseFloatError> {
                crate::text::parse::<Self>(s, overflow).map(|c| Self(c as $bits))
            }

            /// An adapter whose `Display` prints the exact value, every digit, instead of
            /// the shortest string that parses back (`{}` of this type).
            ///
            /// ```
            #[doc = concat!("let x = vcvt::", stringify!($name), "::from_f32(0.3);")]
            /// let exact = x.exact().to_string(); // every digit of the value
            /// assert_eq!(exact.parse::<f64>().unwrap(), x.to_f64());
            #[doc = concat!("assert_eq!(exact.parse::<vcvt::", stringify!($name), ">().unwrap(), x);")]
            /// ```
            pub fn exact(self) -> crate::Exact<Self> {
                crate::Exact(self)
            }
        }

        impl core::str::FromStr for $name {
            type Err = core::num::ParseFloatError;

            /// Parses with the format's default overflow policy: see [`Self::from_str_with`].
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::from_str_with(s, Self::DEFAULT_OVERFLOW)
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                crate::text::format::<Self>(self.0 as u32, f, crate::text::Style::Display)
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                crate::text::format::<Self>(self.0 as u32, f, crate::text::Style::Debug)
            }
        }

        impl core::fmt::LowerExp for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                crate::text::format::<Self>(self.0 as u32, f, crate::text::Style::LowerExp)
            }
        }

        impl core::fmt::UpperExp for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                crate::text::format::<Self>(self.0 as u32, f, crate::text::Style::UpperExp)
            }
        }

        impl core::fmt::Display for crate::Exact<$name> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                crate::text::format::<$name>(self.0.0 as u32, f, crate::text::Style::Exact)
            }
        }

        impl core::fmt::Debug for crate::Exact<$name> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Display::fmt(self, f)
            }
        }

        bits_fmt!($name);
    };
}

/// `LowerHex`, `UpperHex`, `Binary` and `Octal` print a type's stored bits.
macro_rules! bits_fmt {
    ($name:ident) => {
        impl core::fmt::LowerHex for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::LowerHex::fmt(&self.0, f)
            }
        }
        impl core::fmt::UpperHex for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::UpperHex::fmt(&self.0, f)
            }
        }
        impl core::fmt::Binary for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Binary::fmt(&self.0, f)
            }
        }
        impl core::fmt::Octal for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Octal::fmt(&self.0, f)
            }
        }
    };
}
