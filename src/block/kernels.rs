//! The block kernels of each backend: SIMD replacements for the scalar loops of
//! `src/block/`, each bound to produce exactly the scalar loop's bits.
//!
//! A table has one optional slot per (operation, element, destination). An empty slot means
//! the scalar loop runs; a SIMD backend fills the slots it has kernels for
//! (`src/arch/<arch>/*_block.rs`). Every slot handles whole blocks only; the scalar loop
//! finishes a short last block of a row. This file holds only the slot types: which table
//! serves a backend is `dispatch.rs`'s business, so the kernels can depend on this file and
//! on the specification (`spec/`) without depending on the API that calls them.

/// Dequantizes `blocks` whole MX blocks of one row, OCP decoding (`0xFF` = NaN block).
///
/// # Safety
/// `codes` readable for `blocks · 32` codes (`blocks · 16` bytes for E2M1), `scales` for
/// `blocks` bytes, `dst` writable for `blocks · 32` values of the slot's destination type
/// (no alignment required), and the table's backend must run on this CPU.
pub(crate) type MxDequantFn =
    unsafe fn(codes: *const u8, scales: *const u8, blocks: usize, dst: *mut u8);

/// Quantizes `blocks` whole MX blocks of f32 values of one row.
///
/// # Safety
/// `src` readable for `blocks · 32` f32 values, `codes` writable for `blocks · 32` codes
/// (`blocks · 16` bytes for E2M1), `scales` for `blocks` bytes (no alignment required), and
/// the table's backend must run on this CPU.
pub(crate) type MxQuantFn =
    unsafe fn(src: *const u8, blocks: usize, codes: *mut u8, scales: *mut u8);

/// Block FP8 dequantization of one row of `cols` E4M3 codes whose tiles are `tile_cols`
/// wide (the last one possibly narrower), tile `t` scaled by the little-endian f32 at
/// `scales + 4t`: `dst[i] = D(f32(f32(code[i]) · scale))`.
///
/// # Safety
/// `codes` readable for `cols` bytes, `scales` for `4 · cols.div_ceil(tile_cols)` bytes,
/// `dst` writable for `cols` values of the slot's destination type (no alignment
/// required), `tile_cols > 0`, and the table's backend must run on this CPU.
pub(crate) type Fp8DequantFn =
    unsafe fn(codes: *const u8, scales: *const u8, tile_cols: usize, cols: usize, dst: *mut u8);

/// The largest `code & ABS` of `n` codes of the slot's source type (`f32`, BF16 or F16
/// bits): the integer maximum that `amax` turns into a magnitude.
///
/// # Safety
/// `src` readable for `n` values of the slot's type and aligned for it, and the table's
/// backend must run on this CPU.
pub(crate) type AmaxFn = unsafe fn(src: *const u8, n: usize) -> u32;

/// `out[i] = x · s` for `n` f32 bit patterns `x`, exactly, with the building blocks' NaN
/// rule (`src/block/mod.rs`, `products`).
///
/// # Safety
/// `bits` readable and `out` writable for `n` values, both aligned, and the table's
/// backend must run on this CPU.
pub(crate) type ProductsFn = unsafe fn(bits: *const u32, n: usize, s: f64, out: *mut f64);

/// Block FP8 quantization of one band of tile rows: `rows <= tile_rows` rows of `cols`
/// values of the slot's source type, `stride` **bytes** apart, into `rows · cols` E4M3
/// codes (row after row) and the `cols.div_ceil(tile_cols)` little-endian f32 scales of the
/// band's tiles, with the scale rule of `spec::fp8::tile_scale` (`ue8m0` selects the
/// profile), bit for bit the scalar quantization.
///
/// # Safety
/// `src` readable for `(rows − 1) · stride` bytes plus `cols` values of the slot's type
/// (no alignment required), `codes` writable for `rows · cols` bytes, `scales` for
/// `4 · cols.div_ceil(tile_cols)` bytes, `rows`, `cols` and `tile_cols` non-zero, and the
/// table's backend must run on this CPU.
pub(crate) type Fp8QuantFn = unsafe fn(
    src: *const u8,
    stride: usize,
    rows: usize,
    cols: usize,
    tile_cols: usize,
    ue8m0: bool,
    codes: *mut u8,
    scales: *mut u8,
);

/// A fused scaled conversion of `n` values with the f32 scale whose bits are `scale`, for
/// the scales the building block's caller found exact in f32 (`src/block/scaled.rs`):
/// `narrow_scaled` (source: f32/BF16/F16 values, destination: codes) takes positive normal
/// powers of two, `dequantize_scaled` (source: codes, destination: f32/BF16/F16) the scales
/// whose every product with a code of the format is an exact normal f32.
///
/// # Safety
/// `src` readable for `n` values and `dst` writable for `n` values of the slot's types (no
/// alignment required), `scale` as the slot requires, and the table's backend must run on
/// this CPU.
pub(crate) type ScaledFn = unsafe fn(src: *const u8, n: usize, scale: u32, dst: *mut u8);

/// Formats of the fused scaled slots, in the order of `ScaledCode::FUSED` (F8E4M3, F8E5M2,
/// F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1; E8M0 has none).
pub(crate) const SCALED_FORMATS: usize = 7;

/// One backend's block kernels.
pub(crate) struct BlockKernels {
    /// `[element][destination]`, indices of `MxElement` and `DestKind`.
    pub(crate) mx_dequant: [[Option<MxDequantFn>; 3]; 5],
    /// `[rule][element]`, f32 sources.
    pub(crate) mx_quant: [[Option<MxQuantFn>; 5]; 2],
    /// `[destination]`.
    pub(crate) fp8_dequant: [Option<Fp8DequantFn>; 3],
    /// `[source]`, indices of `DestKind`.
    pub(crate) amax: [Option<AmaxFn>; 3],
    /// The scaled building blocks' products.
    pub(crate) products: Option<ProductsFn>,
    /// `[source]`, indices of `DestKind`.
    pub(crate) fp8_quant: [Option<Fp8QuantFn>; 3],
    /// `narrow_scaled` with a power-of-two scale: `[source][format]`.
    pub(crate) narrow_scaled: [[Option<ScaledFn>; SCALED_FORMATS]; 3],
    /// `dequantize_scaled` with an exact scale: `[format][destination]`.
    pub(crate) dequantize_scaled: [[Option<ScaledFn>; 3]; SCALED_FORMATS],
}

impl BlockKernels {
    /// A table without kernels: everything runs the scalar loops.
    pub(crate) const fn empty() -> BlockKernels {
        BlockKernels {
            mx_dequant: [[None; 3]; 5],
            mx_quant: [[None; 5]; 2],
            fp8_dequant: [None; 3],
            amax: [None; 3],
            products: None,
            fp8_quant: [None; 3],
            narrow_scaled: [[None; SCALED_FORMATS]; 3],
            dequantize_scaled: [[None; 3]; SCALED_FORMATS],
        }
    }
}
