//! `vcvt_converter`: a conversion resolved once (dtype pair, options, backend, kernel) and run
//! many times, the C counterpart of the Rust `vcvt::Converter<S, D>`.
//!
//! The handle is a caller-owned struct of plain words: the pair's index, the bytes of the
//! Rust `Converter<S, D>` made by [`vcvt_converter_init`], and a check word. The check word is
//! the XOR of every other word, mixed with a constant and with the address of a static of
//! this library (different in each process under ASLR). [`vcvt_converter_run`] recomputes it
//! before it reads the converter: a handle that was never initialised (a fill with one byte
//! never passes), had a word overwritten, or comes from another process or library load
//! fails that check and the call returns `VCVT_E_INVALID` without touching the buffers. The
//! pair's run function is taken from a static table by the pair index (bounds-checked),
//! never from the handle.

use core::ffi::{c_int, c_void};
use core::mem::{MaybeUninit, align_of, size_of};

use vcvt_rs::{ConvertTo, Converter, Element};

use crate::convert::{overlaps, pair_table, parse_options, vcvt_options};
use crate::dtype::{VCVT_DTYPE_COUNT, dtype_index, name};
use crate::status::{
    VCVT_E_BACKEND, VCVT_E_INVALID, VCVT_E_NULL, VCVT_E_OVERFLOW, VCVT_E_OVERLAP,
    VCVT_E_UNSUPPORTED, VCVT_OK, fail, guard,
};

/// Words of [`vcvt_converter::state`]: room for the Rust `Converter<S, D>` of every pair
/// (asserted for each in `ops`).
const STATE_WORDS: usize = 16;

/// A conversion resolved once (`vcvt_converter` in the header). Caller-owned, filled by
/// [`vcvt_converter_init`]; its fields are private to the library. Plain data: copying it
/// (by assignment or `memcpy`) copies the conversion; it owns nothing and needs no cleanup.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_camel_case_types)]
pub struct vcvt_converter {
    /// Private: the check word.
    pub check: u64,
    /// Private: the dtype pair, `src * VCVT_DTYPE_COUNT + dst`.
    pub pair: u64,
    /// Private: the resolved conversion.
    pub state: [u64; 16],
}

// The header's struct is 8 words (check_header.py compares the fields and the array's length).
const _: () = assert!(size_of::<vcvt_converter>() == 8 * (2 + STATE_WORDS));

const N: usize = VCVT_DTYPE_COUNT as usize;

/// Mixed into the check word.
const MAGIC: u64 = 0x7663_7674_636f_6e76; // "vcvtconv"

/// A static whose address (randomised per process and per library load) enters the check.
static KEY: u8 = 0;

/// The check word of a handle with these fields.
#[inline(always)]
fn check_of(pair: u64, state: &[u64; STATE_WORDS]) -> u64 {
    // The XOR of the words (a few vector instructions: it runs on every call), mixed with a
    // constant, the pair and a per-process key. Any change of one word changes it, and so
    // does a fill of the whole struct with one byte (0, 0xFF, a canary: the state's words
    // cancel out and the pair's word stays; the unit tests check such fills). It does not
    // see two equal changes in two words, or swapped words: it catches accidents (a handle
    // never initialised, memory overwritten by a stray write), not a forged handle.
    let key = core::ptr::addr_of!(KEY) as usize as u64;
    let mut x = 0u64;
    let mut i = 0;
    while i < STATE_WORDS {
        x ^= state[i];
        i += 1;
    }
    MAGIC ^ key ^ pair.rotate_left(32) ^ x
}

/// Makes the state of pair `S -> D` from the options and backend (`None` if the backend
/// cannot run here).
type InitFn = fn(vcvt_rs::Options, Option<vcvt_rs::Backend>) -> Option<[u64; STATE_WORDS]>;
/// Runs the state on `n` values. (`extern "C"`, the ABI of `vcvt_converter_run`, so that
/// the call to it is a tail jump.)
type RunFn = unsafe extern "C" fn(&[u64; STATE_WORDS], *const u8, *mut u8, usize) -> c_int;

/// The two functions of one pair.
#[derive(Clone, Copy)]
struct PairOps {
    init: InitFn,
    run: RunFn,
}

/// The pair's functions, as a table entry.
const fn ops<S: ConvertTo<D>, D: Element, const SP: bool, const DP: bool>() -> PairOps {
    const {
        assert!(size_of::<Converter<S, D>>() <= STATE_WORDS * 8);
        assert!(align_of::<Converter<S, D>>() <= 8);
    }
    PairOps {
        init: init::<S, D>,
        run: run::<S, D, SP, DP>,
    }
}

static OPS: [[Option<PairOps>; N]; N] = pair_table!(PairOps, ops);

fn init<S: ConvertTo<D>, D: Element>(
    options: vcvt_rs::Options,
    backend: Option<vcvt_rs::Backend>,
) -> Option<[u64; STATE_WORDS]> {
    let c = match backend {
        None => Converter::<S, D>::new(options),
        // `resolve` has checked that the backend is available; `on` checks it again.
        Some(b) => Converter::<S, D>::on(b, options).ok()?,
    };
    let mut state = [0u64; STATE_WORDS];
    // SAFETY: the state holds at least `size_of::<Converter<S, D>>()` bytes and is aligned
    // for it (asserted in `ops`); `Converter` is `Copy`, so a byte copy is a valid copy.
    unsafe { state.as_mut_ptr().cast::<Converter<S, D>>().write(c) };
    Some(state)
}

/// Values per chunk on the unaligned path (even, so that packed chunks start on a byte).
const CHUNK: usize = 256;

/// # Safety
/// `state` was made by `init::<S, D>` in this process (the caller checked the check word);
/// for `n > 0`, `src` and `dst` are valid for the bytes of `n` values of `S` and `D` (any
/// alignment; NULL and overlap are checked here).
unsafe extern "C" fn run<S: ConvertTo<D>, D: Element, const SP: bool, const DP: bool>(
    state: &[u64; STATE_WORDS],
    src: *const u8,
    dst: *mut u8,
    n: usize,
) -> c_int {
    let max = isize::MAX as usize / size_of::<S>().max(size_of::<D>());
    if n > max {
        return too_big::<S, D>(n);
    }
    if n == 0 {
        return VCVT_OK;
    }
    if src.is_null() || dst.is_null() {
        return null(n, src.is_null());
    }
    let sl = if SP { n.div_ceil(2) } else { n };
    let dl = if DP { n.div_ceil(2) } else { n };
    let (sb, db) = (sl * size_of::<S>(), dl * size_of::<D>());
    if overlaps(src, sb, dst, db) {
        return overlap(sb, db);
    }
    // SAFETY: `state` holds a `Converter<S, D>` written by `init::<S, D>` (the caller's
    // contract, backed by the check word), aligned (a `u64` array, asserted in `ops`).
    let c = unsafe { state.as_ptr().cast::<Converter<S, D>>().read() };
    let aligned = (src as usize).is_multiple_of(align_of::<S>())
        && (dst as usize).is_multiple_of(align_of::<D>());
    guard(|| {
        if !aligned {
            // SAFETY: as below, through aligned stack buffers.
            unsafe { run_unaligned::<S, D, SP, DP>(&c, src, dst, n) };
            return VCVT_OK;
        }
        // SAFETY: aligned, not NULL, valid for `sl` source values (initialised: the caller's
        // data) and `dl` destination values (may be uninitialised: `MaybeUninit`), not
        // overlapping (checked above); every bit pattern is a value of these types.
        let (s, d) = unsafe {
            (
                core::slice::from_raw_parts(src.cast::<S>(), sl),
                core::slice::from_raw_parts_mut(dst.cast::<MaybeUninit<D>>(), dl),
            )
        };
        // Cannot panic: `sl` and `dl` are the lengths of `n` values of the pair.
        c.convert_uninit(s, d);
        VCVT_OK
    })
}

/// [`run`] for buffers at addresses not aligned for their element type: a chunk at a time
/// through aligned stack buffers. Out of line, so that the buffers are not in the frame of
/// the aligned path.
///
/// # Safety
/// As for [`run`], with `src`/`dst` not NULL and not overlapping.
#[cold]
#[inline(never)]
unsafe fn run_unaligned<S: ConvertTo<D>, D: Element, const SP: bool, const DP: bool>(
    c: &Converter<S, D>,
    src: *const u8,
    dst: *mut u8,
    n: usize,
) {
    let mut sbuf = [0u64; CHUNK];
    let mut dbuf = [0u64; CHUNK];
    let mut i = 0;
    while i < n {
        let m = CHUNK.min(n - i);
        let (s_off, s_len) = if SP {
            (i / 2, m.div_ceil(2))
        } else {
            (i * size_of::<S>(), m)
        };
        let (d_off, d_len) = if DP {
            (i / 2, m.div_ceil(2))
        } else {
            (i * size_of::<D>(), m)
        };
        let (sbytes, dbytes) = (s_len * size_of::<S>(), d_len * size_of::<D>());
        // SAFETY: bytes `s_off .. s_off + sbytes` lie inside the caller's source (chunk `i`
        // of `n` values; packed chunks start on even values, so on a byte); `sbytes` is at
        // most 8 · CHUNK, the buffer's size; the buffers are locals aligned for any element.
        let s = unsafe {
            core::ptr::copy_nonoverlapping(src.add(s_off), sbuf.as_mut_ptr().cast::<u8>(), sbytes);
            core::slice::from_raw_parts(sbuf.as_ptr().cast::<S>(), s_len)
        };
        // SAFETY: the local buffer holds at least `dbytes` bytes, aligned for `D`.
        let d = unsafe {
            core::slice::from_raw_parts_mut(dbuf.as_mut_ptr().cast::<MaybeUninit<D>>(), d_len)
        };
        c.convert_uninit(s, d);
        // SAFETY: bytes `d_off .. d_off + dbytes` lie inside the caller's destination, as
        // for the source above.
        unsafe {
            core::ptr::copy_nonoverlapping(dbuf.as_ptr().cast::<u8>(), dst.add(d_off), dbytes)
        };
        i += m;
    }
}

#[cold]
#[inline(never)]
fn too_big<S, D>(n: usize) -> c_int {
    fail(
        VCVT_E_OVERFLOW,
        format_args!(
            "vcvt_converter_run: {n} values of {}-byte and {}-byte elements exceed the largest \
             object",
            size_of::<S>(),
            size_of::<D>()
        ),
    )
}

#[cold]
#[inline(never)]
fn null(n: usize, src: bool) -> c_int {
    let what = if src { "src" } else { "dst" };
    fail(
        VCVT_E_NULL,
        format_args!("vcvt_converter_run: `{what}` is NULL with {n} values to convert"),
    )
}

#[cold]
#[inline(never)]
fn overlap(sb: usize, db: usize) -> c_int {
    fail(
        VCVT_E_OVERLAP,
        format_args!(
            "vcvt_converter_run: the {sb} source bytes and the {db} destination bytes overlap"
        ),
    )
}

#[cold]
#[inline(never)]
fn bad_handle(what: &str) -> c_int {
    fail(
        VCVT_E_INVALID,
        format_args!(
            "vcvt_converter_run: `converter` {what} (not filled by vcvt_converter_init in this \
             process, or overwritten since)"
        ),
    )
}

/// Resolves the conversion from `src_dtype` to `dst_dtype` under `options` (NULL: the
/// defaults) once, and stores it in `*converter`.
///
/// # Safety
/// `converter` is NULL or valid for writing one `vcvt_converter`; `options` is NULL or
/// points to a `vcvt_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_converter_init(
    converter: *mut vcvt_converter,
    src_dtype: c_int,
    dst_dtype: c_int,
    options: *const vcvt_options,
) -> c_int {
    const F: &str = "vcvt_converter_init";
    guard(|| {
        let Some(si) = dtype_index(src_dtype) else {
            return crate::convert::bad_dtype(F, "src_dtype", src_dtype);
        };
        let Some(di) = dtype_index(dst_dtype) else {
            return crate::convert::bad_dtype(F, "dst_dtype", dst_dtype);
        };
        let Some(ops) = OPS[si][di] else {
            return fail(
                VCVT_E_UNSUPPORTED,
                format_args!(
                    "{F}: no conversion from {} to {} (supported: f32/f64 <-> every format, \
                     every narrow format <-> f16/bf16)",
                    name(si),
                    name(di)
                ),
            );
        };
        let (opts, backend) = match parse_options(options, F) {
            Ok(o) => o,
            Err(code) => return code,
        };
        if converter.is_null() {
            return fail(VCVT_E_NULL, format_args!("{F}: `converter` is NULL"));
        }
        let Some(state) = (ops.init)(opts, backend) else {
            return fail(
                VCVT_E_BACKEND,
                format_args!("{F}: options->backend cannot run on this CPU"),
            );
        };
        let pair = (si * N + di) as u64;
        let h = vcvt_converter {
            check: check_of(pair, &state),
            pair,
            state,
        };
        // SAFETY: not NULL; the caller guarantees it is valid for one write (unaligned
        // writes are fine too).
        unsafe { converter.write_unaligned(h) };
        VCVT_OK
    })
}

/// Runs the conversion of `converter` on `n` values from `src` into `dst`.
///
/// # Safety
/// `converter` is NULL or points to a `vcvt_converter` (one filled by
/// [`vcvt_converter_init`] to succeed); for `n > 0`, `src` is valid for reading and `dst`
/// for writing the bytes of `n` values of the converter's dtypes (any alignment).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_converter_run(
    converter: *const vcvt_converter,
    src: *const c_void,
    dst: *mut c_void,
    n: usize,
) -> c_int {
    if converter.is_null() {
        return fail(
            VCVT_E_NULL,
            format_args!("vcvt_converter_run: `converter` is NULL"),
        );
    }
    if !(converter as usize).is_multiple_of(align_of::<vcvt_converter>()) {
        return bad_handle("is not aligned for a vcvt_converter");
    }
    // SAFETY: not NULL, aligned; the caller guarantees that it points to a `vcvt_converter`
    // (plain words: any bit pattern is a value).
    let h = unsafe { &*converter };
    if h.check != check_of(h.pair, &h.state) {
        return bad_handle("fails its check");
    }
    let Some(ops) = OPS.as_flattened().get(h.pair as usize).copied().flatten() else {
        return bad_handle("names no dtype pair");
    };
    // SAFETY: the state was made by this pair's `init` in this process (the check word,
    // which mixes in this process's address of `KEY`, matches); the buffers are the
    // caller's contract.
    unsafe { (ops.run)(&h.state, src.cast(), dst.cast(), n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_fits_and_the_check_catches_single_word_changes() {
        let mut pairs = 0;
        for (i, e) in OPS.as_flattened().iter().enumerate() {
            let Some(ops) = e else { continue };
            pairs += 1;
            let state = (ops.init)(vcvt_rs::Options::new(), None).unwrap();
            let c = check_of(i as u64, &state);
            for w in 0..STATE_WORDS {
                let mut s = state;
                s[w] ^= 1u64 << (w * 7 % 64);
                assert_ne!(check_of(i as u64, &s), c);
            }
            assert_ne!(check_of(i as u64 ^ 1, &state), c);
        }
        assert_eq!(pairs, 114);
        // A handle filled with one byte never passes.
        for b in [0x00u8, 0xFF, 0x5A, 0xA5, 0xAA, 0x55, 0xCD, 0x01] {
            let w = u64::from_ne_bytes([b; 8]);
            assert_ne!(check_of(w, &[w; STATE_WORDS]), w, "fill {b:#x}");
        }
    }
}
