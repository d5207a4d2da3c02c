//! Differential harness of the `block` fuzz target: block-scaled quantization
//! (`vcvt::block`), shared by `fuzz/fuzz_targets/block.rs` and the stable replay test
//! `tests/fuzz_replay.rs`, which includes this file (and `harness.rs`, whose guarded buffers
//! it uses) with `#[path]`.
//!
//! # What one input does
//!
//! An input picks an operation ([`Op`]: quantize or dequantize with [`Mx`], [`Nvfp4`] or
//! [`BlockFp8`], the MXFP4 repacks, `amax(_blocks)`, `narrow_scaled` /
//! `dequantize_scaled`), its configuration (element, profile, layout, tile), the source and
//! destination dtypes (`f32`, `BF16`, `F16`), a [`Shape`] (rows, cols, stride), a length
//! change of each buffer (mostly none, sometimes ±1 or ± one block), buffer offsets, a scale,
//! and the payload: source values drawn from interesting f32 bit patterns, or raw code and
//! scale bytes. Every call runs on every backend of `Backend::available()` (Scalar first,
//! through `.on(backend)`), then once without `.on`, and each result must be identical, bit
//! for bit, to Scalar's. Every output buffer sits between guard bytes (poisoned under ASan)
//! and the call runs twice over two canary fills that differ in every byte, so that:
//!
//! * no byte outside an output buffer changes, and a call that fails changes nothing;
//! * every byte the call documents as written is written (it is the same after both runs),
//!   and with a stride the values between rows of a destination keep their canary (the
//!   `_uninit` variants, chosen by a dtype bit, must initialise exactly those bytes too);
//! * the call returns `Ok` exactly when the lengths, shape and combination are valid, and
//!   otherwise one of the errors the documentation gives for what is wrong
//!   (`BlockLength { buffer, expected, given }`, `BlockShape { rows, cols, .. }` with a
//!   reason naming the problem, `BackendUnavailable`); every backend of `Backend::ALL` that
//!   cannot run here must return `BackendUnavailable` (or the length error) and write
//!   nothing.
//!
//! On success the documented properties are checked against the Scalar result:
//!
//! * blocks never cross rows and the last block of a row is short: every block (MX, NVFP4)
//!   or tile (block FP8) quantized or dequantized **alone** gives the same bytes as in the
//!   whole tensor (NVFP4 with the returned tensor scale);
//! * the profiles that compute with the f32 value of the source (all but `Mlx`) give the
//!   same bytes from a BF16/F16 source as from its f32 widening;
//! * a BF16/F16 destination is one rounding of the exact value (MX `Ocp`/`Ceil`/`Ggml`,
//!   NVFP4 `Ggml` with tensor scale 1) or the rounding of the f32 result (NVFP4 `ModelOpt`,
//!   block FP8): it equals the f32 destination narrowed;
//! * the ggml layouts hold the same codes and scales as the planar layout, rearranged as
//!   documented (`mxfp4_planar_to_ggml` for MXFP4, the `block_nvfp4` byte order for NVFP4);
//! * the spare high nibble of an odd row of packed FP4 is written as zero and ignored;
//! * the quantized output dequantizes (on every backend, with the same checks);
//! * the repacks are lossless both ways and follow the documented nibble order; `amax`,
//!   `amax_blocks`, `narrow_scaled` and `dequantize_scaled` equal their element-wise
//!   definitions (NaN compared as NaN).
//!
//! # Input format
//!
//! Every byte string is a valid input; missing header bytes read as zero.
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | operation `% 10`, see [`Op::ALL`] |
//! | 1 | configuration. MX: element `% 5` (`E4M3, E5M2, E2M3, E3M2, E2M1`), profile `/ 5 % 4` (`Ocp, Ceil, Ggml, Mlx`), layout `/ 20 % 2` (`Planar, Ggml`). NVFP4: profile `% 3` (`ModelOpt, Mlx, Ggml`), layout `/ 3 % 2`. Block FP8: profile `% 2` (`DeepSeek, Ue8m0`). `narrow_scaled`: code type `% 8` (see [`CODES`]) |
//! | 2 | dtypes: source `% 3`, destination `/ 3 % 3` (`f32, BF16, F16`), bit `/ 9 % 2`: the `_uninit` variants |
//! | 3 | rows `% 7` |
//! | 4, 5 | cols: `byte4 % 200` if byte 4 is below 224, else `200 + ((byte4 − 224) · 256 + byte5) % 824` |
//! | 6 | stride: `cols` up to 191; `cols + (byte6 − 191)` for 192..=239; `cols − (byte6 − 239)` (saturating) above |
//! | 7, 8, 9 | length change of the data, scale and unquantized (source or destination) buffers, `% 16`: 0..=11 none, 12: +1, 13: −1, 14: + one block, 15: − one block (a decrease below zero becomes an increase) |
//! | 10, 11 | offset selectors of the input and output buffers (`% 64` bytes, or elements for typed buffers) |
//! | 12 | block FP8 tile rows, `% 8` into `[1, 2, 3, 128, 1, 4, 0, 1]` |
//! | 13 | block FP8 tile cols: `% 48` below 240 (0 is invalid), else 128. `amax_blocks`: the block size `% 48` |
//! | 14 | scale `% 16` into [`SCALES`] (index 0: no NVFP4 tensor scale, the profile's own) |
//! | 15.. | payload. Quantizing ops read it as value tokens: a byte `k ≥ 0xF0` and four bytes of raw bits (the low 16 for BF16/F16); else `k` and `e`: [`TABLE`]`[(k >> 1) % len]`, negated if `k & 1`, for a finite non-zero value one ulp up (`e & 3 == 1`) or down (`2`), times `2^((e as i8) >> 2)`; the tokens repeat to fill the length. Dequantizing ops and the repacks read it as raw code bytes, and the scales from its second half (block FP8: value tokens) |
//!
//! [`seeds`] builds the committed corpus (`fuzz/corpus/block/`).

use std::mem::{MaybeUninit, size_of};

use vcvt::block::{
    self, BlockDest, BlockFp8, BlockSource, Fp8Profile, Mx, MxElement, MxLayout, MxProfile,
    NvLayout, NvProfile, Nvfp4, ScaledCode, Shape,
};
use vcvt::{
    BF16, Backend, Error, F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0,
    F16, Overflow,
};

use crate::harness::{
    BASE_ALIGN, DstBuf, Hooks, SrcBuf, Val, canary, first_changed, hex, typed_off,
};

/// Header length; the payload follows.
pub const HEADER: usize = 15;

/// Largest number of columns an input can ask for.
pub const MAX_COLS: usize = 1023;

/// Largest number of rows.
pub const MAX_ROWS: usize = 6;

/// The operations, indexed by byte 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `Mx::quantize(_uninit)`, then the dequantization of its output.
    MxQuantize,
    /// `Mx::dequantize(_uninit)` of payload bytes.
    MxDequantize,
    /// `Nvfp4::quantize`, then the dequantization of its output.
    NvQuantize,
    /// `Nvfp4::dequantize(_uninit)` of payload bytes.
    NvDequantize,
    /// `BlockFp8::quantize`, then the dequantization of its output.
    Fp8Quantize,
    /// `BlockFp8::dequantize(_uninit)` of payload bytes.
    Fp8Dequantize,
    /// `mxfp4_planar_to_ggml` (and back).
    PlanarToGgml,
    /// `mxfp4_ggml_to_planar` (and back).
    GgmlToPlanar,
    /// `amax` and `amax_blocks`.
    Amax,
    /// `narrow_scaled`, then `dequantize_scaled` of its output.
    Scaled,
}

impl Op {
    /// Every operation, in the order of byte 0.
    pub const ALL: [Op; 10] = [
        Op::MxQuantize,
        Op::MxDequantize,
        Op::NvQuantize,
        Op::NvDequantize,
        Op::Fp8Quantize,
        Op::Fp8Dequantize,
        Op::PlanarToGgml,
        Op::GgmlToPlanar,
        Op::Amax,
        Op::Scaled,
    ];

    fn index(self) -> u8 {
        Op::ALL.iter().position(|&o| o == self).unwrap() as u8
    }
}

/// MX elements, profiles and layouts in the order of byte 1.
pub const MX_ELEMENTS: [MxElement; 5] = [
    MxElement::E4M3,
    MxElement::E5M2,
    MxElement::E2M3,
    MxElement::E3M2,
    MxElement::E2M1,
];
/// MX profiles, `byte1 / 5 % 4`.
pub const MX_PROFILES: [MxProfile; 4] = [
    MxProfile::Ocp,
    MxProfile::Ceil,
    MxProfile::Ggml,
    MxProfile::Mlx,
];
/// MX layouts, `byte1 / 20 % 2`.
pub const MX_LAYOUTS: [MxLayout; 2] = [MxLayout::Planar, MxLayout::Ggml];
/// NVFP4 profiles, `byte1 % 3`.
pub const NV_PROFILES: [NvProfile; 3] = [NvProfile::ModelOpt, NvProfile::Mlx, NvProfile::Ggml];
/// NVFP4 layouts, `byte1 / 3 % 2`.
pub const NV_LAYOUTS: [NvLayout; 2] = [NvLayout::Planar, NvLayout::Ggml];
/// Block FP8 profiles, `byte1 % 2`.
pub const FP8_PROFILES: [Fp8Profile; 2] = [Fp8Profile::DeepSeek, Fp8Profile::Ue8m0];
/// The unquantized dtypes, in the order of byte 2.
pub const DTYPES: [&str; 3] = ["f32", "BF16", "F16"];
/// The code types of `narrow_scaled` / `dequantize_scaled`, `byte1 % 8`.
pub const CODES: [&str; 8] = [
    "F8E4M3",
    "F8E5M2",
    "F8E4M3FNUZ",
    "F8E5M2FNUZ",
    "F6E2M3",
    "F6E3M2",
    "F4E2M1",
    "F8E8M0",
];
/// Block FP8 tile rows, `byte12 % 8`.
const TILE_ROWS: [usize; 8] = [1, 2, 3, 128, 1, 4, 0, 1];

/// Scales (f32 bits), `byte14 % 16`: NVFP4 tensor scales (index 0: none given, the
/// profile's own; 1.0 when one is needed) and the scale of `narrow_scaled` /
/// `dequantize_scaled` (index 0: 1.0).
pub const SCALES: [u32; 16] = [
    0x3F80_0000, // (none) / 1.0
    0x3F80_0000, // 1.0
    0x4528_0000, // 2688
    0x39C3_0C31, // 1/2688
    0x3F00_0000, // 0.5
    0x3A43_0C31, // 4/2688
    0x0000_0000, // 0
    0xBF80_0000, // -1
    0x7FC0_0000, // NaN
    0x7F80_0000, // +Inf
    0x0DA2_4260, // 1e-30
    0x7F61_B1E6, // 3e38
    0x0000_0001, // smallest subnormal
    0x3DCC_CCCD, // 0.1
    0x43E0_0000, // 448
    0x3580_0000, // 2^-20
];

/// Interesting f32 values (bits) for the value tokens.
pub const TABLE: [u32; 60] = [
    0x0000_0000, // 0
    0x0000_0001, // smallest subnormal
    0x007F_FFFF, // largest subnormal
    0x0080_0000, // smallest normal
    0x0040_0000, // 2^-127: E8M0's smallest scale
    0x0020_0000, // 2^-128
    0x00C0_0000, // 1.5 * 2^-126
    0x3F80_0000, // 1
    0x3F00_0000, // 0.5
    0x3E80_0000, // 0.25
    0x3F40_0000, // 0.75
    0x3FC0_0000, // 1.5
    0x4000_0000, // 2
    0x4020_0000, // 2.5: E2M1 tie
    0x4040_0000, // 3
    0x4060_0000, // 3.5: E2M1 tie
    0x4080_0000, // 4
    0x40A0_0000, // 5: E2M1 tie
    0x40C0_0000, // 6: E2M1 max
    0x40E0_0000, // 7: E2M1 overflow tie
    0x40F0_0000, // 7.5: E2M3 max
    0x4100_0000, // 8
    0x41E0_0000, // 28: E3M2 max
    0x41F0_0000, // 30
    0x4200_0000, // 32
    0x43E0_0000, // 448: E4M3 max
    0x43E8_0000, // 464: E4M3 overflow tie
    0x43F0_0000, // 480: UE4M3 0xFF
    0x4400_0000, // 512
    0x4760_0000, // 57344: E5M2 max
    0x4770_0000, // 61440: E5M2 overflow tie
    0x4528_0000, // 2688 = 6 * 448
    0x7F7F_FFFF, // f32::MAX
    0x7F00_0000, // 2^127
    0x7E80_0000, // 2^126
    0x7F80_0000, // +Inf
    0x7FC0_0000, // quiet NaN
    0x7F80_0001, // signalling NaN
    0x7FFF_FFFF, // NaN, full payload
    0x38D1_B717, // 1e-4: DeepSeek's amax floor
    0x3DCC_CCCD, // 0.1
    0x3F7F_FFFF, // 1 - ulp
    0x3F80_0001, // 1 + ulp
    0x3EAA_AAAB, // 1/3
    0x4049_0FDB, // pi
    0x3C80_0000, // 2^-6: E4M3 smallest normal
    0x3B00_0000, // 2^-9: E4M3 smallest subnormal
    0x3780_0000, // 2^-16: E5M2 smallest subnormal
    0x3880_0000, // 2^-14
    0x3E00_0000, // 0.125
    0x3D80_0000, // 2^-4
    0x4B00_0000, // 2^23
    0x3A83_126F, // 0.001
    0x0100_0000, // 2^-125
    0x3FFF_FFFF, // 2 - ulp
    0x40BF_FFFF, // 6 - ulp
    0x43DF_FFFF, // 448 - ulp
    0x4150_0000, // 13
    0x3FA0_0000, // 1.25
    0x4110_0000, // 9
];

// ---------------------------------------------------------------------------------------------
// Input.

/// A parsed input: the header bytes and the payload.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// Header bytes (missing ones are zero).
    pub h: [u8; HEADER],
    /// Payload.
    pub payload: &'a [u8],
}

/// One buffer's length change, from bytes 7-9.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delta {
    /// The length the shape needs.
    None,
    /// One more.
    Plus1,
    /// One less.
    Minus1,
    /// One block more.
    PlusBlock,
    /// One block less.
    MinusBlock,
}

impl Delta {
    fn byte(self) -> u8 {
        match self {
            Delta::None => 0,
            Delta::Plus1 => 12,
            Delta::Minus1 => 13,
            Delta::PlusBlock => 14,
            Delta::MinusBlock => 15,
        }
    }

    fn parse(b: u8) -> Delta {
        match b % 16 {
            12 => Delta::Plus1,
            13 => Delta::Minus1,
            14 => Delta::PlusBlock,
            15 => Delta::MinusBlock,
            _ => Delta::None,
        }
    }

    /// `len` changed by this delta, with `block` the unit of a block change.
    fn apply(self, len: usize, block: usize) -> usize {
        let (up, by) = match self {
            Delta::None => return len,
            Delta::Plus1 => (true, 1),
            Delta::Minus1 => (false, 1),
            Delta::PlusBlock => (true, block.max(1)),
            Delta::MinusBlock => (false, block.max(1)),
        };
        if up {
            len + by
        } else {
            len.checked_sub(by).unwrap_or(len + by)
        }
    }
}

impl<'a> Input<'a> {
    /// Parses any byte string.
    pub fn parse(data: &'a [u8]) -> Input<'a> {
        let mut h = [0u8; HEADER];
        let n = data.len().min(HEADER);
        h[..n].copy_from_slice(&data[..n]);
        Input {
            h,
            payload: data.get(HEADER..).unwrap_or(&[]),
        }
    }

    /// Cuts the shape to at most 2 rows of 16 columns: what `tests/fuzz_replay.rs` runs
    /// under Miri, where every step is about a thousand times slower.
    pub fn shrink_for_miri(&mut self) {
        self.h[3] = self.rows().min(2) as u8;
        if self.cols() > 16 {
            (self.h[4], self.h[5]) = (16, 0);
        }
    }

    /// The operation.
    pub fn op(&self) -> Op {
        Op::ALL[usize::from(self.h[0]) % Op::ALL.len()]
    }

    /// Source dtype index into [`DTYPES`].
    pub fn src_type(&self) -> usize {
        usize::from(self.h[2] % 3)
    }

    /// Destination dtype index into [`DTYPES`].
    pub fn dst_type(&self) -> usize {
        usize::from(self.h[2] / 3 % 3)
    }

    /// Whether the `_uninit` variants run.
    pub fn uninit(&self) -> bool {
        self.h[2] / 9 % 2 == 1
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        usize::from(self.h[3]) % (MAX_ROWS + 1)
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        let (b4, b5) = (usize::from(self.h[4]), usize::from(self.h[5]));
        if b4 < 224 {
            b4 % 200
        } else {
            200 + ((b4 - 224) * 256 + b5) % (MAX_COLS - 199)
        }
    }

    /// Row stride.
    pub fn stride(&self) -> usize {
        let (c, b) = (self.cols(), usize::from(self.h[6]));
        match b {
            0..=191 => c,
            192..=239 => c + (b - 191),
            _ => c.saturating_sub(b - 239),
        }
    }

    /// The shape.
    pub fn shape(&self) -> Shape {
        Shape::matrix(self.rows(), self.cols()).with_stride(self.stride())
    }

    /// Length change of buffer `k` (0: data, 1: scales, 2: unquantized side).
    pub fn delta(&self, k: usize) -> Delta {
        Delta::parse(self.h[7 + k])
    }

    /// Tile of block FP8.
    pub fn tile(&self) -> (usize, usize) {
        let c = match self.h[13] {
            b @ 0..240 => usize::from(b % 48),
            _ => 128,
        };
        (TILE_ROWS[usize::from(self.h[12] % 8)], c)
    }

    /// The scale selector's value (f32 bits); index 0 is 1.0.
    pub fn scale(&self) -> u32 {
        SCALES[usize::from(self.h[14] % 16)]
    }

    /// The NVFP4 tensor scale given to `quantize` (`None` for index 0).
    pub fn tensor_scale(&self) -> Option<f32> {
        (!self.h[14].is_multiple_of(16)).then(|| f32::from_bits(self.scale()))
    }

    fn describe(&self) -> String {
        let op = self.op();
        let c = self.h[1];
        let config = match op {
            Op::MxQuantize | Op::MxDequantize => format!(
                "{:?} {:?} {:?}",
                MX_ELEMENTS[usize::from(c % 5)],
                MX_PROFILES[usize::from(c / 5 % 4)],
                MX_LAYOUTS[usize::from(c / 20 % 2)]
            ),
            Op::NvQuantize | Op::NvDequantize => format!(
                "{:?} {:?}, tensor scale {:?}",
                NV_PROFILES[usize::from(c % 3)],
                NV_LAYOUTS[usize::from(c / 3 % 2)],
                self.tensor_scale()
            ),
            Op::Fp8Quantize | Op::Fp8Dequantize => {
                format!(
                    "{:?}, tile {:?}",
                    FP8_PROFILES[usize::from(c % 2)],
                    self.tile()
                )
            }
            Op::Scaled => format!(
                "{}, scale {:e}",
                CODES[usize::from(c % 8)],
                f32::from_bits(self.scale())
            ),
            _ => String::new(),
        };
        format!(
            "{op:?} [{config}], {} -> {}{}, shape {}x{} stride {}, deltas data {:?} scales {:?} values {:?}, offset selectors {}/{}",
            DTYPES[self.src_type()],
            DTYPES[self.dst_type()],
            if self.uninit() { " (uninit)" } else { "" },
            self.rows(),
            self.cols(),
            self.stride(),
            self.delta(0),
            self.delta(1),
            self.delta(2),
            self.h[10],
            self.h[11],
        )
    }
}

/// A readable description of an input, for seeds and reports.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Operation.
    pub op: Op,
    /// Byte 1 (see the table).
    pub config: u8,
    /// Source dtype index.
    pub src: u8,
    /// Destination dtype index.
    pub dst: u8,
    /// `_uninit` variants.
    pub uninit: bool,
    /// Rows (at most [`MAX_ROWS`]).
    pub rows: usize,
    /// Columns (at most [`MAX_COLS`]).
    pub cols: usize,
    /// Stride minus cols (positive: up to 48; negative: down to −16).
    pub stride_delta: i32,
    /// Length changes of data, scales and the unquantized side.
    pub deltas: [Delta; 3],
    /// Offset selectors.
    pub offsets: (u8, u8),
    /// Bytes 12 and 13.
    pub tile: (u8, u8),
    /// Byte 14.
    pub scale: u8,
    /// Payload.
    pub payload: Vec<u8>,
}

impl Spec {
    /// A valid input of `op` with everything else zero.
    pub fn new(op: Op, config: u8, rows: usize, cols: usize) -> Spec {
        Spec {
            op,
            config,
            src: 0,
            dst: 0,
            uninit: false,
            rows,
            cols,
            stride_delta: 0,
            deltas: [Delta::None; 3],
            offsets: (0, 0),
            tile: (0, 0),
            scale: 0,
            payload: Vec::new(),
        }
    }

    /// The input bytes; `Input::parse` gives back this spec.
    pub fn encode(&self) -> Vec<u8> {
        assert!(self.rows <= MAX_ROWS && self.cols <= MAX_COLS);
        let (b4, b5) = if self.cols < 200 {
            (self.cols as u8, 0)
        } else {
            let v = self.cols - 200;
            ((224 + v / 256) as u8, (v % 256) as u8)
        };
        let b6 = match self.stride_delta {
            0 => 0,
            d @ 1..=48 => (191 + d) as u8,
            d @ -16..=-1 => (239 - d) as u8,
            d => panic!("stride delta {d} out of range"),
        };
        let mut out = vec![
            self.op.index(),
            self.config,
            self.src + 3 * self.dst + 9 * u8::from(self.uninit),
            self.rows as u8,
            b4,
            b5,
            b6,
            self.deltas[0].byte(),
            self.deltas[1].byte(),
            self.deltas[2].byte(),
            self.offsets.0,
            self.offsets.1,
            self.tile.0,
            self.tile.1,
            self.scale,
        ];
        out.extend_from_slice(&self.payload);
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Types.

/// An unquantized dtype: `f32`, `BF16`, `F16`.
pub trait Wide: BlockSource + BlockDest + Val {
    /// Its name.
    const NAME: &'static str;
    /// Nearest value (ties to even, overflow to ±Inf).
    fn from_f32_ne(x: f32) -> Self;
    /// The value with these bits (the low 16 for the half types).
    fn from_bits32(bits: u32) -> Self;
    /// Its value as f32 (exact).
    fn f32(self) -> f32;
}

impl Wide for f32 {
    const NAME: &'static str = "f32";
    fn from_f32_ne(x: f32) -> f32 {
        x
    }
    fn from_bits32(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
    fn f32(self) -> f32 {
        self
    }
}

macro_rules! wide_half {
    ($t:ident) => {
        impl Wide for $t {
            const NAME: &'static str = stringify!($t);
            fn from_f32_ne(x: f32) -> $t {
                $t::from_f32_with(x, Overflow::NonSaturating)
            }
            fn from_bits32(bits: u32) -> $t {
                $t::from_bits(bits as u16)
            }
            fn f32(self) -> f32 {
                self.to_f32()
            }
        }
    };
}
wide_half!(BF16);
wide_half!(F16);

/// Whether the little-endian element `b` of `W` is a NaN.
fn is_nan<W: Wide>(b: &[u8]) -> bool {
    let mut v = [0u8; 4];
    v[..b.len()].copy_from_slice(b);
    W::from_bits32(u32::from_le_bytes(v)).f32().is_nan()
}

/// Little-endian bytes of a slice of elements.
fn le<T: Val>(v: &[T]) -> Vec<u8> {
    let s = size_of::<T>();
    let mut out = Vec::with_capacity(std::mem::size_of_val(v));
    for x in v {
        out.extend_from_slice(&x.bits().to_le_bytes()[..s]);
    }
    out
}

/// A code type of `narrow_scaled`.
trait Code: ScaledCode + Val {
    const NAME: &'static str;
    fn from_f64_default(x: f64) -> Self;
    /// The value of the code's low bits (fp6 and fp4 codes ignore the others).
    fn value(self) -> f32;
}

macro_rules! code {
    ($($t:ident $mask:literal),*) => {$(
        impl Code for $t {
            const NAME: &'static str = stringify!($t);
            fn from_f64_default(x: f64) -> $t {
                $t::from_f64(x)
            }
            fn value(self) -> f32 {
                $t::from_bits(self.to_bits() & $mask).to_f32()
            }
        }
    )*};
}
code!(F8E4M3 0xFF, F8E5M2 0xFF, F8E4M3FNUZ 0xFF, F8E5M2FNUZ 0xFF, F6E2M3 0x3F, F6E3M2 0x3F, F4E2M1 0x0F, F8E8M0 0xFF);

// ---------------------------------------------------------------------------------------------
// Payload.

/// `2^e` as f64 for `-1022 <= e <= 1023`, from its bits (exact, also under Miri).
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// `n` values from the value tokens of `payload` (see the input format), repeated; a fixed
/// pseudo-random pattern if it holds no token.
pub fn values<W: Wide>(payload: &[u8], n: usize) -> Vec<W> {
    let mut out = Vec::with_capacity(n);
    if payload.len() < 2 {
        let mut s: u32 = 0x9E37_79B9;
        while out.len() < n {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            out.push(W::from_bits32(s));
        }
        return out;
    }
    let at = |i: usize| payload[i % payload.len()];
    let mut pos = 0;
    while out.len() < n {
        let k = at(pos);
        if k >= 0xF0 {
            let bits = u32::from_le_bytes([at(pos + 1), at(pos + 2), at(pos + 3), at(pos + 4)]);
            out.push(W::from_bits32(bits));
            pos += 5;
            continue;
        }
        let e = at(pos + 1);
        pos += 2;
        let mut b = TABLE[usize::from(k >> 1) % TABLE.len()];
        if (1..0x7F80_0000).contains(&b) {
            match e & 3 {
                1 => b += 1,
                2 => b -= 1,
                _ => {}
            }
            let shift = i32::from((e as i8) >> 2);
            if shift != 0 && b < 0x7F80_0000 {
                b = ((f64::from(f32::from_bits(b)) * pow2(shift)) as f32).to_bits();
            }
        }
        if k & 1 == 1 {
            b |= 0x8000_0000;
        }
        out.push(W::from_f32_ne(f32::from_bits(b)));
    }
    out
}

/// `n` raw bytes: the payload from `start` on, repeated (a fixed pattern if it is empty).
fn raw_bytes(payload: &[u8], start: usize, n: usize) -> Vec<u8> {
    if payload.is_empty() {
        return (0..n)
            .map(|i| (i as u8).wrapping_mul(0x9D) ^ 0x3C)
            .collect();
    }
    (0..n)
        .map(|i| payload[(start + i) % payload.len()])
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Expected errors.

/// An error a call may return.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// `BlockLength { buffer, expected, given }`.
    Len(&'static str, usize, usize),
    /// `BlockShape { rows, cols, reason }` with a reason containing this text.
    Shape(usize, usize, &'static str),
    /// `BackendUnavailable`.
    Backend(Backend),
}

impl Want {
    fn matches(&self, e: &Error) -> bool {
        match (*self, *e) {
            (
                Want::Len(b, x, g),
                Error::BlockLength {
                    buffer,
                    expected,
                    given,
                },
            ) => (b, x, g) == (buffer, expected, given),
            (Want::Shape(r, c, what), Error::BlockShape { rows, cols, reason }) => {
                (r, c) == (rows, cols) && reason.contains(what)
            }
            (Want::Backend(b), Error::BackendUnavailable { backend }) => b == backend,
            _ => false,
        }
    }
}

/// `BlockLength` if `given != expected`.
fn len_err(out: &mut Vec<Want>, buffer: &'static str, expected: usize, given: usize) {
    if expected != given {
        out.push(Want::Len(buffer, expected, given));
    }
}

/// What a call must return: `Ok` if `errs` is empty, else one of them.
fn fmt_want(errs: &[Want]) -> String {
    if errs.is_empty() {
        "Ok".into()
    } else {
        format!("one of {errs:?}")
    }
}

// ---------------------------------------------------------------------------------------------
// The guarded call.

/// Context of the failure messages.
struct Ctx<'a> {
    input: &'a Input<'a>,
    hooks: Hooks,
}

impl Ctx<'_> {
    fn fail(&self, api: &str, msg: String) -> String {
        format!(
            "vcvt block fuzz failure in `{api}`\n  {}\n  {msg}\n  (save the input under fuzz/regressions/block/ and run `cargo test --test fuzz_replay` to replay it)",
            self.input.describe()
        )
    }
}

/// An output buffer of a call: `len` bytes at byte offset `off` of a 64-aligned base, with
/// (if `rows` is set) only the rows of a strided destination written: `(rows, row bytes,
/// stride bytes)`.
#[derive(Clone, Copy)]
struct Out {
    name: &'static str,
    len: usize,
    off: usize,
    rows: Option<(usize, usize, usize)>,
}

impl Out {
    fn bytes(name: &'static str, len: usize, off: usize) -> Out {
        Out {
            name,
            len,
            off,
            rows: None,
        }
    }

    fn written(&self, i: usize) -> bool {
        match self.rows {
            None => true,
            Some((rows, row, _)) if rows <= 1 => i < row * rows,
            Some((rows, row, stride)) => i / stride < rows && i % stride < row,
        }
    }
}

/// What a successful call produced: its return value (f32 bits, or 0) and the output bytes.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Res {
    ret: u32,
    bufs: Vec<Vec<u8>>,
}

/// A call on a backend (`None`: without `.on`) over the output regions.
type BackendCall<'a> = dyn FnMut(Option<Backend>, &[*mut u8]) -> Result<u32, Error> + 'a;

type Call<'a> = dyn FnMut(&[*mut u8]) -> Result<u32, Error> + 'a;

/// Runs `call` twice over guarded outputs with two canary fills and checks it against
/// `errs` (see the module docs); `Ok(None)` for a call that failed as it should.
fn guarded(
    ctx: &Ctx,
    api: &str,
    outs: &[Out],
    errs: &[Want],
    call: &mut Call,
) -> Result<Option<Res>, String> {
    let fail = |msg: String| Err(ctx.fail(api, msg));
    let mut bufs: Vec<DstBuf> = outs
        .iter()
        .map(|o| DstBuf::new(o.off, o.len, ctx.hooks))
        .collect();
    let mut runs: [Vec<Vec<u8>>; 2] = [Vec::new(), Vec::new()];
    let mut rets = [0u32; 2];
    let mut failed = false;
    for run in 0..2 {
        for b in &mut bufs {
            b.fill(run);
            b.arm();
        }
        let ptrs: Vec<*mut u8> = bufs.iter().map(DstBuf::region).collect();
        let got = call(&ptrs);
        for b in &bufs {
            b.disarm();
        }
        match &got {
            Ok(_) if errs.is_empty() => {}
            Err(e) if errs.iter().any(|w| w.matches(e)) => failed = true,
            _ => return fail(format!("returned {got:?}, expected {}", fmt_want(errs))),
        }
        for (o, b) in outs.iter().zip(&bufs) {
            let all = b.all();
            let end = b.start + b.len;
            let outside =
                first_changed(all, 0..b.start, run).or(first_changed(all, end..all.len(), run));
            if let Some(i) = outside {
                return fail(format!(
                    "wrote outside `{}` ({} bytes): byte {} relative to its start changed from {:#04x} to {:#04x}",
                    o.name,
                    o.len,
                    i as isize - b.start as isize,
                    canary(i, run),
                    all[i]
                ));
            }
            let region = &all[b.start..end];
            for (i, &x) in region.iter().enumerate() {
                if (failed || !o.written(i)) && x != canary(b.start + i, run) {
                    let why = if failed {
                        "although the call failed"
                    } else {
                        "in a gap between rows, which the call must leave alone"
                    };
                    return fail(format!(
                        "byte {i} of `{}` changed from {:#04x} to {x:#04x} {why}",
                        o.name,
                        canary(b.start + i, run)
                    ));
                }
            }
            runs[run].push(region.to_vec());
        }
        rets[run] = got.unwrap_or(0);
    }
    if failed {
        return Ok(None);
    }
    for (k, o) in outs.iter().enumerate() {
        let (a, b) = (&runs[0][k], &runs[1][k]);
        if let Some(i) = (0..o.len).find(|&i| o.written(i) && a[i] != b[i]) {
            return fail(format!(
                "byte {i} of `{}` ({} bytes) was not written: {:#04x} after canary run 0, {:#04x} after run 1",
                o.name, o.len, a[i], b[i]
            ));
        }
    }
    if rets[0] != rets[1] {
        return fail(format!(
            "returned {:#x} then {:#x} for the same call",
            rets[0], rets[1]
        ));
    }
    let [bufs, _] = runs;
    Ok(Some(Res { ret: rets[0], bufs }))
}

/// The backends to compare: every available one, Scalar first, then `None` (no `.on`).
fn backends() -> Vec<Option<Backend>> {
    let mut v: Vec<Option<Backend>> = Backend::available()
        .filter(|&b| b != Backend::Scalar)
        .map(Some)
        .collect();
    v.insert(0, Some(Backend::Scalar));
    v.push(None);
    v
}

fn unavailable() -> impl Iterator<Item = Backend> {
    Backend::ALL.iter().copied().filter(|b| !b.is_available())
}

fn on_name(b: Option<Backend>) -> String {
    match b {
        Some(b) => format!(".on(Backend::{b:?})"),
        None => "(active backend)".into(),
    }
}

/// Runs a call on every backend and every unavailable one; returns Scalar's result, or
/// `None` when the call must fail (`errs` not empty).
fn every_backend(
    ctx: &Ctx,
    api: &str,
    outs: &[Out],
    errs: &[Want],
    call: &mut BackendCall,
) -> Result<Option<Res>, String> {
    let mut reference: Option<Res> = None;
    for b in backends() {
        let name = format!("{api}{}", on_name(b));
        let got = guarded(ctx, &name, outs, errs, &mut |p| call(b, p))?;
        match (&reference, got) {
            (_, None) => {}
            (None, Some(r)) => reference = Some(r),
            (Some(want), Some(got)) => {
                if got.ret != want.ret {
                    return Err(ctx.fail(
                        &name,
                        format!("returned {:#x}, Backend::Scalar {:#x}", got.ret, want.ret),
                    ));
                }
                for (k, o) in outs.iter().enumerate() {
                    same_bytes(
                        ctx,
                        &name,
                        o.name,
                        &got.bufs[k],
                        &want.bufs[k],
                        "Backend::Scalar",
                    )?;
                }
            }
        }
    }
    for b in unavailable() {
        let mut e = errs.to_vec();
        e.push(Want::Backend(b));
        let name = format!("{api}.on(Backend::{b:?}) (unavailable)");
        guarded(ctx, &name, outs, &e, &mut |p| call(Some(b), p))?;
    }
    Ok(reference)
}

/// `got == want`, or a message naming the first differing byte.
fn same_bytes(
    ctx: &Ctx,
    api: &str,
    what: &str,
    got: &[u8],
    want: &[u8],
    reference: &str,
) -> Result<(), String> {
    if got == want {
        return Ok(());
    }
    let msg = match (0..got.len().min(want.len())).find(|&i| got[i] != want[i]) {
        Some(i) => format!(
            "`{what}` byte {i} is {:#04x}, {reference} gives {:#04x} ({} of {} bytes differ)",
            got[i],
            want[i],
            (0..got.len().min(want.len()))
                .filter(|&j| got[j] != want[j])
                .count(),
            got.len()
        ),
        None => format!(
            "`{what}` has {} bytes, {reference} gives {}",
            got.len(),
            want.len()
        ),
    };
    Err(ctx.fail(api, msg))
}

/// Values of `W` (little-endian bytes) equal, or both NaN.
fn same_values<W: Wide>(
    ctx: &Ctx,
    api: &str,
    got: &[u8],
    want: &[u8],
    reference: &str,
) -> Result<(), String> {
    let s = size_of::<W>();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.chunks(s).zip(want.chunks(s)).enumerate() {
        if g != w && !(is_nan::<W>(g) && is_nan::<W>(w)) {
            return Err(ctx.fail(
                api,
                format!(
                    "value {i} is {} ({}), {reference} gives {}",
                    hex(g),
                    W::NAME,
                    hex(w)
                ),
            ));
        }
    }
    Ok(())
}

/// Reinterprets a guarded region as a typed slice.
///
/// # Safety
/// `p` must be valid for `n` elements of `T`, aligned, and used by nothing else meanwhile.
unsafe fn slice_at<'a, T>(p: *mut u8, n: usize) -> &'a mut [T] {
    debug_assert!(p.cast::<T>().is_aligned());
    // SAFETY: as the caller promises; the region is initialized (canary bytes) and every bit
    // pattern is a valid `T` (u8, f32, BF16, F16 or `MaybeUninit` of them).
    unsafe { std::slice::from_raw_parts_mut(p.cast::<T>(), n) }
}

/// The offset of output buffer `k`, from selector `sel`, as a multiple of `size`.
fn out_off(sel: u8, k: usize, size: usize) -> usize {
    (usize::from(sel) + 7 * k) % (BASE_ALIGN / size) * size
}

fn values_out<W: Wide>(name: &'static str, shape: Shape, len: usize, off: usize) -> Out {
    let s = size_of::<W>();
    Out {
        name,
        len: len * s,
        off,
        rows: Some((shape.rows(), shape.cols() * s, shape.stride().max(1) * s)),
    }
}

/// The length `shape` needs on the unquantized side.
fn shape_len(shape: Shape) -> usize {
    if shape.rows() == 0 || shape.cols() == 0 {
        0
    } else {
        (shape.rows() - 1) * shape.stride() + shape.cols()
    }
}

/// A stride error, if the shape has one.
fn stride_err(shape: Shape, out: &mut Vec<Want>) {
    if shape.rows() > 1 && shape.stride() < shape.cols() {
        out.push(Want::Shape(shape.rows(), shape.cols(), "stride"));
    }
}

// ---------------------------------------------------------------------------------------------
// Dispatch.

/// Runs one parsed input; returns a description of the first failure.
pub fn try_run_input(input: &Input, hooks: Hooks) -> Result<(), String> {
    let ctx = Ctx { input, hooks };
    macro_rules! with_wide {
        ($i:expr, $t:ident => $e:expr) => {
            match $i {
                0 => {
                    type $t = f32;
                    $e
                }
                1 => {
                    type $t = BF16;
                    $e
                }
                _ => {
                    type $t = F16;
                    $e
                }
            }
        };
    }
    let (s, d) = (input.src_type(), input.dst_type());
    match input.op() {
        Op::MxQuantize => with_wide!(s, S => with_wide!(d, D => mx_quantize::<S, D>(&ctx))),
        Op::MxDequantize => with_wide!(d, D => mx_dequantize_input::<D>(&ctx)),
        Op::NvQuantize => with_wide!(s, S => with_wide!(d, D => nv_quantize::<S, D>(&ctx))),
        Op::NvDequantize => with_wide!(d, D => nv_dequantize_input::<D>(&ctx)),
        Op::Fp8Quantize => with_wide!(s, S => with_wide!(d, D => fp8_quantize::<S, D>(&ctx))),
        Op::Fp8Dequantize => with_wide!(d, D => fp8_dequantize_input::<D>(&ctx)),
        Op::PlanarToGgml => repack(&ctx, true),
        Op::GgmlToPlanar => repack(&ctx, false),
        Op::Amax => with_wide!(s, S => amax::<S>(&ctx)),
        Op::Scaled => {
            macro_rules! with_code {
                ($($k:literal $c:ident),*) => {
                    match input.h[1] % 8 {
                        $($k => {
                            let codes = with_wide!(s, S => scaled_narrow::<S, $c>(&ctx))?;
                            with_wide!(d, D => scaled_dequantize::<$c, D>(&ctx, &codes))
                        })*
                        _ => unreachable!(),
                    }
                };
            }
            with_code!(0 F8E4M3, 1 F8E5M2, 2 F8E4M3FNUZ, 3 F8E5M2FNUZ, 4 F6E2M3, 5 F6E3M2, 6 F4E2M1, 7 F8E8M0)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// MX.

#[derive(Clone, Copy, Debug)]
struct MxCfg {
    element: MxElement,
    profile: MxProfile,
    layout: MxLayout,
}

impl MxCfg {
    fn parse(c: u8) -> MxCfg {
        MxCfg {
            element: MX_ELEMENTS[usize::from(c % 5)],
            profile: MX_PROFILES[usize::from(c / 5 % 4)],
            layout: MX_LAYOUTS[usize::from(c / 20 % 2)],
        }
    }

    fn mx(self, b: Option<Backend>) -> Mx {
        let m = Mx::new(self.element)
            .profile(self.profile)
            .layout(self.layout);
        match b {
            Some(b) => m.on(b),
            None => m,
        }
    }

    fn ggml(self) -> bool {
        self.layout == MxLayout::Ggml
    }

    /// The combination and shape errors (from the docs of `MxProfile` and `MxLayout`).
    fn shape_errs(self, shape: Shape) -> Vec<Want> {
        let (r, c) = (shape.rows(), shape.cols());
        let mut e = Vec::new();
        stride_err(shape, &mut e);
        let fp4 = self.element == MxElement::E2M1;
        if self.profile == MxProfile::Ggml && !fp4 {
            e.push(Want::Shape(r, c, "Ggml profile"));
        }
        if self.profile == MxProfile::Mlx && !(fp4 || self.element == MxElement::E4M3) {
            e.push(Want::Shape(r, c, "Mlx profile"));
        }
        if self.ggml() && !fp4 {
            e.push(Want::Shape(r, c, "block_mxfp4"));
        }
        if self.ggml() && !c.is_multiple_of(32) {
            e.push(Want::Shape(r, c, "multiple of 32"));
        }
        e
    }

    /// Data and scale bytes a valid shape needs (planar: a row is `row_bytes(cols)` codes
    /// and `cols.div_ceil(32)` scales; ggml: 17 bytes per block of 32), and the byte size of
    /// one block in each.
    fn lens(self, shape: Shape) -> (usize, usize, usize) {
        let (r, c) = (shape.rows(), shape.cols());
        if self.ggml() {
            (r * (c / 32) * 17, 0, 17)
        } else {
            (
                r * self.element.row_bytes(c),
                r * c.div_ceil(32),
                self.element.row_bytes(32),
            )
        }
    }
}

/// `Mx::quantize(_uninit)` of payload values.
fn mx_quantize<S: Wide, D: Wide>(ctx: &Ctx) -> Result<(), String> {
    let inp = ctx.input;
    let cfg = MxCfg::parse(inp.h[1]);
    let shape = inp.shape();
    let (data_need, scales_need, blk) = cfg.lens(shape);
    let data_len = inp.delta(0).apply(data_need, blk);
    let scales_len = inp.delta(1).apply(scales_need, 1);
    let src_need = shape_len(shape);
    let src_len = inp.delta(2).apply(src_need, 32);
    let vals: Vec<S> = values(inp.payload, src_len);
    let src_buf = SrcBuf::new(&le(&vals), typed_off(inp.h[10], size_of::<S>()), ctx.hooks);
    let src: &[S] = src_buf.typed();
    let mut errs = cfg.shape_errs(shape);
    if errs.is_empty() {
        len_err(&mut errs, "data", data_need, data_len);
        len_err(&mut errs, "scales", scales_need, scales_len);
        len_err(&mut errs, "src", src_need, src_len);
    }
    let outs = [
        Out::bytes("data", data_len, out_off(inp.h[11], 0, 1)),
        Out::bytes("scales", scales_len, out_off(inp.h[11], 1, 1)),
    ];
    let uninit = inp.uninit();
    let api = if uninit {
        "Mx::quantize_uninit"
    } else {
        "Mx::quantize"
    };
    let res = every_backend(ctx, api, &outs, &errs, &mut |b, p| {
        // SAFETY: `guarded` passes the two regions of `outs`, byte buffers.
        let (d, s) = unsafe {
            (
                slice_at::<u8>(p[0], data_len),
                slice_at::<u8>(p[1], scales_len),
            )
        };
        let mx = cfg.mx(b);
        if uninit {
            // SAFETY: `MaybeUninit<u8>` has the layout of `u8`.
            let (d, s) = unsafe {
                (
                    slice_at::<MaybeUninit<u8>>(p[0], data_len),
                    slice_at::<MaybeUninit<u8>>(p[1], scales_len),
                )
            };
            mx.quantize_uninit(src, shape, d, s).map(|()| 0)
        } else {
            mx.quantize(src, shape, d, s).map(|()| 0)
        }
    })?;
    let Some(res) = res else { return Ok(()) };
    if shape.is_empty() {
        // Nothing converted (rows of zero columns): the result was checked above.
        return Ok(());
    }
    let (data, scales) = (&res.bufs[0], &res.bufs[1]);
    let ok = |r: Result<(Vec<u8>, Vec<u8>), Error>, api: &str| {
        r.map_err(|e| ctx.fail(api, format!("returned Err({e:?}) on a valid call")))
    };

    // Each block alone.
    let (c, mx) = (shape.cols(), cfg.mx(None));
    let nb = c.div_ceil(32);
    for r in 0..shape.rows() {
        for b in 0..nb {
            let (lo, hi) = (32 * b, (32 * b + 32).min(c));
            let blk = &src[r * shape.stride() + lo..r * shape.stride() + hi];
            let api = format!("Mx::quantize (block {b} of row {r} alone)");
            let (d, s) = ok(mx_quant(mx, blk, Shape::vector(hi - lo)), &api)?;
            let (want_d, want_s): (&[u8], &[u8]) = if cfg.ggml() {
                let i = (r * nb + b) * 17;
                (&data[i..i + 17], &[])
            } else {
                let rb = cfg.element.row_bytes(c);
                let i = r * rb + cfg.element.row_bytes(lo);
                (
                    &data[i..r * rb + cfg.element.row_bytes(hi)],
                    &scales[r * nb + b..r * nb + b + 1],
                )
            };
            same_bytes(ctx, &api, "data", &d, want_d, "the whole tensor")?;
            same_bytes(ctx, &api, "scales", &s, want_s, "the whole tensor")?;
        }
    }
    // The spare high nibble of an odd row of packed FP4 is zero.
    if cfg.element == MxElement::E2M1 && !cfg.ggml() && c % 2 == 1 {
        let rb = c.div_ceil(2);
        if let Some(r) = (0..shape.rows()).find(|r| data[r * rb + rb - 1] & 0xF0 != 0) {
            return Err(ctx.fail(
                api,
                format!("the spare high nibble of row {r}'s last byte is not zero"),
            ));
        }
    }
    // The source dtype: every profile but Mlx computes with the f32 values.
    if S::NAME != "f32" && cfg.profile != MxProfile::Mlx {
        let wide: Vec<f32> = src.iter().map(|x| x.f32()).collect();
        let api = "Mx::quantize (the f32 widening of the source)";
        let (d, s) = ok(mx_quant(mx, &wide, shape), api)?;
        same_bytes(ctx, api, "data", &d, data, S::NAME)?;
        same_bytes(ctx, api, "scales", &s, scales, S::NAME)?;
    }
    // The ggml layout holds the planar codes and scales, repacked.
    if cfg.ggml() {
        let planar = cfg.mx(None).layout(MxLayout::Planar);
        let api = "Mx::quantize (planar layout)";
        let (d, s) = ok(mx_quant(planar, src, shape), api)?;
        let mut g = vec![0u8; data.len()];
        block::mxfp4_planar_to_ggml(&d, &s, &mut g)
            .map_err(|e| ctx.fail("mxfp4_planar_to_ggml", format!("{e:?}")))?;
        same_bytes(
            ctx,
            api,
            "data",
            data,
            &g,
            "mxfp4_planar_to_ggml of the planar layout",
        )?;
    }
    mx_dequantize::<D>(ctx, cfg, shape, data, scales, [Delta::None; 3])
}

/// `Mx::quantize` into new buffers.
fn mx_quant<T: BlockSource>(mx: Mx, src: &[T], shape: Shape) -> Result<(Vec<u8>, Vec<u8>), Error> {
    let mut d = vec![0u8; mx.data_len(shape)?];
    let mut s = vec![0u8; mx.scales_len(shape)?];
    mx.quantize(src, shape, &mut d, &mut s)?;
    Ok((d, s))
}

/// `Mx::dequantize(_uninit)` of payload bytes.
fn mx_dequantize_input<D: Wide>(ctx: &Ctx) -> Result<(), String> {
    let inp = ctx.input;
    let cfg = MxCfg::parse(inp.h[1]);
    let shape = inp.shape();
    let (data_need, scales_need, blk) = cfg.lens(shape);
    let data = raw_bytes(inp.payload, 0, inp.delta(0).apply(data_need, blk));
    let half = inp.payload.len() / 2;
    let scales = raw_bytes(inp.payload, half, inp.delta(1).apply(scales_need, 1));
    mx_dequantize::<D>(
        ctx,
        cfg,
        shape,
        &data,
        &scales,
        [inp.delta(0), inp.delta(1), inp.delta(2)],
    )
}

fn mx_dequantize<D: Wide>(
    ctx: &Ctx,
    cfg: MxCfg,
    shape: Shape,
    data: &[u8],
    scales: &[u8],
    deltas: [Delta; 3],
) -> Result<(), String> {
    let inp = ctx.input;
    let (data_need, scales_need, _) = cfg.lens(shape);
    let dst_need = shape_len(shape);
    let dst_len = deltas[2].apply(dst_need, 32);
    let mut errs = cfg.shape_errs(shape);
    if errs.is_empty() {
        len_err(&mut errs, "data", data_need, data.len());
        len_err(&mut errs, "scales", scales_need, scales.len());
        len_err(&mut errs, "dst", dst_need, dst_len);
    }
    let data_buf = SrcBuf::new(data, usize::from(inp.h[10]) % BASE_ALIGN, ctx.hooks);
    let scales_buf = SrcBuf::new(scales, usize::from(inp.h[10] / 3) % BASE_ALIGN, ctx.hooks);
    let (data, scales) = (data_buf.bytes(), scales_buf.bytes());
    let ds = size_of::<D>();
    let outs = [values_out::<D>(
        "dst",
        shape,
        dst_len,
        out_off(inp.h[11], 2, ds),
    )];
    let uninit = inp.uninit();
    let api = if uninit {
        "Mx::dequantize_uninit"
    } else {
        "Mx::dequantize"
    };
    let res = every_backend(ctx, api, &outs, &errs, &mut |b, p| {
        let mx = cfg.mx(b);
        if uninit {
            // SAFETY: the region of `outs[0]`, aligned for `D` (offset a multiple of its size).
            let d = unsafe { slice_at::<MaybeUninit<D>>(p[0], dst_len) };
            mx.dequantize_uninit(data, scales, shape, d).map(|()| 0)
        } else {
            // SAFETY: as above.
            let d = unsafe { slice_at::<D>(p[0], dst_len) };
            mx.dequantize(data, scales, shape, d).map(|()| 0)
        }
    })?;
    let Some(res) = res else { return Ok(()) };
    if shape.is_empty() {
        // Nothing converted (rows of zero columns): the result was checked above.
        return Ok(());
    }
    let out = &res.bufs[0];
    let deq = |mx: Mx, data: &[u8], scales: &[u8], shape: Shape| -> Result<Vec<u8>, String> {
        let mut v = vec![D::from_bits32(0); shape_len(shape)];
        mx.dequantize(data, scales, shape, &mut v)
            .map_err(|e| ctx.fail(api, format!("returned Err({e:?}) on a valid call")))?;
        Ok(le(&v))
    };
    // The values of the shape's rows, packed.
    let (c, mx) = (shape.cols(), cfg.mx(None));
    let rows_of = |v: &[u8]| -> Vec<u8> {
        let mut o = Vec::new();
        for r in 0..shape.rows() {
            o.extend_from_slice(&v[r * shape.stride() * ds..(r * shape.stride() + c) * ds]);
        }
        o
    };
    // Each block alone.
    let nb = c.div_ceil(32);
    for r in 0..shape.rows() {
        for b in 0..nb {
            let (lo, hi) = (32 * b, (32 * b + 32).min(c));
            let (d, s): (&[u8], &[u8]) = if cfg.ggml() {
                let i = (r * nb + b) * 17;
                (&data[i..i + 17], &[])
            } else {
                let rb = cfg.element.row_bytes(c);
                (
                    &data[r * rb + cfg.element.row_bytes(lo)..r * rb + cfg.element.row_bytes(hi)],
                    &scales[r * nb + b..r * nb + b + 1],
                )
            };
            let api = format!("Mx::dequantize (block {b} of row {r} alone)");
            let got = deq(mx, d, s, Shape::vector(hi - lo))?;
            let i = (r * shape.stride() + lo) * ds;
            same_bytes(
                ctx,
                &api,
                "dst",
                &got,
                &out[i..i + (hi - lo) * ds],
                "the whole tensor",
            )?;
        }
    }
    // The spare high nibble of an odd row of packed FP4 is ignored.
    if cfg.element == MxElement::E2M1 && !cfg.ggml() && c % 2 == 1 && shape.rows() > 0 {
        let rb = c.div_ceil(2);
        let mut dirty = data.to_vec();
        for r in 0..shape.rows() {
            dirty[r * rb + rb - 1] ^= 0xF0;
        }
        let api = "Mx::dequantize (spare high nibbles flipped)";
        let got = deq(mx, &dirty, scales, shape)?;
        same_bytes(
            ctx,
            api,
            "dst",
            &rows_of(&got),
            &rows_of(out),
            "the clean bytes",
        )?;
    }
    // One rounding of the exact value: the f32 result narrowed.
    if D::NAME != "f32" && cfg.profile != MxProfile::Mlx {
        let api = "Mx::dequantize to f32, narrowed";
        let mut v = vec![0f32; shape_len(shape)];
        mx.dequantize(data, scales, shape, &mut v)
            .map_err(|e| ctx.fail(api, format!("returned Err({e:?}) on a valid call")))?;
        let narrowed: Vec<D> = v.iter().map(|&x| D::from_f32_ne(x)).collect();
        same_values::<D>(
            ctx,
            api,
            &rows_of(out),
            &rows_of(&le(&narrowed)),
            "f32 narrowed",
        )?;
    }
    // The ggml layout holds the planar layout, repacked.
    if cfg.ggml() {
        let n = data.len() / 17;
        let (mut blocks, mut sc) = (vec![0u8; 16 * n], vec![0u8; n]);
        block::mxfp4_ggml_to_planar(data, &mut blocks, &mut sc)
            .map_err(|e| ctx.fail("mxfp4_ggml_to_planar", format!("{e:?}")))?;
        let api = "Mx::dequantize (planar layout of the repacked bytes)";
        let got = deq(mx.layout(MxLayout::Planar), &blocks, &sc, shape)?;
        same_bytes(
            ctx,
            api,
            "dst",
            &rows_of(&got),
            &rows_of(out),
            "the ggml layout",
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// NVFP4.

#[derive(Clone, Copy, Debug)]
struct NvCfg {
    profile: NvProfile,
    layout: NvLayout,
}

impl NvCfg {
    fn parse(c: u8) -> NvCfg {
        NvCfg {
            profile: NV_PROFILES[usize::from(c % 3)],
            layout: NV_LAYOUTS[usize::from(c / 3 % 2)],
        }
    }

    fn nv(self, b: Option<Backend>) -> Nvfp4 {
        let n = Nvfp4::new().profile(self.profile).layout(self.layout);
        match b {
            Some(b) => n.on(b),
            None => n,
        }
    }

    fn ggml(self) -> bool {
        self.layout == NvLayout::Ggml
    }

    fn shape_errs(self, shape: Shape) -> Vec<Want> {
        let mut e = Vec::new();
        stride_err(shape, &mut e);
        if self.ggml() && !shape.cols().is_multiple_of(64) {
            e.push(Want::Shape(shape.rows(), shape.cols(), "multiple of 64"));
        }
        e
    }

    fn lens(self, shape: Shape) -> (usize, usize, usize) {
        let (r, c) = (shape.rows(), shape.cols());
        if self.ggml() {
            (r * (c / 64) * 36, 0, 36)
        } else {
            (r * c.div_ceil(2), r * c.div_ceil(16), 8)
        }
    }
}

/// Planar NVFP4 (codes and scales of `rows × cols`, `cols` a multiple of 64) in the
/// documented `block_nvfp4` order: per 64 values, the four scales, then for sub-block `i`
/// its elements `j` / `j + 8` in the low / high nibbles of byte `4 + 8i + j`.
fn nv_planar_to_ggml(data: &[u8], scales: &[u8], rows: usize, cols: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows * cols / 64 * 36);
    let code = |r: usize, k: usize| (data[r * cols / 2 + k / 2] >> (4 * (k % 2))) & 0xF;
    for r in 0..rows {
        for g in 0..cols / 64 {
            out.extend_from_slice(&scales[r * cols / 16 + 4 * g..][..4]);
            for i in 0..4 {
                for j in 0..8 {
                    let k = 64 * g + 16 * i + j;
                    out.push(code(r, k) | (code(r, k + 8) << 4));
                }
            }
        }
    }
    out
}

/// The inverse of [`nv_planar_to_ggml`].
fn nv_ggml_to_planar(ggml: &[u8], rows: usize, cols: usize) -> (Vec<u8>, Vec<u8>) {
    let mut data = vec![0u8; rows * cols / 2];
    let mut scales = vec![0u8; rows * cols / 16];
    for r in 0..rows {
        for g in 0..cols / 64 {
            let blk = &ggml[(r * cols / 64 + g) * 36..][..36];
            scales[r * cols / 16 + 4 * g..][..4].copy_from_slice(&blk[..4]);
            for i in 0..4 {
                for j in 0..8 {
                    let b = blk[4 + 8 * i + j];
                    for (k, c) in [
                        (64 * g + 16 * i + j, b & 0xF),
                        (64 * g + 16 * i + j + 8, b >> 4),
                    ] {
                        data[r * cols / 2 + k / 2] |= c << (4 * (k % 2));
                    }
                }
            }
        }
    }
    (data, scales)
}

/// `Nvfp4::quantize` of payload values.
fn nv_quantize<S: Wide, D: Wide>(ctx: &Ctx) -> Result<(), String> {
    let inp = ctx.input;
    let cfg = NvCfg::parse(inp.h[1]);
    let shape = inp.shape();
    let (data_need, scales_need, blk) = cfg.lens(shape);
    let data_len = inp.delta(0).apply(data_need, blk);
    let scales_len = inp.delta(1).apply(scales_need, 1);
    let src_need = shape_len(shape);
    let src_len = inp.delta(2).apply(src_need, 16);
    let vals: Vec<S> = values(inp.payload, src_len);
    let src_buf = SrcBuf::new(&le(&vals), typed_off(inp.h[10], size_of::<S>()), ctx.hooks);
    let src: &[S] = src_buf.typed();
    let ts = inp.tensor_scale();
    let mut errs = cfg.shape_errs(shape);
    if errs.is_empty() {
        len_err(&mut errs, "data", data_need, data_len);
        len_err(&mut errs, "scales", scales_need, scales_len);
        len_err(&mut errs, "src", src_need, src_len);
    }
    let outs = [
        Out::bytes("data", data_len, out_off(inp.h[11], 0, 1)),
        Out::bytes("scales", scales_len, out_off(inp.h[11], 1, 1)),
    ];
    let res = every_backend(ctx, "Nvfp4::quantize", &outs, &errs, &mut |b, p| {
        // SAFETY: the two byte regions of `outs`.
        let (d, s) = unsafe {
            (
                slice_at::<u8>(p[0], data_len),
                slice_at::<u8>(p[1], scales_len),
            )
        };
        cfg.nv(b).quantize(src, shape, d, s, ts).map(f32::to_bits)
    })?;
    let Some(res) = res else { return Ok(()) };
    let (data, scales, g) = (&res.bufs[0], &res.bufs[1], f32::from_bits(res.ret));
    let nv = cfg.nv(None);
    let api = "Nvfp4::quantize";
    // The tensor scale: the given one, else ModelOpt's amax / 2688, Mlx's 2688, Ggml's 1.
    let want_g = match (ts, cfg.profile) {
        (Some(t), _) => t,
        (None, NvProfile::ModelOpt) => {
            let mut m = 0f32;
            for r in 0..shape.rows() * usize::from(shape.cols() > 0) {
                let a = block::amax(&src[r * shape.stride()..][..shape.cols()]);
                m = if a.is_nan() || m.is_nan() {
                    f32::NAN
                } else {
                    m.max(a)
                };
            }
            m / 2688.0
        }
        (None, NvProfile::Ggml) => 1.0,
        (None, _) => 2688.0,
    };
    if g.to_bits() != want_g.to_bits() && !(g.is_nan() && want_g.is_nan()) {
        return Err(ctx.fail(
            api,
            format!(
                "returned tensor scale {g:e} ({:#x}), expected {want_g:e}",
                g.to_bits()
            ),
        ));
    }
    if shape.is_empty() {
        // Nothing converted (rows of zero columns): the result was checked above.
        return Ok(());
    }
    let quant = |nv: Nvfp4, src: &[S], shape: Shape| -> Result<(Vec<u8>, Vec<u8>), String> {
        let fail = |e: Error| ctx.fail(api, format!("returned Err({e:?}) on a valid call"));
        let mut d = vec![0u8; nv.data_len(shape).map_err(fail)?];
        let mut s = vec![0u8; nv.scales_len(shape).map_err(fail)?];
        nv.quantize(src, shape, &mut d, &mut s, Some(g))
            .map_err(fail)?;
        Ok((d, s))
    };
    // Each block alone, with the tensor scale.
    let c = shape.cols();
    if !cfg.ggml() {
        let (rb, nb) = (c.div_ceil(2), c.div_ceil(16));
        for r in 0..shape.rows() {
            for b in 0..nb {
                let (lo, hi) = (16 * b, (16 * b + 16).min(c));
                let blk = &src[r * shape.stride() + lo..r * shape.stride() + hi];
                let api = format!("Nvfp4::quantize (block {b} of row {r} alone)");
                let (d, s) = quant(nv, blk, Shape::vector(hi - lo))?;
                let want = &data[r * rb + lo / 2..r * rb + hi.div_ceil(2)];
                same_bytes(ctx, &api, "data", &d, want, "the whole tensor")?;
                same_bytes(
                    ctx,
                    &api,
                    "scales",
                    &s,
                    &scales[r * nb + b..][..1],
                    "the whole tensor",
                )?;
            }
            if c % 2 == 1 && data[r * rb + rb - 1] & 0xF0 != 0 {
                return Err(ctx.fail(
                    api,
                    format!("the spare high nibble of row {r}'s last byte is not zero"),
                ));
            }
        }
    } else {
        // Each row alone, and the planar layout repacked.
        let planar = nv.layout(NvLayout::Planar);
        let (d, s) = quant(planar, src, shape)?;
        let want = nv_planar_to_ggml(&d, &s, shape.rows(), c);
        same_bytes(
            ctx,
            "Nvfp4::quantize (planar layout)",
            "data",
            data,
            &want,
            "the block_nvfp4 order of the planar layout",
        )?;
        let row = c / 64 * 36;
        for r in 0..shape.rows() {
            let api = format!("Nvfp4::quantize (row {r} alone)");
            let (d, _) = quant(nv, &src[r * shape.stride()..][..c], Shape::vector(c))?;
            same_bytes(
                ctx,
                &api,
                "data",
                &d,
                &data[r * row..][..row],
                "the whole tensor",
            )?;
        }
    }
    // The source dtype: every profile but Mlx computes with the f32 values.
    if S::NAME != "f32" && cfg.profile != NvProfile::Mlx {
        let wide: Vec<f32> = src.iter().map(|x| x.f32()).collect();
        let api = "Nvfp4::quantize (the f32 widening of the source)";
        let fail = |e: Error| ctx.fail(api, format!("returned Err({e:?}) on a valid call"));
        let (mut d, mut s) = (vec![0u8; data.len()], vec![0u8; scales.len()]);
        let g2 = nv
            .quantize(&wide, shape, &mut d, &mut s, ts)
            .map_err(fail)?;
        same_bytes(ctx, api, "data", &d, data, S::NAME)?;
        same_bytes(ctx, api, "scales", &s, scales, S::NAME)?;
        if g2.to_bits() != g.to_bits() {
            return Err(ctx.fail(api, format!("tensor scale {g2:e}, from {}: {g:e}", S::NAME)));
        }
    }
    nv_dequantize::<D>(ctx, cfg, shape, data, scales, g, [Delta::None; 3])
}

/// `Nvfp4::dequantize(_uninit)` of payload bytes.
fn nv_dequantize_input<D: Wide>(ctx: &Ctx) -> Result<(), String> {
    let inp = ctx.input;
    let cfg = NvCfg::parse(inp.h[1]);
    let shape = inp.shape();
    let (data_need, scales_need, blk) = cfg.lens(shape);
    let data = raw_bytes(inp.payload, 0, inp.delta(0).apply(data_need, blk));
    let half = inp.payload.len() / 2;
    let scales = raw_bytes(inp.payload, half, inp.delta(1).apply(scales_need, 1));
    let g = f32::from_bits(inp.scale());
    let g = if inp.h[14].is_multiple_of(16) {
        cfg.nv(None).identity_tensor_scale()
    } else {
        g
    };
    nv_dequantize::<D>(
        ctx,
        cfg,
        shape,
        &data,
        &scales,
        g,
        [inp.delta(0), inp.delta(1), inp.delta(2)],
    )
}

fn nv_dequantize<D: Wide>(
    ctx: &Ctx,
    cfg: NvCfg,
    shape: Shape,
    data: &[u8],
    scales: &[u8],
    g: f32,
    deltas: [Delta; 3],
) -> Result<(), String> {
    let inp = ctx.input;
    let (data_need, scales_need, _) = cfg.lens(shape);
    let dst_need = shape_len(shape);
    let dst_len = deltas[2].apply(dst_need, 16);
    let mut errs = cfg.shape_errs(shape);
    if errs.is_empty() {
        len_err(&mut errs, "data", data_need, data.len());
        len_err(&mut errs, "scales", scales_need, scales.len());
        len_err(&mut errs, "dst", dst_need, dst_len);
    }
    let data_buf = SrcBuf::new(data, usize::from(inp.h[10]) % BASE_ALIGN, ctx.hooks);
    let scales_buf = SrcBuf::new(scales, usize::from(inp.h[10] / 3) % BASE_ALIGN, ctx.hooks);
    let (data, scales) = (data_buf.bytes(), scales_buf.bytes());
    let ds = size_of::<D>();
    let outs = [values_out::<D>(
        "dst",
        shape,
        dst_len,
        out_off(inp.h[11], 2, ds),
    )];
    let uninit = inp.uninit();
    let api = if uninit {
        "Nvfp4::dequantize_uninit"
    } else {
        "Nvfp4::dequantize"
    };
    let res = every_backend(ctx, api, &outs, &errs, &mut |b, p| {
        let nv = cfg.nv(b);
        if uninit {
            // SAFETY: the region of `outs[0]`, aligned for `D`.
            let d = unsafe { slice_at::<MaybeUninit<D>>(p[0], dst_len) };
            nv.dequantize_uninit(data, scales, g, shape, d).map(|()| 0)
        } else {
            // SAFETY: as above.
            let d = unsafe { slice_at::<D>(p[0], dst_len) };
            nv.dequantize(data, scales, g, shape, d).map(|()| 0)
        }
    })?;
    let Some(res) = res else { return Ok(()) };
    if shape.is_empty() {
        // Nothing converted (rows of zero columns): the result was checked above.
        return Ok(());
    }
    let out = &res.bufs[0];
    let nv = cfg.nv(None);
    let deq = |nv: Nvfp4, data: &[u8], scales: &[u8], shape: Shape| -> Result<Vec<u8>, String> {
        let mut v = vec![D::from_bits32(0); shape_len(shape)];
        nv.dequantize(data, scales, g, shape, &mut v)
            .map_err(|e| ctx.fail(api, format!("returned Err({e:?}) on a valid call")))?;
        Ok(le(&v))
    };
    let c = shape.cols();
    let rows_of = |v: &[u8]| -> Vec<u8> {
        let mut o = Vec::new();
        for r in 0..shape.rows() {
            o.extend_from_slice(&v[r * shape.stride() * ds..(r * shape.stride() + c) * ds]);
        }
        o
    };
    if !cfg.ggml() {
        // Each block alone.
        let (rb, nb) = (c.div_ceil(2), c.div_ceil(16));
        for r in 0..shape.rows() {
            for b in 0..nb {
                let (lo, hi) = (16 * b, (16 * b + 16).min(c));
                let api = format!("Nvfp4::dequantize (block {b} of row {r} alone)");
                let d = &data[r * rb + lo / 2..r * rb + hi.div_ceil(2)];
                let got = deq(nv, d, &scales[r * nb + b..][..1], Shape::vector(hi - lo))?;
                let i = (r * shape.stride() + lo) * ds;
                same_bytes(
                    ctx,
                    &api,
                    "dst",
                    &got,
                    &out[i..i + (hi - lo) * ds],
                    "the whole tensor",
                )?;
            }
        }
        // The spare high nibble of an odd row is ignored.
        if c % 2 == 1 && shape.rows() > 0 {
            let mut dirty = data.to_vec();
            for r in 0..shape.rows() {
                dirty[r * rb + rb - 1] ^= 0xF0;
            }
            let got = deq(nv, &dirty, scales, shape)?;
            same_bytes(
                ctx,
                "Nvfp4::dequantize (spare high nibbles flipped)",
                "dst",
                &rows_of(&got),
                &rows_of(out),
                "the clean bytes",
            )?;
        }
    } else {
        // The ggml layout holds the planar layout in the block_nvfp4 order.
        let (d, s) = nv_ggml_to_planar(data, shape.rows(), c);
        let got = deq(nv.layout(NvLayout::Planar), &d, &s, shape)?;
        same_bytes(
            ctx,
            "Nvfp4::dequantize (planar layout of the repacked bytes)",
            "dst",
            &rows_of(&got),
            &rows_of(out),
            "the ggml layout",
        )?;
    }
    // ModelOpt rounds the f32 product to the destination; Ggml rounds the exact product
    // once, which with tensor scale 1 is exact in f32.
    let narrows = match cfg.profile {
        NvProfile::ModelOpt => true,
        NvProfile::Ggml => g == 1.0,
        _ => false,
    };
    if D::NAME != "f32" && narrows {
        let api = "Nvfp4::dequantize to f32, narrowed";
        let mut v = vec![0f32; shape_len(shape)];
        nv.dequantize(data, scales, g, shape, &mut v)
            .map_err(|e| ctx.fail(api, format!("returned Err({e:?}) on a valid call")))?;
        let narrowed: Vec<D> = v.iter().map(|&x| D::from_f32_ne(x)).collect();
        same_values::<D>(
            ctx,
            api,
            &rows_of(out),
            &rows_of(&le(&narrowed)),
            "f32 narrowed",
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Block FP8.

fn fp8(inp: &Input, b: Option<Backend>) -> BlockFp8 {
    let (tr, tc) = inp.tile();
    let f = BlockFp8::new(tr, tc).profile(FP8_PROFILES[usize::from(inp.h[1] % 2)]);
    match b {
        Some(b) => f.on(b),
        None => f,
    }
}

/// Shape errors and (data, scale_inv) bytes of a block FP8 shape.
fn fp8_lens(inp: &Input, shape: Shape) -> (Vec<Want>, usize, usize) {
    let (tr, tc) = inp.tile();
    let mut e = Vec::new();
    stride_err(shape, &mut e);
    if tr == 0 || tc == 0 {
        e.push(Want::Shape(shape.rows(), shape.cols(), "tile"));
    }
    let tiles = shape.rows().div_ceil(tr.max(1)) * shape.cols().div_ceil(tc.max(1));
    (e, shape.rows() * shape.cols(), 4 * tiles)
}

/// `BlockFp8::quantize` of payload values.
fn fp8_quantize<S: Wide, D: Wide>(ctx: &Ctx) -> Result<(), String> {
    let inp = ctx.input;
    let shape = inp.shape();
    let (tr, tc) = inp.tile();
    let (mut errs, data_need, sc_need) = fp8_lens(inp, shape);
    let data_len = inp.delta(0).apply(data_need, tc);
    let sc_len = inp.delta(1).apply(sc_need, 4);
    let src_need = shape_len(shape);
    let src_len = inp.delta(2).apply(src_need, tc);
    let vals: Vec<S> = values(inp.payload, src_len);
    let src_buf = SrcBuf::new(&le(&vals), typed_off(inp.h[10], size_of::<S>()), ctx.hooks);
    let src: &[S] = src_buf.typed();
    if errs.is_empty() {
        len_err(&mut errs, "data", data_need, data_len);
        len_err(&mut errs, "scale_inv", sc_need, sc_len);
        len_err(&mut errs, "src", src_need, src_len);
    }
    let outs = [
        Out::bytes("data", data_len, out_off(inp.h[11], 0, 1)),
        Out::bytes("scale_inv", sc_len, out_off(inp.h[11], 1, 1)),
    ];
    let api = "BlockFp8::quantize";
    let res = every_backend(ctx, api, &outs, &errs, &mut |b, p| {
        // SAFETY: the two byte regions of `outs`.
        let (d, s) = unsafe { (slice_at::<u8>(p[0], data_len), slice_at::<u8>(p[1], sc_len)) };
        fp8(inp, b).quantize(src, shape, d, s).map(|()| 0)
    })?;
    let Some(res) = res else { return Ok(()) };
    if shape.is_empty() {
        // Nothing converted (rows of zero columns): the result was checked above.
        return Ok(());
    }
    let (data, sc) = (&res.bufs[0], &res.bufs[1]);
    let f = fp8(inp, None);
    let quant = |src: &[S], shape: Shape| -> Result<(Vec<u8>, Vec<u8>), String> {
        let fail = |e: Error| ctx.fail(api, format!("returned Err({e:?}) on a valid call"));
        let mut d = vec![0u8; f.data_len(shape).map_err(fail)?];
        let mut s = vec![0u8; f.scale_inv_len(shape).map_err(fail)?];
        f.quantize(src, shape, &mut d, &mut s).map_err(fail)?;
        Ok((d, s))
    };
    // Each tile alone (cropped at the edges), as a matrix with the source's stride.
    let (rows, c) = (shape.rows(), shape.cols());
    let across = c.div_ceil(tc);
    for t0 in (0..rows).step_by(tr) {
        let h = tr.min(rows - t0);
        for (t, c0) in (0..c).step_by(tc).enumerate() {
            let w = tc.min(c - c0);
            let start = t0 * shape.stride() + c0;
            let sub = Shape::matrix(h, w).with_stride(shape.stride());
            let api = format!("BlockFp8::quantize (tile at row {t0}, col {c0} alone)");
            let (d, s) = quant(&src[start..start + shape_len(sub)], sub)?;
            let mut want = Vec::new();
            for r in t0..t0 + h {
                want.extend_from_slice(&data[r * c + c0..r * c + c0 + w]);
            }
            same_bytes(ctx, &api, "data", &d, &want, "the whole tensor")?;
            let i = 4 * ((t0 / tr) * across + t);
            same_bytes(
                ctx,
                &api,
                "scale_inv",
                &s,
                &sc[i..i + 4],
                "the whole tensor",
            )?;
        }
    }
    if S::NAME != "f32" {
        let wide: Vec<f32> = src.iter().map(|x| x.f32()).collect();
        let api = "BlockFp8::quantize (the f32 widening of the source)";
        let fail = |e: Error| ctx.fail(api, format!("returned Err({e:?}) on a valid call"));
        let (mut d, mut s) = (vec![0u8; data.len()], vec![0u8; sc.len()]);
        f.quantize(&wide, shape, &mut d, &mut s).map_err(fail)?;
        same_bytes(ctx, api, "data", &d, data, S::NAME)?;
        same_bytes(ctx, api, "scale_inv", &s, sc, S::NAME)?;
    }
    fp8_dequantize::<D>(ctx, shape, data, sc, [Delta::None; 3])
}

/// `BlockFp8::dequantize(_uninit)` of payload codes and value-token scales.
fn fp8_dequantize_input<D: Wide>(ctx: &Ctx) -> Result<(), String> {
    let inp = ctx.input;
    let shape = inp.shape();
    let (_, tc) = inp.tile();
    let (_, data_need, sc_need) = fp8_lens(inp, shape);
    let data = raw_bytes(inp.payload, 0, inp.delta(0).apply(data_need, tc));
    let sc_len = inp.delta(1).apply(sc_need, 4);
    let half = &inp.payload[inp.payload.len() / 2..];
    let mut sc = le(&values::<f32>(half, sc_len.div_ceil(4)));
    sc.truncate(sc_len);
    fp8_dequantize::<D>(
        ctx,
        shape,
        &data,
        &sc,
        [inp.delta(0), inp.delta(1), inp.delta(2)],
    )
}

fn fp8_dequantize<D: Wide>(
    ctx: &Ctx,
    shape: Shape,
    data: &[u8],
    sc: &[u8],
    deltas: [Delta; 3],
) -> Result<(), String> {
    let inp = ctx.input;
    let (tr, tc) = inp.tile();
    let (mut errs, data_need, sc_need) = fp8_lens(inp, shape);
    let dst_need = shape_len(shape);
    let dst_len = deltas[2].apply(dst_need, tc);
    if errs.is_empty() {
        len_err(&mut errs, "data", data_need, data.len());
        len_err(&mut errs, "scale_inv", sc_need, sc.len());
        len_err(&mut errs, "dst", dst_need, dst_len);
    }
    let data_buf = SrcBuf::new(data, usize::from(inp.h[10]) % BASE_ALIGN, ctx.hooks);
    let sc_buf = SrcBuf::new(sc, usize::from(inp.h[10] / 3) % BASE_ALIGN, ctx.hooks);
    let (data, sc) = (data_buf.bytes(), sc_buf.bytes());
    let ds = size_of::<D>();
    let outs = [values_out::<D>(
        "dst",
        shape,
        dst_len,
        out_off(inp.h[11], 2, ds),
    )];
    let uninit = inp.uninit();
    let api = if uninit {
        "BlockFp8::dequantize_uninit"
    } else {
        "BlockFp8::dequantize"
    };
    let res = every_backend(ctx, api, &outs, &errs, &mut |b, p| {
        let f = fp8(inp, b);
        if uninit {
            // SAFETY: the region of `outs[0]`, aligned for `D`.
            let d = unsafe { slice_at::<MaybeUninit<D>>(p[0], dst_len) };
            f.dequantize_uninit(data, sc, shape, d).map(|()| 0)
        } else {
            // SAFETY: as above.
            let d = unsafe { slice_at::<D>(p[0], dst_len) };
            f.dequantize(data, sc, shape, d).map(|()| 0)
        }
    })?;
    let Some(res) = res else { return Ok(()) };
    if shape.is_empty() {
        // Nothing converted (rows of zero columns): the result was checked above.
        return Ok(());
    }
    let out = &res.bufs[0];
    let f = fp8(inp, None);
    let (rows, c) = (shape.rows(), shape.cols());
    let across = c.div_ceil(tc);
    // Each tile alone, written into a destination with the same stride.
    for t0 in (0..rows).step_by(tr) {
        let h = tr.min(rows - t0);
        for (t, c0) in (0..c).step_by(tc).enumerate() {
            let w = tc.min(c - c0);
            let mut codes = Vec::new();
            for r in t0..t0 + h {
                codes.extend_from_slice(&data[r * c + c0..r * c + c0 + w]);
            }
            let i = 4 * ((t0 / tr) * across + t);
            let sub = Shape::matrix(h, w);
            let mut v = vec![D::from_bits32(0); h * w];
            let api = format!("BlockFp8::dequantize (tile at row {t0}, col {c0} alone)");
            f.dequantize(&codes, &sc[i..i + 4], sub, &mut v)
                .map_err(|e| ctx.fail(&api, format!("returned Err({e:?}) on a valid call")))?;
            let got = le(&v);
            for r in 0..h {
                let o = ((t0 + r) * shape.stride() + c0) * ds;
                same_bytes(
                    ctx,
                    &api,
                    "dst",
                    &got[r * w * ds..(r + 1) * w * ds],
                    &out[o..o + w * ds],
                    "the whole tensor",
                )?;
            }
        }
    }
    // Two roundings: the f32 result narrowed.
    if D::NAME != "f32" {
        let api = "BlockFp8::dequantize to f32, narrowed";
        let mut v = vec![0f32; shape_len(shape)];
        f.dequantize(data, sc, shape, &mut v)
            .map_err(|e| ctx.fail(api, format!("returned Err({e:?}) on a valid call")))?;
        for r in 0..rows {
            let row = &v[r * shape.stride()..][..c];
            let narrowed: Vec<D> = row.iter().map(|&x| D::from_f32_ne(x)).collect();
            let o = r * shape.stride() * ds;
            same_values::<D>(
                ctx,
                api,
                &out[o..o + c * ds],
                &le(&narrowed),
                "f32 narrowed",
            )?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The MXFP4 repacks.

/// Planar MXFP4 blocks (16 bytes, element `2j` in the low nibble of byte `j`) and scales to
/// ggml `block_mxfp4` as documented: the scale, then elements `j` / `j + 16` in the low /
/// high nibbles of byte `1 + j`.
fn mx_planar_to_ggml_ref(blocks: &[u8], scales: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for (b, &s) in blocks.chunks(16).zip(scales) {
        let code = |i: usize| (b[i / 2] >> (4 * (i % 2))) & 0xF;
        out.push(s);
        out.extend((0..16).map(|j| code(j) | (code(j + 16) << 4)));
    }
    out
}

/// `mxfp4_planar_to_ggml` (`to_ggml`) or `mxfp4_ggml_to_planar` of payload bytes, `cols % 64`
/// blocks, and the way back.
fn repack(ctx: &Ctx, to_ggml: bool) -> Result<(), String> {
    let inp = ctx.input;
    let n = inp.cols() % 64;
    let p = inp.payload;
    let mut errs = Vec::new();
    if to_ggml {
        let blocks = raw_bytes(p, 0, inp.delta(0).apply(16 * n, 16));
        let scales = raw_bytes(p, p.len() / 2, inp.delta(1).apply(n, 1));
        let out_len = inp.delta(2).apply(17 * scales.len(), 17);
        let m = scales.len();
        len_err(&mut errs, "blocks", 16 * m, blocks.len());
        len_err(&mut errs, "out", 17 * m, out_len);
        let bb = SrcBuf::new(&blocks, usize::from(inp.h[10]) % BASE_ALIGN, ctx.hooks);
        let sb = SrcBuf::new(&scales, usize::from(inp.h[10] / 3) % BASE_ALIGN, ctx.hooks);
        let outs = [Out::bytes("out", out_len, out_off(inp.h[11], 0, 1))];
        let api = "mxfp4_planar_to_ggml";
        let res = guarded(ctx, api, &outs, &errs, &mut |q| {
            // SAFETY: the byte region of `outs[0]`.
            let o = unsafe { slice_at::<u8>(q[0], out_len) };
            block::mxfp4_planar_to_ggml(bb.bytes(), sb.bytes(), o).map(|()| 0)
        })?;
        let Some(res) = res else { return Ok(()) };
        let want = mx_planar_to_ggml_ref(&blocks, &scales);
        same_bytes(
            ctx,
            api,
            "out",
            &res.bufs[0],
            &want,
            "the documented nibble order",
        )?;
        let (mut b2, mut s2) = (vec![0u8; blocks.len()], vec![0u8; scales.len()]);
        block::mxfp4_ggml_to_planar(&res.bufs[0], &mut b2, &mut s2)
            .map_err(|e| ctx.fail("mxfp4_ggml_to_planar (back)", format!("{e:?}")))?;
        same_bytes(
            ctx,
            "mxfp4_ggml_to_planar (back)",
            "blocks",
            &b2,
            &blocks,
            "the original",
        )?;
        same_bytes(
            ctx,
            "mxfp4_ggml_to_planar (back)",
            "scales",
            &s2,
            &scales,
            "the original",
        )
    } else {
        let ggml = raw_bytes(p, 0, inp.delta(0).apply(17 * n, 17));
        let scales_len = inp.delta(1).apply(n, 1);
        let blocks_len = inp.delta(2).apply(16 * scales_len, 16);
        len_err(&mut errs, "ggml", 17 * scales_len, ggml.len());
        len_err(&mut errs, "blocks", 16 * scales_len, blocks_len);
        let gb = SrcBuf::new(&ggml, usize::from(inp.h[10]) % BASE_ALIGN, ctx.hooks);
        let outs = [
            Out::bytes("blocks", blocks_len, out_off(inp.h[11], 0, 1)),
            Out::bytes("scales", scales_len, out_off(inp.h[11], 1, 1)),
        ];
        let api = "mxfp4_ggml_to_planar";
        let res = guarded(ctx, api, &outs, &errs, &mut |q| {
            // SAFETY: the two byte regions of `outs`.
            let (b, s) = unsafe {
                (
                    slice_at::<u8>(q[0], blocks_len),
                    slice_at::<u8>(q[1], scales_len),
                )
            };
            block::mxfp4_ggml_to_planar(gb.bytes(), b, s).map(|()| 0)
        })?;
        let Some(res) = res else { return Ok(()) };
        let back = mx_planar_to_ggml_ref(&res.bufs[0], &res.bufs[1]);
        same_bytes(
            ctx,
            api,
            "blocks and scales",
            &back,
            &ggml,
            "the documented nibble order, inverted",
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Building blocks.

/// `max |x|` as documented: NaN if any value is NaN, `+0` for none.
fn amax_ref<S: Wide>(v: &[S]) -> f32 {
    let mut m = 0f32;
    for x in v {
        let x = x.f32();
        if x.is_nan() {
            return f32::NAN;
        }
        if x.abs() > m {
            m = x.abs();
        }
    }
    m
}

fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// `amax` of payload values, and `amax_blocks` with the block size of byte 13.
fn amax<S: Wide>(ctx: &Ctx) -> Result<(), String> {
    let inp = ctx.input;
    let n = shape_len(Shape::matrix(inp.rows().max(1), inp.cols()));
    let vals: Vec<S> = values(inp.payload, n);
    let src_buf = SrcBuf::new(&le(&vals), typed_off(inp.h[10], size_of::<S>()), ctx.hooks);
    let src: &[S] = src_buf.typed();
    let (got, want) = (block::amax(src), amax_ref(src));
    if !same_f32(got, want) {
        return Err(ctx.fail("amax", format!("returned {got:e}, expected {want:e}")));
    }
    let block = usize::from(inp.h[13] % 48);
    let need = if block == 0 { 0 } else { n.div_ceil(block) };
    let len = inp.delta(2).apply(need, 1);
    let mut errs = Vec::new();
    if block == 0 {
        errs.push(Want::Shape(1, n, "zero"));
    } else {
        len_err(&mut errs, "out", need, len);
    }
    let outs = [Out::bytes("out", 4 * len, out_off(inp.h[11], 0, 4))];
    let api = "amax_blocks";
    let res = guarded(ctx, api, &outs, &errs, &mut |p| {
        // SAFETY: the region of `outs[0]`, aligned for f32.
        let o = unsafe { slice_at::<f32>(p[0], len) };
        block::amax_blocks(src, block, o).map(|()| 0)
    })?;
    if let Some(res) = res {
        for (i, c) in src.chunks(block).enumerate() {
            let got = f32::from_le_bytes(res.bufs[0][4 * i..4 * i + 4].try_into().unwrap());
            let want = amax_ref(c);
            if !same_f32(got, want) {
                return Err(ctx.fail(api, format!("block {i}: {got:e}, expected {want:e}")));
            }
        }
    }
    Ok(())
}

/// `a · b` exactly, with the building blocks' NaN rule: a NaN `a` (else a NaN `b`)
/// propagates, quieted; an invalid product (`0 · ∞`) is `+NaN`.
fn scaled_product(a: f32, b: f32) -> f64 {
    let quiet = |v: f32| f64::from(f32::from_bits(v.to_bits() | 0x0040_0000));
    if a.is_nan() {
        quiet(a)
    } else if b.is_nan() {
        quiet(b)
    } else {
        let p = f64::from(a) * f64::from(b);
        if p.is_nan() { f64::NAN } else { p }
    }
}

/// `narrow_scaled` of payload values into codes `C`; returns the codes to dequantize (those
/// written, or when the call rightly failed the raw payload bytes, high bits included).
/// Then [`scaled_dequantize`] into `D`: two functions, not one generic over all three
/// types, so that each is compiled for 24 pairs of types rather than 72 triples.
fn scaled_narrow<S: Wide, C: Code>(ctx: &Ctx) -> Result<Vec<u8>, String> {
    let inp = ctx.input;
    let n = shape_len(Shape::matrix(inp.rows().max(1), inp.cols()));
    let scale = f32::from_bits(inp.scale());
    let vals: Vec<S> = values(inp.payload, n);
    let src_buf = SrcBuf::new(&le(&vals), typed_off(inp.h[10], size_of::<S>()), ctx.hooks);
    let src: &[S] = src_buf.typed();
    let len = inp.delta(2).apply(n, 32);
    let mut errs = Vec::new();
    len_err(&mut errs, "dst", n, len);
    let outs = [Out::bytes("dst", len, out_off(inp.h[11], 0, 1))];
    let api = format!("narrow_scaled::<{}, {}>", S::NAME, C::NAME);
    let res = guarded(ctx, &api, &outs, &errs, &mut |p| {
        // SAFETY: the region of `outs[0]`; `C` is a one-byte type.
        let o = unsafe { slice_at::<C>(p[0], len) };
        block::narrow_scaled(src, scale, o).map(|()| 0)
    })?;
    let codes: Vec<u8> = match res {
        Some(res) => {
            let want: Vec<C> = src
                .iter()
                .map(|x| C::from_f64_default(scaled_product(x.f32(), scale)))
                .collect();
            same_bytes(
                ctx,
                &api,
                "dst",
                &res.bufs[0],
                &le(&want),
                "the element-wise definition",
            )?;
            res.bufs[0].clone()
        }
        None => raw_bytes(inp.payload, 0, n),
    };
    Ok(codes)
}

/// `dequantize_scaled` of `codes` (from [`scaled_narrow`]) into `D`.
fn scaled_dequantize<C: Code, D: Wide>(ctx: &Ctx, codes: &[u8]) -> Result<(), String> {
    let inp = ctx.input;
    let scale = f32::from_bits(inp.scale());
    let cb = SrcBuf::new(codes, usize::from(inp.h[10]) % BASE_ALIGN, ctx.hooks);
    let cs: &[C] = cb.typed();
    let ds = size_of::<D>();
    let len = inp.delta(0).apply(codes.len(), 32);
    let mut errs = Vec::new();
    len_err(&mut errs, "dst", codes.len(), len);
    let outs = [Out::bytes("dst", len * ds, out_off(inp.h[11], 1, ds))];
    let api = format!("dequantize_scaled::<{}, {}>", C::NAME, D::NAME);
    let res = guarded(ctx, &api, &outs, &errs, &mut |p| {
        // SAFETY: the region of `outs[0]`, aligned for `D`.
        let o = unsafe { slice_at::<D>(p[0], len) };
        block::dequantize_scaled(cs, scale, o).map(|()| 0)
    })?;
    if let Some(res) = res {
        let want: Vec<D> = cs
            .iter()
            .map(|c| {
                let x = f64::from(c.value()) * f64::from(scale);
                // f32: `as` rounds to nearest even; the half types from f64 in one rounding,
                // overflowing to infinity.
                match D::NAME {
                    "f32" => D::from_bits32((x as f32).to_bits()),
                    "BF16" => D::from_bits32(u32::from(
                        BF16::from_f64_with(x, Overflow::NonSaturating).to_bits(),
                    )),
                    _ => D::from_bits32(u32::from(
                        F16::from_f64_with(x, Overflow::NonSaturating).to_bits(),
                    )),
                }
            })
            .collect();
        same_values::<D>(
            ctx,
            &api,
            &res.bufs[0],
            &le(&want),
            "the element-wise definition",
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Seeds.

/// One seed of the block target.
pub struct Seed {
    /// File name under `fuzz/corpus/block/`.
    pub name: String,
    /// Contents.
    pub data: Vec<u8>,
}

/// Value tokens: every [`TABLE`] entry with both signs, ±1 ulp and shifts of the exponent
/// (up to ±32), and raw bit patterns (NaN payloads, random bits).
fn value_tokens() -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..TABLE.len() as u8 {
        for (k, e) in [
            (0u8, 0u8),
            (1, 1),
            (0, 2),
            (1, 4 * 3),
            (0, (4 * -5i8) as u8),
            (1, (4 * 20) as u8 | 1),
        ] {
            if (k + i) % 3 == 0 || e == 0 {
                out.extend_from_slice(&[2 * i + k, e]);
            }
        }
    }
    for bits in [
        0xFFC0_1234u32,
        0x7FA0_0001,
        0x4234_5678,
        0xC2AB_CDEF,
        0x0001_2345,
        0x3F7F_0080,
    ] {
        out.push(0xF0);
        out.extend_from_slice(&bits.to_le_bytes());
    }
    out
}

/// Raw payload of the dequantizing ops: every code byte, then scale bytes from the second
/// half (E8M0 around 1 and at its ends, E4M3 and UE4M3 specials, random bytes).
fn code_bytes() -> Vec<u8> {
    let mut out: Vec<u8> = (0..=255u8).collect();
    let scales: [u8; 24] = [
        127, 0x00, 0xFF, 0xFE, 0x7F, 0x80, 126, 128, 130, 120, 1, 0x38, 0x7E, 0xFE, 0x08, 0x01,
        0x40, 140, 100, 0xF8, 0x77, 118, 136, 150,
    ];
    out.extend((0..256).map(|i| scales[i % scales.len()]));
    out
}

/// The committed seed corpus of the block target.
pub fn seeds() -> Vec<Seed> {
    let tokens = value_tokens();
    let codes = code_bytes();
    let mut out = Vec::new();
    let mut push = |name: String, mut spec: Spec, payload: &[u8]| {
        spec.payload = payload.to_vec();
        let data = spec.encode();
        out.push(Seed { name, data });
    };
    let dt = |i: usize| DTYPES[i % 3].to_lowercase();
    // MX: every element x profile x layout; the valid ones with every source dtype
    // (quantizing) and every destination dtype (dequantizing).
    for c in 0..40u8 {
        let cfg = MxCfg::parse(c);
        let name = format!("{:?}-{:?}-{:?}", cfg.element, cfg.profile, cfg.layout).to_lowercase();
        let ggml = cfg.ggml();
        let (rows, cols, stride) = if ggml { (2, 64, 3) } else { (3, 77, 5) };
        let valid = cfg
            .shape_errs(Shape::matrix(rows, cols).with_stride(cols + stride as usize))
            .is_empty();
        let spec = Spec::new(Op::MxQuantize, c, rows, cols);
        if !valid {
            push(
                format!("mx-quantize-{name}-invalid"),
                Spec {
                    stride_delta: stride,
                    ..spec.clone()
                },
                &tokens,
            );
            push(
                format!("mx-dequantize-{name}-invalid"),
                Spec {
                    op: Op::MxDequantize,
                    ..spec
                },
                &codes,
            );
            continue;
        }
        for k in 0..3u8 {
            let s = Spec {
                src: k,
                dst: (k + c) % 3,
                uninit: k == 1,
                stride_delta: if k == 2 { 0 } else { stride },
                offsets: (k + c, 3 * k + 1),
                ..spec.clone()
            };
            push(format!("mx-quantize-{name}-{}", dt(k.into())), s, &tokens);
            let s = Spec {
                op: Op::MxDequantize,
                dst: k,
                uninit: k == 2,
                stride_delta: if k == 0 { 0 } else { stride },
                offsets: (5 * k + c, k + 2),
                ..spec.clone()
            };
            push(format!("mx-dequantize-{name}-{}", dt(k.into())), s, &codes);
        }
    }
    // NVFP4: every profile x layout x dtype, with and without tensor scales.
    for c in 0..6u8 {
        let cfg = NvCfg::parse(c);
        let name = format!("{:?}-{:?}", cfg.profile, cfg.layout).to_lowercase();
        let (rows, cols, stride) = if cfg.ggml() { (2, 128, 7) } else { (3, 45, 2) };
        let spec = Spec::new(Op::NvQuantize, c, rows, cols);
        for k in 0..3u8 {
            let s = Spec {
                src: k,
                dst: (k + 1) % 3,
                stride_delta: if k == 1 { 0 } else { stride },
                offsets: (k + 2 * c, 5 * k + 3),
                scale: [0, 2, 3, 5, 1, 0][usize::from(c + k) % 6],
                ..spec.clone()
            };
            push(format!("nv-quantize-{name}-{}", dt(k.into())), s, &tokens);
            let s = Spec {
                op: Op::NvDequantize,
                dst: k,
                uninit: k == 0,
                stride_delta: if k == 2 { 0 } else { stride },
                offsets: (3 * k + c, k + 7),
                scale: [1, 0, 2, 3, 13, 4][usize::from(c + k) % 6],
                ..spec.clone()
            };
            push(format!("nv-dequantize-{name}-{}", dt(k.into())), s, &codes);
        }
    }
    // NVFP4 tensor scales: zero, negative, NaN, infinite, tiny, huge.
    for sc in 6..16u8 {
        let s = Spec {
            scale: sc,
            src: sc % 3,
            dst: (sc + 1) % 3,
            ..Spec::new(Op::NvQuantize, sc % 2, 2, 40)
        };
        push(format!("nv-quantize-tensor-scale-{sc}"), s.clone(), &tokens);
        push(
            format!("nv-dequantize-tensor-scale-{sc}"),
            Spec {
                op: Op::NvDequantize,
                ..s
            },
            &codes,
        );
    }
    // Block FP8: both profiles, every dtype, several tiles (byte 12 picks the rows, byte 13
    // the cols).
    for p in 0..2u8 {
        for k in 0..3u8 {
            for (t, (tile, rows, cols, stride)) in [
                ((3u8, 255u8), 5, 300, 4),
                ((0, 32), 4, 70, 0),
                ((1, 7), 5, 23, 9),
                ((5, 5), 6, 33, 1),
            ]
            .into_iter()
            .enumerate()
            {
                let s = Spec {
                    src: k,
                    dst: (k + t as u8) % 3,
                    uninit: t == 2,
                    stride_delta: stride,
                    tile,
                    offsets: (k + t as u8, 2 * k + 1),
                    ..Spec::new(Op::Fp8Quantize, p, rows, cols)
                };
                let name = format!(
                    "{:?}-{}-tile{t}",
                    FP8_PROFILES[usize::from(p)],
                    dt(k.into())
                )
                .to_lowercase();
                push(format!("fp8-quantize-{name}"), s.clone(), &tokens);
                let s = Spec {
                    op: Op::Fp8Dequantize,
                    dst: k,
                    ..s
                };
                push(format!("fp8-dequantize-{name}"), s, &codes);
            }
        }
    }
    // The repacks, valid and with each length off.
    for (op, what) in [
        (Op::PlanarToGgml, "planar-to-ggml"),
        (Op::GgmlToPlanar, "ggml-to-planar"),
    ] {
        push(what.to_string(), Spec::new(op, 0, 0, 5), &codes);
        push(format!("{what}-empty"), Spec::new(op, 0, 0, 0), &codes);
        for (k, d) in [
            Delta::Plus1,
            Delta::Minus1,
            Delta::PlusBlock,
            Delta::MinusBlock,
        ]
        .into_iter()
        .enumerate()
        {
            let mut s = Spec::new(op, 0, 0, 3);
            s.deltas[k % 3] = d;
            s.offsets = (k as u8, 3 * k as u8);
            push(format!("{what}-length-{k}"), s, &codes);
        }
    }
    // amax and amax_blocks (block 0 is an error).
    for k in 0..3u8 {
        for (b, block) in [5u8, 32, 0].into_iter().enumerate() {
            let s = Spec {
                src: k,
                tile: (0, block),
                ..Spec::new(Op::Amax, 0, 2, 100)
            };
            push(format!("amax-{}-block{b}", dt(k.into())), s, &tokens);
        }
    }
    let s = Spec {
        deltas: [Delta::None, Delta::None, Delta::Plus1],
        tile: (0, 7),
        ..Spec::new(Op::Amax, 0, 1, 20)
    };
    push("amax-blocks-out-longer".into(), s, &tokens);
    // narrow_scaled / dequantize_scaled: every code type and dtype, several scales.
    for c in 0..8u8 {
        for k in 0..3u8 {
            let s = Spec {
                src: k,
                dst: (k + c) % 3,
                scale: [1, 4, 13, 15, 9, 14, 12, 3][usize::from(c + 3 * k) % 8],
                offsets: (c + k, c),
                ..Spec::new(Op::Scaled, c, 1, 150)
            };
            push(
                format!(
                    "scaled-{}-{}",
                    CODES[usize::from(c)].to_lowercase(),
                    dt(k.into())
                ),
                s,
                &tokens,
            );
        }
    }
    let mut s = Spec::new(Op::Scaled, 2, 1, 40);
    s.deltas = [Delta::Minus1, Delta::None, Delta::Plus1];
    push("scaled-lengths".into(), s, &tokens);
    // Length errors of every buffer, each change, on each scheme and direction.
    let deltas = [
        Delta::Plus1,
        Delta::Minus1,
        Delta::PlusBlock,
        Delta::MinusBlock,
    ];
    for (op, config, rows, cols, tile) in [
        (Op::MxQuantize, 4u8, 2, 64, (0, 0)),    // E2M1 Ocp planar
        (Op::MxQuantize, 24, 2, 64, (0, 0)),     // E2M1 Ocp ggml
        (Op::MxDequantize, 5, 3, 40, (0, 0)),    // E4M3 Ceil planar
        (Op::MxDequantize, 34, 1, 96, (0, 0)),   // E2M1 Ggml ggml
        (Op::NvQuantize, 0, 2, 48, (0, 0)),      // ModelOpt planar
        (Op::NvQuantize, 4, 1, 128, (0, 0)),     // Mlx ggml
        (Op::NvDequantize, 5, 2, 64, (0, 0)),    // Ggml ggml
        (Op::Fp8Quantize, 0, 3, 50, (1, 16)),    // DeepSeek 2x16
        (Op::Fp8Dequantize, 1, 3, 50, (0, 255)), // Ue8m0 1x128
    ] {
        for buf in 0..3 {
            for (k, d) in deltas.into_iter().enumerate() {
                if (buf + k) % 2 == 1 && k < 2 {
                    continue;
                }
                let mut s = Spec {
                    tile,
                    ..Spec::new(op, config, rows, cols)
                };
                s.deltas[buf] = d;
                s.src = k as u8 % 3;
                s.dst = (k + buf) as u8 % 3;
                s.uninit = k == 3;
                let payload = if matches!(op, Op::MxQuantize | Op::NvQuantize | Op::Fp8Quantize) {
                    &tokens
                } else {
                    &codes
                };
                push(
                    format!("length-{op:?}-{config}-buffer{buf}-{d:?}").to_lowercase(),
                    s,
                    payload,
                );
            }
        }
    }
    // Shape errors: a stride below cols (several rows: an error; one row: valid), ggml
    // layouts with cols not a multiple of the block, zero tiles.
    for (op, config, tile) in [
        (Op::MxQuantize, 0u8, (0, 0)),
        (Op::MxDequantize, 9, (0, 0)),
        (Op::NvQuantize, 1, (0, 0)),
        (Op::NvDequantize, 0, (0, 0)),
        (Op::Fp8Quantize, 0, (0, 40)),
        (Op::Fp8Dequantize, 1, (1, 3)),
    ] {
        let payload = if matches!(op, Op::MxQuantize | Op::NvQuantize | Op::Fp8Quantize) {
            &tokens
        } else {
            &codes
        };
        let name = format!("{op:?}").to_lowercase();
        let s = Spec {
            stride_delta: -3,
            tile,
            ..Spec::new(op, config, 3, 40)
        };
        push(format!("stride-below-cols-{name}"), s, payload);
        let s = Spec {
            stride_delta: -5,
            tile,
            ..Spec::new(op, config, 1, 40)
        };
        push(format!("one-row-stride-below-cols-{name}"), s, payload);
        let s = Spec {
            tile,
            ..Spec::new(op, config, 0, 40)
        };
        push(format!("zero-rows-{name}"), s, payload);
        let s = Spec {
            tile,
            ..Spec::new(op, config, 4, 0)
        };
        push(format!("zero-cols-{name}"), s, payload);
    }
    for (op, config, cols) in [
        (Op::MxQuantize, 24u8, 48), // E2M1 ggml layout, 48 cols
        (Op::MxDequantize, 29, 40), // E2M1 Ceil ggml, 40 cols
        (Op::NvQuantize, 3, 96),    // ModelOpt ggml, 96 cols
        (Op::NvDequantize, 5, 32),  // Ggml ggml, 32 cols
    ] {
        let payload = if matches!(op, Op::MxQuantize | Op::NvQuantize) {
            &tokens
        } else {
            &codes
        };
        push(
            format!("ggml-cols-{cols}-{op:?}").to_lowercase(),
            Spec::new(op, config, 2, cols),
            payload,
        );
    }
    for (op, tile) in [
        (Op::Fp8Quantize, (6u8, 10u8)),
        (Op::Fp8Dequantize, (0, 0)),
        (Op::Fp8Dequantize, (6, 0)),
    ] {
        let name = format!("zero-tile-{op:?}-{}-{}", tile.0, tile.1).to_lowercase();
        let payload = if op == Op::Fp8Quantize {
            &tokens
        } else {
            &codes
        };
        push(
            name,
            Spec {
                tile,
                ..Spec::new(op, 0, 3, 30)
            },
            payload,
        );
    }
    // Long rows (the SIMD kernels' whole blocks), offsets, strides.
    for (op, config, src, dst) in [
        (Op::MxQuantize, 0u8, 0u8, 1u8), // E4M3 Ocp
        (Op::MxQuantize, 9, 0, 2),       // E2M1 Ceil
        (Op::MxQuantize, 7, 0, 0),       // E2M3 Ceil
        (Op::MxDequantize, 6, 0, 1),     // E5M2 Ceil
        (Op::Fp8Dequantize, 0, 0, 1),
    ] {
        let s = Spec {
            src,
            dst,
            stride_delta: 13,
            offsets: (3, 5),
            tile: (3, 255),
            ..Spec::new(op, config, 6, MAX_COLS)
        };
        let payload = if op == Op::MxQuantize {
            &tokens
        } else {
            &codes
        };
        push(format!("long-{op:?}-{config}").to_lowercase(), s, payload);
    }
    // Tiny payloads: the pseudo-random pattern.
    push(
        "mx-quantize-empty-payload".into(),
        Spec::new(Op::MxQuantize, 5, 2, 33),
        &[],
    );
    push(
        "nv-dequantize-empty-payload".into(),
        Spec::new(Op::NvDequantize, 0, 2, 33),
        &[],
    );
    out
}

// ---------------------------------------------------------------------------------------------
// Self-test of the checker.

/// Checks that the checker reports each kind of fault, and the harness's own references
/// their known answers (a checker that cannot fail would make every fuzz run pass). Returns
/// what it missed.
pub fn self_test() -> Vec<&'static str> {
    let input = Input::parse(&[]);
    let ctx = Ctx {
        input: &input,
        hooks: crate::harness::NO_HOOKS,
    };
    let want: Vec<u8> = (1..=12).collect();
    // Two outputs: 12 bytes, and 10 bytes written as 2 rows of 3 bytes, 7 apart.
    let outs = [
        Out::bytes("a", 12, 3),
        Out {
            name: "b",
            len: 10,
            off: 5,
            rows: Some((2, 3, 7)),
        },
    ];
    let good = |p: &[*mut u8]| {
        // SAFETY: `p[0]` holds 12 bytes, `p[1]` 10 (rows at 0..3 and 7..10).
        unsafe {
            p[0].copy_from_nonoverlapping(want.as_ptr(), 12);
            p[1].copy_from_nonoverlapping(want.as_ptr(), 3);
            p[1].add(7).copy_from_nonoverlapping(want.as_ptr(), 3);
        }
        Ok(7)
    };
    let err = Error::BlockLength {
        buffer: "data",
        expected: 4,
        given: 5,
    };
    let errs = [Want::Len("data", 4, 5)];
    type Fault<'a> = (
        &'static str,
        bool,
        Box<dyn Fn(&[*mut u8]) -> Result<u32, Error> + 'a>,
    );
    let faults: Vec<Fault> = vec![
        (
            "byte after the end",
            false,
            Box::new(|p| {
                good(p)?;
                // SAFETY: in the trailing guard.
                unsafe { p[0].add(12).write(0) };
                Ok(7)
            }),
        ),
        (
            "byte before the start",
            false,
            Box::new(|p| {
                good(p)?;
                // SAFETY: in the leading guard.
                unsafe { p[1].sub(1).write(0) };
                Ok(7)
            }),
        ),
        (
            "last byte not written",
            false,
            Box::new(|p| {
                // SAFETY: as in `good`.
                unsafe { p[1].add(7).copy_from_nonoverlapping(want.as_ptr(), 2) };
                // SAFETY: as in `good`.
                unsafe { p[0].copy_from_nonoverlapping(want.as_ptr(), 12) };
                Ok(7)
            }),
        ),
        (
            "gap between rows written",
            false,
            Box::new(|p| {
                good(p)?;
                // SAFETY: byte 5 of `b`, in the gap.
                unsafe { p[1].add(5).write(0) };
                Ok(7)
            }),
        ),
        (
            "output depends on the old contents",
            false,
            Box::new(|p| {
                // SAFETY: byte 4 of `a`, read before and written after `good`.
                let old = unsafe { p[0].add(4).read() };
                good(p)?;
                // SAFETY: as above.
                unsafe { p[0].add(4).write(old) };
                Ok(7)
            }),
        ),
        ("Err where Ok is due", false, Box::new(|_| Err(err))),
        ("Ok where an error is due", true, Box::new(good)),
        (
            "wrong error",
            true,
            Box::new(|_| {
                Err(Error::BlockLength {
                    buffer: "scales",
                    expected: 4,
                    given: 5,
                })
            }),
        ),
        (
            "wrong shape error",
            true,
            Box::new(|_| {
                Err(Error::BlockShape {
                    rows: 1,
                    cols: 2,
                    reason: "x",
                })
            }),
        ),
        (
            "written by a failing call",
            true,
            Box::new(|p| {
                good(p)?;
                Err(err)
            }),
        ),
    ];
    let mut missed = Vec::new();
    if guarded(&ctx, "good", &outs, &[], &mut |p| good(p))
        != Ok(Some(Res {
            ret: 7,
            bufs: vec![want.clone(), {
                let mut b = want[..3].to_vec();
                b.extend((3..7).map(|i| canary(GUARD_START + 5 + i, 0)));
                b.extend_from_slice(&want[..3]);
                b
            }],
        }))
    {
        missed.push("a correct call was reported, or its result misread");
    }
    if guarded(&ctx, "fails", &outs, &errs, &mut |_| Err(err)) != Ok(None) {
        missed.push("a correct failing call was reported");
    }
    for (name, failing, f) in faults {
        let e: &[Want] = if failing { &errs } else { &[] };
        if guarded(&ctx, name, &outs, e, &mut |p| f(p)).is_ok() {
            missed.push(name);
        }
    }
    // Known answers of the references.
    let checks: [(&'static str, bool); 7] = [
        ("value tokens: 2, -16, 1 + ulp, raw bits", {
            let v: Vec<f32> = values(&[24, 0, 25, 12, 14, 1, 0xF0, 1, 0, 0xC0, 0x7F], 4);
            v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                == [0x4000_0000, 0xC180_0000, 0x3F80_0001, 0x7FC0_0001]
        }),
        ("value tokens round to BF16", {
            let v: Vec<BF16> = values(&[2 * 40, 0], 1);
            v[0].to_bits() == 0x3DCD
        }),
        ("length changes", {
            Delta::Minus1.apply(0, 8) == 1
                && Delta::MinusBlock.apply(20, 8) == 12
                && Delta::PlusBlock.apply(3, 17) == 20
        }),
        (
            "MXFP4 ggml order (the doc example of mxfp4_planar_to_ggml)",
            {
                let blocks: Vec<u8> = (0..16).map(|j| j as u8 * 0x11).collect();
                let g = mx_planar_to_ggml_ref(&blocks, &[130]);
                g[0] == 130 && g[1] == 0x80 && g[3] == 0x91 && g[16] == 0xF7
            },
        ),
        ("NVFP4 ggml order and back", {
            let data: Vec<u8> = (0..64).map(|i| (i * 37 + 5) as u8).collect();
            let scales: Vec<u8> = (0..8).collect();
            let g = nv_planar_to_ggml(&data, &scales, 2, 64);
            g.len() == 72
                && g[..4] == [0, 1, 2, 3]
                && g[4] == (data[0] & 0xF) | (data[4] & 0xF) << 4
                && nv_ggml_to_planar(&g, 2, 64) == (data, scales)
        }),
        ("a shape error matches on rows, cols and reason", {
            let e = Error::BlockShape {
                rows: 3,
                cols: 40,
                reason: "the row stride is smaller than the number of columns",
            };
            Want::Shape(3, 40, "stride").matches(&e) && !Want::Shape(3, 41, "stride").matches(&e)
        }),
        ("amax reference: NaN wins, -0 gives +0", {
            amax_ref(&[-0.0f32]).to_bits() == 0
                && amax_ref(&[1.0f32, f32::NAN, f32::INFINITY]).is_nan()
        }),
    ];
    missed.extend(checks.iter().filter(|c| !c.1).map(|c| c.0));
    missed
}

/// Where `DstBuf` puts an output of offset 0 (its leading guard).
const GUARD_START: usize = crate::harness::GUARD;
