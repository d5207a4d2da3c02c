//! Every SIMD backend's block kernels give the Scalar backend's bits: MX dequantization of
//! every (scale byte, element code) pair to f32, BF16 and F16, block FP8 dequantization of
//! every code under many scales, and MX quantization of blocks chosen to hit every path of
//! the scale and rounding rules, for both profiles. Shapes have several rows, strides
//! above the column count and short last blocks, and the destinations sit inside larger
//! buffers filled with a sentinel, which must survive outside the rows.
//!
//! On x86-64 each SIMD conversion also runs under hostile MXCSR values (directed rounding,
//! FTZ, DAZ), set and restored around the call only.

use vcvt::block::{BlockFp8, BlockSource, Fp8Profile, Mx, MxElement, MxProfile, Shape};
use vcvt::{BF16, Backend, F16};

mod block_harness;
use block_harness::*;

const ELEMENTS: [MxElement; 5] = [
    MxElement::E4M3,
    MxElement::E5M2,
    MxElement::E2M3,
    MxElement::E3M2,
    MxElement::E2M1,
];

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
// MX dequantization
// ---------------------------------------------------------------------------------------

/// Dequantizes with `mx` into the middle of a sentinel-filled buffer; returns all its bits.
fn mx_dequant<D: Bits>(
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

fn check_mx_dequant<D: Bits>(element: MxElement, data: &[u8], scales: &[u8], shape: Shape) {
    let reference = mx_dequant::<D>(
        Mx::new(element).on(Backend::Scalar),
        data,
        scales,
        shape,
        None,
    );
    // The sentinel survives outside the rows and in the gaps between them.
    let s = D::sentinel().bits();
    assert!(reference[..PAD].iter().all(|&x| x == s));
    assert!(reference[reference.len() - PAD..].iter().all(|&x| x == s));
    for r in 0..shape.rows().saturating_sub(1) {
        let gap = PAD + r * shape.stride() + shape.cols()..PAD + (r + 1) * shape.stride();
        assert!(reference[gap].iter().all(|&x| x == s));
    }
    for b in simd_backends() {
        for csr in MXCSRS {
            let got = mx_dequant::<D>(Mx::new(element).on(b), data, scales, shape, csr);
            same_bits(
                &|| {
                    format!(
                        "MX {element:?} -> {} on {b}, MXCSR {csr:x?}, {shape:?}",
                        D::NAME
                    )
                },
                &reference,
                &got,
            );
        }
    }
}

/// Every scale byte with every code byte (fp6 bytes with their unused high bits set too;
/// every E2M1 nibble pair), as rows of `cols ≥ 256` values (512 for E2M1) with a stride.
fn mx_dequant_all_pairs<D: Bits>(element: MxElement, extra_cols: usize, extra_stride: usize) {
    let base = if element == MxElement::E2M1 { 512 } else { 256 };
    let cols = base + extra_cols;
    let rows = 256;
    let shape = Shape::matrix(rows, cols).with_stride(cols + extra_stride);
    let mx = Mx::new(element);
    let row_bytes = element.row_bytes(cols);
    let mut data = vec![0u8; mx.data_len(shape).unwrap()];
    let mut scales = vec![0u8; mx.scales_len(shape).unwrap()];
    let nblocks = cols.div_ceil(32);
    let mut rng = Rng(0x1234_5678_9ABC_DEF1 ^ extra_cols as u64);
    for r in 0..rows {
        for j in 0..row_bytes {
            // Every byte value in the first 256 bytes; random bytes after.
            data[r * row_bytes + j] = if j < 256 {
                (j + r) as u8
            } else {
                rng.u32() as u8
            };
        }
        if element == MxElement::E2M1 && cols % 2 == 1 {
            // The unused high nibble of an odd row's last byte is 0.
            data[r * row_bytes + row_bytes - 1] &= 0x0F;
        }
        for k in 0..nblocks {
            // Scale r for the blocks of row r, a random scale for some.
            scales[r * nblocks + k] = if k % 5 == 4 { rng.u32() as u8 } else { r as u8 };
        }
    }
    check_mx_dequant::<D>(element, &data, &scales, shape);
}

#[test]
fn mx_dequantize_every_scale_and_code() {
    for element in ELEMENTS {
        for (extra_cols, extra_stride) in [(0, 0), (0, 5), (13, 3), (31, 0), (1, 1)] {
            mx_dequant_all_pairs::<f32>(element, extra_cols, extra_stride);
            mx_dequant_all_pairs::<BF16>(element, extra_cols, extra_stride);
            mx_dequant_all_pairs::<F16>(element, extra_cols, extra_stride);
        }
    }
}

#[test]
fn mx_dequantize_short_rows() {
    // Rows shorter than a block, one block, and a little over, with random codes.
    let mut rng = Rng(0xDEAD_BEEF_0BAD_F00D);
    for element in ELEMENTS {
        for cols in [1, 5, 31, 32, 33, 64, 65, 95, 160] {
            for rows in [1, 3] {
                let shape = Shape::matrix(rows, cols).with_stride(cols + 2);
                let mx = Mx::new(element);
                let mut data: Vec<u8> = (0..mx.data_len(shape).unwrap())
                    .map(|_| rng.u32() as u8)
                    .collect();
                if element == MxElement::E2M1 && cols % 2 == 1 {
                    let rb = element.row_bytes(cols);
                    for r in 0..rows {
                        data[r * rb + rb - 1] &= 0x0F;
                    }
                }
                let scales: Vec<u8> = (0..mx.scales_len(shape).unwrap())
                    .map(|_| 100 + rng.below(60) as u8)
                    .collect();
                check_mx_dequant::<f32>(element, &data, &scales, shape);
                check_mx_dequant::<BF16>(element, &data, &scales, shape);
                check_mx_dequant::<F16>(element, &data, &scales, shape);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Block FP8 dequantization
// ---------------------------------------------------------------------------------------

/// The f32 scales (bits) of the block FP8 test.
fn fp8_scales() -> Vec<u32> {
    let mut v = vec![
        0,
        0x8000_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0xFFC0_0000,
        0x7F80_0001,
        0xFFA0_0001,
        0x7FC1_2345,
        1,
        0x8000_0001,
        0x0040_0000,
        0x007F_FFFF,
        0x0080_0000,
        0x7F7F_FFFF,
        0xFF7F_FFFF,
        0x3F80_0000,
        0xBF80_0000,
        0x3F80_0001,
        0x3F7F_FFFF,
        0x3B92_4925, // 1/224
        0x3C12_4925, // ~1/112
        0x3A80_0000,
        0x7B80_0000, // 2^120: 256 · scale overflows
        0x7B7F_FFFF, // just below
        // Products on a rounding tie of the destination: 1 + 2^-8 and 1 + 3 · 2^-8 put
        // f32(1.0) · s half-way between two BF16 values (even and odd kept bit), 1 + 2^-11
        // and 1 + 3 · 2^-11 half-way between two F16 values; negative too.
        0x3F80_8000,
        0x3F81_8000,
        0xBF81_8000,
        0x3F80_1000,
        0x3F80_3000,
        0xBF80_3000,
    ];
    // Every power of two, both signs (2^-149 .. 2^127), and one ulp around some.
    for e in 0..=254u32 {
        v.push(e << 23);
        v.push((e << 23) | 0x8000_0000);
        if e % 7 == 0 {
            v.push((e << 23) | 1);
            v.push((e << 23).wrapping_sub(1) & 0x7FFF_FFFF);
        }
    }
    for p in 0..23 {
        v.push(1 << p); // f32 subnormals
    }
    let mut rng = Rng(0x0F0F_1234_5555_AAAA);
    for _ in 0..200 {
        let x = rng.u32();
        // Random finite scales, mostly of moderate size, some anywhere.
        v.push(if x.is_multiple_of(4) {
            x
        } else {
            (x & 0x807F_FFFF) | ((100 + (x >> 24) % 60) << 23)
        });
    }
    v
}

fn fp8_dequant<D: Bits>(
    t: BlockFp8,
    data: &[u8],
    scale_inv: &[u8],
    shape: Shape,
    csr: Option<u32>,
) -> Vec<u32> {
    let mut buf = vec![D::sentinel(); shape.len() + 2 * PAD];
    let mut r = Ok(());
    with_mxcsr(csr, || {
        r = t.dequantize(data, scale_inv, shape, &mut buf[PAD..PAD + shape.len()]);
    });
    r.unwrap();
    buf.iter().map(|x| x.bits()).collect()
}

fn check_fp8<D: Bits>(tile: (usize, usize), data: &[u8], scale_inv: &[u8], shape: Shape) {
    let t = BlockFp8::new(tile.0, tile.1);
    let reference = fp8_dequant::<D>(t.on(Backend::Scalar), data, scale_inv, shape, None);
    let s = D::sentinel().bits();
    assert!(reference[..PAD].iter().all(|&x| x == s));
    assert!(reference[reference.len() - PAD..].iter().all(|&x| x == s));
    for b in simd_backends() {
        for csr in MXCSRS {
            let got = fp8_dequant::<D>(t.on(b), data, scale_inv, shape, csr);
            same_bits(
                &|| format!("block FP8 {tile:?} -> {} on {b}, MXCSR {csr:x?}", D::NAME),
                &reference,
                &got,
            );
        }
    }
}

#[test]
fn fp8_dequantize_every_code_and_scale() {
    let scales = fp8_scales();
    // Tiles of one row and 256 columns: row r has every code (rotated by r) under scale r,
    // then a short tile of 37 codes under the next scale.
    let cols = 256 + 37;
    let rows = scales.len() / 2;
    let shape = Shape::matrix(rows, cols).with_stride(cols + 3);
    let mut data = vec![0u8; rows * cols];
    let mut rng = Rng(77);
    for r in 0..rows {
        for j in 0..cols {
            data[r * cols + j] = if j < 256 {
                (j + r) as u8
            } else {
                rng.u32() as u8
            };
        }
    }
    let scale_inv: Vec<u8> = scales[..2 * rows]
        .iter()
        .flat_map(|s| s.to_le_bytes())
        .collect();
    check_fp8::<f32>((1, 256), &data, &scale_inv, shape);
    check_fp8::<BF16>((1, 256), &data, &scale_inv, shape);
    check_fp8::<F16>((1, 256), &data, &scale_inv, shape);
}

#[test]
fn fp8_dequantize_tiles() {
    // 2-D tiles, cropped edges, tiles narrower than a vector, runs of 128.
    let mut rng = Rng(0xABCD_EF01_2345_6789);
    let scales = fp8_scales();
    for (rows, cols, tile) in [
        (5, 300, (2, 128)),
        (3, 100, (3, 7)),
        (4, 64, (1, 32)),
        (2, 129, (128, 128)),
        (6, 31, (4, 40)),
    ] {
        let shape = Shape::matrix(rows, cols).with_stride(cols + 1);
        let t = BlockFp8::new(tile.0, tile.1);
        let data: Vec<u8> = (0..rows * cols).map(|_| rng.u32() as u8).collect();
        let n = t.scale_inv_len(shape).unwrap() / 4;
        let scale_inv: Vec<u8> = (0..n)
            .flat_map(|_| scales[rng.below(scales.len() as u32) as usize].to_le_bytes())
            .collect();
        check_fp8::<f32>(tile, &data, &scale_inv, shape);
        check_fp8::<BF16>(tile, &data, &scale_inv, shape);
        check_fp8::<F16>(tile, &data, &scale_inv, shape);
    }
}

/// One-row tiles of every length 0..=80 (and 127..=129), under scales at both ends of the
/// AVX2 BF16 table's range (exponent fields 9..=11 and 243..=246, both signs) and in it,
/// with the destination between sentinels, under the default MXCSR, round to nearest with
/// FTZ and DAZ (where the table runs and must not care), and two other rounding modes
/// (where it must not run).
#[test]
fn fp8_dequantize_row_lengths() {
    const CSRS: [Option<u32>; 4] = [
        None,
        Some(0x1F80 | (1 << 15) | (1 << 6)),
        Some(0x1F80 | (2 << 13)),
        Some(0x1F80 | (1 << 13) | (1 << 6)),
    ];
    let mut rng = Rng(0x5107_0000_1600_0080);
    let mut scales = vec![0x3B92_4925u32, 0xBC12_4925, 0x3F80_8000];
    for e in [9u32, 10, 11, 243, 244, 245, 246] {
        for sign in [0, 0x8000_0000] {
            scales.push(sign | e << 23);
            scales.push(sign | e << 23 | 0x007F_FFFF);
            scales.push(sign | e << 23 | (rng.u32() & 0x007F_FFFF));
        }
    }
    for len in (0..=80).chain(127..=129) {
        // Every code somewhere (NaN codes, subnormal codes, both signs), then random ones.
        let data: Vec<u8> = (0..len)
            .map(|j| {
                if j % 3 == 0 {
                    (j * 37 + len) as u8
                } else {
                    rng.u32() as u8
                }
            })
            .collect();
        let shape = Shape::vector(len);
        let t = BlockFp8::new(1, 128);
        for &s in &scales {
            let n = len.div_ceil(128);
            let scale_inv: Vec<u8> = (0..n).flat_map(|_| s.to_le_bytes()).collect();
            let reference =
                fp8_dequant::<BF16>(t.on(Backend::Scalar), &data, &scale_inv, shape, None);
            for b in simd_backends() {
                for csr in CSRS {
                    let got = fp8_dequant::<BF16>(t.on(b), &data, &scale_inv, shape, csr);
                    same_bits(
                        &|| {
                            format!(
                                "block FP8 row of {len}, scale {s:#x} -> BF16 on {b}, MXCSR {csr:x?}"
                            )
                        },
                        &reference,
                        &got,
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// MX quantization
// ---------------------------------------------------------------------------------------

/// Quantizes with `mx` into codes and scales with canary bytes around them; returns both
/// buffers whole.
fn mx_quant<S: BlockSource>(
    mx: Mx,
    src: &[S],
    shape: Shape,
    csr: Option<u32>,
) -> (Vec<u8>, Vec<u8>) {
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
    (data, scales)
}

/// [`check_mx_quant_as`] of `src`, and of its values rounded to BF16 and to F16 (BF16 and
/// F16 sources take their own route: the f32 kernel on their widened values).
fn check_mx_quant(src: &[f32], shape: Shape, what: &str) {
    check_mx_quant_as(src, shape, what);
    let bf: Vec<BF16> = src.iter().map(|&x| BF16::from_f32(x)).collect();
    check_mx_quant_as(&bf, shape, &format!("{what}, BF16 source"));
    // Scaled into F16's range where most values land in its normal range.
    let h: Vec<F16> = src
        .iter()
        .map(|&x| F16::from_f32(x * 2f32.powi(-100)))
        .collect();
    check_mx_quant_as(&h, shape, &format!("{what}, F16 source"));
}

fn check_mx_quant_as<S: BlockSource>(src: &[S], shape: Shape, what: &str) {
    for element in ELEMENTS {
        for profile in [MxProfile::Ocp, MxProfile::Ceil] {
            let mx = Mx::new(element).profile(profile);
            let reference = mx_quant(mx.on(Backend::Scalar), src, shape, None);
            for b in simd_backends() {
                for csr in MXCSRS {
                    let got = mx_quant(mx.on(b), src, shape, csr);
                    if got != reference {
                        let (i, which) =
                            match (0..got.0.len()).find(|&i| got.0[i] != reference.0[i]) {
                                Some(i) => (i, "code byte"),
                                None => (
                                    (0..got.1.len())
                                        .find(|&i| got.1[i] != reference.1[i])
                                        .unwrap(),
                                    "scale",
                                ),
                            };
                        let (e, g) = if which == "scale" {
                            (reference.1[i], got.1[i])
                        } else {
                            (reference.0[i], got.0[i])
                        };
                        panic!(
                            "MX quantize {what} {element:?} {profile:?} on {b}, MXCSR {csr:x?}, \
                             {shape:?}: {which} {} (after {PAD} canaries): expected {e:#04x}, got {g:#04x}",
                            i
                        );
                    }
                }
            }
        }
    }
}

/// Interesting amax values of a block: powers of two and `max · 2^k`, one ulp around,
/// for the five element maxima, over the whole exponent range.
fn amax_values() -> Vec<u32> {
    let mut v = Vec::new();
    for max in [6.0f32, 7.5, 28.0, 448.0, 57344.0, 1.0] {
        let m = max.to_bits();
        for e in -140i32..=127 {
            // max · 2^e by exponent arithmetic (skipping results outside f32's normal range)
            let field = (m >> 23) as i32 + e;
            if !(1..=254).contains(&field) {
                continue;
            }
            let x = (m & 0x007F_FFFF) | ((field as u32) << 23);
            v.extend([x - 1, x, x + 1]);
        }
    }
    // Subnormal amax values and the largest finite.
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

/// A block of 32 values with amax `amax` (bits), placed at a random lane.
fn block_with_amax(rng: &mut Rng, amax: u32, out: &mut [f32]) {
    for x in out.iter_mut() {
        // Values at or below amax in magnitude: random fractions of it (including tiny
        // ones whose scaled value is an f32 subnormal or rounds to zero), random signs.
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

/// One block of 32 per interesting amax, in rows of 7 blocks (224 values) plus a tail of
/// 19; stride 240.
fn amax_blocks_src() -> (Vec<f32>, Shape) {
    let mut rng = Rng(0x5151_5151_2323_2323);
    let amaxes = amax_values();
    let cols = 7 * 32 + 19;
    let stride = cols + 17;
    let rows = amaxes.len().div_ceil(8);
    let shape = Shape::matrix(rows, cols).with_stride(stride);
    let mut src = vec![f32::from_bits(0x7FC0_0000); shape.len()];
    let mut k = 0;
    for r in 0..rows {
        for b in 0..8 {
            let lo = r * stride + 32 * b;
            let hi = (lo + 32).min(r * stride + cols);
            block_with_amax(&mut rng, amaxes[k % amaxes.len()], &mut src[lo..hi]);
            k += 1;
        }
    }
    (src, shape)
}

#[test]
fn mx_quantize_blocks() {
    let (src, shape) = amax_blocks_src();
    check_mx_quant(&src, shape, "amax blocks");
}

#[test]
fn mx_quantize_random_magnitudes() {
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    let cols = 32 * 12;
    let rows = 40;
    let shape = Shape::matrix(rows, cols);
    let mut src = vec![0f32; shape.len()];
    for (i, blk) in src.chunks_mut(32).enumerate() {
        // Each block: a random exponent range, sometimes across the whole f32 range.
        let e0 = rng.below(254);
        let spread = 1 + rng.below(if i % 3 == 0 { 254 } else { 12 });
        for x in blk.iter_mut() {
            let e = (e0 + rng.below(spread)).min(254);
            *x = f32::from_bits((rng.u32() & 0x807F_FFFF) | (e << 23));
        }
    }
    check_mx_quant(&src, shape, "random magnitudes");
}

/// Rows of blocks of 32: all zero, all subnormal, all one special value, then normal values
/// with one special lane each; a tail of 3; stride `cols + 1`.
fn specials_src() -> (Vec<f32>, Shape) {
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
    let cols = 32 * 10 + 3;
    let rows = 12;
    let shape = Shape::matrix(rows, cols).with_stride(cols + 1);
    let mut src = vec![0f32; shape.len()];
    for r in 0..rows {
        let row = &mut src[r * (cols + 1)..r * (cols + 1) + cols];
        for (b, blk) in row.chunks_mut(32).enumerate() {
            match b {
                // All zero (both signs), all subnormal, all one special.
                0 => blk
                    .iter_mut()
                    .for_each(|x| *x = f32::from_bits(rng.u32() & 0x8000_0000)),
                1 => blk
                    .iter_mut()
                    .for_each(|x| *x = f32::from_bits(rng.u32() & 0x807F_FFFF)),
                2 => blk
                    .iter_mut()
                    .for_each(|x| *x = f32::from_bits(specials[r])),
                // Normal values with one special lane.
                _ => {
                    for x in blk.iter_mut() {
                        *x = f32::from_bits(
                            (rng.u32() & 0x807F_FFFF) | ((110 + rng.below(30)) << 23),
                        );
                    }
                    let i = rng.below(blk.len() as u32) as usize;
                    blk[i] = f32::from_bits(specials[(r + b) % specials.len()]);
                }
            }
        }
    }
    (src, shape)
}

#[test]
fn mx_quantize_specials() {
    let (src, shape) = specials_src();
    check_mx_quant(&src, shape, "specials");
}

#[test]
fn mx_quantize_short_rows() {
    let mut rng = Rng(4242);
    for cols in [1, 2, 31, 32, 33, 63, 64, 97] {
        let shape = Shape::matrix(3, cols).with_stride(cols + 4);
        let src: Vec<f32> = (0..shape.len())
            .map(|_| f32::from_bits((rng.u32() & 0x807F_FFFF) | ((120 + rng.below(16)) << 23)))
            .collect();
        check_mx_quant(&src, shape, "short rows");
    }
}

/// Quantizes with block FP8 `t` into codes and scales with canary bytes around them;
/// returns both buffers whole.
fn fp8_quant<S: BlockSource>(
    t: BlockFp8,
    src: &[S],
    shape: Shape,
    csr: Option<u32>,
) -> (Vec<u8>, Vec<u8>) {
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
    let canaries =
        |v: &[u8], len: usize, c: u8| v[..PAD].iter().chain(&v[PAD + len..]).all(|&x| x == c);
    assert!(canaries(&data, n, 0xA5) && canaries(&scales, m, 0x5A));
    (data, scales)
}

/// Block FP8 quantization on every backend under every MXCSR (FPCR) setting against the
/// Scalar backend under the default one. Under the default setting the quantizer divides
/// with the hardware (x86-64); under the others with the integer division of
/// `block/spec/soft.rs`: so this also proves the two paths equal, and `tests/block_vectors.rs`
/// pins the default path to DeepSeek's order computed by numpy and ml_dtypes.
fn check_fp8_quant<S: BlockSource>(src: &[S], shape: Shape, tile: (usize, usize), what: &str) {
    for profile in [Fp8Profile::DeepSeek, Fp8Profile::Ue8m0] {
        let t = BlockFp8::new(tile.0, tile.1).profile(profile);
        let reference = fp8_quant(t.on(Backend::Scalar), src, shape, None);
        for b in std::iter::once(Backend::Scalar).chain(simd_backends()) {
            for csr in MXCSRS {
                if b == Backend::Scalar && csr.is_none() {
                    continue;
                }
                let got = fp8_quant(t.on(b), src, shape, csr);
                if let Some(i) = (0..got.0.len()).find(|&i| got.0[i] != reference.0[i]) {
                    panic!(
                        "block FP8 quantize {what} {tile:?} {profile:?} on {b}, MXCSR {csr:x?}: \
                         code byte {i} (after {PAD} canaries): expected {:#04x}, got {:#04x}",
                        reference.0[i], got.0[i]
                    );
                }
                assert_eq!(
                    got.1, reference.1,
                    "block FP8 quantize {what} {tile:?} {profile:?} on {b}, MXCSR {csr:x?}: scales"
                );
            }
        }
    }
}

#[test]
fn fp8_quantize_amax_tiles() {
    // Tiles of 1 x 32 over the MX amax blocks: every interesting amax as a tile's amax.
    let (src, shape) = amax_blocks_src();
    check_fp8_quant(&src, shape, (1, 32), "amax tiles");
}

#[test]
fn fp8_quantize_specials() {
    // Zero, subnormal, ±Inf (an infinite scale) and NaN tiles and lanes.
    let (src, shape) = specials_src();
    check_fp8_quant(&src, shape, (1, 32), "specials");
    check_fp8_quant(&src, shape, (3, 40), "specials");
}

#[test]
fn fp8_quantize_random_tiles() {
    let mut rng = Rng(0xF8F8_0123_4567_89AB);
    let (rows, cols) = (130, 300);
    let shape = Shape::matrix(rows, cols).with_stride(cols + 5);
    let mut src = vec![0f32; shape.len()];
    for (i, x) in src.iter_mut().enumerate() {
        // Exponent ranges that change every 50 values, sometimes across the f32 range.
        let e0 = ((i / 50) as u32 * 37) % 254;
        let spread = if i % 7 == 0 { 254 } else { 10 };
        let e = (e0 + rng.below(spread)).min(254);
        *x = f32::from_bits((rng.u32() & 0x807F_FFFF) | (e << 23));
    }
    for tile in [(128, 128), (4, 40), (2, 128), (1, 7)] {
        check_fp8_quant(&src, shape, tile, "random");
    }
    let bf: Vec<BF16> = src.iter().map(|&x| BF16::from_f32(x)).collect();
    check_fp8_quant(&bf, shape, (128, 128), "random BF16");
    let h: Vec<F16> = src.iter().map(|&x| F16::from_f32(x / 1e30)).collect();
    check_fp8_quant(&h, shape, (4, 40), "random F16");
}

// ---------------------------------------------------------------------------------------
// Building blocks: amax, narrow_scaled, dequantize_scaled
// ---------------------------------------------------------------------------------------

/// f32 bit patterns for the building blocks: every special kind, both signs, subnormals,
/// values at and around powers of two, and random values of every exponent.
fn building_block_values(rng: &mut Rng, n: usize) -> Vec<u32> {
    let specials = [
        0u32,
        0x8000_0000,
        1,
        0x8000_0001,
        0x007F_FFFF,
        0x0080_0000,
        0x3F80_0000,
        0xBF80_0000,
        0x7F7F_FFFF,
        0xFF7F_FFFF,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0xFFC0_0001,
        0x7F80_0001,
        0xFFA0_0000,
        0x43E0_0000,
        0x4780_0000,
        0x40C0_0000,
    ];
    (0..n)
        .map(|i| {
            if i % 7 == 0 {
                specials[rng.below(specials.len() as u32) as usize]
            } else {
                rng.u32()
            }
        })
        .collect()
}

/// Scales for the building blocks: powers of two, other values, zero, infinities, NaN.
const SCALES: [f32; 12] = [
    1.0,
    0.25,
    3.0,
    1.0 / 3.0,
    1e-30,
    7e20,
    1e-40,
    0.0,
    -2.0,
    f32::INFINITY,
    f32::NAN,
    448.0,
];

fn check_building_blocks_for<
    C: vcvt::block::ScaledCode + Copy + Default + PartialEq + std::fmt::Debug,
>(
    rng: &mut Rng,
    code_bits: fn(C) -> u32,
    from_bits: fn(u8) -> C,
) {
    let backends = simd_backends();
    for &len in &[0usize, 1, 7, 31, 32, 33, 255, 256, 257, 1000] {
        let src: Vec<f32> = building_block_values(rng, len)
            .into_iter()
            .map(f32::from_bits)
            .collect();
        let codes: Vec<C> = (0..len).map(|_| from_bits(rng.u32() as u8)).collect();
        for scale in SCALES {
            let mut want = vec![C::default(); len];
            vcvt::block::narrow_scaled_on(Backend::Scalar, &src, scale, &mut want).unwrap();
            let mut want_f = vec![0f32; len];
            vcvt::block::dequantize_scaled_on(Backend::Scalar, &codes, scale, &mut want_f).unwrap();
            let mut want_b = vec![BF16::ZERO; len];
            vcvt::block::dequantize_scaled_on(Backend::Scalar, &codes, scale, &mut want_b).unwrap();
            let mut want_h = vec![F16::ZERO; len];
            vcvt::block::dequantize_scaled_on(Backend::Scalar, &codes, scale, &mut want_h).unwrap();
            for &b in &backends {
                for csr in MXCSRS {
                    let mut got = vec![C::default(); len];
                    let mut got_f = vec![0f32; len];
                    let mut got_b = vec![BF16::ZERO; len];
                    let mut got_h = vec![F16::ZERO; len];
                    let mut ok = true;
                    with_mxcsr(csr, || {
                        ok &= vcvt::block::narrow_scaled_on(b, &src, scale, &mut got).is_ok();
                        ok &=
                            vcvt::block::dequantize_scaled_on(b, &codes, scale, &mut got_f).is_ok();
                        ok &=
                            vcvt::block::dequantize_scaled_on(b, &codes, scale, &mut got_b).is_ok();
                        ok &=
                            vcvt::block::dequantize_scaled_on(b, &codes, scale, &mut got_h).is_ok();
                    });
                    assert!(ok);
                    let what = || format!("{b:?} len {len} scale {scale:e} csr {csr:x?}");
                    let bits = |v: &[C]| v.iter().map(|&c| code_bits(c)).collect::<Vec<_>>();
                    same_bits(
                        &|| format!("narrow_scaled {}", what()),
                        &bits(&want),
                        &bits(&got),
                    );
                    let f = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    same_bits(
                        &|| format!("dequantize_scaled f32 {}", what()),
                        &f(&want_f),
                        &f(&got_f),
                    );
                    let h = |v: &[BF16]| v.iter().map(|x| x.to_bits() as u32).collect::<Vec<_>>();
                    same_bits(
                        &|| format!("dequantize_scaled BF16 {}", what()),
                        &h(&want_b),
                        &h(&got_b),
                    );
                    let h = |v: &[F16]| v.iter().map(|x| x.to_bits() as u32).collect::<Vec<_>>();
                    same_bits(
                        &|| format!("dequantize_scaled F16 {}", what()),
                        &h(&want_h),
                        &h(&got_h),
                    );
                }
            }
        }
    }
}

#[test]
fn building_blocks_scaled_every_backend() {
    use vcvt::{F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0};
    let mut rng = Rng(0xB10C);
    check_building_blocks_for::<F8E4M3>(&mut rng, |c| c.to_bits() as u32, F8E4M3::from_bits);
    check_building_blocks_for::<F8E5M2>(&mut rng, |c| c.to_bits() as u32, F8E5M2::from_bits);
    check_building_blocks_for::<F8E4M3FNUZ>(
        &mut rng,
        |c| c.to_bits() as u32,
        F8E4M3FNUZ::from_bits,
    );
    check_building_blocks_for::<F8E5M2FNUZ>(
        &mut rng,
        |c| c.to_bits() as u32,
        F8E5M2FNUZ::from_bits,
    );
    check_building_blocks_for::<F6E2M3>(&mut rng, |c| c.to_bits() as u32, F6E2M3::from_bits);
    check_building_blocks_for::<F6E3M2>(&mut rng, |c| c.to_bits() as u32, F6E3M2::from_bits);
    check_building_blocks_for::<F4E2M1>(&mut rng, |c| c.to_bits() as u32, F4E2M1::from_bits);
    check_building_blocks_for::<F8E8M0>(&mut rng, |c| c.to_bits() as u32, F8E8M0::from_bits);
    use vcvt::{F8E3M4, F8E4M3B11FNUZ, F8E4M3IEEE, F8E5M3FNU};
    check_building_blocks_for::<F8E3M4>(&mut rng, |c| c.to_bits() as u32, F8E3M4::from_bits);
    check_building_blocks_for::<F8E4M3IEEE>(
        &mut rng,
        |c| c.to_bits() as u32,
        F8E4M3IEEE::from_bits,
    );
    check_building_blocks_for::<F8E4M3B11FNUZ>(
        &mut rng,
        |c| c.to_bits() as u32,
        F8E4M3B11FNUZ::from_bits,
    );
    check_building_blocks_for::<F8E5M3FNU>(&mut rng, |c| c.to_bits() as u32, F8E5M3FNU::from_bits);
}

#[test]
fn building_blocks_amax_every_backend() {
    let mut rng = Rng(0xA3A7);
    for &len in &[
        0usize, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1000, 4099,
    ] {
        for trial in 0..20 {
            let mut v = building_block_values(&mut rng, len);
            if trial % 2 == 0 {
                // Mostly without NaN, so the maximum is a value and its position matters.
                for x in v.iter_mut() {
                    if *x & 0x7FFF_FFFF > 0x7F80_0000 {
                        *x = rng.u32() & 0x7F7F_FFFF;
                    }
                }
            }
            let f: Vec<f32> = v.iter().map(|&x| f32::from_bits(x)).collect();
            let b: Vec<BF16> = v
                .iter()
                .map(|&x| BF16::from_bits((x >> 16) as u16))
                .collect();
            let h: Vec<F16> = v.iter().map(|&x| F16::from_bits(x as u16)).collect();
            let want = [
                vcvt::block::amax_on(Backend::Scalar, &f).unwrap().to_bits(),
                vcvt::block::amax_on(Backend::Scalar, &b).unwrap().to_bits(),
                vcvt::block::amax_on(Backend::Scalar, &h).unwrap().to_bits(),
            ];
            for &bk in &simd_backends() {
                let got = [
                    vcvt::block::amax_on(bk, &f).unwrap().to_bits(),
                    vcvt::block::amax_on(bk, &b).unwrap().to_bits(),
                    vcvt::block::amax_on(bk, &h).unwrap().to_bits(),
                ];
                assert_eq!(got, want, "{bk:?} len {len}");
            }
        }
    }
}
