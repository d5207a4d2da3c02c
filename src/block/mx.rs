//! OCP Microscaling (MX): 32 elements share one E8M0 scale byte `s`, value `2^(s − 127)`.

use core::mem::MaybeUninit;

use super::dispatch;
use super::spec::kernels::{
    BlockKernels, MLX_E2M1, MLX_E2M1_GGML, MLX_E4M3, MxDequantFn, MxProfileDequantFn,
    MxProfileQuantFn, MxQuantFn,
};
use super::spec::mx::*;
use super::spec::{put, soft};
use super::{BlockDest, BlockSource, Shape, as_uninit, checked_mul, expect_len};
use crate::arch::Isa;
use crate::{Backend, Error, F4E2M1, KernelInfo};

/// How an MX block's scale is chosen, its elements rounded, and its specials handled.
///
/// | profile | scale byte from the block's `amax` | elements | NaN/±Inf in the block | scale `0xFF` decodes as | reference |
/// |---|---|---|---|---|---|
/// | `Ocp` | `exponent(amax) − emax`, from the f32 exponent bits, clamped to `0..=254` | nearest, ties to even, saturated | scale `0xFF`, codes 0 | NaN block | OCP MX v1.0 §6.3; torchao `FLOOR`, Triton `ROUND_DOWN` |
/// | `Ceil` (default) | smallest `2^(s−127) ≥ f32(amax / max)` | same | same | same | torchao `RCEIL`, Triton `ROUND_UP` (gpt-oss, HF, vLLM), cuBLAS/cuDNN |
///
/// `Ocp` leaves `amax / 2^(s−127)` in `[2^emax, 2^(emax+1))`, above the element maximum
/// for most blocks (up to 7.99 for E2M1, whose max is 6): the block maximum saturates,
/// as the spec says. `Ceil` never clips the block maximum, and is the recommended choice
/// for new quantization. A zero or all-subnormal block gets scale `0x00` (2^-127) under
/// both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MxProfile {
    /// The OCP MX v1.0 rule: scale exponent `floor(log2 amax) − emax`, taken from the
    /// exponent bits of `amax` (a float `log2` is off by one just below powers of two).
    Ocp,
    /// The smallest power of two ≥ `amax / max` (f32 division), so that no block maximum
    /// is clipped. Also called RCEIL.
    #[default]
    Ceil,
    /// llama.cpp's MXFP4 (E2M1 only), bit-exact with gguf 0.19's `MXFP4` quantizer:
    /// * scale byte `floor(log2f(amax)) − 2 + 127`, with the f32 `log2` correctly rounded (a
    ///   value just below a power of two `2^N`, `|N| ≥ 2`, has `log2f` rounded up to `N`,
    ///   so its scale is one above the OCP rule's); `amax` 0 or NaN gives `0x00`. Where
    ///   ggml's float → byte cast is undefined, vcvt clamps: `0 < amax < 2^-125` gives
    ///   `0x00`, an infinite `amax` `0xFF`;
    /// * each element the nearest of `kvalues · 2^(s−128)` (`kvalues` = E2M1 doubled),
    ///   with the distances computed in f32 and the **first** minimum winning: ties go toward
    ///   zero, `−0` and small negatives become code 0 (`+0`), a NaN becomes code 0;
    /// * dequantization `kvalues[code] · 2^(s−128)` in f32 (exact): code 8 gives `+0`, and
    ///   scale `0xFF` is not NaN but `2^128` (values `±2^127` or `±Inf`, zero stays `+0`).
    ///
    /// llama.cpp's C `quantize_row_mxfp4_ref` agrees with gguf on every tested input but
    /// one kind: it skips a NaN lane when taking `amax` (gguf propagates it, giving scale
    /// `0x00`). `tests/data/block/mxfp4_ggml_c.tsv` holds both.
    Ggml,
    /// MLX 0.32.4's `mx.quantize(w, 32, bits, mode="mxfp4" | "mxfp8")` and
    /// `mx.dequantize` on the CPU (E2M1 and E4M3 only), bit-exact with its composed-ops
    /// path, which computes in the source's (resp. destination's) dtype:
    /// * `q = amax / maxval` rounded to the source type (BF16/F16 sources round here); the
    ///   scale is the smallest `2^e ≥ q` (MLX ≥ 0.32 rounds up, PR #4353), byte
    ///   `e + 127` **without a clamp** (a tiny `q` wraps the byte), and a zero block gets
    ///   `127` (scale 1);
    /// * `wq = w / 2^e` rounded to the source type; E2M1 codes are the **first** minimum of
    ///   `|wq − lut|` (distances rounded to the source type): ties toward zero, `−0` → `+0`;
    ///   E4M3 codes saturate, a NaN becomes ±448;
    /// * dequantization computes `2^(s−127)` in the destination type (F16: `0` for `s ≤ 102`,
    ///   `+Inf` for `s ≥ 143`; `s = 255` is `+Inf`, not NaN), then one rounding of the
    ///   product (`0 · Inf` is `+NaN`).
    ///
    /// NaN and ±Inf lanes make MLX convert a non-finite float to an integer (undefined in
    /// C++); vcvt gives such a block scale `0xFF` and codes 0, as the other profiles do.
    ///
    /// MLX's Metal kernels differ from its CPU path: f32 arithmetic with subnormals
    /// flushed, E2M1 by round-to-nearest-even thresholds with NaN → `+6`, E8M0 by
    /// `round(log2 x)` then a round-up step clamped at `0xFE`. This profile follows the CPU
    /// path, which is what runs (and can be tested) without Apple hardware; a Metal
    /// profile is not offered because its block-level operation order could not be checked
    /// against the GPU here.
    Mlx,
}

/// Where an MX tensor's element codes and scales live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MxLayout {
    /// Codes in one buffer (row-major, `MxElement::row_bytes(cols)` bytes per row), scale
    /// bytes in another (`rows × cols.div_ceil(32)`). The layout of safetensors checkpoints
    /// (gpt-oss/Hugging Face `*_blocks` + `*_scales`), torchao, and MLX (its `uint32`
    /// words, read as little-endian bytes, are exactly these codes).
    #[default]
    Planar,
    /// llama.cpp's `block_mxfp4` (E2M1 only, `cols` a multiple of 32): 17 bytes per block,
    /// the scale byte then 16 bytes whose low nibbles hold elements 0..16 and high nibbles
    /// elements 16..32. The scales live in the blocks: pass an empty `scales` slice.
    Ggml,
}

/// An MX block-scaled format (MXFP8, MXFP6 or MXFP4): element format, profile and layout.
///
/// ```
/// use vcvt::block::{Mx, MxElement, Shape};
/// use vcvt::BF16;
///
/// // gpt-oss style: `*_blocks` bytes (16 per 32 values) and `*_scales` bytes.
/// let w: Vec<f32> = (0..64).map(|i| (i as f32 - 32.0) / 8.0).collect();
/// let mxfp4 = Mx::new(MxElement::E2M1);
/// let mut blocks = vec![0u8; 32];
/// let mut scales = vec![0u8; 2];
/// mxfp4.quantize(&w, Shape::matrix(2, 32), &mut blocks, &mut scales)?;
///
/// let mut out = vec![BF16::ZERO; 64];
/// mxfp4.dequantize(&blocks, &scales, Shape::matrix(2, 32), &mut out)?;
/// assert_eq!(out[0].to_f32(), -4.0); // exact: the block's amax
/// # Ok::<(), vcvt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mx {
    element: MxElement,
    profile: MxProfile,
    layout: MxLayout,
    pub(super) backend: Option<Backend>,
}

impl Mx {
    /// MX with `element`, the [`MxProfile::Ceil`] profile and the planar layout.
    pub const fn new(element: MxElement) -> Mx {
        Mx {
            element,
            profile: MxProfile::Ceil,
            layout: MxLayout::Planar,
            backend: None,
        }
    }

    /// The same format with another profile.
    pub const fn profile(self, profile: MxProfile) -> Mx {
        Mx { profile, ..self }
    }

    /// The same format with another layout.
    pub const fn layout(self, layout: MxLayout) -> Mx {
        Mx { layout, ..self }
    }

    /// Runs on `backend` instead of [`Backend::active`] (the result is the same; tests and
    /// benchmarks use this). The conversions return [`Error::BackendUnavailable`] when it
    /// cannot run here.
    pub const fn on(self, backend: Backend) -> Mx {
        Mx {
            backend: Some(backend),
            ..self
        }
    }

    /// The element format.
    pub const fn element(&self) -> MxElement {
        self.element
    }

    /// Checks that the profile and layout fit the element and the shape.
    fn check_combination(&self, shape: Shape) -> Result<(), Error> {
        shape.check()?;
        let bad = |reason| {
            Err(Error::BlockShape {
                rows: shape.rows,
                cols: shape.cols,
                reason,
            })
        };
        if self.profile == MxProfile::Ggml && self.element != MxElement::E2M1 {
            return bad("the Ggml profile is defined for E2M1 (MXFP4) only");
        }
        if self.profile == MxProfile::Mlx
            && !matches!(self.element, MxElement::E2M1 | MxElement::E4M3)
        {
            return bad("the Mlx profile is defined for E2M1 (mxfp4) and E4M3 (mxfp8) only");
        }
        if self.layout == MxLayout::Ggml {
            if self.element != MxElement::E2M1 {
                return bad("the ggml block_mxfp4 layout holds E2M1 (MXFP4) only");
            }
            if !shape.cols.is_multiple_of(BLOCK) {
                return bad("the ggml block_mxfp4 layout needs cols to be a multiple of 32");
            }
        }
        Ok(())
    }

    /// Bytes of element codes that `shape` needs (for [`MxLayout::Ggml`], the whole
    /// 17-byte blocks).
    pub fn data_len(&self, shape: Shape) -> Result<usize, Error> {
        self.check_combination(shape)?;
        match self.layout {
            MxLayout::Planar => checked_mul(shape.rows, self.element.row_bytes(shape.cols), shape),
            MxLayout::Ggml => checked_mul(shape.rows, shape.cols / BLOCK * GGML_BLOCK, shape),
        }
    }

    /// Scale bytes that `shape` needs (one per block of 32 values of a row; none for
    /// [`MxLayout::Ggml`], whose blocks hold them).
    pub fn scales_len(&self, shape: Shape) -> Result<usize, Error> {
        self.check_combination(shape)?;
        match self.layout {
            MxLayout::Planar => checked_mul(shape.rows, shape.cols.div_ceil(BLOCK), shape),
            MxLayout::Ggml => Ok(0),
        }
    }

    /// The E8M0 scale byte this format's profile gives a block whose largest magnitude is
    /// `|amax|` (pass a NaN if the block holds one), for a block of `S` values: the first
    /// step of [`quantize`](Self::quantize), alone. Useful to check a scale rule, or to
    /// quantize with vcvt's rule in a kernel of one's own.
    ///
    /// Only [`MxProfile::Mlx`] depends on `S` (it divides in the source's type).
    ///
    /// # Errors
    /// [`Error::BlockShape`] when the profile is not defined for the element.
    ///
    /// ```
    /// use vcvt::block::{Mx, MxElement, MxProfile};
    /// // amax 7: OCP takes floor(log2 7) - emax(E2M1) = 2 - 2 = 0 (scale 1, 7 saturates
    /// // to 6); Ceil takes the smallest 2^k >= 7/6, k = 1.
    /// let fp4 = Mx::new(MxElement::E2M1);
    /// assert_eq!(fp4.profile(MxProfile::Ocp).scale_byte(7.0f32)?, 127);
    /// assert_eq!(fp4.profile(MxProfile::Ceil).scale_byte(7.0f32)?, 128);
    /// assert_eq!(fp4.scale_byte(f32::NAN)?, 0xFF);
    /// # Ok::<(), vcvt::Error>(())
    /// ```
    pub fn scale_byte<S: BlockSource>(&self, amax: S) -> Result<u8, Error> {
        self.check_combination(Shape::vector(0))?;
        let m = super::spec::amax_bits(&[amax]);
        Ok(match self.profile {
            MxProfile::Ocp => scale_byte(self.element, MxRule::Ocp, m),
            MxProfile::Ceil => scale_byte(self.element, MxRule::Ceil, m),
            MxProfile::Ggml => ggml_scale(m),
            MxProfile::Mlx => mlx_scale(self.element, S::KIND, m).0,
        })
    }

    /// Which kernel [`quantize`](Self::quantize) runs for `S` sources on this format's
    /// backend (the one given to [`on`](Self::on), else [`Backend::active`], whether or not
    /// it can run here): its instruction set and vector width, as
    /// [`Backend::kernel`] reports them for the element conversions, or `scalar` where the
    /// scalar specification runs every block (every path on `Backend::Scalar`). BF16 and
    /// F16 sources run the f32 kernel on their exact f32 values, a few blocks at a time, and
    /// the `Ocp`/`Ceil` rules in the ggml layout the planar kernel with each block repacked.
    /// The `Ggml` and `Mlx` profiles report their own kernels. Whatever the kernel, a row's
    /// short last block and the blocks with a scale byte outside the kernel's exact range
    /// (tiny or huge `amax`) run the specification.
    ///
    /// ```
    /// use vcvt::Backend;
    /// use vcvt::block::{Mx, MxElement, MxProfile};
    ///
    /// let mxfp4 = Mx::new(MxElement::E2M1);
    /// assert_eq!(mxfp4.on(Backend::Scalar).quantize_kernel::<f32>().isa, "scalar");
    /// // The ggml profile runs the scalar specification on the Scalar backend only.
    /// let ggml = mxfp4.profile(MxProfile::Ggml).on(Backend::Scalar);
    /// assert!(!ggml.quantize_kernel::<f32>().is_simd());
    /// // On an AVX-512 machine: "avx512 (512-bit)".
    /// println!("{}", mxfp4.quantize_kernel::<f32>());
    /// ```
    pub fn quantize_kernel<S: BlockSource>(&self) -> KernelInfo {
        let t = dispatch::table(self.backend.unwrap_or_else(Backend::active));
        let rule = match self.profile {
            MxProfile::Ocp => MxRule::Ocp,
            _ => MxRule::Ceil,
        } as usize;
        let e = self.element.index();
        let isa = if (self.is_plain() || self.ggml_bridge_rule().is_some())
            && t.mx_quant[rule][e].is_some()
        {
            t.mx_quant_isa[rule][e]
        } else if !self.is_plain() && self.quant_kernel::<S>(t).is_some() {
            t.generic_isa
        } else {
            Isa::Scalar
        };
        KernelInfo::of(isa, 1)
    }

    /// Which kernel [`dequantize`](Self::dequantize) runs for `D` destinations, as
    /// [`quantize_kernel`](Self::quantize_kernel) says for quantization.
    ///
    /// ```
    /// use vcvt::{BF16, Backend};
    /// use vcvt::block::{Mx, MxElement};
    ///
    /// let mxfp8 = Mx::new(MxElement::E4M3).on(Backend::Scalar);
    /// assert_eq!(mxfp8.dequantize_kernel::<BF16>().bits, 0);
    /// ```
    pub fn dequantize_kernel<D: BlockDest>(&self) -> KernelInfo {
        let t = dispatch::table(self.backend.unwrap_or_else(Backend::active));
        let (e, d) = (self.element.index(), D::KIND as usize);
        let isa = if (self.is_plain() || self.ggml_bridge_rule().is_some())
            && t.mx_dequant[e][d].is_some()
        {
            t.mx_dequant_isa[e][d]
        } else if !self.is_plain() && self.dequant_kernel::<D>(t).is_some() {
            t.generic_isa
        } else {
            Isa::Scalar
        };
        KernelInfo::of(isa, 1)
    }

    /// Whether the fast path (planar layout, OCP decoding or an integer scale rule) applies.
    fn is_plain(&self) -> bool {
        self.layout == MxLayout::Planar && matches!(self.profile, MxProfile::Ocp | MxProfile::Ceil)
    }

    /// The rule of `Ocp`/`Ceil` in the ggml layout (E2M1), which run the planar kernels and
    /// repack each block; `None` otherwise.
    fn ggml_bridge_rule(&self) -> Option<MxRule> {
        match (self.layout, self.profile) {
            (MxLayout::Ggml, MxProfile::Ocp) => Some(MxRule::Ocp),
            (MxLayout::Ggml, MxProfile::Ceil) => Some(MxRule::Ceil),
            _ => None,
        }
    }

    fn check(&self, shape: Shape, data: usize, scales: usize) -> Result<(), Error> {
        expect_len("data", self.data_len(shape)?, data)?;
        expect_len("scales", self.scales_len(shape)?, scales)
    }

    /// Quantizes `src` (`shape.len()` values) into element codes `data` and scale bytes
    /// `scales`, both laid out as [`MxLayout::Planar`] says.
    ///
    /// # Errors
    /// [`Error::BlockLength`] when a buffer's length differs from what `shape` needs,
    /// [`Error::BlockShape`] for a stride below `cols`, [`Error::BackendUnavailable`];
    /// nothing is written then.
    pub fn quantize<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [u8],
        scales: &mut [u8],
    ) -> Result<(), Error> {
        self.quantize_uninit(src, shape, as_uninit(data), as_uninit(scales))
    }

    /// [`quantize`](Self::quantize) into uninitialised buffers, all of which it initialises
    /// on success.
    pub fn quantize_uninit<S: BlockSource>(
        &self,
        src: &[S],
        shape: Shape,
        data: &mut [MaybeUninit<u8>],
        scales: &mut [MaybeUninit<u8>],
    ) -> Result<(), Error> {
        self.check(shape, data.len(), scales.len())?;
        expect_len("src", shape.len(), src.len())?;
        let backend = dispatch::resolve(self.backend)?;
        if !shape.is_empty() {
            // (Rows of zero columns must not be sliced.)
            self.quantize_checked(backend, src, shape, data, scales);
        }
        Ok(())
    }

    /// [`quantize_uninit`](Self::quantize_uninit) after its checks: `shape` is valid and not
    /// empty, every buffer has the length it needs, and `backend` runs here.
    pub(super) fn quantize_checked<S: BlockSource>(
        &self,
        backend: Backend,
        src: &[S],
        shape: Shape,
        data: &mut [MaybeUninit<u8>],
        scales: &mut [MaybeUninit<u8>],
    ) {
        let k = dispatch::table(backend);
        if !self.is_plain() {
            let bridge = self
                .ggml_bridge_rule()
                .and_then(|r| k.mx_quant[r as usize][E2M1]);
            let kernel = self.quant_kernel::<S>(k);
            self.quantize_generic(backend, src, shape, data, scales, kernel, bridge);
            return;
        }
        let rule = match self.profile {
            MxProfile::Ocp => MxRule::Ocp,
            _ => MxRule::Ceil,
        };
        let row_bytes = self.element.row_bytes(shape.cols);
        let nblocks = shape.cols.div_ceil(BLOCK);
        let full = shape.cols / BLOCK;
        let kernel = k.mx_quant[rule as usize][self.element.index()];
        let full_bytes = self.element.row_bytes(full * BLOCK);
        for r in 0..shape.rows {
            let row = &src[r * shape.stride..r * shape.stride + shape.cols];
            let d = &mut data[r * row_bytes..(r + 1) * row_bytes];
            let s = &mut scales[r * nblocks..(r + 1) * nblocks];
            match kernel {
                Some(f) if full > 0 => {
                    if S::IS_F32 {
                        // SAFETY: `S` is f32 and `row` holds `cols` ≥ `32 · full` of them;
                        // `d` holds `row_bytes(cols)` ≥ `row_bytes(32 · full)` bytes and `s`
                        // `nblocks` ≥ `full` bytes; `check_backend` returned this table
                        // only if its backend runs here.
                        unsafe {
                            f(
                                row.as_ptr().cast(),
                                full,
                                d.as_mut_ptr().cast(),
                                s.as_mut_ptr().cast(),
                            )
                        };
                    } else {
                        // BF16/F16 values widen to f32 exactly, so the f32 kernel sees the
                        // values the specification quantizes: the same amax, scale and codes.
                        let mut b = 0;
                        each_f32_step(backend, &row[..full * BLOCK], |bits, n| {
                            let at = self.element.row_bytes(b * BLOCK);
                            // SAFETY: `bits` holds `32 · n` f32 values (blocks b..b + n of
                            // the row); `d` holds `row_bytes(32 · full)` bytes, of which
                            // blocks b..b + n take `row_bytes(32 · n)` from `at`, and `s`
                            // `full` ≥ b + n scale bytes; the table's backend runs here.
                            unsafe {
                                f(
                                    bits.as_ptr().cast(),
                                    n,
                                    d[at..].as_mut_ptr().cast(),
                                    s[b..].as_mut_ptr().cast(),
                                )
                            };
                            b += n;
                        });
                    }
                    let tail = &row[full * BLOCK..];
                    if !tail.is_empty() {
                        quantize_short_block(f, backend, tail, &mut d[full_bytes..], &mut s[full]);
                    }
                }
                Some(f) => quantize_short_block(f, backend, row, d, &mut s[0]),
                None => quantize_row(self.element, rule, row, d, s),
            }
        }
    }

    /// Dequantizes element codes `data` and scale bytes `scales` into `dst`
    /// (`shape.len()` values; with a stride, the values between rows are left as they are).
    ///
    /// Each value is `decode(code) · 2^(s − 127)`, exact in f32 and rounded once to BF16 or
    /// F16; scale byte `0xFF` makes its whole block NaN (`0x7FC00000` in f32).
    ///
    /// # Errors
    /// As for [`quantize`](Self::quantize); nothing is written on error.
    pub fn dequantize<D: BlockDest>(
        &self,
        data: &[u8],
        scales: &[u8],
        shape: Shape,
        dst: &mut [D],
    ) -> Result<(), Error> {
        self.dequantize_uninit(data, scales, shape, as_uninit(dst))
    }

    /// [`dequantize`](Self::dequantize) into an uninitialised destination; on success the
    /// values of the shape's rows are initialised (with a stride, the gaps are not).
    pub fn dequantize_uninit<D: BlockDest>(
        &self,
        data: &[u8],
        scales: &[u8],
        shape: Shape,
        dst: &mut [MaybeUninit<D>],
    ) -> Result<(), Error> {
        self.check(shape, data.len(), scales.len())?;
        expect_len("dst", shape.len(), dst.len())?;
        let backend = dispatch::resolve(self.backend)?;
        if !shape.is_empty() {
            // (Rows of zero columns must not be sliced.)
            self.dequantize_checked(backend, data, scales, shape, dst);
        }
        Ok(())
    }

    /// [`dequantize_uninit`](Self::dequantize_uninit) after its checks: `shape` is valid and
    /// not empty, every buffer has the length it needs, and `backend` runs here.
    pub(super) fn dequantize_checked<D: BlockDest>(
        &self,
        backend: Backend,
        data: &[u8],
        scales: &[u8],
        shape: Shape,
        dst: &mut [MaybeUninit<D>],
    ) {
        let k = dispatch::table(backend);
        if !self.is_plain() {
            let bridge = self
                .ggml_bridge_rule()
                .and_then(|_| k.mx_dequant[E2M1][D::KIND as usize]);
            let kernel = self.dequant_kernel::<D>(k);
            self.dequantize_generic(data, scales, shape, dst, kernel, bridge);
            return;
        }
        let row_bytes = self.element.row_bytes(shape.cols);
        let nblocks = shape.cols.div_ceil(BLOCK);
        let kernel = k.mx_dequant[self.element.index()][D::KIND as usize];
        for r in 0..shape.rows {
            let codes = &data[r * row_bytes..(r + 1) * row_bytes];
            let s = &scales[r * nblocks..(r + 1) * nblocks];
            let out = &mut dst[r * shape.stride..r * shape.stride + shape.cols];
            match kernel {
                // SAFETY: `kernel` is this table's slot for this element and `D`, and
                // `check_backend`/`resolve` accepted the table's backend, so it runs here.
                Some(f) => unsafe { self.dequantize_plain_row(f, codes, s, out) },
                None => {
                    for (b, &sb) in s.iter().enumerate() {
                        let lo = b * BLOCK;
                        let hi = (lo + BLOCK).min(shape.cols);
                        dequantize_block(self.element, codes, lo, sb, &mut out[lo..hi]);
                    }
                }
            }
        }
    }

    /// The kernel of [`dequantize_plain_row`](Self::dequantize_plain_row) for `D` on
    /// `backend`, if this format takes the plain path and the backend has one.
    pub(super) fn plain_dequant_kernel<D: BlockDest>(
        &self,
        backend: Backend,
    ) -> Option<MxDequantFn> {
        if self.is_plain() {
            dispatch::table(backend).mx_dequant[self.element.index()][D::KIND as usize]
        } else {
            None
        }
    }

    /// One row of the plain path (planar, `Ocp`/`Ceil`) through kernel `f`: the whole
    /// blocks in place, the short last block through a zero-padded stack copy.
    ///
    /// # Safety
    /// `f` is the `mx_dequant` slot of this element and `D` in the table of a backend that
    /// runs here; `codes` holds `row_bytes(out.len())` bytes and `s` one scale per block of
    /// `out` (a short last block included).
    #[inline]
    pub(super) unsafe fn dequantize_plain_row<D: BlockDest>(
        &self,
        f: MxDequantFn,
        codes: &[u8],
        s: &[u8],
        out: &mut [MaybeUninit<D>],
    ) {
        let cols = out.len();
        let full = cols / BLOCK;
        if full > 0 {
            assert!(codes.len() >= self.element.row_bytes(full * BLOCK) && s.len() >= full);
            // SAFETY: `codes` holds ≥ `row_bytes(32 · full)` bytes and `s` ≥ `full` scales
            // (asserted), `out` holds `cols` ≥ `32 · full` values of `D`, the type this slot
            // was registered for; the backend runs here (this function's contract).
            unsafe { f(codes.as_ptr(), s.as_ptr(), full, out.as_mut_ptr().cast()) };
        }
        let n = cols - full * BLOCK;
        if n > 0 {
            let at = self.element.row_bytes(full * BLOCK);
            let nb = self.element.row_bytes(n);
            // SAFETY: the contract of `f`, forwarded (the short block's codes, scale byte
            // and values are the slices given).
            unsafe {
                dequantize_short_block(f, &codes[at..at + nb], s[full], &mut out[full * BLOCK..])
            };
        }
    }

    /// The `Ggml`/`Mlx` kernel slot of `k` for this format and source `S`, if any.
    fn quant_kernel<S: BlockSource>(&self, k: &BlockKernels) -> Option<MxProfileQuantFn> {
        let src = S::KIND as usize;
        match (self.profile, self.element, self.layout) {
            (MxProfile::Ggml, _, layout) => k.ggml_quant[layout as usize][src],
            (MxProfile::Mlx, MxElement::E2M1, MxLayout::Planar) => k.mlx_quant[MLX_E2M1][src],
            (MxProfile::Mlx, MxElement::E2M1, MxLayout::Ggml) => k.mlx_quant[MLX_E2M1_GGML][src],
            (MxProfile::Mlx, MxElement::E4M3, MxLayout::Planar) => k.mlx_quant[MLX_E4M3][src],
            _ => None,
        }
    }

    /// The `Ggml`/`Mlx` kernel slot of `k` for this format and destination `D`, if any.
    fn dequant_kernel<D: BlockDest>(&self, k: &BlockKernels) -> Option<MxProfileDequantFn> {
        let dst = D::KIND as usize;
        match (self.profile, self.element, self.layout) {
            (MxProfile::Ggml, _, layout) => k.ggml_dequant[layout as usize][dst],
            (MxProfile::Mlx, MxElement::E2M1, MxLayout::Planar) => k.mlx_dequant[MLX_E2M1][dst],
            (MxProfile::Mlx, MxElement::E2M1, MxLayout::Ggml) => k.mlx_dequant[MLX_E2M1_GGML][dst],
            (MxProfile::Mlx, MxElement::E4M3, MxLayout::Planar) => k.mlx_dequant[MLX_E4M3][dst],
            _ => None,
        }
    }

    /// The path of the other profiles and layouts: per row, the whole blocks through
    /// `kernel` (if any), then per remaining block the scale and the 32 codes, stored as
    /// the layout says.
    #[allow(clippy::too_many_arguments)]
    fn quantize_generic<S: BlockSource>(
        &self,
        backend: Backend,
        src: &[S],
        shape: Shape,
        data: &mut [MaybeUninit<u8>],
        scales: &mut [MaybeUninit<u8>],
        kernel: Option<MxProfileQuantFn>,
        bridge: Option<MxQuantFn>,
    ) {
        let nblocks = shape.cols.div_ceil(BLOCK);
        let row_bytes = self.data_len(Shape::vector(shape.cols)).unwrap_or(0);
        let full = shape.cols / BLOCK;
        for r in 0..shape.rows {
            let row = &src[r * shape.stride..][..shape.cols];
            let done = match (kernel, bridge) {
                (None, Some(f)) if full > 0 => {
                    // `Ocp`/`Ceil` in the ggml layout: the planar kernel into stack
                    // buffers, each block then repacked (the same codes and scale byte).
                    let out = &mut data[r * row_bytes..][..full * GGML_BLOCK];
                    let mut b = 0;
                    each_f32_step(backend, &row[..full * BLOCK], |bits, n| {
                        let mut codes = [0u8; STEP * BLOCK / 2];
                        let mut sc = [0u8; STEP];
                        // SAFETY: `bits` holds `32 · n` f32 values and the stack buffers
                        // `16 · n` code bytes and `n` scale bytes (`n ≤ STEP`); the table's
                        // backend runs here (`check_backend`).
                        unsafe { f(bits.as_ptr().cast(), n, codes.as_mut_ptr(), sc.as_mut_ptr()) };
                        for j in 0..n {
                            let o = &mut out[(b + j) * GGML_BLOCK..][..GGML_BLOCK];
                            put(&mut o[0], sc[j]);
                            let g = planar_to_ggml16(codes[16 * j..][..16].try_into().unwrap());
                            for (slot, &x) in o[1..].iter_mut().zip(&g) {
                                put(slot, x);
                            }
                        }
                        b += n;
                    });
                    full
                }
                (Some(f), _) if full > 0 => {
                    let d = data[r * row_bytes..].as_mut_ptr().cast::<u8>();
                    let s = match self.layout {
                        MxLayout::Planar => scales[r * nblocks..].as_mut_ptr().cast::<u8>(),
                        MxLayout::Ggml => core::ptr::null_mut(),
                    };
                    // SAFETY: `row` holds `cols` ≥ `32 · full` values of `S`, the slot's
                    // source type (a slice's pointer: aligned); the row's codes (`row_bytes`
                    // from `r · row_bytes`) hold the `full` blocks in the layout, and the
                    // planar scales `nblocks` ≥ `full` bytes from `r · nblocks` (the ggml
                    // layout's kernel does not use `s`); `check_backend` returned this table
                    // only if its backend runs here.
                    unsafe { f(row.as_ptr().cast(), full, d, s) };
                    full
                }
                _ => 0,
            };
            for (b, blk) in row.chunks(BLOCK).enumerate().skip(done) {
                let (s, codes) = match self.profile {
                    MxProfile::Ggml => ggml_quantize_block(blk),
                    MxProfile::Mlx => mlx_quantize_block(self.element, blk),
                    p => {
                        let rule = if p == MxProfile::Ocp {
                            MxRule::Ocp
                        } else {
                            MxRule::Ceil
                        };
                        let s = scale_byte(MxElement::E2M1, rule, super::spec::amax_bits(blk));
                        let mut codes = [0u8; BLOCK];
                        if s != 0xFF {
                            let k = 127 - s as i32;
                            for (c, x) in codes.iter_mut().zip(blk) {
                                *c = element_code::<F4E2M1>(x.f32_bits(), k);
                            }
                        }
                        (s, codes)
                    }
                };
                match self.layout {
                    MxLayout::Planar if self.element == MxElement::E2M1 => {
                        put(&mut scales[r * nblocks + b], s);
                        let d = &mut data[r * row_bytes + b * BLOCK / 2..];
                        for j in 0..blk.len().div_ceil(2) {
                            put(&mut d[j], codes[2 * j] | (codes[2 * j + 1] << 4));
                        }
                    }
                    MxLayout::Planar => {
                        put(&mut scales[r * nblocks + b], s);
                        let d = &mut data[r * row_bytes + b * BLOCK..];
                        for (slot, &c) in d.iter_mut().zip(&codes[..blk.len()]) {
                            put(slot, c);
                        }
                    }
                    MxLayout::Ggml => {
                        let d = &mut data[r * row_bytes + b * GGML_BLOCK..][..GGML_BLOCK];
                        put(&mut d[0], s);
                        for j in 0..16 {
                            put(&mut d[1 + j], codes[j] | (codes[j + 16] << 4));
                        }
                    }
                }
            }
        }
    }

    /// Dequantization for the other profiles and layouts: the whole blocks of each row
    /// through `kernel` (if any), the others here.
    fn dequantize_generic<D: BlockDest>(
        &self,
        data: &[u8],
        scales: &[u8],
        shape: Shape,
        dst: &mut [MaybeUninit<D>],
        kernel: Option<MxProfileDequantFn>,
        bridge: Option<MxDequantFn>,
    ) {
        let nblocks = shape.cols.div_ceil(BLOCK);
        let row_bytes = self.data_len(Shape::vector(shape.cols)).unwrap_or(0);
        let full = shape.cols / BLOCK;
        for r in 0..shape.rows {
            let out = &mut dst[r * shape.stride..][..shape.cols];
            let done = match (kernel, bridge) {
                (None, Some(f)) if full > 0 => {
                    // `Ocp`/`Ceil` in the ggml layout: each step of blocks repacked into
                    // planar stack buffers, then the planar kernel into `out`.
                    let g = &data[r * row_bytes..][..full * GGML_BLOCK];
                    for (step, blocks) in g.chunks(STEP * GGML_BLOCK).enumerate() {
                        let n = blocks.len() / GGML_BLOCK;
                        let mut codes = [0u8; STEP * BLOCK / 2];
                        let mut sc = [0u8; STEP];
                        for (j, blk) in blocks.chunks_exact(GGML_BLOCK).enumerate() {
                            sc[j] = blk[0];
                            let p = ggml16_to_planar(blk[1..].try_into().unwrap());
                            codes[16 * j..][..16].copy_from_slice(&p);
                        }
                        let o = &mut out[step * STEP * BLOCK..][..n * BLOCK];
                        // SAFETY: the stack buffers hold `16 · n` code bytes and `n` scales,
                        // `o` holds `32 · n` values of `D`, the slot's destination type; the
                        // table's backend runs here (`check_backend`).
                        unsafe { f(codes.as_ptr(), sc.as_ptr(), n, o.as_mut_ptr().cast()) };
                    }
                    full
                }
                (Some(f), _) if full > 0 => {
                    let s = match self.layout {
                        MxLayout::Planar => scales[r * nblocks..].as_ptr(),
                        MxLayout::Ggml => core::ptr::null(),
                    };
                    // SAFETY: the row's codes (`row_bytes` from `r · row_bytes`) hold the
                    // `full` blocks in the layout, the planar scales `nblocks` ≥ `full` bytes
                    // from `r · nblocks` (unused for the ggml layout), and `out` holds `cols`
                    // ≥ `32 · full` values of `D`, the slot's destination type (a slice's
                    // pointer: aligned); `check_backend` returned this table only if its
                    // backend runs here.
                    unsafe {
                        f(
                            data[r * row_bytes..].as_ptr(),
                            s,
                            full,
                            out.as_mut_ptr().cast(),
                        )
                    };
                    full
                }
                _ => 0,
            };
            for (b, o) in out.chunks_mut(BLOCK).enumerate().skip(done) {
                let mut codes = [0u8; BLOCK];
                let s = match self.layout {
                    MxLayout::Planar if self.element == MxElement::E2M1 => {
                        let d = &data[r * row_bytes + b * BLOCK / 2..];
                        for (j, c) in codes.iter_mut().enumerate().take(o.len()) {
                            *c = (d[j / 2] >> (4 * (j & 1))) & 0xF;
                        }
                        scales[r * nblocks + b]
                    }
                    MxLayout::Planar => {
                        let d = &data[r * row_bytes + b * BLOCK..];
                        codes[..o.len()].copy_from_slice(&d[..o.len()]);
                        scales[r * nblocks + b]
                    }
                    MxLayout::Ggml => {
                        let d = &data[r * row_bytes + b * GGML_BLOCK..][..GGML_BLOCK];
                        for j in 0..16 {
                            codes[j] = d[1 + j] & 0xF;
                            codes[j + 16] = d[1 + j] >> 4;
                        }
                        d[0]
                    }
                };
                if self.profile == MxProfile::Mlx {
                    mlx_dequantize_block(self.element, &codes, s, o);
                } else if self.profile == MxProfile::Ggml {
                    ggml_dequantize_block(&codes, s, o);
                } else if s == 0xFF {
                    let nan = D::from_f32_bits(0x7FC0_0000);
                    o.iter_mut().for_each(|slot| put(slot, nan));
                } else {
                    let v = scale_value(s);
                    for (slot, &c) in o.iter_mut().zip(&codes) {
                        let e = soft::wide(decode(MxElement::E2M1, c));
                        put(slot, D::from_wide(e * v));
                    }
                }
            }
        }
    }
}

/// Blocks per step of the paths that stage values or codes on the stack (16 blocks: 2 KiB
/// of f32 values, in L1).
const STEP: usize = 16;

/// The E2M1 slot index of the MX tables.
const E2M1: usize = MxElement::E2M1.index();

/// Calls `f(bits, n)` for each step of at most [`STEP`] blocks of `src` (whole blocks):
/// `bits` holds their f32 bits, the exact widening on `backend` (a copy for f32).
fn each_f32_step<S: BlockSource>(backend: Backend, src: &[S], mut f: impl FnMut(&[u32], usize)) {
    let mut buf = [0u32; STEP * BLOCK];
    for chunk in src.chunks(STEP * BLOCK) {
        let bits = &mut buf[..chunk.len()];
        S::f32_bits_of(backend, chunk, bits);
        f(bits, chunk.len() / BLOCK);
    }
}

/// Up to 16 bytes `b` as a little-endian `u128` padded with zero bytes, from at most three
/// loads of the slice (overlapping where `b` is not a power of two long) and no stores, so
/// that the value reaches memory as one store.
#[inline(always)]
fn padded16(b: &[u8]) -> u128 {
    let n = b.len();
    debug_assert!(n <= 16);
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap()) as u128;
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap()) as u128;
    match n {
        0 => 0,
        1..=3 => {
            b[0] as u128 | (b[n / 2] as u128) << (8 * (n / 2)) | (b[n - 1] as u128) << (8 * (n - 1))
        }
        4..=7 => u32_at(0) | u32_at(n - 4) << (8 * (n - 4)),
        8..=16 => u64_at(0) | u64_at(n - 8) << (8 * (n - 8)),
        _ => unreachable!(),
    }
}

/// The short last block of a plain row (`out`, fewer than 32 values, its `codes` and scale
/// byte `s`) through the whole-block kernel `f`: the codes padded with zeros to a whole
/// block on the stack, its `out.len()` values copied out of a stack block. Out of line, so
/// that the rows of whole blocks do not carry it.
///
/// # Safety
/// As for [`Mx::dequantize_plain_row`]; `codes` holds the block's `row_bytes(out.len())`
/// bytes (at most 32).
#[inline(never)]
unsafe fn dequantize_short_block<D: BlockDest>(
    f: MxDequantFn,
    codes: &[u8],
    s: u8,
    out: &mut [MaybeUninit<D>],
) {
    let nb = codes.len();
    // The padded codes reach the stack as two 16-byte stores, which the kernel's loads of
    // the block's bytes can take from the store buffer (a load spanning a zero fill and a
    // copy of the codes waits for both to reach the cache).
    let mut c = [[0u8; 16]; 2];
    store16(&mut c[0], padded16(&codes[..nb.min(16)]));
    store16(&mut c[1], padded16(&codes[nb.min(16)..]));
    let sb = [s];
    let mut tmp = [MaybeUninit::<D>::uninit(); BLOCK];
    // SAFETY: `c` holds a whole block's codes (32 bytes ≥ 16 for E2M1), `sb` its scale byte,
    // `tmp` takes 32 values of `D`, the slot's destination type; the backend runs here (the
    // caller's guarantee).
    unsafe { f(c.as_ptr().cast(), sb.as_ptr(), 1, tmp.as_mut_ptr().cast()) };
    out.copy_from_slice(&tmp[..out.len()]);
}

/// Writes `v`'s 16 little-endian bytes to `dst`, on x86-64 as one 16-byte store (`MOVDQU`,
/// SSE2 being part of the baseline).
#[inline(always)]
fn store16(dst: &mut [u8; 16], v: u128) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is in every x86-64 CPU; the store writes the 16 bytes of `dst`.
    unsafe {
        use core::arch::x86_64::{_mm_set_epi64x, _mm_storeu_si128};
        _mm_storeu_si128(
            dst.as_mut_ptr().cast(),
            _mm_set_epi64x((v >> 64) as i64, v as i64),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *dst = v.to_le_bytes();
    }
}

/// Quantizes one short block (`src`, fewer than 32 values) with the whole-block kernel `f`:
/// its values zero-padded to a block in a stack buffer. The padding changes neither the
/// block's `amax` (zeros are the smallest magnitudes) nor, so, its scale or the other codes;
/// it quantizes to code 0, the specification's filler nibble of an odd E2M1 tail. The
/// codes of the `src.len()` values are copied to `codes`, the scale byte to `scale`.
fn quantize_short_block<S: BlockSource>(
    f: MxQuantFn,
    backend: Backend,
    src: &[S],
    codes: &mut [MaybeUninit<u8>],
    scale: &mut MaybeUninit<u8>,
) {
    let mut bits = [0u32; BLOCK];
    S::f32_bits_of(backend, src, &mut bits[..src.len()]);
    let mut c = [0u8; BLOCK];
    let mut sc = 0u8;
    // SAFETY: `bits` holds a whole block of f32 values, `c` 32 code bytes (16 for E2M1) and
    // `sc` the scale byte; the caller took `f` from the table of a backend that runs here.
    unsafe { f(bits.as_ptr().cast(), 1, c.as_mut_ptr(), &mut sc) };
    for (slot, &x) in codes.iter_mut().zip(&c) {
        put(slot, x);
    }
    put(scale, sc);
}

/// Spreads the 16 nibbles of `x` (nibble `i` at bits `4i`) to the low nibbles of 16 bytes
/// (nibble `i` at bits `8i`): each step moves the upper half of every field up by the
/// field's width, and the mask keeps both halves apart, until the fields are 4 bits wide.
fn spread_nibbles(x: u64) -> u128 {
    let mut x = x as u128;
    x = (x | (x << 32)) & 0x0000_0000_FFFF_FFFF_0000_0000_FFFF_FFFF;
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF_0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF_00FF_00FF_00FF_00FF;
    (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F
}

/// The inverse of [`spread_nibbles`] (`x` has zero high nibbles): the same steps in reverse,
/// each closing the gap between the halves of every field.
fn gather_nibbles(x: u128) -> u64 {
    let mut x = x;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF_00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF_0000_FFFF_0000_FFFF;
    x = (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF_0000_0000_FFFF_FFFF;
    (x | (x >> 32)) as u64
}

/// One block's 16 code bytes, planar (element `i` in nibble `i` of the bytes read as one
/// little-endian number) to ggml (element `j` in the low nibble of byte `j`, `j + 16` in
/// its high nibble). Elements 0..15 are the low 8 planar bytes, 16..31 the high 8.
fn planar_to_ggml16(p: [u8; 16]) -> [u8; 16] {
    let x = u128::from_le_bytes(p);
    let lo = spread_nibbles(x as u64);
    let hi = spread_nibbles((x >> 64) as u64);
    (lo | (hi << 4)).to_le_bytes()
}

/// The inverse of [`planar_to_ggml16`].
fn ggml16_to_planar(g: [u8; 16]) -> [u8; 16] {
    let x = u128::from_le_bytes(g);
    let lo = gather_nibbles(x & 0x0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F) as u128;
    let hi = gather_nibbles((x >> 4) & 0x0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F) as u128;
    (lo | (hi << 64)).to_le_bytes()
}

/// Repacks MXFP4 from the planar layout (gpt-oss/Hugging Face `*_blocks` bytes, element
/// `2j` in the low nibble of byte `j`, and `*_scales` bytes) into ggml `block_mxfp4`s
/// (17 bytes: the scale, then elements `j` / `j + 16` in the low / high nibbles of byte
/// `j`), losslessly: `blocks` has 16 bytes per scale, `out` 17.
///
/// ```
/// use vcvt::block::{mxfp4_ggml_to_planar, mxfp4_planar_to_ggml};
/// let blocks: Vec<u8> = (0..16).map(|j| j as u8 * 0x11).collect();
/// let mut ggml = [0u8; 17];
/// mxfp4_planar_to_ggml(&blocks, &[130], &mut ggml)?;
/// assert_eq!(ggml[0], 130);
/// let (mut back, mut s) = ([0u8; 16], [0u8; 1]);
/// mxfp4_ggml_to_planar(&ggml, &mut back, &mut s)?;
/// assert_eq!((&back[..], s[0]), (&blocks[..], 130));
/// # Ok::<(), vcvt::Error>(())
/// ```
///
/// # Errors
/// [`Error::BlockLength`] when `blocks` or `out` does not match `scales`; nothing is
/// written then.
pub fn mxfp4_planar_to_ggml(blocks: &[u8], scales: &[u8], out: &mut [u8]) -> Result<(), Error> {
    let n = scales.len();
    expect_len("blocks", 16 * n, blocks.len())?;
    expect_len("out", GGML_BLOCK * n, out.len())?;
    for ((b, &s), o) in blocks
        .chunks(16)
        .zip(scales)
        .zip(out.chunks_mut(GGML_BLOCK))
    {
        o[0] = s;
        o[1..].copy_from_slice(&planar_to_ggml16(b.try_into().unwrap()));
    }
    Ok(())
}

/// The inverse of [`mxfp4_planar_to_ggml`]: ggml `block_mxfp4`s (17 bytes each) into
/// planar `blocks` (16 bytes per block) and `scales` (one byte per block).
///
/// # Errors
/// [`Error::BlockLength`] when the lengths do not match (`ggml` must be whole blocks);
/// nothing is written then.
pub fn mxfp4_ggml_to_planar(
    ggml: &[u8],
    blocks: &mut [u8],
    scales: &mut [u8],
) -> Result<(), Error> {
    let n = scales.len();
    expect_len("ggml", GGML_BLOCK * n, ggml.len())?;
    expect_len("blocks", 16 * n, blocks.len())?;
    for ((g, s), b) in ggml
        .chunks(GGML_BLOCK)
        .zip(scales.iter_mut())
        .zip(blocks.chunks_mut(16))
    {
        *s = g[0];
        b.copy_from_slice(&ggml16_to_planar(g[1..].try_into().unwrap()));
    }
    Ok(())
}
