//! x86-64 backends and their run-time detection.
//!
//! With `std`, detection uses `is_x86_feature_detected!` (which caches CPUID itself); the
//! dispatcher calls it once and caches its own choice. Without `std`, a backend is available
//! only if the build enables its target features at compile time.

pub(crate) mod avx2;
pub(crate) mod avx512;
pub(crate) mod avx512_bf16;

/// AVX2 + FMA + F16C: the `Avx2` tier.
pub(crate) fn avx2_available() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("f16c")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(all(
            target_feature = "avx2",
            target_feature = "fma",
            target_feature = "f16c"
        ))
    }
}

/// AVX-512 F/BW/VL/DQ (plus the AVX2 tier, which every such CPU has): the `Avx512` tier.
pub(crate) fn avx512_available() -> bool {
    #[cfg(feature = "std")]
    {
        avx2_available()
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512dq")
    }
    #[cfg(not(feature = "std"))]
    {
        avx2_available()
            && cfg!(all(
                target_feature = "avx512f",
                target_feature = "avx512bw",
                target_feature = "avx512vl",
                target_feature = "avx512dq"
            ))
    }
}

/// The `Avx512` tier plus AVX512_BF16: the `Avx512Bf16` tier.
pub(crate) fn avx512_bf16_available() -> bool {
    #[cfg(feature = "std")]
    {
        avx512_available() && std::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(feature = "std"))]
    {
        avx512_available() && cfg!(target_feature = "avx512bf16")
    }
}
