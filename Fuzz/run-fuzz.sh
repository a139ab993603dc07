#!/usr/bin/env bash
# Builds every libFuzzer target under Fuzz/ with AddressSanitizer and runs each for a bounded time.
#
#   Fuzz/run-fuzz.sh <seconds-per-target> [targets...]
#
# A target is a directory Fuzz/<Name>Fuzz/ holding
#   <Name>Fuzz.swift  the entry point, `@_cdecl("LLVMFuzzerTestOneInput")`, importing the modules it fuzzes;
#   modules           the Sources/ modules it needs, in dependency order (whitespace separated, `#` comments);
#                     a C target (CSystem) is compiled with clang and given a module map;
#   flags             optional: swiftc flags of its own (a trait's -D, system libraries' -I and -l), paths
#                     relative to the repository root; its modules are then compiled apart from the others';
#   seeds/            seed inputs: `*.hex` files (hex digits, whitespace ignored) or raw files of any other name.
# Targets are named as the directory (`STUNFuzz`) or without the suffix (`STUN`); none named means all.
#
# Each module is compiled once per run into its own Swift module and object, instrumented for coverage
# (-sanitize=fuzzer) and AddressSanitizer, with -enable-testing so a target may `@testable import` it; a
# module whose sources and flags have not changed since the last run is reused. libFuzzer provides main.
# Every target runs even when an earlier one fails; the script exits non-zero when any target failed to
# build or crashed. A crashing input is left in fuzz-artifacts/<target>/ at the repository root; keep it
# as a seed in the target's seeds/ once it is fixed.
#
# Environment: FUZZ_OPT (default -Onone, which keeps the standard library's bounds checks on unsafe
# buffers; -O runs faster and still has AddressSanitizer); FUZZ_FLAGS, extra libFuzzer flags.
set -euo pipefail
# A crash is reported by libFuzzer and AddressSanitizer; Swift's backtracer, started on top of them,
# trips over ASan (it reads the crashed stack) and can outlive the run.
export SWIFT_BACKTRACE=enable=no

seconds="${1:?usage: Fuzz/run-fuzz.sh <seconds-per-target> [targets...]}"
shift
case "$seconds" in ''|*[!0-9]*) echo "run-fuzz: seconds must be a whole number, got '$seconds'" >&2; exit 2 ;; esac
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"   # paths in a target's flags file are relative to the repository root
opt="${FUZZ_OPT:--Onone}"
build="$root/.build/fuzz"
modules_dir="$build/modules$opt"
mkdir -p "$modules_dir"
base_flags=(-sanitize=fuzzer,address -parse-as-library "$opt" -gline-tables-only -suppress-warnings)
swift_flags=("${base_flags[@]}")

# The targets to run: those named, or every Fuzz/*Fuzz directory.
targets=()
if [ $# -eq 0 ]; then
    for dir in "$root"/Fuzz/*Fuzz/; do targets+=("$(basename "$dir")"); done
else
    for name in "$@"; do
        name="${name%/}"; name="${name##*/}"
        case "$name" in *Fuzz) ;; *) name="${name}Fuzz" ;; esac
        [ -d "$root/Fuzz/$name" ] || { echo "run-fuzz: no target Fuzz/$name" >&2; exit 2; }
        targets+=("$name")
    done
fi

# The modules a target needs, in order, from its `modules` file.
target_modules() {
    sed 's/#.*//' "$root/Fuzz/$1/modules" | tr -s ' \t\n' '\n' | sed '/^$/d'
}

# Resources a module embeds in code, as Package.swift declares them (`.embedInCode(DIR)`): SwiftPM generates
# `PackageResources` with one `[UInt8]` per file; a module compiled here gets the same from the same files.
declare -A embedded_resources=([StoreServer]="CallPage/web")
write_embedded_resources() {
    local dir="$1" file name
    echo "struct PackageResources {"
    for file in "$dir"/*; do
        name="$(basename "$file" | sed 's/[^A-Za-z0-9]/_/g')"
        printf 'static let %s: [UInt8] = [%s]\n' "$name" "$(od -An -v -tu1 "$file" | tr -s ' \n' ',' | sed 's/^,//; s/,$//')"
    done
    echo "}"
}

# Compiles Sources/<module> into $modules_dir/<module>.{swiftmodule,o} unless an identical build exists.
declare -A built=()
build_module() {
    local module="$1" stamp digest
    [ -n "${built[$module]:-}" ] && return 0
    [ -d "$root/Sources/$module" ] || { echo "run-fuzz: no module Sources/$module" >&2; return 1; }
    local -a sources csources
    mapfile -t csources < <(find "$root/Sources/$module" -name '*.c' | sort)
    if [ ${#csources[@]} -gt 0 ]; then
        # A C target (CSystem, CDigests): each file compiled, the objects joined into one
        # (`ld -r`), and a module map beside the Swift modules.
        echo "run-fuzz: compiling C module $module …"
        local -a cobjects=()
        local csource
        for csource in "${csources[@]}"; do
            clang -fsanitize=fuzzer-no-link,address -O1 -g -c "$csource" -I "$root/Sources/$module/include" \
                -o "$modules_dir/$module-$(basename "$csource" .c).o"
            cobjects+=("$modules_dir/$module-$(basename "$csource" .c).o")
        done
        ld -r -o "$modules_dir/$module.o" "${cobjects[@]}"
        local header
        header="$(find "$root/Sources/$module/include" -name '*.h' | head -1)"
        printf 'module %s {\n    header "%s"\n    export *\n}\n' "$module" "$header" >> "$modules_dir/module.modulemap"
        built[$module]="$(cat "${csources[@]}" "$root/Sources/$module"/include/*.h | sha256sum | cut -d" " -f1)"
        return 0
    fi
    mapfile -t sources < <(find "$root/Sources/$module" -name '*.swift' | sort)
    if [ -n "${embedded_resources[$module]:-}" ]; then
        write_embedded_resources "$root/Sources/$module/${embedded_resources[$module]}" \
            > "$modules_dir/$module-resources.swift"
        sources+=("$modules_dir/$module-resources.swift")
    fi
    [ ${#sources[@]} -gt 0 ] || { echo "run-fuzz: Sources/$module has no Swift files" >&2; return 1; }
    # The digest covers the flags, the sources and the digests of the modules it imports (built before it).
    local -a deps
    mapfile -t deps < <(sed -nE 's/^[[:space:]]*(@testable[[:space:]]+)?import[[:space:]]+([A-Za-z_]+).*/\2/p' \
        "${sources[@]}" | sort -u)
    digest="$( { printf '%s\n' "${swift_flags[@]}" "${sources[@]}"; cat "${sources[@]}";
                 for dep in "${deps[@]}"; do printf '%s=%s\n' "$dep" "${built[$dep]:-}"; done; } \
               | sha256sum | cut -d' ' -f1)"
    stamp="$modules_dir/$module.stamp"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ] && [ -f "$modules_dir/$module.o" ]; then
        echo "run-fuzz: module $module is up to date"
    else
        echo "run-fuzz: compiling module $module (${#sources[@]} files, $opt) …"
        rm -f "$stamp"
        swiftc "${swift_flags[@]}" -enable-testing -wmo -c -module-name "$module" -I "$modules_dir" \
            -emit-module -emit-module-path "$modules_dir/$module.swiftmodule" \
            "${sources[@]}" -o "$modules_dir/$module.o"
        echo "$digest" > "$stamp"
    fi
    built[$module]="$digest"
}

# Writes the target's seeds into its corpus: `*.hex` decoded, anything else copied as it is.
seed_corpus() {
    local target="$1" corpus="$2" seed name hex
    [ -d "$root/Fuzz/$target/seeds" ] || return 0
    for seed in "$root/Fuzz/$target/seeds"/*; do
        [ -f "$seed" ] || continue
        name="$(basename "$seed")"
        if [ "${name%.hex}" != "$name" ]; then
            hex="$(tr -d ' \n\t\r' < "$seed")"
            printf '%b' "$(printf '%s' "$hex" | sed 's/../\\x&/g')" > "$corpus/seed-${name%.hex}"
        else
            cp "$seed" "$corpus/seed-$name"
        fi
    done
}

# A target's own swiftc flags from its optional `flags` file (e.g. a trait's -D and the system libraries'
# -I and -l); paths in it are relative to the repository root.
target_flags() {
    [ -f "$root/Fuzz/$1/flags" ] || return 0
    sed 's/#.*//' "$root/Fuzz/$1/flags" | tr -s ' \t\n' '\n' | sed '/^$/d'
}

# Builds and runs one target; returns non-zero when it could not be built or the fuzzer failed.
run_target() {
    local target="$1" module objects=() status
    local work="$build/$target" artifacts="$root/fuzz-artifacts/$target"
    [ -f "$root/Fuzz/$target/modules" ] || { echo "run-fuzz: Fuzz/$target has no modules file" >&2; return 1; }
    mkdir -p "$work/corpus" "$artifacts"
    local -a extra
    mapfile -t extra < <(target_flags "$target")
    swift_flags=("${base_flags[@]}" "${extra[@]}")
    # A target with flags of its own compiles its modules apart, so other targets keep theirs; each
    # target starts from the stamps (an unchanged module is not compiled again) and a new module map.
    modules_dir="$build/modules$opt"
    [ ${#extra[@]} -eq 0 ] || modules_dir="$build/modules$opt-$target"
    built=()
    mkdir -p "$modules_dir"
    rm -f "$modules_dir/module.modulemap"
    while read -r module; do
        build_module "$module" || return 1
        objects+=("$modules_dir/$module.o")
    done < <(target_modules "$target")
    local -a entry
    mapfile -t entry < <(find "$root/Fuzz/$target" -maxdepth 1 -name '*.swift' | sort)
    echo "run-fuzz: linking $target …"
    swiftc "${swift_flags[@]}" -module-name "$target" -I "$modules_dir" -use-ld=lld \
        "${entry[@]}" "${objects[@]}" -o "$work/$target" || return 1
    seed_corpus "$target" "$work/corpus"

    echo "run-fuzz: fuzzing $target for ${seconds} s (log: $work/last-run.log)"
    set +e
    # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
    "$work/$target" "$work/corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" ${FUZZ_FLAGS:-} > "$work/last-run.log" 2>&1
    status=$?
    set -e
    local summary='^(Done [0-9]+ runs|==[0-9]+==ERROR|SUMMARY|Fatal error|.*Test unit written'
    summary+='|stat::(number_of_executed_units|new_units_added|peak_rss_mb))'
    grep -E "$summary" "$work/last-run.log" | sed "s/^/  $target: /" || true
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$work/last-run.log" >&2
        echo "run-fuzz: $target failed with status $status; see $work/last-run.log and $artifacts/" >&2
        return "$status"
    fi
    echo "run-fuzz: $target: no crash in ${seconds} s"
}

failed=()
for target in "${targets[@]}"; do
    run_target "$target" || failed+=("$target")
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "run-fuzz: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "run-fuzz: ${#targets[@]} target(s), no crash in ${seconds} s each"
