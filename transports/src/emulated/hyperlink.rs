//! The Hyperlink model: TI KeyStone II Hyperlink as TI's hlink BTL drives it.
//!
//! For every fragment the sender copies the data into one physically
//! contiguous scratch area, moves it into the receiver's window by CPU remote writes (below
//! `dma_threshold`) or by EDMA (set-up cost, link-rate transfer), waits for that to finish
//! (the scratch area is single), and posts a mail. The window and mailbox hold 32 fragments;
//! the sender checks for room with a remote read when it believes the window full, and waits
//! when it is (back-pressure). With the receive thread on, a drain thread empties each
//! fragment into its destination as it lands, sharing the rank's core; with it off, the
//! progress engine drains a message only when all its fragments are in, so a message larger
//! than the window can never complete: the model reports that limit instead of hanging.
//! Topologies: 2 nodes, 3 fully connected, or a ring (TI's BTL has the 4-node one) whose
//! traffic to a node two away lands in the middle node's memory (mapped by both its ports, no
//! software there) and is pulled over the second link by the receiver: 1->3 via 2, 3->1 via 4,
//! 2->4 via 3, 4->2 via 1. Rings of more nodes are this model's extension (no such hardware
//! is published): traffic further away is forwarded cut-through over the links between the
//! first and the last node it passes, `hop_latency_ns` per node beyond the first, and pulled
//! from the last. Ranks share a node (`ranks_per_node`); two ranks of one node exchange
//! through its memory by local copies, crossing no link.

use std::collections::BTreeMap;

use bench_core::des::Ps;
use bench_core::tunables::{Def, Settings};

use super::card::BuiltinCard;
use super::topology::{node_of, nodes_for, Shape, Topology};
use super::{ns, transfer, Credits, FrameInfo, Model, Offer, Resource, Take, World};
use crate::error::{Result, TransportError};
use crate::fabric::{EAGER_LIMIT, FRAG_SIZE, RX_THREAD};
use crate::wire::FragKind;

pub const CARD: &str = include_str!("cards/hyperlink.toml");

static BUILTIN: BuiltinCard = BuiltinCard::new("hyperlink", CARD);

pub fn tunables() -> &'static [Def] {
    BUILTIN.defs()
}

pub fn summary() -> &'static str {
    BUILTIN.summary()
}

#[derive(Debug, Clone)]
struct Params {
    link_mbps: f64,
    latency: Ps,
    copy_mbps: f64,
    remote_write_mbps: f64,
    dma_threshold: u64,
    edma_setup: Ps,
    frag_payload: u64,
    frag_header: u64,
    capacity: u32,
    /// The engine's rendezvous fragment: the largest data frame it sends.
    engine_frag: u64,
    mail_bytes: u64,
    remote_read: Ps,
    rx_thread: bool,
    share: f64,
    send_ovh: Ps,
    recv_ovh: Ps,
    memory_mbps: f64,
}

/// How a fragment between two nodes goes: straight over one link (or none, within a node),
/// or through the memory of the nodes between.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    /// Over the link, if the nodes differ.
    Direct(Option<usize>),
    /// Pushed over `first` into node `into`'s memory, forwarded over `middle` (a ring of more
    /// than four nodes) to node `from`, pulled from there over `last`, with `hops` latency.
    Via {
        first: usize,
        into: usize,
        middle: Vec<usize>,
        from: usize,
        last: usize,
        hops: Ps,
    },
}

/// Window and mailbox occupancy of one ordered pair.
#[derive(Debug)]
struct Pair {
    window: Credits,
    /// Free slots the sender learnt of at its last room check, minus what it used since.
    known_free: u64,
}

pub struct Hyperlink {
    p: Params,
    ranks_per_node: usize,
    topo: Topology,
    edma: Vec<Resource>,
    memory: Vec<Resource>,
    pairs: BTreeMap<(usize, usize), Pair>,
    /// Rendezvous transfers being received without the drain thread: (src, dst, rndv) ->
    /// (fragments held in the window, bytes) until the last one is in.
    partial: BTreeMap<(usize, usize, u64), (u64, u64)>,
    stalled: Option<String>,
}

/// Window slots (and mails) a pair has.
fn capacity(s: &Settings) -> u64 {
    s.get_by_runtime_name::<i64>("hyperlink.window_frags")
        .min(s.get_by_runtime_name::<i64>("hyperlink.mailbox_entries")) as u64
}

/// The engine's largest rendezvous data frame here.
fn engine_frag(s: &Settings) -> u64 {
    let cfg = super::engine_for(s, |_, _| {});
    cfg.frag_size
        .min(super::MAX_FRAME - crate::header::FrameType::Data.header_len()) as u64
}

/// Whether the card's values, with the engine's, can carry every message (see hyperlink.md,
/// "Values that cannot carry a message"): a fragment has room for data after its header, and
/// the window holds the largest frame the engine sends, an eager message of `eager_limit` or a
/// rendezvous fragment of `frag_size`; a frame needing more slots than the window has would
/// wait for room for ever.
pub fn check(s: &Settings) -> std::result::Result<(), crate::Refusal> {
    let (bytes, header) = (
        s.get_by_runtime_name::<u64>("hyperlink.frag_bytes"),
        s.get_by_runtime_name::<u64>("hyperlink.frag_header"),
    );
    if header >= bytes {
        return Err(crate::Refusal::settings(format!(
            "{} leaves no room for data in {}: hyperlink.frag_header must be smaller than hyperlink.frag_bytes",
            super::shown(s, "hyperlink.frag_header"),
            super::shown(s, "hyperlink.frag_bytes")
        )));
    }
    let payload = bytes - header;
    let holds = capacity(s) * payload;
    let cfg = super::engine_for(s, |_, _| {});
    for (name, frame) in [
        (EAGER_LIMIT.name(), cfg.eager_limit as u64),
        (FRAG_SIZE.name(), engine_frag(s)),
    ] {
        if frame > holds {
            return Err(crate::Refusal::settings(format!(
                "{} does not fit the hyperlink window: {} less {} leaves {payload} bytes a fragment, and the window takes {} fragments (the smaller of {} and {}), {holds} bytes; use {name} <= {holds} or larger fragments",
                super::shown(s, name),
                super::shown(s, "hyperlink.frag_bytes"),
                super::shown(s, "hyperlink.frag_header"),
                capacity(s),
                super::shown(s, "hyperlink.window_frags"),
                super::shown(s, "hyperlink.mailbox_entries"),
            )));
        }
    }
    Ok(())
}

/// The largest message a window of `cap` slots holds whole when the engine sends fragments of
/// `engine_frag` bytes, each cut into slots of `payload` bytes: as many whole engine fragments
/// as fit, then a shorter last one in the slots left.
fn window_holds(cap: u64, engine_frag: u64, payload: u64) -> u64 {
    let per = engine_frag.div_ceil(payload).max(1);
    (cap / per) * engine_frag + (cap % per) * payload
}

/// Where a switch acts here. The drain thread is what lets a message larger than the window
/// complete (without it the progress engine drains only whole messages, so such a message
/// stalls); that is its mechanism, so it is judged beyond the window. The rest is the
/// engine's.
fn switch_reach(name: &str, s: &Settings) -> crate::reach::Reach {
    if name != RX_THREAD.name() {
        return crate::reach::engine_reach(name, s);
    }
    let payload = s
        .get_by_runtime_name::<u64>("hyperlink.frag_bytes")
        .saturating_sub(s.get_by_runtime_name::<u64>("hyperlink.frag_header"))
        .max(1);
    let holds = window_holds(capacity(s), engine_frag(s), payload);
    crate::reach::Reach {
        above: holds,
        why: format!(
            "the drain thread lets a message larger than the window complete; the window holds {} ({holds} bytes: {} slots of {payload} bytes)",
            bench_core::size::format_size(holds),
            capacity(s)
        ),
    }
}

impl Hyperlink {
    pub fn build(s: &Settings, n: usize) -> Result<Box<dyn Model>> {
        let line_mbps = s.get_by_runtime_name::<i64>("hyperlink.lanes") as f64
            * s.get_by_runtime_name::<f64>("hyperlink.gbaud")
            * 1e3
            / 8.0
            * s.get_by_runtime_name::<f64>("hyperlink.encoding");
        check(s).map_err(|e| TransportError::Config(e.to_string()))?;
        let frag_bytes = s.get_by_runtime_name::<u64>("hyperlink.frag_bytes");
        let frag_header = s.get_by_runtime_name::<u64>("hyperlink.frag_header");
        let p = Params {
            link_mbps: line_mbps * s.get_by_runtime_name::<f64>("hyperlink.link_efficiency"),
            latency: ns(s.get_by_runtime_name::<f64>("hyperlink.latency_ns")),
            copy_mbps: s.get_by_runtime_name::<f64>("hyperlink.copy_mbps"),
            remote_write_mbps: s.get_by_runtime_name::<f64>("hyperlink.copy_mbps")
                * s.get_by_runtime_name::<f64>("hyperlink.remote_write_ratio"),
            dma_threshold: s.get_by_runtime_name::<u64>("hyperlink.dma_threshold"),
            edma_setup: ns(s.get_by_runtime_name::<f64>("hyperlink.edma_setup_ns")),
            frag_payload: frag_bytes - frag_header,
            frag_header,
            capacity: capacity(s) as u32,
            engine_frag: engine_frag(s),
            mail_bytes: s.get_by_runtime_name::<u64>("hyperlink.mail_bytes"),
            remote_read: ns(s.get_by_runtime_name::<f64>("hyperlink.remote_read_ns")),
            rx_thread: s.get(RX_THREAD),
            share: s.get_by_runtime_name::<f64>("hyperlink.rx_thread_cpu_share"),
            send_ovh: ns(s.get_by_runtime_name::<f64>("hyperlink.send_overhead_ns")),
            recv_ovh: ns(s.get_by_runtime_name::<f64>("hyperlink.recv_overhead_ns")),
            memory_mbps: s.get_by_runtime_name::<f64>("hyperlink.memory_mbps"),
        };
        let ranks_per_node = s
            .get_by_runtime_name::<i64>("hyperlink.ranks_per_node")
            .max(1) as usize;
        let nodes = nodes_for(n, ranks_per_node);
        // Two or three nodes are fully connected, which a ring of them is too.
        let hop = ns(s.get_by_runtime_name::<f64>("hyperlink.hop_latency_ns"));
        let topo = Topology::new(Shape::Ring, nodes, hop).expect("a ring holds any number");
        Ok(Box::new(Hyperlink {
            p,
            ranks_per_node,
            topo,
            edma: vec![Resource::default(); nodes],
            memory: vec![Resource::default(); nodes],
            pairs: BTreeMap::new(),
            partial: BTreeMap::new(),
            stalled: None,
        }))
    }

    fn node(&self, rank: usize) -> usize {
        node_of(rank, self.ranks_per_node)
    }

    /// The way from rank `s`'s node to rank `d`'s.
    fn route(&self, s: usize, d: usize) -> Route {
        let r = self.topo.route(self.node(s), self.node(d));
        if r.links.len() <= 1 {
            return Route::Direct(r.links.first().copied());
        }
        let n = r.links.len();
        Route::Via {
            first: r.links[0],
            into: r.via[0],
            middle: r.links[1..n - 1].to_vec(),
            from: r.via[r.via.len() - 1],
            last: r.links[n - 1],
            hops: self.topo.hop_latency(&r),
        }
    }

    /// CPU time on a rank's core, stretched by the drain thread's share when it runs.
    fn cpu(&self, t: Ps) -> Ps {
        if self.p.rx_thread {
            (t as f64 / (1.0 - self.p.share)).round() as Ps
        } else {
            t
        }
    }

    fn frags(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.p.frag_payload).max(1)
    }

    /// The message bytes a frame carries; the engine's header rides in the BTL header.
    fn payload(f: &FrameInfo) -> u64 {
        match f.kind {
            FragKind::Eager { len } => len,
            FragKind::Data { len, .. } => len,
            _ => 0,
        }
    }

    /// The largest message the window holds whole: as many of the engine's fragments as fit,
    /// then a shorter last one in the slots left.
    fn limit_bytes(&self) -> u64 {
        window_holds(
            self.p.capacity as u64,
            self.p.engine_frag,
            self.p.frag_payload,
        )
    }

    /// Moves `bytes` from node `a`'s scratch over `link` into the next node's memory: CPU
    /// remote writes or EDMA; within a node (no link), a local copy. Returns when the
    /// sender's core is free again.
    fn push(&mut self, a: usize, link: Option<usize>, bytes: u64, mut t: Ps) -> Ps {
        let wire_bytes = bytes + self.p.frag_header;
        let Some(link) = link else {
            return t + self.cpu(transfer(wire_bytes, self.p.copy_mbps));
        };
        if bytes < self.p.dma_threshold {
            let dur = transfer(wire_bytes, self.p.remote_write_mbps);
            let (start, _) = self.topo.reserve(&[link], t, dur);
            t = start + self.cpu(dur);
        } else {
            t += self.cpu(self.p.edma_setup);
            let dur = transfer(wire_bytes, self.p.link_mbps);
            // The link and the EDMA engine together, from when both are free.
            let from = t.max(self.edma[a].free_at());
            let (start, end) = self.topo.reserve(&[link], from, dur);
            self.edma[a].reserve(start, dur);
            // The scratch area is single: the core polls until the EDMA is done.
            t = start + self.cpu(end - start);
        }
        t
    }

    fn pair(&mut self, src: usize, dst: usize) -> &mut Pair {
        let cap = self.p.capacity as u64;
        self.pairs.entry((src, dst)).or_insert_with(|| Pair {
            window: Credits::new(cap),
            known_free: cap,
        })
    }

    /// Claims `need` window slots and mails, checking for room with a remote read when the
    /// sender's own count says the window is full. Returns (claimed, time after the check).
    fn room(&mut self, w: &mut World, f: &FrameInfo, need: u64, mut t: Ps) -> (bool, Ps) {
        let rr = self.cpu(self.p.remote_read);
        let pair = self.pair(f.src, f.dst);
        if pair.known_free < need {
            // Room check: a remote read of the mailbox control structure.
            t += rr;
            pair.known_free = pair.window.available(t);
        }
        if pair.known_free < need || !pair.window.take(need, t) {
            pair.window.wait(w, f.src, t);
            return (false, t);
        }
        pair.known_free -= need;
        (true, t)
    }

    fn free(&mut self, w: &mut World, src: usize, dst: usize, frags: u64, at: Ps) {
        self.pair(src, dst).window.give_back(w, frags, at);
    }
}

impl Model for Hyperlink {
    fn offer(&mut self, w: &mut World, f: &FrameInfo, now: Ps) -> Result<Offer> {
        // Without the drain thread a rendezvous message is drained only when complete, so one
        // that needs more fragments than the window holds stalls the sender for ever.
        if let FragKind::Cts { len, .. } = f.kind {
            // The engine's fragments each take whole slots.
            let whole = len / self.p.engine_frag;
            let rest = len % self.p.engine_frag;
            let need = whole * self.frags(self.p.engine_frag)
                + if rest > 0 || whole == 0 {
                    self.frags(rest)
                } else {
                    0
                };
            if !self.p.rx_thread && need > self.p.capacity as u64 {
                let msg = format!(
                    "hyperlink window stall: with rx_thread=off a message is drained only when all its fragments are in, and a {len}-byte message needs {need} fragments of {} bytes, but the window holds {} ({} bytes); use rx_thread=on or messages of at most {} bytes",
                    self.p.frag_payload,
                    self.p.capacity,
                    self.limit_bytes(),
                    self.limit_bytes()
                );
                self.stalled = Some(msg.clone());
                return Err(TransportError::Limit(msg));
            }
        }
        let bytes = Self::payload(f);
        let need = self.frags(bytes);
        let mut t = now;
        let (ok, after_check) = self.room(w, f, need, t);
        t = after_check;
        if !ok {
            return Ok(Offer::Full {
                why: format!(
                    "room in the hyperlink window to node {} ({} fragments)",
                    f.dst, self.p.capacity
                ),
            });
        }
        t += self.cpu(self.p.send_ovh);
        let route = self.route(f.src, f.dst);
        let first_link = match &route {
            Route::Direct(link) => *link,
            Route::Via { first, .. } => Some(*first),
        };
        let src_node = self.node(f.src);
        // When the last fragment forwarded beyond the first node has landed.
        let mut forwarded: Ps = 0;
        let mut left = bytes;
        for _ in 0..need {
            let b = left.min(self.p.frag_payload);
            left -= b;
            // Staging copy into the contiguous scratch area.
            t += self.cpu(transfer(b, self.p.copy_mbps));
            t = self.push(src_node, first_link, b, t);
            if let Route::Via {
                into,
                middle,
                from,
                hops,
                ..
            } = &route
            {
                // The data lands in the neighbour's block.
                let dur = transfer(b + self.p.frag_header, self.p.memory_mbps);
                self.memory[*into].reserve(t, dur);
                if !middle.is_empty() {
                    // Forwarded on to the receiver's neighbour, no software involved.
                    let link = transfer(b + self.p.frag_header, self.p.link_mbps);
                    let (_, end) = self.topo.reserve(middle, t, link);
                    self.memory[*from].reserve(end + hops, dur);
                    forwarded = forwarded.max(end + hops);
                }
            }
            // The mail, a small posted write.
            let mail = transfer(self.p.mail_bytes, self.p.remote_write_mbps);
            let start = match first_link {
                Some(link) => self.topo.reserve(&[link], t, mail).0,
                None => t,
            };
            t = start + self.cpu(mail);
        }
        let mut arrival = t.max(forwarded) + self.p.latency;
        if self.p.rx_thread {
            // The drain thread empties the fragments as they land (on the receiver's core).
            let drain = self.cpu(transfer(bytes, self.p.copy_mbps));
            let at = arrival + drain;
            if let Route::Direct(_) = route {
                self.free(w, f.src, f.dst, need, at);
            }
            // Via a neighbour, the slots free when the receiver pulls the data (see take).
            arrival = at;
        }
        Ok(Offer::Sent {
            sender_free: t,
            arrival,
        })
    }

    fn take(&mut self, w: &mut World, f: &FrameInfo, _arrival: Ps, now: Ps) -> Result<Take> {
        let bytes = Self::payload(f);
        let need = self.frags(bytes);
        let mut t = now + self.cpu(self.p.recv_ovh);
        if let Route::Via { from, last, .. } = self.route(f.src, f.dst) {
            // The mail sits in the neighbour's block: poll it remotely, then pull the data
            // over the last link (remote reads through EDMA), charging that node's memory.
            t += self.cpu(self.p.remote_read) + self.cpu(self.p.edma_setup);
            let wire_bytes = bytes + need * self.p.frag_header;
            let dur = transfer(wire_bytes, self.p.link_mbps);
            let mem_dur = transfer(wire_bytes, self.p.memory_mbps).max(dur);
            let dst_node = self.node(f.dst);
            // The link, the receiver's EDMA engine and the memory together.
            let from_t = t
                .max(self.edma[dst_node].free_at())
                .max(self.memory[from].free_at());
            let (start, end) = self.topo.reserve(&[last], from_t, mem_dur);
            self.edma[dst_node].reserve(start, mem_dur);
            self.memory[from].reserve(start, mem_dur);
            t = start + self.cpu(end - start);
            self.free(w, f.src, f.dst, need, t);
            if !self.p.rx_thread {
                t += transfer(bytes, self.p.copy_mbps);
            }
            return Ok(Take::Deliver { cost: t - now });
        }
        if self.p.rx_thread {
            // Already drained by the thread; the rank picks up the completion.
            return Ok(Take::Deliver { cost: t - now });
        }
        // Without the thread the progress engine drains whole messages only.
        match f.kind {
            FragKind::Data { rndv, last, .. } => {
                let e = self.partial.entry((f.src, f.dst, rndv)).or_default();
                e.0 += need;
                e.1 += bytes;
                if !last {
                    return Ok(Take::Deliver { cost: 0 });
                }
                let (frags, bytes) = self
                    .partial
                    .remove(&(f.src, f.dst, rndv))
                    .unwrap_or_default();
                t += transfer(bytes, self.p.copy_mbps);
                self.free(w, f.src, f.dst, frags, t);
            }
            _ => {
                t += transfer(bytes, self.p.copy_mbps);
                self.free(w, f.src, f.dst, need, t);
            }
        }
        Ok(Take::Deliver { cost: t - now })
    }

    fn forget_before(&mut self, horizon: Ps) {
        for pair in self.pairs.values_mut() {
            pair.window.forget_before(horizon);
        }
    }

    fn describe(&self) -> Vec<(String, String)> {
        let topo = match self.topo.nodes() {
            1 => "1 node, no link".to_string(),
            2 => "2 nodes, one link".to_string(),
            3 => "3 nodes, fully connected".to_string(),
            4 => {
                "4-node ring; diagonals 0->2 via 1, 2->0 via 3, 1->3 via 2, 3->1 via 0".to_string()
            }
            _ => format!(
                "{}; beyond a neighbour through the nodes between",
                self.topo.describe()
            ),
        };
        vec![
            (
                "hyperlink.ranks_per_node".into(),
                self.ranks_per_node.to_string(),
            ),
            ("hyperlink.topology".into(), topo),
            (
                "hyperlink.link_payload_mbps".into(),
                format!("{:.1}", self.p.link_mbps),
            ),
            (
                "hyperlink.nonblocking_limit_bytes".into(),
                if self.p.rx_thread {
                    "none (drain thread on)".into()
                } else {
                    self.limit_bytes().to_string()
                },
            ),
        ]
    }

    fn diagnose(&self) -> Option<String> {
        self.stalled.clone()
    }
}

fn connect(ctx: &crate::fabric::FabricContext) -> Result<Box<dyn crate::transport::Transport>> {
    super::connect(ctx, "hyperlink", Hyperlink::build, |_, _| {})
}

/// The registry line's target.
pub const FABRIC: crate::fabric::FabricDef = crate::fabric::FabricDef {
    name: "hyperlink",
    kind: crate::fabric::FabricKind::Emulated,
    summary:
        "TI KeyStone II Hyperlink (hlink BTL), emulated in virtual time; 2, 3 (fully connected) or more (ring) nodes",
    availability: crate::fabric::always_usable,
    tunables,
    // TI's defaults: the drain thread on; a fragment fills a 64 KB window slot with its
    // 64-byte header; the BTL pushes a message's fragments in order.
    defaults: &[
        ("rx_thread", "on"),
        ("frag_size", "65472"),
        ("rndv_schedule", "fifo"),
    ],
    replaces: &[],
    ignores: crate::fabric::EMULATED_IGNORES,
    check_ranks: crate::fabric::any_ranks,
    check_settings: check,
    switch_reach,
    launch: crate::fabric::Launch::Threads,
    cleanup: crate::fabric::nothing_to_clean,
    library: crate::fabric::no_library,
    connect,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulated::test_settings;

    /// The fabric's own defaults under the card's (frag_size fills a 64 KB slot).
    fn card(pairs: &[(&str, &str)]) -> Settings {
        let mut all: Vec<(&str, &str)> = FABRIC.defaults.to_vec();
        all.extend_from_slice(pairs);
        test_settings(&all)
    }

    #[test]
    fn the_defaults_and_the_smallest_windows_carry_messages() {
        check(&card(&[])).unwrap();
        for set in [
            ("hyperlink.window_frags", "1"),
            ("hyperlink.mailbox_entries", "1"),
            ("hyperlink.frag_header", "0"),
        ] {
            check(&card(&[set])).unwrap_or_else(|e| panic!("{set:?}: {e}"));
        }
    }

    #[test]
    fn a_header_filling_the_fragment_is_refused() {
        let e = check(&card(&[
            ("hyperlink.frag_bytes", "1K"),
            ("hyperlink.frag_header", "1K"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("hyperlink.frag_header=1KiB") && e.contains("hyperlink.frag_bytes=1KiB"),
            "{e}"
        );
    }

    #[test]
    fn an_engine_frame_larger_than_the_window_is_refused() {
        // 1 KiB fragments hold 960 bytes of data each: 32 of them, 30720 bytes, are less than
        // one 65472-byte rendezvous fragment.
        let e = check(&card(&[("hyperlink.frag_bytes", "1K")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("frag_size=65472")
                && e.contains("hyperlink.frag_bytes=1KiB")
                && e.contains("hyperlink.window_frags=32")
                && e.contains("use frag_size <= 30720"),
            "{e}"
        );
        check(&card(&[
            ("hyperlink.frag_bytes", "1K"),
            ("frag_size", "30720"),
        ]))
        .unwrap();
        // A window of one 1 KiB fragment holds no 4 KiB eager message.
        let e = check(&card(&[
            ("hyperlink.frag_bytes", "1K"),
            ("hyperlink.mailbox_entries", "1"),
            ("frag_size", "1K"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("eager_limit=4KiB") && e.contains("hyperlink.mailbox_entries=1"),
            "{e}"
        );
        let e = Hyperlink::build(&card(&[("hyperlink.frag_bytes", "1K")]), 2)
            .err()
            .unwrap();
        assert!(e.to_string().contains("frag_size"), "{e}");
    }

    /// Without the drain thread a message must fit the window whole, counted in the slots
    /// the engine's fragments really take.
    #[test]
    fn the_drain_thread_acts_beyond_the_window_that_stalls_without_it() {
        let s = card(&[]);
        let r = switch_reach("rx_thread", &s);
        // 32 slots of 65472 bytes, the engine's fragment filling one slot each.
        assert_eq!(r.above, 32 * 65472);
        assert!(r.acts_at(2 << 20) && !r.acts_at(1 << 20), "{r:?}");
        assert_eq!(switch_reach("single_copy", &s).above, 4096);
    }

    #[test]
    fn the_window_limit_counts_whole_slots_per_engine_fragment() {
        let s = card(&[
            ("rx_thread", "off"),
            ("hyperlink.frag_bytes", "2K"),
            ("frag_size", "2000"),
        ]);
        let m = Hyperlink::build(&s, 2).unwrap();
        let h = m.describe();
        // 1984 bytes a slot: each 2000-byte fragment takes 2 of the 32 slots.
        assert!(
            h.contains(&("hyperlink.nonblocking_limit_bytes".into(), "32000".into())),
            "{h:?}"
        );
    }
}
