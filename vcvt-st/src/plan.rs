//! Reading a checkpoint (mmap, safetensors headers, index.json) and deciding what happens
//! to each tensor.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use safetensors::{Dtype, SafeTensors};
use vcvt::block::MxElement;
use vcvt::safetensors::Format;

use crate::Target;
use crate::conventions;
use crate::escape;
use crate::glob;
use crate::sizes;
use crate::stdio::outln;

/// The index file of a sharded checkpoint.
pub(crate) const INDEX: &str = "model.safetensors.index.json";

/// One mapped .safetensors file.
pub(crate) struct Shard {
    pub path: PathBuf,
    /// The file name (the `weight_map` value).
    pub file_name: String,
    pub mmap: Mmap,
}

/// A checkpoint: one file, or the shards of a directory.
pub(crate) struct Checkpoint {
    /// The input directory (`None` for a single file).
    pub dir: Option<PathBuf>,
    pub shards: Vec<Shard>,
    /// The parsed `model.safetensors.index.json`, if any.
    pub index: Option<serde_json::Value>,
}

pub(crate) use crate::tensor::Tensor;

/// Where an output tensor's bytes come from.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// The input tensor's bytes as they are.
    Copy(String),
    /// The input tensor converted element by element to the output dtype.
    Cast(String),
    /// Block FP8: E4M3 `weight` with one `scale_inv` (F32; BF16 or F16 for the scaled-FP8
    /// conventions) per `tile` tile, which multiplies (DeepSeek's `weight_scale_inv`, and
    /// compressed-tensors', FBGEMM's and ModelOpt's `weight_scale`). The weight is
    /// `experts` matrices one after the other (fused experts `[E, N, K]`; 1 for a 2-D
    /// weight), each with its own tiles and its own run of scales.
    DequantFp8 {
        weight: String,
        scale_inv: String,
        tile: (usize, usize),
        experts: usize,
    },
    /// MX: `blocks` (gpt-oss MXFP4 `_blocks`, or ModelOpt MXFP8's F8_E4M3 weight) + E8M0
    /// `scales`, as a `rows × cols` matrix.
    DequantMx {
        blocks: String,
        scales: String,
        rows: usize,
        cols: usize,
        element: MxElement,
    },
    /// ModelOpt NVFP4: packed `weight` + E4M3 `scales` + f32 `tensor_scale`, `rows × cols`.
    DequantNv {
        weight: String,
        scales: String,
        tensor_scale: String,
        rows: usize,
        cols: usize,
    },
    /// compressed-tensors NVFP4: packed `packed` + E4M3 `scales` + f32 `global` (divides),
    /// `rows × cols`.
    DequantNvCt {
        packed: String,
        scales: String,
        global: String,
        rows: usize,
        cols: usize,
    },
    /// The E4M3 codes (`scales: false`) or f32 scales (one per `tile` of rows × columns) of
    /// FP8 quantization: `block × block` tiles (DeepSeek's `_scale_inv`), or `1 × cols` (one
    /// per row: the per-channel `_scale` of compressed-tensors and FBGEMM).
    QuantFp8 {
        src: String,
        rows: usize,
        cols: usize,
        tile: (usize, usize),
        scales: bool,
    },
    /// The element codes (`scales: false`) or E8M0 scales (output `scales_name`) of MX
    /// quantization (E2M1 for MXFP4, E4M3 for MXFP8).
    QuantMx {
        src: String,
        rows: usize,
        cols: usize,
        scales: bool,
        element: MxElement,
        scales_name: String,
    },
    /// One part of NVFP4 quantization of `src`, a `rows × cols` matrix: ModelOpt's rules,
    /// or compressed-tensors' (`ct`) with a global scale from the amax of every tensor of
    /// `fused` (`src` and the projections fused with it; see [`fused_partners`]).
    QuantNv {
        src: String,
        rows: usize,
        cols: usize,
        part: NvPart,
        ct: bool,
        fused: Vec<String>,
    },
}

/// The three tensors of an NVFP4 weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NvPart {
    /// `W` (ModelOpt) or `W_packed` (compressed-tensors): packed E2M1 codes.
    Codes,
    /// `W_scale`: E4M3 block scales.
    Scales,
    /// `W_scale_2` (ModelOpt, which multiplies) or `W_global_scale` (compressed-tensors,
    /// which divides): the f32 tensor scale.
    TensorScale,
}

/// The scales FP8 quantization writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fp8Out {
    /// One per `fp8_block × fp8_block` tile.
    Block,
    /// One per row (`[N, 1]`).
    Channel,
    /// One per tensor (`[1]`).
    Tensor,
}

/// Sibling projections whose NVFP4 global scale compressed-tensors' producer shares (vLLM
/// fuses them into one matrix with one global scale): llm-compressor's
/// `FUSED_LAYER_NAMES` (`observers/helpers.py`).
const FUSED: &[&[&str]] = &[
    &["gate_proj", "up_proj"],
    &["q_proj", "k_proj", "v_proj"],
    &["q_a_proj", "kv_a_proj_with_mqa"],
    &["w1", "w3"],
];

/// The weights fused with `name` (`P.q_proj.weight` → `P.q_proj.weight`, `P.k_proj.weight`,
/// `P.v_proj.weight`), in that order, among those `quantized` says are quantized alike;
/// `name` alone when it belongs to no fused set.
pub(crate) fn fused_partners(name: &str, quantized: &dyn Fn(&str) -> bool) -> Vec<String> {
    let Some(stem) = name.strip_suffix(".weight") else {
        return vec![name.to_string()];
    };
    let (parent, leaf) = match stem.rsplit_once('.') {
        Some((p, l)) => (format!("{p}."), l),
        None => (String::new(), stem),
    };
    for set in FUSED {
        if set.contains(&leaf) {
            let members: Vec<String> = set
                .iter()
                .map(|l| format!("{parent}{l}.weight"))
                .filter(|m| m == name || quantized(m))
                .collect();
            return members;
        }
    }
    vec![name.to_string()]
}

/// One tensor of the output.
#[derive(Clone, Debug)]
pub(crate) struct Out {
    pub name: String,
    pub shard: usize,
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub source: Source,
}

impl Out {
    /// Bytes of the tensor (checked by [`plan`] for every output).
    pub(crate) fn bytes(&self) -> usize {
        sizes::bytes(&self.name, self.dtype, &self.shape).expect("output sizes checked by plan()")
    }
}

/// What happens to one input tensor (for `inspect` and `--dry-run`).
pub(crate) struct Line {
    pub name: String,
    pub action: String,
}

/// The plan of a conversion.
pub(crate) struct Plan {
    pub outs: Vec<Out>,
    pub lines: Vec<Line>,
    /// Tensors converted (not copied).
    pub converted: usize,
    /// Companion groups recognised: (FP8 + scale_inv, MX blocks + scales, ModelOpt NVFP4
    /// or MXFP8 weight + scales, the conventions of `conventions.rs`).
    pub groups: (usize, usize, usize, usize),
}

/// Options that decide the plan.
pub(crate) struct Filter<'a> {
    pub include: &'a [String],
    pub exclude: &'a [String],
    pub fp8_block: usize,
    /// `--fp8-scales`: FP8 quantization with one scale per tile, row (`W_scale` F32
    /// `[N, 1]`) or tensor (`W_scale` F32 `[1]`).
    pub fp8_scales: Fp8Out,
    /// `--layout compressed-tensors`: block FP8 scales named `W_scale` (not `W_scale_inv`),
    /// NVFP4 as `W_packed`, `W_scale`, `W_global_scale` with compressed-tensors' rules.
    pub ct: bool,
    /// Whether globs match case-sensitively.
    pub case_sensitive: bool,
    /// When quantizing, the dtype float tensors that are not quantized are cast to.
    pub unquantized: Option<Dtype>,
}

/// Names kept by default when quantizing: norms, biases, embeddings, the output head,
/// routers and gates of mixtures of experts.
const DEFAULT_KEEP: &[&str] = &[
    "*norm*",
    "*bias",
    "*embed*",
    "lm_head*",
    "*.router.*",
    "*.gate.weight",
];

fn map(path: &Path) -> Result<Mmap, String> {
    // Only regular files: opening a FIFO would block, and a directory or a device gives
    // "cannot map: No such device".
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "{}: is {}, not a .safetensors file",
            path.display(),
            crate::paths::kind(&meta.file_type())
        ));
    }
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: the file is mapped read-only and only read; vcvt-st never writes its input,
    // and the documented contract (vcvt-st/README.md) is that nothing else modifies it during the run
    // (safetensors' Python `safe_open` and every Rust loader map files the same way).
    unsafe { Mmap::map(&file) }.map_err(|e| format!("{}: cannot map: {e}", path.display()))
}

/// How [`open_with`] treats a directory.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OpenOptions {
    /// Accept `.safetensors` files of the directory that its index does not list (they are
    /// then neither read nor copied); without it they are an error, since their tensors
    /// would be dropped silently.
    pub ignore_unindexed: bool,
}

/// Opens a file or a checkpoint directory.
pub(crate) fn open_with(input: &Path, opts: OpenOptions) -> Result<Checkpoint, String> {
    let meta = std::fs::metadata(input).map_err(|e| format!("{}: {e}", input.display()))?;
    if !meta.is_file() && !meta.is_dir() {
        return Err(format!(
            "{}: is {}, not a .safetensors file or a checkpoint directory",
            input.display(),
            crate::paths::kind(&meta.file_type())
        ));
    }
    if meta.is_file() {
        let file_name = input
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        return Ok(Checkpoint {
            dir: None,
            shards: vec![Shard {
                path: input.to_path_buf(),
                file_name,
                mmap: map(input)?,
            }],
            index: None,
        });
    }
    let index_path = input.join(INDEX);
    let (names, index) = if index_path.exists() {
        // Not a FIFO (reading it would block) nor anything else but a file.
        let meta =
            std::fs::metadata(&index_path).map_err(|e| format!("{}: {e}", index_path.display()))?;
        if !meta.is_file() {
            return Err(format!(
                "{}: is {}, not a JSON file",
                index_path.display(),
                crate::paths::kind(&meta.file_type())
            ));
        }
        let text = std::fs::read_to_string(&index_path)
            .map_err(|e| format!("{}: {e}", index_path.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: invalid JSON: {e}", index_path.display()))?;
        let wm = v
            .get("weight_map")
            .and_then(|w| w.as_object())
            .ok_or_else(|| format!("{}: no `weight_map` object", index_path.display()))?;
        let mut names: Vec<String> = wm
            .values()
            .map(|s| {
                s.as_str().map(str::to_owned).ok_or_else(|| {
                    format!(
                        "{}: a `weight_map` value is not a string",
                        index_path.display()
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        names.sort();
        names.dedup();
        // The paths first: a bad one is the problem, whatever else the directory holds.
        for n in &names {
            if n.is_empty() {
                return Err(format!(
                    "{}: a `weight_map` value is an empty file name",
                    index_path.display()
                ));
            }
            if n.contains('/') || n.contains('\\') || n.contains('\0') || n.starts_with('.') {
                return Err(format!(
                    "{}: shard name `{}` leaves the directory (or is not a file name)",
                    index_path.display(),
                    crate::escape::text(n)
                ));
            }
        }
        if !opts.ignore_unindexed {
            let listed: std::collections::HashSet<&str> =
                names.iter().map(String::as_str).collect();
            let mut extra: Vec<String> = std::fs::read_dir(input)
                .map_err(|e| format!("{}: {e}", input.display()))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".safetensors") && !listed.contains(n.as_str()))
                .collect();
            extra.sort();
            if let Some(first) = extra.first() {
                return Err(format!(
                    "{}: lists no tensor of {first}{} in this directory (its tensors would be left out; --ignore-unindexed converts without {})",
                    index_path.display(),
                    if extra.len() > 1 {
                        format!(" and {} other .safetensors files", extra.len() - 1)
                    } else {
                        String::new()
                    },
                    if extra.len() > 1 { "them" } else { "it" }
                ));
            }
        }
        (names, Some(v))
    } else {
        let mut names: Vec<String> = std::fs::read_dir(input)
            .map_err(|e| format!("{}: {e}", input.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".safetensors"))
            .collect();
        names.sort();
        (names, None)
    };
    if names.is_empty() {
        return Err(format!("{}: no .safetensors files", input.display()));
    }
    let mut shards = Vec::new();
    for n in names {
        let path = input.join(&n);
        shards.push(Shard {
            mmap: map(&path)?,
            path,
            file_name: n,
        });
    }
    let ck = Checkpoint {
        dir: Some(input.to_path_buf()),
        shards,
        index,
    };
    // Every file that `convert` would copy: readable, no dangling link, loop or special
    // file (the first check of every command, see [`validate`]).
    crate::tree::files(input, &|rel| ck.skipped(rel))?;
    Ok(ck)
}

impl Checkpoint {
    /// Parses every shard's header (checking offsets against the file size, and that no
    /// tensor name appears twice: a JSON parser keeps the last of two equal keys).
    pub(crate) fn parse(&self) -> Result<Vec<SafeTensors<'_>>, String> {
        self.shards
            .iter()
            .map(|s| {
                let st = SafeTensors::deserialize(&s.mmap).map_err(|e| {
                    format!("{}: not a valid safetensors file: {e}", s.path.display())
                })?;
                // Valid, so the length and the header are in bounds.
                let n = u64::from_le_bytes(s.mmap[..8].try_into().expect("8 bytes")) as usize;
                if let Some(dup) = duplicate_key(&s.mmap[8..8 + n]) {
                    return Err(format!(
                        "{}: not a valid safetensors file: tensor `{}` appears twice in the header",
                        s.path.display(),
                        crate::escape::text(&dup)
                    ));
                }
                Ok(st)
            })
            .collect()
    }

    /// Every tensor, by name; a name in two shards, or a shard that disagrees with the
    /// index, is an error.
    pub(crate) fn tensors(
        &self,
        parsed: &[SafeTensors<'_>],
    ) -> Result<BTreeMap<String, Tensor>, String> {
        let mut all = BTreeMap::new();
        for (i, st) in parsed.iter().enumerate() {
            for (name, view) in st.iter() {
                let t = Tensor {
                    shard: i,
                    dtype: view.dtype(),
                    shape: view.shape().to_vec(),
                    bytes: view.data().len(),
                };
                if all.insert(name.to_string(), t).is_some() {
                    return Err(format!(
                        "{}: tensor `{name}` is also in another shard",
                        self.shards[i].path.display()
                    ));
                }
            }
        }
        if let Some(wm) = self
            .index
            .as_ref()
            .and_then(|v| v.get("weight_map"))
            .and_then(|w| w.as_object())
        {
            for (name, file) in wm {
                let file = file.as_str().unwrap_or_default();
                match all.get(name) {
                    None => {
                        return Err(format!(
                            "{}: tensor `{name}` of the index is not in {file}",
                            self.dir.as_ref().unwrap().join(INDEX).display()
                        ));
                    }
                    Some(t) if self.shards[t.shard].file_name != file => {
                        return Err(format!(
                            "{}: the index puts tensor `{name}` in {file}, it is in {}",
                            self.dir.as_ref().unwrap().join(INDEX).display(),
                            self.shards[t.shard].file_name
                        ));
                    }
                    _ => {}
                }
            }
        }
        Ok(all)
    }

    /// Files of the input directory that are not copied: the index, the shards, other
    /// `.safetensors` files at the top (not in the index: converting them is not asked, and
    /// copying them would mix dtypes) and vcvt-st's own temporaries.
    pub(crate) fn skipped(&self, rel: &Path) -> bool {
        let name = rel.to_string_lossy();
        let top = rel.components().count() == 1;
        (top && (name == INDEX
            || name.ends_with(".safetensors")
            || self.shards.iter().any(|s| s.file_name == name)))
            || rel
                .file_name()
                .is_some_and(|n| n.to_string_lossy().contains(".vcvt-st-"))
    }

    /// Where tensor `name` lives, for error messages.
    pub(crate) fn where_is(&self, t: &Tensor) -> String {
        self.shards[t.shard].path.display().to_string()
    }
}

/// The first key that appears twice in the JSON object `header` (a valid header).
fn duplicate_key(header: &[u8]) -> Option<String> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Option<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(k) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                if !seen.insert(k.clone()) {
                    return Ok(Some(k));
                }
            }
            Ok(None)
        }
    }
    serde_json::Deserializer::from_slice(header)
        .deserialize_map(Keys)
        .ok()
        .flatten()
}

fn shape_str(s: &[usize]) -> String {
    format!("{s:?}")
}

fn dtype_of(target: Target) -> Dtype {
    match target {
        Target::Bf16 => Dtype::BF16,
        Target::F16 => Dtype::F16,
        Target::F32 => Dtype::F32,
        Target::F8e4m3 => Dtype::F8_E4M3,
        Target::Mxfp4 | Target::Nvfp4 => Dtype::U8,
        Target::Mxfp8 => Dtype::F8_E4M3,
    }
}

/// Whether `name` is the weight of a ModelOpt NVFP4 group (uint8 `[N, K/2]`, F8_E4M3
/// `_scale` `[N, K/16]`, F32 `_scale_2` of one value) or MXFP8 group (F8_E4M3 `[..., K]`,
/// uint8 `_scale` `[..., K/32]`): which of the two.
pub(crate) fn modelopt_group(
    name: &str,
    t: &Tensor,
    tensors: &BTreeMap<String, Tensor>,
) -> Option<Target> {
    let s = tensors.get(&format!("{name}_scale"))?;
    let n = t.shape.len();
    if n < 2 || s.shape.len() != n || s.shape[..n - 1] != t.shape[..n - 1] {
        return None;
    }
    let k = t.shape[n - 1];
    // Checked: the dimensions come from an untrusted header (`[0, 2^63]` is a valid empty
    // tensor), see `sizes`.
    let nv_scales = k
        .checked_mul(2)
        .filter(|c| c.is_multiple_of(16))
        .map(|c| c / 16);
    if t.dtype == Dtype::U8
        && s.dtype == Dtype::F8_E4M3
        && n == 2
        && let Some(per_row) = nv_scales
    {
        let g = tensors.get(&format!("{name}_scale_2"))?;
        let one = g.dtype == Dtype::F32 && sizes::product(name, "", &g.shape) == Ok(1);
        (one && s.shape[1] == per_row).then_some(Target::Nvfp4)
    } else if t.dtype == Dtype::F8_E4M3
        && matches!(s.dtype, Dtype::U8 | Dtype::F8_E8M0)
        && k.is_multiple_of(32)
        && s.shape[n - 1] == k / 32
    {
        Some(Target::Mxfp8)
    } else {
        None
    }
}

/// Whether vcvt converts `from` to the cast target `to` (BF16, F16 or F32).
fn castable(from: Dtype, to: Dtype) -> bool {
    match Format::from_dtype(from) {
        None | Some(Format::F6E2M3 | Format::F6E3M2) => false,
        Some(Format::F64) => to != Dtype::F32,
        Some(Format::F32) => true,
        Some(_) => true,
    }
}

/// The checks every command runs first, whatever it then does (`inspect`, `convert` and its
/// `--dry-run`, `finalize`, `verify`), so that all of them accept and refuse the same
/// checkpoints: config.json (valid, and a quantization method vcvt-st reads) and every
/// tensor's companions (the conventions of `conventions.rs` and those below); [`open_with`]
/// has checked every file of a directory (no dangling link, loop or special file). Returns
/// the groups of `conventions.rs`.
pub(crate) fn validate(
    ck: &Checkpoint,
    tensors: &BTreeMap<String, Tensor>,
    fp8_block: usize,
) -> Result<conventions::Found, String> {
    let any_scale_inv = tensors.keys().any(|n| n.ends_with("_scale_inv"));
    let info = conventions::read_config(ck.dir.as_deref())?;
    let found = conventions::find(&|t| ck.where_is(t), tensors, &info, fp8_block, &|n, t| {
        modelopt_group(n, t, tensors).is_some()
    })?;
    // A checkpoint with quantized weights (by its config or its companions): every FP8
    // tensor must belong to a group (a lone one would be cast without its scales).
    let quantized_checkpoint = info.method.is_some()
        || any_scale_inv
        || !found.groups.is_empty()
        || tensors
            .iter()
            .any(|(n, t)| modelopt_group(n, t, tensors).is_some() || n.ends_with("_blocks"));
    if quantized_checkpoint {
        for (name, t) in tensors {
            if !matches!(t.dtype, Dtype::F8_E4M3 | Dtype::F8_E5M2)
                || found.groups.contains_key(name)
                || found.owner.contains_key(name)
                || modelopt_group(name, t, tensors).is_some()
                || name.strip_suffix("_scale").is_some_and(|b| {
                    tensors
                        .get_key_value(b)
                        .is_some_and(|(b, bt)| modelopt_group(b, bt, tensors).is_some())
                })
            {
                continue;
            }
            let s = format!("{name}_scale_inv");
            if t.dtype == Dtype::F8_E4M3 && tensors.contains_key(&s) {
                continue;
            }
            return Err(format!(
                "{}: tensor `{}` ({} {}) is quantized but has no scale beside it (expected `{}_scale` or `{s}`{}); vcvt-st does not cast FP8 weights without their scales",
                ck.where_is(t),
                escape::text(name),
                t.dtype,
                shape_str(&t.shape),
                escape::text(name),
                match &info.method {
                    Some(m) => format!("; config.json's quant_method is `{}`", escape::text(m)),
                    None => " as other weights of this checkpoint have".into(),
                }
            ));
        }
    }

    // Companion groups first.
    for (name, t) in tensors {
        if let Some(base) = name.strip_suffix("_scale_inv") {
            match tensors.get(base) {
                Some(w) if w.dtype == Dtype::F8_E4M3 => {}
                _ => {
                    return Err(format!(
                        "{}: tensor `{name}` has no F8_E4M3 weight `{base}` beside it",
                        ck.where_is(t)
                    ));
                }
            }
        }
        if let Some(base) = name.strip_suffix("_scales")
            && !tensors.contains_key(&format!("{base}_blocks"))
        {
            return Err(format!(
                "{}: tensor `{name}` has no `{base}_blocks` companion",
                ck.where_is(t)
            ));
        }
        // Part of a ModelOpt NVFP4/MXFP8 group (its E4M3 weight or block scales).
        let modelopt = modelopt_group(name, t, tensors).is_some()
            || name
                .strip_suffix("_scale")
                .and_then(|b| tensors.get_key_value(b))
                .is_some_and(|(b, bt)| modelopt_group(b, bt, tensors).is_some());
        if t.dtype == Dtype::F8_E4M3 && any_scale_inv && t.shape.len() == 2 && !modelopt {
            let s = format!("{name}_scale_inv");
            if !tensors.contains_key(&s) {
                return Err(format!(
                    "{}: tensor `{name}` (F8_E4M3 {}) has no `{s}` companion (other FP8 weights of this checkpoint have one)",
                    ck.where_is(t),
                    shape_str(&t.shape)
                ));
            }
        }
        if let Some(base) = name.strip_suffix("_blocks") {
            let s = format!("{base}_scales");
            let Some(st) = tensors.get(&s) else {
                return Err(format!(
                    "{}: tensor `{name}` has no `{s}` companion",
                    ck.where_is(t)
                ));
            };
            let n = t.shape.len();
            let ok = t.dtype == Dtype::U8
                && n >= 2
                && t.shape[n - 1] == 16
                && matches!(st.dtype, Dtype::U8 | Dtype::F8_E8M0)
                && st.shape == t.shape[..n - 1];
            if !ok {
                return Err(format!(
                    "{}: tensor `{name}` ({} {}) and `{s}` ({} {}) are not MXFP4 blocks [..., G, 16] and scales [..., G] (uint8)",
                    ck.where_is(t),
                    t.dtype,
                    shape_str(&t.shape),
                    st.dtype,
                    shape_str(&st.shape)
                ));
            }
        }
    }

    Ok(found)
}

/// Decides what happens to every tensor.
pub(crate) fn plan(
    ck: &Checkpoint,
    tensors: &BTreeMap<String, Tensor>,
    target: Target,
    filter: &Filter<'_>,
) -> Result<Plan, String> {
    let mut outs = Vec::new();
    let mut lines = Vec::new();
    let mut converted = 0;
    let mut groups = (0, 0, 0, 0);
    let gm = |g: &str, n: &str| glob::matches_case(g, n, filter.case_sensitive);
    let excluded = |n: &str| filter.exclude.iter().any(|g| gm(g, n));
    let included = |n: &str| {
        if filter.include.is_empty() {
            !target.is_quantized() || !DEFAULT_KEEP.iter().any(|g| gm(g, n))
        } else {
            filter.include.iter().any(|g| gm(g, n))
        }
    };
    let mut consumed: HashMap<&str, &str> = HashMap::new();
    let found = validate(ck, tensors, filter.fp8_block)?;
    for (c, owner) in &found.owner {
        let (c, _) = tensors
            .get_key_value(c)
            .expect("a companion of the checkpoint");
        consumed.insert(c.as_str(), owner.as_str());
    }
    // The activation scales of ModelOpt NVFP4/MXFP8 layers, which go with their weights.
    for (name, t) in tensors {
        if modelopt_group(name, t, tensors).is_some() {
            for a in conventions::activation_scales(name, tensors) {
                let (a, _) = tensors.get_key_value(&a).expect("present");
                consumed.insert(a.as_str(), name.as_str());
            }
        }
    }

    for (name, t) in tensors {
        if let Some(owner) = consumed.get(name.as_str()) {
            lines.push(Line {
                name: name.clone(),
                action: format!("companion of `{owner}`"),
            });
            continue;
        }
        let keep = |outs: &mut Vec<Out>, lines: &mut Vec<Line>, why: &str| {
            outs.push(Out {
                name: name.clone(),
                shard: t.shard,
                dtype: t.dtype,
                shape: t.shape.clone(),
                source: Source::Copy(name.clone()),
            });
            lines.push(Line {
                name: name.clone(),
                action: format!("keep ({why})"),
            });
        };
        // A float tensor that quantization leaves: kept, or cast by --unquantized-to.
        let rest =
            |outs: &mut Vec<Out>, lines: &mut Vec<Line>, converted: &mut usize, why: &str| {
                match filter.unquantized {
                    Some(to) if target.is_quantized() && t.dtype != to && castable(t.dtype, to) => {
                        outs.push(Out {
                            name: name.clone(),
                            shard: t.shard,
                            dtype: to,
                            shape: t.shape.clone(),
                            source: Source::Cast(name.clone()),
                        });
                        lines.push(Line {
                            name: name.clone(),
                            action: format!("cast {} → {to} (--unquantized-to; {why})", t.dtype),
                        });
                        *converted += 1;
                    }
                    _ => keep(outs, lines, why),
                }
            };
        // compressed-tensors, FBGEMM and ModelOpt scaled FP8, compressed-tensors NVFP4.
        if let Some(g) = found.groups.get(name) {
            groups.3 += 1;
            let companions = g.companions();
            if target.is_quantized() || excluded(name) || excluded(&g.out) {
                keep(&mut outs, &mut lines, "quantized, with its scales");
                for c in &companions {
                    let s = &tensors[c];
                    outs.push(Out {
                        name: c.clone(),
                        shard: s.shard,
                        dtype: s.dtype,
                        shape: s.shape.clone(),
                        source: Source::Copy(c.clone()),
                    });
                }
                continue;
            }
            let (source, what) = match &g.kind {
                conventions::Kind::Fp8 { tile, what } => (
                    Source::DequantFp8 {
                        weight: name.clone(),
                        scale_inv: g.scale.clone(),
                        tile: *tile,
                        experts: g.experts,
                    },
                    if g.shape.len() == 3 {
                        format!("{what} scaled FP8 (fused experts)")
                    } else {
                        format!("{what} scaled FP8")
                    },
                ),
                conventions::Kind::NvCt { global } => (
                    Source::DequantNvCt {
                        packed: name.clone(),
                        scales: g.scale.clone(),
                        global: global.clone(),
                        rows: g.rows,
                        cols: g.cols,
                    },
                    "compressed-tensors NVFP4".to_string(),
                ),
            };
            let shape = g.shape.clone();
            outs.push(Out {
                name: g.out.clone(),
                shard: t.shard,
                dtype: dtype_of(target),
                shape: shape.clone(),
                source,
            });
            let names: Vec<String> = companions
                .iter()
                .filter(|c| !g.activation.contains(c))
                .map(|c| escape::text(c))
                .collect();
            lines.push(Line {
                name: name.clone(),
                action: format!(
                    "dequantize {what} with `{}` → `{}` {} {}{}",
                    names.join("` + `"),
                    escape::text(&g.out),
                    dtype_of(target),
                    shape_str(&shape),
                    if g.activation.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; activation scales dropped: `{}`",
                            g.activation
                                .iter()
                                .map(|a| escape::text(a))
                                .collect::<Vec<_>>()
                                .join("`, `")
                        )
                    }
                ),
            });
            converted += 1;
            continue;
        }
        // ModelOpt NVFP4 (uint8 `W` + E4M3 `W_scale` + F32 `W_scale_2`) or MXFP8 (E4M3 `W`
        // + uint8 `W_scale`), as `--to nvfp4` / `--to mxfp8` write them.
        if let Some(group) = modelopt_group(name, t, tensors) {
            let n = t.shape.len();
            let mut companions = vec![format!("{name}_scale")];
            if group == Target::Nvfp4 {
                companions.push(format!("{name}_scale_2"));
            }
            for c in &companions {
                consumed.insert(tensors.get_key_value(c).unwrap().0.as_str(), name.as_str());
            }
            groups.2 += 1;
            let activation = conventions::activation_scales(name, tensors);
            if target.is_quantized() || excluded(name) {
                companions.extend(activation.iter().cloned());
                keep(&mut outs, &mut lines, "quantized, with its scales");
                for c in &companions {
                    let s = &tensors[c];
                    outs.push(Out {
                        name: c.clone(),
                        shard: s.shard,
                        dtype: s.dtype,
                        shape: s.shape.clone(),
                        source: Source::Copy(c.clone()),
                    });
                }
                continue;
            }
            let rows = sizes::product(name, "the row count", &t.shape[..n - 1])
                .map_err(|e| format!("{}: {e}", ck.where_is(t)))?;
            let (cols, source, what) = if group == Target::Nvfp4 {
                // (modelopt_group checked that this does not overflow.)
                let cols = t.shape[n - 1] * 2;
                let source = Source::DequantNv {
                    weight: name.clone(),
                    scales: companions[0].clone(),
                    tensor_scale: companions[1].clone(),
                    rows,
                    cols,
                };
                (cols, source, "NVFP4")
            } else {
                let cols = t.shape[n - 1];
                let source = Source::DequantMx {
                    blocks: name.clone(),
                    scales: companions[0].clone(),
                    rows,
                    cols,
                    element: MxElement::E4M3,
                };
                (cols, source, "MXFP8")
            };
            let mut shape = t.shape[..n - 1].to_vec();
            shape.push(cols);
            outs.push(Out {
                name: name.clone(),
                shard: t.shard,
                dtype: dtype_of(target),
                shape: shape.clone(),
                source,
            });
            lines.push(Line {
                name: name.clone(),
                action: format!(
                    "dequantize {what} with `{}` → {} {}{}",
                    companions.join("` + `"),
                    dtype_of(target),
                    shape_str(&shape),
                    if activation.is_empty() {
                        String::new()
                    } else {
                        format!("; activation scales dropped: `{}`", activation.join("`, `"))
                    }
                ),
            });
            converted += 1;
            continue;
        }
        // An FP8 weight with its scale_inv.
        let scale_name = format!("{name}_scale_inv");
        if t.dtype == Dtype::F8_E4M3 && tensors.contains_key(&scale_name) {
            let s = &tensors[&scale_name];
            consumed.insert(
                tensors.get_key_value(&scale_name).unwrap().0.as_str(),
                name.as_str(),
            );
            groups.0 += 1;
            if target.is_quantized() || excluded(name) {
                keep(&mut outs, &mut lines, "block FP8 with its scale_inv");
                outs.push(Out {
                    name: scale_name.clone(),
                    shard: s.shard,
                    dtype: s.dtype,
                    shape: s.shape.clone(),
                    source: Source::Copy(scale_name.clone()),
                });
                continue;
            }
            let problem = if !matches!(t.shape.len(), 2 | 3) {
                Some(format!(
                    "the weight is {}-D, not 2-D (or 3-D fused experts)",
                    t.shape.len()
                ))
            } else if s.dtype != Dtype::F32 {
                Some(format!("the scale_inv is {}, not F32", s.dtype))
            } else if s.shape.len() != t.shape.len() {
                Some(format!(
                    "the scale_inv is {}-D, the weight {}-D",
                    s.shape.len(),
                    t.shape.len()
                ))
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(format!(
                    "{}: tensor `{name}` (F8_E4M3 {}) with `{scale_name}` ({} {}): {problem}",
                    ck.where_is(t),
                    shape_str(&t.shape),
                    s.dtype,
                    shape_str(&s.shape)
                ));
            }
            // A 2-D weight, or fused experts [E, N, K] with tiles of each expert.
            let n = t.shape.len();
            let (experts, rows, cols) = (
                if n == 3 { t.shape[0] } else { 1 },
                t.shape[n - 2],
                t.shape[n - 1],
            );
            let tile = (filter.fp8_block, filter.fp8_block);
            let mut want = t.shape[..n - 2].to_vec();
            want.extend([rows.div_ceil(tile.0), cols.div_ceil(tile.1)]);
            if s.shape != want {
                return Err(format!(
                    "{}: tensor `{scale_name}` has shape {}, a {} weight with {}x{} tiles needs {} (use --fp8-block)",
                    ck.where_is(s),
                    shape_str(&s.shape),
                    shape_str(&t.shape),
                    tile.0,
                    tile.1,
                    shape_str(&want)
                ));
            }
            // (The rows of all experts; checked for an empty tensor of hostile dimensions.)
            sizes::product(name, "the row count", &t.shape[..n - 1])
                .map_err(|e| format!("{}: {e}", ck.where_is(t)))?;
            outs.push(Out {
                name: name.clone(),
                shard: t.shard,
                dtype: dtype_of(target),
                shape: t.shape.clone(),
                source: Source::DequantFp8 {
                    weight: name.clone(),
                    scale_inv: scale_name.clone(),
                    tile,
                    experts,
                },
            });
            lines.push(Line {
                name: name.clone(),
                action: format!(
                    "dequantize block FP8{} with `{scale_name}` → {}",
                    if n == 3 { " (fused experts)" } else { "" },
                    dtype_of(target)
                ),
            });
            converted += 1;
            continue;
        }
        // MXFP4 blocks with their scales.
        if let Some(base) = name.strip_suffix("_blocks") {
            let scales = format!("{base}_scales");
            consumed.insert(
                tensors.get_key_value(&scales).unwrap().0.as_str(),
                name.as_str(),
            );
            groups.1 += 1;
            let s = &tensors[&scales];
            if target.is_quantized() || excluded(base) {
                keep(&mut outs, &mut lines, "MXFP4 blocks with their scales");
                outs.push(Out {
                    name: scales.clone(),
                    shard: s.shard,
                    dtype: s.dtype,
                    shape: s.shape.clone(),
                    source: Source::Copy(scales.clone()),
                });
                continue;
            }
            if tensors.contains_key(base) {
                return Err(format!(
                    "{}: tensor `{name}` would dequantize to `{base}`, which the checkpoint already has",
                    ck.where_is(t)
                ));
            }
            let (rows, cols, shape) = sizes::mx_dequant(name, &t.shape)
                .map_err(|e| format!("{}: {e}", ck.where_is(t)))?;
            outs.push(Out {
                name: base.to_string(),
                shard: t.shard,
                dtype: dtype_of(target),
                shape: shape.clone(),
                source: Source::DequantMx {
                    blocks: name.clone(),
                    scales: scales.clone(),
                    rows,
                    cols,
                    element: MxElement::E2M1,
                },
            });
            lines.push(Line {
                name: name.clone(),
                action: format!(
                    "dequantize MXFP4 with `{scales}` → `{base}` {} {}",
                    dtype_of(target),
                    shape_str(&shape)
                ),
            });
            converted += 1;
            continue;
        }
        let float = matches!(
            Format::from_dtype(t.dtype),
            Some(f) if !matches!(f, Format::F6E2M3 | Format::F6E3M2)
        );
        if !float {
            keep(&mut outs, &mut lines, "not a float tensor");
            continue;
        }
        if excluded(name) {
            keep(&mut outs, &mut lines, "--exclude");
            continue;
        }
        if !included(name) {
            let why = if filter.include.is_empty() {
                "default filter: norms, biases, embeddings, lm_head, routers"
            } else {
                "not --include'd"
            };
            rest(&mut outs, &mut lines, &mut converted, why);
            continue;
        }
        match target {
            Target::Bf16 | Target::F16 | Target::F32 => {
                let to = dtype_of(target);
                if t.dtype == to {
                    keep(&mut outs, &mut lines, "already the target dtype");
                } else if !castable(t.dtype, to) {
                    keep(
                        &mut outs,
                        &mut lines,
                        &format!("vcvt has no {} → {to} conversion", t.dtype),
                    );
                } else {
                    outs.push(Out {
                        name: name.clone(),
                        shard: t.shard,
                        dtype: to,
                        shape: t.shape.clone(),
                        source: Source::Cast(name.clone()),
                    });
                    lines.push(Line {
                        name: name.clone(),
                        action: format!("cast {} → {to}", t.dtype),
                    });
                    converted += 1;
                }
            }
            Target::F8e4m3 | Target::Mxfp4 | Target::Mxfp8 | Target::Nvfp4 => {
                if !matches!(t.dtype, Dtype::F32 | Dtype::BF16 | Dtype::F16) {
                    rest(
                        &mut outs,
                        &mut lines,
                        &mut converted,
                        "quantizes F32, BF16 and F16 tensors only",
                    );
                    continue;
                }
                let n = t.shape.len();
                if n < 2 || t.shape.contains(&0) {
                    rest(&mut outs, &mut lines, &mut converted, "not a matrix");
                    continue;
                }
                let cols = t.shape[n - 1];
                // Exact for a tensor without a zero dimension (its bytes are present), but
                // checked all the same (see `sizes`).
                let rows = sizes::product(name, "the row count", &t.shape[..n - 1])
                    .map_err(|e| format!("{}: {e}", ck.where_is(t)))?;
                let taken = |names: &[&String]| -> Result<(), String> {
                    for x in names {
                        if tensors.contains_key(x.as_str()) {
                            return Err(format!(
                                "{}: quantizing `{name}` would write `{x}`, which the checkpoint already has",
                                ck.where_is(t)
                            ));
                        }
                    }
                    Ok(())
                };
                let push = |outs: &mut Vec<Out>,
                            oname: &String,
                            dtype: Dtype,
                            shape: Vec<usize>,
                            source: Source| {
                    outs.push(Out {
                        name: oname.clone(),
                        shard: t.shard,
                        dtype,
                        shape,
                        source,
                    })
                };
                match target {
                    Target::F8e4m3 => {
                        if n != 2 {
                            rest(
                                &mut outs,
                                &mut lines,
                                &mut converted,
                                "block FP8 quantizes 2-D tensors only",
                            );
                            continue;
                        }
                        let b = filter.fp8_block;
                        let (sname, tile, sshape, what) = match filter.fp8_scales {
                            Fp8Out::Channel => (
                                format!("{name}_scale"),
                                (1, cols),
                                vec![rows, 1],
                                "one scale per row".to_string(),
                            ),
                            Fp8Out::Tensor => (
                                format!("{name}_scale"),
                                (rows, cols),
                                vec![1],
                                "one scale per tensor".to_string(),
                            ),
                            Fp8Out::Block => (
                                if filter.ct {
                                    format!("{name}_scale")
                                } else {
                                    format!("{name}_scale_inv")
                                },
                                (b, b),
                                vec![rows.div_ceil(b), cols.div_ceil(b)],
                                format!("{b}x{b} tiles"),
                            ),
                        };
                        taken(&[&sname])?;
                        let q = |scales| Source::QuantFp8 {
                            src: name.clone(),
                            rows,
                            cols,
                            tile,
                            scales,
                        };
                        push(&mut outs, name, Dtype::F8_E4M3, t.shape.clone(), q(false));
                        push(&mut outs, &sname, Dtype::F32, sshape, q(true));
                        lines.push(Line {
                            name: name.clone(),
                            action: format!("quantize {} → F8_E4M3 + `{sname}` ({what})", t.dtype),
                        });
                    }
                    Target::Mxfp4 | Target::Mxfp8 => {
                        if cols % 32 != 0 {
                            rest(
                                &mut outs,
                                &mut lines,
                                &mut converted,
                                "last dimension not a multiple of 32",
                            );
                            continue;
                        }
                        let fp4 = target == Target::Mxfp4;
                        let (cname, sname) = if fp4 {
                            (format!("{name}_blocks"), format!("{name}_scales"))
                        } else {
                            (name.clone(), format!("{name}_scale"))
                        };
                        taken(&if fp4 {
                            vec![&cname, &sname]
                        } else {
                            vec![&sname]
                        })?;
                        let (cdtype, mut cshape) = if fp4 {
                            let mut s = t.shape[..n - 1].to_vec();
                            s.extend([cols / 32, 16]);
                            (Dtype::U8, s)
                        } else {
                            (Dtype::F8_E4M3, t.shape.clone())
                        };
                        let mut sshape = t.shape[..n - 1].to_vec();
                        sshape.push(cols / 32);
                        let element = if fp4 {
                            MxElement::E2M1
                        } else {
                            MxElement::E4M3
                        };
                        let q = |scales| Source::QuantMx {
                            src: name.clone(),
                            rows,
                            cols,
                            scales,
                            element,
                            scales_name: sname.clone(),
                        };
                        push(
                            &mut outs,
                            &cname,
                            cdtype,
                            std::mem::take(&mut cshape),
                            q(false),
                        );
                        push(&mut outs, &sname, Dtype::U8, sshape, q(true));
                        lines.push(Line {
                            name: name.clone(),
                            action: if fp4 {
                                format!("quantize {} → MXFP4 `{cname}` + `{sname}`", t.dtype)
                            } else {
                                format!("quantize {} → MXFP8 F8_E4M3 + `{sname}`", t.dtype)
                            },
                        });
                    }
                    _ => {
                        if n != 2 || cols % 16 != 0 {
                            rest(
                                &mut outs,
                                &mut lines,
                                &mut converted,
                                "NVFP4 quantizes 2-D tensors with a last dimension that is a multiple of 16 only",
                            );
                            continue;
                        }
                        let ct = filter.ct;
                        let (cname, sname, gname) = if ct {
                            (
                                format!("{name}_packed"),
                                format!("{name}_scale"),
                                format!("{name}_global_scale"),
                            )
                        } else {
                            (
                                name.clone(),
                                format!("{name}_scale"),
                                format!("{name}_scale_2"),
                            )
                        };
                        if ct {
                            taken(&[&cname, &sname, &gname])?;
                        } else {
                            taken(&[&sname, &gname])?;
                        }
                        let q = |part| Source::QuantNv {
                            src: name.clone(),
                            rows,
                            cols,
                            part,
                            ct,
                            // Filled in once every quantized tensor is known (below).
                            fused: Vec::new(),
                        };
                        push(
                            &mut outs,
                            &cname,
                            Dtype::U8,
                            vec![rows, cols / 2],
                            q(NvPart::Codes),
                        );
                        push(
                            &mut outs,
                            &sname,
                            Dtype::F8_E4M3,
                            vec![rows, cols / 16],
                            q(NvPart::Scales),
                        );
                        push(
                            &mut outs,
                            &gname,
                            Dtype::F32,
                            if ct { vec![1] } else { vec![] },
                            q(NvPart::TensorScale),
                        );
                        lines.push(Line {
                            name: name.clone(),
                            action: if ct {
                                format!(
                                    "quantize {} → NVFP4 (compressed-tensors) `{cname}` + `{sname}` + `{gname}`",
                                    t.dtype
                                )
                            } else {
                                format!(
                                    "quantize {} → NVFP4 uint8 + `{sname}` + `{gname}`",
                                    t.dtype
                                )
                            },
                        });
                    }
                }
                converted += 1;
            }
        }
    }
    // compressed-tensors NVFP4: the global scale of fused projections is that of their
    // union (of those quantized alike: same dtype, same rules).
    let ct_nv: HashMap<String, Dtype> = outs
        .iter()
        .filter_map(|o| match &o.source {
            Source::QuantNv { src, ct: true, .. } => Some((src.clone(), tensors[src].dtype)),
            _ => None,
        })
        .collect();
    for o in &mut outs {
        if let Source::QuantNv {
            src,
            ct: true,
            fused,
            ..
        } = &mut o.source
        {
            let dtype = ct_nv[src.as_str()];
            *fused = fused_partners(src, &|m| ct_nv.get(m) == Some(&dtype));
            if fused.len() > 1 {
                let line = lines
                    .iter_mut()
                    .find(|l| l.name == *src)
                    .expect("a line per tensor");
                let note = format!(
                    "; global scale shared with `{}`",
                    fused
                        .iter()
                        .filter(|m| *m != src)
                        .map(|m| escape::text(m))
                        .collect::<Vec<_>>()
                        .join("`, `")
                );
                if !line.action.ends_with(&note) {
                    line.action.push_str(&note);
                }
            }
        }
    }
    // An owner sorts before its companions (`w` < `w_scale_inv`, `x_blocks` < `x_scales`),
    // so every companion was marked consumed before the loop reached it.
    let mut seen = std::collections::HashSet::new();
    for o in &outs {
        if !seen.insert(o.name.as_str()) {
            return Err(format!("two output tensors would be named `{}`", o.name));
        }
    }
    // Every output size (and their sum) is checked here, once, so that the writer's
    // arithmetic cannot overflow.
    let each = outs
        .iter()
        .map(|o| {
            sizes::bytes(&o.name, o.dtype, &o.shape)
                .map_err(|e| format!("{}: {e}", ck.shards[o.shard].path.display()))
        })
        .collect::<Result<Vec<usize>, String>>()?;
    sizes::total(each)?;
    Ok(Plan {
        outs,
        lines,
        converted,
        groups,
    })
}

/// Adds error estimates to a plan's lines (given by the caller: see `estimate.rs`).
pub(crate) type Annotate = dyn Fn(&mut Plan, &HashMap<&str, safetensors::tensor::TensorView<'_>>);

/// `vcvt-st inspect`.
pub(crate) fn inspect(
    input: &Path,
    target: Target,
    assumed: bool,
    opts: OpenOptions,
    annotate: &Annotate,
) -> Result<(), String> {
    let ck = open_with(input, opts)?;
    let parsed = ck.parse()?;
    let tensors = ck.tensors(&parsed)?;
    for (i, s) in ck.shards.iter().enumerate() {
        let n = tensors.values().filter(|t| t.shard == i).count();
        let meta = SafeTensors::read_metadata(&s.mmap)
            .ok()
            .and_then(|(_, m)| m.metadata().clone())
            .map(|m| format!(", __metadata__ {m:?}"))
            .unwrap_or_default();
        outln!(
            "{}: {n} tensors, {} bytes{meta}",
            s.path.display(),
            s.mmap.len()
        );
    }
    let filter = Filter {
        include: &[],
        exclude: &[],
        fp8_block: 128,
        fp8_scales: Fp8Out::Block,
        ct: false,
        case_sensitive: false,
        unquantized: None,
    };
    let mut plan = plan(&ck, &tensors, target, &filter)?;
    let views = parsed.iter().flat_map(|st| st.iter()).collect();
    annotate(&mut plan, &views);
    let actions: HashMap<&str, &str> = plan
        .lines
        .iter()
        .map(|l| (l.name.as_str(), l.action.as_str()))
        .collect();
    let w = tensors.keys().map(|n| n.len()).max().unwrap_or(4).min(60);
    outln!(
        "{:<w$}  {:<11}  {:<20}  {:>12}  convert --to {}",
        "tensor",
        "dtype",
        "shape",
        "bytes",
        target.name()
    );
    for (name, t) in &tensors {
        outln!(
            "{name:<w$}  {:<11}  {:<20}  {:>12}  {}",
            t.dtype.to_string(),
            shape_str(&t.shape),
            t.bytes,
            actions.get(name.as_str()).copied().unwrap_or("")
        );
    }
    outln!(
        "{} tensors; companions recognised: {} block-FP8 weight + weight_scale_inv, {} MXFP4 blocks + scales, {} ModelOpt NVFP4/MXFP8 weight + scales, {} scaled-FP8 or compressed-tensors NVFP4 weight + scales; {} tensors would be converted",
        tensors.len(),
        plan.groups.0,
        plan.groups.1,
        plan.groups.2,
        plan.groups.3,
        plan.converted
    );
    if assumed {
        outln!(
            "(the plan of --to {}, assumed: no --to was given; `inspect --to TARGET` shows another)",
            target.name()
        );
    }
    Ok(())
}
