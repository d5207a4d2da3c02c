//! Lengths, alignments and bounds: every kernel must convert exactly the elements it is given
//! and never write outside its destination.
//!
//! For each of the 56 unpacked pairs, both overflow policies and every available backend, through
//! the free functions and through a [`Converter`] made for that backend: every length `0..=300`
//! (the widest vector is 64 bytes, so this covers empty input, pure tails, one to four full
//! vectors and every remainder in between, and the 256-value row of issue 29's call lengths), with the source and the
//! destination starting at element offsets 0..=7 within a 64-byte line (same offset, and
//! offsets 3 apart). The destination sits inside a larger buffer filled with a canary
//! byte; the whole check runs with two canaries (`0xA5`, `0x5A`). Every destination element
//! must equal the Scalar backend's result for the same source element, and every byte
//! outside the destination must still be the canary.
//!
//! The same for the uninitialised-destination API (the free function and the handle's
//! `convert_uninit`) and the byte APIs (`convert_from_bytes`,
//! `convert_to_bytes` on `&[u8]` at every byte offset 0..=7, odd ones included), which run
//! on the active backend.
//!
//! Under `VCVT_SWEEP=sample` the lengths are 0..=70 plus the ends of the 2-, 4-vector range
//! and the offsets are {0, 1, 7}.

mod common;

use std::mem::{MaybeUninit, size_of};

use bytemuck::{Pod, Zeroable};
use common::{MODES, Mismatch, Narrow, Report, Rng, backends, names};
use vcvt::{
    BF16, Backend, ConvertTo, Converter, Element, F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3,
    F8E4M3B11FNUZ, F8E4M3FNUZ, F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, Options,
};

/// Longest slice tested: more than four 64-byte vectors of bytes.
const MAX_LEN: usize = 300;
/// Start offsets (in elements) within a 64-byte line.
const OFFSETS: usize = 8;
/// Canary bytes before and after each destination.
const GUARD: usize = 64;
/// The two canary patterns.
const CANARIES: [u8; 2] = [0xA5, 0x5A];

fn lengths() -> Vec<usize> {
    if common::sample_mode() {
        (0..=70)
            .chain([127, 128, 129, 255, 256, 257, 300])
            .collect()
    } else {
        (0..=MAX_LEN).collect()
    }
}

fn offsets() -> Vec<usize> {
    if common::sample_mode() {
        vec![0, 1, 7]
    } else {
        (0..OFFSETS).collect()
    }
}

/// A 64-byte line, so that a `Vec<Line>` is a 64-byte-aligned byte buffer.
#[repr(C, align(64))]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Line([u8; 64]);

/// A byte buffer that starts on a 64-byte boundary.
struct Aligned {
    lines: Vec<Line>,
    len: usize,
}

impl Aligned {
    fn new(len: usize, fill: u8) -> Aligned {
        Aligned {
            lines: vec![Line([fill; 64]); len.div_ceil(64)],
            len,
        }
    }
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.lines)[..self.len]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.lines)[..self.len]
    }
}

/// Source values for a pair: a mixture that exercises every path (normal, subnormal, zero,
/// overflow, Inf, NaN, ties).
trait Gen: Element + Pod {
    fn generate(rng: &mut Rng) -> Self;
    /// The value with f32 subnormals replaced by normal values (see [`source`]).
    fn without_subnormals(self) -> Self {
        self
    }
}

impl Gen for f32 {
    fn generate(rng: &mut Rng) -> f32 {
        let r = rng.next_u64();
        let sign = (r as u32) & 0x8000_0000;
        match r >> 61 {
            0 => f32::from_bits(r as u32),
            1 => [
                0.0,
                -0.0,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                65520.0,
                464.0,
                1e-45,
            ][(r >> 32) as usize % 8],
            // Low mantissa bits at a rounding tie of every format.
            2 => f32::from_bits(sign | ((100 + (r >> 40) as u32 % 60) << 23) | 0x0000_8000),
            3 => f32::from_bits(sign | ((r >> 32) as u32 & 0x00FF_FFFF)), // tiny
            _ => f32::from_bits(sign | ((90 + (r >> 40) as u32 % 80) << 23) | (r as u32 >> 9)),
        }
    }
    fn without_subnormals(self) -> f32 {
        if self.is_subnormal() {
            // Same sign and fraction, smallest normal exponent.
            f32::from_bits(self.to_bits() | 0x0080_0000)
        } else {
            self
        }
    }
}

impl Gen for f64 {
    fn generate(rng: &mut Rng) -> f64 {
        let r = rng.next_u64();
        let sign = r & (1 << 63);
        match r >> 61 {
            0 => f64::from_bits(r),
            1 => f64::from(f32::generate(rng)),
            2 => [
                0.0,
                -0.0,
                f64::INFINITY,
                f64::NAN,
                65520.0 - 2f64.powi(-30),
                1e-300,
            ][(r >> 32) as usize % 6],
            _ => {
                let e = 1023 - 40 + (r >> 40) % 80;
                f64::from_bits(sign | (e << 52) | (rng.next_u64() >> 12))
            }
        }
    }
}

macro_rules! gen_narrow {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn generate(rng: &mut Rng) -> $t {
                <$t as Narrow>::from_code(rng.next_u64() as u32 & (<$t as Narrow>::DEF.codes() - 1))
            }
        }
    )*};
}
gen_narrow!(
    F16,
    BF16,
    F8E4M3,
    F8E5M2,
    F8E4M3FNUZ,
    F8E5M2FNUZ,
    F6E2M3,
    F6E3M2,
    F4E2M1,
    F8E8M0,
    F8E3M4,
    F8E4M3IEEE,
    F8E4M3B11FNUZ,
    F8E5M3FNU
);

/// Short name of a type (`f32`, `F16`, ...).
fn short<T>() -> &'static str {
    let n = std::any::type_name::<T>();
    n.rsplit("::").next().unwrap_or(n)
}

/// Elements of `v` as little-endian bytes.
fn le_bytes<T: Pod>(v: &[T]) -> Vec<u8> {
    let mut b = bytemuck::cast_slice::<T, u8>(v).to_vec();
    if cfg!(target_endian = "big") {
        for e in b.chunks_exact_mut(size_of::<T>()) {
            e.reverse();
        }
    }
    b
}

/// Records a failure if any byte of `buf` outside `keep` is not `canary`; returns whether
/// all were intact.
fn check_canary(
    report: &mut Report,
    what: &dyn Fn() -> String,
    buf: &[u8],
    keep: std::ops::Range<usize>,
    canary: u8,
) -> bool {
    let outside = buf[..keep.start].iter().enumerate().chain(
        buf[keep.end..]
            .iter()
            .enumerate()
            .map(|(i, b)| (i + keep.end, b)),
    );
    for (i, &b) in outside {
        if b != canary {
            report.fail(Mismatch {
                what: format!(
                    "{}: byte {i} outside the destination {keep:?} was overwritten",
                    what()
                ),
                input: i as u64,
                expected: u64::from(canary),
                got: u64::from(b),
            });
            return false;
        }
    }
    true
}

/// Source values of a pair, `OFFSETS + MAX_LEN` of them, in a 64-byte-aligned buffer.
///
/// The first `2 * 64 + OFFSETS` f32 sources hold no subnormal and the rest do (about one in
/// sixteen): a kernel may take a faster path for blocks without subnormals (the
/// `avx512-bf16` f32 → BF16 kernel does), and every length above 64 then runs both paths.
fn source<S: Gen>(seed: u64) -> Aligned {
    let mut rng = Rng::new(seed);
    let vals: Vec<S> = (0..OFFSETS + MAX_LEN)
        .map(|i| {
            let v = S::generate(&mut rng);
            if i < 2 * 64 + OFFSETS {
                v.without_subnormals()
            } else {
                v
            }
        })
        .collect();
    let mut buf = Aligned::new(vals.len() * size_of::<S>(), 0);
    buf.bytes_mut().copy_from_slice(bytemuck::cast_slice(&vals));
    buf
}

/// The typed API on every backend, for one pair: `convert_slice_on`, or with `handle` a
/// [`Converter`] made once per backend and options.
fn typed<S: Gen + ConvertTo<D>, D: Element + Pod>(
    backends: &[Backend],
    handle: bool,
    report: &mut Report,
) {
    let api = if handle {
        "Converter"
    } else {
        "convert_slice_on"
    };
    let pair = format!("{}->{}", short::<S>(), short::<D>());
    let src_buf = source::<S>(0x7A11 ^ (size_of::<S>() as u64) << 8 ^ size_of::<D>() as u64);
    let src: &[S] = bytemuck::cast_slice(src_buf.bytes());
    for mode in MODES {
        let opts = Options::new().overflow(mode);
        let mut reference = vec![D::zeroed(); src.len()];
        vcvt::convert_slice_on(Backend::Scalar, src, &mut reference, opts).unwrap();
        for &b in backends {
            let conv = Converter::<S, D>::on(b, opts).unwrap();
            assert_eq!(conv.backend(), b);
            let convert = |so: usize, len: usize, dst: &mut [u8]| {
                let dst: &mut [D] = bytemuck::cast_slice_mut(dst);
                if handle {
                    conv.convert(&src[so..so + len], dst);
                } else {
                    vcvt::convert_slice_on(b, &src[so..so + len], dst, opts).unwrap();
                }
            };
            let what = |len: usize, so: usize, dof: usize, canary: u8| {
                format!(
                    "{api} {pair} on {b}, {mode:?}, len {len}, src offset {so}, dst offset {dof}, canary {canary:#x}"
                )
            };
            let (ssz, dsz) = (size_of::<S>(), size_of::<D>());
            let reference: &[u8] = bytemuck::cast_slice(&reference);
            typed_placements(
                report,
                (src_buf.bytes(), ssz),
                (reference, dsz),
                &convert,
                &what,
            );
        }
    }
}

/// The lengths, offsets and canaries of [`typed`] for one backend and mode, on the bytes of
/// the source and the reference (with their element sizes), so that it is compiled once
/// rather than for every pair: `convert(so, len, dst)` converts `len` source elements from
/// element `so` into `dst`, and `what(len, so, dof, canary)` names the case.
fn typed_placements(
    report: &mut Report,
    (src, ssz): (&[u8], usize),
    (reference, dsz): (&[u8], usize),
    convert: &dyn Fn(usize, usize, &mut [u8]),
    what: &dyn Fn(usize, usize, usize, u8) -> String,
) {
    let (lens, offs) = (lengths(), offsets());
    for canary in CANARIES {
        let mut dst_buf = Aligned::new(GUARD + (OFFSETS + MAX_LEN) * dsz + GUARD, canary);
        for &len in &lens {
            for &so in &offs {
                for dof in [so, (so + 3) % OFFSETS] {
                    let start = GUARD + dof * dsz;
                    let end = start + len * dsz;
                    convert(so, len, &mut dst_buf.bytes_mut()[start..end]);
                    let what = || what(len, so, dof, canary);
                    report.compare_bytes(
                        &what,
                        &reference[so * dsz..(so + len) * dsz],
                        &dst_buf.bytes()[start..end],
                        dsz,
                        &|k| element(src, ssz, so + k),
                    );
                    if check_canary(report, &what, dst_buf.bytes(), start..end, canary) {
                        dst_buf.bytes_mut()[start..end].fill(canary);
                    } else {
                        dst_buf.bytes_mut().fill(canary);
                    }
                }
            }
        }
    }
}

/// The bits of element `i` of `size` bytes in `bytes` (native byte order).
fn element(bytes: &[u8], size: usize, i: usize) -> u64 {
    common::bytes_to_u64(&bytes[i * size..(i + 1) * size])
}

/// `convert_slice_uninit_with`, or with `handle` a [`Converter`]'s `convert_uninit` (active
/// backend), for one pair.
fn uninit<S: Gen + ConvertTo<D>, D: Element + Pod>(handle: bool, report: &mut Report) {
    let pair = format!("{}->{}", short::<S>(), short::<D>());
    let src_buf = source::<S>(0x0171 ^ (size_of::<S>() as u64) << 8 ^ size_of::<D>() as u64);
    let src: &[S] = bytemuck::cast_slice(src_buf.bytes());
    let (ssz, dsz) = (size_of::<S>(), size_of::<D>());
    for mode in MODES {
        let opts = Options::new().overflow(mode);
        let mut reference = vec![D::zeroed(); src.len()];
        vcvt::convert_slice_on(Backend::Scalar, src, &mut reference, opts).unwrap();
        for canary in CANARIES {
            let fill: D = bytemuck::pod_read_unaligned(&vec![canary; size_of::<D>()]);
            // The bytes of the returned slice, and of the whole buffer around it.
            let run = |len: usize, off: usize| -> (Vec<u8>, Vec<u8>) {
                let mut buf = [MaybeUninit::new(fill); OFFSETS + MAX_LEN + 8];
                let out = if handle {
                    Converter::<S, D>::new(opts)
                        .convert_uninit(&src[off..off + len], &mut buf[off + 1..off + 1 + len])
                } else {
                    vcvt::convert_slice_uninit_with(
                        &src[off..off + len],
                        &mut buf[off + 1..off + 1 + len],
                        opts,
                    )
                };
                let out = bytemuck::cast_slice::<D, u8>(out).to_vec();
                let all: Vec<D> = buf
                    .iter()
                    // SAFETY: every element of `buf` was initialised by `MaybeUninit::new`,
                    // and the conversion only stored initialised values into some of them.
                    .map(|e| unsafe { e.assume_init() })
                    .collect();
                (out, bytemuck::cast_slice(&all).to_vec())
            };
            let what = |len: usize, off: usize| {
                format!(
                    "uninit (handle: {handle}) {pair} on {}, {mode:?}, len {len}, offset {off}, canary {canary:#x}",
                    Backend::active()
                )
            };
            let reference: &[u8] = bytemuck::cast_slice(&reference);
            uninit_placements(
                report,
                canary,
                (src_buf.bytes(), ssz),
                (reference, dsz),
                &run,
                &what,
            );
        }
    }
}

/// The lengths and offsets of [`uninit`] for one mode and canary, on bytes (compiled once,
/// not for every pair): `run(len, off)` converts `len` elements from element `off` into a
/// canary buffer at element `off + 1` and returns the bytes of the slice the call returned
/// and of the whole buffer; `what(len, off)` names the case.
fn uninit_placements(
    report: &mut Report,
    canary: u8,
    (src, ssz): (&[u8], usize),
    (reference, dsz): (&[u8], usize),
    run: &dyn Fn(usize, usize) -> (Vec<u8>, Vec<u8>),
    what: &dyn Fn(usize, usize) -> String,
) {
    for &len in &lengths() {
        for &off in &offsets() {
            let (out, all) = run(len, off);
            let what = || what(len, off);
            report.compare_bytes(
                &what,
                &reference[off * dsz..(off + len) * dsz],
                &out,
                dsz,
                &|k| element(src, ssz, off + k),
            );
            let _ = check_canary(
                report,
                &what,
                &all,
                (off + 1) * dsz..(off + 1 + len) * dsz,
                canary,
            );
        }
    }
}

/// `convert_from_bytes_with` and `convert_to_bytes_with` (active backend) at every byte
/// offset, for one pair.
fn bytes<S: Gen + ConvertTo<D>, D: Element + Pod>(report: &mut Report) {
    let pair = format!("{}->{}", short::<S>(), short::<D>());
    let src_buf = source::<S>(0xB17E ^ (size_of::<S>() as u64) << 8 ^ size_of::<D>() as u64);
    let src: &[S] = bytemuck::cast_slice(src_buf.bytes());
    let (ssz, dsz) = (size_of::<S>(), size_of::<D>());
    let active = Backend::active();
    for mode in MODES {
        let opts = Options::new().overflow(mode);
        let mut reference = vec![D::zeroed(); src.len()];
        vcvt::convert_slice_on(Backend::Scalar, src, &mut reference, opts).unwrap();
        let (src_le, want_le) = (le_bytes(src), le_bytes(&reference));
        for canary in CANARIES {
            let fill: D = bytemuck::pod_read_unaligned(&vec![canary; dsz]);
            // The bytes of a `len + 2`-element canary destination whose elements 1..=len
            // were converted from `in_bytes`.
            let from = |in_bytes: &[u8], len: usize| -> Vec<u8> {
                let mut dst = vec![fill; len + 2];
                vcvt::convert_from_bytes_with::<S, D>(in_bytes, &mut dst[1..=len], opts).unwrap();
                bytemuck::cast_slice(&dst).to_vec()
            };
            let to = |len: usize, out: &mut [u8]| {
                vcvt::convert_to_bytes_with::<S, D>(&src[..len], out, opts).unwrap();
            };
            let what = |api: &str, len: usize, byte_off: usize| {
                format!(
                    "{api} {pair} on {active}, {mode:?}, len {len}, byte offset {byte_off}, canary {canary:#x}"
                )
            };
            bytes_placements(
                report,
                canary,
                (src_buf.bytes(), &src_le, ssz),
                (bytemuck::cast_slice(&reference), &want_le, dsz),
                (&from, &to),
                &what,
            );
        }
    }
}

/// A conversion from source bytes of `len` elements (see [`bytes`]).
type FromBytes<'a> = &'a dyn Fn(&[u8], usize) -> Vec<u8>;
/// A conversion of `len` elements into destination bytes (see [`bytes`]).
type ToBytes<'a> = &'a dyn Fn(usize, &mut [u8]);

/// The lengths and byte offsets of [`bytes`] for one mode and canary, on bytes (compiled
/// once, not for every pair). The source and the reference come in native and
/// little-endian byte order; `what(api, len, byte_off)` names the case.
fn bytes_placements(
    report: &mut Report,
    canary: u8,
    (src, src_le, ssz): (&[u8], &[u8], usize),
    (reference, want_le, dsz): (&[u8], &[u8], usize),
    (from, to): (FromBytes, ToBytes),
    what: &dyn Fn(&str, usize, usize) -> String,
) {
    for &len in &lengths() {
        let src_le = &src_le[..len * ssz];
        let want_le = &want_le[..len * dsz];
        for byte_off in 0..8 {
            // Source bytes at `byte_off` (odd ones misaligned for every element type).
            let mut in_bytes = vec![canary; 8 + len * ssz];
            in_bytes[byte_off..byte_off + len * ssz].copy_from_slice(src_le);
            let dst = from(&in_bytes[byte_off..byte_off + len * ssz], len);
            let what_from = || what("convert_from_bytes", len, byte_off);
            report.compare_bytes(
                &what_from,
                &reference[..len * dsz],
                &dst[dsz..(len + 1) * dsz],
                dsz,
                &|k| element(src, ssz, k),
            );
            let _ = check_canary(report, &what_from, &dst, dsz..(len + 1) * dsz, canary);

            // Destination bytes at `byte_off` inside a canary buffer.
            let mut out_bytes = vec![canary; GUARD + 8 + len * dsz + GUARD];
            let start = GUARD + byte_off;
            let end = start + len * dsz;
            to(len, &mut out_bytes[start..end]);
            let what_to = || what("convert_to_bytes", len, byte_off);
            report.compare_bytes(&what_to, want_le, &out_bytes[start..end], 1, &|k| k as u64);
            let _ = check_canary(report, &what_to, &out_bytes, start..end, canary);
        }
    }
}

/// Runs `$f::<S, D>($args)` for the 56 unpacked pairs, narrowing or widening (packed FP4
/// has its own length rule and its own test, `tests/packed_fp4.rs`).
macro_rules! narrowing_pairs {
    ($f:ident($($a:expr),*)) => {
        $f::<f32, F16>($($a),*);
        $f::<f32, BF16>($($a),*);
        $f::<f32, F8E4M3>($($a),*);
        $f::<f32, F8E5M2>($($a),*);
        $f::<f32, F8E4M3FNUZ>($($a),*);
        $f::<f32, F8E5M2FNUZ>($($a),*);
        $f::<f32, F6E2M3>($($a),*);
        $f::<f32, F6E3M2>($($a),*);
        $f::<f32, F4E2M1>($($a),*);
        $f::<f32, F8E8M0>($($a),*);
        $f::<f32, F8E3M4>($($a),*);
        $f::<f32, F8E4M3IEEE>($($a),*);
        $f::<f32, F8E4M3B11FNUZ>($($a),*);
        $f::<f32, F8E5M3FNU>($($a),*);
        $f::<f64, F16>($($a),*);
        $f::<f64, BF16>($($a),*);
        $f::<f64, F8E4M3>($($a),*);
        $f::<f64, F8E5M2>($($a),*);
        $f::<f64, F8E4M3FNUZ>($($a),*);
        $f::<f64, F8E5M2FNUZ>($($a),*);
        $f::<f64, F6E2M3>($($a),*);
        $f::<f64, F6E3M2>($($a),*);
        $f::<f64, F4E2M1>($($a),*);
        $f::<f64, F8E8M0>($($a),*);
        $f::<f64, F8E3M4>($($a),*);
        $f::<f64, F8E4M3IEEE>($($a),*);
        $f::<f64, F8E4M3B11FNUZ>($($a),*);
        $f::<f64, F8E5M3FNU>($($a),*);
    };
}
macro_rules! widening_pairs {
    ($f:ident($($a:expr),*)) => {
        $f::<F16, f32>($($a),*);
        $f::<BF16, f32>($($a),*);
        $f::<F8E4M3, f32>($($a),*);
        $f::<F8E5M2, f32>($($a),*);
        $f::<F8E4M3FNUZ, f32>($($a),*);
        $f::<F8E5M2FNUZ, f32>($($a),*);
        $f::<F6E2M3, f32>($($a),*);
        $f::<F6E3M2, f32>($($a),*);
        $f::<F4E2M1, f32>($($a),*);
        $f::<F8E8M0, f32>($($a),*);
        $f::<F8E3M4, f32>($($a),*);
        $f::<F8E4M3IEEE, f32>($($a),*);
        $f::<F8E4M3B11FNUZ, f32>($($a),*);
        $f::<F8E5M3FNU, f32>($($a),*);
        $f::<F16, f64>($($a),*);
        $f::<BF16, f64>($($a),*);
        $f::<F8E4M3, f64>($($a),*);
        $f::<F8E5M2, f64>($($a),*);
        $f::<F8E4M3FNUZ, f64>($($a),*);
        $f::<F8E5M2FNUZ, f64>($($a),*);
        $f::<F6E2M3, f64>($($a),*);
        $f::<F6E3M2, f64>($($a),*);
        $f::<F4E2M1, f64>($($a),*);
        $f::<F8E8M0, f64>($($a),*);
        $f::<F8E3M4, f64>($($a),*);
        $f::<F8E4M3IEEE, f64>($($a),*);
        $f::<F8E4M3B11FNUZ, f64>($($a),*);
        $f::<F8E5M3FNU, f64>($($a),*);
    };
}

fn coverage(what: &str, backends: &[Backend]) -> String {
    format!(
        "{what}, {} lengths x {} offsets x 2 modes x 2 canaries on [{}]",
        lengths().len(),
        offsets().len(),
        names(backends)
    )
}

#[test]
fn tails_narrowing_every_backend() {
    let test = "tails_narrowing_every_backend";
    let backends = backends(test);
    let mut report = Report::default();
    narrowing_pairs!(typed(&backends, false, &mut report));
    report.finish(test, &coverage("28 narrowing pairs", &backends));
}

#[test]
fn tails_narrowing_handle_every_backend() {
    let test = "tails_narrowing_handle_every_backend";
    let backends = backends(test);
    let mut report = Report::default();
    narrowing_pairs!(typed(&backends, true, &mut report));
    report.finish(
        test,
        &coverage("28 narrowing pairs through Converter", &backends),
    );
}

#[test]
fn tails_widening_every_backend() {
    let test = "tails_widening_every_backend";
    let backends = backends(test);
    let mut report = Report::default();
    widening_pairs!(typed(&backends, false, &mut report));
    report.finish(test, &coverage("28 widening pairs", &backends));
}

#[test]
fn tails_widening_handle_every_backend() {
    let test = "tails_widening_handle_every_backend";
    let backends = backends(test);
    let mut report = Report::default();
    widening_pairs!(typed(&backends, true, &mut report));
    report.finish(
        test,
        &coverage("28 widening pairs through Converter", &backends),
    );
}

#[test]
fn tails_uninit_active_backend() {
    let test = "tails_uninit_active_backend";
    backends(test); // Prints SKIPPED for backends this CPU cannot run.
    let active = [Backend::active()];
    let mut report = Report::default();
    for handle in [false, true] {
        narrowing_pairs!(uninit(handle, &mut report));
        widening_pairs!(uninit(handle, &mut report));
    }
    report.finish(
        test,
        &coverage(
            "56 pairs through convert_slice_uninit_with and Converter::convert_uninit",
            &active,
        ),
    );
}

#[test]
fn tails_bytes_active_backend() {
    let test = "tails_bytes_active_backend";
    backends(test); // Prints SKIPPED for backends this CPU cannot run.
    let active = [Backend::active()];
    let mut report = Report::default();
    narrowing_pairs!(bytes(&mut report));
    widening_pairs!(bytes(&mut report));
    report.finish(
        test,
        &format!(
            "56 pairs through convert_from_bytes_with/convert_to_bytes_with, {} lengths x 8 byte offsets x 2 modes x 2 canaries on [{}]",
            lengths().len(),
            names(&active)
        ),
    );
}

/// The same checks with streaming stores: `VCVT_STREAM_MIN_BYTES=0` makes every widening to
/// f32 or f64 of at least one value take the streaming route (`src/stream.rs`: the kernel fills an L1
/// buffer, non-temporal stores move its whole 64-byte lines, ordinary stores the parts of
/// lines at either end), which normally only conversions about the size of the last-level
/// cache take. The variable is read once per process, so the two tests above run again in
/// a child process of this binary.
#[test]
#[cfg_attr(
    target_os = "wasi",
    ignore = "spawns a child process; WASI has none (and no streaming stores)"
)]
fn tails_streaming_stores() {
    let test = "tails_streaming_stores";
    if std::env::var_os("VCVT_STREAM_MIN_BYTES").is_some() {
        // In a child of this test (or set by the user): the other tests cover it.
        return;
    }
    let mut cmd = common::rerun_self();
    let children = [
        "tails_narrowing_every_backend",
        "tails_widening_every_backend",
    ];
    let out = cmd
        .args(children)
        .args(["--exact", "--nocapture", "--test-threads=2"])
        .env("VCVT_STREAM_MIN_BYTES", "0")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{test}: the child run failed");
    for c in children {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("{c}: ")) && l.ends_with(", 0 mismatches")),
            "{test}: no clean result line from {c}"
        );
    }
    println!("{test}: {children:?} passed again with VCVT_STREAM_MIN_BYTES=0");
}

/// The policies the long conversions are checked under: both overflow policies, and a NaN
/// policy other than `Preserve` (the NaN patch route).
const LONG_POLICIES: [(vcvt::Overflow, vcvt::NanPolicy); 3] = [
    (MODES[0], vcvt::NanPolicy::Preserve),
    (MODES[1], vcvt::NanPolicy::Preserve),
    (MODES[0], vcvt::NanPolicy::Canonical),
];

/// The threshold the streaming child of [`tails_streaming_long`] runs with (source plus
/// destination bytes): low enough that every length below streams on every pair that
/// streams at all (the widenings to f32 and f64), high
/// enough that the 64-value pieces of the reference never do.
const STREAM_TEST_MIN_BYTES: usize = 4096;

/// Lengths for one pair whose source and destination take `s2` and `d2` bytes per two
/// values: around the streaming threshold (one below it, which does not stream, and two at
/// or above it) and around one, two and three destination chunks of the streaming buffer
/// (`BUF` = 8 KiB in `src/stream.rs`), where a chunk of the route ends and the next begins.
fn stream_lengths(s2: usize, d2: usize) -> Vec<usize> {
    let t = (STREAM_TEST_MIN_BYTES * 2).div_ceil(s2 + d2);
    let per = 8192 * 2 / d2;
    let mut v = vec![
        t - 1,
        t,
        t + 1,
        per - 1,
        per,
        per + 1,
        2 * per + 1,
        3 * per - 3,
    ];
    v.sort_unstable();
    v.dedup();
    v
}

/// The reference: `S -> D` converted 64 values per call on the Scalar backend, calls too
/// short to stream.
fn pieces<S: ConvertTo<D>, D: Element + Pod>(src: &[S], opts: Options) -> Vec<D> {
    let mut out = vec![D::zeroed(); src.len()];
    for (s, d) in src.chunks(64).zip(out.chunks_mut(64)) {
        vcvt::convert_slice_on(Backend::Scalar, s, d, opts).unwrap();
    }
    out
}

/// One pair at the streaming lengths, on every backend, both overflow policies, a NaN policy
/// other than `Preserve` (the NaN patch route), at destination offsets 0 and 3 elements from
/// a 64-byte line, inside canaries.
fn stream_pair<S: Gen + ConvertTo<D>, D: Element + Pod>(backends: &[Backend], report: &mut Report) {
    let pair = format!("{}->{}", short::<S>(), short::<D>());
    let (ssz, dsz) = (size_of::<S>(), size_of::<D>());
    let lens = stream_lengths(2 * ssz, 2 * dsz);
    let max = *lens.last().unwrap();
    let mut rng = Rng::new(0x57EA ^ (ssz as u64) << 8 ^ dsz as u64);
    let src: Vec<S> = (0..max).map(|_| S::generate(&mut rng)).collect();
    let canary = CANARIES[0];
    let mut dst_buf = Aligned::new(GUARD + (3 + max) * dsz + GUARD, canary);
    for (mode, nan) in LONG_POLICIES {
        let opts = Options::new().overflow(mode).nan(nan);
        let reference = pieces::<S, D>(&src, opts);
        for &b in backends {
            let convert = |so: usize, len: usize, dst: &mut [u8]| {
                let dst: &mut [D] = bytemuck::cast_slice_mut(dst);
                vcvt::convert_slice_on(b, &src[so..so + len], dst, opts).unwrap();
            };
            let what = |len: usize, _: usize, dof: usize| {
                format!("{pair} on {b}, {mode:?}, {nan:?}, len {len}, dst offset {dof}")
            };
            long_placements(
                report,
                (&mut dst_buf, canary),
                (bytemuck::cast_slice(&src), ssz),
                (bytemuck::cast_slice(&reference), dsz),
                (&lens, &[(0, 0), (0, 3)]),
                &convert,
                &what,
            );
        }
    }
}

/// Packed FP4 both ways through the byte API (odd lengths end in half a byte), at the
/// streaming lengths.
fn stream_packed(report: &mut Report) {
    let mut rng = Rng::new(0xF4F4);
    for (s2, d2, narrow) in [(8, 1, true), (1, 8, false)] {
        for len in stream_lengths(s2, d2) {
            let bytes = len.div_ceil(2);
            if narrow {
                let src: Vec<f32> = (0..len).map(|_| f32::generate(&mut rng)).collect();
                let mut want = vec![0u8; bytes];
                for (s, d) in src.chunks(64).zip(want.chunks_mut(32)) {
                    let d: &mut [vcvt::F4E2M1x2] = bytemuck::cast_slice_mut(d);
                    vcvt::convert_slice_on(Backend::Scalar, s, d, Options::new()).unwrap();
                }
                let mut got = vec![0u8; bytes];
                vcvt::convert_to_bytes::<f32, vcvt::F4E2M1x2>(&src, &mut got).unwrap();
                report.compare(
                    || format!("f32->F4E2M1x2 len {len}"),
                    &want,
                    &got,
                    |k| k as u64,
                );
            } else {
                let src: Vec<u8> = (0..bytes).map(|_| rng.next_u64() as u8).collect();
                let mut want = vec![0f32; len];
                for (s, d) in src.chunks(32).zip(want.chunks_mut(64)) {
                    let s: &[vcvt::F4E2M1x2] = bytemuck::cast_slice(s);
                    vcvt::convert_slice_on(Backend::Scalar, s, d, Options::new()).unwrap();
                }
                let mut got = vec![0f32; len];
                vcvt::convert_from_bytes::<vcvt::F4E2M1x2, f32>(&src, &mut got).unwrap();
                report.compare(
                    || format!("F4E2M1x2->f32 len {len}"),
                    &want,
                    &got,
                    |k| src[k / 2].into(),
                );
            }
        }
    }
}

/// The child of [`tails_streaming_long`]: runs only with `VCVT_STREAM_MIN_BYTES` set to
/// [`STREAM_TEST_MIN_BYTES`] (a plain run passes it by).
#[test]
fn tails_streaming_long_child() {
    let test = "tails_streaming_long_child";
    if std::env::var("VCVT_STREAM_MIN_BYTES").ok() != Some(STREAM_TEST_MIN_BYTES.to_string()) {
        return;
    }
    let backends = backends(test);
    let mut report = Report::default();
    narrowing_pairs!(stream_pair(&backends, &mut report));
    widening_pairs!(stream_pair(&backends, &mut report));
    // Narrow -> narrow: a direct kernel, a two-pass route, F16 <-> BF16.
    stream_pair::<F8E4M3, BF16>(&backends, &mut report);
    stream_pair::<F8E5M2FNUZ, F16>(&backends, &mut report);
    stream_pair::<BF16, F8E4M3>(&backends, &mut report);
    stream_pair::<F16, BF16>(&backends, &mut report);
    stream_packed(&mut report);
    report.finish(
        test,
        &format!(
            "62 pairs at lengths around the streaming threshold and its 8 KiB chunks, 3 policies, 2 destination offsets on [{}]",
            names(&backends)
        ),
    );
}

/// Conversions larger than the streaming threshold, in a child process with the threshold
/// at 4 KiB (`VCVT_STREAM_MIN_BYTES` is read once per process): every widening to f32 or f64 streams its
/// destination a chunk at a time, and must give the bits of the Scalar backend converting
/// 64 values per call (which never streams), with the canaries around it intact.
#[test]
#[cfg_attr(target_os = "wasi", ignore = "spawns a child process; WASI has none")]
fn tails_streaming_long() {
    let test = "tails_streaming_long";
    if std::env::var_os("VCVT_STREAM_MIN_BYTES").is_some() {
        return;
    }
    let child = "tails_streaming_long_child";
    let out = common::rerun_self()
        .args([child, "--exact", "--nocapture", "--test-threads=1"])
        .env("VCVT_STREAM_MIN_BYTES", STREAM_TEST_MIN_BYTES.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{test}: the child run failed");
    // `contains`, not `starts_with`: with one test thread the harness prints "test <name> ..."
    // on the line the child's result line continues.
    assert!(
        stdout
            .lines()
            .any(|l| l.contains(&format!("{child}: ")) && l.ends_with(", 0 mismatches")),
        "{test}: no clean result line from {child}"
    );
}

/// Where the 512-bit tiers split a long conversion so that one side starts on a cache line
/// (`Geometry::align_head` in `src/stream.rs`), for a pair whose elements take `ssz` and
/// `dsz` bytes: the side (`true`: the destination, unless its elements are single bytes),
/// its element size, and the shortest length split (4 KiB of an f32 or f64 destination,
/// 16 KiB of any other side).
fn align_rule(ssz: usize, dsz: usize) -> (bool, usize, usize) {
    if dsz >= 2 {
        (true, dsz, if dsz >= 4 { 4096 } else { 16384 } / dsz)
    } else {
        (false, ssz, 16384 / ssz)
    }
}

/// Placements for [`align_pair`]: (source offset, destination offset) in elements from a
/// 64-byte line, such that the aligned side's offset takes the values that give the split's
/// head its extremes and both parities (0, 1, 2, half a line plus one, a line less one
/// element), the other side 3 elements further on.
fn align_offsets(ssz: usize, dsz: usize) -> Vec<(usize, usize)> {
    let (on_dst, size, _) = align_rule(ssz, dsz);
    let k = 64 / size;
    let mut v: Vec<usize> = vec![0, 1, 2, k / 2 + 1, k - 1];
    v.dedup();
    v.into_iter()
        .map(|a| if on_dst { (a + 3, a) } else { (a, a + 3) })
        .collect()
}

/// One pair at lengths at and past its alignment split ([`align_rule`]), on every backend,
/// both overflow policies and a NaN policy other than `Preserve` (the NaN patch route),
/// through `convert_slice_on` and a [`Converter`], at the placements of [`align_offsets`],
/// inside canaries: every element must equal the Scalar backend's, converting 64 values per
/// call (which never splits).
fn align_pair<S: Gen + ConvertTo<D>, D: Element + Pod>(backends: &[Backend], report: &mut Report) {
    let pair = format!("{}->{}", short::<S>(), short::<D>());
    let (ssz, dsz) = (size_of::<S>(), size_of::<D>());
    let (_, _, t) = align_rule(ssz, dsz);
    let lens = [t - 1, t, t + 67];
    let offs = align_offsets(ssz, dsz);
    let room = 64 + t + 67;
    let mut rng = Rng::new(0xA11C ^ (ssz as u64) << 8 ^ dsz as u64);
    let vals: Vec<S> = (0..room).map(|_| S::generate(&mut rng)).collect();
    let mut src_buf = Aligned::new(room * ssz, 0);
    src_buf
        .bytes_mut()
        .copy_from_slice(bytemuck::cast_slice(&vals));
    let src: &[S] = bytemuck::cast_slice(src_buf.bytes());
    let canary = CANARIES[1];
    let mut dst_buf = Aligned::new(GUARD + room * dsz + GUARD, canary);
    for (mode, nan) in LONG_POLICIES {
        let opts = Options::new().overflow(mode).nan(nan);
        let reference = pieces::<S, D>(src, opts);
        for &b in backends {
            let conv = Converter::<S, D>::on(b, opts).unwrap();
            for handle in [false, true] {
                let convert = |so: usize, len: usize, dst: &mut [u8]| {
                    let dst: &mut [D] = bytemuck::cast_slice_mut(dst);
                    if handle {
                        conv.convert(&src[so..so + len], dst);
                    } else {
                        vcvt::convert_slice_on(b, &src[so..so + len], dst, opts).unwrap();
                    }
                };
                let api = if handle {
                    "Converter"
                } else {
                    "convert_slice_on"
                };
                let what = |len: usize, so: usize, dof: usize| {
                    format!(
                        "{api} {pair} on {b}, {mode:?}, {nan:?}, len {len}, src offset {so}, dst offset {dof}"
                    )
                };
                long_placements(
                    report,
                    (&mut dst_buf, canary),
                    (src_buf.bytes(), ssz),
                    (bytemuck::cast_slice(&reference), dsz),
                    (&lens, &offs),
                    &convert,
                    &what,
                );
            }
        }
    }
}

/// The lengths and placements of [`stream_pair`] and [`align_pair`] for one backend, policy
/// and API, on bytes (compiled once, not for every pair): for each length and (source,
/// destination) element offset, `convert(so, len, dst)` converts `len` source elements from
/// element `so` into `dst` (at that offset inside canaries), which must equal the
/// reference's elements `so..so + len`; `what(len, so, dof)` names the case.
fn long_placements(
    report: &mut Report,
    (dst_buf, canary): (&mut Aligned, u8),
    (src, ssz): (&[u8], usize),
    (reference, dsz): (&[u8], usize),
    (lens, offs): (&[usize], &[(usize, usize)]),
    convert: &dyn Fn(usize, usize, &mut [u8]),
    what: &dyn Fn(usize, usize, usize) -> String,
) {
    for &len in lens {
        for &(so, dof) in offs {
            let (start, end) = (GUARD + dof * dsz, GUARD + (dof + len) * dsz);
            convert(so, len, &mut dst_buf.bytes_mut()[start..end]);
            let what = || what(len, so, dof);
            report.compare_bytes(
                &what,
                &reference[so * dsz..(so + len) * dsz],
                &dst_buf.bytes()[start..end],
                dsz,
                &|k| element(src, ssz, so + k),
            );
            check_canary(report, &what, dst_buf.bytes(), start..end, canary);
            dst_buf.bytes_mut().fill(canary);
        }
    }
}

/// Packed FP4 both ways through the byte API at lengths at and past the alignment split
/// (the f32 side is aligned: 4 KiB of f32 destination, 16 KiB of f32 source), with the
/// f32 side at every element offset in a line (odd heads, which the split must avoid on a
/// packed side, included) and the packed side at byte offsets 0 and 1.
fn align_packed(report: &mut Report) {
    let mut rng = Rng::new(0xF4A1);
    for narrow in [true, false] {
        let t: usize = if narrow { 4096 } else { 1024 };
        for len in [t, t + 67] {
            let bytes = len.div_ceil(2);
            let f: Vec<f32> = (0..len + 16).map(|_| f32::generate(&mut rng)).collect();
            let p: Vec<u8> = (0..bytes + 1).map(|_| rng.next_u64() as u8).collect();
            for (fo, po) in (0..16).flat_map(|fo| [(fo, 0), (fo, 1)]) {
                if narrow {
                    let src = &f[fo..fo + len];
                    let mut want = vec![0u8; bytes];
                    for (s, d) in src.chunks(64).zip(want.chunks_mut(32)) {
                        let d: &mut [vcvt::F4E2M1x2] = bytemuck::cast_slice_mut(d);
                        vcvt::convert_slice_on(Backend::Scalar, s, d, Options::new()).unwrap();
                    }
                    let mut got = vec![0u8; bytes + 1];
                    vcvt::convert_to_bytes::<f32, vcvt::F4E2M1x2>(src, &mut got[po..po + bytes])
                        .unwrap();
                    report.compare(
                        || format!("f32->F4E2M1x2 len {len}, f32 offset {fo}, byte offset {po}"),
                        &want,
                        &got[po..po + bytes],
                        |k| k as u64,
                    );
                } else {
                    let src = &p[po..po + bytes];
                    let mut want = vec![0f32; len];
                    for (s, d) in src.chunks(32).zip(want.chunks_mut(64)) {
                        let s: &[vcvt::F4E2M1x2] = bytemuck::cast_slice(s);
                        vcvt::convert_slice_on(Backend::Scalar, s, d, Options::new()).unwrap();
                    }
                    let mut out = vec![0f32; len + 16];
                    vcvt::convert_from_bytes::<vcvt::F4E2M1x2, f32>(src, &mut out[fo..fo + len])
                        .unwrap();
                    report.compare(
                        || format!("F4E2M1x2->f32 len {len}, f32 offset {fo}, byte offset {po}"),
                        &want,
                        &out[fo..fo + len],
                        |k| src[k / 2].into(),
                    );
                }
            }
        }
    }
}

/// Conversions long enough for the 512-bit tiers to split them so that one side starts on
/// a cache line: a short first call, then the rest. Every placement of that side in its
/// line, on every pair and backend (the other tiers do not split, and must give the same
/// bits anyway), against the Scalar backend converting 64 values per call.
#[test]
fn tails_aligned_long() {
    let test = "tails_aligned_long";
    let backends = backends(test);
    let mut report = Report::default();
    narrowing_pairs!(align_pair(&backends, &mut report));
    widening_pairs!(align_pair(&backends, &mut report));
    align_pair::<F8E4M3, BF16>(&backends, &mut report);
    align_pair::<F8E5M2FNUZ, F16>(&backends, &mut report);
    align_pair::<BF16, F8E4M3>(&backends, &mut report);
    align_pair::<F16, BF16>(&backends, &mut report);
    align_pair::<F16, F4E2M1>(&backends, &mut report);
    align_packed(&mut report);
    report.finish(
        test,
        &format!(
            "61 pairs at and past the alignment split, 5 placements, 3 policies, 2 APIs on [{}]; packed FP4 both ways at 32 placements",
            names(&backends)
        ),
    );
}
