//! `[switch]`: queue layout, buffers, ECN and scheduler of switch ports.

use super::schema::SwitchFile;
use super::{invalid, ScenarioError};
use crate::fabric::buffer::SharingConfig;
use crate::fabric::port::PortConfig;
use crate::fabric::queue::{Discipline, EcnThreshold, QueueConfig};
use crate::fabric::sched::{Drr, Scheduler};
use approxnet_proto::policy::netapprox_queue_limits;

/// Seed 000 section 7.1: "eight priority queues".
pub(super) const DEFAULT_QUEUES: u32 = 8;
/// Seed 000 section 7.1: "a total buffer space of 1.5 MB".
pub(super) const DEFAULT_BUFFER_KB: f64 = 1500.0;
/// Seed 000 section 7.1: ECN "marking threshold of 65" packets.
const DEFAULT_ECN_K_PKTS: u32 = 65;
/// Dynamic-threshold factor of the `shared` preset: alpha = 8, SONiC's
/// default for lossy egress queues on Broadcom switches
/// (`egress_lossy_profile`, `dynamic_th` = 3 meaning alpha = 2^3;
/// sonic-net/sonic-swss `doc/Configuration.md`).
const DEFAULT_DT_ALPHA: f64 = 8.0;
/// Reservation per queue of the `shared` preset, in MTUs: one packet, as
/// the same SONiC profile's `size` = 1518 bytes (one Ethernet frame).
const DEFAULT_RESERVED_MTUS: u64 = 1;
/// Aeolus's selective-dropping threshold, in MTUs: unscheduled packets
/// are dropped once a queue holds this much. Our choice (Aeolus only says
/// the threshold is small); `switch.aeolus_drop_kb` sets it.
const DEFAULT_AEOLUS_DROP_MTUS: u64 = 8;

/// What the `[switch]` section configures.
pub(super) struct SwitchConfig {
    /// Every switch port's queues and scheduler.
    pub(super) port: PortConfig,
    /// How the queues share a switch's buffer.
    pub(super) sharing: SharingConfig,
}

pub(super) fn switch_config(
    s: &SwitchFile,
    any_pfabric: bool,
    any_aeolus: bool,
    mtu: u32,
    bdp: u64,
) -> Result<SwitchConfig, ScenarioError> {
    let n = s.queues.unwrap_or(DEFAULT_QUEUES);
    if !(1..=64).contains(&n) {
        return Err(invalid("switch.queues", format!("{n}"), "1 ..= 64"));
    }
    let n = n as usize;
    let total = (s.buffer_kb.unwrap_or(DEFAULT_BUFFER_KB) * 1000.0) as u64;
    let discipline = match s.discipline.as_deref().unwrap_or("auto") {
        "auto" if any_pfabric => Discipline::PFabric,
        "auto" | "fifo" => Discipline::Fifo,
        "pfabric" => Discipline::PFabric,
        o => {
            return Err(invalid(
                "switch.discipline",
                format!("unknown {o:?}"),
                "auto, fifo, pfabric",
            ))
        }
    };
    let preset = s
        .buffer_preset
        .as_deref()
        .unwrap_or(if discipline == Discipline::PFabric {
            "pfabric"
        } else {
            "shared"
        });
    let mut limits: Vec<u64> = match preset {
        "shared" | "complete" => vec![total; n],
        // seed 000 section 5.2: the lowest queue 1 MTU, +1 MTU per higher
        // queue up to queue 1; queue 0 (non-approximate) gets the rest
        "netapprox" => netapprox_queue_limits(n as u8, u64::from(mtu), total).map_err(|e| {
            invalid(
                "switch.buffer_kb",
                e,
                "room for queue 0 beside the approximate queues",
            )
        })?,
        // pFabric: tiny per-port buffers, about 2 BDP (pFabric section 5: 36 KB at 10 Gbps)
        "pfabric" => {
            let b = s
                .pfabric_queue_kb
                .map_or(2 * bdp, |kb| (kb * 1000.0) as u64);
            vec![b.max(mtu as u64); n]
        }
        o => {
            return Err(invalid(
                "switch.buffer_preset",
                format!("unknown {o:?}"),
                "shared, complete, netapprox, pfabric",
            ))
        }
    };
    let sharing = sharing(s, preset, mtu)?;
    if let Some(q) = &s.queue_buffer_kb {
        if q.len() != n {
            return Err(invalid(
                "switch.queue_buffer_kb",
                format!("{} entries for {n} queues", q.len()),
                "one entry per queue",
            ));
        }
        limits = q.iter().map(|kb| (kb * 1000.0) as u64).collect();
    }
    let ecn = match (s.ecn_k_pkts, s.ecn_k_kb) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "switch.ecn_k_pkts",
                "both ecn_k_pkts and ecn_k_kb given",
                "one of them",
            ))
        }
        (Some(0), None) => None,
        (Some(k), None) => Some(EcnThreshold::Packets(k)),
        (None, Some(kb)) => Some(EcnThreshold::Bytes((kb * 1000.0) as u64)),
        (None, None) if discipline == Discipline::PFabric => None,
        (None, None) => Some(EcnThreshold::Packets(DEFAULT_ECN_K_PKTS)),
    };
    let marking: Vec<bool> = match &s.ecn_queues {
        Some(list) => {
            if let Some(bad) = list.iter().find(|&&q| q as usize >= n) {
                return Err(invalid(
                    "switch.ecn_queues",
                    format!("queue {bad}"),
                    format!("0 ..= {}", n - 1),
                ));
            }
            (0..n).map(|q| list.contains(&(q as u32))).collect()
        }
        // seed 000 section 7.1: only the non-approximate queue marks
        None if preset == "netapprox" => (0..n).map(|q| q == 0).collect(),
        None => vec![true; n],
    };
    let scheduler = match s.scheduler.as_deref().unwrap_or("strict") {
        "strict" => Scheduler::Strict,
        "drr" => {
            let w = s.weights.clone().unwrap_or_else(|| vec![1.0; n]);
            if w.len() != n || w.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
                return Err(invalid(
                    "switch.weights",
                    format!("{w:?}"),
                    format!("{n} positive numbers"),
                ));
            }
            Scheduler::Drr(Box::new(Drr::new(&w, mtu as u64)))
        }
        o => {
            return Err(invalid(
                "switch.scheduler",
                format!("unknown {o:?}"),
                "strict, drr",
            ))
        }
    };
    let droppable_limit_bytes = match s.aeolus_drop_kb {
        Some(kb) if kb >= 0.0 && kb.is_finite() => (kb * 1000.0) as u64,
        Some(kb) => return Err(invalid("switch.aeolus_drop_kb", format!("{kb}"), ">= 0")),
        None if any_aeolus => DEFAULT_AEOLUS_DROP_MTUS * mtu as u64,
        None => u64::MAX,
    };
    let port = PortConfig {
        queues: (0..n)
            .map(|q| QueueConfig {
                limit_bytes: limits[q],
                ecn: if marking[q] { ecn } else { None },
                discipline,
                droppable_limit_bytes,
            })
            .collect(),
        scheduler,
    };
    Ok(SwitchConfig { port, sharing })
}

/// The shared-buffer rules: the `shared` preset uses a dynamic threshold
/// and a one-packet reservation per queue; the others (static per-queue
/// limits, or `complete` sharing) neither, unless the keys ask for them.
fn sharing(s: &SwitchFile, preset: &str, mtu: u32) -> Result<SharingConfig, ScenarioError> {
    let shared = preset == "shared";
    let alpha = match s.dt_alpha {
        Some(a) if a.is_finite() && a > 0.0 => Some(a),
        Some(a) => return Err(invalid("switch.dt_alpha", format!("{a}"), "> 0")),
        None if shared => Some(DEFAULT_DT_ALPHA),
        None => None,
    };
    let reserved_bytes = match s.queue_reserved_kb {
        Some(kb) if kb.is_finite() && kb >= 0.0 => (kb * 1000.0) as u64,
        Some(kb) => return Err(invalid("switch.queue_reserved_kb", format!("{kb}"), ">= 0")),
        None if shared => DEFAULT_RESERVED_MTUS * mtu as u64,
        None => 0,
    };
    Ok(SharingConfig {
        alpha,
        reserved_bytes,
    })
}
