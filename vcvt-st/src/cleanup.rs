//! Partial output is never left behind: every temporary file and directory `convert`
//! creates is registered here until it is renamed into place or removed, and SIGINT,
//! SIGTERM and SIGHUP remove whatever is registered before the process exits.
//!
//! Errors and panics remove their temporaries through `Drop`; a signal does not unwind,
//! so the handler (which runs on a thread of its own) removes them. Only SIGKILL and a
//! power cut leave a `.NAME.vcvt-st-tmp-PID` file or directory beside the output.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Temporaries that exist now.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Exit status after a signal (as a shell reports SIGINT: 128 + 2).
pub(crate) const INTERRUPTED: i32 = 130;

/// Installs the signal handler (once, before anything is created).
pub(crate) fn install() -> Result<(), String> {
    ctrlc::set_handler(|| {
        // Holding the lock until the process exits keeps the converting thread from
        // registering (so creating) another temporary meanwhile.
        let pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        for p in pending.iter() {
            remove(p);
        }
        eprintln!("vcvt-st: interrupted: no output written (temporary files removed)");
        std::process::exit(INTERRUPTED);
    })
    .map_err(|e| format!("cannot install the signal handler: {e}"))
}

/// Records `path` (a file or directory about to be created).
pub(crate) fn register(path: &Path) {
    PENDING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(path.to_path_buf());
}

/// Forgets `path` (renamed into place or removed).
pub(crate) fn unregister(path: &Path) {
    PENDING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| p != path);
}

/// Removes a temporary file or directory, ignoring what is already gone.
fn remove(p: &Path) {
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
