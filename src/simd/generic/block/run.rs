//! The loop of the block kernels ([`map`]: a source, a lane-wise step, a destination) and
//! the small helpers they share.

use core::marker::PhantomData;

use crate::block::spec::BlockDest;
use crate::codec::Format;
use crate::options::{NanPolicy, Policy};
use crate::simd::Vector;
use crate::simd::generic::kernels::{Brain, Dst, F32, Half, Src};
use crate::simd::generic::lanes;
use crate::{BF16, F16, Overflow};

/// The guard of the instantiations whose instructions carry their rounding (AVX-512,
/// WebAssembly): nothing to set up.
#[cfg(not(target_arch = "aarch64"))]
pub(crate) struct Unguarded;

/// A lane-wise step between a kernel's [`Src`] and its [`Dst`] (the scaling).
pub(crate) trait Lanes<V: Vector> {
    /// Applies the step to one vector of decoded lanes.
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    unsafe fn apply(&self, v: V) -> V;
}

/// `dst = D(m(S(src)))` for `len` elements: the loop of `kernels::run` with a step between
/// the two ends (four vectors an iteration, then single vectors, then one partial one whose
/// accesses touch exactly its elements).
///
/// # Safety
/// `src` valid for reading `len` source elements and `dst` for writing `len` destination
/// elements, and the CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn map<V: Vector, S: Src, D: Dst, M: Lanes<V>>(
    m: &M,
    c: &D::Ctx<V>,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let l = V::LANES;
    // SAFETY: every access covers elements below `len` (the loop conditions), at their
    // offsets; the CPU has `V`'s features (the caller's guarantee).
    unsafe {
        let mut i = 0;
        while i + 4 * l <= len {
            let v0 = D::encode::<V>(c, m.apply(S::load::<V>(src.add(S::offset(i)), l)));
            let v1 = D::encode::<V>(c, m.apply(S::load::<V>(src.add(S::offset(i + l)), l)));
            let v2 = D::encode::<V>(c, m.apply(S::load::<V>(src.add(S::offset(i + 2 * l)), l)));
            let v3 = D::encode::<V>(c, m.apply(S::load::<V>(src.add(S::offset(i + 3 * l)), l)));
            D::put4::<V>(c, [v0, v1, v2, v3], dst.add(D::offset(i)));
            i += 4 * l;
        }
        while i + l <= len {
            let v = D::encode::<V>(c, m.apply(S::load::<V>(src.add(S::offset(i)), l)));
            D::put::<V>(c, v, dst.add(D::offset(i)), l);
            i += l;
        }
        if i < len {
            let v = D::encode::<V>(c, m.apply(S::load::<V>(src.add(S::offset(i)), len - i)));
            D::put::<V>(c, v, dst.add(D::offset(i)), len - i);
        }
    }
}

/// The largest lane of `v` as an unsigned integer.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn max_lane<V: Vector>(v: V) -> u32 {
    let mut b = [0u32; 16];
    debug_assert!(V::LANES <= 16);
    // SAFETY: `b` holds 16 >= LANES lanes; the caller's guarantee for the features.
    unsafe { v.store_u32(b.as_mut_ptr().cast(), V::LANES) };
    b[..V::LANES].iter().copied().max().unwrap_or(0)
}

/// A destination of the block kernels: a [`Dst`] of the generic loops and the
/// [`BlockDest`] type whose codes it stores.
pub(crate) trait Out: Dst {
    /// The type written.
    type T: BlockDest;
    /// The same destination for lanes that hold only finite values, ±Inf, and NaNs whose
    /// low 16 bits are zero (a cheaper rounding where there is one).
    type Finite: Dst;
}
impl Out for F32 {
    type T = f32;
    type Finite = F32;
}
impl Out for Brain {
    type T = BF16;
    type Finite = BrainFinite;
}
impl Out for Half {
    type T = F16;
    type Finite = Half;
}

/// BF16 codes of lanes that are finite, ±Inf, or NaNs with zero low 16 bits: the integer
/// round to nearest even of `lanes::bf16` without its clamp and NaN select. Without the
/// clamp a finite lane that rounds past BF16's largest value carries into the exponent and
/// gives ±Inf, the non-saturating result; ±Inf and such a NaN have zero low bits, to which
/// the rounding adds at most `0x8000`, so they keep their top half: ±Inf, and for the NaN
/// its sign, quiet bit and top payload bits, the code the NaN-preserving narrowing gives.
pub(crate) struct BrainFinite;

impl Dst for BrainFinite {
    type Ctx<V: Vector> = ();
    #[inline(always)]
    fn offset(i: usize) -> usize {
        2 * i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(_: Policy) {}
    #[inline(always)]
    unsafe fn encode<V: Vector>(_: &(), x: V) -> V {
        // SAFETY: the caller's guarantee; no memory is touched.
        unsafe {
            let lsb = x.shr(16).and(V::splat(1));
            x.add(V::splat(0x7FFF)).add(lsb).shr(16)
        }
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &(), v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_u16(p, n) }
    }
}

/// The destinations' policy (`BlockDest::from_f32_bits`): nearest even, overflow to ±Inf,
/// a NaN keeps its sign and top payload bits.
pub(crate) const TO_DEST: Policy = Policy {
    overflow: Overflow::NonSaturating,
    nan: NanPolicy::Preserve,
};

/// NaN lanes of `x` (magnitude bits above infinity's).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
pub(crate) unsafe fn is_nan<V: Vector>(x: V) -> V::Mask {
    // SAFETY: the caller's guarantee.
    unsafe { x.and(V::splat(0x7FFF_FFFF)).gt_i32(V::splat(0x7F80_0000)) }
}

/// No step: the lanes as loaded.
pub(crate) struct Identity;

impl<V: Vector> Lanes<V> for Identity {
    #[inline(always)]
    unsafe fn apply(&self, x: V) -> V {
        x
    }
}

/// Codes of `F` from `x · 2^k` by the narrowing with the scale folded in (its constants
/// come from `Narrow::new_scaled`, not from `ctx`, which is not called).
pub(crate) struct Folded<F>(PhantomData<F>);

impl<F: Format> Dst for Folded<F> {
    #[cfg(target_arch = "x86_64")]
    const NEEDS_RN: bool = true;
    type Ctx<V: Vector> = lanes::Narrow<V>;
    #[inline(always)]
    fn offset(i: usize) -> usize {
        i
    }
    #[inline(always)]
    unsafe fn ctx<V: Vector>(p: Policy) -> lanes::Narrow<V> {
        // SAFETY: forwarded contract (unused: `narrow_pow2` builds the constants).
        unsafe { lanes::Narrow::new::<F>(p) }
    }
    #[inline(always)]
    unsafe fn encode<V: Vector>(c: &lanes::Narrow<V>, v: V) -> V {
        // SAFETY: forwarded contract.
        unsafe { lanes::narrow_by::<V, F, true>(v, c) }
    }
    #[inline(always)]
    unsafe fn put<V: Vector>(_: &lanes::Narrow<V>, v: V, p: *mut u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_u8(p, n) }
    }
    #[inline(always)]
    unsafe fn put4<V: Vector>(_: &lanes::Narrow<V>, v: [V; 4], p: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { V::store4_u8(v, p) }
    }
}
