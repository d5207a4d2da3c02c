//! The MX `Mlx` profile (MLX's CPU mxfp4 and mxfp8) on vectors.
//!
//! # Quantization
//!
//! The specification (`mlx_quantize_block`) computes `q = RN_w(RN_f32(amax / maxval))` in
//! the source's type `w`, the scale exponent `e = ceil(log2 q)`, then `wq = RN_w(x / 2^e)`
//! and, for E2M1, the first code minimising `RN_w(|wq − lut|)`, for E4M3 the saturating
//! nearest-even code. The kernel gets the same bits without floating-point division:
//!
//! * **scale**: for a normal `amax` of at least 2^-90 (2^-11 for E2M1 and 2^-5 for E4M3
//!   from F16, so that `q` is a normal F16), `q ≤ 2^e` exactly when `amax ≤ maxval · 2^e`:
//!   the values whose two roundings land at or below `2^e` reach at most
//!   `maxval · 2^e · (1 + 2^-p)` (`p` = 24, 8 or 11; the tie at the top rounds to the even
//!   `2^e`), and the next `w` value above `maxval · 2^e` (`6 = 1.5 · 4`, `448 = 1.75 · 256`)
//!   is a whole ulp of `amax`'s binade higher, more than that `maxval · 2^-p` excess. So
//!   `e = E − 2 + (mantissa > 1.5)` for E2M1 and `E − 8 + (mantissa > 1.75)` for E4M3, with
//!   `E` the exponent of `amax`. Smaller `amax` takes the specification's `mlx_scale`
//!   (scalar, per block);
//! * **`wq`**: `x / 2^e` is an exponent shift, exact while the result is a normal f32; a
//!   result below `2^-126` (or an f32 subnormal `x`, which `e ≥ −93` sends below `2^-26`)
//!   becomes a zero of `x`'s sign, which gives the same code (E2M1 code 0, E4M3 `±0`) as
//!   the tiny value would. From BF16 the shifted value is exact in BF16; from F16 it is
//!   rounded to F16 ([`Vector::round_f16`]: `VCVTPS2PH`/`FCVTN` to nearest even, the
//!   specification's `round_to`);
//! * **E2M1**: as for the `Ggml` profile (`ggml.rs`), only magnitudes against
//!   `{0, 0.5, 1, 1.5, 2, 3, 4, 6}` matter, and between the neighbours of `|wq|` (a `w`
//!   value) both differences are exact in `w` (Sterbenz, and they are multiples of `|wq|`'s
//!   ulp below the lower neighbour's binade), so the code is the number of midpoints
//!   `0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5` strictly below `|wq|`, plus 8 for a negative
//!   `wq` with a non-zero code: integer compares (four vectors at once in bytes where the
//!   vector has the byte methods, `ggml::fp4_codes4`, with `2|wq|` from f32 and BF16 sources
//!   as `|x| − (e − 1) << 23`: its bits where it is normal, below 0.5 elsewhere);
//! * **E4M3**: the generic narrowing ([`lanes::narrow`], saturating, the kernels' argued
//!   multiply-add rounding) of `wq`, which is finite and at most 448.
//!
//! A block with a NaN or an infinity gets scale `0xFF` and codes 0 (the specification's
//! rule).
//!
//! # Dequantization
//!
//! `RN_D(decode(c) · RN_D(2^(s − 127)))`: where the scale is exact in `D` (`s` in
//! `2..=252` for E2M1, `10..=246` for E4M3, `103..=142` for F16) every product is a normal,
//! exact f32 (at most four significant bits), built with integer operations, and rounded
//! once to `D` (exact to BF16). E4M3 NaN codes give MLX's NaN bits (`mlx_fp8_nan`); a
//! block with one goes to the specification for F16, whose NaN code (`0x7D00`) no f32 → F16
//! conversion produces. Other scales run the specification's block function.

use super::ggml::{
    E2m1Table, Fp4Consts, block_maxima, block_slice, e2m1_scaled, fp4_code, fp4_codes4, load_fp4,
    load_fp4_scalar, load_values, out_slice, per_block, store_codes4, store_dst, store_fp4,
    store_fp4_scalar,
};
use crate::block::spec::kernels::{MLX_E2M1_GGML, MLX_E4M3};
use crate::block::spec::mx::{
    BLOCK, MLX_FP8, MxElement, mlx_dequantize_block, mlx_quantize_block, mlx_scale,
};
use crate::block::spec::{BlockDest, BlockSource, DestKind};
use crate::simd::Vector;
use crate::simd::generic::lanes;
use crate::simd::generic::words::{self, Enc};
use crate::{BF16, F8E4M3};

/// The element of a kernel variant.
#[inline(always)]
const fn element(variant: usize) -> MxElement {
    if variant == MLX_E4M3 {
        MxElement::E4M3
    } else {
        MxElement::E2M1
    }
}

/// The scale exponent `e` and byte of a block with largest magnitude bits `amax` (finite),
/// or `None` when the kernel leaves the block to the specification (`e < −93`).
#[inline(always)]
fn scale<T: BlockSource>(e4m3: bool, amax: u32) -> Option<(i32, u8)> {
    let fast_min: u32 = match (T::KIND, e4m3) {
        (DestKind::F16, false) => 127 - 11,
        (DestKind::F16, true) => 127 - 5,
        _ => 127 - 90,
    };
    let ex = amax >> 23;
    let e = if ex >= fast_min {
        let mant = amax & 0x007F_FFFF;
        if e4m3 {
            ex as i32 - 127 - 8 + (mant > 0x0060_0000) as i32
        } else {
            ex as i32 - 127 - 2 + (mant > 0x0040_0000) as i32
        }
    } else {
        mlx_scale(
            if e4m3 {
                MxElement::E4M3
            } else {
                MxElement::E2M1
            },
            T::KIND,
            amax,
        )
        .1
    };
    if e < -93 {
        None
    } else {
        Some((e, (e + 127) as u8))
    }
}

/// The `Mlx` profile's quantization of `blocks` whole blocks of `T` (a
/// [`MxProfileQuantFn`](crate::block::spec::kernels::MxProfileQuantFn) body; module docs).
///
/// # Safety
/// As for `MxProfileQuantFn`; the CPU has `V`'s features and runs the multiply-add under
/// round to nearest (the instantiations see to it).
#[inline(always)]
pub(crate) unsafe fn quantize<V: Vector, T: BlockSource, const VARIANT: usize>(
    src: *const u8,
    blocks: usize,
    codes: *mut u8,
    scales: *mut u8,
) {
    let nv = per_block::<V>();
    let l = V::LANES;
    let e4m3 = VARIANT == MLX_E4M3;
    let ggml = VARIANT == MLX_E2M1_GGML;
    // SAFETY: every access is inside block `b < blocks` of the buffers (the caller's
    // guarantee), and the CPU has `V`'s features.
    unsafe {
        let abs = V::splat(0x7FFF_FFFF);
        let sign_bit = V::splat(0x8000_0000);
        let fc = Fp4Consts::<V>::new();
        let narrow = lanes::Narrow::<V>::new::<F8E4M3>(MLX_FP8);
        // Groups of up to `LANES` blocks: their maxima first (one reduction), then each
        // block's scale and codes.
        let mut g0 = 0;
        while g0 < blocks {
            let nb = V::LANES.min(blocks - g0);
            let am = block_maxima::<V, T>(src, g0, nb);
            g0 += nb;
            for (b, &amax) in (g0 - nb..g0).zip(&am) {
                let x = load_values::<V, T>(src, b);
                let mut c = [V::splat(0); 8];
                let (e, byte) = if amax >= 0x7F80_0000 {
                    (0, 0xFF)
                } else {
                    match scale::<T>(e4m3, amax) {
                        Some(v) => v,
                        None => {
                            let (s, cs) =
                                mlx_quantize_block::<T>(element(VARIANT), block_slice(src, b));
                            if e4m3 {
                                *scales.add(b) = s;
                                core::ptr::copy_nonoverlapping(
                                    cs.as_ptr(),
                                    codes.add(b * BLOCK),
                                    BLOCK,
                                );
                            } else if ggml {
                                store_fp4_scalar::<true>(&cs, s, codes, scales, b);
                            } else {
                                store_fp4_scalar::<false>(&cs, s, codes, scales, b);
                            }
                            continue;
                        }
                    }
                };
                if byte != 0xFF && !e4m3 && V::BYTES4 && nv == 4 {
                    // As below, the four vectors' codes finished in bytes.
                    let shift = V::splat((e << 23) as u32);
                    let keep = V::splat(((e.max(0) as u32) << 23) | 0x007F_FFFF);
                    let mut wq = [V::splat(0); 4];
                    let mut m = [V::splat(0); 4];
                    if T::KIND == DestKind::F16 {
                        for j in 0..4 {
                            let mag = x[j].and(abs);
                            let w =
                                V::select(mag.gt_i32(keep), x[j].sub(shift), x[j].and(sign_bit));
                            wq[j] = w.round_f16(false);
                            m[j] = wq[j].and(abs).add(V::splat(1 << 23));
                        }
                    } else {
                        // `2|wq|` as `|x| − (e − 1) << 23` (signed): the same bits where `2|wq|`
                        // is a normal f32; elsewhere (`wq` flushed to zero above, or an f32
                        // subnormal `x`) below the bits of 0.5 or negative, code 0 either way.
                        // The sign is `x`'s, which `wq` has wherever the code is not 0.
                        let shift2 = V::splat(((e - 1) << 23) as u32);
                        for j in 0..4 {
                            wq[j] = x[j];
                            m[j] = x[j].and(abs).sub(shift2);
                        }
                    }
                    let c = fp4_codes4(m, wq);
                    if ggml {
                        store_codes4::<V, true>(c, byte, codes, scales, b);
                    } else {
                        store_codes4::<V, false>(c, byte, codes, scales, b);
                    }
                    continue;
                }
                if byte != 0xFF && e4m3 && V::BYTES4 && nv == 4 && narrow.bytes_ok {
                    // As below, the four vectors' codes finished in bytes (`lanes::narrow4`).
                    let shift = V::splat((e << 23) as u32);
                    let keep = V::splat(((e.max(0) as u32) << 23) | 0x007F_FFFF);
                    let mut wq = [V::splat(0); 4];
                    for j in 0..4 {
                        let mag = x[j].and(abs);
                        wq[j] = V::select(mag.gt_i32(keep), x[j].sub(shift), x[j].and(sign_bit));
                        if T::KIND == DestKind::F16 {
                            wq[j] = wq[j].round_f16(false);
                        }
                    }
                    *scales.add(b) = byte;
                    lanes::narrow4::<V, F8E4M3>(wq, &narrow).store_bytes4(codes.add(b * BLOCK));
                    continue;
                }
                if byte != 0xFF && !e4m3 && T::KIND != DestKind::F16 {
                    // As the byte path above: `2|wq|` as `|x| − (e − 1) << 23` (signed),
                    // code 0 where that is not a normal f32 above 0.5, the sign `x`'s.
                    let shift2 = V::splat(((e - 1) << 23) as u32);
                    for j in 0..nv {
                        c[j] = fp4_code(x[j].and(abs).sub(shift2), x[j], &fc);
                    }
                } else if byte != 0xFF {
                    // x / 2^e where the result is a normal f32, else a zero of x's sign.
                    let shift = V::splat((e << 23) as u32);
                    let keep = V::splat(((e.max(0) as u32) << 23) | 0x007F_FFFF);
                    for j in 0..nv {
                        let mag = x[j].and(abs);
                        let mut wq =
                            V::select(mag.gt_i32(keep), x[j].sub(shift), x[j].and(sign_bit));
                        if T::KIND == DestKind::F16 {
                            wq = wq.round_f16(false);
                        }
                        c[j] = if e4m3 {
                            lanes::narrow::<V, F8E4M3>(wq, &narrow)
                        } else {
                            // 2|wq| against the doubled grid (exact: |wq| is normal or zero).
                            fp4_code(wq.and(abs).add(V::splat(1 << 23)), wq, &fc)
                        };
                    }
                }
                if e4m3 {
                    *scales.add(b) = byte;
                    for (j, v) in c.iter().enumerate().take(nv) {
                        v.and(V::splat(0xFF))
                            .store_u8(codes.add(b * BLOCK + j * l), l);
                    }
                } else if ggml {
                    store_fp4::<V, true>(&c, byte, codes, scales, b);
                } else {
                    store_fp4::<V, false>(&c, byte, codes, scales, b);
                }
            }
        }
    }
}

/// The E2M1 blocks of [`dequantize`] on the byte-plane path (BF16 or f32) whose scale byte
/// is outside `lo..=hi` (`2..=252` there), each by the specification's
/// `mlx_dequantize_block` (out of the loop of `ggml::planes_blocks`, so that the loop calls
/// no function); also those of the AVX-512 F16 kernel (`arch/x86_64/avx512_block.rs`).
///
/// # Safety
/// As for [`dequantize`].
#[cold]
#[inline(never)]
pub(crate) unsafe fn e2m1_spec_blocks<D: BlockDest, const VARIANT: usize>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    (lo, hi): (u8, u8),
    dst: *mut u8,
) {
    for b in 0..blocks {
        // SAFETY: b < blocks: the block's bytes and values are inside the caller's ranges.
        unsafe {
            let (cs, s) = if VARIANT == MLX_E2M1_GGML {
                load_fp4_scalar::<true>(codes, scales, b)
            } else {
                load_fp4_scalar::<false>(codes, scales, b)
            };
            if !(lo..=hi).contains(&s) {
                mlx_dequantize_block::<D>(MxElement::E2M1, &cs, s, out_slice(dst, b));
            }
        }
    }
}

/// The E4M3 blocks of [`e4m3_bf16_words`] whose scale byte is outside `lo..=hi`, each by
/// the specification's `mlx_dequantize_block` into `D` (out of its loop, so that the loop
/// calls no function).
///
/// # Safety
/// As for [`dequantize`] into `D`.
#[cold]
#[inline(never)]
pub(crate) unsafe fn e4m3_spec_blocks<D: BlockDest>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    (lo, hi): (u8, u8),
    dst: *mut u8,
) {
    for b in 0..blocks {
        // SAFETY: b < blocks: scale b, the block's 32 code bytes and 32 values are inside the
        // caller's ranges.
        unsafe {
            let s = *scales.add(b);
            if !(lo..=hi).contains(&s) {
                let cs = &*codes.add(b * BLOCK).cast::<[u8; BLOCK]>();
                mlx_dequantize_block::<D>(MxElement::E4M3, cs, s, out_slice(dst, b));
            }
        }
    }
}

/// [`dequantize`] of E4M3 blocks into BF16 on a vector with native word instructions: for
/// the scale bytes `10..=246` the specification's product is exact and normal (module docs),
/// which is what the `Ocp` word path computes (`words::widen_words_pow2`, `2 · LANES`
/// values a vector, the scale added to the exponent fields). The one difference is the NaN
/// code: MLX's BF16 NaN is `0x7FC0` for both signs (`mlx_fp8_nan`), where the word widening
/// gives the quiet NaN with the code's sign, `0xFFC0` for code `0xFF`, so the words come
/// from [`words::widen_words_pow2_unsigned_nan`], which blends the unsigned NaN in after
/// the sign. Other scale bytes
/// (including `0xFF`, which MLX multiplies as +Inf) run the specification after the loop.
///
/// # Safety
/// As for [`dequantize`] into BF16; `V::WORDS`.
#[inline(always)]
unsafe fn e4m3_bf16_words<V: Vector>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    let mut skipped = false;
    let table = const { words::sub_table::<F8E4M3>(Enc::Bf16) };
    // SAFETY: the table holds 16 words, 8 u32: the first load reads `min(LANES, 8)` of them
    // from word 0, the second (only for 4 lanes, where a vector holds 8 words) the 4 from
    // word 8 on; every other access is inside block `b < blocks` of the caller's buffers
    // (32 code bytes and 32 values, a multiple of `2 · LANES`); the CPU has `V`'s features.
    unsafe {
        let t0 = V::load_u32(table.as_ptr().cast(), V::LANES.min(8));
        let t1 = if V::LANES < 8 {
            V::load_u32(table.as_ptr().add(8).cast(), V::LANES)
        } else {
            t0
        };
        let sub = [t0, t1];
        let w = 2 * V::LANES;
        for b in 0..blocks {
            let s = *scales.add(b);
            if !(10..=246).contains(&s) {
                skipped = true;
                continue;
            }
            let c = codes.add(b * BLOCK);
            let d = dst.add(b * BLOCK * 2);
            let step = V::splat((((s as i32 - 127) << 7) as u32 & 0xFFFF) * 0x0001_0001);
            let mut i = 0;
            while i < BLOCK {
                let code = V::load_u8_words(c.add(i), w);
                words::widen_words_pow2_unsigned_nan::<V, F8E4M3>(code, &sub, step)
                    .store_words(d.add(2 * i), w);
                i += w;
            }
        }
        if skipped {
            e4m3_spec_blocks::<BF16>(codes, scales, blocks, (10, 246), dst);
        }
    }
}

/// The `Mlx` profile's dequantization of `blocks` whole blocks into `D` (a
/// [`MxProfileDequantFn`](crate::block::spec::kernels::MxProfileDequantFn) body; module docs).
///
/// # Safety
/// As for `MxProfileDequantFn`; the CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn dequantize<V: Vector, D: BlockDest, const VARIANT: usize>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    let nv = per_block::<V>();
    let l = V::LANES;
    let e4m3 = VARIANT == MLX_E4M3;
    let ggml = VARIANT == MLX_E2M1_GGML;
    let range = match (D::KIND, e4m3) {
        (DestKind::F16, _) => 103..=142,
        (_, true) => 10..=246,
        (_, false) => 2..=252,
    };
    if e4m3 && V::WORDS && D::KIND == DestKind::Bf16 {
        // SAFETY: the caller's guarantee, forwarded.
        unsafe { e4m3_bf16_words::<V>(codes, scales, blocks, dst) };
        return;
    }
    if !e4m3 && D::KIND != DestKind::F16 {
        // The blocks' rows of byte planes or words (code 8 is −0 here); the blocks of other
        // scales after the loop.
        // SAFETY: the caller's guarantee, forwarded.
        unsafe {
            let skipped = if ggml {
                super::ggml::planes_blocks::<V, D, true>(codes, scales, blocks, dst, true)
            } else {
                super::ggml::planes_blocks::<V, D, false>(codes, scales, blocks, dst, true)
            };
            if skipped {
                e2m1_spec_blocks::<D, VARIANT>(codes, scales, blocks, (2, 252), dst);
            }
        }
        return;
    }
    // SAFETY: every access is inside block `b < blocks` of the buffers (the caller's
    // guarantee), and the CPU has `V`'s features.
    unsafe {
        let table = E2m1Table::<V>::new(true);
        for b in 0..blocks {
            if e4m3 {
                let s = *scales.add(b);
                let p = codes.add(b * BLOCK);
                let mut c = [V::splat(0); 8];
                let mut nan = V::splat(0);
                for (j, v) in c.iter_mut().enumerate().take(nv) {
                    *v = V::load_u8(p.add(j * l), l);
                    nan = nan.max_u32(v.and(V::splat(0x7F)));
                }
                let has_nan = nan.reduce_max_u32() == 0x7F;
                if !range.contains(&s) || (has_nan && D::KIND == DestKind::F16) {
                    let cs = &*p.cast::<[u8; BLOCK]>();
                    mlx_dequantize_block::<D>(MxElement::E4M3, cs, s, out_slice(dst, b));
                    continue;
                }
                let shift = V::splat(((s as i32 - 127) << 23) as u32);
                let zero = V::splat(0);
                let nan_bits = V::splat(match D::KIND {
                    DestKind::F32 => 0x7FF0_0000,
                    _ => 0x7FC0_0000,
                });
                for (j, cj) in c.iter().enumerate().take(nv) {
                    let v = lanes::widen::<V, F8E4M3>(*cj);
                    let mag = v.and(V::splat(0x7FFF_FFFF));
                    let scaled = V::select(mag.eq(zero), v, v.add(shift));
                    let is_nan = cj.and(V::splat(0x7F)).eq(V::splat(0x7F));
                    let nan_v = if D::KIND == DestKind::F32 {
                        nan_bits.or(v.and(V::splat(0x8000_0000)))
                    } else {
                        nan_bits
                    };
                    store_dst::<V, D>(V::select(is_nan, nan_v, scaled), dst, b * BLOCK + j * l);
                }
            } else {
                let (c, s) = if ggml {
                    load_fp4::<V, true>(codes, scales, b)
                } else {
                    load_fp4::<V, false>(codes, scales, b)
                };
                if !range.contains(&s) {
                    let (cs, s) = if ggml {
                        load_fp4_scalar::<true>(codes, scales, b)
                    } else {
                        load_fp4_scalar::<false>(codes, scales, b)
                    };
                    mlx_dequantize_block::<D>(MxElement::E2M1, &cs, s, out_slice(dst, b));
                    continue;
                }
                if V::FAST_LOOKUP16 {
                    let t = table.scaled(s);
                    for (j, cj) in c.iter().enumerate().take(nv) {
                        store_dst::<V, D>(V::lookup16(&t, *cj), dst, b * BLOCK + j * l);
                    }
                } else {
                    for (j, cj) in c.iter().enumerate().take(nv) {
                        store_dst::<V, D>(e2m1_scaled(*cj, s, true), dst, b * BLOCK + j * l);
                    }
                }
            }
        }
    }
}
