#!/usr/bin/env bash
# The bindings' targets (issue 23), as ratios measured in one run:
# - per-call overhead of an as-of read of a small document (customer/1 @tx:100, 200
#   transactions) through Go and Python vs the same read through the Rust library, and vs
#   spawning `hist show`;
# - Python's repo.ingest of the benchmark feed (benches/common/feed.rs: 50,000 records,
#   about 10 MB) given as bytes vs the Rust library's ingest; a dict separately (it costs
#   json.dumps on top).
# Release builds throughout. Needs go and python3 (a venv with maturin is made under
# target/). Usage: benches/bindings.sh [READS]
set -euo pipefail
cd "$(dirname "$0")/.."
reads=${1:-20000}
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "building (release)..." >&2
. fixtures/hist-bin.sh
hist=$(hist_bin --release)
# libhistc.a where cargo reports it (so Go links the static library, not the .so beside it).
libhistc=$(cargo build --release --quiet -p hist-c --message-format=json-render-diagnostics | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "histc":
        print(*[f for f in m["filenames"] if f.endswith(".a")], sep="\n", end="")')
cargo bench --quiet --bench bindings --no-run 2>/dev/null
venv="$target/bench-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet maturin
"$venv/bin/maturin" build --quiet --release -m bindings/python/Cargo.toml --out "$work/wheels" >&2
"$venv/bin/pip" install --quiet --force-reinstall "$work"/wheels/hist_store-*.whl

bench() { cargo bench --quiet --bench bindings -- "$@"; }
bench prepare "$work"
repo="$work/repo"

rust_ns=$(bench read "$work" "$reads")
go_ns=$(cd bindings/go && HIST_BENCH_REPO="$repo" CGO_LDFLAGS="$libhistc" \
  go test -run '^$' -bench BenchmarkShowTx -benchtime "${reads}x" . | awk '/^BenchmarkShowTx/ {print $3}')
py_ns=$("$venv/bin/python" - "$repo" "$reads" <<'PY'
import sys, time, hist_store
repo = hist_store.Repo.open(sys.argv[1]); n = int(sys.argv[2])
for _ in range(n // 10): repo.show("customer/1", at=100)
t = time.perf_counter()
for _ in range(n): repo.show("customer/1", at=100)
print(int((time.perf_counter() - t) / n * 1e9))
PY
)
spawns=50
start=$(date +%s%N)
for _ in $(seq $spawns); do "$hist" -C "$repo" show customer/1 @tx:100 --json >/dev/null; done
spawn_ns=$(( ($(date +%s%N) - start) / spawns ))

rust_ingest=$(bench ingest "$work" 5)
read -r py_bytes py_dict < <("$venv/bin/python" - "$work" 5 "$hist" <<'PY'
import json, statistics, subprocess, sys, tempfile, time, hist_store
work, n, hist = sys.argv[1], int(sys.argv[2]), sys.argv[3]
v0 = open(f"{work}/feed-v0.json", "rb").read()
v1 = open(f"{work}/feed-v1.json", "rb").read()
def median_ingest(doc):
    """Ingest v0, then time the ingest of doc (v1), in fresh repositories with the feed's rules."""
    times = []
    for _ in range(n):
        d = tempfile.mkdtemp(dir=work)
        for args in (["init"], ["rules", "array-key", "/items", "id"], ["rules", "set", "/items[*]/tags"]):
            subprocess.run([hist, "-C", d, *args, *(["--actor", "bench:py"] if args[0] == "rules" else [])],
                           check=True, capture_output=True)
        with hist_store.Repo.open(d) as repo:
            repo.ingest("feed/acme", v0, actor="bench:py")
            t = time.perf_counter()
            repo.ingest("feed/acme", doc, actor="bench:py")
            times.append(time.perf_counter() - t)
    return statistics.median(times)
print(median_ingest(v1), median_ingest(json.loads(v1)))
PY
)

ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
echo "as-of read of a small document, per call ($reads reads; spawns: $spawns):"
echo "  Rust library   ${rust_ns} ns"
echo "  Go (cgo)       ${go_ns} ns   Go / Rust     = $(ratio "$go_ns" "$rust_ns")   (target <= 2)"
echo "  Python (PyO3)  ${py_ns} ns   Python / Rust = $(ratio "$py_ns" "$rust_ns")   (target <= 2)"
echo "  hist show      ${spawn_ns} ns   spawn / Rust  = $(ratio "$spawn_ns" "$rust_ns");  spawn / Go = $(ratio "$spawn_ns" "$go_ns");  spawn / Python = $(ratio "$spawn_ns" "$py_ns")"
echo "ingest of the benchmark feed's version 1 (median of 5):"
echo "  Rust library          ${rust_ingest} s"
echo "  Python, bytes         ${py_bytes} s   / Rust = $(ratio "$py_bytes" "$rust_ingest")   (target <= 1.3)"
echo "  Python, dict          ${py_dict} s   / Rust = $(ratio "$py_dict" "$rust_ingest")   (json.dumps included)"
