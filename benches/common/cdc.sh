# What the benchmarks on the real CDC feed share (sourced by benches/cdc.sh and
# benches/timeline.sh from the project's root): `cdc_setup DEFAULT_WORK_DIR [WORK_DIR]
# TOOL…` skips the benchmark with a message when the feed or a tool is absent, and sets
# DATA (the feed), W (the work directory, made), H (the release `hist`) and KEY;
# `cdc_repository DIR` makes a fresh repository in DIR with the feed's array rule.

KEY=cdc/states

cdc_setup() {
  local default=$1 dir=$2
  shift 2
  DATA=${HIST_CDC_DATA:-../shared/data/cdc-vaccination-states.ndjson.zst}
  if [[ ! -f $DATA ]]; then
    echo "SKIPPED: $DATA is absent (the CDC feed; see ../shared/data/README.md)"
    exit 0
  fi
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "SKIPPED: $tool is not installed"; exit 0; }
  done
  DATA=$(realpath "$DATA")
  W=$(realpath -m "${dir:-$default}")
  mkdir -p "$W"
  . fixtures/hist-bin.sh
  H=$(hist_bin --release)
}

cdc_repository() {
  rm -rf "$1" && mkdir -p "$1"
  "$H" -C "$1" init >/dev/null
  "$H" -C "$1" rules array-key /vaccination_data Location --actor user:bench --at @2021-01-01 >/dev/null
}

now() { date +%s%N; }
