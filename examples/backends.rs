//! Prints the backends this CPU can run, best first, and the one the entry points use.
//!
//! ```text
//! cargo run --example backends
//! available: neon-bf16 neon scalar
//! active: neon-bf16
//! ```
//!
//! `.ci/aarch64.sh` runs it under qemu to check run-time detection on each emulated CPU.

fn main() {
    let names: Vec<&str> = vcvt::Backend::available().map(|b| b.name()).collect();
    println!("available: {}", names.join(" "));
    println!("active: {}", vcvt::Backend::active());
}
