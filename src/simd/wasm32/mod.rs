//! The WebAssembly implementation of [`Vector`](super::Vector) (`simd128`, 128-bit) and its
//! kernel instantiations. WebAssembly has no run-time feature detection: the module exists
//! only in builds with `-C target-feature=+simd128`, where every instruction it uses is
//! available.

pub(crate) mod simd128;
