//! Block-scaled quantization: MX (MXFP8, MXFP6, MXFP4), NVFP4 and DeepSeek-style block
//! FP8, both directions, with each ecosystem's rule named and matched bit for bit.
//!
//! A block-scaled tensor stores narrow *element codes* and, for each block of consecutive
//! values, one *scale*: the value of element `i` is `decode(code_i) · scale`.
//!
//! | scheme | type | elements | scale | block |
//! |---|---|---|---|---|
//! | MXFP8 | [`Mx`] with [`MxElement::E4M3`] / [`MxElement::E5M2`] | one byte each | E8M0 byte, `2^(s−127)` | 32 along a row |
//! | MXFP6 | [`Mx`] with [`MxElement::E2M3`] / [`MxElement::E3M2`] | one per byte, low 6 bits | E8M0 | 32 |
//! | MXFP4 | [`Mx`] with [`MxElement::E2M1`] | two per byte, element `2j` in the low nibble of byte `j` | E8M0 | 32 |
//! | NVFP4 | [`Nvfp4`] | two per byte, as MXFP4 | E4M3 byte per 16 values, times one f32 per tensor | 16 |
//! | block FP8 | [`BlockFp8`] | E4M3 bytes | f32 per 2-D tile (`weight_scale_inv`) | e.g. 128×128 or 1×128 |
//!
//! # Shapes and edge blocks
//!
//! Every scheme works on a row-major matrix described by a [`Shape`]: `rows × cols` values,
//! consecutive rows `stride` values apart on the unquantized (f32/BF16/F16) side; a 1-D run
//! of `n` values is `Shape::vector(n)`. Blocks run along a row and never cross rows. When
//! `cols` is not a multiple of the block, **the last block of each row is short**: its scale
//! comes from the values it has, and the codes it stores are only those values (so a row of
//! MXFP8 codes is `cols` bytes, a row of packed FP4 is `cols.div_ceil(2)` bytes, the high
//! nibble of an odd row's last byte is `0`). Scales are row-major, one per block:
//! `rows × cols.div_ceil(block)`. This is the layout the safetensors checkpoints use when
//! `cols` is a multiple of the block (gpt-oss `*_blocks` `[…, K/32, 16]` + `*_scales`
//! `[…, K/32]`; DeepSeek `weight_scale_inv` `[⌈rows/128⌉, ⌈cols/128⌉]`, whose edge tiles are
//! cropped the same way). The ggml layouts need whole blocks (llama.cpp requires them too).
//!
//! The quantized side is always bytes (`&[u8]`, any alignment, little-endian where a scale
//! is wider than a byte), so the slices of a memory-mapped safetensors file can be passed as
//! they are. Every function checks every length before it writes anything; a mismatch is an
//! [`Error`] naming the buffer, the size it needs and the size it has.
//!
//! # Profiles
//!
//! The ecosystems agree on the element formats and disagree on everything around them: how
//! a block's scale follows from its largest magnitude (floor, ceiling or nearest in log2,
//! from the exponent bits or from a float `log2`), how element ties round, what a NaN or an
//! infinity does, how the scale byte `0xFF` decodes. A [`MxProfile`] (and [`NvProfile`],
//! [`Fp8Profile`]) names one such rule set; each is documented with the reference it
//! reproduces and is tested against that reference's own code on committed vectors.
//!
//! | scheme | profile | scale rule | elements | reference |
//! |---|---|---|---|---|
//! | MX (all 5 elements) | [`MxProfile::Ceil`] (default) | smallest `2^k ≥ amax / max` (f32 division) | nearest even, saturated | torchao RCEIL, Triton `ROUND_UP` (gpt-oss, Hugging Face, vLLM), cuBLAS |
//! | MX | [`MxProfile::Ocp`] | `floor(log2 amax) − emax` from the exponent bits | nearest even, saturated | OCP MX v1.0 §6.3, torchao FLOOR |
//! | MXFP4 | [`MxProfile::Ggml`] | `floor(log2f(amax)) − 2`, f32 `log2` | nearest, ties toward zero, `−0` → `+0` | gguf 0.19 `MXFP4` |
//! | MXFP4, MXFP8 | [`MxProfile::Mlx`] | smallest `2^k ≥ amax / max` in the source dtype | MLX's argmin (fp4), saturating E4M3 | mlx 0.32.4 `mx.quantize` |
//! | NVFP4 | [`NvProfile::ModelOpt`] (default) | tensor scale `amax / 2688`, E4M3 block scales | nearest even | NVIDIA ModelOpt `NVFP4QTensor` |
//! | NVFP4 | [`NvProfile::Mlx`] | MLX's `global_scale` rule | MLX's argmin | mlx 0.32.4 `mode="nvfp4"` |
//! | NVFP4 | [`NvProfile::Ggml`] | UE4M3 scales, no tensor scale | – | gguf 0.19 `NVFP4` (dequantization) |
//! | block FP8 | [`Fp8Profile::DeepSeek`] (default), [`Fp8Profile::Ue8m0`] | `max(amax, 1e-4) / 448` (or the next power of two) | nearest even, saturated | DeepSeek-V3 `inference/kernel.py` |
//!
//! Layouts: planar codes and scales (safetensors, torchao, ModelOpt, MLX's `uint32` words
//! read as little-endian bytes), ggml's `block_mxfp4` and `block_nvfp4` ([`MxLayout`],
//! [`NvLayout`]), DeepSeek's tiles; [`mxfp4_planar_to_ggml`] and [`mxfp4_ggml_to_planar`]
//! repack MXFP4 losslessly. The building blocks are public too: [`amax`], [`amax_blocks`],
//! [`narrow_scaled`] (`narrow(x · s)`, one rounding of the exact product),
//! [`dequantize_scaled`] and [`Mx::scale_byte`] (a profile's scale rule alone). For loops
//! that convert one row per call, [`Mx::rows`] and [`BlockFp8::rows`] resolve the format,
//! row width, value type and backend once. Which kernel serves a path on a backend:
//! [`Mx::quantize_kernel`], [`Mx::dequantize_kernel`] and the same methods of [`Nvfp4`] and
//! [`BlockFp8`].
//!
//! # Exactness
//!
//! Dequantizing MX to f32 is exact: an element has at most 4 significant bits and the scale
//! is a power of two, so the product needs no rounding unless it leaves f32's range (huge
//! E5M2/E3M2 values under huge scales overflow to ±Inf; tiny products are f32 subnormals,
//! kept). To BF16 or F16 it is one rounding of that exact product. The other schemes follow
//! their reference's order of f32 operations (see each type), computed so that the results
//! do not depend on the FP environment (flush-to-zero, DAZ, rounding mode).

mod dispatch;
mod fp8;
mod mx;
mod nvfp4;
#[cfg(feature = "rayon")]
mod par;
mod rows;
mod scaled;
pub(crate) mod spec;

use core::mem::MaybeUninit;

pub use fp8::{BlockFp8, Fp8Profile};
pub use mx::{Mx, MxLayout, MxProfile, mxfp4_ggml_to_planar, mxfp4_planar_to_ggml};
pub use nvfp4::{NvLayout, NvProfile, Nvfp4};
pub use rows::{Fp8Rows, MxRows};
pub use scaled::{
    amax, amax_blocks, amax_on, dequantize_scaled, dequantize_scaled_on, narrow_scaled,
    narrow_scaled_on,
};
pub use spec::mx::MxElement;
pub use spec::{BlockDest, BlockSource, DestKind};

use spec::{TO_DEST, kernels, private, soft};

use crate::codec::{self, Code, Format};
use crate::options::Policy;
use crate::{BF16, Backend, Error, F16, NanPolicy, Options, Overflow};

/// The shape of a row-major matrix on the unquantized side of a block conversion.
///
/// ```
/// use vcvt::block::Shape;
/// let s = Shape::matrix(3, 40); // 3 rows of 40 values, tightly packed
/// assert_eq!(s.len(), 120);
/// let t = Shape::matrix(3, 40).with_stride(64); // rows 64 values apart
/// assert_eq!(t.len(), 2 * 64 + 40);
/// assert_eq!(Shape::vector(100).len(), 100);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    rows: usize,
    cols: usize,
    stride: usize,
}

impl Shape {
    /// One row of `n` values.
    pub const fn vector(n: usize) -> Shape {
        Shape {
            rows: 1,
            cols: n,
            stride: n,
        }
    }

    /// `rows × cols` values, row after row.
    pub const fn matrix(rows: usize, cols: usize) -> Shape {
        Shape {
            rows,
            cols,
            stride: cols,
        }
    }

    /// The same shape with rows `stride` values apart (`stride ≥ cols`, checked by the
    /// conversions) on the unquantized side.
    pub const fn with_stride(self, stride: usize) -> Shape {
        Shape { stride, ..self }
    }

    /// Number of rows.
    pub const fn rows(&self) -> usize {
        self.rows
    }

    /// Values per row.
    pub const fn cols(&self) -> usize {
        self.cols
    }

    /// Distance between the starts of consecutive rows, in values.
    pub const fn stride(&self) -> usize {
        self.stride
    }

    /// Length the unquantized slice must have: `(rows − 1) · stride + cols`, or 0 without
    /// rows or columns.
    ///
    /// A shape whose length does not fit in `usize` (e.g. `Shape::matrix(1 << 63, 2)` on a
    /// 64-bit target) gives `usize::MAX`, never a wrapped value: no slice of a non-zero-sized
    /// type is that long, so every conversion refuses it ([`Error::BlockShape`] or
    /// [`Error::BlockLength`]) rather than seeing a small or empty shape. Use
    /// [`checked_len`](Self::checked_len) to tell such a shape apart.
    ///
    /// ```
    /// use vcvt::block::Shape;
    /// let huge = Shape::matrix(1 << 62, 8);
    /// assert_eq!(huge.len(), usize::MAX);
    /// assert_eq!(huge.checked_len(), None);
    /// assert!(!huge.is_empty());
    /// ```
    pub const fn len(&self) -> usize {
        match self.checked_len() {
            Some(n) => n,
            None => usize::MAX,
        }
    }

    /// [`len`](Self::len), or `None` when `(rows − 1) · stride + cols` does not fit in
    /// `usize`.
    pub const fn checked_len(&self) -> Option<usize> {
        if self.rows == 0 || self.cols == 0 {
            return Some(0);
        }
        match (self.rows - 1).checked_mul(self.stride) {
            Some(n) => n.checked_add(self.cols),
            None => None,
        }
    }

    /// Whether the shape holds no value.
    pub const fn is_empty(&self) -> bool {
        self.rows == 0 || self.cols == 0
    }

    /// Checks the stride and that `(rows − 1) · stride + cols` fits in `usize`.
    fn check(&self) -> Result<(), Error> {
        if self.rows > 1 && self.stride < self.cols {
            return Err(Error::BlockShape {
                rows: self.rows,
                cols: self.cols,
                reason: "the row stride is smaller than the number of columns",
            });
        }
        let total = self.rows.checked_mul(self.stride.max(self.cols));
        if total.is_none() {
            return Err(Error::BlockShape {
                rows: self.rows,
                cols: self.cols,
                reason: "the shape holds more values than usize can count",
            });
        }
        Ok(())
    }
}

/// Checks that buffer `buffer` has exactly `expected` elements.
#[inline]
fn expect_len(buffer: &'static str, expected: usize, given: usize) -> Result<(), Error> {
    if expected == given {
        Ok(())
    } else {
        Err(Error::BlockLength {
            buffer,
            expected,
            given,
        })
    }
}

/// Multiplies, reporting an overflow as a shape error.
fn checked_mul(a: usize, b: usize, shape: Shape) -> Result<usize, Error> {
    a.checked_mul(b).ok_or(Error::BlockShape {
        rows: shape.rows,
        cols: shape.cols,
        reason: "the shape holds more values than usize can count",
    })
}

impl private::Sealed for f32 {}
impl BlockSource for f32 {
    const IS_F32: bool = true;
    const KIND: DestKind = DestKind::F32;
    const ABS: u32 = 0x7FFF_FFFF;
    const INF: u32 = 0x7F80_0000;
    #[inline(always)]
    fn f32_bits(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn code_bits(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn widen_code(c: u32) -> u32 {
        c
    }
    fn f32_bits_of(_: Backend, src: &[f32], dst: &mut [u32]) {
        for (d, x) in dst.iter_mut().zip(src) {
            *d = x.to_bits();
        }
    }
}
impl BlockDest for f32 {
    const KIND: DestKind = DestKind::F32;
    #[inline(always)]
    fn from_wide(x: f64) -> f32 {
        f32::from_bits(soft::round(x))
    }
    #[inline(always)]
    fn from_f32_bits(x: u32) -> f32 {
        f32::from_bits(x)
    }
    #[inline(always)]
    fn from_raw(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
    fn from_f64s(_: Backend, src: &[f64], dst: &mut [f32]) {
        // No f64 → f32 slice kernel: the integer rounding, element by element.
        for (d, &x) in dst.iter_mut().zip(src) {
            *d = f32::from_bits(soft::round(x));
        }
    }
    #[inline(always)]
    fn f32s_mut(dst: &mut [f32]) -> Option<&mut [f32]> {
        Some(dst)
    }
}

macro_rules! block_half {
    ($t:ident, $kind:ident) => {
        impl private::Sealed for $t {}
        impl BlockSource for $t {
            const KIND: DestKind = DestKind::$kind;
            const ABS: u32 = 0x7FFF;
            const INF: u32 = <$t as Format>::INF;
            #[inline(always)]
            fn f32_bits(self) -> u32 {
                codec::widen_f32::<$t>(self.code())
            }
            #[inline(always)]
            fn code_bits(self) -> u32 {
                self.code()
            }
            #[inline(always)]
            fn widen_code(c: u32) -> u32 {
                codec::widen_f32::<$t>(c)
            }
            fn f32_bits_of(backend: Backend, src: &[$t], dst: &mut [u32]) {
                // Cannot fail: the caller checked the backend and the lengths.
                let _ = crate::convert_slice_on(
                    backend,
                    src,
                    bytemuck::cast_slice_mut::<u32, f32>(dst),
                    Options::new(),
                );
            }
        }
        impl BlockDest for $t {
            const KIND: DestKind = DestKind::$kind;
            #[inline(always)]
            fn from_wide(x: f64) -> $t {
                $t::from_code(codec::narrow_f64::<$t>(x.to_bits(), TO_DEST))
            }
            #[inline(always)]
            fn from_f32_bits(x: u32) -> $t {
                $t::from_code(codec::narrow_f32::<$t>(x, TO_DEST))
            }
            #[inline(always)]
            fn from_raw(bits: u32) -> $t {
                $t::from_code(bits)
            }
            fn from_f64s(backend: Backend, src: &[f64], dst: &mut [$t]) {
                let o = Options::new()
                    .overflow(Overflow::NonSaturating)
                    .nan(NanPolicy::Preserve);
                // Cannot fail: the caller checked the backend and the lengths.
                let _ = crate::convert_slice_on(backend, src, dst, o);
            }
            #[inline(always)]
            fn f32s_mut(_: &mut [$t]) -> Option<&mut [f32]> {
                None
            }
        }
    };
}
block_half!(BF16, Bf16);
block_half!(F16, F16);

/// A narrow format that [`narrow_scaled`] can write and [`dequantize_scaled`] can read:
/// every vcvt format except the packed [`F4E2M1x2`](crate::F4E2M1x2).
///
/// Sealed.
pub trait ScaledCode: private::Sealed + Copy + Send + Sync + 'static {
    /// The format's index in the fused scaled slots (`kernels::SCALED_FORMATS` for none).
    #[doc(hidden)]
    const FUSED: usize;
    /// Whether `x · scale` is an exact normal f32 for every finite non-zero code `x`.
    #[doc(hidden)]
    fn exact_scale(scale: u32) -> bool;
    /// Whether `scale` is normal and every finite non-zero code is a normal f32 whose product
    /// with `scale` is at least 2^-126 in magnitude.
    #[doc(hidden)]
    fn f32_scale(scale: u32) -> bool;
    /// As `f32_scale` with `2^-96` for `2^-126` (the bound of the products rounded to odd).
    #[doc(hidden)]
    fn odd_scale(scale: u32) -> bool;
    #[doc(hidden)]
    fn narrow_wide(x: f64) -> Self;
    #[doc(hidden)]
    fn widen_bits(self) -> u32;
    /// `narrow_wide` of each value, on `backend` (available).
    #[doc(hidden)]
    fn narrow_f64s(backend: Backend, src: &[f64], dst: &mut [Self]);
    /// `widen_bits` of each code, on `backend` (available).
    #[doc(hidden)]
    fn widen_f32s(backend: Backend, src: &[Self], dst: &mut [f32]);
    /// The format's code mask (`0x0F`, `0x3F` or `0xFF`): the codec reads no bit above it.
    #[doc(hidden)]
    const CODE_MASK: u8;
    /// The element whose stored byte is `b`.
    #[doc(hidden)]
    fn from_byte(b: u8) -> Self;
    /// The element's stored byte.
    #[doc(hidden)]
    fn byte(self) -> u8;
}

macro_rules! scaled_code {
    ($($t:ident = $i:expr),*) => {$(
        impl private::Sealed for crate::$t {}
        impl ScaledCode for crate::$t {
            const FUSED: usize = $i;
            #[inline]
            fn exact_scale(scale: u32) -> bool {
                exact_scale_for::<crate::$t>(scale)
            }
            #[inline]
            fn f32_scale(scale: u32) -> bool {
                scale_floor_for::<crate::$t>(scale, f64::from(f32::MIN_POSITIVE))
            }
            #[inline]
            fn odd_scale(scale: u32) -> bool {
                // 2^-96, from its bits.
                scale_floor_for::<crate::$t>(scale, f64::from_bits((1023 - 96) << 52))
            }
            #[inline(always)]
            fn narrow_wide(x: f64) -> Self {
                let p = Policy::overflow(<crate::$t as Format>::DEFAULT_OVERFLOW);
                Self::from_code(codec::narrow_f64::<crate::$t>(x.to_bits(), p))
            }
            #[inline(always)]
            fn widen_bits(self) -> u32 {
                codec::widen_f32::<crate::$t>(self.code())
            }
            fn narrow_f64s(backend: Backend, src: &[f64], dst: &mut [Self]) {
                let o = Options::new()
                    .overflow(<crate::$t as Format>::DEFAULT_OVERFLOW)
                    .nan(NanPolicy::Preserve);
                // Cannot fail: the caller checked the backend and the lengths.
                let _ = crate::convert_slice_on(backend, src, dst, o);
            }
            fn widen_f32s(backend: Backend, src: &[Self], dst: &mut [f32]) {
                // Cannot fail, as above.
                let _ = crate::convert_slice_on(backend, src, dst, Options::new());
            }
            const CODE_MASK: u8 = <crate::$t as Format>::CODE_MASK as u8;
            #[inline(always)]
            fn from_byte(b: u8) -> Self {
                <Self as Code>::from_code(b as u32)
            }
            #[inline(always)]
            fn byte(self) -> u8 {
                <Self as Code>::code(self) as u8
            }
        }
    )*};
}
/// The registry's lines (`src/format/mod.rs`) turned into `scaled_code!`: every format but
/// the packed F4E2M1x2 and the hubs F16 and BF16 (which are [`BlockDest`]s, not codes), with
/// its place in the fused scaled slots; a format without one (E8M0, and any format added to
/// the registry without a line here) takes the two-step path through its element kernels.
macro_rules! scaled_registry {
    ($($index:literal => $name:ident in $module:ident, $kind:ident, $role:ident;)*) => {$(
        scaled_registry!(@one $name);
    )*};
    (@one F16) => {};
    (@one BF16) => {};
    (@one F4E2M1x2) => {};
    (@one F8E4M3) => { scaled_code!(F8E4M3 = 0); };
    (@one F8E5M2) => { scaled_code!(F8E5M2 = 1); };
    (@one F8E4M3FNUZ) => { scaled_code!(F8E4M3FNUZ = 2); };
    (@one F8E5M2FNUZ) => { scaled_code!(F8E5M2FNUZ = 3); };
    (@one F6E2M3) => { scaled_code!(F6E2M3 = 4); };
    (@one F6E3M2) => { scaled_code!(F6E3M2 = 5); };
    (@one F4E2M1) => { scaled_code!(F4E2M1 = 6); };
    (@one F8E3M4) => { scaled_code!(F8E3M4 = 7); };
    (@one F8E4M3IEEE) => { scaled_code!(F8E4M3IEEE = 8); };
    (@one F8E4M3B11FNUZ) => { scaled_code!(F8E4M3B11FNUZ = 9); };
    (@one F8E5M3FNU) => { scaled_code!(F8E5M3FNU = 10); };
    (@one $name:ident) => { scaled_code!($name = kernels::SCALED_FORMATS); };
}
crate::format::for_each_format!(scaled_registry);

/// Whether the f32 `scale` (bits) times every finite non-zero value of the IEEE-like format
/// `F` is an exact normal f32: `scale` normal (either sign), the significant bits of both
/// at most 24 together (so the product's significand fits), the smallest value times
/// `|scale|` at least 2^-126 and the largest below 2^128. The bounds are computed in f64,
/// where these products of f32 values are exact.
fn exact_scale_for<F: Format>(scale: u32) -> bool {
    let a = scale & 0x7FFF_FFFF;
    if !(0x0080_0000..0x7F80_0000).contains(&a) {
        return false;
    }
    let significand = (a & 0x007F_FFFF) | 0x0080_0000;
    let bits = 24 - significand.trailing_zeros();
    if bits + F::MAN_BITS + 1 > 24 {
        return false;
    }
    let s = f64::from(f32::from_bits(a));
    let smallest = f64::from(f32::from_bits(codec::widen_f32::<F>(1)));
    let largest = f64::from(f32::from_bits(codec::widen_f32::<F>(F::MAX)));
    // 2^128 built from its bits (no `powi` without std).
    smallest * s >= f64::from(f32::MIN_POSITIVE) && largest * s < f64::from_bits((1023 + 128) << 52)
}

/// Whether the f32 `scale` (bits) is normal (either sign) and every finite non-zero value of
/// `F` is a normal f32 whose product with `|scale|` is at least `floor` (computed in f64,
/// where it is exact): with `floor` 2^-126, the condition under which FTZ and DAZ cannot
/// change an f32 product of a widened code and `scale`; with 2^-96, nor its exact error. The
/// smallest value is code 0 where that is not zero (E8M0, whose 2^-127 is not a normal
/// f32), else code 1.
fn scale_floor_for<F: Format>(scale: u32, floor: f64) -> bool {
    let a = scale & 0x7FFF_FFFF;
    if !(0x0080_0000..0x7F80_0000).contains(&a) {
        return false;
    }
    let zero = codec::widen_f32::<F>(0) & 0x7FFF_FFFF;
    let smallest = if zero != 0 {
        zero
    } else {
        codec::widen_f32::<F>(1) & 0x7FFF_FFFF
    };
    let s = f64::from(f32::from_bits(a));
    smallest >= 0x0080_0000 && f64::from(f32::from_bits(smallest)) * s >= floor
}

/// Reinterprets an initialised slice as uninitialised, to share one implementation.
#[inline(always)]
fn as_uninit<T>(s: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has the layout of `T`; the callers only write initialised
    // values through the returned slice, so `s` stays initialised.
    unsafe { &mut *(s as *mut [T] as *mut [MaybeUninit<T>]) }
}

/// Little-endian f32 at byte offset `4 * i` of `b` (in bounds: checked by the callers).
#[inline(always)]
fn f32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
}

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    //! Small end-to-end runs of every scheme through the entry points, so that Miri (which
    //! runs tests/internals.rs) sees the block module's `unsafe` (the uninit casts and the
    //! kernel calls). The values are checked against the oracle in `tests/block.rs`.
    use super::*;

    /// Every MX element and profile, the Ggml layout, NVFP4 and block FP8 through their entry
    /// points on small, strided shapes.
    pub fn every_scheme_runs_and_round_trips_small_shapes() {
        let src: [f32; 70] = core::array::from_fn(|i| (i as f32 - 35.0) * 0.37);
        let shape = Shape::matrix(2, 33).with_stride(37);
        for element in [
            MxElement::E4M3,
            MxElement::E5M2,
            MxElement::E2M3,
            MxElement::E3M2,
            MxElement::E2M1,
        ] {
            for profile in [MxProfile::Ocp, MxProfile::Ceil] {
                let mx = Mx::new(element).profile(profile);
                let mut data = [0u8; 66];
                let mut scales = [0u8; 4];
                let n = mx.data_len(shape).unwrap();
                mx.quantize(&src, shape, &mut data[..n], &mut scales)
                    .unwrap();
                let mut out = [BF16::ZERO; 70];
                mx.dequantize(&data[..n], &scales, shape, &mut out).unwrap();
                // Under Ceil an E4M3 element is within 2^-4 of the value (3 fraction bits).
                if profile == MxProfile::Ceil && element == MxElement::E4M3 {
                    assert!((out[0].to_f32() - src[0]).abs() <= src[0].abs() / 16.0);
                }
            }
        }
        let ggml = Mx::new(MxElement::E2M1)
            .profile(MxProfile::Ggml)
            .layout(MxLayout::Ggml);
        let mut g = [0u8; 34];
        ggml.quantize(&src[..64], Shape::matrix(1, 64), &mut g, &mut [])
            .unwrap();
        let mut o = [MaybeUninit::<f32>::uninit(); 64];
        ggml.dequantize_uninit(&g, &[], Shape::matrix(1, 64), &mut o)
            .unwrap();
        let nv = Nvfp4::new();
        let (mut d, mut s) = ([0u8; 35], [0u8; 5]);
        let t = nv
            .quantize(&src, Shape::vector(70), &mut d, &mut s, None)
            .unwrap();
        let mut o = [F16::ZERO; 70];
        nv.dequantize(&d, &s, t, Shape::vector(70), &mut o).unwrap();
        let fp8 = BlockFp8::new(1, 32);
        let (mut d, mut si) = ([0u8; 70], [0u8; 12]);
        fp8.quantize(&src, Shape::vector(70), &mut d, &mut si)
            .unwrap();
        let mut o = [0f32; 70];
        fp8.dequantize(&d, &si, Shape::vector(70), &mut o).unwrap();
        assert!((o[69] - src[69]).abs() <= src[69].abs() / 8.0);
    }
}
