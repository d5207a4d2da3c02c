//! Backends: one kernel table per instruction-set tier.
//!
//! Every kernel has the same raw signature so that a backend is a plain table of function
//! pointers indexed by the pair (see `element::narrow_index`/`widen_index`), and so that the
//! same kernels serve typed slices, uninitialized destinations and unaligned byte buffers.
//!
//! Every table starts as the Scalar backend's (`scalar::scalar_kernels`), which converts
//! every pair under every policy; a SIMD backend replaces the pairs it has kernels for with
//! [`Kernels::set`]. A SIMD kernel implements the overflow policy; the NaN policy only
//! changes the results of NaN sources, so a kernel that implements just
//! [`NanPolicy::Preserve`](crate::NanPolicy::Preserve) (as the existing ones do) is run by
//! [`run_with_nan_patch`] for the other policies: the kernel converts a chunk, then the
//! Scalar kernel rewrites the elements whose source is NaN.

use crate::element::PAIRS;
use crate::element::private::Pair;
use crate::element::{ConvertTo, Element};
use crate::format::FORMATS;
use crate::options::{NanPolicy, Policy};

/// A conversion kernel.
///
/// `len` counts values: for a packed FP4 side, the packed slice holds `len.div_ceil(2)`
/// bytes.
///
/// # Safety
/// The caller guarantees that `src` is valid for reading `len` source values and `dst` is
/// valid for writing `len` destination values (both possibly unaligned), that the two
/// ranges do not overlap, and that the CPU has the target features of the backend the kernel
/// belongs to.
pub(crate) type RawKernel = unsafe fn(src: *const u8, dst: *mut u8, len: usize, policy: Policy);

/// One pair's kernel in a backend's table.
#[derive(Clone, Copy)]
pub(crate) struct Slot {
    /// The kernel.
    pub(crate) run: RawKernel,
    /// Whether it is a SIMD kernel (false: the Scalar kernel, one element at a time).
    pub(crate) simd: bool,
    /// Whether it implements every [`NanPolicy`] itself (the Scalar kernels do).
    pub(crate) all_nan_policies: bool,
    /// The instruction set (and so the vector width) it is written for.
    pub(crate) isa: Isa,
}

/// The instruction set a kernel is written for, which fixes its vector width: what
/// [`Backend::kernel`](crate::Backend::kernel) reports. A backend's table records, for each
/// slot, the tag that was current when the slot was set ([`Kernels::tag`]), so a tier that
/// keeps a narrower tier's kernel for some pair says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code)] // Each target builds only its own ISAs.
pub(crate) enum Isa {
    /// One element at a time.
    Scalar,
    /// Plain Rust vectorised by the compiler (128-bit on the hosts it serves).
    Portable,
    /// WebAssembly SIMD (128-bit).
    Simd128,
    /// x86-64 AVX2, FMA and F16C (256-bit).
    Avx2,
    /// x86-64 AVX-512 (512-bit).
    Avx512,
    /// aarch64 AdvSIMD (128-bit).
    Neon,
}

impl Isa {
    /// The name [`KernelInfo::isa`](crate::KernelInfo) reports.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Portable => "portable",
            Isa::Simd128 => "simd128",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }

    /// The vector width in bits (0: one element at a time).
    pub(crate) const fn bits(self) -> u32 {
        match self {
            Isa::Scalar => 0,
            Isa::Portable | Isa::Simd128 | Isa::Neon => 128,
            Isa::Avx2 => 256,
            Isa::Avx512 => 512,
        }
    }
}

/// A backend's kernels: the pairs with an f32 or f64 side, indexed by pair, and the direct
/// kernels of narrow → narrow pairs, indexed by `source format * FORMATS + destination
/// format` (`None`: the pair runs its two halves through a stack buffer).
pub(crate) struct Kernels(
    pub(crate) [Slot; PAIRS],
    pub(crate) [Option<RawKernel>; DIRECT],
    /// Fused in-place round trips of f32 through format number `i` (`set_round_trip`).
    pub(crate) [Option<RawKernel>; FORMATS],
    /// The instruction set of each direct kernel (meaningful where `.1` is `Some`).
    pub(crate) [Isa; DIRECT],
    /// The instruction set of each fused round trip (meaningful where `.2` is `Some`).
    pub(crate) [Isa; FORMATS],
    /// The tag that the `set*` methods record: see [`Kernels::tag`].
    pub(crate) Isa,
);

/// Number of direct-kernel slots.
pub(crate) const DIRECT: usize = FORMATS * FORMATS;

/// A placeholder until a table is filled (the registry fills every slot).
unsafe fn unfilled(_: *const u8, _: *mut u8, _: usize, _: Policy) {
    unreachable!("vcvt: kernel table slot not filled")
}

impl Kernels {
    /// A table whose slots are all unfilled.
    pub(crate) const fn empty() -> Kernels {
        Kernels(
            [Slot {
                run: unfilled,
                simd: false,
                all_nan_policies: true,
                isa: Isa::Scalar,
            }; PAIRS],
            [None; DIRECT],
            [None; FORMATS],
            [Isa::Scalar; DIRECT],
            [Isa::Scalar; FORMATS],
            Isa::Scalar,
        )
    }

    /// Makes `isa` the instruction set that the following `set*` calls record: a backend's
    /// table builder calls it before setting the kernels it writes for its own ISA (after
    /// starting from a narrower tier's table, whose slots keep their tags).
    #[allow(dead_code)] // Not every build has a SIMD backend.
    pub(crate) const fn tag(&mut self, isa: Isa) {
        self.5 = isa;
    }

    /// Sets the four Scalar kernels of format number `fmt` (f32 ←, f64 ←, → f32, → f64).
    pub(crate) const fn set_scalar(&mut self, fmt: usize, k: [RawKernel; 4]) {
        let mut i = 0;
        while i < 4 {
            self.0[fmt * crate::element::PAIRS_PER_FORMAT + i] = Slot {
                run: k[i],
                simd: false,
                all_nan_policies: true,
                isa: Isa::Scalar,
            };
            i += 1;
        }
    }

    /// Replaces pair `S -> D` with a SIMD kernel that implements the overflow policy and
    /// [`NanPolicy::Preserve`] (other NaN policies are patched by the dispatcher).
    #[allow(dead_code)] // Not every build has a SIMD backend.
    pub(crate) const fn set<S: ConvertTo<D>, D: Element>(&mut self, k: RawKernel) {
        let pair = S::PAIR;
        // The patch rewrites single destination elements, which a packed side lacks.
        assert!(
            !pair.packed,
            "a packed kernel must implement every NaN policy"
        );
        self.0[pair.index] = Slot {
            run: k,
            simd: true,
            all_nan_policies: false,
            isa: self.5,
        };
    }

    /// Gives the narrow → narrow pair `S -> D` a direct kernel (one pass, in registers),
    /// which implements the overflow policy and [`NanPolicy::Preserve`]; under the other NaN
    /// policies the pair runs its two halves with the NaN patch.
    #[allow(dead_code)] // Not every build has a SIMD backend.
    pub(crate) const fn set_direct<S: ConvertTo<D>, D: Element>(&mut self, k: RawKernel) {
        match S::PAIR.via {
            Some(via) => {
                self.1[via.direct] = Some(k);
                self.3[via.direct] = self.5;
            }
            None => panic!("set_direct: not a narrow -> narrow pair"),
        }
    }

    /// Takes the direct kernel of the narrow → narrow pair `S -> D` away again, so that the
    /// pair runs its two halves through a stack buffer: an override, for a tier where the
    /// two passes of its own kernels measured faster than a one-pass kernel set before.
    #[allow(dead_code)] // Not every build has a SIMD backend.
    pub(crate) const fn two_pass<S: ConvertTo<D>, D: Element>(&mut self) {
        match S::PAIR.via {
            Some(via) => {
                self.1[via.direct] = None;
                self.3[via.direct] = Isa::Scalar;
            }
            None => panic!("two_pass: not a narrow -> narrow pair"),
        }
    }

    /// Gives `round_trip` of f32 through format `F` a fused kernel: it narrows and widens
    /// back in registers, in place (it is called with `src == dst`, which is allowed for
    /// such a kernel only: it reads each element before writing it, and a round trip of a
    /// value it already wrote gives that value again, so overlapping steps are harmless).
    /// It implements the overflow policy and [`NanPolicy::Preserve`]; the other NaN
    /// policies run the two halves with the NaN patch.
    #[allow(dead_code)] // Not every build has a SIMD backend.
    pub(crate) const fn set_round_trip<F: ConvertTo<f32>>(&mut self, k: RawKernel)
    where
        f32: ConvertTo<F>,
    {
        let pair = <f32 as ConvertTo<F>>::PAIR;
        assert!(!pair.packed && pair.via.is_none());
        self.2[pair.index / crate::element::PAIRS_PER_FORMAT] = Some(k);
        self.4[pair.index / crate::element::PAIRS_PER_FORMAT] = self.5;
    }

    /// Replaces pair `S -> D` with a SIMD kernel that implements the overflow policy and
    /// every [`NanPolicy`] itself: for pairs whose NaN result does not depend on the NaN
    /// policy (fp6 and fp4 targets, which have no NaN code, and widening pairs), and for
    /// packed pairs, which the NaN patch cannot serve.
    #[allow(dead_code)] // Not every build has a SIMD backend.
    pub(crate) const fn set_all_policies<S: ConvertTo<D>, D: Element>(&mut self, k: RawKernel) {
        self.0[S::PAIR.index] = Slot {
            run: k,
            simd: true,
            all_nan_policies: true,
            isa: self.5,
        };
    }
}

/// Runs `kernel`, the kernel of `pair` (a narrowing pair), on `len` values with the NaN
/// policy patched in: `kernel` converts with `policy` (its NaN results are those of
/// [`NanPolicy::Preserve`]), then the Scalar kernel of the same pair, which implements every
/// policy, rewrites each element whose source is NaN.
///
/// # Safety
/// As for [`RawKernel`].
#[cold]
pub(crate) unsafe fn run_with_nan_patch(
    kernel: RawKernel,
    pair: Pair,
    src: *const u8,
    dst: *mut u8,
    len: usize,
    policy: Policy,
) {
    debug_assert!(policy.nan != NanPolicy::Preserve && pair.narrow_src != 0 && !pair.packed);
    let scalar = scalar::KERNELS.0[pair.index].run;
    let (src_size, dst_size) = (pair.narrow_src, pair.dst_size);
    // SAFETY: the caller guarantees the whole ranges, and every access below is to element
    // `i < len` of them; the Scalar kernel needs no target feature.
    unsafe {
        kernel(src, dst, len, policy);
        for i in 0..len {
            let p = src.add(i * src_size);
            let is_nan = if src_size == 8 {
                let a = p.cast::<u64>().read_unaligned() & 0x7FFF_FFFF_FFFF_FFFF;
                a > 0x7FF0_0000_0000_0000
            } else {
                let a = p.cast::<u32>().read_unaligned() & 0x7FFF_FFFF;
                a > 0x7F80_0000
            };
            if is_nan {
                scalar(p, dst.add(i * dst_size), 1, policy);
            }
        }
    }
}

#[cfg(target_arch = "aarch64")]
pub(crate) mod aarch64;
#[cfg(any(
    all(
        feature = "portable",
        not(any(target_arch = "aarch64", target_arch = "wasm32"))
    ),
    all(target_arch = "wasm32", target_feature = "simd128")
))]
pub(crate) mod portable;
pub(crate) mod scalar;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) mod wasm32;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;
