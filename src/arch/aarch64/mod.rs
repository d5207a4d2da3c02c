//! aarch64 backends and their run-time detection.
//!
//! The kernels assume little-endian lane order (as the byte API does), so on big-endian
//! aarch64 (`aarch64_be`) no SIMD backend is available and Scalar runs.

pub(crate) mod block_tables;
pub(crate) mod neon;
pub(crate) mod neon_bf16;
pub(crate) mod neon_block;
mod neon_small;
pub(crate) mod tables;

/// Base AdvSIMD, part of every ARMv8-A aarch64 core.
pub(crate) fn neon_available() -> bool {
    cfg!(target_endian = "little") && {
        #[cfg(feature = "std")]
        {
            std::arch::is_aarch64_feature_detected!("neon")
        }
        #[cfg(not(feature = "std"))]
        {
            cfg!(target_feature = "neon")
        }
    }
}

/// AdvSIMD with FEAT_BF16.
pub(crate) fn neon_bf16_available() -> bool {
    #[cfg(feature = "std")]
    {
        neon_available() && std::arch::is_aarch64_feature_detected!("bf16")
    }
    #[cfg(not(feature = "std"))]
    {
        neon_available() && cfg!(target_feature = "bf16")
    }
}
