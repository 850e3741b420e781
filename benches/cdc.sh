#!/usr/bin/env bash
# The real feed of ../shared/data (737 versions of the CDC's vaccination figures, 1.65 M
# field changes) in hist and in git, measured in one run:
#   - storage: `.hist` after `hist import` against git's aggressive pack of the same versions
#     and `zstd -19 --long=27` of all of them;
#   - `hist import`: time and peak memory against the largest version;
#   - as-of: `hist show KEY @T` against `git rev-list -1 --before=T` + `git show`, process
#     start included, reads alternating;
#   - the brief's GROUP BY over `changes` against the same query on a plain SQLite table of
#     the same rows;
#   - one field's history.
# Usage: benches/cdc.sh [WORK_DIR]   (default target/bench-cdc; git's repository, the zstd
# figure and the plain table are kept there between runs, hist's repository is made anew).
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/common/cdc.sh
cdc_setup target/bench-cdc "${1:-}" git zstd python3
QUERY="SELECT path, count(*) AS changes, count(DISTINCT key) AS objects FROM changes WHERE key GLOB 'cdc/*' AND at >= '2022-01-01' GROUP BY path ORDER BY changes DESC LIMIT 3;"
FIELD='/vaccination_data[Location="AK"]/Administered_Dose1_Pop_Pct'
ms() { python3 -c "print(f'{$1 / 1e6:.1f}')"; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }

# The versions, one document per line, as compact JSON.
docs() {
  zstd -dc --long=27 "$DATA" | python3 -c '
import json, sys
for line in sys.stdin:
    sys.stdout.write(json.dumps(json.loads(line)["doc"], separators=(",", ":"), ensure_ascii=False) + "\n")'
}

# git: one commit per version (committer date from `at`), packed as gc --aggressive packs.
if [[ ! -f $W/git.done ]]; then
  echo "building git's repository of the 737 versions…" >&2
  rm -rf "$W/git" && git init -q "$W/git"
  zstd -dc --long=27 "$DATA" | python3 -c '
import json, sys, datetime
out = sys.stdout.buffer
for n, line in enumerate(sys.stdin):
    rec = json.loads(line)
    blob = json.dumps(rec["doc"], separators=(",", ":"), ensure_ascii=False).encode()
    at = datetime.datetime.fromisoformat(rec["at"].replace("Z", "+00:00"))
    when = f"{int(at.timestamp())} +0000".encode()
    msg = f"v{n}".encode()
    out.write(b"commit refs/heads/main\ncommitter cdc <cdc@example.com> " + when + b"\n")
    out.write(b"data %d\n%s\n" % (len(msg), msg))
    out.write(b"M 100644 inline states.json\ndata %d\n%s\n" % (len(blob), blob))' |
    git -C "$W/git" fast-import --quiet
  git -C "$W/git" symbolic-ref HEAD refs/heads/main
  git -C "$W/git" gc --quiet --aggressive --prune=now
  touch "$W/git.done"
fi
git_bytes=$(du -sb "$W/git/.git/objects" | cut -f1)

if [[ ! -f $W/zstd.bytes ]]; then
  echo "compressing all versions with zstd -19 --long=27…" >&2
  docs | zstd -q -19 --long=27 -T2 -c | wc -c >"$W/zstd.bytes"
fi
zstd_bytes=$(cat "$W/zstd.bytes")
largest=$(docs | awk '{ if (length($0) > m) m = length($0) } END { print m }')

# hist: a fresh repository, the rule, the import.
R=$W/hist
cdc_repository "$R"
a=$(now)
zstd -dc --long=27 "$DATA" | /usr/bin/time -f %M -o "$W/import.rss" "$H" -C "$R" import - >/dev/null 2>"$W/import.err" ||
  { cat "$W/import.err" >&2; exit 1; }
b=$(now)
import_ns=$((b - a))
rss_kb=$(tail -1 "$W/import.rss")
hist_bytes=$(du -sb "$R/.hist" | cut -f1)
changes=$("$H" -C "$R" sql "SELECT count(*) FROM changes" | tail -1 | tr -d ' ')

# As-of: the same dates, hist and git alternating, twice over.
dates=(2021-04-15 2021-07-02 2021-09-30 2021-12-24 2022-02-11 2022-05-05 2022-08-19 2022-11-11 2023-01-20 2023-04-04 2023-06-30 2023-09-09)
ht=0 gt=0 n=0
for d in "${dates[@]}" "${dates[@]}"; do
  a=$(now)
  "$H" -C "$R" show "$KEY" "@$d" --json >"$W/h.json"
  b=$(now)
  sha=$(git -C "$W/git" rev-list -1 --before="${d}T00:00:00Z" HEAD)
  git -C "$W/git" show "$sha:states.json" >"$W/g.json"
  c=$(now)
  ht=$((ht + b - a)) gt=$((gt + c - b)) n=$((n + 1))
done
# Equal as documents, the records in key order on both sides (order within a keyed array
# is not history: hist gives it in key order).
python3 -c '
import json, sys
def doc(path):
    d = json.load(open(path))
    d["vaccination_data"].sort(key=lambda r: r["Location"])
    return d
sys.exit(doc(sys.argv[1]) != doc(sys.argv[2]))' "$W/h.json" "$W/g.json" ||
  { echo "hist and git disagree on $KEY @${dates[-1]}" >&2; exit 1; }

# The brief's GROUP BY: hist's view over both tiers, then a plain table of the same rows.
PLAIN=$W/plain.db
if [[ ! -f $W/plain.done ]]; then
  echo "loading the change log into a plain SQLite table…" >&2
  rm -f "$PLAIN"
  "$H" -C "$R" export --no-pager | python3 -c '
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE changes (id INTEGER PRIMARY KEY, tx INTEGER, at TEXT, actor TEXT, reason TEXT, key TEXT, path TEXT, op TEXT, old TEXT, new TEXT)")
text = lambda c, f: json.dumps(c[f], separators=(",", ":"), ensure_ascii=False) if f in c else None
db.executemany("INSERT INTO changes (tx, at, actor, reason, key, path, op, old, new) VALUES (?,?,?,?,?,?,?,?,?)",
    ((c["tx"], c["at"], c["actor"], c.get("reason"), c["key"], c["path"], c["op"], text(c, "old"), text(c, "new"))
     for c in map(json.loads, sys.stdin)))
db.commit()' "$PLAIN"
  touch "$W/plain.done"
fi
plain_query() {
  if command -v sqlite3 >/dev/null; then sqlite3 "$PLAIN" "$QUERY"
  else python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall())' "$PLAIN" "$QUERY"; fi
}
hs=0 ps=0
for _ in 1 2 3; do
  a=$(now); "$H" -C "$R" sql "$QUERY" >"$W/h.sql"; b=$(now); plain_query >"$W/p.sql"; c=$(now)
  hs=$((hs + b - a)) ps=$((ps + c - b))
done
a=$(now); "$H" -C "$R" history "$KEY" "$FIELD" >"$W/history.txt"; b=$(now)
history_ns=$((b - a))

mb() { python3 -c "print(f'{$1 / 1e6:.2f} MB')"; }
cat <<EOF
CDC feed: 737 versions, $changes changes
| what | hist | yardstick | ratio |
|---|---|---|---|
| storage: .hist vs git gc --aggressive | $(mb "$hist_bytes") | $(mb "$git_bytes") | $(ratio "$hist_bytes" "$git_bytes") |
| storage: .hist vs zstd -19 --long=27 of all versions | $(mb "$hist_bytes") | $(mb "$zstd_bytes") | $(ratio "$hist_bytes" "$zstd_bytes") |
| hist import: time | $(ms "$import_ns") ms | | |
| hist import: peak memory vs the largest version | $((rss_kb / 1024)) MiB | $(mb "$largest") | $(ratio "$rss_kb * 1024" "$largest") |
| as-of: hist show @T vs git rev-list + git show ($n reads each) | $(ms "$ht / $n") ms | $(ms "$gt / $n") ms | $(ratio "$ht" "$gt") |
| the brief's GROUP BY vs a plain table of the same rows (3 runs each) | $(ms "$hs / 3") ms | $(ms "$ps / 3") ms | $(ratio "$hs" "$ps") |
| one field's history ($(($(wc -l <"$W/history.txt") - 1)) changes) | $(ms "$history_ns") ms | | |
EOF
