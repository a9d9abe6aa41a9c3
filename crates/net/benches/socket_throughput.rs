//! Socket-layer throughput on 127.0.0.1: one `sendto` per datagram vs
//! `sendmmsg` batches vs UDP GSO (ours, and `quinn-udp`'s), plus UDP-Lite.
//!
//! A benchmark, not a test: it prints figures and asserts nothing.
//! `cargo bench -p approxnet-net --bench socket_throughput -- [datagrams] [size]`
//!
//! Each method sends the same datagrams to a receiver thread that drains with
//! `recvmmsg` (+ GRO where on). Reported per method: offered rate (sender
//! wall clock), delivered rate, delivered fraction, and CPU seconds per GB
//! delivered (sender + receiver thread, user + system, from `getrusage`).

use approxnet_net::sys::{
    socket::cscov_for, Marking, RecvQueue, SendQueue, Socket, SocketKind, SocketOptions,
};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Send-queue depth in datagrams: about 0.5 MB of 1400-byte datagrams, so
/// the queue stays cache-resident, as in the runtime.
const QUEUE: usize = 384;

fn thread_cpu() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

#[derive(Clone, Copy, PartialEq)]
enum Method {
    SendTo,
    Sendmmsg,
    SendmmsgGso,
    QuinnUdpGso,
    UdpLiteSendmmsg,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::SendTo => "sendto (1 syscall/datagram)",
            Method::Sendmmsg => "sendmmsg x64 (ours)",
            Method::SendmmsgGso => "sendmmsg + GSO x64 (ours)",
            Method::QuinnUdpGso => "quinn-udp sendmsg + GSO",
            Method::UdpLiteSendmmsg => "UDP-Lite sendmmsg x64, cov 48+64",
        }
    }
}

struct Outcome {
    wall: f64,
    sent: u64,
    delivered: u64,
    cpu: f64,
}

fn run(method: Method, count: usize, size: usize) -> Outcome {
    let kind = if method == Method::UdpLiteSendmmsg {
        SocketKind::UdpLite
    } else {
        SocketKind::Udp
    };
    let opts = SocketOptions {
        kind,
        recv_buffer: 16 << 20,
        send_buffer: 16 << 20,
        ..SocketOptions::default()
    };
    let rx = Socket::bind("127.0.0.1:0".parse().unwrap(), &opts).unwrap();
    let dst = rx.local_addr();
    let done = Arc::new(AtomicBool::new(false));
    let done_rx = done.clone();
    let receiver = std::thread::spawn(move || {
        let cpu0 = thread_cpu();
        let mut q = RecvQueue::new(32, if rx.gro_enabled() { 65_535 } else { 2048 });
        loop {
            match q.recv(&rx) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let (readable, _) = rx.wait(false, Some(Duration::from_millis(200))).unwrap();
                    if !readable && done_rx.load(Ordering::Acquire) {
                        break;
                    }
                }
                Err(e) => panic!("recv: {e}"),
            }
        }
        (q.stats.datagrams, thread_cpu() - cpu0)
    });
    let payload = vec![0xa5u8; size];
    let _ = &payload;
    let cpu0 = thread_cpu();
    let t0 = Instant::now();
    let sent = match method {
        Method::SendTo => {
            let s = UdpSocket::bind("127.0.0.1:0").unwrap();
            for _ in 0..count {
                s.send_to(&payload, dst).unwrap();
            }
            count as u64
        }
        Method::QuinnUdpGso => {
            let s = UdpSocket::bind("127.0.0.1:0").unwrap();
            let state = quinn_udp::UdpSocketState::new((&s).into()).unwrap();
            // One GSO send carries at most 64 KiB.
            let segs = state
                .max_gso_segments()
                .clamp(1, 64)
                .min(65_507 / size)
                .max(1);
            let big = payload.repeat(segs);
            let mut left = count;
            while left > 0 {
                let n = left.min(segs);
                let t = quinn_udp::Transmit {
                    destination: dst,
                    ecn: None,
                    contents: &big[..n * size],
                    segment_size: Some(size),
                    src_ip: None,
                };
                state.send((&s).into(), &t).unwrap();
                left -= n;
            }
            count as u64
        }
        Method::Sendmmsg | Method::SendmmsgGso | Method::UdpLiteSendmmsg => {
            let tx_opts = SocketOptions {
                gso: method == Method::SendmmsgGso,
                ..opts.clone()
            };
            let tx = Socket::bind("127.0.0.1:0".parse().unwrap(), &tx_opts).unwrap();
            let mut q = SendQueue::new(QUEUE, QUEUE * size);
            let cov = if kind == SocketKind::UdpLite {
                cscov_for(48 + 64, size)
            } else {
                0
            };
            let mark = Marking::new(10, 0, None);
            let mut left = count;
            while left > 0 {
                // Datagrams are written in place (as the endpoint encodes
                // into the queue); only a sequence number changes per datagram.
                while left > 0 {
                    let Some(slot) = q.reserve(size) else { break };
                    slot[..8].copy_from_slice(&(left as u64).to_be_bytes());
                    q.commit(size, dst, mark, cov, tx.gso_enabled());
                    left -= 1;
                }
                q.flush(&tx).unwrap();
                if !q.is_empty() {
                    tx.wait(true, Some(Duration::from_secs(5))).unwrap();
                }
            }
            while !q.is_empty() {
                q.flush(&tx).unwrap();
                if !q.is_empty() {
                    tx.wait(true, Some(Duration::from_secs(5))).unwrap();
                }
            }
            q.stats.datagrams
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    let tx_cpu = thread_cpu() - cpu0;
    done.store(true, Ordering::Release);
    let (delivered, rx_cpu) = receiver.join().unwrap();
    Outcome {
        wall,
        sent,
        delivered,
        cpu: tx_cpu + rx_cpu,
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let count: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let size: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1400);
    let _: SocketAddr = "127.0.0.1:0".parse().unwrap();
    println!("socket_throughput: {count} datagrams of {size} bytes to 127.0.0.1, receiver recvmmsg x32 (+GRO)");
    println!(
        "{:<34} {:>10} {:>12} {:>10} {:>10} {:>12}",
        "method", "wall s", "offered Gbps", "deliv Gbps", "deliv %", "CPU s/GB"
    );
    for m in [
        Method::SendTo,
        Method::Sendmmsg,
        Method::SendmmsgGso,
        Method::QuinnUdpGso,
        Method::UdpLiteSendmmsg,
    ] {
        let o = run(m, count, size);
        let gb_sent = o.sent as f64 * size as f64 / 1e9;
        let gb_deliv = o.delivered as f64 * size as f64 / 1e9;
        println!(
            "{:<34} {:>10.3} {:>12.2} {:>10.2} {:>10.1} {:>12.2}",
            m.name(),
            o.wall,
            gb_sent * 8.0 / o.wall,
            gb_deliv * 8.0 / o.wall,
            100.0 * o.delivered as f64 / o.sent.max(1) as f64,
            if gb_deliv > 0.0 {
                o.cpu / gb_deliv
            } else {
                f64::NAN
            },
        );
    }
}
