//! The MX specification: the element formats, the scale rules of every profile and the
//! scalar quantization and dequantization of one block. The API (`src/block/mx.rs`) runs
//! these for every block a SIMD kernel leaves to it, and the SIMD kernels
//! (`src/arch/*/..._block.rs`) are tested against them bit for bit.

use core::mem::MaybeUninit;

use crate::block::spec::{BlockDest, BlockSource, DestKind, amax_bits, put, round_to, soft};
use crate::codec::{self, Format};
use crate::options::Policy;
use crate::{F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E5M2, NanPolicy, Overflow};

/// The scale rules with an integer definition that SIMD kernels implement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MxRule {
    /// [`MxProfile::Ocp`](crate::block::MxProfile::Ocp).
    Ocp = 0,
    /// [`MxProfile::Ceil`](crate::block::MxProfile::Ceil).
    Ceil = 1,
}

/// Values per MX block.
pub(crate) const BLOCK: usize = 32;

/// The element format of an MX block.
///
/// ```
/// use vcvt::block::MxElement;
/// assert_eq!(MxElement::E2M1.max(), 6.0);
/// assert_eq!(MxElement::E4M3.max(), 448.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MxElement {
    /// MXFP8 with [`F8E4M3`](crate::F8E4M3) elements (max 448, emax 8).
    E4M3,
    /// MXFP8 with [`F8E5M2`](crate::F8E5M2) elements (max 57344, emax 15).
    E5M2,
    /// MXFP6 with [`F6E2M3`](crate::F6E2M3) elements, one per byte (max 7.5, emax 2).
    ///
    /// One code per byte (low 6 bits) is how torchao's `MXTensor` and ml_dtypes hold fp6.
    /// The safetensors `F6_E2M3` dtype does not: safetensors 0.8 counts 6 bits per value
    /// (`Dtype::bitsize`, so `n` values take `n · 6 / 8` bytes) without documenting the bit
    /// order, and vcvt does not read that packing (its `safetensors` feature maps the dtype
    /// but refuses to convert it). torchao's `pack_uint6` (4 codes in 3 bytes) feeds its own
    /// GPU kernels; vcvt offers no packed form.
    E2M3,
    /// MXFP6 with [`F6E3M2`](crate::F6E3M2) elements, one per byte (max 28, emax 4), held
    /// as [`E2M3`](Self::E2M3) is.
    E3M2,
    /// MXFP4 with [`F4E2M1`](crate::F4E2M1) elements, two per byte, element `2j` in the low
    /// nibble of byte `j` (max 6, emax 2).
    E2M1,
}

impl MxElement {
    /// The largest finite element value.
    pub const fn max(self) -> f32 {
        match self {
            MxElement::E4M3 => 448.0,
            MxElement::E5M2 => 57344.0,
            MxElement::E2M3 => 7.5,
            MxElement::E3M2 => 28.0,
            MxElement::E2M1 => 6.0,
        }
    }

    /// `emax_elem` of the OCP rule: the exponent of the largest power of two ≤ [`max`](Self::max).
    pub const fn emax(self) -> i32 {
        match self {
            MxElement::E4M3 => 8,
            MxElement::E5M2 => 15,
            MxElement::E2M3 => 2,
            MxElement::E3M2 => 4,
            MxElement::E2M1 => 2,
        }
    }

    /// Bytes that `n` element codes take in a row: `n`, or `n.div_ceil(2)` for E2M1.
    pub const fn row_bytes(self, n: usize) -> usize {
        match self {
            MxElement::E2M1 => n.div_ceil(2),
            _ => n,
        }
    }

    pub(crate) const fn index(self) -> usize {
        self as usize
    }
}

/// `2^(s − 127)` as f32 bits, `+Inf` for `s = 255` (MLX's `power(2, s − 127)`).
pub(crate) fn mlx_pow2(s: u8) -> u32 {
    if s == 255 {
        0x7F80_0000
    } else {
        f32_pow2(s as i32 - 127)
    }
}

/// The bits MLX's CPU dequantization gives for an E4M3 NaN code `c` (whatever the scale):
/// f32 `0x7FF00000 | sign`, BF16 `0x7FC0` (sign dropped), F16 `0x7D00 | sign`.
pub(crate) fn mlx_fp8_nan<D: BlockDest>(c: u8) -> u32 {
    let neg = c & 0x80 != 0;
    match D::KIND {
        DestKind::F32 => 0x7FF0_0000 | if neg { 0x8000_0000 } else { 0 },
        DestKind::Bf16 => 0x7FC0,
        DestKind::F16 => 0x7D00 | if neg { 0x8000 } else { 0 },
    }
}

/// The `maxval` of MLX's modes as f32 bits.
pub(crate) fn mlx_maxval(element: MxElement) -> u32 {
    element.max().to_bits()
}

/// MLX's CPU scale of a finite block with largest magnitude `amax` (f32 bits) of values
/// of type `w`: the byte and the exponent `e` (the scale is `2^e`); `0xFF` for a NaN or
/// infinite `amax`.
pub(crate) fn mlx_scale(element: MxElement, w: DestKind, amax: u32) -> (u8, i32) {
    if amax >= 0x7F80_0000 {
        return (0xFF, 0);
    }
    let q = round_to(w, soft::div(amax, mlx_maxval(element)));
    // e = ceil(log2 q): the smallest e with 2^e >= q (q may be an f32 subnormal).
    let e = if q == 0 {
        0
    } else if q >= 0x0080_0000 {
        (q >> 23) as i32 - 127 + (q & 0x007F_FFFF != 0) as i32
    } else {
        let p = 31 - q.leading_zeros() as i32; // q = m * 2^-149, 2^p <= m < 2^(p+1)
        p - 149 + (q & (q - 1) != 0) as i32
    };
    // MLX's uint8 cast wraps: no clamp.
    ((e + 127) as u8, e)
}

/// MLX's CPU quantization of one MX block (see [`MxProfile::Mlx`](crate::block::MxProfile::Mlx)).
pub(crate) fn mlx_quantize_block<S: BlockSource>(
    element: MxElement,
    blk: &[S],
) -> (u8, [u8; BLOCK]) {
    let w = S::KIND;
    let mut codes = [0u8; BLOCK];
    let amax = amax_bits(blk);
    if amax >= 0x7F80_0000 {
        return (0xFF, codes);
    }
    let (byte, e) = mlx_scale(element, w, amax);
    let p = f32_pow2(e);
    for (c, x) in codes.iter_mut().zip(blk) {
        let wq = round_to(w, soft::div(x.f32_bits(), p));
        *c = match element {
            MxElement::E2M1 => mlx_fp4_argmin(w, wq),
            _ => codec::narrow_f32::<F8E4M3>(wq, MLX_FP8) as u8,
        };
    }
    (byte, codes)
}

/// E4M3 as MLX's `ToFP8` rounds: nearest even, saturating, NaN → ±448.
pub(crate) const MLX_FP8: Policy = Policy {
    overflow: Overflow::Saturate,
    nan: NanPolicy::ToMax,
};

/// MLX's fp4 encoding: the first index `i` (in code order `+0, 0.5, …, 6, −0, …, −6`)
/// minimising `|wq − lut[i]|`, each distance rounded to `w`'s type. A NaN `wq` makes
/// every distance NaN and gives code 0 (the first index); a NaN distance never follows a
/// finite one, since the distances are NaN exactly when `wq` is.
pub(crate) fn mlx_fp4_argmin(w: DestKind, wq: u32) -> u8 {
    let mut best = (0u8, u32::MAX);
    for k in 0..16u8 {
        let lut = decode(MxElement::E2M1, k);
        let err = round_to(w, soft::sub(wq, lut)) & 0x7FFF_FFFF;
        if err > 0x7F80_0000 {
            return if best.1 == u32::MAX { k } else { best.0 };
        }
        if err < best.1 {
            best = (k, err);
        }
    }
    best.0
}

/// Bytes of a ggml `block_mxfp4`.
pub(crate) const GGML_BLOCK: usize = 17;

/// gguf's MXFP4 scale byte of a block with largest magnitude `amax` (f32 bits).
pub(crate) fn ggml_scale(amax: u32) -> u8 {
    if amax == 0 || amax > 0x7F80_0000 {
        0
    } else if amax == 0x7F80_0000 {
        0xFF
    } else {
        (ggml_floor_log2(amax) - 2 + 127).clamp(0, 255) as u8
    }
}

/// gguf's MXFP4 quantization of one block (see [`MxProfile::Ggml`](crate::block::MxProfile::Ggml)).
pub(crate) fn ggml_quantize_block<S: BlockSource>(blk: &[S]) -> (u8, [u8; BLOCK]) {
    let s = ggml_scale(amax_bits(blk));
    // d = 2^(s - 128), the half scale; kvalues = E2M1 doubled, in code order.
    let d = f32_pow2(s as i32 - 128);
    let mut codes = [0u8; BLOCK];
    for (c, x) in codes.iter_mut().zip(blk) {
        let x = x.f32_bits();
        let mut best = (0u8, u32::MAX);
        for k in 0..16u8 {
            let kv = ggml_kvalue(k);
            let err = soft::sub(soft::mul(d, kv), x) & 0x7FFF_FFFF;
            if err > 0x7F80_0000 {
                // numpy's argmin stops at the first NaN.
                best = (k, 0);
                break;
            }
            if err < best.1 {
                best = (k, err);
            }
        }
        *c = best.0;
    }
    (s, codes)
}

/// gguf's dequantization of one MXFP4 block (codes one per byte, `out.len()` of them):
/// `kvalues[c] · 2^(s − 128)`, exact in f64 and rounded once to `D` (code 8 is `+0`; scale
/// `0xFF` is `2^127`, not NaN).
pub(crate) fn ggml_dequantize_block<D: BlockDest>(codes: &[u8], s: u8, out: &mut [MaybeUninit<D>]) {
    let v = f64::from_bits((1023 - 128 + s as u64) << 52);
    for (slot, &c) in out.iter_mut().zip(codes) {
        let k = soft::wide(decode(MxElement::E2M1, c & 0x7)) * 2.0;
        let k = if c & 0x8 != 0 && k != 0.0 { -k } else { k };
        put(slot, D::from_wide(k * v));
    }
}

/// MLX's CPU dequantization of one block (codes one per byte, `out.len()` of them): the
/// scale `2^(s − 127)` rounded to `D`, then `decode(c) · scale` in f32, rounded to `D`;
/// an E4M3 NaN code gives [`mlx_fp8_nan`].
pub(crate) fn mlx_dequantize_block<D: BlockDest>(
    element: MxElement,
    codes: &[u8],
    s: u8,
    out: &mut [MaybeUninit<D>],
) {
    let scale = round_to(D::KIND, mlx_pow2(s));
    for (slot, &c) in out.iter_mut().zip(codes) {
        if element == MxElement::E4M3 && c & 0x7F == 0x7F {
            put(slot, D::from_raw(mlx_fp8_nan::<D>(c)));
            continue;
        }
        let v = soft::mul(decode(element, c), scale);
        put(slot, D::from_f32_bits(v));
    }
}

/// f32 bits of ggml's `kvalues_mxfp4[k]` (E2M1 doubled; code 8 is `+0`).
pub(crate) fn ggml_kvalue(k: u8) -> u32 {
    const K: [u32; 8] = [0, 1, 2, 3, 4, 6, 8, 12];
    let v = (K[(k & 7) as usize] as f32).to_bits();
    if k & 8 != 0 && v != 0 {
        v | 0x8000_0000
    } else {
        v
    }
}

/// `2^n` as f32 bits for `-149 <= n <= 127`.
pub(crate) fn f32_pow2(n: i32) -> u32 {
    if n >= -126 {
        ((n + 127) as u32) << 23
    } else {
        1 << (n + 149)
    }
}

/// `floor(RN_f32(log2 x))` for a normal positive f32 `x` (bits): the exponent `E` of `x`,
/// or `E + 1` when `x` is so close below `2^(E+1)` that the correctly rounded f32 `log2`
/// is the integer `E + 1`. That happens when `log2(2^(E+1)) − log2(x) = −log2(m)` (with
/// `m = x / 2^(E+1)` in `[1/2, 1)`) is at most half an f32 ulp of the numbers just below
/// `E + 1`. `−log2(m)` is computed from the series of `ln(1 + u)`, `u = m − 1`, in f64,
/// accurate to a few f64 ulps, far finer than the half f32 ulp it is compared with (`log2` of an f32 that is not
/// a power of two is never that close to an f32 rounding boundary).
pub(crate) fn ggml_floor_log2(x: u32) -> i32 {
    let e = (x >> 23) as i32 - 127;
    let n = e + 1;
    if n == 0 || x & 0x007F_FFFF == 0 {
        return e;
    }
    // The exponent k of the binade holding the f32 numbers just below n (toward -Inf).
    let k = if n > 0 {
        // below n > 0: the binade of n - tiny, i.e. ceil(log2 n) - 1
        (32 - (n as u32 - 1).leading_zeros()) as i32 - 1
    } else {
        // below n < 0: magnitudes just above |n|, i.e. floor(log2 |n|)
        31 - (n.unsigned_abs()).leading_zeros() as i32
    };
    let half_ulp = f64::from_bits(((1023 + k - 24) as u64) << 52);
    // m - 1 is exact in f64: m has 24 significant bits.
    let m_minus_1 = f64::from_bits((((x & 0x007F_FFFF) as u64) << 29) | (1022u64 << 52)) - 1.0;
    let u = m_minus_1;
    if u < -1.0 / 1024.0 {
        // -log2(m) > 2^-10 / ln 2, more than any half ulp here (at most 2^-17).
        return e;
    }
    // -ln(1 + u) by its series; |u| <= 2^-10, so the terms after u^6 are below 2^-70.
    let (u2, u3) = (u * u, u * u * u);
    let ln = u - u2 / 2.0 + u3 / 3.0 - u2 * u2 / 4.0 + u2 * u3 / 5.0 - u3 * u3 / 6.0;
    let dist = -ln / core::f64::consts::LN_2;
    if dist <= half_ulp { n } else { e }
}

/// The E8M0 scale byte of a block with largest magnitude `amax` (f32 bits, NaN as
/// `0x7FC00000`) under `rule`.
#[inline]
pub(crate) fn scale_byte(element: MxElement, rule: MxRule, amax: u32) -> u8 {
    if amax >= 0x7F80_0000 {
        return 0xFF;
    }
    match rule {
        MxRule::Ocp => {
            // The biased exponent field is floor(log2 amax) + 127 for a normal amax; a zero
            // or subnormal amax has field 0, which the clamp turns into 2^-127.
            let e = (amax >> 23) as i32 - element.emax();
            e.clamp(0, 254) as u8
        }
        MxRule::Ceil => {
            let d = soft::div(amax, element.max().to_bits());
            ceil_pow2_byte(d)
        }
    }
}

/// [`scale_byte`] with the `Ceil` rule's f32 division replaced by integer arithmetic where
/// the quotient is normal: the one formula every SIMD block kernel uses. The result is the
/// same byte (the proof below; this module's test checks it against the division for every
/// element and exponent and the fractions around each step).
///
/// For `amax` with exponent field `ea ≥ emax + 2` and fraction `fa`, and `max = M · 2^emax`
/// (`1 ≤ M < 2`, fraction field `fm`), the quotient is `amax / max = r · 2^q` with
/// `r = A / M` (A the significand of amax) in `(1/2, 2)` and `q = ea − 127 − emax ≥ −125`,
/// so its f32 rounding `d = RN(r) · 2^q` is a normal number (`RN` at 24 bits). `Ceil` wants
/// the smallest `2^(b − 127) ≥ d`: `b = q + 127` when `RN(r) ≤ 1` and `q + 128` when
/// `RN(r) > 1` (then `RN(r) < 2`, as `r < 2/1.5`). `RN(r) > 1` exactly when `r > 1 + 2^-24`
/// (the midpoint to the next f32 above 1; at the midpoint itself the tie goes to the even
/// 1), i.e. `A − M > M · 2^-24`. In units of 2^-23, `A − M` is the integer `fa − fm` and
/// `M · 2^-24` lies in `[1/2, 1)`, so this is `fa > fm`. Hence
/// `b = ea − emax + [fa > fm]`, which is `((amax + 0x7FFFFF − fm) >> 23) − emax` (the
/// carry out of the fraction is the comparison), clamped to 254. Smaller `amax` (tiny
/// blocks, where `d` may be subnormal), NaN and Inf go to [`scale_byte`], and so does
/// `Ocp` (`CEIL == false`), which is integer already.
#[inline(always)]
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )),
    allow(dead_code) // Only the SIMD block kernels use it.
)]
pub(crate) fn scale_byte_fast<const CEIL: bool>(element: MxElement, amax: u32) -> u8 {
    let emax = element.emax() as u32;
    if CEIL && amax < 0x7F80_0000 && amax >> 23 >= emax + 2 {
        let fm = element.max().to_bits() & 0x007F_FFFF;
        (((amax + (0x007F_FFFF - fm)) >> 23) - emax).min(254) as u8
    } else {
        let rule = if CEIL { MxRule::Ceil } else { MxRule::Ocp };
        scale_byte(element, rule, amax)
    }
}

/// The smallest E8M0 byte `b ≤ 254` with `2^(b − 127) ≥ d` (f32 bits of a finite `d ≥ 0`).
#[inline(always)]
pub(crate) fn ceil_pow2_byte(d: u32) -> u8 {
    let e = d >> 23;
    let m = d & 0x007F_FFFF;
    let b = if e == 0 {
        // Zero or subnormal: 2^-127 is the f32 subnormal 0x00400000.
        (m > 0x0040_0000) as u32
    } else {
        e + (m != 0) as u32
    };
    b.min(254) as u8
}

/// `2^(127 − b)` as an f64, the reciprocal of scale byte `b ≤ 254` (exact).
#[inline(always)]
pub(crate) fn inv_scale(b: u8) -> f64 {
    f64::from_bits((1023 + 127 - b as u64) << 52)
}

/// `2^(b − 127)` as an f64, the value of scale byte `b ≤ 254` (exact).
#[inline(always)]
pub(crate) fn scale_value(b: u8) -> f64 {
    f64::from_bits((1023 - 127 + b as u64) << 52)
}

pub(crate) const SAT: Policy = Policy {
    overflow: Overflow::Saturate,
    nan: NanPolicy::Preserve,
};

/// Element code of `x · 2^k` (`k = 127 − b` for scale byte `b`): one rounding of the exact
/// product, saturated.
#[inline(always)]
pub(crate) fn element_code<E: Format>(x: u32, k: i32) -> u8 {
    let mag = x & 0x7FFF_FFFF;
    let e = (mag >> 23) as i32;
    if mag == 0 {
        codec::narrow_f32::<E>(x, SAT) as u8
    } else if (1..=254).contains(&e) && (1..=254).contains(&(e + k)) {
        // x and x · 2^k are normal f32 numbers: the product is x with its exponent field
        // moved by k, exactly.
        codec::narrow_f32::<E>(x.wrapping_add((k << 23) as u32), SAT) as u8
    } else {
        // Subnormal x or product (or a NaN/Inf, which a finite block cannot hold): the
        // exact product in f64, rounded once.
        codec::narrow_f64::<E>((soft::wide(x) * inv_scale((127 - k) as u8)).to_bits(), SAT) as u8
    }
}

/// Quantizes one row of values into its codes and scales.
pub(crate) fn quantize_row<S: BlockSource>(
    element: MxElement,
    rule: MxRule,
    row: &[S],
    data: &mut [MaybeUninit<u8>],
    scales: &mut [MaybeUninit<u8>],
) {
    match element {
        MxElement::E4M3 => quantize_row_bytes::<S, F8E4M3>(element, rule, row, data, scales),
        MxElement::E5M2 => quantize_row_bytes::<S, F8E5M2>(element, rule, row, data, scales),
        MxElement::E2M3 => quantize_row_bytes::<S, F6E2M3>(element, rule, row, data, scales),
        MxElement::E3M2 => quantize_row_bytes::<S, F6E3M2>(element, rule, row, data, scales),
        MxElement::E2M1 => {
            for ((blk, s), d) in row
                .chunks(BLOCK)
                .zip(scales.iter_mut())
                .zip(data.chunks_mut(BLOCK / 2))
            {
                let b = scale_byte(element, rule, amax_bits(blk));
                put(s, b);
                if b == 0xFF {
                    d.iter_mut().for_each(|c| put(c, 0));
                    continue;
                }
                let k = 127 - b as i32;
                for (pair, c) in blk.chunks(2).zip(d.iter_mut()) {
                    let lo = element_code::<F4E2M1>(pair[0].f32_bits(), k);
                    let hi = pair
                        .get(1)
                        .map_or(0, |x| element_code::<F4E2M1>(x.f32_bits(), k));
                    put(c, lo | (hi << 4));
                }
            }
        }
    }
}

pub(crate) fn quantize_row_bytes<S: BlockSource, E: Format>(
    element: MxElement,
    rule: MxRule,
    row: &[S],
    data: &mut [MaybeUninit<u8>],
    scales: &mut [MaybeUninit<u8>],
) {
    for ((blk, s), d) in row
        .chunks(BLOCK)
        .zip(scales.iter_mut())
        .zip(data.chunks_mut(BLOCK))
    {
        let b = scale_byte(element, rule, amax_bits(blk));
        put(s, b);
        if b == 0xFF {
            d.iter_mut().for_each(|c| put(c, 0));
            continue;
        }
        let k = 127 - b as i32;
        for (x, c) in blk.iter().zip(d.iter_mut()) {
            put(c, element_code::<E>(x.f32_bits(), k));
        }
    }
}

/// The f32 bits of element code `c` (exact).
#[inline(always)]
pub(crate) fn decode(element: MxElement, c: u8) -> u32 {
    let c = c as u32;
    match element {
        MxElement::E4M3 => codec::widen_f32::<F8E4M3>(c),
        MxElement::E5M2 => codec::widen_f32::<F8E5M2>(c),
        MxElement::E2M3 => codec::widen_f32::<F6E2M3>(c),
        MxElement::E3M2 => codec::widen_f32::<F6E3M2>(c),
        MxElement::E2M1 => codec::widen_f32::<F4E2M1>(c),
    }
}

/// The code of value `i` of a row of codes.
#[inline(always)]
pub(crate) fn code_at(element: MxElement, codes: &[u8], i: usize) -> u8 {
    match element {
        MxElement::E2M1 => (codes[i / 2] >> (4 * (i & 1))) & 0xF,
        _ => codes[i],
    }
}

/// Dequantizes the block of a row that starts at value `lo` (with `out.len()` values) under
/// the OCP decoding: exact products, `0xFF` a NaN block.
pub(crate) fn dequantize_block<D: BlockDest>(
    element: MxElement,
    codes: &[u8],
    lo: usize,
    s: u8,
    out: &mut [MaybeUninit<D>],
) {
    if s == 0xFF {
        let nan = D::from_f32_bits(0x7FC0_0000);
        out.iter_mut().for_each(|o| put(o, nan));
        return;
    }
    let v = scale_value(s);
    let k = s as i32 - 127;
    let value = |c: u8| {
        let e = decode(element, c);
        let mag = e & 0x7FFF_FFFF;
        let ex = (mag >> 23) as i32 + k;
        if mag == 0 || mag >= 0x7F80_0000 {
            // ±0, ±Inf and NaN times a finite power of two are themselves.
            D::from_f32_bits(e)
        } else if (1..=254).contains(&ex) {
            // Every element is a normal f32; the product is normal too: move the exponent.
            D::from_f32_bits(e.wrapping_add((k << 23) as u32))
        } else {
            D::from_wide(soft::wide(e) * v)
        }
    };
    if element == MxElement::E2M1 {
        // 16 codes: their 16 results once, then a lookup per value.
        let table: [D; 16] = core::array::from_fn(|c| value(c as u8));
        for (i, o) in out.iter_mut().enumerate() {
            put(o, table[code_at(element, codes, lo + i) as usize]);
        }
        return;
    }
    for (i, o) in out.iter_mut().enumerate() {
        put(o, value(code_at(element, codes, lo + i)));
    }
}

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    use super::{MxElement, MxRule, scale_byte, scale_byte_fast};

    /// The integer `Ceil` formula against the specification's f32 division, for every
    /// element, every exponent field and the fractions around the element maximum's
    /// fraction (where the byte steps), plus a stride through the rest; `Ocp`, NaN and Inf
    /// pass through unchanged.
    pub fn scale_byte_fast_is_the_division() {
        let elements = [
            MxElement::E4M3,
            MxElement::E5M2,
            MxElement::E2M3,
            MxElement::E3M2,
            MxElement::E2M1,
        ];
        for e in elements {
            let fm = e.max().to_bits() & 0x007F_FFFF;
            let near =
                (0..3).flat_map(|d| [fm.wrapping_sub(d) & 0x007F_FFFF, (fm + d) & 0x007F_FFFF]);
            let fracs = [0, 1, 0x007F_FFFF, 0x0040_0000]
                .into_iter()
                .chain(near)
                .chain((0..0x0080_0000).step_by(4099));
            for ea in 0..=255u32 {
                for f in fracs.clone() {
                    let amax = (ea << 23) | f;
                    let amax = if ea == 255 && f != 0 {
                        0x7FC0_0000
                    } else {
                        amax
                    };
                    assert_eq!(
                        scale_byte_fast::<true>(e, amax),
                        scale_byte(e, MxRule::Ceil, amax),
                        "{e:?} amax {amax:#x}"
                    );
                    assert_eq!(
                        scale_byte_fast::<false>(e, amax),
                        scale_byte(e, MxRule::Ocp, amax),
                        "{e:?} amax {amax:#x}"
                    );
                }
            }
        }
    }
}
