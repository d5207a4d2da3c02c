//! Streaming stores for conversions larger than the cache.
//!
//! A widening to f32 or f64 whose source and destination together are larger than the
//! last-level cache gains nothing from keeping its destination in the cache, and pays for
//! it: an ordinary
//! store first reads the line it writes (the read-for-ownership), so a widening that writes
//! four bytes per byte it reads moves almost twice the bytes a copy of the same size moves.
//! `memcpy` avoids that with non-temporal stores, which write whole lines to memory without
//! reading them. This module does the same for every conversion, whatever kernel serves it:
//!
//! 1. the route (a table kernel, a direct narrow → narrow kernel, the NaN patch, the two
//!    halves through f32) converts [`BUF`] bytes of destination at a time into a buffer on
//!    the stack, which stays in the L1 cache;
//! 2. [`nt_copy`] moves the buffer to the destination with non-temporal stores of whole
//!    64-byte lines (ordinary stores for the parts of lines at either end);
//! 3. one store fence at the end orders the streamed lines before whatever the caller does
//!    next (non-temporal stores are weakly ordered).
//!
//! So the kernels stay one system, written once, and every pair on every x86-64 tier
//! streams: the buffer's extra L1 write and read cost far less than the memory traffic they
//! save. The bits are those of the kernel (the buffer holds its output unchanged), which
//! `tests/tails.rs` checks with the threshold forced to 0.
//!
//! The threshold is three quarters of the last-level cache that CPUID reports (32 MiB if it
//! reports none), counted as source plus destination bytes; with `std`, the environment
//! variable `VCVT_STREAM_MIN_BYTES` sets it for the process.
//!
//! Only x86-64 streams. AArch64 has `STNP`, a hint that cores may ignore, and no
//! measurement of it on a core that honours it; WebAssembly has no such store.

#[cfg(target_arch = "x86_64")]
use core::mem::{MaybeUninit, size_of};

use crate::{ConvertTo, Element};

/// Bytes of destination converted per step into the stack buffer (a multiple of 64, and
/// small enough that the buffer and the source chunk that fills it stay in a 32 KiB L1).
#[cfg(target_arch = "x86_64")]
const BUF: usize = 8192;

/// The bytes a pair moves per two values, source and destination (a packed FP4 side holds
/// two values per byte; every other element is a whole number of bytes). Empty where
/// nothing streams.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geometry {
    /// Source bytes per two values.
    #[cfg(target_arch = "x86_64")]
    src2: usize,
    /// Destination bytes per two values.
    #[cfg(target_arch = "x86_64")]
    dst2: usize,
}

impl Geometry {
    /// The geometry of pair `S -> D`.
    #[inline(always)]
    pub(crate) const fn of<S: ConvertTo<D>, D: Element>() -> Geometry {
        #[cfg(target_arch = "x86_64")]
        {
            // A packed side's element (F4E2M1x2, one byte) holds two values.
            let (src2, dst2) = match (S::PAIR.packed, S::PAIR.packed_dst) {
                (true, true) => (2 * size_of::<S>(), size_of::<D>()),
                (true, false) => (size_of::<S>(), 2 * size_of::<D>()),
                (false, _) => (2 * size_of::<S>(), 2 * size_of::<D>()),
            };
            Geometry { src2, dst2 }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            // Nothing streams here: the pair's sizes are not needed.
            let _ = S::PAIR;
            Geometry {}
        }
    }

    /// Whether a conversion of `len` values is large enough to stream: a relaxed load and a
    /// compare, so that a short call pays next to nothing.
    #[inline(always)]
    pub(crate) fn wants(self, len: usize) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            // Saturating: a length whose byte count overflows certainly streams.
            let bytes = len.saturating_mul(self.src2 + self.dst2) / 2;
            // Only widenings to f32 and f64 (4 or 8 destination bytes per value, two to eight
            // times the source): there the destination is most of the traffic and streaming
            // measured 1.25-1.3x faster on the Zen 3 VM. Narrowing and the 1- or 2-byte
            // widenings (F8E4M3 -> BF16, F16 -> BF16) measured 0.9-1.0x with it, so they
            // keep ordinary stores (docs/performance.md, "Streaming stores";
            // `cargo run --release --example streaming`).
            self.dst2 >= 8 && bytes >= min_bytes_cached() && len != 0
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = len;
            false
        }
    }
}

impl Geometry {
    /// The side whose start a long conversion on a 512-bit tier moves to a cache line
    /// ([`align_head`](Self::align_head)): `(true, bytes per two values)` for the
    /// destination, `(false, ..)` for the source.
    ///
    /// The destination, unless its elements are single bytes (fp8, fp6, fp4, packed or
    /// not): a store that straddles two lines costs more than such a load, most of all once
    /// the destination leaves L1 (F8E4M3 -> BF16 at 64 Ki values: 0.69x of the aligned rate
    /// with only the destination off a line, 0.86x with only the source). A one-byte
    /// destination is written 16 or 64 bytes per vector from four times as many source
    /// bytes, whose loads then matter more (f32 -> F8E4M3: 0.93x with the source off a line,
    /// 0.99x with the destination). `cargo run --release --example alignment` measures
    /// both placements per pair.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    const fn aligned_side(self) -> (bool, usize) {
        if self.dst2 >= 4 {
            (true, self.dst2)
        } else {
            (false, self.src2)
        }
    }

    /// Whether a conversion of `len` values is long enough to be split so that one side
    /// starts on a cache line ([`align_head`](Self::align_head)), below which the extra call
    /// costs more than it saves: [`ALIGN_MIN_BYTES`] of an f32 or f64 destination (4 KiB, 1 Ki
    /// f32, where F16 -> f32 measured 0.52x of its aligned rate unsplit and 0.77x split) and
    /// four times as many bytes of any other side (16 KiB; from 2 to 8 KiB the split measured
    /// no better than the straddling accesses on F8E4M3 -> BF16, f32 -> BF16 and
    /// f32 -> F8E4M3, from 32 to 128 KiB 1.05-1.15x better). One compare with a constant once
    /// the pair is known, so that a short call pays next to nothing.
    #[inline(always)]
    pub(crate) fn wants_align(self, len: usize) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let min = match self.aligned_side() {
                (true, w2) if w2 >= 8 => ALIGN_MIN_BYTES * 2 / w2,
                (_, w2) => ALIGN_MIN_BYTES * 8 / w2,
            };
            len >= min
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = len;
            false
        }
    }

    /// How many values to convert first, in a call of their own, so that the rest of the
    /// conversion starts with one side ([`aligned_side`](Self::aligned_side)) on a 64-byte
    /// boundary: fewer than 64, and 0 where no split is needed or possible.
    ///
    /// On the 512-bit x86-64 tiers a vector access that straddles two cache lines costs
    /// about two, and when a slice starts off a line boundary every 64-byte access of it
    /// straddles one (a `Vec` of more than 128 KiB from glibc's `malloc` starts 16 bytes
    /// past a page). One short call (the kernels' masked tail) moves the rest of the
    /// conversion to the boundary; only the other side's accesses may still straddle. The
    /// head is 0 if the side is not aligned to its element size (a byte slice), and even
    /// where a side is packed FP4 (two values per byte): 0 if it would be odd.
    #[inline(always)]
    pub(crate) fn align_head(self, src: *const u8, dst: *mut u8) -> usize {
        #[cfg(target_arch = "x86_64")]
        {
            let (p, w2) = match self.aligned_side() {
                (true, w2) => (dst as usize, w2),
                (false, w2) => (src as usize, w2),
            };
            // The side chosen is never a packed one (a packed destination has `dst2 == 1`,
            // and a packed source's destination is wider), so it has an even byte count per
            // two values and `w2 / 2` is its element size.
            let size = w2 / 2;
            if size == 0 || p % size != 0 {
                return 0;
            }
            let head = p.wrapping_neg() % 64 / size;
            let packed = self.src2 % 2 == 1 || self.dst2 % 2 == 1;
            if packed && head % 2 == 1 { 0 } else { head }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (src, dst);
            0
        }
    }

    /// The byte offsets of value `i` in the source and the destination (`i` even where a
    /// side is packed).
    #[inline(always)]
    pub(crate) fn offsets(self, i: usize) -> (usize, usize) {
        #[cfg(target_arch = "x86_64")]
        {
            (i * self.src2 / 2, i * self.dst2 / 2)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = i;
            unreachable!("no alignment head off x86-64")
        }
    }
}

/// The bytes of an f32 or f64 destination from which a conversion on a 512-bit tier is
/// split to align it, and a quarter of those for any other side ([`Geometry::wants_align`];
/// `cargo run --release --example alignment` measures the effect by length).
#[cfg(target_arch = "x86_64")]
const ALIGN_MIN_BYTES: usize = 4096;

/// Runs `chunk` over `len` values a [`BUF`]-byte destination chunk at a time into a stack
/// buffer, and streams each chunk to `dst` ([`nt_copy`]), then fences.
///
/// # Safety
/// `src` valid for reading and `dst` for writing `len` values of the pair `g` describes,
/// without overlap; `chunk(s, d, n)` must be safe to call with `s` valid for reading `n`
/// source values and `d` valid for writing `n` destination values (a 64-byte-aligned stack
/// buffer), `n` even unless it is the last chunk, and must write all `n` of them.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
pub(crate) unsafe fn run(
    g: Geometry,
    src: *const u8,
    dst: *mut u8,
    len: usize,
    mut chunk: impl FnMut(*const u8, *mut u8, usize),
) {
    #[repr(C, align(64))]
    struct Buf([MaybeUninit<u8>; BUF]);
    let mut buf = Buf([MaybeUninit::uninit(); BUF]);
    let b = buf.0.as_mut_ptr().cast::<u8>();
    // Values per chunk: even (a destination element is 1, 2, 4 or 8 bytes, or half a byte
    // packed, all of which divide `BUF / 2`), so every chunk but the last starts on a whole
    // byte of a packed side.
    let per = BUF * 2 / g.dst2;
    debug_assert!((BUF * 2).is_multiple_of(g.dst2) && per.is_multiple_of(2));
    let mut i = 0;
    while i < len {
        let n = per.min(len - i);
        // Bytes of the destination this chunk fills (a packed destination's last chunk may
        // end in half a byte, which the kernel writes whole).
        let bytes = (n * g.dst2).div_ceil(2);
        // SAFETY: `i` is even, so `i * src2 / 2` and `i * dst2 / 2` are the byte offsets of
        // value `i` on both sides, inside the caller's ranges with the `n` values that
        // follow; the buffer holds `BUF >= bytes` bytes and overlaps neither range; `chunk`
        // writes all `bytes` of it before `nt_copy` reads them.
        unsafe {
            chunk(src.add(i * g.src2 / 2), b, n);
            nt_copy(b, dst.add(i * g.dst2 / 2), bytes);
        }
        i += n;
    }
    // SAFETY: SFENCE is SSE, which every x86-64 CPU has.
    unsafe { core::arch::x86_64::_mm_sfence() };
}

/// Copies `len` bytes from `src` to `dst`: the whole 64-byte lines of `dst` with
/// non-temporal stores, the bytes before the first and after the last such line with
/// ordinary ones. The caller fences.
///
/// # Safety
/// `src` valid for reading and `dst` for writing `len` bytes, without overlap.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn nt_copy(src: *const u8, dst: *mut u8, len: usize) {
    use core::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    let head = (dst as usize).wrapping_neg() % 64;
    if head >= len {
        // SAFETY: the caller's ranges.
        unsafe { core::ptr::copy_nonoverlapping(src, dst, len) };
        return;
    }
    let lines = (len - head) / 64;
    let tail = head + lines * 64;
    // SAFETY: every access is to bytes `0..len` of the two ranges: the head `0..head`, the
    // lines `head..tail` (16 bytes at a time, the stores to a 64-byte-aligned address, as
    // MOVNTDQ requires) and the tail `tail..len`. MOVNTDQ and MOVDQU are SSE2, which every
    // x86-64 CPU has.
    unsafe {
        core::ptr::copy_nonoverlapping(src, dst, head);
        for l in 0..lines {
            let s = src.add(head + l * 64);
            let d = dst.add(head + l * 64);
            for q in 0..4 {
                let v = _mm_loadu_si128(s.add(16 * q).cast::<__m128i>());
                _mm_stream_si128(d.add(16 * q).cast::<__m128i>(), v);
            }
        }
        core::ptr::copy_nonoverlapping(src.add(tail), dst.add(tail), len - tail);
    }
}

/// The cached threshold, or 0 before it is first computed (then [`min_bytes`] computes it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn min_bytes_cached() -> usize {
    match crate::arch::x86_64::stream_min_bytes_cached() {
        0 => crate::arch::x86_64::stream_min_bytes(),
        v => v,
    }
}
