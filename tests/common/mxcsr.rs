//! MXCSR, the x86 SSE/AVX control register, set around one call: the settings the tests run
//! conversions under (`tests/mxcsr.rs` runs all 16, `tests/exhaustive_f32.rs` the two most
//! hostile ones over all 2^32 inputs) and [`with_mxcsr`], which sets and restores it inside one
//! `asm!` block so that no Rust code outside the call runs under a non-default floating-point
//! environment.

use std::arch::asm;

/// Flush to zero: subnormal results become zero.
pub const FTZ: u32 = 1 << 15;
/// Denormals are zero: subnormal inputs read as zero.
pub const DAZ: u32 = 1 << 6;
/// All six exception masks: the power-on default MXCSR is this with round to nearest.
pub const MASKS: u32 = 0x1F80;
/// The rounding-control field's four values (bits 13–14) and their names.
pub const ROUNDING: [(u32, &str); 4] = [
    (0 << 13, "nearest"),
    (1 << 13, "down"),
    (2 << 13, "up"),
    (3 << 13, "toward zero"),
];

/// A named MXCSR value.
#[derive(Clone, Copy)]
pub struct Setting {
    /// The MXCSR value (exception masks, rounding control, FTZ, DAZ).
    pub csr: u32,
    /// What it sets, for messages.
    pub name: &'static str,
}

/// The three most hostile settings: the first two (FTZ + DAZ with rounding up and down) run
/// over all 2^32 f32 inputs in `tests/exhaustive_f32.rs`, the third (FTZ alone with rounding
/// toward zero) with the others on the samples of `tests/mxcsr.rs`.
pub fn hostile_settings() -> [Setting; 3] {
    [
        Setting {
            csr: MASKS | (2 << 13) | FTZ | DAZ,
            name: "RC=up+FTZ+DAZ",
        },
        Setting {
            csr: MASKS | (1 << 13) | FTZ | DAZ,
            name: "RC=down+FTZ+DAZ",
        },
        Setting {
            csr: MASKS | (3 << 13) | FTZ,
            name: "RC=toward zero+FTZ",
        },
    ]
}

/// Calls the closure behind `ctx` (a `*mut &mut dyn FnMut()`); used by [`with_mxcsr`].
extern "C" fn call_closure(ctx: *mut u8) {
    // SAFETY: `with_mxcsr` passes a pointer to a live `&mut dyn FnMut()` and nothing else
    // uses it during the call.
    let f = unsafe { &mut *ctx.cast::<&mut dyn FnMut()>() };
    f();
}

/// Runs `f` with MXCSR = `csr` and restores the previous value. `f` must not panic (a panic
/// cannot leave the `extern "C"` trampoline; it aborts) and should do no float arithmetic
/// of its own.
pub fn with_mxcsr(csr: u32, mut f: impl FnMut()) {
    let mut dynf: &mut dyn FnMut() = &mut f;
    let mut saved: u32 = 0;
    // SAFETY: the block saves MXCSR to `saved`, loads `csr`, calls `call_closure` (a C-ABI
    // function; `clobber_abi("C")` declares every register the call may change, and the
    // stack is call-aligned on entry because `nostack` is not given) and restores MXCSR
    // before it ends, so the floating-point environment is unchanged outside the block.
    // r12 and r13 are callee-saved, so they still point at `saved` and `csr` after the
    // call; both stay alive and unaliased for the whole block.
    unsafe {
        asm!(
            "stmxcsr [r12]",
            "ldmxcsr [r13]",
            "call {f}",
            "ldmxcsr [r12]",
            f = sym call_closure,
            in("r12") &raw mut saved,
            in("r13") &raw const csr,
            in("rdi") (&raw mut dynf).cast::<u8>(),
            clobber_abi("C"),
        );
    }
}
