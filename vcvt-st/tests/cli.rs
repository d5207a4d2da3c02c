//! Rust-only end-to-end tests of the binary on files these tests write with the
//! `safetensors` crate, checked against the `half` and `float8` crates (the Python
//! cross-check is `tests/e2e.py`, run by `.ci/st.sh`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::Command;

use safetensors::tensor::{TensorView, View};
use safetensors::{Dtype, SafeTensors};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vcvt-st"))
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vcvt-st-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

struct T {
    dtype: Dtype,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl View for &T {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

fn write(path: &Path, tensors: &[(&str, T)]) {
    safetensors::serialize_to_file(tensors.iter().map(|(n, t)| (*n, t)), None, path).unwrap();
}

fn read(path: &Path) -> Vec<(String, Dtype, Vec<usize>, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let mut v: Vec<_> = st
        .tensors()
        .into_iter()
        .map(|(n, t): (String, TensorView<'_>)| {
            (n, t.dtype(), t.shape().to_vec(), t.data().to_vec())
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn u16s(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

/// Deterministic pseudo-random bytes.
fn bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

#[test]
fn bf16_to_f16_matches_half() {
    let d = tmpdir("cast");
    let data: Vec<u8> = bytes(2 * 40 * 50, 1);
    let src = d.join("in.safetensors");
    write(
        &src,
        &[(
            "w",
            T {
                dtype: Dtype::BF16,
                shape: vec![40, 50],
                data: data.clone(),
            },
        )],
    );
    let out = d.join("out.safetensors");
    let st = bin()
        .args(["convert", "-q"])
        .arg(&src)
        .arg(&out)
        .args(["--to", "f16"])
        .status()
        .unwrap();
    assert!(st.success());
    let got = read(&out);
    assert_eq!(got[0].1, Dtype::F16);
    for (g, b) in u16s(&got[0].3).into_iter().zip(u16s(&data)) {
        let x = half::bf16::from_bits(b).to_f32();
        let want = half::f16::from_f32(x);
        if x.is_nan() {
            assert!(half::f16::from_bits(g).is_nan());
        } else {
            assert_eq!(g, want.to_bits(), "bf16 {b:#06x}");
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn deepseek_fp8_dequantizes_like_the_reference() {
    let d = tmpdir("fp8");
    let (rows, cols) = (200usize, 130usize); // 2x2 tiles, cropped at the edges
    let mut codes = bytes(rows * cols, 2);
    for c in &mut codes {
        if *c & 0x7F == 0x7F {
            *c = 0x40;
        }
    }
    let scales = [0.5f32, 0.001, 3.0, 1.0e-5];
    let sbytes: Vec<u8> = scales.iter().flat_map(|s| s.to_le_bytes()).collect();
    let src = d.join("in.safetensors");
    write(
        &src,
        &[
            (
                "l.weight",
                T {
                    dtype: Dtype::F8_E4M3,
                    shape: vec![rows, cols],
                    data: codes.clone(),
                },
            ),
            (
                "l.weight_scale_inv",
                T {
                    dtype: Dtype::F32,
                    shape: vec![2, 2],
                    data: sbytes,
                },
            ),
        ],
    );
    let out = d.join("out.safetensors");
    assert!(
        bin()
            .arg("convert")
            .arg(&src)
            .arg(&out)
            .args(["--to", "bf16"])
            .status()
            .unwrap()
            .success()
    );
    let got = read(&out);
    assert_eq!(got.len(), 1, "the scale_inv is consumed");
    let vals = u16s(&got[0].3);
    for r in 0..rows {
        for c in 0..cols {
            let s = scales[(r / 128) * 2 + c / 128];
            let y = float8::F8E4M3::from_bits(codes[r * cols + c]).to_f32() * s;
            assert_eq!(
                vals[r * cols + c],
                half::bf16::from_f32(y).to_bits(),
                "({r}, {c})"
            );
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn mxfp4_blocks_dequantize_by_the_table() {
    let d = tmpdir("mx");
    let blocks = bytes(3 * 2 * 16, 3);
    let scales = vec![120u8, 127, 130, 135, 126, 0];
    let src = d.join("in.safetensors");
    write(
        &src,
        &[
            (
                "e.up_blocks",
                T {
                    dtype: Dtype::U8,
                    shape: vec![3, 2, 16],
                    data: blocks.clone(),
                },
            ),
            (
                "e.up_scales",
                T {
                    dtype: Dtype::U8,
                    shape: vec![3, 2],
                    data: scales.clone(),
                },
            ),
        ],
    );
    let out = d.join("out.safetensors");
    assert!(
        bin()
            .arg("convert")
            .arg(&src)
            .arg(&out)
            .args(["--to", "f32"])
            .status()
            .unwrap()
            .success()
    );
    let got = read(&out);
    assert_eq!((got[0].0.as_str(), &got[0].2), ("e.up", &vec![3, 64]));
    let table = [0.0f32, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let f: Vec<f32> = got[0]
        .3
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for (i, &g) in f.iter().enumerate() {
        let byte = blocks[i / 2];
        let nib = if i % 2 == 0 { byte & 15 } else { byte >> 4 };
        let v = table[(nib & 7) as usize] * if nib & 8 != 0 { -1.0 } else { 1.0 };
        let want = v * 2f32.powi(scales[i / 32] as i32 - 127);
        assert_eq!(g.to_bits(), want.to_bits(), "value {i}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_inputs_fail_without_output() {
    let d = tmpdir("bad");
    let out = d.join("out.safetensors");
    let src = d.join("noscales.safetensors");
    write(
        &src,
        &[(
            "x_blocks",
            T {
                dtype: Dtype::U8,
                shape: vec![2, 16],
                data: vec![0; 32],
            },
        )],
    );
    let o = bin()
        .arg("convert")
        .arg(&src)
        .arg(&out)
        .args(["--to", "bf16"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("noscales.safetensors") && err.contains("`x_scales`"),
        "{err}"
    );
    assert!(!out.exists());

    let good = d.join("good.safetensors");
    write(
        &good,
        &[(
            "w",
            T {
                dtype: Dtype::F32,
                shape: vec![64],
                data: vec![0; 256],
            },
        )],
    );
    let mut raw = std::fs::read(&good).unwrap();
    raw.truncate(raw.len() - 10);
    let trunc = d.join("trunc.safetensors");
    std::fs::write(&trunc, &raw).unwrap();
    let o = bin()
        .arg("convert")
        .arg(&trunc)
        .arg(&out)
        .args(["--to", "bf16"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("trunc.safetensors"));
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        3,
        "no temporary files left"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Tensors larger than `convert`'s step (4 Mi values) and chunk (256 KiB of output), so
/// that each is converted and written in several pieces: a cast, block FP8 with cropped
/// edge tiles (wide rows: chunks inside a tile row; narrow rows: chunks of whole tile
/// rows), and MXFP4 blocks.
#[test]
fn tensors_of_several_pieces_convert_whole() {
    let d = tmpdir("pieces");
    let (rows, cols) = (4100usize, 1030usize); // 33 x 9 tiles of 128, cropped at the edges
    let mut codes = bytes(rows * cols, 5);
    for c in &mut codes {
        if *c & 0x7F == 0x7F {
            *c = 0x40;
        }
    }
    let (tr, tc) = (rows.div_ceil(128), cols.div_ceil(128));
    let scales: Vec<f32> = (0..tr * tc).map(|i| 0.001 * (i % 97 + 1) as f32).collect();
    let sbytes: Vec<u8> = scales.iter().flat_map(|s| s.to_le_bytes()).collect();
    let cast: Vec<f32> = bytes(4 * rows * cols, 6)
        .chunks_exact(4)
        .map(|c| (u32::from_le_bytes(c.try_into().unwrap()) as f32 / 4e9 - 0.5) * 1e3)
        .collect();
    let (experts, mrows) = (70000usize, 2usize); // 140000 rows of 64 values
    let blocks = bytes(experts * mrows * 2 * 16, 7);
    let mscales: Vec<u8> = bytes(experts * mrows * 2, 8)
        .iter()
        .map(|b| 112 + b % 32)
        .collect();
    let (nrows, ncols) = (7000usize, 40usize); // 55 x 1 tiles, chunks of 25 tile rows
    let ncodes = bytes(nrows * ncols, 9)
        .into_iter()
        .map(|c| if c & 0x7F == 0x7F { 0x3F } else { c })
        .collect::<Vec<u8>>();
    let nscales: Vec<f32> = (0..nrows.div_ceil(128))
        .map(|i| 0.25 + i as f32 / 64.0)
        .collect();
    let src = d.join("in.safetensors");
    write(
        &src,
        &[
            (
                "n.weight",
                T {
                    dtype: Dtype::F8_E4M3,
                    shape: vec![nrows, ncols],
                    data: ncodes.clone(),
                },
            ),
            (
                "n.weight_scale_inv",
                T {
                    dtype: Dtype::F32,
                    shape: vec![nscales.len(), 1],
                    data: nscales.iter().flat_map(|s| s.to_le_bytes()).collect(),
                },
            ),
            (
                "l.weight",
                T {
                    dtype: Dtype::F8_E4M3,
                    shape: vec![rows, cols],
                    data: codes.clone(),
                },
            ),
            (
                "l.weight_scale_inv",
                T {
                    dtype: Dtype::F32,
                    shape: vec![tr, tc],
                    data: sbytes,
                },
            ),
            (
                "c.weight",
                T {
                    dtype: Dtype::F32,
                    shape: vec![rows, cols],
                    data: cast.iter().flat_map(|x| x.to_le_bytes()).collect(),
                },
            ),
            (
                "e.up_blocks",
                T {
                    dtype: Dtype::U8,
                    shape: vec![experts, mrows, 2, 16],
                    data: blocks.clone(),
                },
            ),
            (
                "e.up_scales",
                T {
                    dtype: Dtype::U8,
                    shape: vec![experts, mrows, 2],
                    data: mscales.clone(),
                },
            ),
        ],
    );
    let out = d.join("out.safetensors");
    assert!(
        bin()
            .arg("convert")
            .arg(&src)
            .arg(&out)
            .args(["--to", "bf16", "-q"])
            .status()
            .unwrap()
            .success()
    );
    let got = read(&out);
    let names: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
    assert_eq!(names, ["c.weight", "e.up", "l.weight", "n.weight"]);
    let bf = |x: f32| half::bf16::from_f32(x).to_bits();

    let c = u16s(&got[0].3);
    assert_eq!(c.len(), cast.len());
    for (i, (&g, &x)) in c.iter().zip(&cast).enumerate() {
        assert_eq!(g, bf(x), "c.weight value {i}");
    }

    let e = u16s(&got[1].3);
    assert_eq!(got[1].2, vec![experts, mrows, 64]);
    let table = [0.0f32, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    for (i, &g) in e.iter().enumerate() {
        let byte = blocks[i / 2];
        let nib = if i % 2 == 0 { byte & 15 } else { byte >> 4 };
        let v = table[(nib & 7) as usize] * if nib & 8 != 0 { -1.0 } else { 1.0 };
        let want = v * 2f32.powi(mscales[i / 32] as i32 - 127);
        assert_eq!(g, bf(want), "e.up value {i}");
    }

    let l = u16s(&got[2].3);
    assert_eq!(l.len(), rows * cols);
    for r in 0..rows {
        for c in 0..cols {
            let s = scales[(r / 128) * tc + c / 128];
            let y = float8::F8E4M3::from_bits(codes[r * cols + c]).to_f32() * s;
            assert_eq!(l[r * cols + c], bf(y), "l.weight ({r}, {c})");
        }
    }

    let n = u16s(&got[3].3);
    assert_eq!(n.len(), nrows * ncols);
    for (i, &g) in n.iter().enumerate() {
        let y = float8::F8E4M3::from_bits(ncodes[i]).to_f32() * nscales[i / ncols / 128];
        assert_eq!(g, bf(y), "n.weight value {i}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// SIGINT, SIGTERM or SIGHUP in the middle of a run: exit status 130, a one-line message,
/// no output and no temporary file or directory left, the input untouched. The run is
/// slowed by a pause after each tensor (`VCVT_ST_TEST_PAUSE_MS`) so that the signal
/// arrives while the temporary exists.
#[cfg(unix)]
#[test]
fn an_interrupted_run_leaves_nothing() {
    use std::time::{Duration, Instant};
    let d = tmpdir("interrupt");
    let input = d.join("in");
    std::fs::create_dir(&input).unwrap();
    let tensors: Vec<(String, T)> = (0..4)
        .map(|i| {
            (
                format!("t{i}"),
                T {
                    dtype: Dtype::BF16,
                    shape: vec![64],
                    data: bytes(128, i),
                },
            )
        })
        .collect();
    let src = input.join("model.safetensors");
    let refs: Vec<(&str, T)> = tensors
        .iter()
        .map(|(n, t)| {
            (
                n.as_str(),
                T {
                    dtype: t.dtype,
                    shape: t.shape.clone(),
                    data: t.data.clone(),
                },
            )
        })
        .collect();
    write(&src, &refs);
    let before = std::fs::read(&src).unwrap();
    for (signal, target) in [("INT", "file"), ("TERM", "dir"), ("HUP", "file")] {
        let (from, out) = if target == "file" {
            (src.clone(), d.join("out.safetensors"))
        } else {
            (input.clone(), d.join("out"))
        };
        let child = bin()
            .env("VCVT_ST_TEST_PAUSE_MS", "400")
            .arg("convert")
            .arg(&from)
            .arg(&out)
            .args(["--to", "f16", "-q"])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the temporary exists (a hidden sibling of the output: a file, or the
        // directory `.out.vcvt-st-partial`).
        let start = Instant::now();
        let temp = loop {
            let found = std::fs::read_dir(&d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .find(|n| n.contains("vcvt-st-tmp") || n.contains("vcvt-st-partial"));
            if let Some(n) = found {
                break n;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "no temporary appeared"
            );
            std::thread::sleep(Duration::from_millis(5));
        };
        // The shell's built-in `kill` (a `kill` executable is not on every system).
        let killed = Command::new("sh")
            .args(["-c", &format!("kill -{signal} {}", child.id())])
            .status()
            .unwrap();
        assert!(killed.success());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(130), "SIG{signal}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("interrupted"), "{err}");
        assert!(!out.exists(), "SIG{signal}: output left");
        assert!(!d.join(&temp).exists(), "SIG{signal}: {temp} left");
        let names: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["in"], "SIG{signal}: only the input remains");
        assert_eq!(std::fs::read(&src).unwrap(), before, "input untouched");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Every file under `root` (relative path → bytes), following links.
fn tree(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// A 4-shard F32 checkpoint with an index, a config and a nested file.
fn sharded(dir: &Path) {
    std::fs::create_dir_all(dir.join("tokenizer")).unwrap();
    let mut wm = Vec::new();
    for i in 0..4 {
        let name = format!("model-{:05}-of-00004.safetensors", i + 1);
        let (w, n) = (format!("l{i}.weight"), format!("l{i}.norm"));
        write(
            &dir.join(&name),
            &[
                (
                    w.as_str(),
                    T {
                        dtype: Dtype::F32,
                        shape: vec![64, 96],
                        data: bytes(4 * 64 * 96, 10 + i)
                            .chunks(4)
                            // Finite floats: a random sign and mantissa, exponents near 1.
                            .flat_map(|c| {
                                let bits = (u32::from_le_bytes([c[0], c[1], c[2], c[3]])
                                    & 0x807F_FFFF)
                                    | 0x3F00_0000;
                                bits.to_le_bytes()
                            })
                            .collect(),
                    },
                ),
                (
                    n.as_str(),
                    T {
                        dtype: Dtype::F32,
                        shape: vec![96],
                        data: [1.0f32.to_le_bytes(); 96].concat(),
                    },
                ),
            ],
        );
        wm.push(format!("\"{w}\": \"{name}\", \"{n}\": \"{name}\""));
    }
    std::fs::write(
        dir.join("model.safetensors.index.json"),
        format!("{{\"weight_map\": {{{}}}}}", wm.join(", ")),
    )
    .unwrap();
    std::fs::write(dir.join("config.json"), "{\"model_type\": \"llama\"}").unwrap();
    std::fs::write(dir.join("tokenizer/vocab.txt"), "a\nb\n").unwrap();
}

/// `--shard I/N` processes started together, then `finalize`, give the bytes of one process;
/// `finalize` refuses while a shard is missing; `verify` passes, and fails on a changed byte.
#[test]
fn fan_out_finalize_and_verify() {
    let d = tmpdir("fanout");
    let input = d.join("in");
    sharded(&input);
    let opts = ["--to", "nvfp4", "--unquantized-to", "bf16", "-q"];
    let one = d.join("one");
    assert!(
        bin()
            .arg("convert")
            .arg(&input)
            .arg(&one)
            .args(opts)
            .status()
            .unwrap()
            .success()
    );
    let fan = d.join("fan");
    // Process 2 of 3 first, alone: finalize must list what is missing and write nothing.
    let run = |i: usize| {
        bin()
            .arg("convert")
            .arg(&input)
            .arg(&fan)
            .args(opts)
            .arg("--shard")
            .arg(format!("{i}/3"))
            .spawn()
            .unwrap()
    };
    assert!(run(2).wait().unwrap().success());
    let finalize = || {
        bin()
            .arg("finalize")
            .arg(&input)
            .arg(&fan)
            .output()
            .unwrap()
    };
    let o = finalize();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    for missing in [
        "model-00001-of-00004",
        "model-00002-of-00004",
        "model-00004-of-00004",
    ] {
        assert!(err.contains(missing), "{err}");
    }
    assert!(!err.contains("model-00003-of-00004"), "{err}");
    // The shard and the settings record of its run.
    assert_eq!(tree(&fan).len(), 2, "finalize wrote nothing");
    let children: Vec<_> = (0..2).map(run).collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    assert!(finalize().status.success());
    assert_eq!(
        tree(&fan),
        tree(&one),
        "fan-out output == one-process output"
    );

    let verify = |out: &Path| bin().arg("verify").arg(&input).arg(out).output().unwrap();
    let o = verify(&fan);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("4 quantize nvfp4") && text.contains("0 violations"),
        "{text}"
    );
    // One byte of one packed weight changed.
    let shard = fan.join("model-00003-of-00004.safetensors");
    let mut b = std::fs::read(&shard).unwrap();
    let n = b.len();
    b[n - 1000] ^= 0x44;
    std::fs::write(&shard, b).unwrap();
    let o = verify(&fan);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("1 violations"), "{text}");
    std::fs::remove_dir_all(&d).unwrap();
}
