//! What the block-kernel test files share (`block_backends`, `block_profiles`,
//! `block_backends_nvfp4`, `block_generic`): the SIMD backends to test, a deterministic
//! generator, running a call under a given MXCSR (x86-64) or FPCR (aarch64) value, and
//! destinations compared by their bits. Each file keeps its own list of MXCSR/FPCR values
//! and its canary margin.

#![allow(dead_code)] // Not every test file uses every item.

use vcvt::{BF16, Backend, F16};

/// The SIMD backends this CPU has.
pub fn simd_backends() -> Vec<Backend> {
    Backend::available()
        .filter(|&b| b != Backend::Scalar)
        .collect()
}

/// xorshift64: deterministic test data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn u32(&mut self) -> u32 {
        (self.next() >> 16) as u32
    }
    pub fn below(&mut self, n: u32) -> u32 {
        (self.next() % n as u64) as u32
    }
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
extern "C" fn call_closure(ctx: *mut u8) {
    // SAFETY: `with_mxcsr` passes a pointer to a live `&mut dyn FnMut()` and nothing else
    // uses it during the call.
    let f = unsafe { &mut *ctx.cast::<&mut dyn FnMut()>() };
    f();
}

/// Runs `f` with MXCSR = `csr` (if given) and restores it. `f` must not panic.
pub fn with_mxcsr(csr: Option<u32>, mut f: impl FnMut()) {
    let Some(csr) = csr else {
        f();
        return;
    };
    #[cfg(target_arch = "x86_64")]
    {
        let mut dynf: &mut dyn FnMut() = &mut f;
        let mut saved: u32 = 0;
        // SAFETY: the block saves MXCSR to `saved`, loads `csr`, calls `call_closure` (a
        // C-ABI function; `clobber_abi("C")` declares every register the call may change)
        // and restores MXCSR before it ends. r12 and r13 are callee-saved, so they still
        // point at `saved` and `csr` after the call.
        unsafe {
            std::arch::asm!(
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
    #[cfg(target_arch = "aarch64")]
    {
        let mut dynf: &mut dyn FnMut() = &mut f;
        let (before, after): (u64, u64);
        // SAFETY: the block saves FPCR in x20, loads `csr`, calls `call_closure` (a C-ABI
        // function; `clobber_abi("C")` declares every register the call may change), reads
        // FPCR as the call found it (x23: bits the CPU does not implement, such as FZ16 on
        // ARMv8.0, read as 0) and left it (x22) and restores FPCR before it ends. x20-x23 are
        // callee-saved, so x20 still holds the saved FPCR after the call; x20, x22 and x23
        // are declared as outputs for this function's own use.
        unsafe {
            std::arch::asm!(
                "mrs x20, fpcr",
                "msr fpcr, x21",
                "mrs x23, fpcr",
                "blr {f}",
                "mrs x22, fpcr",
                "msr fpcr, x20",
                f = in(reg) call_closure as extern "C" fn(*mut u8),
                in("x0") (&raw mut dynf).cast::<u8>(),
                in("x21") csr as u64,
                out("x20") _,
                out("x22") after,
                out("x23") before,
                clobber_abi("C"),
            );
        }
        // The kernels must give the caller's FPCR back.
        assert_eq!(after, before, "FPCR changed by the call");
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = csr;
        f();
    }
}

/// A dequantization destination, compared by bits.
pub trait Bits: vcvt::block::BlockDest + Copy + PartialEq + core::fmt::Debug {
    const NAME: &'static str;
    fn bits(self) -> u32;
    fn sentinel() -> Self;
}
impl Bits for f32 {
    const NAME: &'static str = "f32";
    fn bits(self) -> u32 {
        self.to_bits()
    }
    fn sentinel() -> Self {
        f32::from_bits(0x7FA5_A5A5)
    }
}
impl Bits for BF16 {
    const NAME: &'static str = "bf16";
    fn bits(self) -> u32 {
        self.to_bits() as u32
    }
    fn sentinel() -> Self {
        BF16::from_bits(0x7FA5)
    }
}
impl Bits for F16 {
    const NAME: &'static str = "f16";
    fn bits(self) -> u32 {
        self.to_bits() as u32
    }
    fn sentinel() -> Self {
        F16::from_bits(0x7DA5)
    }
}

/// Compares bit patterns, reporting the first difference.
pub fn same_bits(what: &dyn Fn() -> String, expected: &[u32], got: &[u32]) {
    assert_eq!(expected.len(), got.len());
    if let Some(i) = (0..got.len()).find(|&i| expected[i] != got[i]) {
        let bad = (0..got.len()).filter(|&i| expected[i] != got[i]).count();
        panic!(
            "{}: index {i}: expected {:#x}, got {:#x} ({bad} differences)",
            what(),
            expected[i],
            got[i]
        );
    }
}
