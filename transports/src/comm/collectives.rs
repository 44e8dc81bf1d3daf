//! Collectives over point-to-point, with the standard algorithm for each: barrier by
//! dissemination, binomial trees for broadcast and reduce (allreduce is reduce then broadcast,
//! so every rank gets bit-identical floats), linear gather and scatter at the root, a ring for
//! allgather, pairwise exchange for alltoall, reduce then scatter for reduce_scatter, and
//! recursive doubling for scan. All work for any number of ranks, powers of two or not.
//!
//! They run in the communicator's collective context, so they never match a suite's own
//! messages, and where the transport has collectives of its own (an MPI library's) those are
//! used instead. Typed buffers travel as little-endian elements (see `element`); counts and
//! displacements are in elements, per rank, in rank order, as MPI's are.

use crate::error::{Result, TransportError};
use crate::transport::{ReduceOp, Tag};

use super::element::{
    check_op, decode_into, encode, host_bytes, host_bytes_mut, wire, with_wire_mut, Element,
};
use super::{Comm, Request};

const TAG_BARRIER: Tag = 1 << 20;
const TAG_BCAST: Tag = 2 << 20;
const TAG_REDUCE: Tag = 3 << 20;
const TAG_GATHER: Tag = 4 << 20;
const TAG_SCATTER: Tag = 5 << 20;
const TAG_ALLGATHER: Tag = 6 << 20;
const TAG_ALLTOALL: Tag = 7 << 20;
const TAG_SCAN: Tag = 8 << 20;

fn usage(msg: String) -> TransportError {
    TransportError::Usage(msg)
}

/// Checks a v-collective's counts and displacements for `n` ranks against a buffer of `len`
/// elements; a buffer that receives (`disjoint`) may not have overlapping blocks.
/// Up to this many ranks alltoallv posts every transfer at once; beyond, pairwise.
const ALLTOALL_LINEAR_MAX: usize = 63;

/// Rank `r`'s block of `buf` (`counts[r]` bytes from `displs[r]`) as a slice of its own, for
/// blocks [`check_layout`] found disjoint; an empty block is an empty slice.
fn blocks_mut<'a>(buf: &'a mut [u8], counts: &[usize], displs: &[usize]) -> Vec<&'a mut [u8]> {
    let mut order: Vec<usize> = (0..counts.len()).filter(|&r| counts[r] > 0).collect();
    order.sort_by_key(|&r| displs[r]);
    let mut out: Vec<&'a mut [u8]> = counts.iter().map(|_| Default::default()).collect();
    let (mut rest, mut at) = (buf, 0);
    for r in order {
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(displs[r] - at);
        let (block, tail) = tail.split_at_mut(counts[r]);
        out[r] = block;
        rest = tail;
        at = displs[r] + counts[r];
    }
    out
}

fn check_layout(
    what: &str,
    n: usize,
    counts: &[usize],
    displs: &[usize],
    len: usize,
    disjoint: bool,
) -> Result<()> {
    if counts.len() != n || displs.len() != n {
        return Err(usage(format!(
            "{what}: {} counts and {} displacements for {n} ranks; give one of each per rank",
            counts.len(),
            displs.len()
        )));
    }
    for r in 0..n {
        if displs[r] + counts[r] > len {
            return Err(usage(format!(
                "{what}: rank {r}'s block ({}..{}) lies outside the buffer of {len} elements",
                displs[r],
                displs[r] + counts[r]
            )));
        }
    }
    if disjoint {
        let mut blocks: Vec<(usize, usize, usize)> = (0..n)
            .filter(|r| counts[*r] > 0)
            .map(|r| (displs[r], displs[r] + counts[r], r))
            .collect();
        blocks.sort();
        for w in blocks.windows(2) {
            if w[0].1 > w[1].0 {
                return Err(usage(format!(
                    "{what}: the blocks of ranks {} and {} overlap in the receive buffer",
                    w[0].2, w[1].2
                )));
            }
        }
    }
    Ok(())
}

/// Element counts as byte counts.
fn bytes_of<T: Element>(v: &[usize]) -> Vec<usize> {
    v.iter().map(|c| c * T::SIZE).collect()
}

/// Displacements of consecutive blocks of `counts`.
fn packed(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .scan(0, |at, c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}

impl Comm {
    fn check_root(&self, what: &str, root: usize) -> Result<()> {
        if root < self.size {
            Ok(())
        } else {
            Err(usage(format!(
                "{what}: root {root} is not a rank of this communicator of {} ranks",
                self.size
            )))
        }
    }

    /// Checks that a receive got what the protocol expects from `from`.
    fn expect_len(what: &str, from: usize, got: usize, want: usize) -> Result<()> {
        if got == want {
            Ok(())
        } else {
            Err(usage(format!(
                "{what}: rank {from} sent {got} bytes where {want} were expected; every rank must pass matching counts"
            )))
        }
    }

    /// Returns once every rank has entered the barrier (dissemination algorithm).
    pub fn barrier(&self) -> Result<()> {
        if let Some(n) = self.native() {
            return n.barrier();
        }
        let n = self.size;
        let r = self.rank;
        let mut dist = 1;
        let mut round = 0;
        while dist < n {
            let to = (r + dist) % n;
            let from = (r + n - dist) % n;
            let s = self.isend_ctx(&[], to, TAG_BARRIER + round, self.coll)?;
            self.irecv_ctx(&mut [], from, TAG_BARRIER + round, self.coll)?
                .wait()?;
            s.wait()?;
            dist *= 2;
            round += 1;
        }
        Ok(())
    }

    /// Broadcasts `buf` from `root` to every rank (binomial tree).
    pub fn bcast(&self, buf: &mut [u8], root: usize) -> Result<()> {
        self.check_root("bcast", root)?;
        if let Some(n) = self.native() {
            return n.bcast(buf, root);
        }
        let n = self.size;
        let vr = (self.rank + n - root) % n;
        let mut mask = 1;
        while mask < n {
            if vr & mask != 0 {
                let from = (vr - mask + root) % n;
                self.irecv_ctx(buf, from, TAG_BCAST, self.coll)?.wait()?;
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if vr + mask < n {
                let to = (vr + mask + root) % n;
                self.isend_ctx(buf, to, TAG_BCAST, self.coll)?.wait()?;
            }
            mask >>= 1;
        }
        Ok(())
    }

    /// Broadcasts typed values from `root`.
    pub fn bcast_values<T: Element>(&self, buf: &mut [T], root: usize) -> Result<()> {
        if let Some(n) = self.native() {
            self.check_root("bcast", root)?;
            return n.bcast(host_bytes_mut(buf), root);
        }
        with_wire_mut(buf, self.order, |b| self.bcast(b, root))
    }

    /// Reduces `send` element-wise into `recv` on `root` (binomial tree). `recv` is only
    /// written on the root.
    pub fn reduce<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: ReduceOp,
        root: usize,
    ) -> Result<()> {
        self.check_root("reduce", root)?;
        check_op::<T>("reduce", op)?;
        if self.rank == root && recv.len() < send.len() {
            return Err(usage(format!(
                "reduce: the root's recv holds {} elements, send {}",
                recv.len(),
                send.len()
            )));
        }
        if let Some(n) = self.native() {
            return n.reduce(host_bytes(send), host_bytes_mut(recv), T::KIND, op, root);
        }
        let n = self.size;
        let vr = (self.rank + n - root) % n;
        let mut acc: Vec<T> = send.to_vec();
        let mut incoming = vec![0u8; send.len() * T::SIZE];
        let mut tmp = vec![T::default(); send.len()];
        let mut mask = 1;
        while mask < n {
            if vr & mask == 0 {
                let child = vr | mask;
                if child < n {
                    let from = (child + root) % n;
                    let st = self
                        .irecv_ctx(&mut incoming, from, TAG_REDUCE, self.coll)?
                        .wait()?;
                    Self::expect_len("reduce", from, st.len, incoming.len())?;
                    decode_into(&incoming, &mut tmp, self.order);
                    for (a, b) in acc.iter_mut().zip(&tmp) {
                        *a = T::combine(*a, *b, op);
                    }
                }
            } else {
                let to = ((vr & !mask) + root) % n;
                self.isend_ctx(&wire(&acc, self.order), to, TAG_REDUCE, self.coll)?
                    .wait()?;
                return Ok(());
            }
            mask <<= 1;
        }
        recv[..acc.len()].copy_from_slice(&acc);
        Ok(())
    }

    /// Reduces `send` element-wise and gives every rank the result in `recv`.
    pub fn allreduce<T: Element>(&self, send: &[T], recv: &mut [T], op: ReduceOp) -> Result<()> {
        if send.len() != recv.len() {
            return Err(usage(format!(
                "allreduce: send has {} elements, recv {}; they must match",
                send.len(),
                recv.len()
            )));
        }
        check_op::<T>("allreduce", op)?;
        if let Some(n) = self.native() {
            return n.allreduce(host_bytes(send), host_bytes_mut(recv), T::KIND, op);
        }
        self.reduce(send, recv, op, 0)?;
        self.bcast_values(recv, 0)
    }

    /// Every rank's `send` (equal lengths) into the root's `recv`, in rank order.
    pub fn gather<T: Element>(&self, send: &[T], recv: &mut [T], root: usize) -> Result<()> {
        self.check_root("gather", root)?;
        let n = self.size;
        if self.rank == root && recv.len() != send.len() * n {
            return Err(usage(format!(
                "gather: the root's recv holds {} elements; {n} ranks of {} need {}",
                recv.len(),
                send.len(),
                send.len() * n
            )));
        }
        if let Some(nat) = self.native() {
            return nat.gather(host_bytes(send), host_bytes_mut(recv), root);
        }
        let counts = vec![send.len(); n];
        self.gatherv(send, recv, &counts, &packed(&counts), root)
    }

    /// Rank `r`'s `send` (`counts[r]` elements) into the root's `recv` at `displs[r]`.
    pub fn gatherv<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        displs: &[usize],
        root: usize,
    ) -> Result<()> {
        self.check_root("gatherv", root)?;
        if self.rank == root {
            check_layout("gatherv", self.size, counts, displs, recv.len(), true)?;
            if counts[root] != send.len() {
                return Err(usage(format!(
                    "gatherv: the root sends {} elements but counts says {}",
                    send.len(),
                    counts[root]
                )));
            }
        }
        let (c, d) = (bytes_of::<T>(counts), bytes_of::<T>(displs));
        if let Some(n) = self.native() {
            return n.gatherv(host_bytes(send), host_bytes_mut(recv), &c, &d, root);
        }
        let send = wire(send, self.order);
        with_wire_mut(recv, self.order, |r| {
            self.gatherv_bytes(&send, r, &c, &d, root)
        })
    }

    fn gatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        root: usize,
    ) -> Result<()> {
        if self.rank != root {
            self.isend_ctx(send, root, TAG_GATHER, self.coll)?.wait()?;
            return Ok(());
        }
        recv[displs[root]..displs[root] + counts[root]].copy_from_slice(send);
        let mut reqs: Vec<(usize, Request<'_>)> = Vec::with_capacity(self.size);
        for r in (0..self.size).filter(|r| *r != root) {
            let src = self.peer(r)?;
            // SAFETY: the blocks were checked to lie inside `recv` and not to overlap, and
            // `recv` stays exclusively borrowed until every request completes below.
            let id = unsafe {
                self.t.irecv(
                    recv.as_mut_ptr().add(displs[r]),
                    counts[r],
                    Some(src),
                    Some(TAG_GATHER),
                    self.coll,
                )?
            };
            reqs.push((r, self.request(id)));
        }
        for (r, req) in reqs {
            let st = req.wait()?;
            Self::expect_len("gatherv", r, st.len, counts[r])?;
        }
        Ok(())
    }

    /// The root's `send` cut into equal blocks, block `r` to rank `r`'s `recv`.
    pub fn scatter<T: Element>(&self, send: &[T], recv: &mut [T], root: usize) -> Result<()> {
        self.check_root("scatter", root)?;
        let n = self.size;
        if self.rank == root && send.len() != recv.len() * n {
            return Err(usage(format!(
                "scatter: the root's send holds {} elements; {n} ranks of {} need {}",
                send.len(),
                recv.len(),
                recv.len() * n
            )));
        }
        if let Some(nat) = self.native() {
            return nat.scatter(host_bytes(send), host_bytes_mut(recv), root);
        }
        let counts = vec![recv.len(); n];
        self.scatterv(send, &counts, &packed(&counts), recv, root)
    }

    /// `counts[r]` elements of the root's `send` from `displs[r]` to rank `r`'s `recv`.
    pub fn scatterv<T: Element>(
        &self,
        send: &[T],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [T],
        root: usize,
    ) -> Result<()> {
        self.check_root("scatterv", root)?;
        if self.rank == root {
            check_layout("scatterv", self.size, counts, displs, send.len(), false)?;
            if counts[root] != recv.len() {
                return Err(usage(format!(
                    "scatterv: the root receives {} elements but counts says {}",
                    recv.len(),
                    counts[root]
                )));
            }
        }
        let (c, d) = (bytes_of::<T>(counts), bytes_of::<T>(displs));
        if let Some(n) = self.native() {
            return n.scatterv(host_bytes(send), &c, &d, host_bytes_mut(recv), root);
        }
        let send = wire(send, self.order);
        with_wire_mut(recv, self.order, |r| {
            self.scatterv_bytes(&send, &c, &d, r, root)
        })
    }

    fn scatterv_bytes(
        &self,
        send: &[u8],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [u8],
        root: usize,
    ) -> Result<()> {
        if self.rank != root {
            let want = recv.len();
            let st = self.irecv_ctx(recv, root, TAG_SCATTER, self.coll)?.wait()?;
            return Self::expect_len("scatterv", root, st.len, want);
        }
        recv.copy_from_slice(&send[displs[root]..displs[root] + counts[root]]);
        let mut reqs = Vec::with_capacity(self.size);
        for r in (0..self.size).filter(|r| *r != root) {
            let block = &send[displs[r]..displs[r] + counts[r]];
            reqs.push(self.isend_ctx(block, r, TAG_SCATTER, self.coll)?);
        }
        self.waitall(&mut reqs)
    }

    /// Every rank's `send` (equal lengths) into every rank's `recv`, in rank order.
    pub fn allgather<T: Element>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        let n = self.size;
        if recv.len() != send.len() * n {
            return Err(usage(format!(
                "allgather: recv holds {} elements; {n} ranks of {} need {}",
                recv.len(),
                send.len(),
                send.len() * n
            )));
        }
        if let Some(nat) = self.native() {
            return nat.allgather(host_bytes(send), host_bytes_mut(recv));
        }
        let counts = vec![send.len(); n];
        self.allgatherv(send, recv, &counts, &packed(&counts))
    }

    /// Rank `r`'s `send` (`counts[r]` elements) into every rank's `recv` at `displs[r]` (ring).
    pub fn allgatherv<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        check_layout("allgatherv", self.size, counts, displs, recv.len(), true)?;
        if counts[self.rank] != send.len() {
            return Err(usage(format!(
                "allgatherv: rank {} sends {} elements but counts says {}",
                self.rank,
                send.len(),
                counts[self.rank]
            )));
        }
        let (c, d) = (bytes_of::<T>(counts), bytes_of::<T>(displs));
        if let Some(n) = self.native() {
            return n.allgatherv(host_bytes(send), host_bytes_mut(recv), &c, &d);
        }
        let send = wire(send, self.order);
        with_wire_mut(recv, self.order, |r| {
            self.allgatherv_bytes(&send, r, &c, &d)
        })
    }

    fn allgatherv_bytes(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        let (n, me) = (self.size, self.rank);
        recv[displs[me]..displs[me] + counts[me]].copy_from_slice(send);
        let right = (me + 1) % n;
        let left = (me + n - 1) % n;
        // Step k passes on the block that arrived in step k - 1 (its own first).
        for step in 0..n.saturating_sub(1) {
            let out = (me + n - step) % n;
            let inb = (me + n - step - 1) % n;
            let base = recv.as_mut_ptr();
            // SAFETY: blocks `out` and `inb` are different ranks' blocks, checked to lie inside
            // `recv` and not to overlap; `recv` is not otherwise touched until both complete.
            let r = unsafe {
                self.t.irecv(
                    base.add(displs[inb]),
                    counts[inb],
                    Some(self.peer(left)?),
                    Some(TAG_ALLGATHER),
                    self.coll,
                )?
            };
            let r = self.request(r);
            // SAFETY: as above; the send only reads its block.
            let s = unsafe {
                self.t.isend(
                    base.add(displs[out]),
                    counts[out],
                    self.peer(right)?,
                    TAG_ALLGATHER,
                    self.coll,
                )?
            };
            let s = self.request(s);
            let st = r.wait()?;
            s.wait()?;
            Self::expect_len("allgatherv", left, st.len, counts[inb])?;
        }
        Ok(())
    }

    /// Block `r` of `send` to rank `r`, block `r` of `recv` from rank `r` (equal blocks).
    pub fn alltoall<T: Element>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        let n = self.size;
        if send.len() != recv.len() || !send.len().is_multiple_of(n) {
            return Err(usage(format!(
                "alltoall: send ({}) and recv ({}) must hold the same number of elements, a multiple of the {n} ranks",
                send.len(),
                recv.len()
            )));
        }
        if let Some(nat) = self.native() {
            return nat.alltoall(host_bytes(send), host_bytes_mut(recv));
        }
        let counts = vec![send.len() / n; n];
        let displs = packed(&counts);
        self.alltoallv(send, &counts, &displs, recv, &counts, &displs)
    }

    /// `send_counts[r]` elements from `send_displs[r]` to rank `r`; `recv_counts[r]` from rank
    /// `r` into `recv_displs[r]` (pairwise exchange).
    pub fn alltoallv<T: Element>(
        &self,
        send: &[T],
        send_counts: &[usize],
        send_displs: &[usize],
        recv: &mut [T],
        recv_counts: &[usize],
        recv_displs: &[usize],
    ) -> Result<()> {
        let n = self.size;
        check_layout(
            "alltoallv (send)",
            n,
            send_counts,
            send_displs,
            send.len(),
            false,
        )?;
        check_layout(
            "alltoallv (recv)",
            n,
            recv_counts,
            recv_displs,
            recv.len(),
            true,
        )?;
        let sc = bytes_of::<T>(send_counts);
        let sd = bytes_of::<T>(send_displs);
        let rc = bytes_of::<T>(recv_counts);
        let rd = bytes_of::<T>(recv_displs);
        if let Some(nat) = self.native() {
            return nat.alltoallv(host_bytes(send), &sc, &sd, host_bytes_mut(recv), &rc, &rd);
        }
        let send = wire(send, self.order);
        with_wire_mut(recv, self.order, |r| {
            self.alltoallv_bytes(&send, &sc, &sd, r, &rc, &rd)
        })
    }

    fn alltoallv_bytes(
        &self,
        send: &[u8],
        sc: &[usize],
        sd: &[usize],
        recv: &mut [u8],
        rc: &[usize],
        rd: &[usize],
    ) -> Result<()> {
        let (n, me) = (self.size, self.rank);
        Self::expect_len("alltoallv", me, sc[me], rc[me])?;
        let mut blocks = blocks_mut(recv, rc, rd);
        let mine = std::mem::take(&mut blocks[me]);
        let own = &send[sd[me]..sd[me] + sc[me]];
        let block = |r: usize| &send[sd[r]..sd[r] + sc[r]];
        if n > ALLTOALL_LINEAR_MAX {
            // Pairwise: one peer at a time, so a large job does not hold a request per rank.
            mine.copy_from_slice(own);
            for k in 1..n {
                let to = (me + k) % n;
                let from = (me + n - k) % n;
                let r = self.irecv_ctx(
                    std::mem::take(&mut blocks[from]),
                    from,
                    TAG_ALLTOALL,
                    self.coll,
                )?;
                let s = self.isend_ctx(block(to), to, TAG_ALLTOALL, self.coll)?;
                let st = r.wait()?;
                s.wait()?;
                Self::expect_len("alltoallv", from, st.len, rc[from])?;
            }
            return Ok(());
        }
        // Linear: every receive, then every send, posted at once (Open MPI's choice from 4
        // ranks; at 2 and 3 the same messages as pairwise); this rank's own block is copied
        // while the peers' are under way, not before they start.
        let mut reqs = Vec::with_capacity(2 * (n - 1));
        let from = |k: usize| (me + n - k) % n;
        for k in 1..n {
            reqs.push(self.irecv_ctx(
                std::mem::take(&mut blocks[from(k)]),
                from(k),
                TAG_ALLTOALL,
                self.coll,
            )?);
        }
        for k in 1..n {
            let to = (me + k) % n;
            reqs.push(self.isend_ctx(block(to), to, TAG_ALLTOALL, self.coll)?);
        }
        mine.copy_from_slice(own);
        let st = self.waitall_statuses(&mut reqs)?;
        for k in 1..n {
            Self::expect_len("alltoallv", from(k), st[k - 1].len, rc[from(k)])?;
        }
        Ok(())
    }

    /// Reduces `send` element-wise; rank `r` gets `counts[r]` elements of the result, in rank
    /// order (reduce to rank 0, then scatter).
    pub fn reduce_scatter<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: ReduceOp,
    ) -> Result<()> {
        let n = self.size;
        let total: usize = counts.iter().sum();
        if counts.len() != n || total != send.len() || recv.len() != counts[self.rank] {
            return Err(usage(format!(
                "reduce_scatter: {} counts summing to {total} for {n} ranks, send of {}, recv of {}; give a count per rank summing to send's length, and recv that rank's count",
                counts.len(),
                send.len(),
                recv.len()
            )));
        }
        check_op::<T>("reduce_scatter", op)?;
        if let Some(nat) = self.native() {
            return nat.reduce_scatter(host_bytes(send), host_bytes_mut(recv), counts, T::KIND, op);
        }
        let mut all = vec![T::default(); if self.rank == 0 { total } else { 0 }];
        self.reduce(send, &mut all, op, 0)?;
        self.scatterv(&all, counts, &packed(counts), recv, 0)
    }

    /// Inclusive prefix reduction: rank `r` gets the reduction of ranks `0..=r`'s `send`
    /// (recursive doubling).
    pub fn scan<T: Element>(&self, send: &[T], recv: &mut [T], op: ReduceOp) -> Result<()> {
        if send.len() != recv.len() {
            return Err(usage(format!(
                "scan: send has {} elements, recv {}; they must match",
                send.len(),
                recv.len()
            )));
        }
        check_op::<T>("scan", op)?;
        if let Some(nat) = self.native() {
            return nat.scan(host_bytes(send), host_bytes_mut(recv), T::KIND, op);
        }
        let (n, me) = (self.size, self.rank);
        // `recv` holds the reduction of a run of ranks ending at this one, which doubles each
        // round until it starts at rank 0.
        recv.copy_from_slice(send);
        let mut incoming = vec![0u8; send.len() * T::SIZE];
        let mut lower = vec![T::default(); send.len()];
        let mut dist = 1;
        while dist < n {
            let out = encode(recv, self.order);
            let r = if me >= dist {
                Some(self.irecv_ctx(&mut incoming, me - dist, TAG_SCAN, self.coll)?)
            } else {
                None
            };
            let s = if me + dist < n {
                Some(self.isend_ctx(&out, me + dist, TAG_SCAN, self.coll)?)
            } else {
                None
            };
            let got = r.map(|r| r.wait()).transpose()?;
            if let Some(s) = s {
                s.wait()?;
            }
            if let Some(st) = got {
                Self::expect_len("scan", me - dist, st.len, out.len())?;
                decode_into(&incoming, &mut lower, self.order);
                for (acc, low) in recv.iter_mut().zip(&lower) {
                    *acc = T::combine(*low, *acc, op);
                }
            }
            dist *= 2;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_checked_before_anything_moves() {
        assert!(check_layout("gatherv", 2, &[1, 2], &[0, 1], 3, true).is_ok());
        let e = check_layout("gatherv", 3, &[1, 2], &[0, 1], 3, true).unwrap_err();
        assert!(e
            .to_string()
            .contains("2 counts and 2 displacements for 3 ranks"));
        let e = check_layout("gatherv", 2, &[1, 2], &[0, 2], 3, true).unwrap_err();
        assert!(e.to_string().contains("rank 1's block (2..4) lies outside"));
        let e = check_layout("gatherv", 2, &[2, 2], &[0, 1], 4, true).unwrap_err();
        assert!(e.to_string().contains("ranks 0 and 1 overlap"));
        assert!(check_layout("scatterv", 2, &[2, 2], &[0, 1], 4, false).is_ok());
        assert_eq!(packed(&[2, 0, 3]), vec![0, 2, 2]);
    }

    #[test]
    fn each_rank_gets_its_own_block_in_any_order_of_displacements() {
        let mut buf: Vec<u8> = (0..10).collect();
        // Rank 1's block is empty (its displacement is that of a block of its own), rank 2's
        // lies first, rank 0's after a gap.
        let blocks = blocks_mut(&mut buf, &[2, 0, 3, 1], &[4, 0, 0, 7]);
        let got: Vec<Vec<u8>> = blocks.into_iter().map(|b| b.to_vec()).collect();
        assert_eq!(got, [vec![4, 5], vec![], vec![0, 1, 2], vec![7]]);
    }
}
