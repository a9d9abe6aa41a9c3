//! Typed views over approxnet datagrams (smoltcp style).
//!
//! Every datagram starts with the fixed [`header`] (48 bytes, versioned,
//! CRC32C-protected over the header and the payload's precise prefix).
//! What follows depends on the packet type: a DATA payload, or one of the
//! control bodies in [`ack`], [`job`] and [`control`]. The byte layout is
//! drawn in `docs/wire-format.md`.
//!
//! Each format has a `Packet<T: AsRef<[u8]>>` view whose accessors cannot
//! panic once `new_checked` succeeded, and a plain `Repr` value with
//! `parse` / `emit` / `buffer_len`.

pub mod ack;
pub mod body;
pub mod control;
pub mod crc;
mod error;
pub mod header;
pub mod job;

pub use ack::{AckRepr, SeqRange, MAX_ACK_RANGES};
pub use body::{BundleRecord, BundleRecords, APPROX_CRC_LEN, BUNDLE_RECORD_LEN};
pub use control::{FinRepr, HelloRepr, ResetReason};
pub use error::WireError;
pub use header::{Flags, HeaderRepr, Packet, PacketType, HEADER_LEN, VERSION};
pub use job::{Dtype, GroupDesc, JobRepr, TensorDesc, MAX_GROUPS};

pub(crate) fn get_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
pub(crate) fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
pub(crate) fn get_u64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(x)
}
pub(crate) fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}
pub(crate) fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}
pub(crate) fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}
