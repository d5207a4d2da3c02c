//! `vcvt-st convert`: computes each output tensor when the writer asks for its bytes (one
//! converted tensor in memory at a time), writes shards to temporary names and renames
//! them into place only when everything succeeded.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};
use safetensors::tensor::{TensorView, View};
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
    /// Input bytes read for the output tensor written last.
    last: Mutex<Vec<&'a [u8]>>,
}

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

/// An output tensor as the safetensors writer sees it.
struct OutView<'o, 'c> {
    out: &'o Out,
    ctx: &'o Ctx<'c>,
}

impl View for OutView<'_, '_> {
    fn dtype(&self) -> Dtype {
        self.out.dtype
    }

    fn shape(&self) -> &[usize] {
        &self.out.shape
    }

    fn data(&self) -> Cow<'_, [u8]> {
        // The writer asks for one tensor at a time and has written the previous one.
        let mut last = self.ctx.last.lock().unwrap();
        for d in last.drain(..) {
            self.ctx.release(d);
        }
        *last = self.ctx.inputs(self.out);
        drop(last);
        let d = compute(self.out, self.ctx);
        self.ctx.bar.inc(self.out.bytes() as u64);
        d
    }

    fn data_len(&self) -> usize {
        self.out.bytes()
    }
}

/// Runs `f` on a typed view of a new zeroed byte buffer of `n` values of `D`.
fn typed_out<D: bytemuck::Pod>(n: usize, f: impl FnOnce(&mut [D])) -> Vec<u8> {
    let mut out = vec![0u8; n * size_of::<D>()];
    match bytemuck::try_cast_slice_mut::<u8, D>(&mut out) {
        Ok(d) => f(d),
        Err(_) => {
            // The allocation is not aligned for `D` (no allocator in practice): go through
            // a typed buffer.
            let mut v = vec![D::zeroed(); n];
            f(&mut v);
            out.copy_from_slice(bytemuck::cast_slice(&v));
        }
    }
    out
}

/// Fills a typed output through `f`, for the three cast/dequantization destinations.
macro_rules! by_dtype {
    ($dtype:expr, $n:expr, |$d:ident| $body:expr) => {
        match $dtype {
            Dtype::BF16 => typed_out::<BF16>($n, |$d| $body),
            Dtype::F16 => typed_out::<F16>($n, |$d| $body),
            Dtype::F32 => typed_out::<f32>($n, |$d| $body),
            other => unreachable!("planned output dtype {other}"),
        }
    };
}

/// A tensor's values as f32 (the quantizers' input).
fn as_f32(name: &str, view: &TensorView<'_>) -> Vec<f32> {
    vcvt::safetensors::par_tensor_to_vec::<f32>(name, view)
        .unwrap_or_else(|e| panic!("planned tensor failed to convert: {e}"))
}

fn compute<'c>(out: &Out, ctx: &Ctx<'c>) -> Cow<'c, [u8]> {
    let view = |n: &str| &ctx.views[n];
    let n: usize = out.shape.iter().product();
    const PLANNED: &str = "lengths were checked when planning";
    match &out.source {
        Source::Copy(name) => Cow::Borrowed(view(name).data()),
        Source::Cast(name) => {
            let v = view(name);
            let format = Format::from_dtype(v.dtype()).expect(PLANNED);
            Cow::Owned(by_dtype!(out.dtype, n, |d| {
                // A few MiB at a time, giving back the input's pages after each step, so
                // that resident memory is the output tensor and one step of the input.
                const STEP: usize = 1 << 22;
                let mut at = 0;
                while at < n {
                    let m = STEP.min(n - at);
                    let bytes = &v.data()[format.bytes_for(at).expect(PLANNED)
                        ..format.bytes_for(at + m).expect(PLANNED)];
                    let part = TensorView::new(v.dtype(), vec![m], bytes).expect(PLANNED);
                    vcvt::safetensors::par_convert_tensor(name, &part, &mut d[at..at + m])
                        .expect(PLANNED);
                    ctx.release(bytes);
                    at += m;
                }
            }))
        }
        Source::DequantFp8 {
            weight,
            scale_inv,
            tile,
        } => {
            let w = view(weight);
            let shape = Shape::matrix(w.shape()[0], w.shape()[1]);
            let fp8 = BlockFp8::new(tile.0, tile.1);
            let s = view(scale_inv).data();
            Cow::Owned(by_dtype!(out.dtype, n, |d| {
                fp8.par_dequantize(w.data(), s, shape, d).expect(PLANNED)
            }))
        }
        Source::DequantMx {
            blocks,
            scales,
            rows,
            cols,
        } => {
            let shape = Shape::matrix(*rows, *cols);
            let (b, s) = (view(blocks).data(), view(scales).data());
            let mx = Mx::new(MxElement::E2M1);
            Cow::Owned(by_dtype!(out.dtype, n, |d| {
                mx.par_dequantize(b, s, shape, d).expect(PLANNED)
            }))
        }
        Source::QuantFp8 {
            src,
            rows,
            cols,
            block,
            scales,
        } => {
            if let Some(v) = ctx.cache.lock().unwrap().remove(&out.name) {
                return Cow::Owned(v);
            }
            let x = as_f32(src, view(src));
            let shape = Shape::matrix(*rows, *cols);
            let fp8 = BlockFp8::new(*block, *block);
            let mut codes = vec![0u8; fp8.data_len(shape).expect(PLANNED)];
            let mut sc = vec![0u8; fp8.scale_inv_len(shape).expect(PLANNED)];
            fp8.par_quantize(&x, shape, &mut codes, &mut sc)
                .expect(PLANNED);
            if *scales {
                // The writer puts F32 tensors first: the codes are asked for later, and
                // recomputed then rather than held in memory meanwhile.
                Cow::Owned(sc)
            } else {
                Cow::Owned(codes)
            }
        }
        Source::QuantMx {
            src,
            rows,
            cols,
            scales,
        } => {
            if let Some(v) = ctx.cache.lock().unwrap().remove(&out.name) {
                return Cow::Owned(v);
            }
            let x = as_f32(src, view(src));
            let shape = Shape::matrix(*rows, *cols);
            let mut codes = vec![0u8; ctx.mx.data_len(shape).expect(PLANNED)];
            let mut sc = vec![0u8; ctx.mx.scales_len(shape).expect(PLANNED)];
            ctx.mx
                .par_quantize(&x, shape, &mut codes, &mut sc)
                .expect(PLANNED);
            if *scales {
                Cow::Owned(sc)
            } else {
                // `X_blocks` sorts before `X_scales`: keep the (16x smaller) scales.
                ctx.cache
                    .lock()
                    .unwrap()
                    .insert(format!("{src}_scales"), sc);
                Cow::Owned(codes)
            }
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

/// Writes the tensors of shard `shard` to `path` (through the safetensors crate, which
/// writes a temporary sibling and renames it).
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
    let tensors = plan
        .outs
        .iter()
        .filter(|o| o.shard == shard)
        .map(|o| (o.name.clone(), OutView { out: o, ctx }));
    safetensors::serialize_to_file(tensors, Some(meta), path)
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))
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
        last: Mutex::new(Vec::new()),
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
