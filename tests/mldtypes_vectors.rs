//! Known-answer vectors of the third-party Python package ml_dtypes 0.6
//! (`tests/data/mldtypes/*.tsv`, described in `tests/data/mldtypes/README.md`) for the fnuz fp8,
//! fp6, fp4 and E8M0 formats, checked against vcvt's element functions and against
//! `convert_slice_on` on every available backend (each column of inputs in one call).
//!
//! ml_dtypes is not the specification. The comparison uses ml_dtypes' own overflow policy
//! (`NonSaturating` for the fnuz formats and E8M0, which have a NaN to overflow to; the default,
//! always saturating, options for fp4/fp6), and every row where vcvt's contract deliberately
//! gives another answer is covered by exactly one narrow rule of [`expected_difference`]:
//!
//! * (a) fp4/fp6 NaN source: ml_dtypes gives a zero with the NaN's sign flipped; vcvt gives
//!   ±MAX with the NaN's sign (`src/format/f4e2m1.rs`, `f6e2m3.rs`, `f6e3m2.rs`).
//! * (b) E8M0 near 2^-127: f32 values strictly inside (2^-127, 1.5·2^-127) give `0x01` in
//!   ml_dtypes, `0x00` (the nearest power of two) in vcvt; and positive f64 values that round
//!   to zero in f32 (at most 2^-150) give `0xFF` in ml_dtypes (through f32 zero) but `0x00` in
//!   vcvt (`src/format/f8e8m0.rs`: "values below 2^-127 ... give 0x00").
//! * (c) f64 rows that are not exactly an f32 (`via_f32`): ml_dtypes rounds f64 -> f32 ->
//!   format, vcvt rounds once (`src/lib.rs`: "f64 sources are rounded once"). For these rows
//!   vcvt is compared with the exact model below, and a difference from ml_dtypes is accepted
//!   only if ml_dtypes' code is what rounding `x as f32` gives.
//!
//! Every rule is counted and each count must equal what the data implies (a predicate on the
//! inputs, and for (b)/(c) the rows of `exact_mismatches.txt`, produced by the generator with
//! exact rational arithmetic), so a rule cannot silently swallow a mismatch. Widening rows must
//! match bit for bit.
//!
//! Under `Saturate` (and the default options, which saturate) the fnuz formats and E8M0 must
//! give the NonSaturating code except where that is the NaN code for a non-NaN source that
//! overflows: there fnuz gives ±MAX (`0x7F`/`0xFF`, the input's sign) and E8M0 `0xFE` (positive
//! finite sources only: zero, negative and infinite sources give `0xFF` under every policy).
//!
//! Independently of ml_dtypes, every narrowing row is also checked under all nine
//! combinations of overflow option (default, `Saturate`, `NonSaturating`) and NaN policy
//! against an exact model written here from the format definitions (field widths and bias,
//! or E8M0's powers of two) and the contract's rules for overflow, NaN, zero and sign.
//!
//! Run with `-- --nocapture` to see the per-format counts.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use vcvt::{
    Backend, ConvertTo, Element, F4E2M1, F6E2M3, F6E3M2, F8E4M3FNUZ, F8E5M2FNUZ, F8E8M0, NanPolicy,
    Options, Overflow,
};

const EXACT_MISMATCHES: &str = include_str!("data/mldtypes/exact_mismatches.txt");

// ---------------------------------------------------------------------------------------------
// Format definitions (from the standards / ml_dtypes' type definitions, not from vcvt's codec).
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Layout {
    /// 1 sign bit, `exp_bits` exponent bits, `man_bits` fraction bits, `bias`; no Inf.
    /// `fnuz`: no negative zero, the code `0x80` is the only NaN, every other code is finite.
    /// Otherwise (fp4/fp6) there is no NaN either: every code is finite.
    Sem {
        exp_bits: u32,
        man_bits: u32,
        bias: i32,
        fnuz: bool,
    },
    /// No sign, 8 exponent bits, bias 127: code `c` is 2^(c-127), `0xFF` is NaN.
    E8m0,
}

struct Format {
    name: &'static str,
    tsv: &'static str,
    layout: Layout,
}

const F8E4M3FNUZ_FMT: Format = Format {
    name: "F8E4M3FNUZ",
    tsv: include_str!("data/mldtypes/F8E4M3FNUZ.tsv"),
    layout: Layout::Sem {
        exp_bits: 4,
        man_bits: 3,
        bias: 8,
        fnuz: true,
    },
};
const F8E5M2FNUZ_FMT: Format = Format {
    name: "F8E5M2FNUZ",
    tsv: include_str!("data/mldtypes/F8E5M2FNUZ.tsv"),
    layout: Layout::Sem {
        exp_bits: 5,
        man_bits: 2,
        bias: 16,
        fnuz: true,
    },
};
const F6E2M3_FMT: Format = Format {
    name: "F6E2M3",
    tsv: include_str!("data/mldtypes/F6E2M3.tsv"),
    layout: Layout::Sem {
        exp_bits: 2,
        man_bits: 3,
        bias: 1,
        fnuz: false,
    },
};
const F6E3M2_FMT: Format = Format {
    name: "F6E3M2",
    tsv: include_str!("data/mldtypes/F6E3M2.tsv"),
    layout: Layout::Sem {
        exp_bits: 3,
        man_bits: 2,
        bias: 3,
        fnuz: false,
    },
};
const F4E2M1_FMT: Format = Format {
    name: "F4E2M1",
    tsv: include_str!("data/mldtypes/F4E2M1.tsv"),
    layout: Layout::Sem {
        exp_bits: 2,
        man_bits: 1,
        bias: 1,
        fnuz: false,
    },
};
const F8E8M0_FMT: Format = Format {
    name: "F8E8M0",
    tsv: include_str!("data/mldtypes/F8E8M0.tsv"),
    layout: Layout::E8m0,
};

/// 2^n as an f64, built from its bits (exact; `n` in the normal range).
fn pow2(n: i32) -> f64 {
    assert!((-1022..=1023).contains(&n));
    f64::from_bits(((n + 1023) as u64) << 52)
}

impl Format {
    fn is_fp4_fp6(&self) -> bool {
        matches!(self.layout, Layout::Sem { fnuz: false, .. })
    }
    fn is_fnuz(&self) -> bool {
        matches!(self.layout, Layout::Sem { fnuz: true, .. })
    }
    fn is_e8m0(&self) -> bool {
        self.layout == Layout::E8m0
    }
    /// The sign bit of a code (0 for the unsigned E8M0).
    fn sign_bit(&self) -> u8 {
        match self.layout {
            Layout::Sem {
                exp_bits, man_bits, ..
            } => 1 << (exp_bits + man_bits),
            Layout::E8m0 => 0,
        }
    }
    /// The largest finite (positive) code.
    fn max(&self) -> u8 {
        match self.layout {
            Layout::Sem { .. } => self.sign_bit() - 1,
            Layout::E8m0 => 0xFE,
        }
    }
    /// The NaN code, if the format has one.
    fn nan_code(&self) -> Option<u8> {
        match self.layout {
            Layout::Sem { fnuz: true, .. } => Some(0x80),
            Layout::Sem { fnuz: false, .. } => None,
            Layout::E8m0 => Some(0xFF),
        }
    }
    /// The options under which vcvt is compared with ml_dtypes: ml_dtypes does not saturate
    /// (overflow gives the NaN code) for the formats that have a NaN; fp4/fp6 always saturate,
    /// so they are compared with the default options.
    fn ml_overflow(&self) -> Option<Overflow> {
        if self.is_fp4_fp6() {
            None
        } else {
            Some(Overflow::NonSaturating)
        }
    }

    /// For the sign/exponent/mantissa formats: the value of every non-negative code
    /// `0..=max` from its fields, then a sentinel "next value above max" (max plus one ulp of
    /// max's binade) that stands for overflow. Every entry is exact in f64 (a small integer
    /// times a power of two), and the index is the code.
    fn magnitudes(&self) -> Vec<f64> {
        let Layout::Sem {
            exp_bits,
            man_bits,
            bias,
            ..
        } = self.layout
        else {
            return Vec::new();
        };
        let mut v = Vec::new();
        for c in 0..=u32::from(self.max()) {
            let e = (c >> man_bits) as i32;
            let f = f64::from(c & ((1 << man_bits) - 1));
            let val = if e == 0 {
                f * pow2(1 - bias - man_bits as i32)
            } else {
                (f64::from(1u32 << man_bits) + f) * pow2(e - bias - man_bits as i32)
            };
            v.push(val);
        }
        let emax = (1i32 << exp_bits) - 1;
        v.push(f64::from(2u32 << man_bits) * pow2(emax - bias - man_bits as i32));
        for w in v.windows(2) {
            assert!(w[0] < w[1], "{}: magnitudes not increasing", self.name);
        }
        v
    }
}

// ---------------------------------------------------------------------------------------------
// Rows.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
enum Op {
    F32,
    F64,
    Widen,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::F32 => "f32",
            Op::F64 => "f64",
            Op::Widen => "widen",
        }
    }
    fn parse(s: &str) -> Op {
        match s {
            "f32" => Op::F32,
            "f64" => Op::F64,
            "widen" => Op::Widen,
            _ => panic!("unknown op {s:?}"),
        }
    }
}

struct Row {
    line: usize,
    op: Op,
    /// f32 bits, f64 bits or a code.
    input: u64,
    /// ml_dtypes' output: a code (narrowing) or f32 bits (widening).
    ml: u32,
    note: &'static str,
}

impl Row {
    fn input_hex(&self) -> String {
        match self.op {
            Op::F32 => format!("{:08x}", self.input),
            Op::F64 => format!("{:016x}", self.input),
            Op::Widen => format!("{:02x}", self.input),
        }
    }
    fn via_f32(&self) -> bool {
        self.op == Op::F64 && self.note.ends_with(",via_f32")
    }
    fn f32exact(&self) -> bool {
        self.op == Op::F64 && self.note.ends_with(",f32exact")
    }
}

fn parse_rows(fmt: &Format) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut header = 0;
    for (i, line) in fmt.tsv.lines().enumerate() {
        if line.starts_with('#') {
            header += 1;
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&'static str> = line.split('\t').collect();
        assert_eq!(f.len(), 4, "{} line {}: {line:?}", fmt.name, i + 1);
        let op = Op::parse(f[0]);
        let width = match op {
            Op::F32 => 8,
            Op::F64 => 16,
            Op::Widen => 2,
        };
        assert_eq!(
            f[1].len(),
            width,
            "{} line {}: input width",
            fmt.name,
            i + 1
        );
        let out_width = if op == Op::Widen { 8 } else { 2 };
        assert_eq!(
            f[2].len(),
            out_width,
            "{} line {}: output width",
            fmt.name,
            i + 1
        );
        rows.push(Row {
            line: i + 1,
            op,
            input: u64::from_str_radix(f[1], 16).unwrap(),
            ml: u32::from_str_radix(f[2], 16).unwrap(),
            note: f[3],
        });
    }
    assert_eq!(header, 8, "{}: expected 8 header lines", fmt.name);
    rows
}

/// A narrowing source, decoded.
#[derive(Clone, Copy, Debug)]
struct Val {
    nan: bool,
    inf: bool,
    neg: bool,
    /// |x|, exactly (meaningless for NaN).
    abs: f64,
}

fn decode(op: Op, input: u64) -> Val {
    match op {
        Op::F32 => {
            let b = input as u32;
            let a = b & 0x7FFF_FFFF;
            Val {
                nan: a > 0x7F80_0000,
                inf: a == 0x7F80_0000,
                neg: b >> 31 == 1,
                abs: f64::from(f32::from_bits(a)),
            }
        }
        Op::F64 => {
            let a = input & 0x7FFF_FFFF_FFFF_FFFF;
            Val {
                nan: a > 0x7FF0_0000_0000_0000,
                inf: a == 0x7FF0_0000_0000_0000,
                neg: input >> 63 == 1,
                abs: f64::from_bits(a),
            }
        }
        Op::Widen => unreachable!(),
    }
}

// ---------------------------------------------------------------------------------------------
// The exact model (vcvt's contract, from the format definitions).
// ---------------------------------------------------------------------------------------------

/// Round-to-nearest-even of a finite magnitude `a >= 0`: the index into `mags` (whose last
/// entry is the overflow sentinel). `a` is only *compared* with the midpoints
/// `(v[k] + v[k+1]) / 2`, which are exact in f64 for these small formats; on a midpoint the
/// even index (= even code) wins.
fn round_nearest_even(mags: &[f64], a: f64) -> usize {
    for k in 0..mags.len() - 1 {
        let mid = (mags[k] + mags[k + 1]) / 2.0;
        if a < mid {
            return k;
        }
        if a == mid {
            return if k % 2 == 0 { k } else { k + 1 };
        }
    }
    mags.len() - 1
}

/// vcvt's narrowing contract for `v` under the resolved overflow policy `ov` and `nan`.
fn model_narrow(fmt: &Format, mags: &[f64], v: Val, ov: Overflow, nan: NanPolicy) -> u8 {
    match fmt.layout {
        Layout::Sem { fnuz, .. } => {
            let s = if v.neg { fmt.sign_bit() } else { 0 };
            let max = fmt.max();
            if v.nan {
                // fnuz: the NaN code, or ±MAX under ToMax; fp4/fp6: ±MAX under every policy.
                return match (fnuz, nan) {
                    (true, NanPolicy::ToMax) | (false, _) => max | s,
                    (true, _) => 0x80,
                };
            }
            let k = if v.inf {
                mags.len() - 1
            } else {
                round_nearest_even(mags, v.abs)
            };
            if k == mags.len() - 1 {
                // Overflow (decided on the rounded value) and ±Inf.
                return if fnuz && ov == Overflow::NonSaturating {
                    0x80
                } else {
                    max | s
                };
            }
            if k == 0 && fnuz {
                0x00 // no negative zero
            } else {
                k as u8 | s
            }
        }
        Layout::E8m0 => {
            if v.nan {
                return if nan == NanPolicy::ToMax { 0xFE } else { 0xFF };
            }
            if v.neg || v.abs == 0.0 || v.inf {
                return 0xFF; // negative, zero, infinite: nothing represents it
            }
            // Nearest power of two in linear space, ties up: the first code c with
            // x < 1.5 * 2^(c-127) (values below 2^-127 give 0x00, the nearest code).
            for c in 0..=254 {
                if v.abs < 1.5 * pow2(c - 127) {
                    return c as u8;
                }
            }
            if ov == Overflow::Saturate { 0xFE } else { 0xFF }
        }
    }
}

/// The f32 bits a code widens to: its value from the definition; NaN codes as the contract
/// says (fnuz `0x80` -> `0xFFC00000`, E8M0 `0xFF` -> `0x7FC00000`).
fn model_widen(fmt: &Format, mags: &[f64], c: u8) -> u32 {
    match fmt.layout {
        Layout::Sem { fnuz, .. } => {
            if fnuz && c == 0x80 {
                return 0xFFC0_0000;
            }
            let sign = if c & fmt.sign_bit() != 0 {
                0x8000_0000
            } else {
                0
            };
            (mags[usize::from(c & fmt.max())] as f32).to_bits() | sign
        }
        Layout::E8m0 => {
            if c == 0xFF {
                0x7FC0_0000
            } else {
                (pow2(i32::from(c) - 127) as f32).to_bits()
            }
        }
    }
}

/// IEEE f32 -> f64 on bits (NaN: sign and payload kept, quiet bit set), the contract's
/// widening to f64.
fn f32_bits_to_f64_bits(b: u32) -> u64 {
    let a = b & 0x7FFF_FFFF;
    if a > 0x7F80_0000 {
        (u64::from(b >> 31) << 63)
            | 0x7FF0_0000_0000_0000
            | (1 << 51)
            | (u64::from(a & 0x007F_FFFF) << 29)
    } else {
        f64::from(f32::from_bits(b)).to_bits()
    }
}

// ---------------------------------------------------------------------------------------------
// The documented differences.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
enum Rule {
    /// (a) fp4/fp6 NaN source: ml_dtypes -> zero with the flipped sign, vcvt -> ±MAX.
    A,
    /// (b) E8M0 f32 value in (2^-127, 1.5*2^-127): ml_dtypes 0x01, vcvt 0x00.
    BNearMin,
    /// (b) E8M0 positive f64 that rounds to zero in f32: ml_dtypes 0xFF, vcvt 0x00.
    BTiny,
    /// (c) f64 not exactly an f32: ml_dtypes rounds twice, vcvt once (exact model).
    C,
}

const RULES: [Rule; 4] = [Rule::A, Rule::BNearMin, Rule::BTiny, Rule::C];

impl Rule {
    fn describe(self) -> &'static str {
        match self {
            Rule::A => "(a) fp4/fp6 NaN -> ±MAX (ml_dtypes: zero, sign flipped)",
            Rule::BNearMin => "(b) E8M0 (2^-127, 1.5*2^-127) -> 0x00 (ml_dtypes 0x01)",
            Rule::BTiny => "(b) E8M0 f64 <= 2^-150 -> 0x00 (ml_dtypes 0xFF via f32 zero)",
            Rule::C => "(c) via_f32 single rounding (ml_dtypes rounds twice)",
        }
    }
}

/// E8M0 f32 bits strictly inside (2^-127, 1.5*2^-127).
const E8M0_NEAR_MIN: std::ops::RangeInclusive<u32> = 0x0040_0001..=0x005F_FFFF;

/// What ml_dtypes gives for an f32 value `f` (not NaN) under its own overflow policy: the
/// exact model plus quirk (b) near 2^-127. Used to confirm that a `via_f32` row's code is
/// that of `float32(x)`, which is what rule (c) asserts about ml_dtypes.
fn mldtypes_f32(fmt: &Format, mags: &[f64], f: f32) -> u8 {
    if fmt.is_e8m0() && E8M0_NEAR_MIN.contains(&f.to_bits()) {
        return 0x01;
    }
    let ov = fmt.ml_overflow().unwrap_or(Overflow::Saturate);
    model_narrow(
        fmt,
        mags,
        decode(Op::F32, u64::from(f.to_bits())),
        ov,
        NanPolicy::Preserve,
    )
}

/// The documented reason, if any, for vcvt (under ml_dtypes' overflow policy, NaN policy
/// `Preserve`) to differ from ml_dtypes' code `ml` on a narrowing row, with vcvt's code.
/// Each rule checks that ml_dtypes gave exactly the documented wrong answer; anything else
/// gets `None`, so vcvt must then equal ml_dtypes.
fn expected_difference(fmt: &Format, mags: &[f64], row: &Row, ml: u8) -> Option<(Rule, u8)> {
    let v = decode(row.op, row.input);
    // (a) src/format/f4e2m1.rs, f6e2m3.rs, f6e3m2.rs: "a NaN source becomes ±MAX with the
    // NaN's sign under every NanPolicy". ml_dtypes gives +0 for a negative NaN, -0 for a
    // positive one.
    if fmt.is_fp4_fp6() && v.nan {
        let s = if v.neg { fmt.sign_bit() } else { 0 };
        let ml_zero_flipped = s ^ fmt.sign_bit();
        return (ml == ml_zero_flipped).then_some((Rule::A, fmt.max() | s));
    }
    if fmt.is_e8m0() && !v.nan && !v.neg {
        // (b) src/format/f8e8m0.rs "Deliberate difference": (2^-127, 1.5*2^-127) -> 0x00, for
        // f32 inputs and f64 inputs that are exactly such an f32.
        let f32_bits = match row.op {
            Op::F32 => Some(row.input as u32),
            Op::F64 if f64::from(v.abs as f32) == v.abs => Some((v.abs as f32).to_bits()),
            _ => None,
        };
        if f32_bits.is_some_and(|b| E8M0_NEAR_MIN.contains(&b)) {
            assert!(row.op == Op::F32 || row.f32exact(), "line {}", row.line);
            return (ml == 0x01).then_some((Rule::BNearMin, 0x00));
        }
        // (b) f8e8m0.rs: "values below 2^-127, down to the smallest f32/f64 subnormal, give
        // 0x00". ml_dtypes rounds an f64 to f32 first; at most 2^-150 that is zero -> 0xFF.
        if row.op == Op::F64 && v.abs > 0.0 && v.abs <= pow2(-150) {
            return (ml == 0xFF).then_some((Rule::BTiny, 0x00));
        }
    }
    // (c) src/lib.rs "f64 sources are rounded once": for a via_f32 row the expected code is the
    // exact model's; it may differ from ml_dtypes only where ml_dtypes' code is that of
    // float32(x) (double rounding).
    if row.via_f32() && !v.nan {
        let ov = fmt.ml_overflow().unwrap_or(Overflow::Saturate);
        let exact = model_narrow(fmt, mags, v, ov, NanPolicy::Preserve);
        let x = f64::from_bits(row.input);
        if exact != ml && ml == mldtypes_f32(fmt, mags, x as f32) {
            return Some((Rule::C, exact));
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// vcvt under test.
// ---------------------------------------------------------------------------------------------

trait Narrow: Element + Default {
    const DEFAULT_OVERFLOW: Overflow;
    fn from_bits_(b: u8) -> Self;
    fn bits(self) -> u8;
    fn from_f32_(x: f32) -> Self;
    fn from_f32_with_(x: f32, o: Overflow) -> Self;
    fn from_f32_opts_(x: f32, o: Options) -> Self;
    fn from_f64_(x: f64) -> Self;
    fn from_f64_with_(x: f64, o: Overflow) -> Self;
    fn from_f64_opts_(x: f64, o: Options) -> Self;
    fn to_f32_(self) -> f32;
    fn to_f64_(self) -> f64;
}

macro_rules! narrow {
    ($($t:ident),*) => {$(
        impl Narrow for $t {
            const DEFAULT_OVERFLOW: Overflow = $t::DEFAULT_OVERFLOW;
            fn from_bits_(b: u8) -> Self { $t::from_bits(b) }
            fn bits(self) -> u8 { self.to_bits() }
            fn from_f32_(x: f32) -> Self { $t::from_f32(x) }
            fn from_f32_with_(x: f32, o: Overflow) -> Self { $t::from_f32_with(x, o) }
            fn from_f32_opts_(x: f32, o: Options) -> Self { $t::from_f32_opts(x, o) }
            fn from_f64_(x: f64) -> Self { $t::from_f64(x) }
            fn from_f64_with_(x: f64, o: Overflow) -> Self { $t::from_f64_with(x, o) }
            fn from_f64_opts_(x: f64, o: Options) -> Self { $t::from_f64_opts(x, o) }
            fn to_f32_(self) -> f32 { self.to_f32() }
            fn to_f64_(self) -> f64 { self.to_f64() }
        }
    )*};
}
narrow!(F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1, F8E8M0);

const OVERFLOWS: [Option<Overflow>; 3] = [
    None,
    Some(Overflow::Saturate),
    Some(Overflow::NonSaturating),
];
const NAN_POLICIES: [NanPolicy; 3] = [NanPolicy::Preserve, NanPolicy::Canonical, NanPolicy::ToMax];

fn options(ov: Option<Overflow>, nan: NanPolicy) -> Options {
    let o = Options::new().nan(nan);
    match ov {
        Some(p) => o.overflow(p),
        None => o,
    }
}

fn ov_name(ov: Option<Overflow>) -> String {
    match ov {
        Some(p) => format!("{p:?}"),
        None => "default".into(),
    }
}

/// A narrowing source type, with the element functions that take it.
trait Wide: Element + Default {
    const NAME: &'static str;
    fn narrow_opts<T: Narrow>(self, o: Options) -> T;
    fn narrow_with<T: Narrow>(self, o: Overflow) -> T;
    fn narrow_default<T: Narrow>(self) -> T;
}

impl Wide for f32 {
    const NAME: &'static str = "f32";
    fn narrow_opts<T: Narrow>(self, o: Options) -> T {
        T::from_f32_opts_(self, o)
    }
    fn narrow_with<T: Narrow>(self, o: Overflow) -> T {
        T::from_f32_with_(self, o)
    }
    fn narrow_default<T: Narrow>(self) -> T {
        T::from_f32_(self)
    }
}

impl Wide for f64 {
    const NAME: &'static str = "f64";
    fn narrow_opts<T: Narrow>(self, o: Options) -> T {
        T::from_f64_opts_(self, o)
    }
    fn narrow_with<T: Narrow>(self, o: Overflow) -> T {
        T::from_f64_with_(self, o)
    }
    fn narrow_default<T: Narrow>(self) -> T {
        T::from_f64_(self)
    }
}

/// vcvt's codes for a column of sources under one option combination, from every API: the
/// element functions, and `convert_slice_on` over the whole column on each backend.
/// Returns `(api name, codes)`.
fn narrow_outputs<S: Wide + ConvertTo<T>, T: Narrow>(
    src: &[S],
    ov: Option<Overflow>,
    nan: NanPolicy,
    backends: &[Backend],
) -> Vec<(String, Vec<u8>)> {
    let wide = S::NAME;
    let o = options(ov, nan);
    let mut out = vec![(
        format!("from_{wide}_opts"),
        src.iter().map(|&x| x.narrow_opts::<T>(o).bits()).collect(),
    )];
    if nan == NanPolicy::Preserve {
        match ov {
            Some(p) => out.push((
                format!("from_{wide}_with({p:?})"),
                src.iter().map(|&x| x.narrow_with::<T>(p).bits()).collect(),
            )),
            None => out.push((
                format!("from_{wide}"),
                src.iter()
                    .map(|&x| x.narrow_default::<T>().bits())
                    .collect(),
            )),
        }
    }
    for &b in backends {
        let mut dst = vec![T::default(); src.len()];
        vcvt::convert_slice_on(b, src, &mut dst, o).unwrap();
        out.push((
            format!("convert_slice_on({b}, &[{wide}])"),
            dst.iter().map(|d| d.bits()).collect(),
        ));
    }
    out
}

/// The backends to test: every available one. Says `SKIPPED:` (in `out`) for each backend
/// of this build that this CPU cannot run, so that a missing backend is never silent.
fn backends(test: &str, out: &mut String) -> Vec<Backend> {
    for &b in Backend::ALL {
        if !b.is_available() {
            writeln!(
                out,
                "SKIPPED: {test}: backend {b} not available on this CPU"
            )
            .unwrap();
        }
    }
    let v: Vec<Backend> = Backend::available().collect();
    assert!(v.contains(&Backend::Scalar));
    v
}

/// Failures, reported together at the end.
#[derive(Default)]
struct Failures {
    list: Vec<String>,
}

impl Failures {
    fn push(&mut self, s: String) {
        self.list.push(s);
    }
    fn check(&self, fmt: &Format) {
        if self.list.is_empty() {
            return;
        }
        let mut msg = format!("{}: {} failures:\n", fmt.name, self.list.len());
        for s in self.list.iter().take(60) {
            writeln!(msg, "  {s}").unwrap();
        }
        if self.list.len() > 60 {
            writeln!(msg, "  ... and {} more", self.list.len() - 60).unwrap();
        }
        panic!("{msg}");
    }
}

// ---------------------------------------------------------------------------------------------
// The test.
// ---------------------------------------------------------------------------------------------

fn run<T>(fmt: &Format)
where
    T: Narrow + ConvertTo<f32> + ConvertTo<f64>,
    f32: ConvertTo<T>,
    f64: ConvertTo<T>,
{
    // The summary, printed in one piece at the end (tests run in parallel).
    let mut out = String::new();
    let backends = backends(fmt.name, &mut out);
    let mags = fmt.magnitudes();
    let rows = parse_rows(fmt);
    let mut fail = Failures::default();

    // The contract: every 8-bit and smaller format saturates by default.
    assert_eq!(T::DEFAULT_OVERFLOW, Overflow::Saturate, "{}", fmt.name);

    // ---- Data sanity: no duplicate (op, input), the f64 note matches the value, and an
    // f32exact row equals the f32 row of the same value where there is one.
    let mut by_key: HashMap<(Op, u64), usize> = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        assert!(
            by_key.insert((r.op, r.input), i).is_none(),
            "{} line {}: duplicate",
            fmt.name,
            r.line
        );
        if r.op == Op::F64 {
            assert!(
                r.f32exact() || r.via_f32(),
                "{} line {}: note",
                fmt.name,
                r.line
            );
            let x = f64::from_bits(r.input);
            if !x.is_nan() {
                let exact = f64::from(x as f32).to_bits() == r.input;
                assert_eq!(exact, r.f32exact(), "{} line {}: note", fmt.name, r.line);
            }
        }
    }
    for r in rows.iter().filter(|r| r.f32exact()) {
        let x = f64::from_bits(r.input);
        if x.is_nan() {
            continue;
        }
        if let Some(&j) = by_key.get(&(Op::F32, u64::from((x as f32).to_bits())))
            && r.ml != rows[j].ml
        {
            fail.push(format!(
                "{} f64 {} (line {}): ml_dtypes {:02x}, but {:02x} for the same value as f32 \
                 (line {})",
                fmt.name,
                r.input_hex(),
                r.line,
                r.ml,
                rows[j].ml,
                rows[j].line
            ));
        }
    }

    // ---- Expected vcvt code under ml_dtypes' policy, per narrowing row.
    let ml_ov = fmt.ml_overflow();
    let ml_ov_resolved = ml_ov.unwrap_or(T::DEFAULT_OVERFLOW);
    let mut rule_of: Vec<Option<Rule>> = vec![None; rows.len()];
    let mut expected: Vec<u8> = vec![0; rows.len()];
    for (i, r) in rows.iter().enumerate() {
        if r.op == Op::Widen {
            continue;
        }
        assert!(r.ml <= 0xFF, "{} line {}", fmt.name, r.line);
        let ml = r.ml as u8;
        match expected_difference(fmt, &mags, r, ml) {
            Some((rule, code)) => {
                assert_ne!(
                    code, ml,
                    "{} line {}: a rule must be a difference",
                    fmt.name, r.line
                );
                rule_of[i] = Some(rule);
                expected[i] = code;
            }
            None => expected[i] = ml,
        }
        // The ml-derived expectation must be the contract's (exact model) answer.
        let v = decode(r.op, r.input);
        let m = model_narrow(fmt, &mags, v, ml_ov_resolved, NanPolicy::Preserve);
        if m != expected[i] {
            fail.push(format!(
                "{} {} {} ({}): ml_dtypes {:02x}, rule {:?}, exact model {:02x}: ml_dtypes \
                 differs from the exact model with no documented rule",
                fmt.name,
                r.op.name(),
                r.input_hex(),
                r.note,
                ml,
                rule_of[i],
                m
            ));
        }
    }

    // ---- Expected code under Saturate for the formats with a NaN: differs from the
    // NonSaturating one only where that is the NaN code for a non-NaN source that overflows:
    // fnuz ±MAX with the input's sign, E8M0 0xFE (positive finite overflow only; zero,
    // negative and infinite sources stay 0xFF).
    let sat_expected: Vec<u8> = rows
        .iter()
        .zip(&expected)
        .map(|(r, &e)| {
            if r.op == Op::Widen || fmt.is_fp4_fp6() {
                return e;
            }
            let v = decode(r.op, r.input);
            if Some(e) != fmt.nan_code() || v.nan {
                return e;
            }
            if fmt.is_fnuz() {
                fmt.max() | if v.neg { fmt.sign_bit() } else { 0 }
            } else if !v.neg && !v.inf && v.abs > 0.0 {
                0xFE
            } else {
                e
            }
        })
        .collect();
    // Independent count of the rows that overflow (from the definition: at or above the tie
    // between MAX and the next value, or infinite for fnuz).
    let implied_sat_diff = rows
        .iter()
        .filter(|r| r.op != Op::Widen)
        .filter(|r| {
            let v = decode(r.op, r.input);
            if v.nan {
                return false;
            }
            match fmt.layout {
                Layout::Sem { fnuz: true, .. } => {
                    let m = mags.len();
                    v.inf || v.abs >= (mags[m - 2] + mags[m - 1]) / 2.0
                }
                Layout::Sem { .. } => false,
                Layout::E8m0 => !v.neg && !v.inf && v.abs >= 1.5 * pow2(127),
            }
        })
        .count();
    let sat_diff = rows
        .iter()
        .enumerate()
        .filter(|&(i, r)| r.op != Op::Widen && sat_expected[i] != expected[i])
        .count();

    // ---- Narrowing: every option combination, every API, every backend.
    let mut model_checks = 0usize;
    let mut ml_checks = 0usize;
    for op in [Op::F32, Op::F64] {
        let idx: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].op == op).collect();
        let col32: Vec<f32> = idx
            .iter()
            .map(|&i| f32::from_bits(rows[i].input as u32))
            .collect();
        let col64: Vec<f64> = idx.iter().map(|&i| f64::from_bits(rows[i].input)).collect();
        for ov in OVERFLOWS {
            for nan in NAN_POLICIES {
                let outs = if op == Op::F32 {
                    narrow_outputs::<f32, T>(&col32, ov, nan, &backends)
                } else {
                    narrow_outputs::<f64, T>(&col64, ov, nan, &backends)
                };
                let resolved = ov.unwrap_or(T::DEFAULT_OVERFLOW);
                for (k, &i) in idx.iter().enumerate() {
                    let r = &rows[i];
                    let v = decode(r.op, r.input);
                    let m = model_narrow(fmt, &mags, v, resolved, nan);
                    // What ml_dtypes implies for this overflow option (NaN policy Preserve).
                    let ml_implied = (nan == NanPolicy::Preserve).then(|| {
                        if fmt.is_fp4_fp6() || resolved == Overflow::NonSaturating {
                            expected[i]
                        } else {
                            sat_expected[i]
                        }
                    });
                    for (api, codes) in &outs {
                        let got = codes[k];
                        if let Some(e) = ml_implied {
                            ml_checks += 1;
                            if got != e {
                                fail.push(format!(
                                    "{} {} {} ({}; line {}): ml_dtypes {:02x}, vcvt {:02x} from \
                                     {api} [overflow {}], expected {:02x} ({})",
                                    fmt.name,
                                    r.op.name(),
                                    r.input_hex(),
                                    r.note,
                                    r.line,
                                    r.ml,
                                    got,
                                    ov_name(ov),
                                    e,
                                    match rule_of[i] {
                                        Some(rule) => rule.describe(),
                                        None => "no documented difference from ml_dtypes",
                                    }
                                ));
                            }
                        }
                        model_checks += 1;
                        if got != m {
                            fail.push(format!(
                                "{} {} {} ({}): vcvt {:02x} from {api} [overflow {}, nan \
                                 {nan:?}], exact model {:02x} (ml_dtypes {:02x})",
                                fmt.name,
                                r.op.name(),
                                r.input_hex(),
                                r.note,
                                got,
                                ov_name(ov),
                                m,
                                r.ml
                            ));
                        }
                    }
                }
            }
        }
    }

    // ---- Widening: bit-exact, element functions and every backend, to f32 and to f64.
    let widx: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].op == Op::Widen)
        .collect();
    let codes: Vec<T> = widx
        .iter()
        .map(|&i| {
            let c = rows[i].input;
            assert!(c < u64::from(fmt.sign_bit()) * 2 || fmt.is_e8m0());
            let t = T::from_bits_(c as u8);
            assert_eq!(
                u64::from(t.bits()),
                c,
                "{} widen {c:02x}: from_bits",
                fmt.name
            );
            t
        })
        .collect();
    let mut w32: Vec<(String, Vec<u32>)> = vec![(
        "to_f32".into(),
        codes.iter().map(|t| t.to_f32_().to_bits()).collect(),
    )];
    let mut w64: Vec<(String, Vec<u64>)> = vec![(
        "to_f64".into(),
        codes.iter().map(|t| t.to_f64_().to_bits()).collect(),
    )];
    for &b in &backends {
        let mut d32 = vec![0f32; codes.len()];
        vcvt::convert_slice_on(b, &codes, &mut d32, Options::new()).unwrap();
        w32.push((
            format!("convert_slice_on({b}, -> f32)"),
            d32.iter().map(|x| x.to_bits()).collect(),
        ));
        let mut d64 = vec![0f64; codes.len()];
        vcvt::convert_slice_on(b, &codes, &mut d64, Options::new()).unwrap();
        w64.push((
            format!("convert_slice_on({b}, -> f64)"),
            d64.iter().map(|x| x.to_bits()).collect(),
        ));
    }
    let mut widen_match = 0;
    for (k, &i) in widx.iter().enumerate() {
        let r = &rows[i];
        let c = r.input as u8;
        let m = model_widen(fmt, &mags, c);
        if m != r.ml {
            fail.push(format!(
                "{} widen {c:02x}: ml_dtypes {:08x}, format definition {m:08x}",
                fmt.name, r.ml
            ));
        }
        let mut ok = true;
        for (api, bits) in &w32 {
            if bits[k] != r.ml {
                ok = false;
                fail.push(format!(
                    "{} widen {c:02x}: ml_dtypes {:08x}, vcvt {:08x} from {api}",
                    fmt.name, r.ml, bits[k]
                ));
            }
        }
        let e64 = f32_bits_to_f64_bits(r.ml);
        for (api, bits) in &w64 {
            if bits[k] != e64 {
                ok = false;
                fail.push(format!(
                    "{} widen {c:02x} to f64: expected {e64:016x} (ml_dtypes f32 {:08x}), vcvt \
                     {:016x} from {api}",
                    fmt.name, r.ml, bits[k]
                ));
            }
        }
        widen_match += usize::from(ok);
    }

    // ---- Counts.
    let count = |op: Op| rows.iter().filter(|r| r.op == op).count();
    let mut rule_count: BTreeMap<Rule, usize> = RULES.iter().map(|&r| (r, 0)).collect();
    for r in rule_of.iter().flatten() {
        *rule_count.get_mut(r).unwrap() += 1;
    }
    let narrowing: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].op != Op::Widen)
        .collect();
    let match_ml = narrowing
        .iter()
        .filter(|&&i| rule_of[i].is_none() && expected[i] as u32 == rows[i].ml)
        .count();
    let via: Vec<usize> = narrowing
        .iter()
        .copied()
        .filter(|&i| rows[i].via_f32())
        .collect();
    let via_differ = via
        .iter()
        .filter(|&&i| expected[i] as u32 != rows[i].ml)
        .count();

    // What the data implies for each rule, by predicates on the inputs alone.
    let implied_a = if fmt.is_fp4_fp6() {
        narrowing
            .iter()
            .filter(|&&i| decode(rows[i].op, rows[i].input).nan)
            .count()
    } else {
        0
    };
    let implied_b_near_min = if fmt.is_e8m0() {
        narrowing
            .iter()
            .filter(|&&i| {
                let r = &rows[i];
                match r.op {
                    Op::F32 => E8M0_NEAR_MIN.contains(&(r.input as u32)),
                    _ => {
                        let x = f64::from_bits(r.input);
                        x > pow2(-127) && x < 1.5 * pow2(-127) && f64::from(x as f32) == x
                    }
                }
            })
            .count()
    } else {
        0
    };
    let is_tiny = |r: &Row| {
        let x = f64::from_bits(r.input);
        r.op == Op::F64 && x > 0.0 && x <= pow2(-150)
    };
    let implied_b_tiny = if fmt.is_e8m0() {
        rows.iter().filter(|r| is_tiny(r)).count()
    } else {
        0
    };
    // (b) and (c) rows must be exactly the rows of exact_mismatches.txt (the generator's
    // Fraction model, same overflow policy as ml_dtypes, NaNs not compared), with vcvt's code
    // equal to its exact_code column.
    let mut listed: HashSet<(Op, u64)> = HashSet::new();
    for line in EXACT_MISMATCHES.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 6, "exact_mismatches.txt: {line:?}");
        if f[0] != fmt.name {
            continue;
        }
        let key = (Op::parse(f[1]), u64::from_str_radix(f[2], 16).unwrap());
        let ml = u32::from_str_radix(f[3], 16).unwrap();
        let exact = u8::from_str_radix(f[4], 16).unwrap();
        let Some(&i) = by_key.get(&key) else {
            panic!("exact_mismatches.txt row not in {}.tsv: {line}", fmt.name);
        };
        assert_eq!(rows[i].ml, ml, "exact_mismatches.txt: {line}");
        if !matches!(rule_of[i], Some(Rule::BNearMin | Rule::BTiny | Rule::C))
            || expected[i] != exact
        {
            fail.push(format!(
                "{} {} {}: exact_mismatches.txt says ml_dtypes {:02x}, exact {exact:02x}; the \
                 test has rule {:?}, expected vcvt {:02x}",
                fmt.name, f[1], f[2], ml, rule_of[i], expected[i]
            ));
        }
        listed.insert(key);
    }
    for &i in &narrowing {
        if matches!(rule_of[i], Some(Rule::BNearMin | Rule::BTiny | Rule::C))
            && !listed.contains(&(rows[i].op, rows[i].input))
        {
            fail.push(format!(
                "{} {} {}: rule {:?} but not in exact_mismatches.txt",
                fmt.name,
                rows[i].op.name(),
                rows[i].input_hex(),
                rule_of[i]
            ));
        }
    }
    let listed_tiny = listed
        .iter()
        .filter(|&&k| is_tiny(&rows[by_key[&k]]))
        .count();
    let implied_c = listed
        .iter()
        .filter(|&&(op, input)| {
            let r = &rows[by_key[&(op, input)]];
            r.via_f32() && !is_tiny(r)
        })
        .count();

    writeln!(
        out,
        "{}: backends {}; rows {} (f32 {}, f64 {} [f32exact {}, via_f32 {}], widen {})",
        fmt.name,
        backends
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", "),
        rows.len(),
        count(Op::F32),
        count(Op::F64),
        rows.iter().filter(|r| r.f32exact()).count(),
        via.len(),
        count(Op::Widen)
    )
    .unwrap();
    writeln!(
        out,
        "  matching ml_dtypes exactly: {} of {} narrowing rows (overflow {}), {} of {} widen rows",
        match_ml,
        narrowing.len(),
        ov_name(ml_ov),
        widen_match,
        count(Op::Widen)
    )
    .unwrap();
    for rule in RULES {
        writeln!(out, "  {}: {}", rule.describe(), rule_count[&rule]).unwrap();
    }
    writeln!(
        out,
        "  via_f32 rows differing from ml_dtypes: {via_differ} of {} (rule (c): {})",
        via.len(),
        rule_count[&Rule::C]
    )
    .unwrap();
    if !fmt.is_fp4_fp6() {
        writeln!(
            out,
            "  Saturate differs from NonSaturating (NaN code -> MAX): {sat_diff} rows"
        )
        .unwrap();
    }
    writeln!(
        out,
        "  exact_mismatches.txt rows: {} (all under rules (b)/(c)); comparisons: {ml_checks} \
         against ml_dtypes, {model_checks} against the exact model",
        listed.len()
    )
    .unwrap();

    print!("{out}");

    fail.check(fmt);

    // Every row is either an exact match or under a rule.
    let ruled: usize = rule_count.values().sum();
    assert_eq!(match_ml + ruled, narrowing.len(), "{}", fmt.name);
    assert_eq!(widen_match, count(Op::Widen), "{}", fmt.name);
    // Each rule covers exactly the rows the data implies.
    assert_eq!(rule_count[&Rule::A], implied_a, "{}: rule (a)", fmt.name);
    assert_eq!(
        rule_count[&Rule::BNearMin],
        implied_b_near_min,
        "{}: rule (b)",
        fmt.name
    );
    assert_eq!(
        rule_count[&Rule::BTiny],
        implied_b_tiny,
        "{}: rule (b) f64",
        fmt.name
    );
    assert_eq!(
        listed_tiny, implied_b_tiny,
        "{}: rule (b) f64 listed",
        fmt.name
    );
    assert_eq!(rule_count[&Rule::C], implied_c, "{}: rule (c)", fmt.name);
    assert_eq!(sat_diff, implied_sat_diff, "{}: Saturate rows", fmt.name);
    // The rules are exercised where they apply.
    assert!(
        rule_count[&Rule::C] > 0,
        "{}: no double rounding exercised",
        fmt.name
    );
    if fmt.is_fp4_fp6() {
        assert!(implied_a > 0, "{}: no NaN rows", fmt.name);
    } else {
        assert!(sat_diff > 0, "{}: no overflow rows", fmt.name);
    }
    if fmt.is_e8m0() {
        assert!(implied_b_near_min > 0 && implied_b_tiny > 0, "{}", fmt.name);
    }
}

#[test]
fn f8e4m3fnuz() {
    run::<F8E4M3FNUZ>(&F8E4M3FNUZ_FMT);
}

#[test]
fn f8e5m2fnuz() {
    run::<F8E5M2FNUZ>(&F8E5M2FNUZ_FMT);
}

#[test]
fn f6e2m3() {
    run::<F6E2M3>(&F6E2M3_FMT);
}

#[test]
fn f6e3m2() {
    run::<F6E3M2>(&F6E3M2_FMT);
}

#[test]
fn f4e2m1() {
    run::<F4E2M1>(&F4E2M1_FMT);
}

#[test]
fn f8e8m0() {
    run::<F8E8M0>(&F8E8M0_FMT);
}
