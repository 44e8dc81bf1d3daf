//! The tcp wire's data path: length-prefixed frames written with writev (the rest kept in a
//! bounded backlog, or for a DATA payload left in the sender's buffer), reads parsed in place
//! or straight into the engine's receive buffer, idling in poll(2), and a bounded flush on drop.

use std::io::{self, IoSlice, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use bench_core::clock::{Clock, RealClock};
use socket2::SockRef;

use crate::error::{Result, TransportError};
use crate::header::MAX_HEADER_LEN;
use crate::wire::{FragKind, FrameSink, GetOutcome, Placement, Protocol, Wire, WireCaps};

use super::frame::{self, PREFIX};

/// Bytes the wire may hold back for one peer before refusing frames (back-pressure).
const BACKLOG: usize = 8 << 20;
const READ_CHUNK: usize = 256 << 10;
/// While bytes wait in the backlog, a frame up to this size joins it (copying it costs less
/// than the system calls of retrying it); a larger one waits for the backlog to drain.
const APPEND_MAX: usize = 16 << 10;
/// Frames from this size on are offered to the engine for placing their payload: below it,
/// the extra read that placing takes costs more than the copy it saves.
const PLACE_MIN: usize = 32 << 10;
/// Idle rounds spent spinning on nonblocking reads before sleeping in poll(2).
const SPIN_ROUNDS: u64 = 2000;

pub(super) struct Peer {
    pub(super) sock: TcpStream,
    pub(super) addr: SocketAddr,
    /// The peer closed its end: everything it sent has been read.
    closed: bool,
    /// Bytes the kernel had no room for, written from `out_pos` on.
    out: Vec<u8>,
    out_pos: usize,
    /// Then the rest of one DATA payload, written from the sender's buffer.
    held: Option<Held>,
    inb: Vec<u8>,
    in_start: usize,
    in_end: usize,
    /// A payload being read straight into its receive buffer, and how many bytes have come.
    placing: Option<(Placement, usize)>,
    /// The frame at `in_start` was offered for placing and the engine had no place for it.
    declined: bool,
}

/// The unsent rest of a DATA fragment's payload, still in the sender's buffer.
struct Held {
    ptr: *const u8,
    len: usize,
}

// SAFETY: the buffer stays valid while the wire holds it: the engine does not complete the
// send until `holds` is false, and the wire takes no other frame for the peer meanwhile.
unsafe impl Send for Held {}

impl Peer {
    /// Bytes wait to be written.
    fn backlogged(&self) -> bool {
        self.out_pos < self.out.len() || self.held.is_some()
    }
}

pub struct TcpWire {
    pub(super) rank: usize,
    pub(super) size: usize,
    pub(super) peers: Vec<Option<Peer>>,
    pub(super) local: SocketAddr,
    pub(super) clock: RealClock,
    pub(super) rejected: u64,
    pub(super) next_peer: usize,
    /// Re-arm TCP_QUICKACK after every read that returned data (see `Buffers::quickack`).
    pub(super) quickack: bool,
}
/// A frame's length prefix: u32, network order (see `frame`).
pub(super) use super::frame::prefix as frame_prefix;

/// The frame length a whole prefix at the start of `b` gives (for the golden-byte test).
#[cfg(test)]
pub(super) fn frame_len(b: &[u8]) -> usize {
    frame::announced(b)
        .ok()
        .flatten()
        .expect("a whole prefix of a frame the wire accepts")
}
impl TcpWire {
    /// Hands every frame that has arrived to `sink`, reading a large DATA payload straight into
    /// the place the engine names for it.
    fn receive(&mut self, sink: &mut dyn FrameSink) -> Result<usize> {
        let mut n = 0;
        for k in 0..self.size {
            let peer = (self.next_peer + k) % self.size;
            if self.peers[peer].as_ref().is_none_or(|p| p.closed) {
                continue;
            }
            if self.peers[peer].as_ref().is_some_and(Peer::backlogged) {
                self.flush(peer)?;
            }
            let quickack = self.quickack;
            let p = self.peers[peer].as_mut().expect("peer");
            loop {
                if let Some((place, done)) = p.placing {
                    // SAFETY: the engine keeps the receive buffer valid until `placed`.
                    let rest = unsafe {
                        std::slice::from_raw_parts_mut(place.dst.add(done), place.len - done)
                    };
                    let want = rest.len();
                    let got = match read(p, rest, quickack) {
                        Err(e) => return Err(gone(peer, p.addr, format!("read failed: {e}"))),
                        Ok(None) => continue,
                        Ok(Some(got)) => got,
                    };
                    if done + got == place.len {
                        p.placing = None;
                        sink.placed(peer, &place)?;
                        n += 1;
                    } else {
                        p.placing = Some((place, done + got));
                    }
                    if got < want {
                        break;
                    }
                    continue;
                }
                // Room to read into: compact, then grow for a frame larger than the buffer
                // that is not read into place.
                if p.in_start > 0 && (p.in_start == p.in_end || p.inb.len() - p.in_end < READ_CHUNK)
                {
                    p.inb.copy_within(p.in_start..p.in_end, 0);
                    p.in_end -= p.in_start;
                    p.in_start = 0;
                }
                // A prefix past the largest frame is refused before the buffer grows for it.
                let announced = frame::announced(&p.inb[p.in_start..p.in_end])
                    .map_err(|e| oversized(peer, p.addr, e))?;
                if let Some(len) = announced {
                    if PREFIX + len > p.inb.len() - p.in_start && (len < PLACE_MIN || p.declined) {
                        p.inb.resize(PREFIX + len + READ_CHUNK, 0);
                    }
                }
                if p.inb.len() - p.in_end < READ_CHUNK / 4 {
                    p.inb.resize(p.inb.len() + READ_CHUNK, 0);
                }
                let room = p.inb.len() - p.in_end;
                let end = p.in_end;
                let mut into = std::mem::take(&mut p.inb);
                let got = read(p, &mut into[end..], quickack);
                p.inb = into;
                let got = match got {
                    Err(e) => return Err(gone(peer, p.addr, format!("read failed: {e}"))),
                    Ok(None) => continue,
                    Ok(Some(got)) => got,
                };
                p.in_end += got;
                // Hand out every complete frame.
                while let Some(frame) = frame::next_frame(&p.inb[p.in_start..p.in_end])
                    .map_err(|e| oversized(peer, p.addr, e))?
                {
                    p.in_start += PREFIX + frame.len();
                    p.declined = false;
                    sink.frame(peer, frame)?;
                    n += 1;
                }
                // A large frame whose header is here: its payload may have a place to go.
                if !p.declined && p.in_end - p.in_start >= PREFIX + MAX_HEADER_LEN {
                    let len = frame::announced(&p.inb[p.in_start..p.in_end])
                        .map_err(|e| oversized(peer, p.addr, e))?
                        .unwrap_or(0);
                    if len >= PLACE_MIN {
                        let head = &p.inb[p.in_start + PREFIX..p.in_end];
                        match sink.place(peer, head, len)? {
                            Some(place) => {
                                // What already came of the payload goes first (the frame is
                                // incomplete, so this is less than all of it).
                                let staged = head.len() - place.header_len;
                                // SAFETY: staged < place.len bytes, inside the buffer.
                                unsafe {
                                    std::ptr::copy_nonoverlapping(
                                        head[place.header_len..].as_ptr(),
                                        place.dst,
                                        staged,
                                    )
                                };
                                p.in_start = p.in_end;
                                p.placing = Some((place, staged));
                                continue;
                            }
                            None => p.declined = true,
                        }
                    }
                }
                // A short read means the socket was drained: do not pay a system call just to
                // hear EAGAIN.
                if got == 0 || got < room {
                    break;
                }
            }
        }
        self.next_peer = (self.next_peer + 1) % self.size;
        Ok(n)
    }

    /// Writes as much of `peer`'s backlog as the kernel takes: the copied bytes, then the
    /// held payload.
    fn flush(&mut self, peer: usize) -> Result<()> {
        let p = self.peers[peer].as_mut().expect("peer");
        while p.out_pos < p.out.len() {
            match p.sock.write(&p.out[p.out_pos..]) {
                Ok(0) => return Ok(()),
                Ok(n) => p.out_pos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(gone(peer, p.addr, format!("write failed: {e}"))),
            }
        }
        p.out.clear();
        p.out_pos = 0;
        while let Some(h) = &mut p.held {
            // SAFETY: see `Held`.
            let rest = unsafe { std::slice::from_raw_parts(h.ptr, h.len) };
            match p.sock.write(rest) {
                Ok(0) => break,
                Ok(n) if n == h.len => p.held = None,
                Ok(n) => {
                    // SAFETY: n < len, so still inside the payload.
                    h.ptr = unsafe { h.ptr.add(n) };
                    h.len -= n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(gone(peer, p.addr, format!("write failed: {e}"))),
            }
        }
        Ok(())
    }
}
/// One nonblocking read from `p`'s socket into `buf`: `Some(bytes)` (0 when nothing is there
/// or the peer closed, which marks it), or `None` when interrupted.
fn read(p: &mut Peer, buf: &mut [u8], quickack: bool) -> io::Result<Option<usize>> {
    match p.sock.read(buf) {
        // An orderly close: what it sent before is all here. Only a wait that still needs
        // this peer fails (check_peers), or a send to it.
        Ok(0) => {
            p.closed = true;
            Ok(Some(0))
        }
        Ok(k) => {
            if quickack {
                // Only a hint: a failure costs speed, never data.
                let _ = SockRef::from(&p.sock).set_tcp_quickack(true);
            }
            Ok(Some(k))
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Some(0)),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
        Err(e) => Err(e),
    }
}

/// A frame sink for callers of `poll`, which take whole frames only.
struct WholeFrames<'a>(&'a mut dyn FnMut(usize, &[u8]) -> Result<()>);

impl FrameSink for WholeFrames<'_> {
    fn frame(&mut self, peer: usize, frame: &[u8]) -> Result<()> {
        (self.0)(peer, frame)
    }

    fn place(&mut self, _: usize, _: &[u8], _: usize) -> Result<Option<Placement>> {
        Ok(None)
    }

    fn placed(&mut self, peer: usize, _: &Placement) -> Result<()> {
        // Only a placing poll starts a placement; the engine polls with placing whenever a
        // receive may be in flight, so a plain poll never finds one unfinished.
        Err(TransportError::Protocol {
            peer: format!("rank {peer}"),
            what: "a payload read into place was finished by a poll that does not place".into(),
        })
    }
}

/// A peer whose length prefix asks for more than a frame may be: its stream cannot be trusted
/// past it.
fn oversized(peer: usize, addr: SocketAddr, e: frame::Oversized) -> TransportError {
    TransportError::Protocol {
        peer: format!("rank {peer} at {addr}"),
        what: e.to_string(),
    }
}

fn gone(peer: usize, addr: SocketAddr, why: String) -> TransportError {
    TransportError::PeerGone {
        peer: format!("rank {peer} at {addr}"),
        why,
        stage: String::new(),
    }
}
impl Peer {
    pub(super) fn new(sock: TcpStream, addr: SocketAddr) -> Peer {
        Peer {
            sock,
            addr,
            closed: false,
            out: Vec::new(),
            out_pos: 0,
            held: None,
            inb: vec![0u8; READ_CHUNK * 4],
            in_start: 0,
            in_end: 0,
            placing: None,
            declined: false,
        }
    }
}
impl Wire for TcpWire {
    fn name(&self) -> &str {
        "tcp"
    }

    fn caps(&self) -> WireCaps {
        WireCaps {
            max_frame: frame::MAX_FRAME,
            single_copy: false,
            virtual_time: false,
            models_rx_thread: false,
            places_data: false,
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
        match self.peers.get(peer).and_then(|p| p.as_ref()) {
            Some(p) => format!("rank {peer} at {}", p.addr),
            None => format!("rank {peer}"),
        }
    }

    fn try_send(
        &mut self,
        peer: usize,
        kind: FragKind,
        header: &[u8],
        payload: &[u8],
    ) -> Result<bool> {
        let len = header.len() + payload.len();
        let lenb = frame_prefix(len);
        let backlogged = {
            let p = self.peers[peer].as_ref().ok_or_else(|| {
                TransportError::Config(format!("no tcp connection to rank {peer}"))
            })?;
            p.backlogged()
        };
        if self.peers[peer].as_ref().is_some_and(|p| p.closed) {
            let addr = self.peers[peer].as_ref().expect("checked").addr;
            return Err(gone(peer, addr, "closed the connection".into()));
        }
        if backlogged {
            self.flush(peer)?;
        }
        let p = self.peers[peer].as_mut().expect("checked");
        if p.held.is_some() {
            // Nothing may overtake a held payload, and nothing is copied behind it.
            return Ok(false);
        }
        let pending = p.out.len() - p.out_pos;
        if pending == 0 {
            let iov = [
                IoSlice::new(&lenb),
                IoSlice::new(header),
                IoSlice::new(payload),
            ];
            let written = loop {
                match p.sock.write_vectored(&iov) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break 0,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(gone(peer, p.addr, format!("write failed: {e}"))),
                }
            };
            if written < 4 + len {
                // Keep the rest; the frame is ours to finish sending. A DATA payload stays in
                // the sender's buffer, which outlives its send (`holds`); any other frame's
                // send completes now, so its rest is copied.
                let p = self.peers[peer].as_mut().expect("checked");
                let head = 4 + header.len();
                for (at, part) in [(0, &lenb[..]), (4, header)] {
                    let from = written.saturating_sub(at).min(part.len());
                    p.out.extend_from_slice(&part[from..]);
                }
                let sent = written.saturating_sub(head);
                if sent == payload.len() {
                    // Only the prefix or header was short.
                } else if matches!(kind, FragKind::Data { .. }) {
                    p.held = Some(Held {
                        // SAFETY: sent < payload.len() here, so still inside the payload.
                        ptr: unsafe { payload.as_ptr().add(sent) },
                        len: payload.len() - sent,
                    });
                } else {
                    p.out.extend_from_slice(&payload[sent..]);
                }
            }
            return Ok(true);
        }
        if 4 + len > APPEND_MAX || pending + 4 + len > BACKLOG {
            return Ok(false);
        }
        p.out.extend_from_slice(&lenb);
        p.out.extend_from_slice(header);
        p.out.extend_from_slice(payload);
        Ok(true)
    }

    fn poll(&mut self, sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>) -> Result<usize> {
        self.receive(&mut WholeFrames(sink))
    }

    fn reads_into_place(&self) -> bool {
        true
    }

    fn poll_placing(&mut self, sink: &mut dyn FrameSink) -> Result<usize> {
        self.receive(sink)
    }

    fn holds(&self, peer: usize) -> bool {
        self.peers
            .get(peer)
            .and_then(|p| p.as_ref())
            .is_some_and(|p| p.held.is_some())
    }

    fn get(&mut self, _peer: usize, _remote: u64, _local: &mut [u8]) -> Result<GetOutcome> {
        Err(TransportError::Config("tcp has no single copy".into()))
    }

    fn preferred_protocol(&self, _peer: usize, _len: u64) -> Protocol {
        Protocol::Copy
    }

    fn idle(&mut self, idle_rounds: u64) -> Result<()> {
        if idle_rounds < SPIN_ROUNDS {
            return Ok(());
        }
        // Long wait: sleep in poll(2) until a socket is readable (or writable with a backlog),
        // at most a millisecond so timeouts and other work are still checked.
        let mut fds: Vec<libc::pollfd> = self
            .peers
            .iter()
            .flatten()
            .map(|p| libc::pollfd {
                fd: p.sock.as_raw_fd(),
                events: libc::POLLIN | if p.backlogged() { libc::POLLOUT } else { 0 },
                revents: 0,
            })
            .collect();
        // SAFETY: fds is a valid array of pollfd for the call's duration.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 1) };
        Ok(())
    }

    fn check_peers(&mut self, awaited: Option<usize>) -> Result<()> {
        let closed: Vec<usize> = self
            .peers
            .iter()
            .enumerate()
            .filter(|(_, p)| p.as_ref().is_some_and(|p| p.closed))
            .map(|(r, _)| r)
            .collect();
        let fatal = match awaited {
            Some(r) => closed.contains(&r).then_some(r),
            // Any peer could answer: only when none is left.
            None => (closed.len() == self.size - 1).then(|| closed[0]),
        };
        match fatal {
            Some(r) => {
                let addr = self.peers[r].as_ref().expect("closed peer").addr;
                Err(gone(r, addr, "closed the connection".into()))
            }
            None => Ok(()),
        }
    }

    fn describe(&self) -> Vec<(String, String)> {
        let peers: Vec<String> = self
            .peers
            .iter()
            .enumerate()
            .filter_map(|(r, p)| p.as_ref().map(|p| format!("{r}={}", p.addr)))
            .collect();
        vec![
            ("tcp_local_address".into(), self.local.to_string()),
            ("tcp_peers".into(), peers.join(" ")),
            ("tcp_rejected_connections".into(), self.rejected.to_string()),
        ]
    }
}

impl Drop for TcpWire {
    /// Sends what is still held back before closing, so a finishing rank never drops bytes a
    /// peer still waits for; bounded so a dead peer cannot hold the exit.
    fn drop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        for r in 0..self.size {
            // A payload still held belongs to a send that never completed: its buffer may be
            // gone, and its receiver waits in vain either way.
            if let Some(p) = self.peers[r].as_mut() {
                p.held = None;
            }
            while self.peers[r]
                .as_ref()
                .is_some_and(|p| !p.closed && p.out_pos < p.out.len())
                && Instant::now() < deadline
            {
                if self.flush(r).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_micros(100));
            }
            if let Some(p) = &self.peers[r] {
                let _ = p.sock.shutdown(std::net::Shutdown::Write);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// Rank 0's wire with rank 1 connected, and rank 1's end of the connection.
    fn connected() -> (TcpWire, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let far = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (near, addr) = l.accept().unwrap();
        near.set_nonblocking(true).unwrap();
        let wire = TcpWire {
            rank: 0,
            size: 2,
            peers: vec![None, Some(Peer::new(near, addr))],
            local: l.local_addr().unwrap(),
            clock: RealClock::new(),
            rejected: 0,
            next_peer: 0,
            quickack: false,
        };
        (wire, far)
    }

    /// Four bytes from a peer used to be able to make the wire grow its buffer to 4 GiB.
    #[test]
    fn a_prefix_past_the_largest_frame_fails_the_peer_without_growing_the_buffer() {
        let (mut wire, mut far) = connected();
        let mut sent = frame_prefix(3).to_vec();
        sent.extend_from_slice(b"abc");
        sent.extend_from_slice(&[0xff; 4]);
        sent.extend_from_slice(&[0; 60]);
        far.write_all(&sent).unwrap();
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        let err = loop {
            let polled = wire.poll(&mut |_, f| {
                got.push(f.to_vec());
                Ok(())
            });
            match polled {
                Err(e) => break e,
                Ok(_) => assert!(Instant::now() < deadline, "the prefix was not refused"),
            }
        };
        assert_eq!(got, [b"abc".to_vec()], "the frame before it arrives");
        let line = err.to_string();
        assert!(
            line.contains("rank 1") && line.contains("announced a frame of 4294967295 bytes"),
            "{line}"
        );
        let buffer = wire.peers[1].as_ref().unwrap().inb.len();
        assert!(buffer <= READ_CHUNK * 4, "{buffer}");
    }
}
