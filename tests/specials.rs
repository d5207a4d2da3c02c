//! Blocks of special values (±Inf, each format's MAX and overflow threshold with their
//! neighbours, ±0, the smallest subnormals and their ties) with no NaN among them, and the
//! same blocks with one NaN placed at every fifth position in turn, narrowed from f32 and f64 on
//! every available backend under both overflow policies and checked against the oracle.
//!
//! Some kernels take a shorter path for a block of inputs without NaN (the AVX2 f32 → BF16
//! step); in random inputs such blocks rarely hold ±Inf or values next to the overflow
//! threshold, so these slices make sure that both paths see them, every time.

mod common;

use common::{Narrow, Report, backends, expect_f32_block, expect_f64_block, names, to_u64};
use vcvt::{
    BF16, Backend, ConvertTo, F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FNUZ,
    F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, Options, Overflow,
};

/// Magnitudes around each format's limits, as f64, every one exactly representable in f32
/// (the neighbours are taken one f32 ulp away).
fn magnitudes() -> Vec<f64> {
    let mut v = vec![
        0.0,
        f64::INFINITY,
        1.0,
        // F16: MAX, the overflow threshold (a tie, rounds to Inf), the smallest subnormal.
        65504.0,
        65520.0,
        2f64.powi(-24),
        2f64.powi(-25),
        // BF16: MAX, its overflow threshold, f32::MAX.
        f64::from(f32::from_bits(0x7F7F_0000)),
        f64::from(f32::from_bits(0x7F7F_8000)),
        f64::from(f32::MAX),
        // E4M3: MAX 448, threshold 464; E5M2: MAX 57344, threshold 61440.
        448.0,
        464.0,
        57344.0,
        61440.0,
        // Smallest subnormals of E4M3 and E5M2 and the halves (ties to zero).
        2f64.powi(-9),
        2f64.powi(-10),
        2f64.powi(-16),
        2f64.powi(-17),
        // fnuz: MAX 240 and its threshold 248, the smallest subnormals 2^-10 and 2^-17.
        240.0,
        248.0,
        2f64.powi(-11),
        2f64.powi(-18),
        // fp6 and fp4: MAX 7.5, 28 and 6, their thresholds, the smallest subnormals' halves.
        7.5,
        7.75,
        28.0,
        30.0,
        6.0,
        7.0,
        0.0625,
        0.03125,
        0.25,
        // E8M0: 2^127, the overflow tie 1.5 * 2^127, 2^-127 and the tie above it.
        2f64.powi(127),
        1.5 * 2f64.powi(127),
        2f64.powi(-127),
        1.5 * 2f64.powi(-127),
    ];
    // Neighbours (one f32 ulp either side) of every finite non-zero one.
    let finite: Vec<f64> = v
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    for x in finite {
        let b = (x as f32).to_bits();
        v.push(f64::from(f32::from_bits(b - 1)));
        if b + 1 < 0x7F80_0000 {
            v.push(f64::from(f32::from_bits(b + 1)));
        }
    }
    v
}

/// Both signs of every magnitude, in an order that puts different kinds next to each other.
fn values() -> Vec<f64> {
    let m = magnitudes();
    let mut v = Vec::new();
    for (i, x) in m.iter().enumerate() {
        v.push(*x);
        v.push(-m[(i * 7 + 3) % m.len()]);
    }
    v
}

fn check<S: ConvertTo<T> + bytemuck::Pod, T: Narrow>(
    src: &[S],
    expect: impl Fn(&[S], &mut [T], &mut [T]),
    bs: &[Backend],
    report: &mut Report,
) {
    let n = src.len();
    let (mut sat, mut nonsat) = (vec![T::from_code(0); n], vec![T::from_code(0); n]);
    expect(src, &mut sat, &mut nonsat);
    for &b in bs {
        for (mode, want) in [
            (Overflow::Saturate, &sat),
            (Overflow::NonSaturating, &nonsat),
        ] {
            let mut got = vec![T::from_code(0); n];
            vcvt::convert_slice_on(b, src, &mut got, Options::new().overflow(mode)).unwrap();
            let what = || {
                format!(
                    "{} -> {} on {b}, {mode:?}, {n} elements",
                    core::any::type_name::<S>(),
                    core::any::type_name::<T>()
                )
            };
            report.compare(what, want, &got, |k| to_u64(&src[k]));
        }
    }
}

/// The special values repeated to `len` elements, optionally with a NaN at `nan_at`.
fn block(len: usize, nan_at: Option<usize>) -> Vec<f64> {
    let v = values();
    let mut out: Vec<f64> = (0..len).map(|i| v[i % v.len()]).collect();
    if let Some(k) = nan_at {
        out[k] = f64::NAN;
    }
    out
}

fn run<T: Narrow>(bs: &[Backend], report: &mut Report)
where
    f32: ConvertTo<T>,
    f64: ConvertTo<T>,
{
    // 64 and 128 elements cover two and four main-loop steps of every kernel (AVX-512 steps
    // are up to 64 f32, AVX2 steps 32); 67 adds a remainder.
    for len in [64, 67, 128] {
        let mut cases = vec![None];
        cases.extend((0..len).step_by(5).map(Some));
        for nan_at in cases {
            let b = block(len, nan_at);
            let f: Vec<f32> = b.iter().map(|&x| x as f32).collect();
            check::<f32, T>(&f, expect_f32_block::<T>, bs, report);
            check::<f64, T>(&b, expect_f64_block::<T>, bs, report);
        }
    }
}

#[test]
fn specials_with_and_without_nan() {
    let bs = backends("specials_with_and_without_nan");
    let mut report = Report::default();
    run::<F16>(&bs, &mut report);
    run::<BF16>(&bs, &mut report);
    run::<F8E4M3>(&bs, &mut report);
    run::<F8E5M2>(&bs, &mut report);
    run::<F8E4M3FNUZ>(&bs, &mut report);
    run::<F8E5M2FNUZ>(&bs, &mut report);
    run::<F6E2M3>(&bs, &mut report);
    run::<F6E3M2>(&bs, &mut report);
    run::<F4E2M1>(&bs, &mut report);
    run::<F8E8M0>(&bs, &mut report);
    run::<F8E3M4>(&bs, &mut report);
    run::<F8E4M3IEEE>(&bs, &mut report);
    run::<F8E4M3B11FNUZ>(&bs, &mut report);
    run::<F8E5M3FNU>(&bs, &mut report);
    report.finish(
        "specials_with_and_without_nan",
        &format!("f32 and f64 to every narrow format on {}", names(&bs)),
    );
}
