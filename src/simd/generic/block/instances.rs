//! The per-ISA instantiation of the block kernels, as one macro that each ISA file invokes
//! with its vector type, target features and FP-environment guard.

/// The instantiation of the block kernels for one ISA: `#[target_feature]` entry points for
/// every slot, and `fill_block`, which sets them in a table. `$v` is the vector type,
/// `$attr` the attributes of every entry point (its target features), `$guard` an
/// expression whose value lives for the kernel's call (the FP environment it needs:
/// `RoundNearest` on AVX2, `Fpcr0` on NEON, `run::Unguarded` where the instructions carry
/// their rounding), and `$put` the block FP8 quantization's last step (`fp8::Put4`: the
/// generic layer's `fp8::Layer` unless the ISA names another).
macro_rules! block_instances {
    ($v:ty, [$(#[$attr:meta])*], $guard:expr) => {
        crate::simd::generic::block::instances::block_instances!(
            $v,
            [$(#[$attr])*],
            $guard,
            crate::simd::generic::block::fp8::Layer
        );
    };
    ($v:ty, [$(#[$attr:meta])*], $guard:expr, $put:ty) => {
        mod block_kernels {
            use super::*;
            use crate::block::spec::kernels::{BlockKernels, SCALED_FORMATS};
            use crate::simd::generic::block::{fp8, run, scaled};
            use crate::simd::generic::kernels::{Brain, F32, Half, Src};
            use crate::{F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ};

            /// `amax` of f32 bits.
            ///
            /// # Safety
            /// As for `AmaxFn`.
            $(#[$attr])*
            unsafe fn amax32(src: *const u8, n: usize) -> u32 {
                // SAFETY: forwarded contract; the features are enabled here.
                unsafe { fp8::amax_codes::<$v, false>(src, n) }
            }

            /// `amax` of BF16 or F16 codes.
            ///
            /// # Safety
            /// As for `AmaxFn`.
            $(#[$attr])*
            unsafe fn amax16(src: *const u8, n: usize) -> u32 {
                // SAFETY: forwarded contract; the features are enabled here.
                unsafe { fp8::amax_codes::<$v, true>(src, n) }
            }

            /// Block FP8 quantization of a band of tile rows.
            ///
            /// # Safety
            /// As for `Fp8QuantFn`.
            #[allow(clippy::too_many_arguments)]
            $(#[$attr])*
            unsafe fn fp8_quant<S: Src>(
                src: *const u8,
                stride: usize,
                rows: usize,
                cols: usize,
                tile_cols: usize,
                ue8m0: bool,
                codes: *mut u8,
                scales: *mut u8,
            ) {
                let _env = $guard;
                // SAFETY: forwarded contract; the features are enabled here and the FP
                // environment is the one the kernel argues with.
                unsafe {
                    fp8::quantize_band::<$v, S, $put>(
                        src, stride, rows, cols, tile_cols, ue8m0, codes, scales,
                    )
                }
            }

            /// Block FP8 dequantization of one row.
            ///
            /// # Safety
            /// As for `Fp8DequantFn`.
            $(#[$attr])*
            unsafe fn fp8_dequant<D: run::Out>(
                codes: *const u8,
                scales: *const u8,
                tile_cols: usize,
                cols: usize,
                dst: *mut u8,
            ) {
                let _env = $guard;
                // SAFETY: as above.
                unsafe { fp8::dequantize_row::<$v, D>(codes, scales, tile_cols, cols, dst) }
            }

            /// `narrow_scaled` with a positive power-of-two scale, or any normal scale up to
            /// `2^100` in magnitude where the vector's multiply-add is fused.
            ///
            /// # Safety
            /// As for `ScaledFn`.
            $(#[$attr])*
            unsafe fn narrow_scaled<S: Src, F: crate::codec::Format>(
                src: *const u8,
                n: usize,
                scale: u32,
                dst: *mut u8,
            ) {
                let _env = $guard;
                // SAFETY: as above; the caller passes a scale that is not a positive power
                // of two only where `narrow_any` is set, that is where `FUSED_FMA` holds.
                unsafe {
                    if scale & 0x807F_FFFF == 0 {
                        scaled::narrow_pow2::<$v, S, F>(src, n, scale, dst)
                    } else {
                        scaled::narrow_any::<$v, S, F>(src, n, scale, dst)
                    }
                }
            }

            /// `dequantize_scaled` with an exact scale.
            ///
            /// # Safety
            /// As for `ScaledFn`.
            $(#[$attr])*
            unsafe fn dequantize_scaled<F: crate::codec::Format, D: run::Out>(
                src: *const u8,
                n: usize,
                scale: u32,
                dst: *mut u8,
            ) {
                let _env = $guard;
                // SAFETY: as above.
                unsafe { scaled::dequantize_exact::<$v, F, D>(src, n, scale, dst) }
            }

            /// `dequantize_scaled` into BF16/F16 from widened f32 values, rounding the
            /// products to odd.
            ///
            /// # Safety
            /// As for `ScaledFn` with an f32 source, under `ScaledCode::odd_scale`; only
            /// filled where `FUSED_FMA` holds.
            $(#[$attr])*
            unsafe fn dequantize_odd<D: run::Out>(
                src: *const u8,
                n: usize,
                scale: u32,
                dst: *mut u8,
            ) {
                let _env = $guard;
                // SAFETY: as above.
                unsafe { scaled::dequantize_odd::<$v, D>(src, n, scale, dst) }
            }

            /// `dequantize_scaled`'s product pass into f32.
            ///
            /// # Safety
            /// As for `ScaleF32Fn`.
            $(#[$attr])*
            unsafe fn scale_f32(dst: *mut u8, n: usize, scale: u32) {
                let _env = $guard;
                // SAFETY: as above.
                unsafe { scaled::scale_in_place::<$v>(dst, n, scale) }
            }

            /// Sets every block slot of this layer in `t`: `amax`, block FP8 dequantization
            /// and quantization, and the fused scaled building blocks. (A tier's table puts
            /// its hand-written overrides on top.)
            pub(crate) const fn fill_block(t: &mut BlockKernels) {
                t.amax = [Some(amax32), Some(amax16), Some(amax16)];
                t.fp8_dequant = [
                    Some(fp8_dequant::<F32>),
                    Some(fp8_dequant::<Brain>),
                    Some(fp8_dequant::<Half>),
                ];
                t.fp8_quant = [
                    Some(fp8_quant::<F32>),
                    Some(fp8_quant::<Brain>),
                    Some(fp8_quant::<Half>),
                ];
                macro_rules! narrow_row {
                    ($s:ty) => {
                        [
                            Some(narrow_scaled::<$s, F8E4M3>),
                            Some(narrow_scaled::<$s, F8E5M2>),
                            Some(narrow_scaled::<$s, F8E4M3FNUZ>),
                            Some(narrow_scaled::<$s, F8E5M2FNUZ>),
                            Some(narrow_scaled::<$s, F6E2M3>),
                            Some(narrow_scaled::<$s, F6E3M2>),
                            Some(narrow_scaled::<$s, F4E2M1>),
                            Some(narrow_scaled::<$s, crate::F8E3M4>),
                            Some(narrow_scaled::<$s, crate::F8E4M3IEEE>),
                            Some(narrow_scaled::<$s, crate::F8E4M3B11FNUZ>),
                            // Unsigned: a negative product too small for a code is NaN, not
                            // zero, which the fused narrowing does not state; the f64 route.
                            None,
                        ]
                    };
                }
                t.narrow_scaled = [narrow_row!(F32), narrow_row!(Brain), narrow_row!(Half)];
                t.narrow_any = <$v as crate::simd::Vector>::FUSED_FMA;
                macro_rules! dequant_row {
                    ($f:ty) => {
                        [
                            // Into f32 `scale_f32` serves every exact scale too (after the
                            // backend's widening, which measured faster than this layer's
                            // decoding: docs/performance.md).
                            None,
                            Some(dequantize_scaled::<$f, Brain>),
                            Some(dequantize_scaled::<$f, Half>),
                        ]
                    };
                }
                let d: [[Option<crate::block::spec::kernels::ScaledFn>; 3]; SCALED_FORMATS] = [
                    dequant_row!(F8E4M3),
                    dequant_row!(F8E5M2),
                    dequant_row!(F8E4M3FNUZ),
                    dequant_row!(F8E5M2FNUZ),
                    dequant_row!(F6E2M3),
                    dequant_row!(F6E3M2),
                    dequant_row!(F4E2M1),
                    dequant_row!(crate::F8E3M4),
                    dequant_row!(crate::F8E4M3IEEE),
                    dequant_row!(crate::F8E4M3B11FNUZ),
                    dequant_row!(crate::F8E5M3FNU),
                ];
                t.dequantize_scaled = d;
                t.scale_f32 = Some(scale_f32);
                if <$v as crate::simd::Vector>::FUSED_FMA {
                    t.dequantize_odd = [None, Some(dequantize_odd::<Brain>), Some(dequantize_odd::<Half>)];
                }
            }
        }
    };
}
pub(crate) use block_instances;
