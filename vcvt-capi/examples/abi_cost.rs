//! What a call through the C ABI costs against the Rust call, side by side.
//!
//! ```text
//! cargo run --release -p vcvt-capi --example abi_cost [-- --samples 301]
//! ```
//!
//! For each pair and size, four contenders run in turn in one loop: a sample is the time of
//! a batch of calls (about 20 µs) of one contender, the samples interleave (the first one
//! rotates), so that a load change on the shared machine hits all. Reported: the median
//! nanoseconds per call of each and ratios of the medians.
//!
//! * `slice`: `vcvt::convert_slice(&src, &mut dst)` (or `convert_slice_with` when the C call
//!   passes options), monomorphised into this program as a Rust user's call is;
//! * `Conv`: `vcvt::Converter::<S, D>::convert`, the handle made once before the loop;
//! * `floor`: `Converter::convert` inside an `extern "C"` function that cannot be inlined,
//!   called through a function pointer, with no checks: what any call into a library costs
//!   beyond the inlined Rust call;
//! * `C conv`: `vcvt_convert(src, VCVT_F32, dst, VCVT_F16, n, NULL)` through a function
//!   pointer that the optimiser cannot see through (`black_box`), as a C program calls the
//!   library: every check, the dtype dispatch and the panic guard included;
//! * `C run`: `vcvt_converter_run(&handle, src, dst, n)` likewise, the handle made once by
//!   `vcvt_converter_init`.
//!
//! (A C program calling the shared library adds one PLT jump; one linking `libvcvt.a` does
//! not.)
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{c_int, c_void};
use std::hint::black_box;
use std::time::Instant;

use vcvt_rs::{BF16, F8E4M3, F16};

type ConvertFn = unsafe extern "C" fn(
    *const c_void,
    c_int,
    *mut c_void,
    c_int,
    usize,
    *const vcvt::vcvt_options,
) -> c_int;

type RunFn =
    unsafe extern "C" fn(*const vcvt::vcvt_converter, *const c_void, *mut c_void, usize) -> c_int;

/// `Converter::convert` behind a call that cannot be inlined, with no checks of its own: the
/// least a call into a library through a function pointer can cost (the floor under
/// `vcvt_converter_run`, which adds its checks to this).
///
/// # Safety
/// `s` and `d` point to `n` values of `S` and `D`, not overlapping.
#[inline(never)]
unsafe extern "C" fn out_of_line<S: vcvt_rs::ConvertTo<D>, D: vcvt_rs::Element>(
    c: &vcvt_rs::Converter<S, D>,
    s: *const S,
    d: *mut D,
    n: usize,
) {
    // SAFETY: the caller's contract.
    let (s, d) = unsafe {
        (
            std::slice::from_raw_parts(s, n),
            std::slice::from_raw_parts_mut(d, n),
        )
    };
    c.convert(s, d);
}

/// Median of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times the contenders in turn, a batch of calls each, rotating which goes first; returns
/// each one's median ns per call.
fn measure(samples: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let k = fs.len();
    // Batch size: about 20 µs of the first contender.
    let t = Instant::now();
    let mut calls = 0u32;
    while t.elapsed().as_micros() < 2000 {
        for f in fs.iter_mut() {
            f();
        }
        calls += 1;
    }
    let per = t.elapsed().as_nanos() as f64 / f64::from(calls) / k as f64;
    let batch = ((20_000.0 / per) as usize).max(1);
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(samples); k];
    for s in 0..samples {
        for turn in 0..k {
            let j = (s + turn) % k;
            let t = Instant::now();
            for _ in 0..batch {
                fs[j]();
            }
            times[j].push(t.elapsed().as_nanos() as f64 / batch as f64);
        }
    }
    times.iter_mut().map(|v| median(v)).collect()
}

/// One row of the table: `S -> D` over `src`, four contenders reading the same source and
/// writing the same destination (so that the buffers' addresses, and their 4 KiB aliasing,
/// are the same for all).
#[allow(clippy::too_many_arguments)]
fn pair<S: vcvt_rs::ConvertTo<D>, D: vcvt_rs::Element + Default>(
    name: &str,
    samples: usize,
    convert: ConvertFn,
    run: RunFn,
    src: &[S],
    c_src: c_int,
    c_dst: c_int,
    options: Option<(vcvt_rs::Options, vcvt::vcvt_options)>,
) {
    let n = src.len();
    let mut dst = vec![D::default(); n];
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
    let (ropts, copts) = match options {
        Some((r, c)) => (r, Some(c)),
        None => (vcvt_rs::Options::new(), None),
    };
    let copts_ptr = copts
        .as_ref()
        .map_or(std::ptr::null(), |o| o as *const vcvt::vcvt_options);
    let conv = vcvt_rs::Converter::<S, D>::new(ropts);
    let mut handle = std::mem::MaybeUninit::<vcvt::vcvt_converter>::uninit();
    // SAFETY: `handle` is valid for one write; `copts_ptr` is NULL or points to `copts`.
    let rc = unsafe { vcvt::vcvt_converter_init(handle.as_mut_ptr(), c_src, c_dst, copts_ptr) };
    assert_eq!(rc, 0, "vcvt_converter_init");
    // SAFETY: initialised by the successful call above.
    let handle = unsafe { handle.assume_init() };
    let hp: *const vcvt::vcvt_converter = &handle;
    // SAFETY (all four): `sp` and `dp` point to `n` values of `S` and `D` in `src` and `dst`,
    // which outlive the closures and are accessed only through these pointers meanwhile.
    let slices = || unsafe {
        (
            std::slice::from_raw_parts(black_box(sp), n),
            std::slice::from_raw_parts_mut(black_box(dp), n),
        )
    };
    let mut rust_slice = || {
        let (s, d) = slices();
        if options.is_some() {
            vcvt_rs::convert_slice_with(s, d, ropts);
        } else {
            vcvt_rs::convert_slice(s, d);
        }
    };
    let mut rust_conv = || {
        let (s, d) = slices();
        black_box(&conv).convert(s, d);
    };
    type Bare<S, D> = unsafe extern "C" fn(&vcvt_rs::Converter<S, D>, *const S, *mut D, usize);
    let bare: Bare<S, D> = black_box(out_of_line::<S, D> as Bare<S, D>);
    let mut rust_bare = || {
        // SAFETY: as above.
        unsafe { bare(black_box(&conv), black_box(sp), black_box(dp), n) };
    };
    let mut c_convert = || {
        // SAFETY: the C function reads `n` values at `sp` and writes `n` at `dp`.
        let rc = unsafe {
            convert(
                black_box(sp.cast()),
                c_src,
                black_box(dp.cast()),
                c_dst,
                n,
                black_box(copts_ptr),
            )
        };
        debug_assert_eq!(rc, 0);
    };
    let mut c_run = || {
        // SAFETY: as above; `hp` points to the initialised handle.
        let rc = unsafe { run(black_box(hp), black_box(sp.cast()), black_box(dp.cast()), n) };
        debug_assert_eq!(rc, 0);
    };
    let t = measure(
        samples,
        &mut [
            &mut rust_slice,
            &mut rust_conv,
            &mut rust_bare,
            &mut c_convert,
            &mut c_run,
        ],
    );
    println!(
        "{name:<20} {n:>5} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
        t[0],
        t[1],
        t[2],
        t[3],
        t[4],
        t[4] / t[1],
        t[2] / t[1],
        t[4] / t[0],
        t[3] / t[0]
    );
    drop(dst);
}

fn main() {
    let mut samples = 301;
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--samples") {
        samples = args[i + 1].parse().expect("--samples N");
    }
    let convert: ConvertFn = black_box(vcvt::vcvt_convert as ConvertFn);
    let run: RunFn = black_box(vcvt::vcvt_converter_run as RunFn);
    println!(
        "backend {}; {samples} samples per contender; load average {}",
        vcvt_rs::Backend::active(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!("median ns per call; ratios of medians");
    println!(
        "{:<20} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9}",
        "pair",
        "n",
        "slice",
        "Conv",
        "floor",
        "C conv",
        "C run",
        "run/Conv",
        "floor/Conv",
        "run/slice",
        "conv/slice"
    );
    for &n in &[64usize, 1024] {
        let wide: Vec<f32> = (0..n).map(|i| (i as f32 - 31.5) * 0.173).collect();
        let half: Vec<F16> = vcvt_rs::convert_to_vec(&wide);
        let (f32_, f16_, bf16_, e4m3) = (
            vcvt::VCVT_F32,
            vcvt::VCVT_F16,
            vcvt::VCVT_BF16,
            vcvt::VCVT_F8E4M3,
        );
        pair::<f32, F16>("f32 -> f16", samples, convert, run, &wide, f32_, f16_, None);
        pair::<f32, BF16>(
            "f32 -> bf16",
            samples,
            convert,
            run,
            &wide,
            f32_,
            bf16_,
            None,
        );
        pair::<F16, f32>("f16 -> f32", samples, convert, run, &half, f16_, f32_, None);
        pair::<f32, F8E4M3>(
            "f32 -> f8e4m3",
            samples,
            convert,
            run,
            &wide,
            f32_,
            e4m3,
            None,
        );
        let sat = (
            vcvt_rs::Options::new().overflow(vcvt_rs::Overflow::Saturate),
            vcvt::vcvt_options {
                overflow: vcvt::VCVT_OVERFLOW_SATURATE,
                ..Default::default()
            },
        );
        pair::<f32, F16>(
            "f32 -> f16, options",
            samples,
            convert,
            run,
            &wide,
            f32_,
            f16_,
            Some(sat),
        );
    }
}
