#!/usr/bin/env bash
# The Python package (python/): builds the abi3 wheel with maturin, installs it into a fresh
# venv and runs its pytest suite there (bit-exact against ml_dtypes, block formats against
# gguf/mlx and the committed vectors, errors, layouts, threads, dask). Run from anywhere.
#
# The venv sees the system site-packages, so it reuses the pinned numpy, ml_dtypes, gguf and
# mlx that .ci/run's installs put there (installed here too when this script runs alone);
# maturin, pytest and dask are pinned into the venv. The wheel's own code (vcvt) comes only
# from the wheel: pytest runs from python/tests against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

python3 -m pip install -q "ml_dtypes==0.6.0" "numpy==2.4.6" "gguf==0.19.0" "mlx[cpu]==0.32.4"
# Debian's python3 needs python3-venv for `-m venv` (.ci/run's installs step has it).
if ! python3 -c "import ensurepip, venv" 2>/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m venv --system-site-packages "$WORK/venv"
PY="$WORK/venv/bin/python"
"$PY" -m pip install -q "pytest==8.4.2" "dask[array]==2025.11.0"
# Into the venv itself even where the system Python has it (`python -m maturin` runs the
# venv's `maturin` script).
"$PY" -m pip install -q --ignore-installed "maturin==1.9.4"
echo "venv and pip installs: $((SECONDS - START)) s"

T0=$SECONDS
# The release profile, as users get it (the extension's own build dominates this step).
"$PY" -m maturin build --release --manifest-path python/Cargo.toml \
    --interpreter "$PY" --out "$WORK/wheels"
echo "maturin build --release: $((SECONDS - T0)) s"

"$PY" -m pip install -q --no-deps "$WORK"/wheels/vcvt-*.whl
# The issue's acceptance line, from outside the source tree.
(cd "$WORK" && "$PY" -c "import vcvt, numpy as np; print(vcvt.astype(np.ones(4, np.float32), 'float8_e4m3fn'))")

T0=$SECONDS
# -p no:cacheprovider: nothing written into the checkout.
(cd python && "$PY" -m pytest -q -p no:cacheprovider tests)
echo "pytest: $((SECONDS - T0)) s"
echo ".ci/python.sh done in $((SECONDS - START)) s"
