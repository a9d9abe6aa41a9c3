//! Secrets come from the OS by default (issue 11): two servers opened with
//! the default configuration hand out different connection ids to the same
//! client address, so running a copy of the binary tells an attacker
//! nothing; a fixed seed (tests, reproducible runs) gives the same ids.

use approxnet_net::{Endpoint, RuntimeConfig};
use approxnet_proto::wire::header::PacketTypeField;
use approxnet_proto::wire::{HeaderRepr, HelloRepr, Packet, PacketType};
use std::net::UdpSocket;
use std::time::Duration;

/// The connection id `server` offers to a HELLO from `probe`.
fn offered_id(server: &mut Endpoint, probe: &UdpSocket) -> u64 {
    let mut body = [0u8; HelloRepr::LEN];
    HelloRepr { nonce: 7 }.emit(&mut body);
    let h = HeaderRepr {
        ty: PacketTypeField(PacketType::Hello),
        precise_len: body.len() as u16,
        body_len: body.len() as u16,
        ..Default::default()
    };
    let mut hello = vec![0u8; 48 + body.len()];
    h.emit_with_body(&mut hello, &body);
    probe.send_to(&hello, server.local_addr()).unwrap();
    let mut buf = [0u8; 2048];
    for _ in 0..100 {
        server.drive(Some(Duration::from_millis(10))).unwrap();
        if let Ok((n, _)) = probe.recv_from(&mut buf) {
            let p = Packet::new_checked(&buf[..n]).unwrap();
            let r = HeaderRepr::parse(&p).unwrap();
            assert_eq!(r.ty.0, PacketType::HelloAck);
            return r.conn_id;
        }
    }
    panic!("no HELLO_ACK within a second");
}

fn ids(seed: Option<u64>) -> (u64, u64) {
    let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
    probe.set_nonblocking(true).unwrap();
    let cfg = RuntimeConfig {
        seed,
        ..RuntimeConfig::default()
    };
    let mut a = Endpoint::bind("127.0.0.1:0".parse().unwrap(), cfg.clone()).unwrap();
    let mut b = Endpoint::bind("127.0.0.1:0".parse().unwrap(), cfg).unwrap();
    (offered_id(&mut a, &probe), offered_id(&mut b, &probe))
}

#[test]
fn default_servers_offer_different_connection_ids() {
    let (a, b) = ids(None);
    assert_ne!(a, b, "two default servers offered the same id {a:#x}");
    let (c, d) = ids(Some(7));
    assert_eq!(
        c, d,
        "the same seed must give the same ids (reproducible runs)"
    );
}
