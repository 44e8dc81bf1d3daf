//! The BXI model: a BXI v1 NIC driven through Portals 4 as pscom4portals uses it.
//!
//! Eager messages (and control) are put into the peer's pre-allocated receive buffers of
//! `buffer_size` bytes, one matching list entry (ME) each, `recvq` per connection; the host
//! copies each message out and re-posts the ME, the per-ME management cost that leaves small
//! and mid-size messages slower. At most `sendq` eager puts per connection wait for their ack.
//! A put that finds no free receive buffer gets a failed ack and is put again after a round
//! trip and `retry_ns` (the receiver reorders by sequence number: the engine does). Above
//! `rendezvous` bytes, the receiver posts an ME matched by a unique rendezvous id and the
//! sender puts the data straight into it in fragments of `rndv_fragment_size`, at most
//! `max_rndv_reqs` outstanding; matching happens in the NIC, so the receiving host only sees
//! the completion. The NIC handles `nic_message_ns` per message; each link direction carries
//! `link_gbps`. Nodes sit in a fat tree of `switch_radix`-port switches in `tree_levels`
//! levels: a put holds every link of its way up and down (cut-through), and each switch
//! beyond the first adds `hop_latency_ns`. Ranks share a node (`ranks_per_node`): its NIC and
//! its link into the tree; two ranks of one node cross no link.

use std::collections::BTreeMap;

use bench_core::des::Ps;
use bench_core::tunables::{Def, Settings};

use super::card::BuiltinCard;
use super::topology::{node_of, nodes_for, Shape, Topology};
use super::{ns, transfer, Credits, FrameInfo, Model, Offer, Resource, Take, World};
use crate::engine::EngineConfig;
use crate::error::Result;
use crate::wire::FragKind;

pub const CARD: &str = include_str!("cards/bxi.toml");

static BUILTIN: BuiltinCard = BuiltinCard::new("bxi", CARD);

pub fn tunables() -> &'static [Def] {
    BUILTIN.defs()
}

pub fn summary() -> &'static str {
    BUILTIN.summary()
}

/// On bxi the engine's eager/rendezvous switch and fragment size are pscom4portals' own.
pub fn engine(s: &Settings, cfg: &mut EngineConfig) {
    cfg.eager_limit = s.get_by_runtime_name::<u64>("bxi.rendezvous") as usize;
    cfg.frag_size = s.get_by_runtime_name::<u64>("bxi.rndv_fragment_size") as usize;
}

/// Whether the card's values, with the engine's, can carry every message (see bxi.md, "Values
/// that cannot carry a message"). A receive or send queue of one entry and buffers of 256
/// bytes can: a message of more buffers than the queues hold streams through them.
/// Whether the fat tree the settings describe holds `n` ranks: checked when the plan is
/// built, so a job too large is refused before anything runs (exit 2).
pub fn check_ranks(s: &Settings, n: usize) -> std::result::Result<(), crate::Refusal> {
    crate::fabric::any_ranks(s, n)?;
    let (shape, nodes) = tree_of(s, n);
    let Shape::FatTree { radix, levels } = shape else {
        unreachable!("bxi is a fat tree")
    };
    let capacity = super::topology::fat_tree_capacity(radix, levels);
    if nodes <= capacity {
        return Ok(());
    }
    Err(crate::Refusal::Ranks {
        ranks: n,
        why: too_large(
            s,
            n,
            &super::topology::TooLarge {
                radix,
                levels,
                capacity,
                nodes,
            },
        ),
    })
}

/// The fat tree the settings describe and how many of its nodes `n` ranks fill.
fn tree_of(s: &Settings, n: usize) -> (Shape, usize) {
    let ranks_per_node = s.get_by_runtime_name::<i64>("bxi.ranks_per_node").max(1) as usize;
    let shape = Shape::FatTree {
        radix: s.get_by_runtime_name::<i64>("bxi.switch_radix") as usize,
        levels: s.get_by_runtime_name::<i64>("bxi.tree_levels") as usize,
    };
    (shape, nodes_for(n, ranks_per_node))
}

/// The refusal of a job of `n` ranks the tree cannot hold, naming what would.
fn too_large(s: &Settings, n: usize, e: &super::topology::TooLarge) -> String {
    let ranks_per_node = s.get_by_runtime_name::<i64>("bxi.ranks_per_node").max(1) as usize;
    format!(
        "-n {n}: {e}; {}, {} and {} hold at most -n {}: raise bxi.switch_radix or bxi.tree_levels, or use fewer ranks",
        super::shown(s, "bxi.switch_radix"),
        super::shown(s, "bxi.tree_levels"),
        super::shown(s, "bxi.ranks_per_node"),
        e.capacity.saturating_mul(ranks_per_node)
    )
}

pub fn check(s: &Settings) -> std::result::Result<(), crate::Refusal> {
    let cfg = super::engine_for(s, engine);
    let header = crate::header::FrameType::Eager.header_len();
    if cfg.eager_limit + header > super::MAX_FRAME {
        return Err(crate::Refusal::settings(format!(
            "{}: an eager message that large and its {header}-byte header do not fit the emulated wire's largest frame of {} bytes; use bxi.rendezvous <= {}",
            super::shown(s, "bxi.rendezvous"),
            super::MAX_FRAME,
            super::MAX_FRAME - header
        )));
    }
    if retry_interval(s) == 0 {
        return Err(crate::Refusal::settings(format!(
            "{} with {}: a put that finds no free receive buffer would be put again at the same instant, for ever; 2 x bxi.latency_ns + bxi.retry_ns must be at least 1 ps (0.001 ns)",
            super::shown(s, "bxi.latency_ns"),
            super::shown(s, "bxi.retry_ns")
        )));
    }
    Ok(())
}

/// The time from a put's failed arrival to its next: the failed ack's round trip and the
/// host's delay.
fn retry_interval(s: &Settings) -> Ps {
    2 * ns(s.get_by_runtime_name::<f64>("bxi.latency_ns"))
        + ns(s.get_by_runtime_name::<f64>("bxi.retry_ns"))
}

#[derive(Debug, Clone)]
struct Params {
    link_mbps: f64,
    latency: Ps,
    nic: Ps,
    put: Ps,
    event: Ps,
    buffer: u64,
    sendq: u64,
    recvq: u64,
    me: Ps,
    rndv_reqs: u64,
    copy_mbps: f64,
    retry: Ps,
}

pub struct Bxi {
    p: Params,
    ranks_per_node: usize,
    tree: Topology,
    /// Each node's NIC.
    nic: Vec<Resource>,
    sendq: BTreeMap<(usize, usize), Credits>,
    recvq: BTreeMap<(usize, usize), Credits>,
    rndvq: BTreeMap<(usize, usize), Credits>,
    failed_acks: u64,
}

impl Bxi {
    pub fn build(s: &Settings, n: usize) -> Result<Box<dyn Model>> {
        check(s).map_err(|e| crate::error::TransportError::Config(e.to_string()))?;
        let p = Params {
            link_mbps: s.get_by_runtime_name::<f64>("bxi.link_gbps") * 1e3 / 8.0,
            latency: ns(s.get_by_runtime_name::<f64>("bxi.latency_ns")),
            nic: ns(s.get_by_runtime_name::<f64>("bxi.nic_message_ns")),
            put: ns(s.get_by_runtime_name::<f64>("bxi.put_overhead_ns")),
            event: ns(s.get_by_runtime_name::<f64>("bxi.event_ns")),
            buffer: s.get_by_runtime_name::<u64>("bxi.buffer_size"),
            sendq: s.get_by_runtime_name::<i64>("bxi.sendq") as u64,
            recvq: s.get_by_runtime_name::<i64>("bxi.recvq") as u64,
            me: ns(s.get_by_runtime_name::<f64>("bxi.me_cost_ns")),
            rndv_reqs: s.get_by_runtime_name::<i64>("bxi.max_rndv_reqs") as u64,
            copy_mbps: s.get_by_runtime_name::<f64>("bxi.copy_mbps"),
            retry: ns(s.get_by_runtime_name::<f64>("bxi.retry_ns")),
        };
        let ranks_per_node = s.get_by_runtime_name::<i64>("bxi.ranks_per_node").max(1) as usize;
        let (shape, nodes) = tree_of(s, n);
        let hop = ns(s.get_by_runtime_name::<f64>("bxi.hop_latency_ns"));
        let tree = Topology::new(shape, nodes, hop)
            .map_err(|e| crate::error::TransportError::Config(too_large(s, n, &e)))?;
        Ok(Box::new(Bxi {
            p,
            ranks_per_node,
            tree,
            nic: vec![Resource::default(); nodes],
            sendq: BTreeMap::new(),
            recvq: BTreeMap::new(),
            rndvq: BTreeMap::new(),
            failed_acks: 0,
        }))
    }

    /// Puts of `bytes` each from `src` to `dst`, at most `window` unacknowledged (a put
    /// beyond it waits for the ack of the one `window` before it); returns (host free, each
    /// put's arrival).
    fn puts(
        &mut self,
        src: usize,
        dst: usize,
        sizes: &[u64],
        mut t: Ps,
        window: usize,
    ) -> (Ps, Vec<Ps>) {
        let mut arrivals: Vec<Ps> = Vec::with_capacity(sizes.len());
        let (a, z) = (
            node_of(src, self.ranks_per_node),
            node_of(dst, self.ranks_per_node),
        );
        let route = self.tree.route(a, z);
        let hops = self.tree.hop_latency(&route);
        for (j, &b) in sizes.iter().enumerate() {
            if j >= window {
                t = t.max(arrivals[j - window] + self.p.latency);
            }
            t += self.p.put;
            let (_, nic_done) = self.nic[a].reserve(t, self.p.nic);
            let (_, end) = self
                .tree
                .reserve(&route.links, nic_done, transfer(b, self.p.link_mbps));
            arrivals.push(end + self.p.latency + hops);
        }
        (t, arrivals)
    }

    fn eager_sizes(&self, bytes: u64) -> Vec<u64> {
        let k = bytes.div_ceil(self.p.buffer).max(1);
        (0..k)
            .map(|i| (bytes - i * self.p.buffer).min(self.p.buffer))
            .collect()
    }
}

impl Model for Bxi {
    fn offer(&mut self, w: &mut World, f: &FrameInfo, now: Ps) -> Result<Offer> {
        let lat = self.p.latency;
        if let FragKind::Data { .. } = f.kind {
            let cap = self.p.rndv_reqs;
            let q = self
                .rndvq
                .entry((f.src, f.dst))
                .or_insert_with(|| Credits::new(cap));
            if !q.take(1, now) {
                q.wait(w, f.src, now);
                return Ok(Offer::Full {
                    why: format!("a rendezvous request slot to node {}", f.dst),
                });
            }
            let (free, arr) = self.puts(f.src, f.dst, &[f.bytes], now, 1);
            let ack = arr[0] + lat;
            self.rndvq
                .get_mut(&(f.src, f.dst))
                .expect("made above")
                .give_back(w, 1, ack);
            return Ok(Offer::Sent {
                sender_free: free,
                arrival: arr[0],
            });
        }
        // Eager data and control: puts into the peer's pre-posted buffers.
        let sizes = self.eager_sizes(f.bytes);
        let cap = self.p.sendq;
        // A message of more buffers than the send queue holds streams through it: it starts
        // with every slot and reuses each as its put is acknowledged.
        let k = (sizes.len() as u64).min(cap);
        let q = self
            .sendq
            .entry((f.src, f.dst))
            .or_insert_with(|| Credits::new(cap));
        if !q.take(k, now) {
            q.wait(w, f.src, now);
            return Ok(Offer::Full {
                why: format!("a send queue slot to node {} ({cap} outstanding)", f.dst),
            });
        }
        let mut t = now;
        if let FragKind::Cts { .. } = f.kind {
            // The receiver posts the ME the data will be put into.
            t += self.p.me;
        }
        let (free, arrivals) = self.puts(f.src, f.dst, &sizes, t, k as usize);
        let q = self.sendq.get_mut(&(f.src, f.dst)).expect("made above");
        // Each slot comes back with the ack of the last put that used it.
        for a in arrivals.iter().rev().take(k as usize) {
            q.give_back(w, 1, a + lat);
        }
        Ok(Offer::Sent {
            sender_free: free,
            arrival: *arrivals.last().expect("at least one put"),
        })
    }

    fn take(&mut self, w: &mut World, f: &FrameInfo, arrival: Ps, now: Ps) -> Result<Take> {
        if let FragKind::Data { last, .. } = f.kind {
            // Matched and placed by the NIC; the host only handles the completion.
            let cost = if last { self.p.event } else { 0 };
            return Ok(Take::Deliver { cost });
        }
        let cap = self.p.recvq;
        // As on the sending side, a message of more buffers than are posted streams through
        // them.
        let pieces = self.eager_sizes(f.bytes).len() as u64;
        let k = pieces.min(cap);
        let q = self
            .recvq
            .entry((f.src, f.dst))
            .or_insert_with(|| Credits::new(cap));
        if !q.take(k, arrival) {
            // No free receive buffer when it landed: failed ack, put again, and again until a
            // put lands when buffers are free. Buffers come back only as this node takes
            // frames, and a take can only hold them longer, so every put before the first
            // that lands after the known returns would fail: skip to that one (the same
            // puts, counted, without a pass through the scheduler for each).
            let every = 2 * self.p.latency + self.p.retry;
            let tries = match q.free_from(k, arrival) {
                Some(t) if every > 0 => (t - arrival).div_ceil(every).max(1),
                _ => 1,
            };
            self.failed_acks += tries;
            return Ok(Take::Retry {
                arrival: arrival + tries * every,
            });
        }
        let cost = pieces * self.p.event + transfer(f.bytes, self.p.copy_mbps) + pieces * self.p.me;
        self.recvq
            .get_mut(&(f.src, f.dst))
            .expect("made above")
            .give_back(w, k, now + cost);
        Ok(Take::Deliver { cost })
    }

    fn forget_before(&mut self, horizon: Ps) {
        for q in self
            .sendq
            .values_mut()
            .chain(self.recvq.values_mut())
            .chain(self.rndvq.values_mut())
        {
            q.forget_before(horizon);
        }
    }

    fn describe(&self) -> Vec<(String, String)> {
        vec![
            ("bxi.link_mbps".into(), format!("{:.0}", self.p.link_mbps)),
            ("bxi.failed_acks".into(), self.failed_acks.to_string()),
            ("bxi.ranks_per_node".into(), self.ranks_per_node.to_string()),
            ("bxi.topology".into(), self.tree.describe()),
        ]
    }
}

fn connect(ctx: &crate::fabric::FabricContext) -> Result<Box<dyn crate::transport::Transport>> {
    super::connect(ctx, "bxi", Bxi::build, engine)
}

/// The registry line's target.
pub const FABRIC: crate::fabric::FabricDef = crate::fabric::FabricDef {
    name: "bxi",
    kind: crate::fabric::FabricKind::Emulated,
    summary: "BXI v1 through Portals 4 (pscom4portals), emulated in virtual time",
    availability: crate::fabric::always_usable,
    tunables,
    defaults: &[],
    replaces: &[
        ("eager_limit", "bxi.rendezvous"),
        ("frag_size", "bxi.rndv_fragment_size"),
    ],
    ignores: crate::fabric::EMULATED_IGNORES,
    check_ranks,
    check_settings: check,
    switch_reach: crate::reach::engine_reach,
    launch: crate::fabric::Launch::Threads,
    cleanup: crate::fabric::nothing_to_clean,
    library: crate::fabric::no_library,
    connect,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulated::test_settings;
    use bench_core::des::Scheduler;

    #[test]
    fn the_smallest_queues_and_buffers_carry_messages() {
        for set in [
            ("bxi.recvq", "1"),
            ("bxi.sendq", "1"),
            ("bxi.buffer_size", "256"),
            ("bxi.max_rndv_reqs", "1"),
            ("bxi.rendezvous", "0"),
            ("bxi.latency_ns", "0"),
            ("bxi.retry_ns", "0"),
        ] {
            check(&test_settings(&[set])).unwrap_or_else(|e| panic!("{set:?}: {e}"));
        }
    }

    #[test]
    fn an_eager_limit_beyond_the_wires_largest_frame_is_refused() {
        let e = check(&test_settings(&[("bxi.rendezvous", "1G")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("bxi.rendezvous=1GiB:") && e.contains("use bxi.rendezvous <= 1073741800"),
            "{e}"
        );
        check(&test_settings(&[("bxi.rendezvous", "1073741800")])).unwrap();
        let e = Bxi::build(&test_settings(&[("bxi.rendezvous", "1G")]), 2)
            .err()
            .unwrap();
        assert!(e.to_string().contains("bxi.rendezvous=1GiB"), "{e}");
    }

    #[test]
    fn a_retry_that_takes_no_time_is_refused() {
        let e = check(&test_settings(&[
            ("bxi.latency_ns", "0"),
            ("bxi.retry_ns", "0"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("bxi.latency_ns=0")
                && e.contains("bxi.retry_ns=0")
                && e.contains("for ever"),
            "{e}"
        );
        // Rounded to the model's picoseconds, 0.0001 ns is no time either.
        assert!(check(&test_settings(&[
            ("bxi.latency_ns", "0"),
            ("bxi.retry_ns", "0.0001"),
        ]))
        .is_err());
        check(&test_settings(&[
            ("bxi.latency_ns", "0"),
            ("bxi.retry_ns", "0.001"),
        ]))
        .unwrap();
    }

    fn eager(bytes: u64) -> FrameInfo {
        FrameInfo {
            src: 0,
            dst: 1,
            kind: FragKind::Eager { len: bytes - 24 },
            bytes,
        }
    }

    /// A put refused for want of a buffer is put again every round trip plus retry_ns; the
    /// model skips to the first that lands after a buffer comes back, counting every failed
    /// ack on the way, as putting each in turn would.
    #[test]
    fn failed_puts_skip_to_the_first_that_finds_a_buffer() {
        let s = test_settings(&[("bxi.recvq", "1")]);
        let sched = Scheduler::new(2);
        let mut w = World { sched: &sched };
        let mut m = Bxi::build(&s, 2).unwrap();
        let every = 2 * ns(700.0) + ns(1000.0);
        // The first frame takes the only buffer at 1 us and holds it until it is handled.
        let Take::Deliver { cost } = m.take(&mut w, &eager(64), 1_000_000, 1_000_000).unwrap()
        else {
            panic!("the first frame finds a buffer")
        };
        let back = 1_000_000 + cost;
        // The second landed at 1.1 us: refused until the buffer is back.
        let Take::Retry { arrival } = m.take(&mut w, &eager(64), 1_100_000, 1_100_000).unwrap()
        else {
            panic!("no buffer for the second")
        };
        let tries = (back - 1_100_000).div_ceil(every);
        assert_eq!(arrival, 1_100_000 + tries * every);
        assert!(arrival >= back && arrival - every < back);
        assert_eq!(
            m.describe()[1],
            ("bxi.failed_acks".into(), tries.to_string())
        );
        assert!(matches!(
            m.take(&mut w, &eager(64), arrival, arrival).unwrap(),
            Take::Deliver { .. }
        ));
    }
}
