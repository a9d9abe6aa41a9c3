//! The native transports' per-packet glue (`engine/flows.rs`): what the
//! arrival of a data packet sends back, and when.

mod common;
use common::*;

/// One DCTCP-ES sender into one receiver through one switch (10 us links,
/// 10 Gbps), 16 one-packet messages of which 8 are needed.
const EARLY_STOP: &str = r#"
duration_ms = 2.0
seed = 5
[topology]
kind = "dumbbell"
senders = 1
host_gbps = 10.0
link_delay_us = 10.0
[transport]
mss = 1448
header_bytes = 54
[[jobs]]
pattern = "bulk"
target = 1
sizes = "fixed:1448"
messages = 16
load = 0.0
msr = 0.5
scheme = "dctcp-es"
"#;

/// EarlySend: the receiver's first stop signal leaves with the ACK of the
/// data packet that completed the job (seed 000 section 7.1: ES "stops
/// sending once MSR data have been received"), so it reaches
/// the sender one header-only trip later: two 10 us links and a few 54-byte
/// serialisations, less than a data packet's serialisation (1.2 us) more.
/// A stop sent with a later data packet (the flow's EarlySend and
/// enough-state read before the job completed) arrives too late.
#[test]
fn earlysend_stops_with_the_packet_that_completes_the_job() {
    let b = run(EARLY_STOP, &[]);
    let j = &b.sim.jobs[0];
    assert!(j.done.is_some() && j.delivered >= 8 && j.delivered < 16);
    let f = &b.sim.flows[0];
    assert!(f.cancelled);
    let enough = f.enough_at.expect("the receiver had enough");
    let stopped = f.stopped_at.expect("the stop reached the sender");
    assert_eq!(Some(enough), j.done);
    let trip = (stopped - enough).as_nanos();
    assert!(
        (20_000..21_200).contains(&trip),
        "the stop took {trip} ns from the completing packet to the sender"
    );
}
