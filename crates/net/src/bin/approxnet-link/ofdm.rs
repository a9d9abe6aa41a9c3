//! A rate-dependent BER: the bit error rate of an 802.11a/g OFDM rate's
//! constellation at a given SNR over AWGN (`--channel snr:DB`).
//!
//! Seed 002 measures that errors depend on the bitrate (Fig. 3) and that
//! the best bitrate for a transfer at a given distance depends on how
//! errors are handled (Fig. 6). Here a rate picks its constellation
//! (IEEE 802.11-2016 Table 17-4: 6 / 9 Mbit/s BPSK, 12 / 18 QPSK, 24 / 36
//! 16-QAM, 48 / 54 64-QAM) and the channel's per-bit rate is that
//! constellation's **uncoded** BER at Es/N0 = SNR (Eb/N0 = SNR / bits per
//! symbol; BPSK as QPSK per bit): the per-component bit error rate `P_bc`
//! of seed 004 eq. 3 from `approxnet_phy` — with Gray coding each of a
//! symbol's bits is wrong with that probability (eq. 4's `1 - (1 - P_bc)^2`
//! is the chance that an I/Q pair has an error, not a per-bit rate). The convolutional code is not modelled: rates
//! sharing a constellation get the same BER, and real 802.11's coding
//! gain (what makes Fig. 3's damaged frames at 48-54 Mbit/s cleaner) is
//! absent. The dependence it keeps is the first-order one: a faster rate
//! packs more bits per symbol and sees more errors at the same SNR.

use approxnet_phy::channel::Qam;

/// Bits per symbol of an 802.11a/g OFDM rate (Mbit/s), or `None`.
fn bits_per_symbol(rate_mbps: f64) -> Option<u32> {
    let table = [
        (6.0, 1),
        (9.0, 1),
        (12.0, 2),
        (18.0, 2),
        (24.0, 4),
        (36.0, 4),
        (48.0, 6),
        (54.0, 6),
    ];
    table.iter().find(|(r, _)| *r == rate_mbps).map(|&(_, b)| b)
}

/// The channel BER of `--channel snr:DB` at `--rate-mbps rate_mbps`.
pub(crate) fn snr_ber(snr_db: f64, rate_mbps: f64) -> Result<f64, String> {
    if !snr_db.is_finite() {
        return Err(format!("--channel snr: `{snr_db}` is not an SNR in dB"));
    }
    let bits = bits_per_symbol(rate_mbps).ok_or_else(|| {
        format!(
            "--rate-mbps {rate_mbps} with --channel snr: expected an 802.11a/g rate \
             (6, 9, 12, 18, 24, 36, 48 or 54)"
        )
    })?;
    let esn0 = 10f64.powf(snr_db / 10.0);
    // BPSK's BER per bit equals QPSK's at the same Eb/N0 (QPSK is two
    // BPSK streams in quadrature).
    let (m, ebn0) = match bits {
        1 => (4, esn0),
        b => (1u32 << b, esn0 / f64::from(b)),
    };
    let q = Qam::new(m).map_err(|e| e.to_string())?;
    q.ber_component(ebn0)
        .map_err(|e| format!("--channel snr: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faster_rates_see_more_errors_at_the_same_snr() {
        let at = |r| snr_ber(20.0, r).unwrap();
        assert!(at(6.0) < at(12.0) && at(12.0) < at(24.0) && at(24.0) < at(54.0));
        assert_eq!(at(48.0), at(54.0), "same constellation, no coding modelled");
        // BPSK at Eb/N0 = 10 dB: 0.5 erfc(sqrt(10)) = 3.87e-6.
        let b = snr_ber(10.0, 6.0).unwrap();
        assert!((b / 3.872e-6 - 1.0).abs() < 1e-3, "{b}");
        // 64-QAM at 20 dB SNR: Eb/N0 = 100/6; eq. 3 by hand.
        let arg = (6.0 * 6.0 * (100.0 / 6.0) / 63.0 / 4.0f64).sqrt();
        let pbc = 2.0 * (1.0 - 1.0 / 8.0) * approxnet_phy::ber::erfc(arg) / 6.0;
        assert!((at(54.0) / pbc - 1.0).abs() < 1e-9);
        assert!(snr_ber(20.0, 11.0).unwrap_err().contains("--rate-mbps"));
        assert!(snr_ber(f64::NAN, 54.0)
            .unwrap_err()
            .contains("--channel snr"));
    }
}
