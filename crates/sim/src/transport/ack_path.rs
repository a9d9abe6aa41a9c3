//! How a native receiver's ACK reaches its sender (`[transport] ack_path`).
//!
//! By default an ACK is a header-only packet that crosses the network back
//! like data: the receiver's NIC, every switch queue on the way (admission,
//! shared buffer, serialisation), every link's propagation. htsim's TCP
//! benchmark does not model that: in csg-htsim
//! `sim/datacenter/main_tcp.cpp` the reverse route is
//! `routein = new Route(); routein->push_back(tcpSrc);`, so
//! `TcpSink::send_ack` -> `Packet::sendOn` calls `TcpSrc::receivePacket`
//! directly, in the data packet's arrival event, through no queue, link or
//! delay. [`AckPath::Instant`] is that model, so that the two simulators
//! can be compared with the same work per data packet.

/// Where the ACKs that native receivers return for data packets travel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AckPath {
    /// Back through the network, as a packet (the default).
    #[default]
    Network,
    /// Straight to the sender at the same simulated instant, crossing
    /// nothing: handled by the sender at the end of the data packet's
    /// arrival event, after the receiver's own handling of it (htsim's
    /// `TcpSink::receivePacket` order). The ACK keeps everything it
    /// carries (cumulative ACK, ECN echo, SACK blocks, timestamp echo);
    /// only its crossing goes. SYN / SYN-ACK, EarlySend's stop signal
    /// and Aeolus's probes and credits still cross the network.
    Instant,
}

impl AckPath {
    /// Names accepted in scenario files, in [`AckPath`] order.
    pub const NAMES: &'static [&'static str] = &["network", "instant"];

    /// Parses a scenario file's name (see [`AckPath::NAMES`]).
    pub fn parse(s: &str) -> Option<AckPath> {
        match s {
            "network" => Some(AckPath::Network),
            "instant" => Some(AckPath::Instant),
            _ => None,
        }
    }

    /// Its scenario file name.
    pub fn name(self) -> &'static str {
        match self {
            AckPath::Network => "network",
            AckPath::Instant => "instant",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in AckPath::NAMES {
            assert_eq!(AckPath::parse(n).map(AckPath::name), Some(*n));
        }
        assert_eq!(AckPath::parse("Instant"), None);
        assert_eq!(AckPath::parse(""), None);
        assert_eq!(AckPath::default(), AckPath::Network);
    }
}
