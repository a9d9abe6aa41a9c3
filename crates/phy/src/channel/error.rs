//! The one error type of the channel models.

/// A channel-model input out of its domain.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ChannelError {
    /// Eb/N0 (linear) negative, NaN or infinite.
    #[error("ebn0 must be a finite linear ratio >= 0, got {value}")]
    EbN0 {
        /// The value given.
        value: f64,
    },
    /// A square M-QAM order that is not a power of 4 (4, 16, 64, ...).
    #[error("qam order m must be a power of 4 and at least 4, got {m}")]
    QamOrder {
        /// The order given.
        m: u32,
    },
    /// A target or nominal BER outside (0, 0.5).
    #[error("{field} must be a bit error rate in (0, 0.5), got {value}")]
    Ber {
        /// Which argument.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// A probability outside [0, 1] (or NaN).
    #[error("{field} must be a probability in [0, 1], got {value}")]
    Probability {
        /// Which argument.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// A bandwidth factor outside (0, 1] (or NaN).
    #[error("{field} must be a bandwidth factor in (0, 1], got {value}")]
    Factor {
        /// Which argument.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// The modulation cannot reach the target BER at any Eb/N0 >= 0: even a
    /// zero Eb/N0 gives a lower BER than asked (eq. 3 saturates), or the
    /// target is below what f64 can resolve.
    #[error("target BER {target} is out of reach of {modulation}: its BER spans [{lowest}, {highest}] over Eb/N0 >= 0")]
    Unreachable {
        /// The target asked for.
        target: f64,
        /// The modulation, in words.
        modulation: String,
        /// The lowest BER found (at the largest Eb/N0 tried).
        lowest: f64,
        /// The BER at Eb/N0 = 0.
        highest: f64,
    },
}
