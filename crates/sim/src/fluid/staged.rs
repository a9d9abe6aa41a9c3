//! Staged jobs: phases of compute and communication, repeated (seed 003
//! §8.1: Spark / Flink-like compute and shuffle stages; seed 004 §5.2:
//! CG, FFT, K-means, matrix multiply over MPI collectives).
//!
//! A communication phase is a list of steps; a step is a set of flows that
//! start together, and the next step starts when every flow of this one
//! has arrived (the collective's data dependency). A phase, compute or
//! communication, starts when the previous one has ended on every host (a
//! barrier, as bulk-synchronous jobs do).

/// One collective or explicit set of transfers between the job's ranks.
#[derive(Clone, Debug, PartialEq)]
pub enum Collective {
    /// Every rank sends `bytes` to every other rank, in one step.
    AllToAll {
        /// Bytes per destination.
        bytes: f64,
    },
    /// Ring all-reduce: `2 (n - 1)` steps, in each rank `i` sends
    /// `bytes / n` to rank `i + 1 mod n` (reduce-scatter then all-gather).
    AllReduceRing {
        /// Bytes of the reduced vector.
        bytes: f64,
    },
    /// Recursive-doubling all-reduce within consecutive groups of `group`
    /// ranks (a power of two dividing `n`; `group = n` is the whole job,
    /// `group = side` the rows of a row-major `side x side` grid):
    /// `log2 group` steps; in step `k` rank `i` sends the whole vector to
    /// rank `i xor 2^k`.
    AllReduceRd {
        /// Bytes of the reduced vector.
        bytes: f64,
        /// Ranks per group.
        group: u32,
    },
    /// Pairwise-exchange all-to-all (MPICH / MVAPICH's algorithm for large
    /// messages, the transpose of seed 004's FFT): `n - 1` steps; in step
    /// `k` rank `i` sends `bytes` to rank `i + k mod n`.
    AllToAllPairwise {
        /// Bytes per destination.
        bytes: f64,
    },
    /// Transpose of a row-major `side x side` grid of the ranks: rank
    /// `(r, c)` sends `bytes` to `(c, r)`, in one step (the diagonal keeps
    /// its data).
    Transpose {
        /// Grid side; `side^2` is the rank count.
        side: u32,
        /// Bytes per rank.
        bytes: f64,
    },
    /// SUMMA's panel broadcast on a row-major `side x side` grid (`side` a
    /// power of two): from column `root` along every row and from row
    /// `root` along every column, together, each binomially: `log2 side`
    /// steps; in step `s` the ranks at positions `root + r` (`r < 2^s`,
    /// mod `side`) of their row (column) send to position `root + r + 2^s`.
    PanelBcast {
        /// Grid side.
        side: u32,
        /// The broadcasting column (and row).
        root: u32,
        /// Bytes per message.
        bytes: f64,
    },
    /// Rank `root` sends `bytes` to every other rank, in one step (a flat
    /// scatter).
    Scatter {
        /// The sending rank.
        root: u32,
        /// Bytes per destination.
        bytes: f64,
    },
    /// Halo exchange on a periodic grid of the ranks (rank = first
    /// coordinate fastest): each rank sends `bytes` to each neighbour, in
    /// one step.
    Halo {
        /// Grid sizes; their product is the rank count.
        grid: Vec<u32>,
        /// Bytes per neighbour.
        bytes: f64,
    },
    /// Explicit `(src rank, dst rank)` transfers, in one step.
    Flows {
        /// The pairs.
        pairs: Vec<(u32, u32)>,
        /// Bytes per pair.
        bytes: f64,
    },
}

/// `(src rank, dst rank, bytes)` transfers of one step.
pub type Step = Vec<(u32, u32, f64)>;

impl Collective {
    /// The steps among `n` ranks, in order.
    pub fn steps(&self, n: u32) -> Vec<Step> {
        match self {
            Collective::AllToAll { bytes } => {
                let mut s = Vec::new();
                for i in 0..n {
                    for j in 0..n {
                        if i != j {
                            s.push((i, j, *bytes));
                        }
                    }
                }
                vec![s]
            }
            Collective::AllReduceRing { bytes } => {
                if n < 2 {
                    return Vec::new();
                }
                let chunk = bytes / n as f64;
                (0..2 * (n - 1))
                    .map(|_| (0..n).map(|i| (i, (i + 1) % n, chunk)).collect())
                    .collect()
            }
            Collective::AllReduceRd { bytes, group } => {
                let mut steps = Vec::new();
                let mut d = 1;
                while d < (*group).min(n) {
                    steps.push((0..n).map(|i| (i, i ^ d, *bytes)).collect());
                    d <<= 1;
                }
                steps
            }
            Collective::AllToAllPairwise { bytes } => (1..n)
                .map(|k| (0..n).map(|i| (i, (i + k) % n, *bytes)).collect())
                .collect(),
            Collective::Transpose { side, bytes } => {
                let side = *side;
                vec![(0..side)
                    .flat_map(|r| (0..side).map(move |c| (r, c)))
                    .filter(|&(r, c)| r != c)
                    .map(|(r, c)| (r * side + c, c * side + r, *bytes))
                    .collect()]
            }
            Collective::PanelBcast { side, root, bytes } => {
                let (n, k) = (*side, *root);
                let mut steps = Vec::new();
                let mut d = 1;
                while d < n {
                    let pos = |line: u32, rel: u32| ((k + rel) % n, (k + rel + d) % n, line);
                    let rows = (0..n).flat_map(|l| (0..d).map(move |r| pos(l, r)));
                    let cols = (0..n).flat_map(|l| (0..d).map(move |r| pos(l, r)));
                    steps.push(
                        rows.map(|(a, b, l)| (l * n + a, l * n + b, *bytes))
                            .chain(cols.map(|(a, b, l)| (a * n + l, b * n + l, *bytes)))
                            .collect(),
                    );
                    d <<= 1;
                }
                steps
            }
            Collective::Scatter { root, bytes } => {
                vec![(0..n)
                    .filter(|&i| i != *root)
                    .map(|i| (*root, i, *bytes))
                    .collect()]
            }
            Collective::Halo { grid, bytes } => {
                let mut s = Vec::new();
                for i in 0..n {
                    let mut stride = 1;
                    for &k in grid {
                        let c = (i / stride) % k;
                        let mut nb = Vec::new();
                        if k >= 2 {
                            nb.push((c + 1) % k);
                        }
                        if k >= 3 {
                            nb.push((c + k - 1) % k);
                        }
                        for x in nb {
                            s.push((i, i - c * stride + x * stride, *bytes));
                        }
                        stride *= k;
                    }
                }
                vec![s]
            }
            Collective::Flows { pairs, bytes } => {
                vec![pairs.iter().map(|&(a, b)| (a, b, *bytes)).collect()]
            }
        }
    }
}

/// One phase.
#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    /// Every host computes for this long, ns.
    Compute {
        /// Duration, ns.
        ns: f64,
    },
    /// A collective among the job's hosts.
    Comm(Collective),
}

/// A staged job as the scenario gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct StagedJob {
    /// Name in the output.
    pub name: String,
    /// Host of each rank.
    pub hosts: Vec<u32>,
    /// Times the phase list runs.
    pub iterations: u32,
    /// Start, ns.
    pub start_ns: f64,
    /// Weight of its flows.
    pub weight: f64,
    /// Strict priority of its flows.
    pub priority: u8,
    /// Rate cap of each flow, bytes per ns.
    pub cap: f64,
    /// The phases.
    pub phases: Vec<Phase>,
}

/// Where a staged job is, and what it has measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StagedState {
    /// Iteration running.
    pub iteration: u32,
    /// Phase running.
    pub phase: usize,
    /// Steps of the running communication phase.
    pub steps: Vec<Step>,
    /// Step running.
    pub step: usize,
    /// Flows of the running step not yet arrived.
    pub outstanding: usize,
    /// When the running phase started, ns.
    pub phase_start: f64,
    /// Time spent in compute phases, ns.
    pub compute_ns: f64,
    /// Time spent in communication phases, ns.
    pub comm_ns: f64,
    /// End of each iteration, ns.
    pub iteration_end: Vec<f64>,
    /// When the last phase of the last iteration ended, ns.
    pub done: Option<f64>,
    /// Flows started.
    pub flows: u64,
}
