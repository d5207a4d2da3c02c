//! The MX `Ggml` and `Mlx` profiles and the ggml `block_mxfp4` layout on every SIMD
//! backend give the Scalar backend's bits (the scalar specification, itself tested against
//! gguf and MLX in `tests/block_vectors.rs`): quantization from f32, BF16 and F16 of blocks
//! chosen to hit every branch of the scale rules (amax at and around every power of two
//! and `max · 2^k`, the mantissas where gguf's f32 `log2` rounds up), every fp4 midpoint
//! and its neighbours under many scales, zero, subnormal, NaN and infinite blocks, random
//! rows; dequantization of every (scale byte, code) pair to f32, BF16 and F16. Shapes have
//! several rows, strides, short last blocks (planar layout), and the outputs sit inside
//! larger buffers whose canaries must survive.
//!
//! On x86-64 each SIMD conversion also runs under hostile MXCSR values (directed rounding,
//! FTZ, DAZ), on aarch64 under hostile FPCR values, set and restored around the call only.

use vcvt::block::{BlockSource, Mx, MxElement, MxLayout, MxProfile, Shape};
use vcvt::{BF16, Backend, F16};

mod block_harness;
use block_harness::*;

// ---------------------------------------------------------------------------------------
// MXCSR / FPCR
// ---------------------------------------------------------------------------------------

/// MXCSR values the SIMD conversions also run under (`None`: as the test runs, the
/// default). Rounding up or toward zero, FTZ and DAZ.
#[cfg(target_arch = "x86_64")]
const MXCSRS: [Option<u32>; 4] = [
    None,
    Some(0x1F80 | (2 << 13) | (1 << 15) | (1 << 6)),
    Some(0x1F80 | (1 << 13) | (1 << 6)),
    Some(0x1F80 | (3 << 13) | (1 << 15)),
];
/// On aarch64 the same list holds FPCR values: flush-to-zero with rounding toward +Inf;
/// default NaN with alternative half precision and FZ16; rounding toward zero.
#[cfg(target_arch = "aarch64")]
const MXCSRS: [Option<u32>; 4] = [
    None,
    Some((1 << 24) | (1 << 22)),
    Some((1 << 25) | (1 << 26) | (1 << 19)),
    Some(3 << 22),
];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const MXCSRS: [Option<u32>; 1] = [None];

// ---------------------------------------------------------------------------------------
// Formats, sources and destinations
// ---------------------------------------------------------------------------------------

/// The formats under test: (name, format).
fn formats() -> Vec<(&'static str, Mx)> {
    let fp4 = Mx::new(MxElement::E2M1);
    vec![
        ("ggml planar", fp4.profile(MxProfile::Ggml)),
        (
            "ggml block_mxfp4",
            fp4.profile(MxProfile::Ggml).layout(MxLayout::Ggml),
        ),
        ("mlx mxfp4", fp4.profile(MxProfile::Mlx)),
        (
            "mlx mxfp4 block_mxfp4",
            fp4.profile(MxProfile::Mlx).layout(MxLayout::Ggml),
        ),
        (
            "mlx mxfp8",
            Mx::new(MxElement::E4M3).profile(MxProfile::Mlx),
        ),
        // The OCP rules in the ggml layout: the planar kernels with each block repacked.
        (
            "ocp block_mxfp4",
            fp4.profile(MxProfile::Ocp).layout(MxLayout::Ggml),
        ),
        (
            "ceil block_mxfp4",
            fp4.profile(MxProfile::Ceil).layout(MxLayout::Ggml),
        ),
    ]
}

fn is_ggml_layout(mx: &Mx) -> bool {
    // The ggml layout has no separate scales.
    mx.scales_len(Shape::vector(32)).unwrap() == 0
}

/// Canary margin around every destination.
const PAD: usize = 7;

// ---------------------------------------------------------------------------------------
// Quantization
// ---------------------------------------------------------------------------------------

/// Quantizes with `mx` into codes and scales with canary bytes around them.
fn quant<S: BlockSource>(mx: Mx, src: &[S], shape: Shape, csr: Option<u32>) -> (Vec<u8>, Vec<u8>) {
    let n = mx.data_len(shape).unwrap();
    let m = mx.scales_len(shape).unwrap();
    let mut data = vec![0xA5u8; n + 2 * PAD];
    let mut scales = vec![0x5Au8; m + 2 * PAD];
    let mut r = Ok(());
    with_mxcsr(csr, || {
        r = mx.quantize(
            src,
            shape,
            &mut data[PAD..PAD + n],
            &mut scales[PAD..PAD + m],
        );
    });
    r.unwrap();
    (data, scales)
}

fn check_quant_as<S: BlockSource>(src: &[S], shape: Shape, what: &str) {
    for (name, mx) in formats() {
        if is_ggml_layout(&mx) && !shape.cols().is_multiple_of(32) {
            continue;
        }
        let reference = quant(mx.on(Backend::Scalar), src, shape, None);
        assert!(reference.0[..PAD].iter().all(|&x| x == 0xA5));
        assert!(
            reference.0[reference.0.len() - PAD..]
                .iter()
                .all(|&x| x == 0xA5)
        );
        for b in simd_backends() {
            for csr in MXCSRS {
                let got = quant(mx.on(b), src, shape, csr);
                for (part, e, g) in [
                    ("codes", &reference.0, &got.0),
                    ("scales", &reference.1, &got.1),
                ] {
                    let e: Vec<u32> = e.iter().map(|&x| x as u32).collect();
                    let g: Vec<u32> = g.iter().map(|&x| x as u32).collect();
                    same_bits(
                        &|| {
                            format!(
                                "{what}: {name} {part} from {} on {b}, MXCSR {csr:x?}, {shape:?}",
                                core::any::type_name::<S>()
                            )
                        },
                        &e,
                        &g,
                    );
                }
            }
        }
    }
}

/// Checks `src` as f32, and rounded to BF16 and to F16.
fn check_quant(src: &[f32], shape: Shape, what: &str) {
    check_quant_as(src, shape, what);
    let b: Vec<BF16> = src.iter().map(|&x| BF16::from_f32(x)).collect();
    check_quant_as(&b, shape, what);
    let h: Vec<F16> = src.iter().map(|&x| F16::from_f32(x)).collect();
    check_quant_as(&h, shape, what);
    // The same values with their exponents folded into F16's range (as f32 they mostly
    // overflow F16 or vanish in it).
    let h: Vec<F16> = src
        .iter()
        .map(|&x| {
            let b = x.to_bits();
            let e = (b >> 23) & 0xFF;
            if e == 0 || e == 255 {
                F16::from_f32(x)
            } else {
                F16::from_f32(f32::from_bits((b & 0x807F_FFFF) | ((100 + e % 43) << 23)))
            }
        })
        .collect();
    check_quant_as(&h, shape, what);
}

/// Interesting amax values: powers of two and `max · 2^k` (6, 448 and 1), one and a few
/// ulps around, the mantissas where gguf's f32 `log2` rounds up to the next integer, over
/// the whole exponent range, plus subnormals and the largest finite.
fn amax_values() -> Vec<u32> {
    let mut v = Vec::new();
    for max in [6.0f32, 448.0, 1.0, 1.5, 1.75] {
        let m = max.to_bits();
        for e in -140i32..=127 {
            let field = (m >> 23) as i32 + e;
            if !(1..=254).contains(&field) {
                continue;
            }
            let x = (m & 0x007F_FFFF) | ((field as u32) << 23);
            v.extend([x - 1, x, x + 1, x - 3, x + 7]);
        }
    }
    // Just below every power of two: where log2f rounds up (to 16 ulps below).
    for field in 1u32..=254 {
        // (0x4000 below: the fraction 0x7FC000 where the kernels' scale skips the check.)
        for k in [1u32, 2, 3, 5, 8, 13, 16, 64, 200, 0x3FFF, 0x4000, 0x4001] {
            v.push((field << 23) - k);
        }
    }
    v.extend([
        1,
        2,
        0x0040_0000,
        0x003F_FFFF,
        0x0040_0001,
        0x007F_FFFF,
        0x7F7F_FFFF,
    ]);
    v
}

/// A block of values at or below `amax` in magnitude, with `amax` at a random lane.
fn block_with_amax(rng: &mut Rng, amax: u32, out: &mut [f32]) {
    for x in out.iter_mut() {
        let r = rng.u32();
        let mag = match r % 8 {
            0 => 0,
            1 => amax >> (r % 24),
            2 => amax.saturating_sub(r % 1000),
            3 => amax.saturating_sub((r % 64) << 23),
            _ => amax.saturating_sub(rng.u32() % (amax.max(1) & 0x3FFF_FFFF).max(1)),
        };
        *x = f32::from_bits(mag.min(amax) | (rng.u32() & 0x8000_0000));
    }
    let i = rng.below(out.len() as u32) as usize;
    out[i] = f32::from_bits(amax | (rng.u32() & 0x8000_0000));
}

/// One block per amax value, rows of 8 blocks, stride 8·32 + 5.
fn blocks_src(amaxes: &[u32], seed: u64) -> (Vec<f32>, Shape) {
    let mut rng = Rng(seed);
    let cols = 8 * 32;
    let stride = cols + 5;
    let rows = amaxes.len().div_ceil(8);
    let shape = Shape::matrix(rows, cols).with_stride(stride);
    let mut src = vec![f32::from_bits(0x7FC0_0000); shape.len()];
    for (k, &a) in amaxes.iter().enumerate() {
        let lo = (k / 8) * stride + 32 * (k % 8);
        block_with_amax(&mut rng, a, &mut src[lo..lo + 32]);
    }
    (src, shape)
}

#[test]
fn quantize_amax_blocks() {
    let (src, shape) = blocks_src(&amax_values(), 0x5151_5151_2323_2323);
    check_quant(&src, shape, "amax blocks");
}

/// Every fp4 midpoint (and the E4M3 ties) and its neighbours, times `2^k` for scales
/// across the range, each block holding its amax (6, 12 or 448 times the power) so the
/// scale is the one the midpoints were built for.
#[test]
fn quantize_midpoints() {
    let mids = [
        0.25f32, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
    ];
    let e4m3_ties = [
        1.0625f32,
        1.1875,
        17.0,
        240.0,
        0.001953125 * 1.5,
        0.009765625,
    ];
    let mut src = Vec::new();
    let mut rows = 0;
    for k in [-100i32, -60, -20, -7, -3, -1, 0, 1, 2, 5, 13, 40, 100, 120] {
        for top in [6.0f32, 12.0, 448.0, 5.9, 7.0] {
            let p = (2f32).powi(k);
            let mut blk: Vec<f32> = Vec::new();
            for &m in mids.iter().chain(&e4m3_ties) {
                let x = m * p;
                for d in [-1i32, 0, 1] {
                    let b = (x.to_bits() as i32 + d) as u32;
                    blk.push(f32::from_bits(b));
                }
            }
            blk.truncate(31 * 4);
            let mut row = Vec::new();
            for (i, c) in blk.chunks(31).enumerate() {
                let mut c = c.to_vec();
                c.resize(31, 0.0);
                c.push(top * p);
                for (j, x) in c.iter_mut().enumerate() {
                    if (i + j) % 3 == 0 {
                        *x = -*x;
                    }
                }
                row.extend(c);
            }
            row.resize(128, 0.0);
            src.extend(row);
            rows += 1;
        }
    }
    check_quant(&src, Shape::matrix(rows, 128), "midpoints");
}

#[test]
fn quantize_random_magnitudes() {
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    let cols = 32 * 12;
    let rows = 30;
    let shape = Shape::matrix(rows, cols);
    let mut src = vec![0f32; shape.len()];
    for (i, blk) in src.chunks_mut(32).enumerate() {
        let e0 = if i % 2 == 0 {
            100 + rng.below(40)
        } else {
            rng.below(254)
        };
        let spread = 1 + rng.below(if i % 3 == 0 { 254 } else { 12 });
        for x in blk.iter_mut() {
            let e = (e0 + rng.below(spread)).min(254);
            *x = f32::from_bits((rng.u32() & 0x807F_FFFF) | (e << 23));
        }
    }
    check_quant(&src, shape, "random magnitudes");
}

#[test]
fn quantize_specials() {
    let mut rng = Rng(99);
    let specials = [
        0u32,
        0x8000_0000,
        1,
        0x8000_0001,
        0x007F_FFFF,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0xFFC0_0001,
        0x7F80_0001,
        0x7F7F_FFFF,
        0x3F80_0000,
    ];
    let cols = 32 * 10;
    let rows = specials.len();
    let shape = Shape::matrix(rows, cols).with_stride(cols + 3);
    let mut src = vec![0f32; shape.len()];
    for r in 0..rows {
        let row = &mut src[r * (cols + 3)..r * (cols + 3) + cols];
        for (b, blk) in row.chunks_mut(32).enumerate() {
            match b {
                0 => blk
                    .iter_mut()
                    .for_each(|x| *x = f32::from_bits(rng.u32() & 0x8000_0000)),
                1 => blk
                    .iter_mut()
                    .for_each(|x| *x = f32::from_bits(rng.u32() & 0x807F_FFFF)),
                2 => blk
                    .iter_mut()
                    .for_each(|x| *x = f32::from_bits(specials[r])),
                _ => {
                    for x in blk.iter_mut() {
                        *x = f32::from_bits(
                            (rng.u32() & 0x807F_FFFF) | ((110 + rng.below(30)) << 23),
                        );
                    }
                    let i = rng.below(32) as usize;
                    blk[i] = f32::from_bits(specials[(r + b) % specials.len()]);
                }
            }
        }
    }
    check_quant(&src, shape, "specials");
}

#[test]
fn quantize_short_rows() {
    let mut rng = Rng(4242);
    for cols in [1, 2, 31, 32, 33, 63, 64, 97, 128, 160] {
        let shape = Shape::matrix(3, cols).with_stride(cols + 4);
        let src: Vec<f32> = (0..shape.len())
            .map(|_| f32::from_bits((rng.u32() & 0x807F_FFFF) | ((120 + rng.below(16)) << 23)))
            .collect();
        check_quant(&src, shape, "short rows");
    }
}

// ---------------------------------------------------------------------------------------
// Dequantization
// ---------------------------------------------------------------------------------------

fn dequant<D: Bits>(
    mx: Mx,
    data: &[u8],
    scales: &[u8],
    shape: Shape,
    csr: Option<u32>,
) -> Vec<u32> {
    let mut buf = vec![D::sentinel(); shape.len() + 2 * PAD];
    let mut r = Ok(());
    with_mxcsr(csr, || {
        r = mx.dequantize(data, scales, shape, &mut buf[PAD..PAD + shape.len()]);
    });
    r.unwrap();
    buf.iter().map(|x| x.bits()).collect()
}

fn check_dequant<D: Bits>(extra_cols: usize, extra_stride: usize) {
    let mut rng = Rng(7 + extra_cols as u64);
    for (name, mx) in formats() {
        let ggml = is_ggml_layout(&mx);
        if ggml && !extra_cols.is_multiple_of(32) {
            continue;
        }
        // Every scale byte (one per row) with every code, in random order.
        let e4m3 = mx.element() == MxElement::E4M3;
        let cols = 256 + extra_cols;
        let rows = 256;
        let shape = Shape::matrix(rows, cols).with_stride(cols + extra_stride);
        let n = mx.data_len(shape).unwrap();
        let m = mx.scales_len(shape).unwrap();
        let mut data: Vec<u8> = (0..n).map(|_| rng.u32() as u8).collect();
        if e4m3 {
            // Every code in each row, rotated by 32 in the odd rows, so that the NaN codes
            // (0x7F, 0xFF) sit at the end of a 64-code vector in some rows and in its middle
            // (the first of two blocks) in others.
            for r in 0..rows {
                for c in 0..256 {
                    data[r * cols + c] = (c + 32 * (r % 2)) as u8;
                }
            }
        }
        let nblocks = cols.div_ceil(32);
        let scales: Vec<u8> = (0..m).map(|i| (i / nblocks) as u8).collect();
        if ggml {
            for r in 0..rows {
                for b in 0..nblocks {
                    data[r * nblocks * 17 + b * 17] = r as u8;
                }
            }
        }
        let reference = dequant::<D>(mx.on(Backend::Scalar), &data, &scales, shape, None);
        for b in simd_backends() {
            for csr in MXCSRS {
                let got = dequant::<D>(mx.on(b), &data, &scales, shape, csr);
                same_bits(
                    &|| format!("{name} -> {} on {b}, MXCSR {csr:x?}, {shape:?}", D::NAME),
                    &reference,
                    &got,
                );
            }
        }
    }
}

#[test]
fn dequantize_every_scale_and_code() {
    for (extra_cols, extra_stride) in [(0, 0), (32, 3), (7, 1), (33, 0)] {
        check_dequant::<f32>(extra_cols, extra_stride);
        check_dequant::<BF16>(extra_cols, extra_stride);
        check_dequant::<F16>(extra_cols, extra_stride);
    }
}
