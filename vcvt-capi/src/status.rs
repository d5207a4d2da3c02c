//! Return codes, their texts, the per-thread message of the last failure, and the guard that
//! keeps panics from unwinding into C.

use core::cell::RefCell;
use core::ffi::{c_char, c_int};
use core::fmt::{self, Write as _};
use std::panic::{AssertUnwindSafe, catch_unwind};

use vcvt_rs::Error;

/// Success.
pub const VCVT_OK: c_int = 0;
/// A pointer argument is NULL where the call needs memory behind it.
pub const VCVT_E_NULL: c_int = -1;
/// A `vcvt_dtype` argument is not one of the `VCVT_*` dtype constants.
pub const VCVT_E_DTYPE: c_int = -2;
/// The combination is not supported: a dtype pair without a conversion, a dtype that the
/// function does not take, or a profile/layout that is not defined for the element.
pub const VCVT_E_UNSUPPORTED: c_int = -3;
/// A size product (values × element size, rows × cols, ...) does not fit in `size_t` or
/// exceeds the largest C object (`PTRDIFF_MAX` bytes).
pub const VCVT_E_OVERFLOW: c_int = -4;
/// A buffer length does not match what the shape needs.
pub const VCVT_E_LENGTH: c_int = -5;
/// The shape cannot be used with the format (e.g. `cols` not a multiple of the ggml block,
/// a zero tile dimension).
pub const VCVT_E_SHAPE: c_int = -6;
/// An enumeration argument or field (overflow, NaN policy, backend, element, profile,
/// layout) is not one of its constants.
pub const VCVT_E_INVALID: c_int = -7;
/// The requested backend is not built for this target or cannot run on this CPU.
pub const VCVT_E_BACKEND: c_int = -8;
/// The environment variable `VCVT_BACKEND` names an unknown backend or one this CPU cannot
/// run (only calls with `VCVT_BACKEND_AUTO` read it).
pub const VCVT_E_BACKEND_ENV: c_int = -9;
/// Source and destination memory overlap.
pub const VCVT_E_OVERLAP: c_int = -10;
/// An internal error (a Rust panic, caught at the boundary). Not expected; please report it.
pub const VCVT_E_INTERNAL: c_int = -11;
/// Memory for the aligned copy of an unaligned buffer (block functions only) could not be
/// allocated.
pub const VCVT_E_NOMEM: c_int = -12;

/// The texts of the codes `0, -1, -2, ...` (NUL-terminated).
const TEXTS: [&str; 13] = [
    "success\0",
    "a required pointer is NULL\0",
    "unknown vcvt_dtype value\0",
    "unsupported combination of dtypes, profile or layout\0",
    "a size computation overflows size_t or exceeds the largest object\0",
    "a buffer length does not match what the shape needs\0",
    "the shape cannot be used with this format\0",
    "an enumeration argument is not one of its constants\0",
    "the requested backend is not available on this CPU or target\0",
    "the VCVT_BACKEND environment variable names an unknown or unavailable backend\0",
    "source and destination overlap\0",
    "internal error (caught panic)\0",
    "out of memory for the aligned copy of an unaligned buffer\0",
];

/// A static, NUL-terminated description of `code` (`"unknown vcvt error code"` for a value
/// that is not a code). Never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn vcvt_strerror(code: c_int) -> *const c_char {
    let text = if code <= 0 && code > -(TEXTS.len() as c_int) {
        TEXTS[(-code) as usize]
    } else {
        "unknown vcvt error code\0"
    };
    text.as_ptr().cast()
}

std::thread_local! {
    /// The message of this thread's last failed call, NUL-terminated (empty before any).
    static LAST: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The detailed message of the last call that failed **on this thread** (it names the
/// function, the argument and the sizes involved), or `""` if none has. Valid until the next
/// failing call on this thread; successful calls leave it unchanged. Never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn vcvt_last_error_message() -> *const c_char {
    let p = LAST.try_with(|m| {
        let m = m.borrow();
        if m.is_empty() {
            core::ptr::null()
        } else {
            m.as_ptr()
        }
    });
    match p {
        Ok(p) if !p.is_null() => p.cast(),
        // Before any failure, or while the thread is being torn down.
        _ => c"".as_ptr(),
    }
}

/// Records `msg` as this thread's last message and returns `code`.
#[cold]
#[inline(never)]
pub(crate) fn fail(code: c_int, msg: fmt::Arguments<'_>) -> c_int {
    let _ = LAST.try_with(|m| {
        let mut s = String::new();
        let _ = s.write_fmt(msg);
        let mut v = s.into_bytes();
        // A message never holds a NUL of its own (they are made from names and numbers);
        // cut at one anyway so that C sees the whole text up to it.
        if let Some(i) = v.iter().position(|&b| b == 0) {
            v.truncate(i);
        }
        v.push(0);
        if let Ok(mut m) = m.try_borrow_mut() {
            *m = v;
        }
    });
    code
}

/// The code of a library error, with its message recorded for `func`.
#[cold]
#[inline(never)]
pub(crate) fn from_error(func: &str, e: Error) -> c_int {
    let code = match e {
        Error::LengthMismatch { .. } | Error::PackedLength { .. } | Error::ByteLength { .. } => {
            VCVT_E_LENGTH
        }
        Error::BlockLength { .. } => VCVT_E_LENGTH,
        Error::BackendUnavailable { .. } => VCVT_E_BACKEND,
        Error::BlockShape { reason, .. } => {
            if reason.contains("usize") {
                VCVT_E_OVERFLOW
            } else if reason.contains(" only") {
                // "the Ggml profile is defined for E2M1 (MXFP4) only", "... holds E2M1 only"
                VCVT_E_UNSUPPORTED
            } else {
                VCVT_E_SHAPE
            }
        }
        _ => VCVT_E_INTERNAL,
    };
    fail(code, format_args!("{func}: {e}"))
}

/// Runs `f`, turning a panic into [`VCVT_E_INTERNAL`] so that nothing unwinds into C.
#[inline(always)]
pub(crate) fn guard(f: impl FnOnce() -> c_int) -> c_int {
    match guard_result(f) {
        Ok(code) | Err(code) => code,
    }
}

/// Runs `f`; a panic becomes `Err(VCVT_E_INTERNAL)` (message recorded).
#[inline(always)]
pub(crate) fn guard_result<R>(f: impl FnOnce() -> R) -> Result<R, c_int> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panicked(&*p))
}

#[cold]
#[inline(never)]
fn panicked(p: &(dyn core::any::Any + Send)) -> c_int {
    let what = p
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| p.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    fail(
        VCVT_E_INTERNAL,
        format_args!("vcvt: internal error: {what}"),
    )
}
