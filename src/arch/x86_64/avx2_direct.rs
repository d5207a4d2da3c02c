//! AVX2 direct kernels for narrow → narrow pairs: one pass, in registers.
//!
//! Each kernel loads source codes, widens them to f32 in registers with the widening code
//! of the `avx2` module ([`WidenFrom`]), and narrows those f32 to the destination with the
//! narrowing code of the same module, then stores. Widening is exact (every value of every
//! narrow format is an f32, and NaNs widen to quiet f32 NaNs with their sign), so the
//! narrowing is the only rounding: the result is the source value rounded once to the
//! destination, exactly what the Scalar route (widen a chunk to f32, narrow it) gives, for
//! the NaN policy `Preserve` (the dispatcher runs the two halves for the other NaN
//! policies).
//!
//! The narrowing steps, per destination:
//!
//! * **BF16 from a format whose values are all BF16 values** (fp8 formats, fp6, fp4, E8M0):
//!   the value needs no rounding, so the BF16 code is the top half of the f32: `x >> 16`.
//!   A NaN widens to a quiet f32 NaN, whose top half is what the f32 → BF16 rule
//!   `Preserve` keeps (`(x >> 16) | 0x40`, the quiet bit already set). Finite values never
//!   overflow BF16; an infinity (E5M2 has them) becomes ±MAX under `Saturate`, by the
//!   fix-up of the f32 → BF16 kernel.
//! * **BF16 from F16** (11 significant bits, BF16 keeps 8): the integer round to nearest
//!   even of the f32 → BF16 kernel (`f32_to_bf16_codes`), and the same `Saturate` fix-up for
//!   infinities (finite F16 values never overflow BF16).
//! * **F16 from E5M2** (`E5m2ToF16`): `c << 8` is the F16 code of the same value, and
//!   `Saturate` turns the infinities into ±MAX; **from packed and unpacked FP4**, tables.
//!
//! (These are the kernels of the `Avx2` override list, `arch/x86_64/tables.rs`; the other
//! narrow → narrow pairs run the generic one-pass kernels of `simd/generic`.)
//!
//! Loops: the `drive` driver of the `avx2` module, 16 elements per large step and 8 per
//! small step, with its overlapping last step and stack buffer for short slices, so no
//! access leaves the slices.

use core::arch::x86_64::*;
use core::marker::PhantomData;

use super::avx2::{
    Steps, WidenFrom, bf16_rne_no_nan, drive, f32_to_bf16_codes, pack_words, saturate16, srl,
};
use super::avx2_small::f16_codes16;
use crate::arch::Kernels;
use crate::codec::Format;
use crate::options::Policy;
use crate::{BF16, F4E2M1, F4E2M1x2, F8E5M2, F8E5M2FNUZ, F8E8M0, F16, Overflow};

/// How a direct kernel narrows f32 values to its destination.
trait NarrowTo {
    /// Destination element size in bytes.
    const D: usize;
    /// Narrows 16 f32 (two vectors) and stores 16 codes at `dst`.
    ///
    /// # Safety
    /// `dst` writable for `16 * D` bytes; AVX2, FMA and F16C present.
    unsafe fn store16(dst: *mut u8, x: [__m256; 2]);
    /// Narrows 8 f32 and stores 8 codes at `dst`.
    ///
    /// # Safety
    /// `dst` writable for `8 * D` bytes; AVX2, FMA and F16C present.
    unsafe fn store8(dst: *mut u8, x: __m256);
}

/// BF16 codes of 8 f32 in 32-bit lanes: by truncation when `EXACT` (every source value is
/// a BF16 value), else rounded to nearest even.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn bf16_codes<const EXACT: bool>(x: __m256) -> __m256i {
    let v = _mm256_castps_si256(x);
    if EXACT {
        srl(v, 16)
    } else {
        f32_to_bf16_codes(v)
    }
}

/// BF16, by truncation when `EXACT`, else rounded; ±Inf become ±MAX when `SAT`.
struct ToBf16<const EXACT: bool, const SAT: bool>;

impl<const EXACT: bool, const SAT: bool> NarrowTo for ToBf16<EXACT, SAT> {
    const D: usize = 2;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store16(dst: *mut u8, x: [__m256; 2]) {
        // Rounding (from F16): 16 values without a NaN (one unordered compare of the two
        // vectors and a VTESTPS; MXCSR.DAZ cannot make a NaN ordered) take the rounding
        // without NaN lanes, as the f32 -> BF16 kernel does.
        let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(x[0], x[1]);
        let h = if !EXACT && _mm256_testz_ps(nan, nan) == 1 {
            let r = |v: __m256| bf16_rne_no_nan(_mm256_castps_si256(v));
            pack_words(r(x[0]), r(x[1]))
        } else {
            pack_words(bf16_codes::<EXACT>(x[0]), bf16_codes::<EXACT>(x[1]))
        };
        let h = if SAT { saturate16(h, 0x7F80) } else { h };
        // SAFETY: 32 bytes writable at dst (the caller's contract).
        unsafe { _mm256_storeu_si256(dst.cast(), h) };
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn store8(dst: *mut u8, x: __m256) {
        let a = bf16_codes::<EXACT>(x);
        // The codes are below 65536, so the unsigned-saturating pack keeps them.
        let mut h = _mm_packus_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256::<1>(a));
        if SAT {
            h = _mm256_castsi256_si128(saturate16(_mm256_castsi128_si256(h), 0x7F80));
        }
        // SAFETY: 16 bytes writable at dst.
        unsafe { _mm_storeu_si128(dst.cast(), h) };
    }
}

/// Source `S` widened in registers, narrowed by `N`.
struct Direct<S, N>(PhantomData<(S, N)>);

impl<S: WidenFrom, N: NarrowTo> Steps for Direct<S, N> {
    const S: usize = S::SIZE;
    const D: usize = N::D;
    const BIG: usize = 32;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        for k in 0..2 {
            // SAFETY: 32 codes readable at src and 32 writable at dst; step k touches
            // elements 16k..16k + 16 of both.
            unsafe {
                let f = S::load16_to_f32(src.add(16 * k * S::SIZE));
                N::store16(dst.add(16 * k * N::D), f);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 codes readable at src, 8 writable at dst.
        unsafe { N::store8(dst, S::to_f32(S::load8(src))) };
    }
}

/// A conversion from 8-bit codes to 16-bit codes done on 16 lanes of 16 bits.
trait ByteToWord {
    /// The 16-bit codes of 16 byte codes (the low 8 of `c` when only 8 are loaded; the
    /// other lanes are then ignored).
    ///
    /// # Safety
    /// AVX2, FMA and F16C present.
    unsafe fn codes16(c: __m128i) -> __m256i;

    /// The 16-bit codes of 32 byte codes, in order: codes 0–15, then 16–31. By default
    /// two [`codes16`](Self::codes16); a conversion done on byte planes overrides it to
    /// work on all 32 codes at once.
    ///
    /// # Safety
    /// AVX2, FMA and F16C present.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn codes32(c: __m256i) -> [__m256i; 2] {
        // SAFETY: the features are the caller's.
        unsafe {
            [
                Self::codes16(_mm256_castsi256_si128(c)),
                Self::codes16(_mm256_extracti128_si256::<1>(c)),
            ]
        }
    }
}

/// The loop steps of a [`ByteToWord`] conversion.
struct Bytes<K>(PhantomData<K>);

impl<K: ByteToWord> Steps for Bytes<K> {
    const S: usize = 1;
    const D: usize = 2;
    const BIG: usize = 32;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        // SAFETY: 32 codes readable at src and 32 16-bit codes (64 bytes) writable at dst
        // (the caller's contract); unaligned accesses; the features are the caller's.
        unsafe {
            let [w0, w1] = K::codes32(_mm256_loadu_si256(src.cast()));
            let d = dst.cast::<__m256i>();
            _mm256_storeu_si256(d, w0);
            _mm256_storeu_si256(d.add(1), w1);
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 codes readable at src (MOVQ reads exactly 8 bytes), 8 16-bit codes (16
        // bytes) writable at dst; the features are the caller's.
        unsafe {
            let h = K::codes16(_mm_loadl_epi64(src.cast()));
            _mm_storeu_si128(dst.cast(), _mm256_castsi256_si128(h));
        }
    }
}

/// E5M2 → F16 without f32: `code << 8` is the F16 code of the same value (same exponent
/// field and bias, fraction padded with zeros). A NaN gets the F16 quiet bit `0x0200`, as
/// widening to f32 (which quiets) and narrowing back would give, and `Saturate` turns ±Inf
/// into ±MAX with the fix-up of the f32 → F16 kernel.
struct E5m2ToF16<const SAT: bool>;

impl<const SAT: bool> ByteToWord for E5m2ToF16<SAT> {
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn codes16(c: __m128i) -> __m256i {
        let h = _mm256_slli_epi16::<8>(_mm256_cvtepu8_epi16(c));
        // NaN: magnitude above Inf (0x7C00); magnitudes are below 0x8000, so the signed
        // compare is an unsigned one here.
        let mag = _mm256_and_si256(h, _mm256_set1_epi16(0x7FFF));
        let is_nan = _mm256_cmpgt_epi16(mag, _mm256_set1_epi16(0x7C00));
        let h = _mm256_or_si256(h, _mm256_and_si256(is_nan, _mm256_set1_epi16(0x0200)));
        if SAT { saturate16(h, 0x7C00) } else { h }
    }
}

/// The code in a hub format (F16 or BF16: exponent bias `hb`, `hm` fraction bits, a range
/// and precision that hold every value of `F`) of code `c` of `F`, a format without
/// infinities or NaNs (fp4): the exact value, re-encoded. Used at compile time to build
/// lookup tables, so the kernels below stay generic over the format's constants.
const fn hub_code<F: Format>(c: u32, hb: i32, hm: u32) -> u16 {
    let sign = if c & F::SIGN_BIT != 0 { 0x8000 } else { 0 };
    let mag = c & F::MAG_MASK;
    let e = mag >> F::MAN_BITS;
    let m = mag & ((1 << F::MAN_BITS) - 1);
    let bits = if mag == 0 {
        0
    } else if e == 0 {
        // Subnormal: m * 2^(1 - BIAS - MAN_BITS), normalised around its leading one (bit p).
        let p = 31 - m.leading_zeros();
        let exp = (1 - F::BIAS - F::MAN_BITS as i32 + p as i32 + hb) as u32;
        (exp << hm) | ((m << (hm - p)) & ((1 << hm) - 1))
    } else {
        (((e as i32 - F::BIAS + hb) as u32) << hm) | (m << (hm - F::MAN_BITS))
    };
    (sign | bits) as u16
}

/// Lookup tables of the 16 FP4 codes in a hub format: the full codes, and their low and
/// high bytes (the two `VPSHUFB` tables).
struct Fp4Tables {
    full: [u16; 16],
    lo: [u8; 16],
    hi: [u8; 16],
}

impl Fp4Tables {
    const fn new(hb: i32, hm: u32) -> Fp4Tables {
        let mut t = Fp4Tables {
            full: [0; 16],
            lo: [0; 16],
            hi: [0; 16],
        };
        let mut c = 0;
        while c < 16 {
            let h = hub_code::<F4E2M1>(c as u32, hb, hm);
            t.full[c] = h;
            t.lo[c] = h as u8;
            t.hi[c] = (h >> 8) as u8;
            c += 1;
        }
        t
    }
}

/// FP4 → BF16 (bias 127, 7 fraction bits).
static FP4_BF16: Fp4Tables = Fp4Tables::new(127, 7);
/// FP4 → F16 (bias 15, 10 fraction bits).
static FP4_F16: Fp4Tables = Fp4Tables::new(15, 10);

/// Which hub format an FP4 kernel writes.
trait Fp4Hub {
    const TABLES: &'static Fp4Tables;
}
impl Fp4Hub for BF16 {
    const TABLES: &'static Fp4Tables = &FP4_BF16;
}
impl Fp4Hub for F16 {
    const TABLES: &'static Fp4Tables = &FP4_F16;
}

/// Hub codes of 32 FP4 codes (one per byte, values 0..16), in order: two vectors of 16.
/// `VPSHUFB` looks up the low and the high byte of each code (the tables are repeated in
/// both 128-bit halves), `VPUNPCKL/HBW` interleave them into words within each half, and
/// `VPERM2I128` puts the halves back in order.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn fp4_codes32<H: Fp4Hub>(c: __m256i) -> [__m256i; 2] {
    // SAFETY: each load reads one 16-byte static table (unaligned loads).
    let (tlo, thi) = unsafe {
        (
            _mm_loadu_si128(H::TABLES.lo.as_ptr().cast()),
            _mm_loadu_si128(H::TABLES.hi.as_ptr().cast()),
        )
    };
    let lo = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(tlo), c);
    let hi = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(thi), c);
    let a = _mm256_unpacklo_epi8(lo, hi); // codes 0-7 | 16-23
    let b = _mm256_unpackhi_epi8(lo, hi); // codes 8-15 | 24-31
    [
        _mm256_permute2x128_si256::<0x20>(a, b),
        _mm256_permute2x128_si256::<0x31>(a, b),
    ]
}

/// Hub codes of 16 FP4 codes (one per byte, values 0..16) in 128-bit vectors.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
fn fp4_codes16<H: Fp4Hub>(c: __m128i) -> [__m128i; 2] {
    // SAFETY: each load reads one 16-byte static table (unaligned loads).
    let (tlo, thi) = unsafe {
        (
            _mm_loadu_si128(H::TABLES.lo.as_ptr().cast()),
            _mm_loadu_si128(H::TABLES.hi.as_ptr().cast()),
        )
    };
    let lo = _mm_shuffle_epi8(tlo, c);
    let hi = _mm_shuffle_epi8(thi, c);
    [_mm_unpacklo_epi8(lo, hi), _mm_unpackhi_epi8(lo, hi)]
}

/// FP4 (one code per byte; the high nibble is ignored, as widening ignores it) → F16 or
/// BF16, exact (every FP4 value is a value of both, and FP4 has no Inf or NaN, so neither
/// policy applies).
struct Fp4ToHub<H>(PhantomData<H>);

impl<H: Fp4Hub> Steps for Fp4ToHub<H> {
    const S: usize = 1;
    const D: usize = 2;
    const BIG: usize = 32;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        // SAFETY: 32 codes readable at src, 32 hub codes (64 bytes) writable at dst.
        unsafe {
            let c = _mm256_and_si256(_mm256_loadu_si256(src.cast()), _mm256_set1_epi8(0x0F));
            let [a, b] = fp4_codes32::<H>(c);
            _mm256_storeu_si256(dst.cast(), a);
            _mm256_storeu_si256(dst.add(32).cast(), b);
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 codes readable at src (MOVQ reads exactly 8 bytes), 8 hub codes (16
        // bytes) writable at dst.
        unsafe {
            let c = _mm_and_si128(_mm_loadl_epi64(src.cast()), _mm_set1_epi8(0x0F));
            let [a, _] = fp4_codes16::<H>(c);
            _mm_storeu_si128(dst.cast(), a);
        }
    }
}

/// Packed FP4 → F16 or BF16, by pairs: each "element" of this step is one packed byte (two
/// values: the low nibble first) and two hub codes (4 bytes).
struct Fp4x2ToHub<H>(PhantomData<H>);

impl<H: Fp4Hub> Steps for Fp4x2ToHub<H> {
    const S: usize = 1;
    const D: usize = 4;
    const BIG: usize = 16;

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn big(src: *const u8, dst: *mut u8) {
        // SAFETY: 16 bytes readable at src, 32 hub codes (64 bytes) writable at dst.
        unsafe {
            let b = _mm_loadu_si128(src.cast());
            let nib = _mm_set1_epi8(0x0F);
            let lo = _mm_and_si128(b, nib);
            let hi = _mm_and_si128(_mm_srli_epi16::<4>(b), nib);
            // Values in order: byte i gives values 2i (low nibble) and 2i + 1 (high).
            let c = _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
            let [x, y] = fp4_codes32::<H>(c);
            _mm256_storeu_si256(dst.cast(), x);
            _mm256_storeu_si256(dst.add(32).cast(), y);
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn small(src: *const u8, dst: *mut u8) {
        // SAFETY: 8 bytes readable at src (MOVQ), 16 hub codes (32 bytes) writable at dst.
        unsafe {
            let b = _mm_loadl_epi64(src.cast());
            let nib = _mm_set1_epi8(0x0F);
            let lo = _mm_and_si128(b, nib);
            let hi = _mm_and_si128(_mm_srli_epi16::<4>(b), nib);
            let [x, y] = fp4_codes16::<H>(_mm_unpacklo_epi8(lo, hi));
            _mm_storeu_si128(dst.cast(), x);
            _mm_storeu_si128(dst.add(16).cast(), y);
        }
    }
}

/// Packed FP4 → `H`: whole bytes by [`Fp4x2ToHub`], then an odd last value (the low nibble
/// of the last byte) from the table.
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel): `len.div_ceil(2)` bytes readable at `src`,
/// `len` hub codes writable at `dst`; AVX2, FMA and F16C present.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn fp4x2_to_hub<H: Fp4Hub>(src: *const u8, dst: *mut u8, len: usize) {
    let pairs = len / 2;
    // SAFETY: `pairs` whole bytes are readable and `2 * pairs` codes writable.
    unsafe { drive::<Fp4x2ToHub<H>>(src, dst, pairs) };
    if len % 2 == 1 {
        // SAFETY: byte `pairs` is the last source byte (len.div_ceil(2) = pairs + 1) and
        // code `len - 1` the last destination code.
        unsafe {
            let b = src.add(pairs).read();
            let h = H::TABLES.full[usize::from(b & 0x0F)];
            dst.add(2 * (len - 1)).cast::<u16>().write_unaligned(h);
        }
    }
}

/// F16 from E5M2FNUZ: every E5M2FNUZ value is an F16 value (its smallest subnormal,
/// 2^-17, is an F16 subnormal; its largest, 57344, is below F16's MAX), and `f16_codes16`
/// of `avx2_small` builds its F16 code in 16-bit lanes (`c << 8` is the code of twice the
/// value: `- 0x400` halves a normal one, `>> 1` a subnormal one). The one NaN, `0x80`,
/// becomes `0xFE00`, the F16 code that widening it to f32 (`0xFFC00000`) and narrowing back
/// under `NanPolicy::Preserve` give. No overflow policy applies.
struct E5m2FnuzToF16;

impl ByteToWord for E5m2FnuzToF16 {
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn codes16(c: __m128i) -> __m256i {
        f16_codes16::<F8E5M2FNUZ>(c)
    }
}

/// E8M0 → BF16, exact: code `c` in 1..=254 is 2^(c - 127), whose BF16 code is `c << 7`
/// (exponent field `c`, fraction 0); code 0 is 2^-127, the BF16 subnormal `0x0040`; code
/// 0xFF is NaN, which widening makes the f32 quiet NaN `0x7FC00000`, so BF16 `0x7FC0`.
/// Both exceptions are `c << 7` with bit 6 set.
struct E8m0ToBf16;

impl ByteToWord for E8m0ToBf16 {
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn codes16(c: __m128i) -> __m256i {
        let w = _mm256_slli_epi16::<7>(_mm256_cvtepu8_epi16(c));
        let special = _mm256_or_si256(
            _mm256_cmpeq_epi16(w, _mm256_setzero_si256()),
            _mm256_cmpeq_epi16(w, _mm256_set1_epi16(0x7F80)),
        );
        _mm256_or_si256(w, _mm256_and_si256(special, _mm256_set1_epi16(0x0040)))
    }
}

/// E8M0 → F16 in one pass, integer only: the two bytes of each F16 code are built as two
/// byte planes, 32 codes at a time, and interleaved into words. Code `c` is 2^(c − 127); its
/// F16 code (rounded to nearest even, which only the underflow needs: 2^-25 and below are
/// +0, the tie at 2^-25 going to the even +0) is
///
/// * `0` for `c <= 102`;
/// * the subnormal `1 << (c − 103)` for `103 <= c <= 112`: low byte `1 << (c − 103)` up
///   to `c = 110`, high byte 1 or 2 for 111 and 112 (one 16-entry `VPSHUFB` table per byte,
///   indexed by `min(c − 103, 15)`: the wrapped differences of `c < 103` and those above 15
///   read entry 15, which is 0);
/// * the normal `(c − 112) << 10` for `113 <= c <= 142`: high byte `(c − 112) << 2`, from
///   the unsigned saturating `c − 112` (0 for every `c <= 112`, so it adds nothing there);
/// * `+Inf` (`0x7C00`) from 2^16 up: `c` is first clamped to 143, whose high byte is
///   `31 << 2 = 0x7C`; `Saturate` makes that MAX (`0x7BFF`: high byte minus one, low byte
///   `0xFF`);
/// * code 0xFF (NaN) is `0x7E00`, the F16 code of the f32 quiet NaN `0x7FC00000` that
///   widening gives.
///
/// Code 0 (2^-127) is `+0` by the first rule.
struct E8m0ToF16<const SAT: bool>;

impl<const SAT: bool> E8m0ToF16<SAT> {
    /// The F16 codes of 32 E8M0 codes `c` (bytes, in order) as two vectors of words in
    /// order: codes 0–15, then 16–31.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn words32(c: __m256i) -> [__m256i; 2] {
        let b = _mm256_set1_epi8;
        // 64-bit groups 0, 2, 1, 3: the in-lane unpacks below then give codes in order.
        let c = _mm256_permute4x64_epi64::<0xD8>(c);
        let cc = _mm256_min_epu8(c, b(143u8 as i8));
        // (cc − 112) << 2 by two byte adds (a byte shift AVX2 does not have).
        let d = _mm256_subs_epu8(cc, b(112));
        let d = _mm256_add_epi8(d, d);
        let hi_normal = _mm256_add_epi8(d, d);
        let idx = _mm256_min_epu8(_mm256_sub_epi8(cc, b(103)), b(15));
        let lo_t = _mm256_setr_epi8(
            1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0, //
            1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0,
        );
        let hi_t = _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, //
            0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0,
        );
        let mut lo = _mm256_shuffle_epi8(lo_t, idx);
        let mut hi = _mm256_or_si256(hi_normal, _mm256_shuffle_epi8(hi_t, idx));
        let nan = _mm256_cmpeq_epi8(c, b(-1));
        if SAT {
            // All-ones (−1) where the value overflowed (NaN lanes are replaced below).
            let inf = _mm256_cmpeq_epi8(cc, b(143u8 as i8));
            hi = _mm256_add_epi8(hi, inf);
            lo = _mm256_andnot_si256(nan, _mm256_or_si256(lo, inf));
        }
        hi = _mm256_blendv_epi8(hi, b(0x7E), nan);
        [_mm256_unpacklo_epi8(lo, hi), _mm256_unpackhi_epi8(lo, hi)]
    }
}

impl<const SAT: bool> ByteToWord for E8m0ToF16<SAT> {
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn codes16(c: __m128i) -> __m256i {
        // Codes 16–31 are zeros, whose words are dropped.
        Self::words32(_mm256_zextsi128_si256(c))[0]
    }

    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn codes32(c: __m256i) -> [__m256i; 2] {
        Self::words32(c)
    }
}

/// A direct kernel whose destination's overflow policy cannot apply (every source value,
/// E4M3 has no infinity, is a destination value).
macro_rules! exact_kernel {
    ($name:ident, $steps:ty) => {
        /// # Safety
        /// See [`RawKernel`](crate::arch::RawKernel).
        unsafe fn $name(src: *const u8, dst: *mut u8, len: usize, _policy: Policy) {
            // SAFETY: the caller passes valid, non-overlapping ranges of `len` elements,
            // and this table belongs to `Backend::Avx2` (or an AVX-512 tier), selected only
            // after AVX2, FMA and F16C were detected.
            unsafe { drive::<$steps>(src, dst, len) }
        }
    };
}

/// A direct kernel that applies the destination's overflow policy.
macro_rules! policy_kernel {
    ($name:ident, $sat:ty, $nonsat:ty) => {
        /// # Safety
        /// See [`RawKernel`](crate::arch::RawKernel).
        unsafe fn $name(src: *const u8, dst: *mut u8, len: usize, policy: Policy) {
            // SAFETY: as for `exact_kernel!`.
            unsafe {
                match policy.overflow {
                    Overflow::Saturate => drive::<$sat>(src, dst, len),
                    Overflow::NonSaturating => drive::<$nonsat>(src, dst, len),
                }
            }
        }
    };
}

policy_kernel!(
    e5m2_to_bf16,
    Direct<F8E5M2, ToBf16<true, true>>,
    Direct<F8E5M2, ToBf16<true, false>>
);
policy_kernel!(e5m2_to_f16, Bytes<E5m2ToF16<true>>, Bytes<E5m2ToF16<false>>);
policy_kernel!(
    f16_to_bf16,
    Direct<F16, ToBf16<false, true>>,
    Direct<F16, ToBf16<false, false>>
);

exact_kernel!(fp4_to_bf16, Fp4ToHub<BF16>);
exact_kernel!(fp4_to_f16, Fp4ToHub<F16>);
exact_kernel!(e8m0_to_bf16, Bytes<E8m0ToBf16>);
policy_kernel!(e8m0_to_f16, Bytes<E8m0ToF16<true>>, Bytes<E8m0ToF16<false>>);
exact_kernel!(e5m2fnuz_to_f16, Bytes<E5m2FnuzToF16>);

/// Packed FP4 → BF16 or F16 (exact; no policy applies).
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
unsafe fn fp4x2_to_bf16(src: *const u8, dst: *mut u8, len: usize, _policy: Policy) {
    // SAFETY: as for `exact_kernel!`.
    unsafe { fp4x2_to_hub::<BF16>(src, dst, len) }
}

/// See [`fp4x2_to_bf16`].
///
/// # Safety
/// See [`RawKernel`](crate::arch::RawKernel).
unsafe fn fp4x2_to_f16(src: *const u8, dst: *mut u8, len: usize, _policy: Policy) {
    // SAFETY: as for `exact_kernel!`.
    unsafe { fp4x2_to_hub::<F16>(src, dst, len) }
}

/// Puts the direct kernels into the AVX2 table `t`.
pub(super) const fn set(t: &mut Kernels) {
    t.set_direct::<F4E2M1, BF16>(fp4_to_bf16);
    t.set_direct::<F4E2M1, F16>(fp4_to_f16);
    t.set_direct::<F4E2M1x2, BF16>(fp4x2_to_bf16);
    t.set_direct::<F4E2M1x2, F16>(fp4x2_to_f16);
    t.set_direct::<F8E8M0, BF16>(e8m0_to_bf16);
    t.set_direct::<F8E8M0, F16>(e8m0_to_f16);
    t.set_direct::<F8E5M2, BF16>(e5m2_to_bf16);
    t.set_direct::<F8E5M2, F16>(e5m2_to_f16);
    t.set_direct::<F8E5M2FNUZ, F16>(e5m2fnuz_to_f16);
    t.set_direct::<F16, BF16>(f16_to_bf16);
}
