"""The DDP hook as PyTorch users run it (issue 18): its future completes on
the communication thread, not in the caller; and two torchrun processes
find each other's addresses through the process group and train with it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sklearn")

import torch  # noqa: E402

from approxnet.torch import CommThread  # noqa: E402


def test_the_future_completes_on_the_communication_thread() -> None:
    comm = CommThread(name="comm-test")
    gate = threading.Event()
    ran_on: list[str] = []

    def work(x: torch.Tensor) -> torch.Tensor:
        gate.wait(30)
        ran_on.append(threading.current_thread().name)
        return x * 2

    fut = comm.submit(work, torch.ones(3))
    second = comm.submit(work, torch.full((3,), 5.0))
    # the caller got its future back while the work is still blocked
    assert not fut.done() and not second.done()
    gate.set()
    assert fut.wait().tolist() == [2.0, 2.0, 2.0]
    assert second.wait().tolist() == [10.0, 10.0, 10.0]
    assert len(ran_on) == 2 and all(n.startswith("comm-test") for n in ran_on)
    assert threading.current_thread().name not in ran_on

    def fail() -> None:
        raise RuntimeError("the all-reduce broke")

    bad = comm.submit(fail)
    with pytest.raises(RuntimeError, match="all-reduce broke"):
        bad.wait()
    with pytest.raises(RuntimeError, match="all-reduce broke"):
        comm.synchronize()  # the first error is re-raised once
    comm.shutdown()


def test_torchrun_two_ranks_train_with_the_hook(tmp_path: Path) -> None:
    # the recipe of docs/python.md: torchrun, no addresses typed anywhere
    torchrun = shutil.which("torchrun", path=str(Path(sys.executable).parent))
    if torchrun is None:
        pytest.skip("torchrun is not installed")
    out = tmp_path / "rank0.json"
    cmd = [
        torchrun, "--standalone", "--nproc_per_node", "2",
        "-m", "approxnet.torch.ddp_example",
        "-p", "0.1", "--epochs", "2", "--steps", "20", "--out", str(out),
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    rec = json.loads(out.read_text())
    addrs = rec["addresses"]
    assert len(addrs) == 2 and len(set(addrs)) == 2
    assert all(a.startswith("127.0.0.1:") and not a.endswith(":0") for a in addrs)
    assert rec["telemetry_steps"] == 2 * 20
    # the gather phase is reliable: both replicas hold the same parameters
    d = rec["parameter_digests"]
    assert d[0] == d[1]
    assert rec["epochs"][-1]["accuracy"] > 0.5  # ten classes: chance is 0.1
    assert rec["bytes_payload"] > 0
