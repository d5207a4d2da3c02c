//! `vcvt-st convert`: plans the conversion, checks the output path, and writes a file
//! ([`write`]) or the shards of a directory ([`shard`]).

use crate::ConvertArgs;
use crate::estimate;
use crate::paths;
use crate::plan::{self, Out};
use crate::shard;
use crate::sizes;
use crate::stdio::{errln, outln};
use crate::write::{context, filter, layout, print_plan, write_shard};

/// `vcvt-st convert`.
pub(crate) fn convert(args: &ConvertArgs) -> Result<(), String> {
    // The output rules first: nothing is read before the output is known to be allowed. A
    // --shard run writes into an OUT that the other runs share, so OUT may exist then.
    let mode = if args.shard.is_some() {
        paths::Output::Shared
    } else {
        paths::Output::New
    };
    paths::check_output(&args.input, &args.output, mode)?;
    let opts = plan::OpenOptions {
        ignore_unindexed: args.ignore_unindexed,
    };
    let ck = plan::open_with(&args.input, opts)?;
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
    let total = sizes::total(plan.outs.iter().map(Out::bytes))?;
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
            outln!("--shard {i}/{n} would convert {}", names.join(", "));
        }
        outln!(
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
            sizes::total(
                plan.outs
                    .iter()
                    .filter(|o| mine.contains(&o.shard))
                    .map(Out::bytes),
            )?
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
        errln!(
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
