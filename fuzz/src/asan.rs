//! AddressSanitizer's manual poisoning, when the fuzz build has ASan
//! (`cargo fuzz build --sanitizer address`, the default). Compiled only under `cfg(fuzzing)`,
//! i.e. by cargo-fuzz on nightly, where `cfg(sanitize)` may be used.

use crate::harness::Hooks;

#[cfg(sanitize = "address")]
mod ffi {
    unsafe extern "C" {
        // void __asan_poison_memory_region(void const volatile *addr, size_t size);
        fn __asan_poison_memory_region(addr: *const u8, size: usize);
        fn __asan_unpoison_memory_region(addr: *const u8, size: usize);
    }

    pub(super) fn poison(addr: *const u8, size: usize) {
        // SAFETY: only changes ASan's shadow memory for a range of the harness's own live
        // allocation; the harness unpoisons it before reading it or freeing it.
        unsafe { __asan_poison_memory_region(addr, size) }
    }

    pub(super) fn unpoison(addr: *const u8, size: usize) {
        // SAFETY: as above.
        unsafe { __asan_unpoison_memory_region(addr, size) }
    }
}

#[cfg(sanitize = "address")]
pub(crate) const HOOKS: Option<Hooks> = Some(Hooks {
    poison: ffi::poison,
    unpoison: ffi::unpoison,
});

#[cfg(not(sanitize = "address"))]
pub(crate) const HOOKS: Option<Hooks> = None;
