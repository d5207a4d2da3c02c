//! Results must not depend on MXCSR, the x86 SSE/AVX control register: its rounding mode,
//! flush-to-zero (FTZ, subnormal results become zero) and denormals-are-zero (DAZ,
//! subnormal inputs read as zero). Inference code often runs with FTZ and DAZ set (C
//! libraries built with fast-math, `torch.set_flush_denormal`), and the contract promises
//! the same bits there.
//!
//! Each conversion runs with MXCSR set to one of the 16 combinations of the four rounding
//! modes, FTZ and DAZ (all exceptions masked) and is compared with the Scalar backend run
//! under the default MXCSR. The Scalar backend is integer code, and the exhaustive tests
//! check it against the independent oracle. Covered:
//!
//! - every SIMD backend, every pair, both overflow policies, under all 16 settings: the
//!   stratified f32 sample of `common` (every exponent, both signs, the mantissas around
//!   every rounding boundary of each format), those values as f64 and their f64 neighbours
//!   (ties broken by bits below f32 precision), random f64, and every code widened;
//! - all 2^32 f32 inputs narrowed to each format under the two most hostile settings
//!   (FTZ + DAZ with rounding up, FTZ + DAZ with rounding down; the third of
//!   `hostile_settings`, FTZ alone with rounding toward zero, runs on the sample above), on
//!   each distinct SIMD kernel of the pair, against the oracle: that sweep is part of
//!   `tests/exhaustive_f32.rs`, which has each chunk of inputs and the oracle's answers at
//!   hand; the `portable` backend, whose few float operations are exact, gets the sample
//!   above;
//! - f32 -> F8E4M3/F8E5M2 at every length and start offset of `tests/tails.rs`, with the
//!   destination between canaries, under rounding toward zero and under round to nearest
//!   with FTZ + DAZ: the AVX2 kernel reads MXCSR and takes its integer path under the
//!   first and its fused multiply-add path under the second (the tail test, under the
//!   default MXCSR, sees only the latter).
//!
//! MXCSR is set and restored inside one `asm!` block that calls the conversion
//! (`common::mxcsr::with_mxcsr`), so no Rust code outside that call runs under a non-default
//! floating-point environment.

#![cfg(target_arch = "x86_64")]

mod common;

use std::arch::asm;

use common::mxcsr::{DAZ, FTZ, MASKS, ROUNDING, Setting, with_mxcsr};
use common::{MODES, Narrow, Report, Rng, backends, names};
use vcvt::{
    BF16, Backend, ConvertTo, Element, F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ,
    F8E4M3FNUZ, F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, Options,
};

/// All 16 combinations of rounding mode, FTZ and DAZ.
fn all_settings() -> Vec<Setting> {
    let mut v = Vec::new();
    for (rc, rc_name) in ROUNDING {
        for (flags, flag_name) in [
            (0, ""),
            (FTZ, "+FTZ"),
            (DAZ, "+DAZ"),
            (FTZ | DAZ, "+FTZ+DAZ"),
        ] {
            let name: &'static str = format!("RC={rc_name}{flag_name}").leak();
            v.push(Setting {
                csr: MASKS | rc | flags,
                name,
            });
        }
    }
    v
}

/// The SIMD backends this CPU has (Scalar is the reference).
fn simd_backends(test: &str) -> Vec<Backend> {
    backends(test)
        .into_iter()
        .filter(|&b| b != Backend::Scalar)
        .collect()
}

/// Converts `src` on backend `b` with `opts` under MXCSR `s`, and compares with `expected`.
fn check<S: ConvertTo<D> + bytemuck::Pod, D: Element + bytemuck::Pod>(
    report: &mut Report,
    (b, s, opts): (Backend, Setting, Options),
    src: &[S],
    expected: &[D],
    out: &mut [D],
    what: impl Fn() -> String,
) {
    assert_eq!(src.len(), out.len());
    let mut ok = true;
    with_mxcsr(s.csr, || {
        ok = vcvt::convert_slice_on(b, src, out, opts).is_ok();
    });
    assert!(ok, "{b} is available, and the lengths match");
    report.compare(
        || format!("{} on {b} under {}", what(), s.name),
        expected,
        out,
        |k| common::to_u64(&src[k]),
    );
}

/// The f64 inputs: the f32 sample as f64 and its two f64 neighbours, and random f64.
fn f64_inputs(sample: &[f32]) -> Vec<f64> {
    let mut v = Vec::with_capacity(sample.len() * 3 + (1 << 16));
    for &x in sample {
        let d = f64::from(x);
        v.push(d);
        if d.is_finite() {
            v.push(d.next_up());
            v.push(d.next_down());
        }
    }
    let mut rng = Rng::new(0x3C5A_0001);
    v.extend((0..1 << 16).map(|_| f64::from_bits(rng.next_u64())));
    v
}

fn narrow_sampled<T: Narrow>(test: &str, report: &mut Report, backends: &[Backend])
where
    f32: ConvertTo<T>,
    f64: ConvertTo<T>,
{
    let sample = common::stratified_f32_sample(T::oracle(), 0x3C5A_0000 + u64::from(T::DEF.bits()));
    let wide = f64_inputs(&sample);
    for mode in MODES {
        let opts = Options::new().overflow(mode);
        let mut want32 = vec![T::zeroed(); sample.len()];
        vcvt::convert_slice_on(Backend::Scalar, &sample, &mut want32, opts).unwrap();
        let mut want64 = vec![T::zeroed(); wide.len()];
        vcvt::convert_slice_on(Backend::Scalar, &wide, &mut want64, opts).unwrap();
        let mut out32 = want32.clone();
        let mut out64 = want64.clone();
        for &b in backends {
            for s in all_settings() {
                let name = T::DEF.name;
                check(report, (b, s, opts), &sample, &want32, &mut out32, || {
                    format!("{test}: f32->{name}, {mode:?}")
                });
                check(report, (b, s, opts), &wide, &want64, &mut out64, || {
                    format!("{test}: f64->{name}, {mode:?}")
                });
            }
        }
    }
}

fn widen_all<T: Narrow + ConvertTo<f32> + ConvertTo<f64>>(report: &mut Report, b: &[Backend]) {
    let codes: Vec<T> = (0..T::DEF.codes()).map(T::from_code).collect();
    let mut want32 = vec![0f32; codes.len()];
    let mut want64 = vec![0f64; codes.len()];
    vcvt::convert_slice_on(Backend::Scalar, &codes, &mut want32, Options::new()).unwrap();
    vcvt::convert_slice_on(Backend::Scalar, &codes, &mut want64, Options::new()).unwrap();
    let (mut out32, mut out64) = (want32.clone(), want64.clone());
    let name = T::DEF.name;
    for &backend in b {
        for s in all_settings() {
            let opts = Options::new();
            check(
                report,
                (backend, s, opts),
                &codes,
                &want32,
                &mut out32,
                || format!("{name}->f32"),
            );
            check(
                report,
                (backend, s, opts),
                &codes,
                &want64,
                &mut out64,
                || format!("{name}->f64"),
            );
        }
    }
}

#[test]
fn mxcsr_every_pair_sampled() {
    let test = "mxcsr_every_pair_sampled";
    let b = simd_backends(test);
    if b.is_empty() {
        println!("SKIPPED: {test}: no SIMD backend on this CPU");
        return;
    }
    let mut report = Report::default();
    narrow_sampled::<F16>(test, &mut report, &b);
    narrow_sampled::<BF16>(test, &mut report, &b);
    narrow_sampled::<F8E4M3>(test, &mut report, &b);
    narrow_sampled::<F8E5M2>(test, &mut report, &b);
    widen_all::<F16>(&mut report, &b);
    widen_all::<BF16>(&mut report, &b);
    widen_all::<F8E4M3>(&mut report, &b);
    widen_all::<F8E5M2>(&mut report, &b);
    // The formats that run the Scalar kernel on every backend today: integer code, but the
    // contract promises MXCSR independence for every pair, so it is checked for them too.
    narrow_sampled::<F8E4M3FNUZ>(test, &mut report, &b);
    narrow_sampled::<F8E5M2FNUZ>(test, &mut report, &b);
    narrow_sampled::<F6E2M3>(test, &mut report, &b);
    narrow_sampled::<F6E3M2>(test, &mut report, &b);
    narrow_sampled::<F4E2M1>(test, &mut report, &b);
    narrow_sampled::<F8E8M0>(test, &mut report, &b);
    narrow_sampled::<F8E3M4>(test, &mut report, &b);
    narrow_sampled::<F8E4M3IEEE>(test, &mut report, &b);
    narrow_sampled::<F8E4M3B11FNUZ>(test, &mut report, &b);
    narrow_sampled::<F8E5M3FNU>(test, &mut report, &b);
    widen_all::<F8E4M3FNUZ>(&mut report, &b);
    widen_all::<F8E5M2FNUZ>(&mut report, &b);
    widen_all::<F6E2M3>(&mut report, &b);
    widen_all::<F6E3M2>(&mut report, &b);
    widen_all::<F4E2M1>(&mut report, &b);
    widen_all::<F8E8M0>(&mut report, &b);
    widen_all::<F8E3M4>(&mut report, &b);
    widen_all::<F8E4M3IEEE>(&mut report, &b);
    widen_all::<F8E4M3B11FNUZ>(&mut report, &b);
    widen_all::<F8E5M3FNU>(&mut report, &b);
    report.finish(
        test,
        &format!(
            "40 pairs x 16 MXCSR settings (f32 sample, f64 sample and neighbours, every code) on [{}] against Scalar",
            names(&b)
        ),
    );
}

/// Every bit pattern of `S` converted to `D` (a narrow -> narrow pair), both overflow
/// policies, under all 16 settings, against Scalar under the default MXCSR.
fn narrow_pair_all<S: Narrow + ConvertTo<D>, D: Narrow>(report: &mut Report, b: &[Backend]) {
    let n = 1usize << (8 * size_of::<S>());
    let src: Vec<S> = (0..n)
        .map(|i| bytemuck::pod_read_unaligned(&(i as u16).to_le_bytes()[..size_of::<S>()]))
        .collect();
    let mut want = vec![D::zeroed(); n];
    let mut out = want.clone();
    for mode in MODES {
        let opts = Options::new().overflow(mode);
        vcvt::convert_slice_on(Backend::Scalar, &src, &mut want, opts).unwrap();
        for &backend in b {
            for s in all_settings() {
                check(report, (backend, s, opts), &src, &want, &mut out, || {
                    format!("{}->{}, {mode:?}", S::DEF.name, D::DEF.name)
                });
            }
        }
    }
}

#[test]
fn mxcsr_narrow_pairs_every_code() {
    let test = "mxcsr_narrow_pairs_every_code";
    let b = simd_backends(test);
    if b.is_empty() {
        println!("SKIPPED: {test}: no SIMD backend on this CPU");
        return;
    }
    let mut report = Report::default();
    let r = &mut report;
    narrow_pair_all::<F16, BF16>(r, &b);
    narrow_pair_all::<BF16, F16>(r, &b);
    macro_rules! hubs {
        ($($t:ty),*) => {$(
            narrow_pair_all::<$t, F16>(r, &b);
            narrow_pair_all::<$t, BF16>(r, &b);
            narrow_pair_all::<F16, $t>(r, &b);
            narrow_pair_all::<BF16, $t>(r, &b);
        )*};
    }
    hubs!(
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
    report.finish(
        test,
        &format!(
            "50 narrow -> narrow pairs, every source pattern x 2 modes x 16 MXCSR settings on [{}] against Scalar",
            names(&b)
        ),
    );
}

/// f32 -> `T` at every length `0..=257` and destination offset `0..8`, the destination
/// between canary bytes (two patterns), on every SIMD backend under `settings`.
fn every_length<T: Narrow>(test: &str, report: &mut Report, b: &[Backend], settings: &[Setting])
where
    f32: ConvertTo<T>,
{
    const GUARD: usize = 64;
    // The sample runs in order of magnitude: shuffle it, so that every stretch mixes
    // magnitudes around every rounding boundary of the format.
    let mut sample =
        common::stratified_f32_sample(T::oracle(), 0x3C5A_2000 + u64::from(T::DEF.bits()));
    let mut rng = Rng::new(0x3C5A_2001);
    for i in (1..sample.len()).rev() {
        sample.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    let lengths: Vec<usize> = if common::sample_mode() {
        (0..=70).chain([127, 128, 129, 255, 256, 257]).collect()
    } else {
        (0..=257).collect()
    };
    let size = core::mem::size_of::<T>();
    for mode in MODES {
        let opts = Options::new().overflow(mode);
        for &len in &lengths {
            for off in 0..8 {
                // A different stretch of the sample for each case.
                let start = (len * 8 + off) * 61 % (sample.len() - len);
                let src = &sample[start..start + len];
                let mut want = vec![T::zeroed(); len];
                vcvt::convert_slice_on(Backend::Scalar, src, &mut want, opts).unwrap();
                for &backend in b {
                    for &setting in settings {
                        for canary in [0xA5u8, 0x5A] {
                            let mut buf = vec![canary; (GUARD + 8 + len) * size + GUARD];
                            let lo = (GUARD + off) * size;
                            let dst: &mut [T] =
                                bytemuck::cast_slice_mut(&mut buf[lo..lo + len * size]);
                            let name = T::DEF.name;
                            check(report, (backend, setting, opts), src, &want, dst, || {
                                format!("{test}: f32->{name}, {mode:?}, len {len}, offset {off}")
                            });
                            let outside = buf[..lo].iter().chain(&buf[lo + len * size..]);
                            let written = outside.filter(|&&x| x != canary).count();
                            if written != 0 {
                                report.fail(common::Mismatch {
                                    what: format!(
                                        "{test}: f32->{name} on {backend} under {}: {written} bytes written outside the destination (len {len}, offset {off})",
                                        setting.name
                                    ),
                                    input: 0,
                                    expected: u64::from(canary),
                                    got: 0,
                                });
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn mxcsr_f32_to_fp8_every_length() {
    let test = "mxcsr_f32_to_fp8_every_length";
    let b = simd_backends(test);
    if b.is_empty() {
        println!("SKIPPED: {test}: no SIMD backend on this CPU");
        return;
    }
    let settings = [
        Setting {
            csr: MASKS | (3 << 13),
            name: "RC=toward zero",
        },
        Setting {
            csr: MASKS | FTZ | DAZ,
            name: "RC=nearest+FTZ+DAZ",
        },
    ];
    let mut report = Report::default();
    every_length::<F8E4M3>(test, &mut report, &b, &settings);
    every_length::<F8E5M2>(test, &mut report, &b, &settings);
    report.finish(
        test,
        &format!(
            "f32 -> F8E4M3/F8E5M2, every length and offset, canaries, 2 MXCSR settings on [{}] against Scalar",
            names(&b)
        ),
    );
}

/// The current MXCSR (read inside [`with_mxcsr`]'s closure).
fn read_mxcsr() -> u32 {
    let mut csr = 0u32;
    // SAFETY: STMXCSR writes the 4 bytes of `csr`, a live local, and nothing else.
    unsafe { asm!("stmxcsr [{p}]", p = in(reg) &raw mut csr, options(nostack)) };
    csr
}

/// A kernel may change MXCSR for its own work (the AVX2 instantiation of the generic
/// kernels loads round to nearest when a call needs it) but must give the caller's control
/// bits back: after every call, rounding control, FTZ, DAZ and the masks are what the caller
/// set, under every setting, on every backend, for pairs that take that path (f64 sources,
/// one-pass narrow -> narrow, round trips) and one that does not.
#[test]
fn mxcsr_control_bits_survive_every_call() {
    use vcvt::{F4E2M1, F4E2M1x2, F6E2M3};
    let mut checked = 0;
    for b in backends("mxcsr_control_bits_survive_every_call") {
        for s in all_settings() {
            let mut after = [0u32; 5];
            with_mxcsr(s.csr, || {
                let src32 = [
                    1.5f32,
                    -3.0e-3,
                    7.0,
                    f32::NAN,
                    448.0,
                    1.0e-9,
                    -0.0,
                    2.0,
                    3.5,
                ];
                let src64 = src32.map(f64::from);
                let h = src32.map(F16::from_f32);
                let mut e = [F8E4M3FNUZ::ZERO; 9];
                let mut p = [F4E2M1x2::ZERO; 5];
                let mut f6 = [F6E2M3::ZERO; 9];
                let mut rt = src32;
                let _ = vcvt::convert_slice_on(b, &h, &mut e, Options::new());
                after[0] = read_mxcsr();
                let _ = vcvt::convert_slice_on(b, &src64, &mut f6, Options::new());
                after[1] = read_mxcsr();
                let _ = vcvt::convert_slice_on(b, &h, &mut p, Options::new());
                after[2] = read_mxcsr();
                let _ = vcvt::round_trip_on::<F4E2M1, f32>(b, &mut rt, Options::new());
                after[3] = read_mxcsr();
                let _ = vcvt::convert_slice_on(b, &src32, &mut e, Options::new());
                after[4] = read_mxcsr();
            });
            for (i, a) in after.into_iter().enumerate() {
                checked += 1;
                // Bits 0-5 are the sticky exception flags, which arithmetic may set.
                assert_eq!(
                    a & !0x3F,
                    s.csr,
                    "{b} under {}: call {i} left MXCSR {a:#x}",
                    s.name
                );
            }
        }
    }
    assert!(checked > 0);
}
