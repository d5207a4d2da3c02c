//! One-byte formats widened in 16-bit words: `2 · LANES` elements per vector.
//!
//! The lanes of `lanes.rs` carry every element in 32 bits, which caps a one-byte format at a
//! quarter of the vector. Every value of an IEEE-like format of at most 8 bits with at most 4
//! fraction bits is exact in BF16, and in F16 when its range fits there, so its widening
//! can run entirely on 16-bit words of the target's encoding (`W`, [`Enc`]); the f32 and
//! f64 results are BF16 words moved to the top of 32-bit lanes (BF16 is the top half of the
//! f32 of the same value). [`widen_words`] gives, word by word, exactly the bits of the
//! scalar codec's widening followed by its one rounding to `W`, which is exact here:
//!
//! * **normal codes** (`mag >= 2^MAN_BITS`): `(mag << (W_MAN − MAN_BITS)) + ((W_BIAS −
//!   BIAS) << W_MAN)` puts the fraction at the top of `W`'s fraction and re-biases the
//!   exponent field with one add. This is `W`'s encoding of the value when `W` has at least
//!   `F`'s exponent range at the bottom (`BIAS <= W_BIAS`: `F`'s smallest normal is a normal
//!   of `W`) and at the top (`F`'s largest finite exponent at most `W`'s), which
//!   [`eligible`] checks at compile time;
//! * **subnormal codes** (`mag < 2^MAN_BITS <= 16`): a 16-word table of `W`'s encodings of
//!   `mag · 2^(1 − BIAS − MAN_BITS)`, computed at compile time ([`sub_table`]) and looked up
//!   with [`Vector::lookup_u16`] (two `VPSHUFB`, NEON `TBL`, wasm `swizzle`);
//! * the **sign** is the code's sign bit moved to bit 15 (an unsigned format has none);
//! * **Inf and NaN codes** are replaced by `W`'s encoding of the codec's f32 result rounded
//!   to `W` under `NanPolicy::Preserve`: ±Inf, and the quiet NaN of the code's sign with the
//!   code's fraction as its top payload bits where the format keeps a payload (E5M2) and
//!   without it otherwise, `F16`'s and BF16's NaN narrowing keeping the top payload bits;
//!   the unsigned NaN codes (`0x80` of fnuz) take their fixed f32 NaN's encoding.
//!
//! No floating-point instruction is involved, so no MXCSR/FPCR setting can change a result.
//! With `Overflow::Saturate`, a narrow → F16/BF16 pair gives `±MAX` for an infinite source
//! (the codec's rule: every result that rounds to `±Inf` from a finite or infinite source);
//! [`saturate`] applies it to the finished words.

use crate::codec::{Format, NanKind};
use crate::simd::Vector;

/// A target of the word widenings.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enc {
    /// BF16 words.
    Bf16,
    /// F16 words.
    F16,
    /// f32: the source's words are BF16 words or scaled F16 words ([`widen_scaled_f16`]),
    /// which `Src::words_to_f32` turns into two vectors of f32 bits.
    F32,
    /// f64, through f32 as [`Enc::F32`], but only from scaled F16 words: through BF16 words
    /// the f64 widening measured slower than in 32-bit lanes.
    F64,
}

impl Enc {
    /// Fraction bits.
    const fn man(self) -> u32 {
        match self {
            Enc::Bf16 | Enc::F32 | Enc::F64 => 7,
            Enc::F16 => 10,
        }
    }
    /// Exponent bias.
    const fn bias(self) -> i32 {
        match self {
            Enc::Bf16 | Enc::F32 | Enc::F64 => 127,
            Enc::F16 => 15,
        }
    }
    /// The largest finite exponent.
    const fn emax(self) -> i32 {
        self.bias()
    }
    /// The encoding of +Inf.
    const fn inf(self) -> u32 {
        match self {
            Enc::Bf16 | Enc::F32 | Enc::F64 => 0x7F80,
            Enc::F16 => 0x7C00,
        }
    }
    /// The encoding of f32 bits `x` that hold a NaN: the codec's f32 → BF16 / F16 NaN
    /// narrowing under `Preserve` (sign, quiet bit, the top payload bits).
    const fn nan_of_f32(self, x: u32) -> u32 {
        match self {
            Enc::Bf16 | Enc::F32 | Enc::F64 => (x >> 16) | 0x0040,
            Enc::F16 => ((x >> 16) & 0x8000) | 0x7E00 | ((x >> 13) & 0x03FF),
        }
    }
}

/// Whether format `F`'s codes widen to `e` in words (see the module docs): at most 8 bits
/// and 4 fraction bits, and every finite value exact in `e` with `F`'s normals on `e`'s
/// normals.
pub(crate) const fn eligible<F: Format>(e: Enc) -> bool {
    let max_exp_field = (F::MAX & F::MAG_MASK) >> F::MAN_BITS;
    F::BITS <= 8
        && F::MAN_BITS >= 1
        && F::MAN_BITS <= 4
        && F::BIAS <= e.bias()
        && max_exp_field as i32 - F::BIAS <= e.emax()
}

/// `e`'s encodings of the subnormal codes' values `m · 2^(1 − BIAS − MAN_BITS)`,
/// `m < 2^MAN_BITS` (the other entries are 0). Each is normal in BF16; in F16 it may be a
/// subnormal, still exact for an [`eligible`] format (its quantum `2^(1 − BIAS − MAN_BITS)`
/// is at least F16's `2^-24`).
pub(crate) const fn sub_table<F: Format>(e: Enc) -> [u16; 16] {
    let mut t = [0u16; 16];
    let mut m = 1u32;
    while m < (1 << F::MAN_BITS) {
        // m = 2^h · (1.f): the value's exponent is h + k with k = 1 − BIAS − MAN_BITS.
        let h = 31 - m.leading_zeros();
        let k = 1 - F::BIAS - F::MAN_BITS as i32;
        let exp = h as i32 + k;
        let word = if exp >= 1 - e.bias() {
            // Normal in `e`: drop the leading bit, left-align the rest in the fraction.
            let frac = (m - (1 << h)) << (e.man() - h);
            (((exp + e.bias()) as u32) << e.man()) | frac
        } else {
            // Subnormal in `e`: m · 2^k in quanta of 2^(1 − bias − man), an integer.
            m << (k - (1 - e.bias() - e.man() as i32)) as u32
        };
        t[m as usize] = word as u16;
        m += 1;
    }
    t
}

/// Codes of `F` in words (bits above its width ignored) widened to `e`'s encoding, exactly;
/// `sub` is [`sub_table`] loaded as `Vector::lookup_u16` wants it. See the module docs.
///
/// # Safety
/// The CPU has `V`'s features; `F` is [`eligible`] for `e`.
#[inline(always)]
pub(crate) unsafe fn widen_words<V: Vector, F: Format>(code: V, e: Enc, sub: &[V; 2]) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let c = code.and(V::splat(F::CODE_MASK * 0x0001_0001));
        let mag = c.and(V::splat(F::MAG_MASK * 0x0001_0001));
        let rebias = (((e.bias() - F::BIAS) as u32) << e.man()) * 0x0001_0001;
        let normal = mag.shl16(e.man() - F::MAN_BITS).add16(V::splat(rebias));
        // `lookup_u16` wants indices below 16 in every word: the subnormal codes are, and
        // the other words' lookups are discarded by the blend.
        let small = mag.and(V::splat(0x000F_000F)).lookup_u16(sub);
        let is_sub = V::splat((1 << F::MAN_BITS) * 0x0001_0001).gt16(mag);
        let w = V::blend(is_sub, small, normal);
        let sign = if F::SIGNED {
            c.and(V::splat(F::SIGN_BIT * 0x0001_0001))
                .shl16(16 - F::BITS)
        } else {
            V::splat(0)
        };
        specials::<V, F>(c, mag, sign, w, e)
    }
}

/// The finished words: `w` (the magnitudes' words, without sign) with the Inf and NaN codes
/// of `F` (codes `c`, magnitudes `mag`, signs `sign` at bit 15) replaced by `e`'s encodings
/// of the codec's f32 results under `NanPolicy::Preserve`, and the signs ORed in: ±Inf, and
/// the quiet NaN of the code's sign with the code's fraction as its top payload bits where
/// the format keeps a payload (E5M2) and without it otherwise (F8E3M4, F8E4M3IEEE, as
/// ml_dtypes widens them); the unsigned NaN codes (`0x80` of fnuz) take their fixed f32
/// NaN's encoding. Every signed result is its magnitude's word with the code's sign, so the
/// replacements are magnitudes and the sign is ORed in once, after them; only an unsigned
/// NaN code, whose sign bit is set but whose result has none, is replaced after the sign.
/// Shared by [`widen_words`] and [`widen_scaled_f16`] (whose words are F16 codes, `e` =
/// [`Enc::F16`]).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn specials<V: Vector, F: Format>(c: V, mag: V, sign: V, mut w: V, e: Enc) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let splat16 = |x: u32| V::splat((x & 0xFFFF) * 0x0001_0001);
        if F::HAS_INF {
            let inf = mag.eq16(splat16(F::INF));
            w = V::blend(inf, splat16(e.inf()), w);
            let nan = mag.gt16(splat16(F::INF));
            // The codec's f32 NaN of the code just above Inf tells whether the fraction is
            // kept as payload (see `lanes::widen_pow2`).
            let keeps_payload = F::nan_to_f32(F::INF | 1) & 0x003F_FFFF != 0;
            let quiet = splat16(e.nan_of_f32(0x7FC0_0000));
            let quiet = if keeps_payload {
                quiet.or(mag
                    .and(splat16((1 << F::MAN_BITS) - 1))
                    .shl16(e.man() - F::MAN_BITS))
            } else {
                quiet
            };
            return V::blend(nan, quiet, w).or(sign);
        }
        match F::NAN {
            NanKind::Fixed { code, signed: true } => {
                let nan = mag.eq16(splat16(code));
                V::blend(nan, splat16(e.nan_of_f32(0x7FC0_0000)), w).or(sign)
            }
            NanKind::Fixed {
                code,
                signed: false,
            } => {
                let nan = c.eq16(splat16(code));
                V::blend(nan, splat16(e.nan_of_f32(F::nan_to_f32(code))), w.or(sign))
            }
            NanKind::Ieee | NanKind::None => w.or(sign),
        }
    }
}

/// `Overflow::Saturate` on finished words of `e`: `±Inf` becomes `±MAX`. The compare gives
/// all-ones (−1) words where the magnitude is Inf, so the add subtracts one there, and
/// `Inf − 1` is MAX (the sign bit is untouched: the magnitude is at least `0x7C00`).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn saturate<V: Vector>(w: V, e: Enc) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let inf = w
            .and(V::splat(0x7FFF_7FFF))
            .eq16(V::splat(e.inf() * 0x0001_0001));
        w.add16(inf)
    }
}

/// Whether format `F`'s codes are, as [`widen_scaled_f16`] builds them, F16 codes of their
/// values times `2^(BIAS − 15)`: at most 8 bits, at most 5 exponent bits (the field lands
/// at the bottom of F16's), with 5 only where the top field is F16's Inf/NaN as well
/// (E5M2-like, `BIAS == 15`), and every non-zero value at least 2^-126 (so the f32 product
/// that undoes the scale is a normal number).
pub(crate) const fn scaled_f16_eligible<F: Format>() -> bool {
    F::BITS <= 8
        && F::MAN_BITS >= 1
        && F::MAN_BITS <= 10
        && (F::EXP_BITS < 5 || (F::EXP_BITS == 5 && F::HAS_INF && F::BIAS == 15))
        && 1 - F::BIAS - (F::MAN_BITS as i32) >= -126
}

/// The f32 bits of `2^(15 − BIAS)`, the factor that turns the widened scaled F16 words of
/// [`widen_scaled_f16`] into the values.
pub(crate) const fn scaled_f16_factor<F: Format>() -> u32 {
    ((127 + 15 - F::BIAS) as u32) << 23
}

/// Codes of `F` in words (bits above its width ignored) as F16 codes of their values times
/// `2^(BIAS − 15)` ([`scaled_f16_eligible`]): the sign to bit 15 and the magnitude shifted
/// by `10 − MAN_BITS`, which puts the exponent field at the bottom of F16's and the
/// fraction at the top of F16's, for normal and subnormal codes alike (a subnormal code's
/// fraction lands on an F16 subnormal with the same scale). Inf and NaN codes (whose F16
/// reading would be finite below F16's top exponent field) become F16's Inf and the F16
/// quiet NaN of the codec's f32 NaN; widened (`VCVTPH2PS`) and multiplied by
/// [`scaled_f16_factor`] they stay what they are, while every finite value's product is
/// exact and normal (no rounding mode, FTZ or DAZ can change it). For E5M2-like formats
/// (5 exponent bits, bias 15) the codes are F16 codes already: their Inf and NaN codes are
/// F16's, and `VCVTPH2PS` quiets a NaN keeping its payload, as the codec does.
///
/// # Safety
/// The CPU has `V`'s features; `F` is [`scaled_f16_eligible`].
#[inline(always)]
pub(crate) unsafe fn widen_scaled_f16<V: Vector, F: Format>(code: V) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let splat16 = |x: u32| V::splat((x & 0xFFFF) * 0x0001_0001);
        let c = if F::BITS < 8 {
            code.and(splat16(F::CODE_MASK))
        } else {
            code
        };
        let mag = c.and(splat16(F::MAG_MASK));
        let sign = if F::SIGNED {
            c.and(splat16(F::SIGN_BIT)).shl16(16 - F::BITS)
        } else {
            V::splat(0)
        };
        let w = mag.shl16(10 - F::MAN_BITS);
        if F::EXP_BITS == 5 {
            return w.or(sign);
        }
        specials::<V, F>(c, mag, sign, w, Enc::F16)
    }
}

/// [`widen_words`] to BF16 of the codes times `2^k`, for `step = (k << 7) · 0x0001_0001`
/// (wrapping): every finite non-zero code's word gets `k` added to its exponent field,
/// after the normal codes' re-bias or the subnormal codes' table lookup; zero codes stay
/// `±0`, and Inf and NaN codes give what [`widen_words`] gives (`x · 2^k` is `x` for them).
/// Exact when every non-zero finite value of `F` times `2^k` is a normal f32 (then the
/// field stays in `1..=254`, so no carry or borrow leaves it): the MX block kernels' scale
/// bytes `LO..=HI` (`simd/generic/block/mx.rs`). `sub` is [`sub_table`] for [`Enc::Bf16`],
/// loaded as [`Vector::lookup_u16`] wants it.
///
/// # Safety
/// The CPU has `V`'s features; `F` is [`eligible`] for [`Enc::Bf16`].
#[inline(always)]
pub(crate) unsafe fn widen_words_pow2<V: Vector, F: Format>(code: V, sub: &[V; 2], step: V) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let (c, mag, sign, w) = pow2_parts::<V, F>(code, sub, step);
        specials::<V, F>(c, mag, sign, w, Enc::Bf16)
    }
}

/// [`widen_words_pow2`] for a format whose NaN is one signed code (E4M3's `0x7F`/`0xFF`),
/// with both NaN codes giving the BF16 quiet NaN `0x7FC0` without sign (MLX's BF16
/// dequantization) where [`widen_words_pow2`] keeps the code's sign: the sign is ORed in
/// before the blend instead of after it, so it costs no operation more.
///
/// # Safety
/// As for [`widen_words_pow2`]; `F::NAN` is `NanKind::Fixed { signed: true, .. }` and `F`
/// has no Inf (checked at compile time).
#[inline(always)]
pub(crate) unsafe fn widen_words_pow2_unsigned_nan<V: Vector, F: Format>(
    code: V,
    sub: &[V; 2],
    step: V,
) -> V {
    let NanKind::Fixed {
        code: nan_code,
        signed: true,
    } = F::NAN
    else {
        panic!("widen_words_pow2_unsigned_nan: the format's NaN is not one signed code")
    };
    const { assert!(!F::HAS_INF) };
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let (_, mag, sign, w) = pow2_parts::<V, F>(code, sub, step);
        let splat16 = |x: u32| V::splat((x & 0xFFFF) * 0x0001_0001);
        let nan = mag.eq16(splat16(nan_code));
        V::blend(nan, splat16(Enc::Bf16.nan_of_f32(0x7FC0_0000)), w.or(sign))
    }
}

/// The parts of [`widen_words_pow2`] before its specials: the masked codes, their
/// magnitudes, their signs at bit 15 and the scaled magnitudes' words.
///
/// # Safety
/// As for [`widen_words_pow2`].
#[inline(always)]
unsafe fn pow2_parts<V: Vector, F: Format>(code: V, sub: &[V; 2], step: V) -> (V, V, V, V) {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let e = Enc::Bf16;
        let c = code.and(V::splat(F::CODE_MASK * 0x0001_0001));
        let mag = c.and(V::splat(F::MAG_MASK * 0x0001_0001));
        let rebias = (((e.bias() - F::BIAS) as u32) << e.man()) * 0x0001_0001;
        let normal = mag.shl16(e.man() - F::MAN_BITS).add16(V::splat(rebias));
        // `mag` is below 128, and only the subnormal codes' words (indices below 16) are
        // kept by the blend.
        let small = mag.lookup_u16(sub);
        let is_sub = V::splat((1 << F::MAN_BITS) * 0x0001_0001).gt16(mag);
        // The zero codes (table word 0) do not take the step.
        let w = V::blend(is_sub, small, normal).add16(step.where_nonzero16(mag));
        let sign = if F::SIGNED {
            c.and(V::splat(F::SIGN_BIT * 0x0001_0001))
                .shl16(16 - F::BITS)
        } else {
            V::splat(0)
        };
        (c, mag, sign, w)
    }
}

/// Whether [`widen_words_scaled`] serves format `F`: [`eligible`] for BF16 words and at most
/// 3 fraction bits (its table holds `2^MAN_BITS` normal and `2^MAN_BITS` subnormal entries).
pub(crate) const fn scaled_eligible<F: Format>() -> bool {
    eligible::<F>(Enc::Bf16) && F::MAN_BITS <= 3
}

/// The table of [`widen_words_scaled`] for the positive f32 scale `s` (bits): entry
/// `m < 2^MAN_BITS` the BF16 code (nearest even) of `(1 + m / 2^MAN_BITS) · 2^-BIAS · s`,
/// the value of a normal code of fraction `m` with its exponent field taken as 0; entry
/// `8 + m` that of the subnormal code `m`, `m · 2^(1 − BIAS − MAN_BITS) · s`. Every such
/// product is exact and normal in f32 when the scale is exact for `F` as the fused
/// `dequantize_scaled` requires (`simd/generic/block/scaled.rs`: the smallest code times `s`
/// at least 2^-126; these products have the codes' significands and exponents down to the
/// smallest subnormal's plus `MAN_BITS − 1`), so the f32 product below is exact whatever
/// MXCSR holds and its rounding to BF16 is the one rounding of the exact value.
pub(crate) fn scaled_table<F: Format>(s: u32) -> [u16; 16] {
    let s = f32::from_bits(s);
    let bf16 = |x: f32| {
        let b = x.to_bits();
        ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
    };
    let mut t = [0u16; 16];
    let q = (1u32 << F::MAN_BITS) as f32;
    for m in 0..1u32 << F::MAN_BITS {
        let normal = (1.0 + m as f32 / q) * f32::from_bits(((127 - F::BIAS) as u32) << 23);
        t[m as usize] = bf16(normal * s);
        let sub =
            m as f32 * f32::from_bits(((127 + 1 - F::BIAS - F::MAN_BITS as i32) as u32) << 23);
        t[8 + m as usize] = bf16(sub * s);
    }
    t
}

/// Codes of `F` in words (bits above its width ignored) times a positive scale `s`, rounded
/// once to BF16, given [`scaled_table`] of `s` as `t` (loaded as [`Vector::lookup_u16`] wants
/// it). A normal code of exponent field `e` and fraction `m` is `2^e` times table entry `m`
/// (the product with its field taken as 0), and both that product and the code's are normal
/// in f32, where rounding to BF16 commutes with a power of two: its BF16 code is entry `m`
/// plus `e << 7` in the exponent field (a rounding up to `2^128` gives field 255 with a zero
/// fraction, `+Inf`, the non-saturating rounding's result). A subnormal code `m` (field 0)
/// is entry `8 + m` as it is, zero entry 8 (`+0`). The code's sign is ORed in (a positive
/// scale keeps it), and Inf and NaN codes give what [`widen_words`] gives: `±Inf · s` is
/// `±Inf`, and a NaN keeps its widened bits, as the specification says.
///
/// # Safety
/// The CPU has `V`'s features; [`scaled_eligible::<F>`](scaled_eligible).
#[inline(always)]
pub(crate) unsafe fn widen_words_scaled<V: Vector, F: Format>(code: V, t: &[V; 2]) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let splat16 = |x: u32| V::splat((x & 0xFFFF) * 0x0001_0001);
        let c = if F::BITS < 8 {
            code.and(splat16(F::CODE_MASK))
        } else {
            code
        };
        let mag = c.and(splat16(F::MAG_MASK));
        // The exponent field at bit 7 (BF16's), the fraction below it dropped.
        let exp = mag.shl16(7 - F::MAN_BITS).and(splat16(0x7F80));
        let is_sub = splat16(1 << F::MAN_BITS).gt16(mag);
        let idx = mag
            .and(splat16((1 << F::MAN_BITS) - 1))
            .or(is_sub.and(splat16(8)));
        let w = idx.lookup_u16(t).add16(exp);
        let sign = if F::SIGNED {
            c.and(splat16(F::SIGN_BIT)).shl16(16 - F::BITS)
        } else {
            V::splat(0)
        };
        specials::<V, F>(c, mag, sign, w, Enc::Bf16)
    }
}
