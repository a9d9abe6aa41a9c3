# Sourced by the benches in this folder: two namespaces joined by a veth
# pair (anxbench-a-PID 10.231.0.1 <-> anxbench-b-PID 10.231.0.2, interfaces
# $IFA / $IFB), removed on exit, the approxnet-perf binary ($BIN; the default
# one is rebuilt if stale) and wait_listen. The namespace names carry this
# shell's pid, so concurrent runs (other worktrees, other engineers) never
# share or delete each other's namespaces; leftovers of runs whose pid is
# gone (killed with SIGKILL) are removed at start.
# Expects OUT (results folder) set by the caller.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${BIN:-$ROOT/target-net/release/approxnet-perf}
NS_PREFIX=anxbench
A=$NS_PREFIX-a-$$
B=$NS_PREFIX-b-$$
IFA=anxb-a   # interface names live inside the namespaces: no clash between runs
IFB=anxb-b
IPA=10.231.0.1
IPB=10.231.0.2

SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
    ip netns del "$A" 2>/dev/null || true
    ip netns del "$B" 2>/dev/null || true
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# Namespaces of earlier runs killed before their trap ran: only ours
# (prefix + a pid that no longer exists), never a live run's.
remove_stale() {
    local ns pid
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^$NS_PREFIX-[ab]-[0-9]+\$" || true); do
        pid=${ns##*-}
        if [ "$pid" != "$$" ] && ! kill -0 "$pid" 2>/dev/null; then
            ip netns del "$ns" 2>/dev/null || true
        fi
    done
}

# Always (re)build the default binary: a stale one silently measures old
# code, and an up-to-date build is a no-op. A BIN given by the caller is used as is.
if [ "$BIN" = "$ROOT/target-net/release/approxnet-perf" ]; then
    (cd "$ROOT" && CARGO_TARGET_DIR="$ROOT/target-net" cargo build -q --release -p approxnet-net --bin approxnet-perf)
elif [ ! -x "$BIN" ]; then
    echo "BIN=$BIN is not an executable" >&2
    exit 2
fi
mkdir -p "$OUT"
remove_stale
ip netns add "$A"
ip netns add "$B"
ip link add "$IFA" netns "$A" type veth peer name "$IFB" netns "$B"
ip -n "$A" addr add "$IPA/30" dev "$IFA"
ip -n "$B" addr add "$IPB/30" dev "$IFB"
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set "$IFA" up
ip -n "$B" link set "$IFB" up

# Waits (bounded) until a server in namespace B listens on a port.
wait_listen() { # t|u port   (u covers UDP and UDP-Lite sockets)
    local hex files
    hex=$(printf '%04X' "$2")
    if [ "$1" = t ]; then files="/proc/net/tcp"; else files="/proc/net/udp /proc/net/udplite"; fi
    for _ in $(seq 1 100); do
        # shellcheck disable=SC2086
        if ip netns exec "$B" cat $files 2>/dev/null | awk '{print $2}' | grep -qi ":$hex\$"; then return 0; fi
        sleep 0.05
    done
    echo "server on port $2 did not start" >&2
    return 1
}
