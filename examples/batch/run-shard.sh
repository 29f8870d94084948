#!/usr/bin/env bash
# One shard of the sweep in sweep.sh. The batch system says which: a Kubernetes Indexed Job
# sets JOB_COMPLETION_INDEX, a Slurm job array SLURM_ARRAY_TASK_ID (0 .. SHARDS-1); leasesim
# reads it (--shard auto/SHARDS). Each shard writes SWEEP_DIR/<scenario>-sweep/partial-I-of-K.csv.
#   SWEEP_DIR  a directory every shard and the merge can reach (required)
#   LEASESIM   the binary (default: leasesim on the PATH)
#   JOBS       threads per shard (default 1: one task per core)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/sweep.sh"
: "${SWEEP_DIR:?set SWEEP_DIR to a directory every shard can write}"
exec "${LEASESIM:-leasesim}" sweep "$SCENARIO" "${VARY[@]}" --seeds "$SEEDS" \
    --shard "auto/$SHARDS" --jobs "${JOBS:-1}" --out "$SWEEP_DIR"
