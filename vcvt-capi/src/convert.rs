//! `vcvt_convert` and `vcvt_round_trip`: element conversions between two dtypes.

use core::ffi::{c_int, c_void};
use core::mem::{MaybeUninit, align_of, size_of};

use vcvt_rs::{
    BF16, Backend, ConvertTo, Element, Error, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E3M4, F8E4M3,
    F8E4M3B11FNUZ, F8E4M3FNUZ, F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, NanPolicy,
    Options, Overflow,
};

use crate::backend::{VCVT_BACKEND_AUTO, resolve};
use crate::dtype::{
    VCVT_BF16, VCVT_DTYPE_COUNT, VCVT_F4E2M1, VCVT_F4E2M1X2, VCVT_F6E2M3, VCVT_F6E3M2, VCVT_F8E3M4,
    VCVT_F8E4M3, VCVT_F8E4M3B11FNUZ, VCVT_F8E4M3FNUZ, VCVT_F8E4M3IEEE, VCVT_F8E5M2,
    VCVT_F8E5M2FNUZ, VCVT_F8E5M3FNU, VCVT_F8E8M0, VCVT_F16, VCVT_F32, VCVT_F64, bytes_of,
    dtype_index, name,
};
use crate::status::{
    VCVT_E_DTYPE, VCVT_E_INVALID, VCVT_E_NULL, VCVT_E_OVERFLOW, VCVT_E_OVERLAP, VCVT_E_UNSUPPORTED,
    VCVT_OK, fail, from_error, guard,
};

/// Each destination format's default overflow policy.
pub const VCVT_OVERFLOW_DEFAULT: c_int = 0;
/// Overflow and ±Inf become ±MAX.
pub const VCVT_OVERFLOW_SATURATE: c_int = 1;
/// Overflow becomes ±Inf, or NaN for formats without Inf.
pub const VCVT_OVERFLOW_NONSATURATING: c_int = 2;

/// NaN keeps its sign and top payload bits, or becomes the format's NaN code.
pub const VCVT_NAN_PRESERVE: c_int = 0;
/// One quiet NaN per format (payload dropped, sign kept).
pub const VCVT_NAN_CANONICAL: c_int = 1;
/// NaN becomes ±MAX with the NaN's sign.
pub const VCVT_NAN_TO_MAX: c_int = 2;

/// Options of one call (`vcvt_options` in the header). All-zero (or a NULL pointer) means
/// the defaults: each format's overflow policy, NaN preserved, the automatic backend.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[allow(non_camel_case_types)]
pub struct vcvt_options {
    /// A `VCVT_OVERFLOW_*` constant.
    pub overflow: c_int,
    /// A `VCVT_NAN_*` constant.
    pub nan: c_int,
    /// A `VCVT_BACKEND_*` constant.
    pub backend: c_int,
}

/// The library options and backend that `options` asks for.
#[inline(always)]
pub(crate) fn parse_options(
    options: *const vcvt_options,
    func: &str,
) -> Result<(Options, Option<Backend>), c_int> {
    if options.is_null() {
        return Ok((Options::new(), resolve(VCVT_BACKEND_AUTO, func)?));
    }
    // SAFETY: not NULL; the caller guarantees that a non-NULL `options` points to a
    // `vcvt_options` (read unaligned, so its alignment does not matter).
    let o = unsafe { options.read_unaligned() };
    let mut opts = Options::new();
    match o.overflow {
        VCVT_OVERFLOW_DEFAULT => {}
        VCVT_OVERFLOW_SATURATE => opts = opts.overflow(Overflow::Saturate),
        VCVT_OVERFLOW_NONSATURATING => opts = opts.overflow(Overflow::NonSaturating),
        v => return Err(invalid(func, "options->overflow", v)),
    }
    opts = opts.nan(match o.nan {
        VCVT_NAN_PRESERVE => NanPolicy::Preserve,
        VCVT_NAN_CANONICAL => NanPolicy::Canonical,
        VCVT_NAN_TO_MAX => NanPolicy::ToMax,
        v => return Err(invalid(func, "options->nan", v)),
    });
    Ok((opts, resolve(o.backend, func)?))
}

#[cold]
#[inline(never)]
pub(crate) fn invalid(func: &str, what: &str, v: c_int) -> c_int {
    fail(
        VCVT_E_INVALID,
        format_args!("{func}: {what} = {v} is not one of its constants"),
    )
}

#[cold]
#[inline(never)]
pub(crate) fn bad_dtype(func: &str, what: &str, v: c_int) -> c_int {
    fail(
        VCVT_E_DTYPE,
        format_args!("{func}: {what} = {v} is not a vcvt_dtype (0..{VCVT_DTYPE_COUNT})"),
    )
}

#[cold]
#[inline(never)]
pub(crate) fn null(func: &str, what: &str, n: usize) -> c_int {
    fail(
        VCVT_E_NULL,
        format_args!("{func}: `{what}` is NULL with {n} values to convert"),
    )
}

#[cold]
#[inline(never)]
pub(crate) fn too_big(func: &str, n: usize, d: usize) -> c_int {
    fail(
        VCVT_E_OVERFLOW,
        format_args!(
            "{func}: {n} values of {} take more bytes than a C object can hold",
            name(d)
        ),
    )
}

/// Whether byte ranges `[a, a + la)` and `[b, b + lb)` share a byte.
#[inline(always)]
pub(crate) fn overlaps(a: *const u8, la: usize, b: *const u8, lb: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    la != 0 && lb != 0 && a < b.wrapping_add(lb) && b < a.wrapping_add(la)
}

// --- the pair table ------------------------------------------------------------------------

/// The whole of [`vcvt_convert`] for one pair, after the dtypes: options, sizes, pointers,
/// then the conversion. Typed, so that sizes and alignments are constants.
type ConvFn = unsafe fn(*const u8, *mut u8, usize, *const vcvt_options) -> c_int;

/// Values per chunk on the unaligned path (even, so that packed chunks start on a byte).
const CHUNK: usize = 256;

/// # Safety
/// As for [`vcvt_convert`], for this pair.
unsafe fn conv<S: ConvertTo<D>, D: Element, const SP: bool, const DP: bool>(
    src: *const u8,
    dst: *mut u8,
    n: usize,
    options: *const vcvt_options,
) -> c_int {
    const F: &str = "vcvt_convert";
    let (opts, backend) = match parse_options(options, F) {
        Ok(o) => o,
        Err(code) => return code,
    };
    // Bytes of each side; no object is larger than isize::MAX bytes.
    let sl = if SP { n.div_ceil(2) } else { n };
    let dl = if DP { n.div_ceil(2) } else { n };
    let max = isize::MAX as usize / size_of::<S>().max(size_of::<D>());
    if n > max {
        return pair_too_big::<S, D>(n);
    }
    let (sb, db) = (sl * size_of::<S>(), dl * size_of::<D>());
    if n == 0 {
        return VCVT_OK;
    }
    if src.is_null() {
        return null(F, "src", n);
    }
    if dst.is_null() {
        return null(F, "dst", n);
    }
    if overlaps(src, sb, dst, db) {
        return overlap(sb, db);
    }
    let aligned = (src as usize).is_multiple_of(align_of::<S>())
        && (dst as usize).is_multiple_of(align_of::<D>());
    // The closure returns the code itself: a `Result` written by the panic guard's frame
    // and read back here would be a narrow store followed by a wide load (a store-forwarding
    // stall that cost about 10 ns a call).
    guard(|| {
        if !aligned {
            // SAFETY: the buffers hold `sb` and `db` bytes (the caller's contract), are not
            // NULL and do not overlap; the backend is available (`resolve`).
            let r = unsafe { conv_unaligned::<S, D, SP, DP>(src, dst, n, opts, backend) };
            return code_of(r);
        }
        // SAFETY: aligned, not NULL, valid for `sl` source elements (initialised: the
        // caller's data) and `dl` destination elements, not overlapping (checked above, per
        // the caller's contract); every bit pattern is a value of these plain-bits types.
        let s = unsafe { core::slice::from_raw_parts(src.cast::<S>(), sl) };
        match backend {
            None => {
                // SAFETY: as above; the destination may be uninitialised memory, which
                // `MaybeUninit` allows.
                let d =
                    unsafe { core::slice::from_raw_parts_mut(dst.cast::<MaybeUninit<D>>(), dl) };
                // Cannot panic: `sl` and `dl` are the lengths of `n` values of the pair.
                vcvt_rs::convert_slice_uninit_with(s, d, opts);
                VCVT_OK
            }
            Some(b) => {
                // SAFETY: as above. (`convert_slice_on` takes an initialised destination;
                // it only writes it, so C memory that was never written is not read.)
                let d = unsafe { core::slice::from_raw_parts_mut(dst.cast::<D>(), dl) };
                code_of(vcvt_rs::convert_slice_on(b, s, d, opts))
            }
        }
    })
}

#[inline(always)]
fn code_of(r: Result<(), Error>) -> c_int {
    match r {
        Ok(()) => VCVT_OK,
        Err(e) => from_error("vcvt_convert", e),
    }
}

#[cold]
#[inline(never)]
fn pair_too_big<S: Element, D: Element>(n: usize) -> c_int {
    fail(
        VCVT_E_OVERFLOW,
        format_args!(
            "vcvt_convert: {n} values of {}-byte and {}-byte elements exceed the largest object",
            size_of::<S>(),
            size_of::<D>()
        ),
    )
}

#[cold]
#[inline(never)]
fn overlap(sb: usize, db: usize) -> c_int {
    fail(
        VCVT_E_OVERLAP,
        format_args!("vcvt_convert: the {sb} source bytes and the {db} destination bytes overlap"),
    )
}

/// [`conv`] for buffers at addresses not aligned for their element type: a chunk at a time
/// through aligned stack buffers, by byte copies. Out of line, so that the 4 KiB of buffers
/// are not in the frame of the aligned path.
///
/// # Safety
/// As for [`conv`].
#[cold]
#[inline(never)]
unsafe fn conv_unaligned<S: ConvertTo<D>, D: Element, const SP: bool, const DP: bool>(
    src: *const u8,
    dst: *mut u8,
    n: usize,
    options: Options,
    backend: Option<Backend>,
) -> Result<(), Error> {
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
        let (sb, db) = (s_len * size_of::<S>(), d_len * size_of::<D>());
        // SAFETY: bytes `s_off .. s_off + sb` lie inside the source's bytes
        // bytes (chunk `i .. i + m` of the `n` values; a packed chunk starts at an even value
        // `i`), and `sb ≤ 8 · CHUNK`, the buffer's size; the buffers are locals, distinct
        // from the caller's memory; u64 storage is aligned for every element type.
        let (s, d) = unsafe {
            core::ptr::copy_nonoverlapping(src.add(s_off), sbuf.as_mut_ptr().cast::<u8>(), sb);
            (
                core::slice::from_raw_parts(sbuf.as_ptr().cast::<S>(), s_len),
                core::slice::from_raw_parts_mut(dbuf.as_mut_ptr().cast::<D>(), d_len),
            )
        };
        run(s, d, options, backend)?;
        // SAFETY: bytes `d_off .. d_off + db` lie inside the destination's
        // size_of::<D>()` bytes, as for the source; `db ≤ 8 · CHUNK`.
        unsafe { core::ptr::copy_nonoverlapping(dbuf.as_ptr().cast::<u8>(), dst.add(d_off), db) };
        i += m;
    }
    Ok(())
}

#[inline(always)]
fn run<S: ConvertTo<D>, D: Element>(
    s: &[S],
    d: &mut [D],
    options: Options,
    backend: Option<Backend>,
) -> Result<(), Error> {
    match backend {
        None => vcvt_rs::try_convert_slice_with(s, d, options),
        Some(b) => vcvt_rs::convert_slice_on(b, s, d, options),
    }
}

const N: usize = VCVT_DTYPE_COUNT as usize;

/// A `[[Option<$T>; N]; N]` table, indexed `[src][dst]` by dtype value, holding
/// `Some($f::<S, D, SP, DP>())` for every supported pair (`SP`/`DP`: that side is packed FP4)
/// and `None` elsewhere: the one list of the supported pairs, for every per-pair table.
macro_rules! pair_table {
    ($T:ty, $f:ident) => {
        $crate::convert::pair_table!(@go $T, $f;
            // f32 and f64 to and from every narrow format.
            wide: [
            F16 = VCVT_F16, false;
            BF16 = VCVT_BF16, false;
            F8E4M3 = VCVT_F8E4M3, false;
            F8E5M2 = VCVT_F8E5M2, false;
            F8E4M3FNUZ = VCVT_F8E4M3FNUZ, false;
            F8E5M2FNUZ = VCVT_F8E5M2FNUZ, false;
            F6E2M3 = VCVT_F6E2M3, false;
            F6E3M2 = VCVT_F6E3M2, false;
            F4E2M1 = VCVT_F4E2M1, false;
            F4E2M1x2 = VCVT_F4E2M1X2, true;
            F8E8M0 = VCVT_F8E8M0, false;
            F8E3M4 = VCVT_F8E3M4, false;
            F8E4M3IEEE = VCVT_F8E4M3IEEE, false;
            F8E4M3B11FNUZ = VCVT_F8E4M3B11FNUZ, false;
            F8E5M3FNU = VCVT_F8E5M3FNU, false;
            ]
            // Every other narrow format to and from F16 and BF16 (one rounding).
            hub: [
            F8E4M3 = VCVT_F8E4M3, false;
            F8E5M2 = VCVT_F8E5M2, false;
            F8E4M3FNUZ = VCVT_F8E4M3FNUZ, false;
            F8E5M2FNUZ = VCVT_F8E5M2FNUZ, false;
            F6E2M3 = VCVT_F6E2M3, false;
            F6E3M2 = VCVT_F6E3M2, false;
            F4E2M1 = VCVT_F4E2M1, false;
            F4E2M1x2 = VCVT_F4E2M1X2, true;
            F8E8M0 = VCVT_F8E8M0, false;
            F8E3M4 = VCVT_F8E3M4, false;
            F8E4M3IEEE = VCVT_F8E4M3IEEE, false;
            F8E4M3B11FNUZ = VCVT_F8E4M3B11FNUZ, false;
            F8E5M3FNU = VCVT_F8E5M3FNU, false;
            ]
        )
    };
    (@go $T:ty, $f:ident;
        wide: [$($wt:ident = $wi:ident, $wp:expr;)*]
        hub: [$($ht:ident = $hi:ident, $hp:expr;)*]) => {{
        use $crate::dtype::*;
        const N: usize = VCVT_DTYPE_COUNT as usize;
        const F32: usize = VCVT_F32 as usize;
        const F64: usize = VCVT_F64 as usize;
        const H: usize = VCVT_F16 as usize;
        const B: usize = VCVT_BF16 as usize;
        let mut t: [[Option<$T>; N]; N] = [[None; N]; N];
        $(
            t[F32][$wi as usize] = Some($f::<f32, vcvt_rs::$wt, false, $wp>());
            t[F64][$wi as usize] = Some($f::<f64, vcvt_rs::$wt, false, $wp>());
            t[$wi as usize][F32] = Some($f::<vcvt_rs::$wt, f32, $wp, false>());
            t[$wi as usize][F64] = Some($f::<vcvt_rs::$wt, f64, $wp, false>());
        )*
        $(
            t[H][$hi as usize] = Some($f::<vcvt_rs::F16, vcvt_rs::$ht, false, $hp>());
            t[B][$hi as usize] = Some($f::<vcvt_rs::BF16, vcvt_rs::$ht, false, $hp>());
            t[$hi as usize][H] = Some($f::<vcvt_rs::$ht, vcvt_rs::F16, $hp, false>());
            t[$hi as usize][B] = Some($f::<vcvt_rs::$ht, vcvt_rs::BF16, $hp, false>());
        )*
        t[H][B] = Some($f::<vcvt_rs::F16, vcvt_rs::BF16, false, false>());
        t[B][H] = Some($f::<vcvt_rs::BF16, vcvt_rs::F16, false, false>());
        t
    }};
}
pub(crate) use pair_table;

/// [`conv`] for one pair, as a table entry.
const fn conv_fn<S: ConvertTo<D>, D: Element, const SP: bool, const DP: bool>() -> ConvFn {
    conv::<S, D, SP, DP>
}

/// `CONVERT[src][dst]`: the conversion of each supported pair, by dtype value.
static CONVERT: [[Option<ConvFn>; N]; N] = pair_table!(ConvFn, conv_fn);

/// Converts `n` values from `src` (dtype `src_dtype`) to `dst` (dtype `dst_dtype`).
///
/// # Safety
/// For `n > 0`: `src` is valid for reading and `dst` for writing the bytes of `n` values of
/// their dtypes (any alignment); `options` is NULL or points to a `vcvt_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_convert(
    src: *const c_void,
    src_dtype: c_int,
    dst: *mut c_void,
    dst_dtype: c_int,
    n: usize,
    options: *const vcvt_options,
) -> c_int {
    let f = match (dtype_index(src_dtype), dtype_index(dst_dtype)) {
        (Some(si), Some(di)) => match CONVERT[si][di] {
            Some(f) => f,
            None => return unsupported_pair(si, di),
        },
        _ => return bad_dtypes(src_dtype, dst_dtype),
    };
    // SAFETY: `f` is the pair's function; its contract is this function's.
    unsafe { f(src.cast(), dst.cast(), n, options) }
}

#[cold]
#[inline(never)]
fn bad_dtypes(src_dtype: c_int, dst_dtype: c_int) -> c_int {
    if dtype_index(src_dtype).is_none() {
        bad_dtype("vcvt_convert", "src_dtype", src_dtype)
    } else {
        bad_dtype("vcvt_convert", "dst_dtype", dst_dtype)
    }
}

#[cold]
#[inline(never)]
fn unsupported_pair(si: usize, di: usize) -> c_int {
    fail(
        VCVT_E_UNSUPPORTED,
        format_args!(
            "vcvt_convert: no conversion from {} to {} (supported: f32/f64 <-> every format, \
             every narrow format <-> f16/bf16)",
            name(si),
            name(di)
        ),
    )
}

// --- round trip ----------------------------------------------------------------------------

/// A round trip of `n` values in place (`x` checked, backend available).
type RoundTripFn = unsafe fn(*mut u8, usize, Options, Backend);

/// # Safety
/// `x` is valid for reading and writing `n` values of `W`, not NULL; `backend` is available.
unsafe fn rt<F: Element + ConvertTo<W>, W: ConvertTo<F>>(
    x: *mut u8,
    n: usize,
    options: Options,
    backend: Backend,
) {
    if (x as usize).is_multiple_of(align_of::<W>()) {
        // SAFETY: aligned, valid for `n` values of `W` (the caller's guarantee).
        let s = unsafe { core::slice::from_raw_parts_mut(x.cast::<W>(), n) };
        // Cannot fail: the backend is available.
        let _ = vcvt_rs::round_trip_on::<F, W>(backend, s, options);
        return;
    }
    let mut buf = [0u64; CHUNK];
    let mut i = 0;
    while i < n {
        let m = CHUNK.min(n - i);
        let b = m * size_of::<W>();
        // SAFETY: bytes `i · size .. + b` lie inside the caller's `n` values; `b ≤ 8 · CHUNK`;
        // the buffer is a local, aligned for `W`.
        let s = unsafe {
            let p = x.add(i * size_of::<W>());
            core::ptr::copy_nonoverlapping(p, buf.as_mut_ptr().cast::<u8>(), b);
            core::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<W>(), m)
        };
        let _ = vcvt_rs::round_trip_on::<F, W>(backend, s, options);
        // SAFETY: as above, back to the same bytes.
        unsafe {
            core::ptr::copy_nonoverlapping(buf.as_ptr().cast::<u8>(), x.add(i * size_of::<W>()), b)
        };
        i += m;
    }
}

/// `ROUND_TRIP[format][wide]`: wide 0 is f32, 1 is f64.
static ROUND_TRIP: [[Option<RoundTripFn>; 2]; N] = {
    let mut t: [[Option<RoundTripFn>; 2]; N] = [[None; 2]; N];
    macro_rules! formats {
        ($($ty:ty = $i:expr;)*) => {$(
            t[$i as usize][0] = Some(rt::<$ty, f32> as RoundTripFn);
            t[$i as usize][1] = Some(rt::<$ty, f64> as RoundTripFn);
        )*};
    }
    formats! {
        F16 = VCVT_F16;
        BF16 = VCVT_BF16;
        F8E4M3 = VCVT_F8E4M3;
        F8E5M2 = VCVT_F8E5M2;
        F8E4M3FNUZ = VCVT_F8E4M3FNUZ;
        F8E5M2FNUZ = VCVT_F8E5M2FNUZ;
        F6E2M3 = VCVT_F6E2M3;
        F6E3M2 = VCVT_F6E3M2;
        F4E2M1 = VCVT_F4E2M1;
        F4E2M1x2 = VCVT_F4E2M1X2;
        F8E8M0 = VCVT_F8E8M0;
        F8E3M4 = VCVT_F8E3M4;
        F8E4M3IEEE = VCVT_F8E4M3IEEE;
        F8E4M3B11FNUZ = VCVT_F8E4M3B11FNUZ;
        F8E5M3FNU = VCVT_F8E5M3FNU;
    }
    t
};

/// Replaces each of the `n` values of `x` (dtype `x_dtype`: `VCVT_F32` or `VCVT_F64`) by its
/// value after narrowing to `format` and widening back.
///
/// # Safety
/// For `n > 0`, `x` is valid for reading and writing `n` values of `x_dtype` (any
/// alignment); `options` is NULL or points to a `vcvt_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_round_trip(
    x: *mut c_void,
    x_dtype: c_int,
    format: c_int,
    n: usize,
    options: *const vcvt_options,
) -> c_int {
    const F: &str = "vcvt_round_trip";
    guard(|| {
        let Some(xi) = dtype_index(x_dtype) else {
            return bad_dtype(F, "x_dtype", x_dtype);
        };
        let Some(fi) = dtype_index(format) else {
            return bad_dtype(F, "format", format);
        };
        let wide = match x_dtype {
            VCVT_F32 => 0,
            VCVT_F64 => 1,
            _ => {
                return fail(
                    VCVT_E_UNSUPPORTED,
                    format_args!("{F}: x_dtype must be f32 or f64, not {}", name(xi)),
                );
            }
        };
        let Some(f) = ROUND_TRIP[fi][wide] else {
            return fail(
                VCVT_E_UNSUPPORTED,
                format_args!("{F}: format must be a narrow format, not {}", name(fi)),
            );
        };
        let (opts, backend) = match parse_options(options, F) {
            Ok(o) => o,
            Err(code) => return code,
        };
        if bytes_of(xi, n).is_none() {
            return too_big(F, n, xi);
        }
        if n == 0 {
            return VCVT_OK;
        }
        if x.is_null() {
            return null(F, "x", n);
        }
        // SAFETY: `f` is the format's round trip for `x_dtype`; `x` holds `n` such values
        // (the caller's contract) and is not NULL; the backend is available (`resolve`).
        unsafe { f(x.cast(), n, opts, backend.unwrap_or_else(Backend::active)) };
        VCVT_OK
    })
}
