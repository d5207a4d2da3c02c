#!/usr/bin/env bash
# The `portable` backend away from this host's AVX2: x86-64 CPUs without AVX2 under
# qemu-x86_64, big-endian s390x with its vector facility under qemu-s390x, and build checks
# for riscv64. Runs as root on a fresh Debian x86-64 machine; installs what it needs.
#
#   bash .ci/portable.sh
#
# What each step proves:
# * qemu-x86_64 -cpu Nehalem (SSE4.2, no AVX): run-time detection lists `portable scalar`,
#   `portable` is active and runs its x86-64-v2 clone (multiversion's dispatcher picks it);
#   the kernel tests pass on it. (Natively, the exhaustive tests of `cargo test` sweep the
#   same clone over all 2^32 f32 inputs, since this host has SSE4.2.)
# * qemu-x86_64 -cpu qemu64 (SSE2/SSE3 only): the same on the baseline SSE2 clone.
# * qemu-s390x -cpu max: a big-endian target whose `portable` clone is chosen by
#   `is_s390x_feature_detected!("vector")`; the kernel tests with the stratified samples,
#   and the library's internal tests (tests/internals.rs).
# * riscv64gc: the library builds (runtime-selected RISC-V V clones need nightly; the
#   baseline clone is what runs there).
# The x86 runs reuse the test binaries `cargo test` built (same host and profile); only
# the s390x suite is compiled here.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
export DEBIAN_FRONTEND=noninteractive CARGO_TERM_COLOR=never

step() {
    local name=$1
    shift
    local t0=$SECONDS
    echo "=== [portable] $name"
    if ! "$@"; then
        echo "=== [portable] FAILED: $name ($((SECONDS - t0)) s)"
        exit 1
    fi
    echo "=== [portable] $name: $((SECONDS - t0)) s"
}

install_tools() {
    local pkgs=(qemu-user gcc-s390x-linux-gnu libc6-dev-s390x-cross)
    if dpkg -s "${pkgs[@]}" >/dev/null 2>&1; then
        echo "apt packages present: ${pkgs[*]}"
    else
        apt-get update -q
        apt-get install -y -q "${pkgs[@]}"
    fi
    rustup target add s390x-unknown-linux-gnu riscv64gc-unknown-linux-gnu
}

# check_backends TARGET EXPECTED: examples/backends.rs prints `available: ...` and
# `active: ...`; `portable` must be listed as EXPECTED says and be the active backend.
check_backends() {
    local expected=$1 out
    shift
    out=$(cargo run -q --profile test "$@" --example backends)
    echo "$out"
    grep -qx "available: $expected" <<<"$out" || {
        echo "expected 'available: $expected'"
        return 1
    }
    grep -qx "active: portable" <<<"$out" || {
        echo "expected 'active: portable'"
        return 1
    }
}

# The tests that run every kernel of every backend: every pair at every length, offset and
# overflow policy (tails), every code widened (widen), the special values, and the 2^32
# sweeps as stratified samples (VCVT_SWEEP=sample).
KERNEL_TESTS=(--test tails --test widen --test specials --test exhaustive_f32)
# On s390x also the library's internal tests (under a second to run): its `portable` kernels on short
# unaligned slices, every block scheme and Converter route, and the swapped-bytes path, which
# is what little-endian byte input takes on this big-endian host.
S390X_TESTS=("${KERNEL_TESTS[@]}" --test internals)

run_x86() {
    local cpu=$1
    export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="qemu-x86_64 -cpu $cpu"
    # tests/tails.rs re-runs its own binary as a child process through this.
    export VCVT_TEST_RUNNER="qemu-x86_64 -cpu $cpu"
    check_backends "portable scalar"
    VCVT_SWEEP=sample cargo test "${KERNEL_TESTS[@]}"
}

S390X=s390x-unknown-linux-gnu
run_s390x() {
    export CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_LINKER=s390x-linux-gnu-gcc
    export CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_RUNNER="qemu-s390x -L /usr/s390x-linux-gnu -cpu max"
    export VCVT_TEST_RUNNER=$CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_RUNNER
    check_backends "portable scalar" --target $S390X
    VCVT_SWEEP=sample cargo test --target $S390X "${S390X_TESTS[@]}"
}

step "install qemu, s390x cross gcc and the rust targets" install_tools
# `target.x86_64-unknown-linux-gnu.runner` applies to host builds without `--target`, so
# these are the binaries `cargo test` built (nothing is recompiled).
step "x86-64-v2 (qemu -cpu Nehalem: SSE4.2, no AVX)" run_x86 Nehalem
step "x86-64 baseline (qemu -cpu qemu64: SSE2/SSE3)" run_x86 qemu64
step "s390x: clippy" cargo clippy --target $S390X --lib -- -D warnings
step "s390x: build the kernel tests" env CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_LINKER=s390x-linux-gnu-gcc \
    cargo test --target $S390X --no-run "${S390X_TESTS[@]}"
step "s390x (qemu -cpu max, vector facility)" run_s390x
step "riscv64gc: the library builds" cargo build --lib --target riscv64gc-unknown-linux-gnu

echo "=== [portable] all steps passed in $((SECONDS - START)) s"
