"""File-transfer study (seed 002 §4.3, Table 1 / Fig. 5 analog) on the
namespace testbed.

A wired server (`approxnet.sap.webserver`) and a wireless client at
54 Mbit/s. The client fetches a generated JPEG image and a random binary
file over TCP, precise SAP (`X-SAP-Force-Precise`) and approximate SAP
(`X-SAP-Approx`) at rising BER. TCP and precise SAP run over an integrity
(ARQ) link, approximate SAP over the per-frame ("sap") link: ARQ for every
frame but UDP-Lite frames with partial coverage (the paper's SAP driver
turns retries off for approximate frames only), so its handshake, ACKs,
FIN and a JPEG's header (sent precise) are retried as TCP's frames are. Reported: transfer
time (request sent to the last datagram, after the sender's FIN), chunks
lost, and the image's PSNR against the original (decoded; "undecodable"
when the damaged JPEG does not decode). Root only.

    sudo .venv/bin/python experiments/sap/filetransfer.py
Results: experiments/sap/results/filetransfer.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from approxnet import testbed as tbm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import wireless_testbed  # noqa: E402

HERE = Path(__file__).resolve().parent
BERS = (0.0, 1e-5, 1e-4)
MODES = ("tcp", "sap-precise", "sap-approx")
RATE_MBPS = 54


def make_files(root: Path, seed: int) -> None:
    """A 1 MB random binary and a 640 x 480 JPEG of smooth shapes + noise."""
    rng = np.random.default_rng(seed)
    (root / "blob.bin").write_bytes(rng.bytes(1 << 20))
    y, x = np.mgrid[0:480, 0:640]
    img = np.stack([x / 640 * 255, y / 480 * 255, (x + y) / 1120 * 255], axis=-1)
    for _ in range(12):
        cx, cy, r = rng.integers(0, 640), rng.integers(0, 480), rng.integers(20, 120)
        img[(x - cx) ** 2 + (y - cy) ** 2 < r * r] = rng.integers(0, 255, 3)
    img = np.clip(img + rng.normal(0, 8, img.shape), 0, 255).astype(np.uint8)
    Image.fromarray(img).save(root / "image.jpg", quality=85)


def psnr(original: bytes, received: bytes) -> float | None:
    """PSNR (dB) of the decoded images; None when `received` does not decode."""
    ref = np.asarray(Image.open(io.BytesIO(original)).convert("RGB"), dtype=np.float64)
    try:
        got_img = Image.open(io.BytesIO(received))
        got_img.load()
        got = np.asarray(got_img.convert("RGB"), dtype=np.float64)
    except Exception:  # noqa: BLE001 (any decoder failure means undecodable)
        return None
    if got.shape != ref.shape:
        return None
    mse = float(np.mean((ref - got) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255**2 / mse)


def run(
    mode: str, ber: float, files: Path, reps: int, seed: int, window: bool = True
) -> list[dict[str, Any]]:
    link = "sap" if mode == "sap-approx" else "integrity"
    rows = []
    py = [sys.executable, "-m", "approxnet.sap.webserver"]
    with tbm.up(wireless_testbed("sapweb", RATE_MBPS, link, ber, seed)) as tb:
        srv_addr = f"{tb.address('s')}:8080"
        # SAP's sender paces at most at the wireless link's rate, as the
        # paper's sender did behind its own 54 Mbit/s NIC (TCP finds the
        # rate by itself).
        srv = tb.exec(
            "s",
            [*py, "serve", "--bind", srv_addr, "--dir", str(files)]
            + ["--line-rate-mbps", str(RATE_MBPS)]
            + ([] if window else ["--no-window"]),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert srv.stdout is not None
        if srv.stdout.readline().strip() != "ready":
            raise RuntimeError("web server did not start")
        for name in ("image.jpg", "blob.bin"):
            for rep in range(reps):
                out = files / f"got_{mode}_{rep}_{name}"
                done = tb.run(
                    "w",
                    [
                        *py,
                        "fetch",
                        "--url",
                        f"http://{srv_addr}/{name}",
                        "--mode",
                        mode,
                        "--local-ip",
                        tb.address("w"),
                        "--out",
                        str(out),
                        "--timeout",
                        "60",
                    ],
                    timeout=120,
                    capture_output=True,
                    text=True,
                )
                if done.returncode != 0:
                    err = done.stderr[-300:]
                    rows.append({"mode": mode, "ber": ber, "file": name, "error": err})
                    continue
                info = json.loads(done.stdout.splitlines()[-1])
                original, got = (files / name).read_bytes(), out.read_bytes()
                info.update(
                    mode=mode,
                    ber=ber,
                    file=name,
                    link_mode=link,
                    exact=original == got,
                    psnr=psnr(original, got) if name.endswith(".jpg") else None,
                )
                rows.append(info)
        srv.terminate()
        srv.wait(timeout=10)
    return rows


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--bers", type=float, nargs="+", default=list(BERS))
    p.add_argument("--no-window", action="store_true", help="SAP senders without the in-flight cap")
    p.add_argument("--out", default="filetransfer.json", help="file name under results/")
    a = p.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="sapweb-") as tmp:
        files = Path(tmp)
        files.chmod(0o755)
        make_files(files, a.seed)
        print(f"image {len((files / 'image.jpg').read_bytes())} B, blob 1048576 B")
        print(f"load average at the start: {os.getloadavg()}")
        print(f"{'BER':>7} {'mode':>11} {'file':>9} | median s | lost chunks | exact | PSNR dB")
        for ber in a.bers:
            for mode in MODES:
                got = run(mode, ber, files, a.reps, a.seed, window=not a.no_window)
                rows += got
                for name in ("image.jpg", "blob.bin"):
                    rs = [r for r in got if r["file"] == name and "error" not in r]
                    if not rs:
                        print(f"{ber:7.0e} {mode:>11} {name:>9} | failed")
                        continue
                    t = statistics.median(r["seconds"] for r in rs)
                    ps = [r["psnr"] for r in rs if name.endswith(".jpg")]
                    pstr = ", ".join("undecodable" if x is None else f"{x:.1f}" for x in ps)
                    print(
                        f"{ber:7.0e} {mode:>11} {name:>9} | {t:8.3f} | "
                        f"{sum(r['lost_chunks'] for r in rs):11d} | "
                        f"{sum(r['exact'] for r in rs)}/{len(rs)} | {pstr}",
                        flush=True,
                    )
    print(f"load average at the end: {os.getloadavg()}")
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / a.out).write_text(json.dumps(rows, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
