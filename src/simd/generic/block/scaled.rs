//! The fused f32 paths of the scaled building blocks (`src/block/scaled.rs`), for the
//! scales whose products need no rounding in f32; the caller keeps the exact f64 route for
//! every other scale.
//!
//! # `narrow_scaled` with a power of two `s = 2^k` ([`narrow_pow2`])
//!
//! The specification rounds the exact product `x · 2^k` once to the format. For the usual
//! scales (for E4M3 `2^-98 ..= 2^115`) the scale is folded into the constants of the
//! narrowing (`lanes::Narrow::new_scaled`, argued there): the kernel costs one add more than
//! the plain narrowing. For the others the product is built in **integer** arithmetic on the magnitude bits, so no FP environment
//! applies: a normal `x` gets `k` added to its exponent field; a subnormal `x` (fraction
//! `f`, value `f · 2^-149`) is first converted to the normal f32 `f` (exact, an integer
//! below 2^23) and gets `k − 149`. Where the resulting field is `1..=254` that is the exact
//! product, a normal f32, which the generic narrowing (`lanes::narrow`, the codec's bits
//! under every MXCSR) rounds once, as the specification does. Where it is `<= 0` the exact
//! product is below 2^-126 and every fp8/fp6/fp4 format (smallest subnormal 2^-17 or
//! larger) rounds it to zero with its sign: the lane becomes ±0, which narrows to that same
//! code (fnuz formats drop the sign of a zero, of a tiny value likewise). Where it is
//! `>= 255` the exact product is at least 2^128, beyond every format's overflow bound, as
//! `±f32::MAX` is: the lane becomes `±MAX`, which overflows to the same code under the
//! format's default policy. ±Inf and NaN pass unchanged (the specification's product of a
//! NaN `x` is `x` quieted, and the narrowing reads only a NaN's sign). E8M0 is not served
//! (its smallest value, 2^-127, is below the cut).
//!
//! # `dequantize_scaled` with an exact scale ([`dequantize_exact`])
//!
//! The caller passes only scales `s` (either sign, normal) whose product with every finite
//! non-zero code of the format is an exact **normal** f32: the significand bits of `s` and
//! of the format together at most 24, the smallest code times `|s|` at least 2^-126 and the
//! largest below 2^128. Then [`Vector::mul_exact_f32`] gives the exact product (no
//! rounding; operands and result normal or zero, so neither the rounding mode, FTZ nor DAZ
//! can change it); `±Inf · s` is `±Inf` and `0 · s` a signed zero, exactly as in f64. A NaN
//! code's lane keeps its widened NaN (the specification quiets the code's NaN and keeps its
//! sign and payload; the hardware's NaN bits are not relied on). The destination rounds that
//! exact value once, as the specification rounds the exact f64 product.

use super::run::{Folded, Identity, Lanes, Out, TO_DEST, is_nan, map};
use crate::block::spec::{BlockDest, DestKind};
use crate::codec::Format;
use crate::options::{NanPolicy, Policy};
use crate::simd::Vector;
use crate::simd::generic::kernels::{Code, Dst, Src};
use crate::simd::generic::lanes;
use crate::simd::generic::words;

/// `x · 2^k` built on the bits (module docs).
struct Pow2<V> {
    /// `k`, two's complement.
    k: V,
    /// `k − 149`, two's complement.
    k_sub: V,
}

impl<V: Vector> Lanes<V> for Pow2<V> {
    #[inline(always)]
    unsafe fn apply(&self, x: V) -> V {
        // SAFETY: the caller's guarantee; no memory is touched.
        unsafe {
            let sign = x.and(V::splat(0x8000_0000));
            let abs = x.and(V::splat(0x7FFF_FFFF));
            // Subnormal (or zero) x: its fraction as an exact normal f32 (zero stays +0).
            let sub = V::splat(0x0080_0000).gt_i32(abs);
            let y = V::select(sub, abs.cvt_u24_f32(), abs);
            let add = V::select(sub, self.k_sub, self.k);
            let e = y.shr(23).add(add);
            let r = y.add(add.shl(23));
            let r = V::select(V::splat(1).gt_i32(e), V::splat(0), r);
            let r = V::select(e.gt_i32(V::splat(254)), V::splat(0x7F7F_FFFF), r);
            // ±Inf and NaN as they are.
            let r = V::select(abs.gt_i32(V::splat(0x7F7F_FFFF)), abs, r);
            r.or(sign)
        }
    }
}

/// `narrow_scaled` of `n` values of `S` with the positive normal power of two `scale`
/// (bits) into codes of `F` (an fp8/fp6/fp4 format other than E8M0), under `F`'s default
/// overflow policy with NaN preserved (module docs).
///
/// # Safety
/// As for `ScaledFn`; `scale` a positive normal power of two.
#[inline(always)]
pub(crate) unsafe fn narrow_pow2<V: Vector, S: Src, F: Format>(
    src: *const u8,
    n: usize,
    scale: u32,
    dst: *mut u8,
) {
    let k = (scale >> 23) as i32 - 127;
    let p = Policy {
        overflow: F::DEFAULT_OVERFLOW,
        nan: NanPolicy::Preserve,
    };
    // SAFETY: forwarded contract.
    unsafe {
        if let Some(c) = lanes::Narrow::<V>::new_scaled::<F>(p, k) {
            // The scale folded into the narrowing's constants (its argument is there).
            map::<V, S, Folded<F>, _>(&Identity, &c, src, dst, n);
            return;
        }
        let m = Pow2 {
            k: V::splat(k as u32),
            k_sub: V::splat((k - 149) as u32),
        };
        let c = Code::<F>::ctx::<V>(p);
        map::<V, S, Code<F>, _>(&m, &c, src, dst, n);
    }
}

/// `x · s`, exact (module docs), NaN lanes kept.
struct MulExact<V>(V);

impl<V: Vector> Lanes<V> for MulExact<V> {
    #[inline(always)]
    unsafe fn apply(&self, x: V) -> V {
        // SAFETY: the caller's guarantee; no memory is touched.
        unsafe { V::select(is_nan(x), x, x.mul_exact_f32(self.0)) }
    }
}

/// `dequantize_scaled` of `n` codes of `F` with an exact scale (bits) into `D` (module
/// docs).
///
/// # Safety
/// As for `ScaledFn`; `scale` exact for `F` as the module docs say.
#[inline(always)]
pub(crate) unsafe fn dequantize_exact<V: Vector, F: Format, D: Out>(
    src: *const u8,
    n: usize,
    scale: u32,
    dst: *mut u8,
) {
    if V::WORDS
        && <D::T as BlockDest>::KIND as usize == DestKind::Bf16 as usize
        && words::scaled_eligible::<F>()
        && scale >> 31 == 0
    {
        // SAFETY: forwarded contract; the conditions of `dequantize_words`.
        unsafe { dequantize_words::<V, F>(src, n, scale, dst) };
        return;
    }
    // SAFETY: forwarded contract.
    unsafe {
        // The lanes are exact finite products, ±Inf, or the widened NaNs of the codes, whose
        // payload (at most the code's fraction bits) sits far above the low 16 bits.
        let c = <D::Finite as Dst>::ctx::<V>(TO_DEST);
        map::<V, Code<F>, D::Finite, _>(&MulExact(V::splat(scale)), &c, src, dst, n);
    }
}

/// [`dequantize_exact`] into BF16 on words, `2 · LANES` codes a vector, for a positive scale
/// (bits `scale`): each code's result is looked up by its fraction in the per-call table of
/// [`words::scaled_table`] (the products rounded once to BF16) and its exponent field added
/// ([`words::widen_words_scaled`] argues the bits). The last `n % (2 · LANES)` codes take
/// one partial load and store that touch exactly them.
///
/// # Safety
/// As for [`dequantize_exact`] into BF16; `scale` positive; `V::WORDS`;
/// [`words::scaled_eligible::<F>`](words::scaled_eligible).
#[inline(always)]
unsafe fn dequantize_words<V: Vector, F: Format>(
    src: *const u8,
    n: usize,
    scale: u32,
    dst: *mut u8,
) {
    let table = words::scaled_table::<F>(scale);
    let w = 2 * V::LANES;
    // SAFETY: the table holds 16 words, 8 u32: the first load reads `min(LANES, 8)` of them
    // from word 0, the second (only for 4 lanes, where a vector holds 8 words) the 4 from
    // word 8 on; every code access covers codes below `n` and the stores the same values'
    // BF16 slots (2 bytes each); the CPU has `V`'s features (the caller's guarantee).
    unsafe {
        let t0 = V::load_u32(table.as_ptr().cast(), V::LANES.min(8));
        let t1 = if V::LANES < 8 {
            V::load_u32(table.as_ptr().add(8).cast(), V::LANES)
        } else {
            t0
        };
        let t = [t0, t1];
        let mut i = 0;
        while i + 2 * w <= n {
            let a = words::widen_words_scaled::<V, F>(V::load_u8_words(src.add(i), w), &t);
            let b = words::widen_words_scaled::<V, F>(V::load_u8_words(src.add(i + w), w), &t);
            a.store_words(dst.add(2 * i), w);
            b.store_words(dst.add(2 * (i + w)), w);
            i += 2 * w;
        }
        while i < n {
            let k = w.min(n - i);
            words::widen_words_scaled::<V, F>(V::load_u8_words(src.add(i), k), &t)
                .store_words(dst.add(2 * i), k);
            i += k;
        }
    }
}
