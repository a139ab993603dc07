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

# bench_postgres_cluster DIR: starts a throwaway PostgreSQL cluster in DIR (initdb as the postgres user
# when run as root, a Unix socket in DIR, no TCP; fsync and synchronous_commit on, as a durable
# deployment has them) and sets BENCH_POSTGRES_URL to it and BENCH_POSTGRES_PID to its server. The
# caller stops it: `bench_postgres_stop`. Fails with a message when PostgreSQL is not installed.
bench_postgres_cluster() {
    local dir="$1" bindir
    bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
    if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
        echo "PostgreSQL is not installed (apt-get install postgresql)" >&2
        return 1
    fi
    local as_owner=()
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$dir"
        as_owner=(setpriv --reuid=postgres --regid=postgres --init-groups --)
    fi
    "${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
    "${as_owner[@]}" "$bindir/postgres" -D "$dir/data" -k "$dir" -c listen_addresses= -c max_connections=200 \
        >"$dir/log" 2>&1 &
    BENCH_POSTGRES_PID=$!
    for _ in $(seq 100); do grep -qs "ready to accept connections" "$dir/log" && break; sleep 0.1; done
    grep -qs "ready to accept connections" "$dir/log" || { echo "PostgreSQL did not start: $dir/log" >&2; return 1; }
    BENCH_POSTGRES_URL="postgresql:///postgres?host=$dir&user=postgres"
}

# bench_postgres_stop: stops the cluster bench_postgres_cluster started (a fast shutdown) and waits for it.
bench_postgres_stop() {
    [ -n "${BENCH_POSTGRES_PID:-}" ] || return 0
    kill -INT "$BENCH_POSTGRES_PID" 2>/dev/null || true
    wait "$BENCH_POSTGRES_PID" 2>/dev/null || true
    BENCH_POSTGRES_PID=
}
