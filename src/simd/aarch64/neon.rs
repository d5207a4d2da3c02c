//! [`Vector`] for NEON (base ARMv8.0 AdvSIMD): 4 lanes in a `uint32x4_t`, lane masks as
//! all-ones lanes, partial loads and stores through a zeroed stack buffer (the `n` elements
//! are copied in or out with `copy_nonoverlapping`, so nothing outside them is touched), and
//! the instantiation of the generic kernels for the `neon` and `neon-bf16` tiers.
//!
//! # FPCR
//!
//! NEON has no rounding immediates: every floating-point instruction obeys FPCR (rounding
//! mode, `FZ`, `FZ16`, `DN`, `AHP`, `AH`, `FIZ`), any of which the caller may have changed.
//! So every generic kernel runs under an [`Fpcr0`] (FPCR = 0, the reset value, for the call;
//! the caller's value restored afterwards, flags in FPSR left cumulative as on x86): one `MRS`
//! and a not-taken branch per call, two `MSR`s only for a caller with a non-default FPCR.
//! The instructions whose results FPCR could change (`FMLA` of the multiply-add narrowing,
//! `FCVTL`/`FCVTN` of F16, `FCVTXN` of the f64 sources, `FCVTL` to f64) are side-effecting
//! `asm!` statements, so the compiler keeps them between the guard's `MSR`s (it does not
//! model FPCR, and could move an intrinsic's operation across them). The two float
//! operations issued as intrinsics (`UCVTF` and `FMUL` of the widening) are exact on normal
//! values whatever FPCR holds, so where they run does not matter; each method says why.

use core::arch::aarch64::*;
use core::arch::asm;

use super::Fpcr0;
use crate::simd::{Vector, buffered, unbuffer};

/// 4 lanes of 32 bits.
#[derive(Clone, Copy)]
pub(crate) struct V128(uint32x4_t);

/// The 8 bytes of `n <= 4` 16-bit values at `p` (zero above them), as one little-endian word.
///
/// # Safety
/// `p` valid for reading `2 * n` bytes.
#[inline(always)]
unsafe fn load_x4_u16(p: *const u8, n: usize) -> uint16x4_t {
    // SAFETY: 8 bytes are read only when `n == 4`; else exactly `2 * n` through a buffer.
    unsafe {
        let w = if n == 4 {
            p.cast::<u64>().read_unaligned()
        } else {
            u64::from_le_bytes(buffered::<8>(p, 2 * n))
        };
        vcreate_u16(w)
    }
}

/// Stores the first `n <= 4` of 4 16-bit values at `p`.
///
/// # Safety
/// `p` valid for writing `2 * n` bytes.
#[inline(always)]
unsafe fn store_x4_u16(h: uint16x4_t, p: *mut u8, n: usize) {
    // SAFETY: 8 bytes are written only when `n == 4`; else exactly `2 * n` from a buffer.
    unsafe {
        let w = vget_lane_u64::<0>(vreinterpret_u64_u16(h));
        if n == 4 {
            p.cast::<u64>().write_unaligned(w);
        } else {
            unbuffer(&w.to_le_bytes(), p, 2 * n);
        }
    }
}

/// `FCVTN`: 4 lanes of f32 bits to F16 codes, then with `sat` ±Inf to ±MAX (`h + (h << 1
/// == 0xF800 ? -1 : 0)`: NaN codes are above Inf's and untouched).
///
/// Under FPCR = 0 (the kernels' [`Fpcr0`]) `FCVTN` is the IEEE narrowing the codec
/// specifies: round to nearest even, f32 subnormal inputs and F16 subnormal results kept
/// (`FZ`, `FZ16` clear), a NaN quieted with its top payload bits and sign kept (`DN` clear),
/// IEEE binary16 with Inf and NaN (`AHP` clear).
///
/// # Safety
/// FPCR is 0 (the caller runs under an [`Fpcr0`]).
#[inline(always)]
unsafe fn to_f16(x: uint32x4_t, sat: bool) -> uint16x4_t {
    let h: uint16x4_t;
    // SAFETY: a register-only conversion (base AdvSIMD). Not `pure`: it stays between the
    // guard's `MSR`s (module docs).
    unsafe {
        asm!(
            "fcvtn {h:v}.4h, {x:v}.4s",
            h = lateout(vreg) h,
            x = in(vreg) x,
            options(nomem, nostack, preserves_flags)
        );
        if sat {
            vadd_u16(h, vceq_u16(vshl_n_u16::<1>(h), vdup_n_u16(0xF800)))
        } else {
            h
        }
    }
}

/// `FCVTL`: 4 F16 codes to f32 bits. Under FPCR = 0 it is exact: F16 subnormals kept as
/// normal f32 (`FZ16` does not apply to conversions, and FPCR is 0 anyway), a NaN quieted with
/// its payload and sign kept (`DN` clear), IEEE binary16 (`AHP` clear: `0x7C00` is Inf, not
/// 131072), as `VCVTPH2PS` and the codec.
///
/// # Safety
/// FPCR is 0 (the caller runs under an [`Fpcr0`]).
#[inline(always)]
unsafe fn from_f16(h: uint16x4_t) -> uint32x4_t {
    let r: uint32x4_t;
    // SAFETY: a register-only conversion (base AdvSIMD), kept between the guard's `MSR`s.
    unsafe {
        asm!(
            "fcvtl {r:v}.4s, {h:v}.4h",
            r = lateout(vreg) r,
            h = in(vreg) h,
            options(nomem, nostack, preserves_flags)
        )
    };
    r
}

impl Vector for V128 {
    const FUSED_FMA: bool = true;
    const MUL_KEEPS_QNAN: bool = true;
    const LANES: usize = 4;
    type Mask = uint32x4_t;

    // SAFETY (every method): AdvSIMD is part of every aarch64 core these kernels are
    // dispatched to (`neon_available`), and the memory methods touch only the `n` elements
    // the caller vouches for: whole vectors when `n == 4`, else a copy of exactly those
    // bytes through a buffer.

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V128(vdupq_n_u32(x)) }
    }
    #[inline(always)]
    unsafe fn and(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V128(vandq_u32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn or(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V128(vorrq_u32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn or_and(self, b: Self, c: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V128(vorrq_u32(self.0, vandq_u32(b.0, c.0))) }
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V128(vaddq_u32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn sub(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V128(vsubq_u32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn shl(self, n: u32) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `USHL` by a splat of
        // `n < 32` (a constant after inlining, which LLVM turns into `SHL #n`).
        unsafe { V128(vshlq_u32(self.0, vdupq_n_s32(n as i32))) }
    }
    #[inline(always)]
    unsafe fn shr(self, n: u32) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `USHL` by `-n` is the
        // logical right shift (`USHR #n` once `n` is a constant).
        unsafe { V128(vshlq_u32(self.0, vdupq_n_s32(-(n as i32)))) }
    }
    #[inline(always)]
    unsafe fn min_u32(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V128(vminq_u32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn max_u32(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V128(vmaxq_u32(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn reduce_max_u32(self) -> u32 {
        // SAFETY: the caller has the features (`Vector`'s contract). `UMAXV`.
        unsafe { vmaxvq_u32(self.0) }
    }
    #[inline(always)]
    unsafe fn lookup_u16(self, t: &[Self; 2]) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            // Word index w becomes the byte indices 2w (low byte) and 2w + 1 (high byte) of
            // the 32-byte table in two registers (`TBL` of two): 2w is below 256, so the two
            // bytes of a word and the two words of a lane do not mix, and below 32 for the
            // indices below 16 (`TBL` gives 0 for the others).
            let w = vreinterpretq_u16_u32(self.0);
            let b = vshlq_n_u16::<1>(w);
            let idx = vorrq_u16(vorrq_u16(b, vshlq_n_u16::<8>(b)), vdupq_n_u16(0x0100));
            let table = uint8x16x2_t(vreinterpretq_u8_u32(t[0].0), vreinterpretq_u8_u32(t[1].0));
            V128(vreinterpretq_u32_u8(vqtbl2q_u8(
                table,
                vreinterpretq_u8_u16(idx),
            )))
        }
    }
    #[inline(always)]
    unsafe fn inc(self, m: uint32x4_t) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). A true lane is all ones.
        unsafe { V128(vsubq_u32(self.0, m)) }
    }
    const WORDS: bool = true;
    #[inline(always)]
    unsafe fn load_u8_words(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` bytes at `p`: 8 are
        // read only when `n == 8`, else exactly `n` through a buffer.
        unsafe {
            let w = if n == 8 {
                p.cast::<u64>().read_unaligned()
            } else {
                u64::from_le_bytes(buffered::<8>(p, n))
            };
            V128(vreinterpretq_u32_u16(vmovl_u8(vcreate_u8(w))))
        }
    }
    #[inline(always)]
    unsafe fn store_words(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` words at `p`: 16 bytes
        // are written only when `n == 8`, else exactly `2 * n` through a buffer.
        unsafe {
            if n == 8 {
                vst1q_u32(p.cast(), self.0);
            } else {
                let mut buf = [0u8; 16];
                vst1q_u32(buf.as_mut_ptr().cast(), self.0);
                unbuffer(&buf, p, 2 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn add16(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            let (a, b) = (vreinterpretq_u16_u32(self.0), vreinterpretq_u16_u32(b.0));
            V128(vreinterpretq_u32_u16(vaddq_u16(a, b)))
        }
    }
    #[inline(always)]
    unsafe fn shl16(self, n: u32) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `USHL` by a splat of
        // `n < 16` (`SHL #n` once `n` is a constant).
        unsafe {
            let a = vreinterpretq_u16_u32(self.0);
            V128(vreinterpretq_u32_u16(vshlq_u16(a, vdupq_n_s16(n as i16))))
        }
    }
    #[inline(always)]
    unsafe fn eq16(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            let (a, b) = (vreinterpretq_u16_u32(self.0), vreinterpretq_u16_u32(b.0));
            V128(vreinterpretq_u32_u16(vceqq_u16(a, b)))
        }
    }
    #[inline(always)]
    unsafe fn gt16(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            let (a, b) = (vreinterpretq_s16_u32(self.0), vreinterpretq_s16_u32(b.0));
            V128(vreinterpretq_u32_u16(vcgtq_s16(a, b)))
        }
    }
    #[inline(always)]
    unsafe fn blend(m: Self, t: Self, f: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `BSL` selects bit by
        // bit.
        unsafe { V128(vbslq_u32(m.0, t.0, f.0)) }
    }
    #[inline(always)]
    unsafe fn words_lo(self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V128(vmovl_u16(vget_low_u16(vreinterpretq_u16_u32(self.0)))) }
    }
    #[inline(always)]
    unsafe fn words_hi(self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V128(vmovl_high_u16(vreinterpretq_u16_u32(self.0))) }
    }
    const F16_WORDS: bool = true;
    #[inline(always)]
    unsafe fn f16_words_lo(self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract); `FCVTL` is exact, and
        // the kernels run under `Fpcr0` (as `load_f16`).
        unsafe { V128(from_f16(vget_low_u16(vreinterpretq_u16_u32(self.0)))) }
    }
    #[inline(always)]
    unsafe fn f16_words_hi(self) -> Self {
        // SAFETY: as for `f16_words_lo`.
        unsafe { V128(from_f16(vget_high_u16(vreinterpretq_u16_u32(self.0)))) }
    }
    #[inline(always)]
    unsafe fn eq(self, b: Self) -> uint32x4_t {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { vceqq_u32(self.0, b.0) }
    }
    #[inline(always)]
    unsafe fn gt_i32(self, b: Self) -> uint32x4_t {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { vcgtq_s32(vreinterpretq_s32_u32(self.0), vreinterpretq_s32_u32(b.0)) }
    }
    #[inline(always)]
    unsafe fn any(m: uint32x4_t) -> bool {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { vmaxvq_u32(m) != 0 }
    }
    #[inline(always)]
    unsafe fn select(m: uint32x4_t, t: Self, f: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe { V128(vbslq_u32(m, t.0, f.0)) }
    }
    #[inline(always)]
    unsafe fn fma_rne(a: Self, b: Self, c: Self) -> Self {
        // `FMLA` is fused (one rounding), by FPCR.RMode: round to nearest even under the
        // kernels' `Fpcr0`. FZ is clear there too; even if it were set, it could not change
        // the narrowing's result (`lanes.rs`): a denormal `c` read as zero rounds to zero
        // either way (it is below 2^-126, under a quarter of every target's quantum), `a`
        // and `b` are normal, and the sum is at least 2^(emin + 23 - MAN_BITS), far from
        // the flush threshold.
        let r: uint32x4_t;
        // SAFETY: register operands only (base AdvSIMD). Not `pure`: the statement stays
        // between the guard's `MSR`s (module docs).
        unsafe {
            asm!(
                "fmla {c:v}.4s, {a:v}.4s, {b:v}.4s",
                c = inout(vreg) c.0 => r,
                a = in(vreg) a.0,
                b = in(vreg) b.0,
                options(nomem, nostack, preserves_flags)
            )
        };
        V128(r)
    }
    #[inline(always)]
    unsafe fn mul_ieee(self, b: Self) -> Self {
        // `FMUL` rounds by FPCR: to nearest even with subnormals kept under the
        // kernels' `Fpcr0` (the trait's contract).
        let r: uint32x4_t;
        // SAFETY: register operands only (base AdvSIMD). Not `pure`: the statement stays
        // between the guard's `MSR`s (module docs).
        unsafe {
            asm!(
                "fmul {r:v}.4s, {a:v}.4s, {b:v}.4s",
                r = lateout(vreg) r,
                a = in(vreg) self.0,
                b = in(vreg) b.0,
                options(nomem, nostack, preserves_flags)
            )
        };
        V128(r)
    }
    #[inline(always)]
    unsafe fn div_ieee(self, b: Self) -> Self {
        // `FDIV` rounds by FPCR: to nearest even with subnormals kept under the
        // kernels' `Fpcr0` (the trait's contract).
        let r: uint32x4_t;
        // SAFETY: register operands only (base AdvSIMD). Not `pure`: the statement stays
        // between the guard's `MSR`s (module docs).
        unsafe {
            asm!(
                "fdiv {r:v}.4s, {a:v}.4s, {b:v}.4s",
                r = lateout(vreg) r,
                a = in(vreg) self.0,
                b = in(vreg) b.0,
                options(nomem, nostack, preserves_flags)
            )
        };
        V128(r)
    }
    #[inline(always)]
    unsafe fn sub_ieee(self, b: Self) -> Self {
        // `FSUB` rounds by FPCR: to nearest even with subnormals kept under the
        // kernels' `Fpcr0` (the trait's contract).
        let r: uint32x4_t;
        // SAFETY: register operands only (base AdvSIMD). Not `pure`: the statement stays
        // between the guard's `MSR`s (module docs).
        unsafe {
            asm!(
                "fsub {r:v}.4s, {a:v}.4s, {b:v}.4s",
                r = lateout(vreg) r,
                a = in(vreg) self.0,
                b = in(vreg) b.0,
                options(nomem, nostack, preserves_flags)
            )
        };
        V128(r)
    }
    #[inline(always)]
    unsafe fn madd16(self, w: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract).
        unsafe {
            // `VPMADDWD`: the signed 16-bit halves of each lane (elements 2i and 2i + 1)
            // multiplied by the weights' halves into 32-bit products (`SMULL`, `SMULL2`),
            // then adjacent products added (`ADDP`), wrapping as `VPMADDWD` does.
            let a = vreinterpretq_s16_u32(self.0);
            let w = vreinterpretq_s16_u32(w.0);
            let lo = vmull_s16(vget_low_s16(a), vget_low_s16(w));
            let hi = vmull_high_s16(a, w);
            V128(vreinterpretq_u32_s32(vpaddq_s32(lo, hi)))
        }
    }
    #[inline(always)]
    unsafe fn cvt_u24_f32(self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). `UCVTF` of an integer
        // below 2^24 is exact and gives zero or a value of at least 1: no rounding mode,
        // flush-to-zero or NaN setting of FPCR can change it.
        unsafe { V128(vreinterpretq_u32_f32(vcvtq_f32_u32(self.0))) }
    }
    #[inline(always)]
    unsafe fn mul_exact_f32(self, b: Self) -> Self {
        // SAFETY: the caller has the features (`Vector`'s contract). The product is exact
        // and its operands and result normal (or zero, times a normal: +0), the contract: no
        // FPCR bit (rounding, FZ, DN, AH) can change it.
        unsafe {
            let p = vmulq_f32(vreinterpretq_f32_u32(self.0), vreinterpretq_f32_u32(b.0));
            V128(vreinterpretq_u32_f32(p))
        }
    }

    #[inline(always)]
    unsafe fn mul_rne(self, b: Self) -> Self {
        // `FMUL`, rounded by FPCR.RMode: to nearest even under the kernels' `Fpcr0` (FZ and
        // DN clear too, so nothing is flushed and a NaN operand propagates).
        let r: uint32x4_t;
        // SAFETY: register operands only (base AdvSIMD). Not `pure`: the statement stays
        // between the guard's `MSR`s (module docs).
        unsafe {
            asm!(
                "fmul {r:v}.4s, {a:v}.4s, {b:v}.4s",
                r = lateout(vreg) r,
                a = in(vreg) self.0,
                b = in(vreg) b.0,
                options(nomem, nostack, preserves_flags)
            )
        };
        V128(r)
    }
    #[inline(always)]
    unsafe fn div_rne(self, b: Self) -> Self {
        // `FDIV`, under `Fpcr0` as `mul_rne`.
        let r: uint32x4_t;
        // SAFETY: as for `mul_rne`.
        unsafe {
            asm!(
                "fdiv {r:v}.4s, {a:v}.4s, {b:v}.4s",
                r = lateout(vreg) r,
                a = in(vreg) self.0,
                b = in(vreg) b.0,
                options(nomem, nostack, preserves_flags)
            )
        };
        V128(r)
    }

    #[inline(always)]
    unsafe fn load_u8(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` bytes at `p`: 4 are
        // read only when `n == 4`.
        unsafe {
            let w = if n == 4 {
                p.cast::<u32>().read_unaligned()
            } else {
                u32::from_le_bytes(buffered::<4>(p, n))
            };
            let b = vreinterpret_u8_u32(vdup_n_u32(w));
            V128(vmovl_u16(vget_low_u16(vmovl_u8(b))))
        }
    }
    #[inline(always)]
    unsafe fn load_u16(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` values at `p`.
        unsafe { V128(vmovl_u16(load_x4_u16(p, n))) }
    }
    #[inline(always)]
    unsafe fn load_u32(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` values at `p`: 16
        // bytes are read only when `n == 4`.
        unsafe {
            if n == 4 {
                V128(vreinterpretq_u32_u8(vld1q_u8(p)))
            } else {
                let b = buffered::<16>(p, 4 * n);
                V128(vreinterpretq_u32_u8(vld1q_u8(b.as_ptr())))
            }
        }
    }
    #[inline(always)]
    unsafe fn load_f16(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` values at `p`; FPCR
        // is 0 (the kernels run under `Fpcr0`). Zero codes (the lanes not read) give +0.
        unsafe { V128(from_f16(load_x4_u16(p, n))) }
    }
    #[inline(always)]
    unsafe fn load_f64_odd(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` values at `p`: 32
        // bytes are read only when `n == 4`. FPCR is 0 (the kernels run under `Fpcr0`).
        unsafe {
            let (a, b) = if n == 4 {
                (vld1q_u8(p), vld1q_u8(p.add(16)))
            } else {
                let buf = buffered::<32>(p, 8 * n);
                (vld1q_u8(buf.as_ptr()), vld1q_u8(buf.as_ptr().add(16)))
            };
            // `FCVTXN` rounds to odd whatever FPCR.RMode holds; under FPCR = 0 (FZ clear)
            // f32 subnormal results are kept too, and a NaN stays a NaN with its sign.
            // Above f32::MAX the result is f32::MAX or Inf, both above every target's cap,
            // as the source is. `r` is an early `out`: `FCVTXN2` still reads `b`.
            let r: uint32x4_t;
            asm!(
                "fcvtxn {r:v}.2s, {a:v}.2d",
                "fcvtxn2 {r:v}.4s, {b:v}.2d",
                r = out(vreg) r,
                a = in(vreg) a,
                b = in(vreg) b,
                options(nomem, nostack, preserves_flags)
            );
            V128(r)
        }
    }
    #[inline(always)]
    unsafe fn load_f64_hi(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n` values at `p`: 32
        // bytes are read only when `n == 4`.
        unsafe {
            let (a, b) = if n == 4 {
                (vld1q_u8(p), vld1q_u8(p.add(16)))
            } else {
                let buf = buffered::<32>(p, 8 * n);
                (vld1q_u8(buf.as_ptr()), vld1q_u8(buf.as_ptr().add(16)))
            };
            let (a, b) = (vreinterpretq_u32_u8(a), vreinterpretq_u32_u8(b));
            // Little endian: each f64 is (low word, high word); UZP2 takes the high words in
            // order, UZP1 the low ones. Integer only.
            let hi = vuzp2q_u32(a, b);
            let lo = vuzp1q_u32(a, b);
            let sticky = vandq_u32(vtstq_u32(lo, lo), vdupq_n_u32(1));
            V128(vorrq_u32(hi, sticky))
        }
    }
    #[inline(always)]
    unsafe fn load_nibbles(p: *const u8, n: usize) -> Self {
        // SAFETY: the caller has the features and vouches for the `n.div_ceil(2)` bytes at
        // `p`: 2 are read only when `n == 4`.
        unsafe {
            let w = if n == 4 {
                u16::from_le_bytes(p.cast::<[u8; 2]>().read()) as u32
            } else {
                // The nibbles past `n` (the high one of an odd last byte) are cleared, so
                // the lanes not read hold zero bits.
                let b = u16::from_le_bytes(buffered::<2>(p, n.div_ceil(2))) as u32;
                b & ((1 << (4 * n)) - 1)
            };
            let shifts = vcombine_s32(
                vcreate_s32(0xFFFF_FFFC_0000_0000),
                vcreate_s32(0xFFFF_FFF4_FFFF_FFF8),
            );
            let v = vshlq_u32(vdupq_n_u32(w), shifts);
            V128(vandq_u32(v, vdupq_n_u32(0xF)))
        }
    }

    #[inline(always)]
    unsafe fn store_u8(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` bytes at `p`: 4 are
        // written only when `n == 4`.
        unsafe {
            let h = vmovn_u32(self.0);
            let b = vmovn_u16(vcombine_u16(h, h));
            let w = vget_lane_u32::<0>(vreinterpret_u32_u8(b));
            if n == 4 {
                p.cast::<u32>().write_unaligned(w);
            } else {
                unbuffer(&w.to_le_bytes(), p, n);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_u16(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` values at `p`.
        unsafe { store_x4_u16(vmovn_u32(self.0), p, n) }
    }
    #[inline(always)]
    unsafe fn store_u32(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` values at `p`: 16
        // bytes are written only when `n == 4`.
        unsafe {
            if n == 4 {
                vst1q_u8(p, vreinterpretq_u8_u32(self.0));
            } else {
                let mut buf = [0u8; 16];
                vst1q_u8(buf.as_mut_ptr(), vreinterpretq_u8_u32(self.0));
                unbuffer(&buf, p, 4 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_f64(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n` values at `p`: 32
        // bytes are written only when `n == 4`. FPCR is 0 (the kernels run under `Fpcr0`).
        unsafe {
            // `FCVTL` f32 → f64 is exact; under FPCR = 0 an f32 denormal is kept (FZ clear:
            // it would otherwise be read as zero) and a NaN is quieted with its payload and
            // sign kept (DN clear), as the contract says. `lo` is an early `out`: `FCVTL2`
            // still reads `x`.
            let (lo, hi): (uint8x16_t, uint8x16_t);
            asm!(
                "fcvtl {lo:v}.2d, {x:v}.2s",
                "fcvtl2 {hi:v}.2d, {x:v}.4s",
                lo = out(vreg) lo,
                hi = lateout(vreg) hi,
                x = in(vreg) self.0,
                options(nomem, nostack, preserves_flags)
            );
            if n == 4 {
                vst1q_u8(p, lo);
                vst1q_u8(p.add(16), hi);
            } else {
                let mut buf = [0u8; 32];
                vst1q_u8(buf.as_mut_ptr(), lo);
                vst1q_u8(buf.as_mut_ptr().add(16), hi);
                unbuffer(&buf, p, 8 * n);
            }
        }
    }
    #[inline(always)]
    unsafe fn store_f16(self, p: *mut u8, n: usize, sat: bool) {
        // SAFETY: the caller has the features and vouches for the `n` values at `p`; FPCR
        // is 0 (the kernels run under `Fpcr0`).
        unsafe { store_x4_u16(to_f16(self.0, sat), p, n) }
    }
    #[inline(always)]
    unsafe fn round_f16(self, sat: bool) -> Self {
        // SAFETY: the caller has the features; FPCR is 0 (the kernels run under `Fpcr0`):
        // one IEEE rounding (`FCVTN`) and an exact widening (`FCVTL`).
        unsafe { V128(from_f16(to_f16(self.0, sat))) }
    }
    #[inline(always)]
    unsafe fn store_nibbles(self, p: *mut u8, n: usize) {
        // SAFETY: the caller has the features and vouches for the `n.div_ceil(2)` bytes at
        // `p`: 2 are written only when `n == 4`.
        unsafe {
            // As 64-bit lanes, `v | v >> 28` holds lane 2i | lane 2i+1 << 4 in its low byte
            // (both codes below 16); `XTN` keeps the low word of each.
            let v = vreinterpretq_u64_u32(self.0);
            let x = vmovn_u64(vorrq_u64(v, vshrq_n_u64::<28>(v)));
            let bytes = [vget_lane_u32::<0>(x) as u8, vget_lane_u32::<1>(x) as u8];
            if n == 4 {
                p.cast::<[u8; 2]>().write(bytes);
            } else {
                unbuffer(&bytes, p, n.div_ceil(2));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The instantiation: the generic kernels compiled for NEON.
// ---------------------------------------------------------------------------------------

use crate::arch::Isa;
use crate::block::spec::kernels::{BlockKernels, NvRows};
use crate::block::spec::{BlockDest, BlockSource};
use crate::options::Policy;
use crate::simd::generic::block::mx;
use crate::simd::generic::block::nvfp4;
use crate::simd::generic::kernels::{Dst, Src, run};
use crate::simd::generic::registry::fill_registry_items;

/// The generic kernel from `S` to `D`, compiled for NEON, run under FPCR = 0 (module docs).
///
/// # Safety
/// As for [`RawKernel`](crate::arch::RawKernel); the CPU has AdvSIMD.
#[target_feature(enable = "neon")]
unsafe fn k<S: Src, D: Dst>(src: *const u8, dst: *mut u8, len: usize, p: Policy) {
    // Every kernel, not only those whose source or destination `NEEDS_RN`: F16's `FCVTN`
    // and `FCVTL` and the f64 `FCVTL` depend on FPCR's other bits (`AHP`, `FZ`, `DN`) as
    // well. The guard is dropped (the caller's FPCR restored) after the loop.
    let _fpcr = Fpcr0::new();
    // SAFETY: forwarded contract; AdvSIMD is enabled on this function, and the tables that
    // hold it are chosen only when `neon_available` found it; FPCR is 0 for the loop.
    unsafe { run::<V128, S, D>(src, dst, len, p) }
}

// `fill_registry(t, from)`: every pair and round trip of the registry's formats from index
// `from` on, as generic kernels at 128 bits (`simd/generic/registry.rs`). The `neon` table
// fills every format with it, then puts the hand-written kernels of `arch/aarch64` on top
// for the f32/f64 pairs they have (`FCVTN`/`FCVTL` for F16, the integer fp8 narrowing,
// `TBL` widenings, and `BFCVTN` on `neon-bf16`).
crate::format::for_each_format!(fill_registry_items);

/// The generic MX block kernels (`simd/generic/block/mx.rs`) compiled for NEON.
struct Blocks;

/// [`mx::dequant`] at 128 bits, under FPCR = 0 (`FCVTN` of the F16 destination and the
/// subnormal codes' exact `FMUL` obey FPCR).
///
/// # Safety
/// The `MxDequantFn` contract; the CPU has AdvSIMD.
#[target_feature(enable = "neon")]
unsafe fn mx_dequant<E: mx::Element, D: mx::Dest>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    let _fpcr = Fpcr0::new();
    // SAFETY: forwarded contract; AdvSIMD is enabled on this function; FPCR is 0 for the
    // loop (the guard restores the caller's after it).
    unsafe { mx::dequant::<V128, E, D>(codes, scales, blocks, dst) }
}

/// The generic NVFP4 dequantization (`simd/generic/block/nvfp4.rs`) compiled for NEON, run
/// under FPCR = 0 (`Fpcr0`), the block kernels' environment.
///
/// # Safety
/// As for [`NvFn`](crate::block::spec::kernels::NvFn); the CPU has AdvSIMD.
#[target_feature(enable = "neon")]
unsafe fn nv_dq<const P: usize, const L: usize, D: BlockDest>(a: &NvRows) -> bool {
    let _fpcr = Fpcr0::new();
    // SAFETY: forwarded contract; AdvSIMD is enabled on this function, FPCR is 0 for the call.
    unsafe { nvfp4::dequantize::<V128, P, L, D>(a) }
}

/// The generic NVFP4 quantization compiled for NEON, as [`nv_dq`].
///
/// # Safety
/// As for [`nv_dq`].
#[target_feature(enable = "neon")]
unsafe fn nv_q<const P: usize, const L: usize, S: BlockSource>(a: &NvRows) -> bool {
    let _fpcr = Fpcr0::new();
    // SAFETY: as in `nv_dq`.
    unsafe { nvfp4::quantize::<V128, P, L, S>(a) }
}

/// [`mx::quant`] at 128 bits, under FPCR = 0 (the multiply-add).
///
/// # Safety
/// The `MxQuantFn` contract; the CPU has AdvSIMD.
#[target_feature(enable = "neon")]
unsafe fn mx_quant<E: mx::Element, const CEIL: bool>(
    src: *const u8,
    blocks: usize,
    codes: *mut u8,
    scales: *mut u8,
) {
    let _fpcr = Fpcr0::new();
    // SAFETY: as for `mx_dequant`.
    unsafe {
        mx::quant::<V128, E, CEIL, crate::simd::generic::block::fp8::Layer>(
            src, blocks, codes, scales,
        )
    }
}

impl mx::Inst for Blocks {
    const ISA: Isa = Isa::Neon;
    unsafe fn dequant<E: mx::Element, D: mx::Dest>(
        codes: *const u8,
        scales: *const u8,
        blocks: usize,
        dst: *mut u8,
    ) {
        // SAFETY: forwarded contract; the tables that hold this are chosen only when
        // `neon_available` found AdvSIMD.
        unsafe { mx_dequant::<E, D>(codes, scales, blocks, dst) }
    }
    unsafe fn quant<E: mx::Element, const CEIL: bool>(
        src: *const u8,
        blocks: usize,
        codes: *mut u8,
        scales: *mut u8,
    ) {
        // SAFETY: as for `dequant`.
        unsafe { mx_quant::<E, CEIL>(src, blocks, codes, scales) }
    }
}

/// Sets the block-kernel slots (`src/block/spec/kernels.rs`) that this instantiation serves:
/// the MX `Ocp`/`Ceil` dequantization and quantization of every element, the `Ggml` and
/// `Mlx` profiles, `amax`, block FP8, NVFP4 and the fused scaled building blocks. Block FP8
/// dequantization is then overridden by the hand-written kernel that
/// `arch/aarch64/block_tables.rs` sets after this (kept from before; not timed against the
/// generic one on aarch64 hardware, and qemu timings mean nothing).
pub(crate) const fn fill_block(t: &mut BlockKernels) {
    mx::fill::<Blocks>(t);
    // The MX `Ggml` and `Mlx` profiles and the ggml layout.
    fill_block_profiles(t);
    t.generic_isa = Isa::Neon;
    // Block FP8, `amax` and the fused scaled building blocks.
    block_kernels::fill_block(t);
    // NVFP4: every profile, layout and type.
    nvfp4::nv_fill!(t, nv_dq, nv_q);
}

crate::simd::generic::block::instantiate_profiles!(V128, "neon", super::Fpcr0::new());

crate::simd::generic::block::instances::block_instances!(
    V128,
    [#[target_feature(enable = "neon")]],
    crate::simd::aarch64::Fpcr0::new()
);
