//! `vcvt::block` against the independent oracle of `tests/common` (values of every code
//! from the format definitions, nearest-value rounding by comparisons with exact
//! midpoints) and plain f64/f32 hardware arithmetic under the default FP environment.
//!
//! * MX dequantization: every scale byte × every element code, for each element format and
//!   each destination (f32, BF16, F16), on every backend.
//! * MX quantization: the scale rule of each profile for every f32 exponent with the
//!   mantissas where the rules change (0, 1, half, all ones, and one ulp either side of
//!   `max · 2^k`), plus random and special blocks, element by element.
//! * Block FP8 and NVFP4: the reference order of f32 operations, with the hardware's f32
//!   arithmetic as the oracle.
//! * Shapes: several rows, strides, short last blocks; errors that name the buffer and the
//!   sizes, and leave every buffer untouched.
//!
//! The third-party references (gguf, mlx, ml_dtypes-based numpy) are compared in
//! `tests/block_vectors.rs`; the backends against each other in `tests/block_backends.rs`.

mod common;

use common::{
    BF16_DEF, E2M1_DEF, E2M3_DEF, E3M2_DEF, E4M3_DEF, E5M2_DEF, F16_DEF, FormatDef, Oracle, pow2,
};
use vcvt::block::{BlockFp8, Fp8Profile, Mx, MxElement, MxProfile, Nvfp4, Shape};
use vcvt::{BF16, Backend, Error, F16, Overflow};

const ELEMENTS: [(MxElement, FormatDef, u32); 5] = [
    (MxElement::E4M3, E4M3_DEF, 256),
    (MxElement::E5M2, E5M2_DEF, 256),
    (MxElement::E2M3, E2M3_DEF, 64),
    (MxElement::E3M2, E3M2_DEF, 64),
    (MxElement::E2M1, E2M1_DEF, 16),
];

fn backends() -> Vec<Backend> {
    common::backends("block")
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn f32_near(&mut self, exp: i32) -> f32 {
        let m = (self.next() as u32) & 0x807F_FFFF;
        f32::from_bits(m | (((exp + 127).clamp(0, 254) as u32) << 23))
    }
}

/// The expected f32/BF16/F16 bits of an exact f64 value (or NaN bits) rounded once.
fn expect_dest(v: f64, dest: usize) -> u32 {
    static ORACLES: std::sync::OnceLock<(Oracle, Oracle)> = std::sync::OnceLock::new();
    let (bf16, f16) = ORACLES.get_or_init(|| (Oracle::new(BF16_DEF), Oracle::new(F16_DEF)));
    match dest {
        0 => (v as f32).to_bits(),
        1 => bf16.narrow_f64(v.to_bits(), Overflow::NonSaturating),
        _ => f16.narrow_f64(v.to_bits(), Overflow::NonSaturating),
    }
}

/// Packs codes as the planar layout stores them.
fn pack(element: MxElement, codes: &[u32]) -> Vec<u8> {
    if element == MxElement::E2M1 {
        codes
            .chunks(2)
            .map(|p| (p[0] | p.get(1).map_or(0, |h| h << 4)) as u8)
            .collect()
    } else {
        codes.iter().map(|&c| c as u8).collect()
    }
}

fn dequant_bits(mx: Mx, data: &[u8], scales: &[u8], shape: Shape, dest: usize) -> Vec<u32> {
    let n = shape.len();
    match dest {
        0 => {
            let mut out = vec![0f32; n];
            mx.dequantize(data, scales, shape, &mut out).unwrap();
            out.iter().map(|x| x.to_bits()).collect()
        }
        1 => {
            let mut out = vec![BF16::ZERO; n];
            mx.dequantize(data, scales, shape, &mut out).unwrap();
            out.iter().map(|x| x.to_bits() as u32).collect()
        }
        _ => {
            let mut out = vec![F16::ZERO; n];
            mx.dequantize(data, scales, shape, &mut out).unwrap();
            out.iter().map(|x| x.to_bits() as u32).collect()
        }
    }
}

#[test]
fn mx_dequantize_every_scale_and_code() {
    for backend in backends() {
        for (element, def, codes) in ELEMENTS {
            let oracle = Oracle::new(def);
            // One row: for each scale byte, the codes in blocks of 32 (the last short).
            let cols = codes as usize;
            let all: Vec<u32> = (0..codes).collect();
            let row = pack(element, &all);
            for dest in 0..3 {
                let mut data = Vec::new();
                let mut scales = Vec::new();
                for s in 0..=255u8 {
                    data.extend_from_slice(&row);
                    scales.extend(std::iter::repeat_n(s, cols.div_ceil(32)));
                }
                let shape = Shape::matrix(256, cols);
                let mx = Mx::new(element).on(backend);
                let got = dequant_bits(mx, &data, &scales, shape, dest);
                for s in 0..=255u32 {
                    for c in 0..codes {
                        let want = if s == 255 {
                            [0x7FC0_0000, 0x7FC0, 0x7E00][dest]
                        } else {
                            let e = f64::from_bits(oracle.widen_f64(c));
                            expect_dest(e * pow2(s as i32 - 127), dest)
                        };
                        let g = got[(s * codes + c) as usize];
                        assert_eq!(
                            g, want,
                            "{backend:?} {element:?} dest {dest} scale {s:#04x} code {c:#04x}: got {g:#x}, want {want:#x}"
                        );
                    }
                }
            }
        }
    }
}

/// The scale byte the profile's rule gives for a block with largest magnitude `amax`,
/// computed from the rule's statement: floor(log2) from an exact f64 `log2` comparison,
/// and the smallest power of two at least the f32 quotient, found by search.
fn expect_scale(element: MxElement, profile: MxProfile, amax: f32) -> u8 {
    if !amax.is_finite() {
        return 0xFF;
    }
    match profile {
        MxProfile::Ocp => {
            // Largest k with 2^k <= amax (amax = 0 or subnormal: the clamp gives 0).
            let a = amax as f64;
            let mut k = -160i32;
            while k < 130 && pow2(k + 1) <= a {
                k += 1;
            }
            (k - element.emax() + 127).clamp(0, 254) as u8
        }
        _ => {
            let d = (amax / element.max()) as f64;
            (0..=254u8)
                .find(|&b| pow2(b as i32 - 127) >= d)
                .unwrap_or(254)
        }
    }
}

fn quantize_block(mx: Mx, src: &[f32]) -> (Vec<u8>, u8) {
    let shape = Shape::vector(src.len());
    let mut data = vec![0u8; mx.data_len(shape).unwrap()];
    let mut scales = vec![0u8; 1];
    mx.quantize(src, shape, &mut data, &mut scales).unwrap();
    (data, scales[0])
}

fn code_of(element: MxElement, data: &[u8], i: usize) -> u32 {
    if element == MxElement::E2M1 {
        ((data[i / 2] >> (4 * (i & 1))) & 0xF) as u32
    } else {
        data[i] as u32
    }
}

fn check_block(mx: Mx, element: MxElement, profile: MxProfile, oracle: &Oracle, src: &[f32]) {
    let (data, s) = quantize_block(mx, src);
    let amax = src.iter().fold(0f32, |m, x| {
        if m.is_nan() || x.is_nan() {
            f32::NAN
        } else {
            m.max(x.abs())
        }
    });
    let want_s = expect_scale(element, profile, amax);
    assert_eq!(
        s,
        want_s,
        "{element:?} {profile:?} amax {amax:e} ({:#x})",
        amax.to_bits()
    );
    for (i, &x) in src.iter().enumerate() {
        let want = if s == 0xFF {
            0
        } else {
            let v = x as f64 * pow2(127 - s as i32);
            oracle.narrow_f64(v.to_bits(), Overflow::Saturate)
        };
        let got = code_of(element, &data, i);
        assert_eq!(got, want, "{element:?} {profile:?} x {x:e} scale {s}");
    }
}

#[test]
fn mx_scale_rules_every_exponent() {
    let mut rng = Rng(1);
    for (element, def, _) in ELEMENTS {
        let oracle = Oracle::new(def);
        for profile in [MxProfile::Ocp, MxProfile::Ceil] {
            let mx = Mx::new(element).profile(profile);
            let mut amaxes = Vec::new();
            for e in 0..=255u32 {
                for m in [
                    0u32, 1, 2, 0x3F_FFFF, 0x40_0000, 0x40_0001, 0x7F_FFFE, 0x7F_FFFF,
                ] {
                    amaxes.push(f32::from_bits((e << 23) | m));
                }
            }
            // One ulp either side of max · 2^k, where the ceiling rule changes.
            for k in -150..=128 {
                let c = (element.max() as f64 * pow2(k)) as f32;
                if c.is_finite() && c > 0.0 {
                    for d in -2i32..=2 {
                        amaxes.push(f32::from_bits((c.to_bits() as i32 + d) as u32));
                    }
                }
            }
            for amax in amaxes {
                // The block: amax, its negation, and values below it.
                let mut b = vec![amax, -amax * 0.5];
                for _ in 0..6 {
                    let f = (rng.next() >> 40) as f32 / (1u64 << 24) as f32;
                    b.push(if rng.next() & 1 == 0 {
                        amax * f
                    } else {
                        -amax * f
                    });
                }
                if amax.is_nan() {
                    b[1] = 1.0;
                }
                check_block(mx, element, profile, &oracle, &b);
            }
        }
    }
}

#[test]
fn mx_quantize_random_and_special_blocks() {
    let mut rng = Rng(2);
    for backend in backends() {
        for (element, def, _) in ELEMENTS {
            let oracle = Oracle::new(def);
            for profile in [MxProfile::Ocp, MxProfile::Ceil] {
                let mx = Mx::new(element).profile(profile).on(backend);
                for t in 0..400 {
                    let exp = (rng.next() % 300) as i32 - 150;
                    let mut b: Vec<f32> = (0..32).map(|_| rng.f32_near(exp - (t % 7))).collect();
                    match t % 10 {
                        0 => b.iter_mut().for_each(|x| *x = 0.0),
                        1 => b
                            .iter_mut()
                            .for_each(|x| *x = f32::from_bits(x.to_bits() & 0x807F_FFFF)),
                        2 => b[(t as usize / 10) % 32] = f32::NAN,
                        3 => b[(t as usize / 10) % 32] = f32::INFINITY,
                        4 => b[(t as usize / 10) % 32] = f32::NEG_INFINITY,
                        5 => b.iter_mut().for_each(|x| *x = -0.0),
                        6 => {
                            // Element midpoints times a power of two.
                            let s = pow2((rng.next() % 40) as i32 - 20) as f32;
                            for (i, x) in b.iter_mut().enumerate() {
                                let c = (i as u32) % (def_codes(element) / 2 - 1);
                                let lo = f32::from_bits(oracle.widen_f32(c));
                                let hi = f32::from_bits(oracle.widen_f32(c + 1));
                                *x = (lo + hi) / 2.0 * s * if i & 1 == 0 { 1.0 } else { -1.0 };
                            }
                        }
                        _ => {}
                    }
                    check_block(mx, element, profile, &oracle, &b);
                }
            }
        }
    }
}

fn def_codes(element: MxElement) -> u32 {
    match element {
        MxElement::E4M3 | MxElement::E5M2 => 256,
        MxElement::E2M3 | MxElement::E3M2 => 64,
        MxElement::E2M1 => 16,
    }
}

#[test]
fn mx_matrix_with_stride_and_short_blocks() {
    let mut rng = Rng(3);
    for backend in backends() {
        for (element, _, _) in ELEMENTS {
            for cols in [1usize, 5, 31, 32, 33, 64, 65, 100] {
                let (rows, stride) = (3, cols + 7);
                let shape = Shape::matrix(rows, cols).with_stride(stride);
                let src: Vec<f32> = (0..shape.len()).map(|_| rng.f32_near(-3)).collect();
                let mx = Mx::new(element).on(backend);
                let mut data = vec![0u8; mx.data_len(shape).unwrap()];
                let mut scales = vec![0u8; mx.scales_len(shape).unwrap()];
                mx.quantize(&src, shape, &mut data, &mut scales).unwrap();
                // Each row equals the row quantized alone, block by block.
                let rb = element.row_bytes(cols);
                let nb = cols.div_ceil(32);
                for r in 0..rows {
                    let row = &src[r * stride..r * stride + cols];
                    let mut d1 = vec![0u8; rb];
                    let mut s1 = vec![0u8; nb];
                    Mx::new(element)
                        .quantize(row, Shape::vector(cols), &mut d1, &mut s1)
                        .unwrap();
                    assert_eq!(
                        &data[r * rb..(r + 1) * rb],
                        &d1[..],
                        "{element:?} cols {cols}"
                    );
                    assert_eq!(&scales[r * nb..(r + 1) * nb], &s1[..]);
                    for (b, blk) in row.chunks(32).enumerate() {
                        let mut d2 = vec![0u8; element.row_bytes(blk.len())];
                        let mut s2 = [0u8];
                        Mx::new(element)
                            .quantize(blk, Shape::vector(blk.len()), &mut d2, &mut s2)
                            .unwrap();
                        assert_eq!(s2[0], s1[b]);
                        let off = element.row_bytes(32 * b);
                        assert_eq!(&d1[off..off + d2.len()], &d2[..]);
                    }
                    if element == MxElement::E2M1 && cols % 2 == 1 {
                        assert_eq!(d1[rb - 1] >> 4, 0, "the unused high nibble is 0");
                    }
                }
                // Dequantize into a strided destination: the gaps keep their canary.
                let mut out = vec![f32::from_bits(0x7FBA_D0D0); shape.len() + 3];
                let n = shape.len();
                mx.dequantize(&data, &scales, shape, &mut out[..n]).unwrap();
                for (i, x) in out.iter().enumerate() {
                    let inside = i < n && i % stride < cols;
                    assert_eq!(x.to_bits() == 0x7FBA_D0D0, !inside, "index {i}");
                }
            }
        }
    }
}

#[test]
fn errors_name_sizes_and_write_nothing() {
    let mx = Mx::new(MxElement::E2M1);
    let shape = Shape::matrix(2, 40);
    let src = vec![1.0f32; 80];
    let mut data = vec![0xAAu8; 40];
    let mut scales = vec![0xAAu8; 4];
    // MXFP4 of 2x40 needs 2*20 = 40 data bytes and 2*2 = 4 scales.
    assert_eq!(
        mx.quantize(&src, shape, &mut data[..39], &mut scales),
        Err(Error::BlockLength {
            buffer: "data",
            expected: 40,
            given: 39
        })
    );
    assert_eq!(
        mx.quantize(&src, shape, &mut data, &mut scales[..3]),
        Err(Error::BlockLength {
            buffer: "scales",
            expected: 4,
            given: 3
        })
    );
    assert_eq!(
        mx.quantize(&src[..79], shape, &mut data, &mut scales),
        Err(Error::BlockLength {
            buffer: "src",
            expected: 80,
            given: 79
        })
    );
    assert!(matches!(
        mx.quantize(
            &src,
            Shape::matrix(2, 40).with_stride(39),
            &mut data,
            &mut scales
        ),
        Err(Error::BlockShape {
            rows: 2,
            cols: 40,
            ..
        })
    ));
    assert!(data.iter().chain(&scales).all(|&b| b == 0xAA));
    let mut out = [BF16::from_f32(7.0); 80];
    assert_eq!(
        mx.dequantize(&data, &scales, shape, &mut out[..81 - 2]),
        Err(Error::BlockLength {
            buffer: "dst",
            expected: 80,
            given: 79
        })
    );
    assert!(out.iter().all(|x| x.to_f32() == 7.0));
    let msg = Error::BlockLength {
        buffer: "scales",
        expected: 4,
        given: 3,
    }
    .to_string();
    assert!(
        msg.contains("scales") && msg.contains('4') && msg.contains('3'),
        "{msg}"
    );

    let fp8 = BlockFp8::deepseek();
    let shape = Shape::matrix(130, 260); // 2 x 3 tiles
    assert_eq!(fp8.scale_inv_len(shape), Ok(2 * 3 * 4));
    let data = vec![0u8; 130 * 260];
    let mut out = vec![0f32; 130 * 260];
    assert_eq!(
        fp8.dequantize(&data, &[0u8; 20], shape, &mut out),
        Err(Error::BlockLength {
            buffer: "scale_inv",
            expected: 24,
            given: 20
        })
    );
    assert!(matches!(
        BlockFp8::new(0, 128).data_len(shape),
        Err(Error::BlockShape { .. })
    ));
    assert!(out.iter().all(|&x| x == 0.0));

    let unavailable = Backend::ALL.iter().find(|b| !b.is_available());
    if let Some(&b) = unavailable {
        let mut d = [0u8; 16];
        let mut s = [0u8; 1];
        assert_eq!(
            Mx::new(MxElement::E2M1)
                .on(b)
                .quantize(&[0f32; 32], Shape::vector(32), &mut d, &mut s),
            Err(Error::BackendUnavailable { backend: b })
        );
    }
}

#[test]
fn block_fp8_dequantize_reference_order() {
    let e4m3 = Oracle::new(E4M3_DEF);
    let bf16 = Oracle::new(BF16_DEF);
    let f16 = Oracle::new(F16_DEF);
    let mut rng = Rng(4);
    let mut scales: Vec<f32> = vec![0.0, -0.0, 1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
    for k in -149..=127 {
        scales.push(pow2(k) as f32);
    }
    for _ in 0..200 {
        let e = (rng.next() % 280) as i32 - 150;
        scales.push(rng.f32_near(e));
    }
    for backend in backends() {
        let fp8 = BlockFp8::new(1, 256).on(backend);
        let codes: Vec<u8> = (0..=255).collect();
        for &s in &scales {
            let shape = Shape::vector(256);
            let si = s.to_le_bytes();
            let mut o32 = vec![0f32; 256];
            let mut ob = vec![BF16::ZERO; 256];
            let mut oh = vec![F16::ZERO; 256];
            fp8.dequantize(&codes, &si, shape, &mut o32).unwrap();
            fp8.dequantize(&codes, &si, shape, &mut ob).unwrap();
            fp8.dequantize(&codes, &si, shape, &mut oh).unwrap();
            for c in 0..256usize {
                let x = f32::from_bits(e4m3.widen_f32(c as u32));
                let y = x * s; // the reference: one f32 product (default FP environment)
                if y.is_nan() {
                    assert!(o32[c].is_nan() && ob[c].is_nan() && oh[c].is_nan());
                    continue;
                }
                assert_eq!(
                    o32[c].to_bits(),
                    y.to_bits(),
                    "{backend:?} code {c:#x} scale {s:e}"
                );
                let wb = bf16.narrow_f32(y.to_bits(), Overflow::NonSaturating);
                let wh = f16.narrow_f32(y.to_bits(), Overflow::NonSaturating);
                assert_eq!(
                    ob[c].to_bits() as u32,
                    wb,
                    "{backend:?} bf16 code {c:#x} scale {s:e}"
                );
                assert_eq!(
                    oh[c].to_bits() as u32,
                    wh,
                    "{backend:?} f16 code {c:#x} scale {s:e}"
                );
            }
        }
    }
}

#[test]
fn block_fp8_quantize_tiles() {
    let e4m3 = Oracle::new(E4M3_DEF);
    let mut rng = Rng(5);
    for profile in [Fp8Profile::DeepSeek, Fp8Profile::Ue8m0] {
        for (rows, cols, tr, tc) in [(3, 300, 1, 128), (130, 129, 128, 128), (5, 7, 2, 3)] {
            let shape = Shape::matrix(rows, cols);
            let fp8 = BlockFp8::new(tr, tc).profile(profile);
            let mut src: Vec<f32> = (0..rows * cols)
                .map(|i| rng.f32_near(((i / 97) % 30) as i32 - 15))
                .collect();
            src[0] = 0.0; // part of a tile only
            let mut data = vec![0u8; rows * cols];
            let mut si = vec![0u8; fp8.scale_inv_len(shape).unwrap()];
            fp8.quantize(&src, shape, &mut data, &mut si).unwrap();
            let across = cols.div_ceil(tc);
            for r in 0..rows {
                for c in 0..cols {
                    let (t0, t1) = (r / tr, c / tc);
                    let mut amax = 0f32;
                    for rr in t0 * tr..((t0 + 1) * tr).min(rows) {
                        for cc in t1 * tc..((t1 + 1) * tc).min(cols) {
                            amax = amax.max(src[rr * cols + cc].abs());
                        }
                    }
                    let mut s = amax.max(1e-4) / 448.0;
                    if profile == Fp8Profile::Ue8m0 {
                        s = (0..=254)
                            .map(|b| pow2(b - 127) as f32)
                            .find(|&p| p >= s)
                            .unwrap();
                    }
                    let i = t0 * across + t1;
                    let got_s = f32::from_le_bytes(si[4 * i..4 * i + 4].try_into().unwrap());
                    assert_eq!(got_s.to_bits(), s.to_bits());
                    let want =
                        e4m3.narrow_f32((src[r * cols + c] / s).to_bits(), Overflow::Saturate);
                    assert_eq!(data[r * cols + c] as u32, want, "{profile:?} ({r}, {c})");
                }
            }
        }
    }
}

#[test]
fn nvfp4_modelopt_reference_order() {
    let e4m3 = Oracle::new(E4M3_DEF);
    let e2m1 = Oracle::new(E2M1_DEF);
    let mut rng = Rng(6);
    for t in 0..50 {
        let (rows, cols) = (2 + t % 3, [16, 32, 48, 20, 7][t % 5]);
        let shape = Shape::matrix(rows, cols);
        let mut src: Vec<f32> = (0..rows * cols)
            .map(|_| rng.f32_near((t % 9) as i32 - 4))
            .collect();
        if t % 4 == 0 {
            src[..cols.min(16)].iter_mut().for_each(|x| *x = 0.0);
        }
        let nv = Nvfp4::new();
        let mut data = vec![0u8; nv.data_len(shape).unwrap()];
        let mut scales = vec![0u8; nv.scales_len(shape).unwrap()];
        let g = nv
            .quantize(&src, shape, &mut data, &mut scales, None)
            .unwrap();
        let amax = src.iter().fold(0f32, |m, x| m.max(x.abs()));
        assert_eq!(g.to_bits(), (amax / 2688.0).to_bits());
        let nb = cols.div_ceil(16);
        let mut out = vec![0f32; rows * cols];
        nv.dequantize(&data, &scales, g, shape, &mut out).unwrap();
        for r in 0..rows {
            for b in 0..nb {
                let blk = &src[r * cols + 16 * b..r * cols + (16 * b + 16).min(cols)];
                let ab = blk.iter().fold(0f32, |m, x| m.max(x.abs()));
                let mut q = ab / (6.0 * g);
                if q == 0.0 {
                    q = 1.0;
                }
                let s8 = e4m3.narrow_f32(q.to_bits(), Overflow::Saturate);
                assert_eq!(scales[r * nb + b] as u32, s8);
                let denom = f32::from_bits(e4m3.widen_f32(s8)) * g;
                for (i, &x) in blk.iter().enumerate() {
                    let j = 16 * b + i;
                    let code = ((data[r * cols.div_ceil(2) + j / 2] >> (4 * (j & 1))) & 0xF) as u32;
                    assert_eq!(
                        code,
                        e2m1.narrow_f32((x / denom).to_bits(), Overflow::Saturate)
                    );
                    let v = f32::from_bits(e2m1.widen_f32(code)) * denom;
                    assert_eq!(out[r * cols + j].to_bits(), v.to_bits());
                }
            }
        }
    }
}

#[test]
fn building_blocks_against_the_oracle() {
    let mut rng = Rng(7);
    let e4m3 = Oracle::new(E4M3_DEF);
    let src: Vec<f32> = (0..1000).map(|i| rng.f32_near((i % 40) - 20)).collect();
    let mut by_block = vec![0f32; 1000usize.div_ceil(32)];
    vcvt::block::amax_blocks(&src, 32, &mut by_block).unwrap();
    for (m, chunk) in by_block.iter().zip(src.chunks(32)) {
        assert_eq!(*m, chunk.iter().fold(0f32, |a, x| a.max(x.abs())));
    }
    for scale in [0.5f32, 3.0, 1.0 / 3.0, 1e-30, 7e20] {
        let mut q = vec![vcvt::F8E4M3::ZERO; 1000];
        vcvt::block::narrow_scaled(&src, scale, &mut q).unwrap();
        for (x, c) in src.iter().zip(&q) {
            let v = *x as f64 * scale as f64; // exact
            assert_eq!(
                c.to_bits() as u32,
                e4m3.narrow_f64(v.to_bits(), Overflow::Saturate)
            );
        }
        let mut back = vec![BF16::ZERO; 1000];
        vcvt::block::dequantize_scaled(&q, scale, &mut back).unwrap();
        for (c, b) in q.iter().zip(&back) {
            let v = f64::from_bits(e4m3.widen_f64(c.to_bits() as u32)) * scale as f64;
            assert_eq!(b.to_bits() as u32, expect_dest(v, 1));
        }
    }
}

#[test]
fn mxfp4_layouts_repack_losslessly_and_agree() {
    use vcvt::block::{MxLayout, mxfp4_ggml_to_planar, mxfp4_planar_to_ggml};
    let mut rng = Rng(8);
    let shape = Shape::matrix(3, 96);
    let src: Vec<f32> = (0..shape.len()).map(|_| rng.f32_near(0)).collect();
    let planar = Mx::new(MxElement::E2M1);
    let ggml = planar.layout(MxLayout::Ggml);
    let mut blocks = vec![0u8; planar.data_len(shape).unwrap()];
    let mut scales = vec![0u8; planar.scales_len(shape).unwrap()];
    planar
        .quantize(&src, shape, &mut blocks, &mut scales)
        .unwrap();
    let mut g = vec![0u8; ggml.data_len(shape).unwrap()];
    ggml.quantize(&src, shape, &mut g, &mut []).unwrap();
    // The same codes and scales, in the other layout.
    let mut repacked = vec![0u8; g.len()];
    mxfp4_planar_to_ggml(&blocks, &scales, &mut repacked).unwrap();
    assert_eq!(repacked, g);
    let (mut b2, mut s2) = (vec![0u8; blocks.len()], vec![0u8; scales.len()]);
    mxfp4_ggml_to_planar(&g, &mut b2, &mut s2).unwrap();
    assert_eq!((b2, s2), (blocks.clone(), scales.clone()));
    // Both layouts dequantize to the same values; element j of block b sits where ggml says.
    let (mut a, mut c) = (vec![0f32; shape.len()], vec![0f32; shape.len()]);
    planar.dequantize(&blocks, &scales, shape, &mut a).unwrap();
    ggml.dequantize(&g, &[], shape, &mut c).unwrap();
    assert_eq!(
        a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        c.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    let e2m1 = Oracle::new(E2M1_DEF);
    for j in 0..32 {
        let code = if j < 16 {
            g[1 + j] & 0xF
        } else {
            g[1 + j - 16] >> 4
        };
        let v = f64::from_bits(e2m1.widen_f64(code as u32)) * pow2(g[0] as i32 - 127);
        assert_eq!(a[j], v as f32);
    }
    assert!(matches!(
        ggml.data_len(Shape::matrix(1, 40)),
        Err(Error::BlockShape { .. })
    ));
    assert!(matches!(
        Mx::new(MxElement::E4M3)
            .profile(MxProfile::Ggml)
            .data_len(Shape::vector(32)),
        Err(Error::BlockShape { .. })
    ));
}

/// Found by the block fuzz target: a shape with rows but no columns (and a stride) has
/// length 0; every entry point must accept it with empty buffers and write nothing.
#[test]
fn empty_shapes_with_rows_and_a_stride() {
    use vcvt::block::{MxLayout, NvLayout, NvProfile};
    for shape in [
        Shape::matrix(2, 0).with_stride(1),
        Shape::matrix(3, 0),
        Shape::matrix(0, 64),
        Shape::vector(0),
    ] {
        for mx in [
            Mx::new(MxElement::E4M3),
            Mx::new(MxElement::E2M1),
            Mx::new(MxElement::E2M1)
                .profile(MxProfile::Ggml)
                .layout(MxLayout::Ggml),
            Mx::new(MxElement::E2M1).profile(MxProfile::Mlx),
        ] {
            mx.quantize(&[0f32; 0], shape, &mut [], &mut []).unwrap();
            mx.dequantize(&[], &[], shape, &mut [0f32; 0]).unwrap();
        }
        for nv in [
            Nvfp4::new(),
            Nvfp4::new().profile(NvProfile::Mlx),
            Nvfp4::new().profile(NvProfile::Ggml).layout(NvLayout::Ggml),
        ] {
            nv.quantize(&[BF16::ZERO; 0], shape, &mut [], &mut [], None)
                .unwrap();
            nv.dequantize(&[], &[], 1.0, shape, &mut [F16::ZERO; 0])
                .unwrap();
        }
        let fp8 = BlockFp8::deepseek();
        let si = vec![0u8; fp8.scale_inv_len(shape).unwrap()];
        fp8.dequantize(&[], &si, shape, &mut [0f32; 0]).unwrap();
        fp8.quantize(&[0f32; 0], shape, &mut [], &mut si.clone())
            .unwrap();
    }
}

fn is_nan32(x: u32) -> bool {
    x & 0x7FFF_FFFF > 0x7F80_0000
}

/// The scaled building blocks' rule for f32 bit patterns `x · s`, as an f64 (the exact
/// product): a NaN operand propagates (`x` first), quieted, and `0 · ∞` is `+NaN`.
fn product(x: u32, s: u32) -> f64 {
    let quiet = |v: u32| (f32::from_bits(v | 0x0040_0000)) as f64;
    if is_nan32(x) {
        quiet(x)
    } else if is_nan32(s) {
        quiet(s)
    } else {
        let p = f32::from_bits(x) as f64 * f32::from_bits(s) as f64;
        if p.is_nan() {
            f64::NAN.copysign(1.0)
        } else {
            p
        }
    }
}

/// [`product`] rounded to f32 bits: a NaN keeps its sign and payload, quieted.
fn product_f32(x: u32, s: u32) -> u32 {
    let p = product(x, s);
    if p.is_nan() {
        let q = if is_nan32(x) {
            x
        } else if is_nan32(s) {
            s
        } else {
            0x7FC0_0000
        };
        q | 0x0040_0000
    } else {
        expect_dest(p, 0)
    }
}

/// `dequantize_scaled` of calls long enough for the per-call table (every byte eight times
/// and a tail, shuffled; the bytes above a four- or six-bit format's width set too; the
/// longest call spans three of the f32 path's widening chunks) under scales the fused path
/// does not serve (full significands, signs, subnormal, huge and special scales) and some
/// it does, for every format and destination on every backend, each value against the
/// rule: the oracle's code value times the scale, exactly, rounded once by the oracle. The
/// f32 destinations start 0 to 15 values past a 64-byte line.
#[test]
fn dequantize_scaled_any_scale_against_the_rule() {
    fn check<C: vcvt::block::ScaledCode + bytemuck::Pod>(def: FormatDef, rng: &mut Rng) {
        let o = Oracle::new(def);
        let mut bytes: Vec<u8> = (0..8 * 256 + 41).map(|i| i as u8).collect();
        for i in (1..bytes.len()).rev() {
            bytes.swap(i, (rng.next() % (i as u64 + 1)) as usize);
        }
        let mut scales: Vec<u32> = vec![
            0x3DCC_CCCD, // 0.1
            0xBDCC_CCCD,
            0x3F80_0001,
            0x3B80_0000, // 2^-8: exact, the fused path where there is one
            0x0000_0001,
            0x0012_3457,
            0x8000_0003,
            0x7F7F_FFFF,
            0x7E12_3457,
            0x0000_0000,
            0x8000_0000,
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0000,
            0xFFA0_0001,
        ];
        scales.extend((0..12).map(|_| rng.next() as u32));
        for n in [bytes.len(), 809, 300, 70, 40] {
            let codes: &[C] = bytemuck::cast_slice(&bytes[..n]);
            for b in backends() {
                for (k, &s) in scales.iter().enumerate() {
                    let scale = f32::from_bits(s);
                    // The destination `k % 16` values past a 64-byte line.
                    let mut words = vec![0u32; n + 32];
                    let line = (64 - (words.as_ptr() as usize & 63)) / 4 % 16;
                    let start = line + k % 16;
                    let f: &mut [f32] = bytemuck::cast_slice_mut(&mut words[start..start + n]);
                    let mut h = vec![F16::ZERO; n];
                    let mut bf = vec![BF16::ZERO; n];
                    vcvt::block::dequantize_scaled_on(b, codes, scale, f).unwrap();
                    vcvt::block::dequantize_scaled_on(b, codes, scale, &mut bf).unwrap();
                    vcvt::block::dequantize_scaled_on(b, codes, scale, &mut h).unwrap();
                    for (i, &c) in bytes[..n].iter().enumerate() {
                        let cv = o.widen_f32(u32::from(c));
                        let p = product(cv, s);
                        let what = || format!("{} {c:#x} · {s:#x} on {b}, n {n}", def.name);
                        assert_eq!(f[i].to_bits(), product_f32(cv, s), "f32 {}", what());
                        assert_eq!(
                            u32::from(bf[i].to_bits()),
                            expect_dest(p, 1),
                            "BF16 {}",
                            what()
                        );
                        assert_eq!(
                            u32::from(h[i].to_bits()),
                            expect_dest(p, 2),
                            "F16 {}",
                            what()
                        );
                    }
                }
            }
        }
    }
    use common::{
        E3M4_DEF, E4M3B11FNUZ_DEF, E4M3FNUZ_DEF, E4M3IEEE_DEF, E5M2FNUZ_DEF, E5M3FNU_DEF, E8M0_DEF,
    };
    let mut rng = Rng(0x7AB1_E5CA);
    check::<vcvt::F8E4M3>(E4M3_DEF, &mut rng);
    check::<vcvt::F8E5M2>(E5M2_DEF, &mut rng);
    check::<vcvt::F8E4M3FNUZ>(E4M3FNUZ_DEF, &mut rng);
    check::<vcvt::F8E5M2FNUZ>(E5M2FNUZ_DEF, &mut rng);
    check::<vcvt::F6E2M3>(E2M3_DEF, &mut rng);
    check::<vcvt::F6E3M2>(E3M2_DEF, &mut rng);
    check::<vcvt::F4E2M1>(E2M1_DEF, &mut rng);
    check::<vcvt::F8E3M4>(E3M4_DEF, &mut rng);
    check::<vcvt::F8E4M3IEEE>(E4M3IEEE_DEF, &mut rng);
    check::<vcvt::F8E4M3B11FNUZ>(E4M3B11FNUZ_DEF, &mut rng);
    check::<vcvt::F8E5M3FNU>(E5M3FNU_DEF, &mut rng);
    check::<vcvt::F8E8M0>(E8M0_DEF, &mut rng);
}

/// `narrow_scaled` under scales that are not powers of two, on the inputs where rounding the
/// product to f32 first would round twice wrongly: for each midpoint `m` between two
/// neighbouring values of the format and each of 40 random full-significand scales `s`, the
/// f32 values `x` near `m / s` whose product rounds to exactly `m` in f32 without being `m`
/// (so the product lies just off the midpoint, on the side the code must follow), both
/// signs; every backend, each code against the oracle's rounding of the exact product.
#[test]
fn narrow_scaled_any_scale_off_midpoints() {
    fn check<C: vcvt::block::ScaledCode + Copy + Default>(
        def: FormatDef,
        bits: fn(C) -> u32,
        rng: &mut Rng,
    ) {
        let o = Oracle::new(def);
        let mut found = 0;
        for _ in 0..40 {
            // A full significand and an exponent in 2^-8 .. 2^8, either sign.
            let sb = (((rng.next() % 17) as u32 + 119) << 23)
                | (rng.next() as u32 & 0x007F_FFFF)
                | 1
                | ((rng.next() as u32 & 1) << 31);
            let s = f32::from_bits(sb);
            let mut xs = Vec::new();
            for &m in o.mids.iter().filter(|m| m.is_finite() && **m > 0.0) {
                let near = (m / s.abs() as f64) as f32;
                for d in -2i32..=2 {
                    let x = f32::from_bits(near.to_bits().wrapping_add_signed(d));
                    let v = x as f64 * s.abs() as f64;
                    if v as f32 as f64 == m && v != m {
                        xs.extend([x, -x]);
                    }
                }
            }
            found += xs.len();
            for b in backends() {
                let mut q = vec![C::default(); xs.len()];
                vcvt::block::narrow_scaled_on(b, &xs, s, &mut q).unwrap();
                for (&x, &c) in xs.iter().zip(&q) {
                    let v = x as f64 * s as f64;
                    let want = o.narrow_f64(v.to_bits(), Overflow::Saturate);
                    assert_eq!(bits(c), want, "{} {x:e} · {s:e} on {b}", def.name);
                }
            }
        }
        // The search finds such inputs for most midpoints and scales.
        assert!(
            found > 400,
            "{}: only {found} inputs off a midpoint",
            def.name
        );
    }
    use common::E4M3FNUZ_DEF;
    let mut rng = Rng(0x0DD_0DD);
    check::<vcvt::F8E4M3>(E4M3_DEF, |c| c.to_bits().into(), &mut rng);
    check::<vcvt::F8E5M2>(E5M2_DEF, |c| c.to_bits().into(), &mut rng);
    check::<vcvt::F8E4M3FNUZ>(E4M3FNUZ_DEF, |c| c.to_bits().into(), &mut rng);
    check::<vcvt::F6E2M3>(E2M3_DEF, |c| c.to_bits().into(), &mut rng);
    check::<vcvt::F4E2M1>(E2M1_DEF, |c| c.to_bits().into(), &mut rng);
}

/// `dequantize_scaled` into BF16 and F16 under scales that are not exact for the format, on
/// the products that round in f32 to exactly a midpoint of the destination without being
/// it (so rounding the product to f32 first would round twice wrongly): for midpoints `m`
/// of the destination between 2^-20 and 2^20 and codes `c` with two to five significant
/// bits, the scales `s` near `m / c` with that property, found by search; calls of 40 and
/// 600 values (every route but the table for the eight-bit formats), both signs of the code,
/// every backend, against the oracle's rounding of the exact product.
#[test]
fn dequantize_scaled_any_scale_off_midpoints() {
    fn check<C: vcvt::block::ScaledCode + bytemuck::Pod>(def: FormatDef, rng: &mut Rng) {
        let o = Oracle::new(def);
        let codes: Vec<u32> = (1..=u32::from(C::CODE_MASK) / 2)
            .filter(|&c| {
                let v = o.widen_f32(c);
                let f = v & 0x007F_FFFF;
                v & 0x7F80_0000 != 0x7F80_0000 && v >= 0x0080_0000 && f != 0
            })
            .collect();
        for (dest, dname) in [(1usize, BF16_DEF), (2, F16_DEF)] {
            let d = Oracle::new(dname);
            let mids: Vec<f64> = d
                .mids
                .iter()
                .copied()
                .filter(|m| (2f64.powi(-20)..2f64.powi(20)).contains(m))
                .collect();
            let mut found = 0;
            for _ in 0..300 {
                let m = mids[(rng.next() % mids.len() as u64) as usize];
                let c = codes[(rng.next() % codes.len() as u64) as usize];
                let cv = f32::from_bits(o.widen_f32(c)) as f64;
                let near = (m / cv) as f32;
                for dd in -2i32..=2 {
                    let s = f32::from_bits(near.to_bits().wrapping_add_signed(dd));
                    let v = cv * s as f64;
                    if v as f32 as f64 != m || v == m {
                        continue;
                    }
                    found += 1;
                    let bytes: Vec<u8> = (0..600)
                        .map(|i| {
                            (c as u8)
                                | if i % 2 == 1 {
                                    (C::CODE_MASK >> 1) + 1
                                } else {
                                    0
                                }
                        })
                        .collect();
                    let want: Vec<u32> = bytes[..2]
                        .iter()
                        .map(|&x| expect_dest(product(o.widen_f32(x.into()), s.to_bits()), dest))
                        .collect();
                    for n in [40, 600] {
                        let src: &[C] = bytemuck::cast_slice(&bytes[..n]);
                        for b in backends() {
                            let mut bf = vec![BF16::ZERO; n];
                            let mut h = vec![F16::ZERO; n];
                            vcvt::block::dequantize_scaled_on(b, src, s, &mut bf).unwrap();
                            vcvt::block::dequantize_scaled_on(b, src, s, &mut h).unwrap();
                            let got = |i: usize| {
                                if dest == 1 {
                                    u32::from(bf[i].to_bits())
                                } else {
                                    u32::from(h[i].to_bits())
                                }
                            };
                            for (i, &byte) in bytes[..n].iter().enumerate() {
                                assert_eq!(
                                    got(i),
                                    want[i % 2],
                                    "{} {byte:#x} · {s:e} on {b}, n {n}",
                                    def.name
                                );
                            }
                        }
                    }
                }
            }
            // The search finds such scales for most draws.
            assert!(
                found > 100,
                "{}: only {found} scales off a midpoint",
                def.name
            );
        }
    }
    use common::E3M4_DEF;
    let mut rng = Rng(0x0DD_5CA1E);
    check::<vcvt::F8E4M3>(E4M3_DEF, &mut rng);
    check::<vcvt::F8E5M2>(E5M2_DEF, &mut rng);
    check::<vcvt::F6E2M3>(E2M3_DEF, &mut rng);
    check::<vcvt::F4E2M1>(E2M1_DEF, &mut rng);
    check::<vcvt::F8E3M4>(E3M4_DEF, &mut rng);
}

/// The NaN results of the scaled building blocks are the same on every CPU: a NaN value
/// propagates (the value's before the scale's), quieted, and `0 · ∞` is `+NaN`; then the
/// destination's NaN rule applies (checked with the oracle). Also every special value
/// against the exact product.
#[test]
fn building_blocks_nan_and_specials() {
    let e4m3 = Oracle::new(E4M3_DEF);
    let specials: [u32; 12] = [
        0,
        0x8000_0000,
        1,
        0x8000_0001,
        0x3F80_0000,
        0xC0A0_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0xFFC0_0001,
        0x7F80_0001,
        0xFFA0_1000,
    ];
    for backend in backends() {
        for &x in &specials {
            for &s in &specials {
                let mut q = [vcvt::F8E4M3::ZERO];
                vcvt::block::narrow_scaled_on(
                    backend,
                    &[f32::from_bits(x)],
                    f32::from_bits(s),
                    &mut q,
                )
                .unwrap();
                let want = e4m3.narrow_f64(product(x, s).to_bits(), Overflow::Saturate);
                assert_eq!(q[0].to_bits() as u32, want, "{backend:?} {x:#x} · {s:#x}");
            }
            for code in [0u8, 0x80, 0x38, 0xB8, 0x7E, 0x7F, 0xFF] {
                let c = vcvt::F8E4M3::from_bits(code);
                let cv = f32::from_bits(e4m3.widen_f32(code as u32)).to_bits();
                let p = product(cv, x);
                let mut f = [0f32];
                let mut b = [BF16::ZERO];
                let mut h = [F16::ZERO];
                vcvt::block::dequantize_scaled_on(backend, &[c], f32::from_bits(x), &mut f)
                    .unwrap();
                vcvt::block::dequantize_scaled_on(backend, &[c], f32::from_bits(x), &mut b)
                    .unwrap();
                vcvt::block::dequantize_scaled_on(backend, &[c], f32::from_bits(x), &mut h)
                    .unwrap();
                let what = format!("{backend:?} code {code:#x} · {x:#x}");
                assert_eq!(f[0].to_bits(), product_f32(cv, x), "f32 {what}");
                assert_eq!(b[0].to_bits() as u32, expect_dest(p, 1), "BF16 {what}");
                assert_eq!(h[0].to_bits() as u32, expect_dest(p, 2), "F16 {what}");
            }
        }
    }
}
