//! Exact, fast conversion of slices between `f32`/`f64` and the narrow float formats of
//! machine-learning inference: IEEE binary16 ([`F16`]), bfloat16 ([`BF16`]), the OCP fp8
//! formats E4M3 ([`F8E4M3`]) and E5M2 ([`F8E5M2`]), the fnuz fp8 formats ([`F8E4M3FNUZ`],
//! [`F8E5M2FNUZ`]), the MX element formats FP6 ([`F6E2M3`], [`F6E3M2`]) and FP4 ([`F4E2M1`],
//! and [`F4E2M1x2`] with two values per byte), the MX scale format E8M0 ([`F8E8M0`]), and
//! the other fp8 formats of ml_dtypes: E3M4 ([`F8E3M4`]), IEEE-style E4M3 ([`F8E4M3IEEE`]),
//! E4M3 with bias 11 ([`F8E4M3B11FNUZ`]) and the unsigned E5M3 ([`F8E5M3FNU`]).
//!
//! ```
//! use vcvt::{BF16, F16};
//!
//! let src = [1.0f32, -2.5, 65520.0, 1.0e-7];
//! let mut half = [F16::ZERO; 4];
//! vcvt::convert_slice(&src, &mut half);
//! assert_eq!(half[1].to_f32(), -2.5);
//! assert!(half[2].is_infinite()); // 65520 is the tie above F16::MAX: IEEE rounds it up
//!
//! let mut back = [0.0f32; 4];
//! vcvt::convert_slice(&half, &mut back);
//!
//! // Weights in a memory-mapped file: unaligned little-endian bytes, no copy.
//! let bytes: &[u8] = &[0x80, 0x3F, 0x40, 0xC0]; // bf16 1.0 and -3.0
//! let mut w = [0.0f32; 2];
//! vcvt::convert_from_bytes::<BF16, f32>(bytes, &mut w)?;
//! assert_eq!(w, [1.0, -3.0]);
//! # Ok::<(), vcvt::Error>(())
//! ```
//!
//! # The conversion contract
//!
//! Every backend, on every CPU, gives exactly these bits. The [`Backend::Scalar`] codec is
//! the specification; the tests compare every backend with it and with an independent
//! oracle, over all 2^32 f32 inputs.
//!
//! | | F16 | BF16 | F8E4M3 | F8E5M2 |
//! |---|---|---|---|---|
//! | layout (sign.exp.frac, bias) | 1.5.10, 15 | 1.8.7, 127 | 1.4.3, 7 | 1.5.2, 15 |
//! | largest finite | 65504 | ≈3.39e38 | 448 (`0x7E`) | 57344 (`0x7B`) |
//! | Inf | yes | yes | **no** | yes |
//! | narrowing | round to nearest, ties to even, once, from the f32/f64 value | same | same | same |
//! | subnormals | kept both ways | kept both ways | kept both ways | kept both ways |
//! | default overflow | `NonSaturating` | `NonSaturating` | `Saturate` | `Saturate` |
//! | overflow, `Saturate` | ±65504 | ±MAX | ±448 | ±57344 |
//! | overflow, `NonSaturating` | ±Inf | ±Inf | NaN (`0x7F`/`0xFF`) | ±Inf |
//! | ±Inf source | as overflow | as overflow | as overflow | as overflow |
//! | NaN source → (`Preserve`) | sign, top 10 payload bits, quiet bit set | sign, top 7 payload bits, quiet bit set | `0x7F \| sign` | `0x7E \| sign` |
//! | NaN → f32 | quiet bit set, payload kept (as `VCVTPH2PS`) | plain 16-bit shift (bits kept) | `0x7FC00000 \| sign` | as the F16 `code << 8` |
//! | → f64 | exact: to f32, then IEEE f32→f64 (NaN payload kept, quiet bit set) | same | same | same |
//!
//! | | F8E4M3FNUZ | F8E5M2FNUZ | F6E2M3 | F6E3M2 | F4E2M1 (and `F4E2M1x2`) | F8E8M0 |
//! |---|---|---|---|---|---|---|
//! | elsewhere | `float8_e4m3fnuz`, `F8_E4M3FNUZ` | `float8_e5m2fnuz`, `F8_E5M2FNUZ` | `float6_e2m3fn`, `F6_E2M3` | `float6_e3m2fn`, `F6_E3M2` | `float4_e2m1fn` (`float4_e2m1fn_x2`, `F4`) | `float8_e8m0fnu`, `F8_E8M0` |
//! | layout, bias | 1.4.3, **8** | 1.5.2, **16** | 1.2.3, 1 | 1.3.2, 3 | 1.2.1, 1 | 0.8.0, 127: `2^(c−127)` |
//! | range | ±240 (`0x7F`) | ±57344 (`0x7F`) | ±7.5 | ±28 | ±6 | 2^-127 (`0x00`) to 2^127 (`0xFE`) |
//! | storage | byte | byte | low 6 bits of a byte | low 6 bits of a byte | low 4 bits of a byte (x2: low nibble = element 0) | byte |
//! | specials | NaN = `0x80` only; no Inf; **no −0** | same | none | none | none | NaN = `0xFF`; no zero, no sign, no Inf |
//! | narrowing | nearest, ties to even, once | same | same | same | same | nearest power of two **in linear space, ties up**, once |
//! | default overflow | `Saturate` | `Saturate` | always saturates | always saturates | always saturates | `Saturate` |
//! | overflow, `Saturate` / `NonSaturating` | ±240 / `0x80` | ±57344 / `0x80` | ±7.5 / ±7.5 | ±28 / ±28 | ±6 / ±6 | `0xFE` / `0xFF` |
//! | ±Inf source | as overflow | as overflow | ±MAX | ±MAX | ±MAX | `0xFF` |
//! | zero, negative source | ±0 → `+0` (a negative result that rounds to zero is `+0`) | same | sign kept | sign kept | sign kept | `0xFF` (nothing represents it) |
//! | below the smallest value | rounds (subnormals kept) | same | same | same | same | `0x00`: 2^-127 is the nearest code |
//! | NaN source → (`Preserve`) | `0x80` | `0x80` | ±MAX (no NaN code) | ±MAX | ±MAX | `0xFF` |
//! | unused high bits | – | – | ignored when widening, zero when narrowing | same | same | – |
//! | NaN → f32 | `0xFFC00000` (the code's sign bit is set) | same | – | – | – | `0x7FC00000` |
//!
//! | | F8E3M4 | F8E4M3IEEE | F8E4M3B11FNUZ | F8E5M3FNU |
//! |---|---|---|---|---|
//! | elsewhere | `float8_e3m4` | `float8_e4m3` | `float8_e4m3b11fnuz` | `float8_e5m3fnu`, LLVM UE5M3 |
//! | layout, bias | 1.3.4, 3 | 1.4.3, 7 | 1.4.3, **11** | **0**.5.3, 15 (no sign) |
//! | range | ±15.5 (`0x6F`) | ±240 (`0x77`) | ±30 (`0x7F`) | 0 to 114688 (`0xFE`) |
//! | specials | ±Inf (`0x70`), NaN as IEEE | ±Inf (`0x78`), NaN as IEEE | NaN = `0x80` only; no Inf; **no −0** | NaN = `0xFF` only; no Inf, no sign |
//! | narrowing | nearest, ties to even, once | same | same | same |
//! | default overflow | `Saturate` | `Saturate` | `Saturate` | `Saturate` |
//! | overflow, `Saturate` / `NonSaturating` | ±15.5 / ±Inf | ±240 / ±Inf | ±30 / `0x80` | `0xFE` / `0xFF` |
//! | ±Inf source | as overflow | as overflow | as overflow | +Inf as overflow, −Inf `0xFF` |
//! | zero, negative source | sign kept | sign kept | ±0 → `+0` | −0 → `0x00`; every other negative value (−Inf included) → `0xFF` |
//! | NaN source → (`Preserve`) | `0x78 \| sign` | `0x7C \| sign` | `0x80` | `0xFF` |
//! | NaN → f32 | `0x7FC00000 \| sign` | `0x7FC00000 \| sign` | `0xFFC00000` | `0x7FC00000` |
//!
//! The NaN policy ([`NanPolicy`], chosen per call with [`Options::nan`]) decides what a NaN
//! source becomes; its docs have the table. fp6 and fp4 have no NaN code: a NaN becomes ±MAX
//! with its sign under every policy. Each format's type docs restate its rules, and
//! [`F4E2M1x2`] explains the length rule of packed slices.
//!
//! Details:
//! * Overflow is decided on the rounded value: for E4M3, 464 rounds to 448 and only values
//!   above 464 overflow; for F16, 65520 (the tie above 65504) overflows; for E4M3FNUZ, 248
//!   (the tie above 240) overflows.
//! * f64 sources are rounded once. `65520 − 2^-30` gives `F16::MAX`, not +Inf as it would
//!   through a plain f32 rounding.
//! * Signed zero is kept (except by the fnuz formats, which have none). Results do not
//!   depend on MXCSR/FPCR (flush-to-zero, DAZ, rounding mode).
//! * Overflow policy: see [`Overflow`]; choose one per call with [`Options`].
//!   [`Overflow::Saturate`] is the OCP saturating mode (CUDA's `satfinite`);
//!   [`Overflow::NonSaturating`] is IEEE 754 and what ml_dtypes and PyTorch do.
//! * Narrow → narrow pairs (every format to and from [`F16`] and [`BF16`]) round once: the
//!   source value is exact in f32 and is rounded to the destination under the
//!   destination's policies, exactly as going through an `f32` slice would.
//!
//! Where vcvt deliberately differs from ml_dtypes 0.6 (each difference is checked row by row
//! against ml_dtypes' own outputs in the test suite):
//! * fp6/fp4 NaN: ml_dtypes writes a zero of the opposite sign, vcvt ±MAX with the NaN's
//!   sign (torchao writes 1.5, ggml +0, MLX +6, Triton ±6; vcvt follows Triton's MX
//!   quantizer, the reference of gpt-oss, Hugging Face and vLLM).
//! * E8M0 for f32 inputs in (2^-127, 1.5·2^-127): ml_dtypes and PyTorch give `0x01`, but the
//!   nearest power of two is 2^-127, `0x00`.
//! * E8M0 for positive f64 inputs below f32's range: ml_dtypes gives `0xFF` (through an f32
//!   zero), vcvt `0x00`.
//! * Every f64 input that is not an f32, which ml_dtypes rounds twice (f64 → f32 → format):
//!   E4M3FNUZ `247.99999999999997` is NaN in ml_dtypes, 240 in vcvt.
//!
//! PyTorch's E8M0 gives `0x00` for ±0 and ignores the sign; vcvt gives `0xFF` (see
//! [`F8E8M0`]).
//!
//! # API
//!
//! * [`convert_slice`], [`convert_slice_with`], [`try_convert_slice`]: `copy_from_slice`-like.
//! * [`convert_slice_on`]: on a chosen [`Backend`].
//! * [`convert_slice_uninit`]: into `&mut [MaybeUninit<D>]`; [`convert_to_vec`]: into a new `Vec`.
//! * [`convert_from_bytes`], [`convert_to_bytes`]: unaligned little-endian bytes, such as a
//!   memory-mapped safetensors file.
//! * [`convert_from_bytes_uninit`]: unaligned bytes into `&mut [MaybeUninit<D>]`.
//! * [`round_trip`], [`round_trip_f64`]: quantize-dequantize in place through a format.
//! * [`block`]: block-scaled formats (MXFP4/6/8, NVFP4, DeepSeek block FP8), quantize and
//!   dequantize, with each ecosystem's rule as a named profile.
//! * [`vector`]: one SIMD register at a time (AVX2, AVX-512, NEON), for use inside your own
//!   `#[target_feature]` kernels, with the same bits.
//!
//! Supported pairs are `f32` and `f64` to and from each narrow format (and
//! `half::f16`/`half::bf16` with the `half` feature, `float8::F8E4M3`/`float8::F8E5M2` with
//! the `float8` feature), and every narrow format to and from [`F16`] and [`BF16`] (F16 ↔
//! BF16 included), rounded once under the destination's policies. Any other pair is a
//! compile error (see [`ConvertTo`]).
//!
//! # Text
//!
//! Every element type prints and parses without going through `f32` (and without
//! allocating):
//!
//! * `{}` prints the **shortest** decimal that parses back to the same code, positional, never
//!   with an exponent (as `f32`'s `Display`): the fewest significant digits that land in the
//!   code's rounding interval (its ends count when the code is even, the interval above
//!   `MAX` ending at `MAX + ulp/2`), the closest such decimal, and an exact tie on the last
//!   digit rounded up. For [`F16`] this is byte for byte what Rust's own `f16` prints. In
//!   a format with 2 or 3 fraction bits the shortest string is often not the exact value:
//!   E4M3's 448 prints `450` and E5M2's 57344 `60000`. [`F8E4M3::exact`] (every type has
//!   it) returns an adapter that prints the exact value, `448`. [`F8E8M0`] (powers of two,
//!   where "shortest" would be a single digit) always prints its exact value.
//! * `{:?}` is the same digits with `f32`'s `Debug` layout (`.0` on integers, scientific
//!   when the printed digits are below 1e-4 or at least 1e16: the text `f32`'s `Debug` gives
//!   the `f32` they denote); `{:e}`/`{:E}` the same digits in scientific form.
//! * With a precision (`{:.3}`, `{:.2e}`) the exact value is rounded at that precision, ties
//!   to even, exactly as `f32` formats the same value; flags, width, fill and alignment
//!   behave as for `f32`. NaN prints `NaN`, infinities `inf`/`-inf`, −0 `-0`.
//! * `{:x}`, `{:X}`, `{:b}`, `{:o}` print the stored bits.
//! * [`FromStr`](core::str::FromStr) accepts exactly the strings `f32` accepts, with the
//!   same [`ParseFloatError`](core::num::ParseFloatError)s, and rounds the **exact** decimal
//!   value once to the nearest code, ties to even, whatever the string's length (so
//!   `"1.000488281250000001"` is the F16 after 1.0, and the F16 subnormal ties that Rust's
//!   `f16` rounds up go to even). Then the format's default overflow policy applies, as in
//!   `from_f64`; `from_str_with` takes another. A literal `inf` is a value beyond every
//!   limit: under [`Overflow::Saturate`] (the fp8 default) it gives ±MAX, so E5M2's
//!   printed `inf` parses back to `MAX` unless `NonSaturating` is asked for. `nan` is an
//!   error for the formats without a NaN (fp6, fp4).
//!
//! ```
//! use vcvt::{F16, F8E4M3, F8E5M2};
//!
//! let x = F16::from_f32(0.1);
//! assert_eq!(x.to_string(), "0.1");                     // half/f32 would print 0.099975586
//! assert_eq!(x.exact().to_string(), "0.0999755859375");
//! assert_eq!(format!("{:?} {:e} {:.3}", F16::MAX, F16::MAX, x), "65500.0 6.55e4 0.100");
//! assert_eq!(F8E4M3::MAX.to_string(), "450");           // the shortest string that reads back
//! assert_eq!(F8E4M3::MAX.exact().to_string(), "448");   // the exact value
//! assert_eq!("450".parse::<F8E4M3>()?, F8E4M3::MAX);
//! assert_eq!(F8E5M2::MAX.to_string(), "60000");
//! assert_eq!("1.000488281250000001".parse::<F16>()?.to_bits(), 0x3C01); // rounded once
//! # Ok::<(), core::num::ParseFloatError>(())
//! ```
//!
//! # Backends
//!
//! [`Backend::available`] lists the backends this CPU can run, [`Backend::active`] the one
//! the entry points use. The choice is made once per process and cached. With the `std`
//! feature (default), `VCVT_BACKEND=<name>` forces a backend; a name that is unknown or not
//! runnable here makes the first conversion panic with a message that says so. Without
//! `std`, the choice comes from the target features enabled at compile time.
//! [`Backend::is_simd`] says which pairs a backend runs with SIMD code; the others run the
//! Scalar kernel there, with the same bits. [`Backend::kernel`] says which kernel (instruction
//! set, vector width, passes) serves a pair.
//!
//! Large conversions: on x86-64, a widening to f32 or f64 that moves (source plus destination bytes) at
//! least three quarters of the last-level cache size that CPUID reports, or 32 MiB if it
//! reports none, writes its destination with streaming (non-temporal) stores, as `memcpy`
//! does for large copies: the backend's kernel converts 8 KiB of destination at a time into
//! a buffer that stays in the L1 cache, and streaming stores move it out, with the same
//! bits on every backend. (Narrowing and the widenings to F16 and BF16 keep ordinary
//! stores: streaming measured no faster there.) With `std`, `VCVT_STREAM_MIN_BYTES=<bytes>` sets that threshold for the process
//! (`0`: stream every such conversion; a huge value: never; a value that is not a byte
//! count panics on the first conversion, naming the variable).
//!
//! Slices off a cache line: on the 512-bit x86-64 backends, a 64-byte vector access that
//! straddles two cache lines costs about two, and every access of a slice that starts off a
//! 64-byte boundary straddles (a `Vec` larger than 128 KiB from glibc's `malloc` starts 16
//! bytes past one). So a conversion of at least 4 KiB of f32 or f64 destination, or 16 KiB
//! of another format, converts its first few values (fewer than 64) in a call of their own
//! and the rest from a line boundary of the destination (of the source, when the
//! destination's elements are single bytes), with the same bits. Aligning your buffers to
//! 64 bytes avoids even that first call.
//!
//! # Features
//!
//! * `std` (default): runtime CPU detection, `VCVT_BACKEND`, [`convert_to_vec`] (via `alloc`).
//! * `alloc`: [`convert_to_vec`] without `std`.
//! * `half`: `half::f16` and `half::bf16` slices work wherever [`F16`]/[`BF16`] slices do, and
//!   `From` converts between the types.
//! * `float8`: the same for `float8::F8E4M3` and `float8::F8E5M2` (what candle and mistral.rs
//!   store) with [`F8E4M3`]/[`F8E5M2`]. The bits are vcvt's (round to nearest even,
//!   subnormals kept), not the `float8` crate's.
//! * `serde`: `Serialize`/`Deserialize` for every element type (bits by default; strings and
//!   floats accepted), and helpers to write the `f32` value or the shortest string: see
//!   the `vcvt::serde` module (present with the feature).
//! * `num-traits`: `Num`, `Zero`, `One`, `Bounded`, `NumCast`, `ToPrimitive`,
//!   `FromPrimitive`, with correctly rounded arithmetic operators, and `FloatCore` for
//!   [`F16`] and [`BF16`] (no `std` needed): see the `vcvt::numeric` module (present with
//!   the feature).
//! * `safetensors` (needs `std`): the `vcvt::safetensors` module (present with the feature),
//!   the dtype mapping and conversion of a safetensors `TensorView` into typed (or
//!   uninitialised) slices, with errors that name the tensor.
//! * `pulp`: safe wrappers of the [`vector`] converters that take pulp's CPU-feature tokens
//!   (`pulp::x86::V3` plus a checked F16C, `pulp::x86::V4`, `pulp::aarch64::Neon`).
//! * `rayon` (needs `std`): explicit parallel entry points on the caller's rayon pool,
//!   bit-identical to the serial ones: `par_convert_slice` and friends (see
//!   `PAR_CHUNK` and `PAR_MIN_VALUES` for how the work is cut) and the `par_*` methods of
//!   the [`block`] types. Nothing runs in parallel unless a `par_*` function is called.
//!
//! # Where things live
//!
//! How the crate is built (the scalar specification, the width-generic vector layer, the
//! hand-written kernels, the per-backend tables), how to add a format or an instruction
//! set, and what each test proves: `docs/architecture.md` and `docs/testing.md` in the
//! repository. Measurements: `docs/performance.md`.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

#[macro_use]
mod macros;

#[macro_use]
mod element;

#[cfg(feature = "__internal-tests")]
#[doc(hidden)]
#[path = "internal_tests.rs"]
pub mod __internal_tests;
mod arch;
mod backend;
pub mod block;
mod codec;
mod converter;
mod error;
mod format;
mod options;
#[cfg(feature = "rayon")]
mod par;
#[cfg(feature = "safetensors")]
#[path = "st.rs"]
pub mod safetensors;
// The width-generic vector layer; its instantiations: x86-64 (AVX2, AVX-512), aarch64 (NEON),
// wasm32 (simd128).
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod simd;
mod slice;
mod stream;
mod text;
pub mod vector;

#[cfg(feature = "num-traits")]
pub mod numeric;
#[cfg(feature = "serde")]
pub mod serde;

pub use backend::{Backend, KernelInfo, Override};
#[cfg(feature = "std")]
pub use backend::{BackendEnvError, ENV_VAR};
pub use converter::Converter;
pub use element::{ConvertTo, Element};
pub use error::{Error, ParseBackendError};
// Every format's type, one per registry line (`src/format/mod.rs`).
pub use format::*;
pub use options::{NanPolicy, Options, Overflow};
#[cfg(feature = "rayon")]
pub use par::*;
pub use slice::*;
pub use text::Exact;

/// Compiles and runs the README's Rust examples as doctests, so the front page cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
