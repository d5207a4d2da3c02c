//! Packed FP4 ([`F4E2M1x2`]): two [`F4E2M1`] values in one byte, element 0 in bits 3..0
//! and element 1 in bits 7..4 (torch `float4_e2m1fn_x2`, safetensors `F4`, gpt-oss
//! `*_blocks`, ModelOpt NVFP4 weights, MLX's packing on little-endian).
//!
//! # The length rule
//!
//! A conversion between a wide slice of `n` values (`f32` or `f64`) and a packed slice
//! requires the packed slice to have exactly `n.div_ceil(2)` bytes, in both directions:
//!
//! * narrowing `n` values writes `n.div_ceil(2)` bytes; when `n` is odd the last byte's high
//!   nibble is written as `+0` (code 0), so the output bytes are fully defined;
//! * widening into `n` values reads `n.div_ceil(2)` bytes; when `n` is odd the last byte's
//!   high nibble is ignored.
//!
//! Why one rule instead of "a packed slice holds `2 × len` values": the value count is
//! always the wide side's length, which the caller states exactly, so odd counts need no
//! padding on the wide side, and every other combination (say, a byte count passed where a
//! value count was meant, giving half or double the length) is an
//! [`Error::PackedLength`](crate::Error::PackedLength) naming both lengths, raised before
//! anything is written.
//!
//! The value rules are [`F4E2M1`]'s: round to nearest even, overflow, ±Inf and NaN saturate.

use crate::F4E2M1;
use crate::codec::Code;

/// Two FP4 E2M1 values packed in one byte: element 0 in the low nibble, element 1 in the
/// high nibble (torch `float4_e2m1fn_x2`, safetensors `F4`).
///
/// A slice of `F4E2M1x2` converts to and from `f32` and `f64` slices whose length is the
/// number of values: the packed slice must have `values.div_ceil(2)` bytes (see the module
/// docs for why), and an odd count leaves the last high nibble `+0` when narrowing.
///
/// ```
/// use vcvt::{F4E2M1, F4E2M1x2};
/// let src = [0.5f32, -6.0, 2.9];
/// let mut packed = [F4E2M1x2::ZERO; 2]; // 3 values need 2 bytes
/// vcvt::convert_slice(&src, &mut packed);
/// assert_eq!(packed[0].to_bits(), 0xF1); // 0.5 = 0x1 (low), -6 = 0xF (high)
/// assert_eq!(packed[1].to_bits(), 0x05); // 2.9 rounds to 3 = 0x5; the spare nibble is +0
/// assert_eq!(packed[1].lo(), F4E2M1::from_f32(3.0));
///
/// let mut back = [0.0f32; 3];
/// vcvt::convert_slice(&packed, &mut back);
/// assert_eq!(back, [0.5, -6.0, 3.0]);
///
/// // A byte count where the value count was meant is an error, not half a conversion.
/// assert!(vcvt::try_convert_slice(&packed, &mut [0.0f32; 2]).is_err());
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, Default)]
pub struct F4E2M1x2(u8);

// SAFETY: a `repr(transparent)` wrapper of `u8`: no padding, every bit pattern is two valid
// FP4 codes, and zero is valid.
unsafe impl bytemuck::Zeroable for F4E2M1x2 {}
// SAFETY: as above; `Copy + 'static`, no interior mutability.
unsafe impl bytemuck::Pod for F4E2M1x2 {}

impl F4E2M1x2 {
    /// Two positive zeros.
    pub const ZERO: F4E2M1x2 = F4E2M1x2(0);
    /// The overflow policy of narrowing (FP4 always saturates; listed for symmetry with the
    /// other element types).
    pub const DEFAULT_OVERFLOW: crate::Overflow = crate::Overflow::Saturate;

    /// Packs two values: `lo` is element 0 (bits 3..0), `hi` element 1 (bits 7..4).
    ///
    /// ```
    /// use vcvt::{F4E2M1, F4E2M1x2};
    /// let p = F4E2M1x2::new(F4E2M1::ONE, F4E2M1::MIN);
    /// assert_eq!(p.to_bits(), 0xF2);
    /// ```
    #[inline]
    pub const fn new(lo: F4E2M1, hi: F4E2M1) -> F4E2M1x2 {
        F4E2M1x2((lo.to_bits() & 0xF) | (hi.to_bits() << 4))
    }

    /// Builds a value from its byte.
    #[inline]
    pub const fn from_bits(bits: u8) -> F4E2M1x2 {
        F4E2M1x2(bits)
    }

    /// The byte.
    #[inline]
    pub const fn to_bits(self) -> u8 {
        self.0
    }

    /// Element 0 (the low nibble).
    #[inline]
    pub const fn lo(self) -> F4E2M1 {
        F4E2M1::from_bits(self.0 & 0xF)
    }

    /// Element 1 (the high nibble).
    #[inline]
    pub const fn hi(self) -> F4E2M1 {
        F4E2M1::from_bits(self.0 >> 4)
    }

    /// Rounds two `f32` to FP4 and packs them (`[element 0, element 1]`).
    ///
    /// ```
    /// assert_eq!(vcvt::F4E2M1x2::from_f32x2([1.0, 4.0]).to_f32x2(), [1.0, 4.0]);
    /// ```
    #[inline]
    pub fn from_f32x2(v: [f32; 2]) -> F4E2M1x2 {
        F4E2M1x2::new(F4E2M1::from_f32(v[0]), F4E2M1::from_f32(v[1]))
    }

    /// Both values, widened exactly (`[element 0, element 1]`).
    #[inline]
    pub fn to_f32x2(self) -> [f32; 2] {
        [self.lo().to_f32(), self.hi().to_f32()]
    }
}

impl Code for F4E2M1x2 {
    #[inline(always)]
    fn from_code(c: u32) -> Self {
        F4E2M1x2(c as u8)
    }
    #[inline(always)]
    fn code(self) -> u32 {
        u32::from(self.0)
    }
}

impl PartialEq for F4E2M1x2 {
    /// Element-wise IEEE equality (`-0 == +0`).
    fn eq(&self, other: &Self) -> bool {
        self.lo() == other.lo() && self.hi() == other.hi()
    }
}

impl core::fmt::Debug for F4E2M1x2 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("F4E2M1x2")
            .field(&self.lo())
            .field(&self.hi())
            .finish()
    }
}

impl From<[F4E2M1; 2]> for F4E2M1x2 {
    fn from(v: [F4E2M1; 2]) -> F4E2M1x2 {
        F4E2M1x2::new(v[0], v[1])
    }
}

impl From<F4E2M1x2> for [F4E2M1; 2] {
    fn from(p: F4E2M1x2) -> [F4E2M1; 2] {
        [p.lo(), p.hi()]
    }
}

bits_fmt!(F4E2M1x2);
