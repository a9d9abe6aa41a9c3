//! ATP from approxnet-proto, driven unchanged through the host adapter.

mod common;
use common::*;

const PAIR: &str = r#"
duration_ms = 2.0
seed = 5
[topology]
kind = "fat_tree"
k = 4
host_gbps = 40.0
[switch]
buffer_preset = "netapprox"
[atp]
record_epochs = true
[[jobs]]
pattern = "pairs"
pairs = [[0, 15], [3, 9]]
sizes = "fbkv"
messages = 20
load = 0.1
msr = 0.5
stop_ms = 1.0
scheme = "atp-full"
"#;

#[test]
fn atp_jobs_complete_and_meet_their_msr() {
    let b = run(PAIR, &[]);
    assert!(b.sim.jobs.len() > 10);
    for j in &b.sim.jobs {
        assert!(j.done.is_some(), "job {} not done", j.id);
        assert!(j.delivered >= j.needed);
        assert!(j.loss_rate() <= 1.0 - j.msr + 1e-9);
    }
    assert!(b.sim.counters.hops > 0);
}

#[test]
fn every_atp_variant_runs_and_is_deterministic() {
    for v in [
        "atp-base",
        "atp-rc",
        "atp-mrdf",
        "atp-fixtlr",
        "atp-fixprio",
        "atp-full",
    ] {
        let set = format!("jobs.0.scheme=\"{v}\"");
        let a = run(PAIR, &[&set]);
        let b = run(PAIR, &[&set]);
        assert_eq!(summary(&a), summary(&b), "{v}");
        assert!(a.sim.jobs.iter().all(|j| j.done.is_some()), "{v}");
    }
}

#[test]
fn atp_and_dctcp_jobs_share_one_network() {
    let text = format!(
        "{PAIR}\n[[jobs]]\npattern = \"pairs\"\npairs = [[1, 14]]\nsizes = \"fixed:30000\"\nload = 0.2\nscheme = \"dctcp\"\n"
    );
    let b = run(&text, &[]);
    let classes: std::collections::BTreeSet<u32> = b
        .sim
        .jobs
        .iter()
        .filter(|j| j.done.is_some())
        .map(|j| j.class)
        .collect();
    assert_eq!(classes.len(), 2);
}

#[test]
fn host_nic_backlog_stays_under_the_adapter_limit() {
    let b = run(PAIR, &["atp.nic_buffer_kb=6.0", "jobs.0.load=0.9"]);
    let net = &b.sim.net;
    for h in 0..net.host_count() as u32 {
        let nic = &net.ports[net.nic(h) as usize];
        let max = nic
            .queues
            .iter()
            .map(|q| q.stats.max_bytes)
            .max()
            .unwrap_or(0);
        assert!(max <= 6_000, "host {h} NIC held {max} bytes");
    }
    assert!(b.sim.jobs.iter().all(|j| j.done.is_some()));
}

#[test]
fn a_host_blocked_on_a_full_nic_resumes_when_it_drains() {
    // A NIC of two datagrams: the adapter stops pulling after each pair and
    // must be woken when the NIC drains, not at the endpoint's next timer.
    let tiny = run(PAIR, &["atp.nic_buffer_kb=3.0", "jobs.0.messages=200"]);
    let roomy = run(PAIR, &["jobs.0.messages=200"]);
    assert!(tiny.sim.jobs.iter().all(|j| j.done.is_some()));
    let mean = |b: &approxnet_sim::scenario::Built| {
        let d: Vec<f64> = b
            .sim
            .jobs
            .iter()
            .filter_map(|j| j.done.map(|t| (t - j.start).as_secs_f64()))
            .collect();
        d.iter().sum::<f64>() / d.len() as f64
    };
    // woken when the NIC drains, the tiny NIC costs (almost) nothing; a
    // host left to wait for its endpoint's next timer was 10 % slower here
    let (t, r) = (mean(&tiny), mean(&roomy));
    assert!(t < 1.05 * r, "mean JCT {t} s with a 3 KB NIC vs {r} s");
}

const FOLLOW: &str = r#"
duration_ms = 1.0
seed = 3
[topology]
kind = "dumbbell"
senders = 2
receivers = 1
host_gbps = 40.0
[switch]
buffer_preset = "netapprox"
[[jobs]]
name = "fg"
pattern = "bulk"
senders = [0]
target = 2
sizes = "fixed:1400"
messages = 3000
load = 0.0
msr = 0.5
scheme = "atp-full"
[[jobs]]
name = "bg"
pattern = "pairs"
pairs = [[1, 2]]
sizes = "fixed:20000"
load = 0.5
scheme = "udp"
queue = 7
start_ms = 0.05
follow = "fg"
follow_up_at_ms = [0.5]
"#;

#[test]
fn background_starts_in_the_atp_jobs_queue_and_moves_up() {
    let b = run(FOLLOW, &[]);
    let s = b.sim.queue_shifts();
    assert_eq!(s.len(), 2, "{s:?}");
    // first background job: the queue the foreground's DATA used (not its own 7)
    assert_eq!(s[0].queue, s[0].leader_queue);
    assert!((1..=4).contains(&s[0].queue), "{s:?}");
    assert_eq!(s[1].t_ns, 500_000);
    assert_eq!(s[1].queue, s[0].queue - 1);
    // the background's packets went to those queues of the bottleneck port
    let net = &b.sim.net;
    let port = net
        .ports
        .iter()
        .find(|p| net.nodes[p.peer as usize].name == "h2")
        .expect("port towards the receiver");
    assert!(port.queues[7].stats.enqueued == 0);
    assert!(port.queues[s[1].queue as usize].stats.enqueued > 0);
}

#[test]
fn background_joins_the_queue_of_a_native_class() {
    let b = run(
        FOLLOW,
        &[
            "jobs.0.scheme=\"dctcp\"",
            "jobs.0.queue=2",
            "jobs.1.follow_up_at_ms=[]",
            "jobs.1.follow_at_ms=[0.3]",
        ],
    );
    let s = b.sim.queue_shifts();
    assert_eq!(s.len(), 2, "{s:?}");
    assert!(
        s.iter().all(|x| x.queue == 2 && x.leader_queue == 2),
        "{s:?}"
    );
}

/// Packets queued at any switch port in queues `qs` (host NICs have one queue).
fn enqueued(b: &approxnet_sim::scenario::Built, qs: std::ops::RangeInclusive<usize>) -> u64 {
    let net = &b.sim.net;
    net.ports
        .iter()
        .filter(|p| p.queues.len() > *qs.end())
        .flat_map(|p| p.queues[qs.clone()].iter())
        .map(|q| q.stats.enqueued)
        .sum()
}

#[test]
fn the_msr_bounded_queue_rule_keeps_loss_free_jobs_in_their_msr_queue() {
    // MSR 0.5 (TLR_0 0.5: queue 4) jobs whose messages are produced over
    // ~400 us, on an idle network: nothing is lost, so eq. 1's TLR climbs
    // toward 1 as the jobs deliver.
    let base = ["jobs.0.gaps=\"fbkv\"", "duration_ms=3.0"];
    let eq1 = run(PAIR, &[base[0], base[1], "atp.queue_rule=\"eq1\""]);
    let bounded = run(PAIR, &[base[0], base[1], "atp.queue_rule=\"msr-bounded\""]);
    let default = run(PAIR, &base);
    for b in [&eq1, &bounded, &default] {
        assert!(b.sim.jobs.iter().all(|j| j.done.is_some()));
        assert!(enqueued(b, 4..=4) > 0);
    }
    // eq. 1 as written sinks them into the lossier queues 5-7 ...
    assert!(enqueued(&eq1, 5..=7) > 0);
    // ... the default rule never lets them below queue 4.
    assert_eq!(enqueued(&bounded, 5..=7), 0);
    assert_eq!(summary(&default), summary(&bounded));
}

/// The receivers' totals (`atp_delivered.csv`): jobs, must, delivered,
/// extra datagrams sent, extra datagrams dropped at their host.
fn delivered_totals(b: &approxnet_sim::scenario::Built, tag: &str) -> Vec<u64> {
    let dir = std::env::temp_dir().join(format!("approxnet-sendmore-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    b.sim
        .adapter()
        .expect("an ATP adapter")
        .write_outputs(&dir)
        .unwrap();
    let text = std::fs::read_to_string(dir.join("atp_delivered.csv")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let line = text.lines().nth(1).expect("one row");
    line.split(',').map(|x| x.parse().unwrap()).collect()
}

#[test]
fn send_more_delivers_the_rest_of_satisfied_jobs_as_extra_data() {
    // MSR 0.5 jobs whose 20 messages are produced over ~400 us: each is
    // satisfied halfway; with send more more of the rest reaches the receiver.
    let base = ["jobs.0.gaps=\"fbkv\"", "duration_ms=3.0"];
    let off = run(PAIR, &base);
    let on = run(PAIR, &[base[0], base[1], "atp.send_more=true"]);
    for b in [&off, &on] {
        assert!(b.sim.jobs.iter().all(|j| j.done.is_some()));
    }
    let (t_off, t_on) = (delivered_totals(&off, "off"), delivered_totals(&on, "on"));
    assert_eq!(t_off[0], t_on[0], "every job reported by its receiver");
    assert_eq!(t_off[1], t_on[1]);
    assert_eq!(t_off[3], 0);
    assert!(t_on[3] > 0, "extra data was sent: {t_on:?}");
    // a good part of what was left over arrives (these connections always
    // have open jobs: at most two extra packets are in flight, each job's
    // extra data has one RTO; 34 % here)
    let left = 20 * t_on[0] - t_off[2];
    assert!(t_on[2] - t_off[2] > left / 4, "{t_off:?} -> {t_on:?}");
}

#[test]
fn endpoints_of_several_variants_on_one_host_all_run() {
    // three variants between the same hosts: each host holds three
    // endpoints behind one host timer and one endpoint mask (the adapter
    // walks its set bits); every job ends, and as before the walk
    let text = format!(
        "{PAIR}\n[[jobs]]\npattern = \"pairs\"\npairs = [[0, 15], [9, 3]]\nsizes = \"fbkv\"\nmessages = 20\nload = 0.1\nmsr = 0.5\nstop_ms = 1.0\nscheme = \"atp-fixprio\"\n[[jobs]]\npattern = \"pairs\"\npairs = [[15, 0], [3, 9]]\nsizes = \"fbkv\"\nmessages = 20\nload = 0.1\nmsr = 0.5\nstop_ms = 1.0\nscheme = \"atp-fixtlr\"\n"
    );
    let a = run(&text, &[]);
    let b = run(&text, &[]);
    assert_eq!(summary(&a), summary(&b));
    let classes: std::collections::BTreeSet<u32> = a.sim.jobs.iter().map(|j| j.class).collect();
    assert_eq!(classes.len(), 3);
    for j in &a.sim.jobs {
        assert!(
            j.done.is_some(),
            "job {} of class {} not done",
            j.id,
            j.class
        );
    }
    // what the adapter gave before its mask walk was rewritten (issue 19):
    // the completion times summed and the packet-hops, pinned
    let done_ns: u64 = a
        .sim
        .jobs
        .iter()
        .filter_map(|j| j.done)
        .map(|t| t.as_nanos())
        .sum();
    assert_eq!((done_ns, a.sim.counters.hops), (402_816_224, 84_708));
}
