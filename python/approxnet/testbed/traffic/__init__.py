"""Bounded traffic tools run *inside* testbed hosts (one process each).

Standard library only, apart from `approxnet.must_deliver`. Every tool is
bounded in count and time, prints `ready` on stdout once its socket is
bound (receivers, servers, background) so a caller waits for that line
instead of sleeping, and prints one JSON line on exit:

    python -m approxnet.testbed.traffic COMMAND [options]

* streams (`streams`): `udp-send` / `udp-recv` (N datagrams), `tcp-send` /
  `tcp-recv` (one stream for a time: goodput);
* approximate jobs over kernel transports (`jobs`, seed 000 section 7.1):
  `tcp-job-server` / `tcp-job-send --mode ss|es` (SampleSend, EarlySend),
  `udp-job-send` / `udp-job-recv`, with messages produced over time
  (`--gap-us`, `production`: the same gaps as `approxnet-perf`);
* background (`background`): `cbr` (paced UDP with a DSCP queue schedule),
  `sink` (a bound UDP socket that never reads: the kernel drops, no ICMP);
* `fct-send` / `fct-server` (`flows`): short non-approximate TCP flows;
* `capture` (`capture`): DATA / ACK reordering and queue changes on a link;
* `exec-at T PROGRAM ARGS...`: sleep until monotonic T, then exec (starts
  several senders at the same instant).

The orchestrator side (start a tool in a host, wait for `ready`, read its
JSON) is `approxnet.testbed.procs`.
"""

from __future__ import annotations

from .cli import main

__all__ = ["main"]
