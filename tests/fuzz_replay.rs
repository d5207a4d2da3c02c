//! Replays the fuzz corpus and the saved crash inputs on the stable toolchain, through the same
//! differential harness as the cargo-fuzz targets (`fuzz/src/harness.rs`, included below):
//! every file under `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/`, where `<target>`
//! is `slices` or `bytes` (`fuzz/src/harness.rs`), `block` (`fuzz/src/block_harness.rs`) or
//! `text` (`fuzz/src/text_harness.rs`; its seeds are hand-written strings).
//!
//! Without ASan the harness still catches wrong bits, unwritten elements and writes outside the
//! destination (canaries); out-of-bounds reads need the fuzz build (`.ci/fuzz.sh`) or Miri
//! (`.ci/miri.sh`, which runs this test).

#[path = "../fuzz/src/harness.rs"]
mod harness;

#[path = "../fuzz/src/block_harness.rs"]
mod block_harness;

#[path = "../fuzz/src/text_harness.rs"]
mod text_harness;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use harness::{NO_HOOKS, Target};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// A fuzz target: one of the two pair targets of `harness.rs`, `block` or `text`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Pair(Target),
    Block,
    Text,
}

impl Kind {
    fn from_name(name: &str) -> Option<Kind> {
        match name {
            "block" => Some(Kind::Block),
            "text" => Some(Kind::Text),
            _ => Target::from_name(name).map(Kind::Pair),
        }
    }

    fn all() -> [Kind; 4] {
        [
            Kind::Pair(Target::Slices),
            Kind::Pair(Target::Bytes),
            Kind::Block,
            Kind::Text,
        ]
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Pair(t) => t.name(),
            Kind::Block => "block",
            Kind::Text => "text",
        }
    }
}

/// Every `(target, file)` under `fuzz/<top>/<target>/`; a subdirectory that names no target
/// is an error, files directly under `fuzz/<top>/` (README) are skipped.
fn inputs(top: &str) -> Vec<(Kind, PathBuf)> {
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
        if name == "st_plan" {
            // vcvt-st's target: replayed by `cargo test -p vcvt-st` (vcvt-st/src/st_fuzz.rs).
            continue;
        }
        let target = Kind::from_name(name).unwrap_or_else(|| {
            panic!(
                "{}: not a fuzz target directory (expected one of slices, bytes, block, text, st_plan)",
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
/// values run natively. Block inputs are cut to `block_harness::Input::shrink_for_miri`'s
/// shapes (at most 2 rows of 16 columns: the ggml layouts become shape errors), and only
/// every `MIRI_BLOCK_STEP`-th block seed runs.
const MIRI_MAX_LEN: usize = 12;
const MIRI_BLOCK_STEP: usize = 80;

fn replay(files: &[(Kind, PathBuf)]) {
    let mut failures = Vec::new();
    for (i, (target, path)) in files.iter().enumerate() {
        let data = std::fs::read(path).unwrap();
        let res = catch_unwind(AssertUnwindSafe(|| match *target {
            Kind::Pair(t) => {
                let mut input = harness::Input::parse(&data);
                if cfg!(miri) {
                    input.len = input.len.min(MIRI_MAX_LEN);
                }
                harness::try_run_input(t, &input, NO_HOOKS)
            }
            Kind::Block => {
                let mut input = block_harness::Input::parse(&data);
                if cfg!(miri) {
                    if i % MIRI_BLOCK_STEP != 0 {
                        return Ok(());
                    }
                    input.shrink_for_miri();
                }
                block_harness::try_run_input(&input, NO_HOOKS)
            }
            // The text module has no `unsafe`, and the harness's tables of every format's
            // values would take Miri minutes to build: natively only.
            Kind::Text if cfg!(miri) => Ok(()),
            Kind::Text => text_harness::run(&data),
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
#[cfg_attr(
    miri,
    ignore = "CI time: every_pair_and_option_runs reaches every entry point and error path under Miri; the corpus replays natively"
)]
fn replay_seed_corpus() {
    let files = inputs("corpus");
    // Every target must have its seeds: an empty or missing corpus would pass vacuously.
    for t in Kind::all() {
        let n = files.iter().filter(|(ft, _)| *ft == t).count();
        assert!(
            n >= 10,
            "fuzz/corpus/{} holds {n} inputs; regenerate the seeds with \
             `cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus`",
            t.name()
        );
    }
    // The block seeds replay in `replay_block_seed_corpus`.
    let pairs: Vec<(Kind, PathBuf)> = files.into_iter().filter(|f| f.0 != Kind::Block).collect();
    replay(&pairs);
}

/// Under Miri this is ignored: even cut to 2 × 16 values and one seed in 80 it takes more than
/// 5 minutes (every call runs on each backend, twice, with the per-block references); run it
/// with `cargo +nightly miri test --test fuzz_replay -- --ignored replay_block_seed_corpus`.
/// The block harness's self-test and seed coverage do run under Miri.
#[test]
#[cfg_attr(miri, ignore = "slow under Miri; run with --ignored")]
fn replay_block_seed_corpus() {
    let files: Vec<(Kind, PathBuf)> = inputs("corpus")
        .into_iter()
        .filter(|f| f.0 == Kind::Block)
        .collect();
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
#[cfg_attr(
    miri,
    ignore = "checks committed data, not memory safety; runs natively"
)]
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
    let block = block_harness::seeds();
    for s in &block {
        let path = fuzz_dir().join("corpus/block").join(&s.name);
        if std::fs::read(&path).ok().as_deref() != Some(&s.data[..]) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "seed files missing or different from harness::seeds() / block_harness::seeds(): {stale:?}\n\
         regenerate with `cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus`"
    );
    assert!(seeds.len() >= 30, "only {} seeds", seeds.len());
    assert!(block.len() >= 100, "only {} block seeds", block.len());
}

/// The harness reports every kind of fault it is meant to catch.
#[test]
fn harness_detects_faults() {
    let missed = harness::self_test();
    assert!(missed.is_empty(), "the harness missed: {missed:?}");
}

/// The input format round-trips and covers the pairs, options and lengths the targets are
/// meant to reach.
#[test]
#[cfg_attr(
    miri,
    ignore = "safe encoding and parsing of the input format, no unsafe: runs natively (CI time)"
)]
fn input_encoding_round_trips() {
    for len in (0..=harness::MAX_LEN)
        .step_by(7)
        .chain([130, 131, harness::MAX_LEN])
    {
        let input = harness::Input {
            pair: len % harness::PAIRS.len(),
            mode: harness::Mode::ALL[len % 3],
            nan: harness::NANS[len / 3 % 3],
            len,
            src_sel: 1,
            dst_sel: 2,
            variant: 3,
            payload: &[9, 8, 7],
        };
        let bytes = input.encode();
        let back = harness::Input::parse(&bytes);
        assert_eq!(
            (back.pair, back.mode, back.nan, back.len, back.payload),
            (input.pair, input.mode, input.nan, len, input.payload)
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
    // Byte 0 reaches every pair and byte 1 every combination of overflow mode and NaN policy.
    let pairs: std::collections::BTreeSet<usize> = (0..=255u8)
        .map(|b| harness::Input::parse(&[b]).pair)
        .collect();
    assert_eq!(pairs.len(), harness::PAIRS.len());
    let options: std::collections::BTreeSet<(usize, usize)> = (0..=255u8)
        .map(|b| {
            let header = [0, b];
            let i = harness::Input::parse(&header);
            let mode = harness::Mode::ALL.iter().position(|&m| m == i.mode);
            let nan = harness::NANS.iter().position(|&n| n == i.nan);
            (mode.unwrap(), nan.unwrap())
        })
        .collect();
    assert_eq!(options.len(), 9, "{options:?}");
}

/// The pair table names every `f32`/`f64` pair of every narrow type once, and the seeds give
/// every pair at least one input in each target, every narrowing pair every NaN policy and
/// both explicit overflow modes, and every seed a distinct name.
#[test]
#[cfg_attr(
    miri,
    ignore = "checks committed data, not memory safety; runs natively"
)]
fn seeds_cover_every_pair_and_policy() {
    use std::collections::{BTreeMap, BTreeSet};
    let mut names = BTreeSet::new();
    for f in harness::FORMATS {
        for p in [
            format!("f32->{f}"),
            format!("f64->{f}"),
            format!("{f}->f32"),
            format!("{f}->f64"),
        ] {
            assert!(harness::PAIRS.contains(&p.as_str()), "{p} is not a pair");
            assert!(names.insert(p));
        }
    }
    assert_eq!(names.len(), harness::PAIRS.len());

    let seeds = harness::seeds();
    let mut per_target: BTreeMap<(&str, usize), usize> = BTreeMap::new();
    let mut policies: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    let mut files = BTreeSet::new();
    for s in &seeds {
        assert!(
            files.insert((s.target.name(), s.name.clone())),
            "two seeds named {}/{}",
            s.target.name(),
            s.name
        );
        let input = harness::Input::parse(&s.data);
        *per_target.entry((s.target.name(), input.pair)).or_default() += 1;
        if s.target == Target::Slices && input.pair % 4 < 2 {
            let p = policies.entry(input.pair).or_default();
            p.insert(format!("{:?}", input.nan));
            p.insert(format!("{:?}", input.mode));
        }
    }
    for t in Target::ALL {
        for (pair, name) in harness::PAIRS.iter().enumerate() {
            assert!(
                per_target.contains_key(&(t.name(), pair)),
                "no {} seed for {name}",
                t.name()
            );
        }
    }
    for (pair, name) in harness::PAIRS.iter().enumerate() {
        if pair % 4 >= 2 {
            continue;
        }
        let want = [
            "Preserve",
            "Canonical",
            "ToMax",
            "Saturate",
            "NonSaturating",
        ];
        for w in want {
            assert!(
                policies[&pair].contains(w),
                "no slices seed of {name} uses {w}"
            );
        }
    }
}

/// Every pair under every overflow mode and NaN policy, in both targets, at short lengths
/// (odd and even: the packed type's spare nibble) with every variant group and the
/// other-length calls, on a payload of NaNs, infinities, ties and dirty high bits. The seeds
/// hold the long lengths; this makes sure no pair and no option is left out of the harness.
/// Under Miri (Scalar only) one pair per kernel shape runs, at one length per target: the
/// Scalar kernels are generic over the code type, so their memory accesses differ only by
/// direction (from f32, from f64, to f32, to f64) and code width ([`MIRI_FORMATS`]: a 2-byte
/// code, a 1-byte code, packed nibbles); a narrowing runs under both overflow modes (the
/// kernels have a loop for each), a widening under one set of options, and the NaN policies
/// take turns. Every pair and option runs natively.
#[test]
fn every_pair_and_option_runs() {
    let wide32: Vec<u8> = [
        0x7FC0_0000u32,
        0xFFC0_1234,
        0x7F80_0001,
        0xFF80_0000,
        0x7F7F_FFFF,
        0x3FC0_0000,
        0x4040_0000,
        0x8000_0000,
        0x0060_0000,
        0x43E8_0000,
    ]
    .iter()
    .flat_map(|x| x.to_le_bytes())
    .collect();
    let wide64: Vec<u8> = [
        0x7FF8_0000_0000_0000u64,
        0xFFF8_0246_8000_0000,
        0x7FF0_0000_0000_0001,
        0xFFF0_0000_0000_0000,
        0x47EF_FFFF_E000_0000,
        0x3FF7_FFFF_FFFF_FFFF,
        0x4008_0000_0000_0000,
        0x8000_0000_0000_0000,
        0x3808_0000_0000_0000,
    ]
    .iter()
    .flat_map(|x| x.to_le_bytes())
    .collect();
    let narrow: Vec<u8> = (0..=255u8).rev().collect();
    let lens: &[usize] = if cfg!(miri) {
        &[3]
    } else {
        &[0, 1, 2, 7, 16, 33]
    };
    let mut failures = Vec::new();
    let mut runs = 0;
    for pair in 0..harness::PAIRS.len() {
        let payload = match pair % 4 {
            0 => &wide32,
            1 => &wide64,
            _ => &narrow,
        };
        for (o, (mode, nan)) in harness::Mode::ALL
            .into_iter()
            .flat_map(|m| harness::NANS.map(|n| (m, n)))
            .enumerate()
        {
            if cfg!(miri) && !miri_runs(pair, o) {
                continue;
            }
            for (k, &len) in lens.iter().enumerate() {
                let input = harness::Input {
                    pair,
                    mode,
                    nan,
                    len,
                    src_sel: (pair + k) as u8,
                    dst_sel: (3 * pair + 5 * k + 1) as u8,
                    // slices: each group of entry points with the other lengths; bytes:
                    // one element more or less, or none.
                    variant: (k as u8 % 4) | 4 | ((k as u8 % 3) << 3),
                    payload,
                };
                for t in Target::ALL {
                    runs += 1;
                    if let Err(msg) = harness::try_run_input(t, &input, NO_HOOKS) {
                        failures.push(msg);
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} runs failed; the first:\n{}",
        failures.len(),
        failures[0]
    );
}

/// The narrow types whose pairs run under Miri: one per code width of the Scalar kernels.
const MIRI_FORMATS: [&str; 3] = ["F16", "F8E4M3", "F4E2M1x2"];

/// Whether `every_pair_and_option_runs` runs `pair` with options `o` (overflow mode `o / 3`,
/// NaN policy `o % 3`) under Miri.
fn miri_runs(pair: usize, o: usize) -> bool {
    if !MIRI_FORMATS.contains(&harness::FORMATS[pair / 4]) {
        return false;
    }
    if pair % 4 < 2 {
        // Narrowing: Saturate and NonSaturating, each with a NaN policy that turns.
        o == 3 + pair % 3 || o == 6 + (pair + 1) % 3
    } else {
        o == pair % 9
    }
}

/// Under Miri, CPU feature detection reports nothing, and `portable` is left out (Miri runs
/// its kernels in `arch::portable`'s internal tests instead), so only the Scalar backend exists
/// and the harness runs pure Rust code that Miri can check.
#[cfg(miri)]
#[test]
fn miri_sees_only_scalar() {
    let available: Vec<vcvt::Backend> = vcvt::Backend::available().collect();
    assert_eq!(available, [vcvt::Backend::Scalar]);
    assert_eq!(vcvt::Backend::active(), vcvt::Backend::Scalar);
}

/// The block seeds reach every operation, every MX element × profile × layout, every NVFP4
/// profile × layout with every source and destination dtype, both block FP8 profiles with
/// every dtype, every `narrow_scaled` code type, the `_uninit` variants, and both valid
/// inputs and each kind of error.
#[test]
#[cfg_attr(
    miri,
    ignore = "checks committed data, not memory safety; runs natively"
)]
fn block_seeds_cover_every_scheme() {
    use block_harness::{Input, Op};
    use std::collections::BTreeSet;
    let seeds = block_harness::seeds();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut names = BTreeSet::new();
    for s in &seeds {
        assert!(
            names.insert(s.name.clone()),
            "two block seeds named {}",
            s.name
        );
        let i = Input::parse(&s.data);
        let (op, c) = (i.op(), i.h[1]);
        let (src, dst) = (i.src_type(), i.dst_type());
        let quantizes = matches!(op, Op::MxQuantize | Op::NvQuantize | Op::Fp8Quantize);
        let dtype = if quantizes { src } else { dst };
        seen.insert(format!("{op:?}"));
        match op {
            Op::MxQuantize | Op::MxDequantize => {
                seen.insert(format!("{op:?} {}", c % 40));
                seen.insert(format!("{op:?} {} {dtype}", c % 40));
            }
            Op::NvQuantize | Op::NvDequantize => {
                seen.insert(format!("{op:?} {} {dtype}", c % 6));
            }
            Op::Fp8Quantize | Op::Fp8Dequantize => {
                seen.insert(format!("{op:?} {} {dtype}", c % 2));
            }
            Op::Scaled => {
                seen.insert(format!("{op:?} {} {src}", c % 8));
            }
            _ => {}
        }
        if i.uninit() {
            seen.insert(format!("{op:?} uninit"));
        }
    }
    let mut want: Vec<String> = Op::ALL.iter().map(|o| format!("{o:?}")).collect();
    for op in ["MxQuantize", "MxDequantize"] {
        want.extend((0..40).map(|c| format!("{op} {c}")));
        want.push(format!("{op} uninit"));
    }
    for c in 0..40u8 {
        let cfg = (
            block_harness::MX_ELEMENTS[usize::from(c % 5)],
            block_harness::MX_PROFILES[usize::from(c / 5 % 4)],
            block_harness::MX_LAYOUTS[usize::from(c / 20 % 2)],
        );
        let valid = vcvt::block::Mx::new(cfg.0)
            .profile(cfg.1)
            .layout(cfg.2)
            .data_len(vcvt::block::Shape::matrix(1, 64))
            .is_ok();
        if valid {
            for d in 0..3 {
                want.push(format!("MxQuantize {c} {d}"));
                want.push(format!("MxDequantize {c} {d}"));
            }
        }
    }
    for op in ["NvQuantize", "NvDequantize"] {
        want.extend((0..6).flat_map(|c| (0..3).map(move |d| format!("{op} {c} {d}"))));
    }
    for op in ["Fp8Quantize", "Fp8Dequantize"] {
        want.extend((0..2).flat_map(|c| (0..3).map(move |d| format!("{op} {c} {d}"))));
    }
    want.extend(["NvDequantize uninit".into(), "Fp8Dequantize uninit".into()]);
    want.extend((0..8).flat_map(|c| (0..3).map(move |d| format!("Scaled {c} {d}"))));
    let missing: Vec<&String> = want.iter().filter(|w| !seen.contains(*w)).collect();
    assert!(missing.is_empty(), "no block seed for {missing:?}");
}

/// The block harness reports every kind of fault it is meant to catch.
#[test]
fn block_harness_detects_faults() {
    let missed = block_harness::self_test();
    assert!(missed.is_empty(), "the block harness missed: {missed:?}");
}
