//! Typed slices: every backend of `Backend::available()` through `convert_slice_on`, and every
//! typed entry point, compared bit for bit with the scalar codec (see `src/harness.rs`).
#![no_main]

use vcvt_fuzz::harness::Target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| vcvt_fuzz::fuzz(Target::Slices, data));
