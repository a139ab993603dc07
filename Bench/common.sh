# Sourced by the Bench/ scripts: the machine a figure comes from, and the binaries to measure.
#
#   ZONERTC_BIN=PATH, ZONERTC_BENCH_BIN=PATH   use these builds of zonertc / zonertc-bench instead of
#                                              building release ones (no `swift build` at all)
#   ZONERTC_BENCH_QUICK=1                      a smoke run (the documented-commands test runs every
#                                              script so): the shortest durations and counts; its
#                                              figures mean nothing

# Prints the CPU model, core count, date and load average: a figure is only comparable with one
# measured on the same CPU, so every script prints this beside its results.
bench_machine() {
    local model
    model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
    [ -n "$model" ] || model=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -1)
    echo "machine: ${model:-unknown CPU}, $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

bench_quick() { [ "${ZONERTC_BENCH_QUICK:-0}" = 1 ]; }

# bench_zonertc [TRAITS]: the zonertc to measure — $ZONERTC_BIN, else a release build (with TRAITS).
bench_zonertc() {
    if [ -n "${ZONERTC_BIN:-}" ]; then echo "$ZONERTC_BIN"; return; fi
    swift build -c release ${1:+--traits "$1"} --product zonertc >/dev/null
    echo .build/release/zonertc
}

# bench_zonertc_bench [TRAITS]: the zonertc-bench to run — $ZONERTC_BENCH_BIN, else a release build.
bench_zonertc_bench() {
    if [ -n "${ZONERTC_BENCH_BIN:-}" ]; then echo "$ZONERTC_BENCH_BIN"; return; fi
    swift build -c release ${1:+--traits "$1"} --product zonertc-bench >/dev/null
    echo .build/release/zonertc-bench
}

# bench_postgres DIR: starts a throwaway PostgreSQL cluster in DIR/pg (initdb; run as the postgres user
# when we are root), reachable only through a Unix socket in DIR, and waits until it accepts
# connections. Sets bench_postgres_bin (its bin directory), bench_postgres_pid (stop it with SIGINT)
# and bench_postgres_url. Exits 1, saying so, when PostgreSQL is not installed.
bench_postgres() {
    local dir="$1" as_owner=()
    bench_postgres_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
    if [ ! -x "$bench_postgres_bin/initdb" ]; then
        echo "$(basename "$0"): PostgreSQL is not installed (apt-get install postgresql)" >&2
        exit 1
    fi
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$dir"
        as_owner=(setpriv --reuid=postgres --regid=postgres --init-groups --)
    fi
    "${as_owner[@]}" "$bench_postgres_bin/initdb" -D "$dir/pg" -A trust -U postgres >/dev/null
    "${as_owner[@]}" "$bench_postgres_bin/postgres" -D "$dir/pg" -k "$dir" -c listen_addresses= \
        -c max_connections=200 >"$dir/pg.log" 2>&1 &
    bench_postgres_pid=$!
    for _ in $(seq 100); do grep -qs "ready to accept connections" "$dir/pg.log" && break; sleep 0.1; done
    bench_postgres_url="postgresql:///postgres?host=$dir&user=postgres"
}
