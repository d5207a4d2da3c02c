//! Replays the fuzz corpus and the saved crash inputs on the stable toolchain, through the same
//! differential harness as the cargo-fuzz targets (`fuzz/src/harness.rs`, included below):
//! every file under `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/`, where `<target>`
//! is `slices` or `bytes`.
//!
//! Without ASan the harness still catches wrong bits, unwritten elements and writes outside the
//! destination (canaries); out-of-bounds reads need the fuzz build (`.ci/fuzz.sh`) or Miri
//! (`.ci/miri.sh`, which runs this test).

#[path = "../fuzz/src/harness.rs"]
mod harness;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use harness::{NO_HOOKS, Target};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// Every `(target, file)` under `fuzz/<top>/<target>/`; a subdirectory that names no target
/// is an error, files directly under `fuzz/<top>/` (README) are skipped.
fn inputs(top: &str) -> Vec<(Target, PathBuf)> {
    let mut out = Vec::new();
    let dir = fuzz_dir().join(top);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let name = path.file_name().unwrap().to_str().unwrap();
        let target = Target::from_name(name).unwrap_or_else(|| {
            panic!(
                "{}: not a fuzz target directory (expected one of slices, bytes)",
                path.display()
            )
        });
        for file in std::fs::read_dir(&path).unwrap() {
            let file = file.unwrap().path();
            let hidden = file
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'));
            if file.is_file() && !hidden {
                out.push((target, file));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

/// Under Miri every input is cut to this many elements: Miri checks the memory safety of the
/// Scalar kernels, the dispatch and the entry points, for which short slices suffice, and it
/// interprets each step about a thousand times slower than native code. The full lengths and
/// values run natively.
const MIRI_MAX_LEN: usize = 24;

fn replay(files: &[(Target, PathBuf)]) {
    let mut failures = Vec::new();
    for (target, path) in files {
        let data = std::fs::read(path).unwrap();
        let mut input = harness::Input::parse(&data);
        if cfg!(miri) {
            input.len = input.len.min(MIRI_MAX_LEN);
        }
        let res = catch_unwind(AssertUnwindSafe(|| {
            harness::try_run_input(*target, &input, NO_HOOKS)
        }));
        let msg = match res {
            Ok(Ok(())) => continue,
            Ok(Err(msg)) => msg,
            Err(payload) => payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "(non-string panic)".into()),
        };
        failures.push(format!("{}:\n{msg}", path.display()));
    }
    assert!(
        failures.is_empty(),
        "{} of {} inputs failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

#[test]
fn replay_seed_corpus() {
    let files = inputs("corpus");
    // Both targets must have their seeds: an empty or missing corpus would pass vacuously.
    for t in Target::ALL {
        let n = files.iter().filter(|(ft, _)| *ft == t).count();
        assert!(
            n >= 10,
            "fuzz/corpus/{} holds {n} inputs; regenerate the seeds with \
             `cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus`",
            t.name()
        );
    }
    replay(&files);
}

#[test]
fn replay_regressions() {
    assert!(
        fuzz_dir().join("regressions/README.md").is_file(),
        "fuzz/regressions/README.md is missing"
    );
    replay(&inputs("regressions"));
}

/// The committed seeds are exactly what the generator writes, so the corpus is reproducible.
#[test]
fn committed_seeds_match_generator() {
    let mut stale = Vec::new();
    let seeds = harness::seeds();
    for s in &seeds {
        let path = fuzz_dir()
            .join("corpus")
            .join(s.target.name())
            .join(&s.name);
        if std::fs::read(&path).ok().as_deref() != Some(&s.data[..]) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "seed files missing or different from harness::seeds(): {stale:?}\n\
         regenerate with `cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus`"
    );
    assert!(seeds.len() >= 30, "only {} seeds", seeds.len());
}

/// The harness reports every kind of fault it is meant to catch.
#[test]
fn harness_detects_faults() {
    let missed = harness::self_test();
    assert!(missed.is_empty(), "the harness missed: {missed:?}");
}

/// The input format round-trips and covers the lengths the targets are meant to reach.
#[test]
fn input_encoding_round_trips() {
    for len in (0..=harness::MAX_LEN)
        .step_by(7)
        .chain([130, 131, harness::MAX_LEN])
    {
        let input = harness::Input {
            pair: len % 16,
            mode: harness::Mode::NonSaturating,
            len,
            src_sel: 1,
            dst_sel: 2,
            variant: 3,
            payload: &[9, 8, 7],
        };
        let bytes = input.encode();
        let back = harness::Input::parse(&bytes);
        assert_eq!(
            (back.pair, back.mode, back.len, back.payload),
            (input.pair, input.mode, len, input.payload)
        );
    }
    // Every header decodes to a length within range, short lengths for bytes below 240.
    for b2 in 0..=255u8 {
        for b3 in [0, 1, 255] {
            let len = harness::Input::parse(&[0, 0, b2, b3]).len;
            assert!(len <= harness::MAX_LEN);
            assert_eq!(len <= 130, b2 < 240);
        }
    }
}

/// Under Miri, CPU feature detection reports nothing, so only the Scalar backend exists and
/// the harness runs pure Rust code that Miri can check.
#[cfg(miri)]
#[test]
fn miri_sees_only_scalar() {
    let available: Vec<vcvt::Backend> = vcvt::Backend::available().collect();
    assert_eq!(available, [vcvt::Backend::Scalar]);
    assert_eq!(vcvt::Backend::active(), vcvt::Backend::Scalar);
}
