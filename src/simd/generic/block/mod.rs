//! The block kernels, written once against [`Vector`](crate::simd::Vector) and
//! instantiated per ISA by [`block_instances!`](instances::block_instances) ([`instances`]);
//! [`run`] holds their loop. The kernels:
//!
//! * [`fp8`]: block FP8 (DeepSeek) quantization of whole tile rows and dequantization of a
//!   row, and the `amax` building block;
//! * [`scaled`]: the fused f32 paths of `narrow_scaled` and `dequantize_scaled` for the
//!   scales whose products are exact in f32.
//!
//! Each is bit for bit the scalar specification (`src/block/spec/`, `src/block/scaled.rs`)
//! whatever the FP environment holds; the arguments are at each step.

pub(crate) mod fp8;
pub(crate) mod instances;
pub(crate) mod run;
pub(crate) mod scaled;
