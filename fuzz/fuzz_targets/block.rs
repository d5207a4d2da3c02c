//! Block-scaled quantization (`vcvt::block`): MX, NVFP4 and block FP8 on every backend,
//! their errors, guards and documented properties, the MXFP4 repacks and the building blocks
//! (see `src/block_harness.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vcvt_fuzz::fuzz_block(data));
