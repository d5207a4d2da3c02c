//! vcvt beside NumKong on every conversion pair that both libraries offer: bit-for-bit
//! differences first, then throughput in alternating batches on the same input buffers.
//!
//! ```text
//! cd peers/numkong
//! cargo run --release                        # check, then time 4 Ki, 64 Ki and 16 Mi elements
//! cargo run --release -- --rounds 11         # more rounds per median
//! cargo run --release -- --pair f32 --size 4096   # only pairs whose name contains "f32"
//! cargo run --release -- --check-only        # only the differences (a few seconds)
//! cargo run --release -- --no-check          # only the timing
//! ```
//!
//! **Pairs.** NumKong 7.8.7's `numkong::cast` converts between f64, f32, f16, bf16, e4m3,
//! e5m2, e2m3 and e3m2; vcvt converts f32 and f64 to and from each narrow format and every
//! narrow format to and from F16 and BF16. The 42 pairs in both are timed and checked; the
//! fp8/fp6 pairs among themselves (e.g. E4M3 -> E5M2) are NumKong's only.
//!
//! **Correctness.** vcvt is the reference: each value is rounded once to nearest, ties to
//! even, subnormals kept; its default overflow policy saturates fp8 and fp6 (±Inf and finite
//! overflow become ±MAX) and is IEEE for F16 and BF16. Because NumKong's E5M2 does not
//! saturate, narrowing pairs are compared with vcvt's default *and* with
//! `Options::new().overflow(Overflow::NonSaturating)` (IEEE: overflow becomes ±Inf, or NaN
//! where the format has no Inf). Inputs: narrowing from f32, every bit pattern that is a
//! multiple of `--stride` (257 by default, so that every low-bit residue occurs), plus specials
//! and, for each destination, every midpoint between two consecutive finite codes and the f32
//! values one bit either side of it; from f64, the same values widened plus the f64 midpoints
//! and their f64 neighbours (which tell a double rounding through f32) and f64 specials; from
//! a narrow format, every code. Each difference is classified by what the input was and what
//! each library wrote, with up to three examples per class.
//!
//! **Timing.** For each pair and length, vcvt's `convert_slice` (the active backend,
//! auto-detected unless `VCVT_BACKEND` is set) and `numkong::cast` convert the same input
//! buffer into two output buffers. A batch repeats one call for at least 20 ms (the number of
//! calls is calibrated in a warm-up of at least 5 ms each); the two libraries' batches
//! alternate, the first of each round taking turns, and each figure is the median of
//! `--rounds` batches (7 by default). Inputs are random finite values spread over the
//! destination's range (narrowing) or random finite codes (widening).

#![deny(unsafe_op_in_unsafe_fn)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::mem::{align_of, size_of};
use std::process::exit;
use std::time::{Duration, Instant};

use vcvt::{
    BF16, Backend, ConvertTo, Element, F6E2M3, F6E3M2, F8E4M3, F8E5M2, F16, Options, Overflow,
};

// ---------------------------------------------------------------------------------------
// Element types.

/// An element type that both libraries name, with NumKong's type of the same bits.
trait Ty: Element + Copy + Default + 'static {
    /// vcvt's name of the format.
    const NAME: &'static str;
    /// Number of codes of a narrow format; 0 for `f32` and `f64`.
    const CODES: u64;
    /// NumKong's type: the same size and the same bit layout.
    type Nk: numkong::CastDtype + Copy;
    /// The raw bits.
    fn bits(self) -> u64;
    /// The value with these raw bits (the low bits of `b`).
    fn from_raw(b: u64) -> Self;
    /// The value, exactly.
    fn value(self) -> f64;
    /// Whether this is a NaN.
    fn nan(self) -> bool;
    /// Whether this is ±Inf.
    fn inf(self) -> bool;
    /// The largest finite value.
    fn max_value() -> f64;
    /// The smallest positive normal value.
    fn min_normal() -> f64;
    /// The smallest positive subnormal value.
    fn min_subnormal() -> f64;
    /// `v` rounded to this type by vcvt's defaults (only to make inputs, never as a result).
    fn from_value(v: f64) -> Self;
}

impl Ty for f32 {
    const NAME: &'static str = "f32";
    const CODES: u64 = 0;
    type Nk = f32;
    fn bits(self) -> u64 {
        self.to_bits().into()
    }
    fn from_raw(b: u64) -> Self {
        f32::from_bits(b as u32)
    }
    fn value(self) -> f64 {
        self.into()
    }
    fn nan(self) -> bool {
        self.is_nan()
    }
    fn inf(self) -> bool {
        self.is_infinite()
    }
    fn max_value() -> f64 {
        f32::MAX.into()
    }
    fn min_normal() -> f64 {
        f32::MIN_POSITIVE.into()
    }
    fn min_subnormal() -> f64 {
        f32::from_bits(1).into()
    }
    fn from_value(v: f64) -> Self {
        v as f32
    }
}

impl Ty for f64 {
    const NAME: &'static str = "f64";
    const CODES: u64 = 0;
    type Nk = f64;
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn from_raw(b: u64) -> Self {
        f64::from_bits(b)
    }
    fn value(self) -> f64 {
        self
    }
    fn nan(self) -> bool {
        self.is_nan()
    }
    fn inf(self) -> bool {
        self.is_infinite()
    }
    fn max_value() -> f64 {
        f64::MAX
    }
    fn min_normal() -> f64 {
        f64::MIN_POSITIVE
    }
    fn min_subnormal() -> f64 {
        f64::from_bits(1)
    }
    fn from_value(v: f64) -> Self {
        v
    }
}

/// Implements [`Ty`] for a vcvt narrow type and the NumKong type of the same format.
macro_rules! narrow {
    ($t:ty, $nk:ty, $name:literal, $bits:ty, $codes:expr) => {
        impl Ty for $t {
            const NAME: &'static str = $name;
            const CODES: u64 = $codes;
            type Nk = $nk;
            fn bits(self) -> u64 {
                self.to_bits().into()
            }
            fn from_raw(b: u64) -> Self {
                <$t>::from_bits(b as $bits)
            }
            fn value(self) -> f64 {
                self.to_f64()
            }
            fn nan(self) -> bool {
                self.is_nan()
            }
            fn inf(self) -> bool {
                self.is_infinite()
            }
            fn max_value() -> f64 {
                <$t>::MAX.to_f64()
            }
            fn min_normal() -> f64 {
                <$t>::MIN_POSITIVE.to_f64()
            }
            fn min_subnormal() -> f64 {
                <$t>::MIN_POSITIVE_SUBNORMAL.to_f64()
            }
            fn from_value(v: f64) -> Self {
                <$t>::from_f64(v)
            }
        }
    };
}
narrow!(F16, numkong::types::f16, "F16", u16, 1 << 16);
narrow!(BF16, numkong::types::bf16, "BF16", u16, 1 << 16);
narrow!(F8E4M3, numkong::types::e4m3, "F8E4M3", u8, 1 << 8);
narrow!(F8E5M2, numkong::types::e5m2, "F8E5M2", u8, 1 << 8);
narrow!(F6E2M3, numkong::types::e2m3, "F6E2M3", u8, 1 << 6);
narrow!(F6E3M2, numkong::types::e3m2, "F6E3M2", u8, 1 << 6);

/// `s` as a slice of NumKong's type of the same format.
fn as_nk<T: Ty>(s: &[T]) -> &[T::Nk] {
    const { assert!(size_of::<T>() == size_of::<T::Nk>() && align_of::<T>() == align_of::<T::Nk>()) };
    // SAFETY: both types are `repr(transparent)` wrappers of the same integer (or the same
    // float type), so they have one size and alignment (asserted above) and every bit pattern
    // is a valid value of each; the new slice covers exactly the `s.len()` elements of `s`
    // and borrows `s` for its lifetime.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), s.len()) }
}

/// `s` as a mutable slice of NumKong's type of the same format.
fn as_nk_mut<T: Ty>(s: &mut [T]) -> &mut [T::Nk] {
    const { assert!(size_of::<T>() == size_of::<T::Nk>() && align_of::<T>() == align_of::<T::Nk>()) };
    // SAFETY: as in `as_nk`; the new slice takes over the unique borrow of `s`, covering
    // exactly its `s.len()` elements.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len()) }
}

/// NumKong's conversion of `src` into `dst` (equal lengths).
fn nk_cast<S: Ty, D: Ty>(src: &[S], dst: &mut [D]) {
    numkong::cast(as_nk(src), as_nk_mut(dst)).expect("the harness passes equal lengths");
}

// ---------------------------------------------------------------------------------------
// Random inputs.

/// SplitMix64, seeded per pair so that runs are repeatable.
struct Rng(u64);

impl Rng {
    /// The next 64 random bits.
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A seed from a pair's names (FNV-1a), so that every pair gets its own repeatable stream.
fn seed(a: &str, b: &str, n: usize) -> u64 {
    let mut h = 0xCBF2_9CE4_8422_2325u64 ^ n as u64;
    for byte in a.bytes().chain([b'>']).chain(b.bytes()) {
        h = (h ^ u64::from(byte)).wrapping_mul(0x0100_0000_01B3);
    }
    h
}

/// A random finite value of `S` for converting to `D`. Widening (every finite `S` value fits
/// `D`'s range): a random finite code. Otherwise a random sign, a binade chosen uniformly
/// from one below the smaller format's smallest subnormal up to the top binade of the smaller
/// range, and a random 52-bit mantissa, rounded to `S` and kept if it is within `D`'s range.
fn random_input<S: Ty, D: Ty>(rng: &mut Rng) -> S {
    if S::CODES != 0 && S::max_value() <= D::max_value() {
        loop {
            let x = S::from_raw(rng.next_u64() % S::CODES);
            if !x.nan() && !x.inf() {
                return x;
            }
        }
    }
    let max = S::max_value().min(D::max_value());
    let lo = S::min_subnormal().max(D::min_subnormal()).log2() as i32 - 1;
    let hi = max.log2().floor() as i32;
    loop {
        let r = rng.next_u64();
        let m = 1.0 + (r >> 12) as f64 / 2f64.powi(52);
        let e = lo + (rng.next_u64() % (hi - lo + 1) as u64) as i32;
        let v = m * 2f64.powi(e);
        let x = S::from_value(if r & 1 == 1 { -v } else { v });
        if x.value().abs() <= max {
            return x;
        }
    }
}

// ---------------------------------------------------------------------------------------
// Correctness.

/// f32 specials: zeros, infinities, NaNs with payloads, subnormals, extremes.
const F32_SPECIALS: [u32; 16] = [
    0x0000_0000,
    0x8000_0000,
    0x7F80_0000,
    0xFF80_0000,
    0x7FC0_0000,
    0xFFC0_0001,
    0x7F80_0001,
    0x7FA0_0000,
    0xFFBF_FFFF,
    0x7FFF_E000,
    0x0000_0001,
    0x807F_FFFF,
    0x0080_0000,
    0x7F7F_FFFF,
    0xFF7F_FFFF,
    0x7F7F_8000,
];

/// f64 specials: as [`F32_SPECIALS`], and values between f32's range and f64's.
const F64_SPECIALS: [u64; 16] = [
    0x0000_0000_0000_0000,
    0x8000_0000_0000_0000,
    0x7FF0_0000_0000_0000,
    0xFFF0_0000_0000_0000,
    0x7FF8_0000_0000_0000,
    0xFFF8_0000_0000_0001,
    0x7FF0_0000_0000_0001,
    0x7FF4_0000_0000_0000,
    0xFFF7_FFFF_FFFF_FFFF,
    0x0000_0000_0000_0001,
    0x800F_FFFF_FFFF_FFFF,
    0x0010_0000_0000_0000,
    0x7FEF_FFFF_FFFF_FFFF,
    0xFFEF_FFFF_FFFF_FFFF,
    0x380F_FFFF_FFFF_FFFF,
    0x47EF_FFFF_F000_0000,
];

/// The magnitude halfway between `D`'s MAX and the next step of its spacing above it: the
/// smallest value that IEEE rounding takes to ±Inf (or NaN) instead of ±MAX.
fn overflow_tie<D: Ty>() -> f64 {
    let below_max = (0..D::CODES / 2)
        .rev()
        .map(D::from_raw)
        .filter(|x| !x.nan() && !x.inf())
        .nth(1)
        .expect("a format has two finite positive codes");
    D::max_value() + (D::max_value() - below_max.value()) / 2.0
}

/// Every midpoint between two consecutive finite values of `D` of one sign (and the midpoint
/// above ±MAX), as f64 (exact for every format here).
fn midpoints<D: Ty>() -> Vec<f64> {
    let mut v = Vec::new();
    let sign = D::CODES / 2;
    for c in 0..D::CODES - 1 {
        let (a, b) = (D::from_raw(c), D::from_raw(c + 1));
        if (c + 1) & sign == c & sign && !a.nan() && !a.inf() && !b.nan() && !b.inf() {
            v.push((a.value() + b.value()) / 2.0);
        }
    }
    let tie = overflow_tie::<D>();
    v.push(tie);
    v.push(-tie);
    v
}

/// The inputs of the check of `S -> D` (see the crate documentation).
fn check_inputs<S: Ty, D: Ty>(stride: u64) -> Vec<S> {
    if S::CODES != 0 {
        return (0..S::CODES).map(S::from_raw).collect();
    }
    let mut f32s: Vec<u32> = (0..=u64::from(u32::MAX) / stride)
        .map(|i| (i * stride) as u32)
        .collect();
    f32s.extend(F32_SPECIALS);
    let mids = if D::CODES != 0 {
        midpoints::<D>()
    } else {
        Vec::new()
    };
    if S::NAME == "f32" {
        for &m in &mids {
            let b = (m as f32).to_bits();
            f32s.extend([b, b.wrapping_add(1), b.wrapping_sub(1)]);
        }
        return f32s.into_iter().map(|b| S::from_raw(b.into())).collect();
    }
    // f64: the f32 inputs widened exactly, the midpoints with their f64 neighbours, specials.
    let mut v: Vec<S> = f32s
        .into_iter()
        .map(|b| S::from_value(f32::from_bits(b).into()))
        .collect();
    for &m in &mids {
        let b = m.to_bits();
        v.extend([b, b + 1, b - 1].map(S::from_raw));
    }
    v.extend(F64_SPECIALS.map(S::from_raw));
    v
}

/// What a value is, for the classes of differences.
fn out_class<D: Ty>(x: D) -> &'static str {
    let a = x.value().abs();
    if x.nan() {
        "NaN"
    } else if x.inf() {
        "Inf"
    } else if a == D::max_value() {
        "±MAX"
    } else if a == 0.0 {
        "zero"
    } else {
        "finite"
    }
}

/// What an input of `S -> D` is, relative to `D`'s range (narrowing) or `S`'s (widening).
fn in_class<S: Ty, D: Ty>(x: S) -> &'static str {
    let a = x.value().abs();
    let widening = S::CODES != 0 && S::max_value() <= D::max_value();
    let (max, min_normal) = if widening {
        (S::max_value(), S::min_normal())
    } else {
        (D::max_value(), D::min_normal())
    };
    if x.nan() {
        "NaN"
    } else if x.inf() {
        "±Inf"
    } else if a == 0.0 {
        "±0"
    } else if a > max && !widening && a < overflow_tie::<D>() {
        "above MAX, below the overflow tie"
    } else if a > max {
        "at or above the overflow tie"
    } else if a < min_normal {
        "subnormal range"
    } else {
        "normal range"
    }
}

/// One class of differences: how many, and the first few inputs with both outputs.
#[derive(Default)]
struct Class {
    count: usize,
    examples: Vec<String>,
    /// The smallest and largest finite input magnitude of the class.
    range: Option<(f64, f64)>,
}

/// Compares NumKong's output with vcvt's under each policy and prints the differences.
fn check_pair<S: Ty + ConvertTo<D>, D: Ty>(stride: u64) {
    let src = check_inputs::<S, D>(stride);
    let n = src.len();
    let mut nk = vec![D::default(); n];
    nk_cast(&src, &mut nk);
    // The overflow policy only matters where a source value can exceed `D`'s range.
    let can_overflow = S::max_value() > D::max_value();
    let mut policies = vec![("default", Options::new())];
    if can_overflow {
        policies.push((
            "NonSaturating",
            Options::new().overflow(Overflow::NonSaturating),
        ));
    }
    let mut previous: Option<Vec<D>> = None;
    for (policy, options) in policies {
        let mut want = vec![D::default(); n];
        vcvt::convert_slice_with(&src, &mut want, options);
        let label = format!("{} -> {} ({} inputs)", S::NAME, D::NAME, n);
        if let Some(p) = &previous
            && p.iter().zip(&want).all(|(a, b)| a.bits() == b.bits())
        {
            println!("{label}, vcvt {policy}: same outputs as vcvt default");
            continue;
        }
        let mut classes: BTreeMap<String, Class> = BTreeMap::new();
        for i in 0..n {
            let (w, g) = (want[i], nk[i]);
            if w.bits() == g.bits() {
                continue;
            }
            let mut name = format!(
                "input {} -> vcvt {}, NumKong {}",
                in_class::<S, D>(src[i]),
                out_class(w),
                out_class(g)
            );
            if w.nan() && g.nan() {
                name.push_str(" (other sign or payload)");
            } else if !w.nan() && !g.nan() && !w.inf() && !g.inf() {
                let x = src[i].value();
                let (dw, dg) = ((x - w.value()).abs(), (x - g.value()).abs());
                name.push_str(if dg > dw {
                    " (NumKong's is farther from the input)"
                } else if dg == dw {
                    " (a tie: vcvt's is the even code)"
                } else {
                    " (NumKong's is nearer: check vcvt)"
                });
            }
            let class = classes.entry(name).or_default();
            class.count += 1;
            let a = src[i].value().abs();
            if a.is_finite() {
                let (lo, hi) = class.range.unwrap_or((a, a));
                class.range = Some((lo.min(a), hi.max(a)));
            }
            if class.examples.len() < 3 {
                class.examples.push(format!(
                    "{} {:#x} ({:e}): vcvt {:#x} ({:e}), NumKong {:#x} ({:e})",
                    S::NAME,
                    src[i].bits(),
                    src[i].value(),
                    w.bits(),
                    w.value(),
                    g.bits(),
                    g.value()
                ));
            }
        }
        let total: usize = classes.values().map(|c| c.count).sum();
        println!("{label}, vcvt {policy}: {total} differ");
        for (name, class) in &classes {
            println!("  {:>9}  {name}", class.count);
            if let Some((lo, hi)) = class.range {
                println!("             finite inputs with |x| in [{lo:e}, {hi:e}]");
            }
            for e in &class.examples {
                println!("             e.g. {e}");
            }
        }
        previous = Some(want);
    }
}

// ---------------------------------------------------------------------------------------
// Timing.

/// Median ns per call of `f` and of `g`, in `rounds` alternating batches of at least
/// `batch` each, the first of each round taking turns.
fn measure2(
    rounds: usize,
    batch: Duration,
    mut f: impl FnMut(),
    mut g: impl FnMut(),
) -> (f64, f64) {
    /// Calls per batch: calibrated by running `h` for at least 5 ms (at least once).
    fn reps(batch: Duration, h: &mut dyn FnMut()) -> u64 {
        let start = Instant::now();
        let mut calls = 0u64;
        while calls == 0 || start.elapsed() < Duration::from_millis(5) {
            h();
            calls += 1;
        }
        let per_call = start.elapsed().as_secs_f64() / calls as f64;
        ((batch.as_secs_f64() / per_call).ceil() as u64).max(1)
    }
    /// ns per call over one batch of `r` calls.
    fn run(h: &mut dyn FnMut(), r: u64) -> f64 {
        let t = Instant::now();
        for _ in 0..r {
            h();
        }
        t.elapsed().as_secs_f64() * 1e9 / r as f64
    }
    let (rf, rg) = (reps(batch, &mut f), reps(batch, &mut g));
    let (mut tf, mut tg) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 0 {
            tf.push(run(&mut f, rf));
            tg.push(run(&mut g, rg));
        } else {
            tg.push(run(&mut g, rg));
            tf.push(run(&mut f, rf));
        }
    }
    tf.sort_by(f64::total_cmp);
    tg.sort_by(f64::total_cmp);
    (tf[tf.len() / 2], tg[tg.len() / 2])
}

/// el/ns of vcvt and of NumKong converting the same `n` random inputs of `S -> D`.
fn time_pair<S: Ty + ConvertTo<D>, D: Ty>(n: usize, rounds: usize) -> (f64, f64) {
    let mut rng = Rng(seed(S::NAME, D::NAME, n));
    let src: Vec<S> = (0..n).map(|_| random_input::<S, D>(&mut rng)).collect();
    let mut a = vec![D::default(); n];
    let mut b = vec![D::default(); n];
    let (ta, tb) = measure2(
        rounds,
        Duration::from_millis(20),
        || vcvt::convert_slice(black_box(&src[..]), black_box(&mut a[..])),
        || nk_cast(black_box(&src[..]), black_box(&mut b[..])),
    );
    (n as f64 / ta, n as f64 / tb)
}

// ---------------------------------------------------------------------------------------
// The pairs.

/// One pair that both libraries convert.
struct Pair {
    /// `"f32 -> F16"`.
    name: String,
    /// [`check_pair`] of this pair.
    check: fn(u64),
    /// [`time_pair`] of this pair.
    time: fn(usize, usize) -> (f64, f64),
}

/// A [`Pair`] of `S -> D`.
fn pair<S: Ty + ConvertTo<D>, D: Ty>() -> Pair {
    Pair {
        name: format!("{} -> {}", S::NAME, D::NAME),
        check: check_pair::<S, D>,
        time: time_pair::<S, D>,
    }
}

/// Both directions between `W` (f32, f64, F16 or BF16) and each narrower format of the list.
macro_rules! both_ways {
    ($w:ty: $($n:ty),*) => {
        vec![$(pair::<$w, $n>(), pair::<$n, $w>()),*]
    };
}

/// Every pair in both libraries.
fn pairs() -> Vec<Pair> {
    [
        both_ways!(f32: F16, BF16, F8E4M3, F8E5M2, F6E2M3, F6E3M2),
        both_ways!(f64: F16, BF16, F8E4M3, F8E5M2, F6E2M3, F6E3M2),
        both_ways!(F16: BF16, F8E4M3, F8E5M2, F6E2M3, F6E3M2),
        both_ways!(BF16: F8E4M3, F8E5M2, F6E2M3, F6E3M2),
    ]
    .into_iter()
    .flatten()
    .collect()
}

// ---------------------------------------------------------------------------------------
// The machine.

/// The CPU model with its CPUID family and model numbers (Linux), e.g.
/// `AMD EPYC (family 25, model 1)`.
fn cpu_model() -> String {
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return "unknown".to_string();
    };
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let model = field("model name").unwrap_or_else(|| "unknown".to_string());
    match (field("cpu family"), field("model")) {
        (Some(f), Some(m)) => format!("{model} (family {f}, model {m})"),
        _ => model,
    }
}

/// The load averages over 1, 5 and 15 minutes (Linux).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

/// The kernel family that NumKong's `nk_cast` dispatches to on this CPU, in the order of its
/// dispatch table (`c/dispatch_other.c` of 7.8.7).
fn numkong_tier() -> &'static str {
    use numkong::capabilities::cap;
    let caps = numkong::capabilities::available();
    [
        (cap::NEON, "neon"),
        (cap::SAPPHIRE, "sapphire"),
        (cap::ICELAKE, "icelake"),
        (cap::SKYLAKE, "skylake"),
        (cap::HASWELL, "haswell"),
        (cap::RVV, "rvv"),
    ]
    .into_iter()
    .find(|&(bit, _)| caps & bit != 0)
    .map_or("serial", |(_, name)| name)
}

// ---------------------------------------------------------------------------------------

/// Command-line options.
struct Config {
    /// Rounds (batches per library) per median.
    rounds: usize,
    /// Slice lengths to time.
    sizes: Vec<usize>,
    /// Substrings; a pair runs if its name contains any (all pairs if empty).
    pairs: Vec<String>,
    /// Stride of the f32 bit patterns of the check.
    stride: u64,
    /// Run the check.
    check: bool,
    /// Run the timing.
    time: bool,
}

/// Prints the usage and exits with status 2.
fn usage() -> ! {
    eprintln!(
        "usage: vcvt-peer-numkong [--rounds N] [--size N]... [--pair TEXT]... [--stride N]\n\
         \x20                        [--check-only | --no-check]\n\
         \n  --rounds N    batches per library per median (default 7, at least 1)\
         \n  --size N      time slices of N elements (repeatable; default 4096, 65536, 16777216)\
         \n  --pair TEXT   only pairs whose name contains TEXT (repeatable), e.g. \"f32 -> \", E5M2\
         \n  --stride N    the check narrows every f32 bit pattern that is a multiple of N\
         \n                (default 257; 1 = all 2^32)\
         \n  --check-only  only the differences;  --no-check  only the timing"
    );
    exit(2)
}

/// Parses the command line; exits with a message on a bad argument.
fn parse_args() -> Config {
    let mut cfg = Config {
        rounds: 7,
        sizes: Vec::new(),
        pairs: Vec::new(),
        stride: 257,
        check: true,
        time: true,
    };
    let mut args = std::env::args().skip(1);
    let number = |flag: &str, v: Option<String>| -> u64 {
        match v.as_deref().map(str::parse::<u64>) {
            Some(Ok(n)) if n > 0 => n,
            _ => {
                eprintln!("error: {flag} needs a positive whole number, got {v:?}");
                usage()
            }
        }
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => cfg.rounds = number("--rounds", args.next()) as usize,
            "--size" => cfg.sizes.push(number("--size", args.next()) as usize),
            "--stride" => cfg.stride = number("--stride", args.next()),
            "--pair" => match args.next() {
                Some(p) => cfg.pairs.push(p),
                None => {
                    eprintln!("error: --pair needs a text");
                    usage()
                }
            },
            "--check-only" => cfg.time = false,
            "--no-check" => cfg.check = false,
            "-h" | "--help" => usage(),
            _ => {
                eprintln!("error: unknown argument {a:?}");
                usage()
            }
        }
    }
    if cfg.sizes.is_empty() {
        cfg.sizes = vec![1 << 12, 1 << 16, 1 << 24];
    }
    cfg
}

/// The project's target for vcvt ÷ NumKong at `n` elements: 1.2 for cache-sized slices,
/// 0.95 from 1 Mi elements on (memory-sized).
fn target(n: usize) -> f64 {
    if n >= 1 << 20 { 0.95 } else { 1.2 }
}

/// `n` as 4 Ki, 64 Ki, 16 Mi where it is a multiple.
fn size_label(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} Mi", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} Ki", n >> 10)
    } else {
        n.to_string()
    }
}

fn main() {
    let cfg = parse_args();
    let started = Instant::now();
    let pairs: Vec<Pair> = pairs()
        .into_iter()
        .filter(|p| cfg.pairs.is_empty() || cfg.pairs.iter().any(|s| p.name.contains(s.as_str())))
        .collect();
    if pairs.is_empty() {
        eprintln!("error: no pair name contains any of {:?}", cfg.pairs);
        usage();
    }
    println!(
        "vcvt (this repository) beside NumKong 7.8.7 ({} build)",
        if cfg!(debug_assertions) {
            "DEBUG -- timings are meaningless, use --release"
        } else {
            "release"
        }
    );
    println!("CPU: {}", cpu_model());
    println!(
        "vcvt backend: {}; NumKong cast kernels: {}",
        Backend::active(),
        numkong_tier()
    );
    println!("load average at the start: {}", load_average());

    if cfg.check {
        println!();
        println!(
            "Differences (vcvt is the reference; inputs: f32 bits that are multiples of {}, specials,",
            cfg.stride
        );
        println!(
            "every midpoint of the destination and its neighbours; from a narrow format every code)"
        );
        for p in &pairs {
            (p.check)(cfg.stride);
        }
    }

    if cfg.time {
        let mut misses = Vec::new();
        for &n in &cfg.sizes {
            println!();
            println!(
                "{} elements, medians of {} alternating batches of >= 20 ms; target vcvt/NumKong >= {}",
                size_label(n),
                cfg.rounds,
                target(n)
            );
            println!(
                "{:<16} {:>10} {:>10} {:>12}",
                "pair", "vcvt el/ns", "NK el/ns", "vcvt/NK"
            );
            for p in &pairs {
                let (a, b) = (p.time)(n, cfg.rounds);
                let ratio = a / b;
                let miss = ratio < target(n);
                println!(
                    "{:<16} {:>10.3} {:>10.3} {:>11.2}{}",
                    p.name,
                    a,
                    b,
                    ratio,
                    if miss { " MISS" } else { "" }
                );
                if miss {
                    misses.push(format!("{} at {} ({ratio:.2})", p.name, size_label(n)));
                }
            }
        }
        println!();
        if misses.is_empty() {
            println!("every pair meets its target");
        } else {
            println!("below target: {}", misses.join(", "));
        }
    }
    println!();
    println!(
        "load average at the end: {}; total time {:.1} s",
        load_average(),
        started.elapsed().as_secs_f64()
    );
}
