//! AVX2 tier (x86-64 with `avx2`, `fma` and `f16c`): 8 × f32 in an `__m256`.
//!
//! Layouts: F16 and BF16 codes are the eight 16-bit lanes of an `__m128i`, element 0 lowest
//! (what `_mm_loadu_si128` of 8 codes in memory gives); F8E4M3 and F8E5M2 codes are the low
//! 8 bytes of an `__m128i` (what `_mm_loadl_epi64` gives, and `_mm_storel_epi64` stores).
//! Narrowing to fp8 leaves the high 8 bytes unspecified; widening from fp8 ignores them.
//!
//! # Safety
//!
//! Every function requires a CPU with AVX2, FMA and F16C; see the [module docs](super) for
//! how to call them, [`is_available`] to check at run time, and `V3F16c` (feature `pulp`)
//! for safe wrappers.

use core::arch::x86_64::*;

use crate::arch::x86_64::avx2 as k;
use crate::{F8E4M3, F8E5M2, Overflow};

/// Whether this CPU has the features this module's functions need (AVX2, FMA, F16C): with
/// `std`, detected at run time (cached); without it, whether the build enables them.
#[inline]
pub fn is_available() -> bool {
    crate::arch::x86_64::avx2_available()
}

/// 8 × f32 → 8 × F16 codes, rounded to nearest even; overflow and ±Inf per `overflow`
/// (±65504 or ±Inf); NaN keeps its sign and top 10 payload bits, quiet bit set.
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::{vector::avx2, Overflow};
///
/// if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
///     && is_x86_feature_detected!("f16c")
/// {
///     // SAFETY: the CPU has AVX2, FMA and F16C (checked above).
///     let h = unsafe {
///         let x = _mm256_setr_ps(1.0, -2.5, 65520.0, 1.0e-7, 0.0, -0.0, 1.0e6, f32::NAN);
///         avx2::f32x8_to_f16(x, Overflow::Saturate)
///     };
///     // SAFETY: both types are 16 bytes of plain data.
///     let h: [u16; 8] = unsafe { core::mem::transmute(h) };
///     assert_eq!(h, [0x3C00, 0xC100, 0x7BFF, 0x0002, 0x0000, 0x8000, 0x7BFF, 0x7E00]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x8_to_f16(x: __m256, overflow: Overflow) -> __m128i {
    // SAFETY: no memory is accessed; the CPU has AVX2, FMA and F16C (the caller's
    // guarantee), which is all the step needs.
    unsafe {
        match overflow {
            Overflow::Saturate => k::f32x8_to_f16::<true>(x),
            Overflow::NonSaturating => k::f32x8_to_f16::<false>(x),
        }
    }
}

/// 8 × f32 → 8 × BF16 codes, rounded to nearest even; overflow and ±Inf per `overflow`;
/// NaN keeps its sign and top 7 payload bits, quiet bit set.
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::{vector::avx2, Overflow};
///
/// if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
///     && is_x86_feature_detected!("f16c")
/// {
///     // SAFETY: the CPU has AVX2, FMA and F16C (checked above).
///     let h = unsafe {
///         let x = _mm256_setr_ps(1.0, 1.00390625, 1.01171875, -3.0, f32::MAX, 0.0, 1e-40, f32::NAN);
///         avx2::f32x8_to_bf16(x, Overflow::NonSaturating)
///     };
///     // SAFETY: both types are 16 bytes of plain data.
///     let h: [u16; 8] = unsafe { core::mem::transmute(h) };
///     assert_eq!(h, [0x3F80, 0x3F80, 0x3F82, 0xC040, 0x7F80, 0x0000, 0x0001, 0x7FC0]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x8_to_bf16(x: __m256, overflow: Overflow) -> __m128i {
    // SAFETY: no memory is accessed; the CPU has AVX2, FMA and F16C (the caller's
    // guarantee).
    unsafe {
        let x = _mm256_castps_si256(x);
        match overflow {
            Overflow::Saturate => k::f32x8_to_bf16::<true>(x),
            Overflow::NonSaturating => k::f32x8_to_bf16::<false>(x),
        }
    }
}

/// 8 × f32 → 8 × F8E4M3 codes in the low 8 bytes, rounded to nearest even; overflow and ±Inf
/// per `overflow` (±448 with `Saturate`, the vcvt default for fp8; else NaN `0x7F | sign`);
/// NaN → `0x7F | sign`. Exact under every MXCSR setting (the integer method).
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::{vector::avx2, Overflow};
///
/// if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
///     && is_x86_feature_detected!("f16c")
/// {
///     // SAFETY: the CPU has AVX2, FMA and F16C (checked above).
///     let q = unsafe {
///         let x = _mm256_setr_ps(1.0, -0.5, 464.0, 500.0, 0.001953125, 0.0, -1e-9, f32::NAN);
///         _mm_cvtsi128_si64(avx2::f32x8_to_e4m3(x, Overflow::Saturate)) as u64
///     };
///     assert_eq!(q.to_le_bytes(), [0x38, 0xB0, 0x7E, 0x7E, 0x01, 0x00, 0x80, 0x7F]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x8_to_e4m3(x: __m256, overflow: Overflow) -> __m128i {
    // SAFETY: no memory is accessed; the CPU has AVX2, FMA and F16C (the caller's
    // guarantee).
    unsafe {
        let x = _mm256_castps_si256(x);
        match overflow {
            Overflow::Saturate => k::f32x8_to_f8::<F8E4M3, true>(x),
            Overflow::NonSaturating => k::f32x8_to_f8::<F8E4M3, false>(x),
        }
    }
}

/// 8 × f32 → 8 × F8E5M2 codes in the low 8 bytes, rounded to nearest even; overflow and ±Inf
/// per `overflow` (±57344 with `Saturate`, the vcvt default for fp8; else ±Inf); NaN →
/// `0x7E | sign`. Exact under every MXCSR setting (the integer method).
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::{vector::avx2, Overflow};
///
/// if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
///     && is_x86_feature_detected!("f16c")
/// {
///     // SAFETY: the CPU has AVX2, FMA and F16C (checked above).
///     let q = unsafe {
///         let x = _mm256_setr_ps(1.0, -1.25, 1e6, f32::INFINITY, 0.0, 3.0, 1.125, f32::NAN);
///         _mm_cvtsi128_si64(avx2::f32x8_to_e5m2(x, Overflow::NonSaturating)) as u64
///     };
///     assert_eq!(q.to_le_bytes(), [0x3C, 0xBD, 0x7C, 0x7C, 0x00, 0x42, 0x3C, 0x7E]);
/// }
/// ```
#[inline(always)]
pub unsafe fn f32x8_to_e5m2(x: __m256, overflow: Overflow) -> __m128i {
    // SAFETY: no memory is accessed; the CPU has AVX2, FMA and F16C (the caller's
    // guarantee).
    unsafe {
        let x = _mm256_castps_si256(x);
        match overflow {
            Overflow::Saturate => k::f32x8_to_f8::<F8E5M2, true>(x),
            Overflow::NonSaturating => k::f32x8_to_f8::<F8E5M2, false>(x),
        }
    }
}

/// 8 × F16 codes (16-bit lanes) → 8 × f32, exact; a NaN keeps its payload, quiet bit set.
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::vector::avx2;
///
/// if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
///     && is_x86_feature_detected!("f16c")
/// {
///     let codes: [u16; 8] = [0x3C00, 0xC100, 0x7BFF, 0x0001, 0x8000, 0x7C00, 0xFC00, 0x3555];
///     // SAFETY: the CPU has AVX2, FMA and F16C (checked above); 16 bytes are read.
///     let f = unsafe { avx2::f16x8_to_f32(_mm_loadu_si128(codes.as_ptr().cast())) };
///     // SAFETY: both types are 32 bytes of plain data.
///     let f: [f32; 8] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f[..4], [1.0, -2.5, 65504.0, 5.960464477539063e-8]);
///     assert_eq!(f[5], f32::INFINITY);
/// }
/// ```
#[inline(always)]
pub unsafe fn f16x8_to_f32(h: __m128i) -> __m256 {
    // SAFETY: no memory is accessed; the CPU has AVX2, FMA and F16C (the caller's
    // guarantee).
    unsafe { k::f16_to_f32x8(h) }
}

/// 8 × BF16 codes (16-bit lanes) → 8 × f32: the 16-bit shift, exact, every bit kept.
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::vector::avx2;
///
/// if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
///     && is_x86_feature_detected!("f16c")
/// {
///     let codes: [u16; 8] = [0x3F80, 0xC040, 0x7F7F, 0x0001, 0x8000, 0x7F80, 0x7FC1, 0x3F81];
///     // SAFETY: the CPU has AVX2, FMA and F16C (checked above); 16 bytes are read.
///     let f = unsafe { avx2::bf16x8_to_f32(_mm_loadu_si128(codes.as_ptr().cast())) };
///     // SAFETY: both types are 32 bytes of plain data.
///     let f: [u32; 8] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f, codes.map(|c| (c as u32) << 16));
/// }
/// ```
#[inline(always)]
pub unsafe fn bf16x8_to_f32(h: __m128i) -> __m256 {
    // SAFETY: no memory is accessed; the CPU has AVX2, FMA and F16C (the caller's
    // guarantee).
    unsafe { _mm256_castsi256_ps(k::bf16_to_f32x8(h)) }
}

/// 8 × F8E4M3 codes (the low 8 bytes) → 8 × f32, exact; NaN codes give `0x7FC00000 | sign`.
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::vector::avx2;
///
/// if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
///     && is_x86_feature_detected!("f16c")
/// {
///     let codes = u64::from_le_bytes([0x38, 0xB0, 0x7E, 0x01, 0x00, 0x80, 0x08, 0x7F]);
///     // SAFETY: the CPU has AVX2, FMA and F16C (checked above).
///     let f = unsafe { avx2::e4m3x8_to_f32(_mm_cvtsi64_si128(codes as i64)) };
///     // SAFETY: both types are 32 bytes of plain data.
///     let f: [f32; 8] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f[..7], [1.0, -0.5, 448.0, 0.001953125, 0.0, -0.0, 0.015625]);
///     assert!(f[7].is_nan());
/// }
/// ```
#[inline(always)]
pub unsafe fn e4m3x8_to_f32(c: __m128i) -> __m256 {
    // SAFETY: no memory is accessed; the CPU has AVX2, FMA and F16C (the caller's
    // guarantee).
    unsafe { k::e4m3_bytes_to_f32x8(c) }
}

/// 8 × F8E5M2 codes (the low 8 bytes) → 8 × f32, exact; a NaN keeps its payload, quiet bit
/// set (as F16 `code << 8`).
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C (see the [module docs](super#safety)).
///
/// # Example
/// ```
/// use core::arch::x86_64::*;
/// use vcvt::vector::avx2;
///
/// if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
///     && is_x86_feature_detected!("f16c")
/// {
///     let codes = u64::from_le_bytes([0x3C, 0xBD, 0x7B, 0x01, 0x00, 0x80, 0x7C, 0x42]);
///     // SAFETY: the CPU has AVX2, FMA and F16C (checked above).
///     let f = unsafe { avx2::e5m2x8_to_f32(_mm_cvtsi64_si128(codes as i64)) };
///     // SAFETY: both types are 32 bytes of plain data.
///     let f: [f32; 8] = unsafe { core::mem::transmute(f) };
///     assert_eq!(f, [1.0, -1.25, 57344.0, 1.52587890625e-5, 0.0, -0.0, f32::INFINITY, 3.0]);
/// }
/// ```
#[inline(always)]
pub unsafe fn e5m2x8_to_f32(c: __m128i) -> __m256 {
    // SAFETY: no memory is accessed; the CPU has AVX2, FMA and F16C (the caller's
    // guarantee).
    unsafe { k::e5m2_to_f32x8(c) }
}

#[cfg(feature = "pulp")]
pub use token::V3F16c;

#[cfg(feature = "pulp")]
mod token {
    use super::*;

    /// A `pulp::x86::V3` token plus F16C: proof that this CPU has everything this module's
    /// functions need, so that they can be called safely as its methods.
    ///
    /// pulp's `V3` (x86-64-v3: AVX2, FMA, BMI1/2, LZCNT, ...) does not include F16C, which
    /// every F16 and fp8 conversion here uses, so a `V3` alone proves too little. [`new`]
    /// checks F16C at run time (with `std` through `is_x86_feature_detected!`, without it
    /// from CPUID leaf 1, ECX bit 29; the `V3` already proves the OS saves AVX state).
    /// A `pulp::x86::V4` converts infallibly ([`From`]): rustc's `avx512f` implies `f16c`.
    ///
    /// pulp's `V3::vectorize` compiles its closure without F16C, so the conversions would not
    /// be inlined there; [`V3F16c::vectorize`] runs a closure with AVX2, FMA and F16C (and the
    /// rest of `V3`) enabled.
    ///
    /// [`new`]: V3F16c::new
    ///
    /// ```
    /// use core::arch::x86_64::*;
    /// use vcvt::vector::avx2::V3F16c;
    /// use vcvt::Overflow;
    ///
    /// if let Some(simd) = V3F16c::try_new() {
    ///     let q = simd.vectorize(|| {
    ///         // SAFETY: `_mm256_set1_ps` needs AVX, which the token proves.
    ///         let x = unsafe { _mm256_set1_ps(448.0) };
    ///         simd.f32x8_to_e4m3(x, Overflow::Saturate)
    ///     });
    ///     // SAFETY: SSE2 is part of x86-64.
    ///     assert_eq!(unsafe { _mm_cvtsi128_si64(q) } as u64, 0x7E7E_7E7E_7E7E_7E7E);
    /// }
    /// ```
    #[derive(Clone, Copy, Debug)]
    pub struct V3F16c {
        v3: pulp::x86::V3,
    }

    /// Whether the CPU has F16C.
    fn has_f16c() -> bool {
        #[cfg(feature = "std")]
        {
            std::is_x86_feature_detected!("f16c")
        }
        #[cfg(not(feature = "std"))]
        {
            #[allow(unused_unsafe)]
            // SAFETY: every x86-64 CPU has CPUID and leaf 1. (The intrinsic is a safe
            // function in newer Rust and an unsafe one in the crate's MSRV.)
            let ecx = unsafe { core::arch::x86_64::__cpuid(1) }.ecx;
            ecx & (1 << 29) != 0
        }
    }

    impl V3F16c {
        /// The token, if the CPU that `v3` proves AVX2 and FMA for also has F16C.
        #[inline]
        pub fn new(v3: pulp::x86::V3) -> Option<V3F16c> {
            has_f16c().then_some(V3F16c { v3 })
        }

        /// The token, if the CPU has pulp's `V3` features and F16C.
        #[inline]
        pub fn try_new() -> Option<V3F16c> {
            pulp::x86::V3::try_new().and_then(V3F16c::new)
        }

        /// The `pulp::x86::V3` token inside.
        #[inline(always)]
        pub fn v3(self) -> pulp::x86::V3 {
            self.v3
        }

        /// Runs `f` in a function compiled with `V3`'s features and F16C, so that this
        /// token's conversions (and `core::arch` intrinsics of those features) inline into
        /// it. Mark `f` `#[inline(always)]` if it is a named function.
        #[inline(always)]
        pub fn vectorize<R>(self, f: impl FnOnce() -> R) -> R {
            #[inline]
            #[target_feature(
                enable = "avx2,fma,f16c,bmi1,bmi2,lzcnt,popcnt,sse4.2,ssse3,sse3,fxsr"
            )]
            fn run<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            // SAFETY: the token proves every feature `run` enables (`V3`'s, and F16C,
            // checked in `new`); nothing else is required.
            unsafe { run(f) }
        }

        /// [`f32x8_to_f16`], safe: the token proves the features.
        #[inline(always)]
        pub fn f32x8_to_f16(self, x: __m256, overflow: Overflow) -> __m128i {
            // SAFETY: the token proves AVX2, FMA and F16C.
            unsafe { f32x8_to_f16(x, overflow) }
        }

        /// [`f32x8_to_bf16`], safe: the token proves the features.
        #[inline(always)]
        pub fn f32x8_to_bf16(self, x: __m256, overflow: Overflow) -> __m128i {
            // SAFETY: the token proves AVX2, FMA and F16C.
            unsafe { f32x8_to_bf16(x, overflow) }
        }

        /// [`f32x8_to_e4m3`], safe: the token proves the features.
        #[inline(always)]
        pub fn f32x8_to_e4m3(self, x: __m256, overflow: Overflow) -> __m128i {
            // SAFETY: the token proves AVX2, FMA and F16C.
            unsafe { f32x8_to_e4m3(x, overflow) }
        }

        /// [`f32x8_to_e5m2`], safe: the token proves the features.
        #[inline(always)]
        pub fn f32x8_to_e5m2(self, x: __m256, overflow: Overflow) -> __m128i {
            // SAFETY: the token proves AVX2, FMA and F16C.
            unsafe { f32x8_to_e5m2(x, overflow) }
        }

        /// [`f16x8_to_f32`], safe: the token proves the features.
        #[inline(always)]
        pub fn f16x8_to_f32(self, h: __m128i) -> __m256 {
            // SAFETY: the token proves AVX2, FMA and F16C.
            unsafe { f16x8_to_f32(h) }
        }

        /// [`bf16x8_to_f32`], safe: the token proves the features.
        #[inline(always)]
        pub fn bf16x8_to_f32(self, h: __m128i) -> __m256 {
            // SAFETY: the token proves AVX2, FMA and F16C.
            unsafe { bf16x8_to_f32(h) }
        }

        /// [`e4m3x8_to_f32`], safe: the token proves the features.
        #[inline(always)]
        pub fn e4m3x8_to_f32(self, c: __m128i) -> __m256 {
            // SAFETY: the token proves AVX2, FMA and F16C.
            unsafe { e4m3x8_to_f32(c) }
        }

        /// [`e5m2x8_to_f32`], safe: the token proves the features.
        #[inline(always)]
        pub fn e5m2x8_to_f32(self, c: __m128i) -> __m256 {
            // SAFETY: the token proves AVX2, FMA and F16C.
            unsafe { e5m2x8_to_f32(c) }
        }
    }

    impl From<pulp::x86::V4> for V3F16c {
        /// Every `V4` CPU has F16C: rustc's `avx512f` target feature implies `f16c`, so code
        /// compiled for a `V4` token already assumes it.
        #[inline]
        fn from(v4: pulp::x86::V4) -> V3F16c {
            V3F16c { v3: *v4 }
        }
    }
}
