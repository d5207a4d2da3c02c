//! The `neon` backend: base ARMv8.0 AdvSIMD, present on every aarch64 core.
//!
//! # Floating-point instructions and FPCR
//!
//! The hardware conversions (`FCVTN`, `FCVTL`, `FCVTXN`, and `BFCVTN` in the `neon-bf16` tier)
//! obey FPCR: its rounding mode, flush-to-zero (`FZ`, `FZ16`), default-NaN (`DN`),
//! alternative half precision (`AHP`, which turns binary16 Inf/NaN into ordinary numbers) and
//! alternate handling (`AH`) would all change results. So every loop that runs one of them is
//! a single `asm!` block that reads FPCR, sets it to 0 (the reset value: round to nearest
//! even, no flushing, NaN payloads propagated, IEEE binary16, no traps) only if it is not 0
//! already, runs the loop, and restores the caller's value before the block ends. One block,
//! because Rust assumes the default floating-point environment everywhere outside such a
//! block. Cost per call: one `MRS FPCR` and two not-taken `CBZ` per block (two blocks per
//! call: the whole chunks, then an overlapping last chunk; one per 256 elements on the f64
//! paths through a buffer); two `MSR FPCR` only when the caller runs with a non-default FPCR.
//! These instructions still set the cumulative exception flags in FPSR (inexact, overflow,
//! underflow, invalid for a signalling NaN), as `VCVTPS2PH` does in MXCSR; results never
//! depend on them. Everything else is integer AdvSIMD, which FPCR does not affect.
//!
//! # Algorithms
//!
//! * f32 → F16: `FCVTN`/`FCVTN2` (RNE, subnormals, NaN quieted with its top payload bits kept,
//!   exactly the contract), then the saturation fix-up below.
//! * f32 → BF16: integer. In 16-bit lanes, `hi`/`lo` are the two halves of the f32 bits;
//!   `hi` is the truncated BF16 and rounds up when `lo` is above half, or exactly half with
//!   `hi` odd. The carry ripples into the exponent exactly as rounding to the next binade (and
//!   past MAX to Inf) must. NaN (`|x| > 0x7F800000`) becomes `hi | 0x40`.
//! * f32 → E4M3/E5M2: integer, in 32-bit lanes, one formula for normal and subnormal
//!   results: with `e` the f32 biased exponent and `m` its significand with the implicit bit,
//!   `code = (max(e - (128 - bias), 0) << MAN) + rne(m >> s)` where
//!   `s = min(23 - MAN + max(128 - bias - e, 0), 31)`. For a normal result the first term is
//!   `(target exponent - 1) << MAN` and `m >> s` carries the implicit bit into the exponent
//!   field; for a subnormal one the first term is 0 and `s` grows with the missing exponent.
//!   The per-lane shift is `USHL`/`URSHL` by `-s`: `rne(m >> s) = urshl(m - 1 + lsb, -s)`
//!   (round half up of `m - 1 + lsb` is round half to even of `m`). Overflow and ±Inf are one
//!   unsigned minimum with a per-call limit, NaN a select. Nothing goes through F16, so there
//!   is no double rounding.
//! * f64 → any: `FCVTXN` rounds f64 to f32 with round-to-odd, then the f32 algorithm. Rounding
//!   to odd with at least two more bits than the final format, then to nearest even, equals a
//!   single rounding; f32 keeps 24 bits against at most 11 (and f32's subnormal quantum 2^-149
//!   is far below every target's, BF16's 2^-133 included). Above f32::MAX, `FCVTXN` gives
//!   f32::MAX or Inf, both of which overflow every target. F16 fuses both steps in one loop; BF16
//!   and the fp8 formats convert blocks of 256 values into an f32 buffer on the stack and run
//!   the integer f32 kernel on it.
//! * F16 → f32/f64: `FCVTL` (and `FCVTL` again to f64), exact, NaN quieted with payload kept.
//! * BF16 → f32: `SHLL #16`. BF16 → f64: `SHLL #16` then `FCVTL` (IEEE f32→f64, which
//!   quiets a signalling NaN as the contract says).
//! * E5M2 → f32/f64: `SHLL #8` makes the F16 with the same value, then `FCVTL`.
//! * E4M3 → f32/f64: integer. Every E4M3 value fits in the top 16 bits of the wide encoding
//!   (sign, exponent, 7 or 4 fraction bits). For normal codes those bits are an affine function
//!   of the code (shift the magnitude into place, add the difference of the biases); a 16-entry
//!   `TBL` supplies the rest: zero, the seven subnormals (which become normal wide values) and
//!   NaN, looked up at `(code + 1) & 0x7F`.
//!
//! Saturation for F16 and BF16: `code + (code << 1 == K ? -1 : 0)`, with `K` the shifted Inf
//! (`0xF800`, `0xFF00`) under `Saturate`, so ±Inf becomes ±MAX (NaN codes are above Inf and
//! untouched), and `K = 1` under `NonSaturating`, which `code << 1` (always even) never equals.
//!
//! # Lengths
//!
//! Loops run over whole chunks; a length that is not a multiple of the chunk ends with one
//! more chunk over the last elements, overlapping ones already converted (they get the same
//! values again; source and destination never overlap). Slices shorter than one chunk go to
//! the Scalar code. Nothing is read or written outside `len` elements.

use core::arch::aarch64::*;
use core::mem::MaybeUninit;

use crate::arch::Kernels;
use crate::arch::scalar::{f32_to_narrow, f64_to_narrow, narrow_to_f32, narrow_to_f64};
use crate::codec::{Code, Format};
use crate::options::Policy;
use crate::{BF16, F8E4M3, F8E5M2, F16, Overflow};

/// One `asm!` block running `body` `n` times (`n >= 1`) with FPCR set to 0, restoring the
/// caller's FPCR before the block ends. `body` must advance its pointers.
macro_rules! fpcr_loop {
    ([$($body:literal),+ $(,)?], $($operands:tt)*) => {
        ::core::arch::asm!(
            // Save FPCR; write 0 only if it is not 0 already (MSR FPCR can be slow).
            "mrs {saved}, fpcr",
            "cbz {saved}, 2f",
            "msr fpcr, xzr",
            "2:",
            $($body,)+
            "subs {n}, {n}, #1",
            "b.ne 2b",
            // Restore the caller's FPCR.
            "cbz {saved}, 3f",
            "msr fpcr, {saved}",
            "3:",
            $($operands)*
            saved = out(reg) _,
            options(nostack)
        )
    };
}
pub(super) use fpcr_loop;

/// Runs `body(start, chunks)` over `len` elements in chunks of `N`: first all whole chunks
/// from 0, then, if `len` is not a multiple of `N`, one chunk ending at `len`. Calls `short()`
/// instead when `len < N`.
#[inline(always)]
pub(super) fn cover<const N: usize>(len: usize, body: impl Fn(usize, usize), short: impl FnOnce()) {
    if len < N {
        short();
        return;
    }
    body(0, len / N);
    if !len.is_multiple_of(N) {
        body(len - N, 1);
    }
}

/// The comparison key of the F16/BF16 saturation fix-up (see the module docs).
#[inline(always)]
pub(crate) fn sat_key(overflow: Overflow, inf_shifted: u16) -> u16 {
    match overflow {
        Overflow::Saturate => inf_shifted,
        Overflow::NonSaturating => 1,
    }
}

/// Loads 16 bytes (no alignment needed).
///
/// # Safety
/// `p` must be valid for reading 16 bytes.
#[inline]
#[target_feature(enable = "neon")]
pub(super) unsafe fn load(p: *const u8) -> uint8x16_t {
    // SAFETY: forwarded from the caller; `vld1q_u8` reads bytes, so any alignment is fine.
    unsafe { vld1q_u8(p) }
}

/// Stores 16 bytes (no alignment needed).
///
/// # Safety
/// `p` must be valid for writing 16 bytes.
#[inline]
#[target_feature(enable = "neon")]
pub(super) unsafe fn store(p: *mut u8, v: uint8x16_t) {
    // SAFETY: forwarded from the caller; `vst1q_u8` writes bytes, so any alignment is fine.
    unsafe { vst1q_u8(p, v) }
}

// ---------------------------------------------------------------------------------------
// f32 -> F16 and f64 -> F16: FCVTN.

/// `chunks` chunks of 8: f32 -> F16.
///
/// # Safety
/// `src` valid for reading `8 * chunks` f32, `dst` for writing `8 * chunks` F16, `chunks >= 1`.
#[inline(always)]
unsafe fn f32_to_f16_loop(src: *const u8, dst: *mut u8, chunks: usize, key: uint16x8_t) {
    // SAFETY: each iteration reads 32 bytes at `src` and writes 16 at `dst` and advances both,
    // `chunks` times, which the caller guarantees is in bounds; FCVTN is base AdvSIMD; FPCR is
    // restored before the block ends.
    unsafe {
        fpcr_loop!(
            [
                "ldp {a:q}, {b:q}, [{src}], #32",
                "fcvtn {o:v}.4h, {a:v}.4s",
                "fcvtn2 {o:v}.8h, {b:v}.4s",
                // Saturation fix-up: subtract 1 from ±Inf when `key` is the shifted Inf.
                "shl {t:v}.8h, {o:v}.8h, #1",
                "cmeq {t:v}.8h, {t:v}.8h, {key:v}.8h",
                "add {o:v}.8h, {o:v}.8h, {t:v}.8h",
                "str {o:q}, [{dst}], #16",
            ],
            src = inout(reg) src => _,
            dst = inout(reg) dst => _,
            n = inout(reg) chunks => _,
            key = in(vreg) key,
            a = out(vreg) _,
            b = out(vreg) _,
            o = out(vreg) _,
            t = out(vreg) _,
        );
    }
}

/// `chunks` chunks of 8: f64 -> F16 (round to odd to f32, then FCVTN).
///
/// # Safety
/// `src` valid for reading `8 * chunks` f64, `dst` for writing `8 * chunks` F16, `chunks >= 1`.
#[inline(always)]
unsafe fn f64_to_f16_loop(src: *const u8, dst: *mut u8, chunks: usize, key: uint16x8_t) {
    // SAFETY: each iteration reads 64 bytes and writes 16 and advances both, `chunks` times,
    // in bounds by the caller's guarantee; base AdvSIMD only; FPCR restored before the end.
    unsafe {
        fpcr_loop!(
            [
                "ldp {a:q}, {b:q}, [{src}], #32",
                "ldp {c:q}, {d:q}, [{src}], #32",
                "fcvtxn {w:v}.2s, {a:v}.2d",
                "fcvtxn2 {w:v}.4s, {b:v}.2d",
                "fcvtxn {x:v}.2s, {c:v}.2d",
                "fcvtxn2 {x:v}.4s, {d:v}.2d",
                "fcvtn {o:v}.4h, {w:v}.4s",
                "fcvtn2 {o:v}.8h, {x:v}.4s",
                "shl {t:v}.8h, {o:v}.8h, #1",
                "cmeq {t:v}.8h, {t:v}.8h, {key:v}.8h",
                "add {o:v}.8h, {o:v}.8h, {t:v}.8h",
                "str {o:q}, [{dst}], #16",
            ],
            src = inout(reg) src => _,
            dst = inout(reg) dst => _,
            n = inout(reg) chunks => _,
            key = in(vreg) key,
            a = out(vreg) _,
            b = out(vreg) _,
            c = out(vreg) _,
            d = out(vreg) _,
            w = out(vreg) _,
            x = out(vreg) _,
            o = out(vreg) _,
            t = out(vreg) _,
        );
    }
}

/// f32 -> F16.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f32_to_f16(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    let key = vdupq_n_u16(sat_key(policy.overflow, 0xF800));
    cover::<8>(
        len,
        // SAFETY: `cover` passes whole chunks inside `0..len`, which the caller guarantees
        // are readable (f32, 4 bytes) and writable (F16, 2 bytes).
        |i, n| unsafe { f32_to_f16_loop(src.add(4 * i), dst.add(2 * i), n, key) },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { f32_to_narrow::<F16>(src, dst, len, policy) },
    );
}

/// f64 -> F16.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f64_to_f16(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    let key = vdupq_n_u16(sat_key(policy.overflow, 0xF800));
    cover::<8>(
        len,
        // SAFETY: whole chunks inside `0..len` (f64 8 bytes, F16 2 bytes).
        |i, n| unsafe { f64_to_f16_loop(src.add(8 * i), dst.add(2 * i), n, key) },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { f64_to_narrow::<F16>(src, dst, len, policy) },
    );
}

// ---------------------------------------------------------------------------------------
// One vector at a time (for `vcvt::vector::neon`): the instructions of the loops above in
// an `asm!` block of their own that sets FPCR to 0 around them, as `fpcr_loop!` does.

/// 4 f32 to 4 F16 codes with `FCVTN` under the default FPCR, then the saturation fix-up
/// with `key` (see [`sat_key`]); the caller's FPCR is restored before the block ends.
#[inline]
#[target_feature(enable = "neon")]
pub(crate) fn f16_from_f32_x4(x: float32x4_t, key: uint16x4_t) -> uint16x4_t {
    let h: uint16x4_t;
    // SAFETY: register operands only; FCVTN is base AdvSIMD (enabled here); FPCR is set to
    // 0 only if it is not 0 and restored before the block ends, so no code outside the
    // block sees another FPCR. The result depends on `x` alone (hence `pure`).
    unsafe {
        core::arch::asm!(
            "mrs {saved}, fpcr",
            "cbz {saved}, 2f",
            "msr fpcr, xzr",
            "2:",
            "fcvtn {h:v}.4h, {x:v}.4s",
            "cbz {saved}, 3f",
            "msr fpcr, {saved}",
            "3:",
            x = in(vreg) x,
            h = out(vreg) h,
            saved = out(reg) _,
            options(pure, nomem, nostack)
        );
    }
    vadd_u16(h, vceq_u16(vshl_n_u16::<1>(h), key))
}

/// 4 F16 codes to f32 with `FCVTL` under the default FPCR (restored before the block ends).
#[inline]
#[target_feature(enable = "neon")]
pub(crate) fn f32_from_f16_x4(h: uint16x4_t) -> float32x4_t {
    let f: float32x4_t;
    // SAFETY: as in `f16_from_f32_x4`.
    unsafe {
        core::arch::asm!(
            "mrs {saved}, fpcr",
            "cbz {saved}, 2f",
            "msr fpcr, xzr",
            "2:",
            "fcvtl {f:v}.4s, {h:v}.4h",
            "cbz {saved}, 3f",
            "msr fpcr, {saved}",
            "3:",
            h = in(vreg) h,
            f = out(vreg) f,
            saved = out(reg) _,
            options(pure, nomem, nostack)
        );
    }
    f
}

/// 8 E5M2 codes to f32: `SHLL #8` makes the F16 of the same value, then `FCVTL`/`FCVTL2`
/// under the default FPCR (restored before the block ends), as the E5M2 -> f32 loop.
#[inline]
#[target_feature(enable = "neon")]
pub(crate) fn f32_from_e5m2_x8(c: uint8x8_t) -> float32x4x2_t {
    let (lo, hi): (float32x4_t, float32x4_t);
    // SAFETY: as in `f16_from_f32_x4`.
    unsafe {
        core::arch::asm!(
            "mrs {saved}, fpcr",
            "cbz {saved}, 2f",
            "msr fpcr, xzr",
            "2:",
            "shll {h:v}.8h, {c:v}.8b, #8",
            "fcvtl {lo:v}.4s, {h:v}.4h",
            "fcvtl2 {hi:v}.4s, {h:v}.8h",
            "cbz {saved}, 3f",
            "msr fpcr, {saved}",
            "3:",
            c = in(vreg) c,
            h = out(vreg) _,
            lo = out(vreg) lo,
            hi = out(vreg) hi,
            saved = out(reg) _,
            options(pure, nomem, nostack)
        );
    }
    float32x4x2_t(lo, hi)
}

// ---------------------------------------------------------------------------------------
// f32 -> BF16: integer.

/// Narrows 8 f32 (as bits, in `x0`, `x1`) to BF16 codes. `key`: see [`sat_key`]. (Also
/// `vcvt::vector::neon::f32x4_to_bf16`, with `x0 == x1`.)
#[inline]
#[target_feature(enable = "neon")]
pub(crate) fn bf16_x8(x0: uint32x4_t, x1: uint32x4_t, key: uint16x8_t) -> uint16x8_t {
    let one = vdupq_n_u16(1);
    // Low and high halves of the eight f32 values (lane order kept).
    let lo = vuzp1q_u16(vreinterpretq_u16_u32(x0), vreinterpretq_u16_u32(x1));
    let hi = vuzp2q_u16(vreinterpretq_u16_u32(x0), vreinterpretq_u16_u32(x1));
    // Round up when lo > 0x8000, or lo == 0x8000 and hi is odd: lo > 0x8000 - lsb(hi).
    let up = vcgtq_u16(lo, vsubq_u16(vdupq_n_u16(0x8000), vandq_u16(hi, one)));
    // `up` is all ones (-1) where rounding up; a carry moves into the exponent as it must.
    let r = vsubq_u16(hi, up);
    // NaN iff |x| > 0x7F800000: the high magnitude plus 1 if lo != 0 exceeds 0x7F80
    // (at most 0x7FFF + 1, no wrap). vtst gives -1 where lo != 0.
    let mag = vsubq_u16(vandq_u16(hi, vdupq_n_u16(0x7FFF)), vtstq_u16(lo, lo));
    let nan = vcgtq_u16(mag, vdupq_n_u16(0x7F80));
    let r = vbslq_u16(nan, vorrq_u16(hi, vdupq_n_u16(0x0040)), r);
    // Saturation fix-up (module docs).
    vaddq_u16(r, vceqq_u16(vshlq_n_u16::<1>(r), key))
}

/// f32 -> BF16 with integer AdvSIMD.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
pub(super) unsafe fn f32_to_bf16(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    let key = vdupq_n_u16(sat_key(policy.overflow, 0xFF00));
    cover::<8>(
        len,
        |start, chunks| {
            for c in 0..chunks {
                let i = start + 8 * c;
                // SAFETY: elements `i..i + 8` are inside `0..len` (`cover`), so 32 source
                // bytes at `4 * i` and 16 destination bytes at `2 * i` are in bounds.
                unsafe {
                    let x0 = vreinterpretq_u32_u8(load(src.add(4 * i)));
                    let x1 = vreinterpretq_u32_u8(load(src.add(4 * i + 16)));
                    store(dst.add(2 * i), vreinterpretq_u8_u16(bf16_x8(x0, x1, key)));
                }
            }
        },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { f32_to_narrow::<BF16>(src, dst, len, policy) },
    );
}

// ---------------------------------------------------------------------------------------
// f32 -> E4M3 / E5M2: integer.

/// Per-call constants of the fp8 narrowing.
#[derive(Clone, Copy)]
pub(crate) struct Fp8Consts {
    /// `0x7FFF_FFFF`: clears the sign.
    pub(super) abs: uint32x4_t,
    /// `0x7F80_0000`: magnitudes above it are NaN.
    pub(super) inf: uint32x4_t,
    /// `128 - bias`: the f32 biased exponent of the target's smallest normal, plus one.
    pub(super) e_min: uint32x4_t,
    /// `-(23 - MAN)`: the shift for normal results, negated.
    pub(super) neg_shift: int32x4_t,
    /// `-31`: the largest right shift needed.
    pub(super) neg_31: int32x4_t,
    /// `MAN` as a left shift count.
    pub(super) man: int32x4_t,
    /// `0x007F_FFFF`: the fraction field.
    pub(super) frac: uint32x4_t,
    /// `0x0080_0000`: the implicit bit.
    pub(super) implicit: uint32x4_t,
    /// 1.
    pub(super) one: uint32x4_t,
    /// The code that overflow and ±Inf become (MAX or the non-saturating code).
    pub(super) limit: uint32x4_t,
    /// The NaN magnitude code.
    pub(super) nan: uint32x4_t,
}

impl Fp8Consts {
    #[inline]
    #[target_feature(enable = "neon")]
    pub(crate) fn new<F: Format>(overflow: Overflow) -> Fp8Consts {
        let limit = match overflow {
            Overflow::Saturate => F::MAX,
            Overflow::NonSaturating => F::OVERFLOW_NONSAT,
        };
        Fp8Consts {
            abs: vdupq_n_u32(0x7FFF_FFFF),
            inf: vdupq_n_u32(0x7F80_0000),
            e_min: vdupq_n_u32((128 - F::BIAS) as u32),
            neg_shift: vdupq_n_s32(F::MAN_BITS as i32 - 23),
            neg_31: vdupq_n_s32(-31),
            man: vdupq_n_s32(F::MAN_BITS as i32),
            frac: vdupq_n_u32(0x007F_FFFF),
            implicit: vdupq_n_u32(0x0080_0000),
            one: vdupq_n_u32(1),
            limit: vdupq_n_u32(limit),
            // The fp8 NaN codes do not depend on the payload.
            nan: vdupq_n_u32(F::nan_from_f32(0x7FC0_0000)),
        }
    }
}

/// Narrows 4 f32 (bits) to fp8 magnitude codes in 32-bit lanes (sign not included).
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn fp8_mag_x4(x: uint32x4_t, k: &Fp8Consts) -> uint32x4_t {
    let a = vandq_u32(x, k.abs);
    let e = vshrq_n_u32::<23>(a);
    // s = 23 - MAN + max(e_min - e, 0), clamped to 31 (USHL reads the shift from the low
    // byte, so larger counts must not reach it). Kept negated: USHL/URSHL shift right by -s.
    let neg_s = vmaxq_s32(
        vsubq_s32(k.neg_shift, vreinterpretq_s32_u32(vqsubq_u32(k.e_min, e))),
        k.neg_31,
    );
    // (target exponent - 1) << MAN for normal results, 0 for subnormal ones (saturating
    // subtraction).
    let base = vshlq_u32(vqsubq_u32(e, k.e_min), k.man);
    // Significand with its implicit bit. For e == 0 (f32 zero/subnormal) the implicit bit
    // is wrong but harmless: s is then 31 and 2^24 >> 31 rounds to 0, as the value must.
    let m = vbslq_u32(k.frac, x, k.implicit);
    // rne(m >> s) = round-half-up((m - 1 + lsb) >> s), lsb the lowest kept bit; m >= 2^23
    // so m - 1 does not wrap.
    let kept = vshlq_u32(m, neg_s);
    let t = vsubq_u32(m, vbicq_u32(k.one, kept));
    let code = vaddq_u32(base, vrshlq_u32(t, neg_s));
    // Every code above MAX (Inf's exponent included) is overflow.
    let code = vminq_u32(code, k.limit);
    vbslq_u32(vcgtq_u32(a, k.inf), k.nan, code)
}

/// Narrows 16 f32 at `src` to 16 fp8 codes at `dst`.
///
/// # Safety
/// `src` valid for reading 64 bytes, `dst` for writing 16.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn fp8_x16(src: *const u8, dst: *mut u8, k: &Fp8Consts) {
    // SAFETY: forwarded from the caller: four 16-byte loads inside the 64 source bytes.
    let x = unsafe {
        [
            vreinterpretq_u32_u8(load(src)),
            vreinterpretq_u32_u8(load(src.add(16))),
            vreinterpretq_u32_u8(load(src.add(32))),
            vreinterpretq_u32_u8(load(src.add(48))),
        ]
    };
    // SAFETY: forwarded from the caller.
    unsafe { store(dst, fp8_codes_x16(x, k)) }
}

/// Narrows 16 f32 (bits, four vectors in order) to 16 fp8 codes in order: the step of the
/// f32 → E4M3/E5M2 kernel, and `vcvt::vector::neon`'s (with the 8 values twice).
#[inline]
#[target_feature(enable = "neon")]
pub(crate) fn fp8_codes_x16(x: [uint32x4_t; 4], k: &Fp8Consts) -> uint8x16_t {
    let c = x.map(|x| vreinterpretq_u16_u32(fp8_mag_x4(x, k)));
    // Low byte of every 32-bit lane, in lane order: the codes (all below 0x80).
    let code = vuzp1q_u8(
        vreinterpretq_u8_u16(vuzp1q_u16(c[0], c[1])),
        vreinterpretq_u8_u16(vuzp1q_u16(c[2], c[3])),
    );
    // Top byte of every source lane: its bit 7 is the sign.
    let x = x.map(|x| vreinterpretq_u16_u32(x));
    let top = vuzp2q_u8(
        vreinterpretq_u8_u16(vuzp2q_u16(x[0], x[1])),
        vreinterpretq_u8_u16(vuzp2q_u16(x[2], x[3])),
    );
    vbslq_u8(vdupq_n_u8(0x80), top, code)
}

/// f32 -> E4M3 or E5M2 with integer AdvSIMD.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f32_to_fp8<F: Format + Code>(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    let k = Fp8Consts::new::<F>(policy.overflow);
    cover::<16>(
        len,
        |start, chunks| {
            for c in 0..chunks {
                let i = start + 16 * c;
                // SAFETY: elements `i..i + 16` are inside `0..len` (`cover`): 64 source
                // bytes at `4 * i`, 16 destination bytes at `i`.
                unsafe { fp8_x16(src.add(4 * i), dst.add(i), &k) }
            }
        },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { f32_to_narrow::<F>(src, dst, len, policy) },
    );
}

// ---------------------------------------------------------------------------------------
// f64 -> BF16 / E4M3 / E5M2: round to odd into an f32 buffer, then the f32 kernel.

/// `chunks` chunks of 4: f64 -> f32 with round-to-odd (`FCVTXN`).
///
/// # Safety
/// `src` valid for reading `4 * chunks` f64, `dst` for writing `4 * chunks` f32, `chunks >= 1`.
#[inline(always)]
pub(super) unsafe fn f64_to_f32_odd_loop(src: *const u8, dst: *mut u8, chunks: usize) {
    // SAFETY: each iteration reads 32 bytes and writes 16 and advances both, `chunks` times,
    // in bounds by the caller's guarantee; base AdvSIMD; FPCR restored before the end.
    unsafe {
        fpcr_loop!(
            [
                "ldp {a:q}, {b:q}, [{src}], #32",
                "fcvtxn {w:v}.2s, {a:v}.2d",
                "fcvtxn2 {w:v}.4s, {b:v}.2d",
                "str {w:q}, [{dst}], #16",
            ],
            src = inout(reg) src => _,
            dst = inout(reg) dst => _,
            n = inout(reg) chunks => _,
            a = out(vreg) _,
            b = out(vreg) _,
            w = out(vreg) _,
        );
    }
}

/// Values per block of the f64 paths that go through an f32 buffer.
const BLOCK: usize = 256;

/// f64 -> format `F`: `FCVTXN` into a stack buffer of f32, then `f32_kernel` on it; the
/// last `len % 4` values go to the Scalar code.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel); `f32_kernel` must be a kernel of this CPU for f32 -> `F`.
#[inline(always)]
pub(super) unsafe fn f64_via_f32<F: Format + Code>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    policy: Policy,
    f32_kernel: impl Fn(*const u8, *mut u8, usize, Policy),
) {
    let size = size_of::<F>();
    let whole = len & !3;
    let mut buf = MaybeUninit::<[u32; BLOCK]>::uninit();
    let buf = buf.as_mut_ptr().cast::<u8>();
    let mut i = 0;
    while i < whole {
        // A multiple of 4, at least 4, at most BLOCK.
        let n = (whole - i).min(BLOCK);
        // SAFETY: elements `i..i + n` are inside `0..len`; the buffer holds BLOCK >= n f32.
        // `f32_kernel` then reads the `n` f32 the loop has just written.
        unsafe {
            f64_to_f32_odd_loop(src.add(8 * i), buf, n / 4);
            f32_kernel(buf, dst.add(size * i), n, policy);
        }
        i += n;
    }
    if whole < len {
        // SAFETY: elements `whole..len`, inside the caller's ranges.
        unsafe {
            f64_to_narrow::<F>(
                src.add(8 * whole),
                dst.add(size * whole),
                len - whole,
                policy,
            )
        }
    }
}

/// f64 -> BF16.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f64_to_bf16(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    // SAFETY: the caller's guarantee; `f32_to_bf16` is base AdvSIMD.
    unsafe {
        f64_via_f32::<BF16>(src, dst, len, policy, |s, d, n, o| f32_to_bf16(s, d, n, o));
    }
}

/// f64 -> E4M3 or E5M2.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f64_to_fp8<F: Format + Code>(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    // SAFETY: the caller's guarantee; `f32_to_fp8` is base AdvSIMD.
    unsafe {
        f64_via_f32::<F>(src, dst, len, policy, |s, d, n, o| {
            f32_to_fp8::<F>(s, d, n, o)
        });
    }
}

// ---------------------------------------------------------------------------------------
// Widening with FCVTL: F16, BF16 -> f64, E5M2.

/// `chunks` chunks of 8: F16 -> f32.
///
/// # Safety
/// `src` valid for reading `8 * chunks` F16, `dst` for writing `8 * chunks` f32, `chunks >= 1`.
#[inline(always)]
unsafe fn f16_to_f32_loop(src: *const u8, dst: *mut u8, chunks: usize) {
    // SAFETY: each iteration reads 16 bytes and writes 32 and advances both, `chunks` times,
    // in bounds by the caller's guarantee; base AdvSIMD; FPCR restored before the end.
    unsafe {
        fpcr_loop!(
            [
                "ldr {a:q}, [{src}], #16",
                "fcvtl {w:v}.4s, {a:v}.4h",
                "fcvtl2 {x:v}.4s, {a:v}.8h",
                "stp {w:q}, {x:q}, [{dst}], #32",
            ],
            src = inout(reg) src => _,
            dst = inout(reg) dst => _,
            n = inout(reg) chunks => _,
            a = out(vreg) _,
            w = out(vreg) _,
            x = out(vreg) _,
        );
    }
}

/// `chunks` chunks of 8: F16 -> f64, or BF16 -> f64 when `BF16` is true.
///
/// # Safety
/// `src` valid for reading `8 * chunks` 16-bit codes, `dst` for writing `8 * chunks` f64,
/// `chunks >= 1`.
#[inline(always)]
unsafe fn half_to_f64_loop<const IS_BF16: bool>(src: *const u8, dst: *mut u8, chunks: usize) {
    if IS_BF16 {
        // SAFETY: each iteration reads 16 bytes and writes 64 and advances both, `chunks`
        // times, in bounds by the caller's guarantee; base AdvSIMD; FPCR restored.
        unsafe {
            fpcr_loop!(
                [
                    "ldr {a:q}, [{src}], #16",
                    // BF16 -> f32 is the plain 16-bit shift.
                    "shll {w:v}.4s, {a:v}.4h, #16",
                    "shll2 {x:v}.4s, {a:v}.8h, #16",
                    "fcvtl {p:v}.2d, {w:v}.2s",
                    "fcvtl2 {q:v}.2d, {w:v}.4s",
                    "fcvtl {r:v}.2d, {x:v}.2s",
                    "fcvtl2 {s:v}.2d, {x:v}.4s",
                    "stp {p:q}, {q:q}, [{dst}], #32",
                    "stp {r:q}, {s:q}, [{dst}], #32",
                ],
                src = inout(reg) src => _,
                dst = inout(reg) dst => _,
                n = inout(reg) chunks => _,
                a = out(vreg) _,
                w = out(vreg) _,
                x = out(vreg) _,
                p = out(vreg) _,
                q = out(vreg) _,
                r = out(vreg) _,
                s = out(vreg) _,
            );
        }
    } else {
        // SAFETY: as above.
        unsafe {
            fpcr_loop!(
                [
                    "ldr {a:q}, [{src}], #16",
                    "fcvtl {w:v}.4s, {a:v}.4h",
                    "fcvtl2 {x:v}.4s, {a:v}.8h",
                    "fcvtl {p:v}.2d, {w:v}.2s",
                    "fcvtl2 {q:v}.2d, {w:v}.4s",
                    "fcvtl {r:v}.2d, {x:v}.2s",
                    "fcvtl2 {s:v}.2d, {x:v}.4s",
                    "stp {p:q}, {q:q}, [{dst}], #32",
                    "stp {r:q}, {s:q}, [{dst}], #32",
                ],
                src = inout(reg) src => _,
                dst = inout(reg) dst => _,
                n = inout(reg) chunks => _,
                a = out(vreg) _,
                w = out(vreg) _,
                x = out(vreg) _,
                p = out(vreg) _,
                q = out(vreg) _,
                r = out(vreg) _,
                s = out(vreg) _,
            );
        }
    }
}

/// `chunks` chunks of 16: E5M2 -> f32 (`code << 8` is the F16 with the same value).
///
/// # Safety
/// `src` valid for reading `16 * chunks` bytes, `dst` for writing `16 * chunks` f32,
/// `chunks >= 1`.
#[inline(always)]
unsafe fn e5m2_to_f32_loop(src: *const u8, dst: *mut u8, chunks: usize) {
    // SAFETY: each iteration reads 16 bytes and writes 64 and advances both, `chunks` times,
    // in bounds by the caller's guarantee; base AdvSIMD; FPCR restored before the end.
    unsafe {
        fpcr_loop!(
            [
                "ldr {a:q}, [{src}], #16",
                "shll {h:v}.8h, {a:v}.8b, #8",
                "shll2 {g:v}.8h, {a:v}.16b, #8",
                "fcvtl {p:v}.4s, {h:v}.4h",
                "fcvtl2 {q:v}.4s, {h:v}.8h",
                "fcvtl {r:v}.4s, {g:v}.4h",
                "fcvtl2 {s:v}.4s, {g:v}.8h",
                "stp {p:q}, {q:q}, [{dst}], #32",
                "stp {r:q}, {s:q}, [{dst}], #32",
            ],
            src = inout(reg) src => _,
            dst = inout(reg) dst => _,
            n = inout(reg) chunks => _,
            a = out(vreg) _,
            h = out(vreg) _,
            g = out(vreg) _,
            p = out(vreg) _,
            q = out(vreg) _,
            r = out(vreg) _,
            s = out(vreg) _,
        );
    }
}

/// `chunks` chunks of 8: E5M2 -> f64.
///
/// # Safety
/// `src` valid for reading `8 * chunks` bytes, `dst` for writing `8 * chunks` f64,
/// `chunks >= 1`.
#[inline(always)]
unsafe fn e5m2_to_f64_loop(src: *const u8, dst: *mut u8, chunks: usize) {
    // SAFETY: each iteration reads 8 bytes and writes 64 and advances both, `chunks` times,
    // in bounds by the caller's guarantee; base AdvSIMD; FPCR restored before the end.
    unsafe {
        fpcr_loop!(
            [
                "ldr {a:d}, [{src}], #8",
                "shll {h:v}.8h, {a:v}.8b, #8",
                "fcvtl {w:v}.4s, {h:v}.4h",
                "fcvtl2 {x:v}.4s, {h:v}.8h",
                "fcvtl {p:v}.2d, {w:v}.2s",
                "fcvtl2 {q:v}.2d, {w:v}.4s",
                "fcvtl {r:v}.2d, {x:v}.2s",
                "fcvtl2 {s:v}.2d, {x:v}.4s",
                "stp {p:q}, {q:q}, [{dst}], #32",
                "stp {r:q}, {s:q}, [{dst}], #32",
            ],
            src = inout(reg) src => _,
            dst = inout(reg) dst => _,
            n = inout(reg) chunks => _,
            a = out(vreg) _,
            h = out(vreg) _,
            w = out(vreg) _,
            x = out(vreg) _,
            p = out(vreg) _,
            q = out(vreg) _,
            r = out(vreg) _,
            s = out(vreg) _,
        );
    }
}

/// F16 -> f32.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f16_to_f32(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    cover::<8>(
        len,
        // SAFETY: whole chunks inside `0..len` (F16 2 bytes, f32 4 bytes).
        |i, n| unsafe { f16_to_f32_loop(src.add(2 * i), dst.add(4 * i), n) },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { narrow_to_f32::<F16>(src, dst, len, policy) },
    );
}

/// F16 -> f64.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f16_to_f64(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    cover::<8>(
        len,
        // SAFETY: whole chunks inside `0..len` (F16 2 bytes, f64 8 bytes).
        |i, n| unsafe { half_to_f64_loop::<false>(src.add(2 * i), dst.add(8 * i), n) },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { narrow_to_f64::<F16>(src, dst, len, policy) },
    );
}

/// BF16 -> f64.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn bf16_to_f64(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    cover::<8>(
        len,
        // SAFETY: whole chunks inside `0..len` (BF16 2 bytes, f64 8 bytes).
        |i, n| unsafe { half_to_f64_loop::<true>(src.add(2 * i), dst.add(8 * i), n) },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { narrow_to_f64::<BF16>(src, dst, len, policy) },
    );
}

/// E5M2 -> f32.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn e5m2_to_f32(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    cover::<16>(
        len,
        // SAFETY: whole chunks inside `0..len` (1 byte in, f32 4 bytes out).
        |i, n| unsafe { e5m2_to_f32_loop(src.add(i), dst.add(4 * i), n) },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { narrow_to_f32::<F8E5M2>(src, dst, len, policy) },
    );
}

/// E5M2 -> f64.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn e5m2_to_f64(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    cover::<8>(
        len,
        // SAFETY: whole chunks inside `0..len` (1 byte in, f64 8 bytes out).
        |i, n| unsafe { e5m2_to_f64_loop(src.add(i), dst.add(8 * i), n) },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { narrow_to_f64::<F8E5M2>(src, dst, len, policy) },
    );
}

// ---------------------------------------------------------------------------------------
// BF16 -> f32: integer.

/// BF16 -> f32: the plain 16-bit shift.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn bf16_to_f32(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    cover::<8>(
        len,
        |start, chunks| {
            for c in 0..chunks {
                let i = start + 8 * c;
                // SAFETY: elements `i..i + 8` are inside `0..len` (`cover`): 16 source bytes
                // at `2 * i`, 32 destination bytes at `4 * i`.
                unsafe {
                    let h = vreinterpretq_u16_u8(load(src.add(2 * i)));
                    let lo = vshll_n_u16::<16>(vget_low_u16(h));
                    let hi = vshll_high_n_u16::<16>(h);
                    store(dst.add(4 * i), vreinterpretq_u8_u32(lo));
                    store(dst.add(4 * i + 16), vreinterpretq_u8_u32(hi));
                }
            }
        },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { narrow_to_f32::<BF16>(src, dst, len, policy) },
    );
}

// ---------------------------------------------------------------------------------------
// E4M3 -> f32 / f64: integer, affine formula plus a 16-entry table.

/// The top 16 bits of the wide encoding of E4M3 magnitude code `mag`, for a wide format
/// with `man_w` fraction bits in those 16 bits and exponent bias `bias_w` (f32: 7, 127;
/// f64: 4, 1023).
const fn e4m3_top16(mag: u32, man_w: u32, bias_w: i32) -> u16 {
    let exp_all_ones = ((1u32 << (15 - man_w)) - 1) << man_w;
    let bits = if mag == 0x7F {
        // The quiet NaN.
        exp_all_ones | (1 << (man_w - 1))
    } else if mag == 0 {
        0
    } else if mag < 8 {
        // Subnormal: mag * 2^-9, normal in the wide format; its leading one is bit p.
        let p = 31 - mag.leading_zeros();
        let exp = (p as i32 - 9 + bias_w) as u32;
        (exp << man_w) | ((mag - (1 << p)) << (man_w - p))
    } else {
        let exp = ((mag >> 3) as i32 - 7 + bias_w) as u32;
        (exp << man_w) | ((mag & 7) << (man_w - 3))
    };
    bits as u16
}

/// The lookup table at index `(mag + 1) & 0x7F` for indices 0..16 (mag 0x7F, 0..=14), split
/// into low and high bytes.
const fn e4m3_table(man_w: u32, bias_w: i32) -> [[u8; 16]; 2] {
    let mut t = [[0u8; 16]; 2];
    let mut idx = 0;
    while idx < 16 {
        let v = e4m3_top16((idx as u32 + 0x7F) & 0x7F, man_w, bias_w);
        t[0][idx] = v as u8;
        t[1][idx] = (v >> 8) as u8;
        idx += 1;
    }
    t
}

pub(crate) static E4M3_F32_TABLE: [[u8; 16]; 2] = e4m3_table(7, 127);
static E4M3_F64_TABLE: [[u8; 16]; 2] = e4m3_table(4, 1023);

/// Widens 16 E4M3 codes to the top 16 bits of their wide encodings (two vectors of 8).
/// `SH` is the wide format's `man_w - 3`; `table` is `e4m3_table(man_w, bias_w)` loaded.
#[inline]
#[target_feature(enable = "neon")]
pub(crate) fn e4m3_top16_x16<const SH: i32>(
    c: uint8x16_t,
    table: &[uint8x16_t; 2],
    keep: uint16x8_t,
    rebias: uint16x8_t,
) -> [uint16x8_t; 2] {
    // Sign-extending shift: the magnitude lands at bits SH..SH+7 and the sign fills the bits
    // above; `keep` (sign bit + magnitude) clears the copies between them. Adding the bias
    // difference cannot carry into the sign (largest result 0x43E0 for f32, 0x407C for f64).
    let cs = vreinterpretq_s8_u8(c);
    let f = [
        vreinterpretq_u16_s16(vshll_n_s8::<SH>(vget_low_s8(cs))),
        vreinterpretq_u16_s16(vshll_high_n_s8::<SH>(cs)),
    ]
    .map(|f| vaddq_u16(vandq_u16(f, keep), rebias));
    // The formula is wrong for zero, the subnormals (1..=7) and NaN (0x7F); index
    // (code + 1) & 0x7F maps 0x7F -> 0 and 0..=14 -> 1..=15 into the table.
    let idx = vandq_u8(vaddq_u8(c, vdupq_n_u8(1)), vdupq_n_u8(0x7F));
    let in_table = vcltq_u8(idx, vdupq_n_u8(16));
    let lo = vqtbl1q_u8(table[0], idx);
    let hi = vqtbl1q_u8(table[1], idx);
    let t = [vzip1q_u8(lo, hi), vzip2q_u8(lo, hi)].map(|x| vreinterpretq_u16_u8(x));
    // 16-bit select masks of 0x7FFF: take the magnitude from the table, keep the sign.
    let half = vandq_u8(in_table, vdupq_n_u8(0x7F));
    let sel =
        [vzip1q_u8(in_table, half), vzip2q_u8(in_table, half)].map(|x| vreinterpretq_u16_u8(x));
    [vbslq_u16(sel[0], t[0], f[0]), vbslq_u16(sel[1], t[1], f[1])]
}

/// The `keep` and `rebias` arguments of [`e4m3_top16_x16`] for f32: sign, 8 exponent bits
/// and 7 fraction bits in the top 16 bits; rebias 7 -> 127.
#[inline]
#[target_feature(enable = "neon")]
pub(crate) fn e4m3_f32_consts() -> (uint16x8_t, uint16x8_t) {
    (vdupq_n_u16(0x8000 | (0x7F << 4)), vdupq_n_u16(120 << 7))
}

/// E4M3 -> f32.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn e4m3_to_f32(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    // SAFETY: each row of the static table is 16 bytes.
    let table = E4M3_F32_TABLE.map(|row| unsafe { load(row.as_ptr()) });
    let (keep, rebias) = e4m3_f32_consts();
    cover::<16>(
        len,
        |start, chunks| {
            for c in 0..chunks {
                let i = start + 16 * c;
                // SAFETY: elements `i..i + 16` are inside `0..len` (`cover`): 16 source
                // bytes at `i`, 64 destination bytes at `4 * i`.
                unsafe {
                    let h = e4m3_top16_x16::<4>(load(src.add(i)), &table, keep, rebias);
                    let d = dst.add(4 * i);
                    store(
                        d,
                        vreinterpretq_u8_u32(vshll_n_u16::<16>(vget_low_u16(h[0]))),
                    );
                    store(
                        d.add(16),
                        vreinterpretq_u8_u32(vshll_high_n_u16::<16>(h[0])),
                    );
                    store(
                        d.add(32),
                        vreinterpretq_u8_u32(vshll_n_u16::<16>(vget_low_u16(h[1]))),
                    );
                    store(
                        d.add(48),
                        vreinterpretq_u8_u32(vshll_high_n_u16::<16>(h[1])),
                    );
                }
            }
        },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { narrow_to_f32::<F8E4M3>(src, dst, len, policy) },
    );
}

/// E4M3 -> f64.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn e4m3_to_f64(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    // SAFETY: each row of the static table is 16 bytes.
    let table = E4M3_F64_TABLE.map(|row| unsafe { load(row.as_ptr()) });
    // f64 top 16 bits: sign, 11 exponent bits, 4 fraction bits; rebias 7 -> 1023.
    let keep = vdupq_n_u16(0x8000 | (0x7F << 1));
    let rebias = vdupq_n_u16(1016 << 4);
    cover::<16>(
        len,
        |start, chunks| {
            for c in 0..chunks {
                let i = start + 16 * c;
                // SAFETY: elements `i..i + 16` are inside `0..len` (`cover`): 16 source
                // bytes at `i`, 128 destination bytes at `8 * i`.
                unsafe {
                    let h = e4m3_top16_x16::<1>(load(src.add(i)), &table, keep, rebias);
                    let d = dst.add(8 * i);
                    for (j, h) in h.into_iter().enumerate() {
                        // Two widening shifts: 16 -> 32 bits (<< 16), 32 -> 64 bits (<< 32).
                        let w = [
                            vshll_n_u16::<16>(vget_low_u16(h)),
                            vshll_high_n_u16::<16>(h),
                        ];
                        for (k, w) in w.into_iter().enumerate() {
                            let d = d.add(64 * j + 32 * k);
                            store(d, vreinterpretq_u8_u64(vshll_n_u32::<32>(vget_low_u32(w))));
                            store(d.add(16), vreinterpretq_u8_u64(vshll_high_n_u32::<32>(w)));
                        }
                    }
                }
            }
        },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { narrow_to_f64::<F8E4M3>(src, dst, len, policy) },
    );
}

// ---------------------------------------------------------------------------------------
// The table.

/// Sets this file's kernels in a NEON table (`tables.rs` composes the tables).
pub(super) const fn set(t: &mut Kernels) {
    t.set::<f32, F16>(f32_to_f16);
    t.set::<f32, BF16>(f32_to_bf16);
    t.set::<f32, F8E4M3>(f32_to_fp8::<F8E4M3>);
    t.set::<f32, F8E5M2>(f32_to_fp8::<F8E5M2>);
    t.set::<f64, F16>(f64_to_f16);
    t.set::<f64, BF16>(f64_to_bf16);
    t.set::<f64, F8E4M3>(f64_to_fp8::<F8E4M3>);
    t.set::<f64, F8E5M2>(f64_to_fp8::<F8E5M2>);
    t.set::<F16, f32>(f16_to_f32);
    t.set::<BF16, f32>(bf16_to_f32);
    t.set::<F8E4M3, f32>(e4m3_to_f32);
    t.set::<F8E5M2, f32>(e5m2_to_f32);
    t.set::<F16, f64>(f16_to_f64);
    t.set::<BF16, f64>(bf16_to_f64);
    t.set::<F8E4M3, f64>(e4m3_to_f64);
    t.set::<F8E5M2, f64>(e5m2_to_f64);
}
