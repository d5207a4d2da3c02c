//! Errors returned by the fallible entry points.

use core::fmt;

use crate::Backend;

/// Why a conversion did not run.
///
/// ```
/// use vcvt::{Error, F16};
/// let src = [1.0f32; 3];
/// let mut dst = [F16::default(); 2];
/// assert_eq!(
///     vcvt::try_convert_slice(&src, &mut dst),
///     Err(Error::LengthMismatch { src: 3, dst: 2 })
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// Source and destination hold different numbers of elements.
    LengthMismatch {
        /// Elements in the source.
        src: usize,
        /// Elements in the destination.
        dst: usize,
    },
    /// A byte slice is not a whole number of elements.
    ByteLength {
        /// Length of the byte slice.
        bytes: usize,
        /// Size in bytes of one element of the format it holds.
        element_size: usize,
    },
    /// A packed FP4 slice ([`F4E2M1x2`](crate::F4E2M1x2)) does not have the
    /// `values.div_ceil(2)` bytes that the other side's `values` values need.
    PackedLength {
        /// Number of values: the length of the unpacked (wide) side.
        values: usize,
        /// Bytes the packed side has.
        packed: usize,
    },
    /// The requested backend cannot run on this CPU (or is not built for this target).
    BackendUnavailable {
        /// The backend that was asked for.
        backend: Backend,
    },
    /// A buffer of a block conversion ([`crate::block`]) does not have the length that the
    /// shape needs.
    BlockLength {
        /// Which buffer: `"src"`, `"dst"`, `"data"`, `"scales"`, `"scale_inv"`, ...
        buffer: &'static str,
        /// The length it must have (elements of the buffer's type, bytes for byte buffers).
        expected: usize,
        /// The length it has.
        given: usize,
    },
    /// The shape (or a block or tile size) cannot be used with this block format.
    BlockShape {
        /// Rows of the shape.
        rows: usize,
        /// Columns of the shape.
        cols: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::LengthMismatch { src, dst } => write!(
                f,
                "length mismatch: source has {src} elements, destination has {dst}"
            ),
            Error::ByteLength {
                bytes,
                element_size,
            } => write!(
                f,
                "byte slice of length {bytes} is not a whole number of {element_size}-byte elements"
            ),
            Error::PackedLength { values, packed } => write!(
                f,
                "packed length mismatch: {values} fp4 values need {} packed bytes, the packed side has {packed}",
                values.div_ceil(2)
            ),
            Error::BlockLength {
                buffer,
                expected,
                given,
            } => write!(
                f,
                "block conversion: `{buffer}` has length {given}, the shape needs {expected}"
            ),
            Error::BlockShape { rows, cols, reason } => {
                write!(f, "block conversion: shape {rows}x{cols}: {reason}")
            }
            Error::BackendUnavailable { backend } => write!(
                f,
                "backend `{}` is not available on this CPU",
                backend.name()
            ),
        }
    }
}

impl core::error::Error for Error {}

/// The error returned when parsing a [`Backend`] from an unknown name.
///
/// ```
/// assert!("sse9".parse::<vcvt::Backend>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParseBackendError(pub(crate) ());

impl fmt::Display for ParseBackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown vcvt backend name; expected one of: ")?;
        for (i, b) in Backend::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(b.name())?;
        }
        Ok(())
    }
}

impl core::error::Error for ParseBackendError {}
