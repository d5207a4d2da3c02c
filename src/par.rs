//! Parallel entry points (feature `rayon`): the slice, byte and uninit conversions split
//! into fixed-length chunks that run on the caller's rayon pool.
//!
//! Nothing in vcvt is parallel unless a `par_*` function is called: a loader that already
//! runs inside rayon keeps control of its threads. Each `par_*` function gives exactly the
//! bits of its serial counterpart (the conversions are element by element, so where a
//! chunk ends cannot change a result), and:
//!
//! * the chunks are [`PAR_CHUNK`] values long, whatever the number of threads, so a run is
//!   reproducible and its work items are the same on 2 cores and on 200;
//! * chunk edges fall on 64-byte boundaries of the destination's memory (the first chunk is
//!   shortened to reach one), so no two threads write the same cache line (for a packed FP4
//!   source the edge is moved to the next even value, which may leave it a few bytes off);
//! * below [`PAR_MIN_VALUES`] values the call runs serially on the calling thread (see
//!   its docs for how it was chosen);
//! * a conversion larger than the streaming threshold (`VCVT_STREAM_MIN_BYTES`, see the
//!   crate docs) streams each chunk's destination, as its serial counterpart would stream
//!   the whole;
//! * work runs in the current rayon pool ([`rayon::ThreadPool::install`] picks the pool; by
//!   default the global one).
//!
//! The block types have the same entry points as methods: [`Mx::par_dequantize`] and
//! friends (see [`crate::block`]).
//!
//! [`Mx::par_dequantize`]: crate::block::Mx::par_dequantize
//!
//! ```
//! use vcvt::BF16;
//!
//! let src: Vec<f64> = (0..1_000_000).map(|i| i as f64 * 0.001).collect();
//! let mut dst = vec![BF16::ZERO; src.len()];
//! vcvt::par_convert_slice(&src, &mut dst);
//!
//! let mut serial = vec![BF16::ZERO; src.len()];
//! vcvt::convert_slice(&src, &mut serial);
//! assert_eq!(dst, serial);
//! ```

use core::mem::MaybeUninit;
use core::ops::Range;

use rayon::prelude::*;
use std::vec::Vec;

use crate::{ConvertTo, Element, Error, Options};

/// Values per chunk of a parallel slice conversion (a multiple of 64, so every chunk after
/// the first starts on a 64-byte boundary of the destination when the first one does).
/// The block conversions use the same number of values per work item, rounded to whole
/// blocks or rows.
pub const PAR_CHUNK: usize = 1 << 16;

/// Below this many values the `par_*` entry points run serially on the calling thread.
///
/// 256 Ki values (four work items of [`PAR_CHUNK`]), from
/// `cargo bench --features rayon --bench par` (serial call against the same fixed-chunk
/// split without a threshold) on a shared 2-core x86-64 VM: the split began to win between
/// 128 Ki and 1 Mi values depending on the pair (f64 → BF16 from 128–256 Ki, f32 → MXFP4
/// from 512 Ki, f32 → BF16 at 1 Mi), with run-to-run noise from other jobs on the machine
/// (`benches/RESULTS.md` has the tables).
pub const PAR_MIN_VALUES: usize = 1 << 18;

/// The ranges of values `[lo, hi)` of the chunks of an `n`-value conversion whose
/// destination starts at address `dst_addr`, or `None` to run serially.
fn value_chunks<S: ConvertTo<D>, D: Element>(
    n: usize,
    dst_addr: usize,
) -> Option<Vec<Range<usize>>> {
    if n < PAR_MIN_VALUES {
        return None;
    }
    let pair = S::PAIR;
    let misalign = dst_addr % 64;
    let head_bytes = (64 - misalign) % 64;
    let mut head = if pair.packed && pair.packed_dst {
        2 * head_bytes
    } else {
        head_bytes.div_ceil(size_of::<D>())
    };
    if pair.packed && !pair.packed_dst {
        // A packed source splits only between bytes.
        head += head % 2;
    }
    let mut out = Vec::with_capacity(n / PAR_CHUNK + 2);
    let mut lo = 0;
    if head > 0 && head < n {
        out.push(0..head);
        lo = head;
    }
    while lo < n {
        let hi = (lo + PAR_CHUNK).min(n);
        out.push(lo..hi);
        lo = hi;
    }
    if out.len() < 2 { None } else { Some(out) }
}

/// Where value `v` of `n` starts in the source (in `S` elements, `src_len` of them).
fn src_at<S: ConvertTo<D>, D: Element>(v: usize, n: usize, src_len: usize) -> usize {
    let pair = S::PAIR;
    if v == n {
        src_len
    } else if pair.packed && !pair.packed_dst {
        v / 2
    } else {
        v
    }
}

/// Where value `v` of `n` starts in the destination (in `D` elements, `dst_len` of them).
fn dst_at<S: ConvertTo<D>, D: Element>(v: usize, n: usize, dst_len: usize) -> usize {
    let pair = S::PAIR;
    if v == n {
        dst_len
    } else if pair.packed && pair.packed_dst {
        v / 2
    } else {
        v
    }
}

/// Splits `buf` into the consecutive, increasing, non-overlapping `ranges` (gaps between
/// them are skipped).
pub(crate) fn split_ranges<T>(
    mut buf: &mut [T],
    ranges: impl Iterator<Item = Range<usize>>,
) -> Vec<&mut [T]> {
    let mut out = Vec::new();
    let mut at = 0;
    for r in ranges {
        let rest = core::mem::take(&mut buf);
        let (_, rest) = rest.split_at_mut(r.start - at);
        let (piece, rest) = rest.split_at_mut(r.end - r.start);
        out.push(piece);
        buf = rest;
        at = r.end;
    }
    out
}

/// The number of values an `S` → `D` conversion of `src` elements into `dst` elements
/// converts, or `None` if the lengths do not match.
fn checked_values<S: ConvertTo<D>, D: Element>(src: usize, dst: usize) -> Option<usize> {
    crate::slice::values::<S, D>(src, dst).ok()
}

/// [`convert_slice`](crate::convert_slice) on the current rayon pool.
///
/// # Panics
/// As [`convert_slice`](crate::convert_slice).
///
/// ```
/// let src = vec![1.5f32; 300_000];
/// let mut dst = vec![vcvt::F16::ZERO; 300_000];
/// vcvt::par_convert_slice(&src, &mut dst);
/// assert_eq!(dst[299_999].to_f32(), 1.5);
/// ```
pub fn par_convert_slice<S: ConvertTo<D>, D: Element>(src: &[S], dst: &mut [D]) {
    par_convert_slice_with(src, dst, Options::new())
}

/// [`convert_slice_with`](crate::convert_slice_with) on the current rayon pool.
///
/// # Panics
/// As [`convert_slice_with`](crate::convert_slice_with).
///
/// ```
/// use vcvt::{F8E4M3, Options, Overflow};
/// let src = vec![1000.0f32; 300_000];
/// let mut dst = vec![F8E4M3::ZERO; 300_000];
/// vcvt::par_convert_slice_with(&src, &mut dst, Options::new().overflow(Overflow::NonSaturating));
/// assert!(dst[0].is_nan());
/// ```
pub fn par_convert_slice_with<S: ConvertTo<D>, D: Element>(
    src: &[S],
    dst: &mut [D],
    options: Options,
) {
    let chunks = checked_values::<S, D>(src.len(), dst.len())
        .and_then(|n| Some((n, value_chunks::<S, D>(n, dst.as_ptr() as usize)?)));
    let Some((n, chunks)) = chunks else {
        return crate::convert_slice_with(src, dst, options);
    };
    let dst_len = dst.len();
    let dsts = split_ranges(
        dst,
        chunks
            .iter()
            .map(|c| dst_at::<S, D>(c.start, n, dst_len)..dst_at::<S, D>(c.end, n, dst_len)),
    );
    let part = options.part_of(n);
    chunks.into_par_iter().zip(dsts).for_each(|(c, d)| {
        let s = &src[src_at::<S, D>(c.start, n, src.len())..src_at::<S, D>(c.end, n, src.len())];
        crate::convert_slice_with(s, d, part);
    });
}

/// [`convert_slice_uninit`](crate::convert_slice_uninit) on the current rayon pool.
///
/// # Panics
/// As [`convert_slice_uninit`](crate::convert_slice_uninit).
///
/// ```
/// use vcvt::BF16;
/// let src = vec![2.0f32; 300_000];
/// let mut v: Vec<BF16> = Vec::with_capacity(src.len());
/// let out = vcvt::par_convert_slice_uninit(&src, &mut v.spare_capacity_mut()[..src.len()]);
/// assert_eq!(out[0].to_f32(), 2.0);
/// ```
pub fn par_convert_slice_uninit<'d, S: ConvertTo<D>, D: Element>(
    src: &[S],
    dst: &'d mut [MaybeUninit<D>],
) -> &'d mut [D] {
    par_convert_slice_uninit_with(src, dst, Options::new())
}

/// [`convert_slice_uninit_with`](crate::convert_slice_uninit_with) on the current rayon pool.
///
/// # Panics
/// As [`convert_slice_uninit_with`](crate::convert_slice_uninit_with).
///
/// ```
/// use vcvt::{F16, Options};
/// let src = vec![3.0f64; 300_000];
/// let mut v: Vec<F16> = Vec::with_capacity(src.len());
/// let out = vcvt::par_convert_slice_uninit_with(
///     &src,
///     &mut v.spare_capacity_mut()[..src.len()],
///     Options::new(),
/// );
/// assert_eq!(out[299_999].to_f32(), 3.0);
/// ```
pub fn par_convert_slice_uninit_with<'d, S: ConvertTo<D>, D: Element>(
    src: &[S],
    dst: &'d mut [MaybeUninit<D>],
    options: Options,
) -> &'d mut [D] {
    let chunks = checked_values::<S, D>(src.len(), dst.len())
        .and_then(|n| Some((n, value_chunks::<S, D>(n, dst.as_ptr() as usize)?)));
    let Some((n, chunks)) = chunks else {
        return crate::convert_slice_uninit_with(src, dst, options);
    };
    let dst_len = dst.len();
    let ptr = dst.as_mut_ptr().cast::<D>();
    {
        let dsts = split_ranges(
            &mut *dst,
            chunks
                .iter()
                .map(|c| dst_at::<S, D>(c.start, n, dst_len)..dst_at::<S, D>(c.end, n, dst_len)),
        );
        let part = options.part_of(n);
        chunks.into_par_iter().zip(dsts).for_each(|(c, d)| {
            let s =
                &src[src_at::<S, D>(c.start, n, src.len())..src_at::<S, D>(c.end, n, src.len())];
            crate::convert_slice_uninit_with(s, d, part);
        });
    }
    // SAFETY: the chunks cover `0..dst_len` without gaps (`value_chunks` runs from 0 to `n`
    // and `dst_at` maps `n` to `dst_len`), and each chunk's `convert_slice_uninit_with`
    // initialised all of its elements; the pointer and lifetime come from `dst`, which
    // stays mutably borrowed for 'd.
    unsafe { core::slice::from_raw_parts_mut(ptr, dst_len) }
}

/// [`convert_from_bytes`](crate::convert_from_bytes) on the current rayon pool.
///
/// # Errors
/// As [`convert_from_bytes`](crate::convert_from_bytes); nothing is written then.
///
/// ```
/// let bytes: Vec<u8> = [0x80u8, 0x3F].repeat(300_000); // bf16 1.0
/// let mut out = vec![0.0f32; 300_000];
/// vcvt::par_convert_from_bytes::<vcvt::BF16, f32>(&bytes, &mut out)?;
/// assert!(out.iter().all(|&x| x == 1.0));
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn par_convert_from_bytes<S: ConvertTo<D>, D: Element>(
    bytes: &[u8],
    dst: &mut [D],
) -> Result<(), Error> {
    par_convert_from_bytes_with::<S, D>(bytes, dst, Options::new())
}

/// [`convert_from_bytes_with`](crate::convert_from_bytes_with) on the current rayon pool.
///
/// # Errors
/// As [`convert_from_bytes_with`](crate::convert_from_bytes_with).
///
/// ```
/// let bytes = vec![0u8; 600_000]; // f16 zeros
/// let mut out = vec![1.0f64; 300_000];
/// vcvt::par_convert_from_bytes_with::<vcvt::F16, f64>(&bytes, &mut out, vcvt::Options::new())?;
/// assert!(out.iter().all(|&x| x == 0.0));
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn par_convert_from_bytes_with<S: ConvertTo<D>, D: Element>(
    bytes: &[u8],
    dst: &mut [D],
    options: Options,
) -> Result<(), Error> {
    let src_len = bytes.len() / size_of::<S>();
    let chunks = bytes
        .len()
        .is_multiple_of(size_of::<S>())
        .then(|| checked_values::<S, D>(src_len, dst.len()))
        .flatten()
        .and_then(|n| Some((n, value_chunks::<S, D>(n, dst.as_ptr() as usize)?)));
    let Some((n, chunks)) = chunks else {
        return crate::convert_from_bytes_with::<S, D>(bytes, dst, options);
    };
    let dst_len = dst.len();
    let dsts = split_ranges(
        dst,
        chunks
            .iter()
            .map(|c| dst_at::<S, D>(c.start, n, dst_len)..dst_at::<S, D>(c.end, n, dst_len)),
    );
    let es = size_of::<S>();
    let part = options.part_of(n);
    chunks.into_par_iter().zip(dsts).try_for_each(|(c, d)| {
        let s = &bytes
            [es * src_at::<S, D>(c.start, n, src_len)..es * src_at::<S, D>(c.end, n, src_len)];
        crate::convert_from_bytes_with::<S, D>(s, d, part)
    })
}

/// [`convert_from_bytes_uninit`](crate::convert_from_bytes_uninit) on the current rayon pool.
///
/// # Errors
/// As [`convert_from_bytes`](crate::convert_from_bytes); nothing is written then.
///
/// ```
/// let bytes = vec![0x3Cu8; 300_000]; // E4M3 1.5
/// let mut v: Vec<vcvt::BF16> = Vec::with_capacity(300_000);
/// let out = vcvt::par_convert_from_bytes_uninit::<vcvt::F8E4M3, vcvt::BF16>(
///     &bytes,
///     &mut v.spare_capacity_mut()[..300_000],
/// )?;
/// assert_eq!(out[0].to_f32(), 1.5);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn par_convert_from_bytes_uninit<'d, S: ConvertTo<D>, D: Element>(
    bytes: &[u8],
    dst: &'d mut [MaybeUninit<D>],
) -> Result<&'d mut [D], Error> {
    par_convert_from_bytes_uninit_with::<S, D>(bytes, dst, Options::new())
}

/// [`convert_from_bytes_uninit_with`](crate::convert_from_bytes_uninit_with) on the
/// current rayon pool.
///
/// # Errors
/// As [`convert_from_bytes`](crate::convert_from_bytes).
///
/// ```
/// let bytes = vec![0u8; 300_000];
/// let mut out = vec![core::mem::MaybeUninit::uninit(); 300_000];
/// let out = vcvt::par_convert_from_bytes_uninit_with::<vcvt::F8E5M2, f32>(
///     &bytes,
///     &mut out,
///     vcvt::Options::new(),
/// )?;
/// assert_eq!(out[0], 0.0);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn par_convert_from_bytes_uninit_with<'d, S: ConvertTo<D>, D: Element>(
    bytes: &[u8],
    dst: &'d mut [MaybeUninit<D>],
    options: Options,
) -> Result<&'d mut [D], Error> {
    let src_len = bytes.len() / size_of::<S>();
    let chunks = bytes
        .len()
        .is_multiple_of(size_of::<S>())
        .then(|| checked_values::<S, D>(src_len, dst.len()))
        .flatten()
        .and_then(|n| Some((n, value_chunks::<S, D>(n, dst.as_ptr() as usize)?)));
    let Some((n, chunks)) = chunks else {
        return crate::convert_from_bytes_uninit_with::<S, D>(bytes, dst, options);
    };
    let dst_len = dst.len();
    let ptr = dst.as_mut_ptr().cast::<D>();
    {
        let dsts = split_ranges(
            &mut *dst,
            chunks
                .iter()
                .map(|c| dst_at::<S, D>(c.start, n, dst_len)..dst_at::<S, D>(c.end, n, dst_len)),
        );
        let es = size_of::<S>();
        let part = options.part_of(n);
        chunks.into_par_iter().zip(dsts).try_for_each(|(c, d)| {
            let s = &bytes
                [es * src_at::<S, D>(c.start, n, src_len)..es * src_at::<S, D>(c.end, n, src_len)];
            crate::convert_from_bytes_uninit_with::<S, D>(s, d, part).map(|_| ())
        })?;
    }
    // SAFETY: the chunks cover `0..dst_len` without gaps, and each chunk's conversion
    // succeeded (the lengths were checked before), initialising all of its elements; the
    // pointer and lifetime come from `dst`, which stays mutably borrowed for 'd.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, dst_len) })
}

/// [`convert_to_bytes`](crate::convert_to_bytes) on the current rayon pool.
///
/// # Errors
/// As [`convert_to_bytes`](crate::convert_to_bytes); nothing is written then.
///
/// ```
/// let src = vec![1.0f32; 300_000];
/// let mut bytes = vec![0u8; 600_000];
/// vcvt::par_convert_to_bytes::<f32, vcvt::BF16>(&src, &mut bytes)?;
/// assert_eq!(&bytes[..2], &[0x80, 0x3F]);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn par_convert_to_bytes<S: ConvertTo<D>, D: Element>(
    src: &[S],
    bytes: &mut [u8],
) -> Result<(), Error> {
    par_convert_to_bytes_with::<S, D>(src, bytes, Options::new())
}

/// [`convert_to_bytes_with`](crate::convert_to_bytes_with) on the current rayon pool.
///
/// # Errors
/// As [`convert_to_bytes_with`](crate::convert_to_bytes_with).
///
/// ```
/// let src = vec![-2.0f64; 300_000];
/// let mut bytes = vec![0u8; 300_000];
/// vcvt::par_convert_to_bytes_with::<f64, vcvt::F8E4M3>(&src, &mut bytes, vcvt::Options::new())?;
/// assert_eq!(bytes[0], 0xC0);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn par_convert_to_bytes_with<S: ConvertTo<D>, D: Element>(
    src: &[S],
    bytes: &mut [u8],
    options: Options,
) -> Result<(), Error> {
    let ds = size_of::<D>();
    let dst_len = bytes.len() / ds;
    let chunks = bytes
        .len()
        .is_multiple_of(ds)
        .then(|| checked_values::<S, D>(src.len(), dst_len))
        .flatten()
        .and_then(|n| Some((n, value_chunks::<S, D>(n, bytes.as_ptr() as usize)?)));
    let Some((n, chunks)) = chunks else {
        return crate::convert_to_bytes_with::<S, D>(src, bytes, options);
    };
    let dsts = split_ranges(
        bytes,
        chunks.iter().map(|c| {
            ds * dst_at::<S, D>(c.start, n, dst_len)..ds * dst_at::<S, D>(c.end, n, dst_len)
        }),
    );
    let part = options.part_of(n);
    chunks.into_par_iter().zip(dsts).try_for_each(|(c, d)| {
        let s = &src[src_at::<S, D>(c.start, n, src.len())..src_at::<S, D>(c.end, n, src.len())];
        crate::convert_to_bytes_with::<S, D>(s, d, part)
    })
}

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    use super::*;
    use crate::{BF16, F4E2M1x2};

    /// Every chunk after the first starts on a 64-byte boundary of the destination, every
    /// chunk but the first and last has `PAR_CHUNK` values, and the chunks cover `0..n`.
    pub fn chunk_edges() {
        let n = PAR_MIN_VALUES + 3 * PAR_CHUNK + 5;
        for addr in (0x1000..0x1040).step_by(2) {
            let c = value_chunks::<f32, BF16>(n, addr).unwrap();
            assert_eq!(c.first().unwrap().start, 0);
            assert_eq!(c.last().unwrap().end, n);
            for w in c.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert_eq!((addr + 2 * w[1].start) % 64, 0, "address {addr:#x}");
            }
            for r in &c[1..c.len() - 1] {
                assert_eq!(r.len(), PAR_CHUNK);
            }
        }
        // Packed destination: two values per byte, edges on even values.
        for addr in 0x2000..0x2040 {
            let c = value_chunks::<f32, F4E2M1x2>(n, addr).unwrap();
            for r in &c[1..] {
                assert_eq!(r.start % 2, 0);
                assert_eq!((addr + r.start / 2) % 64, 0);
            }
        }
        // Packed source: edges on even values.
        for addr in (0x3000..0x3040).step_by(4) {
            let c = value_chunks::<F4E2M1x2, f32>(n, addr).unwrap();
            assert!(c.iter().all(|r| r.start % 2 == 0));
        }
        assert!(value_chunks::<f32, BF16>(PAR_MIN_VALUES - 1, 0).is_none());
    }
}
