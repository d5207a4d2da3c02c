//! Block-scaled quantization beside the plain element narrowing of the same values, each
//! pair timed in alternating batches in one process (so both see the same machine load).
//!
//! ```text
//! cargo run --release --example block_quant [-- FILTER]
//! ```
//!
//! 8 rows × 4096 f32 weights (the values of `benches/block.rs`), on the `avx2` backend (or
//! the active one where there is no `avx2`): NVFP4 (`ModelOpt` with its own tensor scale,
//! `Mlx`, `Ggml` planar and in `block_nvfp4`s), MXFP4 under the `Ggml` (planar and `block_mxfp4`), `Mlx`, `Ceil` and `Ocp`
//! profiles beside f32 → F4E2M1, MXFP8 (`Mlx`, `Ceil`, `Ocp`) and block FP8 128 × 128
//! (`DeepSeek`, `Ue8m0`) beside f32 → F8E4M3. On x86-64 with AVX2 one more line times a
//! loop that only divides the same values by a constant (`VDIVPS`, one per 8 values, the
//! results stored) beside f32 → F4E2M1: the bound that one IEEE division per value puts on
//! a quantization that needs it. Each line prints the median time per call of both
//! contenders as el/ns and the ratio of the medians (kernel ÷ yardstick rate); FILTER keeps
//! the lines whose name contains it. `VCVT_AB_BACKEND=<name>` times another backend.
//! `VCVT_AB_BATCHES` sets the batches per contender
//! (default 31, about 4 ms each).

use std::hint::black_box;
use std::time::{Duration, Instant};

use vcvt::block::{
    BlockFp8, Fp8Profile, Mx, MxElement, MxLayout, MxProfile, NvLayout, NvProfile, Nvfp4, Shape,
};
use vcvt::{Backend, F4E2M1, F8E4M3, Options};

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

/// Weights-like f32 values: normal, a spread of magnitudes per block (`benches/block.rs`).
fn weights(n: usize, seed: u64) -> Vec<f32> {
    let mut r = Rng(seed);
    (0..n)
        .map(|i| {
            let m = (r.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            m * (1u32 << ((i / 32) % 8)) as f32
        })
        .collect()
}

/// Median nanoseconds per call of `f` and of `g`, their batches alternating.
fn measure2(batches: usize, f: &mut dyn FnMut(), g: &mut dyn FnMut()) -> (f64, f64) {
    let reps = |h: &mut dyn FnMut()| {
        let start = Instant::now();
        let mut calls = 0u64;
        while calls == 0 || start.elapsed() < Duration::from_millis(5) {
            h();
            calls += 1;
        }
        let per_call = start.elapsed().as_secs_f64() / calls as f64;
        ((0.004 / per_call).ceil() as u64).max(1)
    };
    let (rf, rg) = (reps(f), reps(g));
    let batch = |h: &mut dyn FnMut(), r: u64| {
        let t = Instant::now();
        for _ in 0..r {
            h();
        }
        t.elapsed().as_secs_f64() * 1e9 / r as f64
    };
    let (mut tf, mut tg) = (Vec::new(), Vec::new());
    for _ in 0..batches {
        tf.push(batch(f, rf));
        tg.push(batch(g, rg));
    }
    tf.sort_by(f64::total_cmp);
    tg.sort_by(f64::total_cmp);
    (tf[tf.len() / 2], tg[tg.len() / 2])
}

/// Divides every value of `w` by `d` into `out`, 8 at a time with `VDIVPS`.
///
/// # Safety
/// The CPU has AVX; `out` is as long as `w`, a multiple of 8.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn divide_all(w: &[f32], d: f32, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let dv = _mm256_set1_ps(d);
    for (x, y) in w.chunks_exact(8).zip(out.chunks_exact_mut(8)) {
        // SAFETY: both chunks hold 8 f32.
        unsafe {
            let q = _mm256_div_ps(_mm256_loadu_ps(x.as_ptr()), dv);
            _mm256_storeu_ps(y.as_mut_ptr(), q);
        }
    }
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let batches: usize = std::env::var("VCVT_AB_BATCHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(31);
    // `VCVT_AB_BACKEND=<name>` picks another available backend (an unknown or unavailable
    // name is an error, not a silent fallback).
    let b = match std::env::var("VCVT_AB_BACKEND") {
        Ok(name) => {
            let b: Backend = name
                .parse()
                .unwrap_or_else(|e| panic!("VCVT_AB_BACKEND: {e}"));
            assert!(
                b.is_available(),
                "VCVT_AB_BACKEND: {b} is not available on this CPU"
            );
            b
        }
        Err(_) => Backend::available()
            .find(|b| b.to_string() == "avx2")
            .unwrap_or_else(Backend::active),
    };
    println!("backend {b}, 8 x 4096 f32, {batches} batches per contender");
    let shape = Shape::matrix(8, 4096);
    let n = shape.len();
    let w = weights(n, 3);
    let mut q4 = vec![F4E2M1::ZERO; n];
    let mut q8 = vec![F8E4M3::ZERO; n];
    let mut line = |name: &str, f: &mut dyn FnMut(), fp8: bool| {
        if !name.contains(filter.as_str()) {
            return;
        }
        let (tk, ty) = if fp8 {
            measure2(batches, f, &mut || {
                vcvt::convert_slice_on(b, black_box(&w), black_box(&mut q8), Options::new())
                    .unwrap()
            })
        } else {
            measure2(batches, f, &mut || {
                vcvt::convert_slice_on(b, black_box(&w), black_box(&mut q4), Options::new())
                    .unwrap()
            })
        };
        let yard = if fp8 {
            "f32 -> F8E4M3"
        } else {
            "f32 -> F4E2M1"
        };
        println!(
            "{name:22} {:6.3} el/ns   {yard} {:6.3} el/ns   ratio {:5.3}",
            n as f64 / tk,
            n as f64 / ty,
            ty / tk
        );
    };
    for (name, nv) in [
        ("nvfp4_modelopt", Nvfp4::new()),
        ("nvfp4_mlx", Nvfp4::new().profile(NvProfile::Mlx)),
        ("nvfp4_ggml_planar", Nvfp4::new().profile(NvProfile::Ggml)),
        (
            "nvfp4_ggml_block",
            Nvfp4::new().profile(NvProfile::Ggml).layout(NvLayout::Ggml),
        ),
    ] {
        let (mut d, mut s) = (
            vec![0u8; nv.data_len(shape).unwrap()],
            vec![0u8; nv.scales_len(shape).unwrap()],
        );
        let nv = nv.on(b);
        line(
            name,
            &mut || {
                nv.quantize(black_box(&w), shape, black_box(&mut d), &mut s, None)
                    .unwrap();
            },
            false,
        );
    }
    let fp4 = Mx::new(MxElement::E2M1);
    let fp8 = Mx::new(MxElement::E4M3);
    for (name, mx, is_fp8) in [
        ("mxfp4_ggml_planar", fp4.profile(MxProfile::Ggml), false),
        (
            "mxfp4_ggml_block",
            fp4.profile(MxProfile::Ggml).layout(MxLayout::Ggml),
            false,
        ),
        ("mxfp4_mlx", fp4.profile(MxProfile::Mlx), false),
        ("mxfp4_ceil", fp4.profile(MxProfile::Ceil), false),
        ("mxfp4_ocp", fp4.profile(MxProfile::Ocp), false),
        ("mxfp8_mlx", fp8.profile(MxProfile::Mlx), true),
        ("mxfp8_ceil", fp8.profile(MxProfile::Ceil), true),
        ("mxfp8_ocp", fp8.profile(MxProfile::Ocp), true),
    ] {
        let mut d = vec![0u8; mx.data_len(shape).unwrap()];
        let mut s = vec![0u8; mx.scales_len(shape).unwrap()];
        let mx = mx.on(b);
        line(
            name,
            &mut || {
                mx.quantize(black_box(&w), shape, black_box(&mut d), &mut s)
                    .unwrap();
            },
            is_fp8,
        );
    }
    for (name, t) in [
        ("fp8block_deepseek", BlockFp8::deepseek()),
        (
            "fp8block_ue8m0",
            BlockFp8::deepseek().profile(Fp8Profile::Ue8m0),
        ),
    ] {
        let mut d = vec![0u8; n];
        let mut s = vec![0u8; t.scale_inv_len(shape).unwrap()];
        let t = t.on(b);
        line(
            name,
            &mut || {
                t.quantize(black_box(&w), shape, black_box(&mut d), &mut s)
                    .unwrap();
            },
            true,
        );
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        let mut out = vec![0f32; n];
        line(
            "vdivps_only",
            &mut || {
                // SAFETY: AVX was detected; `out` is as long as `w`, 8 x 4096 values.
                unsafe { divide_all(black_box(&w), black_box(0.37), black_box(&mut out)) }
            },
            false,
        );
    }
}
