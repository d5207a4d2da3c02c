//! The x86-64 backends' block-kernel tables (`src/block/spec/kernels.rs`), composed in one place,
//! as `tables.rs` composes the element kernels: each tier starts from the tier below it and
//! sets, on top, the block kernels of the width-generic layer at its own width
//! (`simd/x86_64/*::fill_block`) where they measured faster.

use super::{avx2_block, avx512_block, avx512_vbmi_block};
use crate::arch::Isa;
use crate::block::spec::kernels::BlockKernels;
use crate::simd::x86_64 as generic;

/// `Avx2`: the generic layer's 256-bit block kernels for every slot they serve
/// (`simd/x86_64/avx2.rs`'s `fill_block`), then the override list: the hand-written MX
/// `Ocp`/`Ceil` kernels, `amax`, block FP8 dequantization and the products of
/// `avx2_block.rs`, in the slots where they measured faster (`avx2_block::set` lists the MX
/// slots that keep the generic kernel; `fill_block` says by how much the others won).
const fn avx2_table() -> BlockKernels {
    let mut t = BlockKernels::empty();
    generic::avx2::fill_block(&mut t);
    avx2_block::set(&mut t);
    t.tag_filled(Isa::Avx2);
    t
}

/// The AVX-512 tiers: `Avx2`'s, with the generic 512-bit block kernels on top, then their
/// override list: block FP8 dequantization to BF16/F16 by a table per tile
/// (`simd/x86_64/avx512_fp8.rs`, which also serves `dequantize_scaled` of E4M3 and E5M2;
/// `avx512_scaled.rs` serves it for the fnuz, fp6 and fp4 formats), MXFP4 `Ggml` planar to
/// F16 by a table per block (`avx512_block.rs`),
/// and to f32 `Avx2`'s hand-written kernel (measured as fast or faster than the generic one
/// at 512 bits: `simd/x86_64/avx512.rs`'s `fill_block`). (The generic 512-bit block FP8
/// quantization finishes its codes with the element kernel's narrowing: `avx512.rs`'s
/// `Fp8x64`.)
const fn avx512_table() -> BlockKernels {
    let mut t = avx2_table();
    generic::avx512::fill_block(&mut t);
    generic::avx512_fp8::set(&mut t);
    generic::avx512_scaled::set(&mut t);
    avx2_block::set_fp8_dequant_f32(&mut t);
    avx512_block::set(&mut t);
    t
}

/// The AVX512_VBMI tiers: the AVX-512 tiers' table, with MX dequantization of the one-byte
/// elements to BF16 by the widening's byte tables (`avx512_vbmi_block.rs`), which measured
/// about 3× the generic 512-bit kernel on the Intel VM (MXFP8 6.0–6.6 → 18–23 el/ns, MXFP6
/// 7.8 → 19–23; docs/performance.md, "Block paths on `avx512-fp16`").
const fn avx512_vbmi_table() -> BlockKernels {
    let mut t = avx512_table();
    avx512_vbmi_block::set(&mut t);
    t
}

/// The `Avx512Fp16` tier: the AVX512_VBMI tiers' table, with MX dequantization of the
/// one-byte elements to F16 by `VMULPH` (`avx512_vbmi_block.rs`, module `fp16`).
#[cfg(vcvt_avx512fp16)]
const fn avx512_fp16_table() -> BlockKernels {
    let mut t = avx512_vbmi_table();
    avx512_vbmi_block::fp16::set(&mut t);
    t
}

/// The `Avx2` backend's block kernels.
pub(crate) static AVX2: BlockKernels = avx2_table();
/// The block kernels of the `Avx512` backend.
pub(crate) static AVX512: BlockKernels = avx512_table();
/// The block kernels of the backends with AVX512_VBMI (`Avx512Vbmi`, `Avx512Bf16`, and
/// `Avx512Fp16` below the F16 slots of [`AVX512_FP16`]).
pub(crate) static AVX512_VBMI: BlockKernels = avx512_vbmi_table();
/// The block kernels of the `Avx512Fp16` backend (without a compiler that has AVX512_FP16,
/// that backend is never available and uses [`AVX512_VBMI`]).
#[cfg(vcvt_avx512fp16)]
pub(crate) static AVX512_FP16: BlockKernels = avx512_fp16_table();
