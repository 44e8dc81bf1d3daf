//! Sub-communicators (MPI_Comm_split): the ranks that give the same colour form one, numbered
//! by key and then by their rank in the parent.
//!
//! Over a transport with communicators of its own (MPI) the transport makes it. Otherwise the
//! new communicator shares the transport, translating its members' numbers to the transport's
//! ranks, and takes a context pair no member has used: each rank counts the pairs it has
//! handed out over this transport, and the members agree on the largest count (an allreduce
//! over the parent), so a pair is never reused by ranks that could talk on it.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::error::{Result, TransportError};
use crate::transport::{Context, ReduceOp};

use super::{Comm, Group};

/// The most sub-communicators a rank can form over one transport (context pairs are a byte
/// of the frame header; pair 0 is the world's).
pub const MAX_SUBCOMMS: usize = Context::PAIRS as usize - 1;

impl Comm {
    /// Splits this communicator: ranks with the same `color` form a new one (`None`: this rank
    /// joins none, and gets `None`), ordered by `key`, ties by rank here. Every rank of this
    /// communicator must call it.
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Comm>> {
        if let Some(n) = self.native() {
            // The transport made it, so finishing it ends (frees) that transport.
            return Ok(n.split(color, key)?.map(|t| Comm {
                compute: self.compute.clone(),
                ..Comm::new(t)
            }));
        }
        let mine = [self.next_pair.load(Ordering::Relaxed) as u64];
        let mut agreed = [0u64];
        self.allreduce(&mine, &mut agreed, ReduceOp::Max)?;
        let pair = agreed[0];
        if pair > MAX_SUBCOMMS as u64 {
            return Err(TransportError::Usage(format!(
                "split: no context left for another communicator; a rank can form at most {MAX_SUBCOMMS} over one fabric"
            )));
        }
        self.next_pair.store(pair as u8 + 1, Ordering::Relaxed);
        let me = [color.map(i64::from).unwrap_or(-1), key as i64];
        let mut all = vec![0i64; 2 * self.size];
        self.allgather(&me, &mut all)?;
        let Some(color) = color else {
            return Ok(None);
        };
        let mut members: Vec<(i64, usize)> = (0..self.size)
            .filter(|r| all[2 * r] == color as i64)
            .map(|r| (all[2 * r + 1], r))
            .collect();
        members.sort();
        let members = members
            .into_iter()
            .map(|(_, r)| self.peer(r))
            .collect::<Result<Vec<usize>>>()?;
        let mut index = vec![None; self.t.size()];
        for (i, m) in members.iter().enumerate() {
            index[*m] = Some(i);
        }
        let me_in_transport = self.peer(self.rank)?;
        let rank = index[me_in_transport].expect("this rank gave the colour");
        let (p2p, coll) = Context::pair(pair as u8);
        Ok(Some(Comm {
            t: self.t.clone(),
            rank,
            size: members.len(),
            group: Some(Arc::new(Group { members, index })),
            p2p,
            coll,
            next_pair: self.next_pair.clone(),
            order: self.order,
            owns_transport: false,
            ids: Default::default(),
            compute: self.compute.clone(),
        }))
    }
}
