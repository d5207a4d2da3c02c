//! AVX2 kernels for the formats added after the first four: fnuz fp8, fp6, fp4 (unpacked and
//! packed) and E8M0.

use crate::arch::Kernels;

/// Puts this module's kernels into the AVX2 table `t`.
pub(super) const fn set(t: &mut Kernels) {
    let _ = t;
}
