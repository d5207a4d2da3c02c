//! PLACEHOLDER: this tier still runs the Scalar kernels; its SIMD kernels are being written.

pub(crate) use crate::arch::scalar::KERNELS;
