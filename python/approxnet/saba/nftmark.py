"""The nftables rule that gives a cgroup's egress packets its PL's DSCP
(``approxnet saba run``): one table per run, in the network namespace the
program runs in, matching ``socket cgroupv2 level N "path"`` in the output
hook (every locally sent packet of a socket created in the cgroup, IPv4
and IPv6), with a counter; with a `ct_mark`, two more rules give the
packets' conntrack entries that mark (+1 when the packet goes in the
entry's reply direction) where they have none yet, which is how
:mod:`.flowwatch` tells the program's flows apart. A changed DSCP (the app's PL moved) replaces
the rules in one transaction; the table is deleted on exit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..testbed import shell
from ..testbed.errors import TestbedError
from .cgroup import Cgroup, RunError

__all__ = ["CgroupMark", "netns_prefix"]


def netns_prefix(netns: str | None) -> list[str]:
    """The command prefix that runs a tool in `netns` without leaving this
    mount namespace (``ip netns exec`` would hide the cgroup v2 mount)."""
    return [] if netns is None else ["nsenter", f"--net=/run/netns/{netns}", "--"]


class CgroupMark:
    """``table inet saba_run_<tag>`` marking `cgroup`'s packets."""

    def __init__(
        self, cgroup: Cgroup, tag: str, netns: str | None = None, ct_mark: int | None = None
    ) -> None:
        self.cgroup, self.table, self.netns = cgroup, f"saba_run_{tag}", netns
        self.ct_mark = ct_mark
        self.dscp: int | None = None

    def _nft(self, args: Sequence[str], stdin: str | None = None) -> str:
        try:
            done = shell.run([*netns_prefix(self.netns), "nft", *args], stdin=stdin, check=False)
        except TestbedError as e:
            raise RunError(f"nftables is unavailable: {e}") from None
        if done.returncode != 0:
            err = done.stderr.strip()
            if "Operation not permitted" in err:
                raise RunError(f"nft {' '.join(args)}: saba run needs root ({err})")
            raise RunError(f"nft {' '.join(args)} failed: {err}")
        return done.stdout

    def _rules(self, dscp: int) -> str:
        m = f'socket cgroupv2 level {self.cgroup.level} "{self.cgroup.nft_path}"'
        rules = (
            f"add rule inet {self.table} out {m} ip dscp set {dscp} counter\n"
            f"add rule inet {self.table} out {m} ip6 dscp set {dscp} counter\n"
        )
        if self.ct_mark is not None:
            for way, mark in (("original", self.ct_mark), ("reply", self.ct_mark + 1)):
                rules += (
                    f"add rule inet {self.table} out {m} ct direction {way} "
                    f"ct mark 0 ct mark set {mark:#x}\n"
                )
        return rules

    def install(self, dscp: int) -> None:
        """Creates the table with the rules for `dscp`."""
        _check_dscp(dscp)
        script = (
            f"add table inet {self.table}\n"
            f"add chain inet {self.table} out "
            "{ type filter hook output priority 0; policy accept; }\n" + self._rules(dscp)
        )
        self._nft(["-f", "-"], script)
        self.dscp = dscp

    def set_dscp(self, dscp: int) -> None:
        """Re-marks with `dscp` (atomic: flush and add in one transaction)."""
        _check_dscp(dscp)
        if dscp != self.dscp:
            self._nft(["-f", "-"], f"flush chain inet {self.table} out\n" + self._rules(dscp))
            self.dscp = dscp

    def packets(self) -> int:
        """Packets marked so far (since the last re-mark)."""
        doc = json.loads(self._nft(["-j", "list", "chain", "inet", self.table, "out"]))
        total = 0
        for item in doc.get("nftables", []):
            for expr in item.get("rule", {}).get("expr", []):
                if "counter" in expr:
                    total += int(expr["counter"]["packets"])
        return total

    def remove(self) -> None:
        """Deletes the table (nothing if it was never made)."""
        if self.dscp is not None:
            self._nft(["delete", "table", "inet", self.table])
            self.dscp = None

    def remove_stale(self) -> bool:
        """Deletes the table a dead wrapper left (False if it is not there)."""
        try:
            self._nft(["delete", "table", "inet", self.table])
        except RunError as e:
            if "No such file or directory" in str(e):
                return False
            raise
        return True


def _check_dscp(dscp: int) -> None:
    if not 0 <= dscp <= 63:
        raise RunError(f"dscp must be 0..63, got {dscp}")
