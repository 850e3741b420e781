#!/usr/bin/env bash
# `hist timeline` at scale (issue 25): the real CDC feed of ../shared/data (737 versions,
# 1.65 M field changes, about 4,900 numeric leaves) imported as benches/cdc.sh imports it,
# then the page of the whole document and of one record drawn. Reports, per page: the time
# `hist timeline` takes, the file's size, and how long headless Chromium takes to draw it
# (the page's own clock, from navigation start to the chart laid out, written by its script
# into <html data-laid-out-ms>; plus the wall time of `chromium --dump-dom`, process start
# included, and of the same for an empty page, to tell the browser's start from the page).
# The issue asks for under 5 MB and under 2 s.
#
# Usage: benches/timeline.sh [WORK_DIR]   (default target/bench-timeline; the imported
# repository is kept there between runs: delete WORK_DIR/hist.done to import again).
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/common/cdc.sh
cdc_setup target/bench-timeline "${1:-}" zstd python3
BROWSER=
for b in chromium chromium-browser google-chrome; do
  if command -v $b >/dev/null; then BROWSER=$(command -v $b); break; fi
done
ms() { python3 -c "print(f'{$1 / 1e6:.0f}')"; }

R=$W/hist
if [[ ! -f $W/hist.done ]]; then
  echo "importing the 737 versions (as benches/cdc.sh does)…" >&2
  cdc_repository "$R"
  zstd -dc --long=27 "$DATA" | "$H" -C "$R" import - >/dev/null
  touch "$W/hist.done"
fi
changes=$("$H" -C "$R" sql "SELECT count(*) FROM changes WHERE key = '$KEY'" --csv | tail -1)
echo "repository: $changes changes of $KEY"

# chromium --dump-dom of a page: prints "wall ms, laid-out ms".
draw() {
  local page=$1 a b
  a=$(now)
  "$BROWSER" --headless --disable-gpu --no-sandbox --no-first-run --disable-extensions \
    --dump-dom "file://$page" 2>/dev/null >"$page.dom"
  b=$(now)
  local laid
  laid=$(grep -o 'data-laid-out-ms="[0-9.]*"' "$page.dom" | head -1 | grep -o '[0-9.]*' || true)
  echo "$(ms $((b - a))) ${laid:-?}"
}
if [[ -n $BROWSER ]]; then
  echo '<!DOCTYPE html><title>empty</title>' >"$W/empty.html"
  draw "$W/empty.html" >/dev/null # a first start warms the disk cache
  read -r empty_wall _ < <(draw "$W/empty.html")
fi

printf '%-40s %10s %10s %12s %14s %12s\n' page "timeline" "size" "lanes" "drawn (page)" "dump-dom"
run() {
  local name=$1; shift
  local out=$W/$name.html a b
  a=$(now)
  "$H" -C "$R" timeline "$KEY" "$@" -o "$out" --json >"$W/$name.json" 2>/dev/null
  b=$(now)
  local bytes lanes
  bytes=$(stat -c %s "$out")
  lanes=$(python3 -c "import json,sys; d=json.load(open('$W/$name.json')); print(f\"{len(d['lanes'])}/{d['paths']}\")")
  local wall=- laid=-
  if [[ -n $BROWSER ]]; then
    read -r wall laid < <(draw "$out")
    "$BROWSER" --headless --disable-gpu --no-sandbox --hide-scrollbars --window-size=1400,1200 \
      --screenshot="$W/$name.png" "file://$out" >/dev/null 2>&1 || true
  fi
  printf '%-40s %8s ms %7s KB %12s %11s ms %9s ms\n' "$name $*" "$(ms $((b - a)))" \
    $((bytes / 1024)) "$lanes" "$laid" "$wall"
}
run whole
run whole-100-lanes --lanes 100
run us --path '/vaccination_data[Location="US"]'
run since-2023 --since @2023-01-01
if [[ -n $BROWSER ]]; then
  echo "an empty page: $empty_wall ms of dump-dom (the browser's start); screenshots in $W"
else
  echo "no browser (chromium, chromium-browser or google-chrome): render times not measured"
fi
