//! The loops: every kernel is a [`Src`] (load `n` elements and decode them to lanes) and a
//! [`Dst`] (encode lanes and store `n` elements) joined by [`run`].
//!
//! * f32/f64 → narrow: [`F32`] or [`F64Odd`]/[`F64Hi`] into [`Code`], [`Packed`], [`E8m0`];
//! * narrow → f32/f64: [`Code`], [`Packed`], [`E8m0`] into [`F32`], [`F64`];
//! * narrow → narrow, in one pass: any narrow source (F16 and BF16 included, which decode
//!   exactly to f32 bits) into any narrow destination. Widening to f32 is exact for every
//!   format, so the destination's rounding is the only one: the result is the value of the
//!   source rounded once, as the two-pass route computes it;
//! * the fused round trip: [`F32`] into [`RoundTrip`].
//!
//! # The loop
//!
//! Four vectors per iteration (independent chains hide the latency of the multiply-add and
//! of the loads), then single vectors, then one partial step of `n < LANES` elements, whose
//! loads and stores touch exactly those `n` elements ([`Vector`]'s contract): no access is
//! outside the slices. A kernel that reads and writes the same buffer (the round trip) loads
//! each vector before it stores it.

use super::lanes;
use super::words::{self, Enc};
use crate::codec::{Format, NanKind};
use crate::options::Policy;
use crate::simd::Vector;

/// A kernel's input: how elements are loaded and decoded to 32-bit lanes.
pub(crate) trait Src {
    /// Whether decoding uses a float instruction that rounds by MXCSR where the ISA has no
    /// rounding immediate (AVX2): the instantiation then runs it under round to nearest.
    /// (NEON runs every kernel under FPCR = 0 and WebAssembly always rounds to nearest, so
    /// only x86-64 reads it.)
    #[cfg(target_arch = "x86_64")]
    const NEEDS_RN: bool = false;
    /// Byte offset of element `i` (`i` a multiple of every vector width).
    fn offset(i: usize) -> usize;
    /// Loads and decodes `n` elements at `p`.
    ///
    /// # Safety
    /// `p` valid for reading `n` elements, `1 <= n <= V::LANES`, and the CPU has `V`'s
    /// features.
    unsafe fn load<V: Vector>(p: *const u8, n: usize) -> V;
    /// `Some` where this source widens to words for `e` exactly on `V` (a constant after
    /// inlining), holding the subnormal table of [`words::widen_words`] where its words
    /// need one.
    #[inline(always)]
    fn words<V: Vector>(_e: Enc) -> Option<[u16; 16]> {
        None
    }
    /// Loads `n` elements (`1 <= n <= 2 · V::LANES`) at `p` widened to words for `e`; `sub`
    /// is [`words`](Self::words)' table loaded for `Vector::lookup_u16`. Called only where
    /// `words(e)` is `Some`.
    ///
    /// # Safety
    /// `p` valid for reading `n` elements, and the CPU has `V`'s features.
    #[inline(always)]
    unsafe fn load_words<V: Vector>(p: *const u8, n: usize, e: Enc, sub: &[V; 2]) -> V {
        let _ = (p, n, e, sub);
        unreachable!("load_words of a source without words")
    }
    /// The words [`load_words`](Self::load_words) gave for `e` ([`Enc::F32`] or
    /// [`Enc::F64`]) as f32 bits: words `0..LANES`, then `LANES..2 · LANES`.
    ///
    /// # Safety
    /// The CPU has `V`'s features; `w` came from `load_words(.., e, ..)`.
    #[inline(always)]
    unsafe fn words_to_f32<V: Vector>(w: V, e: Enc) -> [V; 2] {
        let _ = e;
        // BF16 words moved to the top of 32-bit lanes are the f32 bits of the same values.
        // SAFETY: the caller's guarantee.
        unsafe { [w.words_lo().shl(16), w.words_hi().shl(16)] }
    }
}

/// A kernel's output: how lanes are encoded and stored.
pub(crate) trait Dst {
    /// As [`Src::NEEDS_RN`], for encoding (the fused multiply-add narrowing).
    #[cfg(target_arch = "x86_64")]
    const NEEDS_RN: bool = false;
    /// Per-call constants.
    type Ctx<V: Vector>: Copy;
    /// Byte offset of element `i` (`i` a multiple of every vector width).
    fn offset(i: usize) -> usize;
    /// The constants for policy `p`.
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    unsafe fn ctx<V: Vector>(p: Policy) -> Self::Ctx<V>;
    /// Encodes one vector of decoded lanes.
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    unsafe fn encode<V: Vector>(c: &Self::Ctx<V>, v: V) -> V;
    /// Stores `n` encoded elements at `p`.
    ///
    /// # Safety
    /// `p` valid for writing `n` elements, `1 <= n <= V::LANES`, and the CPU has `V`'s
    /// features.
    unsafe fn put<V: Vector>(c: &Self::Ctx<V>, v: V, p: *mut u8, n: usize);
    /// The word encoding this destination stores from ([`put_words`](Self::put_words)), if
    /// any.
    const ENC: Option<Enc> = None;
    /// Stores `n` elements (`1 <= n <= 2 · V::LANES`) from the words source `S` loaded for
    /// [`ENC`](Self::ENC) at `p`; `sat` is `Overflow::Saturate`. Called only where `ENC` is
    /// `Some`.
    ///
    /// # Safety
    /// `p` valid for writing `n` elements, and the CPU has `V`'s features.
    #[inline(always)]
    unsafe fn put_words<V: Vector, S: Src>(w: V, sat: bool, p: *mut u8, n: usize) {
        let _ = (w, sat, p, n);
        unreachable!("put_words of a destination without words")
    }
    /// Encodes four full vectors of decoded lanes and stores them at `p`, in order.
    ///
    /// # Safety
    /// `p` valid for writing `4 * V::LANES` elements, and the CPU has `V`'s features.
    #[inline(always)]
    unsafe fn encode_put4<V: Vector>(c: &Self::Ctx<V>, v: [V; 4], p: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe {
            let e = [
                Self::encode::<V>(c, v[0]),
                Self::encode::<V>(c, v[1]),
                Self::encode::<V>(c, v[2]),
                Self::encode::<V>(c, v[3]),
            ];
            Self::put4::<V>(c, e, p)
        }
    }
    /// Stores four full vectors of encoded elements at `p`, in order.
    ///
    /// # Safety
    /// `p` valid for writing `4 * V::LANES` elements, and the CPU has `V`'s features.
    #[inline(always)]
    unsafe fn put4<V: Vector>(c: &Self::Ctx<V>, v: [V; 4], p: *mut u8) {
        // SAFETY: vector j's elements start at element j * LANES, inside the four.
        unsafe {
            for (j, x) in v.into_iter().enumerate() {
                Self::put(c, x, p.add(Self::offset(j * V::LANES)), V::LANES);
            }
        }
    }
}

/// f32 elements: their bits.
pub(crate) struct F32;
/// f64 sources, rounded to odd into f32 bits (for destinations that round f32 bits with at
/// least two fewer significand bits and round everything below 2^-126 to a signed zero).
pub(crate) struct F64Odd;
/// f64 sources for format `F`'s [`Code`]: [`F64Odd`] for a signed format; for an unsigned
/// one (F8E5M3FNU), which must tell a negative value (its NaN) from −0 (`+0`), the same
/// lanes with the lowest bit set where the f64 is not ±0 but the rounded-to-odd bits have a
/// zero magnitude (a value below 2^-126 that DAZ read as zero, or FTZ flushed): still a value
/// below 2^-126 with the source's sign, as [`F64Odd`] promises, and now not zero. The test
/// of the f64 is on its integer bits ([`Vector::load_f64_hi`]: high word, sticky low word),
/// which no MXCSR/FPCR setting changes.
pub(crate) struct F64Code<F>(core::marker::PhantomData<F>);
/// f64 sources as compressed high words (for E8M0's narrowing, [`E8m0Hi`]).
pub(crate) struct F64Hi;
/// f64 destinations (from f32 bits, exactly).
pub(crate) struct F64;
/// F16 elements.
pub(crate) struct Half;
/// BF16 elements.
pub(crate) struct Brain;
/// One code of the IEEE-like format `F` per byte.
pub(crate) struct Code<F>(core::marker::PhantomData<F>);
/// Two F4E2M1 codes per byte (`F4E2M1x2`).
pub(crate) struct Packed;
/// E8M0 codes, from f32 bits (as a destination) or to f32 bits (as a source).
pub(crate) struct E8m0;
/// E8M0 codes from compressed f64 high words ([`F64Hi`]).
pub(crate) struct E8m0Hi;
/// f32 narrowed to format `F` and widened back, in place.
pub(crate) struct RoundTrip<F>(core::marker::PhantomData<F>);
/// f32 through E8M0 and back, in place.
pub(crate) struct RoundTripE8m0;
/// f32 through F16 and back, in place.
pub(crate) struct RoundTripF16;
/// f32 through BF16 and back, in place.
pub(crate) struct RoundTripBf16;

impl Src for F32 {
    #[inline(always)]
    fn offset(i: usize) -> usize {
        4 * i
    }
    #[inline(always)]
    unsafe fn load<V: Vector>(p: *const u8, n: usize) -> V {
        // SAFETY: forwarded contract.
        unsafe { V::load_u32(p, n) }
    }
}

impl Src for F64Odd {
    #[cfg(target_arch = "x86_64")]
    const NEEDS_RN: bool = true;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        8 * i
    }
    #[inline(always)]
    unsafe fn load<V: Vector>(p: *const u8, n: usize) -> V {
        // SAFETY: forwarded contract.
        unsafe { V::load_f64_odd(p, n) }
    }
}

impl<F: Format> Src for F64Code<F> {
    #[cfg(target_arch = "x86_64")]
    const NEEDS_RN: bool = true;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        8 * i
    }
    #[inline(always)]
    unsafe fn load<V: Vector>(p: *const u8, n: usize) -> V {
        // SAFETY: forwarded contract (both loads read the same `n` elements).
        unsafe {
            let odd = V::load_f64_odd(p, n);
            if F::SIGNED {
                return odd;
            }
            let abs = V::splat(0x7FFF_FFFF);
            let flushed = odd.and(abs).eq(V::splat(0));
            let zero = V::load_f64_hi(p, n).and(abs).eq(V::splat(0));
            V::select(flushed, V::select(zero, odd, odd.or(V::splat(1))), odd)
        }
    }
}

impl Src for F64Hi {
    #[inline(always)]
    fn offset(i: usize) -> usize {
        8 * i
    }
    #[inline(always)]
    unsafe fn load<V: Vector>(p: *const u8, n: usize) -> V {
        // SAFETY: forwarded contract.
        unsafe { V::load_f64_hi(p, n) }
    }
}

impl Src for Half {
    #[inline(always)]
    fn offset(i: usize) -> usize {
        2 * i
    }
    #[inline(always)]
    unsafe fn load<V: Vector>(p: *const u8, n: usize) -> V {
        // SAFETY: forwarded contract.
        unsafe { V::load_f16(p, n) }
    }
}

impl Src for Brain {
    #[inline(always)]
    fn offset(i: usize) -> usize {
        2 * i
    }
    #[inline(always)]
    unsafe fn load<V: Vector>(p: *const u8, n: usize) -> V {
        // SAFETY: forwarded contract. BF16 is the top half of the f32 with the same value.
        unsafe { V::load_u16(p, n).shl(16) }
    }
}

impl<F: Format> Src for Code<F> {
    #[inline(always)]
    fn offset(i: usize) -> usize {
        i
    }
    #[inline(always)]
    unsafe fn load<V: Vector>(p: *const u8, n: usize) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::widen::<V, F>(V::load_u8(p, n)) }
    }
    #[inline(always)]
    fn words<V: Vector>(e: Enc) -> Option<[u16; 16]> {
        match e {
            // f32 through scaled F16 codes or BF16 words (`via_f16`).
            Enc::F32 | Enc::F64 if via_f16::<V, F>(e) => Some([0; 16]),
            Enc::Bf16 | Enc::F32 if const { words::eligible::<F>(Enc::Bf16) } => {
                Some(const { words::sub_table::<F>(Enc::Bf16) })
            }
            Enc::F16 if const { words::eligible::<F>(Enc::F16) } => {
                Some(const { words::sub_table::<F>(Enc::F16) })
            }
            _ => None,
        }
    }
    #[inline(always)]
    unsafe fn load_words<V: Vector>(p: *const u8, n: usize, e: Enc, sub: &[V; 2]) -> V {
        // SAFETY: forwarded contract; `F` is eligible for `e` as `words` chose (the only
        // callers are behind `words(e)`).
        unsafe {
            match e {
                Enc::F32 | Enc::F64 if via_f16::<V, F>(e) => {
                    words::widen_scaled_f16::<V, F>(V::load_u8_words(p, n))
                }
                // In `Vector::top_words`' order: `words_to_f32` reads them.
                Enc::F32 => words::widen_words::<V, F>(V::load_u8_top_words(p, n), Enc::Bf16, sub),
                _ => words::widen_words::<V, F>(V::load_u8_words(p, n), e, sub),
            }
        }
    }
    #[inline(always)]
    unsafe fn words_to_f32<V: Vector>(w: V, e: Enc) -> [V; 2] {
        // SAFETY: the caller's guarantee; `words(e)` chose the words' kind.
        unsafe {
            if via_f16::<V, F>(e) {
                let (lo, hi) = (w.f16_words_lo(), w.f16_words_hi());
                if F::BIAS == 15 {
                    return [lo, hi];
                }
                // Exact and normal for finite values; Inf and the quiet NaNs pass unchanged
                // (`words::widen_scaled_f16`).
                let k = V::splat(const { words::scaled_f16_factor::<F>() });
                [lo.mul_exact_f32(k), hi.mul_exact_f32(k)]
            } else {
                w.top_words()
            }
        }
    }
}

/// Whether `F`'s widening to `e` (f32 or f64) on `V` goes through scaled F16 words
/// ([`words::widen_scaled_f16`]) rather than BF16 words: where `V` converts F16 natively and
/// `F`'s codes are scaled F16 codes, for f64 always (through BF16 words it measured slower
/// than in 32-bit lanes), and for f32 unless BF16 words in [`Vector::top_words`]' order are
/// cheaper (`V::TOP_WORDS`). On AVX2 (Zen 3) they were, by 1.05–1.3×, for the formats with
/// Inf or NaN codes (whose scaled F16 codes need the same replacements as BF16 words) but
/// the E5M2-like ones (whose scaled F16 codes are the codes shifted); for fp6, which has
/// neither, the scaled F16 words without any replacement were 1.2× faster.
const fn via_f16<V: Vector, F: Format>(e: Enc) -> bool {
    V::F16_WORDS
        && words::scaled_f16_eligible::<F>()
        && (matches!(e, Enc::F64)
            || !V::TOP_WORDS
            || F::EXP_BITS == 5
            || (!F::HAS_INF && matches!(F::NAN, NanKind::None))
            || !words::eligible::<F>(Enc::Bf16))
}

impl Src for Packed {
    #[inline(always)]
    fn offset(i: usize) -> usize {
        i / 2
    }
    #[inline(always)]
    unsafe fn load<V: Vector>(p: *const u8, n: usize) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::widen::<V, crate::F4E2M1>(V::load_nibbles(p, n)) }
    }
}

impl Src for E8m0 {
    #[inline(always)]
    fn offset(i: usize) -> usize {
        i
    }
    #[inline(always)]
    unsafe fn load<V: Vector>(p: *const u8, n: usize) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::e8m0_widen(V::load_u8(p, n)) }
    }
}

impl Dst for F32 {
    type Ctx<V: Vector> = ();
    #[inline(always)]
    fn offset(i: usize) -> usize {
        4 * i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(_: Policy) {}
    #[inline(always)]
    unsafe fn encode<V: Vector>(_: &(), v: V) -> V {
        v
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &(), v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_u32(p, n) }
    }
    const ENC: Option<Enc> = Some(Enc::F32);
    #[inline(always)]
    unsafe fn put_words<V: Vector, S: Src>(w: V, _: bool, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract: the first `min(n, LANES)` elements, then the rest.
        unsafe {
            let l = V::LANES;
            let [lo, hi] = S::words_to_f32(w, Enc::F32);
            lo.store_u32(p, n.min(l));
            if n > l {
                hi.store_u32(p.add(4 * l), n - l);
            }
        }
    }
}

impl Dst for F64 {
    type Ctx<V: Vector> = ();
    #[inline(always)]
    fn offset(i: usize) -> usize {
        8 * i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(_: Policy) {}
    #[inline(always)]
    unsafe fn encode<V: Vector>(_: &(), v: V) -> V {
        v
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &(), v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_f64(p, n) }
    }
    const ENC: Option<Enc> = Some(Enc::F64);
    #[inline(always)]
    unsafe fn put_words<V: Vector, S: Src>(w: V, _: bool, p: *mut u8, n: usize) {
        // As for `F32`, then f32 → f64 (exact).
        // SAFETY: forwarded contract: the first `min(n, LANES)` elements, then the rest.
        unsafe {
            let l = V::LANES;
            let [lo, hi] = S::words_to_f32(w, Enc::F64);
            lo.store_f64(p, n.min(l));
            if n > l {
                hi.store_f64(p.add(8 * l), n - l);
            }
        }
    }
}

impl Dst for Half {
    type Ctx<V: Vector> = bool;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        2 * i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(p: Policy) -> bool {
        p.overflow == crate::Overflow::Saturate
    }
    #[inline(always)]
    unsafe fn encode<V: Vector>(_: &bool, v: V) -> V {
        v
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(sat: &bool, v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_f16(p, n, *sat) }
    }
    const ENC: Option<Enc> = Some(Enc::F16);
    #[inline(always)]
    unsafe fn put_words<V: Vector, S: Src>(w: V, sat: bool, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe {
            let w = if sat { words::saturate(w, Enc::F16) } else { w };
            w.store_words(p, n)
        }
    }
}

impl Dst for Brain {
    type Ctx<V: Vector> = lanes::Bf16<V>;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        2 * i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(p: Policy) -> lanes::Bf16<V> {
        // SAFETY: forwarded contract.
        unsafe { lanes::Bf16::new(p) }
    }
    #[inline(always)]
    unsafe fn encode<V: Vector>(c: &lanes::Bf16<V>, v: V) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::bf16(v, c) }
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &lanes::Bf16<V>, v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_u16(p, n) }
    }
    const ENC: Option<Enc> = Some(Enc::Bf16);
    #[inline(always)]
    unsafe fn put_words<V: Vector, S: Src>(w: V, sat: bool, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe {
            let w = if sat {
                words::saturate(w, Enc::Bf16)
            } else {
                w
            };
            w.store_words(p, n)
        }
    }
}

impl<F: Format> Dst for Code<F> {
    #[cfg(target_arch = "x86_64")]
    const NEEDS_RN: bool = true;
    type Ctx<V: Vector> = lanes::Narrow<V>;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(p: Policy) -> lanes::Narrow<V> {
        // SAFETY: forwarded contract.
        unsafe { lanes::Narrow::new::<F>(p) }
    }
    #[inline(always)]
    unsafe fn encode<V: Vector>(c: &lanes::Narrow<V>, v: V) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::narrow::<V, F>(v, c) }
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &lanes::Narrow<V>, v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_u8(p, n) }
    }
    #[inline(always)]
    unsafe fn put4<V: Vector>(_: &lanes::Narrow<V>, v: [V; 4], p: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { V::store4_u8(v, p) }
    }
    #[inline(always)]
    unsafe fn encode_put4<V: Vector>(c: &lanes::Narrow<V>, v: [V; 4], p: *mut u8) {
        // SAFETY: forwarded contract; `narrow4` only where `c.bytes_ok`.
        unsafe {
            if V::BYTES4 && c.bytes_ok {
                lanes::narrow4::<V, F>(v, c).store_bytes4(p);
            } else {
                let e = [
                    lanes::narrow::<V, F>(v[0], c),
                    lanes::narrow::<V, F>(v[1], c),
                    lanes::narrow::<V, F>(v[2], c),
                    lanes::narrow::<V, F>(v[3], c),
                ];
                V::store4_u8(e, p)
            }
        }
    }
}

impl Dst for Packed {
    #[cfg(target_arch = "x86_64")]
    const NEEDS_RN: bool = true;
    type Ctx<V: Vector> = lanes::Narrow<V>;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        i / 2
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(p: Policy) -> lanes::Narrow<V> {
        // SAFETY: forwarded contract.
        unsafe { lanes::Narrow::new::<crate::F4E2M1>(p) }
    }
    #[inline(always)]
    unsafe fn encode<V: Vector>(c: &lanes::Narrow<V>, v: V) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::narrow::<V, crate::F4E2M1>(v, c).and(V::splat(0xF)) }
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &lanes::Narrow<V>, v: V, p: *mut u8, n: usize) {
        // For odd `n`, lane `n` was loaded as zero bits (+0, whatever the source format),
        // so its code is +0: the partner the packed layout wants for an odd last value.
        // SAFETY: forwarded contract.
        unsafe { v.store_nibbles(p, n) }
    }
}

impl Dst for E8m0 {
    type Ctx<V: Vector> = lanes::E8m0<V>;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(p: Policy) -> lanes::E8m0<V> {
        // SAFETY: forwarded contract.
        unsafe { lanes::E8m0::new(p) }
    }
    #[inline(always)]
    unsafe fn encode<V: Vector>(c: &lanes::E8m0<V>, v: V) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::e8m0_from_f32(v, c) }
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &lanes::E8m0<V>, v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_u8(p, n) }
    }
    #[inline(always)]
    unsafe fn put4<V: Vector>(_: &lanes::E8m0<V>, v: [V; 4], p: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { V::store4_u8(v, p) }
    }
}

impl Dst for E8m0Hi {
    type Ctx<V: Vector> = lanes::E8m0<V>;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(p: Policy) -> lanes::E8m0<V> {
        // SAFETY: forwarded contract.
        unsafe { lanes::E8m0::new(p) }
    }
    #[inline(always)]
    unsafe fn encode<V: Vector>(c: &lanes::E8m0<V>, v: V) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::e8m0_from_f64_hi(v, c) }
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &lanes::E8m0<V>, v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_u8(p, n) }
    }
    #[inline(always)]
    unsafe fn put4<V: Vector>(_: &lanes::E8m0<V>, v: [V; 4], p: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { V::store4_u8(v, p) }
    }
}

impl<F: Format> Dst for RoundTrip<F> {
    #[cfg(target_arch = "x86_64")]
    const NEEDS_RN: bool = true;
    type Ctx<V: Vector> = lanes::RoundTrip<V>;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        4 * i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(p: Policy) -> lanes::RoundTrip<V> {
        // SAFETY: forwarded contract.
        unsafe { lanes::RoundTrip::new::<F>(p) }
    }
    #[inline(always)]
    unsafe fn encode<V: Vector>(c: &lanes::RoundTrip<V>, v: V) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::round_trip::<V, F>(v, c) }
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &lanes::RoundTrip<V>, v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_u32(p, n) }
    }
}

impl Dst for RoundTripE8m0 {
    type Ctx<V: Vector> = lanes::E8m0<V>;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        4 * i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(p: Policy) -> lanes::E8m0<V> {
        // SAFETY: forwarded contract.
        unsafe { lanes::E8m0::new(p) }
    }
    #[inline(always)]
    unsafe fn encode<V: Vector>(c: &lanes::E8m0<V>, v: V) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::e8m0_widen(lanes::e8m0_from_f32(v, c)) }
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &lanes::E8m0<V>, v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_u32(p, n) }
    }
}

impl Dst for RoundTripF16 {
    type Ctx<V: Vector> = bool;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        4 * i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(p: Policy) -> bool {
        p.overflow == crate::Overflow::Saturate
    }
    #[inline(always)]
    unsafe fn encode<V: Vector>(sat: &bool, v: V) -> V {
        // SAFETY: forwarded contract.
        unsafe { v.round_f16(*sat) }
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &bool, v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_u32(p, n) }
    }
}

impl Dst for RoundTripBf16 {
    type Ctx<V: Vector> = lanes::Bf16<V>;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        4 * i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(p: Policy) -> lanes::Bf16<V> {
        // SAFETY: forwarded contract.
        unsafe { lanes::Bf16::new(p) }
    }
    #[inline(always)]
    unsafe fn encode<V: Vector>(c: &lanes::Bf16<V>, v: V) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::bf16_round_trip(v, c) }
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &lanes::Bf16<V>, v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_u32(p, n) }
    }
    /// One NaN test for the four vectors; without a NaN, the shorter rounding
    /// ([`lanes::bf16_round_trip_finite`]).
    #[inline(always)]
    unsafe fn encode_put4<V: Vector>(c: &lanes::Bf16<V>, v: [V; 4], p: *mut u8) {
        // SAFETY: forwarded contract. (No closures: see `step4`.)
        unsafe {
            let e = if !V::any_nan4(&v) {
                [
                    lanes::bf16_round_trip_finite(v[0], c),
                    lanes::bf16_round_trip_finite(v[1], c),
                    lanes::bf16_round_trip_finite(v[2], c),
                    lanes::bf16_round_trip_finite(v[3], c),
                ]
            } else {
                [
                    lanes::bf16_round_trip(v[0], c),
                    lanes::bf16_round_trip(v[1], c),
                    lanes::bf16_round_trip(v[2], c),
                    lanes::bf16_round_trip(v[3], c),
                ]
            };
            Self::put4(c, e, p)
        }
    }
}

/// One step: `n` elements from element `i`.
///
/// # Safety
/// As for [`run`], with `i + n <= len`.
#[inline(always)]
unsafe fn step<V: Vector, S: Src, D: Dst>(
    c: &D::Ctx<V>,
    src: *const u8,
    dst: *mut u8,
    i: usize,
    n: usize,
) {
    // SAFETY: elements i..i + n are inside both slices (the caller's guarantee), and the
    // offsets are those of element i.
    unsafe {
        let v = D::encode::<V>(c, S::load::<V>(src.add(S::offset(i)), n));
        D::put::<V>(c, v, dst.add(D::offset(i)), n);
    }
}

/// Four full vectors from element `i`, encoded and stored together ([`Dst::encode_put4`]).
///
/// # Safety
/// As for [`run`], with `i + 4 * V::LANES <= len`.
#[inline(always)]
unsafe fn step4<V: Vector, S: Src, D: Dst>(c: &D::Ctx<V>, src: *const u8, dst: *mut u8, i: usize) {
    let l = V::LANES;
    // SAFETY: elements i..i + 4l are inside both slices (the caller's guarantee). Every
    // vector is loaded before any is stored, which the in-place round trip allows (each
    // element is read before it is written).
    unsafe {
        // (No closure here: a closure is a function of its own, which would not inherit the
        // instantiation's target features, and the intrinsics would become calls.)
        let v0 = S::load::<V>(src.add(S::offset(i)), l);
        let v1 = S::load::<V>(src.add(S::offset(i + l)), l);
        let v2 = S::load::<V>(src.add(S::offset(i + 2 * l)), l);
        let v3 = S::load::<V>(src.add(S::offset(i + 3 * l)), l);
        D::encode_put4::<V>(c, [v0, v1, v2, v3], dst.add(D::offset(i)));
    }
}

/// Converts `len` elements from `src` to `dst` (a [`RawKernel`](crate::arch::RawKernel)'s
/// body).
///
/// # Safety
/// `src` valid for reading `len` source elements and `dst` for writing `len` destination
/// elements (the same buffer only for [`RoundTrip`]), and the CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn run<V: Vector, S: Src, D: Dst>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    p: Policy,
) {
    if V::WORDS
        && let Some(e) = D::ENC
        && let Some(table) = S::words::<V>(e)
    {
        // SAFETY: forwarded contract.
        unsafe { run_words::<V, S, D>(src, dst, len, p, e, &table) };
        return;
    }
    let l = V::LANES;
    // SAFETY: every step covers elements below `len` (the loop conditions), and the CPU has
    // `V`'s features (the caller's guarantee).
    unsafe {
        let c = D::ctx::<V>(p);
        let mut i = 0;
        while i + 4 * l <= len {
            step4::<V, S, D>(&c, src, dst, i);
            i += 4 * l;
        }
        while i + l <= len {
            step::<V, S, D>(&c, src, dst, i, l);
            i += l;
        }
        if i < len {
            step::<V, S, D>(&c, src, dst, i, len - i);
        }
    }
}

/// One vector of `n <= 2 · LANES` elements from element `i` for [`run_words`]. (No closure:
/// a closure is a function of its own, which would not inherit the instantiation's target
/// features.)
///
/// # Safety
/// As for [`run_words`], with `i + n <= len`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn word_step<V: Vector, S: Src, D: Dst>(
    src: *const u8,
    dst: *mut u8,
    i: usize,
    n: usize,
    e: Enc,
    sub: &[V; 2],
    sat: bool,
) {
    // SAFETY: elements i..i + n are inside both slices (the caller's guarantee).
    unsafe {
        let x = S::load_words::<V>(src.add(S::offset(i)), n, e, sub);
        D::put_words::<V, S>(x, sat, dst.add(D::offset(i)), n);
    }
}

/// [`run`] for a source that widens to words for `e` and a destination that stores from them
/// (`words.rs`): `2 · LANES` elements per vector. Source and destination are distinct
/// buffers here (no round trip has words), so a slice of at least one vector is covered by
/// full vectors only: the first at element 0, the loop from the first element whose
/// destination address is a multiple of the vector's byte width (`4 · LANES`, so that the
/// loop's stores do not straddle cache lines; the elements in between are converted twice,
/// to the same bits), two vectors per step, then one vector, and a last vector that ends at
/// the slice's end (again overlapping elements already written, with the same bits). A
/// shorter slice is one partial vector, whose loads and stores touch exactly its elements.
///
/// # Safety
/// As for [`run`], with `src` and `dst` not overlapping; `S::words::<V>(e)` is
/// `Some(*table)` and `D::ENC` is `Some(e)`.
#[inline(always)]
unsafe fn run_words<V: Vector, S: Src, D: Dst>(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    p: Policy,
    e: Enc,
    table: &[u16; 16],
) {
    let w = 2 * V::LANES;
    let sat = p.overflow == crate::Overflow::Saturate;
    // SAFETY: every access covers elements below `len` (the loop conditions, and
    // `len - w >= 0` for the last vector). The table holds 16 words, 8 u32: `t0` reads
    // `min(LANES, 8)` of them from word 0, and `t1` (only for 4 lanes, where a vector holds 8
    // words) the 4 from word 8 on.
    unsafe {
        let t0 = V::load_u32(table.as_ptr().cast(), V::LANES.min(8));
        let t1 = if V::LANES < 8 {
            V::load_u32(table.as_ptr().add(8).cast(), V::LANES)
        } else {
            t0
        };
        let sub = [t0, t1];
        if len < w {
            word_step::<V, S, D>(src, dst, 0, len, e, &sub, sat);
            return;
        }
        word_step::<V, S, D>(src, dst, 0, w, e, &sub, sat);
        if len == w {
            // One vector: done (the alignment peel below would convert it again).
            return;
        }
        // The destination's elements are aligned to their size, so the distance to the next
        // multiple of the vector's byte width is whole elements (fewer than `w`).
        let a = 4 * V::LANES;
        let peel = (a - dst as usize % a) % a / D::offset(1);
        let mut i = if peel > 0 { peel } else { w };
        while i + 2 * w <= len {
            let x = S::load_words::<V>(src.add(S::offset(i)), w, e, &sub);
            let y = S::load_words::<V>(src.add(S::offset(i + w)), w, e, &sub);
            D::put_words::<V, S>(x, sat, dst.add(D::offset(i)), w);
            D::put_words::<V, S>(y, sat, dst.add(D::offset(i + w)), w);
            i += 2 * w;
        }
        if i + w <= len {
            word_step::<V, S, D>(src, dst, i, w, e, &sub, sat);
            i += w;
        }
        if i < len {
            word_step::<V, S, D>(src, dst, len - w, w, e, &sub, sat);
        }
    }
}
