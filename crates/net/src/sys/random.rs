//! Randomness from the operating system, for the secrets a real endpoint
//! must not share with anyone who runs the same binary: the cookie key,
//! connection ids and first sequence numbers all derive from the core's
//! seed, so a fixed default seed made every server hand out the same ids.

use std::io::Read;

/// 64 random bits from the kernel (`getrandom(2)`, else `/dev/urandom`).
pub fn os_u64() -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    // SAFETY: the buffer is valid for writes of its length; flags 0 blocks
    // only until the kernel's pool is initialised (once, at boot).
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    }
    Ok(u64::from_ne_bytes(b))
}

#[cfg(test)]
mod tests {
    #[test]
    fn draws_differ() {
        let a = super::os_u64().unwrap();
        let b = super::os_u64().unwrap();
        assert_ne!(a, b, "two 64-bit draws from the OS were equal");
    }
}
