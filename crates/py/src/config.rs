//! `Config` (endpoint) and `LinkConfig` (virtual link) as Python classes.
//! Numbers arrive as Python floats / ints in human units (Gbps, us, ms) and
//! are checked here or by the core; nothing is clamped.

use crate::errors::{Error, Int, Result};
use approxnet_proto::config::{Integrity, RetransmitPolicy};
use approxnet_proto::harness::LinkConfig;
use approxnet_proto::{Config, Duration, Rate, Variant};
use pyo3::prelude::*;

fn duration(field: &str, x: f64, scale_ns: f64) -> Result<Duration> {
    let ns = x * scale_ns;
    if !ns.is_finite() || ns < 0.0 || ns > u64::MAX as f64 {
        return Err(Error::ConfigValue(format!(
            "config field `{field}` = {x}: a finite, non-negative duration"
        )));
    }
    Ok(Duration::from_nanos(ns.round() as u64))
}

fn probability(field: &str, x: f64) -> Result<f64> {
    if x.is_nan() || !(0.0..=1.0).contains(&x) {
        return Err(Error::ConfigValue(format!(
            "link field `{field}` = {x}: a probability in [0, 1]"
        )));
    }
    Ok(x)
}

fn count(field: &str, x: i64, max: u64) -> Result<u64> {
    if x < 0 || x as u64 > max {
        return Err(Error::ConfigValue(format!(
            "config field `{field}` = {x}: 0 ..= {max}"
        )));
    }
    Ok(x as u64)
}

fn rate(field: &str, gbps: f64) -> Result<Rate> {
    if !(gbps.is_finite() && gbps > 0.0) {
        return Err(Error::ConfigValue(format!(
            "config field `{field}` = {gbps}: a positive, finite rate in Gbps"
        )));
    }
    Ok(Rate::gbps(gbps))
}

/// Endpoint configuration; every argument defaults to the core's default.
#[pyclass(name = "Config", module = "approxnet", frozen)]
#[derive(Clone)]
pub(crate) struct PyConfig {
    pub(crate) inner: Config,
    /// Whether `min_rto_us` was given (else a socket endpoint uses the
    /// runtime's default instead of the core's).
    pub(crate) min_rto_set: bool,
    /// Whether `pacing_burst_us` was given (same rule).
    pub(crate) pacing_burst_set: bool,
    /// Whether `ack_every` was given (same rule).
    pub(crate) ack_every_set: bool,
}

#[pymethods]
impl PyConfig {
    #[new]
    #[pyo3(signature = (*, variant=None, line_rate_gbps=None, mtu=None, initial_rtt_us=None,
        min_rto_us=None, reorder_threshold=None, idle_timeout_ms=None, pacing_burst_us=None,
        queues=None, retransmit=None, integrity=None, keep_payloads=None, rate_gain=None,
        rate_start_fraction=None, ack_every=None, bundle_bytes=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        variant: Option<&str>,
        line_rate_gbps: Option<f64>,
        mtu: Option<Int>,
        initial_rtt_us: Option<f64>,
        min_rto_us: Option<f64>,
        reorder_threshold: Option<Int>,
        idle_timeout_ms: Option<f64>,
        pacing_burst_us: Option<f64>,
        queues: Option<Int>,
        retransmit: Option<&str>,
        integrity: Option<&str>,
        keep_payloads: Option<bool>,
        rate_gain: Option<f64>,
        rate_start_fraction: Option<f64>,
        ack_every: Option<Int>,
        bundle_bytes: Option<Int>,
    ) -> Result<Self> {
        let mut c = Config::default();
        if let Some(v) = variant {
            c.variant = v.parse::<Variant>().map_err(|_| {
                Error::ConfigValue(format!(
                    "config field `variant` = {v:?}: one of base, rc, mrdf, fixtlr, fixprio, full"
                ))
            })?;
        }
        if let Some(x) = line_rate_gbps {
            c.line_rate = rate("line_rate_gbps", x)?;
        }
        if let Some(x) = mtu {
            c.mtu = count("mtu", x.0, 65_507)? as usize;
        }
        if let Some(x) = initial_rtt_us {
            c.initial_rtt = duration("initial_rtt_us", x, 1e3)?;
        }
        if let Some(x) = min_rto_us {
            c.min_rto = duration("min_rto_us", x, 1e3)?;
        }
        if let Some(x) = reorder_threshold {
            c.reorder_threshold = count("reorder_threshold", x.0, u32::MAX as u64)? as u32;
        }
        if let Some(x) = idle_timeout_ms {
            c.idle_timeout = duration("idle_timeout_ms", x, 1e6)?;
        }
        if let Some(x) = pacing_burst_us {
            c.pacing_burst = duration("pacing_burst_us", x, 1e3)?;
        }
        if let Some(x) = queues {
            c.queues = count("queues", x.0, 255)? as u8;
        }
        if let Some(r) = retransmit {
            c.retransmit = match r {
                "when_needed" => RetransmitPolicy::WhenNeeded,
                "fast_only" => RetransmitPolicy::FastOnly,
                _ => {
                    return Err(Error::ConfigValue(format!(
                        "config field `retransmit` = {r:?}: 'when_needed' or 'fast_only'"
                    )))
                }
            };
        }
        if let Some(i) = integrity {
            c.integrity = match i {
                "accept_damaged" => Integrity::AcceptDamaged,
                "strict" => Integrity::Strict,
                _ => {
                    return Err(Error::ConfigValue(format!(
                        "config field `integrity` = {i:?}: 'accept_damaged' or 'strict'"
                    )))
                }
            };
        }
        if let Some(k) = keep_payloads {
            c.keep_payloads = k;
        }
        if let Some(m) = rate_gain {
            c.rate.gain = m;
        }
        if let Some(s) = rate_start_fraction {
            c.rate.start_fraction = s;
        }
        if let Some(x) = ack_every {
            c.ack_every = count("ack_every", x.0, 64)? as u32;
        }
        if let Some(x) = bundle_bytes {
            c.bundle_bytes = count("bundle_bytes", x.0, 65_507)? as usize;
        }
        c.validate()?;
        Ok(PyConfig {
            inner: c,
            min_rto_set: min_rto_us.is_some(),
            pacing_burst_set: pacing_burst_us.is_some(),
            ack_every_set: ack_every.is_some(),
        })
    }

    /// ATP variant name.
    #[getter]
    fn variant(&self) -> &'static str {
        self.inner.variant.name()
    }
    /// NIC line rate, Gbps.
    #[getter]
    fn line_rate_gbps(&self) -> f64 {
        self.inner.line_rate.as_bps() / 1e9
    }
    /// Largest datagram, bytes.
    #[getter]
    fn mtu(&self) -> usize {
        self.inner.mtu
    }
    /// Switch priority queues.
    #[getter]
    fn queues(&self) -> u8 {
        self.inner.queues
    }
    /// Whether received payloads are kept.
    #[getter]
    fn keep_payloads(&self) -> bool {
        self.inner.keep_payloads
    }
    /// Minimum retransmission timeout, microseconds.
    #[getter]
    fn min_rto_us(&self) -> f64 {
        self.inner.min_rto.as_nanos() as f64 / 1e3
    }
    /// Idle timeout, milliseconds.
    #[getter]
    fn idle_timeout_ms(&self) -> f64 {
        self.inner.idle_timeout.as_nanos() as f64 / 1e6
    }
    /// DATA packets per ACK.
    #[getter]
    fn ack_every(&self) -> u32 {
        self.inner.ack_every
    }
    /// Most body bytes of a bundle of small messages (0: no bundling).
    #[getter]
    fn bundle_bytes(&self) -> usize {
        self.inner.bundle_bytes
    }

    fn __repr__(&self) -> String {
        format!(
            "Config(variant={:?}, line_rate_gbps={}, mtu={}, queues={}, keep_payloads={})",
            self.inner.variant.name(),
            self.inner.line_rate.as_bps() / 1e9,
            self.inner.mtu,
            self.inner.queues,
            if self.inner.keep_payloads {
                "True"
            } else {
                "False"
            }
        )
    }
}

/// One direction of the harness's deterministic virtual link.
#[pyclass(name = "LinkConfig", module = "approxnet", frozen)]
#[derive(Clone)]
pub(crate) struct PyLinkConfig {
    pub(crate) inner: LinkConfig,
}

#[pymethods]
impl PyLinkConfig {
    #[new]
    #[pyo3(signature = (*, delay_us=None, rate_gbps=None, buffer_bytes=None, ecn_threshold_bytes=None,
        loss=None, burst_enter=None, burst_exit=None, burst_loss=None, reorder=None,
        reorder_delay_us=None, duplicate=None, bit_flip=None, bit_flip_from=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        delay_us: Option<f64>,
        rate_gbps: Option<f64>,
        buffer_bytes: Option<Int>,
        ecn_threshold_bytes: Option<Int>,
        loss: Option<f64>,
        burst_enter: Option<f64>,
        burst_exit: Option<f64>,
        burst_loss: Option<f64>,
        reorder: Option<f64>,
        reorder_delay_us: Option<f64>,
        duplicate: Option<f64>,
        bit_flip: Option<f64>,
        bit_flip_from: Option<Int>,
    ) -> Result<Self> {
        let mut l = LinkConfig::default();
        if let Some(x) = delay_us {
            l.delay = duration("delay_us", x, 1e3)?;
        }
        if let Some(x) = rate_gbps {
            l.rate = rate("rate_gbps", x)?;
        }
        if let Some(x) = buffer_bytes {
            l.buffer = count("buffer_bytes", x.0, 1 << 40)? as usize;
        }
        if let Some(x) = ecn_threshold_bytes {
            l.ecn_threshold = count("ecn_threshold_bytes", x.0, 1 << 40)? as usize;
        }
        if let Some(x) = loss {
            l.loss = probability("loss", x)?;
        }
        if let Some(x) = burst_enter {
            l.burst_enter = probability("burst_enter", x)?;
        }
        if let Some(x) = burst_exit {
            l.burst_exit = probability("burst_exit", x)?;
        }
        if let Some(x) = burst_loss {
            l.burst_loss = probability("burst_loss", x)?;
        }
        if let Some(x) = reorder {
            l.reorder = probability("reorder", x)?;
        }
        if let Some(x) = reorder_delay_us {
            l.reorder_delay = duration("reorder_delay_us", x, 1e3)?;
        }
        if let Some(x) = duplicate {
            l.duplicate = probability("duplicate", x)?;
        }
        if let Some(x) = bit_flip {
            l.bit_flip = probability("bit_flip", x)?;
        }
        if let Some(x) = bit_flip_from {
            l.bit_flip_from = count("bit_flip_from", x.0, 1 << 20)? as usize;
        }
        Ok(PyLinkConfig { inner: l })
    }

    /// Independent loss probability per packet.
    #[getter]
    fn loss(&self) -> f64 {
        self.inner.loss
    }
    /// One-way delay, microseconds.
    #[getter]
    fn delay_us(&self) -> f64 {
        self.inner.delay.as_nanos() as f64 / 1e3
    }
    /// Bottleneck rate, Gbps.
    #[getter]
    fn rate_gbps(&self) -> f64 {
        self.inner.rate.as_bps() / 1e9
    }
    /// Bottleneck buffer, bytes.
    #[getter]
    fn buffer_bytes(&self) -> usize {
        self.inner.buffer
    }

    fn __repr__(&self) -> String {
        format!(
            "LinkConfig(delay_us={}, rate_gbps={}, buffer_bytes={}, loss={})",
            self.delay_us(),
            self.rate_gbps(),
            self.inner.buffer,
            self.inner.loss
        )
    }
}
