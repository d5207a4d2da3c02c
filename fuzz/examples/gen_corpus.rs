//! Writes the seed corpus `fuzz/corpus/<target>/<name>` from `harness::seeds()` (targets
//! `slices`, `bytes`) and `block_harness::seeds()` (target `block`):
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus
//! cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus -- --prune
//! ```
//!
//! Files of the same name are overwritten; other files (e.g. inputs a fuzz run added) are left
//! alone, unless `--prune` is given: then every other file in the corpus directories is
//! removed (after a change of the input format, old seeds mean something else).
//! `tests/fuzz_replay.rs` fails if a committed seed differs from what this writes.

use std::collections::BTreeSet;
use std::path::Path;

use vcvt_fuzz::block_harness;
use vcvt_fuzz::harness::{Target, seeds};

fn main() -> std::io::Result<()> {
    let prune = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--prune") => true,
        Some(other) => {
            eprintln!("unknown argument {other:?}; the only option is --prune");
            std::process::exit(2);
        }
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let seeds = seeds();
    let mut keep = BTreeSet::new();
    for s in &seeds {
        let dir = root.join(s.target.name());
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(&s.name);
        std::fs::write(&path, &s.data)?;
        keep.insert(path);
    }
    let block = block_harness::seeds();
    let block_dir = root.join("block");
    std::fs::create_dir_all(&block_dir)?;
    for s in &block {
        let path = block_dir.join(&s.name);
        std::fs::write(&path, &s.data)?;
        keep.insert(path);
    }
    let st_dir = root.join("st_plan");
    std::fs::create_dir_all(&st_dir)?;
    for (name, data) in vcvt_fuzz::st_fuzz::seeds() {
        let path = st_dir.join(name);
        std::fs::write(&path, &data)?;
        keep.insert(path);
    }
    let mut pruned = 0;
    if prune {
        let dirs = Target::ALL
            .iter()
            .map(|t| t.name())
            .chain(["block", "st_plan"]);
        for t in dirs {
            for entry in std::fs::read_dir(root.join(t))? {
                let path = entry?.path();
                if path.is_file() && !keep.contains(&path) {
                    std::fs::remove_file(&path)?;
                    pruned += 1;
                }
            }
        }
    }
    for t in Target::ALL {
        let n = seeds.iter().filter(|s| s.target == t).count();
        println!("{}: {n} seeds", t.name());
    }
    println!("block: {} seeds", block.len());
    println!("st_plan: {} seeds", vcvt_fuzz::st_fuzz::seeds().len());
    println!(
        "wrote {} seeds under {}{}",
        seeds.len() + block.len(),
        root.display(),
        if prune {
            format!(", removed {pruned} other files")
        } else {
            String::new()
        }
    );
    Ok(())
}
