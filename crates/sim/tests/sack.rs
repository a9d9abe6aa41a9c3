//! SACK (RFC 2018 / 6675) and PRR (RFC 6937) in the simulator's TCP and
//! DCTCP: an incast that SACK recovers without a timeout where NewReno
//! needs the timer, and the `[transport] sack` / `prr` switches.
//! Compared with ns-3 3.44 in docs/validation.md ("Incast rounds").

mod common;
use common::{run, small_incast};

/// (timeouts, drops, retransmissions, every flow done, last completion ns)
fn outcome(b: &approxnet_sim::scenario::Built) -> (u64, u64, u64, bool, u64) {
    let f = &b.sim.flows;
    (
        f.iter().map(|f| f.stats().timeouts).sum(),
        f.iter().map(|f| f.drops).sum(),
        f.iter().map(|f| f.stats().retx_pkts).sum(),
        f.iter().all(|f| f.done.is_some()),
        f.iter()
            .filter_map(|f| f.done.map(|d| (d - f.start).as_nanos()))
            .max()
            .unwrap_or(0),
    )
}

#[test]
fn sack_recovers_the_incast_without_a_timeout_where_newreno_needs_one() {
    for scheme in ["tcp", "dctcp"] {
        let sack = outcome(&run(&small_incast(scheme), &[]));
        let reno = outcome(&run(&small_incast(scheme), &["transport.sack=false"]));
        assert!(sack.1 > 0 && reno.1 > 0, "{scheme}: losses happen");
        assert!(sack.3 && reno.3, "{scheme}: every flow finishes");
        assert_eq!(sack.0, 0, "{scheme} with SACK: {sack:?}");
        assert!(reno.0 >= 1, "{scheme} without SACK: {reno:?}");
        // a timeout costs at least the 5 ms minimum RTO
        assert!(
            sack.4 < 2_000_000 && reno.4 > 5_000_000,
            "{sack:?} {reno:?}"
        );
        // SACK resends only what was lost
        assert_eq!(sack.2, sack.1, "{scheme}: {sack:?}");
    }
}

/// PRR applies only with SACK: with SACK off, `prr` changes nothing.
/// With SACK on, the run differs from the NewReno one.
#[test]
fn the_switches_work() {
    let s = |sets: &[&str]| outcome(&run(&small_incast("tcp"), sets));
    let off = s(&["transport.sack=false"]);
    assert_eq!(off, s(&["transport.sack=false", "transport.prr=false"]));
    assert_ne!(off, s(&[]));
    let classic = s(&["transport.prr=false"]);
    assert!(classic.3, "{classic:?}");
}

#[test]
fn a_bad_value_names_the_key() {
    let sets = vec!["transport.sack=3".to_string()];
    let e = match approxnet_sim::scenario::parse(&small_incast("tcp"), &sets) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("transport.sack=3 accepted"),
    };
    assert!(e.contains("sack"), "{e}");
}
