/*
 * vcvt.h - the C API of vcvt (libvcvt): exact, fast conversion between float/double and the
 * narrow floating-point formats of machine-learning inference (f16, bf16, fp8 OCP and fnuz,
 * fp6, fp4, E8M0, and ml_dtypes' fp8 E3M4, IEEE E4M3, E4M3B11FNUZ and unsigned E5M3), and block-scaled quantization (MXFP8/6/4, NVFP4, DeepSeek block FP8).
 *
 * C11 (also valid C++). Link with -lvcvt (pkg-config: vcvt; CMake: find_package(vcvt),
 * target vcvt::vcvt). See docs/c.md for installing and linking.
 *
 * Contracts that hold for every function returning int:
 *   - The return value is VCVT_OK (0) or a negative VCVT_E_* code; vcvt_strerror(code) gives
 *     its text and vcvt_last_error_message() a detailed message of the last failure on the
 *     calling thread.
 *   - Every argument is checked before anything is written: on any error, no output buffer
 *     (nor an out-parameter) is touched.
 *   - Buffers need no alignment. A count of zero values accepts NULL pointers.
 *   - Multi-byte elements are in the host's byte order (a float* is a float*), except the
 *     block FP8 tile scales (scale_inv), which are little-endian f32 bytes as checkpoints
 *     store them (on little-endian hosts simply a float array).
 *   - Input and output buffers of one call must not overlap (VCVT_E_OVERLAP).
 *   - Thread-safe: no function keeps state between calls except the backend choice, made
 *     once per process, and each thread's last error message. No function unwinds into
 *     the caller: an internal error (a Rust panic; none is expected) is caught and returned
 *     as VCVT_E_INTERNAL, after Rust's panic hook has printed it to stderr.
 *   - Enumeration arguments and fields are checked (VCVT_E_DTYPE / VCVT_E_INVALID); the
 *     enums are int-sized (do not build with -fshort-enums).
 */
#ifndef VCVT_H
#define VCVT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ---------------------------------------------------------------------------- */

#define VCVT_VERSION_MAJOR 0
#define VCVT_VERSION_MINOR 1
#define VCVT_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH; compare with vcvt_version_number(). */
#define VCVT_VERSION_NUMBER (VCVT_VERSION_MAJOR * 10000 + VCVT_VERSION_MINOR * 100 + VCVT_VERSION_PATCH)

/* The library's version, "MAJOR.MINOR.PATCH" (static string). */
const char *vcvt_version(void);
/* The library's version as MAJOR * 10000 + MINOR * 100 + PATCH. */
int vcvt_version_number(void);

/* ---- return codes ----------------------------------------------------------------------- */

typedef enum vcvt_status {
    VCVT_OK = 0,
    /* A pointer is NULL where the call needs memory behind it (a non-zero count or length). */
    VCVT_E_NULL = -1,
    /* A vcvt_dtype argument is not one of the VCVT_* dtype constants. */
    VCVT_E_DTYPE = -2,
    /* Unsupported combination: a dtype pair without a conversion, a dtype the function does
     * not take, or a profile/layout not defined for the element (e.g. the ggml layout with
     * an element other than E2M1). */
    VCVT_E_UNSUPPORTED = -3,
    /* A size product (values x element size, rows x cols, ...) does not fit in size_t or
     * exceeds PTRDIFF_MAX bytes. */
    VCVT_E_OVERFLOW = -4,
    /* A buffer length does not match what the shape needs (the message names the buffer,
     * the length it needs and the length it has). */
    VCVT_E_LENGTH = -5,
    /* The shape cannot be used with the format: cols not a multiple of 32 (ggml MXFP4) or
     * 64 (ggml NVFP4), a zero tile dimension. */
    VCVT_E_SHAPE = -6,
    /* An enumeration argument or field (overflow, nan, backend, element, profile, layout)
     * is not one of its constants. */
    VCVT_E_INVALID = -7,
    /* The requested backend is not built for this target or cannot run on this CPU. */
    VCVT_E_BACKEND = -8,
    /* The environment variable VCVT_BACKEND names an unknown backend or one this CPU cannot
     * run (read once per process, by calls with VCVT_BACKEND_AUTO). */
    VCVT_E_BACKEND_ENV = -9,
    /* An output buffer overlaps another buffer of the same call. */
    VCVT_E_OVERLAP = -10,
    /* Internal error (a Rust panic caught at the boundary). Not expected; please report. */
    VCVT_E_INTERNAL = -11,
    /* Block functions only: memory for the aligned copy of an unaligned float/bf16/f16
     * buffer could not be allocated. */
    VCVT_E_NOMEM = -12
} vcvt_status;

/* A static description of a return code; never NULL ("unknown vcvt error code" for a value
 * that is not one). */
const char *vcvt_strerror(int code);

/* The detailed message of the last call that failed on the calling thread (it names the
 * function, the argument and the sizes), or "" if none has failed. Valid until the next
 * failing call on this thread; successful calls do not change it. Never NULL. */
const char *vcvt_last_error_message(void);

/* ---- element types ---------------------------------------------------------------------- */

typedef enum vcvt_dtype {
    VCVT_F32 = 0,         /* float (IEEE binary32) */
    VCVT_F64 = 1,         /* double (IEEE binary64) */
    VCVT_F16 = 2,         /* IEEE binary16, 2 bytes (uint16_t bits) */
    VCVT_BF16 = 3,        /* bfloat16, 2 bytes */
    VCVT_F8E4M3 = 4,      /* OCP fp8 E4M3 (float8_e4m3fn): max 448, no Inf, NaN 0x7F/0xFF */
    VCVT_F8E5M2 = 5,      /* OCP fp8 E5M2: max 57344, Inf */
    VCVT_F8E4M3FNUZ = 6,  /* fp8 E4M3 fnuz (bias 8): max 240, NaN 0x80 only, no -0 */
    VCVT_F8E5M2FNUZ = 7,  /* fp8 E5M2 fnuz (bias 16): max 57344, NaN 0x80 only, no -0 */
    VCVT_F6E2M3 = 8,      /* MX fp6 E2M3, one code per byte (low 6 bits): max 7.5 */
    VCVT_F6E3M2 = 9,      /* MX fp6 E3M2, one code per byte (low 6 bits): max 28 */
    VCVT_F4E2M1 = 10,     /* MX fp4 E2M1, one code per byte (low 4 bits): max 6 */
    VCVT_F4E2M1X2 = 11,   /* fp4 E2M1, two per byte: value 2j in the low nibble of byte j;
                           * n values take (n + 1) / 2 bytes (odd n: last high nibble 0) */
    VCVT_F8E8M0 = 12,     /* E8M0 (MX scale): 2^(c - 127), 0xFF NaN, no sign or zero */
    VCVT_F8E3M4 = 13,     /* fp8 E3M4 (ml_dtypes float8_e3m4), IEEE-style, bias 3: max 15.5
                           * (0x6F), +-Inf 0x70/0xF0, NaN 0x71..0x7F and 0xF1..0xFF */
    VCVT_F8E4M3IEEE = 14, /* fp8 E4M3 IEEE-style (ml_dtypes float8_e4m3), bias 7: max 240
                           * (0x77), +-Inf 0x78/0xF8, NaN 0x79..0x7F and 0xF9..0xFF */
    VCVT_F8E4M3B11FNUZ = 15, /* fp8 E4M3, bias 11 (ml_dtypes float8_e4m3b11fnuz): max 30
                              * (0x7F), NaN 0x80 only, no -0, no Inf */
    VCVT_F8E5M3FNU = 16,  /* unsigned fp8 E5M3 (ml_dtypes float8_e5m3fnu, LLVM UE5M3), bias
                           * 15: 0 to 114688 (0xFE), NaN 0xFF only, no sign, no Inf; every
                           * negative source but -0 (which gives 0x00) narrows to NaN 0xFF */
    VCVT_DTYPE_COUNT = 17 /* number of dtypes (not a dtype); new dtypes are appended */
} vcvt_dtype;

/* The dtype's name ("f32", "bf16", "f8e4m3", ..., "f8e3m4", "f8e4m3ieee", "f8e4m3b11fnuz",
 * "f8e5m3fnu"), or NULL if dtype is not a vcvt_dtype. */
const char *vcvt_dtype_name(int dtype);

/* Stores in *out the bytes that n values of dtype take (VCVT_F4E2M1X2: (n + 1) / 2).
 * Errors: VCVT_E_DTYPE, VCVT_E_NULL (out), VCVT_E_OVERFLOW. */
int vcvt_dtype_bytes(vcvt_dtype dtype, size_t n, size_t *out);

/* ---- backends --------------------------------------------------------------------------- */

typedef enum vcvt_backend {
    VCVT_BACKEND_AUTO = 0,        /* the best backend this CPU runs, or the one the
                                   * VCVT_BACKEND environment variable names */
    VCVT_BACKEND_SCALAR = 1,      /* "scalar": everywhere */
    VCVT_BACKEND_AVX2 = 2,        /* "avx2": x86-64 AVX2 + FMA + F16C */
    VCVT_BACKEND_AVX512 = 3,      /* "avx512": x86-64 AVX-512 F/BW/VL/DQ */
    VCVT_BACKEND_AVX512_VBMI = 4, /* "avx512-vbmi" */
    VCVT_BACKEND_AVX512_BF16 = 5, /* "avx512-bf16" */
    VCVT_BACKEND_NEON = 6,        /* "neon": aarch64 */
    VCVT_BACKEND_NEON_BF16 = 7,   /* "neon-bf16": aarch64 with FEAT_BF16 */
    VCVT_BACKEND_PORTABLE = 8,    /* "portable": compiler-vectorised, other hosts */
    VCVT_BACKEND_SIMD128 = 9,     /* "simd128": wasm32 */
    VCVT_BACKEND_AVX512_FP16 = 10 /* "avx512-fp16": x86-64 AVX-512 with VBMI, BF16, FP16 */
} vcvt_backend;

/* Every backend gives the same bits; choosing one is for tests, benchmarks and pinning. */

/* The backend's name ("auto", "scalar", "avx2", ...), or NULL if b is not a vcvt_backend. */
const char *vcvt_backend_name(int b);
/* 1 if backend b is built for this target and runs on this CPU (VCVT_BACKEND_AUTO: always),
 * 0 if not; VCVT_E_INVALID if b is not a vcvt_backend. */
int vcvt_backend_available(int b);
/* The backend VCVT_BACKEND_AUTO calls run on (a positive vcvt_backend), or
 * VCVT_E_BACKEND_ENV if the VCVT_BACKEND environment variable is not usable. */
int vcvt_backend_active(void);
/* The backend with this exact lowercase name ("auto" included); VCVT_E_INVALID if none,
 * VCVT_E_NULL if name is NULL. */
int vcvt_backend_from_name(const char *name);

/* ---- element conversion ----------------------------------------------------------------- */

typedef enum vcvt_overflow {
    VCVT_OVERFLOW_DEFAULT = 0,       /* the destination's default: non-saturating for f16 and
                                      * bf16 (IEEE), saturating for fp8/fp6/fp4/e8m0 */
    VCVT_OVERFLOW_SATURATE = 1,      /* overflow and +-Inf become +-MAX */
    VCVT_OVERFLOW_NONSATURATING = 2  /* overflow becomes +-Inf, or NaN without Inf */
} vcvt_overflow;

typedef enum vcvt_nan {
    VCVT_NAN_PRESERVE = 0,  /* sign and top payload bits (f16/bf16), else the NaN code */
    VCVT_NAN_CANONICAL = 1, /* one quiet NaN per format, sign kept */
    VCVT_NAN_TO_MAX = 2     /* +-MAX with the NaN's sign */
} vcvt_nan;

/* Options of one call. All-zero (or passing NULL) means the defaults. The fields are int
 * holding the enum constants. */
typedef struct vcvt_options {
    int overflow; /* vcvt_overflow: applies when narrowing */
    int nan;      /* vcvt_nan: what a NaN source becomes when narrowing */
    int backend;  /* vcvt_backend: VCVT_BACKEND_AUTO or a backend to run on */
} vcvt_options;

/*
 * Converts n values from src (of src_dtype) to dst (of dst_dtype), each rounded once to
 * nearest, ties to even (E8M0: nearest power of two, ties up), under the options.
 *
 * Supported pairs: VCVT_F32 and VCVT_F64 to and from every other dtype; every fp8, fp6, fp4
 * and E8M0 dtype to and from VCVT_F16 and VCVT_BF16; F16 <-> BF16. n counts values (for
 * VCVT_F4E2M1X2 the buffer holds (n + 1) / 2 bytes). options may be NULL. Overflow and NaN
 * per dtype: VCVT_F8E3M4 and VCVT_F8E4M3IEEE saturate to +-MAX by default, give +-Inf under
 * VCVT_OVERFLOW_NONSATURATING and 0x78|sign / 0x7C|sign for NaN; VCVT_F8E4M3B11FNUZ gives
 * +-30 or NaN 0x80 (and +0 for -0); VCVT_F8E5M3FNU gives 0xFE (114688) or NaN 0xFF.
 * VCVT_OVERFLOW_NONSATURATING with VCVT_NAN_PRESERVE is what ml_dtypes' astype gives.
 *
 * Errors: VCVT_E_DTYPE (unknown src_dtype/dst_dtype), VCVT_E_UNSUPPORTED (pair without a
 * conversion, e.g. f32 -> f32 or f8e4m3 -> f8e5m2), VCVT_E_INVALID (an options field),
 * VCVT_E_BACKEND / VCVT_E_BACKEND_ENV, VCVT_E_OVERFLOW (n values exceed PTRDIFF_MAX bytes),
 * VCVT_E_NULL (src or dst NULL with n > 0), VCVT_E_OVERLAP.
 */
int vcvt_convert(const void *src, vcvt_dtype src_dtype, void *dst, vcvt_dtype dst_dtype,
                 size_t n, const vcvt_options *options);

/*
 * Replaces each of the n values of x (x_dtype VCVT_F32 or VCVT_F64) in place by its value
 * after narrowing to format (under the options) and widening back: "fake quantization".
 * Equal, bit for bit, to vcvt_convert there and back.
 *
 * Errors: VCVT_E_DTYPE, VCVT_E_UNSUPPORTED (x_dtype not f32/f64, or format f32/f64),
 * VCVT_E_INVALID, VCVT_E_BACKEND, VCVT_E_BACKEND_ENV, VCVT_E_OVERFLOW, VCVT_E_NULL.
 */
int vcvt_round_trip(void *x, vcvt_dtype x_dtype, vcvt_dtype format, size_t n,
                    const vcvt_options *options);

/* ---- a conversion resolved once ----------------------------------------------------------
 * For loops that convert many short rows with the same dtypes and options: the dtype pair,
 * the options and the backend (and its kernel) are checked and resolved once by
 * vcvt_converter_init; vcvt_converter_run then checks only the handle, n and the buffers and
 * calls the kernel (the results are vcvt_convert's, bit for bit).
 *
 *     vcvt_converter c;
 *     if (vcvt_converter_init(&c, VCVT_F32, VCVT_BF16, NULL) != VCVT_OK) ...;
 *     for (size_t r = 0; r < rows; r++)
 *         vcvt_converter_run(&c, src + r * cols, dst + r * cols, cols);
 *
 * The struct is caller-owned plain data (no allocation, nothing to free, no global state;
 * copies by assignment or memcpy are the same conversion; any number of threads may run one
 * handle at once). Its fields are private. It is valid only in the process that initialised
 * it and only with this library version. vcvt_converter_run detects a handle that was never
 * initialised or was overwritten (a check word over every field: any one changed word, a
 * struct filled with one byte), or that comes from another process (the check mixes in an
 * address of the library, which differs per process where the OS randomises addresses), and
 * returns VCVT_E_INVALID without touching the buffers. It catches accidents; a deliberately
 * forged handle is outside the contract. */
typedef struct vcvt_converter {
    uint64_t check;   /* private */
    uint64_t pair;    /* private */
    uint64_t state[16]; /* private */
} vcvt_converter;

/* Resolves the conversion from src_dtype to dst_dtype under options (NULL: the defaults)
 * into *converter. A pinned backend is checked here; VCVT_BACKEND_AUTO takes the active
 * backend now, and the handle keeps it.
 * Errors: VCVT_E_DTYPE, VCVT_E_UNSUPPORTED (pair without a conversion), VCVT_E_INVALID (an
 * options field), VCVT_E_BACKEND, VCVT_E_BACKEND_ENV, VCVT_E_NULL (converter). On error
 * *converter is not written. */
int vcvt_converter_init(vcvt_converter *converter, vcvt_dtype src_dtype, vcvt_dtype dst_dtype,
                        const vcvt_options *options);

/* Converts n values from src into dst with the resolved conversion: the same contract as
 * vcvt_convert (any alignment, n == 0 accepts NULL, counts and sizes as there).
 * Errors: VCVT_E_NULL (converter NULL, or src/dst NULL with n > 0), VCVT_E_INVALID (the
 * handle fails its check), VCVT_E_OVERFLOW (n values exceed PTRDIFF_MAX bytes),
 * VCVT_E_OVERLAP. Nothing is written on error. */
int vcvt_converter_run(const vcvt_converter *converter, const void *src, void *dst, size_t n);

/* ---- scaled building blocks ------------------------------------------------------------- */

/* Stores in *out the largest magnitude of the n values at src (dtype VCVT_F32, VCVT_BF16 or
 * VCVT_F16); NaN if one is NaN; 0 for n == 0.
 * Errors: VCVT_E_DTYPE, VCVT_E_UNSUPPORTED (other dtype), VCVT_E_NULL, VCVT_E_OVERFLOW,
 * VCVT_E_BACKEND_ENV, VCVT_E_NOMEM. */
int vcvt_amax(const void *src, vcvt_dtype dtype, size_t n, float *out);

/* Writes code(x * scale) for the n values at src (VCVT_F32, VCVT_BF16 or VCVT_F16) into dst
 * (any one-code-per-byte dtype: VCVT_F8E4M3 to VCVT_F8E8M0 but VCVT_F4E2M1X2, and the dtypes
 * from VCVT_F8E3M4 on): the exact product, rounded once with the
 * destination's default policies. A per-row or per-tensor scale without a second pass.
 * Errors: VCVT_E_DTYPE, VCVT_E_UNSUPPORTED, VCVT_E_NULL, VCVT_E_OVERFLOW, VCVT_E_OVERLAP,
 * VCVT_E_BACKEND_ENV, VCVT_E_NOMEM. */
int vcvt_narrow_scaled(const void *src, vcvt_dtype src_dtype, float scale, void *dst,
                       vcvt_dtype dst_dtype, size_t n);

/* Writes decode(code) * scale for the n codes at src (the dtypes vcvt_narrow_scaled writes)
 * into dst (VCVT_F32, VCVT_BF16 or VCVT_F16), the exact product rounded
 * once. Errors: as vcvt_narrow_scaled. */
int vcvt_dequantize_scaled(const void *src, vcvt_dtype src_dtype, float scale, void *dst,
                           vcvt_dtype dst_dtype, size_t n);

/* ---- block formats: common rules --------------------------------------------------------
 * A matrix is rows x cols values, row-major and tight, on the unquantized side (float, bf16
 * or f16: VCVT_F32, VCVT_BF16, VCVT_F16). Blocks run along a row; the last block of a row
 * may be short. The quantized side is bytes; pass each buffer's length in bytes, which must
 * be exactly what the *_len functions report (VCVT_E_LENGTH otherwise). A layout that keeps
 * scales inside its blocks takes scales == NULL with scales_len == 0. An unaligned float/
 * bf16/f16 buffer is copied through an aligned heap buffer (VCVT_E_NOMEM if that fails).
 * Errors of every block function: VCVT_E_INVALID (a field of the format struct),
 * VCVT_E_UNSUPPORTED (profile or layout not defined for the element; a src/dst dtype other
 * than f32/bf16/f16), VCVT_E_DTYPE, VCVT_E_SHAPE, VCVT_E_OVERFLOW (rows x cols or a buffer
 * size), VCVT_E_LENGTH, VCVT_E_NULL, VCVT_E_OVERLAP, VCVT_E_BACKEND, VCVT_E_BACKEND_ENV.
 * ------------------------------------------------------------------------------------------ */

/* ---- MX: MXFP8, MXFP6, MXFP4 (32 values share one E8M0 scale byte) ---------------------- */

typedef enum vcvt_mx_element {
    VCVT_MX_E4M3 = 0, /* MXFP8 E4M3, one byte per value */
    VCVT_MX_E5M2 = 1, /* MXFP8 E5M2 */
    VCVT_MX_E2M3 = 2, /* MXFP6 E2M3, one value per byte (low 6 bits) */
    VCVT_MX_E3M2 = 3, /* MXFP6 E3M2, one value per byte */
    VCVT_MX_E2M1 = 4  /* MXFP4, two values per byte (value 2j in the low nibble of byte j) */
} vcvt_mx_element;

typedef enum vcvt_mx_profile {
    VCVT_MX_PROFILE_CEIL = 0, /* smallest power-of-two scale >= amax / max (RCEIL; torchao,
                               * Triton ROUND_UP, gpt-oss, cuBLAS) */
    VCVT_MX_PROFILE_OCP = 1,  /* OCP MX v1.0: floor(log2 amax) - emax */
    VCVT_MX_PROFILE_GGML = 2, /* llama.cpp / gguf MXFP4 rules (E2M1 only) */
    VCVT_MX_PROFILE_MLX = 3   /* MLX 0.32 CPU mxfp4 / mxfp8 (E2M1 and E4M3 only) */
} vcvt_mx_profile;

typedef enum vcvt_mx_layout {
    VCVT_MX_LAYOUT_PLANAR = 0, /* codes (rows x row bytes) and scale bytes
                                * (rows x ceil(cols / 32)) in two buffers */
    VCVT_MX_LAYOUT_GGML = 1    /* llama.cpp block_mxfp4: 17 bytes per 32 values (scale byte,
                                * then 16 bytes: low nibbles values 0..15, high 16..31);
                                * E2M1 only, cols a multiple of 32; scales NULL, length 0 */
} vcvt_mx_layout;

/* An MX format. All-zero is MXFP8 E4M3, RCEIL, planar, automatic backend. */
typedef struct vcvt_mx {
    int element; /* vcvt_mx_element */
    int profile; /* vcvt_mx_profile */
    int layout;  /* vcvt_mx_layout */
    int backend; /* vcvt_backend */
} vcvt_mx;

/* Stores in *out the bytes of codes (ggml layout: of whole blocks) that rows x cols need. */
int vcvt_mx_data_len(vcvt_mx mx, size_t rows, size_t cols, size_t *out);
/* Stores in *out the scale bytes that rows x cols need (0 for the ggml layout). */
int vcvt_mx_scales_len(vcvt_mx mx, size_t rows, size_t cols, size_t *out);
/* Quantizes rows x cols values at src into data and scales. */
int vcvt_mx_quantize(vcvt_mx mx, const void *src, vcvt_dtype src_dtype, size_t rows, size_t cols,
                     uint8_t *data, size_t data_len, uint8_t *scales, size_t scales_len);
/* Dequantizes data and scales into rows x cols values at dst: decode(code) * 2^(s - 127),
 * exact in f32, rounded once to bf16/f16; scale byte 0xFF makes its block NaN (profiles
 * OCP/CEIL). */
int vcvt_mx_dequantize(vcvt_mx mx, const uint8_t *data, size_t data_len, const uint8_t *scales,
                       size_t scales_len, size_t rows, size_t cols, void *dst,
                       vcvt_dtype dst_dtype);

/* ---- NVFP4 (16 fp4 values share an E4M3 scale, times one f32 tensor scale) -------------- */

typedef enum vcvt_nv_profile {
    VCVT_NV_PROFILE_MODELOPT = 0, /* NVIDIA ModelOpt: tensor scale = amax / (6 * 448) */
    VCVT_NV_PROFILE_MLX = 1,      /* MLX 0.32 CPU mode="nvfp4" (no global_scale = 2688) */
    VCVT_NV_PROFILE_GGML = 2      /* llama.cpp block_nvfp4 (tensor scale 1) */
} vcvt_nv_profile;

typedef enum vcvt_nv_layout {
    VCVT_NV_LAYOUT_PLANAR = 0, /* packed codes (rows x ceil(cols / 2)) and E4M3 scale bytes
                                * (rows x ceil(cols / 16)) */
    VCVT_NV_LAYOUT_GGML = 1    /* llama.cpp block_nvfp4: 36 bytes per 64 values, cols a
                                * multiple of 64; scales NULL, length 0 */
} vcvt_nv_layout;

/* An NVFP4 format. All-zero is ModelOpt, planar, automatic backend. */
typedef struct vcvt_nvfp4 {
    int profile; /* vcvt_nv_profile */
    int layout;  /* vcvt_nv_layout */
    int backend; /* vcvt_backend */
} vcvt_nvfp4;

int vcvt_nvfp4_data_len(vcvt_nvfp4 nv, size_t rows, size_t cols, size_t *out);
int vcvt_nvfp4_scales_len(vcvt_nvfp4 nv, size_t rows, size_t cols, size_t *out);
/* Stores in *out the tensor scale that means "none" for the profile (MLX: 2688, else 1). */
int vcvt_nvfp4_identity_tensor_scale(vcvt_nvfp4 nv, float *out);
/* Quantizes rows x cols values at src into packed codes and E4M3 block scales. The tensor
 * scale is *tensor_scale if tensor_scale is not NULL, else the profile's (ModelOpt:
 * amax / 2688); it is stored in *tensor_scale_out if that is not NULL (only on success). */
int vcvt_nvfp4_quantize(vcvt_nvfp4 nv, const void *src, vcvt_dtype src_dtype, size_t rows,
                        size_t cols, uint8_t *data, size_t data_len, uint8_t *scales,
                        size_t scales_len, const float *tensor_scale, float *tensor_scale_out);
/* Dequantizes: fp4 * f32(f32(scale) * tensor_scale), rounded to f32, then to dst_dtype. */
int vcvt_nvfp4_dequantize(vcvt_nvfp4 nv, const uint8_t *data, size_t data_len,
                          const uint8_t *scales, size_t scales_len, float tensor_scale,
                          size_t rows, size_t cols, void *dst, vcvt_dtype dst_dtype);

/* ---- block FP8 (E4M3 codes, one f32 scale per tile: DeepSeek weight_scale_inv) ---------- */

typedef enum vcvt_fp8_profile {
    VCVT_FP8_PROFILE_DEEPSEEK = 0, /* scale_inv = max(amax, 1e-4) / 448 (DeepSeek-V3/R1) */
    VCVT_FP8_PROFILE_UE8M0 = 1     /* that, rounded up to a power of two (DeepSeek-V3.1) */
} vcvt_fp8_profile;

/* Tiles of tile_rows x tile_cols values (DeepSeek weights 128 x 128, activations 1 x 128);
 * edge tiles are cropped. A zero tile dimension is VCVT_E_SHAPE. */
typedef struct vcvt_block_fp8 {
    size_t tile_rows;
    size_t tile_cols;
    int profile; /* vcvt_fp8_profile */
    int backend; /* vcvt_backend */
} vcvt_block_fp8;

/* Stores in *out the bytes of E4M3 codes rows x cols need (rows * cols). */
int vcvt_block_fp8_data_len(vcvt_block_fp8 fp8, size_t rows, size_t cols, size_t *out);
/* Stores in *out the bytes of scale_inv: 4 per tile, ceil(rows/tile_rows) x
 * ceil(cols/tile_cols) little-endian f32, row-major. */
int vcvt_block_fp8_scale_inv_len(vcvt_block_fp8 fp8, size_t rows, size_t cols, size_t *out);
/* Quantizes rows x cols values into E4M3 codes and tile scales. */
int vcvt_block_fp8_quantize(vcvt_block_fp8 fp8, const void *src, vcvt_dtype src_dtype,
                            size_t rows, size_t cols, uint8_t *data, size_t data_len,
                            uint8_t *scale_inv, size_t scale_inv_len);
/* Dequantizes: f32(e4m3) * scale_inv rounded to f32, then to dst_dtype (as DeepSeek's
 * weight_dequant). */
int vcvt_block_fp8_dequantize(vcvt_block_fp8 fp8, const uint8_t *data, size_t data_len,
                              const uint8_t *scale_inv, size_t scale_inv_len, size_t rows,
                              size_t cols, void *dst, vcvt_dtype dst_dtype);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* VCVT_H */
