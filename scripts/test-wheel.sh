#!/usr/bin/env bash
# Builds the wheel, installs it into a fresh virtualenv outside the checkout
# and runs one command of each CLI group from there (issue 18): what a user
# gets from `pip install approxnet-*.whl`, without the git tree.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV_TOOLS=${VENV_TOOLS:-.venv/bin}
out=$(mktemp -d /tmp/approxnet-wheel.XXXXXX)
trap 'rm -rf "$out"' EXIT
"$VENV_TOOLS/maturin" build --release -q --out "$out/dist" >/dev/null
wheel=$(ls "$out"/dist/approxnet-*.whl)
echo "wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"
python3 -m venv "$out/venv"
"$out/venv/bin/pip" install -q "$wheel"
cd "$out"   # nothing of the checkout is importable from here
ax="$out/venv/bin/approxnet"
"$out/venv/bin/python" -c "import approxnet, sys; assert 'site-packages' in approxnet.__file__, approxnet.__file__"
"$ax" --version
"$ax" sim schemes >/dev/null
"$ax" perf client --help >/dev/null
"$ax" testbed --help >/dev/null
"$ax" repro --help >/dev/null
"$ax" analytics --help >/dev/null
"$ax" train --help >/dev/null
"$ax" saba --help >/dev/null
# the studies and figure plans are package data: a figure and a study by
# name from an empty directory
"$ax" repro --list >"$out/list.txt"
grep -q "netapprox/fig5_fbkv" "$out/list.txt"
"$ax" repro netapprox/fig5_fbkv --quick --only atp-full-0.5-L0.2 -j 1 -q --out "$out/repro" >/dev/null
grep -q "atp-full-0.5-L0.2,fbkv,atp-full" "$out/repro/table.csv"
# seed 004's interconnect figures: the study is package data, the native module runs it
grep -q "interconnect/fig6" "$out/list.txt"
"$ax" repro interconnect/fig9 --quick --out "$out/ic" >/dev/null
grep -q "^9,cg,conventional" "$out/ic/table.csv"
"$ax" sim run netapprox/demo --set duration_ms=0.5 --set jobs.0.stop_ms=0.3 -q --out "$out/demo" >/dev/null
port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$ax" perf server --bind "127.0.0.1:$port" --jobs 1 --idle 10 --json >"$out/server.json" &
"$ax" perf client --server "127.0.0.1:$port" --jobs 1 --messages 4 --json >"$out/client.json"
wait
grep -q '"jobs_completed":1' "$out/client.json"
echo "wheel OK: every CLI group answers from a fresh virtualenv; perf moved one job; a figure and a study ran from package data"
