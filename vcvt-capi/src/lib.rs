//! The C ABI of vcvt: `libvcvt` (shared and static) and its header `include/vcvt.h`.
//!
//! Every function here is `extern "C"`, takes only C types (integers, pointers, `float`,
//! `#[repr(C)]` structs of those), checks every argument before it writes anything, and
//! never unwinds: each body runs under `catch_unwind`, and a panic (none is expected) becomes
//! [`VCVT_E_INTERNAL`]. Enumerations arrive as `int` and are checked, never transmuted.
//! The header documents each function; `docs/c.md` the install and the contracts.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod backend;
mod block;
mod convert;
mod converter;
mod dtype;
mod status;

use core::ffi::{c_char, c_int};

pub use backend::*;
pub use block::*;
pub use convert::*;
pub use converter::*;
pub use dtype::*;
pub use status::*;

// --- version -------------------------------------------------------------------------------

/// Major version of the library (`VCVT_VERSION_MAJOR` in the header).
pub const VCVT_VERSION_MAJOR: c_int = 0;
/// Minor version.
pub const VCVT_VERSION_MINOR: c_int = 1;
/// Patch version.
pub const VCVT_VERSION_PATCH: c_int = 0;

/// The library version as `"MAJOR.MINOR.PATCH"` (the Cargo package version).
#[unsafe(no_mangle)]
pub extern "C" fn vcvt_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The library version as `MAJOR * 10000 + MINOR * 100 + PATCH`, to compare with the
/// header's `VCVT_VERSION_NUMBER`.
#[unsafe(no_mangle)]
pub extern "C" fn vcvt_version_number() -> c_int {
    VCVT_VERSION_MAJOR * 10000 + VCVT_VERSION_MINOR * 100 + VCVT_VERSION_PATCH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_matches_the_package() {
        let v = format!("{VCVT_VERSION_MAJOR}.{VCVT_VERSION_MINOR}.{VCVT_VERSION_PATCH}");
        assert_eq!(v, env!("CARGO_PKG_VERSION"));
    }
}
