//! The formats vcvt shares with ml_dtypes 0.7 beyond OCP's (F8E3M4, F8E4M3IEEE,
//! F8E4M3B11FNUZ, F8E5M3FNU) against ml_dtypes itself, exhaustively: every one of the 2^32
//! f32 bit patterns narrowed, and every code widened, compared with what ml_dtypes'
//! `astype` gave (`tests/data/mldtypes/<format>.runs.tsv`, written by
//! `scripts/gen_mldtypes_runs.py`; CI regenerates the files and compares them byte for byte).
//!
//! ml_dtypes' `astype` does not saturate and gives the canonical NaN: vcvt's
//! `Overflow::NonSaturating` with `NanPolicy::Preserve`. The narrowing runs on the Scalar
//! backend, the specification, and on the active backend.
//!
//! By default each run's first and last input and 64 inputs spread over it are checked:
//! with `tests/exhaustive_f32.rs`, which proves every backend's narrowing of every f32 equal
//! to an independent oracle whose codes grow with the magnitude (and whose NaN code is one
//! per sign), agreement at both ends of every run is agreement on all of it.
//! `VCVT_MLDTYPES_FULL=1` compares all 2^32 inputs directly (minutes).

mod common;

use vcvt::{
    Backend, ConvertTo, Element, F8E3M4, F8E4M3B11FNUZ, F8E4M3IEEE, F8E5M3FNU, Options, Overflow,
};

/// A format's file: the runs `(first f32 bits, code)` in order, and the 256 widenings.
struct Runs {
    runs: Vec<(u32, u8)>,
    widen: Vec<u32>,
}

fn load(name: &str) -> Runs {
    let path = format!(
        "{}/tests/data/mldtypes/{name}.runs.tsv",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut runs = Vec::new();
    let mut widen = vec![None; 256];
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        let hex = |s: &str| u32::from_str_radix(s, 16).unwrap();
        match f[0] {
            "run" => runs.push((hex(f[1]), hex(f[2]) as u8)),
            "widen" => widen[hex(f[1]) as usize] = Some(hex(f[2])),
            other => panic!("{path}: unknown row {other}"),
        }
    }
    assert_eq!(
        runs.first().map(|r| r.0),
        Some(0),
        "{path}: runs start at 0"
    );
    assert!(
        runs.windows(2).all(|w| w[0].0 < w[1].0),
        "{path}: runs out of order"
    );
    Runs {
        runs,
        widen: widen
            .into_iter()
            .map(|w| w.expect("every code widened"))
            .collect(),
    }
}

/// Every f32 of run `i` (or a sample of it), with its expected code.
fn run_inputs(r: &Runs, i: usize, sample: bool) -> (Vec<f32>, u8) {
    let (start, code) = r.runs[i];
    let end = r
        .runs
        .get(i + 1)
        .map_or(u64::from(u32::MAX) + 1, |n| u64::from(n.0));
    let start = u64::from(start);
    let bits: Vec<u32> = if sample && end - start > 66 {
        let step = (end - start) / 64;
        (0..64)
            .map(|k| (start + k * step) as u32)
            .chain([start as u32, (end - 1) as u32])
            .collect()
    } else {
        (start..end).map(|b| b as u32).collect()
    };
    (bits.into_iter().map(f32::from_bits).collect(), code)
}

fn check<T: Element + bytemuck::Pod + ConvertTo<f32>>(name: &str)
where
    f32: ConvertTo<T>,
{
    let r = load(name);
    let sample = std::env::var("VCVT_MLDTYPES_FULL").map_or(true, |v| v != "1");
    let opts = Options::new().overflow(Overflow::NonSaturating);
    let backends = [Backend::Scalar, Backend::active()];
    // Runs are split between two threads; a long run goes in chunks.
    let chunk = 1 << 20;
    std::thread::scope(|s| {
        for part in 0..2 {
            let r = &r;
            s.spawn(move || {
                let mut out: Vec<T> = Vec::new();
                for i in (part..r.runs.len()).step_by(2) {
                    let (inputs, code) = run_inputs(r, i, sample);
                    for src in inputs.chunks(chunk) {
                        out.resize(src.len(), T::zeroed());
                        for b in backends {
                            vcvt::convert_slice_on(b, src, &mut out, opts).unwrap();
                            let bytes: &[u8] = bytemuck::cast_slice(&out);
                            if let Some(k) = bytes.iter().position(|&c| c != code) {
                                panic!(
                                    "{name} on {b}: f32 {:#010x} gave {:#04x}, ml_dtypes {code:#04x}",
                                    src[k].to_bits(),
                                    bytes[k]
                                );
                            }
                        }
                    }
                }
            });
        }
    });
    // Every code widened, on every backend.
    let codes: Vec<T> = (0..=255u8).map(|c| bytemuck::cast::<u8, T>(c)).collect();
    let mut wide = vec![0f32; 256];
    for b in common::backends(name) {
        vcvt::convert_slice_on(b, &codes, &mut wide, Options::new()).unwrap();
        for (c, (&got, &want)) in wide.iter().zip(&r.widen).enumerate() {
            assert_eq!(
                got.to_bits(),
                want,
                "{name} on {b}: code {c:#04x} widened to {:#010x}, ml_dtypes {want:#010x}",
                got.to_bits()
            );
        }
    }
    println!(
        "{name}: {} runs, {} against ml_dtypes on {}; 256 codes widened",
        r.runs.len(),
        if sample { "sampled" } else { "all 2^32 f32" },
        common::names(&backends)
    );
}

#[test]
fn f8e3m4() {
    check::<F8E3M4>("F8E3M4");
}

#[test]
fn f8e4m3ieee() {
    check::<F8E4M3IEEE>("F8E4M3IEEE");
}

#[test]
fn f8e4m3b11fnuz() {
    check::<F8E4M3B11FNUZ>("F8E4M3B11FNUZ");
}

#[test]
fn f8e5m3fnu() {
    check::<F8E5M3FNU>("F8E5M3FNU");
}
