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
        if std::is_x86_feature_detected!("avx512dq") {
            for round in 1..=2 {
                println!("fp8 narrowing steps, round {round}:");
                // SAFETY: the CPU has AVX-512 F/BW/DQ (checked above and just now).
                unsafe { measure_fp8() };
            }
        }
    }

    /// Ticks per instruction of eight copies of `$ins` (a whole Intel-syntax template on
    /// zmm registers `{a}`..`{h}` written, `{s}`, `{t}` read, mask registers `{k1}`, `{k2}`).
    macro_rules! timed_z {
        ($name:literal, $ins:expr) => {{
            const ROUNDS: u64 = 20_000_000;
            // SAFETY: the asm touches only the registers it declares (no memory, no stack),
            // and runs only where the CPU has the instructions (checked by the callers).
            let ticks = unsafe {
                let t0 = _rdtsc();
                for _ in 0..ROUNDS {
                    asm!(
                        $ins,
                        a = out(zmm_reg) _, b = out(zmm_reg) _, c = out(zmm_reg) _,
                        d = out(zmm_reg) _, e = out(zmm_reg) _, f = out(zmm_reg) _,
                        g = out(zmm_reg) _, h = out(zmm_reg) _, out("zmm30") _,
                        out("zmm31") _,
                        options(nomem, nostack, preserves_flags)
                    );
                }
                _rdtsc() - t0
            };
            println!("{:<28} {:.3} TSC ticks per instruction", $name, ticks as f64 / (8 * ROUNDS) as f64);
        }};
    }

    /// The instructions of the AVX-512 f32 → F8E4M3/F8E5M2 narrowing (`avx512.rs`, 35 per 64
    /// values) and of an F16 route to it: on a CPU with two 512-bit pipes, a one-pipe
    /// instruction (`VPSHUFB`) costs twice a two-pipe one (`VPADDD`), and `VCVTPS2PH` of 16
    /// values costs two, so an exact step through F16 (two conversions and a sticky bit per
    /// 16 values) spends as much as the whole f32 rounding it would replace.
    #[target_feature(enable = "avx512f,avx512bw,avx512dq")]
    fn measure_fp8() {
        macro_rules! x8 {
            ($op:literal, $args:literal) => {
                concat!(
                    $op, " {a}", $args, "\n", $op, " {b}", $args, "\n", $op, " {c}", $args, "\n",
                    $op, " {d}", $args, "\n", $op, " {e}", $args, "\n", $op, " {f}", $args, "\n",
                    $op, " {g}", $args, "\n", $op, " {h}", $args, "\n"
                )
            };
        }
        timed_z!("vrangeps zmm", x8!("vrangeps", ", zmm30, zmm31, 10"));
        timed_z!("vmaxps zmm", x8!("vmaxps", ", zmm30, zmm31"));
        timed_z!("vfmadd231ps zmm", x8!("vfmadd231ps", ", zmm30, zmm31"));
        timed_z!("vpmaddwd zmm", x8!("vpmaddwd", ", zmm30, zmm31"));
        timed_z!("vpshufb zmm", x8!("vpshufb", ", zmm30, zmm31"));
        timed_z!("vpacksswb zmm", x8!("vpacksswb", ", zmm30, zmm31"));
        timed_z!(
            "vcvtps2ph zmm -> ymm",
            "vcvtps2ph {a:y}, zmm30, 3\nvcvtps2ph {b:y}, zmm30, 3\nvcvtps2ph {c:y}, zmm30, 3\nvcvtps2ph {d:y}, zmm30, 3\nvcvtps2ph {e:y}, zmm30, 3\nvcvtps2ph {f:y}, zmm30, 3\nvcvtps2ph {g:y}, zmm30, 3\nvcvtps2ph {h:y}, zmm30, 3"
        );
        if std::is_x86_feature_detected!("avx512bf16") {
            timed_z!(
                "vcvtne2ps2bf16 zmm",
                x8!("vcvtne2ps2bf16", ", zmm30, zmm31")
            );
            timed_z!(
                "vcvtneps2bf16 zmm -> ymm",
                "vcvtneps2bf16 {a:y}, zmm30\nvcvtneps2bf16 {b:y}, zmm30\nvcvtneps2bf16 {c:y}, zmm30\nvcvtneps2bf16 {d:y}, zmm30\nvcvtneps2bf16 {e:y}, zmm30\nvcvtneps2bf16 {f:y}, zmm30\nvcvtneps2bf16 {g:y}, zmm30\nvcvtneps2bf16 {h:y}, zmm30"
            );
        }
        timed_z!(
            "vpmovzxwd ymm -> zmm",
            "vpmovzxwd {a}, ymm30\nvpmovzxwd {b}, ymm30\nvpmovzxwd {c}, ymm30\nvpmovzxwd {d}, ymm30\nvpmovzxwd {e}, ymm30\nvpmovzxwd {f}, ymm30\nvpmovzxwd {g}, ymm30\nvpmovzxwd {h}, ymm30"
        );
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
