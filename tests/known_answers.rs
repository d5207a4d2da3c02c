//! The known-answer vectors of `tests/data/conversions.tsv` (copied from the project's shared
//! vectors; see `tests/data/conversions.README.md`), produced and cross-checked outside this
//! crate. Every row is checked through the scalar element API and through every available
//! backend.

use vcvt::{BF16, Backend, ConvertTo, Element, F8E4M3, F8E5M2, F16, Options, Overflow};

const TSV: &str = include_str!("data/conversions.tsv");

struct Row<'a> {
    line: usize,
    format: &'a str,
    mode: &'a str,
    direction: &'a str,
    input: u64,
    output: u64,
    note: &'a str,
}

fn rows() -> Vec<Row<'static>> {
    let mut out = Vec::new();
    for (i, line) in TSV.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert!(f.len() >= 6, "line {}: {line}", i + 1);
        let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
        out.push(Row {
            line: i + 1,
            format: f[0],
            mode: f[1],
            direction: f[2],
            input: hex(f[3]),
            output: hex(f[4]),
            note: f[5],
        });
    }
    out
}

/// Length of the slices each value is converted in: long enough to reach every SIMD
/// backend's vector body (67), or 5 under Miri, where only the Scalar loop runs.
const LEN: usize = if cfg!(miri) { 5 } else { 67 };

/// Narrows one value through every available backend and checks they agree with `expect`.
fn narrow_all<S: ConvertTo<D> + Copy, D: Element + bytemuck::Zeroable>(
    x: S,
    ov: Overflow,
    bits: impl Fn(D) -> u64,
    expect: u64,
    row: &Row,
) -> usize {
    let mut checked = 0;
    for b in Backend::available() {
        // A slice long enough to reach every backend's vector body, with the value everywhere.
        let src = vec![x; LEN];
        let mut dst = vec![D::zeroed(); LEN];
        vcvt::convert_slice_on(b, &src, &mut dst, Options::new().overflow(ov)).unwrap();
        for d in &dst {
            assert_eq!(bits(*d), expect, "line {} ({}) on {b}", row.line, row.note);
        }
        checked += 1;
    }
    checked
}

#[test]
fn known_answers() {
    let rows = rows();
    assert!(rows.len() > 500, "only {} rows", rows.len());
    let mut checked = 0;
    for r in &rows {
        let ov = match r.mode {
            "sat" => Overflow::Saturate,
            _ => Overflow::NonSaturating,
        };
        match (r.format, r.direction) {
            ("f16", "f32->f16") => {
                let x = f32::from_bits(r.input as u32);
                assert_eq!(
                    F16::from_f32_with(x, ov).to_bits() as u64,
                    r.output,
                    "line {}",
                    r.line
                );
                checked += narrow_all::<f32, F16>(x, ov, |d| d.to_bits() as u64, r.output, r);
            }
            ("f16", "f64->f16") => {
                let x = f64::from_bits(r.input);
                assert_eq!(
                    F16::from_f64_with(x, ov).to_bits() as u64,
                    r.output,
                    "line {}",
                    r.line
                );
                checked += narrow_all::<f64, F16>(x, ov, |d| d.to_bits() as u64, r.output, r);
            }
            ("bf16", "f32->bf16") => {
                let x = f32::from_bits(r.input as u32);
                assert_eq!(
                    BF16::from_f32_with(x, ov).to_bits() as u64,
                    r.output,
                    "line {}",
                    r.line
                );
                checked += narrow_all::<f32, BF16>(x, ov, |d| d.to_bits() as u64, r.output, r);
            }
            ("bf16", "f64->bf16") => {
                let x = f64::from_bits(r.input);
                assert_eq!(
                    BF16::from_f64_with(x, ov).to_bits() as u64,
                    r.output,
                    "line {}",
                    r.line
                );
                checked += narrow_all::<f64, BF16>(x, ov, |d| d.to_bits() as u64, r.output, r);
            }
            ("e4m3fn", "f32->e4m3fn") => {
                let x = f32::from_bits(r.input as u32);
                assert_eq!(
                    F8E4M3::from_f32_with(x, ov).to_bits() as u64,
                    r.output,
                    "line {}",
                    r.line
                );
                checked += narrow_all::<f32, F8E4M3>(x, ov, |d| d.to_bits() as u64, r.output, r);
            }
            ("e4m3fn", "f64->e4m3fn") => {
                let x = f64::from_bits(r.input);
                assert_eq!(
                    F8E4M3::from_f64_with(x, ov).to_bits() as u64,
                    r.output,
                    "line {}",
                    r.line
                );
                checked += narrow_all::<f64, F8E4M3>(x, ov, |d| d.to_bits() as u64, r.output, r);
            }
            ("e5m2", "f32->e5m2") => {
                let x = f32::from_bits(r.input as u32);
                assert_eq!(
                    F8E5M2::from_f32_with(x, ov).to_bits() as u64,
                    r.output,
                    "line {}",
                    r.line
                );
                checked += narrow_all::<f32, F8E5M2>(x, ov, |d| d.to_bits() as u64, r.output, r);
            }
            ("e5m2", "f64->e5m2") => {
                let x = f64::from_bits(r.input);
                assert_eq!(
                    F8E5M2::from_f64_with(x, ov).to_bits() as u64,
                    r.output,
                    "line {}",
                    r.line
                );
                checked += narrow_all::<f64, F8E5M2>(x, ov, |d| d.to_bits() as u64, r.output, r);
            }
            (fmt, dir) if dir.ends_with("->f32") => {
                let only_nan_ness = r.note.contains("only NaN-ness is normative");
                let check = |got: f32| {
                    if only_nan_ness {
                        assert!(
                            got.is_nan() && f32::from_bits(r.output as u32).is_nan(),
                            "line {}",
                            r.line
                        );
                        assert_eq!(
                            got.is_sign_negative(),
                            r.output >> 31 == 1,
                            "line {}",
                            r.line
                        );
                    } else {
                        assert_eq!(
                            got.to_bits() as u64,
                            r.output,
                            "line {}: {}",
                            r.line,
                            r.note
                        );
                    }
                };
                let got = match fmt {
                    "f16" => widen_all(F16::from_bits(r.input as u16)),
                    "bf16" => widen_all(BF16::from_bits(r.input as u16)),
                    "e4m3fn" => widen_all(F8E4M3::from_bits(r.input as u8)),
                    "e5m2" => widen_all(F8E5M2::from_bits(r.input as u8)),
                    other => panic!("line {}: unknown format {other}", r.line),
                };
                for g in got {
                    check(g);
                    checked += 1;
                }
            }
            (fmt, dir) => panic!("line {}: unhandled {fmt} {dir}", r.line),
        }
    }
    println!("{checked} checks over {} rows", rows.len());
}

/// Widens one value with the element API and through every available backend.
fn widen_all<N: ConvertTo<f32> + Copy + Into<f32>>(x: N) -> Vec<f32> {
    let mut out = vec![x.into()];
    for b in Backend::available() {
        let src = vec![x; LEN];
        let mut dst = vec![0.0f32; LEN];
        vcvt::convert_slice_on(b, &src, &mut dst, Options::new()).unwrap();
        assert!(dst.iter().all(|d| d.to_bits() == dst[0].to_bits()), "{b}");
        out.push(dst[0]);
    }
    out
}
