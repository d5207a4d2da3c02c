#!/usr/bin/env bash
# vcvt-st and the library's `safetensors`/`rayon` features: lint, Rust tests, and the end-to-end
# tests against Python's safetensors + numpy + ml_dtypes (pinned). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS

python3 -m pip install -q "safetensors==0.8.0" "numpy==2.4.6" "ml_dtypes==0.6.0"

cargo clippy -p vcvt-st --all-targets -- -D warnings
# The library's feature-gated tests (tests/internals.rs has the parallel chunking's test,
# `par::chunk_edges`, with `rayon`) and all of vcvt-st's, in one build: the package set and
# features of .ci/run's --all-features step, whose build of the library this reuses (vcvt-st
# alone would resolve other features and compile the library again). This also builds the
# binary (test profile: opt-level 3 and debug assertions), which the Python tests then run;
# a separate release build would only add compile time.
ST_TESTS=(--bins)
for f in vcvt-st/tests/*.rs; do
    ST_TESTS+=(--test "$(basename "$f" .rs)")
done
cargo test -p vcvt -p vcvt-st --all-features --test internals --test par --test safetensors \
    "${ST_TESTS[@]}"
BIN="${CARGO_TARGET_DIR:-target}/debug/vcvt-st"
python3 vcvt-st/tests/e2e.py "$BIN"
# The Slurm fan-out on a real one-node Slurm (installed and started there, about 20 s): a job
# array, a task resubmitted alone, finalize.
T=$SECONDS
bash vcvt-st/tests/slurm.sh "$BIN"
echo "slurm.sh: $((SECONDS - T)) s"

echo ".ci/st.sh done in $((SECONDS - START)) s"
