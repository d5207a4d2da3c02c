//! The `half` crate, an independent implementation, against the codec:
//!
//! * f32→F16 and f32→BF16 on all 2^32 inputs (`half` rounds to nearest even and overflows
//!   to Inf, i.e. the contract's `NonSaturating`);
//! * every F16 and BF16 code widened to `f32` and `f64`.
//!
//! They agree everywhere except where the contract deliberately differs: `half` quiets a
//! signalling BF16 NaN when widening it to `f32` (it sets bit 6 of the code), while the
//! contract defines BF16→f32 as the plain 16-bit shift. The widening test checks that the
//! two differ on exactly those codes, and exactly by that bit.
//!
//! `half` is not used for `f64` sources: its f64→f16/bf16 conversions are not the contract's
//! single rounding (`f64_sources.rs` uses the oracle instead).
//!
//! The crate's side is the Scalar backend (the specification) and, if different, the active
//! backend. Under `VCVT_SWEEP=sample` the 2^32 sweeps use the stratified `f32` sample.

mod common;

use common::{Narrow, Report, names};
use half::slice::HalfFloatSliceExt;
use vcvt::{BF16, Backend, F16, Options, Overflow};

/// The crate's side of the comparison: Scalar and the active backend (deduplicated).
fn crate_backends(test: &str) -> Vec<Backend> {
    common::backends(test);
    let mut v = vec![Backend::Scalar];
    if Backend::active() != Backend::Scalar {
        v.push(Backend::active());
    }
    v
}

#[test]
fn half_f32_to_f16_all_inputs() {
    let test = "half_f32_to_f16_all_inputs";
    let backends = crate_backends(test);
    let check = |src: &[f32], s: &mut (Vec<half::f16>, Vec<F16>, Vec<F16>), r: &mut Report| {
        let (theirs, theirs_v, out) = s;
        theirs.resize(src.len(), half::f16::ZERO);
        out.resize(src.len(), F16::ZERO);
        theirs.convert_from_f32_slice(src);
        theirs_v.clear();
        theirs_v.extend(theirs.iter().map(|h| F16::from_bits(h.to_bits())));
        for &b in &backends {
            let opts = Options::new().overflow(Overflow::NonSaturating);
            vcvt::convert_slice_on(b, src, out, opts).unwrap();
            let what = || format!("f32->F16 on {b} vs half");
            r.compare(what, theirs_v, out, |k| u64::from(src[k].to_bits()));
        }
    };
    let (report, inputs) = common::sweep_f32(F16::oracle(), 0x4A1F_0001, check);
    report.finish(
        test,
        &format!(
            "half::f16 on {inputs} vs [{}] (NonSaturating)",
            names(&backends)
        ),
    );
}

#[test]
fn half_f32_to_bf16_all_inputs() {
    let test = "half_f32_to_bf16_all_inputs";
    let backends = crate_backends(test);
    let check = |src: &[f32], s: &mut (Vec<half::bf16>, Vec<BF16>, Vec<BF16>), r: &mut Report| {
        let (theirs, theirs_v, out) = s;
        theirs.resize(src.len(), half::bf16::ZERO);
        out.resize(src.len(), BF16::ZERO);
        theirs.convert_from_f32_slice(src);
        theirs_v.clear();
        theirs_v.extend(theirs.iter().map(|h| BF16::from_bits(h.to_bits())));
        for &b in &backends {
            let opts = Options::new().overflow(Overflow::NonSaturating);
            vcvt::convert_slice_on(b, src, out, opts).unwrap();
            let what = || format!("f32->BF16 on {b} vs half");
            r.compare(what, theirs_v, out, |k| u64::from(src[k].to_bits()));
        }
    };
    let (report, inputs) = common::sweep_f32(BF16::oracle(), 0x4A1F_0002, check);
    report.finish(
        test,
        &format!(
            "half::bf16 on {inputs} vs [{}] (NonSaturating)",
            names(&backends)
        ),
    );
}

#[test]
fn half_widening_all_codes() {
    let test = "half_widening_all_codes";
    let backends = crate_backends(test);
    let codes: Vec<u16> = (0..=u16::MAX).collect();
    let f16: Vec<F16> = codes.iter().map(|&c| F16::from_bits(c)).collect();
    let bf16: Vec<BF16> = codes.iter().map(|&c| BF16::from_bits(c)).collect();
    let h16 = codes.iter().map(|&c| half::f16::from_bits(c));
    let hb16 = codes.iter().map(|&c| half::bf16::from_bits(c));
    let f16_32: Vec<f32> = h16.clone().map(half::f16::to_f32).collect();
    let f16_64: Vec<f64> = h16.map(half::f16::to_f64).collect();
    let bf16_64: Vec<f64> = hb16.clone().map(half::bf16::to_f64).collect();
    // BF16 -> f32: half quiets signalling NaNs; the contract keeps the bits. Compare against
    // half's answer with that one deliberate difference undone, and check separately that
    // the difference is exactly the quiet bit on exactly the signalling NaN codes.
    let is_bf16_snan = |c: u16| c & 0x7F80 == 0x7F80 && c & 0x7F != 0 && c & 0x40 == 0;
    let bf16_32_half: Vec<f32> = hb16.map(half::bf16::to_f32).collect();
    let bf16_32: Vec<f32> = codes
        .iter()
        .zip(&bf16_32_half)
        .map(|(&c, h)| {
            if is_bf16_snan(c) {
                assert_eq!(h.to_bits(), u32::from(c | 0x40) << 16, "half quiets {c:#x}");
                f32::from_bits(h.to_bits() & !0x0040_0000)
            } else {
                *h
            }
        })
        .collect();
    let snans = codes.iter().filter(|&&c| is_bf16_snan(c)).count();

    let mut report = Report::default();
    let input = |k: usize| u64::from(codes[k]);
    for &b in &backends {
        let mut o32 = vec![0f32; codes.len()];
        let mut o64 = vec![0f64; codes.len()];
        vcvt::convert_slice_on(b, &f16, &mut o32, Options::new()).unwrap();
        report.compare(|| format!("F16->f32 on {b} vs half"), &f16_32, &o32, input);
        vcvt::convert_slice_on(b, &f16, &mut o64, Options::new()).unwrap();
        report.compare(|| format!("F16->f64 on {b} vs half"), &f16_64, &o64, input);
        vcvt::convert_slice_on(b, &bf16, &mut o64, Options::new()).unwrap();
        report.compare(
            || format!("BF16->f64 on {b} vs half"),
            &bf16_64,
            &o64,
            input,
        );
        vcvt::convert_slice_on(b, &bf16, &mut o32, Options::new()).unwrap();
        report.compare(
            || format!("BF16->f32 on {b} vs half (sNaN quieting undone)"),
            &bf16_32,
            &o32,
            input,
        );
        // The deliberate difference, checked positively: on every signalling NaN code the
        // crate keeps the bits and half does not.
        let mut differ = 0;
        for (k, &c) in codes.iter().enumerate() {
            let same = o32[k].to_bits() == bf16_32_half[k].to_bits();
            if same == is_bf16_snan(c) {
                report.fail(common::Mismatch {
                    what: format!("BF16->f32 on {b}: differs from half exactly on sNaN codes"),
                    input: u64::from(c),
                    expected: u64::from(bf16_32_half[k].to_bits()),
                    got: u64::from(o32[k].to_bits()),
                });
            }
            differ += usize::from(!same);
        }
        assert_eq!(differ, snans, "{b}");
    }
    assert_eq!(snans, 2 * 63, "signalling BF16 NaNs: 63 payloads x 2 signs");
    report.finish(
        test,
        &format!(
            "all 65536 F16 and BF16 codes to f32/f64 vs half, {snans} BF16 sNaN codes differing \
             as the contract says, on [{}]",
            names(&backends)
        ),
    );
}
