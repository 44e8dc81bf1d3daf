//! Unit tests of the loggp model: segments, overheads and gaps in virtual time, and the card
//! checks that refuse values which cannot carry a message.

use super::*;
use crate::registry;
use bench_core::des::Scheduler;
use bench_core::tunables::Source;

fn settings(pairs: &[(&str, &str)]) -> Settings {
    let r = registry::registry(&[]);
    let mut s = r.defaults();
    for (k, v) in pairs {
        s.set(&r, k, v, Source::Cli).unwrap();
    }
    s
}

/// A one-segment card: o_s 300 + 0.01/B, L 1000, o_r 500 + 0.02/B, g 200, G 0.1/B.
fn one_segment() -> Vec<(&'static str, &'static str)> {
    vec![
        ("loggp.s1.send_ns", "300"),
        ("loggp.s1.send_per_byte_ns", "0.01"),
        ("loggp.s1.latency_ns", "1000"),
        ("loggp.s1.recv_ns", "500"),
        ("loggp.s1.recv_per_byte_ns", "0.02"),
        ("loggp.s1.gap_ns", "200"),
        ("loggp.s1.gap_per_byte_ns", "0.1"),
    ]
}

fn eager(src: usize, dst: usize, len: u64) -> FrameInfo {
    FrameInfo {
        src,
        dst,
        kind: FragKind::Eager { len },
        bytes: len + 40,
    }
}

fn sent(o: Offer) -> (Ps, Ps) {
    match o {
        Offer::Sent {
            sender_free,
            arrival,
        } => (sender_free, arrival),
        Offer::Full { why } => panic!("refused: {why}"),
    }
}

#[test]
fn one_message_costs_o_s_then_the_bytes_then_l_then_o_r() {
    let s = settings(&one_segment());
    let mut m = LogGp::build(&s, 2).unwrap();
    let sched = Scheduler::new(2);
    let mut w = World { sched: &sched };
    let (free, arrival) = sent(m.offer(&mut w, &eager(0, 1, 10_000), 5_000).unwrap());
    // o_s = 300 + 100 ns; s*G = 1000 ns; L = 1000 ns.
    assert_eq!(free, 5_000 + 400_000);
    assert_eq!(arrival, 5_000 + 400_000 + 1_000_000 + 1_000_000);
    let Take::Deliver { cost } = m
        .take(&mut w, &eager(0, 1, 10_000), arrival, arrival)
        .unwrap()
    else {
        panic!("refused")
    };
    assert_eq!(cost, 700_000);
}

#[test]
fn a_stream_moves_one_message_per_nic_gap_when_the_nic_is_slowest() {
    let s = settings(&one_segment());
    let mut m = LogGp::build(&s, 2).unwrap();
    let sched = Scheduler::new(2);
    let mut w = World { sched: &sched };
    let mut t = 0;
    let mut arrivals = Vec::new();
    for _ in 0..10 {
        let (free, arr) = sent(m.offer(&mut w, &eager(0, 1, 10_000), t).unwrap());
        t = free;
        arrivals.push(arr);
    }
    // g + s*G = 200 + 1000 ns, more than o_s (400 ns).
    for pair in arrivals.windows(2) {
        assert_eq!(pair[1] - pair[0], 1_200_000);
    }
    // With a sender slower than the NIC, the sender sets the pace.
    let mut slow = one_segment();
    slow.push(("loggp.s1.send_ns", "3000"));
    let mut m = LogGp::build(&settings(&slow), 2).unwrap();
    let (mut t, mut last) = (0, None);
    for _ in 0..5 {
        let (free, arr) = sent(m.offer(&mut w, &eager(0, 1, 10_000), t).unwrap());
        if let Some(prev) = last {
            assert_eq!(arr - prev, 3_100_000);
        }
        t = free;
        last = Some(arr);
    }
}

#[test]
fn the_extra_gap_paces_a_stream_and_leaves_one_message_alone() {
    let mut card = one_segment();
    card.push(("loggp.s1.extra_gap_per_byte_ns", "0.3"));
    let mut m = LogGp::build(&settings(&card), 2).unwrap();
    let sched = Scheduler::new(2);
    let mut w = World { sched: &sched };
    // One message: o_s 400 ns, s*G 1000 ns, L 1000 ns, as without G+.
    let (free, first) = sent(m.offer(&mut w, &eager(0, 1, 10_000), 0).unwrap());
    assert_eq!(first, 400_000 + 1_000_000 + 1_000_000);
    // The next starts g + s*(G + G+) = 200 + 4000 ns after it.
    let (_, second) = sent(m.offer(&mut w, &eager(0, 1, 10_000), free).unwrap());
    assert_eq!(second - first, 4_200_000);
}

#[test]
fn each_size_takes_its_segment() {
    let mut card = one_segment();
    card.extend([
        ("loggp.segments", "2"),
        ("loggp.s2.from", "64K"),
        ("loggp.s2.latency_ns", "5000"),
        ("loggp.s2.send_ns", "300"),
        ("loggp.s2.gap_per_byte_ns", "0.1"),
    ]);
    let mut m = LogGp::build(&settings(&card), 2).unwrap();
    let sched = Scheduler::new(2);
    let mut w = World { sched: &sched };
    let below = sent(m.offer(&mut w, &eager(0, 1, 65_535), 0).unwrap());
    let later = 1_000_000_000;
    let above = sent(m.offer(&mut w, &eager(0, 1, 65_536), later).unwrap());
    // Below: o_s 300 + 655.35 ns, L 1000 ns; above: o_s 300 ns (s2's own), L 5000 ns.
    assert_eq!(below.1 - below.0, ns(6553.5) + ns(1000.0));
    assert_eq!(above.0 - later, ns(300.0));
    assert_eq!(above.1 - above.0, ns(6553.6) + ns(5000.0));
}

#[test]
fn ranks_of_one_node_share_its_nic() {
    let mut card = one_segment();
    card.push(("loggp.ranks_per_node", "2"));
    let sched = Scheduler::new(4);
    let mut w = World { sched: &sched };
    let step = |m: &mut Box<dyn Model>, w: &mut World, pairs: &[(usize, usize)]| {
        // Every sender streams 20 messages; the pace of the last arrivals is the answer.
        let mut t = [0; 4];
        let mut last = Vec::new();
        for _ in 0..20 {
            last.clear();
            for &(a, b) in pairs {
                let (free, arr) = sent(m.offer(w, &eager(a, b, 10_000), t[a]).unwrap());
                t[a] = free;
                last.push(arr);
            }
        }
        *last.iter().max().unwrap()
    };
    let mut shared = LogGp::build(&settings(&card), 4).unwrap();
    let two = step(&mut shared, &mut w, &[(0, 2), (1, 3)]);
    let mut alone = LogGp::build(&settings(&card), 4).unwrap();
    let one = step(&mut alone, &mut w, &[(0, 2)]);
    // Two senders on node 0 take about twice as long as one.
    let ratio = two as f64 / one as f64;
    assert!((1.9..=2.1).contains(&ratio), "{ratio}");
    // One rank per node: the two pairs do not meet.
    let mut apart = LogGp::build(&settings(&one_segment()), 4).unwrap();
    let two_apart = step(&mut apart, &mut w, &[(0, 2), (1, 3)]);
    assert_eq!(two_apart, one);
}

#[test]
fn inconsistent_cards_are_refused_naming_the_parameter() {
    (FABRIC.check_settings)(&settings(&[])).unwrap();
    for (card, names) in [
        (vec![("loggp.s1.from", "8")], "loggp.s1.from"),
        (
            vec![
                ("loggp.segments", "3"),
                ("loggp.s2.from", "4K"),
                ("loggp.s3.from", "4K"),
            ],
            "loggp.s3.from",
        ),
        (vec![("loggp.segments", "2")], "loggp.s2.from"),
    ] {
        let e = match LogGp::build(&settings(&card), 2) {
            Ok(_) => panic!("{card:?} accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(names), "{card:?}: {e}");
        // The same refusal before a run, through the fabric's settings check.
        assert_eq!(
            (FABRIC.check_settings)(&settings(&card)).map_err(|r| r.to_string()),
            Err(e)
        );
    }
}
