//! Gives the shared library an ABI name (SONAME / install name), so that programs linked
//! against it record `libvcvt.so.<abi>` and a later incompatible version can sit beside it.
//! The ABI version is `MAJOR.MINOR` while the major version is 0 (a minor bump may break),
//! `MAJOR` after.

fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_default();
    let abi = if major == "0" {
        format!("{major}.{minor}")
    } else {
        major
    };
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    match os.as_str() {
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly" => {
            println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libvcvt.so.{abi}");
        }
        "macos" | "ios" => {
            println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libvcvt.{abi}.dylib");
        }
        _ => {}
    }
    println!("cargo:rerun-if-changed=build.rs");
}
