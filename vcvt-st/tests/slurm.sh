#!/usr/bin/env bash
# vcvt-st's Slurm fan-out on a real one-node Slurm (Debian's slurm-wlm and munge, started here
# with a throwaway configuration and stopped at the end): deploy/slurm-convert.sh as a job
# array of 3 tasks, one task's shard removed and that task resubmitted alone (`--array=2`, so
# Slurm sets SLURM_ARRAY_TASK_MIN=2), then `vcvt-st finalize OUT`; the result must be
# byte-identical to a one-process conversion.
#
#   bash vcvt-st/tests/slurm.sh path/to/vcvt-st
#
# Needs root (apt-get, the daemons); without root it says so and exits 0.
set -euo pipefail
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then
    echo "slurm.sh: skipped (needs root to install and start slurmctld, slurmd and munged)"
    exit 0
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    pkgs=(slurmctld slurmd slurm-client munge)
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1 || {
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
    }
fi

W=$(mktemp -d)
export SLURM_CONF=$W/slurm.conf
PIDS=()
stop() {
    local p
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    # They write their state and logs until they are gone.
    for p in "${PIDS[@]}"; do
        for _ in $(seq 1 50); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.1
        done
    done
    rm -rf "$W"
}
trap stop EXIT

# munge: its key comes with the package; its socket directory may be missing in a container.
mkdir -p /run/munge && chown munge:munge /run/munge
if ! munge -n >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
    PIDS+=("$(cat /run/munge/munged.pid)")
fi
HOST=$(hostname)
cat >"$SLURM_CONF" <<EOF
ClusterName=vcvt
SlurmctldHost=$HOST(127.0.0.1)
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
mkdir -p "$W/state" "$W/spool"
slurmctld
slurmd
for _ in $(seq 1 100); do
    [ -s "$W/slurmctld.pid" ] && [ -s "$W/slurmd.pid" ] && break
    sleep 0.1
done
PIDS+=("$(cat "$W/slurmctld.pid")" "$(cat "$W/slurmd.pid")")
for _ in $(seq 1 100); do
    sinfo -h -o %T 2>/dev/null | grep -q idle && break
    sleep 0.1
done

wait_job() {
    local _
    for _ in $(seq 1 600); do
        [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
        sleep 0.1
    done
    echo "slurm.sh: job $1 did not finish in 60 s" >&2
    return 1
}

# A checkpoint of 6 shards (tasks 0, 1, 2 take shards {0, 3}, {1, 4}, {2, 5}).
python3 - "$W/ck" <<'EOF'
import json, os, sys
import numpy as np
from safetensors.numpy import save_file
ck = sys.argv[1]
os.mkdir(ck)
rng = np.random.default_rng(7)
wm = {}
for i in range(6):
    name = f"model-{i + 1:05d}-of-00006.safetensors"
    save_file({f"l{i}.weight": rng.standard_normal((64, 128)).astype(np.float32)},
              os.path.join(ck, name))
    wm[f"l{i}.weight"] = name
with open(os.path.join(ck, "model.safetensors.index.json"), "w") as f:
    json.dump({"metadata": {}, "weight_map": wm}, f)
with open(os.path.join(ck, "config.json"), "w") as f:
    json.dump({"model_type": "t"}, f)
EOF

OUT=$W/out
export IN=$W/ck OUT TO=f8e4m3 N=3 VCVT_ST=$BIN
cd "$W"
job=$(sbatch --parsable --array=0-2 --cpus-per-task=1 --mem=100M -o "$W/task-%a.log" "$HERE/../deploy/slurm-convert.sh")
wait_job "$job"
# Task 2 "failed": its shards are gone; resubmitted alone, it must convert them again.
rm "$OUT/model-00003-of-00006.safetensors" "$OUT/model-00006-of-00006.safetensors"
job=$(sbatch --parsable --array=2 --cpus-per-task=1 --mem=100M -o "$W/resubmitted.log" "$HERE/../deploy/slurm-convert.sh")
wait_job "$job"
"$BIN" finalize "$OUT"
"$BIN" convert "$IN" "$W/one" --to f8e4m3 -q
if ! diff -r "$OUT" "$W/one" >/dev/null; then
    echo "slurm.sh: FAIL: the array + resubmission + finalize differs from one process" >&2
    cat "$W"/task-*.log "$W/resubmitted.log" >&2 || true
    exit 1
fi
echo "slurm.sh: a Slurm $(sinfo -V | cut -d' ' -f2) job array, a resubmitted task and finalize give the one-process tree"
