#!/usr/bin/env bash
# The last step: merge the SHARDS partial files of the sweep in sweep.sh into its results,
# written next to them in SWEEP_DIR/<scenario>-sweep/ (byte for byte what one machine writes).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/sweep.sh"
: "${SWEEP_DIR:?set SWEEP_DIR to the directory the shards wrote}"
exec "${LEASESIM:-leasesim}" sweep-merge "$SWEEP_DIR/$SCENARIO-sweep" --out "$SWEEP_DIR"
