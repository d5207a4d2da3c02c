//! The block specification layer: the scalar definition of the block formats, what every
//! block kernel must equal bit for bit and what runs wherever no kernel does, together with
//! everything the kernels are written against.
//!
//! - `values.rs`: the value traits and enums ([`BlockSource`], [`BlockDest`], [`DestKind`])
//!   and the exact helpers every block routine shares (`amax_bits`, `products`, `round_to`);
//! - `soft.rs`: f32 arithmetic that no FP environment changes, for the reference orders of
//!   the profiles (part of this layer: the specification is written with it, and kernels
//!   that fall back to a reference step call it);
//! - `mx.rs`, `nvfp4.rs`, `fp8.rs`: the reference routines of each scheme and profile;
//! - `kernels.rs`: the kernel-table type ([`kernels::BlockKernels`]) and the contract of each
//!   slot (its fn-pointer type), which the kernels fill.
//!
//! Dependencies point one way. These files import only the codecs, the format types and
//! options (`crate::codec`, `crate::options`, the crate root's types), two enums (`Isa` from
//! `crate::arch` for the table, `Backend` for the signatures of the value traits' slice
//! methods) and each other; nothing here imports the public block API. Above them, the
//! width-generic kernels (`src/simd/`) and the hand-written ones (`src/arch/<arch>/`) take
//! their block types and reference routines from here only; the per-backend tables
//! (`block_tables.rs`) fill a `BlockKernels`; the public API (`src/block/mod.rs` and its
//! files) dispatches to the tables, falls back to these routines, and re-exports the public
//! items defined here (`BlockSource`, `BlockDest`, `DestKind`, `MxElement`) at their
//! `vcvt::block::` paths.
//!
//! One piece stays above: the implementations of the value traits for `f32`, `BF16` and
//! `F16` are in `src/block/mod.rs`, because their hidden slice methods (`f32_bits_of`,
//! `from_f64s`) convert on a backend through the crate's slice conversions. The trait is
//! declared here and implemented there; nothing here imports that file.

pub(crate) mod fp8;
pub(crate) mod kernels;
pub(crate) mod mx;
pub(crate) mod nvfp4;
pub(crate) mod soft;
mod values;

#[cfg(feature = "__internal-tests")]
pub(crate) use values::internal_tests as values_internal_tests;
pub use values::{BlockDest, BlockSource, DestKind};
pub(crate) use values::{
    TO_DEST, amax_bits, finish_amax, private, products, put, round_to, wide_fast,
};

// The names the hand-written SIMD kernels fall back to for the blocks they leave to the
// specification.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) use fp8::dequantize_run as fp8_dequantize_run;
#[cfg(target_arch = "x86_64")]
pub(crate) use mx::{
    dequantize_block as mx_dequantize_block, quantize_row as mx_quantize_row,
    scale_byte_fast as mx_scale_byte_fast,
};
