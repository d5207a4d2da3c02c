//! Register-level converters: one SIMD vector at a time, for use inside your own SIMD code.
//!
//! The slice API ([`convert_slice`](crate::convert_slice) and friends) is the right tool
//! when the data sits in memory and the conversion is a pass of its own: it picks the best
//! backend at run time, handles every length and alignment, and streams large buffers. This
//! module is for the other case: a kernel of yours (a GEMM packing routine, an f16 dot
//! product, an attention kernel) that already runs under `#[target_feature]` and wants to
//! convert the vector it holds in a register, without a round trip through a buffer and
//! without a call. Each function here converts one vector and is `#[inline(always)]`, so it
//! becomes a few instructions inside your function.
//!
//! | module | CPU features | narrowing | widening |
//! |---|---|---|---|
//! | `avx2` (x86-64) | `avx2`, `fma`, `f16c` | 8 × f32 (`__m256`) → 8 × F16/BF16 (`__m128i`, u16 lanes), 8 × F8E4M3/F8E5M2 (low 8 bytes of an `__m128i`) | the reverse |
//! | `avx512` (x86-64) | `avx512f`, `avx512bw`, `avx512vl`, `avx512dq` + the above | 16 × f32 (`__m512`) → 16 × F16/BF16 (`__m256i`), 16 × F8E4M3/F8E5M2 (`__m128i`) | the reverse |
//! | `neon` (little-endian aarch64) | `neon` | 4 × f32 (`float32x4_t`) → 4 × F16/BF16 (`uint16x4_t`); 8 × f32 (`float32x4x2_t`) → 8 × F8E4M3/F8E5M2 (`uint8x8_t`) | the reverse |
//!
//! # The contract
//!
//! Every function gives exactly the bits that the slice API gives for the same values (the
//! Scalar codec, the specification of the [crate-level contract](crate#the-conversion-contract)):
//! narrowing rounds to nearest, ties to even, once, from the f32 value; subnormals are kept
//! both ways; overflow and ±Inf follow the [`Overflow`](crate::Overflow) argument (pass the
//! format's default — `NonSaturating` for F16/BF16, `Saturate` for fp8 — to match
//! [`convert_slice`](crate::convert_slice)); a NaN keeps its sign and, where the format has
//! a payload (F16, BF16), its top payload bits with the quiet bit set
//! ([`NanPolicy::Preserve`](crate::NanPolicy::Preserve), the only NaN policy offered here).
//! Widening is exact. They are not approximations of the slice kernels: the slice kernels
//! call the same per-vector functions in their loops (the AVX2 8-element steps, the AVX-512
//! 16-lane steps, the NEON integer steps), and `tests/vector.rs` checks every function
//! against the Scalar backend on every code, every special value and random vectors.
//!
//! # MXCSR and FPCR
//!
//! Results never depend on the floating-point control register, as for the slice API:
//!
//! * **x86-64 (MXCSR)**: the rounding mode, flush-to-zero and denormals-are-zero do not change
//!   any result. Every rounding instruction used takes its mode from the instruction
//!   (`VCVTPS2PH` with immediate 0, the AVX-512 `{rn-sae}` forms), and every other float
//!   instruction cannot round or flush for the operands it gets, or its result does not
//!   matter when it does (the `avx2` and `avx512` kernel docs argue each step). The AVX2
//!   fp8 narrowing is the slice kernels' integer method, which is exact under every MXCSR;
//!   the AVX2 slice kernels' faster fused multiply-add method rounds as MXCSR says, so they
//!   check the rounding mode once per call and use it only under round to nearest. A
//!   per-vector function cannot afford that check, so it always takes the integer method. The functions do not
//!   write MXCSR; some may set its sticky exception flags (with the default masked
//!   exceptions that has no effect).
//! * **aarch64 (FPCR)**: BF16 and fp8 narrowing and BF16 and E4M3 widening are integer
//!   AdvSIMD, which FPCR does not affect. F16 narrowing and widening and E5M2 widening need
//!   `FCVTN`/`FCVTL`, which obey FPCR (rounding mode, FZ, FZ16, DN, AHP, AH): each of those
//!   functions is one `asm!` block that reads FPCR, sets it to 0 when it is not 0 already,
//!   converts and restores it. That costs an `MRS FPCR` and two not-taken branches per
//!   vector (plus two `MSR FPCR` when the caller runs with a non-default FPCR); the slice API
//!   pays it once per call, so for long runs of F16 in memory it is the faster choice.
//!
//! # Safety
//!
//! The functions of `avx2`, `avx512` and `neon` are `unsafe fn`s with one condition:
//! **the CPU must have the module's target features**. They carry no `#[target_feature]`
//! attribute themselves (it cannot be combined with `#[inline(always)]` on stable Rust);
//! they are meant to be inlined into a function of yours that has
//! `#[target_feature(enable = "...")]` with at least those features, or that runs only
//! after `is_x86_feature_detected!` said so. Called elsewhere on a CPU with the features,
//! they are still correct, only slower (the instructions are not inlined then). There is
//! nothing else to uphold: they read no memory.
//!
//! With the `pulp` feature, safe wrappers take a token that proves the features instead:
//! `avx2::V3F16c` (a `pulp::x86::V3`, which does not include F16C, plus a checked F16C),
//! the `avx512::V4Convert` trait for `pulp::x86::V4`, and the `neon::NeonConvert` trait
//! for `pulp::aarch64::Neon`. pulp is used only for this integration surface; vcvt's own
//! kernels are written with `core::arch`.
//!
//! # Example
//!
//! F16 keys times an f32 query, with the conversion inside the dot product's loop:
//!
//! ```
//! # #[cfg(target_arch = "x86_64")]
//! # {
//! use core::arch::x86_64::*;
//! use vcvt::vector::avx2;
//! use vcvt::F16;
//!
//! /// Sum of `k[i] * q[i]` for F16 `k`, 8 at a time (the length a multiple of 8).
//! #[target_feature(enable = "avx2,fma,f16c")]
//! fn dot_f16(k: &[F16], q: &[f32]) -> f32 {
//!     assert!(k.len() == q.len() && k.len() % 8 == 0);
//!     let mut acc = _mm256_setzero_ps();
//!     for (k8, q8) in k.chunks_exact(8).zip(q.chunks_exact(8)) {
//!         // SAFETY: 8 F16 (16 bytes) and 8 f32 (32 bytes) are in bounds; this function
//!         // has the features `avx2::f16x8_to_f32` needs.
//!         unsafe {
//!             let h = _mm_loadu_si128(k8.as_ptr().cast());
//!             let kf = avx2::f16x8_to_f32(h);
//!             acc = _mm256_fmadd_ps(kf, _mm256_loadu_ps(q8.as_ptr()), acc);
//!         }
//!     }
//!     let mut lanes = [0f32; 8];
//!     // SAFETY: 8 f32 in bounds.
//!     unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), acc) };
//!     lanes.iter().sum()
//! }
//!
//! if is_x86_feature_detected!("avx2")
//!     && is_x86_feature_detected!("fma")
//!     && is_x86_feature_detected!("f16c")
//! {
//!     let k: Vec<F16> = (0..16).map(|i| F16::from_f32(i as f32)).collect();
//!     let q = vec![0.5f32; 16];
//!     // SAFETY: the CPU has the features (checked above).
//!     assert_eq!(unsafe { dot_f16(&k, &q) }, 60.0);
//! }
//! # }
//! ```

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512;
#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
pub mod neon;
