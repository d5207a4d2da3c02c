//! The block kernels (`src/block/kernels.rs` slots), written once against
//! [`Vector`](crate::simd::Vector) and instantiated per ISA by the `fill_block` hooks of
//! `simd/<arch>/*.rs`. Each is bound to give exactly the bits of the scalar specification
//! (`src/block/spec/`), whatever MXCSR/FPCR hold; each file says why.

pub(crate) mod mx;
