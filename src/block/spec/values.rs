//! The value types of the block formats and the exact helpers every block routine shares:
//! the source and destination traits ([`BlockSource`], [`BlockDest`], [`DestKind`]), the
//! integer `amax`, the exact products of the scaled building blocks and the rounding "in a
//! dtype" that the profiles use.
//!
//! The traits are defined here, below both the specification routines and the kernels
//! that are generic over them; their implementations for `f32`, `BF16` and `F16` live in
//! the public API (`src/block/mod.rs`), because two of their hidden methods
//! (`f32_bits_of`, `from_f64s`) convert whole slices on a backend through the crate's
//! slice conversions, which sit above this layer.

use core::mem::MaybeUninit;

use crate::codec;
use crate::options::Policy;
use crate::{BF16, Backend, F16, NanPolicy, Overflow};

/// The seal of the public block traits (`BlockSource`, `BlockDest`, `ScaledCode`): a public
/// trait no one outside the crate can name.
pub(crate) mod private {
    pub trait Sealed {}
}

/// A type whose values can be quantized into blocks: `f32`, [`BF16`], [`F16`].
///
/// Sealed. Every value is exactly an f32, which is what the profiles compute with.
pub trait BlockSource: private::Sealed + Copy + Send + Sync + 'static {
    #[doc(hidden)]
    const IS_F32: bool = false;
    #[doc(hidden)]
    const KIND: DestKind;
    #[doc(hidden)]
    fn f32_bits(self) -> u32;
    /// The magnitude bits of the code (`code & ABS`), ordered as the magnitudes, NaNs above
    /// infinity.
    #[doc(hidden)]
    const ABS: u32;
    /// The code of +Inf.
    #[doc(hidden)]
    const INF: u32;
    #[doc(hidden)]
    fn code_bits(self) -> u32;
    /// f32 bits of a code (exact).
    #[doc(hidden)]
    fn widen_code(c: u32) -> u32;
    /// `f32_bits` of each value, on `backend` (available).
    #[doc(hidden)]
    fn f32_bits_of(backend: Backend, src: &[Self], dst: &mut [u32]);
}

/// A type that dequantized values can be written as: `f32`, [`BF16`], [`F16`].
///
/// Sealed. Results are rounded once to it (nearest, ties to even; overflow to ±Inf).
pub trait BlockDest: private::Sealed + Copy + Send + Sync + 'static {
    #[doc(hidden)]
    const KIND: DestKind;
    #[doc(hidden)]
    fn from_wide(x: f64) -> Self;
    #[doc(hidden)]
    fn from_f32_bits(x: u32) -> Self;
    #[doc(hidden)]
    fn from_raw(bits: u32) -> Self;
    /// `from_wide` of each value, on `backend` (available).
    #[doc(hidden)]
    fn from_f64s(backend: Backend, src: &[f64], dst: &mut [Self]);
    /// The slice as f32 values if `Self` is `f32`.
    #[doc(hidden)]
    fn f32s_mut(dst: &mut [Self]) -> Option<&mut [f32]>;
}

/// Which [`BlockDest`] a type is (for the SIMD kernel tables).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DestKind {
    /// `f32`.
    F32,
    /// [`BF16`].
    Bf16,
    /// [`F16`].
    F16,
}

pub(crate) const TO_DEST: Policy = Policy {
    overflow: Overflow::NonSaturating,
    nan: NanPolicy::Preserve,
};

/// The f32 bits of `max |x|` from the largest magnitude code `m`: NaN codes (above the
/// infinity code) give `0x7FC00000`.
#[inline(always)]
pub(crate) fn finish_amax<S: BlockSource>(m: u32) -> u32 {
    if m > S::INF {
        0x7FC0_0000
    } else {
        S::widen_code(m)
    }
}

/// The bits of `max |x|` (NaN if any `x` is NaN): the maximum of the magnitude codes as
/// integers, which orders non-NaN magnitudes as their values and puts every NaN above
/// `+Inf`. (The loop vectorises on every target with an unsigned integer maximum.)
#[inline(always)]
pub(crate) fn amax_bits<S: BlockSource>(src: &[S]) -> u32 {
    let mut m = 0u32;
    for &x in src {
        m = m.max(x.code_bits() & S::ABS);
    }
    finish_amax::<S>(m)
}

/// The f64 value of f32 bits `x`, exactly (NaN payloads kept, not quieted): the same value
/// as `soft::wide`, in a branch-free form that vectorises. A normal or non-finite `x` moves
/// its fields up 29 bits; a subnormal one is its integer fraction (exact in f64) times
/// `2^-149` (exact, and a normal f64). Neither step can be flushed or rounded by MXCSR or
/// FPCR.
#[inline(always)]
pub(crate) fn wide_fast(x: u32) -> f64 {
    let a = x & 0x7FFF_FFFF;
    let sign = ((x & 0x8000_0000) as u64) << 32;
    let fields = (a as u64) << 29;
    let normal = fields + ((1023 - 127) << 52);
    let special = fields | 0x7FF0_0000_0000_0000;
    let sub = (a as f64 * f64::from_bits((1023 - 149) << 52)).to_bits();
    let bits = if a < 0x0080_0000 {
        sub
    } else if a >= 0x7F80_0000 {
        special
    } else {
        normal
    };
    f64::from_bits(bits | sign)
}

/// `x · s` for two f64 values that are f32 values: exact (24 × 24 significant bits fit in
/// 53, and the exponents stay far inside f64's normal range, so no rounding, flushing or
/// denormal input can occur under any FP environment), with NaN made deterministic: a NaN
/// operand propagates (`x` first), quieted, and `0 · ∞` gives `+NaN`. (Hardware differs
/// there: x86's default NaN is negative, Arm's positive, and a compiler may commute the
/// operands.)
#[inline(always)]
fn exact_product(x: f64, s: f64) -> f64 {
    let p = x * s;
    if p.is_nan() {
        let q = |v: f64| f64::from_bits(v.to_bits() | (1 << 51));
        if x.is_nan() {
            q(x)
        } else if s.is_nan() {
            q(s)
        } else {
            f64::NAN
        }
    } else {
        p
    }
}

/// `out[i] = exact_product(wide_fast(bits[i]), s)`: the scaled building blocks' inner loop,
/// also compiled per backend (`BlockKernels::products`) so that it vectorises at the
/// backend's width.
#[inline(always)]
pub(crate) fn products(bits: &[u32], s: f64, out: &mut [f64]) {
    for (p, &x) in out.iter_mut().zip(bits) {
        *p = exact_product(wide_fast(x), s);
    }
}

/// f32 bits `x` rounded to the type `kind` names (nearest even; overflow to ±Inf; NaN keeps
/// its sign and top payload bits) and widened back to f32 bits: the value a computation
/// "in that dtype" holds.
#[inline(always)]
pub(crate) fn round_to(kind: DestKind, x: u32) -> u32 {
    match kind {
        DestKind::F32 => x,
        DestKind::Bf16 => codec::widen_f32::<BF16>(codec::narrow_f32::<BF16>(x, TO_DEST)),
        DestKind::F16 => codec::widen_f32::<F16>(codec::narrow_f32::<F16>(x, TO_DEST)),
    }
}

/// Writes `v` into an uninitialised slot.
#[inline(always)]
pub(crate) fn put<T>(slot: &mut MaybeUninit<T>, v: T) {
    slot.write(v);
}

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    use super::*;
    use crate::block::spec::soft;

    /// `wide_fast` is the exact conversion: against `soft::wide` (the integer one) on a
    /// stride through every bit pattern and on every subnormal and edge pattern (NaNs
    /// compared after quieting, which `exact_product` applies).
    pub fn wide_fast_is_exact() {
        let step = if cfg!(miri) { 1_000_003 } else { 4093 };
        let edges = (0..=64u32).chain(
            (0x007F_FFC0..=0x0080_0040)
                .chain(0x7F7F_FFF0..=0x7F80_0010)
                .chain(0x7FBF_FFF0..=0x7FC0_0010),
        );
        let xs = (0..=u32::MAX)
            .step_by(step)
            .chain(edges.clone())
            .chain(edges.map(|x| x | 0x8000_0000));
        for x in xs {
            let got = wide_fast(x).to_bits();
            let got = if wide_fast(x).is_nan() {
                got | (1 << 51)
            } else {
                got
            };
            assert_eq!(got, soft::wide(x).to_bits(), "{x:#x}");
        }
    }
}
