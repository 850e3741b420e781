#!/usr/bin/env bash
# Benchmark: `hist blame` against `git blame` on the same history.
#
# A document of 1,000 leaves (100 accounts x 10 numeric fields) receives 100,000 field
# changes grouped into 2,000 transactions of 50 changes (after a first snapshot that adds
# the whole document). hist records them with `hist import` (one snapshot per
# transaction); git commits the same pretty-printed JSON file (one field per line) 2,000
# times (fast-import). Both then blame the final version. Release build; data generated
# with a fixed seed; each blame runs RUNS times and the median is reported.
#
# Usage: bash benches/blame.sh            (RUNS=5 by default)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
. "$root/fixtures/hist-bin.sh"
hist=$(hist_bin --release)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

HIST="$hist" WORK="$work" RUNS="${RUNS:-5}" python3 - <<'PY'
import json, os, random, statistics, subprocess, time

hist, work, runs = os.environ["HIST"], os.environ["WORK"], int(os.environ["RUNS"])
ACCOUNTS, FIELDS, TXS, PER_TX = 100, 10, 2000, 50
rng = random.Random(42)
doc = {f"acct{a:04}": {f"f{f}": 0 for f in range(FIELDS)} for a in range(ACCOUNTS)}
leaves = [(f"acct{a:04}", f"f{f}") for a in range(ACCOUNTS) for f in range(FIELDS)]
counter = 0
t0 = 1_767_225_600  # 2026-01-01T00:00:00Z

def stamp(i):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0 + i * 60))

snapshots = [json.dumps(doc, sort_keys=True)]
pretty = [json.dumps(doc, sort_keys=True, indent=2) + "\n"]
for _ in range(TXS):
    for acct, field in rng.sample(leaves, PER_TX):
        counter += 1
        doc[acct][field] = counter
    snapshots.append(json.dumps(doc, sort_keys=True))
    pretty.append(json.dumps(doc, sort_keys=True, indent=2) + "\n")

# hist: one NDJSON snapshot record per transaction.
repo = os.path.join(work, "hist")
os.makedirs(repo)
env = dict(os.environ, HIST_NOW="2027-01-01T00:00:00Z", NO_COLOR="1")
subprocess.run([hist, "init"], cwd=repo, env=env, check=True, capture_output=True)
with open(os.path.join(work, "import.ndjson"), "w") as f:
    for i, snap in enumerate(snapshots):
        f.write('{"key":"bench/doc","at":"%s","actor":"job:bench","doc":%s}\n' % (stamp(i), snap))
start = time.perf_counter()
subprocess.run([hist, "import", os.path.join(work, "import.ndjson")], cwd=repo, env=env,
               check=True, capture_output=True)
import_s = time.perf_counter() - start
count = subprocess.run([hist, "sql", "--csv", "SELECT count(*) FROM changes"], cwd=repo,
                       env=env, check=True, capture_output=True, text=True).stdout.split()[-1]

# git: the same versions of the pretty-printed file, one commit each.
gitdir = os.path.join(work, "git")
os.makedirs(gitdir)
genv = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=work)
subprocess.run(["git", "init", "-q", "-b", "main"], cwd=gitdir, env=genv, check=True)
stream = []
for i, text in enumerate(pretty):
    data = text.encode()
    stream.append(b"commit refs/heads/main\n")
    stream.append(b"committer bench <bench@example.com> %d +0000\n" % (t0 + i * 60))
    stream.append(b"data 3\ntx\n")
    stream.append(b"M 100644 inline doc.json\ndata %d\n" % len(data) + data + b"\n")
start = time.perf_counter()
subprocess.run(["git", "fast-import", "--quiet"], cwd=gitdir, env=genv, input=b"".join(stream),
               check=True)
subprocess.run(["git", "checkout", "-q", "main"], cwd=gitdir, env=genv, check=True)
git_import_s = time.perf_counter() - start

def median_time(cmd, cwd, env):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times), out.stdout

hist_s, hist_out = median_time([hist, "--no-pager", "blame", "bench/doc"], repo, env)
json_s, json_out = median_time([hist, "blame", "bench/doc", "--json"], repo, env)
git_s, git_out = median_time(["git", "blame", "doc.json"], gitdir, genv)
records = [json.loads(l) for l in json_out.decode().splitlines()]
assert len(records) == ACCOUNTS * FIELDS, len(records)
assert all(r["tx"] is not None for r in records)
oldest = min(r["tx"] for r in records)
print(f"history: {len(leaves)} leaves, {count} changes in {len(snapshots)} transactions "
      f"(hist import {import_s:.1f} s, git fast-import {git_import_s:.1f} s)")
print(f"blame answers back to transaction {oldest} of {len(snapshots)} "
      f"(the oldest still-current field)")
print(f"hist blame (human): {hist_s * 1000:8.1f} ms  ({len(hist_out.splitlines())} lines)")
print(f"hist blame --json:  {json_s * 1000:8.1f} ms  ({len(records)} leaves)")
print(f"git blame:          {git_s * 1000:8.1f} ms  ({len(git_out.splitlines())} lines)")
print(f"ratio git / hist:   {git_s / hist_s:8.1f}x   (target: at least 5x)")
PY
