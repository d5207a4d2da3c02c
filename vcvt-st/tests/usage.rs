//! What users read agrees with what the binary does: `vcvt-st/README.md`'s usage section
//! (each command's synopsis and options) against `--help`, `finalize OUT` without conversion
//! arguments, shell completions, the manual page, and `inspect` naming the target it assumed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vcvt-st"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn help(cmd: &str) -> String {
    let o = bin().args([cmd, "-h"]).output().unwrap();
    assert!(o.status.success());
    text(&o.stdout)
}

/// The `Usage:` line and the long options of a `-h` output (without --help and --version).
fn from_help(h: &str) -> (String, BTreeSet<String>) {
    let usage = h
        .lines()
        .find(|l| l.starts_with("Usage: "))
        .expect("a Usage line")
        .to_string();
    let opts = h
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let t = t.strip_prefix("-q, ").unwrap_or(t);
            t.strip_prefix("--")
                .map(|r| format!("--{}", r.split([' ', '\t']).next().unwrap()))
        })
        .filter(|o| o != "--help" && o != "--version")
        .collect();
    (usage, opts)
}

/// README's section of `cmd` under "## Usage": its `Usage:` line and the options of its
/// table (the first column's `--option`).
fn from_readme(readme: &str, cmd: &str) -> (String, BTreeSet<String>) {
    let usage_part = readme
        .split("\n## Usage\n")
        .nth(1)
        .expect("a `## Usage` section");
    let usage_part = usage_part.split("\n## ").next().unwrap();
    let heading = format!("### `vcvt-st {cmd}`");
    let sec = usage_part
        .split("\n### ")
        .find(|s| format!("### {}", s.lines().next().unwrap_or("")) == heading)
        .unwrap_or_else(|| panic!("README has no `{heading}` section"));
    let usage = sec
        .lines()
        .find(|l| l.starts_with("Usage: "))
        .unwrap_or_else(|| panic!("{heading}: no Usage line"))
        .to_string();
    let opts = sec
        .lines()
        .filter(|l| l.starts_with("| `-"))
        .map(|l| {
            let cell = l.split('|').nth(1).unwrap().trim().trim_matches('`');
            let cell = cell.strip_prefix("-q, ").unwrap_or(cell);
            cell.split(' ').next().unwrap().to_string()
        })
        .collect();
    (usage, opts)
}

#[test]
fn readme_usage_agrees_with_help() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("vcvt-st/README.md");
    for cmd in [
        "convert",
        "finalize",
        "verify",
        "inspect",
        "completions",
        "manpage",
    ] {
        let (hu, ho) = from_help(&help(cmd));
        let (ru, ro) = from_readme(&readme, cmd);
        assert_eq!(ru, hu, "README's usage line of `{cmd}` differs from -h");
        assert_eq!(ro, ho, "README's options of `{cmd}` differ from -h");
    }
    // Every command of --help has its section.
    let top = text(&bin().arg("-h").output().unwrap().stdout);
    let cmds: Vec<&str> = top
        .split("Commands:")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap())
        .filter(|c| *c != "help")
        .collect();
    for c in cmds {
        assert!(
            readme.contains(&format!("### `vcvt-st {c}`")),
            "README lacks `{c}`"
        );
    }
    assert!(readme.contains("cargo install --path vcvt-st"));
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vcvt-st-usage-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A safetensors file of F32 tensors, header written by hand.
fn file(path: &Path, names: &[&str]) {
    let mut header = String::from("{");
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            header.push(',');
        }
        header += &format!(
            r#""{n}":{{"dtype":"F32","shape":[2],"data_offsets":[{},{}]}}"#,
            i * 8,
            i * 8 + 8
        );
    }
    header.push('}');
    let mut b = (header.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(header.as_bytes());
    for _ in names {
        b.extend_from_slice(&[0, 0, 0x80, 0x3F, 0, 0, 0, 0x40]);
    }
    std::fs::write(path, b).unwrap();
}

fn run(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    bin().args(args).output().unwrap()
}

#[test]
fn finalize_reads_the_settings_the_shard_runs_recorded() {
    let d = tmpdir("finalize");
    let ck = d.join("ck");
    std::fs::create_dir(&ck).unwrap();
    file(&ck.join("a.safetensors"), &["a"]);
    file(&ck.join("b.safetensors"), &["b"]);
    std::fs::write(ck.join("config.json"), "{}").unwrap();
    let out = d.join("out");
    let shard = |i: &str, to: &str| {
        run(&[
            &"convert",
            &ck,
            &out,
            &"--to",
            &to,
            &"--shard",
            &i,
            &"-q",
            &"--exclude",
            &"x*",
        ])
    };
    assert!(shard("0/2", "f16").status.success());
    // Another run with other settings is refused, naming both.
    let o = shard("1/2", "bf16");
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(
        e.contains("another conversion") && e.contains("f16") && e.contains("bf16"),
        "{e}"
    );
    // finalize takes no conversion arguments.
    let o = run(&[&"finalize", &out, &"--to", &"f16"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    // An IN that is not the recorded one.
    let other = d.join("other");
    std::fs::create_dir(&other).unwrap();
    file(&other.join("a.safetensors"), &["a"]);
    let o = run(&[&"finalize", &other, &out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("the --shard runs converted"),
        "{}",
        text(&o.stderr)
    );
    // Not complete yet: refused.
    let o = run(&[&"finalize", &out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("b.safetensors"),
        "{}",
        text(&o.stderr)
    );
    assert!(shard("1/2", "f16").status.success());
    // Records that disagree (edited by hand): refused.
    let rec = out.join(".vcvt-st-settings-1-of-2.json");
    let saved = std::fs::read_to_string(&rec).unwrap();
    std::fs::write(&rec, saved.replace("\"f16\"", "\"f32\"")).unwrap();
    let o = run(&[&"finalize", &out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("different settings"),
        "{}",
        text(&o.stderr)
    );
    std::fs::write(&rec, saved).unwrap();
    // OUT alone completes it, as a one-process run would.
    let o = run(&[&"finalize", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let one = d.join("one");
    let o = run(&[
        &"convert",
        &ck,
        &one,
        &"--to",
        &"f16",
        &"-q",
        &"--exclude",
        &"x*",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let names = |p: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names(&out),
        names(&one),
        "finalize OUT == one process (records removed)"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn completions_man_page_and_the_assumed_target() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let o = bin().args(["completions", shell]).output().unwrap();
        assert!(o.status.success());
        let s = text(&o.stdout);
        assert!(
            s.contains("vcvt-st") && s.contains("finalize") && s.contains("--fp8-block"),
            "{shell}"
        );
    }
    let o = bin().arg("manpage").output().unwrap();
    let s = text(&o.stdout);
    assert!(
        o.status.success() && s.contains(".TH") && s.contains("vcvt\\-st") && s.contains("convert"),
        "{s}"
    );
    let d = tmpdir("inspect");
    let f = d.join("m.safetensors");
    file(&f, &["w"]);
    let o = bin().arg("inspect").arg(&f).output().unwrap();
    assert!(
        text(&o.stdout).contains("--to bf16, assumed"),
        "{}",
        text(&o.stdout)
    );
    let o = bin()
        .arg("inspect")
        .arg(&f)
        .args(["--to", "f16"])
        .output()
        .unwrap();
    assert!(!text(&o.stdout).contains("assumed"), "{}", text(&o.stdout));
    std::fs::remove_dir_all(&d).unwrap();
}
