//! Channel models of seed 004 (§3.2, §4, §5.1.2): the bit error rate of OOK
//! and square M-QAM over an AWGN channel and its inverse, the multi-bit
//! symbol errors of §4.2.1, the M/2 and M/4 symbol mappings that trade
//! bandwidth for BER, the end-to-end BER over hops and the average bandwidth
//! of a message whose protected bits travel on the reliable mapping.
//!
//! Every function validates its input and answers a [`ChannelError`] naming
//! the bad field; none panics. Eb/N0 is always a linear ratio (see
//! [`crate::ber::db_to_linear`]).

mod bandwidth;
mod error;
mod hops;
mod inverse;
mod mapping;
mod modulation;
mod ook;
mod qam;
mod symbol_errors;

pub use bandwidth::average_bandwidth_factor;
pub use error::ChannelError;
pub use hops::end_to_end_ber;
pub use inverse::required_ebn0;
pub use mapping::SymbolMapping;
pub use modulation::Modulation;
pub use ook::ook_ber;
pub use qam::Qam;
pub use symbol_errors::{symbol_errors, SymbolErrors};

/// Checks a linear Eb/N0: finite and not negative.
fn check_ebn0(ebn0: f64) -> Result<f64, ChannelError> {
    if ebn0.is_finite() && ebn0 >= 0.0 {
        Ok(ebn0)
    } else {
        Err(ChannelError::EbN0 { value: ebn0 })
    }
}

/// Checks a target or nominal BER: strictly inside (0, 0.5).
fn check_target_ber(field: &'static str, ber: f64) -> Result<f64, ChannelError> {
    if ber > 0.0 && ber < 0.5 {
        Ok(ber)
    } else {
        Err(ChannelError::Ber { field, value: ber })
    }
}

/// `1 - (1 - p)^2` without cancellation for tiny `p` (seed 004 eq. 4: two
/// independent components, I and Q).
fn two_components(p: f64) -> f64 {
    p * (2.0 - p)
}
