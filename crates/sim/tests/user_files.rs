//! A user's own inputs (issue 18): a size CDF file, a production-gap CDF
//! file and a topology from an edge-list file, each read, used and, when
//! wrong, refused with the key and the line named.

mod common;
use approxnet_sim::scenario;
use common::run;
use std::path::PathBuf;

/// A file under the target directory, unique per test.
fn file(name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("user_files");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn scenario(topo: &str, sizes: &str, gaps: &str) -> String {
    format!(
        r#"
duration_ms = 2.0
[topology]
{topo}
host_gbps = 10.0
[[jobs]]
pattern = "pairs"
pairs = [[0, 3], [1, 2]]
sizes = "{sizes}"
gaps = "{gaps}"
messages = 20
load = 0.0
scheme = "dctcp"
start_ms = 0.1
"#
    )
}

fn build_err(text: &str) -> String {
    let f = scenario::parse(text, &[]).expect("parses");
    match scenario::build(&f) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted: {text}"),
    }
}

#[test]
fn a_size_cdf_a_gap_cdf_and_an_edge_list_run_end_to_end() {
    // every message 2,000 or 3,000 bytes (a step between two sizes is a
    // linear ramp: sizes in [2000, 3000]); every gap 40-60 us
    let sizes = file("sizes.cdf", "# bytes  P\n2000 0\n3000 1\n");
    let gaps = file("gaps.cdf", "40 0\n60 1\n");
    let topo = file(
        "two_racks.txt",
        "host a t0\nhost b t0\nhost c t1\nhost d t1 25\nlink t0 s0\nlink t1 s0 40 2\n",
    );
    let text = scenario(
        &format!("kind = \"edges\"\nfile = \"{topo}\""),
        &format!("cdf:{sizes}"),
        &format!("cdf:{gaps}"),
    );
    let b = run(&text, &[]);
    assert_eq!(b.sim.jobs.len(), 2);
    for j in &b.sim.jobs {
        assert!(j.done.is_some(), "job {} finished", j.id);
        assert!(
            j.msgs.iter().all(|&m| (2000..=3000).contains(&m)),
            "{:?}",
            j.msgs
        );
        let gaps: Vec<u64> = j.ready_ns.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps.len(), 19);
        assert!(
            gaps.iter().all(|&g| (40_000..=60_000).contains(&g)),
            "{gaps:?}"
        );
    }
    // hosts a and b share rack t0: a -> d crosses the spine, b -> c too
    assert_eq!(b.sim.net.nodes.iter().filter(|n| n.name == "s0").count(), 1);
}

#[test]
fn wrong_user_files_name_the_key_and_the_line() {
    let sizes = file("bad_sizes.cdf", "100 0.5\n50 1\n");
    let short = file("short_sizes.cdf", "100 0.2\n200 0.7\n");
    let topo = file("bad_topo.txt", "host a t0\nhost b t0\nlink t0 t0\n");
    let dumbbell = "kind = \"dumbbell\"\nsenders = 2\nreceivers = 2";
    for (text, needles) in [
        (
            scenario(dumbbell, &format!("cdf:{sizes}"), "none"),
            vec!["jobs.0.sizes", "line 2", "non-decreasing"],
        ),
        (
            scenario(dumbbell, &format!("cdf:{short}"), "none"),
            vec!["jobs.0.sizes", "must end at 1"],
        ),
        (
            scenario(dumbbell, "cdf:/no/such/file", "none"),
            vec!["jobs.0.sizes", "cannot read /no/such/file"],
        ),
        (
            scenario(dumbbell, "fixed:100", "cdf:/no/such/gaps"),
            vec!["jobs.0.gaps", "cannot read /no/such/gaps"],
        ),
        (
            scenario(
                &format!("kind = \"edges\"\nfile = \"{topo}\""),
                "fixed:100",
                "none",
            ),
            vec!["topology.file", "line 3", "to itself"],
        ),
        (
            scenario("kind = \"edges\"", "fixed:100", "none"),
            vec!["topology.file", "missing"],
        ),
    ] {
        let e = build_err(&text);
        for n in needles {
            assert!(e.contains(n), "{n:?} not in {e}");
        }
    }
}
