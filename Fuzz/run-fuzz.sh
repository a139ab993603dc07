#!/usr/bin/env bash
# Builds the STUN fuzz target with libFuzzer and AddressSanitizer and runs it.
#
#   Fuzz/run-fuzz.sh <seconds> [extra libFuzzer flags...]
#
# The ZoneCore and STUN sources are compiled with Fuzz/STUNFuzz into one module (named ZoneCore,
# so the STUN files' `import ZoneCore` is a no-op): swiftc's -sanitize=fuzzer then instruments
# all of it, and libFuzzer provides main. Exits non-zero when the fuzzer finds a crash; the input
# that caused it is left in fuzz-artifacts/ at the repository root.
#
# Environment: FUZZ_OPT (default -Onone, which keeps the standard library's bounds checks on
# unsafe buffers; -O runs faster and still has AddressSanitizer).
set -euo pipefail

seconds="${1:?usage: Fuzz/run-fuzz.sh <seconds> [libFuzzer flags...]}"
shift
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/.build/fuzz"
corpus="$build/corpus"
artifacts="$root/fuzz-artifacts"
binary="$build/stun-fuzz"
mkdir -p "$build" "$corpus" "$artifacts"

# Seed the corpus with the RFC vectors and a few hand-made messages (hex, one message a file).
for seed in "$root"/Fuzz/STUNFuzz/seeds/*.hex; do
    name="$(basename "$seed" .hex)"
    hex="$(tr -d ' \n\t' < "$seed")"
    printf '%b' "$(printf '%s' "$hex" | sed 's/../\\x&/g')" > "$corpus/seed-$name"
done

mapfile -t sources < <(find "$root/Sources/ZoneCore" "$root/Sources/STUN" "$root/Fuzz/STUNFuzz" -name '*.swift' | sort)
echo "run-fuzz: compiling ${#sources[@]} files (${FUZZ_OPT:--Onone}) …"
swiftc -sanitize=fuzzer,address -parse-as-library "${FUZZ_OPT:--Onone}" -g \
    -module-name ZoneCore -suppress-warnings -use-ld=lld \
    "${sources[@]}" -o "$binary"

echo "run-fuzz: fuzzing for ${seconds} s (log: $build/last-run.log)"
set +e
"$binary" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$@" > "$build/last-run.log" 2>&1
status=$?
set -e
summary='^(#[0-9]+[[:space:]]+(INITED|DONE)|Done [0-9]+ runs|==[0-9]+==ERROR|SUMMARY|Fatal error|.*Test unit written'
summary+='|stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb))'
grep -E "$summary" \
    "$build/last-run.log" || true
if [ "$status" -ne 0 ]; then
    tail -n 40 "$build/last-run.log" >&2
    echo "run-fuzz: the fuzzer failed with status $status; see $build/last-run.log and $artifacts/" >&2
    exit "$status"
fi
echo "run-fuzz: no crash in ${seconds} s"
