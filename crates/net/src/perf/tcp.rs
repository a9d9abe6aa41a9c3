//! Kernel TCP baseline: one bulk flow, same measurements as the ATP modes.

use super::cpu::process_cpu_seconds;
use super::interval::Intervals;
use super::report::{cpu_per_gb, gbps, obj, Json};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Accepts one connection, reads until EOF, reports.
pub(crate) fn server(bind: SocketAddr) -> Result<Json, String> {
    let l = TcpListener::bind(bind).map_err(|e| format!("bind {bind}: {e}"))?;
    eprintln!(
        "tcp-server listening on {}",
        l.local_addr().map_err(|e| e.to_string())?
    );
    let (mut s, peer) = l.accept().map_err(|e| format!("accept: {e}"))?;
    let cpu0 = process_cpu_seconds();
    let t0 = Instant::now();
    let mut buf = vec![0u8; 256 << 10];
    let mut bytes = 0u64;
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => bytes += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let cpu = process_cpu_seconds() - cpu0;
    Ok(obj(vec![
        ("mode", json!("tcp-server")),
        ("peer", json!(peer.to_string())),
        ("bytes", json!(bytes)),
        ("elapsed_s", json!(secs)),
        ("goodput_gbps", json!(gbps(bytes, secs))),
        ("cpu_s", json!(cpu)),
        ("cpu_s_per_gb", json!(cpu_per_gb(cpu, bytes))),
    ]))
}

/// Sends for `duration` with congestion control `cc`, then closes;
/// interval reports every `interval` (printed when `print`).
pub(crate) fn client(
    server: SocketAddr,
    duration: Duration,
    cc: &str,
    interval: Option<Duration>,
    print: bool,
) -> Result<Json, String> {
    let mut s = TcpStream::connect(server).map_err(|e| format!("connect {server}: {e}"))?;
    let name = cc.as_bytes();
    // SAFETY: name is a valid buffer of the given length.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(format!(
            "TCP_CONGESTION {cc}: {}",
            std::io::Error::last_os_error()
        ));
    }
    let cpu0 = process_cpu_seconds();
    let t0 = Instant::now();
    let buf = vec![0x5au8; 256 << 10];
    let mut bytes = 0u64;
    let mut intervals = Intervals::new(interval, print, t0);
    while t0.elapsed() < duration {
        intervals.tick();
        match s.write(&buf) {
            Ok(n) => {
                bytes += n as u64;
                intervals.bytes(n as u64);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("write: {e}")),
        }
    }
    s.shutdown(std::net::Shutdown::Write)
        .map_err(|e| e.to_string())?;
    // Wait for the server to finish reading (it closes after EOF).
    let mut sink = [0u8; 64];
    let _ = s.read(&mut sink);
    let secs = t0.elapsed().as_secs_f64();
    let cpu = process_cpu_seconds() - cpu0;
    Ok(obj(vec![
        ("mode", json!("tcp-client")),
        ("cc", json!(cc)),
        ("bytes", json!(bytes)),
        ("elapsed_s", json!(secs)),
        ("goodput_gbps", json!(gbps(bytes, secs))),
        ("cpu_s", json!(cpu)),
        ("cpu_s_per_gb", json!(cpu_per_gb(cpu, bytes))),
    ]))
}
