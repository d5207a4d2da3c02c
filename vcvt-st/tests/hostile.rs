//! Hostile inputs, outputs and signals (issue 33): `vcvt-st` never hangs, panics, loops
//! over a claimed dimension, replaces a special file, writes into its input, or goes on
//! after a signal, whatever stdout and stderr are. Checkpoints are written here byte by
//! byte (headers the `safetensors` crate would not write) and read back with that crate.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use safetensors::{Dtype, SafeTensors};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vcvt-st"))
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vcvt-st-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A safetensors file from `(name, dtype, shape, bytes)`, header written by hand.
fn raw(path: &Path, tensors: &[(&str, &str, &[u64], &[u8])]) {
    let mut header = String::from("{");
    let mut data = Vec::new();
    for (i, (name, dtype, shape, bytes)) in tensors.iter().enumerate() {
        if i > 0 {
            header.push(',');
        }
        let shape: Vec<String> = shape.iter().map(u64::to_string).collect();
        header += &format!(
            r#""{name}":{{"dtype":"{dtype}","shape":[{}],"data_offsets":[{},{}]}}"#,
            shape.join(","),
            data.len(),
            data.len() + bytes.len()
        );
        data.extend_from_slice(bytes);
    }
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    std::fs::write(path, file).unwrap();
}

fn run(args: &[&dyn AsRef<std::ffi::OsStr>]) -> (Output, Duration) {
    let start = Instant::now();
    let o = bin().args(args).output().unwrap();
    (o, start.elapsed())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn no_panic(o: &Output) {
    let e = stderr(o);
    assert!(
        !e.contains("panicked") && o.status.code() != Some(101),
        "{e}"
    );
}

fn names(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Whether `name` is one of vcvt-st's temporaries beside its output.
fn is_temporary(name: &str) -> bool {
    name.contains("vcvt-st-tmp") || name.contains("vcvt-st-partial")
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap();
    assert!(ok.success());
}

/// Class 1: sizes from the header and from arguments.
#[test]
fn claimed_dimensions_cost_nothing_and_never_wrap() {
    let d = tmpdir("sizes");
    let out = d.join("out.safetensors");
    // A zero dimension beside a 2^60 one: an empty tensor, converted at once (this looped
    // over 2^42 empty chunks).
    let src = d.join("huge-empty.safetensors");
    raw(
        &src,
        &[
            ("x_blocks", "U8", &[1 << 60, 0, 16], &[]),
            ("x_scales", "U8", &[1 << 60, 0], &[]),
            ("w", "F8_E4M3", &[1 << 60, 0], &[]),
            ("w_scale_inv", "F32", &[1 << 53, 0], &[]),
        ],
    );
    let (o, took) = run(&[&"convert", &"-q", &src, &out, &"--to", &"bf16"]);
    no_panic(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let bytes = std::fs::read(&out).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let x = st.tensor("x").unwrap();
    assert_eq!(
        (x.dtype(), x.shape()),
        (Dtype::BF16, &[1usize << 60, 0][..])
    );
    let w = st.tensor("w").unwrap();
    assert_eq!(
        (w.dtype(), w.shape()),
        (Dtype::BF16, &[1usize << 60, 0][..])
    );
    std::fs::remove_file(&out).unwrap();

    // A product that wraps: [0, 2^59, 16] blocks would dequantize to [0, 2^64].
    let src = d.join("wrap.safetensors");
    raw(
        &src,
        &[
            ("x_blocks", "U8", &[0, 1 << 59, 16], &[]),
            ("x_scales", "U8", &[0, 1 << 59], &[]),
        ],
    );
    let (o, _) = run(&[&"convert", &src, &out, &"--to", &"bf16"]);
    no_panic(&o);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("wrap.safetensors") && e.contains("`x_blocks`"),
        "{e}"
    );
    assert!(!out.exists());

    // An empty FP8 weight with its (empty) scale_inv is valid, not "expected 2-D".
    let src = d.join("fp8-empty.safetensors");
    raw(
        &src,
        &[
            ("w", "F8_E4M3", &[0, 128], &[]),
            ("w_scale_inv", "F32", &[0, 1], &[]),
        ],
    );
    let (o, _) = run(&[&"convert", &"-q", &src, &out, &"--to", &"bf16"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(&out).unwrap();

    // --fp8-block beyond its range is a usage error (status 2), not a panic.
    let good = d.join("good.safetensors");
    raw(&good, &[("w", "F32", &[2, 2], &[0; 16])]);
    for b in [
        "9223372036854775808",
        "18446744073709551615",
        "0",
        "1048577",
    ] {
        let (o, _) = run(&[
            &"convert",
            &good,
            &out,
            &"--to",
            &"f8e4m3",
            &"--fp8-block",
            &b,
        ]);
        no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "--fp8-block {b}: {}", stderr(&o));
        assert!(stderr(&o).contains("--fp8-block"), "{}", stderr(&o));
        assert!(!out.exists());
    }
    // So is a thread count rayon could not start.
    for t in ["0", "1000000", "18446744073709551616"] {
        let (o, _) = run(&[&"convert", &good, &out, &"--to", &"f16", &"--threads", &t]);
        no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "--threads {t}: {}", stderr(&o));
        assert!(!out.exists());
    }
    // The largest accepted block quantizes (one tile).
    let (o, _) = run(&[
        &"convert",
        &"-q",
        &good,
        &out,
        &"--to",
        &"f8e4m3",
        &"--include",
        &"*",
        &"--fp8-block",
        &"1048576",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(st.tensor("w_scale_inv").unwrap().shape(), &[1, 1]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Class 5 (messages): each names the actual problem.
#[test]
fn messages_state_the_actual_problem() {
    let d = tmpdir("messages");
    let out = d.join("out.safetensors");
    let src = d.join("f16scale.safetensors");
    raw(
        &src,
        &[
            ("w", "F8_E4M3", &[2, 2], &[0x38; 4]),
            ("w_scale_inv", "F16", &[1, 1], &[0, 0x3C]),
        ],
    );
    let (o, _) = run(&[&"convert", &src, &out, &"--to", &"bf16"]);
    let e = stderr(&o);
    assert!(e.contains("the scale_inv is F16, not F32"), "{e}");
    let src = d.join("3d.safetensors");
    raw(
        &src,
        &[
            ("w", "F8_E4M3", &[1, 2, 2], &[0x38; 4]),
            ("w_scale_inv", "F32", &[1, 1], &[0; 4]),
        ],
    );
    let (o, _) = run(&[&"convert", &src, &out, &"--to", &"bf16"]);
    // (Fused experts [E, N, K] take a scale_inv [E, ⌈N/b⌉, ⌈K/b⌉].)
    assert!(
        stderr(&o).contains("the scale_inv is 2-D, the weight 3-D"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());

    // A directory: an index that omits a shard, an empty shard name, a directory or a
    // FIFO named *.safetensors.
    let ck = d.join("ck");
    std::fs::create_dir(&ck).unwrap();
    raw(&ck.join("a.safetensors"), &[("a", "F32", &[1], &[0; 4])]);
    raw(&ck.join("b.safetensors"), &[("b", "F32", &[1], &[0; 4])]);
    let index = |map: &str| {
        std::fs::write(
            ck.join("model.safetensors.index.json"),
            format!(r#"{{"weight_map": {map}}}"#),
        )
        .unwrap()
    };
    index(r#"{"a": "a.safetensors"}"#);
    let o_dir = d.join("out");
    let (o, _) = run(&[&"convert", &ck, &o_dir, &"--to", &"f16"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("b.safetensors") && e.contains("--ignore-unindexed"),
        "{e}"
    );
    assert!(!o_dir.exists());
    let (o, _) = run(&[&"inspect", &ck]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let (o, _) = run(&[
        &"convert",
        &"-q",
        &ck,
        &o_dir,
        &"--to",
        &"f16",
        &"--ignore-unindexed",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        names(&o_dir),
        ["a.safetensors", "model.safetensors.index.json"]
    );
    std::fs::remove_dir_all(&o_dir).unwrap();

    index(r#"{"a": "a.safetensors", "b": ""}"#);
    let (o, _) = run(&[
        &"convert",
        &ck,
        &o_dir,
        &"--to",
        &"f16",
        &"--ignore-unindexed",
    ]);
    let e = stderr(&o);
    assert!(
        e.contains("empty file name") && !e.contains("No such device"),
        "{e}"
    );

    std::fs::remove_file(ck.join("model.safetensors.index.json")).unwrap();
    std::fs::create_dir(ck.join("c.safetensors")).unwrap();
    let (o, _) = run(&[&"convert", &ck, &o_dir, &"--to", &"f16"]);
    let e = stderr(&o);
    assert!(
        e.contains("c.safetensors: is a directory") && !e.contains("No such device"),
        "{e}"
    );
    std::fs::remove_dir(ck.join("c.safetensors")).unwrap();

    // A FIFO would block open(2) forever.
    mkfifo(&ck.join("c.safetensors"));
    let (o, took) = run(&[&"convert", &ck, &o_dir, &"--to", &"f16"]);
    let e = stderr(&o);
    assert!(e.contains("c.safetensors: is a FIFO"), "{e}");
    assert!(took < Duration::from_secs(20));
    // Inputs that are a FIFO or a character device: named, not read.
    let (o, took) = run(&[&"convert", &ck.join("c.safetensors"), &out, &"--to", &"f16"]);
    assert!(
        stderr(&o).contains("is a FIFO, not a .safetensors file"),
        "{}",
        stderr(&o)
    );
    assert!(took < Duration::from_secs(20));
    let (o, _) = run(&[&"inspect", &"/dev/zero"]);
    assert!(
        stderr(&o).contains("/dev/zero: is a character device"),
        "{}",
        stderr(&o)
    );
    mkfifo(&ck.join("model.safetensors.index.json"));
    let (o, _) = run(&[&"inspect", &ck]);
    assert!(
        stderr(&o).contains("is a FIFO, not a JSON file"),
        "{}",
        stderr(&o)
    );
    assert!(!o_dir.exists());
    std::fs::remove_dir_all(&d).unwrap();
}

/// Class 2 and 3: output path rules, whether or not the output exists.
#[test]
fn outputs_never_land_in_the_input_nor_replace_special_files() {
    let d = tmpdir("paths");
    let ck = d.join("ck");
    std::fs::create_dir(&ck).unwrap();
    let a = ck.join("a.safetensors");
    raw(&a, &[("a", "F32", &[2], &[0; 8])]);
    let before = names(&ck);
    let refused = |input: &Path, output: &Path, rule: &str| {
        let (o, _) = run(&[&"convert", &"-q", &input, &output, &"--to", &"bf16"]);
        let e = stderr(&o);
        no_panic(&o);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{} -> {}: {e}",
            input.display(),
            output.display()
        );
        assert!(
            e.contains(rule),
            "{} -> {}: {e}",
            input.display(),
            output.display()
        );
        assert_eq!(e.lines().count(), 1, "{e}");
        e
    };
    // The issue's example: a new output inside the input directory.
    refused(&ck, &ck.join("x.safetensors"), "output rule 1");
    refused(&ck, &ck.join("sub"), "inside the input directory");
    refused(&ck, &d.join("other/../ck/y"), "output rule 2");
    std::fs::create_dir(d.join("other")).unwrap();
    refused(&ck, &d.join("other/../ck/y"), "inside the input directory");
    refused(&ck, &ck, "it is the input");
    refused(&a, &a, "it is the input");
    refused(&a, &d, "contains the input");
    refused(&ck, &d.join("missing/out"), "output rule 2");
    assert_eq!(names(&ck), before, "nothing written into the input");
    // Special files are refused, not replaced.
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    refused(&a, &fifo, "it is a FIFO");
    let sock = d.join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    refused(&a, &sock, "it is a socket");
    refused(&a, &d.join("other"), "it is a directory");
    std::os::unix::fs::symlink(d.join("elsewhere"), d.join("link")).unwrap();
    refused(&a, &d.join("link"), "it is a symbolic link");
    // A character device, with --dry-run so that even a broken rule could not replace it
    // (these tests may run as root).
    let (o, _) = run(&[&"convert", &"--dry-run", &a, &"/dev/null", &"--to", &"bf16"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("output rule 4") && e.contains("it is a character device"),
        "{e}"
    );
    refused(&ck, &d.join("other"), "output rule 3");
    // Allowed: a new file beside the input file, an existing regular file.
    let (o, _) = run(&[
        &"convert",
        &"-q",
        &a,
        &ck.join("b.safetensors"),
        &"--to",
        &"bf16",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(d.join("old"), b"old").unwrap();
    let (o, _) = run(&[&"convert", &"-q", &a, &d.join("old"), &"--to", &"bf16"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // --help states the rules.
    let h = bin().args(["convert", "--help"]).output().unwrap();
    let h = String::from_utf8_lossy(&h.stdout);
    assert!(
        h.contains("Output rules") && h.contains("4. for a file IN"),
        "{h}"
    );
    assert!(
        h.contains("130 interrupted") && h.contains("141 stdout"),
        "{h}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// How the child's stdout and stderr are set up.
#[derive(Clone, Copy, Debug)]
enum Stdio3 {
    /// Both closed (`1>&- 2>&-`).
    Closed,
    /// Pipes whose read ends are gone before the signal.
    DeadReader,
    /// Both redirected to a file.
    File,
}

/// Class 4: a signal stops the work promptly and removes the temporaries, whatever stdout
/// and stderr are; exit status 130; the message (when stderr is a file) is one line.
#[test]
fn signals_stop_promptly_whatever_stdout_and_stderr_are() {
    let d = tmpdir("signals");
    let input = d.join("in");
    std::fs::create_dir(&input).unwrap();
    let src = input.join("model.safetensors");
    let tensors: Vec<(String, Vec<u8>)> = (0..4)
        .map(|i| (format!("t{i}"), vec![i as u8; 128]))
        .collect();
    let refs: Vec<(&str, &str, &[u64], &[u8])> = tensors
        .iter()
        .map(|(n, b)| (n.as_str(), "BF16", &[64u64][..], b.as_slice()))
        .collect();
    raw(&src, &refs);
    let before = std::fs::read(&src).unwrap();
    let log = d.join("log");
    for stdio in [Stdio3::Closed, Stdio3::DeadReader, Stdio3::File] {
        for (signal, dir) in [
            ("INT", false),
            ("TERM", true),
            ("HUP", false),
            ("INT", true),
        ] {
            let what = format!("SIG{signal} {stdio:?} dir={dir}");
            let (from, out) = if dir {
                (input.clone(), d.join("out"))
            } else {
                (src.clone(), d.join("out.safetensors"))
            };
            // A 10 s pause after each tensor: a run that went on after the signal would
            // take 40 s.
            let mut cmd = Command::new("sh");
            cmd.arg("-c")
                .arg(match stdio {
                    Stdio3::Closed => r#"exec "$0" "$@" 1>&- 2>&-"#,
                    _ => r#"exec "$0" "$@""#,
                })
                .arg(env!("CARGO_BIN_EXE_vcvt-st"))
                .args(["convert", "--to", "f16"])
                .arg(&from)
                .arg(&out)
                .env("VCVT_ST_TEST_PAUSE_MS", "10000")
                .stdin(Stdio::null());
            match stdio {
                Stdio3::Closed => {}
                Stdio3::DeadReader => {
                    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
                }
                Stdio3::File => {
                    let f = std::fs::File::create(&log).unwrap();
                    cmd.stdout(f.try_clone().unwrap()).stderr(f);
                }
            }
            let mut child = cmd.spawn().unwrap();
            // The read ends go away: any write to stdout or stderr fails with EPIPE.
            drop(child.stdout.take());
            drop(child.stderr.take());
            let start = Instant::now();
            let temp = loop {
                // A file output's temporary, or a directory output's partial directory
                // (`.out.vcvt-st-partial`, issue 30), which holds its shards' temporaries.
                let found = names(&d).into_iter().find(|n| is_temporary(n));
                if let Some(n) = found {
                    break n;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "{what}: no temporary"
                );
                std::thread::sleep(Duration::from_millis(5));
            };
            let killed = Command::new("sh")
                .args(["-c", &format!("kill -{signal} {}", child.id())])
                .status()
                .unwrap();
            assert!(killed.success());
            let t0 = Instant::now();
            let status = child.wait().unwrap();
            let took = t0.elapsed();
            assert_eq!(status.code(), Some(130), "{what}");
            // The converting thread stops within a pause step; the handler's 2 s grace
            // is for a stuck writer only.
            assert!(took < Duration::from_millis(1500), "{what}: took {took:?}");
            assert!(!out.exists(), "{what}: output left");
            assert!(!d.join(&temp).exists(), "{what}: {temp} left");
            let mut left = names(&d);
            left.retain(|n| n != "log");
            assert_eq!(left, ["in"], "{what}: only the input remains");
            assert_eq!(
                std::fs::read(&src).unwrap(),
                before,
                "{what}: input touched"
            );
            if let Stdio3::File = stdio {
                let msg = std::fs::read_to_string(&log).unwrap();
                assert_eq!(msg.lines().count(), 1, "{what}: {msg}");
                assert!(msg.contains("interrupted"), "{what}: {msg}");
                assert!(!msg.contains("panicked"), "{what}: {msg}");
            }
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Class 4: a writer that does not see the signal (stuck, as in a write to a hung file
/// system) is ended by the handler's thread after its 2 s grace, which removes the
/// temporaries itself; stderr a dead pipe.
#[test]
fn a_stuck_writer_is_still_stopped() {
    let d = tmpdir("stuck");
    let src = d.join("in.safetensors");
    raw(
        &src,
        &[
            ("a", "BF16", &[64], &[1; 128]),
            ("b", "BF16", &[64], &[2; 128]),
        ],
    );
    for dir_out in [false, true] {
        let (from, out) = if dir_out {
            let input = d.join("in");
            std::fs::create_dir_all(&input).unwrap();
            std::fs::copy(&src, input.join("model.safetensors")).unwrap();
            (input, d.join("out"))
        } else {
            (src.clone(), d.join("out.safetensors"))
        };
        let mut child = bin()
            .args(["convert", "--to", "f16"])
            .arg(&from)
            .arg(&out)
            .env("VCVT_ST_TEST_PAUSE_MS", "60000")
            .env("VCVT_ST_TEST_STUCK", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        drop(child.stderr.take());
        let start = Instant::now();
        let temp = loop {
            if let Some(n) = names(&d).into_iter().find(|n| is_temporary(n)) {
                break n;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no temporary");
            std::thread::sleep(Duration::from_millis(5));
        };
        let killed = Command::new("sh")
            .args(["-c", &format!("kill -TERM {}", child.id())])
            .status()
            .unwrap();
        assert!(killed.success());
        let t0 = Instant::now();
        let status = child.wait().unwrap();
        let took = t0.elapsed();
        assert_eq!(status.code(), Some(130));
        assert!(
            took >= Duration::from_millis(1900) && took < Duration::from_secs(10),
            "took {took:?}"
        );
        assert!(!d.join(&temp).exists(), "{temp} left");
        assert!(!out.exists());
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Class 4: a reader that goes away ends `inspect` and `--dry-run` quietly with 141.
#[test]
fn broken_pipes_end_quietly() {
    let d = tmpdir("pipe");
    let src = d.join("many.safetensors");
    // Enough lines (about 400 KB) to fill any pipe buffer.
    let names: Vec<String> = (0..4000)
        .map(|i| format!("model.layers.{i}.a_rather_long_tensor_name_to_fill_the_pipe.weight"))
        .collect();
    let zero = [0u8; 4];
    let refs: Vec<(&str, &str, &[u64], &[u8])> = names
        .iter()
        .map(|n| (n.as_str(), "F32", &[1u64][..], &zero[..]))
        .collect();
    raw(&src, &refs);
    let out = d.join("out.safetensors");
    let runs: [Vec<&std::ffi::OsStr>; 2] = [
        vec!["inspect".as_ref(), src.as_os_str()],
        vec![
            "convert".as_ref(),
            src.as_os_str(),
            out.as_os_str(),
            "--to".as_ref(),
            "f16".as_ref(),
            "--dry-run".as_ref(),
        ],
    ];
    for args in runs {
        let mut child = bin()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty());
        // (The reader is dropped here: the pipe has no reader left.)
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(141), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}: quietly");
        assert!(!out.exists());
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Issues 30 and 33 together: a `--shard` run and `finalize` follow the output rules (OUT
/// may be the existing directory the runs share, never inside the input nor a file); the
/// index must list every top-level shard (unless `--ignore-unindexed`), while
/// `.safetensors` files in subdirectories are copied as files of the tree.
#[test]
fn shard_runs_and_finalize_follow_the_output_rules() {
    let d = tmpdir("shard");
    let ck = d.join("ck");
    std::fs::create_dir_all(ck.join("sub")).unwrap();
    raw(&ck.join("a.safetensors"), &[("a", "F32", &[2], &[0; 8])]);
    raw(&ck.join("b.safetensors"), &[("b", "F32", &[2], &[0; 8])]);
    raw(
        &ck.join("sub/extra.safetensors"),
        &[("x", "F32", &[1], &[0; 4])],
    );
    std::fs::write(
        ck.join("model.safetensors.index.json"),
        r#"{"weight_map": {"a": "a.safetensors", "b": "b.safetensors"}}"#,
    )
    .unwrap();
    let before = names(&ck);
    let fails = |args: &[&dyn AsRef<std::ffi::OsStr>], what: &str| {
        let (o, _) = run(args);
        let e = stderr(&o);
        no_panic(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains(what), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    };
    // Inside the input: refused before anything is created (it used to create ck/out).
    let inside = ck.join("out");
    for i in ["0/2", "1/2"] {
        fails(
            &[
                &"convert", &"-q", &ck, &inside, &"--to", &"bf16", &"--shard", &i,
            ],
            "output rule 1",
        );
    }
    fails(&[&"finalize", &ck, &inside], "inside the input directory");
    assert_eq!(names(&ck), before, "nothing written into the input");
    // An existing file as OUT is refused (rule 3); a directory is shared.
    std::fs::write(d.join("file"), b"x").unwrap();
    fails(
        &[
            &"convert",
            &"-q",
            &ck,
            &d.join("file"),
            &"--to",
            &"bf16",
            &"--shard",
            &"0/2",
        ],
        "output rule 3",
    );
    assert_eq!(std::fs::read(d.join("file")).unwrap(), b"x");
    let out = d.join("out");
    std::fs::create_dir(&out).unwrap();
    for i in ["0/2", "1/2"] {
        let (o, _) = run(&[
            &"convert", &"-q", &ck, &out, &"--to", &"bf16", &"--shard", &i,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let (o, _) = run(&[&"finalize", &ck, &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The subdirectory's .safetensors file is copied byte for byte, not converted.
    assert_eq!(
        std::fs::read(out.join("sub/extra.safetensors")).unwrap(),
        std::fs::read(ck.join("sub/extra.safetensors")).unwrap()
    );
    let b = std::fs::read(out.join("b.safetensors")).unwrap();
    let st = SafeTensors::deserialize(&b).unwrap();
    assert_eq!(st.tensor("b").unwrap().dtype(), Dtype::BF16);
    // A top-level shard the index omits: an error for --shard and finalize alike, unless
    // --ignore-unindexed.
    // (A --shard run recorded before the stray shard appears, for finalize below.)
    let out3 = d.join("out3");
    let (o, _) = run(&[
        &"convert", &"-q", &ck, &out3, &"--to", &"bf16", &"--shard", &"0/1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    raw(&ck.join("c.safetensors"), &[("c", "F32", &[2], &[0; 8])]);
    let out2 = d.join("out2");
    fails(
        &[
            &"convert", &"-q", &ck, &out2, &"--to", &"bf16", &"--shard", &"0/1",
        ],
        "c.safetensors",
    );
    assert!(!out2.exists());
    fails(&[&"finalize", &ck, &out3], "--ignore-unindexed");
    let (o, _) = run(&[
        &"convert",
        &"-q",
        &ck,
        &out2,
        &"--to",
        &"bf16",
        &"--shard",
        &"0/1",
        &"--ignore-unindexed",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (o, _) = run(&[&"finalize", &out2]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !out2.join("c.safetensors").exists(),
        "an unindexed shard is not copied"
    );
    let (o, _) = run(&[&"verify", &"-q", &ck, &out2, &"--ignore-unindexed"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    // --help of finalize states the rules too.
    let h = bin().args(["finalize", "--help"]).output().unwrap();
    let h = String::from_utf8_lossy(&h.stdout);
    assert!(
        h.contains("Output rules") && h.contains("--shard I/N"),
        "{h}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// `verify`'s table and `--dry-run --shard`'s lines end quietly (141) when stdout's reader
/// goes away, as `inspect` does.
#[test]
fn verify_and_shard_dry_run_end_quietly_on_broken_pipes() {
    let d = tmpdir("pipe-verify");
    let ck = d.join("ck");
    std::fs::create_dir(&ck).unwrap();
    let names: Vec<String> = (0..4000)
        .map(|i| format!("model.layers.{i}.a_rather_long_tensor_name_to_fill_the_pipe.weight"))
        .collect();
    let zero = [0u8; 4];
    let refs: Vec<(&str, &str, &[u64], &[u8])> = names
        .iter()
        .map(|n| (n.as_str(), "F32", &[1u64][..], &zero[..]))
        .collect();
    raw(&ck.join("model.safetensors"), &refs);
    let out = d.join("out");
    let (o, _) = run(&[&"convert", &"-q", &ck, &out, &"--to", &"f16"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out2 = d.join("out2");
    let runs: [Vec<&std::ffi::OsStr>; 2] = [
        vec!["verify".as_ref(), ck.as_os_str(), out.as_os_str()],
        vec![
            "convert".as_ref(),
            ck.as_os_str(),
            out2.as_os_str(),
            "--to".as_ref(),
            "f16".as_ref(),
            "--dry-run".as_ref(),
            "--shard".as_ref(),
            "0/1".as_ref(),
        ],
    ];
    for args in runs {
        let mut child = bin()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty());
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(141), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}: quietly");
        assert!(!out2.exists());
    }
    std::fs::remove_dir_all(&d).unwrap();
}
