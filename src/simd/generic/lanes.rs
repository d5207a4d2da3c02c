//! One vector of lanes at a time: the narrowings and widenings of every format, written once.
//!
//! Every function gives, lane by lane, exactly the bits of the scalar codec
//! ([`crate::codec`], E8M0's own codec) whatever MXCSR holds; each step says why.
//!
//! # Narrowing f32 bits to an IEEE-like format ([`narrow`])
//!
//! The fused multiply-add method (argued in full in `arch/x86_64/avx512.rs`, "Narrowing
//! f32"), for any format with `MAN_BITS >= 1`: with `a = min(|x|, cap)` and
//! `t = 2^max(exponent of a, emin)`, `s = fma(t, K, a)` rounds `a` to the target's quantum
//! once (RNE), and `VPMADDWD` with weights 256 and `2^(MAN_BITS + 1)` leaves the magnitude
//! code in bits 8..15. Here the clamp and `t` are *integer* operations on the magnitude bits
//! (for non-negative floats the unsigned integer order is the float order, subnormals
//! included), so DAZ cannot touch them; only the multiply-add is a float instruction: a
//! denormal `a` that DAZ reads as zero rounds to zero either way (it is below 2^-126, under
//! a quarter of every target's smallest quantum), and `s >= 2^(emin + 23 - MAN_BITS)` is far
//! from FTZ's reach. `cap` is the value of the code that every overflowing magnitude (and
//! ±Inf) must give: MAX under `Saturate`, else the format's non-saturating overflow code
//! (E4M3 `0x7F`, NaN; E5M2 `0x7C`, Inf; fnuz `0x80`, the unsigned NaN; fp6 and fp4 always
//! saturate). Every magnitude above `cap` rounds to `cap`'s code as well, so the clamp
//! decides overflow exactly as the codec does on the rounded code.
//!
//! The sign: bit `BITS - 1` of the code from bit 31 of the source. An unsigned format
//! (F8E5M3FNU) has none: its negative non-zero sources select its NaN code. For fnuz, which has no
//! negative zero, the sign is kept only where the magnitude is not zero:
//! `sign & (mag + 0x7F)` has bit 7 exactly for `1 <= mag <= 0x80`, and `0x80 | sign` is
//! `0x80`, the unsigned NaN. NaN sources take the codec's own result for a NaN of their sign
//! under the call's policy (for these formats it depends on nothing else); fp6 and fp4 need
//! no select at all: their NaN result is `±MAX`, which the clamp already gives (the NaN bits
//! are above `cap`'s).
//!
//! # Widening an IEEE-like format to f32 bits ([`widen`])
//!
//! Normal codes re-bias their exponent with one integer add after the shift into place;
//! subnormal codes (`mag < 2^MAN_BITS`, the fraction alone) are `mag * 2^(1 - BIAS -
//! MAN_BITS)`: an exact integer-to-float conversion and an exact multiplication by a power
//! of two whose operands and product are normal f32 (the smallest is 2^-17), so neither the
//! rounding mode, FTZ nor DAZ can change them. Inf and NaN codes are replaced by the codec's
//! results.

use crate::Overflow;
use crate::codec::{Format, NanKind};
use crate::options::{NanPolicy, Policy};
use crate::simd::Vector;

/// The constants of the fused multiply-add narrowing for one format and one clamp.
pub(crate) struct Fp8Fma {
    /// The clamp: the value of the code that every larger magnitude rounds to.
    pub cap: f32,
    /// `2^emin`, the format's smallest normal.
    pub min_normal: f32,
    /// `K = 2^(23 - MAN_BITS) * (1 + D * 2^-23)`.
    pub k: f32,
    /// The `VPMADDWD` weights: 256 for the low 16-bit half, `2^(MAN_BITS + 1)` for the high.
    pub weights: i32,
}

impl Fp8Fma {
    /// The constants for a format with `man_bits` fraction bits (at least 1) and exponent
    /// bias `bias`, clamping to the magnitude code `cap_code` (MAX with `Saturate`, else the
    /// overflow code).
    pub(crate) const fn new(man_bits: u32, bias: i32, cap_code: u32) -> Fp8Fma {
        let emin = 1 - bias;
        let frac_mask = (1 << man_bits) - 1;
        let cap_exp = (cap_code >> man_bits) as i32 - bias + 127;
        let cap = ((cap_exp as u32) << 23) | ((cap_code & frac_mask) << (23 - man_bits));
        // The sum's exponent field is E = e + 150 - man_bits, and the code is
        // q + 2^man_bits * (e - emin): D cancels 2^man_bits * (150 - man_bits + emin)
        // modulo 256 (152 for E4M3, 232 for E5M2; even, so ties still go to an even q).
        let offset = (1i32 << man_bits) * (150 - man_bits as i32 + emin);
        let d = (-offset).rem_euclid(256) as u32;
        assert!(d & 1 == 0 && man_bits >= 1);
        Fp8Fma {
            cap: f32::from_bits(cap),
            min_normal: f32::from_bits(((127 + emin) as u32) << 23),
            k: f32::from_bits(((127 + 23 - man_bits) << 23) | d),
            weights: (1 << (man_bits + 1) << 16) | 256,
        }
    }
}

/// Per-call constants of [`narrow`] for format `F` under one policy.
#[derive(Clone, Copy)]
pub(crate) struct Narrow<V> {
    cap: V,
    min_normal: V,
    k: V,
    weights: V,
    /// The code of a positive NaN source under the call's policy.
    nan: V,
    /// What a negative NaN adds to it: `SIGN_BIT` or 0.
    nan_sign: V,
    /// What [`narrow_by`] adds to the `VPMADDWD` result: `k · 2^(MAN_BITS + 8)` for a scale
    /// of `2^k` folded into the constants ([`Narrow::new_scaled`]); 0 otherwise.
    offset: V,
    /// `nan` and `nan_sign` in every byte, for [`narrow4`].
    nan8: V,
    nan_sign8: V,
    /// Whether [`narrow4`] gives this policy's codes (see there).
    pub(crate) bytes_ok: bool,
    /// Whether [`narrow4`] may turn its NaN bytes into the NaN code by a byte minimum before
    /// the sign is applied (see there).
    nan_by_min: bool,
}

impl<V: Vector> Narrow<V> {
    /// The constants for format `F` under `p`.
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    #[inline(always)]
    pub(crate) unsafe fn new<F: Format>(p: Policy) -> Narrow<V> {
        let cap_code = match p.overflow {
            Overflow::Saturate => F::MAX,
            Overflow::NonSaturating => F::OVERFLOW_NONSAT,
        };
        let c = Fp8Fma::new(F::MAN_BITS, F::BIAS, cap_code);
        // The NaN results come from the codec itself: for these formats they depend on the
        // sign and the policy only (fixed NaN codes, or ±MAX).
        let nan_pos = F::narrow32(0x7FC0_0000, p);
        let nan_neg = F::narrow32(0xFFC0_0000, p);
        // For these formats a negative NaN's code is the positive one's, with the sign bit
        // or without it.
        let nan_sign = nan_neg ^ nan_pos;
        assert!(nan_sign == 0 || nan_sign == F::SIGN_BIT);
        // `narrow4` marks NaN lanes (and an unsigned format's negative ones) with the byte
        // 0xFF, which no magnitude code of a signed format reaches (at most 0x80); an unsigned
        // format's marked lanes are then all the format's NaN code 0xFF, which must be what a
        // NaN source gives too (not under `NanPolicy::ToMax`).
        let bytes_ok = F::BITS <= 8 && (F::SIGNED || nan_pos == unsigned_nan::<F>());
        // The minimum leaves every magnitude code (at most `cap_code`) as it is and makes
        // 0xFF the positive NaN code; the sign step then gives the negative NaN code when it
        // is the positive one with `SIGN_BIT` (the sign follows the source, or the code has
        // `SIGN_BIT` already: fnuz's 0x80).
        let nan_by_min =
            cap_code <= nan_pos && (nan_sign == F::SIGN_BIT || nan_pos & F::SIGN_BIT != 0);
        // SAFETY: the caller's guarantee.
        unsafe {
            Narrow {
                cap: V::splat(c.cap.to_bits()),
                min_normal: V::splat(c.min_normal.to_bits()),
                k: V::splat(c.k.to_bits()),
                weights: V::splat(c.weights as u32),
                nan: V::splat(nan_pos),
                nan_sign: V::splat(nan_sign),
                offset: V::splat(0),
                nan8: V::splat(nan_pos * 0x0101_0101),
                nan_sign8: V::splat(nan_sign * 0x0101_0101),
                bytes_ok,
                nan_by_min,
            }
        }
    }

    /// The constants of [`narrow_by`] for `x · 2^k` narrowed to `F` under `p`, with the
    /// scale folded into them, or `None` for a `k` outside the range where that is exact.
    ///
    /// Narrowing `X = x · 2^k` computes `a = min(|X|, cap)`, `t = 2^max(e(a), emin)` and
    /// `s = fma(t, K, a)`. With `cap' = cap · 2^-k` and `min_normal' = 2^(emin − k)` the same
    /// steps on `|x|` give `a' = a · 2^-k`, `t' = t · 2^-k` and `s' = fma(t', K, a')`, which
    /// is `s · 2^-k` exactly when every quantity stays a normal f32 (scaling by a power of
    /// two commutes with rounding there): `cap'` normal, `s'` below 2^128
    /// (`e(cap) − k + 24 − MAN_BITS <= 127`), and the scaled quantum `2^(emin − MAN_BITS −
    /// k)` at least 2^-124, so that a denormal `a'` (which DAZ may read as zero, and which the
    /// exact computation rounds to zero anyway: it is below a quarter of that quantum) and
    /// FTZ (`s' >= 2^(emin + 23 − MAN_BITS − k)` is normal) change nothing. `s'` then has
    /// `s`'s low 16 bits and `k << 7` less in its high half, so `VPMADDWD` gives
    /// `k · 2^(MAN_BITS + 1) · 2^7` less, which `offset` adds back. Everything else (the
    /// clamp of ±Inf and of every overflowing `X` to `cap`'s code, the sign, the NaN select)
    /// reads `x`'s bits as `narrow` reads `X`'s.
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    #[inline(always)]
    pub(crate) unsafe fn new_scaled<F: Format>(p: Policy, k: i32) -> Option<Narrow<V>> {
        let cap_code = match p.overflow {
            Overflow::Saturate => F::MAX,
            Overflow::NonSaturating => F::OVERFLOW_NONSAT,
        };
        let c = Fp8Fma::new(F::MAN_BITS, F::BIAS, cap_code);
        let cap_field = (c.cap.to_bits() >> 23) as i32;
        let emin = 1 - F::BIAS;
        let m = F::MAN_BITS as i32;
        let ok = (1..=254).contains(&(cap_field - k))
            && cap_field - 127 - k + 24 - m <= 127
            && emin - m - k >= -124;
        if !ok {
            return None;
        }
        // SAFETY: the caller's guarantee.
        unsafe {
            let mut n = Narrow::new::<F>(p);
            n.cap = V::splat(((cap_field - k) as u32) << 23 | (c.cap.to_bits() & 0x007F_FFFF));
            n.min_normal = V::splat(((127 + emin - k) as u32) << 23);
            n.offset = V::splat((k << (F::MAN_BITS + 8)) as u32);
            Some(n)
        }
    }
}

impl<V: Vector> Narrow<V> {
    /// The constants with which [`narrow`] of `x` gives the code of `x · 2^-e` (an MX
    /// block's elements, scale `2^e`), without a multiplication: the whole fused
    /// multiply-add method moved down by `2^e`. `cap` and the smallest normal become
    /// `cap · 2^e` and `2^(emin + e)` (exponent fields plus `e`), so `t` and the quantum
    /// `t · 2^-MAN_BITS` are `2^e` times those of the unscaled value, and `s = fma(t, K, a)`
    /// rounds `a` once to the scaled grid. The code `q + 2^MAN_BITS · (E − emin)` that the
    /// `VPMADDWD` step reads from `s` (module docs) now sees the exponent `E − e` for the
    /// same `q`, which `K`'s low-byte offset `D` absorbs: `D' = D − 2^MAN_BITS · e` modulo
    /// 256, still even, so ties still go to an even code. Exact when every operand and
    /// result stays a normal f32 (`t`, `K`, the product `t · K` whose significand is `K`'s,
    /// the sum), which the caller's range of `e` guarantees; `narrow`'s argument for an `a`
    /// that DAZ reads as zero then needs `2^-126` to be at most half the scaled smallest
    /// quantum `2^(emin − MAN_BITS + e)`, also the caller's.
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    #[inline(always)]
    pub(crate) unsafe fn scaled<F: Format>(&self, e: i32) -> Narrow<V> {
        // SAFETY: the caller's guarantee; no memory is touched.
        unsafe {
            let step = V::splat((e as u32) << 23);
            // Only K's low byte (D) changes: a wrapping add there, the other bits kept.
            let d = V::splat((e.wrapping_neg() as u32) << F::MAN_BITS);
            Narrow {
                cap: self.cap.add(step),
                min_normal: self.min_normal.add(step),
                k: self
                    .k
                    .add(d)
                    .and(V::splat(0xFF))
                    .or(self.k.and(V::splat(!0xFF))),
                ..*self
            }
        }
    }
}

/// The code an unsigned IEEE-like format gives a negative non-zero source: its fixed NaN
/// code (`codec::unsigned_negative`; an unsigned format without one is refused there).
#[inline(always)]
const fn unsigned_nan<F: Format>() -> u32 {
    match F::NAN {
        NanKind::Fixed { code, .. } => code,
        NanKind::Ieee | NanKind::None => 0,
    }
}

/// Lanes of f32 bits (or f64 rounded to odd into f32) narrowed to codes of `F` (an IEEE-like
/// format with `MAN_BITS >= 1`, signed or not), sign included, in the low `BITS` bits of each
/// lane. The bits above the low byte are not zero (byte stores drop them; mask them for
/// anything else). See the module docs.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn narrow<V: Vector, F: Format>(x: V, c: &Narrow<V>) -> V {
    // SAFETY: the caller's guarantee.
    unsafe { narrow_by::<V, F, false>(x, c) }
}

/// [`narrow`], or with `SCALED` the narrowing of `x · 2^k` for the constants of
/// [`Narrow::new_scaled`] (one more add).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn narrow_by<V: Vector, F: Format, const SCALED: bool>(x: V, c: &Narrow<V>) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let abs = x.and(V::splat(0x7FFF_FFFF));
        // NaN lanes (bits above Inf's) become `cap` too; they are replaced below.
        let a = abs.min_u32(c.cap);
        // t = 2^max(exponent of a, emin): the target quantum is t * 2^-MAN_BITS.
        let t = a.and(V::splat(0x7F80_0000)).max_u32(c.min_normal);
        let s = V::fma_rne(t, c.k, a);
        // 256 * (D + q + 2^MAN_BITS * E) in the low 16 bits: the code in bits 8..15. Its low
        // byte is the magnitude code; the bits above it are not zero.
        let sum = s.madd16(c.weights);
        let sum = if SCALED { sum.add(c.offset) } else { sum };
        let mag = sum.shr(8);
        // The sign at bit BITS - 1 (the bits below it are other source bits).
        let sign = x.shr(32 - F::BITS);
        let code = if !F::SIGNED {
            // No sign bit (F8E5M3FNU): the magnitude code is the code, and a negative source
            // other than -0 has none: it gives the format's NaN, as the codec's
            // `unsigned_negative` says (NaN sources are replaced below). `x ^ 2^31 > 0` as
            // signed integers is `x > 0x80000000` unsigned: exactly the negative non-zero
            // bit patterns (-0 maps to 0, every non-negative one below zero).
            let neg = x.xor(V::splat(0x8000_0000)).gt_i32(V::splat(0));
            V::select(neg, V::splat(unsigned_nan::<F>()), mag)
        } else if F::NEG_ZERO {
            mag.or_and(sign, V::splat(F::SIGN_BIT))
        } else {
            // The sign only where 1 <= mag <= 0x80 (bit 7 of mag + 0x7F, which the bits of
            // mag above the low byte cannot reach; BITS is 8).
            mag.or_and(x.shr(31).shl(7), mag.add(V::splat(0x7F)))
        };
        if matches!(F::NAN, NanKind::None) {
            // ±MAX, what the clamp gave.
            return code;
        }
        let is_nan = abs.gt_i32(V::splat(0x7F80_0000));
        V::select_or_and(is_nan, c.nan, sign, c.nan_sign, code)
    }
}

/// [`narrow`] of four vectors, finished in bytes: the low bytes of the four results, in
/// [`Vector::bytes4_of`]'s order, where `c.bytes_ok`. Each lane runs `narrow`'s steps up to
/// the `VPMADDWD` sum, whose byte 1 is the magnitude code; a NaN lane (and for an unsigned
/// format a negative non-zero one) is set to all ones there, so its byte is 0xFF, a byte no
/// magnitude code of a signed format reaches (they are at most 0x80). The four vectors' byte
/// 1 is then gathered into one vector ([`Vector::bytes4_of`]), and the sign and NaN codes
/// are applied to 4 · LANES bytes at a time, with the sign bytes of
/// [`Vector::signs4`]:
///
/// * a signed format with −0: the magnitude with `SIGN_BIT` where the source is negative;
/// * a signed format without −0 (fnuz, F8E4M3B11FNUZ): the sign only where the magnitude
///   is not zero (it is at most 0x80, and 0x80 is the NaN code that a sign leaves as it is);
/// * then the 0xFF bytes become the NaN code of the call's policy, with the sign where the
///   policy keeps it; where that code is at least every magnitude code and its negative
///   form is the positive one with `SIGN_BIT` (`nan_by_min`), by a byte minimum with the
///   positive code before the sign step instead;
/// * an unsigned format: the magnitude, and the 0xFF bytes are already its NaN code, which
///   is what both a negative non-zero source and (where `bytes_ok`) a NaN source give.
///
/// # Safety
/// The CPU has `V`'s features; `c.bytes_ok`.
#[inline(always)]
pub(crate) unsafe fn narrow4<V: Vector, F: Format>(x: [V; 4], c: &Narrow<V>) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        // (Four calls written out rather than a loop: the same code in every build profile.)
        let p = [
            marked_sum::<V, F>(x[0], c),
            marked_sum::<V, F>(x[1], c),
            marked_sum::<V, F>(x[2], c),
            marked_sum::<V, F>(x[3], c),
        ];
        let mut g = V::bytes4_of(p, 1);
        if !F::SIGNED {
            return g;
        }
        let has_nan = !matches!(F::NAN, NanKind::None);
        if has_nan && c.nan_by_min {
            g = g.min_u8(c.nan8);
        }
        let sign = V::signs4(x);
        let bit = V::splat(F::SIGN_BIT * 0x0101_0101);
        let code = if F::NEG_ZERO {
            g.or_and(sign, bit)
        } else {
            V::blend(g.eq8(V::splat(0)), g, g.or_and(sign, bit))
        };
        if !has_nan || c.nan_by_min {
            return code;
        }
        let nan = c.nan8.or_and(sign, c.nan_sign8);
        V::blend(g.eq8(V::splat(!0)), nan, code)
    }
}

/// [`narrow4`]'s lane step: `narrow`'s `VPMADDWD` sum of `x` (its byte 1 is the magnitude
/// code), all ones in a NaN lane and, for an unsigned format, in a negative non-zero one.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn marked_sum<V: Vector, F: Format>(x: V, c: &Narrow<V>) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let abs = x.and(V::splat(0x7FFF_FFFF));
        let a = abs.min_u32(c.cap);
        let t = a.and(V::splat(0x7F80_0000)).max_u32(c.min_normal);
        let s = V::fma_rne(t, c.k, a);
        let mut sum = s.madd16(c.weights);
        if !matches!(F::NAN, NanKind::None) || !F::SIGNED {
            sum = sum.ones_where(abs.gt_i32(V::splat(0x7F80_0000)));
        }
        if !F::SIGNED {
            // `x ^ 2^31 > 0` as signed integers: the negative non-zero bit patterns.
            sum = sum.ones_where(x.xor(V::splat(0x8000_0000)).gt_i32(V::splat(0)));
        }
        sum
    }
}

/// Per-call constants of [`round_trip`] for format `F` under one policy.
#[derive(Clone, Copy)]
pub(crate) struct RoundTrip<V> {
    n: Narrow<V>,
    /// f32 bits of a positive NaN's round trip, and what a negative one adds (0 or the sign).
    nan: V,
    nan_sign: V,
    /// f32 bits of a positive overflow's round trip (the widened overflow code), and what a
    /// negative one adds.
    ovf: V,
    ovf_sign: V,
    /// f32 bits of a negative non-zero source's round trip in an unsigned format (the
    /// widened NaN code); unused for signed formats.
    neg: V,
    /// Whether the overflow code is not a finite value (E4M3's NaN, E5M2's Inf, fnuz's NaN
    /// under `NonSaturating`); under `Saturate`, and for fp6/fp4, `cap` is MAX's value.
    special_ovf: bool,
}

impl<V: Vector> RoundTrip<V> {
    /// The constants for format `F` under `p`: [`Narrow::new`]'s, and the round trips of a
    /// NaN and of an overflow from the codec itself (each depends on the sign only).
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    #[inline(always)]
    pub(crate) unsafe fn new<F: Format>(p: Policy) -> RoundTrip<V> {
        let back = |x: u32| F::widen32(F::narrow32(x, p) & F::CODE_MASK);
        let (nan, nan_neg) = (back(0x7FC0_0000), back(0xFFC0_0000));
        let (ovf, ovf_neg) = (back(0x7F80_0000), back(0xFF80_0000));
        // An unsigned format's -Inf is a negative value (its NaN, `neg` below), not an
        // overflow: only the magnitude's overflow is selected by `ovf`.
        let ovf_neg = if F::SIGNED { ovf_neg } else { ovf };
        assert!(matches!(nan ^ nan_neg, 0 | 0x8000_0000));
        assert!(matches!(ovf ^ ovf_neg, 0 | 0x8000_0000));
        let cap_code = match p.overflow {
            Overflow::Saturate => F::MAX,
            Overflow::NonSaturating => F::OVERFLOW_NONSAT,
        };
        // SAFETY: the caller's guarantee.
        unsafe {
            RoundTrip {
                n: Narrow::new::<F>(p),
                nan: V::splat(nan),
                nan_sign: V::splat(nan ^ nan_neg),
                ovf: V::splat(ovf),
                ovf_sign: V::splat(ovf ^ ovf_neg),
                neg: V::splat(back(0xBF80_0000)),
                special_ovf: cap_code != F::MAX,
            }
        }
    }
}

/// Lanes of f32 bits rounded once to format `F` and widened back: `widen(narrow(x))` bit for
/// bit, without the codes. [`narrow`]'s steps up to `s = fma(t, K, a)` round the clamped
/// magnitude `a` to the target's quantum `t · 2^-MAN_BITS`; then `t · K` is exact and normal
/// (`t` a power of two at least `2^emin ≥ 2^-15`, `K` normal), and `s − t · K` is the rounded
/// magnitude itself, exactly: `s` lies in `[t · K, 2 · t · K]` (`t · K ≥ 2^20 · t` dwarfs `a <
/// 2t · 2^emax`), so Sterbenz's lemma makes the difference exact, and both operands and the
/// result are normal f32 or zero (the result is a multiple of the format's smallest subnormal,
/// `≥ 2^-17`), so neither the rounding mode, FTZ nor DAZ can change the product or the
/// difference. The result is then the value of the code `narrow` computes: the sign ORed in
/// (fnuz formats have no −0: a zero stays `+0`); a rounded magnitude equal to `cap` is the
/// overflow code, which under `NonSaturating` is not finite for E4M3, E5M2 and fnuz (the
/// codec's round trip of an infinity is selected instead); NaN lanes take the codec's round
/// trip of a NaN of their sign (fp6 and fp4 have none: their NaN lanes were clamped to
/// `±MAX`, as `narrow` does).
///
/// # Safety
/// The CPU has `V`'s features, and the float environment is the one [`Vector::fma_rne`]
/// needs.
#[inline(always)]
pub(crate) unsafe fn round_trip<V: Vector, F: Format>(x: V, c: &RoundTrip<V>) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let n = &c.n;
        let abs = x.and(V::splat(0x7FFF_FFFF));
        let a = abs.min_u32(n.cap);
        let t = a.and(V::splat(0x7F80_0000)).max_u32(n.min_normal);
        let s = V::fma_rne(t, n.k, a);
        let r = s.sub_ieee(t.mul_exact_f32(n.k));
        let sign = V::splat(0x8000_0000);
        let out = if !F::SIGNED {
            r
        } else if F::NEG_ZERO {
            r.or_and(x, sign)
        } else {
            V::select(r.eq(V::splat(0)), r, r.or_and(x, sign))
        };
        let out = if c.special_ovf {
            V::select_or_and(r.eq(n.cap), c.ovf, x, c.ovf_sign, out)
        } else {
            out
        };
        let out = if !F::SIGNED {
            // Negative non-zero sources narrow to the NaN (see `narrow_by`), whose round trip
            // is `c.neg` (this select comes after the overflow one, which looked at the
            // magnitude only); -0 gives r = +0, as its code 0 widens.
            let neg = x.xor(sign).gt_i32(V::splat(0));
            V::select(neg, c.neg, out)
        } else {
            out
        };
        if matches!(F::NAN, NanKind::None) {
            return out;
        }
        let is_nan = abs.gt_i32(V::splat(0x7F80_0000));
        V::select_or_and(is_nan, c.nan, x, c.nan_sign, out)
    }
}

/// Lanes holding codes of `F` (an IEEE-like signed format; bits above its width ignored)
/// widened to f32 bits, exactly. See the module docs.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn widen<V: Vector, F: Format>(code: V) -> V {
    // SAFETY: the caller's guarantee (a zero step leaves the constants as they are, and the
    // compiler folds the adds).
    unsafe { widen_pow2::<V, F>(code, V::splat(0)) }
}

/// [`widen`] of the codes times `2^e`, exactly, for lanes of `step = e << 23` (wrapping):
/// the exponent step is added to the normal codes' re-bias constant and to the power of two
/// that scales the subnormal codes, so it costs nothing per lane. Zero, Inf and NaN codes
/// give what [`widen`] gives (`x · 2^e` is `x` for them). Exact (and so the same bits under
/// every MXCSR/FPCR) when every non-zero finite value of `F` times `2^e` is a normal f32,
/// i.e. `BIAS + MAN_BITS − 127 ≤ e ≤ 127 − emax`: the normal codes' exponent fields stay in
/// 1..=254, and the subnormals' power of two `2^(1 − BIAS − MAN_BITS + e)` and products are
/// normal (the MX block kernels' `LO..=HI` scale bytes, `simd/generic/block/mx.rs`).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn widen_pow2<V: Vector, F: Format>(code: V, step: V) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let c = code.and(V::splat(F::CODE_MASK));
        let mag = c.and(V::splat(F::MAG_MASK));
        let sign = c.and(V::splat(F::SIGN_BIT)).shl(32 - F::BITS);
        let normal = mag
            .shl(23 - F::MAN_BITS)
            .add(V::splat(((127 - F::BIAS) as u32) << 23).add(step));
        // mag * 2^(1 - BIAS - MAN_BITS) for the subnormal codes (mag < 2^MAN_BITS).
        let scale = ((127 + 1 - F::BIAS - F::MAN_BITS as i32) as u32) << 23;
        let sub = mag.cvt_u24_f32().mul_exact_f32(V::splat(scale).add(step));
        let is_sub = V::splat(1 << F::MAN_BITS).gt_i32(mag);
        let mut bits = V::select(is_sub, sub, normal).or(sign);
        if F::HAS_INF {
            // Inf, and NaN: the quiet NaN of the code's sign, with the code's fraction as
            // its top payload bits where the format's rule keeps them (E5M2, as binary16
            // does; its `nan_to_f32` of the code just above Inf has a payload bit) and without
            // (F8E3M4, F8E4M3IEEE, as ml_dtypes widens them). Both are `nan_to_f32`.
            let inf = mag.eq(V::splat(F::INF));
            bits = V::select(inf, sign.or(V::splat(0x7F80_0000)), bits);
            let nan = mag.gt_i32(V::splat(F::INF));
            let keeps_payload = F::nan_to_f32(F::INF | 1) & 0x003F_FFFF != 0;
            let quiet = sign.or(V::splat(0x7FC0_0000));
            let quiet = if keeps_payload {
                let payload = mag
                    .and(V::splat((1 << F::MAN_BITS) - 1))
                    .shl(23 - F::MAN_BITS);
                quiet.or(payload)
            } else {
                quiet
            };
            bits = V::select(nan, quiet, bits);
        } else {
            match F::NAN {
                NanKind::Fixed { code, signed: true } => {
                    let nan = mag.eq(V::splat(code));
                    bits = V::select(nan, sign.or(V::splat(0x7FC0_0000)), bits);
                }
                NanKind::Fixed {
                    code,
                    signed: false,
                } => {
                    let nan = c.eq(V::splat(code));
                    bits = V::select(nan, V::splat(F::nan_to_f32(code)), bits);
                }
                NanKind::Ieee | NanKind::None => {}
            }
        }
        bits
    }
}

/// Per-call constants of the E8M0 narrowings.
#[derive(Clone, Copy)]
pub(crate) struct E8m0<V> {
    overflow: V,
    nan: V,
}

impl<V: Vector> E8m0<V> {
    /// The overflow and NaN codes under `p`, from E8M0's codec.
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    #[inline(always)]
    pub(crate) unsafe fn new(p: Policy) -> E8m0<V> {
        use crate::F8E8M0;
        // 2^200 overflows, NaN is NaN: the codec's own answers.
        let overflow = <F8E8M0 as Format>::narrow64(0x4C70_0000_0000_0000, p);
        let nan = <F8E8M0 as Format>::narrow32(0x7FC0_0000, p);
        // SAFETY: the caller's guarantee.
        unsafe {
            E8m0 {
                overflow: V::splat(overflow),
                nan: V::splat(nan),
            }
        }
    }
}

/// Lanes of f32 bits narrowed to E8M0 codes (nearest power of two, ties up; see
/// `format/f8e8m0.rs`), in the low byte of each lane (the bits above are zero).
///
/// For a normal positive `x` the code is `(x + 0x400000) >> 23`: the exponent, plus one when
/// the fraction is at least one half (the carry moves into the exponent). For an f32
/// subnormal it is `x >= 0x600000` (the nearer of 2^-127 and 2^-126, ties up), which the same
/// formula gives with `0x200000`. Integer operations only, so MXCSR plays no part.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn e8m0_from_f32<V: Vector>(x: V, c: &E8m0<V>) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let abs = x.and(V::splat(0x7FFF_FFFF));
        let tiny = V::splat(0x0080_0000).gt_i32(abs);
        let half = V::select(tiny, V::splat(0x0020_0000), V::splat(0x0040_0000));
        // At most (0x7F7FFFFF + 0x400000) >> 23 = 0xFF: the minimum applies the overflow
        // code (0xFE under `Saturate`, 0xFF otherwise) to 0xFF only.
        let code = abs.add(half).shr(23).min_u32(c.overflow);
        finish_e8m0(x, abs, V::splat(0x7F80_0000), code, c)
    }
}

/// Lanes of compressed f64 high words (`hi | sticky`, see
/// [`Vector::load_f64_hi`]) narrowed to E8M0 codes: the nearest power of two with ties up
/// is `((a + 2^51) >> 52) - 1023`, and adding 2^51 only involves bits at and above bit 51,
/// so on the high word it is `((hi + 0x80000) >> 20) - 1023` (the sticky bit is bit 0 and
/// changes nothing); values below 2^-127 give code 0, the nearest.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn e8m0_from_f64_hi<V: Vector>(w: V, c: &E8m0<V>) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let abs = w.and(V::splat(0x7FFF_FFFF));
        let e = abs.add(V::splat(0x0008_0000)).shr(20);
        let code = e
            .max_u32(V::splat(1023 - 127))
            .sub(V::splat(1023 - 127))
            .min_u32(c.overflow);
        finish_e8m0(w, abs, V::splat(0x7FF0_0000), code, c)
    }
}

/// The E8M0 special lanes: zero, negative and infinite sources give 0xFF, NaN the policy's
/// code. `x` holds the source's sign in bit 31 and is zero exactly for a +0 source; `inf`
/// is the magnitude bits of infinity in `abs`'s layout.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn finish_e8m0<V: Vector>(x: V, abs: V, inf: V, code: V, c: &E8m0<V>) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let ff = V::splat(0xFF);
        // x <= 0 as a signed integer: negative (sign bit) or +0.
        let code = V::select(V::splat(1).gt_i32(x), ff, code);
        let code = V::select(abs.gt_i32(inf.sub(V::splat(1))), ff, code);
        V::select(abs.gt_i32(inf), c.nan, code)
    }
}

/// Lanes of E8M0 codes widened to f32 bits: `c << 23` for `1..=254`, 2^-127 (the f32
/// subnormal `0x00400000`, built from bits) for 0, the quiet NaN `0x7FC00000` for 255.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn e8m0_widen<V: Vector>(code: V) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let c = code.and(V::splat(0xFF));
        let bits = V::select(c.eq(V::splat(0)), V::splat(0x0040_0000), c.shl(23));
        V::select(c.eq(V::splat(0xFF)), V::splat(0x7FC0_0000), bits)
    }
}

/// Per-call constants of [`bf16`].
#[derive(Clone, Copy)]
pub(crate) struct Bf16<V> {
    /// The largest magnitude kept before rounding: `0x7F7F7FFF` (rounds to MAX) under
    /// `Saturate`, else everything.
    clamp: V,
    /// NaN lanes: `(x >> 16) & keep | or`.
    nan_keep: V,
    nan_or: V,
    /// `Overflow::Saturate` ([`bf16_round_trip_finite`]).
    sat: bool,
}

impl<V: Vector> Bf16<V> {
    /// The constants under `p`.
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    #[inline(always)]
    pub(crate) unsafe fn new(p: Policy) -> Bf16<V> {
        let clamp = match p.overflow {
            Overflow::Saturate => 0x7F7F_7FFF,
            Overflow::NonSaturating => 0x7FFF_FFFF,
        };
        // Preserve: sign, top 7 payload bits, quiet bit; Canonical: sign and the quiet NaN;
        // ToMax: sign and MAX (the codec's `nan_code`).
        let (keep, or) = match p.nan {
            NanPolicy::Preserve => (0xFFFF, 0x0040),
            NanPolicy::Canonical => (0x8000, 0x7FC0),
            NanPolicy::ToMax => (0x8000, 0x7F7F),
        };
        // SAFETY: the caller's guarantee.
        unsafe {
            Bf16 {
                clamp: V::splat(clamp),
                nan_keep: V::splat(keep),
                nan_or: V::splat(or),
                sat: p.overflow == Overflow::Saturate,
            }
        }
    }
}

/// [`bf16`] widened back (`bf16(x, c) << 16`) with one shift instead of five: the rounding
/// sum is masked to its high half in place rather than shifted down and up, and the NaN
/// lanes' kept bits and quiet bit are taken where they already sit. The same bits.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn bf16_round_trip<V: Vector>(x: V, c: &Bf16<V>) -> V {
    // SAFETY: the caller's guarantee; no memory is touched. (`shl` of the constants folds.)
    unsafe {
        let abs = x.and(V::splat(0x7FFF_FFFF));
        let y = abs.min_u32(c.clamp).or_and(x, V::splat(0x8000_0000));
        let lsb = y.shr(16).and(V::splat(1));
        let r = y.add(V::splat(0x7FFF)).add(lsb).and(V::splat(0xFFFF_0000));
        let nan = c.nan_or.shl(16).or_and(x, c.nan_keep.shl(16));
        V::select(abs.gt_i32(V::splat(0x7F80_0000)), nan, r)
    }
}

/// [`bf16_round_trip`] for lanes none of which is a NaN (`Vector::any_nan4`): the same bits
/// in five operations (eight under `Saturate`) instead of about eleven.
///
/// Rounding to nearest even at bit 16 is `x + 0x7FFF + lsb` with `lsb` the lowest kept bit,
/// and the low half cleared. Without NaNs the magnitude is at most `0x7F800000`, so the sum
/// never carries into the sign bit and the magnitude needs no clamp: a finite value above
/// MAX's rounding boundary carries into `0x7F800000`, the infinity the IEEE policy gives, and
/// ±Inf stay. `Saturate` then lowers a magnitude of `0x7F800000` to MAX (`0x7F7F0000`),
/// which is what clamping first to `0x7F7F7FFF` gives in [`bf16_round_trip`].
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn bf16_round_trip_finite<V: Vector>(x: V, c: &Bf16<V>) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let lsb = x.shr(16).and(V::splat(1));
        let r = x.add(V::splat(0x7FFF)).add(lsb).and(V::splat(0xFFFF_0000));
        if c.sat {
            let mag = r.and(V::splat(0x7FFF_FFFF)).min_u32(V::splat(0x7F7F_0000));
            mag.or_and(r, V::splat(0x8000_0000))
        } else {
            r
        }
    }
}

/// Lanes of f32 bits narrowed to BF16 codes in the low 16 bits (the bits above are zero):
/// integer RNE on the bits, `(x + 0x7FFF + ((x >> 16) & 1)) >> 16`, exact for every finite
/// input and ±Inf, subnormals included (no float instruction, so MXCSR plays no part).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn bf16<V: Vector>(x: V, c: &Bf16<V>) -> V {
    // SAFETY: the caller's guarantee; no memory is touched.
    unsafe {
        let abs = x.and(V::splat(0x7FFF_FFFF));
        let y = abs.min_u32(c.clamp).or(x.and(V::splat(0x8000_0000)));
        let lsb = y.shr(16).and(V::splat(1));
        let r = y.add(V::splat(0x7FFF)).add(lsb).shr(16);
        let nan = x.shr(16).and(c.nan_keep).or(c.nan_or);
        V::select(abs.gt_i32(V::splat(0x7F80_0000)), nan, r)
    }
}
