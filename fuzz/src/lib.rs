//! The `vcvt` fuzz crate: the differential harnesses (`harness.rs` for the element-type
//! conversions, `block_harness.rs` for `vcvt::block`; both also included by
//! `tests/fuzz_replay.rs`) and the AddressSanitizer hooks the fuzz targets pass them.
#![cfg_attr(fuzzing, feature(cfg_sanitize))]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod block_harness;
pub mod harness;
pub mod text_harness;

#[cfg(fuzzing)]
mod asan;

/// The hooks the fuzz targets use: ASan's manual poisoning when the build has ASan (the
/// cargo-fuzz default), nothing otherwise.
pub fn hooks() -> harness::Hooks {
    #[cfg(fuzzing)]
    if let Some(h) = asan::HOOKS {
        return h;
    }
    harness::NO_HOOKS
}

/// Runs one fuzz input; panics (which libFuzzer reports as a crash) on the first failure.
pub fn fuzz(target: harness::Target, data: &[u8]) {
    if let Err(msg) = harness::try_run_input(target, &harness::Input::parse(data), hooks()) {
        panic!("{msg}");
    }
}

/// Runs one input of the `block` target; panics on the first failure.
pub fn fuzz_block(data: &[u8]) {
    let input = block_harness::Input::parse(data);
    if let Err(msg) = block_harness::try_run_input(&input, hooks()) {
        panic!("{msg}");
    }
}

/// Runs one input of the `text` target; panics on the first failure.
pub fn fuzz_text(data: &[u8]) {
    if let Err(msg) = text_harness::run(data) {
        panic!("{msg}");
    }
}
