//! NVFP4 quantization and dequantization (every profile), planar and
//! ggml `block_nvfp4` layouts, f32/BF16/F16 on the unquantized side: the specification's
//! order of f32 operations (`src/block/spec/nvfp4.rs`) on whole vectors, bit for bit.
//!
//! # Why the vector operations give the specification's bits
//!
//! The specification computes every f32 operation with `block::spec::soft`: the IEEE operation
//! rounded to nearest even, subnormals kept, whatever the FP environment, and NaN results
//! made deterministic. The instantiations run these kernels under the environment where the
//! hardware's operations *are* the IEEE ones ([`Vector::mul_ieee`]: MXCSR `0x1F80` on
//! x86-64, loaded for the call when it differs; FPCR = 0 on aarch64; WebAssembly always), so
//! every non-NaN result is the specification's. NaN *bits* differ between ISAs (x86's
//! default NaN is negative, WebAssembly's sign is unspecified), so no NaN value is ever
//! stored or encoded: each step below says which lanes can be NaN and how they are decided
//! by a predicate instead, or the tensor scale that could make one is left to the
//! specification (the kernel returns `false`), or the block is (dequantization, per scale
//! byte).
//!
//! The narrowings to E4M3 and E2M1 and the widenings are the generic [`lanes`] ones, which
//! equal the codec bit for bit.

use core::mem::{MaybeUninit, size_of};

use crate::block::spec::kernels::NvRows;
use crate::block::spec::mx::MLX_FP8;
use crate::block::spec::nvfp4::{
    self as spec, BLOCK, Ctx, GGML_BYTES, NvProfile, ONE, SIX, SIX_448,
};
use crate::block::spec::{BlockDest, BlockSource, DestKind, soft};
use crate::options::Policy;
use crate::simd::Vector;
use crate::simd::generic::block::ggml::{E2M1_BITS, Fp4Consts, fp4_code, fp4_codes4};
use crate::simd::generic::lanes;
use crate::{F4E2M1, F8E4M3, NanPolicy, Overflow};

/// Profile indices (`NvProfile as usize`).
pub(crate) const MODELOPT: usize = NvProfile::ModelOpt as usize;
pub(crate) const MLX: usize = NvProfile::Mlx as usize;
pub(crate) const GGML: usize = NvProfile::Ggml as usize;
/// Layout indices (`NvLayout as usize`).
pub(crate) const PLANAR: usize = 0;
pub(crate) const GGML_LAYOUT: usize = 1;

const SAT: Policy = Policy {
    overflow: Overflow::Saturate,
    nan: NanPolicy::Preserve,
};
/// The rounding of dequantized values to the destination, and of MLX's intermediate values
/// to the source type (`block::round_to`).
const TO_DEST: Policy = Policy {
    overflow: Overflow::NonSaturating,
    nan: NanPolicy::Preserve,
};
const ABS: u32 = 0x7FFF_FFFF;
const INF: u32 = 0x7F80_0000;
/// A table entry no finite multiplier has (a NaN): "leave this block to the specification".
const BAD: u32 = u32::MAX;

/// The bytes 0..=255, for building per-scale-byte tables a vector at a time.
static IOTA: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i as u8;
        i += 1;
    }
    t
};

const fn profile(p: usize) -> NvProfile {
    match p {
        MODELOPT => NvProfile::ModelOpt,
        MLX => NvProfile::Mlx,
        _ => NvProfile::Ggml,
    }
}

/// The codes and the scale byte of block `b` of row `r`.
///
/// # Safety
/// `a` describes valid ranges and `b < a.blocks`, `r < a.rows`.
#[inline(always)]
unsafe fn block_at<const L: usize>(a: &NvRows, r: usize, b: usize) -> (*mut u8, *mut u8) {
    // SAFETY: inside the ranges `a` describes (the caller's guarantee).
    unsafe {
        let row = a.data.add(r * a.data_stride);
        if L == PLANAR {
            (
                row.add(b * BLOCK / 2),
                a.scales.add(r * a.scales_stride + b),
            )
        } else {
            let base = row.add(b / 4 * GGML_BYTES);
            (base.add(4 + 8 * (b % 4)), base.add(b % 4))
        }
    }
}

/// Loads `n` source values of type `S` as f32 bits (exact: BF16 is the top half of the f32,
/// F16 widens with `VCVTPH2PS`-like exactness, NaN stays NaN).
#[inline(always)]
unsafe fn load_src<V: Vector, S: BlockSource>(p: *const u8, n: usize) -> V {
    // SAFETY: the caller's guarantee (`n` values at `p`, `V`'s features).
    unsafe {
        match S::KIND {
            DestKind::F32 => V::load_u32(p, n),
            DestKind::Bf16 => V::load_u16(p, n).shl(16),
            DestKind::F16 => V::load_f16(p, n),
        }
    }
}

/// f32 bits rounded to the source type `S` and widened back (`block::round_to`): BF16 by the
/// integer rounding of [`lanes::bf16`], F16 by `round_f16` (the IEEE conversion, overflow to
/// ±Inf), both as the codec under `TO_DEST`.
#[inline(always)]
unsafe fn round_src<V: Vector, S: BlockSource>(x: V, bf: &lanes::Bf16<V>) -> V {
    // SAFETY: the caller has `V`'s features; no memory is touched.
    unsafe {
        match S::KIND {
            DestKind::F32 => x,
            DestKind::Bf16 => lanes::bf16(x, bf).shl(16),
            DestKind::F16 => x.round_f16(false),
        }
    }
}

/// Rounds `n` lanes of f32 bits to `D` and stores them (`D::from_f32_bits`: to nearest even,
/// overflow to ±Inf; the lanes are never NaN here).
#[inline(always)]
unsafe fn store_dst<V: Vector, D: BlockDest>(y: V, p: *mut u8, n: usize, bf: &lanes::Bf16<V>) {
    // SAFETY: the caller's guarantee (`n` values at `p`, `V`'s features).
    unsafe {
        match D::KIND {
            DestKind::F32 => y.store_u32(p, n),
            DestKind::Bf16 => lanes::bf16(y, bf).store_u16(p, n),
            DestKind::F16 => y.store_f16(p, n, false),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Dequantization
// ---------------------------------------------------------------------------------------

/// Dequantizes the whole blocks of `a` under profile `P` and layout `L` into `D`.
///
/// Per call, the multiplier of every scale byte, `f = f32(s8) · m` (`m = g` for `ModelOpt`,
/// `g / 2688` rounded by `soft::div` for `Mlx`): 256 values, a vector at a time. Per block
/// the values are then `D(f32(fp4 · f))`, one IEEE product per value, as the
/// specification's `soft::mul`. No NaN can occur in a block whose `f` is finite (`fp4` is
/// finite, and a finite times a finite is never NaN; an overflow to ±Inf is the IEEE result,
/// as `soft::mul`'s). Scale bytes whose `f` is NaN (an E4M3 NaN code; for `Mlx` those
/// blocks store MLX's NaN bits) or ±Inf (where `0 · Inf` would be a NaN) are marked and
/// their blocks run the specification. A tensor scale that is NaN or infinite leaves the
/// whole call to it.
///
/// Where the results are computed: on a vector with a native word permute
/// ([`Vector::WORD_LOOKUP`], AVX-512) BF16 and F16 run [`dequantize_pairs`] (the
/// multipliers of 16 blocks in lanes, two blocks' results per permute, no per-call table
/// for the planar layout); with byte-plane lookups ([`Vector::FP4_PLANES`], AVX2) and
/// enough blocks, BF16 and F16 (and f32 for `Ggml`, whose results are exact BF16 values)
/// look two blocks up at once in rows of byte planes of the 16 encoded results, one row
/// per scale byte, built when a block first needs it ([`plane_row`]); with a register
/// lookup ([`Vector::FAST_LOOKUP16`]) f32 computes each block's 16 products
/// `f32(fp4(k) · f)` and looks the codes up in them, and BF16 and F16 without planes look
/// up a per-call table of the 16 encoded results of every scale byte (16 KiB) when the call
/// has enough blocks; the rest multiplies value by value. Every path stores
/// `D(f32(fp4 · f))` for the same `f` and the same product.
///
/// `Ggml` multiplies in f64 in the specification (`ue4m3 · g`, exact, then `e2m1 · d`
/// rounded once to `D`). For a tensor scale `g = ±2^e`, `|e| <= 100` (llama.cpp passes 1.0),
/// `ue4m3 · g` is an exact normal f32 (or zero) and `e2m1 · (ue4m3 · g)` has at most 6
/// significant bits and a magnitude in `2^-110 ..= 2^112`: the f32 product is exact, so
/// rounding it to `D` rounds the exact value once, as the specification does. Code 8 (−0)
/// is read as code 0 (+0), as ggml's integer table has it. Other tensor scales are left to
/// the specification.
///
/// # Safety
/// As for [`NvFn`](crate::block::spec::kernels::NvFn), with `V`'s features.
#[inline(always)]
pub(crate) unsafe fn dequantize<V: Vector, const P: usize, const L: usize, D: BlockDest>(
    a: &NvRows,
) -> bool {
    let g = a.g;
    let m = if P == MLX { soft::div(g, SIX_448) } else { g };
    let ok = if P == GGML {
        let e = (g >> 23) & 0xFF;
        g & 0x007F_FFFF == 0 && (127 - 100..=127 + 100).contains(&e)
    } else {
        m & ABS < INF
    };
    if !ok {
        return false;
    }
    if V::WORD_LOOKUP && V::LANES == 16 && D::KIND != DestKind::F32 {
        // SAFETY: forwarded (the caller's guarantee); `m` is the multiplier checked above.
        unsafe {
            if a.rows * a.blocks >= LUT_MIN_BLOCKS {
                dequantize_rows::<V, P, L, D>(a, m);
            } else {
                dequantize_pairs::<V, P, L, D>(a, m);
            }
        }
        return true;
    }
    let l = V::LANES;
    let size = size_of::<D>();
    // SAFETY: `V`'s features (the caller's guarantee); the table accesses are in bounds
    // (`i + l <= 256`), and every block access is inside the ranges `a` describes.
    unsafe {
        let table = multiplier_table::<V, P>(V::splat(m));
        let bf = lanes::Bf16::<V>::new(TO_DEST);
        // With a register table lookup, and enough blocks to pay for it, the encoded
        // results of all 16 codes under every scale byte (16 KiB), then one lookup per
        // vector of codes.
        // (For f32 the 16 products of each block are computed in place instead, below.)
        // With byte-plane lookups instead ([`Vector::FP4_PLANES`]), the same results as rows
        // of byte planes (the 16-bit codes' low bytes, then their high bytes), each built
        // when a block first needs it: two blocks per pair of `VPSHUFB`. `Ggml` into f32
        // too: its products are exact with at most 6 significant bits (see above), so each
        // is its BF16 code shifted left by 16.
        let planes_path = V::FP4_PLANES
            && a.rows * a.blocks >= LUT_MIN_BLOCKS
            && (D::KIND != DestKind::F32 || P == GGML);
        let lut = V::FAST_LOOKUP16
            && !planes_path
            && D::KIND != DestKind::F32
            && a.rows * a.blocks >= LUT_MIN_BLOCKS;
        if planes_path {
            dequantize_planes::<V, P, L, D>(a, &table, &bf);
            return true;
        }
        // The E2M1 values of codes 0..16 as f32 bits (`Ggml`: code 8 as code 0), for the
        // f32 products.
        let mut fp4 = [V::splat(0); 4];
        for (j, v) in fp4.iter_mut().enumerate().take(BLOCK / l) {
            let c = V::load_u8(IOTA.as_ptr().add(j * l), l);
            let c = if P == GGML {
                V::select(c.eq(V::splat(8)), V::splat(0), c)
            } else {
                c
            };
            *v = lanes::widen::<V, F4E2M1>(c);
        }
        // (Uninitialised: only the entries of the served scale bytes are written and read.)
        let mut enc = [const { MaybeUninit::<[u32; BLOCK]>::uninit() }; 256];
        if lut {
            for (s8, e) in enc.iter_mut().enumerate() {
                if table[s8] != BAD {
                    encode_codes::<V, P, D>(V::splat(table[s8]), e.write([0; BLOCK]), &bf);
                }
            }
        }
        for r in 0..a.rows {
            let row = a.values.add(r * a.values_stride);
            for b in 0..a.blocks {
                let (codes, sp) = block_at::<L>(a, r, b);
                let s8 = *sp;
                let out = row.add(b * BLOCK * size);
                let f = table[s8 as usize];
                if f == BAD {
                    spec_block::<P, L, D>(codes, s8, g, out);
                    continue;
                }
                let mut cs = [V::splat(0); 4];
                if L == PLANAR {
                    for (j, c) in cs.iter_mut().enumerate().take(BLOCK / l) {
                        *c = V::load_nibbles(codes.add(j * l / 2), l);
                    }
                } else {
                    cs = V::load_nibbles_split(codes);
                }
                if V::FAST_LOOKUP16 && D::KIND == DestKind::F32 {
                    // The block's 16 results `f32(fp4(k) · f)`, the very products the
                    // per-value path below computes for the codes `k` (the same IEEE
                    // operation on the same operands), then one lookup per vector of codes.
                    let fv = V::splat(f);
                    let mut t = [V::splat(0); 4];
                    for (t, &e) in t.iter_mut().zip(&fp4).take(BLOCK / l) {
                        *t = e.mul_ieee(fv);
                    }
                    for (j, &c) in cs.iter().enumerate().take(BLOCK / l) {
                        V::lookup16(&t, c).store_u32(out.add(j * l * size), l);
                    }
                    continue;
                }
                if lut {
                    // Written above: `table[s8]` is not `BAD`.
                    let e = enc[s8 as usize].assume_init_ref();
                    let mut t = [V::splat(0); 4];
                    for (j, t) in t.iter_mut().enumerate().take(BLOCK / l) {
                        *t = V::load_u32(e.as_ptr().add(j * l).cast(), l);
                    }
                    for (j, &c) in cs.iter().enumerate().take(BLOCK / l) {
                        let v = V::lookup16(&t, c);
                        let p = out.add(j * l * size);
                        match D::KIND {
                            DestKind::F32 => v.store_u32(p, l),
                            _ => v.store_u16(p, l),
                        }
                    }
                    continue;
                }
                let fv = V::splat(f);
                for (j, &c) in cs.iter().enumerate().take(BLOCK / l) {
                    let c = if P == GGML {
                        V::select(c.eq(V::splat(8)), V::splat(0), c)
                    } else {
                        c
                    };
                    let y = lanes::widen::<V, F4E2M1>(c).mul_ieee(fv);
                    store_dst::<V, D>(y, out.add(j * l * size), l, &bf);
                }
            }
        }
    }
    true
}

/// The multipliers `f` of the scale bytes in the lanes of `s` (`m` splat in `mv`), or
/// [`BAD`] for those whose blocks the specification must run (see [`dequantize`]).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn multipliers<V: Vector, const P: usize>(s: V, mv: V) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        if P == GGML {
            // ggml's UE4M3: bytes 0x00 and 0x7F are zero; otherwise bit 7 is ignored and
            // the rest is E4M3's value, but for 0xFF, whose exponent 15 and fraction 7
            // are finite: 480.
            let e = s.and(V::splat(0x7F));
            let u = lanes::widen::<V, F8E4M3>(e);
            let u = V::select(e.eq(V::splat(0x7F)), V::splat(0x43F0_0000), u);
            let u = V::select(s.eq(V::splat(0x7F)), V::splat(0), u);
            u.mul_ieee(mv)
        } else {
            let f = lanes::widen::<V, F8E4M3>(s).mul_ieee(mv);
            // NaN (an E4M3 NaN code) or ±Inf: the specification's.
            V::select(
                f.and(V::splat(ABS)).gt_i32(V::splat(INF - 1)),
                V::splat(BAD),
                f,
            )
        }
    }
}

/// The multipliers of all 256 scale bytes ([`multipliers`], 16 a vector) for the tensor
/// multiplier `m` (its splat).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn multiplier_table<V: Vector, const P: usize>(m: V) -> [u32; 256] {
    let l = V::LANES;
    let mut table = [0u32; 256];
    // SAFETY: the caller's guarantee; lanes `i..i + l` of `IOTA` and of the table, `i + l
    // <= 256` (`l` divides 256).
    unsafe {
        for i in (0..256).step_by(l) {
            let s = V::load_u8(IOTA.as_ptr().add(i), l);
            multipliers::<V, P>(s, m).store_u32(table.as_mut_ptr().add(i).cast(), l);
        }
    }
    table
}

/// The E2M1 magnitudes (codes 0..8 of [`E2M1_BITS`]) twice: the products of one pair of blocks in [`dequantize_pairs`].
static MAGS2: [u32; 16] = {
    let mut t = [0u32; 16];
    let mut c = 0;
    while c < 16 {
        t[c] = E2M1_BITS[c % 8];
        c += 1;
    }
    t
};

/// The word bases of the two blocks' results in a pair's table (lanes 0..8 of the products
/// are block A's, lanes 8..16 block B's, two words a lane): `16 · k`, plus 1 where the
/// encoded result is the lane's high word (BF16), as both words of every lane.
const fn pair_bases(hi: bool) -> [u32; 16] {
    let mut t = [0u32; 16];
    let mut i = 0;
    while i < 16 {
        let w = (16 * (i / 8) + hi as usize) as u32;
        t[i] = w | w << 16;
        i += 1;
    }
    t
}
static PAIR_BASES_HI: [u32; 16] = pair_bases(true);
static PAIR_BASES_LO: [u32; 16] = pair_bases(false);

/// One block by the specification (its `f` is [`BAD`]).
///
/// # Safety
/// `codes` holds the block's 8 code bytes in layout `L`, `out` is valid for 16 `D`.
#[inline(always)]
unsafe fn spec_block<const P: usize, const L: usize, D: BlockDest>(
    codes: *const u8,
    s8: u8,
    g: u32,
    out: *mut u8,
) {
    let mut c = [0u8; BLOCK];
    // SAFETY: the caller's guarantee.
    unsafe {
        for j in 0..BLOCK / 2 {
            let byte = *codes.add(j);
            if L == PLANAR {
                (c[2 * j], c[2 * j + 1]) = (byte & 0xF, byte >> 4);
            } else {
                (c[j], c[j + 8]) = (byte & 0xF, byte >> 4);
            }
        }
        let o = core::slice::from_raw_parts_mut(out.cast::<MaybeUninit<D>>(), BLOCK);
        spec::dequantize_block(profile(P), s8, &c, g, o);
    }
}

/// One block with a finite multiplier `f`, a vector of codes at a time: `D(f32(fp4 · f))`
/// (`Ggml` reads code 8 as code 0).
///
/// # Safety
/// `codes` holds the block's 8 code bytes in layout `L`, `out` is valid for 16 `D`; the
/// CPU has `V`'s features and the kernels' FP environment is loaded.
#[inline(always)]
unsafe fn direct_block<V: Vector, const P: usize, const L: usize, D: BlockDest>(
    codes: *const u8,
    f: u32,
    out: *mut u8,
    bf: &lanes::Bf16<V>,
) {
    let l = V::LANES;
    let size = size_of::<D>();
    // SAFETY: the caller's guarantee; vector `j` covers values `j · l ..` + l of the 16.
    unsafe {
        let mut cs = [V::splat(0); 4];
        if L == PLANAR {
            for (j, c) in cs.iter_mut().enumerate().take(BLOCK / l) {
                *c = V::load_nibbles(codes.add(j * l / 2), l);
            }
        } else {
            cs = V::load_nibbles_split(codes);
        }
        let fv = V::splat(f);
        for (j, &c) in cs.iter().enumerate().take(BLOCK / l) {
            let c = if P == GGML {
                V::select(c.eq(V::splat(8)), V::splat(0), c)
            } else {
                c
            };
            let y = lanes::widen::<V, F4E2M1>(c).mul_ieee(fv);
            store_dst::<V, D>(y, out.add(j * l * size), l, bf);
        }
    }
}

/// Rows of byte planes, one per scale byte, 64-byte aligned so that a row never straddles
/// two cache lines.
#[repr(C, align(64))]
struct PlaneRows([[u8; 32]; 256]);

/// What [`dequantize_planes`] knows of a scale byte: its row is not built yet, built, or its
/// blocks run the specification ([`BAD`]; its row is then zeros, so that the step that
/// reads it reads initialised bytes, and the block is rewritten afterwards).
const UNSEEN: u8 = 0;
const ROW: u8 = 1;
const SPEC: u8 = 2;

/// [`dequantize`] on a vector with byte-plane lookups ([`Vector::FP4_PLANES`]), for the
/// multipliers `table` (per scale byte, [`multipliers`]).
///
/// Four blocks a step (planar: 4 scale bytes and 32 code bytes; ggml: one `block_nvfp4`),
/// two pairs: [`Vector::fp4_pair_words`] looks block A's codes up in the row of A's scale
/// byte and B's in B's (their 16 code bytes are adjacent in both layouts, and so are their
/// 32 values), each row the byte planes of the 16 codes' results encoded for `D`
/// ([`plane_row`]: the very values [`direct_block`] stores; BF16 codes for an f32 `D`,
/// which only `Ggml` reads this way: its products are exact with at most 6 significant
/// bits, so each is its BF16 code shifted left by 16). The rows ready form a span of scale
/// bytes `lo..=hi` below 128, and a step reads its four scale bytes as one 32-bit word
/// and tests them against the span with integer operations (no load of a per-byte state);
/// where one is outside, the inner loop ends, the span grows over it (every row in
/// between is built, while the span stays at most `max_span` rows) and the step runs
/// outside the loop, so that the loop holds nothing but its pointers and constants. Bytes
/// from 128 on, or past `max_span`, get their own rows and run the step outside the loop
/// every time. A scale byte whose multiplier is [`BAD`] gets a zero row, and after the
/// whole call its blocks are written again by the specification. The blocks past the last
/// whole step of a row run [`direct_block`] (or the specification).
///
/// # Safety
/// As for [`dequantize`]; `V::FP4_PLANES`, `D` BF16 or F16, or f32 with `P == GGML`.
#[inline(always)]
unsafe fn dequantize_planes<V: Vector, const P: usize, const L: usize, D: BlockDest>(
    a: &NvRows,
    table: &[u32; 256],
    bf: &lanes::Bf16<V>,
) {
    let size = size_of::<D>();
    let mut rows = MaybeUninit::<PlaneRows>::uninit();
    let rows = rows.as_mut_ptr().cast::<[u8; 32]>();
    let mut state = [UNSEEN; 256];
    let mut spec_seen = false;
    let steps = a.blocks / 4;
    // The span `lo..=hi` of scale bytes below 128 whose rows are all ready (empty at first:
    // `lo = 128`, `hi = 127`), grown while it spans at most `max_span` rows, so that rows are
    // built for at most about one in 16 of the call's blocks.
    let (mut lo, mut hi) = (128u32, 127u32);
    let max_span = (a.rows * a.blocks / 16).max(16) as u32;
    // SAFETY: `V`'s features (the caller's guarantee); every block access is inside the
    // ranges `a` describes (step `q < steps` covers blocks `4q .. 4q + 4 <= a.blocks` of
    // row `r < a.rows`), and a row is read only once its state is not `UNSEEN` (written by
    // `prepare`): either all four bytes are in the span, whose rows are all ready, or the
    // step's rows were prepared just before it.
    unsafe {
        for r in 0..a.rows {
            let out = a.values.add(r * a.values_stride);
            let data = a.data.add(r * a.data_stride);
            let scales = a.scales.add(r * a.scales_stride);
            let mut q = 0;
            loop {
                // Whether the four scale bytes in `x` are all in the span, with no load: a
                // byte `x_i < 128` has `x_i >= lo` exactly when bit 7 of `x_i + 128 − lo`
                // is set, and `x_i <= hi` exactly when bit 7 of `x_i + 127 − hi` is clear
                // (neither sum carries out of its byte). A byte of 128 or more fails by
                // its own bit 7 (what its sums carry into the next byte can then only
                // make other bytes fail too).
                let (k1, k2) = ((128 - lo) * 0x0101_0101, (127 - hi) * 0x0101_0101);
                let spanned =
                    |x: u32| (x | x.wrapping_add(k2) | !x.wrapping_add(k1)) & 0x8080_8080 == 0;
                while q < steps {
                    let (codes, sp) = if L == PLANAR {
                        (data.add(q * 2 * BLOCK), scales.add(4 * q))
                    } else {
                        let p = data.add(q * GGML_BYTES);
                        (p.add(4), p)
                    };
                    let x = sp.cast::<u32>().read_unaligned().to_le();
                    if !spanned(x) {
                        break;
                    }
                    let s = [0, 8, 16, 24].map(|k| (x >> k) as u8 as usize);
                    let o = out.add(4 * q * BLOCK * size);
                    pair_planes::<V, L, D>(codes, rows.add(s[0]), rows.add(s[1]), o);
                    let o = o.add(2 * BLOCK * size);
                    pair_planes::<V, L, D>(codes.add(16), rows.add(s[2]), rows.add(s[3]), o);
                    q += 1;
                }
                if q == steps {
                    break;
                }
                // A byte outside the span: grow the span over it where that stays below
                // `max_span` rows (all its rows made ready); then the step's own four rows
                // (ready already if the span grew), and the step.
                let (codes, sp) = block_at::<L>(a, r, 4 * q);
                let s = [0, 1, 2, 3].map(|k| *sp.add(k) as u32);
                let (mut nlo, mut nhi) = if lo > hi { (127, 0) } else { (lo, hi) };
                for &x in &s {
                    if x < 128 {
                        (nlo, nhi) = (nlo.min(x), nhi.max(x));
                    }
                }
                if s.iter().all(|&x| x < 128) && nhi + 1 - nlo <= max_span {
                    for t in nlo..=nhi {
                        spec_seen |= prepare::<V, P, D>(t as usize, &mut state, rows, table, bf);
                    }
                    (lo, hi) = (nlo, nhi);
                }
                for &x in &s {
                    spec_seen |= prepare::<V, P, D>(x as usize, &mut state, rows, table, bf);
                }
                let [sa, sb, sc, sd] = s.map(|x| rows.add(x as usize));
                let o = out.add(4 * q * BLOCK * size);
                pair_planes::<V, L, D>(codes, sa, sb, o);
                pair_planes::<V, L, D>(codes.add(16), sc, sd, o.add(2 * BLOCK * size));
                q += 1;
            }
            for b in 4 * steps..a.blocks {
                let s = *block_at::<L>(a, r, b).1 as usize;
                prepare::<V, P, D>(s, &mut state, rows, table, bf);
                single::<V, P, L, D>(a, r, b, &state, table, bf);
            }
        }
        if spec_seen {
            for r in 0..a.rows {
                for b in 0..4 * steps {
                    let (codes, sp) = block_at::<L>(a, r, b);
                    if state[*sp as usize] == SPEC {
                        let out = a.values.add(r * a.values_stride + b * BLOCK * size);
                        spec_block::<P, L, D>(codes, *sp, a.g, out);
                    }
                }
            }
        }
    }
}

/// Makes the row of scale byte `s` ready for [`dequantize_planes`]: built, or zeros with the
/// byte marked for the specification (then returns `true`).
///
/// # Safety
/// `rows` valid for writing 256 rows; the CPU has `V`'s features.
#[inline(always)]
unsafe fn prepare<V: Vector, const P: usize, D: BlockDest>(
    s: usize,
    state: &mut [u8; 256],
    rows: *mut [u8; 32],
    table: &[u32; 256],
    bf: &lanes::Bf16<V>,
) -> bool {
    if state[s] != UNSEEN {
        return false;
    }
    let spec = table[s] == BAD;
    // SAFETY: the caller's guarantee; row `s < 256` is inside the rows.
    unsafe {
        rows.add(s).write(if spec {
            [0; 32]
        } else {
            plane_row::<V, P, D>(table[s], bf)
        });
    }
    state[s] = if spec { SPEC } else { ROW };
    spec
}

/// Block `b` of row `r` by itself in [`dequantize_planes`] (its scale byte prepared):
/// [`direct_block`], or the specification's.
///
/// # Safety
/// As for [`dequantize`], with `r < a.rows`, `b < a.blocks`.
#[inline(always)]
unsafe fn single<V: Vector, const P: usize, const L: usize, D: BlockDest>(
    a: &NvRows,
    r: usize,
    b: usize,
    state: &[u8; 256],
    table: &[u32; 256],
    bf: &lanes::Bf16<V>,
) {
    // SAFETY: the caller's guarantee: the block and its 16 values are inside `a`'s ranges.
    unsafe {
        let (codes, sp) = block_at::<L>(a, r, b);
        let s = *sp as usize;
        let out = a
            .values
            .add(r * a.values_stride + b * BLOCK * size_of::<D>());
        if state[s] == SPEC {
            spec_block::<P, L, D>(codes, s as u8, a.g, out);
        } else {
            direct_block::<V, P, L, D>(codes, table[s], out, bf);
        }
    }
}

/// Two blocks at `codes` (16 bytes in layout `L`) looked up in the rows `ta` and `tb`
/// ([`Vector::fp4_pair_words`]), stored as 32 values of `D` at `out` (f32: the BF16 codes
/// shifted to the top of each lane).
///
/// # Safety
/// `codes` readable for 16 bytes, `ta` and `tb` for 32, `out` writable for 32 `D`; the CPU
/// has `V`'s features.
#[inline(always)]
unsafe fn pair_planes<V: Vector, const L: usize, D: BlockDest>(
    codes: *const u8,
    ta: *const [u8; 32],
    tb: *const [u8; 32],
    out: *mut u8,
) {
    // SAFETY: the caller's guarantee; vector `j` stores words `j · w ..` + w of the 32.
    unsafe {
        let (ta, tb) = (ta.cast::<u8>(), tb.cast::<u8>());
        let v = if L == PLANAR {
            V::fp4_pair_words::<false>(codes, ta, tb)
        } else {
            V::fp4_pair_words::<true>(codes, ta, tb)
        };
        let (l, w) = (V::LANES, 2 * V::LANES);
        for (j, x) in v.iter().enumerate().take(2 * BLOCK / w) {
            if D::KIND == DestKind::F32 {
                let p = out.add(4 * j * w);
                x.words_lo().shl(16).store_u32(p, l);
                x.words_hi().shl(16).store_u32(p.add(4 * l), l);
            } else {
                x.store_words(out.add(2 * j * w), w);
            }
        }
    }
}

/// [`dequantize`] to BF16 or F16 on a 16-lane vector with a native word permute
/// ([`Vector::WORD_LOOKUP`]): no per-call table, two blocks per vector.
///
/// Per row, up to 16 blocks at a time: their scale bytes in the lanes of one vector and
/// their multipliers `f` computed there ([`multipliers`], the same operations as the
/// per-call table of the other path). Then per pair of blocks `(A, B)`:
///
/// * `f_A` in lanes 0..8 and `f_B` in lanes 8..16 (one lane permute), and one IEEE product
///   by [`MAGS2`]: `f32(m_j · f)` for the eight E2M1 magnitudes `m_j`, the specification's
///   `soft::mul(fp4, f)` for the positive codes `j` (the same operands, rounded to nearest
///   even with subnormals kept under the kernels' FP environment, as [`dequantize`]
///   argues; `f` is finite, so no product is NaN, and an overflow is the IEEE ±Inf that
///   `soft::mul` gives too);
/// * each product encoded for `D`: BF16 by the integer rounding of [`lanes::bf16`]
///   without its clamp (`TO_DEST` does not saturate) and without its NaN select (no lane is
///   NaN), leaving the code in the high word (`x + 0x7FFF + lsb`, whose high word is
///   `lanes::bf16`'s result before its shift); F16 by [`Vector::f16_codes`], the
///   narrowing [`store_dst`] stores, in the low word. These 16 lanes are the table;
/// * the 32 codes `c` of the two blocks as words ([`Vector::load_nibble_words`]), each
///   looked up at word `2 · (c & 7)` of its block's half (plus 1 for BF16's high word),
///   then its sign bit flipped for the negative codes `c >= 8`: `(−m) · f` rounds to
///   `−f32(m · f)` (round to nearest even is symmetric; `−0 · f = −(0 · f)`), and both
///   encodings negate by their sign bit 15 alone. `Ggml` reads code 8 as code 0, so its
///   flip skips code 8 (magnitude 0).
///
/// So every stored word is what the per-value path (`direct_block`) stores. A block whose
/// `f` is [`BAD`] gets garbage from its pair first and is then rewritten by the
/// specification; the last block of an odd group runs `direct_block`.
///
/// # Safety
/// As for [`dequantize`], with `m` its multiplier (finite for `ModelOpt` and `Mlx`, `g`
/// for `Ggml`) and `V::LANES == 16`.
#[inline(always)]
unsafe fn dequantize_pairs<V: Vector, const P: usize, const L: usize, D: BlockDest>(
    a: &NvRows,
    m: u32,
) {
    debug_assert!(V::LANES == 16 && D::KIND != DestKind::F32);
    let size = size_of::<D>();
    // SAFETY: `V`'s features (the caller's guarantee); every block access is inside the
    // ranges `a` describes (blocks `b0 .. b0 + nb` of row `r`), the constants and `fa`
    // hold 16 lanes.
    unsafe {
        let mv = V::splat(m);
        let bf = lanes::Bf16::<V>::new(TO_DEST);
        let mag2 = V::load_u32(MAGS2.as_ptr().cast(), 16);
        let hi = D::KIND == DestKind::Bf16;
        let bases = V::load_u32(
            if hi { &PAIR_BASES_HI } else { &PAIR_BASES_LO }
                .as_ptr()
                .cast(),
            16,
        );
        let table = if L != PLANAR {
            multiplier_table::<V, P>(mv)
        } else {
            [0u32; 256]
        };
        // `[0; 8] ++ [1; 8]`: the lanes of the first pair's multipliers (plus 2 a pair).
        let lanes01 = V::load_u32(IOTA_U32.as_ptr().cast(), 16).shr(3);
        let upper = lanes01.eq(V::splat(1));
        for r in 0..a.rows {
            let row = a.values.add(r * a.values_stride);
            let mut b0 = 0;
            while b0 < a.blocks {
                let nb = 16.min(a.blocks - b0);
                // Planar: the multipliers of the group in lanes, spread to each pair by a
                // lane permute. The ggml layout's scale bytes are 4 to a 36-byte block:
                // each pair's two multipliers from the per-call table, broadcast.
                let f = if L == PLANAR {
                    let s = V::load_u8(a.scales.add(r * a.scales_stride + b0), nb);
                    multipliers::<V, P>(s, mv)
                } else {
                    V::splat(0)
                };
                let fs = [f; 4];
                let mut pair = lanes01;
                let mut any_bad = false;
                for i in 0..nb / 2 {
                    let b = b0 + 2 * i;
                    let fp = if L == PLANAR {
                        let fp = V::lookup16(&fs, pair);
                        pair = pair.add(V::splat(2));
                        fp
                    } else {
                        let f0 = table[*block_at::<L>(a, r, b).1 as usize];
                        let f1 = table[*block_at::<L>(a, r, b + 1).1 as usize];
                        if P != GGML {
                            any_bad |= (f0 == BAD) | (f1 == BAD);
                        }
                        V::select(upper, V::splat(f1), V::splat(f0))
                    };
                    let y = mag2.mul_ieee(fp);
                    let t = if hi {
                        y.add(V::splat(0x7FFF)).add(y.shr(16).and(V::splat(1)))
                    } else {
                        y.f16_codes()
                    };
                    let codes = block_at::<L>(a, r, b).0;
                    let w = if L == PLANAR {
                        V::load_nibble_words::<false>(codes)
                    } else {
                        V::load_nibble_words::<true>(codes)
                    };
                    // Word index `2 · (c & 7)` plus the block's base; the sign bit of `c`
                    // (bit 3) moved to bit 15 of its word.
                    let idx = w.shl(1).and(V::splat(0x000E_000E)).or(bases);
                    let neg = if P == GGML {
                        // Not for magnitude 0: bit 3 of `(c & 7) + 7` is set for 1..=7.
                        w.and(w.and(V::splat(0x0007_0007)).add(V::splat(0x0007_0007)))
                    } else {
                        w
                    };
                    let v = idx.lookup_words(t);
                    let v = v.xor(neg.shl(12).and(V::splat(0x8000_8000)));
                    v.store_u32(row.add(b * BLOCK * size), 16);
                }
                if L == PLANAR {
                    // Lanes past `nb` hold the multiplier of scale byte 0 (finite).
                    let bad = V::select(f.eq(V::splat(BAD)), V::splat(1), V::splat(0));
                    any_bad = bad.reduce_max_u32() != 0;
                }
                if nb % 2 == 1 || any_bad {
                    let mut fa = [0u32; 16];
                    f.store_u32(fa.as_mut_ptr().cast(), 16);
                    for (i, &fi) in fa.iter().enumerate().take(nb) {
                        let b = b0 + i;
                        let (codes, sp) = block_at::<L>(a, r, b);
                        let fi = if L == PLANAR { fi } else { table[*sp as usize] };
                        let out = row.add(b * BLOCK * size);
                        if fi == BAD {
                            spec_block::<P, L, D>(codes, *sp, a.g, out);
                        } else if i == nb - 1 && nb % 2 == 1 {
                            direct_block::<V, P, L, D>(codes, fi, out, &bf);
                        }
                    }
                }
                b0 += nb;
            }
        }
    }
}

/// The E2M1 values of codes 0..16 as f32 bits, code 8 as `−0` (`[0]`) or as `+0` (`[1]`:
/// `Ggml`, which reads code 8 as code 0).
static E2M1_F32: [[u32; 16]; 2] = {
    let mut t = [[0u32; 16]; 2];
    let mut c = 0;
    while c < 8 {
        let v = E2M1_BITS[c];
        t[0][c] = v;
        t[1][c] = v;
        t[0][8 + c] = v | 0x8000_0000;
        t[1][8 + c] = if c == 0 { 0 } else { v | 0x8000_0000 };
        c += 1;
    }
    t
};

/// [`dequantize`] into BF16 or F16 on a vector with a native word permute and 16 lanes, for
/// calls of at least [`LUT_MIN_BLOCKS`] blocks: a row of the 16 codes' encoded results per
/// scale byte, made when a block first needs it, then per pair of blocks one lookup of
/// their 32 codes in their two rows.
///
/// * The multipliers `f` of all 256 scale bytes first ([`multipliers`], 16 a vector).
/// * Row `s`: the 16 products `f32(e2m1(c) · f)` by one IEEE multiply ([`E2M1_F32`], the
///   specification's `soft::mul(fp4, f)` for every code, negative ones included; `Ggml`'s
///   code 8 is `+0`), encoded as [`dequantize_pairs`] encodes them (BF16 by the integer
///   rounding, F16 by [`Vector::f16_codes`]), and stored as 16 words. A scale byte whose
///   `f` is [`BAD`] gets a row of zeros and its blocks are rewritten by the specification
///   after the loop.
/// * A pair `(A, B)`: rows `A` and `B` as the two halves of one register
///   ([`Vector::load_u32_halves`]), the 32 codes as words ([`Vector::load_nibble_words`]),
///   block `B`'s plus 16, and one [`Vector::lookup_words`]: every word stored is the
///   product's encoding, what the per-value path (`direct_block`) stores.
///
/// An odd last block of a row runs `direct_block` (or the specification).
///
/// # Safety
/// As for [`dequantize`], with `m` its multiplier (finite for `ModelOpt` and `Mlx`, `g`
/// for `Ggml`) and `V::LANES == 16`.
#[inline(always)]
unsafe fn dequantize_rows<V: Vector, const P: usize, const L: usize, D: BlockDest>(
    a: &NvRows,
    m: u32,
) {
    debug_assert!(V::LANES == 16 && D::KIND != DestKind::F32);
    let size = size_of::<D>();
    // SAFETY: `V`'s features (the caller's guarantee); every block access is inside the
    // ranges `a` describes (blocks `b` and `b + 1 < blocks` of row `r`), the table and row
    // accesses are at scale bytes (< 256), and each row is written (16 words, 32 bytes)
    // before it is read.
    unsafe {
        let table = multiplier_table::<V, P>(V::splat(m));
        let vals = V::load_u32(E2M1_F32[usize::from(P == GGML)].as_ptr().cast(), 16);
        let bf = lanes::Bf16::<V>::new(TO_DEST);
        let mut rows = [const { MaybeUninit::<[u16; BLOCK]>::uninit() }; 256];
        let mut built = [false; 256];
        // Block B's words index the register's upper 16 words: 16 in both words of lanes
        // 8..16.
        let half = V::load_u32(IOTA_U32.as_ptr().cast(), 16).shr(3).shl(4);
        let bases = half.or(half.shl(16));
        let mut any_bad = false;
        for r in 0..a.rows {
            let out = a.values.add(r * a.values_stride);
            let mut b = 0;
            while b + 2 <= a.blocks {
                let (codes, sp) = block_at::<L>(a, r, b);
                let pair = [*sp as usize, *block_at::<L>(a, r, b + 1).1 as usize];
                for &s8 in &pair {
                    if !built[s8] {
                        built[s8] = true;
                        let f = table[s8];
                        let row = rows[s8].as_mut_ptr().cast::<u8>();
                        if f == BAD {
                            any_bad = true;
                            V::splat(0).store_u16(row, 16);
                        } else {
                            let y = vals.mul_ieee(V::splat(f));
                            let e = if D::KIND == DestKind::Bf16 {
                                // `x + 0x7FFF + lsb`, its high word (see `dequantize_pairs`).
                                y.add(V::splat(0x7FFF))
                                    .add(y.shr(16).and(V::splat(1)))
                                    .shr(16)
                            } else {
                                y.f16_codes()
                            };
                            e.store_u16(row, 16);
                        }
                    }
                }
                let t = V::load_u32_halves(
                    rows[pair[0]].as_ptr().cast(),
                    rows[pair[1]].as_ptr().cast(),
                );
                let w = if L == PLANAR {
                    V::load_nibble_words::<false>(codes)
                } else {
                    V::load_nibble_words::<true>(codes)
                };
                w.or(bases)
                    .lookup_words(t)
                    .store_u32(out.add(b * BLOCK * size), 16);
                b += 2;
            }
            if b < a.blocks {
                let (codes, sp) = block_at::<L>(a, r, b);
                let f = table[*sp as usize];
                let o = out.add(b * BLOCK * size);
                if f == BAD {
                    spec_block::<P, L, D>(codes, *sp, a.g, o);
                } else {
                    direct_block::<V, P, L, D>(codes, f, o, &bf);
                }
            }
        }
        if any_bad {
            for r in 0..a.rows {
                let out = a.values.add(r * a.values_stride);
                for b in 0..a.blocks {
                    let (codes, sp) = block_at::<L>(a, r, b);
                    if table[*sp as usize] == BAD {
                        spec_block::<P, L, D>(codes, *sp, a.g, out.add(b * BLOCK * size));
                    }
                }
            }
        }
    }
}

/// Groups of `LANES` blocks whose scales [`quantize`] computes before their codes.
const SUPER: usize = 8;

/// Lane numbers 0..16.
static IOTA_U32: [u32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

/// Blocks from which a dequantization builds the per-call table of encoded results (256
/// vectors of work, against one per block).
const LUT_MIN_BLOCKS: usize = 64;

/// The row of byte planes of [`dequantize`]'s plane lookups for multiplier `f` (not
/// [`BAD`]): the 16 codes' results encoded as [`encode_codes`] encodes them for `D` (BF16
/// codes for an f32 `D`, which only `Ggml` reads this way), their low bytes, then their high
/// bytes.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn plane_row<V: Vector, const P: usize, D: BlockDest>(
    f: u32,
    bf: &lanes::Bf16<V>,
) -> [u8; 32] {
    let mut e = [0u32; BLOCK];
    // SAFETY: the caller's guarantee.
    unsafe {
        if D::KIND == DestKind::F32 {
            encode_codes::<V, P, crate::BF16>(V::splat(f), &mut e, bf);
        } else {
            encode_codes::<V, P, D>(V::splat(f), &mut e, bf);
        }
    }
    let mut row = [0u8; 32];
    for (k, &x) in e.iter().enumerate() {
        (row[k], row[16 + k]) = (x as u8, (x >> 8) as u8);
    }
    row
}

/// The 16 codes' results under multiplier `f`, encoded for `D` (f32 bits, or the BF16 or
/// F16 code in the low 16 bits), into `e`: the values the direct path stores, computed the
/// same way (`Ggml` reads code 8 as code 0).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn encode_codes<V: Vector, const P: usize, D: BlockDest>(
    f: V,
    e: &mut [u32; BLOCK],
    bf: &lanes::Bf16<V>,
) {
    let l = V::LANES;
    // SAFETY: `V`'s features (the caller's guarantee); every access is inside `e`, `IOTA`
    // or the local buffer (`j · l + l <= 16`).
    unsafe {
        for j in 0..BLOCK / l {
            let c = V::load_u8(IOTA.as_ptr().add(j * l), l);
            let c = if P == GGML {
                V::select(c.eq(V::splat(8)), V::splat(0), c)
            } else {
                c
            };
            let y = lanes::widen::<V, F4E2M1>(c).mul_ieee(f);
            let v = match D::KIND {
                DestKind::F32 => y,
                DestKind::Bf16 => lanes::bf16(y, bf),
                DestKind::F16 => {
                    let mut h = [0u16; BLOCK];
                    y.store_f16(h.as_mut_ptr().cast(), l, false);
                    V::load_u16(h.as_ptr().cast(), l)
                }
            };
            v.store_u32(e.as_mut_ptr().add(j * l).cast(), l);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Quantization
// ---------------------------------------------------------------------------------------

/// Per-call constants of the quantization.
struct Consts<V> {
    /// The tensor scale `g`.
    g: V,
    /// `ModelOpt`: `6 · g`; `Mlx`: `2688 / g` (both by `soft`, once).
    k: V,
    e4m3: lanes::Narrow<V>,
    fp4: lanes::Narrow<V>,
    bf: lanes::Bf16<V>,
}

/// The scale bytes and the per-block divisors of up to `LANES` blocks whose largest
/// magnitudes are the lanes of `amax` (f32 bits of `|x|`, NaN above `+Inf`).
///
/// `ModelOpt`: `q = amax / (6g)` (IEEE; `amax` is in `0 ..= +Inf` and `6g` finite and
/// non-zero, so `q` is not NaN), `±0 → 1.0`, `s8 = e4m3(q)` saturating, and the divisor
/// `f32(s8) · g`. A NaN lane (a NaN in the block) has `q = NaN` in the specification, whose
/// E4M3 code is `0x7F` (its NaN is `+NaN`); it is selected, and its divisor, the E4M3 NaN
/// times `g`, is a NaN that makes every quotient NaN: code 7 below, as the specification.
///
/// `Mlx`: `q = W(amax / 6)`, `s8 = e4m3(q · (2688 / g))` saturating with NaN → `+448`, the
/// divisor `f32(s8)`. `q · k` is NaN only for a NaN lane (`k` is finite and non-zero): those
/// lanes get `0x7E`, what the specification's `+NaN` gives.
#[inline(always)]
unsafe fn scales<V: Vector, const P: usize, S: BlockSource>(amax: V, c: &Consts<V>) -> (V, V) {
    // SAFETY: the caller has `V`'s features; no memory is touched.
    unsafe {
        let nan = amax.gt_i32(V::splat(INF));
        if P == MODELOPT {
            let q = amax.div_ieee(c.k);
            let q = V::select(q.and(V::splat(ABS)).eq(V::splat(0)), V::splat(ONE), q);
            let s8 = lanes::narrow::<V, F8E4M3>(q, &c.e4m3).and(V::splat(0xFF));
            let s8 = V::select(nan, V::splat(0x7F), s8);
            (s8, lanes::widen::<V, F8E4M3>(s8).mul_ieee(c.g))
        } else {
            let q = round_src::<V, S>(amax.div_ieee(V::splat(SIX)), &c.bf);
            let s8 = lanes::narrow::<V, F8E4M3>(q.mul_ieee(c.k), &c.e4m3).and(V::splat(0xFF));
            let s8 = V::select(nan, V::splat(0x7E), s8);
            (s8, lanes::widen::<V, F8E4M3>(s8))
        }
    }
}

/// `f32` bits of 0.75, 1.75, 3.5 (the E2M1 midpoints that ties-to-even rounds up), 6.0 and
/// 8.0.
const F0_75: u32 = 0x3F40_0000;
const F1_75: u32 = 0x3FE0_0000;
const F3_5: u32 = 0x4060_0000;
const F8: u32 = 0x4100_0000;
/// ModelOpt's codes of one vector of values `x` with divisor `d`: `y = x / d` (IEEE), then
/// `e2m1(y)` saturating, except that `y = −0.0` gives code 0 and a NaN `y` code 7
/// (ModelOpt's `_cast_fp4`). Both are decided on `y` by predicates (a NaN's bits are never
/// used): the quotient is `−0.0` or NaN exactly when `soft::div`'s is.
#[inline(always)]
unsafe fn modelopt_codes<V: Vector>(x: V, d: V, c: &Consts<V>) -> V {
    // SAFETY: the caller has `V`'s features; no memory is touched.
    unsafe {
        let y = x.div_ieee(d);
        let code = lanes::narrow::<V, F4E2M1>(y, &c.fp4).and(V::splat(0xF));
        let code = V::select(y.eq(V::splat(0x8000_0000)), V::splat(0), code);
        V::select(
            y.and(V::splat(ABS)).gt_i32(V::splat(INF)),
            V::splat(7),
            code,
        )
    }
}

/// MLX's `wq = W(x / d) · k` of one vector (IEEE operations and the source-type rounding).
#[inline(always)]
unsafe fn mlx_wq<V: Vector, S: BlockSource>(x: V, d: V, c: &Consts<V>) -> V {
    // SAFETY: the caller has `V`'s features; no memory is touched.
    unsafe { round_src::<V, S>(x.div_ieee(d), &c.bf).mul_ieee(c.k) }
}

/// MLX's code of `wq` (`mlx_fp4_argmin`): the first index, in the order `+0, 0.5, …, 6, −0,
/// −0.5, …, −6`, of the least `|f32(wq − lut[k])|`.
///
/// With `a = |wq|`: a candidate of the other sign than `wq` has the error `f32(a + m)`, at
/// least that of the same magnitude with `wq`'s sign, `f32(a − m)` in magnitude (RNE is
/// symmetric and monotonic), and `+0`, which comes first, has `a` itself; so the winner is
/// `+0` or a magnitude of `wq`'s sign, the first of the least `f32(|a − m|)` over the
/// magnitudes in ascending order, with the sign bit added when it is not zero. (`−0` never
/// wins: its error is `+0`'s.)
///
/// For `a < 8` every error that can tie the least is exact: `a` and the magnitudes are
/// multiples of `ulp(a)` (magnitudes are multiples of 0.5), and the best error (at most
/// `max(a − 6, gap/2) < 2^(exponent of a + 1)`) and the error of any smaller magnitude
/// (`a − m <= a`) are below `2^24 · ulp(a)`; a larger error, rounded, cannot fall below an
/// exact smaller one (monotonic rounding). So the winner is the nearest magnitude with ties
/// toward the smaller: E2M1's round to nearest even (`lanes::narrow`, saturating, which is
/// nearest for `a < 8`) except at the three midpoints where even is the larger (0.75, 1.75,
/// 3.5), which step down one code.
///
/// For `a >= 8` (and ±Inf) every magnitude is below `a`: the errors `f32(a − m)` fall as `m`
/// grows, the least is `e6 = f32(a − 6)`, and the winner is the first magnitude whose error
/// equals it (rounding makes ties; for huge `a`, or Inf, every error is `a` and `+0` wins).
/// Those lanes take that search (7 subtractions), only in vectors that have one.
///
/// A NaN `wq` gives code 0 (every error NaN), by a predicate.
#[inline(always)]
unsafe fn mlx_codes<V: Vector>(wq: V, big: bool, c: &Consts<V>) -> V {
    // SAFETY: the caller has `V`'s features; no memory is touched.
    unsafe {
        let a = wq.and(V::splat(ABS));
        let mut mag = lanes::narrow::<V, F4E2M1>(a, &c.fp4).and(V::splat(7));
        for mid in [F0_75, F1_75, F3_5] {
            mag = V::select(a.eq(V::splat(mid)), mag.sub(V::splat(1)), mag);
        }
        if big {
            let e6 = a.sub_ieee(V::splat(0x40C0_0000));
            let mut w = V::splat(7);
            for k in (0..7).rev() {
                let e = a.sub_ieee(V::splat(E2M1_BITS[k]));
                w = V::select(e.eq(e6), V::splat(k as u32), w);
            }
            mag = V::select(a.gt_i32(V::splat(F8 - 1)), w, mag);
        }
        // The sign bit (8) where `wq` is negative and the magnitude is not zero: bit 3 of
        // `mag + 7` is set exactly for `1 <= mag <= 7`.
        let code = mag.or_and(wq.shr(28).and(V::splat(8)), mag.add(V::splat(7)));
        V::select(a.gt_i32(V::splat(INF)), V::splat(0), code)
    }
}

/// Stores the codes (lanes below 16) of one block, held in its first `16 / LANES` vectors,
/// at `codes`: planar, one [`Vector::store_nibbles`] per vector (element `2j` in the low
/// nibble of byte `j`); ggml, [`Vector::store_nibbles_split`] (elements `j` and `j + 8` in
/// byte `j`).
///
/// # Safety
/// `codes` writable for the block's 8 bytes; the CPU has `V`'s features.
#[inline(always)]
unsafe fn store_block_codes<V: Vector, const L: usize>(cs: [V; 4], codes: *mut u8) {
    let l = V::LANES;
    // SAFETY: the caller's guarantee; the `16 / LANES` stores of `l / 2` bytes cover the
    // block's 8 bytes.
    unsafe {
        if L == PLANAR {
            for (j, &cj) in cs.iter().enumerate().take(BLOCK / l) {
                cj.store_nibbles(codes.add(j * l / 2), l);
            }
        } else {
            V::store_nibbles_split(cs, codes);
        }
    }
}

/// Whether no quotient of a `ModelOpt` block with largest magnitude bits `amax` and
/// divisor `den` (f32 bits) is NaN: `amax` finite (so every value is) and `den` finite and
/// not zero. Its codes are then the E2M1 narrowing of the quotients, with `−0` as `+0`
/// ([`modelopt_codes`] without its NaN case), which [`lanes::narrow4`] gives four vectors
/// at a time (E2M1 has no NaN: the saturating clamp takes ±Inf to ±6, as the codec does).
#[inline(always)]
fn quotients_finite(amax: u32, den: u32) -> bool {
    amax < INF && den & ABS != 0 && den & ABS < INF
}

/// `x` with a `−0` lane made `+0` (ModelOpt encodes `−0.0` as code 0).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn plus_zero<V: Vector>(x: V) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe { V::select(x.eq(V::splat(0x8000_0000)), V::splat(0), x) }
}

/// The codes of the block of 16 values of `S` at `p` with divisor `den` (f32 bits), in the
/// first `16 / LANES` vectors: [`modelopt_codes`] or [`mlx_codes`] of each vector.
///
/// # Safety
/// `p` readable for the block's values; the CPU has `V`'s features.
#[inline(always)]
unsafe fn block_codes<V: Vector, const P: usize, S: BlockSource>(
    p: *const u8,
    den: u32,
    c: &Consts<V>,
) -> [V; 4] {
    let l = V::LANES;
    let per = BLOCK / l;
    let size = size_of::<S>();
    // SAFETY: the caller's guarantee; every load is inside the block (`j · l + l <= 16`).
    unsafe {
        let dv = V::splat(den);
        let mut cs = [V::splat(0); 4];
        if P == MODELOPT {
            for (j, cj) in cs.iter_mut().enumerate().take(per) {
                let x = load_src::<V, S>(p.add(j * l * size), l);
                *cj = modelopt_codes(x, dv, c);
            }
        } else {
            let mut wq = [V::splat(0); 4];
            let mut hi = V::splat(0);
            for (j, w) in wq.iter_mut().enumerate().take(per) {
                let x = load_src::<V, S>(p.add(j * l * size), l);
                *w = mlx_wq::<V, S>(x, dv, c);
                hi = hi.max_u32(w.and(V::splat(ABS)));
            }
            // NaN lanes count as big too; `mlx_codes` decides them apart.
            let big = hi.reduce_max_u32() >= F8;
            for (cj, &w) in cs.iter_mut().zip(&wq).take(per) {
                *cj = mlx_codes(w, big, c);
            }
        }
        cs
    }
}

/// Quantizes the whole blocks of `a` (values of type `S`) under profile `P` (`ModelOpt` or
/// `Mlx`) and layout `L`, or returns `false` when the tensor scale is not one it serves.
///
/// Served: `g` finite and non-zero with `k` (`6g`, or `2688 / g`) finite and non-zero; then
/// no NaN arises but from a NaN in the data (see [`scales`], [`modelopt_codes`],
/// [`mlx_codes`]). (ModelOpt's own tensor scale is `amax / 2688`, zero only for an all-zero
/// tensor, which the specification quantizes.)
///
/// Per row, `LANES` blocks at a time: each block's magnitude bits reduced to one vector by
/// lane maxima, the `LANES` vectors' maxima as the lanes of one vector
/// ([`Vector::reduce_max_each`]), the scales of all of them as one vector ([`scales`]),
/// then each block's codes with its divisor. The values are read twice (both times from
/// L1). Where the vector has the byte methods ([`Vector::BYTES4`]) and a block is two
/// vectors, the planar layout codes two blocks at once in bytes ([`pairs_fast`], with the
/// group's scale bytes in one store): `ModelOpt` where no quotient of the group can be NaN
/// ([`quotients_finite`]: the E2M1 narrowing of four vectors, `−0` made `+0` first), `Mlx`
/// where every `|wq|` of the group is below 8 (`ggml::fp4_codes4` of `2|wq|`, the count of
/// midpoints below `|wq|` that [`mlx_codes`] gives there); the codes of both blocks are
/// stored together ([`Vector::store_nibbles_b4`]). Otherwise, the group runs pair by pair
/// with those checks per pair, and block by block where a pair fails them. `Ggml` runs
/// [`quantize_ggml`].
///
/// # Safety
/// As for [`NvFn`](crate::block::spec::kernels::NvFn), with `V`'s features.
#[inline(always)]
pub(crate) unsafe fn quantize<V: Vector, const P: usize, const L: usize, S: BlockSource>(
    a: &NvRows,
) -> bool {
    if P == GGML {
        // SAFETY: forwarded (the caller's guarantee).
        return unsafe { quantize_ggml::<V, L, S>(a) };
    }
    let ctx = Ctx::new(profile(P), a.g);
    let (g, k) = (ctx.g, ctx.k);
    let finite_nonzero = |x: u32| x & ABS != 0 && x & ABS < INF;
    if !(finite_nonzero(g) && finite_nonzero(k)) {
        return false;
    }
    let l = V::LANES;
    let per = BLOCK / l;
    let size = size_of::<S>();
    // SAFETY: `V`'s features (the caller's guarantee); every access is inside the ranges
    // `a` describes (blocks `b0 .. b0 + nb` of row `r`, `nb <= LANES`), or inside the local
    // arrays of 16 lanes.
    unsafe {
        let c = Consts {
            g: V::splat(g),
            k: V::splat(k),
            e4m3: lanes::Narrow::new::<F8E4M3>(if P == MLX { MLX_FP8 } else { SAT }),
            fp4: lanes::Narrow::new::<F4E2M1>(SAT),
            bf: lanes::Bf16::new(TO_DEST),
        };
        let fc = Fp4Consts::<V>::new();
        for r in 0..a.rows {
            let row = a.values.add(r * a.values_stride).cast_const();
            // Super-groups of up to `SUPER` groups of `LANES` blocks: first every group's
            // maxima and scales, then every group's codes, so that the codes of one group do
            // not wait for the latency of its own reduction and scales.
            let mut sg0 = 0;
            while sg0 < a.blocks {
                let sg_end = (sg0 + SUPER * l).min(a.blocks);
                let zero = V::splat(0);
                let mut gv = [(zero, zero, zero); SUPER];
                let mut dens = [[0u32; 16]; SUPER];
                let mut b0 = sg0;
                let mut gi = 0;
                while b0 < sg_end {
                    let nb = l.min(sg_end - b0);
                    // Each block's magnitudes reduced to one vector, then the `nb` vectors'
                    // maxima as the lanes of one vector (lanes past `nb`: 0).
                    let mut mv = [V::splat(0); 16];
                    for (i, m) in mv.iter_mut().enumerate().take(nb) {
                        let p = row.add((b0 + i) * BLOCK * size);
                        let mut v = V::splat(0);
                        for j in 0..per {
                            let x = load_src::<V, S>(p.add(j * l * size), l);
                            v = v.max_u32(x.and(V::splat(ABS)));
                        }
                        *m = v;
                    }
                    let amax = V::reduce_max_each(&mv);
                    let (s8, d) = scales::<V, P, S>(amax, &c);
                    d.store_u32(dens[gi].as_mut_ptr().cast(), nb);
                    gv[gi] = (amax, s8, d);
                    b0 += nb;
                    gi += 1;
                }
                let mut b0 = sg0;
                let mut gi = 0;
                while b0 < sg_end {
                    let nb = l.min(sg_end - b0);
                    let (amax, s8, d) = gv[gi];
                    let den = &dens[gi];
                    gi += 1;
                    if V::BYTES4 && L == PLANAR && per == 2 && nb % 2 == 0 {
                        s8.store_u8(a.scales.add(r * a.scales_stride + b0), nb);
                        if pairs_fast::<V, P, S>(a, r, b0, nb, amax, d, den, &c) {
                            b0 += nb;
                            continue;
                        }
                    }
                    if per == 1 && L == PLANAR {
                        s8.store_u8(a.scales.add(r * a.scales_stride + b0), nb);
                        if singles_fast::<V, P, S>(a, r, b0, nb, amax, d, den, &c, &fc) {
                            b0 += nb;
                            continue;
                        }
                    }
                    let mut am = [0u32; 16];
                    amax.store_u32(am.as_mut_ptr().cast(), nb);
                    let mut sb = [0u32; 16];
                    s8.store_u32(sb.as_mut_ptr().cast(), nb);
                    let mut i = 0;
                    while i < nb {
                        let b = b0 + i;
                        let (codes, sp) = block_at::<L>(a, r, b);
                        *sp = sb[i] as u8;
                        if P == MODELOPT
                            && V::BYTES4
                            && L == PLANAR
                            && per == 2
                            && i + 1 < nb
                            && quotients_finite(am[i], den[i])
                            && quotients_finite(am[i + 1], den[i + 1])
                        {
                            let (_, sp1) = block_at::<L>(a, r, b + 1);
                            *sp1 = sb[i + 1] as u8;
                            let p0 = row.add(b * BLOCK * size);
                            let p1 = row.add((b + 1) * BLOCK * size);
                            let (d0, d1) = (V::splat(den[i]), V::splat(den[i + 1]));
                            let y = [
                                plus_zero(load_src::<V, S>(p0, l).div_ieee(d0)),
                                plus_zero(load_src::<V, S>(p0.add(l * size), l).div_ieee(d0)),
                                plus_zero(load_src::<V, S>(p1, l).div_ieee(d1)),
                                plus_zero(load_src::<V, S>(p1.add(l * size), l).div_ieee(d1)),
                            ];
                            lanes::narrow4::<V, F4E2M1>(y, &c.fp4).store_nibbles_b4(codes);
                            i += 2;
                            continue;
                        }
                        if P == MLX && V::BYTES4 && L == PLANAR && per == 2 && i + 1 < nb {
                            let p0 = row.add(b * BLOCK * size);
                            let p1 = row.add((b + 1) * BLOCK * size);
                            let (d0, d1) = (V::splat(den[i]), V::splat(den[i + 1]));
                            let wq = [
                                mlx_wq::<V, S>(load_src::<V, S>(p0, l), d0, &c),
                                mlx_wq::<V, S>(load_src::<V, S>(p0.add(l * size), l), d0, &c),
                                mlx_wq::<V, S>(load_src::<V, S>(p1, l), d1, &c),
                                mlx_wq::<V, S>(load_src::<V, S>(p1.add(l * size), l), d1, &c),
                            ];
                            let abs = V::splat(ABS);
                            let hi = wq[0].and(abs).max_u32(wq[1].and(abs));
                            let hi = hi.max_u32(wq[2].and(abs).max_u32(wq[3].and(abs)));
                            if hi.reduce_max_u32() < F8 {
                                // Every |wq| below 8 and no NaN: `mlx_codes` is the number of
                                // midpoints strictly below |wq| (ties toward the smaller), with
                                // the sign where the code is not 0, which `fp4_codes4` gives for
                                // `m = 2|wq|` (exact for a normal |wq|; a smaller one stays
                                // below 0.5, code 0, as its own code is) against the doubled grid.
                                let one = V::splat(1 << 23);
                                let m = [
                                    wq[0].and(abs).add(one),
                                    wq[1].and(abs).add(one),
                                    wq[2].and(abs).add(one),
                                    wq[3].and(abs).add(one),
                                ];
                                let (_, sp1) = block_at::<L>(a, r, b + 1);
                                *sp1 = sb[i + 1] as u8;
                                fp4_codes4(m, wq).store_nibbles_b4(codes);
                                i += 2;
                                continue;
                            }
                        }
                        let cs = block_codes::<V, P, S>(row.add(b * BLOCK * size), den[i], &c);
                        if L == PLANAR && per == 2 && i + 1 < nb {
                            // Two blocks' codes (16 contiguous bytes in the planar layout)
                            // packed at once.
                            let (_, sp1) = block_at::<L>(a, r, b + 1);
                            *sp1 = sb[i + 1] as u8;
                            let cs1 = block_codes::<V, P, S>(
                                row.add((b + 1) * BLOCK * size),
                                den[i + 1],
                                &c,
                            );
                            V::store_nibbles4([cs[0], cs[1], cs1[0], cs1[1]], codes);
                            i += 2;
                            continue;
                        }
                        store_block_codes::<V, L>(cs, codes);
                        i += 1;
                    }
                    b0 += nb;
                }
                sg0 = sg_end;
            }
        }
    }
    true
}

/// The planar codes of blocks `b0 .. b0 + nb` (`nb` even) of row `r`, two blocks at a
/// time in bytes, when every block of the group qualifies; `false` (codes possibly written,
/// to be rewritten by the caller's per-block path) otherwise. `amax` holds the blocks'
/// largest magnitudes, `d` and `den` their divisors (lanes past `nb`: those of an all-zero
/// block, finite and non-zero).
///
/// `ModelOpt`: when no quotient of the group can be NaN ([`quotients_finite`], decided for
/// the `LANES` blocks at once), the E2M1 narrowing of four vectors of quotients, each
/// quotient `y` taken as `y − (−0)` first, which is `y` but for `−0`, which becomes `+0`
/// (ModelOpt encodes `−0.0` as code 0; exact, one IEEE subtraction). `Mlx`: the codes of
/// `2|wq|` by `ggml::fp4_codes4` (see [`quantize`]), valid when every `|wq|` of the group is
/// below 8 and none is NaN, which is checked once for the group after the codes are
/// written.
///
/// # Safety
/// As for [`quantize`], with `b0 + nb <= a.blocks`, `V`'s features and `V::BYTES4`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn pairs_fast<V: Vector, const P: usize, S: BlockSource>(
    a: &NvRows,
    r: usize,
    b0: usize,
    nb: usize,
    amax: V,
    d: V,
    den: &[u32; 16],
    c: &Consts<V>,
) -> bool {
    let l = V::LANES;
    let size = size_of::<S>();
    // SAFETY: the caller's guarantee; blocks `b0 .. b0 + nb` of row `r` are inside the
    // ranges `a` describes, and `den` holds 16 lanes.
    unsafe {
        let row = a.values.add(r * a.values_stride).cast_const();
        let abs = V::splat(ABS);
        if P == MODELOPT {
            if !group_finite(amax, d) {
                return false;
            }
            let nz = V::splat(0x8000_0000);
            for i in (0..nb).step_by(2) {
                let p0 = row.add((b0 + i) * BLOCK * size);
                let p1 = p0.add(BLOCK * size);
                let (d0, d1) = (V::splat(den[i]), V::splat(den[i + 1]));
                let y = [
                    load_src::<V, S>(p0, l).div_ieee(d0).sub_ieee(nz),
                    load_src::<V, S>(p0.add(l * size), l)
                        .div_ieee(d0)
                        .sub_ieee(nz),
                    load_src::<V, S>(p1, l).div_ieee(d1).sub_ieee(nz),
                    load_src::<V, S>(p1.add(l * size), l)
                        .div_ieee(d1)
                        .sub_ieee(nz),
                ];
                let codes = block_at::<PLANAR>(a, r, b0 + i).0;
                lanes::narrow4::<V, F4E2M1>(y, &c.fp4).store_nibbles_b4(codes);
            }
            true
        } else {
            let one = V::splat(1 << 23);
            let mut hi = V::splat(0);
            for i in (0..nb).step_by(2) {
                let p0 = row.add((b0 + i) * BLOCK * size);
                let p1 = p0.add(BLOCK * size);
                let (d0, d1) = (V::splat(den[i]), V::splat(den[i + 1]));
                let wq = [
                    mlx_wq::<V, S>(load_src::<V, S>(p0, l), d0, c),
                    mlx_wq::<V, S>(load_src::<V, S>(p0.add(l * size), l), d0, c),
                    mlx_wq::<V, S>(load_src::<V, S>(p1, l), d1, c),
                    mlx_wq::<V, S>(load_src::<V, S>(p1.add(l * size), l), d1, c),
                ];
                // `m = 2|wq|` for a normal `|wq|` (exact), as in `quantize`; no wrap (`|wq|`
                // is below 2^31).
                let m = [
                    wq[0].and(abs).add(one),
                    wq[1].and(abs).add(one),
                    wq[2].and(abs).add(one),
                    wq[3].and(abs).add(one),
                ];
                hi = hi.max_u32(m[0].max_u32(m[1]).max_u32(m[2].max_u32(m[3])));
                let codes = block_at::<PLANAR>(a, r, b0 + i).0;
                fp4_codes4(m, wq).store_nibbles_b4(codes);
            }
            // Every `|wq| < 8` (a NaN's bits are above).
            hi.reduce_max_u32() < F8 + (1 << 23)
        }
    }
}

/// Whether no quotient of a `ModelOpt` group can be NaN ([`quotients_finite`] for every
/// lane at once): every `amax < INF` and `0 < |d| < INF`. `x − 1` for these is at most
/// `INF − 2` unsigned (`amax` raised to 1 first, as 0 is fine), anything else above.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn group_finite<V: Vector>(amax: V, d: V) -> bool {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let t = d
            .and(V::splat(ABS))
            .sub(V::splat(1))
            .max_u32(amax.max_u32(V::splat(1)).sub(V::splat(1)));
        t.reduce_max_u32() <= INF - 2
    }
}

/// [`pairs_fast`] for vectors of 16 lanes (one block per vector, AVX-512), block by block:
/// the planar codes of blocks `b0 .. b0 + nb` of row `r` when every block of the group
/// qualifies, `false` (codes possibly written, to be rewritten by the caller's per-block
/// path) otherwise. The same checks as [`pairs_fast`], once for the group; `ModelOpt`'s
/// codes are the E2M1 narrowing of `y − (−0)` (no `−0` or NaN case to select), `Mlx`'s
/// [`fp4_code`] of `m = 2|wq|` (the count of midpoints below `|wq|`, ties toward the
/// smaller, that [`mlx_codes`] gives for `|wq| < 8`).
///
/// # Safety
/// As for [`quantize`], with `b0 + nb <= a.blocks`, `V`'s features and `V::LANES == 16`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn singles_fast<V: Vector, const P: usize, S: BlockSource>(
    a: &NvRows,
    r: usize,
    b0: usize,
    nb: usize,
    amax: V,
    d: V,
    den: &[u32; 16],
    c: &Consts<V>,
    fc: &Fp4Consts<V>,
) -> bool {
    let size = size_of::<S>();
    // SAFETY: the caller's guarantee; blocks `b0 .. b0 + nb` of row `r` are inside the
    // ranges `a` describes (one load of 16 values and one store of 8 code bytes each), and
    // `den` holds 16 lanes.
    unsafe {
        let row = a.values.add(r * a.values_stride).cast_const();
        let abs = V::splat(ABS);
        if P == MODELOPT {
            if !group_finite(amax, d) {
                return false;
            }
            let nz = V::splat(0x8000_0000);
            for (i, &di) in den.iter().enumerate().take(nb) {
                let x = load_src::<V, S>(row.add((b0 + i) * BLOCK * size), BLOCK);
                let y = x.div_ieee(V::splat(di)).sub_ieee(nz);
                let code = lanes::narrow::<V, F4E2M1>(y, &c.fp4).and(V::splat(0xF));
                code.store_nibbles(block_at::<PLANAR>(a, r, b0 + i).0, BLOCK);
            }
            true
        } else {
            let one = V::splat(1 << 23);
            let mut hi = V::splat(0);
            for (i, &di) in den.iter().enumerate().take(nb) {
                let x = load_src::<V, S>(row.add((b0 + i) * BLOCK * size), BLOCK);
                let wq = mlx_wq::<V, S>(x, V::splat(di), c);
                // `m = 2|wq|` for a normal `|wq|` (exact); a smaller one stays below 0.5.
                let m = wq.and(abs).add(one);
                hi = hi.max_u32(m);
                fp4_code(m, wq, fc).store_nibbles(block_at::<PLANAR>(a, r, b0 + i).0, BLOCK);
            }
            // Every `|wq| < 8` (a NaN's bits are above).
            hi.reduce_max_u32() < F8 + (1 << 23)
        }
    }
}

/// `Ggml`'s value `x / g` of one vector of source values (`x` itself for `g = 1`, as the
/// specification), f32 bits.
#[inline(always)]
unsafe fn ggml_x<V: Vector, S: BlockSource>(p: *const u8, g: V, div: bool) -> V {
    // SAFETY: the caller's guarantee (`LANES` values at `p`, `V`'s features).
    unsafe {
        let x = load_src::<V, S>(p, V::LANES);
        if div { x.div_ieee(g) } else { x }
    }
}

/// `Ggml`'s scale bytes (`ggml_fp32_to_ue4m3(amax / 6)`) of the blocks whose largest
/// non-NaN magnitudes are the lanes of `amax` (`0 ..= +Inf`), and their UE4M3 values `u`
/// (f32 bits).
///
/// `q = amax / 6` (IEEE, never NaN), `qc = min(q, 448)`. For `qc >= 2^-6` (the exponent
/// `e = exp − 120` of the specification positive) the code is `(e << 3) | m3` plus the
/// half-up bit below `m3`, which is `(qc >> 20) − 960 + ((qc >> 19) & 1)`: the carry of a
/// rounded-up `m3 = 7` increments `e` as the specification's `m = 0, e += 1` does, and a
/// result of `15 << 3` or more (`e >= 15`, also after the carry; `+Inf` is 448 by then) is
/// `0x7E`. Below, the code is `(int)(qc · 512 + 0.5)` in f32 (IEEE product and sum, as the
/// specification's `soft` operations) clamped to `0 ..= 7`, which is the number of
/// `k = 1 ..= 7` with `t >= k` (`t` non-negative, so its bits order as its value; `q = 0`
/// gives `t = 0.5`, code 0). The codes are at most `0x7E`, where ggml's UE4M3 decoding is
/// E4M3's (`0x00` → 0, subnormals `m · 2^-9`, `0x7E` → 448): `u` is the exact widening.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn ggml_scales<V: Vector>(amax: V) -> (V, V) {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let q = amax.div_ieee(V::splat(SIX));
        let qc = q.min_u32(V::splat(0x43E0_0000));
        let v = qc
            .shr(20)
            .sub(V::splat(960))
            .add(qc.shr(19).and(V::splat(1)));
        let v = V::select(v.gt_i32(V::splat(119)), V::splat(0x7E), v);
        // `qc · 512 + 0.5` (the subtraction of −0.5 is that sum, one IEEE rounding).
        let t = qc
            .mul_ieee(V::splat(0x4400_0000))
            .sub_ieee(V::splat(0xBF00_0000));
        let mut man = V::splat(0);
        for k in 1..=7u32 {
            man = man.inc(t.gt_i32(V::splat((k as f32).to_bits() - 1)));
        }
        let ue = V::select(qc.gt_i32(V::splat((121 << 23) - 1)), v, man);
        (ue, lanes::widen::<V, F8E4M3>(ue))
    }
}

/// The magnitude of `Ggml`'s values `x` (f32 bits) in units of `u / 2` as [`fp4_code`] and
/// [`fp4_codes4`] read it, for a block with `u > 0` and every non-NaN `|x| <= 8u` (so the
/// result is at most 16); a NaN `x` gives 0 (code 0).
///
/// The specification's code of `x` is the first minimum of `f32(|e2m1(k) · u − x|)` over
/// the 16 codes in order. A candidate of the other sign than `x` errs by at least `|x|`,
/// code 0's error, and `−0` (code 8, read as 0) comes after code 0, so the winner is code 0
/// or a magnitude of `x`'s sign (the sign bit where it is not 0). For `a = |x| <= 8u` the
/// errors decide as exact ones: the two candidates `m_j · u <= a <= m_(j+1) · u` (products
/// exact: at most 7 significant bits, above `2^-11`) are within a factor 2 of `a` (the E2M1
/// magnitudes from 0.5 on are at most a factor 2 apart, and `a <= 8u` bounds `a − 6u`'s and
/// `a − 4u`'s operands), so their differences are exact (Sterbenz); below `0.25u` code 0's
/// error `a` is below `0.25u <= f32(0.5u − a)`; any other candidate is at least `0.5u`
/// further, far beyond a rounding. So the code is the number of midpoints
/// `0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5` (times `u`) strictly below `a` (ties toward the
/// smaller), which is what `fp4_code` counts for `m = 2a/u` against the doubled midpoints.
///
/// `m` here is `2 · f32(a / u)` (one exponent step; a subnormal quotient gives a value below
/// 0.5 still, code 0), and `f32(a / u) > mid` exactly when `a > mid · u` for every
/// midpoint: if `a <= mid · u` the quotient is at most `mid` and rounds to at most `mid`
/// (monotonic rounding, `mid` representable); if `a > mid · u` then `a` is at least the next
/// float, `a − mid · u >= ulp(mid · u) >= 2^(e_mid + e_u − 23)` (`mid · u` is exact, its
/// exponent at least the sum of theirs), so `a / u − mid >= 2^(e_mid − 23) / (u / 2^e_u)`,
/// more than half of `ulp(mid)` as `u / 2^e_u < 2`: the quotient rounds above `mid`.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn ggml_m<V: Vector>(x: V, u: V) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let a = x.and(V::splat(ABS));
        let r = a.div_ieee(u);
        V::select(
            a.gt_i32(V::splat(INF)),
            V::splat(0),
            r.add(V::splat(1 << 23)),
        )
    }
}

/// Quantizes the whole blocks of `a` under the `Ggml` profile in layout `L`, or returns
/// `false` for a tensor scale that is zero, infinite or NaN.
///
/// Per row, `LANES` blocks at a time: each block's largest non-NaN `|x / g|` (NaN lanes
/// count as 0, as ggml's `amax < fabsf(x)` skips them), the blocks' maxima as one vector,
/// their scale bytes and UE4M3 values `u` ([`ggml_scales`]). A block with `u > 0` and
/// `amax <= 8u` (every block but those of a clamped scale, `amax / 6 >= 248`, one with an
/// infinite value, and the all-zero or tiny ones whose scale is 0) takes its codes from
/// [`ggml_m`] and `ggml::fp4_code` (pairs of blocks on a [`Vector::BYTES4`] vector:
/// `fp4_codes4`, two blocks in one store); the others run the specification.
///
/// # Safety
/// As for [`NvFn`](crate::block::spec::kernels::NvFn), with `V`'s features.
#[inline(always)]
unsafe fn quantize_ggml<V: Vector, const L: usize, S: BlockSource>(a: &NvRows) -> bool {
    let g = a.g;
    if !(g & ABS != 0 && g & ABS < INF) {
        return false;
    }
    let div = g != ONE;
    let l = V::LANES;
    let per = BLOCK / l;
    let size = size_of::<S>();
    // SAFETY: `V`'s features (the caller's guarantee); every access is inside the ranges
    // `a` describes (blocks `b0 .. b0 + nb` of row `r`, `nb <= LANES`), or inside the local
    // arrays of 16 lanes; a block's values are `S`-aligned (the slot's contract).
    unsafe {
        let gv = V::splat(g);
        let fc = Fp4Consts::<V>::new();
        let lane = V::load_u32(IOTA_U32.as_ptr().cast(), l);
        let abs = V::splat(ABS);
        for r in 0..a.rows {
            let row = a.values.add(r * a.values_stride).cast_const();
            // As in `quantize`: the scales of up to `SUPER` groups first, then their codes.
            let mut sg0 = 0;
            while sg0 < a.blocks {
                let sg_end = (sg0 + SUPER * l).min(a.blocks);
                let mut specs = [[0u32; 16]; SUPER];
                let mut us = [[0u32; 16]; SUPER];
                let mut ues = [[0u32; 16]; SUPER];
                let mut b0 = sg0;
                let mut gi = 0;
                while b0 < sg_end {
                    let nb = l.min(sg_end - b0);
                    let mut mv = [V::splat(0); 16];
                    for (i, m) in mv.iter_mut().enumerate().take(nb) {
                        let p = row.add((b0 + i) * BLOCK * size);
                        let mut v = V::splat(0);
                        for j in 0..per {
                            let x = ggml_x::<V, S>(p.add(j * l * size), gv, div).and(abs);
                            v = v.max_u32(V::select(x.gt_i32(V::splat(INF)), V::splat(0), x));
                        }
                        *m = v;
                    }
                    let amax = V::reduce_max_each(&mv);
                    let (ue, u) = ggml_scales(amax);
                    // 1 where the specification runs the block (lanes past `nb` unused).
                    let spec_lane = V::select(
                        amax.gt_i32(u.mul_ieee(V::splat(0x4100_0000))),
                        V::splat(1),
                        V::select(u.eq(V::splat(0)), V::splat(1), V::splat(0)),
                    );
                    let spec_lane =
                        V::select(lane.gt_i32(V::splat(nb as u32 - 1)), V::splat(0), spec_lane);
                    spec_lane.store_u32(specs[gi].as_mut_ptr().cast(), nb);
                    u.store_u32(us[gi].as_mut_ptr().cast(), nb);
                    ue.store_u32(ues[gi].as_mut_ptr().cast(), nb);
                    b0 += nb;
                    gi += 1;
                }
                let mut b0 = sg0;
                let mut gi = 0;
                while b0 < sg_end {
                    let nb = l.min(sg_end - b0);
                    let (to_spec, ub, sb) = (&specs[gi], &us[gi], &ues[gi]);
                    gi += 1;
                    let mut i = 0;
                    while i < nb {
                        let b = b0 + i;
                        let (codes, sp) = block_at::<L>(a, r, b);
                        let p = row.add(b * BLOCK * size);
                        if to_spec[i] != 0 {
                            let blk = core::slice::from_raw_parts(p.cast::<S>(), BLOCK);
                            let (s8, c) = spec::ggml_quantize_block(blk, g);
                            *sp = s8;
                            for j in 0..BLOCK / 2 {
                                *codes.add(j) = if L == PLANAR {
                                    c[2 * j] | c[2 * j + 1] << 4
                                } else {
                                    c[j] | c[j + 8] << 4
                                };
                            }
                            i += 1;
                            continue;
                        }
                        *sp = sb[i] as u8;
                        // Two blocks' codes are 16 adjacent bytes in the planar layout, and in
                        // the ggml one for an even `b` (`b0` is a multiple of `LANES`): a pair
                        // from an odd one would cross the next `block_nvfp4`'s scale bytes.
                        if V::BYTES4
                            && per == 2
                            && i + 1 < nb
                            && to_spec[i + 1] == 0
                            && (L == PLANAR || i % 2 == 0)
                        {
                            let (_, sp1) = block_at::<L>(a, r, b + 1);
                            *sp1 = sb[i + 1] as u8;
                            let p1 = p.add(BLOCK * size);
                            let (u0, u1) = (V::splat(ub[i]), V::splat(ub[i + 1]));
                            let x = [
                                ggml_x::<V, S>(p, gv, div),
                                ggml_x::<V, S>(p.add(l * size), gv, div),
                                ggml_x::<V, S>(p1, gv, div),
                                ggml_x::<V, S>(p1.add(l * size), gv, div),
                            ];
                            let m = [
                                ggml_m(x[0], u0),
                                ggml_m(x[1], u0),
                                ggml_m(x[2], u1),
                                ggml_m(x[3], u1),
                            ];
                            if L == PLANAR {
                                fp4_codes4(m, x).store_nibbles_b4(codes);
                            } else {
                                // A sub-block's byte `j` holds its codes `j` and `j + 8`: values
                                // 0..8 with 8..16 of each block, which the halves store pairs
                                // when the middle vectors trade places.
                                fp4_codes4([m[0], m[2], m[1], m[3]], [x[0], x[2], x[1], x[3]])
                                    .store_nibbles_halves_b4(codes);
                            }
                            i += 2;
                            continue;
                        }
                        let uv = V::splat(ub[i]);
                        let mut cs = [V::splat(0); 4];
                        for (j, cj) in cs.iter_mut().enumerate().take(per) {
                            let x = ggml_x::<V, S>(p.add(j * l * size), gv, div);
                            *cj = fp4_code(ggml_m(x, uv), x, &fc);
                        }
                        store_block_codes::<V, L>(cs, codes);
                        i += 1;
                    }
                    b0 += nb;
                }
                sg0 = sg_end;
            }
        }
    }
    true
}

/// Fills the NVFP4 slots of a block-kernel table with an instantiation's `$dq` (dequantize,
/// generic over `const P`, `const L` and the destination type) and `$q` (quantize, over
/// `const P`, `const L` and the source type).
macro_rules! nv_fill {
    ($t:ident, $dq:ident, $q:ident) => {{
        use crate::block::spec::kernels::NvFn;
        use crate::simd::generic::block::nvfp4::{GGML, GGML_LAYOUT, MLX, MODELOPT, PLANAR};
        use crate::{BF16, F16};
        macro_rules! dq3 {
            ($p:expr, $l:expr) => {
                [
                    Some($dq::<{ $p }, { $l }, f32> as NvFn),
                    Some($dq::<{ $p }, { $l }, BF16> as NvFn),
                    Some($dq::<{ $p }, { $l }, F16> as NvFn),
                ]
            };
        }
        macro_rules! q3 {
            ($p:expr, $l:expr) => {
                [
                    Some($q::<{ $p }, { $l }, f32> as NvFn),
                    Some($q::<{ $p }, { $l }, BF16> as NvFn),
                    Some($q::<{ $p }, { $l }, F16> as NvFn),
                ]
            };
        }
        $t.nv_dequant = [
            [dq3!(MODELOPT, PLANAR), dq3!(MODELOPT, GGML_LAYOUT)],
            [dq3!(MLX, PLANAR), dq3!(MLX, GGML_LAYOUT)],
            [dq3!(GGML, PLANAR), dq3!(GGML, GGML_LAYOUT)],
        ];
        $t.nv_quant = [
            [q3!(MODELOPT, PLANAR), q3!(MODELOPT, GGML_LAYOUT)],
            [q3!(MLX, PLANAR), q3!(MLX, GGML_LAYOUT)],
            [q3!(GGML, PLANAR), q3!(GGML, GGML_LAYOUT)],
        ];
    }};
}
pub(crate) use nv_fill;
