//! Job planning: a `JobSpec` validated and turned into groups, messages
//! and the JOB header that announces them.

use super::{SendGroup, SendJob, SendMsg, SendSide, APPROX_CRC_LEN};
use crate::config::Config;
use crate::job::{JobError, JobSpec, MessageSpec, Payload};
use crate::policy::{GroupProgress, Policies};
use crate::tensor::{chunk_range, chunks_needed, elems_per_chunk};
use crate::time::Instant;
use crate::wire::{GroupDesc, JobRepr, TensorDesc, MAX_GROUPS};

impl SendSide {
    /// Validates and plans a job; returns its id.
    pub(crate) fn add_job(
        &mut self,
        now: Instant,
        spec: JobSpec,
        cfg: &Config,
        pol: &Policies,
    ) -> Result<u32, JobError> {
        if self.jobs.iter().filter(|j| !j.done).count() >= cfg.limits.max_jobs_per_connection {
            return Err(JobError::TooManyJobs(cfg.limits.max_jobs_per_connection));
        }
        let per_packet = cfg.max_payload() - APPROX_CRC_LEN;
        let (groups_spec, mut messages, tensor) = (spec.groups, spec.messages, spec.tensor);
        let mut tensor_desc = None;
        let mut tensor_need = None;
        if let Some(t) = &tensor {
            t.validate()?;
            let per = elems_per_chunk(t.dtype, per_packet);
            let total = t.elems() as u32;
            let chunks = total.div_ceil(per);
            if chunks > cfg.limits.max_messages_per_job {
                return Err(JobError::TooManyMessages {
                    max: cfg.limits.max_messages_per_job as u64,
                    got: chunks as u64,
                });
            }
            let s = t.dtype.size();
            let layout = crate::tensor::plane_layout(t.dtype, t.protect_bits);
            messages = (0..chunks)
                .map(|i| {
                    let (a, b) = chunk_range(total, per, i);
                    let elems = &t.data[a as usize * s..b as usize * s];
                    // seed 004 §4.1: the protected bits of every element
                    // first, as the chunk's precise prefix
                    let (payload, precise_len) = match &layout {
                        Some(l) => {
                            let mut planes = vec![0u8; elems.len()];
                            let n = l
                                .to_planes(elems, &mut planes)
                                .map_err(|_| JobError::BadTensor("chunk not whole elements"))?;
                            (planes, n)
                        }
                        None => (elems.to_vec(), 0),
                    };
                    Ok(crate::job::MessageSpec {
                        group: 0,
                        payload: Payload::Bytes(payload),
                        precise_len,
                    })
                })
                .collect::<Result<_, JobError>>()?;
            tensor_desc = Some(TensorDesc {
                dtype: t.dtype,
                total_elems: total,
                elems_per_chunk: per,
                protect_bits: t.protect_bits,
            });
            tensor_need = Some(chunks_needed(total, per, t.deliver_fraction));
        }
        if tensor.is_some() && groups_spec.iter().any(|g| g.announced.is_some()) {
            return Err(JobError::TensorStreaming);
        }
        if groups_spec.len() > MAX_GROUPS {
            return Err(JobError::TooManyGroups {
                max: MAX_GROUPS,
                got: groups_spec.len(),
            });
        }
        for (i, g) in groups_spec.iter().enumerate() {
            if groups_spec[..i].iter().any(|o| o.id == g.id) {
                return Err(JobError::DuplicateGroup(g.id));
            }
        }
        let mut counts = vec![0u32; groups_spec.len()];
        let mut gidx = Vec::with_capacity(messages.len());
        for (i, m) in messages.iter().enumerate() {
            let gi = check_message(i, m, per_packet, |id| {
                groups_spec.iter().position(|g| g.id == id)
            })?;
            let g = &groups_spec[gi];
            if g.announced.is_some_and(|n| counts[gi] >= n) {
                return Err(JobError::GroupFull {
                    group: g.id,
                    announced: g.announced.unwrap_or(0),
                    msg: i,
                });
            }
            gidx.push(gi as u16);
            counts[gi] += 1;
        }
        // A group's N: announced up front (a streaming job), else the
        // messages given now.
        let totals: Vec<u32> = groups_spec
            .iter()
            .zip(&counts)
            .map(|(g, &c)| g.announced.unwrap_or(c))
            .collect();
        let total: u64 = totals.iter().map(|&n| n as u64).sum();
        if total == 0 {
            return Err(JobError::Empty);
        }
        if total > cfg.limits.max_messages_per_job as u64 {
            return Err(JobError::TooManyMessages {
                max: cfg.limits.max_messages_per_job as u64,
                got: total,
            });
        }
        let id = self.next_job_id;
        self.next_job_id = self.next_job_id.wrapping_add(1);
        let mut groups = Vec::new();
        let mut descs = Vec::new();
        // Groups without messages are not announced; keep indices dense.
        let mut remap = vec![u16::MAX; groups_spec.len()];
        for (i, g) in groups_spec.iter().enumerate() {
            if totals[i] == 0 {
                continue;
            }
            let must = tensor_need.unwrap_or_else(|| g.msr.must_deliver(totals[i]));
            remap[i] = groups.len() as u16;
            let prog = GroupProgress {
                msr: g.msr.get(),
                messages: totals[i],
                delivered: 0,
                lost: 0,
            };
            let tlr0 = pol.tlr.tlr(&prog);
            let reliable = must == totals[i];
            let mut group = SendGroup {
                id: g.id,
                msr: g.msr.get(),
                messages: totals[i],
                produced: counts[i],
                fresh: counts[i],
                must,
                delivered: 0,
                abandoned: 0,
                tlr0,
                tlr: tlr0,
                queue: pol.queue.queue(reliable, tlr0, tlr0, cfg.queues),
                derived_from: super::TlrInputs::default(),
            };
            // `tlr` and `queue` are what `end_epoch` derives from these
            // counts (eq. 1 with nothing delivered or lost is `tlr0`).
            group.derived_from = group.tlr_inputs(cfg.queues);
            groups.push(group);
            descs.push(GroupDesc {
                id: g.id,
                messages: totals[i],
                must_deliver: must,
            });
        }
        let mut per_group_next = vec![0u32; groups.len()];
        let mut msgs = Vec::with_capacity(messages.len());
        let mut bytes = 0u64;
        for (i, m) in messages.into_iter().enumerate() {
            let g = remap[gidx[i] as usize];
            let msg_id = per_group_next[g as usize];
            per_group_next[g as usize] += 1;
            bytes += m.payload.len() as u64;
            let elem_range =
                tensor_desc.map(|t| chunk_range(t.total_elems, t.elems_per_chunk, i as u32));
            msgs.push(SendMsg::new(
                g,
                msg_id,
                m,
                per_packet,
                cfg.packet_split,
                elem_range,
            ));
        }
        let unresolved = total as u32;
        let mut job = SendJob {
            id,
            groups,
            max_pkts: msgs.iter().map(|m| m.pkt_count).max().unwrap_or(0),
            msgs,
            repr: JobRepr {
                tensor: tensor_desc,
                groups: descs,
            },
            started: now,
            last_tx: now,
            peer_satisfied: false,
            unsent_bytes: 0,
            job_acked: false,
            ended: false,
            control_sent: None,
            done: false,
            extra: false,
            fin_deferred: false,
            extra_until: now,
            fin_acked: false,
            unresolved,
            packets: 0,
            retx: 0,
            lost: 0,
            lost_by_timer: 0,
            spurious: 0,
            probes: 0,
            bytes,
            per_packet,
        };
        // Messages of groups that must deliver nothing are still sent once
        // (best effort); they can all be abandoned.
        Self::schedule_all(&mut self.sched, &mut job, pol);
        self.jobs.push(job);
        Ok(id)
    }
}

/// Checks message `i` of a job: its group exists (`group_index` maps a
/// group id to its index), its precise prefix fits, and it needs at most
/// 65,535 packets. Returns the group's index.
pub(super) fn check_message(
    i: usize,
    m: &MessageSpec,
    per_packet: usize,
    group_index: impl Fn(u16) -> Option<usize>,
) -> Result<usize, JobError> {
    let gi = group_index(m.group).ok_or(JobError::UnknownGroup {
        msg: i,
        group: m.group,
    })?;
    let len = m.payload.len();
    if m.precise_len > len {
        return Err(JobError::PreciseTooLong {
            msg: i,
            precise: m.precise_len,
            len,
        });
    }
    if len.div_ceil(per_packet).max(1) > u16::MAX as usize {
        return Err(JobError::MessageTooLarge { msg: i, len });
    }
    Ok(gi)
}
