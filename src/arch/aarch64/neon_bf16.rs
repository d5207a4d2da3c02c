//! The `neon-bf16` backend: AdvSIMD with FEAT_BF16.
//!
//! FEAT_BF16 adds `BFCVTN`/`BFCVTN2`, which narrow f32 to BF16 under the control of FPCR.
//! Under FPCR = 0 (the `neon` module's policy: every loop that uses a floating-point
//! instruction is one `asm!` block that sets FPCR to 0 if it is not already, and restores it
//! before the block ends) that is round to nearest even, subnormals kept, and a NaN quieted
//! with its sign and top payload bits kept — `(x >> 16) | 0x40`, exactly the contract.
//! Saturation uses the `neon` fix-up (`±Inf -> ±MAX`, NaN untouched).
//!
//! * f32 → BF16: `BFCVTN`/`BFCVTN2`.
//! * f64 → BF16: `FCVTXN` (round to odd to f32, which a second rounding to 8 bits turns into
//!   the single correctly rounded result), then `BFCVTN`, in one loop.
//!
//! BF16 instructions do not help the other pairs: they are the `neon` tier's kernels.

use core::arch::aarch64::*;

use super::neon::{cover, fpcr_loop, sat_key};
use crate::BF16;
use crate::arch::Kernels;
use crate::arch::scalar::{f32_to_narrow, f64_to_narrow};
use crate::options::Policy;

/// `chunks` chunks of 8: f32 -> BF16 with `BFCVTN`.
///
/// # Safety
/// `src` valid for reading `8 * chunks` f32, `dst` for writing `8 * chunks` BF16,
/// `chunks >= 1`; the CPU has FEAT_BF16.
#[inline]
#[target_feature(enable = "neon,bf16")]
unsafe fn f32_to_bf16_loop(src: *const u8, dst: *mut u8, chunks: usize, key: uint16x8_t) {
    // SAFETY: each iteration reads 32 bytes and writes 16 and advances both, `chunks` times,
    // in bounds by the caller's guarantee; BFCVTN needs FEAT_BF16, which the caller
    // guarantees; FPCR is restored before the block ends.
    unsafe {
        fpcr_loop!(
            [
                "ldp {a:q}, {b:q}, [{src}], #32",
                "bfcvtn {o:v}.4h, {a:v}.4s",
                "bfcvtn2 {o:v}.8h, {b:v}.4s",
                // Saturation fix-up: ±Inf - 1 = ±MAX when `key` is the shifted Inf.
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

/// `chunks` chunks of 8: f64 -> BF16 with `FCVTXN` then `BFCVTN`.
///
/// # Safety
/// `src` valid for reading `8 * chunks` f64, `dst` for writing `8 * chunks` BF16,
/// `chunks >= 1`; the CPU has FEAT_BF16.
#[inline]
#[target_feature(enable = "neon,bf16")]
unsafe fn f64_to_bf16_loop(src: *const u8, dst: *mut u8, chunks: usize, key: uint16x8_t) {
    // SAFETY: each iteration reads 64 bytes and writes 16 and advances both, `chunks` times,
    // in bounds by the caller's guarantee; FEAT_BF16 guaranteed by the caller; FPCR is
    // restored before the block ends.
    unsafe {
        fpcr_loop!(
            [
                "ldp {a:q}, {b:q}, [{src}], #32",
                "ldp {c:q}, {d:q}, [{src}], #32",
                "fcvtxn {w:v}.2s, {a:v}.2d",
                "fcvtxn2 {w:v}.4s, {b:v}.2d",
                "fcvtxn {x:v}.2s, {c:v}.2d",
                "fcvtxn2 {x:v}.4s, {d:v}.2d",
                "bfcvtn {o:v}.4h, {w:v}.4s",
                "bfcvtn2 {o:v}.8h, {x:v}.4s",
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

/// f32 -> BF16.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel); the CPU must have FEAT_BF16.
#[target_feature(enable = "neon,bf16")]
unsafe fn f32_to_bf16(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    let key = vdupq_n_u16(sat_key(policy.overflow, 0xFF00));
    cover::<8>(
        len,
        // SAFETY: `cover` passes whole chunks inside `0..len`, which the caller guarantees
        // are readable (f32, 4 bytes) and writable (BF16, 2 bytes); FEAT_BF16 likewise.
        |i, n| unsafe { f32_to_bf16_loop(src.add(4 * i), dst.add(2 * i), n, key) },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { f32_to_narrow::<BF16>(src, dst, len, policy) },
    );
}

/// f64 -> BF16.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel); the CPU must have FEAT_BF16.
#[target_feature(enable = "neon,bf16")]
unsafe fn f64_to_bf16(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    let key = vdupq_n_u16(sat_key(policy.overflow, 0xFF00));
    cover::<8>(
        len,
        // SAFETY: whole chunks inside `0..len` (f64 8 bytes, BF16 2 bytes); FEAT_BF16 is
        // guaranteed by the caller.
        |i, n| unsafe { f64_to_bf16_loop(src.add(8 * i), dst.add(2 * i), n, key) },
        // SAFETY: the caller's guarantee for `len` elements.
        || unsafe { f64_to_narrow::<BF16>(src, dst, len, policy) },
    );
}

/// Replaces the two BF16 narrowing kernels of a NEON table with BFCVTN ones.
pub(super) const fn set(t: &mut Kernels) {
    t.set::<f32, BF16>(f32_to_bf16);
    t.set::<f64, BF16>(f64_to_bf16);
}
