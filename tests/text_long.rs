//! Parsing is exact for any length of digits and any exponent (issue 33): a long digit
//! string with a compensating exponent is the same number as its short form. Expected codes
//! are the exact values worked out by hand (1.0 is F16 0x3C00; 1 + 2^-11 = 1.00048828125 is
//! the tie between 0x3C00 and 0x3C01), not the parser's own output.

use proptest::prelude::*;
use vcvt::{BF16, F8E4M3, F16};

// The `text` fuzz target's checker: the exact decimal against each result's midpoints,
// digit by digit, independently of vcvt's parser, for all eleven element types.
#[path = "../fuzz/src/text_harness.rs"]
#[allow(dead_code)]
mod text_harness;

fn f16_bits(s: &str) -> u16 {
    s.parse::<F16>().unwrap().to_bits()
}

#[test]
fn issue_33_example_is_one() {
    let s = format!("1{}e-1000000", "0".repeat(1_000_000));
    assert_eq!(f16_bits(&s), 0x3C00);
    assert_eq!(s.parse::<BF16>().unwrap().to_bits(), 0x3F80);
    assert_eq!(s.parse::<F8E4M3>().unwrap().to_bits(), 0x38);
}

#[test]
fn long_strings_with_compensating_exponents() {
    let z = "0".repeat(1_000_000);
    // Leading zeros after the point, compensated.
    assert_eq!(f16_bits(&format!("0.{z}1e1000001")), 0x3C00);
    assert_eq!(f16_bits(&format!("-0.{z}1e1000001")), 0xBC00);
    // The tie 1 + 2^-11 rounds to even (0x3C00); anything above it, however far down,
    // rounds up.
    assert_eq!(f16_bits(&format!("100048828125{z}e-1000011")), 0x3C00);
    assert_eq!(f16_bits(&format!("100048828125{z}1e-1000012")), 0x3C01);
    assert_eq!(f16_bits(&format!("1.00048828125{z}1")), 0x3C01);
    assert_eq!(
        f16_bits(&format!("1.00048828124{}", "9".repeat(1_000_000))),
        0x3C00
    );
    // Exponents far beyond i64 still give zero and the largest values.
    let big = "9".repeat(100);
    assert_eq!(f16_bits(&format!("1e-{big}")), 0x0000);
    assert_eq!(f16_bits(&format!("1e{big}")), 0x7C00);
    assert_eq!(f16_bits(&format!("0.{z}e{big}")), 0x0000);
    // Exponents with many leading zeros.
    assert_eq!(f16_bits(&format!("1e{z}1")), 0x4900); // 10
    // Grammar and errors are still core's.
    for bad in ["", ".", "e5", "1e", "1e+", "--1", "1.0.0", "0x10", "1_0"] {
        assert!(bad.parse::<F16>().is_err(), "{bad:?}");
        assert!(bad.parse::<f32>().is_err(), "{bad:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Padding a decimal with zeros on both sides and moving the exponent to compensate
    /// does not change the value, so it must not change the code. (The short form takes the
    /// fast path, which `tests/text.rs` checks on every code and boundary against the
    /// exact-rational oracle; the padded form takes the general path.)
    #[test]
    fn padding_with_zeros_changes_nothing(
        digits in "[1-9][0-9]{0,25}",
        exp in -40i64..40,
        // Short paddings and ones of tens of thousands of digits.
        lead in prop_oneof![0usize..3000, 65_000usize..70_000],
        trail in prop_oneof![0usize..3000, 65_000usize..70_000],
    ) {
        let short = format!("{digits}e{exp}");
        let long = format!(
            "{}{digits}{}e{}",
            "0".repeat(lead),
            "0".repeat(trail),
            exp - trail as i64
        );
        let point = format!(
            "0.{}{digits}e{}",
            "0".repeat(lead),
            exp + digits.len() as i64 + lead as i64
        );
        for s in [&long, &point] {
            prop_assert_eq!(short.parse::<F16>().unwrap().to_bits(), s.parse::<F16>().unwrap().to_bits(), "{}", s);
            prop_assert_eq!(short.parse::<BF16>().unwrap().to_bits(), s.parse::<BF16>().unwrap().to_bits(), "{}", s);
            prop_assert_eq!(short.parse::<F8E4M3>().unwrap().to_bits(), s.parse::<F8E4M3>().unwrap().to_bits(), "{}", s);
        }
    }
}

/// The fast path's exponent saturation must not meet a long fraction: 1 at the 1,048,571st
/// decimal place times 10^1048600 is 10^29 (beyond F16: inf; in BF16 the nearest code is
/// 0x6FA2, worked out with exact rationals), not 10^5 as an exponent saturated at 2^20 made it.
#[test]
fn saturated_exponent_beside_a_long_fraction() {
    let s = format!("0.{}1e1048600", "0".repeat(1_048_570));
    assert_eq!(f16_bits(&s), 0x7C00);
    assert_eq!(s.parse::<BF16>().unwrap().to_bits(), 0x6FA2);
    let s = format!("0.{}1e1048572", "0".repeat(1_048_570));
    assert_eq!(f16_bits(&s), 0x4900); // 10
}

/// The strings of `long.tsv` (those with fewer than 100,000 leading zeros) and the examples
/// above, through the fuzz target's independent checker, for every element type.
#[test]
fn long_strings_through_the_text_fuzz_checker() {
    let z = "0".repeat(1_000_000);
    let mut cases = vec![
        format!("1{z}e-1000000"),
        format!("0.{z}1e1000001"),
        format!("100048828125{z}1e-1000012"),
        format!("0.{}1e1048600", "0".repeat(1_048_570)),
    ];
    for line in include_str!("data/text/long.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
    {
        let f: Vec<&str> = line.split('\t').collect();
        let lead: usize = f[2].parse().unwrap();
        if lead > 100_000 {
            continue;
        }
        let tail = match f[5] {
            "-" => String::new(),
            "1" => "1".into(),
            t => "9".repeat(t[2..].parse().unwrap()),
        };
        let pad = "0".repeat(f[4].parse().unwrap());
        cases.push(format!(
            "{}0.{}{}{pad}{tail}e{}",
            f[1],
            "0".repeat(lead),
            f[3],
            f[6]
        ));
    }
    assert!(cases.len() > 500);
    for s in &cases {
        if let Err(e) = text_harness::run(s.as_bytes()) {
            // (The checker's message quotes the whole string: only its end is shown.)
            let tail: String = e
                .chars()
                .rev()
                .take(200)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            panic!(
                "{}... ({} bytes): ...{tail}",
                &s[..40.min(s.len())],
                s.len()
            );
        }
    }
}

/// 557 long strings around every kind of F16 and BF16 boundary (midpoints between codes,
/// codes, the overflow threshold, subnormals; exactly on, just above and just below, the
/// deciding digit up to 3,000 places past the 800 the parser keeps, leading zeros up to
/// 1,050,000 so that exponents pass 2^20), with the codes Python's exact rationals give
/// (`scripts/gen_text_long_vectors.py`, `tests/data/text/long.tsv`).
#[test]
fn long_strings_against_the_exact_rational_oracle() {
    let table = include_str!("data/text/long.tsv");
    let mut n = 0;
    for line in table.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        let [format, sign, lead, digits, pad, tail, exp, want] = f[..] else {
            panic!("bad line {line}");
        };
        let tail = match tail {
            "-" => String::new(),
            "1" => "1".into(),
            t => "9".repeat(t.strip_prefix("9x").unwrap().parse().unwrap()),
        };
        let s = format!(
            "{sign}0.{}{digits}{}{tail}e{exp}",
            "0".repeat(lead.parse().unwrap()),
            "0".repeat(pad.parse().unwrap())
        );
        let want = u16::from_str_radix(want, 16).unwrap();
        let got = match format {
            "f16" => s.parse::<F16>().unwrap().to_bits(),
            "bf16" => s.parse::<BF16>().unwrap().to_bits(),
            other => panic!("format {other}"),
        };
        assert_eq!(
            got,
            want,
            "{format} {sign} lead {lead} {digits} pad {pad} tail {} e{exp}",
            tail.len()
        );
        n += 1;
    }
    assert_eq!(n, 557);
}
