//! The cost of the byte shuffles the `avx512-vbmi` kernels are built from, on this CPU.
//!
//! ```text
//! cargo run --release --example permute_cost
//! ```
//!
//! Each line times a loop of eight independent instructions (no instruction reads another's
//! result, so the figure is the throughput, not the latency) and prints the time-stamp-counter
//! ticks per instruction. The TSC does not tick at the core clock, so compare the lines with
//! each other: on the Emerald Rapids machine where the kernels were tuned, the two-source byte
//! and word permutes (`VPERMT2B`, `VPERMT2W`) took twice as long as the one-source `VPERMB`
//! and the unpacks, which is why `src/arch/x86_64/avx512_vbmi.rs` reorders the codes with one
//! `VPERMB` and places bytes with unpacks. Needs AVX-512 with VBMI; prints why otherwise.
//!
//! On any CPU with AVX2 and F16C it also times the two F16 conversions alone and
//! interleaved: `VCVTPS2PH` (8 f32 → 8 F16), `VCVTPH2PS` (8 F16 → 8 f32), and a pair of one
//! of each. The F16 round trip needs both per vector where the narrowing needs one, so when
//! the pair costs about the sum of the two, the round trip cannot run faster than
//! `VCVTPS2PH ÷ pair` of the narrowing's rate (docs/performance.md).

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::asm;
    use core::arch::x86_64::_rdtsc;

    /// Eight copies of the instruction `$ins` on three zmm operands (Intel syntax, as `asm!`
    /// uses), each writing its own register.
    macro_rules! eight {
        ($ins:literal) => {
            concat!(
                $ins,
                " {a}, {i}, {t}\n",
                $ins,
                " {b}, {i}, {t}\n",
                $ins,
                " {c}, {i}, {t}\n",
                $ins,
                " {d}, {i}, {t}\n",
                $ins,
                " {e}, {i}, {t}\n",
                $ins,
                " {f}, {i}, {t}\n",
                $ins,
                " {g}, {i}, {t}\n",
                $ins,
                " {h}, {i}, {t}\n"
            )
        };
    }

    macro_rules! timed {
        ($name:literal, $ins:literal) => {{
            const ROUNDS: u64 = 20_000_000;
            // SAFETY: the asm touches only the registers it declares (no memory, no stack),
            // and `measure` runs only where the CPU has the instructions (checked in `run`).
            let ticks = unsafe {
                let t0 = _rdtsc();
                for _ in 0..ROUNDS {
                    asm!(
                        eight!($ins),
                        a = out(zmm_reg) _, b = out(zmm_reg) _, c = out(zmm_reg) _,
                        d = out(zmm_reg) _, e = out(zmm_reg) _, f = out(zmm_reg) _,
                        g = out(zmm_reg) _, h = out(zmm_reg) _, i = out(zmm_reg) _,
                        t = out(zmm_reg) _,
                        options(nomem, nostack, preserves_flags)
                    );
                }
                _rdtsc() - t0
            };
            println!("{:<28} {:.3} TSC ticks per instruction", $name, ticks as f64 / (8 * ROUNDS) as f64);
        }};
    }

    /// Ticks per step of a loop of `$ins` (Intel syntax, `$steps` steps per iteration on
    /// independent registers).
    macro_rules! timed_f16 {
        ($name:literal, $per:literal, $steps:literal, $ins:literal) => {{
            const ROUNDS: u64 = 20_000_000;
            // SAFETY: the asm touches only the registers it declares (no memory, no stack),
            // and runs only where the CPU has AVX2 and F16C (checked in `run`).
            let ticks = unsafe {
                let t0 = _rdtsc();
                for _ in 0..ROUNDS {
                    asm!(
                        $ins,
                        a = out(ymm_reg) _, b = out(ymm_reg) _, c = out(ymm_reg) _,
                        d = out(ymm_reg) _, e = out(ymm_reg) _, f = out(ymm_reg) _,
                        g = out(ymm_reg) _, h = out(ymm_reg) _, s = out(ymm_reg) _,
                        options(nomem, nostack, preserves_flags)
                    );
                }
                _rdtsc() - t0
            };
            println!("{:<28} {:.3} TSC ticks per {}", $name, ticks as f64 / ($steps * ROUNDS) as f64, $per);
        }};
    }

    #[target_feature(enable = "avx2,f16c")]
    fn measure_f16() {
        timed_f16!(
            "vcvtps2ph ymm -> xmm",
            "instruction",
            8,
            "vcvtps2ph {a:x}, {s}, 0\nvcvtps2ph {b:x}, {s}, 0\nvcvtps2ph {c:x}, {s}, 0\nvcvtps2ph {d:x}, {s}, 0\nvcvtps2ph {e:x}, {s}, 0\nvcvtps2ph {f:x}, {s}, 0\nvcvtps2ph {g:x}, {s}, 0\nvcvtps2ph {h:x}, {s}, 0"
        );
        timed_f16!(
            "vcvtph2ps xmm -> ymm",
            "instruction",
            8,
            "vcvtph2ps {a}, {s:x}\nvcvtph2ps {b}, {s:x}\nvcvtph2ps {c}, {s:x}\nvcvtph2ps {d}, {s:x}\nvcvtph2ps {e}, {s:x}\nvcvtph2ps {f}, {s:x}\nvcvtph2ps {g}, {s:x}\nvcvtph2ps {h}, {s:x}"
        );
        timed_f16!(
            "vcvtps2ph + vcvtph2ps",
            "pair",
            4,
            "vcvtps2ph {a:x}, {s}, 0\nvcvtph2ps {e}, {s:x}\nvcvtps2ph {b:x}, {s}, 0\nvcvtph2ps {f}, {s:x}\nvcvtps2ph {c:x}, {s}, 0\nvcvtph2ps {g}, {s:x}\nvcvtps2ph {d:x}, {s}, 0\nvcvtph2ps {h}, {s:x}"
        );
    }

    pub fn run() {
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("f16c") {
            for round in 1..=2 {
                println!("F16 conversions, round {round}:");
                // SAFETY: the CPU has AVX2 and F16C (checked just above).
                unsafe { measure_f16() };
            }
        }
        let has = std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vbmi");
        if !has {
            println!("this CPU lacks AVX-512 F/BW/VBMI: nothing to measure");
            return;
        }
        for round in 1..=2 {
            println!("round {round}:");
            // SAFETY: the CPU has AVX-512 F/BW and VBMI (checked just above).
            unsafe { measure() };
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    fn measure() {
        timed!("vpermt2b zmm (two-source)", "vpermt2b");
        timed!("vpermt2w zmm (two-source)", "vpermt2w");
        timed!("vpermt2d zmm (two-source)", "vpermt2d");
        timed!("vpermb zmm (one-source)", "vpermb");
        timed!("vpunpcklbw zmm", "vpunpcklbw");
        timed!("vpaddd zmm", "vpaddd");
    }
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    x86::run();
    #[cfg(not(target_arch = "x86_64"))]
    println!("x86-64 only: nothing to measure on this target");
}
