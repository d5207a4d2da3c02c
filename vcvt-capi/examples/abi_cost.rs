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
        let src: Vec<f32> = (0..n).map(|i| (i as f32 - 31.5) * 0.173).collect();
        let wide: Vec<f32> = src.clone();
        // Each contender writes its own buffer.
        let (mut h, mut h2) = (vec![F16::ZERO; n], vec![F16::ZERO; n]);
        let (mut b, mut b2) = (vec![BF16::ZERO; n], vec![BF16::ZERO; n]);
        let (mut e, mut e2) = (vec![F8E4M3::ZERO; n], vec![F8E4M3::ZERO; n]);
        let (mut back, mut back2) = (vec![0f32; n], vec![0f32; n]);
        vcvt_rs::convert_slice(&src, &mut h);
        let hsrc = h.clone();

        let row = |name: &str, rust: &mut dyn FnMut(), c: &mut dyn FnMut()| {
            let (r, k) = measure(samples, rust, c);
            println!("{name:<22} {n:>6} {r:>10.2} {k:>10.2} {:>8.3}", k / r);
        };
        row(
            "f32 -> f16",
            &mut || vcvt_rs::convert_slice(black_box(&wide[..]), black_box(&mut h[..])),
            &mut || {
                // SAFETY: `wide` holds n f32, `h` room for n f16; distinct buffers.
                let rc = unsafe {
                    convert(
                        black_box(wide.as_ptr().cast()),
                        vcvt::VCVT_F32,
                        black_box(h2.as_mut_ptr().cast()),
                        vcvt::VCVT_F16,
                        n,
                        std::ptr::null(),
                    )
                };
                debug_assert_eq!(rc, 0);
            },
        );
        row(
            "f32 -> bf16",
            &mut || vcvt_rs::convert_slice(black_box(&wide[..]), black_box(&mut b[..])),
            &mut || {
                // SAFETY: as above, n bf16.
                unsafe {
                    convert(
                        black_box(wide.as_ptr().cast()),
                        vcvt::VCVT_F32,
                        black_box(b2.as_mut_ptr().cast()),
                        vcvt::VCVT_BF16,
                        n,
                        std::ptr::null(),
                    )
                };
            },
        );
        row(
            "f16 -> f32",
            &mut || vcvt_rs::convert_slice(black_box(&hsrc[..]), black_box(&mut back[..])),
            &mut || {
                // SAFETY: `hsrc` holds n f16, `back` room for n f32.
                unsafe {
                    convert(
                        black_box(hsrc.as_ptr().cast()),
                        vcvt::VCVT_F16,
                        black_box(back2.as_mut_ptr().cast()),
                        vcvt::VCVT_F32,
                        n,
                        std::ptr::null(),
                    )
                };
            },
        );
        row(
            "f32 -> f8e4m3",
            &mut || vcvt_rs::convert_slice(black_box(&wide[..]), black_box(&mut e[..])),
            &mut || {
                // SAFETY: `wide` holds n f32, `e` room for n bytes.
                unsafe {
                    convert(
                        black_box(wide.as_ptr().cast()),
                        vcvt::VCVT_F32,
                        black_box(e2.as_mut_ptr().cast()),
                        vcvt::VCVT_F8E4M3,
                        n,
                        std::ptr::null(),
                    )
                };
            },
        );
        let opts = vcvt::vcvt_options {
            overflow: vcvt::VCVT_OVERFLOW_SATURATE,
            ..Default::default()
        };
        let ropts = vcvt_rs::Options::new().overflow(vcvt_rs::Overflow::Saturate);
        row(
            "f32 -> f16, options",
            &mut || vcvt_rs::convert_slice_with(black_box(&wide[..]), black_box(&mut h[..]), ropts),
            &mut || {
                // SAFETY: as for f32 -> f16; `opts` is a live vcvt_options.
                unsafe {
                    convert(
                        black_box(wide.as_ptr().cast()),
                        vcvt::VCVT_F32,
                        black_box(h2.as_mut_ptr().cast()),
                        vcvt::VCVT_F16,
                        n,
                        black_box(&opts),
                    )
                };
            },
        );
    }
}
