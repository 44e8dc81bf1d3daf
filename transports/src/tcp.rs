//! The tcp wire: one TCP connection per rank pair, across hosts (Ethernet, IPoIB) or loopback.
//!
//! Set-up: every rank listens on the chosen interface (`tcp.if`), publishes its address through
//! the bootstrap, connects to every lower rank and accepts every higher one. A connection opens
//! with a hello carrying a per-job random token that rank 0 hands out through the bootstrap; a
//! connection without the right token (or from an unexpected rank) is closed and logged, and
//! set-up carries on. Socket buffers (`tcp.sndbuf`, `tcp.rcvbuf`) are set before listen and
//! connect (see `Buffers`). Then the sockets become nonblocking with TCP_NODELAY and are driven
//! by the engine's progress: frames travel length-prefixed (u32, network order), written with
//! writev, with what the kernel does not take kept in a bounded backlog; reads are parsed in
//! place. A peer that closes its connection fails the next wait with its rank and address named.
//!
//! Large messages cross with one copy on each side, the kernel's, as with Open MPI's tcp BTL:
//! the rest of a rendezvous fragment the kernel had no room for is written later from the
//! sender's own buffer (the engine completes the send only once it is, see `Wire::holds`),
//! never copied aside; and the payload of an arriving fragment is read straight into the
//! receive buffer the engine names (`FrameSink::place`), not through the wire's buffer.

use std::io::{self, IoSlice, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use bench_core::bootstrap::{random_hex, Bootstrap};
use bench_core::clock::{Clock, RealClock};
use bench_core::tunables::{Def, Kind, Settings};
use socket2::{Domain, Protocol as SockProto, SockRef, Socket, Type};

use crate::error::{Result, TransportError};
use crate::header::MAX_HEADER_LEN;
use crate::wire::{FragKind, FrameSink, GetOutcome, Placement, Protocol, Wire, WireCaps};

/// The tcp wire's tunables.
pub const TUNABLES: &[Def] = &[
    Def {
        name: "tcp.if",
        kind: Kind::Text,
        default: "auto",
        help: "interface name (eth0), IPv4 address, or auto: the address that reaches the bootstrap (loopback for local jobs)",
    },
    Def {
        name: "tcp.sndbuf",
        kind: Kind::Size {
            min: 0,
            max: 1 << 30,
        },
        default: "0",
        help: "SO_SNDBUF of each connection; 0 keeps the kernel's default and autotuning",
    },
    Def {
        name: "tcp.rcvbuf",
        kind: Kind::Size {
            min: 0,
            max: 1 << 30,
        },
        default: "0",
        help: "SO_RCVBUF of each connection; 0 keeps the kernel's default and autotuning",
    },
    Def {
        name: "tcp.connect_timeout",
        kind: Kind::Duration {
            min_ms: 100,
            max_ms: 3_600_000,
        },
        default: "10s",
        help: "longest wait for a peer's connection during set-up (each I/O wait is bounded by timeout)",
    },
];

fn tcp_tunables() -> &'static [Def] {
    TUNABLES
}

const MAGIC: &[u8; 8] = b"FABTCP01";
const HELLO_LEN: usize = 8 + 32 + 4 + 4;
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

struct Peer {
    sock: TcpStream,
    addr: SocketAddr,
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
    rank: usize,
    size: usize,
    peers: Vec<Option<Peer>>,
    local: SocketAddr,
    clock: RealClock,
    rejected: u64,
    next_peer: usize,
    /// Re-arm TCP_QUICKACK after every read that returned data (see `Buffers::quickack`).
    quickack: bool,
}

/// The address to listen on: an interface's IPv4 address, a literal address, or (auto) the
/// address this rank reaches the bootstrap from.
fn listen_ip(spec: &str, boot: &dyn Bootstrap) -> Result<IpAddr> {
    if spec != "auto" {
        return named_ip(spec).map_err(TransportError::Config);
    }
    if let Some(ip) = boot.local_ip() {
        return Ok(ip);
    }
    // Without a TCP bootstrap: the first non-loopback IPv4 address, else loopback.
    if let Ok(addrs) = nix::ifaddrs::getifaddrs() {
        for a in addrs {
            if let Some(sin) = a.address.as_ref().and_then(|s| s.as_sockaddr_in()) {
                if !sin.ip().is_loopback() {
                    return Ok(IpAddr::V4(sin.ip()));
                }
            }
        }
    }
    Ok(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// `tcp.if` other than auto: a literal address, or the IPv4 address of the interface named.
fn named_ip(spec: &str) -> std::result::Result<IpAddr, String> {
    if let Ok(ip) = spec.parse::<IpAddr>() {
        return Ok(ip);
    }
    let addrs =
        nix::ifaddrs::getifaddrs().map_err(|e| format!("tcp: cannot list interfaces: {e}"))?;
    let mut valid = Vec::new();
    for a in addrs {
        if let Some(sin) = a.address.as_ref().and_then(|s| s.as_sockaddr_in()) {
            if a.interface_name == spec {
                return Ok(IpAddr::V4(sin.ip()));
            }
            valid.push(format!("{} ({})", a.interface_name, sin.ip()));
        }
    }
    Err(format!(
        "tcp.if={spec}: no interface of that name with an IPv4 address here; valid: auto, an address, or one of {}",
        valid.join(", ")
    ))
}

/// Refuses a `tcp.if` this host does not have, before anything runs (bad input, not a failure).
fn check_settings(s: &Settings) -> std::result::Result<(), String> {
    match s.text("tcp.if") {
        "auto" => Ok(()),
        spec => named_ip(spec).map(|_| ()),
    }
}

/// A frame's length prefix: u32, network order.
fn frame_prefix(len: usize) -> [u8; 4] {
    (len as u32).to_be_bytes()
}

/// The frame length a prefix at the start of `b` gives.
fn frame_len(b: &[u8]) -> usize {
    u32::from_be_bytes(b[..4].try_into().expect("4 bytes")) as usize
}

/// The first bytes on a connection: magic, the job token zero-padded to 32 bytes, the
/// connecting rank and the job size as u32 in network order.
fn hello(token: &str, rank: usize, size: usize) -> [u8; HELLO_LEN] {
    let mut h = [0u8; HELLO_LEN];
    h[..8].copy_from_slice(MAGIC);
    let t = token.as_bytes();
    h[8..8 + t.len().min(32)].copy_from_slice(&t[..t.len().min(32)]);
    h[40..44].copy_from_slice(&(rank as u32).to_be_bytes());
    h[44..48].copy_from_slice(&(size as u32).to_be_bytes());
    h
}

/// Checks a hello: the rank it claims, or why it is refused.
fn check_hello(
    h: &[u8; HELLO_LEN],
    token: &str,
    me: usize,
    size: usize,
) -> std::result::Result<usize, String> {
    if &h[..8] != MAGIC {
        return Err("not a fabbench tcp hello".into());
    }
    if h != &hello(
        token,
        u32::from_be_bytes(h[40..44].try_into().unwrap()) as usize,
        size,
    ) {
        return Err("wrong job token or job size".into());
    }
    let r = u32::from_be_bytes(h[40..44].try_into().unwrap()) as usize;
    if r <= me || r >= size {
        return Err(format!("rank {r} should not connect to rank {me}"));
    }
    Ok(r)
}

/// `tcp.sndbuf` and `tcp.rcvbuf` (0: the kernel's default and autotuning).
///
/// They are set on a socket before listen(2) or connect(2), as tcp(7) requires (the window
/// scale is agreed in the handshake). A receive buffer shrunk on an open connection made the
/// receiver advertise a zero window over and over (nstat's TCPToZeroWindowAdv), and each piece
/// of a message waited on a TCP timer: on loopback with a 4 KiB receive buffer, 16 KiB one way
/// took 418 ms set afterwards (a Python ping-pong: 135 ms), 55-60 us set before. Accepted
/// sockets inherit the listener's buffers.
#[derive(Clone, Copy)]
struct Buffers {
    snd: usize,
    rcv: usize,
}

impl Buffers {
    fn socket(self, addr: &SocketAddr) -> io::Result<Socket> {
        let sock = Socket::new(
            Domain::for_address(*addr),
            Type::STREAM,
            Some(SockProto::TCP),
        )?;
        if self.snd > 0 {
            sock.set_send_buffer_size(self.snd)?;
        }
        if self.rcv > 0 {
            sock.set_recv_buffer_size(self.rcv)?;
        }
        Ok(sock)
    }

    /// A small send buffer holds a segment or two, so the sender waits for each ACK, and a
    /// receiver that delays its ACKs (40 ms and more) makes every piece of a large message wait
    /// that long: 128 KiB one way took 80 ms on loopback with a 4 KiB send buffer (a plain
    /// blocking ping-pong as well), 90 us with quick ACKs. Linux leaves quick-ACK mode on its
    /// own, so the receiver re-arms it after each read; that costs a system call per read, paid
    /// only when `tcp.sndbuf` is set (the tunables are the same on every rank).
    fn quickack(self) -> bool {
        self.snd > 0
    }

    fn listen(self, addr: SocketAddr) -> io::Result<TcpListener> {
        let sock = self.socket(&addr)?;
        sock.bind(&addr.into())?;
        sock.listen(128)?;
        Ok(sock.into())
    }

    fn connect(self, addr: &SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
        let sock = self.socket(addr)?;
        sock.connect_timeout(&(*addr).into(), timeout)?;
        Ok(sock.into())
    }
}

impl TcpWire {
    pub fn connect(boot: &dyn Bootstrap, s: &Settings) -> Result<TcpWire> {
        let rank = boot.rank();
        let size = boot.size();
        let timeout = s.duration("timeout");
        let connect_timeout = s.duration("tcp.connect_timeout");
        let ip = listen_ip(s.text("tcp.if"), boot)?;
        let bufs = Buffers {
            snd: s.size("tcp.sndbuf") as usize,
            rcv: s.size("tcp.rcvbuf") as usize,
        };
        let listener = bufs
            .listen(SocketAddr::new(ip, 0))
            .map_err(|e| TransportError::Setup(format!("tcp: cannot listen on {ip}: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| TransportError::Setup(format!("tcp: {e}")))?;
        // The job token: random, made by rank 0, handed out through the bootstrap.
        if rank == 0 {
            boot.put("tcp/token", &random_hex(16))?;
        }
        let token = boot.get("tcp/token", timeout)?;
        boot.put(&format!("tcp/{rank}/addr"), &local.to_string())?;
        let mut peers: Vec<Option<Peer>> = (0..size).map(|_| None).collect();
        // Connect to every lower rank.
        for (r, slot) in peers.iter_mut().enumerate().take(rank) {
            let a = boot.get(&format!("tcp/{r}/addr"), timeout)?;
            let addr: SocketAddr = a.parse().map_err(|_| {
                TransportError::Setup(format!("tcp: rank {r} published address '{a}'"))
            })?;
            let sock = dial(addr, r, &token, rank, size, connect_timeout, bufs)?;
            *slot = Some(Peer::new(sock, addr));
        }
        // Accept every higher rank, refusing anything else.
        let mut rejected = 0u64;
        let deadline = Instant::now() + connect_timeout;
        listener
            .set_nonblocking(true)
            .map_err(|e| TransportError::Setup(format!("tcp: {e}")))?;
        while peers[rank + 1..].iter().any(Option::is_none) {
            match listener.accept() {
                Ok((sock, from)) => match greet(&sock, &token, rank, size) {
                    Ok(r) if peers[r].is_none() => peers[r] = Some(Peer::new(sock, from)),
                    Ok(r) => {
                        rejected += 1;
                        tracing::warn!(
                            "tcp: refused a second connection claiming rank {r} from {from}"
                        );
                    }
                    Err(why) => {
                        rejected += 1;
                        tracing::warn!("tcp: refused a connection from {from}: {why}");
                    }
                },
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        let missing: Vec<String> = (rank + 1..size)
                            .filter(|r| peers[*r].is_none())
                            .map(|r| r.to_string())
                            .collect();
                        return Err(TransportError::Timeout {
                            peer: format!("rank {}", missing.join(", rank ")),
                            what: format!("a tcp connection to {local}"),
                            stage: "tcp connect".into(),
                            after: connect_timeout,
                        });
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => {
                    return Err(TransportError::Setup(format!(
                        "tcp: accept on {local}: {e}"
                    )))
                }
            }
        }
        drop(listener);
        for p in peers.iter().flatten() {
            p.sock
                .set_nonblocking(true)
                .and_then(|_| p.sock.set_nodelay(true))
                .map_err(|e| {
                    TransportError::Setup(format!("tcp: socket options for {}: {e}", p.addr))
                })?;
        }
        Ok(TcpWire {
            rank,
            size,
            peers,
            local,
            clock: RealClock::new(),
            rejected,
            next_peer: 0,
            quickack: bufs.quickack(),
        })
    }

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
                if p.in_end - p.in_start >= 4 {
                    let len = frame_len(&p.inb[p.in_start..]);
                    if 4 + len > p.inb.len() - p.in_start && (len < PLACE_MIN || p.declined) {
                        p.inb.resize(4 + len + READ_CHUNK, 0);
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
                while p.in_end - p.in_start >= 4 {
                    let len = frame_len(&p.inb[p.in_start..]);
                    if p.in_end - p.in_start < 4 + len {
                        break;
                    }
                    let frame = &p.inb[p.in_start + 4..p.in_start + 4 + len];
                    p.in_start += 4 + len;
                    p.declined = false;
                    sink.frame(peer, frame)?;
                    n += 1;
                }
                // A large frame whose header is here: its payload may have a place to go.
                if !p.declined && p.in_end - p.in_start >= 4 + MAX_HEADER_LEN {
                    let len = frame_len(&p.inb[p.in_start..]);
                    if len >= PLACE_MIN {
                        let head = &p.inb[p.in_start + 4..p.in_end];
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

fn gone(peer: usize, addr: SocketAddr, why: String) -> TransportError {
    TransportError::PeerGone {
        peer: format!("rank {peer} at {addr}"),
        why,
        stage: String::new(),
    }
}

fn dial(
    addr: SocketAddr,
    peer: usize,
    token: &str,
    rank: usize,
    size: usize,
    timeout: Duration,
    bufs: Buffers,
) -> Result<TcpStream> {
    let start = Instant::now();
    let fail = |why: String| {
        TransportError::Setup(format!(
            "tcp: cannot connect to rank {peer} at {addr} (stage: tcp connect): {why}"
        ))
    };
    loop {
        let left = timeout.saturating_sub(start.elapsed());
        match bufs.connect(&addr, left.max(Duration::from_millis(10))) {
            Ok(mut sock) => {
                sock.set_read_timeout(Some(timeout))
                    .map_err(|e| fail(e.to_string()))?;
                sock.write_all(&hello(token, rank, size))
                    .map_err(|e| fail(e.to_string()))?;
                let mut ack = [0u8; 1];
                return match sock.read_exact(&mut ack) {
                    Ok(()) if ack[0] == b'K' => {
                        sock.set_read_timeout(None)
                            .map_err(|e| fail(e.to_string()))?;
                        Ok(sock)
                    }
                    Ok(()) => Err(fail("refused our hello".into())),
                    Err(e) => Err(fail(format!("no answer to our hello: {e}"))),
                };
            }
            // The peer may not be listening yet on a slow host: retry until the deadline.
            Err(e)
                if start.elapsed() < timeout
                    && matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionRefused | io::ErrorKind::TimedOut
                    ) =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => {
                return Err(fail(format!(
                    "{e} after {}",
                    humantime::format_duration(Duration::from_millis(
                        start.elapsed().as_millis() as u64
                    ))
                )))
            }
        }
    }
}

/// Reads and checks a hello on a freshly accepted connection; answers it if good.
fn greet(
    sock: &TcpStream,
    token: &str,
    me: usize,
    size: usize,
) -> std::result::Result<usize, String> {
    let mut s = sock;
    sock.set_nonblocking(false).map_err(|e| e.to_string())?;
    // A silent or slow client must not stall set-up.
    sock.set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(|e| e.to_string())?;
    let mut h = [0u8; HELLO_LEN];
    s.read_exact(&mut h).map_err(|e| format!("no hello: {e}"))?;
    let r = check_hello(&h, token, me, size)?;
    s.write_all(b"K").map_err(|e| e.to_string())?;
    sock.set_read_timeout(None).map_err(|e| e.to_string())?;
    Ok(r)
}

impl Peer {
    fn new(sock: TcpStream, addr: SocketAddr) -> Peer {
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
            max_frame: 1 << 30,
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

fn connect(ctx: &crate::fabric::FabricContext) -> Result<Box<dyn crate::transport::Transport>> {
    let wire = TcpWire::connect(ctx.boot.as_ref(), ctx.settings)?;
    let cfg = crate::fabric::engine_config(ctx.settings);
    Ok(Box::new(crate::engine::Engine::new(
        Box::new(wire),
        cfg,
        Some(ctx.boot.clone()),
    )?))
}

/// The registry line's target.
pub const FABRIC: crate::fabric::FabricDef = crate::fabric::FabricDef {
    name: "tcp",
    kind: crate::fabric::FabricKind::Native,
    summary: "TCP sockets between processes on one or many hosts (Ethernet, IPoIB, loopback)",
    availability: crate::fabric::always_usable,
    tunables: tcp_tunables,
    // Eager below 64 KiB, as Open MPI's tcp BTL (whose 64 KiB limit counts its header): a round
    // trip costs far more than a copy here, but a 64 KiB eager frame (header and length
    // prefix past 64 KiB) took 58.6 us one way on loopback where rendezvous takes 26.9 us
    // (Open MPI: 34 us); osu_bw at 64 KiB drops from 4,456 to 3,320 MB/s, still well above
    // Open MPI's (same session). Large pieces, because each one costs system calls on both
    // sides: 512 KiB beat 128 KiB by about 20 % in osu_bw at 1 MiB on loopback (interleaved
    // runs).
    defaults: &[("eager_limit", "63K"), ("frag_size", "512K")],
    replaces: &[],
    ignores: &["single_copy", "single_copy_share"],
    check_ranks: crate::fabric::any_ranks,
    check_settings,
    launch: crate::fabric::Launch::Processes,
    cleanup: crate::fabric::nothing_to_clean,
    library: crate::fabric::no_library,
    connect,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hellos_and_length_prefixes_have_their_golden_bytes() {
        let mut want = b"FABTCP01".to_vec();
        want.extend_from_slice(b"0123456789abcdef");
        want.extend_from_slice(&[0; 16]); // a short token is zero-padded to 32 bytes
        want.extend_from_slice(&[0, 0, 1, 2, 0, 0, 3, 4]);
        assert_eq!(&hello("0123456789abcdef", 0x0102, 0x0304)[..], &want[..]);
        assert_eq!(frame_prefix(0x0001_0203), [0, 1, 2, 3]);
        assert_eq!(frame_len(&[0, 1, 2, 3, 99]), 0x0001_0203);
    }

    #[test]
    fn hellos_carry_token_rank_and_size() {
        let t = "0123456789abcdef0123456789abcdef";
        let h = hello(t, 3, 4);
        assert_eq!(check_hello(&h, t, 1, 4), Ok(3));
        assert!(check_hello(&h, "ffffffffffffffffffffffffffffffff", 1, 4)
            .unwrap_err()
            .contains("token"));
        assert!(check_hello(&h, t, 1, 8)
            .unwrap_err()
            .contains("token or job size"));
        assert!(check_hello(&hello(t, 0, 4), t, 1, 4)
            .unwrap_err()
            .contains("should not connect"));
        let mut junk = h;
        junk[0] = b'X';
        assert!(check_hello(&junk, t, 1, 4)
            .unwrap_err()
            .contains("not a fabbench"));
    }
}
