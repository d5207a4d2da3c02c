//! Tells the library whether this compiler has stable AVX512_FP16 intrinsics.
//!
//! The crate's MSRV is 1.89; the AVX512_FP16 arithmetic and conversion intrinsics the
//! `avx512-fp16` backend uses became stable in Rust 1.94. With an older compiler the
//! backend is compiled without its kernels and is never available
//! (`src/arch/x86_64/avx512_fp16.rs`); everything else is the same.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(vcvt_avx512fp16)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=RUSTC");
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let minor = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| minor_version(&v));
    // An unreadable version leaves the backend out, which is always correct.
    if minor.is_some_and(|m| m >= 94) {
        println!("cargo::rustc-cfg=vcvt_avx512fp16");
    }
}

/// The minor version of `rustc 1.MINOR.PATCH...`.
fn minor_version(version: &str) -> Option<u32> {
    let rest = version.strip_prefix("rustc 1.")?;
    rest.split('.').next()?.parse().ok()
}
