//! The runtime over real sockets on 127.0.0.1: jobs complete end to end.

use approxnet_net::{Endpoint, RuntimeConfig};
use approxnet_proto::event::Role;
use approxnet_proto::{Event, JobSpec};
use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

/// Safety bound on any wait: reaching it is a failure, never a pass.
const BOUND: Option<Duration> = Some(Duration::from_secs(20));

fn lo() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// Runs a server until it reports `jobs` receiver-side completions; returns
/// (delivered messages, receiver reports).
fn serve(mut server: Endpoint, jobs: usize) -> (u64, Vec<approxnet_proto::JobReport>) {
    let mut delivered = 0;
    let mut reports = Vec::new();
    while reports.len() < jobs {
        let Some((_, ev)) = server.next_event(BOUND).expect("server io") else {
            panic!("server saw no event within the bound");
        };
        match ev {
            Event::MessageDelivered { .. } => delivered += 1,
            Event::JobComplete {
                role: Role::Receiver,
                outcome,
                ..
            } => reports.push(outcome.expect("receiver-side job outcome")),
            _ => {}
        }
    }
    (delivered, reports)
}

#[test]
fn job_with_msr_one_completes_over_udp() {
    let server = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let addr = server.local_addr();
    let t = thread::spawn(move || serve(server, 1));
    let mut client = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let h = client.connect(addr).expect("handshake");
    let job = client
        .send_job(h, JobSpec::uniform(1.0, &[20_000; 50]).unwrap())
        .unwrap();
    let report = client.wait_job(h, job, BOUND).expect("job completes");
    assert!(report.guarantee_held());
    assert_eq!(report.groups[0].delivered, 50);
    let (delivered, reports) = t.join().unwrap();
    assert_eq!(delivered, 50);
    assert!(reports[0].guarantee_held());
}
