//! [`Vector`] for WebAssembly `simd128`: 4 lanes in a `v128`, lane masks as all-ones lanes,
//! partial loads and stores through a zeroed stack buffer (the `n` elements are copied in or
//! out with `copy_nonoverlapping`, so nothing outside them is touched), and the
//! instantiation of the generic kernels for the `simd128` backend.
//!
//! # The floating-point environment
//!
//! WebAssembly has none: every float instruction rounds to nearest even and keeps
//! subnormals (no FTZ or DAZ), and nothing a caller does can change that. Two consequences:
//!
//! * [`Vector::fma_rne`] is a multiply and an add. WebAssembly's `simd128` has no fused
//!   multiply-add (only the non-deterministic one of relaxed SIMD), but the generic
//!   narrowing only calls it as `fma(t, K, a)` with `t` a power of two between the target's
//!   smallest normal and its overflow bound (2^-15 to 2^16) and `K` about 2^20: the product
//!   is a normal f32 whose significand is `K`'s, exactly, so the add is the only rounding,
//!   as in the fused instruction. (The MX block kernels move `t` by the block's scale, within
//!   the range where the product stays a normal f32: `simd/generic/block/mx.rs`.)
//! * The f64 → f32 demotion and f32 → f64 promotion are exact IEEE operations, subnormals
//!   included, so [`Vector::load_f64_odd`] is an exact round to odd everywhere (not only
//!   from 2^-126 up, as the trait promises) and [`Vector::store_f64`] needs no denormal
//!   fix-up.
//!
//! What the specification leaves open is the bit pattern of a NaN that an arithmetic or
//! conversion instruction produces (sign and payload are non-deterministic). Wherever a NaN
//! can flow through such an instruction here, the NaN lanes are rebuilt from the source's
//! bits with integer operations and selected in, so the results are the codec's on every
//! engine.
//!
//! # F16
//!
//! WebAssembly has no F16 conversions (`VCVTPS2PH`/`VCVTPH2PS` on x86). [`Vector::load_f16`]
//! is the generic exact widening (`lanes::widen`, integer re-bias and an exact product for
//! subnormals); the narrowing ([`to_f16`]) and the rounding of the round trip
//! ([`round_f16`]) use the multiply-add method of the fp8 narrowing with F16's constants,
//! see there.

use core::arch::wasm32::*;

use crate::simd::{Vector, buffered, unbuffer};

/// 4 lanes of 32 bits.
#[derive(Clone, Copy)]
pub(crate) struct V128(v128);

/// Every lane `x`.
#[inline(always)]
fn splat(x: u32) -> v128 {
    u32x4_splat(x)
}

/// Loads 16 bytes from `p` (any alignment).
///
/// # Safety
/// `p` valid for reading 16 bytes.
#[inline(always)]
unsafe fn load16(p: *const u8) -> v128 {
    // SAFETY: the caller's guarantee; `v128.load` accepts any alignment.
    unsafe { v128_load(p.cast()) }
}

/// Stores 16 bytes to `p` (any alignment).
///
/// # Safety
/// `p` valid for writing 16 bytes.
#[inline(always)]
unsafe fn store16(p: *mut u8, v: v128) {
    // SAFETY: the caller's guarantee; `v128.store` accepts any alignment.
    unsafe { v128_store(p.cast(), v) }
}

/// The F16 quantities of the multiply-add rounding of f32 lanes: `(a, t, s)` with
/// `a = min(|x|, cap)` (`cap` = MAX with `sat`, else 2^16, whose code is Inf's),
/// `t = 2^max(exponent of a, -14)` and `s = t·2^13 + a` rounded once to nearest even.
///
/// `t·2^13` is built on the bits (a power of two, exact). `s` lies in `[t·2^13, t·2^13 + 2t]`
/// (`a < 2t`), inside the binade of `t·2^13`, whose spacing `t·2^-10` is F16's quantum at
/// `a`'s exponent (its subnormal quantum 2^-24 below 2^-14): the add rounds `a` to F16's
/// precision, once. Integer clamps decide the rest, as in `lanes::narrow`: every magnitude
/// above `cap`, and ±Inf, rounds to `cap`'s code too.
#[inline(always)]
fn f16_sum(x: v128, sat: bool) -> (v128, v128, v128, v128) {
    let abs = v128_and(x, splat(0x7FFF_FFFF));
    let cap = if sat { 0x477F_E000 } else { 0x4780_0000 };
    let a = u32x4_min(abs, splat(cap));
    let t = u32x4_max(v128_and(a, splat(0x7F80_0000)), splat(0x3880_0000));
    let tk = i32x4_add(t, splat(13 << 23));
    let s = f32x4_add(tk, a);
    (abs, t, tk, s)
}

/// Lanes of f32 bits rounded to F16 codes in the low 16 bits (the bits above are zero),
/// as the codec does under [`NanPolicy::Preserve`](crate::NanPolicy::Preserve): round to
/// nearest even with subnormals; overflow to ±Inf, or ±MAX with `sat` (±Inf sources too);
/// NaN keeps its sign and top 10 payload bits and gets the quiet bit (`VCVTPS2PH`'s rule).
///
/// With `(a, t, s)` of [`f16_sum`] and `e` the exponent of `t`: `s - t·2^13` on the bits is
/// `round(a / 2^(e - 10))`, which is the code's offset within its binade plus the implicit
/// 1024 for a normal `a` (0 to 1024 for a subnormal one, `t = 2^-14`), and `(e + 14) << 10`
/// the binade's first code less 1024: their sum is the code, a carry into the next binade
/// (or into Inf) included.
#[inline(always)]
fn to_f16(x: v128, sat: bool) -> v128 {
    let (abs, t, tk, s) = f16_sum(x, sat);
    let binade = u32x4_shr(i32x4_sub(t, splat(0x3880_0000)), 13);
    let mag = i32x4_add(i32x4_sub(s, tk), binade);
    let sign = v128_and(u32x4_shr(x, 16), splat(0x8000));
    let nan = v128_or(
        v128_or(sign, splat(0x7E00)),
        v128_and(u32x4_shr(x, 13), splat(0x3FF)),
    );
    let is_nan = i32x4_gt(abs, splat(0x7F80_0000));
    v128_bitselect(nan, v128_or(mag, sign), is_nan)
}

/// Lanes of f32 bits rounded to F16 and widened back (the codec's narrowing, as
/// [`to_f16`], then its exact widening): `s - t·2^13` of [`f16_sum`] as a float subtraction
/// is the rounded magnitude itself, exactly (`t·2^13 <= s <= 2·t·2^13`, Sterbenz), with
/// the source's sign put back; without `sat`, 2^16 (F16's overflow) becomes Inf. A NaN
/// becomes the widening of its F16 NaN: sign, quiet bit and the top 10 payload bits.
#[inline(always)]
fn round_f16(x: v128, sat: bool) -> v128 {
    let (abs, _, tk, s) = f16_sum(x, sat);
    let mut r = f32x4_sub(s, tk);
    if !sat {
        r = v128_bitselect(splat(0x7F80_0000), r, i32x4_eq(r, splat(0x4780_0000)));
    }
    let r = v128_or(r, v128_and(x, splat(0x8000_0000)));
    let nan = v128_or(v128_and(x, splat(0xFFFF_E000)), splat(0x7FC0_0000));
    v128_bitselect(nan, r, i32x4_gt(abs, splat(0x7F80_0000)))
}

/// 2 f64 in `a` and 2 in `b` rounded to odd into 4 lanes of f32 bits: `t = RNE(x)` (the
/// demotion, exact IEEE rounding with subnormals); where `t` promoted back differs from `x`,
/// the truncation is `t` when `|t| < |x|` and the next f32 toward zero (`t - 1` on the bits)
/// when `|t| > |x|` (then `x` lies above the midpoint below `t`), and its lowest bit is set.
/// An overflow to Inf comes back as f32::MAX with the bit set (odd), as truncation gives; Inf
/// and zero are exact. NaN lanes are rebuilt from the bits (module docs): sign, quiet bit,
/// and the top 22 payload bits (the codec keeps at most the top 10).
#[inline(always)]
fn odd4(a: v128, b: v128) -> v128 {
    let (ta, tb) = (f32x4_demote_f64x2_zero(a), f32x4_demote_f64x2_zero(b));
    let (ba, bb) = (f64x2_promote_low_f32x4(ta), f64x2_promote_low_f32x4(tb));
    let exact = i32x4_shuffle::<0, 2, 4, 6>(f64x2_eq(a, ba), f64x2_eq(b, bb));
    let up = i32x4_shuffle::<0, 2, 4, 6>(
        f64x2_gt(f64x2_abs(ba), f64x2_abs(a)),
        f64x2_gt(f64x2_abs(bb), f64x2_abs(b)),
    );
    let nan = i32x4_shuffle::<0, 2, 4, 6>(f64x2_ne(a, a), f64x2_ne(b, b));
    let t = i32x4_shuffle::<0, 1, 4, 5>(ta, tb);
    // up is all ones (-1) where |t| > |x|: adding it steps toward zero.
    let odd = v128_or(i32x4_add(t, up), splat(1));
    let r = v128_bitselect(t, odd, exact);
    let hi = i32x4_shuffle::<1, 3, 5, 7>(a, b);
    let lo = i32x4_shuffle::<0, 2, 4, 6>(a, b);
    let nan_bits = v128_or(
        v128_or(v128_and(hi, splat(0x8000_0000)), splat(0x7FC0_0000)),
        v128_or(
            v128_and(i32x4_shl(hi, 3), splat(0x007F_FFF8)),
            u32x4_shr(lo, 29),
        ),
    );
    v128_bitselect(nan_bits, r, nan)
}

/// The low 2 lanes of f32 bits `x` as 2 f64, exactly: the promotion (exact, subnormals
/// included), with NaN lanes rebuilt from the bits (sign, quiet bit, payload kept) since the
/// promotion's NaN bits are not specified (module docs).
#[inline(always)]
fn f64_from_low(x: v128) -> v128 {
    let d = f64x2_promote_low_f32x4(x);
    let hi = v128_or(
        v128_or(v128_and(x, splat(0x8000_0000)), splat(0x7FF8_0000)),
        u32x4_shr(v128_and(x, splat(0x007F_FFFF)), 3),
    );
    let lo = i32x4_shl(x, 29);
    let nan = i32x4_shuffle::<0, 4, 1, 5>(lo, hi);
    v128_bitselect(nan, d, f64x2_ne(d, d))
}

impl Vector for V128 {
    const LANES: usize = 4;
    type Mask = v128;

    // The arithmetic methods call `simd128` intrinsics, which are safe functions in a build
    // with the feature (the only build that has this module); the memory methods touch only
    // the `n` elements the caller vouches for: full vectors when `n == 4`, else a copy of
    // exactly those bytes through a buffer.

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        V128(splat(x))
    }
    #[inline(always)]
    unsafe fn and(self, b: Self) -> Self {
        V128(v128_and(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn or(self, b: Self) -> Self {
        V128(v128_or(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn or_and(self, b: Self, c: Self) -> Self {
        V128(v128_or(self.0, v128_and(b.0, c.0)))
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        V128(i32x4_add(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn sub(self, b: Self) -> Self {
        V128(i32x4_sub(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn shl(self, n: u32) -> Self {
        V128(i32x4_shl(self.0, n))
    }
    #[inline(always)]
    unsafe fn shr(self, n: u32) -> Self {
        V128(u32x4_shr(self.0, n))
    }
    #[inline(always)]
    unsafe fn min_u32(self, b: Self) -> Self {
        V128(u32x4_min(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn max_u32(self, b: Self) -> Self {
        V128(u32x4_max(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn reduce_max_u32(self) -> u32 {
        // Swap 64-bit halves, then 32-bit neighbours: every lane ends up with the maximum.
        let m = u32x4_max(self.0, i32x4_shuffle::<2, 3, 0, 1>(self.0, self.0));
        let m = u32x4_max(m, i32x4_shuffle::<1, 0, 3, 2>(m, m));
        u32x4_extract_lane::<0>(m)
    }
    #[inline(always)]
    unsafe fn lookup_u16(self, t: &[Self; 2]) -> Self {
        // Word index w becomes the byte indices 2w and 2w + 1 of the 32-byte table (below 256,
        // so the bytes of a word and the words of a lane do not mix, and below 32 for the
        // indices below 16, the others' words unspecified); `swizzle` gives 0 for
        // indices from 16 on, so the first register serves 0..16 and the second, with 16
        // subtracted (bytes below 16 wrap to 240 and above, which give 0), 16..32.
        let b = u16x8_shl(self.0, 1);
        let idx = v128_or(v128_or(b, u16x8_shl(b, 8)), u16x8_splat(0x0100));
        V128(v128_or(
            i8x16_swizzle(t[0].0, idx),
            i8x16_swizzle(t[1].0, i8x16_sub(idx, i8x16_splat(16))),
        ))
    }
    #[inline(always)]
    unsafe fn inc(self, m: v128) -> Self {
        // A true lane is all ones.
        V128(i32x4_sub(self.0, m))
    }
    const WORDS: bool = true;
    #[inline(always)]
    unsafe fn load_u8_words(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller vouches for the `n` bytes at `p`; 8 are read only when n == 8.
        let w = unsafe {
            if n == 8 {
                p.cast::<u64>().read_unaligned()
            } else {
                u64::from_le_bytes(buffered::<8>(p, n))
            }
        };
        V128(u16x8_extend_low_u8x16(u64x2(w, 0)))
    }
    #[inline(always)]
    unsafe fn store_words(self, p: *mut u8, n: usize) {
        // SAFETY: the caller vouches for the `n` words at `p`; 16 bytes are written only when
        // n == 8, else exactly `2 * n` through a buffer.
        unsafe {
            if n == 8 {
                v128_store(p.cast(), self.0);
            } else {
                let mut buf = [0u8; 16];
                v128_store(buf.as_mut_ptr().cast(), self.0);
                unbuffer(&buf, p, 2 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn add16(self, b: Self) -> Self {
        V128(i16x8_add(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn shl16(self, n: u32) -> Self {
        V128(i16x8_shl(self.0, n))
    }
    #[inline(always)]
    unsafe fn eq16(self, b: Self) -> Self {
        V128(i16x8_eq(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn gt16(self, b: Self) -> Self {
        V128(i16x8_gt(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn blend(m: Self, t: Self, f: Self) -> Self {
        V128(v128_bitselect(t.0, f.0, m.0))
    }
    #[inline(always)]
    unsafe fn words_lo(self) -> Self {
        V128(u32x4_extend_low_u16x8(self.0))
    }
    #[inline(always)]
    unsafe fn words_hi(self) -> Self {
        V128(u32x4_extend_high_u16x8(self.0))
    }
    #[inline(always)]
    unsafe fn eq(self, b: Self) -> v128 {
        i32x4_eq(self.0, b.0)
    }
    #[inline(always)]
    unsafe fn gt_i32(self, b: Self) -> v128 {
        i32x4_gt(self.0, b.0)
    }
    #[inline(always)]
    unsafe fn any(m: v128) -> bool {
        v128_any_true(m)
    }
    #[inline(always)]
    unsafe fn select(m: v128, t: Self, f: Self) -> Self {
        V128(v128_bitselect(t.0, f.0, m))
    }
    #[inline(always)]
    unsafe fn fma_rne(a: Self, b: Self, c: Self) -> Self {
        // A multiply, then an add, each rounded to nearest even (WebAssembly has no other
        // mode). The generic narrowing calls this with `a` a power of two and `b` = K, whose
        // product is exact and normal (module docs), so the add is the one rounding.
        V128(f32x4_add(f32x4_mul(a.0, b.0), c.0))
    }
    #[inline(always)]
    unsafe fn mul_ieee(self, b: Self) -> Self {
        // WebAssembly's float operations are IEEE, rounded to nearest even, subnormals kept.
        V128(f32x4_mul(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn div_ieee(self, b: Self) -> Self {
        V128(f32x4_div(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn sub_ieee(self, b: Self) -> Self {
        V128(f32x4_sub(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn madd16(self, w: Self) -> Self {
        // `i32x4.dot_i16x8_s`: the signed 16-bit halves multiplied pairwise and summed, as
        // VPMADDWD.
        V128(i32x4_dot_i16x8(self.0, w.0))
    }
    #[inline(always)]
    unsafe fn cvt_u24_f32(self) -> Self {
        V128(f32x4_convert_i32x4(self.0))
    }
    #[inline(always)]
    unsafe fn mul_exact_f32(self, b: Self) -> Self {
        V128(f32x4_mul(self.0, b.0))
    }

    #[inline(always)]
    unsafe fn mul_rne(self, b: Self) -> Self {
        // IEEE multiplication, rounded to nearest even, subnormals kept (module docs).
        V128(f32x4_mul(self.0, b.0))
    }
    #[inline(always)]
    unsafe fn div_rne(self, b: Self) -> Self {
        // IEEE division, as `mul_rne`.
        V128(f32x4_div(self.0, b.0))
    }

    #[inline(always)]
    unsafe fn load_u8(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller vouches for the `n` bytes at `p`; 4 are read only when n == 4.
        let w = unsafe {
            if n == 4 {
                p.cast::<u32>().read_unaligned()
            } else {
                u32::from_le_bytes(buffered::<4>(p, n))
            }
        };
        V128(u32x4_extend_low_u16x8(u16x8_extend_low_u8x16(u32x4(
            w, 0, 0, 0,
        ))))
    }
    #[inline(always)]
    unsafe fn load_u16(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller vouches for the `n` 16-bit values at `p`; 8 bytes are read only
        // when n == 4.
        let w = unsafe {
            if n == 4 {
                p.cast::<u64>().read_unaligned()
            } else {
                u64::from_le_bytes(buffered::<8>(p, 2 * n))
            }
        };
        V128(u32x4_extend_low_u16x8(u64x2(w, 0)))
    }
    #[inline(always)]
    unsafe fn load_u32(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller vouches for the `n` values at `p`; 16 bytes are read only when
        // n == 4, else the buffer's.
        unsafe {
            if n == 4 {
                V128(load16(p))
            } else {
                V128(load16(buffered::<16>(p, 4 * n).as_ptr()))
            }
        }
    }
    #[inline(always)]
    unsafe fn load_f16(p: *const u8, n: usize) -> Self {
        // SAFETY: forwarded contract (the generic widening touches no memory).
        unsafe { crate::simd::generic::lanes::widen::<V128, crate::F16>(Self::load_u16(p, n)) }
    }
    #[inline(always)]
    unsafe fn load_f64_odd(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller vouches for the `n` f64 at `p`; 32 bytes are read only when
        // n == 4, else the buffer's.
        let (a, b) = unsafe {
            if n == 4 {
                (load16(p), load16(p.add(16)))
            } else {
                let buf = buffered::<32>(p, 8 * n);
                (load16(buf.as_ptr()), load16(buf.as_ptr().add(16)))
            }
        };
        V128(odd4(a, b))
    }
    #[inline(always)]
    unsafe fn load_f64_hi(p: *const u8, n: usize) -> Self {
        // SAFETY: as in `load_f64_odd`.
        let (a, b) = unsafe {
            if n == 4 {
                (load16(p), load16(p.add(16)))
            } else {
                let buf = buffered::<32>(p, 8 * n);
                (load16(buf.as_ptr()), load16(buf.as_ptr().add(16)))
            }
        };
        let hi = i32x4_shuffle::<1, 3, 5, 7>(a, b);
        let lo = i32x4_shuffle::<0, 2, 4, 6>(a, b);
        V128(v128_or(hi, v128_andnot(splat(1), i32x4_eq(lo, splat(0)))))
    }
    #[inline(always)]
    unsafe fn load_nibbles(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller vouches for the `n.div_ceil(2)` bytes at `p`; 2 are read only
        // when n == 4.
        let w = unsafe {
            if n == 4 {
                p.cast::<u16>().read_unaligned()
            } else {
                u16::from_le_bytes(buffered::<2>(p, n.div_ceil(2)))
            }
        };
        // Lane i is (w >> 4i) & 0xF: w moved up by 12 - 4i (a multiply, as simd128 shifts
        // every lane by the same count), then down by 12.
        let v = i32x4_mul(u32x4_splat(u32::from(w)), u32x4(4096, 256, 16, 1));
        V128(v128_and(u32x4_shr(v, 12), splat(0xF)))
    }

    #[inline(always)]
    unsafe fn store_u8(self, p: *mut u8, n: usize) {
        let s = i8x16_shuffle::<0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>(self.0, self.0);
        let w = i32x4_extract_lane::<0>(s) as u32;
        // SAFETY: the caller vouches for the `n` bytes at `p`; 4 are written only when n == 4.
        unsafe {
            if n == 4 {
                p.cast::<u32>().write_unaligned(w);
            } else {
                unbuffer(&w.to_le_bytes(), p, n);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_u16(self, p: *mut u8, n: usize) {
        let s = i8x16_shuffle::<0, 1, 4, 5, 8, 9, 12, 13, 0, 0, 0, 0, 0, 0, 0, 0>(self.0, self.0);
        let w = i64x2_extract_lane::<0>(s) as u64;
        // SAFETY: the caller vouches for the `n` values at `p`; 8 bytes are written only when
        // n == 4.
        unsafe {
            if n == 4 {
                p.cast::<u64>().write_unaligned(w);
            } else {
                unbuffer(&w.to_le_bytes(), p, 2 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_u32(self, p: *mut u8, n: usize) {
        // SAFETY: the caller vouches for the `n` values at `p`; 16 bytes are written only
        // when n == 4, else the buffer's first 4n.
        unsafe {
            if n == 4 {
                store16(p, self.0);
            } else {
                let mut buf = [0u8; 16];
                store16(buf.as_mut_ptr(), self.0);
                unbuffer(&buf, p, 4 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_f64(self, p: *mut u8, n: usize) {
        let lo = f64_from_low(self.0);
        let hi = f64_from_low(i32x4_shuffle::<2, 3, 2, 3>(self.0, self.0));
        // SAFETY: the caller vouches for the `n` f64 at `p`; 32 bytes are written only when
        // n == 4, else the buffer's first 8n.
        unsafe {
            if n == 4 {
                store16(p, lo);
                store16(p.add(16), hi);
            } else {
                let mut buf = [0u8; 32];
                store16(buf.as_mut_ptr(), lo);
                store16(buf.as_mut_ptr().add(16), hi);
                unbuffer(&buf, p, 8 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_f16(self, p: *mut u8, n: usize, sat: bool) {
        // SAFETY: forwarded contract.
        unsafe { V128(to_f16(self.0, sat)).store_u16(p, n) }
    }
    #[inline(always)]
    unsafe fn round_f16(self, sat: bool) -> Self {
        V128(round_f16(self.0, sat))
    }
    #[inline(always)]
    unsafe fn store_nibbles(self, p: *mut u8, n: usize) {
        // As 64-bit lanes, `v | v >> 28` holds lane 2i | lane 2i+1 << 4 in its low byte
        // (both codes below 16); bytes 0 and 8 are the two results.
        let v = v128_or(self.0, u64x2_shr(self.0, 28));
        let s = i8x16_shuffle::<0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>(v, v);
        let w = i16x8_extract_lane::<0>(s) as u16;
        // SAFETY: the caller vouches for the `n.div_ceil(2)` bytes at `p`; 2 are written only
        // when n == 4.
        unsafe {
            if n == 4 {
                p.cast::<u16>().write_unaligned(w);
            } else {
                unbuffer(&w.to_le_bytes(), p, n.div_ceil(2));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The instantiation: the generic kernels compiled for simd128.
// ---------------------------------------------------------------------------------------

use crate::arch::{Isa, Kernels};
use crate::block::spec::kernels::{BlockKernels, NvRows};
use crate::block::spec::{BlockDest, BlockSource};
use crate::options::Policy;
use crate::simd::generic::block::mx;
use crate::simd::generic::block::nvfp4;
use crate::simd::generic::kernels::{
    Brain, Code, Dst, E8m0, E8m0Hi, F32, F64, F64Hi, F64Odd, Half, Packed, RoundTrip,
    RoundTripBf16, RoundTripE8m0, RoundTripF16, Src, run,
};
use crate::simd::generic::registry::fill_registry_items;

/// The generic kernel from `S` to `D`, compiled for simd128.
///
/// # Safety
/// As for [`RawKernel`](crate::arch::RawKernel) (the build has `simd128`, so there is no
/// feature to check).
unsafe fn k<S: Src, D: Dst>(src: *const u8, dst: *mut u8, len: usize, p: Policy) {
    // SAFETY: forwarded contract; `simd128` is enabled for the whole build.
    unsafe { run::<V128, S, D>(src, dst, len, p) }
}

// `fill_registry(t, from)`: every pair and round trip of the registry's formats from index
// `from` on, as generic kernels at 128 bits (`simd/generic/registry.rs`). The `simd128`
// table uses it for the formats added after the measured selection below was made.
crate::format::for_each_format!(fill_registry_items);

/// Gives the `simd128` table the generic kernels of the pairs where they measured faster
/// than what ran before (the portable kernel, the Scalar kernel, or two passes through a
/// buffer): `examples/throughput.rs --size 1024` built for wasm32-wasip1 with and without
/// them, run alternately under wasmtime, medians (docs/performance.md, "WebAssembly `simd128`"). Within the
/// noise of the shared machine (under 1.1x), or slower, and so left as they were:
/// E4M3, E4M3FNUZ and E5M2FNUZ → f32 (portable), F4E2M1 and E8M0 → f32 and E8M0 → f64
/// (Scalar), E4M3, E5M2, E4M3FNUZ and E5M2FNUZ → BF16, F16 → E4M3 and F16 → E8M0 (two
/// passes); f64 → BF16 has no generic kernel (the generic f64 route is argued for formats
/// whose subnormals lie above 2^-126). The packed FP4 pairs all run the generic kernel
/// (1.3x to 4.4x Scalar).
pub(crate) const fn fill(t: &mut Kernels) {
    use crate::{
        BF16, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F16,
    };
    // f32 and f64 → each format. F16's narrowing implements NanPolicy::Preserve only
    // (`to_f16`), so the dispatcher patches the other policies in; the others implement
    // every policy.
    t.set::<f32, F16>(k::<F32, Half>);
    t.set::<f64, F16>(k::<F64Odd, Half>);
    t.set_all_policies::<f32, BF16>(k::<F32, Brain>);
    macro_rules! narrow {
        ($($f:ty),*) => {$(
            t.set_all_policies::<f32, $f>(k::<F32, Code<$f>>);
            t.set_all_policies::<f64, $f>(k::<F64Odd, Code<$f>>);
        )*};
    }
    narrow!(
        F8E4M3, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1
    );
    t.set_all_policies::<f32, F8E8M0>(k::<F32, E8m0>);
    t.set_all_policies::<f64, F8E8M0>(k::<F64Hi, E8m0Hi>);

    // Each format → f32 and f64.
    t.set_all_policies::<F16, f32>(k::<Half, F32>);
    t.set_all_policies::<BF16, f32>(k::<Brain, F32>);
    t.set_all_policies::<F8E5M2, f32>(k::<Code<F8E5M2>, F32>);
    t.set_all_policies::<F6E2M3, f32>(k::<Code<F6E2M3>, F32>);
    t.set_all_policies::<F6E3M2, f32>(k::<Code<F6E3M2>, F32>);
    t.set_all_policies::<F16, f64>(k::<Half, F64>);
    t.set_all_policies::<BF16, f64>(k::<Brain, F64>);
    macro_rules! to_f64 {
        ($($f:ty),*) => {$(
            t.set_all_policies::<$f, f64>(k::<Code<$f>, F64>);
        )*};
    }
    to_f64!(
        F8E4M3, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1
    );

    // Narrow → narrow in one pass.
    t.set_direct::<BF16, F16>(k::<Brain, Half>);
    t.set_direct::<F16, BF16>(k::<Half, Brain>);
    macro_rules! to_f16 {
        ($($f:ty),*) => {$(
            t.set_direct::<$f, F16>(k::<Code<$f>, Half>);
        )*};
    }
    to_f16!(
        F8E4M3, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1
    );
    t.set_direct::<F6E2M3, BF16>(k::<Code<F6E2M3>, Brain>);
    t.set_direct::<F6E3M2, BF16>(k::<Code<F6E3M2>, Brain>);
    t.set_direct::<F4E2M1, BF16>(k::<Code<F4E2M1>, Brain>);
    macro_rules! from_f16 {
        ($($f:ty),*) => {$(
            t.set_direct::<F16, $f>(k::<Half, Code<$f>>);
        )*};
    }
    from_f16!(F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1);
    macro_rules! from_bf16 {
        ($($f:ty),*) => {$(
            t.set_direct::<BF16, $f>(k::<Brain, Code<$f>>);
        )*};
    }
    from_bf16!(
        F8E4M3, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1
    );
    t.set_direct::<F8E8M0, F16>(k::<E8m0, Half>);
    t.set_direct::<F8E8M0, BF16>(k::<E8m0, Brain>);
    t.set_direct::<BF16, F8E8M0>(k::<Brain, E8m0>);

    // The fused round trips, every format.
    macro_rules! round_trip {
        ($($f:ty),*) => {$(
            t.set_round_trip::<$f>(k::<F32, RoundTrip<$f>>);
        )*};
    }
    round_trip!(
        F8E4M3, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1
    );
    t.set_round_trip::<F8E8M0>(k::<F32, RoundTripE8m0>);
    t.set_round_trip::<F16>(k::<F32, RoundTripF16>);
    t.set_round_trip::<BF16>(k::<F32, RoundTripBf16>);

    // Packed FP4 (two codes per byte), every pair.
    t.set_all_policies::<f32, F4E2M1x2>(k::<F32, Packed>);
    t.set_all_policies::<f64, F4E2M1x2>(k::<F64Odd, Packed>);
    t.set_all_policies::<F4E2M1x2, f32>(k::<Packed, F32>);
    t.set_all_policies::<F4E2M1x2, f64>(k::<Packed, F64>);
    t.set_direct::<F4E2M1x2, F16>(k::<Packed, Half>);
    t.set_direct::<F4E2M1x2, BF16>(k::<Packed, Brain>);
    t.set_direct::<F16, F4E2M1x2>(k::<Half, Packed>);
    t.set_direct::<BF16, F4E2M1x2>(k::<Brain, Packed>);
}

/// The generic MX block kernels (`simd/generic/block/mx.rs`) compiled for simd128.
struct Blocks;

impl mx::Inst for Blocks {
    const ISA: Isa = Isa::Simd128;
    unsafe fn dequant<E: mx::Element, D: mx::Dest>(
        codes: *const u8,
        scales: *const u8,
        blocks: usize,
        dst: *mut u8,
    ) {
        // SAFETY: forwarded contract; `simd128` is enabled for the whole build, and
        // WebAssembly has no float environment to set.
        unsafe { mx::dequant::<V128, E, D>(codes, scales, blocks, dst) }
    }
    unsafe fn quant<E: mx::Element, const CEIL: bool>(
        src: *const u8,
        blocks: usize,
        codes: *mut u8,
        scales: *mut u8,
    ) {
        // SAFETY: as for `dequant`.
        unsafe {
            mx::quant::<V128, E, CEIL, crate::simd::generic::block::fp8::Layer>(
                src, blocks, codes, scales,
            )
        }
    }
}

/// The generic NVFP4 dequantization (`simd/generic/block/nvfp4.rs`) compiled for simd128
/// (WebAssembly's float operations are always the IEEE ones).
///
/// # Safety
/// As for [`NvFn`](crate::block::spec::kernels::NvFn).
unsafe fn nv_dq<const P: usize, const L: usize, D: BlockDest>(a: &NvRows) -> bool {
    // SAFETY: forwarded contract; `simd128` is enabled for the whole build.
    unsafe { nvfp4::dequantize::<V128, P, L, D>(a) }
}

/// The generic NVFP4 quantization compiled for simd128.
///
/// # Safety
/// As for [`nv_dq`].
unsafe fn nv_q<const P: usize, const L: usize, S: BlockSource>(a: &NvRows) -> bool {
    // SAFETY: as in `nv_dq`.
    unsafe { nvfp4::quantize::<V128, P, L, S>(a) }
}

crate::simd::generic::block::instances::block_instances!(
    V128,
    [],
    crate::simd::generic::block::run::Unguarded
);

/// Sets the block-kernel slots (`src/block/spec/kernels.rs`) that this instantiation serves (the
/// others stay empty: the scalar specification): the MX `Ocp`/`Ceil` dequantization and
/// quantization of every element, the `Ggml` and `Mlx` profiles, `amax`, block FP8
/// quantization and dequantization, and the fused scaled building blocks.
pub(crate) const fn fill_block(t: &mut BlockKernels) {
    mx::fill::<Blocks>(t);
    // The MX `Ggml` and `Mlx` profiles and the ggml layout.
    fill_block_profiles(t);
    t.generic_isa = Isa::Simd128;
    // Block FP8, `amax` and the fused scaled building blocks.
    block_kernels::fill_block(t);
    t.fp8_dequant_isa = [Isa::Simd128; 3];
    // NVFP4: every profile, layout and type.
    nvfp4::nv_fill!(t, nv_dq, nv_q);
}

crate::simd::generic::block::instantiate_profiles!(V128, "simd128", ());
