//! Point-to-point calls on typed buffers (`f64`, `i32`, complex numbers...), for suites that
//! move arrays rather than bytes: the application kernels' halo exchanges and ring passes.
//! Elements travel little-endian like the collectives' (see `element`), so ranks of different
//! byte order agree; on a little-endian host the buffer goes on the wire as it is.

use crate::error::Result;
use crate::transport::{Status, Tag};

use super::element::{wire, with_wire_mut, Element};
use super::Comm;

impl Comm {
    /// Sends `values` to `dst` (blocking).
    pub fn send_values<T: Element>(&self, values: &[T], dst: usize, tag: Tag) -> Result<()> {
        self.send(&wire(values, self.order), dst, tag)
    }

    /// Receives into `values` from `src` (blocking); the status counts bytes.
    pub fn recv_values<T: Element>(
        &self,
        values: &mut [T],
        src: usize,
        tag: Tag,
    ) -> Result<Status> {
        with_wire_mut(values, self.order, |b| self.recv(b, src, tag))
    }

    /// Sends `send` to `dst` and receives `recv` from `src` at once (a ring or a halo exchange
    /// that every rank makes cannot deadlock).
    #[allow(clippy::too_many_arguments)]
    pub fn sendrecv_values<T: Element>(
        &self,
        send: &[T],
        dst: usize,
        send_tag: Tag,
        recv: &mut [T],
        src: usize,
        recv_tag: Tag,
    ) -> Result<Status> {
        let out = wire(send, self.order);
        with_wire_mut(recv, self.order, |b| {
            self.sendrecv(&out, dst, send_tag, b, src, recv_tag)
        })
    }

    /// Two exchanges at once, both directions of a halo: both receives are posted, then both
    /// sends, then all four are waited, so neither direction waits for the other (NPB's
    /// ready/give3/take3). The receives' statuses, in the order given.
    pub fn sendrecv_both_values<T: Element>(
        &self,
        a: Exchange<'_, T>,
        b: Exchange<'_, T>,
    ) -> Result<[Status; 2]> {
        let (out_a, out_b) = (wire(a.send, self.order), wire(b.send, self.order));
        with_wire_mut(a.recv, self.order, |ra| {
            with_wire_mut(b.recv, self.order, |rb| {
                let mut reqs = vec![
                    self.irecv(ra, a.src, a.recv_tag)?,
                    self.irecv(rb, b.src, b.recv_tag)?,
                    self.isend(&out_a, a.dst, a.send_tag)?,
                    self.isend(&out_b, b.dst, b.send_tag)?,
                ];
                let st = self.waitall_statuses(&mut reqs)?;
                Ok([st[0], st[1]])
            })
        })
    }
}

/// One leg of [`Comm::sendrecv_both_values`]: `send` to `dst`, `recv` from `src`.
pub struct Exchange<'a, T> {
    pub send: &'a [T],
    pub dst: usize,
    pub send_tag: Tag,
    pub recv: &'a mut [T],
    pub src: usize,
    pub recv_tag: Tag,
}

#[cfg(test)]
mod tests {
    // Exercised through the loopback transport in comm's own tests (see `tests` in mod.rs).
}
