//! mpptest's `-halo`: every rank exchanges a message of the size being measured with each of
//! its partners at once (non-blocking receives and sends, then one wait for all), as a
//! stencil code's halo update does. Partners are ±1 then ±s, ±(s+1), ±(s-1) ranks away on an
//! s × s mesh (s = the square root of the rank count), the first `-npartner` of them that
//! exist; the mesh is not periodic.

use transports::comm::{Comm, Request};

use crate::buffer::AlignedBuf;
use crate::suite::SuiteError;

const TAG: i32 = 2;
/// mpptest defines eight partner offsets; `-npartner` is held to them.
pub const MAX_PARTNERS: usize = 8;

/// This rank's halo partners, in mpptest's order.
pub fn partners(rank: usize, size: usize, count: usize) -> Vec<usize> {
    let (r, n) = (rank as i64, size as i64);
    let offsets: Vec<i64> = if count == 1 {
        vec![if rank.is_multiple_of(2) { 1 } else { -1 }]
    } else {
        let s = (size as f64).sqrt() as i64;
        [1, -1, s, -s, s + 1, s - 1, -s + 1, -s - 1]
            .into_iter()
            .take(count.min(MAX_PARTNERS))
            .collect()
    };
    offsets
        .into_iter()
        .map(|o| r + o)
        .filter(|&p| p >= 0 && p < n && p != r)
        .map(|p| p as usize)
        .collect()
}

pub struct HaloBench<'c> {
    comm: &'c Comm,
    partners: Vec<usize>,
    sbufs: Vec<AlignedBuf>,
    rbufs: Vec<AlignedBuf>,
    /// The size being measured.
    pub n: usize,
}

impl<'c> HaloBench<'c> {
    pub fn new(comm: &'c Comm, count: usize, max_size: usize) -> Result<HaloBench<'c>, SuiteError> {
        let partners = partners(comm.rank(), comm.size(), count);
        Ok(HaloBench {
            comm,
            sbufs: partners
                .iter()
                .map(|_| AlignedBuf::new(max_size, b'h'))
                .collect::<Result<_, _>>()?,
            rbufs: partners
                .iter()
                .map(|_| AlignedBuf::new(max_size, 0))
                .collect::<Result<_, _>>()?,
            partners,
            n: 0,
        })
    }

    /// How many partners this rank has.
    pub fn partner_count(&self) -> usize {
        self.partners.len()
    }

    /// One exchange with every partner. The requests live on the stack (two per partner, at
    /// most eight partners): no allocation inside the timed loop. Waiting on each in turn
    /// progresses all of them, as one wait-for-all would.
    #[inline]
    pub fn iteration(&mut self) -> Result<(), SuiteError> {
        let (c, n) = (self.comm, self.n);
        let mut reqs: [Option<Request<'_>>; 2 * MAX_PARTNERS] = [const { None }; 2 * MAX_PARTNERS];
        let pairs = self.rbufs.iter_mut().zip(&self.sbufs).zip(&self.partners);
        for (k, ((r, s), &p)) in pairs.enumerate() {
            reqs[2 * k] = Some(c.irecv(&mut r.as_mut_slice()[..n], p, TAG)?);
            reqs[2 * k + 1] = Some(c.isend(&s.as_slice()[..n], p, TAG)?);
        }
        for r in reqs.into_iter().flatten() {
            r.wait()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partners_on_a_mesh() {
        // 9 ranks: a 3 x 3 mesh; the centre has all eight
        assert_eq!(partners(4, 9, 8), vec![5, 3, 7, 1, 8, 6, 2, 0]);
        assert_eq!(partners(4, 9, 2), vec![5, 3]);
        // an edge loses the partners off the mesh
        assert_eq!(partners(0, 9, 4), vec![1, 3]);
        assert_eq!(partners(0, 2, 2), vec![1]);
        assert_eq!(partners(3, 4, 1), vec![2]);
    }
}
