//! What an application sends: a job of messages in groups, each group with
//! its minimal sampling rate (MSR), optionally one tensor.

pub use crate::job_error::JobError;
use crate::tensor::TensorSpec;

/// A minimal sampling rate: the fraction of a group's messages that must
/// arrive whole, in `[0, 1]` (seed 000 §3.3.2).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Msr(f64);

impl Msr {
    /// Everything must arrive, in order.
    pub const RELIABLE: Msr = Msr(1.0);

    /// Validates `x`; NaN and values outside `[0, 1]` are errors, never clamped.
    pub fn new(x: f64) -> Result<Msr, JobError> {
        if x.is_nan() || !(0.0..=1.0).contains(&x) {
            return Err(JobError::BadMsr(x));
        }
        Ok(Msr(x))
    }
    /// The fraction.
    pub fn get(self) -> f64 {
        self.0
    }
    /// `ceil(MSR * n)`: messages of `n` that must be delivered.
    pub fn must_deliver(self, n: u32) -> u32 {
        let x = self.0 * n as f64;
        // guard against 0.1 * 10 = 1.0000000000000002 style rounding
        let c = (x - 1e-9).ceil().max(0.0) as u32;
        c.min(n)
    }
}

/// One group of a job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupSpec {
    /// Group id (unique within the job).
    pub id: u16,
    /// The group's MSR.
    pub msr: Msr,
    /// Messages the group will have in all, when the application hands
    /// them over as it produces them (seed 000 §3.3.2: "informs ApproxLib
    /// about the size of a job N before starting the job"); `None`: the
    /// messages given with the job are all of them.
    pub announced: Option<u32>,
}

/// The bytes of one message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    /// Real bytes.
    Bytes(Vec<u8>),
    /// `len` zero bytes that are never materialised at the sender (for
    /// simulations that only need sizes).
    Synthetic(usize),
}

impl Payload {
    /// Length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Payload::Bytes(b) => b.len(),
            Payload::Synthetic(n) => *n,
        }
    }
    /// Whether the payload is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One message of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageSpec {
    /// Group the message belongs to.
    pub group: u16,
    /// Its bytes.
    pub payload: Payload,
    /// Bytes at the start of the message that must arrive exactly (seed 002):
    /// every packet's checksum covers its share of this prefix.
    pub precise_len: usize,
}

/// A job: `N` messages in groups, each group with an MSR.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    /// The groups; group 0 carries the global MSR unless redefined.
    pub groups: Vec<GroupSpec>,
    /// The messages, in announcement order.
    pub messages: Vec<MessageSpec>,
    /// Set when the job is one tensor (see [`JobSpec::tensor`]).
    pub tensor: Option<TensorSpec>,
}

impl JobSpec {
    /// An empty job whose default group 0 has the global `msr`.
    pub fn new(msr: f64) -> Result<JobSpec, JobError> {
        Ok(JobSpec {
            groups: vec![GroupSpec {
                id: 0,
                msr: Msr::new(msr)?,
                announced: None,
            }],
            messages: Vec::new(),
            tensor: None,
        })
    }

    /// A job of synthetic messages of the given sizes, all in group 0. Their
    /// (zero) bytes are approximate: only the header is checksummed.
    pub fn uniform(msr: f64, sizes: &[usize]) -> Result<JobSpec, JobError> {
        let mut j = JobSpec::new(msr)?;
        j.messages = sizes
            .iter()
            .map(|&n| MessageSpec {
                group: 0,
                payload: Payload::Synthetic(n),
                precise_len: 0,
            })
            .collect();
        Ok(j)
    }

    /// Defines (or redefines) group `id` with its own MSR.
    pub fn group(mut self, id: u16, msr: f64) -> Result<JobSpec, JobError> {
        let msr = Msr::new(msr)?;
        match self.groups.iter_mut().find(|g| g.id == id) {
            Some(g) => g.msr = msr,
            None => self.groups.push(GroupSpec {
                id,
                msr,
                announced: None,
            }),
        }
        Ok(self)
    }

    /// Announces that group `id` (defined already) will have `n` messages
    /// in all: the job streams, and the messages not given here are handed
    /// over later with `Endpoint::push_messages` as they are produced. The
    /// job still completes once `ceil(MSR * n)` of every group arrived.
    pub fn announce(mut self, id: u16, n: u32) -> Result<JobSpec, JobError> {
        if n == 0 {
            return Err(JobError::Empty);
        }
        let g = self
            .groups
            .iter_mut()
            .find(|g| g.id == id)
            .ok_or(JobError::UnknownGroup { msg: 0, group: id })?;
        g.announced = Some(n);
        Ok(self)
    }

    /// A streaming job of `n` messages in group 0 with the global `msr`,
    /// none of them produced yet (see [`JobSpec::announce`]).
    pub fn streaming(msr: f64, n: u32) -> Result<JobSpec, JobError> {
        JobSpec::new(msr)?.announce(0, n)
    }

    /// Whether some group announces more messages than the job carries now.
    pub fn is_streaming(&self) -> bool {
        self.groups.iter().any(|g| g.announced.is_some())
    }

    /// Adds a fully precise message of real bytes to `group` (a damaged
    /// packet is dropped, as UDP would).
    pub fn message(mut self, group: u16, bytes: impl Into<Vec<u8>>) -> JobSpec {
        let payload = bytes.into();
        self.messages.push(MessageSpec {
            group,
            precise_len: payload.len(),
            payload: Payload::Bytes(payload),
        });
        self
    }

    /// Adds a message whose first `precise_len` bytes must arrive exactly.
    pub fn message_with_prefix(
        mut self,
        group: u16,
        bytes: impl Into<Vec<u8>>,
        precise_len: usize,
    ) -> JobSpec {
        self.messages.push(MessageSpec {
            group,
            payload: Payload::Bytes(bytes.into()),
            precise_len,
        });
        self
    }

    /// A job carrying one tensor (seed 001 §3.2); the receiver may use it once
    /// the spec's fraction `p` of elements arrived.
    pub fn tensor(t: TensorSpec) -> JobSpec {
        JobSpec {
            groups: vec![GroupSpec {
                id: 0,
                msr: Msr(t.deliver_fraction),
                announced: None,
            }],
            messages: Vec::new(),
            tensor: Some(t),
        }
    }

    /// Messages in the job (for a tensor job: the chunks, once planned).
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether the job has no messages.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty() && self.tensor.is_none() && !self.is_streaming()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msr_validation_and_rounding() {
        assert!(Msr::new(1.7).is_err());
        assert!(Msr::new(-0.1).is_err());
        assert!(Msr::new(f64::NAN).is_err());
        assert_eq!(Msr::new(0.1).unwrap().must_deliver(10), 1);
        assert_eq!(Msr::new(0.75).unwrap().must_deliver(10), 8);
        assert_eq!(Msr::new(0.5).unwrap().must_deliver(7), 4);
        assert_eq!(Msr::new(0.0).unwrap().must_deliver(7), 0);
        assert_eq!(Msr::new(1.0).unwrap().must_deliver(7), 7);
    }
}
