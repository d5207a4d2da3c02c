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

    pub fn run() {
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
