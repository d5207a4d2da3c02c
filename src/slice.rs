//! The slice entry points.

use core::mem::{MaybeUninit, size_of};

use crate::arch;
use crate::backend::{Entry, active_entry};
use crate::element::private::{Pair, Via};
use crate::options::Policy;
use crate::stream::Geometry;
use crate::{Backend, ConvertTo, Element, Error, NanPolicy, Options};

/// How one pair runs on one backend under one set of options: what [`run`] decides on every
/// call of the free functions, and what a [`Converter`](crate::Converter) decides once.
#[derive(Clone, Copy)]
pub(crate) enum Route {
    /// One kernel that implements the policy itself (a table kernel, or a direct
    /// narrow → narrow kernel under [`NanPolicy::Preserve`]).
    Kernel(arch::RawKernel),
    /// A table kernel that implements only `Preserve`, with the NaN patch around it.
    NanPatch(arch::RawKernel, Pair),
    /// A narrow → narrow pair through an f32 stack buffer.
    Via(Pair, Via),
}

impl Route {
    /// The route of pair `S -> D` on `entry` under `policy` (resolved from the options).
    #[inline(always)]
    pub(crate) fn of<S: ConvertTo<D>, D: Element>(entry: &Entry, policy: Policy) -> Route {
        let pair = S::PAIR;
        if let Some(via) = pair.via {
            return match entry.kernels.1[via.direct] {
                // A direct kernel implements the NaN policy `Preserve` (and every overflow
                // policy); the other NaN policies run the two halves with the NaN patch.
                Some(k) if policy.nan == NanPolicy::Preserve => Route::Kernel(k),
                _ => Route::Via(pair, via),
            };
        }
        let slot = entry.kernels.0[pair.index];
        if policy.nan != NanPolicy::Preserve && !slot.all_nan_policies && pair.narrow_src != 0 {
            Route::NanPatch(slot.run, pair)
        } else {
            Route::Kernel(slot.run)
        }
    }

    /// Runs the route over `len` values of pair `S -> D`, streaming the destination
    /// (`src/stream.rs`) when a conversion of `stream_len` values would (`len`, or the whole
    /// conversion's length for a part of one), and on the 512-bit tiers splitting a long
    /// conversion so that it runs from a cache line ([`call_long`]).
    ///
    /// # Safety
    /// As for [`run`], with `self` made by [`Route::of`] for this pair from `entry` and
    /// `policy`.
    #[inline(always)]
    pub(crate) unsafe fn call<S: ConvertTo<D>, D: Element>(
        &self,
        entry: &Entry,
        stream_len: usize,
        src: *const u8,
        dst: *mut u8,
        len: usize,
        policy: Policy,
    ) {
        let g = Geometry::of::<S, D>();
        if g.wants_align(len) || g.wants(stream_len) {
            // SAFETY: forwarded from this function's contract; `call_long` makes the same
            // route for the pair from `entry` and `policy`.
            unsafe { call_long::<S, D>(entry, stream_len, src, dst, len, policy) }
        } else {
            // SAFETY: forwarded from this function's contract.
            unsafe { self.call_cached(entry, src, dst, len, policy) }
        }
    }

    /// [`call`](Self::call) for a conversion larger than the cache: the route converts a
    /// chunk at a time into a stack buffer, which streaming stores move to `dst`
    /// (`stream.rs`).
    ///
    /// # Safety
    /// As for [`call`](Self::call).
    #[cold]
    #[inline(never)]
    unsafe fn call_streamed(
        &self,
        entry: &Entry,
        g: Geometry,
        src: *const u8,
        dst: *mut u8,
        len: usize,
        policy: Policy,
    ) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: forwarded from this function's contract; `stream::run` calls the closure
        // with `s` readable for `n` source values inside `src` and `d` a buffer writable
        // for `n` destination values, which is `call_cached`'s contract.
        unsafe {
            crate::stream::run(g, src, dst, len, |s, d, n| {
                self.call_cached(entry, s, d, n, policy)
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        // SAFETY: forwarded from this function's contract (`Geometry::wants` is false off
        // x86-64, so this is not reached there).
        unsafe {
            let _ = g;
            self.call_cached(entry, src, dst, len, policy)
        }
    }

    /// Runs the route over `len` values with ordinary stores.
    ///
    /// # Safety
    /// As for [`call`](Self::call).
    #[inline(always)]
    unsafe fn call_cached(
        self,
        entry: &Entry,
        src: *const u8,
        dst: *mut u8,
        len: usize,
        policy: Policy,
    ) {
        match self {
            // SAFETY: forwarded from this function's contract, which is the kernel's.
            Route::Kernel(k) => unsafe { k(src, dst, len, policy) },
            // SAFETY: forwarded from this function's contract.
            Route::NanPatch(k, pair) => unsafe {
                arch::run_with_nan_patch(k, pair, src, dst, len, policy)
            },
            // SAFETY: forwarded from this function's contract.
            Route::Via(pair, via) => unsafe { run_via(entry, pair, via, src, dst, len, policy) },
        }
    }
}

/// [`Route::call`] for a conversion long enough to stream or to be split so that one side
/// starts on a cache line ([`Geometry::wants_align`]): streamed if it is large enough, else,
/// on a tier that [aligns](Entry::aligns), a call for the first few values
/// ([`Geometry::align_head`]) and one for the rest.
///
/// Out of line, `cold`, and given only scalars (it makes the pair's route again, a few
/// loads): a call through a `Converter` or a free function that takes the short path then
/// stores nothing for it. (Taking the route by reference made every short call write the
/// route and the pair's geometry to the stack first, 0.3–0.6 ns per call on the Intel Xeon
/// with AVX512_FP16.) A long call, whose kernel runs far longer, does not notice.
///
/// # Safety
/// As for [`run`].
#[cold]
#[inline(never)]
unsafe fn call_long<S: ConvertTo<D>, D: Element>(
    entry: &Entry,
    stream_len: usize,
    src: *const u8,
    dst: *mut u8,
    len: usize,
    policy: Policy,
) {
    let route = Route::of::<S, D>(entry, policy);
    let g = Geometry::of::<S, D>();
    if g.wants(stream_len) {
        // SAFETY: forwarded from this function's contract.
        return unsafe { route.call_streamed(entry, g, src, dst, len, policy) };
    }
    if !(entry.aligns() && g.wants_align(len)) {
        // SAFETY: forwarded from this function's contract.
        return unsafe { route.call_cached(entry, src, dst, len, policy) };
    }
    let head = g.align_head(src, dst).min(len);
    let (s, d) = g.offsets(head);
    // SAFETY: forwarded from this function's contract: values `0..head`, then `head..len`,
    // whose byte offsets are those of value `head` (even where a side is packed). Every
    // kernel converts each value on its own, so the two calls write the bits one call would.
    unsafe {
        if head != 0 {
            route.call_cached(entry, src, dst, head, policy);
        }
        route.call_cached(entry, src.add(s), dst.add(d), len - head, policy);
    }
}

/// Runs pair `S -> D` of `entry` over `len` values.
///
/// # Safety
/// `src` must be valid for reading `len` `S` values and `dst` for writing `len` `D` values
/// (for a packed FP4 side, `len.div_ceil(2)` bytes; alignment not required), without
/// overlap, and `entry`'s backend must be available on this CPU.
#[inline(always)]
pub(crate) unsafe fn run<S: ConvertTo<D>, D: Element>(
    entry: &Entry,
    src: *const u8,
    dst: *mut u8,
    len: usize,
    options: Options,
) {
    let policy = options.resolve(S::PAIR.default_overflow);
    // SAFETY: forwarded from this function's contract; the route is this pair's on `entry`.
    unsafe {
        Route::of::<S, D>(entry, policy).call::<S, D>(
            entry,
            options.stream_len(len),
            src,
            dst,
            len,
            policy,
        )
    }
}

/// Runs the table kernel of a pair with an f32 or f64 side, patching the NaN policy in
/// where the kernel implements only [`NanPolicy::Preserve`].
///
/// # Safety
/// As for [`run`], with `len` values of `pair`'s source and destination.
#[inline(always)]
unsafe fn run_pair(
    entry: &Entry,
    pair: Pair,
    src: *const u8,
    dst: *mut u8,
    len: usize,
    policy: Policy,
) {
    let slot = entry.kernels.0[pair.index];
    if policy.nan != NanPolicy::Preserve && !slot.all_nan_policies && pair.narrow_src != 0 {
        // SAFETY: forwarded from this function's contract.
        unsafe { arch::run_with_nan_patch(slot.run, pair, src, dst, len, policy) }
    } else {
        // SAFETY: forwarded from this function's contract, which is the kernel's.
        unsafe { (slot.run)(src, dst, len, policy) }
    }
}

/// Values per chunk of a narrow → narrow conversion: their f32 values sit in a stack
/// buffer (2 KiB) between the two halves.
const VIA_CHUNK: usize = 512;

/// Runs a narrow → narrow pair: for each chunk of at most [`VIA_CHUNK`] values, the
/// backend's widening kernel of the source writes f32 values to a stack buffer, and its
/// narrowing kernel of the destination reads them.
///
/// **One rounding.** Every value of every narrow format is exactly an f32 (their exponent
/// ranges and fraction widths lie inside f32's, and a NaN widens to an f32 NaN), so the
/// first half changes no value; the second half then rounds each exact source value once,
/// under the destination's overflow and NaN policies. The result is the source value
/// rounded once to the destination, as the contract requires. (A NaN source keeps its sign
/// and as much payload as each step carries, as converting through an f32 slice would.)
///
/// # Safety
/// As for [`run`].
#[inline(never)]
unsafe fn run_via(
    entry: &Entry,
    pair: Pair,
    via: Via,
    src: *const u8,
    dst: *mut u8,
    len: usize,
    policy: Policy,
) {
    let widen = entry.kernels.0[via.widen].run;
    // The narrowing half is the table pair f32 -> destination.
    let narrow = Pair {
        packed: pair.packed_dst,
        via: None,
        ..pair
    };
    let mut buf = [MaybeUninit::<f32>::uninit(); VIA_CHUNK];
    let wide = buf.as_mut_ptr().cast::<u8>();
    let mut i = 0;
    while i < len {
        let n = VIA_CHUNK.min(len - i);
        // Byte offsets of value i (even: VIA_CHUNK is even, so a packed side's chunk starts
        // on a byte).
        let s_off = if via.src_packed {
            i / 2
        } else {
            i * via.src_size
        };
        let d_off = if pair.packed_dst {
            i / 2
        } else {
            i * pair.dst_size
        };
        // SAFETY: values i..i + n lie inside the caller's ranges (a packed side holds
        // len.div_ceil(2) bytes, of which this chunk reads or writes n.div_ceil(2) from byte
        // i / 2); the buffer holds n <= VIA_CHUNK f32 and overlaps neither range; the
        // widening kernel's output is initialized before the narrowing kernel reads it; the
        // entry's backend is available (the caller's guarantee).
        unsafe {
            widen(src.add(s_off), wide, n, policy);
            run_pair(entry, narrow, wide, dst.add(d_off), n, policy);
        }
        i += n;
    }
}

/// The number of values a conversion between `src` source and `dst` destination elements
/// covers, or the error that names what is wrong with the lengths.
///
/// Unpacked pairs need equal lengths. When one side is packed FP4, it must have
/// `values.div_ceil(2)` bytes, where `values` is the other side's length.
#[inline(always)]
pub(crate) fn values<S: ConvertTo<D>, D: Element>(src: usize, dst: usize) -> Result<usize, Error> {
    let pair = S::PAIR;
    if !pair.packed {
        if src == dst {
            Ok(src)
        } else {
            Err(Error::LengthMismatch { src, dst })
        }
    } else if pair.packed_dst {
        // Converting into packed bytes.
        if dst == src.div_ceil(2) {
            Ok(src)
        } else {
            Err(Error::PackedLength {
                values: src,
                packed: dst,
            })
        }
    } else if src == dst.div_ceil(2) {
        Ok(dst)
    } else {
        Err(Error::PackedLength {
            values: dst,
            packed: src,
        })
    }
}

/// The value count of `S -> D` between slices of these lengths; panics naming `what` if the
/// lengths do not fit.
#[inline(always)]
#[track_caller]
fn values_or_panic<S: ConvertTo<D>, D: Element>(what: &str, src: usize, dst: usize) -> usize {
    match values::<S, D>(src, dst) {
        Ok(n) => n,
        Err(e) => length_mismatch(what, e),
    }
}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn length_mismatch(what: &str, e: Error) -> ! {
    match e {
        Error::LengthMismatch { src, dst } => {
            panic!("vcvt::{what}: source has {src} elements but destination has {dst}")
        }
        e => panic!("vcvt::{what}: {e}"),
    }
}

/// Converts `src` into `dst`, element by element, with each format's default overflow policy.
///
/// Like [`slice::copy_from_slice`](slice::copy_from_slice), but converting.
///
/// # Panics
/// If the slices have different lengths (the message names both), or see
/// [`Backend::active`] for the `VCVT_BACKEND` override.
///
/// ```
/// use vcvt::F8E4M3;
/// let src = [0.5f32, 1000.0, f32::NAN];
/// let mut dst = [F8E4M3::ZERO; 3];
/// vcvt::convert_slice(&src, &mut dst);
/// assert_eq!(dst[0].to_f32(), 0.5);
/// assert_eq!(dst[1], F8E4M3::MAX); // fp8 saturates by default
/// assert!(dst[2].is_nan());
/// ```
#[inline]
#[track_caller]
pub fn convert_slice<S: ConvertTo<D>, D: Element>(src: &[S], dst: &mut [D]) {
    let n = values_or_panic::<S, D>("convert_slice", src.len(), dst.len());
    // SAFETY: the slices hold `n` values (`values` checked their lengths) and cannot overlap
    // (one is `&mut`); the active entry is always an available backend (`Backend::active`
    // checks it).
    unsafe {
        run::<S, D>(
            active_entry(),
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            n,
            Options::new(),
        )
    }
}

/// Converts `src` into `dst` with the given options.
///
/// # Panics
/// If the slices have different lengths.
///
/// ```
/// use vcvt::{F16, Options, Overflow};
/// let src = [1.0e6f32];
/// let mut dst = [F16::ZERO];
/// vcvt::convert_slice_with(&src, &mut dst, Options::new().overflow(Overflow::Saturate));
/// assert_eq!(dst[0], F16::MAX);
/// ```
#[inline]
#[track_caller]
pub fn convert_slice_with<S: ConvertTo<D>, D: Element>(src: &[S], dst: &mut [D], options: Options) {
    let n = values_or_panic::<S, D>("convert_slice_with", src.len(), dst.len());
    // SAFETY: as in `convert_slice`.
    unsafe {
        run::<S, D>(
            active_entry(),
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            n,
            options,
        )
    }
}

/// Converts `src` into `dst`, or returns [`Error::LengthMismatch`] if their lengths differ.
///
/// ```
/// use vcvt::BF16;
/// let mut dst = [BF16::ZERO; 2];
/// assert!(vcvt::try_convert_slice(&[1.0f32, 2.0], &mut dst).is_ok());
/// assert!(vcvt::try_convert_slice(&[1.0f32], &mut dst).is_err());
/// ```
#[inline]
pub fn try_convert_slice<S: ConvertTo<D>, D: Element>(
    src: &[S],
    dst: &mut [D],
) -> Result<(), Error> {
    try_convert_slice_with(src, dst, Options::new())
}

/// Converts `src` into `dst` with the given options, or returns
/// [`Error::LengthMismatch`] if their lengths differ.
#[inline]
pub fn try_convert_slice_with<S: ConvertTo<D>, D: Element>(
    src: &[S],
    dst: &mut [D],
    options: Options,
) -> Result<(), Error> {
    let n = values::<S, D>(src.len(), dst.len())?;
    // SAFETY: as in `convert_slice`.
    unsafe {
        run::<S, D>(
            active_entry(),
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            n,
            options,
        )
    };
    Ok(())
}

/// Converts `src` into `dst` on the given backend.
///
/// Every backend gives the same bits; this is for tests, benchmarks and callers who pin one.
/// Returns [`Error::BackendUnavailable`] if this CPU cannot run `backend`, and
/// [`Error::LengthMismatch`] if the lengths differ.
///
/// ```
/// use vcvt::{Backend, F8E5M2, Options};
/// let src = [3.0f32, -0.25];
/// let mut dst = [F8E5M2::ZERO; 2];
/// vcvt::convert_slice_on(Backend::Scalar, &src, &mut dst, Options::new())?;
/// assert_eq!(dst[0].to_f32(), 3.0);
/// # Ok::<(), vcvt::Error>(())
/// ```
#[inline]
pub fn convert_slice_on<S: ConvertTo<D>, D: Element>(
    backend: Backend,
    src: &[S],
    dst: &mut [D],
    options: Options,
) -> Result<(), Error> {
    let entry = available_entry(backend)?;
    let n = values::<S, D>(src.len(), dst.len())?;
    // SAFETY: the slices hold `n` values, cannot overlap, and `available_entry` checked
    // that the CPU can run the backend.
    unsafe {
        run::<S, D>(
            entry,
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            n,
            options,
        )
    };
    Ok(())
}

/// [`convert_slice_on`] with `backend`'s generic kernels alone (its table before the
/// override list): the throughput example times each override beside the generic kernel it
/// replaces with it. `Err(BackendUnavailable)` where the backend keeps no such table or
/// cannot run here. Not part of the stable API.
#[doc(hidden)]
pub fn convert_slice_generic_on<S: ConvertTo<D>, D: Element>(
    backend: Backend,
    src: &[S],
    dst: &mut [D],
    options: Options,
) -> Result<(), Error> {
    available_entry(backend)?;
    let entry = backend
        .generic_entry()
        .ok_or(Error::BackendUnavailable { backend })?;
    let n = values::<S, D>(src.len(), dst.len())?;
    // SAFETY: as in `convert_slice_on`: the generic table belongs to the same backend, whose
    // features `available_entry` checked.
    unsafe {
        run::<S, D>(
            entry,
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            n,
            options,
        )
    };
    Ok(())
}

#[inline]
fn available_entry(backend: Backend) -> Result<&'static Entry, Error> {
    if backend.is_available() {
        Ok(backend.entry())
    } else {
        Err(Error::BackendUnavailable { backend })
    }
}

/// Converts `src` into an uninitialized destination and returns it, now initialized.
///
/// This fills a buffer without zeroing it first, e.g. a `Vec`'s spare capacity.
///
/// # Panics
/// If the slices have different lengths.
///
/// ```
/// use vcvt::F16;
/// let src = [1.0f32, 2.0, 3.0];
/// let mut v: Vec<F16> = Vec::with_capacity(src.len());
/// let out = vcvt::convert_slice_uninit(&src, &mut v.spare_capacity_mut()[..3]);
/// assert_eq!(out[2].to_f32(), 3.0);
/// // SAFETY: the three elements were just initialized.
/// unsafe { v.set_len(3) };
/// ```
#[inline]
#[track_caller]
pub fn convert_slice_uninit<'d, S: ConvertTo<D>, D: Element>(
    src: &[S],
    dst: &'d mut [MaybeUninit<D>],
) -> &'d mut [D] {
    convert_slice_uninit_with(src, dst, Options::new())
}

/// Like [`convert_slice_uninit`], with options.
///
/// # Panics
/// If the slices have different lengths.
#[inline]
#[track_caller]
pub fn convert_slice_uninit_with<'d, S: ConvertTo<D>, D: Element>(
    src: &[S],
    dst: &'d mut [MaybeUninit<D>],
    options: Options,
) -> &'d mut [D] {
    let n = values_or_panic::<S, D>("convert_slice_uninit", src.len(), dst.len());
    let len = dst.len();
    let out = dst.as_mut_ptr().cast::<D>();
    // SAFETY: as in `convert_slice`; `MaybeUninit<D>` has `D`'s layout, and the kernel writes
    // every destination element without reading the destination.
    unsafe { run::<S, D>(active_entry(), src.as_ptr().cast(), out.cast(), n, options) };
    // SAFETY: the kernel wrote all `len` elements, so they are initialized; the pointer and
    // lifetime come from `dst`, which stays mutably borrowed for 'd.
    unsafe { core::slice::from_raw_parts_mut(out, len) }
}

/// Converts `src` into a new `Vec`.
///
/// ```
/// use vcvt::BF16;
/// let v: Vec<BF16> = vcvt::convert_to_vec(&[1.0f32, 0.5]);
/// assert_eq!(v[1].to_f32(), 0.5);
/// ```
#[cfg(feature = "alloc")]
#[inline]
pub fn convert_to_vec<S: ConvertTo<D>, D: Element>(src: &[S]) -> alloc::vec::Vec<D> {
    convert_to_vec_with(src, Options::new())
}

/// Converts `src` into a new `Vec` with options.
///
/// The `Vec` holds one element per source value; for packed FP4 ([`F4E2M1x2`](crate::F4E2M1x2))
/// that is `n.div_ceil(2)` bytes for `n` values, and `2 * n` values (every nibble) from `n`
/// bytes (to drop a spare last nibble, convert into a slice of odd length instead).
///
/// ```
/// use vcvt::F4E2M1x2;
/// let packed: Vec<F4E2M1x2> = vcvt::convert_to_vec(&[1.0f32, 2.0, 3.0]);
/// assert_eq!(packed.len(), 2);
/// let values: Vec<f32> = vcvt::convert_to_vec(&packed);
/// assert_eq!(values, [1.0, 2.0, 3.0, 0.0]);
/// ```
#[cfg(feature = "alloc")]
pub fn convert_to_vec_with<S: ConvertTo<D>, D: Element>(
    src: &[S],
    options: Options,
) -> alloc::vec::Vec<D> {
    let len = match (S::PAIR.packed, S::PAIR.packed_dst) {
        // `n` values pack into `n.div_ceil(2)` bytes.
        (true, true) => src.len().div_ceil(2),
        // Every nibble of packed bytes: `2 * n` values.
        (true, false) => 2 * src.len(),
        (false, _) => src.len(),
    };
    let mut v = alloc::vec::Vec::with_capacity(len);
    convert_slice_uninit_with(src, &mut v.spare_capacity_mut()[..len], options);
    // SAFETY: the first `len` elements were initialized just above, and the capacity is at
    // least that.
    unsafe { v.set_len(len) };
    v
}

/// Converts little-endian bytes holding `S` values (at any alignment) into `dst`.
///
/// This reads weights straight from a memory-mapped file without copying them first.
/// Returns [`Error::ByteLength`] if `bytes` is not a whole number of `S` values, and
/// [`Error::LengthMismatch`] if it holds a different number of values than `dst`.
///
/// ```
/// use vcvt::F16;
/// let bytes = [0x00, 0x3C, 0x00, 0xC0]; // f16 1.0 and -2.0, little-endian
/// let mut out = [0.0f32; 2];
/// vcvt::convert_from_bytes::<F16, f32>(&bytes, &mut out)?;
/// assert_eq!(out, [1.0, -2.0]);
/// assert!(vcvt::convert_from_bytes::<F16, f32>(&bytes[..3], &mut out[..1]).is_err());
/// # Ok::<(), vcvt::Error>(())
/// ```
#[inline]
pub fn convert_from_bytes<S: ConvertTo<D>, D: Element>(
    bytes: &[u8],
    dst: &mut [D],
) -> Result<(), Error> {
    convert_from_bytes_with::<S, D>(bytes, dst, Options::new())
}

/// Like [`convert_from_bytes`], with options.
pub fn convert_from_bytes_with<S: ConvertTo<D>, D: Element>(
    bytes: &[u8],
    dst: &mut [D],
    options: Options,
) -> Result<(), Error> {
    let len = dst.len();
    let ptr = dst.as_mut_ptr().cast::<MaybeUninit<D>>();
    // SAFETY: `MaybeUninit<D>` has `D`'s layout; the slice covers `dst`, which stays
    // borrowed for the call, and only initialised values of `D` are written through it.
    let uninit = unsafe { core::slice::from_raw_parts_mut(ptr, len) };
    convert_from_bytes_uninit_with::<S, D>(bytes, uninit, options).map(|_| ())
}

/// [`convert_from_bytes`] into an uninitialised destination, which it initialises and
/// returns on success.
///
/// ```
/// use vcvt::BF16;
/// let bytes = [0x80, 0x3F, 0x40, 0xC0]; // bf16 1.0 and -3.0
/// let mut v: Vec<f32> = Vec::with_capacity(2);
/// let out = vcvt::convert_from_bytes_uninit::<BF16, f32>(&bytes, &mut v.spare_capacity_mut()[..2])?;
/// assert_eq!(out, [1.0, -3.0]);
/// # Ok::<(), vcvt::Error>(())
/// ```
#[inline]
pub fn convert_from_bytes_uninit<'d, S: ConvertTo<D>, D: Element>(
    bytes: &[u8],
    dst: &'d mut [MaybeUninit<D>],
) -> Result<&'d mut [D], Error> {
    convert_from_bytes_uninit_with::<S, D>(bytes, dst, Options::new())
}

/// [`convert_from_bytes_with`] into an uninitialised destination, which it initialises
/// and returns on success.
///
/// ```
/// use vcvt::{F8E4M3, Options};
/// let bytes = [0x38, 0xB8]; // e4m3 1.0 and -1.0
/// let mut out = [core::mem::MaybeUninit::uninit(); 2];
/// let out = vcvt::convert_from_bytes_uninit_with::<F8E4M3, f64>(&bytes, &mut out, Options::new())?;
/// assert_eq!(out, [1.0, -1.0]);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn convert_from_bytes_uninit_with<'d, S: ConvertTo<D>, D: Element>(
    bytes: &[u8],
    dst: &'d mut [MaybeUninit<D>],
    options: Options,
) -> Result<&'d mut [D], Error> {
    let elements = whole_elements::<S>(bytes.len())?;
    let n = values::<S, D>(elements, dst.len())?;
    let entry = active_entry();
    if cfg!(target_endian = "little") || size_of::<S>() == 1 {
        // SAFETY: `bytes` holds exactly the `n` values' little-endian `S` elements (kernels
        // read unaligned; single bytes have no byte order), `dst` holds the `n` values' `D`
        // elements (`MaybeUninit<D>` has `D`'s layout; kernels write without reading), they
        // cannot overlap, and the active backend is available.
        unsafe { run::<S, D>(entry, bytes.as_ptr(), dst.as_mut_ptr().cast(), n, options) };
    } else {
        from_swapped_bytes::<S, D>(entry, bytes, dst, options);
    }
    let len = dst.len();
    // SAFETY: the kernels wrote all `len` elements, so they are initialised; the pointer and
    // lifetime come from `dst`, which stays mutably borrowed for 'd.
    Ok(unsafe { core::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<D>(), len) })
}

/// Converts `src` into little-endian bytes holding `D` values (at any alignment).
///
/// Returns [`Error::ByteLength`] if `bytes` is not a whole number of `D` values, and
/// [`Error::LengthMismatch`] if it holds a different number of values than `src`.
///
/// ```
/// use vcvt::BF16;
/// let mut bytes = [0u8; 4];
/// vcvt::convert_to_bytes::<f32, BF16>(&[1.0, -3.0], &mut bytes)?;
/// assert_eq!(bytes, [0x80, 0x3F, 0x40, 0xC0]);
/// # Ok::<(), vcvt::Error>(())
/// ```
#[inline]
pub fn convert_to_bytes<S: ConvertTo<D>, D: Element>(
    src: &[S],
    bytes: &mut [u8],
) -> Result<(), Error> {
    convert_to_bytes_with::<S, D>(src, bytes, Options::new())
}

/// Like [`convert_to_bytes`], with options.
pub fn convert_to_bytes_with<S: ConvertTo<D>, D: Element>(
    src: &[S],
    bytes: &mut [u8],
    options: Options,
) -> Result<(), Error> {
    let elements = whole_elements::<D>(bytes.len())?;
    let n = values::<S, D>(src.len(), elements)?;
    // SAFETY: `src` holds `n` values, `bytes` has room for exactly the `n` values' `D`
    // elements (kernels write unaligned), they cannot overlap, and the active backend is
    // available.
    unsafe {
        run::<S, D>(
            active_entry(),
            src.as_ptr().cast(),
            bytes.as_mut_ptr(),
            n,
            options,
        )
    };
    if cfg!(target_endian = "big") {
        swap_each::<D>(bytes);
    }
    Ok(())
}

fn whole_elements<T>(bytes: usize) -> Result<usize, Error> {
    let element_size = size_of::<T>();
    if bytes.is_multiple_of(element_size) {
        Ok(bytes / element_size)
    } else {
        Err(Error::ByteLength {
            bytes,
            element_size,
        })
    }
}

/// Reverses the bytes of each `T`-sized element of `bytes` in place.
fn swap_each<T>(bytes: &mut [u8]) {
    for e in bytes.chunks_exact_mut(size_of::<T>()) {
        e.reverse();
    }
}

/// The big-endian path of [`convert_from_bytes_with`]: byte-swap through a stack buffer.
/// Compiled (and tested, by its internal test) on every target so that it cannot rot.
fn from_swapped_bytes<S: ConvertTo<D>, D: Element>(
    entry: &Entry,
    bytes: &[u8],
    dst: &mut [MaybeUninit<D>],
    options: Options,
) {
    const BUF: usize = 512;
    let size = size_of::<S>();
    let per = BUF / size;
    // A packed destination holds two values per element (`per` is even).
    let dst_per = if S::PAIR.packed { per / 2 } else { per };
    let mut buf = [0u8; BUF];
    for (chunk, out) in bytes.chunks(per * size).zip(dst.chunks_mut(dst_per)) {
        let tmp = &mut buf[..chunk.len()];
        tmp.copy_from_slice(chunk);
        swap_each::<S>(tmp);
        let n = chunk.len() / size;
        // SAFETY: `tmp` holds `n` whole `S` values (`chunk` is `per` values, or the
        // remainder, and `bytes` holds as many values as `dst` takes); `out` has room for
        // them (`dst_per` elements per `per` values); the caller's entry is an available
        // backend.
        unsafe { run::<S, D>(entry, tmp.as_ptr(), out.as_mut_ptr().cast(), n, options) };
    }
}

/// Values per chunk of a round trip: the narrow codes of one chunk sit in a stack buffer.
const ROUND_TRIP_CHUNK: usize = 256;

/// Replaces every value of `x` by its value after a round trip through format `F`: narrowed
/// to `F` (with `F`'s default overflow policy) and widened back, in place ("fake
/// quantization", as mixed-precision references do it).
///
/// The result equals, bit for bit, [`convert_slice`] from `x` to `F` followed by
/// [`convert_slice`] back, on every backend: it runs the same kernels, a chunk at a time
/// through a small buffer on the stack, so no heap buffer is needed. [`round_trip_f64`] does
/// the same for `f64`.
///
/// ```
/// use vcvt::BF16;
/// let mut x = [1.0f32, 1.0 + 2f32.powi(-9), 1000.0, f32::NAN];
/// vcvt::round_trip::<BF16>(&mut x);
/// assert_eq!(x[..3], [1.0, 1.0, 1000.0]); // 1 + 2^-9 rounds to 1 in BF16
/// assert!(x[3].is_nan());
/// ```
#[inline]
pub fn round_trip<F: Element + ConvertTo<f32>>(x: &mut [f32])
where
    f32: ConvertTo<F>,
{
    round_trip_entry::<F, f32>(active_entry(), x, Options::new())
}

/// Like [`round_trip`], with the overflow and NaN policies of `options` applied to the
/// narrowing step.
///
/// ```
/// use vcvt::{F16, Options, Overflow};
/// let mut x = [1.0e6f32];
/// vcvt::round_trip_with::<F16>(&mut x, Options::new().overflow(Overflow::Saturate));
/// assert_eq!(x, [65504.0]);
/// ```
#[inline]
pub fn round_trip_with<F: Element + ConvertTo<f32>>(x: &mut [f32], options: Options)
where
    f32: ConvertTo<F>,
{
    round_trip_entry::<F, f32>(active_entry(), x, options)
}

/// [`round_trip`] for `f64` values: each is rounded once to `F` (never through `f32`) and
/// widened back.
///
/// ```
/// use vcvt::F8E4M3;
/// let mut y = [0.3f64, 500.0];
/// vcvt::round_trip_f64::<F8E4M3>(&mut y);
/// assert_eq!(y, [0.3125, 448.0]); // E4M3 saturates by default
/// ```
#[inline]
pub fn round_trip_f64<F: Element + ConvertTo<f64>>(x: &mut [f64])
where
    f64: ConvertTo<F>,
{
    round_trip_entry::<F, f64>(active_entry(), x, Options::new())
}

/// Like [`round_trip_f64`], with options.
#[inline]
pub fn round_trip_f64_with<F: Element + ConvertTo<f64>>(x: &mut [f64], options: Options)
where
    f64: ConvertTo<F>,
{
    round_trip_entry::<F, f64>(active_entry(), x, options)
}

/// A round trip of `W` values (`f32` or `f64`) through `F` on the given backend;
/// [`Error::BackendUnavailable`] if this CPU cannot run it.
///
/// ```
/// use vcvt::{Backend, F4E2M1, Options};
/// let mut x = [2.6f32, -0.2];
/// vcvt::round_trip_on::<F4E2M1, f32>(Backend::Scalar, &mut x, Options::new())?;
/// assert_eq!(x, [3.0, -0.0]);
/// # Ok::<(), vcvt::Error>(())
/// ```
pub fn round_trip_on<F: Element + ConvertTo<W>, W: ConvertTo<F>>(
    backend: Backend,
    x: &mut [W],
    options: Options,
) -> Result<(), Error> {
    round_trip_entry::<F, W>(available_entry(backend)?, x, options);
    Ok(())
}

/// [`round_trip_on`] with `backend`'s generic kernels alone (see
/// [`convert_slice_generic_on`]). Not part of the stable API.
#[doc(hidden)]
pub fn round_trip_generic_on<F: Element + ConvertTo<W>, W: ConvertTo<F>>(
    backend: Backend,
    x: &mut [W],
    options: Options,
) -> Result<(), Error> {
    available_entry(backend)?;
    let entry = backend
        .generic_entry()
        .ok_or(Error::BackendUnavailable { backend })?;
    round_trip_entry::<F, W>(entry, x, options);
    Ok(())
}

#[inline]
fn round_trip_entry<F: Element + ConvertTo<W>, W: ConvertTo<F>>(
    entry: &Entry,
    x: &mut [W],
    options: Options,
) {
    // Narrow codes are at most 2 bytes (a packed FP4 chunk needs half a byte per value).
    debug_assert!(size_of::<F>() <= 2);
    let narrow = <W as ConvertTo<F>>::PAIR;
    if narrow.narrow_src == 4 && !narrow.packed {
        let policy = options.resolve(narrow.default_overflow);
        let fused = entry.kernels.2[narrow.index / crate::element::PAIRS_PER_FORMAT];
        if let (Some(k), NanPolicy::Preserve) = (fused, policy.nan) {
            let p = x.as_mut_ptr().cast::<u8>();
            // SAFETY: `x` holds `x.len()` f32 values; a fused round-trip kernel may be called
            // with the same range as source and destination (see
            // `Kernels::set_round_trip`); the entry's backend is available.
            unsafe { k(p, p, x.len(), policy) };
            return;
        }
    }
    let mut buf = [MaybeUninit::<u16>::uninit(); ROUND_TRIP_CHUNK];
    let codes = buf.as_mut_ptr().cast::<u8>();
    for chunk in x.chunks_mut(ROUND_TRIP_CHUNK) {
        let n = chunk.len();
        let p = chunk.as_mut_ptr().cast::<u8>();
        // SAFETY: the chunk holds `n <= ROUND_TRIP_CHUNK` values; the buffer has room for
        // `n` codes of at most 2 bytes (or `n.div_ceil(2)` packed bytes). The first call
        // reads the chunk and writes the buffer, the second reads the codes it wrote and
        // writes the chunk: neither call's source and destination overlap. The entry's
        // backend is available (`active_entry`/`available_entry`).
        unsafe {
            run::<W, F>(entry, p, codes, n, options);
            run::<F, W>(entry, codes, p, n, options);
        }
    }
}

#[cfg(feature = "__internal-tests")]
pub(crate) mod internal_tests {
    use super::*;
    use crate::F16;

    /// f32 bytes in the non-native order (big-endian on a little-endian host, little-endian
    /// on a big-endian one) through the swapped-bytes path of the active backend give the
    /// codes of converting each value.
    pub fn swapped_bytes_path_converts_foreign_endian_input() {
        let vals: [f32; 300] = core::array::from_fn(|i| i as f32 * 0.75 - 100.0);
        let mut foreign = [0u8; 1200];
        for (c, v) in foreign.chunks_exact_mut(4).zip(vals) {
            c.copy_from_slice(&if cfg!(target_endian = "little") {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            });
        }
        let mut out = [MaybeUninit::new(F16::ZERO); 300];
        from_swapped_bytes::<f32, F16>(active_entry(), &foreign, &mut out, Options::new());
        // SAFETY: every element was initialised (to zero, then by the conversion).
        for (o, v) in out.iter().map(|o| unsafe { o.assume_init() }).zip(vals) {
            assert_eq!(o.to_bits(), F16::from_f32(v).to_bits());
        }
    }
}
