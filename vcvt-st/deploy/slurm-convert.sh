#!/usr/bin/env bash
# Converts a checkpoint directory with a Slurm job array: one task per part of the shards,
# then one `finalize` job that runs once every task has succeeded.
#
#   sbatch --array=0-7 slurm-convert.sh                  # 8 tasks, N = 8 below
#   sbatch --dependency=afterok:<array job id> --wrap \
#       "vcvt-st finalize $IN $OUT --to $TO"             # the same options, without --shard
#
# IN and OUT are on a filesystem every node sees. A task that fails or is preempted can be
# resubmitted (`sbatch --array=3 ...`): it skips its shards that are already complete.
#SBATCH --job-name=vcvt-st
#SBATCH --cpus-per-task=16
#SBATCH --mem=8G
#SBATCH --time=02:00:00
set -euo pipefail
IN=${IN:-/shared/DeepSeek-V3}
OUT=${OUT:-/shared/DeepSeek-V3-bf16}
TO=${TO:-bf16}
N=${N:-8}                     # the number of tasks of --array
VCVT_ST=${VCVT_ST:-vcvt-st}
# auto/N: the task's index is SLURM_ARRAY_TASK_ID as it is (never relative to the array's
# first id, SLURM_ARRAY_TASK_MIN, which is 3 in a resubmission `--array=3`), so the array
# is numbered 0 to N-1; an array numbered 1 to N takes `--shard auto-1/$N`.
"$VCVT_ST" convert "$IN" "$OUT" --to "$TO" --shard "auto/$N" --threads "${SLURM_CPUS_PER_TASK:-1}" -q
