//! The fixed 48-byte header every approxnet datagram starts with.
//!
//! ```text
//!  0        1        2        3
//! +--------+--------+--------+--------+
//! | version|  type  | flags  | rsvd   |  0
//! +--------+--------+--------+--------+
//! |        connection id (64)         |  4
//! |                                   |
//! +-----------------------------------+
//! |            job id (32)            | 12
//! +-----------------+-----------------+
//! |   group (16)    |   epoch (16)    | 16
//! +-----------------+-----------------+
//! |          message id (32)          | 20
//! +-----------------------------------+
//! |       transmission seq (32)       | 24
//! +-----------------+-----------------+
//! | pkt index (16)  | pkt count (16)  | 28
//! +-----------------+-----------------+
//! |        element start (32)         | 32
//! |        element end (32)           | 36
//! +-----------------+-----------------+
//! | precise len(16) |  body len (16)  | 40
//! +-----------------+-----------------+
//! |            crc32c (32)            | 44
//! +-----------------------------------+
//! ```
//!
//! The CRC32C covers bytes 0..44 (with the network-writable CE flag masked
//! out) followed by the first `precise len` bytes of the body (seed 002
//! section 3: header and precise data are checked, approximate data is not),
//! or the header alone when the PREFIX_BY_TRANSPORT flag delegates the
//! prefix to the transport's checksum.
//! Control packets are always precise: their precise length must equal the
//! body length.

use super::{get_u16, get_u32, get_u64, put_u16, put_u32, put_u64, WireError};

/// The wire version this crate emits and accepts.
pub const VERSION: u8 = 1;
/// Bytes in the fixed header.
pub const HEADER_LEN: usize = 48;

mod field {
    use core::ops::Range;
    pub(super) const VERSION: usize = 0;
    pub(super) const TYPE: usize = 1;
    pub(super) const FLAGS: usize = 2;
    pub(super) const RSVD: usize = 3;
    pub(super) const CONN: Range<usize> = 4..12;
    pub(super) const JOB: usize = 12;
    pub(super) const GROUP: usize = 16;
    pub(super) const EPOCH: usize = 18;
    pub(super) const MSG: usize = 20;
    pub(super) const SEQ: usize = 24;
    pub(super) const PKT_INDEX: usize = 28;
    pub(super) const PKT_COUNT: usize = 30;
    pub(super) const ELEM_START: usize = 32;
    pub(super) const ELEM_END: usize = 36;
    pub(super) const PRECISE: usize = 40;
    pub(super) const BODY_LEN: usize = 42;
    pub(super) const CRC: usize = 44;
}

/// What a datagram is. Unknown codepoints round-trip as `Unknown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketType {
    /// Message payload (or a tensor chunk).
    Data,
    /// Acknowledgement of DATA, JOB and FIN.
    Ack,
    /// Client's first packet: carries the client nonce.
    Hello,
    /// Server's answer: carries the connection id and echoes the nonce.
    HelloAck,
    /// Sender finished a job (or, with the close flag, the connection).
    Fin,
    /// Receiver saw the FIN.
    FinAck,
    /// Announces a job: its groups, their sizes and required deliveries.
    Job,
    /// Abort: the connection is gone.
    Reset,
    /// A codepoint this version does not know.
    Unknown(u8),
}

impl From<u8> for PacketType {
    fn from(v: u8) -> Self {
        match v {
            1 => PacketType::Data,
            2 => PacketType::Ack,
            3 => PacketType::Hello,
            4 => PacketType::HelloAck,
            5 => PacketType::Fin,
            6 => PacketType::FinAck,
            7 => PacketType::Job,
            8 => PacketType::Reset,
            x => PacketType::Unknown(x),
        }
    }
}

impl From<PacketType> for u8 {
    fn from(t: PacketType) -> u8 {
        match t {
            PacketType::Data => 1,
            PacketType::Ack => 2,
            PacketType::Hello => 3,
            PacketType::HelloAck => 4,
            PacketType::Fin => 5,
            PacketType::FinAck => 6,
            PacketType::Job => 7,
            PacketType::Reset => 8,
            PacketType::Unknown(x) => x,
        }
    }
}

impl PacketType {
    /// Control packets are always precise (seed 002 section 3, rule 6).
    pub fn is_control(self) -> bool {
        !matches!(self, PacketType::Data)
    }
}

/// Header flag bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags(pub u8);

impl Flags {
    /// Congestion experienced: set by a switch (or copied from the IP ECN
    /// bits by the runtime). Not covered by the checksum.
    pub const CE: u8 = 0x01;
    /// ECN echo: the DATA packet this ACK answers carried CE.
    pub const ECE: u8 = 0x02;
    /// The DATA body ends with a CRC32C (4 bytes) of its approximate region.
    pub const APPROX_CRC: u8 = 0x04;
    /// FIN closes the whole connection, not only a job.
    pub const CLOSE: u8 = 0x08;
    /// DATA carries a tensor chunk; the element range is meaningful.
    pub const TENSOR: u8 = 0x10;
    /// ACK for a JOB packet: the receiver knows this job.
    pub const JOB_KNOWN: u8 = 0x20;
    /// DATA whose precise prefix is protected by the carrying transport's
    /// checksum (UDP, or UDP-Lite with coverage = header + prefix): the
    /// CRC32C then covers the header only. Receivers accept it only when
    /// configured to trust their transport's checksum.
    pub const PREFIX_BY_TRANSPORT: u8 = 0x40;
    /// DATA carrying several whole one-packet messages of one group: the
    /// body is a sequence of records `message id (32) | length (16) |
    /// payload`, all precise; the header's message id is the first
    /// record's.
    pub const BUNDLE: u8 = 0x80;

    /// Whether every bit of `bit` is set.
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit == bit
    }
    /// Sets or clears `bit`.
    pub fn set(&mut self, bit: u8, on: bool) {
        if on {
            self.0 |= bit
        } else {
            self.0 &= !bit
        }
    }
}

/// A read/write view over a datagram's bytes.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps bytes without checking them; accessors may panic on short input.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps bytes after [`Packet::check_len`]: no accessor can panic after this.
    pub fn new_checked(buffer: T) -> Result<Packet<T>, WireError> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the header is present and its body-length field tells the truth.
    pub fn check_len(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(WireError::Truncated {
                have: b.len(),
                need: HEADER_LEN,
            });
        }
        let claimed = get_u16(b, field::BODY_LEN) as usize;
        let actual = b.len() - HEADER_LEN;
        if claimed != actual {
            return Err(WireError::LengthMismatch { claimed, actual });
        }
        let precise = get_u16(b, field::PRECISE) as usize;
        if precise > claimed {
            return Err(WireError::Malformed("precise prefix longer than body"));
        }
        Ok(())
    }

    /// Unwraps the bytes.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Wire version.
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }
    /// Packet type.
    pub fn packet_type(&self) -> PacketType {
        self.buffer.as_ref()[field::TYPE].into()
    }
    /// Flag bits.
    pub fn flags(&self) -> Flags {
        Flags(self.buffer.as_ref()[field::FLAGS])
    }
    /// Reserved byte (zero when emitted by this version).
    pub fn reserved(&self) -> u8 {
        self.buffer.as_ref()[field::RSVD]
    }
    /// Connection id.
    pub fn conn_id(&self) -> u64 {
        get_u64(self.buffer.as_ref(), field::CONN.start)
    }
    /// Job id.
    pub fn job_id(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::JOB)
    }
    /// Group id.
    pub fn group(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::GROUP)
    }
    /// Sender epoch when emitted (ACKs echo it).
    pub fn epoch(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::EPOCH)
    }
    /// Message id within its group.
    pub fn msg_id(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::MSG)
    }
    /// Transmission sequence number (a retransmission gets a new one).
    pub fn seq(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::SEQ)
    }
    /// Index of this packet within its message.
    pub fn pkt_index(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::PKT_INDEX)
    }
    /// Number of packets in the message.
    pub fn pkt_count(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::PKT_COUNT)
    }
    /// First element carried (tensor chunks).
    pub fn elem_start(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::ELEM_START)
    }
    /// One past the last element carried (tensor chunks).
    pub fn elem_end(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::ELEM_END)
    }
    /// Bytes at the start of the body covered by the checksum.
    pub fn precise_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::PRECISE)
    }
    /// Body length in bytes.
    pub fn body_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::BODY_LEN)
    }
    /// The checksum field.
    pub fn checksum(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::CRC)
    }
    /// The bytes after the header.
    pub fn body(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }

    /// CRC32C over the header (CE masked, CRC field excluded) and the precise prefix.
    pub fn compute_checksum(&self) -> u32 {
        let b = self.buffer.as_ref();
        // The header as it lies, CE masked in the CRC's first word (no
        // copy: `crc32c_44_masked_then`). The length check panics as the
        // copy did on a buffer shorter than a header.
        let Some(head) = b.first_chunk::<{ field::CRC }>() else {
            panic!("a packet buffer holds at least a header");
        };
        let keep0 = !((Flags::CE as u64) << (8 * field::FLAGS));
        let precise = if self.flags().has(Flags::PREFIX_BY_TRANSPORT) {
            0
        } else {
            (self.precise_len() as usize).min(b.len() - HEADER_LEN)
        };
        super::crc::crc32c_44_masked_then(head, keep0, &b[HEADER_LEN..HEADER_LEN + precise])
    }

    /// Whether the stored checksum matches.
    pub fn verify_checksum(&self) -> bool {
        self.compute_checksum() == self.checksum()
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn b(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    /// Sets or clears the CE bit (what a congested switch does).
    pub fn set_ce(&mut self, on: bool) {
        let mut f = self.flags();
        f.set(Flags::CE, on);
        self.b()[field::FLAGS] = f.0;
    }
    /// Mutable access to the body bytes.
    pub fn body_mut(&mut self) -> &mut [u8] {
        &mut self.b()[HEADER_LEN..]
    }
    /// Computes and stores the checksum; call after header and body are written.
    pub fn fill_checksum(&mut self) {
        let c = self.compute_checksum();
        put_u32(self.b(), field::CRC, c);
    }
}

/// The header as plain values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HeaderRepr {
    /// Packet type.
    pub ty: PacketTypeField,
    /// Flag bits.
    pub flags: Flags,
    /// Connection id (zero in HELLO).
    pub conn_id: u64,
    /// Job id.
    pub job_id: u32,
    /// Group id.
    pub group: u16,
    /// Epoch (sender's, echoed by ACKs).
    pub epoch: u16,
    /// Message id within the group.
    pub msg_id: u32,
    /// Transmission sequence number.
    pub seq: u32,
    /// Packet index within the message.
    pub pkt_index: u16,
    /// Packets in the message.
    pub pkt_count: u16,
    /// First element (tensor chunks).
    pub elem_start: u32,
    /// One past the last element (tensor chunks).
    pub elem_end: u32,
    /// Checksum-covered prefix of the body.
    pub precise_len: u16,
    /// Body length.
    pub body_len: u16,
}

/// A [`PacketType`] with a `Default` (DATA), so `HeaderRepr` can derive one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacketTypeField(pub PacketType);

impl Default for PacketTypeField {
    fn default() -> Self {
        PacketTypeField(PacketType::Data)
    }
}

impl HeaderRepr {
    /// Parses and validates a header: version, lengths, checksum and the
    /// per-type field rules. Never panics, whatever the bytes.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<HeaderRepr, WireError> {
        let mut h = HeaderRepr::default();
        HeaderRepr::parse_into(p, &mut h)?;
        Ok(h)
    }

    /// [`HeaderRepr::parse`] into `out` (left as it was on an error): the
    /// endpoint's receive path parses into its own value, where a returned
    /// `Result` cost a copy of the 44-byte header per datagram.
    pub(crate) fn parse_into<T: AsRef<[u8]>>(
        p: &Packet<T>,
        out: &mut HeaderRepr,
    ) -> Result<(), WireError> {
        p.check_len()?;
        if p.version() != VERSION {
            return Err(WireError::BadVersion(p.version()));
        }
        let ty = p.packet_type();
        let body_len = p.body_len();
        let precise_len = p.precise_len();
        if ty.is_control() && precise_len != body_len {
            return Err(WireError::Malformed(
                "control packet with an approximate region",
            ));
        }
        if !p.verify_checksum() {
            return Err(WireError::BadChecksum);
        }
        if ty == PacketType::Data {
            if p.pkt_count() == 0 || p.pkt_index() >= p.pkt_count() {
                return Err(WireError::Malformed("packet index outside its message"));
            }
            if p.elem_start() > p.elem_end() {
                return Err(WireError::Malformed("element range ends before it starts"));
            }
        }
        *out = HeaderRepr {
            ty: PacketTypeField(ty),
            flags: p.flags(),
            conn_id: p.conn_id(),
            job_id: p.job_id(),
            group: p.group(),
            epoch: p.epoch(),
            msg_id: p.msg_id(),
            seq: p.seq(),
            pkt_index: p.pkt_index(),
            pkt_count: p.pkt_count(),
            elem_start: p.elem_start(),
            elem_end: p.elem_end(),
            precise_len,
            body_len,
        };
        Ok(())
    }

    /// Bytes this header plus its body occupy.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.body_len as usize
    }

    /// Writes the header fields (not the checksum) into `buf[..HEADER_LEN]`.
    /// Write the body, then call [`Packet::fill_checksum`].
    #[inline]
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..HEADER_LEN];
        b[field::VERSION] = VERSION;
        b[field::TYPE] = self.ty.0.into();
        b[field::FLAGS] = self.flags.0;
        b[field::RSVD] = 0;
        put_u64(b, field::CONN.start, self.conn_id);
        put_u32(b, field::JOB, self.job_id);
        put_u16(b, field::GROUP, self.group);
        put_u16(b, field::EPOCH, self.epoch);
        put_u32(b, field::MSG, self.msg_id);
        put_u32(b, field::SEQ, self.seq);
        put_u16(b, field::PKT_INDEX, self.pkt_index);
        put_u16(b, field::PKT_COUNT, self.pkt_count);
        put_u32(b, field::ELEM_START, self.elem_start);
        put_u32(b, field::ELEM_END, self.elem_end);
        put_u16(b, field::PRECISE, self.precise_len);
        put_u16(b, field::BODY_LEN, self.body_len);
        put_u32(b, field::CRC, 0);
    }

    /// [`HeaderRepr::emit`] with `precise_len` and `body_len` both `len`
    /// (a control packet's: its body is all precise), whatever this
    /// value holds there: an ACK is written from the DATA header it echoes.
    #[inline]
    pub(crate) fn emit_sized(&self, buf: &mut [u8], len: u16) {
        self.emit(buf);
        put_u16(buf, field::PRECISE, len);
        put_u16(buf, field::BODY_LEN, len);
    }

    /// Emits header + `body` into `buf` and fills the checksum; returns the
    /// datagram length. `buf` must hold `HEADER_LEN + body.len()` bytes.
    pub fn emit_with_body(&self, buf: &mut [u8], body: &[u8]) -> usize {
        let n = HEADER_LEN + body.len();
        self.emit(buf);
        buf[HEADER_LEN..n].copy_from_slice(body);
        Packet::new_unchecked(&mut buf[..n]).fill_checksum();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> HeaderRepr {
        HeaderRepr {
            ty: PacketTypeField(PacketType::Data),
            flags: Flags(Flags::TENSOR),
            conn_id: 0x0102_0304_0506_0708,
            job_id: 9,
            group: 3,
            epoch: 17,
            msg_id: 42,
            seq: 1000,
            pkt_index: 1,
            pkt_count: 4,
            elem_start: 350,
            elem_end: 700,
            precise_len: 2,
            body_len: 6,
        }
    }

    #[test]
    fn emit_then_parse_bytes() {
        let r = sample();
        let mut buf = [0u8; 54];
        let n = r.emit_with_body(&mut buf, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(n, 54);
        assert_eq!(&buf[..4], &[1, 1, 0x10, 0]);
        assert_eq!(&buf[4..12], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&buf[40..44], &[0, 2, 0, 6]);
        let p = Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(HeaderRepr::parse(&p).unwrap(), r);
    }

    #[test]
    fn approximate_region_is_not_checked_but_precise_is() {
        let r = sample();
        let mut buf = [0u8; 54];
        r.emit_with_body(&mut buf, &[1, 2, 3, 4, 5, 6]);
        let mut flipped = buf;
        flipped[HEADER_LEN + 5] ^= 0x80; // approximate byte
        assert!(HeaderRepr::parse(&Packet::new_checked(&flipped[..]).unwrap()).is_ok());
        let mut flipped = buf;
        flipped[HEADER_LEN] ^= 0x01; // precise byte
        assert_eq!(
            HeaderRepr::parse(&Packet::new_checked(&flipped[..]).unwrap()),
            Err(WireError::BadChecksum)
        );
    }

    #[test]
    fn ce_bit_does_not_break_checksum() {
        let mut buf = [0u8; 54];
        sample().emit_with_body(&mut buf, &[0; 6]);
        let mut p = Packet::new_checked(&mut buf[..]).unwrap();
        p.set_ce(true);
        let h = HeaderRepr::parse(&p).unwrap();
        assert!(h.flags.has(Flags::CE));
    }

    #[test]
    fn lying_length_is_refused() {
        let mut buf = [0u8; 54];
        sample().emit_with_body(&mut buf, &[0; 6]);
        assert_eq!(
            Packet::new_checked(&buf[..53]).unwrap_err(),
            WireError::LengthMismatch {
                claimed: 6,
                actual: 5
            }
        );
        assert!(matches!(
            Packet::new_checked(&buf[..10]),
            Err(WireError::Truncated { .. })
        ));
    }

    #[test]
    fn unknown_type_round_trips() {
        let mut r = sample();
        r.ty = PacketTypeField(PacketType::Unknown(200));
        r.precise_len = 6;
        let mut buf = [0u8; 54];
        r.emit_with_body(&mut buf, &[0; 6]);
        let h = HeaderRepr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap();
        assert_eq!(h.ty.0, PacketType::Unknown(200));
    }

    #[test]
    fn control_packets_must_be_fully_precise() {
        let mut r = sample();
        r.ty = PacketTypeField(PacketType::Ack);
        let mut buf = [0u8; 54];
        r.emit_with_body(&mut buf, &[0; 6]);
        assert!(matches!(
            HeaderRepr::parse(&Packet::new_checked(&buf[..]).unwrap()),
            Err(WireError::Malformed(_))
        ));
    }
}
