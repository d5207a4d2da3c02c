//! The x86-64 implementations of [`Vector`](super::Vector), their kernel instantiations,
//! and the MXCSR access they share with the hand-written kernels.

// Not registered in any table (see its module docs).
#[allow(dead_code)]
pub(crate) mod avx2;
pub(crate) mod avx512;

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
