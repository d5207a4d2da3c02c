//! AVX-512 tier (x86-64 with `avx512f`, `avx512bw`, `avx512vl`, `avx512dq`, plus `avx2`,
//! `fma`, `f16c`): 16 × f32 in an `__m512`.
//!
//! Layouts: F16 and BF16 codes are the sixteen 16-bit lanes of an `__m256i`, F8E4M3 and
//! F8E5M2 codes the sixteen bytes of an `__m128i`, element 0 lowest (as loaded from memory).
//! Every rounding instruction carries `{rn-sae}`, so no MXCSR setting changes a result.
//!
//! # Safety
//!
//! Every function requires a CPU with AVX-512 F, BW, VL and DQ and AVX2, FMA and F16C; see
//! the [module docs](super) for how to call them, [`is_available`] to check at run time, and
//! `V4Convert` (feature `pulp`) for safe wrappers.

use core::arch::x86_64::*;

use crate::Overflow;
use crate::arch::x86_64::avx512::{BF16, E4M3, E5M2, F16, narrow16, widen16};

/// Whether this CPU has the features this module's functions need: with `std`, detected at
/// run time (cached); without it, whether the build enables them.
#[inline]
pub fn is_available() -> bool {
    crate::arch::x86_64::avx512_available()
}

/// The narrowing step of format `FMT` with the overflow policy as a run-time value.
///
/// # Safety
/// The CPU has this module's features.
#[inline(always)]
unsafe fn narrow<const FMT: u8>(x: __m512, overflow: Overflow) -> __m512i {
    // SAFETY: no memory is accessed; the features are the caller's guarantee.
    unsafe {
        let x = _mm512_castps_si512(x);
        match overflow {
            Overflow::Saturate => narrow16::<FMT, true>(x),
            Overflow::NonSaturating => narrow16::<FMT, false>(x),
        }
    }
}

/// Checks the features of this module in doc examples.
macro_rules! doc_guard {
    () => {
        r#"is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")
    && is_x86_feature_detected!("avx512vl") && is_x86_feature_detected!("avx512dq")
    && is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    && is_x86_feature_detected!("f16c")"#
    };
}

/// 16 × f32 → 16 × F16 codes, rounded to nearest even; overflow and ±Inf per `overflow`
/// (±65504 or ±Inf); NaN keeps its sign and top 10 payload bits, quiet bit set.
///
/// # Safety
/// The CPU must have this module's features (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::{vector::avx512, Overflow};
///
#[doc = concat!("if ", doc_guard!(), " {")]
///     // SAFETY: the CPU has the features (checked above).
///     let h = unsafe { avx512::f32x16_to_f16(_mm512_set1_ps(1.0e6), Overflow::Saturate) };
///     // SAFETY: both types are 32 bytes of plain data.
///     let h: [u16; 16] = unsafe { core::mem::transmute(h) };
///     assert_eq!(h, [0x7BFF; 16]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x16_to_f16(x: __m512, overflow: Overflow) -> __m256i {
    // SAFETY: no memory is accessed; the features are the caller's guarantee. `narrow16`
    // returns F16 codes in the low 256 bits.
    unsafe { _mm512_castsi512_si256(narrow::<F16>(x, overflow)) }
}

/// 16 × f32 → 16 × BF16 codes, rounded to nearest even; overflow and ±Inf per `overflow`;
/// NaN keeps its sign and top 7 payload bits, quiet bit set.
///
/// # Safety
/// The CPU must have this module's features (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::{vector::avx512, Overflow};
///
#[doc = concat!("if ", doc_guard!(), " {")]
///     // SAFETY: the CPU has the features (checked above).
///     let h = unsafe { avx512::f32x16_to_bf16(_mm512_set1_ps(-3.0), Overflow::NonSaturating) };
///     // SAFETY: both types are 32 bytes of plain data.
///     let h: [u16; 16] = unsafe { core::mem::transmute(h) };
///     assert_eq!(h, [0xC040; 16]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x16_to_bf16(x: __m512, overflow: Overflow) -> __m256i {
    // SAFETY: no memory is accessed; the features are the caller's guarantee. The codes are
    // the high halves of the 32-bit lanes; VPMOVDW packs them as the remainder step's masked
    // store does.
    unsafe { _mm512_cvtepi32_epi16(_mm512_srli_epi32::<16>(narrow::<BF16>(x, overflow))) }
}

/// 16 × f32 → 16 × F8E4M3 codes, rounded to nearest even; overflow and ±Inf per `overflow`
/// (±448 with `Saturate`, the vcvt default for fp8; else NaN `0x7F | sign`); NaN →
/// `0x7F | sign`.
///
/// # Safety
/// The CPU must have this module's features (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::{vector::avx512, Overflow};
///
#[doc = concat!("if ", doc_guard!(), " {")]
///     // SAFETY: the CPU has the features (checked above).
///     let q = unsafe { avx512::f32x16_to_e4m3(_mm512_set1_ps(-0.5), Overflow::Saturate) };
///     // SAFETY: both types are 16 bytes of plain data.
///     let q: [u8; 16] = unsafe { core::mem::transmute(q) };
///     assert_eq!(q, [0xB0; 16]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x16_to_e4m3(x: __m512, overflow: Overflow) -> __m128i {
    // SAFETY: no memory is accessed; the features are the caller's guarantee. The codes are
    // the low bytes of the 32-bit lanes; VPMOVDB packs them as the masked store does.
    unsafe { _mm512_cvtepi32_epi8(narrow::<E4M3>(x, overflow)) }
}

/// 16 × f32 → 16 × F8E5M2 codes, rounded to nearest even; overflow and ±Inf per `overflow`
/// (±57344 with `Saturate`, the vcvt default for fp8; else ±Inf); NaN → `0x7E | sign`.
///
/// # Safety
/// The CPU must have this module's features (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::{vector::avx512, Overflow};
///
#[doc = concat!("if ", doc_guard!(), " {")]
///     // SAFETY: the CPU has the features (checked above).
///     let q = unsafe { avx512::f32x16_to_e5m2(_mm512_set1_ps(1e6), Overflow::NonSaturating) };
///     // SAFETY: both types are 16 bytes of plain data.
///     let q: [u8; 16] = unsafe { core::mem::transmute(q) };
///     assert_eq!(q, [0x7C; 16]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x16_to_e5m2(x: __m512, overflow: Overflow) -> __m128i {
    // SAFETY: as in `f32x16_to_e4m3`.
    unsafe { _mm512_cvtepi32_epi8(narrow::<E5M2>(x, overflow)) }
}

/// 16 × F16 codes → 16 × f32, exact; a NaN keeps its payload, quiet bit set.
///
/// # Safety
/// The CPU must have this module's features (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::vector::avx512;
///
#[doc = concat!("if ", doc_guard!(), " {")]
///     // SAFETY: the CPU has the features (checked above).
///     let f = unsafe { avx512::f16x16_to_f32(_mm256_set1_epi16(0x3C00)) };
///     // SAFETY: both types are 64 bytes of plain data.
///     let f: [f32; 16] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f, [1.0; 16]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f16x16_to_f32(h: __m256i) -> __m512 {
    // SAFETY: no memory is accessed; the features are the caller's guarantee.
    unsafe { _mm512_castsi512_ps(widen16::<F16>(h)) }
}

/// 16 × BF16 codes → 16 × f32: the 16-bit shift, exact, every bit kept.
///
/// # Safety
/// The CPU must have this module's features (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::vector::avx512;
///
#[doc = concat!("if ", doc_guard!(), " {")]
///     // SAFETY: the CPU has the features (checked above).
///     let f = unsafe { avx512::bf16x16_to_f32(_mm256_set1_epi16(0xC040u16 as i16)) };
///     // SAFETY: both types are 64 bytes of plain data.
///     let f: [f32; 16] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f, [-3.0; 16]);
/// }
/// ```
#[inline(always)]
pub unsafe fn bf16x16_to_f32(h: __m256i) -> __m512 {
    // SAFETY: no memory is accessed; the features are the caller's guarantee.
    unsafe { _mm512_castsi512_ps(widen16::<BF16>(h)) }
}

/// 16 × F8E4M3 codes → 16 × f32, exact; NaN codes give `0x7FC00000 | sign`.
///
/// # Safety
/// The CPU must have this module's features (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::vector::avx512;
///
#[doc = concat!("if ", doc_guard!(), " {")]
///     // SAFETY: the CPU has the features (checked above).
///     let f = unsafe { avx512::e4m3x16_to_f32(_mm_set1_epi8(0x7E)) };
///     // SAFETY: both types are 64 bytes of plain data.
///     let f: [f32; 16] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f, [448.0; 16]);
/// }
/// ```
#[inline(always)]
pub unsafe fn e4m3x16_to_f32(c: __m128i) -> __m512 {
    // SAFETY: no memory is accessed; the features are the caller's guarantee. `widen16`
    // reads fp8 codes from the low 128 bits.
    unsafe { _mm512_castsi512_ps(widen16::<E4M3>(_mm256_castsi128_si256(c))) }
}

/// 16 × F8E5M2 codes → 16 × f32, exact; a NaN keeps its payload, quiet bit set (as F16
/// `code << 8`).
///
/// # Safety
/// The CPU must have this module's features (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::vector::avx512;
///
#[doc = concat!("if ", doc_guard!(), " {")]
///     // SAFETY: the CPU has the features (checked above).
///     let f = unsafe { avx512::e5m2x16_to_f32(_mm_set1_epi8(0x7B)) };
///     // SAFETY: both types are 64 bytes of plain data.
///     let f: [f32; 16] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f, [57344.0; 16]);
/// }
/// ```
#[inline(always)]
pub unsafe fn e5m2x16_to_f32(c: __m128i) -> __m512 {
    // SAFETY: as in `e4m3x16_to_f32`.
    unsafe { _mm512_castsi512_ps(widen16::<E5M2>(_mm256_castsi128_si256(c))) }
}

/// Safe, token-gated versions of this module's functions for `pulp::x86::V4` (feature
/// `pulp`, which enables pulp's `x86-v4`): a `V4` token proves AVX-512 F/BW/VL/DQ, AVX2 and
/// FMA, and F16C through rustc's `avx512f` ⇒ `f16c` implication. Inside `V4::vectorize` the
/// calls inline.
///
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::vector::avx512::V4Convert;
///
/// if let Some(simd) = pulp::x86::V4::try_new() {
///     // SAFETY: `_mm_set1_epi8` is SSE2, part of x86-64.
///     let f = simd.e4m3x16_to_f32(unsafe { _mm_set1_epi8(0x38) });
///     // SAFETY: both types are 64 bytes of plain data.
///     assert_eq!(unsafe { core::mem::transmute::<__m512, [f32; 16]>(f) }, [1.0; 16]);
/// }
/// ```
#[cfg(feature = "pulp")]
pub trait V4Convert: Copy {
    /// [`f32x16_to_f16`], safe.
    fn f32x16_to_f16(self, x: __m512, overflow: Overflow) -> __m256i;
    /// [`f32x16_to_bf16`], safe.
    fn f32x16_to_bf16(self, x: __m512, overflow: Overflow) -> __m256i;
    /// [`f32x16_to_e4m3`], safe.
    fn f32x16_to_e4m3(self, x: __m512, overflow: Overflow) -> __m128i;
    /// [`f32x16_to_e5m2`], safe.
    fn f32x16_to_e5m2(self, x: __m512, overflow: Overflow) -> __m128i;
    /// [`f16x16_to_f32`], safe.
    fn f16x16_to_f32(self, h: __m256i) -> __m512;
    /// [`bf16x16_to_f32`], safe.
    fn bf16x16_to_f32(self, h: __m256i) -> __m512;
    /// [`e4m3x16_to_f32`], safe.
    fn e4m3x16_to_f32(self, c: __m128i) -> __m512;
    /// [`e5m2x16_to_f32`], safe.
    fn e5m2x16_to_f32(self, c: __m128i) -> __m512;
}

#[cfg(feature = "pulp")]
impl V4Convert for pulp::x86::V4 {
    #[inline(always)]
    fn f32x16_to_f16(self, x: __m512, overflow: Overflow) -> __m256i {
        // SAFETY: the token proves the features (F16C through `avx512f`).
        unsafe { f32x16_to_f16(x, overflow) }
    }
    #[inline(always)]
    fn f32x16_to_bf16(self, x: __m512, overflow: Overflow) -> __m256i {
        // SAFETY: the token proves the features (F16C through `avx512f`).
        unsafe { f32x16_to_bf16(x, overflow) }
    }
    #[inline(always)]
    fn f32x16_to_e4m3(self, x: __m512, overflow: Overflow) -> __m128i {
        // SAFETY: the token proves the features (F16C through `avx512f`).
        unsafe { f32x16_to_e4m3(x, overflow) }
    }
    #[inline(always)]
    fn f32x16_to_e5m2(self, x: __m512, overflow: Overflow) -> __m128i {
        // SAFETY: the token proves the features (F16C through `avx512f`).
        unsafe { f32x16_to_e5m2(x, overflow) }
    }
    #[inline(always)]
    fn f16x16_to_f32(self, h: __m256i) -> __m512 {
        // SAFETY: the token proves the features (F16C through `avx512f`).
        unsafe { f16x16_to_f32(h) }
    }
    #[inline(always)]
    fn bf16x16_to_f32(self, h: __m256i) -> __m512 {
        // SAFETY: the token proves the features (F16C through `avx512f`).
        unsafe { bf16x16_to_f32(h) }
    }
    #[inline(always)]
    fn e4m3x16_to_f32(self, c: __m128i) -> __m512 {
        // SAFETY: the token proves the features (F16C through `avx512f`).
        unsafe { e4m3x16_to_f32(c) }
    }
    #[inline(always)]
    fn e5m2x16_to_f32(self, c: __m128i) -> __m512 {
        // SAFETY: the token proves the features (F16C through `avx512f`).
        unsafe { e5m2x16_to_f32(c) }
    }
}
