//! CPU time of this process (user + system), for CPU-per-GB figures.

/// Seconds of CPU this process used so far.
pub(crate) fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}
