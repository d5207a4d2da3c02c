//! Writes the seed corpus `fuzz/corpus/<target>/<name>` from `harness::seeds()`:
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus
//! ```
//!
//! Files of the same name are overwritten; other files (e.g. inputs a fuzz run added) are left
//! alone. `tests/fuzz_replay.rs` fails if a committed seed differs from what this writes.

use std::path::Path;

use vcvt_fuzz::harness::seeds;

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let seeds = seeds();
    for s in &seeds {
        let dir = root.join(s.target.name());
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(&s.name), &s.data)?;
    }
    println!("wrote {} seeds under {}", seeds.len(), root.display());
    Ok(())
}
