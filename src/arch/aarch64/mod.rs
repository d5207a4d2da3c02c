//! aarch64 backends and their run-time detection.

pub(crate) mod neon;
pub(crate) mod neon_bf16;

/// Base AdvSIMD, part of every ARMv8-A aarch64 core.
pub(crate) fn neon_available() -> bool {
    #[cfg(feature = "std")]
    {
        std::arch::is_aarch64_feature_detected!("neon")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(target_feature = "neon")
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
