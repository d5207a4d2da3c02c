#!/usr/bin/env bash
# Differential fuzzing of vcvt: the cargo-fuzz targets of fuzz/ (libFuzzer + AddressSanitizer)
# each run for a bounded time from the committed seeds; any crash fails the script.
#
#   bash .ci/fuzz.sh            # 10 s per target (slices, bytes, block, text, st_plan), one per CPU at a time
#   bash .ci/fuzz.sh 1800       # a longer campaign: 30 min per target
#   FUZZ_TARGETS=slices bash .ci/fuzz.sh 300
#   FUZZ_JOBS=1 bash .ci/fuzz.sh  # one target at a time
#
# Runs as root on a fresh Debian machine, non-interactively: installs the nightly toolchain,
# cargo-fuzz and a C++ compiler (libfuzzer-sys builds libFuzzer) when they are missing.
# New inputs go to fuzz/scratch/<target>/ (git-ignored), never into the committed corpus;
# a crash is written to fuzz/artifacts/<target>/ and its path printed.
set -euo pipefail
cd "$(dirname "$0")/.."

SECS="${1:-${FUZZ_SECONDS:-10}}"
read -r -a TARGETS <<<"${FUZZ_TARGETS:-slices bytes block text st_plan}"
START=$SECONDS

echo "--- setup"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi
if ! command -v c++ >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ >/dev/null
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
rustc +nightly --version
cargo fuzz --version

cd fuzz
echo "--- build (ASan, release with debug assertions)"
cargo +nightly fuzz build

# Each libFuzzer process runs on one core: the targets run JOBS at a time (default: the
# number of CPUs), each for SECS seconds.
JOBS="${FUZZ_JOBS:-$(nproc)}"
fuzz_one() {
    local t=$1 log="scratch/$1.log" t0=$SECONDS result
    mkdir -p "scratch/$t" "regressions/$t"
    # The first directory receives new inputs; the seeds and regressions are only read.
    if cargo +nightly fuzz run "$t" "scratch/$t" "corpus/$t" "regressions/$t" -- \
        -max_total_time="$SECS" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
        >"$log" 2>&1; then
        result=ok
    else
        result=FAILED
    fi
    local execs rate cov
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1 || true)
    echo "$t: $result, ${execs:-?} executions (${rate:-?}/s), $cov, $((SECONDS - t0)) s" >"scratch/$t.result"
    [ "$result" = ok ]
}

echo "--- fuzz ${TARGETS[*]} for ${SECS}s each, $JOBS at a time"
status=0
summary=()
for ((i = 0; i < ${#TARGETS[@]}; i += JOBS)); do
    batch=("${TARGETS[@]:i:JOBS}")
    pids=()
    for t in "${batch[@]}"; do
        rm -f "scratch/$t.result"
        fuzz_one "$t" &
        pids+=($!)
    done
    for k in "${!batch[@]}"; do
        t=${batch[$k]}
        if ! wait "${pids[$k]}"; then
            status=1
        fi
        line=$(cat "scratch/$t.result" 2>/dev/null || echo "$t: FAILED (no result)")
        summary+=("$line")
        echo "$line"
        case $line in
        *": ok,"*) ;;
        *)
            log="scratch/$t.log"
            # The harness's message, the sanitizer report and the crash file.
            grep -E -A 12 'vcvt fuzz failure|ERROR: AddressSanitizer|ERROR: libFuzzer|panicked' "$log" | head -n 60 || true
            grep -E 'Test unit written to|artifact_prefix' "$log" || true
            echo "(full log: fuzz/$log)"
            ;;
        esac
    done
done

echo "--- summary"
printf '%s\n' "${summary[@]}"
echo "fuzz.sh wall time: $((SECONDS - START)) s"
exit $status
