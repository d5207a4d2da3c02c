//! `vcvt::vector`, the register-level converters, against the slice API's Scalar backend
//! (the specification): every function this CPU can run, both overflow policies, on
//!
//! - special values: ±0, ±Inf, NaNs with payloads (quiet and signalling), f32 subnormals,
//!   `f32::MAX`, and for the target format every code's value, its f32 neighbours, every
//!   midpoint between adjacent codes (the rounding ties) and its neighbours, and the
//!   overflow threshold (MAX plus half an ulp) and its neighbours, with both signs;
//! - random f32 bit patterns and random values in the format's range (a local xorshift);
//! - for widening, every code (all 256 bytes of the fp8 formats, all 65536 words of F16 and
//!   BF16).
//!
//! On x86-64 the narrowing tests run again under non-default MXCSR settings (every rounding
//! mode with FTZ and DAZ, and FTZ or DAZ alone), and on aarch64 under non-default FPCR
//! settings (rounding modes, FZ, FZ16, DN, AHP), against the same Scalar reference: the
//! functions promise the same bits whatever the control register holds.
//!
//! Functions the CPU cannot run are skipped with a `SKIPPED:` line (the AVX-512 ones on a
//! machine without AVX-512). The register functions are called from `#[target_feature]`
//! functions, as in real use, so that they are inlined there. With the `pulp` feature the
//! safe token-gated wrappers are checked the same way.

#![allow(clippy::missing_safety_doc)]

use bytemuck::Pod;
use vcvt::{BF16, Backend, ConvertTo, Element, F8E4M3, F8E5M2, F16, Options, Overflow};

const POLICIES: [Overflow; 2] = [Overflow::Saturate, Overflow::NonSaturating];

/// A register-level narrowing over a slice: `src.len()` is a multiple of the vector width,
/// and `dst` holds the codes' little-endian bytes.
type NarrowFn = fn(&[f32], &mut [u8], Overflow);
/// A register-level widening over a slice of code bytes into f32.
type WidenFn = fn(&[u8], &mut [f32]);

/// A small xorshift generator.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn next_u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
}

/// The Scalar backend's narrowing of `src` to `D`, as little-endian code bytes.
fn reference_narrow<D: Element + Pod>(src: &[f32], o: Overflow) -> Vec<u8>
where
    f32: ConvertTo<D>,
{
    let mut dst = vec![D::zeroed(); src.len()];
    vcvt::convert_slice_on(Backend::Scalar, src, &mut dst, Options::new().overflow(o))
        .expect("Scalar runs everywhere");
    bytemuck::cast_slice(&dst).to_vec()
}

/// The Scalar backend's widening of the codes in `bytes` (little-endian) to f32 bits.
fn reference_widen<D: Element + Pod + ConvertTo<f32>>(bytes: &[u8]) -> Vec<u32> {
    let src: Vec<D> = bytes
        .chunks_exact(size_of::<D>())
        .map(bytemuck::pod_read_unaligned)
        .collect();
    let mut dst = vec![0f32; src.len()];
    vcvt::convert_slice_on(Backend::Scalar, &src, &mut dst, Options::new())
        .expect("Scalar runs everywhere");
    dst.iter().map(|f| f.to_bits()).collect()
}

/// Every code of `D` widened by the Scalar backend, as f64 (NaN for NaN codes).
fn code_values<D: Element + Pod + ConvertTo<f32>>() -> Vec<f64> {
    let size = size_of::<D>();
    let n = 1usize << (8 * size);
    let bytes: Vec<u8> = (0..n)
        .flat_map(|c| (c as u64).to_le_bytes()[..size].to_vec())
        .collect();
    reference_widen::<D>(&bytes)
        .into_iter()
        .map(|b| f32::from_bits(b) as f64)
        .collect()
}

/// The special and boundary inputs for a narrowing to `D` (see the module docs), both signs.
fn special_inputs<D: Element + Pod + ConvertTo<f32>>() -> Vec<f32> {
    let mut pos: Vec<f32> = vec![
        0.0,
        f32::INFINITY,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x0040_0000),
        f32::from_bits(0x007F_FFFF),
        1.0e-40,
        1.0,
    ];
    let nans = [
        0x7FC0_0000u32,
        0x7F80_0001,
        0x7FA0_0000,
        0x7FBF_FFFF,
        0x7FFF_FFFF,
        0x7FC1_2345,
        0x7FD5_5555,
        0x7F80_2000,
        0x7F81_0000,
    ];
    pos.extend(nans.iter().map(|&b| f32::from_bits(b)));
    let values = code_values::<D>();
    let mut finite: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .collect();
    finite.sort_by(f64::total_cmp);
    finite.dedup();
    let push_around = |v: f64, pos: &mut Vec<f32>| {
        // The f32 nearest `v` and its neighbours; midpoints of the narrow formats are exact
        // in f32 (at most 12 significant bits).
        let f = v as f32;
        let b = f.to_bits();
        for d in [-2i64, -1, 0, 1, 2] {
            let nb = b as i64 + d;
            if (0..0x7F80_0000).contains(&nb) {
                pos.push(f32::from_bits(nb as u32));
            }
        }
    };
    for w in finite.windows(2) {
        push_around(w[0], &mut pos);
        push_around((w[0] + w[1]) / 2.0, &mut pos);
    }
    let max = finite[finite.len() - 1];
    let prev = finite[finite.len() - 2];
    push_around(max, &mut pos);
    // The overflow threshold: MAX plus half the spacing below it (values from there on
    // round above MAX).
    push_around(max + (max - prev) / 2.0, &mut pos);
    push_around(max * 2.0, &mut pos);
    let mut all = pos.clone();
    all.extend(pos.iter().map(|&f| -f));
    all
}

/// Random inputs: all-class bit patterns, and values spread over the format's range
/// (`emax` is the f32 exponent field of the format's largest binade).
fn random_inputs(seed: u64, n: usize, emin: i32, emax: i32) -> Vec<f32> {
    let mut rng = XorShift(seed);
    let mut v = Vec::with_capacity(2 * n);
    for _ in 0..n {
        v.push(f32::from_bits(rng.next_u32()));
    }
    let span = (emax - emin + 4) as u32;
    for _ in 0..n {
        let r = rng.next_u32();
        let e = (emin - 2 + (r % span) as i32).clamp(0, 255) as u32;
        let bits = (rng.next_u32() & 0x8000_0000) | (e << 23) | (rng.next_u32() & 0x007F_FFFF);
        v.push(f32::from_bits(bits));
    }
    v
}

/// Every input of a narrowing test for `D`.
fn narrow_inputs<D: Element + Pod + ConvertTo<f32>>(seed: u64) -> Vec<f32> {
    let values = code_values::<D>();
    let max = values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0f64, f64::max);
    let min_sub = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let e = |v: f64| (v as f32).to_bits() as i32 >> 23;
    let mut v = special_inputs::<D>();
    v.extend(random_inputs(seed, 20_000, e(min_sub) - 2, e(max) + 2));
    v
}

/// Runs `run` over `src` (padded with zeros to a multiple of `lanes`) and compares with the
/// Scalar backend; returns the number of mismatches (and prints the first few).
fn compare_narrow<D: Element + Pod>(
    what: &str,
    lanes: usize,
    src: &[f32],
    o: Overflow,
    run: NarrowFn,
) -> usize
where
    f32: ConvertTo<D>,
{
    let size = size_of::<D>();
    let mut padded = src.to_vec();
    padded.resize(src.len().next_multiple_of(lanes), 0.0);
    let expected = reference_narrow::<D>(&padded, o);
    let mut got = vec![0u8; expected.len()];
    run(&padded, &mut got, o);
    let mut bad = 0;
    for (i, x) in padded.iter().enumerate() {
        let (e, g) = (&expected[i * size..][..size], &got[i * size..][..size]);
        if e != g {
            if bad < 8 {
                eprintln!(
                    "{what} {o:?}: input {:#010x} ({x:e}): expected {e:02x?}, got {g:02x?}",
                    x.to_bits()
                );
            }
            bad += 1;
        }
    }
    bad
}

/// Checks a narrowing function to `D` on every input, under both policies.
fn check_narrow<D: Element + Pod + ConvertTo<f32>>(name: &str, lanes: usize, run: NarrowFn)
where
    f32: ConvertTo<D>,
{
    let src = narrow_inputs::<D>(0x5EED_0000 + lanes as u64);
    let mut bad = 0;
    for o in POLICIES {
        bad += compare_narrow::<D>(name, lanes, &src, o, run);
    }
    assert_eq!(
        bad, 0,
        "{name}: {bad} mismatches against the Scalar backend"
    );
}

/// Checks a widening function from `D` on every code.
fn check_widen<D: Element + Pod + ConvertTo<f32>>(name: &str, run: WidenFn) {
    let size = size_of::<D>();
    let n = 1usize << (8 * size);
    let bytes: Vec<u8> = (0..n)
        .flat_map(|c| (c as u64).to_le_bytes()[..size].to_vec())
        .collect();
    let expected = reference_widen::<D>(&bytes);
    let mut got = vec![0f32; n];
    run(&bytes, &mut got);
    let mut bad = 0;
    for (c, (e, g)) in expected.iter().zip(&got).enumerate() {
        if *e != g.to_bits() {
            if bad < 8 {
                eprintln!(
                    "{name}: code {c:#06x}: expected {e:#010x}, got {:#010x}",
                    g.to_bits()
                );
            }
            bad += 1;
        }
    }
    assert_eq!(
        bad, 0,
        "{name}: {bad} mismatches against the Scalar backend"
    );
}

/// Defines a slice loop around a register-level narrowing: `$lanes` f32 per step, loaded
/// with `$load`, `$bytes` code bytes per step stored with `$store`.
macro_rules! narrow_loop {
    ($name:ident, $feat:literal, $lanes:literal, $bytes:literal, $f:expr, $load:expr, $store:expr) => {
        #[target_feature(enable = $feat)]
        fn $name(src: &[f32], dst: &mut [u8], o: Overflow) {
            assert!(src.len() % $lanes == 0 && dst.len() == src.len() / $lanes * $bytes);
            for (s, d) in src.chunks_exact($lanes).zip(dst.chunks_exact_mut($bytes)) {
                // SAFETY: `s` holds `$lanes` f32 and `d` `$bytes` bytes, what the load reads
                // and the store writes (unaligned); the features are this function's.
                unsafe { $store(d.as_mut_ptr().cast(), $f($load(s.as_ptr().cast()), o)) };
            }
        }
    };
}

/// Defines a slice loop around a register-level widening: `$bytes` code bytes per step,
/// loaded with `$load`, `$lanes` f32 stored with `$store`.
macro_rules! widen_loop {
    ($name:ident, $feat:literal, $lanes:literal, $bytes:literal, $f:expr, $load:expr, $store:expr) => {
        #[target_feature(enable = $feat)]
        fn $name(src: &[u8], dst: &mut [f32]) {
            assert!(src.len() % $bytes == 0 && dst.len() == src.len() / $bytes * $lanes);
            for (s, d) in src.chunks_exact($bytes).zip(dst.chunks_exact_mut($lanes)) {
                // SAFETY: `s` holds `$bytes` bytes and `d` `$lanes` f32, what the load reads
                // and the store writes (unaligned); the features are this function's.
                unsafe { $store(d.as_mut_ptr().cast(), $f($load(s.as_ptr().cast()))) };
            }
        }
    };
}

/// One function's checks: `(name, lanes, narrowing or widening)`.
#[derive(Clone, Copy)]
#[allow(dead_code)] // Not every architecture uses every kind.
enum Case {
    NarrowF16(&'static str, usize, NarrowFn),
    NarrowBf16(&'static str, usize, NarrowFn),
    NarrowE4m3(&'static str, usize, NarrowFn),
    NarrowE5m2(&'static str, usize, NarrowFn),
    WidenF16(&'static str, WidenFn),
    WidenBf16(&'static str, WidenFn),
    WidenE4m3(&'static str, WidenFn),
    WidenE5m2(&'static str, WidenFn),
}

impl Case {
    fn run(self) {
        match self {
            Case::NarrowF16(n, l, f) => check_narrow::<F16>(n, l, f),
            Case::NarrowBf16(n, l, f) => check_narrow::<BF16>(n, l, f),
            Case::NarrowE4m3(n, l, f) => check_narrow::<F8E4M3>(n, l, f),
            Case::NarrowE5m2(n, l, f) => check_narrow::<F8E5M2>(n, l, f),
            Case::WidenF16(n, f) => check_widen::<F16>(n, f),
            Case::WidenBf16(n, f) => check_widen::<BF16>(n, f),
            Case::WidenE4m3(n, f) => check_widen::<F8E4M3>(n, f),
            Case::WidenE5m2(n, f) => check_widen::<F8E5M2>(n, f),
        }
    }

    /// The narrowing inputs and function, for the control-register tests.
    fn narrow_under(self, what: &str, under: &dyn Fn(&mut dyn FnMut())) {
        fn go<D: Element + Pod + ConvertTo<f32>>(
            what: &str,
            name: &str,
            lanes: usize,
            f: NarrowFn,
            under: &dyn Fn(&mut dyn FnMut()),
        ) where
            f32: ConvertTo<D>,
        {
            let src = narrow_inputs::<D>(0xC5_0000 + lanes as u64);
            let mut padded = src.clone();
            padded.resize(src.len().next_multiple_of(lanes), 0.0);
            for o in POLICIES {
                let expected = reference_narrow::<D>(&padded, o);
                let mut got = vec![0u8; expected.len()];
                // Only the register-level function runs under the setting.
                under(&mut || f(&padded, &mut got, o));
                let bad = expected.iter().zip(&got).filter(|(e, g)| e != g).count();
                assert_eq!(
                    bad, 0,
                    "{name} {o:?} under {what}: {bad} bytes differ from Scalar"
                );
            }
        }
        match self {
            Case::NarrowF16(n, l, f) => go::<F16>(what, n, l, f, under),
            Case::NarrowBf16(n, l, f) => go::<BF16>(what, n, l, f, under),
            Case::NarrowE4m3(n, l, f) => go::<F8E4M3>(what, n, l, f, under),
            Case::NarrowE5m2(n, l, f) => go::<F8E5M2>(what, n, l, f, under),
            _ => {}
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;
    use core::arch::x86_64::*;
    use vcvt::vector::{avx2, avx512};

    narrow_loop!(
        a2_f16,
        "avx2,fma,f16c",
        8,
        16,
        avx2::f32x8_to_f16,
        _mm256_loadu_ps,
        _mm_storeu_si128
    );
    narrow_loop!(
        a2_bf16,
        "avx2,fma,f16c",
        8,
        16,
        avx2::f32x8_to_bf16,
        _mm256_loadu_ps,
        _mm_storeu_si128
    );
    narrow_loop!(
        a2_e4m3,
        "avx2,fma,f16c",
        8,
        8,
        avx2::f32x8_to_e4m3,
        _mm256_loadu_ps,
        _mm_storel_epi64
    );
    narrow_loop!(
        a2_e5m2,
        "avx2,fma,f16c",
        8,
        8,
        avx2::f32x8_to_e5m2,
        _mm256_loadu_ps,
        _mm_storel_epi64
    );
    widen_loop!(
        a2_w_f16,
        "avx2,fma,f16c",
        8,
        16,
        avx2::f16x8_to_f32,
        _mm_loadu_si128,
        _mm256_storeu_ps
    );
    widen_loop!(
        a2_w_bf16,
        "avx2,fma,f16c",
        8,
        16,
        avx2::bf16x8_to_f32,
        _mm_loadu_si128,
        _mm256_storeu_ps
    );
    widen_loop!(
        a2_w_e4m3,
        "avx2,fma,f16c",
        8,
        8,
        avx2::e4m3x8_to_f32,
        _mm_loadl_epi64,
        _mm256_storeu_ps
    );
    widen_loop!(
        a2_w_e5m2,
        "avx2,fma,f16c",
        8,
        8,
        avx2::e5m2x8_to_f32,
        _mm_loadl_epi64,
        _mm256_storeu_ps
    );

    narrow_loop!(
        a5_f16,
        "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c",
        16,
        32,
        avx512::f32x16_to_f16,
        _mm512_loadu_ps,
        _mm256_storeu_si256
    );
    narrow_loop!(
        a5_bf16,
        "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c",
        16,
        32,
        avx512::f32x16_to_bf16,
        _mm512_loadu_ps,
        _mm256_storeu_si256
    );
    narrow_loop!(
        a5_e4m3,
        "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c",
        16,
        16,
        avx512::f32x16_to_e4m3,
        _mm512_loadu_ps,
        _mm_storeu_si128
    );
    narrow_loop!(
        a5_e5m2,
        "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c",
        16,
        16,
        avx512::f32x16_to_e5m2,
        _mm512_loadu_ps,
        _mm_storeu_si128
    );
    widen_loop!(
        a5_w_f16,
        "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c",
        16,
        32,
        avx512::f16x16_to_f32,
        _mm256_loadu_si256,
        _mm512_storeu_ps
    );
    widen_loop!(
        a5_w_bf16,
        "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c",
        16,
        32,
        avx512::bf16x16_to_f32,
        _mm256_loadu_si256,
        _mm512_storeu_ps
    );
    widen_loop!(
        a5_w_e4m3,
        "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c",
        16,
        16,
        avx512::e4m3x16_to_f32,
        _mm_loadu_si128,
        _mm512_storeu_ps
    );
    widen_loop!(
        a5_w_e5m2,
        "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c",
        16,
        16,
        avx512::e5m2x16_to_f32,
        _mm_loadu_si128,
        _mm512_storeu_ps
    );

    fn has_avx2() -> bool {
        is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("fma")
            && is_x86_feature_detected!("f16c")
    }

    fn has_avx512() -> bool {
        has_avx2()
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx512dq")
    }

    // SAFETY (for the casts below): each `aN_*` function is only called after the checks
    // above found its features; a safe `#[target_feature]` function becomes an `fn` pointer
    // only inside `unsafe`.
    fn avx2_cases() -> Vec<Case> {
        vec![
            Case::NarrowF16("avx2::f32x8_to_f16", 8, |s, d, o| unsafe {
                a2_f16(s, d, o)
            }),
            Case::NarrowBf16("avx2::f32x8_to_bf16", 8, |s, d, o| unsafe {
                a2_bf16(s, d, o)
            }),
            Case::NarrowE4m3("avx2::f32x8_to_e4m3", 8, |s, d, o| unsafe {
                a2_e4m3(s, d, o)
            }),
            Case::NarrowE5m2("avx2::f32x8_to_e5m2", 8, |s, d, o| unsafe {
                a2_e5m2(s, d, o)
            }),
            Case::WidenF16("avx2::f16x8_to_f32", |s, d| unsafe { a2_w_f16(s, d) }),
            Case::WidenBf16("avx2::bf16x8_to_f32", |s, d| unsafe { a2_w_bf16(s, d) }),
            Case::WidenE4m3("avx2::e4m3x8_to_f32", |s, d| unsafe { a2_w_e4m3(s, d) }),
            Case::WidenE5m2("avx2::e5m2x8_to_f32", |s, d| unsafe { a2_w_e5m2(s, d) }),
        ]
    }

    fn avx512_cases() -> Vec<Case> {
        vec![
            Case::NarrowF16("avx512::f32x16_to_f16", 16, |s, d, o| unsafe {
                a5_f16(s, d, o)
            }),
            Case::NarrowBf16("avx512::f32x16_to_bf16", 16, |s, d, o| unsafe {
                a5_bf16(s, d, o)
            }),
            Case::NarrowE4m3("avx512::f32x16_to_e4m3", 16, |s, d, o| unsafe {
                a5_e4m3(s, d, o)
            }),
            Case::NarrowE5m2("avx512::f32x16_to_e5m2", 16, |s, d, o| unsafe {
                a5_e5m2(s, d, o)
            }),
            Case::WidenF16("avx512::f16x16_to_f32", |s, d| unsafe { a5_w_f16(s, d) }),
            Case::WidenBf16("avx512::bf16x16_to_f32", |s, d| unsafe { a5_w_bf16(s, d) }),
            Case::WidenE4m3("avx512::e4m3x16_to_f32", |s, d| unsafe { a5_w_e4m3(s, d) }),
            Case::WidenE5m2("avx512::e5m2x16_to_f32", |s, d| unsafe { a5_w_e5m2(s, d) }),
        ]
    }

    #[test]
    fn avx2_against_scalar() {
        if !has_avx2() {
            println!("SKIPPED: avx2_against_scalar: the CPU lacks AVX2, FMA or F16C");
            return;
        }
        assert!(avx2::is_available());
        avx2_cases().into_iter().for_each(Case::run);
    }

    #[test]
    fn avx512_against_scalar() {
        if !has_avx512() {
            println!("SKIPPED: avx512_against_scalar: the CPU lacks AVX-512 F/BW/VL/DQ");
            return;
        }
        assert!(avx512::is_available());
        avx512_cases().into_iter().for_each(Case::run);
    }

    const FTZ: u32 = 1 << 15;
    const DAZ: u32 = 1 << 6;
    /// All exceptions masked (the default MXCSR is this with round to nearest).
    const MASKS: u32 = 0x1F80;

    /// Non-default MXCSR settings: each rounding mode with FTZ + DAZ, and FTZ or DAZ alone.
    fn settings() -> Vec<(u32, String)> {
        let mut v = Vec::new();
        for (rc, name) in [
            (0u32, "nearest"),
            (1, "down"),
            (2, "up"),
            (3, "toward zero"),
        ] {
            v.push((MASKS | rc << 13 | FTZ | DAZ, format!("RC={name}+FTZ+DAZ")));
            if rc != 0 {
                v.push((MASKS | rc << 13, format!("RC={name}")));
            }
        }
        v.push((MASKS | FTZ, "FTZ".into()));
        v.push((MASKS | DAZ, "DAZ".into()));
        v
    }

    /// Calls the closure behind `ctx` (a `*mut &mut dyn FnMut()`); used by [`with_mxcsr`].
    extern "C" fn call_closure(ctx: *mut u8) {
        // SAFETY: `with_mxcsr` passes a pointer to a live `&mut dyn FnMut()` and nothing
        // else uses it during the call.
        let f = unsafe { &mut *ctx.cast::<&mut dyn FnMut()>() };
        f();
    }

    /// Runs `f` with MXCSR = `csr` and restores the previous value (as `tests/mxcsr.rs`).
    /// `f` must not panic (it would abort in the `extern "C"` trampoline).
    fn with_mxcsr(csr: u32, f: &mut dyn FnMut()) {
        let mut dynf: &mut dyn FnMut() = f;
        let mut saved: u32 = 0;
        // SAFETY: the block saves MXCSR to `saved`, loads `csr`, calls `call_closure` (a
        // C-ABI function; `clobber_abi("C")` declares every register the call may change,
        // and the stack is call-aligned because `nostack` is not given) and restores MXCSR
        // before it ends. r12 and r13 are callee-saved, so they still point at `saved` and
        // `csr` after the call; both stay alive for the whole block.
        unsafe {
            core::arch::asm!(
                "stmxcsr [r12]",
                "ldmxcsr [r13]",
                "call {f}",
                "ldmxcsr [r12]",
                f = sym call_closure,
                in("r12") &raw mut saved,
                in("r13") &raw const csr,
                in("rdi") (&raw mut dynf).cast::<u8>(),
                clobber_abi("C"),
            );
        }
    }

    fn narrowings(cases: Vec<Case>) -> Vec<Case> {
        cases
            .into_iter()
            .filter(|c| {
                matches!(
                    c,
                    Case::NarrowF16(..)
                        | Case::NarrowBf16(..)
                        | Case::NarrowE4m3(..)
                        | Case::NarrowE5m2(..)
                )
            })
            .collect()
    }

    #[test]
    fn avx2_narrowing_under_mxcsr() {
        if !has_avx2() {
            println!("SKIPPED: avx2_narrowing_under_mxcsr: the CPU lacks AVX2, FMA or F16C");
            return;
        }
        for (csr, name) in settings() {
            for c in narrowings(avx2_cases()) {
                c.narrow_under(&name, &|f| with_mxcsr(csr, f));
            }
        }
    }

    #[test]
    fn avx512_narrowing_under_mxcsr() {
        if !has_avx512() {
            println!("SKIPPED: avx512_narrowing_under_mxcsr: the CPU lacks AVX-512 F/BW/VL/DQ");
            return;
        }
        for (csr, name) in settings() {
            for c in narrowings(avx512_cases()) {
                c.narrow_under(&name, &|f| with_mxcsr(csr, f));
            }
        }
    }

    #[cfg(feature = "pulp")]
    mod tokens {
        use super::*;
        use vcvt::vector::avx2::V3F16c;
        use vcvt::vector::avx512::V4Convert;

        #[test]
        fn v3f16c_against_scalar() {
            let Some(simd) = V3F16c::try_new() else {
                println!("SKIPPED: v3f16c_against_scalar: the CPU lacks pulp's V3 or F16C");
                return;
            };
            assert!(V3F16c::new(simd.v3()).is_some());
            let narrow: [(&str, NarrowFn); 4] = [
                ("V3F16c::f32x8_to_f16", |s, d, o| {
                    let simd = V3F16c::try_new().unwrap();
                    simd.vectorize(|| {
                        for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(16)) {
                            // SAFETY: 8 f32 read, 16 bytes written; AVX proven by the token.
                            unsafe {
                                let x = _mm256_loadu_ps(s.as_ptr());
                                _mm_storeu_si128(d.as_mut_ptr().cast(), simd.f32x8_to_f16(x, o));
                            }
                        }
                    })
                }),
                ("V3F16c::f32x8_to_bf16", |s, d, o| {
                    let simd = V3F16c::try_new().unwrap();
                    for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(16)) {
                        // SAFETY: as above.
                        unsafe {
                            let x = _mm256_loadu_ps(s.as_ptr());
                            _mm_storeu_si128(d.as_mut_ptr().cast(), simd.f32x8_to_bf16(x, o));
                        }
                    }
                }),
                ("V3F16c::f32x8_to_e4m3", |s, d, o| {
                    let simd = V3F16c::try_new().unwrap();
                    for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(8)) {
                        // SAFETY: 8 f32 read, 8 bytes written; AVX proven by the token.
                        unsafe {
                            let x = _mm256_loadu_ps(s.as_ptr());
                            _mm_storel_epi64(d.as_mut_ptr().cast(), simd.f32x8_to_e4m3(x, o));
                        }
                    }
                }),
                ("V3F16c::f32x8_to_e5m2", |s, d, o| {
                    let simd = V3F16c::try_new().unwrap();
                    for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(8)) {
                        // SAFETY: as above.
                        unsafe {
                            let x = _mm256_loadu_ps(s.as_ptr());
                            _mm_storel_epi64(d.as_mut_ptr().cast(), simd.f32x8_to_e5m2(x, o));
                        }
                    }
                }),
            ];
            check_narrow::<F16>(narrow[0].0, 8, narrow[0].1);
            check_narrow::<BF16>(narrow[1].0, 8, narrow[1].1);
            check_narrow::<F8E4M3>(narrow[2].0, 8, narrow[2].1);
            check_narrow::<F8E5M2>(narrow[3].0, 8, narrow[3].1);
            let widen: [(&str, WidenFn); 4] = [
                ("V3F16c::f16x8_to_f32", |s, d| {
                    let simd = V3F16c::try_new().unwrap();
                    simd.vectorize(|| {
                        for (s, d) in s.chunks_exact(16).zip(d.chunks_exact_mut(8)) {
                            // SAFETY: 16 bytes read, 8 f32 written; AVX proven by the token.
                            unsafe {
                                let h = _mm_loadu_si128(s.as_ptr().cast());
                                _mm256_storeu_ps(d.as_mut_ptr(), simd.f16x8_to_f32(h));
                            }
                        }
                    })
                }),
                ("V3F16c::bf16x8_to_f32", |s, d| {
                    let simd = V3F16c::try_new().unwrap();
                    for (s, d) in s.chunks_exact(16).zip(d.chunks_exact_mut(8)) {
                        // SAFETY: as above.
                        unsafe {
                            let h = _mm_loadu_si128(s.as_ptr().cast());
                            _mm256_storeu_ps(d.as_mut_ptr(), simd.bf16x8_to_f32(h));
                        }
                    }
                }),
                ("V3F16c::e4m3x8_to_f32", |s, d| {
                    let simd = V3F16c::try_new().unwrap();
                    for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(8)) {
                        // SAFETY: 8 bytes read, 8 f32 written; AVX proven by the token.
                        unsafe {
                            let c = _mm_loadl_epi64(s.as_ptr().cast());
                            _mm256_storeu_ps(d.as_mut_ptr(), simd.e4m3x8_to_f32(c));
                        }
                    }
                }),
                ("V3F16c::e5m2x8_to_f32", |s, d| {
                    let simd = V3F16c::try_new().unwrap();
                    for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(8)) {
                        // SAFETY: as above.
                        unsafe {
                            let c = _mm_loadl_epi64(s.as_ptr().cast());
                            _mm256_storeu_ps(d.as_mut_ptr(), simd.e5m2x8_to_f32(c));
                        }
                    }
                }),
            ];
            check_widen::<F16>(widen[0].0, widen[0].1);
            check_widen::<BF16>(widen[1].0, widen[1].1);
            check_widen::<F8E4M3>(widen[2].0, widen[2].1);
            check_widen::<F8E5M2>(widen[3].0, widen[3].1);
        }

        #[test]
        fn v4_against_scalar() {
            let Some(simd) = pulp::x86::V4::try_new() else {
                println!("SKIPPED: v4_against_scalar: the CPU lacks pulp's V4 (AVX-512)");
                return;
            };
            assert!(V3F16c::try_new().is_some());
            let _ = V3F16c::from(simd);
            check_narrow::<F16>("V4::f32x16_to_f16", 16, |s, d, o| {
                let simd = pulp::x86::V4::try_new().unwrap();
                for (s, d) in s.chunks_exact(16).zip(d.chunks_exact_mut(32)) {
                    // SAFETY: 16 f32 read, 32 bytes written; AVX-512 proven by the token.
                    unsafe {
                        let x = _mm512_loadu_ps(s.as_ptr());
                        _mm256_storeu_si256(d.as_mut_ptr().cast(), simd.f32x16_to_f16(x, o));
                    }
                }
            });
            check_narrow::<BF16>("V4::f32x16_to_bf16", 16, |s, d, o| {
                let simd = pulp::x86::V4::try_new().unwrap();
                for (s, d) in s.chunks_exact(16).zip(d.chunks_exact_mut(32)) {
                    // SAFETY: as above.
                    unsafe {
                        let x = _mm512_loadu_ps(s.as_ptr());
                        _mm256_storeu_si256(d.as_mut_ptr().cast(), simd.f32x16_to_bf16(x, o));
                    }
                }
            });
            check_narrow::<F8E4M3>("V4::f32x16_to_e4m3", 16, |s, d, o| {
                let simd = pulp::x86::V4::try_new().unwrap();
                for (s, d) in s.chunks_exact(16).zip(d.chunks_exact_mut(16)) {
                    // SAFETY: 16 f32 read, 16 bytes written; AVX-512 proven by the token.
                    unsafe {
                        let x = _mm512_loadu_ps(s.as_ptr());
                        _mm_storeu_si128(d.as_mut_ptr().cast(), simd.f32x16_to_e4m3(x, o));
                    }
                }
            });
            check_narrow::<F8E5M2>("V4::f32x16_to_e5m2", 16, |s, d, o| {
                let simd = pulp::x86::V4::try_new().unwrap();
                for (s, d) in s.chunks_exact(16).zip(d.chunks_exact_mut(16)) {
                    // SAFETY: as above.
                    unsafe {
                        let x = _mm512_loadu_ps(s.as_ptr());
                        _mm_storeu_si128(d.as_mut_ptr().cast(), simd.f32x16_to_e5m2(x, o));
                    }
                }
            });
            check_widen::<F16>("V4::f16x16_to_f32", |s, d| {
                let simd = pulp::x86::V4::try_new().unwrap();
                for (s, d) in s.chunks_exact(32).zip(d.chunks_exact_mut(16)) {
                    // SAFETY: 32 bytes read, 16 f32 written; AVX-512 proven by the token.
                    unsafe {
                        let h = _mm256_loadu_si256(s.as_ptr().cast());
                        _mm512_storeu_ps(d.as_mut_ptr(), simd.f16x16_to_f32(h));
                    }
                }
            });
            check_widen::<BF16>("V4::bf16x16_to_f32", |s, d| {
                let simd = pulp::x86::V4::try_new().unwrap();
                for (s, d) in s.chunks_exact(32).zip(d.chunks_exact_mut(16)) {
                    // SAFETY: as above.
                    unsafe {
                        let h = _mm256_loadu_si256(s.as_ptr().cast());
                        _mm512_storeu_ps(d.as_mut_ptr(), simd.bf16x16_to_f32(h));
                    }
                }
            });
            check_widen::<F8E4M3>("V4::e4m3x16_to_f32", |s, d| {
                let simd = pulp::x86::V4::try_new().unwrap();
                for (s, d) in s.chunks_exact(16).zip(d.chunks_exact_mut(16)) {
                    // SAFETY: 16 bytes read, 16 f32 written; AVX-512 proven by the token.
                    unsafe {
                        let c = _mm_loadu_si128(s.as_ptr().cast());
                        _mm512_storeu_ps(d.as_mut_ptr(), simd.e4m3x16_to_f32(c));
                    }
                }
            });
            check_widen::<F8E5M2>("V4::e5m2x16_to_f32", |s, d| {
                let simd = pulp::x86::V4::try_new().unwrap();
                for (s, d) in s.chunks_exact(16).zip(d.chunks_exact_mut(16)) {
                    // SAFETY: as above.
                    unsafe {
                        let c = _mm_loadu_si128(s.as_ptr().cast());
                        _mm512_storeu_ps(d.as_mut_ptr(), simd.e5m2x16_to_f32(c));
                    }
                }
            });
        }
    }
}

#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
mod arm {
    use super::*;
    use core::arch::aarch64::*;
    use vcvt::vector::neon;

    narrow_loop!(n_f16, "neon", 4, 8, neon::f32x4_to_f16, vld1q_f32, vst1_u16);
    narrow_loop!(
        n_bf16,
        "neon",
        4,
        8,
        neon::f32x4_to_bf16,
        vld1q_f32,
        vst1_u16
    );
    narrow_loop!(
        n_e4m3,
        "neon",
        8,
        8,
        neon::f32x8_to_e4m3,
        vld1q_f32_x2,
        vst1_u8
    );
    narrow_loop!(
        n_e5m2,
        "neon",
        8,
        8,
        neon::f32x8_to_e5m2,
        vld1q_f32_x2,
        vst1_u8
    );
    widen_loop!(
        n_w_f16,
        "neon",
        4,
        8,
        neon::f16x4_to_f32,
        vld1_u16,
        vst1q_f32
    );
    widen_loop!(
        n_w_bf16,
        "neon",
        4,
        8,
        neon::bf16x4_to_f32,
        vld1_u16,
        vst1q_f32
    );
    widen_loop!(
        n_w_e4m3,
        "neon",
        8,
        8,
        neon::e4m3x8_to_f32,
        vld1_u8,
        vst1q_f32_x2
    );
    widen_loop!(
        n_w_e5m2,
        "neon",
        8,
        8,
        neon::e5m2x8_to_f32,
        vld1_u8,
        vst1q_f32_x2
    );

    fn has_neon() -> bool {
        std::arch::is_aarch64_feature_detected!("neon")
    }

    // SAFETY (for the closures below): they are only called after `has_neon()`.
    fn cases() -> Vec<Case> {
        vec![
            Case::NarrowF16("neon::f32x4_to_f16", 4, |s, d, o| unsafe { n_f16(s, d, o) }),
            Case::NarrowBf16("neon::f32x4_to_bf16", 4, |s, d, o| unsafe {
                n_bf16(s, d, o)
            }),
            Case::NarrowE4m3("neon::f32x8_to_e4m3", 8, |s, d, o| unsafe {
                n_e4m3(s, d, o)
            }),
            Case::NarrowE5m2("neon::f32x8_to_e5m2", 8, |s, d, o| unsafe {
                n_e5m2(s, d, o)
            }),
            Case::WidenF16("neon::f16x4_to_f32", |s, d| unsafe { n_w_f16(s, d) }),
            Case::WidenBf16("neon::bf16x4_to_f32", |s, d| unsafe { n_w_bf16(s, d) }),
            Case::WidenE4m3("neon::e4m3x8_to_f32", |s, d| unsafe { n_w_e4m3(s, d) }),
            Case::WidenE5m2("neon::e5m2x8_to_f32", |s, d| unsafe { n_w_e5m2(s, d) }),
        ]
    }

    #[test]
    fn neon_against_scalar() {
        if !has_neon() {
            println!("SKIPPED: neon_against_scalar: the CPU lacks NEON");
            return;
        }
        assert!(neon::is_available());
        cases().into_iter().for_each(Case::run);
    }

    /// Calls the closure behind `ctx` (a `*mut &mut dyn FnMut()`); used by [`with_fpcr`].
    extern "C" fn call_closure(ctx: *mut u8) {
        // SAFETY: `with_fpcr` passes a pointer to a live `&mut dyn FnMut()` and nothing else
        // uses it during the call.
        let f = unsafe { &mut *ctx.cast::<&mut dyn FnMut()>() };
        f();
    }

    /// Runs `f` with FPCR = `fpcr` and restores the previous value. `f` must not panic.
    fn with_fpcr(fpcr: u64, f: &mut dyn FnMut()) {
        let mut dynf: &mut dyn FnMut() = f;
        // SAFETY: the block saves FPCR in x20 (callee-saved, so it survives the call), sets
        // `fpcr`, calls `call_closure` (a C-ABI function; `clobber_abi("C")` declares every
        // register the call may change) and restores FPCR before it ends.
        unsafe {
            core::arch::asm!(
                "mrs x20, fpcr",
                "msr fpcr, x21",
                "blr {f}",
                "msr fpcr, x20",
                f = in(reg) call_closure as extern "C" fn(*mut u8),
                in("x0") (&raw mut dynf).cast::<u8>(),
                in("x21") fpcr,
                out("x20") _,
                clobber_abi("C"),
            );
        }
    }

    #[test]
    fn neon_narrowing_under_fpcr() {
        if !has_neon() {
            println!("SKIPPED: neon_narrowing_under_fpcr: the CPU lacks NEON");
            return;
        }
        const AHP: u64 = 1 << 26;
        const DN: u64 = 1 << 25;
        const FZ: u64 = 1 << 24;
        const FZ16: u64 = 1 << 19;
        let settings = [
            (1 << 22 | FZ | FZ16 | DN, "RMode=up+FZ+FZ16+DN"),
            (2 << 22 | FZ | FZ16, "RMode=down+FZ+FZ16"),
            (3 << 22 | AHP, "RMode=zero+AHP"),
            (FZ | DN | AHP, "FZ+DN+AHP"),
        ];
        for (fpcr, name) in settings {
            for c in cases() {
                c.narrow_under(name, &|f| with_fpcr(fpcr, f));
            }
        }
        // Widening under the same settings (every code).
        for (fpcr, name) in settings {
            for c in cases() {
                let under = |run: WidenFn, size: usize| {
                    let n = 1usize << (8 * size);
                    let bytes: Vec<u8> = (0..n)
                        .flat_map(|c| (c as u64).to_le_bytes()[..size].to_vec())
                        .collect();
                    let mut plain = vec![0f32; n];
                    run(&bytes, &mut plain);
                    let mut got = vec![0f32; n];
                    with_fpcr(fpcr, &mut || run(&bytes, &mut got));
                    let bad = plain
                        .iter()
                        .zip(&got)
                        .filter(|(a, b)| a.to_bits() != b.to_bits())
                        .count();
                    assert_eq!(bad, 0, "widening under {name}: {bad} codes differ");
                };
                match c {
                    Case::WidenF16(_, f) | Case::WidenBf16(_, f) => under(f, 2),
                    Case::WidenE4m3(_, f) | Case::WidenE5m2(_, f) => under(f, 1),
                    _ => {}
                }
            }
        }
    }

    #[cfg(feature = "pulp")]
    #[test]
    fn neon_tokens_against_scalar() {
        use vcvt::vector::neon::NeonConvert;
        let Some(_) = pulp::aarch64::Neon::try_new() else {
            println!("SKIPPED: neon_tokens_against_scalar: the CPU lacks NEON");
            return;
        };
        /// The token (checked present above).
        fn tok() -> pulp::aarch64::Neon {
            pulp::aarch64::Neon::try_new().unwrap()
        }
        check_narrow::<F16>("Neon::f32x4_to_f16", 4, |s, d, o| {
            for (s, d) in s.chunks_exact(4).zip(d.chunks_exact_mut(8)) {
                // SAFETY: 4 f32 read, 8 bytes written; NEON proven by the token.
                unsafe {
                    vst1_u16(
                        d.as_mut_ptr().cast(),
                        tok().f32x4_to_f16(vld1q_f32(s.as_ptr()), o),
                    )
                };
            }
        });
        check_narrow::<BF16>("Neon::f32x4_to_bf16", 4, |s, d, o| {
            for (s, d) in s.chunks_exact(4).zip(d.chunks_exact_mut(8)) {
                // SAFETY: as above.
                unsafe {
                    vst1_u16(
                        d.as_mut_ptr().cast(),
                        tok().f32x4_to_bf16(vld1q_f32(s.as_ptr()), o),
                    )
                };
            }
        });
        check_narrow::<F8E4M3>("Neon::f32x8_to_e4m3", 8, |s, d, o| {
            for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(8)) {
                // SAFETY: 8 f32 read, 8 bytes written; NEON proven by the token.
                unsafe {
                    vst1_u8(
                        d.as_mut_ptr(),
                        tok().f32x8_to_e4m3(vld1q_f32_x2(s.as_ptr()), o),
                    )
                };
            }
        });
        check_narrow::<F8E5M2>("Neon::f32x8_to_e5m2", 8, |s, d, o| {
            for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(8)) {
                // SAFETY: as above.
                unsafe {
                    vst1_u8(
                        d.as_mut_ptr(),
                        tok().f32x8_to_e5m2(vld1q_f32_x2(s.as_ptr()), o),
                    )
                };
            }
        });
        check_widen::<F16>("Neon::f16x4_to_f32", |s, d| {
            for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(4)) {
                // SAFETY: 8 bytes read, 4 f32 written; NEON proven by the token.
                unsafe {
                    vst1q_f32(
                        d.as_mut_ptr(),
                        tok().f16x4_to_f32(vld1_u16(s.as_ptr().cast())),
                    )
                };
            }
        });
        check_widen::<BF16>("Neon::bf16x4_to_f32", |s, d| {
            for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(4)) {
                // SAFETY: as above.
                unsafe {
                    vst1q_f32(
                        d.as_mut_ptr(),
                        tok().bf16x4_to_f32(vld1_u16(s.as_ptr().cast())),
                    )
                };
            }
        });
        check_widen::<F8E4M3>("Neon::e4m3x8_to_f32", |s, d| {
            for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(8)) {
                // SAFETY: 8 bytes read, 8 f32 written; NEON proven by the token.
                unsafe { vst1q_f32_x2(d.as_mut_ptr(), tok().e4m3x8_to_f32(vld1_u8(s.as_ptr()))) };
            }
        });
        check_widen::<F8E5M2>("Neon::e5m2x8_to_f32", |s, d| {
            for (s, d) in s.chunks_exact(8).zip(d.chunks_exact_mut(8)) {
                // SAFETY: as above.
                unsafe { vst1q_f32_x2(d.as_mut_ptr(), tok().e5m2x8_to_f32(vld1_u8(s.as_ptr()))) };
            }
        });
    }
}
