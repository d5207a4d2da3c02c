//! The fused f32 paths of the scaled building blocks (`src/block/scaled.rs`): `narrow_scaled`
//! with a power of two or, where the vector has a fused multiply-add, any scale in range;
//! `dequantize_scaled` with the scales whose products need no rounding in f32. The caller
//! keeps the exact f64 route for every other scale.
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
//! # `narrow_scaled` with any other scale ([`narrow_any`])
//!
//! For a normal scale `s` with `|s| <= 2^100` that is not a positive power of two, on a
//! vector whose `fma_rne` is fused, each lane gets `x · s` **rounded to odd** at f32's
//! precision ([`Vector::mul_odd`]): by default `p = RN(x · s)`, the exact error
//! `e = fma(x, s, −p)`, and where `e ≠ 0` the truncation of the product (`p`, or one ulp
//! toward zero from `p` when `e`'s sign differs from `p`'s) with its last bit set; AVX-512
//! truncates the product directly (`{rz-sae}`) and tests the error of that. Rounding to
//! odd at 24 bits and then to nearest even at a format's precision (at most 5 significant bits, fewer in its subnormal range) gives the
//! nearest-even rounding of the exact product (Boldo and Melquiond, "When double rounding
//! is odd", 2005): the odd bit keeps every value off the narrow format's midpoints, on the
//! side where the exact value lies. The overflow bound is such a midpoint too. Then the
//! generic narrowing rounds that lane, as the specification rounds the exact product once.
//!
//! Why the FP environment cannot change it: `e` is exact wherever `|p| >= 2^-70` (it is a
//! multiple of `ulp(x) · ulp(s)`, at least `2^-117` there, a normal f32, so neither
//! flush-to-zero nor a rounding can touch it), and the roundings are those the instructions
//! carry (`{rn-sae}`, `{rz-sae}`) or, on AVX2, the block kernels' MXCSR. Lanes with
//! `|p| < 2^-70` (including a subnormal `x` read as zero under DAZ, and a product
//! flushed to zero) become a zero of the product's sign, `sign(x) ⊕ sign(s)`: every served
//! format rounds such a product to that zero, their smallest subnormals being `2^-17` or
//! larger, and `|x · s| < 2^-126 · 2^100` for a subnormal `x`. `±Inf` and NaN lanes keep
//! `p` (`±Inf` of the product's sign) and `x`'s NaN. E8M0 and the unsigned F8E5M3FNU are not
//! served.
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
//!
//! # `dequantize_scaled` into BF16 or F16 under any scale ([`dequantize_odd`])
//!
//! For a call too short for the per-call table, on a vector with a fused multiply-add: the
//! caller widens the codes to f32 with the backend's element kernel, and each lane gets the
//! product rounded to odd at f32's precision ([`Vector::mul_odd`], as for `narrow_any`, without
//! its zeroing of tiny lanes), which BF16 (8 significant bits) and F16 (11) then round once to the
//! nearest-even rounding of the exact product: both keep at least two bits fewer than f32,
//! in their subnormal ranges too, and the overflow bounds are midpoints like any other
//! (Boldo and Melquiond, as above). The caller passes only normal scales under which every
//! non-zero code's product is at least `2^-96`: a widened code has at most 5 significant
//! bits, so `x · s`, `p` and the error `e` are multiples of `2^(e_x + e_s − 27)`, and
//! `|x · s| >= 2^-96` makes `e_x + e_s >= −98`, so a non-zero `e` is at least `2^-125`:
//! normal, exact, untouched by FTZ. The widened codes are normal or zero, so DAZ reads them
//! as they are. Overflowing products are `±Inf` (from `p`), which both destinations keep,
//! and a NaN lane keeps the widened NaN, whose low 16 bits are zero (`Out::Finite`).
//!
//! # `dequantize_scaled` into f32 under any scale ([`scale_in_place`])
//!
//! Into f32 the specification's single rounding of the exact product `x · s` is what one
//! IEEE f32 multiplication of the widened code (exact in f32) by `s` gives, rounded to
//! nearest even: [`Vector::mul_rne`], whatever MXCSR's rounding field says. The caller
//! widens the codes with the backend's element kernel and passes only scales for which
//! FTZ and DAZ cannot matter: `s` normal, and every finite non-zero code normal in f32
//! with `|x · s| >= 2^-126`, so the rounded product is normal or infinite (an overflow
//! rounds to `±Inf` as IEEE says, which FTZ does not touch). `±Inf · s` is `±Inf` of the
//! product's sign and `±0 · s` a zero of it, both exact. A NaN lane keeps the widened NaN,
//! as the specification does: every format's widened NaN is quiet (the codec sets the quiet
//! bit), and where [`Vector::MUL_KEEPS_QNAN`] holds the product of a quiet NaN and a number
//! is that NaN unchanged; elsewhere the lane is selected.

use super::run::{Folded, Identity, Lanes, Out, TO_DEST, is_nan, map};
use crate::block::spec::{BlockDest, DestKind};
use crate::codec::Format;
use crate::options::{NanPolicy, Policy};
use crate::simd::Vector;
use crate::simd::generic::kernels::{Code, Dst, F32, Src};
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

/// `x · s` rounded to odd at f32's precision (module docs, "`narrow_scaled` with any
/// scale"): the lanes that the narrowing then rounds once more, to the exact product's code.
struct MulOdd<V> {
    s: V,
    /// The sign bit of `s`.
    sign: V,
}

impl<V: Vector> Lanes<V> for MulOdd<V> {
    #[inline(always)]
    unsafe fn apply(&self, x: V) -> V {
        // SAFETY: the caller's guarantee; no memory is touched.
        unsafe {
            // Exact (odd) where |x · s| >= 2^-70: the error is then a normal f32 (module docs).
            let r = x.mul_odd(self.s);
            // Below 2^-70 every format `narrow_any` serves has a zero of the product's sign.
            let tiny = V::splat(0x1C80_0000).gt_i32(r.and(V::splat(0x7FFF_FFFF)));
            let r = V::select(tiny, x.and(V::splat(0x8000_0000)).xor(self.sign), r);
            V::select(is_nan(x), x, r)
        }
    }
}

/// `narrow_scaled` of `n` values of `S` with a scale that is not a positive power of two
/// (bits; normal, `|scale| <= 2^100`) into codes of `F` (module docs), on a vector whose
/// `fma_rne` is fused.
///
/// # Safety
/// As for `ScaledFn`; `scale` as above; `V::FUSED_FMA`.
#[inline(always)]
pub(crate) unsafe fn narrow_any<V: Vector, S: Src, F: Format>(
    src: *const u8,
    n: usize,
    scale: u32,
    dst: *mut u8,
) {
    debug_assert!(V::FUSED_FMA);
    let p = Policy {
        overflow: F::DEFAULT_OVERFLOW,
        nan: NanPolicy::Preserve,
    };
    // SAFETY: forwarded contract.
    unsafe {
        let m = MulOdd {
            s: V::splat(scale),
            sign: V::splat(scale & 0x8000_0000),
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

/// `x · s` rounded to odd in every lane (module docs, "into BF16 or F16"), NaN lanes kept.
struct MulOddAll<V>(V);

impl<V: Vector> Lanes<V> for MulOddAll<V> {
    #[inline(always)]
    unsafe fn apply(&self, x: V) -> V {
        // SAFETY: the caller's guarantee; no memory is touched.
        unsafe {
            let r = x.mul_odd(self.0);
            // The widened NaNs are quiet: kept by the product itself where the vector says so.
            if V::MUL_KEEPS_QNAN {
                r
            } else {
                V::select(is_nan(x), x, r)
            }
        }
    }
}

/// `dequantize_scaled` into BF16 or F16 (`D`) from `n` codes already widened to f32 at `src`
/// (module docs, "into BF16 or F16 under any scale"): each product rounded to odd, then
/// rounded once to `D`.
///
/// # Safety
/// As for `ScaledFn` with an f32 source; `scale` normal and every non-zero finite value at
/// `src` normal with `|x · scale| >= 2^-96`; every NaN at `src` with its low 16 bits zero;
/// `V::FUSED_FMA`; `V::mul_rne` and `V::fma_rne` round to nearest (on AVX2, under the
/// block kernels' MXCSR).
#[inline(always)]
pub(crate) unsafe fn dequantize_odd<V: Vector, D: Out>(
    src: *const u8,
    n: usize,
    scale: u32,
    dst: *mut u8,
) {
    debug_assert!(V::FUSED_FMA);
    // SAFETY: forwarded contract.
    unsafe {
        let c = <D::Finite as Dst>::ctx::<V>(TO_DEST);
        let m = MulOddAll(V::splat(scale));
        map::<V, F32, D::Finite, _>(&m, &c, src, dst, n);
    }
}

/// `dequantize_scaled`'s product pass into f32 (module docs): `n` f32 values at `dst`
/// multiplied in place by `scale` (bits), NaN lanes kept. The values before the first
/// 64-byte line boundary take partial loads and stores first, so that every full vector
/// after them is stored within one line (a store that crosses costs about as much as two);
/// then two vectors per step, and the last `n % LANES` values one partial load and store
/// that touch exactly them.
///
/// # Safety
/// As for `ScaleF32Fn`; every NaN at `dst` quiet; `V::mul_rne` rounds to nearest (on AVX2,
/// under the block kernels' MXCSR).
#[inline(always)]
pub(crate) unsafe fn scale_in_place<V: Vector>(dst: *mut u8, n: usize, scale: u32) {
    let l = V::LANES;
    // SAFETY: every access covers values below `n` (4 bytes each) at `dst`, which the caller
    // made readable and writable for `n` f32; the CPU has `V`'s features (the caller's
    // guarantee).
    unsafe {
        let s = V::splat(scale);
        let mul = |x: V| {
            let p = x.mul_rne(s);
            if V::MUL_KEEPS_QNAN {
                p
            } else {
                V::select(is_nan(x), x, p)
            }
        };
        let mut i = 0;
        // `dst` is 4-byte aligned (the caller's guarantee): the values up to the next line.
        let head = (((64 - (dst as usize & 63)) & 63) / 4).min(n);
        while i < head {
            let k = l.min(head - i);
            mul(V::load_u32(dst.add(4 * i), k)).store_u32(dst.add(4 * i), k);
            i += k;
        }
        while i + 2 * l <= n {
            let a = V::load_u32(dst.add(4 * i), l);
            let b = V::load_u32(dst.add(4 * (i + l)), l);
            mul(a).store_u32(dst.add(4 * i), l);
            mul(b).store_u32(dst.add(4 * (i + l)), l);
            i += 2 * l;
        }
        while i < n {
            let k = l.min(n - i);
            mul(V::load_u32(dst.add(4 * i), k)).store_u32(dst.add(4 * i), k);
            i += k;
        }
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
