//! Inputs that must give either a correct result or an error naming what was wrong, and
//! outputs that never write through a link or into anything but a regular file: empty
//! tensors, links and FIFOs at file names of a shared output, scales vcvt-st does not
//! understand, names that would rewrite a terminal, duplicate names, index paths and
//! scheduler indices. Checkpoints are written here byte by byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vcvt-st"))
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vcvt-st-trust-{}-{name}", std::process::id()));
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

fn run(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    bin().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Exit status 0, or the test fails with stderr.
fn ok(o: &Output) {
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// Exit status 1 (an error, not a panic) with a message containing every one of `want`.
fn fails(o: &Output, want: &[&str]) {
    let e = text(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(1),
        "stderr: {e}\nstdout: {}",
        text(&o.stdout)
    );
    for w in want {
        assert!(e.contains(w), "expected {w:?} in: {e}");
    }
}

/// Every file under `root` (links not followed) with its bytes or its link target: the
/// tree's state, compared before and after a run.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("link -> {}", t.display()).into_bytes());
            } else if m.is_dir() {
                stack.push(p);
            } else if m.is_file() {
                out.insert(rel, std::fs::read(&p).unwrap());
            } else {
                out.insert(rel, b"special".to_vec());
            }
        }
    }
    out
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn empty_tensors_are_planned_estimated_converted_and_verified() {
    let d = tmpdir("empty");
    let f = d.join("e.safetensors");
    raw(
        &f,
        &[
            ("a", "F32", &[0], &[]),
            ("b", "F32", &[4, 0], &[]),
            ("c", "F16", &[3, 0, 5], &[]),
            ("d", "F32", &[2], &f32s(&[1.0, 2.0])),
        ],
    );
    for to in ["bf16", "f16", "f8e4m3", "mxfp4", "nvfp4"] {
        let o = run(&[&"inspect", &f, &"--to", &to]);
        ok(&o);
        let out = d.join(format!("o-{to}.safetensors"));
        ok(&run(&[&"convert", &f, &out, &"--to", &to, &"--dry-run"]));
        ok(&run(&[&"convert", &f, &out, &"--to", &to, &"-q"]));
        ok(&run(&[&"verify", &f, &out, &"-q"]));
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// A two-shard checkpoint directory with an index, config.json, tokenizer.json and a
/// subdirectory.
fn checkpoint_dir(d: &Path) -> PathBuf {
    let ck = d.join("ck");
    std::fs::create_dir_all(ck.join("1_Pooling")).unwrap();
    raw(
        &ck.join("a.safetensors"),
        &[("x", "F32", &[2], &f32s(&[1.0, 2.5]))],
    );
    raw(
        &ck.join("b.safetensors"),
        &[("y", "F32", &[1], &f32s(&[3.0]))],
    );
    std::fs::write(
        ck.join("model.safetensors.index.json"),
        r#"{"metadata":{},"weight_map":{"x":"a.safetensors","y":"b.safetensors"}}"#,
    )
    .unwrap();
    std::fs::write(ck.join("config.json"), r#"{"model_type":"t"}"#).unwrap();
    std::fs::write(ck.join("tokenizer.json"), b"tokens").unwrap();
    std::fs::write(ck.join("1_Pooling/config.json"), b"{}").unwrap();
    ck
}

#[cfg(unix)]
fn mkfifo(p: &Path) {
    let s = Command::new("mkfifo").arg(p).status().unwrap();
    assert!(s.success());
}

/// Runs with a deadline: a FIFO opened for writing would block forever.
#[cfg(unix)]
fn run_within(args: &[&dyn AsRef<std::ffi::OsStr>], secs: u64) -> Output {
    let mut c = bin()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while c.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > end {
            c.kill().unwrap();
            let _ = c.wait();
            panic!(
                "vcvt-st {:?} did not finish within {secs} s",
                args.iter()
                    .map(|a| a.as_ref().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    c.wait_with_output().unwrap()
}

#[cfg(unix)]
#[test]
fn shared_outputs_never_write_through_links_nor_into_special_files() {
    use std::os::unix::fs::symlink;
    let d = tmpdir("links");
    let ck = checkpoint_dir(&d);
    let before = snapshot(&d);
    // Files of a shared output that link back into the input.
    type Make<'a> = &'a dyn Fn(&Path);
    let cases: &[(&str, Make)] = &[
        ("config.json", &|out| {
            symlink(ck.join("config.json"), out.join("config.json")).unwrap()
        }),
        ("tokenizer.json", &|out| {
            symlink(ck.join("tokenizer.json"), out.join("tokenizer.json")).unwrap()
        }),
        ("1_Pooling", &|out| {
            symlink(ck.join("1_Pooling"), out.join("1_Pooling")).unwrap()
        }),
        ("model.safetensors.index.json", &|out| {
            symlink(
                ck.join("model.safetensors.index.json"),
                out.join("model.safetensors.index.json"),
            )
            .unwrap()
        }),
        ("tokenizer.json", &|out| mkfifo(&out.join("tokenizer.json"))),
        ("config.json", &|out| mkfifo(&out.join("config.json"))),
    ];
    for (i, (name, make)) in cases.iter().enumerate() {
        let out = d.join(format!("out{i}"));
        ok(&run(&[
            &"convert", &ck, &out, &"--to", &"bf16", &"--shard", &"0/1", &"-q",
        ]));
        make(&out);
        let o = run_within(&[&"finalize", &ck, &out], 20);
        fails(&o, &[name]);
        assert_eq!(
            snapshot(&ck),
            before
                .iter()
                .filter(|(k, _)| k.starts_with("ck"))
                .map(|(k, v)| (k.strip_prefix("ck").unwrap().to_path_buf(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
            "case {i}: the input changed"
        );
    }
    // A link or a FIFO at a shard's name: refused, by convert --shard and by finalize.
    for (i, fifo) in [false, true].into_iter().enumerate() {
        let out = d.join(format!("shardlink{i}"));
        std::fs::create_dir(&out).unwrap();
        if fifo {
            mkfifo(&out.join("a.safetensors"));
        } else {
            symlink(ck.join("a.safetensors"), out.join("a.safetensors")).unwrap();
        }
        let o = run_within(
            &[
                &"convert", &ck, &out, &"--to", &"bf16", &"--shard", &"0/1", &"-q",
            ],
            20,
        );
        fails(&o, &["a.safetensors"]);
        let o = run_within(&[&"finalize", &ck, &out], 20);
        fails(&o, &["a.safetensors"]);
    }
    // The partial directory of a one-process run, a link into the input: refused.
    let out = d.join("plain");
    symlink(&ck, d.join(".plain.vcvt-st-partial")).unwrap();
    fails(
        &run(&[&"convert", &ck, &out, &"--to", &"bf16", &"-q"]),
        &[".plain.vcvt-st-partial"],
    );
    std::fs::remove_file(d.join(".plain.vcvt-st-partial")).unwrap();
    // The lock file of a resumed run, a FIFO: refused without blocking.
    std::fs::create_dir(d.join(".plain.vcvt-st-partial")).unwrap();
    mkfifo(&d.join(".plain.vcvt-st-partial/.vcvt-st-lock"));
    let o = run_within(&[&"convert", &ck, &out, &"--to", &"bf16", &"-q"], 20);
    fails(&o, &[".vcvt-st-lock"]);
    let after = snapshot(&d);
    for (k, v) in &before {
        assert_eq!(after.get(k), Some(v), "{} changed", k.display());
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Checks that every command refuses `f` (a file or directory) with a message containing
/// `want`, writes nothing and leaves the input as it was.
fn refused_everywhere(d: &Path, input: &Path, want: &[&str]) {
    let before = snapshot(d);
    let out = d.join("out-refused");
    fails(&run(&[&"inspect", &input]), want);
    fails(
        &run(&[&"convert", &input, &out, &"--to", &"bf16", &"--dry-run"]),
        want,
    );
    fails(
        &run(&[&"convert", &input, &out, &"--to", &"bf16", &"-q"]),
        want,
    );
    fails(
        &run(&[&"convert", &input, &out, &"--to", &"f8e4m3", &"-q"]),
        want,
    );
    assert!(!out.exists(), "an output was written");
    assert_eq!(snapshot(d), before, "the tree changed");
}

fn f8(v: usize) -> Vec<u8> {
    (0..v).map(|i| (i % 100) as u8 + 0x20).collect()
}

#[test]
fn scales_that_are_not_understood_are_errors_never_plain_casts() {
    let d = tmpdir("scales");
    let f = d.join("m.safetensors");
    let w = f8(8 * 64);
    // compressed-tensors per-channel FP8 whose scale has the wrong shape.
    raw(
        &f,
        &[
            ("l.weight", "F8_E4M3", &[8, 64], &w),
            ("l.weight_scale", "F32", &[8, 3], &f32s(&[1.0; 24])),
        ],
    );
    refused_everywhere(&d, &f, &["l.weight_scale", "[8, 3]", "[8, 1]"]);
    // ... of a dtype no convention has.
    raw(
        &f,
        &[
            ("l.weight", "F8_E4M3", &[8, 64], &w),
            ("l.weight_scale", "I32", &[8, 1], &[0u8; 32]),
        ],
    );
    refused_everywhere(&d, &f, &["l.weight", "l.weight_scale", "I32"]);
    // MXFP8 scales of the wrong shape, and NVFP4 (ModelOpt) scales of the wrong shape.
    raw(
        &f,
        &[
            ("l.weight", "F8_E4M3", &[8, 64], &w),
            ("l.weight_scale", "U8", &[8, 3], &[127u8; 24]),
        ],
    );
    refused_everywhere(&d, &f, &["l.weight_scale", "U8"]);
    raw(
        &f,
        &[
            ("l.weight", "U8", &[8, 32], &[0x21u8; 256]),
            ("l.weight_scale", "F8_E4M3", &[8, 3], &[0x38u8; 24]),
            ("l.weight_scale_2", "F32", &[], &f32s(&[1.0])),
        ],
    );
    refused_everywhere(&d, &f, &["l.weight_scale", "F8_E4M3"]);
    // compressed-tensors NVFP4 without its global scale.
    raw(
        &f,
        &[
            ("l.weight_packed", "U8", &[8, 32], &[0x21u8; 256]),
            ("l.weight_scale", "F8_E4M3", &[8, 4], &[0x38u8; 32]),
        ],
    );
    refused_everywhere(
        &d,
        &f,
        &["l.weight_packed", "l.weight_global_scale", "missing"],
    );
    // A zero point (asymmetric quantization).
    raw(
        &f,
        &[
            ("l.weight", "F8_E4M3", &[8, 64], &w),
            ("l.weight_scale", "F32", &[8, 1], &f32s(&[1.0; 8])),
            ("l.weight_zero_point", "F32", &[8, 1], &f32s(&[0.0; 8])),
        ],
    );
    refused_everywhere(&d, &f, &["l.weight_zero_point"]);
    // An FP8 weight without scales beside one with them.
    raw(
        &f,
        &[
            ("a.weight", "F8_E4M3", &[8, 64], &w),
            ("a.weight_scale", "F32", &[8, 1], &f32s(&[1.0; 8])),
            ("b.weight", "F8_E4M3", &[8, 64], &w),
        ],
    );
    refused_everywhere(&d, &f, &["b.weight", "no scale"]);
    // A model's own float `x` and `x_scale` parameters are no quantization: cast as usual.
    raw(
        &f,
        &[
            ("x", "F32", &[2], &f32s(&[1.0, 2.0])),
            ("x_scale", "F32", &[1], &f32s(&[3.0])),
        ],
    );
    let out = d.join("floats.safetensors");
    ok(&run(&[&"convert", &f, &out, &"--to", &"bf16", &"-q"]));
    ok(&run(&[&"verify", &f, &out, &"-q"]));
    std::fs::remove_file(&out).unwrap();
    std::fs::remove_file(&f).unwrap();
    // A quantization method vcvt-st does not know, and an FP8 weight without scales in a
    // checkpoint whose config says it is quantized.
    let ck = d.join("ck");
    std::fs::create_dir(&ck).unwrap();
    raw(
        &ck.join("model.safetensors"),
        &[("a.weight", "F8_E4M3", &[8, 64], &w)],
    );
    std::fs::write(
        ck.join("config.json"),
        r#"{"quantization_config":{"quant_method":"gptq","bits":4}}"#,
    )
    .unwrap();
    refused_everywhere(&d, &ck, &["gptq"]);
    std::fs::write(
        ck.join("config.json"),
        r#"{"quantization_config":{"quant_method":"fbgemm_fp8"}}"#,
    )
    .unwrap();
    refused_everywhere(&d, &ck, &["a.weight", "fbgemm_fp8"]);
    // An invalid config.json: every command refuses it, inspect too.
    std::fs::write(ck.join("config.json"), "{").unwrap();
    refused_everywhere(&d, &ck, &["config.json", "invalid JSON"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn verify_finds_a_dropped_scale() {
    let d = tmpdir("dropped");
    let f = d.join("m.safetensors");
    let w = f8(4 * 32);
    raw(
        &f,
        &[
            ("l.weight", "F8_E4M3", &[4, 32], &w),
            (
                "l.weight_scale",
                "F32",
                &[4, 1],
                &f32s(&[2.0, 4.0, 8.0, 0.5]),
            ),
        ],
    );
    // What a plain cast gives: the codes' values, without their scales.
    let codes: Vec<f32> = w
        .iter()
        .map(|&b| float8::F8E4M3::from_bits(b).to_f32())
        .collect();
    let o = d.join("o.safetensors");
    raw(
        &o,
        &[
            ("l.weight", "F32", &[4, 32], &f32s(&codes)),
            (
                "l.weight_scale",
                "F32",
                &[4, 1],
                &f32s(&[2.0, 4.0, 8.0, 0.5]),
            ),
        ],
    );
    let v = run(&[&"verify", &f, &o, &"-q"]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v.stdout));
    assert!(text(&v.stdout).contains("VIOLATION"), "{}", text(&v.stdout));
    // And the kept-quantized copy without its scale.
    raw(&o, &[("l.weight", "F8_E4M3", &[4, 32], &w)]);
    let v = run(&[&"verify", &f, &o, &"-q"]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v.stdout));
    assert!(
        text(&v.stdout).contains("l.weight_scale"),
        "{}",
        text(&v.stdout)
    );
    // What convert writes passes.
    std::fs::remove_file(&o).unwrap();
    ok(&run(&[&"convert", &f, &o, &"--to", &"f32", &"-q"]));
    ok(&run(&[&"verify", &f, &o, &"-q"]));
    std::fs::remove_dir_all(&d).unwrap();
}

/// Whether `b` holds a byte or character that a terminal acts on (C0 but newline, DEL, C1,
/// bidirectional controls).
fn unsafe_output(b: &[u8]) -> Option<String> {
    let s = String::from_utf8_lossy(b);
    s.chars()
        .find(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
        })
        .map(|c| format!("U+{:04X} in {s:?}", c as u32))
}

#[test]
fn names_and_paths_from_a_checkpoint_are_escaped_when_printed() {
    let d = tmpdir("escape");
    // JSON escapes in the header: ESC sequences, CR, NUL, a bidi override, C1 CSI.
    let evil = [
        "a\\u001b[2J\\u001b]0;pwned\\u0007.weight",
        "b\\rfake line.weight",
        "c\\u0000nul.weight",
        "d\\u202egnp.weight",
        "e\\u009b31m.weight",
    ];
    let ck = d.join("dir\u{1b}[31m\r");
    std::fs::create_dir(&ck).unwrap();
    let f = ck.join("m\u{202e}.safetensors");
    let data = f32s(&[1.5; 32]);
    let tensors: Vec<(&str, &str, &[u64], &[u8])> = evil
        .iter()
        .map(|n| (*n, "F32", &[1u64, 32][..], &data[..]))
        .collect();
    raw(&f, &tensors);
    let out = d.join("o.safetensors");
    let runs: Vec<Output> = vec![
        run(&[&"inspect", &f]),
        run(&[&"inspect", &ck]),
        run(&[&"convert", &f, &out, &"--to", &"mxfp4", &"--dry-run"]),
        run(&[&"convert", &f, &out, &"--to", &"bf16"]),
        run(&[&"verify", &f, &out]),
        // Errors: a path, and a tensor name in a message.
        run(&[&"convert", &d.join("nope\u{1b}[2J"), &out, &"--to", &"bf16"]),
    ];
    for (i, o) in runs.iter().enumerate() {
        assert!(
            o.status.code().is_some_and(|c| c < 2),
            "run {i}: {}",
            text(&o.stderr)
        );
        for b in [&o.stdout, &o.stderr] {
            if let Some(bad) = unsafe_output(b) {
                panic!("run {i}: printed raw: {bad}");
            }
        }
    }
    assert!(
        text(&runs[0].stdout).contains("\\x1B[2J"),
        "{}",
        text(&runs[0].stdout)
    );
    // A name in an error message.
    raw(&f, &[("x\\u001b[2J_scales", "U8", &[1], &[1])]);
    let o = run(&[&"inspect", &f]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        unsafe_output(&o.stderr).is_none() && text(&o.stderr).contains("x\\x1B[2J_scales"),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn every_command_accepts_and_refuses_the_same_inputs() {
    let d = tmpdir("oneview");
    // Empty tensors of any claimed shape: converted, and what convert wrote verifies.
    let f = d.join("e.safetensors");
    raw(
        &f,
        &[
            ("c", "F16", &[1u64 << 62, 0], &[]),
            ("z", "F32", &[0, 1u64 << 61], &[]),
            ("d", "F32", &[2], &f32s(&[1.0, 2.0])),
        ],
    );
    for to in ["bf16", "f32", "f8e4m3", "nvfp4"] {
        let out = d.join(format!("e-{to}.safetensors"));
        ok(&run(&[&"inspect", &f, &"--to", &to]));
        ok(&run(&[&"convert", &f, &out, &"--to", &to, &"-q"]));
        ok(&run(&[&"verify", &f, &out, &"-q"]));
    }
    // Duplicate tensor names in a header: every command refuses them.
    let dup = d.join("dup.safetensors");
    // (Both at the same offsets, which the safetensors crate accepts: it keeps the last.)
    let h = r#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}"#;
    let mut bytes = (h.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(h.as_bytes());
    bytes.extend_from_slice(&f32s(&[1.0]));
    std::fs::write(&dup, bytes).unwrap();
    let out = d.join("dup-out.safetensors");
    fails(&run(&[&"inspect", &dup]), &["`w`", "twice"]);
    fails(
        &run(&[&"convert", &dup, &out, &"--to", &"bf16", &"--dry-run"]),
        &["`w`", "twice"],
    );
    fails(
        &run(&[&"convert", &dup, &out, &"--to", &"bf16"]),
        &["`w`", "twice"],
    );
    fails(&run(&[&"verify", &dup, &f]), &["`w`", "twice"]);
    assert!(!out.exists());
    // A dangling link in a checkpoint directory: inspect refuses it as convert does.
    let ck = d.join("ck");
    std::fs::create_dir(&ck).unwrap();
    raw(
        &ck.join("model.safetensors"),
        &[("w", "F32", &[1], &f32s(&[1.0]))],
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("gone", ck.join("tokenizer.json")).unwrap();
        fails(&run(&[&"inspect", &ck]), &["tokenizer.json", "dangling"]);
        fails(
            &run(&[
                &"convert",
                &ck,
                &d.join("o1"),
                &"--to",
                &"bf16",
                &"--dry-run",
            ]),
            &["tokenizer.json", "dangling"],
        );
        fails(
            &run(&[&"convert", &ck, &d.join("o1"), &"--to", &"bf16"]),
            &["tokenizer.json", "dangling"],
        );
        std::fs::remove_file(ck.join("tokenizer.json")).unwrap();
    }
    // A bad path in the index is the error, not the unindexed file beside it.
    raw(
        &ck.join("extra.safetensors"),
        &[("v", "F32", &[1], &f32s(&[1.0]))],
    );
    for bad in [
        "../x.safetensors",
        "/abs.safetensors",
        "",
        "a\\u0000b.safetensors",
    ] {
        std::fs::write(
            ck.join("model.safetensors.index.json"),
            format!(r#"{{"weight_map":{{"w":"{bad}"}}}}"#),
        )
        .unwrap();
        let o = run(&[&"inspect", &ck]);
        fails(&o, &["model.safetensors.index.json"]);
        assert!(
            !text(&o.stderr).contains("lists no tensor"),
            "{bad:?}: {}",
            text(&o.stderr)
        );
    }
    std::fs::remove_dir_all(&ck).unwrap();
    // A trailing `/` on a file's OUT: refused before anything is converted.
    let o = run(&[
        &"convert",
        &f,
        &d.join("new.safetensors/"),
        &"--to",
        &"bf16",
    ]);
    fails(&o, &["rule 2", "ends in `/`"]);
    assert!(!text(&o.stderr).contains("rename"), "{}", text(&o.stderr));
    assert!(!d.join("new.safetensors").exists());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn activation_scales_go_with_their_weights_quantization() {
    let d = tmpdir("activation");
    let f = d.join("m.safetensors");
    // A ModelOpt NVFP4 layer and a compressed-tensors FP8 layer, each with an input_scale.
    raw(
        &f,
        &[
            ("n.weight", "U8", &[2, 8], &[0x21; 16]),
            ("n.weight_scale", "F8_E4M3", &[2, 1], &[0x38; 2]),
            ("n.weight_scale_2", "F32", &[], &f32s(&[0.5])),
            ("n.input_scale", "F32", &[], &f32s(&[3.0])),
            ("q.weight", "F8_E4M3", &[2, 16], &f8(32)),
            ("q.weight_scale", "F32", &[2, 1], &f32s(&[0.5, 2.0])),
            ("q.input_scale", "F32", &[1], &f32s(&[4.0])),
        ],
    );
    let names = |p: &Path| -> Vec<String> {
        let b = std::fs::read(p).unwrap();
        let st = safetensors::SafeTensors::deserialize(&b).unwrap();
        let mut v: Vec<String> = st.names().into_iter().map(str::to_string).collect();
        v.sort();
        v
    };
    let deq = d.join("deq.safetensors");
    ok(&run(&[&"convert", &f, &deq, &"--to", &"bf16", &"-q"]));
    assert_eq!(
        names(&deq),
        ["n.weight", "q.weight"],
        "activation scales dropped"
    );
    ok(&run(&[&"verify", &f, &deq, &"-q"]));
    let kept = d.join("kept.safetensors");
    ok(&run(&[&"convert", &f, &kept, &"--to", &"nvfp4", &"-q"]));
    assert_eq!(names(&kept), names(&f), "kept whole");
    ok(&run(&[&"verify", &f, &kept, &"-q"]));
    let p = run(&[&"convert", &f, &deq, &"--to", &"bf16", &"--dry-run"]);
    assert!(
        text(&p.stdout).contains("activation scales dropped: `n.input_scale`"),
        "{}",
        text(&p.stdout)
    );
    std::fs::remove_dir_all(&d).unwrap();
}
