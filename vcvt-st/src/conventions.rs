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
//!   `f32(e4m3) · f32(scale)`, rounded to f32, then to the target. Fused experts `[E, N, K]`
//!   take `[E, ⌈N/bn⌉, ⌈K/bk⌉]`, `[E, N, 1]`, `[E, N, G]`, `[E, 1, 1]` or one scale, each
//!   expert its own matrix; a shape with two readings of different values is an error.
//! * **compressed-tensors NVFP4** (`nvfp4-pack-quantized`): `W_packed` uint8 `[N, K/2]`
//!   (element 2j in the low nibble), `W_scale` F8_E4M3 `[N, K/16]`, `W_global_scale` F32 of
//!   one value; the output is `W`. A value is `e2m1 · f32(f32(scale) / global_scale)`, rounded
//!   to f32, then to the target. [`nvct_global`] and [`nvct_quantize`] are compressed-tensors'
//!   quantization rules, for `--to nvfp4 --layout compressed-tensors`.
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

/// One reading of a fused-expert scale's shape: experts, and the tile of each expert's
/// matrix.
type Reading = (usize, (usize, usize));

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
    /// `rows × cols` of the dequantized matrix (all experts' rows, one after the other).
    pub rows: usize,
    pub cols: usize,
    /// Matrices of the weight, each with its own tiles and run of scales (`E` of fused
    /// experts `[E, N, K]` with a scale per expert, channel, group or block; else 1).
    pub experts: usize,
    /// The dequantized tensor's shape.
    pub shape: Vec<usize>,
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
                    experts: 1,
                    shape: vec![t.shape[0], t.shape[1] * 2],
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
        let (bn, bk) = info.block.unwrap_or((fp8_block, fp8_block));
        let from = if info.block.is_some() {
            ", from config.json"
        } else {
            "; --fp8-block sets them"
        };
        let (experts, rows, cols, tile, what) = match t.shape.len() {
            2 => {
                let (rows, cols) = (t.shape[0], t.shape[1]);
                let ones = sizes::product(name, "", &s.shape) == Ok(1) && s.shape.len() <= 2;
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
                        "{}: tensor `{}` has shape {}; a scale of the F8_E4M3 {rows}x{cols} weight `{}` is [] or [1] (per tensor), [{rows}, 1] (per channel), [{rows}, K/g] (groups of g) or {} ({bn}x{bk} blocks{from})",
                        at(s),
                        n_(&scale),
                        shape_str(&s.shape),
                        n_(name),
                        shape_str(&[rows.div_ceil(bn), cols.div_ceil(bk)]),
                    ));
                };
                (1, rows, cols, tile, what)
            }
            3 => {
                let (e, n, k) = (t.shape[0], t.shape[1], t.shape[2]);
                let all_rows = sizes::product(name, "the row count", &t.shape[..2])
                    .map_err(|e| format!("{}: {e}", at(t)))?;
                let ones = sizes::product(name, "", &s.shape) == Ok(1);
                // Every reading of the scale's shape: (experts, tile, what), tiles cropped to
                // an expert's matrix, so that two readings that give every value the same
                // scale compare equal.
                let crop = |x: usize, (tr, tc): (usize, usize)| {
                    let r = if x == 1 { all_rows } else { n };
                    (x, (tr.min(r).max(1), tc.min(k).max(1)))
                };
                let mut readings: Vec<(Reading, &'static str)> = Vec::new();
                if ones && s.shape.len() <= 3 {
                    readings.push((crop(1, (all_rows, k)), "per-tensor"));
                }
                if s.shape == [e, 1, 1] {
                    readings.push((crop(e, (n, k)), "per-expert"));
                }
                if s.shape == [e, n, 1] {
                    readings.push((crop(e, (1, k)), "per-channel"));
                }
                if s.shape == [e, n.div_ceil(bn), k.div_ceil(bk)] {
                    readings.push((crop(e, (bn, bk)), "block"));
                }
                if s.shape.len() == 3
                    && s.shape[..2] == [e, n]
                    && s.shape[2] > 0
                    && k % s.shape[2] == 0
                {
                    readings.push((crop(e, (1, k / s.shape[2])), "group"));
                }
                let accepted = format!(
                    "a scale of the F8_E4M3 fused-expert weight `{}` {} is [] or [1] (one scale), [{e}, 1, 1] (per expert), [{e}, {n}, 1] (per channel), [{e}, {n}, K/g] (groups of g) or {} ({bn}x{bk} blocks{from})",
                    n_(name),
                    shape_str(&t.shape),
                    shape_str(&[e, n.div_ceil(bn), k.div_ceil(bk)]),
                );
                let Some(&((x, tile), what)) = readings.first() else {
                    return Err(format!(
                        "{}: tensor `{}` has shape {}; {accepted}",
                        at(s),
                        n_(&scale),
                        shape_str(&s.shape),
                    ));
                };
                if let Some((_, other)) = readings.iter().find(|(r, _)| *r != (x, tile)) {
                    return Err(format!(
                        "{}: tensor `{}` has shape {}, which reads both as {what} and as {other} scales of `{}` {} (different values); vcvt-st does not guess ({accepted})",
                        at(s),
                        n_(&scale),
                        shape_str(&s.shape),
                        n_(name),
                        shape_str(&t.shape),
                    ));
                }
                (x, all_rows, k, tile, what)
            }
            _ => {
                return Err(format!(
                    "{}: tensor `{}` (F8_E4M3 {}) with `{}`: scaled FP8 weights are 2-D [N, K], or 3-D fused experts [E, N, K], here",
                    at(t),
                    n_(name),
                    shape_str(&t.shape),
                    n_(&scale)
                ));
            }
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
                experts,
                shape: t.shape.clone(),
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

/// `x` rounded (nearest even) to the floating dtype `d` of a source tensor (BF16, F16; F32
/// and the others as they are): the result of one torch operation on tensors of that dtype,
/// which computes in f32 and rounds once.
fn round_to(d: Dtype, x: f32) -> f32 {
    match d {
        Dtype::BF16 => vcvt::BF16::from_f32(x).to_f32(),
        Dtype::F16 => vcvt::F16::from_f32(x).to_f32(),
        _ => x,
    }
}

/// compressed-tensors' NVFP4 global scale of a weight of dtype `d` (or of fused weights)
/// whose `max |x|` is `amax`, as `generate_gparam` (`quantization/utils/helpers.py`)
/// computes it on the weight's dtype: `m = clamp(amax, min = finfo(d).tiny)`, then
/// `2688 / m`, which torch evaluates as `m.reciprocal() * 2688` (`Tensor.__rtruediv__`),
/// each step rounded to `d`; a NaN or infinite result becomes 1.0 (`nan_to_num`).
pub(crate) fn nvct_global(d: Dtype, amax: f32) -> f32 {
    let tiny = if d == Dtype::F16 {
        2f32.powi(-14)
    } else {
        f32::MIN_POSITIVE
    };
    // (`clamp` keeps a NaN.)
    let m = if amax.is_nan() { amax } else { amax.max(tiny) };
    let g = round_to(d, round_to(d, 1.0 / m) * 2688.0);
    if g.is_finite() { g } else { 1.0 }
}

/// The E2M1 code of `q`, the quotient of an element by its block's divisor, as
/// compressed-tensors' `cast_to_fp4` and `pack_fp4_to_uint8` give it: clamped to ±6, then
/// the nearest E2M1 value, ties to even (its thresholds 0.25, 0.75, ..., 5 send each tie to
/// the even code); the sign from `torch.sign(q)`, so ±0 gives code 0 and a small negative
/// `q` code 8 (−0). A NaN `q` gives code 0 (torch's CPU path casts NaN to an integer there,
/// which C++ leaves undefined).
fn nvct_code(q: f32) -> u8 {
    if q == 0.0 || q.is_nan() {
        0
    } else {
        vcvt::F4E2M1::from_f32(q.clamp(-6.0, 6.0)).to_bits()
    }
}

/// compressed-tensors NVFP4 quantization of whole rows `x` (16-value blocks) of a weight of
/// dtype `d` with global scale `gs` ([`nvct_global`]) into `packed` (element 2j in the low
/// nibble) and `scales` (E4M3 bytes), as llm-compressor's min-max observer,
/// `calculate_qparams` (`quantization/utils/helpers.py`) and `_quantize`
/// (`quantization/lifecycle/forward_helpers.py`) compute them: the block scale
/// `e4m3(clamp(f32(gs · W(amax_b / 6)), ±448))` (`W` rounds to `d`), a zero scale replaced by
/// 0.125 (the E4M3 `eps` of `_get_dtype_eps`); each element `nvct_code(f32(x / f32(f32(s8)
/// / gs)))`.
pub(crate) fn nvct_quantize(d: Dtype, x: &[f32], gs: f32, packed: &mut [u8], scales: &mut [u8]) {
    debug_assert_eq!(x.len(), packed.len() * 2);
    debug_assert_eq!(x.len(), scales.len() * 16);
    for ((blk, p), s) in x
        .chunks(16)
        .zip(packed.chunks_mut(8))
        .zip(scales.iter_mut())
    {
        // torch.amax: a NaN wins.
        let amax = blk.iter().fold(0f32, |m, v| {
            if m.is_nan() || v.is_nan() {
                f32::NAN
            } else {
                m.max(v.abs())
            }
        });
        let q = gs * round_to(d, amax / 6.0);
        let mut s8 = vcvt::F8E4M3::from_f32(q.clamp(-448.0, 448.0)).to_bits();
        if s8 & 0x7F == 0 {
            s8 = vcvt::F8E4M3::from_f32(0.125).to_bits();
        }
        *s = s8;
        let div = vcvt::F8E4M3::from_bits(s8).to_f32() / gs;
        for (pair, b) in blk.chunks(2).zip(p.iter_mut()) {
            *b = nvct_code(pair[0] / div) | (nvct_code(pair[1] / div) << 4);
        }
    }
}
