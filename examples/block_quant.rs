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

// The f32 destination placement (`ab::Placed`) is `block_dequant`'s alone.
#[allow(dead_code)]
#[path = "ab/mod.rs"]
mod ab;
use ab::{measure2, weights};
use vcvt::block::{
    BlockFp8, Fp8Profile, Mx, MxElement, MxLayout, MxProfile, NvLayout, NvProfile, Nvfp4, Shape,
};
use vcvt::{F4E2M1, F8E4M3, Options};

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
    let batches = ab::batches();
    let b = ab::backend();
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
        let [(tk, ty), _] = if fp8 {
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
