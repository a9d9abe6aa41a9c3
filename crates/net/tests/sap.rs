//! SAP sockets over real UDP-Lite sockets on loopback: precise by default,
//! switched to approximate and back; precise datagrams in order; the
//! handshake, the end of the stream and the FIN; bad arguments. Damage on
//! an error-prone link is tested in `sap_link.rs` (root, TUN relay).

use approxnet_net::sap::{Mode, RecvError, SapConfig, SapError, SapListener, SapSocket};
use approxnet_proto::JobError;
use std::thread;
use std::time::Duration;

const BOUND: Option<Duration> = Some(Duration::from_secs(20));

fn datagram(i: u32, len: usize) -> Vec<u8> {
    let mut b = vec![(i % 251) as u8; len];
    b[..4].copy_from_slice(&i.to_be_bytes());
    b
}

/// Receives until the peer closes; returns every datagram.
fn drain(mut rx: SapSocket) -> Vec<approxnet_net::sap::Datagram> {
    let mut got = Vec::new();
    loop {
        match rx.recv(BOUND) {
            Ok(d) => got.push(d),
            Err(RecvError::Closed) => return got,
            Err(e) => panic!("receiver: {e}"),
        }
    }
}

#[test]
fn precise_approximate_precise_then_close() {
    let listener = SapListener::bind("127.0.0.1:0".parse().unwrap(), SapConfig::default()).unwrap();
    let addr = listener.local_addr();
    let rx = thread::spawn(move || drain(listener.accept(BOUND).expect("a peer")));
    let mut tx = SapSocket::connect("127.0.0.1:0".parse().unwrap(), addr, SapConfig::default())
        .expect("handshake");
    assert_eq!(tx.mode(), Mode::Precise, "precise by default");
    for i in 0..100 {
        tx.send(&datagram(i, 1000)).unwrap();
    }
    tx.set_mode(Mode::Approximate);
    for i in 100..200 {
        // 16-byte precise prefix, the rest approximate; one datagram of
        // three packets among them.
        let len = if i == 150 { 3000 } else { 1000 };
        tx.send_with_prefix(&datagram(i, len), 16).unwrap();
    }
    tx.set_mode(Mode::Precise);
    for i in 200..300 {
        tx.send(&datagram(i, 1000)).unwrap();
    }
    tx.close(Duration::from_secs(10)).expect("orderly close");
    let got = rx.join().unwrap();
    let precise: Vec<u32> = got
        .iter()
        .filter(|d| !d.approximate)
        .map(|d| u32::from_be_bytes(d.bytes[..4].try_into().unwrap()))
        .collect();
    let expect: Vec<u32> = (0..100).chain(200..300).collect();
    assert_eq!(precise, expect, "every precise datagram, in order");
    let approx: Vec<_> = got.iter().filter(|d| d.approximate).collect();
    // Loopback loses nothing but a busy host may overflow a socket buffer:
    // approximate datagrams are never resent, so at most those are missing.
    assert!(approx.len() > 90, "{} approximate datagrams", approx.len());
    for d in &approx {
        let i = u32::from_be_bytes(d.bytes[..4].try_into().unwrap());
        assert!((100..200).contains(&i));
        assert_eq!(d.bytes, datagram(i, d.bytes.len()), "intact on loopback");
        assert_eq!(d.precise_len, 16);
        assert!(!d.damaged);
    }
    assert!(got
        .iter()
        .filter(|d| !d.approximate)
        .all(|d| d.precise_len == d.bytes.len()));
}

#[test]
fn a_coverage_longer_than_the_datagram_is_an_error_naming_it() {
    let listener = SapListener::bind("127.0.0.1:0".parse().unwrap(), SapConfig::default()).unwrap();
    let addr = listener.local_addr();
    let rx = thread::spawn(move || drain(listener.accept(BOUND).expect("a peer")));
    let mut tx =
        SapSocket::connect("127.0.0.1:0".parse().unwrap(), addr, SapConfig::default()).unwrap();
    tx.set_mode(Mode::Approximate);
    let e = tx.send_with_prefix(&[1; 10], 11).unwrap_err();
    assert!(
        matches!(
            e,
            SapError::Send(JobError::PreciseTooLong {
                precise: 11,
                len: 10,
                ..
            })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("precise prefix"), "{e}");
    // Nothing was sent; the socket still works.
    tx.send_with_prefix(&[2; 10], 10).unwrap();
    tx.close(Duration::from_secs(10)).unwrap();
    let got = rx.join().unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].bytes, vec![2; 10]);
    // Sending after close is refused.
    assert!(matches!(tx.send(&[3]), Err(SapError::Closed)));
}

#[test]
fn a_mode_switch_never_changes_a_datagram_already_handed_over() {
    let listener = SapListener::bind("127.0.0.1:0".parse().unwrap(), SapConfig::default()).unwrap();
    let addr = listener.local_addr();
    let rx = thread::spawn(move || drain(listener.accept(BOUND).expect("a peer")));
    let mut tx =
        SapSocket::connect("127.0.0.1:0".parse().unwrap(), addr, SapConfig::default()).unwrap();
    tx.set_mode(Mode::Approximate);
    // Eight packets long: still on its way when the mode switches.
    tx.send_with_prefix(&datagram(1, 10_000), 100).unwrap();
    tx.set_mode(Mode::Precise);
    tx.send(&datagram(2, 10_000)).unwrap();
    tx.close(Duration::from_secs(10)).unwrap();
    let got = rx.join().unwrap();
    let by_id = |i: u32| got.iter().find(|d| d.bytes[..4] == i.to_be_bytes());
    let precise = by_id(2).expect("the precise datagram arrives");
    assert!(!precise.approximate);
    assert_eq!(precise.precise_len, 10_000);
    if let Some(a) = by_id(1) {
        assert!(a.approximate);
        assert_eq!(a.precise_len, 100, "its own prefix, not the new mode's");
    }
}

#[test]
fn a_sender_that_only_sends_outlives_the_idle_timeout() {
    // The application sends for three idle timeouts without ever calling
    // recv: each send must also read the peer's ACKs, or the sender would
    // think its peer silent and drop the connection.
    let mut cfg = SapConfig::default();
    cfg.runtime.proto.idle_timeout = approxnet_proto::Duration::from_millis(200);
    let listener = SapListener::bind("127.0.0.1:0".parse().unwrap(), cfg.clone()).unwrap();
    let addr = listener.local_addr();
    let rx = thread::spawn(move || drain(listener.accept(BOUND).expect("a peer")));
    let mut tx = SapSocket::connect("127.0.0.1:0".parse().unwrap(), addr, cfg).unwrap();
    for i in 0..60 {
        tx.send(&datagram(i, 500)).expect("the connection stays up");
        thread::sleep(Duration::from_millis(10)); // production pace
    }
    tx.close(Duration::from_secs(10)).unwrap();
    assert_eq!(rx.join().unwrap().len(), 60);
}
