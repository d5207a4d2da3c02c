//! `vcvt-st convert`: converts each output tensor a few MiB at a time on the rayon pool
//! while a writer thread writes the previous piece (a bounded pipeline over a few reused
//! buffers), writes shards to temporary names and renames them into place only when
//! everything succeeded.

use std::collections::HashMap;
use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

use indicatif::{ProgressBar, ProgressStyle};
use safetensors::tensor::{Metadata, TensorInfo, TensorView};
use safetensors::{Dtype, SafeTensors};
use vcvt::block::{BlockFp8, Mx, MxElement, MxProfile, Shape};
use vcvt::safetensors::Format;
use vcvt::{BF16, F16};

use crate::plan::{self, Checkpoint, INDEX, Out, Plan, Source};
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

/// Values converted per piece of output (a few MiB: the writer writes one piece while the
/// rayon pool converts the next).
const STEP: usize = 1 << 22;
/// Bytes of a copied tensor handed to the writer at a time.
const COPY_STEP: usize = 8 << 20;
/// Conversion buffers in use at most: one being filled, one queued, one being written.
const BUFFERS: usize = 3;

/// A piece of a shard's tensor data, in file order.
enum Piece<'a> {
    /// Converted bytes in one of the pipeline's buffers, which the writer hands back.
    Buf(Vec<u8>),
    /// Converted bytes in a buffer of their own (quantized tensors), dropped once written.
    Owned(Vec<u8>),
    /// Input bytes written as they are; the writer gives back their pages afterwards.
    Input(&'a [u8]),
}

/// The writer thread has stopped (on an I/O error, which it returns).
struct Stopped;

/// The converting side of the pipeline.
struct Pipe<'a> {
    tx: SyncSender<Piece<'a>>,
    free: Receiver<Vec<u8>>,
    made: usize,
}

impl<'a> Pipe<'a> {
    /// A buffer to fill: one the writer gave back, a new one while fewer than `BUFFERS`
    /// exist, or else the next one the writer gives back.
    fn buffer(&mut self) -> Result<Vec<u8>, Stopped> {
        match self.free.try_recv() {
            Ok(b) => Ok(b),
            Err(_) if self.made < BUFFERS => {
                self.made += 1;
                Ok(Vec::new())
            }
            Err(_) => self.free.recv().map_err(|_| Stopped),
        }
    }

    fn send(&mut self, p: Piece<'a>) -> Result<(), Stopped> {
        self.tx.send(p).map_err(|_| Stopped)
    }
}

/// Resizes `buf` to `n` values of `D` and runs `f` on a typed view of it.
fn fill<D: bytemuck::Pod>(buf: &mut Vec<u8>, n: usize, f: impl FnOnce(&mut [D])) {
    buf.resize(n * size_of::<D>(), 0);
    match bytemuck::try_cast_slice_mut::<u8, D>(buf) {
        Ok(d) => f(d),
        Err(_) => {
            // The allocation is not aligned for `D` (no allocator in practice): go through
            // a typed buffer.
            let mut v = vec![D::zeroed(); n];
            f(&mut v);
            buf.copy_from_slice(bytemuck::cast_slice(&v));
        }
    }
}

/// Fills `buf` with `n` values of the output dtype through `f`, for the three
/// cast/dequantization destinations.
macro_rules! fill_as {
    ($dtype:expr, $buf:expr, $n:expr, |$d:ident| $body:expr) => {
        match $dtype {
            Dtype::BF16 => fill::<BF16>($buf, $n, |$d| $body),
            Dtype::F16 => fill::<F16>($buf, $n, |$d| $body),
            Dtype::F32 => fill::<f32>($buf, $n, |$d| $body),
            other => unreachable!("planned output dtype {other}"),
        }
    };
}

/// A tensor's values as f32 (the quantizers' input).
fn as_f32(name: &str, view: &TensorView<'_>) -> Vec<f32> {
    vcvt::safetensors::par_tensor_to_vec::<f32>(name, view)
        .unwrap_or_else(|e| panic!("planned tensor failed to convert: {e}"))
}

const PLANNED: &str = "lengths were checked when planning";

/// Sends the bytes of output tensor `out` down the pipe, piece by piece: copies as slices
/// of the input, casts and dequantizations a step of rows or values at a time into the
/// pipeline's buffers, quantizations whole.
fn produce<'c>(out: &Out, ctx: &Ctx<'c>, pipe: &mut Pipe<'c>) -> Result<(), Stopped> {
    let view = |n: &str| &ctx.views[n];
    match &out.source {
        Source::Copy(name) => {
            for piece in view(name).data().chunks(COPY_STEP) {
                pipe.send(Piece::Input(piece))?;
            }
        }
        Source::Cast(name) => {
            let v = view(name);
            let format = Format::from_dtype(v.dtype()).expect(PLANNED);
            let n: usize = out.shape.iter().product();
            let mut at = 0;
            while at < n {
                let m = STEP.min(n - at);
                let bytes = &v.data()[format.bytes_for(at).expect(PLANNED)
                    ..format.bytes_for(at + m).expect(PLANNED)];
                let part = TensorView::new(v.dtype(), vec![m], bytes).expect(PLANNED);
                let mut buf = pipe.buffer()?;
                fill_as!(out.dtype, &mut buf, m, |d| {
                    vcvt::safetensors::par_convert_tensor(name, &part, d).expect(PLANNED)
                });
                ctx.release(bytes);
                pipe.send(Piece::Buf(buf))?;
                at += m;
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
            // Whole tile rows per step, so that each step's scales are whole rows of them.
            let step = (STEP / (tile.0 * cols).max(1)).max(1) * tile.0;
            let scale_row = cols.div_ceil(tile.1) * 4;
            let mut r0 = 0;
            while r0 < rows {
                let r1 = (r0 + step).min(rows);
                let wp = &w[r0 * cols..r1 * cols];
                let sp = &s[r0 / tile.0 * scale_row..r1.div_ceil(tile.0) * scale_row];
                let mut buf = pipe.buffer()?;
                fill_as!(out.dtype, &mut buf, (r1 - r0) * cols, |d| {
                    fp8.par_dequantize(wp, sp, Shape::matrix(r1 - r0, cols), d)
                        .expect(PLANNED)
                });
                ctx.release(wp);
                pipe.send(Piece::Buf(buf))?;
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
            let step = (STEP / cols.max(1)).max(1);
            let mut r0 = 0;
            while r0 < rows {
                let r1 = (r0 + step).min(rows);
                let bp = &b[r0 * b_row..r1 * b_row];
                let sp = &s[r0 * s_row..r1 * s_row];
                let mut buf = pipe.buffer()?;
                fill_as!(out.dtype, &mut buf, (r1 - r0) * cols, |d| {
                    mx.par_dequantize(bp, sp, Shape::matrix(r1 - r0, cols), d)
                        .expect(PLANNED)
                });
                ctx.release(bp);
                pipe.send(Piece::Buf(buf))?;
                r0 = r1;
            }
        }
        Source::QuantFp8 {
            src,
            rows,
            cols,
            block,
            scales,
        } => {
            let cached = ctx.cache.lock().unwrap().remove(&out.name);
            let bytes = cached.unwrap_or_else(|| {
                let x = as_f32(src, view(src));
                let shape = Shape::matrix(*rows, *cols);
                let fp8 = BlockFp8::new(*block, *block);
                let mut codes = vec![0u8; fp8.data_len(shape).expect(PLANNED)];
                let mut sc = vec![0u8; fp8.scale_inv_len(shape).expect(PLANNED)];
                fp8.par_quantize(&x, shape, &mut codes, &mut sc)
                    .expect(PLANNED);
                // The writer puts F32 tensors first: the codes are asked for later, and
                // recomputed then rather than held in memory meanwhile.
                if *scales { sc } else { codes }
            });
            pipe.send(Piece::Owned(bytes))?;
        }
        Source::QuantMx {
            src,
            rows,
            cols,
            scales,
        } => {
            let cached = ctx.cache.lock().unwrap().remove(&out.name);
            let bytes = cached.unwrap_or_else(|| {
                let x = as_f32(src, view(src));
                let shape = Shape::matrix(*rows, *cols);
                let mut codes = vec![0u8; ctx.mx.data_len(shape).expect(PLANNED)];
                let mut sc = vec![0u8; ctx.mx.scales_len(shape).expect(PLANNED)];
                ctx.mx
                    .par_quantize(&x, shape, &mut codes, &mut sc)
                    .expect(PLANNED);
                if *scales {
                    sc
                } else {
                    // `X_blocks` sorts before `X_scales`: keep the (16x smaller) scales.
                    ctx.cache
                        .lock()
                        .unwrap()
                        .insert(format!("{src}_scales"), sc);
                    codes
                }
            });
            pipe.send(Piece::Owned(bytes))?;
        }
    }
    // Give back the pages of everything this tensor read (scales, quantizers' inputs).
    for d in ctx.inputs(out) {
        ctx.release(d);
    }
    Ok(())
}

/// The writer thread: writes the pieces in order, hands buffers back, and returns the
/// number of bytes written.
fn write_pieces<'c>(
    mut file: &File,
    pieces: Receiver<Piece<'c>>,
    free: Sender<Vec<u8>>,
    ctx: &Ctx<'c>,
) -> std::io::Result<u64> {
    let mut written = 0u64;
    for p in pieces {
        let len = match p {
            Piece::Buf(b) => {
                file.write_all(&b)?;
                let len = b.len();
                // The converting side may have finished: then the buffer is dropped.
                let _ = free.send(b);
                len
            }
            Piece::Owned(b) => {
                file.write_all(&b)?;
                b.len()
            }
            Piece::Input(d) => {
                file.write_all(d)?;
                ctx.release(d);
                d.len()
            }
        };
        written += len as u64;
        ctx.bar.inc(len as u64);
    }
    Ok(written)
}

/// A file removed when dropped (on an error or a panic) unless `keep` was called.
struct TempFile(Option<PathBuf>);

impl TempFile {
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
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
        println!("{}: {}", l.name, l.action);
    }
}

/// Writes the tensors of shard `shard` to `path`: the header as the safetensors crate
/// writes it (tensors by descending dtype, then by name), then the tensor data from a
/// writer thread while the rayon pool converts the next piece, into a temporary sibling
/// that is renamed into place once complete.
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
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp_path)
        .map_err(|e| cannot(&e))?;
    let tmp = TempFile(Some(tmp_path.clone()));
    let io = |e: std::io::Error| cannot(&e);
    file.write_all(&(header.len() as u64).to_le_bytes())
        .map_err(io)?;
    file.write_all(&header).map_err(io)?;

    let written = std::thread::scope(|s| {
        let (tx, pieces) = sync_channel(1);
        let (give_back, free) = channel();
        let f = &file;
        let writer = s.spawn(move || write_pieces(f, pieces, give_back, ctx));
        let mut pipe = Pipe { tx, free, made: 0 };
        for o in &outs {
            if produce(o, ctx, &mut pipe).is_err() {
                break;
            }
        }
        drop(pipe);
        writer
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
    .map_err(io)?;
    if written != offset as u64 {
        return Err(cannot(&format!(
            "internal error: {written} bytes of tensor data written, {offset} planned"
        )));
    }
    drop(file);
    std::fs::rename(&tmp_path, path)
        .map_err(|e| format!("{}: cannot rename into place: {e}", path.display()))?;
    tmp.keep();
    Ok(())
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

/// `vcvt-st convert`.
pub(crate) fn convert(args: &ConvertArgs) -> Result<(), String> {
    let ck = plan::open(&args.input)?;
    let parsed = ck.parse()?;
    let tensors = ck.tensors(&parsed)?;
    let filter = plan::Filter {
        include: &args.include,
        exclude: &args.exclude,
        fp8_block: args.fp8_block,
    };
    if args.fp8_block == 0 {
        return Err("--fp8-block must be at least 1".into());
    }
    let plan = plan::plan(&ck, &tensors, args.to, &filter)?;

    // The output must not be the input, nor (for a directory) exist already.
    let input_abs =
        std::fs::canonicalize(&args.input).map_err(|e| format!("{}: {e}", args.input.display()))?;
    if let Ok(out_abs) = std::fs::canonicalize(&args.output) {
        if out_abs == input_abs || (ck.dir.is_some() && out_abs.starts_with(&input_abs)) {
            return Err(format!(
                "{}: the output is the input",
                args.output.display()
            ));
        }
        if ck.dir.is_some() {
            return Err(format!(
                "{}: already exists (the output directory must be new)",
                args.output.display()
            ));
        }
        if out_abs.is_dir() {
            return Err(format!(
                "{}: is a directory (the input is a file)",
                args.output.display()
            ));
        }
    }
    let total: u64 = plan.outs.iter().map(|o| o.bytes() as u64).sum();
    if args.dry_run {
        print_plan(&plan);
        println!(
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
        let tmp = temp_sibling(&args.output);
        std::fs::create_dir(&tmp).map_err(|e| format!("{}: cannot create: {e}", tmp.display()))?;
        let r = write_dir(&ck, &plan, &ctx, args, &tmp).and_then(|()| {
            std::fs::rename(&tmp, &args.output)
                .map_err(|e| format!("{}: cannot rename into place: {e}", args.output.display()))
        });
        if let Err(e) = r {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    }
    ctx.bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
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
