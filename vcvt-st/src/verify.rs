//! `vcvt-st verify IN OUT`: re-reads a checkpoint and its conversion and checks every
//! tensor.
//!
//! * Every tensor of IN is accounted for in OUT (under its name, or as the codes and scales
//!   of its quantization, or dequantized from its companions), with the dtype and shape the
//!   conversion gives, and OUT holds nothing else.
//! * Copies are byte-identical; casts and the dequantizations of block FP8 and MXFP4 are
//!   exact: OUT's bits are those of vcvt's correctly rounded conversion of IN (any NaN
//!   matching any NaN).
//! * Quantized tensors, dequantized by the library (`vcvt::block`), are within the format's
//!   bound: each value is the representable value of its block (element grid × the block's
//!   stored scale) nearest to the input, up to one f32 rounding of the quotient the
//!   quantizers divide by, or saturated at the grid's maximum where the input exceeds it by
//!   less than the scale rules allow (a factor 2: OCP's floor rule). A corrupted code,
//!   block scale or tensor scale breaks this for the values it touches.
//!
//! Tensors are read whole, a few copies of the largest one at a time.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use safetensors::Dtype;
use safetensors::tensor::TensorView;
use vcvt::block::{BlockFp8, Mx, MxElement, Nvfp4, Shape};
use vcvt::{BF16, F16};

use crate::plan;
use crate::shard;
use crate::sizes;
use crate::stdio::outln;
use crate::tree;

/// One tensor's result.
struct Row {
    name: String,
    kind: &'static str,
    dtypes: String,
    rel_rms: f64,
    max_abs: f64,
    /// `None` when within bound; else what is wrong.
    problem: Option<String>,
    /// Quantized values saturated at the element grid's maximum.
    clipped: usize,
    /// Finite values that became NaN or infinite (a block or tensor scale made non-finite
    /// by an infinity or a NaN of the input).
    lost: usize,
}

/// Sums of the error of one tensor.
#[derive(Default)]
struct Err2 {
    sq: f64,
    ref_sq: f64,
    max_abs: f64,
}

impl Err2 {
    fn add(&mut self, x: f64, y: f64) {
        if x.is_nan() || y.is_nan() {
            return;
        }
        let d = if x == y { 0.0 } else { (y - x).abs() };
        if d.is_finite() {
            self.sq += d * d;
            self.ref_sq += x * x;
        }
        self.max_abs = self.max_abs.max(d);
    }

    fn rel_rms(&self) -> f64 {
        if self.ref_sq == 0.0 {
            if self.sq == 0.0 { 0.0 } else { f64::INFINITY }
        } else {
            (self.sq / self.ref_sq).sqrt()
        }
    }
}

/// The values of a tensor, exactly (every dtype but F64 widens to f32 exactly).
fn values(name: &str, v: &TensorView<'_>) -> Result<Vec<f64>, String> {
    if v.dtype() == Dtype::F64 {
        return vcvt::safetensors::tensor_to_vec::<f64>(name, v).map_err(|e| e.to_string());
    }
    vcvt::safetensors::tensor_to_vec::<f32>(name, v)
        .map(|x| x.into_iter().map(f64::from).collect())
        .map_err(|e| e.to_string())
}

fn f32s(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
        .collect()
}

/// The bytes of `n` values of dtype `to` that `fill` writes (BF16, F16 or F32).
fn as_bytes(
    to: Dtype,
    n: usize,
    fill: &mut dyn FnMut(Dest<'_>) -> Result<(), String>,
) -> Result<Vec<u8>, String> {
    Ok(match to {
        Dtype::BF16 => {
            let mut v = vec![BF16::ZERO; n];
            fill(Dest::Bf16(&mut v))?;
            bytemuck::cast_slice(&v).to_vec()
        }
        Dtype::F16 => {
            let mut v = vec![F16::ZERO; n];
            fill(Dest::F16(&mut v))?;
            bytemuck::cast_slice(&v).to_vec()
        }
        Dtype::F32 => {
            let mut v = vec![0f32; n];
            fill(Dest::F32(&mut v))?;
            bytemuck::cast_slice(&v).to_vec()
        }
        other => return Err(format!("{other} is not a cast destination")),
    })
}

/// The bytes of a dequantization into dtype `to`, and its values in f32 (the reference
/// its rounding to `to` is measured against).
fn both(
    to: Dtype,
    n: usize,
    fill: &mut dyn FnMut(Dest<'_>) -> Result<(), String>,
) -> Result<(Vec<u8>, Vec<f64>), String> {
    let want = as_bytes(to, n, fill)?;
    let reference = as_f64(Dtype::F32, &as_bytes(Dtype::F32, n, fill)?);
    Ok((want, reference))
}

enum Dest<'a> {
    Bf16(&'a mut [BF16]),
    F16(&'a mut [F16]),
    F32(&'a mut [f32]),
}

/// Compares OUT's bytes with the expected bytes of dtype `dt`, any NaN matching any NaN;
/// returns the first difference.
fn same_values(got: &[u8], want: &[u8], dt: Dtype) -> Option<String> {
    if got == want {
        return None;
    }
    if got.len() != want.len() {
        return Some(format!("{} bytes, expected {}", got.len(), want.len()));
    }
    let w = dt.bitsize() / 8;
    let dec = |b: &[u8]| -> f64 {
        match dt {
            Dtype::BF16 => f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16) as f64,
            Dtype::F16 => F16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32() as f64,
            Dtype::F32 => f32::from_le_bytes(b.try_into().unwrap()) as f64,
            _ => f64::NAN,
        }
    };
    for (i, (g, e)) in got.chunks_exact(w).zip(want.chunks_exact(w)).enumerate() {
        if g != e && !(dec(g).is_nan() && dec(e).is_nan()) {
            return Some(format!(
                "value {i} is {} ({g:02x?}), the exact conversion gives {} ({e:02x?})",
                dec(g),
                dec(e)
            ));
        }
    }
    None
}

/// The non-negative finite values of an element format, ascending.
fn grid(element: MxElement) -> Vec<f64> {
    let mut g: Vec<f64> = match element {
        MxElement::E2M1 => (0u8..8)
            .map(|c| vcvt::F4E2M1::from_bits(c).to_f32() as f64)
            .collect(),
        _ => (0u8..0x7F)
            .map(|c| vcvt::F8E4M3::from_bits(c).to_f32() as f64)
            .collect(),
    };
    g.sort_by(|a, b| a.partial_cmp(b).unwrap());
    g.dedup();
    g
}

/// Checks quantized values: `deq[i]` (the library's dequantization) against `x[i]`, with
/// the scale `scale(i)` of its block and the element grid `g`. Returns the error sums and the
/// first violation.
fn within_bound(
    x: &[f64],
    deq: &[f64],
    scale: &dyn Fn(usize) -> f64,
    g: &[f64],
) -> (Err2, Option<String>, usize, usize) {
    let max = *g.last().unwrap();
    let mut e = Err2::default();
    let mut bad = None;
    let mut clipped = 0;
    let mut lost = 0;
    for (i, (&x, &y)) in x.iter().zip(deq).enumerate() {
        e.add(x, y);
        // A NaN or an infinity has no nearest representable value (its block's scale is
        // NaN or infinite then, and so are the block's values).
        if bad.is_some() || !x.is_finite() {
            continue;
        }
        let s = scale(i);
        if !y.is_finite() {
            lost += 1;
        }
        if !s.is_finite() {
            if y.is_finite() && y != 0.0 {
                bad = Some(format!(
                    "value {i}: {y:.6e} with a non-finite block scale {s:e}"
                ));
            }
            continue;
        }
        if s == 0.0 {
            // A block scale that rounded to zero (ModelOpt's tiny blocks): the value is 0.
            if y != 0.0 {
                bad = Some(format!("value {i}: {y:.6e} with a zero block scale"));
            }
            continue;
        }
        let a = x.abs() / s;
        let err = (y - x).abs();
        // One f32 rounding of the quotient x / s (the quantizers divide in f32), and of the
        // dequantized product.
        let tol = (a * s + err) * 2f64.powi(-22);
        // Above the maximum by more than the f32 rounding of a scale like amax / max.
        let allowed = if a > max * (1.0 + 2f64.powi(-20)) {
            if a >= 2.0 * max.next_power_of_two_f64() {
                bad = Some(format!(
                    "value {i}: {x:.6e} is {a:.4} times its block scale {s:.6e}, beyond what any scale rule clips"
                ));
                continue;
            }
            clipped += 1;
            (a - max) * s
        } else {
            let k = g.partition_point(|&v| v <= a);
            match g.get(k) {
                Some(&hi) => (a - g[k - 1]).min(hi - a) * s,
                None => (a - max) * s, // the maximum, or above it by an f32 rounding
            }
        };
        let sign_ok = y == 0.0 || x == 0.0 || (y > 0.0) == (x > 0.0);
        if err > allowed + tol || !sign_ok {
            bad = Some(format!(
                "value {i}: input {x:.6e}, dequantized {y:.6e} (block scale {s:.6e}): error {err:.3e} > {allowed:.3e}, the distance to the nearest representable value"
            ));
        }
    }
    (e, bad, clipped, lost)
}

trait NextPow2 {
    fn next_power_of_two_f64(self) -> f64;
}

impl NextPow2 for f64 {
    fn next_power_of_two_f64(self) -> f64 {
        2f64.powi(self.log2().ceil() as i32)
    }
}

/// `vcvt-st verify`: prints a line per tensor and a summary; `Ok(false)` on a violation.
pub(crate) fn verify(
    input: &Path,
    output: &Path,
    fp8_block: usize,
    quiet: bool,
    opts: plan::OpenOptions,
) -> Result<bool, String> {
    if fp8_block == 0 {
        return Err("--fp8-block must be at least 1".into());
    }
    let ick = plan::open_with(input, opts)?;
    let iparsed = ick.parse()?;
    let itensors = ick.tensors(&iparsed)?;
    // OUT as `convert` writes it: its index lists every shard.
    let ock = plan::open_with(output, plan::OpenOptions::default())?;
    let oparsed = ock.parse()?;
    let otensors = ock.tensors(&oparsed)?;
    // Headers are untrusted: a tensor with a zero dimension is valid whatever its other
    // dimensions claim, and the checks below multiply them (by up to 32). Dimensions whose
    // non-zero product exceeds 2^48 values (256 Ti, beyond any real tensor) are refused, so
    // that no product here can overflow.
    // An empty tensor that is copied or cast (in no group) is checked without any product
    // of its dimensions, so it may claim any shape (`[2^62, 0]`), as `convert` accepts.
    let grouped = |n: &str, tensors: &BTreeMap<String, plan::Tensor>| {
        let stem = |suffix: &str| {
            n.strip_suffix(suffix)
                .is_some_and(|b| tensors.contains_key(b))
        };
        [
            "_scale_inv",
            "_scale",
            "_scale_2",
            "_blocks",
            "_scales",
            "_packed",
            "_global_scale",
        ]
        .iter()
        .any(|s| stem(s) || tensors.contains_key(&format!("{n}{s}")))
            || n.ends_with("_blocks")
            || n.ends_with("_packed")
    };
    for (ck, tensors) in [(&ick, &itensors), (&ock, &otensors)] {
        for (name, t) in tensors.iter() {
            if t.shape.contains(&0) && !grouped(name, tensors) {
                continue;
            }
            let nonzero: Vec<usize> = t.shape.iter().copied().filter(|&d| d != 0).collect();
            let n = sizes::product(name, "the element count", &nonzero)
                .map_err(|e| format!("{}: {e}", ck.where_is(t)))?;
            if n > 1 << 48 {
                return Err(format!(
                    "{}: tensor `{name}` {:?}: its dimensions claim more than 2^48 values (verify cannot check it)",
                    ck.where_is(t),
                    t.shape
                ));
            }
        }
    }
    let iv: HashMap<String, TensorView<'_>> = iparsed
        .iter()
        .flat_map(|st| st.iter())
        .map(|(n, v)| (n.to_string(), v))
        .collect();
    let ov: HashMap<String, TensorView<'_>> = oparsed
        .iter()
        .flat_map(|st| st.iter())
        .map(|(n, v)| (n.to_string(), v))
        .collect();
    let mut used: HashSet<String> = HashSet::new();
    let mut rows: Vec<Row> = Vec::new();
    let is_fp8_group = |n: &str| {
        itensors.get(n).is_some_and(|t| t.dtype == Dtype::F8_E4M3)
            && itensors.contains_key(&format!("{n}_scale_inv"))
    };
    // Companions of IN, checked with their owner.
    let modelopt = |n: &str| {
        itensors
            .get(n)
            .is_some_and(|t| plan::modelopt_group(n, t, &itensors).is_some())
    };
    // The checks every command runs first (also the conventions of `conventions.rs`).
    let found = plan::validate(&ick, &itensors, fp8_block)?;
    // The block of OUT's compressed-tensors block FP8, from its config.json (else
    // --fp8-block).
    let out_block = crate::conventions::read_config(ock.dir.as_deref())?.block;
    // Activation scales of ModelOpt layers (checked with their weight).
    let modelopt_activation: HashSet<String> = itensors
        .iter()
        .filter(|(n, t)| plan::modelopt_group(n, t, &itensors).is_some())
        .flat_map(|(n, _)| crate::conventions::activation_scales(n, &itensors))
        .collect();
    let companion = |n: &str| {
        found.owner.contains_key(n)
            || modelopt_activation.contains(n)
            || n.strip_suffix("_scale_inv").is_some_and(is_fp8_group)
            || n.strip_suffix("_scale").is_some_and(modelopt)
            || n.strip_suffix("_scale_2").is_some_and(modelopt)
            || n.strip_suffix("_scales")
                .is_some_and(|b| itensors.contains_key(&format!("{b}_blocks")))
    };

    for (name, t) in &itensors {
        if companion(name) {
            continue;
        }
        let mut row = Row {
            name: name.clone(),
            kind: "copy",
            dtypes: String::new(),
            rel_rms: 0.0,
            max_abs: 0.0,
            problem: None,
            clipped: 0,
            lost: 0,
        };
        let r = match found.groups.get(name) {
            Some(g) => check_group(g, t, &otensors, &iv, &ov, &mut used, &mut row),
            None => check_one(
                name,
                t,
                (&itensors, &otensors),
                (&iv, &ov),
                (fp8_block, out_block),
                &mut used,
                &mut row,
            ),
        };
        if let Err(e) = r {
            row.problem = Some(e);
        }
        rows.push(row);
    }
    for name in otensors.keys() {
        if !used.contains(name) {
            rows.push(Row {
                name: name.clone(),
                kind: "?",
                dtypes: format!("{}", otensors[name].dtype),
                rel_rms: 0.0,
                max_abs: 0.0,
                problem: Some("in OUT but not made from any tensor of IN".into()),
                clipped: 0,
                lost: 0,
            });
        }
    }

    // The other files of a directory: reproduced as they are (config.json: valid JSON).
    if let (Some(idir), Some(odir)) = (&ick.dir, &ock.dir) {
        for f in tree::files(idir, &|rel| shard::skipped(&ick, rel))? {
            let to = odir.join(&f.rel);
            let problem = match (std::fs::read(&f.path), std::fs::read(&to)) {
                (_, Err(e)) => Some(format!("{}: {e}", to.display())),
                (Err(e), _) => Some(format!("{}: {e}", f.path.display())),
                (Ok(_), Ok(b)) if f.rel == Path::new("config.json") => {
                    serde_json::from_slice::<serde_json::Value>(&b)
                        .err()
                        .map(|e| format!("not valid JSON: {e}"))
                }
                (Ok(a), Ok(b)) if a != b => Some("differs from IN".into()),
                _ => None,
            };
            let link = std::fs::symlink_metadata(&to).is_ok_and(|m| m.file_type().is_symlink());
            rows.push(Row {
                name: f.rel.display().to_string(),
                kind: "file",
                dtypes: "-".into(),
                rel_rms: 0.0,
                max_abs: 0.0,
                problem: problem.or_else(|| link.then(|| "a symbolic link".to_string())),
                clipped: 0,
                lost: 0,
            });
        }
    }

    let w = rows
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(6)
        .clamp(6, 60);
    let bad = rows.iter().filter(|r| r.problem.is_some()).count();
    if !quiet {
        outln!(
            "{:<w$}  {:<16}  {:<22}  {:>10}  {:>10}  result",
            "tensor",
            "check",
            "dtypes",
            "rel RMS",
            "max abs"
        );
    }
    for r in &rows {
        if quiet && r.problem.is_none() {
            continue;
        }
        let (rms, max) = if r.kind == "file" {
            ("-".to_string(), "-".to_string())
        } else {
            (format!("{:.3e}", r.rel_rms), format!("{:.3e}", r.max_abs))
        };
        outln!(
            "{:<w$}  {:<16}  {:<22}  {:>10}  {:>10}  {}",
            r.name,
            r.kind,
            r.dtypes,
            rms,
            max,
            match (&r.problem, r.clipped, r.lost) {
                (Some(p), _, _) => format!("VIOLATION: {p}"),
                (None, 0, 0) => "ok".to_string(),
                (None, c, 0) => format!("ok ({c} values saturated)"),
                (None, c, l) => format!(
                    "ok ({c} values saturated; {l} finite values became NaN or infinite: a block holds an Inf or NaN)"
                ),
            }
        );
    }
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &rows {
        *by_kind.entry(r.kind).or_default() += 1;
    }
    let worst = rows
        .iter()
        .filter(|r| r.problem.is_none() && r.rel_rms.is_finite())
        .max_by(|a, b| a.rel_rms.total_cmp(&b.rel_rms));
    outln!(
        "{} tensors and files of {} checked against {} ({}); worst relative RMS {}; {bad} violations",
        rows.len(),
        input.display(),
        output.display(),
        by_kind
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", "),
        worst.map_or("-".into(), |r| format!("{:.3e} ({})", r.rel_rms, r.name)),
    );
    Ok(bad == 0)
}

/// IN's and OUT's tensors.
type Pair<'a, T> = (&'a T, &'a T);

fn check_one(
    name: &str,
    t: &plan::Tensor,
    (itensors, otensors): Pair<'_, BTreeMap<String, plan::Tensor>>,
    (iv, ov): Pair<'_, HashMap<String, TensorView<'_>>>,
    (fp8_block, out_block): (usize, Option<(usize, usize)>),
    used: &mut HashSet<String>,
    row: &mut Row,
) -> Result<(), String> {
    let out = |n: &str, used: &mut HashSet<String>| -> Option<&plan::Tensor> {
        let o = otensors.get(n);
        if o.is_some() {
            used.insert(n.to_string());
        }
        o
    };
    let expect = |n: &str, o: &plan::Tensor, dtype: Dtype, shape: &[usize]| {
        if o.dtype != dtype || o.shape != shape {
            Err(format!(
                "`{n}` is {} {:?}, expected {dtype} {shape:?}",
                o.dtype, o.shape
            ))
        } else {
            Ok(())
        }
    };
    let iview = &iv[name];
    // Companion groups of IN.
    if let Some(group) = plan::modelopt_group(name, t, itensors) {
        let mut parts = vec![format!("{name}_scale")];
        if group == crate::Target::Nvfp4 {
            parts.push(format!("{name}_scale_2"));
        }
        let o = out(name, used).ok_or_else(|| format!("`{name}` is missing from OUT"))?;
        if o.dtype == t.dtype {
            parts.extend(crate::conventions::activation_scales(name, itensors));
            row.dtypes = format!("{} + scales", t.dtype);
            for p in std::iter::once(&name.to_string()).chain(&parts) {
                out(p, used).ok_or_else(|| format!("`{p}` is missing"))?;
                if ov[p.as_str()].data() != iv[p.as_str()].data() {
                    return Err(format!("the copy of `{p}` differs from IN"));
                }
            }
            return Ok(());
        }
        let n = t.shape.len();
        let r: usize = t.shape[..n - 1].iter().product();
        let (w, s) = (iview.data(), iv[&parts[0]].data());
        let (cols, what) = if group == crate::Target::Nvfp4 {
            (t.shape[n - 1] * 2, "NVFP4")
        } else {
            (t.shape[n - 1], "MXFP8")
        };
        row.kind = if group == crate::Target::Nvfp4 {
            "dequantize nvfp4"
        } else {
            "dequantize mxfp8"
        };
        row.dtypes = format!("{what} -> {}", o.dtype);
        let mut shape = t.shape[..n - 1].to_vec();
        shape.push(cols);
        expect(name, o, o.dtype, &shape)?;
        let sh = Shape::matrix(r, cols);
        let (want, reference) = if group == crate::Target::Nvfp4 {
            let g = f32::from_le_bytes(
                iv[&parts[1]]
                    .data()
                    .try_into()
                    .map_err(|_| format!("`{}` is not one f32", parts[1]))?,
            );
            let nv = Nvfp4::new();
            both(o.dtype, r * cols, &mut |d| {
                match d {
                    Dest::Bf16(d) => nv.dequantize(w, s, g, sh, d),
                    Dest::F16(d) => nv.dequantize(w, s, g, sh, d),
                    Dest::F32(d) => nv.dequantize(w, s, g, sh, d),
                }
                .map_err(|e| e.to_string())
            })?
        } else {
            let mx = Mx::new(MxElement::E4M3);
            both(o.dtype, r * cols, &mut |d| {
                match d {
                    Dest::Bf16(d) => mx.dequantize(w, s, sh, d),
                    Dest::F16(d) => mx.dequantize(w, s, sh, d),
                    Dest::F32(d) => mx.dequantize(w, s, sh, d),
                }
                .map_err(|e| e.to_string())
            })?
        };
        return exact(row, &ov[name], &want, o.dtype, &reference);
    }
    let sname = format!("{name}_scale_inv");
    if t.dtype == Dtype::F8_E4M3 && itensors.contains_key(&sname) {
        // A 2-D weight, or fused experts [E, N, K] (tiles of each expert).
        let nd = t.shape.len();
        let experts = if nd == 3 { t.shape[0] } else { 1 };
        let (rows_, cols) = (t.shape[nd - 2], t.shape[nd - 1]);
        if let Some(o) = out(name, used) {
            if o.dtype == Dtype::F8_E4M3 {
                row.kind = "copy";
                row.dtypes = "F8_E4M3 + scale_inv".into();
                out(&sname, used).ok_or_else(|| format!("`{sname}` is missing"))?;
                if ov[name].data() != iview.data() || ov[&sname].data() != iv[&sname].data() {
                    return Err("the copy differs from IN".into());
                }
                return Ok(());
            }
            row.kind = "dequantize fp8";
            row.dtypes = format!("F8_E4M3 -> {}", o.dtype);
            expect(name, o, o.dtype, &t.shape)?;
            let fp8 = BlockFp8::new(fp8_block, fp8_block);
            let (w, s) = (iview.data(), iv[&sname].data());
            let (want, reference) = both(o.dtype, experts * rows_ * cols, &mut |d| {
                dequant_experts(&fp8, w, s, experts, (rows_, cols), d)
                    .map_err(|e| format!("{e} (is --fp8-block right?)"))
            })?;
            return exact(row, &ov[name], &want, o.dtype, &reference);
        }
        return Err(format!("`{name}` is missing from OUT"));
    }
    if let Some(base) = name.strip_suffix("_blocks")
        && itensors.contains_key(&format!("{base}_scales"))
    {
        let scales = format!("{base}_scales");
        if let Some(o) = otensors.get(name)
            && o.dtype == Dtype::U8
        {
            used.insert(name.to_string());
            out(&scales, used).ok_or_else(|| format!("`{scales}` is missing"))?;
            row.dtypes = "uint8 blocks + scales".into();
            if ov[name].data() != iview.data() || ov[&scales].data() != iv[&scales].data() {
                return Err("the copy differs from IN".into());
            }
            return Ok(());
        }
        row.kind = "dequantize mxfp4";
        let o =
            out(base, used).ok_or_else(|| format!("neither `{name}` nor `{base}` is in OUT"))?;
        row.dtypes = format!("MXFP4 -> {}", o.dtype);
        let n = t.shape.len();
        let mut shape = t.shape[..n - 2].to_vec();
        shape.push(t.shape[n - 2] * 32);
        expect(base, o, o.dtype, &shape)?;
        let cols = shape[shape.len() - 1];
        let r: usize = shape[..shape.len() - 1].iter().product();
        let mx = Mx::new(MxElement::E2M1);
        let (b, s) = (iview.data(), iv[&scales].data());
        let sh = Shape::matrix(r, cols);
        let (want, reference) = both(o.dtype, r * cols, &mut |d| {
            match d {
                Dest::Bf16(d) => mx.dequantize(b, s, sh, d),
                Dest::F16(d) => mx.dequantize(b, s, sh, d),
                Dest::F32(d) => mx.dequantize(b, s, sh, d),
            }
            .map_err(|e| e.to_string())
        })?;
        return exact(row, &ov[base], &want, o.dtype, &reference);
    }

    let n = t.shape.len();
    let cols = t.shape.last().copied().unwrap_or(1);
    // (Checked: an empty tensor may claim any other dimensions; its rows then do not matter,
    // since it has no value.)
    let r: usize = if n == 0 {
        1
    } else {
        t.shape[..n - 1]
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .unwrap_or(0)
    };
    // Quantized in OUT?
    let (b, s) = (format!("{name}_blocks"), format!("{name}_scales"));
    if otensors.contains_key(&b) && otensors.contains_key(&s) && !otensors.contains_key(name) {
        row.kind = "quantize mxfp4";
        row.dtypes = format!("{} -> MXFP4", t.dtype);
        let (ob, os) = (out(&b, used).unwrap(), out(&s, used).unwrap());
        let mut bs = t.shape[..n - 1].to_vec();
        bs.extend([cols / 32, 16]);
        expect(&b, ob, Dtype::U8, &bs)?;
        expect(
            &s,
            os,
            Dtype::U8,
            &[&t.shape[..n - 1], &[cols / 32]].concat(),
        )?;
        let (bd, sd) = (ov[&b].data(), ov[&s].data());
        let mut deq = vec![0f32; r * cols];
        Mx::new(MxElement::E2M1)
            .dequantize(bd, sd, Shape::matrix(r, cols), &mut deq)
            .map_err(|e| e.to_string())?;
        let scale = |i: usize| e8m0(sd[i / 32]);
        return quantized(row, name, iview, &deq, &scale, MxElement::E2M1);
    }
    let (p, g) = (format!("{name}_packed"), format!("{name}_global_scale"));
    if otensors.contains_key(&p) && otensors.contains_key(&g) && !otensors.contains_key(name) {
        // compressed-tensors NVFP4 (`--layout compressed-tensors`).
        row.kind = "quantize nvfp4";
        row.dtypes = format!("{} -> NVFP4 (compressed-tensors)", t.dtype);
        let s1 = format!("{name}_scale");
        let (op, og) = (out(&p, used).unwrap(), out(&g, used).unwrap());
        let os = out(&s1, used).ok_or_else(|| format!("`{s1}` is missing"))?;
        expect(&p, op, Dtype::U8, &[r, cols / 2])?;
        expect(&s1, os, Dtype::F8_E4M3, &[r, cols / 16])?;
        expect(&g, og, Dtype::F32, &[1])?;
        let gs = f32::from_le_bytes(ov[&g].data().try_into().unwrap());
        // The global scale: compressed-tensors' rule on the amax of the weights fused with
        // this one (those quantized alike in OUT).
        let fused = plan::fused_partners(name, &|m| {
            itensors.get(m).is_some_and(|x| x.dtype == t.dtype)
                && otensors.contains_key(&format!("{m}_packed"))
                && !otensors.contains_key(m)
        });
        let mut amax = 0u32;
        for m in &fused {
            let x = vcvt::safetensors::tensor_to_vec::<f32>(m, &iv[m.as_str()])
                .map_err(|e| e.to_string())?;
            amax = amax.max(vcvt::block::amax(&x).to_bits());
        }
        let want = crate::conventions::nvct_global(t.dtype, f32::from_bits(amax));
        if gs.to_bits() != want.to_bits() {
            return Err(format!(
                "`{g}` is {gs:e}; compressed-tensors' rule on the amax {:e} of `{}` gives {want:e}",
                f32::from_bits(amax),
                fused.join("`, `")
            ));
        }
        let sd = ov[&s1].data();
        let mut deq = vec![0f32; r * cols];
        crate::conventions::nvct_dequant(ov[&p].data(), sd, gs, &mut deq);
        // The divisor compressed-tensors' quantizer uses: f32(f32(s8) / global_scale).
        let scale = |i: usize| (vcvt::F8E4M3::from_bits(sd[i / 16]).to_f32() / gs) as f64;
        return quantized(row, name, iview, &deq, &scale, MxElement::E2M1);
    }
    let o = out(name, used).ok_or_else(|| format!("`{name}` is missing from OUT"))?;
    let (si, s1, s2) = (
        format!("{name}_scale_inv"),
        format!("{name}_scale"),
        format!("{name}_scale_2"),
    );
    if o.dtype == Dtype::F8_E4M3 && t.dtype != Dtype::F8_E4M3 && otensors.contains_key(&si) {
        row.kind = "quantize fp8";
        row.dtypes = format!("{} -> F8_E4M3", t.dtype);
        let os = out(&si, used).unwrap();
        expect(name, o, Dtype::F8_E4M3, &t.shape)?;
        let b = fp8_block;
        expect(&si, os, Dtype::F32, &[r.div_ceil(b), cols.div_ceil(b)])
            .map_err(|e| format!("{e} (is --fp8-block right?)"))?;
        let sd = f32s(ov[&si].data());
        let mut deq = vec![0f32; r * cols];
        BlockFp8::new(b, b)
            .dequantize(
                ov[name].data(),
                ov[&si].data(),
                Shape::matrix(r, cols),
                &mut deq,
            )
            .map_err(|e| e.to_string())?;
        let across = cols.div_ceil(b);
        let scale = |i: usize| sd[(i / cols) / b * across + (i % cols) / b];
        return quantized(row, name, iview, &deq, &scale, MxElement::E4M3);
    }
    if o.dtype == Dtype::F8_E4M3
        && t.dtype != Dtype::F8_E4M3
        && otensors.get(&s1).is_some_and(|s| s.dtype == Dtype::F32)
    {
        // `--fp8-scales tensor`, `channel`, or compressed-tensors blocks: F32 `W_scale`.
        let os = out(&s1, used).unwrap();
        expect(name, o, Dtype::F8_E4M3, &t.shape)?;
        let (bn, bk) = out_block.unwrap_or((fp8_block, fp8_block));
        let (tile, what) = if os.shape.is_empty() || os.shape == [1] {
            ((r.max(1), cols.max(1)), "per tensor")
        } else if os.shape == [r, 1] {
            ((1, cols.max(1)), "per channel")
        } else if os.shape == [r.div_ceil(bn), cols.div_ceil(bk)] {
            ((bn, bk), "block")
        } else {
            return Err(format!(
                "`{s1}` is F32 {:?}: not [1] (per tensor), [{r}, 1] (per channel) or [{}, {}] ({bn}x{bk} blocks{})",
                os.shape,
                r.div_ceil(bn),
                cols.div_ceil(bk),
                if out_block.is_some() {
                    ", from OUT's config.json"
                } else {
                    "; is --fp8-block right?"
                }
            ));
        };
        row.kind = "quantize fp8";
        row.dtypes = format!("{} -> F8_E4M3 ({what})", t.dtype);
        let sd = f32s(ov[&s1].data());
        let mut deq = vec![0f32; r * cols];
        BlockFp8::new(tile.0, tile.1)
            .dequantize(
                ov[name].data(),
                ov[&s1].data(),
                Shape::matrix(r, cols),
                &mut deq,
            )
            .map_err(|e| e.to_string())?;
        let across = cols.div_ceil(tile.1);
        let scale = |i: usize| sd[(i / cols) / tile.0 * across + (i % cols) / tile.1];
        return quantized(row, name, iview, &deq, &scale, MxElement::E4M3);
    }
    if o.dtype == Dtype::F8_E4M3 && t.dtype != Dtype::F8_E4M3 && otensors.contains_key(&s1) {
        row.kind = "quantize mxfp8";
        row.dtypes = format!("{} -> MXFP8", t.dtype);
        let os = out(&s1, used).unwrap();
        expect(name, o, Dtype::F8_E4M3, &t.shape)?;
        expect(
            &s1,
            os,
            Dtype::U8,
            &[&t.shape[..n - 1], &[cols / 32]].concat(),
        )?;
        let sd = ov[&s1].data();
        let mut deq = vec![0f32; r * cols];
        Mx::new(MxElement::E4M3)
            .dequantize(ov[name].data(), sd, Shape::matrix(r, cols), &mut deq)
            .map_err(|e| e.to_string())?;
        let scale = |i: usize| e8m0(sd[i / 32]);
        return quantized(row, name, iview, &deq, &scale, MxElement::E4M3);
    }
    if o.dtype == Dtype::U8 && t.dtype != Dtype::U8 && otensors.contains_key(&s1) {
        row.kind = "quantize nvfp4";
        row.dtypes = format!("{} -> NVFP4", t.dtype);
        let (os, og) = (
            out(&s1, used).unwrap(),
            out(&s2, used).ok_or_else(|| format!("`{s2}` is missing"))?,
        );
        expect(name, o, Dtype::U8, &[r, cols / 2])?;
        expect(&s1, os, Dtype::F8_E4M3, &[r, cols / 16])?;
        expect(&s2, og, Dtype::F32, &[])?;
        let g = f32::from_le_bytes(ov[&s2].data().try_into().unwrap());
        let sd = ov[&s1].data();
        let mut deq = vec![0f32; r * cols];
        Nvfp4::new()
            .dequantize(ov[name].data(), sd, g, Shape::matrix(r, cols), &mut deq)
            .map_err(|e| e.to_string())?;
        // The divisor ModelOpt's quantizer uses: f32(f32(s8) · g).
        let scale = |i: usize| (vcvt::F8E4M3::from_bits(sd[i / 16]).to_f32() * g) as f64;
        return quantized(row, name, iview, &deq, &scale, MxElement::E2M1);
    }
    if o.dtype == t.dtype {
        row.kind = "copy";
        row.dtypes = format!("{}", t.dtype);
        expect(name, o, t.dtype, &t.shape)?;
        if ov[name].data() != iview.data() {
            let i = ov[name]
                .data()
                .iter()
                .zip(iview.data())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            return Err(format!("byte {i} differs from IN"));
        }
        return Ok(());
    }
    row.kind = "cast";
    row.dtypes = format!("{} -> {}", t.dtype, o.dtype);
    expect(name, o, o.dtype, &t.shape)?;
    let count: usize = if t.shape.contains(&0) {
        0
    } else {
        t.shape.iter().product()
    };
    let want = as_bytes(o.dtype, count, &mut |d| {
        match d {
            Dest::Bf16(d) => vcvt::safetensors::convert_tensor(name, iview, d),
            Dest::F16(d) => vcvt::safetensors::convert_tensor(name, iview, d),
            Dest::F32(d) => vcvt::safetensors::convert_tensor(name, iview, d),
        }
        .map_err(|e| e.to_string())
    })?;
    let x = values(name, iview)?;
    exact(row, &ov[name], &want, o.dtype, &x)
}

/// A weight of the conventions of `conventions.rs`: copied with every companion, or
/// dequantized exactly (and its activation scales dropped).
fn check_group(
    g: &crate::conventions::Group,
    t: &plan::Tensor,
    otensors: &BTreeMap<String, plan::Tensor>,
    iv: &HashMap<String, TensorView<'_>>,
    ov: &HashMap<String, TensorView<'_>>,
    used: &mut HashSet<String>,
    row: &mut Row,
) -> Result<(), String> {
    use crate::conventions::Kind;
    let e = crate::escape::text;
    if let Some(o) = otensors.get(&g.codes)
        && o.dtype == t.dtype
    {
        used.insert(g.codes.clone());
        row.dtypes = format!("{} + scales", t.dtype);
        for p in std::iter::once(&g.codes).chain(&g.companions()) {
            if !otensors.contains_key(p) {
                return Err(format!(
                    "`{}` is missing from OUT (a scale of `{}`, kept quantized)",
                    e(p),
                    e(&g.codes)
                ));
            }
            used.insert(p.clone());
            if ov[p.as_str()].data() != iv[p.as_str()].data() {
                return Err(format!("the copy of `{}` differs from IN", e(p)));
            }
        }
        return Ok(());
    }
    let o = otensors
        .get(&g.out)
        .ok_or_else(|| format!("`{}` is missing from OUT", e(&g.out)))?;
    used.insert(g.out.clone());
    if !matches!(o.dtype, Dtype::BF16 | Dtype::F16 | Dtype::F32) || o.shape != g.shape {
        return Err(format!(
            "`{}` is {} {:?}, expected the dequantized {:?} (BF16, F16 or F32)",
            e(&g.out),
            o.dtype,
            o.shape,
            g.shape
        ));
    }
    let n = g.rows * g.cols;
    let (want, reference) = match &g.kind {
        Kind::Fp8 { tile, what } => {
            row.kind = "dequantize fp8";
            row.dtypes = format!("F8_E4M3 ({what}) -> {}", o.dtype);
            let fp8 = BlockFp8::new(tile.0, tile.1);
            let s = crate::conventions::scale_f32(&iv[&g.scale]);
            let w = iv[&g.codes].data();
            let m = (g.rows / g.experts.max(1), g.cols);
            both(o.dtype, n, &mut |d| {
                dequant_experts(&fp8, w, &s, g.experts, m, d).map_err(|e| e.to_string())
            })?
        }
        Kind::NvCt { global } => {
            row.kind = "dequantize nvfp4";
            row.dtypes = format!("NVFP4 (compressed-tensors) -> {}", o.dtype);
            let gs = f32::from_le_bytes(
                iv[global]
                    .data()
                    .try_into()
                    .map_err(|_| format!("`{}` is not one f32", e(global)))?,
            );
            let mut x = vec![0f32; n];
            crate::conventions::nvct_dequant(iv[&g.codes].data(), iv[&g.scale].data(), gs, &mut x);
            let xb: &[u8] = bytemuck::cast_slice(&x);
            let view = TensorView::new(Dtype::F32, vec![n], xb).map_err(|e| e.to_string())?;
            let want = as_bytes(o.dtype, n, &mut |d| {
                match d {
                    Dest::Bf16(d) => vcvt::safetensors::convert_tensor("", &view, d),
                    Dest::F16(d) => vcvt::safetensors::convert_tensor("", &view, d),
                    Dest::F32(d) => vcvt::safetensors::convert_tensor("", &view, d),
                }
                .map_err(|e| e.to_string())
            })?;
            (want, x.iter().map(|&v| v as f64).collect())
        }
    };
    exact(row, &ov[&g.out], &want, o.dtype, &reference)
}

/// Block-FP8 dequantization of `experts` matrices of `rows × cols` one after the other,
/// each with its own run of tile scales.
fn dequant_experts(
    fp8: &BlockFp8,
    w: &[u8],
    s: &[u8],
    experts: usize,
    (rows, cols): (usize, usize),
    d: Dest<'_>,
) -> Result<(), vcvt::Error> {
    let shape = Shape::matrix(rows, cols);
    let (wn, sn) = (rows * cols, fp8.scale_inv_len(shape)?);
    let (w, s) = (w.chunks(wn.max(1)), s.chunks(sn.max(1)));
    match d {
        Dest::Bf16(d) => w
            .zip(s)
            .zip(d.chunks_mut(wn.max(1)))
            .take(experts)
            .try_for_each(|((w, s), d)| fp8.dequantize(w, s, shape, d)),
        Dest::F16(d) => w
            .zip(s)
            .zip(d.chunks_mut(wn.max(1)))
            .take(experts)
            .try_for_each(|((w, s), d)| fp8.dequantize(w, s, shape, d)),
        Dest::F32(d) => w
            .zip(s)
            .zip(d.chunks_mut(wn.max(1)))
            .take(experts)
            .try_for_each(|((w, s), d)| fp8.dequantize(w, s, shape, d)),
    }
}

fn e8m0(b: u8) -> f64 {
    if b == 0xFF {
        f64::NAN
    } else {
        2f64.powi(b as i32 - 127)
    }
}

fn as_f64(dt: Dtype, bytes: &[u8]) -> Vec<f64> {
    let v = TensorView::new(dt, vec![bytes.len() * 8 / dt.bitsize()], bytes).expect("sized");
    values("", &v).unwrap_or_default()
}

/// An exact result: OUT's bytes must be `want`; the error is measured against `reference`
/// (IN's values for a cast, the exact dequantization for the others).
fn exact(
    row: &mut Row,
    got: &TensorView<'_>,
    want: &[u8],
    dt: Dtype,
    reference: &[f64],
) -> Result<(), String> {
    let g = values(&row.name, got)?;
    let mut e = Err2::default();
    for (x, y) in reference.iter().zip(&g) {
        e.add(*x, *y);
    }
    row.rel_rms = e.rel_rms();
    row.max_abs = e.max_abs;
    match same_values(got.data(), want, dt) {
        None => Ok(()),
        Some(p) => Err(format!("not the exact conversion: {p}")),
    }
}

fn quantized(
    row: &mut Row,
    name: &str,
    iview: &TensorView<'_>,
    deq: &[f32],
    scale: &dyn Fn(usize) -> f64,
    element: MxElement,
) -> Result<(), String> {
    let x = values(name, iview)?;
    let deq: Vec<f64> = deq.iter().map(|&v| v as f64).collect();
    let (e, bad, clipped, lost) = within_bound(&x, &deq, scale, &grid(element));
    row.rel_rms = e.rel_rms();
    row.max_abs = e.max_abs;
    row.clipped = clipped;
    row.lost = lost;
    match bad {
        None => Ok(()),
        Some(b) => Err(b),
    }
}
