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
}

#[cfg(test)]
mod tests {
    // Exercised through the loopback transport in comm's own tests (see `tests` in mod.rs).
}
