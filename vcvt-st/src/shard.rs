//! Directory outputs: shards converted one file at a time (each to a temporary name,
//! renamed when complete), so that the work can be split over processes (`--shard I/N`),
//! finished by `finalize` (index, config.json, every other file), and resumed after a kill.
//!
//! A shard file is complete when its size and its header are exactly those the plan gives
//! (the header holds every tensor's name, dtype, shape and offsets, so the size then says
//! that every byte of data was written): a file renamed into place is always complete, and
//! anything else (another run's options, a truncated copy) is converted again.

use std::path::{Path, PathBuf};

use crate::ConvertArgs;
use crate::cleanup;
use crate::outfile;
use crate::paths;
use crate::plan::{self, Checkpoint, INDEX, Out, Plan};
use crate::settings;
use crate::sizes;
use crate::stdio::errln;
use crate::tree;
use crate::write::{self, Ctx, Layout, Temp};

/// The rule of `--shard auto/N`, for `--help` and messages.
pub(crate) const AUTO_RULE: &str = "auto/N takes I from SLURM_ARRAY_TASK_ID as it is (an array numbered 0 to N-1: `sbatch --array=0-7`, so that a task resubmitted alone, `sbatch --array=3`, keeps its index 3), else from JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs); auto-K/N subtracts K from the array task id (`auto-1/8` for `--array=1-8`)";

/// Parses `I/N`, `auto/N` or `auto-K/N` (I from the scheduler's environment).
pub(crate) fn parse_spec(spec: &str) -> Result<(usize, usize), String> {
    let bad =
        |why: &str| format!("--shard {spec}: {why} (expected I/N, e.g. 0/4, auto/N or auto-K/N)");
    let (i, n) = spec.split_once('/').ok_or_else(|| bad("no `/`"))?;
    let n: usize = n.trim().parse().map_err(|_| bad("N is not a number"))?;
    if n == 0 {
        return Err(bad("N must be at least 1"));
    }
    let i = i.trim();
    let i = if let Some(rest) = i.strip_prefix("auto") {
        let offset = match rest.strip_prefix('-') {
            Some(k) => k
                .parse::<usize>()
                .map_err(|_| bad("K of auto-K is not a number"))?,
            None if rest.is_empty() => 0,
            None => return Err(bad("I is not a number")),
        };
        from_env(
            spec,
            offset,
            std::env::var("SLURM_ARRAY_TASK_ID").ok(),
            std::env::var("JOB_COMPLETION_INDEX").ok(),
        )?
    } else {
        i.parse().map_err(|_| bad("I is not a number"))?
    };
    if i >= n {
        return Err(bad(&format!("I = {i} is not below N = {n}; {AUTO_RULE}")));
    }
    Ok((i, n))
}

/// The index of `auto`: Slurm's array task id minus `offset` (never relative to the array's
/// first id, SLURM_ARRAY_TASK_MIN, which a resubmission of some tasks changes), else the
/// Kubernetes Indexed Job's completion index.
fn from_env(
    spec: &str,
    offset: usize,
    slurm: Option<String>,
    k8s: Option<String>,
) -> Result<usize, String> {
    let num = |var: &str, v: &str| {
        v.trim()
            .parse::<usize>()
            .map_err(|_| format!("--shard {spec}: {var}={v:?} is not a number"))
    };
    if let Some(id) = slurm {
        let id = num("SLURM_ARRAY_TASK_ID", &id)?;
        return id.checked_sub(offset).ok_or_else(|| {
            format!("--shard {spec}: SLURM_ARRAY_TASK_ID {id} is below the offset {offset}")
        });
    }
    if let Some(k) = k8s {
        return num("JOB_COMPLETION_INDEX", &k)?
            .checked_sub(offset)
            .ok_or_else(|| {
                format!("--shard {spec}: JOB_COMPLETION_INDEX {k} is below the offset {offset}")
            });
    }
    Err(format!(
        "--shard {spec}: neither SLURM_ARRAY_TASK_ID (Slurm job arrays) nor JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs) is set; give the index as --shard I/N"
    ))
}

/// The shards (positions in name order) that process `i` of `n` converts.
pub(crate) fn assigned(shards: usize, i: usize, n: usize) -> Vec<usize> {
    (0..shards).filter(|k| k % n == i).collect()
}

/// What is at a shard's output path.
enum State {
    Missing,
    Complete,
    /// Present but not what the plan gives: the reason.
    Incomplete(String),
}

fn state(path: &Path, layout: &Layout<'_>) -> Result<State, String> {
    use std::io::Read;
    // A link or a special file at a shard's name is refused, not followed nor replaced.
    outfile::check_replaceable(path)?;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State::Missing),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    if meta.len() != layout.size() {
        return Ok(State::Incomplete(format!(
            "{} bytes, the plan gives {}",
            meta.len(),
            layout.size()
        )));
    }
    let mut head = vec![0u8; layout.head.len()];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(if head == layout.head {
        State::Complete
    } else {
        State::Incomplete(
            "its header differs from the plan's (converted with other options?)".into(),
        )
    })
}

/// Converts the shards of a directory checkpoint: with `fan_out` `(i, n)` those of process
/// `i` of `n`, straight into the output directory; without, all of them in
/// `.OUT.vcvt-st-partial` (kept by a kill, so that a rerun resumes there), then finalizes and
/// renames it to OUT. Shards already complete are skipped, and the run says so. Returns the
/// bytes of tensor data written.
pub(crate) fn convert_dir(
    args: &ConvertArgs,
    ck: &Checkpoint,
    plan: &Plan,
    ctx: &Ctx<'_>,
    fan_out: Option<(usize, usize)>,
) -> Result<u64, String> {
    let out = &args.output;
    let mut lock_file = None;
    let (dir, guard, mine) = match fan_out {
        Some((i, n)) => {
            std::fs::create_dir_all(out)
                .map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
            // What `finalize OUT` reads back (and a run with other settings is refused).
            settings::record(args, i, n)?;
            (out.clone(), None, assigned(ck.shards.len(), i, n))
        }
        None => {
            let partial = partial_dir(out);
            // A link there (into the input, say) is refused, not resumed into.
            outfile::check_real_dir(&partial)?;
            let resumed = match std::fs::create_dir(&partial) {
                Ok(()) => false,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && partial.is_dir() => true,
                Err(e) => return Err(format!("{}: cannot create: {e}", partial.display())),
            };
            // One run at a time per OUT: the lock is released when its holder exits, however
            // it exits, so a killed run's directory can be resumed.
            let lock_path = partial.join(LOCK);
            // Not opened if it is a link or a FIFO (opening one for writing blocks).
            outfile::check_replaceable(&lock_path)?;
            let lock = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)
                .map_err(|e| format!("{}: cannot create: {e}", lock_path.display()))?;
            match lock.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(format!(
                        "{}: another vcvt-st run is converting into it ({} is locked); wait for it, or stop it and run again to resume",
                        out.display(),
                        lock_path.display()
                    ));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(format!("{}: cannot lock: {e}", lock_path.display()));
                }
            }
            // Registered only now that the lock says the directory is this run's (a
            // registered path is removed by a signal). A signal that arrived meanwhile:
            // remove it here, as the handler would have.
            let guard = Temp::new(&partial).map_err(|e| {
                cleanup::remove(&partial);
                format!("{}: {e}", partial.display())
            })?;
            if resumed {
                let stale = remove_temporaries(&partial)?;
                errln!(
                    "resuming in {} (left by an interrupted run{})",
                    partial.display(),
                    if stale > 0 {
                        format!("; removed {stale} of its temporary files")
                    } else {
                        String::new()
                    }
                );
            }
            lock_file = Some((lock, lock_path));
            (partial, Some(guard), (0..ck.shards.len()).collect())
        }
    };
    let mut done = Vec::new();
    let mut redo = Vec::new();
    let mut written = 0;
    for &k in &mine {
        cleanup::check().map_err(|e| e.to_string())?;
        let name = &ck.shards[k].file_name;
        let path = dir.join(name);
        let l = write::layout(ck, plan, k, &path)?;
        match state(&path, &l)? {
            State::Complete => {
                done.push(name.as_str());
                continue;
            }
            State::Incomplete(why) => redo.push(format!("{name} ({why})")),
            State::Missing => {}
        }
        write::write_shard(&l, ctx, &path, fan_out.is_some())?;
        written += l.data;
    }
    let converted = mine.len() - done.len();
    if !done.is_empty() || !redo.is_empty() {
        errln!(
            "{} of {} shards already complete (skipped){}{}",
            done.len(),
            mine.len(),
            if done.is_empty() {
                String::new()
            } else {
                format!(": {}", done.join(", "))
            },
            if redo.is_empty() {
                String::new()
            } else {
                format!("; converted again: {}", redo.join(", "))
            }
        );
    }
    match (fan_out, guard) {
        (Some((i, n)), _) => {
            let names: Vec<&str> = mine
                .iter()
                .map(|&k| ck.shards[k].file_name.as_str())
                .collect();
            errln!(
                "shard {i}/{n}: {converted} of {} shards converted into {} ({}); once every shard is done, run `vcvt-st finalize {}`",
                mine.len(),
                out.display(),
                if names.is_empty() {
                    "none assigned".to_string()
                } else {
                    names.join(", ")
                },
                out.display()
            );
        }
        (None, Some(guard)) => {
            finish(args, ck, plan, &dir)?;
            // The lock file goes before the directory becomes OUT (the lock itself is held
            // until this process exits).
            if let Some((_lock, path)) = &lock_file {
                std::fs::remove_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            guard
                .rename_to(out)
                .map_err(|e| format!("{}: cannot rename into place: {e}", out.display()))?;
        }
        (None, None) => unreachable!("a partial directory without its guard"),
    }
    Ok(written)
}

/// The lock file of a one-process run, in `.OUT.vcvt-st-partial`.
const LOCK: &str = ".vcvt-st-lock";

/// Removes the shard temporaries of killed runs from `dir`; returns how many.
fn remove_temporaries(dir: &Path) -> Result<usize, String> {
    let mut stale = 0;
    for e in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let e = e.map_err(|e| format!("{}: {e}", dir.display()))?;
        if e.file_name().to_string_lossy().contains(".vcvt-st-tmp-") {
            std::fs::remove_file(e.path())
                .map_err(|err| format!("{}: {err}", e.path().display()))?;
            stale += 1;
        }
    }
    Ok(stale)
}

/// Where a directory output is assembled: a hidden sibling, named after it and not after
/// the process, so that a rerun finds it.
fn partial_dir(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    out.with_file_name(format!(".{name}.vcvt-st-partial"))
}

/// Files of the input directory that are not copied ([`Checkpoint::skipped`]).
pub(crate) fn skipped(ck: &Checkpoint, rel: &Path) -> bool {
    ck.skipped(rel)
}

/// Writes the index, config.json and every other file of the input tree into `dir`.
fn finish(args: &ConvertArgs, ck: &Checkpoint, plan: &Plan, dir: &Path) -> Result<(), String> {
    let input = ck.dir.as_ref().expect("a directory checkpoint");
    let files = tree::files(input, &|rel| skipped(ck, rel))?;
    let mut stray: Vec<String> = std::fs::read_dir(input)
        .map_err(|e| format!("{}: {e}", input.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".safetensors") && !ck.shards.iter().any(|s| &s.file_name == n))
        .collect();
    stray.sort();
    if !stray.is_empty() {
        errln!(
            "note: not copied: {} (.safetensors files that {INDEX} does not list)",
            stray.join(", ")
        );
    }
    copy_tree(&files, dir, &|path, text| {
        write::update_config(text, path, args, plan)
    })?;
    if ck.index.is_some() || ck.shards.len() > 1 {
        let mut weight_map = serde_json::Map::new();
        for o in &plan.outs {
            weight_map.insert(o.name.clone(), ck.shards[o.shard].file_name.clone().into());
        }
        let total = sizes::total(plan.outs.iter().map(Out::bytes))?;
        let mut index = ck.index.clone().unwrap_or_else(|| serde_json::json!({}));
        let meta = index
            .as_object_mut()
            .ok_or_else(|| format!("{}: not a JSON object", input.join(INDEX).display()))?
            .entry("metadata")
            .or_insert_with(|| serde_json::json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.insert("total_size".into(), total.into());
        }
        index["weight_map"] = serde_json::Value::Object(weight_map);
        let text = serde_json::to_string_pretty(&index).map_err(|e| e.to_string())?;
        // Last, and atomically: a directory with an index is a finished one.
        outfile::replace(&dir.join(INDEX), (text + "\n").as_bytes())?;
    }
    Ok(())
}

/// Copies every file of `files` from the input tree to `dst` (created directories
/// included), as regular files; `config` rewrites `config.json` at the top level.
fn copy_tree(
    files: &[tree::File],
    dst: &Path,
    config: &dyn Fn(&Path, &str) -> Result<String, String>,
) -> Result<(), String> {
    for f in files {
        // A signal stops the copy between files (see `cleanup`).
        crate::cleanup::check().map_err(|e| e.to_string())?;
        // Every directory on the way a real one, the file replaced by a rename (never
        // opened in place: see `outfile`).
        let parent = crate::outfile::dir_in(dst, f.rel.parent().unwrap_or(Path::new("")))?;
        let to = parent.join(f.rel.file_name().unwrap_or_default());
        if f.rel == Path::new("config.json") {
            let text = std::fs::read_to_string(&f.path)
                .map_err(|e| format!("{}: {e}", f.path.display()))?;
            let new = config(&f.path, &text)?;
            crate::outfile::replace(&to, (new + "\n").as_bytes())?;
        } else {
            // Opening the source follows its links: a regular file results.
            let mut src =
                std::fs::File::open(&f.path).map_err(|e| format!("{}: {e}", f.path.display()))?;
            crate::outfile::replace_with(&to, &mut |w| std::io::copy(&mut src, w).map(drop))
                .map_err(|e| format!("{}: cannot copy: {e}", f.path.display()))?;
        }
    }
    Ok(())
}

/// `vcvt-st finalize OUT` or `finalize IN OUT`: the settings come from the records of the
/// `--shard` runs in OUT (see `settings`).
pub(crate) fn finalize(paths: &[PathBuf]) -> Result<(), String> {
    let (given, out) = match paths {
        [o] => (None, o.as_path()),
        [i, o] => (Some(i.as_path()), o.as_path()),
        _ => return Err("finalize takes OUT, or IN OUT".into()),
    };
    // The output rules as for `convert --shard`: OUT is the existing directory the --shard
    // runs wrote into, never inside the input.
    if let Some(i) = given {
        paths::check_output(i, out, paths::Output::Shared)?;
    }
    if !out.is_dir() {
        return Err(format!(
            "{}: no such directory (run `vcvt-st convert --shard I/N` into it first)",
            out.display()
        ));
    }
    let args = settings::read(given, out)?;
    let args = &args;
    paths::check_output(&args.input, out, paths::Output::Shared)?;
    let opts = plan::OpenOptions {
        ignore_unindexed: args.ignore_unindexed,
    };
    let ck = plan::open_with(&args.input, opts)?;
    if ck.dir.is_none() {
        return Err(format!(
            "{}: is a file; finalize completes a directory converted with --shard",
            args.input.display()
        ));
    }
    let parsed = ck.parse()?;
    let tensors = ck.tensors(&parsed)?;
    let filter = write::filter(args)?;
    let plan = plan::plan(&ck, &tensors, args.to, &filter)?;
    let mut missing = Vec::new();
    for k in 0..ck.shards.len() {
        let name = &ck.shards[k].file_name;
        let path = out.join(name);
        let l = write::layout(&ck, &plan, k, &path)?;
        match state(&path, &l)? {
            State::Complete => {}
            State::Missing => missing.push(format!("{name} (missing)")),
            State::Incomplete(why) => missing.push(format!("{name} ({why})")),
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "{}: {} of {} shards are not complete, nothing written: {}; run `vcvt-st convert --shard I/N` again for them (it converts only what is missing)",
            out.display(),
            missing.len(),
            ck.shards.len(),
            missing.join(", ")
        ));
    }
    // Temporaries of killed runs (no run writes into OUT once every shard is complete).
    let stale = remove_temporaries(out)?;
    finish(args, &ck, &plan, out)?;
    // OUT is complete (its index written last): the records are no longer needed.
    settings::remove(out)?;
    let total = sizes::total(plan.outs.iter().map(Out::bytes))?;
    errln!(
        "finalized {} ({} shards, {} tensors, {:.1} MB of tensor data, --to {}{})",
        out.display(),
        ck.shards.len(),
        plan.outs.len(),
        total as f64 / 1e6,
        args.to.name(),
        if stale > 0 {
            format!("; removed {stale} temporary files of interrupted runs")
        } else {
            String::new()
        }
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{assigned, from_env, parse_spec};

    #[test]
    fn specs() {
        assert_eq!(parse_spec("1/3"), Ok((1, 3)));
        assert!(parse_spec("3/3").unwrap_err().contains("not below"));
        assert!(parse_spec("x/3").is_err());
        assert!(parse_spec("1").is_err());
        assert!(parse_spec("0/0").is_err());
        let s = |v: &str| Some(v.to_string());
        // The array task id as it is, whatever the array's first id was.
        assert_eq!(from_env("auto/4", 0, s("2"), None), Ok(2));
        assert_eq!(from_env("auto-1/4", 1, s("4"), None), Ok(3));
        assert_eq!(from_env("auto/4", 0, s("2"), s("3")), Ok(2));
        assert_eq!(from_env("auto/4", 0, None, s("3")), Ok(3));
        assert!(
            from_env("auto/4", 0, None, None)
                .unwrap_err()
                .contains("JOB_COMPLETION_INDEX")
        );
        assert!(from_env("auto-2/4", 2, s("1"), None).is_err());
        assert!(parse_spec("auto-x/4").is_err());
        assert!(parse_spec("autox/4").is_err());
        assert_eq!(assigned(7, 1, 3), [1, 4]);
        let all: Vec<usize> = (0..3).flat_map(|i| assigned(7, i, 3)).collect();
        assert_eq!(all.len(), 7);
    }
}
