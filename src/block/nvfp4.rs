//! NVFP4: FP4 E2M1 elements, two per byte, with an E4M3 scale per 16 values and one f32
//! scale per tensor.

use core::mem::MaybeUninit;

use super::kernels;
use super::{BlockDest, BlockSource, Shape, as_uninit, checked_mul, expect_len, put, soft};
use crate::codec;
use crate::options::Policy;
use crate::{Backend, Error, F4E2M1, F8E4M3, NanPolicy, Overflow};

/// Values per NVFP4 block.
const BLOCK: usize = 16;

/// How NVFP4 scales are computed and applied.
///
/// | profile | tensor scale `g` | block scale | elements | dequantize |
/// |---|---|---|---|---|
/// | `ModelOpt` | `weight_scale_2 = amax(W) / 2688` | `e4m3(amax_b / (6·g))`, zero → 1.0 | `fp4(x / (f32(s8)·g))` | `fp4 · (f32(s8)·g)` |
///
/// Every operation is an f32 operation in the order shown (each product and quotient
/// rounded to f32), as NVIDIA ModelOpt's `NVFP4QTensor` computes it; E4M3 and FP4 roundings
/// are to nearest even and saturate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NvProfile {
    /// NVIDIA ModelOpt checkpoints: `weight` (uint8 `[out, in/2]`), `weight_scale`
    /// (`float8_e4m3fn [out, in/16]`), `weight_scale_2` (f32 scalar).
    #[default]
    ModelOpt,
}

/// Where NVFP4 codes and scales live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NvLayout {
    /// Packed codes (element `2j` in the low nibble of byte `j`, `cols.div_ceil(2)` bytes a
    /// row) and E4M3 scale bytes (`rows × cols.div_ceil(16)`): ModelOpt's `weight` and
    /// `weight_scale`.
    #[default]
    Planar,
}

/// NVFP4 with a profile and a layout.
///
/// ```
/// use vcvt::block::{Nvfp4, Shape};
///
/// let w: Vec<f32> = (0..32).map(|i| i as f32 * 0.25 - 4.0).collect();
/// let nv = Nvfp4::new();
/// let (mut data, mut scales) = (vec![0u8; 16], vec![0u8; 2]);
/// let g = nv.quantize(&w, Shape::matrix(1, 32), &mut data, &mut scales, None)?;
/// assert_eq!(g, 4.0 / 2688.0); // weight_scale_2 = amax / (6 · 448)
///
/// let mut out = vec![0.0f32; 32];
/// nv.dequantize(&data, &scales, g, Shape::matrix(1, 32), &mut out)?;
/// assert_eq!(out[0], -4.0);
/// # Ok::<(), vcvt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Nvfp4 {
    profile: NvProfile,
    layout: NvLayout,
    backend: Option<Backend>,
}

const SAT: Policy = Policy {
    overflow: Overflow::Saturate,
    nan: NanPolicy::Preserve,
};

/// `6.0` and `2688.0 = 6 · 448` as f32 bits.
const SIX: u32 = 0x40C0_0000;
const SIX_448: u32 = 0x4528_0000;
const ONE: u32 = 0x3F80_0000;

impl Nvfp4 {
    /// NVFP4 with the [`NvProfile::ModelOpt`] profile and the planar layout.
    pub const fn new() -> Nvfp4 {
        Nvfp4 {
            profile: NvProfile::ModelOpt,
            layout: NvLayout::Planar,
            backend: None,
        }
    }

    /// The same format with another profile.
    pub const fn profile(self, profile: NvProfile) -> Nvfp4 {
        Nvfp4 { profile, ..self }
    }

    /// The same format with another layout.
    pub const fn layout(self, layout: NvLayout) -> Nvfp4 {
        Nvfp4 { layout, ..self }
    }

    /// Runs on `backend` instead of [`Backend::active`] (same results).
    pub const fn on(self, backend: Backend) -> Nvfp4 {
        Nvfp4 {
            backend: Some(backend),
            ..self
        }
    }

    /// Bytes of packed codes that `shape` needs (`rows · cols.div_ceil(2)`).
    pub fn data_len(&self, shape: Shape) -> Result<usize, Error> {
        shape.check()?;
        checked_mul(shape.rows(), shape.cols().div_ceil(2), shape)
    }

    /// E4M3 scale bytes that `shape` needs (`rows · cols.div_ceil(16)`).
    pub fn scales_len(&self, shape: Shape) -> Result<usize, Error> {
        shape.check()?;
        checked_mul(shape.rows(), shape.cols().div_ceil(BLOCK), shape)
    }

    fn check(&self, shape: Shape, data: usize, scales: usize) -> Result<(), Error> {
        expect_len("data", self.data_len(shape)?, data)?;
        expect_len("scales", self.scales_len(shape)?, scales)
    }

    /// Quantizes `src` into packed codes and E4M3 block scales, and returns the tensor
    /// scale it used: `tensor_scale` if given, else the profile's (ModelOpt:
    /// `amax(src) / 2688`).
    ///
    /// # Errors
    /// [`Error::BlockLength`] when a buffer's length differs from what the shape needs,
    /// [`Error::BlockShape`] for a stride below `cols`; nothing is written then.
    pub fn quantize<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [u8],
        scales: &mut [u8],
        tensor_scale: Option<f32>,
    ) -> Result<f32, Error> {
        self.check(shape, data.len(), scales.len())?;
        expect_len("src", shape.len(), src.len())?;
        kernels::check_backend(self.backend)?;
        let cols = shape.cols();
        let g = match tensor_scale {
            Some(g) => g.to_bits(),
            None => {
                let mut m = 0u32;
                for r in 0..shape.rows() {
                    m = m.max(super::amax_bits(&src[r * shape.stride()..][..cols]));
                }
                if m > 0x7F80_0000 {
                    m = 0x7FC0_0000;
                }
                soft::div(m, SIX_448)
            }
        };
        let six_g = soft::mul(SIX, g);
        let (row_bytes, nblocks) = (cols.div_ceil(2), cols.div_ceil(BLOCK));
        for r in 0..shape.rows() {
            let row = &src[r * shape.stride()..][..cols];
            let d = &mut data[r * row_bytes..][..row_bytes];
            let s = &mut scales[r * nblocks..][..nblocks];
            for ((blk, sc), db) in row.chunks(BLOCK).zip(s.iter_mut()).zip(d.chunks_mut(8)) {
                let mut q = soft::div(super::amax_bits(blk), six_g);
                if q & 0x7FFF_FFFF == 0 {
                    q = ONE;
                }
                let s8 = codec::narrow_f32::<F8E4M3>(q, SAT);
                *sc = s8 as u8;
                let denom = soft::mul(codec::widen_f32::<F8E4M3>(s8), g);
                let code = |x: &S| {
                    let y = soft::div(x.f32_bits(), denom);
                    codec::narrow_f32::<F4E2M1>(y, SAT) as u8
                };
                for (pair, c) in blk.chunks(2).zip(db.iter_mut()) {
                    *c = code(&pair[0]) | pair.get(1).map_or(0, |x| code(x) << 4);
                }
            }
        }
        Ok(f32::from_bits(g))
    }

    /// Dequantizes packed codes `data` and E4M3 block scales `scales` with tensor scale
    /// `tensor_scale` into `dst`: `fp4 · f32(f32(s8) · tensor_scale)`, rounded to f32 and
    /// then to the destination.
    ///
    /// # Errors
    /// As for [`quantize`](Self::quantize).
    pub fn dequantize<D: BlockDest>(
        &self,
        data: &[u8],
        scales: &[u8],
        tensor_scale: f32,
        shape: Shape,
        dst: &mut [D],
    ) -> Result<(), Error> {
        self.dequantize_uninit(data, scales, tensor_scale, shape, as_uninit(dst))
    }

    /// [`dequantize`](Self::dequantize) into an uninitialised destination.
    pub fn dequantize_uninit<D: BlockDest>(
        &self,
        data: &[u8],
        scales: &[u8],
        tensor_scale: f32,
        shape: Shape,
        dst: &mut [MaybeUninit<D>],
    ) -> Result<(), Error> {
        self.check(shape, data.len(), scales.len())?;
        expect_len("dst", shape.len(), dst.len())?;
        kernels::check_backend(self.backend)?;
        let cols = shape.cols();
        let (row_bytes, nblocks) = (cols.div_ceil(2), cols.div_ceil(BLOCK));
        let g = tensor_scale.to_bits();
        for r in 0..shape.rows() {
            let codes = &data[r * row_bytes..][..row_bytes];
            let s = &scales[r * nblocks..][..nblocks];
            let out = &mut dst[r * shape.stride()..][..cols];
            for (b, o) in out.chunks_mut(BLOCK).enumerate() {
                let f = soft::mul(codec::widen_f32::<F8E4M3>(s[b] as u32), g);
                for (i, slot) in o.iter_mut().enumerate() {
                    let j = b * BLOCK + i;
                    let c = (codes[j / 2] >> (4 * (j & 1))) & 0xF;
                    let v = soft::mul(codec::widen_f32::<F4E2M1>(c as u32), f);
                    put(slot, D::from_f32_bits(v));
                }
            }
        }
        Ok(())
    }
}
