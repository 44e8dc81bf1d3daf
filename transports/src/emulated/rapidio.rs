//! The RapidIO model: messages over a RapidIO link as the 1890VM6Ya SoC's MPICH drives them.
//!
//! A RapidIO message is at most `message_segments` segments of `segment_bytes` (4 KB), every
//! segment but the last full, and the link carries payload at `packet_efficiency` of its peak.
//! Small data and control (and anything unexpected) go through the receiver's common queue:
//! each message carries the MPI header, is copied through a bounce buffer on both sides, and
//! data above 4 KB is split into several messages and reassembled; a full common queue
//! rejects the segment, which is resent after `retry_ns`. Large data uses one of the
//! receiver's dedicated queues: on the RTS the receiver allocates a mailbox and queue
//! (waiting when none is free), writes a descriptor per 4 KB message into the queue's ring
//! (`dq_program_ns` each, at most `dq_ring_entries`), sends its number back in a doorbell
//! (the CTS), and the data then lands straight in the destination buffer, unless a buffer
//! breaks the alignment rule (`align_bytes`, sizes in 256-byte multiples), in which case it
//! goes through a bounce buffer, an extra copy on that side. Every MPI-level send pays the
//! heavy driver stack (`send_overhead_ns`). The engine's eager_limit is the small/large
//! boundary. Nodes hang off one switch: a transfer holds the sender's output port and the
//! receiver's input port. Ranks share a node (`ranks_per_node`): its ports, its common queue,
//! its dedicated queues and their DMA channels; two ranks of one node cross no port.

use std::collections::BTreeMap;

use bench_core::des::Ps;
use bench_core::tunables::{Def, Settings};

use super::card::BuiltinCard;
use super::topology::{node_of, nodes_for, Shape, Topology};
use super::{ns, transfer, Credits, FrameInfo, Model, Offer, Resource, Take, World};
use crate::error::Result;
use crate::wire::FragKind;

pub const CARD: &str = include_str!("cards/rapidio.toml");

static BUILTIN: BuiltinCard = BuiltinCard::new("rapidio", CARD);

pub fn tunables() -> &'static [Def] {
    BUILTIN.defs()
}

pub fn summary() -> &'static str {
    BUILTIN.summary()
}

/// Whether the card's values can carry every message (see rapidio.md, "Values that cannot
/// carry a message"): a common-queue message has room for data after the MPI header. A common
/// queue of one entry and one dedicated queue can: a message of more entries streams through
/// the queue, and transfers wait their turn for a dedicated one.
pub fn check(s: &Settings) -> std::result::Result<(), crate::Refusal> {
    let message = s.get_by_runtime_name::<u64>("rapidio.segment_bytes")
        * s.get_by_runtime_name::<i64>("rapidio.message_segments") as u64;
    if s.get_by_runtime_name::<u64>("rapidio.message_header") >= message {
        return Err(crate::Refusal::settings(format!(
            "{} leaves no room for data in a message of {message} bytes ({} x {}): rapidio.message_header must be smaller than rapidio.segment_bytes x rapidio.message_segments",
            super::shown(s, "rapidio.message_header"),
            super::shown(s, "rapidio.segment_bytes"),
            super::shown(s, "rapidio.message_segments")
        )));
    }
    Ok(())
}

#[derive(Debug, Clone)]
struct Params {
    link_mbps: f64,
    efficiency: f64,
    segment: u64,
    message: u64,
    header: u64,
    send_ovh: Ps,
    recv_ovh: Ps,
    latency: Ps,
    copy_mbps: f64,
    retry: Ps,
    queues: u64,
    queue_setup: Ps,
    dq_message: Ps,
    /// Receiver's cost per descriptor written when programming a dedicated queue.
    dq_program: Ps,
    /// Descriptors written up front (the ring's size); the queue refills the rest itself.
    dq_ring: u64,
    /// Each dedicated queue's per-message work done by its own DMA channel, concurrently with
    /// the other queues' (`dq_channels`), instead of by the sender's CPU one after another.
    dq_channels: bool,
    align: u64,
    doorbell: Ps,
    /// Entries of the receiver's common queue.
    common_entries: u64,
}

/// A dedicated queue in use: which source's transfer it was programmed for, and whether the
/// destination buffer complied with the alignment rule.
#[derive(Debug, Clone, Copy)]
struct Programmed {
    recv_aligned: bool,
    /// The receiver's queue (and DMA channel) it was given.
    channel: usize,
}

pub struct RapidIo {
    p: Params,
    ranks_per_node: usize,
    /// The switch: each node's port into it and out of it.
    switch: Topology,
    common: Vec<Credits>,
    dedicated: Vec<Credits>,
    /// (receiver, sender, rndv) -> the queue programmed for that transfer.
    programmed: BTreeMap<(usize, usize, u64), Programmed>,
    /// Each node's dedicated queues' DMA channels (used with `dq_channels`).
    channels: Vec<Vec<Resource>>,
    /// (sender, receiver) pairs whose last segment was rejected by a full common queue.
    rejected: std::collections::BTreeSet<(usize, usize)>,
    bounced: u64,
}

impl RapidIo {
    pub fn build(s: &Settings, n: usize) -> Result<Box<dyn Model>> {
        check(s).map_err(|e| crate::error::TransportError::Config(e.to_string()))?;
        let segment = s.get_by_runtime_name::<u64>("rapidio.segment_bytes");
        let p = Params {
            link_mbps: s.get_by_runtime_name::<f64>("rapidio.link_mbps"),
            efficiency: s.get_by_runtime_name::<f64>("rapidio.packet_efficiency"),
            segment,
            message: segment * s.get_by_runtime_name::<i64>("rapidio.message_segments") as u64,
            header: s.get_by_runtime_name::<u64>("rapidio.message_header"),
            send_ovh: ns(s.get_by_runtime_name::<f64>("rapidio.send_overhead_ns")),
            recv_ovh: ns(s.get_by_runtime_name::<f64>("rapidio.recv_overhead_ns")),
            latency: ns(s.get_by_runtime_name::<f64>("rapidio.latency_ns")),
            copy_mbps: s.get_by_runtime_name::<f64>("rapidio.copy_mbps"),
            retry: ns(s.get_by_runtime_name::<f64>("rapidio.retry_ns")),
            queues: s.get_by_runtime_name::<i64>("rapidio.dedicated_queues") as u64,
            queue_setup: ns(s.get_by_runtime_name::<f64>("rapidio.queue_setup_ns")),
            dq_message: ns(s.get_by_runtime_name::<f64>("rapidio.dq_message_ns")),
            dq_program: ns(s.get_by_runtime_name::<f64>("rapidio.dq_program_ns")),
            dq_ring: s
                .get_by_runtime_name::<i64>("rapidio.dq_ring_entries")
                .max(1) as u64,
            dq_channels: s.get_by_runtime_name::<bool>("rapidio.dq_channels"),
            align: s.get_by_runtime_name::<u64>("rapidio.align_bytes"),
            doorbell: ns(s.get_by_runtime_name::<f64>("rapidio.doorbell_ns")),
            common_entries: s.get_by_runtime_name::<i64>("rapidio.common_queue_entries") as u64,
        };
        let cq = p.common_entries;
        let ranks_per_node = s
            .get_by_runtime_name::<i64>("rapidio.ranks_per_node")
            .max(1) as usize;
        let nodes = nodes_for(n, ranks_per_node);
        Ok(Box::new(RapidIo {
            ranks_per_node,
            switch: Topology::new(Shape::Switch, nodes, 0).expect("a switch holds any number"),
            common: (0..nodes).map(|_| Credits::new(cq)).collect(),
            dedicated: (0..nodes).map(|_| Credits::new(p.queues)).collect(),
            programmed: BTreeMap::new(),
            channels: vec![vec![Resource::default(); p.queues as usize]; nodes],
            rejected: Default::default(),
            bounced: 0,
            p,
        }))
    }

    fn node(&self, rank: usize) -> usize {
        node_of(rank, self.ranks_per_node)
    }

    /// The ports a message from rank `src` to rank `dst` holds.
    fn ports(&self, src: usize, dst: usize) -> Vec<usize> {
        self.switch.route(self.node(src), self.node(dst)).links
    }

    /// Bytes on the link for a message of `bytes`: whole segments, at the packet efficiency.
    fn on_link(&self, bytes: u64) -> u64 {
        let segs = bytes.div_ceil(self.p.segment).max(1);
        let full = (segs - 1) * self.p.segment + (bytes - (segs - 1) * self.p.segment).max(1);
        (full as f64 / self.p.efficiency).ceil() as u64
    }

    /// Sends `msgs` messages of the given sizes from `src` to `dst`, each costing the sender
    /// `per_msg` first; returns (sender free, last arrival).
    fn messages(
        &mut self,
        src: usize,
        dst: usize,
        sizes: &[u64],
        per_msg: Ps,
        mut t: Ps,
    ) -> (Ps, Ps) {
        let mut arrival = t;
        let ports = self.ports(src, dst);
        for &m in sizes {
            t += per_msg;
            let dur = transfer(self.on_link(m), self.p.link_mbps);
            let (_, end) = self.switch.reserve(&ports, t, dur);
            t = end;
            arrival = end + self.p.latency;
        }
        (t, arrival)
    }

    /// As [`RapidIo::messages`] for a dedicated queue whose DMA channel does each message's
    /// work itself: the channel takes `dq_message` and then the link's time per message, one
    /// message after another, while other queues' channels run at the same time; the sender's
    /// CPU is not held. The link's ports, shared with every other transfer, carry the
    /// fragment's bytes at the end of the channel's stretch (reserving them message by message
    /// would hold them through every channel's descriptor work, as one resource cannot leave
    /// gaps). Returns the arrival.
    fn channel_messages(
        &mut self,
        src: usize,
        dst: usize,
        channel: usize,
        sizes: &[u64],
        at: Ps,
    ) -> Ps {
        let link: Ps = sizes
            .iter()
            .map(|&m| transfer(self.on_link(m), self.p.link_mbps))
            .sum();
        let chain = sizes.len() as Ps * self.p.dq_message + link;
        let dst_node = self.node(dst);
        let (start, end) = self.channels[dst_node][channel].reserve(at, chain);
        let ports = self.ports(src, dst);
        let (_, carried) = self.switch.reserve(&ports, start + chain - link, link);
        end.max(carried) + self.p.latency
    }

    /// Sizes of the common-queue messages carrying `bytes` (each with the MPI header).
    fn split_common(&self, bytes: u64) -> Vec<u64> {
        let room = self.p.message - self.p.header;
        let k = bytes.div_ceil(room).max(1);
        (0..k)
            .map(|i| (bytes - i * room).min(room) + self.p.header)
            .collect()
    }

    /// Common-queue entries a message of `messages` holds: a message larger than the queue
    /// takes all of it while it streams through (the receiver drains entries into its
    /// reassembly buffer as they land) rather than waiting for room it can never have.
    fn entries(&self, messages: u64) -> u64 {
        messages.min(self.p.common_entries)
    }

    fn complies(&self, addr: u64, len: u64) -> bool {
        addr.is_multiple_of(self.p.align) && len.is_multiple_of(self.p.segment)
    }
}

impl Model for RapidIo {
    fn offer(&mut self, w: &mut World, f: &FrameInfo, now: Ps) -> Result<Offer> {
        match f.kind {
            FragKind::Cts {
                rndv,
                len,
                recv_addr,
            } => {
                // The receiver programs a dedicated queue (waiting while all are busy) and
                // sends its mailbox number in a doorbell.
                let node = self.node(f.src);
                if !self.dedicated[node].take(1, now) {
                    self.dedicated[node].wait(w, f.src, now);
                    return Ok(Offer::Full {
                        why: format!("a free dedicated queue on node {node}"),
                    });
                }
                // The lowest-numbered queue no transfer to this node holds.
                let channel = (0..self.p.queues as usize)
                    .find(|c| {
                        !self.programmed.iter().any(|((r, _, _), g)| {
                            node_of(*r, self.ranks_per_node) == node && g.channel == *c
                        })
                    })
                    .unwrap_or(0);
                self.programmed.insert(
                    (f.src, f.dst, rndv),
                    Programmed {
                        recv_aligned: self.complies(recv_addr, len),
                        channel,
                    },
                );
                // One descriptor per message of the transfer, as many as the ring holds; the
                // queue refills the rest from its completions while the data flows.
                let descriptors = len.div_ceil(self.p.message).clamp(1, self.p.dq_ring);
                let t = now
                    + self.p.queue_setup
                    + descriptors as Ps * self.p.dq_program
                    + self.p.doorbell;
                // The doorbell holds the receiver's port into the switch.
                let ports = self.ports(f.src, f.dst);
                let (_, end) = self.switch.reserve(
                    &ports[..ports.len().min(1)],
                    t,
                    transfer(2, self.p.link_mbps),
                );
                Ok(Offer::Sent {
                    sender_free: t,
                    arrival: end + self.p.latency,
                })
            }
            FragKind::Data {
                rndv,
                len,
                send_addr,
                ..
            } => {
                // Through the programmed queue: no header, straight into the destination, but
                // a misaligned source goes through a bounce buffer first.
                let mut t = now;
                if !self.complies(send_addr, len) {
                    t += transfer(len, self.p.copy_mbps);
                    self.bounced += 1;
                }
                let k = len.div_ceil(self.p.message).max(1);
                let sizes: Vec<u64> = (0..k)
                    .map(|i| (len - i * self.p.message).min(self.p.message))
                    .collect();
                if self.p.dq_channels {
                    let channel = self
                        .programmed
                        .get(&(f.dst, f.src, rndv))
                        .map(|g| g.channel)
                        .unwrap_or(0);
                    let arrival = self.channel_messages(f.src, f.dst, channel, &sizes, t);
                    return Ok(Offer::Sent {
                        sender_free: t,
                        arrival,
                    });
                }
                let (free, arrival) = self.messages(f.src, f.dst, &sizes, self.p.dq_message, t);
                Ok(Offer::Sent {
                    sender_free: free,
                    arrival,
                })
            }
            _ => {
                // Eager data and control through the receiver's common queue.
                let sizes = self.split_common(f.bytes);
                let k = self.entries(sizes.len() as u64);
                let node = self.node(f.dst);
                if !self.common[node].take(k, now) {
                    // The segment is rejected; it is resent once room has appeared.
                    self.common[node].wait(w, f.src, now);
                    self.rejected.insert((f.src, f.dst));
                    return Ok(Offer::Full {
                        why: format!("room in node {node}'s common queue"),
                    });
                }
                let mut t = now + self.p.send_ovh;
                if self.rejected.remove(&(f.src, f.dst)) {
                    t += self.p.retry;
                }
                // The bounce copy into the send buffer.
                t += transfer(f.bytes, self.p.copy_mbps);
                let (free, arrival) = self.messages(f.src, f.dst, &sizes, 0, t);
                Ok(Offer::Sent {
                    sender_free: free,
                    arrival,
                })
            }
        }
    }

    fn take(&mut self, w: &mut World, f: &FrameInfo, _arrival: Ps, now: Ps) -> Result<Take> {
        let cost = match f.kind {
            FragKind::Cts { .. } => self.p.doorbell,
            FragKind::Data {
                rndv, len, last, ..
            } => {
                let key = (f.dst, f.src, rndv);
                let prog = self.programmed.get(&key).copied().unwrap_or(Programmed {
                    recv_aligned: true,
                    channel: 0,
                });
                let mut c = 0;
                if !prog.recv_aligned {
                    // Landed in a bounce buffer: copy it to the real destination.
                    c += transfer(len, self.p.copy_mbps);
                    self.bounced += 1;
                }
                if last {
                    c += self.p.recv_ovh;
                    self.programmed.remove(&key);
                    let node = self.node(f.dst);
                    self.dedicated[node].give_back(w, 1, now + c);
                }
                c
            }
            _ => {
                let k = self.entries(self.split_common(f.bytes).len() as u64);
                // Bounce copy out of the common queue and reassembly.
                let c = self.p.recv_ovh + transfer(f.bytes, self.p.copy_mbps);
                let node = self.node(f.dst);
                self.common[node].give_back(w, k, now + c);
                c
            }
        };
        Ok(Take::Deliver { cost })
    }

    fn forget_before(&mut self, horizon: Ps) {
        for q in self.common.iter_mut().chain(self.dedicated.iter_mut()) {
            q.forget_before(horizon);
        }
    }

    fn describe(&self) -> Vec<(String, String)> {
        vec![
            (
                "rapidio.payload_peak_mbps".into(),
                format!("{:.1}", self.p.link_mbps * self.p.efficiency),
            ),
            (
                "rapidio.ranks_per_node".into(),
                self.ranks_per_node.to_string(),
            ),
            ("rapidio.topology".into(), self.switch.describe()),
            ("rapidio.bounce_copies".into(), self.bounced.to_string()),
        ]
    }
}

fn connect(ctx: &crate::fabric::FabricContext) -> Result<Box<dyn crate::transport::Transport>> {
    super::connect(ctx, "rapidio", RapidIo::build, |_, _| {})
}

/// The registry line's target.
pub const FABRIC: crate::fabric::FabricDef = crate::fabric::FabricDef {
    name: "rapidio",
    kind: crate::fabric::FabricKind::Emulated,
    summary: "RapidIO messaging (1890VM6Ya MPICH stack), emulated in virtual time; eager_limit is the small/large switch",
    availability: crate::fabric::always_usable,
    tunables,
    defaults: &[],
    replaces: &[],
    ignores: crate::fabric::EMULATED_IGNORES,
    check_ranks: crate::fabric::any_ranks,
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

    #[test]
    fn the_smallest_queues_carry_messages() {
        for set in [
            ("rapidio.common_queue_entries", "1"),
            ("rapidio.dedicated_queues", "1"),
            ("rapidio.dq_ring_entries", "1"),
            ("rapidio.message_segments", "1"),
        ] {
            check(&test_settings(&[set])).unwrap_or_else(|e| panic!("{set:?}: {e}"));
        }
    }

    #[test]
    fn a_header_filling_the_message_is_refused() {
        let card = [
            ("rapidio.segment_bytes", "8"),
            ("rapidio.message_segments", "2"),
            ("rapidio.message_header", "16"),
        ];
        let e = check(&test_settings(&card)).unwrap_err().to_string();
        assert!(
            e.starts_with("rapidio.message_header=16 ")
                && e.contains("rapidio.segment_bytes=8 ")
                && e.contains("rapidio.message_segments=2"),
            "{e}"
        );
        let e = RapidIo::build(&test_settings(&card), 2).err().unwrap();
        assert!(e.to_string().contains("rapidio.message_header"), "{e}");
        check(&test_settings(&[
            ("rapidio.segment_bytes", "8"),
            ("rapidio.message_segments", "3"),
            ("rapidio.message_header", "16"),
        ]))
        .unwrap();
    }
}
