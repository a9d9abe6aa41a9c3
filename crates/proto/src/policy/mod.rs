//! The ATP policies, one small type each, and the named variants of seed 000
//! §7.1.2–7.1.3 built from them.
//!
//! | variant  | rate control        | scheduler | TLR source | queue selector |
//! |----------|---------------------|-----------|------------|----------------|
//! | Base     | line rate           | new first | fixed      | fixed          |
//! | RC       | slack (eq. 2-3)     | new first | fixed      | fixed          |
//! | MRDF     | slack               | MRDF      | fixed      | fixed          |
//! | FixTLR   | slack               | MRDF      | fixed      | slack (= fixed, TLR never moves) |
//! | FixPrio  | slack               | MRDF      | dynamic    | fixed          |
//! | Full     | slack               | MRDF      | dynamic    | slack          |
//!
//! "slack" queue selection reads eq. 1's TLR bounded by the MSR's own queue
//! ([`QueueRule::MsrBounded`], the default) or as seed 000 §5.2 writes it
//! ([`QueueRule::Eq1`]); `Config::queue_rule` chooses.

mod queue;
mod rate;
mod sched;
mod tlr;
mod variant;

pub use queue::{
    netapprox_queue_limits, FixedQueue, MsrBoundedQueue, QueueRule, QueueSelector, SlackQueue,
};
pub use rate::{LineRate, RateController, RateInput, SlackRate};
pub use sched::{Mrdf, NewFirst, SchedKey, Scheduler};
pub use tlr::{DynamicTlr, FixedTlr, GroupProgress, TlrSource};
pub use variant::{Policies, Variant};
