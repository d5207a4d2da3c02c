//! Parallel block conversions (feature `rayon`): the `par_*` methods of [`Mx`],
//! [`BlockFp8`] and [`Nvfp4`].
//!
//! A tensor is cut into work items of about [`PAR_CHUNK`](crate::PAR_CHUNK) values
//! whatever the number of threads: groups of whole rows (whole tile rows for
//! [`BlockFp8`]), or, when one row holds more than `PAR_CHUNK` values, segments of a row
//! that start on a block boundary (32 values for MX, 64 for NVFP4, a tile for block FP8).
//! Every block is converted by exactly the serial code, so the results are bit-identical
//! to the serial methods. Below [`PAR_MIN_VALUES`](crate::PAR_MIN_VALUES) values, or when
//! the tensor is one work item, the serial method runs on the calling thread.

use core::mem::MaybeUninit;
use core::ops::Range;

use rayon::prelude::*;
use std::vec::Vec;

use super::dispatch;
use super::spec::soft;
use super::{BlockDest, BlockFp8, BlockSource, Mx, NvProfile, Nvfp4, Shape, as_uninit, expect_len};
use crate::Error;
use crate::par::{PAR_CHUNK, PAR_MIN_VALUES, split_ranges};

/// A work item: `nrows` rows from `r0`, columns `c0..c0 + ncols`.
#[derive(Clone, Copy, Debug)]
struct Piece {
    r0: usize,
    nrows: usize,
    c0: usize,
    ncols: usize,
}

impl Piece {
    /// The piece's own shape (rows keep the tensor's stride).
    fn shape(&self, whole: Shape) -> Shape {
        if self.nrows == 1 {
            Shape::vector(self.ncols)
        } else {
            Shape::matrix(self.nrows, self.ncols).with_stride(whole.stride())
        }
    }

    /// Its values in the unquantized slice.
    fn values(&self, whole: Shape) -> Range<usize> {
        let start = self.r0 * whole.stride() + self.c0;
        start..start + self.shape(whole).len()
    }
}

/// Cuts `shape` into pieces of whole `row_unit` rows, or (if `split_cols` and a row holds
/// more than `PAR_CHUNK` values) into one-row segments of a multiple of `col_unit` values;
/// `None` when the tensor is small or a single piece.
fn plan(shape: Shape, row_unit: usize, col_unit: usize, split_cols: bool) -> Option<Vec<Piece>> {
    if shape.is_empty() || shape.len() < PAR_MIN_VALUES {
        return None;
    }
    let (rows, cols) = (shape.rows(), shape.cols());
    let mut v = Vec::new();
    if split_cols && cols > PAR_CHUNK {
        let seg = PAR_CHUNK.div_ceil(col_unit) * col_unit;
        for r0 in 0..rows {
            let mut c0 = 0;
            while c0 < cols {
                let ncols = seg.min(cols - c0);
                v.push(Piece {
                    r0,
                    nrows: 1,
                    c0,
                    ncols,
                });
                c0 += ncols;
            }
        }
    } else {
        let per = (PAR_CHUNK / cols).max(1).div_ceil(row_unit) * row_unit;
        let mut r0 = 0;
        while r0 < rows {
            let nrows = per.min(rows - r0);
            v.push(Piece {
                r0,
                nrows,
                c0: 0,
                ncols: cols,
            });
            r0 += nrows;
        }
    }
    (v.len() > 1).then_some(v)
}

/// Where a piece's codes and scales are in a row-major, per-row layout whose lengths the
/// two functions give for a shape (MX and NVFP4).
fn row_layout(
    shape: Shape,
    p: &Piece,
    data_len: impl Fn(Shape) -> Result<usize, Error>,
    scales_len: impl Fn(Shape) -> Result<usize, Error>,
) -> Result<(Range<usize>, Range<usize>), Error> {
    let row = Shape::vector(shape.cols());
    let d0 = p.r0 * data_len(row)? + data_len(Shape::vector(p.c0))?;
    let s0 = p.r0 * scales_len(row)? + scales_len(Shape::vector(p.c0))?;
    let ps = p.shape(shape);
    Ok((d0..d0 + data_len(ps)?, s0..s0 + scales_len(ps)?))
}

impl Mx {
    fn piece_ranges(&self, shape: Shape, p: &Piece) -> Result<(Range<usize>, Range<usize>), Error> {
        row_layout(shape, p, |s| self.data_len(s), |s| self.scales_len(s))
    }

    fn check_all(
        &self,
        shape: Shape,
        data: usize,
        scales: usize,
        values: usize,
        what: &'static str,
    ) -> Result<(), Error> {
        expect_len("data", self.data_len(shape)?, data)?;
        expect_len("scales", self.scales_len(shape)?, scales)?;
        expect_len(what, shape.len(), values)?;
        dispatch::check_backend(self.backend).map(|_| ())
    }

    /// [`dequantize`](Self::dequantize) on the current rayon pool, with the same results.
    ///
    /// # Errors
    /// As [`dequantize`](Self::dequantize); nothing is written on error.
    ///
    /// ```
    /// use vcvt::block::{Mx, MxElement, Shape};
    /// use vcvt::BF16;
    ///
    /// let shape = Shape::matrix(64, 8192);
    /// let (blocks, scales) = (vec![0x21u8; 64 * 4096], vec![127u8; 64 * 256]);
    /// let mut out = vec![BF16::ZERO; shape.len()];
    /// Mx::new(MxElement::E2M1).par_dequantize(&blocks, &scales, shape, &mut out)?;
    /// assert_eq!([out[0].to_f32(), out[1].to_f32()], [0.5, 1.0]);
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    pub fn par_dequantize<D: BlockDest>(
        &self,
        data: &[u8],
        scales: &[u8],
        shape: Shape,
        dst: &mut [D],
    ) -> Result<(), Error> {
        self.par_dequantize_uninit(data, scales, shape, as_uninit(dst))
    }

    /// [`dequantize_uninit`](Self::dequantize_uninit) on the current rayon pool.
    ///
    /// # Errors
    /// As [`dequantize`](Self::dequantize).
    pub fn par_dequantize_uninit<D: BlockDest>(
        &self,
        data: &[u8],
        scales: &[u8],
        shape: Shape,
        dst: &mut [MaybeUninit<D>],
    ) -> Result<(), Error> {
        self.check_all(shape, data.len(), scales.len(), dst.len(), "dst")?;
        let Some(pieces) = plan(shape, 1, 32, true) else {
            return self.dequantize_uninit(data, scales, shape, dst);
        };
        let dsts = split_ranges(dst, pieces.iter().map(|p| p.values(shape)));
        pieces.into_par_iter().zip(dsts).try_for_each(|(p, d)| {
            let (dr, sr) = self.piece_ranges(shape, &p)?;
            self.dequantize_uninit(&data[dr], &scales[sr], p.shape(shape), d)
        })
    }

    /// [`quantize`](Self::quantize) on the current rayon pool, with the same results.
    ///
    /// # Errors
    /// As [`quantize`](Self::quantize); nothing is written on error.
    ///
    /// ```
    /// use vcvt::block::{Mx, MxElement, Shape};
    ///
    /// let src: Vec<f32> = (0..1 << 20).map(|i| (i % 97) as f32 - 48.0).collect();
    /// let shape = Shape::vector(src.len());
    /// let mx = Mx::new(MxElement::E2M1);
    /// let (mut a, mut s) = (vec![0u8; src.len() / 2], vec![0u8; src.len() / 32]);
    /// mx.par_quantize(&src, shape, &mut a, &mut s)?;
    /// let (mut b, mut t) = (vec![0u8; src.len() / 2], vec![0u8; src.len() / 32]);
    /// mx.quantize(&src, shape, &mut b, &mut t)?;
    /// assert!(a == b && s == t);
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    pub fn par_quantize<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [u8],
        scales: &mut [u8],
    ) -> Result<(), Error> {
        self.par_quantize_uninit(src, shape, as_uninit(data), as_uninit(scales))
    }

    /// [`quantize_uninit`](Self::quantize_uninit) on the current rayon pool.
    ///
    /// # Errors
    /// As [`quantize`](Self::quantize).
    pub fn par_quantize_uninit<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [MaybeUninit<u8>],
        scales: &mut [MaybeUninit<u8>],
    ) -> Result<(), Error> {
        self.check_all(shape, data.len(), scales.len(), src.len(), "src")?;
        let Some(pieces) = plan(shape, 1, 32, true) else {
            return self.quantize_uninit(src, shape, data, scales);
        };
        let ranges = pieces
            .iter()
            .map(|p| self.piece_ranges(shape, p))
            .collect::<Result<Vec<_>, _>>()?;
        let ds = split_ranges(data, ranges.iter().map(|r| r.0.clone()));
        let ss = split_ranges(scales, ranges.iter().map(|r| r.1.clone()));
        pieces
            .into_par_iter()
            .zip(ds)
            .zip(ss)
            .try_for_each(|((p, d), s)| {
                self.quantize_uninit(&src[p.values(shape)], p.shape(shape), d, s)
            })
    }
}

impl BlockFp8 {
    fn piece_ranges(&self, shape: Shape, p: &Piece) -> Result<(Range<usize>, Range<usize>), Error> {
        let cols = shape.cols();
        let tiles_per_row = cols.div_ceil(self.tile_cols);
        let d0 = p.r0 * cols + p.c0;
        let s0 = 4 * ((p.r0 / self.tile_rows) * tiles_per_row + p.c0 / self.tile_cols);
        let ps = p.shape(shape);
        Ok((
            d0..d0 + self.data_len(ps)?,
            s0..s0 + self.scale_inv_len(ps)?,
        ))
    }

    fn check_all(
        &self,
        shape: Shape,
        data: usize,
        scale_inv: usize,
        values: usize,
        what: &'static str,
    ) -> Result<(), Error> {
        expect_len("data", self.data_len(shape)?, data)?;
        expect_len("scale_inv", self.scale_inv_len(shape)?, scale_inv)?;
        expect_len(what, shape.len(), values)?;
        dispatch::check_backend(self.backend).map(|_| ())
    }

    /// [`dequantize`](Self::dequantize) on the current rayon pool, with the same results.
    ///
    /// # Errors
    /// As [`dequantize`](Self::dequantize); nothing is written on error.
    ///
    /// ```
    /// use vcvt::block::{BlockFp8, Shape};
    /// use vcvt::BF16;
    ///
    /// let shape = Shape::matrix(700, 1000); // edge tiles at the bottom and the right
    /// let weight = vec![0x38u8; 700 * 1000]; // E4M3 1.0
    /// let scale_inv: Vec<u8> = (0..6 * 8).flat_map(|t| (t as f32).to_le_bytes()).collect();
    /// let mut out = vec![BF16::ZERO; shape.len()];
    /// BlockFp8::deepseek().par_dequantize(&weight, &scale_inv, shape, &mut out)?;
    /// assert_eq!(out[699 * 1000 + 999].to_f32(), 47.0); // the last tile's scale
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    pub fn par_dequantize<D: BlockDest>(
        &self,
        data: &[u8],
        scale_inv: &[u8],
        shape: Shape,
        dst: &mut [D],
    ) -> Result<(), Error> {
        self.par_dequantize_uninit(data, scale_inv, shape, as_uninit(dst))
    }

    /// [`dequantize_uninit`](Self::dequantize_uninit) on the current rayon pool.
    ///
    /// # Errors
    /// As [`dequantize`](Self::dequantize).
    pub fn par_dequantize_uninit<D: BlockDest>(
        &self,
        data: &[u8],
        scale_inv: &[u8],
        shape: Shape,
        dst: &mut [MaybeUninit<D>],
    ) -> Result<(), Error> {
        self.check_all(shape, data.len(), scale_inv.len(), dst.len(), "dst")?;
        let Some(pieces) = plan(shape, self.tile_rows, self.tile_cols, true) else {
            return self.dequantize_uninit(data, scale_inv, shape, dst);
        };
        let dsts = split_ranges(dst, pieces.iter().map(|p| p.values(shape)));
        pieces.into_par_iter().zip(dsts).try_for_each(|(p, d)| {
            let (dr, sr) = self.piece_ranges(shape, &p)?;
            self.dequantize_uninit(&data[dr], &scale_inv[sr], p.shape(shape), d)
        })
    }

    /// [`quantize`](Self::quantize) on the current rayon pool, with the same results.
    ///
    /// Work items are whole tile rows (and, for one-row tiles, row segments of whole
    /// tiles), since a tile's scale depends on all of its values.
    ///
    /// # Errors
    /// As [`quantize`](Self::quantize); nothing is written on error.
    ///
    /// ```
    /// use vcvt::block::{BlockFp8, Shape};
    ///
    /// let shape = Shape::matrix(512, 1024);
    /// let w: Vec<f32> = (0..shape.len()).map(|i| (i % 1000) as f32 / 7.0).collect();
    /// let fp8 = BlockFp8::deepseek();
    /// let (mut q, mut s) = (vec![0u8; shape.len()], vec![0u8; 4 * 4 * 8]);
    /// fp8.par_quantize(&w, shape, &mut q, &mut s)?;
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    pub fn par_quantize<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [u8],
        scale_inv: &mut [u8],
    ) -> Result<(), Error> {
        self.par_quantize_uninit(src, shape, as_uninit(data), as_uninit(scale_inv))
    }

    /// [`quantize_uninit`](Self::quantize_uninit) on the current rayon pool.
    ///
    /// # Errors
    /// As [`quantize`](Self::quantize).
    pub fn par_quantize_uninit<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [MaybeUninit<u8>],
        scale_inv: &mut [MaybeUninit<u8>],
    ) -> Result<(), Error> {
        self.check_all(shape, data.len(), scale_inv.len(), src.len(), "src")?;
        let Some(pieces) = plan(shape, self.tile_rows, self.tile_cols, self.tile_rows == 1) else {
            return self.quantize_uninit(src, shape, data, scale_inv);
        };
        let ranges = pieces
            .iter()
            .map(|p| self.piece_ranges(shape, p))
            .collect::<Result<Vec<_>, _>>()?;
        let ds = split_ranges(data, ranges.iter().map(|r| r.0.clone()));
        let ss = split_ranges(scale_inv, ranges.iter().map(|r| r.1.clone()));
        pieces
            .into_par_iter()
            .zip(ds)
            .zip(ss)
            .try_for_each(|((p, d), s)| {
                self.quantize_uninit(&src[p.values(shape)], p.shape(shape), d, s)
            })
    }
}

impl Nvfp4 {
    fn piece_ranges(&self, shape: Shape, p: &Piece) -> Result<(Range<usize>, Range<usize>), Error> {
        row_layout(shape, p, |s| self.data_len(s), |s| self.scales_len(s))
    }

    fn check_all(
        &self,
        shape: Shape,
        data: usize,
        scales: usize,
        values: usize,
        what: &'static str,
    ) -> Result<(), Error> {
        expect_len("data", self.data_len(shape)?, data)?;
        expect_len("scales", self.scales_len(shape)?, scales)?;
        expect_len(what, shape.len(), values)?;
        dispatch::check_backend(self.backend).map(|_| ())
    }

    /// [`dequantize`](Self::dequantize) on the current rayon pool, with the same results.
    ///
    /// # Errors
    /// As [`dequantize`](Self::dequantize); nothing is written on error.
    ///
    /// ```
    /// use vcvt::block::{Nvfp4, Shape};
    ///
    /// let shape = Shape::matrix(128, 4096);
    /// let (data, scales) = (vec![0x22u8; 128 * 2048], vec![0x38u8; 128 * 256]); // 1.0, scale 1
    /// let mut out = vec![0.0f32; shape.len()];
    /// Nvfp4::new().par_dequantize(&data, &scales, 0.5, shape, &mut out)?;
    /// assert_eq!(out[0], 0.5);
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    pub fn par_dequantize<D: BlockDest>(
        &self,
        data: &[u8],
        scales: &[u8],
        tensor_scale: f32,
        shape: Shape,
        dst: &mut [D],
    ) -> Result<(), Error> {
        self.par_dequantize_uninit(data, scales, tensor_scale, shape, as_uninit(dst))
    }

    /// [`dequantize_uninit`](Self::dequantize_uninit) on the current rayon pool.
    ///
    /// # Errors
    /// As [`dequantize`](Self::dequantize).
    pub fn par_dequantize_uninit<D: BlockDest>(
        &self,
        data: &[u8],
        scales: &[u8],
        tensor_scale: f32,
        shape: Shape,
        dst: &mut [MaybeUninit<D>],
    ) -> Result<(), Error> {
        self.check_all(shape, data.len(), scales.len(), dst.len(), "dst")?;
        let Some(pieces) = plan(shape, 1, 64, true) else {
            return self.dequantize_uninit(data, scales, tensor_scale, shape, dst);
        };
        let dsts = split_ranges(dst, pieces.iter().map(|p| p.values(shape)));
        pieces.into_par_iter().zip(dsts).try_for_each(|(p, d)| {
            let (dr, sr) = self.piece_ranges(shape, &p)?;
            self.dequantize_uninit(&data[dr], &scales[sr], tensor_scale, p.shape(shape), d)
        })
    }

    /// [`quantize`](Self::quantize) on the current rayon pool, with the same results
    /// (the tensor scale, when not given, comes from a parallel `amax` of the whole
    /// tensor).
    ///
    /// # Errors
    /// As [`quantize`](Self::quantize); nothing is written on error.
    ///
    /// ```
    /// use vcvt::block::{Nvfp4, Shape};
    ///
    /// let shape = Shape::matrix(256, 2048);
    /// let w: Vec<f32> = (0..shape.len()).map(|i| (i % 61) as f32 - 30.0).collect();
    /// let (mut data, mut scales) = (vec![0u8; shape.len() / 2], vec![0u8; shape.len() / 16]);
    /// let g = Nvfp4::new().par_quantize(&w, shape, &mut data, &mut scales, None)?;
    /// assert_eq!(g, 30.0 / 2688.0);
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    pub fn par_quantize<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [u8],
        scales: &mut [u8],
        tensor_scale: Option<f32>,
    ) -> Result<f32, Error> {
        self.par_quantize_uninit(src, shape, as_uninit(data), as_uninit(scales), tensor_scale)
    }

    /// [`quantize_uninit`](Self::quantize_uninit) on the current rayon pool.
    ///
    /// # Errors
    /// As [`quantize`](Self::quantize).
    pub fn par_quantize_uninit<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [MaybeUninit<u8>],
        scales: &mut [MaybeUninit<u8>],
        tensor_scale: Option<f32>,
    ) -> Result<f32, Error> {
        self.check_all(shape, data.len(), scales.len(), src.len(), "src")?;
        let Some(pieces) = plan(shape, 1, 64, true) else {
            return self.quantize_uninit(src, shape, data, scales, tensor_scale);
        };
        let g = match (tensor_scale, self.profile) {
            (Some(g), _) => g,
            (None, NvProfile::ModelOpt) => {
                let cols = shape.cols();
                let m = (0..shape.rows())
                    .into_par_iter()
                    .map(|r| super::spec::amax_bits(&src[r * shape.stride()..][..cols]))
                    .max()
                    .unwrap_or(0);
                f32::from_bits(soft::div(m, super::nvfp4::SIX_448))
            }
            (None, _) => self.identity_tensor_scale(),
        };
        let ranges = pieces
            .iter()
            .map(|p| self.piece_ranges(shape, p))
            .collect::<Result<Vec<_>, _>>()?;
        let ds = split_ranges(data, ranges.iter().map(|r| r.0.clone()));
        let ss = split_ranges(scales, ranges.iter().map(|r| r.1.clone()));
        pieces
            .into_par_iter()
            .zip(ds)
            .zip(ss)
            .try_for_each(|((p, d), s)| {
                self.quantize_uninit(&src[p.values(shape)], p.shape(shape), d, s, Some(g))
                    .map(|_| ())
            })?;
        Ok(g)
    }
}
