//! `dequantize_scaled` into BF16 and F16 on the AVX-512 tiers by a per-call table, for the
//! one-byte formats other than F8E4M3 and F8E5M2 (which have tables of their own in
//! `avx512_fp8.rs`): the fnuz formats, fp6, fp4, F8E3M4, F8E4M3IEEE and F8E5M3FNU; and the
//! lookups of the table that serves every other scale.
//!
//! **The table is the generic kernel's output.** A call has one scale, so each code's result
//! is fixed. The generic 512-bit kernel (`scaled::dequantize_exact`, the one these slots ran
//! before) converts the format's magnitude codes, or all its codes, once under the call's
//! scale into a small buffer: that buffer is the table, bit for bit what the kernel would
//! have stored for those codes. Each code is then one to four `VPERMW`/`VPERMT2W` lookups
//! (and for the signed eight-bit formats an XOR of its sign).
//!
//! **Why the sign is an XOR** (signed eight-bit formats). The slot's scales make every
//! product of a finite code an exact f32 (`ScaledCode::exact_scale`), so the result is that
//! product rounded once to BF16/F16, and `round(−x · s) = −round(x · s)`: rounding to
//! nearest even is symmetric, and so is a product's sign. An infinity times `s` is an
//! infinity of the product's sign, and a NaN code widens to a NaN with the code's sign and
//! payload, which the kernel keeps: both flip with the code's sign as well. Zero works too:
//! the entry of magnitude 0 is `+0 · s` (the sign of `s`) and the XOR gives `−0 · s`. The
//! fnuz formats' `0x80` is NaN, not `−0`: it takes the kernel's word for that code, which
//! the table build also converts.
//!
//! **Codes:**
//! - Signed eight-bit (F8E4M3FNUZ, F8E5M2FNUZ, F8E4M3B11FNUZ, F8E3M4, F8E4M3IEEE): the
//!   magnitude is the low 7 bits and the sign is bit 7. The table has 128 entries in four
//!   registers: `VPERMT2W` reads 6 index bits, so two lookups cover the magnitudes and bit 6
//!   picks between them.
//! - fp6 (F6E2M3, F6E3M2) and fp4 (F4E2M1): the table holds every code, sign included, so
//!   no XOR is needed. fp6 has 64 entries in two registers, looked up by `VPERMT2W` (6 index
//!   bits). fp4 has its 16 entries twice in one register, looked up by `VPERMW` (5 index
//!   bits, so bit 4 changes nothing). The index bits above those are not read: the codec
//!   ignores bits above a format's width as well.
//! - F8E5M3FNU (unsigned, 256 codes): every code in eight registers, four `VPERMT2W` lookups
//!   and three selects by bits 6 and 7.
//!
//! **When.** Building the table costs the generic kernel on 32 to 256 codes plus a few loads,
//! so shorter calls ([`min_len`]) run the generic kernel directly.
//!
//! **Any scale** (`lookup16`, `lookup32`). For the scales that no fused slot serves, and for
//! E8M0, the building block itself makes a table of 256 results per call, by the
//! specification's two-step route (`src/block/scaled.rs`). These slots only look codes up
//! in it: the two-byte destinations with the cheapest of the lookups above that the table's
//! shape allows (read off the table, so the choice cannot be wrong), f32 by `VPGATHERDD`.
//! `tests/block_generic.rs` (every code in one call under scales at the edges of the slot's
//! condition, every MXCSR setting), `tests/block_backends.rs` (lengths up to 1000) and
//! `tests/block_scaled_tails.rs` (every length up to 170, canaries) compare every backend
//! with the scalar specification.

use core::arch::x86_64::*;

use super::avx512::V512;
use crate::block::spec::DestKind;
use crate::block::spec::kernels::BlockKernels;
use crate::codec::Format;
use crate::simd::generic::block::run::Out;
use crate::simd::generic::block::scaled;
use crate::simd::generic::kernels::{Brain, Half};

/// The shortest call that builds a table of `words` entries (and `fnuz`: one more for
/// `0x80`); shorter calls run the generic kernel, which costs less than the table's build.
/// On the Intel VM (`dequantize_scaled` into BF16, per call, one binary with and one
/// without the tables): F8E4M3FNUZ about even at 128 codes (26 and 24 ns), fp6 and fp4
/// already faster at 64 (12 against 14 ns, 9 against 14). The 256-entry table (F8E5M3FNU)
/// was not timed at short lengths: it starts at 512 codes, twice the 256 its build converts.
const fn min_len(words: usize) -> usize {
    match words {
        0..=64 => 64,
        65..=128 => 128,
        _ => 512,
    }
}

/// Codes `0..256`; the first 128 are the magnitudes of a signed eight-bit format.
static ALL_CODES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i as u8;
        i += 1;
    }
    t
};

/// Codes `j & 15` for `j < 32`: the 16 F4E2M1 codes, twice.
static FP4_CODES: [u8; 32] = {
    let mut t = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        t[i] = (i & 15) as u8;
        i += 1;
    }
    t
};

/// A buffer of 256 words, 64-byte aligned for the table's loads.
#[repr(C, align(64))]
struct Words([u16; 256]);

/// How a table turns 32 codes (zero-extended to words) into their 32 results.
pub(super) trait Lookup {
    /// The results of the 32 codes of `c`.
    ///
    /// # Safety
    /// The CPU has AVX-512 F/BW (the callers are compiled with them).
    unsafe fn words(&self, c: __m512i) -> __m512i;
}

/// 128 magnitudes in four registers and the sign at bit 7; with `FNUZ`, code `0x80` takes
/// its own word `nan`.
pub(super) struct Signed<const FNUZ: bool> {
    pub(super) t: [__m512i; 4],
    pub(super) nan: __m512i,
}

impl<const FNUZ: bool> Lookup for Signed<FNUZ> {
    #[inline(always)]
    unsafe fn words(&self, c: __m512i) -> __m512i {
        // SAFETY: register-only AVX-512 F/BW instructions (the caller's guarantee).
        unsafe {
            // VPERMT2W reads the index's low 6 bits (bit 5 picks the second register), so
            // each pair covers 64 magnitudes; bit 6 picks the pair.
            let lo = _mm512_permutex2var_epi16(self.t[0], c, self.t[1]);
            let hi = _mm512_permutex2var_epi16(self.t[2], c, self.t[3]);
            let upper = _mm512_test_epi16_mask(c, _mm512_set1_epi16(0x40));
            let r = _mm512_mask_blend_epi16(upper, lo, hi);
            // r ^ ((c << 8) & 0x8000): bit 7 of the code flips the result's sign (ternary
            // logic A ^ (B & C)).
            let r = _mm512_ternarylogic_epi32::<0x78>(
                r,
                _mm512_slli_epi16::<8>(c),
                _mm512_set1_epi16(i16::MIN),
            );
            if FNUZ {
                let nan = _mm512_cmpeq_epi16_mask(c, _mm512_set1_epi16(0x80));
                _mm512_mask_mov_epi16(r, nan, self.nan)
            } else {
                r
            }
        }
    }
}

/// Whole codes: 32 entries in one register (`N == 1`, `VPERMW`, 5 index bits), 64 in two
/// (`N == 2`, `VPERMT2W`, 6 index bits) or 256 in eight (`N == 8`: four `VPERMT2W`, then
/// bits 6 and 7 select); the code's higher bits are not read.
struct Whole<const N: usize> {
    t: [__m512i; N],
}

impl<const N: usize> Lookup for Whole<N> {
    #[inline(always)]
    unsafe fn words(&self, c: __m512i) -> __m512i {
        // SAFETY: register-only AVX-512 F/BW instructions (the caller's guarantee).
        unsafe {
            if N == 1 {
                _mm512_permutexvar_epi16(c, self.t[0])
            } else if N == 2 {
                _mm512_permutex2var_epi16(self.t[0], c, self.t[1])
            } else {
                // Entries 64q..64q + 64 in registers 2q and 2q + 1 (q < 4, N == 8; the
                // `% N` only keeps the other instantiations' indices in bounds).
                let t = &self.t;
                let q0 = _mm512_permutex2var_epi16(t[0], c, t[1 % N]);
                let q1 = _mm512_permutex2var_epi16(t[2 % N], c, t[3 % N]);
                let q2 = _mm512_permutex2var_epi16(t[4 % N], c, t[5 % N]);
                let q3 = _mm512_permutex2var_epi16(t[6 % N], c, t[7 % N]);
                let b6 = _mm512_test_epi16_mask(c, _mm512_set1_epi16(0x40));
                let b7 = _mm512_test_epi16_mask(c, _mm512_set1_epi16(0x80));
                let low = _mm512_mask_blend_epi16(b6, q0, q1);
                let high = _mm512_mask_blend_epi16(b6, q2, q3);
                _mm512_mask_blend_epi16(b7, low, high)
            }
        }
    }
}

/// The codes of `src` (`len` of them) through `l` into `dst`, 32 a step, the last
/// `len % 32` by masked accesses.
///
/// # Safety
/// `src` readable for `len` bytes, `dst` writable for `len` two-byte values; the CPU has
/// AVX-512 F/BW/VL/DQ.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
pub(super) unsafe fn run<L: Lookup>(l: &L, src: *const u8, len: usize, dst: *mut u8) {
    let mut i = 0;
    while len - i >= 32 {
        // SAFETY: codes i..i + 32 and values i..i + 32 (64 bytes) lie below `len`; the
        // features are this function's.
        unsafe {
            let c = _mm512_cvtepu8_epi16(_mm256_loadu_si256(src.add(i).cast()));
            _mm512_storeu_si512(dst.add(2 * i).cast(), l.words(c));
        }
        i += 32;
    }
    let n = len - i;
    if n > 0 {
        let k: __mmask32 = (1u32 << n) - 1;
        // SAFETY: the masks enable codes and values i..i + n only (n < 32), below `len`;
        // masked-off lanes are neither read nor written.
        unsafe {
            let c = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(k, src.add(i).cast()));
            _mm512_mask_storeu_epi16(dst.add(2 * i).cast(), k, l.words(c));
        }
    }
}

/// The generic 512-bit kernel's results of `codes` under `scale` into `D`'s words.
///
/// # Safety
/// `codes.len() <= 256`; `scale` exact for `F` (the slot's condition); the CPU has the
/// `Avx512` tier's features.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn build<F: Format, D: Out>(codes: &[u8], scale: u32) -> Words {
    let mut w = Words([0; 256]);
    // SAFETY: `codes` is readable for its length and `w` holds 256 ≥ that many words; the
    // generic kernel at 512 bits needs these features and no FP environment (its products
    // carry their rounding).
    unsafe {
        scaled::dequantize_exact::<V512, F, D>(
            codes.as_ptr(),
            codes.len(),
            scale,
            w.0.as_mut_ptr().cast(),
        )
    };
    w
}

/// The `dequantize_scaled` slot of a signed eight-bit format into `D` (BF16 or F16), `FNUZ`
/// for the formats whose `0x80` is NaN.
///
/// # Safety
/// The `ScaledFn` contract; the table holding this is chosen only when the `Avx512` tier's
/// features were found.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn scaled_signed<F: Format, D: Out, const FNUZ: bool>(
    src: *const u8,
    n: usize,
    scale: u32,
    dst: *mut u8,
) {
    if n < min_len(128) {
        // SAFETY: forwarded contract; as in `build`.
        unsafe { scaled::dequantize_exact::<V512, F, D>(src, n, scale, dst) };
        return;
    }
    // Magnitudes 0..128, then 0x80 for its own word.
    let codes: &[u8] = if FNUZ {
        &ALL_CODES[..129]
    } else {
        &ALL_CODES[..128]
    };
    // SAFETY: 128 or 129 codes; the slot's scale; the features are this function's.
    let w = unsafe { build::<F, D>(codes, scale) };
    // SAFETY: words 0..128 of the 256 (four loads of 32), 64-byte aligned; the features
    // are this function's.
    let t = unsafe {
        let p = w.0.as_ptr();
        [
            _mm512_load_si512(p.cast()),
            _mm512_load_si512(p.add(32).cast()),
            _mm512_load_si512(p.add(64).cast()),
            _mm512_load_si512(p.add(96).cast()),
        ]
    };
    let l = Signed::<FNUZ> {
        t,
        nan: _mm512_set1_epi16(w.0[128] as i16),
    };
    // SAFETY: the slot's contract gives `n` codes and `n` values.
    unsafe { run(&l, src, n, dst) }
}

/// The `dequantize_scaled` slot of an fp4 (`N == 1`: [`FP4_CODES`]), fp6 (`N == 2`: codes
/// `0..64`) or unsigned eight-bit (`N == 8`: every code) format into `D`.
///
/// # Safety
/// As [`scaled_signed`]; `N` is 1 for a four-bit format, 2 for a six-bit one, 8 for an
/// unsigned eight-bit one.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn scaled_whole<F: Format, D: Out, const N: usize>(
    src: *const u8,
    n: usize,
    scale: u32,
    dst: *mut u8,
) {
    if n < min_len(32 * N) {
        // SAFETY: forwarded contract; as in `build`.
        unsafe { scaled::dequantize_exact::<V512, F, D>(src, n, scale, dst) };
        return;
    }
    let codes: &[u8] = if N == 1 {
        &FP4_CODES
    } else {
        &ALL_CODES[..32 * N]
    };
    // SAFETY: 32, 64 or 256 codes; the slot's scale; the features are this function's.
    let w = unsafe { build::<F, D>(codes, scale) };
    let mut t = [_mm512_setzero_si512(); N];
    for (k, v) in t.iter_mut().enumerate() {
        // SAFETY: words 32k..32k + 32 of the 256 (k < N <= 8), 64-byte aligned; the
        // features are this function's.
        *v = unsafe { _mm512_load_si512(w.0.as_ptr().add(32 * k).cast()) };
    }
    // SAFETY: the slot's contract gives `n` codes and `n` values.
    unsafe { run(&Whole::<N> { t }, src, n, dst) }
}

/// The `lookup` slot of the two-byte destinations: the 256 words of `table` in eight
/// registers, looked up by the cheapest of the lookups above that the table's shape allows,
/// which the kernel reads off the table itself (so the choice cannot be wrong):
/// - repeating every 32 words (a four-bit format, whose table the caller repeats): one
///   `VPERMW`, [`Whole<1>`], which reads 5 index bits;
/// - repeating every 64 words (a six-bit format): one `VPERMT2W`, [`Whole<2>`];
/// - each word of codes `0x81..0x100` the word of its magnitude with the sign bit flipped
///   (a signed eight-bit format: rounding is symmetric, see the module docs): [`Signed`],
///   with code `0x80`'s own word;
/// - otherwise (E8M0, F8E5M3FNU): [`Whole<8>`].
///
/// # Safety
/// The `LookupFn` contract; the table holding this is chosen only when the `Avx512` tier's
/// features were found.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn lookup16(table: *const u8, src: *const u8, n: usize, dst: *mut u8) {
    let mut t = [_mm512_setzero_si512(); 8];
    for (k, v) in t.iter_mut().enumerate() {
        // SAFETY: bytes 64k..64k + 64 of the table's 512 (k < 8); the features are this
        // function's.
        *v = unsafe { _mm512_loadu_si512(table.add(64 * k).cast()) };
    }
    let same = |a: __m512i, b: __m512i| _mm512_cmpneq_epi16_mask(a, b) == 0;
    let signed = (0..4).all(|k| {
        let flipped = _mm512_xor_si512(t[k], _mm512_set1_epi16(i16::MIN));
        // Word 0 of register 4 is code 0x80, which has a word of its own.
        let free: __mmask32 = if k == 0 { !1 } else { !0 };
        _mm512_mask_cmpneq_epi16_mask(free, t[k + 4], flipped) == 0
    });
    if (1..8).all(|k| same(t[k], t[0])) {
        // SAFETY: the slot's contract gives `n` codes and `n` values; the table repeats
        // every 32 words, so word `c & 31` is word `c`.
        unsafe { run(&Whole::<1> { t: [t[0]] }, src, n, dst) }
    } else if (2..8).all(|k| same(t[k], t[k % 2])) {
        // SAFETY: as above; the table repeats every 64 words.
        unsafe { run(&Whole::<2> { t: [t[0], t[1]] }, src, n, dst) }
    } else if signed {
        let l = Signed::<true> {
            t: [t[0], t[1], t[2], t[3]],
            // SAFETY: word 128 of the table's 256 (2-byte aligned or not: unaligned read).
            nan: _mm512_set1_epi16(unsafe { table.cast::<i16>().add(128).read_unaligned() }),
        };
        // SAFETY: as above; the upper 128 words are the lower ones with the sign flipped,
        // but word 128, which `l` holds.
        unsafe { run(&l, src, n, dst) }
    } else {
        // SAFETY: as above; all 256 words in the eight registers.
        unsafe { run(&Whole::<8> { t }, src, n, dst) }
    }
}

/// The `lookup` slot of f32: 16 codes a step, each gathered from the 256 values of `table`
/// (`VPGATHERDD`, indices 0..256 scaled by 4), the last `n % 16` by masked accesses.
///
/// # Safety
/// As [`lookup16`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn lookup32(table: *const u8, src: *const u8, n: usize, dst: *mut u8) {
    let mut i = 0;
    while n - i >= 16 {
        // SAFETY: codes i..i + 16 and values i..i + 16 (64 bytes) lie below `n`; each index
        // is a byte (below 256), so every gathered value lies in the table's 1 KiB; the
        // features are this function's.
        unsafe {
            let c = _mm512_cvtepu8_epi32(_mm_loadu_si128(src.add(i).cast()));
            let v = _mm512_i32gather_epi32::<4>(c, table.cast());
            _mm512_storeu_si512(dst.add(4 * i).cast(), v);
        }
        i += 16;
    }
    let r = n - i;
    if r > 0 {
        let k: __mmask16 = (1u16 << r) - 1;
        // SAFETY: the masks enable codes and values i..i + r only (r < 16), below `n`; the
        // masked-off lanes are neither read, gathered nor written; the enabled indices are
        // bytes, as above.
        unsafe {
            let c = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(k, src.add(i).cast()));
            let v = _mm512_mask_i32gather_epi32::<4>(_mm512_setzero_si512(), k, c, table.cast());
            _mm512_mask_storeu_epi32(dst.add(4 * i).cast(), k, v);
        }
    }
}

/// The scaled building blocks' products, the portable loop compiled with AVX-512 enabled,
/// for LLVM to vectorise at 512 bits (`avx2_block.rs` does the same at 256).
///
/// # Safety
/// `bits` readable and `out` writable for `n` aligned values; the CPU has AVX-512 F/DQ.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
unsafe fn products(bits: *const u32, n: usize, s: f64, out: *mut f64) {
    // SAFETY: the caller's contract: `n` aligned values each, not overlapping (`out` is a
    // distinct buffer).
    let (b, o) = unsafe {
        (
            core::slice::from_raw_parts(bits, n),
            core::slice::from_raw_parts_mut(out, n),
        )
    };
    crate::block::spec::products(b, s, o);
}

/// Sets the BF16 and F16 `dequantize_scaled` slots of every scaled format but F8E4M3 and
/// F8E5M2 in an AVX-512 table to the kernels above, and its `lookup` and `products` slots.
/// Measured in docs/performance.md, "`dequantize_scaled` of every format" and
/// "`dequantize_scaled` with any scale" (the products are the portable loop at 512 bits,
/// for the two-step route and so for that table's build).
pub(crate) const fn set(t: &mut BlockKernels) {
    use crate::{F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3B11FNUZ, F8E4M3FNUZ, F8E4M3IEEE};
    use crate::{F8E5M2FNUZ, F8E5M3FNU};
    let (b, h) = (DestKind::Bf16 as usize, DestKind::F16 as usize);
    // The slots' order is `ScaledCode::FUSED`: F8E4M3FNUZ 2, F8E5M2FNUZ 3, F6E2M3 4,
    // F6E3M2 5, F4E2M1 6, F8E3M4 7, F8E4M3IEEE 8, F8E4M3B11FNUZ 9, F8E5M3FNU 10.
    t.dequantize_scaled[2][b] = Some(scaled_signed::<F8E4M3FNUZ, Brain, true>);
    t.dequantize_scaled[2][h] = Some(scaled_signed::<F8E4M3FNUZ, Half, true>);
    t.dequantize_scaled[3][b] = Some(scaled_signed::<F8E5M2FNUZ, Brain, true>);
    t.dequantize_scaled[3][h] = Some(scaled_signed::<F8E5M2FNUZ, Half, true>);
    t.dequantize_scaled[4][b] = Some(scaled_whole::<F6E2M3, Brain, 2>);
    t.dequantize_scaled[4][h] = Some(scaled_whole::<F6E2M3, Half, 2>);
    t.dequantize_scaled[5][b] = Some(scaled_whole::<F6E3M2, Brain, 2>);
    t.dequantize_scaled[5][h] = Some(scaled_whole::<F6E3M2, Half, 2>);
    t.dequantize_scaled[6][b] = Some(scaled_whole::<F4E2M1, Brain, 1>);
    t.dequantize_scaled[6][h] = Some(scaled_whole::<F4E2M1, Half, 1>);
    t.dequantize_scaled[7][b] = Some(scaled_signed::<F8E3M4, Brain, false>);
    t.dequantize_scaled[7][h] = Some(scaled_signed::<F8E3M4, Half, false>);
    t.dequantize_scaled[8][b] = Some(scaled_signed::<F8E4M3IEEE, Brain, false>);
    t.dequantize_scaled[8][h] = Some(scaled_signed::<F8E4M3IEEE, Half, false>);
    t.dequantize_scaled[9][b] = Some(scaled_signed::<F8E4M3B11FNUZ, Brain, true>);
    t.dequantize_scaled[9][h] = Some(scaled_signed::<F8E4M3B11FNUZ, Half, true>);
    t.dequantize_scaled[10][b] = Some(scaled_whole::<F8E5M3FNU, Brain, 8>);
    t.dequantize_scaled[10][h] = Some(scaled_whole::<F8E5M3FNU, Half, 8>);
    t.products = Some(products);
    // `Avx2`'s preference for F4E2M1's table does not hold here (17.8 fused, 16.9 table).
    t.table_first = [false; crate::block::spec::kernels::SCALED_FORMATS];
    t.lookup[b] = Some(lookup16);
    t.lookup[h] = Some(lookup16);
    t.lookup[DestKind::F32 as usize] = Some(lookup32);
}
