//! The rules an output path must follow, in one function ([`check_output`]), checked
//! before anything is read or written, whether or not the output exists yet:
//!
//! 1. the output is not the input, not inside the input directory, and does not contain
//!    the input (paths compared after resolving symbolic links and `..`);
//! 2. its parent directory exists;
//! 3. for a directory input, the output does not exist yet, except for a shared output
//!    ([`Output::Shared`]: `convert --shard I/N` and `finalize`), which may be an existing
//!    directory (the --shard runs write into it side by side) but nothing else;
//! 4. for a file input, an existing output is a regular file (replaced only once the new
//!    one is complete), never a directory, a symbolic link, a FIFO, a socket or a device.
//!
//! An error names the output, the rule that refused it and what was found.

use std::fs::FileType;
use std::path::{Component, Path, PathBuf};

/// The rules, as `--help` and the errors state them.
pub(crate) const RULES: &str = "\
Output rules (checked before anything is read or written):
  1. OUT is not IN, not inside IN (a directory), and does not contain IN
     (symbolic links and `..` resolved; whether or not OUT exists yet)
  2. OUT's parent directory exists
  3. for a directory IN, OUT does not exist yet; with --shard I/N (and for finalize)
     OUT may be an existing directory, which the --shard runs share, but nothing else
  4. for a file IN, an existing OUT is a regular file (replaced once the new one is
     complete); never a directory, symbolic link, FIFO, socket or device";

/// What kind of file `ft` is, for messages ("a directory", "a FIFO", ...).
pub(crate) fn kind(ft: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
    }
    if ft.is_symlink() {
        "a symbolic link"
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

fn refuse(output: &Path, rule: u8, what: &str) -> String {
    let name = match rule {
        1 => "OUT is not IN, not inside IN, and does not contain IN",
        2 => "OUT's parent directory exists",
        3 => {
            "for a directory IN, OUT does not exist yet (with --shard and finalize: or is a directory)"
        }
        _ => "for a file IN, an existing OUT is a regular file",
    };
    format!(
        "{}: refused by output rule {rule} ({name}): {what}",
        output.display()
    )
}

/// How the output of a directory input is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Output {
    /// Created by this run (`convert` without `--shard`): must not exist yet.
    New,
    /// Shared by several runs (`convert --shard I/N`, `finalize`): may be an existing
    /// directory.
    Shared,
}

/// Checks every rule of the module docs for converting `input` into `output`.
pub(crate) fn check_output(input: &Path, output: &Path, mode: Output) -> Result<(), String> {
    let input_abs =
        std::fs::canonicalize(input).map_err(|e| format!("{}: {e}", input.display()))?;
    let input_is_dir = std::fs::metadata(&input_abs)
        .map_err(|e| format!("{}: {e}", input.display()))?
        .is_dir();
    // A file input's output is a file: a trailing `/` names a directory (and would fail only
    // at the final rename, after the whole conversion).
    if !input_is_dir && output.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(refuse(
            output,
            2,
            "the input is a file, so OUT is a file, but the path ends in `/` (a directory)",
        ));
    }
    // Where the output's directory entry will be: its parent resolved, then its name.
    let name = match output.components().next_back() {
        Some(Component::Normal(n)) => n.to_owned(),
        _ => {
            return Err(refuse(
                output,
                2,
                "the path names no file or directory to create (it ends in `..`, `.` or `/`)",
            ));
        }
    };
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent_abs = std::fs::canonicalize(&parent).map_err(|e| {
        refuse(
            output,
            2,
            &format!("cannot resolve {}: {e}", parent.display()),
        )
    })?;
    if !parent_abs.is_dir() {
        return Err(refuse(
            output,
            2,
            &format!("{} is not a directory", parent.display()),
        ));
    }
    let out_abs = parent_abs.join(&name);
    let existing = std::fs::symlink_metadata(&out_abs).ok();
    // Where an existing symbolic link points (rule 1 compares both).
    let target = existing
        .as_ref()
        .filter(|m| m.file_type().is_symlink())
        .and_then(|_| std::fs::canonicalize(&out_abs).ok());
    for o in std::iter::once(&out_abs).chain(target.as_ref()) {
        if *o == input_abs {
            return Err(refuse(
                output,
                1,
                &format!("it is the input {}", input.display()),
            ));
        }
        if input_is_dir && o.starts_with(&input_abs) {
            return Err(refuse(
                output,
                1,
                &format!("it is inside the input directory {}", input.display()),
            ));
        }
        if input_abs.starts_with(o) {
            return Err(refuse(
                output,
                1,
                &format!("it contains the input {}", input.display()),
            ));
        }
    }
    if let Some(m) = existing {
        if input_is_dir && mode == Output::Shared {
            // A directory, or a symbolic link to one (rule 1 checked where it points).
            let is_dir = std::fs::metadata(&out_abs).is_ok_and(|t| t.is_dir());
            if !is_dir {
                return Err(refuse(
                    output,
                    3,
                    &format!("it exists and is {}, not a directory", kind(&m.file_type())),
                ));
            }
            return Ok(());
        }
        if input_is_dir {
            return Err(refuse(
                output,
                3,
                &format!("it exists ({})", kind(&m.file_type())),
            ));
        }
        if !m.file_type().is_file() {
            return Err(refuse(
                output,
                4,
                &format!("it is {}", kind(&m.file_type())),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        let d = std::env::temp_dir().join(format!("vcvt-st-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let ck = d.join("ck");
        std::fs::create_dir_all(ck.join("sub")).unwrap();
        let f = ck.join("a.safetensors");
        std::fs::write(&f, b"x").unwrap();
        let err = |i: &Path, o: &Path| check_output(i, o, Output::New).unwrap_err();
        assert!(err(&ck, &ck.join("x.safetensors")).contains("rule 1"));
        assert!(err(&ck, &ck.join("sub/new")).contains("inside the input"));
        assert!(err(&ck, &ck.join("sub/../new")).contains("rule 1"));
        assert!(err(&ck, &ck).contains("is the input"));
        assert!(err(&f, &f).contains("is the input"));
        assert!(err(&f, &d).contains("contains the input"));
        assert!(err(&ck, &d.join("nope/out")).contains("rule 2"));
        assert!(err(&ck, &d.join("..")).contains("rule 2"));
        std::fs::create_dir(d.join("exists")).unwrap();
        assert!(err(&ck, &d.join("exists")).contains("rule 3"));
        assert!(err(&f, &d.join("exists")).contains("rule 4"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&f, d.join("link")).unwrap();
            assert!(err(&f, &d.join("link")).contains("is the input"));
            std::os::unix::fs::symlink(d.join("exists"), d.join("dlink")).unwrap();
            assert!(err(&f, &d.join("dlink")).contains("symbolic link"));
            std::os::unix::fs::symlink(&ck, d.join("cklink")).unwrap();
            assert!(err(&d.join("cklink"), &d.join("cklink/out")).contains("inside the input"));
        }
        assert!(check_output(&ck, &d.join("new"), Output::New).is_ok());
        assert!(check_output(&f, &d.join("new.safetensors"), Output::New).is_ok());
        std::fs::write(d.join("old.safetensors"), b"y").unwrap();
        assert!(check_output(&f, &d.join("old.safetensors"), Output::New).is_ok());
        // A file input's output may sit beside it.
        assert!(check_output(&f, &ck.join("b.safetensors"), Output::New).is_ok());
        // A shared output (--shard, finalize) may be an existing directory, never one
        // inside the input, nor a file.
        let shared = |i: &Path, o: &Path| check_output(i, o, Output::Shared);
        assert!(shared(&ck, &d.join("exists")).is_ok());
        assert!(shared(&ck, &d.join("new")).is_ok());
        assert!(
            shared(&ck, &ck.join("out"))
                .unwrap_err()
                .contains("inside the input")
        );
        assert!(
            shared(&ck, &ck.join("sub"))
                .unwrap_err()
                .contains("inside the input")
        );
        assert!(shared(&ck, &d).unwrap_err().contains("contains the input"));
        assert!(shared(&ck, &f).unwrap_err().contains("rule 1"));
        std::fs::write(d.join("afile"), b"z").unwrap();
        assert!(
            shared(&ck, &d.join("afile"))
                .unwrap_err()
                .contains("rule 3")
        );
        #[cfg(unix)]
        {
            assert!(shared(&ck, &d.join("dlink")).is_ok());
            std::os::unix::fs::symlink(d.join("afile"), d.join("flink")).unwrap();
            assert!(
                shared(&ck, &d.join("flink"))
                    .unwrap_err()
                    .contains("rule 3")
            );
        }
        // A file input's rules do not change.
        assert!(
            shared(&f, &d.join("exists"))
                .unwrap_err()
                .contains("rule 4")
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
