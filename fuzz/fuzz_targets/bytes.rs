//! Unaligned little-endian byte slices: `convert_from_bytes(_with)` and
//! `convert_to_bytes(_with)`, including byte counts that are not whole elements and element
//! counts that differ (see `src/harness.rs`).
#![no_main]

use vcvt_fuzz::harness::Target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| vcvt_fuzz::fuzz(Target::Bytes, data));
