//! Text benchmarks (issue 16): formatting every finite F16 code with `{}` and parsing the
//! strings back, beside `half::f16` (which goes through f32) and `f32`'s own `Display` and
//! `FromStr` on the same values. Throughput is in values per second.

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use vcvt::F16;

fn codes() -> Vec<u16> {
    (0..=u16::MAX)
        .filter(|&c| F16::from_bits(c).is_finite())
        .collect()
}

fn format_all<T: std::fmt::Display>(xs: &[T], buf: &mut String) -> usize {
    let mut n = 0;
    for x in xs {
        buf.clear();
        write!(buf, "{x}").unwrap();
        n += buf.len();
    }
    n
}

fn text(c: &mut Criterion) {
    let codes = codes();
    let ours: Vec<F16> = codes.iter().map(|&c| F16::from_bits(c)).collect();
    let halfs: Vec<half::f16> = codes.iter().map(|&c| half::f16::from_bits(c)).collect();
    let f32s: Vec<f32> = ours.iter().map(|x| x.to_f32()).collect();
    let strings: Vec<String> = ours.iter().map(|x| x.to_string()).collect();
    let f32_strings: Vec<String> = f32s.iter().map(|x| x.to_string()).collect();

    let mut g = c.benchmark_group("f16_text");
    g.throughput(Throughput::Elements(codes.len() as u64));
    let mut buf = String::new();
    g.bench_function("display/vcvt", |b| {
        b.iter(|| format_all(black_box(&ours), &mut buf))
    });
    g.bench_function("display/half", |b| {
        b.iter(|| format_all(black_box(&halfs), &mut buf))
    });
    g.bench_function("display/f32", |b| {
        b.iter(|| format_all(black_box(&f32s), &mut buf))
    });
    g.bench_function("parse/vcvt", |b| {
        b.iter(|| {
            strings
                .iter()
                .map(|s| s.parse::<F16>().unwrap().to_bits() as u32)
                .sum::<u32>()
        })
    });
    g.bench_function("parse/half", |b| {
        b.iter(|| {
            strings
                .iter()
                .map(|s| s.parse::<half::f16>().unwrap().to_bits() as u32)
                .sum::<u32>()
        })
    });
    g.bench_function("parse/f32", |b| {
        b.iter(|| {
            f32_strings
                .iter()
                .map(|s| s.parse::<f32>().unwrap().to_bits())
                .fold(0u32, u32::wrapping_add)
        })
    });
    g.finish();
}

criterion_group!(benches, text);
criterion_main!(benches);
