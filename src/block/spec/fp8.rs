//! The block FP8 specification: a tile's scale, the quantization of one value, and the
//! dequantization of one tile row segment, which the SIMD kernels fall back to.

use core::mem::MaybeUninit;

use crate::block::spec::{BlockDest, put, soft};
use crate::codec;
use crate::options::Policy;
use crate::{F8E4M3, NanPolicy, Overflow};

/// The codes' policy: saturate at ±448, a NaN keeps its sign.
pub(crate) const SAT: Policy = Policy {
    overflow: Overflow::Saturate,
    nan: NanPolicy::Preserve,
};

/// `1e-4` as f32, DeepSeek's floor for a tile's amax.
const AMAX_FLOOR: u32 = 0x38D1_B717;
/// `448.0` as f32.
const E4M3_MAX: u32 = 0x43E0_0000;

/// The f32 scale (bits) of a tile whose `max |x|` has f32 bits `m` (NaN for a tile holding
/// a NaN), by the `DeepSeek` rule (`amax / 448` in f32) or, with `ue8m0`, that rounded up to
/// a power of two.
pub(crate) fn tile_scale(m: u32, ue8m0: bool) -> u32 {
    // max(amax, 1e-4) as Triton's `tl.maximum` computes it: a NaN amax stays NaN.
    let amax = if m > 0x7F80_0000 {
        0x7FC0_0000
    } else {
        m.max(AMAX_FLOOR)
    };
    let s = soft::div(amax, E4M3_MAX);
    if !ue8m0 || s >= 0x7F80_0000 || s & 0x007F_FFFF == 0 {
        s
    } else {
        // s ≥ 1e-4 / 448 is a normal f32: bump the exponent unless s is a power of two
        // already (the bump may reach +Inf, the next power of two).
        ((s >> 23) + 1) << 23
    }
}

/// The code of the value with f32 bits `x` in a tile of scale `s`: `e4m3(x / s)`, the
/// quotient rounded to f32 (nearest even), then to E4M3 (nearest even, saturating).
#[inline(always)]
pub(crate) fn quantize_one(x: u32, s: u32) -> u8 {
    codec::narrow_f32::<F8E4M3>(soft::div(x, s), SAT) as u8
}

/// The scalar block FP8 dequantization of one tile row segment.
pub(crate) fn dequantize_run<D: BlockDest>(codes: &[u8], s: u32, out: &mut [MaybeUninit<D>]) {
    for (o, &c) in out.iter_mut().zip(codes) {
        let y = soft::mul(codec::widen_f32::<F8E4M3>(c as u32), s);
        put(o, D::from_f32_bits(y));
    }
}
