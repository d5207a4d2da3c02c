//! Text (issue 16): printing and parsing of every element type, against independent oracles.
//!
//! * `tests/data/text/*.tsv` come from `scripts/gen_text_vectors.py`, an exact-rational
//!   (`fractions.Fraction`) oracle built from the format definitions and the definition of
//!   "shortest, closest, ties up" by brute force; `.ci/text.sh` regenerates and compares them.
//!   `digests.tsv` holds the SHA-256 of each format's full dump (`code\t{}\t{:?}\t{:e}`).
//! * F16: the dump's SHA-256 is also the one of Rust nightly core `f16`
//!   (`scripts/f16_core_dump.rs`, checked again by `.ci/text.sh`).
//! * Parsing at every decision boundary of every format: the boundary's exact decimal comes
//!   from core's exact `f64` formatting (`{:.150e}`), the expected codes from the boundary's
//!   neighbours and the tie-to-even rule, written here.
//! * Shortest and closest, per code, using core's exact `f64` digits of the value: the
//!   (n−1)-digit neighbours do not parse back, the other n-digit candidate is farther or
//!   loses the tie.
//! * Flags and precisions against `f32`'s own formatting; the grammar against `f32::from_str`.

use std::fmt::{self, Debug, Display, Formatter, LowerExp, UpperExp, Write as _};
use std::num::ParseFloatError;
use std::str::FromStr;

use vcvt::{
    BF16, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FNUZ, F8E4M3IEEE,
    F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, Overflow,
};

/// What the tests need of an element type.
trait Text:
    Copy + Display + Debug + LowerExp + UpperExp + FromStr<Err = std::num::ParseFloatError>
{
    const NAME: &'static str;
    const BITS: u32;
    fn from_code(c: u32) -> Self;
    fn code(self) -> u32;
    fn exact_string(self) -> String;
    fn parse_with(s: &str, o: Overflow) -> Result<Self, std::num::ParseFloatError>;
    fn f32(self) -> f32;
    fn nan(self) -> bool;
}

macro_rules! text {
    ($($t:ident, $name:literal, $bits:literal;)*) => {$(
        impl Text for $t {
            const NAME: &'static str = $name;
            const BITS: u32 = $bits;
            fn from_code(c: u32) -> Self {
                $t::from_bits(c as _)
            }
            fn code(self) -> u32 {
                self.to_bits() as u32
            }
            fn exact_string(self) -> String {
                self.exact().to_string()
            }
            fn parse_with(s: &str, o: Overflow) -> Result<Self, std::num::ParseFloatError> {
                $t::from_str_with(s, o)
            }
            fn f32(self) -> f32 {
                self.to_f32()
            }
            fn nan(self) -> bool {
                self.is_nan()
            }
        }
    )*};
}

text! {
    F16, "f16", 16;
    BF16, "bf16", 16;
    F8E4M3, "f8e4m3", 8;
    F8E5M2, "f8e5m2", 8;
    F8E4M3FNUZ, "f8e4m3fnuz", 8;
    F8E5M2FNUZ, "f8e5m2fnuz", 8;
    F6E2M3, "f6e2m3", 6;
    F6E3M2, "f6e3m2", 6;
    F4E2M1, "f4e2m1", 4;
    F8E8M0, "f8e8m0", 8;
    F8E3M4, "f8e3m4", 8;
    F8E4M3IEEE, "f8e4m3ieee", 8;
    F8E4M3B11FNUZ, "f8e4m3b11fnuz", 8;
    F8E5M3FNU, "f8e5m3fnu", 8;
}

/// The four ways a value prints; the formatter's flags (width, precision, sign, fill) pass
/// through unchanged to the type's own `fmt`.
#[derive(Clone, Copy)]
enum Form {
    Display,
    Debug,
    LowerExp,
    UpperExp,
}

/// A format named at run time. Only the thin functions stored here name the type (one small
/// copy of each per format); the checks below take `&Fmt` and compile once, not 14 times.
struct Fmt {
    name: &'static str,
    bits: u32,
    fmt_fn: fn(u32, Form, &mut Formatter<'_>) -> fmt::Result,
    exact_fn: fn(u32) -> String,
    parse_with_fn: fn(&str, Overflow) -> Result<u32, ParseFloatError>,
    parse_fn: fn(&str) -> Result<u32, ParseFloatError>,
    f32_fn: fn(u32) -> f32,
    nan_fn: fn(u32) -> bool,
}

fn fmt_of<T: Text>(c: u32, form: Form, f: &mut Formatter<'_>) -> fmt::Result {
    let x = T::from_code(c);
    match form {
        Form::Display => Display::fmt(&x, f),
        Form::Debug => Debug::fmt(&x, f),
        Form::LowerExp => LowerExp::fmt(&x, f),
        Form::UpperExp => UpperExp::fmt(&x, f),
    }
}

fn fmt<T: Text>() -> Fmt {
    Fmt {
        name: T::NAME,
        bits: T::BITS,
        fmt_fn: fmt_of::<T>,
        exact_fn: |c| T::from_code(c).exact_string(),
        parse_with_fn: |s, o| T::parse_with(s, o).map(T::code),
        parse_fn: |s| s.parse::<T>().map(T::code),
        f32_fn: |c| T::from_code(c).f32(),
        nan_fn: |c| T::from_code(c).nan(),
    }
}

/// Every format, in this order; the first ten are the ones with oracle vectors.
fn formats() -> [Fmt; 14] {
    [
        fmt::<F16>(),
        fmt::<BF16>(),
        fmt::<F8E4M3>(),
        fmt::<F8E5M2>(),
        fmt::<F8E4M3FNUZ>(),
        fmt::<F8E5M2FNUZ>(),
        fmt::<F6E2M3>(),
        fmt::<F6E3M2>(),
        fmt::<F4E2M1>(),
        fmt::<F8E8M0>(),
        fmt::<F8E3M4>(),
        fmt::<F8E4M3IEEE>(),
        fmt::<F8E4M3B11FNUZ>(),
        fmt::<F8E5M3FNU>(),
    ]
}

/// The formats with vectors in `tests/data/text` (the first ten of [`formats`]).
fn vector_formats() -> Vec<Fmt> {
    formats().into_iter().take(10).collect()
}

/// One code of a format: prints, parses and converts through the format's functions.
#[derive(Clone, Copy)]
struct V<'a> {
    c: u32,
    t: &'a Fmt,
}

impl Fmt {
    fn value(&self, c: u32) -> V<'_> {
        V { c, t: self }
    }
    fn parse_with(&self, s: &str, o: Overflow) -> Result<V<'_>, ParseFloatError> {
        (self.parse_with_fn)(s, o).map(|c| self.value(c))
    }
    /// `FromStr`, the default policy.
    fn parse(&self, s: &str) -> Result<V<'_>, ParseFloatError> {
        (self.parse_fn)(s).map(|c| self.value(c))
    }
}

impl V<'_> {
    fn code(self) -> u32 {
        self.c
    }
    fn exact_string(self) -> String {
        (self.t.exact_fn)(self.c)
    }
    fn f32(self) -> f32 {
        (self.t.f32_fn)(self.c)
    }
    fn nan(self) -> bool {
        (self.t.nan_fn)(self.c)
    }
}

impl Display for V<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        (self.t.fmt_fn)(self.c, Form::Display, f)
    }
}
impl Debug for V<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        (self.t.fmt_fn)(self.c, Form::Debug, f)
    }
}
impl LowerExp for V<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        (self.t.fmt_fn)(self.c, Form::LowerExp, f)
    }
}
impl UpperExp for V<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        (self.t.fmt_fn)(self.c, Form::UpperExp, f)
    }
}

fn codes(t: &Fmt) -> impl Iterator<Item = V<'_>> {
    (0..1u32 << t.bits).map(move |c| t.value(c))
}

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/text/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

// ------------------------------------------------------------------ SHA-256 (FIPS 180-4)

fn sha256(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in msg.chunks(64) {
        let mut w = [0u32; 64];
        for i in 0..16 {
            w[i] = u32::from_be_bytes(block[4 * i..4 * i + 4].try_into().unwrap());
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

#[test]
fn sha256_known_answer() {
    assert_eq!(
        sha256(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

// ------------------------------------------------------------------ golden output

/// SHA-256 of `format!("{:04x}\t{}\t{:?}\t{:e}\n")` over every code of Rust nightly core
/// `f16` (1.97, 2026-05-19; issue 16).
const CORE_F16_DUMP_SHA256: &str =
    "68332aa625cad1729c6883586aa1285fcd4bd663779f4f93cc73480145f93e86";

fn dump(t: &Fmt) -> String {
    let width = if t.bits > 8 { 4 } else { 2 };
    let mut s = String::new();
    for x in codes(t) {
        writeln!(s, "{:0width$x}\t{}\t{:?}\t{:e}", x.code(), x, x, x).unwrap();
    }
    s
}

#[test]
fn every_code_matches_the_oracle_digest() {
    let digests = data("digests.tsv");
    let mut bad = Vec::new();
    fn check(t: &Fmt, digests: &str, bad: &mut Vec<String>) {
        let want = digests
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{}\t", t.name)))
            .unwrap_or_else(|| panic!("no digest for {}", t.name));
        let d = dump(t);
        let got = sha256(d.as_bytes());
        if t.name == "f16" {
            assert_eq!(
                want, CORE_F16_DUMP_SHA256,
                "the oracle's F16 differs from core f16"
            );
        }
        if got != want {
            let path = std::env::temp_dir().join(format!("vcvt_text_{}.tsv", t.name));
            std::fs::write(&path, d).unwrap();
            bad.push(format!(
                "{}: dump {} (written to {}; compare with `python3 scripts/gen_text_vectors.py --dump {}`)",
                t.name,
                got,
                path.display(),
                t.name
            ));
        }
    }
    for t in &vector_formats() {
        check(t, &digests, &mut bad);
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn fmt_vectors() {
    let text = data("fmt.tsv");
    let fs = vector_formats();
    let mut n = 0;
    let mut bad = Vec::new();
    fn row(t: &Fmt, c: u32, want: &[&str], bad: &mut Vec<String>) {
        let x = t.value(c);
        let got = [
            x.to_string(),
            format!("{x:?}"),
            format!("{x:e}"),
            x.exact_string(),
        ];
        if got.iter().zip(want).any(|(g, w)| g != w) {
            bad.push(format!("{} {c:#x}: got {got:?}, want {want:?}", t.name));
        }
    }
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let c = u32::from_str_radix(f[1], 16).unwrap();
        let want = &f[2..6];
        let t = fs
            .iter()
            .find(|t| t.name == f[0])
            .unwrap_or_else(|| panic!("unknown format {}", f[0]));
        row(t, c, want, &mut bad);
        n += 1;
    }
    assert!(n > 4000);
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad[..bad.len().min(20)].join("\n")
    );
}

#[test]
fn documented_examples() {
    assert_eq!(F8E4M3::MAX.to_string(), "450");
    assert_eq!(F8E4M3::MAX.exact().to_string(), "448");
    assert_eq!(F8E5M2::MAX.to_string(), "60000");
    assert_eq!(F8E5M2::MAX.exact().to_string(), "57344");
    assert_eq!(F16::MAX.to_string(), "65500");
    assert_eq!(format!("{:?}", F16::MAX), "65500.0");
    assert_eq!(format!("{:e}", F16::MAX), "6.55e4");
    assert_eq!(format!("{:E}", F16::MAX), "6.55E4");
    assert_eq!(F16::from_f32(0.1).to_string(), "0.1");
    assert_eq!(F16::from_f32(0.1).exact().to_string(), "0.0999755859375");
    assert_eq!(format!("{:?}", F16::MIN_POSITIVE_SUBNORMAL), "6e-8");
    assert_eq!(F16::MIN_POSITIVE_SUBNORMAL.to_string(), "0.00000006");
    assert_eq!(BF16::from_f32(0.1).to_string(), "0.1");
    assert_eq!(F8E8M0::from_f32(1024.0).to_string(), "1024");
    assert_eq!(
        format!("{:?}", F8E8M0::MAX),
        "1.70141183460469231731687303715884105728e38"
    );
    assert_eq!(format!("{:.3}", F16::from_f32(0.1)), "0.100");
    assert_eq!(format!("{:.2e}", F16::from_f32(0.1)), "1.00e-1");
    assert_eq!(F16::NEG_ZERO.to_string(), "-0");
    assert_eq!(format!("{:?}", F16::NEG_ZERO), "-0.0");
    assert_eq!(format!("{:e}", F16::NEG_ZERO), "-0e0");
    assert_eq!(F16::NAN.to_string(), "NaN");
    assert_eq!(F16::NEG_INFINITY.to_string(), "-inf");
    assert_eq!(F8E4M3FNUZ::NAN.to_string(), "NaN");
    assert_eq!(
        format!(
            "{:#x} {:#b} {:o} {:X}",
            F16::ONE,
            F8E4M3::ONE,
            F16::ONE,
            BF16::MAX
        ),
        "0x3c00 0b111000 36000 7F7F"
    );
    assert_eq!(format!("{:02x}", F4E2M1x2::from_bits(0xF1)), "f1");
    assert_eq!(
        format!("{:?}", F4E2M1x2::from_bits(0xF1)),
        "F4E2M1x2(0.5, -6.0)"
    );
    // "1.000488281250000001" is just above the midpoint between 1 and the next F16: one
    // rounding gives the next F16 (via f32 it would be 1.0).
    assert_eq!(
        "1.000488281250000001".parse::<F16>().unwrap().to_bits(),
        0x3C01
    );
    assert_eq!("1.00048828125".parse::<F16>().unwrap().to_bits(), 0x3C00);
}

// ------------------------------------------------------------------ round trips

#[test]
fn every_code_round_trips_through_every_form() {
    fn check(t: &Fmt) {
        for x in codes(t) {
            let forms = [
                x.to_string(),
                format!("{x:?}"),
                format!("{x:e}"),
                format!("{x:E}"),
                format!("{x:+}"),
                x.exact_string(),
            ];
            for s in &forms {
                let back = t
                    .parse_with(s, Overflow::NonSaturating)
                    .unwrap_or_else(|e| panic!("{} {:#x}: {s:?}: {e}", t.name, x.code()));
                if x.nan() {
                    assert!(back.nan(), "{} {:#x}: {s:?}", t.name, x.code());
                    continue;
                }
                assert_eq!(back.code(), x.code(), "{} {s:?}", t.name);
                let dflt = t.parse(s).unwrap();
                // The one documented exception: with the fp8 default `Saturate`, a printed
                // infinity (E5M2, E3M4, IEEE-style E4M3) parses back to ±MAX.
                let fp8_inf = matches!(t.name, "f8e5m2" | "f8e3m4" | "f8e4m3ieee");
                if !(fp8_inf && s.contains("inf")) {
                    assert_eq!(dflt.code(), x.code(), "{} {s:?} (default policy)", t.name);
                }
            }
        }
    }
    for t in &formats() {
        check(t);
    }
}

/// The exact digits of a finite `f64`: `(digits without trailing zeros, k)` with the value
/// `0.d₁d₂… × 10^k`, from core's exact formatting (independent of vcvt).
fn exact_f64(x: f64) -> (Vec<u8>, i32) {
    let s = format!("{:.150e}", x.abs());
    let (m, e) = s.split_once('e').unwrap();
    let mut d: Vec<u8> = m
        .bytes()
        .filter(|b| b.is_ascii_digit())
        .map(|b| b - b'0')
        .collect();
    assert_eq!(d[d.len() - 1], 0, "{x}: 150 digits were not enough");
    while d.len() > 1 && *d.last().unwrap() == 0 {
        d.pop();
    }
    (d, e.parse::<i32>().unwrap() + 1)
}

/// `0.d × 10^k` in scientific notation.
fn sci(d: &[u8], k: i32) -> String {
    let mut s = String::new();
    s.push((b'0' + d[0]) as char);
    if d.len() > 1 {
        s.push('.');
        s.extend(d[1..].iter().map(|&x| (b'0' + x) as char));
    }
    format!("{s}e{}", k - 1)
}

/// `d` truncated to `n` digits, plus one unit in the last place if `up` (with carry).
fn truncate(d: &[u8], k: i32, n: usize, up: bool) -> (Vec<u8>, i32) {
    let mut t: Vec<u8> = d
        .iter()
        .copied()
        .chain(std::iter::repeat(0))
        .take(n)
        .collect();
    let mut k = k;
    if up {
        let mut i = n;
        loop {
            if i == 0 {
                t.insert(0, 1);
                t.pop();
                k += 1;
                break;
            }
            i -= 1;
            if t[i] == 9 {
                t[i] = 0;
            } else {
                t[i] += 1;
                break;
            }
        }
    }
    (t, k)
}

#[test]
fn shortest_and_closest_every_code() {
    fn check(t: &Fmt) {
        for x in codes(t) {
            let v = x.f32();
            if !v.is_finite() || v <= 0.0 || x.nan() {
                continue;
            }
            let (ed, ek) = exact_f64(f64::from(v));
            let shown = format!("{x:e}");
            if t.name == "f8e8m0" {
                assert_eq!(shown, sci(&ed, ek), "E8M0 prints its exact value");
                continue;
            }
            let (mant, exp) = shown.split_once('e').unwrap();
            let digits: Vec<u8> = mant
                .bytes()
                .filter(|b| b.is_ascii_digit())
                .map(|b| b - b'0')
                .collect();
            let (n, k) = (digits.len(), exp.parse::<i32>().unwrap() + 1);
            // fp6 and fp4 always saturate, so above MAX everything parses back to MAX; the
            // printed digits follow the nearest rule with MAX + ulp as the next value (as
            // for every format), so there the interval ends at MAX + ulp/2.
            let always_saturates = matches!(t.name, "f6e2m3" | "f6e3m2" | "f4e2m1");
            let is_max = t.parse_with("1e30", Overflow::Saturate).unwrap().code() == x.code();
            let limit = if always_saturates && is_max {
                let prev = f64::from(t.value(x.code() - 1).f32());
                f64::from(v) + (f64::from(v) - prev) / 2.0
            } else {
                f64::INFINITY
            };
            let parses_back = |d: &[u8], k: i32| {
                let s = sci(d, k);
                t.parse_with(&s, Overflow::NonSaturating).unwrap().code() == x.code()
                    && s.parse::<f64>().unwrap() < limit
            };
            let ctx = || format!("{} {:#x} shown {shown}", t.name, x.code());
            assert!(parses_back(&digits, k), "{}", ctx());
            // No (n-1)-digit decimal next to the value parses back.
            if n > 1 {
                for up in [false, true] {
                    let (t, tk) = truncate(&ed, ek, n - 1, up);
                    assert!(
                        !parses_back(&t, tk),
                        "{}: {} parses back",
                        ctx(),
                        sci(&t, tk)
                    );
                }
            }
            // The shown digits are one of the two n-digit neighbours; the other one does not
            // parse back, or is farther, or ties and is the smaller one.
            let down = truncate(&ed, ek, n, false);
            let up = truncate(&ed, ek, n, true);
            let exact_n = ed.len() <= n;
            let ours = (digits.clone(), k);
            let rest: &[u8] = if exact_n { &[] } else { &ed[n..] };
            // the remainder below the n-th digit compared with half a unit
            let half = match rest.first() {
                None => std::cmp::Ordering::Less,
                Some(&r) if r != 5 => r.cmp(&5),
                Some(_) => {
                    if rest[1..].iter().any(|&r| r != 0) {
                        std::cmp::Ordering::Greater
                    } else {
                        std::cmp::Ordering::Equal
                    }
                }
            };
            if exact_n {
                assert_eq!(ours, down, "{}: the exact value has <= n digits", ctx());
                continue;
            }
            let norm = |(d, k): (Vec<u8>, i32)| {
                let mut d = d;
                while d.len() > 1 && *d.last().unwrap() == 0 {
                    d.pop();
                }
                (d, k)
            };
            let (down, up) = (norm(down), norm(up));
            let (dn_ok, up_ok) = (parses_back(&down.0, down.1), parses_back(&up.0, up.1));
            let want = match (dn_ok, up_ok) {
                (true, false) => down,
                (false, true) => up,
                (true, true) => {
                    if half == std::cmp::Ordering::Less {
                        down
                    } else {
                        up // closer, or the tie going up
                    }
                }
                (false, false) => panic!("{}: neither n-digit neighbour parses back", ctx()),
            };
            assert_eq!(ours, want, "{}", ctx());
        }
    }
    for t in &formats() {
        check(t);
    }
}

// ------------------------------------------------------------------ parsing

fn hex_code(s: &str) -> Option<u32> {
    if s == "err" {
        None
    } else {
        Some(u32::from_str_radix(s, 16).unwrap())
    }
}

#[test]
fn parse_vectors() {
    let text = data("parse.tsv");
    let fs = vector_formats();
    let mut bad = Vec::new();
    let mut n = 0;
    fn row(t: &Fmt, s: &str, sat: Option<u32>, nonsat: Option<u32>, bad: &mut Vec<String>) {
        for (o, want) in [(Overflow::Saturate, sat), (Overflow::NonSaturating, nonsat)] {
            let got = t.parse_with(s, o).ok().map(V::code);
            if got != want {
                bad.push(format!(
                    "{} {s:?} {o:?}: got {got:x?}, want {want:x?}",
                    t.name
                ));
            }
        }
    }
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (s, a, b) = (f[1], hex_code(f[2]), hex_code(f[3]));
        let t = fs
            .iter()
            .find(|t| t.name == f[0])
            .unwrap_or_else(|| panic!("unknown format {}", f[0]));
        row(t, s, a, b, &mut bad);
        n += 1;
    }
    assert!(n > 20000);
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad[..bad.len().min(20)].join("\n")
    );
}

/// What overflow gives, per policy, for a positive and a negative value (from the contract
/// table in `src/lib.rs`, written out here).
fn overflow_codes(t: &Fmt, o: Overflow) -> (u32, u32) {
    let sat = matches!(o, Overflow::Saturate);
    match (t.name, sat) {
        ("f16", true) => (0x7BFF, 0xFBFF),
        ("f16", false) => (0x7C00, 0xFC00),
        ("bf16", true) => (0x7F7F, 0xFF7F),
        ("bf16", false) => (0x7F80, 0xFF80),
        ("f8e4m3", true) => (0x7E, 0xFE),
        ("f8e4m3", false) => (0x7F, 0xFF),
        ("f8e5m2", true) => (0x7B, 0xFB),
        ("f8e5m2", false) => (0x7C, 0xFC),
        ("f8e4m3fnuz" | "f8e5m2fnuz", true) => (0x7F, 0xFF),
        ("f8e4m3fnuz" | "f8e5m2fnuz", false) => (0x80, 0x80),
        ("f6e2m3" | "f6e3m2", _) => (0x1F, 0x3F),
        ("f4e2m1", _) => (0x7, 0xF),
        ("f8e8m0", true) => (0xFE, 0xFF),
        ("f8e8m0", false) => (0xFF, 0xFF),
        ("f8e3m4", true) => (0x6F, 0xEF),
        ("f8e3m4", false) => (0x70, 0xF0),
        ("f8e4m3ieee", true) => (0x77, 0xF7),
        ("f8e4m3ieee", false) => (0x78, 0xF8),
        ("f8e4m3b11fnuz", true) => (0x7F, 0xFF),
        ("f8e4m3b11fnuz", false) => (0x80, 0x80),
        // Unsigned: a negative value has no code (NaN, 0xFF) whatever the policy.
        ("f8e5m3fnu", true) => (0xFE, 0xFF),
        ("f8e5m3fnu", false) => (0xFF, 0xFF),
        _ => unreachable!(),
    }
}

/// The code of `-x` for a positive-side expected code `c`.
fn negate(t: &Fmt, c: u32) -> u32 {
    match t.name {
        "f8e8m0" => 0xFF,
        // Unsigned: no code for a negative value (the strings negated here are never zero).
        "f8e5m3fnu" => 0xFF,
        "f8e4m3fnuz" | "f8e5m2fnuz" | "f8e4m3b11fnuz" if c == 0 => 0,
        _ => c | 1 << (t.bits - 1),
    }
}

#[test]
fn parse_every_boundary() {
    fn check(t: &Fmt) {
        // The positive finite values in order, with their codes (zero included).
        let mut vals: Vec<(f64, u32)> = codes(t)
            .filter(|x| !x.nan() && x.f32().is_finite() && x.f32().is_sign_positive())
            .map(|x| (f64::from(x.f32()), x.code()))
            .collect();
        vals.sort_by(|a, b| a.0.total_cmp(&b.0));
        let e8m0 = t.name == "f8e8m0";
        let (vmax, cmax) = *vals.last().unwrap();
        let over = if e8m0 {
            2.0 * vmax
        } else {
            2.0 * vmax - vals[vals.len() - 2].0
        };
        let mut pairs: Vec<(f64, Option<u32>, f64, Option<u32>)> = vals
            .windows(2)
            .map(|w| (w[0].0, Some(w[0].1), w[1].0, Some(w[1].1)))
            .collect();
        pairs.push((vmax, Some(cmax), over, None));
        let mut count = 0;
        for (i, &(a, ca, b, cb)) in pairs.iter().enumerate() {
            let mid = (a + b) / 2.0;
            let (d, k) = exact_f64(mid);
            // The tie: the even code (E8M0: up; above MAX, the even one of MAX and MAX + 1).
            let tie_up = if e8m0 { true } else { ca.unwrap() % 2 == 1 };
            let top = cb.is_none();
            let policies: &[Overflow] = if top || i == 0 {
                &[Overflow::Saturate, Overflow::NonSaturating]
            } else {
                &[Overflow::Saturate]
            };
            let digits = |d: &[u8]| d.iter().map(|&x| (b'0' + x) as char).collect::<String>();
            let dstr = digits(&d);
            let w = d.len().max(40);
            // positional spelling of 0.d × 10^k
            let positional = |ds: &str, k: i32| -> String {
                let n = ds.len() as i32;
                if k <= 0 {
                    format!(".{}{ds}", "0".repeat((-k) as usize))
                } else if k < n {
                    format!("{}.{}", &ds[..k as usize], &ds[k as usize..])
                } else {
                    format!("{ds}{}.", "0".repeat((k - n) as usize))
                }
            };
            // (string, side): side -1 below, 0 the boundary, +1 above.
            let mut cases: Vec<(String, i32)> = vec![
                (sci(&d, k), 0),
                (positional(&dstr, k), 0),
                (format!("{dstr:0<w$}e{}", k - w as i32), 0),
                (format!("0.{dstr:0<800}e{k}"), 0),
            ];
            for n in [25usize, 60, 120] {
                if d.len() < n {
                    let above = format!("{dstr:0<width$}1", width = n - 1);
                    cases.push((format!("0.{above}e{k}"), 1));
                    let mut below = d.clone();
                    *below.last_mut().unwrap() -= 1;
                    let below = format!("{}{}", digits(&below), "9".repeat(n - d.len()));
                    cases.push((format!("0.{below}e{k}"), -1));
                    if n == 25 {
                        cases.push((positional(&above, k), 1));
                        cases.push((format!("0.{below:0<800}e{k}"), -1));
                    }
                }
            }
            for &o in policies {
                let (ov_pos, ov_neg) = overflow_codes(t, o);
                for (s, side) in &cases {
                    let up = *side > 0 || (*side == 0 && tie_up);
                    let want = if up {
                        cb.unwrap_or(ov_pos)
                    } else {
                        ca.unwrap()
                    };
                    let got = t.parse_with(s, o).map(V::code);
                    assert_eq!(got, Ok(want), "{} {s} {o:?}", t.name);
                    let want_neg = if up {
                        cb.map(|c| negate(t, c)).unwrap_or(ov_neg)
                    } else {
                        negate(t, ca.unwrap())
                    };
                    let got = t.parse_with(&format!("-{s}"), o).map(V::code);
                    assert_eq!(got, Ok(want_neg), "{} -{s} {o:?}", t.name);
                    count += 2;
                }
            }
        }
        assert!(count > 0);
    }
    for t in &formats() {
        check(t);
    }
}

#[test]
fn f16_subnormal_ties_round_to_even() {
    // (4k+1)·2^-25 is the tie between the codes 2k and 2k+1: the even one wins. Rust core's
    // f16 (nightly 1.97) rounds these 9 up.
    for k in 0..9u32 {
        let v = f64::from(4 * k + 1) * 2f64.powi(-25);
        let (d, e) = exact_f64(v);
        for s in [sci(&d, e), format!("{v:.40}")] {
            assert_eq!(s.parse::<F16>().unwrap().to_bits(), (2 * k) as u16, "{s}");
        }
    }
    assert_eq!(
        "2.98023223876953125e-8".parse::<F16>().unwrap().to_bits(),
        0
    );
    assert_eq!(
        "0.0000000298023223876953125000000"
            .parse::<F16>()
            .unwrap()
            .to_bits(),
        0
    );
}

#[test]
fn grammar_and_errors_are_f32s() {
    let strings = [
        "",
        " ",
        "+",
        "-",
        ".",
        "e",
        "e5",
        "1e",
        "1e+",
        "1.2.3",
        "1_000",
        "0x10",
        " 1",
        "1 ",
        "nan(1)",
        "inf",
        "-inf",
        "+inf",
        "infinity",
        "-Infinity",
        "INF",
        "infin",
        "nan",
        "-nan",
        "NAN",
        "+nan",
        "1",
        "-1",
        "+1",
        "1.",
        ".5",
        "-.5",
        "007",
        "1e3",
        "1E3",
        "1e+3",
        "1e-3",
        "1.5e-400",
        "1e99999999999999999999",
        "-0",
        "0e0",
        "١",
        "1f",
        "1.0f32",
        "+-1",
        "--1",
        "1e1.5",
    ];
    fn check(t: &Fmt, strings: &[&str]) {
        for s in strings {
            let want = s.parse::<f32>().map(|_| ());
            let got = t.parse(s).map(|_| ());
            let no_nan = matches!(t.name, "f6e2m3" | "f6e3m2" | "f4e2m1");
            if no_nan && want.is_ok() && s.to_ascii_lowercase().contains("nan") {
                assert_eq!(
                    got,
                    Err("x".parse::<f32>().unwrap_err()),
                    "{} {s:?}",
                    t.name
                );
            } else {
                assert_eq!(got, want, "{} {s:?}", t.name);
            }
        }
    }
    for t in &vector_formats() {
        check(t, &strings);
    }
    // Literal infinities are values beyond every limit: the overflow policy decides.
    assert_eq!("inf".parse::<F16>().unwrap(), F16::INFINITY);
    assert_eq!("inf".parse::<F8E5M2>().unwrap(), F8E5M2::MAX);
    assert!(
        F8E5M2::from_str_with("inf", Overflow::NonSaturating)
            .unwrap()
            .is_infinite()
    );
    assert_eq!("-inf".parse::<F8E4M3>().unwrap(), F8E4M3::MIN);
    assert!(
        F8E4M3::from_str_with("inf", Overflow::NonSaturating)
            .unwrap()
            .is_nan()
    );
    assert_eq!("inf".parse::<F8E8M0>().unwrap(), F8E8M0::MAX);
    assert!("1e-400".parse::<F8E8M0>().unwrap() == F8E8M0::MIN_POSITIVE);
    assert!("0".parse::<F8E8M0>().unwrap().is_nan());
}

// ------------------------------------------------------------------ flags and precision

#[test]
fn formatter_matrix_matches_f32() {
    fn check(t: &Fmt) {
        let step = if t.bits > 8 { 37 } else { 1 };
        for x in codes(t).step_by(step) {
            let v = x.f32();
            // With a precision: f32's formatting of the same (exactly representable) value.
            let prec = [
                (format!("{x:.0}"), format!("{v:.0}")),
                (format!("{x:.3}"), format!("{v:.3}")),
                (format!("{x:.10}"), format!("{v:.10}")),
                (format!("{x:+.2}"), format!("{v:+.2}")),
                (format!("{x:>12.1}"), format!("{v:>12.1}")),
                (format!("{x:.0e}"), format!("{v:.0e}")),
                (format!("{x:.2e}"), format!("{v:.2e}")),
                (format!("{x:.3E}"), format!("{v:.3E}")),
                (format!("{x:.3?}"), format!("{v:.3?}")),
            ];
            for (got, want) in prec {
                assert_eq!(got, want, "{} {:#x}", t.name, x.code());
            }
            if t.name == "f8e8m0" {
                continue;
            }
            // Without one: the same layout as f32 gives a value with the same shortest digits.
            let y: f32 = x.to_string().parse().unwrap();
            if !x.nan() && y.to_string() != x.to_string() {
                continue; // f32's shortest digits of y differ: nothing to compare
            }
            let flags = [
                (format!("{x:+}"), format!("{y:+}")),
                (format!("{x:>12}"), format!("{y:>12}")),
                (format!("{x:<12}"), format!("{y:<12}")),
                (format!("{x:^12}"), format!("{y:^12}")),
                (format!("{x:012}"), format!("{y:012}")),
                (format!("{x:+012}"), format!("{y:+012}")),
                (format!("{x:*^15}"), format!("{y:*^15}")),
                (format!("{x:+?}"), format!("{y:+?}")),
                (format!("{x:>14?}"), format!("{y:>14?}")),
                (format!("{x:+e}"), format!("{y:+e}")),
                (format!("{x:012e}"), format!("{y:012e}")),
                (format!("{x:<10E}"), format!("{y:<10E}")),
            ];
            for (got, want) in flags {
                assert_eq!(got, want, "{} {:#x}", t.name, x.code());
            }
        }
    }
    for t in &formats() {
        check(t);
    }
}

/// `{:?}` and `{}` at the thresholds where core's `f32` `Debug` switches notation (issue 31):
/// scientific when `0 < |x| < 1e-4` or `|x| >= 1e16`, the literals rounded to `f32`.
///
/// For every format, the two positive codes nearest each threshold on each side (fewer where
/// the format's range ends before it; F16 and BF16 straddle 1e-4, BF16 also 1e16), and their
/// negatives. The oracle is core's `f32` formatting itself:
/// * `{:?}` and `{}` equal `f32`'s `{:?}` and `{}` of `y`, the `f32` that vcvt's printed digits
///   denote (the shortest digits of these codes have at most 4 significant digits, so they
///   are `y`'s own shortest digits, which is checked);
/// * the notation (plain or exponent) equals that of `f32`'s `{:?}` of the code's exact value,
///   except where the exact value and `y` lie on different sides of a threshold: there the
///   text follows `y` (BF16 `±0x5A0E` = ±9992361673228288 prints `1e16`, as `f32` prints
///   `1e16`; a plain `10000000000000000.0` is a text `f32` never prints), and that is the only
///   such code of any format;
/// * E8M0 prints exact digits, not shortest: its notation equals `f32`'s on the exact value,
///   and its `{}` core's exact digits of it (`{:.60}`, trailing zeros cut).
///
/// The full texts of these codes are also rows of `tests/data/text/fmt.tsv` (the exact
/// oracle, `scripts/gen_text_vectors.py`, which picks them by the same rule), which
/// `fmt_vectors` checks.
#[test]
fn notation_thresholds_match_f32() {
    fn sci(s: &str) -> bool {
        s.contains('e')
    }
    fn check(t: &Fmt, crossed: &mut Vec<String>) -> usize {
        let sign = if t.name == "f8e8m0" {
            0
        } else {
            1 << (t.bits - 1)
        };
        let mut pos: Vec<(f32, u32)> = codes(t)
            .filter(|x| x.code() & sign == 0 && x.f32().is_finite())
            .map(|x| (x.f32(), x.code()))
            .collect();
        pos.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut n = 0;
        for th in [1e-4f32, 1e16f32] {
            let i = pos.partition_point(|p| p.0 < th);
            for &(v, c) in &pos[i.saturating_sub(2)..(i + 2).min(pos.len())] {
                for c in [c, c | sign] {
                    let x = t.value(c);
                    if x.nan() {
                        continue; // the fnuz formats' 0x80, "-0"
                    }
                    let v = if c & sign != 0 { -v } else { v };
                    let (disp, dbg) = (x.to_string(), format!("{x:?}"));
                    let exact_dbg = format!("{v:?}");
                    let what = format!("{} {c:#x} ({v:e})", t.name);
                    assert!(
                        !sci(&disp),
                        "{what}: {{}} {disp} (f32's Display has no exponent)"
                    );
                    n += 1;
                    if t.name == "f8e8m0" {
                        assert_eq!(
                            sci(&dbg),
                            sci(&exact_dbg),
                            "{what}: {dbg} vs f32 {exact_dbg}"
                        );
                        // Core's exact digits of the value: every digit, trailing zeros cut.
                        let e = format!("{:.60}", f64::from(v));
                        assert_eq!(
                            disp,
                            e.trim_end_matches('0').trim_end_matches('.'),
                            "{what}"
                        );
                        continue;
                    }
                    let y: f32 = disp.parse().unwrap();
                    assert_eq!(y.to_string(), disp, "{what}: not f32's shortest digits");
                    assert_eq!(
                        dbg,
                        format!("{y:?}"),
                        "{what}: {{:?}} against f32's of {y:e}"
                    );
                    let sides = |a: f32| (a.abs() < 1e-4, a.abs() >= 1e16);
                    if sides(v) == sides(y) {
                        assert_eq!(
                            sci(&dbg),
                            sci(&exact_dbg),
                            "{what}: {dbg} vs f32 {exact_dbg}"
                        );
                    } else {
                        crossed.push(format!("{} {c:#x}", t.name));
                    }
                }
            }
        }
        assert!(n > 0, "{}: no code near a threshold", t.name);
        n
    }
    let mut crossed = Vec::new();
    let mut n = 0;
    for t in &vector_formats() {
        n += check(t, &mut crossed);
    }
    assert_eq!(crossed, ["bf16 0x5a0e", "bf16 0xda0e"]);
    // F16 and BF16: 4 codes at 1e-4; BF16 4 more at 1e16; every format its 2 largest.
    assert!(n >= 2 * (4 + 4 + 4 + 2 * 10), "{n} codes");
    // The crossing code, spelled out.
    assert_eq!(format!("{:?}", BF16::from_bits(0x5A0E)), "1e16");
    assert_eq!(BF16::from_bits(0x5A0E).to_string(), "10000000000000000");
    assert_eq!(
        format!("{:?}", BF16::from_bits(0x5A0D)),
        "9900000000000000.0"
    );
}

#[test]
fn half_reads_our_strings() {
    for c in 0..=u16::MAX {
        let x = F16::from_bits(c);
        if !x.is_nan() {
            let h: half::f16 = x.to_string().parse().unwrap();
            assert_eq!(h.to_bits(), c, "{x}");
        }
        let x = BF16::from_bits(c);
        if !x.is_nan() {
            let h: half::bf16 = x.to_string().parse().unwrap();
            assert_eq!(h.to_bits(), c, "{x}");
        }
    }
}

// ------------------------------------------------------------------ fuzz harness on stable

#[path = "../fuzz/src/text_harness.rs"]
mod text_harness;

#[test]
fn fuzz_harness_on_generated_strings() {
    // SplitMix64
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut strings: Vec<String> = Vec::new();
    // Random strings over the grammar's alphabet (mostly digits).
    let alphabet = b"0123456789012345678901234567890123456789.eE+-_ninfaty";
    for _ in 0..6000 {
        let len = (next() % 40) as usize;
        let s: String = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
            .collect();
        strings.push(s);
    }
    // Numbers near the values and boundaries of every format: a random code's value, or the
    // midpoint with its neighbour, printed exactly, with a digit changed or appended.
    for _ in 0..6000 {
        let c = (next() & 0xFFFF) as u16;
        let a = f64::from(F16::from_bits(c).to_f32());
        let b = f64::from(F16::from_bits(c.wrapping_add(1)).to_f32());
        let bf = f64::from(BF16::from_bits(c).to_f32());
        let e8 = f64::from(F8E4M3::from_bits(c as u8).to_f32());
        let e8n = f64::from(F8E4M3::from_bits((c as u8).wrapping_add(1)).to_f32());
        let x = match next() % 4 {
            0 => (a + b) / 2.0,
            1 => (e8 + e8n) / 2.0,
            2 => bf * 1.5,
            _ => a,
        };
        if !x.is_finite() {
            continue;
        }
        let mut s = format!("{x:.200e}");
        let (m, e) = s
            .split_once('e')
            .map(|(m, e)| (m.to_string(), e.to_string()))
            .unwrap();
        let m = m.trim_end_matches('0').trim_end_matches('.').to_string();
        s = match next() % 4 {
            0 => format!("{m}e{e}"),
            1 => format!(
                "{m}{}1e{e}",
                if m.contains('.') {
                    "0000000000000000000"
                } else {
                    ".0000000000000000000"
                }
            ),
            2 => {
                let mut t = m.into_bytes();
                let i = (next() as usize) % t.len();
                if t[i].is_ascii_digit() {
                    t[i] = b'0' + (next() % 10) as u8;
                }
                format!("{}e{e}", String::from_utf8(t).unwrap())
            }
            _ => format!("{m}999999999999999999999e{e}"),
        };
        strings.push(s);
    }
    for s in &strings {
        if let Err(msg) = text_harness::run(s.as_bytes()) {
            panic!("{msg}");
        }
    }
}

/// The parser's fast paths (a one-pass scan for at most 19 significant digits, `f64`
/// arithmetic for `|q| <= 22`, and a multiplication by `10^-n` checked against the boundary
/// pattern) and where they hand over to the general path: 19 and 20 significant digits,
/// exponents ±22 and ±23, mantissas around 2^53, subnormals, and strings at and next to the
/// midpoints of every format, checked by the fuzz harness's exact oracle (and its
/// `f32::from_str` acceptance check), not by the parser.
#[test]
fn parse_fast_path_edges() {
    let mut fixed: Vec<String> = [
        "1e22",
        "1e23",
        "1e-22",
        "1e-23",
        "-1e+022",
        "1e-0022",
        "9007199254740991e-22",
        "9007199254740992e-22",
        "9007199254740993e-22",
        "9007199254740991e22",
        "9007199254740993e-4",
        "9999999999999999999e-23",
        "9999999999999999999e-22",
        "9999999999999999999",
        "99999999999999999999",
        "18446744073709551615",
        "18446744073709551616",
        "10000000000000000000",
        "1000000000000000000",
        "1000000000000000000.0",
        "0.0000000000000000000000001",
        "-0e999999999999",
        "0e-99999999999999999999999",
        // Decimals whose f64 is ±2^-1074, the smallest subnormal: below every format's
        // boundaries but the one at zero (E8M0's zero is NaN, F8E5M3FNU's −0 is +0).
        "29e-325",
        "-29e-325",
        "4.9406564584124654e-324",
        "-5e-324",
        "2.4703282292062328e-324",
        "2.4703282292062329e-324",
        "-7.4e-324",
        "00000000000000000000000000.0000000000000",
        "0000000000000000000000001.5",
        ".0000000000000000000000000000000000001e30",
        "123456789012345678.9",
        "1234567890123456789.0",
        "12345678901234567890",
        "1.234567890123456789e-4",
        "6.103515625e-5",
        "6.1035156250000000001e-5",
        "-6.103515625000000001e-5",
        "65520",
        "65519.99999999999999",
        "65520.00000000000001",
        "5.9604644775390625e-8",
        "2.98023223876953125e-8",
        "2.980232238769531251e-8",
        "+.5",
        "5.",
        "1e",
        "1e+",
        ".e1",
        "1.e1",
        "1..5",
        "1e1e1",
        "1e-",
        "-.",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for e in 18..=24 {
        for m in ["1", "9", "4.5", "9007199254740991", "9999999999999999999"] {
            fixed.push(format!("{m}e{e}"));
            fixed.push(format!("{m}e-{e}"));
        }
    }
    for s in &fixed {
        if let Err(msg) = text_harness::run(s.as_bytes()) {
            panic!("{msg}");
        }
    }

    fn around_midpoints(
        t: &Fmt,
        stride: usize,
        check: &dyn Fn(&str) -> Result<(), String>,
    ) -> usize {
        let mut vals: Vec<f64> = codes(t)
            .filter(|x| !x.nan() && x.f32().is_finite() && x.f32().is_sign_positive())
            .map(|x| f64::from(x.f32()))
            .collect();
        vals.sort_by(f64::total_cmp);
        let mut count = 0;
        for (i, w) in vals.windows(2).enumerate() {
            // Every pair near zero (subnormals), a sample above.
            if i >= 64 && i % stride != 0 && i + 2 != vals.len() {
                continue;
            }
            let (d, k) = exact_f64((w[0] + w[1]) / 2.0);
            for n in 15..=20usize {
                let mut forms: Vec<(Vec<u8>, i32)> = vec![truncate(&d, k, n, false)];
                if d.len() > n {
                    forms.push(truncate(&d, k, n, true));
                }
                for (t, k) in forms {
                    let digits: String = t.iter().map(|&x| (b'0' + x) as char).collect();
                    // q = k - n: an integer mantissa of n digits.
                    for s in [format!("{digits}e{}", k - n as i32), sci(&t, k)] {
                        for s in [s.clone(), format!("-{s}")] {
                            if let Err(msg) = check(&s) {
                                panic!("{msg}");
                            }
                            count += 1;
                        }
                    }
                }
            }
        }
        count
    }
    let mut n = 0;
    n += around_midpoints(&fmt::<F16>(), 37, &text_harness::check::<F16>);
    n += around_midpoints(&fmt::<BF16>(), 97, &text_harness::check::<BF16>);
    n += around_midpoints(&fmt::<F8E4M3>(), 1, &text_harness::check::<F8E4M3>);
    n += around_midpoints(&fmt::<F8E5M2>(), 1, &text_harness::check::<F8E5M2>);
    n += around_midpoints(&fmt::<F8E4M3FNUZ>(), 1, &text_harness::check::<F8E4M3FNUZ>);
    n += around_midpoints(&fmt::<F8E5M2FNUZ>(), 1, &text_harness::check::<F8E5M2FNUZ>);
    n += around_midpoints(&fmt::<F6E2M3>(), 1, &text_harness::check::<F6E2M3>);
    n += around_midpoints(&fmt::<F6E3M2>(), 1, &text_harness::check::<F6E3M2>);
    n += around_midpoints(&fmt::<F4E2M1>(), 1, &text_harness::check::<F4E2M1>);
    n += around_midpoints(&fmt::<F8E8M0>(), 1, &text_harness::check::<F8E8M0>);
    n += around_midpoints(&fmt::<F8E3M4>(), 1, &text_harness::check::<F8E3M4>);
    n += around_midpoints(&fmt::<F8E4M3IEEE>(), 1, &text_harness::check::<F8E4M3IEEE>);
    n += around_midpoints(
        &fmt::<F8E4M3B11FNUZ>(),
        1,
        &text_harness::check::<F8E4M3B11FNUZ>,
    );
    n += around_midpoints(&fmt::<F8E5M3FNU>(), 1, &text_harness::check::<F8E5M3FNU>);
    assert!(n > 10_000, "{n}");
}
