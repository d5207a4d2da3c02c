//! MXFP4 dequantization to F16 under the `Ggml` and `Mlx` profiles, planar layout, on the
//! AVX-512 tiers: one F16 table of 16 words per block and one `VPERMW` per 32 values, over
//! the generic kernels that round every value by `VCVTPS2PH`.
//!
//! # Why it is exact
//!
//! gguf's value of code `c` in a block with scale byte `s` is `kvalues[c] · 2^(s − 128)`,
//! which is `E2M1(c) · 2^(s − 127)` (code 8 is `+0`), rounded once to F16 by the
//! specification (`ggml_dequantize_block`). MLX rounds the scale `2^(s − 127)` to F16 first,
//! then the f32 product `E2M1(c) · scale` to F16 (`mlx_dequantize_block`; code 8 is `−0`);
//! for `s` in `103..=142` the scale is an F16 value, so that is the exact product rounded
//! once as well. For those scale bytes (`2..=252` for gguf) the generic kernels form the 16
//! products as exact normal f32 values (the E2M1 values with `s − 127` added to the exponent
//! field of the non-zero ones, `ggml::E2m1Table`) and round each value of the block with
//! `VCVTPS2PH`. A block has one scale, so its 32 values take only 16 results: this kernel
//! rounds the 16 products once per block (the same `VCVTPS2PH`, to nearest even from its
//! immediate, so MXCSR's rounding mode does not matter, as for the generic kernels) and
//! looks each code up in them. Other scale bytes are rewritten after the loop by the
//! specification, as the generic kernels do.
//!
//! # Codes as word indices
//!
//! A planar block stores code `2j` in the low nibble of byte `j` and code `2j + 1` in its
//! high nibble. `VPMOVZXBD` puts byte `j` in dword `j`; `(d | d << 12) & 0x000F_000F` leaves
//! its low nibble in the dword's low word and its high nibble in the high word, that is word
//! `2j` and word `2j + 1`: the 32 codes in order, each below 16, as `VPERMW` indices into the
//! 16 words of the block's table (the index's other bits are zero, so the table's upper
//! words are never read).
//!
//! # Cost
//!
//! Per 32 values: one `VPMOVZXBD`, a shift and a ternary-logic step for the indices, one
//! masked add and one `VCVTPS2PH` for the table, one `VPERMW` and one store, against two
//! lookups, two nibble expansions and two `VCVTPS2PH` in the generic kernel. Measured in
//! docs/performance.md, "MXFP4 `Ggml` and `Mlx` to F16 by a table per block".

use core::arch::x86_64::*;

use crate::F16;
use crate::block::spec::DestKind;
use crate::block::spec::kernels::BlockKernels;
use crate::block::spec::kernels::MLX_E2M1;
use crate::simd::generic::block::ggml::{E2M1_BITS, dequantize_spec_blocks};
use crate::simd::generic::block::mlx::e2m1_spec_blocks;

/// The `Ggml` (`MLX == false`) or `Mlx` dequantization of `blocks` planar MXFP4 blocks into
/// F16 (a `MxProfileDequantFn`).
///
/// # Safety
/// As for `MxProfileDequantFn` (planar layout: `codes` readable for `16 · blocks` bytes,
/// `scales` for `blocks`, `dst` writable for `32 · blocks` F16 values); the table holding
/// this is chosen only when the `Avx512` tier's features were found.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn fp4_f16<const MLX: bool>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    // SAFETY: the 16 u32 values of a constant (a temporary that outlives the load); the
    // features are this function's.
    let base = unsafe { _mm512_loadu_si512(E2M1_BITS.as_ptr().cast()) };
    // gguf's code 8 is `+0` (its `kvalues[8]`); MLX's is `−0`, E2M1's own value. The add
    // below leaves either alone.
    let base = if MLX {
        base
    } else {
        _mm512_mask_mov_epi32(base, 1 << 8, _mm512_setzero_si512())
    };
    // The scale bytes served: gguf's every product is an exact normal f32 for `2..=252`;
    // MLX rounds `2^(s − 127)` to F16 first, which is that power itself for `103..=142`.
    let (lo, hi) = if MLX { (103, 142) } else { (2, 252) };
    // The non-zero entries, whose exponent field takes the scale.
    let nonzero = _mm512_test_epi32_mask(base, _mm512_set1_epi32(i32::MAX));
    let nibbles = _mm512_set1_epi32(0x000F_000F);
    let mut other = false;
    for b in 0..blocks {
        // SAFETY: b < blocks: scale byte b, code bytes 16b..16b + 16 and values
        // 32b..32b + 32 (64 bytes) lie inside the caller's ranges; the features are this
        // function's.
        unsafe {
            let s = *scales.add(b);
            if !(lo..=hi).contains(&s) {
                other = true;
                continue;
            }
            // E2M1 · 2^(s − 127): exact normal f32 for these s (module docs), then rounded
            // once to F16, to nearest even by the immediate.
            let k = _mm512_set1_epi32((i32::from(s) - 127) << 23);
            let t = _mm512_mask_add_epi32(base, nonzero, base, k);
            let words = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                _mm512_castsi512_ps(t),
            );
            let table = _mm512_zextsi256_si512(words);
            let d = _mm512_cvtepu8_epi32(_mm_loadu_si128(codes.add(16 * b).cast()));
            // (d | d << 12) & 0x000F000F (ternary logic (A | B) & C).
            let idx = _mm512_ternarylogic_epi32::<0xA8>(d, _mm512_slli_epi32::<12>(d), nibbles);
            _mm512_storeu_si512(dst.add(64 * b).cast(), _mm512_permutexvar_epi16(idx, table));
        }
    }
    if other {
        // SAFETY: forwarded contract; those functions rewrite only the blocks whose scale
        // byte is outside `lo..=hi` (gguf's `2..=252` is the generic kernel's range too),
        // each inside the caller's ranges.
        unsafe {
            if MLX {
                e2m1_spec_blocks::<F16, MLX_E2M1>(codes, scales, blocks, (lo, hi), dst)
            } else {
                dequantize_spec_blocks::<F16, false>(codes, scales, blocks, dst)
            }
        };
    }
}

/// Sets the `Ggml` and `Mlx` planar F16 dequantization slots of an AVX-512 table to the
/// kernel above. (The ggml `block_mxfp4` layout measured no gain: docs/performance.md.)
pub(crate) const fn set(t: &mut BlockKernels) {
    t.ggml_dequant[0][DestKind::F16 as usize] = Some(fp4_f16::<false>);
    t.mlx_dequant[MLX_E2M1][DestKind::F16 as usize] = Some(fp4_f16::<true>);
}
