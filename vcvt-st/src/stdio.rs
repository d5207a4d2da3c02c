//! Writing to stdout and stderr without ever panicking (`println!` and `eprintln!` panic
//! when the write fails, e.g. on a pipe whose reader is gone).
//!
//! - stdout (`inspect`, `--dry-run`): when the reader is gone (`vcvt-st inspect big |
//!   head -1`), the process ends at once, quietly, with status [`BROKEN_PIPE`] (128 +
//!   SIGPIPE, what a shell reports for a program killed by SIGPIPE); nothing has been
//!   written to disk by then. Another write error is reported on stderr, status 1.
//! - stderr (errors, the summary line): a failed write is ignored; the exit status still
//!   tells what happened.
//!
//! Every line is written through [`crate::escape::line`]: tensor names and paths come from
//! the checkpoint, and none of their characters may move the cursor, erase or reorder text.

use std::io::Write;

/// Exit status when stdout's reader is gone.
pub(crate) const BROKEN_PIPE: i32 = 128 + 13;

/// Writes `args` and a newline to stdout (see the module docs).
pub(crate) fn out_line(args: std::fmt::Arguments<'_>) {
    let text = crate::escape::line(&args.to_string());
    let mut out = std::io::stdout().lock();
    let r = out
        .write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"));
    if let Err(e) = r {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(BROKEN_PIPE);
        }
        err_line(format_args!(
            "vcvt-st: error: cannot write to standard output: {e}"
        ));
        std::process::exit(1);
    }
}

/// Writes generated text (a completion script, a manual page) to stdout as it is, with the
/// error handling of [`out_line`].
pub(crate) fn out_bytes(b: &[u8]) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(b).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(BROKEN_PIPE);
        }
        err_line(format_args!(
            "vcvt-st: error: cannot write to standard output: {e}"
        ));
        std::process::exit(1);
    }
}

/// Writes `args` and a newline to stderr, ignoring a failure.
pub(crate) fn err_line(args: std::fmt::Arguments<'_>) {
    let text = crate::escape::line(&args.to_string());
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(text.as_bytes())
        .and_then(|()| err.write_all(b"\n"));
}

/// `println!` that never panics ([`out_line`]).
macro_rules! outln {
    ($($t:tt)*) => { $crate::stdio::out_line(format_args!($($t)*)) };
}

/// `eprintln!` that never panics ([`err_line`]).
macro_rules! errln {
    ($($t:tt)*) => { $crate::stdio::err_line(format_args!($($t)*)) };
}

pub(crate) use {errln, outln};
