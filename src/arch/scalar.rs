//! The portable Scalar backend: the codec of [`crate::codec`] applied element by element.
//! It runs everywhere and is the reference every other backend is compared with.
//!
//! Reads and writes are unaligned because the byte-slice API hands kernels pointers into
//! arbitrary `&[u8]`.

use super::{Kernels, RawKernel};
use crate::codec::{self, Code, Format};
use crate::element::{narrow_index, widen_index};
use crate::{BF16, F8E4M3, F8E5M2, F16, Overflow};

/// Narrows `len` f32 values to format `F`.
///
/// # Safety
/// See [`RawKernel`].
pub(crate) unsafe fn f32_to_narrow<F: Format + Code>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    overflow: Overflow,
) {
    let (src, dst) = (src.cast::<u32>(), dst.cast::<F>());
    // Branch on the policy once, so each loop has a constant one.
    match overflow {
        Overflow::Saturate => {
            for i in 0..len {
                // SAFETY: i < len, and the caller guarantees `len` readable/writable elements.
                unsafe {
                    let x = src.add(i).read_unaligned();
                    let c = codec::narrow_f32::<F>(x, Overflow::Saturate);
                    dst.add(i).write_unaligned(F::from_code(c));
                }
            }
        }
        Overflow::NonSaturating => {
            for i in 0..len {
                // SAFETY: as above.
                unsafe {
                    let x = src.add(i).read_unaligned();
                    let c = codec::narrow_f32::<F>(x, Overflow::NonSaturating);
                    dst.add(i).write_unaligned(F::from_code(c));
                }
            }
        }
    }
}

/// Narrows `len` f64 values to format `F` with a single rounding.
///
/// # Safety
/// See [`RawKernel`].
pub(crate) unsafe fn f64_to_narrow<F: Format + Code>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    overflow: Overflow,
) {
    let (src, dst) = (src.cast::<u64>(), dst.cast::<F>());
    match overflow {
        Overflow::Saturate => {
            for i in 0..len {
                // SAFETY: i < len, and the caller guarantees `len` readable/writable elements.
                unsafe {
                    let x = src.add(i).read_unaligned();
                    let c = codec::narrow_f64::<F>(x, Overflow::Saturate);
                    dst.add(i).write_unaligned(F::from_code(c));
                }
            }
        }
        Overflow::NonSaturating => {
            for i in 0..len {
                // SAFETY: as above.
                unsafe {
                    let x = src.add(i).read_unaligned();
                    let c = codec::narrow_f64::<F>(x, Overflow::NonSaturating);
                    dst.add(i).write_unaligned(F::from_code(c));
                }
            }
        }
    }
}

/// Widens `len` values of format `F` to f32.
///
/// # Safety
/// See [`RawKernel`].
pub(crate) unsafe fn narrow_to_f32<F: Format + Code>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    _overflow: Overflow,
) {
    let (src, dst) = (src.cast::<F>(), dst.cast::<u32>());
    for i in 0..len {
        // SAFETY: i < len, and the caller guarantees `len` readable/writable elements.
        unsafe {
            let c = src.add(i).read_unaligned().code();
            dst.add(i).write_unaligned(codec::widen_f32::<F>(c));
        }
    }
}

/// Widens `len` values of format `F` to f64.
///
/// # Safety
/// See [`RawKernel`].
pub(crate) unsafe fn narrow_to_f64<F: Format + Code>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    _overflow: Overflow,
) {
    let (src, dst) = (src.cast::<F>(), dst.cast::<u64>());
    for i in 0..len {
        // SAFETY: i < len, and the caller guarantees `len` readable/writable elements.
        unsafe {
            let c = src.add(i).read_unaligned().code();
            let w = codec::f32_bits_to_f64_bits(codec::widen_f32::<F>(c));
            dst.add(i).write_unaligned(w);
        }
    }
}

/// Builds the table of a backend whose kernels are generic over the format.
macro_rules! kernel_table {
    ($f32_to:ident, $f64_to:ident, $to_f32:ident, $to_f64:ident) => {{
        let mut t: [RawKernel; crate::element::PAIRS] =
            [$f32_to::<F16> as RawKernel; crate::element::PAIRS];
        t[narrow_index(0, 0)] = $f32_to::<F16>;
        t[narrow_index(0, 1)] = $f32_to::<BF16>;
        t[narrow_index(0, 2)] = $f32_to::<F8E4M3>;
        t[narrow_index(0, 3)] = $f32_to::<F8E5M2>;
        t[narrow_index(1, 0)] = $f64_to::<F16>;
        t[narrow_index(1, 1)] = $f64_to::<BF16>;
        t[narrow_index(1, 2)] = $f64_to::<F8E4M3>;
        t[narrow_index(1, 3)] = $f64_to::<F8E5M2>;
        t[widen_index(0, 0)] = $to_f32::<F16>;
        t[widen_index(0, 1)] = $to_f32::<BF16>;
        t[widen_index(0, 2)] = $to_f32::<F8E4M3>;
        t[widen_index(0, 3)] = $to_f32::<F8E5M2>;
        t[widen_index(1, 0)] = $to_f64::<F16>;
        t[widen_index(1, 1)] = $to_f64::<BF16>;
        t[widen_index(1, 2)] = $to_f64::<F8E4M3>;
        t[widen_index(1, 3)] = $to_f64::<F8E5M2>;
        Kernels(t)
    }};
}

/// The Scalar backend's kernels.
pub(crate) static KERNELS: Kernels =
    kernel_table!(f32_to_narrow, f64_to_narrow, narrow_to_f32, narrow_to_f64);
