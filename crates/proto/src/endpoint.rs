//! The endpoint: one per socket (or simulated host). It demultiplexes
//! datagrams to connections, answers handshakes statelessly with a cookie,
//! and hands out datagrams, events and the next timer.
//!
//! Call order (see the crate docs): after any input — `handle_datagram`,
//! `handle_timeout`, `connect`, `send_job`, `close` — drain `poll_transmit`
//! until `None`, drain `poll_event`, then wait until `poll_timeout` or the
//! next datagram. Every call takes `now`; it must never go backwards.

use crate::config::{Config, ConfigError};
use crate::connection::{Connection, State};
use crate::event::{Event, EventSink};
use crate::job::{JobError, JobSpec};
use crate::rng::Rng;
use crate::stats::{DropReason, EndpointStats};
use crate::time::Instant;
use crate::units::Rate;
use crate::wire::header::PacketTypeField;
use crate::wire::{Flags, HeaderRepr, HelloRepr, Packet, PacketType, WireError, HEADER_LEN};
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::net::SocketAddr;

mod batch;
mod deadlines;
pub use batch::BurstError;
mod hold;
pub use hold::SendHold;
mod ready;
use deadlines::Deadlines;
use ready::ReadyQueue;
#[cfg(test)]
mod push_tests;
mod unproven;
use unproven::UnprovenPool;

/// Hashes a connection id by itself. Ids are minted by this endpoint: 32
/// random bits and a 32-bit keyed hash, so they are already uniform; a peer
/// can choose the ids it *looks up*, never the ones stored, so it cannot
/// build collision chains. One multiply spreads the bits over the table.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}
use thiserror::Error;

/// `q.reserve(n)` kept out of `Endpoint::touched`'s hot path.
#[cold]
#[inline(never)]
fn reserve_cold<T>(q: &mut VecDeque<T>, n: usize) {
    q.reserve(n);
}

/// Names one connection of an endpoint. Stale handles (of a connection that
/// was closed and forgotten) are refused, never aliased.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnectionHandle {
    index: u32,
    generation: u32,
}

/// A datagram to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Where to.
    pub dst: SocketAddr,
    /// Bytes written at the start of the buffer given to `poll_transmit`.
    pub len: usize,
    /// Switch priority queue (0 = highest), from the slack-based selector.
    pub queue: u8,
    /// DSCP codepoint carrying the queue: `queue << 3` (class selector).
    pub dscp: u8,
    /// Payload bytes after the header that the checksum covers.
    pub precise_len: usize,
    /// Extra data of a job that already met its MSR (`Config::send_more`):
    /// a host may hold it back until its NIC has nothing else to send.
    pub extra: bool,
}

impl Transmit {
    /// UDP-Lite checksum coverage for this datagram: header + precise prefix.
    pub fn checksum_coverage(&self) -> usize {
        (HEADER_LEN + self.precise_len).min(self.len)
    }
}

/// Why a connection could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The endpoint already holds `Limits::max_connections`.
    #[error("endpoint already holds {0} connections (the cap)")]
    TooManyConnections(usize),
}

/// The endpoint's event queue as seen by one connection's DATA path: its
/// events are written in place with the connection's handle, in the order
/// raised. (The connection's own queue is empty then: `touched` drains it
/// after every call, so nothing queued there can come first.)
struct Tagged<'a> {
    q: &'a mut VecDeque<(ConnectionHandle, Event)>,
    h: ConnectionHandle,
}

impl EventSink for Tagged<'_> {
    #[inline]
    fn push_back(&mut self, e: Event) {
        self.q.push_back((self.h, e));
    }
    fn reserve(&mut self, additional: usize) {
        self.q.reserve(additional);
    }
}

/// One connection slot of an endpoint (a freed slot keeps its generation).
struct Slot {
    conn: Option<Connection>,
    /// Bumped when the slot is freed: stale handles are refused.
    generation: u32,
    /// Bytes the connection was charged when last looked at.
    charged: usize,
    /// The connection's next deadline (its entry on `Endpoint::timers`).
    deadline: Option<Instant>,
    /// On `Endpoint::ready`.
    in_ready: bool,
    /// On `Endpoint::ack_waiting`.
    in_ack_waiting: bool,
}

/// The sans-IO approxnet endpoint.
pub struct Endpoint {
    cfg: Config,
    rng: Rng,
    secret: [u64; 2],
    /// Per connection slot: the connection and what the endpoint keeps
    /// for it, side by side (one bounds check and one cache line where
    /// six parallel vectors cost six).
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// Where the next search for an evictable connection starts.
    evict_cursor: usize,
    /// Connections held (the slots with a connection).
    live: usize,
    /// Bytes all connections were charged when last looked at
    /// (`Slot::charged`): what `Limits::max_endpoint_bytes` bounds.
    held: usize,
    /// Connections a peer's JOB opened that have had no DATA yet, and the
    /// HELLO_ACK ids that vouch for a JOB (`endpoint/unproven.rs`).
    unproven: UnprovenPool,
    by_id: HashMap<u64, usize, BuildHasherDefault<IdHasher>>,
    /// The last `by_id` hit, `(id, slot)`, asked before the map: a
    /// datagram's connection is most often the previous one's (a hash
    /// probe cost ~14 instructions per datagram). Dropped when its slot
    /// is freed, the one way an entry leaves `by_id`.
    last_id: Option<(u64, usize)>,
    replies: VecDeque<(SocketAddr, u64, u64)>,
    events: VecDeque<(ConnectionHandle, Event)>,
    stats: EndpointStats,
    now: Instant,
    /// Connections that may have a datagram to send now, round-robin order.
    ready: ReadyQueue,
    /// A connection whose timers and ready-queue entry wait for the end
    /// of its run of datagrams in a batch (`handle_datagrams`), and
    /// whether the run is DATA. `None` outside a batch.
    deferred: Option<(usize, bool)>,
    /// A connection that sent DATA in a burst (`poll_transmits`) and has
    /// not had its timers derived since. `None` outside a burst.
    unsettled: Option<usize>,
    /// The connections' deadlines (`Slot::deadline`) in order, one entry
    /// per slot with a deadline (`endpoint/deadlines.rs`), so timers cost
    /// O(log n), not a scan.
    timers: Deadlines,
    /// `handle_timeout`'s list of connections due, kept for its capacity.
    due: Vec<usize>,
    /// Connections holding a coalesced ACK (see [`Endpoint::flush_acks`]).
    ack_waiting: Vec<usize>,
    /// The first DATA sequence number of every new connection, in place
    /// of a random one (tests; see [`Endpoint::force_first_seq`]).
    forced_first_seq: Option<u32>,
}

/// What the call before [`Endpoint::rederive_as`] did: its short paths
/// derive a connection's timers only where that can move them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Moved {
    /// Anything: the full derivation (`Connection::poll_timeout`).
    Anything,
    /// A DATA packet arrived (`Connection::after_data_received`).
    DataIn,
    /// Messages were queued (`Connection::after_push`).
    Pushed,
}

impl Endpoint {
    /// A new endpoint; `seed` drives every random choice (nonces, ids, cookie key).
    pub fn new(cfg: Config, seed: u64) -> Result<Endpoint, ConfigError> {
        cfg.validate()?;
        let mut rng = Rng::new(seed);
        let secret = [rng.next_u64(), rng.next_u64()];
        Ok(Endpoint {
            cfg,
            rng,
            secret,
            slots: Vec::new(),
            free: Vec::new(),
            evict_cursor: 0,
            live: 0,
            held: 0,
            unproven: UnprovenPool::default(),
            by_id: HashMap::default(),
            last_id: None,
            replies: VecDeque::new(),
            events: VecDeque::new(),
            stats: EndpointStats::default(),
            now: Instant::ZERO,
            ready: ReadyQueue::default(),
            deferred: None,
            unsettled: None,
            timers: Deadlines::default(),
            due: Vec::new(),
            ack_waiting: Vec::new(),
            forced_first_seq: None,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Drop and traffic counters.
    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// Connections currently held.
    pub fn connection_count(&self) -> usize {
        self.live
    }

    /// Bytes all connections hold in buffers, bitmaps and tensors, as
    /// charged against `Limits::max_buffered_bytes` (per connection) and
    /// `Limits::max_endpoint_bytes` (together).
    pub fn held_bytes(&self) -> usize {
        self.held
    }

    fn tick(&mut self, now: Instant) {
        self.now = self.now.max(now);
    }

    fn handle(&self, i: usize) -> ConnectionHandle {
        ConnectionHandle {
            index: i as u32,
            generation: self.slots[i].generation,
        }
    }

    fn index(&self, h: ConnectionHandle) -> Option<usize> {
        let i = h.index as usize;
        self.slots
            .get(i)
            .is_some_and(|s| s.generation == h.generation && s.conn.is_some())
            .then_some(i)
    }

    fn insert(&mut self, c: Connection) -> Result<usize, ConnectError> {
        if self.live >= self.cfg.limits.max_connections && !self.evict_one() {
            return Err(ConnectError::TooManyConnections(
                self.cfg.limits.max_connections,
            ));
        }
        self.live += 1;
        Ok(match self.free.pop() {
            Some(i) => {
                self.slots[i].conn = Some(c);
                i
            }
            None => {
                self.slots.push(Slot {
                    conn: Some(c),
                    generation: 0,
                    charged: 0,
                    deadline: None,
                    in_ready: false,
                    in_ack_waiting: false,
                });
                self.unproven.add_slot();
                self.slots.len() - 1
            }
        })
    }

    fn cookie_tag(&self, peer: SocketAddr, r: u32) -> u32 {
        // SipHash-1-3 keyed with the endpoint's 128-bit secret (a PRF): an
        // off-path sender cannot forge a connection id for its (spoofed)
        // address. (std's DefaultHasher has a fixed zero key and an
        // unspecified algorithm; hashing the secret as data is no MAC.)
        let mut h = siphasher::sip::SipHasher13::new_with_keys(self.secret[0], self.secret[1]);
        peer.hash(&mut h);
        r.hash(&mut h);
        h.finish() as u32
    }

    /// Makes every connection opened or accepted from now on number its
    /// DATA from `first` instead of from a random value (as TCP's ISN)
    /// drawn from the seed; `None` restores the random choice. For tests
    /// that need sequence numbers to wrap at a known moment; the random
    /// draw is still made, so the endpoint's other choices do not change.
    #[doc(hidden)]
    pub fn force_first_seq(&mut self, first: Option<u32>) {
        self.forced_first_seq = first;
    }

    /// The first DATA sequence number of a new connection.
    fn first_seq(&mut self) -> u32 {
        let random = self.rng.next_u64() as u32;
        self.forced_first_seq.unwrap_or(random)
    }

    fn cookie_ok(&self, peer: SocketAddr, id: u64) -> bool {
        let r = (id >> 32) as u32;
        r != 0 && self.cookie_tag(peer, r) == id as u32
    }

    /// Opens a connection to `peer` (client side); jobs may be queued at once.
    pub fn connect(
        &mut self,
        now: Instant,
        peer: SocketAddr,
    ) -> Result<ConnectionHandle, ConnectError> {
        self.tick(now);
        let nonce = self.rng.next_u64() | 1;
        let first_seq = self.first_seq();
        let c = Connection::new(
            now,
            peer,
            0,
            State::Handshaking { nonce },
            first_seq,
            &self.cfg,
        );
        let i = self.insert(c)?;
        self.touched(i);
        Ok(self.handle(i))
    }

    /// Queues a job on a connection; returns its job id.
    pub fn send_job(
        &mut self,
        now: Instant,
        h: ConnectionHandle,
        spec: JobSpec,
    ) -> Result<u32, JobError> {
        self.tick(now);
        let i = self.index(h).ok_or(JobError::NoConnection)?;
        let c = self.slots[i].conn.as_mut().ok_or(JobError::NoConnection)?;
        let r = c.send_job(now, spec, &self.cfg);
        self.touched(i);
        r
    }

    /// Hands over messages of a streaming job (one opened with
    /// [`JobSpec::announce`]) as the application produces them. Once the
    /// job has met its MSR they are discarded ([`crate::Pushed::JobComplete`]).
    pub fn push_messages(
        &mut self,
        now: Instant,
        h: ConnectionHandle,
        job: u32,
        mut msgs: Vec<crate::job::MessageSpec>,
    ) -> Result<crate::Pushed, JobError> {
        self.push_messages_from(now, h, job, &mut msgs)
    }

    /// [`Endpoint::push_messages`] taking the messages out of `msgs`, which
    /// is left empty whatever the outcome, its allocation kept: a producer
    /// that hands over a message or a few at a time (the simulator, ~400 k
    /// pushes a simulated ms at k = 12) fills one list again and again
    /// instead of allocating one per call.
    pub fn push_messages_from(
        &mut self,
        now: Instant,
        h: ConnectionHandle,
        job: u32,
        msgs: &mut Vec<crate::job::MessageSpec>,
    ) -> Result<crate::Pushed, JobError> {
        let r = self.push_messages_in(now, h, job, msgs);
        msgs.clear();
        r
    }

    #[inline(always)]
    fn push_messages_in(
        &mut self,
        now: Instant,
        h: ConnectionHandle,
        job: u32,
        msgs: &mut Vec<crate::job::MessageSpec>,
    ) -> Result<crate::Pushed, JobError> {
        self.tick(now);
        let i = self.index(h).ok_or(JobError::NoConnection)?;
        let c = self.slots[i].conn.as_mut().ok_or(JobError::NoConnection)?;
        let r = c.push_messages(now, job, msgs, &self.cfg);
        // Messages queued: the timers are derived anew only where that
        // can move them (`Connection::after_push`).
        let how = match r {
            Ok(crate::Pushed::Queued(n)) if n > 0 => Moved::Pushed,
            _ => Moved::Anything,
        };
        if self.settle(i) {
            self.rederive_as(i, how);
        }
        r
    }

    /// Ends streaming job `job` of `h` at the messages pushed so far: an
    /// open-ended stream (announced with a large N) becomes a job of what
    /// was produced, which then completes as any job does (its JOB is
    /// announced again with the new counts first).
    pub fn end_stream(
        &mut self,
        now: Instant,
        h: ConnectionHandle,
        job: u32,
    ) -> Result<(), JobError> {
        self.tick(now);
        let i = self.index(h).ok_or(JobError::NoConnection)?;
        let c = self.slots[i].conn.as_mut().ok_or(JobError::NoConnection)?;
        let r = c.end_stream(now, job, &self.cfg);
        self.touched(i);
        r
    }

    /// Closes a connection once its jobs are done.
    pub fn close(&mut self, now: Instant, h: ConnectionHandle) {
        self.tick(now);
        if let Some(i) = self.index(h) {
            if let Some(c) = self.slots[i].conn.as_mut() {
                c.close(now, &self.cfg);
            }
            self.touched(i);
        }
    }

    /// Current sending rate of a connection.
    pub fn rate(&self, h: ConnectionHandle) -> Option<Rate> {
        self.index(h)
            .and_then(|i| self.slots[i].conn.as_ref())
            .map(|c| c.rate())
    }

    /// Payload bytes a connection holds for reassembly.
    pub fn buffered_bytes(&self, h: ConnectionHandle) -> Option<usize> {
        self.index(h)
            .and_then(|i| self.slots[i].conn.as_ref())
            .map(|c| c.buffered())
    }

    /// Messages of a connection with packets waiting to leave (not yet
    /// sent, or queued for resending): what a sender that must not
    /// outrun its window waits on.
    pub fn waiting_messages(&self, h: ConnectionHandle) -> Option<usize> {
        self.index(h)
            .and_then(|i| self.slots[i].conn.as_ref())
            .map(|c| c.waiting())
    }

    /// The peer address of a connection.
    pub fn peer(&self, h: ConnectionHandle) -> Option<SocketAddr> {
        self.index(h)
            .and_then(|i| self.slots[i].conn.as_ref())
            .map(|c| c.peer)
    }

    /// After any call into connection `i`: hand its events out, re-arm its
    /// deadline, queue it if it can send, forget it once closed.
    // Inlined into its callers: four calls per DATA packet, and the call
    // boundary (saving and restoring registers around the connection's
    // `poll_timeout`) cost ~15 instructions each.
    #[inline(always)]
    fn touched(&mut self, i: usize) {
        self.touched_after(i, false);
    }

    /// [`Endpoint::touched`]; `data_in`: the call was a DATA packet's
    /// arrival, whose timers are derived only where it can move them
    /// (`Connection::after_data_received`; debug builds check it against
    /// the full derivation).
    #[inline(always)]
    fn touched_after(&mut self, i: usize, data_in: bool) {
        if self.settle(i) {
            self.rederive(i, data_in);
        }
    }

    /// The first half of [`Endpoint::touched`]: connection `i`'s events
    /// handed out, its bytes charged, its probation ended once proven, the
    /// connection forgotten once closed. `false` when no connection is
    /// left in the slot.
    #[inline(always)]
    fn settle(&mut self, i: usize) -> bool {
        let h = self.handle(i);
        let now = self.now;
        let s = &mut self.slots[i];
        let Some(c) = s.conn.as_mut() else {
            return false;
        };
        // One reservation for a burst (a FIN's abandoned messages): the
        // queue grows once instead of doubling, copying, per event.
        if c.events.len() > 1 {
            reserve_cold(&mut self.events, c.events.len());
        }
        while let Some(e) = c.events.pop_front() {
            self.events.push_back((h, e));
        }
        let b = c.buffered();
        if b != s.charged {
            self.held = self.held - s.charged + b;
            self.unproven.recharge(i, s.charged, b);
            s.charged = b;
        }
        if self.unproven.on_probation(i) && !c.unproven(now, crate::time::Duration::ZERO) {
            // it received DATA (or sends a job of its own): proven
            self.unproven.end(i, b);
        }
        if c.is_closed() {
            self.forget(i);
            return false;
        }
        true
    }

    /// The second half of [`Endpoint::touched`]: connection `i` queued if
    /// it can send, its timers derived and its deadline re-armed. A batch
    /// of datagrams ([`Endpoint::handle_datagrams`]) runs it once per run
    /// of one connection's datagrams: none of it is read while receiving.
    #[inline(always)]
    fn rederive(&mut self, i: usize, data_in: bool) {
        self.rederive_as(
            i,
            if data_in {
                Moved::DataIn
            } else {
                Moved::Anything
            },
        );
    }

    /// [`Endpoint::rederive`] after a call that did `how`.
    #[inline(always)]
    fn rederive_as(&mut self, i: usize, how: Moved) {
        let now = self.now;
        let s = &mut self.slots[i];
        let Some(c) = s.conn.as_mut() else {
            return;
        };
        if !s.in_ready && c.wants_to_send(now) {
            s.in_ready = true;
            self.ready.push_back(i);
        }
        let short = match how {
            Moved::Anything => None,
            Moved::DataIn => c.after_data_received(now, &self.cfg),
            Moved::Pushed => c.after_push(now),
        };
        let d = match short {
            Some(d) => {
                debug_assert_eq!(
                    c.poll_timeout(now, &self.cfg),
                    d,
                    "a call ({how:?}) moved connection {i}'s timers beyond its short derivation"
                );
                d
            }
            None => c.poll_timeout(now, &self.cfg),
        };
        self.rearm(i, d);
    }

    /// Connection `i`'s next deadline is `d`: kept, and its heap entry
    /// moved in place (added or taken out where it gets or loses one).
    #[inline(always)]
    fn rearm(&mut self, i: usize, d: Option<Instant>) {
        let s = &mut self.slots[i];
        if d == s.deadline {
            return;
        }
        s.deadline = d;
        self.timers.set(i, d);
    }

    fn count_wire_error(&mut self, e: WireError) {
        self.stats.drop(match e {
            WireError::BadChecksum => DropReason::BadChecksum,
            _ => DropReason::Malformed,
        });
    }

    /// Feeds one received datagram. Anything malformed, unexpected or over a
    /// cap is dropped and counted (see [`Endpoint::stats`]); never panics.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.tick(now);
        self.receive(now, from, data, false);
    }

    /// One datagram of [`Endpoint::handle_datagram`] (`batch` false) or of
    /// [`Endpoint::handle_datagrams`] (`batch` true: a DATA or ACK leaves
    /// its connection's timers and ready-queue entry to
    /// [`Endpoint::flush_deferred`], run before anything else touches
    /// another connection and at the batch's end).
    #[inline(always)]
    fn receive(&mut self, now: Instant, from: SocketAddr, data: &[u8], batch: bool) {
        // The lengths are checked once, by `parse_into` (`Packet::check_len`):
        // `Packet::new_checked` here checked them a second time (~9
        // instructions per datagram). Nothing reads `p` before that check.
        let p = Packet::new_unchecked(data);
        let mut h = HeaderRepr::default();
        if let Err(e) = HeaderRepr::parse_into(&p, &mut h) {
            return self.count_wire_error(e);
        }
        let body = p.body();
        match h.ty.0 {
            PacketType::Hello => {
                if batch {
                    self.flush_deferred();
                }
                let Ok(hello) = HelloRepr::parse(body) else {
                    return self.stats.drop(DropReason::Malformed);
                };
                if self.replies.len() >= self.cfg.limits.max_pending_replies {
                    return self.stats.drop(DropReason::CapExceeded);
                }
                let r = (self.rng.next_u64() as u32) | 1;
                let id = ((r as u64) << 32) | self.cookie_tag(from, r) as u64;
                self.replies.push_back((from, id, hello.nonce));
                self.unproven.issue(id);
                self.stats.accepted += 1;
            }
            PacketType::HelloAck => {
                if batch {
                    self.flush_deferred();
                }
                let Ok(hello) = HelloRepr::parse(body) else {
                    return self.stats.drop(DropReason::Malformed);
                };
                let found = self.slots.iter().position(|s| {
                    s.conn.as_ref().is_some_and(|c| {
                        c.peer == from && c.state == State::Handshaking { nonce: hello.nonce }
                    })
                });
                match found {
                    Some(i) if h.conn_id != 0 && !self.by_id.contains_key(&h.conn_id) => {
                        if let Some(c) = self.slots[i].conn.as_mut() {
                            c.on_hello_ack(now, h.conn_id, &self.cfg);
                        }
                        self.by_id.insert(h.conn_id, i);
                        self.stats.accepted += 1;
                        self.touched(i);
                    }
                    _ => self.stats.drop(DropReason::Unexpected),
                }
            }
            _ => {
                let found = match self.last_id {
                    Some((id, i)) if id == h.conn_id => Some(i),
                    _ => self.by_id.get(&h.conn_id).copied(),
                };
                debug_assert_eq!(found, self.by_id.get(&h.conn_id).copied());
                if batch {
                    // The deferred work of the previous run comes first
                    // unless this datagram continues it (same connection,
                    // same kind): the ready queue and the heap then see
                    // the calls in the order single calls make them.
                    if let Some((p, d)) = self.deferred {
                        let same = found == Some(p)
                            && (h.ty.0 == PacketType::Data) == d
                            && matches!(h.ty.0, PacketType::Data | PacketType::Ack);
                        if !same {
                            self.flush_deferred();
                        }
                    }
                }
                let i = match found {
                    Some(i) => {
                        self.last_id = Some((h.conn_id, i));
                        i
                    }
                    None if h.ty.0 == PacketType::Job && self.cookie_ok(from, h.conn_id) => {
                        if self.unproven.count() >= self.cfg.limits.unproven_cap() {
                            self.evict_oldest_unproven(None);
                        }
                        let first_seq = self.first_seq();
                        let c = Connection::new(
                            now,
                            from,
                            h.conn_id,
                            State::Established,
                            first_seq,
                            &self.cfg,
                        );
                        let Ok(i) = self.insert(c) else {
                            return self.stats.drop(DropReason::CapExceeded);
                        };
                        self.by_id.insert(h.conn_id, i);
                        if !self.unproven.vouched(h.conn_id) {
                            self.start_probation(i);
                        }
                        let hd = self.handle(i);
                        self.events.push_back((hd, Event::Accepted));
                        i
                    }
                    None => return self.stats.drop(DropReason::UnknownConnection),
                };
                // two fields read, not the whole `Limits` copied per datagram
                let max_buffered = self.cfg.limits.max_buffered_bytes;
                let max_endpoint = self.cfg.limits.max_endpoint_bytes;
                if h.ty.0 == PacketType::Job && self.held + max_buffered > max_endpoint {
                    // Little of the endpoint's budget is left: free what an
                    // unproven connection holds before a new job is charged.
                    self.evict_one();
                }
                let s = &mut self.slots[i];
                let Some(c) = s.conn.as_mut() else {
                    return self.stats.drop(DropReason::UnknownConnection);
                };
                if c.peer != from {
                    return self.stats.drop(DropReason::WrongPeer);
                }
                // This connection may grow by no more than what the
                // endpoint's budget has left (`Limits::max_endpoint_bytes`).
                // (Set on the endpoint's own config for this call and put
                // back after it: copying the whole `Config` per datagram
                // cost ~30 instructions.)
                let spare = max_endpoint.saturating_sub(self.held);
                self.cfg.limits.max_buffered_bytes =
                    max_buffered.min(s.charged.saturating_add(spare));
                let before = self.stats.dropped_total();
                if h.ty.0 == PacketType::Data {
                    debug_assert!(c.events.is_empty());
                    let mut events = Tagged {
                        q: &mut self.events,
                        h: ConnectionHandle {
                            index: i as u32,
                            generation: s.generation,
                        },
                    };
                    c.on_data_packet(now, &h, body, &self.cfg, &mut self.stats, &mut events);
                } else if h.ty.0 == PacketType::Fin && !h.flags.has(Flags::CLOSE) {
                    // A job's FIN raises a burst (a `MessageAbandoned` per
                    // message missing): written in place as DATA's events.
                    debug_assert!(c.events.is_empty());
                    let mut events = Tagged {
                        q: &mut self.events,
                        h: ConnectionHandle {
                            index: i as u32,
                            generation: s.generation,
                        },
                    };
                    c.on_fin_packet(now, &h, &mut self.stats, &mut events);
                } else if batch && h.ty.0 == PacketType::Ack {
                    // a run of ACKs arms the loss timer once, at its end
                    c.defer_loss = true;
                    c.on_packet(now, &h, body, &self.cfg, &mut self.stats);
                    c.defer_loss = false;
                } else {
                    c.on_packet(now, &h, body, &self.cfg, &mut self.stats);
                }
                self.cfg.limits.max_buffered_bytes = max_buffered;
                if self.stats.dropped_total() == before {
                    self.stats.accepted += 1;
                }
                if c.holds_ack() && !s.in_ack_waiting {
                    s.in_ack_waiting = true;
                    self.ack_waiting.push(i);
                }
                let data_in = h.ty.0 == PacketType::Data;
                if batch && (data_in || h.ty.0 == PacketType::Ack) {
                    self.deferred = self.settle(i).then_some((i, data_in));
                } else {
                    self.touched_after(i, data_in);
                }
                while self.unproven.held() > self.cfg.limits.unproven_bytes_cap()
                    && self.evict_oldest_unproven(Some(i))
                {}
            }
        }
    }

    /// Sends now every ACK that is waiting to be coalesced with later ones
    /// (`Config::ack_every` > 1). A runtime that reads datagrams in batches
    /// calls this after each batch: the receiver then acknowledges once per
    /// batch, as kernel TCP does once per GRO packet, and no ACK waits for
    /// `max_ack_delay`.
    pub fn flush_acks(&mut self, now: Instant) {
        self.tick(now);
        while let Some(i) = self.ack_waiting.pop() {
            self.slots[i].in_ack_waiting = false;
            if let Some(c) = self.slots[i].conn.as_mut() {
                c.flush_ack();
                self.touched(i);
            }
        }
    }

    /// Lets timers that are due fire.
    // A thin check in front of the work: a driver calls this on every
    // loop, mostly with nothing due (one heap peek, no frame of the full
    // function).
    #[inline]
    pub fn handle_timeout(&mut self, now: Instant) {
        self.tick(now);
        if self.timers.peek().is_some_and(|(t, _)| t <= now) {
            self.fire_timers(now);
        }
    }

    /// `handle_timeout` with a heap entry due.
    #[inline(never)]
    fn fire_timers(&mut self, now: Instant) {
        // One connection due (the pacer's or the epoch's wake-up, mostly;
        // no other entry is due when none of the top's children is): the
        // entry stays on top while the connection's timers fire, and
        // `rearm` moves it in place (one sift where a pop and a push made
        // two).
        if let Some((_, i)) = self.timers.peek() {
            if !self.timers.others_due(now) {
                self.fire_one(now, i);
                debug_assert!(
                    self.timers.len() > 64
                        || self.slots[i]
                            .deadline
                            .is_none_or(|d| self.timers.iter().any(|e| e == (d, i))),
                    "connection {i}'s new deadline is not on the heap"
                );
                return;
            }
        }
        self.fire_due(now);
    }

    /// [`Endpoint::fire_timers`] past its one-connection case: every
    /// connection whose entry is due, in heap order. (Out of line: the
    /// one-connection case is then a small function.)
    #[inline(never)]
    fn fire_due(&mut self, now: Instant) {
        let mut due = std::mem::take(&mut self.due);
        while let Some((t, i)) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            let s = &mut self.slots[i];
            debug_assert_eq!(s.deadline, Some(t), "an entry is its slot's deadline");
            s.deadline = None;
            due.push(i);
        }
        for &i in &due {
            self.fire_one(now, i);
        }
        due.clear();
        self.due = due;
    }

    /// Connection `i`'s deadline came: its timers fire.
    #[inline(always)]
    fn fire_one(&mut self, now: Instant, i: usize) {
        let s = &mut self.slots[i];
        if let Some(c) = s.conn.as_mut() {
            if let Some(d) = c.pacing_wakeup(now) {
                // Only the pacer's time came: no event, byte count or
                // other timer changed, so `touched` reduces to the
                // ready queue and the new deadline (~150 instructions
                // less per paced packet). Debug builds check it
                // against the full derivation.
                debug_assert!(c.events.is_empty());
                debug_assert_eq!(c.poll_timeout(now, &self.cfg), d);
                if !s.in_ready && c.wants_to_send(now) {
                    s.in_ready = true;
                    self.ready.push_back(i);
                }
                self.rearm(i, d);
                return;
            }
            c.handle_timeout(now, &self.cfg);
        }
        self.touched(i);
    }

    /// The next datagram to send, written into `buf` (at least `mtu` bytes).
    // A thin check in front of the work: every drain ends with a call that
    // finds nothing (no reply, no connection ready, no timer due), which
    // then costs no frame of the full function.
    #[inline]
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        self.tick(now);
        if self.replies.is_empty()
            && self.ready.is_empty()
            && self.poll_timeout().is_none_or(|t| t > now)
        {
            return None;
        }
        self.next_transmit(now, buf)
    }

    /// `poll_transmit` past its check.
    #[inline(never)]
    fn next_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        self.next_transmit_in(now, buf, false)
    }

    /// [`Endpoint::next_transmit`]; `burst` (from
    /// [`Endpoint::poll_transmits`]): a DATA packet whose connection would
    /// be polled again next anyway leaves its timers to the end of the
    /// run ([`Endpoint::unsettled`]).
    #[inline(always)]
    fn next_transmit_in(&mut self, now: Instant, buf: &mut [u8], burst: bool) -> Option<Transmit> {
        // A run that continues found no reply waiting and no timer due
        // when it continued, and nothing ran since: both checks skipped.
        if !(burst && self.unsettled.is_some()) {
            if let Some(t) = self.poll_reply(now, buf) {
                return Some(t);
            }
            // A driver that polls without calling `handle_timeout` first
            // still sees paced packets whose time has come.
            if self.poll_timeout().is_some_and(|t| t <= now) {
                self.handle_timeout(now);
            }
        }
        while let Some(i) = self.ready.pop_front() {
            if burst && self.unsettled == Some(i) {
                // whatever follows derives its timers or continues the run
                self.unsettled = None;
            }
            let s = &mut self.slots[i];
            s.in_ready = false;
            let Some(c) = s.conn.as_mut() else {
                continue;
            };
            let out = if !c.wants_to_send(now) {
                None
            } else if burst {
                // a DATA packet of a burst leaves its loss timer to the
                // run's end (`Connection::arm_or_defer_loss`)
                c.defer_loss = true;
                let out = c.poll_transmit(now, buf, &self.cfg);
                c.defer_loss = false;
                out
            } else {
                c.poll_transmit(now, buf, &self.cfg)
            };
            let dst = c.peer;
            let continues = burst
                && out.as_ref().is_some_and(|o| !o.control)
                && self.ready.is_empty()
                && self.replies.is_empty()
                && self.timers.peek().is_none_or(|(t, _)| t > now)
                && c.continues_burst(now);
            if burst && !continues {
                // (only a burst defers it: the single call skips the check)
                c.settle_loss(&self.cfg);
            }
            if out.as_ref().is_some_and(|o| o.control) && c.timers_current(now) {
                // A control packet changes no event, byte count or timer
                // input, and the timers were derived at this very instant:
                // only the ready queue needs a look (`touched` less its
                // recomputation, ~200 instructions per ACK sent).
                if c.wants_to_send(now) {
                    s.in_ready = true;
                    self.ready.push_back(i);
                }
                // Every debug-build test checks the claim: deriving the
                // timers again (idempotent at one instant) gives the
                // deadline already held.
                debug_assert_eq!(
                    c.poll_timeout(now, &self.cfg),
                    s.deadline,
                    "a control packet changed connection {i}'s timers"
                );
            } else if continues {
                // The next poll takes this connection again, with nothing
                // in between (no reply, no other connection ready, no
                // timer due): its timers are derived once, after its last
                // packet of the run (`settle_burst`), not after each one.
                s.in_ready = true;
                self.ready.push_back(i);
                self.unsettled = Some(i);
            } else if let Some(d) = out
                .as_ref()
                .filter(|o| !o.control)
                .and_then(|_| c.after_data_sent(now))
            {
                // A DATA packet left: it moved no event, byte count,
                // probation or state, and of the timers only the pacing
                // entry (`Connection::after_data_sent`): `touched` less
                // those, ~90 instructions per packet sent. Debug builds
                // check it against the full derivation.
                debug_assert!(c.events.is_empty());
                debug_assert_eq!(c.buffered(), s.charged);
                debug_assert_eq!(c.poll_timeout(now, &self.cfg), d);
                if c.wants_to_send(now) {
                    s.in_ready = true;
                    self.ready.push_back(i);
                }
                self.rearm(i, d);
            } else {
                // Re-queues it at the back (round robin) if it can send more.
                self.touched(i);
            }
            if let Some(out) = out {
                self.stats.transmitted += 1;
                return Some(Transmit {
                    dst,
                    len: out.len,
                    queue: out.queue,
                    dscp: out.queue << 3,
                    precise_len: out.precise_len,
                    extra: out.extra,
                });
            }
        }
        None
    }

    fn forget(&mut self, i: usize) {
        self.slots[i].deadline = None;
        self.timers.set(i, None);
        self.unproven.end(i, self.slots[i].charged);
        if let Some(c) = self.slots[i].conn.take() {
            self.live -= 1;
            self.held -= self.slots[i].charged;
            self.slots[i].charged = 0;
            self.by_id.remove(&c.conn_id);
            if self.last_id.is_some_and(|(_, j)| j == i) {
                self.last_id = None;
            }
            self.slots[i].generation = self.slots[i].generation.wrapping_add(1);
            self.free.push(i);
        }
    }

    /// The next event for the application.
    // Inlined into a driver that asks after every call (mostly finding
    // none): a call of ~16 instructions in the simulator otherwise.
    #[inline]
    pub fn poll_event(&mut self) -> Option<(ConnectionHandle, Event)> {
        self.events.pop_front()
    }

    /// Whether handshake replies wait to be sent ([`Endpoint::poll_reply`]).
    pub fn has_replies(&self) -> bool {
        !self.replies.is_empty()
    }

    /// The next stateless handshake reply (HELLO_ACK) only, firing no
    /// timer and sending nothing of a connection. A runtime reading a long
    /// backlog of datagrams (a flood) calls it between receive batches, so
    /// a new client's handshake is not held back by the backlog, while loss
    /// timers still wait until every ACK in it was read. (Sending each
    /// batch's ACKs as well was tried: under forged valid JOBs it sends a
    /// JOB ACK for every forged connection, most of which would have been
    /// evicted unacknowledged, and the server fell behind.)
    pub fn poll_reply(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        self.tick(now);
        let (dst, id, nonce) = self.replies.pop_front()?;
        let h = HeaderRepr {
            ty: PacketTypeField(PacketType::HelloAck),
            conn_id: id,
            precise_len: HelloRepr::LEN as u16,
            body_len: HelloRepr::LEN as u16,
            ..HeaderRepr::default()
        };
        let mut body = [0u8; HelloRepr::LEN];
        HelloRepr { nonce }.emit(&mut body);
        let len = h.emit_with_body(buf, &body);
        self.stats.transmitted += 1;
        Some(Transmit {
            dst,
            len,
            queue: 0,
            dscp: 0,
            precise_len: HelloRepr::LEN,
            extra: false,
        })
    }

    /// When `handle_timeout` should next be called.
    // The heap's top (its entries are live): inlined into a driver that
    // asks after every call (the simulator, ~2 M times a simulated ms).
    #[inline]
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.timers.peek().map(|(t, _)| t)
    }
}
