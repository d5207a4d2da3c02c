//! The fuzz harness of `vcvt-st`'s header → plan path: the `st_plan` target of `fuzz/`
//! (which includes this file and the planning modules by path) and, on stable, the replay
//! of its committed corpus (`fuzz/corpus/st_plan`) by `cargo test -p vcvt-st`.
//!
//! An input is
//!
//! ```text
//! byte 0      target: bf16, f16, f32, f8e4m3, mxfp4, mxfp8, nvfp4 (mod 7)
//! byte 1      bits 0-2: --fp8-block: 1, 2, 3, 16, 128, 1 << 20 (mod 6);
//!             bit 3: --fp8-scales tensor (over bit 7 of byte 2);
//!             bit 4: --layout compressed-tensors (block FP8 `W_scale`, NVFP4 `W_packed`)
//! byte 2      bit 0: --include '*'; bit 1: an index follows the file;
//!             bit 2: the file is described, not given (below);
//!             bit 3: --case-sensitive-globs;
//!             bits 4-5: --unquantized-to keep, bf16, f16, f32;
//!             bit 6: the rest is also read as a config.json (its `quantization_config`);
//!             bit 7: --fp8-scales channel
//! bytes 3..7  L, u32 little-endian: the length of the safetensors file
//! L bytes     the safetensors file (header JSON and data: anything)
//! the rest    with bit 1, the `model.safetensors.index.json` (anything)
//! ```
//!
//! (shorter inputs are padded with zeros). With bit 2, the L bytes describe the tensors
//! instead ([`described`]): names from the companion patterns, dtypes, and dimensions that
//! are mostly small and often hostile (0, 2^32, 2^59, 2^60, 2^63, `u64::MAX`), with exactly
//! the bytes the shape needs when that is at most 64 KiB, so that the fuzzer reaches the
//! planner with headers the safetensors crate accepts. The file is parsed as `vcvt-st` parses a mapped
//! shard, its tensors checked against the index, and planned for the target; any of these
//! may refuse the input, none may panic. A plan that is accepted must have output sizes that
//! fit in `usize` and total at most 8 times the file's length (the largest expansion is a
//! packed 4-bit value to f32): no output is sized by a claimed dimension.

use std::path::PathBuf;

use crate::Target;
use crate::plan::{self, Checkpoint, Filter, Shard};
use crate::sizes;

const TARGETS: [Target; 7] = [
    Target::Bf16,
    Target::F16,
    Target::F32,
    Target::F8e4m3,
    Target::Mxfp4,
    Target::Mxfp8,
    Target::Nvfp4,
];
const UNQUANTIZED: [Option<safetensors::Dtype>; 4] = [
    None,
    Some(safetensors::Dtype::BF16),
    Some(safetensors::Dtype::F16),
    Some(safetensors::Dtype::F32),
];
const BLOCKS: [usize; 6] = [1, 2, 3, 16, 128, 1 << 20];

/// Runs one input: whether the plan was accepted; `Err` names a broken invariant (a refused
/// input is `Ok(false)`).
pub fn run(data: &[u8]) -> Result<bool, String> {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let target = TARGETS[usize::from(byte(0)) % TARGETS.len()];
    let block = BLOCKS[usize::from(byte(1) & 7) % BLOCKS.len()];
    let flags = byte(2);
    let len = u32::from_le_bytes([byte(3), byte(4), byte(5), byte(6)]) as usize;
    let rest = data.get(7..).unwrap_or(&[]);
    let (file, index) = rest.split_at(len.min(rest.len()));
    let built;
    let file = if flags & 4 != 0 {
        built = described(file);
        &built[..]
    } else {
        file
    };
    if file.is_empty() {
        return Ok(false);
    }
    let mut map = memmap2::MmapMut::map_anon(file.len()).map_err(|e| e.to_string())?;
    map.copy_from_slice(file);
    let mmap = map.make_read_only().map_err(|e| e.to_string())?;
    let with_index = flags & 2 != 0;
    let ck = Checkpoint {
        dir: with_index.then(|| PathBuf::from("fuzz")),
        shards: vec![Shard {
            path: PathBuf::from("fuzz/model.safetensors"),
            file_name: "model.safetensors".into(),
            mmap,
        }],
        index: if with_index {
            serde_json::from_slice(index).ok()
        } else {
            None
        },
    };
    let Ok(parsed) = ck.parse() else {
        return Ok(false);
    };
    let Ok(tensors) = ck.tensors(&parsed) else {
        return Ok(false);
    };
    let star = ["*".to_string()];
    let filter = Filter {
        include: if flags & 1 != 0 { &star } else { &[] },
        exclude: &[],
        fp8_block: block,
        fp8_scales: if byte(1) & 8 != 0 {
            plan::Fp8Out::Tensor
        } else if flags & 128 != 0 {
            plan::Fp8Out::Channel
        } else {
            plan::Fp8Out::Block
        },
        ct: byte(1) & 16 != 0,
        case_sensitive: flags & 8 != 0,
        unquantized: UNQUANTIZED[usize::from(flags >> 4) % UNQUANTIZED.len()],
    };
    // config.json's rules (method, format, FP8 block) on arbitrary text: no panic, and a
    // block that is accepted is one the planner can take.
    if flags & 64 != 0
        && let Ok(info) = crate::conventions::parse_config(
            &String::from_utf8_lossy(index),
            std::path::Path::new("fuzz/config.json"),
        )
        && let Some((r, c)) = info.block
        && !((1..=1 << 20).contains(&r) && (1..=1 << 20).contains(&c))
    {
        return Err(format!("config.json gave the block {r}x{c}"));
    }
    let Ok(plan) = plan::plan(&ck, &tensors, target, &filter) else {
        return Ok(false);
    };
    let mut each = Vec::new();
    for o in &plan.outs {
        let n = sizes::bytes(&o.name, o.dtype, &o.shape)
            .map_err(|e| format!("an accepted plan has an unchecked size: {e}"))?;
        each.push(n);
    }
    let total = sizes::total(each).map_err(|e| format!("an accepted plan: {e}"))?;
    let bound = 8 * file.len() as u64;
    if total > bound {
        return Err(format!(
            "{target:?}: the plan writes {total} bytes from a {}-byte file",
            file.len()
        ));
    }
    // In vcvt-st's own tests (not in the fuzz crate, which has no writer): write the plan
    // and read the output back.
    #[cfg(test)]
    {
        let out = std::env::temp_dir().join(format!(
            "vcvt-st-fuzz-replay-{}-{:?}.safetensors",
            std::process::id(),
            std::thread::current().id()
        ));
        crate::write::write_first_shard(&ck, &parsed, &plan, &out)
            .map_err(|e| format!("an accepted plan failed to write: {e}"))?;
        let bytes = std::fs::read(&out).map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&out);
        let st = safetensors::SafeTensors::deserialize(&bytes)
            .map_err(|e| format!("the output does not parse: {e}"))?;
        for o in &plan.outs {
            let t = st
                .tensor(&o.name)
                .map_err(|e| format!("output `{}`: {e}", o.name))?;
            if t.dtype() != o.dtype || t.shape() != o.shape.as_slice() {
                return Err(format!("output `{}` is not as planned", o.name));
            }
        }
    }
    Ok(true)
}

/// A safetensors file from a description: a tensor count, then per tensor a name, a dtype,
/// a rank and dimensions (each one byte, or nine for a raw `u64`); the data bytes repeat the
/// description's bytes.
fn described(d: &[u8]) -> Vec<u8> {
    const NAMES: [&str; 21] = [
        "w",
        "w_scale_inv",
        "x_blocks",
        "x_scales",
        "x",
        "model.norm.weight",
        "lm_head.weight",
        "e.weight",
        "e.weight_scale_inv",
        "e_blocks",
        // ModelOpt NVFP4 / MXFP8 groups.
        "m",
        "m_scale",
        "m_scale_2",
        // Scaled FP8 (compressed-tensors, FBGEMM, ModelOpt) with an activation scale and a
        // zero point; compressed-tensors NVFP4.
        "q.weight",
        "q.weight_scale",
        "q.input_scale",
        "q.weight_zero_point",
        "p.weight_packed",
        "p.weight_scale",
        "p.weight_global_scale",
        // A projection whose NVFP4 global scale compressed-tensors shares with `q.weight`'s
        // siblings' (`k_proj`, `v_proj`).
        "a.q_proj.weight",
    ];
    const DTYPES: [&str; 12] = [
        "F32", "BF16", "F16", "F8_E4M3", "U8", "F8_E8M0", "F4", "F64", "I32", "F6_E2M3", "F8_E5M2",
        "BOOL",
    ];
    const HOSTILE: [u64; 10] = [
        0,
        1,
        16,
        32,
        128,
        1 << 32,
        1 << 59,
        1 << 60,
        1 << 63,
        u64::MAX,
    ];
    let mut at = 0;
    let mut next = || {
        let b = d.get(at).copied().unwrap_or(0);
        at += 1;
        b
    };
    let count = usize::from(next() % 6) + 1;
    let mut specs: Vec<(&str, &str, Vec<u64>)> = Vec::new();
    for _ in 0..count {
        let name = NAMES[usize::from(next()) % NAMES.len()];
        let dtype = DTYPES[usize::from(next()) % DTYPES.len()];
        let rank = usize::from(next() % 5);
        let mut shape = Vec::with_capacity(rank);
        for _ in 0..rank {
            let b = next();
            shape.push(match b {
                0..=199 => u64::from(b % 40),
                200..=249 => HOSTILE[usize::from(b - 200) % HOSTILE.len()],
                _ => u64::from_le_bytes(std::array::from_fn(|_| next())),
            });
        }
        specs.push((name, dtype, shape));
    }
    let bits = |dtype: &str| -> u64 {
        match dtype {
            "F64" => 64,
            "F32" | "I32" => 32,
            "BF16" | "F16" => 16,
            "F6_E2M3" => 6,
            "F4" => 4,
            _ => 8,
        }
    };
    let data: Vec<Vec<u8>> = specs
        .iter()
        .map(|(_, dtype, shape)| {
            let n = shape
                .iter()
                .try_fold(1u64, |a, &b| a.checked_mul(b))
                .and_then(|n| n.checked_mul(bits(dtype)))
                .map(|b| b.div_ceil(8))
                .filter(|&b| b <= 1 << 16)
                .unwrap_or(u64::from(next()));
            (0..n as usize)
                .map(|i| d.get(i % d.len().max(1)).copied().unwrap_or(0))
                .collect()
        })
        .collect();
    let tensors: Vec<(&str, &str, &[u64], &[u8])> = specs
        .iter()
        .zip(&data)
        .map(|((name, dtype, shape), bytes)| (*name, *dtype, shape.as_slice(), bytes.as_slice()))
        .collect();
    st_file(&tensors)
}

/// A safetensors file of `(name, dtype, shape, bytes)`, its header written by hand (so
/// that it may say anything).
fn st_file(tensors: &[(&str, &str, &[u64], &[u8])]) -> Vec<u8> {
    let mut header = String::from("{");
    let mut data = Vec::new();
    for (i, (name, dtype, shape, bytes)) in tensors.iter().enumerate() {
        if i > 0 {
            header.push(',');
        }
        let shape: Vec<String> = shape.iter().map(u64::to_string).collect();
        header += &format!(
            r#""{name}":{{"dtype":"{dtype}","shape":[{}],"data_offsets":[{},{}]}}"#,
            shape.join(","),
            data.len(),
            data.len() + bytes.len()
        );
        data.extend_from_slice(bytes);
    }
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    file
}

/// One input: target index, block index, flags, the file and the index.
fn input(target: u8, block: u8, flags: u8, file: &[u8], index: &str) -> Vec<u8> {
    let mut v = vec![target, block, flags];
    v.extend_from_slice(&(file.len() as u32).to_le_bytes());
    v.extend_from_slice(file);
    v.extend_from_slice(index.as_bytes());
    v
}

/// The seed corpus (`fuzz/corpus/st_plan`, written by `fuzz/examples/gen_corpus.rs`):
/// every companion layout, quantization targets, and the hostile shapes of issue 33.
pub fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    let (bf16, f32, f8, mx, mx8, nv) = (0, 2, 3, 4, 5, 6);
    let fp8 = st_file(&[
        ("w", "F8_E4M3", &[2, 3], &[0x38; 6]),
        ("w_scale_inv", "F32", &[1, 1], &[0, 0, 0x80, 0x3F]),
    ]);
    let blocks = st_file(&[
        ("x_blocks", "U8", &[2, 1, 16], &[0x21; 32]),
        ("x_scales", "U8", &[2, 1], &[127; 2]),
        ("x_bias", "BF16", &[2], &[0; 4]),
    ]);
    let floats = st_file(&[
        ("a", "F32", &[2, 32], &[0x3F; 256]),
        ("b", "BF16", &[4, 4], &[0x3F; 32]),
        ("c", "F16", &[3], &[0x3C; 6]),
        ("model.norm.weight", "BF16", &[2, 2], &[0; 8]),
        ("i", "I32", &[1], &[1; 4]),
        ("f4", "F4", &[4], &[0x21; 2]),
    ]);
    let huge_empty = st_file(&[
        ("x_blocks", "U8", &[1 << 60, 0, 16], &[]),
        ("x_scales", "U8", &[1 << 60, 0], &[]),
        ("w", "F8_E4M3", &[1 << 60, 0], &[]),
        ("w_scale_inv", "F32", &[1 << 53, 0], &[]),
    ]);
    let wrap = st_file(&[
        ("x_blocks", "U8", &[0, 1 << 59, 16], &[]),
        ("x_scales", "U8", &[0, 1 << 59], &[]),
    ]);
    let fp8_empty = st_file(&[
        ("w", "F8_E4M3", &[0, 128], &[]),
        ("w_scale_inv", "F32", &[0, 1], &[]),
    ]);
    let lonely = st_file(&[("x_scales", "U8", &[2], &[1, 2])]);
    let one = st_file(&[("a", "F32", &[1], &[0; 4])]);
    // ModelOpt groups as `--to nvfp4` / `--to mxfp8` write them, and one whose last
    // dimension, doubled for NVFP4, would overflow without checked arithmetic.
    let nvfp4 = st_file(&[
        ("m", "U8", &[2, 8], &[0x21; 16]),
        ("m_scale", "F8_E4M3", &[2, 1], &[0x38; 2]),
        ("m_scale_2", "F32", &[], &[0, 0, 0x80, 0x3F]),
    ]);
    let mxfp8 = st_file(&[
        ("m", "F8_E4M3", &[2, 32], &[0x38; 64]),
        ("m_scale", "U8", &[2, 1], &[127; 2]),
    ]);
    let modelopt_huge = st_file(&[
        ("m", "U8", &[0, 1 << 62], &[]),
        ("m_scale", "F8_E4M3", &[0, 1 << 59], &[]),
        ("m_scale_2", "F32", &[1], &[0, 0, 0x80, 0x3F]),
        ("n", "U8", &[0, 1 << 63], &[]),
        ("n_scale", "F8_E4M3", &[0, 1 << 60], &[]),
        ("n_scale_2", "F32", &[1], &[0, 0, 0x80, 0x3F]),
    ]);
    // The conventions of `conventions.rs`: compressed-tensors FP8 per channel (BF16 scale)
    // with an activation scale, per tensor and in groups; compressed-tensors NVFP4; a scale
    // of the wrong shape; a zero point; an empty per-channel weight of a hostile width.
    let ct_fp8 = st_file(&[
        ("a.weight", "F8_E4M3", &[2, 32], &[0x38; 64]),
        ("a.weight_scale", "BF16", &[2, 1], &[0x80, 0x3F, 0, 0x40]),
        ("a.input_scale", "F32", &[1], &[0, 0, 0x80, 0x3F]),
        ("b.weight", "F8_E4M3", &[2, 32], &[0x38; 64]),
        ("b.weight_scale", "F32", &[], &[0, 0, 0x80, 0x3F]),
        ("c.weight", "F8_E4M3", &[2, 32], &[0x38; 64]),
        (
            "c.weight_scale",
            "F16",
            &[2, 2],
            &[0, 0x3C, 0, 0x3C, 0, 0x3C, 0, 0x3C],
        ),
    ]);
    let ct_nvfp4 = st_file(&[
        ("p.weight_packed", "U8", &[2, 8], &[0x21; 16]),
        ("p.weight_scale", "F8_E4M3", &[2, 1], &[0x38; 2]),
        ("p.weight_global_scale", "F32", &[1], &[0, 0, 0x80, 0x3F]),
    ]);
    let bad_scale = st_file(&[
        ("q.weight", "F8_E4M3", &[2, 32], &[0x38; 64]),
        ("q.weight_scale", "F32", &[2, 3], &[0; 24]),
    ]);
    let zero_point = st_file(&[
        ("q.weight", "F8_E4M3", &[2, 32], &[0x38; 64]),
        ("q.weight_scale", "F32", &[2, 1], &[0; 8]),
        ("q.weight_zero_point", "F32", &[2, 1], &[0; 8]),
    ]);
    let empty_channel = st_file(&[
        ("q.weight", "F8_E4M3", &[0, 1 << 62], &[]),
        ("q.weight_scale", "F32", &[0, 1], &[]),
    ]);
    let config = r#"{"quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"g": {"weights": {"block_structure": [1, 16]}}}}}"#;
    // Fused projections (their compressed-tensors NVFP4 global scale shared), fused experts
    // with per-block, per-channel and per-expert scales, an ambiguous expert scale, and
    // DeepSeek's block scale_inv of fused experts.
    let fused = st_file(&[
        ("l.q_proj.weight", "BF16", &[2, 32], &[0x3F; 128]),
        ("l.k_proj.weight", "BF16", &[1, 32], &[0x40; 64]),
        ("l.v_proj.weight", "F32", &[1, 32], &[0x3E; 128]),
        ("l.o_proj.weight", "F16", &[2, 16], &[0x3C; 64]),
    ]);
    let experts = st_file(&[
        ("b.weight", "F8_E4M3", &[2, 3, 32], &[0x38; 192]),
        (
            "b.weight_scale",
            "F32",
            &[2, 1, 2],
            &[0, 0, 0x80, 0x3F].repeat(4),
        ),
        ("c.weight", "F8_E4M3", &[2, 3, 32], &[0x38; 192]),
        (
            "c.weight_scale",
            "BF16",
            &[2, 3, 1],
            &[0x80, 0x3F].repeat(6),
        ),
        ("x.weight", "F8_E4M3", &[2, 3, 32], &[0x38; 192]),
        (
            "x.weight_scale",
            "F32",
            &[2, 1, 1],
            &[0, 0, 0x80, 0x3F].repeat(2),
        ),
        ("d.weight", "F8_E4M3", &[2, 3, 32], &[0x38; 192]),
        (
            "d.weight_scale_inv",
            "F32",
            &[2, 1, 2],
            &[0, 0, 0x80, 0x3F].repeat(4),
        ),
    ]);
    let experts_ambiguous = st_file(&[
        ("a.weight", "F8_E4M3", &[2, 1, 36], &[0x38; 72]),
        (
            "a.weight_scale",
            "F32",
            &[2, 1, 3],
            &[0, 0, 0x80, 0x3F].repeat(6),
        ),
    ]);
    let experts_huge = st_file(&[
        ("h.weight", "F8_E4M3", &[1 << 62, 1 << 62, 0], &[]),
        ("h.weight_scale", "F32", &[1 << 62, 1 << 62, 1], &[]),
    ]);
    vec![
        // Block index 3 (16): with bit 4 of byte 1, the compressed-tensors layout; bit 3,
        // one FP8 scale per tensor.
        ("quant-ct-nvfp4", input(nv, 3 | 16, 1, &fused, "")),
        ("quant-ct-fp8-block", input(f8, 3 | 16, 1, &fused, "")),
        ("quant-fp8-tensor", input(f8, 4 | 8, 1, &fused, "")),
        ("experts-dequant", input(bf16, 3, 0, &experts, "")),
        (
            "experts-ambiguous",
            input(bf16, 3, 0, &experts_ambiguous, ""),
        ),
        ("experts-huge", input(f32, 4, 0, &experts_huge, "")),
        ("ct-fp8-dequant", input(bf16, 4, 0, &ct_fp8, "")),
        ("ct-fp8-keep", input(f8, 4, 0, &ct_fp8, "")),
        ("ct-nvfp4-dequant", input(f32, 4, 0, &ct_nvfp4, "")),
        ("ct-fp8-config", input(bf16, 4, 64, &ct_fp8, config)),
        ("scale-wrong-shape", input(bf16, 4, 0, &bad_scale, "")),
        ("zero-point", input(bf16, 4, 0, &zero_point, "")),
        (
            "ct-fp8-empty-hostile",
            input(bf16, 4, 0, &empty_channel, ""),
        ),
        ("fp8-dequant", input(bf16, 4, 0, &fp8, "")),
        ("fp8-dequant-f32-block1", input(f32, 0, 0, &fp8, "")),
        ("fp8-requant", input(f8, 4, 1, &fp8, "")),
        ("mx-dequant", input(bf16, 4, 0, &blocks, "")),
        ("mx-keep", input(mx, 4, 0, &blocks, "")),
        ("cast-all", input(f32, 4, 0, &floats, "")),
        ("quant-fp8-block1", input(f8, 0, 1, &floats, "")),
        ("quant-fp8-huge-block", input(f8, 5, 1, &floats, "")),
        ("quant-mx", input(mx, 4, 1, &floats, "")),
        ("huge-empty", input(f32, 4, 0, &huge_empty, "")),
        ("wrapping", input(bf16, 4, 0, &wrap, "")),
        ("fp8-empty", input(bf16, 4, 0, &fp8_empty, "")),
        ("scales-alone", input(bf16, 4, 0, &lonely, "")),
        ("quant-nvfp4", input(nv, 4, 1, &floats, "")),
        // --unquantized-to bf16 (bits 4-5) and --case-sensitive-globs (bit 3).
        ("quant-mxfp8-unquantized", input(mx8, 4, 0x18, &floats, "")),
        ("nvfp4-dequant", input(bf16, 4, 0, &nvfp4, "")),
        ("nvfp4-keep", input(nv, 4, 0, &nvfp4, "")),
        ("mxfp8-dequant", input(f32, 4, 0, &mxfp8, "")),
        ("modelopt-huge-empty", input(f32, 4, 0, &modelopt_huge, "")),
        // Described files (flag 4): an FP8 pair, MXFP4 blocks with a hostile dimension,
        // two floats.
        (
            "described-fp8",
            input(bf16, 4, 4, &[1, 0, 3, 2, 2, 3, 1, 0, 2, 1, 1], ""),
        ),
        (
            "described-mx-hostile",
            input(bf16, 4, 4, &[1, 2, 4, 3, 207, 0, 16, 3, 4, 2, 207, 0], ""),
        ),
        (
            "described-floats",
            input(mx, 4, 5, &[1, 4, 0, 2, 4, 32, 6, 1, 2, 8, 64], ""),
        ),
        (
            "index",
            input(
                1,
                4,
                2,
                &one,
                r#"{"weight_map": {"a": "model.safetensors"}}"#,
            ),
        ),
        (
            "index-missing",
            input(
                1,
                4,
                2,
                &one,
                r#"{"weight_map": {"b": "model.safetensors"}}"#,
            ),
        ),
        (
            "index-elsewhere",
            input(
                1,
                4,
                2,
                &one,
                r#"{"weight_map": {"a": "other.safetensors"}}"#,
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    /// The seeds pass (and are what is committed).
    #[test]
    fn seeds_pass_and_are_committed() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/st_plan");
        for (name, data) in super::seeds() {
            let accepted = super::run(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
            // (A [2, 3] weight with one scale needs 128x128 tiles, not 1x1.)
            let refused = [
                "fp8-dequant-f32-block1",
                "wrapping",
                "scales-alone",
                "index-missing",
                "index-elsewhere",
                // `n` U8 [0, 2^63] with NVFP4 scales: its dequantized [0, 2^64] has no
                // usize shape, an error since nothing may be cast without its scales.
                "modelopt-huge-empty",
                "scale-wrong-shape",
                "zero-point",
                // [2, 1, 3] of [2, 1, 36]: 16-wide blocks (16, 16, 4) or groups of 12; and
                // [2^62, 2^62, 0]'s rows overflow.
                "experts-ambiguous",
                "experts-huge",
            ];
            assert_eq!(accepted, !refused.contains(&name), "{name}");
            let committed = std::fs::read(root.join(name)).unwrap_or_else(|e| {
                panic!(
                    "{name}: {e} (cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus)"
                )
            });
            assert_eq!(committed, data, "{name} differs from the committed seed");
        }
    }

    /// Replays the committed corpus of the `st_plan` fuzz target (and its regressions).
    #[test]
    fn replay_fuzz_corpus() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
        let (mut n, mut accepted) = (0, 0);
        // VCVT_ST_FUZZ_DIR: another directory of inputs (e.g. a fuzz run's scratch corpus).
        let extra = std::env::var_os("VCVT_ST_FUZZ_DIR").map(std::path::PathBuf::from);
        let dirs = [
            root.join("corpus/st_plan"),
            root.join("regressions/st_plan"),
        ];
        for dir in dirs.iter().chain(extra.as_ref()) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in entries {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "md") {
                    continue;
                }
                let data = std::fs::read(&p).unwrap();
                match super::run(&data) {
                    Ok(a) => accepted += usize::from(a),
                    Err(msg) => panic!("{}: {msg}", p.display()),
                }
                n += 1;
            }
        }
        println!("{n} inputs, {accepted} planned and written");
        assert!(n >= 16 && accepted >= 9, "{n} inputs, {accepted} accepted");
    }
}
