#!/bin/sh
# Builds bench.c against ggml's own (unmodified) src/ggml-quants.c at the commit the test
# vectors pin (scripts/ggml_nvfp4/run.sh), with the compiler's best flags for this machine,
# and prints el/ns (median and fastest round) of quantize_row_mxfp4_ref, dequantize_row_mxfp4 and dequantize_row_nvfp4 on
# the inputs and shape of `cargo bench --bench block -- 'profiles_|nvfp4'` (8 rows × 4096 values).
#
# usage: scripts/ggml_mxfp4_bench/run.sh <ggml git dir> [reps]
#   <ggml git dir>: any clone (bare or not) of https://github.com/ggml-org/ggml containing GGML_COMMIT.
set -eu

GGML_COMMIT=d99724f2b141fed9e1a9f402213506c081433465
GGML_GIT=${1:?usage: run.sh <ggml git dir> [reps]}
REPS=${2:-101}
HERE=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-gcc}
CFLAGS="-O3 -march=native -std=gnu11"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
git -C "$GGML_GIT" archive "$GGML_COMMIT" src include | tar -x -C "$TMP"
INC="-I$TMP/include -I$TMP/src -I$TMP/src/ggml-cpu"
$CC $CFLAGS $INC -c "$TMP/src/ggml-quants.c" -o "$TMP/ggml-quants.o" 2>"$TMP/cc.log" || { cat "$TMP/cc.log"; exit 1; }
$CC $CFLAGS $INC -c "$HERE/bench.c" -o "$TMP/bench.o"
$CC "$TMP/bench.o" "$TMP/ggml-quants.o" -lm -o "$TMP/bench"
echo "$($CC --version | head -n 1); $CFLAGS; ggml $GGML_COMMIT"
"$TMP/bench" "$REPS"
