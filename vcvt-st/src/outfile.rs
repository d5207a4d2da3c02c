//! Writing a file of an output tree without ever writing through what is already there:
//! a file is written to a new temporary sibling (created exclusively, so nothing existing
//! is opened) and renamed over its name; an existing entry at that name must be a regular
//! file (a symbolic link, a FIFO, a socket, a device or a directory is refused, never
//! followed, opened or replaced), and every directory on the way must be a real directory,
//! not a link (a link to a directory of the input would put the files there).

use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::cleanup;
use crate::paths::kind;

/// An error unless `path` is missing or a regular file (not a link to one).
pub(crate) fn check_replaceable(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(m) => Err(format!(
            "{}: is {} in the output; vcvt-st replaces only regular files there (it never writes through a link nor into a special file): remove it and run again",
            path.display(),
            kind(&m.file_type())
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// An error unless `path` is a directory itself (not a link to one), or missing.
pub(crate) fn check_real_dir(path: &Path) -> Result<bool, String> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_dir() => Ok(true),
        Ok(m) => Err(format!(
            "{}: is {}, not a directory; vcvt-st writes into no directory through a link: remove it and run again",
            path.display(),
            kind(&m.file_type())
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// `root/rel`, creating each missing directory of `rel` and refusing any that exists as
/// something other than a directory (a link to one included). `root` itself is trusted
/// (checked by the output rules).
pub(crate) fn dir_in(root: &Path, rel: &Path) -> Result<PathBuf, String> {
    let mut p = root.to_path_buf();
    for c in rel.components() {
        match c {
            Component::Normal(n) => p.push(n),
            _ => return Err(format!("{}: not a plain relative path", rel.display())),
        }
        if !check_real_dir(&p)? {
            std::fs::create_dir(&p).map_err(|e| format!("{}: cannot create: {e}", p.display()))?;
        }
    }
    Ok(p)
}

/// A temporary sibling of `path` (same directory, so that renaming it is atomic).
pub(crate) fn temp_sibling(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    path.with_file_name(format!(".{name}.vcvt-st-tmp-{}", std::process::id()))
}

/// Writes `path` with what `fill` writes into a new temporary sibling, then renames it into
/// place (see the module docs); a temporary is removed on any error and by a signal.
pub(crate) fn replace_with(
    path: &Path,
    fill: &mut dyn FnMut(&mut File) -> std::io::Result<()>,
) -> Result<(), String> {
    check_replaceable(path)?;
    let tmp = temp_sibling(path);
    let cannot = |e: &dyn std::fmt::Display| format!("{}: cannot write: {e}", path.display());
    cleanup::register(&tmp).map_err(|e| cannot(&e))?;
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
    {
        Ok(f) => f,
        Err(e) => {
            // Not ours: left alone.
            cleanup::unregister(&tmp);
            return Err(cannot(&e));
        }
    };
    let done = fill(&mut file)
        .and_then(|()| file.flush())
        .map_err(|e| cannot(&e))
        .and_then(|()| {
            drop(file);
            // Checked again just before the rename, which replaces the entry itself.
            check_replaceable(path)
        })
        .and_then(|()| {
            cleanup::rename(&tmp, path)
                .map_err(|e| format!("{}: cannot rename into place: {e}", path.display()))
        });
    if done.is_err() {
        cleanup::remove(&tmp);
        cleanup::unregister(&tmp);
    }
    done
}

/// Writes `bytes` to `path` by [`replace_with`].
pub(crate) fn replace(path: &Path, bytes: &[u8]) -> Result<(), String> {
    replace_with(path, &mut |f| f.write_all(bytes))
}
