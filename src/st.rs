//! safetensors interop (feature `safetensors`): the mapping between the crate's
//! `Dtype`s and vcvt's formats, and conversion of a
//! [`TensorView`] (typically of a memory-mapped file) into a typed slice.
//!
//! | safetensors `Dtype` | vcvt type | notes |
//! |---|---|---|
//! | `F32`, `F64` | `f32`, `f64` | |
//! | `F16`, `BF16` | [`F16`], [`BF16`] | |
//! | `F8_E4M3`, `F8_E5M2` | [`F8E4M3`], [`F8E5M2`] | |
//! | `F8_E4M3FNUZ`, `F8_E5M2FNUZ` | [`F8E4M3FNUZ`], [`F8E5M2FNUZ`] | safetensors ≥ 0.8 |
//! | `F8_E8M0` | [`F8E8M0`] | |
//! | `F4` | [`F4E2M1x2`] | two values per byte, element `2j` in the low nibble of byte `j` (PyTorch's `float4_e2m1fn_x2`) |
//! | `F6_E2M3`, `F6_E3M2` | [`F6E2M3`], [`F6E3M2`] | mapped, not converted: safetensors counts 6 bits per value (`n · 6 / 8` bytes), vcvt holds one value per byte |
//!
//! The tensor's bytes are read where they are: they need no alignment (files written by
//! other tools often misalign tensors) and are little-endian, as the format says.
//!
//! ```
//! use safetensors::{Dtype, SafeTensors, serialize, tensor::TensorView};
//! use vcvt::BF16;
//! use vcvt::safetensors::{Format, convert_tensor};
//!
//! // A file with one BF16 tensor of shape [2, 2].
//! let bytes: Vec<u8> = [1.0f32, -2.0, 0.5, 3.0]
//!     .iter()
//!     .flat_map(|&x| BF16::from_f32(x).to_bits().to_le_bytes())
//!     .collect();
//! let view = TensorView::new(Dtype::BF16, vec![2, 2], &bytes)?;
//! let file = serialize([("w", view)], None)?;
//!
//! let st = SafeTensors::deserialize(&file)?;
//! let w = st.tensor("w")?;
//! assert_eq!(Format::from_dtype(w.dtype()), Some(Format::BF16));
//! let mut out = vec![0.0f32; 4];
//! convert_tensor("w", &w, &mut out)?;
//! assert_eq!(out, [1.0, -2.0, 0.5, 3.0]);
//!
//! // Errors name the tensor, its dtype and its shape.
//! let err = convert_tensor("w", &w, &mut out[..3]).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "tensor `w` (BF16 [2, 2]): it holds 4 values, the destination has room for 3"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;
use core::mem::MaybeUninit;
use std::string::{String, ToString};
use std::vec::Vec;

use ::safetensors::Dtype;
use ::safetensors::tensor::TensorView;

use crate::{
    BF16, Element, F4E2M1x2, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F16,
};

/// A vcvt format that a safetensors tensor can hold (see the [module docs](self) for the
/// table).
///
/// ```
/// use safetensors::Dtype;
/// use vcvt::safetensors::Format;
/// assert_eq!(Format::from_dtype(Dtype::F8_E4M3), Some(Format::F8E4M3));
/// assert_eq!(Format::F4E2M1x2.dtype(), Dtype::F4);
/// assert_eq!(Format::from_dtype(Dtype::I32), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[allow(non_camel_case_types)]
pub enum Format {
    /// `f32` (`F32`).
    F32,
    /// `f64` (`F64`).
    F64,
    /// [`F16`] (`F16`).
    F16,
    /// [`BF16`] (`BF16`).
    BF16,
    /// [`F8E4M3`] (`F8_E4M3`).
    F8E4M3,
    /// [`F8E5M2`] (`F8_E5M2`).
    F8E5M2,
    /// [`F8E4M3FNUZ`] (`F8_E4M3FNUZ`).
    F8E4M3FNUZ,
    /// [`F8E5M2FNUZ`] (`F8_E5M2FNUZ`).
    F8E5M2FNUZ,
    /// [`F8E8M0`] (`F8_E8M0`).
    F8E8M0,
    /// [`F6E2M3`] (`F6_E2M3`, packed 6-bit in safetensors: not converted).
    F6E2M3,
    /// [`F6E3M2`] (`F6_E3M2`, packed 6-bit in safetensors: not converted).
    F6E3M2,
    /// [`F4E2M1x2`] (`F4`): two values per byte.
    F4E2M1x2,
}

impl Format {
    /// The format of a safetensors dtype, or `None` for integer, bool and complex dtypes.
    pub fn from_dtype(dtype: Dtype) -> Option<Format> {
        Some(match dtype {
            Dtype::F32 => Format::F32,
            Dtype::F64 => Format::F64,
            Dtype::F16 => Format::F16,
            Dtype::BF16 => Format::BF16,
            Dtype::F8_E4M3 => Format::F8E4M3,
            Dtype::F8_E5M2 => Format::F8E5M2,
            Dtype::F8_E4M3FNUZ => Format::F8E4M3FNUZ,
            Dtype::F8_E5M2FNUZ => Format::F8E5M2FNUZ,
            Dtype::F8_E8M0 => Format::F8E8M0,
            Dtype::F6_E2M3 => Format::F6E2M3,
            Dtype::F6_E3M2 => Format::F6E3M2,
            Dtype::F4 => Format::F4E2M1x2,
            _ => return None,
        })
    }

    /// The safetensors dtype of the format.
    pub const fn dtype(self) -> Dtype {
        match self {
            Format::F32 => Dtype::F32,
            Format::F64 => Dtype::F64,
            Format::F16 => Dtype::F16,
            Format::BF16 => Dtype::BF16,
            Format::F8E4M3 => Dtype::F8_E4M3,
            Format::F8E5M2 => Dtype::F8_E5M2,
            Format::F8E4M3FNUZ => Dtype::F8_E4M3FNUZ,
            Format::F8E5M2FNUZ => Dtype::F8_E5M2FNUZ,
            Format::F8E8M0 => Dtype::F8_E8M0,
            Format::F6E2M3 => Dtype::F6_E2M3,
            Format::F6E3M2 => Dtype::F6_E3M2,
            Format::F4E2M1x2 => Dtype::F4,
        }
    }

    /// Bytes that `n` values take in a safetensors tensor (`None` if `n` values are not a
    /// whole number of bytes, as for an odd count of F4 values).
    pub const fn bytes_for(self, n: usize) -> Option<usize> {
        let bits = match self {
            Format::F32 => 32,
            Format::F64 => 64,
            Format::F16 | Format::BF16 => 16,
            Format::F6E2M3 | Format::F6E3M2 => 6,
            Format::F4E2M1x2 => 4,
            _ => 8,
        };
        match n.checked_mul(bits) {
            Some(b) if b % 8 == 0 => Some(b / 8),
            _ => None,
        }
    }
}

/// A vcvt element type with a safetensors dtype.
///
/// ```
/// use vcvt::safetensors::TensorElement;
/// assert_eq!(<vcvt::BF16 as TensorElement>::DTYPE, safetensors::Dtype::BF16);
/// ```
pub trait TensorElement: Element {
    /// The dtype of a safetensors tensor holding this type.
    const DTYPE: Dtype;
}

macro_rules! tensor_elements {
    ($($t:ty => $d:ident),*) => {$(
        impl TensorElement for $t {
            const DTYPE: Dtype = Dtype::$d;
        }
    )*};
}
tensor_elements!(
    f32 => F32, f64 => F64, F16 => F16, BF16 => BF16, F8E4M3 => F8_E4M3, F8E5M2 => F8_E5M2,
    F8E4M3FNUZ => F8_E4M3FNUZ, F8E5M2FNUZ => F8_E5M2FNUZ, F8E8M0 => F8_E8M0,
    F6E2M3 => F6_E2M3, F6E3M2 => F6_E3M2, F4E2M1x2 => F4
);

/// What went wrong converting a tensor (see [`TensorError`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TensorErrorKind {
    /// The dtype is not a float format vcvt knows (integers, bool, complex).
    UnsupportedDtype,
    /// vcvt has no conversion from the tensor's format to the destination type (for
    /// example f64 → f32: only narrow formats pair with f32 and f64).
    NoConversion {
        /// The destination type's dtype.
        to: Dtype,
    },
    /// The tensor is an FP6 dtype, which safetensors packs at 6 bits per value.
    PackedFp6,
    /// The destination does not have one element per value of the tensor.
    Length {
        /// Values in the tensor.
        values: usize,
        /// Elements in the destination.
        dst: usize,
    },
    /// The tensor's bytes do not match its dtype and shape (a `TensorView` made by hand).
    Bytes {
        /// The bytes the dtype and shape need, if that is a whole number.
        expected: Option<usize>,
        /// The bytes it has.
        given: usize,
    },
}

/// A tensor that could not be converted: its name, dtype and shape, and why.
///
/// ```
/// use safetensors::{Dtype, tensor::TensorView};
/// use vcvt::safetensors::{TensorErrorKind, convert_tensor};
///
/// let bytes = [0u8; 8];
/// let view = TensorView::new(Dtype::I32, vec![2], &bytes)?;
/// let err = convert_tensor("ids", &view, &mut [0.0f32; 2]).unwrap_err();
/// assert_eq!(err.tensor(), "ids");
/// assert_eq!(err.kind(), &TensorErrorKind::UnsupportedDtype);
/// assert_eq!(err.to_string(), "tensor `ids` (I32 [2]): vcvt converts no I32 tensors");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorError {
    tensor: String,
    dtype: Dtype,
    shape: Vec<usize>,
    kind: TensorErrorKind,
}

impl TensorError {
    /// Makes an error about tensor `tensor` of `dtype` and `shape`.
    pub fn new(tensor: &str, dtype: Dtype, shape: &[usize], kind: TensorErrorKind) -> TensorError {
        TensorError {
            tensor: tensor.to_string(),
            dtype,
            shape: shape.to_vec(),
            kind,
        }
    }

    /// The tensor's name.
    pub fn tensor(&self) -> &str {
        &self.tensor
    }

    /// The tensor's dtype.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// The tensor's shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// What went wrong.
    pub fn kind(&self) -> &TensorErrorKind {
        &self.kind
    }
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tensor `{}` ({} {:?}): ",
            self.tensor, self.dtype, self.shape
        )?;
        match &self.kind {
            TensorErrorKind::UnsupportedDtype => {
                write!(f, "vcvt converts no {} tensors", self.dtype)
            }
            TensorErrorKind::NoConversion { to } => {
                write!(f, "vcvt has no conversion from {} to {to}", self.dtype)
            }
            TensorErrorKind::PackedFp6 => f.write_str(
                "safetensors packs FP6 at 6 bits per value; vcvt holds one FP6 value per byte",
            ),
            TensorErrorKind::Length { values, dst } => write!(
                f,
                "it holds {values} values, the destination has room for {dst}"
            ),
            TensorErrorKind::Bytes { expected, given } => match expected {
                Some(e) => write!(
                    f,
                    "its data has {given} bytes, the dtype and shape need {e}"
                ),
                None => write!(
                    f,
                    "its data has {given} bytes, and its values are not a whole number of bytes"
                ),
            },
        }
    }
}

impl std::error::Error for TensorError {}

mod private {
    pub trait Sealed {}
}

/// A type that [`convert_tensor`] can write: `f32`, `f64`, [`F16`], [`BF16`].
///
/// Sealed. Each converts from every float dtype that vcvt has a pair for: the narrow
/// formats (and `F32`/`F64` into [`F16`]/[`BF16`]); a tensor of the destination's own
/// dtype is copied.
pub trait TensorDest: TensorElement + private::Sealed {
    #[doc(hidden)]
    fn from_le(bytes: &[u8]) -> Self;
    #[doc(hidden)]
    fn convert(format: Format, bytes: &[u8], dst: &mut [MaybeUninit<Self>], parallel: bool)
    -> bool;
}

/// Converts `bytes` of format `S` into `dst` (lengths already checked).
fn run<S: crate::ConvertTo<D>, D: Element>(
    bytes: &[u8],
    dst: &mut [MaybeUninit<D>],
    parallel: bool,
) -> bool {
    let r = if parallel {
        par_from_bytes::<S, D>(bytes, dst)
    } else {
        crate::convert_from_bytes_uninit::<S, D>(bytes, dst).map(|_| ())
    };
    r.is_ok()
}

#[cfg(feature = "rayon")]
fn par_from_bytes<S: crate::ConvertTo<D>, D: Element>(
    bytes: &[u8],
    dst: &mut [MaybeUninit<D>],
) -> Result<(), crate::Error> {
    crate::par_convert_from_bytes_uninit::<S, D>(bytes, dst).map(|_| ())
}

#[cfg(not(feature = "rayon"))]
fn par_from_bytes<S: crate::ConvertTo<D>, D: Element>(
    bytes: &[u8],
    dst: &mut [MaybeUninit<D>],
) -> Result<(), crate::Error> {
    crate::convert_from_bytes_uninit::<S, D>(bytes, dst).map(|_| ())
}

/// Copies little-endian `D` values (any alignment) into `dst` (lengths already checked).
fn copy<D: TensorDest>(bytes: &[u8], dst: &mut [MaybeUninit<D>]) {
    for (b, d) in bytes.chunks_exact(size_of::<D>()).zip(dst) {
        d.write(D::from_le(b));
    }
}

macro_rules! tensor_dest {
    ($t:ty, $own:ident, $from_le:expr; $($fmt:ident => $src:ty),*) => {
        impl private::Sealed for $t {}
        impl TensorDest for $t {
            #[inline]
            fn from_le(b: &[u8]) -> Self {
                $from_le(b)
            }
            fn convert(
                format: Format,
                bytes: &[u8],
                dst: &mut [MaybeUninit<Self>],
                parallel: bool,
            ) -> bool {
                match format {
                    Format::$own => {
                        copy::<Self>(bytes, dst);
                        true
                    }
                    $(Format::$fmt => run::<$src, Self>(bytes, dst, parallel),)*
                    _ => false,
                }
            }
        }
    };
}

fn le<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(b);
    a
}

tensor_dest!(f32, F32, |b| f32::from_le_bytes(le(b));
    F16 => F16, BF16 => BF16, F8E4M3 => F8E4M3, F8E5M2 => F8E5M2, F8E4M3FNUZ => F8E4M3FNUZ,
    F8E5M2FNUZ => F8E5M2FNUZ, F8E8M0 => F8E8M0, F4E2M1x2 => F4E2M1x2);
tensor_dest!(f64, F64, |b| f64::from_le_bytes(le(b));
    F16 => F16, BF16 => BF16, F8E4M3 => F8E4M3, F8E5M2 => F8E5M2, F8E4M3FNUZ => F8E4M3FNUZ,
    F8E5M2FNUZ => F8E5M2FNUZ, F8E8M0 => F8E8M0, F4E2M1x2 => F4E2M1x2);
tensor_dest!(F16, F16, |b| F16::from_bits(u16::from_le_bytes(le(b)));
    F32 => f32, F64 => f64, BF16 => BF16, F8E4M3 => F8E4M3, F8E5M2 => F8E5M2,
    F8E4M3FNUZ => F8E4M3FNUZ, F8E5M2FNUZ => F8E5M2FNUZ, F8E8M0 => F8E8M0,
    F4E2M1x2 => F4E2M1x2);
tensor_dest!(BF16, BF16, |b| BF16::from_bits(u16::from_le_bytes(le(b)));
    F32 => f32, F64 => f64, F16 => F16, F8E4M3 => F8E4M3, F8E5M2 => F8E5M2,
    F8E4M3FNUZ => F8E4M3FNUZ, F8E5M2FNUZ => F8E5M2FNUZ, F8E8M0 => F8E8M0,
    F4E2M1x2 => F4E2M1x2);

fn convert_impl<'d, D: TensorDest>(
    name: &str,
    view: &TensorView<'_>,
    dst: &'d mut [MaybeUninit<D>],
    parallel: bool,
) -> Result<&'d mut [D], TensorError> {
    let err = |kind| TensorError::new(name, view.dtype(), view.shape(), kind);
    let format =
        Format::from_dtype(view.dtype()).ok_or_else(|| err(TensorErrorKind::UnsupportedDtype))?;
    if matches!(format, Format::F6E2M3 | Format::F6E3M2) {
        return Err(err(TensorErrorKind::PackedFp6));
    }
    let values = view
        .shape()
        .iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b));
    let expected = values.and_then(|n| format.bytes_for(n));
    let bytes = view.data();
    if expected != Some(bytes.len()) {
        return Err(err(TensorErrorKind::Bytes {
            expected,
            given: bytes.len(),
        }));
    }
    let values = values.unwrap_or(0);
    if values != dst.len() {
        return Err(err(TensorErrorKind::Length {
            values,
            dst: dst.len(),
        }));
    }
    if !D::convert(format, bytes, dst, parallel) {
        return Err(err(TensorErrorKind::NoConversion { to: D::DTYPE }));
    }
    let len = dst.len();
    // SAFETY: `D::convert` succeeded, so it initialised every element of `dst` (each arm
    // writes all `len` values: `copy` one per chunk of the checked byte length, the
    // conversions their whole destination); the pointer and lifetime come from `dst`.
    Ok(unsafe { core::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<D>(), len) })
}

fn as_uninit<T>(s: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and only initialised `T`s are written
    // through the returned slice.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len()) }
}

/// Converts tensor `name` (`view`) into `dst`, one element per value of the tensor.
///
/// The tensor's bytes are converted where they lie (no alignment needed); a tensor of the
/// destination's own dtype is copied.
///
/// # Errors
/// A [`TensorError`] naming the tensor, its dtype and shape when the dtype is not a float
/// format, vcvt has no pair for it and `D`, or `dst` has the wrong length; nothing is
/// written then.
///
/// ```
/// use safetensors::{Dtype, tensor::TensorView};
/// let fp8 = [0x38u8, 0xC0, 0x7E]; // E4M3 1.0, -2.0, 448
/// let view = TensorView::new(Dtype::F8_E4M3, vec![3], &fp8)?;
/// let mut out = [vcvt::BF16::ZERO; 3];
/// vcvt::safetensors::convert_tensor("k_proj.weight", &view, &mut out)?;
/// assert_eq!(out[2].to_f32(), 448.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn convert_tensor<D: TensorDest>(
    name: &str,
    view: &TensorView<'_>,
    dst: &mut [D],
) -> Result<(), TensorError> {
    convert_impl(name, view, as_uninit(dst), false).map(|_| ())
}

/// [`convert_tensor`] into an uninitialised destination, which it initialises and returns.
///
/// # Errors
/// As [`convert_tensor`].
///
/// ```
/// use safetensors::{Dtype, tensor::TensorView};
/// let bytes = [0x00u8, 0x3C]; // F16 1.0
/// let view = TensorView::new(Dtype::F16, vec![1, 1], &bytes)?;
/// let mut v: Vec<f32> = Vec::with_capacity(1);
/// let out = vcvt::safetensors::convert_tensor_uninit("x", &view, v.spare_capacity_mut())?;
/// assert_eq!(out, [1.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn convert_tensor_uninit<'d, D: TensorDest>(
    name: &str,
    view: &TensorView<'_>,
    dst: &'d mut [MaybeUninit<D>],
) -> Result<&'d mut [D], TensorError> {
    convert_impl(name, view, dst, false)
}

/// [`convert_tensor`] into a new `Vec`.
///
/// # Errors
/// As [`convert_tensor`].
///
/// ```
/// use safetensors::{Dtype, tensor::TensorView};
/// let bytes = [0x80u8, 0x3F, 0x00, 0x40]; // BF16 1.0, 2.0
/// let view = TensorView::new(Dtype::BF16, vec![2], &bytes)?;
/// let v: Vec<f64> = vcvt::safetensors::tensor_to_vec("x", &view)?;
/// assert_eq!(v, [1.0, 2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn tensor_to_vec<D: TensorDest>(
    name: &str,
    view: &TensorView<'_>,
) -> Result<Vec<D>, TensorError> {
    to_vec(name, view, false)
}

fn to_vec<D: TensorDest>(
    name: &str,
    view: &TensorView<'_>,
    parallel: bool,
) -> Result<Vec<D>, TensorError> {
    let n = view
        .shape()
        .iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b));
    // A shape whose product overflows fails in `convert_impl` on the byte count.
    let n = n
        .filter(|&n| {
            Some(view.data().len()) == Format::from_dtype(view.dtype()).and_then(|f| f.bytes_for(n))
        })
        .unwrap_or(0);
    let mut v = Vec::with_capacity(n);
    convert_impl(name, view, &mut v.spare_capacity_mut()[..n], parallel)?;
    // SAFETY: `convert_impl` initialised the first `n` elements, within the capacity.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// [`convert_tensor`] on the current rayon pool (feature `rayon`; see
/// [`par_convert_slice`](crate::par_convert_slice)), with the same results.
///
/// # Errors
/// As [`convert_tensor`].
///
/// ```
/// use safetensors::{Dtype, tensor::TensorView};
/// let bytes = vec![0x38u8; 1 << 20]; // E4M3 1.0
/// let view = TensorView::new(Dtype::F8_E4M3, vec![1024, 1024], &bytes)?;
/// let mut out = vec![vcvt::BF16::ZERO; 1 << 20];
/// vcvt::safetensors::par_convert_tensor("w", &view, &mut out)?;
/// assert!(out.iter().all(|x| x.to_f32() == 1.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "rayon")]
pub fn par_convert_tensor<D: TensorDest>(
    name: &str,
    view: &TensorView<'_>,
    dst: &mut [D],
) -> Result<(), TensorError> {
    convert_impl(name, view, as_uninit(dst), true).map(|_| ())
}

/// [`convert_tensor_uninit`] on the current rayon pool (feature `rayon`).
///
/// # Errors
/// As [`convert_tensor`].
///
/// ```
/// use safetensors::{Dtype, tensor::TensorView};
/// let bytes = [0u8; 8];
/// let view = TensorView::new(Dtype::F32, vec![2], &bytes)?;
/// let mut v: Vec<vcvt::F16> = Vec::with_capacity(2);
/// let out = vcvt::safetensors::par_convert_tensor_uninit("b", &view, v.spare_capacity_mut())?;
/// assert_eq!(out.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "rayon")]
pub fn par_convert_tensor_uninit<'d, D: TensorDest>(
    name: &str,
    view: &TensorView<'_>,
    dst: &'d mut [MaybeUninit<D>],
) -> Result<&'d mut [D], TensorError> {
    convert_impl(name, view, dst, true)
}

/// [`tensor_to_vec`] on the current rayon pool (feature `rayon`).
///
/// # Errors
/// As [`convert_tensor`].
///
/// ```
/// use safetensors::{Dtype, tensor::TensorView};
/// let bytes = [0x7Fu8, 0x80]; // E8M0 1.0, 2.0
/// let view = TensorView::new(Dtype::F8_E8M0, vec![2], &bytes)?;
/// let v: Vec<f32> = vcvt::safetensors::par_tensor_to_vec("s", &view)?;
/// assert_eq!(v, [1.0, 2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "rayon")]
pub fn par_tensor_to_vec<D: TensorDest>(
    name: &str,
    view: &TensorView<'_>,
) -> Result<Vec<D>, TensorError> {
    to_vec(name, view, true)
}
