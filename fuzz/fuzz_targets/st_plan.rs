//! vcvt-st's header → plan path: arbitrary safetensors headers (shapes, dtypes, offsets,
//! companions), an optional index, every target: no panic, and an accepted plan's sizes are
//! checked and bounded by the file's bytes (see `vcvt-st/src/st_fuzz.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vcvt_fuzz::fuzz_st_plan(data));
