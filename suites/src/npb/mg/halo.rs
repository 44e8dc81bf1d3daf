//! The ghost layers of MG's grids: the planes each face exchange packs and unpacks, the
//! periodic copy when one rank spans an axis, and the exchange itself between neighbouring
//! ranks (NPB's comm3, and comm3_ex's hand-over to ranks that hold nothing on a coarse level).

use transports::comm::{Comm, Exchange};

use super::grid::Level;
use crate::npb::kernel::Meter;
use crate::suite::SuiteError;

/// Tags of the ghost exchange: towards the lower neighbour, towards the upper one, per axis;
/// then the same for the hand-over to dead ranks.
const TAG_DOWN: i32 = 1;
const TAG_UP: i32 = 4;
const TAG_EX_DOWN: i32 = 7;
const TAG_EX_UP: i32 = 10;

/// Contiguous runs (start, length) of the `count` planes across `axis` from plane `first`:
/// with the other axes' ghosts when `full` (the hand-over to dead ranks), otherwise without
/// the ghosts of the axes exchanged later (axis 0: both; axis 1: axis 2's), as NPB's `give3`.
pub(super) fn face_runs(
    dims: [usize; 3],
    axis: usize,
    first: usize,
    count: usize,
    full: bool,
    mut run: impl FnMut(usize, usize),
) {
    let [n1, n2, n3] = dims;
    let plane = n1 * n2;
    let inner = |n: usize| if full { 0..n } else { 1..n - 1 };
    match axis {
        0 => {
            for i3 in inner(n3) {
                for i2 in inner(n2) {
                    run(i3 * plane + i2 * n1 + first, count);
                }
            }
        }
        1 => {
            for i3 in inner(n3) {
                run(i3 * plane + first * n1, count * n1);
            }
        }
        _ => run(first * plane, count * plane),
    }
}

/// How many values `face_runs` covers.
pub(super) fn face_len(dims: [usize; 3], axis: usize, count: usize, full: bool) -> usize {
    let mut len = 0;
    face_runs(dims, axis, 0, count, full, |_, l| len += l);
    len
}

/// Copies a face of `a` into `out`.
pub(super) fn pack(
    a: &[f64],
    dims: [usize; 3],
    axis: usize,
    first: usize,
    count: usize,
    full: bool,
    out: &mut [f64],
) {
    let mut at = 0;
    face_runs(dims, axis, first, count, full, |start, len| {
        out[at..at + len].copy_from_slice(&a[start..start + len]);
        at += len;
    });
}

/// Copies `buf` into a face of `a`.
pub(super) fn unpack(
    buf: &[f64],
    a: &mut [f64],
    dims: [usize; 3],
    axis: usize,
    first: usize,
    count: usize,
    full: bool,
) {
    let mut at = 0;
    face_runs(dims, axis, first, count, full, |start, len| {
        a[start..start + len].copy_from_slice(&buf[at..at + len]);
        at += len;
    });
}

/// The ghost exchange along an axis this rank spans alone: the periodic images are its own
/// faces (NPB's `comm1p`).
pub(super) fn periodic_copy(a: &mut [f64], dims: [usize; 3], axis: usize) {
    let [n1, n2, n3] = dims;
    let plane = n1 * n2;
    match axis {
        0 => {
            for i3 in 1..n3 - 1 {
                for i2 in 1..n2 - 1 {
                    let row = &mut a[i3 * plane + i2 * n1..][..n1];
                    row[n1 - 1] = row[1];
                    row[0] = row[n1 - 2];
                }
            }
        }
        1 => {
            for i3 in 1..n3 - 1 {
                let p = &mut a[i3 * plane..][..plane];
                p.copy_within(n1..2 * n1, (n2 - 1) * n1);
                p.copy_within((n2 - 2) * n1..(n2 - 1) * n1, 0);
            }
        }
        _ => {
            a.copy_within(plane..2 * plane, (n3 - 1) * plane);
            a.copy_within((n3 - 2) * plane..(n3 - 1) * plane, 0);
        }
    }
}

/// Buffers of the ghost exchange along axes 0 and 1 (axis 2's faces are contiguous planes and
/// travel straight from and into the grid).
pub(super) struct Halo {
    pub(super) rank: usize,
    pub(super) send: Vec<f64>,
    pub(super) recv: Vec<f64>,
}

impl Halo {
    /// Refreshes the ghost layers of `a` on `level` (NPB's `comm3`); a dead level is zeroed.
    pub(super) fn comm3(
        &mut self,
        comm: &Comm,
        meter: &mut Meter<'_>,
        a: &mut [f64],
        level: &Level,
    ) -> Result<(), SuiteError> {
        if level.dead {
            return meter.compute(|| a.fill(0.0));
        }
        let dims = level.dims;
        for axis in 0..3 {
            let [below, above] = level.nbr[axis];
            let n = dims[axis];
            if below == self.rank {
                meter.compute(|| periodic_copy(a, dims, axis))?;
            } else if axis == 2 {
                // Planes 1 and n-2 go down and up straight from the grid; the ghost planes 0
                // and n-1 come straight into it.
                let plane = dims[0] * dims[1];
                let (ghost_low, rest) = a.split_at_mut(plane);
                let (inner, ghost_high) = rest.split_at_mut((n - 2) * plane);
                comm.sendrecv_both_values(
                    Exchange {
                        send: &inner[..plane],
                        dst: below,
                        send_tag: TAG_DOWN + 2,
                        recv: ghost_high,
                        src: above,
                        recv_tag: TAG_DOWN + 2,
                    },
                    Exchange {
                        send: &inner[(n - 3) * plane..],
                        dst: above,
                        send_tag: TAG_UP + 2,
                        recv: ghost_low,
                        src: below,
                        recv_tag: TAG_UP + 2,
                    },
                )?;
            } else {
                let len = face_len(dims, axis, 1, false);
                let (send, recv) = (&mut self.send[..2 * len], &mut self.recv[..2 * len]);
                meter.compute(|| {
                    let (to_below, to_above) = send.split_at_mut(len);
                    pack(a, dims, axis, 1, 1, false, to_below);
                    pack(a, dims, axis, n - 2, 1, false, to_above);
                })?;
                let tag = axis as i32;
                let (from_above, from_below) = recv.split_at_mut(len);
                comm.sendrecv_both_values(
                    Exchange {
                        send: &send[..len],
                        dst: below,
                        send_tag: TAG_DOWN + tag,
                        recv: from_above,
                        src: above,
                        recv_tag: TAG_DOWN + tag,
                    },
                    Exchange {
                        send: &send[len..],
                        dst: above,
                        send_tag: TAG_UP + tag,
                        recv: from_below,
                        src: below,
                        recv_tag: TAG_UP + tag,
                    },
                )?;
                meter.compute(|| {
                    unpack(&recv[..len], a, dims, axis, n - 1, 1, false);
                    unpack(&recv[len..], a, dims, axis, 0, 1, false);
                })?;
            }
        }
        Ok(())
    }

    /// After `interp`: ranks live on this level but dead on the coarser one take their points
    /// (and ghosts) from the live neighbours that interpolated them (NPB's `comm3_ex`).
    pub(super) fn comm3_ex(
        &mut self,
        comm: &Comm,
        meter: &mut Meter<'_>,
        a: &mut [f64],
        level: &Level,
    ) -> Result<(), SuiteError> {
        let dims = level.dims;
        let plane = dims[0] * dims[1];
        for axis in 0..3 {
            let [below, above] = level.nbr[axis];
            let n = dims[axis];
            let tag = axis as i32;
            if level.take_ex[axis] {
                if axis == 2 {
                    comm.recv_values(&mut a[..2 * plane], below, TAG_EX_UP + tag)?;
                    comm.recv_values(&mut a[(n - 1) * plane..n * plane], above, TAG_EX_DOWN + tag)?;
                } else {
                    let two = face_len(dims, axis, 2, true);
                    let one = face_len(dims, axis, 1, true);
                    let (from_below, from_above) = self.recv[..two + one].split_at_mut(two);
                    comm.recv_values(from_below, below, TAG_EX_UP + tag)?;
                    comm.recv_values(from_above, above, TAG_EX_DOWN + tag)?;
                    let recv = &self.recv;
                    meter.compute(|| {
                        unpack(&recv[..two], a, dims, axis, 0, 2, true);
                        unpack(&recv[two..two + one], a, dims, axis, n - 1, 1, true);
                    })?;
                }
            }
            if level.give_ex[axis] {
                if axis == 2 {
                    comm.send_values(&a[(n - 2) * plane..n * plane], above, TAG_EX_UP + tag)?;
                    comm.send_values(&a[plane..2 * plane], below, TAG_EX_DOWN + tag)?;
                } else {
                    let two = face_len(dims, axis, 2, true);
                    let one = face_len(dims, axis, 1, true);
                    let send = &mut self.send[..two + one];
                    meter.compute(|| {
                        let (to_above, to_below) = send.split_at_mut(two);
                        pack(a, dims, axis, n - 2, 2, true, to_above);
                        pack(a, dims, axis, 1, 1, true, to_below);
                    })?;
                    comm.send_values(&send[..two], above, TAG_EX_UP + tag)?;
                    comm.send_values(&send[two..], below, TAG_EX_DOWN + tag)?;
                }
            }
        }
        Ok(())
    }
}
