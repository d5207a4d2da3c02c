//! The cost of short calls: conversion rate by call length, for callers that convert row by
//! row (issue 29).
//!
//! ```text
//! cargo run --release --example calls                 # the table (about 30 s)
//! cargo run --release --example calls -- --rounds 21  # more rounds, steadier medians
//! ```
//!
//! For f32 → F16, f32 → BF16, f32 → F8E4M3, F8E4M3 → BF16, F16 → f32 and F4E2M1 → BF16, a
//! buffer of 8 Ki values (cache-resident) is converted as consecutive calls of 16, 64, 256
//! and 1024 values, on the active backend, by up to four contenders:
//!
//! * `free`: `vcvt::convert_slice` per call;
//! * `handle`: one [`vcvt::Converter`] made before the loop, `convert` per call;
//! * `half`: the `half` crate's slice conversion per call (f32 ↔ F16, f32 → BF16);
//! * `bare` (f32 → F16): one masked `VCVTPS2PH` per 16 values (AVX-512), or one `VCVTPS2PH`
//!   per 8 (AVX2), in a function called through a pointer, with no checks: the floor of any
//!   library that picks its kernel at run time. `bare ÷ free at 1 Ki` is the most of vcvt's
//!   long-call rate that such a call could keep. F16 → f32 has the same floor with one
//!   `VCVTPH2PS` per 8 values (AVX2 and F16C). For F8E4M3 → BF16 and F4E2M1 → BF16 the
//!   `bare` column is a floor that is not a conversion: the same bytes moved by the cheapest
//!   instruction that widens them (`VPMOVZXBW`, 16 bytes to 16 words per step, AVX2), in a
//!   function called through a pointer; its output is not checked (it is not the
//!   conversion), only its cost matters.
//!
//! and two block formats, one row per call:
//!
//! * MXFP4 → BF16: `free` is `Mx::dequantize` on `Shape::vector(len)` (one scale byte per 32
//!   values; a 16-value row is one short block), `handle` an [`MxRows`] made per length;
//! * block FP8 → BF16 (DeepSeek 128 × 128 tiles): one matrix row of `len` E4M3 codes with
//!   its tile row's `len.div_ceil(128)` f32 scales, `BlockFp8::dequantize` against an
//!   [`Fp8Rows`].
//!
//! Compare the block rows' `handle` column with the element conversions of the same codes
//! (F4E2M1 → BF16, F8E4M3 → BF16): what a row costs beyond an element call of its length.
//!
//! Each round times one batch of every contender at every length, one after the other (so
//! that all see the same machine load), each batch repeating the whole buffer for at least
//! 10 ms; a figure is the median over the rounds (default 11). Rates are elements per
//! nanosecond. The ratio columns divide a contender's rate by the 1024-value rate of the
//! same contender (how much of the long-call rate a short call keeps), and `free`/`half` by
//! `half`'s rate at the same length. Every contender's output is compared with the Scalar
//! backend's before timing.

use std::hint::black_box;
use std::time::{Duration, Instant};

use half::slice::HalfFloatSliceExt as _;
use vcvt::block::{BlockFp8, Fp8Rows, Mx, MxElement, MxRows, Shape};
use vcvt::{BF16, Backend, ConvertTo, Converter, Element, F4E2M1, F8E4M3, F16, Options};

const TOTAL: usize = 8 * 1024;
const LENGTHS: [usize; 4] = [16, 64, 256, 1024];

/// A SplitMix64 stream.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A finite f32 spread over ±2^-12 .. ±2^12 (normal values of every target format).
    fn value(&mut self) -> f32 {
        let r = self.next();
        let m = 1.0 + (r >> 40) as f32 / (1u64 << 24) as f32;
        let e = ((r >> 8) % 25) as i32 - 12;
        let s = if r & 1 == 0 { 1.0 } else { -1.0 };
        s * m * 2f32.powi(e)
    }
}

/// The floor of a call dispatched at run time: f32 → F16 by one masked `VCVTPS2PH` per 16
/// values, in a function called through a pointer (as any runtime-dispatched library must
/// call its kernel), with no length check and no options. Its rate at 16 values bounds
/// what a short call of any such library keeps on this machine.
#[cfg(target_arch = "x86_64")]
mod bare {
    use std::arch::x86_64::*;

    pub type Kernel = unsafe fn(*const f32, *mut u16, usize);

    /// The kernel: AVX-512 F/BW/VL if this CPU has them, else AVX2 and F16C if it has those.
    pub fn kernel() -> Option<Kernel> {
        let avx512 = is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("f16c");
        let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("f16c");
        if avx512 {
            Some(f32_to_f16 as Kernel)
        } else if avx2 {
            Some(f32_to_f16_avx2 as Kernel)
        } else {
            None
        }
    }

    /// F16 → f32 by one `VCVTPH2PS` per 8 values, no checks, if this CPU has AVX2 and F16C.
    pub type Widen16 = unsafe fn(*const u16, *mut f32, usize);

    /// The F16 → f32 floor kernel, if this CPU has AVX2 and F16C.
    pub fn f16_floor() -> Option<Widen16> {
        (is_x86_feature_detected!("avx2") && is_x86_feature_detected!("f16c"))
            .then_some(f16_to_f32_avx2 as Widen16)
    }

    /// # Safety
    /// `src` readable for `len` u16, `dst` writable for `len` f32; the CPU has AVX2 and F16C.
    #[target_feature(enable = "avx2,f16c")]
    unsafe fn f16_to_f32_avx2(src: *const u16, dst: *mut f32, len: usize) {
        let mut i = 0;
        while len - i >= 8 {
            // SAFETY: elements i..i + 8 are inside both buffers (the caller's contract).
            unsafe {
                let h = _mm_loadu_si128(src.add(i).cast());
                _mm256_storeu_ps(dst.add(i), _mm256_cvtph_ps(h));
            }
            i += 8;
        }
        while i < len {
            // SAFETY: element i is inside both buffers.
            unsafe { *dst.add(i) = vcvt::F16::from_bits(*src.add(i)).to_f32() };
            i += 1;
        }
    }

    /// A 1-byte → 2-byte floor that is not a conversion: `VPMOVZXBW`, if this CPU has AVX2.
    pub type Widen = unsafe fn(*const u8, *mut u16, usize);

    /// The floor kernel, if this CPU has AVX2.
    pub fn widen_floor() -> Option<Widen> {
        is_x86_feature_detected!("avx2").then_some(zero_extend as Widen)
    }

    /// # Safety
    /// `src` readable for `len` f32, `dst` writable for `len` u16; the CPU has AVX2 and F16C.
    #[target_feature(enable = "avx2,f16c")]
    unsafe fn f32_to_f16_avx2(src: *const f32, dst: *mut u16, len: usize) {
        let mut i = 0;
        while len - i >= 8 {
            // SAFETY: elements i..i + 8 are inside both buffers (the caller's contract).
            unsafe {
                let x = _mm256_loadu_ps(src.add(i));
                // Immediate 0: round to nearest even, whatever MXCSR says.
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(x);
                _mm_storeu_si128(dst.add(i).cast(), h);
            }
            i += 8;
        }
        while i < len {
            // SAFETY: element i is inside both buffers.
            unsafe { *dst.add(i) = vcvt::F16::from_f32(*src.add(i)).to_bits() };
            i += 1;
        }
    }

    /// # Safety
    /// `src` readable for `len` bytes, `dst` writable for `len` u16; the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn zero_extend(src: *const u8, dst: *mut u16, len: usize) {
        let mut i = 0;
        while len - i >= 16 {
            // SAFETY: elements i..i + 16 are inside both buffers (the caller's contract).
            unsafe {
                let b = _mm_loadu_si128(src.add(i).cast());
                _mm256_storeu_si256(dst.add(i).cast(), _mm256_cvtepu8_epi16(b));
            }
            i += 16;
        }
        while i < len {
            // SAFETY: element i is inside both buffers.
            unsafe { *dst.add(i) = u16::from(*src.add(i)) };
            i += 1;
        }
    }

    /// # Safety
    /// `src` readable for `len` f32, `dst` writable for `len` u16; the CPU has the features.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,f16c")]
    unsafe fn f32_to_f16(src: *const f32, dst: *mut u16, len: usize) {
        let mut i = 0;
        while i < len {
            let k = (((1u32 << (len - i).min(16)) - 1) & 0xFFFF) as u16;
            // SAFETY: the mask covers elements i..min(i + 16, len), inside both buffers
            // (the caller's contract); the features are enabled on this function.
            unsafe {
                let x = _mm512_maskz_loadu_ps(k, src.add(i));
                let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x);
                _mm256_mask_storeu_epi16(dst.add(i).cast(), k, h);
            }
            i += 16;
        }
    }
}

/// One contender: converts the whole buffer in calls of `len` values.
type Run<'a> = Box<dyn FnMut(usize) + 'a>;

/// Times one pass of `run` at `len` (ns per pass), repeating it for at least `batch`.
fn batch(run: &mut Run, len: usize, batch: Duration) -> f64 {
    // Calibrate on one pass, then repeat.
    let t = Instant::now();
    run(len);
    let once = t.elapsed().as_secs_f64().max(1e-7);
    let reps = ((batch.as_secs_f64() / once).ceil() as u64).clamp(1, 1_000_000);
    let t = Instant::now();
    for _ in 0..reps {
        run(len);
    }
    t.elapsed().as_secs_f64() * 1e9 / reps as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The rows of one pair: rate of each contender at each length.
struct PairResult {
    name: &'static str,
    /// `[contender][length]` in el/ns; `None` for a contender that does not convert the pair.
    rates: Vec<Option<[f64; 4]>>,
}

fn time_pair(name: &'static str, mut contenders: Vec<Option<Run>>, rounds: usize) -> PairResult {
    let mut samples: Vec<Vec<Vec<f64>>> = contenders
        .iter()
        .map(|_| vec![Vec::new(); LENGTHS.len()])
        .collect();
    // Warm-up: every contender at every length once.
    for run in contenders.iter_mut().flatten() {
        for len in LENGTHS {
            run(len);
        }
    }
    for _ in 0..rounds {
        for (li, &len) in LENGTHS.iter().enumerate() {
            for (ci, c) in contenders.iter_mut().enumerate() {
                if let Some(run) = c {
                    let ns = batch(run, len, Duration::from_millis(10));
                    samples[ci][li].push(TOTAL as f64 / ns);
                }
            }
        }
    }
    let rates = contenders
        .iter()
        .zip(samples)
        .map(|(c, s)| {
            c.as_ref()
                .map(|_| core::array::from_fn(|li| median(s[li].clone())))
        })
        .collect();
    PairResult { name, rates }
}

/// Checks that `f` writes what the Scalar backend writes for `src`, at every call length.
fn check<S: ConvertTo<D>, D: Element + Default + Copy>(
    what: &str,
    src: &[S],
    mut f: impl FnMut(&[S], &mut [D]),
) {
    let mut want = vec![D::default(); src.len()];
    vcvt::convert_slice_on(Backend::Scalar, src, &mut want, Options::new()).unwrap();
    let bytes = |v: &[D]| -> Vec<u8> {
        // SAFETY: `D` is a plain-old-data element type (f32/f64 or a vcvt code type, all
        // without padding), so its bytes may be read.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
            .to_vec()
    };
    for len in LENGTHS {
        let mut got = vec![D::default(); src.len()];
        for (s, d) in src.chunks(len).zip(got.chunks_mut(len)) {
            f(s, d);
        }
        if bytes(&got) != bytes(&want) {
            eprintln!("MISMATCH: {what} at call length {len} differs from Scalar");
            std::process::exit(1);
        }
    }
}

/// The `free` and `handle` contenders of pair `S -> D` over `src` (and `dst`).
fn vcvt_runs<'a, S: ConvertTo<D>, D: Element + Default + Copy>(
    name: &str,
    src: &'a [S],
    dst: &'a std::cell::RefCell<Vec<D>>,
) -> [Option<Run<'a>>; 2] {
    let conv = Converter::<S, D>::new(Options::new());
    check(&format!("{name} free"), src, |s, d| {
        vcvt::convert_slice(s, d)
    });
    check(&format!("{name} handle"), src, |s, d| conv.convert(s, d));
    let free: Run = Box::new(move |len| {
        let mut d = dst.borrow_mut();
        for (s, d) in src.chunks(len).zip(d.chunks_mut(len)) {
            vcvt::convert_slice(black_box(s), d);
        }
    });
    let handle: Run = Box::new(move |len| {
        let mut d = dst.borrow_mut();
        for (s, d) in src.chunks(len).zip(d.chunks_mut(len)) {
            conv.convert(black_box(s), d);
        }
    });
    [Some(free), Some(handle)]
}

fn main() {
    let mut rounds = 11;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&r: &usize| r > 0)
                    .unwrap_or_else(|| {
                        eprintln!("--rounds needs a positive number");
                        std::process::exit(2)
                    })
            }
            "--bench" => {}
            _ => {
                eprintln!("usage: calls [--rounds N]");
                std::process::exit(2);
            }
        }
    }
    let mut rng = Rng(0x5EED);
    let f32s: Vec<f32> = (0..TOTAL).map(|_| rng.value()).collect();
    let f16s: Vec<F16> = vcvt::convert_to_vec(&f32s);
    let e4m3s: Vec<F8E4M3> = vcvt::convert_to_vec(&f32s);
    let half_f16: Vec<half::f16> = f16s
        .iter()
        .map(|x| half::f16::from_bits(x.to_bits()))
        .collect();

    let d_f16 = std::cell::RefCell::new(vec![F16::ZERO; TOTAL]);
    let d_bf16 = std::cell::RefCell::new(vec![BF16::ZERO; TOTAL]);
    let d_e4m3 = std::cell::RefCell::new(vec![F8E4M3::ZERO; TOTAL]);
    let d_f32 = std::cell::RefCell::new(vec![0f32; TOTAL]);
    let h_f16 = std::cell::RefCell::new(vec![half::f16::ZERO; TOTAL]);
    let h_bf16 = std::cell::RefCell::new(vec![half::bf16::ZERO; TOTAL]);

    println!(
        "vcvt {} on {} (active backend), {TOTAL} values per pass, median of {rounds} rounds",
        env!("CARGO_PKG_VERSION"),
        Backend::active()
    );
    let mut results = Vec::new();

    let [a, b] = vcvt_runs::<f32, F16>("f32 -> f16", &f32s, &d_f16);
    let h: Run = Box::new(|len| {
        let mut d = h_f16.borrow_mut();
        for (s, d) in f32s.chunks(len).zip(d.chunks_mut(len)) {
            d.convert_from_f32_slice(black_box(s));
        }
    });
    #[cfg(target_arch = "x86_64")]
    let bare_run: Option<Run> = bare::kernel().map(|k| {
        let (f32s, d_f16) = (&f32s, &d_f16);
        check("f32 -> f16 bare", f32s, |s: &[f32], d: &mut [F16]| {
            // SAFETY: `s` and `d` hold the same number of values; `kernel` returned `k`
            // only if this CPU has its features.
            unsafe { k(s.as_ptr(), d.as_mut_ptr().cast(), s.len()) }
        });
        let k = black_box(k);
        Box::new(move |len| {
            let mut d = d_f16.borrow_mut();
            for (s, d) in f32s.chunks(len).zip(d.chunks_mut(len)) {
                let s = black_box(s);
                // SAFETY: as above (`chunks` gives equal lengths).
                unsafe { k(s.as_ptr(), d.as_mut_ptr().cast(), s.len()) }
            }
        }) as Run
    });
    #[cfg(not(target_arch = "x86_64"))]
    let bare_run: Option<Run> = None;
    results.push(time_pair(
        "f32 -> F16",
        vec![a, b, Some(h), bare_run],
        rounds,
    ));

    let [a, b] = vcvt_runs::<f32, BF16>("f32 -> bf16", &f32s, &d_bf16);
    let h: Run = Box::new(|len| {
        let mut d = h_bf16.borrow_mut();
        for (s, d) in f32s.chunks(len).zip(d.chunks_mut(len)) {
            d.convert_from_f32_slice(black_box(s));
        }
    });
    results.push(time_pair("f32 -> BF16", vec![a, b, Some(h), None], rounds));

    let [a, b] = vcvt_runs::<f32, F8E4M3>("f32 -> e4m3", &f32s, &d_e4m3);
    results.push(time_pair("f32 -> F8E4M3", vec![a, b, None, None], rounds));

    let [a, b] = vcvt_runs::<F8E4M3, BF16>("e4m3 -> bf16", &e4m3s, &d_bf16);
    let floor = |codes: &'static [u8]| -> Option<Run> {
        #[cfg(target_arch = "x86_64")]
        {
            let k = black_box(bare::widen_floor()?);
            let d_bf16 = &d_bf16;
            Some(Box::new(move |len| {
                let mut d = d_bf16.borrow_mut();
                for (s, d) in codes.chunks(len).zip(d.chunks_mut(len)) {
                    let s = black_box(s);
                    // SAFETY: `s` and `d` hold the same number of elements (`chunks` of the
                    // same length over buffers of TOTAL); `widen_floor` returned `k` only if
                    // this CPU has AVX2.
                    unsafe { k(s.as_ptr(), d.as_mut_ptr().cast(), s.len()) }
                }
            }) as Run)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = codes;
            None
        }
    };
    let e4m3_bytes: &'static [u8] = Box::leak(
        e4m3s
            .iter()
            .map(|c| c.to_bits())
            .collect::<Vec<u8>>()
            .into_boxed_slice(),
    );
    results.push(time_pair(
        "F8E4M3 -> BF16",
        vec![a, b, None, floor(e4m3_bytes)],
        rounds,
    ));

    let [a, b] = vcvt_runs::<F16, f32>("f16 -> f32", &f16s, &d_f32);
    let h: Run = Box::new(|len| {
        let mut d = d_f32.borrow_mut();
        for (s, d) in half_f16.chunks(len).zip(d.chunks_mut(len)) {
            black_box(s).convert_to_f32_slice(d);
        }
    });
    #[cfg(target_arch = "x86_64")]
    let bare_run: Option<Run> = bare::f16_floor().map(|k| {
        let (f16s, d_f32) = (&f16s, &d_f32);
        check("f16 -> f32 bare", f16s, |s: &[F16], d: &mut [f32]| {
            // SAFETY: `s` and `d` hold the same number of values; `f16_floor` returned `k`
            // only if this CPU has its features.
            unsafe { k(s.as_ptr().cast(), d.as_mut_ptr(), s.len()) }
        });
        let k = black_box(k);
        Box::new(move |len| {
            let mut d = d_f32.borrow_mut();
            for (s, d) in f16s.chunks(len).zip(d.chunks_mut(len)) {
                let s = black_box(s);
                // SAFETY: as above (`chunks` gives equal lengths).
                unsafe { k(s.as_ptr().cast(), d.as_mut_ptr(), s.len()) }
            }
        }) as Run
    });
    #[cfg(not(target_arch = "x86_64"))]
    let bare_run: Option<Run> = None;
    results.push(time_pair(
        "F16 -> f32",
        vec![a, b, Some(h), bare_run],
        rounds,
    ));

    // MXFP4 rows: packed codes (2 per byte) and one scale byte per 32 values of each row.
    let codes: Vec<u8> = (0..TOTAL / 2).map(|_| rng.next() as u8).collect();
    let scales: Vec<u8> = (0..TOTAL / 16)
        .map(|_| 120 + (rng.next() % 16) as u8)
        .collect();
    let fp4: Vec<F4E2M1> = (0..TOTAL)
        .map(|i| F4E2M1::from_bits((codes[i / 2] >> (4 * (i % 2))) & 0xF))
        .collect();
    let mx = Mx::new(MxElement::E2M1);
    // One row of `len` values: `len / 2` code bytes and `len.div_ceil(32)` scales.
    let rows = |len: usize| {
        codes
            .chunks(len / 2)
            .zip(scales.chunks(len.div_ceil(32)))
            .zip((0..TOTAL / len).map(move |r| r * len))
    };
    {
        // Check: row by row equals one whole-buffer element conversion times the scales,
        // as the Scalar backend computes it.
        let mut whole = vec![BF16::ZERO; TOTAL];
        let mut row = vec![BF16::ZERO; TOTAL];
        for len in LENGTHS {
            let mxs = Mx::new(MxElement::E2M1).on(Backend::Scalar);
            for ((c, s), at) in rows(len) {
                mxs.dequantize(c, s, Shape::vector(len), &mut whole[at..at + len])
                    .unwrap();
                mx.dequantize(c, s, Shape::vector(len), &mut row[at..at + len])
                    .unwrap();
            }
            if whole
                .iter()
                .zip(&row)
                .any(|(a, b)| a.to_bits() != b.to_bits())
            {
                eprintln!("MISMATCH: MXFP4 rows of {len} differ from Scalar");
                std::process::exit(1);
            }
        }
    }
    let to_bf16 = Converter::<F4E2M1, BF16>::new(Options::new());
    check("e2m1 -> bf16 free", &fp4, |s, d: &mut [BF16]| {
        vcvt::convert_slice(s, d)
    });
    check("e2m1 -> bf16 handle", &fp4, |s, d: &mut [BF16]| {
        to_bf16.convert(s, d)
    });
    let fp4_free: Run = Box::new(|len| {
        let mut d = d_bf16.borrow_mut();
        for (s, d) in fp4.chunks(len).zip(d.chunks_mut(len)) {
            vcvt::convert_slice(black_box(s), d);
        }
    });
    let fp4_handle: Run = Box::new(|len| {
        let mut d = d_bf16.borrow_mut();
        for (s, d) in fp4.chunks(len).zip(d.chunks_mut(len)) {
            to_bf16.convert(black_box(s), d);
        }
    });
    let fp4_bytes: &'static [u8] = Box::leak(
        fp4.iter()
            .map(|c| c.to_bits())
            .collect::<Vec<u8>>()
            .into_boxed_slice(),
    );
    results.push(time_pair(
        "F4E2M1 -> BF16",
        vec![Some(fp4_free), Some(fp4_handle), None, floor(fp4_bytes)],
        rounds,
    ));

    // The row handles, checked like the free function above.
    let mx_rows: Vec<MxRows<BF16>> = LENGTHS.iter().map(|&l| mx.rows(l).unwrap()).collect();
    {
        let mut row = vec![BF16::ZERO; TOTAL];
        let mut whole = vec![BF16::ZERO; TOTAL];
        for (li, len) in LENGTHS.into_iter().enumerate() {
            let mxs = Mx::new(MxElement::E2M1).on(Backend::Scalar);
            for ((c, s), at) in rows(len) {
                mxs.dequantize(c, s, Shape::vector(len), &mut whole[at..at + len])
                    .unwrap();
                mx_rows[li]
                    .dequantize(c, s, &mut row[at..at + len])
                    .unwrap();
            }
            if whole != row {
                eprintln!("MISMATCH: MxRows rows of {len} differ from Scalar");
                std::process::exit(1);
            }
        }
    }
    let block_rows: Run = Box::new(|len| {
        let mut d = d_bf16.borrow_mut();
        for ((c, s), at) in rows(len) {
            mx.dequantize(black_box(c), s, Shape::vector(len), &mut d[at..at + len])
                .unwrap();
        }
    });
    let block_handle: Run = Box::new(|len| {
        let h = mx_rows[LENGTHS.iter().position(|&l| l == len).unwrap()];
        let mut d = d_bf16.borrow_mut();
        for ((c, s), at) in rows(len) {
            h.dequantize(black_box(c), s, &mut d[at..at + len]).unwrap();
        }
    });
    results.push(time_pair(
        "MXFP4 rows -> BF16",
        vec![Some(block_rows), Some(block_handle), None, None],
        rounds,
    ));

    // Block FP8 (DeepSeek, 128 × 128 tiles): one matrix row of `len` E4M3 codes per call,
    // with the `len.div_ceil(128)` f32 scales of its tile row.
    let fp8 = BlockFp8::deepseek();
    let tile_scales: Vec<u8> = (0..TOTAL / 128)
        .flat_map(|i| (0.5f32 + (i % 7) as f32 * 0.125).to_le_bytes())
        .collect();
    let fp8_rows = |len: usize| {
        e4m3s
            .chunks(len)
            .zip(tile_scales.chunks(4 * len.div_ceil(128)))
            .zip((0..TOTAL / len).map(move |r| r * len))
    };
    let fp8_handles: Vec<Fp8Rows<BF16>> = LENGTHS.iter().map(|&l| fp8.rows(l).unwrap()).collect();
    {
        let mut row = vec![BF16::ZERO; TOTAL];
        let mut whole = vec![BF16::ZERO; TOTAL];
        for (li, len) in LENGTHS.into_iter().enumerate() {
            for ((c, s), at) in fp8_rows(len) {
                let c = bytemuck::cast_slice(c);
                fp8.on(Backend::Scalar)
                    .dequantize(c, s, Shape::vector(len), &mut whole[at..at + len])
                    .unwrap();
                fp8_handles[li]
                    .dequantize(c, s, &mut row[at..at + len])
                    .unwrap();
            }
            if whole != row {
                eprintln!("MISMATCH: Fp8Rows rows of {len} differ from Scalar");
                std::process::exit(1);
            }
        }
    }
    let fp8_free: Run = Box::new(|len| {
        let mut d = d_bf16.borrow_mut();
        for ((c, s), at) in fp8_rows(len) {
            let c = bytemuck::cast_slice(black_box(c));
            fp8.dequantize(c, s, Shape::vector(len), &mut d[at..at + len])
                .unwrap();
        }
    });
    let fp8_handle: Run = Box::new(|len| {
        let h = fp8_handles[LENGTHS.iter().position(|&l| l == len).unwrap()];
        let mut d = d_bf16.borrow_mut();
        for ((c, s), at) in fp8_rows(len) {
            let c = bytemuck::cast_slice(black_box(c));
            h.dequantize(c, s, &mut d[at..at + len]).unwrap();
        }
    });
    results.push(time_pair(
        "block FP8 rows -> BF16",
        vec![Some(fp8_free), Some(fp8_handle), None, None],
        rounds,
    ));

    println!();
    println!(
        "| pair | call length | free el/ns | handle el/ns | half el/ns | bare el/ns | free ÷ free at 1 Ki | handle ÷ handle at 1 Ki | bare ÷ free at 1 Ki | free ÷ half |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let opt = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.2}"));
    for r in &results {
        let free = r.rates[0].unwrap();
        let handle = r.rates[1].unwrap();
        let (half, bare) = (r.rates[2], r.rates[3]);
        for (li, len) in LENGTHS.iter().enumerate() {
            println!(
                "| {} | {len} | {:.2} | {:.2} | {} | {} | {:.2} | {:.2} | {} | {} |",
                r.name,
                free[li],
                handle[li],
                opt(half.map(|h| h[li])),
                opt(bare.map(|b| b[li])),
                free[li] / free[3],
                handle[li] / handle[3],
                opt(bare.map(|b| b[li] / free[3])),
                opt(half.map(|h| free[li] / h[li])),
            );
        }
    }

    // The cost of a call split into a fixed part and a part per value: the least-squares
    // line through the nanoseconds per call at 64, 256 and 1024 values (16 is left out: a
    // call of less than one vector, or a short MX block, takes other paths).
    println!();
    println!(
        "| pair | free: ns per call + ns per value | handle: ns per call + ns per value | half: ns per call + ns per value |"
    );
    println!("|---|---:|---:|---:|");
    let fit = |rates: [f64; 4]| {
        let pts: Vec<(f64, f64)> = LENGTHS[1..]
            .iter()
            .zip(&rates[1..])
            .map(|(&l, &r)| (l as f64, l as f64 / r))
            .collect();
        let n = pts.len() as f64;
        let (sx, sy) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
        let (mx, my) = (sx / n, sy / n);
        let sxy: f64 = pts.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
        let sxx: f64 = pts.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
        let b = sxy / sxx;
        format!("{:.1} + {:.4}", my - b * mx, b)
    };
    for r in &results {
        println!(
            "| {} | {} | {} | {} |",
            r.name,
            fit(r.rates[0].unwrap()),
            fit(r.rates[1].unwrap()),
            r.rates[2].map_or("–".to_string(), fit),
        );
    }
}
