//! NVFP4: FP4 E2M1 elements, two per byte, with an E4M3 scale per 16 values and one f32
//! scale per tensor.

use core::mem::MaybeUninit;

use core::mem::size_of;

use super::dispatch;
use super::spec::kernels::NvRows;
pub use super::spec::nvfp4::NvProfile;
pub(super) use super::spec::nvfp4::SIX_448;
use super::spec::nvfp4::{BLOCK, Ctx, GGML_BYTES, GGML_VALUES, dequantize_block};
use super::spec::{amax_bits, finish_amax, put, soft};
use super::{BlockDest, BlockSource, Shape, as_uninit, checked_mul, expect_len};
use crate::arch::Isa;
use crate::{Backend, Error, KernelInfo};

/// Where NVFP4 codes and scales live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NvLayout {
    /// Packed codes (element `2j` in the low nibble of byte `j`, `cols.div_ceil(2)` bytes a
    /// row) and E4M3 scale bytes (`rows × cols.div_ceil(16)`): ModelOpt's `weight` and
    /// `weight_scale`, and MLX's `uint32` words read as little-endian bytes.
    #[default]
    Planar,
    /// llama.cpp's `block_nvfp4` (`cols` a multiple of 64): 36 bytes per 64 values, four
    /// scale bytes then 32 bytes; sub-block `i` (values `16i..16i+16`) has its elements
    /// `j` / `j + 8` in the low / high nibbles of byte `4 + 8i + j`. Pass an empty
    /// `scales` slice.
    Ggml,
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
    pub(super) profile: NvProfile,
    layout: NvLayout,
    pub(super) backend: Option<Backend>,
}

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

    /// The tensor scale that means "none" for the profile: 2688 (= 6 · 448) for
    /// [`NvProfile::Mlx`] (MLX without `global_scale` computes exactly what `g = 2688`
    /// gives), 1.0 otherwise.
    pub const fn identity_tensor_scale(&self) -> f32 {
        match self.profile {
            NvProfile::Mlx => 2688.0,
            _ => 1.0,
        }
    }

    fn check_layout(&self, shape: Shape) -> Result<(), Error> {
        shape.check()?;
        if self.layout == NvLayout::Ggml && !shape.cols().is_multiple_of(GGML_VALUES) {
            return Err(Error::BlockShape {
                rows: shape.rows(),
                cols: shape.cols(),
                reason: "the ggml block_nvfp4 layout needs cols to be a multiple of 64",
            });
        }
        Ok(())
    }

    /// Bytes of packed codes that `shape` needs (`rows · cols.div_ceil(2)`; for
    /// [`NvLayout::Ggml`] the whole 36-byte blocks).
    pub fn data_len(&self, shape: Shape) -> Result<usize, Error> {
        self.check_layout(shape)?;
        match self.layout {
            NvLayout::Planar => checked_mul(shape.rows(), shape.cols().div_ceil(2), shape),
            NvLayout::Ggml => {
                checked_mul(shape.rows(), shape.cols() / GGML_VALUES * GGML_BYTES, shape)
            }
        }
    }

    /// E4M3 scale bytes that `shape` needs (`rows · cols.div_ceil(16)`; none for
    /// [`NvLayout::Ggml`]).
    pub fn scales_len(&self, shape: Shape) -> Result<usize, Error> {
        self.check_layout(shape)?;
        match self.layout {
            NvLayout::Planar => checked_mul(shape.rows(), shape.cols().div_ceil(BLOCK), shape),
            NvLayout::Ggml => Ok(0),
        }
    }

    fn check(&self, shape: Shape, data: usize, scales: usize) -> Result<(), Error> {
        expect_len("data", self.data_len(shape)?, data)?;
        expect_len("scales", self.scales_len(shape)?, scales)
    }

    /// Which kernel [`quantize`](Self::quantize) runs for `S` sources on this format's
    /// backend (the one given to [`on`](Self::on), else [`Backend::active`]): its
    /// instruction set and vector width, as [`Backend::kernel`] reports them for the element
    /// conversions, or `scalar` where the specification runs every block (every path on
    /// `Backend::Scalar`). A row's short last block, every block under a tensor scale the
    /// kernel does not serve, and, under the `Ggml` profile, the blocks whose scale is 0 or
    /// clamped to 448 or that hold an infinity, run the specification whatever the kernel.
    ///
    /// ```
    /// use vcvt::{BF16, Backend};
    /// use vcvt::block::Nvfp4;
    ///
    /// let info = Nvfp4::new().on(Backend::Scalar).quantize_kernel::<BF16>();
    /// assert_eq!(info.to_string(), "scalar");
    /// // On an AVX-512 machine: "avx512 (512-bit)".
    /// println!("{}", Nvfp4::new().quantize_kernel::<f32>());
    /// ```
    pub fn quantize_kernel<S: BlockSource>(&self) -> KernelInfo {
        let t = dispatch::table(self.backend.unwrap_or_else(Backend::active));
        let slot = t.nv_quant[self.profile as usize][self.layout as usize][S::KIND as usize];
        KernelInfo::of(
            if slot.is_some() {
                t.generic_isa
            } else {
                Isa::Scalar
            },
            1,
        )
    }

    /// Which kernel [`dequantize`](Self::dequantize) runs for `D` destinations, as
    /// [`quantize_kernel`](Self::quantize_kernel) says for quantization.
    ///
    /// ```
    /// use vcvt::{Backend, F16};
    /// use vcvt::block::Nvfp4;
    ///
    /// assert_eq!(Nvfp4::new().on(Backend::Scalar).dequantize_kernel::<F16>().bits, 0);
    /// ```
    pub fn dequantize_kernel<D: BlockDest>(&self) -> KernelInfo {
        let t = dispatch::table(self.backend.unwrap_or_else(Backend::active));
        let slot = t.nv_dequant[self.profile as usize][self.layout as usize][D::KIND as usize];
        KernelInfo::of(
            if slot.is_some() {
                t.generic_isa
            } else {
                Isa::Scalar
            },
            1,
        )
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
        self.quantize_uninit(src, shape, as_uninit(data), as_uninit(scales), tensor_scale)
    }

    /// [`quantize`](Self::quantize) into uninitialised buffers, all of which it initialises
    /// on success.
    pub fn quantize_uninit<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [MaybeUninit<u8>],
        scales: &mut [MaybeUninit<u8>],
        tensor_scale: Option<f32>,
    ) -> Result<f32, Error> {
        self.check(shape, data.len(), scales.len())?;
        expect_len("src", shape.len(), src.len())?;
        let k = dispatch::check_backend(self.backend)?;
        if shape.is_empty() {
            // Nothing to convert (and rows of zero columns must not be sliced); the tensor
            // scale of no values: the given one, or the profile's of an amax of 0.
            return Ok(match (tensor_scale, self.profile) {
                (Some(g), _) => g,
                (None, NvProfile::ModelOpt) => 0.0,
                (None, _) => self.identity_tensor_scale(),
            });
        }
        let cols = shape.cols();
        let g = match (tensor_scale, self.profile) {
            (Some(g), _) => g.to_bits(),
            (None, NvProfile::ModelOpt) => {
                let mut m = 0u32;
                for r in 0..shape.rows() {
                    let row = &src[r * shape.stride()..][..cols];
                    let a = match k.amax[S::KIND as usize] {
                        // SAFETY: `row` holds `cols` values of the slot's source type
                        // (`S::KIND` indexes the table), aligned as `S`; `check_backend`
                        // returned this table only if its backend runs on this CPU.
                        Some(f) => finish_amax::<S>(unsafe { f(row.as_ptr().cast(), cols) }),
                        None => amax_bits(row),
                    };
                    m = m.max(a);
                }
                soft::div(m, SIX_448)
            }
            (None, _) => self.identity_tensor_scale().to_bits(),
        };
        let ctx = Ctx::new(self.profile, g);
        let nblocks = cols.div_ceil(BLOCK);
        let kernel = k.nv_quant[self.profile as usize][self.layout as usize][S::KIND as usize];
        let full = cols / BLOCK;
        let done = match kernel {
            Some(f) if full > 0 => {
                let a = self.rows(
                    shape,
                    full,
                    src.as_ptr().cast_mut().cast(),
                    size_of::<S>(),
                    g,
                );
                let a = NvRows {
                    data: data.as_mut_ptr().cast(),
                    scales: scales.as_mut_ptr().cast(),
                    ..a
                };
                // SAFETY: `rows` describes the whole blocks of the shape, inside `src`,
                // `data` and `scales` (their lengths were checked above); the kernel only
                // reads `src` (aligned as `S`), and `check_backend` returned this table only
                // if its backend runs on this CPU.
                unsafe { f(&a) }
            }
            _ => false,
        };
        let skip = if done { full } else { 0 };
        for r in 0..shape.rows() {
            let row = &src[r * shape.stride()..][..cols];
            for (b, blk) in row.chunks(BLOCK).enumerate().skip(skip) {
                let (s8, codes) = ctx.quantize_block(blk);
                self.store(data, scales, cols, r, b, nblocks, s8, &codes, blk.len());
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
        let k = dispatch::check_backend(self.backend)?;
        if shape.is_empty() {
            // Nothing to convert (and rows of zero columns must not be sliced).
            return Ok(());
        }
        let cols = shape.cols();
        let nblocks = cols.div_ceil(BLOCK);
        let g = tensor_scale.to_bits();
        let kernel = k.nv_dequant[self.profile as usize][self.layout as usize][D::KIND as usize];
        let full = cols / BLOCK;
        let done = match kernel {
            Some(f) if full > 0 => {
                let a = self.rows(shape, full, dst.as_mut_ptr().cast(), size_of::<D>(), g);
                let a = NvRows {
                    data: data.as_ptr().cast_mut(),
                    scales: scales.as_ptr().cast_mut(),
                    ..a
                };
                // SAFETY: `rows` describes the whole blocks of the shape, inside `data`,
                // `scales` and `dst` (their lengths were checked above); the kernel only
                // reads `data` and `scales` and writes `dst` (aligned as `D`), and
                // `check_backend` returned this table only if its backend runs on this CPU.
                unsafe { f(&a) }
            }
            _ => false,
        };
        let skip = if done { full } else { 0 };
        for r in 0..shape.rows() {
            let out = &mut dst[r * shape.stride()..][..cols];
            for (b, o) in out.chunks_mut(BLOCK).enumerate().skip(skip) {
                let (s8, codes) = self.load(data, scales, cols, r, b, nblocks, o.len());
                dequantize_block(self.profile, s8, &codes, g, o);
            }
        }
        Ok(())
    }

    /// The kernels' description of the whole blocks (`full` a row) of `shape`, with the
    /// unquantized side at `values` (`size`-byte values) and the data and scale pointers
    /// still to be set.
    fn rows(&self, shape: Shape, full: usize, values: *mut u8, size: usize, g: u32) -> NvRows {
        let cols = shape.cols();
        NvRows {
            rows: shape.rows(),
            blocks: full,
            values,
            values_stride: shape.stride() * size,
            data: core::ptr::null_mut(),
            data_stride: match self.layout {
                NvLayout::Planar => cols.div_ceil(2),
                NvLayout::Ggml => cols / GGML_VALUES * GGML_BYTES,
            },
            scales: core::ptr::null_mut(),
            scales_stride: cols.div_ceil(BLOCK),
            g,
        }
    }

    /// Stores block `b` of row `r` (its scale and `n` codes) as the layout says.
    #[allow(clippy::too_many_arguments)]
    fn store(
        &self,
        data: &mut [MaybeUninit<u8>],
        scales: &mut [MaybeUninit<u8>],
        cols: usize,
        r: usize,
        b: usize,
        nblocks: usize,
        s8: u8,
        codes: &[u8; BLOCK],
        n: usize,
    ) {
        match self.layout {
            NvLayout::Planar => {
                put(&mut scales[r * nblocks + b], s8);
                let d = &mut data[r * cols.div_ceil(2) + b * BLOCK / 2..];
                for j in 0..n.div_ceil(2) {
                    put(&mut d[j], codes[2 * j] | (codes[2 * j + 1] << 4));
                }
            }
            NvLayout::Ggml => {
                let blk = &mut data[(r * cols / GGML_VALUES + b / 4) * GGML_BYTES..][..GGML_BYTES];
                let i = b % 4;
                put(&mut blk[i], s8);
                for j in 0..8 {
                    put(&mut blk[4 + 8 * i + j], codes[j] | (codes[j + 8] << 4));
                }
            }
        }
    }

    /// Loads the scale and the `n` codes of block `b` of row `r`.
    #[allow(clippy::too_many_arguments)]
    fn load(
        &self,
        data: &[u8],
        scales: &[u8],
        cols: usize,
        r: usize,
        b: usize,
        nblocks: usize,
        n: usize,
    ) -> (u8, [u8; BLOCK]) {
        let mut codes = [0u8; BLOCK];
        match self.layout {
            NvLayout::Planar => {
                let d = &data[r * cols.div_ceil(2) + b * BLOCK / 2..];
                for (j, c) in codes.iter_mut().enumerate().take(n) {
                    *c = (d[j / 2] >> (4 * (j & 1))) & 0xF;
                }
                (scales[r * nblocks + b], codes)
            }
            NvLayout::Ggml => {
                let blk = &data[(r * cols / GGML_VALUES + b / 4) * GGML_BYTES..][..GGML_BYTES];
                let i = b % 4;
                for j in 0..8 {
                    codes[j] = blk[4 + 8 * i + j] & 0xF;
                    codes[j + 8] = blk[4 + 8 * i + j] >> 4;
                }
                (blk[i], codes)
            }
        }
    }
}
