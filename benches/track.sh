#!/usr/bin/env bash
# Benchmark for issue 4 (versioning a directory): on a generated tree of 10,000 small config
# files (JSON, TOML, YAML, text), times
#   1. `hist status` with nothing changed      vs  `git status`
#   2. `hist commit` after 10 files changed    vs  `git add -A && git commit`
# in the same directory (git ignores .hist/, hist skips .git/), with a release build, and
# prints medians and the hist/git ratios (target: at most 2x each).
#
# Usage: bash benches/track.sh [FILES] [RUNS]      (defaults: 10000 files, 11 runs)
# HIST=path/to/hist skips the release build and times that binary instead.
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=${1:-10000}
RUNS=${2:-11}
. fixtures/hist-bin.sh
HIST=$(hist_bin --release)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

echo "generating $FILES files in $WORK"
python3 - "$FILES" <<'PY'
import os, sys
n = int(sys.argv[1])
for i in range(n):
    d = f"svc{i % 100:02d}/env{(i // 100) % 10}"
    os.makedirs(d, exist_ok=True)
    kind = i % 4
    if kind == 0:
        open(f"{d}/c{i}.json", "w").write(
            '{\n  "name": "svc-%d",\n  "port": %d,\n  "tags": ["a", "b"],\n  "limits": {"cpu": 2, "mem": "512Mi"}\n}\n' % (i, 8000 + i % 1000))
    elif kind == 1:
        open(f"{d}/c{i}.toml", "w").write(
            '# service %d\nname = "svc-%d"\n\n[server]\nport = %d\nworkers = 4\n' % (i, i, 8000 + i % 1000))
    elif kind == 2:
        open(f"{d}/c{i}.yaml", "w").write(
            '# service %d\nname: svc-%d\nserver:\n  port: %d  # public\n  replicas: 2\n' % (i, i, 8000 + i % 1000))
    else:
        open(f"{d}/c{i}.txt", "w").write("notes for service %d\n" % i)
PY

export HIST_ACTOR=user:bench GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=b@example.com \
    GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=b@example.com

now_ns() { date +%s%N; }
# median_ms CMD...: runs CMD $RUNS times, prints the median wall time in ms.
median_ms() {
    local times=() t0 t1
    for _ in $(seq "$RUNS"); do
        t0=$(now_ns); "$@" >/dev/null 2>&1; t1=$(now_ns)
        times+=($(( (t1 - t0) / 1000 )))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}

t0=$(now_ns); "$HIST" init >/dev/null; "$HIST" track . -m init >/dev/null; t1=$(now_ns)
echo "hist init + track: $(( (t1 - t0) / 1000000 )) ms"
t0=$(now_ns)
git init -q . && echo ".hist/" >> .git/info/exclude && git add -A && git commit -qm init
t1=$(now_ns)
echo "git init + add + commit: $(( (t1 - t0) / 1000000 )) ms"

# Let every file's mtime fall out of the racy window, then refresh both indexes once.
sleep 3
"$HIST" status >/dev/null; git status >/dev/null

hist_status=$(median_ms "$HIST" status)
git_status=$(median_ms git status)
[ -z "$("$HIST" status --json)" ] || { echo "hist status is not clean"; exit 1; }

# Commit after 10 changed files: each round edits 10 other files, then commits with each tool.
hist_commit=() git_commit=()
for round in $(seq "$RUNS"); do
    for j in $(seq 0 9); do
        i=$(( ((round * 10 + j) * 37) % (FILES / 4) * 4 ))   # a JSON file
        f=$(printf 'svc%02d/env%d/c%d.json' $((i % 100)) $(((i / 100) % 10)) "$i")
        sed -i "s/\"port\": [0-9]*/\"port\": $((9000 + round))/" "$f"
    done
    t0=$(now_ns); "$HIST" commit -m "round $round" >/dev/null; t1=$(now_ns)
    hist_commit+=($(( (t1 - t0) / 1000 )))
    t0=$(now_ns); git add -A && git commit -qm "round $round" >/dev/null; t1=$(now_ns)
    git_commit+=($(( (t1 - t0) / 1000 )))
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'; }
hc=$(med "${hist_commit[@]}"); gc=$(med "${git_commit[@]}")
[ -z "$("$HIST" status --json)" ] || { echo "hist status is not clean after commits"; exit 1; }
[ "$("$HIST" sql --csv 'SELECT count(*) FROM transactions')" = "$(printf 'count(*)\n%s' $((RUNS + 1)))" ] \
    || { echo "expected $((RUNS + 1)) transactions"; exit 1; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo
echo "files: $FILES, runs: $RUNS (medians, ms)"
printf '%-34s %8s %8s %7s\n' "" hist git ratio
printf '%-34s %8s %8s %7s\n' "status, nothing changed" "$hist_status" "$git_status" "$(ratio "$hist_status" "$git_status")x"
printf '%-34s %8s %8s %7s\n' "commit after 10 files changed" "$hc" "$gc" "$(ratio "$hc" "$gc")x"
