//! `f64` sources narrowed to each format under both overflow policies, on every available
//! backend, against the independent oracle of `common` (which rounds an `f64` once, from its
//! own value, by exact comparisons with the midpoints).
//!
//! * `random_f64_to_*`: ~10^7 seeded pseudo-random `f64` bit patterns per format, biased so
//!   that most fall inside, or near the edges of, the format's range: raw bits, exponents
//!   in the format's range, points at random distances from the format's midpoints and
//!   values, `f32`'s subnormal range and beyond `f32::MAX`.
//! * `ties_f64_to_*`: for every pair of adjacent values of the format (from zero and the
//!   smallest subnormal up to MAX and the overflow sentinel), the exact midpoint, its
//!   neighbours 1-4 ulps away, points 2^j ulps away (which include the values that would
//!   become a false tie if they were rounded to `f32` first), and the same around every
//!   value; both signs.
//! * `double_rounding_traps`: for every midpoint, the `f64`s a quarter of an `f32` ulp
//!   below and above it, which `f32` rounding would turn into the tie itself; the contract's
//!   `65520 - 2^-30` example; `f64` values in `f32`'s subnormal range and above `f32::MAX`.
//!   Here the expected codes are stated directly (lower or upper neighbour), not only taken
//!   from the oracle.
//! * `ties_f32_sources`: the `f32` versions of the tie cases, for all formats.
//!
//! Under `VCVT_SWEEP=sample` the random part shrinks to 2^16 inputs per format; every tie
//! case still runs.

mod common;

use common::{
    MODES, Narrow, Oracle, Report, Rng, backends, expect_f32_block, expect_f64_block, names,
};
use vcvt::{
    BF16, Backend, ConvertTo, F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FNUZ,
    F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, Options,
};

/// Elements per conversion call.
const BLOCK: usize = 1 << 14;

/// Compares every backend and policy with the oracle on `inputs`.
fn check_f64<T: Narrow>(backends: &[Backend], inputs: &[f64], report: &mut Report)
where
    f64: ConvertTo<T>,
{
    let zero = T::zeroed();
    let (mut sat, mut nonsat, mut out) = (vec![zero; BLOCK], vec![zero; BLOCK], vec![zero; BLOCK]);
    for src in inputs.chunks(BLOCK) {
        let n = src.len();
        expect_f64_block(src, &mut sat[..n], &mut nonsat[..n]);
        for &b in backends {
            for (mode, expected) in MODES.into_iter().zip([&sat[..n], &nonsat[..n]]) {
                vcvt::convert_slice_on(b, src, &mut out[..n], Options::new().overflow(mode))
                    .unwrap();
                report.compare(
                    || format!("f64->{} on {b}, {mode:?}", T::DEF.name),
                    expected,
                    &out[..n],
                    |k| src[k].to_bits(),
                );
            }
        }
    }
}

/// Like [`check_f64`] for `f32` sources.
fn check_f32<T: Narrow>(backends: &[Backend], inputs: &[f32], report: &mut Report)
where
    f32: ConvertTo<T>,
{
    let zero = T::zeroed();
    let (mut sat, mut nonsat, mut out) = (vec![zero; BLOCK], vec![zero; BLOCK], vec![zero; BLOCK]);
    for src in inputs.chunks(BLOCK) {
        let n = src.len();
        expect_f32_block(src, &mut sat[..n], &mut nonsat[..n]);
        for &b in backends {
            for (mode, expected) in MODES.into_iter().zip([&sat[..n], &nonsat[..n]]) {
                vcvt::convert_slice_on(b, src, &mut out[..n], Options::new().overflow(mode))
                    .unwrap();
                report.compare(
                    || format!("f32->{} on {b}, {mode:?}", T::DEF.name),
                    expected,
                    &out[..n],
                    |k| u64::from(src[k].to_bits()),
                );
            }
        }
    }
}

/// Unbiased binary exponent of a positive finite `f64` (normal or not).
fn exponent(x: f64) -> i32 {
    let e = ((x.to_bits() >> 52) & 0x7FF) as i32;
    if e == 0 { -1022 } else { e - 1023 }
}

/// A random `f64` biased toward the format of `oracle` (see the module docs).
fn random_f64(rng: &mut Rng, oracle: &Oracle) -> f64 {
    let sign = rng.next_u64() & (1 << 63);
    let with_exp = |rng: &mut Rng, e: i64| {
        let mant = rng.next_u64() & ((1 << 52) - 1);
        f64::from_bits(sign | (((e + 1023) as u64) << 52) | mant)
    };
    let near = |rng: &mut Rng, anchor: f64| {
        // A distance of up to 2^j ulps, j uniform: from neighbours to far away.
        let j = rng.below(54);
        let d = rng.below(1 << j) + 1;
        let a = anchor.to_bits();
        let m = if rng.next_u64() & 1 == 0 {
            a.saturating_sub(d)
        } else {
            a + d
        };
        f64::from_bits(sign | m)
    };
    let lo = i64::from(exponent(oracle.values[1])) - 4;
    let hi = i64::from(exponent(*oracle.values.last().unwrap())) + 4;
    match rng.below(6) {
        0 => f64::from_bits(rng.next_u64()),
        1 => {
            let e = lo + rng.below((hi - lo + 1) as u64) as i64;
            with_exp(rng, e)
        }
        2 => {
            let k = rng.below(u64::from(oracle.max_code()) + 1) as usize;
            near(rng, oracle.mids[k])
        }
        3 => {
            let k = rng.below(u64::from(oracle.max_code()) + 2) as usize;
            near(rng, oracle.values[k])
        }
        // f32's subnormal range and a little around it (f64 normal numbers).
        4 => {
            let e = -155 + rng.below(32) as i64;
            with_exp(rng, e)
        }
        // Above f32::MAX's binade start, up to f64::MAX.
        _ => {
            let e = 127 + rng.below(897) as i64;
            with_exp(rng, e)
        }
    }
}

fn random_f64_to<T: Narrow>(test: &str)
where
    f64: ConvertTo<T>,
{
    let backends = backends(test);
    let oracle = T::oracle();
    let total: u64 = if common::sample_mode() {
        1 << 16
    } else {
        10_000_000
    };
    let per_thread = total / 2;
    let report = common::two_threads(2, |range, report| {
        for t in range {
            let mut rng = Rng::new(0xF64F_64F6 ^ (u64::from(T::DEF.bits()) << 32) ^ t);
            let mut left = per_thread;
            let mut inputs = Vec::with_capacity(BLOCK * 16);
            while left > 0 {
                let n = left.min(inputs.capacity() as u64);
                inputs.clear();
                inputs.extend((0..n).map(|_| random_f64(&mut rng, oracle)));
                check_f64::<T>(&backends, &inputs, report);
                left -= n;
            }
        }
    });
    report.finish(
        test,
        &format!(
            "{} random f64 -> {} x 2 modes on [{}]",
            per_thread * 2,
            T::DEF.name,
            names(&backends)
        ),
    );
}

/// Distances (in ulps of the source type) of the points tested around each anchor.
fn offsets(bits: u32) -> Vec<i64> {
    let mut v: Vec<i64> = vec![0, 1, 2, 3, 4];
    let pows: &[u32] = if bits == 64 {
        &[5, 8, 12, 16, 20, 24, 26, 27, 28, 29, 30, 31, 36, 40, 44, 48]
    } else {
        &[4, 8, 12, 16, 20]
    };
    v.extend(pows.iter().map(|&j| 1i64 << j));
    if bits == 64 {
        // Half an f32 ulp is 2^28 f64 ulps: just inside and just outside it.
        v.extend([(1 << 28) - 1, (1 << 28) + 1, (1 << 29) - 1]);
    }
    let mut all: Vec<i64> = v.iter().flat_map(|&d| [-d, d]).collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// The anchors: every midpoint and every value, including the overflow sentinel.
fn anchors(oracle: &Oracle) -> impl Iterator<Item = f64> + '_ {
    let mids = &oracle.mids[..oracle.mids.len() - 1];
    // Interleaved in value order: v0, m0, v1, m1, ..., MAX, m(MAX), sentinel.
    oracle
        .values
        .iter()
        .zip(mids.iter().map(Some).chain([None]))
        .flat_map(|(&v, m)| std::iter::once(v).chain(m.copied()))
}

fn tie_points_f64(oracle: &Oracle) -> Vec<f64> {
    let offs = offsets(64);
    let mut pts = Vec::new();
    for sign in [0u64, 1 << 63] {
        for a in anchors(oracle) {
            let b = a.to_bits() as i64;
            for &d in &offs {
                if b + d >= 0 {
                    pts.push(f64::from_bits(sign | (b + d) as u64));
                }
            }
        }
    }
    pts
}

fn tie_points_f32(oracle: &Oracle) -> Vec<f32> {
    let offs = offsets(32);
    let mut pts = Vec::new();
    for sign in [0u32, 1 << 31] {
        for a in anchors(oracle).filter(|&a| a <= f64::from(f32::MAX)) {
            let b = (a as f32).to_bits();
            assert_eq!(
                f64::from(f32::from_bits(b)),
                a,
                "anchor {a} not exact in f32"
            );
            for &d in &offs {
                let n = i64::from(b) + d;
                if (0..=0x7F80_0000).contains(&n) {
                    pts.push(f32::from_bits(sign | n as u32));
                }
            }
        }
    }
    pts
}

fn ties_f64_to<T: Narrow>(test: &str)
where
    f64: ConvertTo<T>,
{
    let backends = backends(test);
    let pts = tie_points_f64(T::oracle());
    let half = pts.len() / 2;
    let report = common::two_threads(2, |range, report| {
        for t in range {
            let part = if t == 0 { &pts[..half] } else { &pts[half..] };
            check_f64::<T>(&backends, part, report);
        }
    });
    report.finish(
        test,
        &format!(
            "{} f64 points at and around every midpoint and value of {} x 2 modes on [{}]",
            pts.len(),
            T::DEF.name,
            names(&backends)
        ),
    );
}

#[test]
fn random_f64_to_f16() {
    random_f64_to::<F16>("random_f64_to_f16");
}
#[test]
fn random_f64_to_bf16() {
    random_f64_to::<BF16>("random_f64_to_bf16");
}
#[test]
fn random_f64_to_f8e4m3() {
    random_f64_to::<F8E4M3>("random_f64_to_f8e4m3");
}
#[test]
fn random_f64_to_f8e5m2() {
    random_f64_to::<F8E5M2>("random_f64_to_f8e5m2");
}

#[test]
fn ties_f64_to_f16() {
    ties_f64_to::<F16>("ties_f64_to_f16");
}
#[test]
fn ties_f64_to_bf16() {
    ties_f64_to::<BF16>("ties_f64_to_bf16");
}
#[test]
fn ties_f64_to_f8e4m3() {
    ties_f64_to::<F8E4M3>("ties_f64_to_f8e4m3");
}
#[test]
fn ties_f64_to_f8e5m2() {
    ties_f64_to::<F8E5M2>("ties_f64_to_f8e5m2");
}

#[test]
fn random_f64_to_f8e4m3fnuz() {
    random_f64_to::<F8E4M3FNUZ>("random_f64_to_f8e4m3fnuz");
}

#[test]
fn ties_f64_to_f8e4m3fnuz() {
    ties_f64_to::<F8E4M3FNUZ>("ties_f64_to_f8e4m3fnuz");
}

#[test]
fn random_f64_to_f8e5m2fnuz() {
    random_f64_to::<F8E5M2FNUZ>("random_f64_to_f8e5m2fnuz");
}

#[test]
fn ties_f64_to_f8e5m2fnuz() {
    ties_f64_to::<F8E5M2FNUZ>("ties_f64_to_f8e5m2fnuz");
}

#[test]
fn random_f64_to_f6e2m3() {
    random_f64_to::<F6E2M3>("random_f64_to_f6e2m3");
}

#[test]
fn ties_f64_to_f6e2m3() {
    ties_f64_to::<F6E2M3>("ties_f64_to_f6e2m3");
}

#[test]
fn random_f64_to_f6e3m2() {
    random_f64_to::<F6E3M2>("random_f64_to_f6e3m2");
}

#[test]
fn ties_f64_to_f6e3m2() {
    ties_f64_to::<F6E3M2>("ties_f64_to_f6e3m2");
}

#[test]
fn random_f64_to_f4e2m1() {
    random_f64_to::<F4E2M1>("random_f64_to_f4e2m1");
}

#[test]
fn ties_f64_to_f4e2m1() {
    ties_f64_to::<F4E2M1>("ties_f64_to_f4e2m1");
}

#[test]
fn random_f64_to_f8e8m0() {
    random_f64_to::<F8E8M0>("random_f64_to_f8e8m0");
}

#[test]
fn random_f64_to_f8e3m4() {
    random_f64_to::<F8E3M4>("random_f64_to_f8e3m4");
}

#[test]
fn random_f64_to_f8e4m3ieee() {
    random_f64_to::<F8E4M3IEEE>("random_f64_to_f8e4m3ieee");
}

#[test]
fn random_f64_to_f8e4m3b11fnuz() {
    random_f64_to::<F8E4M3B11FNUZ>("random_f64_to_f8e4m3b11fnuz");
}

#[test]
fn random_f64_to_f8e5m3fnu() {
    random_f64_to::<F8E5M3FNU>("random_f64_to_f8e5m3fnu");
}

#[test]
fn ties_f64_to_f8e8m0() {
    ties_f64_to::<F8E8M0>("ties_f64_to_f8e8m0");
}

#[test]
fn ties_f64_to_f8e3m4() {
    ties_f64_to::<F8E3M4>("ties_f64_to_f8e3m4");
}

#[test]
fn ties_f64_to_f8e4m3ieee() {
    ties_f64_to::<F8E4M3IEEE>("ties_f64_to_f8e4m3ieee");
}

#[test]
fn ties_f64_to_f8e4m3b11fnuz() {
    ties_f64_to::<F8E4M3B11FNUZ>("ties_f64_to_f8e4m3b11fnuz");
}

#[test]
fn ties_f64_to_f8e5m3fnu() {
    ties_f64_to::<F8E5M3FNU>("ties_f64_to_f8e5m3fnu");
}

#[test]
fn ties_f32_sources() {
    let test = "ties_f32_sources";
    let backends = backends(test);
    let mut report = Report::default();
    check_f32::<F16>(&backends, &tie_points_f32(F16::oracle()), &mut report);
    check_f32::<BF16>(&backends, &tie_points_f32(BF16::oracle()), &mut report);
    check_f32::<F8E4M3>(&backends, &tie_points_f32(F8E4M3::oracle()), &mut report);
    check_f32::<F8E5M2>(&backends, &tie_points_f32(F8E5M2::oracle()), &mut report);
    check_f32::<F8E4M3FNUZ>(
        &backends,
        &tie_points_f32(F8E4M3FNUZ::oracle()),
        &mut report,
    );
    check_f32::<F8E5M2FNUZ>(
        &backends,
        &tie_points_f32(F8E5M2FNUZ::oracle()),
        &mut report,
    );
    check_f32::<F6E2M3>(&backends, &tie_points_f32(F6E2M3::oracle()), &mut report);
    check_f32::<F6E3M2>(&backends, &tie_points_f32(F6E3M2::oracle()), &mut report);
    check_f32::<F4E2M1>(&backends, &tie_points_f32(F4E2M1::oracle()), &mut report);
    check_f32::<F8E8M0>(&backends, &tie_points_f32(F8E8M0::oracle()), &mut report);
    report.finish(
        test,
        &format!(
            "f32 points at and around every midpoint and value of every format \
             x 2 modes on [{}]",
            names(&backends)
        ),
    );
}

/// For each source value, the code expected under each policy, stated directly.
struct Case {
    x: f64,
    want: [u32; 2],
    why: String,
}

/// The false ties of a format: for every midpoint `m` between codes `k` and `k + 1`, the
/// `f64`s a quarter of an `f32` ulp below and above `m`. Rounding them to `f32` first gives
/// exactly `m`, a tie; rounding once gives `k` (below) and `k + 1` (above; overflow at the
/// top).
fn false_ties(oracle: &Oracle) -> Vec<Case> {
    let mut cases = Vec::new();
    for (k, &m) in oracle.mids[..oracle.mids.len() - 1].iter().enumerate() {
        let k = k as u32;
        // The ulp of m as an f32 (2^-149 in f32's subnormal range).
        let ulp32 = 2f64.powi((exponent(m) - 23).max(-149));
        let quarter = ulp32 / 4.0;
        for (x, idx) in [(m - quarter, k), (m + quarter, k + 1)] {
            assert!(
                x != m && x as f32 as f64 == m,
                "{m}: {x} is not a false tie"
            );
            for neg in [false, true] {
                let x = if neg { -x } else { x };
                let want = MODES.map(|mode| oracle.finish(neg, x.abs(), idx, mode));
                let why = format!("{} false tie {x:e} near midpoint {m:e}", oracle.def.name);
                cases.push(Case { x, want, why });
            }
        }
    }
    cases
}

fn run_cases<T: Narrow>(backends: &[Backend], cases: &[Case], report: &mut Report)
where
    f64: ConvertTo<T>,
{
    let oracle = T::oracle();
    let src: Vec<f64> = cases.iter().map(|c| c.x).collect();
    for (mi, mode) in MODES.into_iter().enumerate() {
        let expected: Vec<T> = cases.iter().map(|c| T::from_code(c.want[mi])).collect();
        for c in cases {
            // The oracle must agree with the directly stated answer.
            assert_eq!(
                oracle.narrow_f64(c.x.to_bits(), mode),
                c.want[mi],
                "oracle: {}",
                c.why
            );
        }
        let mut out = vec![T::zeroed(); src.len()];
        for &b in backends {
            vcvt::convert_slice_on(b, &src, &mut out, Options::new().overflow(mode)).unwrap();
            report.compare(
                || format!("f64->{} on {b}, {mode:?}", T::DEF.name),
                &expected,
                &out,
                |k| src[k].to_bits(),
            );
        }
    }
}

#[test]
fn double_rounding_traps() {
    let test = "double_rounding_traps";
    let backends = backends(test);
    let mut report = Report::default();
    let c = |x: f64, sat: u32, nonsat: u32, why: &str| Case {
        x,
        want: [sat, nonsat],
        why: why.to_string(),
    };
    let p = |n: i32| 2f64.powi(n);

    let mut f16 = false_ties(F16::oracle());
    f16.extend([
        c(
            65520.0 - p(-30),
            0x7BFF,
            0x7BFF,
            "contract: 65520 - 2^-30 gives F16::MAX",
        ),
        c(-(65520.0 - p(-30)), 0xFBFF, 0xFBFF, "-(65520 - 2^-30)"),
        c(
            65520.0,
            0x7BFF,
            0x7C00,
            "65520 is the tie above MAX: overflow",
        ),
        c(65520.0 + p(-30), 0x7BFF, 0x7C00, "65520 + 2^-30"),
        c(
            p(-25) + p(-60),
            1,
            1,
            "just above half the smallest subnormal",
        ),
        c(
            p(-25) - p(-60),
            0,
            0,
            "just below half the smallest subnormal",
        ),
        c(f64::from(f32::MAX), 0x7BFF, 0x7C00, "f32::MAX"),
        c(f64::MAX, 0x7BFF, 0x7C00, "f64::MAX"),
        c(-f64::MAX, 0xFBFF, 0xFC00, "-f64::MAX"),
        c(f64::from_bits(1), 0, 0, "smallest f64 subnormal"),
        c(
            -f64::from_bits(1),
            0x8000,
            0x8000,
            "-smallest f64 subnormal",
        ),
        c(f64::MIN_POSITIVE, 0, 0, "smallest normal f64"),
    ]);
    run_cases::<F16>(&backends, &f16, &mut report);

    let mut bf16 = false_ties(BF16::oracle());
    let bf_max = f64::from(f32::from_bits(0x7F7F_0000));
    let bf_tie = bf_max + p(127 - 8); // halfway between MAX and 2^128
    bf16.extend([
        c(
            bf_tie - p(76),
            0x7F7F,
            0x7F7F,
            "below the BF16 overflow tie",
        ),
        c(bf_tie, 0x7F7F, 0x7F80, "the BF16 overflow tie"),
        c(
            f64::from(f32::MAX),
            0x7F7F,
            0x7F80,
            "f32::MAX overflows BF16",
        ),
        c(f64::from(f32::MAX) * 1.5, 0x7F7F, 0x7F80, "above f32::MAX"),
        c(p(128), 0x7F7F, 0x7F80, "2^128"),
        c(-p(1000), 0xFF7F, 0xFF80, "-2^1000"),
        // f32's subnormal range is BF16's: 2^-133 is its smallest subnormal.
        c(
            p(-134),
            0,
            0,
            "half the smallest BF16 subnormal: tie to zero",
        ),
        c(p(-134) + p(-180), 1, 1, "just above it"),
        c(
            -(p(-134) + p(-180)),
            0x8001,
            0x8001,
            "just above it, negative",
        ),
        c(3.0 * p(-134), 2, 2, "1.5 smallest subnormals: tie to 2"),
        c(3.0 * p(-134) - p(-180), 1, 1, "just below 1.5 subnormals"),
        c(p(-149), 0, 0, "f32's smallest subnormal"),
        c(
            p(-126) - p(-134),
            0x0080,
            0x0080,
            "rounds up to the smallest normal",
        ),
        c(
            p(-126) - p(-134) - p(-170),
            0x007F,
            0x007F,
            "just below: largest subnormal",
        ),
        c(p(-1074), 0, 0, "smallest f64 subnormal"),
    ]);
    run_cases::<BF16>(&backends, &bf16, &mut report);

    let mut e4 = false_ties(F8E4M3::oracle());
    e4.extend([
        c(
            464.0,
            0x7E,
            0x7E,
            "464 is the tie at the top: rounds to 448",
        ),
        c(464.0 + p(-40), 0x7E, 0x7F, "just above 464 overflows"),
        c(464.0 - p(-40), 0x7E, 0x7E, "just below 464"),
        c(-(464.0 + p(-40)), 0xFE, 0xFF, "negative overflow"),
        c(f64::INFINITY, 0x7E, 0x7F, "+Inf"),
        c(f64::from(f32::MAX) * 2.0, 0x7E, 0x7F, "above f32::MAX"),
        c(p(-10), 0, 0, "half the smallest subnormal"),
        c(p(-10) + p(-50), 1, 1, "just above it"),
    ]);
    run_cases::<F8E4M3>(&backends, &e4, &mut report);

    let mut e5 = false_ties(F8E5M2::oracle());
    e5.extend([
        c(61440.0, 0x7B, 0x7C, "61440 is the tie above MAX: overflow"),
        c(61440.0 - p(-30), 0x7B, 0x7B, "just below the tie"),
        c(-f64::INFINITY, 0xFB, 0xFC, "-Inf"),
        c(p(-17), 0, 0, "half the smallest subnormal"),
        c(p(-17) + p(-60), 1, 1, "just above it"),
    ]);
    run_cases::<F8E5M2>(&backends, &e5, &mut report);

    let n = f16.len() + bf16.len() + e4.len() + e5.len();
    report.finish(
        test,
        &format!(
            "{n} f64 double-rounding traps (stated answers) x 2 modes on [{}]",
            names(&backends)
        ),
    );
}

/// Double-rounding traps of the formats added for MX and fnuz, with answers stated from
/// their definitions. Several come from ml_dtypes 0.6, which rounds f64 through f32 and gets
/// them wrong (`tests/data/mldtypes/README.md`).
#[test]
fn double_rounding_traps_mx_and_fnuz() {
    let test = "double_rounding_traps_mx_and_fnuz";
    let backends = backends(test);
    let mut report = Report::default();
    let c = |x: f64, sat: u32, nonsat: u32, why: &str| Case {
        x,
        want: [sat, nonsat],
        why: why.to_string(),
    };
    let p = |n: i32| 2f64.powi(n);
    let mut n = 0;

    let mut e4z = false_ties(F8E4M3FNUZ::oracle());
    e4z.extend([
        c(
            248.0,
            0x7F,
            0x80,
            "248 is the tie above 240 (0x7F odd): overflow",
        ),
        c(
            f64::from_bits(0x406E_FFFF_FFFF_FFFF),
            0x7F,
            0x7F,
            "just below 248: 240 (ml_dtypes, through f32: NaN)",
        ),
        c(
            -(248.0 + p(-40)),
            0xFF,
            0x80,
            "negative overflow: -MAX or the NaN",
        ),
        c(
            -p(-11),
            0x00,
            0x00,
            "-half the smallest subnormal: +0 (no -0)",
        ),
        c(-(p(-11) + p(-60)), 0x81, 0x81, "just below it"),
        c(f64::NEG_INFINITY, 0xFF, 0x80, "-Inf"),
    ]);
    n += e4z.len();
    run_cases::<F8E4M3FNUZ>(&backends, &e4z, &mut report);

    let mut e5z = false_ties(F8E5M2FNUZ::oracle());
    e5z.extend([
        c(
            61440.0,
            0x7F,
            0x80,
            "61440 is the tie above 57344: overflow",
        ),
        c(
            f64::from_bits(0x40ED_FFFF_FFFF_E200),
            0x7F,
            0x7F,
            "just below 61440 (ml_dtypes, through f32: NaN)",
        ),
        c(-0.0, 0x00, 0x00, "-0 is +0"),
    ]);
    n += e5z.len();
    run_cases::<F8E5M2FNUZ>(&backends, &e5z, &mut report);

    let mut e2m3 = false_ties(F6E2M3::oracle());
    e2m3.extend([
        c(7.75, 0x1F, 0x1F, "7.75 is the tie above 7.5: saturates"),
        c(
            p(-4),
            0x00,
            0x00,
            "half the smallest subnormal (0.125): ties to 0",
        ),
        c(p(-4) + p(-50), 0x01, 0x01, "just above it"),
        c(-f64::MAX, 0x3F, 0x3F, "-f64::MAX saturates"),
    ]);
    n += e2m3.len();
    run_cases::<F6E2M3>(&backends, &e2m3, &mut report);

    let mut e3m2 = false_ties(F6E3M2::oracle());
    e3m2.extend([
        c(30.0, 0x1F, 0x1F, "30 is the tie above 28: saturates"),
        c(p(-5), 0x00, 0x00, "half the smallest subnormal (0.0625)"),
        c(p(-5) + p(-50), 0x01, 0x01, "just above it"),
    ]);
    n += e3m2.len();
    run_cases::<F6E3M2>(&backends, &e3m2, &mut report);

    let mut e2m1 = false_ties(F4E2M1::oracle());
    e2m1.extend([
        c(
            f64::from_bits(0x3FD0_0000_0000_1000),
            0x1,
            0x1,
            "just above 0.25: 0.5 (ml_dtypes, through f32: 0)",
        ),
        c(0.25, 0x0, 0x0, "0.25 ties to 0"),
        c(5.0 - p(-40), 0x6, 0x6, "just below the 5 tie: 4"),
        c(5.0 + p(-40), 0x7, 0x7, "just above it: 6"),
        c(1.0e300, 0x7, 0x7, "huge saturates"),
    ]);
    n += e2m1.len();
    run_cases::<F4E2M1>(&backends, &e2m1, &mut report);

    let mut e8m0 = false_ties(F8E8M0::oracle());
    e8m0.extend([
        c(
            f64::from_bits(0x3FF7_FFFF_FFFF_E800),
            0x7F,
            0x7F,
            "just below 1.5: 1 (ml_dtypes, through f32: 2)",
        ),
        c(1.5, 0x80, 0x80, "1.5 ties up to 2"),
        c(
            f64::from_bits(0x47E7_FFFF_FFFF_E800),
            0xFE,
            0xFE,
            "just below 1.5 * 2^127: 2^127 (ml_dtypes: NaN)",
        ),
        c(
            1.5 * p(127),
            0xFE,
            0xFF,
            "1.5 * 2^127 rounds to 2^128: overflow",
        ),
        c(p(-128), 0x00, 0x00, "2^-128: the nearest code is 2^-127"),
        c(f64::from_bits(1), 0x00, 0x00, "smallest f64 subnormal"),
        c(-p(-128), 0xFF, 0xFF, "negative: NaN"),
        c(0.0, 0xFF, 0xFF, "zero: NaN"),
    ]);
    n += e8m0.len();
    run_cases::<F8E8M0>(&backends, &e8m0, &mut report);

    report.finish(
        test,
        &format!(
            "{n} f64 double-rounding traps (stated answers) x 2 modes on [{}]",
            names(&backends)
        ),
    );
}
