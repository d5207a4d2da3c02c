#!/usr/bin/env python3
"""The small checkpoints of the vcvt-st examples (vcvt-st/README.md), written into DIR:

    python3 scripts/st_demo.py DIR

* DIR/hub/models--org--minilm/snapshots/0123abc: a sentence-transformers model (F32, BERT
  names) as a Hugging Face cache snapshot, every entry a symbolic link into ../../blobs/, with
  a 1_Pooling/ folder;
* DIR/big: 6 shards of BF16 [16384, 256] tensors (and an F32 norm each), with an index, a
  config and an original/ folder (vcvt-st/tests/e2e.py's `write_sharded`), 193 MB;
* DIR/ds: a DeepSeek-style block-FP8 weight with its weight_scale_inv (`fp8_weight`).

Uses the helpers of vcvt-st/tests/e2e.py (same seed), so the files are the same on every run.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vcvt-st", "tests"))
sys.argv = [sys.argv[0], "unused"] + sys.argv[1:]  # e2e.py reads its binary from argv[1]
from e2e import RNG, fp8_weight, ml_dtypes, np, random_floats, save, write_sharded  # noqa: E402


def snapshot(root):
    repo = os.path.join(root, "hub", "models--org--minilm")
    blobs = os.path.join(repo, "blobs")
    snap = os.path.join(repo, "snapshots", "0123abc")
    os.makedirs(blobs)
    os.makedirs(os.path.join(snap, "1_Pooling"))
    n = 0

    def blob(name, data, up="../.."):
        nonlocal n
        n += 1
        b = os.path.join(blobs, f"{n:040x}")
        if isinstance(data, dict):
            save(b, data, {"format": "pt"})
        else:
            with open(b, "wb") as f:
                f.write(data)
        os.symlink(f"{up}/blobs/{n:040x}", os.path.join(snap, name))

    f = np.float32
    blob("model.safetensors", {
        "embeddings.word_embeddings.weight": RNG.normal(0, 0.05, (1000, 384)).astype(f),
        "embeddings.LayerNorm.weight": (1 + RNG.normal(0, 0.1, 384)).astype(f),
        "encoder.layer.0.attention.self.query.weight": RNG.normal(0, 0.04, (384, 384)).astype(f),
        "encoder.layer.0.attention.output.LayerNorm.weight": (1 + RNG.normal(0, 0.1, 384)).astype(f),
        "encoder.layer.0.intermediate.dense.weight": RNG.normal(0, 0.04, (1536, 384)).astype(f),
        "encoder.layer.0.intermediate.dense.bias": RNG.normal(0, 0.01, 1536).astype(f),
    })
    blob("config.json", json.dumps({"architectures": ["BertModel"], "model_type": "bert",
                                    "torch_dtype": "float32"}).encode())
    blob("modules.json", json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]).encode())
    blob("1_Pooling/config.json",
         b'{"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true}', "../../..")
    blob("tokenizer.json", b'{"version": "1.0"}')


def deepseek(root):
    ds = os.path.join(root, "ds")
    os.makedirs(ds)
    w, s = fp8_weight(1536, 7168)
    save(os.path.join(ds, "model-00001-of-00001.safetensors"), {
        "model.layers.0.mlp.down_proj.weight": w,
        "model.layers.0.mlp.down_proj.weight_scale_inv": s,
        "model.layers.0.input_layernorm.weight": random_floats((7168,)).astype(ml_dtypes.bfloat16),
    }, {"format": "pt"})
    with open(os.path.join(ds, "config.json"), "w") as f:
        f.write("{}")


def main():
    root = sys.argv[2]
    os.makedirs(root, exist_ok=True)
    snapshot(root)
    write_sharded(os.path.join(root, "big"), 6, rows=16384, tensors_per_shard=4)
    deepseek(root)


if __name__ == "__main__":
    main()
