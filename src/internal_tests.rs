//! Not part of the API: the library's internal tests, for tests/internals.rs.
//!
//! Each test is a function in an `internal_tests` module beside the code it tests (so it
//! reaches private items without making them public); this module only re-exports them.
//! It exists with the `__internal-tests` feature, which the package's self dev-dependency
//! turns on for its own test targets.

#[cfg(any(
    all(
        feature = "portable",
        not(any(target_arch = "aarch64", target_arch = "wasm32"))
    ),
    all(target_arch = "wasm32", target_feature = "simd128")
))]
pub use crate::arch::portable::internal_tests::every_kernel_on_short_unaligned_slices;
pub use crate::block::internal_tests::every_scheme_runs_and_round_trips_small_shapes;
pub use crate::block::spec::mx::internal_tests::scale_byte_fast_is_the_division;
pub use crate::block::spec::soft::internal_tests::soft_ops_equal_hardware_f32;
pub use crate::block::spec::values_internal_tests::wide_fast_is_exact;
pub use crate::converter::internal_tests::every_route_matches_the_free_functions_on_scalar;
#[cfg(feature = "rayon")]
pub use crate::par::internal_tests::chunk_edges;
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
pub use crate::simd::generic::block::{
    ggml::internal_tests::e2m1_tables_are_the_specification,
    ggml::internal_tests::planes_are_the_specification,
};
#[cfg(target_arch = "x86_64")]
pub use crate::simd::x86_64::{
    avx512::internal_tests::div_recip_is_the_division,
    avx512_fp8::internal_tests::magnitudes_are_the_widening,
    internal_tests::rounds_to_nearest_matches_mxcsr,
};
pub use crate::slice::internal_tests::swapped_bytes_path_converts_foreign_endian_input;
