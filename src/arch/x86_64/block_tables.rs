//! The x86-64 backends' block-kernel tables (`src/block/spec/kernels.rs`), composed in one place,
//! as `tables.rs` composes the element kernels: each tier starts from the tier below it and
//! sets, on top, the block kernels of the width-generic layer at its own width
//! (`simd/x86_64/*::fill_block`) where they measured faster.

use super::avx2_block;
use crate::arch::Isa;
use crate::block::spec::DestKind;
use crate::block::spec::kernels::BlockKernels;
use crate::block::spec::mx::MxElement;
use crate::simd::x86_64 as generic;

/// `Avx2`: the generic layer's 256-bit block kernels for every slot they serve
/// (`simd/x86_64/avx2.rs`'s `fill_block`), then the override list: the hand-written MX
/// `Ocp`/`Ceil` kernels, `amax`, block FP8 dequantization and the products of
/// `avx2_block.rs`, which measured faster (that `fill_block` says by how much), but for the
/// MX dequantizations and the MXFP4 quantizations that measured faster generic (below).
const fn avx2_table() -> BlockKernels {
    let mut t = BlockKernels::empty();
    generic::avx2::fill_block(&mut t);
    let generic_mx_dequant = t.mx_dequant;
    let generic_mx_quant = t.mx_quant;
    avx2_block::set(&mut t);
    // The generic MX dequantizations that measured faster than the hand-written ones take
    // their slots back (`cargo bench --bench block -- 'mx_dequant_8x4096/.*-avx2$'`, three
    // alternating runs of two builds, medians, AMD EPYC Zen 3): E4M3, E2M3 and E3M2 to BF16
    // (BF16 words with the scale in the exponent field: 1.37×, 1.22×, 1.22×) and E2M1 to
    // BF16 and f32 (one row of byte planes per block: 1.73×, 1.28×). E5M2 to BF16 keeps
    // the hand-written `code << 8` F16 kernel (the generic one ran at 0.45–0.7 of it), and
    // the F16 destinations and E4M3/E2M3/E3M2 to f32 keep theirs (not measured).
    let bf16 = DestKind::Bf16 as usize;
    let taken = [
        MxElement::E4M3,
        MxElement::E2M3,
        MxElement::E3M2,
        MxElement::E2M1,
    ];
    let mut i = 0;
    while i < taken.len() {
        let e = taken[i] as usize;
        t.mx_dequant[e][bf16] = generic_mx_dequant[e][bf16];
        i += 1;
    }
    let (e2m1, f32) = (MxElement::E2M1 as usize, DestKind::F32 as usize);
    t.mx_dequant[e2m1][f32] = generic_mx_dequant[e2m1][f32];
    // The generic MXFP4 quantizations (both rules) measured faster too: the blocks' maxima
    // by one transposing reduction per 8 blocks and the codes of a block finished in bytes
    // (`lanes::narrow4`), 1.31× (`Ceil`) and 1.36× (`Ocp`) the hand-written kernel's rate
    // (`VCVT_AB_BATCHES=61 cargo run --release --example block_quant -- mx`, ten runs of
    // each build alternating, medians, AMD EPYC Zen 3; docs/performance.md). MXFP8 keeps
    // the hand-written kernel (the generic one ran at 0.90–0.94 of it in two runs); MXFP6
    // was not measured and keeps it too.
    t.mx_quant[0][e2m1] = generic_mx_quant[0][e2m1];
    t.mx_quant[1][e2m1] = generic_mx_quant[1][e2m1];
    t.tag_filled(Isa::Avx2);
    t
}

/// The AVX-512 tiers: `Avx2`'s, with the generic 512-bit block kernels on top, then their
/// override list: block FP8 dequantization to BF16/F16 by a table per tile
/// (`simd/x86_64/avx512_fp8.rs`), and to f32 `Avx2`'s hand-written kernel (measured as
/// fast or faster than the generic one at 512 bits: `simd/x86_64/avx512.rs`'s
/// `fill_block`).
const fn avx512_table() -> BlockKernels {
    let mut t = avx2_table();
    generic::avx512::fill_block(&mut t);
    generic::avx512_fp8::set(&mut t);
    avx2_block::set_fp8_dequant_f32(&mut t);
    t
}

/// The `Avx2` backend's block kernels.
pub(crate) static AVX2: BlockKernels = avx2_table();
/// The block kernels of the AVX-512 backends (`Avx512`, `Avx512Vbmi`, `Avx512Bf16`).
pub(crate) static AVX512: BlockKernels = avx512_table();
