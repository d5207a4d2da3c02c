#!/usr/bin/env bash
# aarch64 checks under qemu user-mode emulation, on an x86-64 Debian machine, as root.
#
#   bash .ci/aarch64.sh
#
# Installs what it needs (idempotent: apt runs only if a package is missing), then:
# clippy and rustdoc for aarch64-unknown-linux-gnu, and for each emulated CPU
#   -cpu max         (FEAT_BF16 and FEAT_FP16: backends neon-bf16, neon, scalar)
#   -cpu cortex-a72  (ARMv8.0, neither:        backends neon, scalar)
# checks that run-time detection lists exactly the expected backends
# (examples/backends.rs), then runs the test suite with VCVT_SWEEP=sample (the
# stratified sample instead of the 2^32 sweeps, which are too slow under emulation): all of
# it under -cpu max, the tests that run every kernel under -cpu cortex-a72.
# Prints the wall time of every step. Measured on the 2-core machine shared with other
# builds: about 15 minutes from an empty target directory (mostly compiling the tests), about
# 2 minutes when warm.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=aarch64-unknown-linux-gnu
QEMU="qemu-aarch64 -L /usr/aarch64-linux-gnu"
export DEBIAN_FRONTEND=noninteractive
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TERM_COLOR=never
START=$SECONDS

# step NAME COMMAND...: runs COMMAND and prints its wall time; stops the script on failure.
step() {
    local name=$1
    shift
    local t0=$SECONDS
    echo "=== [aarch64] $name"
    if ! "$@"; then
        echo "=== [aarch64] FAILED: $name ($((SECONDS - t0)) s)"
        exit 1
    fi
    echo "=== [aarch64] $name: $((SECONDS - t0)) s"
}

install_tools() {
    local pkgs=(qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
    if dpkg -s "${pkgs[@]}" >/dev/null 2>&1; then
        echo "apt packages present: ${pkgs[*]}"
    else
        apt-get update -q
        apt-get install -y -q "${pkgs[@]}"
    fi
    if rustup target list --installed | grep -qx "$TARGET"; then
        echo "rust target present: $TARGET"
    else
        rustup target add "$TARGET"
    fi
    qemu-aarch64 --version | head -n 1
}

# check_backends CPU EXPECTED: the example prints `available: ...` and `active: ...`. Built
# with the test profile, which `cargo test` has already built.
check_backends() {
    local cpu=$1 expected=$2 out
    out=$(cargo run -q --profile test --target "$TARGET" --example backends)
    echo "$out"
    if ! grep -qx "available: $expected" <<<"$out"; then
        echo "-cpu $cpu: expected 'available: $expected'"
        return 1
    fi
    if ! grep -qx "active: ${expected%% *}" <<<"$out"; then
        echo "-cpu $cpu: expected 'active: ${expected%% *}'"
        return 1
    fi
}

# The test suite. tests/backend_override.rs spawns this test binary as a child process
# through VCVT_TEST_RUNNER (the host cannot execute an aarch64 binary itself; binfmt_misc
# is not available in containers).
run_tests() {
    VCVT_SWEEP=sample cargo test --target "$TARGET" "$@"
}

step "install qemu, cross gcc and the rust target" install_tools
# The library (with its aarch64 kernels) is linted; the test targets are compiled below.
step "clippy (lib)" cargo clippy --target "$TARGET" --lib -- -D warnings
step "clippy (lib, no_std)" cargo clippy --target "$TARGET" --lib --no-default-features -- -D warnings
step "rustdoc" env RUSTDOCFLAGS=-Dwarnings cargo doc --target "$TARGET" --no-deps
# The test targets that run aarch64 code paths: the library's internal tests (internals: the
# generic block kernels' tables, every block scheme and Converter route on every backend, the
# swapped-bytes path), every kernel of every backend (tails, widen,
# specials, known answers, narrow pairs, f64 sources, NaN policies, packed FP4, round trips,
# the 2^32 sweeps as samples, FPCR settings (fpcr), the width and passes of every pair's
# kernel (kernels)), the block kernels (block, block_backends, block_backends_nvfp4,
# block_profiles, block_generic, block_vectors, block_scaled_tails), their widths (block_kernels) and the row
# handles over every row width (block_rows), the ml_dtypes 0.7 run tables on the active
# NEON kernels (mldtypes_runs), the
# register-level converters (vector), the hardware comparisons,
# detection and VCVT_BACKEND (backend_override) and the fuzz seeds through every entry
# point. Left to the native run, because they have no architecture-specific path: the
# text module (tests/text.rs, text_long, float_core), the block API's size arithmetic
# (block_sizes), the API's proptest properties (api: entry-point
# logic above the kernels, which tails and fuzz_replay reach here), the scale-rule sweeps
# (block_scale_sweep: integer and soft-float code), the half-crate and ml_dtypes agreement
# files (codec values the kernel tests already pin) and the feature-gated targets
# (text_features, safetensors, par: empty without their features).
SUITE=()
for name in internals tails widen specials known_answers narrow_pairs f64_sources nan_policy packed_fp4 \
    round_trip exhaustive_f32 mxcsr block block_backends block_backends_nvfp4 block_profiles \
    block_generic block_vectors vector hardware backend_override fuzz_replay kernels fpcr \
    block_kernels block_rows mldtypes_runs block_scaled_tails; do
    SUITE+=(--test "$name")
done
# A new test file must be placed in one list or the other.
for f in tests/*.rs; do
    name=$(basename "$f" .rs)
    case " ${SUITE[*]} text text_long float_core api block_scale_sweep block_sizes half_crate mldtypes_vectors text_features safetensors par " in
    *" $name "*) ;;
    *)
        echo "tests/$name.rs is in neither list of .ci/aarch64.sh"
        exit 1
        ;;
    esac
done

step "build tests" cargo test --target "$TARGET" --no-run "${SUITE[@]}"

for spec in "max:neon-bf16 neon scalar" "cortex-a72:neon scalar"; do
    cpu=${spec%%:*}
    expected=${spec#*:}
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$QEMU -cpu $cpu"
    export VCVT_TEST_RUNNER="$QEMU -cpu $cpu"
    step "backends under -cpu $cpu" check_backends "$cpu" "$expected"
    if [ "$cpu" = max ]; then
        step "tests under -cpu $cpu (VCVT_SWEEP=sample)" run_tests "${SUITE[@]}"
    else
        # Under -cpu max every test already runs on both NEON tiers (the tests loop over the
        # available backends). What this CPU adds is that the plain `neon` tier and the
        # detection never execute an FP16/BF16 instruction (SIGILL here): the tests that run
        # every kernel (every pair at every length and offset, the block kernels, the FPCR
        # settings, the known answers and special values) suffice for that; the text, API
        # and data-file tests do not depend on the CPU. (For CI time, the tests that run
        # every kernel at every length, every block kernel, every code widened, the
        # register-level converters, and the generic NEON kernels: every narrow <-> narrow
        # pair, the fused round trips and every pair under non-default FPCR.)
        step "kernel tests under -cpu $cpu (VCVT_SWEEP=sample)" run_tests \
            --test tails --test block_backends --test block_backends_nvfp4 \
            --test block_profiles --test block_generic --test widen --test vector \
            --test narrow_pairs --test round_trip --test fpcr --test kernels
    fi
done

echo "=== [aarch64] all steps passed in $((SECONDS - START)) s"
