#!/usr/bin/env bash
# Relay benchmark: coturn 4.6.1 (`turnserver`) and `zonertc relay serve` (release build) under the
# same turnutils_uclient flood, one after the other in one run, then the highest rate our relay
# forwards without loss beside the iperf3 UDP ceiling of this loopback.
#
#   Bench/relay/compare.sh [--messages N] [--rounds R] [--rates "25000 50000 …"] [--skip-build]
#
# --skip-build measures the release binaries built already; ZONERTC_BIN / ZONERTC_BENCH_BIN name
# other builds, and ZONERTC_BENCH_QUICK=1 makes it a smoke run (Bench/common.sh).
#
# Flood: `turnutils_uclient -c -m 10 -n N -l 1000 -z 0` (N = 20000 by default), echo by
# `turnutils_peer`, both relays with one relay thread, loopback peers allowed, relayed ports
# 49152–49999; ours twice, as it starts by default (`zonertc`) and with `--batch-wait 0` (`no-wait`:
# it reads again as soon as anything arrives). For each relay:
#   CPU      utime + stime of the relay process (/proc/PID/stat fields 14 and 15, read just before
#            and just after the flood, so start-up is left out), in clock ticks of 1/CLK_TCK s;
#   packets  what uclient reports: tot_send_msgs (sent to the peer through the relay) plus
#            tot_recv_msgs (echoes that came back through it). The same formula for both relays;
#            a datagram a relay drops on arrival still counts, which favours the lossier relay;
#   µs/pkt   CPU / packets, and in brackets the kernel's part (stime alone);
#   loss     uclient's `Total lost packets N (x%)`.
# Rate: `zonertc-bench relay-load` sends 1200-byte ChannelData at a fixed rate for 3 s through 10
# allocations to a socket of its own (one way: client → relay → peer) and counts arrivals; the
# highest rate sent with nothing lost is reported (the sweep stops at the first loss, or when the
# generator falls below 95% of its target: then the relay was not the limit), with each rate's
# send → arrival latency (p50, p99; bursts of up to 64 datagrams leave every 200 µs), beside
# `iperf3 -c 127.0.0.1 -u -b 0 -l 1200 -t 5` (straight to iperf3's server, no relay).
set -euo pipefail
cd "$(dirname "$0")/../.."
source Bench/common.sh

messages=20000
clients=10
rounds=1
rates="1000 25000 50000 75000 100000 125000 150000 175000 200000 250000"
build=1
rate_seconds=3
iperf_seconds=5
while [ $# -gt 0 ]; do
    case "$1" in
        --messages) messages="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --rates) rates="$2"; shift 2 ;;
        --skip-build) build=0; shift ;;
        *) echo "usage: $0 [--messages N] [--rounds R] [--rates \"R1 R2 …\"] [--skip-build]" >&2; exit 2 ;;
    esac
done
for program in turnserver turnutils_uclient turnutils_peer iperf3; do
    command -v "$program" >/dev/null \
        || { echo "compare: $program is missing (apt-get install coturn iperf3)" >&2; exit 1; }
done
if bench_quick; then clients=2; messages=20; rounds=1; rates=1000; rate_seconds=1; iperf_seconds=1; fi
if [ "$build" = 1 ]; then
    zonertc=$(bench_zonertc)
    bench=$(bench_zonertc_bench)
else
    zonertc=${ZONERTC_BIN:-.build/release/zonertc}
    bench=${ZONERTC_BENCH_BIN:-.build/release/zonertc-bench}
fi
bench_machine
tick=$(getconf CLK_TCK)

tmp="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# A UDP port nothing on this machine has open (as /proc/net/udp and udp6 list them).
free_port() {
    while true; do
        local port=$((20000 + RANDOM % 10000))
        local hex; hex=$(printf ':%04X ' "$port")
        if ! grep -q "$hex" /proc/net/udp /proc/net/udp6 2>/dev/null; then echo "$port"; return; fi
    done
}
# Waits (5 s at most) until something listens on UDP port $1.
wait_port() {
    local hex; hex=$(printf ':%04X ' "$1")
    for _ in $(seq 100); do grep -q "$hex" /proc/net/udp && return 0; sleep 0.05; done
    echo "compare: nothing listens on UDP port $1" >&2
    return 1
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# The kernel's share: stime alone (field 15). Where it exceeds what a goal allows for the whole relay,
# no user-space change can meet the goal through the same system calls.
sys_ticks() { awk '{print $15}' "/proc/$1/stat"; }

peer_port=$(free_port)
turnutils_peer -L 127.0.0.1 -p "$peer_port" >"$tmp/peer.log" 2>&1 &
pids+=($!)
wait_port "$peer_port"

results=()
# flood NAME PORT PID: runs the uclient flood against the relay at PORT whose process is PID.
flood() {
    local name=$1 port=$2 pid=$3
    local before after sys_before sys_after
    before=$(cpu_ticks "$pid"); sys_before=$(sys_ticks "$pid")
    timeout 600 turnutils_uclient -u u -w p -p "$port" -e 127.0.0.1 -r "$peer_port" -c -m "$clients" -n "$messages" \
        -l 1000 -z 0 127.0.0.1 >"$tmp/$name.log" 2>&1 || true
    after=$(cpu_ticks "$pid"); sys_after=$(sys_ticks "$pid")
    local sent received lost
    sent=$(grep -o 'tot_send_msgs=[0-9]*' "$tmp/$name.log" | tail -1 | cut -d= -f2)
    received=$(grep -o 'tot_recv_msgs=[0-9]*' "$tmp/$name.log" | tail -1 | cut -d= -f2)
    lost=$(grep -o 'Total lost packets [0-9]* ([0-9.]*%)' "$tmp/$name.log" | tail -1 | sed 's/Total lost packets //')
    if [ -z "$sent" ] || [ -z "$received" ]; then
        echo "compare: $name: uclient gave no totals:" >&2
        tail -5 "$tmp/$name.log" >&2
        return 1
    fi
    local row
    row=$(awk -v n="$name" -v t=$((after - before)) -v k=$((sys_after - sys_before)) -v hz="$tick" -v s="$sent" \
        -v r="$received" -v l="$lost" \
        'BEGIN { cpu = t / hz; p = s + r
                 printf "%-8s %8.2f s %9d pkts %7.2f µs/pkt (kernel %.2f)   loss %s", n, cpu, p, cpu * 1e6 / p,
                        k / hz * 1e6 / p, l }')
    echo "$row"
    results+=("$row")
}

run_coturn() {
    local port; port=$(free_port)
    turnserver -n --log-file=stdout --simple-log --listening-ip=127.0.0.1 --relay-ip=127.0.0.1 \
        --listening-port="$port" --min-port=49152 --max-port=49999 -m 1 --lt-cred-mech --user=u:p --realm=r \
        --fingerprint --no-tls --no-dtls --no-cli --allow-loopback-peers --db="$tmp/coturn.db" \
        >"$tmp/coturn.out" 2>&1 &
    local pid=$!
    pids+=("$pid")
    wait_port "$port"
    flood coturn "$port" "$pid"
    kill "$pid"; wait "$pid" 2>/dev/null || true
}

# run_ours NAME [ARGS…]: our relay with its defaults plus ARGS (`--batch-wait 0`: read again at once).
run_ours() {
    local name=$1; shift
    local port; port=$(free_port)
    "$zonertc" relay serve --listen "127.0.0.1:$port" --relay-ip 127.0.0.1 --realm r --user u:p \
        --min-port 49152 --max-port 49999 --allow-loopback-peers --stats-interval 0 --log warning "$@" \
        >"$tmp/$name.out" 2>"$tmp/$name.err" &
    local pid=$!
    pids+=("$pid")
    wait_port "$port"
    flood "$name" "$port" "$pid"
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
    echo "         (its own count: $(grep -o 'to peers [0-9]* pkts' "$tmp/$name.err" | tail -1), \
$(grep -o 'to clients [0-9]* pkts' "$tmp/$name.err" | tail -1); \
$(grep -o 'received [0-9]* datagrams in [0-9]* calls ([0-9.]* per call)' "$tmp/$name.err" | tail -1), \
$(grep -o '[0-9]* batch waits' "$tmp/$name.err" | tail -1))"
}

echo "== flood: turnutils_uclient -c -m $clients -n $messages -l 1000 -z 0, echo by turnutils_peer ($(nproc) cores)"
for round in $(seq "$rounds"); do
    if bench_quick; then
        run_coturn; run_ours zonertc  # a smoke run: each relay once (uclient alone takes some 4 s)
    elif [ $((round % 2)) = 1 ]; then
        run_coturn; run_ours zonertc; run_ours no-wait --batch-wait 0
    else
        run_ours no-wait --batch-wait 0; run_ours zonertc; run_coturn
    fi
done

echo "== loopback ceiling: iperf3 -c 127.0.0.1 -u -b 0 -l 1200 -t $iperf_seconds"
iperf_port=$(free_port)
iperf3 -s -1 -B 127.0.0.1 -p "$iperf_port" >"$tmp/iperf-server.log" 2>&1 &
pids+=($!)
sleep 0.5
iperf3 -c 127.0.0.1 -p "$iperf_port" -u -b 0 -l 1200 -t "$iperf_seconds" >"$tmp/iperf.log" 2>&1 || true
ceiling=$(awk -v t="$iperf_seconds" '/receiver/ { split($0, a, " "); for (i in a) if (a[i] ~ /^[0-9]+\/[0-9]+$/) { split(a[i], b, "/");
    printf "%d datagrams/s received of %d/s sent (%s lost)", (b[2] - b[1]) / t, b[2] / t, b[1] } }' "$tmp/iperf.log")
[ -n "$ceiling" ] || ceiling="(iperf3 said: $(tail -3 "$tmp/iperf.log" | tr '\n' ' '))"
echo "iperf3   $ceiling"

echo "== zonertc relay, 1200-byte datagrams one way through 10 allocations, $rate_seconds s per rate"
port=$(free_port)
"$zonertc" relay serve --listen "127.0.0.1:$port" --relay-ip 127.0.0.1 --realm r --user u:p \
    --min-port 49152 --max-port 49999 --allow-loopback-peers --stats-interval 0 --log warning \
    >"$tmp/rate.out" 2>"$tmp/rate.err" &
relay=$!
pids+=("$relay")
wait_port "$port"
best=0
for rate in $rates; do
    before=$(cpu_ticks "$relay")
    line=$("$bench" relay-load --server "127.0.0.1:$port" --rate "$rate" --seconds "$rate_seconds" --json)
    after=$(cpu_ticks "$relay")
    sent=$(echo "$line" | grep -o '"sent":[0-9]*' | cut -d: -f2)
    received=$(echo "$line" | grep -o '"received":[0-9]*' | cut -d: -f2)
    achieved=$(echo "$line" | grep -o '"achieved":[0-9]*' | cut -d: -f2)
    p50=$(echo "$line" | grep -o '"latencyP50Us":[0-9]*' | cut -d: -f2)
    p99=$(echo "$line" | grep -o '"latencyP99Us":[0-9]*' | cut -d: -f2)
    awk -v r="$rate" -v a="$achieved" -v s="$sent" -v g="$received" -v t=$((after - before)) -v hz="$tick" \
        -v p50="$p50" -v p99="$p99" \
        'BEGIN { printf "target %7d/s  sent %7d/s  lost %6d of %7d  relay CPU %5.2f µs/pkt  send → arrival p50 %s µs, p99 %s µs\n",
                 r, a, s - g, s, t / hz * 1e6 / (g > 0 ? g : 1), p50, p99 }'
    if [ "$sent" != "$received" ]; then break; fi
    best=$achieved
    if [ "$achieved" -lt $((rate * 95 / 100)) ]; then echo "(the load generator could not send faster)"; break; fi
done
echo "highest rate forwarded without loss: $best datagrams/s (ceiling: $ceiling)"

echo "== summary"
for row in "${results[@]}"; do echo "$row"; done
echo "zonertc  lossless up to $best datagrams/s of 1200 bytes; iperf3 loopback: $ceiling"
bench_machine
