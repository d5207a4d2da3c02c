//! Partial output is never left behind: every temporary file and directory `convert`
//! creates is registered here until it is renamed into place or removed, and SIGINT,
//! SIGTERM and SIGHUP stop the work and remove whatever is registered before the process
//! exits with status 130.
//!
//! The signal handler itself only records the signal (`ctrlc` writes to a pipe from the
//! handler, which is async-signal-safe, and calls [`install`]'s closure on a thread of its
//! own); that closure sets [`STOP`]. The converting thread checks it before every piece of
//! output it writes ([`check`]: 8 MiB of a copy, 256 KiB of a cast, a step of a
//! quantization), before creating or renaming a temporary, and in the test pause, then
//! unwinds with an error: `Drop` removes its temporaries and `main` calls
//! [`exit_interrupted`]. Should that thread be stuck (a write
//! blocked on a hung file system), the handler's thread removes the registered temporaries
//! itself after [`GRACE`] and exits. Nothing here panics or fails on a closed or broken
//! stderr: messages are written once and their errors ignored.
//!
//! Errors and panics remove their temporaries through `Drop` too. Only SIGKILL and a power
//! cut leave a `.NAME.vcvt-st-tmp-PID` file or directory beside the output.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Temporaries that exist now.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Set when a signal asked the run to stop.
static STOP: AtomicBool = AtomicBool::new(false);

/// Exit status after a signal (as a shell reports SIGINT: 128 + 2).
pub(crate) const INTERRUPTED: i32 = 130;

/// How long the handler's thread lets the converting thread clean up before doing it.
pub(crate) const GRACE: Duration = Duration::from_secs(2);

const MESSAGE: &[u8] = b"vcvt-st: interrupted: no output written (temporary files removed)\n";

/// Installs the signal handler (once, before anything is created).
pub(crate) fn install() -> Result<(), String> {
    ctrlc::set_handler(|| {
        STOP.store(true, Ordering::SeqCst);
        std::thread::sleep(GRACE);
        // The converting thread did not exit in time: remove what is registered. Holding
        // the lock until the process exits keeps that thread from registering (so
        // creating) or renaming another temporary meanwhile.
        let pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        for p in pending.iter() {
            remove(p);
        }
        let _ = std::io::stderr().write_all(MESSAGE);
        std::process::exit(INTERRUPTED);
    })
    .map_err(|e| format!("cannot install the signal handler: {e}"))
}

/// Whether a signal asked the run to stop.
pub(crate) fn interrupted() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// An error once a signal asked the run to stop.
pub(crate) fn check() -> std::io::Result<()> {
    if interrupted() {
        Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "interrupted by a signal",
        ))
    } else {
        Ok(())
    }
}

/// Removes what is still registered, says so and exits with [`INTERRUPTED`] (the
/// converting thread, once its error has unwound).
pub(crate) fn exit_interrupted() -> ! {
    let pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    for p in pending.iter() {
        remove(p);
    }
    let _ = std::io::stderr().write_all(MESSAGE);
    std::process::exit(INTERRUPTED);
}

/// Records `path` (a file or directory about to be created); an error if a signal
/// arrived (then nothing may be created).
pub(crate) fn register(path: &Path) -> std::io::Result<()> {
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    check()?;
    pending.push(path.to_path_buf());
    Ok(())
}

/// Forgets `path` (renamed into place or removed).
pub(crate) fn unregister(path: &Path) {
    PENDING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| p != path);
}

/// Renames the registered temporary `from` to `to` and forgets it, unless a signal
/// arrived: then the output is not put in place.
pub(crate) fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    check()?;
    std::fs::rename(from, to)?;
    pending.retain(|p| p != from);
    Ok(())
}

/// Removes a temporary file or directory, ignoring what is already gone.
pub(crate) fn remove(p: &Path) {
    if p.is_dir() {
        // A file being created inside can make one attempt fail with "not empty".
        for _ in 0..3 {
            if std::fs::remove_dir_all(p).is_ok() || !p.exists() {
                break;
            }
        }
    } else {
        let _ = std::fs::remove_file(p);
    }
}
