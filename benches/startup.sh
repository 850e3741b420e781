#!/usr/bin/env bash
# Start-up benchmark (issue 24, item 9): what a poller pays on every call.
#   1. `hist --version`                 vs  `git --version`
#   2. `hist show KEY` of a 1 KB doc    vs  `git show HEAD:FILE` of the same 1 KB file
# Each pair runs A B A B… (PAIRS pairs, default 40, after 5 warm-up pairs), and the result is
# the median of the per-pair ratios hist/git (target: at most 1.2 each), with the medians of
# the times. Processes are started with posix_spawn and waited for, output to /dev/null.
#
# Usage: bash benches/startup.sh [PAIRS]      HIST=path/to/hist times that binary instead
# of the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
. fixtures/hist-bin.sh
HIST=$(hist_bin --release)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
HIST="$HIST" WORK="$work" PAIRS="${1:-40}" python3 - <<'PY'
import json, os, statistics, subprocess, time

hist, work, pairs = os.environ["HIST"], os.environ["WORK"], int(os.environ["PAIRS"])
env = {"PATH": os.environ["PATH"], "HOME": work, "HIST_ACTOR": "user:bench",
       "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
       "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com",
       "GIT_CONFIG_NOSYSTEM": "1"}
doc = {"name": "service", "port": 8080, "replicas": 3,
       "labels": {f"label{i}": f"value-{i:04}" for i in range(30)},
       "limits": {"cpu": "500m", "memory": "512Mi"}}
text = json.dumps(doc, indent=2) + "\n"
with open(os.path.join(work, "doc.json"), "w") as f:
    f.write(text)
def run(*args, **kw):
    subprocess.run(args, cwd=work, env=env, check=True, stdout=subprocess.DEVNULL, **kw)
run(hist, "init")
run(hist, "ingest", "svc/api", "doc.json")
run("git", "init", "-q")
run("git", "add", "doc.json")
run("git", "commit", "-q", "-m", "doc")
devnull = os.open(os.devnull, os.O_WRONLY)
os.chdir(work)

def once(argv):
    fa = [(os.POSIX_SPAWN_DUP2, devnull, 1)]
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=fa)
    _, status = os.waitpid(pid, 0)
    t1 = time.perf_counter_ns()
    if status != 0:
        raise SystemExit(f"{argv} failed: {status}")
    return (t1 - t0) / 1e6

git = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
cases = [
    ("hist --version vs git --version", [hist, "--version"], [git, "--version"]),
    (f"hist show of a {len(text)} B doc vs git show HEAD:file",
     [hist, "show", "svc/api"], [git, "show", "HEAD:doc.json"]),
]
print(f"{pairs} pairs each, alternating; hist = {hist}")
for name, a, b in cases:
    for _ in range(5):
        once(a); once(b)
    ta, tb, ratios = [], [], []
    for _ in range(pairs):
        x, y = once(a), once(b)
        ta.append(x); tb.append(y); ratios.append(x / y)
    print(f"  {name}: hist {statistics.median(ta):.2f} ms, git {statistics.median(tb):.2f} ms, "
          f"median ratio {statistics.median(ratios):.2f} (target <= 1.2)")
PY
