#!/usr/bin/env bash
# vcvt-st and the library's `safetensors`/`rayon` features: lint, Rust tests, and the end-to-end
# tests against Python's safetensors + numpy + ml_dtypes (pinned). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS

python3 -m pip install -q "safetensors==0.8.0" "numpy==2.4.6" "ml_dtypes==0.6.0"

cargo clippy -p vcvt-st --all-targets -- -D warnings
# --all-features: the feature set of .ci/run's --all-features step, whose build this reuses;
# tests/internals.rs has the parallel chunking's test (`par::chunk_edges`) with `rayon`.
cargo test --all-features --test internals --test par --test safetensors
# Builds the binary too (with the test profile: opt-level 3 and debug assertions), which
# the Python tests then run; a separate release build would only add compile time.
cargo test -p vcvt-st
BIN="${CARGO_TARGET_DIR:-target}/debug/vcvt-st"
python3 vcvt-st/tests/e2e.py "$BIN"
# The Slurm fan-out on a real one-node Slurm (installed and started there, about 20 s): a job
# array, a task resubmitted alone, finalize.
T=$SECONDS
bash vcvt-st/tests/slurm.sh "$BIN"
echo "slurm.sh: $((SECONDS - T)) s"

echo ".ci/st.sh done in $((SECONDS - START)) s"
