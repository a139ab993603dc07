#!/usr/bin/env bash
# Simulator benchmark: this tree's release build against an older commit's, alternated in one run
# (there is no third-party simulator to anchor on, so the anchor is our own earlier build on the
# same machine at the same moment).
#
#   Bench/sim/compare.sh [--against REV] [--rounds R] [--trials N] [--no-relay] [--skip-build]
#
# ZONERTC_AGAINST_BIN=PATH takes PATH as REV's build instead of building it; ZONERTC_BIN names this
# tree's; ZONERTC_BENCH_QUICK=1 makes it a smoke run of one round of 20 trials (Bench/common.sh).
#
# Each round runs `zonertc sim converge --strategies hybrid --nat none --push-loss 0 --trials N`
# (the relay offered; `--no-relay` leaves it out) with each build, one after the other, and prints
# the `speed:` line's calls per CPU second (process CPU time over the trials, set-up excluded). The
# outputs of the two builds are compared too, minus that line: a change that should only be faster
# must leave them identical (the trace hash included), and the script says when they differ.
# Defaults: --against 3c67416, 5 rounds of 4,000 trials. The older build
# lives in a git worktree under $TMPDIR, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
source Bench/common.sh

against=3c67416
rounds=5
trials=4000
relay=()
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --against) against="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --trials) trials="$2"; shift 2 ;;
        --no-relay) relay=(--no-relay); shift ;;
        --skip-build) build=0; shift ;;
        *) echo "usage: $0 [--against REV] [--rounds R] [--trials N] [--no-relay] [--skip-build]" >&2; exit 2 ;;
    esac
done
if bench_quick; then rounds=1; trials=20; fi
case "$rounds$trials" in *[!0-9]*) echo "compare: --rounds and --trials take whole numbers" >&2; exit 2 ;; esac

tmp="$(mktemp -d)"
old="$tmp/old"
cleanup() {
    git worktree remove --force "$old" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

git rev-parse --verify --quiet "$against^{commit}" >/dev/null \
    || { echo "compare: $against is not a commit of this repository" >&2; exit 2; }
if [ -n "${ZONERTC_AGAINST_BIN:-}" ]; then
    against_bin=$ZONERTC_AGAINST_BIN
else
    git worktree add --detach --quiet "$old" "$against"
    echo "building $against (release)…" >&2
    (cd "$old" && swift build -c release --product zonertc >/dev/null)
    against_bin="$old/.build/release/zonertc"
fi
if [ "$build" = 1 ]; then
    this_bin=$(bench_zonertc)
else
    this_bin=${ZONERTC_BIN:-.build/release/zonertc}
fi
bench_machine

run() {  # run BINARY OUTPUT: prints calls per CPU second, keeps the rest of the output
    "$1" sim converge --strategies hybrid --nat none --push-loss 0 --trials "$trials" "${relay[@]}" > "$2"
    sed -n 's/^speed: .* = \([0-9]*\) trials per CPU second.*/\1/p' "$2"
}

printf '%-8s %14s %14s   (calls per CPU second, --trials %s%s)\n' round "$against" "this tree" "$trials" \
    "${relay[*]:+, ${relay[*]}}"
differ=0
for round in $(seq 1 "$rounds"); do
    a=$(run "$against_bin" "$tmp/a.txt")
    b=$(run "$this_bin" "$tmp/b.txt")
    printf '%-8s %14s %14s\n' "$round" "$a" "$b"
    cmp -s <(grep -v '^speed:' "$tmp/a.txt") <(grep -v '^speed:' "$tmp/b.txt") || differ=1
done
bench_machine
if [ "$differ" = 1 ]; then
    echo "the two builds' outputs differ (beyond the speed line):"
    diff <(grep -v '^speed:' "$tmp/a.txt") <(grep -v '^speed:' "$tmp/b.txt") | head -20 || true
else
    echo "outputs identical but for the speed line ($(grep -o 'trace hash: [0-9a-f]\{8\}' "$tmp/b.txt")…)"
fi
