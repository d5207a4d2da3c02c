//! Narrow → narrow pairs (every format ↔ F16 and ↔ BF16, F16 ↔ BF16): every source code
//! (all 256 bytes, dirty fp6/fp4 bytes included, or all 65536 words) under every overflow
//! and NaN policy, on every available backend, against the independent oracle of `common`:
//! the oracle widens the source code to its exact f32 value and rounds that once to the
//! destination.
//!
//! Each conversion also runs with a length that is not a multiple of the chunk the
//! dispatcher uses, into a destination with canary elements after it, which must stay as
//! they were. Packed FP4 (`F4E2M1x2`) is checked as a source (every byte, both nibbles) and
//! as a destination (even and odd value counts; the spare nibble of an odd count is +0).

mod common;

use common::{MODES, NAN_POLICIES, Narrow, Report, backends, names};
use vcvt::{
    BF16, Backend, ConvertTo, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ,
    F8E4M3FNUZ, F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, NanPolicy, Options,
    Overflow,
};

/// Every stored pattern of a format's element type: all 2^8 or 2^16 bit patterns (for fp6
/// and fp4, bytes with high bits set too).
fn every_pattern<S: Narrow>() -> Vec<S> {
    let n = 1usize << (8 * size_of::<S>());
    (0..n)
        .map(|i| {
            let bytes = (i as u16).to_le_bytes();
            bytemuck::pod_read_unaligned(&bytes[..size_of::<S>()])
        })
        .collect()
}

/// The oracle's result for one source code: its exact f32 value, rounded once to `D`.
fn expect<S: Narrow, D: Narrow>(code: u32, mode: Overflow, nan: NanPolicy) -> u32 {
    let wide = S::oracle().widen_f32(code);
    D::oracle().narrow_f32_nan(wide, mode, nan)
}

const CANARY: usize = 7;

/// Converts `src` on `backend` into a destination followed by canaries; checks the canaries
/// and returns the converted part.
fn convert<S: ConvertTo<D>, D: Narrow>(
    backend: Backend,
    src: &[S],
    values: usize,
    dst_len: usize,
    options: Options,
    report: &mut Report,
) -> Vec<D> {
    let canary = D::from_code(0x55);
    let mut out = vec![canary; dst_len + CANARY];
    vcvt::convert_slice_on(backend, src, &mut out[..dst_len], options).unwrap();
    let tail: Vec<D> = out[dst_len..].to_vec();
    report.compare(
        || format!("{backend}: canaries after {values} values"),
        &[canary; CANARY],
        &tail,
        |i| i as u64,
    );
    out.truncate(dst_len);
    out
}

/// What [`check`] needs of a (source, destination) pair, as plain functions over bytes:
/// only [`Pair::of`] names the types (the `vcvt` call and the element layouts), so the
/// loops, the oracle's expected codes, comparisons and messages are compiled once, not
/// once per pair.
struct Pair {
    src: &'static str,
    dst: &'static str,
    src_size: usize,
    dst_size: usize,
    src_oracle: &'static common::Oracle,
    dst_oracle: &'static common::Oracle,
    /// Every stored source pattern, as bytes ([`every_pattern`]).
    patterns: fn() -> Vec<u8>,
    /// The code of one source element (its bytes).
    src_code: fn(&[u8]) -> u32,
    /// Appends the bytes of the destination element with this code.
    dst_push: fn(u32, &mut Vec<u8>),
    /// `convert_slice_on` from the source elements to the first `n` destination elements
    /// of `out` (bytes; the elements after them are left as they are).
    convert: fn(Backend, &[u8], &mut [u8], usize, Options),
    simd: fn(&Backend) -> bool,
}

impl Pair {
    fn of<S: Narrow + ConvertTo<D>, D: Narrow>() -> Pair {
        Pair {
            src: S::DEF.name,
            dst: D::DEF.name,
            src_size: size_of::<S>(),
            dst_size: size_of::<D>(),
            src_oracle: S::oracle(),
            dst_oracle: D::oracle(),
            patterns: || bytemuck::cast_slice(&every_pattern::<S>()).to_vec(),
            src_code: |b| bytemuck::pod_read_unaligned::<S>(b).code(),
            dst_push: |c, v| v.extend_from_slice(bytemuck::bytes_of(&D::from_code(c))),
            convert: |b, src, out, n, o| {
                let src: Vec<S> = src
                    .chunks_exact(size_of::<S>())
                    .map(bytemuck::pod_read_unaligned)
                    .collect();
                let mut dst: Vec<D> = out
                    .chunks_exact(size_of::<D>())
                    .map(bytemuck::pod_read_unaligned)
                    .collect();
                vcvt::convert_slice_on(b, &src, &mut dst[..n], o).unwrap();
                out.copy_from_slice(bytemuck::cast_slice(&dst));
            },
            simd: |b| b.is_simd::<S, D>(),
        }
    }
}

fn check(p: &Pair, test: &str) {
    let all = backends(test);
    let (ss, ds) = (p.src_size, p.dst_size);
    let ordered = (p.patterns)();
    // The same patterns shuffled (an odd multiplier permutes indices modulo a power of
    // two), so that kernel blocks mix NaN, Inf and finite sources instead of seeing the
    // NaN codes together.
    let n = ordered.len() / ss;
    let shuffled: Vec<u8> = (0..n)
        .flat_map(|i| {
            let j = i * 0x9E37 % n;
            ordered[j * ss..(j + 1) * ss].iter().copied()
        })
        .collect();
    let mut canary = Vec::new();
    (p.dst_push)(0x55, &mut canary);
    let canaries = canary.repeat(CANARY);
    let mut report = Report::default();
    for (&b, src) in all.iter().flat_map(|b| [(b, &ordered), (b, &shuffled)]) {
        let codes: Vec<u32> = src.chunks_exact(ss).map(p.src_code).collect();
        for mode in MODES {
            for nan in NAN_POLICIES {
                let options = Options::new().overflow(mode).nan(nan);
                // The whole set, an odd length that ends inside a chunk, and every short
                // length (the kernels' short-slice and overlapping last steps).
                for len in [n, n / 2 - 37].into_iter().chain(0..=40) {
                    let mut expected = Vec::with_capacity(len * ds);
                    for &c in &codes[..len] {
                        let wide = p.src_oracle.widen_f32(c);
                        (p.dst_push)(p.dst_oracle.narrow_f32_nan(wide, mode, nan), &mut expected);
                    }
                    // Converts into a destination followed by canaries, which must stay.
                    let mut out = Vec::with_capacity((len + CANARY) * ds);
                    for _ in 0..len + CANARY {
                        out.extend_from_slice(&canary);
                    }
                    (p.convert)(b, &src[..len * ss], &mut out, len, options);
                    report.compare_bytes(
                        &|| format!("{b}: canaries after {len} values"),
                        &canaries,
                        &out[len * ds..],
                        ds,
                        &|i| i as u64,
                    );
                    report.compare_bytes(
                        &|| format!("{b}: {mode:?}, {nan:?}, {len} values"),
                        &expected,
                        &out[..len * ds],
                        ds,
                        &|i| u64::from(codes[i]),
                    );
                }
            }
        }
    }
    let simd: Vec<Backend> = all.iter().copied().filter(|b| (p.simd)(b)).collect();
    report.finish(
        test,
        &format!(
            "{} -> {}, every pattern x 2 overflow x 3 NaN policies on [{}] (SIMD halves on [{}])",
            p.src,
            p.dst,
            names(&all),
            names(&simd)
        ),
    );
}

/// Both directions between a hub (F16, BF16) and another format.
macro_rules! both_ways {
    ($($test:ident: $a:ty, $b:ty;)*) => {
        $(
            #[test]
            fn $test() {
                check(&Pair::of::<$a, $b>(), concat!(stringify!($test), " (to)"));
                check(&Pair::of::<$b, $a>(), concat!(stringify!($test), " (from)"));
            }
        )*
    };
}

both_ways! {
    f16_bf16: F16, BF16;
    f8e4m3_f16: F8E4M3, F16;
    f8e4m3_bf16: F8E4M3, BF16;
    f8e5m2_f16: F8E5M2, F16;
    f8e5m2_bf16: F8E5M2, BF16;
    f8e4m3fnuz_f16: F8E4M3FNUZ, F16;
    f8e4m3fnuz_bf16: F8E4M3FNUZ, BF16;
    f8e5m2fnuz_f16: F8E5M2FNUZ, F16;
    f8e5m2fnuz_bf16: F8E5M2FNUZ, BF16;
    f6e2m3_f16: F6E2M3, F16;
    f6e2m3_bf16: F6E2M3, BF16;
    f6e3m2_f16: F6E3M2, F16;
    f6e3m2_bf16: F6E3M2, BF16;
    f4e2m1_f16: F4E2M1, F16;
    f4e2m1_bf16: F4E2M1, BF16;
    f8e8m0_f16: F8E8M0, F16;
    f8e8m0_bf16: F8E8M0, BF16;
    f8e3m4_f16: F8E3M4, F16;
    f8e3m4_bf16: F8E3M4, BF16;
    f8e4m3ieee_f16: F8E4M3IEEE, F16;
    f8e4m3ieee_bf16: F8E4M3IEEE, BF16;
    f8e4m3b11fnuz_f16: F8E4M3B11FNUZ, F16;
    f8e4m3b11fnuz_bf16: F8E4M3B11FNUZ, BF16;
    f8e5m3fnu_f16: F8E5M3FNU, F16;
    f8e5m3fnu_bf16: F8E5M3FNU, BF16;
}

/// Packed FP4 to a hub: every byte, both nibbles (low nibble first), under every policy.
fn packed_from<D: Narrow>(test: &str)
where
    F4E2M1x2: ConvertTo<D>,
{
    let all = backends(test);
    // Every byte, three times in different orders: more values than one chunk of the
    // dispatcher, so chunks after the first are checked too.
    let src: Vec<F4E2M1x2> = (0..3 * 256u32)
        .map(|i| F4E2M1x2::from_bits((i.wrapping_mul(1 + 2 * (i >> 8)) & 0xFF) as u8))
        .collect();
    let mut report = Report::default();
    for &b in &all {
        for mode in MODES {
            for nan in NAN_POLICIES {
                let options = Options::new().overflow(mode).nan(nan);
                // Every value, then odd counts (the last byte's high nibble unused).
                for values in [2 * src.len(), 1301, 301].into_iter().chain(0..=40) {
                    let expected: Vec<D> = (0..values)
                        .map(|i| {
                            let byte = u32::from(src[i / 2].to_bits());
                            let nibble = if i % 2 == 0 { byte & 0xF } else { byte >> 4 };
                            D::from_code(expect::<F4E2M1, D>(nibble, mode, nan))
                        })
                        .collect();
                    let got = convert::<F4E2M1x2, D>(
                        b,
                        &src[..values.div_ceil(2)],
                        values,
                        values,
                        options,
                        &mut report,
                    );
                    report.compare(
                        || format!("{b}: {mode:?}, {nan:?}, {values} values"),
                        &expected,
                        &got,
                        |i| u64::from(src[i / 2].to_bits()),
                    );
                }
            }
        }
    }
    report.finish(
        test,
        &format!(
            "F4E2M1x2 -> {}, every byte (x3) x 2 overflow x 3 NaN policies on [{}]",
            D::DEF.name,
            names(&all)
        ),
    );
}

/// A hub to packed FP4: every source pattern, even and odd counts, under every policy.
fn packed_to<S: Narrow + ConvertTo<F4E2M1x2>>(test: &str) {
    let all = backends(test);
    let src = every_pattern::<S>();
    let mut report = Report::default();
    for &b in &all {
        for mode in MODES {
            for nan in NAN_POLICIES {
                let options = Options::new().overflow(mode).nan(nan);
                for values in [src.len(), src.len() - 1, 777] {
                    let code = |i: usize| {
                        if i < values {
                            expect::<S, F4E2M1>(src[i].code(), mode, nan)
                        } else {
                            0 // the spare nibble of an odd count: +0
                        }
                    };
                    let expected: Vec<u8> = (0..values.div_ceil(2))
                        .map(|j| (code(2 * j) | code(2 * j + 1) << 4) as u8)
                        .collect();
                    let canary = F4E2M1x2::from_bits(0x55);
                    let mut out = vec![canary; values.div_ceil(2) + CANARY];
                    let n = values.div_ceil(2);
                    vcvt::convert_slice_on(b, &src[..values], &mut out[..n], options).unwrap();
                    let got: Vec<u8> = out.iter().map(|x| x.to_bits()).collect();
                    let mut want = expected;
                    want.extend([0x55; CANARY]);
                    report.compare(
                        || format!("{b}: {mode:?}, {nan:?}, {values} values (+ canaries)"),
                        &want,
                        &got,
                        |j| u64::from(src[(2 * j).min(values - 1)].code()),
                    );
                }
            }
        }
    }
    report.finish(
        test,
        &format!(
            "{} -> F4E2M1x2, every pattern x 2 overflow x 3 NaN policies on [{}]",
            S::DEF.name,
            names(&all)
        ),
    );
}

#[test]
fn f4e2m1x2_f16() {
    packed_from::<F16>("f4e2m1x2_f16 (from packed)");
    packed_to::<F16>("f4e2m1x2_f16 (to packed)");
}

#[test]
fn f4e2m1x2_bf16() {
    packed_from::<BF16>("f4e2m1x2_bf16 (from packed)");
    packed_to::<BF16>("f4e2m1x2_bf16 (to packed)");
}

/// Hand-checked facts, independent of the oracle: values exact in both formats pass
/// unchanged, BF16 beyond F16's range follows F16's overflow policy, and a value between two
/// fp8 codes rounds once to nearest even.
#[test]
fn facts() {
    let mut h = [F16::ZERO; 4];
    vcvt::convert_slice(
        &[
            BF16::from_bits(0x4780), // 65536: above F16's MAX 65504 -> Inf by default
            BF16::from_bits(0x477F), // 65280: exact in F16 (0x7BF8)
            BF16::from_bits(0x3380), // 2^-24: F16's smallest subnormal (0x0001)
            BF16::from_bits(0x3300), // 2^-25: half of it, a tie -> +0 (even)
        ],
        &mut h,
    );
    assert_eq!(h.map(|x| x.to_bits()), [0x7C00, 0x7BF8, 0x0001, 0x0000]);
    let mut h = [F16::ZERO; 1];
    vcvt::convert_slice_with(
        &[BF16::from_bits(0x4780)],
        &mut h,
        Options::new().overflow(Overflow::Saturate),
    );
    assert_eq!(h[0].to_bits(), 0x7BFF);
    // F16 0x3E40 = 1.5625 lies halfway between E4M3 1.5 (0x3C) and 1.625 (0x3D): ties to
    // even gives 0x3C. 0x3E41 is just above it: 0x3D.
    let mut q = [F8E4M3::ZERO; 2];
    vcvt::convert_slice(&[F16::from_bits(0x3E40), F16::from_bits(0x3E41)], &mut q);
    assert_eq!(q.map(|x| x.to_bits()), [0x3C, 0x3D]);
    // E8M0 2^-127 (code 0) is a BF16 subnormal, exactly; in F16 it underflows to +0.
    let mut b = [BF16::ZERO; 1];
    vcvt::convert_slice(&[F8E8M0::from_bits(0)], &mut b);
    assert_eq!(b[0].to_bits(), 0x0040);
    let mut h = [F16::ONE; 1];
    vcvt::convert_slice(&[F8E8M0::from_bits(0)], &mut h);
    assert_eq!(h[0].to_bits(), 0x0000);
}
