//! OCP Microscaling (MX): 32 elements share one E8M0 scale byte `s`, value `2^(s − 127)`.

use core::mem::MaybeUninit;

use super::kernels::{self, MxRule};
use super::{BlockDest, BlockSource, Shape, as_uninit, checked_mul, expect_len, put, soft};
use crate::codec::{self, Format};
use crate::options::Policy;
use crate::{Backend, Error, F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E5M2, NanPolicy, Overflow};

/// Values per MX block.
pub(crate) const BLOCK: usize = 32;

/// The element format of an MX block.
///
/// ```
/// use vcvt::block::MxElement;
/// assert_eq!(MxElement::E2M1.max(), 6.0);
/// assert_eq!(MxElement::E4M3.max(), 448.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MxElement {
    /// MXFP8 with [`F8E4M3`](crate::F8E4M3) elements (max 448, emax 8).
    E4M3,
    /// MXFP8 with [`F8E5M2`](crate::F8E5M2) elements (max 57344, emax 15).
    E5M2,
    /// MXFP6 with [`F6E2M3`](crate::F6E2M3) elements, one per byte (max 7.5, emax 2).
    E2M3,
    /// MXFP6 with [`F6E3M2`](crate::F6E3M2) elements, one per byte (max 28, emax 4).
    E3M2,
    /// MXFP4 with [`F4E2M1`](crate::F4E2M1) elements, two per byte, element `2j` in the low
    /// nibble of byte `j` (max 6, emax 2).
    E2M1,
}

impl MxElement {
    /// The largest finite element value.
    pub const fn max(self) -> f32 {
        match self {
            MxElement::E4M3 => 448.0,
            MxElement::E5M2 => 57344.0,
            MxElement::E2M3 => 7.5,
            MxElement::E3M2 => 28.0,
            MxElement::E2M1 => 6.0,
        }
    }

    /// `emax_elem` of the OCP rule: the exponent of the largest power of two ≤ [`max`](Self::max).
    pub const fn emax(self) -> i32 {
        match self {
            MxElement::E4M3 => 8,
            MxElement::E5M2 => 15,
            MxElement::E2M3 => 2,
            MxElement::E3M2 => 4,
            MxElement::E2M1 => 2,
        }
    }

    /// Bytes that `n` element codes take in a row: `n`, or `n.div_ceil(2)` for E2M1.
    pub const fn row_bytes(self, n: usize) -> usize {
        match self {
            MxElement::E2M1 => n.div_ceil(2),
            _ => n,
        }
    }

    pub(crate) const fn index(self) -> usize {
        self as usize
    }
}

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
    backend: Option<Backend>,
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

    /// Bytes of element codes that `shape` needs.
    pub fn data_len(&self, shape: Shape) -> Result<usize, Error> {
        shape.check()?;
        checked_mul(shape.rows, self.element.row_bytes(shape.cols), shape)
    }

    /// Scale bytes that `shape` needs (one per block of 32 values of a row).
    pub fn scales_len(&self, shape: Shape) -> Result<usize, Error> {
        shape.check()?;
        checked_mul(shape.rows, shape.cols.div_ceil(BLOCK), shape)
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
        let k = kernels::check_backend(self.backend)?;
        let rule = match self.profile {
            MxProfile::Ocp => MxRule::Ocp,
            MxProfile::Ceil => MxRule::Ceil,
        };
        let row_bytes = self.element.row_bytes(shape.cols);
        let nblocks = shape.cols.div_ceil(BLOCK);
        let full = shape.cols / BLOCK;
        let kernel = k.mx_quant[rule as usize][self.element.index()].filter(|_| S::IS_F32);
        let full_bytes = self.element.row_bytes(full * BLOCK);
        for r in 0..shape.rows {
            let row = &src[r * shape.stride..r * shape.stride + shape.cols];
            let d = &mut data[r * row_bytes..(r + 1) * row_bytes];
            let s = &mut scales[r * nblocks..(r + 1) * nblocks];
            match kernel {
                Some(f) if full > 0 => {
                    // SAFETY: `S` is f32 (the kernel is only taken when `S::IS_F32`), and
                    // `row` holds `cols` ≥ `32 · full` of them; `d` holds `row_bytes(cols)`
                    // ≥ `row_bytes(32 · full)` bytes and `s` `nblocks` ≥ `full` bytes;
                    // `check_backend` returned this table only if its backend runs here.
                    unsafe {
                        f(
                            row.as_ptr().cast(),
                            full,
                            d.as_mut_ptr().cast(),
                            s.as_mut_ptr().cast(),
                        )
                    };
                    quantize_row(
                        self.element,
                        rule,
                        &row[full * BLOCK..],
                        &mut d[full_bytes..],
                        &mut s[full..],
                    );
                }
                _ => quantize_row(self.element, rule, row, d, s),
            }
        }
        Ok(())
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
        let k = kernels::check_backend(self.backend)?;
        let row_bytes = self.element.row_bytes(shape.cols);
        let nblocks = shape.cols.div_ceil(BLOCK);
        let full = shape.cols / BLOCK;
        let kernel = k.mx_dequant[self.element.index()][D::KIND as usize];
        for r in 0..shape.rows {
            let codes = &data[r * row_bytes..(r + 1) * row_bytes];
            let s = &scales[r * nblocks..(r + 1) * nblocks];
            let out = &mut dst[r * shape.stride..r * shape.stride + shape.cols];
            let done = match kernel {
                Some(f) if full > 0 => {
                    // SAFETY: `codes` holds `row_bytes(cols)` ≥ `row_bytes(32 · full)`
                    // bytes, `s` holds `nblocks` ≥ `full` scales and `out` holds `cols` ≥
                    // `32 · full` values of `D`, the type this slot was registered for;
                    // `check_backend` returned this table only if its backend runs here.
                    unsafe { f(codes.as_ptr(), s.as_ptr(), full, out.as_mut_ptr().cast()) };
                    full
                }
                _ => 0,
            };
            for (b, &sb) in s.iter().enumerate().skip(done) {
                let lo = b * BLOCK;
                let hi = (lo + BLOCK).min(shape.cols);
                dequantize_block(self.element, codes, lo, sb, &mut out[lo..hi]);
            }
        }
        Ok(())
    }
}

/// The E8M0 scale byte of a block with largest magnitude `amax` (f32 bits, NaN as
/// `0x7FC00000`) under `rule`.
#[inline]
pub(crate) fn scale_byte(element: MxElement, rule: MxRule, amax: u32) -> u8 {
    if amax >= 0x7F80_0000 {
        return 0xFF;
    }
    match rule {
        MxRule::Ocp => {
            // The biased exponent field is floor(log2 amax) + 127 for a normal amax; a zero
            // or subnormal amax has field 0, which the clamp turns into 2^-127.
            let e = (amax >> 23) as i32 - element.emax();
            e.clamp(0, 254) as u8
        }
        MxRule::Ceil => {
            let d = soft::div(amax, element.max().to_bits());
            ceil_pow2_byte(d)
        }
    }
}

/// The smallest E8M0 byte `b ≤ 254` with `2^(b − 127) ≥ d` (f32 bits of a finite `d ≥ 0`).
#[inline(always)]
pub(crate) fn ceil_pow2_byte(d: u32) -> u8 {
    let e = d >> 23;
    let m = d & 0x007F_FFFF;
    let b = if e == 0 {
        // Zero or subnormal: 2^-127 is the f32 subnormal 0x00400000.
        (m > 0x0040_0000) as u32
    } else {
        e + (m != 0) as u32
    };
    b.min(254) as u8
}

/// `2^(127 − b)` as an f64, the reciprocal of scale byte `b ≤ 254` (exact).
#[inline(always)]
pub(crate) fn inv_scale(b: u8) -> f64 {
    f64::from_bits((1023 + 127 - b as u64) << 52)
}

/// `2^(b − 127)` as an f64, the value of scale byte `b ≤ 254` (exact).
#[inline(always)]
pub(crate) fn scale_value(b: u8) -> f64 {
    f64::from_bits((1023 - 127 + b as u64) << 52)
}

const SAT: Policy = Policy {
    overflow: Overflow::Saturate,
    nan: NanPolicy::Preserve,
};

/// Element code of `x · 2^(127 − b)`: one rounding of the exact product, saturated.
#[inline(always)]
fn element_code<E: Format>(x: u32, inv: f64) -> u8 {
    codec::narrow_f64::<E>((soft::wide(x) * inv).to_bits(), SAT) as u8
}

/// Quantizes one row of values into its codes and scales.
pub(crate) fn quantize_row<S: BlockSource>(
    element: MxElement,
    rule: MxRule,
    row: &[S],
    data: &mut [MaybeUninit<u8>],
    scales: &mut [MaybeUninit<u8>],
) {
    match element {
        MxElement::E4M3 => quantize_row_bytes::<S, F8E4M3>(element, rule, row, data, scales),
        MxElement::E5M2 => quantize_row_bytes::<S, F8E5M2>(element, rule, row, data, scales),
        MxElement::E2M3 => quantize_row_bytes::<S, F6E2M3>(element, rule, row, data, scales),
        MxElement::E3M2 => quantize_row_bytes::<S, F6E3M2>(element, rule, row, data, scales),
        MxElement::E2M1 => {
            for ((blk, s), d) in row
                .chunks(BLOCK)
                .zip(scales.iter_mut())
                .zip(data.chunks_mut(BLOCK / 2))
            {
                let b = scale_byte(element, rule, super::amax_bits(blk));
                put(s, b);
                if b == 0xFF {
                    d.iter_mut().for_each(|c| put(c, 0));
                    continue;
                }
                let inv = inv_scale(b);
                for (pair, c) in blk.chunks(2).zip(d.iter_mut()) {
                    let lo = element_code::<F4E2M1>(pair[0].f32_bits(), inv);
                    let hi = pair
                        .get(1)
                        .map_or(0, |x| element_code::<F4E2M1>(x.f32_bits(), inv));
                    put(c, lo | (hi << 4));
                }
            }
        }
    }
}

fn quantize_row_bytes<S: BlockSource, E: Format>(
    element: MxElement,
    rule: MxRule,
    row: &[S],
    data: &mut [MaybeUninit<u8>],
    scales: &mut [MaybeUninit<u8>],
) {
    for ((blk, s), d) in row
        .chunks(BLOCK)
        .zip(scales.iter_mut())
        .zip(data.chunks_mut(BLOCK))
    {
        let b = scale_byte(element, rule, super::amax_bits(blk));
        put(s, b);
        if b == 0xFF {
            d.iter_mut().for_each(|c| put(c, 0));
            continue;
        }
        let inv = inv_scale(b);
        for (x, c) in blk.iter().zip(d.iter_mut()) {
            put(c, element_code::<E>(x.f32_bits(), inv));
        }
    }
}

/// The f32 bits of element code `c` (exact).
#[inline(always)]
pub(crate) fn decode(element: MxElement, c: u8) -> u32 {
    let c = c as u32;
    match element {
        MxElement::E4M3 => codec::widen_f32::<F8E4M3>(c),
        MxElement::E5M2 => codec::widen_f32::<F8E5M2>(c),
        MxElement::E2M3 => codec::widen_f32::<F6E2M3>(c),
        MxElement::E3M2 => codec::widen_f32::<F6E3M2>(c),
        MxElement::E2M1 => codec::widen_f32::<F4E2M1>(c),
    }
}

/// The code of value `i` of a row of codes.
#[inline(always)]
fn code_at(element: MxElement, codes: &[u8], i: usize) -> u8 {
    match element {
        MxElement::E2M1 => (codes[i / 2] >> (4 * (i & 1))) & 0xF,
        _ => codes[i],
    }
}

/// Dequantizes the block of a row that starts at value `lo` (with `out.len()` values) under
/// the OCP decoding: exact products, `0xFF` a NaN block.
pub(crate) fn dequantize_block<D: BlockDest>(
    element: MxElement,
    codes: &[u8],
    lo: usize,
    s: u8,
    out: &mut [MaybeUninit<D>],
) {
    if s == 0xFF {
        let nan = D::from_f32_bits(0x7FC0_0000);
        out.iter_mut().for_each(|o| put(o, nan));
        return;
    }
    let v = scale_value(s);
    for (i, o) in out.iter_mut().enumerate() {
        let c = code_at(element, codes, lo + i);
        put(o, D::from_wide(soft::wide(decode(element, c)) * v));
    }
}
