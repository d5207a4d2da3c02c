//! The library's internal tests: functions beside the code they test (each module's
//! `internal_tests`), exposed by the `__internal-tests` feature, which the package's self
//! dev-dependency enables for its test targets. They run here rather than in a unit-test
//! harness so that `cargo test` compiles the library once, not a second time with
//! `cfg(test)`. Each test's module path is that of the code it tests; the `cfg`s are those
//! of the modules, and the `ignore`s under Miri say why a test is left to native runs.

use vcvt::__internal_tests as internal;

mod arch {
    mod portable {
        #[cfg(any(
            all(
                feature = "portable",
                not(any(target_arch = "aarch64", target_arch = "wasm32"))
            ),
            all(target_arch = "wasm32", target_feature = "simd128")
        ))]
        #[test]
        fn every_kernel_on_short_unaligned_slices() {
            crate::internal::every_kernel_on_short_unaligned_slices();
        }
    }
}

mod block {
    #[test]
    fn every_scheme_runs_and_round_trips_small_shapes() {
        crate::internal::every_scheme_runs_and_round_trips_small_shapes();
    }

    mod spec {
        #[test]
        #[cfg_attr(
            miri,
            ignore = "safe integer and soft-float arithmetic, no unsafe: nothing for Miri to check (CI time)"
        )]
        fn mx_scale_byte_fast_is_the_division() {
            crate::internal::scale_byte_fast_is_the_division();
        }

        #[test]
        #[cfg_attr(
            miri,
            ignore = "safe integer and float arithmetic, no unsafe: nothing for Miri to check (CI time)"
        )]
        fn soft_ops_equal_hardware_f32() {
            crate::internal::soft_ops_equal_hardware_f32();
        }

        #[test]
        #[cfg_attr(
            miri,
            ignore = "safe integer and float arithmetic, no unsafe: nothing for Miri to check (CI time)"
        )]
        fn values_wide_fast_is_exact() {
            crate::internal::wide_fast_is_exact();
        }
    }
}

mod converter {
    #[test]
    fn every_route_matches_the_free_functions_on_scalar() {
        crate::internal::every_route_matches_the_free_functions_on_scalar();
    }
}

#[cfg(feature = "rayon")]
mod par {
    #[test]
    fn chunk_edges() {
        crate::internal::chunk_edges();
    }
}

#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod simd {
    mod generic_block {
        #[test]
        fn ggml_planes_are_the_specification() {
            crate::internal::planes_are_the_specification();
        }

        #[test]
        fn mx_e2m1_tables_are_the_specification() {
            crate::internal::e2m1_tables_are_the_specification();
        }
    }

    #[cfg(target_arch = "x86_64")]
    mod x86_64 {
        #[test]
        fn avx512_fp8_magnitudes_are_the_widening() {
            crate::internal::magnitudes_are_the_widening();
        }

        #[test]
        fn avx512_div_recip_is_the_division() {
            crate::internal::div_recip_is_the_division();
        }

        #[test]
        fn rounds_to_nearest_matches_mxcsr() {
            crate::internal::rounds_to_nearest_matches_mxcsr();
        }
    }
}

mod slice {
    #[test]
    fn swapped_bytes_path_converts_foreign_endian_input() {
        crate::internal::swapped_bytes_path_converts_foreign_endian_input();
    }
}
