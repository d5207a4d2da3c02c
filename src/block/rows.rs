//! Row handles: a block format, a row width, a value type and a backend resolved once, for
//! loops that quantize or dequantize one row per call (a KV-cache page, a weight row as a
//! matmul streams it). [`MxRows`] for MX, [`Fp8Rows`] for block FP8.
//!
//! What a handle saves is the per-call work of the shape-taking functions: checking the
//! format against the shape, computing the lengths a shape needs (with overflow checks),
//! resolving the backend. A call on a handle compares its three buffer lengths with the
//! ones computed when the handle was made and goes to the row kernel.

use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;

use super::spec::kernels::MxDequantFn;
use super::{BlockDest, BlockFp8, BlockSource, Mx, Shape, as_uninit, dispatch, expect_len};
use crate::{Backend, Error};

/// One row width of an [`Mx`] format resolved once: made by [`Mx::rows`], then called per
/// row with that row's codes, its scale bytes and its `T` values.
///
/// Every call checks the three lengths ([`data_len`](Self::data_len),
/// [`scales_len`](Self::scales_len), [`cols`](Self::cols)) and writes what [`Mx::quantize`]
/// and [`Mx::dequantize`] write for `Shape::vector(cols)`, with the same errors. The handle
/// is small and `Copy`, `Send` and `Sync`, and keeps the backend it was made for whatever
/// `VCVT_BACKEND` or later calls say.
///
/// ```
/// use vcvt::BF16;
/// use vcvt::block::{Mx, MxElement};
///
/// // An MXFP4 matrix of 3 rows × 64 values, dequantized one row per call.
/// let (rows, cols) = (3, 64);
/// let mxfp4 = Mx::new(MxElement::E2M1);
/// let row = mxfp4.rows::<BF16>(cols)?;
/// let codes = vec![0x21u8; rows * row.data_len()]; // 0.5 and 1.0, alternating
/// let scales = vec![128u8; rows * row.scales_len()]; // 2^1
/// let mut out = vec![BF16::ZERO; rows * cols];
/// for r in 0..rows {
///     row.dequantize(
///         &codes[r * row.data_len()..][..row.data_len()],
///         &scales[r * row.scales_len()..][..row.scales_len()],
///         &mut out[r * cols..][..cols],
///     )?;
/// }
/// assert_eq!((out[0].to_f32(), out[1].to_f32()), (1.0, 2.0));
/// # Ok::<(), vcvt::Error>(())
/// ```
pub struct MxRows<T> {
    mx: Mx,
    backend: Backend,
    /// The plain path's row kernel for `T`, when the format takes it (resolved here so
    /// that a call goes straight to it).
    dequant: Option<MxDequantFn>,
    cols: usize,
    data_len: usize,
    scales_len: usize,
    // A `fn` pointer: the handle holds no `T`, so it is `Send`, `Sync` and `Copy`.
    _values: PhantomData<fn(T) -> T>,
}

impl<T> Clone for MxRows<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for MxRows<T> {}

impl<T> fmt::Debug for MxRows<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MxRows")
            .field("format", &self.mx)
            .field("values", &core::any::type_name::<T>())
            .field("backend", &self.backend)
            .field("cols", &self.cols)
            .finish()
    }
}

impl Mx {
    /// A handle for rows of `cols` values of type `T` (f32, BF16 or F16) in this format,
    /// on its backend (the one given to [`on`](Mx::on), else [`Backend::active`] now).
    ///
    /// # Errors
    /// As [`quantize`](Mx::quantize) for `Shape::vector(cols)`: [`Error::BlockShape`] when
    /// the profile or layout does not fit the element or the width (the ggml layout needs
    /// a multiple of 32), [`Error::BackendUnavailable`].
    ///
    /// ```
    /// use vcvt::block::{Mx, MxElement, MxLayout};
    /// let row = Mx::new(MxElement::E2M1).rows::<f32>(100)?;
    /// assert_eq!((row.data_len(), row.scales_len()), (50, 4));
    /// assert!(Mx::new(MxElement::E2M1).layout(MxLayout::Ggml).rows::<f32>(100).is_err());
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    pub fn rows<T: BlockDest>(&self, cols: usize) -> Result<MxRows<T>, Error> {
        let shape = Shape::vector(cols);
        let backend = dispatch::resolve(self.backend)?;
        Ok(MxRows {
            data_len: self.data_len(shape)?,
            scales_len: self.scales_len(shape)?,
            backend,
            dequant: self.plain_dequant_kernel::<T>(backend),
            mx: *self,
            cols,
            _values: PhantomData,
        })
    }
}

impl<T> MxRows<T> {
    /// Values per row.
    #[inline]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Bytes of element codes per row.
    #[inline]
    pub fn data_len(&self) -> usize {
        self.data_len
    }

    /// Scale bytes per row (0 in the ggml layout, whose blocks hold them).
    #[inline]
    pub fn scales_len(&self) -> usize {
        self.scales_len
    }

    /// The backend this handle runs on.
    #[inline]
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The format.
    #[inline]
    pub fn format(&self) -> Mx {
        self.mx
    }
}

impl<T: BlockDest> MxRows<T> {
    /// Dequantizes one row: `data` ([`data_len`](Self::data_len) bytes) and `scales`
    /// ([`scales_len`](Self::scales_len) bytes) into `dst` ([`cols`](Self::cols) values).
    ///
    /// # Errors
    /// [`Error::BlockLength`] naming the first buffer whose length is not the row's, as
    /// [`Mx::dequantize`] does; nothing is written then.
    #[inline]
    pub fn dequantize(&self, data: &[u8], scales: &[u8], dst: &mut [T]) -> Result<(), Error> {
        self.dequantize_uninit(data, scales, as_uninit(dst))
    }

    /// [`dequantize`](Self::dequantize) into an uninitialised row, which it initialises on
    /// success.
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// use vcvt::block::{Mx, MxElement};
    ///
    /// let row = Mx::new(MxElement::E4M3).rows::<f32>(2)?;
    /// let mut out = [MaybeUninit::<f32>::uninit(); 2];
    /// row.dequantize_uninit(&[0x38, 0xB8], &[127], &mut out)?; // 1.0, -1.0, scale 1
    /// // SAFETY: `dequantize_uninit` succeeded, so both values are initialised.
    /// assert_eq!(unsafe { [out[0].assume_init(), out[1].assume_init()] }, [1.0, -1.0]);
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    #[inline]
    pub fn dequantize_uninit(
        &self,
        data: &[u8],
        scales: &[u8],
        dst: &mut [MaybeUninit<T>],
    ) -> Result<(), Error> {
        expect_len("data", self.data_len, data.len())?;
        expect_len("scales", self.scales_len, scales.len())?;
        expect_len("dst", self.cols, dst.len())?;
        match self.dequant {
            // A row of whole blocks: the kernel alone.
            Some(f) if self.cols.is_multiple_of(32) => {
                // SAFETY: `dequant` is the plain path's slot for this element and `T` in the
                // table of `self.backend`, which `resolve` found available when the handle
                // was made (a CPU's features do not go away); the row's `cols / 32` blocks
                // have their `data_len` code bytes, `scales_len` scale bytes and `cols`
                // values (the lengths checked above), as the slot's contract asks.
                unsafe {
                    f(
                        data.as_ptr(),
                        scales.as_ptr(),
                        self.cols / 32,
                        dst.as_mut_ptr().cast(),
                    )
                }
            }
            // SAFETY: as above; `dequantize_plain_row` also takes the short last block.
            Some(f) => unsafe { self.mx.dequantize_plain_row(f, data, scales, dst) },
            None if self.cols != 0 => {
                let shape = Shape::vector(self.cols);
                self.mx
                    .dequantize_checked(self.backend, data, scales, shape, dst);
            }
            None => {}
        }
        Ok(())
    }
}

impl<T: BlockSource> MxRows<T> {
    /// Quantizes one row: `src` ([`cols`](Self::cols) values) into `data`
    /// ([`data_len`](Self::data_len) bytes) and `scales` ([`scales_len`](Self::scales_len)
    /// bytes), as [`Mx::quantize`] does for `Shape::vector(cols)`.
    ///
    /// # Errors
    /// [`Error::BlockLength`] naming the first buffer whose length is not the row's;
    /// nothing is written then.
    ///
    /// ```
    /// use vcvt::block::{Mx, MxElement};
    ///
    /// let row = Mx::new(MxElement::E4M3).rows::<f32>(3)?;
    /// let (mut codes, mut scales) = ([0u8; 3], [0u8; 1]);
    /// row.quantize(&[1.0, -2.0, 0.5], &mut codes, &mut scales)?;
    /// let mut back = [0f32; 3];
    /// row.dequantize(&codes, &scales, &mut back)?;
    /// assert_eq!(back, [1.0, -2.0, 0.5]);
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    #[inline]
    pub fn quantize(&self, src: &[T], data: &mut [u8], scales: &mut [u8]) -> Result<(), Error> {
        self.quantize_uninit(src, as_uninit(data), as_uninit(scales))
    }

    /// [`quantize`](Self::quantize) into uninitialised buffers, which it initialises on
    /// success.
    #[inline]
    pub fn quantize_uninit(
        &self,
        src: &[T],
        data: &mut [MaybeUninit<u8>],
        scales: &mut [MaybeUninit<u8>],
    ) -> Result<(), Error> {
        expect_len("data", self.data_len, data.len())?;
        expect_len("scales", self.scales_len, scales.len())?;
        expect_len("src", self.cols, src.len())?;
        if self.cols != 0 {
            let shape = Shape::vector(self.cols);
            self.mx
                .quantize_checked(self.backend, src, shape, data, scales);
        }
        Ok(())
    }
}

/// One row width of a [`BlockFp8`] format resolved once: made by [`BlockFp8::rows`], then
/// called per matrix row with that row's E4M3 codes, the scales of its tile row and its `D`
/// values.
///
/// A call writes what [`BlockFp8::dequantize`] writes for that row of the matrix, with the
/// same errors for the same lengths. The handle is small and `Copy`, `Send` and `Sync`, and
/// keeps its backend, as [`MxRows`] does.
///
/// ```
/// use vcvt::BF16;
/// use vcvt::block::BlockFp8;
///
/// // A 256 × 300 DeepSeek weight (128 × 128 tiles) dequantized one row per call.
/// let (rows, cols) = (256, 300);
/// let row = BlockFp8::deepseek().rows::<BF16>(cols)?;
/// let weight = vec![0x38u8; rows * cols]; // E4M3 1.0
/// let scale_inv: Vec<u8> = [0.5f32, 0.25, 2.0, 4.0, 8.0, 16.0]
///     .iter()
///     .flat_map(|s| s.to_le_bytes())
///     .collect(); // 2 tile rows × 3 tile columns
/// let mut out = vec![BF16::ZERO; rows * cols];
/// for r in 0..rows {
///     let tile_row = r / 128;
///     row.dequantize(
///         &weight[r * cols..][..cols],
///         &scale_inv[tile_row * row.scale_inv_len()..][..row.scale_inv_len()],
///         &mut out[r * cols..][..cols],
///     )?;
/// }
/// assert_eq!(out[0].to_f32(), 0.5);
/// assert_eq!(out[200 * cols + 299].to_f32(), 16.0);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub struct Fp8Rows<D> {
    fp8: BlockFp8,
    backend: Backend,
    cols: usize,
    scale_inv_len: usize,
    // A `fn` pointer: the handle holds no `D`, so it is `Send`, `Sync` and `Copy`.
    _values: PhantomData<fn(D) -> D>,
}

impl<D> Clone for Fp8Rows<D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<D> Copy for Fp8Rows<D> {}

impl<D> fmt::Debug for Fp8Rows<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fp8Rows")
            .field("format", &self.fp8)
            .field("values", &core::any::type_name::<D>())
            .field("backend", &self.backend)
            .field("cols", &self.cols)
            .finish()
    }
}

impl BlockFp8 {
    /// A handle that dequantizes matrix rows of `cols` values into `D` (f32, BF16 or F16),
    /// on this format's backend (the one given to [`on`](BlockFp8::on), else
    /// [`Backend::active`] now).
    ///
    /// # Errors
    /// [`Error::BlockShape`] for a zero tile dimension, [`Error::BackendUnavailable`].
    ///
    /// ```
    /// use vcvt::block::BlockFp8;
    /// let row = BlockFp8::deepseek().rows::<f32>(300)?;
    /// assert_eq!(row.scale_inv_len(), 12); // three f32 tile scales
    /// assert!(BlockFp8::new(0, 128).rows::<f32>(300).is_err());
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    pub fn rows<D: BlockDest>(&self, cols: usize) -> Result<Fp8Rows<D>, Error> {
        let shape = Shape::vector(cols);
        Ok(Fp8Rows {
            scale_inv_len: self.scale_inv_len(shape)?,
            backend: dispatch::resolve(self.backend)?,
            fp8: *self,
            cols,
            _values: PhantomData,
        })
    }
}

impl<D> Fp8Rows<D> {
    /// Values per row (and bytes of E4M3 codes per row).
    #[inline]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Bytes of the scales of one tile row: 4 per tile across, `⌈cols / tile_cols⌉` of them.
    #[inline]
    pub fn scale_inv_len(&self) -> usize {
        self.scale_inv_len
    }

    /// The backend this handle runs on.
    #[inline]
    pub fn backend(&self) -> Backend {
        self.backend
    }
}

impl<D: BlockDest> Fp8Rows<D> {
    /// Dequantizes one matrix row: its E4M3 codes `data` ([`cols`](Self::cols) bytes) with
    /// the scales of its tile row `scale_inv` ([`scale_inv_len`](Self::scale_inv_len) bytes,
    /// little-endian f32) into `dst` (`cols` values).
    ///
    /// # Errors
    /// [`Error::BlockLength`] naming the first buffer whose length is not the row's;
    /// nothing is written then.
    #[inline]
    pub fn dequantize(&self, data: &[u8], scale_inv: &[u8], dst: &mut [D]) -> Result<(), Error> {
        self.dequantize_uninit(data, scale_inv, as_uninit(dst))
    }

    /// [`dequantize`](Self::dequantize) into an uninitialised row, which it initialises on
    /// success.
    #[inline]
    pub fn dequantize_uninit(
        &self,
        data: &[u8],
        scale_inv: &[u8],
        dst: &mut [MaybeUninit<D>],
    ) -> Result<(), Error> {
        expect_len("data", self.cols, data.len())?;
        expect_len("scale_inv", self.scale_inv_len, scale_inv.len())?;
        expect_len("dst", self.cols, dst.len())?;
        if self.cols != 0 {
            let shape = Shape::vector(self.cols);
            self.fp8
                .dequantize_checked(self.backend, data, scale_inv, shape, dst);
        }
        Ok(())
    }
}
