//! Each peer's frames in the order it sent them: a provider may complete a later small message
//! before an earlier large one it moves by its own rendezvous, and the engine needs a peer's
//! frames in order. Every frame carries its per-peer sequence number; one that arrives early
//! is kept (copied) until the ones before it have been handed on.

use std::collections::BTreeMap;

pub struct PeerOrder {
    next: Vec<u32>,
    early: Vec<BTreeMap<u32, Vec<u8>>>,
}

impl PeerOrder {
    pub fn new(peers: usize) -> PeerOrder {
        PeerOrder {
            next: vec![0; peers],
            early: vec![BTreeMap::new(); peers],
        }
    }

    /// Whether frame `seq` of `peer` is the one to hand on now; if not, it is kept.
    pub fn arrived(&mut self, peer: usize, seq: u32, frame: &[u8]) -> bool {
        if seq == self.next[peer] {
            return true;
        }
        self.early[peer].insert(seq, frame.to_vec());
        false
    }

    /// The frame of `peer` that was handed on is done; the next one, if it came early.
    pub fn handed(&mut self, peer: usize) -> Option<Vec<u8>> {
        self.next[peer] = self.next[peer].wrapping_add(1);
        self.early[peer].remove(&self.next[peer])
    }
}

#[cfg(test)]
mod tests {
    use super::PeerOrder;

    /// Hands frames on as a wire does, returning them in the order the engine sees them.
    fn deliver(o: &mut PeerOrder, peer: usize, seq: u32, frame: &[u8], seen: &mut Vec<Vec<u8>>) {
        if o.arrived(peer, seq, frame) {
            seen.push(frame.to_vec());
            while let Some(f) = o.handed(peer) {
                seen.push(f);
            }
        }
    }

    #[test]
    fn early_frames_wait_for_the_ones_before_them_per_peer() {
        let mut o = PeerOrder::new(2);
        let mut seen = Vec::new();
        deliver(&mut o, 0, 2, b"c", &mut seen);
        deliver(&mut o, 1, 0, b"x", &mut seen); // another peer is not held up
        deliver(&mut o, 0, 1, b"b", &mut seen);
        assert_eq!(seen, vec![b"x".to_vec()]);
        deliver(&mut o, 0, 0, b"a", &mut seen);
        assert_eq!(
            seen,
            [&b"x"[..], b"a", b"b", b"c"].map(|s| s.to_vec()).to_vec()
        );
        deliver(&mut o, 0, 3, b"d", &mut seen);
        assert_eq!(seen.last().unwrap(), b"d");
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut o = PeerOrder::new(1);
        o.next[0] = u32::MAX;
        let mut seen = Vec::new();
        deliver(&mut o, 0, 0, b"after", &mut seen);
        deliver(&mut o, 0, u32::MAX, b"last", &mut seen);
        assert_eq!(seen, vec![b"last".to_vec(), b"after".to_vec()]);
    }
}
