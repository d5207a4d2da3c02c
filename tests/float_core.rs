//! `num_traits::float::FloatCore` for F16 and BF16 (feature `num-traits`), over every code,
//! against `f32`'s own methods on the widened value (exact: the results are representable)
//! and, for `recip` and `powi`, the `f64` result rounded once by the `half` crate's
//! `from_f64` (an independent single rounding).
#![cfg(feature = "num-traits")]

use core::num::FpCategory;

use num_traits::float::FloatCore;
use vcvt::{BF16, F16};

/// Same value, or both NaN; the sign of zero counts.
fn same(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

trait Elem: FloatCore + core::fmt::Debug {
    fn all() -> Vec<Self>;
    fn f32(self) -> f32;
    fn of32(x: f32) -> Self;
    /// `half`'s single rounding of an `f64`.
    fn half_round(x: f64) -> f32;
    const MAN_BITS: u32;
}

impl Elem for F16 {
    fn all() -> Vec<Self> {
        (0..=u16::MAX).map(F16::from_bits).collect()
    }
    fn f32(self) -> f32 {
        self.to_f32()
    }
    fn of32(x: f32) -> Self {
        F16::from_f32(x)
    }
    fn half_round(x: f64) -> f32 {
        half::f16::from_f64(x).to_f32()
    }
    const MAN_BITS: u32 = 10;
}

impl Elem for BF16 {
    fn all() -> Vec<Self> {
        (0..=u16::MAX).map(BF16::from_bits).collect()
    }
    fn f32(self) -> f32 {
        self.to_f32()
    }
    fn of32(x: f32) -> Self {
        BF16::from_f32(x)
    }
    fn half_round(x: f64) -> f32 {
        half::bf16::from_f64(x).to_f32()
    }
    const MAN_BITS: u32 = 7;
}

fn check<T: Elem>() {
    let all = T::all();
    for &x in &all {
        let v = x.f32();
        let ops: [(&str, T, f32); 9] = [
            ("floor", x.floor(), v.floor()),
            ("ceil", x.ceil(), v.ceil()),
            ("round", x.round(), v.round()),
            ("trunc", x.trunc(), v.trunc()),
            ("fract", x.fract(), v.fract()),
            ("abs", x.abs(), v.abs()),
            ("signum", x.signum(), v.signum()),
            ("recip", x.recip(), T::half_round(1.0 / f64::from(v))),
            ("powi(3)", x.powi(3), T::half_round(f64::from(v).powi(3))),
        ];
        for (name, got, want) in ops {
            assert!(same(got.f32(), want), "{x:?}.{name}: {got:?}, want {want}");
        }
        // Exact powers (at most 53 bits) for small exponents, and negative ones.
        for n in [-1, 0, 1, 2] {
            let want = T::half_round(f64::from(v).powi(n));
            assert!(same(x.powi(n).f32(), want), "{x:?}.powi({n})");
        }
        assert_eq!(x.classify() == FpCategory::Nan, v.is_nan());
        assert_eq!(x.is_nan(), v.is_nan());
        assert_eq!(x.is_infinite(), v.is_infinite());
        assert_eq!(x.is_finite(), v.is_finite());
        assert_eq!(x.is_sign_negative(), v.is_sign_negative());
        assert_eq!(x.is_sign_positive(), v.is_sign_positive());
        // Subnormal in the format: non-zero and below the smallest normal.
        let sub = v != 0.0 && v.abs() < T::min_positive_value().f32();
        assert_eq!(x.is_subnormal(), sub, "{x:?}");
        assert_eq!(x.is_normal(), v.is_finite() && v != 0.0 && !sub, "{x:?}");
        assert_eq!(x.classify() == FpCategory::Zero, v == 0.0);
        if v.is_finite() {
            let (m, e, s) = x.integer_decode();
            assert_eq!(f64::from(s) * m as f64 * 2f64.powi(e.into()), f64::from(v));
            // f32's own decode of the same value, normalised the same way.
            let (m32, e32, s32) = FloatCore::integer_decode(v);
            assert_eq!(s, s32);
            if m != 0 {
                let shift = i32::from(e) - i32::from(e32);
                assert_eq!(m32, m << shift, "{x:?}");
            }
        }
    }
    // min/max against f32's, on a sample of pairs (NaN ignored as f32 does).
    for (i, &a) in all.iter().enumerate().step_by(61) {
        for &b in all.iter().skip(i % 97).step_by(257) {
            assert!(
                same(a.min(b).f32(), a.f32().min(b.f32())),
                "{a:?} min {b:?}"
            );
            assert!(
                same(a.max(b).f32(), a.f32().max(b.f32())),
                "{a:?} max {b:?}"
            );
        }
    }
    assert_eq!(T::epsilon().f32(), 2f32.powi(-(T::MAN_BITS as i32)));
    assert_eq!(
        T::max_value().f32(),
        T::all()
            .iter()
            .filter(|x| x.is_finite())
            .map(|x| x.f32())
            .fold(0.0, f32::max)
    );
    assert_eq!(T::min_value().f32(), -T::max_value().f32());
    assert!(T::infinity().f32() == f32::INFINITY);
    assert!(T::neg_infinity().f32() == f32::NEG_INFINITY);
    assert!(T::nan().f32().is_nan());
    assert!(same(T::neg_zero().f32(), -0.0));
    // Arithmetic overflows to infinity.
    assert_eq!((T::max_value() + T::max_value()).f32(), f32::INFINITY);
    assert!(same(
        T::of32(1.0).to_degrees().f32(),
        T::half_round(1f64.to_degrees())
    ));
}

#[test]
fn f16_float_core_every_code() {
    check::<F16>();
}

#[test]
fn bf16_float_core_every_code() {
    check::<BF16>();
}
