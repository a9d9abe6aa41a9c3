"""The real runtime: approxnet over UDP / UDP-Lite sockets between processes.

:class:`SocketEndpoint` is the Rust runtime's blocking endpoint
(``crates/net``, ``approxnet_net::Endpoint``). It both connects and accepts;
the protocol runs while one of its calls waits (``connect``, ``accept``,
``next_event``, ``wait_job``, ``finish``). Every wait releases the GIL, ends
at its timeout and can be interrupted with Ctrl-C.

    >>> import numpy as np
    >>> from approxnet import Job
    >>> from approxnet.net import SocketEndpoint
    >>> server, client = SocketEndpoint(), SocketEndpoint()
    >>> conn = client.connect(server.local_addr, timeout_s=5.0)
    >>> job = client.send_job(conn, Job.tensor(np.ones(5000, np.float32), p=0.9))
    >>> client.wait_job(conn, job, timeout_s=5.0).ok
    True
    >>> ev = server.next_event(timeout_s=5.0)
    >>> while ev is not None and type(ev).__name__ != "TensorReady":
    ...     ev = server.next_event(timeout_s=5.0)
    >>> ev.fraction >= 0.9
    True

Events are the classes :meth:`approxnet.Endpoint.poll_event` returns
(``Accepted``, ``JobAnnounced``, ``MessageDelivered``, ``TensorReady``,
``JobComplete``, ...). Errors: ``AddressError`` (a bad or unbindable
address), ``ConnectError`` (no handshake within the timeout), ``JobError``
(a job refused), ``TransferError`` (a job failed, its connection was lost,
or a wait timed out), ``NetError`` (a socket error).
"""

from __future__ import annotations

from ._native import (
    ConnectError,
    ConnectionHandle,
    NetError,
    SocketEndpoint,
    TransferError,
)

__all__ = ["ConnectError", "ConnectionHandle", "NetError", "SocketEndpoint", "TransferError"]
