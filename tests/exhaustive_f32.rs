//! Every `f32` bit pattern (all 2^32) narrowed to each format under both overflow policies,
//! on every available backend, compared with the independent oracle of `common`.
//!
//! The work goes in chunks of 2^16 consecutive bit patterns. Within a chunk the magnitudes
//! are monotonic (a chunk never straddles the sign bit), so the oracle walks its midpoint
//! list with a pointer instead of searching it; it runs once per chunk and format and gives
//! the expected codes of both policies, which are then compared with each backend's output.
//! Every SIMD backend converts each chunk twice: in one call (its main loop) and in calls of
//! 63 elements (its remainder code), since a kernel may use different instructions for
//! the two (except `portable`, whose remainder is the compiler's scalar epilogue of the same
//! lane functions; tests/tails.rs runs it at every length). On x86-64 every SIMD backend but
//! `portable` also converts each chunk in one call under the two most hostile MXCSR settings
//! (FTZ + DAZ with rounding up, and with rounding down), compared with the same oracle
//! answers: results must not depend on MXCSR (`tests/mxcsr.rs` runs all 16 settings on
//! samples). One test per format, each split over two threads.
//!
//! Under `VCVT_SWEEP=sample` (emulation, Miri) the sweep runs the stratified sample of
//! [`common::stratified_f32_sample`] instead: every sign and exponent, and the mantissas next
//! to every rounding boundary of the format plus random ones.
//!
//! A backend that has no SIMD kernel for a pair runs the Scalar kernel for it
//! ([`Backend::is_simd`]), and an AVX-512 tier runs the AVX2 kernel of a pair it has no
//! kernel of its own for; sweeping the same kernel 2^32 times per backend would prove
//! nothing new, so such a backend gets the stratified sample (which still proves that its
//! table routes the pair correctly), and the test prints which backends were swept fully.

mod common;

use common::{MODES, Narrow, backends, expect_f32_block, names};
use vcvt::{
    BF16, Backend, ConvertTo, F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FNUZ,
    F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, Options,
};

/// Length of the second pass's calls: one less than the AVX-512 kernels' 64-element block,
/// so each call runs only their masked remainder steps; on AVX2 (16- or 32-element steps)
/// it ends with the 8-element and overlapping last steps. Not a multiple of any vector.
const TAIL: usize = 63;

/// Per-thread buffers: expected codes under each policy, and a backend's output.
struct Scratch<T> {
    sat: Vec<T>,
    nonsat: Vec<T>,
    out: Vec<T>,
}

impl<T> Default for Scratch<T> {
    fn default() -> Self {
        Scratch {
            sat: Vec::new(),
            nonsat: Vec::new(),
            out: Vec::new(),
        }
    }
}

fn sweep<T: Narrow>(test: &str)
where
    f32: ConvertTo<T>,
{
    let all = backends(test);
    // Scalar, and every backend with a SIMD kernel for the pair that no backend before it
    // in the list runs too (an AVX-512 tier may run the AVX2 kernel): all 2^32 inputs.
    let mut full: Vec<Backend> = Vec::new();
    for &b in &all {
        let new_kernel = !full
            .iter()
            .any(|f| f.kernel_id::<f32, T>() == b.kernel_id::<f32, T>());
        if b == Backend::Scalar || (b.is_simd::<f32, T>() && new_kernel) {
            full.push(b);
        }
    }
    // Backends that route the pair to the Scalar kernel, or to a kernel swept above on
    // another backend: the stratified sample.
    let routed: Vec<Backend> = all.iter().copied().filter(|b| !full.contains(b)).collect();
    let seed = 0x5EED_0000 + u64::from(T::DEF.bits());
    let (mut report, inputs) =
        common::sweep_f32(T::oracle(), seed, |src, s: &mut Scratch<T>, report| {
            check_chunk(src, s, report, &full);
        });
    let mut coverage = format!(
        "f32->{}, {inputs} x 2 modes on [{}]",
        T::DEF.name,
        names(&full)
    );
    #[cfg(target_arch = "x86_64")]
    {
        let hostile: Vec<Backend> = full
            .iter()
            .copied()
            .filter(|&b| b != Backend::Scalar && b.name() != "portable")
            .collect();
        if !hostile.is_empty() {
            let settings = common::mxcsr::hostile_settings();
            coverage += &format!(
                "; [{}] also under MXCSR {} and {}",
                names(&hostile),
                settings[0].name,
                settings[1].name
            );
        }
    }
    if !routed.is_empty() {
        let sample = common::stratified_f32_sample(T::oracle(), seed);
        let mut s = Scratch::default();
        let mut r = common::Report::default();
        for chunk in sample.chunks(common::SWEEP_CHUNK) {
            check_chunk(chunk, &mut s, &mut r, &routed);
        }
        report.merge(r);
        coverage += &format!(
            "; stratified sample of {} inputs x 2 modes on [{}] (the Scalar kernel, or a kernel swept above)",
            sample.len(),
            names(&routed)
        );
    }
    report.finish(test, &coverage);
}

/// Converts one chunk on each backend, under both policies, in one call and in calls of
/// [`TAIL`] elements, and compares with the oracle.
fn check_chunk<T: Narrow>(
    src: &[f32],
    s: &mut Scratch<T>,
    report: &mut common::Report,
    backends: &[Backend],
) where
    f32: ConvertTo<T>,
{
    let n = src.len();
    for v in [&mut s.sat, &mut s.nonsat, &mut s.out] {
        v.resize(n, T::zeroed());
    }
    // The oracle runs once per chunk, for both policies.
    expect_f32_block(src, &mut s.sat, &mut s.nonsat);
    for &b in backends {
        for (mode, expected) in MODES.into_iter().zip([&s.sat, &s.nonsat]) {
            let opts = Options::new().overflow(mode);
            // The whole chunk in one call: every element goes through a kernel's
            // unrolled main loop (chunks are multiples of 64 elements).
            vcvt::convert_slice_on(b, src, &mut s.out, opts).unwrap();
            report.compare(
                || format!("f32->{} on {b}, {mode:?}", T::DEF.name),
                expected,
                &s.out,
                |k| u64::from(src[k].to_bits()),
            );
            // Scalar has no remainder code; `portable`'s is the compiler's scalar epilogue of
            // the same lane functions as its main loop, which tests/tails.rs runs at every
            // length and offset (a second 2^32 pass in short calls would double its share of
            // this test's time for that).
            if b == Backend::Scalar || b.name() == "portable" {
                continue;
            }
            #[cfg(target_arch = "x86_64")]
            hostile_mxcsr(b, src, expected, &mut s.out, report, mode);
            // Again in calls of TAIL elements, shorter than any unrolled step, so
            // that every element also goes through the kernels' remainder code.
            for (src, out) in src.chunks(TAIL).zip(s.out.chunks_mut(TAIL)) {
                vcvt::convert_slice_on(b, src, out, opts).unwrap();
            }
            report.compare(
                || {
                    format!(
                        "f32->{} on {b}, {mode:?}, {TAIL}-element calls",
                        T::DEF.name
                    )
                },
                expected,
                &s.out,
                |k| u64::from(src[k].to_bits()),
            );
        }
    }
}

/// The whole chunk in one call on SIMD backend `b` under each of the two most hostile MXCSR
/// settings (FTZ + DAZ with rounding up, and with rounding down), compared with the oracle:
/// results must not depend on MXCSR (tests/mxcsr.rs runs all 16 settings on samples). The
/// `portable` backend is left to those samples: its few float operations are exact on the
/// values whose results are kept (src/arch/portable.rs), so no setting can change them.
#[cfg(target_arch = "x86_64")]
fn hostile_mxcsr<T: Narrow>(
    b: Backend,
    src: &[f32],
    expected: &[T],
    out: &mut [T],
    report: &mut common::Report,
    mode: vcvt::Overflow,
) where
    f32: ConvertTo<T>,
{
    let opts = Options::new().overflow(mode);
    for setting in &common::mxcsr::hostile_settings()[..2] {
        let mut ok = false;
        common::mxcsr::with_mxcsr(setting.csr, || {
            ok = vcvt::convert_slice_on(b, src, out, opts).is_ok();
        });
        assert!(ok, "{b} is available, and the lengths match");
        report.compare(
            || {
                format!(
                    "f32->{} on {b}, {mode:?}, under MXCSR {}",
                    T::DEF.name,
                    setting.name
                )
            },
            expected,
            out,
            |k| u64::from(src[k].to_bits()),
        );
    }
}

#[test]
fn exhaustive_f32_to_f16() {
    sweep::<F16>("exhaustive_f32_to_f16");
}

#[test]
fn exhaustive_f32_to_bf16() {
    sweep::<BF16>("exhaustive_f32_to_bf16");
}

#[test]
fn exhaustive_f32_to_f8e4m3() {
    sweep::<F8E4M3>("exhaustive_f32_to_f8e4m3");
}

#[test]
fn exhaustive_f32_to_f8e5m2() {
    sweep::<F8E5M2>("exhaustive_f32_to_f8e5m2");
}

#[test]
fn exhaustive_f32_to_f8e4m3fnuz() {
    sweep::<F8E4M3FNUZ>("exhaustive_f32_to_f8e4m3fnuz");
}

#[test]
fn exhaustive_f32_to_f8e5m2fnuz() {
    sweep::<F8E5M2FNUZ>("exhaustive_f32_to_f8e5m2fnuz");
}

#[test]
fn exhaustive_f32_to_f6e2m3() {
    sweep::<F6E2M3>("exhaustive_f32_to_f6e2m3");
}

#[test]
fn exhaustive_f32_to_f6e3m2() {
    sweep::<F6E3M2>("exhaustive_f32_to_f6e3m2");
}

#[test]
fn exhaustive_f32_to_f4e2m1() {
    sweep::<F4E2M1>("exhaustive_f32_to_f4e2m1");
}

#[test]
fn exhaustive_f32_to_f8e8m0() {
    sweep::<F8E8M0>("exhaustive_f32_to_f8e8m0");
}

#[test]
fn exhaustive_f32_to_f8e3m4() {
    sweep::<F8E3M4>("exhaustive_f32_to_f8e3m4");
}

#[test]
fn exhaustive_f32_to_f8e4m3ieee() {
    sweep::<F8E4M3IEEE>("exhaustive_f32_to_f8e4m3ieee");
}

#[test]
fn exhaustive_f32_to_f8e4m3b11fnuz() {
    sweep::<F8E4M3B11FNUZ>("exhaustive_f32_to_f8e4m3b11fnuz");
}

#[test]
fn exhaustive_f32_to_f8e5m3fnu() {
    sweep::<F8E5M3FNU>("exhaustive_f32_to_f8e5m3fnu");
}

/// The interval-filling oracle of the sweeps (`expect_f32_run`) gives exactly the answers of
/// the element-by-element one, on chunks around every sign, zero, Inf/NaN and random places.
#[test]
fn oracle_runs_equal_oracle_elements() {
    fn check<T: Narrow>(report: &mut common::Report) {
        let mut rng = common::Rng::new(0x0A0A_0000 + u64::from(T::DEF.bits()));
        let mut starts: Vec<u32> = vec![0, 0x8000_0000, 0x7F80_0000 - 4096, 0xFF80_0000 - 4096];
        starts.extend((0..40).map(|_| rng.next_u64() as u32 & !0xFFF));
        for &b in &starts {
            let n = 8192usize.min((0x1_0000_0000u64 - u64::from(b)) as usize);
            // Stay within one sign.
            let n = if b < 0x8000_0000 {
                n.min((0x8000_0000 - b) as usize)
            } else {
                n
            };
            let src: Vec<f32> = (0..n as u32).map(|j| f32::from_bits(b + j)).collect();
            let (mut s1, mut n1) = (vec![T::zeroed(); n], vec![T::zeroed(); n]);
            let (mut s2, mut n2) = (vec![T::zeroed(); n], vec![T::zeroed(); n]);
            common::expect_f32_run(b, &mut s1, &mut n1);
            common::expect_f32_each(&src, &mut s2, &mut n2);
            let input = |k: usize| u64::from(src[k].to_bits());
            report.compare(
                || format!("{} runs, Saturate", T::DEF.name),
                &s2,
                &s1,
                input,
            );
            report.compare(
                || format!("{} runs, NonSaturating", T::DEF.name),
                &n2,
                &n1,
                input,
            );
        }
    }
    let mut report = common::Report::default();
    check::<F16>(&mut report);
    check::<BF16>(&mut report);
    check::<F8E4M3>(&mut report);
    check::<F8E5M2>(&mut report);
    check::<F8E4M3FNUZ>(&mut report);
    check::<F8E5M2FNUZ>(&mut report);
    check::<F6E2M3>(&mut report);
    check::<F6E3M2>(&mut report);
    check::<F4E2M1>(&mut report);
    check::<F8E8M0>(&mut report);
    check::<F8E3M4>(&mut report);
    check::<F8E4M3IEEE>(&mut report);
    check::<F8E4M3B11FNUZ>(&mut report);
    check::<F8E5M3FNU>(&mut report);
    report.finish(
        "oracle_runs_equal_oracle_elements",
        "44 chunks per format, interval filling vs element by element",
    );
}
