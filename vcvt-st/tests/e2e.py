#!/usr/bin/env python3
"""End-to-end tests of the vcvt-st binary, with Python's safetensors, numpy and ml_dtypes as
the independent writer, reader and reference.

    python3 vcvt-st/tests/e2e.py path/to/vcvt-st

Checkpoints are written by `safetensors.serialize_file`, converted by vcvt-st, read back by
`safetensors.deserialize`, and compared value for value with conversions computed here:
ml_dtypes casts (round to nearest even), numpy float32 arithmetic in DeepSeek's order
(f32(e4m3) * scale_inv, then one rounding to bf16), MXFP4 from the E2M1 value table and
2^(scale - 127). Bad inputs must fail with a one-line error naming the file (and tensor),
a non-zero status, no output and an untouched input.
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings

import ml_dtypes
import numpy as np
from safetensors import TensorSpec, deserialize, safe_open, serialize_file

BIN = os.path.abspath(sys.argv[1])
# numpy warns when a reference cast overflows to inf, which is the expected result.
warnings.filterwarnings("ignore", "overflow encountered in cast", RuntimeWarning)
RNG = np.random.default_rng(20261201)
NP = {
    "F32": np.float32,
    "F16": np.float16,
    "BF16": ml_dtypes.bfloat16,
    "F8_E4M3": ml_dtypes.float8_e4m3fn,
    "U8": np.uint8,
    "I64": np.int64,
}
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], np.float32)
CHECKS = 0


def check(cond, what):
    global CHECKS
    CHECKS += 1
    if not cond:
        raise SystemExit(f"FAIL: {what}")


def save(path, tensors, metadata=None):
    """tensors: name -> numpy array (dtype from NP's values), as safetensors.numpy does."""
    keep = [np.ascontiguousarray(a) for a in tensors.values()]
    d = {
        n: TensorSpec(dtype=a.dtype.name, shape=list(a.shape), data_ptr=a.ctypes.data,
                      data_len=a.nbytes)
        for n, a in zip(tensors, keep)
    }
    serialize_file(d, path, metadata=metadata)


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    out = {}
    for name, v in deserialize(raw):
        out[name] = np.frombuffer(v["data"], NP[v["dtype"]]).reshape(v["shape"])
    with safe_open(path, framework="np") as f:
        meta = f.metadata()
    return out, meta


def run(*args, ok=True):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    if ok and p.returncode != 0:
        raise SystemExit(f"FAIL: vcvt-st {' '.join(map(str, args))}: {p.stderr}")
    return p


def same_bits(got, want, what):
    """Equal bit patterns, except that any NaN matches any NaN."""
    check(got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}")
    check(got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}")
    g = got.astype(np.float32)
    w = want.astype(np.float32)
    nan = np.isnan(w)
    check(np.array_equal(np.isnan(g), nan), f"{what}: NaN positions differ")
    ui = {1: np.uint8, 2: np.uint16, 4: np.uint32}[got.dtype.itemsize]
    gb = got.view(ui)[~nan]
    wb = want.view(ui)[~nan]
    bad = np.nonzero(gb != wb)[0]
    check(bad.size == 0, f"{what}: {bad.size} values differ, first at {bad[:5]}: "
          f"{gb[bad[:5]]} vs {wb[bad[:5]]}")


def digest(path):
    h = hashlib.sha256()
    for root, _, files in sorted(os.walk(path)) if os.path.isdir(path) else [("", [], [path])]:
        for f in sorted(files):
            with open(os.path.join(root, f), "rb") as fh:
                h.update(f.encode() + fh.read())
    return h.hexdigest()


def random_floats(shape, lo=-20, hi=20):
    m = RNG.uniform(-2, 2, shape).astype(np.float32)
    e = RNG.integers(lo, hi, shape)
    return np.ldexp(m, e).astype(np.float32)


# ---------------------------------------------------------------- references


def ref_fp8_dequant(codes, scale_inv, to):
    rows, cols = codes.shape
    s = np.repeat(np.repeat(scale_inv, 128, 0), 128, 1)[:rows, :cols]
    y = codes.astype(np.float32) * s  # f32 product, rounded to f32
    return y.astype(to)


def ref_mx_dequant(blocks, scales, to):
    lo = E2M1[blocks & 15]
    hi = E2M1[blocks >> 4]
    vals = np.stack([lo, hi], -1).reshape(*blocks.shape[:-1], 32)  # element 2j low nibble
    scale = np.ldexp(np.float32(1), scales.astype(np.int32) - 127).astype(np.float32)
    y = vals * scale[..., None]  # exact: <= 4 significant bits times a power of two
    return y.reshape(*blocks.shape[:-2], blocks.shape[-2] * 32).astype(to)


def ref_fp8_quant(x, b=128):
    rows, cols = x.shape
    codes = np.zeros((rows, cols), ml_dtypes.float8_e4m3fn)
    sinv = np.zeros(((rows + b - 1) // b, (cols + b - 1) // b), np.float32)
    for i in range(sinv.shape[0]):
        for j in range(sinv.shape[1]):
            t = x[i * b:(i + 1) * b, j * b:(j + 1) * b]
            amax = max(np.float32(np.abs(t).max()), np.float32(1e-4))
            s = np.float32(amax) / np.float32(448.0)
            codes[i * b:(i + 1) * b, j * b:(j + 1) * b] = (t / s).astype(np.float32).astype(
                ml_dtypes.float8_e4m3fn)
            sinv[i, j] = s
    return codes, sinv


def ref_mxfp4_quant(x):
    """The Ceil (RCEIL) rule: the smallest power of two >= f32(amax / 6)."""
    *pre, k = x.shape
    xb = x.reshape(-1, k // 32, 32)
    amax = np.abs(xb).max(-1).astype(np.float32)
    q = (amax / np.float32(6.0)).astype(np.float32)
    m, e = np.frexp(q)
    e = np.where(m == 0.5, e - 1, e)  # exact powers of two stay
    sbyte = np.clip(e + 127, 0, 254)
    sbyte = np.where(q == 0, 0, sbyte).astype(np.uint8)
    scale = np.ldexp(np.float32(1), sbyte.astype(np.int32) - 127).astype(np.float32)
    codes = (xb / scale[..., None]).astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 15
    packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
    return packed.reshape(*pre, k // 32, 16), sbyte.reshape(*pre, k // 32)


# ---------------------------------------------------------------- cases


def case_bf16_to_f16(d):
    x = random_floats((64, 96), -30, 30)
    x.flat[:6] = [np.inf, -np.inf, np.nan, 65520.0, -0.0, 1e-8]
    bf = x.astype(ml_dtypes.bfloat16)
    f32 = random_floats((96,))
    ids = np.arange(10, dtype=np.int64)
    big = random_floats((2049, 2049)).astype(ml_dtypes.bfloat16)  # > 4 Mi values: cast in steps
    src = os.path.join(d, "in.safetensors")
    save(src, {"w": bf, "norm.weight": f32, "position_ids": ids, "big": big},
         {"format": "pt", "note": "kept"})
    before = digest(src)
    out = os.path.join(d, "out.safetensors")
    run("convert", src, out, "--to", "f16")
    got, meta = load(out)
    same_bits(got["w"], bf.astype(np.float32).astype(np.float16), "bf16 -> f16")
    same_bits(got["norm.weight"], f32.astype(np.float16), "f32 -> f16")
    check(np.array_equal(got["position_ids"], ids), "I64 tensor copied")
    same_bits(got["big"], big.astype(np.float32).astype(np.float16), "bf16 -> f16, 4.2 Mi values")
    check(meta == {"format": "pt", "note": "kept"}, f"__metadata__ kept: {meta}")
    check(digest(src) == before, "input untouched")
    # The reverse direction: f16 back to f32 and bf16.
    back = os.path.join(d, "back.safetensors")
    run("convert", out, back, "--to", "f32")
    b, _ = load(back)
    same_bits(b["w"], got["w"].astype(np.float32), "f16 -> f32")
    run("convert", out, os.path.join(d, "back16.safetensors"), "--to", "bf16")
    b, _ = load(os.path.join(d, "back16.safetensors"))
    same_bits(b["w"], got["w"].astype(np.float32).astype(ml_dtypes.bfloat16), "f16 -> bf16")


def fp8_weight(rows, cols):
    codes = RNG.integers(0, 256, (rows, cols), dtype=np.uint8)
    codes[codes & 0x7F == 0x7F] = 0x42  # no NaN codes in real weights
    tr, tc = (rows + 127) // 128, (cols + 127) // 128
    sinv = np.ldexp(RNG.uniform(0.5, 1, (tr, tc)), RNG.integers(-12, 4, (tr, tc))).astype(np.float32)
    return codes.view(ml_dtypes.float8_e4m3fn), sinv


def case_fp8_dequant(d):
    w, s = fp8_weight(300, 200)  # 3x2 tiles, the last ones cropped
    w2, s2 = fp8_weight(128, 384)
    norm = random_floats((300,)).astype(ml_dtypes.bfloat16)
    src = os.path.join(d, "fp8.safetensors")
    save(src, {"a.weight": w, "a.weight_scale_inv": s, "b.weight": w2, "b.weight_scale_inv": s2,
               "a.norm": norm})
    out = os.path.join(d, "fp8-bf16.safetensors")
    run("convert", src, out, "--to", "bf16")
    got, _ = load(out)
    check(sorted(got) == ["a.norm", "a.weight", "b.weight"], f"companions consumed: {sorted(got)}")
    same_bits(got["a.weight"], ref_fp8_dequant(w, s, ml_dtypes.bfloat16), "fp8 300x200 -> bf16")
    same_bits(got["b.weight"], ref_fp8_dequant(w2, s2, ml_dtypes.bfloat16), "fp8 128x384 -> bf16")
    same_bits(got["a.norm"], norm, "bf16 norm kept")
    out = os.path.join(d, "fp8-f32.safetensors")
    run("convert", src, out, "--to", "f32")
    got, _ = load(out)
    same_bits(got["a.weight"], ref_fp8_dequant(w, s, np.float32), "fp8 -> f32")


def mx_tensors(e, rows, groups):
    blocks = RNG.integers(0, 256, (e, rows, groups, 16), dtype=np.uint8)
    scales = RNG.integers(110, 140, (e, rows, groups), dtype=np.uint8)
    return blocks, scales


def case_mx_dequant(d):
    b, s = mx_tensors(2, 6, 3)
    src = os.path.join(d, "mx.safetensors")
    save(src, {"experts.gate_up_proj_blocks": b, "experts.gate_up_proj_scales": s})
    out = os.path.join(d, "mx-bf16.safetensors")
    run("convert", src, out, "--to", "bf16")
    got, _ = load(out)
    check(sorted(got) == ["experts.gate_up_proj"], f"mx names: {sorted(got)}")
    same_bits(got["experts.gate_up_proj"], ref_mx_dequant(b, s, ml_dtypes.bfloat16), "mxfp4 -> bf16")


def case_sharded(d):
    ck = os.path.join(d, "ckpt")
    os.mkdir(ck)
    w, s = fp8_weight(260, 130)
    b, sc = mx_tensors(3, 4, 2)
    emb = random_floats((50, 32)).astype(ml_dtypes.bfloat16)
    save(os.path.join(ck, "model-00001-of-00002.safetensors"),
         {"layers.0.w.weight": w, "layers.0.w.weight_scale_inv": s}, {"format": "pt"})
    save(os.path.join(ck, "model-00002-of-00002.safetensors"),
         {"embed_tokens.weight": emb, "layers.0.experts.down_proj_blocks": b,
          "layers.0.experts.down_proj_scales": sc}, {"format": "pt"})
    index = {"metadata": {"total_size": 0}, "weight_map": {
        "layers.0.w.weight": "model-00001-of-00002.safetensors",
        "layers.0.w.weight_scale_inv": "model-00001-of-00002.safetensors",
        "embed_tokens.weight": "model-00002-of-00002.safetensors",
        "layers.0.experts.down_proj_blocks": "model-00002-of-00002.safetensors",
        "layers.0.experts.down_proj_scales": "model-00002-of-00002.safetensors"}}
    with open(os.path.join(ck, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f)
    config = {"architectures": ["X"], "torch_dtype": "bfloat16", "hidden_size": 32,
              "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}
    with open(os.path.join(ck, "config.json"), "w") as f:
        json.dump(config, f)
    with open(os.path.join(ck, "tokenizer.json"), "w") as f:
        f.write('{"tok": 1}')
    before = digest(ck)
    out = os.path.join(d, "ckpt-f16")
    p = run("convert", ck, out, "--to", "f16", "--dry-run")
    check(not os.path.exists(out), "--dry-run writes nothing")
    check("dequantize block FP8" in p.stdout, f"dry-run plan: {p.stdout}")
    p = run("inspect", ck)
    check("1 block-FP8 weight + weight_scale_inv, 1 MXFP4 blocks + scales" in p.stdout,
          f"inspect: {p.stdout}")
    run("convert", ck, out, "--to", "f16")
    check(digest(ck) == before, "input directory untouched")
    got = {}
    for f in sorted(os.listdir(out)):
        if f.endswith(".safetensors"):
            t, meta = load(os.path.join(out, f))
            check(meta.get("format") == "pt", f"{f}: format pt")
            got.update({n: (f, a) for n, a in t.items()})
    with open(os.path.join(out, "model.safetensors.index.json")) as f:
        idx = json.load(f)
    check(idx["weight_map"] == {n: f for n, (f, _) in got.items()}, f"weight_map: {idx['weight_map']}")
    total = sum(a.nbytes for _, a in got.values())
    check(idx["metadata"]["total_size"] == total, "total_size")
    same_bits(got["layers.0.w.weight"][1], ref_fp8_dequant(w, s, np.float16), "sharded fp8 -> f16")
    same_bits(got["layers.0.experts.down_proj"][1], ref_mx_dequant(b, sc, np.float16),
              "sharded mxfp4 -> f16")
    same_bits(got["embed_tokens.weight"][1], emb.astype(np.float32).astype(np.float16), "embedding")
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    check(cfg["torch_dtype"] == "float16" and "quantization_config" not in cfg
          and cfg["hidden_size"] == 32, f"config.json: {cfg}")
    with open(os.path.join(out, "tokenizer.json")) as f:
        check(f.read() == '{"tok": 1}', "other files copied")
    check(not [f for f in os.listdir(d) if "tmp" in f], f"no temporary files: {os.listdir(d)}")


def case_quantize(d):
    x = random_floats((256, 320), -8, 8)
    x[:, 5] *= 1000  # some tiles with a large amax
    x[128:, 256:] = 0  # an all-zero tile / blocks
    y = random_floats((4, 8, 64), -6, 6)
    xn = x.copy()
    xn[3, 300] = np.nan  # a NaN tile: its scale and codes are NaN, as in DeepSeek's kernel
    norm = random_floats((320,))
    src = os.path.join(d, "f32.safetensors")
    save(src, {"m.weight": x, "experts.w": y, "m.input_layernorm.weight": norm})
    out = os.path.join(d, "fp8.safetensors")
    run("convert", src, out, "--to", "f8e4m3")
    got, _ = load(out)
    codes, sinv = ref_fp8_quant(x)
    check("experts.w" in got and got["experts.w"].dtype == np.float32, "3-D kept by fp8")
    same_bits(got["m.weight_scale_inv"], sinv, "fp8 quantize: scale_inv")
    same_bits(got["m.weight"].view(np.uint8), codes.view(np.uint8), "fp8 quantize: codes")
    same_bits(got["m.input_layernorm.weight"], norm, "norm kept by default")
    # Python reads it back the DeepSeek way.
    same_bits(ref_fp8_dequant(got["m.weight"], got["m.weight_scale_inv"], np.float32),
              ref_fp8_dequant(codes, sinv, np.float32), "fp8 round trip")
    src_nan = os.path.join(d, "f32-nan.safetensors")
    save(src_nan, {"m.weight": xn})
    out = os.path.join(d, "fp8-nan.safetensors")
    run("convert", src_nan, out, "--to", "f8e4m3")
    got, _ = load(out)
    codes, sinv = ref_fp8_quant(xn)
    check(np.isnan(sinv[0, 2]) and np.isnan(got["m.weight_scale_inv"][0, 2]), "NaN tile scale")
    same_bits(got["m.weight_scale_inv"], sinv, "fp8 quantize with a NaN: scale_inv")
    same_bits(got["m.weight"].view(np.uint8), codes.view(np.uint8), "fp8 quantize with a NaN: codes")

    out = os.path.join(d, "mxfp4.safetensors")
    run("convert", src, out, "--to", "mxfp4")
    got, _ = load(out)
    for name, a in [("m.weight", x), ("experts.w", y)]:
        pb, ps = ref_mxfp4_quant(a)
        same_bits(got[name + "_blocks"], pb, f"mxfp4 quantize {name}: blocks")
        same_bits(got[name + "_scales"], ps, f"mxfp4 quantize {name}: scales")
    check("m.input_layernorm.weight" in got, "norm kept")
    # Round trip through vcvt-st's own dequantization.
    back = os.path.join(d, "mxfp4-f32.safetensors")
    run("convert", out, back, "--to", "f32")
    b, _ = load(back)
    pb, ps = ref_mxfp4_quant(y)
    same_bits(b["experts.w"], ref_mx_dequant(pb, ps, np.float32), "mxfp4 dequantized back")
    # --include / --exclude
    out = os.path.join(d, "only.safetensors")
    run("convert", src, out, "--to", "bf16", "--exclude", "experts.*")
    got, _ = load(out)
    check(got["experts.w"].dtype == np.float32 and got["m.weight"].dtype == ml_dtypes.bfloat16,
          "--exclude")


def expect_failure(d, args, needles, outputs):
    inputs = [a for a in args if os.path.exists(a) and a not in outputs]
    before = [digest(a) for a in inputs]
    listing = sorted(os.listdir(d))
    p = run(*args, ok=False)
    err = p.stderr.strip()
    check(p.returncode != 0, f"{args}: exit status {p.returncode}")
    check(len(err.splitlines()) == 1, f"{args}: one-line error, got {err!r}")
    for n in needles:
        check(n in err, f"{args}: error {err!r} names {n!r}")
    for o in outputs:
        check(not os.path.exists(o), f"{args}: no output {o}")
    check(sorted(os.listdir(d)) == listing, f"{args}: no files left behind")
    check([digest(a) for a in inputs] == before, f"{args}: input untouched")


def raw_file(path, header, data):
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + data)


def case_errors(d):
    e = os.path.join(d, "err")
    os.mkdir(e)
    out = os.path.join(e, "out.safetensors")
    # Missing companions.
    b, s = mx_tensors(1, 2, 2)
    p = os.path.join(e, "noscales.safetensors")
    save(p, {"x_blocks": b})
    expect_failure(e, ["convert", p, out, "--to", "bf16"], [p, "x_blocks", "x_scales"], [out])
    w, si = fp8_weight(10, 10)
    p = os.path.join(e, "nosinv.safetensors")
    save(p, {"a.weight": w, "a.weight_scale_inv": si, "b.weight": w})
    expect_failure(e, ["convert", p, out, "--to", "bf16"], [p, "b.weight", "b.weight_scale_inv"], [out])
    # A truncated file.
    good = os.path.join(e, "good.safetensors")
    save(good, {"w": random_floats((64, 64)).astype(ml_dtypes.bfloat16)})
    p = os.path.join(e, "truncated.safetensors")
    with open(good, "rb") as f:
        raw = f.read()
    with open(p, "wb") as f:
        f.write(raw[:-100])
    expect_failure(e, ["convert", p, out, "--to", "f16"], [p], [out])
    # Headers that lie: offsets beyond the file, overlapping offsets, an unknown dtype.
    p = os.path.join(e, "beyond.safetensors")
    raw_file(p, {"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8)
    expect_failure(e, ["convert", p, out, "--to", "f16"], [p], [out])
    p = os.path.join(e, "overlap.safetensors")
    raw_file(p, {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                 "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, b"\0" * 12)
    expect_failure(e, ["convert", p, out, "--to", "f16"], [p], [out])
    p = os.path.join(e, "dtype.safetensors")
    raw_file(p, {"w": {"dtype": "F9", "shape": [2], "data_offsets": [0, 2]}}, b"\0" * 2)
    expect_failure(e, ["convert", p, out, "--to", "f16"], [p], [out])
    # The output is the input; an existing output directory.
    expect_failure(e, ["convert", good, good, "--to", "f16"], [good], [])
    ck = os.path.join(e, "ck")
    os.mkdir(ck)
    save(os.path.join(ck, "model.safetensors"), {"w": random_floats((4, 4))})
    os.mkdir(os.path.join(e, "exists"))
    expect_failure(e, ["convert", ck, os.path.join(e, "exists"), "--to", "f16"], ["exists"], [])
    os.rmdir(os.path.join(e, "exists"))
    # Unwritable outputs: below a file, in a directory that does not exist.
    o = os.path.join(good, "out.safetensors")
    expect_failure(e, ["convert", good, o, "--to", "f16"], [o], [o])
    o = os.path.join(e, "missing", "out")
    expect_failure(e, ["convert", ck, o, "--to", "f16"], ["missing"], [o])
    # A read-only output directory. Root ignores permission bits, so as root the directory
    # is made immutable instead (chattr +i, which binds root too on ext4/xfs/btrfs); where
    # that is not possible either, the case is skipped and says so.
    ro = os.path.join(e, "ro")
    os.mkdir(ro)
    if os.geteuid() != 0:
        os.chmod(ro, 0o555)
        lock, unlock = True, lambda: os.chmod(ro, 0o755)
    else:
        lock = subprocess.run(["chattr", "+i", ro], capture_output=True).returncode == 0
        unlock = lambda: subprocess.run(["chattr", "-i", ro], check=True)
    if lock:
        try:
            o = os.path.join(ro, "out.safetensors")
            expect_failure(e, ["convert", good, o, "--to", "f16"], [o], [o])
            check(os.listdir(ro) == [], "read-only directory left empty")
        finally:
            unlock()
    else:
        print("skipped: read-only output directory (running as root, chattr +i not possible here)")
    os.rmdir(ro)
    # An interrupted run leaves no output (the rename happens last).
    big = os.path.join(e, "big.safetensors")
    save(big, {f"w{i}": np.ones((1024, 4096), np.float32) for i in range(24)})
    o = os.path.join(e, "big-out.safetensors")
    proc = subprocess.Popen([BIN, "convert", big, o, "--to", "bf16"], stderr=subprocess.DEVNULL)
    time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    check(not os.path.exists(o), "killed run: no output")


def main():
    start = time.time()
    with tempfile.TemporaryDirectory() as d:
        for case in [case_bf16_to_f16, case_fp8_dequant, case_mx_dequant, case_sharded,
                     case_quantize, case_errors]:
            t = time.time()
            sub = os.path.join(d, case.__name__)
            os.mkdir(sub)
            case(sub)
            print(f"ok {case.__name__} ({time.time() - t:.1f} s)")
    print(f"vcvt-st end to end: {CHECKS} checks passed in {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
