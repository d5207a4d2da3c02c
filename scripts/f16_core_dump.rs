//! Dumps Rust core's primitive `f16` text for every code: the reference vcvt's `F16` text must
//! equal byte for byte (issue 16). Nightly only (`f16` is unstable):
//!
//!     rustc +nightly -O scripts/f16_core_dump.rs -o /tmp/f16_core_dump && /tmp/f16_core_dump > out.tsv
//!
//! One line per code in order: `code\t{}\t{:?}\t{:e}`; its SHA-256 is recorded in
//! `tests/text.rs`. With the argument `parse`, it instead prints, for each line of standard
//! input, `core f16 parse of the line` as four hex digits (or `err`).
#![feature(f16)]
use std::io::{BufRead, Write};

fn main() {
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    if std::env::args().nth(1).as_deref() == Some("parse") {
        for line in std::io::stdin().lock().lines() {
            let line = line.unwrap();
            match line.parse::<f16>() {
                Ok(x) => writeln!(out, "{:04x}", x.to_bits()).unwrap(),
                Err(_) => writeln!(out, "err").unwrap(),
            }
        }
        return;
    }
    for c in 0..=u16::MAX {
        let x = f16::from_bits(c);
        writeln!(out, "{:04x}\t{}\t{:?}\t{:e}", c, x, x, x).unwrap();
    }
}
