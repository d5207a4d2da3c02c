//! The block formats' kernels, written once against [`Vector`](crate::simd::Vector): each
//! gives the bits of the scalar specification (`src/block/spec/`) and falls back to it for
//! what it does not serve.

pub(crate) mod nvfp4;
