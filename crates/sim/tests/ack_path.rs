//! `[transport] ack_path = "instant"`: htsim_tcp's ACK model (csg-htsim
//! `main_tcp.cpp`: the reverse route is the source itself). The ACK reaches
//! the sender when the data reaches the receiver, crosses no NIC, queue or
//! link, and keeps what it carries; the default is unchanged (the goldens).

mod common;
use approxnet_sim::scenario;
use common::*;

/// Host 0 -> switch -> host 1, 10 Gbps, 10 us a link, no handshake: one
/// flow of `pkts` full packets (1460 + 40 bytes), initial window 2.
fn line(pkts: u32, scheme: &str) -> String {
    format!(
        r#"
duration_ms = 2.0
[topology]
kind = "dumbbell"
senders = 1
host_gbps = 10.0
link_delay_us = 10.0
[transport]
mss = 1460
header_bytes = 40
handshake = false
[[jobs]]
pattern = "bulk"
senders = [0]
target = 1
sizes = "fixed:{}"
messages = 1
load = 0.0
scheme = "{scheme}"
"#,
        pkts * 1460
    )
}

const INSTANT: &str = "transport.ack_path=\"instant\"";
/// One link: 1500 bytes at 10 Gbps plus 10 us.
const DATA_LINK_NS: u64 = 1_200 + 10_000;
/// One link: a header-only 40-byte ACK (no SACK blocks in order) at
/// 10 Gbps plus 10 us.
const ACK_LINK_NS: u64 = 32 + 10_000;

fn jct_ns(b: &scenario::Built) -> u64 {
    let f = &b.sim.flows[0];
    (f.done.expect("flow done") - f.start).as_nanos()
}

#[test]
fn the_third_packet_leaves_when_the_first_arrives() {
    // window 2: packets 1 and 2 leave at once; the ACK of packet 1 opens
    // the window for packet 3. Instant: packet 3 leaves when packet 1
    // arrives (two links out), so it lands two one-way trips after the
    // start. Network: the ACK's two links back come in between.
    let one_way = 2 * DATA_LINK_NS;
    let b = run(&line(3, "tcp"), &[INSTANT]);
    assert_eq!(jct_ns(&b), 2 * one_way);
    let n = run(&line(3, "tcp"), &[]);
    assert_eq!(jct_ns(&n), 2 * one_way + 2 * ACK_LINK_NS);
}

#[test]
fn instant_acks_cross_no_link_and_are_counted_apart() {
    for scheme in ["tcp", "dctcp", "pfabric"] {
        let b = run(&line(40, scheme), &[INSTANT]);
        let c = b.sim.counters;
        let f = &b.sim.flows[0];
        assert!(f.done.is_some(), "{scheme}");
        let sent = f.stats().sent_pkts;
        assert_eq!(f.stats().retx_pkts, 0, "{scheme}");
        // two links a data packet, nothing else in the network
        assert_eq!(c.hops, 2 * sent, "{scheme}");
        assert_eq!(c.delivered_data, sent, "{scheme}");
        assert_eq!(c.instant_acks, sent, "{scheme}");
        let s = summary(&b);
        assert!(
            s.contains(&format!("\"ack_path\":\"instant\",\"instant_acks\":{sent}")),
            "{s}"
        );
        // the default: every ACK crosses both links, nothing instant
        let n = run(&line(40, scheme), &[]);
        let sent = n.sim.flows[0].stats().sent_pkts;
        assert_eq!(n.sim.counters.hops, 4 * sent, "{scheme}");
        assert_eq!(n.sim.counters.instant_acks, 0);
        assert!(!summary(&n).contains("ack_path"));
    }
}

#[test]
fn dctcp_still_hears_the_marks() {
    // 4 x 1 MB into one 10 Gbps port (1.5 MB of buffer, ECN at 65
    // packets): without the ECN echo the windows would grow until the
    // buffer overflows; with it the queue stays near K and nothing drops
    let b = run(&incast(4, 5.0, 1_000_000, "dctcp"), &[INSTANT]);
    let marks = ecn_marks(&b);
    assert!(marks > 0);
    assert_eq!(b.sim.counters.drops, 0);
    assert!(b.sim.flows.iter().all(|f| f.done.is_some()));
    let q = mean_queue_pkts(&b, "host4");
    assert!(q < 100.0, "mean queue {q} packets");
    // the handshake still crosses: SYN and SYN-ACK, two links each
    let data: u64 = b.sim.flows.iter().map(|f| f.stats().sent_pkts).sum();
    assert_eq!(b.sim.counters.hops, 2 * data + 4 * 4);
}

/// (drops, retransmissions, timeouts) of tests/sack.rs's incast.
fn losses(sets: &[&str], scheme: &str) -> (u64, u64, u64) {
    let b = run(&small_incast(scheme), sets);
    let f = &b.sim.flows;
    assert!(f.iter().all(|f| f.done.is_some()), "{scheme} {sets:?}");
    (
        f.iter().map(|f| f.drops).sum(),
        f.iter().map(|f| f.stats().retx_pkts).sum(),
        f.iter().map(|f| f.stats().timeouts).sum(),
    )
}

#[test]
fn sack_blocks_still_reach_the_sender() {
    // tests/sack.rs's incast (10-packet buffer): with the blocks the
    // sender resends exactly what was lost; without them (sack = false)
    // it resends more. Instant ACKs hand the sender the blocks they
    // carry. (Here 2 of the 4 flows lose a retransmission and time out,
    // where the network's ACK timing loses none: the timing differs, the
    // recovery does not.)
    for scheme in ["tcp", "dctcp"] {
        let (drops, retx, _) = losses(&[INSTANT], scheme);
        assert!(drops > 0, "{scheme}");
        assert_eq!(retx, drops, "{scheme}");
        let (drops, retx, _) = losses(&[INSTANT, "transport.sack=false"], scheme);
        assert!(
            retx > drops,
            "{scheme} without SACK: {retx} resent, {drops} lost"
        );
        // same seed, same bytes
        let a = summary(&run(&small_incast(scheme), &[INSTANT]));
        assert_eq!(a, summary(&run(&small_incast(scheme), &[INSTANT])));
    }
}

#[test]
fn aeolus_and_udp_run_with_instant_acks() {
    // Aeolus: its ACKs are instant, its probes and credits still cross
    let b = run(&line(40, "aeolus"), &[INSTANT]);
    assert!(b.sim.flows[0].done.is_some());
    assert!(b.sim.counters.instant_acks > 0);
    // UDP returns no ACK: nothing to hand over
    let u = run(&line(40, "udp"), &[INSTANT]);
    assert!(u.sim.flows[0].done.is_some());
    assert_eq!(u.sim.counters.instant_acks, 0);
}

fn err(text: &str, sets: &[&str]) -> String {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    match scenario::parse(text, &sets) {
        Err(e) => e.to_string(),
        Ok(f) => match scenario::build(&f) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{sets:?} accepted"),
        },
    }
}

#[test]
fn unknown_values_are_refused_by_name() {
    for v in ["\"fast\"", "\"Instant\"", "\"\""] {
        let e = err(&line(3, "tcp"), &[&format!("transport.ack_path={v}")]);
        assert!(
            e.contains("transport.ack_path") && e.contains("network, instant"),
            "{e}"
        );
    }
    let e = err(&line(3, "tcp"), &["transport.ack_path=1"]);
    assert!(e.contains("ack_path"), "{e}");
}

#[test]
fn atp_schemes_refuse_instant_acks() {
    let e = err(&line(3, "atp-full"), &[INSTANT]);
    assert!(
        e.contains("transport.ack_path") && e.contains("atp-full") && e.contains("network"),
        "{e}"
    );
    // "network" spelt out is the default
    let a = run(&line(3, "tcp"), &["transport.ack_path=\"network\""]);
    assert_eq!(summary(&a), summary(&run(&line(3, "tcp"), &[])));
}

#[test]
fn the_cli_takes_it_with_set() {
    let d = std::env::temp_dir().join(format!("approxnet-ack-path-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join("line.toml");
    std::fs::write(&file, line(40, "tcp")).unwrap();
    let sim = |out: &str, set: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_approxnet-sim"))
            .args(["run", file.to_str().unwrap(), "--out"])
            .arg(d.join(out))
            .args(["--quiet", "--set", set])
            .output()
            .expect("binary runs")
    };
    let o = sim("instant", "transport.ack_path=\"instant\"");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = std::fs::read_to_string(d.join("instant").join("summary.json")).unwrap();
    assert!(
        s.contains("\"ack_path\":\"instant\",\"instant_acks\":"),
        "{s}"
    );
    let t = std::fs::read_to_string(d.join("instant").join("summary.txt")).unwrap();
    assert!(t.contains("without crossing the network"), "{t}");
    let o = sim("bad", "transport.ack_path=\"later\"");
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("transport.ack_path") && e.contains("network, instant"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}
