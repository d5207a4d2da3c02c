//! `vcvt-st convert`: writes each output tensor in pieces, never holding one whole (casts
//! and dequantizations 256 KiB at a time on this thread, quantizations a step of tile rows
//! at a time on the rayon pool; see [`produce`]), writes shards to temporary names and
//! renames them into place only when everything succeeded.

use std::collections::HashMap;
use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};
use safetensors::tensor::{Metadata, TensorInfo, TensorView};
use safetensors::{Dtype, SafeTensors};
use vcvt::block::{BlockFp8, Mx, MxElement, MxProfile, Shape};
use vcvt::safetensors::Format;
use vcvt::{BF16, F16};

use crate::cleanup;
use crate::plan::{self, Checkpoint, INDEX, Out, Plan, Source};
use crate::sizes;
use crate::stdio::{errln, outln};
use crate::{ConvertArgs, MxProfileArg, Target};

/// What the writer needs to compute output tensors.
struct Ctx<'a> {
    views: HashMap<&'a str, TensorView<'a>>,
    /// Scales computed with their codes, until the writer asks for them.
    cache: Mutex<HashMap<String, Vec<u8>>>,
    bar: ProgressBar,
    mx: Mx,
    /// The mapped inputs, to give back the pages of tensors already written.
    maps: Vec<&'a memmap2::Mmap>,
}

/// The safetensors crate's limit on the header (it refuses to read larger ones).
const MAX_HEADER_SIZE: usize = 100_000_000;

impl<'a> Ctx<'a> {
    /// Drops this process's mapping of the pages of `data` (a slice of one of the inputs),
    /// so that resident memory stays near one tensor rather than growing to the whole
    /// checkpoint; the page cache keeps them, and a later read maps them again.
    fn release(&self, data: &[u8]) {
        let p = data.as_ptr() as usize;
        for m in &self.maps {
            let base = m.as_ptr() as usize;
            if p >= base && p + data.len() <= base + m.len() && !data.is_empty() {
                // SAFETY: `MADV_DONTNEED` on this read-only, shared file mapping only drops
                // page-table entries; the next access reads the same bytes from the file
                // again (vcvt-st never writes its input, and its contract is that nothing
                // else does during the run), so no reference into the mapping sees a change.
                let _ = unsafe {
                    m.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        p - base,
                        data.len(),
                    )
                };
            }
        }
    }

    /// The input slices that output `out` reads.
    fn inputs(&self, out: &Out) -> Vec<&'a [u8]> {
        let names: Vec<&String> = match &out.source {
            Source::Copy(n) | Source::Cast(n) => vec![n],
            Source::DequantFp8 {
                weight, scale_inv, ..
            } => vec![weight, scale_inv],
            Source::DequantMx { blocks, scales, .. } => vec![blocks, scales],
            Source::QuantFp8 { src, .. } | Source::QuantMx { src, .. } => vec![src],
        };
        names
            .into_iter()
            .map(|n| self.views[n.as_str()].data())
            .collect()
    }
}

/// Output bytes converted and written at a time by the casts and dequantizations: small
/// enough that the converted bytes are still in this core's L2 cache when `write(2)` copies
/// them into the page cache. (Converting on the rayon pool into large buffers that a writer
/// thread then wrote took twice as long on a 2-core VM: every byte written crossed from one
/// core's cache to the other's, and writing, not converting, is what bounds these paths.)
const CHUNK_BYTES: usize = 256 << 10;
/// Values per step of the input: the pages of a step are given back once it is written, and
/// quantization converts a step to f32 at a time (whole tile rows or rows).
const STEP: usize = 1 << 22;
/// Bytes of a copied tensor written at a time.
const COPY_STEP: usize = 8 << 20;

/// Where a shard's tensor data goes: the file, a scratch buffer for converted chunks, and
/// the count of bytes written.
struct Sink<'f> {
    file: &'f File,
    /// Converted values of one chunk (f32 words, so that every output type is aligned).
    chunk: Vec<f32>,
    /// A step of a quantizer's input, as f32.
    values: Vec<f32>,
    /// A step of a quantizer's output.
    codes: Vec<u8>,
    written: u64,
}

impl Sink<'_> {
    fn write(&mut self, ctx: &Ctx<'_>, bytes: &[u8]) -> std::io::Result<()> {
        cleanup::check()?;
        self.file.write_all(bytes)?;
        self.written += bytes.len() as u64;
        ctx.bar.inc(bytes.len() as u64);
        Ok(())
    }

    /// Converts `n` values of `D` with `f` into the chunk buffer and writes them.
    fn emit<D: bytemuck::Pod>(
        &mut self,
        ctx: &Ctx<'_>,
        n: usize,
        f: impl FnOnce(&mut [D]),
    ) -> std::io::Result<()> {
        cleanup::check()?;
        let bytes = n * size_of::<D>();
        let words = bytes.div_ceil(4);
        if self.chunk.len() < words {
            self.chunk.resize(words, 0.0);
        }
        let all: &mut [u8] = bytemuck::cast_slice_mut(&mut self.chunk[..words]);
        // f32 words are aligned for every output type (BF16, F16, f32).
        f(bytemuck::cast_slice_mut(&mut all[..bytes]));
        let mut file = self.file;
        let out: &[u8] = &bytemuck::cast_slice(&self.chunk[..words])[..bytes];
        file.write_all(out)?;
        self.written += bytes as u64;
        ctx.bar.inc(bytes as u64);
        Ok(())
    }
}

/// Converts `n` values of the output dtype with `f` and writes them, for the three
/// cast/dequantization destinations.
macro_rules! emit_as {
    ($sink:expr, $ctx:expr, $dtype:expr, $n:expr, |$d:ident| $body:expr) => {
        match $dtype {
            Dtype::BF16 => $sink.emit::<BF16>($ctx, $n, |$d| $body),
            Dtype::F16 => $sink.emit::<F16>($ctx, $n, |$d| $body),
            Dtype::F32 => $sink.emit::<f32>($ctx, $n, |$d| $body),
            other => unreachable!("planned output dtype {other}"),
        }
    };
}

/// Converts values `at..at + n` of input tensor `view` to f32 into `out`, on the rayon pool,
/// and gives back the pages of the input it read.
fn to_f32(
    ctx: &Ctx<'_>,
    name: &str,
    view: &TensorView<'_>,
    at: usize,
    n: usize,
    out: &mut Vec<f32>,
) {
    let format = Format::from_dtype(view.dtype()).expect(PLANNED);
    let bytes = &view.data()
        [format.bytes_for(at).expect(PLANNED)..format.bytes_for(at + n).expect(PLANNED)];
    let part = TensorView::new(view.dtype(), vec![n], bytes).expect(PLANNED);
    out.resize(n, 0.0);
    vcvt::safetensors::par_convert_tensor(name, &part, out)
        .unwrap_or_else(|e| panic!("planned tensor failed to convert: {e}"));
    ctx.release(bytes);
}

const PLANNED: &str = "lengths were checked when planning";

/// Rows per chunk of `cols` values each (at least one).
fn chunk_rows(cols: usize, out_size: usize) -> usize {
    (CHUNK_BYTES / (cols * out_size).max(1)).max(1)
}

/// The little-endian f32 `scale_inv` bytes that `fp8.quantize` gives the `rows × cols`
/// matrix `x` (tiles of `block × block`): each tile's amax, then the profile's rule.
fn tile_scales(fp8: &BlockFp8, x: &[f32], rows: usize, cols: usize, block: usize) -> Vec<u8> {
    let across = cols.div_ceil(block);
    let mut row = vec![0f32; across];
    let mut out = Vec::with_capacity(rows.div_ceil(block) * across * 4);
    for tile_rows in x.chunks(block.saturating_mul(cols).max(1)) {
        // Amaxes are non-negative or NaN; as bits, NaN compares above every number, so the
        // maximum of the bits propagates a NaN as the quantizer does.
        let mut m = vec![0u32; across];
        for r in tile_rows.chunks(cols) {
            vcvt::block::amax_blocks(r, block, &mut row).expect(PLANNED);
            for (m, a) in m.iter_mut().zip(&row) {
                *m = (*m).max(a.to_bits());
            }
        }
        for m in m {
            out.extend_from_slice(&fp8.scale_inv(f32::from_bits(m)).to_le_bytes());
        }
    }
    debug_assert_eq!(rows.div_ceil(block) * across * 4, out.len());
    out
}

/// Writes the bytes of output tensor `out`: copies straight from the mapped input; casts
/// and dequantizations a chunk at a time on this thread (writing, not converting, bounds
/// them); quantizations a step of whole tile rows or rows at a time on the rayon pool
/// (converting bounds them), so that no tensor is ever held whole.
fn produce(out: &Out, ctx: &Ctx<'_>, sink: &mut Sink<'_>) -> std::io::Result<()> {
    let view = |n: &str| &ctx.views[n];
    let out_size = Format::from_dtype(out.dtype).map_or(1, |f| f.bytes_for(1).unwrap_or(1));
    if out.bytes() == 0 {
        // An empty tensor, whatever its other dimensions claim (`[2^60, 0]`): no row to
        // visit. (Its inputs are empty too; the plan checked the shapes.)
        return Ok(());
    }
    match &out.source {
        Source::Copy(name) => {
            for piece in view(name).data().chunks(COPY_STEP) {
                sink.write(ctx, piece)?;
                ctx.release(piece);
            }
        }
        Source::Cast(name) => {
            let v = view(name);
            let format = Format::from_dtype(v.dtype()).expect(PLANNED);
            let n: usize = out.shape.iter().product();
            let per_chunk = (CHUNK_BYTES / out_size).max(1);
            for step in (0..n).step_by(STEP) {
                let step_end = (step + STEP).min(n);
                for at in (step..step_end).step_by(per_chunk) {
                    let m = per_chunk.min(step_end - at);
                    let bytes = &v.data()[format.bytes_for(at).expect(PLANNED)
                        ..format.bytes_for(at + m).expect(PLANNED)];
                    let part = TensorView::new(v.dtype(), vec![m], bytes).expect(PLANNED);
                    emit_as!(sink, ctx, out.dtype, m, |d| {
                        vcvt::safetensors::convert_tensor(name, &part, d).expect(PLANNED)
                    })?;
                }
                ctx.release(
                    &v.data()[format.bytes_for(step).expect(PLANNED)
                        ..format.bytes_for(step_end).expect(PLANNED)],
                );
            }
        }
        Source::DequantFp8 {
            weight,
            scale_inv,
            tile,
        } => {
            let w = view(weight);
            let (rows, cols) = (w.shape()[0], w.shape()[1]);
            let fp8 = BlockFp8::new(tile.0, tile.1);
            let (w, s) = (w.data(), view(scale_inv).data());
            let scale_row = cols.div_ceil(tile.1) * 4;
            // A chunk lies inside one tile row, or is whole tile rows: then its scales are
            // whole rows of them, and its local tile grid is the tensor's.
            let mut k = chunk_rows(cols, out_size);
            if k > tile.0 {
                k -= k % tile.0;
            }
            let mut r0 = 0;
            let mut released = 0;
            while r0 < rows {
                let tile_end = (r0 / tile.0 + 1) * tile.0;
                let r1 = if k >= tile.0 {
                    r0 + k
                } else {
                    (r0 + k).min(tile_end)
                }
                .min(rows);
                let wp = &w[r0 * cols..r1 * cols];
                let sp = &s[r0 / tile.0 * scale_row..r1.div_ceil(tile.0) * scale_row];
                emit_as!(sink, ctx, out.dtype, (r1 - r0) * cols, |d| {
                    fp8.dequantize(wp, sp, Shape::matrix(r1 - r0, cols), d)
                        .expect(PLANNED)
                })?;
                if (r1 - released) * cols >= STEP || r1 == rows {
                    ctx.release(&w[released * cols..r1 * cols]);
                    released = r1;
                }
                r0 = r1;
            }
        }
        Source::DequantMx {
            blocks,
            scales,
            rows,
            cols,
        } => {
            let (rows, cols) = (*rows, *cols);
            let (b, s) = (view(blocks).data(), view(scales).data());
            let mx = Mx::new(MxElement::E2M1);
            // Rows are whole bytes of codes and of scales.
            let (b_row, s_row) = (b.len() / rows.max(1), s.len() / rows.max(1));
            let k = chunk_rows(cols, out_size);
            let mut released = 0;
            for r0 in (0..rows).step_by(k) {
                let r1 = (r0 + k).min(rows);
                let bp = &b[r0 * b_row..r1 * b_row];
                let sp = &s[r0 * s_row..r1 * s_row];
                emit_as!(sink, ctx, out.dtype, (r1 - r0) * cols, |d| {
                    mx.dequantize(bp, sp, Shape::matrix(r1 - r0, cols), d)
                        .expect(PLANNED)
                })?;
                if (r1 - released) * cols >= STEP || r1 == rows {
                    ctx.release(&b[released * b_row..r1 * b_row]);
                    released = r1;
                }
            }
        }
        Source::QuantFp8 {
            src,
            rows,
            cols,
            block,
            scales,
        } => {
            let (rows, cols, v) = (*rows, *cols, view(src));
            let fp8 = BlockFp8::new(*block, *block);
            // Whole tile rows per step: tiles are independent, so the steps' codes and
            // scales, concatenated, are those of the whole tensor.
            let step = sizes::step_rows(STEP, *block, cols);
            for r0 in (0..rows).step_by(step) {
                let r1 = r0.saturating_add(step).min(rows);
                let shape = Shape::matrix(r1 - r0, cols);
                to_f32(ctx, src, v, r0 * cols, (r1 - r0) * cols, &mut sink.values);
                if *scales {
                    // The scales (F32) come before the codes in the file: this pass takes
                    // each tile's amax and the scale rule alone, and the codes' pass
                    // quantizes.
                    let sc = tile_scales(&fp8, &sink.values, r1 - r0, cols, *block);
                    sink.write(ctx, &sc)?;
                    continue;
                }
                let mut codes = std::mem::take(&mut sink.codes);
                codes.resize(fp8.data_len(shape).expect(PLANNED), 0);
                let mut sc = vec![0u8; fp8.scale_inv_len(shape).expect(PLANNED)];
                fp8.par_quantize(&sink.values, shape, &mut codes, &mut sc)
                    .expect(PLANNED);
                let r = sink.write(ctx, &codes);
                sink.codes = codes;
                r?;
            }
        }
        Source::QuantMx {
            src,
            rows,
            cols,
            scales,
        } => {
            let cached = ctx.cache.lock().unwrap().remove(&out.name);
            if let Some(sc) = cached {
                sink.write(ctx, &sc)?;
            } else {
                let (rows, cols, v) = (*rows, *cols, view(src));
                let step = sizes::step_rows(STEP, 1, cols);
                let mut all_scales = Vec::new();
                for r0 in (0..rows).step_by(step) {
                    let r1 = (r0 + step).min(rows);
                    let shape = Shape::matrix(r1 - r0, cols);
                    to_f32(ctx, src, v, r0 * cols, (r1 - r0) * cols, &mut sink.values);
                    let mut codes = std::mem::take(&mut sink.codes);
                    codes.resize(ctx.mx.data_len(shape).expect(PLANNED), 0);
                    let mut sc = vec![0u8; ctx.mx.scales_len(shape).expect(PLANNED)];
                    ctx.mx
                        .par_quantize(&sink.values, shape, &mut codes, &mut sc)
                        .expect(PLANNED);
                    let r = sink.write(ctx, if *scales { &sc } else { &codes });
                    sink.codes = codes;
                    r?;
                    all_scales.extend_from_slice(&sc);
                }
                if !*scales {
                    // `X_blocks` sorts before `X_scales`: keep the (16x smaller) scales.
                    ctx.cache
                        .lock()
                        .unwrap()
                        .insert(format!("{src}_scales"), all_scales);
                }
            }
        }
    }
    // Give back the pages of everything this tensor read (scales, quantizers' inputs).
    for d in ctx.inputs(out) {
        ctx.release(d);
    }
    Ok(())
}

/// A temporary file or directory, removed when dropped (on an error or a panic) unless
/// `keep` was called, and by the signal handler meanwhile (see [`cleanup`]).
struct Temp(Option<PathBuf>);

impl Temp {
    /// Registers `path`, which the caller is about to create (an error once a signal
    /// arrived).
    fn new(path: &Path) -> std::io::Result<Temp> {
        cleanup::register(path)?;
        Ok(Temp(Some(path.to_path_buf())))
    }

    /// Stops tracking a path that could not be created (it may be someone else's).
    fn abandon(mut self) {
        if let Some(p) = self.0.take() {
            cleanup::unregister(&p);
        }
    }

    /// Renames the temporary to `to` and stops tracking it.
    fn rename_to(mut self, to: &Path) -> std::io::Result<()> {
        let p = self.0.take().expect("a live temporary");
        let r = cleanup::rename(&p, to);
        if r.is_err() {
            self.0 = Some(p);
        }
        r
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            cleanup::remove(&p);
            cleanup::unregister(&p);
        }
    }
}

/// Pauses after each tensor when `VCVT_ST_TEST_PAUSE_MS` is set: a hook for the tests that
/// interrupt a run midway (`tests/cli.rs`, `tests/hostile.rs`), not an option for users. A
/// signal ends the pause at once (as it ends a write), unless `VCVT_ST_TEST_STUCK` is also
/// set: then the pause ignores it, as a write blocked on a hung file system would, so that
/// the handler's own cleanup after [`cleanup::GRACE`] is tested.
fn test_pause() -> std::io::Result<()> {
    static PAUSE: std::sync::OnceLock<(Option<u64>, bool)> = std::sync::OnceLock::new();
    let (ms, stuck) = PAUSE.get_or_init(|| {
        let ms = std::env::var("VCVT_ST_TEST_PAUSE_MS")
            .ok()
            .and_then(|s| s.parse().ok());
        (ms, std::env::var_os("VCVT_ST_TEST_STUCK").is_some())
    });
    if let Some(ms) = ms {
        let end = std::time::Instant::now() + std::time::Duration::from_millis(*ms);
        while std::time::Instant::now() < end {
            if !stuck {
                cleanup::check()?;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    cleanup::check()
}

/// A temporary sibling of `path` (same directory, so that renaming it is atomic).
fn temp_sibling(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    path.with_file_name(format!(".{name}.vcvt-st-tmp-{}", std::process::id()))
}

fn print_plan(plan: &Plan) {
    for l in &plan.lines {
        outln!("{}: {}", l.name, l.action);
    }
}

/// Writes the tensors of shard `shard` to `path`: the header as the safetensors crate
/// writes it (tensors by descending dtype, then by name), then the tensor data piece by
/// piece ([`produce`]), into a temporary sibling that is renamed into place once complete.
fn write_shard(
    ck: &Checkpoint,
    plan: &Plan,
    shard: usize,
    ctx: &Ctx<'_>,
    path: &Path,
) -> Result<(), String> {
    let mut meta: HashMap<String, String> = SafeTensors::read_metadata(&ck.shards[shard].mmap)
        .ok()
        .and_then(|(_, m)| m.metadata().clone())
        .unwrap_or_default();
    meta.insert("format".into(), "pt".into());
    let mut outs: Vec<&Out> = plan.outs.iter().filter(|o| o.shard == shard).collect();
    outs.sort_by(|a, b| b.dtype.cmp(&a.dtype).then(a.name.cmp(&b.name)));
    let mut offset = 0;
    let mut infos = Vec::with_capacity(outs.len());
    for o in &outs {
        let n = o.bytes();
        infos.push((
            o.name.clone(),
            TensorInfo {
                dtype: o.dtype,
                shape: o.shape.clone(),
                data_offsets: (offset, offset + n),
            },
        ));
        offset += n;
    }
    let cannot = |e: &dyn std::fmt::Display| format!("{}: cannot write: {e}", path.display());
    let metadata = Metadata::new(Some(meta), infos).map_err(|e| cannot(&e))?;
    let mut header = serde_json::to_string(&metadata)
        .map_err(|e| cannot(&e))?
        .into_bytes();
    header.resize(header.len().next_multiple_of(8), b' ');
    if header.len() > MAX_HEADER_SIZE {
        return Err(cannot(&"header too large"));
    }

    let tmp_path = temp_sibling(path);
    let tmp = Temp::new(&tmp_path).map_err(|e| cannot(&e))?;
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp_path)
    {
        Ok(f) => f,
        Err(e) => {
            tmp.abandon();
            return Err(cannot(&e));
        }
    };
    let io = |e: std::io::Error| cannot(&e);
    file.write_all(&(header.len() as u64).to_le_bytes())
        .map_err(io)?;
    file.write_all(&header).map_err(io)?;

    let mut sink = Sink {
        file: &file,
        chunk: Vec::new(),
        values: Vec::new(),
        codes: Vec::new(),
        written: 0,
    };
    for o in &outs {
        produce(o, ctx, &mut sink).map_err(io)?;
        test_pause().map_err(io)?;
    }
    let written = sink.written;
    if written != offset as u64 {
        return Err(cannot(&format!(
            "internal error: {written} bytes of tensor data written, {offset} planned"
        )));
    }
    drop(file);
    tmp.rename_to(path)
        .map_err(|e| format!("{}: cannot rename into place: {e}", path.display()))
}

/// The updated `config.json`.
fn update_config(
    text: &str,
    path: &Path,
    args: &ConvertArgs,
    plan: &Plan,
) -> Result<String, String> {
    let mut v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("{}: invalid JSON: {e}", path.display()))?;
    let obj = v
        .as_object_mut()
        .ok_or_else(|| format!("{}: not a JSON object", path.display()))?;
    let dequantized_all = plan.outs.iter().all(|o| {
        !matches!(o.dtype, Dtype::F8_E4M3 | Dtype::U8) || !matches!(o.source, Source::Copy(_))
    });
    match args.to {
        Target::Bf16 | Target::F16 | Target::F32 => {
            let name = match args.to {
                Target::Bf16 => "bfloat16",
                Target::F16 => "float16",
                _ => "float32",
            };
            obj.insert("torch_dtype".into(), name.into());
            if obj.contains_key("dtype") {
                obj.insert("dtype".into(), name.into());
            }
            if dequantized_all {
                obj.remove("quantization_config");
            }
        }
        Target::F8e4m3 => {
            obj.insert(
                "quantization_config".into(),
                serde_json::json!({
                    "activation_scheme": "dynamic",
                    "fmt": "e4m3",
                    "quant_method": "fp8",
                    "weight_block_size": [args.fp8_block, args.fp8_block]
                }),
            );
        }
        Target::Mxfp4 => {
            obj.insert(
                "quantization_config".into(),
                serde_json::json!({ "quant_method": "mxfp4" }),
            );
        }
    }
    serde_json::to_string_pretty(&v).map_err(|e| e.to_string())
}

/// Writes everything of a directory checkpoint into `tmp`.
fn write_dir(
    ck: &Checkpoint,
    plan: &Plan,
    ctx: &Ctx<'_>,
    args: &ConvertArgs,
    tmp: &Path,
) -> Result<(), String> {
    let input = ck.dir.as_ref().unwrap();
    let mut weight_map = serde_json::Map::new();
    let mut total = 0usize;
    for o in &plan.outs {
        weight_map.insert(o.name.clone(), ck.shards[o.shard].file_name.clone().into());
        total += o.bytes();
    }
    for (i, s) in ck.shards.iter().enumerate() {
        write_shard(ck, plan, i, ctx, &tmp.join(&s.file_name))?;
    }
    if ck.index.is_some() || ck.shards.len() > 1 {
        let mut index = ck.index.clone().unwrap_or_else(|| serde_json::json!({}));
        let meta = index
            .as_object_mut()
            .ok_or_else(|| format!("{}: not a JSON object", input.join(INDEX).display()))?
            .entry("metadata")
            .or_insert_with(|| serde_json::json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.insert("total_size".into(), total.into());
        }
        index["weight_map"] = serde_json::Value::Object(weight_map);
        let text = serde_json::to_string_pretty(&index).map_err(|e| e.to_string())?;
        std::fs::write(tmp.join(INDEX), text + "\n")
            .map_err(|e| format!("{}: {e}", tmp.join(INDEX).display()))?;
    }
    // The other files: config.json updated, the rest copied.
    let shard_names: Vec<&str> = ck.shards.iter().map(|s| s.file_name.as_str()).collect();
    for e in std::fs::read_dir(input).map_err(|e| format!("{}: {e}", input.display()))? {
        cleanup::check().map_err(|e| e.to_string())?;
        let e = e.map_err(|e| format!("{}: {e}", input.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let ft = e.file_type().map_err(|e| format!("{}: {e}", e))?;
        if !ft.is_file()
            || name == INDEX
            || shard_names.contains(&name.as_str())
            || name.ends_with(".safetensors")
        {
            continue;
        }
        let dst = tmp.join(&name);
        if name == "config.json" {
            let text = std::fs::read_to_string(e.path())
                .map_err(|err| format!("{}: {err}", e.path().display()))?;
            let new = update_config(&text, &e.path(), args, plan)?;
            std::fs::write(&dst, new + "\n").map_err(|err| format!("{}: {err}", dst.display()))?;
        } else {
            std::fs::copy(e.path(), &dst).map_err(|err| format!("{}: {err}", dst.display()))?;
        }
    }
    Ok(())
}

/// Writes shard 0 of `plan` to `path` as `convert` does, with the default MX profile: the
/// writer's half of the fuzz corpus replay (`st_fuzz.rs`).
#[cfg(test)]
pub(crate) fn write_first_shard(
    ck: &Checkpoint,
    parsed: &[SafeTensors<'_>],
    plan: &Plan,
    path: &Path,
) -> Result<(), String> {
    let ctx = Ctx {
        views: parsed.iter().flat_map(|st| st.iter()).collect(),
        cache: Mutex::new(HashMap::new()),
        bar: ProgressBar::hidden(),
        mx: Mx::new(MxElement::E2M1),
        maps: ck.shards.iter().map(|s| &s.mmap).collect(),
    };
    write_shard(ck, plan, 0, &ctx, path)
}

/// `vcvt-st convert`.
pub(crate) fn convert(args: &ConvertArgs) -> Result<(), String> {
    // The output rules first: nothing is read before the output is known to be allowed.
    crate::paths::check_output(&args.input, &args.output)?;
    let opts = plan::OpenOptions {
        ignore_unindexed: args.ignore_unindexed,
    };
    let ck = plan::open_with(&args.input, opts)?;
    let parsed = ck.parse()?;
    let tensors = ck.tensors(&parsed)?;
    let filter = plan::Filter {
        include: &args.include,
        exclude: &args.exclude,
        fp8_block: args.fp8_block,
    };
    let plan = plan::plan(&ck, &tensors, args.to, &filter)?;
    let total = sizes::total(plan.outs.iter().map(Out::bytes))?;
    if args.dry_run {
        print_plan(&plan);
        outln!(
            "dry run: {} tensors, {} converted, {} bytes of tensor data would be written to {}",
            plan.outs.len(),
            plan.converted,
            total,
            args.output.display()
        );
        return Ok(());
    }

    let bar = if args.quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(total);
        b.set_style(
            ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}",
            )
            .unwrap(),
        );
        b
    };
    let views = parsed.iter().flat_map(|st| st.iter()).collect();
    let profile = match args.mx_profile {
        MxProfileArg::Ceil => MxProfile::Ceil,
        MxProfileArg::Ocp => MxProfile::Ocp,
    };
    let ctx = Ctx {
        views,
        cache: Mutex::new(HashMap::new()),
        bar,
        mx: Mx::new(MxElement::E2M1).profile(profile),
        maps: ck.shards.iter().map(|s| &s.mmap).collect(),
    };
    let start = std::time::Instant::now();
    if ck.dir.is_none() {
        write_shard(&ck, &plan, 0, &ctx, &args.output)?;
    } else {
        let tmp_path = temp_sibling(&args.output);
        let tmp = Temp::new(&tmp_path)
            .map_err(|e| format!("{}: cannot create: {e}", tmp_path.display()))?;
        if let Err(e) = std::fs::create_dir(&tmp_path) {
            tmp.abandon();
            return Err(format!("{}: cannot create: {e}", tmp_path.display()));
        }
        write_dir(&ck, &plan, &ctx, args, &tmp_path)?;
        tmp.rename_to(&args.output)
            .map_err(|e| format!("{}: cannot rename into place: {e}", args.output.display()))?;
    }
    ctx.bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    errln!(
        "wrote {} ({} tensors, {} converted, {:.1} MB in {:.2} s, {:.0} MB/s)",
        args.output.display(),
        plan.outs.len(),
        plan.converted,
        total as f64 / 1e6,
        secs,
        total as f64 / 1e6 / secs.max(1e-9)
    );
    Ok(())
}
