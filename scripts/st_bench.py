#!/usr/bin/env python3
"""Checkpoints for timing vcvt-st, and the Python path a user has today, timed.

    python3 scripts/st_bench.py gen-bf16 DIR GIB     # GIB GiB of BF16 [4096, 8192] tensors
    python3 scripts/st_bench.py gen-fp8 DIR GIB      # GIB GiB of E4M3 [7168, 2048] + weight_scale_inv
    python3 scripts/st_bench.py py-convert IN OUT    # safetensors + numpy + ml_dtypes, BF16 -> F16
                                                     # (or FP8 + scale_inv -> BF16), one file
    python3 scripts/st_bench.py mmap-copy IN OUT [K] # the single-pass lower bound: every shard
                                                     # of IN mapped and written to the file OUT
                                                     # in 8 MiB pieces, each piece K times
                                                     # (K = 2: the bytes FP8 -> BF16 writes)

Each checkpoint is one directory with shards of about 1 GiB and an index. `py-convert`
converts one shard the way a numpy user would (deserialize, frombuffer, astype in
DeepSeek's order for FP8, serialize_file) and prints the time and bytes/s.
"""

import json
import os
import sys
import time

import ml_dtypes
import numpy as np
from safetensors import TensorSpec, deserialize, serialize_file

GIB = 1 << 30


def save(path, tensors):
    keep = list(tensors.values())
    specs = {
        n: TensorSpec(dtype=a.dtype.name, shape=list(a.shape), data_ptr=a.ctypes.data,
                      data_len=a.nbytes)
        for n, a in zip(tensors, keep)
    }
    serialize_file(specs, path, metadata={"format": "pt"})


def gen(kind, out, gib):
    os.makedirs(out)
    rng = np.random.default_rng(0)
    weight_map = {}
    shard, tensors, size, i = 0, {}, 0, 0
    total = int(gib * GIB)
    done = 0
    names = []

    def flush():
        nonlocal shard, tensors, size
        if tensors:
            name = f"model-{shard:05d}.safetensors"
            save(os.path.join(out, name), tensors)
            for n in tensors:
                weight_map[n] = name
            names.append(name)
            shard += 1
            tensors, size = {}, 0

    while done < total:
        if kind == "bf16":
            x = rng.standard_normal((4096, 8192), np.float32).astype(ml_dtypes.bfloat16)
            tensors[f"layers.{i}.mlp.weight"] = x
            size += x.nbytes
            done += x.nbytes
        else:
            codes = rng.integers(0, 0x7E, (7168, 2048), dtype=np.uint8)
            codes |= rng.integers(0, 2, codes.shape, dtype=np.uint8) << 7
            s = np.ldexp(rng.uniform(0.5, 1, (56, 16)), -8).astype(np.float32)
            tensors[f"layers.{i}.mlp.weight"] = codes.view(ml_dtypes.float8_e4m3fn)
            tensors[f"layers.{i}.mlp.weight_scale_inv"] = s
            size += codes.nbytes + s.nbytes
            done += codes.nbytes + s.nbytes
        i += 1
        if size >= GIB:
            flush()
    flush()
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": done}, "weight_map": weight_map}, f)
    print(f"{out}: {done} bytes in {len(names)} shards")


def py_convert(src, dst):
    t = time.perf_counter()
    with open(src, "rb") as f:
        raw = f.read()
    views = dict(deserialize(raw))
    out = {}
    for name, v in views.items():
        if name.endswith("_scale_inv"):
            continue
        if v["dtype"] == "BF16":
            a = np.frombuffer(v["data"], ml_dtypes.bfloat16).reshape(v["shape"])
            out[name] = a.astype(np.float16)
        elif v["dtype"] == "F8_E4M3":
            a = np.frombuffer(v["data"], ml_dtypes.float8_e4m3fn).reshape(v["shape"])
            s = views[name + "_scale_inv"]
            s = np.frombuffer(s["data"], np.float32).reshape(s["shape"])
            full = np.repeat(np.repeat(s, 128, 0), 128, 1)[: a.shape[0], : a.shape[1]]
            out[name] = (a.astype(np.float32) * full).astype(ml_dtypes.bfloat16)
    save(dst, out)
    el = time.perf_counter() - t
    written = sum(a.nbytes for a in out.values())
    print(f"python: {len(raw)} bytes read, {written} written in {el:.2f} s "
          f"({(len(raw) + written) / el / 1e9:.2f} GB/s read+write)")


def mmap_copy(src, dst, times):
    """Maps each shard and writes it out with write(2) straight from the mapping: one
    copy from the page cache of the input to that of the output, as `vcvt-st` does for
    tensors it keeps, and no conversion. `cat` and `cp` are not this bound: coreutils 9
    copies with copy_file_range, inside the kernel."""
    import mmap

    shards = sorted(os.path.join(src, f) for f in os.listdir(src) if f.endswith(".safetensors")) \
        if os.path.isdir(src) else [src]
    step = 8 << 20
    t0 = time.perf_counter()
    read = written = 0
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        for path in shards:
            with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                view = memoryview(m)
                for at in range(0, len(m), step):
                    piece = view[at:at + step]
                    for _ in range(times):
                        done = 0
                        while done < len(piece):
                            done += os.write(fd, piece[done:])
                        written += done
                    read += len(piece)
                    piece.release()
                view.release()
    finally:
        os.close(fd)
    el = time.perf_counter() - t0
    print(f"mmap-copy: {read} bytes read, {written} written in {el:.2f} s")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "gen-bf16":
        gen("bf16", sys.argv[2], float(sys.argv[3]))
    elif cmd == "gen-fp8":
        gen("fp8", sys.argv[2], float(sys.argv[3]))
    elif cmd == "py-convert":
        py_convert(sys.argv[2], sys.argv[3])
    elif cmd == "mmap-copy":
        mmap_copy(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    else:
        raise SystemExit(__doc__)
