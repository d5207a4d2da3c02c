#!/usr/bin/env bash
# Block-quantization known-answer vectors: (a) the committed files must be reproducible from the pinned
# references with the default seed; (b) a fresh random seed must pass the Rust test `block_vectors`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
python3 -m pip install -q "ml_dtypes==0.6.0" "numpy==2.4.6" "gguf==0.19.0" "mlx[cpu]==0.32.4"
tmp_a=$(mktemp -d) tmp_b=$(mktemp -d)
trap 'rm -rf "$tmp_a" "$tmp_b"' EXIT

echo "== (a) regenerate with the default seed and compare with tests/data/block"
python3 scripts/gen_block_vectors.py "$tmp_a"
fail=0
for f in tests/data/block/*.tsv; do
  # *_ggml_c.tsv come from ggml's C code (scripts/ggml_nvfp4/run.sh, run by hand: it needs the
  # ggml sources), not from this generator.
  case "$f" in *_ggml_c.tsv) continue ;; esac
  if ! cmp "$f" "$tmp_a/$(basename "$f")"; then echo "DIFFERS: $f"; fail=1; fi
done
for f in "$tmp_a"/*.tsv; do
  [ -e "tests/data/block/$(basename "$f")" ] || { echo "NOT COMMITTED: $(basename "$f")"; fail=1; }
done
[ "$fail" = 0 ] || { echo "block vectors are not reproducible from the pinned references"; exit 1; }

echo "== (b) fresh random seed"
seed=$(python3 -c 'import secrets; print(secrets.randbelow(2**31))')
echo "seed: $seed"
python3 scripts/gen_block_vectors.py "$tmp_b" --seed "$seed"
cp tests/data/block/*_ggml_c.tsv "$tmp_b"/
VCVT_BLOCK_VECTORS="$tmp_b" cargo test --test block_vectors
