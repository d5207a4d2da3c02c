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

use crate::Layout as QLayout;
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
            Source::QuantFp8 { src, .. } | Source::QuantMx { src, .. } => vec![src],
            Source::QuantNv { src, fused, .. } => {
                std::iter::once(src).chain(fused.iter()).collect()
            }
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

/// The `max |x|` of input tensors `names` (NaN if one holds a NaN), computed a step at a
/// time and kept for the other parts of the same tensors.
fn amax_of(ctx: &Ctx<'_>, names: &[String], values: &mut Vec<f32>) -> f32 {
    let key = format!("{}\0amax", names.join("\0"));
    if let Some(b) = ctx.cache.lock().unwrap().get(&key) {
        return f32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
    }
    // Amaxes are non-negative or NaN; as bits, NaN compares above every number, so the
    // maximum of the bits propagates a NaN as the quantizers do.
    let mut m = 0u32;
    for name in names {
        let v = &ctx.views[name.as_str()];
        let n = v.shape().iter().product::<usize>();
        for at in (0..n).step_by(STEP) {
            let k = STEP.min(n - at);
            to_f32(ctx, name, v, at, k, values);
            m = m.max(vcvt::block::amax(&values[..]).to_bits());
        }
    }
    ctx.cache
        .lock()
        .unwrap()
        .insert(key, m.to_le_bytes().to_vec());
    f32::from_bits(m)
}

/// The NVFP4 (ModelOpt) tensor scale of input tensor `name`: the library's rule applied
/// to the amax of the whole tensor.
fn tensor_scale(ctx: &Ctx<'_>, name: &str, values: &mut Vec<f32>) -> f32 {
    let m = amax_of(ctx, &[name.to_string()], values);
    // A block holding that amax: `quantize` derives the tensor scale from it by the
    // profile's rule, exactly as for the whole tensor.
    let mut block = [0f32; 16];
    block[0] = m;
    let (mut d, mut s) = ([0u8; 8], [0u8; 1]);
    Nvfp4::new()
        .quantize(&block, Shape::matrix(1, 16), &mut d, &mut s, None)
        .expect(PLANNED)
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
            experts,
        } => {
            let w = view(weight);
            let n = w.shape().len();
            let cols = w.shape()[n - 1];
            // Each expert's matrix (the weight's only one when 2-D).
            let rows = w.shape()[..n - 1].iter().product::<usize>() / experts;
            let fp8 = BlockFp8::new(tile.0, tile.1);
            // F32 scales as they are; the BF16/F16 scales of scaled FP8, widened.
            let s = crate::conventions::scale_f32(view(scale_inv));
            let (w, s) = (w.data(), &s[..]);
            let scale_row = cols.div_ceil(tile.1) * 4;
            let per_expert = rows.div_ceil(tile.0) * scale_row;
            // A chunk lies inside one tile row, or is whole tile rows: then its scales are
            // whole rows of them, and its local tile grid is the tensor's.
            let mut k = chunk_rows(cols, out_size);
            if k > tile.0 {
                k -= k % tile.0;
            }
            let mut released = 0;
            for e in 0..*experts {
                let (w, s) = (
                    &w[e * rows * cols..(e + 1) * rows * cols],
                    &s[e * per_expert..(e + 1) * per_expert],
                );
                let base = e * rows;
                let mut r0 = 0;
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
                    if (base + r1 - released) * cols >= STEP || r1 == rows {
                        ctx.release(&view(weight).data()[released * cols..(base + r1) * cols]);
                        released = base + r1;
                    }
                    r0 = r1;
                }
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
            if tile.0 >= rows && tile.1 >= cols {
                // One tile (a per-tensor scale): the scale from the whole tensor's amax,
                // then the codes a step at a time, `e4m3(x / s)` as the library computes
                // them for a tile (f32 division, nearest-even E4M3 rounding, saturating).
                let s = fp8.scale_inv(amax_of(ctx, std::slice::from_ref(src), &mut sink.values));
                if *scales {
                    sink.write(ctx, &s.to_le_bytes())?;
                } else {
                    let n = rows * cols;
                    let mut q = Vec::new();
                    let mut codes = vec![vcvt::F8E4M3::ZERO; 0];
                    for at in (0..n).step_by(STEP) {
                        let k = STEP.min(n - at);
                        to_f32(ctx, src, v, at, k, &mut sink.values);
                        q.clear();
                        q.extend(sink.values.iter().map(|x| x / s));
                        codes.resize(k, vcvt::F8E4M3::ZERO);
                        vcvt::par_convert_slice(&q, &mut codes);
                        let bytes: Vec<u8> = codes.iter().map(|c| c.to_bits()).collect();
                        sink.write(ctx, &bytes)?;
                    }
                }
                for d in ctx.inputs(out) {
                    ctx.release(d);
                }
                return Ok(());
            }
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
            ct,
            fused,
        } => {
            let (rows, cols, v) = (*rows, *cols, view(src));
            let g = if *ct {
                crate::conventions::nvct_global(v.dtype(), amax_of(ctx, fused, &mut sink.values))
            } else {
                tensor_scale(ctx, src, &mut sink.values)
            };
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
                    if *ct {
                        use rayon::prelude::*;
                        let d = v.dtype();
                        sink.values
                            .par_chunks(cols)
                            .zip(codes.par_chunks_mut(cols / 2))
                            .zip(sc.par_chunks_mut(cols / 16))
                            .for_each(|((x, c), s)| {
                                crate::conventions::nvct_quantize(d, x, g, c, s)
                            });
                    } else {
                        nv.par_quantize(&sink.values, shape, &mut codes, &mut sc, Some(g))
                            .expect(PLANNED);
                    }
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
            let ct = quant_layout(args)? == QLayout::CompressedTensors;
            let conventional = match args.to {
                Target::F8e4m3 => true,
                Target::Mxfp4 => gpt_oss,
                // compressed-tensors' weight-only NVFP4A16 (no activation scales needed).
                Target::Nvfp4 => ct,
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
            // compressed-tensors' `QuantizationConfig` with one group of Linear targets.
            let ct_config = |format: &str, weights, input_activations| {
                serde_json::json!({
                    "quant_method": "compressed-tensors",
                    "format": format,
                    "quantization_status": "compressed",
                    "config_groups": {"group_0": {
                        "targets": ["Linear"],
                        "weights": weights,
                        "input_activations": input_activations,
                        "format": format
                    }},
                    "ignore": unquantized
                })
            };
            let args8 = |strategy: &str, dynamic: bool| {
                serde_json::json!({
                    "num_bits": 8, "type": "float", "symmetric": true,
                    "strategy": strategy, "dynamic": dynamic
                })
            };
            let qc = match args.to {
                // The weights of compressed-tensors' FP8_DYNAMIC (per channel), FP8 (per
                // tensor) and FP8_BLOCK schemes; activations quantized dynamically, per
                // token (FP8_DYNAMIC's; FP8's static activation scales come from calibration
                // data, which a weight conversion has not) or per group of the block's
                // width (FP8_BLOCK's).
                Target::F8e4m3 if args.fp8_scales == crate::Fp8Scales::Channel => ct_config(
                    "float-quantized",
                    args8("channel", false),
                    args8("token", true),
                ),
                Target::F8e4m3 if args.fp8_scales == crate::Fp8Scales::Tensor => ct_config(
                    "float-quantized",
                    args8("tensor", false),
                    args8("token", true),
                ),
                Target::F8e4m3 if ct => {
                    let b = args.fp8_block;
                    let mut w = args8("block", false);
                    w["block_structure"] = serde_json::json!([b, b]);
                    let mut a = args8("group", true);
                    a["group_size"] = b.into();
                    ct_config("float-quantized", w, a)
                }
                // compressed-tensors' NVFP4A16 scheme (weights only: NVFP4's activation
                // global scales come from calibration data).
                Target::Nvfp4 if ct => ct_config(
                    "nvfp4-pack-quantized",
                    serde_json::json!({
                        "num_bits": 4, "type": "float", "symmetric": true,
                        "group_size": 16, "strategy": "tensor_group", "dynamic": false,
                        "scale_dtype": "torch.float8_e4m3fn"
                    }),
                    serde_json::Value::Null,
                ),
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
    let fp8_scales = match args.fp8_scales {
        crate::Fp8Scales::Block => plan::Fp8Out::Block,
        crate::Fp8Scales::Channel => plan::Fp8Out::Channel,
        crate::Fp8Scales::Tensor => plan::Fp8Out::Tensor,
    };
    let ct = quant_layout(args)? == QLayout::CompressedTensors;
    Ok(plan::Filter {
        include: &args.include,
        exclude: &args.exclude,
        fp8_block: args.fp8_block,
        fp8_scales,
        ct,
        case_sensitive: args.case_sensitive_globs,
        unquantized,
    })
}

/// The layout of `--to`'s quantized tensors: `--layout` where it applies to the target (an
/// error where it does not), else the target's own.
pub(crate) fn quant_layout(args: &ConvertArgs) -> Result<QLayout, String> {
    let scales = args.fp8_scales;
    let own = match args.to {
        Target::F8e4m3 if scales != crate::Fp8Scales::Block => QLayout::CompressedTensors,
        Target::F8e4m3 => QLayout::Deepseek,
        Target::Nvfp4 | Target::Mxfp8 => QLayout::Modelopt,
        // gpt-oss's MXFP4; casts have none.
        _ => QLayout::Deepseek,
    };
    let Some(given) = args.layout else {
        return Ok(own);
    };
    let name = |l: QLayout| {
        clap::ValueEnum::to_possible_value(&l)
            .map(|p| p.get_name().to_string())
            .unwrap_or_default()
    };
    let ok = match (args.to, given) {
        (Target::F8e4m3, QLayout::CompressedTensors)
        | (Target::Nvfp4, QLayout::CompressedTensors) => true,
        (Target::F8e4m3, QLayout::Deepseek) => scales == crate::Fp8Scales::Block,
        (Target::Nvfp4 | Target::Mxfp8, QLayout::Modelopt) => true,
        _ => false,
    };
    if !ok {
        let takes = match args.to {
            Target::F8e4m3 if scales != crate::Fp8Scales::Block => {
                "compressed-tensors (the only layout of --fp8-scales channel and tensor)"
            }
            Target::F8e4m3 => "deepseek or compressed-tensors",
            Target::Nvfp4 => "modelopt or compressed-tensors",
            Target::Mxfp8 => "modelopt",
            _ => "none: --layout applies to --to f8e4m3, nvfp4 and mxfp8",
        };
        return Err(format!(
            "--layout {} does not apply to --to {}{} (it takes {takes})",
            name(given),
            args.to.name(),
            if args.to == Target::F8e4m3 {
                format!(
                    " --fp8-scales {}",
                    clap::ValueEnum::to_possible_value(&scales)
                        .map(|p| p.get_name().to_string())
                        .unwrap_or_default()
                )
            } else {
                String::new()
            }
        ));
    }
    Ok(given)
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
