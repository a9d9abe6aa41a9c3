//! Finding the event an application call waits for in the event queue,
//! leaving every other event in order for `next_event`.

use crate::error::{ConnectError, JobWaitError};
use approxnet_proto::event::Role;
use approxnet_proto::{ConnectionHandle, Event, JobReport};
use std::collections::VecDeque;

type Queue = VecDeque<(ConnectionHandle, Event)>;

/// `Connected` (or the connection's loss) for `h`.
pub(crate) fn connected(q: &mut Queue, h: ConnectionHandle) -> Option<Result<(), ConnectError>> {
    let i = q.iter().position(|(c, e)| {
        *c == h && matches!(e, Event::Connected | Event::ConnectionLost { .. })
    })?;
    match q.remove(i) {
        Some((_, Event::ConnectionLost { reason })) => Some(Err(ConnectError::Lost(reason))),
        _ => Some(Ok(())),
    }
}

/// The sender-side `JobComplete` of `job` on `h` (or the connection's loss).
pub(crate) fn job_done(
    q: &mut Queue,
    h: ConnectionHandle,
    job: u32,
) -> Option<Result<JobReport, JobWaitError>> {
    let i = q.iter().position(|(c, e)| {
        *c == h
            && match e {
                Event::JobComplete { job: j, role, .. } => *j == job && *role == Role::Sender,
                Event::ConnectionLost { .. } => true,
                _ => false,
            }
    })?;
    match q.remove(i) {
        Some((_, Event::JobComplete { outcome, .. })) => {
            Some(outcome.map_err(JobWaitError::Failed))
        }
        Some((_, Event::ConnectionLost { reason })) => {
            // Leave the loss visible to `next_event` as well.
            q.insert(
                i,
                (
                    h,
                    Event::ConnectionLost {
                        reason: reason.clone(),
                    },
                ),
            );
            Some(Err(JobWaitError::ConnectionLost(reason)))
        }
        _ => None,
    }
}
