//! The `serde` and `num-traits` features (run with `--all-features`).
#![cfg(all(feature = "serde", feature = "num-traits"))]

use num_traits::{Bounded, FromPrimitive, Num, NumCast, One, ToPrimitive, Zero};
use vcvt::{BF16, F4E2M1, F8E4M3, F8E5M2, F8E8M0, F16};

#[test]
fn serde_bits_round_trip_every_code() {
    for c in 0..=u16::MAX {
        let j = serde_json::to_string(&F16::from_bits(c)).unwrap();
        assert_eq!(j, c.to_string());
        let back: F16 = serde_json::from_str(&j).unwrap();
        assert_eq!(back.to_bits(), c);
        let x = BF16::from_bits(c);
        let back: BF16 = serde_json::from_str(&serde_json::to_string(&x).unwrap()).unwrap();
        assert_eq!(back.to_bits(), c);
    }
    for c in 0..=u8::MAX {
        let x = F8E4M3::from_bits(c);
        let back: F8E4M3 = serde_json::from_str(&serde_json::to_string(&x).unwrap()).unwrap();
        assert_eq!(back.to_bits(), c);
        let x = F8E8M0::from_bits(c);
        let back: F8E8M0 = serde_json::from_str(&serde_json::to_string(&x).unwrap()).unwrap();
        assert_eq!(back.to_bits(), c);
    }
}

#[derive(serde::Serialize)]
struct AsText {
    #[serde(serialize_with = "vcvt::serde::serialize_as_string")]
    a: F8E4M3,
    #[serde(serialize_with = "vcvt::serde::serialize_as_f32")]
    b: F16,
}

#[test]
fn serde_helpers_and_other_inputs() {
    let v = AsText {
        a: F8E4M3::MAX,
        b: F16::from_f32(0.5),
    };
    assert_eq!(serde_json::to_string(&v).unwrap(), r#"{"a":"450","b":0.5}"#);
    // Strings use the correctly rounded FromStr; floats round once.
    let x: F16 = serde_json::from_str("\"1.000488281250000001\"").unwrap();
    assert_eq!(x.to_bits(), 0x3C01);
    let x: F8E4M3 = serde_json::from_str("\"450\"").unwrap();
    assert_eq!(x, F8E4M3::MAX);
    assert!(serde_json::from_str::<F16>("\"x\"").is_err());
    use serde::de::IntoDeserializer;
    use serde::de::value::{Error, F64Deserializer};
    let d: F64Deserializer<Error> = 65520.0f64.into_deserializer();
    assert!(
        serde::Deserialize::deserialize(d)
            .map(|x: F16| x.is_infinite())
            .unwrap()
    );
}

#[test]
fn num_traits_basics() {
    assert!(F16::zero().is_zero() && F16::NEG_ZERO.is_zero());
    assert_eq!(F8E5M2::one(), F8E5M2::ONE);
    assert_eq!(BF16::max_value(), BF16::MAX);
    assert_eq!(F8E8M0::min_value(), F8E8M0::MIN_POSITIVE);
    assert_eq!(F4E2M1::min_value(), F4E2M1::MIN);
    assert_eq!(
        F16::from_str_radix("1.000488281250000001", 10)
            .unwrap()
            .to_bits(),
        0x3C01
    );
    assert!(matches!(
        F16::from_str_radix("", 10).unwrap_err().kind,
        num_traits::FloatErrorKind::Empty
    ));
    assert!(matches!(
        F16::from_str_radix("z", 10).unwrap_err().kind,
        num_traits::FloatErrorKind::Invalid
    ));
    assert_eq!(<F16 as NumCast>::from(0.1f64), Some(F16::from_f64(0.1)));
    assert_eq!(F8E4M3::MAX.to_i64(), Some(448));
    assert_eq!(F16::INFINITY.to_i64(), None);
    // BF16's midpoint between 2^60 and 2^60 + 2^53 is 2^60 + 2^52: one above it must round
    // up, though a plain conversion to f64 would first round it onto the midpoint.
    let n = (1u64 << 60) + (1 << 52) + 1;
    assert_eq!(
        BF16::from_u64(n).unwrap().to_f64(),
        ((1u64 << 60) + (1 << 53)) as f64
    );
    assert_eq!(
        BF16::from_i64(-(n as i64)).unwrap().to_f64(),
        -(((1u64 << 60) + (1 << 53)) as f64)
    );
    assert_eq!(
        BF16::from_u64(1 << 60 | 1 << 52).unwrap().to_f64(),
        (1u64 << 60) as f64
    ); // tie: even
}

/// Nearest E4M3 value of an exact f64, ties to the even code, saturating (the default):
/// a search over the value table, independent of the codec.
fn e4m3_oracle(x: f64) -> u8 {
    if x.is_nan() {
        return 0x7F;
    }
    let mut best = 0u8;
    let mut best_d = f64::INFINITY;
    for c in 0..=0x7Eu8 {
        let v = F8E4M3::from_bits(c).to_f64();
        let d = (x.abs() - v).abs();
        if d < best_d || (d == best_d && c % 2 == 0) {
            best = c;
            best_d = d;
        }
    }
    if x.is_sign_negative() {
        best | 0x80
    } else {
        best
    }
}

#[test]
fn e4m3_arithmetic_is_rounded_once() {
    for a in 0..=u8::MAX {
        for b in 0..=u8::MAX {
            let (x, y) = (F8E4M3::from_bits(a), F8E4M3::from_bits(b));
            if x.is_nan() || y.is_nan() {
                assert!((x + y).is_nan());
                continue;
            }
            let (fx, fy) = (x.to_f64(), y.to_f64());
            for (got, exact, op) in [
                (x + y, fx + fy, "+"),
                (x - y, fx - fy, "-"),
                (x * y, fx * fy, "*"),
            ] {
                let want = e4m3_oracle(exact);
                // ±0 results: the sign follows f64's (exact) arithmetic
                if want & 0x7F == 0 {
                    assert_eq!(got.to_f32(), 0.0, "{x} {op} {y}");
                    continue;
                }
                assert_eq!(got.to_bits(), want, "{x} {op} {y} = {exact}");
            }
        }
    }
    assert_eq!(-F8E4M3::ONE, F8E4M3::from_f32(-1.0));
    let mut z = F16::ONE;
    z += F16::ONE;
    z *= F16::from_f32(3.0);
    assert_eq!(z, F16::from_f32(6.0));
    assert_eq!(F16::from_f32(7.0) % F16::from_f32(4.0), F16::from_f32(3.0));
}
