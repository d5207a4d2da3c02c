//! The files of a checkpoint directory as users have them: subdirectories (a
//! sentence-transformers model's `1_Pooling/`, tokenizer folders) and symbolic links (a
//! Hugging Face cache snapshot is made of links into `../../blobs/`), walked recursively.
//! Links are followed, and their targets are copied as regular files, so that the output
//! never points back into the input; a dangling link, a link loop or a special file (FIFO,
//! socket, device) is an error that names it.

use std::path::{Path, PathBuf};

/// A regular file of the input tree (possibly reached through symbolic links).
pub(crate) struct File {
    /// Its path relative to the root, as the output tree gets it.
    pub rel: PathBuf,
    /// Its path under the root (open it to read the target of its links).
    pub path: PathBuf,
}

/// Every regular file under `root`, in name order, except those `skip` names (by relative
/// path).
pub(crate) fn files(root: &Path, skip: &dyn Fn(&Path) -> bool) -> Result<Vec<File>, String> {
    let mut out = Vec::new();
    let canon = std::fs::canonicalize(root).map_err(|e| format!("{}: {e}", root.display()))?;
    walk(root, Path::new(""), &mut vec![canon], skip, &mut out)?;
    Ok(out)
}

fn walk(
    dir: &Path,
    rel: &Path,
    ancestors: &mut Vec<PathBuf>,
    skip: &dyn Fn(&Path) -> bool,
    out: &mut Vec<File>,
) -> Result<(), String> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    entries.sort();
    for name in entries {
        let path = dir.join(&name);
        let r = rel.join(&name);
        if skip(&r) {
            continue;
        }
        let lmeta =
            std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let link = lmeta.file_type().is_symlink();
        // Follows every link of a chain.
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if link => {
                let target = std::fs::read_link(&path)
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "?".into());
                return Err(if e.kind() == std::io::ErrorKind::NotFound {
                    format!(
                        "{}: dangling symbolic link (its target {target} does not exist)",
                        path.display()
                    )
                } else {
                    // ELOOP: a chain of links that comes back to itself.
                    format!(
                        "{}: symbolic link to {target} cannot be followed: {e}",
                        path.display()
                    )
                });
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        if meta.is_dir() {
            let canon =
                std::fs::canonicalize(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            if ancestors.contains(&canon) {
                return Err(format!(
                    "{}: symbolic link loop (it leads back to {}, a directory that contains it)",
                    path.display(),
                    canon.display()
                ));
            }
            ancestors.push(canon);
            walk(&path, &r, ancestors, skip, out)?;
            ancestors.pop();
        } else if meta.is_file() {
            out.push(File { rel: r, path });
        } else {
            return Err(format!(
                "{}: not a regular file or directory (FIFO, socket or device); remove it or copy the checkpoint without it",
                path.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::files;

    #[cfg(unix)]
    #[test]
    fn links_loops_and_dangling() {
        use std::os::unix::fs::symlink;
        let d = std::env::temp_dir().join(format!("vcvt-st-tree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let root = d.join("snap");
        std::fs::create_dir_all(root.join("1_Pooling")).unwrap();
        std::fs::create_dir_all(d.join("blobs")).unwrap();
        std::fs::write(d.join("blobs/abc"), b"{}").unwrap();
        symlink("../blobs/abc", root.join("config.json")).unwrap();
        std::fs::write(root.join("1_Pooling/config.json"), b"{}").unwrap();
        let got: Vec<String> = files(&root, &|_| false)
            .unwrap()
            .iter()
            .map(|f| f.rel.display().to_string())
            .collect();
        assert_eq!(got, ["1_Pooling/config.json", "config.json"]);
        // A loop through a directory link.
        symlink("..", root.join("1_Pooling/up")).unwrap();
        let e = files(&root, &|_| false).err().unwrap();
        assert!(e.contains("1_Pooling/up") && e.contains("loop"), "{e}");
        std::fs::remove_file(root.join("1_Pooling/up")).unwrap();
        // A dangling link.
        symlink("../blobs/gone", root.join("tokenizer.json")).unwrap();
        let e = files(&root, &|_| false).err().unwrap();
        assert!(
            e.contains("tokenizer.json") && e.contains("dangling"),
            "{e}"
        );
        // A link to itself.
        std::fs::remove_file(root.join("tokenizer.json")).unwrap();
        symlink("self", root.join("self")).unwrap();
        let e = files(&root, &|_| false).err().unwrap();
        assert!(
            e.contains("self") && e.contains("cannot be followed"),
            "{e}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
