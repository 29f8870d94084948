#!/usr/bin/env bash
# Queues the sweep of sweep.sh on Slurm: a job array of SHARDS tasks, then the merge once all
# of them succeeded. SWEEP_DIR must be on a file system every node mounts.
#   SWEEP_DIR=/shared/sweeps examples/batch/submit-slurm.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/sweep.sh"
: "${SWEEP_DIR:?set SWEEP_DIR to a shared directory}"
export BATCH_DIR=$here SWEEP_DIR
array=$(sbatch --parsable --export=ALL --array="0-$((SHARDS - 1))" "$here/slurm-sweep.sbatch")
sbatch --parsable --export=ALL --dependency="afterok:${array%%;*}" "$here/slurm-merge.sbatch"
