//! The x86-64 implementations of [`Vector`](super::Vector), their kernel instantiations,
//! and the MXCSR access they share with the hand-written kernels.

pub(crate) mod avx2;
pub(crate) mod avx512;
pub(crate) mod avx512_fp8;

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
    #[inline(always)]
    pub(crate) fn new() -> RoundNearest {
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
