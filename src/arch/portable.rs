//! The portable backend: plain Rust that the compiler vectorises, cloned per instruction set
//! with `multiversion`, for the targets that have no hand-written tier.
//!
//! # Why plain Rust here, and `std::arch` elsewhere
//!
//! The AVX2, AVX-512 and NEON kernels are written with `std::arch` because their exactness
//! rests on particular instructions (embedded rounding, mask merges, `VCVTPS2PH`, `BFCVTN`)
//! and on arguments about the FP environment that only hold for those instructions. On
//! x86-64 hosts without AVX2 (x86-64-v2), LoongArch, IBM Z, RISC-V and WebAssembly there is
//! no such tier, and the conversions are simple enough (integer rounding on the bit pattern,
//! a few compares and selects) that LLVM vectorises them for any SIMD unit it knows, provided
//! the code is written without the two things that stop it: a branch per element and a shift
//! by a per-element amount (SSE4, the s390x vector facility and wasm `simd128` shift every
//! lane by the same count).
//!
//! # The lane functions
//!
//! [`Lanes::narrow`] and [`Lanes::widen`] compute one element's code without a branch and
//! with constant shifts only. They are a second formulation of the codec of
//! [`crate::codec`], proven equal to it by the same exhaustive tests that prove the SIMD
//! kernels (every f32 bit pattern on x86-64, every code of every format):
//!
//! * **Narrowing, normal results.** As in the codec: re-bias the exponent by subtracting
//!   `(127 - BIAS) << 23` from the magnitude bits and round away `23 - MAN_BITS` bits with
//!   the integer round-to-nearest-even `(r + half - 1 + lsb) >> s`.
//! * **Narrowing, subnormal results.** The codec shifts the significand right by an amount
//!   that depends on the exponent. Here the f32 value is instead multiplied by
//!   `2^(BIAS + MAN_BITS - 1)`, which makes the target's subnormal quantum 1. That product is
//!   exact in every rounding mode: a power of two only moves the exponent, and the result is
//!   a normal f32 (or, for an f32 subnormal source, a value below 2^-100 that rounds to code 0
//!   however it is rounded or flushed). Its integer part `t` comes from a truncating
//!   conversion (`as i32`, which is `CVTTPS2DQ` on x86 and does not read the rounding mode)
//!   and its fraction `y - t` is exact (both are below 2^24 and `t` is `y`'s integer part);
//!   rounding to nearest even is then a comparison of the fraction with 0.5. No result
//!   depends on MXCSR, FPCR or any other FP environment.
//! * **Widening, subnormal codes.** The codec normalises with a leading-zero count. Here the
//!   fraction `m` (an integer below 2^10) is converted to f32, exactly, and its exponent
//!   field lowered by `BIAS + MAN_BITS - 1`: `m · 2^(1 - BIAS - MAN_BITS)`, a normal f32 for
//!   every format but BF16, whose subnormals are f32 subnormals and only move up 16 bits.
//! * Specials (NaN, infinity, overflow, fnuz's missing negative zero) are selects between
//!   values computed for every lane.
//!
//! # Kernels and dispatch
//!
//! A kernel is a plain loop over the elements (byte slices, native-endian loads and stores),
//! which the compiler vectorises. Each kernel is cloned by `#[multiversion]` for x86-64-v2 (SSE4.2), LoongArch LASX and the s390x vector
//! facility; the clone is chosen at run time by `multiversion`'s dispatcher (the baseline
//! clone runs where none applies, e.g. SSE2-only x86-64). On riscv64, runtime-selected `v`
//! clones need a nightly compiler; a build with `-C target-feature=+v` vectorises the
//! baseline clone for it. On wasm32 the same kernels form the `simd128` backend, selected
//! at compile time (`-C target-feature=+simd128`), because WebAssembly has no run-time
//! feature detection.
//!
//! A pair gets a portable kernel only where it measured faster than the Scalar kernel
//! (`cargo run --release --example throughput -- --size 1024`, `portable` or `simd128`
//! against `scalar`; docs/performance.md has the `simd128` ratios); the others keep the Scalar kernel.
//! The narrowing kernels implement [`NanPolicy::Preserve`](crate::NanPolicy::Preserve);
//! the other NaN policies are patched in by the dispatcher, as for every SIMD backend.

use core::mem::size_of;

use super::Kernels;
use crate::codec::{self, Code, Format, NanKind};
use crate::options::{NanPolicy, Policy};
use crate::{
    BF16, F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F16, Overflow,
};

/// The branch-free element functions of a format (see the module docs). The defaults are
/// the IEEE-like formulation; E8M0 overrides both.
pub(crate) trait Lanes: Format + Code {
    /// The code of f32 bits `x` under [`NanPolicy::Preserve`], saturating when `sat`.
    #[inline(always)]
    fn narrow(x: u32, sat: bool) -> u32 {
        ieee_narrow::<Self>(x, sat)
    }

    /// The f32 bits of code `c` (already masked to the format's width).
    #[inline(always)]
    fn widen(c: u32) -> u32 {
        ieee_widen::<Self>(c)
    }
}

impl Lanes for F16 {}
impl Lanes for BF16 {
    /// Every BF16 code, NaN and subnormal included, is the top half of its f32.
    #[inline(always)]
    fn widen(c: u32) -> u32 {
        c << 16
    }
}
impl Lanes for F8E4M3 {}
impl Lanes for F8E5M2 {}
impl Lanes for F8E4M3FNUZ {}
impl Lanes for F8E5M2FNUZ {}
impl Lanes for F6E2M3 {}
impl Lanes for F6E3M2 {}
impl Lanes for F4E2M1 {}

impl Lanes for F8E8M0 {
    #[inline(always)]
    fn narrow(x: u32, sat: bool) -> u32 {
        let a = x & 0x7FFF_FFFF;
        // Normal: the exponent, plus one when the fraction is at least one half (ties up),
        // which adding half of the exponent's unit does by carrying.
        let c = a.wrapping_add(0x0040_0000) >> 23;
        let normal = if c > 0xFE {
            if sat { 0xFE } else { 0xFF }
        } else {
            c
        };
        // f32 subnormal: 2^-127 (code 0) below the tie 1.5 · 2^-127, 2^-126 from it.
        let sub = (a >= 0x0060_0000) as u32;
        let v = if a < 0x0080_0000 { sub } else { normal };
        // Negative, zero and infinity have no code: 0xFF, as NaN (Preserve).
        let none = (x != a) | (a == 0) | (a >= 0x7F80_0000);
        if none { 0xFF } else { v }
    }

    #[inline(always)]
    fn widen(c: u32) -> u32 {
        // 0x00 is 2^-127, the f32 subnormal with only bit 22 set; 0xFF the quiet NaN.
        let v = if c == 0 { 0x0040_0000 } else { c << 23 };
        if c == 0xFF { 0x7FC0_0000 } else { v }
    }
}

/// Branch-free narrowing of f32 bits for an IEEE-like format, equal to
/// `codec::narrow_f32::<F>(x, Policy { overflow, nan: Preserve })`.
#[inline(always)]
fn ieee_narrow<F: Format + ?Sized>(x: u32, sat: bool) -> u32 {
    let sign = (x >> 31) << (F::BITS - 1);
    let a = x & 0x7FFF_FFFF;
    // Normal in the target: re-bias, then round away `s` bits to nearest even. For sources
    // below the target's normal range `r` wraps; the subnormal path is selected there.
    let s = 23 - F::MAN_BITS;
    let r = a.wrapping_sub(((127 - F::BIAS) as u32) << 23);
    let normal = r
        .wrapping_add((1 << (s - 1)) - 1)
        .wrapping_add((r >> s) & 1)
        >> s;
    let mag = if F::BIAS == 127 {
        // BF16: f32 subnormals are BF16 subnormals, and the bit rounding above is already
        // right for them.
        normal
    } else {
        // Subnormal in the target: y = |x| / quantum, exact (module docs); t + (fraction
        // rounds up) is the code. For sources in the normal range y is large or infinite
        // and the selection below discards it; `as i32` saturates, so nothing is undefined.
        let scale = f32::from_bits(((127 + F::BIAS + F::MAN_BITS as i32 - 1) as u32) << 23);
        // Sources at or above the subnormal range are clamped to its end first, so that y
        // stays below 2^MAN_BITS and the truncation below is in range (its result is not
        // selected for them).
        let limit = ((128 - F::BIAS) as u32) << 23;
        let y = f32::from_bits(if a < limit { a } else { limit }) * scale;
        // On wasm32, rustc emits the unchecked conversion as a call to a wasm intrinsic
        // (`llvm.wasm.trunc.signed`, so that it never traps), which keeps LLVM from
        // vectorising the loop; the saturating `as` is `llvm.fptosi.sat`, which becomes
        // `i32x4.trunc_sat_f32x4_s`. Both give y's integer part here.
        #[cfg(target_arch = "wasm32")]
        let t = y as i32;
        // SAFETY: y is finite and in [0, 2^MAN_BITS], far inside i32's range, so the
        // unchecked conversion (one CVTTPS2DQ-like instruction, where `as` would add a
        // saturation fix-up that the vectoriser does not handle) is defined.
        #[cfg(not(target_arch = "wasm32"))]
        let t: i32 = unsafe { y.to_int_unchecked() };
        let frac = y - t as f32;
        let up = (frac > 0.5) | ((frac == 0.5) & (t & 1 == 1));
        let sub = (t as u32).wrapping_add(up as u32);
        if a < limit { sub } else { normal }
    };
    // Overflow is decided on the rounded magnitude, as in the codec; infinity lands there
    // too (its re-biased bits are above every format's MAX).
    let overflow = if sat {
        Overflow::Saturate
    } else {
        Overflow::NonSaturating
    };
    let over = codec::overflow_code::<F>(sign, overflow);
    let nan = codec::nan_code::<F>(sign, F::nan_from_f32(a), NanPolicy::Preserve);
    let finite = if !F::NEG_ZERO && mag == 0 {
        0
    } else {
        sign | mag
    };
    let v = if mag > F::MAX { over } else { finite };
    if a > 0x7F80_0000 { nan } else { v }
}

/// Branch-free widening of a code (masked to the format's width) to f32 bits for an
/// IEEE-like format, equal to `codec::widen_f32::<F>(c)`.
#[inline(always)]
fn ieee_widen<F: Format + ?Sized>(c: u32) -> u32 {
    let sign = ((c & F::SIGN_BIT) != 0) as u32;
    let sign = sign << 31;
    let mag = c & F::MAG_MASK;
    let exp = mag >> F::MAN_BITS;
    let man = mag & codec::frac_mask::<F>();
    // Normal: the fields move up to f32's positions and the exponent is re-biased.
    let normal = (mag << (23 - F::MAN_BITS)).wrapping_add(((127 - F::BIAS) as u32) << 23);
    let sub = if F::BIAS == 127 {
        // BF16's subnormals are f32 subnormals.
        man << (23 - F::MAN_BITS)
    } else {
        // man · 2^(1 - BIAS - MAN_BITS): the exact f32 of `man`, its exponent lowered.
        ((man as i32) as f32)
            .to_bits()
            .wrapping_sub(((F::BIAS + F::MAN_BITS as i32 - 1) as u32) << 23)
    };
    let finite = if exp != 0 {
        normal
    } else if man != 0 {
        sub
    } else {
        0
    };
    let bits = if F::HAS_INF && mag == F::INF {
        0x7F80_0000
    } else {
        finite
    };
    let has_nan = F::HAS_INF || !matches!(F::NAN, NanKind::None);
    if has_nan && F::is_nan_code(c) {
        F::nan_to_f32(c)
    } else {
        sign | bits
    }
}

/// An element as the kernels read and write it: native-endian bytes.
trait Bytes: Copy {
    /// The element's size in bytes.
    const SIZE: usize;
    /// The element in `b` (exactly `SIZE` bytes).
    fn load(b: &[u8]) -> Self;
    /// Writes the element into `b` (exactly `SIZE` bytes).
    fn store(self, b: &mut [u8]);
}

macro_rules! bytes {
    ($($t:ty),*) => {$(
        impl Bytes for $t {
            const SIZE: usize = size_of::<$t>();
            // Typed loads and stores of byte arrays, not `copy_from_slice` or
            // `read_unaligned`: those go through `copy_nonoverlapping`, whose precondition
            // check in builds with debug assertions (the test profile) runs per element and
            // keeps the loop from vectorising. `chunks_exact` makes the conversions
            // infallible, so the `unwrap`s compile to nothing.
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                let a: &[u8; size_of::<$t>()] = b.try_into().unwrap();
                <$t>::from_ne_bytes(*a)
            }
            #[inline(always)]
            fn store(self, b: &mut [u8]) {
                let a: &mut [u8; size_of::<$t>()] = b.try_into().unwrap();
                *a = self.to_ne_bytes();
            }
        }
    )*};
}
bytes!(u8, u16, u32);

/// Converts `len` elements of `S` from `src` to `D` in `dst`, applying `f` to each: a plain
/// loop over byte slices that the compiler vectorises. (Slices rather than `read_unaligned`
/// per element: in builds with debug assertions, such as the test profile, every
/// `read_unaligned`/`write_unaligned` checks a precondition, which made the loop slower than
/// the Scalar kernel there; see [`Bytes`].)
///
/// # Safety
/// `src` must be valid for reading `len * size_of::<S>()` bytes and `dst` for writing
/// `len * size_of::<D>()` bytes; the ranges must not overlap.
#[inline(always)]
unsafe fn each<S: Bytes, D: Bytes>(src: *const u8, dst: *mut u8, len: usize, f: impl Fn(S) -> D) {
    // SAFETY: the caller guarantees both byte ranges, valid and disjoint; u8 has alignment 1.
    let (src, dst) = unsafe {
        (
            core::slice::from_raw_parts(src, len * S::SIZE),
            core::slice::from_raw_parts_mut(dst, len * D::SIZE),
        )
    };
    for (s, d) in src.chunks_exact(S::SIZE).zip(dst.chunks_exact_mut(D::SIZE)) {
        f(S::load(s)).store(d);
    }
}

/// Defines a kernel: cloned by `multiversion` for these targets, best first (the
/// baseline clone is added by `multiversion`); on wasm32, where nothing can be detected at
/// run time, a plain function compiled for the build's target features (`simd128`).
macro_rules! portable {
    ($(#[$m:meta])* unsafe fn $name:ident<$($g:ident: $b:path),*>($($arg:ident: $ty:ty),*) $body:block) => {
        $(#[$m])*
        #[cfg_attr(not(target_arch = "wasm32"), multiversion::multiversion(targets(
            "x86_64+sse3+ssse3+sse4.1+sse4.2+popcnt",
            "loongarch64+lasx",
            "s390x+vector+vector-enhancements-1",
            "s390x+vector",
        )))]
        unsafe fn $name<$($g: $b),*>($($arg: $ty),*) $body
    };
}

portable! {
    /// Narrows `len` f32 values to `F`, saturating.
    ///
    /// # Safety
    /// See [`RawKernel`](super::RawKernel).
    unsafe fn narrow_sat<F: Lanes>(src: *const u8, dst: *mut u8, len: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { narrow_into::<F>(src, dst, len, true) }
    }
}

portable! {
    /// Narrows `len` f32 values to `F`, overflowing as [`Overflow::NonSaturating`] says.
    ///
    /// # Safety
    /// See [`RawKernel`](super::RawKernel).
    unsafe fn narrow_nonsat<F: Lanes>(src: *const u8, dst: *mut u8, len: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { narrow_into::<F>(src, dst, len, false) }
    }
}

portable! {
    /// Widens `len` values of `F` to f32.
    ///
    /// # Safety
    /// See [`RawKernel`](super::RawKernel).
    unsafe fn widen<F: Lanes>(src: *const u8, dst: *mut u8, len: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { widen_into::<F>(src, dst, len) }
    }
}

/// The narrowing loop, inlined into each clone.
///
/// # Safety
/// See [`RawKernel`](super::RawKernel).
#[inline(always)]
unsafe fn narrow_into<F: Lanes>(src: *const u8, dst: *mut u8, len: usize, sat: bool) {
    // SAFETY: the caller's ranges hold `len` f32 sources and `len` destinations of `F`'s
    // size, which is what `chunked` is told.
    unsafe {
        match size_of::<F>() {
            1 => each::<u32, u8>(src, dst, len, |x| F::narrow(x, sat) as u8),
            _ => each::<u32, u16>(src, dst, len, |x| F::narrow(x, sat) as u16),
        }
    }
}

/// The widening loop, inlined into each clone.
///
/// # Safety
/// See [`RawKernel`](super::RawKernel).
#[inline(always)]
unsafe fn widen_into<F: Lanes>(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: as in `narrow_into`.
    unsafe {
        match size_of::<F>() {
            1 => each::<u8, u32>(src, dst, len, |c| F::widen(u32::from(c) & F::CODE_MASK)),
            _ => each::<u16, u32>(src, dst, len, |c| F::widen(u32::from(c) & F::CODE_MASK)),
        }
    }
}

/// The table entry of f32 → `F`.
///
/// # Safety
/// See [`RawKernel`](super::RawKernel).
unsafe fn f32_to<F: Lanes>(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
    // SAFETY: forwarded from the caller; the clones need no feature beyond the one their
    // dispatcher detected.
    unsafe {
        match policy.overflow {
            Overflow::Saturate => narrow_sat::<F>(src, dst, len),
            Overflow::NonSaturating => narrow_nonsat::<F>(src, dst, len),
        }
    }
}

/// The table entry of `F` → f32.
///
/// # Safety
/// See [`RawKernel`](super::RawKernel).
unsafe fn to_f32<F: Lanes>(src: *const u8, dst: *mut u8, len: usize, _policy: Policy) {
    // SAFETY: forwarded from the caller.
    unsafe { widen::<F>(src, dst, len) }
}

/// The portable backend's table: Scalar, with the pairs that measured faster than Scalar
/// (`cargo run --release --example throughput -- --size 1024`, natively and under wasmtime
/// for the wasm32 `simd128` build) replaced. On wasm32, `arch/wasm32.rs` starts the
/// `simd128` table from this one and puts the generic kernels of `simd/wasm32` on top.
pub(crate) const fn table() -> Kernels {
    let mut t = crate::arch::scalar::scalar_kernels();
    t.tag(if cfg!(target_arch = "wasm32") {
        crate::arch::Isa::Simd128
    } else {
        crate::arch::Isa::Portable
    });
    t.set::<f32, BF16>(f32_to::<BF16>);
    t.set::<F16, f32>(to_f32::<F16>);
    t.set::<BF16, f32>(to_f32::<BF16>);
    t.set::<F8E4M3, f32>(to_f32::<F8E4M3>);
    t.set::<F8E5M2, f32>(to_f32::<F8E5M2>);
    t.set::<F8E4M3FNUZ, f32>(to_f32::<F8E4M3FNUZ>);
    t.set::<F8E5M2FNUZ, f32>(to_f32::<F8E5M2FNUZ>);
    t.set::<F6E2M3, f32>(to_f32::<F6E2M3>);
    t.set::<F6E3M2, f32>(to_f32::<F6E3M2>);
    t.set::<f32, F16>(f32_to::<F16>);
    t.set::<f32, F8E4M3>(f32_to::<F8E4M3>);
    t.set::<f32, F8E5M2>(f32_to::<F8E5M2>);
    t.set::<f32, F8E4M3FNUZ>(f32_to::<F8E4M3FNUZ>);
    t.set::<f32, F8E5M2FNUZ>(f32_to::<F8E5M2FNUZ>);
    t.set_all_policies::<f32, F6E2M3>(f32_to::<F6E2M3>);
    t.set_all_policies::<f32, F6E3M2>(f32_to::<F6E3M2>);
    t.set_all_policies::<f32, F4E2M1>(f32_to::<F4E2M1>);
    // F4E2M1 -> f32 is left to Scalar: measured no faster (1.04x at 1 Ki elements), since
    // the compiler vectorises the Scalar loop of a 4-bit code nearly as well.
    //
    // Compiled to wasm simd128 and run by wasmtime, both E8M0 kernels measured no faster
    // than Scalar compiled to wasm (1.10x and 1.00x, medians of 5), so the `simd128` tier
    // leaves them to Scalar.
    if !cfg!(target_arch = "wasm32") {
        t.set::<f32, F8E8M0>(f32_to::<F8E8M0>);
        t.set::<F8E8M0, f32>(to_f32::<F8E8M0>);
    }
    t
}

/// The portable backend's kernels.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) static KERNELS: Kernels = table();

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    //! Every kernel of the table against the codec on short slices at every start offset
    //! (unaligned reads and writes) with canaries after the destination; small enough to
    //! run under Miri (the fuzz replays leave `portable` out there), which checks the
    //! pointer arithmetic and `to_int_unchecked`'s range. The exhaustive and tail tests
    //! (tests/) prove the bits on every input.
    use super::*;
    use crate::NanPolicy;

    /// Special and ordinary f32 bits: zeros, subnormals, ties, extremes, infinities, NaNs.
    const INPUTS: [u32; 20] = [
        0x0000_0000,
        0x8000_0001,
        0x0040_0000,
        0x3380_0000,
        0x3B80_0000,
        0x3C00_1000,
        0x3F80_0000,
        0x3FC0_0000,
        0x43E0_0000,
        0x43E8_0000,
        0x4780_0000,
        0x477F_F000,
        0x7F7F_FFFF,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0001,
        0xFFA0_0000,
        0xC2F0_0000,
        0x3A80_0000,
        0xBF00_0000,
    ];

    fn check<F: Lanes + Format + Code>() {
        const CANARY: u8 = 0xA5;
        let size = size_of::<F>();
        for overflow in [Overflow::Saturate, Overflow::NonSaturating] {
            let policy = Policy {
                overflow,
                nan: NanPolicy::Preserve,
            };
            for off in 0..4 {
                let n = INPUTS.len() - off;
                // Source and destination at odd byte offsets inside byte buffers.
                let mut src = [0u8; 4 * 20 + 3];
                for (i, x) in INPUTS[off..].iter().enumerate() {
                    src[3 + 4 * i..7 + 4 * i].copy_from_slice(&x.to_ne_bytes());
                }
                let mut dst = [CANARY; 2 * 20 + 9];
                // SAFETY: `n` f32 values from byte 3 of `src` (3 + 4n <= 83 bytes) and `n`
                // codes of `size` <= 2 bytes from byte 1 of `dst` (1 + 2n + 8 <= 49); the
                // portable clones' features are detected by their dispatcher.
                unsafe { f32_to::<F>(src.as_ptr().add(3), dst.as_mut_ptr().add(1), n, policy) };
                for (i, &x) in INPUTS[off..].iter().enumerate() {
                    let mut c = [0u8; 4];
                    c[..size].copy_from_slice(&dst[1 + size * i..1 + size * (i + 1)]);
                    let got = if size == 1 {
                        u32::from(c[0])
                    } else {
                        u32::from(u16::from_ne_bytes([c[0], c[1]]))
                    };
                    assert_eq!(
                        got,
                        codec::narrow_f32::<F>(x, policy),
                        "{x:#x} {overflow:?}"
                    );
                }
                assert!(dst[1 + size * n..].iter().all(|&b| b == CANARY));
                assert_eq!(dst[0], CANARY);
                // Widen the codes back, from byte 1 of `dst` into byte 1 of `wide`.
                let mut wide = [CANARY; 4 * 20 + 5];
                // SAFETY: `n` codes from byte 1 of `dst` (read above) and `n` f32 values
                // from byte 1 of `wide` (1 + 4n <= 81 bytes).
                unsafe { to_f32::<F>(dst.as_ptr().add(1), wide.as_mut_ptr().add(1), n, policy) };
                for i in 0..n {
                    let mut c = [0u8; 2];
                    c[..size].copy_from_slice(&dst[1 + size * i..1 + size * (i + 1)]);
                    let code = if size == 1 {
                        u32::from(c[0])
                    } else {
                        u32::from(u16::from_ne_bytes(c))
                    };
                    let w = u32::from_ne_bytes(wide[1 + 4 * i..5 + 4 * i].try_into().unwrap());
                    assert_eq!(w, codec::widen_f32::<F>(code), "{code:#x}");
                }
                assert!(wide[1 + 4 * n..].iter().all(|&b| b == CANARY));
            }
        }
    }

    /// Every format's kernel pair of the table (f32 to codes and back), under both overflow
    /// policies, at start offsets 0 to 3, with canaries around the destinations.
    pub fn every_kernel_on_short_unaligned_slices() {
        check::<F16>();
        check::<BF16>();
        check::<F8E4M3>();
        check::<F8E5M2>();
        check::<F8E4M3FNUZ>();
        check::<F8E5M2FNUZ>();
        check::<F6E2M3>();
        check::<F6E3M2>();
        check::<F4E2M1>();
        check::<F8E8M0>();
    }
}
