//! Error estimates for `inspect` and `convert --dry-run`, before anything is written: each
//! lossy conversion of the plan (a cast to a narrower type, a quantization) is run on a
//! sample of its tensor, at most 64 Ki values from its first rows (whole FP8 tiles, whole MX
//! and NVFP4 blocks), and the sample's error is measured as `verify` measures the whole
//! tensor's: relative RMS and maximum absolute error. NVFP4 takes its tensor scale from the
//! sample's amax, so its estimate can differ from the whole tensor's more than the others'.

use std::collections::HashMap;

use safetensors::Dtype;
use safetensors::tensor::TensorView;
use vcvt::block::{BlockFp8, Fp8Profile, Mx, MxProfile, Nvfp4, Shape};
use vcvt::safetensors::Format;
use vcvt::{BF16, F16};

use crate::conventions;
use crate::plan::{NvPart, Plan, Source};

/// Values of a sample at most.
const SAMPLE: usize = 1 << 16;

/// The profiles the conversion would use.
pub(crate) struct Profiles {
    pub fp8: Fp8Profile,
    pub mx: MxProfile,
}

/// Annotates with the defaults of `inspect` (DeepSeek FP8 scales, the `ceil` MX rule).
pub(crate) fn annotate_default(plan: &mut Plan, views: &HashMap<&str, TensorView<'_>>) {
    let p = Profiles {
        fp8: Fp8Profile::DeepSeek,
        mx: MxProfile::Ceil,
    };
    annotate(plan, views, &p);
}

/// Appends an estimate to the plan's line of every tensor that converts with a loss.
pub(crate) fn annotate(plan: &mut Plan, views: &HashMap<&str, TensorView<'_>>, p: &Profiles) {
    let mut notes: HashMap<String, String> = HashMap::new();
    for o in &plan.outs {
        let r = match &o.source {
            Source::Cast(src) => cast(&views[src.as_str()], o.dtype),
            Source::QuantFp8 {
                src,
                rows,
                cols,
                tile: (tr, tc),
                scales: false,
            } => {
                let fp8 = BlockFp8::new(*tr, *tc).profile(p.fp8);
                let r = (*rows).min(*tr);
                let c = (*cols).min(((SAMPLE / r.max(1)) / tc).max(1) * tc);
                sample(&views[src.as_str()], *cols, r, c).and_then(|x| {
                    let sh = Shape::matrix(r, c);
                    let mut d = vec![0u8; fp8.data_len(sh).ok()?];
                    let mut s = vec![0u8; fp8.scale_inv_len(sh).ok()?];
                    fp8.quantize(&x, sh, &mut d, &mut s).ok()?;
                    let mut y = vec![0f32; x.len()];
                    fp8.dequantize(&d, &s, sh, &mut y).ok()?;
                    Some((r, c, errors(&x, &y)))
                })
            }
            Source::QuantMx {
                src,
                rows,
                cols,
                scales: false,
                element,
                ..
            } => {
                let mx = Mx::new(*element).profile(p.mx);
                let c = (*cols).min(4096);
                let r = (*rows).min((SAMPLE / c).max(1));
                sample(&views[src.as_str()], *cols, r, c).and_then(|x| {
                    let sh = Shape::matrix(r, c);
                    let mut d = vec![0u8; mx.data_len(sh).ok()?];
                    let mut s = vec![0u8; mx.scales_len(sh).ok()?];
                    mx.quantize(&x, sh, &mut d, &mut s).ok()?;
                    let mut y = vec![0f32; x.len()];
                    mx.dequantize(&d, &s, sh, &mut y).ok()?;
                    Some((r, c, errors(&x, &y)))
                })
            }
            Source::QuantNv {
                src,
                rows,
                cols,
                part: NvPart::Codes,
                ct,
                ..
            } => {
                let nv = Nvfp4::new();
                let c = (*cols).min(4096);
                let r = (*rows).min((SAMPLE / c).max(1));
                let v = &views[src.as_str()];
                sample(v, *cols, r, c).and_then(|x| {
                    let sh = Shape::matrix(r, c);
                    let mut d = vec![0u8; nv.data_len(sh).ok()?];
                    let mut s = vec![0u8; nv.scales_len(sh).ok()?];
                    let mut y = vec![0f32; x.len()];
                    if *ct {
                        // (The global scale of the sample, not of the whole tensor.)
                        let g = conventions::nvct_global(v.dtype(), vcvt::block::amax(&x));
                        conventions::nvct_quantize(v.dtype(), &x, g, &mut d, &mut s);
                        conventions::nvct_dequant(&d, &s, g, &mut y);
                    } else {
                        let g = nv.quantize(&x, sh, &mut d, &mut s, None).ok()?;
                        nv.dequantize(&d, &s, g, sh, &mut y).ok()?;
                    }
                    Some((r, c, errors(&x, &y)))
                })
            }
            _ => None,
        };
        if let (Some((r, c, (rms, max))), Some(src)) = (r, source_name(&o.source)) {
            let shape = if r == 1 {
                format!("{c} values")
            } else {
                format!("{r}x{c}")
            };
            notes.insert(
                src.to_string(),
                format!("[estimate on {shape}: rel RMS {rms:.2e}, max abs {max:.2e}]"),
            );
        }
    }
    for l in &mut plan.lines {
        if let Some(n) = notes.get(&l.name) {
            l.action = format!("{} {n}", l.action);
        }
    }
}

fn source_name(s: &Source) -> Option<&str> {
    match s {
        Source::Cast(n) => Some(n),
        Source::QuantFp8 { src, .. }
        | Source::QuantMx { src, .. }
        | Source::QuantNv { src, .. } => Some(src),
        _ => None,
    }
}

/// The first `c` values of each of the first `r` rows (of `cols` values) of `v`, as f32.
/// An empty sample (a tensor with a zero dimension) has no estimate.
fn sample(v: &TensorView<'_>, cols: usize, r: usize, c: usize) -> Option<Vec<f32>> {
    if r == 0 || c == 0 {
        return None;
    }
    let f = Format::from_dtype(v.dtype())?;
    let mut out = vec![0f32; r * c];
    for (i, row) in out.chunks_mut(c).enumerate() {
        let bytes = &v.data()[f.bytes_for(i * cols)?..f.bytes_for(i * cols + c)?];
        let part = TensorView::new(v.dtype(), vec![c], bytes).ok()?;
        vcvt::safetensors::convert_tensor("", &part, row).ok()?;
    }
    Some(out)
}

/// A cast's error on the first values of `v`.
fn cast(v: &TensorView<'_>, to: Dtype) -> Option<(usize, usize, (f64, f64))> {
    // Every other dtype widens to f32 exactly; F64 is not sampled.
    if v.dtype() == Dtype::F64 || to == Dtype::F32 {
        return None;
    }
    let n: usize = v.shape().iter().product::<usize>().min(SAMPLE);
    let x = sample(v, n, 1, n)?;
    let f = Format::from_dtype(v.dtype())?;
    let part = TensorView::new(v.dtype(), vec![n], &v.data()[..f.bytes_for(n)?]).ok()?;
    let y: Vec<f32> = match to {
        Dtype::BF16 => {
            let mut o = vec![BF16::ZERO; n];
            vcvt::safetensors::convert_tensor("", &part, &mut o).ok()?;
            o.iter().map(|b| b.to_f32()).collect()
        }
        Dtype::F16 => {
            let mut o = vec![F16::ZERO; n];
            vcvt::safetensors::convert_tensor("", &part, &mut o).ok()?;
            o.iter().map(|b| b.to_f32()).collect()
        }
        _ => return None,
    };
    Some((1, n, errors(&x, &y)))
}

/// Relative RMS and maximum absolute error of `y` against `x` (NaNs and infinities skipped).
fn errors(x: &[f32], y: &[f32]) -> (f64, f64) {
    let (mut sq, mut ref_sq, mut max) = (0f64, 0f64, 0f64);
    for (&a, &b) in x.iter().zip(y) {
        let (a, b) = (a as f64, b as f64);
        if !a.is_finite() || !b.is_finite() {
            continue;
        }
        let d = (b - a).abs();
        sq += d * d;
        ref_sq += a * a;
        max = max.max(d);
    }
    let rms = if ref_sq == 0.0 {
        0.0
    } else {
        (sq / ref_sq).sqrt()
    };
    (rms, max)
}
