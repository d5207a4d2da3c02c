//! Widening: every code of every format (2^16 or 2^8 of them) widened to `f32` and `f64` on
//! every available backend, bit-exact against the independent oracle of `common` (values from
//! its table, NaNs by the contract's rules), then narrowed back under both overflow policies:
//! finite codes come back to themselves, ±Inf comes back under `NonSaturating` and becomes
//! ±MAX under `Saturate` (an infinite source is overflow), NaN codes follow the format's
//! narrowing NaN rule.
//!
//! Widening runs twice per backend: the whole code list in one call, and in calls of 63
//! codes, so that every code goes through both a kernel's main loop and its remainder steps.
//!
//! Also checks the oracle itself against facts stated by the contract and the format
//! definitions (largest values, the E4M3 464 tie, the F16 65520 tie, NaN bit patterns), so
//! that a mistake in the oracle cannot hide a matching mistake in the codec.

mod common;

use common::{MODES, Narrow, Oracle, Report, backends, names};
use vcvt::{
    BF16, ConvertTo, F4E2M1, F6E2M3, F6E3M2, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FNUZ, F8E4M3IEEE,
    F8E5M2, F8E5M2FNUZ, F8E5M3FNU, F8E8M0, F16, Options, Overflow,
};

/// What a code narrows back to after widening, by the contract.
fn round_trip_expectation(oracle: &Oracle, code: u32, wide_f32_bits: u32, mode: Overflow) -> u32 {
    let def = oracle.def;
    // Bits above the format's width (fp6, fp4 bytes) are ignored by widening.
    let code = code & (def.codes() - 1);
    let sign = code & def.sign_bit();
    let mag = code & def.mag_mask();
    if def.is_nan_code(code) {
        oracle.narrow_f32(wide_f32_bits, mode)
    } else if Some(mag) == def.inf_code() && mode == Overflow::Saturate {
        sign | def.max_code()
    } else {
        code
    }
}

fn widen_and_back<T: Narrow + ConvertTo<f32> + ConvertTo<f64>>(test: &str)
where
    f32: ConvertTo<T>,
    f64: ConvertTo<T>,
{
    let backends = backends(test);
    let oracle = T::oracle();
    // Every code; for formats narrower than their byte (fp6, fp4), every byte value, so that
    // the unused high bits are set in most of them: widening must ignore them.
    let codes: Vec<T> = if T::DEF.bits() < 8 {
        let bytes: Vec<u8> = (0..=255).collect();
        bytemuck::cast_slice::<u8, T>(&bytes).to_vec()
    } else {
        (0..T::DEF.codes()).map(T::from_code).collect()
    };
    let exp32: Vec<f32> = codes
        .iter()
        .map(|c| f32::from_bits(oracle.widen_f32(c.code())))
        .collect();
    let exp64: Vec<f64> = codes
        .iter()
        .map(|c| f64::from_bits(oracle.widen_f64(c.code())))
        .collect();
    let input = |i: usize| u64::from(codes[i].code());

    // The round-trip expectations, and the oracle's own consistency with them.
    let back: [Vec<T>; 2] = MODES.map(|mode| {
        codes
            .iter()
            .zip(&exp32)
            .map(|(c, w)| T::from_code(round_trip_expectation(oracle, c.code(), w.to_bits(), mode)))
            .collect()
    });
    for (mi, mode) in MODES.into_iter().enumerate() {
        for (i, c) in codes.iter().enumerate() {
            let want = back[mi][i].code();
            assert_eq!(
                oracle.narrow_f32(exp32[i].to_bits(), mode),
                want,
                "oracle f32 {c:?}"
            );
            assert_eq!(
                oracle.narrow_f64(exp64[i].to_bits(), mode),
                want,
                "oracle f64 {c:?}"
            );
        }
    }

    let mut report = Report::default();
    let n = codes.len();
    for &b in &backends {
        // Widening ignores the overflow policy; run it under the default and both policies.
        for opts in [Options::new()]
            .into_iter()
            .chain(MODES.map(|m| Options::new().overflow(m)))
        {
            let mut out32 = vec![0f32; n];
            vcvt::convert_slice_on(b, &codes, &mut out32, opts).unwrap();
            let what = || format!("{}->f32 on {b}, {opts:?}", T::DEF.name);
            report.compare(what, &exp32, &out32, input);
            let mut out64 = vec![0f64; n];
            vcvt::convert_slice_on(b, &codes, &mut out64, opts).unwrap();
            let what = || format!("{}->f64 on {b}, {opts:?}", T::DEF.name);
            report.compare(what, &exp64, &out64, input);
        }
        // Again in calls of 63 codes, shorter than the AVX-512 kernels' 64-element block:
        // every code also goes through the kernels' remainder steps, which may use other
        // instructions than their main loops.
        let mut out32 = vec![0f32; n];
        let mut out64 = vec![0f64; n];
        for ((src, d32), d64) in codes
            .chunks(63)
            .zip(out32.chunks_mut(63))
            .zip(out64.chunks_mut(63))
        {
            vcvt::convert_slice_on(b, src, d32, Options::new()).unwrap();
            vcvt::convert_slice_on(b, src, d64, Options::new()).unwrap();
        }
        let what = || format!("{}->f32 on {b}, 63-code calls", T::DEF.name);
        report.compare(what, &exp32, &out32, input);
        let what = || format!("{}->f64 on {b}, 63-code calls", T::DEF.name);
        report.compare(what, &exp64, &out64, input);
        for (mi, mode) in MODES.into_iter().enumerate() {
            let opts = Options::new().overflow(mode);
            let mut out = vec![T::zeroed(); n];
            vcvt::convert_slice_on(b, &exp32, &mut out, opts).unwrap();
            let what = || format!("{}->f32->{0} on {b}, {mode:?}", T::DEF.name);
            report.compare(what, &back[mi], &out, input);
            vcvt::convert_slice_on(b, &exp64, &mut out, opts).unwrap();
            let what = || format!("{}->f64->{0} on {b}, {mode:?}", T::DEF.name);
            report.compare(what, &back[mi], &out, input);
        }
    }
    report.finish(
        test,
        &format!(
            "all {n} {} codes widened to f32/f64 (3 option sets) and narrowed back (2 modes) on [{}]",
            T::DEF.name,
            names(&backends)
        ),
    );
}

#[test]
fn widen_f16() {
    widen_and_back::<F16>("widen_f16");
}

#[test]
fn widen_bf16() {
    widen_and_back::<BF16>("widen_bf16");
}

#[test]
fn widen_f8e4m3() {
    widen_and_back::<F8E4M3>("widen_f8e4m3");
}

#[test]
fn widen_f8e5m2() {
    widen_and_back::<F8E5M2>("widen_f8e5m2");
}

#[test]
fn widen_f8e4m3fnuz() {
    widen_and_back::<F8E4M3FNUZ>("widen_f8e4m3fnuz");
}

#[test]
fn widen_f8e5m2fnuz() {
    widen_and_back::<F8E5M2FNUZ>("widen_f8e5m2fnuz");
}

#[test]
fn widen_f6e2m3() {
    widen_and_back::<F6E2M3>("widen_f6e2m3");
}

#[test]
fn widen_f6e3m2() {
    widen_and_back::<F6E3M2>("widen_f6e3m2");
}

#[test]
fn widen_f4e2m1() {
    widen_and_back::<F4E2M1>("widen_f4e2m1");
}

#[test]
fn widen_f8e8m0() {
    widen_and_back::<F8E8M0>("widen_f8e8m0");
}

#[test]
fn widen_f8e3m4() {
    widen_and_back::<F8E3M4>("widen_f8e3m4");
}

#[test]
fn widen_f8e4m3ieee() {
    widen_and_back::<F8E4M3IEEE>("widen_f8e4m3ieee");
}

#[test]
fn widen_f8e4m3b11fnuz() {
    widen_and_back::<F8E4M3B11FNUZ>("widen_f8e4m3b11fnuz");
}

#[test]
fn widen_f8e5m3fnu() {
    widen_and_back::<F8E5M3FNU>("widen_f8e5m3fnu");
}

/// The oracle reproduces facts stated in the contract table and the format definitions.
#[test]
fn oracle_agrees_with_the_contract_facts() {
    use Overflow::{NonSaturating as Ns, Saturate as Sat};
    let (f16, bf16, e4, e5) = (
        F16::oracle(),
        BF16::oracle(),
        F8E4M3::oracle(),
        F8E5M2::oracle(),
    );
    let mut checked = 0;
    let mut check = |got: u32, want: u32, what: &str| {
        assert_eq!(got, want, "oracle: {what}: got {got:#x}, want {want:#x}");
        checked += 1;
    };

    // Largest finite values and smallest subnormals.
    let max = |o: &Oracle| o.values[o.max_code() as usize];
    assert_eq!(max(f16), 65504.0);
    assert_eq!(max(bf16), f64::from(f32::from_bits(0x7F7F_0000)));
    assert_eq!(max(e4), 448.0);
    assert_eq!(max(e5), 57344.0);
    assert_eq!(f16.values[1], 2f64.powi(-24));
    assert_eq!(bf16.values[1], 2f64.powi(-133));
    assert_eq!(e4.values[1], 2f64.powi(-9));
    assert_eq!(e5.values[1], 2f64.powi(-16));
    assert_eq!(
        [
            f16.max_code(),
            bf16.max_code(),
            e4.max_code(),
            e5.max_code()
        ],
        [0x7BFF, 0x7F7F, 0x7E, 0x7B]
    );
    for (o, one) in [(f16, 0x3C00), (bf16, 0x3F80), (e4, 0x38), (e5, 0x3C)] {
        check(o.narrow_f32(1f32.to_bits(), Ns), one, "1.0");
        check(o.widen_f32(one), 1f32.to_bits(), "1.0 widened");
    }

    // E4M3: 464 is the tie above 448 and rounds to it (0x7E is even); above it overflows.
    for mode in [Sat, Ns] {
        check(e4.narrow_f32(464f32.to_bits(), mode), 0x7E, "E4M3 464");
        check(e4.narrow_f32((-464f32).to_bits(), mode), 0xFE, "E4M3 -464");
    }
    check(e4.narrow_f32(465f32.to_bits(), Sat), 0x7E, "E4M3 465 sat");
    check(e4.narrow_f32(465f32.to_bits(), Ns), 0x7F, "E4M3 465 nonsat");
    check(
        e4.narrow_f32((-465f32).to_bits(), Ns),
        0xFF,
        "E4M3 -465 nonsat",
    );
    check(
        e4.narrow_f32(f32::INFINITY.to_bits(), Sat),
        0x7E,
        "E4M3 +Inf sat",
    );
    check(
        e4.narrow_f32(f32::NEG_INFINITY.to_bits(), Ns),
        0xFF,
        "E4M3 -Inf nonsat",
    );

    // F16: 65520 is the tie above 65504 and rounds up (0x7BFF is odd): overflow. From f64,
    // 65520 - 2^-30 is below the tie and gives MAX (through f32 it would become 65520).
    check(f16.narrow_f32(65520f32.to_bits(), Ns), 0x7C00, "F16 65520");
    check(
        f16.narrow_f32(65520f32.to_bits(), Sat),
        0x7BFF,
        "F16 65520 sat",
    );
    let below = 65520.0 - 2f64.powi(-30);
    assert_eq!(below as f32, 65520.0);
    check(
        f16.narrow_f64(below.to_bits(), Ns),
        0x7BFF,
        "F16 65520-2^-30",
    );
    check(
        f16.narrow_f64((-below).to_bits(), Ns),
        0xFBFF,
        "F16 -(65520-2^-30)",
    );
    // E5M2: 61440 is the tie above 57344 (0x7B odd): overflow.
    check(e5.narrow_f32(61440f32.to_bits(), Ns), 0x7C, "E5M2 61440");
    check(
        e5.narrow_f32(61440f32.to_bits(), Sat),
        0x7B,
        "E5M2 61440 sat",
    );
    check(e5.narrow_f32(61439f32.to_bits(), Ns), 0x7B, "E5M2 61439");
    // Ties to even at the bottom: half the smallest subnormal goes to zero, 1.5 of it to 2.
    check(f16.narrow_f64(2f64.powi(-25).to_bits(), Ns), 0, "F16 2^-25");
    check(
        f16.narrow_f64((3.0 * 2f64.powi(-25)).to_bits(), Ns),
        2,
        "F16 3*2^-25",
    );
    check(f16.narrow_f64((-0.0f64).to_bits(), Ns), 0x8000, "F16 -0");
    check(bf16.narrow_f32(0x0000_8000, Ns), 0, "BF16 f32 2^-134 tie");
    check(bf16.narrow_f32(0x0000_8001, Ns), 1, "BF16 above 2^-134");
    check(
        bf16.narrow_f32(0x007F_FFFF, Ns),
        0x0080,
        "BF16 largest f32 subnormal",
    );

    // NaN rules.
    check(f16.narrow_f32(0x7FA0_0001, Sat), 0x7F00, "F16 NaN payload");
    check(f16.narrow_f32(0xFF80_2000, Ns), 0xFE01, "F16 sNaN quieted");
    check(
        f16.narrow_f64(0x7FF0_0400_0000_0000, Ns),
        0x7E01,
        "F16 f64 sNaN",
    );
    check(bf16.narrow_f32(0x7FA0_0001, Sat), 0x7FE0, "BF16 NaN");
    check(
        bf16.narrow_f32(0xFF81_0000, Sat),
        0xFFC1,
        "BF16 sNaN quieted",
    );
    check(
        bf16.narrow_f64(0x7FF0_2000_0000_0000, Ns),
        0x7FC1,
        "BF16 f64 sNaN",
    );
    check(e4.narrow_f32(0xFFC0_0000, Sat), 0xFF, "E4M3 NaN");
    check(e5.narrow_f32(0x7F80_0001, Ns), 0x7E, "E5M2 NaN");
    check(e5.narrow_f64(0xFFF8_0000_0000_0000, Sat), 0xFE, "E5M2 -NaN");
    check(f16.widen_f32(0x7C01), 0x7FC0_2000, "F16 sNaN widened");
    check(
        bf16.widen_f32(0xFF81),
        0xFF81_0000,
        "BF16 sNaN widened plainly",
    );
    check(e4.widen_f32(0xFF), 0xFFC0_0000, "E4M3 -NaN widened");
    check(
        e5.widen_f32(0x7D),
        0x7FE0_0000,
        "E5M2 sNaN widened like F16 0x7D00",
    );
    check(f16.widen_f32(0x7D00), 0x7FE0_0000, "F16 0x7D00 widened");
    check(e4.widen_f32(0x7E), 448f32.to_bits(), "E4M3 0x7E is finite");
    check(e5.widen_f32(0xFC), f32::NEG_INFINITY.to_bits(), "E5M2 -Inf");
    let w = bf16.widen_f64(0x7F81);
    assert_eq!(w, 0x7FF8_2000_0000_0000, "BF16 sNaN to f64 is quieted");
    let w = f16.widen_f64(0xFC01);
    assert_eq!(w, 0xFFF8_0400_0000_0000, "F16 sNaN to f64");
    println!("oracle_agrees_with_the_contract_facts: {checked} oracle facts checked (no backend)");
}

/// The oracle of the formats added for MX and fnuz reproduces facts from their definitions
/// (ml_dtypes' tables and the OCP MX spec, `../shared/research/mx.md` §1.1) and from the
/// contract rows of the crate.
#[test]
fn oracle_agrees_with_the_mx_and_fnuz_facts() {
    use Overflow::{NonSaturating as Ns, Saturate as Sat};
    let (e4z, e5z, e2m3, e3m2, e2m1, e8m0) = (
        F8E4M3FNUZ::oracle(),
        F8E5M2FNUZ::oracle(),
        F6E2M3::oracle(),
        F6E3M2::oracle(),
        F4E2M1::oracle(),
        F8E8M0::oracle(),
    );
    let mut checked = 0;
    let mut check = |got: u32, want: u32, what: &str| {
        assert_eq!(got, want, "oracle: {what}: got {got:#x}, want {want:#x}");
        checked += 1;
    };
    let max = |o: &Oracle| o.values[o.max_code() as usize];
    // Largest values, smallest subnormals, largest codes.
    assert_eq!(max(e4z), 240.0);
    assert_eq!(max(e5z), 57344.0);
    assert_eq!(max(e2m3), 7.5);
    assert_eq!(max(e3m2), 28.0);
    assert_eq!(max(e2m1), 6.0);
    assert_eq!(max(e8m0), 2f64.powi(127));
    assert_eq!(e4z.values[1], 2f64.powi(-10));
    assert_eq!(e5z.values[1], 2f64.powi(-17));
    assert_eq!(e2m3.values[1], 0.125);
    assert_eq!(e3m2.values[1], 0.0625);
    assert_eq!(e2m1.values[1], 0.5);
    assert_eq!(e8m0.values[0], 2f64.powi(-127));
    assert_eq!(
        [e4z, e5z, e2m3, e3m2, e2m1, e8m0].map(|o| o.max_code()),
        [0x7F, 0x7F, 0x1F, 0x1F, 0x7, 0xFE]
    );
    // The whole FP4 table: 0, 0.5, 1, 1.5, 2, 3, 4, 6.
    assert_eq!(&e2m1.values[..8], &[0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    // One.
    for (o, one) in [
        (e4z, 0x40),
        (e5z, 0x40),
        (e2m3, 0x08),
        (e3m2, 0x0C),
        (e2m1, 0x2),
        (e8m0, 0x7F),
    ] {
        check(o.narrow_f32(1f32.to_bits(), Ns), one, "1.0");
        check(o.widen_f32(one), 1f32.to_bits(), "1.0 widened");
    }
    // FP4 ties to even: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4.
    for (x, code) in [
        (0.25f32, 0x0),
        (0.75, 0x2),
        (1.25, 0x2),
        (1.75, 0x4),
        (2.5, 0x4),
        (3.5, 0x6),
        (5.0, 0x6),
        (-5.0, 0xE),
        (7.0, 0x7),
        (1.0e30, 0x7),
    ] {
        for mode in [Sat, Ns] {
            check(e2m1.narrow_f32(x.to_bits(), mode), code, "FP4 tie");
        }
    }
    // fp6/fp4: overflow, Inf and NaN saturate under both policies; NaN keeps its sign.
    for mode in [Sat, Ns] {
        check(
            e2m3.narrow_f32(f32::INFINITY.to_bits(), mode),
            0x1F,
            "E2M3 Inf",
        );
        check(e3m2.narrow_f32(100f32.to_bits(), mode), 0x1F, "E3M2 100");
        check(e2m1.narrow_f32(0xFFC0_0000, mode), 0xF, "E2M1 -NaN");
        check(e2m1.narrow_f32(0x7FC0_0000, mode), 0x7, "E2M1 NaN");
        check(e2m1.narrow_f32((-0.0f32).to_bits(), mode), 0x8, "E2M1 -0");
    }
    // fnuz: no negative zero, NaN 0x80; 248 is the tie above 240 (0x7F odd): overflow.
    check(e4z.narrow_f32((-0.0f32).to_bits(), Ns), 0x00, "E4M3FNUZ -0");
    check(
        e4z.narrow_f32((-1e-30f32).to_bits(), Sat),
        0x00,
        "E4M3FNUZ -tiny",
    );
    check(e4z.narrow_f32(248f32.to_bits(), Ns), 0x80, "E4M3FNUZ 248");
    check(
        e4z.narrow_f32(248f32.to_bits(), Sat),
        0x7F,
        "E4M3FNUZ 248 sat",
    );
    check(
        e4z.narrow_f32((-248f32).to_bits(), Sat),
        0xFF,
        "E4M3FNUZ -248 sat",
    );
    check(e4z.narrow_f32(247f32.to_bits(), Ns), 0x7F, "E4M3FNUZ 247");
    check(e4z.narrow_f32(0xFFC0_0000, Sat), 0x80, "E4M3FNUZ -NaN");
    check(
        e5z.narrow_f32(f32::NEG_INFINITY.to_bits(), Ns),
        0x80,
        "E5M2FNUZ -Inf",
    );
    check(
        e5z.narrow_f32(f32::NEG_INFINITY.to_bits(), Sat),
        0xFF,
        "E5M2FNUZ -Inf sat",
    );
    check(e4z.widen_f32(0x80), 0xFFC0_0000, "E4M3FNUZ NaN widened");
    // E8M0: nearest power of two in linear space, ties up; no zero, no sign.
    check(
        e8m0.narrow_f32(3f32.to_bits(), Ns),
        0x81,
        "E8M0 3 (tie) -> 4",
    );
    check(e8m0.narrow_f32(2.9f32.to_bits(), Ns), 0x80, "E8M0 2.9 -> 2");
    check(e8m0.narrow_f32(0x0040_0000, Ns), 0x00, "E8M0 2^-127");
    check(e8m0.narrow_f32(0x0050_0000, Ns), 0x00, "E8M0 1.25*2^-127");
    check(
        e8m0.narrow_f32(0x0060_0000, Ns),
        0x01,
        "E8M0 1.5*2^-127 (tie)",
    );
    check(e8m0.narrow_f32(1, Ns), 0x00, "E8M0 2^-149");
    check(e8m0.narrow_f32(0, Sat), 0xFF, "E8M0 0");
    check(e8m0.narrow_f32((-4f32).to_bits(), Sat), 0xFF, "E8M0 -4");
    check(
        e8m0.narrow_f32(f32::INFINITY.to_bits(), Sat),
        0xFF,
        "E8M0 Inf",
    );
    check(
        e8m0.narrow_f32(f32::MAX.to_bits(), Sat),
        0xFE,
        "E8M0 f32::MAX sat",
    );
    check(
        e8m0.narrow_f32(f32::MAX.to_bits(), Ns),
        0xFF,
        "E8M0 f32::MAX nonsat",
    );
    check(
        e8m0.narrow_f32(0x7F3F_FFFF, Ns),
        0xFE,
        "E8M0 below 1.5*2^127",
    );
    check(e8m0.narrow_f32(0x7FC0_0000, Sat), 0xFF, "E8M0 NaN");
    check(e8m0.widen_f32(0x00), 0x0040_0000, "E8M0 0x00 widened");
    check(e8m0.widen_f32(0xFF), 0x7FC0_0000, "E8M0 NaN widened");
    check(
        e8m0.narrow_f64(2f64.powi(-200).to_bits(), Ns),
        0x00,
        "E8M0 f64 2^-200",
    );
    println!("oracle_agrees_with_the_mx_and_fnuz_facts: {checked} facts checked");
}
