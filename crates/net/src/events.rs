//! The bounded queue of application events, and finding the event an
//! application call waits for while leaving every other one in order.

use crate::error::{ConnectError, JobWaitError};
use approxnet_proto::event::Role;
use approxnet_proto::{ConnectionHandle, Event, JobReport};
use std::collections::VecDeque;

/// Events waiting for the application, with the payload bytes they hold.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    q: VecDeque<(ConnectionHandle, Event)>,
    bytes: usize,
    pushed: u64,
}

fn payload_bytes(e: &Event) -> usize {
    match e {
        Event::MessageDelivered { payload, .. } => payload.len(),
        Event::TensorReady { data, missing, .. } => data.len() + missing.len() * 8,
        _ => 0,
    }
}

impl EventQueue {
    pub(crate) fn push(&mut self, h: ConnectionHandle, e: Event) {
        self.pushed += 1;
        self.bytes += payload_bytes(&e);
        self.q.push_back((h, e));
    }

    pub(crate) fn pop(&mut self) -> Option<(ConnectionHandle, Event)> {
        let x = self.q.pop_front()?;
        self.bytes -= payload_bytes(&x.1);
        Some(x)
    }

    fn remove(&mut self, i: usize) -> Option<(ConnectionHandle, Event)> {
        let x = self.q.remove(i)?;
        self.bytes -= payload_bytes(&x.1);
        Some(x)
    }

    pub(crate) fn len(&self) -> usize {
        self.q.len()
    }

    /// Events ever queued (to tell whether a step produced any).
    pub(crate) fn pushed(&self) -> u64 {
        self.pushed
    }

    /// Payload bytes held by queued events.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The first `Accepted` event's connection, removed from the queue.
    pub(crate) fn take_accepted(&mut self) -> Option<ConnectionHandle> {
        let i = self
            .q
            .iter()
            .position(|(_, e)| matches!(e, Event::Accepted))?;
        self.remove(i).map(|(h, _)| h)
    }

    /// `Connected` (or the connection's loss) for `h`, removed from the queue.
    pub(crate) fn take_connected(
        &mut self,
        h: ConnectionHandle,
    ) -> Option<Result<(), ConnectError>> {
        let i = self.q.iter().position(|(c, e)| {
            *c == h && matches!(e, Event::Connected | Event::ConnectionLost { .. })
        })?;
        match self.remove(i) {
            Some((_, Event::ConnectionLost { reason })) => Some(Err(ConnectError::Lost(reason))),
            _ => Some(Ok(())),
        }
    }

    /// The sender-side `JobComplete` of `job` on `h`, removed; or the
    /// connection's loss, which stays queued for `next_event` as well.
    pub(crate) fn take_job_done(
        &mut self,
        h: ConnectionHandle,
        job: u32,
    ) -> Option<Result<JobReport, JobWaitError>> {
        let i = self.q.iter().position(|(c, e)| {
            *c == h
                && match e {
                    Event::JobComplete { job: j, role, .. } => *j == job && *role == Role::Sender,
                    Event::ConnectionLost { .. } => true,
                    _ => false,
                }
        })?;
        if let Event::ConnectionLost { reason } = &self.q[i].1 {
            return Some(Err(JobWaitError::ConnectionLost(reason.clone())));
        }
        match self.remove(i) {
            Some((_, Event::JobComplete { outcome, .. })) => {
                Some(outcome.map_err(JobWaitError::Failed))
            }
            _ => None,
        }
    }
}
