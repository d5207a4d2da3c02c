//! The block kernels' introspection (`Mx::quantize_kernel`, `Mx::dequantize_kernel`,
//! `BlockFp8::dequantize_kernel`) tells the truth about the width: on every SIMD backend of
//! this machine, each MX `Ocp`/`Ceil` slot is served at the backend's own width
//! (`Backend::width_bits`), and so is each slot of the `Ggml` and `Mlx` profiles, unless it
//! is listed in [`NARROWER`] with the reason; the paths that have no kernel report `scalar`.

use vcvt::block::{
    BlockDest, BlockFp8, Mx, MxElement, MxLayout, MxProfile, NvLayout, NvProfile, Nvfp4,
};
use vcvt::{BF16, Backend, F16, KernelInfo};

const ELEMENTS: [MxElement; 5] = [
    MxElement::E4M3,
    MxElement::E5M2,
    MxElement::E2M3,
    MxElement::E3M2,
    MxElement::E2M1,
];

/// Slots that a backend serves with a narrower kernel than its own width, and why. A slot
/// that is narrower and not listed here fails the test; so does a listed one that is no
/// longer narrower (the list must stay true).
const NARROWER: &[(&str, &str)] = &[
    // (backend name prefix, slot): reason
    (
        "portable/mx_quant",
        "the portable backend (plain Rust the compiler vectorises) has no block kernels: \
         its block paths run the scalar specification",
    ),
    ("portable/mx_dequant", "as portable/mx_quant"),
    ("portable/fp8_dequant", "as portable/mx_quant"),
    ("portable/fp8_dequant_f32", "as portable/mx_quant"),
    ("portable/profiles", "as portable/mx_quant"),
    ("portable/nvfp4", "as portable/mx_quant"),
    ("portable/fp8_quant", "as portable/mx_quant"),
    (
        "avx512/fp8_dequant_f32",
        "block FP8 dequantization to f32 has no 512-bit kernel: the AVX-512 tiers run the \
         hand-written AVX2 one, which measured as fast as the generic one at 512 bits (the \
         BF16 and F16 destinations have the 512-bit table kernel of \
         src/simd/x86_64/avx512_fp8.rs)",
    ),
];

fn allowed(b: Backend, slot: &str) -> bool {
    let name = b.to_string();
    NARROWER.iter().any(|(key, _)| {
        let (prefix, s) = key.split_once('/').unwrap();
        name.starts_with(prefix) && s == slot
    })
}

fn check(b: Backend, slot: &str, what: &str, info: KernelInfo) {
    let width = b.width_bits();
    assert_eq!(info.passes, 1, "{what} on {b}");
    if allowed(b, slot) {
        assert!(
            info.bits < width,
            "{what} on {b} is listed as narrower but runs {info}: update NARROWER"
        );
    } else {
        assert_eq!(
            info.bits, width,
            "{what} on {b} runs {info}, not a kernel of the backend's {width}-bit width \
             (list it in NARROWER with the reason if that is intended)"
        );
    }
}

fn dequant<D: BlockDest>(b: Backend, mx: Mx, name: &str) {
    let info = mx.on(b).dequantize_kernel::<D>();
    check(
        b,
        "mx_dequant",
        &format!("{mx:?} dequantize to {name}"),
        info,
    );
}

#[test]
fn mx_ocp_ceil_run_at_the_backend_width() {
    for b in Backend::available() {
        for element in ELEMENTS {
            for profile in [MxProfile::Ocp, MxProfile::Ceil] {
                let mx = Mx::new(element).profile(profile);
                let q = mx.on(b).quantize_kernel::<f32>();
                check(b, "mx_quant", &format!("{mx:?} quantize f32"), q);
                dequant::<f32>(b, mx, "f32");
                dequant::<BF16>(b, mx, "BF16");
                dequant::<F16>(b, mx, "F16");
                // BF16/F16 sources run the f32 kernel on their widened values.
                let h = mx.on(b).quantize_kernel::<BF16>();
                check(b, "mx_quant", &format!("{mx:?} quantize BF16"), h);
                let h = mx.on(b).quantize_kernel::<F16>();
                check(b, "mx_quant", &format!("{mx:?} quantize F16"), h);
            }
        }
        // The OCP rules in the ggml layout run the planar E2M1 kernels (each block
        // repacked), and say so.
        for profile in [MxProfile::Ocp, MxProfile::Ceil] {
            let planar = Mx::new(MxElement::E2M1).profile(profile).on(b);
            let ggml = planar.layout(MxLayout::Ggml);
            let what = format!("{ggml:?}");
            check(b, "mx_quant", &what, ggml.quantize_kernel::<f32>());
            check(b, "mx_quant", &what, ggml.quantize_kernel::<BF16>());
            assert_eq!(
                ggml.quantize_kernel::<f32>(),
                planar.quantize_kernel::<f32>()
            );
            for (g, p) in [
                (
                    ggml.dequantize_kernel::<f32>(),
                    planar.dequantize_kernel::<f32>(),
                ),
                (
                    ggml.dequantize_kernel::<BF16>(),
                    planar.dequantize_kernel::<BF16>(),
                ),
                (
                    ggml.dequantize_kernel::<F16>(),
                    planar.dequantize_kernel::<F16>(),
                ),
            ] {
                check(b, "mx_dequant", &what, g);
                assert_eq!(g, p, "{what} on {b}");
            }
        }
    }
}

#[test]
fn fp8_block_dequant_width() {
    for b in Backend::available() {
        let t = BlockFp8::deepseek().on(b);
        check(
            b,
            "fp8_dequant_f32",
            "block FP8 -> f32",
            t.dequantize_kernel::<f32>(),
        );
        check(
            b,
            "fp8_dequant",
            "block FP8 -> BF16",
            t.dequantize_kernel::<BF16>(),
        );
        check(
            b,
            "fp8_dequant",
            "block FP8 -> F16",
            t.dequantize_kernel::<F16>(),
        );
    }
}

#[test]
fn ggml_and_mlx_profiles_run_at_the_backend_width() {
    let fp4 = Mx::new(MxElement::E2M1);
    let formats = [
        fp4.profile(MxProfile::Ggml),
        fp4.profile(MxProfile::Ggml).layout(MxLayout::Ggml),
        fp4.profile(MxProfile::Mlx),
        fp4.profile(MxProfile::Mlx).layout(MxLayout::Ggml),
        Mx::new(MxElement::E4M3).profile(MxProfile::Mlx),
    ];
    for b in Backend::available() {
        for mx in formats {
            let m = mx.on(b);
            let what = |s: &str| format!("{mx:?} {s}");
            check(
                b,
                "profiles",
                &what("quantize f32"),
                m.quantize_kernel::<f32>(),
            );
            check(
                b,
                "profiles",
                &what("quantize BF16"),
                m.quantize_kernel::<BF16>(),
            );
            check(
                b,
                "profiles",
                &what("quantize F16"),
                m.quantize_kernel::<F16>(),
            );
            check(b, "profiles", &what("to f32"), m.dequantize_kernel::<f32>());
            check(
                b,
                "profiles",
                &what("to BF16"),
                m.dequantize_kernel::<BF16>(),
            );
            check(b, "profiles", &what("to F16"), m.dequantize_kernel::<F16>());
        }
    }
}

#[test]
fn scalar_paths_say_scalar() {
    let layout = Mx::new(MxElement::E2M1)
        .layout(MxLayout::Ggml)
        .on(Backend::Scalar);
    assert_eq!(layout.dequantize_kernel::<f32>().to_string(), "scalar");
    assert_eq!(layout.quantize_kernel::<BF16>().to_string(), "scalar");
    let info = Mx::new(MxElement::E2M1)
        .on(Backend::Scalar)
        .quantize_kernel::<f32>();
    assert_eq!((info.isa, info.bits), ("scalar", 0));
}

#[test]
fn nvfp4_and_block_fp8_quantization_run_at_the_backend_width() {
    for b in Backend::available() {
        for layout in [NvLayout::Planar, NvLayout::Ggml] {
            for profile in [NvProfile::ModelOpt, NvProfile::Mlx, NvProfile::Ggml] {
                let nv = Nvfp4::new().profile(profile).layout(layout).on(b);
                let what = |s: &str| format!("NVFP4 {profile:?} {layout:?} {s}");
                check(b, "nvfp4", &what("from f32"), nv.quantize_kernel::<f32>());
                check(b, "nvfp4", &what("from BF16"), nv.quantize_kernel::<BF16>());
                check(b, "nvfp4", &what("from F16"), nv.quantize_kernel::<F16>());
                check(b, "nvfp4", &what("to f32"), nv.dequantize_kernel::<f32>());
                check(b, "nvfp4", &what("to BF16"), nv.dequantize_kernel::<BF16>());
                check(b, "nvfp4", &what("to F16"), nv.dequantize_kernel::<F16>());
            }
        }
        let fp8 = BlockFp8::deepseek().on(b);
        check(
            b,
            "fp8_quant",
            "block FP8 from f32",
            fp8.quantize_kernel::<f32>(),
        );
        check(
            b,
            "fp8_quant",
            "block FP8 from BF16",
            fp8.quantize_kernel::<BF16>(),
        );
        check(
            b,
            "fp8_quant",
            "block FP8 from F16",
            fp8.quantize_kernel::<F16>(),
        );
    }
}
