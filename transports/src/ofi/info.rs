//! Asking libfabric what it offers (`fi_getinfo`) and choosing one entry: the hints fabbench
//! sends (a reliable datagram endpoint, the capabilities a matching mode needs, every memory
//! registration mode fabbench honours), the providers the answer lists, and the facts of the
//! chosen entry that the manifest records.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::net::IpAddr;

use super::ffi::*;
use super::library::Library;

/// Memory registration modes fabbench honours (see [`super::mr`]); a provider that needs any
/// other (raw keys, MMU notification, device memory) is not offered.
pub const MR_MODES: c_int =
    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;

/// What the chosen matching mode needs of an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// The engine over untagged messages, reading large messages in place where RMA exists.
    Messages,
    /// Tagged sends and receives, matched by the provider.
    Tagged,
}

impl Needs {
    fn caps(self) -> u64 {
        match self {
            Needs::Messages => FI_MSG,
            Needs::Tagged => FI_TAGGED,
        }
    }
}

/// One entry of `fi_getinfo`'s answer, as plain data.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub provider: String,
    pub fabric: String,
    pub domain: String,
    pub provider_version: (u32, u32),
    pub caps: u64,
    pub mode: u64,
    pub mr_mode: c_int,
    pub mr_key_size: usize,
    pub inject_size: usize,
    pub max_msg_size: usize,
    pub tx_size: usize,
    pub rx_size: usize,
    pub data_progress: c_int,
    pub threading: c_int,
    pub mem_tag_format: u64,
    pub addr_format: u32,
    /// The IP address the entry's endpoint would bind, for IP providers.
    pub ip: Option<IpAddr>,
    /// Text forms of caps and mr_mode (`fi_tostr`).
    pub caps_text: String,
    pub mr_mode_text: String,
}

impl Entry {
    pub fn has_rma(&self) -> bool {
        self.caps & FI_RMA != 0
    }
}

/// A `fi_getinfo` answer, freed with the library's `fi_freeinfo`.
pub struct InfoList {
    lib: &'static Library,
    pub head: *mut FiInfo,
}

impl Drop for InfoList {
    fn drop(&mut self) {
        if !self.head.is_null() {
            // SAFETY: the list came from this library's fi_getinfo and is freed once.
            unsafe { (self.lib.freeinfo)(self.head) };
        }
    }
}

impl InfoList {
    /// The entries, in libfabric's order (its preference).
    pub fn iter(&self) -> impl Iterator<Item = *mut FiInfo> + '_ {
        let mut p = self.head;
        std::iter::from_fn(move || {
            if p.is_null() {
                None
            } else {
                let cur = p;
                // SAFETY: a live list node.
                p = unsafe { (*cur).next };
                Some(cur)
            }
        })
    }
}

/// RMA reads and writes, both ways: the engine's rendezvous in place.
pub const RMA_CAPS: u64 = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;

/// Asks libfabric for reliable datagram endpoints that do `needs` (and RMA, when `rma`), from
/// `provider` if named. A provider returns only the capabilities asked for, so RMA must be
/// asked to be had.
pub fn query(
    lib: &'static Library,
    needs: Needs,
    rma: bool,
    provider: Option<&str>,
) -> Result<InfoList, String> {
    // SAFETY: fi_dupinfo(NULL) allocates zeroed hints with every attribute struct (fi_allocinfo);
    // the library owns them and fi_freeinfo frees them, strings included (so they are strdup'd).
    unsafe {
        let hints = (lib.dupinfo)(std::ptr::null());
        if hints.is_null() {
            return Err("fi_allocinfo failed".into());
        }
        (*hints).caps = needs.caps() | if rma { RMA_CAPS } else { 0 };
        (*hints).mode = FI_CONTEXT | FI_CONTEXT2;
        (*(*hints).ep_attr).type_ = FI_EP_RDM;
        (*(*hints).domain_attr).mr_mode = MR_MODES;
        (*(*hints).domain_attr).threading = FI_THREAD_DOMAIN;
        if needs == Needs::Tagged {
            // MPI's non-overtaking rule, as Open MPI's mtl/ofi asks: sends to a peer are
            // matched in the order they were posted.
            (*(*hints).tx_attr).msg_order = FI_ORDER_SAS;
            (*(*hints).rx_attr).msg_order = FI_ORDER_SAS;
        }
        if let Some(p) = provider {
            let c =
                std::ffi::CString::new(p).map_err(|_| "provider name holds a NUL".to_string())?;
            (*(*hints).fabric_attr).prov_name = libc::strdup(c.as_ptr());
        }
        let mut out: *mut FiInfo = std::ptr::null_mut();
        let rc = (lib.getinfo)(
            lib.api_version(),
            std::ptr::null(),
            std::ptr::null(),
            0,
            hints,
            &mut out,
        );
        (lib.freeinfo)(hints);
        let list = InfoList { lib, head: out };
        if rc == -(FI_ENODATA as c_int) || (rc == 0 && out.is_null()) {
            return Ok(InfoList {
                lib,
                head: std::ptr::null_mut(),
            });
        }
        if rc != 0 {
            return Err(format!("fi_getinfo: {}", lib.strerror(rc as isize)));
        }
        Ok(list)
    }
}

fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: libfabric's strings are NUL-terminated.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The IP address in a `sockaddr_in`/`sockaddr_in6` source address, if the entry has one.
fn source_ip(info: &FiInfo) -> Option<IpAddr> {
    const FI_SOCKADDR_IN: u32 = 2;
    const FI_SOCKADDR_IN6: u32 = 3;
    const FI_SOCKADDR: u32 = 1;
    if info.src_addr.is_null() {
        return None;
    }
    // SAFETY: src_addr holds src_addrlen bytes.
    let bytes = unsafe { std::slice::from_raw_parts(info.src_addr as *const u8, info.src_addrlen) };
    let family = if bytes.len() >= 2 {
        u16::from_ne_bytes([bytes[0], bytes[1]]) as i32
    } else {
        -1
    };
    match info.addr_format {
        FI_SOCKADDR_IN | FI_SOCKADDR | FI_SOCKADDR_IN6
            if family == libc::AF_INET && bytes.len() >= 8 =>
        {
            Some(IpAddr::from([bytes[4], bytes[5], bytes[6], bytes[7]]))
        }
        FI_SOCKADDR_IN6 | FI_SOCKADDR if family == libc::AF_INET6 && bytes.len() >= 24 => {
            let mut a = [0u8; 16];
            a.copy_from_slice(&bytes[8..24]);
            Some(IpAddr::from(a))
        }
        _ => None,
    }
}

/// Reads one entry into plain data.
///
/// # Safety
/// `info` must be a live entry of a `fi_getinfo` answer.
pub unsafe fn entry(lib: &Library, info: *const FiInfo) -> Entry {
    let i = &*info;
    let fa = &*i.fabric_attr;
    let da = &*i.domain_attr;
    let ea = &*i.ep_attr;
    let tx = &*i.tx_attr;
    let rx = &*i.rx_attr;
    Entry {
        provider: text(fa.prov_name),
        fabric: text(fa.name),
        domain: text(da.name),
        provider_version: (fa.prov_version >> 16, fa.prov_version & 0xffff),
        caps: i.caps,
        mode: i.mode,
        mr_mode: da.mr_mode,
        mr_key_size: da.mr_key_size,
        inject_size: tx.inject_size,
        max_msg_size: ea.max_msg_size,
        tx_size: tx.size,
        rx_size: rx.size,
        data_progress: da.data_progress,
        threading: da.threading,
        mem_tag_format: ea.mem_tag_format,
        addr_format: i.addr_format,
        ip: source_ip(i),
        caps_text: lib.tostr(&i.caps as *const u64 as *const c_void, FI_TYPE_CAPS),
        mr_mode_text: lib.tostr(
            &da.mr_mode as *const c_int as *const c_void,
            FI_TYPE_MR_MODE,
        ),
    }
}

/// Every provider in an answer, once each, in libfabric's order, with its first entry.
pub fn providers(lib: &'static Library, list: &InfoList) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for p in list.iter() {
        // SAFETY: a live entry of `list`.
        let e = unsafe { entry(lib, p) };
        if !out.iter().any(|o| o.provider == e.provider) {
            out.push(e);
        }
    }
    out
}

/// What a run asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice<'a> {
    /// A provider name, or None for libfabric's first.
    pub provider: Option<&'a str>,
    /// A domain (interface) name, or None.
    pub domain: Option<&'a str>,
    /// The address this rank reaches the bootstrap from: an IP provider's entry on it is
    /// preferred, so a job across hosts does not pick the loopback interface.
    pub near: Option<IpAddr>,
}

/// The index of the entry to open among `entries` (libfabric's order), or None.
pub fn choose(entries: &[Entry], want: &Choice) -> Option<usize> {
    let fits = |e: &Entry| {
        want.provider.is_none_or(|p| e.provider == p) && want.domain.is_none_or(|d| e.domain == d)
    };
    // Without a named provider, libfabric's first fitting entry sets the provider.
    let provider = entries.iter().find(|e| fits(e))?.provider.clone();
    let same = |e: &Entry| fits(e) && e.provider == provider;
    if let Some(ip) = want.near {
        if let Some(i) = entries.iter().position(|e| same(e) && e.ip == Some(ip)) {
            return Some(i);
        }
        // An IPv4 entry before an IPv6 one when the bootstrap's address family is unknown.
        if let Some(i) = entries
            .iter()
            .position(|e| same(e) && e.ip.is_some_and(|a| a.is_ipv4() == ip.is_ipv4()))
        {
            return Some(i);
        }
    }
    entries.iter().position(same)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(provider: &str, domain: &str, ip: Option<&str>) -> Entry {
        Entry {
            provider: provider.into(),
            fabric: "f".into(),
            domain: domain.into(),
            provider_version: (1, 0),
            caps: FI_MSG | FI_RMA,
            mode: 0,
            mr_mode: 0,
            mr_key_size: 8,
            inject_size: 64,
            max_msg_size: 1 << 30,
            tx_size: 256,
            rx_size: 256,
            data_progress: FI_PROGRESS_MANUAL,
            threading: FI_THREAD_DOMAIN,
            mem_tag_format: 0,
            addr_format: 2,
            ip: ip.map(|s| s.parse().unwrap()),
            caps_text: String::new(),
            mr_mode_text: String::new(),
        }
    }

    #[test]
    fn the_entry_on_the_bootstraps_address_wins_within_the_first_provider() {
        let list = vec![
            e("tcp;ofi_rxm", "eth0", Some("fe80::1")),
            e("tcp;ofi_rxm", "eth0", Some("192.0.2.2")),
            e("tcp;ofi_rxm", "lo", Some("127.0.0.1")),
            e("shm", "shm", None),
        ];
        let near = |ip: &str| Choice {
            provider: None,
            domain: None,
            near: Some(ip.parse().unwrap()),
        };
        assert_eq!(choose(&list, &near("127.0.0.1")), Some(2));
        assert_eq!(choose(&list, &near("192.0.2.2")), Some(1));
        // No entry on the address: one of the same family, else libfabric's first.
        assert_eq!(choose(&list, &near("10.0.0.1")), Some(1));
        let named = Choice {
            provider: Some("shm"),
            domain: None,
            near: Some("127.0.0.1".parse().unwrap()),
        };
        assert_eq!(choose(&list, &named), Some(3));
        let dom = Choice {
            provider: None,
            domain: Some("lo"),
            near: None,
        };
        assert_eq!(choose(&list, &dom), Some(2));
        let none = Choice {
            provider: Some("verbs"),
            domain: None,
            near: None,
        };
        assert_eq!(choose(&list, &none), None);
    }
}
