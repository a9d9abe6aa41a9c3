//! UDP-Lite coverage on the wire: a raw socket (root only) sees every
//! UDP-Lite datagram a runtime job sends over 127.0.0.1, and each one's
//! checksum-coverage field must be 8 + 48 + its precise bytes, or 0 when
//! the whole datagram is precise (control packets, precise data).

use approxnet_net::{Endpoint, RuntimeConfig};
use approxnet_proto::event::Role;
use approxnet_proto::{Event, JobSpec};
use socket2::{Domain, Protocol, Socket, Type};
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

const BOUND: Option<Duration> = Some(Duration::from_secs(20));

fn lo() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// (source port, destination port, cscov field, approxnet precise_len, payload length)
fn parse(pkt: &[u8]) -> Option<(u16, u16, u16, u16, usize)> {
    let ihl = usize::from(pkt.first()? & 0x0f) * 4;
    let udp = pkt.get(ihl..)?;
    if udp.len() < 8 + 48 {
        return None;
    }
    let be = |b: &[u8], i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
    let payload = &udp[8..];
    Some((
        be(udp, 0),
        be(udp, 2),
        be(udp, 4),
        be(payload, 40),
        payload.len(),
    ))
}

#[test]
fn every_datagram_covers_header_plus_precise_prefix() {
    let raw = match Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::from(136))) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("skipped: raw UDP-Lite socket needs root ({e})");
            return;
        }
    };
    raw.set_recv_buffer_size(8 << 20).unwrap();
    raw.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let server = Endpoint::bind(lo(), RuntimeConfig::udplite()).unwrap();
    let addr = server.local_addr();
    let t = thread::spawn(move || {
        let mut server = server;
        loop {
            let (_, ev) = server
                .next_event(BOUND)
                .unwrap()
                .expect("event within bound");
            if let Event::JobComplete {
                role: Role::Receiver,
                ..
            } = ev
            {
                // Keep answering until the client's close is through.
                let _ = server.finish(Duration::from_millis(300));
                return;
            }
        }
    });
    let mut client = Endpoint::bind(lo(), RuntimeConfig::udplite()).unwrap();
    let ports = [client.local_addr().port(), addr.port()];
    let h = client.connect(addr).unwrap();
    let mut spec = JobSpec::new(1.0).unwrap();
    for i in 0..8u8 {
        // 4000 bytes, the first 600 precise: the first packet carries the
        // prefix, later packets none of it.
        spec = spec.message_with_prefix(0, vec![i; 4000], 600);
    }
    spec = spec.message(0, vec![9u8; 3000]); // fully precise
    let job = client.send_job(h, spec).unwrap();
    client.wait_job(h, job, BOUND).unwrap();
    t.join().unwrap();

    let mut buf = vec![MaybeUninit::<u8>::uninit(); 65_536];
    let (mut data_partial, mut full) = (0, 0);
    while let Ok(n) = raw.recv(&mut buf) {
        // SAFETY: recv initialised the first n bytes.
        let pkt: Vec<u8> = buf[..n]
            .iter()
            .map(|b| unsafe { b.assume_init() })
            .collect();
        let Some((sport, dport, cscov, precise, len)) = parse(&pkt) else {
            continue;
        };
        if !(ports.contains(&sport) && ports.contains(&dport)) {
            continue; // another test's traffic
        }
        let covered = 48 + usize::from(precise);
        let want = if covered >= len {
            0
        } else {
            (8 + covered) as u16
        };
        assert_eq!(
            cscov, want,
            "datagram {sport}->{dport}: {len} bytes, {precise} precise"
        );
        if want == 0 {
            full += 1;
        } else {
            data_partial += 1;
        }
    }
    assert!(
        data_partial >= 8 * 2,
        "approximate packets seen: {data_partial}"
    );
    assert!(full > 0, "control / precise packets seen: {full}");
}
