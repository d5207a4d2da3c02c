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
import re
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
            p = os.path.join(root, f)
            if os.path.islink(p) and not os.path.exists(p):  # a dangling link: its target
                h.update(f.encode() + os.readlink(p).encode())
                continue
            with open(p, "rb") as fh:
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


def pow2_ceil(q):
    """The smallest power of two >= q (q > 0, float32), as float32; 0 stays 0."""
    m, e = np.frexp(q)
    e = np.where(m == 0.5, e - 1, e)  # exact powers of two stay
    return np.where(q == 0, np.float32(0), np.ldexp(np.float32(1), e)).astype(np.float32)


def ref_fp8_quant_ue8m0(x, b=128):
    """DeepSeek-V3.1's ue8m0: the scale amax/448 rounded up to a power of two."""
    rows, cols = x.shape
    codes = np.zeros((rows, cols), ml_dtypes.float8_e4m3fn)
    sinv = np.zeros(((rows + b - 1) // b, (cols + b - 1) // b), np.float32)
    for i in range(sinv.shape[0]):
        for j in range(sinv.shape[1]):
            t = x[i * b:(i + 1) * b, j * b:(j + 1) * b]
            amax = max(np.float32(np.abs(t).max()), np.float32(1e-4))
            s = pow2_ceil(np.float32(amax) / np.float32(448.0))
            codes[i * b:(i + 1) * b, j * b:(j + 1) * b] = np.clip(t / s, -448, 448).astype(
                np.float32).astype(ml_dtypes.float8_e4m3fn)
            sinv[i, j] = s
    return codes, sinv


def ref_mxfp8_quant(x):
    """MXFP8 with the Ceil rule: scale 2^k, the smallest >= f32(amax / 448); E4M3 elements
    x / 2^k rounded to nearest even (saturating); E8M0 scale bytes k + 127 (0 for a zero block)."""
    *pre, k = x.shape
    xb = x.reshape(-1, k // 32, 32)
    amax = np.abs(xb).max(-1).astype(np.float32)
    scale = pow2_ceil((amax / np.float32(448.0)).astype(np.float32))
    sbyte = np.where(scale == 0, 0, np.frexp(scale)[1] - 1 + 127).astype(np.uint8)
    scale = np.ldexp(np.float32(1), sbyte.astype(np.int32) - 127).astype(np.float32)
    codes = np.clip(xb / scale[..., None], -448, 448).astype(ml_dtypes.float8_e4m3fn)
    return codes.reshape(x.shape), sbyte.reshape(*pre, k // 32)


def ref_nvfp4_quant(x):
    """NVIDIA ModelOpt's NVFP4 weight quantization (NVFP4QTensor), every step an f32 operation:
    weight_scale_2 g = amax / (6 * 448); per block of 16, e4m3(amax_b / (6 g)) (0 -> 1.0 first),
    saturating; elements e2m1(x / (f32(s8) * g)), nearest even, saturating, -0 -> +0; packed
    two per byte, element 2j in the low nibble."""
    f = np.float32
    rows, k = x.shape
    g = f(f(np.abs(x).max()) / f(2688.0))
    xb = x.reshape(rows, k // 16, 16)
    amax = np.abs(xb).max(-1).astype(f)
    q = (amax / f(f(6.0) * g)).astype(f)
    q = np.where(q == 0, f(1.0), q)
    s8 = np.minimum(q, f(448.0)).astype(ml_dtypes.float8_e4m3fn)
    denom = (s8.astype(f) * g).astype(f)
    with np.errstate(divide="ignore"):  # a scale that rounds to E4M3 zero: x / 0, as ModelOpt
        y = np.clip((xb / denom[..., None]).astype(f), -6, 6)
    codes = y.astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 15
    codes = np.where(y == 0, 0, codes).astype(np.uint8)
    packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
    return packed.reshape(rows, k // 2), s8, np.array(g, np.float32)


def ref_nvfp4_dequant(packed, s8, g):
    lo, hi = E2M1[packed & 15], E2M1[packed >> 4]
    vals = np.stack([lo, hi], -1).reshape(packed.shape[0], -1)
    scale = (s8.astype(np.float32) * np.float32(g)).astype(np.float32)
    return (vals * np.repeat(scale, 16, 1)).astype(np.float32)


def case_targets(d):
    x = random_floats((96, 256), -6, 6)
    x[:, 7] *= 300  # blocks with a large amax
    x[5, 32:64] = 0  # zero blocks
    x[6, 16:32] = np.float32(1e-6)  # a block whose NVFP4 scale is an E4M3 subnormal
    y = random_floats((2, 16, 64), -4, 4)
    norm = random_floats((256,))
    bf = x.astype(ml_dtypes.bfloat16)
    src = os.path.join(d, "w.safetensors")
    save(src, {"m.weight": x, "m.up.weight": bf, "experts.w": y, "m.norm.weight": norm})

    out = os.path.join(d, "nvfp4.safetensors")
    run("convert", src, out, "--to", "nvfp4")
    got, _ = load(out)
    for name, a in [("m.weight", x), ("m.up.weight", bf.astype(np.float32))]:
        pk, s8, g = ref_nvfp4_quant(a)
        same_bits(got[name + "_scale_2"], g, f"nvfp4 {name}: weight_scale_2")
        same_bits(got[name + "_scale"], s8, f"nvfp4 {name}: weight_scale (E4M3)")
        same_bits(got[name], pk, f"nvfp4 {name}: packed weight")
        check(got[name].dtype == np.uint8 and got[name].shape == (96, 128), "nvfp4 layout")
        deq = ref_nvfp4_dequant(got[name], got[name + "_scale"], got[name + "_scale_2"])
        # Within one E2M1 step (at most 2, between 4 and 6) of the block's scale, or the value
        # itself where the scale rounded to zero.
        step = np.repeat((s8.astype(np.float32) * g).astype(np.float32), 16, 1)
        err = np.abs(deq - a)
        check(np.all((err <= step * 1.0001) | ((step == 0) & (err <= np.abs(a)))),
              f"nvfp4 {name}: dequantized within a step")
    same_bits(got["experts.w"], y, "nvfp4 keeps 3-D tensors")
    same_bits(got["m.norm.weight"], norm, "nvfp4 keeps norms")
    p = run("verify", src, out)
    check("0 violations" in p.stdout, f"verify nvfp4: {p.stdout}")
    # Back to f32 (ModelOpt's order: e2m1 * f32(f32(s8) * g)), and verify that too.
    back = os.path.join(d, "nvfp4-f32.safetensors")
    p = run("convert", out, back, "--to", "f32")
    b, _ = load(back)
    for name in ["m.weight", "m.up.weight"]:
        same_bits(b[name], ref_nvfp4_dequant(got[name], got[name + "_scale"],
                                              got[name + "_scale_2"]), f"nvfp4 {name} -> f32")
    check(sorted(b) == ["experts.w", "m.norm.weight", "m.up.weight", "m.weight"],
          f"nvfp4 companions consumed: {sorted(b)}")
    p = run("verify", out, back)
    check("2 dequantize nvfp4" in p.stdout and "0 violations" in p.stdout,
          f"verify nvfp4 -> f32: {p.stdout}")

    out = os.path.join(d, "mxfp8.safetensors")
    run("convert", src, out, "--to", "mxfp8")
    got, _ = load(out)
    for name, a in [("m.weight", x), ("experts.w", y), ("m.up.weight", bf.astype(np.float32))]:
        codes, sb = ref_mxfp8_quant(a)
        same_bits(got[name].view(np.uint8), codes.view(np.uint8), f"mxfp8 {name}: E4M3 codes")
        check(got[name].dtype == ml_dtypes.float8_e4m3fn, "mxfp8: F8_E4M3 weight")
        same_bits(got[name + "_scale"], sb, f"mxfp8 {name}: E8M0 scales")
    p = run("verify", src, out)
    check("0 violations" in p.stdout, f"verify mxfp8: {p.stdout}")
    back = os.path.join(d, "mxfp8-bf16.safetensors")
    run("convert", out, back, "--to", "bf16")
    b, _ = load(back)
    for name in ["m.weight", "experts.w"]:
        codes, sb = got[name], got[name + "_scale"]
        scale = np.ldexp(np.float32(1), sb.astype(np.int32) - 127).astype(np.float32)
        want = (codes.astype(np.float32).reshape(*sb.shape, 32) * scale[..., None])
        same_bits(b[name], want.reshape(codes.shape).astype(ml_dtypes.bfloat16),
                  f"mxfp8 {name} -> bf16")
    p = run("verify", out, back)
    check("3 dequantize mxfp8" in p.stdout and "0 violations" in p.stdout,
          f"verify mxfp8 -> bf16: {p.stdout}")

    # --dry-run's estimate, on a sample that is the whole tensor here, is verify's measure of
    # the file written.
    for target in ["nvfp4", "mxfp8", "mxfp4", "f8e4m3"]:
        out = os.path.join(d, f"est-{target}.safetensors")
        p = run("convert", src, out, "--to", target, "--dry-run")
        est = re.search(r"^m\.weight: .*\[estimate on 96x256: rel RMS (\S+), max abs (\S+)\]$",
                        p.stdout, re.M)
        check(est is not None, f"dry-run --to {target} estimate: {p.stdout}")
        run("convert", src, out, "--to", target)
        v = re.search(r"^m\.weight +quantize \S+ +\S+ -> \S+ +(\S+) +(\S+) ", run("verify", src, out).stdout,
                      re.M)
        check(v is not None and abs(float(est[1]) - float(v[1])) <= 0.006 * float(v[1])
              and abs(float(est[2]) - float(v[2])) <= 0.006 * float(v[2]),
              f"--to {target}: estimate {est.groups()} vs verify {v and v.groups()}")

    out = os.path.join(d, "ue8m0.safetensors")
    run("convert", src, out, "--to", "f8e4m3", "--fp8-profile", "ue8m0")
    got, _ = load(out)
    codes, sinv = ref_fp8_quant_ue8m0(x)
    same_bits(got["m.weight_scale_inv"], sinv, "fp8 ue8m0: power-of-two scale_inv")
    same_bits(got["m.weight"].view(np.uint8), codes.view(np.uint8), "fp8 ue8m0: codes")
    p = run("verify", src, out)
    check("0 violations" in p.stdout, f"verify ue8m0: {p.stdout}")


def tree_files(root):
    """relative path -> bytes of every file under root (links followed); fails on a link."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def no_links(root, what):
    for dirpath, dirs, files in os.walk(root):
        for f in dirs + files:
            check(not os.path.islink(os.path.join(dirpath, f)), f"{what}: {f} is a link")


def case_tree(d):
    """A sentence-transformers model as a Hugging Face cache snapshot: every entry a link into
    blobs/, subdirectories (1_Pooling/, a nested tokenizer folder), BERT's `LayerNorm`."""
    repo = os.path.join(d, "models--org--model")
    blobs = os.path.join(repo, "blobs")
    snap = os.path.join(repo, "snapshots", "0123abc")
    for p in [blobs, os.path.join(snap, "1_Pooling"), os.path.join(snap, "tok", "extra")]:
        os.makedirs(p)
    dense = random_floats((64, 128), -6, 6)
    ln2d = random_floats((2, 64), -4, 4)  # 2-D and named `LayerNorm`: kept unless case matters
    ln = random_floats((64,))
    emb = random_floats((100, 64))
    ids = np.arange(4, dtype=np.int64)
    shards = {
        "model-00001-of-00002.safetensors": {
            "encoder.layer.0.intermediate.dense.weight": dense,
            "encoder.layer.0.output.LayerNorm.weight": ln},
        "model-00002-of-00002.safetensors": {
            "embeddings.word_embeddings.weight": emb, "encoder.adapter.LayerNorm.weight": ln2d,
            "embeddings.position_ids": ids},
    }
    blob_no = 0

    def blob(name, data, rel_up="../.."):
        nonlocal blob_no
        blob_no += 1
        b = os.path.join(blobs, f"{blob_no:040x}")
        if isinstance(data, dict):
            save(b, data, {"format": "pt"})
        else:
            with open(b, "wb") as f:
                f.write(data)
        os.symlink(f"{rel_up}/blobs/{blob_no:040x}", os.path.join(snap, name))

    for name, t in shards.items():
        blob(name, t)
    index = {"metadata": {"total_size": 0},
             "weight_map": {n: f for f, t in shards.items() for n in t}}
    blob("model.safetensors.index.json", json.dumps(index).encode())
    blob("config.json", json.dumps({"architectures": ["BertModel"], "model_type": "bert",
                                    "torch_dtype": "float32"}).encode())
    blob("1_Pooling/config.json", b'{"pooling_mode_mean_tokens": true}', "../../..")
    blob("modules.json", b'[{"idx": 0, "path": "1_Pooling"}]')
    with open(os.path.join(snap, "tok", "extra", "vocab.txt"), "w") as f:
        f.write("[PAD]\n[UNK]\n")
    before = digest(snap)
    src_files = tree_files(snap)

    out = os.path.join(d, "mx")
    p = run("convert", snap, out, "--to", "mxfp4", "--unquantized-to", "bf16")
    check("no quantization_config written" in p.stderr, f"auto: note on stderr: {p.stderr}")
    check(digest(snap) == before, "snapshot untouched")
    no_links(out, "converted snapshot")
    got_files = tree_files(out)
    want = {r for r in src_files if not r.endswith(".safetensors") and "index" not in r}
    check(set(got_files) - set(shards) - {"model.safetensors.index.json"} == want,
          f"every file reproduced: {sorted(got_files)} vs {sorted(want)}")
    for r in want - {"config.json"}:
        check(got_files[r] == src_files[r], f"{r} copied")
    cfg = json.loads(got_files["config.json"])
    check("quantization_config" not in cfg and cfg["torch_dtype"] == "bfloat16",
          f"config.json of a BERT model: {cfg}")
    p = run("verify", snap, out)
    check("4 file" in p.stdout and "0 violations" in p.stdout, f"verify the snapshot: {p.stdout}")
    got = {}
    for f in shards:
        got.update(load(os.path.join(out, f))[0])
    pb, ps = ref_mxfp4_quant(dense)
    same_bits(got["encoder.layer.0.intermediate.dense.weight_blocks"], pb, "dense: blocks")
    same_bits(got["encoder.layer.0.intermediate.dense.weight_scales"], ps, "dense: scales")
    bf = ml_dtypes.bfloat16
    same_bits(got["encoder.adapter.LayerNorm.weight"], ln2d.astype(bf),
              "2-D LayerNorm kept by the case-insensitive default filter, cast to bf16")
    same_bits(got["encoder.layer.0.output.LayerNorm.weight"], ln.astype(bf), "LayerNorm -> bf16")
    same_bits(got["embeddings.word_embeddings.weight"], emb.astype(bf), "embeddings -> bf16")
    check(np.array_equal(got["embeddings.position_ids"], ids), "ints copied")

    # Case-sensitive globs quantize the 2-D `LayerNorm`; --quant-config always writes the config.
    out = os.path.join(d, "mx-cs")
    run("convert", snap, out, "--to", "mxfp4", "--case-sensitive-globs", "--quant-config", "always")
    got = load(os.path.join(out, "model-00002-of-00002.safetensors"))[0]
    check("encoder.adapter.LayerNorm.weight_blocks" in got, f"case-sensitive: {sorted(got)}")
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    check(cfg["quantization_config"]["quant_method"] == "mxfp4", f"--quant-config always: {cfg}")
    same_bits(got["embeddings.word_embeddings.weight"], emb, "--unquantized-to keep: F32 stays")
    # --quant-config auto: mxfp4 for gpt-oss, fp8 for any model; never: none.
    go = os.path.join(d, "gptoss")
    os.mkdir(go)
    save(os.path.join(go, "model.safetensors"), {"experts.w": random_floats((4, 64)),
                                                 "attn.q.weight": random_floats((4, 30))})
    with open(os.path.join(go, "config.json"), "w") as f:
        json.dump({"model_type": "gpt_oss"}, f)
    for i, (target, opts, want) in enumerate([
            ("mxfp4", [], {"modules_to_not_convert": ["attn.q"], "quant_method": "mxfp4"}),
            ("f8e4m3", ["--quant-config", "never"], None),
            ("f8e4m3", ["--fp8-profile", "ue8m0"], {
                "activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                "weight_block_size": [128, 128], "scale_fmt": "ue8m0"}),
            ("nvfp4", ["--quant-config", "always", "--include", "experts.*"], {
                "group_size": 16, "ignore": ["attn.q"], "quant_algo": "NVFP4",
                "quant_method": "modelopt"})]):
        o = os.path.join(d, f"gptoss-{i}")
        run("convert", go, o, "--to", target, *opts)
        with open(os.path.join(o, "config.json")) as f:
            got = json.load(f).get("quantization_config")
        check(got == want, f"--to {target} {opts}: quantization_config {got}")
    # --unquantized-to with a cast target is refused.
    expect_failure(d, ["convert", snap, os.path.join(d, "x"), "--to", "bf16", "--unquantized-to",
                       "f16"], ["--unquantized-to"], [os.path.join(d, "x")])

    # A dangling link, then a loop through a directory link: clear errors, no output.
    os.symlink("../../blobs/" + "f" * 40, os.path.join(snap, "tokenizer.json"))
    o = os.path.join(d, "bad")
    expect_failure(d, ["convert", snap, o, "--to", "bf16"], ["tokenizer.json", "dangling"], [o])
    os.remove(os.path.join(snap, "tokenizer.json"))
    os.symlink("..", os.path.join(snap, "tok", "extra", "up"))
    expect_failure(d, ["convert", snap, o, "--to", "bf16"], ["extra/up", "loop"], [o])
    os.remove(os.path.join(snap, "tok", "extra", "up"))


def write_sharded(ck, n, rows=512, tensors_per_shard=3):
    os.makedirs(ck)
    wm = {}
    for i in range(n):
        name = f"model-{i + 1:05d}-of-{n:05d}.safetensors"
        t = {f"layers.{i}.w{j}.weight": random_floats((rows, 256), -4, 4).astype(ml_dtypes.bfloat16)
             for j in range(tensors_per_shard)}
        t[f"layers.{i}.norm.weight"] = random_floats((256,))
        save(os.path.join(ck, name), t, {"format": "pt"})
        wm.update({k: name for k in t})
    with open(os.path.join(ck, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 1}, "weight_map": wm}, f)
    with open(os.path.join(ck, "config.json"), "w") as f:
        json.dump({"model_type": "llama", "torch_dtype": "bfloat16"}, f)
    os.makedirs(os.path.join(ck, "original"))
    with open(os.path.join(ck, "original", "params.json"), "w") as f:
        f.write('{"dim": 256}')
    return sorted(n for n in os.listdir(ck) if n.endswith(".safetensors"))


def wait_for(cond, what, timeout=60):
    t = time.time()
    while not cond():
        check(time.time() - t < timeout, f"timed out waiting for {what}")
        time.sleep(0.01)


def case_fanout(d):
    ck = os.path.join(d, "ck")
    names = write_sharded(ck, 5)
    opts = ["--to", "f8e4m3", "--unquantized-to", "bf16", "-q"]
    one = os.path.join(d, "one")
    run("convert", ck, one, *opts)
    ref = tree_files(one)
    check(len(ref) == 8, f"one-process output: {sorted(ref)}")

    # 3 processes started together, the index from the schedulers' variables; one is killed
    # in the middle of its second shard (the tests' pause after each tensor), then rerun.
    out = os.path.join(d, "fan")
    envs = [{"JOB_COMPLETION_INDEX": "0"},
            # A resubmitted task: SLURM_ARRAY_TASK_MIN is its own id, which must not shift it.
            {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1"},
            {"SLURM_ARRAY_TASK_ID": "2"}]
    envs[1]["VCVT_ST_TEST_PAUSE_MS"] = "300"
    procs = [subprocess.Popen([BIN, "convert", ck, out, *opts, "--shard", "auto/3"],
                              env={**os.environ, **e}, stderr=subprocess.PIPE, text=True)
             for e in envs]
    # Process 1 has shards 1 and 4: kill it once shard 1 is complete and shard 4 is under way.
    wait_for(lambda: os.path.exists(os.path.join(out, names[1])) and any(
        names[4] in f and "tmp" in f for f in os.listdir(out)), "process 1 mid-shard")
    procs[1].send_signal(signal.SIGKILL)
    procs[1].wait()
    for i in (0, 2):
        err = procs[i].communicate()[1]
        check(procs[i].returncode == 0, f"process {i}: {err}")
        check(f"shard {i}/3" in err, f"process {i} says what it did: {err}")
    check(not os.path.exists(os.path.join(out, names[4])), "the killed shard is not in place")
    # finalize refuses, listing what is missing, and writes nothing.
    listing = sorted(os.listdir(out))
    p = run("finalize", ck, out, ok=False)
    check(p.returncode != 0 and names[4] in p.stderr and "missing" in p.stderr
          and "1 of 5" in p.stderr, f"finalize with a shard missing: {p.stderr}")
    check(sorted(os.listdir(out)) == listing, "finalize wrote nothing")
    # The rerun converts only the missing shard and says so.
    p = run("convert", ck, out, *opts, "--shard", "1/3")
    check(f"1 of 2 shards already complete (skipped): {names[1]}" in p.stderr,
          f"resume message: {p.stderr}")
    # A truncated shard never looks complete.
    with open(os.path.join(out, names[0]), "r+b") as f:
        f.truncate(os.path.getsize(os.path.join(out, names[0])) - 1)
    p = run("finalize", ck, out, ok=False)
    check(p.returncode != 0 and f"{names[0]} (" in p.stderr and "bytes" in p.stderr,
          f"finalize with a truncated shard: {p.stderr}")
    p = run("convert", ck, out, *opts, "--shard", "0/3")
    check("converted again: " + names[0] in p.stderr, f"truncated shard redone: {p.stderr}")
    p = run("finalize", out)
    check("removed 1 temporary" in p.stderr, f"finalize removes the killed run's temporary: {p.stderr}")
    got = tree_files(out)
    check(sorted(got) == sorted(ref), f"fan-out files: {sorted(got)}")
    for r in ref:
        check(got[r] == ref[r], f"fan-out {r} byte-identical to the one-process run")

    # The deploy/ Slurm script and Kubernetes manifest, run here with the schedulers' variables.
    here = os.path.dirname(os.path.abspath(__file__))
    deploy = os.path.join(here, "..", "deploy")
    out = os.path.join(d, "slurm")
    env = {**os.environ, "IN": ck, "OUT": out, "TO": "f8e4m3", "N": "3", "VCVT_ST": BIN}
    procs = [subprocess.Popen(["bash", os.path.join(deploy, "slurm-convert.sh")],
                              env={**env, "SLURM_ARRAY_TASK_ID": str(i),
                                   "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "2"},
                              stderr=subprocess.PIPE)
             for i in range(3)]
    for p in procs:
        check(p.wait() == 0, f"slurm task: {p.stderr.read()}")
    # Task 2 failed: its shard is gone, and it is resubmitted alone (`sbatch --array=2`), so
    # Slurm sets SLURM_ARRAY_TASK_MIN = MAX = ID = 2; it must redo shard 2, not shard 0.
    os.remove(os.path.join(out, names[2]))
    p = subprocess.run(["bash", os.path.join(deploy, "slurm-convert.sh")],
                       env={**env, "SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "2",
                            "SLURM_ARRAY_TASK_MAX": "2", "SLURM_ARRAY_TASK_COUNT": "1"},
                       capture_output=True, text=True)
    check(p.returncode == 0 and f"({names[2]})" in p.stderr,
          f"a resubmitted task converts its own shards: {p.stderr}")
    # An array numbered 1 to N: auto-1/N.
    p = subprocess.run([BIN, "convert", ck, os.path.join(d, "slurm1"), "--to", "f8e4m3",
                        "--shard", "auto-1/3", "--dry-run"],
                       env={**os.environ, "SLURM_ARRAY_TASK_ID": "3"}, capture_output=True, text=True)
    check(p.returncode == 0 and f"--shard 2/3 would convert {names[2]}" in p.stdout,
          f"auto-1/3 with task id 3: {p.stdout} {p.stderr}")
    run("finalize", out)
    one_plain = os.path.join(d, "one-plain")
    run("convert", ck, one_plain, "--to", "f8e4m3")
    ref_plain = tree_files(one_plain)
    check(tree_files(out) == ref_plain, "Slurm array output byte-identical to one process")
    with open(os.path.join(deploy, "convert-indexed-job.yaml")) as f:
        cmd = json.loads(next(l for l in f if "command:" in l).split("command:", 1)[1])
    out = os.path.join(d, "k8s")
    cmd = [BIN if a == "vcvt-st" else a.replace("/models/DeepSeek-V3-bf16", out)
           .replace("/models/DeepSeek-V3", ck) for a in cmd]
    cmd = [a.replace("auto/8", "auto/3").replace("bf16", "f8e4m3") if not a.startswith("/")
           else a for a in cmd]
    procs = [subprocess.Popen(cmd, env={**os.environ, "JOB_COMPLETION_INDEX": str(i)},
                              stderr=subprocess.DEVNULL) for i in range(3)]
    check(all(p.wait() == 0 for p in procs), "indexed job pods")
    run("finalize", out)
    check(tree_files(out) == ref_plain, "Indexed Job output byte-identical to one process")

    # A one-process run killed mid-way keeps its complete shards in .OUT.vcvt-st-partial; the
    # rerun converts the rest and says so.
    out = os.path.join(d, "plain")
    partial = os.path.join(d, ".plain.vcvt-st-partial")
    proc = subprocess.Popen([BIN, "convert", ck, out, *opts],
                            env={**os.environ, "VCVT_ST_TEST_PAUSE_MS": "300"},
                            stderr=subprocess.DEVNULL)
    wait_for(lambda: os.path.exists(os.path.join(partial, names[1])), "two shards written")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    check(not os.path.exists(out), "killed run: no OUT")
    p = run("convert", ck, out, *opts)
    check("resuming in" in p.stderr and "already complete (skipped): " + names[0] in p.stderr,
          f"resumed: {p.stderr}")
    check(not os.path.exists(partial), "partial directory renamed")
    check(tree_files(out) == ref, "resumed run byte-identical to the uninterrupted one")

    # A second one-process run into the same OUT while the first is running is refused, and
    # takes nothing away from the first.
    out = os.path.join(d, "twice")
    partial = os.path.join(d, ".twice.vcvt-st-partial")
    first = subprocess.Popen([BIN, "convert", ck, out, *opts],
                             env={**os.environ, "VCVT_ST_TEST_PAUSE_MS": "100"},
                             stderr=subprocess.PIPE, text=True)
    wait_for(lambda: os.path.exists(os.path.join(partial, names[0])), "the first run under way")
    p = run("convert", ck, out, *opts, ok=False)
    check(p.returncode != 0 and "another vcvt-st run" in p.stderr and "twice" in p.stderr,
          f"second run refused: {p.stderr}")
    err = first.communicate()[1]
    check(first.returncode == 0, f"the first run finished: {err}")
    check(tree_files(out) == ref and not os.path.exists(partial), "first run's output complete")


def corrupt(path, tensor, at, xor):
    """Flips bits `xor` of byte `at` of `tensor`'s data in a safetensors file."""
    with open(path, "r+b") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        start = 8 + n + header[tensor]["data_offsets"][0] + at
        f.seek(start)
        b = f.read(1)[0]
        f.seek(start)
        f.write(bytes([b ^ xor]))


def case_verify(d):
    w, s = fp8_weight(200, 160)
    b, sc = mx_tensors(2, 8, 4)
    x = random_floats((64, 256), -6, 6)
    src = os.path.join(d, "in.safetensors")
    save(src, {"q.weight": w, "q.weight_scale_inv": s, "e.proj_blocks": b, "e.proj_scales": sc,
               "m.weight": x, "m.up.weight": x.astype(ml_dtypes.bfloat16),
               "m.norm.weight": random_floats((256,)), "ids": np.arange(6, dtype=np.int64)})
    # (target, options, [(tensor of OUT, byte, xor, tensor named by the violation)])
    cases = [
        ("bf16", [], [("m.weight", 1000, 0x01, "m.weight"),            # a cast
                      ("q.weight", 20001, 0x01, "q.weight"),           # an FP8 dequantization
                      ("e.proj", 301, 0x01, "e.proj_blocks"),          # an MXFP4 dequantization
                      ("ids", 8, 0x01, "ids"),                         # a copy
                      ("m.norm.weight", 3, 0x01, "m.norm.weight")]),   # a cast of a 1-D F32
        ("f8e4m3", ["--include", "m.*"],
         [("m.weight", 4000, 0x40, "m.weight"), ("m.weight_scale_inv", 2, 0x80, "m.weight")]),
        ("mxfp4", [], [("m.weight_blocks", 2000, 0x44, "m.weight"),
                       ("m.weight_scales", 100, 0x01, "m.weight")]),
        ("mxfp8", [], [("m.up.weight", 5000, 0x40, "m.up.weight"),
                       ("m.up.weight_scale", 50, 0x01, "m.up.weight")]),
        ("nvfp4", [], [("m.weight", 3000, 0x44, "m.weight"),
                       ("m.weight_scale", 300, 0x08, "m.weight"),
                       ("m.weight_scale_2", 2, 0x80, "m.weight")]),
    ]
    for target, opts, corruptions in cases:
        out = os.path.join(d, f"{target}.safetensors")
        run("convert", src, out, "--to", target, *opts)
        p = run("verify", src, out)
        check(p.returncode == 0 and p.stdout.rstrip().endswith("0 violations"),
              f"verify {target}: {p.stdout}")
        check(all(l.endswith("ok") or "ok (" in l for l in p.stdout.splitlines()[1:-1]),
              f"verify {target}: every tensor ok: {p.stdout}")
        for tensor, at, xor, named in corruptions:
            bad = os.path.join(d, f"{target}-bad.safetensors")
            shutil.copy(out, bad)
            corrupt(bad, tensor, at, xor)
            p = run("verify", src, bad, "-q", ok=False)
            lines = [l for l in p.stdout.splitlines() if "VIOLATION" in l]
            check(p.returncode == 1 and len(lines) == 1 and lines[0].startswith(named + " ")
                  and p.stdout.rstrip().endswith("1 violations"),
                  f"verify {target} with byte {at} of {tensor} corrupted: {p.stdout}")
    # The dequantizations of NVFP4 and MXFP8 (their outputs back to bf16), and their copies.
    for target, at in [("nvfp4", 5000), ("mxfp8", 9000)]:
        q = os.path.join(d, f"{target}.safetensors")
        back = os.path.join(d, f"{target}-back.safetensors")
        run("convert", q, back, "--to", "bf16")
        check(run("verify", q, back).returncode == 0, f"verify {target} -> bf16")
        corrupt(back, "m.weight", at, 0x01)
        p = run("verify", q, back, "-q", ok=False)
        lines = [l for l in p.stdout.splitlines() if "VIOLATION" in l]
        check(p.returncode == 1 and len(lines) == 1 and lines[0].startswith("m.weight ")
              and f"dequantize {target}" in lines[0], f"verify {target} -> bf16 corrupted: {p.stdout}")
        kept = os.path.join(d, f"{target}-kept.safetensors")
        run("convert", q, kept, "--to", "mxfp4")  # quantized groups are kept as they are
        check(run("verify", q, kept).returncode == 0, f"verify {target} kept")
        corrupt(kept, "m.weight_scale", 3, 0x01)
        p = run("verify", q, kept, "-q", ok=False)
        check(p.returncode == 1 and "m.weight " in p.stdout and "differs" in p.stdout,
              f"verify {target} kept, scale corrupted: {p.stdout}")
    # An infinity makes its tile's scale infinite (DeepSeek's rule): the tile's finite values
    # are lost, which verify reports without calling it a violation of the bound.
    xi = x.copy()
    xi[3, 5] = np.inf
    src_inf = os.path.join(d, "inf.safetensors")
    save(src_inf, {"m.weight": xi})
    out = os.path.join(d, "inf-fp8.safetensors")
    run("convert", src_inf, out, "--to", "f8e4m3")
    p = run("verify", src_inf, out)
    check(p.returncode == 0 and "8191 finite values became NaN or infinite" in p.stdout,
          f"verify with an Inf: {p.stdout}")
    # A tensor missing from OUT, and one OUT has but IN does not explain.
    out = os.path.join(d, "bf16.safetensors")
    got, _ = load(out)
    del got["m.weight"]
    got["extra"] = np.zeros(2, np.float32)
    save(os.path.join(d, "missing.safetensors"), got)
    p = run("verify", src, os.path.join(d, "missing.safetensors"), "-q", ok=False)
    check(p.returncode == 1 and "m.weight" in p.stdout and "missing" in p.stdout
          and "extra" in p.stdout and "2 violations" in p.stdout, f"verify, missing: {p.stdout}")
    # A directory against its conversion.
    ck = os.path.join(d, "ck")
    write_sharded(ck, 2, rows=64, tensors_per_shard=1)
    run("convert", ck, os.path.join(d, "ck-nv"), "--to", "nvfp4", "--unquantized-to", "bf16")
    p = run("verify", ck, os.path.join(d, "ck-nv"))
    check("2 quantize nvfp4" in p.stdout and "2 cast" in p.stdout and "2 file" in p.stdout
          and "0 violations" in p.stdout, f"verify a directory: {p.stdout}")
    with open(os.path.join(d, "ck-nv", "original", "params.json"), "a") as f:
        f.write(" ")
    p = run("verify", ck, os.path.join(d, "ck-nv"), "-q", ok=False)
    lines = [l for l in p.stdout.splitlines() if "VIOLATION" in l]
    check(p.returncode == 1 and len(lines) == 1 and lines[0].startswith("original/params.json ")
          and "differs" in lines[0], f"verify: a copied file changed: {p.stdout}")


# ---------------------------------------------------------------- scaled conventions


def fp8_codes(shape):
    c = RNG.integers(0, 256, shape, dtype=np.uint8)
    c[c & 0x7F == 0x7F] = 0x42  # no NaN codes in real weights
    return c.view(ml_dtypes.float8_e4m3fn)


def ref_scaled_fp8(codes, scale, tile, to):
    """compressed-tensors / FBGEMM / ModelOpt FP8: f32(e4m3) * f32(scale), one f32 rounding,
    then one rounding to `to`; scale[i // tile_rows, j // tile_cols] (broadcast)."""
    rows, cols = codes.shape
    if scale.size == 1:
        s = np.full((rows, cols), scale.astype(np.float32).reshape(()), np.float32)
    else:
        s = scale.astype(np.float32).reshape(scale.shape[0], -1)
        s = np.repeat(np.repeat(s, tile[0], 0), tile[1], 1)[:rows, :cols]
    return (codes.astype(np.float32) * s).astype(np.float32).astype(to)


def ref_fp8_quant_rows(x):
    """FP8 with one scale per row, DeepSeek's rule: s = max(amax, 1e-4) / 448 in f32, codes
    e4m3(f32(x / s)) (nearest even, saturating at 448)."""
    amax = np.maximum(np.abs(x).max(1).astype(np.float32), np.float32(1e-4))
    s = (amax / np.float32(448.0)).astype(np.float32)
    codes = (x / s[:, None]).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
    return codes, s.reshape(-1, 1)


def ref_ct_nvfp4(packed, s8, gs, to):
    """compressed-tensors NVFP4: e2m1 * f32(f32(s8) / global_scale), element 2j in the low
    nibble, one f32 rounding, then one rounding to `to`."""
    lo, hi = E2M1[packed & 15], E2M1[packed >> 4]
    vals = np.stack([lo, hi], -1).reshape(packed.shape[0], -1)
    scale = (s8.astype(np.float32) / np.float32(gs.reshape(()))).astype(np.float32)
    return (vals * np.repeat(scale, 16, 1)).astype(np.float32).astype(to)


def case_conventions(d):
    f32, bf16 = np.float32, ml_dtypes.bfloat16
    def pos(shape):
        return np.ldexp(RNG.uniform(0.5, 1, shape), RNG.integers(-10, 3, shape)).astype(f32)
    # compressed-tensors FP8 (per-tensor, per-channel with a BF16 scale, groups of 16, blocks
    # of 64x32 from the config), ModelOpt FP8 (scalar scale + input_scale), NVFP4.
    ck = os.path.join(d, "ct")
    os.mkdir(ck)
    t = {
        "a.weight": fp8_codes((48, 64)), "a.weight_scale": pos((1,)), "a.input_scale": pos((1,)),
        "b.weight": fp8_codes((40, 64)), "b.weight_scale": pos((40, 1)).astype(bf16),
        "c.weight": fp8_codes((100, 70)), "c.weight_scale": pos((2, 3)),
        "e.weight": fp8_codes((24, 48)), "e.weight_scale": pos(()), "e.input_scale": pos(()),
        "g.weight": fp8_codes((8, 64)), "g.weight_scale": pos((8, 4)),
        "f.weight_packed": RNG.integers(0, 256, (32, 32), dtype=np.uint8),
        "f.weight_scale": pos((32, 4)).astype(ml_dtypes.float8_e4m3fn),
        "f.weight_global_scale": np.array([448 * 6 / 3.5], f32),
        "f.input_global_scale": pos((1,)),
        "norm.weight": random_floats((64,)).astype(bf16),
    }
    save(os.path.join(ck, "model.safetensors"), t)
    cfg = {"model_type": "t", "quantization_config": {
        "quant_method": "compressed-tensors", "format": "float-quantized",
        "config_groups": {"group_0": {"weights": {"strategy": "block", "block_structure": [64, 32]}}}}}
    with open(os.path.join(ck, "config.json"), "w") as f:
        json.dump(cfg, f)
    p = run("inspect", ck)
    check("per-channel scaled FP8" in p.stdout and "compressed-tensors NVFP4" in p.stdout,
          f"inspect names the conventions: {p.stdout}")
    for to, npt in [("bf16", bf16), ("f16", np.float16), ("f32", f32)]:
        out = os.path.join(d, f"ct-{to}")
        run("convert", ck, out, "--to", to, "-q")
        got, _ = load(os.path.join(out, "model.safetensors"))
        check(sorted(got) == ["a.weight", "b.weight", "c.weight", "e.weight", "f.weight",
                              "g.weight", "norm.weight"],
              f"scales consumed, activation scales dropped: {sorted(got)}")
        same_bits(got["a.weight"], ref_scaled_fp8(t["a.weight"], t["a.weight_scale"], None, npt),
                  f"compressed-tensors per-tensor FP8 -> {to}")
        same_bits(got["b.weight"], ref_scaled_fp8(t["b.weight"], t["b.weight_scale"], (1, 64), npt),
                  f"compressed-tensors per-channel FP8 (BF16 scale) -> {to}")
        same_bits(got["c.weight"], ref_scaled_fp8(t["c.weight"], t["c.weight_scale"], (64, 32), npt),
                  f"compressed-tensors block FP8 (64x32 from config.json) -> {to}")
        same_bits(got["e.weight"], ref_scaled_fp8(t["e.weight"], t["e.weight_scale"], None, npt),
                  f"ModelOpt FP8 (scalar scale) -> {to}")
        same_bits(got["g.weight"], ref_scaled_fp8(t["g.weight"], t["g.weight_scale"], (1, 16), npt),
                  f"compressed-tensors group FP8 (groups of 16) -> {to}")
        same_bits(got["f.weight"], ref_ct_nvfp4(t["f.weight_packed"], t["f.weight_scale"],
                                                t["f.weight_global_scale"], npt),
                  f"compressed-tensors NVFP4 -> {to}")
        with open(os.path.join(out, "config.json")) as f:
            check("quantization_config" not in json.load(f), "quantization_config removed")
        p = run("verify", ck, out)
        check("0 violations" in p.stdout, f"verify {to}: {p.stdout}")
    # Quantized targets keep every group with its scales (and activation scales).
    out = os.path.join(d, "ct-keep")
    run("convert", ck, out, "--to", "f8e4m3", "-q")
    got, _ = load(os.path.join(out, "model.safetensors"))
    for n in t:
        if n != "norm.weight":
            # (save() writes a 0-d array as [1], as numpy's ascontiguousarray gives it.)
            same_bits(got[n], np.atleast_1d(t[n]), f"kept quantized: {n}")
    check("0 violations" in run("verify", ck, out).stdout, "verify kept groups")
    # FBGEMM FP8: per-channel F32 [N, 1].
    fb = os.path.join(d, "fbgemm")
    os.mkdir(fb)
    w, s = fp8_codes((40, 64)), pos((40, 1))
    save(os.path.join(fb, "model.safetensors"), {"l.weight": w, "l.weight_scale": s})
    with open(os.path.join(fb, "config.json"), "w") as f:
        json.dump({"quantization_config": {"quant_method": "fbgemm_fp8",
                                           "activation_scale_ub": 1200.0}}, f)
    run("convert", fb, os.path.join(d, "fb-bf16"), "--to", "bf16", "-q")
    got, _ = load(os.path.join(d, "fb-bf16", "model.safetensors"))
    same_bits(got["l.weight"], ref_scaled_fp8(w, s, (1, 64), bf16), "FBGEMM FP8 -> bf16")
    check("0 violations" in run("verify", fb, os.path.join(d, "fb-bf16")).stdout, "verify fbgemm")
    # Quantization into the per-channel layout (--fp8-scales channel): DeepSeek's scale rule
    # per row, F32 `W_scale` [N, 1], compressed-tensors' FP8_DYNAMIC config; and back.
    qk = os.path.join(d, "to-channel")
    os.mkdir(qk)
    x = random_floats((24, 160), -6, 6)
    x[3] = 0  # an all-zero row: the rule's amax floor (1e-4)
    save(os.path.join(qk, "model.safetensors"), {"l.weight": x, "lm_head.weight": x[:8]})
    with open(os.path.join(qk, "config.json"), "w") as f:
        json.dump({"model_type": "t"}, f)
    out = os.path.join(d, "channel")
    run("convert", qk, out, "--to", "f8e4m3", "--fp8-scales", "channel", "-q")
    got, _ = load(os.path.join(out, "model.safetensors"))
    codes, sc = ref_fp8_quant_rows(x)
    same_bits(got["l.weight"], codes, "per-channel FP8 codes")
    same_bits(got["l.weight_scale"], sc, "per-channel FP8 scales [N, 1]")
    check(sorted(got) == ["l.weight", "l.weight_scale", "lm_head.weight"], f"names: {sorted(got)}")
    with open(os.path.join(out, "config.json")) as f:
        qc = json.load(f)["quantization_config"]
    check(qc["quant_method"] == "compressed-tensors" and qc["format"] == "float-quantized"
          and qc["config_groups"]["group_0"]["weights"]["strategy"] == "channel"
          and qc["ignore"] == ["lm_head"], f"compressed-tensors config: {qc}")
    p = run("verify", qk, out)
    check("1 quantize fp8" in p.stdout and "0 violations" in p.stdout, f"verify channel: {p.stdout}")
    back = os.path.join(d, "channel-bf16")
    run("convert", out, back, "--to", "bf16", "-q")
    got2, _ = load(os.path.join(back, "model.safetensors"))
    same_bits(got2["l.weight"], ref_scaled_fp8(codes, sc, (1, 160), bf16), "per-channel FP8 -> bf16")
    check("0 violations" in run("verify", out, back).stdout, "verify channel -> bf16")
    # A scale of the wrong shape: an error naming it and what was expected; nothing written.
    bad = os.path.join(d, "bad.safetensors")
    save(bad, {"l.weight": w, "l.weight_scale": pos((40, 3))})
    expect_failure(d, ["convert", bad, os.path.join(d, "bad-out.safetensors"), "--to", "bf16"],
                   ["l.weight_scale", "[40, 3]", "[40, 1]"], [os.path.join(d, "bad-out.safetensors")])


# ---------------------------------------------------------------- compressed-tensors outputs


def to_src(v, dt):
    """`v` rounded to the source dtype `dt` (torch computes an op on bf16/f16 tensors in f32
    and rounds once), as f32."""
    return np.asarray(v, np.float32).astype(dt).astype(np.float32)


def ref_ct_global(xs, dt):
    """compressed-tensors' `generate_gparam` on dtype `dt` over the fused weights `xs`:
    m = max(amax, finfo(dt).tiny); 2688 / m evaluated as m.reciprocal() * 2688 (torch's
    __rtruediv__), each step rounded to dt; a non-finite result is 1.0."""
    amax = max(np.float32(np.abs(x.astype(np.float32)).max()) for x in xs)
    tiny = np.float32(np.finfo(np.float16).tiny) if dt == np.float16 else np.float32(2.0 ** -126)
    m = max(amax, tiny)
    r = to_src(np.float32(1) / m, dt)
    g = to_src(r * np.float32(2688), dt)
    return np.float32(g) if np.isfinite(g) else np.float32(1)


def ref_ct_nvfp4_quant(x, gs):
    """compressed-tensors NVFP4 (llm-compressor's min-max observer, `calculate_qparams`,
    `_quantize`, `pack_fp4_to_uint8`): s8 = e4m3(clip(f32(gs * W(amax_b / 6)), +-448)), a zero
    s8 becomes 0.125; codes = e2m1(clip(f32(x / f32(f32(s8) / gs)), +-6)) (nearest even), +-0
    giving code 0; element 2j in the low nibble."""
    dt = x.dtype.type
    xf = x.astype(np.float32)
    rows, cols = xf.shape
    xb = xf.reshape(rows, cols // 16, 16)
    amax = np.abs(xb).max(-1)
    q = (gs * to_src(amax / np.float32(6), dt)).astype(np.float32)
    s8 = np.clip(q, -448, 448).astype(ml_dtypes.float8_e4m3fn)
    s8[s8.astype(np.float32) == 0] = ml_dtypes.float8_e4m3fn(0.125)
    div = (s8.astype(np.float32) / gs).astype(np.float32)
    qx = (xb / div[..., None]).astype(np.float32)
    codes = np.clip(qx, -6, 6).astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 15
    codes[qx == 0] = 0
    codes = codes.reshape(rows, cols)
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
    return packed, s8


def ref_fp8_quant_tensor(x):
    """One scale per tensor, DeepSeek's rule: s = max(amax, 1e-4) / 448, codes e4m3(x / s)."""
    amax = max(np.float32(np.abs(x.astype(np.float32)).max()), np.float32(1e-4))
    s = np.float32(amax / np.float32(448))
    return (x.astype(np.float32) / s).astype(np.float32).astype(ml_dtypes.float8_e4m3fn), s


def case_ct_outputs(d):
    f32, bf16, f16 = np.float32, ml_dtypes.bfloat16, np.float16
    ck = os.path.join(d, "in")
    os.mkdir(ck)
    a = "model.layers.0.self_attn."
    m = "model.layers.0.mlp."
    t = {
        a + "q_proj.weight": random_floats((32, 64), -4, 2).astype(bf16),
        a + "k_proj.weight": random_floats((16, 64), -4, 4).astype(bf16),
        a + "v_proj.weight": random_floats((16, 64), -6, 0).astype(bf16),
        # F16 with amax < 2688 / 65504: the F16 global scale overflows, and becomes 1.0.
        a + "o_proj.weight": (random_floats((32, 32), -12, -6)).astype(f16),
        m + "gate_proj.weight": random_floats((48, 32), -8, 3).astype(bf16),
        m + "up_proj.weight": random_floats((48, 32), -3, 3).astype(bf16),
        m + "down_proj.weight": random_floats((32, 48), -20, 20),
        # > 4 Mi values: quantized in several steps.
        "model.layers.1.mlp.down_proj.weight": random_floats((2048, 2304), -8, 8).astype(bf16),
        "model.norm.weight": random_floats((64,)).astype(bf16),
        "lm_head.weight": random_floats((8, 64)).astype(bf16),
    }
    dp = t[m + "down_proj.weight"]
    dp[0, :16] = 0                   # an all-zero block: s8 0 -> 0.125
    dp[1, :16] = 1e-30               # a block far below the global scale
    dp[2, 0] = -1e-3                 # a small negative element: code 8 (-0)
    dp[2, 1] = -0.0
    t[a + "q_proj.weight"][3, 5] = 0
    save(os.path.join(ck, "model.safetensors"), t)
    with open(os.path.join(ck, "config.json"), "w") as f:
        json.dump({"model_type": "llama"}, f)
    before = digest(ck)

    # NVFP4, compressed-tensors layout.
    p = run("convert", ck, os.path.join(d, "dry"), "--to", "nvfp4", "--layout",
            "compressed-tensors", "--dry-run")
    check("global scale shared with" in p.stdout and "weight_packed" in p.stdout,
          f"dry run shows the plan: {p.stdout}")
    out = os.path.join(d, "nv")
    run("convert", ck, out, "--to", "nvfp4", "--layout", "compressed-tensors", "-q")
    got, _ = load(os.path.join(out, "model.safetensors"))
    fused = [[a + "q_proj.weight", a + "k_proj.weight", a + "v_proj.weight"],
             [a + "o_proj.weight"], [m + "gate_proj.weight", m + "up_proj.weight"],
             [m + "down_proj.weight"], ["model.layers.1.mlp.down_proj.weight"]]
    for group in fused:
        gs = ref_ct_global([t[n] for n in group], t[group[0]].dtype.type)
        for n in group:
            packed, s8 = ref_ct_nvfp4_quant(t[n], gs)
            same_bits(got[n + "_global_scale"], np.array([gs], f32), f"CT NVFP4 global scale {n}")
            same_bits(got[n + "_scale"], s8, f"CT NVFP4 block scales {n}")
            check(np.array_equal(got[n + "_packed"], packed), f"CT NVFP4 codes {n}")
            check(n not in got, f"{n}: only its packed form")
    check(got[a + "o_proj.weight_global_scale"][0] == 1.0, "F16 global scale overflow -> 1.0")
    check(got[a + "q_proj.weight_global_scale"][0] == got[a + "v_proj.weight_global_scale"][0],
          "q/k/v share the global scale")
    check(got[m + "down_proj.weight_scale"][0, 0] == 0.125, "zero block: scale 0.125")
    same_bits(got["lm_head.weight"], t["lm_head.weight"], "lm_head kept")
    with open(os.path.join(out, "config.json")) as f:
        qc = json.load(f)["quantization_config"]
    w = qc["config_groups"]["group_0"]["weights"]
    check(qc["quant_method"] == "compressed-tensors" and qc["format"] == "nvfp4-pack-quantized"
          and w["strategy"] == "tensor_group" and w["group_size"] == 16 and w["num_bits"] == 4
          and qc["config_groups"]["group_0"]["input_activations"] is None
          and qc["ignore"] == ["lm_head"], f"NVFP4A16 config: {qc}")
    p = run("verify", ck, out)
    check("8 quantize nvfp4" in p.stdout and "0 violations" in p.stdout, f"verify CT NVFP4: {p.stdout}")
    p = run("inspect", out)
    check("compressed-tensors NVFP4" in p.stdout, f"inspect reads CT NVFP4: {p.stdout}")
    # Round trip through the dequantizer.
    back = os.path.join(d, "nv-f32")
    run("convert", out, back, "--to", "f32", "-q")
    b, _ = load(os.path.join(back, "model.safetensors"))
    for group in fused:
        for n in group:
            same_bits(b[n], ref_ct_nvfp4(got[n + "_packed"], got[n + "_scale"],
                                         got[n + "_global_scale"], f32), f"CT NVFP4 -> f32 {n}")
    check("0 violations" in run("verify", out, back).stdout, "verify CT NVFP4 -> f32")
    # A global scale changed in OUT: verify names it.
    bad_out = os.path.join(d, "nv-bad")
    shutil.copytree(out, bad_out)
    corrupt(os.path.join(bad_out, "model.safetensors"), m + "down_proj.weight_global_scale", 3, 0x01)
    p = run("verify", ck, bad_out, "-q", ok=False)
    check(p.returncode == 1 and "down_proj.weight_global_scale" in p.stdout, f"verify catches: {p.stdout}")

    # FP8 with one scale per tensor, and compressed-tensors blocks.
    for scales, extra in [("tensor", []), ("block", ["--layout", "compressed-tensors", "--fp8-block", "16"])]:
        out = os.path.join(d, f"fp8-{scales}")
        run("convert", ck, out, "--to", "f8e4m3", "--fp8-scales", scales, *extra, "-q")
        got, _ = load(os.path.join(out, "model.safetensors"))
        # (The big weight with the per-tensor scale: the block reference loops in Python.)
        for n in [a + "q_proj.weight", a + "o_proj.weight", m + "down_proj.weight"] + (
                ["model.layers.1.mlp.down_proj.weight"] if scales == "tensor" else []):
            if scales == "tensor":
                codes, sc = ref_fp8_quant_tensor(t[n])
                sc = np.array([sc], f32)
                tile = None
            else:
                codes, sc = ref_fp8_quant(t[n].astype(f32), 16)
                tile = (16, 16)
            same_bits(got[n], codes, f"FP8 {scales} codes {n}")
            same_bits(got[n + "_scale"], sc, f"FP8 {scales} scale {n}")
            check(n + "_scale_inv" not in got, "compressed-tensors names")
            back = ref_scaled_fp8(codes, sc, tile, bf16)
            bk = os.path.join(d, f"fp8-{scales}-bf16")
            if not os.path.exists(bk):
                run("convert", out, bk, "--to", "bf16", "-q")
            b, _ = load(os.path.join(bk, "model.safetensors"))
            same_bits(b[n], back, f"FP8 {scales} -> bf16 {n}")
        with open(os.path.join(out, "config.json")) as f:
            qc = json.load(f)["quantization_config"]
        w = qc["config_groups"]["group_0"]["weights"]
        check(qc["quant_method"] == "compressed-tensors" and w["strategy"] == scales
              and (scales == "tensor" or w["block_structure"] == [16, 16]), f"FP8 {scales} config: {qc}")
        p = run("verify", ck, out)
        check("8 quantize fp8" in p.stdout and "0 violations" in p.stdout, f"verify FP8 {scales}: {p.stdout}")
        check("0 violations" in run("verify", out, os.path.join(d, f"fp8-{scales}-bf16")).stdout,
              f"verify FP8 {scales} -> bf16")
    check(digest(ck) == before, "input untouched")
    expect_failure(d, ["convert", ck, os.path.join(d, "x"), "--to", "mxfp4", "--layout",
                       "compressed-tensors"], ["--layout compressed-tensors", "mxfp4"],
                   [os.path.join(d, "x")])

    # Malformed compressed-tensors checkpoints: clear errors naming the tensor, nothing written.
    nv_out, _ = load(os.path.join(d, "nv", "model.safetensors"))
    n = m + "down_proj.weight"
    for what, change, needles in [
        ("global scale F16", {n + "_global_scale": nv_out[n + "_global_scale"].astype(f16)},
         [n + "_global_scale", "F16"]),
        ("block scales F32", {n + "_scale": nv_out[n + "_scale"].astype(f32)}, [n + "_scale", "F32"]),
        ("block scales [32, 2]", {n + "_scale": nv_out[n + "_scale"][:, :2]}, [n + "_scale", "[32, 2]"]),
    ]:
        bad = os.path.join(d, "bad.safetensors")
        save(bad, {**nv_out, **change})
        expect_failure(d, ["convert", bad, os.path.join(d, "bad-out.safetensors"), "--to", "bf16"],
                       needles, [os.path.join(d, "bad-out.safetensors")])
        os.remove(bad)
    fp8_out, _ = load(os.path.join(d, "fp8-tensor", "model.safetensors"))
    n = a + "q_proj.weight"
    for change, needles in [({n + "_scale": np.array([1.0, 2.0], f32)}, [n + "_scale", "[2]"]),
                            ({n + "_scale": np.array([3], np.int64)}, [n, "I64"])]:
        bad = os.path.join(d, "bad.safetensors")
        save(bad, {**fp8_out, **change})
        expect_failure(d, ["convert", bad, os.path.join(d, "bad-out.safetensors"), "--to", "bf16"],
                       needles, [os.path.join(d, "bad-out.safetensors")])
        os.remove(bad)


def case_experts(d):
    """Fused experts [E, N, K] in FP8 with scales per expert, per channel, per group or per
    block (each expert its own matrix), and DeepSeek's block scale_inv; ambiguous and wrong
    scale shapes are errors."""
    f32, bf16 = np.float32, ml_dtypes.bfloat16
    def pos(shape):
        return np.ldexp(RNG.uniform(0.5, 1, shape), RNG.integers(-10, 3, shape)).astype(f32)
    e, n, k = 4, 40, 64
    t = {
        "b.weight": fp8_codes((e, n, k)), "b.weight_scale": pos((e, 2, 2)),  # 32x32 blocks
        "c.weight": fp8_codes((e, n, k)), "c.weight_scale": pos((e, n, 1)).astype(bf16),
        "x.weight": fp8_codes((e, n, k)), "x.weight_scale": pos((e, 1, 1)),
        "g.weight": fp8_codes((e, n, k)), "g.weight_scale": pos((e, n, 4)),  # groups of 16
        "o.weight": fp8_codes((e, n, k)), "o.weight_scale": pos((1,)),
    }
    src = os.path.join(d, "experts.safetensors")
    save(src, t)
    ds = {"d.weight": fp8_codes((e, n, k)), "d.weight_scale_inv": pos((e, 2, 2))}
    dsrc = os.path.join(d, "deepseek.safetensors")
    save(dsrc, ds)
    tiles = {"b": (32, 32), "c": (1, k), "x": (n, k), "g": (1, 16)}
    for to, npt in [("bf16", bf16), ("f32", f32)]:
        out = os.path.join(d, f"experts-{to}.safetensors")
        run("convert", src, out, "--to", to, "--fp8-block", "32", "-q")
        got, _ = load(out)
        for name, tile in tiles.items():
            w, s = t[f"{name}.weight"], t[f"{name}.weight_scale"]
            want = np.stack([ref_scaled_fp8(w[i], s[i], tile, npt) for i in range(e)])
            same_bits(got[f"{name}.weight"], want, f"fused experts {name} -> {to}")
        o = t["o.weight"]
        same_bits(got["o.weight"], ref_scaled_fp8(o.reshape(e * n, k), t["o.weight_scale"], None,
                                                  npt).reshape(e, n, k), f"fused experts, one scale -> {to}")
        p = run("verify", src, out, "--fp8-block", "32")
        check("0 violations" in p.stdout, f"verify experts: {p.stdout}")
        dout = os.path.join(d, f"deepseek-{to}.safetensors")
        run("convert", dsrc, dout, "--to", to, "--fp8-block", "32", "-q")
        got, _ = load(dout)
        want = np.stack([ref_scaled_fp8(ds["d.weight"][i], ds["d.weight_scale_inv"][i], (32, 32), npt)
                         for i in range(e)])
        same_bits(got["d.weight"], want, f"DeepSeek fused experts -> {to}")
        check("0 violations" in run("verify", dsrc, dout, "--fp8-block", "32").stdout,
              "verify DeepSeek experts")
    # (inspect takes the default 128x128 block: a file of per-channel experts.)
    one = os.path.join(d, "channel-experts.safetensors")
    save(one, {"c.weight": t["c.weight"], "c.weight_scale": t["c.weight_scale"]})
    p = run("inspect", one)
    check("per-channel scaled FP8 (fused experts)" in p.stdout and "[4, 40, 64]" in p.stdout,
          f"inspect shows the experts: {p.stdout}")
    # Ambiguous: [2, 1, 3] with 50-wide blocks reads as 3 blocks (50, 50, 20) or 3 groups of 40.
    for name, shape, scale, args, needles in [
        ("amb", (2, 1, 120), (2, 1, 3), ["--fp8-block", "50"], ["amb.weight_scale", "group", "block"]),
        ("wrong", (e, n, k), (e, n, 5), [], ["wrong.weight_scale", "[4, 40, 5]", "[4, 40, 1]"]),
        ("dtype", (e, n, k), (e, n, 1), [], ["dtype.weight", "I64"]),
        ("dsbad", (e, n, k), (e, 2, 3), ["--fp8-block", "32"], ["dsbad.weight_scale_inv", "[4, 2, 3]"]),
    ]:
        sc = pos(scale).astype(np.int64) if name == "dtype" else pos(scale)
        suffix = "_scale_inv" if name == "dsbad" else "_scale"
        bad = os.path.join(d, "bad.safetensors")
        save(bad, {f"{name}.weight": fp8_codes(shape), f"{name}.weight{suffix}": sc})
        expect_failure(d, ["convert", bad, os.path.join(d, "bad-out.safetensors"), "--to", "bf16", *args],
                       needles, [os.path.join(d, "bad-out.safetensors")])
        os.remove(bad)


def main():
    start = time.time()
    with tempfile.TemporaryDirectory() as d:
        for case in [case_bf16_to_f16, case_fp8_dequant, case_mx_dequant, case_sharded,
                     case_quantize, case_errors, case_tree, case_fanout, case_targets, case_verify,
                     case_conventions, case_ct_outputs, case_experts]:
            t = time.time()
            sub = os.path.join(d, case.__name__)
            os.mkdir(sub)
            case(sub)
            print(f"ok {case.__name__} ({time.time() - t:.1f} s)")
    print(f"vcvt-st end to end: {CHECKS} checks passed in {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
