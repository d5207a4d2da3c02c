#!/usr/bin/env bash
# vcvt under Miri: undefined behaviour in the Scalar kernels (raw unaligned pointers), the
# cached dispatch, the slice/byte/uninit entry points and the fuzz harness.
#
# Under Miri `is_x86_feature_detected!` reports no feature and the `portable` backend is
# left out (its plain-Rust kernels run under Miri in the internal tests of
# src/arch/portable.rs, which tests/internals.rs runs), so only Backend::Scalar is available and runs (tests/fuzz_replay.rs
# `miri_sees_only_scalar` checks that).
#
# Runs as root on a fresh Debian machine, non-interactively; installs nightly, miri and
# rust-src when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS

echo "--- setup"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi
rustup +nightly component add miri rust-src
cargo +nightly miri setup
cargo +nightly miri --version

# -Zmiri-disable-isolation: tests/fuzz_replay.rs reads fuzz/corpus and fuzz/regressions, and
#   the tests read VCVT_SWEEP / PROPTEST_CASES, which an isolated Miri hides.
# -Zmiri-deterministic-floats: Miri otherwise adds random error to the float functions whose
#   precision Rust does not promise (`powi`, ...), and tests/api.rs computes its expected
#   constants with `2f64.powi(n)`, exact on real hardware. The crate's codec uses only integer
#   operations, so this hides nothing in it.
# VCVT_SWEEP=sample: the sweeps' stratified samples instead of exhaustive loops.
# PROPTEST_CASES: each proptest property of tests/api.rs runs this many cases instead of 256,
#   with slices of up to 40 values instead of 300 (tests/api.rs `MAX_LEN`: a 300-value case
#   takes ~10 s under Miri); the 256 full-length cases run natively.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation -Zmiri-deterministic-floats}"
export VCVT_SWEEP=sample
export PROPTEST_CASES="${PROPTEST_CASES:-1}"

# What Miri adds is the memory safety of `unsafe` code (raw unaligned pointers, uninit
# destinations, the guards of the fuzz harness); values are integer arithmetic that the native
# runs check on every input. So each kernel shape runs once here, and tests of safe code only
# are ignored under Miri (`cfg_attr(miri, ignore = ...)` says so at each), running natively.
# Targets run under Miri:
#   internals            the library's internal tests: the big-endian byte path through the
#                        kernels, every portable kernel on short unaligned slices, every block
#                        scheme through its entry points, every Converter route (the
#                        soft-float, wide_fast and MX scale-rule arithmetic tests are ignored:
#                        safe code)
#   fuzz_replay          the regressions through the fuzz harness (cut to short lengths under
#                        Miri), the harnesses' fault self-tests, and `every_pair_and_option_runs`
#                        on one pair per Scalar kernel shape (2-byte code, 1-byte code, packed
#                        FP4; each direction; both overflow loops of a narrowing): every entry
#                        point, destination kind and error path; the seed-corpus replays, the
#                        input-encoding test and the tests that only check committed data are
#                        ignored under Miri for CI time (they run natively)
# Not run under Miri, and why:
#   known_answers        its values are the codec's, checked natively on every backend; its
#                        memory accesses are the Scalar kernels through `convert_slice_on`, which
#                        fuzz_replay runs here for every kernel shape and entry point; and parsing
#                        its 600-line table alone took Miri 132 s (the whole test 278 s, with
#                        16 rows or all 597: the rows are not the cost)
#   api                  the entry points' lengths, errors and options with proptest (about
#                        2 minutes under Miri even at one case of 40 values per property):
#                        fuzz_replay already calls every entry point, error path and
#                        destination kind through the Scalar kernels; api runs natively
#   exhaustive_f32, half_crate, hardware   2^32 sweeps: even the stratified sample is far too
#                        slow for Miri, and hardware needs the F16C/AVX-512 instructions
#                        (unavailable under Miri); they only repeat codec values the
#                        targets above already run through the same Scalar kernels
#   f64_sources, widen   ~10^5 (sample) to 2^16 conversions per format: hours under Miri;
#                        codec values, no new unsafe paths
#   tails                every length/offset for every pair and policy: the same Scalar
#                        loops fuzz_replay runs, at a cost of tens of minutes under Miri
#   backend_override     spawns child processes, which Miri cannot do
#   doc tests            cargo miri runs them only without target filters; they are the
#                        entry points' examples, covered by fuzz_replay
#   benches, examples    no tests
args=(--test internals --test fuzz_replay)
echo "--- cargo +nightly miri test ${args[*]}"
cargo +nightly miri test "${args[@]}"
echo "miri.sh wall time: $((SECONDS - START)) s"
