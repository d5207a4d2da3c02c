//! Conversion options: the overflow policy.

/// What narrowing does with a value whose rounded magnitude exceeds the format's largest
/// finite value, and with an infinite source.
///
/// Overflow is decided on the *rounded* value: for [`F8E4M3`](crate::F8E4M3), 464 rounds to
/// 448 (its maximum) and does not overflow; only values above 464 do.
///
/// | policy | finite overflow | ±Inf source | NaN source |
/// |---|---|---|---|
/// | `Saturate` | ±MAX | ±MAX | NaN |
/// | `NonSaturating` | ±Inf (NaN for E4M3) | ±Inf (NaN for E4M3) | NaN |
///
/// Defaults: [`F16`](crate::F16) and [`BF16`](crate::BF16) use `NonSaturating` (IEEE 754),
/// [`F8E4M3`](crate::F8E4M3) and [`F8E5M2`](crate::F8E5M2) use `Saturate` (the OCP
/// saturating mode, CUDA's `satfinite`).
///
/// ```
/// use vcvt::{F16, F8E5M2, Overflow};
/// assert_eq!(F16::from_f32_with(1.0e6, Overflow::Saturate), F16::MAX);
/// assert!(F16::from_f32_with(1.0e6, Overflow::NonSaturating).is_infinite());
/// assert_eq!(F8E5M2::from_f32(f32::INFINITY), F8E5M2::MAX); // fp8 saturates by default
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Overflow {
    /// Finite overflow and ±Inf become ±MAX; NaN stays NaN (OCP saturating mode).
    Saturate,
    /// Overflow becomes ±Inf, or NaN for E4M3, which has no infinity (IEEE 754; what
    /// ml_dtypes and PyTorch do).
    NonSaturating,
}

/// Options for one conversion call. A small `Copy` value, passed by value.
///
/// [`Options::new()`] (also `Options::default()`) means "each format's default policy".
///
/// ```
/// use vcvt::{Options, Overflow, F8E4M3};
/// let src = [500.0f32, -1.0];
/// let mut dst = [F8E4M3::default(); 2];
/// vcvt::convert_slice_with(&src, &mut dst, Options::new().overflow(Overflow::NonSaturating));
/// assert!(dst[0].is_nan());
/// assert_eq!(dst[1].to_f32(), -1.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    overflow: Option<Overflow>,
}

impl Options {
    /// Options that use each destination format's default overflow policy.
    pub const fn new() -> Self {
        Options { overflow: None }
    }

    /// Sets the overflow policy used when narrowing (ignored when widening).
    #[must_use]
    pub const fn overflow(mut self, overflow: Overflow) -> Self {
        self.overflow = Some(overflow);
        self
    }

    /// The overflow policy chosen with [`Options::overflow`], or `None` for the default.
    pub const fn overflow_policy(&self) -> Option<Overflow> {
        self.overflow
    }
}
