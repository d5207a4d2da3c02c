//! The block kernels of the width-generic layer (`src/simd/generic/block/`) against the
//! Scalar backend, bit for bit, on every SIMD backend and under hostile MXCSR (FPCR)
//! settings: block FP8 quantization of adversarial tiles (zero, subnormal, NaN/Inf, amax at
//! and around the 1e-4 floor and powers of two, quotients on E4M3 ties) of every source type
//! and profile with cropped edge tiles and strides, `narrow_scaled` under every power-of-two
//! scale (the fused path) and its neighbours (the f64 path) from f32, BF16 and F16, and
//! `dequantize_scaled` of every code under scales at the edges of the fused path's
//! conditions (significant bits, range). Destinations sit inside sentinel-filled buffers.
//! On x86-64 every call also runs under all 16 MXCSR settings; on aarch64 under three
//! hostile FPCR values.

use vcvt::block::{BlockFp8, BlockSource, Fp8Profile, ScaledCode, Shape};
use vcvt::{BF16, Backend, F16};

mod block_harness;
use block_harness::*;

// MXCSR
// ---------------------------------------------------------------------------------------

/// MXCSR values the SIMD conversions also run under (`None`: as the test runs, the
/// default): all 16 combinations of the four rounding modes, FTZ and DAZ, as in
/// `tests/mxcsr.rs` (all exceptions masked).
#[cfg(target_arch = "x86_64")]
const MXCSRS: [Option<u32>; 16] = {
    let mut v = [None; 16];
    let mut i = 1;
    while i < 16 {
        let (rc, ftz, daz) = ((i & 3) as u32, ((i >> 2) & 1) as u32, ((i >> 3) & 1) as u32);
        v[i] = Some(0x1F80 | (rc << 13) | (ftz << 15) | (daz << 6));
        i += 1;
    }
    v
};
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

/// Canary values around every destination.
const PAD: usize = 19;

/// The first index where `got` differs from `want`, reported with `what`.
fn same(what: &dyn Fn() -> String, want: &[u32], got: &[u32]) {
    assert_eq!(want.len(), got.len(), "{}: lengths", what());
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        panic!(
            "{}: element {i}: expected {:#x}, got {:#x}",
            what(),
            want[i],
            got[i]
        );
    }
}

// ---------------------------------------------------------------------------------------
// Block FP8 quantization
// ---------------------------------------------------------------------------------------

/// A source type of the quantization, built from f32 bits.
trait Source: BlockSource + Copy {
    fn from_f32_bits(x: u32) -> Self;
}
impl Source for f32 {
    fn from_f32_bits(x: u32) -> f32 {
        f32::from_bits(x)
    }
}
impl Source for BF16 {
    fn from_f32_bits(x: u32) -> BF16 {
        BF16::from_bits((x >> 16) as u16)
    }
}
impl Source for F16 {
    fn from_f32_bits(x: u32) -> F16 {
        // Scaled into F16's range (2^-100): the f32 values below sit near 2^-20..2^10.
        F16::from_f32(f32::from_bits(x) * 1e-3)
    }
}

/// Quantizes with canaries around both outputs; returns both buffers whole.
fn quant<S: BlockSource>(t: BlockFp8, src: &[S], shape: Shape, csr: Option<u32>) -> Vec<u8> {
    let n = t.data_len(shape).unwrap();
    let m = t.scale_inv_len(shape).unwrap();
    let mut data = vec![0xA5u8; n + 2 * PAD];
    let mut scales = vec![0x5Au8; m + 2 * PAD];
    let mut r = Ok(());
    with_mxcsr(csr, || {
        r = t.quantize(
            src,
            shape,
            &mut data[PAD..PAD + n],
            &mut scales[PAD..PAD + m],
        );
    });
    r.unwrap();
    assert!(
        data[..PAD]
            .iter()
            .chain(&data[PAD + n..])
            .all(|&x| x == 0xA5)
    );
    assert!(
        scales[..PAD]
            .iter()
            .chain(&scales[PAD + m..])
            .all(|&x| x == 0x5A)
    );
    data.extend_from_slice(&scales);
    data
}

fn check_quant<S: BlockSource>(src: &[S], shape: Shape, tile: (usize, usize), what: &str) {
    for profile in [Fp8Profile::DeepSeek, Fp8Profile::Ue8m0] {
        let t = BlockFp8::new(tile.0, tile.1).profile(profile);
        let want: Vec<u32> = quant(t.on(Backend::Scalar), src, shape, None)
            .into_iter()
            .map(u32::from)
            .collect();
        for b in simd_backends() {
            for csr in MXCSRS {
                let got: Vec<u32> = quant(t.on(b), src, shape, csr)
                    .into_iter()
                    .map(u32::from)
                    .collect();
                same(
                    &|| format!("quantize {what} {tile:?} {profile:?} on {b}, csr {csr:x?}"),
                    &want,
                    &got,
                );
            }
        }
    }
}

/// Amax values (f32 bits) the tiles are built around: the 1e-4 floor and its neighbours,
/// powers of two and their neighbours, 448 multiples of powers of two (power-of-two
/// DeepSeek scales, whose quotients hit E4M3 ties exactly), zero, subnormals, the largest
/// finite value, ±Inf and NaN.
fn amaxes() -> Vec<u32> {
    let floor = 0x38D1_B717u32;
    let mut v = vec![
        0,
        1,
        0x007F_FFFF,
        0x0080_0000,
        0x7F7F_FFFF,
        0x7F80_0000,
        0x7FC0_0000,
    ];
    for d in 0..4 {
        v.extend([floor - d, floor + d]);
    }
    for e in (1..=254u32).step_by(3) {
        v.extend([e << 23, (e << 23) + 1, (e << 23) - 1]);
    }
    for e in 100..=150u32 {
        v.push((e << 23) | 0x0060_0000); // 448 · 2^(e − 135): 1.75 · 2^(e − 127)
    }
    v
}

/// One tile's values: `amax` somewhere, the rest random below it, ties of E4M3 codes
/// under the power-of-two scale a `448 · 2^k` amax gives, subnormals, zeros of both signs,
/// and sometimes a NaN or infinity.
fn fill_tile(rng: &mut Rng, amax: u32, out: &mut [u32]) {
    let a = f32::from_bits(amax & 0x7FFF_FFFF);
    for (i, x) in out.iter_mut().enumerate() {
        let sign = (rng.u32() & 1) << 31;
        *x = match rng.below(8) {
            0 => 0,
            1 => rng.below(0x0080_0000),
            2 if a.is_finite() && a > 0.0 => {
                // A midpoint of two E4M3 codes times s = amax / 448 (exact when it is a
                // power of two): (2m + 1) / 2 · 2^(e − 3) for a random code exponent.
                let s = a / 448.0;
                let e = rng.below(9) as i32 - 6;
                let m = 8 + rng.below(8);
                ((2 * m + 1) as f32 * 2f32.powi(e - 4) * s).to_bits()
            }
            _ if a.is_finite() => (f32::from_bits(rng.u32() & 0x3FFF_FFFF) % 1.0 * a).to_bits(),
            _ => rng.u32(),
        } | sign;
        if i == 0 {
            *x = amax | sign;
        }
    }
    if rng.below(16) == 0 {
        let i = rng.below(out.len() as u32) as usize;
        out[i] = [0x7F80_0000, 0xFF80_0000, 0x7FC0_0001, 0xFFC0_0000][rng.below(4) as usize];
    }
}

/// A matrix of tiles built around every amax of [`amaxes`], with `tile` tiles, the shape
/// cropped so that the right and bottom tiles are partial, and a stride.
fn adversarial(tile: (usize, usize), seed: u64) -> (Vec<u32>, Shape) {
    let mut rng = Rng(seed);
    let am = amaxes();
    let tiles_across = 5;
    let cols = tiles_across * tile.1 - tile.1 / 3;
    let tiles_down = am.len().div_ceil(tiles_across);
    let rows = (tiles_down * tile.0 - tile.0 / 2).max(1);
    let shape = Shape::matrix(rows, cols).with_stride(cols + 3);
    let mut src = vec![0u32; shape.len()];
    let mut tile_vals = vec![0u32; tile.0 * tile.1];
    for (k, &a) in am.iter().enumerate() {
        let (tr, tc) = (k / tiles_across, k % tiles_across);
        fill_tile(&mut rng, a, &mut tile_vals);
        for r in 0..tile.0 {
            for c in 0..tile.1 {
                let (row, col) = (tr * tile.0 + r, tc * tile.1 + c);
                if row < rows && col < cols {
                    src[row * shape.stride() + col] = tile_vals[r * tile.1 + c];
                }
            }
        }
    }
    // The amax of a cropped tile may have been cut off: then another value is the amax.
    (src, shape)
}

fn check_quant_from<S: Source>(name: &str) {
    for (i, tile) in [(1, 128), (128, 128), (3, 40), (2, 7), (1, 16), (5, 33)]
        .into_iter()
        .enumerate()
    {
        let (bits, shape) = adversarial(tile, 0xF8_0000 + i as u64);
        let src: Vec<S> = bits.iter().map(|&x| S::from_f32_bits(x)).collect();
        check_quant(&src, shape, tile, name);
    }
}

#[test]
fn fp8_quantize_adversarial_tiles_f32() {
    check_quant_from::<f32>("f32");
}

#[test]
fn fp8_quantize_adversarial_tiles_bf16_f16() {
    check_quant_from::<BF16>("bf16");
    check_quant_from::<F16>("f16");
}

#[test]
fn fp8_quantize_short_and_strided_rows() {
    let mut rng = Rng(0x5151);
    for cols in [1usize, 2, 15, 16, 17, 63, 64, 65, 127, 128, 129, 200] {
        for rows in [1usize, 2, 3] {
            let shape = Shape::matrix(rows, cols).with_stride(cols + 5);
            let src: Vec<f32> = (0..shape.len())
                .map(|_| f32::from_bits((rng.u32() & 0x807F_FFFF) | ((110 + rng.below(30)) << 23)))
                .collect();
            check_quant(&src, shape, (2, 128), "short");
            check_quant(&src, shape, (1, 13), "short");
        }
    }
}

// ---------------------------------------------------------------------------------------
// narrow_scaled and dequantize_scaled
// ---------------------------------------------------------------------------------------

/// f32 bit patterns: every special, subnormals of every size, values at and around powers
/// of two, and random values of every exponent.
fn values(rng: &mut Rng, n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| match i % 9 {
            0 => [
                0u32,
                0x8000_0000,
                0x7F80_0000,
                0xFF80_0000,
                0x7FC0_0000,
                0xFFC0_0001,
                0x7F80_0001,
                0x7F7F_FFFF,
                0xFF7F_FFFF,
            ][rng.below(9) as usize],
            1 => rng.below(0x0080_0000) | ((rng.u32() & 1) << 31),
            2 => (1 << rng.below(23)) | ((rng.u32() & 1) << 31),
            3 => (rng.below(255) << 23).wrapping_add(rng.below(3).wrapping_sub(1)),
            _ => rng.u32(),
        })
        .collect()
}

/// The scales of the scaled tests: every power of two (2^-149 .. 2^127, the subnormal ones
/// take the f64 path), negative ones, neighbours, and scales with 18 to 23 significant bits
/// (the limit of the exact dequantization path is 24 minus the format's), some at the edges
/// of the range conditions.
fn scales(rng: &mut Rng) -> Vec<u32> {
    let mut v = Vec::new();
    for e in 0..=254u32 {
        v.push(e << 23);
        if e % 5 == 0 {
            v.extend([
                (e << 23) | 0x8000_0000,
                (e << 23) + 1,
                (e << 23) | 0x0040_0000,
            ]);
        }
    }
    for p in 0..23 {
        v.push(1 << p);
    }
    for bits in 17..=24u32 {
        for _ in 0..4 {
            let e = 60 + rng.below(140);
            // Exactly `bits` significant bits: the lowest set bit at 24 − bits.
            let low = 24 - bits;
            let frac = ((rng.u32() & 0x007F_FFFF) | (1 << low)) & !((1u32 << low) - 1);
            v.push((e << 23) | (frac & 0x007F_FFFF) | ((rng.u32() & 1) << 31));
        }
    }
    // Range edges: tiny and huge scales with a few significant bits.
    for e in [
        1u32, 2, 5, 9, 10, 11, 17, 18, 19, 110, 118, 119, 120, 235, 236, 237, 238, 245, 246, 247,
    ] {
        v.extend([e << 23, (e << 23) | 0x0060_0000, (e << 23) | 0x8050_0000]);
    }
    v.extend([0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x8000_0000]);
    v
}

/// Runs `f` on a destination inside a sentinel-filled buffer of `len + 2 · PAD` values and
/// returns it whole as bits.
fn padded<T: Copy>(
    len: usize,
    fill: T,
    csr: Option<u32>,
    bits: fn(T) -> u32,
    f: &mut dyn FnMut(&mut [T]),
) -> Vec<u32> {
    let mut buf = vec![fill; len + 2 * PAD];
    with_mxcsr(csr, || f(&mut buf[PAD..PAD + len]));
    let out: Vec<u32> = buf.iter().map(|&x| bits(x)).collect();
    let s = bits(fill);
    assert!(out[..PAD].iter().chain(&out[PAD + len..]).all(|&x| x == s));
    out
}

/// The four conversions [`check_scaled`] compares.
#[derive(Clone, Copy)]
enum Op {
    Narrow,
    ToF32,
    ToBf16,
    ToF16,
}

/// One conversion of [`Op`] on a backend under an MXCSR value; returns the padded
/// destination as bits.
type Run<'a> = &'a dyn Fn(Op, Backend, Option<u32>) -> Vec<u32>;

/// Builds the typed inputs of one scale once (the source values from f32 bits, for
/// `narrow_scaled`; the codes from bytes, for `dequantize_scaled`) and hands [`Run`] over
/// them to the checks.
type Prepare<'a> = &'a dyn Fn(&[u32], &[u8], f32, &mut dyn FnMut(Run<'_>));

/// `narrow_scaled` from `S` into `C` and `dequantize_scaled` from `C` into f32, BF16 and
/// F16 on every backend and MXCSR against Scalar. Only the conversion calls name the types;
/// the loops and comparisons ([`scaled_matrix`]) are compiled once, not once per (C, S).
fn check_scaled<C: ScaledCode + Copy + PartialEq + core::fmt::Debug, S: Source>(
    rng: &mut Rng,
    zero: C,
    code_bits: fn(C) -> u32,
    from_bits: fn(u8) -> C,
) {
    let prepare = |vals: &[u32], codes: &[u8], scale: f32, body: &mut dyn FnMut(Run<'_>)| {
        let src: Vec<S> = vals.iter().map(|&x| S::from_f32_bits(x)).collect();
        let codes: Vec<C> = codes.iter().map(|&c| from_bits(c)).collect();
        body(&|op: Op, b: Backend, csr: Option<u32>| {
            if let Op::Narrow = op {
                padded(src.len(), zero, csr, code_bits, &mut |d| {
                    vcvt::block::narrow_scaled_on(b, &src, scale, d).unwrap()
                })
            } else {
                dequantize(op, &codes, scale, b, csr)
            }
        })
    };
    scaled_matrix(rng, core::any::type_name::<C>(), &prepare);
}

/// The `dequantize_scaled` half of [`check_scaled`], generic over the code type only (it
/// does not depend on the source type).
fn dequantize<C: ScaledCode + Copy>(
    op: Op,
    codes: &[C],
    scale: f32,
    b: Backend,
    csr: Option<u32>,
) -> Vec<u32> {
    let n = codes.len();
    match op {
        Op::Narrow => unreachable!("narrow_scaled is not a dequantization"),
        Op::ToF32 => padded(
            n,
            f32::from_bits(0x7FA5_A5A5),
            csr,
            f32::to_bits,
            &mut |d| vcvt::block::dequantize_scaled_on(b, codes, scale, d).unwrap(),
        ),
        Op::ToBf16 => padded(
            n,
            BF16::from_bits(0x7FA5),
            csr,
            |x| x.to_bits().into(),
            &mut |d| vcvt::block::dequantize_scaled_on(b, codes, scale, d).unwrap(),
        ),
        Op::ToF16 => padded(
            n,
            F16::from_bits(0x7E5A),
            csr,
            |x| x.to_bits().into(),
            &mut |d| vcvt::block::dequantize_scaled_on(b, codes, scale, d).unwrap(),
        ),
    }
}

/// [`check_scaled`]'s inputs, loops and comparisons, for the code type named `code`.
fn scaled_matrix(rng: &mut Rng, code: &str, prepare: Prepare<'_>) {
    let scales = scales(rng);
    let len = 77;
    for (k, &sb) in scales.iter().enumerate() {
        let scale = f32::from_bits(sb);
        let vals = values(rng, len);
        // Every code once every few scales, random codes otherwise.
        let codes: Vec<u8> = if k % 4 == 0 {
            (0..=255u8).collect()
        } else {
            (0..len).map(|_| rng.u32() as u8).collect()
        };
        prepare(&vals, &codes, scale, &mut |run| {
            for (name, op) in [
                ("narrow_scaled", Op::Narrow),
                ("dequantize_scaled f32", Op::ToF32),
                ("dequantize_scaled bf16", Op::ToBf16),
                ("dequantize_scaled f16", Op::ToF16),
            ] {
                let want = run(op, Backend::Scalar, None);
                for b in simd_backends() {
                    for csr in MXCSRS {
                        let got = run(op, b, csr);
                        same(
                            &|| format!("{name} {code} scale {sb:#x} on {b}, csr {csr:x?}"),
                            &want,
                            &got,
                        );
                    }
                }
            }
        });
    }
}

macro_rules! scaled_tests {
    ($($name:ident: $c:ident),*) => {$(
        #[test]
        fn $name() {
            let mut rng = Rng(0x5CA1_ED00 ^ stringify!($name).len() as u64);
            let bits = |c: vcvt::$c| u32::from(c.to_bits());
            check_scaled::<vcvt::$c, f32>(&mut rng, vcvt::$c::from_bits(0x5A), bits, vcvt::$c::from_bits);
            check_scaled::<vcvt::$c, BF16>(&mut rng, vcvt::$c::from_bits(0x5A), bits, vcvt::$c::from_bits);
            check_scaled::<vcvt::$c, F16>(&mut rng, vcvt::$c::from_bits(0x5A), bits, vcvt::$c::from_bits);
        }
    )*};
}

scaled_tests!(
    scaled_f8e4m3: F8E4M3,
    scaled_f8e5m2: F8E5M2,
    scaled_f8e4m3fnuz: F8E4M3FNUZ,
    scaled_f8e5m2fnuz: F8E5M2FNUZ,
    scaled_f6e2m3: F6E2M3,
    scaled_f6e3m2: F6E3M2,
    scaled_f4e2m1: F4E2M1,
    scaled_f8e8m0: F8E8M0,
    scaled_f8e3m4: F8E3M4,
    scaled_f8e4m3ieee: F8E4M3IEEE,
    scaled_f8e4m3b11fnuz: F8E4M3B11FNUZ,
    scaled_f8e5m3fnu: F8E5M3FNU
);

#[test]
fn amax_blocks_every_backend() {
    // `amax_blocks` runs on the active backend: against the Scalar `amax_on` of each block.
    let mut rng = Rng(0xA3A7_B10C);
    for block in [1usize, 7, 16, 32, 33, 128] {
        let v: Vec<f32> = values(&mut rng, 1000)
            .into_iter()
            .map(f32::from_bits)
            .collect();
        let mut got = vec![0f32; v.len().div_ceil(block)];
        vcvt::block::amax_blocks(&v, block, &mut got).unwrap();
        for (g, chunk) in got.iter().zip(v.chunks(block)) {
            let want = vcvt::block::amax_on(Backend::Scalar, chunk).unwrap();
            assert_eq!(g.to_bits(), want.to_bits(), "block {block}");
        }
    }
}
