//! `Backend::kernel` tells the truth about widths: every pair the library offers runs, on
//! each x86-64 and aarch64 tier this CPU has, a kernel of that tier's own width in one pass. A new
//! format or pair that such a tier serves with a narrower kernel (or in two passes) fails
//! this test until it gets a kernel, or an exception here with the reason.

use vcvt::{
    BF16, Backend, F4E2M1, F4E2M1x2, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FNUZ,
    F8E4M3IEEE, F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, KernelInfo,
};

/// Every pair and round trip with its kernel on `b`, named, and whether that kernel is an
/// override (differs from the kernel of `b`'s table of generic kernels alone; `None` where
/// `b` keeps no such table).
fn all_kernels(b: Backend) -> Vec<(String, KernelInfo, Option<bool>)> {
    let mut v = Vec::new();
    macro_rules! pair {
        ($s:ty, $d:ty) => {
            v.push((
                format!("{} -> {}", stringify!($s), stringify!($d)),
                b.kernel::<$s, $d>(),
                b.generic_kernel_id::<$s, $d>()
                    .map(|g| g != b.kernel_id::<$s, $d>()),
            ));
        };
    }
    macro_rules! wide {
        ($($t:ty),*) => {$(
            pair!(f32, $t);
            pair!(f64, $t);
            pair!($t, f32);
            pair!($t, f64);
        )*};
    }
    macro_rules! leaf {
        ($($t:ty),*) => {$(
            pair!($t, F16);
            pair!($t, BF16);
            pair!(F16, $t);
            pair!(BF16, $t);
        )*};
    }
    macro_rules! round_trip {
        ($($t:ty),*) => {$(
            let (id, generic) = b.round_trip_kernel_ids::<$t>();
            v.push((
                format!("round_trip {}", stringify!($t)),
                b.round_trip_kernel::<$t>(),
                generic.map(|g| g != id),
            ));
        )*};
    }
    wide!(
        F16,
        BF16,
        F8E4M3,
        F8E5M2,
        F8E4M3FNUZ,
        F8E5M2FNUZ,
        F6E2M3,
        F6E3M2,
        F4E2M1,
        F4E2M1x2,
        F8E8M0,
        F8E3M4,
        F8E4M3IEEE,
        F8E4M3B11FNUZ,
        F8E5M3FNU
    );
    pair!(F16, BF16);
    pair!(BF16, F16);
    leaf!(
        F8E4M3,
        F8E5M2,
        F8E4M3FNUZ,
        F8E5M2FNUZ,
        F6E2M3,
        F6E3M2,
        F4E2M1,
        F4E2M1x2,
        F8E8M0,
        F8E3M4,
        F8E4M3IEEE,
        F8E4M3B11FNUZ,
        F8E5M3FNU
    );
    round_trip!(
        F16,
        BF16,
        F8E4M3,
        F8E5M2,
        F8E4M3FNUZ,
        F8E5M2FNUZ,
        F6E2M3,
        F6E3M2,
        F4E2M1,
        F8E8M0,
        F8E3M4,
        F8E4M3IEEE,
        F8E4M3B11FNUZ,
        F8E5M3FNU
    );
    v
}

/// The pairs the AVX-512 tiers serve below 512 bits or in two passes, with the kernel they
/// run and why: in each case the generic 512-bit kernel measured slower than this one on the
/// Zen 4 VM (the four newest formats: on the Intel VM, as noted) (`throughput --full --size 1024 --backend avx512-bf16,avx2`, medians of three runs,
/// el/ns; docs/performance.md, "Every pair at 1 Ki elements"), so the table keeps it. `avx2`
/// has no exception: every pair its hand-written kernels do not serve runs the generic
/// 256-bit kernel of the registry fill.
const AVX512_EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "F6E2M3 -> f32",
        "avx2 (256-bit)",
        "VPSHUFB table kernel: 12.0 against 9.45",
    ),
    (
        "F6E3M2 -> f32",
        "avx2 (256-bit)",
        "VPSHUFB table kernel: 11.6 against 8.95",
    ),
    (
        "F4E2M1 -> f32",
        "avx2 (256-bit)",
        "VPSHUFB table kernel: 17.6 against 9.50",
    ),
    (
        "F4E2M1x2 -> f32",
        "avx2 (256-bit)",
        "the F4E2M1 table kernel's unpacking twin",
    ),
    (
        "F6E2M3 -> f64",
        "avx2 (256-bit)",
        "table kernel: 5.49 against 2.96",
    ),
    (
        "F6E3M2 -> f64",
        "avx2 (256-bit)",
        "table kernel: 5.51 against 2.89",
    ),
    (
        "F4E2M1 -> f64",
        "avx2 (256-bit)",
        "table kernel: 6.79 against 2.93",
    ),
    (
        "F4E2M1x2 -> f64",
        "avx2 (256-bit)",
        "the F4E2M1 table kernel's unpacking twin",
    ),
    ("F8E4M3FNUZ -> f64", "avx2 (256-bit)", "5.18 against 2.99"),
    ("F8E5M2FNUZ -> f64", "avx2 (256-bit)", "4.83 against 3.08"),
    (
        "F16 -> BF16",
        "avx2 (256-bit)",
        "avx2_direct: 10.7 against 6.32",
    ),
    (
        "F8E4M3 -> BF16",
        "avx2 (256-bit)",
        "avx2_direct: 6.27 against 4.00 (on `avx512` only: the VBMI tiers run a 512-bit \
         table kernel)",
    ),
    (
        "F8E5M2 -> F16",
        "avx2 (256-bit)",
        "avx2_direct (code << 8): 21.2 against 6.02",
    ),
    (
        "F8E5M2 -> BF16",
        "avx2 (256-bit)",
        "avx2_direct: 12.2 against 3.39",
    ),
    (
        "F4E2M1 -> F16",
        "avx2 (256-bit)",
        "avx2_direct table: 22.3 against 7.59 (on `avx512` only: the VBMI tiers run a 512-bit table kernel)",
    ),
    (
        "F4E2M1 -> BF16",
        "avx2 (256-bit)",
        "avx2_direct table: 26.8 against 3.61 (on `avx512` only: the VBMI tiers run a 512-bit table kernel)",
    ),
    (
        "F4E2M1x2 -> F16",
        "avx2 (256-bit)",
        "avx2_direct table, as F4E2M1",
    ),
    (
        "F4E2M1x2 -> BF16",
        "avx2 (256-bit)",
        "avx2_direct table, as F4E2M1",
    ),
    (
        "F8E8M0 -> BF16",
        "avx2 (256-bit)",
        "avx2_direct shift: 14.5 against 6.19",
    ),
    (
        "F8E4M3FNUZ -> BF16",
        "avx512 (512-bit, 2 passes)",
        "generic BF16 rounding: 3.70 (on `avx512` only: the VBMI tiers run a 512-bit table kernel)",
    ),
    (
        "F8E5M2FNUZ -> BF16",
        "avx512 (512-bit, 2 passes)",
        "generic BF16 rounding: 3.84 (on `avx512` only: the VBMI tiers run a 512-bit table kernel)",
    ),
    (
        "F6E2M3 -> BF16",
        "avx2 (256-bit, 2 passes)",
        "generic BF16 rounding: 3.82 (on `avx512` only: the VBMI tiers run a 512-bit table kernel)",
    ),
    (
        "F6E3M2 -> BF16",
        "avx2 (256-bit, 2 passes)",
        "generic BF16 rounding: 3.61 (on `avx512` only: the VBMI tiers run a 512-bit table kernel)",
    ),
    // The four newest formats, measured on the Intel VM (`fill_newer` in
    // `src/simd/x86_64/avx512.rs`; docs/performance.md, "The four newest formats at 512 bits").
    (
        "f32 -> F8E3M4",
        "avx2 (256-bit)",
        "Intel VM: the 512-bit kernel 0.92-0.97 of this one in three of four runs",
    ),
    (
        "f32 -> F8E4M3IEEE",
        "avx2 (256-bit)",
        "Intel VM: the 512-bit kernel 0.94-0.97",
    ),
    (
        "f32 -> F8E4M3B11FNUZ",
        "avx2 (256-bit)",
        "Intel VM: the 512-bit kernel 0.92-0.94 (1.02 in a third run)",
    ),
    (
        "F8E3M4 -> BF16",
        "avx2 (256-bit)",
        "Intel VM: the generic BF16 rounding at 512 bits 0.60-0.62 of this one",
    ),
    (
        "F8E4M3IEEE -> BF16",
        "avx2 (256-bit)",
        "Intel VM: the generic BF16 rounding at 512 bits 0.58-0.60",
    ),
    (
        "F8E4M3B11FNUZ -> BF16",
        "avx2 (256-bit)",
        "Intel VM: the generic BF16 rounding at 512 bits 0.54-0.57",
    ),
    (
        "F8E5M3FNU -> BF16",
        "avx2 (256-bit)",
        "Intel VM: the generic BF16 rounding at 512 bits 0.53-0.55",
    ),
];

/// The pairs the `avx2` tier runs in two passes of its own kernels, because they measured
/// at least 10% faster than the generic one-pass kernel (with their ratios in
/// `AVX2_OVERRIDES`). None today: E8M0 ↔ F16, the last two, have one-pass kernels of their
/// own.
const AVX2_TWO_PASS: &[&str] = &[];

#[test]
fn every_pair_runs_at_its_tiers_width() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    let mut tiers = Vec::new();
    let mut used = vec![false; AVX512_EXCEPTIONS.len()];
    let mut used_avx2 = vec![false; AVX2_TWO_PASS.len()];
    for b in Backend::available() {
        // The x86-64 AVX2 and AVX-512 tiers (with the exceptions above) and the aarch64 NEON
        // tiers. (portable and simd128 keep some pairs on Scalar or a two-pass route; the
        // throughput example prints their widths.)
        let width = match b.name() {
            "avx512" | "avx512-vbmi" | "avx512-bf16" | "avx512-fp16" => 512,
            "avx2" => 256,
            "neon" | "neon-bf16" => 128,
            _ => continue,
        };
        assert_eq!(b.width_bits(), width, "{b}");
        tiers.push(b.name());
        for (name, k, _) in all_kernels(b) {
            checked += 1;
            let ok = (k.bits, k.passes) == (width, 1);
            let excused = width == 512
                && (AVX512_EXCEPTIONS
                    .iter()
                    .position(|&(p, want, _)| p == name && k.to_string() == want)
                    .map(|i| used[i] = true)
                    .is_some())
                || width == 256
                    && AVX2_TWO_PASS
                        .iter()
                        .position(|&p| p == name && k.to_string() == "avx2 (256-bit, 2 passes)")
                        .map(|i| used_avx2[i] = true)
                        .is_some();
            if !ok && !excused {
                wrong.push(format!("{b}: {name} runs {k}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "kernels below the tier's width or in two passes, without a reason:\n{}",
        wrong.join("\n")
    );
    // The list stays true: on a machine with an AVX-512 tier, every exception is still
    // the kernel some tier runs (remove an entry once its pair gets a full-width kernel).
    if tiers.iter().any(|t| t.starts_with("avx512")) {
        let stale: Vec<_> = AVX512_EXCEPTIONS
            .iter()
            .zip(&used)
            .filter(|(_, u)| !**u)
            .map(|((p, k, _), _)| format!("{p}: {k}"))
            .collect();
        assert!(
            stale.is_empty(),
            "exceptions no tier runs any more: {stale:?}"
        );
    }
    // Likewise the avx2 list: every entry is still a two-pass pair there.
    if tiers.contains(&"avx2") {
        let stale: Vec<_> = AVX2_TWO_PASS
            .iter()
            .zip(&used_avx2)
            .filter(|(_, u)| !**u)
            .map(|(p, _)| *p)
            .collect();
        assert!(
            stale.is_empty(),
            "avx2 two-pass entries that no longer run two passes: {stale:?}"
        );
    }
    // Every little-endian aarch64 core has NEON: the check must not pass by skipping it.
    if cfg!(all(target_arch = "aarch64", target_endian = "little")) {
        assert!(tiers.contains(&"neon"), "neon not checked: {tiers:?}");
    }
    println!("{checked} (tier, pair) kernels checked on {tiers:?}");
}

#[test]
fn scalar_reports_scalar() {
    for (name, k, _) in all_kernels(Backend::Scalar) {
        assert_eq!((k.isa, k.bits), ("scalar", 0), "{name}");
        assert!(!k.is_simd(), "{name}");
    }
    assert_eq!(Backend::Scalar.width_bits(), 0);
    assert_eq!(Backend::Scalar.kernel::<F16, F8E4M3>().passes, 2);
    assert_eq!(Backend::Scalar.kernel::<f32, F8E4M3>().passes, 1);
}

#[test]
fn kernel_agrees_with_is_simd() {
    // `is_simd` and `kernel` read the same tables: a pair is SIMD exactly when its kernel
    // (or, for two passes, both halves) has a width.
    for b in Backend::available() {
        assert_eq!(
            b.kernel::<f32, F8E4M3>().is_simd(),
            b.is_simd::<f32, F8E4M3>()
        );
        assert_eq!(
            b.kernel::<F16, F6E2M3>().is_simd(),
            b.is_simd::<F16, F6E2M3>()
        );
        assert_eq!(
            b.kernel::<F8E8M0, f64>().is_simd(),
            b.is_simd::<F8E8M0, f64>()
        );
    }
}

#[test]
fn display_names_isa_width_and_passes() {
    let k = Backend::Scalar.kernel::<f32, F16>();
    assert_eq!(k.to_string(), "scalar");
    assert_eq!(
        Backend::Scalar.kernel::<F16, BF16>().to_string(),
        "scalar (2 passes)"
    );
}

/// Every tier that keeps a table of generic kernels runs an override exactly for the pairs
/// its override list names (`Backend::overrides`, `arch/x86_64/tables.rs`): an entry whose
/// pair runs the generic kernel again is stale, and a kernel that replaces a generic one
/// without an entry (and so without a measured reason) is an error. Every kernel in either
/// table is proven by the exhaustive tests, which run each distinct kernel of every
/// available backend.
#[test]
fn overrides_are_exactly_the_listed_ones() {
    for b in Backend::available() {
        let kernels = all_kernels(b);
        if kernels.iter().all(|(_, _, o)| o.is_none()) {
            assert!(
                b.overrides().is_empty(),
                "{b} lists overrides but keeps no generic table"
            );
            continue;
        }
        let actual: Vec<&str> = kernels
            .iter()
            .filter(|(_, _, o)| *o == Some(true))
            .map(|(n, _, _)| n.as_str())
            .collect();
        let listed: Vec<&str> = b.overrides().iter().map(|o| o.pair).collect();
        let unlisted: Vec<_> = actual.iter().filter(|n| !listed.contains(n)).collect();
        let stale: Vec<_> = listed.iter().filter(|n| !actual.contains(n)).collect();
        assert!(
            unlisted.is_empty() && stale.is_empty(),
            "{b}: overrides without an entry: {unlisted:?}; entries that override nothing: {stale:?}"
        );
        for o in b.overrides() {
            assert!(
                o.ratio >= 1.1 && !o.wins_by.is_empty(),
                "{b}: {} stays only where it measured at least 10% faster, and says why",
                o.pair
            );
        }
    }
}
