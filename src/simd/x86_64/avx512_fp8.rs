//! Block FP8 dequantization to BF16 and F16 on the AVX-512 tiers by a table per tile: the
//! result of every E4M3 magnitude under the tile's scale, computed once per tile and looked
//! up with `VPERMT2W`, instead of the arithmetic of the generic kernel on every value.
//!
//! **The table.** For a tile scale `s` (f32 bits) whose exponent field lies in `10..=134`
//! (the generic kernel's `E4m3Product` range), entry `m` (`0..128`) is
//! `round_D(f32(e4m3(m)) · s)`: the exact f32 value of magnitude `m` ([`E4M3_MAG`]; the
//! canonical NaN `0x7FC00000` for `0x7F`), multiplied by `s` with `VMULPS {rn-sae}` (one
//! rounding to nearest even; both operands are normal or zero and the product of a non-zero
//! magnitude lies in `[2^-126, 2^17)`, so neither MXCSR's rounding nor FTZ/DAZ can act, and a
//! NaN entry stays `0x7FC00000`), then rounded to the destination: BF16 by adding `0x7FFF`
//! plus the kept half's lowest bit and keeping the top half (nearest even; `0x7FC00000`
//! gives `0x7FC0`), F16 by `VCVTPS2PH` with its rounding in the immediate. That is
//! DeepSeek's order (`f32(e4m3) · scale_inv` in f32, then one rounding), the specification's
//! `dequantize_run`.
//!
//! **The sign.** `f32(-x) · s = -(f32(x) · s)` exactly (rounding to nearest even is
//! symmetric), and both roundings to BF16/F16 are symmetric too, so a code with its sign bit
//! set takes its magnitude's entry with the sign bit of the result flipped (the table already
//! carries `s`'s sign, and `±0 · s` the sign the product has). The NaN entry has a clear sign
//! bit (the NaN operand's, which `VMULPS` returns quieted), so a NaN code gives
//! `0x7FC0 | sign` (BF16) or `0x7E00 | sign` (F16): what the specification writes.
//!
//! **Tiles outside that range**, and tiles with fewer than 64 codes in the call (a table
//! costs about as much as that many values done directly), run the generic kernel.
//!
//! **`dequantize_scaled`** of E4M3 and E5M2 into BF16/F16 is one tile under the call's
//! scale: the same table (E5M2's from its own magnitudes).

use core::arch::x86_64::*;

use super::avx512::V512;
use super::avx512_scaled::{self, Signed};
use crate::arch::Isa;
use crate::block::spec::DestKind;
use crate::block::spec::kernels::BlockKernels;
use crate::simd::generic::block::{fp8, scaled};
use crate::simd::generic::kernels::{Brain, Half};

/// The f32 bits of the E4M3 magnitudes `0..128` (`0x7F`: the canonical NaN), computed at
/// compile time from the format's layout (4 exponent bits, bias 7, 3 fraction bits;
/// subnormals `f · 2^-9`), 64-byte aligned for the loads.
static E4M3_MAG: Aligned64<[u32; 128]> = Aligned64({
    let mut t = [0u32; 128];
    let mut m = 0;
    while m < 128 {
        let (e, f) = ((m >> 3) as u32, (m & 7) as u32);
        t[m] = if m == 0x7F {
            0x7FC0_0000
        } else if e > 0 {
            // (1 + f/8) · 2^(e − 7): f32 exponent field e − 7 + 127.
            ((e + 120) << 23) | (f << 20)
        } else if f == 0 {
            0
        } else {
            // f · 2^-9 with f in 1..8: the leading bit at position p, so 1.x · 2^(p − 9).
            let p = 31 - f.leading_zeros();
            ((p + 118) << 23) | ((f << (23 - p)) & 0x007F_FFFF)
        };
        m += 1;
    }
    t
});

/// The f32 bits of the F8E5M2 magnitudes `0..128`, as [`E4M3_MAG`] (5 exponent bits, bias
/// 15, 2 fraction bits; subnormals `f · 2^-16`; `0x7C` infinity; the NaN codes `0x7D..=0x7F`
/// quiet with their fraction kept, as the widening gives them), for `dequantize_scaled`.
static E5M2_MAG: Aligned64<[u32; 128]> = Aligned64({
    let mut t = [0u32; 128];
    let mut m = 0;
    while m < 128 {
        let (e, f) = ((m >> 2) as u32, (m & 3) as u32);
        t[m] = if e == 31 {
            // Infinity, or a NaN quieted (bit 22) with the fraction at bits 21..23.
            0x7F80_0000 | if f == 0 { 0 } else { 0x0040_0000 | (f << 21) }
        } else if e > 0 {
            // (1 + f/4) · 2^(e − 15): f32 exponent field e − 15 + 127.
            ((e + 112) << 23) | (f << 21)
        } else if f == 0 {
            0
        } else {
            // f · 2^-16 with f in 1..4: the leading bit at position p, so 1.x · 2^(p − 16).
            let p = 31 - f.leading_zeros();
            ((p + 111) << 23) | ((f << (23 - p)) & 0x007F_FFFF)
        };
        m += 1;
    }
    t
});

/// A value aligned to 64 bytes.
#[repr(C, align(64))]
struct Aligned64<T>(T);

/// The destinations of the table kernel.
#[derive(Clone, Copy, PartialEq, Eq)]
enum To {
    Bf16,
    F16,
}

/// Entries `16j..16j + 16` of the table: 16 words in the low half of the vector's dwords
/// (BF16) or in its low 256 bits (F16).
///
/// # Safety
/// `j < 8`; the CPU has AVX-512 F/BW and F16C.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn products<const TO: u8>(mag: &Aligned64<[u32; 128]>, s: __m512, j: usize) -> __m512i {
    // SAFETY: entries 16j..16j + 16 of the 128-entry table (j < 8): 64 bytes in bounds.
    let x = unsafe { _mm512_loadu_ps(mag.0.as_ptr().add(16 * j).cast()) };
    let p = _mm512_mul_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x, s);
    let p = _mm512_castps_si512(p);
    if TO == To::Bf16 as u8 {
        // Nearest even to the top half: + 0x7FFF + the kept half's lowest bit.
        let lsb = _mm512_and_si512(_mm512_srli_epi32::<16>(p), _mm512_set1_epi32(1));
        let r = _mm512_add_epi32(_mm512_add_epi32(p, _mm512_set1_epi32(0x7FFF)), lsb);
        _mm512_srli_epi32::<16>(r)
    } else {
        let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
            _mm512_castsi512_ps(p),
        );
        _mm512_castsi256_si512(h)
    }
}

/// The 128-entry table of scale `s` as four vectors of 32 words (entries 0..32, 32..64,
/// 64..96, 96..128).
///
/// # Safety
/// The CPU has AVX-512 F/BW and F16C.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn table<const TO: u8>(s: f32) -> [__m512i; 4] {
    // SAFETY: forwarded.
    unsafe { table_of::<TO>(&E4M3_MAG, s) }
}

/// [`table`] over the magnitudes `mag` (E4M3's or E5M2's).
///
/// # Safety
/// The CPU has AVX-512 F/BW and F16C.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn table_of<const TO: u8>(mag: &Aligned64<[u32; 128]>, s: f32) -> [__m512i; 4] {
    let s = _mm512_set1_ps(s);
    // Word indices of the low halves of 32 dwords of two vectors (BF16).
    let even = _mm512_set_epi16(
        62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28, 26, 24, 22, 20, 18,
        16, 14, 12, 10, 8, 6, 4, 2, 0,
    );
    core::array::from_fn(|k| {
        // SAFETY: j = 2k, 2k + 1 < 8; the features are this function's.
        let (a, b) = unsafe {
            (
                products::<TO>(mag, s, 2 * k),
                products::<TO>(mag, s, 2 * k + 1),
            )
        };
        if TO == To::Bf16 as u8 {
            _mm512_permutex2var_epi16(a, even, b)
        } else {
            _mm512_inserti64x4::<1>(a, _mm512_castsi512_si256(b))
        }
    })
}

/// One tile's run of a row, `len >= 1` codes, by table `t`: the magnitude lookup and sign
/// XOR of `avx512_scaled.rs` (its `Signed` tables without the fnuz NaN).
///
/// # Safety
/// `codes` readable for `len` bytes, `dst` writable for `len` two-byte values; the CPU has
/// the `Avx512` tier's features.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn run(t: &[__m512i; 4], codes: *const u8, len: usize, dst: *mut u8) {
    let l = Signed::<false> {
        t: *t,
        nan: _mm512_setzero_si512(),
    };
    // SAFETY: forwarded contract.
    unsafe { avx512_scaled::run(&l, codes, len, dst) }
}

/// Whether a tile of scale `s` (f32 bits), `w` codes wide in each of `rows` rows, takes the
/// table: the exponent field in `10..=134` (see the module docs), and at least 64 codes to
/// look up, about where making the table (some 50 instructions) costs less than the generic
/// kernel's arithmetic on every value (at one 64-value row, the two measured about even on
/// the Zen 4 VM: 20–40 ns per call either way, alternating runs).
#[inline]
fn by_table(s: u32, w: usize, rows: usize) -> bool {
    w.saturating_mul(rows) >= 64 && (10..=134).contains(&((s >> 23) & 0xFF))
}

/// One tile of one row by the generic kernel (a row of one tile, with this tile's scale).
///
/// # Safety
/// `codes` readable for `w` bytes, `scale` for 4, `dst` writable for `w` two-byte values;
/// the CPU has the `Avx512` tier's features.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn generic<const TO: u8>(codes: *const u8, scale: *const u8, w: usize, dst: *mut u8) {
    // SAFETY: forwarded; the generic kernel at 512 bits needs these features and no FP
    // environment (its products carry their rounding).
    unsafe {
        if TO == To::Bf16 as u8 {
            fp8::dequantize_row::<V512, Brain>(codes, scale, w, w, dst)
        } else {
            fp8::dequantize_row::<V512, Half>(codes, scale, w, w, dst)
        }
    }
}

/// The `fp8_dequant_band` slot for BF16 (`TO == To::Bf16`) or F16: tile by tile, the table
/// of a tile whose scale allows it is made once and serves the tile in every row of the
/// band; the other tiles run the generic kernel row by row.
///
/// # Safety
/// The `Fp8DequantBandFn` contract; the table holding this is chosen only when
/// `avx512_available` found the `Avx512` tier's features.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn dequant_band<const TO: u8>(
    codes: *const u8,
    scales: *const u8,
    tile_cols: usize,
    cols: usize,
    rows: usize,
    dst_stride: usize,
    dst: *mut u8,
) {
    let (mut c0, mut t) = (0, 0);
    while c0 < cols {
        let w = tile_cols.min(cols - c0);
        // SAFETY: tile t < cols.div_ceil(tile_cols): its 4 scale bytes are readable.
        let s = u32::from_le_bytes(unsafe { scales.add(4 * t).cast::<[u8; 4]>().read_unaligned() });
        // Row r < rows has codes r · cols + c0.. + w and values at r · dst_stride + 2 · c0..
        // (w two-byte values) inside the caller's ranges.
        if by_table(s, w, rows) {
            // SAFETY: the features are this function's.
            let tab = unsafe { table::<TO>(f32::from_bits(s)) };
            for r in 0..rows {
                let (c, d) = (
                    codes.wrapping_add(r * cols + c0),
                    dst.wrapping_add(r * dst_stride + 2 * c0),
                );
                // SAFETY: row r's run of this tile, inside the caller's ranges (above); the
                // features are this function's.
                unsafe { run(&tab, c, w, d) };
            }
        } else {
            for r in 0..rows {
                let (c, d) = (
                    codes.wrapping_add(r * cols + c0),
                    dst.wrapping_add(r * dst_stride + 2 * c0),
                );
                // SAFETY: as above; the tile's scale is the 4 bytes at `scales + 4t`, inside
                // the caller's scales.
                unsafe { generic::<TO>(c, scales.add(4 * t), w, d) };
            }
        }
        c0 += w;
        t += 1;
    }
}

/// The `fp8_dequant` slot (one row): the band form with one row.
///
/// # Safety
/// The `Fp8DequantFn` contract; as [`dequant_band`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn dequant_row<const TO: u8>(
    codes: *const u8,
    scales: *const u8,
    tile_cols: usize,
    cols: usize,
    dst: *mut u8,
) {
    // SAFETY: one row is a band of one row (the stride is never used).
    unsafe { dequant_band::<TO>(codes, scales, tile_cols, cols, 1, 0, dst) }
}

/// The `dequantize_scaled` slot of F8E4M3 into BF16 (`TO == To::Bf16`) or F16: a call is
/// one tile of one row under the call's scale, by the table where [`by_table`] takes it,
/// else by the generic kernel. The slot's scales make every product with a code an exact
/// normal f32 (`src/block/scaled.rs`), so the table's entries (that product rounded once to
/// the destination) are what the generic kernel stores, NaN codes included.
///
/// # Safety
/// The `ScaledFn` contract; the table holding this is chosen only when the `Avx512` tier's
/// features were found.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn scaled_e4m3<const TO: u8>(src: *const u8, n: usize, scale: u32, dst: *mut u8) {
    if by_table(scale, n, 1) {
        // SAFETY: the features are this function's; `src` holds `n >= 64` codes and `dst`
        // `n` two-byte values (the slot's contract).
        unsafe {
            let tab = table::<TO>(f32::from_bits(scale));
            run(&tab, src, n, dst);
        }
    } else if TO == To::Bf16 as u8 {
        // SAFETY: forwarded; the generic kernel at 512 bits needs these features and no FP
        // environment (its products carry their rounding).
        unsafe { scaled::dequantize_exact::<V512, crate::F8E4M3, Brain>(src, n, scale, dst) }
    } else {
        // SAFETY: as above.
        unsafe { scaled::dequantize_exact::<V512, crate::F8E4M3, Half>(src, n, scale, dst) }
    }
}

/// The `dequantize_scaled` slot of F8E5M2 into BF16 (`TO == To::Bf16`) or F16, as
/// [`scaled_e4m3`] with E5M2's magnitudes: the table from 64 codes on (the slot's scales make
/// every product of a finite non-zero code an exact normal f32, so no range rule is needed;
/// infinities and NaNs take the IEEE product's, as the generic kernel's products and kept
/// NaNs give them), the generic kernel below.
///
/// # Safety
/// As [`scaled_e4m3`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn scaled_e5m2<const TO: u8>(src: *const u8, n: usize, scale: u32, dst: *mut u8) {
    if n >= 64 {
        // SAFETY: as in `scaled_e4m3`.
        unsafe {
            let tab = table_of::<TO>(&E5M2_MAG, f32::from_bits(scale));
            run(&tab, src, n, dst);
        }
    } else if TO == To::Bf16 as u8 {
        // SAFETY: as in `scaled_e4m3`.
        unsafe { scaled::dequantize_exact::<V512, crate::F8E5M2, Brain>(src, n, scale, dst) }
    } else {
        // SAFETY: as above.
        unsafe { scaled::dequantize_exact::<V512, crate::F8E5M2, Half>(src, n, scale, dst) }
    }
}

/// Sets the BF16 and F16 `fp8_dequant` and `fp8_dequant_band` slots of an AVX-512 table to
/// the table kernel (the f32 slot keeps the kernel below it), and the E4M3 and E5M2
/// `dequantize_scaled` slots of those destinations to theirs. Measured in docs/performance.md,
/// "Block paths".
pub(crate) const fn set(t: &mut BlockKernels) {
    let (b, h) = (DestKind::Bf16 as usize, DestKind::F16 as usize);
    // F8E4M3 is the first of the scaled slots' formats (`ScaledCode::FUSED`).
    t.dequantize_scaled[0][b] = Some(scaled_e4m3::<{ To::Bf16 as u8 }>);
    t.dequantize_scaled[0][h] = Some(scaled_e4m3::<{ To::F16 as u8 }>);
    t.dequantize_scaled[1][b] = Some(scaled_e5m2::<{ To::Bf16 as u8 }>);
    t.dequantize_scaled[1][h] = Some(scaled_e5m2::<{ To::F16 as u8 }>);
    t.fp8_dequant[b] = Some(dequant_row::<{ To::Bf16 as u8 }>);
    t.fp8_dequant[h] = Some(dequant_row::<{ To::F16 as u8 }>);
    t.fp8_dequant_band[b] = Some(dequant_band::<{ To::Bf16 as u8 }>);
    t.fp8_dequant_band[h] = Some(dequant_band::<{ To::F16 as u8 }>);
    t.fp8_dequant_isa[b] = Isa::Avx512;
    t.fp8_dequant_isa[h] = Isa::Avx512;
}

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    /// Every magnitude's f32 equals the codec's widening of the code (E4M3's NaN: the
    /// canonical NaN the widening gives; E5M2's: quiet, fraction kept), for both tables.
    pub fn magnitudes_are_the_widening() {
        for m in 0..128u32 {
            let want = crate::codec::widen_f32::<crate::F8E4M3>(m);
            assert_eq!(super::E4M3_MAG.0[m as usize], want, "magnitude {m:#x}");
            let want = crate::codec::widen_f32::<crate::F8E5M2>(m);
            assert_eq!(super::E5M2_MAG.0[m as usize], want, "E5M2 magnitude {m:#x}");
        }
    }
}
