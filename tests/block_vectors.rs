//! `vcvt::block` against third-party known answers: every line of every file in
//! `tests/data/block/` (or in the directory `VCVT_BLOCK_VECTORS` names, where
//! `.ci/block_refs.sh` writes vectors made with a fresh random seed).
//!
//! The files come from `scripts/gen_block_vectors.py`: gguf 0.19's numpy MXFP4/NVFP4, mlx
//! 0.32.4's `mx.quantize`/`mx.dequantize` (CPU), and numpy statements of the vcvt profiles
//! (OCP, Ceil, ModelOpt NVFP4, DeepSeek block FP8) whose element roundings are ml_dtypes'
//! casts. See `tests/data/block/README.md` for the columns. Every line runs on every
//! backend this CPU has.

mod common;

use std::path::{Path, PathBuf};

use vcvt::block::{
    BlockFp8, Fp8Profile, Mx, MxElement, MxLayout, MxProfile, NvLayout, NvProfile, Nvfp4, Shape,
};
use vcvt::{BF16, Backend, F16};

/// Files whose scheme vcvt implements, by name prefix (the rest of the name is the profile).
fn scheme(name: &str) -> Option<Scheme> {
    let mx = |e, p| Some(Scheme::Mx(Mx::new(e).profile(p)));
    match name {
        "mxfp4_ocp" => mx(MxElement::E2M1, MxProfile::Ocp),
        "mxfp4_ceil" => mx(MxElement::E2M1, MxProfile::Ceil),
        "mxfp6e2m3_ocp" => mx(MxElement::E2M3, MxProfile::Ocp),
        "mxfp6e2m3_ceil" => mx(MxElement::E2M3, MxProfile::Ceil),
        "mxfp6e3m2_ocp" => mx(MxElement::E3M2, MxProfile::Ocp),
        "mxfp6e3m2_ceil" => mx(MxElement::E3M2, MxProfile::Ceil),
        "mxfp8e4m3_ocp" => mx(MxElement::E4M3, MxProfile::Ocp),
        "mxfp8e4m3_ceil" => mx(MxElement::E4M3, MxProfile::Ceil),
        "mxfp8e5m2_ocp" => mx(MxElement::E5M2, MxProfile::Ocp),
        "mxfp8e5m2_ceil" => mx(MxElement::E5M2, MxProfile::Ceil),
        "nvfp4_modelopt" => Some(Scheme::Nv(Nvfp4::new())),
        "mxfp4_mlx" => mx(MxElement::E2M1, MxProfile::Mlx),
        "nvfp4_mlx" => Some(Scheme::Nv(Nvfp4::new().profile(NvProfile::Mlx))),
        "mxfp4_ggml_c" => Some(Scheme::Mx(
            Mx::new(MxElement::E2M1)
                .profile(MxProfile::Ggml)
                .layout(MxLayout::Ggml),
        )),
        "nvfp4_ggml_c" | "nvfp4_gguf" => Some(Scheme::Nv(
            Nvfp4::new().profile(NvProfile::Ggml).layout(NvLayout::Ggml),
        )),
        "mxfp8_mlx" => mx(MxElement::E4M3, MxProfile::Mlx),
        "mxfp4_gguf" => Some(Scheme::Mx(
            Mx::new(MxElement::E2M1)
                .profile(MxProfile::Ggml)
                .layout(MxLayout::Ggml),
        )),
        _ => {
            let rest = name.strip_prefix("fp8_deepseek_")?;
            let (profile, tile) = match rest.strip_prefix("ue8m0_") {
                Some(t) => (Fp8Profile::Ue8m0, t),
                None => (Fp8Profile::DeepSeek, rest),
            };
            let (r, c) = tile.split_once('x')?;
            Some(Scheme::Fp8(
                BlockFp8::new(r.parse().ok()?, c.parse().ok()?).profile(profile),
            ))
        }
    }
}

/// Lines where two references disagree and the profile follows the other one: llama.cpp's
/// C MXFP4 quantizer skips a NaN lane when taking a block's amax, gguf 0.19's numpy mirror
/// (the `Ggml` profile's reference) propagates it. These lines (named by their note) must
/// differ, so that the documented difference stays true.
const KNOWN_DIFFERENT: &[(&str, &str)] = &[("mxfp4_ggml_c", "NaN lane")];

/// Reference files whose rules vcvt does not implement yet (the `Ggml` and `Mlx`
/// profiles). Listed so that a new file cannot be skipped silently.
const NOT_YET: &[&str] = &[
    "mxfp4_gguf",
    "nvfp4_gguf",
    "mxfp4_mlx",
    "mxfp8_mlx",
    "nvfp4_mlx",
];

#[derive(Clone, Copy)]
enum Scheme {
    Mx(Mx),
    Nv(Nvfp4),
    Fp8(BlockFp8),
}

impl Scheme {
    fn on(self, b: Backend) -> Scheme {
        match self {
            Scheme::Mx(m) => Scheme::Mx(m.on(b)),
            Scheme::Nv(n) => Scheme::Nv(n.on(b)),
            Scheme::Fp8(f) => Scheme::Fp8(f.on(b)),
        }
    }
}

fn hex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn f32_field(s: &str) -> Option<f32> {
    (s != "-").then(|| f32::from_bits(u32::from_str_radix(s, 16).unwrap()))
}

fn to_f32s(dtype: &str, b: &[u8]) -> Vec<f32> {
    match dtype {
        "f32" => b
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        "bf16" => b
            .chunks(2)
            .map(|c| BF16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32())
            .collect(),
        "f16" => b
            .chunks(2)
            .map(|c| F16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32())
            .collect(),
        _ => panic!("dtype {dtype}"),
    }
}

/// Runs `f` with the source as the dtype the line names (BF16/F16 sources are passed as
/// such, not as f32, so that their path is the one tested).
fn quantize(
    s: Scheme,
    dtype: &str,
    src: &[u8],
    shape: Shape,
    t_in: Option<f32>,
) -> (Vec<u8>, Vec<u8>, Option<f32>) {
    macro_rules! run {
        ($v:expr) => {{
            let v = $v;
            match s {
                Scheme::Mx(m) => {
                    let mut d = vec![0u8; m.data_len(shape).unwrap()];
                    let mut sc = vec![0u8; m.scales_len(shape).unwrap()];
                    m.quantize(&v, shape, &mut d, &mut sc).unwrap();
                    (d, sc, None)
                }
                Scheme::Nv(n) => {
                    let mut d = vec![0u8; n.data_len(shape).unwrap()];
                    let mut sc = vec![0u8; n.scales_len(shape).unwrap()];
                    let g = n.quantize(&v, shape, &mut d, &mut sc, t_in).unwrap();
                    (d, sc, Some(g))
                }
                Scheme::Fp8(f) => {
                    let mut d = vec![0u8; f.data_len(shape).unwrap()];
                    let mut sc = vec![0u8; f.scale_inv_len(shape).unwrap()];
                    f.quantize(&v, shape, &mut d, &mut sc).unwrap();
                    (d, sc, None)
                }
            }
        }};
    }
    let bits16 = |b: &[u8]| -> Vec<u16> {
        b.chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    };
    match dtype {
        "f32" => run!(to_f32s("f32", src)),
        "bf16" => run!(
            bits16(src)
                .into_iter()
                .map(BF16::from_bits)
                .collect::<Vec<_>>()
        ),
        "f16" => run!(
            bits16(src)
                .into_iter()
                .map(F16::from_bits)
                .collect::<Vec<_>>()
        ),
        _ => panic!("dtype {dtype}"),
    }
}

fn dequantize(
    s: Scheme,
    dtype: &str,
    data: &[u8],
    scales: &[u8],
    t: Option<f32>,
    shape: Shape,
) -> Vec<u8> {
    macro_rules! run {
        ($zero:expr, $bytes:expr) => {{
            let mut out = vec![$zero; shape.len()];
            match s {
                Scheme::Mx(m) => m.dequantize(data, scales, shape, &mut out).unwrap(),
                Scheme::Nv(n) => {
                    let t = t.unwrap_or(n.identity_tensor_scale());
                    n.dequantize(data, scales, t, shape, &mut out).unwrap()
                }
                Scheme::Fp8(f) => f.dequantize(data, scales, shape, &mut out).unwrap(),
            }
            out.iter().flat_map($bytes).collect::<Vec<u8>>()
        }};
    }
    match dtype {
        "f32" => run!(0f32, |x: &f32| x.to_le_bytes()),
        "bf16" => run!(BF16::ZERO, |x: &BF16| x.to_bits().to_le_bytes()),
        "f16" => run!(F16::ZERO, |x: &F16| x.to_bits().to_le_bytes()),
        _ => panic!("dtype {dtype}"),
    }
}

fn dir() -> PathBuf {
    std::env::var_os("VCVT_BLOCK_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/block"))
}

#[test]
fn every_reference_vector() {
    let dir = dir();
    println!("vectors from {}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tsv"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 20,
        "expected the reference files in {}",
        dir.display()
    );
    let backends = common::backends("block_vectors");
    let (mut lines, mut failures) = (0usize, Vec::new());
    for path in &files {
        let name = path.file_stem().unwrap().to_str().unwrap();
        let Some(scheme) = scheme(name) else {
            assert!(
                NOT_YET.contains(&name),
                "{name}: a reference file this test does not know"
            );
            println!("NOT YET IMPLEMENTED: {name}");
            continue;
        };
        let text = std::fs::read_to_string(path).unwrap();
        for (ln, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.starts_with('#'))
        {
            let f: Vec<&str> = line.split('\t').collect();
            let (dtype, rows, cols) = (f[1], f[2].parse().unwrap(), f[3].parse().unwrap());
            let shape = Shape::matrix(rows, cols);
            for &b in &backends {
                let s = scheme.on(b);
                lines += 1;
                let ok = if f[0] == "q" {
                    let (d, sc, g) = quantize(s, dtype, &hex(f[4]), shape, f32_field(f[5]));
                    let g_ok = match f32_field(f[8]) {
                        Some(w) => g.map(f32::to_bits) == Some(w.to_bits()),
                        None => true,
                    };
                    d == hex(f[6]) && sc == hex(f[7]) && g_ok
                } else {
                    let got = dequantize(s, dtype, &hex(f[4]), &hex(f[5]), f32_field(f[6]), shape);
                    let want = hex(f[7]);
                    // NaN lanes: the references' NaN bits are compared as they are.
                    got == want
                };
                let known = KNOWN_DIFFERENT
                    .iter()
                    .any(|(file, note)| *file == name && line.contains(note));
                if known {
                    assert!(
                        !ok,
                        "{name}:{}: expected to differ from the reference",
                        ln + 1
                    );
                    continue;
                }
                if !ok && failures.len() < 20 {
                    failures.push(format!(
                        "{name}:{} [{b:?}] {}",
                        ln + 1,
                        &line[..line.len().min(160)]
                    ));
                }
            }
        }
    }
    println!("{lines} line x backend checks");
    assert!(
        failures.is_empty(),
        "{} mismatches, first:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
