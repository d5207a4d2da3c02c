//! The algorithms, written once against [`Vector`](super::Vector) and the formats'
//! [`Format`](crate::codec::Format) constants.
//!
//! * [`lanes`]: what happens to one vector of lanes: the narrowings (the fused multiply-add
//!   method for every IEEE-like format, integer methods for BF16 and E8M0) and the exact
//!   widenings.
//! * [`kernels`]: the loops, written as a source (load and decode to f32 bits) and a
//!   destination (encode and store), so that f32/f64 ↔ narrow, narrow ↔ narrow in one pass,
//!   and the fused round trip are all the same loop with different ends.
//! * [`registry`]: every pair of every registry format as generic kernels, the table
//!   builder each tier starts from.
//! * [`block`]: the block-scaled kernels (MX, NVFP4, block FP8, the scaled building blocks)
//!   on the same sources and destinations.

pub(crate) mod block;
pub(crate) mod kernels;
pub(crate) mod lanes;
pub(crate) mod registry;
pub(crate) mod words;
