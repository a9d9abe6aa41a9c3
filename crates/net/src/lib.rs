//! # approxnet-net: the real runtime of approxnet
//!
//! Moves approxnet datagrams between real processes over Linux UDP and
//! UDP-Lite sockets.
//!
//! * [`sys`]: the syscall layer — sockets, UDP-Lite checksum coverage,
//!   per-packet DSCP / priority marking, `sendmmsg` / `recvmmsg`, UDP GSO / GRO.
//!
//! ## I/O contract
//! Sockets are non-blocking; every queue is bounded in datagrams and bytes.
//! Bytes from the wire are never trusted: truncated datagrams and unknown
//! control messages are counted and dropped, never a panic.

pub mod sys;
