//! The LogGP fabric: a fitted model of any fabric, run in virtual time. Its card (written by
//! `fabbench characterise`, or the built-in generic NIC) holds up to six protocol segments by
//! message size, each with LogGP's parameters: a message of `s` bytes costs the sender's CPU
//! `o_s(s) = send_ns + s * send_per_byte_ns`, occupies its node's NIC for `g + s * (G + G+)`
//! from when the CPU hands it over, lands `L` after its last byte left (`s * G`), occupies the
//! receiving NIC likewise, and costs the receiver's CPU `o_r(s)`. `G+` (`extra_gap_per_byte_ns`,
//! 0 in LogGP) paces a stream without touching one message's way: on a host whose stream of
//! large messages moves fewer bytes per second than one message does (loopback tcp here), the
//! ping-pong and the stream need both. Ranks share a node's NIC
//! (`ranks_per_node`), so many senders to one node, or many ranks on one node, queue at the
//! NIC instead of being free: a prediction at scale is not contention-free.
//!
//! Every message is carried whole as one eager frame: the fitted segments already hold what
//! each protocol costs (a rendezvous's handshake is in its segment's `L` and overheads), so
//! the engine's own rendezvous would count it twice. What this leaves out is a rendezvous's
//! synchronisation: a sender here never waits for its receiver to post.

use bench_core::des::Ps;
use bench_core::tunables::{Def, Settings};

use super::card::BuiltinCard;
use super::{ns, FrameInfo, Model, Offer, Resource, Take, World};
use crate::engine::EngineConfig;
use crate::error::{Result, TransportError};
use crate::wire::FragKind;

pub const CARD: &str = include_str!("cards/loggp.toml");

/// Segment slots a card has.
pub const SLOTS: usize = 6;

static BUILTIN: BuiltinCard = BuiltinCard::new("loggp", CARD);

pub fn tunables() -> &'static [Def] {
    BUILTIN.defs()
}

/// The largest message the engine may send as one frame here: the wire's largest frame less
/// the largest header. (A message of the last 48 bytes below 1 GiB goes through the engine's
/// rendezvous; its data frame is charged as a message of its size, its control as empty ones.)
const WHOLE: usize = super::MAX_FRAME - crate::header::MAX_HEADER_LEN;

/// Every message one eager frame: see the module's note.
pub fn engine(_s: &Settings, cfg: &mut EngineConfig) {
    cfg.eager_limit = WHOLE;
    cfg.frag_size = WHOLE;
}

/// One segment's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub from: u64,
    pub latency_ns: f64,
    pub send_ns: f64,
    pub send_per_byte_ns: f64,
    pub recv_ns: f64,
    pub recv_per_byte_ns: f64,
    pub gap_ns: f64,
    pub gap_per_byte_ns: f64,
    /// G+: the NIC's gap per byte beyond G, between messages only.
    pub extra_gap_per_byte_ns: f64,
}

impl Segment {
    fn read(s: &Settings, k: usize) -> Segment {
        let f = |p: &str| s.get_by_runtime_name::<f64>(&format!("loggp.s{k}.{p}"));
        Segment {
            from: s.get_by_runtime_name::<u64>(&format!("loggp.s{k}.from")),
            latency_ns: f("latency_ns"),
            send_ns: f("send_ns"),
            send_per_byte_ns: f("send_per_byte_ns"),
            recv_ns: f("recv_ns"),
            recv_per_byte_ns: f("recv_per_byte_ns"),
            gap_ns: f("gap_ns"),
            gap_per_byte_ns: f("gap_per_byte_ns"),
            extra_gap_per_byte_ns: f("extra_gap_per_byte_ns"),
        }
    }

    fn send(&self, s: u64) -> Ps {
        ns(self.send_ns + s as f64 * self.send_per_byte_ns)
    }

    fn recv(&self, s: u64) -> Ps {
        ns(self.recv_ns + s as f64 * self.recv_per_byte_ns)
    }

    fn wire(&self, s: u64) -> Ps {
        ns(s as f64 * self.gap_per_byte_ns)
    }

    fn occupancy(&self, s: u64) -> Ps {
        ns(self.gap_ns + s as f64 * (self.gap_per_byte_ns + self.extra_gap_per_byte_ns))
    }

    /// One message's time from call to delivery with nobody else on the NICs, ns.
    pub fn one_way_ns(&self, s: u64) -> f64 {
        self.send_ns
            + self.recv_ns
            + self.latency_ns
            + s as f64 * (self.send_per_byte_ns + self.recv_per_byte_ns + self.gap_per_byte_ns)
    }

    /// The bandwidth a long stream of large messages approaches, MB/s.
    pub fn limit_mbs(&self) -> Option<f64> {
        let per_byte = self
            .send_per_byte_ns
            .max(self.recv_per_byte_ns)
            .max(self.gap_per_byte_ns + self.extra_gap_per_byte_ns);
        (per_byte > 0.0).then(|| 1e3 / per_byte)
    }
}

/// Whether the card's segments are consistent (see [`segments`]).
pub fn check(s: &Settings) -> std::result::Result<(), crate::Refusal> {
    segments(s)
        .map(|_| ())
        .map_err(|e| crate::Refusal::settings(e.to_string()))
}

/// The segments a card's settings use, checked: one to six, the first from 0, each starting
/// above the one before.
pub fn segments(s: &Settings) -> Result<Vec<Segment>> {
    let used = s.get_by_runtime_name::<i64>("loggp.segments");
    if !(1..=SLOTS as i64).contains(&used) {
        return Err(TransportError::Config(format!(
            "loggp.segments={used}: use 1 to {SLOTS}"
        )));
    }
    let segs: Vec<Segment> = (1..=used as usize).map(|k| Segment::read(s, k)).collect();
    if segs[0].from != 0 {
        return Err(TransportError::Config(format!(
            "loggp.s1.from={}: the first segment starts at 0",
            segs[0].from
        )));
    }
    for (k, w) in segs.windows(2).enumerate() {
        if w[1].from <= w[0].from {
            return Err(TransportError::Config(format!(
                "loggp.s{}.from={} must be above loggp.s{}.from={}: segments start at increasing sizes",
                k + 2,
                w[1].from,
                k + 1,
                w[0].from
            )));
        }
    }
    Ok(segs)
}

pub struct LogGp {
    segs: Vec<Segment>,
    ranks_per_node: usize,
    /// Each node's NIC, sending and receiving.
    tx: Vec<Resource>,
    rx: Vec<Resource>,
}

impl LogGp {
    pub fn build(s: &Settings, n: usize) -> Result<Box<dyn Model>> {
        let segs = segments(s)?;
        let ranks_per_node = s.get_by_runtime_name::<i64>("loggp.ranks_per_node").max(1) as usize;
        let nodes = n.div_ceil(ranks_per_node).max(1);
        Ok(Box::new(LogGp {
            segs,
            ranks_per_node,
            tx: vec![Resource::default(); nodes],
            rx: vec![Resource::default(); nodes],
        }))
    }

    fn at(&self, s: u64) -> &Segment {
        let i = self.segs.partition_point(|g| g.from <= s);
        &self.segs[i.saturating_sub(1)]
    }

    /// The payload the segment is chosen by: an eager frame's message (or a data fragment's
    /// bytes); control as an empty message.
    fn payload(f: &FrameInfo) -> u64 {
        match f.kind {
            FragKind::Eager { len } | FragKind::Data { len, .. } => len,
            _ => 0,
        }
    }
}

impl Model for LogGp {
    fn offer(&mut self, _w: &mut World, f: &FrameInfo, now: Ps) -> Result<Offer> {
        let s = Self::payload(f);
        let seg = *self.at(s);
        let cpu_done = now + seg.send(s);
        let (src, dst) = (f.src / self.ranks_per_node, f.dst / self.ranks_per_node);
        let (start, _) = self.tx[src].reserve(cpu_done, seg.occupancy(s));
        let (landing, _) = self.rx[dst].reserve(start + ns(seg.latency_ns), seg.occupancy(s));
        Ok(Offer::Sent {
            sender_free: cpu_done,
            arrival: landing + seg.wire(s),
        })
    }

    fn take(&mut self, _w: &mut World, f: &FrameInfo, _arrival: Ps, _now: Ps) -> Result<Take> {
        let s = Self::payload(f);
        Ok(Take::Deliver {
            cost: self.at(s).recv(s),
        })
    }

    fn describe(&self) -> Vec<(String, String)> {
        let mut d = vec![(
            "loggp.ranks_per_node".to_string(),
            self.ranks_per_node.to_string(),
        )];
        for (k, g) in self.segs.iter().enumerate() {
            d.push((
                format!("loggp.segment{}", k + 1),
                format!(
                    "from {} B: one-way {:.3} us at its start, stream limit {}",
                    g.from,
                    g.one_way_ns(g.from) / 1e3,
                    g.limit_mbs()
                        .map(|b| format!("{b:.0} MB/s"))
                        .unwrap_or_else(|| "none (no per-byte cost)".into())
                ),
            ));
        }
        d
    }
}

fn connect(ctx: &crate::fabric::FabricContext) -> Result<Box<dyn crate::transport::Transport>> {
    super::connect(ctx, "loggp", LogGp::build, engine)
}

/// What loggp ignores: the emulated fabrics' list, and the engine's protocol settings, since
/// every message is one frame whose cost the card's segments give.
const IGNORES: &[&str] = &[
    "bind",
    "single_copy",
    "single_copy_share",
    "inject_delay_ns",
    "eager_limit",
    "frag_size",
    "rx_thread",
    "rndv_schedule",
];

/// The registry line's target.
pub const FABRIC: crate::fabric::FabricDef = crate::fabric::FabricDef {
    name: "loggp",
    kind: crate::fabric::FabricKind::Emulated,
    summary: "a LogGP model with protocol segments (a card from fabbench characterise), emulated in virtual time with NIC contention",
    availability: crate::fabric::always_usable,
    tunables,
    defaults: &[],
    replaces: &[],
    ignores: IGNORES,
    check_ranks: crate::fabric::any_ranks,
    check_settings: check,
    switch_reach: crate::reach::engine_reach,
    launch: crate::fabric::Launch::Threads,
    cleanup: crate::fabric::nothing_to_clean,
    library: crate::fabric::no_library,
    connect,
};

#[cfg(test)]
mod tests;
