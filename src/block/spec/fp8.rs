//! The block FP8 specification's dequantization of one tile row segment, which the SIMD
//! kernels finish short runs with.

use core::mem::MaybeUninit;

use crate::F8E4M3;
use crate::block::{BlockDest, put, soft};
use crate::codec;

/// The scalar block FP8 dequantization of one tile row segment.
pub(crate) fn dequantize_run<D: BlockDest>(codes: &[u8], s: u32, out: &mut [MaybeUninit<D>]) {
    for (o, &c) in out.iter_mut().zip(codes) {
        let y = soft::mul(codec::widen_f32::<F8E4M3>(c as u32), s);
        put(o, D::from_f32_bits(y));
    }
}
