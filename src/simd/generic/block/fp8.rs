//! Block FP8 (DeepSeek) on the vector layer: the tile amax, the quantization of a band of
//! whole tile rows (amax, scale, then `e4m3(x / s)` fused in one pass over each row
//! segment), the dequantization of a row, and the `amax` building block.
//!
//! # Quantization: `e4m3(x / s)`, whatever the FP environment
//!
//! The specification (`spec::fp8::quantize_one`) is the IEEE f32 quotient `x / s` rounded
//! to nearest even, then the E4M3 narrowing (nearest even, saturating, NaN keeping its
//! sign). Here:
//!
//! * **amax**: the unsigned maximum of the f32 magnitude bits of the decoded values (f32 as
//!   is; BF16 shifted into place and F16 widened, both exact and monotonic in magnitude),
//!   integer only. A NaN is above `+Inf` and becomes the canonical NaN, as `amax_bits`
//!   does; the scale is the scalar `spec::fp8::tile_scale` of it, once per tile.
//! * **the quotient**: [`Vector::div_rne`], rounded to nearest even (AVX-512 `{rn-sae}`,
//!   AVX2 under the `RoundNearest` guard, NEON under `Fpcr0`, WebAssembly always), only for
//!   a finite scale: the 1e-4 floor makes it at least `1e-4 / 448 > 2^-23`, a normal f32,
//!   so DAZ cannot read it as zero. The tile's values are finite (a tile holding ±Inf or
//!   NaN has an infinite or NaN scale, which takes the scalar path). x86's DAZ can read a
//!   denormal `x` as ±0 and FTZ can flush a quotient below 2^-126 to ±0; either happens only
//!   when `|x / s| < 2^-126 / 2^-23 = 2^-103`, far below half the smallest E4M3 subnormal
//!   (2^-10): the specification rounds such a quotient to ±0 with the sign of `x`, and a
//!   flushed ±0 narrows to the same code. Otherwise the quotient is the IEEE one.
//! * **the narrowing**: the generic E4M3 narrowing (`lanes::narrow`) under the
//!   specification's policy, which equals `codec::narrow_f32` under every MXCSR (its own
//!   argument). No NaN reaches it: a finite scale comes from a finite amax, so the tile
//!   holds no NaN (whose division WebAssembly would leave the bits of open).
//! * **`Ue8m0`**: the scale is a power of two `2^k`, so for `k <= 126` the quotient is the
//!   product `x · 2^-k` by the normal f32 `2^-k` ([`Vector::mul_rne`]): exact wherever it is
//!   a normal f32 (it cannot overflow: `|x| <= amax <= 448 · s`). Below 2^-126 the exact
//!   value is far under half the smallest E4M3 subnormal (2^-10), so the specification's
//!   code is ±0 with the sign of `x`, and so is the narrowing of whatever the hardware makes
//!   of the product there (a rounded subnormal, or with FTZ, or DAZ reading a denormal `x`,
//!   a zero of `x`'s sign). (`k = 127` divides, as `DeepSeek` does.)
//! * **four vectors at a time**: the row's codes are finished four vectors at once in bytes
//!   by the instantiation's [`Put4`]: the generic layer's `Code::encode_put4`
//!   (`lanes::narrow4` on the vectors that have byte shuffles), the same codes as
//!   `lanes::narrow` (the element kernels' argument), or on AVX-512 the element kernel's
//!   own narrowing (`simd/x86_64/avx512_fp8.rs`).
//!
//! # Dequantization: `D(f32(f32(code) · s))`
//!
//! The product is rounded once to f32 ([`Vector::mul_rne`]), for the tiles whose scale
//! makes every product of a non-zero code a normal f32: `2^-117 <= |s| < 2^119` (the
//! smallest E4M3 value is 2^-9, the largest 448 < 2^9). Then neither operand is denormal
//! (the codes widen to normal f32 or zero) and no product is below 2^-126, so FTZ and DAZ
//! cannot apply, and the product is the IEEE one `soft::mul` computes (`0 · s` is a signed
//! zero either way). A NaN code's lane keeps its widened NaN (`0x7FC00000 | sign`, the
//! first-operand NaN `soft::mul` returns). Other tiles (zero, denormal, huge, infinite or NaN
//! scales) run the specification's `dequantize_run`. The destination's rounding is the
//! generic loop's (`lanes::bf16`, the F16 store), the codec's under every environment.
//! For `|s| < 2^8` (DeepSeek's `weight_scale_inv` always is) the code is decoded and scaled
//! in one product ([`E4m3Product`]) and BF16 rounds without the clamp and NaN select that
//! finite products and canonical NaNs do not need (`run::BrainFinite`).

use core::mem::MaybeUninit;

use super::run::{Lanes, Out, TO_DEST, is_nan, map, max_lane};
use crate::F8E4M3;
use crate::block::spec::fp8 as spec;
use crate::simd::Vector;
use crate::simd::generic::kernels::{Code, Dst, Src};
use crate::simd::generic::lanes;

/// The magnitude bits of `n` values at `p` (f32 bits, or 16-bit codes with `HALF`).
///
/// # Safety
/// `p` readable for `n` values, `1 <= n <= LANES`, and the CPU has `V`'s features.
#[inline(always)]
unsafe fn load_mag<V: Vector, const HALF: bool>(p: *const u8, n: usize) -> V {
    // SAFETY: forwarded contract.
    unsafe {
        if HALF {
            V::load_u16(p, n).and(V::splat(0x7FFF))
        } else {
            V::load_u32(p, n).and(V::splat(0x7FFF_FFFF))
        }
    }
}

/// The largest `code & ABS` of `n` f32 values (or BF16/F16 codes, with `HALF`): the `amax`
/// slot (`AmaxFn`), integer only.
///
/// # Safety
/// `src` readable for `n` values, and the CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn amax_codes<V: Vector, const HALF: bool>(src: *const u8, n: usize) -> u32 {
    let l = V::LANES;
    let size = if HALF { 2 } else { 4 };
    // SAFETY: every load covers values below `n` (the loop conditions); the features are
    // the caller's guarantee.
    unsafe {
        let mut a = [V::splat(0); 4];
        let mut i = 0;
        while i + 4 * l <= n {
            for (j, acc) in a.iter_mut().enumerate() {
                let v = load_mag::<V, HALF>(src.add(size * (i + j * l)), l);
                *acc = acc.max_u32(v);
            }
            i += 4 * l;
        }
        while i < n {
            let w = l.min(n - i);
            a[0] = a[0].max_u32(load_mag::<V, HALF>(src.add(size * i), w));
            i += w;
        }
        max_lane(a[0].max_u32(a[1]).max_u32(a[2].max_u32(a[3])))
    }
}

/// The lane-wise maximum of the f32 magnitude bits of `n` values of `S` at `p` (zero lanes
/// where no value was read).
///
/// # Safety
/// `p` readable for `n` values of `S`, and the CPU has `V`'s features.
#[inline(always)]
unsafe fn tile_amax<V: Vector, S: Src>(p: *const u8, n: usize, acc: V) -> V {
    let l = V::LANES;
    // SAFETY: every load covers values below `n`; the features are the caller's guarantee.
    // (No closure for the masking: it would be a function without the target features.)
    unsafe {
        let abs = V::splat(0x7FFF_FFFF);
        let mut a = [acc, V::splat(0), V::splat(0), V::splat(0)];
        let mut i = 0;
        while i + 4 * l <= n {
            for (j, m) in a.iter_mut().enumerate() {
                *m = m.max_u32(S::load::<V>(p.add(S::offset(i + j * l)), l).and(abs));
            }
            i += 4 * l;
        }
        while i < n {
            let w = l.min(n - i);
            a[0] = a[0].max_u32(S::load::<V>(p.add(S::offset(i)), w).and(abs));
            i += w;
        }
        a[0].max_u32(a[1]).max_u32(a[2].max_u32(a[3]))
    }
}

/// `x / s` for a tile without NaN (module docs): a finite scale means a finite amax. With
/// `y = RN(1/s)` ([`Vector::div_recip_rne`], for `s` in `[2^-60, 2^60]`): the IEEE quotient
/// wherever it is at least `2^-20`, and below `2^-19` with `x`'s sign elsewhere, which is
/// far under half the smallest E4M3 subnormal (`2^-10`), so the code is the specification's
/// ±0 either way. (`|x / s| <= 448` at most, below the method's `2^100`.)
struct Divide<V> {
    s: V,
    y: V,
}
impl<V: Vector> Lanes<V> for Divide<V> {
    #[inline(always)]
    unsafe fn apply(&self, x: V) -> V {
        // SAFETY: the caller's guarantee.
        unsafe { x.div_recip_rne(self.s, self.y) }
    }
}

/// `x / s` by the division itself, for the scales outside [`Divide`]'s range.
struct DivideOnly<V>(V);
impl<V: Vector> Lanes<V> for DivideOnly<V> {
    #[inline(always)]
    unsafe fn apply(&self, x: V) -> V {
        // SAFETY: the caller's guarantee.
        unsafe { x.div_rne(self.0) }
    }
}

/// `x · s` rounded to f32, NaN lanes kept (module docs).
struct Multiply<V>(V);
impl<V: Vector> Lanes<V> for Multiply<V> {
    #[inline(always)]
    unsafe fn apply(&self, x: V) -> V {
        // SAFETY: the caller's guarantee.
        unsafe { V::select(is_nan(x), x, x.mul_rne(self.0)) }
    }
}

/// Bytes as lanes (the E4M3 codes, decoded by [`E4m3Product`]).
struct Bytes;

impl Src for Bytes {
    #[inline(always)]
    fn offset(i: usize) -> usize {
        i
    }
    #[inline(always)]
    unsafe fn load<V: Vector>(p: *const u8, n: usize) -> V {
        // SAFETY: forwarded contract.
        unsafe { V::load_u8(p, n) }
    }
}

/// `f32(code) · s` rounded to f32 from the code's bits, for `2^-117 <= |s| < 2^8`: a
/// normal code (exponent field `e >= 1`) placed at bit 20 is the f32 `value · 2^-120`
/// (field `e`, normal), multiplied by the normal `s · 2^120`; a subnormal code (`m < 8`) is
/// the f32 `m` (exact conversion) times the normal `s · 2^-9`. Each is one product of
/// normal f32 operands (or `±0 · s`) whose real value is `code · s`, at least 2^-126 in
/// magnitude unless zero: rounded once to nearest even, FTZ and DAZ have nothing to act on.
/// The code's sign is put on the first operand; NaN codes (`0x7F` magnitude) give
/// `0x7FC00000 | sign`, as the widening does.
struct E4m3Product<V> {
    /// `s · 2^120`.
    normal: V,
    /// `s · 2^-9`.
    sub: V,
}

impl<V: Vector> Lanes<V> for E4m3Product<V> {
    #[inline(always)]
    unsafe fn apply(&self, code: V) -> V {
        // SAFETY: the caller's guarantee; no memory is touched.
        unsafe {
            let mag = code.and(V::splat(0x7F));
            let is_sub = V::splat(8).gt_i32(mag);
            let y = V::select(is_sub, mag.cvt_u24_f32(), mag.shl(20));
            let f = V::select(is_sub, self.sub, self.normal);
            let sign = code.shl(24);
            let y = y.or_and(sign, V::splat(0x8000_0000));
            let p = y.mul_rne(f);
            let nan = mag.eq(V::splat(0x7F));
            V::select_or_and(nan, V::splat(0x7FC0_0000), sign, V::splat(0x8000_0000), p)
        }
    }
}

/// `x · 2^-k` for a `Ue8m0` tile of scale `2^k`, `k <= 126` (module docs): the splat
/// holds the normal f32 `2^-k`.
struct Multiply2<V>(V);
impl<V: Vector> Lanes<V> for Multiply2<V> {
    #[inline(always)]
    unsafe fn apply(&self, x: V) -> V {
        // SAFETY: the caller's guarantee.
        unsafe { x.mul_rne(self.0) }
    }
}

/// How [`quantize_band`] finishes the E4M3 codes of four whole vectors of quotients.
pub(crate) trait Put4<V: Vector> {
    /// Whether [`put4`](Self::put4) is an ISA's own narrowing, faster than the generic one:
    /// the MX quantization of E4M3 then scales two blocks' values and narrows them by it.
    const FAST: bool = false;
    /// Stores the E4M3 codes (nearest even, saturating) of the `4 · LANES` finite f32 values
    /// of `x` at `q`, in order, exactly as the narrowing under `c` (the specification's
    /// policy) gives them, whatever the FP environment.
    ///
    /// # Safety
    /// `q` writable for `4 · LANES` bytes, and the CPU has `V`'s features.
    unsafe fn put4(c: &lanes::Narrow<V>, x: [V; 4], q: *mut u8);
}

/// The generic layer's [`Put4`]: `Code::encode_put4`, the element kernels' `narrow4` where
/// the vector has byte shuffles.
pub(crate) struct Layer;

impl<V: Vector> Put4<V> for Layer {
    #[inline(always)]
    unsafe fn put4(c: &lanes::Narrow<V>, x: [V; 4], q: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { Code::<F8E4M3>::encode_put4::<V>(c, x, q) }
    }
}

/// E4M3 codes of `m(x)` for `n` values of `S` at `p`, stored at `q`: [`map`]'s loop with
/// the narrowing of four vectors at a time finished by `P`, then single and partial
/// vectors.
///
/// # Safety
/// `p` readable for `n` values of `S`, `q` writable for `n` bytes, and the CPU has `V`'s
/// features.
#[inline(always)]
unsafe fn narrow_row<V: Vector, S: Src, M: Lanes<V>, P: Put4<V>>(
    m: &M,
    c: &lanes::Narrow<V>,
    p: *const u8,
    q: *mut u8,
    n: usize,
) {
    type D = Code<F8E4M3>;
    let l = V::LANES;
    // SAFETY: every access covers values below `n` (the loop conditions); the features are
    // the caller's guarantee.
    unsafe {
        let mut i = 0;
        while i + 4 * l <= n {
            let x = [
                m.apply(S::load::<V>(p.add(S::offset(i)), l)),
                m.apply(S::load::<V>(p.add(S::offset(i + l)), l)),
                m.apply(S::load::<V>(p.add(S::offset(i + 2 * l)), l)),
                m.apply(S::load::<V>(p.add(S::offset(i + 3 * l)), l)),
            ];
            P::put4(c, x, q.add(i));
            i += 4 * l;
        }
        while i < n {
            let k = l.min(n - i);
            let v = D::encode::<V>(c, m.apply(S::load::<V>(p.add(S::offset(i)), k)));
            D::put::<V>(c, v, q.add(i), k);
            i += k;
        }
    }
}

/// Block FP8 quantization of one band of tile rows (the `fp8_quant` slot, `Fp8QuantFn`),
/// with `P` finishing the codes of four vectors at a time.
///
/// # Safety
/// As for `Fp8QuantFn`, and the FP environment the module docs assume (the instantiation's
/// guard).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn quantize_band<V: Vector, S: Src, P: Put4<V>>(
    src: *const u8,
    stride: usize,
    rows: usize,
    cols: usize,
    tile_cols: usize,
    ue8m0: bool,
    codes: *mut u8,
    scales: *mut u8,
) {
    // SAFETY: every access is inside the band (rows `0..rows`, columns `0..cols` of the
    // source, `rows · cols` codes, one scale per tile), the caller's guarantee.
    unsafe {
        let ctx = Code::<F8E4M3>::ctx::<V>(spec::SAT);
        let (mut c0, mut t) = (0, 0);
        while c0 < cols {
            let w = tile_cols.min(cols - c0);
            let mut acc = V::splat(0);
            for r in 0..rows {
                acc = tile_amax::<V, S>(src.add(r * stride + S::offset(c0)), w, acc);
            }
            let m = max_lane(acc);
            let m = if m > 0x7F80_0000 { 0x7FC0_0000 } else { m };
            let s = spec::tile_scale(m, ue8m0);
            scales
                .add(4 * t)
                .cast::<[u8; 4]>()
                .write_unaligned(s.to_le_bytes());
            // `Ue8m0`'s finite scales are normal powers of two `2^k` (module docs); `2^-k`
            // is a normal f32 for `k <= 126`.
            debug_assert!(!ue8m0 || s >= 0x7F80_0000 || s & 0x007F_FFFF == 0);
            let pow2 = ue8m0 && s < 0x7F80_0000 && (s >> 23) <= 127 + 126;
            let inv = V::splat(if pow2 { (254 << 23) - s } else { 0 });
            for r in 0..rows {
                let p = src.add(r * stride + S::offset(c0));
                let q = codes.add(r * cols + c0);
                if pow2 {
                    narrow_row::<V, S, _, P>(&Multiply2(inv), &ctx, p, q, w);
                } else if (67 << 23..=187 << 23).contains(&s) {
                    // `s` in [2^-60, 2^60], so `1/s` is too.
                    let sv = V::splat(s);
                    let y = V::splat(0x3F80_0000).div_rne(sv);
                    narrow_row::<V, S, _, P>(&Divide { s: sv, y }, &ctx, p, q, w);
                } else if s < 0x7F80_0000 {
                    narrow_row::<V, S, _, P>(&DivideOnly(V::splat(s)), &ctx, p, q, w);
                } else {
                    // An infinite or NaN scale: the specification, value by value.
                    let mut i = 0;
                    while i < w {
                        let n = V::LANES.min(w - i);
                        let mut b = [0u32; 16];
                        S::load::<V>(p.add(S::offset(i)), n).store_u32(b.as_mut_ptr().cast(), n);
                        for (j, &x) in b[..n].iter().enumerate() {
                            *q.add(i + j) = spec::quantize_one(x, s);
                        }
                        i += n;
                    }
                }
            }
            c0 += w;
            t += 1;
        }
    }
}

/// Block FP8 dequantization of one row (the `fp8_dequant` slot, `Fp8DequantFn`).
///
/// # Safety
/// As for `Fp8DequantFn`, and the FP environment the module docs assume.
#[inline(always)]
pub(crate) unsafe fn dequantize_row<V: Vector, D: Out>(
    codes: *const u8,
    scales: *const u8,
    tile_cols: usize,
    cols: usize,
    dst: *mut u8,
) {
    // SAFETY: every access is inside the row (`cols` codes and values, one scale per
    // tile), the caller's guarantee.
    unsafe {
        let ctx = D::ctx::<V>(TO_DEST);
        let (mut c0, mut t) = (0, 0);
        while c0 < cols {
            let w = tile_cols.min(cols - c0);
            let s = u32::from_le_bytes(scales.add(4 * t).cast::<[u8; 4]>().read_unaligned());
            let field = (s >> 23) & 0xFF;
            if (127 - 117..127 + 8).contains(&field) {
                // The scale times 2^120 and 2^-9: exponent field changes that stay in
                // 1..=254 (fields 10..=134).
                let m = E4m3Product {
                    normal: V::splat(s + (120 << 23)),
                    sub: V::splat(s - (9 << 23)),
                };
                let c = <D::Finite as Dst>::ctx::<V>(TO_DEST);
                map::<V, Bytes, D::Finite, _>(&m, &c, codes.add(c0), dst.add(D::offset(c0)), w);
            } else if (127 - 117..127 + 119).contains(&field) {
                map::<V, Code<F8E4M3>, D, _>(
                    &Multiply(V::splat(s)),
                    &ctx,
                    codes.add(c0),
                    dst.add(D::offset(c0)),
                    w,
                );
            } else {
                // The specification, through a stack buffer (the destination need not be
                // aligned for `D::T`).
                const STEP: usize = 64;
                let mut buf = [MaybeUninit::<D::T>::uninit(); STEP];
                let mut i = 0;
                while i < w {
                    let n = STEP.min(w - i);
                    let c = core::slice::from_raw_parts(codes.add(c0 + i), n);
                    spec::dequantize_run::<D::T>(c, s, &mut buf[..n]);
                    core::ptr::copy_nonoverlapping(
                        buf.as_ptr().cast::<u8>(),
                        dst.add(D::offset(c0 + i)),
                        D::offset(n),
                    );
                    i += n;
                }
            }
            c0 += w;
            t += 1;
        }
    }
}
