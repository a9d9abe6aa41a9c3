//! Socket-layer tests over 127.0.0.1: batching, GSO / GRO, marking, UDP-Lite coverage.

use approxnet_net::sys::{
    socket::cscov_for, DefaultMarking, Marking, RecvQueue, SendQueue, Socket, SocketKind,
    SocketOptions,
};
use std::net::SocketAddr;
use std::time::Duration;

/// Safety bound for waits: a test that needs it has failed, not passed.
const WAIT: Option<Duration> = Some(Duration::from_secs(10));

fn lo() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn open(kind: SocketKind) -> Socket {
    let opts = SocketOptions {
        kind,
        min_recv_coverage: if kind == SocketKind::UdpLite {
            Some(48)
        } else {
            None
        },
        ..SocketOptions::default()
    };
    Socket::bind(lo(), &opts).expect("bind on loopback")
}

/// Receives until `n` datagrams arrived; returns (payload, tos) in arrival order.
fn recv_n(sock: &Socket, n: usize) -> Vec<(Vec<u8>, Option<u8>)> {
    let mut q = RecvQueue::new(16, 65_535);
    let mut out = Vec::new();
    while out.len() < n {
        match q.recv(sock) {
            Ok(_) => out.extend(q.iter().map(|r| (r.data.to_vec(), r.tos))),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let (readable, _) = sock.wait(false, WAIT).unwrap();
                assert!(readable, "datagrams did not arrive");
            }
            Err(e) => panic!("recv: {e}"),
        }
    }
    out
}

fn payload(i: u32, len: usize) -> Vec<u8> {
    let mut v = vec![(i % 251) as u8; len];
    v[..4].copy_from_slice(&i.to_be_bytes());
    v
}

fn send_all(sock: &Socket, q: &mut SendQueue) {
    while !q.is_empty() {
        q.flush(sock).unwrap();
        if !q.is_empty() {
            sock.wait(true, WAIT).unwrap();
        }
    }
}

#[test]
fn udp_batch_with_gso_arrives_intact_and_marked() {
    let rx = open(SocketKind::Udp);
    let tx = open(SocketKind::Udp);
    let mut q = SendQueue::new(256, 1 << 20);
    let mark = Marking::new(46, 0, Some(3));
    // 100 datagrams of 1000 bytes, then a short tail: GSO coalesces them.
    for i in 0..100u32 {
        let len = if i == 99 { 300 } else { 1000 };
        assert!(q.push(rx.local_addr(), mark, 0, &payload(i, len), tx.gso_enabled()));
    }
    send_all(&tx, &mut q);
    assert_eq!(q.stats.datagrams, 100);
    assert_eq!(q.stats.errors, 0);
    if tx.gso_enabled() {
        assert!(
            q.stats.gso_messages > 0,
            "GSO coalesced the run of equal datagrams"
        );
    }
    let got = recv_n(&rx, 100);
    assert_eq!(got.len(), 100);
    for (i, (data, tos)) in got.iter().enumerate() {
        let len = if i == 99 { 300 } else { 1000 };
        assert_eq!(data, &payload(i as u32, len), "datagram {i}");
        assert_eq!(*tos, Some(46 << 2), "DSCP 46 marked per packet");
    }
}

#[test]
fn marking_changes_per_packet_within_one_batch() {
    let rx = open(SocketKind::Udp);
    let tx = open(SocketKind::Udp);
    let mut q = SendQueue::new(64, 1 << 16);
    for i in 0..8u32 {
        let mark = Marking::new(8 * i as u8, 0, Some(7 - i));
        assert!(q.push(rx.local_addr(), mark, 0, &payload(i, 200), true));
    }
    send_all(&tx, &mut q);
    assert_eq!(q.stats.errors, 0);
    eprintln!("SO_PRIORITY per packet: {}", tx.priority_per_packet());
    let got = recv_n(&rx, 8);
    for (data, tos) in got {
        let i = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
        assert_eq!(tos, Some((8 * i as u8) << 2));
    }
}

#[test]
fn the_first_marking_becomes_the_sockets_own_and_others_still_travel_per_packet() {
    let rx = open(SocketKind::Udp);
    let tx = open(SocketKind::Udp);
    assert_eq!(tx.default_marking(), DefaultMarking::Unset);
    let a = Marking::new(10, 0, Some(3));
    let b = Marking::new(20, 0, Some(5));
    let none = Marking::new(10, 0, None);
    let marks = [a, b, a, none, b, a];
    let mut q = SendQueue::new(64, 1 << 16);
    for (i, &m) in marks.iter().enumerate() {
        assert!(q.push(rx.local_addr(), m, 0, &payload(i as u32, 300), true));
    }
    send_all(&tx, &mut q);
    assert_eq!(q.stats.errors, 0);
    assert_eq!(
        tx.default_marking(),
        DefaultMarking::Set {
            tos: 10 << 2,
            priority: 3
        }
    );
    assert_eq!(tx.priority().unwrap(), 3);
    for (data, tos) in recv_n(&rx, marks.len()) {
        let i = u32::from_be_bytes([data[0], data[1], data[2], data[3]]) as usize;
        assert_eq!(tos, Some(marks[i].tos), "datagram {i}");
    }
    // Setting the TOS by hand forgets the socket's marking: the next batch
    // sets it again from its first datagram.
    tx.set_tos(0).unwrap();
    assert_eq!(tx.default_marking(), DefaultMarking::Unset);
    let mut q = SendQueue::new(4, 4096);
    assert!(q.push(rx.local_addr(), b, 0, &payload(9, 300), true));
    send_all(&tx, &mut q);
    assert_eq!(recv_n(&rx, 1)[0].1, Some(b.tos));
    assert_eq!(tx.priority().unwrap(), 5);
}

#[test]
fn udplite_coverage_is_set_and_read_back() {
    let rx = open(SocketKind::UdpLite);
    let tx = open(SocketKind::UdpLite);
    // Receiver demands the 48-byte header be covered: 8 (UDP-Lite header) + 48.
    assert_eq!(rx.recv_cscov().unwrap(), 56);
    // Header (48) + 100 precise bytes of a 1000-byte datagram.
    let cov = cscov_for(48 + 100, 1000);
    assert_eq!(cov, 8 + 48 + 100);
    tx.set_send_cscov(cov).unwrap();
    assert_eq!(tx.send_cscov().unwrap(), cov);
    // A fully precise datagram asks for full coverage (0).
    tx.set_send_cscov(cscov_for(1000, 1000)).unwrap();
    assert_eq!(tx.send_cscov().unwrap(), 0);
    assert!(!tx.gso_enabled(), "UDP-Lite never uses GSO");
}

#[test]
fn udplite_queue_switches_coverage_between_datagrams() {
    let rx = open(SocketKind::UdpLite);
    let tx = open(SocketKind::UdpLite);
    let mut q = SendQueue::new(64, 1 << 16);
    let covs = [
        cscov_for(148, 1000),
        0,
        cscov_for(48, 1000),
        cscov_for(48, 1000),
    ];
    for (i, c) in covs.iter().enumerate() {
        assert!(q.push(
            rx.local_addr(),
            Marking::default(),
            *c,
            &payload(i as u32, 1000),
            true
        ));
    }
    send_all(&tx, &mut q);
    // The last coverage used stays on the socket.
    assert_eq!(tx.send_cscov().unwrap(), cscov_for(48, 1000));
    let got = recv_n(&rx, 4);
    assert_eq!(got.len(), 4);
    for (i, (data, _)) in got.iter().enumerate() {
        assert_eq!(data, &payload(i as u32, 1000));
    }
}

#[test]
fn udplite_receiver_drops_datagrams_covering_too_little() {
    let rx = open(SocketKind::UdpLite);
    let tx = open(SocketKind::UdpLite);
    let mut q = SendQueue::new(8, 1 << 16);
    // Covers only 20 payload bytes: below the receiver's 48-byte minimum.
    assert!(q.push(
        rx.local_addr(),
        Marking::default(),
        cscov_for(20, 500),
        &payload(0, 500),
        false
    ));
    // Then one that covers the header: it must be the only one delivered.
    assert!(q.push(
        rx.local_addr(),
        Marking::default(),
        cscov_for(48, 500),
        &payload(1, 500),
        false
    ));
    send_all(&tx, &mut q);
    let got = recv_n(&rx, 1);
    assert_eq!(got[0].0, payload(1, 500));
}

#[test]
fn coverage_calls_on_plain_udp_are_errors() {
    let s = open(SocketKind::Udp);
    assert!(s.set_send_cscov(56).is_err());
    assert!(s.recv_cscov().is_err());
}

#[test]
fn send_queue_is_bounded() {
    let dst = lo();
    let mut q = SendQueue::new(4, 10_000);
    for i in 0..4 {
        assert!(q.push(dst, Marking::default(), 0, &payload(i, 100), false));
    }
    assert!(!q.push(dst, Marking::default(), 0, &payload(9, 100), false));
    let mut q = SendQueue::new(100, 1000);
    assert!(q.push(dst, Marking::default(), 0, &payload(0, 900), false));
    assert!(!q.push(dst, Marking::default(), 0, &payload(1, 200), false));
    assert!(!q.push(dst, Marking::default(), 0, &[], false));
    assert_eq!(q.stats.queue_full, 2);
}

#[test]
fn priority_falls_back_or_travels_per_packet() {
    let tx = open(SocketKind::Udp);
    tx.set_priority(5).unwrap();
    assert_eq!(tx.priority().unwrap(), 5);
}

/// The driver treats a `recvmmsg` that filled fewer slots than it had as
/// "drained" and skips the confirming empty call: the kernel ends a batch
/// only at an empty queue. Empty calls are counted.
#[test]
fn a_short_batch_means_the_queue_was_empty_and_empty_calls_are_counted() {
    let rx = open(SocketKind::Udp);
    let tx = std::net::UdpSocket::bind(lo()).unwrap();
    let mut q = RecvQueue::new(4, 2048);
    assert_eq!(q.slots(), 4);
    let e = q.recv(&rx).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    assert_eq!((q.stats.empty, q.stats.syscalls), (1, 0));
    // Loopback delivers inside sendto: all six are queued when it returns.
    for i in 0..6 {
        tx.send_to(&payload(i, 100), rx.local_addr()).unwrap();
    }
    assert!(rx.wait(false, WAIT).unwrap().0);
    assert_eq!(q.recv(&rx).unwrap(), 4, "a full batch");
    assert_eq!(q.recv(&rx).unwrap(), 2, "the rest, fewer than the slots");
    let e = q.recv(&rx).unwrap_err();
    assert_eq!(
        e.kind(),
        std::io::ErrorKind::WouldBlock,
        "nothing after a short batch"
    );
    assert_eq!(
        (q.stats.empty, q.stats.syscalls, q.stats.datagrams),
        (2, 2, 6)
    );
}

#[test]
fn a_connected_socket_sends_without_addresses_and_hears_only_its_peer() {
    let rx = open(SocketKind::Udp);
    let other = open(SocketKind::Udp);
    let tx = open(SocketKind::Udp);
    tx.connect_to(rx.local_addr()).unwrap();
    assert_eq!(tx.connected_peer(), Some(rx.local_addr()));
    // A GSO run to the connected peer (no address per message) and one
    // datagram to another address (with one) in the same batch.
    let mut q = SendQueue::new(256, 1 << 20);
    for i in 0..40u32 {
        assert!(q.push(
            rx.local_addr(),
            Marking::default(),
            0,
            &payload(i, 1000),
            true
        ));
    }
    assert!(q.push(
        other.local_addr(),
        Marking::default(),
        0,
        &payload(40, 500),
        true
    ));
    send_all(&tx, &mut q);
    assert_eq!((q.stats.datagrams, q.stats.errors), (41, 0));
    let got = recv_n(&rx, 40);
    for (i, (data, _)) in got.iter().enumerate() {
        assert_eq!(data, &payload(i as u32, 1000));
    }
    assert_eq!(recv_n(&other, 1)[0].0, payload(40, 500));
    // The kernel drops what a stranger sends to the connected socket; the
    // peer's datagram, sent after it, is the first to arrive.
    let mut q = SendQueue::new(4, 4096);
    assert!(q.push(tx.local_addr(), Marking::default(), 0, b"stranger", false));
    send_all(&other, &mut q);
    let mut q = SendQueue::new(4, 4096);
    assert!(q.push(tx.local_addr(), Marking::default(), 0, b"peer", false));
    send_all(&rx, &mut q);
    assert_eq!(recv_n(&tx, 1)[0].0, b"peer".to_vec());
}

#[test]
fn disconnect_opens_an_explicitly_bound_socket_to_strangers_again_and_refuses_on_port_0() {
    let peer = open(SocketKind::Udp);
    let stranger = open(SocketKind::Udp);
    // Port 0: the kernel would release the port; refused, still connected.
    let ephemeral = open(SocketKind::Udp);
    ephemeral.connect_to(peer.local_addr()).unwrap();
    let e = ephemeral.disconnect().unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    assert_eq!(ephemeral.connected_peer(), Some(peer.local_addr()));
    // An explicit port (the one the ephemeral socket above did not take).
    let port = std::net::UdpSocket::bind(lo())
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let s = Socket::bind(addr, &SocketOptions::default()).unwrap();
    assert!(s.port_fixed());
    s.disconnect().expect("not connected: nothing to do");
    s.connect_to(peer.local_addr()).unwrap();
    let send = |from: &Socket, what: &[u8]| {
        let mut q = SendQueue::new(4, 4096);
        assert!(q.push(addr, Marking::default(), 0, what, false));
        send_all(from, &mut q);
    };
    send(&stranger, b"dropped");
    s.disconnect().unwrap();
    assert_eq!(s.connected_peer(), None);
    // Still on its port, and the stranger's first datagram was dropped.
    send(&stranger, b"heard");
    assert_eq!(recv_n(&s, 1)[0].0, b"heard".to_vec());
}

#[test]
fn an_empty_datagram_is_one_item_and_gro_batches_split_around_it() {
    let rx = open(SocketKind::Udp);
    let plain = std::net::UdpSocket::bind(lo()).unwrap();
    plain.send_to(&[], rx.local_addr()).unwrap();
    let tx = open(SocketKind::Udp);
    let mut q = SendQueue::new(64, 1 << 16);
    for i in 0..10u32 {
        assert!(q.push(
            rx.local_addr(),
            Marking::default(),
            0,
            &payload(i, 700),
            true
        ));
    }
    send_all(&tx, &mut q);
    plain.send_to(&[], rx.local_addr()).unwrap();
    let got = recv_n(&rx, 12);
    assert_eq!(got.len(), 12);
    assert!(got[0].0.is_empty() && got[11].0.is_empty());
    for (i, (data, _)) in got[1..11].iter().enumerate() {
        assert_eq!(data, &payload(i as u32, 700));
    }
}

/// The send queue keeps its `sendmmsg` headers between calls and writes
/// only the entries a call uses: nothing of an earlier call — an address,
/// a control message, a GSO segment size — may reach a later one. A
/// connected socket sends a marked GSO run to a stranger (address, TOS
/// and UDP_SEGMENT control messages), then one datagram to its peer (no
/// address: a stale one would send it to the stranger), then two plain
/// datagrams to the stranger; a sentinel to each ends the check.
#[test]
fn a_reused_send_queue_carries_nothing_of_an_earlier_batch_into_the_next() {
    let peer = open(SocketKind::Udp);
    let stranger = open(SocketKind::Udp);
    let tx = open(SocketKind::Udp);
    tx.connect_to(peer.local_addr()).unwrap();
    let mut q = SendQueue::new(64, 1 << 16);
    let marked = Marking::new(8, 0, None);
    for i in 0..3u32 {
        assert!(q.push(stranger.local_addr(), marked, 0, &payload(i, 700), true));
    }
    send_all(&tx, &mut q);
    assert!(q.push(
        peer.local_addr(),
        Marking::default(),
        0,
        &payload(10, 300),
        true
    ));
    send_all(&tx, &mut q);
    assert!(q.push(
        stranger.local_addr(),
        Marking::default(),
        0,
        &payload(3, 700),
        false
    ));
    assert!(q.push(
        stranger.local_addr(),
        Marking::default(),
        0,
        &payload(4, 90),
        false
    ));
    send_all(&tx, &mut q);
    assert!(q.push(peer.local_addr(), Marking::default(), 0, b"end", false));
    assert!(q.push(stranger.local_addr(), Marking::default(), 0, b"end", false));
    send_all(&tx, &mut q);
    assert_eq!(q.stats.errors, 0);
    let to_peer = recv_n(&peer, 2);
    assert_eq!(to_peer[0], (payload(10, 300), Some(0)));
    assert_eq!(to_peer[1].0, b"end".to_vec());
    let to_stranger = recv_n(&stranger, 6);
    let expected = [
        (payload(0, 700), Some(8 << 2)),
        (payload(1, 700), Some(8 << 2)),
        (payload(2, 700), Some(8 << 2)),
        (payload(3, 700), Some(0)),
        (payload(4, 90), Some(0)),
    ];
    assert_eq!(to_stranger[..5], expected);
    assert_eq!(to_stranger[5].0, b"end".to_vec());
}

/// Receives into `rq` until `n` datagrams arrived; (payload, tos) each.
fn recv_into(sock: &Socket, rq: &mut RecvQueue, n: usize) -> Vec<(Vec<u8>, Option<u8>)> {
    let mut out = Vec::new();
    while out.len() < n {
        match rq.recv(sock) {
            Ok(_) => out.extend(rq.iter().map(|r| (r.data.to_vec(), r.tos))),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let (readable, _) = sock.wait(false, WAIT).unwrap();
                assert!(readable, "datagrams did not arrive");
            }
            Err(e) => panic!("recv: {e}"),
        }
    }
    out
}

/// The receive queue sets its headers' pointers once and resets only
/// what the kernel wrote back (lengths, flags) in the entries it filled:
/// a lone datagram leaves a short control area and name behind, and the
/// GRO batch after it needs the whole area again (its TOS and UDP_GRO
/// control messages; without the reset the segment size is cut off and
/// the batch comes out as one datagram). Empty reads in between.
#[test]
fn a_reused_receive_queue_resets_what_the_kernel_wrote_back() {
    let rx = open(SocketKind::Udp);
    let tx = open(SocketKind::Udp);
    let mut rq = RecvQueue::new(4, 65_535);
    let marked = Marking::new(8, 0, None);
    for round in 0..4u32 {
        let mut q = SendQueue::new(64, 1 << 16);
        assert!(q.push(
            rx.local_addr(),
            Marking::default(),
            0,
            &payload(round, 60),
            false
        ));
        send_all(&tx, &mut q);
        assert_eq!(
            recv_into(&rx, &mut rq, 1),
            vec![(payload(round, 60), Some(0))]
        );
        let empty = rq.recv(&rx).unwrap_err();
        assert_eq!(empty.kind(), std::io::ErrorKind::WouldBlock);
        for i in 0..5 {
            assert!(q.push(
                rx.local_addr(),
                marked,
                0,
                &payload(100 * round + i, 1000),
                true
            ));
        }
        send_all(&tx, &mut q);
        let got = recv_into(&rx, &mut rq, 5);
        let expected: Vec<_> = (0..5)
            .map(|i| (payload(100 * round + i, 1000), Some(8 << 2)))
            .collect();
        assert_eq!(got, expected, "round {round}");
    }
    assert!(
        rq.stats.gro_messages > 0,
        "the GSO runs came as GRO batches"
    );
}
