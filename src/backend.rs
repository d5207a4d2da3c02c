//! Backend selection: which kernel table runs a conversion.
//!
//! Detection runs once. The chosen backend's table is cached in an atomic pointer, so the
//! per-call cost of dispatch is one relaxed load, a null check and an indirect call.
//! With `std`, the environment variable `VCVT_BACKEND` forces a backend by name.

use core::fmt;
use core::str::FromStr;
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use crate::arch::{self, Kernels};
use crate::error::ParseBackendError;
use crate::{ConvertTo, Element};

/// An implementation of every conversion for one instruction-set tier.
///
/// Every backend produces exactly the same bits as [`Backend::Scalar`] for every input.
/// Each variant has a stable lowercase [`name`](Backend::name), which `VCVT_BACKEND`,
/// [`FromStr`] and [`Display`](fmt::Display) use.
///
/// ```
/// use vcvt::Backend;
/// assert!(Backend::available().any(|b| b == Backend::Scalar));
/// assert!(Backend::active().is_available());
/// assert_eq!("scalar".parse::<Backend>(), Ok(Backend::Scalar));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Portable code, one element at a time; available everywhere. Name: `scalar`.
    Scalar,
    /// x86-64 with AVX2, FMA and F16C (Haswell, Zen 1 and later). Name: `avx2`.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// x86-64 with AVX-512 F, BW, VL and DQ (Skylake-X, Zen 4 and later), plus the AVX2 tier's
    /// features. Name: `avx512`.
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// The `Avx512` tier plus AVX512_VBMI (Ice Lake, Sapphire Rapids, Zen 4 and later), whose
    /// 128-byte table lookups (`VPERMI2B`) widen F8E4M3 to f32 and f64 and F8E5M2 to f64.
    /// Name: `avx512-vbmi`.
    #[cfg(target_arch = "x86_64")]
    Avx512Vbmi,
    /// The `Avx512Vbmi` tier plus AVX512_BF16 (Sapphire Rapids, Zen 4 and later), whose
    /// `VCVTNE2PS2BF16` narrows f32 to BF16. Name: `avx512-bf16`. (Cooper Lake has
    /// AVX512_BF16 but not AVX512_VBMI, and runs `Avx512`.)
    #[cfg(target_arch = "x86_64")]
    Avx512Bf16,
    /// The `Avx512Bf16` tier plus AVX512_FP16 (Sapphire Rapids and later Intel server cores),
    /// whose F16 arithmetic on 32 lanes narrows F16 and BF16 to the one-byte formats (all but
    /// F8E5M2FNUZ, F8E5M3FNU and F8E8M0; BF16 not to F8E5M2). Name:
    /// `avx512-fp16`. Its kernels need Rust 1.94 or later to compile; built with an older
    /// compiler, the tier is never available.
    #[cfg(target_arch = "x86_64")]
    Avx512Fp16,
    /// aarch64 base AdvSIMD (every ARMv8-A core). Name: `neon`.
    #[cfg(target_arch = "aarch64")]
    Neon,
    /// aarch64 AdvSIMD with FEAT_BF16 (`BFCVTN`). Name: `neon-bf16`.
    #[cfg(target_arch = "aarch64")]
    NeonBf16,
    /// Plain-Rust kernels that the compiler vectorises (`src/arch/portable.rs`), cloned by
    /// `multiversion` and chosen at run time: x86-64-v2 (SSE4.2; the SSE2 baseline on older
    /// x86-64), LoongArch LASX, the s390x vector facility, or the target's baseline. The
    /// backend for hosts without a hand-written tier; on x86-64 it ranks below `avx2`. Its
    /// kernels cover the f32 pairs that measured faster than Scalar; the rest run Scalar.
    /// Name: `portable`. Requires the `portable` feature (on by default); not built on
    /// aarch64, where NEON is baseline and has a hand-written tier, nor on wasm32 (see
    /// `Simd128`).
    #[cfg(all(
        feature = "portable",
        not(any(target_arch = "aarch64", target_arch = "wasm32"))
    ))]
    Portable,
    /// wasm32 with the `simd128` feature enabled at compile time
    /// (`-C target-feature=+simd128`): the width-generic kernels at 128 bits and, for the
    /// pairs where they measured faster, the `portable` kernels vectorised to WebAssembly
    /// SIMD by the compiler. WebAssembly has no run-time feature detection, so this tier
    /// exists only in builds for SIMD-capable engines. Name: `simd128`.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Simd128,
}

/// A backend with its kernels, in a static so that a pointer to it can be cached.
pub(crate) struct Entry {
    backend: Backend,
    pub(crate) kernels: &'static Kernels,
}

impl Entry {
    /// The backend whose kernels these are.
    pub(crate) fn backend(&self) -> Backend {
        self.backend
    }

    /// Whether conversions on these kernels are split to start their wider side on a
    /// 64-byte boundary (`Geometry::align_head`): the 512-bit x86-64 tiers, whose unaligned
    /// vector accesses straddle a cache line each. (The 256-bit `avx2` kernels, most of which
    /// align their own stores to 32 bytes, lost at most 15% off a line in the same
    /// measurement, f32 -> BF16 at 64 Ki values, and are not split.)
    #[inline(always)]
    pub(crate) fn aligns(&self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            matches!(
                self.backend,
                Backend::Avx512 | Backend::Avx512Vbmi | Backend::Avx512Bf16 | Backend::Avx512Fp16
            )
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }
}

static SCALAR: Entry = Entry {
    backend: Backend::Scalar,
    kernels: &arch::scalar::KERNELS,
};
#[cfg(target_arch = "x86_64")]
static AVX2: Entry = Entry {
    backend: Backend::Avx2,
    kernels: &arch::x86_64::tables::AVX2,
};
#[cfg(target_arch = "x86_64")]
static AVX2_GENERIC: Entry = Entry {
    backend: Backend::Avx2,
    kernels: &arch::x86_64::tables::AVX2_GENERIC,
};
#[cfg(target_arch = "x86_64")]
static AVX512: Entry = Entry {
    backend: Backend::Avx512,
    kernels: &arch::x86_64::tables::AVX512,
};
#[cfg(target_arch = "x86_64")]
static AVX512_VBMI: Entry = Entry {
    backend: Backend::Avx512Vbmi,
    kernels: &arch::x86_64::tables::AVX512_VBMI,
};
#[cfg(target_arch = "x86_64")]
static AVX512_BF16: Entry = Entry {
    backend: Backend::Avx512Bf16,
    kernels: &arch::x86_64::tables::AVX512_BF16,
};
#[cfg(target_arch = "x86_64")]
static AVX512_FP16: Entry = Entry {
    backend: Backend::Avx512Fp16,
    kernels: &arch::x86_64::tables::AVX512_FP16,
};
#[cfg(target_arch = "aarch64")]
static NEON: Entry = Entry {
    backend: Backend::Neon,
    kernels: &arch::aarch64::tables::NEON,
};
#[cfg(all(
    feature = "portable",
    not(any(target_arch = "aarch64", target_arch = "wasm32"))
))]
static PORTABLE: Entry = Entry {
    backend: Backend::Portable,
    kernels: &arch::portable::KERNELS,
};
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
static SIMD128: Entry = Entry {
    backend: Backend::Simd128,
    kernels: &arch::wasm32::SIMD128,
};
#[cfg(target_arch = "aarch64")]
static NEON_BF16: Entry = Entry {
    backend: Backend::NeonBf16,
    kernels: &arch::aarch64::tables::NEON_BF16,
};

impl Backend {
    /// Every backend compiled into this build for this target, best first. Not all of them
    /// need be usable on this CPU: see [`Backend::available`].
    pub const ALL: &'static [Backend] = &[
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512Fp16,
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512Bf16,
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512Vbmi,
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512,
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2,
        #[cfg(target_arch = "aarch64")]
        Backend::NeonBf16,
        #[cfg(target_arch = "aarch64")]
        Backend::Neon,
        #[cfg(all(
            feature = "portable",
            not(any(target_arch = "aarch64", target_arch = "wasm32"))
        ))]
        Backend::Portable,
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Backend::Simd128,
        Backend::Scalar,
    ];

    /// The backend's stable lowercase name.
    ///
    /// ```
    /// assert_eq!(vcvt::Backend::Scalar.name(), "scalar");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => "avx512",
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Vbmi => "avx512-vbmi",
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Bf16 => "avx512-bf16",
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Fp16 => "avx512-fp16",
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => "neon",
            #[cfg(target_arch = "aarch64")]
            Backend::NeonBf16 => "neon-bf16",
            #[cfg(all(
                feature = "portable",
                not(any(target_arch = "aarch64", target_arch = "wasm32"))
            ))]
            Backend::Portable => "portable",
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Backend::Simd128 => "simd128",
        }
    }

    /// The backend with this name (exact, lowercase), if this build has it.
    pub fn from_name(name: &str) -> Option<Backend> {
        Backend::ALL.iter().copied().find(|b| b.name() == name)
    }

    /// Whether this CPU can run the backend.
    #[inline]
    pub fn is_available(self) -> bool {
        // One relaxed load after the first call: detection is cached as a bit set.
        let mut mask = AVAILABLE.load(Ordering::Relaxed);
        if mask == 0 {
            mask = detect_available();
        }
        mask & (1 << self as u32) != 0
    }

    /// Whether this backend converts `S -> D` with SIMD code. `false` means it runs the
    /// Scalar kernel, one element at a time, for that pair (the bits are the same either
    /// way); [`Backend::Scalar`] is never SIMD.
    ///
    /// ```
    /// use vcvt::{Backend, F16, F8E8M0};
    /// assert!(!Backend::Scalar.is_simd::<f32, F16>());
    /// for b in Backend::available() {
    ///     println!("{b}: f32 -> F16 SIMD: {}", b.is_simd::<f32, F16>());
    /// }
    /// ```
    pub fn is_simd<S: ConvertTo<D>, D: Element>(self) -> bool {
        let pair = S::PAIR;
        let table = &self.entry().kernels.0;
        // A narrow -> narrow pair runs a direct kernel (always SIMD) or its two halves:
        // SIMD when both are.
        match pair.via {
            Some(v) if self.entry().kernels.1[v.direct].is_some() => true,
            Some(v) => table[pair.index].simd && table[v.widen].simd,
            None => table[pair.index].simd,
        }
    }

    /// An identity of the code this backend runs for `S -> D`: two backends with equal
    /// identities run the same kernel (an AVX-512 tier runs the AVX2 kernel of a pair it has
    /// none of its own for). The tests use it to prove each kernel once over the exhaustive
    /// sets instead of once per backend; not part of the stable API.
    #[doc(hidden)]
    pub fn kernel_id<S: ConvertTo<D>, D: Element>(self) -> (usize, usize) {
        self.entry().kernel_id::<S, D>()
    }

    /// [`kernel_id`](Self::kernel_id) in this backend's table of generic kernels alone (the
    /// table before its override list), where the backend keeps one: a pair whose two
    /// identities differ runs an override. Not part of the stable API.
    #[doc(hidden)]
    pub fn generic_kernel_id<S: ConvertTo<D>, D: Element>(self) -> Option<(usize, usize)> {
        self.generic_entry().map(|e| e.kernel_id::<S, D>())
    }

    /// [`kernel_id`](Self::kernel_id) of the fused round trip through `F` (its kernel's
    /// address, 0 where the backend runs the narrowing and the widening instead), and the
    /// same in the backend's table of generic kernels alone where it keeps one. Not part of
    /// the stable API.
    #[doc(hidden)]
    pub fn round_trip_kernel_ids<F: ConvertTo<f32>>(self) -> (usize, Option<usize>)
    where
        f32: ConvertTo<F>,
    {
        let fmt = <f32 as ConvertTo<F>>::PAIR.index / crate::element::PAIRS_PER_FORMAT;
        let id = |e: &Entry| e.kernels.2[fmt].map_or(0, |k| k as usize);
        (id(self.entry()), self.generic_entry().map(id))
    }

    /// This backend's override list: the pairs where a hand-written kernel replaces the
    /// generic one (for `avx512-fp16`, the `avx512-bf16` one), each with the instruction that
    /// wins and the measured ratio (`arch/x86_64/tables.rs`). Empty for a backend without a table of generic kernels.
    /// `tests/kernels.rs` checks it against the tables. Not part of the stable API.
    #[doc(hidden)]
    pub fn overrides(self) -> &'static [Override] {
        match self {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => arch::x86_64::tables::AVX2_OVERRIDES,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Fp16 => arch::x86_64::tables::AVX512_FP16_OVERRIDES,
            _ => &[],
        }
    }

    /// This backend's table of generic kernels alone, where it keeps one.
    pub(crate) fn generic_entry(self) -> Option<&'static Entry> {
        match self {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => Some(&AVX2_GENERIC),
            // The tier's overrides replace `Avx512Bf16` kernels.
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Fp16 => Some(&AVX512_BF16),
            _ => None,
        }
    }
}

impl Entry {
    /// See [`Backend::kernel_id`].
    fn kernel_id<S: ConvertTo<D>, D: Element>(&self) -> (usize, usize) {
        let pair = S::PAIR;
        let table = &self.kernels.0;
        let direct = &self.kernels.1;
        match pair.via {
            Some(v) => match direct[v.direct] {
                Some(k) => (k as usize, 0),
                None => (table[pair.index].run as usize, table[v.widen].run as usize),
            },
            None => (table[pair.index].run as usize, 0),
        }
    }
}

impl Backend {
    /// Which kernel serves `S -> D` on this backend: its instruction set, vector width and
    /// number of passes over the data. Every backend gives the same bits for every pair; this
    /// says how fast a pair can be expected to run, for instance whether an AVX-512 tier
    /// serves it at its own width or with a narrower tier's kernel.
    ///
    /// ```
    /// use vcvt::{Backend, F16, F8E4M3};
    /// let k = Backend::Scalar.kernel::<f32, F16>();
    /// assert_eq!((k.isa, k.bits, k.passes), ("scalar", 0, 1));
    /// for b in Backend::available() {
    ///     // For instance "avx512-bf16: F16 -> F8E4M3 runs avx512 (512-bit)".
    ///     println!("{b}: F16 -> F8E4M3 runs {}", b.kernel::<F16, F8E4M3>());
    /// }
    /// ```
    pub fn kernel<S: ConvertTo<D>, D: Element>(self) -> KernelInfo {
        let pair = S::PAIR;
        let k = self.entry().kernels;
        match pair.via {
            Some(v) if k.1[v.direct].is_some() => KernelInfo::of(k.3[v.direct], 1),
            // The two halves through a buffer: the narrower of the two, twice.
            Some(v) => KernelInfo::narrower(k.0[v.widen].isa, k.0[pair.index].isa),
            None => KernelInfo::of(k.0[pair.index].isa, 1),
        }
    }

    /// Which kernel serves [`round_trip`](crate::round_trip) of f32 through `F` on this
    /// backend: a fused one (one pass, in registers) or the two conversions in chunks (two
    /// passes).
    ///
    /// ```
    /// use vcvt::{Backend, F8E4M3};
    /// assert_eq!(Backend::Scalar.round_trip_kernel::<F8E4M3>().passes, 2);
    /// ```
    pub fn round_trip_kernel<F: ConvertTo<f32>>(self) -> KernelInfo
    where
        f32: ConvertTo<F>,
    {
        let narrow = <f32 as ConvertTo<F>>::PAIR;
        let widen = F::PAIR;
        let k = self.entry().kernels;
        let fmt = narrow.index / crate::element::PAIRS_PER_FORMAT;
        match k.2[fmt] {
            Some(_) => KernelInfo::of(k.4[fmt], 1),
            None => KernelInfo::narrower(k.0[narrow.index].isa, k.0[widen.index].isa),
        }
    }

    /// The vector width of this backend's own kernels, in bits: 512 for the AVX-512 tiers,
    /// 256 for `avx2`, 128 for NEON, `portable` and `simd128`, 0 for Scalar. A pair whose
    /// [`kernel`](Backend::kernel) is narrower runs a lower tier's kernel on this one.
    ///
    /// ```
    /// assert_eq!(vcvt::Backend::Scalar.width_bits(), 0);
    /// ```
    pub fn width_bits(self) -> u32 {
        self.entry().kernels.5.bits()
    }

    /// Runs the CPU detection for this backend (uncached).
    fn detect(self) -> bool {
        match self {
            Backend::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => arch::x86_64::avx2_available(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => arch::x86_64::avx512_available(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Vbmi => arch::x86_64::avx512_vbmi_available(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Bf16 => arch::x86_64::avx512_bf16_available(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Fp16 => arch::x86_64::avx512_fp16_available(),
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => arch::aarch64::neon_available(),
            #[cfg(target_arch = "aarch64")]
            Backend::NeonBf16 => arch::aarch64::neon_bf16_available(),
            // The baseline clone runs on any CPU of the target. Not under Miri, which
            // interprets these kernels too slowly for the fuzz replays that run every
            // backend; the internal tests of `arch::portable` run them under Miri directly.
            #[cfg(all(
                feature = "portable",
                not(any(target_arch = "aarch64", target_arch = "wasm32"))
            ))]
            Backend::Portable => !cfg!(miri),
            // Compiled in only when the build targets simd128.
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Backend::Simd128 => true,
        }
    }

    /// Every backend this CPU can run, best first; [`Backend::Scalar`] is always last.
    ///
    /// ```
    /// for b in vcvt::Backend::available() {
    ///     println!("{b}");
    /// }
    /// ```
    pub fn available() -> impl Iterator<Item = Backend> + Clone {
        Backend::ALL.iter().copied().filter(|b| b.is_available())
    }

    /// The backend that [`convert_slice`](crate::convert_slice) and the other entry points
    /// without a backend argument use: the best available one, unless `VCVT_BACKEND` names
    /// another.
    ///
    /// # Panics
    /// On its first use in a process (by this function or any conversion), if `VCVT_BACKEND`
    /// is set to a name that is not a backend, or to a backend this CPU cannot run. A forced
    /// backend is never ignored silently.
    pub fn active() -> Backend {
        active_entry().backend
    }

    /// The backend `VCVT_BACKEND` asks for: `Ok(None)` when it is unset or empty, an error
    /// when it names no backend or one this CPU cannot run. Reads the environment each time;
    /// the dispatcher reads it once.
    #[cfg(feature = "std")]
    pub fn from_env() -> Result<Option<Backend>, BackendEnvError> {
        let Some(value) = std::env::var_os(ENV_VAR) else {
            return Ok(None);
        };
        let Some(value) = value.to_str() else {
            return Err(BackendEnvError::Unknown(
                value.to_string_lossy().into_owned(),
            ));
        };
        if value.is_empty() {
            return Ok(None);
        }
        match Backend::from_name(value) {
            None => Err(BackendEnvError::Unknown(value.into())),
            Some(b) if !b.is_available() => Err(BackendEnvError::Unavailable(b)),
            Some(b) => Ok(Some(b)),
        }
    }

    pub(crate) fn entry(self) -> &'static Entry {
        match self {
            Backend::Scalar => &SCALAR,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => &AVX2,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => &AVX512,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Vbmi => &AVX512_VBMI,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Bf16 => &AVX512_BF16,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Fp16 => &AVX512_FP16,
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => &NEON,
            #[cfg(target_arch = "aarch64")]
            Backend::NeonBf16 => &NEON_BF16,
            #[cfg(all(
                feature = "portable",
                not(any(target_arch = "aarch64", target_arch = "wasm32"))
            ))]
            Backend::Portable => &PORTABLE,
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Backend::Simd128 => &SIMD128,
        }
    }
}

/// One entry of a tier's override list ([`Backend::overrides`]). Not part of the stable API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Override {
    /// The pair, as `"F16 -> BF16"`, `"f32 -> F8E4M3"` or `"round_trip F16"`.
    pub pair: &'static str,
    /// The instruction or method that makes the hand-written kernel faster.
    pub wins_by: &'static str,
    /// The hand-written kernel's rate over the generic kernel's, measured (at least 1.1).
    pub ratio: f32,
}

/// Which kernel serves a pair on a backend ([`Backend::kernel`]).
///
/// ```
/// use vcvt::{Backend, F16};
/// let k = Backend::active().kernel::<f32, F16>();
/// println!("f32 -> F16 on {}: {k}", Backend::active());
/// assert_eq!(k.is_simd(), k.bits > 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct KernelInfo {
    /// The instruction set the kernel is written for: `"scalar"` (one element at a time),
    /// `"portable"`, `"simd128"`, `"avx2"`, `"avx512"` or `"neon"`. The AVX-512 tiers'
    /// kernels (VBMI, BF16 included) all report `"avx512"`; a tier that runs a lower tier's
    /// kernel for a pair reports that tier.
    pub isa: &'static str,
    /// The width of the vectors the kernel works on, in bits (0 for Scalar).
    pub bits: u32,
    /// Passes over the data: 1, or 2 for a narrow → narrow pair (or a round trip) that runs
    /// its two conversions in chunks through a buffer; `isa` and `bits` are then the
    /// narrower of the two.
    pub passes: u8,
}

impl KernelInfo {
    pub(crate) fn of(isa: arch::Isa, passes: u8) -> KernelInfo {
        KernelInfo {
            isa: isa.name(),
            bits: isa.bits(),
            passes,
        }
    }

    fn narrower(a: arch::Isa, b: arch::Isa) -> KernelInfo {
        KernelInfo::of(if a.bits() <= b.bits() { a } else { b }, 2)
    }

    /// Whether the kernel is SIMD code (`bits > 0`).
    pub fn is_simd(&self) -> bool {
        self.bits > 0
    }
}

impl fmt::Display for KernelInfo {
    /// `avx512 (512-bit)`, `avx2 (256-bit, 2 passes)`, `scalar`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.isa)?;
        match (self.bits, self.passes) {
            (0, 1) => Ok(()),
            (0, p) => write!(f, " ({p} passes)"),
            (b, 1) => write!(f, " ({b}-bit)"),
            (b, p) => write!(f, " ({b}-bit, {p} passes)"),
        }
    }
}

/// The environment variable that forces a backend.
#[cfg(feature = "std")]
pub const ENV_VAR: &str = "VCVT_BACKEND";

/// Why `VCVT_BACKEND` could not be honoured.
#[cfg(feature = "std")]
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackendEnvError {
    /// The value names no backend of this build.
    Unknown(std::string::String),
    /// The named backend cannot run on this CPU.
    Unavailable(Backend),
}

#[cfg(feature = "std")]
impl fmt::Display for BackendEnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendEnvError::Unknown(v) => write!(
                f,
                "{ENV_VAR}={v:?} names no vcvt backend (known: {})",
                NameList(Backend::ALL.iter().copied())
            ),
            BackendEnvError::Unavailable(b) => write!(
                f,
                "{ENV_VAR}={} names a backend this CPU cannot run (available: {})",
                b.name(),
                NameList(Backend::available())
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for BackendEnvError {}

#[cfg(feature = "std")]
struct NameList<I>(I);

#[cfg(feature = "std")]
impl<I: Iterator<Item = Backend> + Clone> fmt::Display for NameList<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.0.clone().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(b.name())?;
        }
        Ok(())
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Backend {
    type Err = ParseBackendError;
    fn from_str(s: &str) -> Result<Backend, ParseBackendError> {
        Backend::from_name(s).ok_or(ParseBackendError(()))
    }
}

/// Bit `b as u32` is set when backend `b` is available; bit 31 marks the set as computed,
/// so 0 means "not yet detected".
static AVAILABLE: AtomicU32 = AtomicU32::new(0);

#[cold]
#[inline(never)]
fn detect_available() -> u32 {
    let mut mask = 1 << 31;
    for &b in Backend::ALL {
        if b.detect() {
            mask |= 1 << b as u32;
        }
    }
    // Racing detections compute the same set.
    AVAILABLE.store(mask, Ordering::Relaxed);
    mask
}

/// The cached choice; null until the first conversion.
static ACTIVE: AtomicPtr<Entry> = AtomicPtr::new(core::ptr::null_mut());

/// The active backend's entry: one relaxed load on every call after the first.
#[inline(always)]
pub(crate) fn active_entry() -> &'static Entry {
    let p = ACTIVE.load(Ordering::Relaxed);
    if p.is_null() {
        return init_active();
    }
    // SAFETY: ACTIVE only ever holds null or a pointer made from a `&'static Entry` in
    // `init_active`; entries are immutable statics, so the reference is valid forever and
    // needs no synchronisation beyond the atomic load of the pointer itself.
    unsafe { &*p }
}

#[cold]
#[inline(never)]
fn init_active() -> &'static Entry {
    let entry = choose().entry();
    // Racing initialisations all compute the same choice, so any winner is fine.
    ACTIVE.store(core::ptr::from_ref(entry).cast_mut(), Ordering::Relaxed);
    entry
}

fn choose() -> Backend {
    #[cfg(feature = "std")]
    match Backend::from_env() {
        Ok(Some(b)) => return b,
        Ok(None) => {}
        Err(e) => panic!("vcvt: {e}"),
    }
    Backend::available().next().unwrap_or(Backend::Scalar)
}
