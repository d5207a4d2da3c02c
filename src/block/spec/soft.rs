//! IEEE f32 arithmetic that does not depend on MXCSR/FPCR, for the reference orders of
//! the quantization profiles.
//!
//! Several ecosystems define their block scales by a particular sequence of f32 operations
//! (`amax / 6.0`, `x / (s8 · s2)`, `f32(e4m3) · scale_inv`). vcvt follows each sequence,
//! but its results must not change when the caller runs with flush-to-zero, DAZ or a
//! directed rounding mode, and plain `f32` operators would (DAZ reads an f32 subnormal
//! scale as zero; FTZ flushes a subnormal product). So every such operation is done here as:
//!
//! 1. widen both operands to f64 with integer code ([`codec::f32_bits_to_f64_bits`]), so
//!    no float instruction sees an f32 subnormal;
//! 2. the f64 operation. Products of two f32 values are exact in f64 (24 + 24 significant
//!    bits ≤ 53) and lie in 2^-298 .. 2^256, normal f64 numbers: no rounding happens, so
//!    neither the rounding mode nor FTZ/DAZ can change them. A quotient is rounded, but it
//!    is never within one f64 ulp of an f32 rounding boundary without being exactly on it
//!    (the numerator minus the boundary times the denominator is a non-zero multiple of a
//!    quantum far larger than that, the argument behind "double rounding is innocuous when
//!    p' ≥ 2p + 2", Figueroa 1995), and when it is exactly on one it is exact in f64: so
//!    any rounding direction of the f64 step leads to the same f32 below;
//! 3. round the f64 to f32 once, to nearest even, with the integer codec.
//!
//! The result is the correctly rounded IEEE f32 operation, whatever the FP environment.

use crate::codec::{self, Format, NanKind};
use crate::options::Policy;
use crate::{NanPolicy, Overflow};

/// f32 described as a [`Format`], so that the integer codec rounds f64 to f32.
pub(crate) struct F32Format;

impl Format for F32Format {
    const EXP_BITS: u32 = 8;
    const MAN_BITS: u32 = 23;
    const MAX: u32 = 0x7F7F_FFFF;
    const HAS_INF: bool = true;
    const NAN: NanKind = NanKind::Ieee;
    const DEFAULT_OVERFLOW: Overflow = Overflow::NonSaturating;

    #[inline(always)]
    fn nan_to_f32(c: u32) -> u32 {
        c | 0x0040_0000
    }
}

const IEEE: Policy = Policy {
    overflow: Overflow::NonSaturating,
    nan: NanPolicy::Preserve,
};

/// f32 bits → the same value as an `f64`, exactly, with integer code.
#[inline(always)]
pub(crate) fn wide(x: u32) -> f64 {
    f64::from_bits(codec::f32_bits_to_f64_bits(x))
}

/// `x` rounded once to f32 (nearest, ties to even; overflow to ±Inf; NaN keeps its sign and
/// its top payload bits and becomes quiet), as f32 bits.
#[inline(always)]
pub(crate) fn round(x: f64) -> u32 {
    codec::narrow_f64::<F32Format>(x.to_bits(), IEEE)
}

/// The f32 result of an operation on `a` and `b` whose f64 result is `r`, with NaN made
/// deterministic: a NaN operand propagates (the first one, quieted), and an invalid
/// operation (`0 · Inf`, `Inf / Inf`, `0 / 0`) gives `+NaN` (`0x7FC00000`). Hardware
/// differs there (x86's default NaN is negative, Arm's positive).
#[inline(always)]
fn finish(a: u32, b: u32, r: f64) -> u32 {
    if r.is_nan() {
        if a & 0x7FFF_FFFF > 0x7F80_0000 {
            a | 0x0040_0000
        } else if b & 0x7FFF_FFFF > 0x7F80_0000 {
            b | 0x0040_0000
        } else {
            0x7FC0_0000
        }
    } else {
        round(r)
    }
}

/// IEEE f32 `a · b` (bits in, bits out; NaN as [`finish`] says).
#[inline(always)]
pub(crate) fn mul(a: u32, b: u32) -> u32 {
    finish(a, b, wide(a) * wide(b))
}

/// IEEE f32 `a + b` (bits in, bits out; NaN as [`finish`] says).
#[inline(always)]
pub(crate) fn add(a: u32, b: u32) -> u32 {
    finish(a, b, wide(a) + wide(b))
}

/// IEEE f32 `a − b` (bits in, bits out; NaN as [`finish`] says). The f64 difference of two
/// f32 values is rounded at most once, and double rounding is innocuous for subtraction
/// too (53 ≥ 2 · 24 + 2).
#[inline(always)]
pub(crate) fn sub(a: u32, b: u32) -> u32 {
    finish(a, b, wide(a) - wide(b))
}

/// IEEE f32 `a / b` (bits in, bits out; NaN as [`finish`] says).
#[inline(always)]
pub(crate) fn div(a: u32, b: u32) -> u32 {
    finish(a, b, wide(a) / wide(b))
}

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    use super::*;

    /// A small deterministic generator: the tests below compare with the hardware's f32
    /// operations under the default FP environment, the independent reference.
    fn next(s: &mut u64) -> u32 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        (*s >> 16) as u32
    }

    fn same(a: f32, b: u32) -> bool {
        (a.is_nan() && f32::from_bits(b).is_nan()) || a.to_bits() == b
    }

    /// `mul`, `div`, `sub` and `add` against the f32 operations on every pair of special
    /// values and on generated pairs.
    pub fn soft_ops_equal_hardware_f32() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let special = [
            0u32,
            0x8000_0000,
            1,
            0x0040_0000,
            0x007F_FFFF,
            0x0080_0000,
            0x3F80_0000,
            0x7F7F_FFFF,
            0x7F80_0000,
            0x7FC0_0000,
            0x40C0_0000,
            0x43E0_0000,
            0x3480_0000,
        ];
        let n = if cfg!(miri) { 2_000 } else { 2_000_000 };
        for i in 0..n {
            let (a, b) = if i < special.len() * special.len() {
                (special[i % special.len()], special[i / special.len()])
            } else if i % 3 == 0 {
                // Nearby exponents, so that products and quotients land everywhere,
                // subnormal results included.
                let a = next(&mut s);
                (
                    a,
                    (a & 0xC07F_FFFF) ^ (next(&mut s) & 0x3F80_0000 & 0x0F80_0000),
                )
            } else {
                (next(&mut s), next(&mut s))
            };
            let (fa, fb) = (f32::from_bits(a), f32::from_bits(b));
            assert!(same(fa * fb, mul(a, b)), "{a:08x} * {b:08x}");
            assert!(same(fa / fb, div(a, b)), "{a:08x} / {b:08x}");
            assert!(same(fa - fb, sub(a, b)), "{a:08x} - {b:08x}");
            assert!(same(fa + fb, add(a, b)), "{a:08x} + {b:08x}");
        }
    }
}
