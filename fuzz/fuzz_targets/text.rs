//! Arbitrary bytes into every element type's `FromStr`: no panic, `f32`'s acceptance and
//! errors, and the exact decimal rounded once (see `src/text_harness.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vcvt_fuzz::fuzz_text(data));
