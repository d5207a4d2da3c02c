//! NEON tier (little-endian aarch64, base ARMv8.0 AdvSIMD): 4 × f32 in a `float32x4_t`
//! for F16/BF16, 8 × f32 in a `float32x4x2_t` (elements 0–3 in `.0`, 4–7 in `.1`) for fp8.
//!
//! Layouts: F16 and BF16 codes are the four 16-bit lanes of a `uint16x4_t`, F8E4M3 and
//! F8E5M2 codes the eight bytes of a `uint8x8_t`, element 0 in lane 0.
//!
//! FPCR: the BF16 and fp8 narrowings and the BF16 and E4M3 widenings are integer AdvSIMD,
//! which FPCR does not affect. [`f32x4_to_f16`], [`f16x4_to_f32`] and [`e5m2x8_to_f32`] run
//! `FCVTN`/`FCVTL` inside an `asm!` block that sets FPCR to 0 (when it is not already) and
//! restores it: the same bits under every FPCR, for an `MRS FPCR` and two branches per call.
//!
//! # Safety
//!
//! Every function requires a CPU with NEON (every aarch64 core that runs an OS has it; the
//! `aarch64-unknown-none-softfloat` target is the exception); see the [module docs](super),
//! [`is_available`], and `NeonConvert` (feature `pulp`) for safe wrappers.

use core::arch::aarch64::*;

use crate::arch::aarch64::neon as k;
use crate::{F8E4M3, F8E5M2, Overflow};

/// Whether this CPU has NEON: with `std`, detected at run time; without it, whether the build
/// enables it.
#[inline]
pub fn is_available() -> bool {
    crate::arch::aarch64::neon_available()
}

/// 4 × f32 → 4 × F16 codes, rounded to nearest even; overflow and ±Inf per `overflow`
/// (±65504 or ±Inf); NaN keeps its sign and top 10 payload bits, quiet bit set.
///
/// # Safety
/// The CPU must have NEON (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::aarch64::*;
/// use vcvt::{vector::neon, Overflow};
///
/// if std::arch::is_aarch64_feature_detected!("neon") {
///     let x = [1.0f32, -2.5, 65520.0, 1.0e-7];
///     // SAFETY: the CPU has NEON (checked above); 16 bytes are read.
///     let h = unsafe { neon::f32x4_to_f16(vld1q_f32(x.as_ptr()), Overflow::Saturate) };
///     // SAFETY: both types are 8 bytes of plain data.
///     let h: [u16; 4] = unsafe { core::mem::transmute(h) };
///     assert_eq!(h, [0x3C00, 0xC100, 0x7BFF, 0x0002]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x4_to_f16(x: float32x4_t, overflow: Overflow) -> uint16x4_t {
    // SAFETY: no memory is accessed; the CPU has NEON (the caller's guarantee).
    unsafe { k::f16_from_f32_x4(x, vdup_n_u16(k::sat_key(overflow, 0xF800))) }
}

/// 4 × f32 → 4 × BF16 codes, rounded to nearest even; overflow and ±Inf per `overflow`;
/// NaN keeps its sign and top 7 payload bits, quiet bit set.
///
/// # Safety
/// The CPU must have NEON (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::aarch64::*;
/// use vcvt::{vector::neon, Overflow};
///
/// if std::arch::is_aarch64_feature_detected!("neon") {
///     let x = [1.0f32, 1.01171875, f32::MAX, f32::NAN];
///     // SAFETY: the CPU has NEON (checked above); 16 bytes are read.
///     let h = unsafe { neon::f32x4_to_bf16(vld1q_f32(x.as_ptr()), Overflow::NonSaturating) };
///     // SAFETY: both types are 8 bytes of plain data.
///     let h: [u16; 4] = unsafe { core::mem::transmute(h) };
///     assert_eq!(h, [0x3F80, 0x3F82, 0x7F80, 0x7FC0]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x4_to_bf16(x: float32x4_t, overflow: Overflow) -> uint16x4_t {
    // SAFETY: no memory is accessed; the CPU has NEON (the caller's guarantee). The 8-value
    // step converts the 4 values twice; the low half is kept.
    unsafe {
        let x = vreinterpretq_u32_f32(x);
        let key = vdupq_n_u16(k::sat_key(overflow, 0xFF00));
        vget_low_u16(k::bf16_x8(x, x, key))
    }
}

/// The fp8 narrowing step of `F` on 8 values.
///
/// # Safety
/// The CPU has NEON.
#[inline(always)]
unsafe fn fp8<F: crate::codec::Format>(x: float32x4x2_t, overflow: Overflow) -> uint8x8_t {
    // SAFETY: no memory is accessed; the CPU has NEON (the caller's guarantee). The
    // 16-value step converts the 8 values twice (the duplicate work is the same expressions,
    // which the compiler merges); the low half is kept.
    unsafe {
        let c = k::Fp8Consts::new::<F>(overflow);
        let (a, b) = (vreinterpretq_u32_f32(x.0), vreinterpretq_u32_f32(x.1));
        vget_low_u8(k::fp8_codes_x16([a, b, a, b], &c))
    }
}

/// 8 × f32 → 8 × F8E4M3 codes, rounded to nearest even; overflow and ±Inf per `overflow`
/// (±448 with `Saturate`, the vcvt default for fp8; else NaN `0x7F | sign`); NaN →
/// `0x7F | sign`.
///
/// # Safety
/// The CPU must have NEON (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::aarch64::*;
/// use vcvt::{vector::neon, Overflow};
///
/// if std::arch::is_aarch64_feature_detected!("neon") {
///     let x = [1.0f32, -0.5, 464.0, 500.0, 0.001953125, 0.0, -1e-9, f32::NAN];
///     // SAFETY: the CPU has NEON (checked above); 32 bytes are read.
///     let q = unsafe { neon::f32x8_to_e4m3(vld1q_f32_x2(x.as_ptr()), Overflow::Saturate) };
///     // SAFETY: both types are 8 bytes of plain data.
///     let q: [u8; 8] = unsafe { core::mem::transmute(q) };
///     assert_eq!(q, [0x38, 0xB0, 0x7E, 0x7E, 0x01, 0x00, 0x80, 0x7F]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x8_to_e4m3(x: float32x4x2_t, overflow: Overflow) -> uint8x8_t {
    // SAFETY: the CPU has NEON (the caller's guarantee).
    unsafe { fp8::<F8E4M3>(x, overflow) }
}

/// 8 × f32 → 8 × F8E5M2 codes, rounded to nearest even; overflow and ±Inf per `overflow`
/// (±57344 with `Saturate`, the vcvt default for fp8; else ±Inf); NaN → `0x7E | sign`.
///
/// # Safety
/// The CPU must have NEON (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::aarch64::*;
/// use vcvt::{vector::neon, Overflow};
///
/// if std::arch::is_aarch64_feature_detected!("neon") {
///     let x = [1.0f32, -1.25, 1e6, f32::INFINITY, 0.0, 3.0, 1.125, f32::NAN];
///     // SAFETY: the CPU has NEON (checked above); 32 bytes are read.
///     let q = unsafe { neon::f32x8_to_e5m2(vld1q_f32_x2(x.as_ptr()), Overflow::NonSaturating) };
///     // SAFETY: both types are 8 bytes of plain data.
///     let q: [u8; 8] = unsafe { core::mem::transmute(q) };
///     assert_eq!(q, [0x3C, 0xBD, 0x7C, 0x7C, 0x00, 0x42, 0x3C, 0x7E]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x8_to_e5m2(x: float32x4x2_t, overflow: Overflow) -> uint8x8_t {
    // SAFETY: the CPU has NEON (the caller's guarantee).
    unsafe { fp8::<F8E5M2>(x, overflow) }
}

/// 4 × F16 codes → 4 × f32, exact; a NaN keeps its payload, quiet bit set.
///
/// # Safety
/// The CPU must have NEON (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::aarch64::*;
/// use vcvt::vector::neon;
///
/// if std::arch::is_aarch64_feature_detected!("neon") {
///     let h = [0x3C00u16, 0xC100, 0x7BFF, 0x0001];
///     // SAFETY: the CPU has NEON (checked above); 8 bytes are read.
///     let f = unsafe { neon::f16x4_to_f32(vld1_u16(h.as_ptr())) };
///     // SAFETY: both types are 16 bytes of plain data.
///     let f: [f32; 4] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f, [1.0, -2.5, 65504.0, 5.960464477539063e-8]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f16x4_to_f32(h: uint16x4_t) -> float32x4_t {
    // SAFETY: no memory is accessed; the CPU has NEON (the caller's guarantee).
    unsafe { k::f32_from_f16_x4(h) }
}

/// 4 × BF16 codes → 4 × f32: the 16-bit shift, exact, every bit kept.
///
/// # Safety
/// The CPU must have NEON (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::aarch64::*;
/// use vcvt::vector::neon;
///
/// if std::arch::is_aarch64_feature_detected!("neon") {
///     let h = [0x3F80u16, 0xC040, 0x7F80, 0x0001];
///     // SAFETY: the CPU has NEON (checked above); 8 bytes are read.
///     let f = unsafe { neon::bf16x4_to_f32(vld1_u16(h.as_ptr())) };
///     // SAFETY: both types are 16 bytes of plain data.
///     let f: [u32; 4] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f, h.map(|c| (c as u32) << 16));
/// }
/// ```
#[inline(always)]
pub unsafe fn bf16x4_to_f32(h: uint16x4_t) -> float32x4_t {
    // SAFETY: no memory is accessed; the CPU has NEON (the caller's guarantee).
    unsafe { vreinterpretq_f32_u32(vshll_n_u16::<16>(h)) }
}

/// 8 × F8E4M3 codes → 8 × f32, exact; NaN codes give `0x7FC00000 | sign`.
///
/// # Safety
/// The CPU must have NEON (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::aarch64::*;
/// use vcvt::vector::neon;
///
/// if std::arch::is_aarch64_feature_detected!("neon") {
///     let c = [0x38u8, 0xB0, 0x7E, 0x01, 0x00, 0x80, 0x08, 0x7F];
///     // SAFETY: the CPU has NEON (checked above); 8 bytes are read.
///     let f = unsafe { neon::e4m3x8_to_f32(vld1_u8(c.as_ptr())) };
///     // SAFETY: both types are 32 bytes of plain data.
///     let f: [f32; 8] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f[..7], [1.0, -0.5, 448.0, 0.001953125, 0.0, -0.0, 0.015625]);
///     assert!(f[7].is_nan());
/// }
/// ```
#[inline(always)]
pub unsafe fn e4m3x8_to_f32(c: uint8x8_t) -> float32x4x2_t {
    // SAFETY: the two table rows are 16-byte statics; otherwise no memory is accessed; the
    // CPU has NEON (the caller's guarantee). The 16-code step converts the 8 codes twice;
    // the first 8 results are kept.
    unsafe {
        let table = k::E4M3_F32_TABLE.map(|row| vld1q_u8(row.as_ptr()));
        let (keep, rebias) = k::e4m3_f32_consts();
        let [h, _] = k::e4m3_top16_x16::<4>(vcombine_u8(c, c), &table, keep, rebias);
        float32x4x2_t(
            vreinterpretq_f32_u32(vshll_n_u16::<16>(vget_low_u16(h))),
            vreinterpretq_f32_u32(vshll_high_n_u16::<16>(h)),
        )
    }
}

/// 8 × F8E5M2 codes → 8 × f32, exact; a NaN keeps its payload, quiet bit set (as F16
/// `code << 8`).
///
/// # Safety
/// The CPU must have NEON (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::aarch64::*;
/// use vcvt::vector::neon;
///
/// if std::arch::is_aarch64_feature_detected!("neon") {
///     let c = [0x3Cu8, 0xBD, 0x7B, 0x01, 0x00, 0x80, 0x7C, 0x42];
///     // SAFETY: the CPU has NEON (checked above); 8 bytes are read.
///     let f = unsafe { neon::e5m2x8_to_f32(vld1_u8(c.as_ptr())) };
///     // SAFETY: both types are 32 bytes of plain data.
///     let f: [f32; 8] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f, [1.0, -1.25, 57344.0, 1.52587890625e-5, 0.0, -0.0, f32::INFINITY, 3.0]);
/// }
/// ```
#[inline(always)]
pub unsafe fn e5m2x8_to_f32(c: uint8x8_t) -> float32x4x2_t {
    // SAFETY: no memory is accessed; the CPU has NEON (the caller's guarantee).
    unsafe { k::f32_from_e5m2_x8(c) }
}

/// Safe, token-gated versions of this module's functions for `pulp::aarch64::Neon` (feature
/// `pulp`): the token proves NEON. Inside `Neon::vectorize` the calls inline.
///
/// ```
/// use core::arch::aarch64::*;
/// use vcvt::vector::neon::NeonConvert;
/// use vcvt::Overflow;
///
/// if let Some(simd) = pulp::aarch64::Neon::try_new() {
///     // SAFETY: NEON is present (the token).
///     let x = unsafe { vdupq_n_f32(1.0e6) };
///     let h = simd.f32x4_to_f16(x, Overflow::Saturate);
///     // SAFETY: both types are 8 bytes of plain data.
///     assert_eq!(unsafe { core::mem::transmute::<uint16x4_t, [u16; 4]>(h) }, [0x7BFF; 4]);
/// }
/// ```
#[cfg(feature = "pulp")]
pub trait NeonConvert: Copy {
    /// [`f32x4_to_f16`], safe.
    fn f32x4_to_f16(self, x: float32x4_t, overflow: Overflow) -> uint16x4_t;
    /// [`f32x4_to_bf16`], safe.
    fn f32x4_to_bf16(self, x: float32x4_t, overflow: Overflow) -> uint16x4_t;
    /// [`f32x8_to_e4m3`], safe.
    fn f32x8_to_e4m3(self, x: float32x4x2_t, overflow: Overflow) -> uint8x8_t;
    /// [`f32x8_to_e5m2`], safe.
    fn f32x8_to_e5m2(self, x: float32x4x2_t, overflow: Overflow) -> uint8x8_t;
    /// [`f16x4_to_f32`], safe.
    fn f16x4_to_f32(self, h: uint16x4_t) -> float32x4_t;
    /// [`bf16x4_to_f32`], safe.
    fn bf16x4_to_f32(self, h: uint16x4_t) -> float32x4_t;
    /// [`e4m3x8_to_f32`], safe.
    fn e4m3x8_to_f32(self, c: uint8x8_t) -> float32x4x2_t;
    /// [`e5m2x8_to_f32`], safe.
    fn e5m2x8_to_f32(self, c: uint8x8_t) -> float32x4x2_t;
}

#[cfg(feature = "pulp")]
impl NeonConvert for pulp::aarch64::Neon {
    #[inline(always)]
    fn f32x4_to_f16(self, x: float32x4_t, overflow: Overflow) -> uint16x4_t {
        // SAFETY: the token proves NEON.
        unsafe { f32x4_to_f16(x, overflow) }
    }
    #[inline(always)]
    fn f32x4_to_bf16(self, x: float32x4_t, overflow: Overflow) -> uint16x4_t {
        // SAFETY: the token proves NEON.
        unsafe { f32x4_to_bf16(x, overflow) }
    }
    #[inline(always)]
    fn f32x8_to_e4m3(self, x: float32x4x2_t, overflow: Overflow) -> uint8x8_t {
        // SAFETY: the token proves NEON.
        unsafe { f32x8_to_e4m3(x, overflow) }
    }
    #[inline(always)]
    fn f32x8_to_e5m2(self, x: float32x4x2_t, overflow: Overflow) -> uint8x8_t {
        // SAFETY: the token proves NEON.
        unsafe { f32x8_to_e5m2(x, overflow) }
    }
    #[inline(always)]
    fn f16x4_to_f32(self, h: uint16x4_t) -> float32x4_t {
        // SAFETY: the token proves NEON.
        unsafe { f16x4_to_f32(h) }
    }
    #[inline(always)]
    fn bf16x4_to_f32(self, h: uint16x4_t) -> float32x4_t {
        // SAFETY: the token proves NEON.
        unsafe { bf16x4_to_f32(h) }
    }
    #[inline(always)]
    fn e4m3x8_to_f32(self, c: uint8x8_t) -> float32x4x2_t {
        // SAFETY: the token proves NEON.
        unsafe { e4m3x8_to_f32(c) }
    }
    #[inline(always)]
    fn e5m2x8_to_f32(self, c: uint8x8_t) -> float32x4x2_t {
        // SAFETY: the token proves NEON.
        unsafe { e5m2x8_to_f32(c) }
    }
}
