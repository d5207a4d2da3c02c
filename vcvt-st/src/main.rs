//! `vcvt-st`: converts safetensors checkpoints (a file, or a sharded directory with
//! `model.safetensors.index.json`) on the CPU with vcvt's kernels (quantization on every
//! core; casts are bound by writing, not converting).
//!
//! ```text
//! vcvt-st convert IN OUT --to bf16|f16|f32|f8e4m3|mxfp4 [--include GLOB]... [--exclude GLOB]... [--dry-run]
//!                 [--ignore-unindexed]
//! vcvt-st inspect IN [--to TARGET] [--ignore-unindexed]
//! ```
//!
//! See `vcvt-st --help` and the README's "vcvt-st" section.

mod cleanup;
mod glob;
mod paths;
mod plan;
mod sizes;
#[cfg(test)]
mod st_fuzz;
mod stdio;
mod write;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::stdio::errln;

/// Convert safetensors checkpoints on the CPU: BF16/F16/F32 casts, DeepSeek block FP8 and
/// gpt-oss MXFP4 dequantization, FP8 (128x128 block scales) and MXFP4 quantization.
#[derive(Parser, Debug)]
#[command(name = "vcvt-st", version, after_help = EXIT_STATUS)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The exit statuses, for `--help`.
const EXIT_STATUS: &str = "\
Exit status: 0 success; 1 an error (one line on stderr, nothing written); 2 bad arguments;
130 interrupted by SIGINT, SIGTERM or SIGHUP (temporaries removed, nothing written);
141 stdout's reader went away (e.g. `vcvt-st inspect IN | head -1`), quietly.";

#[derive(Subcommand, Debug)]
enum Command {
    /// Convert a checkpoint file or directory into OUT (a new file or directory).
    #[command(after_help = format!("{}\n\n{EXIT_STATUS}", paths::RULES))]
    Convert(ConvertArgs),
    /// List tensors, dtypes, shapes, sizes, the companions recognised and what `convert
    /// --to TARGET` would do.
    Inspect {
        /// A .safetensors file or a checkpoint directory.
        input: PathBuf,
        /// The target whose plan to show.
        #[arg(long, value_enum, default_value = "bf16")]
        to: Target,
        /// Accept .safetensors files of the directory that its index does not list.
        #[arg(long)]
        ignore_unindexed: bool,
    },
}

#[derive(clap::Args, Debug)]
pub(crate) struct ConvertArgs {
    /// A .safetensors file or a checkpoint directory (with model.safetensors.index.json
    /// for sharded checkpoints).
    input: PathBuf,
    /// The output file (for a file input) or directory (for a directory input); a
    /// directory must not exist yet. Never the input nor inside it (see the output rules
    /// below).
    output: PathBuf,
    /// What to convert to.
    #[arg(long, value_enum)]
    to: Target,
    /// Convert only tensors whose name matches one of these globs (`*` any run of
    /// characters, `?` one character); replaces the default filter.
    #[arg(long, value_name = "GLOB")]
    include: Vec<String>,
    /// Keep tensors whose name matches one of these globs as they are.
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Block size of FP8 quantization (tile of N x N values, one f32 scale each), and
    /// the tile that block-FP8 dequantization expects (1 to 1048576).
    #[arg(long, default_value_t = 128, value_parser = sizes::parse_fp8_block)]
    fp8_block: usize,
    /// MXFP4 scale rule: `ceil` (smallest power of two that does not clip the block
    /// maximum; gpt-oss/HF/vLLM) or `ocp` (the OCP MX v1.0 floor rule).
    #[arg(long, value_enum, default_value = "ceil")]
    mx_profile: MxProfileArg,
    /// Print the plan and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Worker threads (default: all cores; 1 to 1024).
    #[arg(long, value_parser = sizes::parse_threads)]
    threads: Option<usize>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// Accept .safetensors files of the input directory that its index does not list (they
    /// are neither converted nor copied); without it they are an error.
    #[arg(long)]
    ignore_unindexed: bool,
}

/// What `convert` produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Target {
    /// bfloat16 (dequantizes block FP8 and MXFP4).
    Bf16,
    /// IEEE float16 (dequantizes block FP8 and MXFP4).
    F16,
    /// float32 (dequantizes block FP8 and MXFP4).
    F32,
    /// E4M3 with one f32 `weight_scale_inv` per 128x128 tile (DeepSeek layout).
    F8e4m3,
    /// MXFP4: `*_blocks` (uint8 [..., K/32, 16]) + `*_scales` (uint8 E8M0 [..., K/32]),
    /// the gpt-oss layout.
    Mxfp4,
}

impl Target {
    pub(crate) fn is_quantized(self) -> bool {
        matches!(self, Target::F8e4m3 | Target::Mxfp4)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum MxProfileArg {
    Ceil,
    Ocp,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Convert(args) => {
            if let Some(n) = args.threads
                && let Err(e) = rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build_global()
            {
                errln!("vcvt-st: error: --threads {n}: {e}");
                return ExitCode::FAILURE;
            }
            cleanup::install().and_then(|()| write::convert(&args))
        }
        Command::Inspect {
            input,
            to,
            ignore_unindexed,
        } => plan::inspect(&input, to, plan::OpenOptions { ignore_unindexed }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A signal stopped the run: its error is only the consequence.
        Err(_) if cleanup::interrupted() => cleanup::exit_interrupted(),
        Err(e) => {
            errln!("vcvt-st: error: {e}");
            ExitCode::FAILURE
        }
    }
}
