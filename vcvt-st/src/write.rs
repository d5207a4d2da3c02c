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
use vcvt::block::{BlockFp8, Fp8Profile, Mx, MxProfile, Nvfp4, Shape};
use vcvt::safetensors::Format;
use vcvt::{BF16, F16};

use crate::cleanup;
use crate::plan::{self, Checkpoint, NvPart, Out, Plan, Source};
use crate::sizes;
use crate::stdio::{errln, outln};
use crate::{ConvertArgs, Fp8ProfileArg, MxProfileArg, QuantConfig, Target, Unquantized};

/// What the writer needs to compute output tensors.
pub(crate) struct Ctx<'a> {
    views: HashMap<&'a str, TensorView<'a>>,
    /// Scales computed with their codes, until the writer asks for them.
    cache: Mutex<HashMap<String, Vec<u8>>>,
    pub(crate) bar: ProgressBar,
    mx_profile: MxProfile,
    fp8_profile: Fp8Profile,
    /// The mapped inputs, to give back the pages of tensors already written.
    maps: Vec<&'a memmap2::Mmap>,
}

/// The safetensors crate's limit on the header (it refuses to read larger ones).
const MAX_HEADER_SIZE: usize = 100_000_000;

impl<'a> Ctx<'a> {
    /// The profiles the quantizers use.
    pub(crate) fn profiles(&self) -> crate::estimate::Profiles {
        crate::estimate::Profiles {
            fp8: self.fp8_profile,
            mx: self.mx_profile,
        }
    }

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
            Source::DequantNvCt {
                packed,
                scales,
                global,
                ..
            } => vec![packed, scales, global],
            Source::DequantNv {
                weight,
                scales,
                tensor_scale,
                ..
            } => vec![weight, scales, tensor_scale],
            Source::QuantFp8 { src, .. }
            | Source::QuantMx { src, .. }
            | Source::QuantNv { src, .. } => vec![src],
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

/// The NVFP4 (ModelOpt) tensor scale of input tensor `v` (`n` values): the library's rule
/// applied to the amax of the whole tensor, computed a step at a time (and kept for the
/// other parts of the same tensor).
fn tensor_scale(
    ctx: &Ctx<'_>,
    name: &str,
    v: &TensorView<'_>,
    n: usize,
    values: &mut Vec<f32>,
) -> f32 {
    let key = format!("{name}\0tensor_scale");
    if let Some(b) = ctx.cache.lock().unwrap().get(&key) {
        return f32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
    }
    // Amaxes are non-negative or NaN; as bits, NaN compares above every number, so the
    // maximum of the bits propagates a NaN as the quantizer does.
    let mut m = 0u32;
    for at in (0..n).step_by(STEP) {
        let k = STEP.min(n - at);
        to_f32(ctx, name, v, at, k, values);
        m = m.max(vcvt::block::amax(&values[..]).to_bits());
    }
    // A block holding that amax: `quantize` derives the tensor scale from it by the
    // profile's rule, exactly as for the whole tensor.
    let mut block = [0f32; 16];
    block[0] = f32::from_bits(m);
    let (mut d, mut s) = ([0u8; 8], [0u8; 1]);
    let g = Nvfp4::new()
        .quantize(&block, Shape::matrix(1, 16), &mut d, &mut s, None)
        .expect(PLANNED);
    ctx.cache
        .lock()
        .unwrap()
        .insert(key, g.to_le_bytes().to_vec());
    g
}

/// Rows per chunk of `cols` values each (at least one).
fn chunk_rows(cols: usize, out_size: usize) -> usize {
    (CHUNK_BYTES / (cols * out_size).max(1)).max(1)
}

/// The little-endian f32 `scale_inv` bytes that `fp8.quantize` gives the `rows × cols`
/// matrix `x` (tiles of `tr × block`): each tile's amax, then the profile's rule.
fn tile_scales(
    fp8: &BlockFp8,
    x: &[f32],
    rows: usize,
    cols: usize,
    (tr, block): (usize, usize),
) -> Vec<u8> {
    let across = cols.div_ceil(block);
    let mut row = vec![0f32; across];
    let mut out = Vec::with_capacity(rows.div_ceil(tr) * across * 4);
    for tile_rows in x.chunks(tr.saturating_mul(cols).max(1)) {
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
    debug_assert_eq!(rows.div_ceil(tr) * across * 4, out.len());
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
            // F32 scales as they are; the BF16/F16 scales of scaled FP8, widened.
            let s = crate::conventions::scale_f32(view(scale_inv));
            let (w, s) = (w.data(), &s[..]);
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
        Source::DequantNv {
            weight,
            scales,
            tensor_scale,
            rows,
            cols,
        } => {
            let (rows, cols) = (*rows, *cols);
            let (b, s) = (view(weight).data(), view(scales).data());
            let g = f32::from_le_bytes(view(tensor_scale).data().try_into().expect(PLANNED));
            let nv = Nvfp4::new();
            let (b_row, s_row) = (cols / 2, cols / 16);
            let k = chunk_rows(cols, out_size);
            let mut released = 0;
            for r0 in (0..rows).step_by(k) {
                let r1 = (r0 + k).min(rows);
                let bp = &b[r0 * b_row..r1 * b_row];
                let sp = &s[r0 * s_row..r1 * s_row];
                emit_as!(sink, ctx, out.dtype, (r1 - r0) * cols, |d| {
                    nv.dequantize(bp, sp, g, Shape::matrix(r1 - r0, cols), d)
                        .expect(PLANNED)
                })?;
                if (r1 - released) * cols >= STEP || r1 == rows {
                    ctx.release(&b[released * b_row..r1 * b_row]);
                    released = r1;
                }
            }
        }
        Source::DequantNvCt {
            packed,
            scales,
            global,
            rows,
            cols,
        } => {
            let (rows, cols) = (*rows, *cols);
            let (b, s) = (view(packed).data(), view(scales).data());
            let g = f32::from_le_bytes(view(global).data().try_into().expect(PLANNED));
            let (b_row, s_row) = (cols / 2, cols / 16);
            let k = chunk_rows(cols, out_size);
            let mut values = Vec::new();
            let mut released = 0;
            for r0 in (0..rows).step_by(k) {
                let r1 = (r0 + k).min(rows);
                values.resize((r1 - r0) * cols, 0f32);
                crate::conventions::nvct_dequant(
                    &b[r0 * b_row..r1 * b_row],
                    &s[r0 * s_row..r1 * s_row],
                    g,
                    &mut values,
                );
                let bytes: &[u8] = bytemuck::cast_slice(&values);
                let part = TensorView::new(Dtype::F32, vec![values.len()], bytes).expect(PLANNED);
                emit_as!(sink, ctx, out.dtype, (r1 - r0) * cols, |d| {
                    vcvt::safetensors::convert_tensor("", &part, d).expect(PLANNED)
                })?;
                if (r1 - released) * cols >= STEP || r1 == rows {
                    ctx.release(&b[released * b_row..r1 * b_row]);
                    released = r1;
                }
            }
        }
        Source::DequantMx {
            blocks,
            scales,
            rows,
            cols,
            element,
        } => {
            let (rows, cols) = (*rows, *cols);
            let (b, s) = (view(blocks).data(), view(scales).data());
            let mx = Mx::new(*element);
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
            tile,
            scales,
        } => {
            let (rows, cols, v) = (*rows, *cols, view(src));
            let fp8 = BlockFp8::new(tile.0, tile.1).profile(ctx.fp8_profile);
            // Whole tile rows per step: tiles are independent, so the steps' codes and
            // scales, concatenated, are those of the whole tensor.
            let step = sizes::step_rows(STEP, tile.0, cols);
            for r0 in (0..rows).step_by(step) {
                let r1 = r0.saturating_add(step).min(rows);
                let shape = Shape::matrix(r1 - r0, cols);
                to_f32(ctx, src, v, r0 * cols, (r1 - r0) * cols, &mut sink.values);
                if *scales {
                    // The scales (F32) come before the codes in the file: this pass takes
                    // each tile's amax and the scale rule alone, and the codes' pass
                    // quantizes.
                    let sc = tile_scales(&fp8, &sink.values, r1 - r0, cols, *tile);
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
            element,
            scales_name,
        } => {
            let mx = Mx::new(*element).profile(ctx.mx_profile);
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
                    codes.resize(mx.data_len(shape).expect(PLANNED), 0);
                    let mut sc = vec![0u8; mx.scales_len(shape).expect(PLANNED)];
                    mx.par_quantize(&sink.values, shape, &mut codes, &mut sc)
                        .expect(PLANNED);
                    let r = sink.write(ctx, if *scales { &sc } else { &codes });
                    sink.codes = codes;
                    r?;
                    all_scales.extend_from_slice(&sc);
                }
                if !*scales {
                    // The codes come first in the file (`X_blocks` < `X_scales`; F8_E4M3
                    // `W` before uint8 `W_scale`): keep the (16x or 32x smaller) scales.
                    ctx.cache
                        .lock()
                        .unwrap()
                        .insert(scales_name.clone(), all_scales);
                }
            }
        }
        Source::QuantNv {
            src,
            rows,
            cols,
            part,
        } => {
            let (rows, cols, v) = (*rows, *cols, view(src));
            let g = tensor_scale(ctx, src, v, rows * cols, &mut sink.values);
            if *part == NvPart::TensorScale {
                sink.write(ctx, &g.to_le_bytes())?;
            } else {
                // The scales (F8_E4M3) come before the codes (uint8) in the file; each
                // pass quantizes (with the tensor scale, so each step's blocks are those
                // of the whole tensor) and writes its part.
                let nv = Nvfp4::new();
                let step = (STEP / cols.max(1)).max(1);
                for r0 in (0..rows).step_by(step) {
                    let r1 = (r0 + step).min(rows);
                    let shape = Shape::matrix(r1 - r0, cols);
                    to_f32(ctx, src, v, r0 * cols, (r1 - r0) * cols, &mut sink.values);
                    let mut codes = std::mem::take(&mut sink.codes);
                    codes.resize(nv.data_len(shape).expect(PLANNED), 0);
                    let mut sc = vec![0u8; nv.scales_len(shape).expect(PLANNED)];
                    nv.par_quantize(&sink.values, shape, &mut codes, &mut sc, Some(g))
                        .expect(PLANNED);
                    let r = sink.write(ctx, if *part == NvPart::Scales { &sc } else { &codes });
                    sink.codes = codes;
                    r?;
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
pub(crate) struct Temp(Option<PathBuf>);

impl Temp {
    /// Registers `path`, which the caller is about to create (an error once a signal
    /// arrived).
    pub(crate) fn new(path: &Path) -> std::io::Result<Temp> {
        cleanup::register(path)?;
        Ok(Temp(Some(path.to_path_buf())))
    }

    /// Stops tracking a path that could not be created (it may be someone else's).
    pub(crate) fn abandon(mut self) {
        if let Some(p) = self.0.take() {
            cleanup::unregister(&p);
        }
    }

    /// Renames the temporary to `to` and stops tracking it.
    pub(crate) fn rename_to(mut self, to: &Path) -> std::io::Result<()> {
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

pub(crate) fn print_plan(plan: &Plan) {
    for l in &plan.lines {
        outln!("{}: {}", l.name, l.action);
    }
}

/// The bytes before a shard's tensor data (the header's length, then the header as the
/// safetensors crate writes it: tensors by descending dtype, then by name), the output
/// tensors in file order, and the bytes of tensor data.
pub(crate) struct Layout<'p> {
    pub head: Vec<u8>,
    pub outs: Vec<&'p Out>,
    pub data: u64,
}

impl Layout<'_> {
    /// The size of the complete file.
    pub(crate) fn size(&self) -> u64 {
        self.head.len() as u64 + self.data
    }
}

/// The layout of shard `shard` of the output.
pub(crate) fn layout<'p>(
    ck: &Checkpoint,
    plan: &'p Plan,
    shard: usize,
    path: &Path,
) -> Result<Layout<'p>, String> {
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
    let mut head = (header.len() as u64).to_le_bytes().to_vec();
    head.extend_from_slice(&header);
    Ok(Layout {
        head,
        outs,
        data: offset as u64,
    })
}

/// Writes the tensors of a shard to `path` (its [`layout`], then the tensor data piece by
/// piece, [`produce`]) into a temporary sibling that is renamed into place once complete
/// (with `sync`, the file is `fsync`ed before the rename and its directory after, so that a
/// crash of the machine cannot leave a renamed file whose data never reached the disk).
pub(crate) fn write_shard(
    layout: &Layout<'_>,
    ctx: &Ctx<'_>,
    path: &Path,
    sync: bool,
) -> Result<(), String> {
    let cannot = |e: &dyn std::fmt::Display| format!("{}: cannot write: {e}", path.display());
    let tmp_path = crate::outfile::temp_sibling(path);
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
    file.write_all(&layout.head).map_err(io)?;

    let mut sink = Sink {
        file: &file,
        chunk: Vec::new(),
        values: Vec::new(),
        codes: Vec::new(),
        written: 0,
    };
    for o in &layout.outs {
        produce(o, ctx, &mut sink).map_err(io)?;
        test_pause().map_err(io)?;
    }
    let written = sink.written;
    if written != layout.data {
        return Err(cannot(&format!(
            "internal error: {written} bytes of tensor data written, {} planned",
            layout.data
        )));
    }
    if sync {
        file.sync_all().map_err(io)?;
    }
    drop(file);
    // A link or a special file put at the name meanwhile is refused, not replaced.
    crate::outfile::check_replaceable(path)?;
    tmp.rename_to(path)
        .map_err(|e| format!("{}: cannot rename into place: {e}", path.display()))?;
    if sync {
        // The rename itself reaches the disk with its directory.
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| format!("{}: cannot sync: {e}", dir.display()))?;
    }
    Ok(())
}

/// The updated `config.json`.
pub(crate) fn update_config(
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
        _ => {
            if let Some(to) = match args.unquantized_to {
                Unquantized::Keep => None,
                Unquantized::Bf16 => Some("bfloat16"),
                Unquantized::F16 => Some("float16"),
                Unquantized::F32 => Some("float32"),
            } {
                obj.insert("torch_dtype".into(), to.into());
                if obj.contains_key("dtype") {
                    obj.insert("dtype".into(), to.into());
                }
            }
            let gpt_oss = obj.get("model_type").and_then(|m| m.as_str()) == Some("gpt_oss");
            let conventional = match args.to {
                Target::F8e4m3 => true,
                Target::Mxfp4 => gpt_oss,
                _ => false,
            };
            let write = match args.quant_config {
                QuantConfig::Always => true,
                QuantConfig::Never => false,
                QuantConfig::Auto => conventional,
            };
            if !write {
                if args.quant_config == QuantConfig::Auto {
                    errln!(
                        "note: {}: no quantization_config written (no loader convention for --to {}{}; --quant-config always writes one)",
                        path.display(),
                        args.to.name(),
                        if args.to == Target::Mxfp4 {
                            " outside gpt-oss"
                        } else {
                            ""
                        }
                    );
                }
                return serde_json::to_string_pretty(&v).map_err(|e| e.to_string());
            }
            // Linear weights left unquantized, for the loaders that take such a list.
            let quantized: std::collections::HashSet<&str> = plan
                .outs
                .iter()
                .filter_map(|o| match &o.source {
                    Source::QuantFp8 { src, .. }
                    | Source::QuantMx { src, .. }
                    | Source::QuantNv { src, .. } => Some(src.as_str()),
                    _ => None,
                })
                .collect();
            let unquantized: Vec<String> = plan
                .outs
                .iter()
                .filter(|o| o.shape.len() == 2 && !quantized.contains(o.name.as_str()))
                .filter_map(|o| o.name.strip_suffix(".weight").map(str::to_owned))
                .collect();
            let qc = match args.to {
                Target::F8e4m3 if args.fp8_scales == crate::Fp8Scales::Channel => {
                    // compressed-tensors' FP8_DYNAMIC scheme: static per-channel weight
                    // scales, dynamic per-token activations.
                    let args8 = |strategy: &str, dynamic: bool| {
                        serde_json::json!({
                            "num_bits": 8, "type": "float", "symmetric": true,
                            "strategy": strategy, "dynamic": dynamic
                        })
                    };
                    serde_json::json!({
                        "quant_method": "compressed-tensors",
                        "format": "float-quantized",
                        "quantization_status": "compressed",
                        "config_groups": {"group_0": {
                            "targets": ["Linear"],
                            "weights": args8("channel", false),
                            "input_activations": args8("token", true)
                        }},
                        "ignore": unquantized
                    })
                }
                Target::F8e4m3 => {
                    let mut q = serde_json::json!({
                        "activation_scheme": "dynamic",
                        "fmt": "e4m3",
                        "quant_method": "fp8",
                        "weight_block_size": [args.fp8_block, args.fp8_block]
                    });
                    if args.fp8_profile == Fp8ProfileArg::Ue8m0 {
                        q["scale_fmt"] = "ue8m0".into();
                    }
                    q
                }
                Target::Mxfp4 => serde_json::json!({
                    "modules_to_not_convert": unquantized,
                    "quant_method": "mxfp4"
                }),
                // ModelOpt's config.json form (its hf_quant_config.json calls `ignore`
                // `exclude_modules`).
                Target::Mxfp8 => serde_json::json!({
                    "group_size": 32,
                    "ignore": unquantized,
                    "quant_algo": "MXFP8",
                    "quant_method": "modelopt"
                }),
                _ => serde_json::json!({
                    "group_size": 16,
                    "ignore": unquantized,
                    "quant_algo": "NVFP4",
                    "quant_method": "modelopt"
                }),
            };
            obj.insert("quantization_config".into(), qc);
        }
    }
    serde_json::to_string_pretty(&v).map_err(|e| e.to_string())
}

/// Writes shard 0 of `plan` to `path` as `convert` does, with the default MX and FP8
/// profiles: the writer's half of the fuzz corpus replay (`st_fuzz.rs`).
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
        mx_profile: MxProfile::Ceil,
        fp8_profile: Fp8Profile::DeepSeek,
        maps: ck.shards.iter().map(|s| &s.mmap).collect(),
    };
    let l = layout(ck, plan, 0, path)?;
    write_shard(&l, &ctx, path, false)
}

/// The plan's options from the command line.
pub(crate) fn filter(args: &ConvertArgs) -> Result<plan::Filter<'_>, String> {
    let unquantized = match args.unquantized_to {
        Unquantized::Keep => None,
        Unquantized::Bf16 => Some(Dtype::BF16),
        Unquantized::F16 => Some(Dtype::F16),
        Unquantized::F32 => Some(Dtype::F32),
    };
    if unquantized.is_some() && !args.to.is_quantized() {
        return Err(format!(
            "--unquantized-to applies when quantizing; --to {} casts every float tensor already",
            args.to.name()
        ));
    }
    Ok(plan::Filter {
        include: &args.include,
        exclude: &args.exclude,
        fp8_block: args.fp8_block,
        fp8_channel: args.fp8_scales == crate::Fp8Scales::Channel,
        case_sensitive: args.case_sensitive_globs,
        unquantized,
    })
}

/// The writer's context for a parsed checkpoint.
pub(crate) fn context<'a>(
    ck: &'a Checkpoint,
    parsed: &'a [SafeTensors<'a>],
    args: &ConvertArgs,
    total: u64,
) -> Ctx<'a> {
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
    Ctx {
        views,
        cache: Mutex::new(HashMap::new()),
        bar,
        mx_profile: profile,
        fp8_profile: match args.fp8_profile {
            Fp8ProfileArg::Deepseek => Fp8Profile::DeepSeek,
            Fp8ProfileArg::Ue8m0 => Fp8Profile::Ue8m0,
        },
        maps: ck.shards.iter().map(|s| &s.mmap).collect(),
    }
}
