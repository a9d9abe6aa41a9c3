//! SAP sockets through the emulated error-prone link (`approxnet-link`
//! between two namespaces), with the real kernel's UDP-Lite checksum
//! judging each datagram's coverage: damage in the approximate bytes is
//! delivered flagged (or refused, as the receiver chooses), damage in a
//! precise prefix loses the datagram, and a FIN lost on the link ends in a
//! defined error on both sides. Root only; elsewhere "skipped".

mod netlink;

use approxnet_net::sap::{
    CloseError, Datagram, Mode, RecvError, SapConfig, SapListener, SapSocket,
};
use approxnet_proto::event::JobFailure;
use approxnet_proto::stats::DropReason;
use netlink::*;
use std::time::Duration;

const N: u32 = 20;
const LEN: usize = 700;
const PREFIX: usize = 16;
/// UDP-Lite header + approxnet header: the body starts here in the IP payload.
const BODY_AT: usize = 8 + 48;

fn datagram(i: u32) -> Vec<u8> {
    (0..LEN).map(|k| (k as u32 * 13 + i) as u8).collect()
}

fn sap_cfg(accept_damaged: bool) -> SapConfig {
    SapConfig {
        accept_damaged,
        ..SapConfig::default()
    }
}

/// Sends `N` approximate datagrams (16-byte prefix) from A to B and closes;
/// returns what B received, how B's receive ended, and B's socket.
fn approximate_run(link: &Link, rx_cfg: SapConfig) -> (Vec<Datagram>, RecvError, SapSocket) {
    let listener = link
        .within(1, move || {
            SapListener::bind(format!("{IP_B}:7950").parse().unwrap(), rx_cfg)
        })
        .join()
        .unwrap()
        .expect("listen");
    let rx = std::thread::spawn(move || {
        let mut s = listener.accept(Some(BOUND)).expect("a peer");
        let mut got = Vec::new();
        loop {
            match s.recv(Some(BOUND)) {
                Ok(d) => got.push(d),
                Err(e) => return (got, e, s),
            }
        }
    });
    let mut tx = link
        .within(0, || {
            SapSocket::connect(
                "0.0.0.0:0".parse().unwrap(),
                format!("{IP_B}:7950").parse().unwrap(),
                SapConfig::default(),
            )
        })
        .join()
        .unwrap()
        .expect("handshake through the link");
    tx.set_mode(Mode::Approximate);
    for i in 0..N {
        tx.send_with_prefix(&datagram(i), PREFIX).unwrap();
    }
    tx.close(BOUND).expect("close");
    rx.join().unwrap()
}

/// Flips one bit at body byte `body_byte` of every frame of 500+ bytes, A
/// to B only (the data; control packets are shorter).
fn flipping(body_byte: usize) -> Option<Link> {
    let spec = format!("flip-at:{}:500", BODY_AT + body_byte);
    Link::up(&[
        "--mode",
        "approximate",
        "--channel",
        &spec,
        "--damage",
        "a-to-b",
    ])
}

#[test]
fn damaged_approximate_bytes_arrive_flagged() {
    let Some(link) = flipping(300) else { return };
    let (got, end, _) = approximate_run(&link, sap_cfg(true));
    assert!(matches!(end, RecvError::Closed), "{end}");
    assert_eq!(got.len() as u32, N, "every datagram delivered");
    for d in &got {
        assert!(d.approximate && d.damaged, "flagged damaged");
        assert_eq!(d.precise_len, PREFIX);
        let i = (0..N)
            .find(|&i| d.bytes[..PREFIX] == datagram(i)[..PREFIX])
            .expect("prefix intact");
        let mut expect = datagram(i);
        expect[300] ^= 1;
        assert_eq!(d.bytes, expect, "exactly the link's bit differs");
    }
}

#[test]
fn a_receiver_that_refuses_damaged_data_never_sees_it() {
    let Some(link) = flipping(300) else { return };
    let (got, end, rx) = approximate_run(&link, sap_cfg(false));
    assert!(matches!(end, RecvError::Closed), "{end}");
    assert!(got.is_empty(), "{} delivered", got.len());
    let core = rx.endpoint().core().stats();
    assert_eq!(core.dropped(DropReason::DamagedApproximate), u64::from(N));
}

#[test]
fn a_damaged_precise_prefix_loses_the_datagram_in_the_kernel() {
    let Some(link) = flipping(4) else { return };
    let csum_before = link
        .within(1, || snmp("UdpLite", "InCsumErrors"))
        .join()
        .unwrap();
    let (got, end, _) = approximate_run(&link, sap_cfg(true));
    assert!(matches!(end, RecvError::Closed), "{end}");
    assert!(got.is_empty(), "never delivered, never resent");
    let csum = link
        .within(1, || snmp("UdpLite", "InCsumErrors"))
        .join()
        .unwrap()
        - csum_before;
    assert_eq!(csum, u64::from(N), "the kernel dropped each one once");
}

#[test]
fn a_fin_lost_on_the_link_ends_in_defined_errors() {
    let Some(mut link) = Link::up(&["--mode", "approximate"]) else {
        return;
    };
    let mut cfg = SapConfig::default();
    cfg.runtime.proto.idle_timeout = approxnet_proto::Duration::from_millis(500);
    let rx_cfg = cfg.clone();
    let listener = link
        .within(1, move || {
            SapListener::bind(format!("{IP_B}:7951").parse().unwrap(), rx_cfg)
        })
        .join()
        .unwrap()
        .unwrap();
    let rx = std::thread::spawn(move || {
        let mut s = listener.accept(Some(BOUND)).expect("a peer");
        let mut got = Vec::new();
        loop {
            // The FIN never comes: only the receiver's own bound ends it.
            match s.recv(Some(Duration::from_secs(2))) {
                Ok(d) => got.push(d),
                Err(e) => return (got, e),
            }
        }
    });
    let tx_cfg = cfg.clone();
    let mut tx = link
        .within(0, move || {
            SapSocket::connect(
                "0.0.0.0:0".parse().unwrap(),
                format!("{IP_B}:7951").parse().unwrap(),
                tx_cfg,
            )
        })
        .join()
        .unwrap()
        .unwrap();
    for i in 0..N {
        tx.send(&datagram(i)).unwrap();
    }
    tx.flush(BOUND)
        .expect("every precise datagram acknowledged");
    link.stop_relay(); // from here the link loses everything: the FIN too
    let e = tx.close(Duration::from_secs(3)).unwrap_err();
    assert!(
        matches!(
            e,
            CloseError::FinUnacknowledged | CloseError::Lost(JobFailure::PeerUnresponsive)
        ),
        "{e}"
    );
    let (got, end) = rx.join().unwrap();
    assert_eq!(got.len() as u32, N, "the data was all there before the FIN");
    // The flush announced the next stream before it returned, so the
    // receiver holds an open stream whose idle timer runs: the silent
    // peer is reported after the 500 ms idle timeout, before the recv
    // bound of 2 s (`TimedOut`) could end the wait.
    assert!(
        matches!(end, RecvError::Lost(JobFailure::PeerUnresponsive)),
        "{end}"
    );
}
