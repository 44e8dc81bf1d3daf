//! Memory registration as the provider's `mr_mode` asks, through a cache keyed by address and
//! length: each buffer is registered once and its registration reused while a transfer from it
//! may still be read.
//!
//! The rules ([`Rules`]) turn the provider's bits into what the wire does: a descriptor with
//! every local buffer (`FI_MR_LOCAL`), the provider's key rather than one fabbench picks
//! (`FI_MR_PROV_KEY`), remote addresses as virtual addresses or as offsets into the region
//! (`FI_MR_VIRT_ADDR`), whole pages only (`FI_MR_ALLOCATED`: the range is widened to its pages),
//! and binding to the endpoint before use (`FI_MR_ENDPOINT`, done by the [`Registrar`]). The
//! cache knows libfabric only through [`Registrar`], so every bit is tested here, including
//! those no provider on the build machine asks for.

use std::ffi::c_int;

use super::ffi::{FI_MR_ENDPOINT, FI_MR_LOCAL, FI_MR_PROV_KEY, FI_MR_VIRT_ADDR};

const PAGE: usize = 4096;

/// What a provider's `mr_mode` asks of fabbench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    pub mode: c_int,
}

impl Rules {
    /// Local buffers of sends, receives and RMA need a registration's descriptor.
    pub fn local(self) -> bool {
        self.mode & FI_MR_LOCAL != 0
    }
    pub fn provider_keys(self) -> bool {
        self.mode & FI_MR_PROV_KEY != 0
    }
    pub fn endpoint_bound(self) -> bool {
        self.mode & FI_MR_ENDPOINT != 0
    }
    /// The address a peer names in an RMA of `vaddr` inside a region starting at `base`.
    pub fn remote_address(self, vaddr: u64, base: u64) -> u64 {
        if self.mode & FI_MR_VIRT_ADDR != 0 {
            vaddr
        } else {
            vaddr - base
        }
    }
    /// The range to register for `len` bytes at `addr`: whole pages. Every page holding an
    /// allocated byte is allocated, so this satisfies `FI_MR_ALLOCATED` whatever the provider
    /// asks, and neighbouring buffers of one page share a registration.
    pub fn range(self, addr: usize, len: usize) -> (usize, usize) {
        let base = addr & !(PAGE - 1);
        let end = (addr + len.max(1)).div_ceil(PAGE) * PAGE;
        (base, end - base)
    }
}

/// One registration as the provider returned it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registered {
    /// The provider's object (a `fid_mr`), opaque here.
    pub handle: usize,
    /// What to pass as `desc` (never dereferenced: some providers return a small integer).
    pub desc: usize,
    pub key: u64,
}

/// Registers and releases memory; libfabric's `fi_mr_reg`/`fi_close` in the wire.
pub trait Registrar {
    fn register(
        &mut self,
        base: usize,
        len: usize,
        access: u64,
        key: u64,
    ) -> Result<Registered, String>;
    fn release(&mut self, reg: Registered);
}

/// A registration the cache handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub id: u64,
    pub base: u64,
    pub desc: usize,
    pub key: u64,
}

struct Cached {
    base: usize,
    len: usize,
    access: u64,
    reg: Registered,
    id: u64,
    /// Transfers that may still touch the region; it is never released while any does.
    users: u32,
    last_use: u64,
}

/// The registration cache.
pub struct Cache {
    pub rules: Rules,
    entries: Vec<Cached>,
    /// Most registrations kept without a user; past it the least recently used go.
    limit: usize,
    next_key: u64,
    next_id: u64,
    tick: u64,
    pub registrations: u64,
    pub hits: u64,
}

impl Cache {
    pub fn new(rules: Rules, limit: usize) -> Cache {
        Cache {
            rules,
            entries: Vec::new(),
            limit,
            next_key: 1,
            next_id: 1,
            tick: 0,
            registrations: 0,
            hits: 0,
        }
    }

    /// The registration covering `len` bytes at `addr` with at least `access`, registering it
    /// on a miss; counted as one user until [`Cache::done`].
    pub fn acquire(
        &mut self,
        r: &mut dyn Registrar,
        addr: usize,
        len: usize,
        access: u64,
    ) -> Result<Region, String> {
        self.tick += 1;
        let tick = self.tick;
        if let Some(c) = self
            .entries
            .iter_mut()
            .find(|c| c.base <= addr && addr + len <= c.base + c.len && c.access & access == access)
        {
            c.users += 1;
            c.last_use = tick;
            self.hits += 1;
            return Ok(Region {
                id: c.id,
                base: c.base as u64,
                desc: c.reg.desc,
                key: c.reg.key,
            });
        }
        self.evict(r, self.limit.saturating_sub(1));
        let (base, rlen) = self.rules.range(addr, len);
        // A key fabbench picks is unique within this rank's domain; the provider's otherwise.
        let key = if self.rules.provider_keys() {
            0
        } else {
            self.next_key += 1;
            self.next_key - 1
        };
        let reg = r.register(base, rlen, access, key)?;
        self.registrations += 1;
        let id = self.next_id;
        self.next_id += 1;
        self.entries.push(Cached {
            base,
            len: rlen,
            access,
            reg,
            id,
            users: 1,
            last_use: tick,
        });
        Ok(Region {
            id,
            base: base as u64,
            desc: reg.desc,
            key: reg.key,
        })
    }

    /// A transfer that acquired region `id` no longer touches it.
    pub fn done(&mut self, r: &mut dyn Registrar, id: u64) {
        if let Some(c) = self.entries.iter_mut().find(|c| c.id == id) {
            c.users = c.users.saturating_sub(1);
        }
        self.evict(r, self.limit);
    }

    /// Releases the least recently used regions nobody uses until at most `keep` remain.
    fn evict(&mut self, r: &mut dyn Registrar, keep: usize) {
        while self.entries.len() > keep {
            let Some(i) = self
                .entries
                .iter()
                .enumerate()
                .filter(|(_, c)| c.users == 0)
                .min_by_key(|(_, c)| c.last_use)
                .map(|(i, _)| i)
            else {
                return;
            };
            let c = self.entries.swap_remove(i);
            r.release(c.reg);
        }
    }

    /// Releases every registration (at shutdown).
    pub fn clear(&mut self, r: &mut dyn Registrar) {
        for c in self.entries.drain(..) {
            r.release(c.reg);
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ofi::ffi::{FI_MR_ALLOCATED, FI_READ, FI_REMOTE_READ};

    /// A registrar that records what it is asked, and plays a provider that picks its own keys
    /// when `provider_keys`.
    #[derive(Default)]
    struct Fake {
        provider_keys: bool,
        live: Vec<(usize, usize, u64)>,
        released: usize,
        next: usize,
    }

    impl Registrar for Fake {
        fn register(
            &mut self,
            base: usize,
            len: usize,
            _access: u64,
            key: u64,
        ) -> Result<Registered, String> {
            self.next += 1;
            let key = if self.provider_keys {
                0xabc0 + self.next as u64
            } else {
                key
            };
            self.live.push((base, len, key));
            Ok(Registered {
                handle: self.next,
                desc: 0x10 + self.next,
                key,
            })
        }
        fn release(&mut self, reg: Registered) {
            self.live.retain(|&(_, _, k)| k != reg.key);
            self.released += 1;
        }
    }

    #[test]
    fn a_buffer_is_registered_once_by_its_pages_and_reused() {
        let mut f = Fake::default();
        let mut c = Cache::new(
            Rules {
                mode: FI_MR_ALLOCATED,
            },
            8,
        );
        let a = c.acquire(&mut f, 0x10_0010, 100, FI_REMOTE_READ).unwrap();
        assert_eq!(f.live, vec![(0x10_0000, 4096, 1)]);
        assert_eq!(a.base, 0x10_0000);
        // Inside the same page: the same registration.
        let b = c.acquire(&mut f, 0x10_0100, 200, FI_REMOTE_READ).unwrap();
        assert_eq!(b, a);
        assert_eq!((c.registrations, c.hits), (1, 1));
        // Crossing the page: a new one, with a new key fabbench picked.
        let d = c.acquire(&mut f, 0x10_0ff0, 0x20, FI_REMOTE_READ).unwrap();
        assert_eq!(f.live[1], (0x10_0000, 8192, 2));
        assert_ne!(d.id, a.id);
        // Other access: a registration of its own.
        c.acquire(&mut f, 0x10_0010, 100, FI_READ).unwrap();
        assert_eq!(c.registrations, 3);
    }

    #[test]
    fn provider_keys_and_offsets_follow_mr_mode() {
        let mut f = Fake {
            provider_keys: true,
            ..Fake::default()
        };
        let rules = Rules {
            mode: FI_MR_PROV_KEY | FI_MR_LOCAL | FI_MR_ENDPOINT,
        };
        assert!(rules.local() && rules.endpoint_bound() && rules.provider_keys());
        let mut c = Cache::new(rules, 8);
        let a = c.acquire(&mut f, 0x20_0040, 64, FI_REMOTE_READ).unwrap();
        assert_eq!(a.key, 0xabc1, "the provider's key, not the one requested");
        // Without FI_MR_VIRT_ADDR a peer names an offset into the region.
        assert_eq!(rules.remote_address(0x20_0040, a.base), 0x40);
        let virt = Rules {
            mode: FI_MR_VIRT_ADDR,
        };
        assert_eq!(virt.remote_address(0x20_0040, a.base), 0x20_0040);
        assert!(!virt.local() && !virt.provider_keys());
    }

    #[test]
    fn a_region_in_use_is_never_evicted_and_idle_ones_go_oldest_first() {
        let mut f = Fake::default();
        let mut c = Cache::new(Rules { mode: 0 }, 2);
        let a = c.acquire(&mut f, 0x1000, 10, FI_REMOTE_READ).unwrap();
        let b = c.acquire(&mut f, 0x3000, 10, FI_REMOTE_READ).unwrap();
        let d = c.acquire(&mut f, 0x5000, 10, FI_REMOTE_READ).unwrap();
        // All three in use: none released, though over the limit.
        assert_eq!((f.live.len(), f.released), (3, 0));
        c.done(&mut f, b.id);
        assert_eq!(f.released, 1);
        assert!(!f.live.iter().any(|&(base, _, _)| base == 0x3000));
        c.done(&mut f, a.id);
        c.done(&mut f, d.id);
        // Two idle kept, within the limit.
        assert_eq!(c.len(), 2);
        c.clear(&mut f);
        assert!(f.live.is_empty());
    }
}
