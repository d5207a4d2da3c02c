//! The `text` target: arbitrary bytes as a string into every element type's `FromStr`
//! (`from_str_with`, both overflow policies). Also included by `tests/text.rs`, which runs it
//! on generated strings on the stable toolchain.
//!
//! A failure is a panic in vcvt, an `Ok`/`Err` that differs from `f32::from_str`'s (the same
//! error, except that `nan` is an error for the formats without a NaN), or a result that is
//! not the exact decimal rounded once: the decimal must lie between the midpoints with the
//! result's neighbouring values (on a midpoint, the result must be the even code, for E8M0
//! the upper one), or beyond the overflow threshold for an overflow result. The midpoints
//! are `f64`s; the string is compared with their exact decimal expansion (core's
//! exact `{:.Ne}`) digit by digit here, independently of vcvt's parser.

use std::cmp::Ordering;
use std::str::FromStr;

use vcvt::{
    BF16, F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FNUZ, F8E4M3IEEE, F8E5M2,
    F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, Overflow,
};

/// What the harness needs of an element type.
pub trait Parsed: Copy + FromStr<Err = std::num::ParseFloatError> {
    /// Name in messages.
    const NAME: &'static str;
    /// Width of a code.
    const BITS: u32;
    /// Parses with a policy.
    fn parse_with(s: &str, o: Overflow) -> Result<Self, std::num::ParseFloatError>;
    /// The code.
    fn code(self) -> u32;
    /// The element with a code.
    fn from_code(c: u32) -> Self;
    /// Its exact value.
    fn value(self) -> f64;
    /// Whether it is NaN.
    fn nan(self) -> bool;
    /// [`table`], computed once.
    fn cached_table() -> &'static (Vec<(f64, u32)>, f64);
}

macro_rules! parsed {
    ($($t:ident, $bits:literal;)*) => {$(
        impl Parsed for $t {
            const NAME: &'static str = stringify!($t);
            const BITS: u32 = $bits;
            fn parse_with(s: &str, o: Overflow) -> Result<Self, std::num::ParseFloatError> {
                $t::from_str_with(s, o)
            }
            fn code(self) -> u32 {
                self.to_bits() as u32
            }
            fn from_code(c: u32) -> Self {
                $t::from_bits(c as _)
            }
            fn value(self) -> f64 {
                self.to_f64()
            }
            fn nan(self) -> bool {
                self.is_nan()
            }
            fn cached_table() -> &'static (Vec<(f64, u32)>, f64) {
                static TABLE: std::sync::OnceLock<(Vec<(f64, u32)>, f64)> =
                    std::sync::OnceLock::new();
                TABLE.get_or_init(table::<$t>)
            }
        }
    )*};
}

parsed! {
    F16, 16; BF16, 16; F8E4M3, 8; F8E5M2, 8; F8E4M3FNUZ, 8; F8E5M2FNUZ, 8;
    F6E2M3, 6; F6E3M2, 6; F4E2M1, 4; F8E8M0, 8; F8E3M4, 8; F8E4M3IEEE, 8; F8E4M3B11FNUZ, 8;
    F8E5M3FNU, 8;
}

/// A decimal string's sign, significant digits (no leading zeros; empty for zero) and
/// exponent: `±0.d₁d₂… × 10^k`. `None` for inf/nan.
fn decimal(s: &str) -> Option<(bool, Vec<u8>, i64)> {
    let (neg, body) = match s.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        b => (false, b),
    };
    if body.first().is_some_and(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let (mant, exp) = match body.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => (&body[..i], &body[i + 1..]),
        None => (body, &body[..0]),
    };
    let exp: i64 = if exp.is_empty() {
        0
    } else {
        let (eneg, ed) = match exp {
            [b'-', d @ ..] => (true, d),
            [b'+', d @ ..] => (false, d),
            d => (false, d),
        };
        let mut v: i64 = 0;
        for &b in ed {
            v = (v * 10 + i64::from(b - b'0')).min(1 << 40);
        }
        if eneg { -v } else { v }
    };
    let int_len = mant.iter().position(|&b| b == b'.').unwrap_or(mant.len()) as i64;
    let all: Vec<u8> = mant
        .iter()
        .filter(|&&b| b != b'.')
        .map(|&b| b - b'0')
        .collect();
    let lead = all.iter().take_while(|&&d| d == 0).count();
    let mut d = all[lead..].to_vec();
    while d.last() == Some(&0) {
        d.pop();
    }
    Some((neg, d, int_len - lead as i64 + exp))
}

/// Compares the magnitude `0.d × 10^k` (d empty: zero) with the non-negative `f64` `m`.
fn cmp_mag(d: &[u8], k: i64, m: f64) -> Ordering {
    if m == 0.0 {
        return if d.is_empty() {
            Ordering::Equal
        } else {
            Ordering::Greater
        };
    }
    if d.is_empty() {
        return Ordering::Less;
    }
    // Enough digits for the exact expansion of m = M·2^E (M odd): M·5^-E has at most
    // 16 + 0.7·(-E) digits; an integer below 2^1024 at most 309.
    let bits = m.to_bits();
    let (man, exp) = (
        (bits & ((1 << 52) - 1)) | (1 << 52),
        ((bits >> 52) & 0x7FF) as i64 - 1075,
    );
    let e = exp + i64::from(man.trailing_zeros());
    let prec = if e >= 0 {
        310
    } else {
        (18 + (-e) * 7 / 10) as usize
    };
    let s = format!("{m:.prec$e}");
    let (mm, me) = s.split_once('e').unwrap();
    let mut md: Vec<u8> = mm
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    while md.last() == Some(&0) {
        md.pop();
    }
    let mk = me.parse::<i64>().unwrap() + 1;
    k.cmp(&mk).then_with(|| d.cmp(&md[..]))
}

/// Checks one string for type `T`; `Err` describes the failure.
pub fn check<T: Parsed>(s: &str) -> Result<(), String> {
    let want = s.parse::<f32>().map(|_| ());
    let no_nan = matches!(T::NAME, "F6E2M3" | "F6E3M2" | "F4E2M1");
    let is_nan_str = want.is_ok() && s.to_ascii_lowercase().contains("nan");
    for o in [Overflow::Saturate, Overflow::NonSaturating] {
        let got = T::parse_with(s, o);
        match (&got, &want) {
            (Err(e), Ok(())) if no_nan && is_nan_str && *e == "x".parse::<f32>().unwrap_err() => {
                continue;
            }
            (Ok(_), Ok(())) if !(no_nan && is_nan_str) => {}
            (Err(a), Err(b)) if a == b => continue,
            _ => {
                return Err(format!(
                    "{} {s:?} {o:?}: got {:?}, f32 gives {want:?}",
                    T::NAME,
                    got.map(T::code)
                ));
            }
        }
        let x = got.unwrap();
        if let Some((neg, d, k)) = decimal(s) {
            verify::<T>(s, o, x, neg, &d, k)?;
        }
    }
    Ok(())
}

/// The positive values in order with their codes, and the overflow threshold's upper
/// neighbour (MAX + ulp; E8M0: 2·MAX).
fn table<T: Parsed>() -> (Vec<(f64, u32)>, f64) {
    let mut v: Vec<(f64, u32)> = (0..1u32 << T::BITS)
        .map(T::from_code)
        .filter(|x| !x.nan() && x.value().is_finite() && x.value().is_sign_positive())
        .map(|x| (x.value(), x.code()))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = v.len();
    let over = if T::NAME == "F8E8M0" {
        2.0 * v[n - 1].0
    } else {
        2.0 * v[n - 1].0 - v[n - 2].0
    };
    (v, over)
}

fn verify<T: Parsed>(
    s: &str,
    o: Overflow,
    x: T,
    neg: bool,
    d: &[u8],
    k: i64,
) -> Result<(), String> {
    let e8m0 = T::NAME == "F8E8M0";
    let (vals, over) = T::cached_table();
    let over = *over;
    let fail = |why: &str| Err(format!("{} {s:?} {o:?} -> {:#x}: {why}", T::NAME, x.code()));
    // The unsigned format: a negative value other than zero has no code (NaN); -0 is +0.
    let unsigned = T::NAME == "F8E5M3FNU";
    if unsigned && neg && !d.is_empty() {
        return if x.nan() {
            Ok(())
        } else {
            fail("an unsigned format's negative value is NaN")
        };
    }
    if e8m0 && (neg || d.is_empty()) {
        return if x.nan() {
            Ok(())
        } else {
            fail("E8M0 of a zero or negative value is NaN")
        };
    }
    let (vmax, _) = vals[vals.len() - 1];
    let thr = (vmax + over) / 2.0;
    let max_even = vals[vals.len() - 1].1 % 2 == 0 && !e8m0;
    let beyond = match cmp_mag(d, k, thr) {
        Ordering::Greater => true,
        Ordering::Equal => !max_even,
        Ordering::Less => false,
    };
    let v = x.value();
    if x.nan() || v.is_infinite() || (beyond && o == Overflow::Saturate) {
        // Overflow: NaN/inf only NonSaturating, MAX under Saturate.
        if !beyond {
            return fail("overflow result for a value below the threshold");
        }
        let sat_ok = o == Overflow::Saturate && v.abs() == vmax;
        let ns_ok = o == Overflow::NonSaturating && (x.nan() || v.is_infinite());
        let always_sat = matches!(T::NAME, "F6E2M3" | "F6E3M2" | "F4E2M1");
        if !(sat_ok || ns_ok || (always_sat && v.abs() == vmax)) {
            return fail("wrong overflow code");
        }
        return Ok(());
    }
    if beyond && !matches!(T::NAME, "F6E2M3" | "F6E3M2" | "F4E2M1") {
        return fail("a value beyond the threshold did not overflow");
    }
    if beyond {
        return if v.abs() == vmax {
            Ok(())
        } else {
            fail("fp6/fp4 saturate")
        };
    }
    // Sign: kept, except zero in the fnuz formats (+0 only).
    let fnuz_zero = (T::NAME.ends_with("FNUZ") || unsigned) && v == 0.0;
    if !e8m0 && !fnuz_zero && (v.is_sign_negative() != neg) {
        return fail("sign");
    }
    let a = v.abs();
    let i = vals.iter().position(|&(w, _)| w == a).unwrap();
    let code = vals[i].1;
    let even = code % 2 == 0;
    // Lower midpoint: the decimal must not be below it (on it: this code is even, or E8M0).
    if i > 0 {
        let m = (vals[i - 1].0 + a) / 2.0;
        match cmp_mag(d, k, m) {
            Ordering::Less => return fail("below the lower midpoint"),
            Ordering::Equal if !(even || e8m0) => return fail("tie to an odd code"),
            _ => {}
        }
    }
    let next = if i + 1 < vals.len() {
        vals[i + 1].0
    } else {
        over
    };
    let m = (a + next) / 2.0;
    match cmp_mag(d, k, m) {
        Ordering::Greater => return fail("above the upper midpoint"),
        Ordering::Equal if e8m0 || !even => return fail("tie to the wrong code"),
        _ => {}
    }
    Ok(())
}

/// Runs every type on one input (bytes that are not UTF-8 are skipped).
pub fn run(data: &[u8]) -> Result<(), String> {
    let Ok(s) = std::str::from_utf8(data) else {
        return Ok(());
    };
    check::<F16>(s)?;
    check::<BF16>(s)?;
    check::<F8E4M3>(s)?;
    check::<F8E5M2>(s)?;
    check::<F8E4M3FNUZ>(s)?;
    check::<F8E5M2FNUZ>(s)?;
    check::<F6E2M3>(s)?;
    check::<F6E3M2>(s)?;
    check::<F4E2M1>(s)?;
    check::<F8E8M0>(s)?;
    check::<F8E3M4>(s)?;
    check::<F8E4M3IEEE>(s)?;
    check::<F8E4M3B11FNUZ>(s)?;
    check::<F8E5M3FNU>(s)
}
