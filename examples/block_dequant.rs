//! Block-scaled dequantization beside the plain element widening of the same codes, each
//! pair timed in alternating batches in one process (so both see the same machine load).
//!
//! ```text
//! cargo run --release --example block_dequant [-- FILTER]
//! ```
//!
//! 8 rows × 4096 values quantized from the f32 weights of `examples/block_quant.rs`, on the
//! `avx2` backend (or the active one where there is no `avx2`): NVFP4 (`ModelOpt` and `Mlx`
//! planar, `Ggml` in the `block_nvfp4` layout, which also to f32, what ggml's C writes) and
//! MXFP4 (`Ggml` planar and `block_mxfp4`, `Mlx`, `Ocp`) beside
//! F4E2M1 → BF16 (one code a byte; the f32 lines beside F4E2M1 → f32, the same output
//! bytes), MXFP8 (`Ocp`, `Mlx`) beside F8E4M3 → BF16, and MXFP6 (E2M3, `Ocp`) beside F6E2M3
//! → BF16; every MX line also to f32 and every MX and NVFP4 line to F16, beside its element's
//! widening to f32 or F16. Each line prints the median time per call of both contenders as el/ns and the
//! ratio of the medians (kernel ÷ yardstick rate), then the same of the fastest batch of
//! each (on a machine shared with other work, the batches least disturbed by it); FILTER
//! keeps the lines whose name contains it.
//! `VCVT_AB_BACKEND=<name>` times another backend. `VCVT_AB_BATCHES` sets the batches per contender (default 31, about 4 ms each).
//! Every destination (the kernels' and the yardsticks') starts `VCVT_AB_DST_OFFSET` bytes
//! past a 64-byte line (default 16, where glibc puts a large `Vec`; the header line says
//! which): a store that crosses a line costs more, so the placement is part of the
//! measurement.

use std::hint::black_box;

#[path = "ab/mod.rs"]
mod ab;
use ab::{measure2, weights};
use vcvt::block::{Mx, MxElement, MxLayout, MxProfile, NvLayout, NvProfile, Nvfp4, Shape};
use vcvt::{BF16, F4E2M1, F6E2M3, F8E4M3, F16, Options};

/// The plain widening a block format is timed beside.
#[derive(Clone, Copy)]
enum Yard {
    Fp8,
    Fp6,
    Fp4,
    /// F4E2M1 → f32, beside the f32 destinations.
    Fp4F32,
    /// F8E4M3 → f32.
    Fp8F32,
    /// F6E2M3 → f32.
    Fp6F32,
    /// F4E2M1 → F16, beside the F16 destinations.
    Fp4F16,
    /// F8E4M3 → F16.
    Fp8F16,
    /// F6E2M3 → F16.
    Fp6F16,
}

impl Yard {
    /// The same element's widening to f32, for the f32 lines.
    fn to_f32(self) -> Yard {
        match self {
            Yard::Fp8 | Yard::Fp8F32 | Yard::Fp8F16 => Yard::Fp8F32,
            Yard::Fp6 | Yard::Fp6F32 | Yard::Fp6F16 => Yard::Fp6F32,
            Yard::Fp4 | Yard::Fp4F32 | Yard::Fp4F16 => Yard::Fp4F32,
        }
    }

    /// The same element's widening to F16, for the F16 lines.
    fn to_f16(self) -> Yard {
        match self {
            Yard::Fp8 | Yard::Fp8F32 | Yard::Fp8F16 => Yard::Fp8F16,
            Yard::Fp6 | Yard::Fp6F32 | Yard::Fp6F16 => Yard::Fp6F16,
            Yard::Fp4 | Yard::Fp4F32 | Yard::Fp4F16 => Yard::Fp4F16,
        }
    }
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let batches = ab::batches();
    let b = ab::backend();
    println!(
        "backend {b}, 8 x 4096 values, {batches} batches per contender, destinations {} bytes past a 64-byte line",
        ab::dst_offset()
    );
    let shape = Shape::matrix(8, 4096);
    let n = shape.len();
    let w = weights(n, 3);
    let fp4: Vec<F4E2M1> = w.iter().map(|&x| F4E2M1::from_f32(x)).collect();
    let fp8: Vec<F8E4M3> = w.iter().map(|&x| F8E4M3::from_f32(x)).collect();
    let fp6: Vec<F6E2M3> = w.iter().map(|&x| F6E2M3::from_f32(x)).collect();
    let off = ab::dst_offset();
    let mut yard_out = ab::Placed::<BF16>::new(n, off);
    let mut yard_out32 = ab::Placed::<f32>::new(n, off);
    let mut yard_out_h = ab::Placed::<F16>::new(n, off);
    let mut line = |name: &str, f: &mut dyn FnMut(), yard: Yard| {
        if !name.contains(filter.as_str()) {
            return;
        }
        let o = Options::new();
        let [(tk, ty), (bk, by)] = match yard {
            Yard::Fp8 => measure2(batches, f, &mut || {
                vcvt::convert_slice_on(b, black_box(&fp8), black_box(yard_out.slice()), o).unwrap()
            }),
            Yard::Fp6 => measure2(batches, f, &mut || {
                vcvt::convert_slice_on(b, black_box(&fp6), black_box(yard_out.slice()), o).unwrap()
            }),
            Yard::Fp4 => measure2(batches, f, &mut || {
                vcvt::convert_slice_on(b, black_box(&fp4), black_box(yard_out.slice()), o).unwrap()
            }),
            Yard::Fp4F32 => measure2(batches, f, &mut || {
                vcvt::convert_slice_on(b, black_box(&fp4), black_box(yard_out32.slice()), o)
                    .unwrap()
            }),
            Yard::Fp8F32 => measure2(batches, f, &mut || {
                vcvt::convert_slice_on(b, black_box(&fp8), black_box(yard_out32.slice()), o)
                    .unwrap()
            }),
            Yard::Fp6F32 => measure2(batches, f, &mut || {
                vcvt::convert_slice_on(b, black_box(&fp6), black_box(yard_out32.slice()), o)
                    .unwrap()
            }),
            Yard::Fp4F16 => measure2(batches, f, &mut || {
                vcvt::convert_slice_on(b, black_box(&fp4), black_box(yard_out_h.slice()), o)
                    .unwrap()
            }),
            Yard::Fp8F16 => measure2(batches, f, &mut || {
                vcvt::convert_slice_on(b, black_box(&fp8), black_box(yard_out_h.slice()), o)
                    .unwrap()
            }),
            Yard::Fp6F16 => measure2(batches, f, &mut || {
                vcvt::convert_slice_on(b, black_box(&fp6), black_box(yard_out_h.slice()), o)
                    .unwrap()
            }),
        };
        let yard = match yard {
            Yard::Fp8 => "F8E4M3 -> BF16",
            Yard::Fp6 => "F6E2M3 -> BF16",
            Yard::Fp4 => "F4E2M1 -> BF16",
            Yard::Fp4F32 => "F4E2M1 -> f32 ",
            Yard::Fp8F32 => "F8E4M3 -> f32 ",
            Yard::Fp6F32 => "F6E2M3 -> f32 ",
            Yard::Fp4F16 => "F4E2M1 -> F16 ",
            Yard::Fp8F16 => "F8E4M3 -> F16 ",
            Yard::Fp6F16 => "F6E2M3 -> F16 ",
        };
        println!(
            "{name:24} {:6.3} el/ns   {yard} {:6.3} el/ns   ratio {:5.3}   best batches {:6.3} {:6.3} ratio {:5.3}",
            n as f64 / tk,
            n as f64 / ty,
            ty / tk,
            n as f64 / bk,
            n as f64 / by,
            by / bk
        );
    };
    let mut out16 = ab::Placed::<BF16>::new(n, off);
    let mut out32 = ab::Placed::<f32>::new(n, off);
    let mut out_h = ab::Placed::<F16>::new(n, off);
    for (name, nv) in [
        ("nvfp4_modelopt", Nvfp4::new()),
        ("nvfp4_mlx", Nvfp4::new().profile(NvProfile::Mlx)),
        (
            "nvfp4_ggml_block",
            Nvfp4::new().profile(NvProfile::Ggml).layout(NvLayout::Ggml),
        ),
    ] {
        let mut d = vec![0u8; nv.data_len(shape).unwrap()];
        let mut s = vec![0u8; nv.scales_len(shape).unwrap()];
        let ts = (name == "nvfp4_ggml_block").then_some(1.0);
        let t = nv.quantize(&w, shape, &mut d, &mut s, ts).unwrap();
        let nv = nv.on(b);
        line(
            &format!("{name}_bf16"),
            &mut || {
                nv.dequantize(black_box(&d), &s, t, shape, black_box(out16.slice()))
                    .unwrap();
            },
            Yard::Fp4,
        );
        line(
            &format!("{name}_f16"),
            &mut || {
                nv.dequantize(black_box(&d), &s, t, shape, black_box(out_h.slice()))
                    .unwrap();
            },
            Yard::Fp4F16,
        );
        if name == "nvfp4_ggml_block" {
            line(
                &format!("{name}_f32"),
                &mut || {
                    nv.dequantize(black_box(&d), &s, t, shape, black_box(out32.slice()))
                        .unwrap();
                },
                Yard::Fp4F32,
            );
        }
    }
    let e2m1 = Mx::new(MxElement::E2M1);
    let e4m3 = Mx::new(MxElement::E4M3);
    let e2m3 = Mx::new(MxElement::E2M3);
    for (name, mx, yard) in [
        (
            "mxfp4_ggml_planar",
            e2m1.profile(MxProfile::Ggml),
            Yard::Fp4,
        ),
        (
            "mxfp4_ggml_block",
            e2m1.profile(MxProfile::Ggml).layout(MxLayout::Ggml),
            Yard::Fp4,
        ),
        ("mxfp4_mlx", e2m1.profile(MxProfile::Mlx), Yard::Fp4),
        ("mxfp4_ocp", e2m1.profile(MxProfile::Ocp), Yard::Fp4),
        ("mxfp8_ocp", e4m3.profile(MxProfile::Ocp), Yard::Fp8),
        ("mxfp8_mlx", e4m3.profile(MxProfile::Mlx), Yard::Fp8),
        ("mxfp6_ocp", e2m3, Yard::Fp6),
    ] {
        let mut d = vec![0u8; mx.data_len(shape).unwrap()];
        let mut s = vec![0u8; mx.scales_len(shape).unwrap()];
        mx.quantize(&w, shape, &mut d, &mut s).unwrap();
        let mx = mx.on(b);
        line(
            &format!("{name}_bf16"),
            &mut || {
                mx.dequantize(black_box(&d), &s, shape, black_box(out16.slice()))
                    .unwrap();
            },
            yard,
        );
        line(
            &format!("{name}_f32"),
            &mut || {
                mx.dequantize(black_box(&d), &s, shape, black_box(out32.slice()))
                    .unwrap();
            },
            yard.to_f32(),
        );
        line(
            &format!("{name}_f16"),
            &mut || {
                mx.dequantize(black_box(&d), &s, shape, black_box(out_h.slice()))
                    .unwrap();
            },
            yard.to_f16(),
        );
    }
}
