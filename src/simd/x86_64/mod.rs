//! The x86-64 implementations of [`Vector`](super::Vector), their kernel instantiations,
//! and the MXCSR access they share with the hand-written kernels.

pub(crate) mod avx2;
pub(crate) mod avx512;
pub(crate) mod avx512_fp8;
pub(crate) mod avx512_scaled;

/// The current MXCSR.
#[inline]
pub(crate) fn mxcsr() -> u32 {
    let mut csr = 0u32;
    // SAFETY: STMXCSR stores MXCSR into the 4 bytes of `csr`, a live local, and does nothing
    // else. Every x86-64 CPU has it (SSE).
    unsafe {
        core::arch::asm!(
            "stmxcsr [{p}]",
            p = in(reg) &mut csr,
            options(nostack, preserves_flags)
        )
    };
    csr
}

/// Whether MXCSR.RC rounds to nearest, found by arithmetic instead of by reading MXCSR:
/// `STMXCSR` and the load of its result cost a short call about as much as its conversion
/// (`docs/performance.md`, "Short calls"), while two additions and a compare pipeline.
///
/// Lanes 0 and 1 compute `1 + 3 · 2^-25` and `−1 − 3 · 2^-25`: three quarters of an ulp of
/// 1 beyond ±1, so neither sum is exact or a tie. Round to nearest gives `±(1 + 2^-23)`;
/// rounding down gives `+1` in lane 0, rounding up `−1` in lane 1, and rounding toward zero
/// both. So both lanes equal `±(1 + 2^-23)` exactly under round to nearest and not both
/// under any other mode. Every operand and result is a normal f32, so FTZ and DAZ change
/// nothing; the only side effect is the sticky inexact flag, which the kernels' own
/// arithmetic sets as well (so a caller that unmasks the precision exception, which nothing
/// in the default environment does, gets it here on every call, not only for inexact
/// values). The callers' kernels use VEX instructions already (the
/// `VADDPS`/`VCMPPS` here need AVX, which every caller's tier has).
///
/// # Safety
/// The CPU has AVX.
#[inline(always)]
pub(crate) unsafe fn rounds_to_nearest() -> bool {
    use core::arch::x86_64::{__m128, _mm_setr_ps};
    let d = f32::from_bits(0x33C0_0000); // 3 · 2^-25
    // SAFETY: SSE, which every x86-64 CPU has.
    let (x, y, e): (__m128, __m128, __m128) = unsafe {
        (
            _mm_setr_ps(1.0, -1.0, 0.0, 0.0),
            _mm_setr_ps(d, -d, 0.0, 0.0),
            _mm_setr_ps(
                f32::from_bits(0x3F80_0001),
                f32::from_bits(0xBF80_0001),
                0.0,
                0.0,
            ),
        )
    };
    let mask: u32;
    // SAFETY: register-only AVX instructions (the caller's guarantee that the CPU has
    // them); the block reads MXCSR.RC through the addition, so it is not `pure`: the
    // compiler keeps it where it is written, after any earlier `LDMXCSR`.
    unsafe {
        core::arch::asm!(
            "vaddps {s}, {x}, {y}",
            "vcmpeqps {s}, {s}, {e}",
            "vmovmskps {m:e}, {s}",
            x = in(xmm_reg) x,
            y = in(xmm_reg) y,
            e = in(xmm_reg) e,
            s = out(xmm_reg) _,
            m = out(reg) mask,
            options(nostack, preserves_flags)
        )
    };
    // Lanes 2 and 3 compute 0 + 0 == 0: always set.
    mask == 0xF
}

/// Loads `csr` into MXCSR.
///
/// # Safety
/// `csr` is a valid MXCSR value (reserved bits 16-31 clear), and the caller restores the
/// previous value before returning to code that expects it.
#[inline]
pub(crate) unsafe fn load_mxcsr(csr: u32) {
    // SAFETY: LDMXCSR reads the 4 bytes of `csr`, a live local; the caller guarantees the
    // value is valid. Not `nomem`: the compiler must not move memory accesses across it.
    unsafe {
        core::arch::asm!(
            "ldmxcsr [{p}]",
            p = in(reg) &csr,
            options(nostack, preserves_flags)
        )
    };
}

/// MXCSR.RC = round to nearest for the lifetime of the value (the AVX2 block kernels'
/// guard, as the AVX2 element entry point `avx2::k` does inline): when the caller's MXCSR
/// rounds otherwise (rare), a copy with RC cleared is loaded, and dropping the guard puts the
/// caller's MXCSR (flags included) back. FTZ and DAZ are left as they are: the kernels argue
/// why they cannot change their results. The `LDMXCSR` statements are not `nomem`, so the
/// kernel's loads and stores, and the arithmetic between them that depends on the loads,
/// stay between the two.
pub(crate) struct RoundNearest {
    saved: Option<u32>,
}

impl RoundNearest {
    /// Sets MXCSR.RC to round to nearest (if it is not already) until the value is dropped.
    /// Only the AVX2 block kernels make one (their tier has AVX).
    #[inline(always)]
    pub(crate) fn new() -> RoundNearest {
        // SAFETY: only the `avx2` instantiations of the block kernels call this, in
        // functions compiled for AVX2 that run only where `avx2_available` found it.
        if unsafe { rounds_to_nearest() } {
            return RoundNearest { saved: None };
        }
        let csr = mxcsr();
        if csr & 0x6000 == 0 {
            return RoundNearest { saved: None };
        }
        // SAFETY: `csr` with RC cleared is a valid MXCSR value (it came from STMXCSR);
        // `drop` restores `csr`.
        unsafe { load_mxcsr(csr & !0x6000) };
        RoundNearest { saved: Some(csr) }
    }
}

impl Drop for RoundNearest {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(csr) = self.saved {
            // SAFETY: the value STMXCSR gave in `new`.
            unsafe { load_mxcsr(csr) };
        }
    }
}

/// MXCSR = `0x1F80` (round to nearest even, no FTZ, no DAZ, every exception masked; the
/// caller's flags kept) for the lifetime of the value, and the caller's MXCSR (flags
/// included) back when it is dropped: the floating-point environment of the block kernels,
/// under which [`Vector::mul_ieee`](crate::simd::Vector::mul_ieee) and its kin are the IEEE
/// operations. MXCSR is read once; it is written only when it differs (`LDMXCSR` is
/// serialising on some cores). The `asm!` statements are not `nomem`, so the compiler keeps
/// the kernel's loads and stores, and the arithmetic between them, inside the guard.
pub(crate) struct MxcsrDefault {
    saved: u32,
}

impl MxcsrDefault {
    /// Loads the default MXCSR if it is not loaded already.
    #[inline(always)]
    pub(crate) fn new() -> MxcsrDefault {
        let saved = mxcsr();
        if saved & !0x3F != 0x1F80 {
            // SAFETY: a valid MXCSR value (the default with the caller's flags); `drop`
            // restores the caller's.
            unsafe { load_mxcsr(0x1F80 | (saved & 0x3F)) };
        }
        MxcsrDefault { saved }
    }
}

impl Drop for MxcsrDefault {
    #[inline(always)]
    fn drop(&mut self) {
        if self.saved & !0x3F != 0x1F80 {
            // SAFETY: the value MXCSR held before `new`.
            unsafe { load_mxcsr(self.saved) };
        }
    }
}

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    /// The probe against MXCSR itself, under each rounding mode (FTZ and DAZ on and off).
    pub fn rounds_to_nearest_matches_mxcsr() {
        if !std::is_x86_feature_detected!("avx") {
            return;
        }
        let saved = super::mxcsr();
        for rc in 0..4u32 {
            for flags in [0, 1 << 15 | 1 << 6] {
                let csr = 0x1F80 | rc << 13 | flags;
                // SAFETY: a valid MXCSR value, restored below before any other float code;
                // the CPU has AVX (checked above).
                let got = unsafe {
                    super::load_mxcsr(csr);
                    let got = super::rounds_to_nearest();
                    super::load_mxcsr(saved);
                    got
                };
                assert_eq!(got, rc == 0, "MXCSR {csr:#06x}");
            }
        }
    }
}
