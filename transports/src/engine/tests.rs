//! Engine tests over an in-memory wire whose delivery the test controls: frame capacity
//! (back-pressure), order (to exercise the reorder buffer) and single-copy refusal.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use bench_core::clock::{Clock, RealClock};

use super::*;
use crate::wire::{GetOutcome, Protocol, WireCaps};

#[derive(Default)]
struct Fabric {
    /// inbox[dst] = frames (src, bytes) in arrival order
    inbox: Vec<VecDeque<(usize, Vec<u8>)>>,
    /// FIN frames are kept back in `held` (dst, src, bytes) while set
    hold_fin: bool,
    held: Vec<(usize, usize, Vec<u8>)>,
    /// polls see nothing until the next liveness check: frames that land between a rank's last
    /// poll and its check of whether the sender still lives
    hidden_until_check: bool,
    /// ranks whose processes have exited
    gone: Vec<usize>,
}

impl Fabric {
    /// Delivers the FIN frames kept back and stops keeping them.
    fn release_fins(&mut self) {
        self.hold_fin = false;
        for (dst, src, bytes) in std::mem::take(&mut self.held) {
            self.inbox[dst].push_back((src, bytes));
        }
    }
}

struct PipeWire {
    rank: usize,
    size: usize,
    fabric: Arc<Mutex<Fabric>>,
    capacity: usize,
    single_copy: bool,
    refuse_get: bool,
    /// the sender's share of a shared single copy is refused (it streams it instead)
    refuse_put: bool,
    /// deliver the second frame in an inbox before the first, once
    swap_once: bool,
    /// advertise placing DATA frames (and place the ones marked so)
    places: bool,
    clock: RealClock,
}

fn fabric(size: usize) -> Arc<Mutex<Fabric>> {
    Arc::new(Mutex::new(Fabric {
        inbox: (0..size).map(|_| VecDeque::new()).collect(),
        ..Fabric::default()
    }))
}

impl PipeWire {
    fn new(rank: usize, size: usize, fabric: Arc<Mutex<Fabric>>) -> PipeWire {
        PipeWire {
            rank,
            size,
            fabric,
            capacity: usize::MAX,
            single_copy: false,
            refuse_get: false,
            refuse_put: false,
            swap_once: false,
            places: false,
            clock: RealClock::new(),
        }
    }
}

impl Wire for PipeWire {
    fn name(&self) -> &str {
        "pipe"
    }
    fn caps(&self) -> WireCaps {
        WireCaps {
            max_frame: 1 << 20,
            single_copy: self.single_copy,
            virtual_time: false,
            models_rx_thread: false,
            places_data: self.places,
        }
    }
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn clock(&self) -> Clock {
        Clock::Real(self.clock)
    }
    fn peer_name(&self, peer: usize) -> String {
        format!("rank {peer}")
    }
    fn try_send(&mut self, peer: usize, k: FragKind, h: &[u8], p: &[u8]) -> Result<bool> {
        let mut f = self.fabric.lock().unwrap();
        if f.hold_fin && matches!(k, FragKind::Fin) {
            f.held.push((peer, self.rank, h.to_vec()));
            return Ok(true);
        }
        let queued = f.inbox[peer]
            .iter()
            .filter(|(s, _)| *s == self.rank)
            .count();
        if queued >= self.capacity {
            return Ok(false);
        }
        let mut v = h.to_vec();
        match k {
            FragKind::Data {
                placed: true,
                recv_addr,
                ..
            } => {
                // Same process: the receive buffer the CTS named is directly writable.
                unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), recv_addr as *mut u8, p.len()) };
            }
            _ => v.extend_from_slice(p),
        }
        f.inbox[peer].push_back((self.rank, v));
        Ok(true)
    }
    fn poll(&mut self, sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>) -> Result<usize> {
        let frames: Vec<(usize, Vec<u8>)> = {
            let mut f = self.fabric.lock().unwrap();
            if f.hidden_until_check {
                return Ok(0);
            }
            if self.swap_once && f.inbox[self.rank].len() >= 2 {
                self.swap_once = false;
                f.inbox[self.rank].swap(0, 1);
            }
            f.inbox[self.rank].drain(..).collect()
        };
        for (src, bytes) in &frames {
            sink(*src, bytes)?;
        }
        Ok(frames.len())
    }
    fn get(&mut self, _peer: usize, addr: u64, local: &mut [u8]) -> Result<GetOutcome> {
        if self.refuse_get {
            return Ok(GetOutcome::Refused);
        }
        // Same process: the peer's buffer is directly readable.
        unsafe {
            std::ptr::copy_nonoverlapping(addr as *const u8, local.as_mut_ptr(), local.len())
        };
        Ok(GetOutcome::Done)
    }
    fn put(&mut self, _peer: usize, addr: u64, local: &[u8]) -> Result<GetOutcome> {
        if self.refuse_put {
            return Ok(GetOutcome::Refused);
        }
        // Same process: the peer's buffer is directly writable.
        unsafe { std::ptr::copy_nonoverlapping(local.as_ptr(), addr as *mut u8, local.len()) };
        Ok(GetOutcome::Done)
    }
    fn preferred_protocol(&self, _peer: usize, _len: u64) -> Protocol {
        Protocol::Copy
    }
    fn idle(&mut self, _rounds: u64) -> Result<()> {
        thread::yield_now();
        Ok(())
    }
    fn check_peers(&mut self, awaited: Option<usize>) -> Result<()> {
        let mut f = self.fabric.lock().unwrap();
        f.hidden_until_check = false;
        match f.gone.iter().find(|&&r| awaited.is_none_or(|a| a == r)) {
            Some(r) => Err(TransportError::PeerGone {
                peer: format!("rank {r}"),
                why: "process exited".into(),
                stage: String::new(),
            }),
            None => Ok(()),
        }
    }
}

fn cfg(eager_limit: usize) -> EngineConfig {
    EngineConfig {
        eager_limit,
        frag_size: 1000,
        single_copy: SingleCopy::Off,
        single_copy_share: 0,
        rx_thread: false,
        schedule: Schedule::RoundRobin,
        timeout: Duration::from_secs(10),
        inject_delay_ns: 0,
        byte_orders: Default::default(),
    }
}

fn engines(size: usize, cfg: EngineConfig, tweak: impl Fn(&mut PipeWire)) -> Vec<Engine> {
    engines_on(fabric(size), cfg, tweak)
}

fn engines_on(
    f: Arc<Mutex<Fabric>>,
    cfg: EngineConfig,
    tweak: impl Fn(&mut PipeWire),
) -> Vec<Engine> {
    let size = f.lock().unwrap().inbox.len();
    (0..size)
        .map(|r| {
            let mut w = PipeWire::new(r, size, f.clone());
            tweak(&mut w);
            Engine::new(Box::new(w), cfg, None).unwrap()
        })
        .collect()
}

fn send(e: &Engine, buf: &[u8], dst: usize, tag: Tag) {
    let r = unsafe { e.isend(buf.as_ptr(), buf.len(), dst, tag, Context::POINT_TO_POINT) }.unwrap();
    e.wait(r).unwrap();
}

fn isend(e: &Engine, buf: &[u8], dst: usize, tag: Tag) -> ReqId {
    unsafe { e.isend(buf.as_ptr(), buf.len(), dst, tag, Context::POINT_TO_POINT) }.unwrap()
}

fn irecv(e: &Engine, buf: &mut [u8], src: usize, tag: Tag) -> ReqId {
    unsafe {
        e.irecv(
            buf.as_mut_ptr(),
            buf.len(),
            Some(src),
            Some(tag),
            Context::POINT_TO_POINT,
        )
    }
    .unwrap()
}

fn recv(e: &Engine, cap: usize, src: Option<usize>, tag: Option<Tag>) -> (Vec<u8>, Status) {
    let mut buf = vec![0u8; cap];
    let r = unsafe { e.irecv(buf.as_mut_ptr(), cap, src, tag, Context::POINT_TO_POINT) }.unwrap();
    let st = e.wait(r).unwrap();
    buf.truncate(st.len);
    (buf, st)
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn same_tag_messages_match_in_send_order() {
    let e = engines(2, cfg(64), |_| {});
    send(&e[0], b"first", 1, 5);
    send(&e[0], b"second", 1, 5);
    assert_eq!(recv(&e[1], 16, Some(0), Some(5)).0, b"first");
    assert_eq!(recv(&e[1], 16, Some(0), Some(5)).0, b"second");
}

#[test]
fn different_tags_match_by_tag_not_arrival() {
    let e = engines(2, cfg(64), |_| {});
    send(&e[0], b"tag1", 1, 1);
    send(&e[0], b"tag2", 1, 2);
    let (m, st) = recv(&e[1], 16, Some(0), Some(2));
    assert_eq!((m.as_slice(), st.tag), (&b"tag2"[..], 2));
    let (m, st) = recv(&e[1], 16, Some(0), None);
    assert_eq!((m.as_slice(), st.tag), (&b"tag1"[..], 1));
}

#[test]
fn any_source_receives_report_the_sender() {
    let e = engines(3, cfg(64), |_| {});
    send(&e[2], b"from2", 0, 9);
    send(&e[1], b"from1", 0, 9);
    let mut got: Vec<(usize, Vec<u8>)> = (0..2)
        .map(|_| {
            let (m, st) = recv(&e[0], 16, None, Some(9));
            (st.source, m)
        })
        .collect();
    got.sort();
    assert_eq!(got, vec![(1, b"from1".to_vec()), (2, b"from2".to_vec())]);
}

#[test]
fn posted_receives_match_in_post_order() {
    let e = engines(2, cfg(64), |_| {});
    let mut a = [0u8; 8];
    let mut b = [0u8; 8];
    let ra = unsafe { e[1].irecv(a.as_mut_ptr(), 8, None, None, Context::POINT_TO_POINT) }.unwrap();
    let rb = unsafe { e[1].irecv(b.as_mut_ptr(), 8, Some(0), Some(3), Context::POINT_TO_POINT) }
        .unwrap();
    send(&e[0], b"one", 1, 3);
    send(&e[0], b"two", 1, 3);
    e[1].wait(ra).unwrap();
    e[1].wait(rb).unwrap();
    assert_eq!(&a[..3], b"one");
    assert_eq!(&b[..3], b"two");
}

#[test]
fn unexpected_messages_wait_for_their_receive() {
    let e = engines(2, cfg(64), |_| {});
    let big = pattern(5000, 7);
    let r_big = isend(&e[0], &big, 1, 2);
    send(&e[0], b"small", 1, 1);
    // Pull both frames into rank 1's unexpected queue before any receive is posted.
    e[1].progress().unwrap();
    assert_eq!(e[1].counters().unexpected_messages, 2);
    assert_eq!(recv(&e[1], 16, Some(0), Some(1)).0, b"small");
    let t = thread::scope(|s| {
        s.spawn(|| e[0].wait(r_big).unwrap());
        recv(&e[1], 8000, Some(0), Some(2)).0
    });
    assert_eq!(t, big);
}

#[test]
fn zero_byte_messages_complete_with_length_zero() {
    let e = engines(2, cfg(64), |_| {});
    send(&e[0], &[], 1, 4);
    let (m, st) = recv(&e[1], 0, Some(0), Some(4));
    assert!(m.is_empty());
    assert_eq!((st.len, st.source, st.tag), (0, 0, 4));
    // and with eager_limit 0, zero bytes is still eager
    let e = engines(2, cfg(0), |_| {});
    send(&e[0], &[], 1, 4);
    recv(&e[1], 0, Some(0), Some(4));
    assert_eq!(e[0].counters().eager_sends, 1);
}

#[test]
fn exactly_the_eager_limit_is_eager_one_more_is_rendezvous() {
    let limit = 256;
    let e = engines(2, cfg(limit), |_| {});
    let at = pattern(limit, 1);
    let over = pattern(limit + 1, 2);
    thread::scope(|s| {
        s.spawn(|| {
            send(&e[0], &at, 1, 0);
            send(&e[0], &over, 1, 0);
        });
        assert_eq!(recv(&e[1], limit + 1, Some(0), Some(0)).0, at);
        assert_eq!(recv(&e[1], limit + 1, Some(0), Some(0)).0, over);
    });
    let c = e[0].counters();
    assert_eq!(c.eager_sends, 1);
    assert_eq!(c.rendezvous_copy_sends, 1);
}

#[test]
fn rendezvous_pipelines_fragments_under_back_pressure() {
    // frag_size 1000 and room for 2 frames: a 10 KB message must be streamed in 11 fragments
    // while the receiver drains.
    let e = engines(2, cfg(64), |w| w.capacity = 2);
    let msg = pattern(10_500, 3);
    let got = thread::scope(|s| {
        s.spawn(|| send(&e[0], &msg, 1, 0));
        recv(&e[1], 20_000, Some(0), Some(0)).0
    });
    assert_eq!(got, msg);
    assert!(e[0].counters().frames_sent >= 12);
}

#[test]
fn many_eager_messages_queue_behind_a_full_wire_in_order() {
    let e = engines(2, cfg(64), |w| w.capacity = 2);
    let msgs: Vec<Vec<u8>> = (0..50).map(|i| pattern(10, i)).collect();
    thread::scope(|s| {
        s.spawn(|| {
            let mut reqs: Vec<ReqId> = msgs.iter().map(|m| isend(&e[0], m, 1, 0)).collect();
            let mut st = vec![Status::default(); reqs.len()];
            e[0].waitall(&mut reqs, Some(&mut st)).unwrap();
        });
        for m in &msgs {
            assert_eq!(&recv(&e[1], 64, Some(0), Some(0)).0, m);
        }
    });
}

#[test]
fn single_copy_reads_in_place_when_on() {
    let mut c = cfg(64);
    c.single_copy = SingleCopy::On;
    let e = engines(2, c, |w| w.single_copy = true);
    let msg = pattern(4096, 5);
    let got = thread::scope(|s| {
        s.spawn(|| send(&e[0], &msg, 1, 0));
        recv(&e[1], 4096, Some(0), Some(0)).0
    });
    assert_eq!(got, msg);
    assert_eq!(e[0].counters().rendezvous_single_copy_sends, 1);
    assert_eq!(e[0].counters().rendezvous_copy_sends, 0);
}

#[test]
fn a_wire_that_places_data_carries_headers_and_the_bytes_arrive() {
    let e = engines(2, cfg(64), |w| w.places = true);
    let msgs = vec![pattern(5000, 1), pattern(1000, 2), pattern(65, 3)];
    assert_eq!(exchange(&e, &msgs), msgs);
    assert_eq!(e[0].counters().rendezvous_copy_sends, 3);
}

#[test]
fn a_placed_frame_on_a_wire_that_does_not_place_is_a_protocol_error() {
    // The sender's wire places; the receiver's says it does not, so it cannot trust a DATA
    // frame without a payload.
    let f = fabric(2);
    let sender = Engine::new(
        Box::new(PipeWire {
            places: true,
            ..PipeWire::new(0, 2, f.clone())
        }),
        cfg(64),
        None,
    )
    .unwrap();
    let receiver = Engine::new(Box::new(PipeWire::new(1, 2, f)), cfg(64), None).unwrap();
    let msg = pattern(3000, 4);
    let mut buf = vec![0u8; 3000];
    let err = thread::scope(|s| {
        s.spawn(|| {
            // The send completes once its last fragment is carried.
            let r = isend(&sender, &msg, 1, 0);
            while sender.test(r).unwrap().is_none() {
                thread::yield_now();
            }
        });
        let r = irecv(&receiver, &mut buf, 0, 0);
        receiver.wait(r).unwrap_err().to_string()
    });
    assert!(err.contains("placed DATA frame"), "{err}");
}

/// Sends `msgs` from rank 0 to rank 1 one by one and returns what arrived.
fn exchange(e: &[Engine], msgs: &[Vec<u8>]) -> Vec<Vec<u8>> {
    msgs.iter()
        .map(|m| {
            thread::scope(|s| {
                s.spawn(|| send(&e[0], m, 1, 0));
                recv(&e[1], m.len(), Some(0), Some(0)).0
            })
        })
        .collect()
}

#[test]
fn the_sender_writes_its_share_of_a_large_single_copy_once_one_has_worked() {
    let mut c = cfg(64);
    c.single_copy = SingleCopy::On;
    c.single_copy_share = 50;
    let e = engines(2, c, |w| w.single_copy = true);
    // The first transfer proves single copy; the second is shared; one below SHARE_MIN is not.
    let msgs = vec![
        pattern(SHARE_MIN, 1),
        pattern(SHARE_MIN + 12345, 2),
        pattern(SHARE_MIN - 1, 3),
    ];
    assert_eq!(exchange(&e, &msgs), msgs);
    assert_eq!(e[0].counters().rendezvous_single_copy_sends, 3);
    assert_eq!(e[0].counters().shared_single_copy_sends, 1);
    assert_eq!(e[0].counters().rendezvous_copy_sends, 0);
}

/// The caller may overwrite a send's buffer as soon as the send completes, so a shared single
/// copy's send must wait for the receiver's FIN (head read), not only for its own share.
fn shared_send_waits_for_the_head(refuse_put: bool) {
    let mut c = cfg(64);
    c.single_copy = SingleCopy::On;
    c.single_copy_share = 50;
    let f = fabric(2);
    let e = engines_on(f.clone(), c, |w| {
        w.single_copy = true;
        w.refuse_put = refuse_put;
    });
    let first = vec![pattern(SHARE_MIN, 1)];
    assert_eq!(
        exchange(&e, &first),
        first,
        "the first transfer proves single copy"
    );

    let msg = pattern(4 * SHARE_MIN, 2);
    let mut buf = vec![0u8; msg.len()];
    f.lock().unwrap().hold_fin = true;
    let r = irecv(&e[1], &mut buf, 0, 0);
    let s = isend(&e[0], &msg, 1, 0);
    // RTS out; the receiver sends PUT, reads the head and sends FIN (held); the sender writes
    // or streams the tail; the receiver completes.
    let mut received = None;
    for _ in 0..10_000 {
        Transport::progress(&e[0]).unwrap();
        Transport::progress(&e[1]).unwrap();
        received = e[1].test(r).unwrap();
        if received.is_some() {
            break;
        }
    }
    assert!(received.is_some(), "head and tail arrived");
    assert_eq!(buf, msg);
    Transport::progress(&e[0]).unwrap();
    assert!(
        e[0].test(s).unwrap().is_none(),
        "the send completed before the receiver said it had read the head"
    );
    f.lock().unwrap().release_fins();
    e[0].wait(s).unwrap();
    let c = e[0].counters();
    let shared = if refuse_put { 0 } else { 1 };
    assert_eq!(c.shared_single_copy_sends, shared);
    assert_eq!(c.single_copy_fallbacks, 1 - shared);
}

#[test]
fn a_shared_send_completes_only_after_the_receiver_has_read_its_head() {
    shared_send_waits_for_the_head(false);
}

#[test]
fn a_streamed_share_completes_only_after_the_receiver_has_read_its_head() {
    shared_send_waits_for_the_head(true);
}

#[test]
fn a_refused_share_is_streamed_instead() {
    let mut c = cfg(64);
    c.single_copy = SingleCopy::On;
    c.single_copy_share = 90;
    let e = engines(2, c, |w| {
        w.single_copy = true;
        w.refuse_put = true;
    });
    let msgs = vec![pattern(SHARE_MIN, 4), pattern(3 * SHARE_MIN + 7, 5)];
    assert_eq!(exchange(&e, &msgs), msgs);
    assert_eq!(e[0].counters().shared_single_copy_sends, 0);
    assert_eq!(e[0].counters().single_copy_fallbacks, 1);
}

#[test]
fn share_zero_leaves_the_whole_copy_to_the_receiver() {
    let mut c = cfg(64);
    c.single_copy = SingleCopy::On;
    let e = engines(2, c, |w| w.single_copy = true);
    let msgs = vec![pattern(SHARE_MIN, 6), pattern(4 * SHARE_MIN, 7)];
    assert_eq!(exchange(&e, &msgs), msgs);
    assert_eq!(e[0].counters().shared_single_copy_sends, 0);
    assert_eq!(e[0].counters().rendezvous_single_copy_sends, 2);
}

#[test]
fn refused_single_copy_falls_back_to_copying_and_is_counted() {
    let mut c = cfg(64);
    c.single_copy = SingleCopy::On;
    let e = engines(2, c, |w| {
        w.single_copy = true;
        w.refuse_get = true;
    });
    let msg = pattern(4096, 6);
    for _ in 0..2 {
        let got = thread::scope(|s| {
            s.spawn(|| send(&e[0], &msg, 1, 0));
            recv(&e[1], 4096, Some(0), Some(0)).0
        });
        assert_eq!(got, msg);
    }
    // refused once, then not asked again
    assert_eq!(e[1].counters().single_copy_fallbacks, 1);
    assert_eq!(e[0].counters().rendezvous_copy_sends, 2);
    assert!(e[1]
        .describe()
        .contains(&("single_copy_refused".into(), "yes".into())));
}

#[test]
fn single_copy_off_never_reads_in_place() {
    let e = engines(2, cfg(64), |w| w.single_copy = true);
    let msg = pattern(4096, 8);
    thread::scope(|s| {
        s.spawn(|| send(&e[0], &msg, 1, 0));
        recv(&e[1], 4096, Some(0), Some(0));
    });
    assert_eq!(e[0].counters().rendezvous_single_copy_sends, 0);
}

#[test]
fn a_too_small_buffer_is_a_truncation_error() {
    let e = engines(2, cfg(64), |_| {});
    send(&e[0], b"0123456789", 1, 0);
    let mut buf = [0u8; 4];
    let r = unsafe {
        e[1].irecv(
            buf.as_mut_ptr(),
            4,
            Some(0),
            Some(0),
            Context::POINT_TO_POINT,
        )
    };
    let err = r.and_then(|r| e[1].wait(r)).unwrap_err();
    assert!(
        matches!(
            err,
            TransportError::Truncated {
                len: 10,
                cap: 4,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn out_of_order_frames_are_put_back_in_order() {
    let e = engines(2, cfg(64), |w| w.swap_once = true);
    send(&e[0], b"A", 1, 0);
    send(&e[0], b"B", 1, 0);
    assert_eq!(recv(&e[1], 4, Some(0), Some(0)).0, b"A");
    assert_eq!(recv(&e[1], 4, Some(0), Some(0)).0, b"B");
}

#[test]
fn contexts_keep_collective_and_user_traffic_apart() {
    let e = engines(2, cfg(64), |_| {});
    let c = b"coll";
    let r = unsafe { e[0].isend(c.as_ptr(), 4, 1, 0, Context::COLLECTIVE) }.unwrap();
    e[0].wait(r).unwrap();
    send(&e[0], b"user", 1, 0);
    assert_eq!(recv(&e[1], 8, None, None).0, b"user");
    let mut buf = [0u8; 8];
    let r = unsafe { e[1].irecv(buf.as_mut_ptr(), 8, None, None, Context::COLLECTIVE) }.unwrap();
    e[1].wait(r).unwrap();
    assert_eq!(&buf[..4], b"coll");
}

#[test]
fn sends_to_self_are_delivered() {
    let e = engines(2, cfg(16), |_| {});
    let msg = pattern(100, 1);
    send(&e[1], &msg, 1, 3);
    assert_eq!(recv(&e[1], 100, Some(1), Some(3)).0, msg);
}

#[test]
fn a_wait_that_never_completes_times_out_naming_peer_and_stage() {
    let mut c = cfg(64);
    c.timeout = Duration::from_millis(100);
    let e = engines(2, c, |_| {});
    e[1].set_stage("osu_latency size 8");
    let mut buf = [0u8; 8];
    let r = unsafe {
        e[1].irecv(
            buf.as_mut_ptr(),
            8,
            Some(0),
            Some(1),
            Context::POINT_TO_POINT,
        )
    }
    .unwrap();
    let err = e[1].wait(r).unwrap_err().to_string();
    assert!(err.contains("waiting for rank 0"), "{err}");
    assert!(err.contains("tag 1"), "{err}");
    assert!(err.contains("stage: osu_latency size 8"), "{err}");
    // the engine stays failed
    assert!(e[1].progress().is_err());
}

/// A peer that sends its last message and exits (as the first rank out of the final barrier
/// does) is not reported gone while that message is still to be read.
#[test]
fn a_message_left_by_a_peer_that_exited_is_still_received() {
    let f = fabric(2);
    let e = engines_on(f.clone(), cfg(64), |_| {});
    let msg = pattern(40, 9);
    send(&e[0], &msg, 1, 3);
    {
        let mut f = f.lock().unwrap();
        f.gone.push(0);
        f.hidden_until_check = true;
    }
    let (got, st) = recv(&e[1], 64, Some(0), Some(3));
    assert_eq!((got, st.source), (msg, 0));
    // Once nothing is left, waiting on the exited peer fails at once, naming it.
    let mut buf = [0u8; 8];
    let r = unsafe {
        e[1].irecv(
            buf.as_mut_ptr(),
            8,
            Some(0),
            Some(3),
            Context::POINT_TO_POINT,
        )
    }
    .unwrap();
    let err = e[1].wait(r).unwrap_err().to_string();
    assert!(err.contains("rank 0") && err.contains("exited"), "{err}");
}

#[test]
fn bad_destinations_and_oversized_eager_limits_are_refused() {
    let e = engines(2, cfg(64), |_| {});
    let err = unsafe { e[0].isend([0u8].as_ptr(), 1, 5, 0, Context::POINT_TO_POINT) }.unwrap_err();
    assert!(err.to_string().contains("ranks 0..1"), "{err}");
    let f = fabric(2);
    let err = Engine::new(Box::new(PipeWire::new(0, 2, f)), cfg(2 << 20), None)
        .err()
        .unwrap();
    assert!(err.to_string().contains("eager_limit"), "{err}");
}

fn rx_thread_case(rx_thread: bool) -> Result<()> {
    let mut c = cfg(64);
    c.rx_thread = rx_thread;
    c.timeout = Duration::from_millis(1500);
    let e = engines(2, c, |_| {});
    let msg = pattern(50_000, 9);
    let mut buf = vec![0u8; 50_000];
    thread::scope(|s| {
        let r = irecv(&e[1], &mut buf, 0, 0);
        let h = s.spawn(|| {
            let r = isend(&e[0], &msg, 1, 0);
            e[0].wait(r)
        });
        // Rank 1 "computes" without calling the engine for longer than rank 0's timeout:
        // only a progress thread can answer the RTS in the meantime.
        thread::sleep(Duration::from_millis(2500));
        let sent = h.join().unwrap();
        if sent.is_ok() {
            e[1].wait(r).unwrap();
            assert_eq!(buf, msg);
        }
        sent.map(|_| ())
    })
}

#[test]
fn the_receive_thread_progresses_while_the_rank_computes() {
    rx_thread_case(true).unwrap();
}

#[test]
fn without_the_receive_thread_a_computing_rank_stalls_its_peer() {
    let err = rx_thread_case(false).unwrap_err();
    assert!(matches!(err, TransportError::Timeout { .. }), "{err}");
}
