//! The public building blocks: `amax`, `amax_blocks` and the scaled conversions
//! `narrow_scaled` / `dequantize_scaled`, on the backend's block kernels where it has them.

use super::dispatch;
use super::spec::DestKind;
use super::spec::kernels::BlockKernels;
use super::spec::{amax_bits, finish_amax, products, wide_fast};
use super::{BlockDest, BlockSource, ScaledCode, expect_len};
use crate::{Backend, Error};

/// Values per chunk of the buffered building blocks (2 KiB of f64 on the stack).
const CHUNK: usize = 256;

/// The largest magnitude in `src` (`|x|` maximum), or NaN if `src` holds a NaN; `0.0` for
/// an empty slice.
///
/// ```
/// use vcvt::BF16;
/// assert_eq!(vcvt::block::amax(&[1.0f32, -7.5, 3.0]), 7.5);
/// assert!(vcvt::block::amax(&[1.0f32, f32::NAN]).is_nan());
/// assert_eq!(vcvt::block::amax(&[BF16::from_f32(-2.0)]), 2.0);
/// ```
pub fn amax<S: BlockSource>(src: &[S]) -> f32 {
    f32::from_bits(amax_with(dispatch::active(), src))
}

/// [`amax`] on the given backend (every backend gives the same result).
///
/// # Errors
/// [`Error::BackendUnavailable`] if this CPU cannot run `backend`.
///
/// ```
/// use vcvt::Backend;
/// assert_eq!(vcvt::block::amax_on(Backend::Scalar, &[-3.0f32, 2.0])?, 3.0);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn amax_on<S: BlockSource>(backend: Backend, src: &[S]) -> Result<f32, Error> {
    let k = dispatch::check_backend(Some(backend))?;
    Ok(f32::from_bits(amax_with(k, src)))
}

/// [`amax`] of each block of `block` consecutive values (the last one may be short) into
/// `out`, which must have `src.len().div_ceil(block)` entries.
///
/// ```
/// let mut m = [0.0f32; 2];
/// vcvt::block::amax_blocks(&[1.0f32, -3.0, 2.0], 2, &mut m)?;
/// assert_eq!(m, [3.0, 2.0]);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn amax_blocks<S: BlockSource>(src: &[S], block: usize, out: &mut [f32]) -> Result<(), Error> {
    if block == 0 {
        return Err(Error::BlockShape {
            rows: 1,
            cols: src.len(),
            reason: "the block size is zero",
        });
    }
    expect_len("out", src.len().div_ceil(block), out.len())?;
    let k = dispatch::active();
    for (o, chunk) in out.iter_mut().zip(src.chunks(block)) {
        *o = f32::from_bits(amax_with(k, chunk));
    }
    Ok(())
}

/// The bits of `max |x|` with the kernel of table `k` when it has one.
fn amax_with<S: BlockSource>(k: &BlockKernels, src: &[S]) -> u32 {
    match k.amax[S::KIND as usize] {
        Some(f) => {
            // SAFETY: `src` holds `src.len()` values of the slot's source type (`S::KIND`
            // indexes the table), aligned as `S`; `k` comes from `check_backend` or
            // `active`, which return a table only if its backend runs on this CPU.
            let m = unsafe { f(src.as_ptr().cast(), src.len()) };
            finish_amax::<S>(m)
        }
        None => amax_bits(src),
    }
}

/// [`products`] with the kernel of table `k` when it has one.
fn products_with(k: &BlockKernels, bits: &[u32], s: f64, out: &mut [f64]) {
    let n = bits.len().min(out.len());
    match k.products {
        // SAFETY: `bits` readable and `out` writable for `n` values, both aligned (slices);
        // `k` comes from `check_backend`, which returns a table only if its backend runs
        // on this CPU.
        Some(f) => unsafe { f(bits.as_ptr(), n, s, out.as_mut_ptr()) },
        None => products(&bits[..n], s, &mut out[..n]),
    }
}

/// Narrows `x · scale` for each value of `src` into `dst`: the exact product rounded
/// **once** to the format (nearest, ties to even), under the format's default overflow
/// policy (saturation for the fp8/fp6/fp4 formats).
///
/// The product of two f32 values is computed exactly (in f64), so there is one rounding
/// for every `scale`, not only for powers of two. When `scale` is a power of two and the
/// product is a normal f32, this equals multiplying in f32 and then narrowing, which is
/// what torchao and Triton do. NaN: a NaN `x` (else a NaN `scale`) gives the format's NaN
/// with that NaN's sign, and `0 · ∞` a positive NaN (saturating formats without NaN codes
/// follow their NaN policy, [`NanPolicy::Preserve`](crate::NanPolicy::Preserve)).
///
/// With a positive power-of-two `scale` the product is formed exactly on the f32 bits and
/// narrowed in one pass by the backend's block kernel; with another normal scale up to
/// `2^100` in magnitude, on a backend with a fused multiply-add (AVX2, AVX-512, NEON), the
/// product is rounded to odd in f32 and narrowed in one pass, which gives the same code;
/// otherwise the products are formed in chunks in f64 and narrowed by the backend's f64
/// kernels.
///
/// ```
/// use vcvt::F4E2M1;
/// let mut q = [F4E2M1::ZERO; 3];
/// vcvt::block::narrow_scaled(&[10.0f32, -2.5, 100.0], 0.25, &mut q)?;
/// // 2.5 is a tie between 2 and 3 (to even: 2); -0.625 is nearest to -0.5; 25 saturates.
/// assert_eq!(q.map(|c| c.to_f32()), [2.0, -0.5, 6.0]);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn narrow_scaled<S: BlockSource, D: ScaledCode>(
    src: &[S],
    scale: f32,
    dst: &mut [D],
) -> Result<(), Error> {
    narrow_scaled_with(Backend::active(), src, scale, dst)
}

/// [`narrow_scaled`] on the given backend (every backend gives the same bits).
///
/// # Errors
/// [`Error::BackendUnavailable`] if this CPU cannot run `backend`, [`Error::BlockLength`]
/// if the lengths differ.
///
/// ```
/// use vcvt::{Backend, F8E4M3};
/// let mut q = [F8E4M3::ZERO; 2];
/// vcvt::block::narrow_scaled_on(Backend::Scalar, &[3.0f32, -1.0], 0.5, &mut q)?;
/// assert_eq!(q.map(|c| c.to_f32()), [1.5, -0.5]);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn narrow_scaled_on<S: BlockSource, D: ScaledCode>(
    backend: Backend,
    src: &[S],
    scale: f32,
    dst: &mut [D],
) -> Result<(), Error> {
    dispatch::check_backend(Some(backend))?;
    narrow_scaled_with(backend, src, scale, dst)
}

fn narrow_scaled_with<S: BlockSource, D: ScaledCode>(
    backend: Backend,
    src: &[S],
    scale: f32,
    dst: &mut [D],
) -> Result<(), Error> {
    expect_len("dst", src.len(), dst.len())?;
    let k = dispatch::check_backend(Some(backend))?;
    let sb = scale.to_bits();
    // A positive normal power of two, or where the backend's slots take them any normal
    // scale up to 2^100 in magnitude: the fused f32 path, where the backend has one.
    let pow2 = sb & 0x807F_FFFF == 0 && (0x0080_0000..0x7F80_0000).contains(&sb);
    let any = k.narrow_any && (0x0080_0000..=0x7180_0000).contains(&(sb & 0x7FFF_FFFF));
    if pow2 || any {
        let slot = k.narrow_scaled[S::KIND as usize]
            .get(D::FUSED)
            .copied()
            .flatten();
        if let Some(f) = slot {
            // SAFETY: `src` and `dst` hold `src.len()` values of the slot's types (`S::KIND`
            // and `D::FUSED` index the table); `sb` is a positive normal power of two, or a
            // normal scale up to 2^100 where the table says its slots take one, the slot's
            // condition; `check_backend` returned this table only if its backend runs here.
            unsafe { f(src.as_ptr().cast(), src.len(), sb, dst.as_mut_ptr().cast()) };
            return Ok(());
        }
    }
    let s = wide_fast(sb);
    let mut bits = [0u32; CHUNK];
    let mut buf = [0f64; CHUNK];
    for (d, x) in dst.chunks_mut(CHUNK).zip(src.chunks(CHUNK)) {
        let n = x.len();
        S::f32_bits_of(backend, x, &mut bits[..n]);
        products_with(k, &bits[..n], s, &mut buf[..n]);
        D::narrow_f64s(backend, &buf[..n], d);
    }
    Ok(())
}

/// Writes `decode(code) · scale` for each code of `src` into `dst`: the exact product
/// rounded once to the destination (nearest, ties to even, overflow to ±Inf). A NaN code
/// (else a NaN `scale`) gives NaN with its sign; `0 · Inf` gives `+NaN`.
///
/// Into f32, for a normal `scale` under which no product of a non-zero code falls below
/// 2^-126 in magnitude (every format but [`F8E8M0`](crate::F8E8M0)), the backend's SIMD
/// widening runs on chunks of the codes and one f32 multiplication per value, rounded to
/// nearest, follows on each chunk while it is in the L1 cache: that product is the exact
/// one rounded once. Into BF16 and F16, when every product of a code and `scale` is an
/// exact normal f32 (a power-of-two scale in the format's range, or any scale with few
/// enough significant bits), the backend's block kernel computes it in f32 in one pass.
/// Under other scales, on backends with a fused multiply-add and for calls shorter than four
/// times the format's number of codes, the codes are widened by the backend's SIMD kernel
/// and each product is rounded to odd in f32, then once to the destination (which gives the
/// exact product's rounding). Otherwise (and for F8E8M0) the codes are widened and the
/// exact f64 products narrowed by the backend's kernels: for a call of at least as many
/// values as the format has codes (and at least 64), once for each code of the format, into
/// a table that the call then reads each value from; for a shorter call, value by value in
/// chunks.
///
/// ```
/// use vcvt::{BF16, F8E4M3};
/// let codes = [F8E4M3::from_f32(1.5), F8E4M3::from_f32(-448.0)];
/// let mut out = [BF16::ZERO; 2];
/// vcvt::block::dequantize_scaled(&codes, 0.5, &mut out)?;
/// assert_eq!(out.map(|x| x.to_f32()), [0.75, -224.0]);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn dequantize_scaled<S: ScaledCode, D: BlockDest>(
    src: &[S],
    scale: f32,
    dst: &mut [D],
) -> Result<(), Error> {
    dequantize_scaled_with(Backend::active(), src, scale, dst)
}

/// [`dequantize_scaled`] on the given backend (every backend gives the same bits).
///
/// # Errors
/// [`Error::BackendUnavailable`] if this CPU cannot run `backend`, [`Error::BlockLength`]
/// if the lengths differ.
///
/// ```
/// use vcvt::{Backend, F8E5M2};
/// let mut out = [0f32; 1];
/// vcvt::block::dequantize_scaled_on(Backend::Scalar, &[F8E5M2::from_f32(3.0)], 0.25, &mut out)?;
/// assert_eq!(out, [0.75]);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn dequantize_scaled_on<S: ScaledCode, D: BlockDest>(
    backend: Backend,
    src: &[S],
    scale: f32,
    dst: &mut [D],
) -> Result<(), Error> {
    dispatch::check_backend(Some(backend))?;
    dequantize_scaled_with(backend, src, scale, dst)
}

fn dequantize_scaled_with<S: ScaledCode, D: BlockDest>(
    backend: Backend,
    src: &[S],
    scale: f32,
    dst: &mut [D],
) -> Result<(), Error> {
    expect_len("dst", src.len(), dst.len())?;
    let k = dispatch::check_backend(Some(backend))?;
    let sb = scale.to_bits();
    // Into f32 under a scale for which FTZ and DAZ cannot matter: the backend's widening,
    // then one product pass over each chunk while it is in L1.
    if let Some(f) = k.scale_f32
        && let Some(out) = D::f32s_mut(dst)
        && S::f32_scale(sb)
    {
        for (d, c) in out.chunks_mut(WIDEN_CHUNK).zip(src.chunks(WIDEN_CHUNK)) {
            S::widen_f32s(backend, c, d);
            // SAFETY: `d` holds `d.len()` f32 values (aligned, a slice of f32), written by
            // the widening; `f32_scale` is the slot's condition on `sb` and the widened
            // values; `check_backend` returned this table only if its backend runs here.
            unsafe { f(d.as_mut_ptr().cast(), d.len(), sb) };
        }
        return Ok(());
    }
    // A scale whose every product is an exact normal f32: the fused f32 path.
    let slot = k
        .dequantize_scaled
        .get(S::FUSED)
        .and_then(|r| r[D::KIND as usize]);
    let codes = usize::from(S::CODE_MASK) + 1;
    let table = src.len() >= codes.max(TABLE_MIN);
    let table_first =
        table && D::KIND != DestKind::F32 && k.table_first.get(S::FUSED).copied().unwrap_or(false);
    let exact = slot.is_some() && S::exact_scale(sb);
    if let Some(f) = slot
        && exact
        && !table_first
    {
        // SAFETY: `src` and `dst` hold `src.len()` values of the slot's types (`S::FUSED`
        // and `D::KIND` index the table); `exact_scale` is the slot's condition;
        // `check_backend` returned this table only if its backend runs here.
        unsafe { f(src.as_ptr().cast(), src.len(), sb, dst.as_mut_ptr().cast()) };
        return Ok(());
    }
    // Into BF16/F16 under any other scale where the backend rounds products to odd, up to
    // the length where the table gains: its widening, then the products rounded to odd and
    // once more to `D`.
    if !exact
        && src.len() < (ODD_CODES * codes).max(ODD_MIN)
        && let Some(f) = k.dequantize_odd[D::KIND as usize]
        && S::odd_scale(sb)
    {
        let mut wide = [0f32; CHUNK];
        for (d, c) in dst.chunks_mut(CHUNK).zip(src.chunks(CHUNK)) {
            let n = c.len();
            S::widen_f32s(backend, c, &mut wide[..n]);
            // SAFETY: `wide` holds the `n` widened codes and `d` has room for `n` values of
            // `D` (`D::KIND` indexes the slot's type); `odd_scale` is the slot's condition
            // on `sb` and the widened values, whose NaNs have their low 16 bits zero (at
            // most 4 payload bits, at the top); `check_backend` returned this table only if
            // its backend runs here.
            unsafe { f(wide.as_ptr().cast(), n, sb, d.as_mut_ptr().cast()) };
        }
        return Ok(());
    }
    let s = wide_fast(sb);
    if table {
        by_table(backend, k, src, s, dst);
    } else {
        two_step(backend, k, src, s, dst);
    }
    Ok(())
}

/// Values per widening call of `dequantize_scaled` into f32: 4 KiB of f32, so the product
/// pass reads what the widening just wrote from L1d. (On the Intel VM, `avx512-fp16`, 1024
/// measured a little faster than 4096: `cargo bench --bench block -- scaled_formats_f32`.)
const WIDEN_CHUNK: usize = 1024;

/// Where the backend rounds products to odd, `dequantize_scaled` into BF16/F16 takes that
/// route for calls shorter than `ODD_CODES` times the format's number of codes (and than
/// `ODD_MIN`), the table from there on. On the Intel VM, `avx512-fp16`, the odd route ran
/// at about 5 el/ns for every format on long calls and the table at 12–14.5 once built, its
/// build costing about 250 ns for an eight-bit format and 100 ns for F4E2M1, so the two
/// meet near 2000 and 500 values; on `avx2` the odd route ran at 1.6–2.1 el/ns against the
/// table's 4.2–23, which moves the meeting points down (docs/performance.md,
/// "`dequantize_scaled` into BF16 and F16 by the products rounded to odd").
const ODD_CODES: usize = 4;
/// See [`ODD_CODES`].
const ODD_MIN: usize = 256;

/// The shortest call that `dequantize_scaled` runs through a table when the fused slot does
/// not serve it, the format's number of codes if that is more. Building the table costs
/// the two-step route on every code of the format (plus a few fixed costs), so the table
/// gains from about as many codes as it has: on the Intel VM, `avx512-fp16`, F8E4M3 → BF16
/// took 241 ns for 255 values by two steps and 254 ns for 256 by the table, F4E2M1 104 ns
/// for 63 and 89 ns for 64 (`cargo bench --bench block -- scaled_short`; docs/performance.md,
/// "`dequantize_scaled` with any scale").
const TABLE_MIN: usize = 64;

/// `dequantize_scaled` by a table: the two-step route converts every code of the format
/// once under the call's scale, which gives each code's result (one scale per call), and
/// the backend's lookup kernel (else a loop) reads each code's result from it. The table's
/// entries are the two-step route's own results, so the bits are the same.
fn by_table<S: ScaledCode, D: BlockDest>(
    backend: Backend,
    k: &BlockKernels,
    src: &[S],
    s: f64,
    dst: &mut [D],
) {
    let mask = S::CODE_MASK;
    let codes = usize::from(mask) + 1;
    let mut all = [S::from_byte(0); 256];
    for (i, c) in all.iter_mut().enumerate().take(codes) {
        *c = S::from_byte(i as u8);
    }
    let mut table = [D::from_raw(0); 256];
    two_step(backend, k, &all[..codes], s, &mut table[..codes]);
    // The codec reads no bit above the format's width (`CODE_MASK`), so a byte with such
    // bits set converts as the same byte with them clear.
    let mut have = codes;
    while have < 256 {
        table.copy_within(..have, have);
        have *= 2;
    }
    match k.lookup[D::KIND as usize] {
        // SAFETY: `table` holds 256 values of `D` (`D::KIND` indexes the slot's type); `src`
        // holds `src.len()` one-byte codes and `dst` as many values (checked by the caller),
        // `table` and `dst` aligned (an array and a slice of `D`), `dst` a distinct `&mut`;
        // `k` comes from `check_backend`, which returns a table only if its backend runs on
        // this CPU.
        Some(f) => unsafe {
            f(
                table.as_ptr().cast(),
                src.as_ptr().cast(),
                src.len(),
                dst.as_mut_ptr().cast(),
            )
        },
        None => {
            for (d, &c) in dst.iter_mut().zip(src) {
                *d = table[usize::from(S::byte(c))];
            }
        }
    }
}

/// `dequantize_scaled` in two steps, in chunks: the codes widened to f32 by the backend's
/// kernels, the exact f64 products, narrowed once by the backend's f64 kernels.
fn two_step<S: ScaledCode, D: BlockDest>(
    backend: Backend,
    k: &BlockKernels,
    src: &[S],
    s: f64,
    dst: &mut [D],
) {
    let mut wide = [0f32; CHUNK];
    let mut bits = [0u32; CHUNK];
    let mut buf = [0f64; CHUNK];
    for (d, c) in dst.chunks_mut(CHUNK).zip(src.chunks(CHUNK)) {
        let n = c.len();
        S::widen_f32s(backend, c, &mut wide[..n]);
        for (b, w) in bits.iter_mut().zip(&wide[..n]) {
            *b = w.to_bits();
        }
        products_with(k, &bits[..n], s, &mut buf[..n]);
        D::from_f64s(backend, &buf[..n], d);
    }
}
