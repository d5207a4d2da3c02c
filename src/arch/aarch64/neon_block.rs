//! The hand-written NEON block kernel: block FP8 (E4M3 with one f32 scale per tile, the
//! DeepSeek layout) dequantization to f32, BF16 and F16, bit for bit the scalar
//! `fp8::dequantize_run` of `src/block/spec` (the specification), whatever FPCR holds. Every
//! other block slot of the aarch64 table is the width-generic layer's
//! (`simd/aarch64/neon.rs`, `fill_block`).
//!
//! # FPCR
//!
//! Two operations are floating point: `FMUL` (the rounded f32 product) and `FCVTN` (f32 →
//! F16 narrowing). Both obey FPCR (rounding mode, `FZ`, `FZ16`, `DN`, `AHP`, `AH`), so the
//! kernel holds an [`Fpcr0`] for the call: it reads FPCR once (`MRS`) and, only if it is not
//! 0 already, sets it to 0 (the reset value: round to nearest even, no flushing, NaN operands
//! propagated, IEEE binary16, no traps) and restores the caller's value when dropped (also
//! on unwinding). Under FPCR = 0, `FMUL` is the IEEE product (subnormals kept, a quiet NaN
//! operand returned unchanged) and `FCVTN` the IEEE narrowing (nearest even, F16 subnormals
//! kept, a NaN quieted with its top payload bits kept), which is what `soft::mul` and
//! `codec::narrow_f32` specify. Both are issued as `asm!` statements, like the `MSR`s: the
//! compiler does not model FPCR and could move an intrinsic's floating-point operation
//! across the `MSR`, but it keeps side-effecting `asm!` statements in program order.
//!
//! # E4M3 codes to BF16 words (integer)
//!
//! Every E4M3 value is exact in BF16, and its f32 bits have a zero low half, so the kernel
//! widens codes to *BF16 words* (the top 16 bits of the f32 `codec::widen_f32` gives), 8 per
//! vector. For normal codes the word is an affine function of the magnitude,
//! `(mag << 4) + (120 << 7)` (the exponent field lands on BF16's, the fraction on the top of
//! BF16's fraction, then the bias difference is added; no carry reaches the sign: the
//! largest result is below 0x4800). Zero, the subnormals and NaN are looked up (`TBL`) at
//! `(mag + 1) & 0x7F` (0x7F → 0 and 0..=14 → 1..=15) in a 16-entry table computed from
//! `codec::widen_f32` itself; the sign is OR-ed back in.
//!
//! # The product and its rounding
//!
//! `dst[i] = D(f32(f32(code) · scale))`: the word widened to f32 (`SHLL`, exact), one
//! `FMUL` by the scale (FPCR 0, finite scale; a NaN or infinite scale runs the scalar
//! `fp8::dequantize_run`), then f32 as is, BF16 by the integer round to nearest even
//! `(x + 0x7FFF + lsb) >> 16` (`ADDHN`; the only NaNs are `0x7FC00000 | sign`, whose top half
//! that keeps, as vcvt's narrowing does), F16 by `FCVTN`. A run's last `len % 16` codes go
//! through 16-element stack buffers, so no access leaves the caller's ranges.

use core::arch::aarch64::*;
use core::arch::asm;
use core::mem::MaybeUninit;
use core::ptr;

use super::neon::{load, store};
use crate::block::spec;
use crate::block::spec::BlockDest;
use crate::block::spec::kernels::{BlockKernels, Fp8DequantFn};
use crate::codec;
// The FPCR guard (FPCR = 0 for its lifetime) is the vector layer's, shared with the generic
// NEON kernels.
use crate::simd::aarch64::Fpcr0;
use crate::{BF16, F8E4M3, F16};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// `FMUL` of 4 f32 lanes (bits), as an `asm!` statement so that it stays between the `MSR`s
/// of an [`Fpcr0`] (module docs).
///
/// # Safety
/// FPCR must be 0 (then this is the IEEE product).
#[inline]
#[target_feature(enable = "neon")]
unsafe fn fmul(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
    let r: uint32x4_t;
    // SAFETY: a register-only multiplication.
    unsafe {
        asm!(
            "fmul {r:v}.4s, {a:v}.4s, {b:v}.4s",
            r = lateout(vreg) r,
            a = in(vreg) a,
            b = in(vreg) b,
            options(nomem, nostack, preserves_flags)
        )
    };
    r
}

/// `FCVTN`/`FCVTN2`: 8 f32 (bits) to F16 codes.
///
/// # Safety
/// FPCR must be 0 (then this is the IEEE narrowing, nearest even, the contract of
/// `codec::narrow_f32` for F16 with NaN preserved).
#[inline]
#[target_feature(enable = "neon")]
unsafe fn fcvtn_f16(a: uint32x4_t, b: uint32x4_t) -> uint16x8_t {
    let r: uint16x8_t;
    // SAFETY: register-only conversions; `r` is an `out` operand, so it is allocated apart
    // from `a` and `b` and FCVTN2 (which keeps the low half) reads `b` intact.
    unsafe {
        asm!(
            "fcvtn {r:v}.4h, {a:v}.4s",
            "fcvtn2 {r:v}.8h, {b:v}.4s",
            r = out(vreg) r,
            a = in(vreg) a,
            b = in(vreg) b,
            options(nomem, nostack, preserves_flags)
        )
    };
    r
}

/// The BF16 words (top halves of the f32 bits of `codec::widen_f32`) of the 16 E4M3 codes
/// `(i + 0x7F) & 0x7F` (`i < 16`: the NaN `0x7F`, then zero and the subnormals up to
/// `0x0E`), split into a low and a high byte plane.
fn e4m3_word_table() -> [[u8; 16]; 2] {
    let mut t = [[0u8; 16]; 2];
    let (lo, hi) = t.split_at_mut(1);
    for (i, (l, h)) in lo[0].iter_mut().zip(hi[0].iter_mut()).enumerate() {
        let w = codec::widen_f32::<F8E4M3>((i as u32 + 0x7F) & 0x7F);
        // Every E4M3 value has at most 4 significant bits: the low half is zero.
        debug_assert_eq!(w & 0xFFFF, 0);
        *l = (w >> 16) as u8;
        *h = (w >> 24) as u8;
    }
    t
}

/// Zips two byte vectors into 16-bit words: `lo` the low bytes, `hi` the high bytes.
#[inline]
#[target_feature(enable = "neon")]
fn zip16(lo: uint8x16_t, hi: uint8x16_t) -> [uint16x8_t; 2] {
    [
        vreinterpretq_u16_u8(vzip1q_u8(lo, hi)),
        vreinterpretq_u16_u8(vzip2q_u8(lo, hi)),
    ]
}

// ---------------------------------------------------------------------------------------
// Destinations
// ---------------------------------------------------------------------------------------

/// A dequantization destination: f32, BF16 or F16.
trait Dest {
    /// The destination type, for the scalar fallback.
    type T: BlockDest;
    /// Bytes per value.
    const SIZE: usize;
    /// Stores 16 f32 values rounded to nearest even to `T`, where every NaN among them is
    /// `0x7FC00000 | sign`.
    ///
    /// # Safety
    /// `d` writable for `16 · SIZE` bytes; FPCR is 0.
    unsafe fn store_rounded(d: *mut u8, v: [uint32x4_t; 4]);
}

/// f32 destination.
struct ToF32;
/// BF16 destination.
struct ToBf16;
/// F16 destination.
struct ToF16;

/// Stores 16 words (32 bytes).
///
/// # Safety
/// `d` writable for 32 bytes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn store_u16x16(d: *mut u8, w: [uint16x8_t; 2]) {
    // SAFETY: forwarded: two 16-byte stores.
    unsafe {
        store(d, vreinterpretq_u8_u16(w[0]));
        store(d.add(16), vreinterpretq_u8_u16(w[1]));
    }
}

impl Dest for ToF32 {
    type T = f32;
    const SIZE: usize = 4;

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_rounded(d: *mut u8, v: [uint32x4_t; 4]) {
        // SAFETY: 64 bytes writable at d: four 16-byte stores.
        unsafe {
            for (j, x) in v.into_iter().enumerate() {
                store(d.add(16 * j), vreinterpretq_u8_u32(x));
            }
        }
    }
}

impl Dest for ToBf16 {
    type T = BF16;
    const SIZE: usize = 2;

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_rounded(d: *mut u8, v: [uint32x4_t; 4]) {
        // Round to nearest even at bit 16: ADDHN returns the top half of x + 0x7FFF + lsb.
        // The carry ripples into the exponent as rounding to the next binade (and past MAX
        // to Inf) must; no sum wraps (x <= 0xFFC00000 for the NaNs that occur, and below
        // 0xFF800000 otherwise). A NaN 0x7FC00000 | sign has lsb 0 and keeps its top half.
        let r = |x: uint32x4_t| {
            let lsb = vandq_u32(vshrq_n_u32::<16>(x), vdupq_n_u32(1));
            vaddhn_u32(x, vaddq_u32(lsb, vdupq_n_u32(0x7FFF)))
        };
        let w = [
            vcombine_u16(r(v[0]), r(v[1])),
            vcombine_u16(r(v[2]), r(v[3])),
        ];
        // SAFETY: forwarded: 32 bytes writable at d.
        unsafe { store_u16x16(d, w) }
    }
}

impl Dest for ToF16 {
    type T = F16;
    const SIZE: usize = 2;

    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn store_rounded(d: *mut u8, v: [uint32x4_t; 4]) {
        // SAFETY: FPCR is 0 (forwarded), 32 bytes writable at d.
        unsafe {
            let w = [fcvtn_f16(v[0], v[1]), fcvtn_f16(v[2], v[3])];
            store_u16x16(d, w)
        }
    }
}

// ---------------------------------------------------------------------------------------
// E4M3 widening to BF16 words
// ---------------------------------------------------------------------------------------

/// The per-call table of [`e4m3_words`], loaded once per row.
struct Tables {
    lo: uint8x16_t,
    hi: uint8x16_t,
}

impl Tables {
    /// Loads an [`e4m3_word_table`].
    #[inline]
    #[target_feature(enable = "neon")]
    fn new(t: &[[u8; 16]; 2]) -> Tables {
        // SAFETY: each plane is 16 bytes: one 16-byte load each.
        unsafe {
            Tables {
                lo: load(t[0].as_ptr()),
                hi: load(t[1].as_ptr()),
            }
        }
    }
}

/// The BF16 words of 16 E4M3 codes: the affine formula for normal codes, the table for the
/// others (module docs).
#[inline]
#[target_feature(enable = "neon")]
fn e4m3_words(c: uint8x16_t, t: &Tables) -> [uint16x8_t; 2] {
    let mag = vandq_u8(c, vdupq_n_u8(0x7F));
    // (mag << 4) + ((127 - 7) << 7): exponent and fraction moved to BF16's fields, re-biased.
    let f = [vshll_n_u8::<4>(vget_low_u8(mag)), vshll_high_n_u8::<4>(mag)]
        .map(|f| vaddq_u16(f, vdupq_n_u16(120 << 7)));
    // 0x7F (NaN) -> 0 and 0..=14 (zero, subnormals, and 0x08..=0x0E, whose table words the
    // formula would also give) -> 1..=15; every other index is >= 16 and takes the formula.
    let idx = vandq_u8(vaddq_u8(mag, vdupq_n_u8(1)), vdupq_n_u8(0x7F));
    let in_table = vcltq_u8(idx, vdupq_n_u8(16));
    let tw = zip16(vqtbl1q_u8(t.lo, idx), vqtbl1q_u8(t.hi, idx));
    let sel = zip16(in_table, in_table);
    // The sign bit moved from bit 7 of the byte to bit 15 of the word.
    let sign = zip16(vdupq_n_u8(0), vandq_u8(c, vdupq_n_u8(0x80)));
    [0, 1].map(|j| vorrq_u16(vbslq_u16(sel[j], tw[j], f[j]), sign[j]))
}

// ---------------------------------------------------------------------------------------
// Block FP8 dequantization
// ---------------------------------------------------------------------------------------

/// Block FP8 dequantization by the scalar `fp8::dequantize_run`, 32 values at a time
/// through a stack buffer (the destination need not be aligned for `D::T`).
///
/// # Safety
/// `codes` readable for `len` bytes, `dst` writable for `len` values.
#[cold]
#[inline(never)]
unsafe fn fp8_dequant_scalar<D: Dest>(codes: *const u8, scale: u32, len: usize, dst: *mut u8) {
    let mut out = [MaybeUninit::<D::T>::uninit(); 32];
    let mut i = 0;
    while i < len {
        let n = (len - i).min(32);
        // SAFETY: codes i..i + n are readable bytes (u8, no alignment needed).
        let c = unsafe { core::slice::from_raw_parts(codes.add(i), n) };
        spec::fp8_dequantize_run::<D::T>(c, scale, &mut out[..n]);
        // SAFETY: the n values are initialised; values i..i + n (n · SIZE bytes) are
        // writable at dst; the buffer is a distinct local.
        unsafe {
            ptr::copy_nonoverlapping(out.as_ptr().cast::<u8>(), dst.add(i * D::SIZE), n * D::SIZE)
        };
        i += n;
    }
}

/// 16 E4M3 codes times `f`, each rounded once to f32 (FPCR 0), stored rounded to `D`.
///
/// # Safety
/// `c` readable for 16 bytes, `d` writable for `16 · D::SIZE` bytes; FPCR is 0.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn fp8_x16<D: Dest>(c: *const u8, f: uint32x4_t, t: &Tables, d: *mut u8) {
    // SAFETY: 16 bytes readable at c; NEON is this function's feature.
    let w = e4m3_words(unsafe { load(c) }, t);
    // The exact f32 of each code (SHLL #16), then one FMUL: under FPCR 0 the IEEE product,
    // a quiet NaN code returned as it is (the scale is finite).
    // SAFETY: FPCR is 0 (the caller's guarantee).
    let m = |x: uint32x4_t| unsafe { fmul(x, f) };
    let v = [
        m(vshll_n_u16::<16>(vget_low_u16(w[0]))),
        m(vshll_high_n_u16::<16>(w[0])),
        m(vshll_n_u16::<16>(vget_low_u16(w[1]))),
        m(vshll_high_n_u16::<16>(w[1])),
    ];
    // SAFETY: forwarded.
    unsafe { D::store_rounded(d, v) }
}

/// Block FP8 dequantization of one row (the `Fp8DequantFn` slot), FPCR read once.
///
/// # Safety
/// The `Fp8DequantFn` contract.
#[target_feature(enable = "neon")]
unsafe fn fp8_dequant_row<D: Dest>(
    codes: *const u8,
    scales: *const u8,
    tile_cols: usize,
    cols: usize,
    dst: *mut u8,
) {
    let _fpcr = Fpcr0::new();
    let t = Tables::new(&e4m3_word_table());
    let mut lo = 0;
    let mut tile = 0;
    while lo < cols {
        let len = tile_cols.min(cols - lo);
        // SAFETY: tile < cols.div_ceil(tile_cols), so its 4 scale bytes are readable.
        let scale = unsafe { scales.add(4 * tile).cast::<u32>().read_unaligned() }.to_le();
        // SAFETY: codes lo..lo + len and values lo..lo + len are inside the caller's ranges.
        let (c, d) = unsafe { (codes.add(lo), dst.add(lo * D::SIZE)) };
        if scale & 0x7FFF_FFFF >= 0x7F80_0000 {
            // A NaN or infinite scale (rare; its NaN results follow `soft::mul`).
            // SAFETY: forwarded.
            unsafe { fp8_dequant_scalar::<D>(c, scale, len, d) };
        } else {
            let f = vdupq_n_u32(scale);
            let mut i = 0;
            while len - i >= 16 {
                // SAFETY: codes/values i..i + 16 of the tile are in range; FPCR is 0.
                unsafe { fp8_x16::<D>(c.add(i), f, &t, d.add(i * D::SIZE)) };
                i += 16;
            }
            if i < len {
                let n = len - i;
                // Fewer than 16 left: through stack buffers; the padding codes (0) are
                // converted and dropped.
                let mut cbuf = [0u8; 16];
                let mut dbuf = [0u8; 64];
                // SAFETY: codes i..len are n < 16 readable bytes and values i..len are
                // n · SIZE writable bytes; the buffers hold 16 codes and 16 values of at
                // most 4 bytes and are distinct locals; FPCR is 0.
                unsafe {
                    ptr::copy_nonoverlapping(c.add(i), cbuf.as_mut_ptr(), n);
                    fp8_x16::<D>(cbuf.as_ptr(), f, &t, dbuf.as_mut_ptr());
                    ptr::copy_nonoverlapping(dbuf.as_ptr(), d.add(i * D::SIZE), n * D::SIZE);
                }
            }
        }
        lo += len;
        tile += 1;
    }
}

/// The table entry of [`fp8_dequant_row`].
///
/// # Safety
/// The `Fp8DequantFn` contract.
unsafe fn fp8_dequant_entry<D: Dest>(
    codes: *const u8,
    scales: *const u8,
    tile_cols: usize,
    cols: usize,
    dst: *mut u8,
) {
    // SAFETY: the caller's ranges are forwarded; this table is only reachable through the
    // NEON backends, chosen (or accepted by `check_backend`) only when `neon_available()`
    // confirmed AdvSIMD.
    unsafe { fp8_dequant_row::<D>(codes, scales, tile_cols, cols, dst) }
}

// ---------------------------------------------------------------------------------------
// Table
// ---------------------------------------------------------------------------------------

/// Sets the block FP8 dequantization slots of `t` to the kernel above (both aarch64
/// backends).
pub(crate) const fn set(t: &mut BlockKernels) {
    t.fp8_dequant = [
        Some(fp8_dequant_entry::<ToF32> as Fp8DequantFn),
        Some(fp8_dequant_entry::<ToBf16>),
        Some(fp8_dequant_entry::<ToF16>),
    ];
}
