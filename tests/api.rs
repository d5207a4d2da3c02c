//! The public API's machinery: lengths, mismatches, options, backends, the byte and
//! uninitialized-destination entry points. Codec correctness is proven elsewhere
//! (exhaustive tests against the oracle); here the element API (`F16::from_f32` ...) serves
//! as the per-element reference and the tests check that every slice entry point applies it
//! to every element, and only to the destination.

use std::mem::MaybeUninit;

use proptest::prelude::*;
use vcvt::{BF16, Backend, Error, F8E4M3, F8E5M2, F16, Options, Overflow};

fn any_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        (-500.0f32..500.0),
        prop::sample::select(vec![
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            464.0,
            65520.0,
            1e-40
        ]),
    ]
}

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        (-70000.0f64..70000.0)
    ]
}

fn any_overflow() -> impl Strategy<Value = Option<Overflow>> {
    prop::sample::select(vec![
        None,
        Some(Overflow::Saturate),
        Some(Overflow::NonSaturating),
    ])
}

fn opts(o: Option<Overflow>) -> Options {
    match o {
        Some(o) => Options::new().overflow(o),
        None => Options::new(),
    }
}

/// Longest slice of the properties. Under Miri (`.ci/miri.sh`, one case per property) 40:
/// Miri checks the memory safety of the Scalar loops and the entry points, which short
/// slices (odd and even, with offsets) exercise as well; a 300-value case takes ~10 s
/// there. The 256 native cases use the full 300.
const MAX_LEN: usize = if cfg!(miri) { 40 } else { 300 };

/// Checks every narrowing entry point for one format against the element API.
macro_rules! narrow_api_props {
    ($name:ident, $t:ty, $size:expr) => {
        proptest! {
            #[test]
            fn $name(
                src32 in prop::collection::vec(any_f32(), 0..MAX_LEN),
                src64 in prop::collection::vec(any_f64(), 0..MAX_LEN),
                ov in any_overflow(),
                offset in 0usize..8,
            ) {
                let o = opts(ov);
                let pol = ov.unwrap_or(<$t>::DEFAULT_OVERFLOW);
                let want32: Vec<$t> = src32.iter().map(|&x| <$t>::from_f32_with(x, pol)).collect();
                let want64: Vec<$t> = src64.iter().map(|&x| <$t>::from_f64_with(x, pol)).collect();
                let bits = |v: &[$t]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();

                // Typed slices, every entry point.
                let mut d = vec![<$t>::ZERO; src32.len()];
                vcvt::convert_slice_with(&src32, &mut d, o);
                prop_assert_eq!(bits(&d), bits(&want32));
                if ov.is_none() {
                    let mut d2 = vec![<$t>::ZERO; src32.len()];
                    vcvt::convert_slice(&src32, &mut d2);
                    prop_assert_eq!(bits(&d2), bits(&want32));
                    let mut d3 = vec![<$t>::ZERO; src32.len()];
                    vcvt::try_convert_slice(&src32, &mut d3).unwrap();
                    prop_assert_eq!(bits(&d3), bits(&want32));
                    let v: Vec<$t> = vcvt::convert_to_vec(&src64);
                    prop_assert_eq!(bits(&v), bits(&want64));
                }
                let mut d = vec![<$t>::ZERO; src64.len()];
                vcvt::try_convert_slice_with(&src64, &mut d, o).unwrap();
                prop_assert_eq!(bits(&d), bits(&want64));
                prop_assert_eq!(bits(&vcvt::convert_to_vec_with(&src32, o)), bits(&want32));

                // Every available backend.
                for b in Backend::available() {
                    let mut d = vec![<$t>::ZERO; src32.len()];
                    vcvt::convert_slice_on(b, &src32, &mut d, o).unwrap();
                    prop_assert_eq!(bits(&d), bits(&want32), "backend {}", b);
                    let mut d = vec![<$t>::ZERO; src64.len()];
                    vcvt::convert_slice_on(b, &src64, &mut d, o).unwrap();
                    prop_assert_eq!(bits(&d), bits(&want64), "backend {}", b);
                }

                // Uninitialized destination.
                let mut u = vec![MaybeUninit::<$t>::uninit(); src32.len()];
                let out = vcvt::convert_slice_uninit_with(&src32, &mut u, o);
                prop_assert_eq!(bits(out), bits(&want32));

                // Unaligned little-endian bytes in, at every offset.
                let mut buf = vec![0xEEu8; offset + src32.len() * 4];
                for (c, x) in buf[offset..].chunks_exact_mut(4).zip(&src32) {
                    c.copy_from_slice(&x.to_le_bytes());
                }
                let mut d = vec![<$t>::ZERO; src32.len()];
                vcvt::convert_from_bytes_with::<f32, $t>(&buf[offset..], &mut d, o).unwrap();
                prop_assert_eq!(bits(&d), bits(&want32));

                // Unaligned little-endian bytes out; bytes around the window stay untouched.
                let mut out = vec![0xA5u8; offset + src64.len() * $size + 3];
                let end = offset + src64.len() * $size;
                vcvt::convert_to_bytes_with::<f64, $t>(&src64, &mut out[offset..end], o).unwrap();
                prop_assert!(out[..offset].iter().chain(&out[end..]).all(|&b| b == 0xA5));
                let mut expect = Vec::new();
                for x in &want64 {
                    expect.extend_from_slice(&x.to_bits().to_le_bytes());
                }
                prop_assert_eq!(&out[offset..end], &expect[..]);
            }
        }
    };
}

narrow_api_props!(f16_entry_points, F16, 2);
narrow_api_props!(bf16_entry_points, BF16, 2);
narrow_api_props!(f8e4m3_entry_points, F8E4M3, 1);
narrow_api_props!(f8e5m2_entry_points, F8E5M2, 1);

/// Checks the widening entry points for one format against the element API.
macro_rules! widen_api_props {
    ($name:ident, $t:ty, $bits:ty) => {
        proptest! {
            #[test]
            fn $name(codes in prop::collection::vec(any::<$bits>(), 0..MAX_LEN), offset in 0usize..8) {
                let src: Vec<$t> = codes.iter().map(|&c| <$t>::from_bits(c)).collect();
                let want32: Vec<u32> = src.iter().map(|x| x.to_f32().to_bits()).collect();
                let want64: Vec<u64> = src.iter().map(|x| x.to_f64().to_bits()).collect();

                let mut d = vec![0f32; src.len()];
                vcvt::convert_slice(&src, &mut d);
                prop_assert_eq!(d.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want32.clone());
                for b in Backend::available() {
                    let mut d = vec![0f64; src.len()];
                    vcvt::convert_slice_on(b, &src, &mut d, Options::new()).unwrap();
                    prop_assert_eq!(d.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want64.clone());
                }
                let mut buf = vec![0u8; offset];
                for c in &codes {
                    buf.extend_from_slice(&c.to_le_bytes());
                }
                let mut d = vec![0f64; src.len()];
                vcvt::convert_from_bytes::<$t, f64>(&buf[offset..], &mut d).unwrap();
                prop_assert_eq!(d.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want64);
                let mut out = vec![0u8; offset + src.len() * 4];
                vcvt::convert_to_bytes::<$t, f32>(&src, &mut out[offset..]).unwrap();
                let got: Vec<u32> = out[offset..]
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                    .collect();
                prop_assert_eq!(got, want32);
            }
        }
    };
}

widen_api_props!(f16_widen_entry_points, F16, u16);
widen_api_props!(bf16_widen_entry_points, BF16, u16);
widen_api_props!(f8e4m3_widen_entry_points, F8E4M3, u8);
widen_api_props!(f8e5m2_widen_entry_points, F8E5M2, u8);

proptest! {
    #[test]
    fn length_mismatch_is_an_error_and_leaves_dst_alone(a in 0usize..100, b in 0usize..100) {
        prop_assume!(a != b);
        let src = vec![1.5f32; a];
        let mut dst = vec![F16::from_bits(0x1234); b];
        prop_assert_eq!(vcvt::try_convert_slice(&src, &mut dst), Err(Error::LengthMismatch { src: a, dst: b }));
        for backend in Backend::available() {
            prop_assert_eq!(
                vcvt::convert_slice_on(backend, &src, &mut dst, Options::new()),
                Err(Error::LengthMismatch { src: a, dst: b })
            );
        }
        prop_assert!(dst.iter().all(|x| x.to_bits() == 0x1234));
        // The panic of the infallible entry point, where panics unwind (not under
        // wasm32-wasip1's panic=abort, where it would end the test binary).
        if cfg!(panic = "unwind") {
            let r = std::panic::catch_unwind(move || {
                let mut dst = vec![F16::ZERO; b];
                vcvt::convert_slice(&src, &mut dst);
            });
            let msg = r.unwrap_err();
            let msg = msg.downcast_ref::<String>().unwrap();
            prop_assert!(msg.contains(&format!("{a}")) && msg.contains(&format!("{b}")), "{}", msg);
        }
    }

    #[test]
    fn byte_counts_that_are_not_whole_elements_are_errors(n in 0usize..64, extra in 1usize..4) {
        let bytes = vec![0u8; n * 4 + extra];
        let mut dst = vec![BF16::from_bits(0x4242); n];
        prop_assert_eq!(
            vcvt::convert_from_bytes::<f32, BF16>(&bytes, &mut dst),
            Err(Error::ByteLength { bytes: n * 4 + extra, element_size: 4 })
        );
        prop_assert!(dst.iter().all(|x| x.to_bits() == 0x4242));
        // A whole number of elements, but a different count, is a length mismatch.
        let mut dst2 = vec![BF16::ZERO; n + 1];
        prop_assert_eq!(
            vcvt::convert_from_bytes::<f32, BF16>(&bytes[..n * 4], &mut dst2),
            Err(Error::LengthMismatch { src: n, dst: n + 1 })
        );
        let src = vec![1.0f32; n];
        let mut out = vec![0x77u8; n * 2 + 1];
        prop_assert_eq!(
            vcvt::convert_to_bytes::<f32, BF16>(&src, &mut out),
            Err(Error::ByteLength { bytes: n * 2 + 1, element_size: 2 })
        );
        prop_assert!(out.iter().all(|&b| b == 0x77));
    }
}

#[test]
#[should_panic(expected = "source has 3 elements but destination has 2")]
fn convert_slice_panics_naming_both_lengths() {
    let mut dst = [F8E5M2::ZERO; 2];
    vcvt::convert_slice(&[1.0f32; 3], &mut dst);
}

#[test]
#[should_panic(expected = "source has 1 elements but destination has 0")]
fn convert_slice_uninit_panics_on_mismatch() {
    let mut dst: [MaybeUninit<F16>; 0] = [];
    vcvt::convert_slice_uninit(&[1.0f32], &mut dst);
}

#[test]
fn options_default_is_each_formats_policy() {
    assert_eq!(Options::new(), Options::default());
    assert_eq!(Options::new().overflow_policy(), None);
    let src = [1.0e6f32, f32::INFINITY];
    let mut h = [F16::ZERO; 2];
    vcvt::convert_slice_with(&src, &mut h, Options::new());
    assert!(
        h[0].is_infinite() && h[1].is_infinite(),
        "F16 defaults to NonSaturating"
    );
    let mut b = [BF16::ZERO; 2];
    vcvt::convert_slice(&[f32::MAX, f32::INFINITY], &mut b);
    assert!(
        b[0].is_infinite() && b[1].is_infinite(),
        "BF16 defaults to NonSaturating"
    );
    let mut e = [F8E4M3::ZERO; 2];
    vcvt::convert_slice(&src, &mut e);
    assert_eq!(
        [e[0].to_bits(), e[1].to_bits()],
        [0x7E, 0x7E],
        "E4M3 defaults to Saturate"
    );
    let mut e = [F8E5M2::ZERO; 2];
    vcvt::convert_slice(&src, &mut e);
    assert_eq!(
        [e[0].to_bits(), e[1].to_bits()],
        [0x7B, 0x7B],
        "E5M2 defaults to Saturate"
    );
    vcvt::convert_slice_with(
        &src,
        &mut e,
        Options::new().overflow(Overflow::NonSaturating),
    );
    assert_eq!([e[0].to_bits(), e[1].to_bits()], [0x7C, 0x7C]);
}

/// A wasm32 build with `-C target-feature=+simd128` has the `simd128` backend, it runs, and
/// it is the one chosen unless `VCVT_BACKEND` names another (`.ci/wasm.sh`).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[test]
fn simd128_is_available_and_chosen() {
    assert!(Backend::Simd128.is_available());
    assert_eq!(
        Backend::available().collect::<Vec<_>>(),
        [Backend::Simd128, Backend::Scalar]
    );
    if std::env::var_os("VCVT_BACKEND").is_none() {
        assert_eq!(Backend::active(), Backend::Simd128);
    }
}

#[test]
fn backends_are_listed_named_and_checked() {
    let avail: Vec<Backend> = Backend::available().collect();
    assert_eq!(
        avail.last(),
        Some(&Backend::Scalar),
        "Scalar is always available, last"
    );
    assert!(avail.contains(&Backend::active()));
    for &b in Backend::ALL {
        assert_eq!(Backend::from_name(b.name()), Some(b));
        assert_eq!(b.name().parse::<Backend>(), Ok(b));
        assert_eq!(b.to_string(), b.name());
        assert!(
            b.name()
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        );
        let mut dst = [F16::ZERO; 4];
        let r = vcvt::convert_slice_on(b, &[1.0f32; 4], &mut dst, Options::new());
        if b.is_available() {
            r.unwrap();
            assert!(dst.iter().all(|x| x.to_f32() == 1.0));
        } else {
            println!("SKIPPED: backend {b} not available on this CPU (checked that it is refused)");
            assert_eq!(r, Err(Error::BackendUnavailable { backend: b }));
            assert!(dst.iter().all(|x| x.to_bits() == 0));
        }
    }
    assert!(
        "AVX2".parse::<Backend>().is_err(),
        "names are exact lowercase"
    );
    assert!("".parse::<Backend>().is_err());
    let e = "nope".parse::<Backend>().unwrap_err().to_string();
    assert!(e.contains("scalar"), "{e}");
    println!("available: {avail:?}, active: {}", Backend::active());
}

#[test]
fn errors_display_and_are_std_errors() {
    let e: Box<dyn std::error::Error> = Box::new(Error::LengthMismatch { src: 5, dst: 7 });
    assert_eq!(
        e.to_string(),
        "length mismatch: source has 5 elements, destination has 7"
    );
    let e = Error::ByteLength {
        bytes: 7,
        element_size: 2,
    }
    .to_string();
    assert!(e.contains('7') && e.contains('2'), "{e}");
    let e = Error::BackendUnavailable {
        backend: Backend::Scalar,
    }
    .to_string();
    assert!(e.contains("scalar"), "{e}");
}

#[test]
fn element_types_behave_like_floats() {
    assert_eq!(F16::from_f32(-0.0), F16::from_f32(0.0));
    assert!(F16::from_f32(-0.0).is_sign_negative());
    assert_ne!(F16::NAN, F16::NAN);
    assert!(F16::NAN.partial_cmp(&F16::ONE).is_none());
    assert!(F8E4M3::from_f32(1.0) < F8E4M3::from_f32(1.125));
    assert!(BF16::NEG_INFINITY < BF16::MIN);
    assert_eq!(format!("{}", F16::from_f32(1.5)), "1.5");
    assert_eq!(format!("{:?}", F8E5M2::from_f32(-3.0)), "-3.0");
    assert_eq!(F16::default().to_bits(), 0);
    let raw: &[u8] = bytemuck::cast_slice(&[F8E4M3::ONE, F8E4M3::MAX]);
    assert_eq!(raw, &[0x38, 0x7E]);
    assert!(!F8E4M3::MAX.is_infinite() && F8E4M3::MAX.is_finite() && !F8E4M3::NAN.is_finite());
    assert!(F8E5M2::INFINITY.is_infinite() && !F8E5M2::INFINITY.is_nan());
    assert_eq!(f64::from(BF16::from_f64(3.0)), 3.0);
}

/// The format constants, checked against values computed here from each format's definition.
#[test]
fn constants_match_the_format_definitions() {
    fn check(name: &str, got: f64, want: f64) {
        assert_eq!(got, want, "{name}");
    }
    check(
        "F16::MAX",
        F16::MAX.to_f64(),
        (2.0 - 2f64.powi(-10)) * 2f64.powi(15),
    );
    check("F16::MIN", F16::MIN.to_f64(), -65504.0);
    check(
        "F16::MIN_POSITIVE",
        F16::MIN_POSITIVE.to_f64(),
        2f64.powi(-14),
    );
    check(
        "F16::MIN_POSITIVE_SUBNORMAL",
        F16::MIN_POSITIVE_SUBNORMAL.to_f64(),
        2f64.powi(-24),
    );
    check("F16::EPSILON", F16::EPSILON.to_f64(), 2f64.powi(-10));
    check(
        "BF16::MAX",
        BF16::MAX.to_f64(),
        (2.0 - 2f64.powi(-7)) * 2f64.powi(127),
    );
    check(
        "BF16::MIN_POSITIVE",
        BF16::MIN_POSITIVE.to_f64(),
        2f64.powi(-126),
    );
    check(
        "BF16::MIN_POSITIVE_SUBNORMAL",
        BF16::MIN_POSITIVE_SUBNORMAL.to_f64(),
        2f64.powi(-133),
    );
    check("BF16::EPSILON", BF16::EPSILON.to_f64(), 2f64.powi(-7));
    check("F8E4M3::MAX", F8E4M3::MAX.to_f64(), 448.0);
    check("F8E4M3::MIN", F8E4M3::MIN.to_f64(), -448.0);
    check(
        "F8E4M3::MIN_POSITIVE",
        F8E4M3::MIN_POSITIVE.to_f64(),
        2f64.powi(-6),
    );
    check(
        "F8E4M3::MIN_POSITIVE_SUBNORMAL",
        F8E4M3::MIN_POSITIVE_SUBNORMAL.to_f64(),
        2f64.powi(-9),
    );
    check("F8E4M3::EPSILON", F8E4M3::EPSILON.to_f64(), 0.125);
    check("F8E5M2::MAX", F8E5M2::MAX.to_f64(), 57344.0);
    check(
        "F8E5M2::MIN_POSITIVE",
        F8E5M2::MIN_POSITIVE.to_f64(),
        2f64.powi(-14),
    );
    check(
        "F8E5M2::MIN_POSITIVE_SUBNORMAL",
        F8E5M2::MIN_POSITIVE_SUBNORMAL.to_f64(),
        2f64.powi(-16),
    );
    check("F8E5M2::EPSILON", F8E5M2::EPSILON.to_f64(), 0.25);
    for one in [
        F16::ONE.to_f64(),
        BF16::ONE.to_f64(),
        F8E4M3::ONE.to_f64(),
        F8E5M2::ONE.to_f64(),
    ] {
        assert_eq!(one, 1.0);
    }
    assert_eq!(
        (
            F16::NAN.to_bits(),
            BF16::NAN.to_bits(),
            F8E4M3::NAN.to_bits(),
            F8E5M2::NAN.to_bits()
        ),
        (0x7E00, 0x7FC0, 0x7F, 0x7E)
    );
    assert_eq!(F16::INFINITY.to_f32(), f32::INFINITY);
    assert_eq!(BF16::NEG_INFINITY.to_f32(), f32::NEG_INFINITY);
    assert_eq!(F8E5M2::NEG_INFINITY.to_f32(), f32::NEG_INFINITY);
    assert_eq!(F16::NEG_ZERO.to_f32().to_bits(), (-0.0f32).to_bits());
    assert_eq!(F16::MANTISSA_DIGITS, 11);
    assert_eq!(BF16::MANTISSA_DIGITS, 8);
}

#[cfg(feature = "half")]
#[test]
fn half_types_share_the_kernels() {
    let src = [1.0f32, 65520.0, -2.5e-6, f32::NAN];
    let mut a = [half::f16::ZERO; 4];
    let mut b = [F16::ZERO; 4];
    vcvt::convert_slice(&src, &mut a);
    vcvt::convert_slice(&src, &mut b);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.to_bits(), y.to_bits());
        assert_eq!(F16::from(*x).to_bits(), y.to_bits());
        assert_eq!(half::f16::from(*y).to_bits(), x.to_bits());
    }
    let mut w = [half::bf16::ZERO; 4];
    vcvt::convert_slice(&src, &mut w);
    let mut back = [0f64; 4];
    vcvt::convert_slice(&w, &mut back);
    assert_eq!(back[0], 1.0);
    assert_eq!(BF16::from(w[0]).to_bits(), 0x3F80);
}

/// The constants of the formats added for MX and fnuz, against values computed here from
/// each format's definition.
#[test]
fn constants_of_the_mx_and_fnuz_formats() {
    use vcvt::{F4E2M1, F6E2M3, F6E3M2, F8E4M3FNUZ, F8E5M2FNUZ, F8E8M0};
    let p = |n: i32| 2f64.powi(n);
    let cases = [
        ("F8E4M3FNUZ::MAX", F8E4M3FNUZ::MAX.to_f64(), 240.0),
        ("F8E4M3FNUZ::MIN", F8E4M3FNUZ::MIN.to_f64(), -240.0),
        (
            "F8E4M3FNUZ::MIN_POSITIVE",
            F8E4M3FNUZ::MIN_POSITIVE.to_f64(),
            p(-7),
        ),
        (
            "F8E4M3FNUZ::MIN_POSITIVE_SUBNORMAL",
            F8E4M3FNUZ::MIN_POSITIVE_SUBNORMAL.to_f64(),
            p(-10),
        ),
        ("F8E4M3FNUZ::EPSILON", F8E4M3FNUZ::EPSILON.to_f64(), 0.125),
        ("F8E5M2FNUZ::MAX", F8E5M2FNUZ::MAX.to_f64(), 57344.0),
        (
            "F8E5M2FNUZ::MIN_POSITIVE",
            F8E5M2FNUZ::MIN_POSITIVE.to_f64(),
            p(-15),
        ),
        (
            "F8E5M2FNUZ::MIN_POSITIVE_SUBNORMAL",
            F8E5M2FNUZ::MIN_POSITIVE_SUBNORMAL.to_f64(),
            p(-17),
        ),
        ("F8E5M2FNUZ::EPSILON", F8E5M2FNUZ::EPSILON.to_f64(), 0.25),
        ("F6E2M3::MAX", F6E2M3::MAX.to_f64(), 7.5),
        ("F6E2M3::MIN", F6E2M3::MIN.to_f64(), -7.5),
        ("F6E2M3::MIN_POSITIVE", F6E2M3::MIN_POSITIVE.to_f64(), 1.0),
        (
            "F6E2M3::MIN_POSITIVE_SUBNORMAL",
            F6E2M3::MIN_POSITIVE_SUBNORMAL.to_f64(),
            0.125,
        ),
        ("F6E2M3::EPSILON", F6E2M3::EPSILON.to_f64(), 0.125),
        ("F6E3M2::MAX", F6E3M2::MAX.to_f64(), 28.0),
        ("F6E3M2::MIN_POSITIVE", F6E3M2::MIN_POSITIVE.to_f64(), 0.25),
        (
            "F6E3M2::MIN_POSITIVE_SUBNORMAL",
            F6E3M2::MIN_POSITIVE_SUBNORMAL.to_f64(),
            0.0625,
        ),
        ("F6E3M2::EPSILON", F6E3M2::EPSILON.to_f64(), 0.25),
        ("F4E2M1::MAX", F4E2M1::MAX.to_f64(), 6.0),
        ("F4E2M1::MIN", F4E2M1::MIN.to_f64(), -6.0),
        ("F4E2M1::MIN_POSITIVE", F4E2M1::MIN_POSITIVE.to_f64(), 1.0),
        (
            "F4E2M1::MIN_POSITIVE_SUBNORMAL",
            F4E2M1::MIN_POSITIVE_SUBNORMAL.to_f64(),
            0.5,
        ),
        ("F4E2M1::EPSILON", F4E2M1::EPSILON.to_f64(), 0.5),
        ("F8E8M0::MAX", F8E8M0::MAX.to_f64(), p(127)),
        (
            "F8E8M0::MIN_POSITIVE",
            F8E8M0::MIN_POSITIVE.to_f64(),
            p(-127),
        ),
        ("F8E8M0::ONE", F8E8M0::ONE.to_f64(), 1.0),
    ];
    for (name, got, want) in cases {
        assert_eq!(got, want, "{name}");
    }
    for one in [
        F8E4M3FNUZ::ONE.to_f64(),
        F8E5M2FNUZ::ONE.to_f64(),
        F6E2M3::ONE.to_f64(),
        F6E3M2::ONE.to_f64(),
        F4E2M1::ONE.to_f64(),
    ] {
        assert_eq!(one, 1.0);
    }
    assert_eq!(
        (
            F8E4M3FNUZ::NAN.to_bits(),
            F8E5M2FNUZ::NAN.to_bits(),
            F8E8M0::NAN.to_bits()
        ),
        (0x80, 0x80, 0xFF)
    );
    assert_eq!(
        [
            F6E2M3::MANTISSA_DIGITS,
            F6E3M2::MANTISSA_DIGITS,
            F4E2M1::MANTISSA_DIGITS
        ],
        [4, 3, 2]
    );
    assert_eq!(F8E8M0::MANTISSA_DIGITS, 1);
    assert_eq!(F4E2M1::NEG_ZERO.to_f32().to_bits(), (-0.0f32).to_bits());
    assert_eq!(F8E8M0::from_exponent(-127), Some(F8E8M0::MIN_POSITIVE));
    assert_eq!(F8E8M0::from_exponent(-128), None);
    assert_eq!(F8E8M0::MAX.exponent(), Some(127));
    assert_eq!(F8E8M0::NAN.exponent(), None);
}

#[test]
fn mx_and_fnuz_types_behave_as_their_contract_says() {
    use vcvt::{F4E2M1, F6E2M3, F8E4M3FNUZ, F8E8M0};
    // fp4/fp6: from_bits keeps the format's bits only; equality ignores -0/+0.
    assert_eq!(F4E2M1::from_bits(0xF7).to_bits(), 0x7);
    assert_eq!(F6E2M3::from_bits(0xC1).to_bits(), 0x01);
    assert_eq!(F4E2M1::ZERO, F4E2M1::NEG_ZERO);
    assert!(!F4E2M1::MAX.is_nan() && !F4E2M1::MAX.is_infinite() && F4E2M1::MAX.is_finite());
    // A dirty byte reinterpreted (as from a memory map) widens as its low bits.
    let dirty: &[F4E2M1] = bytemuck::cast_slice(&[0xF9u8]);
    assert_eq!(dirty[0].to_f32(), -0.5);
    assert_eq!(dirty[0], F4E2M1::from_f32(-0.5));
    // fnuz: one NaN, unordered, no -0.
    assert!(F8E4M3FNUZ::NAN.is_nan() && !F8E4M3FNUZ::NAN.is_finite());
    assert_ne!(F8E4M3FNUZ::NAN, F8E4M3FNUZ::NAN);
    assert_eq!(F8E4M3FNUZ::from_f32(-0.0).to_bits(), 0);
    assert!(F8E4M3FNUZ::from_f32(-1.0) < F8E4M3FNUZ::ZERO);
    // E8M0: ordered powers of two, NaN unordered.
    assert!(F8E8M0::from_f32(2.0) > F8E8M0::ONE);
    assert!(F8E8M0::NAN.partial_cmp(&F8E8M0::ONE).is_none());
    assert_eq!(F8E8M0::default().to_f32(), 2f32.powi(-127));
}

#[test]
fn is_simd_is_honest() {
    use vcvt::{F4E2M1x2, F6E3M2, F8E4M3FNUZ, F8E8M0};
    for b in Backend::ALL.iter().copied().filter(|b| b.is_available()) {
        // Scalar is never SIMD; every SIMD backend has the four classic formats both ways.
        let classic = [
            b.is_simd::<f32, F16>(),
            b.is_simd::<F16, f32>(),
            b.is_simd::<f64, BF16>(),
            b.is_simd::<F8E4M3, f64>(),
            b.is_simd::<f32, F8E5M2>(),
        ];
        // `portable` has kernels for some f32 pairs of the plain formats only; the f64 and
        // packed pairs run Scalar there. `simd128` (wasm32) has the generic kernels where they
        // measured faster: f64 sources and destinations and packed FP4 too, but not f64 ->
        // BF16 (src/simd/wasm32/simd128.rs).
        let f32_only = b.name() == "portable";
        if b == Backend::Scalar {
            assert_eq!(classic, [false; 5], "{b}");
        } else if f32_only {
            assert_eq!(classic, [true, true, false, false, true], "{b}");
        } else if b.name() == "simd128" {
            assert_eq!(classic, [true, true, false, true, true], "{b}");
        } else {
            assert_eq!(classic, [true; 5], "{b}");
        }
        // Every SIMD tier has kernels for the newer formats too (`avx2_small`, which the
        // AVX-512 tables start from, and `neon_small`); Scalar has none; the call must work
        // on every backend either way.
        let newer = [
            b.is_simd::<f32, F8E8M0>(),
            b.is_simd::<f64, F8E4M3FNUZ>(),
            b.is_simd::<F6E3M2, f32>(),
            b.is_simd::<f32, F4E2M1x2>(),
            b.is_simd::<F4E2M1x2, f64>(),
        ];
        if b == Backend::Scalar {
            assert_eq!(newer, [false; 5], "{b}");
        } else if f32_only {
            assert_eq!(newer, [true, false, true, false, false], "{b}");
        } else {
            assert_eq!(newer, [true; 5], "{b}");
        }
        let mut out = [F8E8M0::NAN; 2];
        vcvt::convert_slice_on(b, &[1.0f32, 3.0], &mut out, Options::new()).unwrap();
        assert_eq!(out.map(|x| x.to_f32()), [1.0, 4.0]);
    }
}

#[cfg(feature = "float8")]
#[test]
fn float8_types_share_the_kernels() {
    let src = [1.0f32, 500.0, -2.5e-3, f32::NAN, 0.1];
    let mut a = [float8::F8E4M3::from_bits(0); 5];
    let mut b = [F8E4M3::ZERO; 5];
    vcvt::convert_slice(&src, &mut a);
    vcvt::convert_slice(&src, &mut b);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.to_bits(), y.to_bits());
        assert_eq!(F8E4M3::from(*x).to_bits(), y.to_bits());
        assert_eq!(float8::F8E4M3::from(*y).to_bits(), x.to_bits());
    }
    let mut e5 = [float8::F8E5M2::from_bits(0); 5];
    vcvt::convert_slice(&src, &mut e5);
    let mut back = [0f64; 5];
    vcvt::convert_slice(&e5, &mut back);
    assert_eq!(back[0], 1.0);
    assert_eq!(
        F8E5M2::from(e5[1]).to_bits(),
        F8E5M2::from_f32(500.0).to_bits()
    );
    // Byte slices of float8 values (a memory-mapped checkpoint) work too.
    let mut w = [0f32; 2];
    vcvt::convert_from_bytes::<float8::F8E4M3, f32>(&[0x38, 0xFE], &mut w).unwrap();
    assert_eq!(w, [1.0, -448.0]);
}
