//! The `rayon` entry points against the serial calls, to find the break-even size
//! (`PAR_MIN_VALUES`) and the speed-up at 64 Mi values.
//!
//! ```text
//! cargo bench --features rayon --bench par                 # everything (about 2 minutes)
//! cargo bench --features rayon --bench par -- f64_to_bf16/  # one pair
//! ```
//!
//! Ids are `<pair>/<n>/<contender>`: `serial` is the serial call, `chunked` the same
//! fixed-chunk split that the `par_*` functions use (`PAR_CHUNK` values per work item, on
//! the global rayon pool) *without* their serial fallback, so that it can be timed below
//! the threshold too; `par` is the public `par_*` function (serial below `PAR_MIN_VALUES`).
//! Throughput is in elements.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use vcvt::block::{Mx, MxElement, Shape};
use vcvt::{BF16, PAR_CHUNK};

const SIZES: [usize; 8] = [
    1 << 15,
    1 << 16,
    1 << 17,
    1 << 18,
    1 << 19,
    1 << 20,
    1 << 22,
    1 << 26,
];

fn input(n: usize) -> Vec<f64> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 100.0
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    for &n in &SIZES {
        let src64 = input(n);
        let src32: Vec<f32> = src64.iter().map(|&x| x as f32).collect();
        let mut dst = vec![BF16::ZERO; n];
        let big = n >= 1 << 22;

        for (pair, f64src) in [("f32_to_bf16", false), ("f64_to_bf16", true)] {
            let mut g = c.benchmark_group(format!("{pair}/{n}"));
            g.throughput(Throughput::Elements(n as u64));
            if big {
                g.sample_size(10).warm_up_time(Duration::from_millis(300));
                g.measurement_time(Duration::from_secs(2));
            } else {
                g.warm_up_time(Duration::from_millis(200));
                g.measurement_time(Duration::from_millis(700));
            }
            g.bench_function("serial", |b| {
                b.iter(|| {
                    if f64src {
                        vcvt::convert_slice(black_box(&src64), &mut dst)
                    } else {
                        vcvt::convert_slice(black_box(&src32), &mut dst)
                    }
                })
            });
            g.bench_function("chunked", |b| {
                b.iter(|| {
                    if f64src {
                        dst.par_chunks_mut(PAR_CHUNK)
                            .zip(black_box(&src64).par_chunks(PAR_CHUNK))
                            .for_each(|(d, s)| vcvt::convert_slice(s, d));
                    } else {
                        dst.par_chunks_mut(PAR_CHUNK)
                            .zip(black_box(&src32).par_chunks(PAR_CHUNK))
                            .for_each(|(d, s)| vcvt::convert_slice(s, d));
                    }
                })
            });
            g.bench_function("par", |b| {
                b.iter(|| {
                    if f64src {
                        vcvt::par_convert_slice(black_box(&src64), &mut dst)
                    } else {
                        vcvt::par_convert_slice(black_box(&src32), &mut dst)
                    }
                })
            });
            g.finish();
        }

        let mx = Mx::new(MxElement::E2M1);
        let mut blocks = vec![0u8; n / 2];
        let mut scales = vec![0u8; n / 32];
        let shape = Shape::vector(n);
        let mut g = c.benchmark_group(format!("f32_to_mxfp4/{n}"));
        g.throughput(Throughput::Elements(n as u64));
        if big {
            g.sample_size(10).warm_up_time(Duration::from_millis(300));
            g.measurement_time(Duration::from_secs(2));
        } else {
            g.warm_up_time(Duration::from_millis(200));
            g.measurement_time(Duration::from_millis(700));
        }
        g.bench_function("serial", |b| {
            b.iter(|| {
                mx.quantize(black_box(&src32), shape, &mut blocks, &mut scales)
                    .unwrap()
            })
        });
        g.bench_function("chunked", |b| {
            b.iter(|| {
                blocks
                    .par_chunks_mut(PAR_CHUNK / 2)
                    .zip(scales.par_chunks_mut(PAR_CHUNK / 32))
                    .zip(black_box(&src32).par_chunks(PAR_CHUNK))
                    .for_each(|((d, s), x)| mx.quantize(x, Shape::vector(x.len()), d, s).unwrap());
            })
        });
        g.bench_function("par", |b| {
            b.iter(|| {
                mx.par_quantize(black_box(&src32), shape, &mut blocks, &mut scales)
                    .unwrap()
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
