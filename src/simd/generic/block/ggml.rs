//! The MX `Ggml` profile (gguf's MXFP4) on vectors, in both layouts, and the loads and
//! stores of MXFP4 blocks that the `Mlx` kernels share.
//!
//! # Quantization: the same bits as gguf's f32 arithmetic, in integers
//!
//! The specification (`ggml_quantize_block`) takes, for each value `x`, the first `k`
//! minimising `|RN(kvalue_k · d) − x|` (f32 products and differences), with
//! `d = 2^(s − 128)`. For the blocks the kernel takes itself (`s` in
//! [`S_MIN`]`..=`[`S_MAX`], every value finite), that is a nearest-value rounding with ties
//! toward zero, decided by integer compares:
//!
//! * the products `kvalue · d` are exact (a small integer times a normal power of two below
//!   `2^128`), and a positive candidate never wins for a negative `x` (its distance
//!   `RN(|x| + a) ≥ |x|`, the distance of code 0, which comes first), nor a negative one
//!   for `x ≥ 0`: only the magnitudes `m = |x|` against `{0, 1, 2, 3, 4, 6, 8, 12} · d`
//!   matter, and a negative winner `j > 0` is code `j | 8` (`−0` and a negative `x` that
//!   rounds to 0 give code 0);
//! * between the two neighbours `a_j ≤ m ≤ a_{j+1}` both differences are exact in f32
//!   (Sterbenz: `a_{j+1} ≤ 2·a_j`, and for `j = 0`, `m − 0` is `m` and `d − m` is exact
//!   for `m ≥ d/2`), so no rounding makes them tie or swap: the larger one loses, and an
//!   exact tie goes to the first, smaller, code. Candidates further away are at least `d`
//!   farther, far more than an f32 ulp of distances below `16·d`;
//! * so `j` is the number of midpoints `(a_j + a_{j+1}) / 2` strictly below `m`. Scaled by
//!   `1/d` (an exponent shift, exact for every normal `m`), the midpoints are the constants
//!   `0.5, 1.5, 2.5, 3.5, 5, 7, 10`, and the comparison is one of f32 bit patterns as
//!   signed integers (`m` scaled is `m`'s bits minus `(s − 128) << 23`: a value too small
//!   to be normal after the shift comes out negative or tiny, below `0.5`, as its true value
//!   is; an f32 subnormal `m` likewise).
//!
//! No floating-point instruction runs, so MXCSR and FPCR cannot change the codes. The scale
//! byte is the specification's `ggml_scale` of the block's largest magnitude (taken as the
//! unsigned maximum of the magnitude bits), one scalar call per block: its `floor(log2f)`
//! needs the f32 `log2` check only for a mantissa within 2^-10 of the next power of two,
//! and [`scale_byte`] skips it below that.
//!
//! Where the vector has the byte methods ([`Vector::BYTES4`]) and a block is four vectors,
//! the same counts are taken for the whole block at once in bytes ([`fp4_codes4`]: a key
//! per lane, one 16-byte table) and stored from that order ([`store_codes4`]).
//!
//! # Dequantization
//!
//! `kvalue · 2^(s − 128)` is the E2M1 value times `2^(s − 127)`: for `s` in
//! `2..=252` every product is a normal f32, built from the code with integer operations
//! (exponent field `(mag + 252 + 2(s − 127)) >> 1` and the mantissa bit, see
//! [`e2m1_scaled`]); code 8 (and 0) give `+0`. To BF16 the value is exact (two significant
//! bits) and the conversion is a shift; to F16 it is one `VCVTPS2PH`-style rounding of the
//! exact value ([`Vector::store_f16`]), which is what the specification's single rounding
//! of the exact product gives. Other scales run the specification's block function.

use core::mem::MaybeUninit;

use crate::block::spec::mx::{
    BLOCK, GGML_BLOCK, ggml_dequantize_block, ggml_quantize_block, ggml_scale,
};
use crate::block::spec::{BlockDest, BlockSource, DestKind};
use crate::simd::Vector;

/// The smallest scale byte the quantization kernel handles itself: `d = 2^(s − 128)` at
/// least `2^-98`, so the distances that decide a code are normal f32 numbers.
pub(crate) const S_MIN: u8 = 30;
/// The largest: `12 · d` stays below `2^128`.
pub(crate) const S_MAX: u8 = 250;

/// Vectors per block of 32 values.
#[inline(always)]
pub(crate) const fn per_block<V: Vector>() -> usize {
    BLOCK / V::LANES
}

/// Loads `V::LANES` values of `T` from value `i` of `src`, as f32 bits (exact: BF16 is the
/// top half of the f32, F16 widens exactly).
///
/// # Safety
/// `src` readable for values `i..i + LANES` of `T`; the CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn load_src<V: Vector, T: BlockSource>(src: *const u8, i: usize) -> V {
    let l = V::LANES;
    // SAFETY: the caller's guarantee.
    unsafe {
        match T::KIND {
            DestKind::F32 => V::load_u32(src.add(4 * i), l),
            DestKind::Bf16 => V::load_u16(src.add(2 * i), l).shl(16),
            DestKind::F16 => V::load_f16(src.add(2 * i), l),
        }
    }
}

/// The largest magnitude bits (NaN and Inf above every finite value) of blocks
/// `b0 .. b0 + nb` of `src` (`nb <= LANES`), in the first `nb` entries: each block's
/// magnitudes reduced to one vector by lane maxima, then the `nb` vectors' maxima at once
/// ([`Vector::reduce_max_each`]) instead of a horizontal maximum per block.
///
/// # Safety
/// As for [`load_src`], for the values of blocks `b0 .. b0 + nb`.
#[inline(always)]
pub(crate) unsafe fn block_maxima<V: Vector, T: BlockSource>(
    src: *const u8,
    b0: usize,
    nb: usize,
) -> [u32; 16] {
    // SAFETY: the caller's guarantee; `am` holds 16 >= LANES lanes.
    unsafe {
        let abs = V::splat(0x7FFF_FFFF);
        let mut mv = [V::splat(0); 16];
        for (i, m) in mv.iter_mut().enumerate().take(nb) {
            let mut v = V::splat(0);
            for j in 0..per_block::<V>() {
                v = v.max_u32(load_src::<V, T>(src, (b0 + i) * BLOCK + j * V::LANES).and(abs));
            }
            *m = v;
        }
        let mut am = [0u32; 16];
        V::reduce_max_each(&mv).store_u32(am.as_mut_ptr().cast(), V::LANES);
        am
    }
}

/// Loads block `b` of `src` (32 values of `T`) into `per_block` vectors of f32 bits.
///
/// # Safety
/// As for [`load_src`], for the 32 values of block `b`.
#[inline(always)]
pub(crate) unsafe fn load_values<V: Vector, T: BlockSource>(src: *const u8, b: usize) -> [V; 8] {
    // SAFETY: the caller's guarantee.
    unsafe {
        let mut x = [V::splat(0); 8];
        for (j, v) in x.iter_mut().enumerate().take(per_block::<V>()) {
            *v = load_src::<V, T>(src, b * BLOCK + j * V::LANES);
        }
        x
    }
}

/// The 32 values of block `b` of `src` as a slice of `T`.
///
/// # Safety
/// `src` is a `T` slice's pointer, readable for the block's values.
#[inline(always)]
pub(crate) unsafe fn block_slice<'a, T: BlockSource>(src: *const u8, b: usize) -> &'a [T] {
    // SAFETY: the caller's guarantee (`T` aligned: it is a slice's pointer).
    unsafe { core::slice::from_raw_parts(src.cast::<T>().add(b * BLOCK), BLOCK) }
}

/// Stores the E2M1 codes (lanes below 16) of block `b`: planar (element `2j` in the low
/// nibble of byte `j` of `codes + 16b`, the scale at `scales + b`) or ggml (`s` at
/// `codes + 17b`, then elements `j` and `j + 16` in byte `j`).
///
/// # Safety
/// The outputs writable for block `b`; the CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn store_fp4<V: Vector, const GGML: bool>(
    c: &[V; 8],
    s: u8,
    codes: *mut u8,
    scales: *mut u8,
    b: usize,
) {
    let l = V::LANES;
    let nv = per_block::<V>();
    // SAFETY: the caller's guarantee; every store is inside block `b`'s bytes.
    unsafe {
        if GGML {
            let p = codes.add(b * GGML_BLOCK);
            *p = s;
            for q in 0..nv / 2 {
                c[q].or(c[q + nv / 2].shl(4)).store_u8(p.add(1 + q * l), l);
            }
        } else {
            *scales.add(b) = s;
            if nv == 4 {
                V::store_nibbles4([c[0], c[1], c[2], c[3]], codes.add(b * BLOCK / 2));
            } else {
                for (j, v) in c.iter().enumerate().take(nv) {
                    v.store_nibbles(codes.add(b * BLOCK / 2 + j * l / 2), l);
                }
            }
        }
    }
}

/// Stores the 32 codes of block `b` held as bytes in [`Vector::bytes4_of`]'s order (from
/// [`fp4_codes4`]) and its scale byte, as [`store_fp4`] does.
///
/// # Safety
/// As for [`store_fp4`]; `V::LANES == 8`.
#[inline(always)]
pub(crate) unsafe fn store_codes4<V: Vector, const GGML: bool>(
    c: V,
    s: u8,
    codes: *mut u8,
    scales: *mut u8,
    b: usize,
) {
    // SAFETY: the caller's guarantee; every store is inside block `b`'s bytes (16 code
    // bytes).
    unsafe {
        if GGML {
            let p = codes.add(b * GGML_BLOCK);
            *p = s;
            c.store_nibbles_halves_b4(p.add(1));
        } else {
            *scales.add(b) = s;
            c.store_nibbles_b4(codes.add(b * BLOCK / 2));
        }
    }
}

/// Stores 32 scalar codes of block `b` as [`store_fp4`] does.
///
/// # Safety
/// As for [`store_fp4`].
#[inline(always)]
pub(crate) unsafe fn store_fp4_scalar<const GGML: bool>(
    c: &[u8; BLOCK],
    s: u8,
    codes: *mut u8,
    scales: *mut u8,
    b: usize,
) {
    // SAFETY: the caller's guarantee.
    unsafe {
        if GGML {
            let p = codes.add(b * GGML_BLOCK);
            *p = s;
            for j in 0..16 {
                *p.add(1 + j) = c[j] | (c[j + 16] << 4);
            }
        } else {
            *scales.add(b) = s;
            for j in 0..16 {
                *codes.add(b * BLOCK / 2 + j) = c[2 * j] | (c[2 * j + 1] << 4);
            }
        }
    }
}

/// Loads the E2M1 codes of block `b` (one per lane, below 16) and its scale byte.
///
/// # Safety
/// The inputs readable for block `b`; the CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn load_fp4<V: Vector, const GGML: bool>(
    codes: *const u8,
    scales: *const u8,
    b: usize,
) -> ([V; 8], u8) {
    let l = V::LANES;
    let nv = per_block::<V>();
    // SAFETY: the caller's guarantee; every load is inside block `b`'s bytes.
    unsafe {
        let mut c = [V::splat(0); 8];
        if GGML {
            let p = codes.add(b * GGML_BLOCK);
            for q in 0..nv / 2 {
                let bytes = V::load_u8(p.add(1 + q * l), l);
                c[q] = bytes.and(V::splat(0xF));
                c[q + nv / 2] = bytes.shr(4);
            }
            (c, *p)
        } else {
            for (j, v) in c.iter_mut().enumerate().take(nv) {
                *v = V::load_nibbles(codes.add(b * BLOCK / 2 + j * l / 2), l);
            }
            (c, *scales.add(b))
        }
    }
}

/// The 32 codes of block `b` (one per byte) and its scale byte, scalar.
///
/// # Safety
/// As for [`load_fp4`].
#[inline(always)]
pub(crate) unsafe fn load_fp4_scalar<const GGML: bool>(
    codes: *const u8,
    scales: *const u8,
    b: usize,
) -> ([u8; BLOCK], u8) {
    let mut c = [0u8; BLOCK];
    // SAFETY: the caller's guarantee.
    unsafe {
        if GGML {
            let p = codes.add(b * GGML_BLOCK);
            for j in 0..16 {
                let x = *p.add(1 + j);
                c[j] = x & 0xF;
                c[j + 16] = x >> 4;
            }
            (c, *p)
        } else {
            for j in 0..16 {
                let x = *codes.add(b * BLOCK / 2 + j);
                c[2 * j] = x & 0xF;
                c[2 * j + 1] = x >> 4;
            }
            (c, *scales.add(b))
        }
    }
}

/// The f32 bits of `E2M1(c) · 2^(s − 127)` for E2M1 codes `c` (below 16) and
/// `2 <= s <= 252` (so every non-zero product is a normal f32): the magnitudes
/// `0.5, 1, 1.5, 2, 3, 4, 6` (codes 1..7) have bits `(mag + 252) << 22` for `mag >= 2`
/// (exponent and mantissa bit in one field) and `(mag + 251) << 22` for `mag = 1`; the
/// scale adds `2(s − 127)` to that field. Code 8 gives `−0` when `signed_zero`, else `+0`
/// (gguf's `kvalues[8]`); code 0 gives `+0`.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn e2m1_scaled<V: Vector>(c: V, s: u8, signed_zero: bool) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let one = V::splat(1);
        let zero = V::splat(0);
        let mag = c.and(V::splat(7));
        let field = mag.add(V::splat((252 + 2 * (s as i32 - 127)) as u32));
        let field = V::select(mag.eq(one), field.sub(one), field);
        let sign = c.and(V::splat(8)).shl(28);
        let v = field.shl(22).or(sign);
        V::select(mag.eq(zero), if signed_zero { sign } else { zero }, v)
    }
}

/// The 16 E2M1 values as f32 bits, in code order (code 8 is `−0`; codes 0..8 are the
/// magnitudes, which `nvfp4.rs` reads too).
pub(crate) const E2M1_BITS: [u32; 16] = [
    0,
    0x3F00_0000,
    0x3F80_0000,
    0x3FC0_0000,
    0x4000_0000,
    0x4040_0000,
    0x4080_0000,
    0x40C0_0000,
    0x8000_0000,
    0xBF00_0000,
    0xBF80_0000,
    0xBFC0_0000,
    0xC000_0000,
    0xC040_0000,
    0xC080_0000,
    0xC0C0_0000,
];

/// The 16 E2M1 values (f32 bits, code order; code 8 `−0` or `+0`) as a [`Vector::lookup16`]
/// table, for the ISAs where that is a permutation: per block, the scale is added to the
/// exponent of the non-zero entries ([`scaled`](Self::scaled)), the same bits as
/// [`e2m1_scaled`] gives for `2 <= s <= 252`.
#[derive(Clone, Copy)]
pub(crate) struct E2m1Table<V: Vector> {
    base: [V; 4],
    nonzero: [V::Mask; 4],
}

impl<V: Vector> E2m1Table<V> {
    /// The unscaled table.
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    #[inline(always)]
    pub(crate) unsafe fn new(signed_zero: bool) -> E2m1Table<V> {
        // SAFETY: the caller's guarantee; each load reads LANES of the 16 entries.
        unsafe {
            let zero = V::splat(0);
            let mut base = [zero; 4];
            let mut nonzero = [zero.eq(zero); 4];
            for q in 0..16 / V::LANES {
                let mut v = V::load_u32(E2M1_BITS.as_ptr().add(q * V::LANES).cast(), V::LANES);
                if !signed_zero {
                    v = V::select(v.eq(V::splat(0x8000_0000)), zero, v);
                }
                base[q] = v;
                nonzero[q] = v.and(V::splat(0x7FFF_FFFF)).gt_i32(zero);
            }
            E2m1Table { base, nonzero }
        }
    }

    /// The table of scale byte `2 <= s <= 252`: `E2M1 · 2^(s − 127)`, exact normal f32.
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    #[inline(always)]
    pub(crate) unsafe fn scaled(&self, s: u8) -> [V; 4] {
        // SAFETY: the caller's guarantee; no memory is touched.
        unsafe {
            let shift = V::splat(((s as i32 - 127) << 23) as u32);
            let mut t = self.base;
            for (q, v) in t.iter_mut().enumerate().take(16 / V::LANES) {
                *v = V::select(self.nonzero[q], v.add(shift), *v);
            }
            t
        }
    }
}

/// The E2M1 code of each lane from `m`, the magnitude scaled so that the candidates are
/// `{0, 1, 2, 3, 4, 6, 8, 12}` (f32 bits as a signed integer, below 16; negative or tiny
/// when the true value is below 2^-126), and `x`, whose sign bit the code takes: the number
/// of midpoints `0.5, 1.5, 2.5, 3.5, 5, 7, 10` strictly below `m`, plus 8 for a negative `x`
/// with a non-zero code (module docs).
///
/// Where [`Vector::lookup16`] is a permutation, the seven compares become one lookup: every
/// midpoint's bits have their low 21 bits zero, so `m > t` exactly when
/// `(m − 1) >> 21 >= t >> 21` (for `m >= 1`); above `1.5` that key minus `0x1FD` (at most 14,
/// as `m < 16`) indexes a table of the codes, and at or below it the code is `m > 0.5`.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn fp4_code<V: Vector>(m: V, x: V, c: &Fp4Consts<V>) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let zero = V::splat(0);
        let nonzero = m.gt_i32(c.t[0]);
        let sign = x.shr(31).shl(3);
        if V::FAST_LOOKUP16 {
            let m1 = V::select(m.gt_i32(zero), m.sub(V::splat(1)), zero);
            let idx = m1.shr(21).max_u32(V::splat(0x1FD)).sub(V::splat(0x1FD));
            V::select(nonzero, V::lookup16(&c.table, idx).or(sign), zero)
        } else {
            let mut q = zero;
            for tj in &c.t {
                q = q.inc(m.gt_i32(*tj));
            }
            V::select(nonzero, q.or(sign), q)
        }
    }
}

/// The key of [`fp4_codes4`] of each lane of `m`.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn fp4_key<V: Vector>(m: V) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let k = m
            .sub(V::splat(1 + (0x1FD << 21)))
            .shr(21)
            .min_u32(V::splat(1024));
        V::select(m.gt_i32(V::splat(0x3F00_0000)), k, V::splat(15))
    }
}

/// [`fp4_code`] of four vectors at once, finished in bytes: the codes of `m[j]` (signs from
/// `x[j]`) as `4 · LANES` bytes in [`Vector::bytes4_of`]'s order, for
/// [`Vector::store_nibbles_b4`]. Every midpoint's bits have their low 21 bits zero, so for
/// `m >= 1`, `m > t` exactly when `(m − 1) >> 21 >= t >> 21`; the key
/// `k = (m − 1 − 0x1FD · 2^21) >> 21` is 0 for `1.25 < m <= 1.5` (code 1), and for
/// `m > 1.5` the number of `(m − 1) >> 21` steps above `0x1FD`: 1..=3 (code 2; the midpoint
/// 2.5 is step 4), 4..=5 (3), 6..=7 (4), 8..=9 (5), 10..=11 (6), 12 and more (7), at most 14
/// as `m < 16` (the callers' range). A smaller `m` makes the difference negative, a shifted
/// key of at least 1024 that the minimum with 1024 turns into a low byte of 0 (code 1); a
/// lane with `m <= 0.5` (code 0, including the negative and tiny `m`) takes key 15 instead.
/// The key's low byte of the four vectors is gathered ([`Vector::bytes4_of`]), looked up in
/// a 16-byte table ([`Vector::lookup8`]), and the sign (8) added where `x` is negative and
/// the code is not zero.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn fp4_codes4<V: Vector>(m: [V; 4], x: [V; 4]) -> V {
    /// Codes by key: 0 → 1, 1..=3 → 2, 4..=5 → 3, 6..=7 → 4, 8..=9 → 5, 10..=11 → 6,
    /// 12..=14 → 7, 15 (`m <= 0.5`) → 0.
    const CODES: [u8; 16] = [1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 7, 0];
    // SAFETY: the caller's guarantee; no memory is touched but the table.
    unsafe {
        // (No closure: it would be a function without the target features.)
        let keys = [fp4_key(m[0]), fp4_key(m[1]), fp4_key(m[2]), fp4_key(m[3])];
        let k = V::bytes4_of(keys, 0);
        let code = k.lookup8(&CODES);
        let sign = V::signs4(x);
        let zero = code.eq8(V::splat(0));
        V::blend(zero, code, code.or_and(sign, V::splat(0x0808_0808)))
    }
}

/// The constants of [`fp4_code`].
#[derive(Clone, Copy)]
pub(crate) struct Fp4Consts<V: Vector> {
    t: [V; 7],
    table: [V; 4],
}

impl<V: Vector> Fp4Consts<V> {
    /// # Safety
    /// The CPU has `V`'s features.
    #[inline(always)]
    pub(crate) unsafe fn new() -> Fp4Consts<V> {
        // Codes 1..7 by `(m − 1) >> 21` from 0x1FD (index 0: `m <= 1.5`, code 1 when
        // `m > 0.5`) up: 0x1FE..0x200 → 2, 0x201.. → 3, 0x203.. → 4, 0x205.. → 5, 0x207.. →
        // 6, 0x209.. → 7.
        const CODES: [u32; 16] = [1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 7, 7];
        const MIDS: [f32; 7] = [0.5, 1.5, 2.5, 3.5, 5.0, 7.0, 10.0];
        // SAFETY: the caller's guarantee; each load reads LANES of the 16 entries.
        unsafe {
            let mut t = [V::splat(0); 7];
            for (v, m) in t.iter_mut().zip(MIDS) {
                *v = V::splat(m.to_bits());
            }
            let mut table = [V::splat(0); 4];
            for (q, v) in table.iter_mut().enumerate().take(16 / V::LANES) {
                *v = V::load_u32(CODES.as_ptr().add(q * V::LANES).cast(), V::LANES);
            }
            Fp4Consts { t, table }
        }
    }
}

/// Stores `V::LANES` f32 values (bits) as `D` at value `i` of `dst`: f32 as they are, BF16
/// by truncation (callers pass values exact in BF16), F16 rounded to nearest even
/// ([`Vector::store_f16`], overflow to ±Inf).
///
/// # Safety
/// `dst` writable for values `i..i + LANES` of `D`; the CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn store_dst<V: Vector, D: BlockDest>(v: V, dst: *mut u8, i: usize) {
    let l = V::LANES;
    // SAFETY: the caller's guarantee.
    unsafe {
        match D::KIND {
            DestKind::F32 => v.store_u32(dst.add(4 * i), l),
            DestKind::Bf16 => v.shr(16).store_u16(dst.add(2 * i), l),
            DestKind::F16 => v.store_f16(dst.add(2 * i), l, false),
        }
    }
}

/// The 32 destination slots of block `b`.
///
/// # Safety
/// `dst` is a `D` slice's pointer, writable for the block's values.
#[inline(always)]
pub(crate) unsafe fn out_slice<'a, D: BlockDest>(
    dst: *mut u8,
    b: usize,
) -> &'a mut [MaybeUninit<D>] {
    // SAFETY: the caller's guarantee.
    unsafe { core::slice::from_raw_parts_mut(dst.cast::<MaybeUninit<D>>().add(b * BLOCK), BLOCK) }
}

/// [`ggml_scale`] of a block's largest magnitude bits `amax`, without its `log2` check
/// where that check cannot change the result: for a normal finite `amax` whose fraction is
/// below `0x7FC000` (mantissa `1.f < 2 − 2^-9`), `ggml_floor_log2` returns the exponent
/// itself (its `u = 1.f / 2 − 1 < −2^-10` early exit), so the byte is the biased exponent
/// minus 2. Every other `amax` (zero, subnormal, infinite, NaN, or a mantissa near 2, one
/// block in 512 of random data) takes `ggml_scale`.
#[inline(always)]
pub(crate) fn scale_byte(amax: u32) -> u8 {
    let field = amax >> 23;
    if (2..=254).contains(&field) && amax & 0x007F_FFFF < 0x007F_C000 {
        (field - 2) as u8
    } else {
        ggml_scale(amax)
    }
}

/// The `Ggml` profile's quantization of `blocks` whole blocks of `T` (a
/// [`MxProfileQuantFn`](crate::block::spec::kernels::MxProfileQuantFn) body; module docs).
///
/// # Safety
/// As for `MxProfileQuantFn`; the CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn quantize<V: Vector, T: BlockSource, const GGML: bool>(
    src: *const u8,
    blocks: usize,
    codes: *mut u8,
    scales: *mut u8,
) {
    let nv = per_block::<V>();
    // SAFETY: every access is inside block `b < blocks` of the buffers (the caller's
    // guarantee), and the CPU has `V`'s features.
    unsafe {
        let abs = V::splat(0x7FFF_FFFF);
        let fc = Fp4Consts::<V>::new();
        // Groups of up to `LANES` blocks: their maxima first (one reduction), then each
        // block's scale and codes.
        let mut g0 = 0;
        while g0 < blocks {
            let nb = V::LANES.min(blocks - g0);
            let am = block_maxima::<V, T>(src, g0, nb);
            g0 += nb;
            for (b, &amax) in (g0 - nb..g0).zip(&am) {
                let x = load_values::<V, T>(src, b);
                let s = scale_byte(amax);
                // A zero block: scale 0, every code 0 (the shift below is 0 then).
                let k = if amax == 0 {
                    0
                } else if amax < 0x7F80_0000 && (S_MIN..=S_MAX).contains(&s) {
                    s as i32 - 128
                } else {
                    let (s, c) = ggml_quantize_block::<T>(block_slice(src, b));
                    store_fp4_scalar::<GGML>(&c, s, codes, scales, b);
                    continue;
                };
                let shift = V::splat((k << 23) as u32);
                if V::BYTES4 && nv == 4 {
                    // m / d as f32 bits (signed: negative or tiny when m / d is below 2^-126).
                    let m = [
                        x[0].and(abs).sub(shift),
                        x[1].and(abs).sub(shift),
                        x[2].and(abs).sub(shift),
                        x[3].and(abs).sub(shift),
                    ];
                    store_codes4::<V, GGML>(
                        fp4_codes4(m, [x[0], x[1], x[2], x[3]]),
                        s,
                        codes,
                        scales,
                        b,
                    );
                    continue;
                }
                let mut c = [V::splat(0); 8];
                for j in 0..nv {
                    // m / d as f32 bits (signed: negative or tiny when m / d is below 2^-126).
                    c[j] = fp4_code(x[j].and(abs).sub(shift), x[j], &fc);
                }
                store_fp4::<V, GGML>(&c, s, codes, scales, b);
            }
        }
    }
}

/// The `Ggml` profile's dequantization of `blocks` whole blocks into `D` (a
/// [`MxProfileDequantFn`](crate::block::spec::kernels::MxProfileDequantFn) body; module docs).
///
/// # Safety
/// As for `MxProfileDequantFn`; the CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn dequantize<V: Vector, D: BlockDest, const GGML: bool>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    let nv = per_block::<V>();
    if D::KIND != DestKind::F16 {
        // SAFETY: the caller's guarantee, forwarded.
        unsafe {
            if planes_blocks::<V, D, GGML>(codes, scales, blocks, dst, false) {
                dequantize_spec_blocks::<D, GGML>(codes, scales, blocks, dst);
            }
        }
        return;
    }
    // SAFETY: every access is inside block `b < blocks` of the buffers (the caller's
    // guarantee), and the CPU has `V`'s features.
    unsafe {
        let table = E2m1Table::<V>::new(false);
        for b in 0..blocks {
            let (c, s) = load_fp4::<V, GGML>(codes, scales, b);
            if !(2..=252).contains(&s) {
                let (c, s) = load_fp4_scalar::<GGML>(codes, scales, b);
                ggml_dequantize_block::<D>(&c, s, out_slice(dst, b));
                continue;
            }
            if V::FAST_LOOKUP16 {
                let t = table.scaled(s);
                for (j, cj) in c.iter().enumerate().take(nv) {
                    store_dst::<V, D>(V::lookup16(&t, *cj), dst, b * BLOCK + j * V::LANES);
                }
            } else {
                for (j, cj) in c.iter().enumerate().take(nv) {
                    store_dst::<V, D>(e2m1_scaled(*cj, s, false), dst, b * BLOCK + j * V::LANES);
                }
            }
        }
    }
}

/// The blocks of [`dequantize`] on the byte-plane path whose scale byte is outside
/// `2..=252`, each by the specification's `ggml_dequantize_block` (out of the loop of
/// [`planes_blocks`], so that the loop calls no function).
///
/// # Safety
/// As for [`dequantize`].
#[cold]
#[inline(never)]
pub(crate) unsafe fn dequantize_spec_blocks<D: BlockDest, const GGML: bool>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    for b in 0..blocks {
        // SAFETY: b < blocks: the block's bytes and values are inside the caller's ranges.
        unsafe {
            let (c, s) = load_fp4_scalar::<GGML>(codes, scales, b);
            if !(2..=252).contains(&s) {
                ggml_dequantize_block::<D>(&c, s, out_slice(dst, b));
            }
        }
    }
}

/// The MXFP4 blocks of a row (planar, or ggml's `block_mxfp4` with `GGML`), each by
/// [`fp4_block_planes`] where the vector has byte-plane lookups, else by [`fp4_rows_block`]
/// (code 8 is `−0` when `signed_zero`, else `+0`), which is their values where the scale
/// byte is in `2..=252`; returns whether a block had another scale byte, for the caller to
/// write those blocks again by its specification. The loop has no branch but its own and
/// calls no function, so that the table's address and the constants stay in registers.
///
/// # Safety
/// As for [`dequantize`]; `D` is BF16 or f32.
#[inline(always)]
pub(crate) unsafe fn planes_blocks<V: Vector, D: BlockDest, const GGML: bool>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
    signed_zero: bool,
) -> bool {
    let mut other = false;
    for b in 0..blocks {
        // SAFETY: b < blocks: the block's 16 code bytes, its scale byte and its 32 values
        // are inside the caller's ranges.
        unsafe {
            let (p, s) = fp4_block_at::<GGML>(codes, scales, b);
            other |= !(2..=252).contains(&s);
            let out = dst.add(b * BLOCK * size_of::<D>());
            if V::FP4_PLANES {
                fp4_block_planes::<V, D, GGML>(p, s, signed_zero, out);
            } else {
                fp4_rows_block::<V, D, GGML>(p, s, signed_zero, out);
            }
        }
    }
    other
}

/// The 16 code bytes and the scale byte of MXFP4 block `b`: planar (`codes + 16b`,
/// `scales + b`) or ggml (`s` at `codes + 17b`, the code bytes after it).
///
/// # Safety
/// The inputs readable for block `b`.
#[inline(always)]
pub(crate) unsafe fn fp4_block_at<const GGML: bool>(
    codes: *const u8,
    scales: *const u8,
    b: usize,
) -> (*const u8, u8) {
    // SAFETY: the caller's guarantee.
    unsafe {
        if GGML {
            let p = codes.add(b * GGML_BLOCK);
            (p.add(1), *p)
        } else {
            (codes.add(b * (BLOCK / 2)), *scales.add(b))
        }
    }
}

/// The BF16 codes of the 16 E2M1 codes (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives:
/// the top halves of `codec::widen_f32::<F4E2M1>`, checked by the internal test below).
const E2M1_BF16: [u16; 16] = [
    0x0000, 0x3F00, 0x3F80, 0x3FC0, 0x4000, 0x4040, 0x4080, 0x40C0, //
    0x8000, 0xBF00, 0xBF80, 0xBFC0, 0xC000, 0xC040, 0xC080, 0xC0C0,
];

/// The BF16 code of E2M1 code `c` times `2^(s − 127)` for a scale byte `s` in `2..=252`, code
/// 8 as `−0` (`z = 0`: the `Ocp` and `Mlx` profiles) or `+0` (`z = 1`: gguf's `kvalues[8]`,
/// the `Ggml` profile): the scale adds `(s − 127) << 7` to the exponent field of the 14
/// non-zero codes (fields 126..=129, which stay in 1..=254 for `s` in `2..=252`, so every
/// product is an exact normal BF16 and no carry reaches the sign), the same bits as
/// [`e2m1_scaled`] (the unit tests below check every row against the specification).
const fn e2m1_word(z: usize, s: usize, c: usize) -> u16 {
    let b = E2M1_BF16[c];
    if b & 0x7FFF == 0 {
        if z == 1 { 0 } else { b }
    } else {
        (b as i32 + ((s as i32 - 127) << 7)) as u16
    }
}

/// [`e2m1_word`] for both zeros `z` and every scale byte `s` in `2..=252` (the other rows
/// are unused zeros), row `[z][s]` in code order; one row more than the 256 scale bytes (see
/// [`E2M1_ROWS`]). Both tables are made from it at compile time.
const fn e2m1_words() -> [[[u16; 16]; 257]; 2] {
    let mut t = [[[0u16; 16]; 257]; 2];
    let mut z = 0;
    while z < 2 {
        let mut s = 2;
        while s <= 252 {
            let mut c = 0;
            while c < 16 {
                t[z][s][c] = e2m1_word(z, s, c);
                c += 1;
            }
            s += 1;
        }
        z += 1;
    }
    t
}

/// [`e2m1_words`] as the byte planes [`Vector::fp4_block_words`] takes: row `[z][s]` holds
/// the 16 codes' low bytes, then their high bytes. 16 KiB, 64-byte aligned, so that a row
/// never straddles two cache lines.
pub(crate) static E2M1_PLANES: Planes = Planes({
    let words = e2m1_words();
    let mut t = [[[0u8; 32]; 256]; 2];
    let mut z = 0;
    while z < 2 {
        let mut s = 0;
        while s < 256 {
            let mut c = 0;
            while c < 16 {
                let w = words[z][s][c];
                t[z][s][c] = w as u8;
                t[z][s][16 + c] = (w >> 8) as u8;
                c += 1;
            }
            s += 1;
        }
        z += 1;
    }
    t
});

/// [`e2m1_words`] as the 16-word tables [`Vector::lookup_u16`] takes. One row more than the
/// 256 scale bytes, so that the 64-byte table loads of the widest ISA stay inside the array.
/// 16 KiB, 64-byte aligned, so that a row (32 bytes) never straddles two cache lines.
pub(crate) static E2M1_ROWS: Rows = Rows(e2m1_words());

/// A table of word rows (see [`E2M1_ROWS`]), 64-byte aligned.
#[repr(C, align(64))]
pub(crate) struct Rows(pub(crate) [[[u16; 16]; 257]; 2]);

/// A table of byte-plane rows (see [`E2M1_PLANES`]), 64-byte aligned.
#[repr(C, align(64))]
pub(crate) struct Planes(pub(crate) [[[u8; 32]; 256]; 2]);

/// One MXFP4 block with scale byte `s` in `2..=252` dequantized to `D` (BF16 or f32) through
/// [`Vector::fp4_block_words`] and the block's row of [`E2M1_PLANES`]: the BF16 codes of
/// `E2M1 · 2^(s − 127)` (exact), stored as they are, or moved to the top of 32-bit lanes
/// (the f32 of the same value). Code 8 is `−0` when `signed_zero`, else `+0`. `SPLIT`: the
/// ggml `block_mxfp4` order of the 16 code bytes at `c` (else planar). For another `s` it
/// writes the zero row's words, not the block's values: the caller writes the block again.
///
/// # Safety
/// `c` readable for 16 bytes, `out` writable for 32 values of `D`; `D` is BF16 or f32; the
/// CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn fp4_block_planes<V: Vector, D: BlockDest, const SPLIT: bool>(
    c: *const u8,
    s: u8,
    signed_zero: bool,
    out: *mut u8,
) {
    debug_assert!(D::KIND != DestKind::F16);
    let w = 2 * V::LANES;
    // SAFETY: the caller's guarantee; the row is inside the table (`s < 256`), and the
    // stores cover the block's 32 values, `w` per vector of words.
    unsafe {
        let row = E2M1_PLANES.0[usize::from(!signed_zero)][usize::from(s)].as_ptr();
        let v = V::fp4_block_words::<SPLIT>(c, row);
        for (j, x) in v.iter().enumerate().take(BLOCK / w) {
            if D::KIND == DestKind::Bf16 {
                x.store_words(out.add(2 * j * w), w);
            } else {
                let p = out.add(4 * j * w);
                x.words_lo().shl(16).store_u32(p, V::LANES);
                x.words_hi()
                    .shl(16)
                    .store_u32(p.add(4 * V::LANES), V::LANES);
            }
        }
    }
}

/// One MXFP4 block with scale byte `s` in `2..=252` dequantized to `D` (BF16 or f32) by
/// [`Vector::lookup_u16`] of the block's row of [`E2M1_ROWS`], the BF16 codes of
/// `E2M1 · 2^(s − 127)` (exact), for the vectors without byte-plane lookups. Each code byte
/// becomes one lane holding its low nibble in the low half and its high nibble in the high
/// half, and the lookup replaces both by their words. Planar (`SPLIT` false), byte `j`
/// holds values `2j` and `2j + 1`: the lane is two BF16 values in order, or, to f32, the
/// codes are loaded one per lane instead. In ggml's `block_mxfp4` order (`SPLIT`), byte `j`
/// holds values `j` and `j + 16`: the low halves are values `j..`, the high halves values
/// `j + 16..`, stored apart (or, where one vector holds the 16 bytes, stored at once after
/// [`Vector::unzip_words`]). Code 8 is `−0` when `signed_zero`, else `+0`. For another `s` it
/// writes the zero row's words, not the block's values: the caller writes the block again.
///
/// # Safety
/// `c` readable for 16 bytes, `out` writable for 32 values of `D`; `D` is BF16 or f32; the
/// CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn fp4_rows_block<V: Vector, D: BlockDest, const SPLIT: bool>(
    c: *const u8,
    s: u8,
    signed_zero: bool,
    out: *mut u8,
) {
    debug_assert!(D::KIND != DestKind::F16);
    let l = V::LANES;
    // The table's second vector for the ISAs of fewer than 16 words per vector.
    let second = if 4 * l < 32 { 4 * l } else { 0 };
    // SAFETY: the caller's guarantee; row `s` (≤ 255 < 257) of the table, each table load
    // reading 4 · min(LANES, 8) ≤ 32 bytes from offset 0 or `second` < 32 of it (16 + 16
    // bytes for 4 lanes), inside the row; the loads stay inside the block's 16 code bytes
    // (`l` bytes from `i < 16`, or `l` codes, `l / 2` bytes, from byte `j · l / 2 < 16`) and
    // the stores inside its 32 values (`l` values from value `i`, `16 + i` or `2i`, `2l`
    // from `2i`, with `i + l ≤ 16`, or `l` from `j · l < 32`).
    unsafe {
        let row = E2M1_ROWS.0[usize::from(!signed_zero)][usize::from(s)]
            .as_ptr()
            .cast::<u8>();
        let n = l.min(8);
        let t = [V::load_u32(row, n), V::load_u32(row.add(second), n)];
        let lo = V::splat(0xF);
        if !SPLIT && D::KIND == DestKind::F32 {
            let mut j = 0;
            while j * l < BLOCK {
                let code = V::load_nibbles(c.add(j * l / 2), l);
                code.lookup_u16(&t)
                    .shl(16)
                    .store_u32_in_lines(out.add(4 * j * l));
                j += 1;
            }
            return;
        }
        let mut i = 0;
        while i < BLOCK / 2 {
            let b = V::load_u8(c.add(i), l);
            // Low nibble to the low half, high nibble to the high half.
            let w = b.and(lo).or(b.shr(4).shl(16)).lookup_u16(&t);
            match (SPLIT, D::KIND) {
                (false, _) => w.store_u32(out.add(4 * i), l),
                // One vector holds the block's 32 words (i = 0): values 0..16 and 16..32 in
                // order after one unzip.
                (true, DestKind::Bf16) if l == BLOCK / 2 => w.unzip_words().store_u32(out, l),
                (true, DestKind::Bf16) => {
                    w.store_u16(out.add(2 * i), l);
                    w.shr(16).store_u16(out.add(2 * (16 + i)), l);
                }
                _ => {
                    w.shl(16).store_u32_in_lines(out.add(4 * i));
                    w.and(V::splat(0xFFFF_0000))
                        .store_u32_in_lines(out.add(4 * (16 + i)));
                }
            }
            i += l;
        }
    }
}

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    use crate::block::spec::mx::{MxElement, dequantize_block, ggml_dequantize_block};
    use crate::simd::generic::block::ggml::{E2M1_BF16, E2M1_PLANES, E2M1_ROWS};
    use crate::{BF16, F4E2M1, codec};
    use core::mem::MaybeUninit;

    /// `E2M1_BF16` against the codec's widening of each code, and every row of
    /// `E2M1_ROWS[0]` (code 8 as −0) against the specification's `Ocp` dequantization
    /// (`dequantize_block`).
    pub fn e2m1_tables_are_the_specification() {
        for c in 0..16u32 {
            let f = codec::widen_f32::<F4E2M1>(c);
            assert_eq!(u32::from(E2M1_BF16[c as usize]), f >> 16, "code {c}");
            assert_eq!(f & 0xFFFF, 0);
        }
        let codes: [u8; 8] = core::array::from_fn(|j| (2 * j as u8) | ((2 * j as u8 + 1) << 4));
        for s in 2..=252u8 {
            let mut out = [MaybeUninit::<BF16>::uninit(); 16];
            dequantize_block::<BF16>(MxElement::E2M1, &codes, 0, s, &mut out);
            for (c, o) in out.iter().enumerate() {
                // SAFETY: `dequantize_block` initialised every value.
                let bits = unsafe { o.assume_init() }.to_bits();
                assert_eq!(E2M1_ROWS.0[0][s as usize][c], bits, "scale {s}, code {c}");
            }
        }
    }

    /// `E2M1_PLANES` and `E2M1_ROWS` against the Ggml profile's dequantization of a block
    /// (`ggml_dequantize_block`) for every scale byte in 2..=252.
    pub fn planes_are_the_specification() {
        // Every row in 2..=252, both zeros: the Ggml profile's specification for code 8 as
        // +0, and the sign flipped onto the +0 of code 0 for the other.
        let codes: [u8; 32] = core::array::from_fn(|j| (j % 16) as u8);
        for s in 2..=252u8 {
            let mut out = [MaybeUninit::<f32>::uninit(); 32];
            ggml_dequantize_block::<f32>(&codes, s, &mut out);
            for c in 0..16 {
                // SAFETY: `ggml_dequantize_block` initialised every value.
                let bits = unsafe { out[c].assume_init() }.to_bits();
                assert_eq!(bits & 0xFFFF, 0);
                for z in 0..2 {
                    let row = &E2M1_PLANES.0[z][s as usize];
                    let w = u32::from(row[c]) | u32::from(row[16 + c]) << 8;
                    let want = if c == 8 && z == 0 { 0x8000 } else { bits >> 16 };
                    assert_eq!(w, want, "scale {s}, code {c}, zero {z}");
                    let w = E2M1_ROWS.0[z][s as usize][c];
                    assert_eq!(u32::from(w), want, "row: scale {s}, code {c}, zero {z}");
                }
            }
        }
    }
}
