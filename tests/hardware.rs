//! The codec against the CPU's own conversion instructions, where this CPU has them.
//!
//! * F16C (x86-64): `VCVTPS2PH` with immediate 0 (round to nearest even, from the immediate,
//!   not MXCSR; exceptions are masked by default and only set flags nobody reads) must equal
//!   f32→F16 on all 2^32 inputs, and `VCVTPH2PS` must equal F16→f32 on all 2^16 codes (also
//!   F16→f64 through `VCVTPS2PD`, and E5M2→f32 as the F16 `code << 8`, which the contract
//!   defines it to be). The crate's side is the Scalar backend (the specification) and, if
//!   different, the active backend; the other backends are held to the oracle by
//!   `exhaustive_f32.rs`, which makes them transitively equal to the hardware too.
//! * AVX512_BF16: `VCVTNEPS2BF16` must equal f32→BF16 on every input that is not an `f32`
//!   subnormal. It flushes subnormal inputs to zero, where the contract keeps them, so on
//!   subnormal inputs the test asserts that the instruction gives a zero and that the two
//!   differ exactly when the contract's result is not zero.
//!
//! When a feature is missing the test prints `SKIPPED: <test>: <feature> not available` and
//! returns. Under `VCVT_SWEEP=sample` the 2^32 sweeps use the stratified `f32` sample.

// Off x86-64 every test only prints SKIPPED, which leaves most of this file unused.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_imports))]

mod common;

use common::{Narrow, Report, names};
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

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Whether F16C (and the AVX it needs) is present.
    pub fn has_f16c() -> bool {
        is_x86_feature_detected!("avx") && is_x86_feature_detected!("f16c")
    }

    /// Whether AVX512_BF16 (with AVX-512 F) is present.
    pub fn has_avx512_bf16() -> bool {
        is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bf16")
    }

    /// `VCVTPS2PH` (round to nearest even from the immediate) on whole 8-lane vectors.
    #[target_feature(enable = "avx,f16c")]
    pub fn vcvtps2ph(src: &[f32], dst: &mut [u16]) {
        assert!(src.len() == dst.len() && src.len().is_multiple_of(8));
        for (s, d) in src.chunks_exact(8).zip(dst.chunks_exact_mut(8)) {
            // SAFETY: `s` has 8 readable f32 (32 bytes) and `d` 8 writable u16 (16 bytes);
            // the unaligned load/store need no alignment; AVX and F16C are enabled on this
            // function, whose callers checked them with `has_f16c`.
            unsafe {
                let v = _mm256_loadu_ps(s.as_ptr());
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(v);
                _mm_storeu_si128(d.as_mut_ptr().cast(), h);
            }
        }
    }

    /// `VCVTPH2PS` on whole 8-lane vectors.
    #[target_feature(enable = "avx,f16c")]
    pub fn vcvtph2ps(src: &[u16], dst: &mut [f32]) {
        assert!(src.len() == dst.len() && src.len().is_multiple_of(8));
        for (s, d) in src.chunks_exact(8).zip(dst.chunks_exact_mut(8)) {
            // SAFETY: `s` has 8 readable u16 (16 bytes), `d` 8 writable f32 (32 bytes);
            // unaligned accesses; features as in `vcvtps2ph`.
            unsafe {
                let h = _mm_loadu_si128(s.as_ptr().cast());
                _mm256_storeu_ps(d.as_mut_ptr(), _mm256_cvtph_ps(h));
            }
        }
    }

    /// `VCVTPH2PS` then `VCVTPS2PD` on whole 4-lane vectors.
    #[target_feature(enable = "avx,f16c")]
    pub fn vcvtph2ps_pd(src: &[u16], dst: &mut [f64]) {
        assert!(src.len() == dst.len() && src.len().is_multiple_of(4));
        for (s, d) in src.chunks_exact(4).zip(dst.chunks_exact_mut(4)) {
            // SAFETY: `s` has 4 readable u16 (8 bytes: the 64-bit load), `d` 4 writable f64
            // (32 bytes); unaligned accesses; features as in `vcvtps2ph`.
            unsafe {
                let h = _mm_loadl_epi64(s.as_ptr().cast());
                _mm256_storeu_pd(d.as_mut_ptr(), _mm256_cvtps_pd(_mm_cvtph_ps(h)));
            }
        }
    }

    /// `VCVTNEPS2BF16` on whole 16-lane vectors.
    #[target_feature(enable = "avx512f,avx512bf16")]
    pub fn vcvtneps2bf16(src: &[f32], dst: &mut [u16]) {
        assert!(src.len() == dst.len() && src.len().is_multiple_of(16));
        for (s, d) in src.chunks_exact(16).zip(dst.chunks_exact_mut(16)) {
            // SAFETY: `s` has 16 readable f32 (64 bytes), `d` 16 writable u16 (32 bytes);
            // unaligned accesses; AVX-512 F and BF16 are enabled on this function, whose
            // callers checked them with `has_avx512_bf16`. `__m256bh` and `__m256i` are both
            // 32 bytes of plain bits, so the transmute only relabels them.
            unsafe {
                let b = _mm512_cvtneps_pbh(_mm512_loadu_ps(s.as_ptr()));
                let b = core::mem::transmute::<__m256bh, __m256i>(b);
                _mm256_storeu_si256(d.as_mut_ptr().cast(), b);
            }
        }
    }
}

#[test]
fn f16c_narrowing_all_f32() {
    let test = "f16c_narrowing_all_f32";
    #[cfg(target_arch = "x86_64")]
    if x86::has_f16c() {
        let backends = crate_backends(test);
        let check = |src: &[f32], s: &mut (Vec<u16>, Vec<F16>, Vec<F16>), report: &mut Report| {
            let (hw, hw16, out) = s;
            hw.resize(src.len(), 0);
            out.resize(src.len(), F16::ZERO);
            // SAFETY: `has_f16c` returned true just above, so the target features of
            // `vcvtps2ph` are present.
            unsafe { x86::vcvtps2ph(src, hw) };
            hw16.clear();
            hw16.extend(hw.iter().map(|&h| F16::from_bits(h)));
            for &b in &backends {
                let opts = Options::new().overflow(Overflow::NonSaturating);
                vcvt::convert_slice_on(b, src, out, opts).unwrap();
                let what = || format!("f32->F16 on {b} vs VCVTPS2PH");
                report.compare(what, hw16, out, |k| u64::from(src[k].to_bits()));
            }
        };
        let (report, inputs) = common::sweep_f32(F16::oracle(), 0x4A4D_0001, check);
        report.finish(
            test,
            &format!(
                "VCVTPS2PH on {inputs} vs [{}] (NonSaturating)",
                names(&backends)
            ),
        );
        return;
    }
    println!("SKIPPED: {test}: x86-64 F16C not available");
}

#[test]
fn f16c_widening_all_codes() {
    let test = "f16c_widening_all_codes";
    #[cfg(target_arch = "x86_64")]
    if x86::has_f16c() {
        let backends = crate_backends(test);
        let codes: Vec<u16> = (0..=u16::MAX).collect();
        let mut hw32 = vec![0f32; codes.len()];
        let mut hw64 = vec![0f64; codes.len()];
        // SAFETY: `has_f16c` returned true just above.
        unsafe {
            x86::vcvtph2ps(&codes, &mut hw32);
            x86::vcvtph2ps_pd(&codes, &mut hw64);
        }
        let f16: Vec<F16> = codes.iter().map(|&c| F16::from_bits(c)).collect();
        // E5M2 widens as the F16 code << 8: the hardware's answer for F16 code `c << 8`.
        let e5: Vec<vcvt::F8E5M2> = (0..=255u8).map(vcvt::F8E5M2::from_bits).collect();
        let e5_hw32: Vec<f32> = (0..256).map(|c| hw32[c << 8]).collect();
        let e5_hw64: Vec<f64> = (0..256).map(|c| hw64[c << 8]).collect();
        let mut report = Report::default();
        for &b in &backends {
            let mut out32 = vec![0f32; codes.len()];
            let mut out64 = vec![0f64; codes.len()];
            vcvt::convert_slice_on(b, &f16, &mut out32, Options::new()).unwrap();
            vcvt::convert_slice_on(b, &f16, &mut out64, Options::new()).unwrap();
            let input = |k: usize| u64::from(codes[k]);
            report.compare(
                || format!("F16->f32 on {b} vs VCVTPH2PS"),
                &hw32,
                &out32,
                input,
            );
            report.compare(
                || format!("F16->f64 on {b} vs VCVTPH2PS+VCVTPS2PD"),
                &hw64,
                &out64,
                input,
            );
            let (mut e32, mut e64) = (vec![0f32; 256], vec![0f64; 256]);
            vcvt::convert_slice_on(b, &e5, &mut e32, Options::new()).unwrap();
            vcvt::convert_slice_on(b, &e5, &mut e64, Options::new()).unwrap();
            let input = |k: usize| k as u64;
            report.compare(
                || format!("F8E5M2->f32 on {b} vs VCVTPH2PS(c<<8)"),
                &e5_hw32,
                &e32,
                input,
            );
            report.compare(
                || format!("F8E5M2->f64 on {b} vs VCVTPH2PS(c<<8)+VCVTPS2PD"),
                &e5_hw64,
                &e64,
                input,
            );
        }
        report.finish(
            test,
            &format!(
                "VCVTPH2PS (and VCVTPS2PD) on all 65536 F16 codes and 256 E5M2 codes vs [{}]",
                names(&backends)
            ),
        );
        return;
    }
    println!("SKIPPED: {test}: x86-64 F16C not available");
}

/// Whether an `f32` is subnormal (zero exponent field, nonzero fraction).
fn is_f32_subnormal(x: f32) -> bool {
    x.to_bits() & 0x7F80_0000 == 0 && x.to_bits() & 0x007F_FFFF != 0
}

/// Per-thread buffers of the AVX512_BF16 sweep.
#[derive(Default)]
struct Bf16Scratch {
    hw: Vec<u16>,
    out: Vec<BF16>,
    normal_src: Vec<f32>,
    normal_hw: Vec<BF16>,
    normal_out: Vec<BF16>,
}

#[test]
fn avx512_bf16_narrowing_all_f32() {
    let test = "avx512_bf16_narrowing_all_f32";
    #[cfg(target_arch = "x86_64")]
    if x86::has_avx512_bf16() {
        use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
        let backends = crate_backends(test);
        // Subnormal inputs: how many, and on how many the results differ.
        let (subnormals, differ) = (AtomicU64::new(0), AtomicU64::new(0));
        let check = |src: &[f32], s: &mut Bf16Scratch, report: &mut Report| {
            s.hw.resize(src.len(), 0);
            s.out.resize(src.len(), BF16::ZERO);
            // SAFETY: `has_avx512_bf16` returned true just above.
            unsafe { x86::vcvtneps2bf16(src, &mut s.hw) };
            // Inputs that are not f32 subnormals, and the instruction's results for them.
            s.normal_src.clear();
            s.normal_hw.clear();
            let mut subs = 0;
            for (&x, &h) in src.iter().zip(&s.hw) {
                if is_f32_subnormal(x) {
                    subs += 1;
                } else {
                    s.normal_src.push(x);
                    s.normal_hw.push(BF16::from_bits(h));
                }
            }
            let mut diffs = 0;
            for &b in &backends {
                let opts = Options::new().overflow(Overflow::NonSaturating);
                vcvt::convert_slice_on(b, src, &mut s.out, opts).unwrap();
                // Not subnormal: bit-exact agreement.
                s.normal_out.clear();
                let pairs = src.iter().zip(&s.out);
                s.normal_out
                    .extend(pairs.filter(|(x, _)| !is_f32_subnormal(**x)).map(|p| p.1));
                let what = || format!("f32->BF16 on {b} vs VCVTNEPS2BF16");
                report.compare(what, &s.normal_hw, &s.normal_out, |k| {
                    u64::from(s.normal_src[k].to_bits())
                });
                // Subnormal: the instruction gives a zero, and the results differ exactly
                // where the contract's is not a zero (where it keeps the subnormal).
                for ((&x, &h), o) in src.iter().zip(&s.hw).zip(&s.out) {
                    if !is_f32_subnormal(x) {
                        continue;
                    }
                    let ours = o.to_bits();
                    report.cases += 1;
                    if h & 0x7FFF != 0 || (ours != h) != (ours & 0x7FFF != 0) {
                        report.fail(common::Mismatch {
                            what: format!("subnormal input: f32->BF16 on {b} vs VCVTNEPS2BF16"),
                            input: u64::from(x.to_bits()),
                            expected: u64::from(h),
                            got: u64::from(ours),
                        });
                    }
                    if ours != h && b == Backend::Scalar {
                        diffs += 1;
                    }
                }
            }
            subnormals.fetch_add(subs, Relaxed);
            differ.fetch_add(diffs, Relaxed);
        };
        let (report, inputs) = common::sweep_f32(BF16::oracle(), 0x4A4D_0002, check);
        let (subs, diffs) = (subnormals.load(Relaxed), differ.load(Relaxed));
        println!(
            "{test}: {subs} subnormal inputs, flushed by VCVTNEPS2BF16; the contract's result \
             differs on {diffs} of them (exactly those it keeps as nonzero BF16 subnormals)"
        );
        assert!(
            subs > 0 && diffs > 0 && diffs < subs,
            "the subnormal case was not exercised"
        );
        report.finish(
            test,
            &format!(
                "VCVTNEPS2BF16 on {inputs} vs [{}] (NonSaturating)",
                names(&backends)
            ),
        );
        return;
    }
    println!("SKIPPED: {test}: x86-64 AVX512_BF16 not available");
}
