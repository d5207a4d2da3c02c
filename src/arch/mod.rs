//! Backends: one kernel table per instruction-set tier.
//!
//! Every kernel has the same raw signature so that a backend is a plain table of function
//! pointers indexed by the pair (see `element::narrow_index`/`widen_index`), and so that the
//! same kernels serve typed slices, uninitialized destinations and unaligned byte buffers.

use crate::Overflow;
use crate::element::PAIRS;

/// A conversion kernel.
///
/// # Safety
/// The caller guarantees that `src` is valid for reading `len` source elements and `dst` is
/// valid for writing `len` destination elements (both possibly unaligned), that the two
/// ranges do not overlap, and that the CPU has the target features of the backend the kernel
/// belongs to.
pub(crate) type RawKernel = unsafe fn(src: *const u8, dst: *mut u8, len: usize, overflow: Overflow);

/// A backend's kernels, indexed by pair.
pub(crate) struct Kernels(pub(crate) [RawKernel; PAIRS]);

#[cfg(target_arch = "aarch64")]
pub(crate) mod aarch64;
pub(crate) mod scalar;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;
