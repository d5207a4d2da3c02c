//! The scalar specification of the block formats: what every block kernel must equal bit
//! for bit, and what runs wherever no kernel does.
//!
//! These files depend only on the block module's types (`src/block/mod.rs`, `soft.rs`) and
//! the codecs: the API files (`mx.rs`, `fp8.rs`, …) and the SIMD kernels
//! (`src/arch/<arch>/*_block.rs`) both build on them, and neither is imported here.

pub(crate) mod fp8;
pub(crate) mod mx;
pub(crate) mod nvfp4;

// The names the hand-written SIMD kernels fall back to for the blocks they leave to the
// specification.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) use fp8::dequantize_run as fp8_dequantize_run;
#[cfg(target_arch = "x86_64")]
pub(crate) use mx::{
    dequantize_block as mx_dequantize_block, quantize_row as mx_quantize_row,
    scale_byte_fast as mx_scale_byte_fast,
};
