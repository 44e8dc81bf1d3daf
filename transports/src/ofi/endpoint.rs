//! One libfabric endpoint for a rank, set up through the job's bootstrap: the provider entry
//! every rank opens (rank 0's choice, so ranks on different hosts agree), the objects in their
//! order (fabric, domain, completion queue, address vector, endpoint), every rank's address
//! exchanged and inserted, and the ops-table slots the data path calls, each checked once here
//! so a provider without one is refused in one line, never per message. Closed in reverse order.

use std::ffi::{c_int, c_void};
use std::time::Duration;

use bench_core::bootstrap::Bootstrap;

use super::ffi::*;
use super::info::{self, Choice, Entry, Needs};
use super::library::{library, Library};
use super::mr::{Registered, Registrar};
use crate::error::{Result, TransportError};

/// The data-path calls, resolved from the provider's ops tables.
#[derive(Clone, Copy)]
pub struct Calls {
    pub send: Option<SendFn>,
    pub recv: Option<RecvFn>,
    pub inject: Option<InjectFn>,
    pub tsend: Option<TSendFn>,
    pub trecv: Option<TRecvFn>,
    pub tinject: Option<TInjectFn>,
    pub read: Option<RmaReadFn>,
    pub write: Option<RmaWriteFn>,
    pub cq_read: CqReadFn,
}

pub struct Endpoint {
    pub lib: &'static Library,
    pub entry: Entry,
    pub rank: usize,
    pub size: usize,
    fabric: *mut FidFabric,
    domain: *mut FidDomain,
    pub cq: *mut FidCq,
    av: *mut FidAv,
    pub ep: *mut FidEp,
    /// Each rank's libfabric address, by rank.
    pub addrs: Vec<FiAddr>,
    /// Each rank's address as text (`fi_av_straddr`), for errors and the manifest.
    pub names: Vec<String>,
    pub calls: Calls,
    /// The provider writes into each operation's context (FI_CONTEXT/FI_CONTEXT2).
    pub needs_context: bool,
}

// SAFETY: the endpoint's objects are used only under the owner's lock (the engine's, or the
// tagged transport's), which serialises every call as FI_THREAD_DOMAIN asks.
unsafe impl Send for Endpoint {}
unsafe impl Sync for Endpoint {}

fn fail(what: &str, lib: &Library, rc: isize) -> TransportError {
    TransportError::Config(format!("ofi: {what} failed: {}", lib.strerror(rc)))
}

fn missing(provider: &str, what: &str) -> TransportError {
    TransportError::Config(format!("ofi: provider {provider} has no {what}"))
}

/// What set-up needs from the settings.
pub struct Wanted<'a> {
    pub provider: Option<&'a str>,
    pub domain: Option<&'a str>,
    pub needs: Needs,
    pub timeout: Duration,
}

impl Endpoint {
    pub fn open(boot: &dyn Bootstrap, want: &Wanted) -> Result<Endpoint> {
        let lib = library().map_err(|e| TransportError::Config(format!("ofi: {e}")))?;
        let (rank, size) = (boot.rank(), boot.size());
        // Rank 0 chooses the provider; the others open the same, or say they cannot.
        let provider = if rank == 0 {
            want.provider.map(str::to_string)
        } else {
            Some(boot.get("ofi/provider", want.timeout)?)
        };
        let choice = Choice {
            provider: provider.as_deref(),
            domain: want.domain,
            near: boot.local_ip(),
        };
        // With RMA where the provider has it (the engine's rendezvous in place), else without.
        let rma_first: &[bool] = match want.needs {
            Needs::Messages => &[true, false],
            Needs::Tagged => &[false],
        };
        let mut found = None;
        for &rma in rma_first {
            let list = info::query(lib, want.needs, rma, provider.as_deref())
                .map_err(|e| TransportError::Config(format!("ofi: {e}")))?;
            // SAFETY: live entries of `list`.
            let entries: Vec<Entry> = list
                .iter()
                .map(|p| unsafe { info::entry(lib, p) })
                .collect();
            if let Some(i) = info::choose(&entries, &choice) {
                found = Some((list, entries, i));
                break;
            }
        }
        let Some((list, entries, i)) = found else {
            let what = match (&provider, want.domain) {
                (Some(p), Some(d)) => format!("provider {p} on domain {d}"),
                (Some(p), None) => format!("provider {p}"),
                (None, Some(d)) => format!("domain {d}"),
                (None, None) => "any provider".into(),
            };
            return Err(TransportError::Config(format!(
                "ofi: rank {rank}: libfabric offers no {what} with reliable datagram endpoints and {}",
                match want.needs {
                    Needs::Messages => "untagged messages",
                    Needs::Tagged => "tagged messages",
                }
            )));
        };
        let entry = entries[i].clone();
        if rank == 0 {
            boot.put("ofi/provider", &entry.provider)?;
        }
        let chosen = list.iter().nth(i).expect("chosen from this list");
        let mut ep = Endpoint {
            lib,
            entry,
            rank,
            size,
            fabric: std::ptr::null_mut(),
            domain: std::ptr::null_mut(),
            cq: std::ptr::null_mut(),
            av: std::ptr::null_mut(),
            ep: std::ptr::null_mut(),
            addrs: Vec::new(),
            names: Vec::new(),
            calls: Calls {
                send: None,
                recv: None,
                inject: None,
                tsend: None,
                trecv: None,
                tinject: None,
                read: None,
                write: None,
                cq_read: dummy_cq_read,
            },
            needs_context: false,
        };
        // SAFETY: `chosen` is a live entry; each object is opened from its parent and stored
        // in `ep` at once, so Drop closes whatever was opened if a later step fails.
        unsafe { ep.open_objects(chosen)? };
        drop(list);
        ep.exchange(boot, want.timeout)?;
        Ok(ep)
    }

    unsafe fn open_objects(&mut self, info: *mut FiInfo) -> Result<()> {
        let lib = self.lib;
        let prov = self.entry.provider.clone();
        self.needs_context = (*info).mode & (FI_CONTEXT | FI_CONTEXT2) != 0;
        let rc = (lib.fabric)((*info).fabric_attr, &mut self.fabric, std::ptr::null_mut());
        if rc != 0 {
            return Err(fail("fi_fabric", lib, rc as isize));
        }
        let domain = op!((*self.fabric).ops, FiOpsFabric, domain)
            .ok_or_else(|| missing(&prov, "fi_domain"))?;
        let rc = domain(self.fabric, info, &mut self.domain, std::ptr::null_mut());
        if rc != 0 {
            return Err(fail("fi_domain", lib, rc as isize));
        }
        let dops = (*self.domain).ops;
        let mut cq_attr = FiCqAttr {
            size: 0,
            flags: 0,
            format: FI_CQ_FORMAT_TAGGED,
            wait_obj: FI_WAIT_NONE,
            signaling_vector: 0,
            wait_cond: 0,
            wait_set: std::ptr::null_mut(),
        };
        let cq_open =
            op!(dops, FiOpsDomain, cq_open).ok_or_else(|| missing(&prov, "fi_cq_open"))?;
        let rc = cq_open(
            self.domain,
            &mut cq_attr,
            &mut self.cq,
            std::ptr::null_mut(),
        );
        if rc != 0 {
            return Err(fail("fi_cq_open", lib, rc as isize));
        }
        let mut av_attr = FiAvAttr {
            type_: FI_AV_TABLE,
            rx_ctx_bits: 0,
            count: self.size,
            ep_per_node: 0,
            name: std::ptr::null(),
            map_addr: std::ptr::null_mut(),
            flags: 0,
        };
        let av_open =
            op!(dops, FiOpsDomain, av_open).ok_or_else(|| missing(&prov, "fi_av_open"))?;
        let rc = av_open(
            self.domain,
            &mut av_attr,
            &mut self.av,
            std::ptr::null_mut(),
        );
        if rc != 0 {
            return Err(fail("fi_av_open", lib, rc as isize));
        }
        let endpoint =
            op!(dops, FiOpsDomain, endpoint).ok_or_else(|| missing(&prov, "fi_endpoint"))?;
        let rc = endpoint(self.domain, info, &mut self.ep, std::ptr::null_mut());
        if rc != 0 {
            return Err(fail("fi_endpoint", lib, rc as isize));
        }
        let ep_fid = &mut (*self.ep).fid as *mut Fid;
        let bind = op!((*ep_fid).ops, FiOps, bind).ok_or_else(|| missing(&prov, "fi_ep_bind"))?;
        let rc = bind(ep_fid, &mut (*self.cq).fid, FI_TRANSMIT | FI_RECV);
        if rc != 0 {
            return Err(fail("binding the completion queue", lib, rc as isize));
        }
        let rc = bind(ep_fid, &mut (*self.av).fid, 0);
        if rc != 0 {
            return Err(fail("binding the address vector", lib, rc as isize));
        }
        let control =
            op!((*ep_fid).ops, FiOps, control).ok_or_else(|| missing(&prov, "fi_enable"))?;
        let rc = control(ep_fid, FI_ENABLE, std::ptr::null_mut());
        if rc != 0 {
            return Err(fail("fi_enable", lib, rc as isize));
        }
        let e = &*self.ep;
        self.calls = Calls {
            send: op!(e.msg, FiOpsMsg, send),
            recv: op!(e.msg, FiOpsMsg, recv),
            inject: op!(e.msg, FiOpsMsg, inject),
            tsend: op!(e.tagged, FiOpsTagged, send),
            trecv: op!(e.tagged, FiOpsTagged, recv),
            tinject: op!(e.tagged, FiOpsTagged, inject),
            read: if self.entry.has_rma() {
                op!(e.rma, FiOpsRma, read)
            } else {
                None
            },
            write: if self.entry.has_rma() {
                op!(e.rma, FiOpsRma, write)
            } else {
                None
            },
            cq_read: op!((*self.cq).ops, FiOpsCq, read)
                .ok_or_else(|| missing(&prov, "fi_cq_read"))?,
        };
        Ok(())
    }

    /// Publishes this rank's address, then inserts every rank's, in rank order.
    fn exchange(&mut self, boot: &dyn Bootstrap, timeout: Duration) -> Result<()> {
        let prov = self.entry.provider.clone();
        let mut name = vec![0u8; 512];
        let mut len = name.len();
        // SAFETY: live endpoint; `name` has `len` bytes.
        let rc = unsafe {
            let getname =
                op!((*self.ep).cm, FiOpsCm, getname).ok_or_else(|| missing(&prov, "fi_getname"))?;
            getname(
                &mut (*self.ep).fid,
                name.as_mut_ptr() as *mut c_void,
                &mut len,
            )
        };
        if rc != 0 {
            return Err(fail("fi_getname", self.lib, rc as isize));
        }
        name.truncate(len);
        boot.put(&format!("ofi/{}/addr", self.rank), &hex(&name))?;
        boot.fence("ofi/addrs", timeout)?;
        // SAFETY: live address vector.
        let (insert, straddr) = unsafe {
            (
                op!((*self.av).ops, FiOpsAv, insert)
                    .ok_or_else(|| missing(&prov, "fi_av_insert"))?,
                op!((*self.av).ops, FiOpsAv, straddr),
            )
        };
        for r in 0..self.size {
            let text = boot.get(&format!("ofi/{r}/addr"), timeout)?;
            let raw = unhex(&text).ok_or_else(|| TransportError::Protocol {
                peer: format!("rank {r}"),
                what: "published an ofi address that is not hex".into(),
            })?;
            let mut addr: FiAddr = FI_ADDR_UNSPEC;
            // SAFETY: one address of the provider's format, as the peer's fi_getname gave it.
            let n = unsafe {
                insert(
                    self.av,
                    raw.as_ptr() as *const c_void,
                    1,
                    &mut addr,
                    0,
                    std::ptr::null_mut(),
                )
            };
            if n != 1 {
                return Err(TransportError::Config(format!(
                    "ofi: rank {}: inserting rank {r}'s address failed: {}",
                    self.rank,
                    if n < 0 {
                        self.lib.strerror(n as isize)
                    } else {
                        "not inserted".into()
                    }
                )));
            }
            self.addrs.push(addr);
            self.names.push(match straddr {
                Some(f) => {
                    let mut buf = vec![0u8; 256];
                    let mut blen = buf.len();
                    // SAFETY: `buf` holds `blen` bytes; the result is NUL-terminated in it.
                    unsafe {
                        f(
                            self.av,
                            raw.as_ptr() as *const c_void,
                            buf.as_mut_ptr() as *mut _,
                            &mut blen,
                        )
                    };
                    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
                    String::from_utf8_lossy(&buf[..end]).into_owned()
                }
                None => text,
            });
        }
        Ok(())
    }

    /// Reads up to `out.len()` completions: how many, 0 when none waits; a failed operation
    /// comes back as its error entry.
    pub fn read_completions(
        &self,
        out: &mut [FiCqTaggedEntry],
    ) -> std::result::Result<usize, CqError> {
        // SAFETY: live CQ of tagged format; `out` holds that many entries.
        let n =
            unsafe { (self.calls.cq_read)(self.cq, out.as_mut_ptr() as *mut c_void, out.len()) };
        if n > 0 {
            return Ok(n as usize);
        }
        if n == -FI_EAGAIN || n == 0 {
            return Ok(0);
        }
        if n == -FI_EAVAIL {
            return Err(self.read_error());
        }
        Err(CqError {
            context: 0,
            err: -n,
            text: format!("fi_cq_read: {}", self.lib.strerror(n)),
            olen: 0,
        })
    }

    fn read_error(&self) -> CqError {
        // SAFETY: zeroed error entry (err_data NULL: the provider keeps its own).
        let mut e: FiCqErrEntry = unsafe { std::mem::zeroed() };
        let readerr = unsafe { op!((*self.cq).ops, FiOpsCq, readerr) };
        let Some(readerr) = readerr else {
            return CqError {
                context: 0,
                err: 0,
                text: "an operation failed (no fi_cq_readerr)".into(),
                olen: 0,
            };
        };
        // SAFETY: live CQ; `e` is a whole error entry.
        let rc = unsafe { readerr(self.cq, &mut e, 0) };
        if rc < 0 {
            return CqError {
                context: 0,
                err: -rc,
                text: format!("fi_cq_readerr: {}", self.lib.strerror(rc)),
                olen: 0,
            };
        }
        let mut text = self.lib.strerror(e.err as isize);
        // SAFETY: live CQ; the provider's text for its own error number.
        if let Some(se) = unsafe { op!((*self.cq).ops, FiOpsCq, strerror) } {
            let mut buf = [0 as std::ffi::c_char; 256];
            let p = unsafe {
                se(
                    self.cq,
                    e.prov_errno,
                    e.err_data,
                    buf.as_mut_ptr(),
                    buf.len(),
                )
            };
            if !p.is_null() {
                let s = unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_string_lossy()
                    .into_owned();
                if !s.is_empty() && s != text {
                    text = format!("{text} ({s})");
                }
            }
        }
        CqError {
            context: e.op_context as usize,
            err: e.err as isize,
            text,
            olen: e.olen,
        }
    }

    /// The provider's registration calls, for the cache.
    pub fn registrar(&self) -> EndpointRegistrar<'_> {
        EndpointRegistrar { ep: self }
    }
}

/// A failed operation as the completion queue reports it.
#[derive(Debug, Clone)]
pub struct CqError {
    /// The failed operation's context (0 when unknown).
    pub context: usize,
    pub err: isize,
    pub text: String,
    /// Bytes that did not fit (FI_ETRUNC), as the provider reports them.
    pub olen: usize,
}

unsafe extern "C" fn dummy_cq_read(_: *mut FidCq, _: *mut c_void, _: usize) -> isize {
    -FI_EAGAIN
}

/// `fi_mr_reg` (bound to the endpoint and enabled where the provider asks) and `fi_close`.
pub struct EndpointRegistrar<'a> {
    ep: &'a Endpoint,
}

impl Registrar for EndpointRegistrar<'_> {
    fn register(
        &mut self,
        base: usize,
        len: usize,
        access: u64,
        key: u64,
    ) -> std::result::Result<Registered, String> {
        let e = self.ep;
        let prov = &e.entry.provider;
        // SAFETY: live domain; the range is mapped (whole pages of a live buffer).
        unsafe {
            let reg = op!((*e.domain).mr, FiOpsMr, reg)
                .ok_or_else(|| format!("provider {prov} has no fi_mr_reg"))?;
            let mut mr: *mut FidMr = std::ptr::null_mut();
            let rc = reg(
                &mut (*e.domain).fid,
                base as *const c_void,
                len,
                access,
                0,
                key,
                0,
                &mut mr,
                std::ptr::null_mut(),
            );
            if rc != 0 {
                return Err(format!(
                    "fi_mr_reg of {len} bytes: {}",
                    e.lib.strerror(rc as isize)
                ));
            }
            if (super::mr::Rules {
                mode: e.entry.mr_mode,
            })
            .endpoint_bound()
            {
                let fid = &mut (*mr).fid as *mut Fid;
                let ops = (*fid).ops;
                let bound = match (op!(ops, FiOps, bind), op!(ops, FiOps, control)) {
                    (Some(bind), Some(control)) => {
                        let rc = bind(fid, &mut (*e.ep).fid, 0);
                        if rc == 0 {
                            control(fid, FI_ENABLE, std::ptr::null_mut())
                        } else {
                            rc
                        }
                    }
                    _ => -(FI_ENOSYS as c_int),
                };
                if bound != 0 {
                    close(fid);
                    return Err(format!(
                        "binding a registration to the endpoint: {}",
                        e.lib.strerror(bound as isize)
                    ));
                }
            }
            Ok(Registered {
                handle: mr as usize,
                desc: (*mr).mem_desc as usize,
                key: (*mr).key,
            })
        }
    }

    fn release(&mut self, reg: Registered) {
        // SAFETY: a registration this registrar made, closed once.
        unsafe { close(&mut (*(reg.handle as *mut FidMr)).fid) };
    }
}

/// `fi_close`.
unsafe fn close(fid: *mut Fid) -> c_int {
    if fid.is_null() {
        return 0;
    }
    match op!((*fid).ops, FiOps, close) {
        Some(f) => f(fid),
        None => 0,
    }
}

impl Endpoint {
    /// Closes the objects, the endpoint before what it is bound to. Registrations must be
    /// released first (the wire's cache does).
    pub fn close(&mut self) {
        // SAFETY: each object is closed once and its pointer cleared.
        unsafe {
            for fid in [
                &mut self.ep as *mut *mut FidEp as *mut *mut Fid,
                &mut self.av as *mut *mut FidAv as *mut *mut Fid,
                &mut self.cq as *mut *mut FidCq as *mut *mut Fid,
                &mut self.domain as *mut *mut FidDomain as *mut *mut Fid,
                &mut self.fabric as *mut *mut FidFabric as *mut *mut Fid,
            ] {
                // Every object starts with its fid.
                close(*fid);
                *fid = std::ptr::null_mut();
            }
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.close();
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || text.len() > 4096 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn addresses_round_trip_through_hex_and_garbage_is_refused() {
        let a = [0u8, 1, 0xfe, 0xff, 0x10];
        assert_eq!(super::unhex(&super::hex(&a)).unwrap(), a);
        assert!(super::unhex("0g").is_none());
        assert!(super::unhex("abc").is_none());
    }
}
