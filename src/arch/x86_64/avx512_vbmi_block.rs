//! MX dequantization of the one-byte elements (MXFP8 E4M3/E5M2, MXFP6 E2M3/E3M2) to BF16 on
//! the AVX512_VBMI tiers, by the byte tables of the plain widening (`avx512_vbmi.rs`) plus
//! one integer add per block; MXFP8 also to f32, each word widened into the top half of its
//! f32 (the same value: every word made here is exact, an infinity or a NaN that the
//! specification widens alike); and all of them to F16, that f32 rounded by `VCVTPS2PH`.
//!
//! # Why it is exact
//!
//! Every value of these elements is exact in BF16 (at most three fraction bits, and the
//! smallest subnormal, `2^-16` for E5M2, is a normal BF16), so [`avx512_vbmi::words16`]
//! gives each code's BF16 word `w`: the value itself, with the code's sign. The block's
//! scale is `2^k`, `k = s − 127`. When the scale byte `s` lies in `E::LO..=E::HI` (`10..=246`
//! for E4M3, `17..=239` for E5M2, `4..=252` and `5..=250` for the fp6 elements), every
//! finite non-zero value times `2^k` is a normal f32 (its exponent field stays in `1..=254`)
//! and still has at most three fraction bits, so it is exact in BF16 and its word is `w`
//! with `k` added to the exponent field: `w + (k << 7)` in 16-bit arithmetic. The sign bit
//! is untouched because the exponent field neither borrows nor carries out of its 8 bits.
//! That is the specification's `dequantize_block` (`D(e + (k << 23))` for such values).
//! Zeros, infinities and NaNs times a finite power of two are themselves; their words must
//! not move, so the add is masked to the finite non-zero codes: the magnitude `m` (the code's
//! low 7 bits, 5 for fp6) with `m − 1 < LIMIT` unsigned, `LIMIT` being the number of finite
//! non-zero magnitudes (`0x7E` for E4M3 whose `0x7F` is NaN, `0x7B` for E5M2 whose `0x7C..`
//! are infinity and NaNs, `0x1F` for fp6). Blocks with other scale bytes (`0xFF`, a NaN
//! block, included) are rewritten after the loop by the specification's block function.
//!
//! The `Mlx` profile of E4M3 computes `RN(decode(c) · RN(2^k))`, which in that scale range is
//! the same exact product; only its NaN differs (`mlx_fp8_nan`). Into BF16 that is `0x7FC0`
//! for both signs: the kernel clears the sign of code `0xFF` before the lookup, with
//! `c & ((c + 1) | 0x7F)` keeping every code but `0xFF`, which becomes `0x7F` (`0xFF + 1`
//! wraps to 0, so its bit 7 is cleared; every other code's `c + 1` keeps its bit 7 or `c`
//! has none).
//! Into f32 it is `0x7FF00000` with the code's sign: the table's NaN word `0x7FC0 | sign`
//! with `0x0030` ORed in, for the lanes whose magnitude is `0x7F` (no finite word is
//! touched: the adder is masked to finite codes and only NaN codes have that magnitude).
//! Into F16 it is `0x7D00` with the code's sign, which `put32` makes from the converted
//! `0x7E00 | sign` by an XOR on those lanes; and MLX rounds the scale to F16 before the
//! product, which is `2^k` itself only for `k` in `-24..=15`, so this kernel serves the
//! scale bytes `103..=142` there (the exact product rounded once to F16, as MLX's f32
//! product of the code and that scale then is), the specification the others.
//!
//! Into F16 every other profile is the exact product rounded once to F16: the word made
//! above, widened to its f32 (exact) and narrowed by `VCVTPS2PH`.
//!
//! # Cost
//!
//! Per 64 codes, the widening's seven shuffle-port cycles (`avx512_vbmi.rs`, "Which pairs
//! use it"), one byte compare for the mask and, on the vector ALU ports, an AND, a subtract
//! and two masked word adds. The adds' operands are per-block words, made 16 blocks at a
//! time into a stack array and broadcast from it with `VPBROADCASTD` from memory (a load,
//! no shuffle). Measured in docs/performance.md, "Block paths on `avx512-fp16`".
//!
//! No float instruction is involved, so MXCSR cannot matter.

use core::arch::x86_64::*;

use super::avx512;
use super::avx512_vbmi::{self as vbmi, Lut, Tables16};
use crate::arch::Isa;
use crate::block::spec::DestKind;
use crate::block::spec::kernels::{BlockKernels, MLX_E4M3};
use crate::simd::generic::block::{mlx, mx};
use crate::{BF16, F6E2M3, F6E3M2, F8E4M3, F8E5M2, F16};

/// Codes a block.
const BLOCK: usize = 32;

/// The destinations of [`dequant`] (its `TO` parameter).
const TO_BF16: u8 = 0;
const TO_F32: u8 = 1;
const TO_F16: u8 = 2;

/// An element's byte table (`avx512_vbmi::pair16` number) and the mask rule of the module
/// docs: the magnitude bits and the count of finite non-zero magnitudes.
trait ByTable: mx::Element {
    const TABLE: u8;
    const MAG: u8;
    const LIMIT: u8;
}
impl ByTable for F8E4M3 {
    const TABLE: u8 = 0;
    const MAG: u8 = 0x7F;
    const LIMIT: u8 = 0x7E;
}
impl ByTable for F8E5M2 {
    const TABLE: u8 = 13;
    const MAG: u8 = 0x7F;
    const LIMIT: u8 = 0x7B;
}
impl ByTable for F6E2M3 {
    const TABLE: u8 = 6;
    const MAG: u8 = 0x1F;
    const LIMIT: u8 = 0x1F;
}
impl ByTable for F6E3M2 {
    const TABLE: u8 = 8;
    const MAG: u8 = 0x1F;
    const LIMIT: u8 = 0x1F;
}

/// The per-block words to add of up to 16 blocks: dword `j` holds `(s_j − 127) << 7` in both
/// 16-bit halves.
#[repr(C, align(64))]
struct Adders([u32; 16]);

/// Fills `out` for the `n` blocks (`1 ≤ n ≤ 16`) whose scale bytes start at `scales`;
/// returns whether all `n` lie in `lo..=hi`.
///
/// # Safety
/// `scales` readable for `n` bytes; the CPU has the `Avx512Vbmi` tier's features.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn adders(scales: *const u8, n: usize, lo: u8, hi: u8, out: &mut Adders) -> bool {
    let k = ((1u32 << n) - 1) as __mmask16;
    // SAFETY: the mask enables bytes 0..n only, which the caller's guarantee covers;
    // masked-off bytes are not read.
    let s = _mm512_cvtepu8_epi32(unsafe { _mm_maskz_loadu_epi8(k, scales.cast()) });
    // Unsigned s − lo ≤ hi − lo exactly when lo ≤ s ≤ hi.
    let off = _mm512_sub_epi32(s, _mm512_set1_epi32(lo as i32));
    let ok = _mm512_mask_cmple_epu32_mask(k, off, _mm512_set1_epi32((hi - lo) as i32));
    // (s << 7) − (127 << 7) = k << 7; its low 16 bits, then copied into the high half:
    // ternary-logic table (A & B) | C with A = a, B = 0xFFFF, C = a << 16.
    let a = _mm512_sub_epi32(_mm512_slli_epi32::<7>(s), _mm512_set1_epi32(127 << 7));
    let a =
        _mm512_ternarylogic_epi32::<0xEA>(a, _mm512_set1_epi32(0xFFFF), _mm512_slli_epi32::<16>(a));
    // SAFETY: a 64-byte aligned store into the 64-byte array.
    unsafe { _mm512_store_si512(out.0.as_mut_ptr().cast(), a) };
    ok == k
}

/// The finite non-zero codes among the 64 codes `c` (bit `i` for code `i`).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
fn finite_nonzero<E: ByTable>(c: __m512i) -> __mmask64 {
    let m = _mm512_and_si512(c, _mm512_set1_epi8(E::MAG as i8));
    // Unsigned m − 1 < LIMIT exactly when 1 ≤ m ≤ LIMIT (m = 0 wraps to 0xFF).
    _mm512_cmplt_epu8_mask(
        _mm512_sub_epi8(m, _mm512_set1_epi8(1)),
        _mm512_set1_epi8(E::LIMIT as i8),
    )
}

/// The BF16 words of 64 codes, scaled: elements 0..32 (block `j`, adder `a0`) in the first
/// vector, 32..64 (adder `a1`) in the second.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
fn scaled64<E: ByTable, const MLX: bool, const TO: u8>(
    t: Lut,
    p: &Tables16,
    ord: __m512i,
    c: __m512i,
    a0: __m512i,
    a1: __m512i,
) -> (__m512i, __m512i) {
    let fin = finite_nonzero::<E>(c);
    let looked = if MLX && TO == TO_BF16 {
        // c & ((c + 1) | 0x7F): code 0xFF loses its sign (module docs); ternary-logic table
        // A & (B | C).
        _mm512_ternarylogic_epi32::<0xE0>(
            c,
            _mm512_add_epi8(c, _mm512_set1_epi8(1)),
            _mm512_set1_epi8(0x7F),
        )
    } else {
        c
    };
    let (w0, w1) = vbmi::words16(t, p, ord, looked);
    let (w0, w1) = (
        _mm512_mask_add_epi16(w0, fin as __mmask32, w0, a0),
        _mm512_mask_add_epi16(w1, (fin >> 32) as __mmask32, w1, a1),
    );
    if MLX && TO == TO_F32 {
        // MLX's f32 NaN (module docs): 0x7FC0 | sign → 0x7FF0 | sign.
        let nan = _mm512_cmpeq_epi8_mask(
            _mm512_and_si512(c, _mm512_set1_epi8(0x7F)),
            _mm512_set1_epi8(0x7F),
        );
        let more = _mm512_set1_epi16(0x0030);
        (
            _mm512_mask_mov_epi16(w0, nan as __mmask32, _mm512_or_si512(w0, more)),
            _mm512_mask_mov_epi16(w1, (nan >> 32) as __mmask32, _mm512_or_si512(w1, more)),
        )
    } else {
        (w0, w1)
    }
}

/// The adder of block `j` of the current chunk, broadcast from memory.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
fn adder(a: &Adders, j: usize) -> __m512i {
    // A plain read of the array element: the compiler broadcasts it from memory.
    _mm512_set1_epi32(a.0[j] as i32)
}

/// Stores the 32 BF16 words of `w` as values `i..i + 32` of a BF16 destination, of an
/// f32 one (`TO_F32`: each word in the top half of its f32, the same value, as every word
/// the kernel makes is an exact value, infinity or NaN; two words of the same NaN code widen
/// alike in the specification, the quiet NaN with the code's sign), or of an F16 one
/// (`TO_F16`: that f32 rounded once to F16 by `VCVTPS2PH`, nearest even in its immediate;
/// the f32 is a normal number, zero, infinity or NaN, so DAZ has nothing to act on, and
/// `VCVTPS2PH` does not flush its results; a NaN keeps its sign and quiet bit, as the
/// specification's F16 narrowing does). `mlx_nan` marks the lanes of MLX's F16 NaN,
/// `0x7D00` with the sign, made from the converted `0x7E00` by an XOR.
///
/// # Safety
/// `dst` writable for values `i..i + 32`; the CPU has AVX-512 F/BW and F16C.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn put32<const TO: u8>(w: __m512i, mlx_nan: __mmask32, dst: *mut u8, i: usize) {
    // SAFETY: the caller's guarantee: 64 bytes at byte 2i (BF16, F16) or 128 at byte 4i
    // (f32).
    unsafe {
        if TO == TO_BF16 {
            _mm512_storeu_si512(dst.add(2 * i).cast(), w);
            return;
        }
        let lo = _mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(w)));
        let hi = _mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64::<1>(w)));
        if TO == TO_F32 {
            _mm512_storeu_si512(dst.add(4 * i).cast(), lo);
            _mm512_storeu_si512(dst.add(4 * i + 64).cast(), hi);
        } else {
            const R: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
            let h = _mm512_inserti64x4::<1>(
                _mm512_castsi256_si512(_mm512_cvtps_ph::<R>(_mm512_castsi512_ps(lo))),
                _mm512_cvtps_ph::<R>(_mm512_castsi512_ps(hi)),
            );
            let h =
                _mm512_mask_mov_epi16(h, mlx_nan, _mm512_xor_si512(h, _mm512_set1_epi16(0x0300)));
            _mm512_storeu_si512(dst.add(2 * i).cast(), h);
        }
    }
}

/// The lanes of MLX's F16 NaN among 64 codes (module docs), for [`put32`]: the codes whose
/// magnitude is `0x7F`, or none unless `MLX` into F16.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
fn mlx_nan<const MLX: bool, const TO: u8>(c: __m512i) -> __mmask64 {
    if MLX && TO == TO_F16 {
        _mm512_cmpeq_epi8_mask(
            _mm512_and_si512(c, _mm512_set1_epi8(0x7F)),
            _mm512_set1_epi8(0x7F),
        )
    } else {
        0
    }
}

/// MX dequantization of `blocks` whole blocks of element `E` into BF16, f32 or F16 (`TO`;
/// module docs); `MLX` selects the `Mlx` profile's E4M3 NaN. The blocks whose scale
/// byte is outside `E::LO..=E::HI` are written by the loop with wrong values, then rewritten
/// by the specification after it.
///
/// # Safety
/// The `MxDequantFn` contract (`MxProfileDequantFn` when `MLX`); the CPU has the
/// `Avx512Vbmi` tier's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")]
unsafe fn dequant<E: ByTable, const MLX: bool, const TO: u8>(
    codes: *const u8,
    scales: *const u8,
    blocks: usize,
    dst: *mut u8,
) {
    let p = vbmi::pair16(E::TABLE);
    let t = vbmi::load_tables(&p.t);
    // SAFETY: a 64-byte load of a static 64-byte array.
    let ord = unsafe { _mm512_loadu_si512(vbmi::ORDER_16.0.as_ptr().cast()) };
    let end = codes.wrapping_add(blocks * BLOCK);
    // MLX into F16 rounds the scale to F16 first (`mlx_dequantize_block`), which keeps it
    // `2^k` only for `k` in `-24..=15` (module docs).
    let (lo, hi) = if MLX && TO == TO_F16 {
        (127 - 24, 127 + 15)
    } else {
        (E::LO, E::HI)
    };
    let mut add = Adders([0; 16]);
    let mut all_in = true;
    let mut b = 0;
    while b < blocks {
        let n = (blocks - b).min(16);
        // SAFETY: scale bytes b..b + n, inside the caller's `blocks`; the features are this
        // function's.
        all_in &= unsafe { adders(scales.add(b), n, lo, hi, &mut add) };
        let mut j = 0;
        while n - j >= 2 {
            let i = (b + j) * BLOCK;
            avx512::prefetch_ahead(codes.wrapping_add(i), end, 64);
            // SAFETY: blocks b + j and b + j + 1 < blocks: codes i..i + 64 and values
            // i..i + 64 are inside the caller's ranges.
            unsafe {
                let c = _mm512_loadu_si512(codes.add(i).cast());
                let (w0, w1) =
                    scaled64::<E, MLX, TO>(t, p, ord, c, adder(&add, j), adder(&add, j + 1));
                let nan = mlx_nan::<MLX, TO>(c);
                put32::<TO>(w0, nan as __mmask32, dst, i);
                put32::<TO>(w1, (nan >> 32) as __mmask32, dst, i + 32);
            }
            j += 2;
        }
        if j < n {
            let i = (b + j) * BLOCK;
            // SAFETY: block b + j < blocks: the mask enables codes i..i + 32 only (the rest
            // are not read), and values i..i + 32 are inside `dst`.
            unsafe {
                let c = _mm512_maskz_loadu_epi8(u32::MAX as __mmask64, codes.add(i).cast());
                let (w0, _) = scaled64::<E, MLX, TO>(t, p, ord, c, adder(&add, j), adder(&add, j));
                put32::<TO>(w0, mlx_nan::<MLX, TO>(c) as __mmask32, dst, i);
            }
        }
        b += n;
    }
    if !all_in {
        // SAFETY: the caller's guarantee, forwarded (the Mlx slot's destination is aligned
        // for BF16, which `e4m3_spec_blocks` needs).
        unsafe {
            match (MLX, TO) {
                (true, TO_BF16) => {
                    mlx::e4m3_spec_blocks::<BF16>(codes, scales, blocks, (lo, hi), dst)
                }
                (true, TO_F32) => {
                    mlx::e4m3_spec_blocks::<f32>(codes, scales, blocks, (lo, hi), dst)
                }
                (true, _) => mlx::e4m3_spec_blocks::<F16>(codes, scales, blocks, (lo, hi), dst),
                (false, TO_BF16) => {
                    mx::dequant_spec_blocks::<E, BF16, true>(codes, scales, blocks, (lo, hi), dst)
                }
                (false, TO_F32) => {
                    mx::dequant_spec_blocks::<E, f32, true>(codes, scales, blocks, (lo, hi), dst)
                }
                (false, _) => {
                    mx::dequant_spec_blocks::<E, F16, true>(codes, scales, blocks, (lo, hi), dst)
                }
            }
        }
    }
}

/// Sets the BF16 slots of MX `Ocp`/`Ceil` dequantization of the one-byte elements (and the
/// f32 ones of the fp8 elements), and the BF16 and f32 slots of the `Mlx` profile's E4M3, to
/// [`dequant`].
pub(crate) const fn set(t: &mut BlockKernels) {
    const fn one<E: ByTable>(t: &mut BlockKernels, f32: bool) {
        let (e, b, f, h) = (
            E::ELEMENT.index(),
            DestKind::Bf16 as usize,
            DestKind::F32 as usize,
            DestKind::F16 as usize,
        );
        t.mx_dequant[e][b] = Some(dequant::<E, false, TO_BF16>);
        t.mx_dequant_isa[e][b] = Isa::Avx512;
        t.mx_dequant[e][h] = Some(dequant::<E, false, TO_F16>);
        t.mx_dequant_isa[e][h] = Isa::Avx512;
        if f32 {
            t.mx_dequant[e][f] = Some(dequant::<E, false, TO_F32>);
            t.mx_dequant_isa[e][f] = Isa::Avx512;
        }
    }
    // To f32 for the fp8 elements only: MXFP8 `Ocp` → f32 measured 0.65 → 0.81 of F8E4M3 →
    // f32, MXFP6 0.73 → 0.78, short of the 10% an override needs (docs/performance.md).
    one::<F8E4M3>(t, true);
    one::<F8E5M2>(t, true);
    one::<F6E2M3>(t, false);
    one::<F6E3M2>(t, false);
    t.mlx_dequant[MLX_E4M3][DestKind::Bf16 as usize] = Some(dequant::<F8E4M3, true, TO_BF16>);
    t.mlx_dequant[MLX_E4M3][DestKind::F32 as usize] = Some(dequant::<F8E4M3, true, TO_F32>);
    t.mlx_dequant[MLX_E4M3][DestKind::F16 as usize] = Some(dequant::<F8E4M3, true, TO_F16>);
}

/// MX dequantization of the one-byte elements to F16 on the `avx512-fp16` tier: each code's
/// F16 word (every value of these elements is exact in F16: the byte tables' F16 words, or
/// for E5M2 the code shifted into the high byte) multiplied by the block's `2^k` with
/// `VMULPH {rn-sae}`: one IEEE product of two exact F16 values rounded once to F16, which is
/// the specification's exact product rounded once, wherever `2^k` is itself an F16 value,
/// `k` in `-24..=15`, scale bytes `103..=142` (MLX, which rounds its scale to F16 first,
/// gets the same product there). A zero, infinity or NaN times `2^k` is itself (a NaN
/// quieted, as the specification's F16 narrowing of the widened NaN quiets it); MLX's NaN
/// (`0x7D00` with the sign) is made from `0x7E00 | sign` by an XOR on its lanes. FP16
/// arithmetic ignores MXCSR's DAZ and FTZ, and `{rn-sae}` its rounding mode. Other scale
/// bytes run the specification after the loop.
#[cfg(vcvt_avx512fp16)]
pub(crate) mod fp16 {
    // The AVX512_FP16 intrinsics are stable since Rust 1.94; the build script compiles this
    // module only with such a compiler (as `avx512_fp16.rs`).
    #![allow(clippy::incompatible_msrv)]

    use core::arch::x86_64::*;

    use super::{BLOCK, ByTable, vbmi};
    use crate::arch::Isa;
    use crate::block::spec::DestKind;
    use crate::block::spec::kernels::{BlockKernels, MLX_E4M3};
    use crate::simd::generic::block::{mlx, mx};
    use crate::{F6E2M3, F6E3M2, F8E4M3, F8E5M2, F16};

    /// The F16 byte table (`avx512_vbmi::pair16`) of the element whose BF16 table is
    /// `table`: the next pair number (E4M3, E2M3, E3M2), or 0 for E5M2 (13), whose F16 word
    /// is the code shifted left by 8.
    const fn f16_table(table: u8) -> u8 {
        match table {
            0 | 6 | 8 => table + 1,
            _ => 0,
        }
    }

    /// The scale bytes whose `2^(s − 127)` is an F16 value.
    const LO: u8 = 127 - 24;
    const HI: u8 = 127 + 15;

    /// The F16 multiplier `2^(s − 127)` of scale byte `s` in `LO..=HI`, in both halves of a
    /// dword: the normal `(k + 15) << 10` for `k >= -14`, else the subnormal
    /// `1 << (k + 24)`. Other scale bytes give 0 (their blocks are written again by the
    /// specification).
    #[inline(always)]
    fn multiplier(s: u8) -> u32 {
        let k = s as i32 - 127;
        let h = if !(LO..=HI).contains(&s) {
            0
        } else if k >= -14 {
            ((k + 15) as u32) << 10
        } else {
            1u32 << (k + 24)
        };
        h * 0x0001_0001
    }

    /// The F16 words of 64 codes of `E` in element order (elements 0..32, then 32..64).
    #[inline]
    #[target_feature(
        enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512fp16,avx2,fma,f16c"
    )]
    fn words<E: ByTable>(
        t: vbmi::Lut,
        p: &vbmi::Tables16,
        ord: __m512i,
        c: __m512i,
    ) -> (__m512i, __m512i) {
        if f16_table(E::TABLE) == 0 {
            // E5M2: the F16 word is the code in the high byte.
            let lo = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(c));
            let hi = _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64::<1>(c));
            (_mm512_slli_epi16::<8>(lo), _mm512_slli_epi16::<8>(hi))
        } else {
            vbmi::words16(t, p, ord, c)
        }
    }

    /// `w · m` in F16 (`m`: two F16 words), rounded to nearest even whatever MXCSR says;
    /// with `MLX`, the lanes of `nan` take MLX's NaN.
    #[inline]
    #[target_feature(
        enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512fp16,avx2,fma,f16c"
    )]
    fn scaled<const MLX: bool>(w: __m512i, m: u32, nan: __mmask32) -> __m512i {
        const RNE: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
        let p = _mm512_castph_si512(_mm512_mul_round_ph::<RNE>(
            _mm512_castsi512_ph(w),
            _mm512_castsi512_ph(_mm512_set1_epi32(m as i32)),
        ));
        if MLX {
            _mm512_mask_mov_epi16(p, nan, _mm512_xor_si512(p, _mm512_set1_epi16(0x0300)))
        } else {
            p
        }
    }

    /// The lanes of MLX's NaN (magnitude `0x7F`) among 64 codes, or none unless `MLX`.
    #[inline]
    #[target_feature(
        enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512fp16,avx2,fma,f16c"
    )]
    fn nan_of<const MLX: bool>(c: __m512i) -> __mmask64 {
        if MLX {
            _mm512_cmpeq_epi8_mask(
                _mm512_and_si512(c, _mm512_set1_epi8(0x7F)),
                _mm512_set1_epi8(0x7F),
            )
        } else {
            0
        }
    }

    /// MX dequantization of `blocks` whole blocks of `E` into F16 (`MLX`: the `Mlx`
    /// profile's E4M3); see the module docs.
    ///
    /// # Safety
    /// The `MxDequantFn` contract (`MxProfileDequantFn` when `MLX`) into F16; the CPU has
    /// the `Avx512Fp16` tier's features.
    #[target_feature(
        enable = "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512fp16,avx2,fma,f16c"
    )]
    unsafe fn dequant<E: ByTable, const MLX: bool>(
        codes: *const u8,
        scales: *const u8,
        blocks: usize,
        dst: *mut u8,
    ) {
        let p = vbmi::pair16(f16_table(E::TABLE));
        let t = vbmi::load_tables(&p.t);
        // SAFETY: a 64-byte load of a static 64-byte array.
        let ord = unsafe { _mm512_loadu_si512(vbmi::ORDER_16.0.as_ptr().cast()) };
        let mut skipped = false;
        let mut b = 0;
        while b < blocks {
            // SAFETY: scale bytes b and (when present) b + 1 are inside the caller's
            // `blocks`.
            let (s0, s1) = unsafe {
                (
                    *scales.add(b),
                    if b + 1 < blocks {
                        *scales.add(b + 1)
                    } else {
                        LO
                    },
                )
            };
            let i = b * BLOCK;
            if b + 1 < blocks {
                // SAFETY: blocks b and b + 1: codes i..i + 64 and values i..i + 64 (128
                // bytes) are inside the caller's ranges; the features are this function's.
                unsafe {
                    let c = _mm512_loadu_si512(codes.add(i).cast());
                    let (w0, w1) = words::<E>(t, p, ord, c);
                    let nan = nan_of::<MLX>(c);
                    // Without a NaN code among the 64 (weights have none), MLX's NaN fix is
                    // skipped: the same products.
                    let (h0, h1) = if nan == 0 {
                        (
                            scaled::<false>(w0, multiplier(s0), 0),
                            scaled::<false>(w1, multiplier(s1), 0),
                        )
                    } else {
                        (
                            scaled::<MLX>(w0, multiplier(s0), nan as __mmask32),
                            scaled::<MLX>(w1, multiplier(s1), (nan >> 32) as __mmask32),
                        )
                    };
                    _mm512_storeu_si512(dst.add(2 * i).cast(), h0);
                    _mm512_storeu_si512(dst.add(2 * i + 64).cast(), h1);
                }
                skipped |= !(LO..=HI).contains(&s0) || !(LO..=HI).contains(&s1);
                b += 2;
            } else {
                // SAFETY: block b: the mask enables codes i..i + 32 only (the rest are not
                // read), and values i..i + 32 are inside `dst`.
                unsafe {
                    let c = _mm512_maskz_loadu_epi8(u32::MAX as __mmask64, codes.add(i).cast());
                    let (w0, _) = words::<E>(t, p, ord, c);
                    let h0 = scaled::<MLX>(w0, multiplier(s0), nan_of::<MLX>(c) as __mmask32);
                    _mm512_storeu_si512(dst.add(2 * i).cast(), h0);
                }
                skipped |= !(LO..=HI).contains(&s0);
                b += 1;
            }
        }
        if skipped {
            // SAFETY: the caller's guarantee, forwarded.
            unsafe {
                if MLX {
                    mlx::e4m3_spec_blocks::<F16>(codes, scales, blocks, (LO, HI), dst)
                } else {
                    mx::dequant_spec_blocks::<E, F16, true>(codes, scales, blocks, (LO, HI), dst)
                }
            }
        }
    }

    /// Sets the F16 slots of MX dequantization of the one-byte elements (all profiles of
    /// the MX kernels, and the `Mlx` profile's E4M3) to [`dequant`].
    pub(crate) const fn set(t: &mut BlockKernels) {
        const fn one<E: ByTable>(t: &mut BlockKernels) {
            let (e, h) = (E::ELEMENT.index(), DestKind::F16 as usize);
            t.mx_dequant[e][h] = Some(dequant::<E, false>);
            t.mx_dequant_isa[e][h] = Isa::Avx512;
        }
        one::<F8E4M3>(t);
        one::<F8E5M2>(t);
        one::<F6E2M3>(t);
        one::<F6E3M2>(t);
        t.mlx_dequant[MLX_E4M3][DestKind::F16 as usize] = Some(dequant::<F8E4M3, true>);
    }
}
