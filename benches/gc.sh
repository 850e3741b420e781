#!/usr/bin/env bash
# gc benchmark (issue 6): gc over a log of CHANGES changes (default 1,000,000), half of them
# under a daily retention rule. Reports gc's time and peak memory, and the repository's size
# before and after. Release build; runs once.
#
#   benches/gc.sh                 # 1,000,000 changes
#   CHANGES=100000 benches/gc.sh  # a smaller run
#
# The log: KEYS feeds of ITEMS items; every snapshot of a feed changes every item's price
# (under `retention /items[*]/price --keep 90d --then daily`) and its stock (no rule), so
# half the changes fall under the daily rule. Snapshots are spread evenly over 2025; gc
# runs at 2026-01-01, so the first ~75% of the year is older than the 90-day window.
set -euo pipefail
CHANGES=${CHANGES:-1000000}
KEYS=${KEYS:-2}
ITEMS=${ITEMS:-50}
RECORDS=$((CHANGES / (2 * ITEMS)))
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/fixtures/hist-bin.sh"
hist=$(hist_bin --release)
work=$(mktemp -d "${TMPDIR:-/tmp}/hist-gc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export HIST_ACTOR=job:bench TZ=UTC
"$hist" init >/dev/null
HIST_NOW=2024-12-31T00:00:00Z "$hist" rules array-key /items id >/dev/null
HIST_NOW=2024-12-31T00:00:00Z "$hist" rules retention '/items[*]/price' --keep 90d --then daily >/dev/null

# One NDJSON record per snapshot; every price and stock differs from the last snapshot's.
awk -v records="$RECORDS" -v keys="$KEYS" -v items="$ITEMS" 'BEGIN {
    start = 1735689600; span = 365 * 86400
    for (r = 0; r < records; r++) {
        at = strftime("%Y-%m-%dT%H:%M:%SZ", start + int(r * span / records), 1)
        printf "{\"key\":\"feed/%d\",\"at\":\"%s\",\"actor\":\"poller:bench\",\"doc\":{\"items\":[", r % keys, at
        for (i = 1; i <= items; i++) {
            printf "%s{\"id\":%d,\"price\":%d,\"stock\":%d}", (i > 1 ? "," : ""), i, r * items + i, r + i
        }
        printf "]}}\n"
    }
}' > records.ndjson

size() { du -sb .hist | cut -f1; }
count() { "$hist" sql "$1" --csv | tail -1; }
echo "generating: $RECORDS snapshots of $KEYS feeds x $ITEMS items ($((RECORDS * 2 * ITEMS)) changes expected)"
t0=$(date +%s.%N)
"$hist" import records.ndjson
t1=$(date +%s.%N)
echo "import: $(echo "$t1 - $t0" | bc) s"
changes_before=$(count "SELECT count(*) FROM changes")
under_rule=$(count "SELECT count(*) FROM changes WHERE path GLOB '/items*/price'")
db_before=$(stat -c %s .hist/hist.db)
objects_before=$(find .hist/objects -type f | wc -l)
size_before=$(size)

echo "gc:"
HIST_NOW=2026-01-01T00:00:00Z /usr/bin/time -v -o gc.time "$hist" gc --actor job:bench | tail -3
wall=$(grep "Elapsed (wall clock)" gc.time | awk '{print $NF}')
rss=$(grep "Maximum resident set size" gc.time | awk '{print $NF}')
changes_after=$(count "SELECT count(*) FROM changes")
db_after=$(stat -c %s .hist/hist.db)
objects_after=$(find .hist/objects -type f | wc -l)
size_after=$(size)
t2=$(date +%s.%N)
"$hist" fsck | tail -1
t3=$(date +%s.%N)

echo
echo "changes:            $changes_before before ($under_rule under the daily rule), $changes_after after"
echo "gc wall time:       $wall"
echo "gc peak RSS:        $((rss / 1024)) MiB"
echo "hist.db:            $db_before -> $db_after bytes"
echo "objects:            $objects_before -> $objects_after files"
echo ".hist total:        $size_before -> $size_after bytes"
echo "fsck after gc:      $(echo "$t3 - $t2" | bc) s"
