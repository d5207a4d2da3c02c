//! Conversion options: the overflow policy and the NaN policy.

/// What narrowing does with a value whose rounded magnitude exceeds the format's largest
/// finite value, and with an infinite source.
///
/// Overflow is decided on the *rounded* value: for [`F8E4M3`](crate::F8E4M3), 464 rounds to
/// 448 (its maximum) and does not overflow; only values above 464 do.
///
/// | policy | finite overflow | ±Inf source |
/// |---|---|---|
/// | `Saturate` | ±MAX | ±MAX |
/// | `NonSaturating` | ±Inf, or the format's NaN if it has no Inf, or ±MAX if it has neither | the same |
///
/// Formats without Inf or NaN ([`F6E2M3`](crate::F6E2M3), [`F6E3M2`](crate::F6E3M2),
/// [`F4E2M1`](crate::F4E2M1)) always saturate. [`F8E8M0`](crate::F8E8M0) has no sign: its
/// overflow follows the policy (MAX or its NaN), while ±Inf always gives its NaN (see its
/// docs). What NaN *sources* become is the [`NanPolicy`]'s business.
///
/// Defaults: [`F16`](crate::F16) and [`BF16`](crate::BF16) use `NonSaturating` (IEEE 754);
/// every 8-bit and smaller format uses `Saturate` (the OCP saturating mode, CUDA's
/// `satfinite`).
///
/// ```
/// use vcvt::{F16, F8E5M2, Overflow};
/// assert_eq!(F16::from_f32_with(1.0e6, Overflow::Saturate), F16::MAX);
/// assert!(F16::from_f32_with(1.0e6, Overflow::NonSaturating).is_infinite());
/// assert_eq!(F8E5M2::from_f32(f32::INFINITY), F8E5M2::MAX); // fp8 saturates by default
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Overflow {
    /// Finite overflow and ±Inf become ±MAX (OCP saturating mode).
    Saturate,
    /// Overflow becomes ±Inf, or NaN for formats without Inf (IEEE 754; what ml_dtypes and
    /// PyTorch do).
    NonSaturating,
}

/// What narrowing does with a NaN source. Widening ignores it: a NaN code always widens as
/// its format's contract row says.
///
/// | policy | F16, BF16 | F8E4M3, F8E5M2, F8E3M4, F8E4M3IEEE | F8E4M3FNUZ, F8E5M2FNUZ, F8E4M3B11FNUZ | F8E8M0, F8E5M3FNU | F6E2M3, F6E3M2, F4E2M1 |
/// |---|---|---|---|---|---|
/// | `Preserve` (default) | sign, top payload bits, quiet bit | `0x7F`/`0x7E`/`0x78`/`0x7C` with the sign | `0x80` | `0xFF` | ±MAX (no NaN code) |
/// | `Canonical` | `0x7E00`/`0x7FC0` with the sign | the same as `Preserve` | `0x80` | `0xFF` | ±MAX |
/// | `ToMax` | ±MAX | ±MAX | ±MAX | MAX (`0xFE`) | ±MAX |
///
/// The sign of a result is the sign bit of the NaN source, where the format has a sign.
/// Formats without a NaN code have one answer under every policy: ±MAX with the NaN's sign,
/// as Triton's MX quantizer (gpt-oss, Hugging Face, vLLM) writes, so that a NaN stays
/// conspicuous instead of becoming a plausible small value.
///
/// ```
/// use vcvt::{F16, F8E4M3, NanPolicy, Options};
/// let nan = f32::from_bits(0xFFC0_1234); // a negative NaN with a payload
/// let canonical = Options::new().nan(NanPolicy::Canonical);
/// assert_eq!(F16::from_f32_opts(nan, canonical).to_bits(), 0xFE00);
/// assert_eq!(F16::from_f32(nan).to_bits(), 0xFE00 | (0x1234 >> 13)); // Preserve
/// let mlx = Options::new().nan(NanPolicy::ToMax);
/// assert_eq!(F8E4M3::from_f32_opts(f32::NAN, mlx).to_bits(), 0x7E); // what MLX's to_fp8 writes
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NanPolicy {
    /// Keep what the format can keep: the sign and the top payload bits with the quiet bit
    /// set (F16, BF16), or the format's NaN code (with the sign where the format has one).
    #[default]
    Preserve,
    /// One quiet NaN per format: payload dropped, sign kept where the format has one (the
    /// rule of Go's `float16` and of Apple GPUs).
    Canonical,
    /// NaN becomes ±MAX with the NaN's sign (what MLX's `to_fp8` writes for E4M3).
    ToMax,
}

/// Options for one conversion call. A small `Copy` value, passed by value.
///
/// [`Options::new()`] (also `Options::default()`) means "each format's default overflow
/// policy and [`NanPolicy::Preserve`]".
///
/// ```
/// use vcvt::{F8E4M3, NanPolicy, Options, Overflow};
/// let src = [500.0f32, -1.0, f32::NAN];
/// let mut dst = [F8E4M3::default(); 3];
/// let opts = Options::new().overflow(Overflow::NonSaturating).nan(NanPolicy::ToMax);
/// vcvt::convert_slice_with(&src, &mut dst, opts);
/// assert!(dst[0].is_nan()); // overflow without saturation: E4M3 has no Inf
/// assert_eq!(dst[1].to_f32(), -1.0);
/// assert_eq!(dst[2], F8E4M3::MAX); // the NaN source, under `ToMax`
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Options {
    overflow: Option<Overflow>,
    nan: NanPolicy,
    /// The length of the whole conversion a call is a part of (0: the call is the whole
    /// conversion), which decides whether it streams (`src/stream.rs`): the parallel entry
    /// points set it on the calls of their chunks. Not an option of the user's; it does not
    /// change a result.
    whole: StreamLen,
}

/// [`Options`]' `whole`: equal, hashed and printed as nothing, so that it is invisible in
/// the public type's `PartialEq`, `Hash` and `Debug`.
#[derive(Clone, Copy, Default)]
struct StreamLen(usize);

impl PartialEq for StreamLen {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for StreamLen {}

impl core::hash::Hash for StreamLen {
    fn hash<H: core::hash::Hasher>(&self, _: &mut H) {}
}

impl core::fmt::Debug for Options {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Options")
            .field("overflow", &self.overflow)
            .field("nan", &self.nan)
            .finish()
    }
}

impl Options {
    /// Options that use each destination format's default overflow policy and
    /// [`NanPolicy::Preserve`].
    pub const fn new() -> Self {
        Options {
            overflow: None,
            nan: NanPolicy::Preserve,
            whole: StreamLen(0),
        }
    }

    /// Sets the overflow policy used when narrowing (ignored when widening).
    #[must_use]
    pub const fn overflow(mut self, overflow: Overflow) -> Self {
        self.overflow = Some(overflow);
        self
    }

    /// Sets the NaN policy used when narrowing (ignored when widening).
    #[must_use]
    pub const fn nan(mut self, nan: NanPolicy) -> Self {
        self.nan = nan;
        self
    }

    /// The overflow policy chosen with [`Options::overflow`], or `None` for the default.
    pub const fn overflow_policy(&self) -> Option<Overflow> {
        self.overflow
    }

    /// The NaN policy ([`NanPolicy::Preserve`] unless set with [`Options::nan`]).
    pub const fn nan_policy(&self) -> NanPolicy {
        self.nan
    }

    /// These options for one part of a conversion of `whole` values (the parallel entry
    /// points' chunks), so that the part streams when the whole would.
    #[cfg(feature = "rayon")]
    pub(crate) const fn part_of(mut self, whole: usize) -> Self {
        self.whole = StreamLen(whole);
        self
    }

    /// The length that decides whether a call of `len` values streams: the whole
    /// conversion's, if the call is a part of one.
    #[inline(always)]
    pub(crate) const fn stream_len(&self, len: usize) -> usize {
        if self.whole.0 > len {
            self.whole.0
        } else {
            len
        }
    }

    /// The resolved policy for a destination whose default overflow policy is `default`.
    #[inline(always)]
    pub(crate) const fn resolve(self, default: Overflow) -> Policy {
        Policy {
            overflow: match self.overflow {
                Some(o) => o,
                None => default,
            },
            nan: self.nan,
        }
    }
}

/// What a kernel receives: the overflow policy resolved against the format's default, and
/// the NaN policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Policy {
    pub(crate) overflow: Overflow,
    pub(crate) nan: NanPolicy,
}

impl Policy {
    /// A policy with the given overflow rule and [`NanPolicy::Preserve`].
    #[inline(always)]
    pub(crate) const fn overflow(overflow: Overflow) -> Policy {
        Policy {
            overflow,
            nan: NanPolicy::Preserve,
        }
    }
}
