//! A fixed-size bit set (per-packet and per-message bookkeeping).

#[derive(Clone, Debug, Default)]
pub(crate) struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    pub(crate) fn new(bits: usize) -> BitSet {
        BitSet {
            words: vec![0; bits.div_ceil(64)],
        }
    }
    pub(crate) fn get(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    /// Sets bit `i`; returns whether it was clear before.
    pub(crate) fn insert(&mut self, i: usize) -> bool {
        match self.words.get_mut(i / 64) {
            Some(w) => {
                let m = 1u64 << (i % 64);
                let was = *w & m == 0;
                *w |= m;
                was
            }
            None => false,
        }
    }
}
