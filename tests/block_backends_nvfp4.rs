//! Every SIMD backend's NVFP4 kernels give the Scalar backend's bits (the specification,
//! `src/block/spec/nvfp4.rs`): dequantization of every (scale byte, code byte) pair under
//! many tensor scales, for every profile, layout and destination; quantization of blocks
//! chosen to hit every path of the profiles' scale and rounding rules (zero, subnormal,
//! NaN/Inf, amax at and around powers of two, every E2M1 midpoint and its neighbours,
//! MLX's far-from-the-grid values; for `Ggml`, every UE4M3 scale with values around every
//! midpoint times it) from f32, BF16 and F16, for both layouts, with several
//! rows, strides and short last blocks, and destinations inside sentinel-filled buffers.
//!
//! On x86-64 each SIMD conversion also runs under hostile MXCSR values (directed rounding,
//! FTZ, DAZ), on aarch64 under hostile FPCR values, set and restored around the call only.

use vcvt::block::{BlockSource, NvLayout, NvProfile, Nvfp4, Shape};
use vcvt::{BF16, Backend, F16};

mod block_harness;
use block_harness::*;

// ---------------------------------------------------------------------------------------
// MXCSR
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
// Destinations as bits
// ---------------------------------------------------------------------------------------

/// Canary margin around every destination.
const PAD: usize = 7;

// ---------------------------------------------------------------------------------------
// NVFP4
// ---------------------------------------------------------------------------------------

const PROFILES: [NvProfile; 3] = [NvProfile::ModelOpt, NvProfile::Mlx, NvProfile::Ggml];
const LAYOUTS: [NvLayout; 2] = [NvLayout::Planar, NvLayout::Ggml];

/// Tensor scales that reach every path: the profiles' usual ones, powers of two (ggml's
/// exact route) and other values, tiny (subnormal multipliers), huge (overflowing ones),
/// negative, zero, subnormal, infinite and NaN (left to the specification).
fn tensor_scales() -> Vec<f32> {
    vec![
        1.0,
        2688.0,
        4.0 / 2688.0,
        0.37,
        0.5,
        pow2(-100),
        pow2(-101),
        pow2(100),
        1e-30,
        3e37,
        -1.5,
        -0.25,
        0.0,
        1e-40,
        f32::INFINITY,
        f32::NAN,
    ]
}

fn dequant<D: Bits>(
    nv: Nvfp4,
    data: &[u8],
    scales: &[u8],
    g: f32,
    shape: Shape,
    csr: Option<u32>,
) -> Vec<u32> {
    let mut buf = vec![D::sentinel(); shape.len() + 2 * PAD];
    let mut r = Ok(());
    with_mxcsr(csr, || {
        r = nv.dequantize(data, scales, g, shape, &mut buf[PAD..PAD + shape.len()]);
    });
    r.unwrap();
    buf.iter().map(|x| x.bits()).collect()
}

fn check_dequant<D: Bits>(nv: Nvfp4, data: &[u8], scales: &[u8], g: f32, shape: Shape) {
    let reference = dequant::<D>(nv.on(Backend::Scalar), data, scales, g, shape, None);
    let s = D::sentinel().bits();
    assert!(reference[..PAD].iter().all(|&x| x == s));
    assert!(reference[reference.len() - PAD..].iter().all(|&x| x == s));
    for b in simd_backends() {
        for csr in MXCSRS {
            let got = dequant::<D>(nv.on(b), data, scales, g, shape, csr);
            same_bits(
                &|| {
                    format!(
                        "{nv:?} g={g:e} -> {} on {b}, MXCSR {csr:x?}, {shape:?}",
                        D::NAME
                    )
                },
                &reference,
                &got,
            );
        }
    }
}

/// Every scale byte with every code byte: row `r` has scale byte `r` (planar) or scale bytes
/// `r, r+1, …` (ggml), and its codes run through all 256 bytes.
fn dequant_inputs(nv: Nvfp4, shape: Shape) -> (Vec<u8>, Vec<u8>) {
    let mut data = vec![0u8; nv.data_len(shape).unwrap()];
    let mut scales = vec![0u8; nv.scales_len(shape).unwrap()];
    let row_bytes = data.len() / shape.rows();
    for (r, row) in data.chunks_mut(row_bytes).enumerate() {
        for (i, b) in row.iter_mut().enumerate() {
            *b = (i * 7 + r) as u8;
        }
        if !scales.is_empty() {
            let n = scales.len() / shape.rows();
            for (i, s) in scales[r * n..(r + 1) * n].iter_mut().enumerate() {
                *s = (r + 97 * i) as u8;
            }
        }
    }
    if scales.is_empty() {
        // ggml: scale byte i of block j of row r.
        for (r, row) in data.chunks_mut(row_bytes).enumerate() {
            for (j, blk) in row.chunks_mut(36).enumerate() {
                for (i, s) in blk[..4].iter_mut().enumerate() {
                    *s = (r + 61 * j + 4 * i) as u8;
                }
            }
        }
    }
    (data, scales)
}

#[test]
fn nvfp4_dequantize_every_scale_and_code() {
    for profile in PROFILES {
        for layout in LAYOUTS {
            let nv = Nvfp4::new().profile(profile).layout(layout);
            // Planar: a short last block and a stride, and rows whose whole blocks leave an
            // odd group (3, and 16 + 5: the AVX-512 kernel converts blocks in pairs, the odd
            // one alone); ggml: whole 64-value blocks (20 per row: a group of 16 and one of 4).
            let shapes = match layout {
                NvLayout::Planar => vec![
                    Shape::matrix(256, 512 + 5).with_stride(530),
                    Shape::matrix(3, 16),
                    Shape::matrix(41, 3 * 16 + 7).with_stride(60),
                    Shape::matrix(9, 21 * 16),
                ],
                _ => vec![
                    Shape::matrix(256, 512).with_stride(520),
                    Shape::matrix(2, 64),
                    Shape::matrix(7, 5 * 64),
                ],
            };
            for shape in shapes {
                let (data, scales) = dequant_inputs(nv, shape);
                for g in tensor_scales() {
                    check_dequant::<f32>(nv, &data, &scales, g, shape);
                    check_dequant::<BF16>(nv, &data, &scales, g, shape);
                    check_dequant::<F16>(nv, &data, &scales, g, shape);
                }
            }
        }
    }
}

/// `2^k` for `-149 <= k <= 127`, from its bits.
fn pow2(k: i32) -> f32 {
    f32::from_bits(if k >= -126 {
        ((k + 127) as u32) << 23
    } else {
        1 << (k + 149)
    })
}

/// Blocks of 16 values that reach every path of the scale rules and the element roundings.
fn quant_values() -> Vec<f32> {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    let mut v: Vec<f32> = Vec::new();
    let block = |b: &mut Vec<f32>, vals: &[f32]| {
        assert!(vals.len() <= 16);
        let mut x = [0f32; 16];
        x[..vals.len()].copy_from_slice(vals);
        b.extend_from_slice(&x);
    };
    // Zero, −0, mixed, subnormal and tiny blocks.
    block(&mut v, &[]);
    block(&mut v, &[-0.0; 16]);
    block(
        &mut v,
        &[
            0.0,
            -0.0,
            1e-45,
            -1e-45,
            1e-40,
            -3e-39,
            1.1754942e-38,
            -1.1754944e-38,
        ],
    );
    block(&mut v, &[1e-41, -2e-42, 5e-44, -1e-45]);
    block(&mut v, &[1e-38, -7e-39, 3e-39, 2e-39, -1e-39]);
    // NaN and infinities.
    block(&mut v, &[1.0, f32::NAN, -2.0, 3.0]);
    block(&mut v, &[-f32::NAN, 0.5]);
    block(&mut v, &[f32::from_bits(0x7F80_0001), 1e30]);
    block(&mut v, &[1.0, f32::INFINITY, -2.0, 0.0, -0.0]);
    block(&mut v, &[f32::NEG_INFINITY, 6.0, -1e38]);
    block(&mut v, &[f32::INFINITY, f32::NEG_INFINITY]);
    // Every E2M1 midpoint and its neighbours, under amax = 6·2^k.
    let mids = [0.25f32, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0];
    for k in [
        -130, -126, -20, -9, -6, -1, 0, 1, 3, 8, 9, 20, 100, 120, 126,
    ] {
        let s = pow2(k);
        for &m in &mids {
            let up = f32::from_bits((m * s).to_bits() + 1);
            let down = f32::from_bits((m * s).to_bits() - 1);
            block(
                &mut v,
                &[
                    6.0 * s,
                    m * s,
                    -m * s,
                    up,
                    -up,
                    down,
                    -down,
                    0.5 * s,
                    -6.0 * s,
                ],
            );
        }
    }
    // amax at and around powers of two, the other values random below it.
    for e in (-149..=127).step_by(3) {
        for d in [-1i32, 0, 1] {
            let a = f32::from_bits((pow2(e).to_bits() as i32 + d) as u32);
            let mut x = vec![a];
            for _ in 0..15 {
                let f = rng.u32() as f32 / u32::MAX as f32;
                x.push(if rng.below(2) == 0 { a * f } else { -a * f });
            }
            block(&mut v, &x);
        }
    }
    // Random magnitudes, sign and exponent.
    for _ in 0..300 {
        let e = rng.below(60) as i32 - 30;
        let mut x = [0f32; 16];
        for y in &mut x {
            let bits = rng.u32() & 0x807F_FFFF | (((127 + e + rng.below(5) as i32) as u32) << 23);
            *y = f32::from_bits(bits);
        }
        block(&mut v, &x);
    }
    v
}

type QuantOut = (Vec<u8>, Vec<u8>, u32);

fn quant<S: BlockSource>(
    nv: Nvfp4,
    src: &[S],
    shape: Shape,
    g: Option<f32>,
    csr: Option<u32>,
) -> QuantOut {
    let mut data = vec![0xA5u8; nv.data_len(shape).unwrap()];
    let mut scales = vec![0xA5u8; nv.scales_len(shape).unwrap()];
    let mut r = Ok(0.0);
    with_mxcsr(csr, || {
        r = nv.quantize(src, shape, &mut data, &mut scales, g);
    });
    (data, scales, r.unwrap().to_bits())
}

fn check_quant<S: BlockSource>(nv: Nvfp4, src: &[S], shape: Shape, g: Option<f32>, what: &str) {
    let reference = quant(nv.on(Backend::Scalar), src, shape, g, None);
    for b in simd_backends() {
        for csr in MXCSRS {
            let got = quant(nv.on(b), src, shape, g, csr);
            let ctx = || format!("{what}: {nv:?} g={g:?} on {b}, MXCSR {csr:x?}, {shape:?}");
            assert_eq!(reference.2, got.2, "tensor scale: {}", ctx());
            let bytes = |v: &[u8]| v.iter().map(|&x| x as u32).collect::<Vec<_>>();
            same_bits(
                &|| format!("scales: {}", ctx()),
                &bytes(&reference.1),
                &bytes(&got.1),
            );
            same_bits(
                &|| format!("data: {}", ctx()),
                &bytes(&reference.0),
                &bytes(&got.0),
            );
        }
    }
}

fn quant_all_sources(values: &[f32], shape: Shape, what: &str) {
    let bf: Vec<BF16> = values.iter().map(|&x| BF16::from_f32(x)).collect();
    let h: Vec<F16> = values.iter().map(|&x| F16::from_f32(x)).collect();
    for profile in [NvProfile::ModelOpt, NvProfile::Mlx, NvProfile::Ggml] {
        for layout in LAYOUTS {
            if layout == NvLayout::Ggml && !shape.cols().is_multiple_of(64) {
                continue;
            }
            let nv = Nvfp4::new().profile(profile).layout(layout);
            let mut gs: Vec<Option<f32>> = vec![None];
            gs.extend(
                [
                    1.0f32,
                    2688.0,
                    1e-3,
                    0.37,
                    1e-30,
                    3e37,
                    -0.5,
                    0.0,
                    1e-40,
                    f32::NAN,
                    f32::INFINITY,
                ]
                .map(Some),
            );
            for g in gs {
                check_quant(nv, &values[..shape.len()], shape, g, what);
                check_quant(nv, &bf[..shape.len()], shape, g, what);
                check_quant(nv, &h[..shape.len()], shape, g, what);
            }
        }
    }
}

#[test]
fn nvfp4_quantize_adversarial_blocks() {
    let v = quant_values();
    // One long row (every block in one call), then rows with a stride.
    let n = v.len() / 64 * 64;
    quant_all_sources(&v, Shape::vector(n), "one row");
    let cols = 320;
    let rows = v.len() / 330;
    quant_all_sources(
        &v,
        Shape::matrix(rows, cols).with_stride(330),
        "strided rows",
    );
}

#[test]
fn nvfp4_quantize_short_rows_and_shapes() {
    let v = quant_values();
    for (rows, cols, stride) in [
        (1, 1, 1),
        (1, 15, 15),
        (2, 16, 19),
        (3, 17, 17),
        (3, 31, 40),
        (4, 64, 64),
        (5, 64 + 7, 80),
        (2, 250, 251),
        (7, 128, 129),
    ] {
        let shape = Shape::matrix(rows, cols).with_stride(stride);
        // Start at several offsets so every kind of block meets every position.
        for off in [0, 16 * 11, 16 * 60 + 3] {
            quant_all_sources(&v[off..], shape, "short rows");
        }
    }
}

/// The value of UE4M3 code `c` (`1 ..= 0x7E`), from its definition: E4M3 with bias 7,
/// subnormals `m · 2^-9`.
fn ue4m3(c: u32) -> f32 {
    let (e, m) = ((c >> 3) as i32, (c & 7) as f32);
    if e == 0 {
        m * pow2(-9)
    } else {
        (1.0 + m / 8.0) * pow2(e - 7)
    }
}

/// Blocks for the `Ggml` quantization kernels: for every non-zero UE4M3 scale `u`, a block
/// with `amax = 6u` (scale byte exactly `u`) whose other values sit on and within a few
/// units in the last place of every E2M1 midpoint times `u` (where a rounded `|x| / u`
/// can land on a midpoint), both signs; blocks whose `amax / 6` rounds half up into the
/// next binade or to the clamp (248 and above, far above), tiny scales (subnormal and zero
/// codes), and zero, NaN and infinite values among such blocks.
fn ggml_values() -> Vec<f32> {
    let mids = [0.25f32, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0];
    let mut v = Vec::new();
    let ulps = |x: f32, d: i32| f32::from_bits((x.to_bits() as i32 + d) as u32);
    for c in 1..=0x7Eu32 {
        let u = ue4m3(c);
        let mut near = Vec::new();
        for &m in &mids {
            for d in -2..=2 {
                near.push(ulps(m * u, d));
            }
        }
        for (k, chunk) in near.chunks(15).enumerate() {
            v.push(if k % 2 == 0 { 6.0 * u } else { -6.0 * u });
            for (i, &x) in chunk.iter().enumerate() {
                v.push(if (i + k) % 3 == 0 { -x } else { x });
            }
            v.resize(v.len().next_multiple_of(16), 0.0);
        }
    }
    // amax / 6 just below, at and above each rounding point (half-up carries into the next
    // binade), the clamp at 248 · 6 and far beyond it, and tiny scales.
    for a in [
        6.0 * 15.5,
        6.0 * 15.75,
        6.0 * 247.9,
        6.0 * 248.0,
        6.0 * 448.0,
        1e9,
        3e38,
        6.0 * 7.5 * pow2(-9),
        6.0 * 0.5 * pow2(-9),
        6.0 * 0.49 * pow2(-9),
        6.0 * pow2(-6),
        ulps(6.0 * pow2(-6), -1),
    ] {
        for d in [-1, 0, 1] {
            let a = ulps(a, d);
            let mut x = vec![a, -a * 0.9, a * 0.51, a / 3.0, -a / 12.0, a / 24.0];
            x.extend([a * 0.3, a * 0.7, -a * 0.1, a * 0.05, 0.0, -0.0]);
            x.resize(16, a / 7.0);
            v.extend(x);
        }
    }
    // Zero, NaN and infinite values in otherwise ordinary blocks.
    for special in [0.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut x = vec![special];
        x.extend((1..16).map(|i| i as f32 * 0.37 - 2.0));
        v.extend(x);
    }
    v.extend([0.0f32; 32]);
    v
}

#[test]
fn nvfp4_ggml_quantize_near_midpoints() {
    let v = ggml_values();
    let bf: Vec<BF16> = v.iter().map(|&x| BF16::from_f32(x)).collect();
    let h: Vec<F16> = v.iter().map(|&x| F16::from_f32(x)).collect();
    let n = v.len() / 64 * 64;
    for layout in LAYOUTS {
        let nv = Nvfp4::new().profile(NvProfile::Ggml).layout(layout);
        for g in [None, Some(0.37f32), Some(-0.5), Some(3.0)] {
            // One row; then rows of 3 blocks and 1 value (a short last block) with a stride,
            // for the planar layout (the ggml layout needs whole 64-value blocks).
            check_quant(nv, &v[..n], Shape::vector(n), g, "ggml near midpoints");
            check_quant(nv, &bf[..n], Shape::vector(n), g, "ggml near midpoints");
            check_quant(nv, &h[..n], Shape::vector(n), g, "ggml near midpoints");
            if layout == NvLayout::Planar {
                let rows = v.len() / 50;
                let shape = Shape::matrix(rows, 49).with_stride(50);
                check_quant(nv, &v[..shape.len()], shape, g, "ggml short rows");
            }
        }
    }
}
