//! What a `convert --shard I/N` run records in its output directory, so that `finalize OUT`
//! needs no conversion arguments: each run writes `.vcvt-st-settings-I-of-N.json` (the input
//! directory and every option that decides the output), refuses to add shards to an OUT whose
//! other runs recorded different settings, and `finalize` reads the records, checks that they
//! agree, converts nothing, and removes them once OUT is complete.

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use serde_json::{Value, json};

use crate::ConvertArgs;
use crate::escape;
use crate::outfile;

const PREFIX: &str = ".vcvt-st-settings-";

fn name_of<T: ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

/// The settings of `args` that decide the output (not `--threads`, `-q`, `--dry-run`).
fn of(args: &ConvertArgs, input: &Path) -> Value {
    json!({
        "input": input.to_string_lossy(),
        "to": name_of(&args.to),
        "include": args.include,
        "exclude": args.exclude,
        "case_sensitive_globs": args.case_sensitive_globs,
        "unquantized_to": name_of(&args.unquantized_to),
        "quant_config": name_of(&args.quant_config),
        "fp8_block": args.fp8_block,
        "fp8_scales": name_of(&args.fp8_scales),
        "layout": args.layout.as_ref().map(name_of),
        "fp8_profile": name_of(&args.fp8_profile),
        "mx_profile": name_of(&args.mx_profile),
        "ignore_unindexed": args.ignore_unindexed,
    })
}

/// The options of a record as command-line text, for messages.
fn describe(v: &Value) -> String {
    escape::text(&v.to_string())
}

/// Every record in `out`: (file name, settings).
fn records(out: &Path) -> Result<Vec<(String, Value)>, String> {
    let mut found = Vec::new();
    let rd = std::fs::read_dir(out).map_err(|e| format!("{}: {e}", escape::path(out)))?;
    for e in rd {
        let e = e.map_err(|e| format!("{}: {e}", escape::path(out)))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with(PREFIX) || !name.ends_with(".json") {
            continue;
        }
        let path = e.path();
        // Read only a regular file (a FIFO would block).
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|e| format!("{}: {e}", escape::path(&path)))?;
        if !meta.file_type().is_file() {
            return Err(format!(
                "{}: is {}, not a settings record",
                escape::path(&path),
                crate::paths::kind(&meta.file_type())
            ));
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", escape::path(&path)))?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a settings record: {e}", escape::path(&path)))?;
        found.push((name, v));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// Records the settings of run `i` of `n` in `out` (an existing directory), after checking
/// that every other run's record there agrees.
pub(crate) fn record(args: &ConvertArgs, i: usize, n: usize) -> Result<(), String> {
    let input = std::fs::canonicalize(&args.input)
        .map_err(|e| format!("{}: {e}", escape::path(&args.input)))?;
    let mine = of(args, &input);
    for (name, v) in records(&args.output)? {
        if v != mine {
            return Err(format!(
                "{}: holds shards of another conversion ({name}: {}; this run: {}); convert into another directory, or remove it",
                escape::path(&args.output),
                describe(&v),
                describe(&mine)
            ));
        }
    }
    let path = args.output.join(format!("{PREFIX}{i}-of-{n}.json"));
    let text = serde_json::to_string_pretty(&mine).map_err(|e| e.to_string())? + "\n";
    outfile::replace(&path, text.as_bytes())
}

/// The settings the `--shard` runs recorded in `out`, as the arguments of a conversion of
/// `input` (the recorded input when `None`; a given one must be the recorded one).
pub(crate) fn read(input: Option<&Path>, out: &Path) -> Result<ConvertArgs, String> {
    let recs = records(out)?;
    let Some((first_name, first)) = recs.first() else {
        return Err(format!(
            "{}: no record of a `vcvt-st convert --shard I/N` run (no {PREFIX}*.json); run those first",
            escape::path(out)
        ));
    };
    for (name, v) in &recs[1..] {
        if v != first {
            return Err(format!(
                "{}: its --shard runs used different settings ({first_name}: {}; {name}: {}); convert again with one set of options",
                escape::path(out),
                describe(first),
                describe(v)
            ));
        }
    }
    let bad = |what: &str| format!("{}/{first_name}: {what}", escape::path(out));
    let s = |k: &str| -> Result<String, String> {
        first
            .get(k)
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .ok_or_else(|| bad(&format!("no `{k}`")))
    };
    let b = |k: &str| -> Result<bool, String> {
        first
            .get(k)
            .and_then(|v| v.as_bool())
            .ok_or_else(|| bad(&format!("no `{k}`")))
    };
    let list = |k: &str| -> Result<Vec<String>, String> {
        first
            .get(k)
            .and_then(|v| v.as_array())
            .and_then(|a| a.iter().map(|x| x.as_str().map(str::to_string)).collect())
            .ok_or_else(|| bad(&format!("no `{k}` list")))
    };
    fn parse<T: ValueEnum>(v: String, k: &str, bad: &dyn Fn(&str) -> String) -> Result<T, String> {
        T::from_str(&v, false).map_err(|_| {
            bad(&format!(
                "`{k}` {v:?} is not a value of --{}",
                k.replace('_', "-")
            ))
        })
    }
    let recorded = PathBuf::from(s("input")?);
    let input = match input {
        None => recorded,
        Some(given) => {
            let canon = std::fs::canonicalize(given)
                .map_err(|e| format!("{}: {e}", escape::path(given)))?;
            if canon != recorded {
                return Err(format!(
                    "{}: the --shard runs converted {}, not {}",
                    escape::path(out),
                    escape::path(&recorded),
                    escape::path(given)
                ));
            }
            given.to_path_buf()
        }
    };
    let fp8_block = first
        .get("fp8_block")
        .and_then(|v| v.as_u64())
        .and_then(|v| usize::try_from(v).ok())
        .filter(|b| (1..=1 << 20).contains(b))
        .ok_or_else(|| bad("no `fp8_block` of 1 to 1048576"))?;
    Ok(ConvertArgs {
        input,
        output: out.to_path_buf(),
        to: parse(s("to")?, "to", &bad)?,
        include: list("include")?,
        exclude: list("exclude")?,
        case_sensitive_globs: b("case_sensitive_globs")?,
        unquantized_to: parse(s("unquantized_to")?, "unquantized_to", &bad)?,
        quant_config: parse(s("quant_config")?, "quant_config", &bad)?,
        fp8_block,
        fp8_scales: parse(s("fp8_scales")?, "fp8_scales", &bad)?,
        // (Absent from the records of runs that had no --layout option: its default.)
        layout: match first.get("layout") {
            None | Some(Value::Null) => None,
            Some(_) => Some(parse(s("layout")?, "layout", &bad)?),
        },
        fp8_profile: parse(s("fp8_profile")?, "fp8_profile", &bad)?,
        shard: None,
        mx_profile: parse(s("mx_profile")?, "mx_profile", &bad)?,
        dry_run: false,
        threads: None,
        quiet: true,
        ignore_unindexed: b("ignore_unindexed")?,
    })
}

/// Removes the records once OUT is complete.
pub(crate) fn remove(out: &Path) -> Result<(), String> {
    for (name, _) in records(out)? {
        let p = out.join(&name);
        std::fs::remove_file(&p).map_err(|e| format!("{}: {e}", escape::path(&p)))?;
    }
    Ok(())
}
