//! SAP sockets (seed 002, Selective Approximate Protocol): a connection
//! that is precise by default and switches to approximate mode and back at
//! run time.
//!
//! A SAP socket is one approxnet connection over UDP-Lite carrying one
//! open-ended streaming job per direction, with two groups:
//!
//! * group 0, **precise** (MSR 1): every datagram acknowledged,
//!   retransmitted until it arrives and delivered in order — with the
//!   core's congestion control, pacing and ACK coalescing (the paper's own
//!   precise mode had none, §4.3);
//! * group 1, **approximate** (MSR 0): sent once, never retransmitted; a
//!   datagram may start with a precise prefix. The kernel's UDP-Lite
//!   checksum covers the header and that prefix (coverage set per
//!   datagram), so a damaged prefix or header is dropped by the receiving
//!   kernel; the rest arrives as the link delivered it, with a CRC32C
//!   trailer that tells the receiver whether it was damaged.
//!
//! The handshake (HELLO / HELLO_ACK, the paper's `SAP_PING` / ACK), the
//! JOB announcing each stream and the FIN are the core's precise control
//! packets. `close` ends the stream at what was sent (`end_stream`), waits
//! until every precise datagram is acknowledged and then closes with FIN.
//!
//! ```no_run
//! use approxnet_net::sap::{Mode, SapConfig, SapListener, SapSocket};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let listener = SapListener::bind("127.0.0.1:0".parse()?, SapConfig::default())?;
//! let addr = listener.local_addr();
//! // elsewhere: let mut rx = listener.accept(None)?; rx.recv(None)?
//! let mut tx = SapSocket::connect("127.0.0.1:0".parse()?, addr, SapConfig::default())?;
//! tx.send(b"header, precise")?;
//! tx.set_mode(Mode::Approximate);
//! tx.send_with_prefix(b"len=4 then pixels...", 5)?;
//! tx.close(std::time::Duration::from_secs(2))?;
//! # Ok(()) }
//! ```

mod config;
mod error;
mod socket;

pub use config::{Mode, SapConfig};
pub use error::{CloseError, RecvError, SapError};
pub use socket::{Datagram, SapListener, SapSocket};
