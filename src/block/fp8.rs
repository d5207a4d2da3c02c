//! Block FP8: E4M3 codes with one f32 scale per 2-D tile, as DeepSeek-V3/R1 ship their
//! weights (`weight` `float8_e4m3fn [out, in]` + `weight_scale_inv` `f32 [⌈out/128⌉,
//! ⌈in/128⌉]`) and quantize activations (1×128 groups).

use core::mem::MaybeUninit;

use super::dispatch;
use super::spec::fp8::{dequantize_run, quantize_one, tile_scale};
use super::spec::put;
use super::{BlockDest, BlockSource, Shape, as_uninit, checked_mul, expect_len, f32_at};
use crate::arch::Isa;
use crate::{Backend, Error, F8E4M3, KernelInfo, NanPolicy, Overflow};

/// How [`BlockFp8::quantize`] chooses a tile's scale.
///
/// Both follow DeepSeek's `act_quant` kernel (`inference/kernel.py`): `amax = max(max|x|,
/// 1e-4)`, `s = amax / 448` in f32, codes `e4m3(x / s)` (f32 division, then nearest-even
/// E4M3 rounding, saturating at ±448), `scale_inv = s`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fp8Profile {
    /// `s = amax / 448` (DeepSeek-V3/R1 weights and activations).
    #[default]
    DeepSeek,
    /// `s` rounded up to a power of two (DeepSeek-V3.1's `scale_fmt = "ue8m0"`): the
    /// smallest power of two ≥ `amax / 448`. DeepSeek computes it as `exp2(ceil(log2(s)))`
    /// with a float `log2`, which can round `log2` of a value just above a power of two down
    /// to the integer; vcvt takes the exact smallest power of two.
    Ue8m0,
}

/// Block FP8 with `tile_rows × tile_cols` tiles (DeepSeek: 128×128 for weights, 1×128 for
/// activations).
///
/// Dequantization follows DeepSeek's `weight_dequant` (`inference/kernel.py`) and
/// `fp8_cast_bf16.py`: `y = f32(e4m3) · scale_inv` rounded to f32, then rounded (nearest
/// even) to the destination: two roundings for BF16/F16 output, in that order, as the
/// reference does. Tiles at the right and bottom edges are cropped to the shape.
///
/// ```
/// use vcvt::block::{BlockFp8, Shape};
/// use vcvt::BF16;
///
/// // A 2×3 weight with one tile: codes of 1.0, 2.0, -0.5, ... and one f32 scale_inv.
/// let weight = [0x38u8, 0x40, 0xB0, 0x00, 0x38, 0x7E];
/// let scale_inv = 0.5f32.to_le_bytes();
/// let mut out = [BF16::ZERO; 6];
/// BlockFp8::deepseek().dequantize(&weight, &scale_inv, Shape::matrix(2, 3), &mut out)?;
/// assert_eq!(out.map(|x| x.to_f32()), [0.5, 1.0, -0.25, 0.0, 0.5, 224.0]);
/// # Ok::<(), vcvt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockFp8 {
    pub(super) tile_rows: usize,
    pub(super) tile_cols: usize,
    profile: Fp8Profile,
    pub(super) backend: Option<Backend>,
}

impl BlockFp8 {
    /// Tiles of `tile_rows × tile_cols` values (both must be non-zero: checked by the
    /// conversions), with the [`Fp8Profile::DeepSeek`] scale.
    pub const fn new(tile_rows: usize, tile_cols: usize) -> BlockFp8 {
        BlockFp8 {
            tile_rows,
            tile_cols,
            profile: Fp8Profile::DeepSeek,
            backend: None,
        }
    }

    /// DeepSeek-V3/R1 weights: 128×128 tiles.
    pub const fn deepseek() -> BlockFp8 {
        BlockFp8::new(128, 128)
    }

    /// The same tiles with another scale profile.
    pub const fn profile(self, profile: Fp8Profile) -> BlockFp8 {
        BlockFp8 { profile, ..self }
    }

    /// Runs on `backend` instead of [`Backend::active`] (same results).
    pub const fn on(self, backend: Backend) -> BlockFp8 {
        BlockFp8 {
            backend: Some(backend),
            ..self
        }
    }

    fn tiles(&self, shape: Shape) -> Result<(usize, usize), Error> {
        shape.check()?;
        if self.tile_rows == 0 || self.tile_cols == 0 {
            return Err(Error::BlockShape {
                rows: shape.rows(),
                cols: shape.cols(),
                reason: "a tile dimension is zero",
            });
        }
        Ok((
            shape.rows().div_ceil(self.tile_rows),
            shape.cols().div_ceil(self.tile_cols),
        ))
    }

    /// Bytes of E4M3 codes that `shape` needs (`rows · cols`).
    pub fn data_len(&self, shape: Shape) -> Result<usize, Error> {
        self.tiles(shape)?;
        checked_mul(shape.rows(), shape.cols(), shape)
    }

    /// Bytes of little-endian f32 scales that `shape` needs (4 per tile, row-major
    /// `⌈rows / tile_rows⌉ × ⌈cols / tile_cols⌉`).
    pub fn scale_inv_len(&self, shape: Shape) -> Result<usize, Error> {
        let (tr, tc) = self.tiles(shape)?;
        checked_mul(checked_mul(tr, tc, shape)?, 4, shape)
    }

    fn check(&self, shape: Shape, data: usize, scale_inv: usize) -> Result<(), Error> {
        expect_len("data", self.data_len(shape)?, data)?;
        expect_len("scale_inv", self.scale_inv_len(shape)?, scale_inv)
    }

    /// Dequantizes E4M3 codes `data` (`rows · cols` bytes) with the f32 tile scales
    /// `scale_inv` (little-endian bytes) into `dst` (`shape.len()` values).
    ///
    /// # Errors
    /// [`Error::BlockLength`] when a buffer's length differs from what the shape needs,
    /// [`Error::BlockShape`] for a zero tile or a stride below `cols`; nothing is written.
    pub fn dequantize<D: BlockDest>(
        &self,
        data: &[u8],
        scale_inv: &[u8],
        shape: Shape,
        dst: &mut [D],
    ) -> Result<(), Error> {
        self.dequantize_uninit(data, scale_inv, shape, as_uninit(dst))
    }

    /// Which kernel [`dequantize`](Self::dequantize) runs for `D` destinations on this
    /// format's backend (the one given to [`on`](Self::on), else [`Backend::active`]): its
    /// instruction set and vector width, or `scalar`, as [`Backend::kernel`] reports them
    /// for the element conversions. A tile with a NaN or infinite scale (and, on x86-64, a
    /// call under a non-default MXCSR) runs the scalar specification whatever the kernel.
    ///
    /// ```
    /// use vcvt::{BF16, Backend};
    /// use vcvt::block::BlockFp8;
    ///
    /// let info = BlockFp8::deepseek().on(Backend::Scalar).dequantize_kernel::<BF16>();
    /// assert_eq!(info.to_string(), "scalar");
    /// ```
    pub fn dequantize_kernel<D: BlockDest>(&self) -> KernelInfo {
        let t = dispatch::table(self.backend.unwrap_or_else(Backend::active));
        let d = D::KIND as usize;
        let isa = if t.fp8_dequant[d].is_some() {
            t.fp8_dequant_isa[d]
        } else {
            Isa::Scalar
        };
        KernelInfo::of(isa, 1)
    }

    /// Which kernel [`quantize`](Self::quantize) runs for `S` sources on this format's
    /// backend (the one given to [`on`](Self::on), else [`Backend::active`]), as
    /// [`dequantize_kernel`](Self::dequantize_kernel) says for dequantization. Tiles whose
    /// scale the kernel cannot apply exactly run the scalar specification whatever the
    /// kernel.
    ///
    /// ```
    /// use vcvt::{BF16, Backend};
    /// use vcvt::block::BlockFp8;
    ///
    /// let info = BlockFp8::deepseek().on(Backend::Scalar).quantize_kernel::<BF16>();
    /// assert!(!info.is_simd());
    /// // On an AVX-512 machine: "avx512 (512-bit)".
    /// println!("{}", BlockFp8::deepseek().quantize_kernel::<f32>());
    /// ```
    pub fn quantize_kernel<S: BlockSource>(&self) -> KernelInfo {
        let t = dispatch::table(self.backend.unwrap_or_else(Backend::active));
        let isa = if t.fp8_quant[S::KIND as usize].is_some() {
            t.generic_isa
        } else {
            Isa::Scalar
        };
        KernelInfo::of(isa, 1)
    }

    /// [`dequantize`](Self::dequantize) into an uninitialised destination.
    pub fn dequantize_uninit<D: BlockDest>(
        &self,
        data: &[u8],
        scale_inv: &[u8],
        shape: Shape,
        dst: &mut [MaybeUninit<D>],
    ) -> Result<(), Error> {
        self.check(shape, data.len(), scale_inv.len())?;
        expect_len("dst", shape.len(), dst.len())?;
        let backend = dispatch::resolve(self.backend)?;
        if !shape.is_empty() {
            // (Rows of zero columns must not be sliced.)
            self.dequantize_checked(backend, data, scale_inv, shape, dst);
        }
        Ok(())
    }

    /// [`dequantize_uninit`](Self::dequantize_uninit) after its checks: `shape` is valid
    /// and not empty, the tiles are not empty, every buffer has the length it needs, and
    /// `backend` runs here.
    pub(super) fn dequantize_checked<D: BlockDest>(
        &self,
        backend: Backend,
        data: &[u8],
        scale_inv: &[u8],
        shape: Shape,
        dst: &mut [MaybeUninit<D>],
    ) {
        let table = dispatch::table(backend);
        let kernel = table.fp8_dequant[D::KIND as usize];
        let tiles_per_row = shape.cols().div_ceil(self.tile_cols);
        let cols = shape.cols();
        if let Some(band) = table.fp8_dequant_band[D::KIND as usize] {
            // One call per band of rows that share a tile row's scales. The destination
            // stride in bytes is used only between rows: a band of one row passes 0, since a
            // one-row shape may have any stride (even one whose byte count overflows); with
            // two rows or more, `dst` holds more than `stride` values, so it fits.
            let dst_stride = |rows: usize| {
                if rows > 1 {
                    shape.stride() * core::mem::size_of::<D>()
                } else {
                    0
                }
            };
            let mut r0 = 0;
            while r0 < shape.rows() {
                let rows = self.tile_rows.min(shape.rows() - r0);
                let tile_row = r0 / self.tile_rows;
                let scales = &scale_inv[4 * tile_row * tiles_per_row..][..4 * tiles_per_row];
                let codes = &data[r0 * cols..(r0 + rows) * cols];
                let out = &mut dst[r0 * shape.stride()..(r0 + rows - 1) * shape.stride() + cols];
                // SAFETY: `codes` holds the band's `rows · cols` bytes, `scales` its tile
                // row's `4 · ⌈cols / tile_cols⌉` bytes, `out` its rows of `cols` values of
                // `D` (the slot's type), `stride` values apart and not overlapping
                // (`stride ≥ cols`, checked by `Shape::check`); `tile_cols > 0` and
                // `rows ≥ 1`; `backend` runs here (the caller's contract).
                unsafe {
                    band(
                        codes.as_ptr(),
                        scales.as_ptr(),
                        self.tile_cols,
                        cols,
                        rows,
                        dst_stride(rows),
                        out.as_mut_ptr().cast(),
                    )
                };
                r0 += rows;
            }
            return;
        }
        for r in 0..shape.rows() {
            let codes = &data[r * cols..(r + 1) * cols];
            let out = &mut dst[r * shape.stride()..r * shape.stride() + cols];
            let tile_row = r / self.tile_rows;
            let scales =
                &scale_inv[4 * tile_row * tiles_per_row..4 * (tile_row + 1) * tiles_per_row];
            if let Some(f) = kernel {
                // SAFETY: `codes` has `cols` bytes, `scales` the 4 · ⌈cols / tile_cols⌉ bytes
                // of this tile row, `out` `cols` values of `D`, the type the slot was
                // registered for; `tile_cols > 0` (checked by `tiles`); `check_backend`
                // returned this table only if its backend runs here.
                unsafe {
                    f(
                        codes.as_ptr(),
                        scales.as_ptr(),
                        self.tile_cols,
                        cols,
                        out.as_mut_ptr().cast(),
                    )
                };
                continue;
            }
            for t in 0..tiles_per_row {
                let lo = t * self.tile_cols;
                let hi = (lo + self.tile_cols).min(cols);
                let s = f32_at(scales, t);
                dequantize_run(&codes[lo..hi], s, &mut out[lo..hi]);
            }
        }
    }

    /// Quantizes `src` into E4M3 codes `data` and f32 tile scales `scale_inv`
    /// (little-endian bytes), as the type docs and [`Fp8Profile`] say.
    ///
    /// # Errors
    /// As for [`dequantize`](Self::dequantize); nothing is written on error.
    pub fn quantize<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [u8],
        scale_inv: &mut [u8],
    ) -> Result<(), Error> {
        self.quantize_uninit(src, shape, as_uninit(data), as_uninit(scale_inv))
    }

    /// [`quantize`](Self::quantize) into uninitialised buffers, all of which it initialises
    /// on success.
    pub fn quantize_uninit<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [MaybeUninit<u8>],
        scale_inv: &mut [MaybeUninit<u8>],
    ) -> Result<(), Error> {
        self.check(shape, data.len(), scale_inv.len())?;
        expect_len("src", shape.len(), src.len())?;
        let k = dispatch::check_backend(self.backend)?;
        if shape.is_empty() {
            // Nothing to convert (and rows of zero columns must not be sliced).
            return Ok(());
        }
        let (tiles_down, tiles_across) = self.tiles(shape)?;
        let cols = shape.cols();
        let ue8m0 = self.profile == Fp8Profile::Ue8m0;
        if let Some(f) = k.fp8_quant[S::KIND as usize] {
            for tr in 0..tiles_down {
                let r0 = tr * self.tile_rows;
                let r1 = (r0 + self.tile_rows).min(shape.rows());
                let first = r0 * shape.stride();
                let src = &src[first..(r1 - 1) * shape.stride() + cols];
                let codes = &mut data[r0 * cols..r1 * cols];
                let scales = &mut scale_inv[4 * tr * tiles_across..4 * (tr + 1) * tiles_across];
                // SAFETY: `src` holds rows `r0..r1` (`(r1 − r0 − 1) · stride + cols` values
                // of `S`, the slot's type: `S::KIND` indexes the table), `stride` values
                // apart; `codes` their `(r1 − r0) · cols` bytes, `scales` the band's
                // `4 · tiles_across` bytes; the counts are non-zero (`shape` is not empty,
                // `tiles` checked the tile); `check_backend` returned this table only if its
                // backend runs here. The kernel initialises every byte of `codes` and
                // `scales`.
                unsafe {
                    f(
                        src.as_ptr().cast(),
                        shape.stride() * core::mem::size_of::<S>(),
                        r1 - r0,
                        cols,
                        self.tile_cols,
                        ue8m0,
                        codes.as_mut_ptr().cast(),
                        scales.as_mut_ptr().cast(),
                    )
                };
            }
            return Ok(());
        }
        let backend = self.backend.unwrap_or_else(Backend::active);
        // Hardware division is the IEEE one only under the default FP environment; read once
        // per call (a caller changing it meanwhile would be changing it under this call).
        let hardware = hardware_div_is_ieee();
        for tr in 0..tiles_down {
            let r0 = tr * self.tile_rows;
            let r1 = (r0 + self.tile_rows).min(shape.rows());
            for tc in 0..tiles_across {
                let c0 = tc * self.tile_cols;
                let c1 = (c0 + self.tile_cols).min(cols);
                let mut m = 0u32;
                for r in r0..r1 {
                    let row = &src[r * shape.stride() + c0..r * shape.stride() + c1];
                    m = m.max(super::spec::amax_bits(row));
                }
                let s = tile_scale(m, ue8m0);
                let i = 4 * (tr * tiles_across + tc);
                for (slot, byte) in scale_inv[i..i + 4].iter_mut().zip(s.to_le_bytes()) {
                    put(slot, byte);
                }
                for r in r0..r1 {
                    let row = &src[r * shape.stride() + c0..r * shape.stride() + c1];
                    let out = &mut data[r * cols + c0..r * cols + c1];
                    // A finite scale (amax and the 1e-4 floor make it positive): the
                    // hardware path is exact. An infinite or NaN scale (a tile holding ±Inf or
                    // NaN) takes the integer path, whose invalid-operation NaN is defined.
                    if hardware && s < 0x7F80_0000 {
                        quantize_run_hw(backend, row, s, out);
                    } else {
                        for (d, x) in out.iter_mut().zip(row) {
                            put(d, quantize_one(x.f32_bits(), s));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The `scale_inv` that [`quantize`](Self::quantize) stores for a tile whose largest
    /// magnitude is `amax` (as [`amax`](super::amax) computes it over the tile): the profile's
    /// scale rule alone, for callers that need a tensor's scales before its codes (a file
    /// format that stores the scales first) without quantizing twice.
    ///
    /// ```
    /// use vcvt::block::{BlockFp8, Shape, amax};
    ///
    /// let w = [1.5f32, -896.0, 3.0, 0.25];
    /// let mut codes = [0u8; 4];
    /// let mut scale_inv = [0u8; 4];
    /// let fp8 = BlockFp8::deepseek();
    /// fp8.quantize(&w, Shape::matrix(2, 2), &mut codes, &mut scale_inv)?;
    /// assert_eq!(fp8.scale_inv(amax(&w)).to_le_bytes(), scale_inv);
    /// assert_eq!(fp8.scale_inv(896.0f32), 2.0);
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    pub fn scale_inv<S: BlockSource>(&self, amax: S) -> f32 {
        f32::from_bits(self.scale(super::spec::amax_bits(&[amax])))
    }

    /// The f32 scale (bits) of a tile whose `max |x|` has bits `m`.
    fn scale(&self, m: u32) -> u32 {
        tile_scale(m, self.profile == Fp8Profile::Ue8m0)
    }
}

/// Whether this CPU's f32 division, as the compiler emits `a / b` here, is IEEE division
/// rounded to nearest even with subnormals kept: on x86-64 when MXCSR is the default. Other
/// targets (and Miri) answer `false` and quantize with [`soft::div`](super::spec::soft::div).
#[inline]
fn hardware_div_is_ieee() -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        crate::arch::x86_64::mxcsr_is_default()
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    {
        false
    }
}

/// Values per step of [`quantize_run_hw`]'s stack buffers.
const HW_STEP: usize = 64;

/// One tile row segment quantized as the integer path does, `e4m3(x / s)`, with the
/// hardware's f32 division (vectorised by the compiler) and the backend's narrowing kernel:
/// the same codes, when [`hardware_div_is_ieee`] holds and `s` is finite and positive.
///
/// Why the codes are the same: for a finite positive `s`, `x / s` is the IEEE quotient
/// rounded to nearest even in both paths (the integer path's argument is in [`soft`](super::spec::soft); the
/// hardware's under the default MXCSR is IEEE's), and it is never an invalid operation. A NaN
/// `x` is the only NaN case; [`soft::div`](super::spec::soft::div) returns it quieted, which is what the select below
/// passes on (Rust leaves the NaN that a division returns unspecified, so it is not used).
/// The narrowing kernels implement `codec::narrow_f32` with the same policy (saturate, NaN
/// sign kept), whatever the FP environment.
fn quantize_run_hw<S: BlockSource>(
    backend: Backend,
    row: &[S],
    s: u32,
    out: &mut [MaybeUninit<u8>],
) {
    let sf = f32::from_bits(s);
    let mut bits = [0u32; HW_STEP];
    let mut q = [0f32; HW_STEP];
    let mut codes = [F8E4M3::ZERO; HW_STEP];
    let options = crate::Options::new()
        .overflow(Overflow::Saturate)
        .nan(NanPolicy::Preserve);
    for (o, x) in out.chunks_mut(HW_STEP).zip(row.chunks(HW_STEP)) {
        let n = x.len();
        S::f32_bits_of(backend, x, &mut bits[..n]);
        for (q, &b) in q.iter_mut().zip(&bits[..n]) {
            let nan = b & 0x7FFF_FFFF > 0x7F80_0000;
            let quotient = f32::from_bits(b) / sf;
            *q = if nan {
                f32::from_bits(b | 0x0040_0000)
            } else {
                quotient
            };
        }
        // Cannot fail: `backend` passed `check_backend` and the lengths are equal.
        let _ = crate::convert_slice_on(backend, &q[..n], &mut codes[..n], options);
        for (o, c) in o.iter_mut().zip(&codes[..n]) {
            put(o, c.to_bits());
        }
    }
}
