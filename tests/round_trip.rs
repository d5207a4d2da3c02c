//! `round_trip` (quantize-dequantize in place):
//!
//! * every `f32` bit pattern (all 2^32) under the format's default policies on the active
//!   backend when it has SIMD kernels for both directions of the pair, against the
//!   documented equality `round_trip(x) == widen(narrow(x))` computed with `convert_slice`
//!   on the same backend (its two kernels are proven against the oracle on every input by
//!   `exhaustive_f32.rs` and `widen.rs`; what the sweep adds is the chunking through the
//!   stack buffer);
//! * against the independent oracle of `common` (its widening of its narrowing of `x`): the
//!   stratified sample on every backend, `f64` values at and around every tie, both overflow
//!   policies and every NaN policy on a sample, and packed FP4, which must give what
//!   `F4E2M1` gives.

mod common;

use common::{MODES, NAN_POLICIES, Narrow, Report, backends, names};
use vcvt::{
    BF16, Backend, ConvertTo, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ,
    F8E4M3FNUZ, F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, Options, Overflow,
};

/// What the checks need of a format, as plain functions: only [`Pair::of`] names the type
/// (the `vcvt` calls and the oracle's expected codes), so the checks below are compiled
/// once, not once per format.
struct Pair {
    name: &'static str,
    bits: u32,
    oracle: &'static common::Oracle,
    /// The format's default overflow policy (what `round_trip` uses).
    mode: Overflow,
    /// Has `b` SIMD kernels both ways?
    simd: fn(&Backend) -> bool,
    /// The oracle's codes for `src` under `mode` ([`common::expect_f32_block`]).
    expect: fn(&[f32], Overflow) -> Vec<u32>,
    round_trip: fn(&mut [f32]),
    round_trip_with: fn(&mut [f32], Options),
    round_trip_f64: fn(&mut [f64]),
    round_trip_on: fn(Backend, &mut [f32], Options),
    round_trip_on_f64: fn(Backend, &mut [f64], Options),
    /// `convert_slice_on` from `src` to the format (in `scratch`) and back into `out`.
    there_and_back: fn(Backend, &[f32], &mut Vec<u64>, &mut [f32], Options),
}

impl Pair {
    fn of<T: Narrow + ConvertTo<f32> + ConvertTo<f64>>() -> Pair
    where
        f32: ConvertTo<T>,
        f64: ConvertTo<T>,
    {
        Pair {
            name: T::DEF.name,
            bits: T::DEF.bits(),
            oracle: T::oracle(),
            mode: default_overflow::<T>(),
            simd: |b| b.is_simd::<f32, T>() && b.is_simd::<T, f32>(),
            expect: |src, mode| {
                let mut sat = vec![T::from_code(0); src.len()];
                let mut nonsat = vec![T::from_code(0); src.len()];
                common::expect_f32_block(src, &mut sat, &mut nonsat);
                let codes = if mode == Overflow::Saturate {
                    sat
                } else {
                    nonsat
                };
                codes.iter().map(|c| c.code()).collect()
            },
            round_trip: vcvt::round_trip::<T>,
            round_trip_with: vcvt::round_trip_with::<T>,
            round_trip_f64: vcvt::round_trip_f64::<T>,
            round_trip_on: |b, x, o| vcvt::round_trip_on::<T, f32>(b, x, o).unwrap(),
            round_trip_on_f64: |b, x, o| vcvt::round_trip_on::<T, f64>(b, x, o).unwrap(),
            there_and_back: |b, src, scratch, out, o| {
                let size = std::mem::size_of::<T>();
                scratch.resize((src.len() * size).div_ceil(8), 0);
                let codes: &mut [T] = bytemuck::cast_slice_mut(scratch.as_mut_slice());
                let codes = &mut codes[..src.len()];
                vcvt::convert_slice_on(b, src, codes, o).unwrap();
                vcvt::convert_slice_on(b, &*codes, out, o).unwrap();
            },
        }
    }
}

/// The oracle's round trip of f32 bits under `mode` and `nan`.
fn expect32(p: &Pair, x: f32, mode: Overflow, nan: vcvt::NanPolicy) -> u32 {
    let o = p.oracle;
    o.widen_f32(o.narrow_f32_nan(x.to_bits(), mode, nan))
}

fn sweep(p: &Pair, test: &str) {
    let all = backends(test);
    // The 2^32 sweep runs on the active backend (the one `round_trip` uses) when it has SIMD
    // kernels both ways; round_trip adds only the chunking to two kernels that
    // `exhaustive_f32.rs` and `widen.rs` prove on every backend, so the other backends get
    // the stratified sample, which keeps the test's time independent of the backend count.
    let full: Vec<Backend> = all
        .iter()
        .copied()
        .filter(|b| *b == Backend::active() && (p.simd)(b))
        .collect();
    let routed: Vec<Backend> = all.iter().copied().filter(|b| !full.contains(b)).collect();
    let oracle = p.oracle;
    let seed = 0x7217_0000 + u64::from(p.bits);
    let check =
        |src: &[f32], want: &mut Vec<u32>, out: &mut Vec<f32>, r: &mut Report, bs: &[Backend]| {
            // The default overflow policy of the format: what `round_trip` uses.
            let codes = (p.expect)(src, p.mode);
            want.clear();
            want.extend(codes.iter().map(|&c| oracle.widen_f32(c)));
            for &b in bs {
                out.clear();
                out.extend_from_slice(src);
                if b == Backend::active() {
                    (p.round_trip)(out);
                } else {
                    (p.round_trip_on)(b, out, Options::new());
                }
                let got: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
                r.compare(
                    || format!("round_trip::<{}> on {b}", p.name),
                    want,
                    &got,
                    |k| u64::from(src[k].to_bits()),
                );
            }
        };
    // The 2^32 sweep checks the documented equality itself: round_trip(x) against
    // convert_slice to T and back on the same backend, two kernels that
    // `exhaustive_f32.rs` and `widen.rs` prove against the oracle on every input. That keeps
    // the sweep as fast as the kernels (the oracle would dominate it); the oracle is the
    // reference on the sample below, on every backend.
    let by_definition = |src: &[f32], s: &mut (Vec<u64>, Vec<f32>, Vec<f32>), r: &mut Report| {
        let b = Backend::active();
        let (codes, want, out) = s;
        want.resize(src.len(), 0.0);
        (p.there_and_back)(b, src, codes, want, Options::new());
        out.clear();
        out.extend_from_slice(src);
        (p.round_trip)(out);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
        r.compare(
            || format!("round_trip::<{}> on {b} against narrow + widen", p.name),
            &bits(want),
            &bits(out),
            |k| u64::from(src[k].to_bits()),
        );
    };
    let (mut report, mut coverage) = if full.is_empty() {
        (Report::default(), format!("round_trip::<{}>", p.name))
    } else {
        let (r, inputs) = common::sweep_f32(oracle, seed, by_definition);
        let c = format!(
            "round_trip::<{}>, {inputs} on [{}] against convert_slice there and back",
            p.name,
            names(&full)
        );
        (r, c)
    };
    let sample = common::stratified_f32_sample(oracle, seed);
    let routed = if full.is_empty() { routed } else { all.clone() };
    if !routed.is_empty() {
        let mut r = Report::default();
        let (mut w, mut o) = (Vec::new(), Vec::new());
        for chunk in sample.chunks(common::SWEEP_CHUNK) {
            check(chunk, &mut w, &mut o, &mut r, &routed);
        }
        report.merge(r);
        coverage += &format!(
            "; stratified sample of {} on [{}]",
            sample.len(),
            names(&routed)
        );
    }
    // Every overflow and NaN policy on a sample (with every NaN bit pattern of a sparse
    // grid), through round_trip_with / round_trip_on.
    let mut inputs: Vec<f32> = sample.iter().copied().step_by(7).collect();
    // Dense runs without NaNs (a SIMD kernel may take a NaN-free path for a group of values)
    // around the format's overflow boundary (its last rounding midpoint), f32's largest
    // value and ±Inf, both signs: where the overflow policies differ.
    for sign in [0u32, 0x8000_0000] {
        let boundary = (oracle.mids[oracle.mids.len() - 2] as f32).to_bits() & 0x7FFF_FFFF;
        for centre in [boundary, f32::MAX.to_bits()] {
            let run = centre - 48..=(centre + 15).min(0x7F80_0000);
            inputs.extend(run.map(|b| f32::from_bits(b | sign)));
        }
        inputs.extend([f32::from_bits(0x7F80_0000 | sign); 32]);
    }
    inputs.extend(
        (0..(1u32 << 23))
            .step_by(4099)
            .map(|f| f32::from_bits(0x7F80_0000 | f.max(1))),
    );
    inputs.extend(
        (0..(1u32 << 23))
            .step_by(4099)
            .map(|f| f32::from_bits(0xFF80_0000 | f.max(1))),
    );
    for mode in MODES {
        for nan in NAN_POLICIES {
            let opts = Options::new().overflow(mode).nan(nan);
            let want: Vec<u32> = inputs.iter().map(|&x| expect32(p, x, mode, nan)).collect();
            for &b in &all {
                let mut out = inputs.clone();
                if b == Backend::active() {
                    (p.round_trip_with)(&mut out, opts);
                } else {
                    (p.round_trip_on)(b, &mut out, opts);
                }
                let got: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
                report.compare(
                    || format!("round_trip_with::<{}> on {b}, {mode:?}, {nan:?}", p.name),
                    &want,
                    &got,
                    |k| u64::from(inputs[k].to_bits()),
                );
            }
        }
    }
    // f64: every value of the f32 sample, and the midpoints with their f64 neighbours.
    let mut x64: Vec<f64> = sample.iter().step_by(7).map(|&x| f64::from(x)).collect();
    for &m in &oracle.mids[..oracle.mids.len() - 1] {
        for d in [-1i64, 0, 1] {
            let v = f64::from_bits((m.to_bits() as i64 + d) as u64);
            x64.push(v);
            x64.push(-v);
        }
    }
    let mode = p.mode;
    let want: Vec<u64> = x64
        .iter()
        .map(|x| oracle.widen_f64(oracle.narrow_f64(x.to_bits(), mode)))
        .collect();
    for &b in &all {
        let mut out = x64.clone();
        if b == Backend::active() {
            (p.round_trip_f64)(&mut out);
        } else {
            (p.round_trip_on_f64)(b, &mut out, Options::new());
        }
        let got: Vec<u64> = out.iter().map(|x| x.to_bits()).collect();
        report.compare(
            || format!("round_trip_f64::<{}> on {b}", p.name),
            &want,
            &got,
            |k| x64[k].to_bits(),
        );
    }
    coverage += &format!(
        "; {} f32 inputs x 2 modes x 3 NaN policies and {} f64 inputs on [{}]",
        inputs.len(),
        x64.len(),
        names(&all)
    );
    report.finish(test, &coverage);
}

/// The format's default overflow policy, from the type's constant.
fn default_overflow<T: Narrow>() -> Overflow {
    // `Options::new()` resolves to it; read it back through a value that overflows every
    // format, distinguishing the two policies by the oracle's answer.
    let o = T::oracle();
    let big = f32::MAX.to_bits();
    let got = T::code_from_f32_opts(f32::MAX, Options::new());
    if got == o.narrow_f32(big, Overflow::Saturate) {
        Overflow::Saturate
    } else {
        assert_eq!(got, o.narrow_f32(big, Overflow::NonSaturating));
        Overflow::NonSaturating
    }
}

#[test]
fn round_trip_f16() {
    sweep(&Pair::of::<F16>(), "round_trip_f16");
}
#[test]
fn round_trip_bf16() {
    sweep(&Pair::of::<BF16>(), "round_trip_bf16");
}
#[test]
fn round_trip_f8e4m3() {
    sweep(&Pair::of::<F8E4M3>(), "round_trip_f8e4m3");
}
#[test]
fn round_trip_f8e5m2() {
    sweep(&Pair::of::<F8E5M2>(), "round_trip_f8e5m2");
}
#[test]
fn round_trip_f8e4m3fnuz() {
    sweep(&Pair::of::<F8E4M3FNUZ>(), "round_trip_f8e4m3fnuz");
}
#[test]
fn round_trip_f8e5m2fnuz() {
    sweep(&Pair::of::<F8E5M2FNUZ>(), "round_trip_f8e5m2fnuz");
}
#[test]
fn round_trip_f6e2m3() {
    sweep(&Pair::of::<F6E2M3>(), "round_trip_f6e2m3");
}
#[test]
fn round_trip_f6e3m2() {
    sweep(&Pair::of::<F6E3M2>(), "round_trip_f6e3m2");
}
#[test]
fn round_trip_f4e2m1() {
    sweep(&Pair::of::<F4E2M1>(), "round_trip_f4e2m1");
}
#[test]
fn round_trip_f8e8m0() {
    sweep(&Pair::of::<F8E8M0>(), "round_trip_f8e8m0");
}

#[test]
fn round_trip_f8e3m4() {
    sweep(&Pair::of::<F8E3M4>(), "round_trip_f8e3m4");
}

#[test]
fn round_trip_f8e4m3ieee() {
    sweep(&Pair::of::<F8E4M3IEEE>(), "round_trip_f8e4m3ieee");
}

#[test]
fn round_trip_f8e4m3b11fnuz() {
    sweep(&Pair::of::<F8E4M3B11FNUZ>(), "round_trip_f8e4m3b11fnuz");
}

#[test]
fn round_trip_f8e5m3fnu() {
    sweep(&Pair::of::<F8E5M3FNU>(), "round_trip_f8e5m3fnu");
}

/// Packed FP4 gives what one-per-byte FP4 gives, at every length up to three chunks.
#[test]
fn round_trip_packed_fp4_equals_unpacked() {
    let test = "round_trip_packed_fp4_equals_unpacked";
    let all = backends(test);
    let sample = common::stratified_f32_sample(F4E2M1::oracle(), 0x7217_F4F4);
    let mut report = Report::default();
    for len in [0usize, 1, 2, 3, 255, 256, 257, 511, 769] {
        for start in [0usize, 1000, 50_000] {
            let src = &sample[start..start + len];
            let mut want = src.to_vec();
            vcvt::round_trip_on::<F4E2M1, f32>(Backend::Scalar, &mut want, Options::new()).unwrap();
            for &b in &all {
                let mut got = src.to_vec();
                vcvt::round_trip_on::<F4E2M1x2, f32>(b, &mut got, Options::new()).unwrap();
                let w: Vec<u32> = want.iter().map(|x| x.to_bits()).collect();
                let g: Vec<u32> = got.iter().map(|x| x.to_bits()).collect();
                report.compare(
                    || format!("round_trip::<F4E2M1x2> on {b}, {len} values"),
                    &w,
                    &g,
                    |k| u64::from(src[k].to_bits()),
                );
            }
        }
    }
    report.finish(
        test,
        &format!("packed vs unpacked FP4 on [{}]", names(&all)),
    );
}

/// Every length 0..=300 at every start offset 0..8 of a buffer whose other elements are
/// canaries, on every backend and under both overflow policies: the result equals
/// `convert_slice` there and back (itself checked against the oracle above), and no element
/// outside the range changes. Fused in-place kernels (F16, BF16 on x86-64) run their short
/// and overlapping last steps here.
fn lengths(p: &Pair, test: &str) {
    let all = backends(test);
    let mut rng = common::Rng::new(0x7A11 + u64::from(p.bits));
    let src: Vec<f32> = (0..316)
        .map(|i| match i % 5 {
            // Random bit patterns (NaNs, infinities, subnormals) and values in T's range.
            0 => f32::from_bits(rng.next_u64() as u32),
            _ => (rng.next_u64() as u32 as f32 / 2f32.powi(32) - 0.5) * 4.0,
        })
        .collect();
    const CANARY: f32 = -1234.5;
    let mut report = Report::default();
    for &b in &all {
        for mode in MODES {
            let opts = Options::new().overflow(mode);
            for off in 0..8 {
                for len in 0..=300 {
                    let part = &src[off..off + len];
                    let mut want = vec![0f32; len];
                    (p.there_and_back)(b, part, &mut Vec::new(), &mut want, opts);
                    let mut buf = vec![CANARY; 316];
                    buf[off..off + len].copy_from_slice(part);
                    (p.round_trip_on)(b, &mut buf[off..off + len], opts);
                    let mut expected = vec![CANARY; 316];
                    expected[off..off + len].copy_from_slice(&want);
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
                    report.compare(
                        || format!("{b}, {mode:?}, offset {off}, length {len}"),
                        &bits(&expected),
                        &bits(&buf),
                        |k| u64::from(src[k.clamp(off, (off + len).max(off + 1) - 1)].to_bits()),
                    );
                }
            }
        }
    }
    report.finish(
        test,
        &format!(
            "round_trip::<{}>, lengths 0..=300 x offsets 0..8 x 2 modes, canaries, on [{}]",
            p.name,
            names(&all)
        ),
    );
}

#[test]
fn round_trip_lengths_f16() {
    lengths(&Pair::of::<F16>(), "round_trip_lengths_f16");
}

#[test]
fn round_trip_lengths_bf16() {
    lengths(&Pair::of::<BF16>(), "round_trip_lengths_bf16");
}

#[test]
fn round_trip_lengths_f4e2m1() {
    lengths(&Pair::of::<F4E2M1>(), "round_trip_lengths_f4e2m1");
}
