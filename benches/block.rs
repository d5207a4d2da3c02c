//! Benchmarks of `vcvt::block` beside the element conversions they are measured against,
//! in the same groups, so that the ratios come from one run:
//!
//! * `mxfp4_to_bf16/N`: MXFP4 dequantization (planar layout, N values) on every backend;
//!   `e4m3_to_bf16-<backend>` (F8E4M3 → BF16 of N values, the yardstick); `memcpy`
//!   of the 2·N bytes the conversion writes; `mistralrs-loop` (a per-byte lookup of
//!   `[[f32; 16]; 256]` into an f32 buffer, then `half::bf16::from_f32` per value: the two
//!   passes mistral.rs's CPU MXFP4 path makes).
//! * `fp8block_to_bf16/N`: DeepSeek block FP8 dequantization (128×128 tiles of a
//!   `N/1024 × 1024` weight), E4M3 → BF16 beside it, and `per-element-loop` (`f32(e4m3) ·
//!   scale`, then `half::bf16::from_f32`, tile by tile, as mistral.rs's blockwise path).
//! * `f32_to_mxfp4/N`, `f32_to_mxfp8/N`: `Ceil` quantization beside f32 → F8E4M3.
//! * `f32_to_fp8block/N`: DeepSeek block FP8 quantization (128×128 tiles of a `N/1024 × 1024`
//!   weight; at 1 Ki one row of 8 tiles) beside f32 → F8E4M3.
//! * `building_blocks/N`: `amax`, `narrow_scaled` (f32 → E4M3, scale 0.75) beside f32 →
//!   F8E4M3, and `dequantize_scaled` (E4M3 → BF16) beside E4M3 → BF16, on every backend.
//!
//! * `fp8_scaled_8x4096/32768` (always, at 8 rows × 4096 values): block FP8 128×128
//!   quantization (`DeepSeek` and `Ue8m0`) beside f32 → F8E4M3, block FP8 dequantization to
//!   BF16 beside F8E4M3 → BF16, `narrow_scaled` (f32 → E4M3, power-of-two scale 0.5, the
//!   fused path; 0.75, the f64 path) beside f32 → F8E4M3, `dequantize_scaled` (E4M3 → BF16,
//!   0.5 and 0.75, both exact in f32) beside F8E4M3 → BF16, the same for E5M2 (scale 0.5)
//!   beside F8E5M2 → BF16, and `amax`, on every SIMD backend.
//! * `mx_quant_8x4096/32768`, `mx_dequant_8x4096/32768`: MXFP4/MXFP8 `Ceil` and `Ocp`
//!   quantization beside f32 → F4E2M1 / F8E4M3, and dequantization to BF16 beside
//!   F4E2M1 / F8E4M3 → BF16, at 8 rows × 4096 values (issue 28's size), every backend; also
//!   MXFP4 → f32 and E5M2, E2M3, E3M2 → BF16 (the `avx2` block table's override list).
//! * `scaled_formats/32768`: `dequantize_scaled` of every scaled format to BF16 under scale
//!   0.5 (the fused path) and 0.1 (`_any_`: the per-call table) beside that format's
//!   widening to BF16, on the active backend and `avx2`.
//! * `scaled_formats_f32/32768`: the same into f32 beside each format's widening to f32.
//! * `scaled_short`: `dequantize_scaled` to BF16 under scale 0.1 of short F8E4M3 and F4E2M1
//!   calls, around the per-call table's threshold.
//! * `nvfp4_to_bf16/32768`: NVFP4 dequantization to BF16 (`ModelOpt`, `Mlx`, `Ggml`; `Ggml`
//!   also to f32, what ggml's C writes) beside F4E2M1 → BF16.
//!
//! Sizes: 1 Ki values (L1) and, with `VCVT_BENCH_BIG=1`, 128 Mi values (beyond this VM's
//! last-level cache). Throughput is in values (elements) per second.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use vcvt::block::{BlockFp8, Mx, MxElement, MxLayout, MxProfile, Shape};
use vcvt::{BF16, Backend, F4E2M1, F8E4M3, Options};

type Group<'a> = BenchmarkGroup<'a, WallTime>;

fn sizes() -> Vec<usize> {
    let mut v = vec![1 << 10];
    if std::env::var_os("VCVT_BENCH_BIG").is_some() {
        v.push(1 << 27);
    }
    v
}

fn open<'a>(c: &'a mut Criterion, name: &str, n: usize) -> Group<'a> {
    let mut g = c.benchmark_group(format!("{name}/{n}"));
    g.throughput(Throughput::Elements(n as u64));
    if n > 1 << 20 {
        g.sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
    }
    g
}

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
}

/// Weights-like f32 values: normal, a spread of magnitudes per block.
fn weights(n: usize, seed: u64) -> Vec<f32> {
    let mut r = Rng(seed);
    (0..n)
        .map(|i| {
            let m = (r.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            m * (1u32 << ((i / 32) % 8)) as f32
        })
        .collect()
}

/// F8E4M3 → BF16 of `n` values on `b`, the yardstick of the dequantizations.
fn e4m3_to_bf16(g: &mut Group, n: usize, b: Backend) {
    let src: Vec<F8E4M3> = weights(n, 1).iter().map(|&x| F8E4M3::from_f32(x)).collect();
    let mut dst = vec![BF16::ZERO; n];
    g.bench_function(format!("e4m3_to_bf16-{b}"), |bench| {
        bench.iter(|| {
            vcvt::convert_slice_on(b, black_box(&src), black_box(&mut dst), Options::new())
        })
    });
}

fn memcpy(g: &mut Group, bytes: usize) {
    let src = vec![0x5Au8; bytes];
    let mut dst = vec![0u8; bytes + 2048];
    // 2 KiB apart in page offset from the source: on the AMD VM a copy whose source and
    // destination share a page offset runs at a fraction of the usual rate.
    let dst = &mut dst[2048..];
    g.bench_function("memcpy", |bench| {
        bench.iter(|| black_box(&mut *dst).copy_from_slice(black_box(&src)))
    });
}

fn bench_mxfp4(c: &mut Criterion, n: usize) {
    let shape = Shape::vector(n);
    let mx = Mx::new(MxElement::E2M1);
    let w = weights(n, 2);
    let mut blocks = vec![0u8; n / 2];
    let mut scales = vec![0u8; n / 32];
    mx.quantize(&w, shape, &mut blocks, &mut scales).unwrap();
    let mut g = open(c, "mxfp4_to_bf16", n);
    let mut out = vec![BF16::ZERO; n];
    for b in Backend::available() {
        g.bench_function(format!("vcvt-{b}"), |bench| {
            bench.iter(|| {
                mx.on(b).dequantize(
                    black_box(&blocks),
                    black_box(&scales),
                    shape,
                    black_box(&mut out),
                )
            })
        });
        e4m3_to_bf16(&mut g, n, b);
    }
    memcpy(&mut g, 2 * n);
    // mistral.rs: a 256 × 16 table of f32 (scale byte × code), f32 output, then to BF16.
    let lut: Vec<[f32; 16]> = (0..256u32)
        .map(|s| {
            let scale = f32::from_bits(s << 23); // 0x00 -> 0.0, 0xFF -> +Inf, as mistral.rs
            let fp4 = [
                0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0,
                -6.0,
            ];
            fp4.map(|v| v * scale)
        })
        .collect();
    let mut tmp = vec![0f32; n];
    let mut out_h = vec![half::bf16::ZERO; n];
    g.bench_function("mistralrs-loop", |bench| {
        bench.iter(|| {
            for ((o, blk), &s) in tmp
                .chunks_mut(32)
                .zip(black_box(&blocks).chunks(16))
                .zip(&scales)
            {
                let t = &lut[s as usize];
                for (pair, &byte) in o.chunks_mut(2).zip(blk) {
                    pair[0] = t[(byte & 0xF) as usize];
                    pair[1] = t[(byte >> 4) as usize];
                }
            }
            for (o, &x) in out_h.iter_mut().zip(&tmp) {
                *o = half::bf16::from_f32(x);
            }
            black_box(&mut out_h);
        })
    });
    g.finish();
}

fn bench_fp8_block(c: &mut Criterion, n: usize) {
    let cols = 1024;
    let rows = n / cols;
    let shape = Shape::matrix(rows, cols);
    let fp8 = BlockFp8::deepseek();
    let w = weights(n, 3);
    let mut data = vec![0u8; n];
    let mut si = vec![0u8; fp8.scale_inv_len(shape).unwrap()];
    fp8.quantize(&w, shape, &mut data, &mut si).unwrap();
    let mut g = open(c, "fp8block_to_bf16", n);
    let mut out = vec![BF16::ZERO; n];
    for b in Backend::available() {
        g.bench_function(format!("vcvt-{b}"), |bench| {
            bench.iter(|| {
                fp8.on(b)
                    .dequantize(black_box(&data), black_box(&si), shape, black_box(&mut out))
            })
        });
        e4m3_to_bf16(&mut g, n, b);
    }
    let scales: Vec<f32> = si
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let tiles = cols.div_ceil(128);
    let mut out_h = vec![half::bf16::ZERO; n];
    g.bench_function("per-element-loop", |bench| {
        bench.iter(|| {
            for (r, (row, o)) in black_box(&data)
                .chunks(cols)
                .zip(out_h.chunks_mut(cols))
                .enumerate()
            {
                for (c, (&x, y)) in row.iter().zip(o.iter_mut()).enumerate() {
                    let s = scales[(r / 128) * tiles + c / 128];
                    *y = half::bf16::from_f32(F8E4M3::from_bits(x).to_f32() * s);
                }
            }
            black_box(&mut out_h);
        })
    });
    g.finish();
}

fn bench_quantize(c: &mut Criterion, n: usize) {
    let shape = Shape::vector(n);
    let w = weights(n, 4);
    for (name, element) in [
        ("f32_to_mxfp4", MxElement::E2M1),
        ("f32_to_mxfp8", MxElement::E4M3),
    ] {
        let mx = Mx::new(element);
        let mut g = open(c, name, n);
        let mut data = vec![0u8; mx.data_len(shape).unwrap()];
        let mut scales = vec![0u8; n / 32];
        let mut q = vec![F8E4M3::ZERO; n];
        for b in Backend::available() {
            g.bench_function(format!("vcvt-{b}"), |bench| {
                bench.iter(|| {
                    mx.on(b).quantize(
                        black_box(&w),
                        shape,
                        black_box(&mut data),
                        black_box(&mut scales),
                    )
                })
            });
            g.bench_function(format!("f32_to_e4m3-{b}"), |bench| {
                bench.iter(|| {
                    vcvt::convert_slice_on(b, black_box(&w), black_box(&mut q), Options::new())
                })
            });
        }
        g.finish();
    }
    let cols = 1024.min(n);
    let shape = Shape::matrix(n / cols, cols);
    let fp8 = BlockFp8::deepseek();
    let mut g = open(c, "f32_to_fp8block", n);
    let mut data = vec![0u8; n];
    let mut si = vec![0u8; fp8.scale_inv_len(shape).unwrap()];
    let mut q = vec![F8E4M3::ZERO; n];
    for b in Backend::available() {
        g.bench_function(format!("vcvt-{b}"), |bench| {
            bench.iter(|| {
                fp8.on(b).quantize(
                    black_box(&w),
                    shape,
                    black_box(&mut data),
                    black_box(&mut si),
                )
            })
        });
        g.bench_function(format!("f32_to_e4m3-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&w), black_box(&mut q), Options::new())
            })
        });
    }
    g.finish();
}

/// The building blocks on every backend beside the plain conversion of the same data.
fn bench_building_blocks(c: &mut Criterion, n: usize) {
    let w = weights(n, 5);
    let mut g = open(c, "building_blocks", n);
    let w64: Vec<f64> = w.iter().map(|&x| f64::from(x)).collect();
    let mut q = vec![F8E4M3::ZERO; n];
    let mut out = vec![BF16::ZERO; n];
    vcvt::convert_slice(&w, &mut q);
    for b in Backend::available() {
        g.bench_function(format!("amax-{b}"), |bench| {
            bench.iter(|| vcvt::block::amax_on(b, black_box(&w)))
        });
        g.bench_function(format!("narrow_scaled_e4m3-{b}"), |bench| {
            bench.iter(|| vcvt::block::narrow_scaled_on(b, black_box(&w), 0.75, black_box(&mut q)))
        });
        g.bench_function(format!("f32_to_e4m3-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&w), black_box(&mut q), Options::new())
            })
        });
        g.bench_function(format!("f64_to_e4m3-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&w64), black_box(&mut q), Options::new())
            })
        });
        g.bench_function(format!("dequantize_scaled_e4m3_bf16-{b}"), |bench| {
            bench.iter(|| {
                vcvt::block::dequantize_scaled_on(b, black_box(&q), 0.75, black_box(&mut out))
            })
        });
        e4m3_to_bf16(&mut g, n, b);
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------
// MX `Ceil`/`Ocp` at issue 28's size: 8 rows × 4096 values
// ---------------------------------------------------------------------------------------

/// `mx_quant_8x4096/32768` and `mx_dequant_8x4096/32768`: MXFP4 and MXFP8 (E4M3) `Ceil` and
/// `Ocp` quantization of 8 rows × 4096 f32 beside f32 → F4E2M1 and f32 → F8E4M3 of the same
/// values, and their dequantization to BF16 beside F4E2M1 → BF16 and F8E4M3 → BF16, on every
/// backend, in one run (issue 28's performance targets).
fn bench_mx_rows(c: &mut Criterion) {
    use vcvt::F4E2M1;
    use vcvt::block::MxProfile;
    let shape = Shape::matrix(8, 4096);
    let n = shape.len();
    let w = weights(n, 6);
    let mut g = open(c, "mx_quant_8x4096", n);
    let mxfp4 = Mx::new(MxElement::E2M1);
    let mxfp8 = Mx::new(MxElement::E4M3);
    let mut d4 = vec![0u8; mxfp4.data_len(shape).unwrap()];
    let mut d8 = vec![0u8; mxfp8.data_len(shape).unwrap()];
    let mut sc = vec![0u8; mxfp4.scales_len(shape).unwrap()];
    let mut q4 = vec![F4E2M1::ZERO; n];
    let mut q8 = vec![F8E4M3::ZERO; n];
    for b in Backend::available() {
        for (name, mx, data) in [("mxfp4", mxfp4, &mut d4), ("mxfp8", mxfp8, &mut d8)] {
            for (p, profile) in [("ceil", MxProfile::Ceil), ("ocp", MxProfile::Ocp)] {
                let mx = mx.profile(profile).on(b);
                g.bench_function(format!("{name}_{p}-{b}"), |bench| {
                    bench.iter(|| {
                        mx.quantize(
                            black_box(&w),
                            shape,
                            black_box(&mut data[..]),
                            black_box(&mut sc),
                        )
                    })
                });
            }
        }
        g.bench_function(format!("f32_to_f4e2m1-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&w), black_box(&mut q4), Options::new())
            })
        });
        g.bench_function(format!("f32_to_e4m3-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&w), black_box(&mut q8), Options::new())
            })
        });
    }
    g.finish();

    let mut g = open(c, "mx_dequant_8x4096", n);
    let mut s4 = vec![0u8; sc.len()];
    let mut s8 = vec![0u8; sc.len()];
    mxfp4.quantize(&w, shape, &mut d4, &mut s4).unwrap();
    mxfp8.quantize(&w, shape, &mut d8, &mut s8).unwrap();
    vcvt::convert_slice(&w, &mut q4);
    vcvt::convert_slice(&w, &mut q8);
    let mut out = vec![BF16::ZERO; n];
    for b in Backend::available() {
        for (name, mx, data, scales) in [("mxfp4", mxfp4, &d4, &s4), ("mxfp8", mxfp8, &d8, &s8)] {
            let mx = mx.on(b);
            g.bench_function(format!("{name}_to_bf16-{b}"), |bench| {
                bench.iter(|| {
                    mx.dequantize(
                        black_box(data),
                        black_box(scales),
                        shape,
                        black_box(&mut out),
                    )
                })
            });
        }
        g.bench_function(format!("f4e2m1_to_bf16-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&q4), black_box(&mut out), Options::new())
            })
        });
        g.bench_function(format!("e4m3_to_bf16-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&q8), black_box(&mut out), Options::new())
            })
        });
        // The other destinations and elements, for the override list of the `avx2` block
        // table (`src/arch/x86_64/block_tables.rs`).
        let mx = mxfp4.on(b);
        let mut out32 = vec![0f32; n];
        g.bench_function(format!("mxfp4_to_f32-{b}"), |bench| {
            bench.iter(|| {
                mx.dequantize(black_box(&d4), black_box(&s4), shape, black_box(&mut out32))
            })
        });
        for (name, element) in [
            ("mxfp8_e5m2", MxElement::E5M2),
            ("mxfp6_e2m3", MxElement::E2M3),
            ("mxfp6_e3m2", MxElement::E3M2),
        ] {
            let mx = Mx::new(element);
            let mut data = vec![0u8; mx.data_len(shape).unwrap()];
            let mut scales = vec![0u8; sc.len()];
            mx.quantize(&w, shape, &mut data, &mut scales).unwrap();
            let mx = mx.on(b);
            g.bench_function(format!("{name}_to_bf16-{b}"), |bench| {
                bench.iter(|| {
                    mx.dequantize(
                        black_box(&data),
                        black_box(&scales),
                        shape,
                        black_box(&mut out),
                    )
                })
            });
        }
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------
// The MX `Ggml` and `Mlx` profiles and the ggml `block_mxfp4` layout (issue 28 item 2)
// ---------------------------------------------------------------------------------------

/// The backends the profile groups run on: the active (best) one, `avx2` where it is not
/// the active one, and `scalar`.
fn profile_backends() -> Vec<Backend> {
    let mut v = vec![Backend::active()];
    #[cfg(target_arch = "x86_64")]
    if Backend::Avx2.is_available() && Backend::active() != Backend::Avx2 {
        v.push(Backend::Avx2);
    }
    v.push(Backend::Scalar);
    v
}

/// The profile formats: (name, format).
fn profile_formats() -> Vec<(&'static str, Mx)> {
    let fp4 = Mx::new(MxElement::E2M1);
    vec![
        ("ggml_planar", fp4.profile(MxProfile::Ggml)),
        (
            "ggml_block",
            fp4.profile(MxProfile::Ggml).layout(MxLayout::Ggml),
        ),
        ("mlx_mxfp4", fp4.profile(MxProfile::Mlx)),
        (
            "mlx_mxfp8",
            Mx::new(MxElement::E4M3).profile(MxProfile::Mlx),
        ),
    ]
}

/// Quantization of 8 rows of `n / 8` f32 under each profile, beside f32 → F4E2M1 and
/// f32 → F8E4M3 (one code per byte) on the same backend.
fn bench_profiles_quant(c: &mut Criterion, n: usize) {
    let shape = Shape::matrix(8, n / 8);
    let w = weights(n, 3);
    let mut g = open(c, "profiles_quant", n);
    for b in profile_backends() {
        for (name, mx) in profile_formats() {
            let mut data = vec![0u8; mx.data_len(shape).unwrap()];
            let mut scales = vec![0u8; mx.scales_len(shape).unwrap()];
            let mx = mx.on(b);
            g.bench_function(format!("{name}-{b}"), |bench| {
                bench.iter(|| mx.quantize(black_box(&w), shape, black_box(&mut data), &mut scales))
            });
        }
        let mut fp4 = vec![F4E2M1::from_bits(0); n];
        g.bench_function(format!("f32_to_f4e2m1-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&w), black_box(&mut fp4), Options::new())
            })
        });
        let mut fp8 = vec![F8E4M3::from_bits(0); n];
        g.bench_function(format!("f32_to_f8e4m3-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&w), black_box(&mut fp8), Options::new())
            })
        });
    }
    g.finish();
}

/// Dequantization to BF16 (and, for the ggml layout, to f32) under each profile, beside
/// F4E2M1 → BF16 and F8E4M3 → BF16 on the same backend.
fn bench_profiles_dequant(c: &mut Criterion, n: usize) {
    let shape = Shape::matrix(8, n / 8);
    let w = weights(n, 4);
    let mut g = open(c, "profiles_dequant", n);
    for b in profile_backends() {
        for (name, mx) in profile_formats() {
            let mut data = vec![0u8; mx.data_len(shape).unwrap()];
            let mut scales = vec![0u8; mx.scales_len(shape).unwrap()];
            mx.quantize(&w, shape, &mut data, &mut scales).unwrap();
            let mx = mx.on(b);
            let mut out = vec![BF16::ZERO; n];
            g.bench_function(format!("{name}_bf16-{b}"), |bench| {
                bench.iter(|| mx.dequantize(black_box(&data), &scales, shape, black_box(&mut out)))
            });
            if name == "ggml_block" {
                let mut out = vec![0f32; n];
                g.bench_function(format!("{name}_f32-{b}"), |bench| {
                    bench.iter(|| {
                        mx.dequantize(black_box(&data), &scales, shape, black_box(&mut out))
                    })
                });
            }
        }
        let fp4: Vec<F4E2M1> = w.iter().map(|&x| F4E2M1::from_f32(x)).collect();
        let mut out = vec![BF16::ZERO; n];
        g.bench_function(format!("f4e2m1_to_bf16-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&fp4), black_box(&mut out), Options::new())
            })
        });
        e4m3_to_bf16(&mut g, n, b);
    }
    g.finish();
}

/// Block FP8 and the scaled building blocks at 8 rows × 4096 values, beside the plain
/// conversions of the same data, on every SIMD backend (issue 28's yardsticks).
fn bench_fp8_scaled_8x4096(c: &mut Criterion) {
    let (rows, cols) = (8, 4096);
    let n = rows * cols;
    let shape = Shape::matrix(rows, cols);
    let w = weights(n, 6);
    let mut g = open(c, "fp8_scaled_8x4096", n);
    let fp8 = BlockFp8::deepseek();
    let mut data = vec![0u8; n];
    let mut si = vec![0u8; fp8.scale_inv_len(shape).unwrap()];
    fp8.quantize(&w, shape, &mut data, &mut si).unwrap();
    let codes: Vec<F8E4M3> = data.iter().map(|&c| F8E4M3::from_bits(c)).collect();
    // E5M2 codes of the same weights (a KV cache's other fp8 format).
    let mut e5m2 = vec![vcvt::F8E5M2::ZERO; n];
    vcvt::convert_slice(&w, &mut e5m2);
    let mut q = vec![F8E4M3::ZERO; n];
    let mut out = vec![BF16::ZERO; n];
    let mut qd = vec![0u8; n];
    let mut qs = vec![0u8; si.len()];
    // The SIMD tiers (`portable` and `scalar` are far slower and not what the ratios are about).
    for b in
        Backend::available().filter(|b| !matches!(b.to_string().as_str(), "scalar" | "portable"))
    {
        g.bench_function(format!("fp8block_quant-{b}"), |bench| {
            bench.iter(|| {
                fp8.on(b)
                    .quantize(black_box(&w), shape, black_box(&mut qd), black_box(&mut qs))
            })
        });
        let ue = fp8.profile(vcvt::block::Fp8Profile::Ue8m0);
        g.bench_function(format!("fp8block_quant_ue8m0-{b}"), |bench| {
            bench.iter(|| {
                ue.on(b)
                    .quantize(black_box(&w), shape, black_box(&mut qd), black_box(&mut qs))
            })
        });
        g.bench_function(format!("f32_to_e4m3-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&w), black_box(&mut q), Options::new())
            })
        });
        g.bench_function(format!("fp8block_to_bf16-{b}"), |bench| {
            bench.iter(|| {
                fp8.on(b)
                    .dequantize(black_box(&data), black_box(&si), shape, black_box(&mut out))
            })
        });
        g.bench_function(format!("e4m3_to_bf16-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&codes), black_box(&mut out), Options::new())
            })
        });
        for scale in [0.5f32, 0.75] {
            g.bench_function(format!("narrow_scaled_e4m3_{scale}-{b}"), |bench| {
                bench.iter(|| {
                    vcvt::block::narrow_scaled_on(b, black_box(&w), scale, black_box(&mut q))
                })
            });
            g.bench_function(
                format!("dequantize_scaled_e4m3_bf16_{scale}-{b}"),
                |bench| {
                    bench.iter(|| {
                        vcvt::block::dequantize_scaled_on(
                            b,
                            black_box(&codes),
                            scale,
                            black_box(&mut out),
                        )
                    })
                },
            );
        }
        g.bench_function(format!("e5m2_to_bf16-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&e5m2), black_box(&mut out), Options::new())
            })
        });
        g.bench_function(format!("dequantize_scaled_e5m2_bf16_0.5-{b}"), |bench| {
            bench.iter(|| {
                vcvt::block::dequantize_scaled_on(b, black_box(&e5m2), 0.5, black_box(&mut out))
            })
        });
        g.bench_function(format!("amax-{b}"), |bench| {
            bench.iter(|| vcvt::block::amax_on(b, black_box(&w)))
        });
    }
    g.finish();
}

/// One format's `dequantize_scaled` (scale 0.5, exact for every format) beside its plain
/// widening to BF16, from the codes of `w` (`zero` fills the buffer first).
fn scaled_format<F>(g: &mut Group, name: &str, zero: F, w: &[f32], b: Backend)
where
    F: vcvt::block::ScaledCode + vcvt::Element + vcvt::ConvertTo<BF16>,
    f32: vcvt::ConvertTo<F>,
{
    let mut codes = vec![zero; w.len()];
    vcvt::convert_slice(w, &mut codes);
    let mut out = vec![BF16::ZERO; w.len()];
    g.bench_function(format!("{name}_to_bf16-{b}"), |bench| {
        bench.iter(|| {
            vcvt::convert_slice_on(b, black_box(&codes), black_box(&mut out), Options::new())
        })
    });
    g.bench_function(format!("dequantize_scaled_{name}-{b}"), |bench| {
        bench.iter(|| {
            vcvt::block::dequantize_scaled_on(b, black_box(&codes), 0.5, black_box(&mut out))
        })
    });
    // 0.1 has 24 significant bits: no format's products are exact f32, so the per-call
    // table serves it.
    g.bench_function(format!("dequantize_scaled_any_{name}-{b}"), |bench| {
        bench.iter(|| {
            vcvt::block::dequantize_scaled_on(b, black_box(&codes), 0.1, black_box(&mut out))
        })
    });
}

fn scaled_format_f32<F>(g: &mut Group, name: &str, zero: F, w: &[f32], b: Backend)
where
    F: vcvt::block::ScaledCode + vcvt::Element + vcvt::ConvertTo<f32>,
    f32: vcvt::ConvertTo<F>,
{
    let mut codes = vec![zero; w.len()];
    vcvt::convert_slice(w, &mut codes);
    let mut out = vec![0f32; w.len()];
    g.bench_function(format!("{name}_to_f32-{b}"), |bench| {
        bench.iter(|| {
            vcvt::convert_slice_on(b, black_box(&codes), black_box(&mut out), Options::new())
        })
    });
    for (tag, scale) in [("", 0.5f32), ("any_", 0.1)] {
        g.bench_function(format!("dequantize_scaled_{tag}{name}-{b}"), |bench| {
            bench.iter(|| {
                vcvt::block::dequantize_scaled_on(b, black_box(&codes), scale, black_box(&mut out))
            })
        });
    }
}

fn bench_scaled_formats_f32(c: &mut Criterion) {
    let n = 1 << 15;
    let w = weights(n, 7);
    let mut g = open(c, "scaled_formats_f32", n);
    for b in nvfp4_backends() {
        scaled_format_f32(&mut g, "e4m3", vcvt::F8E4M3::ZERO, &w, b);
        scaled_format_f32(&mut g, "e5m2", vcvt::F8E5M2::ZERO, &w, b);
        scaled_format_f32(&mut g, "e4m3fnuz", vcvt::F8E4M3FNUZ::ZERO, &w, b);
        scaled_format_f32(&mut g, "e5m2fnuz", vcvt::F8E5M2FNUZ::ZERO, &w, b);
        scaled_format_f32(&mut g, "e2m3", vcvt::F6E2M3::ZERO, &w, b);
        scaled_format_f32(&mut g, "e3m2", vcvt::F6E3M2::ZERO, &w, b);
        scaled_format_f32(&mut g, "e2m1", vcvt::F4E2M1::ZERO, &w, b);
        scaled_format_f32(&mut g, "e8m0", vcvt::F8E8M0::ONE, &w, b);
        scaled_format_f32(&mut g, "e3m4", vcvt::F8E3M4::ZERO, &w, b);
        scaled_format_f32(&mut g, "e4m3ieee", vcvt::F8E4M3IEEE::ZERO, &w, b);
        scaled_format_f32(&mut g, "e4m3b11fnuz", vcvt::F8E4M3B11FNUZ::ZERO, &w, b);
        scaled_format_f32(&mut g, "e5m3fnu", vcvt::F8E5M3FNU::ZERO, &w, b);
    }
    g.finish();
}

/// `dequantize_scaled` to BF16 under scale 0.1 (no fused slot) of short calls on the active
/// backend, at the lengths around the per-call table's threshold: F8E4M3 at 255 values (the
/// two-step route) and 256 (the table), F4E2M1 at 63 and 64, and some on either side. The
/// per-call time on either side of a threshold shows whether the routes are about even
/// there.
fn bench_scaled_short(c: &mut Criterion) {
    let w = weights(512, 11);
    let mut e4m3 = vec![F8E4M3::ZERO; 512];
    let mut e2m1 = vec![F4E2M1::ZERO; 512];
    vcvt::convert_slice(&w, &mut e4m3);
    vcvt::convert_slice(&w, &mut e2m1);
    let mut out = vec![BF16::ZERO; 512];
    let mut g = c.benchmark_group("scaled_short");
    for n in [16, 32, 64, 128, 192, 255, 256, 320, 384, 512] {
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("e4m3/{n}"), |bench| {
            bench.iter(|| vcvt::block::dequantize_scaled(black_box(&e4m3[..n]), 0.1, &mut out[..n]))
        });
    }
    for n in [16, 32, 48, 63, 64, 96, 128] {
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("e2m1/{n}"), |bench| {
            bench.iter(|| vcvt::block::dequantize_scaled(black_box(&e2m1[..n]), 0.1, &mut out[..n]))
        });
    }
    g.finish();
}

/// `dequantize_scaled` of every scaled format beside its widening to BF16, 32 Ki values.
fn bench_scaled_formats(c: &mut Criterion) {
    let n = 1 << 15;
    let w = weights(n, 7);
    let mut g = open(c, "scaled_formats", n);
    for b in nvfp4_backends() {
        scaled_format(&mut g, "e4m3", vcvt::F8E4M3::ZERO, &w, b);
        scaled_format(&mut g, "e5m2", vcvt::F8E5M2::ZERO, &w, b);
        scaled_format(&mut g, "e4m3fnuz", vcvt::F8E4M3FNUZ::ZERO, &w, b);
        scaled_format(&mut g, "e5m2fnuz", vcvt::F8E5M2FNUZ::ZERO, &w, b);
        scaled_format(&mut g, "e2m3", vcvt::F6E2M3::ZERO, &w, b);
        scaled_format(&mut g, "e3m2", vcvt::F6E3M2::ZERO, &w, b);
        scaled_format(&mut g, "e2m1", vcvt::F4E2M1::ZERO, &w, b);
        scaled_format(&mut g, "e8m0", vcvt::F8E8M0::ONE, &w, b);
        scaled_format(&mut g, "e3m4", vcvt::F8E3M4::ZERO, &w, b);
        scaled_format(&mut g, "e4m3ieee", vcvt::F8E4M3IEEE::ZERO, &w, b);
        scaled_format(&mut g, "e4m3b11fnuz", vcvt::F8E4M3B11FNUZ::ZERO, &w, b);
        scaled_format(&mut g, "e5m3fnu", vcvt::F8E5M3FNU::ZERO, &w, b);
    }
    g.finish();
}

/// The backends the NVFP4 groups run on: the active one (the machine's best tier) and, on
/// x86-64, `Avx2` when it is another.
fn nvfp4_backends() -> Vec<Backend> {
    #[allow(unused_mut)]
    let mut v = vec![Backend::active()];
    #[cfg(target_arch = "x86_64")]
    if Backend::Avx2.is_available() && Backend::active() != Backend::Avx2 {
        v.push(Backend::Avx2);
    }
    v
}

/// `nvfp4_to_bf16/N` and `f32_to_nvfp4/N` at N = 8 rows × 4096 values: NVFP4 dequantization
/// to BF16 (`ModelOpt` and `Mlx` planar, `Ggml` in the `block_nvfp4` layout, which also
/// to f32) beside
/// F4E2M1 → BF16 (one code a byte), and quantization (`ModelOpt` and `Mlx` planar, `Ggml`
/// in the `block_nvfp4` layout, the profiles' own tensor scales) beside f32 → F4E2M1, on each
/// backend of [`nvfp4_backends`].
fn bench_nvfp4(c: &mut Criterion) {
    use vcvt::F4E2M1;
    use vcvt::block::{NvLayout, NvProfile, Nvfp4};
    let shape = Shape::matrix(8, 4096);
    let n = shape.len();
    let w = weights(n, 3);
    let kinds = [
        ("modelopt", Nvfp4::new()),
        ("mlx", Nvfp4::new().profile(NvProfile::Mlx)),
        (
            "ggml",
            Nvfp4::new().profile(NvProfile::Ggml).layout(NvLayout::Ggml),
        ),
    ];
    let mut g = open(c, "nvfp4_to_bf16", n);
    let mut out = vec![BF16::ZERO; n];
    let codes: Vec<F4E2M1> = w.iter().map(|&x| F4E2M1::from_f32(x)).collect();
    for b in nvfp4_backends() {
        for (name, nv) in kinds {
            let mut data = vec![0u8; nv.data_len(shape).unwrap()];
            let mut scales = vec![0u8; nv.scales_len(shape).unwrap()];
            let ts = if nv == kinds[2].1 { Some(1.0) } else { None };
            let t = nv.quantize(&w, shape, &mut data, &mut scales, ts).unwrap();
            g.bench_function(format!("{name}-{b}"), |bench| {
                bench.iter(|| {
                    nv.on(b).dequantize(
                        black_box(&data),
                        black_box(&scales),
                        t,
                        shape,
                        black_box(&mut out),
                    )
                })
            });
            if name == "ggml" {
                // f32, what ggml's own `dequantize_row_nvfp4` writes
                // (`scripts/ggml_mxfp4_bench`).
                let mut out = vec![0f32; n];
                g.bench_function(format!("{name}_f32-{b}"), |bench| {
                    bench.iter(|| {
                        nv.on(b).dequantize(
                            black_box(&data),
                            black_box(&scales),
                            t,
                            shape,
                            black_box(&mut out),
                        )
                    })
                });
            }
        }
        g.bench_function(format!("f4e2m1_to_bf16-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&codes), black_box(&mut out), Options::new())
            })
        });
    }
    g.finish();
    let mut g = open(c, "f32_to_nvfp4", n);
    let mut fp4 = vec![F4E2M1::ZERO; n];
    for b in nvfp4_backends() {
        for (name, nv) in &kinds {
            let mut data = vec![0u8; nv.data_len(shape).unwrap()];
            let mut scales = vec![0u8; nv.scales_len(shape).unwrap()];
            g.bench_function(format!("{name}-{b}"), |bench| {
                bench.iter(|| {
                    nv.on(b).quantize(
                        black_box(&w),
                        shape,
                        black_box(&mut data),
                        black_box(&mut scales),
                        None,
                    )
                })
            });
        }
        g.bench_function(format!("f32_to_f4e2m1-{b}"), |bench| {
            bench.iter(|| {
                vcvt::convert_slice_on(b, black_box(&w), black_box(&mut fp4), Options::new())
            })
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    bench_fp8_scaled_8x4096(c);
    bench_scaled_formats(c);
    bench_scaled_formats_f32(c);
    bench_scaled_short(c);
    for n in sizes() {
        bench_mxfp4(c, n);
        bench_fp8_block(c, n);
        bench_quantize(c, n);
        bench_building_blocks(c, n);
    }
    bench_mx_rows(c);
    // 8 rows × 4096 values (issue 28's shape).
    bench_profiles_quant(c, 1 << 15);
    bench_profiles_dequant(c, 1 << 15);
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
    name = block;
    config = config();
    targets = benches
}
criterion_group! {
    name = nvfp4;
    config = config();
    targets = bench_nvfp4
}
criterion_main!(block, nvfp4);
