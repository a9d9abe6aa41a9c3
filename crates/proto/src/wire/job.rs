//! JOB body: announces a job's groups, how many messages each holds and how
//! many must be delivered, and (for tensor jobs) the element layout.
//!
//! ```text
//! +-----------------+--------+--------+
//! | n_groups (16)   | dtype  | prot   |  0   dtype 0 = not a tensor
//! +-----------------+--------+--------+
//! |      total elements (32)          |  4
//! |      elements per chunk (32)      |  8
//! |      reserved (32)                | 12
//! +-----------------+-----------------+
//! | group id (16)   | reserved (16)   | 16   n_groups entries of 12 bytes
//! | messages (32)                     |
//! | must deliver (32)                 |
//! +-----------------------------------+
//! ```
//!
//! `prot`: a tensor's protection level, the most significant bits of every
//! element carried in each chunk's precise prefix (0: none; at most the
//! element's bit count). Chunks of a protected tensor are in the
//! byte-plane layout of `approxnet_phy::approx_types::PlaneLayout`.

use super::{get_u16, get_u32, put_u16, put_u32, WireError};

/// A job names at most this many groups.
pub const MAX_GROUPS: usize = 256;
const FIXED: usize = 16;
const ENTRY: usize = 12;

/// Element type of a tensor message (seed 001 section 3.2: packets never
/// split an element).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// IEEE 754 half precision.
    F16,
    /// IEEE 754 single precision.
    F32,
    /// IEEE 754 double precision.
    F64,
}

impl Dtype {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::F16 => 2,
            Dtype::F32 => 4,
            Dtype::F64 => 8,
        }
    }
    fn code(self) -> u8 {
        match self {
            Dtype::F16 => 1,
            Dtype::F32 => 2,
            Dtype::F64 => 3,
        }
    }
    fn from_code(c: u8) -> Result<Option<Dtype>, WireError> {
        match c {
            0 => Ok(None),
            1 => Ok(Some(Dtype::F16)),
            2 => Ok(Some(Dtype::F32)),
            3 => Ok(Some(Dtype::F64)),
            _ => Err(WireError::Malformed("unknown tensor dtype")),
        }
    }
}

/// Layout of a tensor job: one vector cut into chunks of whole elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorDesc {
    /// Element type.
    pub dtype: Dtype,
    /// Elements in the vector.
    pub total_elems: u32,
    /// Elements per chunk (the last chunk may be shorter).
    pub elems_per_chunk: u32,
    /// Protected most significant bits per element (0: none).
    pub protect_bits: u8,
}

/// One group of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupDesc {
    /// Group id.
    pub id: u16,
    /// Messages in the group (`N_g`).
    pub messages: u32,
    /// Messages that must be delivered whole: `ceil(MSR_g * N_g)`.
    pub must_deliver: u32,
}

/// A JOB body as plain values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobRepr {
    /// Tensor layout, when the job is one tensor.
    pub tensor: Option<TensorDesc>,
    /// The groups (distinct ids).
    pub groups: Vec<GroupDesc>,
}

impl JobRepr {
    /// Body bytes needed.
    pub fn buffer_len(&self) -> usize {
        FIXED + ENTRY * self.groups.len()
    }

    /// Parses a JOB body; refuses inconsistent groups. Never allocates more
    /// than [`MAX_GROUPS`] entries.
    pub fn parse(body: &[u8]) -> Result<JobRepr, WireError> {
        if body.len() < FIXED {
            return Err(WireError::Truncated {
                have: body.len(),
                need: FIXED,
            });
        }
        let n = get_u16(body, 0) as usize;
        if n == 0 || n > MAX_GROUPS {
            return Err(WireError::Malformed("group count outside 1..=256"));
        }
        if body.len() != FIXED + ENTRY * n {
            return Err(WireError::LengthMismatch {
                claimed: FIXED + ENTRY * n,
                actual: body.len(),
            });
        }
        let tensor = match Dtype::from_code(body[2])? {
            None => None,
            Some(dtype) => {
                let total_elems = get_u32(body, 4);
                let elems_per_chunk = get_u32(body, 8);
                if elems_per_chunk == 0 || total_elems == 0 {
                    return Err(WireError::Malformed("empty tensor layout"));
                }
                let protect_bits = body[3];
                if usize::from(protect_bits) > dtype.size() * 8 {
                    return Err(WireError::Malformed(
                        "tensor protection level above the element's bits",
                    ));
                }
                Some(TensorDesc {
                    dtype,
                    total_elems,
                    elems_per_chunk,
                    protect_bits,
                })
            }
        };
        let mut groups = Vec::with_capacity(n);
        for i in 0..n {
            let at = FIXED + ENTRY * i;
            let g = GroupDesc {
                id: get_u16(body, at),
                messages: get_u32(body, at + 4),
                must_deliver: get_u32(body, at + 8),
            };
            // A group of 0 messages is an ended stream's group in which
            // nothing was produced (`Endpoint::end_stream`).
            if g.must_deliver > g.messages {
                return Err(WireError::Malformed(
                    "group must deliver more than it holds",
                ));
            }
            if groups.iter().any(|o: &GroupDesc| o.id == g.id) {
                return Err(WireError::Malformed("duplicate group id"));
            }
            groups.push(g);
        }
        if let Some(t) = tensor {
            let chunks = t.total_elems.div_ceil(t.elems_per_chunk);
            if groups.len() != 1 || groups[0].messages != chunks {
                return Err(WireError::Malformed(
                    "tensor job must be one group of its chunks",
                ));
            }
        }
        Ok(JobRepr { tensor, groups })
    }

    /// Writes the body into `buf[..buffer_len()]`.
    pub fn emit(&self, buf: &mut [u8]) {
        buf[..FIXED].fill(0);
        put_u16(buf, 0, self.groups.len() as u16);
        if let Some(t) = self.tensor {
            buf[2] = t.dtype.code();
            buf[3] = t.protect_bits;
            put_u32(buf, 4, t.total_elems);
            put_u32(buf, 8, t.elems_per_chunk);
        }
        for (i, g) in self.groups.iter().enumerate() {
            let at = FIXED + ENTRY * i;
            put_u16(buf, at, g.id);
            put_u16(buf, at + 2, 0);
            put_u32(buf, at + 4, g.messages);
            put_u32(buf, at + 8, g.must_deliver);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let j = JobRepr {
            tensor: Some(TensorDesc {
                dtype: Dtype::F32,
                total_elems: 1000,
                elems_per_chunk: 350,
                protect_bits: 12,
            }),
            groups: vec![GroupDesc {
                id: 0,
                messages: 3,
                must_deliver: 2,
            }],
        };
        let mut buf = vec![0u8; j.buffer_len()];
        j.emit(&mut buf);
        assert_eq!(buf[3], 12);
        assert_eq!(JobRepr::parse(&buf).unwrap(), j);
        // 33 bits of a 32-bit element: refused
        buf[3] = 33;
        assert!(JobRepr::parse(&buf).is_err());
        buf[3] = 32;
        assert!(JobRepr::parse(&buf).is_ok());
    }

    #[test]
    fn refuses_inconsistent_groups() {
        let mut j = JobRepr {
            tensor: None,
            groups: vec![
                GroupDesc {
                    id: 1,
                    messages: 3,
                    must_deliver: 2,
                },
                GroupDesc {
                    id: 1,
                    messages: 3,
                    must_deliver: 2,
                },
            ],
        };
        let mut buf = vec![0u8; j.buffer_len()];
        j.emit(&mut buf);
        assert!(JobRepr::parse(&buf).is_err());
        j.groups.pop();
        j.groups[0].must_deliver = 4;
        let mut buf = vec![0u8; j.buffer_len()];
        j.emit(&mut buf);
        assert!(JobRepr::parse(&buf).is_err());
    }
}
