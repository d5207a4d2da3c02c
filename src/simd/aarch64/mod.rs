//! The aarch64 implementation of [`Vector`](super::Vector) (`neon`), its kernel
//! instantiations, and the FPCR guard they run under.

pub(crate) mod neon;

use core::arch::asm;

/// FPCR = 0 for the lifetime of the value: round to nearest even, no flush-to-zero (`FZ`,
/// `FZ16`, and FEAT_AFP's `FIZ`), NaN operands propagated (`DN` clear), IEEE binary16 (`AHP`
/// clear), `AH` clear, no traps. It reads FPCR once (`MRS`) and writes 0 only if FPCR is not
/// 0 already (`MSR FPCR` can be slow); dropping it restores the caller's value (also on
/// unwinding). The reset value is the environment Rust code assumes anyway, so the Rust code
/// that runs between the two `MSR`s is unaffected.
///
/// The compiler does not model FPCR: a floating-point instruction that must run under the
/// guard is issued as a side-effecting `asm!` statement, which the compiler keeps in program
/// order with the guard's `MSR`s (see `neon.rs`).
pub(crate) struct Fpcr0 {
    saved: u64,
}

impl Fpcr0 {
    /// Sets FPCR to 0 (if it is not already) until the value is dropped.
    #[inline(always)]
    pub(crate) fn new() -> Fpcr0 {
        let saved: u64;
        // SAFETY: MRS/MSR FPCR are allowed at EL0 on every aarch64 core (FP and AdvSIMD are
        // part of the base architecture) and touch no memory; 0 is a valid FPCR value (the
        // reset value). `drop` puts the caller's value back.
        unsafe {
            asm!(
                "mrs {s}, fpcr",
                "cbz {s}, 2f",
                "msr fpcr, xzr",
                "2:",
                s = out(reg) saved,
                options(nomem, nostack)
            )
        };
        Fpcr0 { saved }
    }
}

impl Drop for Fpcr0 {
    #[inline(always)]
    fn drop(&mut self) {
        if self.saved != 0 {
            // SAFETY: as in `new`: restores the value FPCR held before `new`.
            unsafe { asm!("msr fpcr, {s}", s = in(reg) self.saved, options(nomem, nostack)) };
        }
    }
}
