#!/usr/bin/env bash
# Every benchmark of hist in one command (release build), printing ratios measured in one run:
#   benches/run.sh
# core (issue 2), ingest (issue 3), compare (issue 9: git, an audit table, scale) and
# hot_paths (divan: the library's parse, canonicalize, hash, diff, writes and reads). All data
# is generated; nothing is downloaded. Sizes can be changed through the HIST_BENCH_* variables
# listed at the top of each benches/*.rs.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
cargo bench --bench core --bench ingest --bench compare --bench hot_paths "$@"
echo "benches/run.sh: all benchmarks finished in $((SECONDS - start)) s"
