//! What a call through the C ABI costs against the Rust call, side by side.
//!
//! ```text
//! cargo run --release -p vcvt-capi --example abi_cost [-- --samples 301]
//! ```
//!
//! For each pair and size, the two contenders run alternately in one loop: a sample is the
//! time of a batch of calls (about 20 µs) of one contender, and the samples of the two
//! interleave, so that a load change on the shared machine hits both. Reported: the median
//! nanoseconds per call of each and the ratio of the medians (C / Rust).
//!
//! * Rust: `vcvt::convert_slice(&src, &mut dst)` (or `convert_slice_with` when the C call
//!   passes options), monomorphised into this program as a Rust user's call is.
//! * C: `vcvt_convert(src, VCVT_F32, dst, VCVT_F16, n, NULL)` through a function pointer that
//!   the optimiser cannot see through (`black_box`), as a C program calls the library: every
//!   check, the dtype dispatch and the panic guard included. (A C program calling the shared
//!   library adds one PLT jump; one linking `libvcvt.a` does not.)
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

/// Median of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times `rust` and `c` alternately; returns their median ns per call.
fn measure(samples: usize, mut rust: impl FnMut(), mut c: impl FnMut()) -> (f64, f64) {
    // Batch size: about 20 µs of the Rust call.
    let t = Instant::now();
    let mut calls = 0u32;
    while t.elapsed().as_micros() < 2000 {
        rust();
        c();
        calls += 1;
    }
    let per = t.elapsed().as_nanos() as f64 / f64::from(calls) / 2.0;
    let batch = ((20_000.0 / per) as usize).max(1);
    let (mut r, mut k) = (Vec::with_capacity(samples), Vec::with_capacity(samples));
    for s in 0..samples {
        // Alternate which contender goes first, too.
        for turn in 0..2 {
            let first_rust = (s + turn) % 2 == 0;
            let t = Instant::now();
            if first_rust {
                for _ in 0..batch {
                    rust();
                }
            } else {
                for _ in 0..batch {
                    c();
                }
            }
            let ns = t.elapsed().as_nanos() as f64 / batch as f64;
            if first_rust { r.push(ns) } else { k.push(ns) }
        }
    }
    (median(&mut r), median(&mut k))
}

/// One row of the table: `S -> D` over `src`, the Rust call against `vcvt_convert` through
/// `convert`, both reading the same source and writing the same destination (so that the
/// buffers' addresses, and their 4 KiB aliasing, are the same for both).
#[allow(clippy::too_many_arguments)]
fn pair<S: vcvt_rs::ConvertTo<D>, D: vcvt_rs::Element + Default>(
    name: &str,
    samples: usize,
    convert: ConvertFn,
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
    let rust = || {
        // SAFETY: `sp` and `dp` point to `n` values of `S` and `D` in `src` and `dst`, which
        // outlive the closure and are accessed only through these pointers meanwhile.
        let (s, d) = unsafe {
            (
                std::slice::from_raw_parts(black_box(sp), n),
                std::slice::from_raw_parts_mut(black_box(dp), n),
            )
        };
        if options.is_some() {
            vcvt_rs::convert_slice_with(s, d, ropts);
        } else {
            vcvt_rs::convert_slice(s, d);
        }
    };
    let c = || {
        // SAFETY: as above; the C function reads `n` values at `sp` and writes `n` at `dp`.
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
    let (r, k) = measure(samples, rust, c);
    println!("{name:<22} {n:>6} {r:>10.2} {k:>10.2} {:>8.3}", k / r);
    drop(dst);
}

fn main() {
    let mut samples = 301;
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--samples") {
        samples = args[i + 1].parse().expect("--samples N");
    }
    let convert: ConvertFn = black_box(vcvt::vcvt_convert as ConvertFn);
    println!(
        "backend {}; {samples} samples per contender; load average {}",
        vcvt_rs::Backend::active(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!(
        "{:<22} {:>6} {:>10} {:>10} {:>8}",
        "pair", "n", "Rust ns", "C ns", "C/Rust"
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
        pair::<f32, F16>("f32 -> f16", samples, convert, &wide, f32_, f16_, None);
        pair::<f32, BF16>("f32 -> bf16", samples, convert, &wide, f32_, bf16_, None);
        pair::<F16, f32>("f16 -> f32", samples, convert, &half, f16_, f32_, None);
        pair::<f32, F8E4M3>("f32 -> f8e4m3", samples, convert, &wide, f32_, e4m3, None);
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
            &wide,
            f32_,
            f16_,
            Some(sat),
        );
    }
}
