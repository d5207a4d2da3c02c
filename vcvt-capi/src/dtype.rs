//! The element types (`vcvt_dtype`): values, names, sizes.

use core::ffi::{c_char, c_int};

use crate::status::{VCVT_E_DTYPE, VCVT_E_NULL, VCVT_E_OVERFLOW, VCVT_OK, fail, guard};

// --- dtypes (`vcvt_dtype`) -----------------------------------------------------------------

/// `float` (IEEE binary32).
pub const VCVT_F32: c_int = 0;
/// `double` (IEEE binary64).
pub const VCVT_F64: c_int = 1;
/// IEEE binary16.
pub const VCVT_F16: c_int = 2;
/// bfloat16.
pub const VCVT_BF16: c_int = 3;
/// OCP fp8 E4M3 (`float8_e4m3fn`).
pub const VCVT_F8E4M3: c_int = 4;
/// OCP fp8 E5M2.
pub const VCVT_F8E5M2: c_int = 5;
/// fp8 E4M3 fnuz.
pub const VCVT_F8E4M3FNUZ: c_int = 6;
/// fp8 E5M2 fnuz.
pub const VCVT_F8E5M2FNUZ: c_int = 7;
/// MX fp6 E2M3, one code per byte (low 6 bits).
pub const VCVT_F6E2M3: c_int = 8;
/// MX fp6 E3M2, one code per byte (low 6 bits).
pub const VCVT_F6E3M2: c_int = 9;
/// MX fp4 E2M1, one code per byte (low 4 bits).
pub const VCVT_F4E2M1: c_int = 10;
/// MX fp4 E2M1, two codes per byte (value `2j` in the low nibble of byte `j`).
pub const VCVT_F4E2M1X2: c_int = 11;
/// E8M0 (MX scale): `2^(c - 127)`, `0xFF` NaN.
pub const VCVT_F8E8M0: c_int = 12;
/// fp8 E3M4 (`float8_e3m4`): IEEE-style, bias 3, max 15.5, Inf and NaN.
pub const VCVT_F8E3M4: c_int = 13;
/// fp8 E4M3 IEEE-style (`float8_e4m3`): bias 7, max 240, Inf and NaN.
pub const VCVT_F8E4M3IEEE: c_int = 14;
/// fp8 E4M3 with bias 11 (`float8_e4m3b11fnuz`): max 30, NaN `0x80` only, no −0, no Inf.
pub const VCVT_F8E4M3B11FNUZ: c_int = 15;
/// Unsigned fp8 E5M3 (`float8_e5m3fnu`): 0 to 114688, NaN `0xFF` only, no sign, no Inf.
pub const VCVT_F8E5M3FNU: c_int = 16;
/// Number of dtypes: valid values are `0..VCVT_DTYPE_COUNT`.
pub const VCVT_DTYPE_COUNT: c_int = 17;

/// The dtypes' names, indexed by value (NUL-terminated for C).
const DTYPE_NAMES: [&str; VCVT_DTYPE_COUNT as usize] = [
    "f32\0",
    "f64\0",
    "f16\0",
    "bf16\0",
    "f8e4m3\0",
    "f8e5m2\0",
    "f8e4m3fnuz\0",
    "f8e5m2fnuz\0",
    "f6e2m3\0",
    "f6e3m2\0",
    "f4e2m1\0",
    "f4e2m1x2\0",
    "f8e8m0\0",
    "f8e3m4\0",
    "f8e4m3ieee\0",
    "f8e4m3b11fnuz\0",
    "f8e5m3fnu\0",
];

/// Bytes of one element of each dtype (for `F4E2M1X2`, of one byte holding two values).
const DTYPE_SIZES: [usize; VCVT_DTYPE_COUNT as usize] =
    [4, 8, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1];

/// The dtype index of `d`, if `d` is a dtype.
#[inline(always)]
pub(crate) fn dtype_index(d: c_int) -> Option<usize> {
    if (0..VCVT_DTYPE_COUNT).contains(&d) {
        Some(d as usize)
    } else {
        None
    }
}

/// Bytes that `n` values of dtype index `d` take (packed FP4: `ceil(n / 2)`), or `None` if
/// that does not fit in `isize` (no C object is larger).
#[inline(always)]
pub(crate) fn bytes_of(d: usize, n: usize) -> Option<usize> {
    let b = if d == VCVT_F4E2M1X2 as usize {
        n.div_ceil(2)
    } else {
        n.checked_mul(DTYPE_SIZES[d])?
    };
    if b > isize::MAX as usize {
        None
    } else {
        Some(b)
    }
}

/// The name of `dtype` (`"f32"`, `"bf16"`, `"f8e4m3"`, ...), or NULL for a value that is not
/// a dtype.
#[unsafe(no_mangle)]
pub extern "C" fn vcvt_dtype_name(dtype: c_int) -> *const c_char {
    match dtype_index(dtype) {
        Some(i) => DTYPE_NAMES[i].as_ptr().cast(),
        None => core::ptr::null(),
    }
}

/// Stores in `*out` the bytes that `n` values of `dtype` take.
///
/// # Safety
/// `out` is NULL or valid for writing one `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_dtype_bytes(dtype: c_int, n: usize, out: *mut usize) -> c_int {
    guard(|| {
        let Some(d) = dtype_index(dtype) else {
            return fail(
                VCVT_E_DTYPE,
                format_args!("vcvt_dtype_bytes: {dtype} is not a vcvt_dtype"),
            );
        };
        if out.is_null() {
            return fail(VCVT_E_NULL, format_args!("vcvt_dtype_bytes: `out` is NULL"));
        }
        let Some(b) = bytes_of(d, n) else {
            return fail(
                VCVT_E_OVERFLOW,
                format_args!(
                    "vcvt_dtype_bytes: {n} values of {} take more bytes than a C object can hold",
                    name(d)
                ),
            );
        };
        // SAFETY: `out` is not NULL, and the caller guarantees it is valid for one write.
        unsafe { out.write_unaligned(b) };
        VCVT_OK
    })
}

/// The dtype's name without the NUL, for messages.
pub(crate) fn name(d: usize) -> &'static str {
    let n = DTYPE_NAMES[d];
    &n[..n.len() - 1]
}
