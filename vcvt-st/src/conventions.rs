//! The scaled-FP8 and packed-NVFP4 conventions of compressed-tensors (vLLM, llm-compressor),
//! FBGEMM and NVIDIA ModelOpt, read from the checkpoint itself: `config.json`'s
//! `quantization_config` (its method, and the block of block-scaled FP8) and the companion
//! tensors beside each weight. DeepSeek block FP8 (`weight_scale_inv`), gpt-oss MXFP4
//! (`_blocks`, `_scales`) and ModelOpt NVFP4/MXFP8 (`weight_scale` E4M3/E8M0) are recognised
//! in `plan.rs`. The rules (vcvt-st/README.md, "Conventions"):
//!
//! * **Scaled FP8** (compressed-tensors `float-quantized`, FBGEMM `fbgemm_fp8`, ModelOpt
//!   `FP8`): `W` F8_E4M3 `[N, K]` and `W_scale` (F32, BF16 or F16) of shape `[]`/`[1]`
//!   (per tensor), `[N, 1]`/`[N]` (per channel, FBGEMM's layout), `[N, G]` with `K = G·g`
//!   (groups of `g` along a row) or `[⌈N/bn⌉, ⌈K/bk⌉]` (blocks of `bn × bk`, from
//!   `weight_block_size` or the weights' `block_structure`, else `--fp8-block`). A value is
//!   `f32(e4m3) · f32(scale)`, rounded to f32, then to the target.
//! * **compressed-tensors NVFP4** (`nvfp4-pack-quantized`): `W_packed` uint8 `[N, K/2]`
//!   (element 2j in the low nibble), `W_scale` F8_E4M3 `[N, K/16]`, `W_global_scale` F32 of
//!   one value; the output is `W`. A value is `e2m1 · f32(f32(scale) / global_scale)`, rounded
//!   to f32, then to the target.
//!
//! Activation scales of a quantized layer (`input_scale`, `input_global_scale`,
//! `input_scale_ub`, `output_scale` beside its `weight`) are dropped with the weight's
//! quantization and copied with it. A zero point, a method vcvt-st does not know, or scales of
//! the wrong dtype or shape are errors that name the tensor and what was expected.

use std::collections::BTreeMap;
use std::path::Path;

use safetensors::Dtype;

use crate::sizes;
use crate::tensor::Tensor;

/// The `quant_method`s whose tensors vcvt-st reads.
pub(crate) const METHODS: &[&str] = &[
    "fp8",
    "compressed-tensors",
    "fbgemm_fp8",
    "modelopt",
    "mxfp4",
];

/// compressed-tensors `format`s whose tensors vcvt-st reads (`dense` is unquantized).
const CT_FORMATS: &[&str] = &[
    "float-quantized",
    "naive-quantized",
    "nvfp4-pack-quantized",
    "dense",
];

/// Names of the activation scales of a layer (beside its `weight`).
const ACTIVATION: &[&str] = &[
    "input_scale",
    "input_global_scale",
    "input_scale_ub",
    "output_scale",
];

/// What `config.json` says about quantization.
#[derive(Clone, Debug, Default)]
pub(crate) struct QuantInfo {
    /// `quantization_config.quant_method`.
    pub method: Option<String>,
    /// The block of block-scaled FP8 (rows, columns), if the config gives one.
    pub block: Option<(usize, usize)>,
}

/// Reads `config.json` of a directory checkpoint (nothing for a file): an error if it is
/// not a regular file holding a JSON object, or if its `quantization_config` names a method
/// or format vcvt-st does not know.
pub(crate) fn read_config(dir: Option<&Path>) -> Result<QuantInfo, String> {
    let Some(dir) = dir else {
        return Ok(QuantInfo::default());
    };
    let path = dir.join("config.json");
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(QuantInfo::default()),
        Err(e) => return Err(format!("{}: {e}", crate::escape::path(&path))),
    };
    if !meta.is_file() {
        return Err(format!(
            "{}: is {}, not a JSON file",
            crate::escape::path(&path),
            crate::paths::kind(&meta.file_type())
        ));
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e}", crate::escape::path(&path)))?;
    parse_config(&text, &path)
}

/// The rules of [`read_config`] on the text of `config.json` (`path` names it in messages).
pub(crate) fn parse_config(text: &str, path: &Path) -> Result<QuantInfo, String> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("{}: invalid JSON: {e}", crate::escape::path(path)))?;
    if !v.is_object() {
        return Err(format!("{}: not a JSON object", crate::escape::path(path)));
    }
    let Some(qc) = v.get("quantization_config") else {
        return Ok(QuantInfo::default());
    };
    let bad = |what: String| format!("{}: quantization_config: {what}", crate::escape::path(path));
    let method = qc
        .get("quant_method")
        .and_then(|m| m.as_str())
        .ok_or_else(|| bad("no `quant_method` string".into()))?;
    if !METHODS.contains(&method) {
        return Err(bad(format!(
            "quant_method `{}`: vcvt-st does not know this convention (it reads {})",
            crate::escape::text(method),
            METHODS.join(", ")
        )));
    }
    let mut formats = vec![qc.get("format")];
    let groups = qc.get("config_groups").and_then(|g| g.as_object());
    formats.extend(
        groups
            .into_iter()
            .flat_map(|g| g.values().map(|c| c.get("format"))),
    );
    for f in formats.into_iter().flatten() {
        if let Some(f) = f.as_str()
            && method == "compressed-tensors"
            && !CT_FORMATS.contains(&f)
        {
            return Err(bad(format!(
                "compressed-tensors format `{}`: vcvt-st does not read it (it reads {})",
                crate::escape::text(f),
                CT_FORMATS.join(", ")
            )));
        }
    }
    let pair = |b: &serde_json::Value| -> Option<(usize, usize)> {
        let a = b.as_array()?;
        match a.as_slice() {
            [r, c] => Some((r.as_u64()? as usize, c.as_u64()? as usize)),
            _ => None,
        }
    };
    let mut block = None;
    let blocks =
        std::iter::once(qc.get("weight_block_size")).chain(groups.into_iter().flat_map(|g| {
            g.values()
                .map(|c| c.get("weights").and_then(|w| w.get("block_structure")))
        }));
    for b in blocks.flatten() {
        if b.is_null() {
            continue;
        }
        let p = pair(b)
            .filter(|&(r, c)| (1..=1 << 20).contains(&r) && (1..=1 << 20).contains(&c))
            .ok_or_else(|| bad(format!("block {b}: not two sizes of 1 to 1048576")))?;
        if block.is_some_and(|q| q != p) {
            return Err(bad(format!(
                "two different FP8 blocks ({:?} and {p:?}): vcvt-st reads one",
                block.unwrap()
            )));
        }
        block = Some(p);
    }
    Ok(QuantInfo {
        method: Some(method.to_string()),
        block,
    })
}

/// How a recognised group dequantizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Scaled FP8: tile `(rows, cols)` of one scale each; `what` names the granularity.
    Fp8 {
        tile: (usize, usize),
        what: &'static str,
    },
    /// compressed-tensors NVFP4 with its global scale.
    NvCt { global: String },
}

/// A weight of one of this module's conventions.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    /// The input tensor of codes (`W`, or `W_packed`).
    pub codes: String,
    /// The output tensor's name when dequantized (`W`).
    pub out: String,
    /// The scale tensor.
    pub scale: String,
    pub kind: Kind,
    /// `rows × cols` of the dequantized matrix.
    pub rows: usize,
    pub cols: usize,
    /// Activation scales of the same layer.
    pub activation: Vec<String>,
}

impl Group {
    /// Every input tensor of the group but the codes.
    pub(crate) fn companions(&self) -> Vec<String> {
        let mut v = vec![self.scale.clone()];
        if let Kind::NvCt { global } = &self.kind {
            v.push(global.clone());
        }
        v.extend(self.activation.iter().cloned());
        v
    }
}

/// The groups of the checkpoint, by codes tensor, and the owner of each companion.
#[derive(Default)]
pub(crate) struct Found {
    pub groups: BTreeMap<String, Group>,
    pub owner: BTreeMap<String, String>,
}

fn shape_str(s: &[usize]) -> String {
    format!("{s:?}")
}

/// Finds the groups of this module's conventions (`fp8_block` is the block of block-scaled
/// FP8 when `info` gives none), and refuses every quantized-looking tensor that belongs to
/// no convention vcvt-st knows. `modelopt` says whether a tensor is the weight of a ModelOpt
/// NVFP4/MXFP8 group (recognised in `plan.rs`).
pub(crate) fn find(
    where_is: &dyn Fn(&Tensor) -> String,
    tensors: &BTreeMap<String, Tensor>,
    info: &QuantInfo,
    fp8_block: usize,
    modelopt: &dyn Fn(&str, &Tensor) -> bool,
) -> Result<Found, String> {
    let mut found = Found::default();
    let at = where_is;
    let n_ = crate::escape::text;
    for (name, t) in tensors {
        if let Some(zp) = name.strip_suffix("_zero_point")
            && tensors.contains_key(zp)
        {
            return Err(format!(
                "{}: tensor `{}`: a zero point (asymmetric quantization of `{}`), which vcvt-st does not read",
                at(t),
                n_(name),
                n_(zp)
            ));
        }
        if let Some(base) = name.strip_suffix("_packed") {
            let scale = format!("{base}_scale");
            let global = format!("{base}_global_scale");
            let (s, g) = (tensors.get(&scale), tensors.get(&global));
            let n = t.shape.len();
            let ok = match (s, g) {
                (Some(s), Some(g)) => {
                    let k2 = if n == 2 { t.shape[1] } else { 0 };
                    let cols = k2.checked_mul(2);
                    t.dtype == Dtype::U8
                        && n == 2
                        && s.dtype == Dtype::F8_E4M3
                        && g.dtype == Dtype::F32
                        && sizes::product(name, "", &g.shape) == Ok(1)
                        && cols.is_some_and(|c| c % 16 == 0 && s.shape == [t.shape[0], c / 16])
                }
                _ => false,
            };
            if !ok {
                let desc = |x: Option<&Tensor>| {
                    x.map_or("missing".to_string(), |x| {
                        format!("{} {}", x.dtype, shape_str(&x.shape))
                    })
                };
                return Err(format!(
                    "{}: tensor `{}` ({} {}), `{}` ({}), `{}` ({}): not compressed-tensors NVFP4, which needs uint8 [N, K/2], F8_E4M3 [N, K/16] and F32 of one value",
                    at(t),
                    n_(name),
                    t.dtype,
                    shape_str(&t.shape),
                    n_(&scale),
                    desc(s),
                    n_(&global),
                    desc(g)
                ));
            }
            if tensors.contains_key(base) {
                return Err(format!(
                    "{}: tensor `{}` would dequantize to `{}`, which the checkpoint already has",
                    at(t),
                    n_(name),
                    n_(base)
                ));
            }
            found.groups.insert(
                name.clone(),
                Group {
                    codes: name.clone(),
                    out: base.to_string(),
                    scale,
                    kind: Kind::NvCt { global },
                    rows: t.shape[0],
                    cols: t.shape[1] * 2,
                    activation: Vec::new(),
                },
            );
            continue;
        }
        let scale = format!("{name}_scale");
        let Some(s) = tensors.get(&scale) else {
            continue;
        };
        if modelopt(name, t) {
            continue;
        }
        // Two float tensors (a model's own `x` and `x_scale` parameters): no quantization.
        let float = |d: Dtype| matches!(d, Dtype::F32 | Dtype::BF16 | Dtype::F16 | Dtype::F64);
        if float(t.dtype) && float(s.dtype) {
            continue;
        }
        if t.dtype == Dtype::U8
            && s.dtype == Dtype::F8_E4M3
            && t.shape.last().is_some_and(|k| k.checked_mul(2).is_none())
        {
            return Err(format!(
                "{}: tensor `{}` (U8 {}) with NVFP4 scales `{}`: its dequantized last dimension, twice {}, overflows",
                at(t),
                n_(name),
                shape_str(&t.shape),
                n_(&scale),
                t.shape.last().unwrap()
            ));
        }
        if t.dtype != Dtype::F8_E4M3 || !matches!(s.dtype, Dtype::F32 | Dtype::BF16 | Dtype::F16) {
            return Err(format!(
                "{}: tensor `{}` ({} {}) with `{}` ({} {}): no convention vcvt-st knows (scaled FP8: F8_E4M3 weight, F32/BF16/F16 scale; ModelOpt NVFP4: uint8 [N, K/2] weight, F8_E4M3 [N, K/16] scale and F32 `{}_scale_2`; MXFP8: F8_E4M3 [..., K] weight, uint8 [..., K/32] scale)",
                at(t),
                n_(name),
                t.dtype,
                shape_str(&t.shape),
                n_(&scale),
                s.dtype,
                shape_str(&s.shape),
                n_(name)
            ));
        }
        if t.shape.len() != 2 {
            return Err(format!(
                "{}: tensor `{}` (F8_E4M3 {}) with `{}`: scaled FP8 weights are 2-D [N, K] here",
                at(t),
                n_(name),
                shape_str(&t.shape),
                n_(&scale)
            ));
        }
        let (rows, cols) = (t.shape[0], t.shape[1]);
        let ones = sizes::product(name, "", &s.shape) == Ok(1) && s.shape.len() <= 2;
        let (bn, bk) = info.block.unwrap_or((fp8_block, fp8_block));
        let kind = if ones {
            Some(((rows.max(1), cols.max(1)), "per-tensor"))
        } else if s.shape == [rows, 1] || s.shape == [rows] {
            Some(((1, cols.max(1)), "per-channel"))
        } else if s.shape == [rows.div_ceil(bn), cols.div_ceil(bk)] {
            Some(((bn, bk), "block"))
        } else if s.shape.len() == 2
            && s.shape[0] == rows
            && s.shape[1] > 0
            && cols % s.shape[1] == 0
        {
            Some(((1, cols / s.shape[1]), "group"))
        } else {
            None
        };
        let Some((tile, what)) = kind else {
            return Err(format!(
                "{}: tensor `{}` has shape {}; a scale of the F8_E4M3 {rows}x{cols} weight `{}` is [] or [1] (per tensor), [{rows}, 1] (per channel), [{rows}, K/g] (groups of g) or {} ({bn}x{bk} blocks{})",
                at(s),
                n_(&scale),
                shape_str(&s.shape),
                n_(name),
                shape_str(&[rows.div_ceil(bn), cols.div_ceil(bk)]),
                if info.block.is_some() {
                    ", from config.json"
                } else {
                    "; --fp8-block sets them"
                }
            ));
        };
        found.groups.insert(
            name.clone(),
            Group {
                codes: name.clone(),
                out: name.clone(),
                scale,
                kind: Kind::Fp8 { tile, what },
                rows,
                cols,
                activation: Vec::new(),
            },
        );
    }
    // Activation scales of each group's layer, and the owner of every companion.
    for g in found.groups.values_mut() {
        g.activation = activation_scales(&g.out, tensors);
        for c in g.companions() {
            found.owner.insert(c, g.codes.clone());
        }
    }
    Ok(found)
}

/// The activation scales of the layer whose (dequantized) weight is `weight` (`P.weight`
/// gives `P.input_scale`, ...), those the checkpoint has.
pub(crate) fn activation_scales(weight: &str, tensors: &BTreeMap<String, Tensor>) -> Vec<String> {
    let Some(prefix) = weight.strip_suffix("weight") else {
        return Vec::new();
    };
    ACTIVATION
        .iter()
        .map(|a| format!("{prefix}{a}"))
        .filter(|n| tensors.contains_key(n))
        .collect()
}

/// E2M1 values by code (bit 3 the sign).
const E2M1: [f32; 16] = [
    0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0,
];

/// compressed-tensors NVFP4 dequantization of whole rows of `cols` values (`packed`: `cols/2`
/// bytes a row, element 2j in the low nibble; `s8`: one E4M3 scale per 16 values):
/// `e2m1 · f32(f32(s8) / global)`, each product rounded to f32.
pub(crate) fn nvct_dequant(packed: &[u8], s8: &[u8], global: f32, out: &mut [f32]) {
    debug_assert_eq!(packed.len() * 2, out.len());
    debug_assert_eq!(s8.len() * 16, out.len());
    for ((o, p), s) in out.chunks_mut(16).zip(packed.chunks(8)).zip(s8) {
        let scale = vcvt::F8E4M3::from_bits(*s).to_f32() / global;
        for (pair, b) in o.chunks_mut(2).zip(p) {
            pair[0] = E2M1[(b & 15) as usize] * scale;
            pair[1] = E2M1[(b >> 4) as usize] * scale;
        }
    }
}

/// The little-endian f32 bytes of a scale tensor (F32 as it is; BF16 and F16 widened, which
/// is exact).
pub(crate) fn scale_f32<'a>(v: &safetensors::tensor::TensorView<'a>) -> std::borrow::Cow<'a, [u8]> {
    if v.dtype() == Dtype::F32 {
        return std::borrow::Cow::Borrowed(v.data());
    }
    let x = vcvt::safetensors::tensor_to_vec::<f32>("", v).expect("a planned F32/BF16/F16 scale");
    std::borrow::Cow::Owned(x.iter().flat_map(|f| f.to_le_bytes()).collect())
}
