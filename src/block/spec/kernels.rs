//! The block-kernel table and the contract of its slots: what a SIMD replacement of a
//! scalar loop of the specification receives, and what it must produce (exactly the scalar
//! loop's bits).
//!
//! A table has one optional slot per (operation, element, destination). An empty slot means
//! the scalar loop runs; a SIMD backend fills the slots it has kernels for (generic in
//! `src/simd/generic/block/`, hand-written in `src/arch/<arch>/*_block.rs`, composed per
//! backend in `src/arch/<arch>/block_tables.rs`). Every slot handles whole blocks only; the
//! scalar loop finishes a short last block of a row.
//!
//! This file is part of the specification layer (`spec/`) because the kernels are written
//! against it: they fill a [`BlockKernels`] and implement its fn-pointer types, so it sits
//! below them, and depends on nothing but `Isa`. Which table serves a backend, and the
//! calls through the slots, are the API's business (`src/block/dispatch.rs` and the scheme
//! files above it).

use crate::arch::Isa;

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

/// Block FP8 dequantization of `rows` rows that share their tiles' scales (one band of a
/// tile row): row `r`'s codes at `codes + r · cols`, its values at `dst + r · dst_stride`
/// bytes, otherwise as [`Fp8DequantFn`] for each row. A kernel that prepares something per
/// tile (a table) prepares it once for the band.
///
/// # Safety
/// As [`Fp8DequantFn`] for each of the `rows` rows (`rows ≥ 1`), and the rows' values do not
/// overlap.
pub(crate) type Fp8DequantBandFn = unsafe fn(
    codes: *const u8,
    scales: *const u8,
    tile_cols: usize,
    cols: usize,
    rows: usize,
    dst_stride: usize,
    dst: *mut u8,
);

/// The largest `code & ABS` of `n` codes of the slot's source type (`f32`, BF16 or F16
/// bits): the integer maximum that `amax` turns into a magnitude.
///
/// # Safety
/// `src` readable for `n` values of the slot's type and aligned for it, and the table's
/// backend must run on this CPU.
pub(crate) type AmaxFn = unsafe fn(src: *const u8, n: usize) -> u32;

/// `out[i] = x · s` for `n` f32 bit patterns `x`, exactly, with the building blocks' NaN
/// rule (`values.rs`, `products`).
///
/// # Safety
/// `bits` readable and `out` writable for `n` values, both aligned, and the table's
/// backend must run on this CPU.
pub(crate) type ProductsFn = unsafe fn(bits: *const u32, n: usize, s: f64, out: *mut f64);

/// Quantizes `blocks` whole MXFP4/MXFP8 blocks of one row under the `Ggml` or `Mlx`
/// profile (`src/block/spec/mx.rs`), from the source type of the slot (f32, BF16 or F16,
/// indices of `DestKind`), into the slot's layout: planar (codes `blocks · 16` bytes for
/// E2M1, `blocks · 32` for E4M3, and `blocks` scale bytes at `scales`) or ggml
/// `block_mxfp4` (`blocks · 17` bytes at `codes`; `scales` is not used).
///
/// # Safety
/// `src` readable for `blocks · 32` values of the source type and aligned for it, the
/// outputs writable for the bytes above (no alignment required), and the table's backend
/// must run on this CPU.
pub(crate) type MxProfileQuantFn =
    unsafe fn(src: *const u8, blocks: usize, codes: *mut u8, scales: *mut u8);

/// Dequantizes `blocks` whole blocks of one row under the `Ggml` or `Mlx` profile, from the
/// slot's layout (as [`MxProfileQuantFn`]; `scales` unused for the ggml layout) into
/// `blocks · 32` values of the slot's destination type.
///
/// # Safety
/// The inputs readable for the bytes the layout says, `dst` writable for `blocks · 32`
/// values of the destination type and aligned for it, and the table's backend must run on
/// this CPU.
pub(crate) type MxProfileDequantFn =
    unsafe fn(codes: *const u8, scales: *const u8, blocks: usize, dst: *mut u8);

/// Which of the `Mlx` profile's slots: E2M1 planar, E2M1 in ggml `block_mxfp4`s, E4M3.
pub(crate) const MLX_E2M1: usize = 0;
/// See [`MLX_E2M1`].
pub(crate) const MLX_E2M1_GGML: usize = 1;
/// See [`MLX_E2M1`].
pub(crate) const MLX_E4M3: usize = 2;
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
/// powers of two (and, where the table's `narrow_any` is set, any normal scale up to `2^100`
/// in magnitude), `dequantize_scaled` (source: codes, destination: f32/BF16/F16) the scales
/// whose every product with a code of the format is an exact normal f32.
///
/// # Safety
/// `src` readable for `n` values and `dst` writable for `n` values of the slot's types (no
/// alignment required), `scale` as the slot requires, and the table's backend must run on
/// this CPU.
pub(crate) type ScaledFn = unsafe fn(src: *const u8, n: usize, scale: u32, dst: *mut u8);

/// A table lookup of `n` one-byte codes: `dst[i] = table[src[i]]`, where `table` holds 256
/// values of the slot's destination type (f32, BF16 or F16 as `DestKind` indexes it). The
/// building block `dequantize_scaled` builds the table per call (`src/block/scaled.rs`).
///
/// # Safety
/// `table` readable for 256 values, `src` readable for `n` bytes and `dst` writable for `n`
/// values of the slot's type, `table` and `dst` aligned for it, `dst` not overlapping the
/// others, and the table's backend must run on this CPU.
pub(crate) type LookupFn = unsafe fn(table: *const u8, src: *const u8, n: usize, dst: *mut u8);

/// `dst[i] = RN(dst[i] · scale)` on `n` f32 values in place, rounded to nearest even
/// whatever the caller's FP environment, NaN lanes kept as they are: `dequantize_scaled`'s
/// product pass into f32 after the backend's widening (`src/block/scaled.rs`).
///
/// # Safety
/// `dst` readable and writable for `n` f32 values, 4-byte aligned; `scale` a normal f32 and
/// every non-NaN value of `dst` zero, infinite, or normal with `|x · scale| >= 2^-126` (so
/// neither FTZ nor DAZ can change a lane); the table's backend must run on this CPU.
pub(crate) type ScaleF32Fn = unsafe fn(dst: *mut u8, n: usize, scale: u32);

/// Formats of the fused scaled slots, in the order of `ScaledCode::FUSED` (F8E4M3, F8E5M2,
/// F8E4M3FNUZ, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1, F8E3M4, F8E4M3IEEE, F8E4M3B11FNUZ,
/// F8E5M3FNU; E8M0 has none: its smallest value is code 0, which `exact_scale` does not
/// state).
pub(crate) const SCALED_FORMATS: usize = 11;
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
    /// `[destination]`: the band form, where a backend has one (used for whole matrices;
    /// the row form serves the rest).
    pub(crate) fp8_dequant_band: [Option<Fp8DequantBandFn>; 3],
    /// The instruction set (and so the vector width) of each `mx_dequant` kernel, what the
    /// public introspection (`Mx::dequantize_kernel`) reports; `Isa::Scalar` for an empty
    /// slot.
    pub(crate) mx_dequant_isa: [[Isa; 3]; 5],
    /// The instruction set of each `mx_quant` kernel.
    pub(crate) mx_quant_isa: [[Isa; 5]; 2],
    /// The instruction set of each `fp8_dequant` kernel.
    pub(crate) fp8_dequant_isa: [Isa; 3],
    /// `[source]`, indices of `DestKind`.
    pub(crate) amax: [Option<AmaxFn>; 3],
    /// The scaled building blocks' products.
    pub(crate) products: Option<ProductsFn>,
    /// `[layout][source]`: MXFP4 quantization under the `Ggml` profile (layout 0 planar, 1
    /// ggml `block_mxfp4`; sources indexed as `DestKind`).
    pub(crate) ggml_quant: [[Option<MxProfileQuantFn>; 3]; 2],
    /// `[layout][destination]`: dequantization under the `Ggml` profile.
    pub(crate) ggml_dequant: [[Option<MxProfileDequantFn>; 3]; 2],
    /// `[MLX_E2M1 | MLX_E2M1_GGML | MLX_E4M3][source]`: quantization under the `Mlx`
    /// profile.
    pub(crate) mlx_quant: [[Option<MxProfileQuantFn>; 3]; 3],
    /// `[MLX_E2M1 | MLX_E2M1_GGML | MLX_E4M3][destination]`: dequantization under the
    /// `Mlx` profile.
    pub(crate) mlx_dequant: [[Option<MxProfileDequantFn>; 3]; 3],
    /// The instruction set of the kernels of the tier's generic instantiation (its
    /// `fill_block` fills them all, on every tier): the `ggml_*`, `mlx_*`, `nv_*` and
    /// `fp8_quant` slots. What `Mx::quantize_kernel`/`dequantize_kernel` report for the
    /// `Ggml`/`Mlx` profiles, `Nvfp4::quantize_kernel`/`dequantize_kernel` and
    /// `BlockFp8::quantize_kernel`.
    pub(crate) generic_isa: Isa,
    /// `[source]`, indices of `DestKind`.
    pub(crate) fp8_quant: [Option<Fp8QuantFn>; 3],
    /// `narrow_scaled` with a power-of-two scale: `[source][format]`.
    pub(crate) narrow_scaled: [[Option<ScaledFn>; SCALED_FORMATS]; 3],
    /// Whether the `narrow_scaled` slots also take any normal scale with `|s| <= 2^100`.
    pub(crate) narrow_any: bool,
    /// `dequantize_scaled` with an exact scale: `[format][destination]` (BF16 and F16; into
    /// f32 `scale_f32` serves exact scales too).
    pub(crate) dequantize_scaled: [[Option<ScaledFn>; 3]; SCALED_FORMATS],
    /// `dequantize_scaled` into BF16/F16 (`[destination]`, f32 `None`) from the codes widened
    /// to f32 by the backend: a `ScaledFn` whose source is those f32 values, for the scales
    /// of `ScaledCode::odd_scale` (the products rounded to odd, then once to the
    /// destination).
    pub(crate) dequantize_odd: [Option<ScaledFn>; 3],
    /// `dequantize_scaled` into f32: the product pass over the widened values.
    pub(crate) scale_f32: Option<ScaleF32Fn>,
    /// `dequantize_scaled`'s per-call table lookup, `[destination]`.
    pub(crate) lookup: [Option<LookupFn>; 3],
    /// `[format]` (as `dequantize_scaled`): the per-call table measured faster than the
    /// fused slot for BF16 and F16 on this backend, so a call long enough for the table
    /// takes it even with an exact scale.
    pub(crate) table_first: [bool; SCALED_FORMATS],
    /// NVFP4 dequantization, `[profile][layout][destination]` (indices of `NvProfile`,
    /// `NvLayout` and `DestKind`).
    pub(crate) nv_dequant: [[[Option<NvFn>; 3]; 2]; 3],
    /// NVFP4 quantization, `[profile][layout][source]` (indices as `nv_dequant`).
    pub(crate) nv_quant: [[[Option<NvFn>; 3]; 2]; 3],
}

impl BlockKernels {
    /// A table without kernels: everything runs the scalar loops.
    pub(crate) const fn empty() -> BlockKernels {
        BlockKernels {
            mx_dequant: [[None; 3]; 5],
            mx_quant: [[None; 5]; 2],
            fp8_dequant: [None; 3],
            fp8_dequant_band: [None; 3],
            amax: [None; 3],
            products: None,
            nv_dequant: [[[None; 3]; 2]; 3],
            nv_quant: [[[None; 3]; 2]; 3],
            fp8_quant: [None; 3],
            narrow_scaled: [[None; SCALED_FORMATS]; 3],
            narrow_any: false,
            dequantize_scaled: [[None; 3]; SCALED_FORMATS],
            dequantize_odd: [None; 3],
            scale_f32: None,
            lookup: [None; 3],
            table_first: [false; SCALED_FORMATS],
            ggml_quant: [[None; 3]; 2],
            ggml_dequant: [[None; 3]; 2],
            mlx_quant: [[None; 3]; 3],
            mlx_dequant: [[None; 3]; 3],
            generic_isa: Isa::Scalar,
            mx_dequant_isa: [[Isa::Scalar; 3]; 5],
            mx_quant_isa: [[Isa::Scalar; 5]; 2],
            fp8_dequant_isa: [Isa::Scalar; 3],
        }
    }

    /// Records `isa` for every filled MX and block FP8 slot: a hand-written table's `set`
    /// fills the slots, then its composer tags them with the ISA they are written for (a
    /// tier built on top of it re-tags only the slots it replaces).
    #[allow(dead_code)] // Not every build has a SIMD backend.
    pub(crate) const fn tag_filled(&mut self, isa: Isa) {
        let mut e = 0;
        while e < 5 {
            let mut d = 0;
            while d < 3 {
                if self.mx_dequant[e][d].is_some() {
                    self.mx_dequant_isa[e][d] = isa;
                }
                d += 1;
            }
            let mut r = 0;
            while r < 2 {
                if self.mx_quant[r][e].is_some() {
                    self.mx_quant_isa[r][e] = isa;
                }
                r += 1;
            }
            e += 1;
        }
        let mut d = 0;
        while d < 3 {
            if self.fp8_dequant[d].is_some() {
                self.fp8_dequant_isa[d] = isa;
            }
            d += 1;
        }
    }
}
