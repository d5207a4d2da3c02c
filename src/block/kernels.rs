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

/// The whole 16-value blocks of `rows` rows of an NVFP4 tensor, for the NVFP4 kernels:
/// row `r` of the unquantized side starts at `values + r · values_stride` (bytes; f32, BF16
/// or F16 values as the slot says), its packed codes at `data + r · data_stride` (planar: 8
/// bytes a block; ggml `block_nvfp4`: 36 bytes per 4 blocks, `blocks` a multiple of 4) and
/// its planar scale bytes at `scales + r · scales_stride` (unused for the ggml layout). `g`
/// is the tensor scale's f32 bits.
#[derive(Clone, Copy)]
// Read by the SIMD kernels only: a build without a SIMD backend (wasm32 without simd128)
// has none.
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )),
    allow(dead_code)
)]
pub(crate) struct NvRows {
    pub(crate) rows: usize,
    /// Whole blocks per row.
    pub(crate) blocks: usize,
    /// The source (quantization, read only) or the destination (dequantization).
    pub(crate) values: *mut u8,
    pub(crate) values_stride: usize,
    /// Written by quantization, read only by dequantization.
    pub(crate) data: *mut u8,
    pub(crate) data_stride: usize,
    /// As `data`.
    pub(crate) scales: *mut u8,
    pub(crate) scales_stride: usize,
    pub(crate) g: u32,
}

/// Quantizes or dequantizes the whole blocks `a` describes, bit for bit as the NVFP4
/// specification (`spec/nvfp4.rs`) does block by block, and returns `true`; or returns
/// `false` without writing anything when it does not serve the tensor scale `a.g` (the
/// caller then runs the specification).
///
/// # Safety
/// Every range `a` describes is valid for the accesses above (reads of the source, codes and
/// scales; writes of the destination, codes and scales), `values` aligned for its type (the
/// others need no alignment), and the table's backend must run on this CPU.
pub(crate) type NvFn = unsafe fn(a: &NvRows) -> bool;

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
    /// NVFP4 dequantization, `[profile][layout][destination]` (indices of `NvProfile`,
    /// `NvLayout` and `DestKind`).
    pub(crate) nv_dequant: [[[Option<NvFn>; 3]; 2]; 3],
    /// NVFP4 quantization, `[profile][layout][source]` for `ModelOpt` and `Mlx`.
    pub(crate) nv_quant: [[[Option<NvFn>; 3]; 2]; 2],
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
            nv_dequant: [[[None; 3]; 2]; 3],
            nv_quant: [[[None; 3]; 2]; 2],
        }
    }
}
