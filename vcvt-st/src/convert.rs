//! `vcvt-st convert`: plans the conversion, checks the output path, and writes a file
//! ([`write`]) or the shards of a directory ([`shard`]).

use crate::ConvertArgs;
use crate::estimate;
use crate::plan;
use crate::shard;
use crate::write::{context, filter, layout, print_plan, write_shard};

/// `vcvt-st convert`.
pub(crate) fn convert(args: &ConvertArgs) -> Result<(), String> {
    let ck = plan::open(&args.input)?;
    let parsed = ck.parse()?;
    let tensors = ck.tensors(&parsed)?;
    let filter = filter(args)?;
    let mut plan = plan::plan(&ck, &tensors, args.to, &filter)?;
    let fan_out = match &args.shard {
        Some(spec) if ck.dir.is_none() => {
            return Err(format!(
                "--shard {spec}: {} is a file; --shard splits the shards of a directory",
                args.input.display()
            ));
        }
        Some(spec) => Some(shard::parse_spec(spec)?),
        None => None,
    };

    // The output must not be the input, nor (for a directory) exist already.
    let input_abs =
        std::fs::canonicalize(&args.input).map_err(|e| format!("{}: {e}", args.input.display()))?;
    if let Ok(out_abs) = std::fs::canonicalize(&args.output) {
        if out_abs == input_abs || (ck.dir.is_some() && out_abs.starts_with(&input_abs)) {
            return Err(format!(
                "{}: the output is the input",
                args.output.display()
            ));
        }
        if ck.dir.is_some() && fan_out.is_none() {
            return Err(format!(
                "{}: already exists (the output directory must be new)",
                args.output.display()
            ));
        }
        if ck.dir.is_some() && !out_abs.is_dir() {
            return Err(format!(
                "{}: is not a directory (the input is a directory)",
                args.output.display()
            ));
        }
        if ck.dir.is_none() && out_abs.is_dir() {
            return Err(format!(
                "{}: is a directory (the input is a file)",
                args.output.display()
            ));
        }
    }
    let total: u64 = plan.outs.iter().map(|o| o.bytes() as u64).sum();
    if args.dry_run {
        let views = parsed.iter().flat_map(|st| st.iter()).collect();
        let ctx = context(&ck, &parsed, args, 0);
        estimate::annotate(&mut plan, &views, &ctx.profiles());
        print_plan(&plan);
        if let Some((i, n)) = fan_out {
            let mine = shard::assigned(ck.shards.len(), i, n);
            let names: Vec<&str> = mine
                .iter()
                .map(|&k| ck.shards[k].file_name.as_str())
                .collect();
            println!("--shard {i}/{n} would convert {}", names.join(", "));
        }
        println!(
            "dry run: {} tensors, {} converted, {} bytes of tensor data would be written to {}",
            plan.outs.len(),
            plan.converted,
            total,
            args.output.display()
        );
        return Ok(());
    }

    // The progress bar counts what this process writes.
    let to_write = match fan_out {
        Some((i, n)) => {
            let mine = shard::assigned(ck.shards.len(), i, n);
            plan.outs
                .iter()
                .filter(|o| mine.contains(&o.shard))
                .map(|o| o.bytes() as u64)
                .sum()
        }
        None => total,
    };
    let ctx = context(&ck, &parsed, args, to_write);
    let start = std::time::Instant::now();
    let written = if ck.dir.is_none() {
        let l = layout(&ck, &plan, 0, &args.output)?;
        write_shard(&l, &ctx, &args.output, false)?;
        total
    } else {
        shard::convert_dir(args, &ck, &plan, &ctx, fan_out)?
    };
    ctx.bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    if fan_out.is_none() {
        eprintln!(
            "wrote {} ({} tensors, {} converted, {:.1} MB in {:.2} s, {:.0} MB/s)",
            args.output.display(),
            plan.outs.len(),
            plan.converted,
            written as f64 / 1e6,
            secs,
            written as f64 / 1e6 / secs.max(1e-9)
        );
    }
    Ok(())
}
