//! NEON kernels for the formats added after the first four: fnuz fp8, fp6, fp4 (unpacked and
//! packed) and E8M0.

use crate::arch::Kernels;

/// Puts this module's kernels into the `neon` table `t` (the `neon-bf16` table starts from
/// it).
pub(super) const fn set(t: &mut Kernels) {
    let _ = t;
}
