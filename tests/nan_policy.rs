//! The NaN policies ([`NanPolicy`]) on every format and every backend, against the
//! independent oracle of `common`:
//!
//! * every `f32` NaN bit pattern (2^24: both signs, every payload) under each policy and each
//!   overflow mode, in one call per chunk and in calls of 63 elements (SIMD remainders);
//! * `f64` NaNs: every payload position and random payloads;
//! * non-NaN inputs under the non-default policies: the stratified sample, which must give
//!   exactly the oracle's (policy-independent) results;
//! * NaNs mixed among ordinary values, so that a backend that patches NaN elements after a
//!   SIMD pass must leave their neighbours alone;
//! * the element functions `from_f32_opts`/`from_f64_opts`.
//!
//! Under `VCVT_SWEEP=sample` the 2^24 NaN patterns are sampled (every 251st payload plus the
//! extremes), and so is the stratified sample of ordinary inputs (every 8th).

mod common;

use common::{MODES, NAN_POLICIES, Narrow, Report, Rng, backends, names, sample_mode};
use vcvt::{
    BF16, ConvertTo, F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FNUZ, F8E4M3IEEE,
    F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, Options,
};

/// Every f32 NaN bit pattern (or a sample of them under `VCVT_SWEEP=sample`).
fn f32_nans() -> Vec<f32> {
    let step = if sample_mode() { 251 } else { 1 };
    let mut v = Vec::new();
    for sign in [0u32, 0x8000_0000] {
        let mut frac = 1u32;
        while frac < 0x0080_0000 {
            v.push(f32::from_bits(sign | 0x7F80_0000 | frac));
            frac += step;
        }
        v.push(f32::from_bits(sign | 0x7FFF_FFFF));
        v.push(f32::from_bits(sign | 0x7FC0_0000));
        v.push(f32::from_bits(sign | 0x7FBF_FFFF));
    }
    v
}

/// f64 NaNs: each single payload bit, both quiet and signalling, and random payloads.
fn f64_nans() -> Vec<f64> {
    let mut v = Vec::new();
    let mut rng = Rng::new(0x4A4E_0064);
    for sign in [0u64, 1 << 63] {
        for bit in 0..52 {
            v.push(f64::from_bits(sign | 0x7FF0_0000_0000_0000 | (1 << bit)));
            v.push(f64::from_bits(sign | 0x7FF8_0000_0000_0000 | (1 << bit)));
        }
        for _ in 0..2000 {
            let frac = (rng.next_u64() & 0x000F_FFFF_FFFF_FFFF).max(1);
            v.push(f64::from_bits(sign | 0x7FF0_0000_0000_0000 | frac));
        }
    }
    v
}

fn check<T: Narrow>(test: &str)
where
    f32: ConvertTo<T>,
    f64: ConvertTo<T>,
{
    let backends = backends(test);
    let oracle = T::oracle();
    let mut report = Report::default();
    let nans = f32_nans();
    let nans64 = f64_nans();
    let mut ordinary =
        common::stratified_f32_sample(oracle, 0x4A4E_0000 + u64::from(T::DEF.bits()));
    if sample_mode() {
        // Under emulation, every 8th of the sample (the exhaustive test covers the rest).
        ordinary = ordinary.into_iter().step_by(8).collect();
    }
    // Ordinary values with a NaN every 7th element.
    let mut rng = Rng::new(0x4A4E_1000);
    let mixed: Vec<f32> = (0..4099)
        .map(|i| {
            if i % 7 == 3 {
                nans[rng.below(nans.len() as u64) as usize]
            } else {
                ordinary[rng.below(ordinary.len() as u64) as usize]
            }
        })
        .collect();

    let mut out: Vec<T> = Vec::new();
    let mut want: Vec<T> = Vec::new();
    for nan in NAN_POLICIES {
        for mode in MODES {
            let opts = Options::new().overflow(mode).nan(nan);
            for (label, src) in [("NaN", &nans), ("ordinary", &ordinary), ("mixed", &mixed)] {
                want.clear();
                want.extend(
                    src.iter()
                        .map(|x| T::from_code(oracle.narrow_f32_nan(x.to_bits(), mode, nan))),
                );
                out.resize(src.len(), T::zeroed());
                for &b in &backends {
                    for calls in [src.len(), 63] {
                        for (s, o) in src.chunks(calls).zip(out.chunks_mut(calls)) {
                            vcvt::convert_slice_on(b, s, o, opts).unwrap();
                        }
                        report.compare(
                            || {
                                format!(
                                    "f32->{} {label} on {b}, {mode:?}, {nan:?}, {calls}-element calls",
                                    T::DEF.name
                                )
                            },
                            &want,
                            &out,
                            |k| u64::from(src[k].to_bits()),
                        );
                    }
                }
                // The element function with the same options.
                let elem: Vec<T> = src.iter().map(|&x| from_f32_opts::<T>(x, opts)).collect();
                report.compare(
                    || format!("{}::from_f32_opts {label}, {mode:?}, {nan:?}", T::DEF.name),
                    &want,
                    &elem,
                    |k| u64::from(src[k].to_bits()),
                );
            }
            // f64 NaNs.
            want.clear();
            want.extend(
                nans64
                    .iter()
                    .map(|x| T::from_code(oracle.narrow_f64_nan(x.to_bits(), mode, nan))),
            );
            out.resize(nans64.len(), T::zeroed());
            for &b in &backends {
                vcvt::convert_slice_on(b, &nans64, &mut out, opts).unwrap();
                report.compare(
                    || format!("f64->{} NaN on {b}, {mode:?}, {nan:?}", T::DEF.name),
                    &want,
                    &out,
                    |k| nans64[k].to_bits(),
                );
            }
            let elem: Vec<T> = nans64
                .iter()
                .map(|&x| from_f64_opts::<T>(x, opts))
                .collect();
            report.compare(
                || format!("{}::from_f64_opts NaN, {mode:?}, {nan:?}", T::DEF.name),
                &want,
                &elem,
                |k| nans64[k].to_bits(),
            );
        }
    }
    report.finish(
        test,
        &format!(
            "{}: {} f32 NaNs, {} f64 NaNs, {} ordinary and {} mixed inputs x 3 NaN policies x 2 modes on [{}]",
            T::DEF.name,
            nans.len(),
            nans64.len(),
            ordinary.len(),
            mixed.len(),
            names(&backends)
        ),
    );
}

/// The type's own element function `T::from_f32_opts` (an inherent method of each type,
/// reached through `Narrow`).
fn from_f32_opts<T: Narrow>(x: f32, o: Options) -> T {
    T::from_code(T::code_from_f32_opts(x, o))
}

/// The type's own `T::from_f64_opts`.
fn from_f64_opts<T: Narrow>(x: f64, o: Options) -> T {
    T::from_code(T::code_from_f64_opts(x, o))
}

#[test]
fn nan_policy_f16() {
    check::<F16>("nan_policy_f16");
}
#[test]
fn nan_policy_bf16() {
    check::<BF16>("nan_policy_bf16");
}
#[test]
fn nan_policy_f8e4m3() {
    check::<F8E4M3>("nan_policy_f8e4m3");
}
#[test]
fn nan_policy_f8e5m2() {
    check::<F8E5M2>("nan_policy_f8e5m2");
}
#[test]
fn nan_policy_f8e4m3fnuz() {
    check::<F8E4M3FNUZ>("nan_policy_f8e4m3fnuz");
}
#[test]
fn nan_policy_f8e5m2fnuz() {
    check::<F8E5M2FNUZ>("nan_policy_f8e5m2fnuz");
}
#[test]
fn nan_policy_f6e2m3() {
    check::<F6E2M3>("nan_policy_f6e2m3");
}
#[test]
fn nan_policy_f6e3m2() {
    check::<F6E3M2>("nan_policy_f6e3m2");
}
#[test]
fn nan_policy_f4e2m1() {
    check::<F4E2M1>("nan_policy_f4e2m1");
}
#[test]
fn nan_policy_f8e8m0() {
    check::<F8E8M0>("nan_policy_f8e8m0");
}

#[test]
fn nan_policy_f8e3m4() {
    check::<F8E3M4>("nan_policy_f8e3m4");
}

#[test]
fn nan_policy_f8e4m3ieee() {
    check::<F8E4M3IEEE>("nan_policy_f8e4m3ieee");
}

#[test]
fn nan_policy_f8e4m3b11fnuz() {
    check::<F8E4M3B11FNUZ>("nan_policy_f8e4m3b11fnuz");
}

#[test]
fn nan_policy_f8e5m3fnu() {
    check::<F8E5M3FNU>("nan_policy_f8e5m3fnu");
}
