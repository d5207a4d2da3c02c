//! The MX `Ocp`/`Ceil` block kernels of all five elements (E4M3, E5M2, E2M3, E3M2, packed
//! E2M1), written once: dequantization to f32, BF16 and F16 (`mx_dequant`) and quantization
//! from f32 (`mx_quant`), bit for bit the scalar specification (`block/spec/mx.rs`) under
//! every MXCSR/FPCR setting. Each ISA instantiates them at its own width through [`Inst`]
//! and [`fill`].
//!
//! # Dequantization
//!
//! The specification rounds the exact product `decode(code) · 2^e` (`e = s − 127`) once to
//! the destination. Every element value has at most 4 significant bits, so whenever every
//! non-zero finite value of the element times `2^e` is a *normal* f32, that f32 is exact
//! and rounding it once is the specification's result. That holds for the scale bytes
//! `LO..=HI`, `LO = BIAS + MAN_BITS` (the smallest subnormal `2^(1 − BIAS − MAN_BITS)`
//! times `2^e` is at least `2^-126`) and `HI = 254 − emax` (the largest value stays below
//! 2^128): E4M3 10..=246, E5M2 17..=239, E2M3 4..=252, E3M2 5..=250, E2M1 2..=252, the
//! ranges the hand-written AVX2 and NEON kernels use. There the codes widen with
//! [`lanes::widen_pow2`], the element widening with `e` folded into its constants (no
//! operation per lane beyond the widening's own; its docs argue exactness). Scale `0xFF`
//! stores the canonical NaN block (`0x7FC00000` through the same stores); the other scales
//! (tiny or huge blocks) run the specification's `dequantize_block` through a stack buffer.
//!
//! Destinations: f32 as is; BF16 by truncation (`x >> 16`: at most 4 significant bits, so
//! the low half is zero; a NaN from the widening is quiet already, and its top half is what
//! vcvt's f32 → BF16 narrowing keeps); F16 by [`Vector::store_f16`] without saturation, the
//! IEEE narrowing (nearest even, overflow to ±Inf) that `BlockDest::from_f32_bits` specifies,
//! its inputs normal, zero, Inf or quiet NaN.
//!
//! # Quantization
//!
//! Per block: `amax` is the unsigned maximum of the magnitude bits (NaN above `+Inf`, as
//! `amax_bits` orders them), the scale byte [`spec::scale_byte_fast`], one per 32 values. Scale `0xFF`
//! (a NaN or infinity in the block) writes zero codes. For the scale bytes `Q_LO..=Q_HI`
//! the codes are the element narrowing [`lanes::narrow`] (`Saturate`, the specification's
//! `SAT`) run with the constants of [`Narrow::scaled`]: the fused multiply-add method moved
//! down by `2^e`, which rounds `x` once to the element grid times `2^e`, i.e. `x · 2^-e` to
//! the element, with no multiplication by the scale. Exact when every constant, `t · K` and
//! the sum stay normal f32 and an `a` that DAZ reads as zero is below half the scaled
//! smallest quantum:
//!
//! * `Q_LO = 1 + MAN_BITS + BIAS`: `2^-126 ≤` half the scaled quantum
//!   `2^(emin − MAN_BITS + e)` (`emin = 1 − BIAS`), so an f32 subnormal `x` (whatever DAZ
//!   does to it) gives code ±0, as the exact product does; the scaled smallest normal and
//!   subnormal grid are then normal f32 too. E4M3 11, E5M2 18, E2M3 5, E3M2 6, E2M1 3.
//! * `Q_HI = 229 − emax + MAN_BITS`: `t ≤ 2^(emax + e)` and `K < 2^(24 − MAN_BITS)`, so the
//!   sum stays below `2^(emax + e + 25 − MAN_BITS) ≤ 2^127`. E4M3 224, E5M2 216, E2M3 230,
//!   E3M2 227, E2M1 228 (an `amax` of at least 2^94 or so).
//!
//! The multiply-add is the only float instruction: AVX-512 carries its rounding in the
//! instruction, the AVX2 instantiation runs under MXCSR.RC = nearest (switched for the call
//! when needed), NEON under FPCR = 0, and WebAssembly's multiply then add is exact as its
//! module argues (`t` a power of two, the product `t · K` exact and normal). The other
//! scales (tiny blocks, whose subnormal values may give non-zero codes, and huge ones) run
//! the specification's `quantize_row` through stack buffers.
//!
//! Kernels take whole blocks only (the slots' contract); 32 is a multiple of every
//! `LANES`, so every load and store is a full vector.

use core::mem::MaybeUninit;
use core::ptr;

use super::fp8::Put4;
use crate::arch::Isa;
use crate::block::spec::kernels::{BlockKernels, MxDequantFn, MxQuantFn};
use crate::block::spec::mx::{self as spec, BLOCK, MxElement, MxRule};
use crate::block::spec::{BlockDest, DestKind};
use crate::codec::Format;
use crate::simd::Vector;
use crate::simd::generic::lanes::{self, Narrow};
use crate::simd::generic::words::{self, Enc};
use crate::{BF16, F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E5M2, F16};

/// An MX element format.
pub(crate) trait Element: Format {
    /// Its `MxElement`.
    const ELEMENT: MxElement;
    /// Two codes per byte (E2M1).
    const PACKED: bool = false;
    /// Code bytes per block.
    const BYTES: usize = if Self::PACKED { BLOCK / 2 } else { BLOCK };
    /// The dequantization's scale bytes `LO..=HI` (module docs).
    const LO: u8 = (Self::BIAS + Self::MAN_BITS as i32) as u8;
    /// See [`LO`](Self::LO).
    const HI: u8 = (254 - Self::ELEMENT.emax()) as u8;
    /// The quantization's scale bytes `Q_LO..=Q_HI` (module docs).
    const Q_LO: u8 = (1 + Self::MAN_BITS as i32 + Self::BIAS) as u8;
    /// See [`Q_LO`](Self::Q_LO).
    const Q_HI: u8 = (229 - Self::ELEMENT.emax() + Self::MAN_BITS as i32) as u8;
}

impl Element for F8E4M3 {
    const ELEMENT: MxElement = MxElement::E4M3;
}
impl Element for F8E5M2 {
    const ELEMENT: MxElement = MxElement::E5M2;
}
impl Element for F6E2M3 {
    const ELEMENT: MxElement = MxElement::E2M3;
}
impl Element for F6E3M2 {
    const ELEMENT: MxElement = MxElement::E3M2;
}
impl Element for F4E2M1 {
    const ELEMENT: MxElement = MxElement::E2M1;
    const PACKED: bool = true;
}

// The ranges of the module docs, checked at compile time.
const _: () = {
    assert!(F8E4M3::LO == 10 && F8E4M3::HI == 246 && F8E4M3::Q_LO == 11 && F8E4M3::Q_HI == 224);
    assert!(F8E5M2::LO == 17 && F8E5M2::HI == 239 && F8E5M2::Q_LO == 18 && F8E5M2::Q_HI == 216);
    assert!(F6E2M3::LO == 4 && F6E2M3::HI == 252 && F6E2M3::Q_LO == 5 && F6E2M3::Q_HI == 230);
    assert!(F6E3M2::LO == 5 && F6E3M2::HI == 250 && F6E3M2::Q_LO == 6 && F6E3M2::Q_HI == 227);
    assert!(F4E2M1::LO == 2 && F4E2M1::HI == 252 && F4E2M1::Q_LO == 3 && F4E2M1::Q_HI == 228);
};

/// A dequantization destination.
pub(crate) trait Dest: BlockDest {
    /// Bytes per value.
    const SIZE: usize;
    /// Stores `V::LANES` values, each the f32 bits of an exact product (module docs).
    ///
    /// # Safety
    /// `p` writable for `V::LANES · SIZE` bytes; the CPU has `V`'s features.
    unsafe fn put<V: Vector>(x: V, p: *mut u8);
}

impl Dest for f32 {
    const SIZE: usize = 4;
    #[inline(always)]
    unsafe fn put<V: Vector>(x: V, p: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { x.store_u32(p, V::LANES) }
    }
}

impl Dest for BF16 {
    const SIZE: usize = 2;
    #[inline(always)]
    unsafe fn put<V: Vector>(x: V, p: *mut u8) {
        // Truncation is the rounding here (module docs).
        // SAFETY: forwarded contract.
        unsafe { x.shr(16).store_u16(p, V::LANES) }
    }
}

impl Dest for F16 {
    const SIZE: usize = 2;
    #[inline(always)]
    unsafe fn put<V: Vector>(x: V, p: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { x.store_f16(p, V::LANES, false) }
    }
}

/// One block by the specification's `dequantize_block`, through a stack buffer (the
/// destination need not be aligned for `D`).
///
/// # Safety
/// `c` readable for `E::BYTES` bytes, `d` writable for `32 · D::SIZE` bytes.
#[cold]
#[inline(never)]
unsafe fn dequant_spec<E: Element, D: Dest>(c: *const u8, s: u8, d: *mut u8) {
    // SAFETY: `c` is readable for E::BYTES bytes (u8, no alignment needed).
    let codes = unsafe { core::slice::from_raw_parts(c, E::BYTES) };
    let mut out = [MaybeUninit::<D>::uninit(); BLOCK];
    spec::dequantize_block::<D>(E::ELEMENT, codes, 0, s, &mut out);
    // SAFETY: `dequantize_block` initialised all 32 values, 32 · SIZE bytes, which `d` can
    // take; the buffer is a distinct local.
    unsafe { ptr::copy_nonoverlapping(out.as_ptr().cast::<u8>(), d, BLOCK * D::SIZE) };
}

/// The blocks of a row whose scale byte a SIMD loop leaves to the specification (outside
/// its window `lo..=hi`, `E::LO..=E::HI` for most; `0xFF` too when `NAN`, which
/// [`dequant`]'s loop writes itself), each through [`dequant_spec`].
///
/// # Safety
/// As for [`dequant`].
#[cold]
#[inline(never)]
pub(crate) unsafe fn dequant_spec_blocks<E: Element, D: Dest, const NAN: bool>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    (lo, hi): (u8, u8),
    dst: *mut u8,
) {
    for b in 0..blocks {
        // SAFETY: b < blocks: scale b, the block's code bytes and values are inside the
        // caller's ranges.
        unsafe {
            let s = scales.add(b).read();
            if !(lo..=hi).contains(&s) && (NAN || s != 0xFF) {
                dequant_spec::<E, D>(codes.add(b * E::BYTES), s, dst.add(b * BLOCK * D::SIZE));
            }
        }
    }
}

/// MX dequantization of `blocks` whole blocks (the `MxDequantFn` body). The loop calls no
/// function (so that a call of a few blocks pays no register saves): the blocks whose scale
/// needs the specification are skipped, then written by [`dequant_spec_blocks`] after it.
///
/// # Safety
/// The `MxDequantFn` contract for element `E` and destination `D`; the CPU has `V`'s
/// features (and, on aarch64, FPCR is 0 for [`Vector::store_f16`]).
#[inline(always)]
pub(crate) unsafe fn dequant<V: Vector, E: Element, D: Dest>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    let mut skipped = false;
    // The subnormal codes' BF16 words for the word path (unused otherwise).
    let table = const { words::sub_table::<E>(Enc::Bf16) };
    // SAFETY: the table holds 16 words, 8 u32: the first load reads `min(LANES, 8)` of them
    // from word 0, the second (only for 4 lanes, where a vector holds 8 words) the 4 from
    // word 8 on; the CPU has `V`'s features (the caller's guarantee).
    let sub = unsafe {
        let t0 = V::load_u32(table.as_ptr().cast(), V::LANES.min(8));
        let t1 = if V::LANES < 8 {
            V::load_u32(table.as_ptr().add(8).cast(), V::LANES)
        } else {
            t0
        };
        [t0, t1]
    };
    // E2M1 into F16 where a 16-entry lookup is one permutation: the 16 values (code 8 as
    // `−0`), scaled per block, looked up and rounded to F16 by the store.
    let fp4_f16 = E::PACKED && D::KIND == DestKind::F16 && V::FAST_LOOKUP16;
    // SAFETY: the CPU has `V`'s features (the caller's guarantee).
    let fp4_table = unsafe { super::ggml::E2m1Table::<V>::new(true) };
    for b in 0..blocks {
        // SAFETY: b < blocks, so scale b, code bytes b · BYTES.. + BYTES and values
        // 32b..32b + 32 are inside the caller's ranges; every vector below covers LANES of
        // the block's 32 values (32 is a multiple of LANES).
        unsafe {
            let s = scales.add(b).read();
            let c = codes.add(b * E::BYTES);
            let d = dst.add(b * BLOCK * D::SIZE);
            if fp4_f16 && (E::LO..=E::HI).contains(&s) {
                // Each entry is the code's exact value times 2^(s − 127), a normal f32 in
                // `LO..=HI` (`E2m1Table::scaled`), rounded once to F16 by `D::put`: the
                // same lanes as `widen_pow2` below gives.
                let t = fp4_table.scaled(s);
                let mut i = 0;
                while i < BLOCK {
                    let code = V::load_nibbles(c.add(i / 2), V::LANES);
                    D::put(V::lookup16(&t, code), d.add(i * D::SIZE));
                    i += V::LANES;
                }
            } else if E::PACKED
                && V::FP4_PLANES
                && D::KIND != DestKind::F16
                && (E::LO..=E::HI).contains(&s)
            {
                // Two byte-plane lookups for the block's 32 codes (`LO..=HI` is `2..=252`).
                super::ggml::fp4_block_planes::<V, D, false>(c, s, true, d);
            } else if E::PACKED
                && matches!(D::KIND, DestKind::Bf16 | DestKind::F32)
                && (E::LO..=E::HI).contains(&s)
            {
                // One word lookup per code byte, code 8 as −0 (f32: the word, an exact
                // BF16 value in `LO..=HI`, in the top half, as the `Ggml` profile does).
                super::ggml::fp4_rows_block::<V, D, false>(c, s, true, d);
            } else if words_path::<V, E, D>() && (E::LO..=E::HI).contains(&s) {
                // BF16 words, `2 · LANES` values a vector, with the scale added to their
                // exponent fields (`words::widen_words_pow2`, exact in `LO..=HI`).
                let step = V::splat((((s as i32 - 127) << 7) as u32 & 0xFFFF) * 0x0001_0001);
                let w = 2 * V::LANES;
                let mut i = 0;
                while i < BLOCK {
                    let code = V::load_u8_words(c.add(i), w);
                    words::widen_words_pow2::<V, E>(code, &sub, step).store_words(d.add(2 * i), w);
                    i += w;
                }
            } else if (E::LO..=E::HI).contains(&s) {
                let step = V::splat(((s as i32 - 127) as u32) << 23);
                let mut i = 0;
                while i < BLOCK {
                    let code = if E::PACKED {
                        V::load_nibbles(c.add(i / 2), V::LANES)
                    } else {
                        V::load_u8(c.add(i), V::LANES)
                    };
                    D::put(lanes::widen_pow2::<V, E>(code, step), d.add(i * D::SIZE));
                    i += V::LANES;
                }
            } else if s == 0xFF {
                // The canonical NaN block: `from_f32_bits(0x7FC00000)` through the same
                // stores (f32 as is, BF16 0x7FC0, F16 0x7E00).
                let nan = V::splat(0x7FC0_0000);
                let mut i = 0;
                while i < BLOCK {
                    D::put(nan, d.add(i * D::SIZE));
                    i += V::LANES;
                }
            } else {
                skipped = true;
            }
        }
    }
    if skipped {
        // SAFETY: the same ranges, forwarded.
        unsafe { dequant_spec_blocks::<E, D, false>(codes, scales, blocks, (E::LO, E::HI), dst) };
    }
}

/// Whether [`dequant`] of element `E` into `D` runs on BF16 words: one code per byte
/// ([`words::eligible`] for BF16: E4M3, E5M2, E2M3, E3M2) into BF16, on a vector with native
/// word instructions.
#[inline(always)]
const fn words_path<V: Vector, E: Element, D: Dest>() -> bool {
    V::WORDS && !E::PACKED && matches!(D::KIND, DestKind::Bf16) && words::eligible::<E>(Enc::Bf16)
}

/// One block by the specification's `quantize_row`, through stack buffers (the source need
/// not be aligned for f32).
///
/// # Safety
/// `x` readable for 128 bytes, `c` writable for `E::BYTES` bytes, `scale` writable.
#[cold]
#[inline(never)]
unsafe fn quant_spec<E: Element>(rule: MxRule, x: *const u8, c: *mut u8, scale: *mut u8) {
    let mut src = [0f32; BLOCK];
    let mut codes = [MaybeUninit::<u8>::uninit(); BLOCK];
    let mut s = [MaybeUninit::<u8>::uninit(); 1];
    // SAFETY: 128 bytes readable at x; the buffer is a distinct local of 128 bytes.
    unsafe { ptr::copy_nonoverlapping(x, src.as_mut_ptr().cast::<u8>(), 4 * BLOCK) };
    spec::quantize_row::<f32>(E::ELEMENT, rule, &src, &mut codes[..E::BYTES], &mut s);
    // SAFETY: `quantize_row` initialised the E::BYTES codes and the scale; `c` takes
    // E::BYTES bytes and `scale` one; the buffers are distinct locals.
    unsafe {
        ptr::copy_nonoverlapping(codes.as_ptr().cast::<u8>(), c, E::BYTES);
        scale.write(s[0].assume_init());
    }
}

/// Blocks per pass of [`quant`] (4 KiB of f32 values, in L1).
const CHUNK: usize = 32;

/// MX quantization of `blocks` whole blocks of f32 (the `MxQuantFn` body).
///
/// Two passes per chunk of up to [`CHUNK`] blocks: the scale bytes, then the codes. A
/// block's scale is a long dependency chain (maximum, scalar rule) that its narrowing
/// would wait on; computing a chunk's scales first lets the chains overlap. The maxima of
/// `LANES` blocks come from one transposing reduction ([`Vector::reduce_max_each`]), and
/// where the vector has the byte methods and a block is whole groups of four vectors, each
/// group is narrowed and finished in bytes at once ([`lanes::narrow4`], with the block's
/// scaled constants) and stored with one store. Where `P` has a faster narrowing of its own
/// (`Put4::FAST`: the AVX-512 element kernel's), E4M3 blocks go two at a time: each value
/// times `2^(127 − s)` (exact where the product is normal; below `2^-126`, and for a
/// subnormal value read as zero under DAZ, the product and the exact value are both under
/// `2^-10` for the scale bytes `Q_LO..=Q_HI`, so both round to the zero of the value's
/// sign), then `P::put4` of the four vectors (the values are finite: a block with a NaN
/// or infinity has scale byte 0xFF).
///
/// # Safety
/// The `MxQuantFn` contract for element `E`; the CPU has `V`'s features, and the float
/// environment is the one [`Vector::fma_rne`] needs (AVX2: MXCSR.RC = nearest; NEON:
/// FPCR = 0).
#[inline(always)]
pub(crate) unsafe fn quant<V: Vector, E: Element, const CEIL: bool, P: Put4<V>>(
    src: *const u8,
    blocks: usize,
    codes: *mut u8,
    scales: *mut u8,
) {
    let rule = if CEIL { MxRule::Ceil } else { MxRule::Ocp };
    // SAFETY: the caller's guarantee: the CPU has V's features.
    let base = unsafe { Narrow::<V>::new::<E>(spec::SAT) };
    // Whether a block is whole groups of four vectors that `narrow4` finishes in bytes.
    let four = V::BYTES4 && base.bytes_ok && BLOCK.is_multiple_of(4 * V::LANES);
    // E4M3 blocks two at a time (two vectors each) by `P`'s own narrowing, where it has one.
    let pairs = P::FAST && E::ELEMENT as u8 == MxElement::E4M3 as u8 && 2 * V::LANES == BLOCK;
    let mut sbuf = [0u8; CHUNK];
    let mut start = 0;
    while start < blocks {
        let n = (blocks - start).min(CHUNK);
        // Up to `LANES` blocks at a time: each block's magnitudes reduced to one vector by
        // lane maxima, then the vectors' maxima as the lanes of one vector (one transposing
        // reduction instead of a horizontal maximum per block).
        let mut g0 = 0;
        while g0 < n {
            let nb = V::LANES.min(n - g0);
            // SAFETY: blocks start + g0 .. start + g0 + nb are below `blocks`: their 128
            // bytes are readable.
            let am = unsafe { super::ggml::block_maxima::<V, f32>(src, start + g0, nb) };
            // The magnitudes' unsigned maximum orders them as values, NaN above +Inf.
            for (slot, &m) in sbuf[g0..g0 + nb].iter_mut().zip(&am) {
                *slot = spec::scale_byte_fast::<CEIL>(E::ELEMENT, m);
            }
            g0 += nb;
        }
        let q_range = E::Q_LO..=E::Q_HI;
        let mut j = 0;
        while j < n {
            let s = sbuf[j];
            if pairs && j + 1 < n && q_range.contains(&s) && q_range.contains(&sbuf[j + 1]) {
                // SAFETY: blocks b and b + 1 (< blocks): their 256 bytes of values, their 64
                // code bytes (one block's 32 after the other's) and two scale bytes are
                // inside the caller's ranges; two vectors of 16 values a block.
                unsafe {
                    let b = start + j;
                    let p = src.add(b * 4 * BLOCK);
                    scales.add(b).write(s);
                    scales.add(b + 1).write(sbuf[j + 1]);
                    // 2^(127 − s), a normal f32 for the scale bytes Q_LO..=Q_HI.
                    let m0 = V::splat((254 - u32::from(s)) << 23);
                    let m1 = V::splat((254 - u32::from(sbuf[j + 1])) << 23);
                    let l = V::LANES;
                    let x = [
                        V::load_u32(p, l).mul_rne(m0),
                        V::load_u32(p.add(4 * l), l).mul_rne(m0),
                        V::load_u32(p.add(8 * l), l).mul_rne(m1),
                        V::load_u32(p.add(12 * l), l).mul_rne(m1),
                    ];
                    P::put4(&base, x, codes.add(b * E::BYTES));
                }
                j += 2;
                continue;
            }
            // SAFETY: block b = start + j < blocks: values 32b..32b + 32 (128 bytes), code
            // bytes b · BYTES.. + BYTES and scale b are inside the caller's ranges; the
            // vectors cover LANES values and LANES (or LANES / 2 packed) code bytes each.
            unsafe {
                let b = start + j;
                let p = src.add(b * 4 * BLOCK);
                let c = codes.add(b * E::BYTES);
                let sp = scales.add(b);
                if (E::Q_LO..=E::Q_HI).contains(&s) {
                    sp.write(s);
                    let ctx = base.scaled::<E>(s as i32 - 127);
                    let mut i = 0;
                    if four {
                        // Four vectors finished in bytes at a time (the element kernels'
                        // `narrow4`; the block's values are finite, so no NaN lane).
                        while i < BLOCK {
                            let q = p.add(4 * i);
                            let n = V::LANES;
                            let x = [
                                V::load_u32(q, n),
                                V::load_u32(q.add(4 * n), n),
                                V::load_u32(q.add(8 * n), n),
                                V::load_u32(q.add(12 * n), n),
                            ];
                            let y = lanes::narrow4::<V, E>(x, &ctx);
                            if E::PACKED {
                                y.store_nibbles_b4(c.add(i / 2));
                            } else {
                                y.store_bytes4(c.add(i));
                            }
                            i += 4 * n;
                        }
                    }
                    while i < BLOCK {
                        let y = lanes::narrow::<V, E>(V::load_u32(p.add(4 * i), V::LANES), &ctx);
                        if E::PACKED {
                            // The sign sits at bit 3; the bits above the nibble are dropped.
                            y.and(V::splat(0xF)).store_nibbles(c.add(i / 2), V::LANES);
                        } else {
                            y.store_u8(c.add(i), V::LANES);
                        }
                        i += V::LANES;
                    }
                } else if s == 0xFF {
                    // A NaN or infinity in the block: scale 0xFF and zero codes.
                    sp.write(s);
                    ptr::write_bytes(c, 0, E::BYTES);
                } else {
                    // The specification writes the same scale byte.
                    quant_spec::<E>(rule, p, c, sp);
                }
            }
            j += 1;
        }
        start += n;
    }
}

/// One ISA's instantiation of the kernels: `#[target_feature]` entry points that run
/// [`dequant`] and [`quant`] at its width, in the float environment they need.
pub(crate) trait Inst {
    /// The ISA the introspection reports for the slots [`fill`] sets.
    const ISA: Isa;
    /// [`dequant`] at this ISA's width.
    ///
    /// # Safety
    /// The `MxDequantFn` contract; the CPU has the ISA's features.
    unsafe fn dequant<E: Element, D: Dest>(
        codes: *const u8,
        scales: *const u8,
        blocks: usize,
        dst: *mut u8,
    );
    /// [`quant`] at this ISA's width.
    ///
    /// # Safety
    /// The `MxQuantFn` contract; the CPU has the ISA's features.
    unsafe fn quant<E: Element, const CEIL: bool>(
        src: *const u8,
        blocks: usize,
        codes: *mut u8,
        scales: *mut u8,
    );
}

/// The three destinations of element `E`, in `DestKind` order.
const fn dequant_row<I: Inst, E: Element>() -> [Option<MxDequantFn>; 3] {
    [
        Some(I::dequant::<E, f32> as MxDequantFn),
        Some(I::dequant::<E, BF16>),
        Some(I::dequant::<E, F16>),
    ]
}

/// The five elements of one rule, in `MxElement` order.
const fn quant_row<I: Inst, const CEIL: bool>() -> [Option<MxQuantFn>; 5] {
    [
        Some(I::quant::<F8E4M3, CEIL> as MxQuantFn),
        Some(I::quant::<F8E5M2, CEIL>),
        Some(I::quant::<F6E2M3, CEIL>),
        Some(I::quant::<F6E3M2, CEIL>),
        Some(I::quant::<F4E2M1, CEIL>),
    ]
}

/// Sets every MX `Ocp`/`Ceil` slot of `t` (dequantization of the five elements to f32,
/// BF16 and F16; quantization from f32 under both rules) to `I`'s kernels, tagged `I::ISA`.
pub(crate) const fn fill<I: Inst>(t: &mut BlockKernels) {
    t.mx_dequant = [
        dequant_row::<I, F8E4M3>(),
        dequant_row::<I, F8E5M2>(),
        dequant_row::<I, F6E2M3>(),
        dequant_row::<I, F6E3M2>(),
        dequant_row::<I, F4E2M1>(),
    ];
    t.mx_quant = [quant_row::<I, false>(), quant_row::<I, true>()];
    t.mx_dequant_isa = [[I::ISA; 3]; 5];
    t.mx_quant_isa = [[I::ISA; 5]; 2];
}

// The table order agrees with `MxElement` and `MxRule` (checked at compile time).
const _: () = {
    assert!(MxElement::E4M3 as usize == 0 && MxElement::E5M2 as usize == 1);
    assert!(MxElement::E2M3 as usize == 2 && MxElement::E3M2 as usize == 3);
    assert!(MxElement::E2M1 as usize == 4);
    assert!(MxRule::Ocp as usize == 0 && MxRule::Ceil as usize == 1);
};
