//! Block-scaled formats (MX, NVFP4, block FP8) and the scaled building blocks (`amax`,
//! `narrow_scaled`, `dequantize_scaled`).
//!
//! The unquantized side is `float`, bf16 or f16 (`VCVT_F32`, `VCVT_BF16`, `VCVT_F16`) at any
//! alignment: an unaligned buffer goes through an aligned heap copy. The quantized side is
//! bytes, as in the Rust API.

use core::ffi::{c_int, c_void};
use core::mem::{MaybeUninit, align_of, size_of};
use std::borrow::Cow;

use vcvt_rs::block::{
    BlockDest, BlockFp8, BlockSource, Fp8Profile, Mx, MxElement, MxLayout, MxProfile, NvLayout,
    NvProfile, Nvfp4, ScaledCode, Shape,
};
use vcvt_rs::{
    BF16, Error, F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FNUZ, F8E4M3IEEE,
    F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16,
};

use crate::backend::{VCVT_BACKEND_AUTO, resolve};
use crate::convert::{bad_dtype, invalid, null, overlaps, too_big};
use crate::dtype::{
    VCVT_BF16, VCVT_DTYPE_COUNT, VCVT_F4E2M1, VCVT_F6E2M3, VCVT_F6E3M2, VCVT_F8E3M4, VCVT_F8E4M3,
    VCVT_F8E4M3B11FNUZ, VCVT_F8E4M3FNUZ, VCVT_F8E4M3IEEE, VCVT_F8E5M2, VCVT_F8E5M2FNUZ,
    VCVT_F8E5M3FNU, VCVT_F8E8M0, VCVT_F16, VCVT_F32, bytes_of, dtype_index, name,
};
use crate::status::{
    VCVT_E_NOMEM, VCVT_E_NULL, VCVT_E_OVERFLOW, VCVT_E_OVERLAP, VCVT_E_UNSUPPORTED, VCVT_OK, fail,
    from_error, guard,
};

// --- constants and structs -------------------------------------------------------------------

/// MXFP8 with E4M3 elements.
pub const VCVT_MX_E4M3: c_int = 0;
/// MXFP8 with E5M2 elements.
pub const VCVT_MX_E5M2: c_int = 1;
/// MXFP6 with E2M3 elements (one per byte).
pub const VCVT_MX_E2M3: c_int = 2;
/// MXFP6 with E3M2 elements (one per byte).
pub const VCVT_MX_E3M2: c_int = 3;
/// MXFP4 with E2M1 elements (two per byte).
pub const VCVT_MX_E2M1: c_int = 4;

/// Smallest power-of-two scale that clips no block maximum (RCEIL; the default).
pub const VCVT_MX_PROFILE_CEIL: c_int = 0;
/// The OCP MX v1.0 rule (floor of log2 amax minus emax).
pub const VCVT_MX_PROFILE_OCP: c_int = 1;
/// llama.cpp / gguf MXFP4 (E2M1 only).
pub const VCVT_MX_PROFILE_GGML: c_int = 2;
/// MLX 0.32 CPU (E2M1 and E4M3 only).
pub const VCVT_MX_PROFILE_MLX: c_int = 3;

/// Codes and scale bytes in two buffers (safetensors, torchao, MLX).
pub const VCVT_MX_LAYOUT_PLANAR: c_int = 0;
/// llama.cpp `block_mxfp4`: 17-byte blocks holding their scale (E2M1, cols % 32 == 0).
pub const VCVT_MX_LAYOUT_GGML: c_int = 1;

/// NVIDIA ModelOpt checkpoints (the default).
pub const VCVT_NV_PROFILE_MODELOPT: c_int = 0;
/// MLX 0.32 CPU `mode="nvfp4"`.
pub const VCVT_NV_PROFILE_MLX: c_int = 1;
/// llama.cpp `block_nvfp4`.
pub const VCVT_NV_PROFILE_GGML: c_int = 2;

/// Packed codes and E4M3 scale bytes in two buffers.
pub const VCVT_NV_LAYOUT_PLANAR: c_int = 0;
/// llama.cpp `block_nvfp4`: 36-byte blocks of 64 values (cols % 64 == 0).
pub const VCVT_NV_LAYOUT_GGML: c_int = 1;

/// DeepSeek-V3/R1: `scale_inv = amax / 448`.
pub const VCVT_FP8_PROFILE_DEEPSEEK: c_int = 0;
/// DeepSeek-V3.1 `ue8m0`: the scale rounded up to a power of two.
pub const VCVT_FP8_PROFILE_UE8M0: c_int = 1;

/// An MX format (`vcvt_mx` in the header). All-zero is MXFP8 E4M3, `Ceil`, planar, auto.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[allow(non_camel_case_types)]
pub struct vcvt_mx {
    /// A `VCVT_MX_E*` constant.
    pub element: c_int,
    /// A `VCVT_MX_PROFILE_*` constant.
    pub profile: c_int,
    /// A `VCVT_MX_LAYOUT_*` constant.
    pub layout: c_int,
    /// A `VCVT_BACKEND_*` constant.
    pub backend: c_int,
}

/// An NVFP4 format (`vcvt_nvfp4`). All-zero is ModelOpt, planar, auto.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[allow(non_camel_case_types)]
pub struct vcvt_nvfp4 {
    /// A `VCVT_NV_PROFILE_*` constant.
    pub profile: c_int,
    /// A `VCVT_NV_LAYOUT_*` constant.
    pub layout: c_int,
    /// A `VCVT_BACKEND_*` constant.
    pub backend: c_int,
}

/// A block FP8 format (`vcvt_block_fp8`): tiles of `tile_rows × tile_cols` values.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[allow(non_camel_case_types)]
pub struct vcvt_block_fp8 {
    /// Rows per tile (128 for DeepSeek weights, 1 for activations).
    pub tile_rows: usize,
    /// Columns per tile (128).
    pub tile_cols: usize,
    /// A `VCVT_FP8_PROFILE_*` constant.
    pub profile: c_int,
    /// A `VCVT_BACKEND_*` constant.
    pub backend: c_int,
}

fn mx_of(m: vcvt_mx, f: &str) -> Result<Mx, c_int> {
    let element = match m.element {
        VCVT_MX_E4M3 => MxElement::E4M3,
        VCVT_MX_E5M2 => MxElement::E5M2,
        VCVT_MX_E2M3 => MxElement::E2M3,
        VCVT_MX_E3M2 => MxElement::E3M2,
        VCVT_MX_E2M1 => MxElement::E2M1,
        v => return Err(invalid(f, "mx.element", v)),
    };
    let profile = match m.profile {
        VCVT_MX_PROFILE_CEIL => MxProfile::Ceil,
        VCVT_MX_PROFILE_OCP => MxProfile::Ocp,
        VCVT_MX_PROFILE_GGML => MxProfile::Ggml,
        VCVT_MX_PROFILE_MLX => MxProfile::Mlx,
        v => return Err(invalid(f, "mx.profile", v)),
    };
    let layout = match m.layout {
        VCVT_MX_LAYOUT_PLANAR => MxLayout::Planar,
        VCVT_MX_LAYOUT_GGML => MxLayout::Ggml,
        v => return Err(invalid(f, "mx.layout", v)),
    };
    let mx = Mx::new(element).profile(profile).layout(layout);
    Ok(match resolve(m.backend, f)? {
        Some(b) => mx.on(b),
        None => mx,
    })
}

fn nv_of(n: vcvt_nvfp4, f: &str) -> Result<Nvfp4, c_int> {
    let profile = match n.profile {
        VCVT_NV_PROFILE_MODELOPT => NvProfile::ModelOpt,
        VCVT_NV_PROFILE_MLX => NvProfile::Mlx,
        VCVT_NV_PROFILE_GGML => NvProfile::Ggml,
        v => return Err(invalid(f, "nv.profile", v)),
    };
    let layout = match n.layout {
        VCVT_NV_LAYOUT_PLANAR => NvLayout::Planar,
        VCVT_NV_LAYOUT_GGML => NvLayout::Ggml,
        v => return Err(invalid(f, "nv.layout", v)),
    };
    let nv = Nvfp4::new().profile(profile).layout(layout);
    Ok(match resolve(n.backend, f)? {
        Some(b) => nv.on(b),
        None => nv,
    })
}

fn fp8_of(b: vcvt_block_fp8, f: &str) -> Result<BlockFp8, c_int> {
    let profile = match b.profile {
        VCVT_FP8_PROFILE_DEEPSEEK => Fp8Profile::DeepSeek,
        VCVT_FP8_PROFILE_UE8M0 => Fp8Profile::Ue8m0,
        v => return Err(invalid(f, "fp8.profile", v)),
    };
    let fp8 = BlockFp8::new(b.tile_rows, b.tile_cols).profile(profile);
    Ok(match resolve(b.backend, f)? {
        Some(be) => fp8.on(be),
        None => fp8,
    })
}

// --- buffers ---------------------------------------------------------------------------------

/// The wide (unquantized) side's dtype: f32, bf16 or f16; else the error.
fn wide_dtype(d: c_int, f: &str, what: &str) -> Result<usize, c_int> {
    let Some(i) = dtype_index(d) else {
        return Err(bad_dtype(f, what, d));
    };
    if matches!(d, VCVT_F32 | VCVT_BF16 | VCVT_F16) {
        Ok(i)
    } else {
        Err(fail(
            VCVT_E_UNSUPPORTED,
            format_args!("{f}: {what} must be f32, bf16 or f16, not {}", name(i)),
        ))
    }
}

/// `rows × cols` and its bytes in dtype `d`, or the overflow error.
fn shape_len(rows: usize, cols: usize, d: usize, f: &str) -> Result<(usize, usize), c_int> {
    let Some(n) = rows.checked_mul(cols) else {
        return Err(fail(
            VCVT_E_OVERFLOW,
            format_args!("{f}: rows × cols = {rows} × {cols} does not fit in size_t"),
        ));
    };
    match bytes_of(d, n) {
        Some(b) => Ok((n, b)),
        None => Err(too_big(f, n, d)),
    }
}

/// A byte buffer from C: empty when `len == 0` (any pointer), else `p` must not be NULL.
///
/// # Safety
/// For `len > 0`, `p` is NULL or valid for reading `len` bytes for `'a`.
unsafe fn bytes<'a>(p: *const u8, len: usize, f: &str, what: &str) -> Result<&'a [u8], c_int> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(fail(
            VCVT_E_NULL,
            format_args!("{f}: `{what}` is NULL with length {len}"),
        ));
    }
    // SAFETY: not NULL, valid for `len` bytes (the caller's guarantee).
    Ok(unsafe { core::slice::from_raw_parts(p, len) })
}

/// A writable byte buffer from C, as [`bytes`].
///
/// # Safety
/// For `len > 0`, `p` is NULL or valid for writing `len` bytes for `'a`, and nothing else
/// accesses them meanwhile.
unsafe fn bytes_mut<'a>(
    p: *mut u8,
    len: usize,
    f: &str,
    what: &str,
) -> Result<&'a mut [MaybeUninit<u8>], c_int> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(fail(
            VCVT_E_NULL,
            format_args!("{f}: `{what}` is NULL with length {len}"),
        ));
    }
    // SAFETY: not NULL, valid for writing `len` bytes (the caller's guarantee); as
    // `MaybeUninit<u8>` they need not be initialised.
    Ok(unsafe { core::slice::from_raw_parts_mut(p.cast::<MaybeUninit<u8>>(), len) })
}

/// Fails if any output buffer overlaps another buffer of the call.
fn no_overlap(bufs: &[(*const u8, usize, bool)], f: &str) -> Result<(), c_int> {
    for (i, a) in bufs.iter().enumerate() {
        for b in &bufs[i + 1..] {
            if (a.2 || b.2) && overlaps(a.0, a.1, b.0, b.1) {
                return Err(fail(
                    VCVT_E_OVERLAP,
                    format_args!("{f}: an output buffer overlaps another buffer of the call"),
                ));
            }
        }
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn nomem(f: &str, bytes: usize) -> c_int {
    fail(
        VCVT_E_NOMEM,
        format_args!(
            "{f}: cannot allocate {bytes} bytes for the aligned copy of an unaligned buffer"
        ),
    )
}

/// `len` values of `T` at `p`: borrowed when aligned, else an aligned copy.
///
/// # Safety
/// For `len > 0`, `p` is not NULL and valid for reading `len · size_of::<T>()` bytes for
/// `'a`; `T` is a plain-bits type (every bit pattern a value).
unsafe fn load<'a, T: Copy>(p: *const u8, len: usize, f: &str) -> Result<Cow<'a, [T]>, c_int>
where
    [T]: ToOwned<Owned = Vec<T>>,
{
    if len == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    if (p as usize).is_multiple_of(align_of::<T>()) {
        // SAFETY: aligned, not NULL, valid and initialised for `len` values (the caller's
        // guarantee).
        return Ok(Cow::Borrowed(unsafe {
            core::slice::from_raw_parts(p.cast::<T>(), len)
        }));
    }
    let mut v: Vec<T> = Vec::new();
    if v.try_reserve_exact(len).is_err() {
        return Err(nomem(f, len * size_of::<T>()));
    }
    // SAFETY: the vector has capacity for `len` values; the source holds their bytes
    // (unaligned, hence the byte copy), and the two do not overlap; after the copy the
    // first `len` values are initialised.
    unsafe {
        core::ptr::copy_nonoverlapping(p, v.as_mut_ptr().cast::<u8>(), len * size_of::<T>());
        v.set_len(len);
    }
    Ok(Cow::Owned(v))
}

/// Runs `run` on `len` values of `T` at `p` as an uninitialised destination: in place when
/// aligned, else into an aligned heap buffer copied to `p` only if `run` succeeds.
///
/// # Safety
/// For `len > 0`, `p` is not NULL and valid for writing `len · size_of::<T>()` bytes, not
/// accessed by anything else during the call.
unsafe fn store<T: Copy>(
    p: *mut u8,
    len: usize,
    f: &str,
    run: impl FnOnce(&mut [MaybeUninit<T>]) -> Result<(), Error>,
) -> Result<(), Result<Error, c_int>> {
    if len == 0 {
        return run(&mut []).map_err(Ok);
    }
    if (p as usize).is_multiple_of(align_of::<T>()) {
        // SAFETY: aligned, not NULL, valid for writing `len` values (the caller's
        // guarantee); `MaybeUninit` needs no initialised contents.
        let d = unsafe { core::slice::from_raw_parts_mut(p.cast::<MaybeUninit<T>>(), len) };
        return run(d).map_err(Ok);
    }
    let mut v: Vec<MaybeUninit<T>> = Vec::new();
    if v.try_reserve_exact(len).is_err() {
        return Err(Err(nomem(f, len * size_of::<T>())));
    }
    // Zeroed (a valid value of every element type), so that the scaled functions, which take
    // an initialised destination, may view it as one.
    v.resize(len, MaybeUninit::zeroed());
    run(&mut v).map_err(Ok)?;
    // SAFETY: `run` succeeded, so it initialised every value of the buffer (the block
    // functions initialise the whole tight shape); `p` holds `len` values' bytes, distinct
    // from the heap buffer.
    unsafe { core::ptr::copy_nonoverlapping(v.as_ptr().cast::<u8>(), p, len * size_of::<T>()) };
    Ok(())
}

/// `Ok` value, or return the error code.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(code) => return code,
        }
    };
}

/// Runs `$body` with `$s` bound to the `$len` source values at `$p` as `&[f32]`, `&[BF16]`
/// or `&[F16]` by `$d` (already checked to be one of them). `$p` must satisfy [`load`].
macro_rules! with_src {
    ($d:expr, $p:expr, $len:expr, $f:expr, |$s:ident| $body:expr) => {
        match $d {
            VCVT_F32 => {
                // SAFETY: the caller checked `$p` for `$len` values of this dtype.
                let v = tri!(unsafe { load::<f32>($p, $len, $f) });
                let $s: &[f32] = &v;
                $body
            }
            VCVT_BF16 => {
                // SAFETY: as above.
                let v = tri!(unsafe { load::<BF16>($p, $len, $f) });
                let $s: &[BF16] = &v;
                $body
            }
            _ => {
                // SAFETY: as above.
                let v = tri!(unsafe { load::<F16>($p, $len, $f) });
                let $s: &[F16] = &v;
                $body
            }
        }
    };
}

/// Runs `$body` (a `Result<(), Error>`) with `$d` bound to the uninitialised destination of
/// `$len` values at `$p` of dtype `$dt` (f32, bf16 or f16, checked). `$p` must satisfy
/// [`store`].
macro_rules! with_dst {
    ($dt:expr, $p:expr, $len:expr, $f:expr, |$d:ident| $body:expr) => {
        match $dt {
            // SAFETY: the caller checked `$p` for `$len` values of this dtype.
            VCVT_F32 => unsafe { store::<f32>($p, $len, $f, |$d| $body) },
            // SAFETY: as above.
            VCVT_BF16 => unsafe { store::<BF16>($p, $len, $f, |$d| $body) },
            // SAFETY: as above.
            _ => unsafe { store::<F16>($p, $len, $f, |$d| $body) },
        }
    };
}

/// The return code of a block call's result.
fn code(r: Result<(), Result<Error, c_int>>, f: &str) -> c_int {
    match r {
        Ok(()) => VCVT_OK,
        Err(Ok(e)) => from_error(f, e),
        Err(Err(c)) => c,
    }
}

/// Writes `v` through `out` (checked not NULL) and returns `VCVT_OK`.
///
/// # Safety
/// `out` is NULL or valid for writing one `T`.
unsafe fn put<T>(out: *mut T, r: Result<T, Error>, f: &str) -> c_int {
    if out.is_null() {
        return fail(VCVT_E_NULL, format_args!("{f}: `out` is NULL"));
    }
    match r {
        Ok(v) => {
            // SAFETY: not NULL, valid for one `T` (the caller's guarantee).
            unsafe { out.write_unaligned(v) };
            VCVT_OK
        }
        Err(e) => from_error(f, e),
    }
}

// --- MX --------------------------------------------------------------------------------------

/// Stores in `*out` the bytes of element codes that a `rows × cols` matrix needs in `mx`
/// (with the ggml layout, of the whole 17-byte blocks).
///
/// # Safety
/// `out` is NULL or valid for writing one `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_mx_data_len(
    mx: vcvt_mx,
    rows: usize,
    cols: usize,
    out: *mut usize,
) -> c_int {
    const F: &str = "vcvt_mx_data_len";
    guard(|| {
        let m = tri!(mx_of(mx, F));
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, m.data_len(Shape::matrix(rows, cols)), F) }
    })
}

/// Stores in `*out` the scale bytes that a `rows × cols` matrix needs in `mx` (0 with the
/// ggml layout).
///
/// # Safety
/// `out` is NULL or valid for writing one `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_mx_scales_len(
    mx: vcvt_mx,
    rows: usize,
    cols: usize,
    out: *mut usize,
) -> c_int {
    const F: &str = "vcvt_mx_scales_len";
    guard(|| {
        let m = tri!(mx_of(mx, F));
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, m.scales_len(Shape::matrix(rows, cols)), F) }
    })
}

/// Quantizes the `rows × cols` values at `src` into element codes `data` and scale bytes
/// `scales`.
///
/// # Safety
/// Each pointer is NULL or valid for its length (`src`: `rows · cols` values of
/// `src_dtype`; `data`, `scales`: their lengths in bytes).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_mx_quantize(
    mx: vcvt_mx,
    src: *const c_void,
    src_dtype: c_int,
    rows: usize,
    cols: usize,
    data: *mut u8,
    data_len: usize,
    scales: *mut u8,
    scales_len: usize,
) -> c_int {
    const F: &str = "vcvt_mx_quantize";
    guard(|| {
        let m = tri!(mx_of(mx, F));
        let sd = tri!(wide_dtype(src_dtype, F, "src_dtype"));
        let (n, sb) = tri!(shape_len(rows, cols, sd, F));
        let src = src.cast::<u8>();
        if n > 0 && src.is_null() {
            return null(F, "src", n);
        }
        tri!(no_overlap(
            &[
                (src, sb, false),
                (data, data_len, true),
                (scales, scales_len, true)
            ],
            F
        ));
        // SAFETY: the caller's contract for `data` and `scales`; they do not overlap.
        let d = tri!(unsafe { bytes_mut(data, data_len, F, "data") });
        // SAFETY: as above.
        let s = tri!(unsafe { bytes_mut(scales, scales_len, F, "scales") });
        let shape = Shape::matrix(rows, cols);
        let r = with_src!(src_dtype, src, n, F, |v| m.quantize_uninit(v, shape, d, s));
        code(r.map_err(Ok), F)
    })
}

/// Dequantizes element codes `data` and scale bytes `scales` of a `rows × cols` matrix into
/// `dst` (dtype `dst_dtype`).
///
/// # Safety
/// Each pointer is NULL or valid for its length (`dst`: `rows · cols` values of
/// `dst_dtype`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_mx_dequantize(
    mx: vcvt_mx,
    data: *const u8,
    data_len: usize,
    scales: *const u8,
    scales_len: usize,
    rows: usize,
    cols: usize,
    dst: *mut c_void,
    dst_dtype: c_int,
) -> c_int {
    const F: &str = "vcvt_mx_dequantize";
    guard(|| {
        let m = tri!(mx_of(mx, F));
        let dd = tri!(wide_dtype(dst_dtype, F, "dst_dtype"));
        let (n, db) = tri!(shape_len(rows, cols, dd, F));
        let dst = dst.cast::<u8>();
        if n > 0 && dst.is_null() {
            return null(F, "dst", n);
        }
        tri!(no_overlap(
            &[
                (dst, db, true),
                (data, data_len, false),
                (scales, scales_len, false)
            ],
            F
        ));
        // SAFETY: the caller's contract for `data` and `scales`.
        let d = tri!(unsafe { bytes(data, data_len, F, "data") });
        // SAFETY: as above.
        let s = tri!(unsafe { bytes(scales, scales_len, F, "scales") });
        let shape = Shape::matrix(rows, cols);
        let r = with_dst!(dst_dtype, dst, n, F, |o| m
            .dequantize_uninit(d, s, shape, o));
        code(r, F)
    })
}

// --- NVFP4 -----------------------------------------------------------------------------------

/// Stores in `*out` the bytes of packed codes a `rows × cols` matrix needs in `nv`.
///
/// # Safety
/// `out` is NULL or valid for writing one `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_nvfp4_data_len(
    nv: vcvt_nvfp4,
    rows: usize,
    cols: usize,
    out: *mut usize,
) -> c_int {
    const F: &str = "vcvt_nvfp4_data_len";
    guard(|| {
        let v = tri!(nv_of(nv, F));
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, v.data_len(Shape::matrix(rows, cols)), F) }
    })
}

/// Stores in `*out` the E4M3 scale bytes a `rows × cols` matrix needs in `nv`.
///
/// # Safety
/// `out` is NULL or valid for writing one `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_nvfp4_scales_len(
    nv: vcvt_nvfp4,
    rows: usize,
    cols: usize,
    out: *mut usize,
) -> c_int {
    const F: &str = "vcvt_nvfp4_scales_len";
    guard(|| {
        let v = tri!(nv_of(nv, F));
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, v.scales_len(Shape::matrix(rows, cols)), F) }
    })
}

/// Stores in `*out` the tensor scale that means "none" for the profile (2688 for MLX, else 1).
///
/// # Safety
/// `out` is NULL or valid for writing one `float`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_nvfp4_identity_tensor_scale(nv: vcvt_nvfp4, out: *mut f32) -> c_int {
    const F: &str = "vcvt_nvfp4_identity_tensor_scale";
    guard(|| {
        let v = tri!(nv_of(nv, F));
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, Ok(v.identity_tensor_scale()), F) }
    })
}

/// Quantizes `rows × cols` values into packed codes and E4M3 block scales; the tensor scale
/// is `*tensor_scale` if that is not NULL, else the profile's; it is stored in
/// `*tensor_scale_out` when that is not NULL.
///
/// # Safety
/// Each pointer is NULL or valid for its length; `tensor_scale` is NULL or points to a float;
/// `tensor_scale_out` is NULL or valid for writing one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_nvfp4_quantize(
    nv: vcvt_nvfp4,
    src: *const c_void,
    src_dtype: c_int,
    rows: usize,
    cols: usize,
    data: *mut u8,
    data_len: usize,
    scales: *mut u8,
    scales_len: usize,
    tensor_scale: *const f32,
    tensor_scale_out: *mut f32,
) -> c_int {
    const F: &str = "vcvt_nvfp4_quantize";
    guard(|| {
        let v = tri!(nv_of(nv, F));
        let sd = tri!(wide_dtype(src_dtype, F, "src_dtype"));
        let (n, sb) = tri!(shape_len(rows, cols, sd, F));
        let src = src.cast::<u8>();
        if n > 0 && src.is_null() {
            return null(F, "src", n);
        }
        tri!(no_overlap(
            &[
                (src, sb, false),
                (data, data_len, true),
                (scales, scales_len, true),
                (
                    tensor_scale_out.cast::<u8>(),
                    if tensor_scale_out.is_null() { 0 } else { 4 },
                    true
                ),
            ],
            F
        ));
        // SAFETY: NULL or a float (the caller's contract).
        let t = (!tensor_scale.is_null()).then(|| unsafe { tensor_scale.read_unaligned() });
        // SAFETY: the caller's contract for `data` and `scales`; they do not overlap.
        let d = tri!(unsafe { bytes_mut(data, data_len, F, "data") });
        // SAFETY: as above.
        let s = tri!(unsafe { bytes_mut(scales, scales_len, F, "scales") });
        let shape = Shape::matrix(rows, cols);
        let r = with_src!(src_dtype, src, n, F, |x| v
            .quantize_uninit(x, shape, d, s, t));
        match r {
            Ok(g) => {
                if !tensor_scale_out.is_null() {
                    // SAFETY: not NULL, valid for one float (the caller's contract).
                    unsafe { tensor_scale_out.write_unaligned(g) };
                }
                VCVT_OK
            }
            Err(e) => from_error(F, e),
        }
    })
}

/// Dequantizes packed codes `data` and E4M3 scales `scales` with `tensor_scale` into `dst`.
///
/// # Safety
/// Each pointer is NULL or valid for its length.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_nvfp4_dequantize(
    nv: vcvt_nvfp4,
    data: *const u8,
    data_len: usize,
    scales: *const u8,
    scales_len: usize,
    tensor_scale: f32,
    rows: usize,
    cols: usize,
    dst: *mut c_void,
    dst_dtype: c_int,
) -> c_int {
    const F: &str = "vcvt_nvfp4_dequantize";
    guard(|| {
        let v = tri!(nv_of(nv, F));
        let dd = tri!(wide_dtype(dst_dtype, F, "dst_dtype"));
        let (n, db) = tri!(shape_len(rows, cols, dd, F));
        let dst = dst.cast::<u8>();
        if n > 0 && dst.is_null() {
            return null(F, "dst", n);
        }
        tri!(no_overlap(
            &[
                (dst, db, true),
                (data, data_len, false),
                (scales, scales_len, false)
            ],
            F
        ));
        // SAFETY: the caller's contract for `data` and `scales`.
        let d = tri!(unsafe { bytes(data, data_len, F, "data") });
        // SAFETY: as above.
        let s = tri!(unsafe { bytes(scales, scales_len, F, "scales") });
        let shape = Shape::matrix(rows, cols);
        let r = with_dst!(dst_dtype, dst, n, F, |o| v.dequantize_uninit(
            d,
            s,
            tensor_scale,
            shape,
            o
        ));
        code(r, F)
    })
}

// --- block FP8 -------------------------------------------------------------------------------

/// Stores in `*out` the bytes of E4M3 codes a `rows × cols` matrix needs (`rows · cols`).
///
/// # Safety
/// `out` is NULL or valid for writing one `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_block_fp8_data_len(
    fp8: vcvt_block_fp8,
    rows: usize,
    cols: usize,
    out: *mut usize,
) -> c_int {
    const F: &str = "vcvt_block_fp8_data_len";
    guard(|| {
        let b = tri!(fp8_of(fp8, F));
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, b.data_len(Shape::matrix(rows, cols)), F) }
    })
}

/// Stores in `*out` the bytes of little-endian f32 tile scales a `rows × cols` matrix needs
/// (4 per tile).
///
/// # Safety
/// `out` is NULL or valid for writing one `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_block_fp8_scale_inv_len(
    fp8: vcvt_block_fp8,
    rows: usize,
    cols: usize,
    out: *mut usize,
) -> c_int {
    const F: &str = "vcvt_block_fp8_scale_inv_len";
    guard(|| {
        let b = tri!(fp8_of(fp8, F));
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, b.scale_inv_len(Shape::matrix(rows, cols)), F) }
    })
}

/// Quantizes `rows × cols` values into E4M3 codes `data` and f32 tile scales `scale_inv`.
///
/// # Safety
/// Each pointer is NULL or valid for its length.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_block_fp8_quantize(
    fp8: vcvt_block_fp8,
    src: *const c_void,
    src_dtype: c_int,
    rows: usize,
    cols: usize,
    data: *mut u8,
    data_len: usize,
    scale_inv: *mut u8,
    scale_inv_len: usize,
) -> c_int {
    const F: &str = "vcvt_block_fp8_quantize";
    guard(|| {
        let b = tri!(fp8_of(fp8, F));
        let sd = tri!(wide_dtype(src_dtype, F, "src_dtype"));
        let (n, sb) = tri!(shape_len(rows, cols, sd, F));
        let src = src.cast::<u8>();
        if n > 0 && src.is_null() {
            return null(F, "src", n);
        }
        tri!(no_overlap(
            &[
                (src, sb, false),
                (data, data_len, true),
                (scale_inv, scale_inv_len, true)
            ],
            F
        ));
        // SAFETY: the caller's contract for `data` and `scale_inv`; they do not overlap.
        let d = tri!(unsafe { bytes_mut(data, data_len, F, "data") });
        // SAFETY: as above.
        let s = tri!(unsafe { bytes_mut(scale_inv, scale_inv_len, F, "scale_inv") });
        let shape = Shape::matrix(rows, cols);
        let r = with_src!(src_dtype, src, n, F, |v| b.quantize_uninit(v, shape, d, s));
        code(r.map_err(Ok), F)
    })
}

/// Dequantizes E4M3 codes `data` with f32 tile scales `scale_inv` into `dst`.
///
/// # Safety
/// Each pointer is NULL or valid for its length.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_block_fp8_dequantize(
    fp8: vcvt_block_fp8,
    data: *const u8,
    data_len: usize,
    scale_inv: *const u8,
    scale_inv_len: usize,
    rows: usize,
    cols: usize,
    dst: *mut c_void,
    dst_dtype: c_int,
) -> c_int {
    const F: &str = "vcvt_block_fp8_dequantize";
    guard(|| {
        let b = tri!(fp8_of(fp8, F));
        let dd = tri!(wide_dtype(dst_dtype, F, "dst_dtype"));
        let (n, db) = tri!(shape_len(rows, cols, dd, F));
        let dst = dst.cast::<u8>();
        if n > 0 && dst.is_null() {
            return null(F, "dst", n);
        }
        tri!(no_overlap(
            &[
                (dst, db, true),
                (data, data_len, false),
                (scale_inv, scale_inv_len, false)
            ],
            F
        ));
        // SAFETY: the caller's contract for `data` and `scale_inv`.
        let d = tri!(unsafe { bytes(data, data_len, F, "data") });
        // SAFETY: as above.
        let s = tri!(unsafe { bytes(scale_inv, scale_inv_len, F, "scale_inv") });
        let shape = Shape::matrix(rows, cols);
        let r = with_dst!(dst_dtype, dst, n, F, |o| b
            .dequantize_uninit(d, s, shape, o));
        code(r, F)
    })
}

// --- scaled building blocks ------------------------------------------------------------------

/// Stores in `*out` the largest magnitude of the `n` values at `src` (NaN if one is NaN,
/// 0 for `n == 0`).
///
/// # Safety
/// `src` is NULL or valid for `n` values of `dtype`; `out` NULL or valid for one float.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_amax(
    src: *const c_void,
    dtype: c_int,
    n: usize,
    out: *mut f32,
) -> c_int {
    const F: &str = "vcvt_amax";
    guard(|| {
        let d = tri!(wide_dtype(dtype, F, "dtype"));
        tri!(resolve(VCVT_BACKEND_AUTO, F));
        if bytes_of(d, n).is_none() {
            return too_big(F, n, d);
        }
        let src = src.cast::<u8>();
        if n > 0 && src.is_null() {
            return null(F, "src", n);
        }
        if out.is_null() {
            return fail(VCVT_E_NULL, format_args!("{F}: `out` is NULL"));
        }
        let m = with_src!(dtype, src, n, F, |v| vcvt_rs::block::amax(v));
        // SAFETY: not NULL, valid for one float (the caller's contract).
        unsafe { out.write_unaligned(m) };
        VCVT_OK
    })
}

/// `x · scale` for `n` wide values into `n` codes (one rounding), wide source in f32/bf16/f16.
type NarrowFn = unsafe fn(*const u8, usize, f32, *mut u8, &str) -> Result<(), Result<Error, c_int>>;
/// `decode(code) · scale` for `n` codes into a wide destination.
type WidenFn = unsafe fn(*const u8, usize, f32, *mut u8, &str) -> Result<(), Result<Error, c_int>>;

/// # Safety
/// `src` holds `n` values of `S`, `dst` room for `n` of `D` (not NULL when `n > 0`), no
/// overlap.
unsafe fn narrow_fn<S: BlockSource, D: ScaledCode>(
    src: *const u8,
    n: usize,
    scale: f32,
    dst: *mut u8,
    f: &str,
) -> Result<(), Result<Error, c_int>> {
    // SAFETY: forwarded from this function's contract.
    let s = unsafe { load::<S>(src, n, f) }.map_err(Err)?;
    // SAFETY: forwarded. The slots are the caller's buffer (memory the C program owns) or a
    // zeroed heap buffer; `narrow_scaled` takes them as an initialised destination of
    // plain-bits codes and only writes them.
    unsafe {
        store::<D>(dst, n, f, |o| {
            let o = &mut *(o as *mut [MaybeUninit<D>] as *mut [D]);
            vcvt_rs::block::narrow_scaled(&s, scale, o)
        })
    }
}

/// # Safety
/// As for [`narrow_fn`], with `S` codes in and `D` values out.
unsafe fn widen_fn<S: ScaledCode, D: BlockDest>(
    src: *const u8,
    n: usize,
    scale: f32,
    dst: *mut u8,
    f: &str,
) -> Result<(), Result<Error, c_int>> {
    // SAFETY: forwarded from this function's contract.
    let s = unsafe { load::<S>(src, n, f) }.map_err(Err)?;
    // SAFETY: forwarded, as in `narrow_fn`.
    unsafe {
        store::<D>(dst, n, f, |o| {
            let o = &mut *(o as *mut [MaybeUninit<D>] as *mut [D]);
            vcvt_rs::block::dequantize_scaled(&s, scale, o)
        })
    }
}

const N: usize = VCVT_DTYPE_COUNT as usize;

/// `NARROW[wide][code]` and `WIDEN[code][wide]`, wide 0/1/2 = f32/bf16/f16.
static NARROW: [[Option<NarrowFn>; N]; 3] = {
    let mut t: [[Option<NarrowFn>; N]; 3] = [[None; N]; 3];
    macro_rules! codes {
        ($($ty:ty = $i:expr;)*) => {$(
            t[0][$i as usize] = Some(narrow_fn::<f32, $ty> as NarrowFn);
            t[1][$i as usize] = Some(narrow_fn::<BF16, $ty> as NarrowFn);
            t[2][$i as usize] = Some(narrow_fn::<F16, $ty> as NarrowFn);
        )*};
    }
    codes! {
        F8E4M3 = VCVT_F8E4M3; F8E5M2 = VCVT_F8E5M2;
        F8E4M3FNUZ = VCVT_F8E4M3FNUZ; F8E5M2FNUZ = VCVT_F8E5M2FNUZ; F6E2M3 = VCVT_F6E2M3;
        F6E3M2 = VCVT_F6E3M2; F4E2M1 = VCVT_F4E2M1; F8E8M0 = VCVT_F8E8M0;
        F8E3M4 = VCVT_F8E3M4; F8E4M3IEEE = VCVT_F8E4M3IEEE;
        F8E4M3B11FNUZ = VCVT_F8E4M3B11FNUZ; F8E5M3FNU = VCVT_F8E5M3FNU;
    }
    t
};

static WIDEN: [[Option<WidenFn>; 3]; N] = {
    let mut t: [[Option<WidenFn>; 3]; N] = [[None; 3]; N];
    macro_rules! codes {
        ($($ty:ty = $i:expr;)*) => {$(
            t[$i as usize][0] = Some(widen_fn::<$ty, f32> as WidenFn);
            t[$i as usize][1] = Some(widen_fn::<$ty, BF16> as WidenFn);
            t[$i as usize][2] = Some(widen_fn::<$ty, F16> as WidenFn);
        )*};
    }
    codes! {
        F8E4M3 = VCVT_F8E4M3; F8E5M2 = VCVT_F8E5M2;
        F8E4M3FNUZ = VCVT_F8E4M3FNUZ; F8E5M2FNUZ = VCVT_F8E5M2FNUZ; F6E2M3 = VCVT_F6E2M3;
        F6E3M2 = VCVT_F6E3M2; F4E2M1 = VCVT_F4E2M1; F8E8M0 = VCVT_F8E8M0;
        F8E3M4 = VCVT_F8E3M4; F8E4M3IEEE = VCVT_F8E4M3IEEE;
        F8E4M3B11FNUZ = VCVT_F8E4M3B11FNUZ; F8E5M3FNU = VCVT_F8E5M3FNU;
    }
    t
};

fn wide_slot(d: c_int) -> usize {
    match d {
        VCVT_F32 => 0,
        VCVT_BF16 => 1,
        _ => 2,
    }
}

/// Shared checks of the two scaled functions; returns the function to run.
#[allow(clippy::too_many_arguments)]
fn scaled_checks<T: Copy>(
    f: &str,
    src: *const u8,
    src_dtype: c_int,
    dst: *mut u8,
    dst_dtype: c_int,
    n: usize,
    narrow: bool,
    pick: impl Fn(c_int, c_int) -> Option<T>,
) -> Result<T, c_int> {
    let si = dtype_index(src_dtype).ok_or_else(|| bad_dtype(f, "src_dtype", src_dtype))?;
    let di = dtype_index(dst_dtype).ok_or_else(|| bad_dtype(f, "dst_dtype", dst_dtype))?;
    let Some(run) = pick(src_dtype, dst_dtype) else {
        let what = if narrow {
            "the source must be f32, bf16 or f16 and the destination a one-code-per-byte format (fp8, fp6, f4e2m1, e8m0)"
        } else {
            "the source must be a one-code-per-byte format (fp8, fp6, f4e2m1, e8m0) and the destination f32, bf16 or f16"
        };
        return Err(fail(
            VCVT_E_UNSUPPORTED,
            format_args!("{f}: {} -> {}: {what}", name(si), name(di)),
        ));
    };
    resolve(VCVT_BACKEND_AUTO, f)?;
    let sb = bytes_of(si, n).ok_or_else(|| too_big(f, n, si))?;
    let db = bytes_of(di, n).ok_or_else(|| too_big(f, n, di))?;
    if n > 0 && src.is_null() {
        return Err(null(f, "src", n));
    }
    if n > 0 && dst.is_null() {
        return Err(null(f, "dst", n));
    }
    if overlaps(src, sb, dst, db) {
        return Err(fail(
            VCVT_E_OVERLAP,
            format_args!("{f}: source and destination overlap"),
        ));
    }
    Ok(run)
}

/// Writes `code(x · scale)` for the `n` values at `src` (f32, bf16 or f16) into `dst` (f8/f6/f4e2m1/e8m0
/// format): the exact product
/// rounded once.
///
/// # Safety
/// `src` and `dst` are NULL or valid for `n` values of their dtypes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_narrow_scaled(
    src: *const c_void,
    src_dtype: c_int,
    scale: f32,
    dst: *mut c_void,
    dst_dtype: c_int,
    n: usize,
) -> c_int {
    const F: &str = "vcvt_narrow_scaled";
    guard(|| {
        let (src, dst) = (src.cast::<u8>(), dst.cast::<u8>());
        let run = tri!(scaled_checks(
            F,
            src,
            src_dtype,
            dst,
            dst_dtype,
            n,
            true,
            |s, d| {
                if !matches!(s, VCVT_F32 | VCVT_BF16 | VCVT_F16) {
                    return None;
                }
                NARROW[wide_slot(s)][d as usize]
            }
        ));
        // SAFETY: `run` is the pair's function; the buffers hold `n` values each, are not
        // NULL when `n > 0`, and do not overlap (checked above, per the caller's contract).
        code(unsafe { run(src, n, scale, dst, F) }, F)
    })
}

/// Writes `decode(code) · scale` for the `n` codes at `src` into `dst` (f32, bf16 or f16),
/// rounded once.
///
/// # Safety
/// `src` and `dst` are NULL or valid for `n` values of their dtypes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vcvt_dequantize_scaled(
    src: *const c_void,
    src_dtype: c_int,
    scale: f32,
    dst: *mut c_void,
    dst_dtype: c_int,
    n: usize,
) -> c_int {
    const F: &str = "vcvt_dequantize_scaled";
    guard(|| {
        let (src, dst) = (src.cast::<u8>(), dst.cast::<u8>());
        let run = tri!(scaled_checks(
            F,
            src,
            src_dtype,
            dst,
            dst_dtype,
            n,
            false,
            |s, d| {
                if !matches!(d, VCVT_F32 | VCVT_BF16 | VCVT_F16) {
                    return None;
                }
                WIDEN[s as usize][wide_slot(d)]
            }
        ));
        // SAFETY: as in `vcvt_narrow_scaled`.
        code(unsafe { run(src, n, scale, dst, F) }, F)
    })
}
