//! The row handles ([`MxRows`], [`Fp8Rows`], issue 29) against the Scalar backend's
//! whole-matrix functions.
//!
//! For every available backend, every MX element under the profiles and layouts that take
//! different paths (`Ceil` and `Ocp` planar, `Mlx`, `Ggml`, the ggml `block_mxfp4` layout),
//! block FP8 with 128 × 128 and 1 × 128 tiles, and every row width `0..=300` (`Ggml` layout:
//! the multiples of 32): a matrix of three rows is quantized (MX) and dequantized one row per
//! call through a handle made for that backend, each row's buffers sitting at byte offsets
//! 0..=3 inside larger buffers filled with a canary. The rows must hold exactly what the
//! Scalar backend's `quantize`/`dequantize` write for the whole matrix, and every byte
//! around them must still be the canary. Wrong lengths must be refused with the error the
//! shape-taking functions give, before anything is written.
//!
//! Under `VCVT_SWEEP=sample` the widths are 0..=70 plus a few above.

mod common;

use std::mem::size_of;

use bytemuck::Pod;
use common::{Rng, backends, names};
use vcvt::block::{BlockDest, BlockFp8, Fp8Profile, Mx, MxElement, MxLayout, MxProfile, Shape};
use vcvt::{BF16, Backend, Error, F16};

const ROWS: usize = 3;
/// Canary bytes around each row's buffers.
const GUARD: usize = 48;
const CANARY: u8 = 0xA5;

fn widths(step: usize) -> Vec<usize> {
    let all: Vec<usize> = if common::sample_mode() {
        (0..=70)
            .chain([95, 96, 97, 127, 128, 129, 256, 300])
            .collect()
    } else {
        (0..=300).collect()
    };
    all.into_iter().filter(|c| c % step == 0).collect()
}

/// The MX formats whose handles are tested: every element in the planar layout under the
/// integer scale rules, plus each profile and layout with a path of its own.
fn mx_formats() -> Vec<Mx> {
    let mut v = Vec::new();
    for e in [
        MxElement::E4M3,
        MxElement::E5M2,
        MxElement::E2M3,
        MxElement::E3M2,
        MxElement::E2M1,
    ] {
        v.push(Mx::new(e));
        v.push(Mx::new(e).profile(MxProfile::Ocp));
    }
    v.push(Mx::new(MxElement::E2M1).profile(MxProfile::Mlx));
    v.push(Mx::new(MxElement::E4M3).profile(MxProfile::Mlx));
    v.push(Mx::new(MxElement::E2M1).profile(MxProfile::Ggml));
    for p in [MxProfile::Ggml, MxProfile::Ocp, MxProfile::Mlx] {
        v.push(Mx::new(MxElement::E2M1).profile(p).layout(MxLayout::Ggml));
    }
    v
}

/// Values of every magnitude the MX scales meet, with zeros, a NaN and infinities now and
/// then.
fn values(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| match rng.below(64) {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => -0.0,
            3 => 0.0,
            _ => {
                let m = 1.0 + rng.below(1 << 23) as f32 / (1u32 << 23) as f32;
                let e = rng.below(60) as i32 - 30;
                let s = if rng.below(2) == 0 { 1.0 } else { -1.0 };
                s * m * 2f32.powi(e)
            }
        })
        .collect()
}

/// `n` bytes at byte offset `off` of a canary-filled buffer: returns the buffer and the
/// range of the row.
fn guarded(n: usize, off: usize) -> (Vec<u8>, std::ops::Range<usize>) {
    (
        vec![CANARY; GUARD + off + n + GUARD],
        GUARD + off..GUARD + off + n,
    )
}

fn canaries_intact(buf: &[u8], row: &std::ops::Range<usize>) -> bool {
    buf[..row.start]
        .iter()
        .chain(&buf[row.end..])
        .all(|&b| b == CANARY)
}

/// The bytes of a slice of plain values.
fn bytes<T: Pod>(v: &[T]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// Dequantizes `codes`/`scales` (a whole `ROWS × cols` matrix) row by row through the
/// handle of `mx` on `b` into canary-guarded rows of `T`, and compares with `want`.
fn mx_dequantize_rows<T: BlockDest + Pod>(
    mx: Mx,
    b: Backend,
    cols: usize,
    codes: &[u8],
    scales: &[u8],
    want: &[T],
    off: usize,
) -> Result<(), String> {
    let row = mx.on(b).rows::<T>(cols).map_err(|e| e.to_string())?;
    if row.backend() != b {
        return Err(format!("handle made for {b} runs on {}", row.backend()));
    }
    let (dl, sl) = (row.data_len(), row.scales_len());
    let at = off * size_of::<T>()..(off + cols) * size_of::<T>();
    for r in 0..ROWS {
        let want = bytes(&want[r * cols..][..cols]);
        // `dequantize` into a canary-filled row at element offset `off`.
        let mut buf = vec![T::zeroed(); off + cols + 4];
        bytemuck::cast_slice_mut::<T, u8>(&mut buf).fill(CANARY);
        row.dequantize(
            &codes[r * dl..][..dl],
            &scales[r * sl..][..sl],
            &mut buf[off..off + cols],
        )
        .map_err(|e| e.to_string())?;
        let raw = bytes(&buf);
        if raw[at.clone()] != *want {
            return Err(format!("row {r} differs from Scalar"));
        }
        if !canaries_intact(raw, &at) {
            return Err(format!("row {r} written outside its row"));
        }
        // The uninit form, into the same kind of row.
        let mut slots = vec![std::mem::MaybeUninit::<T>::new(T::zeroed()); off + cols + 4];
        for s in slots.iter_mut() {
            s.write(bytemuck::pod_read_unaligned::<T>(
                &[CANARY; 4][..size_of::<T>()],
            ));
        }
        row.dequantize_uninit(
            &codes[r * dl..][..dl],
            &scales[r * sl..][..sl],
            &mut slots[off..off + cols],
        )
        .map_err(|e| e.to_string())?;
        // SAFETY: every slot is initialised (canary values, or the call's values).
        let typed: Vec<T> = slots.iter().map(|s| unsafe { s.assume_init() }).collect();
        let raw = bytes(&typed);
        if raw[at.clone()] != *want {
            return Err(format!("row {r} (uninit) differs from Scalar"));
        }
        if !canaries_intact(raw, &at) {
            return Err(format!("row {r} (uninit) written outside its row"));
        }
    }
    Ok(())
}

#[test]
fn mx_rows_match_the_scalar_matrix_functions() {
    let bs = backends("mx_rows_match_the_scalar_matrix_functions");
    let mut rng = Rng::new(0x29_0001);
    let mut failures = Vec::new();
    let mut cases = 0usize;
    for mx in mx_formats() {
        let step = if mx.data_len(Shape::vector(1)).is_err() {
            32
        } else {
            1
        };
        for cols in widths(step) {
            let shape = Shape::matrix(ROWS, cols);
            let src = values(&mut rng, ROWS * cols);
            let scalar = mx.on(Backend::Scalar);
            let (dl, sl) = (mx.data_len(shape).unwrap(), mx.scales_len(shape).unwrap());
            let (mut codes, mut scales) = (vec![0u8; dl], vec![0u8; sl]);
            scalar
                .quantize(&src, shape, &mut codes, &mut scales)
                .unwrap();
            // Scales of every kind for dequantization: the quantized ones with a few
            // replaced by extremes (0, 1, 254, 0xFF).
            let mut dq_scales = scales.clone();
            for s in dq_scales.iter_mut() {
                if rng.below(8) == 0 {
                    *s = [0u8, 1, 254, 0xFF][rng.below(4) as usize];
                }
            }
            let mut dq_codes = codes.clone();
            if sl == 0 {
                // The ggml layout: the scale is each block's first byte.
                for blk in dq_codes.chunks_mut(17) {
                    if rng.below(8) == 0 {
                        blk[0] = [0u8, 1, 254, 0xFF][rng.below(4) as usize];
                    }
                }
            }
            let mut want_f32 = vec![0f32; ROWS * cols];
            let mut want_bf16 = vec![BF16::ZERO; ROWS * cols];
            let mut want_f16 = vec![F16::ZERO; ROWS * cols];
            scalar
                .dequantize(&dq_codes, &dq_scales, shape, &mut want_f32)
                .unwrap();
            scalar
                .dequantize(&dq_codes, &dq_scales, shape, &mut want_bf16)
                .unwrap();
            scalar
                .dequantize(&dq_codes, &dq_scales, shape, &mut want_f16)
                .unwrap();
            for &b in &bs {
                let off = cases % 4;
                cases += 1;
                let what = format!("{mx:?} cols {cols} on {b}");
                // Quantization, one row per call, into canary-guarded rows.
                let row = mx.on(b).rows::<f32>(cols).unwrap();
                let (rdl, rsl) = (row.data_len(), row.scales_len());
                assert_eq!((ROWS * rdl, ROWS * rsl), (dl, sl), "{what}");
                for r in 0..ROWS {
                    let (mut cb, ca) = guarded(rdl, off);
                    let (mut sb, sa) = guarded(rsl, 3 - off);
                    row.quantize(
                        &src[r * cols..][..cols],
                        &mut cb[ca.clone()],
                        &mut sb[sa.clone()],
                    )
                    .unwrap();
                    if cb[ca.clone()] != codes[r * rdl..][..rdl]
                        || sb[sa.clone()] != scales[r * rsl..][..rsl]
                    {
                        failures.push(format!("{what}: quantized row {r} differs from Scalar"));
                    }
                    if !canaries_intact(&cb, &ca) || !canaries_intact(&sb, &sa) {
                        failures.push(format!("{what}: quantize wrote outside row {r}"));
                    }
                }
                // BF16 sources too: the Scalar matrix from the same BF16 values.
                let src16: Vec<BF16> = src.iter().map(|&x| BF16::from_f32(x)).collect();
                let (mut c16, mut s16) = (vec![0u8; dl], vec![0u8; sl]);
                scalar.quantize(&src16, shape, &mut c16, &mut s16).unwrap();
                let row16 = mx.on(b).rows::<BF16>(cols).unwrap();
                for r in 0..ROWS {
                    let (mut cb, mut sb) = (vec![0u8; rdl], vec![0u8; rsl]);
                    row16
                        .quantize(&src16[r * cols..][..cols], &mut cb, &mut sb)
                        .unwrap();
                    if cb != c16[r * rdl..][..rdl] || sb != s16[r * rsl..][..rsl] {
                        failures.push(format!("{what}: BF16 quantized row {r} differs"));
                    }
                }
                // Dequantization into each destination type.
                for res in [
                    mx_dequantize_rows(mx, b, cols, &dq_codes, &dq_scales, &want_f32, off),
                    mx_dequantize_rows(mx, b, cols, &dq_codes, &dq_scales, &want_bf16, off),
                    mx_dequantize_rows(mx, b, cols, &dq_codes, &dq_scales, &want_f16, off),
                ] {
                    if let Err(e) = res {
                        failures.push(format!("{what}: {e}"));
                    }
                }
            }
        }
    }
    println!("mx rows: {cases} cases on {}", names(&bs));
    assert!(
        failures.is_empty(),
        "{} failures, first: {:?}",
        failures.len(),
        &failures[..failures.len().min(8)]
    );
}

#[test]
fn fp8_rows_match_the_scalar_matrix_functions() {
    let bs = backends("fp8_rows_match_the_scalar_matrix_functions");
    let mut rng = Rng::new(0x29_0002);
    let mut failures = Vec::new();
    // 130 rows cross a 128-row tile boundary.
    let rows = 130;
    for fp8 in [
        BlockFp8::deepseek(),
        BlockFp8::new(1, 128).profile(Fp8Profile::Ue8m0),
        BlockFp8::new(4, 7),
    ] {
        for cols in widths(1)
            .into_iter()
            .step_by(if common::sample_mode() { 1 } else { 3 })
        {
            let shape = Shape::matrix(rows, cols);
            let src = values(&mut rng, rows * cols);
            let scalar = fp8.on(Backend::Scalar);
            let mut codes = vec![0u8; fp8.data_len(shape).unwrap()];
            let mut sc = vec![0u8; fp8.scale_inv_len(shape).unwrap()];
            scalar.quantize(&src, shape, &mut codes, &mut sc).unwrap();
            // Codes of every kind (NaN codes included), not only what quantization writes.
            for c in codes.iter_mut() {
                if rng.below(16) == 0 {
                    *c = rng.below(256) as u8;
                }
            }
            let mut want = vec![BF16::ZERO; rows * cols];
            scalar.dequantize(&codes, &sc, shape, &mut want).unwrap();
            let mut want32 = vec![0f32; rows * cols];
            scalar.dequantize(&codes, &sc, shape, &mut want32).unwrap();
            for &b in &bs {
                let row = fp8.on(b).rows::<BF16>(cols).unwrap();
                let row32 = fp8.on(b).rows::<f32>(cols).unwrap();
                assert_eq!(row.backend(), b);
                let sl = row.scale_inv_len();
                for r in 0..rows {
                    let tr = r / fp8_tile_rows(fp8);
                    let off = r % 4;
                    let mut buf = vec![BF16::from_bits(0xA5A5); off + cols + 4];
                    row.dequantize(
                        &codes[r * cols..][..cols],
                        &sc[tr * sl..][..sl],
                        &mut buf[off..off + cols],
                    )
                    .unwrap();
                    let at = 2 * off..2 * (off + cols);
                    if bytes(&buf)[at.clone()] != *bytes(&want[r * cols..][..cols]) {
                        failures.push(format!("{fp8:?} cols {cols} on {b}: row {r} differs"));
                    }
                    if !canaries_intact(bytes(&buf), &at) {
                        failures.push(format!("{fp8:?} cols {cols} on {b}: row {r} overran"));
                    }
                    let mut out32 = vec![0f32; cols];
                    row32
                        .dequantize(&codes[r * cols..][..cols], &sc[tr * sl..][..sl], &mut out32)
                        .unwrap();
                    if bytes(&out32) != bytes(&want32[r * cols..][..cols]) {
                        failures.push(format!("{fp8:?} cols {cols} on {b}: f32 row {r} differs"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures, first: {:?}",
        failures.len(),
        &failures[..failures.len().min(8)]
    );
}

fn fp8_tile_rows(fp8: BlockFp8) -> usize {
    // The tile height, read back from the scales one column of tiles needs for a tall
    // shape (4 bytes per tile row).
    let tall = 1 << 12;
    tall / (fp8.scale_inv_len(Shape::matrix(tall, 1)).unwrap() / 4)
}

#[test]
fn wrong_lengths_are_refused_before_writing() {
    let mx = Mx::new(MxElement::E2M1);
    let row = mx.rows::<f32>(40).unwrap();
    assert_eq!((row.data_len(), row.scales_len(), row.cols()), (20, 2, 40));
    let codes = [0x11u8; 20];
    let mut out = [7.0f32; 40];
    // Data and dst one short, scales one long: the error names the buffer, and is the one the
    // shape-taking function gives for the same buffers.
    for (d, s, o, name) in [
        (19, 2, 40, "data"),
        (20, 3, 40, "scales"),
        (20, 2, 39, "dst"),
    ] {
        let e = row.dequantize(&codes[..d], &[127u8; 3][..s], &mut out[..o]);
        let want = mx.dequantize(
            &codes[..d],
            &[127u8; 3][..s],
            Shape::vector(40),
            &mut [0f32; 40][..o],
        );
        match (e, want) {
            (Err(e @ Error::BlockLength { buffer, .. }), Err(w)) => {
                assert_eq!(buffer, name);
                assert_eq!(e, w);
            }
            other => panic!("{name}: {other:?}"),
        }
        assert!(out.iter().all(|&x| x == 7.0), "{name}: written on error");
    }
    let (mut c, mut s) = ([0u8; 20], [0u8; 2]);
    let e = row.quantize(&[1.0f32; 41], &mut c, &mut s).unwrap_err();
    assert!(matches!(
        e,
        Error::BlockLength {
            buffer: "src",
            expected: 40,
            given: 41
        }
    ));
    assert_eq!((c, s), ([0u8; 20], [0u8; 2]), "written on error");

    let f = BlockFp8::deepseek().rows::<BF16>(300).unwrap();
    assert_eq!(f.scale_inv_len(), 12);
    let mut o = [BF16::ONE; 300];
    let e = f.dequantize(&[0u8; 300], &[0u8; 8], &mut o).unwrap_err();
    assert!(matches!(
        e,
        Error::BlockLength {
            buffer: "scale_inv",
            expected: 12,
            given: 8
        }
    ));
    assert!(o.iter().all(|&x| x == BF16::ONE), "written on error");
    // Formats that cannot take the width are refused when the handle is made.
    assert!(matches!(
        mx.layout(MxLayout::Ggml).rows::<f32>(40),
        Err(Error::BlockShape { .. })
    ));
    assert!(matches!(
        BlockFp8::new(1, 0).rows::<f32>(8),
        Err(Error::BlockShape { .. })
    ));
}
