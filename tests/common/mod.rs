//! Shared helpers of the correctness tests, above all the **independent oracle**.
//!
//! # The oracle
//!
//! The oracle knows nothing of the crate's codec (`src/codec.rs`, the format files): it is
//! built from the format *definitions* alone (field widths, whether the all-ones exponent
//! holds Inf/NaN or, for E4M3, finite values and one NaN code, and the NaN rules of the
//! contract table in `src/lib.rs`), with plain `f64` arithmetic instead of bit tricks:
//!
//! * For every non-negative finite code `c` (in `0..=MAX`), its value is computed from its
//!   fields: `(2^M + m) * 2^(e - bias - M)` for a normal code and `m * 2^(1 - bias - M)` for a
//!   subnormal one. Every such product is exact in `f64` (an integer below 2^12 times a power
//!   of two well inside `f64`'s normal range). A sentinel "next value above MAX" (`MAX` plus
//!   one ulp of `MAX`'s binade) stands for overflow. Positive codes are in value order, so
//!   the index into this table *is* the magnitude code.
//! * Rounding a finite magnitude `x` is a nearest-value search: `x` is compared with the
//!   midpoints `(v[k] + v[k+1]) / 2`, which are exact in `f64` (two numbers with at most 12
//!   significant bits whose sum is halved). Strictly between two midpoints the answer is the
//!   value between them; exactly on a midpoint it is the candidate with the even code (ties
//!   to even). If the answer is the sentinel, the value overflows.
//! * Only then are the overflow policy (`Saturate` → `MAX`, `NonSaturating` → Inf, or the NaN
//!   code for E4M3), ±Inf sources (overflow), NaN sources (the contract's NaN rules) and the
//!   sign applied, separately from the rounding.
//!
//! Every `f32` and `f64` source converts exactly to `f64`, and the oracle only *compares*
//! it with exact midpoints (it never subtracts or rounds), so its answers are exact: an `f64`
//! source is rounded once, from its own value. This is a different algorithm from the codec
//! (an integer round-half-even on re-biased bit patterns), which is what makes agreement
//! between the two meaningful.
//!
//! Widening looks the value up in the same table (it converts exactly to `f32` and `f64`) and
//! applies the contract's NaN rules.
//!
//! The other helpers: the list of backends a test covers (printing `SKIPPED:` for the ones
//! this CPU cannot run), `VCVT_SWEEP=sample` detection and the stratified `f32` sample used
//! instead of the 2^32 sweep there, a seeded SplitMix64 generator, and mismatch reports.

#![allow(dead_code)] // Each test binary uses a different subset of these helpers.

#[cfg(target_arch = "x86_64")]
pub mod mxcsr;

use std::fmt;
use std::sync::OnceLock;

use vcvt::{
    BF16, Backend, Element, F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FNUZ,
    F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, NanPolicy, Overflow,
};

/// Both overflow policies, in a fixed order (index 0 = `Saturate`, 1 = `NonSaturating`).
pub const MODES: [Overflow; 2] = [Overflow::Saturate, Overflow::NonSaturating];

/// Every NaN policy.
pub const NAN_POLICIES: [NanPolicy; 3] =
    [NanPolicy::Preserve, NanPolicy::Canonical, NanPolicy::ToMax];

/// Whether `VCVT_SWEEP=sample` asks for stratified samples instead of exhaustive sweeps
/// (used under emulation and Miri).
pub fn sample_mode() -> bool {
    std::env::var("VCVT_SWEEP").is_ok_and(|v| v == "sample")
}

/// The backends a test covers: every available one. Prints `SKIPPED:` for each backend of
/// this build that this CPU cannot run, so that a missing backend is never silent.
pub fn backends(test: &str) -> Vec<Backend> {
    for b in Backend::ALL {
        if !b.is_available() {
            println!("SKIPPED: {test}: backend {b} not available on this CPU");
        }
    }
    let v: Vec<Backend> = Backend::available().collect();
    assert!(
        v.contains(&Backend::Scalar),
        "Scalar must always be available"
    );
    v
}

/// Names of a list of backends, for the coverage lines the tests print.
pub fn names(backends: &[Backend]) -> String {
    backends
        .iter()
        .map(|b| b.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a NaN source narrows to under `NanPolicy::Preserve`.
#[derive(Clone, Copy, Debug)]
pub enum NarrowNan {
    /// Sign, the top `M` payload bits of the source, and the quiet bit (F16, BF16).
    QuietKeepTopPayload,
    /// This magnitude code with the source's sign (E4M3 `0x7F`, E5M2 `0x7E`).
    Fixed(u32),
    /// This whole code, whatever the sign (fnuz `0x80`, E8M0 `0xFF`).
    Unsigned(u32),
    /// The format has no NaN: ±MAX with the source's sign (fp6, fp4).
    Max,
}

/// What a NaN code widens to in `f32`.
#[derive(Clone, Copy, Debug)]
pub enum WidenNan {
    /// Quiet bit set, the code's fraction kept as the top payload bits (F16, E5M2).
    QuietKeepPayload,
    /// The code's fraction kept as the top payload bits, quiet bit as is (BF16: `code << 16`).
    Plain,
    /// The quiet NaN `0x7FC00000` with the code's sign bit (E4M3; fnuz, whose NaN `0x80` has
    /// its sign bit set; E8M0, which has no sign).
    FixedQuiet,
}

/// How a format uses its codes, as its standard defines them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// IEEE style: the all-ones exponent holds Inf (zero fraction) and NaN.
    Ieee,
    /// OCP E4M3: the all-ones exponent holds finite values except the all-ones magnitude,
    /// the only NaN of each sign.
    AllOnesNan,
    /// fnuz: every magnitude is finite; the code with only the sign bit set (`-0`) is the only
    /// NaN, and there is no negative zero.
    Fnuz,
    /// fp6/fp4: every code is finite (no Inf, no NaN).
    Finite,
    /// E8M0: no sign, code `c` is `2^(c - bias)` for `c` below all ones, all ones is NaN; no
    /// zero. Rounds to the nearest power of two in linear space, ties up.
    ExponentOnly,
    /// Unsigned IEEE-like (E5M3FNU): no sign bit, subnormals, the all-ones code is the only
    /// NaN, every other code finite; a negative source other than -0 has no code and gives
    /// the NaN (ml_dtypes' rule), -0 gives +0.
    Unsigned,
}

/// The definition of a narrow format, as the contract table states it.
#[derive(Clone, Copy, Debug)]
pub struct FormatDef {
    /// The crate's type name.
    pub name: &'static str,
    /// Exponent field width.
    pub exp_bits: u32,
    /// Fraction field width.
    pub man_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// How the codes are used.
    pub kind: Kind,
    /// NaN rule when narrowing under `NanPolicy::Preserve`.
    pub narrow_nan: NarrowNan,
    /// NaN rule when widening to `f32`.
    pub widen_nan: WidenNan,
}

/// IEEE binary16: 1.5.10, Inf and NaN.
pub const F16_DEF: FormatDef = FormatDef {
    name: "F16",
    exp_bits: 5,
    man_bits: 10,
    bias: 15,
    kind: Kind::Ieee,
    narrow_nan: NarrowNan::QuietKeepTopPayload,
    widen_nan: WidenNan::QuietKeepPayload,
};
/// bfloat16: 1.8.7, Inf and NaN.
pub const BF16_DEF: FormatDef = FormatDef {
    name: "BF16",
    exp_bits: 8,
    man_bits: 7,
    bias: 127,
    kind: Kind::Ieee,
    narrow_nan: NarrowNan::QuietKeepTopPayload,
    widen_nan: WidenNan::Plain,
};
/// OCP E4M3 (e4m3fn): 1.4.3, no Inf, one NaN per sign.
pub const E4M3_DEF: FormatDef = FormatDef {
    name: "F8E4M3",
    exp_bits: 4,
    man_bits: 3,
    bias: 7,
    kind: Kind::AllOnesNan,
    narrow_nan: NarrowNan::Fixed(0x7F),
    widen_nan: WidenNan::FixedQuiet,
};
/// OCP E5M2: 1.5.2, Inf and NaN.
pub const E5M2_DEF: FormatDef = FormatDef {
    name: "F8E5M2",
    exp_bits: 5,
    man_bits: 2,
    bias: 15,
    kind: Kind::Ieee,
    narrow_nan: NarrowNan::Fixed(0x7E),
    widen_nan: WidenNan::QuietKeepPayload,
};
/// E4M3FNUZ: 1.4.3, bias 8, NaN = 0x80 only, no Inf, no -0.
pub const E4M3FNUZ_DEF: FormatDef = FormatDef {
    name: "F8E4M3FNUZ",
    exp_bits: 4,
    man_bits: 3,
    bias: 8,
    kind: Kind::Fnuz,
    narrow_nan: NarrowNan::Unsigned(0x80),
    widen_nan: WidenNan::FixedQuiet,
};
/// E5M2FNUZ: 1.5.2, bias 16, NaN = 0x80 only, no Inf, no -0.
pub const E5M2FNUZ_DEF: FormatDef = FormatDef {
    name: "F8E5M2FNUZ",
    exp_bits: 5,
    man_bits: 2,
    bias: 16,
    kind: Kind::Fnuz,
    narrow_nan: NarrowNan::Unsigned(0x80),
    widen_nan: WidenNan::FixedQuiet,
};
/// MX FP6 E2M3: 1.2.3, bias 1, no Inf, no NaN.
pub const E2M3_DEF: FormatDef = FormatDef {
    name: "F6E2M3",
    exp_bits: 2,
    man_bits: 3,
    bias: 1,
    kind: Kind::Finite,
    narrow_nan: NarrowNan::Max,
    widen_nan: WidenNan::FixedQuiet,
};
/// MX FP6 E3M2: 1.3.2, bias 3, no Inf, no NaN.
pub const E3M2_DEF: FormatDef = FormatDef {
    name: "F6E3M2",
    exp_bits: 3,
    man_bits: 2,
    bias: 3,
    kind: Kind::Finite,
    narrow_nan: NarrowNan::Max,
    widen_nan: WidenNan::FixedQuiet,
};
/// MX FP4 E2M1: 1.2.1, bias 1, no Inf, no NaN.
pub const E2M1_DEF: FormatDef = FormatDef {
    name: "F4E2M1",
    exp_bits: 2,
    man_bits: 1,
    bias: 1,
    kind: Kind::Finite,
    narrow_nan: NarrowNan::Max,
    widen_nan: WidenNan::FixedQuiet,
};
/// E3M4 (ml_dtypes `float8_e3m4`): 1.3.4, bias 3, Inf and NaN as IEEE; every NaN narrows
/// to `0x78 | sign` and widens to the quiet NaN of its sign.
pub const E3M4_DEF: FormatDef = FormatDef {
    name: "F8E3M4",
    exp_bits: 3,
    man_bits: 4,
    bias: 3,
    kind: Kind::Ieee,
    narrow_nan: NarrowNan::Fixed(0x78),
    widen_nan: WidenNan::FixedQuiet,
};
/// IEEE-style E4M3 (ml_dtypes `float8_e4m3`): 1.4.3, bias 7, Inf and NaN as IEEE; every NaN
/// narrows to `0x7C | sign` and widens to the quiet NaN of its sign.
pub const E4M3IEEE_DEF: FormatDef = FormatDef {
    name: "F8E4M3IEEE",
    exp_bits: 4,
    man_bits: 3,
    bias: 7,
    kind: Kind::Ieee,
    narrow_nan: NarrowNan::Fixed(0x7C),
    widen_nan: WidenNan::FixedQuiet,
};
/// E4M3B11FNUZ (ml_dtypes `float8_e4m3b11fnuz`): 1.4.3, bias 11, NaN = 0x80 only, no Inf,
/// no -0.
pub const E4M3B11FNUZ_DEF: FormatDef = FormatDef {
    name: "F8E4M3B11FNUZ",
    exp_bits: 4,
    man_bits: 3,
    bias: 11,
    kind: Kind::Fnuz,
    narrow_nan: NarrowNan::Unsigned(0x80),
    widen_nan: WidenNan::FixedQuiet,
};
/// E5M3FNU (ml_dtypes `float8_e5m3fnu`, UE5M3): 0.5.3, bias 15, no sign, NaN = 0xFF only, no
/// Inf.
pub const E5M3FNU_DEF: FormatDef = FormatDef {
    name: "F8E5M3FNU",
    exp_bits: 5,
    man_bits: 3,
    bias: 15,
    kind: Kind::Unsigned,
    narrow_nan: NarrowNan::Unsigned(0xFF),
    widen_nan: WidenNan::FixedQuiet,
};
/// MX E8M0 scale: 0.8.0, bias 127, NaN = 0xFF, no zero, no sign.
pub const E8M0_DEF: FormatDef = FormatDef {
    name: "F8E8M0",
    exp_bits: 8,
    man_bits: 0,
    bias: 127,
    kind: Kind::ExponentOnly,
    narrow_nan: NarrowNan::Unsigned(0xFF),
    widen_nan: WidenNan::FixedQuiet,
};

impl FormatDef {
    /// Whether the format has a sign bit.
    pub const fn signed(&self) -> bool {
        !matches!(self.kind, Kind::ExponentOnly | Kind::Unsigned)
    }
    /// Total width in bits.
    pub const fn bits(&self) -> u32 {
        self.signed() as u32 + self.exp_bits + self.man_bits
    }
    /// Exponent bias.
    pub const fn bias(&self) -> i32 {
        self.bias
    }
    /// The sign bit of a code (0 without a sign).
    pub const fn sign_bit(&self) -> u32 {
        if self.signed() {
            1 << (self.bits() - 1)
        } else {
            0
        }
    }
    /// Mask of the magnitude bits.
    pub const fn mag_mask(&self) -> u32 {
        (self.codes() - 1) & !self.sign_bit()
    }
    /// Number of codes (2^bits).
    pub const fn codes(&self) -> u32 {
        1 << self.bits()
    }
    /// Magnitude code of the largest finite value.
    pub const fn max_code(&self) -> u32 {
        match self.kind {
            // Everything below the all-ones exponent.
            Kind::Ieee => (((1 << self.exp_bits) - 1) << self.man_bits) - 1,
            // Everything but the all-ones magnitude (the NaN).
            Kind::AllOnesNan | Kind::ExponentOnly | Kind::Unsigned => self.mag_mask() - 1,
            // Every magnitude.
            Kind::Fnuz | Kind::Finite => self.mag_mask(),
        }
    }
    /// Magnitude code of infinity, if the format has one.
    pub const fn inf_code(&self) -> Option<u32> {
        match self.kind {
            Kind::Ieee => Some(((1 << self.exp_bits) - 1) << self.man_bits),
            _ => None,
        }
    }
    /// Code (sign included) that overflow gives under `NonSaturating`: ±Inf, the NaN where
    /// there is no Inf (E4M3 `0x7F | sign`, fnuz `0x80`, E8M0 `0xFF`), else ±MAX.
    pub const fn nonsat_overflow(&self, negative: bool) -> u32 {
        let sign = if negative { self.sign_bit() } else { 0 };
        match self.kind {
            Kind::Ieee => sign | (((1 << self.exp_bits) - 1) << self.man_bits),
            Kind::AllOnesNan => sign | self.mag_mask(),
            Kind::Fnuz => self.sign_bit(),
            Kind::Finite => sign | self.max_code(),
            Kind::ExponentOnly | Kind::Unsigned => self.mag_mask(),
        }
    }
    /// Whether a code (high bits above the format ignored) is a NaN.
    pub const fn is_nan_code(&self, code: u32) -> bool {
        let code = code & (self.codes() - 1);
        let mag = code & self.mag_mask();
        match self.kind {
            Kind::Ieee => mag > self.max_code() + 1,
            Kind::AllOnesNan => mag == self.mag_mask(),
            Kind::Fnuz => code == self.sign_bit(),
            Kind::Finite => false,
            Kind::ExponentOnly => code == 0xFF,
            Kind::Unsigned => code == self.mag_mask(),
        }
    }
}

/// `2^n` exactly, for `n` in `f64`'s normal exponent range.
pub fn pow2(n: i32) -> f64 {
    assert!((-1022..=1023).contains(&n), "2^{n} is not a normal f64");
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// The oracle of one format (see the module docs).
pub struct Oracle {
    /// The format's definition.
    pub def: FormatDef,
    /// `values[c]` is the value of magnitude code `c` for `c` in `0..=MAX`, and
    /// `values[MAX + 1]` is the overflow sentinel.
    pub values: Vec<f64>,
    /// `mids[k] = (values[k] + values[k + 1]) / 2` for `k` in `0..=MAX`, then `+Inf` (so that
    /// a forward search always stops inside the slice).
    pub mids: Vec<f64>,
    /// Cached `def.max_code()` and `def.sign_bit()`.
    max: u32,
    sign_bit: u32,
}

impl Oracle {
    /// Builds the value and midpoint tables from the definition.
    pub fn new(def: FormatDef) -> Oracle {
        let m_bits = def.man_bits as i32;
        let frac_mask = (1u32 << def.man_bits) - 1;
        let max = def.max_code();
        let mut values = Vec::with_capacity(max as usize + 2);
        for c in 0..=max {
            let e = (c >> def.man_bits) as i32;
            let m = f64::from(c & frac_mask);
            let v = if def.kind == Kind::ExponentOnly {
                // 2^(c - bias), no subnormals: code 0 is the smallest power of two.
                pow2(c as i32 - def.bias())
            } else if e == 0 {
                // Subnormal: m / 2^M * 2^(1 - bias).
                m * pow2(1 - def.bias() - m_bits)
            } else {
                // Normal: (1 + m / 2^M) * 2^(e - bias).
                (pow2(m_bits) + m) * pow2(e - def.bias() - m_bits)
            };
            values.push(v);
        }
        // The next value above MAX: one ulp of MAX's binade more (for E8M0, the next power
        // of two).
        let max_exp = (max >> def.man_bits) as i32;
        values.push(values[max as usize] + pow2(max_exp - def.bias() - m_bits));
        assert!(def.kind != Kind::ExponentOnly || values[max as usize + 1] == pow2(128));

        // Sanity of the table: strictly increasing, every finite value exact in f32.
        for w in values.windows(2) {
            assert!(w[0] < w[1], "{}: values not increasing", def.name);
        }
        for &v in &values[..=max as usize] {
            assert_eq!(f64::from(v as f32), v, "{}: {v} not exact in f32", def.name);
        }

        let mut mids: Vec<f64> = values.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect();
        for (k, &m) in mids.iter().enumerate() {
            // Exactness of the halved sum: it lies strictly between its two values, and
            // doubling it back gives the exact sum (no rounding happened).
            assert!(values[k] < m && m < values[k + 1]);
            assert_eq!(
                m * 2.0 - values[k],
                values[k + 1],
                "{}: inexact midpoint",
                def.name
            );
        }
        mids.push(f64::INFINITY);
        Oracle {
            def,
            values,
            mids,
            max,
            sign_bit: def.sign_bit(),
        }
    }

    /// Largest finite magnitude code.
    pub fn max_code(&self) -> u32 {
        self.max
    }

    /// Magnitude code of the overflow sentinel (`MAX + 1`).
    pub fn overflow_index(&self) -> u32 {
        self.max + 1
    }

    /// Index of the nearest value to a finite magnitude `x >= 0`, ties to the even code:
    /// `0..=MAX`, or `MAX + 1` for overflow.
    pub fn round_magnitude(&self, x: f64) -> u32 {
        debug_assert!(x >= 0.0 && x.is_finite());
        let p = self.mids.partition_point(|&m| m < x);
        self.resolve(p, x)
    }

    /// Given `p` = number of midpoints below `x`, the rounded index.
    #[inline(always)]
    fn resolve(&self, p: usize, x: f64) -> u32 {
        // p <= MAX + 1 because mids ends with +Inf; that last entry never equals x.
        let p32 = p as u32;
        if self.mids[p] == x {
            if self.def.kind == Kind::ExponentOnly {
                // E8M0 rounds ties up (in linear space).
                p32 + 1
            } else {
                // Exactly between values[p] and values[p + 1]: the even code wins.
                p32 + (p32 & 1)
            }
        } else {
            p32
        }
    }

    /// Applies the sign and the overflow policy to the rounded index of a finite source
    /// magnitude `x`.
    #[inline(always)]
    pub fn finish(&self, negative: bool, x: f64, index: u32, mode: Overflow) -> u32 {
        match self.def.kind {
            // E8M0 has no zero and no sign: nothing represents them.
            Kind::ExponentOnly if negative || x == 0.0 => return 0xFF,
            // An unsigned format has no code for a negative value but -0, which is +0.
            Kind::Unsigned if negative => {
                return if x == 0.0 { 0 } else { self.def.mag_mask() };
            }
            // fnuz has no negative zero: a result of magnitude zero is +0.
            Kind::Fnuz if index == 0 => return 0,
            _ => {}
        }
        if index > self.max {
            return match mode {
                Overflow::Saturate => {
                    if negative {
                        self.max | self.sign_bit
                    } else {
                        self.max
                    }
                }
                Overflow::NonSaturating => self.def.nonsat_overflow(negative),
            };
        }
        if negative {
            index | self.sign_bit
        } else {
            index
        }
    }

    /// The code of an infinite source.
    fn infinity(&self, negative: bool, mode: Overflow) -> u32 {
        if self.def.kind == Kind::ExponentOnly {
            0xFF
        } else {
            self.finish(negative, f64::INFINITY, self.overflow_index(), mode)
        }
    }

    /// The NaN code for a NaN source whose fraction field, aligned so that its top bit is
    /// bit `frac_bits - 1`, is `frac`, under NaN policy `nan`.
    fn nan_code(&self, negative: bool, frac: u64, frac_bits: u32, nan: NanPolicy) -> u32 {
        let m = self.def.man_bits;
        let sign = if negative { self.def.sign_bit() } else { 0 };
        match (nan, self.def.narrow_nan) {
            (NanPolicy::ToMax, _) | (_, NarrowNan::Max) => sign | self.max,
            (NanPolicy::Canonical, NarrowNan::QuietKeepTopPayload) => {
                sign | self.def.inf_code().unwrap() | (1 << (m - 1))
            }
            (_, NarrowNan::QuietKeepTopPayload) => {
                let top = (frac >> (frac_bits - m)) as u32;
                sign | self.def.inf_code().unwrap() | (1 << (m - 1)) | top
            }
            (_, NarrowNan::Fixed(c)) => sign | c,
            (_, NarrowNan::Unsigned(c)) => c,
        }
    }

    /// Expected code for `f64` bits under a NaN policy (binary search; any order of calls).
    pub fn narrow_f64_nan(&self, bits: u64, mode: Overflow, nan: NanPolicy) -> u32 {
        let neg = bits >> 63 != 0;
        let x = f64::from_bits(bits).abs();
        if x.is_nan() {
            self.nan_code(neg, bits & ((1 << 52) - 1), 52, nan)
        } else if x.is_infinite() {
            self.infinity(neg, mode)
        } else {
            self.finish(neg, x, self.round_magnitude(x), mode)
        }
    }

    /// Expected code for `f32` bits under a NaN policy (binary search; any order of calls).
    pub fn narrow_f32_nan(&self, bits: u32, mode: Overflow, nan: NanPolicy) -> u32 {
        let neg = bits >> 31 != 0;
        let x = f32::from_bits(bits).abs();
        if x.is_nan() {
            self.nan_code(neg, u64::from(bits & 0x007F_FFFF), 23, nan)
        } else if x.is_infinite() {
            self.infinity(neg, mode)
        } else {
            let x = f64::from(x);
            self.finish(neg, x, self.round_magnitude(x), mode)
        }
    }

    /// Expected code for `f64` bits under `NanPolicy::Preserve`.
    pub fn narrow_f64(&self, bits: u64, mode: Overflow) -> u32 {
        self.narrow_f64_nan(bits, mode, NanPolicy::Preserve)
    }

    /// Expected code for `f32` bits under `NanPolicy::Preserve`.
    pub fn narrow_f32(&self, bits: u32, mode: Overflow) -> u32 {
        self.narrow_f32_nan(bits, mode, NanPolicy::Preserve)
    }

    /// Expected `f32` bits of a code widened.
    /// Bits of a stored byte above the format's width (fp6, fp4) are ignored.
    pub fn widen_f32(&self, code: u32) -> u32 {
        let code = code & (self.def.codes() - 1);
        let sign = if code & self.def.sign_bit() != 0 {
            1 << 31
        } else {
            0
        };
        let mag = code & self.def.mag_mask();
        let frac = mag & ((1 << self.def.man_bits) - 1);
        let bits = if self.def.is_nan_code(code) {
            let payload = frac << (23 - self.def.man_bits);
            match self.def.widen_nan {
                WidenNan::QuietKeepPayload => 0x7FC0_0000 | payload,
                WidenNan::Plain => 0x7F80_0000 | payload,
                WidenNan::FixedQuiet => 0x7FC0_0000,
            }
        } else if Some(mag) == self.def.inf_code() {
            f32::INFINITY.to_bits()
        } else {
            (self.values[mag as usize] as f32).to_bits()
        };
        sign | bits
    }

    /// Expected `f64` bits of a code widened: the value itself, or for a NaN the `f32` NaN
    /// converted as IEEE says (sign and payload kept, quiet bit set).
    pub fn widen_f64(&self, code: u32) -> u64 {
        let code = code & (self.def.codes() - 1);
        let sign = if code & self.def.sign_bit() != 0 {
            1 << 63
        } else {
            0
        };
        let mag = code & self.def.mag_mask();
        let bits = if self.def.is_nan_code(code) {
            let f32_frac = u64::from(self.widen_f32(code) & 0x007F_FFFF);
            0x7FF8_0000_0000_0000 | (f32_frac << 29)
        } else if Some(mag) == self.def.inf_code() {
            f64::INFINITY.to_bits()
        } else {
            self.values[mag as usize].to_bits()
        };
        sign | bits
    }

    /// A cursor for a stream of magnitudes that is mostly non-decreasing.
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor {
            oracle: self,
            p: 0,
            prev: f64::INFINITY,
        }
    }
}

/// Rounds a stream of magnitudes by walking the midpoint list with a pointer: for consecutive
/// bit patterns (monotonic values) each step costs O(1) instead of a binary search. When a
/// magnitude is smaller than the previous one, or far ahead, it falls back to a binary
/// search, so any order is correct.
pub struct Cursor<'a> {
    oracle: &'a Oracle,
    p: usize,
    prev: f64,
}

impl Cursor<'_> {
    /// Same result as [`Oracle::round_magnitude`].
    #[inline(always)]
    pub fn round(&mut self, x: f64) -> u32 {
        // Fast path: x is still below the midpoint the pointer is at.
        if x < self.prev || self.oracle.mids[self.p] < x {
            self.seek(x);
        }
        self.prev = x;
        self.oracle.resolve(self.p, x)
    }

    /// Moves the pointer to the number of midpoints below `x`.
    #[inline(never)]
    fn seek(&mut self, x: f64) {
        let mids = &self.oracle.mids;
        if x < self.prev {
            self.p = mids.partition_point(|&m| m < x);
            return;
        }
        // Invariant: mids[..p] are all < prev <= x. Walk a few steps, then search.
        for _ in 0..8 {
            if mids[self.p] >= x {
                return;
            }
            self.p += 1;
        }
        self.p += mids[self.p..].partition_point(|&m| m < x);
    }
}

/// A narrow element type and its oracle.
pub trait Narrow: Element + bytemuck::Pod + fmt::Debug {
    /// The format's definition.
    const DEF: FormatDef;
    /// The element with this code.
    fn from_code(c: u32) -> Self;
    /// The element's code.
    fn code(self) -> u32;
    /// The format's oracle, built once per process.
    fn oracle() -> &'static Oracle;
    /// The type's own `from_f32_opts` (the element function under test), as a code.
    fn code_from_f32_opts(x: f32, o: vcvt::Options) -> u32;
    /// The type's own `from_f64_opts`, as a code.
    fn code_from_f64_opts(x: f64, o: vcvt::Options) -> u32;
}

macro_rules! narrow_impl {
    ($t:ty, $bits:ty, $def:expr) => {
        impl Narrow for $t {
            const DEF: FormatDef = $def;
            fn from_code(c: u32) -> Self {
                <$t>::from_bits(c as $bits)
            }
            fn code(self) -> u32 {
                u32::from(self.to_bits())
            }
            fn oracle() -> &'static Oracle {
                static O: OnceLock<Oracle> = OnceLock::new();
                O.get_or_init(|| Oracle::new($def))
            }
            fn code_from_f32_opts(x: f32, o: vcvt::Options) -> u32 {
                u32::from(<$t>::from_f32_opts(x, o).to_bits())
            }
            fn code_from_f64_opts(x: f64, o: vcvt::Options) -> u32 {
                u32::from(<$t>::from_f64_opts(x, o).to_bits())
            }
        }
    };
}
narrow_impl!(F16, u16, F16_DEF);
narrow_impl!(BF16, u16, BF16_DEF);
narrow_impl!(F8E4M3, u8, E4M3_DEF);
narrow_impl!(F8E5M2, u8, E5M2_DEF);
narrow_impl!(F8E4M3FNUZ, u8, E4M3FNUZ_DEF);
narrow_impl!(F8E5M2FNUZ, u8, E5M2FNUZ_DEF);
narrow_impl!(F6E2M3, u8, E2M3_DEF);
narrow_impl!(F6E3M2, u8, E3M2_DEF);
narrow_impl!(F4E2M1, u8, E2M1_DEF);
narrow_impl!(F8E8M0, u8, E8M0_DEF);
narrow_impl!(F8E3M4, u8, E3M4_DEF);
narrow_impl!(F8E4M3IEEE, u8, E4M3IEEE_DEF);
narrow_impl!(F8E4M3B11FNUZ, u8, E4M3B11FNUZ_DEF);
narrow_impl!(F8E5M3FNU, u8, E5M3FNU_DEF);

/// Fills `sat` and `nonsat` with the expected codes of `src` under each policy, walking the
/// midpoints (fast for consecutive bit patterns, correct for any order). A run of
/// consecutive bit patterns of one sign (the chunks of the 2^32 sweeps) goes to
/// [`expect_f32_run`], which fills whole intervals between rounding boundaries at once.
pub fn expect_f32_block<T: Narrow>(src: &[f32], sat: &mut [T], nonsat: &mut [T]) {
    if let (Some(first), Some(last)) = (src.first(), src.last()) {
        let (b0, b1) = (first.to_bits(), last.to_bits());
        let n = src.len() as u32;
        if b1.wrapping_sub(b0) == n - 1
            && b0 >> 31 == b1 >> 31
            && b1 >= b0
            && src.iter().zip(b0..=b1).all(|(x, b)| x.to_bits() == b)
        {
            expect_f32_run(b0, sat, nonsat);
            return;
        }
    }
    expect_f32_each(src, sat, nonsat);
}

/// [`expect_f32_block`] one element at a time (a cursor over the midpoints).
pub fn expect_f32_each<T: Narrow>(src: &[f32], sat: &mut [T], nonsat: &mut [T]) {
    let oracle = T::oracle();
    let mut cur = oracle.cursor();
    for ((x, s), n) in src.iter().zip(sat.iter_mut()).zip(nonsat.iter_mut()) {
        let bits = x.to_bits();
        let a = bits & 0x7FFF_FFFF;
        if a >= 0x7F80_0000 {
            *s = T::from_code(oracle.narrow_f32(bits, Overflow::Saturate));
            *n = T::from_code(oracle.narrow_f32(bits, Overflow::NonSaturating));
        } else {
            let neg = bits != a;
            let x = f64::from(f32::from_bits(a));
            let r = cur.round(x);
            *s = T::from_code(oracle.finish(neg, x, r, Overflow::Saturate));
            *n = T::from_code(oracle.finish(neg, x, r, Overflow::NonSaturating));
        }
    }
}

/// [`expect_f32_block`] for the consecutive bit patterns `base, base + 1, ...` (one sign):
/// the same answers, computed once per interval between rounding boundaries.
///
/// Within one sign, magnitudes grow with the bit pattern, and the oracle's answer is constant
/// on each open interval between consecutive midpoints (`mids`, all exact in `f32`): it can
/// only change at a midpoint (a tie, decided on its own), at zero (E8M0 has no zero) and at
/// the non-finite patterns, which are each evaluated alone. So each step evaluates the
/// oracle at the first pattern of an interval ([`Oracle::narrow_f32`], a binary search) and
/// copies the answer up to the pattern of the next midpoint.
pub fn expect_f32_run<T: Narrow>(base: u32, sat: &mut [T], nonsat: &mut [T]) {
    let oracle = T::oracle();
    let n = sat.len();
    assert_eq!(n, nonsat.len());
    let mut j = 0usize;
    while j < n {
        let bits = base + j as u32;
        let a = bits & 0x7FFF_FFFF;
        let s = T::from_code(oracle.narrow_f32(bits, Overflow::Saturate));
        let ns = T::from_code(oracle.narrow_f32(bits, Overflow::NonSaturating));
        // Where the interval holding `a` ends (exclusive), as a pattern of this sign.
        let end = if a >= 0x7F80_0000 || a == 0 {
            // Non-finite, or zero: alone.
            j + 1
        } else {
            let x = f64::from(f32::from_bits(a));
            let p = oracle.mids.partition_point(|&m| m <= x);
            if p > 0 && oracle.mids[p - 1] == x {
                // A tie: alone.
                j + 1
            } else {
                let next = oracle.mids[p];
                let stop = if next > f64::from(f32::MAX) {
                    0x7F80_0000 // the run ends at Inf
                } else {
                    let b = (next as f32).to_bits();
                    assert_eq!(
                        f64::from(f32::from_bits(b)),
                        next,
                        "midpoint not exact in f32"
                    );
                    b
                };
                let k = (stop - a) as usize;
                (j + k).min(n)
            }
        };
        debug_assert!(end > j);
        sat[j..end].fill(s);
        nonsat[j..end].fill(ns);
        j = end;
    }
}

/// Like [`expect_f32_block`] for `f64` sources.
pub fn expect_f64_block<T: Narrow>(src: &[f64], sat: &mut [T], nonsat: &mut [T]) {
    let oracle = T::oracle();
    let mut cur = oracle.cursor();
    for ((x, s), n) in src.iter().zip(sat.iter_mut()).zip(nonsat.iter_mut()) {
        let bits = x.to_bits();
        if !x.is_finite() {
            *s = T::from_code(oracle.narrow_f64(bits, Overflow::Saturate));
            *n = T::from_code(oracle.narrow_f64(bits, Overflow::NonSaturating));
        } else {
            let neg = x.is_sign_negative();
            let r = cur.round(x.abs());
            *s = T::from_code(oracle.finish(neg, x.abs(), r, Overflow::Saturate));
            *n = T::from_code(oracle.finish(neg, x.abs(), r, Overflow::NonSaturating));
        }
    }
}

/// One wrong result.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// What was converted (pair, backend, mode).
    pub what: String,
    /// Source bits.
    pub input: u64,
    /// Expected result bits.
    pub expected: u64,
    /// Result bits.
    pub got: u64,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: input {:#x}: expected {:#x}, got {:#x}",
            self.what, self.input, self.expected, self.got
        )
    }
}

/// Counts comparisons and keeps the first few mismatches.
#[derive(Default)]
pub struct Report {
    /// Number of results compared.
    pub cases: u64,
    /// Number of wrong results.
    pub failures: u64,
    /// The first few wrong results.
    pub first: Vec<Mismatch>,
}

/// How many mismatches a report keeps.
const KEEP: usize = 24;
/// How many mismatches of the same kind (same pair, backend and mode) a report keeps.
const KEEP_PER_KIND: usize = 3;

impl Report {
    /// Records a wrong result (keeping at most a few examples of each kind, so that the
    /// report shows every backend and mode that fails).
    pub fn fail(&mut self, m: Mismatch) {
        self.failures += 1;
        let same_kind = self.first.iter().filter(|f| f.what == m.what).count();
        if self.first.len() < KEEP && same_kind < KEEP_PER_KIND {
            self.first.push(m);
        }
    }

    /// Adds another report's counts and mismatches.
    pub fn merge(&mut self, other: Report) {
        self.cases += other.cases;
        self.failures += other.failures;
        for m in other.first {
            if self.first.len() < KEEP {
                self.first.push(m);
            }
        }
    }

    /// Compares results with expected ones element by element (a fast slice comparison
    /// first) and records the differences. `input(i)` gives the source bits of element `i`.
    ///
    /// Only this shim is generic (it is instantiated once per type and pair of closures,
    /// hundreds of times in a test target); the work is done once, on bytes, by
    /// [`Report::compare_bytes`].
    #[inline]
    pub fn compare<T: bytemuck::Pod>(
        &mut self,
        what: impl Fn() -> String,
        expected: &[T],
        got: &[T],
        input: impl Fn(usize) -> u64,
    ) {
        assert_eq!(expected.len(), got.len());
        self.compare_bytes(
            &what,
            bytemuck::cast_slice(expected),
            bytemuck::cast_slice(got),
            std::mem::size_of::<T>(),
            &input,
        );
    }

    /// [`Report::compare`] on the bytes of elements of `size` bytes (1, 2, 4 or 8) in native
    /// byte order: counts the elements and records every one that differs.
    pub fn compare_bytes(
        &mut self,
        what: &dyn Fn() -> String,
        expected: &[u8],
        got: &[u8],
        size: usize,
        input: &dyn Fn(usize) -> u64,
    ) {
        assert_eq!(expected.len(), got.len());
        assert_eq!(expected.len() % size, 0);
        self.cases += (expected.len() / size) as u64;
        if expected != got {
            self.record_mismatches(what, expected, got, size, input);
        }
    }

    /// The slow half of [`Report::compare`]: records every element of `size` bytes that
    /// differs between `expected` and `got`.
    #[cold]
    #[inline(never)]
    fn record_mismatches(
        &mut self,
        what: &dyn Fn() -> String,
        expected: &[u8],
        got: &[u8],
        size: usize,
        input: &dyn Fn(usize) -> u64,
    ) {
        let elements = expected.chunks_exact(size).zip(got.chunks_exact(size));
        for (i, (e, g)) in elements.enumerate() {
            let (e, g) = (bytes_to_u64(e), bytes_to_u64(g));
            if e != g {
                self.fail(Mismatch {
                    what: what(),
                    input: input(i),
                    expected: e,
                    got: g,
                });
            }
        }
    }

    /// Prints the summary line and fails the test if anything mismatched.
    pub fn finish(&self, test: &str, coverage: &str) {
        println!(
            "{test}: {coverage}: {} results compared, {} mismatches",
            self.cases, self.failures
        );
        assert!(self.cases > 0, "{test}: compared nothing");
        if self.failures > 0 {
            for m in &self.first {
                println!("  MISMATCH {m}");
            }
            panic!(
                "{test}: {} mismatches (first: {})",
                self.failures, self.first[0]
            );
        }
    }
}

/// The bits of a plain-data value of 1, 2, 4 or 8 bytes as a `u64`.
pub fn to_u64<T: bytemuck::Pod>(x: &T) -> u64 {
    bytes_to_u64(bytemuck::bytes_of(x))
}

/// The bits of a value of 1, 2, 4 or 8 bytes in native byte order as a `u64`.
pub fn bytes_to_u64(b: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf[..b.len()].copy_from_slice(b);
    u64::from_ne_bytes(buf)
        >> if cfg!(target_endian = "big") {
            64 - 8 * b.len()
        } else {
            0
        }
}

/// SplitMix64: a small, seeded, good-enough generator (no dependency).
pub struct Rng(u64);

impl Rng {
    /// A generator with this seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        // The modulo bias is irrelevant for test inputs.
        self.next_u64() % n
    }
}

/// The stratified `f32` sample that replaces the 2^32 sweep under `VCVT_SWEEP=sample`, for
/// the format of `oracle`: for both signs and all 256 exponent fields, the mantissas of the
/// `f32`s at and next to (±1, ±2 ulps) every rounding midpoint and every value of the format
/// in that binade, the extreme mantissas, and random mantissas up to 4096 per binade.
/// Sorted by bit pattern, which keeps magnitudes monotonic within each sign.
pub fn stratified_f32_sample(oracle: &Oracle, seed: u64) -> Vec<f32> {
    let mut per_exp: Vec<Vec<u32>> = vec![Vec::new(); 256];
    let anchors = oracle.mids[..oracle.mids.len() - 1]
        .iter()
        .chain(&oracle.values);
    for &a in anchors {
        if a > f64::from(f32::MAX) {
            continue;
        }
        let b = (a as f32).to_bits();
        assert_eq!(
            f64::from(f32::from_bits(b)),
            a,
            "anchor {a} not exact in f32"
        );
        for d in -2i64..=2 {
            let n = i64::from(b) + d;
            if (0..0x7F80_0000).contains(&n) {
                per_exp[(n >> 23) as usize].push(n as u32 & 0x007F_FFFF);
            }
        }
    }
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for (e, mants) in per_exp.iter_mut().enumerate() {
        mants.extend([0, 1, 2, 0x40_0000, 0x40_0001, 0x7F_FFFE, 0x7F_FFFF]);
        while mants.len() < 4096 {
            mants.push(rng.next_u64() as u32 & 0x007F_FFFF);
        }
        mants.sort_unstable();
        mants.dedup();
        for sign in [0u32, 1] {
            for &m in mants.iter() {
                out.push(f32::from_bits((sign << 31) | ((e as u32) << 23) | m));
            }
        }
    }
    out.sort_unstable_by_key(|x| x.to_bits());
    out
}

/// Splits `0..n` into two contiguous halves, runs `work` on each in its own thread, and
/// merges the reports. Where threads cannot be spawned (wasm32-wasip1 has none), a half
/// runs on the calling thread instead: the same work and report, one half after the other.
pub fn two_threads(n: u64, work: impl Fn(std::ops::Range<u64>, &mut Report) + Sync) -> Report {
    let half = n.div_ceil(2);
    let work = &work;
    let run = move |range: std::ops::Range<u64>| {
        let mut r = Report::default();
        work(range, &mut r);
        r
    };
    std::thread::scope(|s| {
        let mut total = Report::default();
        let mut hs = Vec::new();
        for range in [0..half, half..n] {
            let mine = range.clone();
            match std::thread::Builder::new().spawn_scoped(s, move || run(mine)) {
                Ok(h) => hs.push(h),
                Err(_) => total.merge(run(range)),
            }
        }
        for h in hs {
            total.merge(h.join().expect("worker panicked"));
        }
        total
    })
}

/// Bit patterns per chunk of the `f32` sweeps.
pub const SWEEP_CHUNK: usize = 1 << 16;

/// Runs `check(chunk, scratch, report)` over all 2^32 `f32` bit patterns, in chunks of 2^16
/// consecutive patterns (monotonic magnitudes: a chunk never straddles the sign bit), on two
/// threads with a scratch value `S` each. Under `VCVT_SWEEP=sample` it runs over the
/// stratified sample of `oracle`'s format instead, in chunks padded with `+0.0` to a multiple
/// of 16 (whole vectors for the instruction wrappers). Returns the merged report and a
/// description of the inputs.
pub fn sweep_f32<S: Default>(
    oracle: &Oracle,
    seed: u64,
    check: impl Fn(&[f32], &mut S, &mut Report) + Sync,
) -> (Report, String) {
    let sample = sample_mode().then(|| stratified_f32_sample(oracle, seed));
    let chunks = match &sample {
        Some(s) => s.len().div_ceil(SWEEP_CHUNK) as u64,
        None => 1 << 16,
    };
    let report = two_threads(chunks, |range, report| {
        let mut scratch = S::default();
        let mut buf = vec![0f32; SWEEP_CHUNK];
        for i in range {
            let n = match &sample {
                Some(s) => {
                    let lo = i as usize * SWEEP_CHUNK;
                    let part = &s[lo..(lo + SWEEP_CHUNK).min(s.len())];
                    let n = part.len().next_multiple_of(16);
                    buf[..part.len()].copy_from_slice(part);
                    buf[part.len()..n].fill(0.0);
                    n
                }
                None => {
                    let base = (i as u32) << 16;
                    for (j, x) in buf.iter_mut().enumerate() {
                        *x = f32::from_bits(base | j as u32);
                    }
                    SWEEP_CHUNK
                }
            };
            check(&buf[..n], &mut scratch, report);
        }
    });
    let what = match &sample {
        Some(s) => format!("stratified sample of {} f32 inputs", s.len()),
        None => "all 2^32 f32 inputs".to_string(),
    };
    (report, what)
}

/// A command that runs this test binary again, as a child process (for settings read once per
/// process, such as environment variables). Under emulation (qemu-user without binfmt_misc)
/// the child goes through the same runner as this binary: `VCVT_TEST_RUNNER`, e.g.
/// "qemu-aarch64 -L /usr/aarch64-linux-gnu".
pub fn rerun_self() -> std::process::Command {
    let exe = std::env::current_exe().unwrap();
    let runner = std::env::var("VCVT_TEST_RUNNER").unwrap_or_default();
    let mut words = runner.split_whitespace();
    match words.next() {
        Some(prog) => {
            let mut c = std::process::Command::new(prog);
            c.args(words).arg(&exe);
            c
        }
        None => std::process::Command::new(&exe),
    }
}
