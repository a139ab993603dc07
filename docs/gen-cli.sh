#!/usr/bin/env bash
# Writes `zonertc help --markdown` into docs/CLI.md between its BEGIN and END markers, so the command
# reference is the binary's own (Tests/CLITests/CLIReferenceTests.swift fails while they differ).
#
#   docs/gen-cli.sh [--check] [ZONERTC]   (default: .build/debug/zonertc, built first if missing; after
#                                          changing a command, rebuild it as you build the tests)
#
# --check writes nothing: it exits 1, saying so, when docs/CLI.md differs from what it would write.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
zonertc="${1:-.build/debug/zonertc}"
[ -x "$zonertc" ] || swift build --product zonertc >/dev/null
reference="$(mktemp)"
trap 'rm -f "$reference" "$reference.md"' EXIT
"$zonertc" help --markdown >"$reference"
awk -v reference="$reference" '
    /^<!-- BEGIN zonertc help --markdown/ { print; while ((getline line < reference) > 0) print line; skipping = 1; next }
    /^<!-- END zonertc help --markdown/ { skipping = 0 }
    !skipping { print }
' docs/CLI.md >"$reference.md"
grep -q '^<!-- END zonertc help --markdown' "$reference.md" || { echo "gen-cli: docs/CLI.md lacks its markers" >&2; exit 1; }
if [ "$check" = 1 ]; then
    cmp -s "$reference.md" docs/CLI.md || { echo "docs/CLI.md differs from \`zonertc help --markdown\`: run docs/gen-cli.sh" >&2
                                          exit 1; }
    echo "docs/CLI.md: command reference up to date with $("$zonertc" --version)"
    exit 0
fi
mv "$reference.md" docs/CLI.md
echo "docs/CLI.md: command reference from $("$zonertc" --version)"
