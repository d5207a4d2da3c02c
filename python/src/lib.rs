//! `vcvt._vcvt`: the native half of the `vcvt` Python package.
//!
//! The Python half (`python/vcvt/__init__.py`) resolves dtypes, shapes, `out=` and
//! non-contiguous layouts, and hands this module C-contiguous numpy arrays plus format names.
//! This module checks every array again (C-contiguous, aligned, element size, writeable,
//! lengths, no overlap between what it reads and what it writes) before it writes anything,
//! then converts with the GIL released, serially or on a rayon pool.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use vcvt::block::{
    BlockDest, BlockFp8, BlockSource, Fp8Profile, Mx, MxElement, MxLayout, MxProfile, NvLayout,
    NvProfile, Nvfp4, Shape,
};
use vcvt::{
    BF16, ConvertTo, Element, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ,
    F8E4M3FNUZ, F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, NanPolicy, Options,
    Overflow,
};

/// The element formats, by the names the Python side uses (numpy/ml_dtypes dtype names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fmt {
    F32,
    F64,
    F16,
    BF16,
    E4M3,
    E5M2,
    E4M3Fnuz,
    E5M2Fnuz,
    E2M3,
    E3M2,
    E2M1,
    E2M1x2,
    E8M0,
    E3M4,
    E4M3Ieee,
    E4M3B11Fnuz,
    E5M3Fnu,
}

/// Every format with its name, in the order `formats()` lists them.
const FORMATS: [(&str, Fmt); 17] = [
    ("float32", Fmt::F32),
    ("float64", Fmt::F64),
    ("float16", Fmt::F16),
    ("bfloat16", Fmt::BF16),
    ("float8_e4m3fn", Fmt::E4M3),
    ("float8_e5m2", Fmt::E5M2),
    ("float8_e4m3fnuz", Fmt::E4M3Fnuz),
    ("float8_e5m2fnuz", Fmt::E5M2Fnuz),
    ("float6_e2m3fn", Fmt::E2M3),
    ("float6_e3m2fn", Fmt::E3M2),
    ("float4_e2m1fn", Fmt::E2M1),
    ("float4_e2m1fn_x2", Fmt::E2M1x2),
    ("float8_e8m0fnu", Fmt::E8M0),
    ("float8_e3m4", Fmt::E3M4),
    ("float8_e4m3", Fmt::E4M3Ieee),
    ("float8_e4m3b11fnuz", Fmt::E4M3B11Fnuz),
    ("float8_e5m3fnu", Fmt::E5M3Fnu),
];

impl Fmt {
    fn parse(name: &str) -> PyResult<Fmt> {
        FORMATS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, f)| f)
            .ok_or_else(|| PyTypeError::new_err(format!("vcvt has no format named {name:?}")))
    }

    fn name(self) -> &'static str {
        FORMATS
            .iter()
            .find(|(_, f)| *f == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    /// Bytes per array element.
    fn itemsize(self) -> usize {
        match self {
            Fmt::F64 => 8,
            Fmt::F32 => 4,
            Fmt::F16 | Fmt::BF16 => 2,
            _ => 1,
        }
    }
}

/// Where the work runs.
#[derive(Clone, Copy, Debug)]
enum Threads {
    /// On the calling thread.
    Serial,
    /// On rayon's global pool (every core), split by the library's `par_*` functions.
    Global,
    /// On a pool of this many threads (made once per count and kept).
    Pool(usize),
}

impl Threads {
    fn from_arg(threads: Option<usize>) -> PyResult<Threads> {
        match threads {
            None => Ok(Threads::Global),
            Some(0) => Err(PyValueError::new_err(
                "threads must be None (every core) or a positive integer, not 0",
            )),
            Some(1) => Ok(Threads::Serial),
            Some(n) => Ok(Threads::Pool(n)),
        }
    }

    /// Runs `f` with `parallel` true unless serial, inside the pool the count asks for.
    ///
    /// In a process forked after this module first ran parallel work (multiprocessing's
    /// `fork` start method, as dask and Ray workers may use), the pools' threads did not
    /// survive the fork and work sent to them would never run: such a process converts on
    /// its calling thread instead.
    fn run<R: Send>(self, f: impl FnOnce(bool) -> R + Send) -> Result<R, String> {
        static POOL_PID: OnceLock<u32> = OnceLock::new();
        let forked = matches!(self, Threads::Global | Threads::Pool(_))
            && *POOL_PID.get_or_init(std::process::id) != std::process::id();
        match self {
            _ if forked => Ok(f(false)),
            Threads::Serial => Ok(f(false)),
            Threads::Global => Ok(f(true)),
            Threads::Pool(n) => Ok(pool(n)?.install(|| f(true))),
        }
    }
}

/// The rayon pool of `n` threads, made on first use and kept for the process.
fn pool(n: usize) -> Result<Arc<rayon::ThreadPool>, String> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = pools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = map.get(&n) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map_err(|e| format!("could not start a pool of {n} threads: {e}"))?;
    let p = Arc::new(p);
    map.insert(n, p.clone());
    Ok(p)
}

/// The leading fields of numpy's `PyArrayObject` (`PyArrayObject_fields` in numpy's
/// `ndarraytypes.h`): numpy's public C ABI, the same in numpy 1.x and 2.x, read here as
/// numpy's own accessor macros (`PyArray_DATA`, `PyArray_NDIM`, `PyArray_DIMS`,
/// `PyArray_FLAGS`) read it.
#[repr(C)]
struct ArrayFields {
    ob_base: pyo3::ffi::PyObject,
    data: *mut std::ffi::c_char,
    nd: std::ffi::c_int,
    dimensions: *const isize,
    strides: *const isize,
    base: *mut pyo3::ffi::PyObject,
    descr: *mut pyo3::ffi::PyObject,
    flags: std::ffi::c_int,
}

/// numpy's array flags (`NPY_ARRAY_*`).
const NPY_ARRAY_C_CONTIGUOUS: std::ffi::c_int = 0x0001;
const NPY_ARRAY_ALIGNED: std::ffi::c_int = 0x0100;
const NPY_ARRAY_WRITEABLE: std::ffi::c_int = 0x0400;

/// `numpy.ndarray`, imported once.
fn ndarray_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static NDARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    NDARRAY.import(py, "numpy", "ndarray")
}

/// A checked view of a C-contiguous, aligned numpy array's memory: its address, element
/// count and element size. Valid while the array object it came from is alive and not
/// resized (numpy refuses to resize an array that others reference).
#[derive(Clone, Copy, Debug)]
struct Mem {
    addr: usize,
    len: usize,
    itemsize: usize,
}

impl Mem {
    /// Checks array `a` (called `what` in errors) and returns its memory; a layout this
    /// module cannot read in place (not C-contiguous, or unaligned) is an error.
    fn of(a: &Bound<'_, PyAny>, what: &str, itemsize: usize, write: bool) -> PyResult<Mem> {
        Mem::probe(a, what, itemsize, write)?
            .ok_or_else(|| PyValueError::new_err(format!("{what} is not C-contiguous and aligned")))
    }

    /// As [`of`](Self::of), but `Ok(None)` for a layout this module cannot read in place
    /// (not C-contiguous, or unaligned), which the Python side handles with a copy.
    fn probe(
        a: &Bound<'_, PyAny>,
        what: &str,
        itemsize: usize,
        write: bool,
    ) -> PyResult<Option<Mem>> {
        let py = a.py();
        if !a.is_instance(ndarray_type(py)?)? {
            return Err(PyTypeError::new_err(format!(
                "{what} must be a numpy array, not {}",
                a.get_type().name()?
            )));
        }
        let got: usize = a.getattr(pyo3::intern!(py, "itemsize"))?.extract()?;
        if got != itemsize {
            return Err(PyTypeError::new_err(format!(
                "{what} has {got}-byte elements (dtype {}); {itemsize}-byte elements are needed",
                a.getattr(pyo3::intern!(py, "dtype"))?
            )));
        }
        // SAFETY: `a` is an instance of `numpy.ndarray` (checked above), whose object memory
        // starts with `PyArrayObject_fields` (`ArrayFields` declares its leading fields);
        // `a` is alive for this call. `dimensions` holds `nd` sizes (numpy's invariant).
        let (flags, data, dims) = unsafe {
            let p = a.as_ptr().cast::<ArrayFields>();
            let nd = usize::try_from((*p).nd).unwrap_or(0);
            let dims = if nd == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts((*p).dimensions, nd)
            };
            ((*p).flags, (*p).data as usize, dims)
        };
        if write && flags & NPY_ARRAY_WRITEABLE == 0 {
            return Err(PyValueError::new_err(format!("{what} is read-only")));
        }
        if flags & NPY_ARRAY_C_CONTIGUOUS == 0
            || flags & NPY_ARRAY_ALIGNED == 0
            || data % itemsize.min(8) != 0
        {
            return Ok(None);
        }
        let len = dims
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
            .ok_or_else(|| PyValueError::new_err(format!("{what} has an invalid shape")))?;
        Ok(Some(Mem {
            addr: data,
            len,
            itemsize,
        }))
    }

    fn bytes(&self) -> usize {
        self.len * self.itemsize
    }

    /// Whether the byte ranges of `self` and `other` share a byte.
    fn overlaps(&self, other: &Mem) -> bool {
        self.bytes() > 0
            && other.bytes() > 0
            && self.addr < other.addr + other.bytes()
            && other.addr < self.addr + self.bytes()
    }

    /// The memory as a slice of `T`.
    ///
    /// # Safety
    /// `T` must be a plain-old-data type of `self.itemsize` bytes and alignment at most
    /// `self.itemsize` (or 8); the array must stay alive and unwritten by others for `'a`.
    unsafe fn slice<'a, T>(&self) -> &'a [T] {
        debug_assert_eq!(size_of::<T>(), self.itemsize);
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `Mem::of` checked that the array is C-contiguous with `len` elements of
        // `itemsize` bytes from `addr` (so `len * size_of::<T>()` bytes are in bounds), and
        // that `addr` is aligned for `T`; the caller keeps the array alive.
        unsafe { std::slice::from_raw_parts(self.addr as *const T, self.len) }
    }

    /// The memory as a mutable slice of `T`.
    ///
    /// # Safety
    /// As for [`slice`](Self::slice), the array writeable (checked by `Mem::of` with
    /// `write`), and no other slice of the same bytes alive for `'a`.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice_mut<'a, T>(&self) -> &'a mut [T] {
        debug_assert_eq!(size_of::<T>(), self.itemsize);
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as in `slice`; the caller guarantees that nothing else reads or writes
        // these bytes for `'a` (the entry points check that no input overlaps an output).
        unsafe { std::slice::from_raw_parts_mut(self.addr as *mut T, self.len) }
    }
}

fn check_disjoint(pairs: &[(&Mem, &str, &Mem, &str)]) -> PyResult<()> {
    for (a, an, b, bn) in pairs {
        if a.overlaps(b) {
            return Err(PyValueError::new_err(format!(
                "{an} and {bn} share memory; pass arrays that do not overlap"
            )));
        }
    }
    Ok(())
}

fn parse_overflow(s: Option<&str>) -> PyResult<Option<Overflow>> {
    match s {
        None => Ok(None),
        Some("saturate") => Ok(Some(Overflow::Saturate)),
        Some("nonsaturating") => Ok(Some(Overflow::NonSaturating)),
        Some(o) => Err(PyValueError::new_err(format!(
            "overflow must be None, \"saturate\" or \"nonsaturating\", not {o:?}"
        ))),
    }
}

fn parse_nan(s: Option<&str>) -> PyResult<NanPolicy> {
    match s {
        None | Some("preserve") => Ok(NanPolicy::Preserve),
        Some("canonical") => Ok(NanPolicy::Canonical),
        Some("to_max") => Ok(NanPolicy::ToMax),
        Some(o) => Err(PyValueError::new_err(format!(
            "nan must be None, \"preserve\", \"canonical\" or \"to_max\", not {o:?}"
        ))),
    }
}

fn options(overflow: Option<&str>, nan: Option<&str>) -> PyResult<Options> {
    let mut o = Options::new().nan(parse_nan(nan)?);
    if let Some(ov) = parse_overflow(overflow)? {
        o = o.overflow(ov);
    }
    Ok(o)
}

/// A library error as a Python `ValueError` (every one names a length or shape problem).
fn lib_err(e: vcvt::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

// --- element conversions ------------------------------------------------------------------

type ConvFn = fn(Mem, Mem, Options);

/// Converts `src` to `dst` on the calling thread (lengths already checked).
fn conv<S: ConvertTo<D> + bytemuck::Pod, D: Element + bytemuck::Pod>(
    src: Mem,
    dst: Mem,
    opts: Options,
) {
    // SAFETY: `convert` checked both arrays for `S`'s and `D`'s sizes (the format table's
    // item sizes are those of the element types, whose alignment is at most their size),
    // checked that they do not overlap, and holds references to both for this call; the
    // parallel split hands each call disjoint sub-ranges of them.
    let (s, d) = unsafe { (src.slice::<S>(), dst.slice_mut::<D>()) };
    vcvt::convert_slice_with(s, d, opts);
}

/// Runs `f` over `src` -> `dst` (pair `s -> d`, lengths checked), split into chunks of
/// `vcvt::PAR_CHUNK` values on the current rayon pool when `parallel`. The split is done
/// here, once for every pair, so the per-pair code stays serial (and small); every value is
/// converted on its own, so where a chunk ends cannot change a result.
fn run_conv(f: ConvFn, s: Fmt, d: Fmt, src: Mem, dst: Mem, opts: Options, parallel: bool) {
    use rayon::prelude::*;
    let values = if s == Fmt::E2M1x2 { dst.len } else { src.len };
    if !parallel || values < vcvt::PAR_MIN_VALUES {
        return f(src, dst, opts);
    }
    // An even chunk length: a packed side splits between bytes.
    const CHUNK: usize = vcvt::PAR_CHUNK;
    let chunks = values.div_ceil(CHUNK);
    let at = |m: Mem, packed: bool, v: usize| {
        if v == values {
            m.len
        } else if packed {
            v / 2
        } else {
            v
        }
    };
    let sub = |m: Mem, lo: usize, hi: usize| Mem {
        addr: m.addr + lo * m.itemsize,
        len: hi - lo,
        itemsize: m.itemsize,
    };
    (0..chunks).into_par_iter().for_each(|k| {
        let (lo, hi) = (k * CHUNK, ((k + 1) * CHUNK).min(values));
        let (sp, dp) = (s == Fmt::E2M1x2, d == Fmt::E2M1x2);
        let sm = sub(src, at(src, sp, lo), at(src, sp, hi));
        let dm = sub(dst, at(dst, dp, lo), at(dst, dp, hi));
        f(sm, dm, opts);
    });
}

/// The conversion of pair `s -> d`, or `None` if the library has no such pair.
fn pair(s: Fmt, d: Fmt) -> Option<ConvFn> {
    macro_rules! leaves {
        ($m:ident) => {
            $m!(E4M3, F8E4M3);
            $m!(E5M2, F8E5M2);
            $m!(E4M3Fnuz, F8E4M3FNUZ);
            $m!(E5M2Fnuz, F8E5M2FNUZ);
            $m!(E2M3, F6E2M3);
            $m!(E3M2, F6E3M2);
            $m!(E2M1, F4E2M1);
            $m!(E2M1x2, F4E2M1x2);
            $m!(E8M0, F8E8M0);
            $m!(E3M4, F8E3M4);
            $m!(E4M3Ieee, F8E4M3IEEE);
            $m!(E4M3B11Fnuz, F8E4M3B11FNUZ);
            $m!(E5M3Fnu, F8E5M3FNU);
        };
    }
    macro_rules! try_pair {
        ($sv:ident, $S:ty, $dv:ident, $D:ty) => {
            if s == Fmt::$sv && d == Fmt::$dv {
                return Some(conv::<$S, $D>);
            }
        };
    }
    macro_rules! narrow {
        ($v:ident, $T:ty) => {
            try_pair!(F32, f32, $v, $T);
            try_pair!(F64, f64, $v, $T);
            try_pair!($v, $T, F32, f32);
            try_pair!($v, $T, F64, f64);
        };
    }
    macro_rules! hub {
        ($v:ident, $T:ty) => {
            try_pair!(F16, F16, $v, $T);
            try_pair!(BF16, BF16, $v, $T);
            try_pair!($v, $T, F16, F16);
            try_pair!($v, $T, BF16, BF16);
        };
    }
    narrow!(F16, F16);
    narrow!(BF16, BF16);
    leaves!(narrow);
    leaves!(hub);
    try_pair!(F16, F16, BF16, BF16);
    try_pair!(BF16, BF16, F16, F16);
    None
}

/// The destination length a source of `n` elements needs for pair `s -> d`.
fn dst_len(s: Fmt, d: Fmt, n: usize) -> usize {
    match (s, d) {
        (Fmt::E2M1x2, _) => 2 * n,
        (_, Fmt::E2M1x2) => n.div_ceil(2),
        _ => n,
    }
}

/// Arrays shorter than this convert without releasing the GIL (releasing and taking it back
/// costs more than converting them).
const DETACH_MIN: usize = 1 << 14;

/// `convert(src_format, dst_format, src, dst, overflow=None, nan=None, threads=None)`:
/// converts array `src` (holding `src_format` elements) into writeable array `dst`.
/// Returns 0 when done; 1 (nothing written) when `src` is not C-contiguous and aligned; 2
/// (nothing written) when `dst` is not C-contiguous and aligned or shares memory with `src`.
/// Every other problem raises `TypeError`/`ValueError` before anything is written.
#[pyfunction]
#[pyo3(signature = (src_format, dst_format, src, dst, overflow=None, nan=None, threads=None))]
#[allow(clippy::too_many_arguments)]
fn convert(
    py: Python<'_>,
    src_format: &str,
    dst_format: &str,
    src: &Bound<'_, PyAny>,
    dst: &Bound<'_, PyAny>,
    overflow: Option<&str>,
    nan: Option<&str>,
    threads: Option<usize>,
) -> PyResult<u8> {
    let (s, d) = (Fmt::parse(src_format)?, Fmt::parse(dst_format)?);
    let f = pair(s, d).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "vcvt has no conversion from {} to {} (pairs: float32/float64 <-> every narrow \
             format, float16/bfloat16 <-> every other narrow format)",
            s.name(),
            d.name()
        ))
    })?;
    let opts = options(overflow, nan)?;
    let threads = Threads::from_arg(threads)?;
    let Some(sm) = Mem::probe(src, "the source array", s.itemsize(), false)? else {
        return Ok(1);
    };
    let Some(dm) = Mem::probe(dst, "out", d.itemsize(), true)? else {
        return Ok(2);
    };
    let need = dst_len(s, d, sm.len);
    let ok = match (s, d) {
        // A packed source of n bytes fills 2n values, or 2n - 1 (the last high nibble spare).
        (Fmt::E2M1x2, _) => dm.len.div_ceil(2) == sm.len,
        _ => dm.len == need,
    };
    if !ok {
        return Err(PyValueError::new_err(format!(
            "out has {} elements; {} {} elements convert into {need} {} elements",
            dm.len,
            sm.len,
            s.name(),
            d.name()
        )));
    }
    if sm.overlaps(&dm) {
        return Ok(2);
    }
    let n = sm.len.max(dm.len);
    if n < DETACH_MIN {
        f(sm, dm, opts);
        return Ok(0);
    }
    py.detach(|| {
        if n < vcvt::PAR_MIN_VALUES {
            // Serial whatever `threads` says: no pool is entered for a short array.
            f(sm, dm, opts);
            Ok(())
        } else {
            threads.run(|par| run_conv(f, s, d, sm, dm, opts, par))
        }
    })
    .map_err(PyValueError::new_err)?;
    Ok(0)
}

fn round_trip_as<F>(x: Mem, opts: Options, wide64: bool, parallel: bool)
where
    F: Element + ConvertTo<f32> + ConvertTo<f64>,
    f32: ConvertTo<F>,
    f64: ConvertTo<F>,
{
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    if wide64 {
        // SAFETY: `round_trip` checked `x` as a writeable f64 array and holds it.
        let v = unsafe { x.slice_mut::<f64>() };
        if parallel {
            v.par_chunks_mut(CHUNK)
                .for_each(|c| vcvt::round_trip_f64_with::<F>(c, opts));
        } else {
            vcvt::round_trip_f64_with::<F>(v, opts);
        }
    } else {
        // SAFETY: `round_trip` checked `x` as a writeable f32 array and holds it.
        let v = unsafe { x.slice_mut::<f32>() };
        if parallel {
            v.par_chunks_mut(CHUNK)
                .for_each(|c| vcvt::round_trip_with::<F>(c, opts));
        } else {
            vcvt::round_trip_with::<F>(v, opts);
        }
    }
}

/// `round_trip_inplace(x, format, overflow=None, nan=None, threads=None)`: replaces each value
/// of the C-contiguous float32/float64 array `x` by its value narrowed to `format` and widened
/// back.
#[pyfunction]
#[pyo3(signature = (x, format, overflow=None, nan=None, threads=None))]
fn round_trip_inplace(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    format: &str,
    overflow: Option<&str>,
    nan: Option<&str>,
    threads: Option<usize>,
) -> PyResult<()> {
    let f = Fmt::parse(format)?;
    let opts = options(overflow, nan)?;
    let threads = Threads::from_arg(threads)?;
    let itemsize: usize = if x.is_instance(ndarray_type(py)?)? {
        x.getattr(pyo3::intern!(py, "itemsize"))?.extract()?
    } else {
        0
    };
    let wide64 = match itemsize {
        8 => true,
        4 => false,
        n => {
            return Err(PyTypeError::new_err(format!(
                "round_trip needs a float32 or float64 numpy array ({n}-byte elements given)"
            )));
        }
    };
    let xm = Mem::of(x, "the array", if wide64 { 8 } else { 4 }, true)?;
    type RtFn = fn(Mem, Options, bool, bool);
    let g: RtFn = match f {
        Fmt::F16 => round_trip_as::<F16>,
        Fmt::BF16 => round_trip_as::<BF16>,
        Fmt::E4M3 => round_trip_as::<F8E4M3>,
        Fmt::E5M2 => round_trip_as::<F8E5M2>,
        Fmt::E4M3Fnuz => round_trip_as::<F8E4M3FNUZ>,
        Fmt::E5M2Fnuz => round_trip_as::<F8E5M2FNUZ>,
        Fmt::E2M3 => round_trip_as::<F6E2M3>,
        Fmt::E3M2 => round_trip_as::<F6E3M2>,
        Fmt::E2M1 | Fmt::E2M1x2 => round_trip_as::<F4E2M1>,
        Fmt::E8M0 => round_trip_as::<F8E8M0>,
        Fmt::E3M4 => round_trip_as::<F8E3M4>,
        Fmt::E4M3Ieee => round_trip_as::<F8E4M3IEEE>,
        Fmt::E4M3B11Fnuz => round_trip_as::<F8E4M3B11FNUZ>,
        Fmt::E5M3Fnu => round_trip_as::<F8E5M3FNU>,
        Fmt::F32 | Fmt::F64 => {
            return Err(PyTypeError::new_err(format!(
                "round_trip needs a narrow format, not {}",
                f.name()
            )));
        }
    };
    let small = xm.len < vcvt::PAR_MIN_VALUES;
    py.detach(|| {
        if small {
            g(xm, opts, wide64, false);
            Ok(())
        } else {
            threads.run(|par| g(xm, opts, wide64, par))
        }
    })
    .map_err(PyValueError::new_err)
}

/// The name of the backend the conversions run on (`avx2`, `avx512`, `neon`, `scalar`, ...).
#[pyfunction]
fn backend() -> String {
    vcvt::Backend::active().name().to_string()
}

/// The names of the backends this CPU can run.
#[pyfunction]
fn available_backends() -> Vec<String> {
    vcvt::Backend::available()
        .map(|b| b.name().to_string())
        .collect()
}

/// The format names, in a fixed order.
#[pyfunction]
fn format_names() -> Vec<&'static str> {
    FORMATS.iter().map(|(n, _)| *n).collect()
}

/// Whether the library converts `src` to `dst`.
#[pyfunction]
fn has_pair(src: &str, dst: &str) -> PyResult<bool> {
    Ok(pair(Fmt::parse(src)?, Fmt::parse(dst)?).is_some())
}

// --- block formats ------------------------------------------------------------------------

/// The unquantized side of a block conversion: f32, BF16 or F16.
#[derive(Clone, Copy, Debug)]
enum Wide {
    F32,
    BF16,
    F16,
}

impl Wide {
    fn parse(name: &str) -> PyResult<Wide> {
        match name {
            "float32" => Ok(Wide::F32),
            "bfloat16" => Ok(Wide::BF16),
            "float16" => Ok(Wide::F16),
            o => Err(PyTypeError::new_err(format!(
                "block formats take and give float32, bfloat16 or float16 values, not {o}"
            ))),
        }
    }

    fn itemsize(self) -> usize {
        match self {
            Wide::F32 => 4,
            _ => 2,
        }
    }
}

fn shape_of(rows: usize, cols: usize) -> Shape {
    Shape::matrix(rows, cols)
}

fn mx_of(element: &str, profile: &str, layout: &str) -> PyResult<Mx> {
    let e = match element {
        "mxfp8_e4m3" | "mxfp8" => MxElement::E4M3,
        "mxfp8_e5m2" => MxElement::E5M2,
        "mxfp6_e2m3" => MxElement::E2M3,
        "mxfp6_e3m2" => MxElement::E3M2,
        "mxfp4" => MxElement::E2M1,
        o => {
            return Err(PyValueError::new_err(format!(
                "unknown MX format {o:?}: use \"mxfp4\", \"mxfp6_e2m3\", \"mxfp6_e3m2\", \
                 \"mxfp8_e4m3\" or \"mxfp8_e5m2\""
            )));
        }
    };
    let p = match profile {
        "ocp" => MxProfile::Ocp,
        "ceil" => MxProfile::Ceil,
        "ggml" => MxProfile::Ggml,
        "mlx" => MxProfile::Mlx,
        o => {
            return Err(PyValueError::new_err(format!(
                "unknown MX profile {o:?}: use \"ceil\", \"ocp\", \"ggml\" or \"mlx\""
            )));
        }
    };
    let l = match layout {
        "planar" => MxLayout::Planar,
        "ggml" => MxLayout::Ggml,
        o => {
            return Err(PyValueError::new_err(format!(
                "unknown MX layout {o:?}: use \"planar\" or \"ggml\""
            )));
        }
    };
    Ok(Mx::new(e).profile(p).layout(l))
}

fn nv_of(profile: &str, layout: &str) -> PyResult<Nvfp4> {
    let p = match profile {
        "modelopt" => NvProfile::ModelOpt,
        "mlx" => NvProfile::Mlx,
        "ggml" => NvProfile::Ggml,
        o => {
            return Err(PyValueError::new_err(format!(
                "unknown NVFP4 profile {o:?}: use \"modelopt\", \"mlx\" or \"ggml\""
            )));
        }
    };
    let l = match layout {
        "planar" => NvLayout::Planar,
        "ggml" => NvLayout::Ggml,
        o => {
            return Err(PyValueError::new_err(format!(
                "unknown NVFP4 layout {o:?}: use \"planar\" or \"ggml\""
            )));
        }
    };
    Ok(Nvfp4::new().profile(p).layout(l))
}

fn fp8_of(tile_rows: usize, tile_cols: usize, profile: &str) -> PyResult<BlockFp8> {
    let p = match profile {
        "deepseek" => Fp8Profile::DeepSeek,
        "ue8m0" => Fp8Profile::Ue8m0,
        o => {
            return Err(PyValueError::new_err(format!(
                "unknown block FP8 profile {o:?}: use \"deepseek\" or \"ue8m0\""
            )));
        }
    };
    Ok(BlockFp8::new(tile_rows, tile_cols).profile(p))
}

/// A block scheme: what runs the quantization and dequantization of one source/dest type.
#[derive(Clone, Copy, Debug)]
enum Scheme {
    Mx(Mx),
    Nv(Nvfp4, Option<f32>),
    Fp8(BlockFp8),
}

impl Scheme {
    fn quantize<S: BlockSource>(
        self,
        src: &[S],
        shape: Shape,
        data: &mut [u8],
        scales: &mut [u8],
        par: bool,
    ) -> Result<f32, vcvt::Error> {
        match (self, par) {
            (Scheme::Mx(m), false) => m.quantize(src, shape, data, scales).map(|_| 0.0),
            (Scheme::Mx(m), true) => m.par_quantize(src, shape, data, scales).map(|_| 0.0),
            (Scheme::Nv(n, g), false) => n.quantize(src, shape, data, scales, g),
            (Scheme::Nv(n, g), true) => n.par_quantize(src, shape, data, scales, g),
            (Scheme::Fp8(b), false) => b.quantize(src, shape, data, scales).map(|_| 0.0),
            (Scheme::Fp8(b), true) => b.par_quantize(src, shape, data, scales).map(|_| 0.0),
        }
    }

    fn dequantize<D: BlockDest>(
        self,
        data: &[u8],
        scales: &[u8],
        shape: Shape,
        dst: &mut [D],
        par: bool,
    ) -> Result<(), vcvt::Error> {
        match (self, par) {
            (Scheme::Mx(m), false) => m.dequantize(data, scales, shape, dst),
            (Scheme::Mx(m), true) => m.par_dequantize(data, scales, shape, dst),
            (Scheme::Nv(n, g), false) => n.dequantize(data, scales, g.unwrap_or(1.0), shape, dst),
            (Scheme::Nv(n, g), true) => {
                n.par_dequantize(data, scales, g.unwrap_or(1.0), shape, dst)
            }
            (Scheme::Fp8(b), false) => b.dequantize(data, scales, shape, dst),
            (Scheme::Fp8(b), true) => b.par_dequantize(data, scales, shape, dst),
        }
    }

    /// The byte lengths of the codes and the scales of `shape`.
    fn lens(self, shape: Shape) -> Result<(usize, usize), vcvt::Error> {
        match self {
            Scheme::Mx(m) => Ok((m.data_len(shape)?, m.scales_len(shape)?)),
            Scheme::Nv(n, _) => Ok((n.data_len(shape)?, n.scales_len(shape)?)),
            Scheme::Fp8(b) => Ok((b.data_len(shape)?, b.scale_inv_len(shape)?)),
        }
    }
}

/// Quantizes `src` (`rows × cols` values of `src_kind`) into `data` and `scales` (uint8
/// arrays); returns the tensor scale (NVFP4) or 0.
#[allow(clippy::too_many_arguments)]
fn block_quantize(
    py: Python<'_>,
    scheme: Scheme,
    src_kind: &str,
    src: &Bound<'_, PyAny>,
    rows: usize,
    cols: usize,
    data: &Bound<'_, PyAny>,
    scales: &Bound<'_, PyAny>,
    threads: Option<usize>,
) -> PyResult<f32> {
    let kind = Wide::parse(src_kind)?;
    let threads = Threads::from_arg(threads)?;
    let sm = Mem::of(src, "the source array", kind.itemsize(), false)?;
    let dm = Mem::of(data, "the codes array", 1, true)?;
    let cm = Mem::of(scales, "the scales array", 1, true)?;
    check_disjoint(&[
        (&sm, "the source array", &dm, "the codes array"),
        (&sm, "the source array", &cm, "the scales array"),
        (&dm, "the codes array", &cm, "the scales array"),
    ])?;
    let shape = shape_of(rows, cols);
    py.detach(move || {
        threads.run(move |par| {
            // SAFETY: the three arrays were checked (sizes, alignment, writeable outputs,
            // no overlap) and are held by the caller for this call; the library checks
            // every length against the shape before it writes.
            let (d, c) = unsafe { (dm.slice_mut::<u8>(), cm.slice_mut::<u8>()) };
            // SAFETY: as above, for the source's element type.
            let r = unsafe {
                match kind {
                    Wide::F32 => scheme.quantize(sm.slice::<f32>(), shape, d, c, par),
                    Wide::BF16 => scheme.quantize(sm.slice::<BF16>(), shape, d, c, par),
                    Wide::F16 => scheme.quantize(sm.slice::<F16>(), shape, d, c, par),
                }
            };
            r.map_err(|e| e.to_string())
        })?
    })
    .map_err(PyValueError::new_err)
}

#[allow(clippy::too_many_arguments)]
fn block_dequantize(
    py: Python<'_>,
    scheme: Scheme,
    data: &Bound<'_, PyAny>,
    scales: &Bound<'_, PyAny>,
    rows: usize,
    cols: usize,
    dst_kind: &str,
    dst: &Bound<'_, PyAny>,
    threads: Option<usize>,
) -> PyResult<()> {
    let kind = Wide::parse(dst_kind)?;
    let threads = Threads::from_arg(threads)?;
    let dm = Mem::of(data, "the codes array", 1, false)?;
    let cm = Mem::of(scales, "the scales array", 1, false)?;
    let om = Mem::of(dst, "out", kind.itemsize(), true)?;
    check_disjoint(&[
        (&dm, "the codes array", &om, "out"),
        (&cm, "the scales array", &om, "out"),
    ])?;
    let shape = shape_of(rows, cols);
    py.detach(move || {
        threads.run(move |par| {
            // SAFETY: the arrays were checked (sizes, alignment, writeable output, no
            // overlap between inputs and output) and are held by the caller; the library
            // checks every length against the shape before it writes.
            let (d, c) = unsafe { (dm.slice::<u8>(), cm.slice::<u8>()) };
            // SAFETY: as above, for the destination's element type.
            let r = unsafe {
                match kind {
                    Wide::F32 => scheme.dequantize(d, c, shape, om.slice_mut::<f32>(), par),
                    Wide::BF16 => scheme.dequantize(d, c, shape, om.slice_mut::<BF16>(), par),
                    Wide::F16 => scheme.dequantize(d, c, shape, om.slice_mut::<F16>(), par),
                }
            };
            r.map_err(|e| e.to_string())
        })?
    })
    .map_err(PyValueError::new_err)
}

/// `mx_lens(format, profile, layout, rows, cols)`: the byte lengths of the codes and scales.
#[pyfunction]
fn mx_lens(
    format: &str,
    profile: &str,
    layout: &str,
    rows: usize,
    cols: usize,
) -> PyResult<(usize, usize)> {
    Scheme::Mx(mx_of(format, profile, layout)?)
        .lens(shape_of(rows, cols))
        .map_err(lib_err)
}

/// `mx_quantize(format, profile, layout, src_kind, src, rows, cols, data, scales, threads)`.
#[pyfunction]
#[pyo3(signature = (format, profile, layout, src_kind, src, rows, cols, data, scales, threads=None))]
#[allow(clippy::too_many_arguments)]
fn mx_quantize(
    py: Python<'_>,
    format: &str,
    profile: &str,
    layout: &str,
    src_kind: &str,
    src: &Bound<'_, PyAny>,
    rows: usize,
    cols: usize,
    data: &Bound<'_, PyAny>,
    scales: &Bound<'_, PyAny>,
    threads: Option<usize>,
) -> PyResult<()> {
    let s = Scheme::Mx(mx_of(format, profile, layout)?);
    block_quantize(py, s, src_kind, src, rows, cols, data, scales, threads).map(|_| ())
}

/// `mx_dequantize(format, profile, layout, data, scales, rows, cols, dst_kind, dst, threads)`.
#[pyfunction]
#[pyo3(signature = (format, profile, layout, data, scales, rows, cols, dst_kind, dst, threads=None))]
#[allow(clippy::too_many_arguments)]
fn mx_dequantize(
    py: Python<'_>,
    format: &str,
    profile: &str,
    layout: &str,
    data: &Bound<'_, PyAny>,
    scales: &Bound<'_, PyAny>,
    rows: usize,
    cols: usize,
    dst_kind: &str,
    dst: &Bound<'_, PyAny>,
    threads: Option<usize>,
) -> PyResult<()> {
    let s = Scheme::Mx(mx_of(format, profile, layout)?);
    block_dequantize(py, s, data, scales, rows, cols, dst_kind, dst, threads)
}

/// `nv_lens(profile, layout, rows, cols)`: the byte lengths of the codes and scales.
#[pyfunction]
fn nv_lens(profile: &str, layout: &str, rows: usize, cols: usize) -> PyResult<(usize, usize)> {
    Scheme::Nv(nv_of(profile, layout)?, None)
        .lens(shape_of(rows, cols))
        .map_err(lib_err)
}

/// `nv_identity_scale(profile)`: the tensor scale that means "none" for the profile.
#[pyfunction]
fn nv_identity_scale(profile: &str) -> PyResult<f32> {
    Ok(nv_of(profile, "planar")?.identity_tensor_scale())
}

/// `nv_quantize(profile, layout, src_kind, src, rows, cols, data, scales, tensor_scale,
/// threads)`: returns the tensor scale used.
#[pyfunction]
#[pyo3(signature = (profile, layout, src_kind, src, rows, cols, data, scales, tensor_scale=None, threads=None))]
#[allow(clippy::too_many_arguments)]
fn nv_quantize(
    py: Python<'_>,
    profile: &str,
    layout: &str,
    src_kind: &str,
    src: &Bound<'_, PyAny>,
    rows: usize,
    cols: usize,
    data: &Bound<'_, PyAny>,
    scales: &Bound<'_, PyAny>,
    tensor_scale: Option<f32>,
    threads: Option<usize>,
) -> PyResult<f32> {
    let s = Scheme::Nv(nv_of(profile, layout)?, tensor_scale);
    block_quantize(py, s, src_kind, src, rows, cols, data, scales, threads)
}

/// `nv_dequantize(profile, layout, data, scales, tensor_scale, rows, cols, dst_kind, dst,
/// threads)`.
#[pyfunction]
#[pyo3(signature = (profile, layout, data, scales, tensor_scale, rows, cols, dst_kind, dst, threads=None))]
#[allow(clippy::too_many_arguments)]
fn nv_dequantize(
    py: Python<'_>,
    profile: &str,
    layout: &str,
    data: &Bound<'_, PyAny>,
    scales: &Bound<'_, PyAny>,
    tensor_scale: f32,
    rows: usize,
    cols: usize,
    dst_kind: &str,
    dst: &Bound<'_, PyAny>,
    threads: Option<usize>,
) -> PyResult<()> {
    let s = Scheme::Nv(nv_of(profile, layout)?, Some(tensor_scale));
    block_dequantize(py, s, data, scales, rows, cols, dst_kind, dst, threads)
}

/// `fp8_lens(tile_rows, tile_cols, rows, cols)`: the byte lengths of the codes and of the
/// f32 `scale_inv` values.
#[pyfunction]
fn fp8_lens(
    tile_rows: usize,
    tile_cols: usize,
    rows: usize,
    cols: usize,
) -> PyResult<(usize, usize)> {
    Scheme::Fp8(fp8_of(tile_rows, tile_cols, "deepseek")?)
        .lens(shape_of(rows, cols))
        .map_err(lib_err)
}

/// `fp8_quantize(tile_rows, tile_cols, profile, src_kind, src, rows, cols, data, scale_inv,
/// threads)`; `scale_inv` is a uint8 view of the f32 scales.
#[pyfunction]
#[pyo3(signature = (tile_rows, tile_cols, profile, src_kind, src, rows, cols, data, scale_inv, threads=None))]
#[allow(clippy::too_many_arguments)]
fn fp8_quantize(
    py: Python<'_>,
    tile_rows: usize,
    tile_cols: usize,
    profile: &str,
    src_kind: &str,
    src: &Bound<'_, PyAny>,
    rows: usize,
    cols: usize,
    data: &Bound<'_, PyAny>,
    scale_inv: &Bound<'_, PyAny>,
    threads: Option<usize>,
) -> PyResult<()> {
    let s = Scheme::Fp8(fp8_of(tile_rows, tile_cols, profile)?);
    block_quantize(py, s, src_kind, src, rows, cols, data, scale_inv, threads).map(|_| ())
}

/// `fp8_dequantize(tile_rows, tile_cols, data, scale_inv, rows, cols, dst_kind, dst,
/// threads)`; `scale_inv` is a uint8 view of the f32 scales.
#[pyfunction]
#[pyo3(signature = (tile_rows, tile_cols, data, scale_inv, rows, cols, dst_kind, dst, threads=None))]
#[allow(clippy::too_many_arguments)]
fn fp8_dequantize(
    py: Python<'_>,
    tile_rows: usize,
    tile_cols: usize,
    data: &Bound<'_, PyAny>,
    scale_inv: &Bound<'_, PyAny>,
    rows: usize,
    cols: usize,
    dst_kind: &str,
    dst: &Bound<'_, PyAny>,
    threads: Option<usize>,
) -> PyResult<()> {
    let s = Scheme::Fp8(fp8_of(tile_rows, tile_cols, "deepseek")?);
    block_dequantize(py, s, data, scale_inv, rows, cols, dst_kind, dst, threads)
}

/// The native module `vcvt._vcvt`.
#[pymodule]
fn _vcvt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(round_trip_inplace, m)?)?;
    m.add_function(wrap_pyfunction!(backend, m)?)?;
    m.add_function(wrap_pyfunction!(available_backends, m)?)?;
    m.add_function(wrap_pyfunction!(format_names, m)?)?;
    m.add_function(wrap_pyfunction!(has_pair, m)?)?;
    m.add_function(wrap_pyfunction!(mx_lens, m)?)?;
    m.add_function(wrap_pyfunction!(mx_quantize, m)?)?;
    m.add_function(wrap_pyfunction!(mx_dequantize, m)?)?;
    m.add_function(wrap_pyfunction!(nv_lens, m)?)?;
    m.add_function(wrap_pyfunction!(nv_identity_scale, m)?)?;
    m.add_function(wrap_pyfunction!(nv_quantize, m)?)?;
    m.add_function(wrap_pyfunction!(nv_dequantize, m)?)?;
    m.add_function(wrap_pyfunction!(fp8_lens, m)?)?;
    m.add_function(wrap_pyfunction!(fp8_quantize, m)?)?;
    m.add_function(wrap_pyfunction!(fp8_dequantize, m)?)?;
    m.add("PAR_MIN_VALUES", vcvt::PAR_MIN_VALUES)?;
    Ok(())
}
