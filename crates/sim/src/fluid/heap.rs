//! A min-heap of `f64` keys indexed by a small integer id, with in-place
//! key updates: each active flow has one completion time that moves
//! whenever its rate does, without stale entries piling up.

/// Min-heap of `(key, id)`, ties broken by id.
#[derive(Clone, Debug, Default)]
pub struct IndexedHeap {
    heap: Vec<(f64, u32)>,
    pos: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl IndexedHeap {
    /// Sets (inserts or moves) the key of `id`.
    pub fn set(&mut self, id: u32, key: f64) {
        if self.pos.len() <= id as usize {
            self.pos.resize(id as usize + 1, NONE);
        }
        let p = self.pos[id as usize];
        if p == NONE {
            self.heap.push((key, id));
            let i = self.heap.len() - 1;
            self.pos[id as usize] = i as u32;
            self.up(i);
        } else {
            let i = p as usize;
            let old = self.heap[i].0;
            self.heap[i].0 = key;
            if key < old {
                self.up(i);
            } else {
                self.down(i);
            }
        }
    }

    /// Whether `id` has a key.
    pub fn contains(&self, id: u32) -> bool {
        self.pos.get(id as usize).is_some_and(|&p| p != NONE)
    }

    /// Appends `id` (not present) without restoring the heap order; call
    /// [`IndexedHeap::heapify`] before the next other operation.
    pub fn push_unordered(&mut self, id: u32, key: f64) {
        if self.pos.len() <= id as usize {
            self.pos.resize(id as usize + 1, NONE);
        }
        debug_assert_eq!(self.pos[id as usize], NONE);
        self.pos[id as usize] = self.heap.len() as u32;
        self.heap.push((key, id));
    }

    /// Sets the key of `id` (inserting it if absent) without restoring the
    /// heap order; call [`IndexedHeap::heapify`] before any other operation.
    pub fn set_unordered(&mut self, id: u32, key: f64) {
        match self.pos.get(id as usize) {
            Some(&p) if p != NONE => self.heap[p as usize].0 = key,
            _ => self.push_unordered(id, key),
        }
    }

    /// Restores the heap order after [`IndexedHeap::push_unordered`] or
    /// [`IndexedHeap::set_unordered`], in linear time.
    pub fn heapify(&mut self) {
        for i in (0..self.heap.len() / 2).rev() {
            self.down(i);
        }
    }

    /// Empties the heap.
    pub fn clear(&mut self) {
        for &(_, id) in &self.heap {
            self.pos[id as usize] = NONE;
        }
        self.heap.clear();
    }

    /// Removes `id` if present.
    pub fn remove(&mut self, id: u32) {
        let Some(&p) = self.pos.get(id as usize) else {
            return;
        };
        if p == NONE {
            return;
        }
        let i = p as usize;
        self.pos[id as usize] = NONE;
        let last = self.heap.pop().expect("non-empty");
        if i < self.heap.len() {
            self.heap[i] = last;
            self.pos[last.1 as usize] = i as u32;
            self.up(i);
            self.down(self.pos[last.1 as usize] as usize);
        }
    }

    /// The smallest `(key, id)`.
    pub fn peek(&self) -> Option<(f64, u32)> {
        self.heap.first().copied()
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    fn less(a: (f64, u32), b: (f64, u32)) -> bool {
        a.0 < b.0 || (a.0 == b.0 && a.1 < b.1)
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        self.pos[self.heap[i].1 as usize] = i as u32;
        self.pos[self.heap[j].1 as usize] = j as u32;
    }

    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if Self::less(self.heap[i], self.heap[parent]) {
                self.swap(i, parent);
                i = parent;
            } else {
                break;
            }
        }
    }

    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < n && Self::less(self.heap[l], self.heap[m]) {
                m = l;
            }
            if r < n && Self::less(self.heap[r], self.heap[m]) {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(i, m);
            i = m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approxnet_proto::rng::Rng;

    #[test]
    fn pops_in_key_order_after_random_updates() {
        let mut h = IndexedHeap::default();
        let mut want = std::collections::BTreeMap::new();
        let mut rng = Rng::new(3);
        for _ in 0..2000 {
            let id = rng.below(100) as u32;
            match rng.below(3) {
                0 => {
                    h.remove(id);
                    want.remove(&id);
                }
                _ => {
                    let k = rng.below(50) as f64;
                    h.set(id, k);
                    want.insert(id, k);
                }
            }
            let best = want
                .iter()
                .map(|(&i, &k)| (k, i))
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            assert_eq!(h.peek(), best);
            assert_eq!(h.len(), want.len());
        }
    }

    #[test]
    fn heapify_orders_unordered_pushes() {
        let mut h = IndexedHeap::default();
        h.set(99, 0.5);
        h.clear();
        for (id, k) in [(3, 5.0), (1, 2.0), (7, 9.0), (2, 2.0), (5, 1.0)] {
            h.push_unordered(id, k);
        }
        h.heapify();
        h.set_unordered(7, 0.5);
        h.set_unordered(7, 9.0);
        h.heapify();
        let mut got = Vec::new();
        while let Some((k, id)) = h.peek() {
            h.remove(id);
            got.push((k, id));
        }
        assert_eq!(got, vec![(1.0, 5), (2.0, 1), (2.0, 2), (5.0, 3), (9.0, 7)]);
    }
}
