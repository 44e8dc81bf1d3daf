//! MPI's own collectives behind fabbench's `NativeCollectives`, so a suite's collective on the
//! mpi fabric is the MPI library's (MPI_Gatherv, MPI_Alltoallv, MPI_Comm_split, ...), with
//! byte buffers and counts as MPI takes them and every blocking call watched by the
//! transport's watchdog.

use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::sync::atomic::AtomicBool;

use mpi::ffi as m;

use super::ffi::{check, CommH, Handles, MpiTransport};
use crate::error::{Result, TransportError};
use crate::transport::{ElemKind, NativeCollectives, ReduceOp, Transport};

fn dtype(k: ElemKind) -> m::MPI_Datatype {
    // SAFETY: reading predefined handles after initialisation.
    unsafe {
        match k {
            ElemKind::U8 => m::RSMPI_UINT8_T,
            ElemKind::C64 => m::RSMPI_DOUBLE_COMPLEX,
            ElemKind::F64 => m::RSMPI_DOUBLE,
            ElemKind::F32 => m::RSMPI_FLOAT,
            ElemKind::U64 => m::RSMPI_UINT64_T,
            ElemKind::I64 => m::RSMPI_INT64_T,
            ElemKind::U32 => m::RSMPI_UINT32_T,
            ElemKind::I32 => m::RSMPI_INT32_T,
        }
    }
}

fn width(k: ElemKind) -> usize {
    match k {
        ElemKind::U8 => 1,
        ElemKind::C64 => 16,
        ElemKind::F64 | ElemKind::U64 | ElemKind::I64 => 8,
        ElemKind::F32 | ElemKind::U32 | ElemKind::I32 => 4,
    }
}

/// A buffer for a collective: null when empty. An empty slice's pointer is dangling and
/// non-null (1 for bytes), which Open MPI takes for MPI_IN_PLACE ((void *)1) and refuses, or
/// worse, acts on.
fn cbuf(b: &[u8]) -> *const c_void {
    if b.is_empty() {
        std::ptr::null()
    } else {
        b.as_ptr() as *const c_void
    }
}

fn mbuf(b: &mut [u8]) -> *mut c_void {
    if b.is_empty() {
        std::ptr::null_mut()
    } else {
        b.as_mut_ptr() as *mut c_void
    }
}

/// Counts or displacements as MPI's ints.
fn ints(v: &[usize]) -> Result<Vec<c_int>> {
    v.iter()
        .map(|&x| {
            c_int::try_from(x).map_err(|_| {
                TransportError::Usage(format!(
                    "{x} does not fit MPI's int counts; keep each block under 2 GiB"
                ))
            })
        })
        .collect()
}

fn int(x: usize) -> Result<c_int> {
    Ok(ints(&[x])?[0])
}

fn op(o: ReduceOp) -> m::MPI_Op {
    // SAFETY: predefined handles.
    unsafe {
        match o {
            ReduceOp::Sum => m::RSMPI_SUM,
            ReduceOp::Max => m::RSMPI_MAX,
            ReduceOp::Min => m::RSMPI_MIN,
            ReduceOp::Prod => m::RSMPI_PROD,
        }
    }
}

impl NativeCollectives for MpiTransport {
    fn barrier(&self) -> Result<()> {
        self.enter(5, -1);
        // SAFETY: valid communicator.
        let code = unsafe { m::MPI_Barrier(self.coll.0) };
        self.leave();
        check(code, "MPI_Barrier")
    }

    fn bcast(&self, buf: &mut [u8], root: usize) -> Result<()> {
        // SAFETY: buf is valid for its length for the call.
        self.watched(6, root as i64, "MPI_Bcast", || unsafe {
            m::MPI_Bcast(
                mbuf(buf),
                buf.len() as c_int,
                m::RSMPI_UINT8_T,
                root as c_int,
                self.coll.0,
            )
        })
    }

    fn reduce(
        &self,
        send: &[u8],
        recv: &mut [u8],
        kind: ElemKind,
        o: ReduceOp,
        root: usize,
    ) -> Result<()> {
        // SAFETY: both buffers hold `len` elements of `kind`.
        self.watched(7, root as i64, "MPI_Reduce", || unsafe {
            m::MPI_Reduce(
                cbuf(send),
                mbuf(recv),
                (send.len() / width(kind)) as c_int,
                dtype(kind),
                op(o),
                root as c_int,
                self.coll.0,
            )
        })
    }

    fn allreduce(&self, send: &[u8], recv: &mut [u8], kind: ElemKind, o: ReduceOp) -> Result<()> {
        // SAFETY: both buffers hold `len` elements of `kind`.
        self.watched(7, -1, "MPI_Allreduce", || unsafe {
            m::MPI_Allreduce(
                cbuf(send),
                mbuf(recv),
                (send.len() / width(kind)) as c_int,
                dtype(kind),
                op(o),
                self.coll.0,
            )
        })
    }

    fn gather(&self, send: &[u8], recv: &mut [u8], root: usize) -> Result<()> {
        let n = int(send.len())?;
        // SAFETY: send holds n bytes; on the root recv holds n per rank (checked by Comm).
        self.watched(8, root as i64, "MPI_Gather", || unsafe {
            m::MPI_Gather(
                cbuf(send),
                n,
                m::RSMPI_UINT8_T,
                mbuf(recv),
                n,
                m::RSMPI_UINT8_T,
                root as c_int,
                self.coll.0,
            )
        })
    }

    fn gatherv(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        root: usize,
    ) -> Result<()> {
        let (c, d) = (ints(counts)?, ints(displs)?);
        let n = int(send.len())?;
        // SAFETY: the layout was checked against recv on the root by Comm; MPI reads the
        // counts only there.
        self.watched(8, root as i64, "MPI_Gatherv", || unsafe {
            m::MPI_Gatherv(
                cbuf(send),
                n,
                m::RSMPI_UINT8_T,
                mbuf(recv),
                c.as_ptr(),
                d.as_ptr(),
                m::RSMPI_UINT8_T,
                root as c_int,
                self.coll.0,
            )
        })
    }

    fn scatter(&self, send: &[u8], recv: &mut [u8], root: usize) -> Result<()> {
        let n = int(recv.len())?;
        // SAFETY: recv holds n bytes; on the root send holds n per rank (checked by Comm).
        self.watched(9, root as i64, "MPI_Scatter", || unsafe {
            m::MPI_Scatter(
                cbuf(send),
                n,
                m::RSMPI_UINT8_T,
                mbuf(recv),
                n,
                m::RSMPI_UINT8_T,
                root as c_int,
                self.coll.0,
            )
        })
    }

    fn scatterv(
        &self,
        send: &[u8],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [u8],
        root: usize,
    ) -> Result<()> {
        let (c, d) = (ints(counts)?, ints(displs)?);
        let n = int(recv.len())?;
        // SAFETY: the layout was checked against send on the root by Comm.
        self.watched(9, root as i64, "MPI_Scatterv", || unsafe {
            m::MPI_Scatterv(
                cbuf(send),
                c.as_ptr(),
                d.as_ptr(),
                m::RSMPI_UINT8_T,
                mbuf(recv),
                n,
                m::RSMPI_UINT8_T,
                root as c_int,
                self.coll.0,
            )
        })
    }

    fn allgather(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        let n = int(send.len())?;
        // SAFETY: recv holds n bytes per rank (checked by Comm).
        self.watched(10, -1, "MPI_Allgather", || unsafe {
            m::MPI_Allgather(
                cbuf(send),
                n,
                m::RSMPI_UINT8_T,
                mbuf(recv),
                n,
                m::RSMPI_UINT8_T,
                self.coll.0,
            )
        })
    }

    fn allgatherv(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        let (c, d) = (ints(counts)?, ints(displs)?);
        let n = int(send.len())?;
        // SAFETY: the layout was checked against recv by Comm.
        self.watched(10, -1, "MPI_Allgatherv", || unsafe {
            m::MPI_Allgatherv(
                cbuf(send),
                n,
                m::RSMPI_UINT8_T,
                mbuf(recv),
                c.as_ptr(),
                d.as_ptr(),
                m::RSMPI_UINT8_T,
                self.coll.0,
            )
        })
    }

    fn alltoall(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        let n = int(send.len() / self.size)?;
        // SAFETY: both hold n bytes per rank (checked by Comm).
        self.watched(11, -1, "MPI_Alltoall", || unsafe {
            m::MPI_Alltoall(
                cbuf(send),
                n,
                m::RSMPI_UINT8_T,
                mbuf(recv),
                n,
                m::RSMPI_UINT8_T,
                self.coll.0,
            )
        })
    }

    fn alltoallv(
        &self,
        send: &[u8],
        send_counts: &[usize],
        send_displs: &[usize],
        recv: &mut [u8],
        recv_counts: &[usize],
        recv_displs: &[usize],
    ) -> Result<()> {
        let (sc, sd) = (ints(send_counts)?, ints(send_displs)?);
        let (rc, rd) = (ints(recv_counts)?, ints(recv_displs)?);
        // SAFETY: both layouts were checked against their buffers by Comm.
        self.watched(11, -1, "MPI_Alltoallv", || unsafe {
            m::MPI_Alltoallv(
                cbuf(send),
                sc.as_ptr(),
                sd.as_ptr(),
                m::RSMPI_UINT8_T,
                mbuf(recv),
                rc.as_ptr(),
                rd.as_ptr(),
                m::RSMPI_UINT8_T,
                self.coll.0,
            )
        })
    }

    fn reduce_scatter(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        kind: ElemKind,
        o: ReduceOp,
    ) -> Result<()> {
        let c = ints(counts)?;
        // SAFETY: send holds the sum of counts elements, recv this rank's count (checked by
        // Comm).
        self.watched(12, -1, "MPI_Reduce_scatter", || unsafe {
            m::MPI_Reduce_scatter(
                cbuf(send),
                mbuf(recv),
                c.as_ptr(),
                dtype(kind),
                op(o),
                self.coll.0,
            )
        })
    }

    fn scan(&self, send: &[u8], recv: &mut [u8], kind: ElemKind, o: ReduceOp) -> Result<()> {
        let n = int(send.len() / width(kind))?;
        // SAFETY: both buffers hold the same number of elements of `kind`.
        self.watched(13, -1, "MPI_Scan", || unsafe {
            m::MPI_Scan(cbuf(send), mbuf(recv), n, dtype(kind), op(o), self.coll.0)
        })
    }

    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Box<dyn Transport>>> {
        let color = match color {
            // SAFETY: reading a predefined constant.
            None => unsafe { m::RSMPI_UNDEFINED },
            Some(c) => c_int::try_from(c).map_err(|_| {
                TransportError::Usage(format!("split: colour {c} does not fit MPI's int"))
            })?,
        };
        let mut new = MaybeUninit::<m::MPI_Comm>::uninit();
        self.enter(14, -1);
        // SAFETY: a valid communicator; MPI writes the new handle.
        let code = unsafe { m::MPI_Comm_split(self.world.0, color, key, new.as_mut_ptr()) };
        self.leave();
        check(code, "MPI_Comm_split")?;
        // SAFETY: written by MPI_Comm_split.
        let new = unsafe { new.assume_init() };
        // SAFETY: comparing with a predefined handle.
        if new == unsafe { m::RSMPI_COMM_NULL } {
            return Ok(None);
        }
        let (mut rank, mut size): (c_int, c_int) = (0, 0);
        // SAFETY: valid communicator and out-pointers.
        unsafe {
            m::MPI_Comm_set_errhandler(new, m::RSMPI_ERRORS_RETURN);
            m::MPI_Comm_rank(new, &mut rank);
            m::MPI_Comm_size(new, &mut size);
        }
        Ok(Some(Box::new(MpiTransport {
            rank: rank as usize,
            size: size as usize,
            world: CommH(new),
            coll: CommH(new),
            sub: true,
            handles: crate::spin::SpinLock::new(Handles(Vec::new())),
            clock: self.clock,
            stage: self.stage.clone(),
            reporter: self.reporter.clone(),
            blocked: self.blocked.clone(),
            stop: self.stop.clone(),
            library: self.library.clone(),
            env: self.env.clone(),
            finalized: AtomicBool::new(false),
        })))
    }
}
