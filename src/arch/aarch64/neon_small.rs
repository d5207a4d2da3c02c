//! NEON kernels for the formats added after the first four: fnuz fp8 ([`F8E4M3FNUZ`],
//! [`F8E5M2FNUZ`]), fp6 ([`F6E2M3`], [`F6E3M2`]), fp4 ([`F4E2M1`] and packed [`F4E2M1x2`])
//! and [`F8E8M0`], in both directions and from/to both f32 and f64.
//!
//! One generic kernel family, written against the [`Format`] constants (sign bit at
//! `BITS - 1`, `MAX`, `NEG_ZERO`, the NaN rule, the overflow rule), serves the five signed
//! formats; E8M0, whose rounding differs (to the nearest power of two, ties up), has its own
//! narrowing and shares the widening.
//!
//! # Floating point and FPCR
//!
//! Every algorithm here is integer AdvSIMD, which FPCR does not affect, except one
//! instruction: `FCVTXN` on the f64 narrowing paths, which runs in the `neon` module's
//! [`f64_to_f32_odd_loop`](super::neon) inside its `fpcr_loop!` block (FPCR set to 0, so
//! round-to-odd is not affected by the rounding mode and nothing is flushed under FZ, then
//! FPCR restored). No other float instruction is used, so no f32 subnormal ever meets one.
//!
//! # Narrowing f32 → fnuz, fp6, fp4
//!
//! The magnitude code is the `neon` fp8 formula (`fp8_mag_x4`, see the `neon` module docs),
//! which is generic in the bias and the fraction width: in 32-bit lanes,
//! `code = (max(e - (128 - bias), 0) << MAN) + rne(m >> s)`, normal and subnormal results
//! alike, with the integer round-to-nearest-even. Here it runs with two sentinels instead of
//! the fp8 limits: the unsigned minimum clamps every code above `MAX` (finite overflow, and
//! ±Inf whose exponent 255 gives a code far above `MAX`) to `MAX + 1`, and NaN sources
//! (`|x| > 0x7F800000`) become `MAX + 2`. `MAX <= 0x7F` for all five formats, so every
//! code and sentinel fits in a byte; 16 codes are packed into one vector of bytes, and the
//! finishing step works in byte lanes:
//!
//! * a code `<= MAX` gets the source's sign moved to bit `BITS - 1`, except that a format
//!   without negative zero (fnuz) drops the sign of a zero code (results that round to zero
//!   are `+0`);
//! * `MAX + 1` becomes the overflow code of the policy: `±MAX` under `Saturate`; under
//!   `NonSaturating`, the unsigned `0x80` for fnuz and `±MAX` for fp6/fp4 (which always
//!   saturate) — the scalar codec's `overflow_code`;
//! * `MAX + 2` becomes the NaN code of [`NanPolicy::Preserve`](crate::NanPolicy::Preserve):
//!   the unsigned `0x80` for fnuz, `±MAX` with the NaN's sign for fp6/fp4. The fnuz kernels
//!   are registered with `set`, so the dispatcher patches NaN sources for `Canonical` (the
//!   same `0x80`) and `ToMax`; fp6/fp4 give `±MAX` under every NaN policy and are
//!   registered with `set_all_policies`.
//!
//! fp6/fp4 results leave the unused high bits of the byte zero, as the codec writes them.
//!
//! # Narrowing f32 → E8M0
//!
//! In 32-bit lanes, for a positive finite non-zero `x`: `code = (x + add) >> 23` with
//! `add = 0x400000` (half an exponent step: a fraction of at least 1/2 carries into the
//! exponent, which is "ties up" to the nearer power of two) for normal `x`, and
//! `add = 0x200000` for f32 subnormals (then `code` is 1 exactly when `x >= 0x600000`, i.e.
//! `x >= 1.5 · 2^-127`, and 0 below: the codec's rule). A code of 255 (or 256) means the
//! value rounds above 2^127: an unsigned minimum with 0xFE (`Saturate`) or 0xFF
//! (`NonSaturating`). Every `x` that is zero, negative (sign set, `-0` and negative NaN
//! included), ±Inf or NaN gives 0xFF: those are exactly the `x` for which the unsigned
//! `x - 1 >= 0x7F7FFFFF`, and ORing that all-ones mask into the lane gives 0xFF. NaN under
//! `ToMax` (0xFE) is the dispatcher's patch (`set`).
//!
//! # Narrowing packed FP4
//!
//! Two vectors of 16 fp4 codes (values `32k..32k+16` and `32k+16..32k+32`) are split into
//! even and odd elements with `UZP1`/`UZP2`, and `SLI #4` puts each odd code in the high
//! nibble above its even neighbour: 16 bytes for 32 values.
//!
//! # Narrowing f64
//!
//! `FCVTXN` rounds f64 to f32 with round-to-odd (into a stack buffer of 256 f32, as `neon`
//! does for fp8), then the f32 kernel runs on the buffer. For the IEEE-like formats this
//! equals one rounding: round-to-odd to f32 keeps 24 bits, at least two more than any target
//! (at most 4), and f32's subnormal quantum 2^-149 is far below every target's smallest one
//! (2^-17 for E5M2FNUZ), so the sticky bit stands in for everything below; values beyond
//! f32's range become f32::MAX or ±Inf, which overflow every target as the f64 value does
//! (fnuz `NonSaturating` gives `0x80` for both). The sign, zero included, and NaN (quieted,
//! sign kept: FPCR.DN is 0) carry over. For E8M0 the f32 rule "fraction >= 1/2 rounds up"
//! sees the same answer after round-to-odd: truncation keeps the fraction's top bit and
//! setting the lowest bit cannot change it; on the f32 subnormals `x >= 0x600000` is
//! likewise decided by the truncated integer part; a positive f64 far below 2^-149 becomes
//! the f32 subnormal 1 (inexact, so odd), not zero, and so still gives 0x00 as the codec
//! does; above f32::MAX the result is f32::MAX (odd), which overflows as the f64 value does.
//!
//! # Widening
//!
//! Every value of these formats, in f32 and in f64, has only zeros below the top 16 bits of
//! its wide encoding (at most 4 significant bits, a sign and an 8- or 11-bit exponent; the
//! NaNs are `0xFFC00000`/`0x7FC00000`, whose f64 images are `0xFFF8…`/`0x7FF8…`). So a code
//! is turned into those 16 bits and `SHLL #16` (and `SHLL #32` for f64) completes the wide
//! value; no float instruction is involved. With `man_w`/`bias_w` the wide format's fraction
//! width within the 16 bits and bias (f32: 7, 127; f64: 4, 1023):
//!
//! * normal magnitudes: `(mag << (man_w - MAN)) + ((bias_w - bias) << man_w)`, the fields
//!   moved into place and the exponent re-biased (no carry into the sign: the largest result
//!   is below `0x8000`). `UMULL` by `2^(man_w - MAN)` does the shift and the widening to
//!   16 bits at once;
//! * magnitudes below 16 (zero, every subnormal — at most 7 of them — and E8M0's `0x00`,
//!   which is the f32 subnormal 2^-127) come from a 16-entry `TBL` built at compile time
//!   from the format's constants (two tables: low and high byte);
//! * the sign (bit `BITS - 1`, none for E8M0) is moved to bit 15;
//! * the NaN code (fnuz `0x80`, E8M0 `0xFF`) is compared for and replaced by the NaN's top
//!   16 bits, taken from the codec ([`Format::nan_to_f32`]) once per call.
//!
//! fp6/fp4 bytes are masked with `CODE_MASK` first, so their unused high bits are ignored.
//! Packed FP4 bytes give their low and high nibbles, interleaved with `ZIP1`/`ZIP2` into
//! value order.
//!
//! # Safety
//!
//! Every function here has `#[target_feature(enable = "neon")]`, and the kernels are only
//! reachable through the `neon` and `neon-bf16` tables, which the dispatcher uses only after
//! detecting NEON (the [`RawKernel`](crate::arch::RawKernel) contract), so every call to a
//! NEON function below runs on a CPU that has it.
//!
//! # Lengths
//!
//! As in `neon`: whole chunks, then one chunk overlapping the end; shorter slices go to the
//! Scalar code. For packed FP4 the chunks cover the even part of the count (so that the
//! overlapping chunk starts on a byte), and the last value of an odd count is one Scalar
//! element (its byte's high nibble written as `+0`, or ignored when widening). Nothing is
//! read or written outside the caller's `len` values.

use core::arch::aarch64::*;

use super::neon::{Fp8Consts, cover, f64_to_f32_odd_loop, f64_via_f32, fp8_mag_x4, load, store};
use crate::arch::Kernels;
use crate::arch::scalar::{
    f32_to_narrow, f32_to_packed, f64_to_packed, narrow_to_f32, narrow_to_f64, packed_to_f32,
    packed_to_f64,
};
use crate::codec::{Code, Format, NanKind, f32_bits_to_f64_bits};
use crate::options::Policy;
use crate::{F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E4M3FNUZ, F8E5M2FNUZ, F8E8M0, Overflow};

/// Loads 16 f32 (64 bytes) as four vectors of bits.
///
/// # Safety
/// `p` must be valid for reading 64 bytes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn load_x16(p: *const u8) -> [uint32x4_t; 4] {
    // SAFETY: four 16-byte loads inside the caller's 64 bytes.
    // NEON is enabled here and present on the CPU (module docs, "Safety").
    unsafe {
        [
            vreinterpretq_u32_u8(load(p)),
            vreinterpretq_u32_u8(load(p.add(16))),
            vreinterpretq_u32_u8(load(p.add(32))),
            vreinterpretq_u32_u8(load(p.add(48))),
        ]
    }
}

/// The low byte of every 32-bit lane of `v`, in lane order (16 bytes).
#[inline]
#[target_feature(enable = "neon")]
fn low_bytes(v: [uint32x4_t; 4]) -> uint8x16_t {
    let v = v.map(|v| vreinterpretq_u16_u32(v));
    vuzp1q_u8(
        vreinterpretq_u8_u16(vuzp1q_u16(v[0], v[1])),
        vreinterpretq_u8_u16(vuzp1q_u16(v[2], v[3])),
    )
}

/// The top byte of every 32-bit lane of `v`, in lane order (16 bytes).
#[inline]
#[target_feature(enable = "neon")]
fn top_bytes(v: [uint32x4_t; 4]) -> uint8x16_t {
    let v = v.map(|v| vreinterpretq_u16_u32(v));
    vuzp2q_u8(
        vreinterpretq_u8_u16(vuzp2q_u16(v[0], v[1])),
        vreinterpretq_u8_u16(vuzp2q_u16(v[2], v[3])),
    )
}

// ---------------------------------------------------------------------------------------
// f32 -> fnuz / fp6 / fp4: the fp8 magnitude formula, then a byte-lane finish.

/// Per-call constants of the narrowing to a signed small format.
#[derive(Clone, Copy)]
struct SmallConsts {
    /// The fp8 formula's constants with limit `MAX + 1` and NaN `MAX + 2` (the sentinels).
    mag: Fp8Consts,
    /// `MAX`: codes above it are sentinels.
    max: uint8x16_t,
    /// `MAX + 2`: the NaN sentinel.
    nan_sentinel: uint8x16_t,
    /// The sign bit of a code (`1 << (BITS - 1)`).
    sign_bit: uint8x16_t,
    /// Overflow result without the sign, and the sign bit if it takes the source's sign.
    ovf_code: uint8x16_t,
    ovf_sign: uint8x16_t,
    /// NaN result (under `Preserve`) without the sign, and the sign bit if it takes one.
    nan_code: uint8x16_t,
    nan_sign: uint8x16_t,
}

impl SmallConsts {
    #[inline]
    #[target_feature(enable = "neon")]
    fn new<F: Format>(overflow: Overflow) -> SmallConsts {
        let sign = F::SIGN_BIT;
        // The codec's `overflow_code`: an unsigned fixed NaN code (fnuz) under
        // NonSaturating, else MAX or OVERFLOW_NONSAT with the sign.
        let (ovf_code, ovf_sign) = match overflow {
            Overflow::Saturate => (F::MAX, sign),
            Overflow::NonSaturating => match F::NAN {
                NanKind::Fixed {
                    code,
                    signed: false,
                } if !F::HAS_INF => (code, 0),
                _ => (F::OVERFLOW_NONSAT, sign),
            },
        };
        // The codec's `nan_code` under Preserve (payload-free for these formats).
        let (nan_code, nan_sign) = match F::NAN {
            NanKind::Fixed { code, signed } => (code, if signed { sign } else { 0 }),
            NanKind::None => (F::MAX, sign),
            NanKind::Ieee => unreachable!(),
        };
        SmallConsts {
            mag: Fp8Consts {
                limit: vdupq_n_u32(F::MAX + 1),
                nan: vdupq_n_u32(F::MAX + 2),
                ..Fp8Consts::new::<F>(overflow)
            },
            max: vdupq_n_u8(F::MAX as u8),
            nan_sentinel: vdupq_n_u8(F::MAX as u8 + 2),
            sign_bit: vdupq_n_u8(sign as u8),
            ovf_code: vdupq_n_u8(ovf_code as u8),
            ovf_sign: vdupq_n_u8(ovf_sign as u8),
            nan_code: vdupq_n_u8(nan_code as u8),
            nan_sign: vdupq_n_u8(nan_sign as u8),
        }
    }
}

/// Narrows 16 f32 (bits) to 16 codes of the signed small format `F` (module docs).
#[inline]
#[target_feature(enable = "neon")]
fn small_x16<F: Format>(x: [uint32x4_t; 4], k: &SmallConsts) -> uint8x16_t {
    // Magnitude codes or sentinels, all below 0x82: the low byte of each lane.
    let code = low_bytes(x.map(|x| fp8_mag_x4(x, &k.mag)));
    // All ones where the source's sign bit (bit 7 of its top byte) is set.
    let neg = vcltzq_s8(vreinterpretq_s8_u8(top_bytes(x)));
    let special = vcgtq_u8(code, k.max);
    let is_nan = vceqq_u8(code, k.nan_sentinel);
    // The sign a finite result may take: the sign bit, except for a zero code of a format
    // without -0 (VTST gives all ones where the code is non-zero).
    let finite_sign = if F::NEG_ZERO {
        k.sign_bit
    } else {
        vandq_u8(vtstq_u8(code, code), k.sign_bit)
    };
    let mag = vbslq_u8(special, vbslq_u8(is_nan, k.nan_code, k.ovf_code), code);
    let sign = vbslq_u8(
        special,
        vbslq_u8(is_nan, k.nan_sign, k.ovf_sign),
        finite_sign,
    );
    vorrq_u8(mag, vandq_u8(neg, sign))
}

/// f32 -> a signed small format (fnuz, fp6, fp4) with integer AdvSIMD.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f32_to_small<F: Format + Code>(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    let k = SmallConsts::new::<F>(policy.overflow);
    cover::<16>(
        len,
        |start, chunks| {
            for c in 0..chunks {
                let i = start + 16 * c;
                // SAFETY: elements `i..i + 16` are inside `0..len` (`cover`): 64 source
                // bytes at `4 * i`, 16 destination bytes at `i`.
                // NEON is enabled here and present on the CPU (module docs, "Safety").
                unsafe { store(dst.add(i), small_x16::<F>(load_x16(src.add(4 * i)), &k)) }
            }
        },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { f32_to_narrow::<F>(src, dst, len, policy) },
    );
}

/// f64 -> a signed small format: round to odd into f32, then [`f32_to_small`].
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f64_to_small<F: Format + Code>(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    // FCVTXN (inside `f64_via_f32`, under FPCR = 0) rounds to odd, which is exact enough:
    // a second rounding to at most 4 bits gives the single rounding (module docs).
    // SAFETY: the caller's guarantee; `f32_to_small` is base AdvSIMD.
    // NEON is enabled here and present on the CPU (module docs, "Safety").
    unsafe {
        f64_via_f32::<F>(src, dst, len, policy, |s, d, n, o| {
            f32_to_small::<F>(s, d, n, o)
        });
    }
}

// ---------------------------------------------------------------------------------------
// f32 -> packed FP4.

/// Narrows 32 f32 at `src` to 16 packed FP4 bytes at `dst`.
///
/// # Safety
/// `src` valid for reading 128 bytes, `dst` for writing 16.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn packed_x32(src: *const u8, dst: *mut u8, k: &SmallConsts) {
    // SAFETY: two 64-byte loads inside the caller's 128 bytes.
    // NEON is enabled here and present on the CPU (module docs, "Safety").
    let (a, b) = unsafe {
        (
            small_x16::<F4E2M1>(load_x16(src), k),
            small_x16::<F4E2M1>(load_x16(src.add(64)), k),
        )
    };
    // Even values (0, 2, ..., 30) and odd ones (1, 3, ..., 31), in order.
    let even = vuzp1q_u8(a, b);
    let odd = vuzp2q_u8(a, b);
    // Shift the odd code into the high nibble, keeping the even code (< 16) below it.
    let out = vsliq_n_u8::<4>(even, odd);
    // SAFETY: forwarded from the caller.
    // NEON is enabled here and present on the CPU (module docs, "Safety").
    unsafe { store(dst, out) }
}

/// f32 -> packed FP4 with integer AdvSIMD.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f32_to_fp4x2(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    let k = SmallConsts::new::<F4E2M1>(policy.overflow);
    // The even part of the count: its chunks, the overlapping one included, start on even
    // values, that is on whole bytes.
    let even = len & !1;
    cover::<32>(
        even,
        |start, chunks| {
            for c in 0..chunks {
                let i = start + 32 * c;
                // SAFETY: values `i..i + 32` are inside `0..even` (`cover`) and `i` is even:
                // 128 source bytes at `4 * i`, bytes `i / 2..i / 2 + 16` of the destination,
                // inside its `len.div_ceil(2)` bytes.
                // NEON is enabled here and present on the CPU (module docs, "Safety").
                unsafe { packed_x32(src.add(4 * i), dst.add(i / 2), &k) }
            }
        },
        // SAFETY: the caller's guarantee for the first `even` values (`even / 2` bytes).
        || unsafe { f32_to_packed(src, dst, even, policy) },
    );
    if even < len {
        // SAFETY: value `even = len - 1` is readable and byte `even / 2` is the last of the
        // caller's `len.div_ceil(2)` bytes; the Scalar code writes it whole (high nibble +0).
        unsafe { f32_to_packed(src.add(4 * even), dst.add(even / 2), 1, policy) }
    }
}

/// f64 -> packed FP4: round to odd into an f32 buffer, then [`f32_to_fp4x2`].
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f64_to_fp4x2(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    /// Values per block (even, and a multiple of 4 for the conversion loop).
    const BLOCK: usize = 256;
    let whole = len & !3;
    let mut buf = core::mem::MaybeUninit::<[u32; BLOCK]>::uninit();
    let buf = buf.as_mut_ptr().cast::<u8>();
    let mut i = 0;
    while i < whole {
        // A multiple of 4, at least 4, at most BLOCK.
        let n = (whole - i).min(BLOCK);
        // FCVTXN runs with FPCR = 0 (`fpcr_loop!`): round to odd, no flush, whatever the
        // caller's FPCR; its f32 results then round once more to FP4 exactly (module docs).
        // SAFETY: values `i..i + n` are inside `0..len` and `i` is even, so their bytes are
        // `i / 2..i / 2 + n / 2`, inside the caller's `len.div_ceil(2)`; the buffer holds
        // BLOCK >= n f32, and `f32_to_fp4x2` reads the `n` the loop has just written.
        // NEON is enabled here and present on the CPU (module docs, "Safety").
        unsafe {
            f64_to_f32_odd_loop(src.add(8 * i), buf, n / 4);
            f32_to_fp4x2(buf, dst.add(i / 2), n, policy);
        }
        i += n;
    }
    if whole < len {
        // SAFETY: values `whole..len` (`whole` even: from byte `whole / 2` on), inside the
        // caller's ranges.
        unsafe { f64_to_packed(src.add(8 * whole), dst.add(whole / 2), len - whole, policy) }
    }
}

// ---------------------------------------------------------------------------------------
// f32 / f64 -> E8M0.

/// Narrows 4 f32 (bits) to E8M0 codes in 32-bit lanes (module docs). `limit` is 0xFE
/// (`Saturate`) or 0xFF (`NonSaturating`).
#[inline]
#[target_feature(enable = "neon")]
fn e8m0_x4(x: uint32x4_t, limit: uint32x4_t) -> uint32x4_t {
    // All ones for f32 subnormals (and +0, which is invalid anyway).
    let sub = vcltq_u32(x, vdupq_n_u32(0x0080_0000));
    // 0x400000 for normal x, 0x200000 for subnormal x.
    let add = vsubq_u32(
        vdupq_n_u32(0x0040_0000),
        vandq_u32(sub, vdupq_n_u32(0x0020_0000)),
    );
    // Valid x are below 0x7F800000, so the sum does not wrap; invalid lanes are overwritten.
    let code = vminq_u32(vshrq_n_u32::<23>(vaddq_u32(x, add)), limit);
    // Zero, negative, ±Inf, NaN: x - 1 (wrapping) >= 0x7F7FFFFF.
    let invalid = vcgeq_u32(vsubq_u32(x, vdupq_n_u32(1)), vdupq_n_u32(0x7F7F_FFFF));
    vorrq_u32(code, invalid)
}

/// f32 -> E8M0 with integer AdvSIMD.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f32_to_e8m0(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    let limit = vdupq_n_u32(match policy.overflow {
        Overflow::Saturate => 0xFE,
        Overflow::NonSaturating => 0xFF,
    });
    cover::<16>(
        len,
        |start, chunks| {
            for c in 0..chunks {
                let i = start + 16 * c;
                // SAFETY: elements `i..i + 16` are inside `0..len` (`cover`): 64 source
                // bytes at `4 * i`, 16 destination bytes at `i`.
                // NEON is enabled here and present on the CPU (module docs, "Safety").
                unsafe {
                    let x = load_x16(src.add(4 * i));
                    store(dst.add(i), low_bytes(x.map(|x| e8m0_x4(x, limit))));
                }
            }
        },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { f32_to_narrow::<F8E8M0>(src, dst, len, policy) },
    );
}

/// f64 -> E8M0: round to odd into f32, then [`f32_to_e8m0`].
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn f64_to_e8m0(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    // FCVTXN (inside `f64_via_f32`, under FPCR = 0) keeps the top fraction bit and makes
    // tiny positive values the nonzero f32 subnormal 1, so E8M0's rule sees the same answer
    // (module docs).
    // SAFETY: the caller's guarantee; `f32_to_e8m0` is base AdvSIMD.
    // NEON is enabled here and present on the CPU (module docs, "Safety").
    unsafe {
        f64_via_f32::<F8E8M0>(src, dst, len, policy, |s, d, n, o| f32_to_e8m0(s, d, n, o));
    }
}

// ---------------------------------------------------------------------------------------
// Widening: the top 16 bits of the wide encoding, then SHLL.

/// The top 16 bits of the wide encoding of the positive value `m · 2^k` (`m >= 1`, at most
/// `man_w + 1` significant bits), for a wide format with `man_w` fraction bits in those 16
/// bits and bias `bias_w` (f32: 7, 127; f64: 4, 1023).
const fn wide_top16(m: u32, k: i32, man_w: u32, bias_w: i32) -> u16 {
    // Leading one of m at bit p: the value is 1.f · 2^(p + k).
    let p = 31 - m.leading_zeros();
    let biased = p as i32 + k + bias_w;
    let bits = if biased >= 1 {
        ((biased as u32) << man_w) | ((m - (1 << p)) << (man_w - p))
    } else {
        // A wide subnormal (only E8M0's 2^-127 in f32): m · 2^(k - (1 - bias_w - man_w)).
        m << (k - (1 - bias_w - man_w as i32)) as u32
    };
    bits as u16
}

/// The top 16 bits of the wide encoding of magnitude code `mag` of format `F` (a finite
/// code; the NaN code is handled separately).
const fn top16<F: Format>(mag: u32, man_w: u32, bias_w: i32) -> u16 {
    let exp = mag >> F::MAN_BITS;
    let frac = mag & ((1 << F::MAN_BITS) - 1);
    if F::MAN_BITS == 0 {
        // E8M0: every code is the power 2^(code - bias), code 0 included.
        wide_top16(1, exp as i32 - F::BIAS, man_w, bias_w)
    } else if exp == 0 {
        if frac == 0 {
            0
        } else {
            // Subnormal: frac · 2^(1 - bias - MAN).
            wide_top16(frac, 1 - F::BIAS - F::MAN_BITS as i32, man_w, bias_w)
        }
    } else {
        // Normal: 1.frac · 2^(exp - bias).
        wide_top16(
            frac | (1 << F::MAN_BITS),
            exp as i32 - F::BIAS - F::MAN_BITS as i32,
            man_w,
            bias_w,
        )
    }
}

/// The lookup table of [`top16`] for magnitudes 0..16, split into low and high bytes
/// (entries beyond the format's largest magnitude are never selected).
const fn top16_table<F: Format>(man_w: u32, bias_w: i32) -> [[u8; 16]; 2] {
    let mut t = [[0u8; 16]; 2];
    let mut mag = 0;
    while mag < 16 {
        if mag <= F::MAG_MASK {
            let v = top16::<F>(mag, man_w, bias_w);
            t[0][mag as usize] = v as u8;
            t[1][mag as usize] = (v >> 8) as u8;
        }
        mag += 1;
    }
    t
}

/// Per-call constants of the widening of format `F`.
#[derive(Clone, Copy)]
struct WidenConsts {
    /// `CODE_MASK`: the bits a code uses.
    code_mask: uint8x16_t,
    /// `MAG_MASK`: the magnitude bits.
    mag_mask: uint8x16_t,
    /// `SIGN_BIT` (0 for E8M0).
    sign_bit: uint8x16_t,
    /// `2^(man_w - MAN)`: the multiplier that shifts a magnitude into place.
    pow: uint8x16_t,
    /// `(bias_w - bias) << man_w`: the exponent re-bias.
    rebias: uint16x8_t,
    /// [`top16_table`], low and high bytes.
    table: [uint8x16_t; 2],
    /// The NaN code (meaningful only for a format with one).
    nan_code: uint8x16_t,
    /// The NaN's top 16 bits.
    nan_top: uint16x8_t,
}

impl WidenConsts {
    /// Constants for widening `F` to f32 (`F64` false: `man_w` 7, bias 127) or to f64
    /// (`man_w` 4, bias 1023).
    #[inline]
    #[target_feature(enable = "neon")]
    fn new<F: Format, const F64: bool>() -> WidenConsts {
        let (man_w, bias_w) = if F64 { (4, 1023) } else { (7, 127) };
        let table: [[u8; 16]; 2] = if F64 {
            const { top16_table::<F>(4, 1023) }
        } else {
            const { top16_table::<F>(7, 127) }
        };
        // SAFETY: each row of the table is 16 bytes.
        // NEON is enabled here and present on the CPU (module docs, "Safety").
        let table = table.map(|row| unsafe { load(row.as_ptr()) });
        let (nan_code, nan_top) = match F::NAN {
            NanKind::Fixed { code, .. } => {
                let w = F::nan_to_f32(code);
                let top = if F64 {
                    (f32_bits_to_f64_bits(w) >> 48) as u16
                } else {
                    (w >> 16) as u16
                };
                (code, top)
            }
            NanKind::None | NanKind::Ieee => (0, 0),
        };
        WidenConsts {
            code_mask: vdupq_n_u8(F::CODE_MASK as u8),
            mag_mask: vdupq_n_u8(F::MAG_MASK as u8),
            sign_bit: vdupq_n_u8(F::SIGN_BIT as u8),
            pow: vdupq_n_u8(1 << (man_w - F::MAN_BITS)),
            rebias: vdupq_n_u16(((bias_w - F::BIAS) as u16) << man_w),
            table,
            nan_code: vdupq_n_u8(nan_code as u8),
            nan_top: vdupq_n_u16(nan_top),
        }
    }
}

/// Pairs of bytes `(lo[i], hi[i])` as 16-bit lanes: lanes 0..8 and 8..16.
#[inline]
#[target_feature(enable = "neon")]
fn zip16(lo: uint8x16_t, hi: uint8x16_t) -> [uint16x8_t; 2] {
    [
        vreinterpretq_u16_u8(vzip1q_u8(lo, hi)),
        vreinterpretq_u16_u8(vzip2q_u8(lo, hi)),
    ]
}

/// Widens 16 codes of `F` to the top 16 bits of their wide encodings (module docs).
#[inline]
#[target_feature(enable = "neon")]
fn top16_x16<F: Format>(c: uint8x16_t, k: &WidenConsts) -> [uint16x8_t; 2] {
    // Ignore the unused high bits (fp6, fp4).
    let c = vandq_u8(c, k.code_mask);
    let mag = vandq_u8(c, k.mag_mask);
    let lo = vqtbl1q_u8(k.table[0], mag);
    let hi = vqtbl1q_u8(k.table[1], mag);
    let tab = zip16(lo, hi);
    // Sign: 0x80 in the high byte (bit 15) where the code's sign bit is set.
    let s8 = vandq_u8(vtstq_u8(c, k.sign_bit), vdupq_n_u8(0x80));
    let sign = zip16(vdupq_n_u8(0), s8);
    let r = if F::MAG_MASK < 16 {
        // Every magnitude is in the table (fp4).
        [vorrq_u16(tab[0], sign[0]), vorrq_u16(tab[1], sign[1])]
    } else {
        // Normal magnitudes: UMULL by 2^(man_w - MAN) is the shift into place, widened to
        // 16 bits; plus the re-bias (no carry into bit 15, module docs).
        let aff = [
            vmull_u8(vget_low_u8(mag), vget_low_u8(k.pow)),
            vmull_high_u8(mag, k.pow),
        ]
        .map(|v| vaddq_u16(v, k.rebias));
        // 16-bit all-ones masks where the magnitude is in the table.
        let in_t = vcltq_u8(mag, vdupq_n_u8(16));
        let sel = zip16(in_t, in_t);
        [
            vorrq_u16(vbslq_u16(sel[0], tab[0], aff[0]), sign[0]),
            vorrq_u16(vbslq_u16(sel[1], tab[1], aff[1]), sign[1]),
        ]
    };
    match F::NAN {
        NanKind::Fixed { .. } => {
            let n8 = vceqq_u8(c, k.nan_code);
            let n = zip16(n8, n8);
            [
                vbslq_u16(n[0], k.nan_top, r[0]),
                vbslq_u16(n[1], k.nan_top, r[1]),
            ]
        }
        NanKind::None | NanKind::Ieee => r,
    }
}

/// Stores 16 wide values given by their top 16 bits as f32 (64 bytes).
///
/// # Safety
/// `d` must be valid for writing 64 bytes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn store_f32_x16(d: *mut u8, h: [uint16x8_t; 2]) {
    // SAFETY: four 16-byte stores inside the caller's 64 bytes. SHLL #16 puts the 16 bits on
    // top of zero low bits.
    // NEON is enabled here and present on the CPU (module docs, "Safety").
    unsafe {
        for (j, h) in h.into_iter().enumerate() {
            store(
                d.add(32 * j),
                vreinterpretq_u8_u32(vshll_n_u16::<16>(vget_low_u16(h))),
            );
            store(
                d.add(32 * j + 16),
                vreinterpretq_u8_u32(vshll_high_n_u16::<16>(h)),
            );
        }
    }
}

/// Stores 16 wide values given by their top 16 bits as f64 (128 bytes).
///
/// # Safety
/// `d` must be valid for writing 128 bytes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn store_f64_x16(d: *mut u8, h: [uint16x8_t; 2]) {
    // SAFETY: eight 16-byte stores inside the caller's 128 bytes. Two widening shifts:
    // 16 -> 32 bits (<< 16), 32 -> 64 bits (<< 32).
    unsafe {
        for (j, h) in h.into_iter().enumerate() {
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

/// A small format -> f32 (`F64` false) or f64 (`F64` true) with integer AdvSIMD.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn small_to_wide<F: Format + Code, const F64: bool>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    policy: Policy,
) {
    let k = WidenConsts::new::<F, F64>();
    cover::<16>(
        len,
        |start, chunks| {
            for c in 0..chunks {
                let i = start + 16 * c;
                // SAFETY: elements `i..i + 16` are inside `0..len` (`cover`): 16 source
                // bytes at `i`, 64 (f32) or 128 (f64) destination bytes at `4 * i` / `8 * i`.
                // NEON is enabled here and present on the CPU (module docs, "Safety").
                unsafe {
                    let h = top16_x16::<F>(load(src.add(i)), &k);
                    if F64 {
                        store_f64_x16(dst.add(8 * i), h);
                    } else {
                        store_f32_x16(dst.add(4 * i), h);
                    }
                }
            }
        },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe {
            if F64 {
                narrow_to_f64::<F>(src, dst, len, policy)
            } else {
                narrow_to_f32::<F>(src, dst, len, policy)
            }
        },
    );
}

/// Packed FP4 -> f32 (`F64` false) or f64 (`F64` true) with integer AdvSIMD.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
#[target_feature(enable = "neon")]
unsafe fn fp4x2_to_wide<const F64: bool>(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    let k = WidenConsts::new::<F4E2M1, F64>();
    let size = if F64 { 8 } else { 4 };
    // The even part of the count, so that every chunk starts on a whole byte.
    let even = len & !1;
    cover::<32>(
        even,
        |start, chunks| {
            for c in 0..chunks {
                let i = start + 32 * c;
                // SAFETY: values `i..i + 32` are inside `0..even` (`cover`) and `i` is even:
                // source bytes `i / 2..i / 2 + 16`, inside the caller's `len.div_ceil(2)`,
                // and `32 * size` destination bytes at `size * i`.
                // NEON is enabled here and present on the CPU (module docs, "Safety").
                unsafe {
                    let b = load(src.add(i / 2));
                    // Value 2j is the low nibble of byte j, value 2j + 1 its high nibble
                    // (`top16_x16` masks the low one with CODE_MASK).
                    let (lo, hi) = (b, vshrq_n_u8::<4>(b));
                    let first = top16_x16::<F4E2M1>(vzip1q_u8(lo, hi), &k);
                    let second = top16_x16::<F4E2M1>(vzip2q_u8(lo, hi), &k);
                    let d = dst.add(size * i);
                    if F64 {
                        store_f64_x16(d, first);
                        store_f64_x16(d.add(128), second);
                    } else {
                        store_f32_x16(d, first);
                        store_f32_x16(d.add(64), second);
                    }
                }
            }
        },
        // SAFETY: the caller's guarantee for the first `even` values.
        || unsafe {
            if F64 {
                packed_to_f64(src, dst, even, policy)
            } else {
                packed_to_f32(src, dst, even, policy)
            }
        },
    );
    if even < len {
        // SAFETY: value `even = len - 1` is the low nibble of byte `even / 2`, the last of
        // the caller's `len.div_ceil(2)` bytes, and destination element `even` is writable.
        unsafe {
            if F64 {
                packed_to_f64(src.add(even / 2), dst.add(size * even), 1, policy)
            } else {
                packed_to_f32(src.add(even / 2), dst.add(size * even), 1, policy)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The table.

/// Puts this module's kernels into the `neon` table `t` (the `neon-bf16` table starts from
/// it).
pub(super) const fn set(t: &mut Kernels) {
    // fnuz: NaN gives 0x80 under Preserve and Canonical, ±MAX under ToMax (patched).
    t.set::<f32, F8E4M3FNUZ>(f32_to_small::<F8E4M3FNUZ>);
    t.set::<f32, F8E5M2FNUZ>(f32_to_small::<F8E5M2FNUZ>);
    t.set::<f64, F8E4M3FNUZ>(f64_to_small::<F8E4M3FNUZ>);
    t.set::<f64, F8E5M2FNUZ>(f64_to_small::<F8E5M2FNUZ>);
    // fp6/fp4: ±MAX for NaN under every policy.
    t.set_all_policies::<f32, F6E2M3>(f32_to_small::<F6E2M3>);
    t.set_all_policies::<f32, F6E3M2>(f32_to_small::<F6E3M2>);
    t.set_all_policies::<f32, F4E2M1>(f32_to_small::<F4E2M1>);
    t.set_all_policies::<f64, F6E2M3>(f64_to_small::<F6E2M3>);
    t.set_all_policies::<f64, F6E3M2>(f64_to_small::<F6E3M2>);
    t.set_all_policies::<f64, F4E2M1>(f64_to_small::<F4E2M1>);
    // Packed: every policy in the kernel (the same ±MAX for NaN).
    t.set_all_policies::<f32, F4E2M1x2>(f32_to_fp4x2);
    t.set_all_policies::<f64, F4E2M1x2>(f64_to_fp4x2);
    // E8M0: NaN gives 0xFF, or 0xFE under ToMax (patched).
    t.set::<f32, F8E8M0>(f32_to_e8m0);
    t.set::<f64, F8E8M0>(f64_to_e8m0);
    // Widening: no policy applies.
    t.set_all_policies::<F8E4M3FNUZ, f32>(small_to_wide::<F8E4M3FNUZ, false>);
    t.set_all_policies::<F8E5M2FNUZ, f32>(small_to_wide::<F8E5M2FNUZ, false>);
    t.set_all_policies::<F6E2M3, f32>(small_to_wide::<F6E2M3, false>);
    t.set_all_policies::<F6E3M2, f32>(small_to_wide::<F6E3M2, false>);
    t.set_all_policies::<F4E2M1, f32>(small_to_wide::<F4E2M1, false>);
    t.set_all_policies::<F8E8M0, f32>(small_to_wide::<F8E8M0, false>);
    t.set_all_policies::<F4E2M1x2, f32>(fp4x2_to_wide::<false>);
    t.set_all_policies::<F8E4M3FNUZ, f64>(small_to_wide::<F8E4M3FNUZ, true>);
    t.set_all_policies::<F8E5M2FNUZ, f64>(small_to_wide::<F8E5M2FNUZ, true>);
    t.set_all_policies::<F6E2M3, f64>(small_to_wide::<F6E2M3, true>);
    t.set_all_policies::<F6E3M2, f64>(small_to_wide::<F6E3M2, true>);
    t.set_all_policies::<F4E2M1, f64>(small_to_wide::<F4E2M1, true>);
    t.set_all_policies::<F8E8M0, f64>(small_to_wide::<F8E8M0, true>);
    t.set_all_policies::<F4E2M1x2, f64>(fp4x2_to_wide::<true>);
}
