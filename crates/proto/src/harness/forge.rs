//! Well-formed datagrams an attacker would send (valid CRC, any ids), for
//! the tests and benchmarks that play one: the core's own (`tests/hold.rs`)
//! and the runtime's flood over real sockets (`crates/net/tests/flood.rs`).

use crate::wire::header::PacketTypeField;
use crate::wire::{GroupDesc, HeaderRepr, HelloRepr, JobRepr, PacketType};

/// A control datagram of type `ty` on connection `conn_id` with `body`.
pub fn control(ty: PacketType, conn_id: u64, job_id: u32, body: &[u8]) -> Vec<u8> {
    let h = HeaderRepr {
        ty: PacketTypeField(ty),
        conn_id,
        job_id,
        pkt_count: 1,
        precise_len: body.len() as u16,
        body_len: body.len() as u16,
        ..HeaderRepr::default()
    };
    let mut buf = vec![0u8; crate::wire::HEADER_LEN + body.len()];
    let n = h.emit_with_body(&mut buf, body);
    buf.truncate(n);
    buf
}

/// A JOB for connection `conn_id` announcing `messages` in one group.
pub fn job(conn_id: u64, job_id: u32, messages: u32) -> Vec<u8> {
    let j = JobRepr {
        tensor: None,
        groups: vec![GroupDesc {
            id: 0,
            messages,
            must_deliver: 1,
        }],
    };
    let mut body = vec![0u8; j.buffer_len()];
    j.emit(&mut body);
    control(PacketType::Job, conn_id, job_id, &body)
}

/// A HELLO carrying `nonce`.
pub fn hello(nonce: u64) -> Vec<u8> {
    let mut body = [0u8; HelloRepr::LEN];
    HelloRepr { nonce }.emit(&mut body);
    control(PacketType::Hello, 0, 0, &body)
}
