//! Conversion throughput of vcvt on this CPU, next to a memcpy and the `half` crate, after
//! checking every backend bit for bit against Scalar.
//!
//! ```text
//! cargo run --release --example throughput                    # the default run (seconds)
//! cargo run --release --example throughput -- --full          # every backend and pair (minutes)
//! cargo run --release --example throughput -- --quick         # --full without the DRAM-sized slices
//! cargo run --release --example throughput -- --backend avx2 --pair f32_to_f16
//! cargo run --release --example throughput -- --size 134217728  # one length of your choice
//! cargo run --release --example throughput -- --generic --size 1024  # overrides vs generic
//! cargo run --release --example throughput -- --yardsticks --size 1024  # pairs vs yardsticks
//! ```
//!
//! **The default run** checks every available backend against Scalar on every pair (below),
//! then times only the active backend ([`Backend::active`]) on the pairs most people convert:
//! f32 <-> F16, BF16, F8E4M3 and F4E2M1, F8E4M3 -> BF16 and MXFP4 (gpt-oss `*_blocks` +
//! `*_scales`) -> BF16, at 64 Ki elements (cache-sized) and 16 Mi elements (memory-sized on
//! most CPUs), beside a memcpy of the same bytes and, for F16 and BF16, the `half` crate's
//! slice conversions of the same input. It ends with a one-paragraph summary (CPU, backend,
//! load average, every figure) to paste into an issue. It takes 10–20 s after the build on a
//! 2-core x86-64 VM.
//!
//! **`--full`** (also implied by `--quick`, `--size`, `--backend` and `--pair`) prints the
//! complete tables: for each unpacked pair (f32 and f64 to and from each narrow format, every
//! narrow format to and from F16 and BF16, F16 <-> BF16), for `round_trip` through every
//! unpacked format and for packed FP4 (`f4e2m1x2`: f32, f64, F16 and BF16 to and from it), each available backend and three slice lengths (1 Ki elements: L1-sized, 64 Ki:
//! L2-sized, 16 Mi: DRAM-sized) it prints elements per nanosecond and GB/s, where GB/s counts the
//! bytes read from the source plus the bytes written to the destination.
//!
//! The memcpy reference is `copy_from_slice` of n × (source + destination element size) / 2
//! bytes, so that it reads and writes as many bytes as the conversion does, timed right
//! after each row's conversions (so that both see the same machine load); its GB/s counts
//! its reads plus its writes, like the conversions'. (Whether 16 Mi elements are
//! DRAM-sized depends on the last-level cache; `--size` picks any length.)
//!
//! Before any timing, every backend's output is compared bit for bit with
//! [`Backend::Scalar`] (the specification) on random values spread over the format's range,
//! specials (±0, ±Inf, NaNs with payloads, ±MAX and the overflow boundary), subnormals of
//! both formats, exact rounding ties and their neighbours, random bit patterns and, for
//! widening, every code of the narrow format; under every overflow policy, and on short
//! unaligned sub-slices; MXFP4 -> BF16 on every element byte with every scale byte and on
//! every length 1..=100. The timed buffers are checked too. Any mismatch aborts the run.
//!
//! **`--yardsticks`** times each of the pairs that have a speed target against a related
//! conversion (for example F8E4M3FNUZ → f32 against F8E5M2 → f32, the F16 and BF16 round trips
//! against their narrowings) beside that yardstick, in alternating batches on the active
//! backend (or each `--backend`), and prints the ratio of their rates with the target
//! ([`YARDSTICKS`]).
//!
//! Timing: a batch repeats the conversion until it has run for at least 20 ms; a
//! measurement is the median of 7 batches (5 for the DRAM and memory sizes), after a warm-up
//! of at least 5 ms.
//! Inputs are random finite values spread over the destination format's range (narrowing)
//! or random finite codes (widening), so the work is realistic, not a stream of zeros.

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write as _;
use std::mem::size_of;
use std::process::exit;
use std::time::{Duration, Instant};

use half::slice::HalfFloatSliceExt as _;
use vcvt::block::{Mx, MxElement, Shape};
use vcvt::{
    BF16, Backend, ConvertTo, Element, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E3M4, F8E4M3,
    F8E4M3B11FNUZ, F8E4M3FNUZ, F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, KernelInfo,
    Options, Overflow,
};

// ---------------------------------------------------------------------------------------
// Element traits used by the harness.
//
// Only the thin part of each pair that must name its types is generic ([`Pair`],
// [`RoundTrip`]: the conversion calls, the timed loops, the kernel queries); the inputs,
// the checks and the tables work on bytes and on the run-time descriptions below
// ([`WideFmt`], [`NarrowFmt`]), so that ~150 pairs do not each compile their own copy.

/// An element type: its name and raw bits (for bit-exact comparison).
trait Elem: Element + Default + bytemuck::Pod {
    const NAME: &'static str;
    fn raw(self) -> u64;
}

/// Packed FP4 (two values per byte): timed by [`packed_rows`] after the other pairs.
impl Elem for F4E2M1x2 {
    const NAME: &'static str = "f4e2m1x2";
    fn raw(self) -> u64 {
        self.to_bits().into()
    }
}

/// `f32` or `f64`: a wide source or destination.
trait Wide: Elem {
    /// Rounds an f64 to this type (exact for every value the harness passes, except the
    /// deliberately rounded random mantissas).
    fn from_f64(v: f64) -> Self;
    /// Mantissa bits (23 or 52).
    const MAN_BITS: u32;
    /// NaNs, infinities, subnormals and extremes of the wide type, as raw bits.
    fn special_bits() -> Vec<u64>;
}

/// A narrow format.
trait Narrow: Elem {
    /// Number of codes (256 or 65536).
    const CODES: u32;
    fn from_code(c: u32) -> Self;
    /// The nearest code (the format's default policies).
    fn from_f64(v: f64) -> Self;
    fn finite(self) -> bool;
    fn value(self) -> f64;
    fn max_value() -> f64;
    fn min_subnormal() -> f64;
}

impl Elem for f32 {
    const NAME: &'static str = "f32";
    fn raw(self) -> u64 {
        self.to_bits().into()
    }
}

impl Elem for f64 {
    const NAME: &'static str = "f64";
    fn raw(self) -> u64 {
        self.to_bits()
    }
}

impl Wide for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    const MAN_BITS: u32 = 23;
    fn special_bits() -> Vec<u64> {
        [
            0x0000_0000u32, // +0
            0x8000_0000,    // -0
            0x7F80_0000,    // +Inf
            0xFF80_0000,    // -Inf
            0x7FC0_0000,    // canonical quiet NaN
            0xFFC0_0001,    // negative quiet NaN, low payload bit only
            0x7F80_0001,    // signalling NaN, lowest payload bit
            0x7FA0_0000,    // signalling NaN, high payload bit
            0xFFBF_FFFF,    // negative signalling NaN, full payload
            0x7FFF_E000,    // quiet NaN, payload in the bits F16 keeps
            0x0000_0001,    // smallest f32 subnormal
            0x807F_FFFF,    // largest negative f32 subnormal
            0x0040_0000,    // mid subnormal
            0x0080_0000,    // smallest normal
            0x7F7F_FFFF,    // f32::MAX
            0xFF7F_FFFF,    // f32::MIN
            0x7F7F_8000,    // f32 value that rounds to the BF16 overflow boundary
        ]
        .iter()
        .map(|&b| u64::from(b))
        .collect()
    }
}

impl Wide for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    const MAN_BITS: u32 = 52;
    fn special_bits() -> Vec<u64> {
        vec![
            0x0000_0000_0000_0000, // +0
            0x8000_0000_0000_0000, // -0
            0x7FF0_0000_0000_0000, // +Inf
            0xFFF0_0000_0000_0000, // -Inf
            0x7FF8_0000_0000_0000, // canonical quiet NaN
            0xFFF8_0000_0000_0001, // negative quiet NaN, low payload bit only
            0x7FF0_0000_0000_0001, // signalling NaN, lowest payload bit
            0x7FF4_0000_0000_0000, // signalling NaN, high payload bit
            0xFFF7_FFFF_FFFF_FFFF, // negative signalling NaN, full payload
            0x0000_0000_0000_0001, // smallest f64 subnormal
            0x800F_FFFF_FFFF_FFFF, // largest negative f64 subnormal
            0x0010_0000_0000_0000, // smallest normal
            0x7FEF_FFFF_FFFF_FFFF, // f64::MAX
            0xFFEF_FFFF_FFFF_FFFF, // f64::MIN
            0x380F_FFFF_FFFF_FFFF, // just below the f32 normal range
            0x47EF_FFFF_F000_0000, // near f32::MAX (BF16 overflow boundary region)
        ]
    }
}

macro_rules! narrow_elem {
    ($t:ty, $name:literal, $bits:ty, $codes:expr) => {
        narrow_elem!($t, $name, $bits, $codes, <$t>::MIN_POSITIVE_SUBNORMAL);
    };
    // E8M0 has no subnormals: its smallest value stands in for them.
    ($t:ty, $name:literal, $bits:ty, $codes:expr, no_subnormals) => {
        narrow_elem!($t, $name, $bits, $codes, <$t>::MIN_POSITIVE);
    };
    ($t:ty, $name:literal, $bits:ty, $codes:expr, $smallest:expr) => {
        impl Elem for $t {
            const NAME: &'static str = $name;
            fn raw(self) -> u64 {
                self.to_bits().into()
            }
        }
        impl Narrow for $t {
            const CODES: u32 = $codes;
            fn from_code(c: u32) -> Self {
                <$t>::from_bits(c as $bits)
            }
            fn from_f64(v: f64) -> Self {
                <$t>::from_f64(v)
            }
            fn finite(self) -> bool {
                self.is_finite()
            }
            fn value(self) -> f64 {
                self.to_f64()
            }
            fn max_value() -> f64 {
                <$t>::MAX.to_f64()
            }
            fn min_subnormal() -> f64 {
                $smallest.to_f64()
            }
        }
    };
}
narrow_elem!(F16, "f16", u16, 1 << 16);
narrow_elem!(BF16, "bf16", u16, 1 << 16);
narrow_elem!(F8E4M3, "f8e4m3", u8, 1 << 8);
narrow_elem!(F8E5M2, "f8e5m2", u8, 1 << 8);
narrow_elem!(F8E4M3FNUZ, "f8e4m3fnuz", u8, 1 << 8);
narrow_elem!(F8E5M2FNUZ, "f8e5m2fnuz", u8, 1 << 8);
narrow_elem!(F6E2M3, "f6e2m3", u8, 1 << 6);
narrow_elem!(F6E3M2, "f6e3m2", u8, 1 << 6);
narrow_elem!(F4E2M1, "f4e2m1", u8, 1 << 4);
narrow_elem!(F8E8M0, "f8e8m0", u8, 1 << 8, no_subnormals);
narrow_elem!(F8E3M4, "f8e3m4", u8, 1 << 8);
narrow_elem!(F8E4M3IEEE, "f8e4m3ieee", u8, 1 << 8);
narrow_elem!(F8E4M3B11FNUZ, "f8e4m3b11fnuz", u8, 1 << 8);
narrow_elem!(F8E5M3FNU, "f8e5m3fnu", u8, 1 << 8);

/// `f32` or `f64` at run time: what the (non-generic) input generators need of it.
#[derive(Clone, Copy)]
struct WideFmt {
    /// Mantissa bits (23 or 52).
    man_bits: u32,
    /// [`Wide::from_f64`], as raw bits.
    from_f64: fn(f64) -> u64,
    special_bits: fn() -> Vec<u64>,
}

impl WideFmt {
    fn of<W: Wide>() -> WideFmt {
        WideFmt {
            man_bits: W::MAN_BITS,
            from_f64: |v| W::from_f64(v).raw(),
            special_bits: W::special_bits,
        }
    }
    /// `Wide::from_raw` of `bits`, as raw bits (an f32 keeps the low 32).
    fn raw(&self, bits: u64) -> u64 {
        if self.man_bits == 23 {
            u64::from(bits as u32)
        } else {
            bits
        }
    }
}

/// A narrow format at run time: what the (non-generic) input generators need of it. Codes
/// are raw bits.
#[derive(Clone, Copy)]
struct NarrowFmt {
    codes: u32,
    value: fn(u32) -> f64,
    finite: fn(u32) -> bool,
    /// [`Narrow::from_f64`], as a code.
    from_f64: fn(f64) -> u64,
    max_value: f64,
    min_subnormal: f64,
}

impl NarrowFmt {
    fn of<N: Narrow>() -> NarrowFmt {
        NarrowFmt {
            codes: N::CODES,
            value: |c| N::from_code(c).value(),
            finite: |c| N::from_code(c).finite(),
            from_f64: |v| N::from_f64(v).raw(),
            max_value: N::max_value(),
            min_subnormal: N::min_subnormal(),
        }
    }
}

/// An element type's name and size, for the code that works on bytes.
#[derive(Clone, Copy)]
struct Ty {
    name: &'static str,
    size: usize,
}

impl Ty {
    fn of<T: Elem>() -> Ty {
        Ty {
            name: T::NAME,
            size: size_of::<T>(),
        }
    }
}

/// The raw bits of element `i` of `bytes`, a slice of `size`-byte elements (every element
/// type is its bits in native byte order).
fn raw_at(bytes: &[u8], size: usize, i: usize) -> u64 {
    let b = &bytes[i * size..(i + 1) * size];
    match size {
        1 => u64::from(b[0]),
        2 => u64::from(u16::from_ne_bytes([b[0], b[1]])),
        4 => u64::from(u32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
        8 => u64::from_ne_bytes(b.try_into().expect("8 bytes")),
        _ => unreachable!("element size {size}"),
    }
}

/// Elements as bytes, in an allocation aligned for every element type (8 bytes), so that
/// the typed code can view them as `&[S]` or `&mut [D]`.
struct Buf {
    words: Vec<u64>,
    len: usize,
}

impl Buf {
    /// `bytes` zero bytes (zero bits are every element type's default).
    fn zeroed(bytes: usize) -> Buf {
        Buf {
            words: vec![0; bytes.div_ceil(8)],
            len: bytes,
        }
    }
    /// `n` elements of `size` bytes, each the raw bits `next` returns.
    fn from_bits(size: usize, n: usize, next: &mut dyn FnMut() -> u64) -> Buf {
        let mut buf = Buf::zeroed(n * size);
        for e in buf.bytes_mut().chunks_exact_mut(size) {
            let bits = next();
            match size {
                1 => e[0] = bits as u8,
                2 => e.copy_from_slice(&(bits as u16).to_ne_bytes()),
                4 => e.copy_from_slice(&(bits as u32).to_ne_bytes()),
                8 => e.copy_from_slice(&bits.to_ne_bytes()),
                _ => unreachable!("element size {size}"),
            }
        }
        buf
    }
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.words)[..self.len]
    }
}
// ---------------------------------------------------------------------------------------
// Random inputs.

/// SplitMix64: tiny, fast and good enough for test inputs; seeded per pair so that runs
/// are repeatable.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i32, hi: i32) -> i32 {
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i32
    }
}

/// 2^e as an f64 (exact; `e` within the normal f64 range).
fn pow2(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// A random finite value for narrowing to `n`: random sign, a binade chosen uniformly from
/// one below the smallest subnormal of `n` up to its top binade, a random full-precision
/// mantissa; magnitude at most `n`'s largest finite value. (The caller rounds it to the
/// source type: for f32 sources that is part of generating the input, not of the
/// conversion under test.)
fn random_narrowing_value(rng: &mut Rng, n: &NarrowFmt) -> f64 {
    let lo = n.min_subnormal.log2() as i32 - 1;
    let hi = n.max_value.log2().floor() as i32;
    loop {
        let r = rng.next_u64();
        // 52 random mantissa bits.
        let m = 1.0 + (r >> 12) as f64 / pow2(52);
        let v = m * pow2(rng.range(lo, hi));
        if v <= n.max_value {
            return if r & 1 == 1 { -v } else { v };
        }
    }
}

/// A random finite code of `n`.
fn random_code(rng: &mut Rng, n: &NarrowFmt) -> u64 {
    loop {
        let c = rng.next_u64() as u32 & (n.codes - 1);
        if (n.finite)(c) {
            return c.into();
        }
    }
}

/// How the timed inputs of a pair are drawn, as raw bits of its source type.
#[derive(Clone, Copy)]
enum Gen {
    /// f32 or f64 values spread over the narrow format's range ([`random_narrowing_value`]).
    Narrowing(WideFmt, NarrowFmt),
    /// The same for a narrow source (F16 or BF16 to a smaller format): values in the second
    /// format's range, each the nearest value of the first.
    Rounded(NarrowFmt, NarrowFmt),
    /// Random finite codes of a narrow source.
    Codes(NarrowFmt),
}

impl Gen {
    fn next(&self, rng: &mut Rng) -> u64 {
        match self {
            Gen::Narrowing(w, n) => (w.from_f64)(random_narrowing_value(rng, n)),
            Gen::Rounded(s, d) => (s.from_f64)(random_narrowing_value(rng, d)),
            Gen::Codes(n) => random_code(rng, n),
        }
    }

    /// `n` inputs of `size` bytes each, from the pair's seed and the length.
    fn buf(&self, size: usize, n: usize, seed: u64) -> Buf {
        let mut rng = Rng::new(seed ^ n as u64);
        Buf::from_bits(size, n, &mut || self.next(&mut rng))
    }

    /// [`Gen::buf`] of an f32 source, as f32 values.
    fn f32s(&self, n: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng::new(seed ^ n as u64);
        (0..n)
            .map(|_| f32::from_bits(self.next(&mut rng) as u32))
            .collect()
    }
}

/// The check inputs for narrowing `w -> n`, as raw bits of `w`.
fn narrowing_check_input(rng: &mut Rng, w: &WideFmt, n: &NarrowFmt) -> Vec<u64> {
    let mut v: Vec<u64> = (0..4096)
        .map(|_| (w.from_f64)(random_narrowing_value(rng, n)))
        .collect();
    v.extend((w.special_bits)().into_iter().map(|b| w.raw(b)));
    // Boundaries of n: its extremes, the overflow tie and its neighbours, subnormal ties.
    let max = n.max_value;
    let sub = n.min_subnormal;
    // The gap below MAX: MAX minus the next smaller finite value.
    let top_ulp = {
        let max_code = (0..n.codes / 2)
            .rev()
            .find(|&k| (n.finite)(k))
            .expect("a format has finite codes");
        max - (n.value)(max_code - 1)
    };
    for x in [
        max,
        max + top_ulp / 2.0,
        max + top_ulp / 4.0,
        max + top_ulp * 0.75,
        max + top_ulp,
        max * 2.0,
        sub,
        sub / 2.0,
        sub / 4.0,
        sub * 0.75,
        sub * 1.5,
        sub * 2.5,
        1.0,
        65520.0,
        464.0,
        61440.0,
    ] {
        v.push((w.from_f64)(x));
        v.push((w.from_f64)(-x));
    }
    // Exact ties between two consecutive finite codes, and the wide values next to them
    // (which must not round like the tie).
    for _ in 0..2048 {
        let c = random_code(rng, n) as u32;
        let sign = n.codes / 2;
        // Skip pairs that cross the sign bit or reach a non-finite code.
        if c + 1 >= n.codes || (c + 1) & sign != c & sign || !(n.finite)(c + 1) {
            continue;
        }
        let mid = ((n.value)(c) + (n.value)(c + 1)) / 2.0;
        let x = (w.from_f64)(mid);
        v.push(x);
        v.push(w.raw(x.wrapping_add(1)));
        v.push(w.raw(x.wrapping_sub(1)));
    }
    // Random bit patterns: every exponent of the wide type, including NaNs and subnormals.
    for _ in 0..2048 {
        let r = rng.next_u64();
        v.push(w.raw(if w.man_bits == 23 { r >> 32 } else { r }));
    }
    v
}

/// The check inputs for widening from `n`: every code, then random codes.
fn widening_check_input(rng: &mut Rng, n: &NarrowFmt) -> Vec<u64> {
    let mut v: Vec<u64> = (0..u64::from(n.codes)).collect();
    v.extend((0..1000).map(|_| u64::from(rng.next_u64() as u32 & (n.codes - 1))));
    v
}

/// Raw bits as a buffer of `size`-byte elements.
fn bits_buf(size: usize, bits: &[u64]) -> Buf {
    let mut it = bits.iter();
    Buf::from_bits(size, bits.len(), &mut || {
        *it.next().expect("one per element")
    })
}
// ---------------------------------------------------------------------------------------
// Timing.

#[derive(Clone, Copy)]
struct Budget {
    batches: usize,
    batch: Duration,
}

/// Something to time. Implemented for every `FnMut()`, generically, so that the loops that
/// call it (the calibration and the timed batch) call the closure directly; [`measure`] and
/// [`measure2`] reach them through `dyn`, once per batch, outside the timed region.
trait Bench {
    /// Calls per batch of at least `batch`: a warm-up and calibration that runs for at least
    /// 5 ms (at least once).
    fn reps(&mut self, batch: Duration) -> u64;
    /// `reps` calls in a row: nanoseconds per call.
    fn batch(&mut self, reps: u64) -> f64;
}

impl<F: FnMut()> Bench for F {
    fn reps(&mut self, batch: Duration) -> u64 {
        let start = Instant::now();
        let mut calls = 0u64;
        while calls == 0 || start.elapsed() < Duration::from_millis(5) {
            self();
            calls += 1;
        }
        reps_per_batch(start.elapsed(), calls, batch)
    }
    fn batch(&mut self, reps: u64) -> f64 {
        let t = Instant::now();
        for _ in 0..reps {
            self();
        }
        t.elapsed().as_secs_f64() * 1e9 / reps as f64
    }
}

/// Calls per batch of at least `batch`, after `calls` calls took `elapsed` (the
/// non-generic end of [`Bench::reps`]).
fn reps_per_batch(elapsed: Duration, calls: u64, batch: Duration) -> u64 {
    let per_call = elapsed.as_secs_f64() / calls as f64;
    ((batch.as_secs_f64() / per_call).ceil() as u64).max(1)
}

/// Median time of one call of `f`, in nanoseconds.
fn measure(budget: Budget, f: &mut dyn Bench) -> f64 {
    let reps = f.reps(budget.batch);
    let mut times: Vec<f64> = (0..budget.batches).map(|_| f.batch(reps)).collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Median times of one call of `f` and of `g`, in nanoseconds, their batches alternating
/// (so that both see the same machine load).
fn measure2(budget: Budget, f: &mut dyn Bench, g: &mut dyn Bench) -> (f64, f64) {
    let (rf, rg) = (f.reps(budget.batch), g.reps(budget.batch));
    let (mut tf, mut tg) = (Vec::new(), Vec::new());
    for _ in 0..budget.batches {
        tf.push(f.batch(rf));
        tg.push(g.batch(rg));
    }
    tf.sort_by(f64::total_cmp);
    tg.sort_by(f64::total_cmp);
    (tf[tf.len() / 2], tg[tg.len() / 2])
}

// ---------------------------------------------------------------------------------------
// The typed part of a pair.

/// Converts `src` on `backend`; panics only on a harness bug (lengths, availability).
fn convert_on<S: ConvertTo<D>, D: Element>(b: Backend, src: &[S], dst: &mut [D], o: Options) {
    vcvt::convert_slice_on(b, src, dst, o).expect("backend is available and lengths match");
}

/// The part of a pair `S -> D` that depends on its types, as plain functions on byte slices
/// (elements of `S` and of `D`, in [`Buf`]s): the conversion, the timed loops (which view
/// the bytes as `&[S]` and `&mut [D]` once, before timing, so that the timed closure calls
/// `vcvt::convert_slice_on::<S, D>` as a caller would) and the kernel queries. Everything
/// else works on these.
#[derive(Clone, Copy)]
struct Pair {
    src: Ty,
    dst: Ty,
    convert: fn(Backend, &[u8], &mut [u8], Options),
    /// `vcvt::convert_slice_generic_on` (the backend's generic kernel), default options.
    convert_generic: fn(Backend, &[u8], &mut [u8]),
    /// Median ns of one conversion (default options) on the backend.
    time: fn(Budget, Backend, &[u8], &mut [u8]) -> f64,
    /// Median ns of the pair's kernel and of the generic kernel, alternating.
    time_generic: TimeGeneric,
    kernel: fn(Backend) -> KernelInfo,
    /// `kernel_id` and `generic_kernel_id`.
    kernel_ids: fn(Backend) -> KernelIds,
}

/// [`Pair::time_generic`]'s type.
type TimeGeneric = fn(Budget, Backend, &[u8], &mut [u8]) -> (f64, f64);
/// `Backend::kernel_id` and `Backend::generic_kernel_id` of a pair.
type KernelIds = ((usize, usize), Option<(usize, usize)>);

impl Pair {
    fn of<S: Elem + ConvertTo<D>, D: Elem>() -> Pair {
        Pair {
            src: Ty::of::<S>(),
            dst: Ty::of::<D>(),
            // Functions rather than closures: a closure cast to a function pointer costs
            // a shim per pair.
            convert: convert_pair::<S, D>,
            convert_generic: convert_generic_pair::<S, D>,
            time: time_pair::<S, D>,
            time_generic: time_generic_pair::<S, D>,
            kernel: Backend::kernel::<S, D>,
            kernel_ids: kernel_ids::<S, D>,
        }
    }
    fn name(&self) -> String {
        format!("{}_to_{}", self.src.name, self.dst.name)
    }
}

fn cast<T: bytemuck::Pod>(bytes: &[u8]) -> &[T] {
    bytemuck::cast_slice(bytes)
}

fn cast_mut<T: bytemuck::Pod>(bytes: &mut [u8]) -> &mut [T] {
    bytemuck::cast_slice_mut(bytes)
}

/// [`Pair::convert`].
fn convert_pair<S: Elem + ConvertTo<D>, D: Elem>(
    b: Backend,
    src: &[u8],
    dst: &mut [u8],
    o: Options,
) {
    convert_on::<S, D>(b, cast(src), cast_mut(dst), o);
}

/// [`Pair::convert_generic`].
fn convert_generic_pair<S: Elem + ConvertTo<D>, D: Elem>(b: Backend, src: &[u8], dst: &mut [u8]) {
    vcvt::convert_slice_generic_on::<S, D>(b, cast(src), cast_mut(dst), Options::new())
        .expect("the backend keeps a generic table");
}

/// [`Pair::kernel_ids`].
fn kernel_ids<S: Elem + ConvertTo<D>, D: Elem>(b: Backend) -> KernelIds {
    (b.kernel_id::<S, D>(), b.generic_kernel_id::<S, D>())
}

/// [`Pair::time`].
fn time_pair<S: Elem + ConvertTo<D>, D: Elem>(
    budget: Budget,
    b: Backend,
    src: &[u8],
    dst: &mut [u8],
) -> f64 {
    let (src, dst) = (cast::<S>(src), cast_mut::<D>(dst));
    measure(budget, &mut || {
        convert_on(b, black_box(src), black_box(&mut dst[..]), Options::new());
    })
}

/// [`Pair::time_generic`].
fn time_generic_pair<S: Elem + ConvertTo<D>, D: Elem>(
    budget: Budget,
    b: Backend,
    src: &[u8],
    dst: &mut [u8],
) -> (f64, f64) {
    let (src, dst) = (cast::<S>(src), cast_mut::<D>(dst));
    // Both write the same buffer, so that neither gains from its alignment.
    let out = std::cell::RefCell::new(dst);
    measure2(
        budget,
        &mut || {
            let mut d = out.borrow_mut();
            convert_on(b, black_box(src), black_box(&mut d[..]), Options::new())
        },
        &mut || {
            let mut d = out.borrow_mut();
            vcvt::convert_slice_generic_on(b, black_box(src), black_box(&mut d[..]), Options::new())
                .expect("the backend keeps a generic table")
        },
    )
}

/// The part of `vcvt::round_trip` through `N` on f32 that depends on `N` (see [`Pair`]).
#[derive(Clone, Copy)]
struct RoundTrip {
    name: &'static str,
    narrow: NarrowFmt,
    run: fn(Backend, &mut [f32], Options),
    run_generic: fn(Backend, &mut [f32]),
    time: fn(Budget, Backend, &mut [f32]) -> f64,
    time_generic: fn(Budget, Backend, &mut [f32]) -> (f64, f64),
    kernel: fn(Backend) -> KernelInfo,
    kernel_ids: fn(Backend) -> (usize, Option<usize>),
}

impl RoundTrip {
    fn of<N: Narrow + ConvertTo<f32>>() -> RoundTrip
    where
        f32: ConvertTo<N>,
    {
        RoundTrip {
            name: N::NAME,
            narrow: NarrowFmt::of::<N>(),
            run: |b, x, o| {
                vcvt::round_trip_on::<N, f32>(b, x, o).expect("backend is available");
            },
            run_generic: |b, x| {
                vcvt::round_trip_generic_on::<N, f32>(b, x, Options::new())
                    .expect("the backend keeps a generic table")
            },
            time: |budget, b, x| {
                // Later calls see values already on N's grid: the kernels are branch-free,
                // so the time does not depend on that.
                measure(budget, &mut || {
                    vcvt::round_trip_on::<N, f32>(b, black_box(&mut x[..]), Options::new())
                        .expect("backend is available");
                })
            },
            time_generic: |budget, b, x| {
                // Both work on the same buffer, so that neither gains from its alignment.
                let buf = std::cell::RefCell::new(x);
                measure2(
                    budget,
                    &mut || {
                        let mut x = buf.borrow_mut();
                        vcvt::round_trip_on::<N, f32>(b, black_box(&mut x[..]), Options::new())
                            .expect("backend is available")
                    },
                    &mut || {
                        let mut x = buf.borrow_mut();
                        vcvt::round_trip_generic_on::<N, f32>(
                            b,
                            black_box(&mut x[..]),
                            Options::new(),
                        )
                        .expect("the backend keeps a generic table")
                    },
                )
            },
            kernel: |b| b.round_trip_kernel::<N>(),
            kernel_ids: |b| b.round_trip_kernel_ids::<N>(),
        }
    }
}
// ---------------------------------------------------------------------------------------
// Checking against Scalar.

fn policies() -> [(Options, &'static str); 3] {
    [
        (Options::new(), "default"),
        (Options::new().overflow(Overflow::Saturate), "Saturate"),
        (
            Options::new().overflow(Overflow::NonSaturating),
            "NonSaturating",
        ),
    ]
}

/// Aborts the program if `got` differs from `want` anywhere: `src` holds elements of `s`,
/// `want` and `got` elements of `d`.
fn require_same(
    what: &str,
    backend: Backend,
    (s, d): (Ty, Ty),
    src: &[u8],
    want: &[u8],
    got: &[u8],
) {
    if want == got {
        return;
    }
    let n = want.len() / d.size;
    let bad: Vec<usize> = (0..n)
        .filter(|&i| raw_at(want, d.size, i) != raw_at(got, d.size, i))
        .collect();
    eprintln!();
    eprintln!(
        "MISMATCH: backend {backend} differs from scalar on {} of {} elements ({what}, {} -> {}):",
        bad.len(),
        n,
        s.name,
        d.name
    );
    // A packed FP4 source holds two values per element: value i is in element i / 2.
    let per_src = if src.len() / s.size < n { 2 } else { 1 };
    for &i in bad.iter().take(10) {
        eprintln!(
            "  [{i}] src bits {:#x}: scalar {:#x}, {backend} {:#x}",
            raw_at(src, s.size, i / per_src),
            raw_at(want, d.size, i),
            raw_at(got, d.size, i)
        );
    }
    eprintln!("aborting: a backend that disagrees with the specification must not be timed");
    exit(1);
}

/// Compares `backend` with Scalar on `input` under every overflow policy, whole and on
/// short sub-slices at every offset 0..4 (tails, unaligned starts).
fn check_backend(p: &Pair, backend: Backend, input: &[u8]) {
    let (ss, ds) = (p.src.size, p.dst.size);
    let n = input.len() / ss;
    let mut want = Buf::zeroed(n * ds);
    let mut got = Buf::zeroed(n * ds);
    let tys = (p.src, p.dst);
    for (o, name) in policies() {
        (p.convert)(Backend::Scalar, input, want.bytes_mut(), o);
        (p.convert)(backend, input, got.bytes_mut(), o);
        require_same(
            &format!("check input, overflow {name}"),
            backend,
            tys,
            input,
            want.bytes(),
            got.bytes(),
        );
        for off in 0..4 {
            for len in 0..=70.min(n - off) {
                let src = &input[off * ss..(off + len) * ss];
                let (w, g) = (..len * ds, off * ds..(off + len) * ds);
                (p.convert)(Backend::Scalar, src, &mut want.bytes_mut()[w], o);
                (p.convert)(backend, src, &mut got.bytes_mut()[g.clone()], o);
                require_same(
                    &format!("sub-slice {off}..{}, overflow {name}", off + len),
                    backend,
                    tys,
                    src,
                    &want.bytes()[w],
                    &got.bytes()[g],
                );
            }
        }
    }
}
// ---------------------------------------------------------------------------------------
// The run.

struct Size {
    label: &'static str,
    n: usize,
    budget: Budget,
}

struct Config {
    sizes: Vec<Size>,
    /// Backends to time (Scalar is still used as the reference).
    backends: Vec<Backend>,
    /// Substrings of pair names to run; empty = all.
    pairs: Vec<String>,
    /// The complete tables (`--full`, or any of the options that select their rows, columns
    /// and lengths); otherwise the default run's short tables.
    full: bool,
    /// `--generic`: each override beside its tier's generic kernel ([`generic_row`]).
    generic: bool,
    /// `--yardsticks`: the pairs with a speed target beside their yardsticks
    /// ([`yardstick_rows`]).
    yardsticks: bool,
}

/// Median time of a memcpy (`copy_from_slice`) of `bytes` bytes, in nanoseconds.
///
/// Source and destination sit in one allocation, the destination 2 KiB past a 4 KiB
/// boundary from the source: separately allocated buffers of some sizes start at the same
/// offset within a page, and a copy between such buffers can run many times slower on some
/// CPUs (this AMD Zen 3 VM copied 4 KiB at under 1 el/ns that way), which is not a fair
/// reference.
fn memcpy_ns(bytes: usize, budget: Budget) -> f64 {
    let gap = bytes.next_multiple_of(4096) + 2048;
    let mut buf: Vec<u8> = (0..gap + bytes).map(|i| (i * 7 + 3) as u8).collect();
    let (src, dst) = buf.split_at_mut(gap);
    let src = &src[..bytes];
    measure(budget, &mut || {
        black_box(&mut dst[..]).copy_from_slice(black_box(src));
    })
}

/// Formats a number with about three significant digits.
fn num(x: f64) -> String {
    // Thresholds just below each power of ten, so that 0.9996 prints as "1.00", not "1.000".
    if x >= 99.95 {
        format!("{x:.0}")
    } else if x >= 9.995 {
        format!("{x:.1}")
    } else if x >= 0.9995 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

const PAIR_W: usize = 20;
const COL_W: usize = 16;

fn print_header(cfg: &Config, size: &Size) {
    println!();
    println!(
        "{} slices: {} elements  (median of {} batches of >= {} ms)",
        size.label,
        size.n,
        size.budget.batches,
        size.budget.batch.as_millis()
    );
    let mut l1 = format!("{:<PAIR_W$}", "pair");
    let mut l2 = format!("{:<PAIR_W$}", "");
    let active = Backend::active();
    let names = cfg.backends.iter().map(|&b| {
        if b == active {
            format!("{b}*")
        } else {
            b.name().to_string()
        }
    });
    for b in names.chain(["memcpy".to_string()]) {
        let _ = write!(l1, "{:>COL_W$}", b);
        let _ = write!(l2, "{:>COL_W$}", "el/ns   GB/s");
    }
    let _ = write!(l1, "{:>9}", "best/");
    let _ = write!(l2, "{:>9}", "memcpy");
    println!("{l1}");
    println!("{l2}");
}

/// Times pair `p` on `n` inputs drawn by `draw` (a row of the tables).
fn run_pair(cfg: &Config, size: &Size, seed: u64, p: &Pair, draw: Gen) {
    let name = p.name();
    let n = size.n;
    let src = draw.buf(p.src.size, n, seed);
    let mut want = Buf::zeroed(n * p.dst.size);
    (p.convert)(
        Backend::Scalar,
        src.bytes(),
        want.bytes_mut(),
        Options::new(),
    );
    if cfg.generic {
        generic_row(cfg, size, &name, p, src.bytes(), want.bytes());
        return;
    }
    timed_row(cfg, size, &name, p, src.bytes(), want.bytes());
}

/// One row of the timed tables: `src` converted on each timed backend (checked against
/// `want`, Scalar's output), el/ns and GB/s, then a memcpy of the same bytes. Its el/ns
/// counts values: one per element, two per byte of a packed FP4 side.
fn timed_row(cfg: &Config, size: &Size, name: &str, p: &Pair, src: &[u8], want: &[u8]) {
    let n = (src.len() / p.src.size).max(want.len() / p.dst.size);
    let bytes = src.len() + want.len();
    let bytes_moved = bytes as f64;
    let mut line = format!("{name:<PAIR_W$}");
    let mut best = 0.0f64;
    let mut dst = Buf::zeroed(want.len());
    for &b in &cfg.backends {
        // The timed buffers themselves must match Scalar.
        dst.bytes_mut().fill(0);
        (p.convert)(b, src, dst.bytes_mut(), Options::new());
        require_same("timed input", b, (p.src, p.dst), src, want, dst.bytes());
        let ns = (p.time)(size.budget, b, src, dst.bytes_mut());
        let gbs = bytes_moved / ns;
        best = best.max(gbs);
        let mark = kernel_mark(b, (p.kernel)(b));
        let _ = write!(
            line,
            "{:>COL_W$}",
            format!("{:>6} {:>6}{mark}", num(n as f64 / ns), num(gbs))
        );
    }
    drop(dst);
    // Measured right after the conversions, so that both see the same machine load.
    let mc = memcpy_ns(bytes / 2, size.budget);
    let mc_gbs = bytes_moved / mc;
    let _ = write!(
        line,
        "{:>COL_W$}{:>9}",
        format!("{:>6} {:>6}", num(n as f64 / mc), num(mc_gbs)),
        format!("{:.2}", best / mc_gbs)
    );
    println!("{line}");
}

/// `--generic`: for each timed backend that keeps a table of generic kernels, the pair's
/// kernel (an override where it differs) beside the generic kernel of the same tier, timed
/// in alternating batches, and the ratio of their rates. `=` marks a pair that runs the
/// generic kernel itself (nothing to compare).
fn generic_row(cfg: &Config, size: &Size, name: &str, p: &Pair, src: &[u8], want: &[u8]) {
    // Values: one per element, two per byte of a packed FP4 side.
    let n = (src.len() / p.src.size).max(want.len() / p.dst.size);
    let mut line = format!("{name:<PAIR_W$}");
    let mut dst = Buf::zeroed(want.len());
    for &b in &cfg.backends {
        let (id, Some(g)) = (p.kernel_ids)(b) else {
            continue;
        };
        if g == id {
            let _ = write!(line, "{:>COL_W$}{:>COL_W$}{:>9}", b.name(), "=", "");
            continue;
        }
        dst.bytes_mut().fill(0);
        (p.convert_generic)(b, src, dst.bytes_mut());
        require_same("generic kernel", b, (p.src, p.dst), src, want, dst.bytes());
        let (t_table, t_generic) = (p.time_generic)(size.budget, b, src, dst.bytes_mut());
        generic_cells(&mut line, b, n, t_table, t_generic);
    }
    println!("{line}");
}

/// The cells of one backend in a `--generic` row.
fn generic_cells(line: &mut String, b: Backend, n: usize, t_table: f64, t_generic: f64) {
    let _ = write!(
        line,
        "{:>COL_W$}{:>COL_W$}{:>9}",
        format!("{} {:>6}", b.name(), num(n as f64 / t_table)),
        format!("generic {:>6}", num(n as f64 / t_generic)),
        format!("{:.2}", t_generic / t_table)
    );
}

/// [`generic_row`] for the round trip.
fn generic_round_trip_row(
    cfg: &Config,
    size: &Size,
    name: &str,
    rt: &RoundTrip,
    src: &[f32],
    want: &[f32],
) {
    let n = src.len();
    let mut line = format!("{name:<PAIR_W$}");
    for &b in &cfg.backends {
        let (id, Some(g)) = (rt.kernel_ids)(b) else {
            continue;
        };
        if g == id {
            let _ = write!(line, "{:>COL_W$}{:>COL_W$}{:>9}", b.name(), "=", "");
            continue;
        }
        let mut x = src.to_vec();
        (rt.run_generic)(b, &mut x);
        require_same_f32("generic kernel", b, src, want, &x);
        let (t_table, t_generic) = (rt.time_generic)(size.budget, b, &mut x);
        generic_cells(&mut line, b, n, t_table, t_generic);
    }
    println!("{line}");
}

/// [`require_same`] for f32 in and out (the round trips).
fn require_same_f32(what: &str, backend: Backend, src: &[f32], want: &[f32], got: &[f32]) {
    let f32 = Ty::of::<f32>();
    require_same(
        what,
        backend,
        (f32, f32),
        bytemuck::cast_slice(src),
        bytemuck::cast_slice(want),
        bytemuck::cast_slice(got),
    );
}

/// The rows of the packed FP4 pairs, timed (or, with `--generic`, beside the generic
/// kernel) after the other pairs: their slices hold two values per byte on the packed side,
/// so they do not fit the pair list's one-element-per-value rows. `n` values, random finite
/// values or codes.
fn packed_rows(cfg: &Config, size: &Size, seed: u64) {
    let n = size.n;
    // The buffers in the order and of the sizes the typed harness allocated them.
    let draw = Gen::Narrowing(WideFmt::of::<f32>(), NarrowFmt::of::<F4E2M1>());
    let f = draw.buf(4, n, seed);
    let values = cast::<f32>(f.bytes());
    let from_f32 = |to: fn(f32) -> u64| {
        let mut it = values.iter();
        move || to(*it.next().expect("one value per element"))
    };
    let d = Buf::from_bits(8, n, &mut from_f32(|x| (x as f64).to_bits()));
    let mut packed = Buf::zeroed(n / 2);
    convert_on(
        Backend::Scalar,
        values,
        cast_mut::<F4E2M1x2>(packed.bytes_mut()),
        Options::new(),
    );
    macro_rules! row {
        ($src:expr, $s:ty, $d:ty, $len:expr) => {{
            let p = Pair::of::<$s, $d>();
            let src = $src.bytes();
            let mut want = Buf::zeroed($len * p.dst.size);
            (p.convert)(Backend::Scalar, src, want.bytes_mut(), Options::new());
            let name = p.name();
            debug_assert!(PACKED_ROWS.contains(&name.as_str()));
            if !selected(cfg, &name) {
            } else if cfg.generic {
                generic_row(cfg, size, &name, &p, src, want.bytes());
            } else {
                timed_row(cfg, size, &name, &p, src, want.bytes());
            }
        }};
    }
    let h = Buf::from_bits(2, n, &mut from_f32(|x| F16::from_f32(x).raw()));
    let b = Buf::from_bits(2, n, &mut from_f32(|x| BF16::from_f32(x).raw()));
    row!(f, f32, F4E2M1x2, n / 2);
    row!(d, f64, F4E2M1x2, n / 2);
    row!(h, F16, F4E2M1x2, n / 2);
    row!(b, BF16, F4E2M1x2, n / 2);
    row!(packed, F4E2M1x2, f32, n);
    row!(packed, F4E2M1x2, f64, n);
    row!(packed, F4E2M1x2, F16, n);
    row!(packed, F4E2M1x2, BF16, n);
}

// ---------------------------------------------------------------------------------------
// `--yardsticks`.

/// A conversion timed by `--yardsticks`: its name and a job that runs it once on buffers of
/// its own (checked against Scalar when it is made).
struct Job {
    name: String,
    run: Box<dyn FnMut()>,
}

/// `S -> D` on `b` over `src`, checked against Scalar.
fn pair_job<S: Elem + ConvertTo<D> + 'static, D: Elem + 'static>(b: Backend, src: Vec<S>) -> Job {
    let p = Pair::of::<S, D>();
    let mut want = Buf::zeroed(src.len() * p.dst.size);
    let mut dst = vec![D::default(); src.len()];
    let (s, d) = (
        bytemuck::cast_slice(&src),
        bytemuck::cast_slice_mut(&mut dst),
    );
    (p.convert)(Backend::Scalar, s, want.bytes_mut(), Options::new());
    (p.convert)(b, s, d, Options::new());
    require_same("yardstick input", b, (p.src, p.dst), s, want.bytes(), d);
    Job {
        name: p.name(),
        run: Box::new(move || {
            convert_on(
                b,
                black_box(&src[..]),
                black_box(&mut dst[..]),
                Options::new(),
            )
        }),
    }
}

/// `round_trip` through `N` on `b` over `x` (f32 values), checked against Scalar.
fn round_trip_job<N: Narrow + ConvertTo<f32> + 'static>(b: Backend, x: Vec<f32>) -> Job
where
    f32: ConvertTo<N>,
{
    let rt = RoundTrip::of::<N>();
    let mut want = x.clone();
    (rt.run)(Backend::Scalar, &mut want, Options::new());
    let mut got = x.clone();
    (rt.run)(b, &mut got, Options::new());
    require_same_f32("yardstick input", b, &x, &want, &got);
    Job {
        name: format!("round_trip_{}", N::NAME),
        run: Box::new(move || {
            // The values are already rounded after the first call: the same work each time.
            vcvt::round_trip_on::<N, f32>(b, black_box(&mut got[..]), Options::new())
                .expect("backend is available")
        }),
    }
}

/// `n` random codes of `N` for a widening (finite codes, as the tables use).
fn codes<N: Narrow>(n: usize, seed: u64) -> Vec<N> {
    let (draw, mut rng) = (Gen::Codes(NarrowFmt::of::<N>()), Rng::new(seed ^ n as u64));
    (0..n)
        .map(|_| N::from_code(draw.next(&mut rng) as u32))
        .collect()
}

/// `n` random f32 values for a narrowing to `N` (as the tables use).
fn values<N: Narrow>(n: usize, seed: u64) -> Vec<f32> {
    Gen::Narrowing(WideFmt::of::<f32>(), NarrowFmt::of::<N>()).f32s(n, seed)
}
/// The pairs with a speed target against a related conversion on the same backend and
/// length: (the pair, its yardstick, the target ratio of their rates).
type YardRow = (fn(Backend, usize) -> (Job, Job), f64);

/// The `--yardsticks` rows: a pair, its yardstick and the lowest ratio of their rates
/// the project aims for. A widening to f32 against F8E5M2 → f32 (whose codes are F16 codes
/// shifted: the cheapest one-byte widening); X → F16/BF16 against X → f32; a narrowing
/// against f32 → F8E4M3; a fused round trip against its narrowing.
const YARDSTICKS: &[YardRow] = &[
    (
        |b, n| {
            (
                pair_job::<F8E4M3FNUZ, f32>(b, codes(n, 1)),
                pair_job::<F8E5M2, f32>(b, codes(n, 2)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                pair_job::<F8E5M2FNUZ, f32>(b, codes(n, 1)),
                pair_job::<F8E5M2, f32>(b, codes(n, 2)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                pair_job::<F6E2M3, f32>(b, codes(n, 1)),
                pair_job::<F8E5M2, f32>(b, codes(n, 2)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                pair_job::<F6E3M2, f32>(b, codes(n, 1)),
                pair_job::<F8E5M2, f32>(b, codes(n, 2)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                pair_job::<F8E8M0, f32>(b, codes(n, 1)),
                pair_job::<F8E5M2, f32>(b, codes(n, 2)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                pair_job::<F16, BF16>(b, codes(n, 1)),
                pair_job::<F16, f32>(b, codes(n, 1)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                pair_job::<F8E5M2, BF16>(b, codes(n, 1)),
                pair_job::<F8E5M2, f32>(b, codes(n, 1)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                pair_job::<F8E8M0, F16>(b, codes(n, 1)),
                pair_job::<F8E8M0, f32>(b, codes(n, 1)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                pair_job::<F8E8M0, BF16>(b, codes(n, 1)),
                pair_job::<F8E8M0, f32>(b, codes(n, 1)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                pair_job::<f32, F8E4M3FNUZ>(b, values::<F8E4M3FNUZ>(n, 1)),
                pair_job::<f32, F8E4M3>(b, values::<F8E4M3>(n, 2)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                pair_job::<f32, F8E5M2FNUZ>(b, values::<F8E5M2FNUZ>(n, 1)),
                pair_job::<f32, F8E4M3>(b, values::<F8E4M3>(n, 2)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                pair_job::<F16, F8E8M0>(b, codes(n, 1)),
                pair_job::<f32, F8E8M0>(b, values::<F8E8M0>(n, 2)),
            )
        },
        0.9,
    ),
    (
        |b, n| {
            (
                round_trip_job::<BF16>(b, values::<BF16>(n, 1)),
                pair_job::<f32, BF16>(b, values::<BF16>(n, 1)),
            )
        },
        0.8,
    ),
    (
        |b, n| {
            (
                round_trip_job::<F16>(b, values::<F16>(n, 1)),
                pair_job::<f32, F16>(b, values::<F16>(n, 1)),
            )
        },
        0.8,
    ),
];

/// `--yardsticks`: for each backend, each [`YARDSTICKS`] row's pair and yardstick timed in
/// alternating batches, their rates, the ratio and the target. `--pair` filters by the
/// pair's name.
fn yardstick_rows(cfg: &Config, size: &Size) {
    let n = size.n;
    // Short batches, many of them: the two contenders alternate often, so that both see
    // the same load on a shared machine.
    let budget = Budget {
        batches: 41,
        batch: Duration::from_millis(2),
    };
    for &b in cfg.backends.iter().filter(|&&b| b != Backend::Scalar) {
        println!();
        println!(
            "{}: {n} elements, pair beside yardstick in alternating batches (median of {} batches of >= {} ms)",
            b.name(),
            budget.batches,
            budget.batch.as_millis()
        );
        println!(
            "{:<26}{:>8}  {:<24}{:>8}{:>8}{:>8}",
            "pair", "el/ns", "yardstick", "el/ns", "ratio", "target"
        );
        for (make, target) in YARDSTICKS {
            let (mut what, mut yard) = make(b, n);
            if !selected(cfg, &what.name) {
                continue;
            }
            let (tw, ty) = measure2(budget, &mut what.run, &mut yard.run);
            let ratio = ty / tw;
            println!(
                "{:<26}{:>8}  {:<24}{:>8}{:>8.2}{:>8}",
                what.name,
                num(n as f64 / tw),
                yard.name,
                num(n as f64 / ty),
                ratio,
                format!("{target:.1}{}", if ratio >= *target { "" } else { " !" }),
            );
        }
    }
}

/// Runs (or only checks) one pair, if the `--pair` filter selects it.
enum Phase<'a> {
    Check,
    Time(&'a Size),
    /// Collects the pair names (for `--pair` and the usage text).
    Names(&'a mut Vec<String>),
}

/// Whether to run the pair `name` in this phase (and records it in the `Names` phase).
fn wanted(cfg: &Config, phase: &mut Phase, name: &str) -> bool {
    if let Phase::Names(v) = phase {
        v.push(name.to_string());
        return false;
    }
    selected(cfg, name)
}

fn selected(cfg: &Config, name: &str) -> bool {
    cfg.pairs.is_empty() || cfg.pairs.iter().any(|p| name.contains(p.as_str()))
}

/// A wide -> narrow pair: checked on [`narrowing_check_input`], timed on random values in
/// the destination's range.
fn narrow_pair<W: Wide + ConvertTo<N>, N: Narrow>(cfg: &Config, phase: &mut Phase, seed: u64) {
    let (w, n) = (WideFmt::of::<W>(), NarrowFmt::of::<N>());
    let check = move |rng: &mut Rng| narrowing_check_input(rng, &w, &n);
    pair_phases(
        cfg,
        phase,
        seed,
        &Pair::of::<W, N>(),
        &check,
        Gen::Narrowing(w, n),
    );
}

/// A narrow -> narrow pair: checked on every code of `S`, timed on random finite codes (of
/// `S` in `D`'s range when `D` is the smaller format).
fn via_pair<S: Narrow + ConvertTo<D>, D: Narrow>(cfg: &Config, phase: &mut Phase, seed: u64) {
    let (s, d) = (NarrowFmt::of::<S>(), NarrowFmt::of::<D>());
    let check = move |rng: &mut Rng| widening_check_input(rng, &s);
    // Narrowing (F16/BF16 to a smaller format): values in the destination's range, as for
    // f32 sources, each the nearest `S` value.
    let draw = if s.codes > d.codes {
        Gen::Rounded(s, d)
    } else {
        Gen::Codes(s)
    };
    pair_phases(cfg, phase, seed, &Pair::of::<S, D>(), &check, draw);
}

/// A narrow -> wide pair: checked on every code and random codes, timed on random finite
/// codes.
fn widen_pair<N: Narrow + ConvertTo<W>, W: Wide>(cfg: &Config, phase: &mut Phase, seed: u64) {
    let n = NarrowFmt::of::<N>();
    let check = move |rng: &mut Rng| widening_check_input(rng, &n);
    pair_phases(cfg, phase, seed, &Pair::of::<N, W>(), &check, Gen::Codes(n));
}

/// One pair in `phase`: every backend checked against Scalar on the inputs `check` draws
/// (raw bits of the source), or the pair timed on inputs `draw` draws.
fn pair_phases(
    cfg: &Config,
    phase: &mut Phase,
    seed: u64,
    p: &Pair,
    check: &dyn Fn(&mut Rng) -> Vec<u64>,
    draw: Gen,
) {
    if !wanted(cfg, phase, &p.name()) {
        return;
    }
    match phase {
        Phase::Check => {
            let input = bits_buf(p.src.size, &check(&mut Rng::new(seed)));
            for &b in cfg.backends.iter().filter(|&&b| b != Backend::Scalar) {
                check_backend(p, b, input.bytes());
            }
        }
        Phase::Time(size) => run_pair(cfg, size, seed, p, draw),
        Phase::Names(_) => {}
    }
}

/// `vcvt::round_trip` through `N` on `f32`, in place: checked against Scalar as the pairs
/// are, timed on random values in `N`'s range. Its memcpy moves the same bytes (n f32 read
/// and written).
fn round_trip_row<N: Narrow + ConvertTo<f32>>(cfg: &Config, phase: &mut Phase, seed: u64)
where
    f32: ConvertTo<N>,
{
    round_trip_phases(cfg, phase, seed, &RoundTrip::of::<N>());
}

/// [`round_trip_row`], for the round trip `rt`.
fn round_trip_phases(cfg: &Config, phase: &mut Phase, seed: u64, rt: &RoundTrip) {
    let name = format!("round_trip_{}", rt.name);
    if !wanted(cfg, phase, &name) {
        return;
    }
    let f32s =
        |bits: &[u64]| -> Vec<f32> { bits.iter().map(|&b| f32::from_bits(b as u32)).collect() };
    let wide = WideFmt::of::<f32>();
    match phase {
        Phase::Check => {
            let input = f32s(&narrowing_check_input(
                &mut Rng::new(seed),
                &wide,
                &rt.narrow,
            ));
            for &b in cfg.backends.iter().filter(|&&b| b != Backend::Scalar) {
                for (o, pname) in policies() {
                    let mut want = input.clone();
                    let mut got = input.clone();
                    (rt.run)(Backend::Scalar, &mut want, o);
                    (rt.run)(b, &mut got, o);
                    require_same_f32(
                        &format!("round trip, overflow {pname}"),
                        b,
                        &input,
                        &want,
                        &got,
                    );
                }
            }
        }
        Phase::Time(size) => {
            let n = size.n;
            let draw = Gen::Narrowing(wide, rt.narrow);
            let src = draw.f32s(n, seed);
            let mut want = src.clone();
            (rt.run)(Backend::Scalar, &mut want, Options::new());
            if cfg.generic {
                generic_round_trip_row(cfg, size, &name, rt, &src, &want);
                return;
            }
            let bytes_moved = (n * 8) as f64;
            let mut line = format!("{name:<PAIR_W$}");
            let mut best = 0.0f64;
            let mut x = src.clone();
            for &b in &cfg.backends {
                x.copy_from_slice(&src);
                (rt.run)(b, &mut x, Options::new());
                require_same_f32("timed input", b, &src, &want, &x);
                let ns = (rt.time)(size.budget, b, &mut x);
                let gbs = bytes_moved / ns;
                best = best.max(gbs);
                let mark = kernel_mark(b, (rt.kernel)(b));
                let _ = write!(
                    line,
                    "{:>COL_W$}",
                    format!("{:>6} {:>6}{mark}", num(n as f64 / ns), num(gbs))
                );
            }
            let mc = memcpy_ns(n * 4, size.budget);
            let mc_gbs = bytes_moved / mc;
            let _ = write!(
                line,
                "{:>COL_W$}{:>9}",
                format!("{:>6} {:>6}", num(n as f64 / mc), num(mc_gbs)),
                format!("{:.2}", best / mc_gbs)
            );
            println!("{line}");
        }
        Phase::Names(_) => {}
    }
}

/// Every unpacked pair and the round trips, in a fixed order (packed FP4 has its own length
/// rule and is not timed here, see `benches/convert.rs`; `print_simd_pairs` lists it).
fn all_pairs(cfg: &Config, phase: &mut Phase) {
    narrow_pair::<f32, F16>(cfg, phase, 1);
    narrow_pair::<f32, BF16>(cfg, phase, 2);
    narrow_pair::<f32, F8E4M3>(cfg, phase, 3);
    narrow_pair::<f32, F8E5M2>(cfg, phase, 4);
    narrow_pair::<f32, F8E4M3FNUZ>(cfg, phase, 5);
    narrow_pair::<f32, F8E5M2FNUZ>(cfg, phase, 6);
    narrow_pair::<f32, F6E2M3>(cfg, phase, 7);
    narrow_pair::<f32, F6E3M2>(cfg, phase, 8);
    narrow_pair::<f32, F4E2M1>(cfg, phase, 9);
    narrow_pair::<f32, F8E8M0>(cfg, phase, 10);
    narrow_pair::<f64, F16>(cfg, phase, 11);
    narrow_pair::<f64, BF16>(cfg, phase, 12);
    narrow_pair::<f64, F8E4M3>(cfg, phase, 13);
    narrow_pair::<f64, F8E5M2>(cfg, phase, 14);
    narrow_pair::<f64, F8E4M3FNUZ>(cfg, phase, 15);
    narrow_pair::<f64, F8E5M2FNUZ>(cfg, phase, 16);
    narrow_pair::<f64, F6E2M3>(cfg, phase, 17);
    narrow_pair::<f64, F6E3M2>(cfg, phase, 18);
    narrow_pair::<f64, F4E2M1>(cfg, phase, 19);
    narrow_pair::<f64, F8E8M0>(cfg, phase, 20);
    widen_pair::<F16, f32>(cfg, phase, 21);
    widen_pair::<BF16, f32>(cfg, phase, 22);
    widen_pair::<F8E4M3, f32>(cfg, phase, 23);
    widen_pair::<F8E5M2, f32>(cfg, phase, 24);
    widen_pair::<F8E4M3FNUZ, f32>(cfg, phase, 25);
    widen_pair::<F8E5M2FNUZ, f32>(cfg, phase, 26);
    widen_pair::<F6E2M3, f32>(cfg, phase, 27);
    widen_pair::<F6E3M2, f32>(cfg, phase, 28);
    widen_pair::<F4E2M1, f32>(cfg, phase, 29);
    widen_pair::<F8E8M0, f32>(cfg, phase, 30);
    widen_pair::<F16, f64>(cfg, phase, 31);
    widen_pair::<BF16, f64>(cfg, phase, 32);
    widen_pair::<F8E4M3, f64>(cfg, phase, 33);
    widen_pair::<F8E5M2, f64>(cfg, phase, 34);
    widen_pair::<F8E4M3FNUZ, f64>(cfg, phase, 35);
    widen_pair::<F8E5M2FNUZ, f64>(cfg, phase, 36);
    widen_pair::<F6E2M3, f64>(cfg, phase, 37);
    widen_pair::<F6E3M2, f64>(cfg, phase, 38);
    widen_pair::<F4E2M1, f64>(cfg, phase, 39);
    widen_pair::<F8E8M0, f64>(cfg, phase, 40);
    // Narrow -> narrow: every format to and from F16 and BF16.
    via_pair::<BF16, F16>(cfg, phase, 41);
    via_pair::<F16, BF16>(cfg, phase, 42);
    macro_rules! hubs {
        ($($t:ty: $seed:literal),*) => {$(
            via_pair::<$t, F16>(cfg, phase, $seed);
            via_pair::<$t, BF16>(cfg, phase, $seed + 1);
            via_pair::<F16, $t>(cfg, phase, $seed + 2);
            via_pair::<BF16, $t>(cfg, phase, $seed + 3);
        )*};
    }
    hubs!(F8E4M3: 43, F8E5M2: 47, F8E4M3FNUZ: 51, F8E5M2FNUZ: 55, F6E2M3: 59, F6E3M2: 63,
        F4E2M1: 67, F8E8M0: 71);
    round_trip_row::<F16>(cfg, phase, 75);
    round_trip_row::<BF16>(cfg, phase, 76);
    round_trip_row::<F8E4M3>(cfg, phase, 77);
    round_trip_row::<F8E5M2>(cfg, phase, 78);
    round_trip_row::<F4E2M1>(cfg, phase, 79);
    round_trip_row::<F8E4M3FNUZ>(cfg, phase, 80);
    round_trip_row::<F8E5M2FNUZ>(cfg, phase, 81);
    round_trip_row::<F6E2M3>(cfg, phase, 82);
    round_trip_row::<F6E3M2>(cfg, phase, 83);
    round_trip_row::<F8E8M0>(cfg, phase, 84);
    // The formats after the first eleven: every pair, seeds from 101 on.
    macro_rules! all_of {
        ($($t:ty: $seed:literal),*) => {$(
            narrow_pair::<f32, $t>(cfg, phase, $seed);
            narrow_pair::<f64, $t>(cfg, phase, $seed + 1);
            widen_pair::<$t, f32>(cfg, phase, $seed + 2);
            widen_pair::<$t, f64>(cfg, phase, $seed + 3);
            via_pair::<$t, F16>(cfg, phase, $seed + 4);
            via_pair::<$t, BF16>(cfg, phase, $seed + 5);
            via_pair::<F16, $t>(cfg, phase, $seed + 6);
            via_pair::<BF16, $t>(cfg, phase, $seed + 7);
            round_trip_row::<$t>(cfg, phase, $seed + 8);
        )*};
    }
    all_of!(F8E3M4: 101, F8E4M3IEEE: 111, F8E4M3B11FNUZ: 121, F8E5M3FNU: 131);
}

/// The mark after a table cell: `s` when backend `b` runs the Scalar kernel for the pair,
/// `2` when it runs two kernels one after the other (two passes), `n` when its kernel is
/// narrower than `b`'s own width (a lower tier's), blank when the kernel is `b`'s own.
fn kernel_mark(b: Backend, k: KernelInfo) -> &'static str {
    if b == Backend::Scalar {
        " "
    } else if !k.is_simd() {
        "s"
    } else if k.passes > 1 {
        "2"
    } else if k.bits < b.width_bits() {
        "n"
    } else {
        " "
    }
}

/// Per backend, the pairs and round trips whose kernel is not the backend's own at its width
/// in one pass (`Backend::kernel`), as the tables' marks say.
fn print_kernel_widths(cfg: &Config) {
    println!(
        "Kernels below a backend's own width or in two passes ('n', '2' and 's' in the tables):"
    );
    for &b in cfg.backends.iter().filter(|&&b| b != Backend::Scalar) {
        let mut off = Vec::new();
        let mut total = 0;
        let mut note = |name: String, k: KernelInfo| {
            total += 1;
            if kernel_mark(b, k) != " " {
                off.push(format!("{name}: {k}"));
            }
        };
        macro_rules! wide {
            ($($t:ty),*) => {$(
                note(format!("f32 -> {}", stringify!($t)), b.kernel::<f32, $t>());
                note(format!("f64 -> {}", stringify!($t)), b.kernel::<f64, $t>());
                note(format!("{} -> f32", stringify!($t)), b.kernel::<$t, f32>());
                note(format!("{} -> f64", stringify!($t)), b.kernel::<$t, f64>());
            )*};
        }
        macro_rules! leaf {
            ($($t:ty),*) => {$(
                note(format!("{} -> F16", stringify!($t)), b.kernel::<$t, F16>());
                note(format!("{} -> BF16", stringify!($t)), b.kernel::<$t, BF16>());
                note(format!("F16 -> {}", stringify!($t)), b.kernel::<F16, $t>());
                note(format!("BF16 -> {}", stringify!($t)), b.kernel::<BF16, $t>());
            )*};
        }
        macro_rules! round_trip {
            ($($t:ty),*) => {$(
                note(format!("round_trip {}", stringify!($t)), b.round_trip_kernel::<$t>());
            )*};
        }
        wide!(
            F16,
            BF16,
            F8E4M3,
            F8E5M2,
            F8E4M3FNUZ,
            F8E5M2FNUZ,
            F6E2M3,
            F6E3M2,
            F4E2M1,
            F4E2M1x2,
            F8E8M0,
            F8E3M4,
            F8E4M3IEEE,
            F8E4M3B11FNUZ,
            F8E5M3FNU
        );
        note("F16 -> BF16".into(), b.kernel::<F16, BF16>());
        note("BF16 -> F16".into(), b.kernel::<BF16, F16>());
        leaf!(
            F8E4M3,
            F8E5M2,
            F8E4M3FNUZ,
            F8E5M2FNUZ,
            F6E2M3,
            F6E3M2,
            F4E2M1,
            F4E2M1x2,
            F8E8M0,
            F8E3M4,
            F8E4M3IEEE,
            F8E4M3B11FNUZ,
            F8E5M3FNU
        );
        round_trip!(
            F16,
            BF16,
            F8E4M3,
            F8E5M2,
            F8E4M3FNUZ,
            F8E5M2FNUZ,
            F6E2M3,
            F6E3M2,
            F4E2M1,
            F8E8M0,
            F8E3M4,
            F8E4M3IEEE,
            F8E4M3B11FNUZ,
            F8E5M3FNU
        );
        println!(
            "  {b} ({}-bit): {} of {total} at its own width in one pass; {}",
            b.width_bits(),
            total - off.len(),
            if off.is_empty() {
                "no exceptions".to_string()
            } else {
                off.join(", ")
            }
        );
    }
}

/// Which pairs each backend runs with SIMD code (`Backend::is_simd`); the others run the
/// Scalar kernel, and their cells in the tables carry an `s`.
fn print_simd_pairs(cfg: &Config) {
    macro_rules! pairs {
        ($b:expr, $($t:ty),*) => {{
            let mut simd = Vec::new();
            let mut scalar = Vec::new();
            let mut total = 0;
            let mut count = 0;
            $(
                let both = [
                    $b.is_simd::<f32, $t>(),
                    $b.is_simd::<f64, $t>(),
                    $b.is_simd::<$t, f32>(),
                    $b.is_simd::<$t, f64>(),
                ];
                total += 4;
                let k = both.iter().filter(|&&x| x).count();
                count += k;
                let name = stringify!($t);
                if k == 4 {
                    simd.push(name.to_string());
                } else if k == 0 {
                    scalar.push(name.to_string());
                } else {
                    simd.push(format!("{name} ({k} of 4 pairs)"));
                }
            )*
            (simd, scalar, count, total)
        }};
    }
    println!("SIMD pairs (f32/f64 to and from each format); 's' in a table = Scalar kernel:");
    for &b in cfg.backends.iter().filter(|&&b| b != Backend::Scalar) {
        let (simd, scalar, n, total) = pairs!(
            b,
            F16,
            BF16,
            F8E4M3,
            F8E5M2,
            F8E4M3FNUZ,
            F8E5M2FNUZ,
            F6E2M3,
            F6E3M2,
            F4E2M1,
            F4E2M1x2,
            F8E8M0,
            F8E3M4,
            F8E4M3IEEE,
            F8E4M3B11FNUZ,
            F8E5M3FNU
        );
        println!(
            "  {b}: SIMD for {} ({n} of {total} pairs); Scalar kernel for {}",
            if simd.is_empty() {
                "-".to_string()
            } else {
                simd.join(", ")
            },
            if scalar.is_empty() {
                "-".to_string()
            } else {
                scalar.join(", ")
            }
        );
    }
}

// ---------------------------------------------------------------------------------------
// The default run: the active backend on the pairs most people convert, at one cache-sized
// and one memory-sized length, beside memcpy and the `half` crate, then a summary.

/// One measured row of the default run.
struct Timed {
    /// e.g. `f32 -> f16`.
    pair: &'static str,
    /// Elements converted per call.
    n: usize,
    /// Bytes read plus bytes written per call.
    bytes: f64,
    /// Median ns per call of vcvt (the active backend), memcpy of the same bytes, `half`.
    vcvt_ns: f64,
    memcpy_ns: f64,
    half_ns: Option<f64>,
}

impl Timed {
    fn el_ns(&self) -> f64 {
        self.n as f64 / self.vcvt_ns
    }
    fn gbs(&self) -> f64 {
        self.bytes / self.vcvt_ns
    }
    fn memcpy_gbs(&self) -> f64 {
        self.bytes / self.memcpy_ns
    }
}

/// A column of the default run's tables: two header lines and a cell per row. The tables
/// are the list [`quick_columns`] returns; a new column is one more entry there.
struct Column {
    head: &'static str,
    unit: &'static str,
    cell: fn(&Timed) -> String,
}

fn quick_columns() -> Vec<Column> {
    vec![
        Column {
            head: "vcvt",
            unit: "el/ns",
            cell: |t| num(t.el_ns()),
        },
        Column {
            head: "vcvt",
            unit: "GB/s",
            cell: |t| num(t.gbs()),
        },
        Column {
            head: "memcpy",
            unit: "GB/s",
            cell: |t| num(t.memcpy_gbs()),
        },
        Column {
            head: "vcvt/",
            unit: "memcpy",
            cell: |t| format!("{:.2}", t.gbs() / t.memcpy_gbs()),
        },
        Column {
            head: "half",
            unit: "el/ns",
            cell: |t| t.half_ns.map_or("-".into(), |h| num(t.n as f64 / h)),
        },
        Column {
            head: "vcvt/",
            unit: "half",
            cell: |t| {
                t.half_ns
                    .map_or("-".into(), |h| format!("{:.2}", h / t.vcvt_ns))
            },
        },
    ]
}

fn print_quick_table(size: &Size, rows: &[Timed]) {
    const W: usize = 9;
    println!();
    println!(
        "{} elements ({}), median of {} batches of >= {} ms",
        size.n,
        size.label,
        size.budget.batches,
        size.budget.batch.as_millis()
    );
    let cols = quick_columns();
    let mut l1 = format!("{:<PAIR_W$}", "pair");
    let mut l2 = format!("{:<PAIR_W$}", "");
    for c in &cols {
        let _ = write!(l1, "{:>W$}", c.head);
        let _ = write!(l2, "{:>W$}", c.unit);
    }
    println!("{l1}");
    println!("{l2}");
    for t in rows {
        let mut line = format!("{:<PAIR_W$}", t.pair);
        for c in &cols {
            let _ = write!(line, "{:>W$}", (c.cell)(t));
        }
        println!("{line}");
    }
}

/// A row of the default run from `vcvt_ns` (vcvt's time, just measured): times `half`, if
/// given, then a memcpy of the same bytes right after (so that all see the same machine
/// load).
fn time_row(
    pair: &'static str,
    size: &Size,
    bytes: usize,
    vcvt_ns: f64,
    half: Option<&mut dyn FnMut()>,
) -> Timed {
    let half_ns = half.map(|mut h| measure(size.budget, &mut h));
    let memcpy_ns = memcpy_ns(bytes / 2, size.budget);
    Timed {
        pair,
        n: size.n,
        bytes: bytes as f64,
        vcvt_ns,
        memcpy_ns,
        half_ns,
    }
}

/// The `half` crate's conversion of a pair, on the bytes of vcvt's types.
type HalfFn = fn(&[u8], &mut [u8]);

/// `p` on the active backend: its output on the timed input (drawn by `draw`) is compared
/// with Scalar's first, then timed; `half` is the `half` crate's slice conversion of the
/// same pair.
fn quick_pair(
    pair: &'static str,
    size: &Size,
    seed: u64,
    p: &Pair,
    draw: Gen,
    half: Option<HalfFn>,
) -> Timed {
    let n = size.n;
    let src = draw.buf(p.src.size, n, seed);
    let mut want = Buf::zeroed(n * p.dst.size);
    (p.convert)(
        Backend::Scalar,
        src.bytes(),
        want.bytes_mut(),
        Options::new(),
    );
    let active = Backend::active();
    let mut dst = Buf::zeroed(n * p.dst.size);
    (p.convert)(active, src.bytes(), dst.bytes_mut(), Options::new());
    require_same(
        "timed input",
        active,
        (p.src, p.dst),
        src.bytes(),
        want.bytes(),
        dst.bytes(),
    );
    drop(want);
    let mut half_dst = Buf::zeroed(n * p.dst.size);
    let mut half_run = half.map(|h| {
        let (src, out) = (src.bytes(), half_dst.bytes_mut());
        move || h(black_box(src), black_box(&mut out[..]))
    });
    let vcvt_ns = (p.time)(size.budget, active, src.bytes(), dst.bytes_mut());
    time_row(
        pair,
        size,
        n * (p.src.size + p.dst.size),
        vcvt_ns,
        half_run.as_mut().map(|h| h as &mut dyn FnMut()),
    )
}

/// Every byte of the MXFP4 element codes with every scale byte, on `n` values (the last block
/// short when `n` is not a multiple of 32): `(data, scales)`.
fn mxfp4_check_input(n: usize) -> (Vec<u8>, Vec<u8>) {
    // Block b has scale byte b / 16 % 256 and the 16 data bytes 16 (b % 16) ..; so every
    // scale meets every data byte.
    let data = (0..n.div_ceil(2)).map(|i| i as u8).collect();
    let scales = (0..n.div_ceil(32)).map(|b| (b / 16) as u8).collect();
    (data, scales)
}

fn mxfp4_dequantize(b: Backend, data: &[u8], scales: &[u8], dst: &mut [BF16]) {
    Mx::new(MxElement::E2M1)
        .on(b)
        .dequantize(data, scales, Shape::vector(dst.len()), dst)
        .expect("backend is available and lengths match");
}

/// Aborts the program if `got` differs from `want` anywhere (MXFP4 -> BF16).
fn require_same_mxfp4(what: &str, backend: Backend, want: &[BF16], got: &[BF16]) {
    let bad: Vec<usize> = (0..want.len())
        .filter(|&i| want[i].to_bits() != got[i].to_bits())
        .collect();
    if let Some(&i) = bad.first() {
        eprintln!();
        eprintln!(
            "MISMATCH: backend {backend} differs from scalar on {} of {} values ({what}, mxfp4 -> bf16); \
             first at [{i}] (block {}): scalar {:#06x}, {backend} {:#06x}",
            bad.len(),
            want.len(),
            i / 32,
            want[i].to_bits(),
            got[i].to_bits()
        );
        eprintln!("aborting: a backend that disagrees with the specification must not be timed");
        exit(1);
    }
}

/// MXFP4 -> BF16 on every backend against Scalar: every element byte with every scale byte,
/// and short rows (every length 1..=100, a short last block in most).
fn check_mxfp4(cfg: &Config) {
    let n = 256 * 16 * 32;
    let (data, scales) = mxfp4_check_input(n);
    let mut want = vec![BF16::ZERO; n];
    let mut got = vec![BF16::ZERO; n];
    mxfp4_dequantize(Backend::Scalar, &data, &scales, &mut want);
    for &b in cfg.backends.iter().filter(|&&b| b != Backend::Scalar) {
        mxfp4_dequantize(b, &data, &scales, &mut got);
        require_same_mxfp4("every code x every scale", b, &want, &got);
        for len in 1usize..=100 {
            let (d, s) = (&data[..len.div_ceil(2)], &scales[..len.div_ceil(32)]);
            mxfp4_dequantize(Backend::Scalar, d, s, &mut want[..len]);
            mxfp4_dequantize(b, d, s, &mut got[..len]);
            require_same_mxfp4(&format!("{len} values"), b, &want[..len], &got[..len]);
        }
    }
}

/// MXFP4 (gpt-oss `*_blocks` + `*_scales`) -> BF16 on the active backend, checked against
/// Scalar, then timed. Random element bytes, scales 2^-8 ..= 2^8.
fn quick_mxfp4(size: &Size, seed: u64) -> Timed {
    let n = size.n;
    let mut rng = Rng::new(seed ^ n as u64);
    let data: Vec<u8> = (0..n / 2).map(|_| rng.next_u64() as u8).collect();
    let scales: Vec<u8> = (0..n / 32).map(|_| rng.range(119, 135) as u8).collect();
    let active = Backend::active();
    let mut want = vec![BF16::ZERO; n];
    let mut dst = vec![BF16::ZERO; n];
    mxfp4_dequantize(Backend::Scalar, &data, &scales, &mut want);
    mxfp4_dequantize(active, &data, &scales, &mut dst);
    require_same_mxfp4("timed input", active, &want, &dst);
    drop(want);
    let vcvt_ns = measure(size.budget, &mut || {
        mxfp4_dequantize(
            active,
            black_box(&data),
            black_box(&scales),
            black_box(&mut dst),
        )
    });
    time_row(
        "mxfp4 -> bf16",
        size,
        data.len() + scales.len() + n * size_of::<BF16>(),
        vcvt_ns,
        None,
    )
}

/// The `half` crate's slice conversions, on the bytes of vcvt's types (the same bits).
fn half_from_f32(src: &[u8], dst: &mut [u8]) {
    cast_mut::<half::f16>(dst).convert_from_f32_slice(cast(src));
}
fn half_to_f32(src: &[u8], dst: &mut [u8]) {
    cast::<half::f16>(src).convert_to_f32_slice(cast_mut(dst));
}
fn half_bf16_from_f32(src: &[u8], dst: &mut [u8]) {
    cast_mut::<half::bf16>(dst).convert_from_f32_slice(cast(src));
}
fn half_bf16_to_f32(src: &[u8], dst: &mut [u8]) {
    cast::<half::bf16>(src).convert_to_f32_slice(cast_mut(dst));
}

/// The default run's sizes: one cache-sized and one memory-sized length.
fn quick_sizes() -> [Size; 2] {
    let batch = Duration::from_millis(20);
    [
        Size {
            label: "cache-sized",
            n: 1 << 16,
            budget: Budget { batches: 7, batch },
        },
        Size {
            label: "memory-sized",
            n: 1 << 24,
            budget: Budget { batches: 5, batch },
        },
    ]
}

/// The default run's rows at one size.
/// The default run's rows at one size.
fn quick_rows(size: &Size) -> Vec<Timed> {
    let f32 = WideFmt::of::<f32>();
    let narrowing = |n| Gen::Narrowing(f32, n);
    let (f16, bf16) = (NarrowFmt::of::<F16>(), NarrowFmt::of::<BF16>());
    let (e4m3, e2m1) = (NarrowFmt::of::<F8E4M3>(), NarrowFmt::of::<F4E2M1>());
    vec![
        quick_pair(
            "f32 -> f16",
            size,
            1,
            &Pair::of::<f32, F16>(),
            narrowing(f16),
            Some(half_from_f32),
        ),
        quick_pair(
            "f16 -> f32",
            size,
            21,
            &Pair::of::<F16, f32>(),
            Gen::Codes(f16),
            Some(half_to_f32),
        ),
        quick_pair(
            "f32 -> bf16",
            size,
            2,
            &Pair::of::<f32, BF16>(),
            narrowing(bf16),
            Some(half_bf16_from_f32),
        ),
        quick_pair(
            "bf16 -> f32",
            size,
            22,
            &Pair::of::<BF16, f32>(),
            Gen::Codes(bf16),
            Some(half_bf16_to_f32),
        ),
        quick_pair(
            "f32 -> f8e4m3",
            size,
            3,
            &Pair::of::<f32, F8E4M3>(),
            narrowing(e4m3),
            None,
        ),
        quick_pair(
            "f8e4m3 -> f32",
            size,
            23,
            &Pair::of::<F8E4M3, f32>(),
            Gen::Codes(e4m3),
            None,
        ),
        quick_pair(
            "f32 -> f4e2m1",
            size,
            9,
            &Pair::of::<f32, F4E2M1>(),
            narrowing(e2m1),
            None,
        ),
        quick_pair(
            "f4e2m1 -> f32",
            size,
            29,
            &Pair::of::<F4E2M1, f32>(),
            Gen::Codes(e2m1),
            None,
        ),
        quick_pair(
            "f8e4m3 -> bf16",
            size,
            44,
            &Pair::of::<F8E4M3, BF16>(),
            Gen::Codes(e4m3),
            None,
        ),
        quick_mxfp4(size, 80),
    ]
}

/// The paragraph a user can paste into an issue: machine, backend, every figure.
fn summary(cfg: &Config, load: Option<String>, tables: &[(Size, Vec<Timed>)], secs: f64) -> String {
    let checked: Vec<&str> = cfg
        .backends
        .iter()
        .filter(|&&b| b != Backend::Scalar)
        .map(|b| b.name())
        .collect();
    let mut s = format!(
        "vcvt {} throughput ({}): CPU {} ({}, {} CPUs{}); \
         backend {} ({}); {} matched scalar bit for bit on every pair. Elements per ns at {}:",
        env!("CARGO_PKG_VERSION"),
        if cfg!(debug_assertions) {
            "a build with debug assertions: not representative"
        } else {
            "`cargo run --release --example throughput`"
        },
        cpu_model().unwrap_or_else(|| "unknown".into()),
        std::env::consts::ARCH,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load.map_or(String::new(), |l| format!(
            ", load average {l} at the start"
        )),
        Backend::active(),
        backend_source(),
        if checked.is_empty() {
            "nothing but scalar".to_string()
        } else {
            checked.join(", ")
        },
        tables
            .iter()
            .map(|(size, _)| format!("{} ({} elements)", size.label, size.n))
            .collect::<Vec<_>>()
            .join(" / "),
    );
    let Some((_, first)) = tables.first() else {
        return s;
    };
    for (i, row) in first.iter().enumerate() {
        let at = |f: &dyn Fn(&Timed) -> String| {
            tables
                .iter()
                .map(|(_, rows)| f(&rows[i]))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let _ = write!(
            s,
            "{} {} {} ({}x memcpy",
            if i == 0 { "" } else { ";" },
            row.pair.replace(' ', ""),
            at(&|t| num(t.el_ns())),
            at(&|t| format!("{:.2}", t.gbs() / t.memcpy_gbs())),
        );
        if row.half_ns.is_some() {
            let _ = write!(
                s,
                ", half {}",
                at(&|t| num(t.n as f64 / t.half_ns.unwrap_or(f64::NAN)))
            );
        }
        s.push(')');
    }
    let _ = write!(s, ". Whole run {secs:.1} s.");
    s
}

/// Word-wraps `text` at `width` columns.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for w in text.split(' ').filter(|w| !w.is_empty()) {
        if line > 0 && line + 1 + w.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(w);
        line += w.len();
    }
    out
}

// ---------------------------------------------------------------------------------------
// CPU description.

#[cfg(target_arch = "x86_64")]
fn cpu_features() -> Vec<(&'static str, bool)> {
    use std::arch::is_x86_feature_detected as has;
    vec![
        ("sse2", has!("sse2")),
        ("sse4.1", has!("sse4.1")),
        ("avx", has!("avx")),
        ("avx2", has!("avx2")),
        ("fma", has!("fma")),
        ("f16c", has!("f16c")),
        ("avx512f", has!("avx512f")),
        ("avx512bw", has!("avx512bw")),
        ("avx512vl", has!("avx512vl")),
        ("avx512dq", has!("avx512dq")),
        ("avx512vbmi", has!("avx512vbmi")),
        ("avx512bf16", has!("avx512bf16")),
        ("avx512fp16", has!("avx512fp16")),
        ("gfni", has!("gfni")),
    ]
}

#[cfg(target_arch = "aarch64")]
fn cpu_features() -> Vec<(&'static str, bool)> {
    use std::arch::is_aarch64_feature_detected as has;
    vec![
        ("neon", has!("neon")),
        ("fp16", has!("fp16")),
        ("bf16", has!("bf16")),
        ("fhm", has!("fhm")),
        ("dotprod", has!("dotprod")),
        ("i8mm", has!("i8mm")),
        ("sve", has!("sve")),
        ("sve2", has!("sve2")),
    ]
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn cpu_features() -> Vec<(&'static str, bool)> {
    Vec::new()
}

/// How the active backend was chosen.
fn backend_source() -> String {
    match std::env::var(vcvt::ENV_VAR) {
        Ok(v) if !v.is_empty() => format!("forced by {}={v}", vcvt::ENV_VAR),
        _ => "auto-detected".to_string(),
    }
}

/// The 1-minute load average (Linux), to tell a shared or busy machine from an idle one.
fn load_average() -> Option<String> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(s.split_whitespace().next()?.to_string())
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("model name"))?;
    Some(line.split_once(':')?.1.trim().to_string())
}

// ---------------------------------------------------------------------------------------

/// Every row's name, in order.
fn pair_names() -> Vec<String> {
    let cfg = Config {
        sizes: Vec::new(),
        backends: Vec::new(),
        pairs: Vec::new(),
        full: true,
        generic: false,
        yardsticks: false,
    };
    let mut names = Vec::new();
    all_pairs(&cfg, &mut Phase::Names(&mut names));
    names.extend(PACKED_ROWS.iter().map(|r| r.to_string()));
    names
}

/// The names of [`packed_rows`]' rows, in its order.
const PACKED_ROWS: [&str; 8] = [
    "f32_to_f4e2m1x2",
    "f64_to_f4e2m1x2",
    "f16_to_f4e2m1x2",
    "bf16_to_f4e2m1x2",
    "f4e2m1x2_to_f32",
    "f4e2m1x2_to_f64",
    "f4e2m1x2_to_f16",
    "f4e2m1x2_to_bf16",
];

fn usage() -> ! {
    eprintln!(
        "usage: throughput [--full] [--quick] [--size N]... [--backend NAME]... [--pair NAME]...\n\
         \nWithout options: every backend checked against scalar on every pair, then the active\
         \nbackend timed on the common pairs beside memcpy and the half crate, and a summary.\n\
         \n  --full          the complete tables: every backend, every pair, three lengths\
         \n                  (each option below implies --full)\
         \n  --quick         skip the DRAM-sized (16 Mi element) slices\
         \n  --size N        time slices of N elements instead of the default sizes\
         \n                  (repeatable; N even)\
         \n  --backend NAME  time only this backend (repeatable; comma lists work); Scalar\
         \n                  is still the reference of the correctness check\
         \n  --pair NAME     run only pairs whose name contains NAME (repeatable), e.g.\
         \n                  f32_to_f16, bf16, _to_f64\
         \n  --generic       each override beside its tier's generic kernel (alternating\
         \n                  batches) and their ratio; `=` where the pair runs the generic one\
         \n  --yardsticks    the pairs with a speed target beside their yardsticks\
         \n                  (alternating batches), the ratio and the target\
         \n\nbackends available here: {}\npairs: {}",
        Backend::available()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", "),
        pair_names().join(", ")
    );
    exit(2)
}

fn parse_args() -> Config {
    let mut full = false;
    let mut generic = false;
    let mut yardsticks = false;
    let mut quick = false;
    let mut custom = Vec::new();
    let mut backends = Vec::new();
    let mut pairs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--full" => full = true,
            "--generic" => generic = true,
            "--yardsticks" => yardsticks = true,
            "--quick" => quick = true,
            "--size" => match args.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(n) if n > 0 && n % 2 == 0 => custom.push(n),
                _ => {
                    eprintln!("error: --size needs an even element count");
                    usage();
                }
            },
            "--backend" | "--pair" => {
                let Some(v) = args.next() else { usage() };
                for item in v.split(',').filter(|s| !s.is_empty()) {
                    if a == "--pair" {
                        if !pair_names().iter().any(|p| p.contains(item)) {
                            eprintln!("error: no pair name contains {item:?}");
                            usage();
                        }
                        pairs.push(item.to_string());
                        continue;
                    }
                    match Backend::from_name(item) {
                        Some(b) if b.is_available() => backends.push(b),
                        Some(b) => {
                            eprintln!("error: this CPU cannot run backend {b}");
                            usage();
                        }
                        None => {
                            eprintln!("error: unknown backend {item:?}");
                            usage();
                        }
                    }
                }
            }
            "--bench" => {} // passed by `cargo bench --example`-style runners; ignore
            "-h" | "--help" => usage(),
            _ => {
                eprintln!("error: unknown argument {a:?}");
                usage();
            }
        }
    }
    // Today's options choose rows, columns and lengths of the complete tables.
    full |= quick
        || generic
        || yardsticks
        || !custom.is_empty()
        || !backends.is_empty()
        || !pairs.is_empty();
    if backends.is_empty() {
        backends = Backend::available().collect();
    }
    // Best first, as `Backend::ALL` lists them.
    backends.sort_by_key(|b| Backend::ALL.iter().position(|x| x == b));
    backends.dedup();
    let batch = Duration::from_millis(20);
    let mut sizes = vec![
        Size {
            label: "L1-sized",
            n: 1 << 10,
            budget: Budget { batches: 7, batch },
        },
        Size {
            label: "L2-sized",
            n: 1 << 16,
            budget: Budget { batches: 7, batch },
        },
    ];
    if !quick {
        sizes.push(Size {
            label: "DRAM-sized",
            n: 1 << 24,
            budget: Budget { batches: 5, batch },
        });
    }
    if !custom.is_empty() {
        sizes = custom
            .into_iter()
            .map(|n| Size {
                label: "Chosen",
                n,
                budget: Budget { batches: 5, batch },
            })
            .collect();
    }
    Config {
        sizes,
        backends,
        pairs,
        full,
        generic,
        yardsticks,
    }
}

fn main() {
    let cfg = parse_args();
    let started = Instant::now();
    let load = load_average();

    println!(
        "vcvt {} throughput ({}, {} build)",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::ARCH,
        if cfg!(debug_assertions) {
            "DEBUG -- numbers are meaningless, use --release"
        } else {
            "release"
        }
    );
    if let Some(m) = cpu_model() {
        println!("CPU: {m}");
    }
    let feats = cpu_features();
    let list = |want: bool| {
        let v: Vec<&str> = feats.iter().filter(|f| f.1 == want).map(|f| f.0).collect();
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(" ")
        }
    };
    println!("CPU features: {}", list(true));
    println!("  not present: {}", list(false));
    let env = backend_source();
    println!(
        "backends available: {}; active: {} ({env}); timing: {}",
        Backend::available()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", "),
        Backend::active(),
        if cfg.full {
            cfg.backends
                .iter()
                .map(|b| b.name())
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            format!("{} (--full: every backend)", Backend::active())
        },
    );
    if let Some(l) = &load {
        println!("load average (1 min) at the start: {l}");
    }

    print!(
        "correctness vs scalar (random in-range values, specials, subnormals, ties, random bits; widening: every code; every overflow policy; sub-slices at offsets 0..4): "
    );
    // Flush so that the line is out before a mismatch report on stderr.
    let _ = std::io::stdout().flush();
    all_pairs(&cfg, &mut Phase::Check);
    check_mxfp4(&cfg);
    let others: Vec<&str> = cfg
        .backends
        .iter()
        .filter(|&&b| b != Backend::Scalar)
        .map(|b| b.name())
        .collect();
    if others.is_empty() {
        println!("nothing to check (only scalar selected)");
    } else {
        println!("{} checked", others.join(", "));
    }

    if !cfg.full {
        println!();
        println!("The active backend on the common pairs (--full: every backend, every pair).");
        println!("el/ns = elements converted per ns; GB/s = (bytes read + bytes written) / time;");
        println!("memcpy = copy_from_slice of the same bytes read + written, timed right after;");
        println!("half = the half crate's slice conversion of the same input. Each timed output");
        println!("is compared with scalar's first.");
        let tables: Vec<(Size, Vec<Timed>)> = quick_sizes()
            .into_iter()
            .map(|size| {
                let rows = quick_rows(&size);
                print_quick_table(&size, &rows);
                (size, rows)
            })
            .collect();
        let secs = started.elapsed().as_secs_f64();
        println!();
        println!("Summary (paste into an issue):");
        println!();
        println!("{}", wrap(&summary(&cfg, load, &tables, secs), 100));
        return;
    }

    println!();
    println!("el/ns  = elements converted per nanosecond");
    println!("GB/s   = (source bytes read + destination bytes written) / time, 1 GB = 1e9 bytes");
    println!("memcpy = copy_from_slice of n x (source + destination size) / 2 bytes, i.e. the");
    println!("         same reads + writes as the conversion, timed right after the row's");
    println!("         conversions; its el/ns is n / time, its GB/s counts reads + writes");
    println!("best/memcpy = best backend's GB/s / memcpy's GB/s;  * = the active backend");
    println!("s      = the backend has no SIMD kernel for this pair: it runs the Scalar kernel");
    println!("2      = the pair runs two kernels one after the other (two passes over the data)");
    println!(
        "n      = the pair runs a kernel narrower than the backend's own width (a lower tier's)"
    );
    println!("Each timed output is also compared with scalar's before it is timed.");
    print_simd_pairs(&cfg);
    print_kernel_widths(&cfg);

    if cfg.yardsticks {
        for size in &cfg.sizes {
            yardstick_rows(&cfg, size);
        }
        println!();
        println!("total time {:.1} s", started.elapsed().as_secs_f64());
        return;
    }
    for size in &cfg.sizes {
        print_header(&cfg, size);
        all_pairs(&cfg, &mut Phase::Time(size));
        packed_rows(&cfg, size, 99);
    }
    println!();
    println!("total time {:.1} s", started.elapsed().as_secs_f64());
}
