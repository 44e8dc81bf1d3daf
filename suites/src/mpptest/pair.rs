//! mpptest's point-to-point tests: round trips or head-to-head exchanges, blocking or not,
//! between ranks 0 and 1 (the others wait), or between every rank and its partner `distance`
//! away with `-bisect`. Rank 0 always times a pair it belongs to.

use transports::comm::Comm;

use super::params::{Pattern, Protocol};
use crate::buffer::AlignedBuf;
use crate::suite::SuiteError;

const TAG: i32 = 1;

/// What a rank does in a pair test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Sends first (and times, on rank 0).
    Master(usize),
    /// Answers.
    Slave(usize),
    /// Takes no part.
    Bystander,
}

/// Ranks 0 and 1 paired; the rest stand by (mpptest's default pair).
pub fn pair_role(rank: usize) -> Role {
    match rank {
        0 => Role::Master(1),
        1 => Role::Slave(0),
        _ => Role::Bystander,
    }
}

/// mpptest's bisection pairing: from rank 0 up, each rank not yet paired is paired with the
/// rank `distance` further round the ring, if that one is free too. With `distance` half the
/// ranks, every pair crosses between the halves.
pub fn bisect_roles(size: usize, distance: usize) -> Vec<Role> {
    let mut roles = vec![Role::Bystander; size];
    for cur in 0..size {
        let partner = (cur + distance) % size;
        if partner != cur && roles[cur] == Role::Bystander && roles[partner] == Role::Bystander {
            roles[cur] = Role::Master(partner);
            roles[partner] = Role::Slave(cur);
        }
    }
    roles
}

pub struct PairBench<'c> {
    comm: &'c Comm,
    role: Role,
    pattern: Pattern,
    protocol: Protocol,
    sbuf: AlignedBuf,
    rbuf: AlignedBuf,
    /// The size being measured.
    pub n: usize,
}

impl<'c> PairBench<'c> {
    pub fn new(
        comm: &'c Comm,
        role: Role,
        pattern: Pattern,
        protocol: Protocol,
        max_size: usize,
    ) -> Result<PairBench<'c>, SuiteError> {
        Ok(PairBench {
            comm,
            role,
            pattern,
            protocol,
            sbuf: AlignedBuf::new(max_size, b's')?,
            rbuf: AlignedBuf::new(max_size, 0)?,
            n: 0,
        })
    }

    /// One iteration: a round trip, or one exchange.
    #[inline]
    pub fn iteration(&mut self) -> Result<(), SuiteError> {
        let (c, n) = (self.comm, self.n);
        let (s, r) = (
            &self.sbuf.as_slice()[..n],
            &mut self.rbuf.as_mut_slice()[..n],
        );
        match (self.role, self.pattern, self.protocol) {
            (Role::Bystander, ..) => {}
            (Role::Master(p), Pattern::Roundtrip, Protocol::Sync) => {
                c.send(s, p, TAG)?;
                c.recv(r, p, TAG)?;
            }
            (Role::Slave(p), Pattern::Roundtrip, Protocol::Sync) => {
                c.recv(r, p, TAG)?;
                c.send(s, p, TAG)?;
            }
            (Role::Master(p), Pattern::Roundtrip, Protocol::Async) => {
                let req = c.irecv(r, p, TAG)?;
                c.send(s, p, TAG)?;
                req.wait()?;
            }
            (Role::Slave(p), Pattern::Roundtrip, Protocol::Async) => {
                c.irecv(r, p, TAG)?.wait()?;
                c.send(s, p, TAG)?;
            }
            // mpptest's blocking exchange is Send then Recv on both sides, which deadlocks once
            // a message is too large to buffer; a combined send-receive cannot.
            (Role::Master(p) | Role::Slave(p), Pattern::Head, Protocol::Sync) => {
                c.sendrecv(s, p, TAG, r, p, TAG)?;
            }
            (Role::Master(p) | Role::Slave(p), Pattern::Head, Protocol::Async) => {
                let rr = c.irecv(r, p, TAG)?;
                let sr = c.isend(s, p, TAG)?;
                rr.wait()?;
                sr.wait()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bisection_pairs_across_the_halves_by_default_distance() {
        use Role::*;
        assert_eq!(
            bisect_roles(4, 2),
            vec![Master(2), Master(3), Slave(0), Slave(1)]
        );
        assert_eq!(
            bisect_roles(4, 1),
            vec![Master(1), Slave(0), Master(3), Slave(2)]
        );
        // an odd rank out stands by
        assert_eq!(bisect_roles(3, 1)[2], Bystander);
        assert_eq!(pair_role(5), Bystander);
    }
}
