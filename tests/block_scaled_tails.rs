//! `dequantize_scaled` into BF16 and F16 at every length from 0 to 170 and from 250 to 290
//! on every SIMD backend against the Scalar backend (the specification's exact f64 route),
//! bit for bit, with canaries around the destination: the word kernel takes 2 · LANES codes
//! a vector, two vectors an iteration, then one partial vector, the AVX-512 table kernels
//! start at 64 or 128 codes and take 32 a step, and the per-call table of the scales the
//! fused path does not serve starts at 64 codes (fp4, fp6) or 256 (eight-bit formats), so
//! the lengths cross every one of their edges.
//! The scales are exact for the fused path (power-of-two and few-bit scales, one whose
//! products need BF16's rounding, scales at the ends of the range) or not (negative, many
//! bits: the other routes), under the default MXCSR and a hostile one.

use vcvt::block::ScaledCode;
use vcvt::{BF16, F4E2M1, F6E2M3, F6E3M2, F8E4M3, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F16};

mod block_harness;
use block_harness::*;

/// Canary values around the destination.
const PAD: usize = 9;

/// MXCSR values: as the test runs, and round toward zero with FTZ and DAZ.
#[cfg(target_arch = "x86_64")]
const MXCSRS: [Option<u32>; 2] = [None, Some(0x1F80 | 0x6000 | 0x8000 | 0x0040)];
#[cfg(not(target_arch = "x86_64"))]
const MXCSRS: [Option<u32>; 1] = [None];

fn scales() -> Vec<f32> {
    vec![
        0.5,
        0.75,
        1.0,
        -0.75,
        3.0,
        // 1 + 13/128: with a 4-bit code the products have up to 12 significant bits, so the
        // BF16 rounding (ties included) decides.
        1.101_562_5,
        1.101_562_5 * 2f32.powi(-100),
        2f32.powi(100),
        2f32.powi(-110),
        f32::from_bits(0x3F80_0001),
        1e-30,
    ]
}

fn dequant<D: Bits>(
    b: vcvt::Backend,
    codes: &[impl ScaledCode],
    scale: f32,
    csr: Option<u32>,
) -> Vec<u32> {
    let n = codes.len();
    let mut buf = vec![D::sentinel(); n + 2 * PAD];
    with_mxcsr(csr, || {
        vcvt::block::dequantize_scaled_on(b, codes, scale, &mut buf[PAD..PAD + n]).unwrap();
    });
    buf.iter().map(|x| x.bits()).collect()
}

fn check<C: ScaledCode + Copy>(name: &str, from_bits: fn(u8) -> C, rng: &mut Rng) {
    check_to::<C, BF16>(name, from_bits, rng, "bf16");
    check_to::<C, F16>(name, from_bits, rng, "f16");
}

fn check_to<C: ScaledCode + Copy, D: Bits>(
    name: &str,
    from_bits: fn(u8) -> C,
    rng: &mut Rng,
    dest: &str,
) {
    for n in (0..=170).chain(250..=290) {
        // Every code in turn from a random start, so that each length sees many codes.
        let start = rng.u32();
        let codes: Vec<C> = (0..n)
            .map(|i| from_bits((start as usize + 37 * i) as u8))
            .collect();
        for scale in scales() {
            let want = dequant::<D>(vcvt::Backend::Scalar, &codes, scale, None);
            for b in simd_backends() {
                for csr in MXCSRS {
                    let got = dequant::<D>(b, &codes, scale, csr);
                    same_bits(
                        &|| {
                            format!(
                                "{name} x {scale:e} -> {dest}, length {n}, on {b}, MXCSR {csr:x?}"
                            )
                        },
                        &want,
                        &got,
                    );
                }
            }
        }
    }
}

#[test]
fn dequantize_scaled_every_length() {
    let mut rng = Rng(0x7A11_5EED);
    check("F8E4M3", F8E4M3::from_bits, &mut rng);
    check("F8E5M2", F8E5M2::from_bits, &mut rng);
    check("F8E4M3FNUZ", F8E4M3FNUZ::from_bits, &mut rng);
    check("F8E5M2FNUZ", F8E5M2FNUZ::from_bits, &mut rng);
    check("F6E2M3", |c| F6E2M3::from_bits(c & 0x3F), &mut rng);
    check("F6E3M2", |c| F6E3M2::from_bits(c & 0x3F), &mut rng);
    check("F4E2M1", |c| F4E2M1::from_bits(c & 0xF), &mut rng);
    check("F8E3M4", vcvt::F8E3M4::from_bits, &mut rng);
    check("F8E4M3IEEE", vcvt::F8E4M3IEEE::from_bits, &mut rng);
    check("F8E4M3B11FNUZ", vcvt::F8E4M3B11FNUZ::from_bits, &mut rng);
    check("F8E5M3FNU", vcvt::F8E5M3FNU::from_bits, &mut rng);
    check("F8E8M0", vcvt::F8E8M0::from_bits, &mut rng);
}
