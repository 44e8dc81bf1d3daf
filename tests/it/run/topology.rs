//! Emulated topologies through the library: messages that cross the same link (a fat tree's
//! up-link, a switch port, a NIC that several ranks share) take turns on it in virtual time,
//! and the same messages on disjoint links do not wait for each other.

use bench_core::tunables::Source;
use transports::comm::Comm;
use transports::in_process::on_comms;
use transports::registry;

/// Runs `f` on every rank of `ranks` ranks of `fabric` with `sets` applied.
fn on_ranks<T: Send>(
    fabric: &str,
    ranks: usize,
    sets: &[(&str, &str)],
    f: impl Fn(&Comm) -> T + Sync,
) -> Vec<T> {
    let registry = registry::registry(&[]);
    let def = registry::find(fabric).unwrap();
    let mut settings = registry.defaults();
    for (k, v) in def.defaults.iter().chain(sets) {
        settings.set(&registry, k, v, Source::Cli).unwrap();
    }
    on_comms(def, &settings, ranks, f)
        .into_iter()
        .map(|r| r.unwrap())
        .collect()
}

/// Virtual ns from the first sender's start to the last receiver's end, when every pair
/// (source, destination) moves `bytes` at once after a barrier.
fn span(
    fabric: &str,
    ranks: usize,
    sets: &[(&str, &str)],
    pairs: &[(usize, usize)],
    bytes: usize,
) -> u64 {
    let times = on_ranks(fabric, ranks, sets, |c| {
        let me = c.rank();
        let out = vec![0u8; bytes];
        let from: Vec<usize> = pairs.iter().filter(|p| p.1 == me).map(|p| p.0).collect();
        let mut inboxes = vec![vec![0u8; bytes]; from.len()];
        c.barrier().unwrap();
        let start = c.now();
        // Every receive posted at once, so a receiver takes its transfers in any order.
        let mut reqs = Vec::new();
        for (buf, &s) in inboxes.iter_mut().zip(&from) {
            reqs.push(c.irecv(buf, s, 7).unwrap());
        }
        for &(s, d) in pairs {
            if me == s {
                reqs.push(c.isend(&out, d, 7).unwrap());
            }
        }
        c.waitall(&mut reqs).unwrap();
        let sent = pairs.iter().any(|p| p.0 == me);
        (sent.then_some(start), (!from.is_empty()).then(|| c.now()))
    });
    let start = times.iter().filter_map(|t| t.0).min().unwrap();
    let end = times.iter().filter_map(|t| t.1).max().unwrap();
    end - start
}

/// One pair alone takes `one`, of which `wire` is its bytes on the link; the rest, `over`,
/// is the per-message overheads (software, handshake, latency), which a second transfer on
/// the same link overlaps. So two transfers through one link take the sum of their times less
/// one `over` (their bytes one after the other), and on disjoint links the time of one; give
/// or take one `over` either way, for the overheads the second transfer may or may not hide
/// and the ranks' skew when they leave the barrier.
fn assert_contends(what: &str, one: u64, wire: u64, shared: u64, disjoint: u64) {
    let over = one - wire;
    eprintln!(
        "{what}: one pair {one} ns ({wire} on the link), two on one link {shared} ns, on disjoint links {disjoint} ns"
    );
    // Otherwise the two ranges below would meet and could not tell contention apart.
    assert!(
        3 * over < one,
        "{what}: overheads {over} ns are too large a part of the transfer's {one} ns"
    );
    assert!(
        shared.abs_diff(2 * one - over) <= over,
        "{what}: two transfers through one link took {shared} ns, not the sum of two of {one} ns less {over} ns of overheads"
    );
    assert!(
        disjoint.abs_diff(one) <= over,
        "{what}: two transfers on disjoint links took {disjoint} ns, not the {one} ns of one (give or take {over} ns of overheads)"
    );
}

/// The time `bytes` take at `gbps` (10^9 bits per second), ns.
fn wire_ns(bytes: usize, gbps: f64) -> u64 {
    (bytes as f64 * 8.0 / gbps) as u64
}

#[test]
fn bisection_traffic_through_one_fat_tree_uplink_takes_the_sum_of_its_transfers() {
    // 4-port switches in 3 levels: leaves of 2 nodes, 16 nodes. Up-links are chosen by the
    // destination: 0 -> 2 and 1 -> 4 both leave leaf 0 by its up-link 0 (2 and 4 are even);
    // 0 -> 2 and 1 -> 5 leave it by different up-links and reach different leaves.
    let tree = [("bxi.switch_radix", "4"), ("bxi.tree_levels", "3")];
    let bytes = 8 << 20;
    let one = span("bxi", 8, &tree, &[(0, 2)], bytes);
    let shared = span("bxi", 8, &tree, &[(0, 2), (1, 4)], bytes);
    let disjoint = span("bxi", 8, &tree, &[(0, 2), (1, 5)], bytes);
    assert_contends("bxi up-link", one, wire_ns(bytes, 100.0), shared, disjoint);

    // Two ranks of one node share its NIC's link into the tree.
    let two = [("bxi.ranks_per_node", "2")];
    let one = span("bxi", 8, &two, &[(0, 2)], bytes);
    let shared = span("bxi", 8, &two, &[(0, 2), (1, 4)], bytes);
    let disjoint = span("bxi", 8, &two, &[(0, 4), (2, 6)], bytes);
    assert_contends(
        "bxi node link",
        one,
        wire_ns(bytes, 100.0),
        shared,
        disjoint,
    );
}

#[test]
fn two_senders_to_one_rapidio_port_take_turns() {
    // 0 and 1 into node 2's port out of the switch, against 0 -> 2 and 1 -> 3.
    let bytes = 1 << 20;
    let one = span("rapidio", 4, &[], &[(0, 2)], bytes);
    let shared = span("rapidio", 4, &[], &[(0, 2), (1, 2)], bytes);
    let disjoint = span("rapidio", 4, &[], &[(0, 2), (1, 3)], bytes);
    // 192 MB/s at the packet efficiency of 0.95.
    let wire = (bytes as f64 / 0.95 / 192e6 * 1e9) as u64;
    assert_contends("rapidio port", one, wire, shared, disjoint);
}

/// A job larger than the fat tree the card describes is refused before anything runs: one
/// line naming the parameters and the largest job they hold, exit 2, no run directory.
#[test]
fn a_job_larger_than_the_fat_tree_is_refused_with_exit_2() {
    let out = crate::common::scratch("topology-too-large");
    let o = crate::common::raw(&[
        "run",
        "npb",
        "--kernel",
        "is",
        "--class",
        "S",
        "--fabric",
        "bxi",
        "-n",
        "64",
        "--set",
        "bxi.switch_radix=8",
        "--set",
        "bxi.tree_levels=2",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("holds 32 nodes") && err.contains("hold at most -n 32"),
        "{err}"
    );
    assert!(!out.exists() || crate::common::files(&out).is_empty());
}
