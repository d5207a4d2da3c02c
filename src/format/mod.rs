//! The narrow formats: one file per format, one registry line per format.
//!
//! # Where things live
//!
//! * `src/format/<name>.rs`: one format's definition. Its bit layout, bias, largest code,
//!   specials and NaN rule are constants of its [`Format`](crate::codec::Format) impl, its
//!   public type is made by `narrow_type!` (`src/macros.rs`), and a format whose arithmetic
//!   is not IEEE-like (E8M0) overrides the three codec functions there.
//! * `src/codec.rs`: the generic scalar codec, written once against `Format`: the
//!   specification every kernel must match.
//! * This file: the **registry**, one line per format, which generates the `Element` and
//!   `ConvertTo` impls and the kernel-table indices; `arch/scalar.rs` expands the same list
//!   into the Scalar backend's table.
//! * `src/arch/`: the backends. Each SIMD backend starts from the Scalar table and replaces
//!   the pairs it has kernels for (`Kernels::set`), so a format without a kernel on some
//!   backend still converts there, and `Backend::simd_pairs` says which pairs are SIMD.
//!
//! # Adding a format
//!
//! 1. Write `src/format/<name>.rs`: the `narrow_type!` (and `signed_consts!` for a signed
//!    format), its `Format` impl, docs with its contract row and an example.
//! 2. Add its line to the registry below (the next index) and its row to the contract tables
//!    (`src/lib.rs`).
//! 3. Give `tests/common/mod.rs` its definition (a `FormatDef`, from the standard, not from
//!    the codec) and add it to the lists of the exhaustive, specials, tails and fuzz tests.
//! 4. Only if a backend should have a kernel for it: write the kernel in that backend's
//!    file and `set` it in that backend's table.

/// The registry: one line per format, `index => Type in module, kind, role`. `plain`
/// formats hold one value per element; `packed` ones hold two FP4 values per byte. The
/// `hub` formats (F16, BF16) convert directly to and from every `leaf` format and to each
/// other (widening to f32 in between, which is exact).
macro_rules! registry {
    ($($index:literal => $name:ident in $module:ident, $kind:ident, $role:ident;)*) => {
        $(
            mod $module;
            pub use $module::$name;
        )*

        /// Each format's number: its place in the kernel tables.
        #[allow(non_upper_case_globals, dead_code)]
        pub(crate) mod index {
            $(pub(crate) const $name: usize = $index;)*
        }

        /// Number of formats.
        pub(crate) const FORMATS: usize = [$($index),*].len();

        // The indices are 0, 1, 2, ... in the order of the lines.
        const _: () = {
            let mut i = 0;
            $(
                assert!($index == i);
                i += 1;
            )*
            let _ = i;
        };

        $(
            elements!($name);
            pairs!($name => $index, $name, registry!(@packed $kind));
            registry!(@hub $role, $name, $index, registry!(@packed $kind));
        )*

    };
    (@hub hub, $name:ident, $index:literal, $packed:expr) => {};
    (@hub leaf, $name:ident, $index:literal, $packed:expr) => {
        via_pair!($name, $index, $packed => F16, index::F16, false);
        via_pair!($name, $index, $packed => BF16, index::BF16, false);
        via_pair!(F16, index::F16, false => $name, $index, $packed);
        via_pair!(BF16, index::BF16, false => $name, $index, $packed);
    };
    (@packed plain) => { false };
    (@packed packed) => { true };
}

/// The formats, one line each (`index => Type in module, kind, role`), handed to macro `$m`:
/// the registry below expands it here, and `arch/scalar.rs` expands it into the Scalar
/// table, so that the list exists once and this file imports nothing from the backends.
macro_rules! for_each_format {
    ($m:ident) => {
        $m! {
            0 => F16 in f16, plain, hub;
            1 => BF16 in bf16, plain, hub;
            2 => F8E4M3 in f8e4m3, plain, leaf;
            3 => F8E5M2 in f8e5m2, plain, leaf;
            4 => F8E4M3FNUZ in f8e4m3fnuz, plain, leaf;
            5 => F8E5M2FNUZ in f8e5m2fnuz, plain, leaf;
            6 => F6E2M3 in f6e2m3, plain, leaf;
            7 => F6E3M2 in f6e3m2, plain, leaf;
            8 => F4E2M1 in f4e2m1, plain, leaf;
            9 => F4E2M1x2 in f4e2m1x2, packed, leaf;
            10 => F8E8M0 in f8e8m0, plain, leaf;
            11 => F8E3M4 in f8e3m4, plain, leaf;
            12 => F8E4M3IEEE in f8e4m3ieee, plain, leaf;
            13 => F8E4M3B11FNUZ in f8e4m3b11fnuz, plain, leaf;
            14 => F8E5M3FNU in f8e5m3fnu, plain, leaf;
        }
    };
}
pub(crate) use for_each_format;

for_each_format!(registry);

// The two hubs convert to each other.
via_pair!(F16, index::F16, false => BF16, index::BF16, false);
via_pair!(BF16, index::BF16, false => F16, index::F16, false);
