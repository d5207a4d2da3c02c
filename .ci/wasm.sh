#!/usr/bin/env bash
# WebAssembly checks: the test suite for wasm32-wasip1 under wasmtime, on an x86-64 Debian
# machine, as root.
#
#   bash .ci/wasm.sh
#
# Installs what it needs (idempotent): the rust target and, in a virtual environment under
# the target directory, the `wasmtime` Python package (wasmtime-py, which ships the wasmtime
# runtime; pinned below), which scripts/wasm_run.py uses as cargo's runner. Then:
#
# * clippy on the library for wasm32, with and without simd128 (without it the build has
#   only the `scalar` backend).
# * With `-C target-feature=+simd128` (the `simd128` backend): checks that the build lists
#   exactly `simd128 scalar` with `simd128` active (examples/backends.rs), and that
#   VCVT_BACKEND=scalar selects Scalar; then the kernel, narrow <-> narrow, round-trip,
#   f64-source, NaN-policy and API tests with VCVT_SWEEP=sample (the stratified samples
#   instead of the 2^32 sweeps, as under qemu). Each test covers every available backend,
#   so simd128 and Scalar.
#
# wasm32-wasip1 has no threads (the shared sweep helper runs its halves one after the
# other), no processes (tests/backend_override.rs and tails_streaming_stores stay native;
# the example checks VCVT_BACKEND instead) and aborts on panic (the tests that catch
# expected panics skip those calls, saying so). `--nocapture` because a panic ends the
# test binary before libtest would print a failed test's captured output.
#
# Prints the wall time of every step. Measured on the 2-core machine shared with other
# builds: about 5 minutes from an empty target directory, nearly all of it compiling the test
# binaries.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=wasm32-wasip1
WASMTIME_VERSION=50.0.1
export CARGO_TERM_COLOR=never
TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
case $TARGET_DIR in /*) ;; *) TARGET_DIR=$PWD/$TARGET_DIR ;; esac
VENV=$TARGET_DIR/wasm-venv
START=$SECONDS

# step NAME COMMAND...: runs COMMAND and prints its wall time; stops the script on failure.
step() {
    local name=$1
    shift
    local t0=$SECONDS
    echo "=== [wasm] $name"
    if ! "$@"; then
        echo "=== [wasm] FAILED: $name ($((SECONDS - t0)) s)"
        exit 1
    fi
    echo "=== [wasm] $name: $((SECONDS - t0)) s"
}

install_tools() {
    if rustup target list --installed | grep -qx "$TARGET"; then
        echo "rust target present: $TARGET"
    else
        rustup target add "$TARGET"
    fi
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q
        apt-get install -y -q python3-venv
    fi
    if [ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("wasmtime"))' 2>/dev/null)" = "$WASMTIME_VERSION" ]; then
        echo "wasmtime-py present: $WASMTIME_VERSION"
    else
        rm -rf "$VENV"
        python3 -m venv "$VENV"
        "$VENV/bin/pip" install -q --disable-pip-version-check "wasmtime==$WASMTIME_VERSION"
    fi
    "$VENV/bin/python" -c 'import wasmtime, importlib.metadata as m; print("wasmtime-py", m.version("wasmtime"))'
}

# check_backends EXPECTED CARGO_ARGS...: the example prints `available: ...` and
# `active: ...`; the best one is active, and VCVT_BACKEND=scalar selects Scalar.
check_backends() {
    local expected=$1 out
    shift
    out=$(env -u VCVT_BACKEND cargo run -q --target "$TARGET" "$@" --example backends)
    echo "$out"
    if ! grep -qx "available: $expected" <<<"$out"; then
        echo "expected 'available: $expected'"
        return 1
    fi
    if ! grep -qx "active: ${expected%% *}" <<<"$out"; then
        echo "expected 'active: ${expected%% *}'"
        return 1
    fi
    out=$(VCVT_BACKEND=scalar cargo run -q --target "$TARGET" "$@" --example backends)
    echo "VCVT_BACKEND=scalar: $out"
    if ! grep -qx "active: scalar" <<<"$out"; then
        echo "VCVT_BACKEND=scalar: expected 'active: scalar'"
        return 1
    fi
}

step "install the rust target and wasmtime-py $WASMTIME_VERSION" install_tools

export CARGO_TARGET_WASM32_WASIP1_RUNNER="$VENV/bin/python $PWD/scripts/wasm_run.py"
export VCVT_SWEEP=sample
unset CARGO_ENCODED_RUSTFLAGS VCVT_BACKEND
# No debug info in the wasm test binaries: wasmtime's backtraces use the name section, and
# the line tables only lengthen the build.
export CARGO_PROFILE_TEST_DEBUG=0

# The library's internal tests (internals: every `portable` kernel on short unaligned slices,
# the generic block kernels' tables, every block scheme and Converter route on every
# backend, the swapped-bytes path); the tests that run every kernel (every pair at every
# length and offset, every code
# widened, the exhaustive f32 sweep's stratified sample), the known answers, and the API
# (which checks that simd128 is listed and chosen); and, since simd128 has the generic
# kernels (src/simd/wasm32/simd128.rs) for f64 sources and destinations, narrow <-> narrow
# pairs in one pass and fused round trips: the f64 ties and random sample, every source
# code of every narrow <-> narrow pair, the round trips, and the NaN policies (simd128's F16
# narrowings implement Preserve and the dispatcher patches the others in); the MX block
# kernels (src/simd/generic/block/mx.rs) against Scalar and their widths (block_backends,
# block_kernels); the block kernels of the MX Ggml and Mlx profiles (block_profiles); the
# NVFP4 kernels (block_backends_nvfp4); and the other generic block kernels simd128 has
# (block FP8 quantization and dequantization, amax, the fused scaled building blocks:
# block_generic, block_backends); packed FP4 against its own oracle through every entry
# point (packed_fp4). Every test file
# is a wasm binary of its own, and compiling them is most of this script's time. Not here:
# tests/fuzz_replay.rs (slowest to compile; the corpus runs natively and under
# Miri), the x86/aarch64-specific sweeps, backend_override.rs (processes; the example
# checks VCVT_BACKEND instead) and the text and data-file tests (no kernel of their own).
SUITE=()
for t in internals tails known_answers widen exhaustive_f32 api narrow_pairs round_trip f64_sources nan_policy \
    block_backends block_kernels block_profiles block_generic block_backends_nvfp4 packed_fp4; do
    SUITE+=(--test "$t")
done
export CARGO_TARGET_DIR=$TARGET_DIR

export RUSTFLAGS=""
step "clippy (lib, no simd128)" cargo clippy --target "$TARGET" --lib -- -D warnings
export RUSTFLAGS="-C target-feature=+simd128"
step "clippy (lib, simd128)" cargo clippy --target "$TARGET" --lib -- -D warnings
step "build tests (simd128)" cargo test --target "$TARGET" --no-run "${SUITE[@]}"
step "backends (simd128)" check_backends "simd128 scalar" --profile test
step "tests (simd128, VCVT_SWEEP=sample)" \
    cargo test --target "$TARGET" "${SUITE[@]}" -- --nocapture

echo "=== [wasm] all steps passed in $((SECONDS - START)) s"
