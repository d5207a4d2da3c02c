//! The generic kernels of every format, generated from the format registry
//! (`src/format/mod.rs`): what makes a new format a SIMD format on every tier without a
//! line of per-ISA code.
//!
//! [`fill_registry_items!`] expands, inside an ISA's instantiation module (`simd/x86_64/avx2.rs`,
//! `simd/aarch64/neon.rs`, …, where `k::<S, D>` is that ISA's generic kernel from source
//! `S` to destination `D`), into
//!
//! ```text
//! pub(crate) const fn fill_registry(t: &mut Kernels, from: usize)
//! ```
//!
//! which sets, for every registry format whose index is at least `from`:
//!
//! * a leaf format `X`: f32 → X, f64 → X, X → f32, X → f64, X → F16, X → BF16, F16 → X,
//!   BF16 → X (one pass) and the fused round trip of f32 through X (not for the packed
//!   F4E2M1x2, which has none);
//! * a hub (F16, BF16): f32 → hub, f64 → F16 (not f64 → BF16: the generic f64 route rounds
//!   to odd into f32 first, which is exact only for formats whose subnormals lie above
//!   2^-126), hub → f32, hub → f64, the fused round trip, and F16 ↔ BF16.
//!
//! Each format's lanes come from its registry name: F16 is [`Half`](super::kernels::Half),
//! BF16 [`Brain`](super::kernels::Brain), F8E8M0 [`E8m0`](super::kernels::E8m0) (and
//! [`F64Hi`](super::kernels::F64Hi)/[`E8m0Hi`](super::kernels::E8m0Hi) from f64), the packed
//! F4E2M1x2 [`Packed`](super::kernels::Packed), and **every other format**
//! [`Code<F>`](super::kernels::Code) (from f64: [`F64Code<F>`](super::kernels::F64Code)), the codec-generic lanes of `lanes.rs`, which take
//! everything from the format's [`Format`](crate::codec::Format) constants. So a new
//! IEEE-like format (signed or unsigned, any bias, with or without infinities, with a fixed
//! NaN code or none) needs nothing here.
//!
//! How a kernel is registered follows what it implements: the generic narrowings of leaf
//! formats and BF16 implement every NaN policy (`set_all_policies`); the F16 narrowing
//! (`VCVTPS2PH`, `FCVTN`, …) implements `NanPolicy::Preserve` only, so the dispatcher patches
//! the other policies in (`set`); widenings do not depend on a policy; narrow ↔ narrow
//! pairs and round trips implement `Preserve` and run their two halves under the others.
//!
//! A tier's table calls `fill_registry` right after starting from the Scalar table and
//! before its override list (the hand-written kernels that measured faster), so that every
//! pair the overrides do not name runs the generic kernel at the tier's width.

/// Whether the format of registry index `index` is one `fill_registry(t, from)` sets.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
pub(crate) const fn selected(index: usize, from: usize) -> bool {
    index >= from
}

/// The registry's lines turned into `fill_registry` (see the module docs); `k` is the
/// calling module's generic kernel. An instantiation module expands it with
/// `crate::format::for_each_format!(fill_registry_items);` (with this macro imported).
macro_rules! fill_registry_items {
    ($($index:literal => $name:ident in $module:ident, $kind:ident, $role:ident;)*) => {
        /// Sets the generic kernel of every pair and round trip of each registry format
        /// whose index is at least `from` (`simd/generic/registry.rs`).
        pub(crate) const fn fill_registry(t: &mut crate::arch::Kernels, from: usize) {
            #[allow(unused_imports)]
            use crate::simd::generic::kernels::{
                Brain, Code, E8m0, E8m0Hi, F32, F64, F64Code, F64Hi, F64Odd, Half, Packed,
                RoundTrip, RoundTripBf16, RoundTripE8m0, RoundTripF16,
            };
            $(
                if crate::simd::generic::registry::selected($index, from) {
                    crate::simd::generic::registry::fill_registry_items!(@$role t, $name);
                }
            )*
            if crate::simd::generic::registry::selected(crate::format::index::F16, from)
                || crate::simd::generic::registry::selected(crate::format::index::BF16, from)
            {
                t.set_direct::<crate::F16, crate::BF16>(k::<Half, Brain>);
                t.set_direct::<crate::BF16, crate::F16>(k::<Brain, Half>);
            }
        }
    };

    // A leaf format: every pair with f32, f64, F16 and BF16, and its round trip.
    (@leaf $t:ident, $name:ident) => {
        $t.set_all_policies::<f32, crate::$name>(
            k::<F32, crate::simd::generic::registry::fill_registry_items!(@lanes $name)>,
        );
        $t.set_all_policies::<f64, crate::$name>(k::<
            crate::simd::generic::registry::fill_registry_items!(@f64_src $name),
            crate::simd::generic::registry::fill_registry_items!(@f64_dst $name),
        >);
        $t.set_all_policies::<crate::$name, f32>(
            k::<crate::simd::generic::registry::fill_registry_items!(@lanes $name), F32>,
        );
        $t.set_all_policies::<crate::$name, f64>(
            k::<crate::simd::generic::registry::fill_registry_items!(@lanes $name), F64>,
        );
        $t.set_direct::<crate::$name, crate::F16>(
            k::<crate::simd::generic::registry::fill_registry_items!(@lanes $name), Half>,
        );
        $t.set_direct::<crate::$name, crate::BF16>(
            k::<crate::simd::generic::registry::fill_registry_items!(@lanes $name), Brain>,
        );
        $t.set_direct::<crate::F16, crate::$name>(
            k::<Half, crate::simd::generic::registry::fill_registry_items!(@lanes $name)>,
        );
        $t.set_direct::<crate::BF16, crate::$name>(
            k::<Brain, crate::simd::generic::registry::fill_registry_items!(@lanes $name)>,
        );
        crate::simd::generic::registry::fill_registry_items!(@round_trip $t, $name);
    };

    // The hubs.
    (@hub $t:ident, F16) => {
        $t.set::<f32, crate::F16>(k::<F32, Half>);
        $t.set::<f64, crate::F16>(k::<F64Odd, Half>);
        $t.set_all_policies::<crate::F16, f32>(k::<Half, F32>);
        $t.set_all_policies::<crate::F16, f64>(k::<Half, F64>);
        $t.set_round_trip::<crate::F16>(k::<F32, RoundTripF16>);
    };
    (@hub $t:ident, BF16) => {
        $t.set_all_policies::<f32, crate::BF16>(k::<F32, Brain>);
        $t.set_all_policies::<crate::BF16, f32>(k::<Brain, F32>);
        $t.set_all_policies::<crate::BF16, f64>(k::<Brain, F64>);
        $t.set_round_trip::<crate::BF16>(k::<F32, RoundTripBf16>);
    };

    // The lanes of each format: a few are named, every other one is the codec-generic
    // `Code<F>`.
    (@lanes F8E8M0) => { E8m0 };
    (@lanes F4E2M1x2) => { Packed };
    (@lanes $name:ident) => { Code<crate::$name> };
    (@f64_src F8E8M0) => { F64Hi };
    (@f64_src F4E2M1x2) => { F64Odd };
    (@f64_src $name:ident) => { F64Code<crate::$name> };
    (@f64_dst F8E8M0) => { E8m0Hi };
    (@f64_dst $name:ident) => {
        crate::simd::generic::registry::fill_registry_items!(@lanes $name)
    };
    (@round_trip $t:ident, F4E2M1x2) => {};
    (@round_trip $t:ident, F8E8M0) => {
        $t.set_round_trip::<crate::F8E8M0>(k::<F32, RoundTripE8m0>);
    };
    (@round_trip $t:ident, $name:ident) => {
        $t.set_round_trip::<crate::$name>(k::<F32, RoundTrip<crate::$name>>);
    };
}
pub(crate) use fill_registry_items;
