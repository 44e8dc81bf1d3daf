//! Large messages over the tcp wire, where each side keeps one copy (the kernel's): the rest of
//! a fragment the kernel had no room for is written later from the sender's own buffer, so the
//! send must not complete before it is; and arriving payloads are read straight into the
//! receive buffer. Small socket buffers make both happen on every fragment.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use bench_core::bootstrap::{local, Bootstrap};
use bench_core::tunables::{Settings, Source};
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::registry;

fn settings(sets: &[(&str, &str)]) -> Settings {
    let registry = registry::registry(&[]);
    let mut s = registry.defaults();
    for (k, v) in registry::find("tcp").unwrap().defaults {
        s.set(&registry, k, v, Source::Fabric).unwrap();
    }
    for (k, v) in sets {
        s.set(&registry, k, v, Source::Cli).unwrap();
    }
    s
}

/// Runs `f(rank, comm)` on two tcp ranks over loopback, each on its own thread.
fn two_ranks<T: Send>(s: &Settings, f: impl Fn(usize, Comm) -> T + Sync) -> (T, T) {
    let (boots, _ev) = local::group(2);
    let f = &f;
    thread::scope(|sc| {
        let hs: Vec<_> = boots
            .into_iter()
            .enumerate()
            .map(|(rank, b)| {
                sc.spawn(move || {
                    let boot: Arc<dyn Bootstrap> = Arc::new(b);
                    let ctx = FabricContext { boot, settings: s };
                    let t = (registry::find("tcp").unwrap().connect)(&ctx).unwrap();
                    f(rank, Comm::new(t))
                })
            })
            .collect();
        let mut out = hs.into_iter().map(|h| h.join().unwrap());
        (out.next().unwrap(), out.next().unwrap())
    })
}

/// Byte `i` of message `m`: no two messages nor offsets alike within a period.
fn pattern(m: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + m * 13 + i / 251) as u8).collect()
}

#[test]
fn a_send_completes_only_once_its_held_tail_is_written() {
    // 4 KiB socket buffers: the kernel takes a few KiB of each 512 KiB fragment, the wire
    // holds the rest in the sender's buffer.
    let s = settings(&[("tcp.sndbuf", "4K"), ("tcp.rcvbuf", "4K")]);
    let len = 1 << 20;
    let (_, got) = two_ranks(&s, |rank, comm| {
        if rank == 0 {
            let mut buf = pattern(1, len);
            comm.send(&buf, 1, 5).unwrap();
            // The send completed: the caller may change its buffer now. Had the wire still
            // held part of it, the receiver would see these bytes.
            buf.fill(0xBB);
            comm.send(&buf[..1], 1, 6).unwrap();
            comm.finish().unwrap();
            Vec::new()
        } else {
            let mut buf = vec![0u8; len];
            let mut r = comm.irecv(&mut buf, 0, 5).unwrap();
            // One pass of progress once the request to send is here answers it; then nothing
            // is read for a while, so the socket fills and the sender's wire holds the rest.
            thread::sleep(Duration::from_millis(100));
            assert!(
                r.test().unwrap().is_none(),
                "1 MiB arrived through 4 KiB buffers"
            );
            thread::sleep(Duration::from_millis(300));
            r.wait().unwrap();
            let mut tail = [0u8; 1];
            comm.recv(&mut tail, 0, 6).unwrap();
            comm.finish().unwrap();
            buf
        }
    });
    let want = pattern(1, len);
    let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
    assert_eq!(bad, 0, "{bad} of {len} bytes differ from what was sent");
}

#[test]
fn large_messages_cross_whole_both_ways_at_once() {
    // Odd sizes and a fragment size that does not divide them, both directions at once (as
    // osu_bibw), with small and with default socket buffers.
    let sizes = [(64 << 10) + 1, 1 << 20, (3 << 20) + 7, 200_003];
    for sets in [
        &[
            ("tcp.sndbuf", "8K"),
            ("tcp.rcvbuf", "8K"),
            ("frag_size", "40K"),
        ][..],
        &[][..],
    ] {
        let s = settings(sets);
        let (a, b) = two_ranks(&s, |rank, comm| {
            let peer = 1 - rank;
            let sends: Vec<Vec<u8>> = sizes
                .iter()
                .enumerate()
                .map(|(m, &n)| pattern(m + 10 * rank, n))
                .collect();
            let mut recvs: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0u8; n]).collect();
            let rr: Vec<_> = recvs
                .iter_mut()
                .enumerate()
                .map(|(m, buf)| comm.irecv(buf, peer, m as i32).unwrap())
                .collect();
            let sr: Vec<_> = sends
                .iter()
                .enumerate()
                .map(|(m, buf)| comm.isend(buf, peer, m as i32).unwrap())
                .collect();
            for r in sr.into_iter().chain(rr) {
                r.wait().unwrap();
            }
            comm.finish().unwrap();
            recvs
        });
        for (rank, got) in [(1, a), (0, b)] {
            for (m, buf) in got.iter().enumerate() {
                assert!(
                    *buf == pattern(m + 10 * rank, sizes[m]),
                    "message {m} from rank {rank} ({} bytes, settings {sets:?}) arrived changed",
                    sizes[m]
                );
            }
        }
    }
}
