//! libfabric's C types as Rust declares them: the ABI of `FABRIC_1.3` (libfabric 1.5 to 1.x,
//! frozen there and kept by 2.x through its compatibility symbols), so no libfabric header is
//! needed to build. Every size is checked against the C compiler's (gcc `offsetof` on x86_64,
//! libfabric 1.17's headers) by the assertions at the end.
//!
//! Only `fi_getinfo` and a few others are exported functions (see [`super::library`]); the
//! calls a benchmark makes (`fi_tsend`, `fi_cq_read`, `fi_mr_reg`, ...) are `static inline` in
//! the headers, calls through the objects' ops tables. Each table opens with its own size and
//! only ever grows, so a slot is used only where the provider's table reaches it
//! ([`slot`]). Slots fabbench never calls are untyped pointers.

#![allow(dead_code)] // The structs mirror C: every field is declared, not every one is read.

use std::ffi::{c_char, c_int, c_void};

pub type FiAddr = u64;
type Unused = *const c_void;

#[repr(C)]
pub struct FiTxAttr {
    pub caps: u64,
    pub mode: u64,
    pub op_flags: u64,
    pub msg_order: u64,
    pub comp_order: u64,
    pub inject_size: usize,
    pub size: usize,
    pub iov_limit: usize,
    pub rma_iov_limit: usize,
    pub tclass: u32,
}

#[repr(C)]
pub struct FiRxAttr {
    pub caps: u64,
    pub mode: u64,
    pub op_flags: u64,
    pub msg_order: u64,
    pub comp_order: u64,
    pub total_buffered_recv: usize,
    pub size: usize,
    pub iov_limit: usize,
}

#[repr(C)]
pub struct FiEpAttr {
    pub type_: c_int,
    pub protocol: u32,
    pub protocol_version: u32,
    pub max_msg_size: usize,
    pub msg_prefix_size: usize,
    pub max_order_raw_size: usize,
    pub max_order_war_size: usize,
    pub max_order_waw_size: usize,
    pub mem_tag_format: u64,
    pub tx_ctx_cnt: usize,
    pub rx_ctx_cnt: usize,
    pub auth_key_size: usize,
    pub auth_key: *mut u8,
}

#[repr(C)]
pub struct FiDomainAttr {
    pub domain: *mut FidDomain,
    pub name: *mut c_char,
    pub threading: c_int,
    pub control_progress: c_int,
    pub data_progress: c_int,
    pub resource_mgmt: c_int,
    pub av_type: c_int,
    /// An `int` in C, not a u64.
    pub mr_mode: c_int,
    pub mr_key_size: usize,
    pub cq_data_size: usize,
    pub cq_cnt: usize,
    pub ep_cnt: usize,
    pub tx_ctx_cnt: usize,
    pub rx_ctx_cnt: usize,
    pub max_ep_tx_ctx: usize,
    pub max_ep_rx_ctx: usize,
    pub max_ep_stx_ctx: usize,
    pub max_ep_srx_ctx: usize,
    pub cntr_cnt: usize,
    pub mr_iov_limit: usize,
    pub caps: u64,
    pub mode: u64,
    pub auth_key: *mut u8,
    pub auth_key_size: usize,
    pub max_err_data: usize,
    pub mr_cnt: usize,
    pub tclass: u32,
}

#[repr(C)]
pub struct FiFabricAttr {
    pub fabric: *mut FidFabric,
    pub name: *mut c_char,
    pub prov_name: *mut c_char,
    pub prov_version: u32,
    pub api_version: u32,
}

#[repr(C)]
pub struct FiInfo {
    pub next: *mut FiInfo,
    pub caps: u64,
    pub mode: u64,
    pub addr_format: u32,
    pub src_addrlen: usize,
    pub dest_addrlen: usize,
    pub src_addr: *mut c_void,
    pub dest_addr: *mut c_void,
    pub handle: *mut Fid,
    pub tx_attr: *mut FiTxAttr,
    pub rx_attr: *mut FiRxAttr,
    pub ep_attr: *mut FiEpAttr,
    pub domain_attr: *mut FiDomainAttr,
    pub fabric_attr: *mut FiFabricAttr,
    pub nic: *mut c_void,
}

#[repr(C)]
pub struct FiOps {
    pub size: usize,
    pub close: Option<unsafe extern "C" fn(*mut Fid) -> c_int>,
    pub bind: Option<unsafe extern "C" fn(*mut Fid, *mut Fid, u64) -> c_int>,
    pub control: Option<unsafe extern "C" fn(*mut Fid, c_int, *mut c_void) -> c_int>,
    pub ops_open: Unused,
    pub tostr: Unused,
    pub ops_set: Unused,
}

#[repr(C)]
pub struct Fid {
    pub fclass: usize,
    pub context: *mut c_void,
    pub ops: *mut FiOps,
}

#[repr(C)]
pub struct FiOpsFabric {
    pub size: usize,
    pub domain: Option<
        unsafe extern "C" fn(
            *mut FidFabric,
            *mut FiInfo,
            *mut *mut FidDomain,
            *mut c_void,
        ) -> c_int,
    >,
    pub passive_ep: Unused,
    pub eq_open: Unused,
    pub wait_open: Unused,
    pub trywait: Unused,
    pub domain2: Unused,
}

#[repr(C)]
pub struct FidFabric {
    pub fid: Fid,
    pub ops: *mut FiOpsFabric,
    pub api_version: u32,
}

#[repr(C)]
pub struct FiOpsDomain {
    pub size: usize,
    pub av_open: Option<
        unsafe extern "C" fn(*mut FidDomain, *mut FiAvAttr, *mut *mut FidAv, *mut c_void) -> c_int,
    >,
    pub cq_open: Option<
        unsafe extern "C" fn(*mut FidDomain, *mut FiCqAttr, *mut *mut FidCq, *mut c_void) -> c_int,
    >,
    pub endpoint: Option<
        unsafe extern "C" fn(*mut FidDomain, *mut FiInfo, *mut *mut FidEp, *mut c_void) -> c_int,
    >,
    pub scalable_ep: Unused,
    pub cntr_open: Unused,
    pub poll_open: Unused,
    pub stx_ctx: Unused,
    pub srx_ctx: Unused,
    pub query_atomic: Unused,
    pub query_collective: Unused,
    pub endpoint2: Unused,
}

pub type MrRegFn = unsafe extern "C" fn(
    *mut Fid,
    *const c_void,
    usize,
    u64,
    u64,
    u64,
    u64,
    *mut *mut FidMr,
    *mut c_void,
) -> c_int;

#[repr(C)]
pub struct FiOpsMr {
    pub size: usize,
    /// Takes the domain's `fid`, not the domain.
    pub reg: Option<MrRegFn>,
    pub regv: Unused,
    pub regattr: Unused,
}

#[repr(C)]
pub struct FidDomain {
    pub fid: Fid,
    pub ops: *mut FiOpsDomain,
    pub mr: *mut FiOpsMr,
}

#[repr(C)]
pub struct FidMr {
    pub fid: Fid,
    pub mem_desc: *mut c_void,
    pub key: u64,
}

#[repr(C)]
pub struct FiAvAttr {
    pub type_: c_int,
    pub rx_ctx_bits: c_int,
    pub count: usize,
    pub ep_per_node: usize,
    pub name: *const c_char,
    pub map_addr: *mut c_void,
    pub flags: u64,
}

#[repr(C)]
pub struct FiOpsAv {
    pub size: usize,
    pub insert: Option<
        unsafe extern "C" fn(
            *mut FidAv,
            *const c_void,
            usize,
            *mut FiAddr,
            u64,
            *mut c_void,
        ) -> c_int,
    >,
    pub insertsvc: Unused,
    pub insertsym: Unused,
    pub remove: Unused,
    pub lookup: Unused,
    pub straddr: Option<
        unsafe extern "C" fn(*mut FidAv, *const c_void, *mut c_char, *mut usize) -> *const c_char,
    >,
    pub av_set: Unused,
}

#[repr(C)]
pub struct FidAv {
    pub fid: Fid,
    pub ops: *mut FiOpsAv,
}

#[repr(C)]
pub struct FiCqAttr {
    pub size: usize,
    pub flags: u64,
    pub format: c_int,
    pub wait_obj: c_int,
    pub signaling_vector: c_int,
    pub wait_cond: c_int,
    pub wait_set: *mut c_void,
}

pub type CqReadFn = unsafe extern "C" fn(*mut FidCq, *mut c_void, usize) -> isize;

#[repr(C)]
pub struct FiOpsCq {
    pub size: usize,
    pub read: Option<CqReadFn>,
    pub readfrom: Unused,
    pub readerr: Option<unsafe extern "C" fn(*mut FidCq, *mut FiCqErrEntry, u64) -> isize>,
    pub sread: Unused,
    pub sreadfrom: Unused,
    pub signal: Unused,
    pub strerror: Option<
        unsafe extern "C" fn(*mut FidCq, c_int, *const c_void, *mut c_char, usize) -> *const c_char,
    >,
}

#[repr(C)]
pub struct FidCq {
    pub fid: Fid,
    pub ops: *mut FiOpsCq,
}

/// A completion in `FI_CQ_FORMAT_TAGGED`. Only receive completions carry a meaningful `len`
/// and `tag` (send and RMA completions report 0 or a stale value on the providers here).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct FiCqTaggedEntry {
    pub op_context: *mut c_void,
    pub flags: u64,
    pub len: usize,
    pub buf: *mut c_void,
    pub data: u64,
    pub tag: u64,
}

impl Default for FiCqTaggedEntry {
    fn default() -> Self {
        FiCqTaggedEntry {
            op_context: std::ptr::null_mut(),
            flags: 0,
            len: 0,
            buf: std::ptr::null_mut(),
            data: 0,
            tag: 0,
        }
    }
}

#[repr(C)]
pub struct FiCqErrEntry {
    pub op_context: *mut c_void,
    pub flags: u64,
    pub len: usize,
    pub buf: *mut c_void,
    pub data: u64,
    pub tag: u64,
    pub olen: usize,
    pub err: c_int,
    pub prov_errno: c_int,
    pub err_data: *mut c_void,
    pub err_data_size: usize,
}

#[repr(C)]
pub struct FiOpsEp {
    pub size: usize,
    pub cancel: Unused,
    pub getopt: Unused,
    pub setopt: Unused,
    pub tx_ctx: Unused,
    pub rx_ctx: Unused,
    pub rx_size_left: Unused,
    pub tx_size_left: Unused,
}

#[repr(C)]
pub struct FiOpsCm {
    pub size: usize,
    pub setname: Unused,
    pub getname: Option<unsafe extern "C" fn(*mut Fid, *mut c_void, *mut usize) -> c_int>,
    pub getpeer: Unused,
    pub connect: Unused,
    pub listen: Unused,
    pub accept: Unused,
    pub reject: Unused,
    pub shutdown: Unused,
    pub join: Unused,
}

pub type RecvFn =
    unsafe extern "C" fn(*mut FidEp, *mut c_void, usize, *mut c_void, FiAddr, *mut c_void) -> isize;
pub type SendFn = unsafe extern "C" fn(
    *mut FidEp,
    *const c_void,
    usize,
    *mut c_void,
    FiAddr,
    *mut c_void,
) -> isize;
pub type InjectFn = unsafe extern "C" fn(*mut FidEp, *const c_void, usize, FiAddr) -> isize;

#[repr(C)]
pub struct FiOpsMsg {
    pub size: usize,
    pub recv: Option<RecvFn>,
    pub recvv: Unused,
    pub recvmsg: Unused,
    pub send: Option<SendFn>,
    pub sendv: Unused,
    pub sendmsg: Unused,
    pub inject: Option<InjectFn>,
    pub senddata: Unused,
    pub injectdata: Unused,
}

pub type TRecvFn = unsafe extern "C" fn(
    *mut FidEp,
    *mut c_void,
    usize,
    *mut c_void,
    FiAddr,
    u64,
    u64,
    *mut c_void,
) -> isize;
pub type TSendFn = unsafe extern "C" fn(
    *mut FidEp,
    *const c_void,
    usize,
    *mut c_void,
    FiAddr,
    u64,
    *mut c_void,
) -> isize;
pub type TInjectFn = unsafe extern "C" fn(*mut FidEp, *const c_void, usize, FiAddr, u64) -> isize;

#[repr(C)]
pub struct FiOpsTagged {
    pub size: usize,
    pub recv: Option<TRecvFn>,
    pub recvv: Unused,
    pub recvmsg: Unused,
    pub send: Option<TSendFn>,
    pub sendv: Unused,
    pub sendmsg: Unused,
    pub inject: Option<TInjectFn>,
    pub senddata: Unused,
    pub injectdata: Unused,
}

pub type RmaReadFn = unsafe extern "C" fn(
    *mut FidEp,
    *mut c_void,
    usize,
    *mut c_void,
    FiAddr,
    u64,
    u64,
    *mut c_void,
) -> isize;
pub type RmaWriteFn = unsafe extern "C" fn(
    *mut FidEp,
    *const c_void,
    usize,
    *mut c_void,
    FiAddr,
    u64,
    u64,
    *mut c_void,
) -> isize;

#[repr(C)]
pub struct FiOpsRma {
    pub size: usize,
    pub read: Option<RmaReadFn>,
    pub readv: Unused,
    pub readmsg: Unused,
    pub write: Option<RmaWriteFn>,
    pub writev: Unused,
    pub writemsg: Unused,
    pub inject: Unused,
    pub writedata: Unused,
    pub injectdata: Unused,
}

#[repr(C)]
pub struct FidEp {
    pub fid: Fid,
    pub ops: *mut FiOpsEp,
    pub cm: *mut FiOpsCm,
    pub msg: *mut FiOpsMsg,
    pub rma: *mut FiOpsRma,
    pub tagged: *mut FiOpsTagged,
    pub atomic: *mut c_void,
    pub collective: *mut c_void,
}

/// `FI_VERSION(major, minor)`.
pub const fn fi_version(major: u32, minor: u32) -> u32 {
    (major << 16) | minor
}

// Capabilities and operation flags (fabric.h).
pub const FI_MSG: u64 = 1 << 1;
pub const FI_RMA: u64 = 1 << 2;
pub const FI_TAGGED: u64 = 1 << 3;
pub const FI_READ: u64 = 1 << 8;
pub const FI_WRITE: u64 = 1 << 9;
pub const FI_RECV: u64 = 1 << 10;
pub const FI_SEND: u64 = 1 << 11;
pub const FI_TRANSMIT: u64 = FI_SEND;
pub const FI_REMOTE_READ: u64 = 1 << 12;
pub const FI_REMOTE_WRITE: u64 = 1 << 13;
pub const FI_ORDER_SAS: u64 = 1 << 8;
pub const FI_DIRECTED_RECV: u64 = 1 << 59;
// Modes.
pub const FI_CONTEXT: u64 = 1 << 59;
pub const FI_CONTEXT2: u64 = 1 << 52;
pub const FI_MSG_PREFIX: u64 = 1 << 58;
pub const FI_ADDR_UNSPEC: FiAddr = u64::MAX;
// Memory registration modes (an int).
pub const FI_MR_LOCAL: c_int = 1 << 2;
pub const FI_MR_RAW: c_int = 1 << 3;
pub const FI_MR_VIRT_ADDR: c_int = 1 << 4;
pub const FI_MR_ALLOCATED: c_int = 1 << 5;
pub const FI_MR_PROV_KEY: c_int = 1 << 6;
pub const FI_MR_MMU_NOTIFY: c_int = 1 << 7;
pub const FI_MR_RMA_EVENT: c_int = 1 << 8;
pub const FI_MR_ENDPOINT: c_int = 1 << 9;
pub const FI_MR_HMEM: c_int = 1 << 10;
// Enums.
pub const FI_EP_MSG: c_int = 1;
pub const FI_EP_DGRAM: c_int = 2;
pub const FI_EP_RDM: c_int = 3;
pub const FI_AV_TABLE: c_int = 2;
pub const FI_CQ_FORMAT_TAGGED: c_int = 4;
pub const FI_WAIT_NONE: c_int = 0;
pub const FI_PROGRESS_AUTO: c_int = 1;
pub const FI_PROGRESS_MANUAL: c_int = 2;
pub const FI_THREAD_SAFE: c_int = 1;
pub const FI_THREAD_DOMAIN: c_int = 3;
pub const FI_ENABLE: c_int = 6;
pub const FI_TYPE_INFO: c_int = 0;
pub const FI_TYPE_CAPS: c_int = 2;
pub const FI_TYPE_MR_MODE: c_int = 21;
// Errors, returned negated.
pub const FI_EAGAIN: isize = 11;
pub const FI_ENOSYS: isize = 38;
pub const FI_ENODATA: isize = 61;
pub const FI_ETOOSMALL: isize = 257;
pub const FI_EAVAIL: isize = 259;
pub const FI_ETRUNC: isize = 265;

/// Reads a slot of an ops table the way the headers' `FI_CHECK_OP` does: only where the
/// provider's table (whose first word is its size in bytes) reaches past the slot, and only if
/// the slot is set. Must be used inside `unsafe`, on a pointer to a live ops table.
macro_rules! op {
    ($table:expr, $ty:ty, $field:ident) => {{
        let t: *const $ty = $table;
        if t.is_null() || *(t as *const usize) <= std::mem::offset_of!($ty, $field) {
            None
        } else {
            (*t).$field
        }
    }};
}

// The C sizes of libfabric 1.17's structs, x86_64 (gcc offsetof).
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<FiInfo>() == 120);
    assert!(size_of::<FiTxAttr>() == 80);
    assert!(size_of::<FiRxAttr>() == 64);
    assert!(size_of::<FiEpAttr>() == 96);
    assert!(size_of::<FiDomainAttr>() == 192);
    assert!(offset_of!(FiDomainAttr, mr_mode) == 36);
    assert!(offset_of!(FiDomainAttr, mr_iov_limit) == 128);
    assert!(offset_of!(FiDomainAttr, tclass) == 184);
    assert!(size_of::<FiFabricAttr>() == 32);
    assert!(size_of::<Fid>() == 24);
    assert!(size_of::<FiOps>() == 56);
    assert!(size_of::<FidFabric>() == 40);
    assert!(size_of::<FiOpsFabric>() == 56);
    assert!(size_of::<FidDomain>() == 40);
    assert!(size_of::<FiOpsDomain>() == 96);
    assert!(size_of::<FiOpsMr>() == 32);
    assert!(size_of::<FidMr>() == 40);
    assert!(size_of::<FidEp>() == 80);
    assert!(size_of::<FiOpsEp>() == 64);
    assert!(size_of::<FiOpsCm>() == 80);
    assert!(size_of::<FiOpsMsg>() == 80);
    assert!(offset_of!(FiOpsMsg, send) == 32);
    assert!(offset_of!(FiOpsMsg, inject) == 56);
    assert!(size_of::<FiOpsTagged>() == 80);
    assert!(size_of::<FiOpsRma>() == 80);
    assert!(size_of::<FidCq>() == 32);
    assert!(size_of::<FiOpsCq>() == 64);
    assert!(offset_of!(FiOpsCq, strerror) == 56);
    assert!(size_of::<FidAv>() == 32);
    assert!(size_of::<FiOpsAv>() == 64);
    assert!(offset_of!(FiOpsAv, straddr) == 48);
    assert!(size_of::<FiCqAttr>() == 40);
    assert!(size_of::<FiAvAttr>() == 48);
    assert!(size_of::<FiCqTaggedEntry>() == 48);
    assert!(size_of::<FiCqErrEntry>() == 80);
    assert!(offset_of!(FiCqErrEntry, err) == 56);
    assert!(offset_of!(FiTxAttr, inject_size) == 40);
    assert!(offset_of!(FiEpAttr, max_msg_size) == 16);
    assert!(offset_of!(FiEpAttr, mem_tag_format) == 56);
    assert!(offset_of!(FiInfo, addr_format) == 24);
};
