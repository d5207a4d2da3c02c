use std::fmt::Write;
use vcvt::F16;

#[test]
fn f16_dump_scratch() {
    let mut s = String::new();
    for c in 0..=u16::MAX {
        let x = F16::from_bits(c);
        writeln!(s, "{:04x}\t{}\t{:?}\t{:e}", c, x, x, x).unwrap();
    }
    std::fs::write("/tmp/f16_vcvt.tsv", s).unwrap();
}
