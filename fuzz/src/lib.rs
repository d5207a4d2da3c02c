//! The `vcvt` fuzz crate: the differential harnesses (`harness.rs` for the element-type
//! conversions, `block_harness.rs` for `vcvt::block`; both also included by
//! `tests/fuzz_replay.rs`) and the AddressSanitizer hooks the fuzz targets pass them.
#![cfg_attr(fuzzing, feature(cfg_sanitize))]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod block_harness;
pub mod harness;
pub mod text_harness;

// vcvt-st's planning modules and its header → plan harness, included by path (vcvt-st is
// a binary crate). They name each other as `crate::…`, hence at the root here; `Target`
// mirrors vcvt-st's `--to` values (main.rs), which plan.rs matches on.
#[allow(dead_code)]
#[path = "../../vcvt-st/src/conventions.rs"]
mod conventions;
#[allow(dead_code)]
#[path = "../../vcvt-st/src/escape.rs"]
mod escape;
#[allow(dead_code)]
#[path = "../../vcvt-st/src/glob.rs"]
mod glob;
#[allow(dead_code)]
#[path = "../../vcvt-st/src/paths.rs"]
mod paths;
#[allow(dead_code)]
#[path = "../../vcvt-st/src/plan.rs"]
mod plan;
#[allow(dead_code)]
#[path = "../../vcvt-st/src/sizes.rs"]
mod sizes;
#[allow(dead_code)]
#[path = "../../vcvt-st/src/st_fuzz.rs"]
pub mod st_fuzz;
#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../../vcvt-st/src/stdio.rs"]
mod stdio;
#[allow(dead_code)]
#[path = "../../vcvt-st/src/tensor.rs"]
mod tensor;
#[allow(dead_code)]
#[path = "../../vcvt-st/src/tree.rs"]
mod tree;

/// vcvt-st's `--to` values (a mirror of `vcvt-st/src/main.rs`'s `Target`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// bfloat16.
    Bf16,
    /// IEEE float16.
    F16,
    /// float32.
    F32,
    /// Block FP8 (E4M3 + f32 tile scales).
    F8e4m3,
    /// MXFP4 blocks + scales.
    Mxfp4,
    /// MXFP8 (ModelOpt layout: E4M3 + E8M0 scales).
    Mxfp8,
    /// NVFP4 (ModelOpt layout: packed E2M1 + E4M3 scales + f32 tensor scale).
    Nvfp4,
}

impl Target {
    fn is_quantized(self) -> bool {
        matches!(
            self,
            Target::F8e4m3 | Target::Mxfp4 | Target::Mxfp8 | Target::Nvfp4
        )
    }

    /// The name `--to` takes.
    fn name(self) -> &'static str {
        match self {
            Target::Bf16 => "bf16",
            Target::F16 => "f16",
            Target::F32 => "f32",
            Target::F8e4m3 => "f8e4m3",
            Target::Mxfp4 => "mxfp4",
            Target::Mxfp8 => "mxfp8",
            Target::Nvfp4 => "nvfp4",
        }
    }
}

/// Runs one input of the `st_plan` target (vcvt-st's header → plan path); panics on the
/// first failure.
pub fn fuzz_st_plan(data: &[u8]) {
    if let Err(msg) = st_fuzz::run(data) {
        panic!("vcvt fuzz failure: {msg}");
    }
}

#[cfg(fuzzing)]
mod asan;

/// The hooks the fuzz targets use: ASan's manual poisoning when the build has ASan (the
/// cargo-fuzz default), nothing otherwise.
pub fn hooks() -> harness::Hooks {
    #[cfg(fuzzing)]
    if let Some(h) = asan::HOOKS {
        return h;
    }
    harness::NO_HOOKS
}

/// Runs one fuzz input; panics (which libFuzzer reports as a crash) on the first failure.
pub fn fuzz(target: harness::Target, data: &[u8]) {
    if let Err(msg) = harness::try_run_input(target, &harness::Input::parse(data), hooks()) {
        panic!("{msg}");
    }
}

/// Runs one input of the `block` target; panics on the first failure.
pub fn fuzz_block(data: &[u8]) {
    let input = block_harness::Input::parse(data);
    if let Err(msg) = block_harness::try_run_input(&input, hooks()) {
        panic!("{msg}");
    }
}

/// Runs one input of the `text` target; panics on the first failure.
pub fn fuzz_text(data: &[u8]) {
    if let Err(msg) = text_harness::run(data) {
        panic!("{msg}");
    }
}
