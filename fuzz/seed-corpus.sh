#!/bin/sh
# Seeds the fuzz corpus with the bundled scenarios, the benchmark's and the reproducers of
# past bugs (fuzz/reproducers). The corpus is not
# committed: cargo-fuzz grows it under fuzz/corpus/scenario/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/corpus/scenario"
cp "$here"/../scenarios/*.ron "$here"/../benches/*.ron "$here"/reproducers/*.ron "$here/corpus/scenario/"
echo "seeded $(ls "$here/corpus/scenario" | wc -l) files into $here/corpus/scenario"
