//! mpptest's `-gop` collective tests over fabbench's collectives: a barrier, an allreduce sum
//! of doubles or ints, a broadcast of bytes from a root that moves each iteration, and an
//! allgather of ints. Unlike mpptest, every result is checked (outside the timed region):
//! each rank contributes values that depend on its rank, the iteration and the element, so a
//! wrong sum, a stale buffer or a misplaced block fails the run.

use transports::comm::Comm;
use transports::transport::ReduceOp;

use super::params::GopOp;
use crate::suite::SuiteError;

/// Rank `rank`'s `-dsum` contribution at element `k` of iteration `i`: multiples of 1/4, so
/// every partial sum is exact in any order.
pub fn dsum_value(rank: usize, i: u64, k: usize) -> f64 {
    (rank + 1) as f64 * 0.5 + (k % 7) as f64 + (i % 64) as f64 * 0.25
}

/// The `-dsum` result at element `k` of iteration `i` on `ranks` ranks: the sum of every
/// rank's [`dsum_value`], in closed form, so checking a result costs each rank O(n), not
/// O(ranks x n) (at 64 ranks the check took three quarters of a run). Every term is a multiple
/// of 1/4 far below 2^50, so the sum is exact in any order and this is the same number.
pub fn dsum_expected(ranks: usize, i: u64, k: usize) -> f64 {
    let r = ranks as f64;
    0.25 * r * (r + 1.0) + r * ((k % 7) as f64 + (i % 64) as f64 * 0.25)
}

/// The `-isum` result at element `k` of iteration `i` on `ranks` ranks: every rank's
/// [`int_value`] summed, in closed form.
pub fn isum_expected(ranks: usize, i: u64, k: usize) -> i32 {
    let r = ranks as i32;
    3 * r * (r + 1) / 2 + r * ((k % 11) as i32 + (i % 64) as i32)
}

/// Rank `rank`'s `-isum` and `-colx` contribution at element `k` of iteration `i`.
pub fn int_value(rank: usize, i: u64, k: usize) -> i32 {
    (rank as i32 + 1) * 3 + (k % 11) as i32 + (i % 64) as i32
}

/// The byte at `k` of the broadcast whose root is `root` in iteration `i`.
pub fn bcast_byte(root: usize, i: u64, k: usize) -> u8 {
    (root as u64 * 31 + i * 7 + k as u64) as u8
}

pub struct GopBench<'c> {
    comm: &'c Comm,
    op: GopOp,
    /// Elements (bytes for `-bcast`) at the size being measured.
    pub n: usize,
    dsend: Vec<f64>,
    drecv: Vec<f64>,
    isend: Vec<i32>,
    irecv: Vec<i32>,
    bytes: Vec<u8>,
}

impl<'c> GopBench<'c> {
    pub fn new(comm: &'c Comm, op: GopOp, max: usize) -> GopBench<'c> {
        let (d, i, b, per) = match op {
            GopOp::Barrier => (0, 0, 0, 0),
            GopOp::Dsum => (max, 0, 0, 1),
            GopOp::Isum => (0, max, 0, 1),
            GopOp::Bcast => (0, 0, max, 0),
            GopOp::Colx => (0, max, 0, comm.size()),
        };
        GopBench {
            comm,
            op,
            n: 0,
            dsend: vec![0.0; d],
            drecv: vec![0.0; d],
            isend: vec![0; i],
            irecv: vec![0; i * per],
            bytes: vec![0; b],
        }
    }

    pub fn op(&self) -> GopOp {
        self.op
    }

    /// Whether results are checked (everything but the barrier carries data).
    pub fn checks(&self) -> bool {
        self.op != GopOp::Barrier
    }

    /// The last `-dsum` result.
    pub fn dsum_result(&self) -> &[f64] {
        &self.drecv[..self.n.min(self.drecv.len())]
    }

    /// The last `-isum` result, or the last `-colx` result (every rank's block in rank order).
    pub fn int_result(&self) -> &[i32] {
        let per = if self.op == GopOp::Colx {
            self.comm.size()
        } else {
            1
        };
        &self.irecv[..(self.n * per).min(self.irecv.len())]
    }

    fn root(&self, i: u64) -> usize {
        (i % self.comm.size() as u64) as usize
    }

    /// Fills what this rank sends in iteration `i`, and clears what it receives.
    pub fn prepare(&mut self, i: u64) {
        let (me, n) = (self.comm.rank(), self.n);
        match self.op {
            GopOp::Barrier => {}
            GopOp::Dsum => {
                for (k, v) in self.dsend[..n].iter_mut().enumerate() {
                    *v = dsum_value(me, i, k);
                }
                self.drecv[..n].fill(f64::NAN);
            }
            GopOp::Isum | GopOp::Colx => {
                for (k, v) in self.isend[..n].iter_mut().enumerate() {
                    *v = int_value(me, i, k);
                }
                // only what this size receives: the buffer is sized for the largest
                let used = if self.op == GopOp::Colx {
                    n * self.comm.size()
                } else {
                    n
                };
                self.irecv[..used].fill(i32::MIN);
            }
            GopOp::Bcast => {
                let root = self.root(i);
                for (k, b) in self.bytes[..n].iter_mut().enumerate() {
                    *b = if me == root {
                        bcast_byte(root, i, k)
                    } else {
                        0
                    };
                }
            }
        }
    }

    #[inline]
    pub fn iteration(&mut self, i: u64) -> Result<(), SuiteError> {
        let (c, n) = (self.comm, self.n);
        match self.op {
            GopOp::Barrier => c.barrier()?,
            GopOp::Dsum => c.allreduce(&self.dsend[..n], &mut self.drecv[..n], ReduceOp::Sum)?,
            GopOp::Isum => c.allreduce(&self.isend[..n], &mut self.irecv[..n], ReduceOp::Sum)?,
            GopOp::Bcast => {
                let root = self.root(i);
                c.bcast(&mut self.bytes[..n], root)?
            }
            GopOp::Colx => {
                let total = n * c.size();
                c.allgather(&self.isend[..n], &mut self.irecv[..total])?
            }
        }
        Ok(())
    }

    /// Checks iteration `i`'s result against what every rank contributed.
    pub fn check(&self, i: u64) -> Result<(), SuiteError> {
        let (ranks, n) = (self.comm.size(), self.n);
        let wrong = |what: &str, k: usize, got: String, want: String| {
            Err(SuiteError::Check(format!(
                "mpptest -gop -{}: element {k} of iteration {i} is {got}, expected {want} ({what})",
                self.op.name()
            )))
        };
        match self.op {
            GopOp::Barrier => {}
            GopOp::Dsum => {
                for (k, &got) in self.drecv[..n].iter().enumerate() {
                    let want = dsum_expected(ranks, i, k);
                    if got != want {
                        return wrong("sum over ranks", k, got.to_string(), want.to_string());
                    }
                }
            }
            GopOp::Isum => {
                for (k, &got) in self.irecv[..n].iter().enumerate() {
                    let want = isum_expected(ranks, i, k);
                    if got != want {
                        return wrong("sum over ranks", k, got.to_string(), want.to_string());
                    }
                }
            }
            GopOp::Colx => {
                for (j, &got) in self.irecv[..n * ranks].iter().enumerate() {
                    let want = int_value(j / n.max(1), i, j % n.max(1));
                    if got != want {
                        return wrong("rank blocks in order", j, got.to_string(), want.to_string());
                    }
                }
            }
            GopOp::Bcast => {
                let root = self.root(i);
                for (k, &got) in self.bytes[..n].iter().enumerate() {
                    let want = bcast_byte(root, i, k);
                    if got != want {
                        return wrong("root's bytes", k, got.to_string(), want.to_string());
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed forms are the sums they stand for, bit for bit, at every rank count a run
    /// may have.
    #[test]
    fn the_expected_sums_are_the_sums_of_every_ranks_contribution() {
        for ranks in [1, 2, 3, 7, 64, 255, 1024] {
            for i in [0, 1, 63, 64, 1000] {
                for k in 0..23 {
                    let d: f64 = (0..ranks).map(|r| dsum_value(r, i, k)).sum();
                    assert_eq!(
                        dsum_expected(ranks, i, k).to_bits(),
                        d.to_bits(),
                        "{ranks} {i} {k}"
                    );
                    let n: i32 = (0..ranks).map(|r| int_value(r, i, k)).sum();
                    assert_eq!(isum_expected(ranks, i, k), n, "{ranks} {i} {k}");
                }
            }
        }
    }
}
