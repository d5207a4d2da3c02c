//! Backends (`vcvt_backend`): query, names, and the per-call override.

use core::ffi::{CStr, c_char, c_int};
use core::sync::atomic::{AtomicU8, Ordering};

use vcvt_rs::Backend;

use crate::status::{VCVT_E_BACKEND, VCVT_E_BACKEND_ENV, VCVT_E_INVALID, VCVT_E_NULL, fail, guard};

/// The library's choice: the best backend this CPU runs, or the one `VCVT_BACKEND` names.
pub const VCVT_BACKEND_AUTO: c_int = 0;
/// Portable code, one element at a time; available everywhere.
pub const VCVT_BACKEND_SCALAR: c_int = 1;
/// x86-64 AVX2 + FMA + F16C.
pub const VCVT_BACKEND_AVX2: c_int = 2;
/// x86-64 AVX-512 F/BW/VL/DQ.
pub const VCVT_BACKEND_AVX512: c_int = 3;
/// x86-64 AVX-512 with VBMI.
pub const VCVT_BACKEND_AVX512_VBMI: c_int = 4;
/// x86-64 AVX-512 with VBMI and BF16.
pub const VCVT_BACKEND_AVX512_BF16: c_int = 5;
/// aarch64 AdvSIMD.
pub const VCVT_BACKEND_NEON: c_int = 6;
/// aarch64 AdvSIMD with FEAT_BF16.
pub const VCVT_BACKEND_NEON_BF16: c_int = 7;
/// Compiler-vectorised kernels for hosts without a hand-written tier.
pub const VCVT_BACKEND_PORTABLE: c_int = 8;
/// wasm32 simd128.
pub const VCVT_BACKEND_SIMD128: c_int = 9;
/// x86-64 AVX-512 with VBMI, BF16 and FP16.
pub const VCVT_BACKEND_AVX512_FP16: c_int = 10;

/// Names by value (NUL-terminated); index 0 is `VCVT_BACKEND_AUTO`.
const NAMES: [&str; 11] = [
    "auto\0",
    "scalar\0",
    "avx2\0",
    "avx512\0",
    "avx512-vbmi\0",
    "avx512-bf16\0",
    "neon\0",
    "neon-bf16\0",
    "portable\0",
    "simd128\0",
    "avx512-fp16\0",
];

fn name_of(b: c_int) -> Option<&'static str> {
    let n = NAMES.get(usize::try_from(b).ok()?)?;
    Some(&n[..n.len() - 1])
}

/// The C value of a library backend.
fn value_of(b: Backend) -> c_int {
    NAMES
        .iter()
        .position(|n| &n[..n.len() - 1] == b.name())
        .map_or(VCVT_BACKEND_SCALAR, |i| i as c_int)
}

/// Whether `VCVT_BACKEND` has been checked: 0 not yet, 1 usable (or unset), 2 not usable.
/// A cache of what the library itself reads once (and panics on): with it, an unusable value
/// is an error code instead of a panic, at the cost of one relaxed load per call.
static ENV: AtomicU8 = AtomicU8::new(0);

#[cold]
#[inline(never)]
fn check_env() -> u8 {
    let state = match Backend::from_env() {
        Ok(_) => 1,
        Err(_) => 2,
    };
    ENV.store(state, Ordering::Relaxed);
    state
}

#[cold]
#[inline(never)]
fn env_error(func: &str) -> c_int {
    match Backend::from_env() {
        Err(e) => fail(VCVT_E_BACKEND_ENV, format_args!("{func}: {e}")),
        Ok(_) => fail(
            VCVT_E_BACKEND_ENV,
            format_args!("{func}: VCVT_BACKEND was not usable when it was first read"),
        ),
    }
}

/// The backend a call asked for: `None` for [`VCVT_BACKEND_AUTO`] (after checking
/// `VCVT_BACKEND`), or an available backend; else the error code (message recorded).
#[inline(always)]
pub(crate) fn resolve(b: c_int, func: &str) -> Result<Option<Backend>, c_int> {
    if b == VCVT_BACKEND_AUTO {
        let mut s = ENV.load(Ordering::Relaxed);
        if s == 0 {
            s = check_env();
        }
        return if s == 1 {
            Ok(None)
        } else {
            Err(env_error(func))
        };
    }
    explicit(b, func).map(Some)
}

#[cold]
#[inline(never)]
fn explicit(b: c_int, func: &str) -> Result<Backend, c_int> {
    let Some(name) = name_of(b) else {
        return Err(fail(
            VCVT_E_INVALID,
            format_args!("{func}: {b} is not a vcvt_backend"),
        ));
    };
    match Backend::from_name(name) {
        Some(backend) if backend.is_available() => Ok(backend),
        Some(_) => Err(fail(
            VCVT_E_BACKEND,
            format_args!("{func}: backend `{name}` cannot run on this CPU"),
        )),
        None => Err(fail(
            VCVT_E_BACKEND,
            format_args!("{func}: backend `{name}` is not built for this target"),
        )),
    }
}

/// The name of backend `b` (`"auto"`, `"scalar"`, `"avx2"`, ...), or NULL if `b` is not a
/// `vcvt_backend`.
#[unsafe(no_mangle)]
pub extern "C" fn vcvt_backend_name(b: c_int) -> *const c_char {
    match usize::try_from(b).ok().and_then(|i| NAMES.get(i)) {
        Some(n) => n.as_ptr().cast(),
        None => core::ptr::null(),
    }
}

/// 1 if backend `b` is built for this target and runs on this CPU (`VCVT_BACKEND_AUTO`
/// always does), 0 if not, `VCVT_E_INVALID` if `b` is not a `vcvt_backend`.
#[unsafe(no_mangle)]
pub extern "C" fn vcvt_backend_available(b: c_int) -> c_int {
    guard(|| {
        let Some(name) = name_of(b) else {
            return fail(
                VCVT_E_INVALID,
                format_args!("vcvt_backend_available: {b} is not a vcvt_backend"),
            );
        };
        if b == VCVT_BACKEND_AUTO {
            return 1;
        }
        c_int::from(Backend::from_name(name).is_some_and(Backend::is_available))
    })
}

/// The backend that `VCVT_BACKEND_AUTO` calls run on (a positive `vcvt_backend` value), or
/// `VCVT_E_BACKEND_ENV` if `VCVT_BACKEND` names an unknown or unavailable backend.
#[unsafe(no_mangle)]
pub extern "C" fn vcvt_backend_active() -> c_int {
    guard(|| match resolve(VCVT_BACKEND_AUTO, "vcvt_backend_active") {
        Ok(_) => value_of(Backend::active()),
        Err(code) => code,
    })
}

/// The backend named `name` (`"avx2"`, ...; exact, lowercase; `"auto"` included), or
/// `VCVT_E_INVALID` if no backend has that name, `VCVT_E_NULL` if `name` is NULL.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_backend_from_name(name: *const c_char) -> c_int {
    guard(|| {
        if name.is_null() {
            return fail(
                VCVT_E_NULL,
                format_args!("vcvt_backend_from_name: `name` is NULL"),
            );
        }
        // SAFETY: not NULL, and the caller guarantees a NUL-terminated string.
        let s = unsafe { CStr::from_ptr(name) }.to_bytes();
        match NAMES.iter().position(|n| &n.as_bytes()[..n.len() - 1] == s) {
            Some(i) => i as c_int,
            None => fail(
                VCVT_E_INVALID,
                format_args!(
                    "vcvt_backend_from_name: {:?} names no backend",
                    String::from_utf8_lossy(s)
                ),
            ),
        }
    })
}
