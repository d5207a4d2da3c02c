//! Every f32 value as a block's largest magnitude, for each MX scale rule: the scale byte
//! that [`Mx::scale_byte`] gives (the first step of quantization, the same function the
//! quantizers call) against an oracle written from each rule's statement; and block FP8's
//! tile scales (DeepSeek and UE8M0) through whole one-value quantizations and through
//! [`BlockFp8::scale_inv`](vcvt::block::BlockFp8::scale_inv). (NVFP4's block
//! scale depends on the tensor scale too: `tests/block_vectors.rs` checks it against
//! ModelOpt's, MLX's and ggml's outputs.)
//!
//! The oracles do not share code or method with the crate: `floor(log2 amax)` and the
//! smallest power of two at least a quotient are found by comparing against powers of two
//! in f64 (exact), walking up as the sweep walks up through the f32 values (each rule's
//! byte is non-decreasing in `amax`); the quotients `amax / max` are the hardware's f32
//! division (IEEE, round to nearest even under Rust's default floating-point
//! environment), rounded to BF16/F16 by the `half` crate for MLX's BF16/F16 sources; the
//! ggml rule takes `floor` of `f32::log2` (the C library's `log2f`), the operation gguf's
//! numpy code performs; `tests/block_vectors.rs` checks gguf's own outputs beside it.
//!
//! How much of the f32 range each run covers, by `VCVT_SWEEP`:
//! * `all`: all 2^31 non-negative bit patterns up to `+Inf`, split over the cores;
//! * unset (plain `cargo test`): every 127th value, plus the ±4096 values around every power
//!   of two and every `max · 2^k` (where the rules change), about 1% of the range;
//! * `sample` (Miri, qemu): every 4099th value plus ±300 around those points.
//!
//! The block FP8 check samples 8 times more thinly (each value is a whole quantization).

use half::{bf16, f16};
use std::sync::atomic::{AtomicU64, Ordering};
use vcvt::block::{Mx, MxElement, MxProfile};
use vcvt::{BF16, F16};

const ELEMENTS: [MxElement; 5] = [
    MxElement::E4M3,
    MxElement::E5M2,
    MxElement::E2M3,
    MxElement::E3M2,
    MxElement::E2M1,
];

fn pow2(k: i32) -> f64 {
    2f64.powi(k)
}

/// The largest magnitude of each element format (the OCP MX spec's table).
fn max_of(e: MxElement) -> f32 {
    match e {
        MxElement::E4M3 => 448.0,
        MxElement::E5M2 => 57344.0,
        MxElement::E2M3 => 7.5,
        MxElement::E3M2 => 28.0,
        _ => 6.0, // E2M1
    }
}

/// `floor(log2 max)` of each element format (its `emax`).
fn emax_of(e: MxElement) -> i32 {
    match e {
        MxElement::E4M3 => 8,
        MxElement::E5M2 => 15,
        MxElement::E2M3 => 2,
        MxElement::E3M2 => 4,
        _ => 2, // E2M1
    }
}

/// How the sweep samples the f32 range.
fn mode() -> (u32, i64) {
    match std::env::var("VCVT_SWEEP").as_deref() {
        Ok("all") => (1, 0),
        Ok("sample") => (4099, 300),
        _ => (127, 4096),
    }
}

/// The ranges around the values where a rule can change, sorted and merged.
fn boundaries(around: i64) -> Vec<(u32, u32)> {
    let mut r = Vec::new();
    let mut near = |c: f64| {
        let b = (c as f32).to_bits() as i64;
        if (c as f32).is_finite() {
            r.push((
                (b - around).max(0) as u32,
                (b + around).min(0x7F80_0000) as u32,
            ));
        }
    };
    for k in -160..=130 {
        near(pow2(k));
        for e in ELEMENTS {
            near(max_of(e) as f64 * pow2(k));
        }
    }
    r.push((0x7F80_0000, 0x7F80_0000));
    r.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for (a, b) in r {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// The sampled values of `x..=hi` in ascending order: the multiples of `step` and every
/// value inside one of the boundary ranges `near`.
struct Sample<'a> {
    x: u64,
    hi: u64,
    step: u64,
    near: &'a [(u32, u32)],
}

impl Iterator for Sample<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        while let Some(&(_, b)) = self.near.first() {
            if (b as u64) < self.x {
                self.near = &self.near[1..];
            } else {
                break;
            }
        }
        if self.x > self.hi {
            return None;
        }
        let x = self.x;
        let inside = self.near.first().is_some_and(|&(a, _)| a as u64 <= x);
        let stride = (x / self.step + 1) * self.step;
        self.x = if inside {
            x + 1
        } else {
            self.near
                .first()
                .map_or(stride, |&(a, _)| stride.min(a as u64))
        };
        Some(x as u32)
    }
}

/// Runs `check` over the sample, split over the cores by value (each thread gets an
/// ascending piece), and fails on any mismatch it counts.
fn sweep(name: &str, check: impl Fn(Sample<'_>) -> u64 + Sync) {
    sweep_thinned(name, 1, check)
}

/// [`sweep`] with the stride of the sample (not of `VCVT_SWEEP=all`) multiplied by `thin`,
/// for the rules that are checked through a whole quantization call.
fn sweep_thinned(name: &str, thin: u32, check: impl Fn(Sample<'_>) -> u64 + Sync) {
    let (step, around) = mode();
    let step = if step == 1 { 1 } else { step * thin };
    let near = boundaries(around);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8) as u64;
    let end = 0x7F80_0000u64;
    let bad = AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (bad, check, near) = (&bad, &check, &near);
            s.spawn(move || {
                let lo = end * t / threads;
                let hi = if t + 1 == threads {
                    end
                } else {
                    end * (t + 1) / threads - 1
                };
                let it = Sample {
                    x: lo,
                    hi,
                    step: step as u64,
                    near,
                };
                bad.fetch_add(check(it), Ordering::Relaxed)
            });
        }
    });
    let bad = bad.into_inner();
    assert_eq!(bad, 0, "{name}: {bad} amax values give a wrong scale byte");
    if step == 1 {
        eprintln!("{name}: every f32 amax checked");
    } else {
        eprintln!("{name}: checked every {step}th amax, and ±{around} around the rule changes");
    }
}

/// Reports a mismatch (the first few in full) and counts it.
fn mismatch(name: &str, x: u32, got: u8, want: u8, n: &mut u64) {
    if *n < 5 {
        eprintln!(
            "{name}: amax {:e} ({x:#010x}): scale byte {got}, expected {want}",
            f32::from_bits(x)
        );
    }
    *n += 1;
}

/// The smallest `k` with `2^k >= v`, walking up from the last answer (`p = 2^k`).
struct CeilLog2 {
    k: i32,
    p: f64,
}

impl CeilLog2 {
    fn new() -> CeilLog2 {
        CeilLog2 {
            k: -160,
            p: pow2(-160),
        }
    }
    fn at(&mut self, v: f64) -> i32 {
        while self.p < v {
            self.k += 1;
            self.p *= 2.0;
        }
        self.k
    }
}

/// The largest `k` with `2^k <= v` (`v > 0`), walking up from the last answer
/// (`next = 2^(k+1)`).
struct FloorLog2 {
    k: i32,
    next: f64,
}

impl FloorLog2 {
    fn new() -> FloorLog2 {
        FloorLog2 {
            k: -160,
            next: pow2(-159),
        }
    }
    fn at(&mut self, v: f64) -> i32 {
        while self.next <= v {
            self.k += 1;
            self.next *= 2.0;
        }
        self.k
    }
}

#[test]
fn ocp_rule_every_f32() {
    for e in ELEMENTS {
        let mx = Mx::new(e).profile(MxProfile::Ocp);
        let name = format!("Ocp {e:?}");
        sweep(&name, |share| {
            let mut n = 0;
            let mut fl = FloorLog2::new();
            for x in share {
                let a = f32::from_bits(x);
                let want = if x == 0x7F80_0000 {
                    0xFF
                } else if x == 0 {
                    0
                } else {
                    (fl.at(a as f64) - emax_of(e) + 127).clamp(0, 254) as u8
                };
                let got = mx.scale_byte(a).unwrap();
                if got != want {
                    mismatch(&name, x, got, want, &mut n);
                }
            }
            n
        });
    }
}

#[test]
fn ceil_rule_every_f32() {
    for e in ELEMENTS {
        let mx = Mx::new(e).profile(MxProfile::Ceil);
        let name = format!("Ceil {e:?}");
        let max = max_of(e);
        sweep(&name, |share| {
            let mut n = 0;
            let mut cl = CeilLog2::new();
            for x in share {
                let a = f32::from_bits(x);
                let want = if x == 0x7F80_0000 {
                    0xFF
                } else {
                    // The smallest scale 2^(b-127) >= amax / max (in f32), b in 0..=254.
                    (cl.at((a / max) as f64) + 127).clamp(0, 254) as u8
                };
                let got = mx.scale_byte(a).unwrap();
                if got != want {
                    mismatch(&name, x, got, want, &mut n);
                }
            }
            n
        });
    }
}

#[test]
fn ggml_rule_every_f32() {
    let mx = Mx::new(MxElement::E2M1).profile(MxProfile::Ggml);
    sweep("Ggml E2M1", |share| {
        let mut n = 0;
        for x in share {
            let a = f32::from_bits(x);
            // gguf: e = floor(log2(amax)) - 2 + 127 as uint8 (amax 0: log2 = -inf, 0x00).
            let want = if x == 0 {
                0
            } else if x == 0x7F80_0000 {
                0xFF
            } else {
                (a.log2().floor() as i32 - 2 + 127).clamp(0, 255) as u8
            };
            let got = mx.scale_byte(a).unwrap();
            if got != want {
                mismatch("Ggml E2M1", x, got, want, &mut n);
            }
        }
        n
    });
}

/// MLX's CPU rule: `q = amax / maxval` in the source type, scale `2^ceil(log2 q)` (a zero
/// `q` gives exponent 0), byte `e + 127` wrapped to 8 bits.
fn mlx_expect(q: f32, cl: &mut CeilLog2) -> u8 {
    let e = if q == 0.0 { 0 } else { cl.at(q as f64) };
    (e + 127) as u8
}

#[test]
fn mlx_rule_every_f32() {
    for e in [MxElement::E2M1, MxElement::E4M3] {
        let mx = Mx::new(e).profile(MxProfile::Mlx);
        let name = format!("Mlx {e:?} f32");
        let max = max_of(e);
        sweep(&name, |share| {
            let mut n = 0;
            let mut cl = CeilLog2::new();
            for x in share {
                let a = f32::from_bits(x);
                let want = if x == 0x7F80_0000 {
                    0xFF
                } else {
                    mlx_expect(a / max, &mut cl)
                };
                let got = mx.scale_byte(a).unwrap();
                if got != want {
                    mismatch(&name, x, got, want, &mut n);
                }
            }
            n
        });
    }
}

/// The rules that depend on the source type, over every BF16 and F16 value.
#[test]
fn mlx_rule_every_bf16_and_f16() {
    for e in [MxElement::E2M1, MxElement::E4M3] {
        let mx = Mx::new(e).profile(MxProfile::Mlx);
        let max = max_of(e);
        let mut cl = CeilLog2::new();
        for c in 0..=0x7F80u16 {
            let a = bf16::from_bits(c).to_f32();
            let want = if c == 0x7F80 {
                0xFF
            } else {
                mlx_expect(bf16::from_f32(a / max).to_f32(), &mut cl)
            };
            assert_eq!(
                mx.scale_byte(BF16::from_bits(c)).unwrap(),
                want,
                "{e:?} bf16 {c:#x}"
            );
        }
        let mut cl = CeilLog2::new();
        for c in 0..=0x7C00u16 {
            let a = f16::from_bits(c).to_f32();
            let want = if c == 0x7C00 {
                0xFF
            } else {
                mlx_expect(f16::from_f32(a / max).to_f32(), &mut cl)
            };
            assert_eq!(
                mx.scale_byte(F16::from_bits(c)).unwrap(),
                want,
                "{e:?} f16 {c:#x}"
            );
        }
        for nan in [f32::NAN, -f32::NAN] {
            assert_eq!(mx.scale_byte(nan).unwrap(), 0xFF);
        }
    }
}

/// NaN, negative and undefined combinations.
#[test]
fn specials_and_errors() {
    for e in ELEMENTS {
        for p in [MxProfile::Ocp, MxProfile::Ceil] {
            let mx = Mx::new(e).profile(p);
            assert_eq!(mx.scale_byte(f32::NAN).unwrap(), 0xFF);
            assert_eq!(mx.scale_byte(f32::NEG_INFINITY).unwrap(), 0xFF);
            for a in [1.0f32, 3.5e-20, 7.0e30] {
                assert_eq!(mx.scale_byte(-a).unwrap(), mx.scale_byte(a).unwrap());
            }
        }
    }
    // gguf: a NaN amax gives log2 NaN, cast to byte 0.
    assert_eq!(
        Mx::new(MxElement::E2M1)
            .profile(MxProfile::Ggml)
            .scale_byte(f32::NAN)
            .unwrap(),
        0
    );
    assert!(
        Mx::new(MxElement::E4M3)
            .profile(MxProfile::Ggml)
            .scale_byte(1.0f32)
            .is_err()
    );
    assert!(
        Mx::new(MxElement::E5M2)
            .profile(MxProfile::Mlx)
            .scale_byte(1.0f32)
            .is_err()
    );
}

/// Block FP8's tile scales (`scale_inv`, f32) for every f32 amax: DeepSeek's
/// `max(amax, 1e-4) / 448` (the hardware's f32 division) and its UE8M0 variant, that
/// quotient rounded up to a power of two (found by f64 comparisons).
#[test]
fn fp8_tile_scales_every_f32() {
    use vcvt::block::{BlockFp8, Fp8Profile, Shape};
    for profile in [Fp8Profile::DeepSeek, Fp8Profile::Ue8m0] {
        let fp8 = BlockFp8::new(1, 1).profile(profile);
        let name = format!("BlockFp8 {profile:?}");
        sweep_thinned(&name, 8, |share| {
            let mut n = 0;
            let mut cl = CeilLog2::new();
            let (mut data, mut scale) = ([0u8; 1], [0u8; 4]);
            for x in share {
                let a = f32::from_bits(x);
                fp8.quantize(&[a], Shape::vector(1), &mut data, &mut scale)
                    .unwrap();
                let got = u32::from_le_bytes(scale);
                let s = a.max(1e-4) / 448.0;
                let want = match profile {
                    Fp8Profile::DeepSeek => s.to_bits(),
                    _ if s.is_infinite() => s.to_bits(),
                    _ => (pow2(cl.at(s as f64)) as f32).to_bits(),
                };
                // The scale rule alone (`BlockFp8::scale_inv`) against the same oracle.
                let alone = fp8.scale_inv(a).to_bits();
                if got != want || alone != want {
                    if n < 5 {
                        eprintln!(
                            "{name}: amax {a:e}: scale_inv {got:#x} (alone {alone:#x}), \
                             expected {want:#x}"
                        );
                    }
                    n += 1;
                }
            }
            n
        });
        // A NaN in the tile: Triton's maximum propagates it.
        let mut scale = [0u8; 4];
        fp8.quantize(&[f32::NAN], Shape::vector(1), &mut [0u8], &mut scale)
            .unwrap();
        assert!(f32::from_le_bytes(scale).is_nan(), "{profile:?}");
        assert!(fp8.scale_inv(f32::NAN).is_nan(), "{profile:?}");
    }
}
