#!/usr/bin/env bash
# Builds the sdist, then the wheel from the sdist alone (what `pip install
# approxnet-*.tar.gz` does: a file the sdist lacks fails here), installs the
# wheel into a fresh virtualenv outside the checkout and runs one command of
# each CLI group from there (issue 18): what a user gets without the git tree.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV_TOOLS=$(cd "${VENV_TOOLS:-.venv/bin}" && pwd)
out=$(mktemp -d /tmp/approxnet-wheel.XXXXXX)
# unpacked at a fixed path of this checkout so that cargo reuses the
# dependencies it compiled (target/ is ignored by git)
src=$PWD/target/sdist-src
trap 'rm -rf "$out" "$src"' EXIT
"$VENV_TOOLS/maturin" sdist -o "$out/sdist" >/dev/null 2>&1
sdist=$(ls "$out"/sdist/approxnet-*.tar.gz)
echo "sdist: $(basename "$sdist") ($(du -k "$sdist" | cut -f1) KiB)"
tar tzf "$sdist" >"$out/sdist.txt"
grep -q "python/approxnet/studies/dml/models.toml" "$out/sdist.txt"
if grep -q '_native.*\.so$' "$out/sdist.txt"; then
    echo "the sdist carries a built module" >&2
    exit 1
fi
# -m: the files get today's mtime (the sdist stores a fixed one), so cargo
# never takes the last run's build of the local crates for this one's
rm -rf "$src" && mkdir -p "$src" && tar xzmf "$sdist" -C "$src" --strip-components=1
# maturin's build backend runs `maturin` from PATH; the checkout's target
# directory holds the compiled dependencies
PATH="$VENV_TOOLS:$PATH" CARGO_TARGET_DIR="$PWD/target" \
    MATURIN_PEP517_ARGS="--compatibility manylinux_2_34" \
    "$VENV_TOOLS/pip" wheel -q --no-build-isolation --no-deps -w "$out/dist" "$src" >/dev/null
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
# seed 003's studies are package data too (the controller-time preset needs no simulator)
grep -q "saba/flow-small" "$out/list.txt"
"$ax" repro saba/controller-time --quick --out "$out/saba" >/dev/null
grep -q "^10,3,2," "$out/saba/table.csv"
"$ax" sim run netapprox/demo --set duration_ms=0.5 --set jobs.0.stop_ms=0.3 -q --out "$out/demo" >/dev/null
# a seed 001 figure (two of its runs) from the packaged dml study
"$ax" repro dml-table1 --quick --only mf-ps-tcp,mf-ps-dctcp -j 1 -q --out "$out/dml" >/dev/null
grep -q "| MF | ps | tcp |" "$out/dml/table.md"
port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$ax" perf server --bind "127.0.0.1:$port" --jobs 1 --idle 10 --json >"$out/server.json" &
"$ax" perf client --server "127.0.0.1:$port" --jobs 1 --messages 4 --json >"$out/client.json"
wait
grep -q '"jobs_completed":1' "$out/client.json"
# iperf3's -R: the server sends
"$ax" perf server --bind "127.0.0.1:$port" --jobs 1 --idle 10 --json >"$out/server.json" &
"$ax" perf client --server "127.0.0.1:$port" -R --jobs 1 --messages 4 --json >"$out/reverse.json"
wait
grep -q '"jobs_sent":1' "$out/server.json"
echo "wheel OK (built from the sdist): every CLI group answers from a fresh virtualenv; perf moved one job each way; figures and a study ran from package data"
