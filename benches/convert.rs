//! Criterion benchmarks: every vcvt pair on every available backend against the `half` and
//! `float8` crates, bare-instruction loops and a memcpy, in one run.
//!
//! ```text
//! cargo bench --bench convert                         # everything (about 20 minutes)
//! cargo bench --bench convert -- f32_to_f16/          # one pair, every size
//! cargo bench --bench convert -- /1024/               # every pair at the L1 size
//! cargo bench --bench convert -- '^f32_to_f16/16/'    # one pair at 16 elements (not 16777216)
//! cargo bench --bench convert -- --test               # run each benchmark once (smoke test)
//! python3 scripts/bench_table.py                      # the markdown table of the results
//! ```
//!
//! Benchmark ids are `<pair>/<n>/<contender>`: the group `<pair>/<n>` (pair such as
//! `f32_to_f16`, `n` in 16, 64, 1024 (L1), 65536 (L2), 16777216 (DRAM) elements) holds the
//! contenders, all fed the same input:
//!
//! * `vcvt-<backend>`: `vcvt::convert_slice_on` for each backend this CPU can run, with the
//!   default options (each call also checks that the backend is available);
//! * `vcvt` (up to 1024 elements): `vcvt::convert_slice`, the default entry point, on the
//!   active backend through the cached dispatch: what a caller of short slices pays;
//! * `half`: the `half` crate's `HalfFloatSliceExt` slice conversions (F16 and BF16 pairs);
//! * `float8`: the `float8` crate, one element at a time (it has no slice API; fp8 pairs);
//! * `memcpy`: `copy_from_slice` moving the same bytes as the conversion: it copies
//!   n × (source + destination element size) / 2 bytes, so that its reads plus writes equal
//!   the conversion's (ratios of times are then ratios of bytes/s);
//! * `bare-*` (x86-64 only, when the CPU has the instructions): the bare conversion
//!   instruction in a loop with no special-case handling, the speed of light for a pair:
//!   `bare-vcvtps2ph-avx512`/`-f16c` (f32 → F16), `bare-vcvtph2ps-avx512`/`-f16c`
//!   (F16 → f32), `bare-vcvtneps2bf16-avx512bf16` (f32 → BF16; flushes subnormals, so not
//!   a correct conversion), and `bare-shift`, `bare-shift-avx2`, `bare-shift-avx512`
//!   (BF16 → f32 as `u16 → u32 << 16`; `bare-shift` is portable Rust, on every target).
//!
//! The newer pairs (f32 to and from fnuz fp8, fp6, fp4, packed fp4 and E8M0; narrow ↔ narrow;
//! `round_trip`) run at 1024 and 16777216 elements only, with these peers: `vcvt-scalar`
//! (vcvt's own per-element codec loop) where no crate converts the pair, `bare-shift` for
//! E8M0 → f32 (`code << 23`, right for codes 1..=254), `half/float8 via f32` (those crates
//! element by element through f32) for narrow ↔ narrow, and for `round_trip_*`, in-place
//! `vcvt-<backend>` beside `narrow-only-<backend>` (the f32 → format narrowing alone, same
//! input) and `half` (`from_f32(x).to_f32()` per element).
//!
//! Every contender's source and destination start on a 64-byte boundary (the allocator's
//! alignment would otherwise differ between contenders and split some of their vector
//! accesses across cache lines). Throughput is reported in elements. Inputs are random finite values spread over the
//! destination format's range (narrowing) or random finite codes (widening), generated
//! from a fixed seed per pair and size, and only when a benchmark that the filter selects
//! runs, so a filtered run does not pay for the 16 Mi inputs.
//!
//! Timing budget: 0.25 s warm-up + 0.8 s measurement, 20 samples up to the L2 size; the
//! DRAM size: 0.5 s warm-up, 10 flat samples over 2 s. Criterion's own options (e.g.
//! `--measurement-time 3`) override the defaults of the smaller sizes.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use criterion::{criterion_group, criterion_main};
use half::slice::HalfFloatSliceExt;
use vcvt::{
    BF16, Backend, ConvertTo, Element, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ,
    F8E5M2, F8E5M2FNUZ, F8E8M0, F16, Options,
};

/// Slice lengths in elements: tiny, small, L1-, L2- and DRAM-sized.
const SIZES: [usize; 5] = [16, 64, 1 << 10, 1 << 16, 1 << 24];
/// Slice lengths of the newer pairs' groups (formats issue, narrow <-> narrow, round trips):
/// L1-sized, where the kernels' rates show, and DRAM-sized, where memory bandwidth does.
const NEW_SIZES: [usize; 2] = [1 << 10, 1 << 24];
/// From this length on, a group uses the long-iteration settings.
const DRAM: usize = 1 << 24;
/// Up to this length, the `vcvt` contender (the default entry point) runs too.
const ACTIVE_UP_TO: usize = 1 << 10;

type Group<'a> = BenchmarkGroup<'a, WallTime>;

// ---------------------------------------------------------------------------------------
// Inputs.

/// SplitMix64, seeded per pair and size so that every contender sees the same input.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `f32` or `f64`.
trait Wide: Element + Default {
    fn from_f64(v: f64) -> Self;
}
impl Wide for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}
impl Wide for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// A narrow format.
trait Narrow: Element + Default {
    /// Number of codes (256 or 65536).
    const CODES: u32;
    fn from_code(c: u32) -> Self;
    fn finite(self) -> bool;
    fn max_value() -> f64;
    fn min_subnormal() -> f64;
}

macro_rules! narrow {
    ($t:ty, $bits:ty) => {
        impl Narrow for $t {
            const CODES: u32 = 1 << <$bits>::BITS;
            fn from_code(c: u32) -> Self {
                <$t>::from_bits(c as $bits)
            }
            fn finite(self) -> bool {
                self.is_finite()
            }
            fn max_value() -> f64 {
                <$t>::MAX.to_f64()
            }
            fn min_subnormal() -> f64 {
                <$t>::MIN_POSITIVE_SUBNORMAL.to_f64()
            }
        }
    };
    ($t:ty, $bits:ty, no_subnormals) => {
        impl Narrow for $t {
            const CODES: u32 = 1 << <$bits>::BITS;
            fn from_code(c: u32) -> Self {
                <$t>::from_bits(c as $bits)
            }
            fn finite(self) -> bool {
                self.is_finite()
            }
            fn max_value() -> f64 {
                <$t>::MAX.to_f64()
            }
            fn min_subnormal() -> f64 {
                <$t>::MIN_POSITIVE.to_f64()
            }
        }
    };
}
narrow!(F16, u16);
narrow!(BF16, u16);
narrow!(F8E4M3, u8);
narrow!(F8E5M2, u8);
narrow!(F8E4M3FNUZ, u8);
narrow!(F8E5M2FNUZ, u8);
narrow!(F6E2M3, u8);
narrow!(F6E3M2, u8);
narrow!(F4E2M1, u8);
narrow!(F8E8M0, u8, no_subnormals);

/// 2^e as an f64 (exact for normal exponents).
fn pow2(e: i64) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

fn seed(pair: &str, n: usize) -> u64 {
    pair.bytes()
        .fold(n as u64, |h, b| h.rotate_left(5) ^ u64::from(b))
}

/// `n` random finite values for narrowing to `N`: random sign, a binade chosen uniformly
/// from one below `N`'s smallest subnormal to its top binade, a random full-precision
/// mantissa, magnitude at most `N::MAX`.
fn narrowing_input<W: Wide, N: Narrow>(n: usize, seed: u64) -> Vec<W> {
    let mut rng = Rng(seed);
    let lo = N::min_subnormal().log2() as i64 - 1;
    let span = (N::max_value().log2().floor() as i64 - lo + 1) as u64;
    let max = N::max_value();
    (0..n)
        .map(|_| {
            loop {
                let r = rng.next_u64();
                let m = 1.0 + (r >> 12) as f64 / pow2(52);
                let v = m * pow2(lo + (rng.next_u64() % span) as i64);
                if v <= max {
                    break W::from_f64(if r & 1 == 1 { -v } else { v });
                }
            }
        })
        .collect()
}

/// `n` random finite codes of `N`.
fn widening_input<N: Narrow>(n: usize, seed: u64) -> Vec<N> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            loop {
                let x = N::from_code(rng.next_u64() as u32 & (N::CODES - 1));
                if x.finite() {
                    break x;
                }
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Contenders.

fn open<'a>(c: &'a mut Criterion, pair: &str, n: usize) -> Group<'a> {
    let mut g = c.benchmark_group(format!("{pair}/{n}"));
    g.throughput(Throughput::Elements(n as u64));
    if n >= DRAM {
        g.sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
    }
    g
}

/// Registers one contender. Its buffers are made on first use (only if the filter selects
/// it) and dropped when it is done.
fn contender<S: Clone, D: Clone + Default>(
    g: &mut Group,
    id: &str,
    make_src: impl Fn() -> Vec<S>,
    mut run: impl FnMut(&[S], &mut [D]),
) {
    let mut bufs: Option<(Aligned<S>, Aligned<D>)> = None;
    g.bench_function(id, |b| {
        let (src, dst) = bufs.get_or_insert_with(|| {
            let src = make_src();
            let dst = vec![D::default(); src.len()];
            (Aligned::new(src), Aligned::new(dst))
        });
        b.iter(|| run(black_box(src.get()), black_box(dst.get_mut())));
    });
}

/// A slice that starts on a 64-byte boundary, so that every contender sees the same
/// alignment: the allocator's alignment varies from buffer to buffer, and a 64-byte access
/// that straddles two cache lines costs about twice as much, enough to reorder the
/// contenders at L1 sizes.
struct Aligned<T> {
    v: Vec<T>,
    off: usize,
    n: usize,
}

impl<T: Clone> Aligned<T> {
    fn new(data: Vec<T>) -> Self {
        let n = data.len();
        let slack = 64 / size_of::<T>().max(1);
        let Some(first) = data.first().cloned() else {
            return Aligned { v: data, off: 0, n };
        };
        let mut v = vec![first; n + slack];
        let off = v.as_ptr().align_offset(64);
        assert!(off < slack, "element size must divide 64");
        v[off..off + n].clone_from_slice(&data);
        Aligned { v, off, n }
    }
    fn get(&self) -> &[T] {
        &self.v[self.off..self.off + self.n]
    }
    fn get_mut(&mut self) -> &mut [T] {
        &mut self.v[self.off..self.off + self.n]
    }
}

/// vcvt on every available backend, and a memcpy that reads and writes as many bytes as the
/// conversion does.
fn vcvt_and_memcpy<S: ConvertTo<D>, D: Element + Default>(
    g: &mut Group,
    n: usize,
    src: &impl Fn() -> Vec<S>,
) {
    if n <= ACTIVE_UP_TO {
        // The default entry point: cached dispatch to the active backend, no availability
        // check, which matters at these lengths.
        contender(g, "vcvt", src, |s, d: &mut [D]| vcvt::convert_slice(s, d));
    }
    for b in Backend::available() {
        contender(g, &format!("vcvt-{b}"), src, move |s, d: &mut [D]| {
            vcvt::convert_slice_on(b, s, d, Options::new()).expect("available backend");
        });
    }
    // memcpy runs at the same speed whatever the bytes are.
    let bytes = n * (size_of::<S>() + size_of::<D>()) / 2;
    contender(
        g,
        "memcpy",
        || vec![0x5Au8; bytes],
        |s, d: &mut [u8]| d.copy_from_slice(s),
    );
}

#[cfg(target_arch = "x86_64")]
fn f16_codes(v: Vec<F16>) -> Vec<u16> {
    v.into_iter().map(F16::to_bits).collect()
}
fn bf16_codes(v: Vec<BF16>) -> Vec<u16> {
    v.into_iter().map(BF16::to_bits).collect()
}
fn to_half(v: Vec<F16>) -> Vec<half::f16> {
    v.into_iter()
        .map(|x| half::f16::from_bits(x.to_bits()))
        .collect()
}
fn to_half_bf16(v: Vec<BF16>) -> Vec<half::bf16> {
    v.into_iter()
        .map(|x| half::bf16::from_bits(x.to_bits()))
        .collect()
}

/// The `float8` crate's contenders for an fp8 format, element by element.
macro_rules! float8_pairs {
    ($c:expr, $n:expr, $ours:ty, $theirs:ty, $name:literal) => {{
        let (c, n) = ($c, $n);
        for (wide, is_f64) in [("f32", false), ("f64", true)] {
            let pair = format!("{wide}_to_{}", $name);
            let s = seed(&pair, n);
            let mut g = open(c, &pair, n);
            if is_f64 {
                let src = move || narrowing_input::<f64, $ours>(n, s);
                vcvt_and_memcpy::<f64, $ours>(&mut g, n, &src);
                contender(&mut g, "float8", src, |s, d: &mut [$theirs]| {
                    for (o, &x) in d.iter_mut().zip(s) {
                        *o = <$theirs>::from_f64(x);
                    }
                });
            } else {
                let src = move || narrowing_input::<f32, $ours>(n, s);
                vcvt_and_memcpy::<f32, $ours>(&mut g, n, &src);
                contender(&mut g, "float8", src, |s, d: &mut [$theirs]| {
                    for (o, &x) in d.iter_mut().zip(s) {
                        *o = <$theirs>::from_f32(x);
                    }
                });
            }
            g.finish();

            let pair = format!("{}_to_{wide}", $name);
            let s = seed(&pair, n);
            let src = move || widening_input::<$ours>(n, s);
            let theirs = move || {
                src()
                    .into_iter()
                    .map(|x| <$theirs>::from_bits(x.to_bits()))
                    .collect::<Vec<_>>()
            };
            let mut g = open(c, &pair, n);
            if is_f64 {
                vcvt_and_memcpy::<$ours, f64>(&mut g, n, &src);
                contender(&mut g, "float8", theirs, |s, d: &mut [f64]| {
                    for (o, x) in d.iter_mut().zip(s) {
                        *o = x.to_f64();
                    }
                });
            } else {
                vcvt_and_memcpy::<$ours, f32>(&mut g, n, &src);
                contender(&mut g, "float8", theirs, |s, d: &mut [f32]| {
                    for (o, x) in d.iter_mut().zip(s) {
                        *o = x.to_f32();
                    }
                });
            }
            g.finish();
        }
    }};
}

/// Every group of one size.
fn bench_size(c: &mut Criterion, n: usize) {
    // f32 / f64 -> F16
    {
        let s = seed("f32_to_f16", n);
        let src = move || narrowing_input::<f32, F16>(n, s);
        let mut g = open(c, "f32_to_f16", n);
        vcvt_and_memcpy::<f32, F16>(&mut g, n, &src);
        contender(&mut g, "half", src, |s, d: &mut [half::f16]| {
            d.convert_from_f32_slice(s)
        });
        #[cfg(target_arch = "x86_64")]
        bare::f32_to_f16(&mut g, &src);
        g.finish();
    }
    {
        let s = seed("f64_to_f16", n);
        let src = move || narrowing_input::<f64, F16>(n, s);
        let mut g = open(c, "f64_to_f16", n);
        vcvt_and_memcpy::<f64, F16>(&mut g, n, &src);
        contender(&mut g, "half", src, |s, d: &mut [half::f16]| {
            d.convert_from_f64_slice(s)
        });
        g.finish();
    }
    // f32 / f64 -> BF16
    {
        let s = seed("f32_to_bf16", n);
        let src = move || narrowing_input::<f32, BF16>(n, s);
        let mut g = open(c, "f32_to_bf16", n);
        vcvt_and_memcpy::<f32, BF16>(&mut g, n, &src);
        contender(&mut g, "half", src, |s, d: &mut [half::bf16]| {
            d.convert_from_f32_slice(s)
        });
        #[cfg(target_arch = "x86_64")]
        bare::f32_to_bf16(&mut g, &src);
        g.finish();
    }
    {
        let s = seed("f64_to_bf16", n);
        let src = move || narrowing_input::<f64, BF16>(n, s);
        let mut g = open(c, "f64_to_bf16", n);
        vcvt_and_memcpy::<f64, BF16>(&mut g, n, &src);
        contender(&mut g, "half", src, |s, d: &mut [half::bf16]| {
            d.convert_from_f64_slice(s)
        });
        g.finish();
    }
    // F16 -> f32 / f64
    {
        let s = seed("f16_to_f32", n);
        let src = move || widening_input::<F16>(n, s);
        let mut g = open(c, "f16_to_f32", n);
        vcvt_and_memcpy::<F16, f32>(&mut g, n, &src);
        contender(
            &mut g,
            "half",
            || to_half(src()),
            |s, d: &mut [f32]| s.convert_to_f32_slice(d),
        );
        #[cfg(target_arch = "x86_64")]
        bare::f16_to_f32(&mut g, &|| f16_codes(src()));
        g.finish();
    }
    {
        let s = seed("f16_to_f64", n);
        let src = move || widening_input::<F16>(n, s);
        let mut g = open(c, "f16_to_f64", n);
        vcvt_and_memcpy::<F16, f64>(&mut g, n, &src);
        contender(
            &mut g,
            "half",
            || to_half(src()),
            |s, d: &mut [f64]| s.convert_to_f64_slice(d),
        );
        g.finish();
    }
    // BF16 -> f32 / f64
    {
        let s = seed("bf16_to_f32", n);
        let src = move || widening_input::<BF16>(n, s);
        let mut g = open(c, "bf16_to_f32", n);
        vcvt_and_memcpy::<BF16, f32>(&mut g, n, &src);
        contender(
            &mut g,
            "half",
            || to_half_bf16(src()),
            |s, d: &mut [f32]| s.convert_to_f32_slice(d),
        );
        let codes = || bf16_codes(src());
        contender(&mut g, "bare-shift", codes, |s, d: &mut [f32]| {
            // The whole BF16 -> f32 widening: the code is the top half of the f32.
            for (o, &x) in d.iter_mut().zip(s) {
                *o = f32::from_bits(u32::from(x) << 16);
            }
        });
        #[cfg(target_arch = "x86_64")]
        bare::bf16_to_f32(&mut g, &codes);
        g.finish();
    }
    {
        let s = seed("bf16_to_f64", n);
        let src = move || widening_input::<BF16>(n, s);
        let mut g = open(c, "bf16_to_f64", n);
        vcvt_and_memcpy::<BF16, f64>(&mut g, n, &src);
        contender(
            &mut g,
            "half",
            || to_half_bf16(src()),
            |s, d: &mut [f64]| s.convert_to_f64_slice(d),
        );
        g.finish();
    }
    // fp8, both directions, f32 and f64.
    float8_pairs!(&mut *c, n, F8E4M3, float8::F8E4M3, "f8e4m3");
    float8_pairs!(&mut *c, n, F8E5M2, float8::F8E5M2, "f8e5m2");
}

/// The newer pairs at one size: f32 to and from the formats of the formats issue (their
/// only peer is vcvt's own Scalar kernel, a per-element loop over the codec: no other crate
/// converts them), packed FP4, narrow <-> narrow pairs beside `half`/`float8` going through
/// f32 one element at a time, and `round_trip` beside the narrowing alone and `half`.
fn bench_new(c: &mut Criterion, n: usize) {
    macro_rules! both_ways {
        ($($t:ty: $name:literal),*) => {$(
            {
                let pair = concat!("f32_to_", $name);
                let s = seed(pair, n);
                let src = move || narrowing_input::<f32, $t>(n, s);
                let mut g = open(c, pair, n);
                vcvt_and_memcpy::<f32, $t>(&mut g, n, &src);
                g.finish();
                let pair = concat!($name, "_to_f32");
                let s = seed(pair, n);
                let src = move || widening_input::<$t>(n, s);
                let mut g = open(c, pair, n);
                vcvt_and_memcpy::<$t, f32>(&mut g, n, &src);
                if stringify!($t) == "F8E8M0" {
                    // The speed of light of E8M0 -> f32: the code as an f32 exponent, which
                    // is the whole conversion for codes 1..=254.
                    let codes = move || src().into_iter().map(<$t>::to_bits).collect::<Vec<u8>>();
                    contender(&mut g, "bare-shift", codes, |s: &[u8], d: &mut [f32]| {
                        for (o, &x) in d.iter_mut().zip(s) {
                            *o = f32::from_bits(u32::from(x) << 23);
                        }
                    });
                }
                g.finish();
            }
        )*};
    }
    both_ways!(F8E4M3FNUZ: "f8e4m3fnuz", F8E5M2FNUZ: "f8e5m2fnuz", F6E2M3: "f6e2m3",
        F6E3M2: "f6e3m2", F4E2M1: "f4e2m1", F8E8M0: "f8e8m0");

    // Packed FP4: n values, n / 2 bytes.
    {
        let s = seed("f32_to_f4e2m1x2", n);
        let mut g = open(c, "f32_to_f4e2m1x2", n);
        for b in Backend::available() {
            let mut bufs = None;
            g.bench_function(format!("vcvt-{b}"), |bench| {
                let (src, dst) = bufs.get_or_insert_with(|| {
                    let src = Aligned::new(narrowing_input::<f32, F4E2M1>(n, s));
                    (src, Aligned::new(vec![F4E2M1x2::ZERO; n / 2]))
                });
                bench.iter(|| {
                    vcvt::convert_slice_on(
                        b,
                        black_box(src.get()),
                        black_box(dst.get_mut()),
                        Options::new(),
                    )
                    .expect("available backend")
                });
            });
        }
        g.finish();
        let s = seed("f4e2m1x2_to_f32", n);
        let mut g = open(c, "f4e2m1x2_to_f32", n);
        for b in Backend::available() {
            let mut bufs = None;
            g.bench_function(format!("vcvt-{b}"), |bench| {
                let (src, dst) = bufs.get_or_insert_with(|| {
                    let mut rng = Rng(s);
                    let codes = (0..n / 2).map(|_| F4E2M1x2::from_bits(rng.next_u64() as u8));
                    (Aligned::new(codes.collect()), Aligned::new(vec![0f32; n]))
                });
                bench.iter(|| {
                    vcvt::convert_slice_on(
                        b,
                        black_box(src.get()),
                        black_box(dst.get_mut()),
                        Options::new(),
                    )
                    .expect("available backend")
                });
            });
        }
        g.finish();
    }

    // Narrow <-> narrow, beside the other crates' element-by-element route through f32.
    macro_rules! via {
        ($s:ty, $d:ty, $name:literal, $peer:expr) => {{
            let s = seed($name, n);
            let src = move || widening_input::<$s>(n, s);
            let mut g = open(c, $name, n);
            vcvt_and_memcpy::<$s, $d>(&mut g, n, &src);
            let peer: Option<fn(&[$s], &mut [$d])> = $peer;
            if let Some(peer) = peer {
                contender(&mut g, "half/float8 via f32", src, peer);
            }
            g.finish();
        }};
    }
    fn hb(x: BF16) -> half::bf16 {
        half::bf16::from_bits(x.to_bits())
    }
    fn hf(x: F16) -> half::f16 {
        half::f16::from_bits(x.to_bits())
    }
    via!(
        BF16,
        F16,
        "bf16_to_f16",
        Some(|s, d| for (o, &x) in d.iter_mut().zip(s) {
            *o = F16::from_bits(half::f16::from_f32(hb(x).to_f32()).to_bits());
        })
    );
    via!(
        F16,
        BF16,
        "f16_to_bf16",
        Some(|s, d| for (o, &x) in d.iter_mut().zip(s) {
            *o = BF16::from_bits(half::bf16::from_f32(hf(x).to_f32()).to_bits());
        })
    );
    via!(
        F8E4M3,
        BF16,
        "f8e4m3_to_bf16",
        Some(|s, d| for (o, &x) in d.iter_mut().zip(s) {
            let v = float8::F8E4M3::from_bits(x.to_bits()).to_f32();
            *o = BF16::from_bits(half::bf16::from_f32(v).to_bits());
        })
    );
    via!(
        F8E4M3,
        F16,
        "f8e4m3_to_f16",
        Some(|s, d| for (o, &x) in d.iter_mut().zip(s) {
            let v = float8::F8E4M3::from_bits(x.to_bits()).to_f32();
            *o = F16::from_bits(half::f16::from_f32(v).to_bits());
        })
    );
    via!(
        F8E5M2,
        BF16,
        "f8e5m2_to_bf16",
        Some(|s, d| for (o, &x) in d.iter_mut().zip(s) {
            let v = float8::F8E5M2::from_bits(x.to_bits()).to_f32();
            *o = BF16::from_bits(half::bf16::from_f32(v).to_bits());
        })
    );
    via!(
        F8E5M2,
        F16,
        "f8e5m2_to_f16",
        Some(|s, d| for (o, &x) in d.iter_mut().zip(s) {
            let v = float8::F8E5M2::from_bits(x.to_bits()).to_f32();
            *o = F16::from_bits(half::f16::from_f32(v).to_bits());
        })
    );
    via!(
        BF16,
        F8E4M3,
        "bf16_to_f8e4m3",
        Some(|s, d| for (o, &x) in d.iter_mut().zip(s) {
            *o = F8E4M3::from_bits(float8::F8E4M3::from_f32(hb(x).to_f32()).to_bits());
        })
    );
    via!(
        F16,
        F8E4M3,
        "f16_to_f8e4m3",
        Some(|s, d| for (o, &x) in d.iter_mut().zip(s) {
            *o = F8E4M3::from_bits(float8::F8E4M3::from_f32(hf(x).to_f32()).to_bits());
        })
    );
    via!(F4E2M1, BF16, "f4e2m1_to_bf16", None);
    via!(F6E2M3, BF16, "f6e2m3_to_bf16", None);
    via!(F8E8M0, BF16, "f8e8m0_to_bf16", None);
    via!(BF16, F4E2M1, "bf16_to_f4e2m1", None);

    // Round trips in place, beside the narrowing alone (same source) and `half`.
    macro_rules! round_trip {
        ($t:ty, $h:ty, $name:literal) => {{
            let s = seed($name, n);
            let src = move || narrowing_input::<f32, $t>(n, s);
            let mut g = open(c, $name, n);
            for b in Backend::available() {
                let mut filled = false;
                contender(
                    &mut g,
                    &format!("vcvt-{b}"),
                    src,
                    move |s, d: &mut [f32]| {
                        // The buffer starts as zeros: fill it with the input once; later
                        // calls round values already on the grid (the kernels are
                        // branch-free, so that costs the same).
                        if !filled {
                            d.copy_from_slice(s);
                            filled = true;
                        }
                        vcvt::round_trip_on::<$t, f32>(b, d, Options::new()).expect("available");
                    },
                );
                contender(
                    &mut g,
                    &format!("narrow-only-{b}"),
                    src,
                    move |s, d: &mut [$t]| {
                        vcvt::convert_slice_on(b, s, d, Options::new()).expect("available");
                    },
                );
            }
            contender(&mut g, "half", src, |_s, d: &mut [f32]| {
                for x in d.iter_mut() {
                    *x = <$h>::from_f32(*x).to_f32();
                }
            });
            g.finish();
        }};
    }
    round_trip!(BF16, half::bf16, "round_trip_bf16");
    round_trip!(F16, half::f16, "round_trip_f16");
}

fn benches(c: &mut Criterion) {
    for n in SIZES {
        bench_size(c, n);
    }
    for n in NEW_SIZES {
        bench_new(c, n);
    }
}

// ---------------------------------------------------------------------------------------
// Bare-instruction loops (x86-64).

#[cfg(target_arch = "x86_64")]
mod bare {
    //! The conversion instruction alone in a loop: no NaN, overflow or tail handling beyond
    //! a plain scalar remainder (the benchmark sizes are multiples of 16, so it never runs).
    //! Each `#[target_feature]` function is registered only after the CPU is seen to have
    //! its features.

    use std::arch::x86_64::*;

    use super::{Group, contender};

    /// Round to nearest even, exceptions suppressed (AVX-512 `{sae}` form).
    const ROUND: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    /// Round to nearest even (the F16C immediate has no suppress-exceptions bit).
    const ROUND_F16C: i32 = _MM_FROUND_TO_NEAREST_INT;

    fn f16_tail(s: &[f32], d: &mut [u16]) {
        for (o, &x) in d.iter_mut().zip(s) {
            *o = vcvt::F16::from_f32(x).to_bits();
        }
    }

    fn f16_widen_tail(s: &[u16], d: &mut [f32]) {
        for (o, &x) in d.iter_mut().zip(s) {
            *o = vcvt::F16::from_bits(x).to_f32();
        }
    }

    fn shift_tail(s: &[u16], d: &mut [f32]) {
        for (o, &x) in d.iter_mut().zip(s) {
            *o = f32::from_bits(u32::from(x) << 16);
        }
    }

    #[target_feature(enable = "avx512f")]
    fn vcvtps2ph_avx512(s: &[f32], d: &mut [u16]) {
        let mut sc = s.chunks_exact(16);
        let mut dc = d.chunks_exact_mut(16);
        for (i, o) in (&mut sc).zip(&mut dc) {
            // SAFETY: `i` and `o` hold exactly 16 elements: a 64-byte load and a 32-byte
            // store, both unaligned; the function's target feature covers the intrinsics.
            unsafe {
                let v = _mm512_loadu_ps(i.as_ptr());
                _mm256_storeu_si256(o.as_mut_ptr().cast(), _mm512_cvtps_ph::<ROUND>(v));
            }
        }
        f16_tail(sc.remainder(), dc.into_remainder());
    }

    #[target_feature(enable = "avx,f16c")]
    fn vcvtps2ph_f16c(s: &[f32], d: &mut [u16]) {
        let mut sc = s.chunks_exact(8);
        let mut dc = d.chunks_exact_mut(8);
        for (i, o) in (&mut sc).zip(&mut dc) {
            // SAFETY: 8 elements each: a 32-byte load and a 16-byte store, both unaligned.
            unsafe {
                let v = _mm256_loadu_ps(i.as_ptr());
                _mm_storeu_si128(o.as_mut_ptr().cast(), _mm256_cvtps_ph::<ROUND_F16C>(v));
            }
        }
        f16_tail(sc.remainder(), dc.into_remainder());
    }

    #[target_feature(enable = "avx512f")]
    fn vcvtph2ps_avx512(s: &[u16], d: &mut [f32]) {
        let mut sc = s.chunks_exact(16);
        let mut dc = d.chunks_exact_mut(16);
        for (i, o) in (&mut sc).zip(&mut dc) {
            // SAFETY: 16 elements each: a 32-byte load and a 64-byte store, both unaligned.
            unsafe {
                let h = _mm256_loadu_si256(i.as_ptr().cast());
                _mm512_storeu_ps(o.as_mut_ptr(), _mm512_cvtph_ps(h));
            }
        }
        f16_widen_tail(sc.remainder(), dc.into_remainder());
    }

    #[target_feature(enable = "avx,f16c")]
    fn vcvtph2ps_f16c(s: &[u16], d: &mut [f32]) {
        let mut sc = s.chunks_exact(8);
        let mut dc = d.chunks_exact_mut(8);
        for (i, o) in (&mut sc).zip(&mut dc) {
            // SAFETY: 8 elements each: a 16-byte load and a 32-byte store, both unaligned.
            unsafe {
                let h = _mm_loadu_si128(i.as_ptr().cast());
                _mm256_storeu_ps(o.as_mut_ptr(), _mm256_cvtph_ps(h));
            }
        }
        f16_widen_tail(sc.remainder(), dc.into_remainder());
    }

    #[target_feature(enable = "avx512f,avx512bf16")]
    fn vcvtneps2bf16_avx512(s: &[f32], d: &mut [u16]) {
        let mut sc = s.chunks_exact(16);
        let mut dc = d.chunks_exact_mut(16);
        for (i, o) in (&mut sc).zip(&mut dc) {
            // SAFETY: 16 elements each: a 64-byte load and a 32-byte store, both unaligned;
            // `__m256bh` and `__m256i` are both 32 plain bytes, so the transmute is a
            // reinterpretation.
            unsafe {
                let v = _mm512_loadu_ps(i.as_ptr());
                let b: __m256i = std::mem::transmute(_mm512_cvtneps_pbh(v));
                _mm256_storeu_si256(o.as_mut_ptr().cast(), b);
            }
        }
        for (o, &x) in dc.into_remainder().iter_mut().zip(sc.remainder()) {
            *o = vcvt::BF16::from_f32(x).to_bits();
        }
    }

    #[target_feature(enable = "avx512f")]
    fn shift_avx512(s: &[u16], d: &mut [f32]) {
        let mut sc = s.chunks_exact(16);
        let mut dc = d.chunks_exact_mut(16);
        for (i, o) in (&mut sc).zip(&mut dc) {
            // SAFETY: 16 elements each: a 32-byte load and a 64-byte store, both unaligned.
            unsafe {
                let h = _mm256_loadu_si256(i.as_ptr().cast());
                // Zero-extend each u16 to u32, then move it to the top half: the f32 bits.
                let w = _mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(h));
                _mm512_storeu_ps(o.as_mut_ptr(), _mm512_castsi512_ps(w));
            }
        }
        shift_tail(sc.remainder(), dc.into_remainder());
    }

    #[target_feature(enable = "avx2")]
    fn shift_avx2(s: &[u16], d: &mut [f32]) {
        let mut sc = s.chunks_exact(8);
        let mut dc = d.chunks_exact_mut(8);
        for (i, o) in (&mut sc).zip(&mut dc) {
            // SAFETY: 8 elements each: a 16-byte load and a 32-byte store, both unaligned.
            unsafe {
                let h = _mm_loadu_si128(i.as_ptr().cast());
                // Zero-extend each u16 to u32, then move it to the top half: the f32 bits.
                let w = _mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(h));
                _mm256_storeu_ps(o.as_mut_ptr(), _mm256_castsi256_ps(w));
            }
        }
        shift_tail(sc.remainder(), dc.into_remainder());
    }

    pub(super) fn f32_to_f16(g: &mut Group, src: &impl Fn() -> Vec<f32>) {
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            contender(g, "bare-vcvtps2ph-avx512", src, |s, d| unsafe {
                vcvtps2ph_avx512(s, d)
            });
        }
        if is_x86_feature_detected!("avx") && is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU has AVX and F16C (checked just above).
            contender(g, "bare-vcvtps2ph-f16c", src, |s, d| unsafe {
                vcvtps2ph_f16c(s, d)
            });
        }
    }

    pub(super) fn f16_to_f32(g: &mut Group, src: &impl Fn() -> Vec<u16>) {
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            contender(g, "bare-vcvtph2ps-avx512", src, |s, d| unsafe {
                vcvtph2ps_avx512(s, d)
            });
        }
        if is_x86_feature_detected!("avx") && is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU has AVX and F16C (checked just above).
            contender(g, "bare-vcvtph2ps-f16c", src, |s, d| unsafe {
                vcvtph2ps_f16c(s, d)
            });
        }
    }

    pub(super) fn f32_to_bf16(g: &mut Group, src: &impl Fn() -> Vec<f32>) {
        if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bf16") {
            // SAFETY: the CPU has AVX-512F and AVX512_BF16 (checked just above).
            contender(g, "bare-vcvtneps2bf16-avx512bf16", src, |s, d| unsafe {
                vcvtneps2bf16_avx512(s, d)
            });
        }
    }

    pub(super) fn bf16_to_f32(g: &mut Group, src: &impl Fn() -> Vec<u16>) {
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            contender(g, "bare-shift-avx512", src, |s, d| unsafe {
                shift_avx512(s, d)
            });
        }
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            contender(g, "bare-shift-avx2", src, |s, d| unsafe {
                shift_avx2(s, d)
            });
        }
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(250))
        .measurement_time(Duration::from_millis(800))
        .sample_size(20)
        .nresamples(10_000)
        .configure_from_args()
}

criterion_group! {
    name = convert;
    config = config();
    targets = benches
}
criterion_main!(convert);
