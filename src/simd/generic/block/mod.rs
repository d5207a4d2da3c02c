//! The block kernels (`src/block/spec/kernels.rs` slots), written once against
//! [`Vector`](crate::simd::Vector) and instantiated per ISA by the `fill_block` hooks of
//! `simd/<arch>/*.rs`. Each is bound to give exactly the bits of the scalar specification
//! (`src/block/spec/`), whatever MXCSR/FPCR hold; each file says why.
//!
//! * [`mx`]: the MX `Ocp` and `Ceil` profiles of every element;
//! * [`ggml`]: the MX `Ggml` profile (gguf's MXFP4) and the ggml `block_mxfp4` layout;
//! * [`mlx`]: the MX `Mlx` profile (MLX's CPU mxfp4 and mxfp8);
//! * [`nvfp4`]: NVFP4, every profile and layout, both directions;
//! * [`fp8`]: block FP8 (DeepSeek) quantization of whole tile rows and dequantization of a
//!   row, and the `amax` building block;
//! * [`scaled`]: the fused f32 paths of `narrow_scaled` and `dequantize_scaled` for the
//!   scales whose products are exact in f32.
//!
//! The profiles are instantiated per ISA by `instantiate_profiles!` (below), block FP8 and
//! the building blocks by [`block_instances!`](instances::block_instances) ([`instances`]),
//! with [`run`] holding their loop.
//!
//! Each kernel handles whole blocks of one row; a block whose scale falls outside the range
//! where the vector form is proven equal (tiny or huge scales, NaN or infinite values) is
//! handed to the specification's per-block function inside the kernel, so every block of
//! the call is done.

pub(crate) mod fp8;
pub(crate) mod ggml;
pub(crate) mod instances;
pub(crate) mod mlx;
pub(crate) mod mx;
pub(crate) mod nvfp4;
pub(crate) mod run;
pub(crate) mod scaled;

/// Fills the `Ggml` and `Mlx` profile slots of a block table with one ISA's instantiations:
/// `$gq::<T, GGML_LAYOUT>` (Ggml quantization from `T`), `$gd::<D, GGML_LAYOUT>`,
/// `$mq::<T, VARIANT>` and `$md::<D, VARIANT>` (`VARIANT` one of `kernels::MLX_*`).
macro_rules! fill_profiles {
    ($t:ident, $gq:ident, $gd:ident, $mq:ident, $md:ident) => {{
        use $crate::block::spec::kernels::{MLX_E2M1, MLX_E2M1_GGML, MLX_E4M3};
        use $crate::{BF16, F16};
        $t.ggml_quant = [
            [
                Some($gq::<f32, false>),
                Some($gq::<BF16, false>),
                Some($gq::<F16, false>),
            ],
            [
                Some($gq::<f32, true>),
                Some($gq::<BF16, true>),
                Some($gq::<F16, true>),
            ],
        ];
        $t.ggml_dequant = [
            [
                Some($gd::<f32, false>),
                Some($gd::<BF16, false>),
                Some($gd::<F16, false>),
            ],
            [
                Some($gd::<f32, true>),
                Some($gd::<BF16, true>),
                Some($gd::<F16, true>),
            ],
        ];
        $t.mlx_quant = [
            [
                Some($mq::<f32, MLX_E2M1>),
                Some($mq::<BF16, MLX_E2M1>),
                Some($mq::<F16, MLX_E2M1>),
            ],
            [
                Some($mq::<f32, MLX_E2M1_GGML>),
                Some($mq::<BF16, MLX_E2M1_GGML>),
                Some($mq::<F16, MLX_E2M1_GGML>),
            ],
            [
                Some($mq::<f32, MLX_E4M3>),
                Some($mq::<BF16, MLX_E4M3>),
                Some($mq::<F16, MLX_E4M3>),
            ],
        ];
        $t.mlx_dequant = [
            [
                Some($md::<f32, MLX_E2M1>),
                Some($md::<BF16, MLX_E2M1>),
                Some($md::<F16, MLX_E2M1>),
            ],
            [
                Some($md::<f32, MLX_E2M1_GGML>),
                Some($md::<BF16, MLX_E2M1_GGML>),
                Some($md::<F16, MLX_E2M1_GGML>),
            ],
            [
                Some($md::<f32, MLX_E4M3>),
                Some($md::<BF16, MLX_E4M3>),
                Some($md::<F16, MLX_E4M3>),
            ],
        ];
    }};
}
pub(crate) use fill_profiles;

/// Defines one ISA's instantiations of the profile kernels (`ggml_q`, `ggml_dq`, `mlx_q`,
/// `mlx_dq`, each `#[target_feature(enable = $feat)]` over vector type `$v`, running with
/// `$guard` alive: the FP-environment guard the ISA's kernels need, or `()`) and its
/// `fill_block_profiles`, which registers them.
macro_rules! instantiate_profiles {
    ($v:ty, $feat:literal, $guard:expr) => {
        /// The `Ggml` quantization from `T` into the planar (`G = false`) or ggml layout.
        ///
        /// # Safety
        /// As for `MxProfileQuantFn`; the CPU has this ISA's features.
        #[target_feature(enable = $feat)]
        unsafe fn ggml_q<T: $crate::block::spec::BlockSource, const G: bool>(
            src: *const u8,
            blocks: usize,
            codes: *mut u8,
            scales: *mut u8,
        ) {
            let _guard = $guard;
            // SAFETY: forwarded contract; the features are enabled on this function, and
            // the table that holds it is chosen only when the backend's check found them.
            unsafe {
                $crate::simd::generic::block::ggml::quantize::<$v, T, G>(src, blocks, codes, scales)
            }
        }
        /// The `Ggml` dequantization into `D` from the planar or ggml layout.
        ///
        /// # Safety
        /// As for `MxProfileDequantFn`; the CPU has this ISA's features.
        #[target_feature(enable = $feat)]
        unsafe fn ggml_dq<D: $crate::block::spec::BlockDest, const G: bool>(
            codes: *const u8,
            scales: *const u8,
            blocks: usize,
            dst: *mut u8,
        ) {
            let _guard = $guard;
            // SAFETY: as for `ggml_q`.
            unsafe {
                $crate::simd::generic::block::ggml::dequantize::<$v, D, G>(
                    codes, scales, blocks, dst,
                )
            }
        }
        /// The `Mlx` quantization from `T` (variant `M`, `kernels::MLX_*`).
        ///
        /// # Safety
        /// As for `MxProfileQuantFn`; the CPU has this ISA's features.
        #[target_feature(enable = $feat)]
        unsafe fn mlx_q<T: $crate::block::spec::BlockSource, const M: usize>(
            src: *const u8,
            blocks: usize,
            codes: *mut u8,
            scales: *mut u8,
        ) {
            let _guard = $guard;
            // SAFETY: as for `ggml_q`; the guard gives the multiply-add its rounding.
            unsafe {
                $crate::simd::generic::block::mlx::quantize::<$v, T, M>(src, blocks, codes, scales)
            }
        }
        /// The `Mlx` dequantization into `D` (variant `M`).
        ///
        /// # Safety
        /// As for `MxProfileDequantFn`; the CPU has this ISA's features.
        #[target_feature(enable = $feat)]
        unsafe fn mlx_dq<D: $crate::block::spec::BlockDest, const M: usize>(
            codes: *const u8,
            scales: *const u8,
            blocks: usize,
            dst: *mut u8,
        ) {
            let _guard = $guard;
            // SAFETY: as for `ggml_q`.
            unsafe {
                $crate::simd::generic::block::mlx::dequantize::<$v, D, M>(
                    codes, scales, blocks, dst,
                )
            }
        }

        /// Sets the block-kernel slots (`src/block/spec/kernels.rs`) this instantiation serves:
        /// the MX `Ggml` and `Mlx` profiles, both layouts, every source and destination.
        pub(crate) const fn fill_block_profiles(
            t: &mut $crate::block::spec::kernels::BlockKernels,
        ) {
            $crate::simd::generic::block::fill_profiles!(t, ggml_q, ggml_dq, mlx_q, mlx_dq);
        }
    };
}
pub(crate) use instantiate_profiles;
