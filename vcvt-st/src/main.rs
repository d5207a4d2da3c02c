//! `vcvt-st`: converts safetensors checkpoints (a file, or a sharded directory with
//! `model.safetensors.index.json`) on the CPU with vcvt's kernels (quantization on every
//! core; casts are bound by writing, not converting).
//!
//! ```text
//! vcvt-st convert IN OUT --to bf16|f16|f32|f8e4m3|mxfp4|mxfp8|nvfp4 [--include GLOB]... [--exclude GLOB]...
//!         [--fp8-scales block|channel|tensor] [--layout deepseek|modelopt|compressed-tensors]
//!         [--unquantized-to keep|bf16|f16|f32] [--quant-config auto|always|never] [--shard I/N] [--dry-run]
//!         [--ignore-unindexed]
//! vcvt-st finalize [IN] OUT
//! vcvt-st verify IN OUT [--ignore-unindexed]
//! vcvt-st inspect IN [--to TARGET] [--ignore-unindexed]
//! ```
//!
//! See `vcvt-st --help` and `vcvt-st/README.md`.

mod cleanup;
mod conventions;
mod convert;
mod escape;
mod estimate;
mod glob;
mod outfile;
mod paths;
mod plan;
mod settings;
mod shard;
mod sizes;
#[cfg(test)]
mod st_fuzz;
mod stdio;
mod tensor;
mod tree;
mod verify;
mod write;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::stdio::errln;

/// Convert safetensors checkpoints on the CPU: BF16/F16/F32 casts; dequantization of DeepSeek
/// block FP8, gpt-oss MXFP4, compressed-tensors/FBGEMM/ModelOpt scaled FP8, compressed-tensors
/// and ModelOpt NVFP4 and ModelOpt MXFP8 (fused FP8 experts too); FP8 (block, channel or tensor
/// scales), MXFP4, MXFP8 and NVFP4 (ModelOpt or compressed-tensors) quantization; whole
/// checkpoint directories (subdirectories and symbolic links included),
/// split over several processes with `--shard I/N` and `finalize`, resumed after a kill.
#[derive(Parser, Debug)]
#[command(name = "vcvt-st", version, after_help = EXIT_STATUS)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The exit statuses, for `--help`.
const EXIT_STATUS: &str = "\
Exit status: 0 success; 1 an error (one line on stderr, nothing written; a --shard run keeps the
shards it completed) or a violation found by verify; 2 bad arguments;
130 interrupted by SIGINT, SIGTERM or SIGHUP (temporaries removed, nothing written);
141 stdout's reader went away (e.g. `vcvt-st inspect IN | head -1`), quietly.";

#[derive(Subcommand, Debug)]
enum Command {
    /// Convert a checkpoint file or directory into OUT (a new file or directory).
    ///
    /// A directory is reproduced whole: every file of every subdirectory (symbolic links
    /// followed and written as regular files) except the converted shards and the index.
    /// It is assembled in `.OUT.vcvt-st-partial` and renamed to OUT at the end; a rerun after
    /// a kill or a crash keeps the shards that are complete there and converts the rest.
    #[command(after_help = format!("{}\n\n{EXIT_STATUS}", paths::RULES))]
    Convert(ConvertArgs),
    /// After `convert --shard I/N` runs for every I: check that every shard of OUT is
    /// complete, then write the index, config.json and the other files. The settings are
    /// those the --shard runs recorded in OUT (runs with different settings are an error);
    /// lists the missing shards and writes nothing if any is missing.
    #[command(after_help = format!("{}\n\n{EXIT_STATUS}", paths::RULES))]
    Finalize {
        /// OUT (the directory of the --shard runs), or IN OUT (IN is then checked against
        /// the input they recorded).
        #[arg(required = true, num_args = 1..=2, value_name = "[IN] OUT")]
        paths: Vec<PathBuf>,
    },
    /// Re-read IN and its conversion OUT and check every tensor: present, right dtype and
    /// shape, casts and dequantizations exact, quantized tensors within the format's bound
    /// (each value the nearest element of its block's grid); and a directory's other files
    /// copied. Prints the error of every tensor (relative RMS, max abs) and a summary; exits
    /// with status 1 on any violation.
    Verify {
        /// The original checkpoint (file or directory).
        input: PathBuf,
        /// Its conversion by `vcvt-st convert`.
        output: PathBuf,
        /// Tile size of block FP8 tensors (as given to `convert --fp8-block`; 1 to 1048576).
        #[arg(long, default_value_t = 128, value_parser = sizes::parse_fp8_block)]
        fp8_block: usize,
        /// Print only violations and the summary.
        #[arg(long, short)]
        quiet: bool,
        /// Accept .safetensors files of IN that its index does not list (as given to
        /// `convert --ignore-unindexed`).
        #[arg(long)]
        ignore_unindexed: bool,
    },
    /// List tensors, dtypes, shapes, sizes, the companions recognised and what `convert
    /// --to TARGET` would do, with an estimate of each lossy conversion's error (relative
    /// RMS and max abs on a sample of at most 64 Ki values of the tensor).
    Inspect {
        /// A .safetensors file or a checkpoint directory.
        input: PathBuf,
        /// The target whose plan to show (bf16 when not given; the output says which).
        #[arg(long, value_enum)]
        to: Option<Target>,
        /// Accept .safetensors files of the directory that its index does not list.
        #[arg(long)]
        ignore_unindexed: bool,
    },
    /// Print the completion script of a shell (e.g. `vcvt-st completions bash >
    /// /etc/bash_completion.d/vcvt-st`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff, from the same definitions as --help): `vcvt-st manpage >
    /// vcvt-st.1; man ./vcvt-st.1`.
    Manpage,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ConvertArgs {
    /// A .safetensors file or a checkpoint directory (with model.safetensors.index.json
    /// for sharded checkpoints).
    input: PathBuf,
    /// The output file (for a file input) or directory (for a directory input); a
    /// directory must not exist yet, except with --shard (then it may be an existing
    /// directory, shared by the other --shard runs). Never the input nor inside it (see the
    /// output rules below).
    output: PathBuf,
    /// What to convert to.
    #[arg(long, value_enum)]
    to: Target,
    /// Convert only tensors whose name matches one of these globs (`*` any run of
    /// characters, `?` one character; case-insensitive unless --case-sensitive-globs);
    /// replaces the default filter (when quantizing: `*norm*`, `*bias`, `*embed*`,
    /// `lm_head*`, `*.router.*`, `*.gate.weight` are kept).
    #[arg(long, value_name = "GLOB")]
    include: Vec<String>,
    /// Keep tensors whose name matches one of these globs as they are (no cast either).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Match --include, --exclude and the default filter case-sensitively (default: ASCII
    /// case-insensitively, so that `*norm*` matches BERT's `LayerNorm`).
    #[arg(long)]
    case_sensitive_globs: bool,
    /// When quantizing: what float tensors that are not quantized become (kept by the
    /// filter, or of a shape the format does not take). `keep` leaves them as they are;
    /// --exclude'd tensors are always kept.
    #[arg(long, value_enum, default_value = "keep", value_name = "DTYPE")]
    unquantized_to: Unquantized,
    /// When to write `quantization_config` into config.json. `auto`: only where a loader
    /// has a convention for it: `--to f8e4m3` (transformers' fine-grained FP8 and vLLM's
    /// `fp8` with `weight_block_size`, any model; compressed-tensors' for the
    /// compressed-tensors layouts), `--to nvfp4 --layout compressed-tensors`
    /// (compressed-tensors' weight-only NVFP4A16 scheme), `--to mxfp4` for gpt-oss
    /// (`model_type` `gpt_oss`); not for ModelOpt's `nvfp4` (its NVFP4 loaders also need
    /// activation scales, `input_scale`, which a weight-only conversion cannot compute) nor
    /// `mxfp8`. `always`: for those too (ModelOpt's `quant_method: modelopt` with
    /// `quant_algo` and `ignore`; gpt-oss's `mxfp4` for any model). `never`: leave it out.
    /// A cast to bf16/f16/f32 that dequantizes everything removes it in every mode.
    #[arg(long, value_enum, default_value = "auto")]
    quant_config: QuantConfig,
    /// Block size of FP8 quantization (tile of N x N values, one f32 scale each), and
    /// the tile that block-FP8 dequantization expects (1 to 1048576).
    #[arg(long, default_value_t = 128, value_parser = sizes::parse_fp8_block)]
    fp8_block: usize,
    /// Scales of FP8 quantization: `block` (one F32 scale per --fp8-block tile:
    /// `W_scale_inv`, DeepSeek's layout, or `W_scale` with --layout compressed-tensors),
    /// `channel` (one F32 `W_scale` per row, `[N, 1]`: the per-channel layout of
    /// compressed-tensors and FBGEMM) or `tensor` (one F32 `W_scale` `[1]` per weight:
    /// compressed-tensors' per-tensor layout); `channel` and `tensor` write a
    /// compressed-tensors `quantization_config`.
    #[arg(long, value_enum, default_value = "block")]
    fp8_scales: Fp8Scales,
    /// The checkpoint convention of the quantized tensors' names and of
    /// `quantization_config`: `deepseek` (`--to f8e4m3 --fp8-scales block`: `W_scale_inv`,
    /// `quant_method: fp8`), `modelopt` (`--to nvfp4` and `--to mxfp8`: `W`, `W_scale`,
    /// `W_scale_2`) or `compressed-tensors` (`--to nvfp4`: `W_packed`, `W_scale`,
    /// `W_global_scale` with compressed-tensors' NVFP4 scale rules, the global scale shared
    /// by fused q/k/v and gate/up projections; `--to f8e4m3`: `W_scale` with any
    /// --fp8-scales). Default: the target's own layout (the first one named for it here;
    /// gpt-oss's for mxfp4); `--fp8-scales channel` and `tensor` are compressed-tensors
    /// layouts only.
    #[arg(long, value_enum)]
    layout: Option<Layout>,
    /// Scale rule of FP8 quantization: `deepseek` (`amax / 448`, DeepSeek-V3/R1) or
    /// `ue8m0` (that, rounded up to a power of two: DeepSeek-V3.1's `scale_fmt: ue8m0`).
    #[arg(long, value_enum, default_value = "deepseek")]
    fp8_profile: Fp8ProfileArg,
    /// Convert only part of a directory's shards, for fan-out over several processes or
    /// hosts: `I/N` converts the input shards whose position (in name order) modulo N is
    /// I, straight into OUT (created if missing; each shard file written to a temporary
    /// name and renamed when complete), and skips shards already complete there. `auto/N`
    /// takes I from SLURM_ARRAY_TASK_ID as it is (an array numbered 0 to N-1, so that a
    /// task resubmitted alone keeps its index), else JOB_COMPLETION_INDEX (Kubernetes
    /// Indexed Jobs); `auto-K/N` subtracts K (`auto-1/8` for `--array=1-8`). Then run
    /// `vcvt-st finalize`.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// MXFP4/MXFP8 scale rule: `ceil` (smallest power of two that does not clip the block
    /// maximum; gpt-oss/HF/vLLM) or `ocp` (the OCP MX v1.0 floor rule).
    #[arg(long, value_enum, default_value = "ceil")]
    mx_profile: MxProfileArg,
    /// Print the plan, with an estimate of each lossy conversion's error (on a sample of
    /// at most 64 Ki values of the tensor), and write nothing.
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
    /// bfloat16 (dequantizes every convention vcvt-st reads).
    Bf16,
    /// IEEE float16 (dequantizes every convention vcvt-st reads).
    F16,
    /// float32 (dequantizes every convention vcvt-st reads).
    F32,
    /// E4M3 with one f32 `weight_scale_inv` per --fp8-block tile (DeepSeek layout), or one
    /// f32 `weight_scale` per tile, row or tensor (--layout compressed-tensors,
    /// --fp8-scales channel or tensor: compressed-tensors, FBGEMM).
    F8e4m3,
    /// MXFP4: `*_blocks` (uint8 [..., K/32, 16]) + `*_scales` (uint8 E8M0 [..., K/32]),
    /// the gpt-oss layout.
    Mxfp4,
    /// MXFP8 (E4M3 elements, one E8M0 scale per 32): `W` (F8_E4M3, same shape) +
    /// `W_scale` (uint8 [..., K/32]), NVIDIA ModelOpt's MXFP8 export layout.
    Mxfp8,
    /// NVFP4 of 2-D weights with K a multiple of 16, NVIDIA ModelOpt's checkpoint layout:
    /// `W` (uint8 [N, K/2], element 2j in the low nibble), `W_scale` (F8_E4M3 [N, K/16]),
    /// `W_scale_2` (F32 scalar, amax / 2688); with --layout compressed-tensors,
    /// `W_packed`, `W_scale` and `W_global_scale` (F32 [1], 2688 / amax).
    Nvfp4,
}

impl Target {
    pub(crate) fn is_quantized(self) -> bool {
        matches!(
            self,
            Target::F8e4m3 | Target::Mxfp4 | Target::Mxfp8 | Target::Nvfp4
        )
    }

    /// The name `--to` takes.
    pub(crate) fn name(self) -> &'static str {
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

/// `--mx-profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum MxProfileArg {
    Ceil,
    Ocp,
}

/// `--fp8-scales`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Fp8Scales {
    /// One scale per --fp8-block tile (`W_scale_inv`, or `W_scale` with --layout
    /// compressed-tensors).
    Block,
    /// One scale per row (`W_scale` `[N, 1]`).
    Channel,
    /// One scale per tensor (`W_scale` `[1]`).
    Tensor,
}

/// `--layout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Layout {
    /// DeepSeek's block FP8 (`--to f8e4m3`).
    Deepseek,
    /// NVIDIA ModelOpt (`--to nvfp4`, `--to mxfp8`).
    Modelopt,
    /// compressed-tensors (`--to nvfp4`, `--to f8e4m3`).
    CompressedTensors,
}

/// `--fp8-profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Fp8ProfileArg {
    Deepseek,
    Ue8m0,
}

/// `--unquantized-to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Unquantized {
    /// As they are.
    Keep,
    /// Cast to bfloat16.
    Bf16,
    /// Cast to float16.
    F16,
    /// Cast to float32.
    F32,
}

/// `--quant-config`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum QuantConfig {
    /// Where a loader has a convention for the target and the model.
    Auto,
    /// For every quantized target.
    Always,
    /// Never.
    Never,
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
            cleanup::install().and_then(|()| convert::convert(&args))
        }
        Command::Finalize { paths } => cleanup::install().and_then(|()| shard::finalize(&paths)),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, "vcvt-st", &mut out);
            stdio::out_bytes(&out);
            Ok(())
        }
        Command::Manpage => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut out)
                .map_err(|e| e.to_string())
                .map(|()| stdio::out_bytes(&out))
        }
        Command::Verify {
            input,
            output,
            fp8_block,
            quiet,
            ignore_unindexed,
        } => match verify::verify(
            &input,
            &output,
            fp8_block,
            quiet,
            plan::OpenOptions { ignore_unindexed },
        ) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::FAILURE,
            Err(e) => Err(e),
        },
        Command::Inspect {
            input,
            to,
            ignore_unindexed,
        } => plan::inspect(
            &input,
            to.unwrap_or(Target::Bf16),
            to.is_none(),
            plan::OpenOptions { ignore_unindexed },
            &estimate::annotate_default,
        ),
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
