//! Setting up the tcp wire's connections: the address to listen on, the hello that opens
//! each connection (magic, job token, rank, job size), dialling every lower rank and accepting
//! every higher one, refusing (and counting) connections that do not belong to the job.
//!
//! Anyone who can reach the listener can connect, so greetings are read side by side (a
//! silent connection does not hold up the ranks behind it), each within [`GREETING_TIME`] for
//! the whole hello, at most [`MAX_PENDING`] at once (more are closed at once), and the log
//! says so for the first [`SHOWN_REFUSALS`] refusals, then counts them.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use bench_core::bootstrap::{random_hex, Bootstrap};
use bench_core::clock::RealClock;
use bench_core::tunables::Settings;

use super::sockopt::Buffers;
use super::wire::{Peer, TcpWire};
use super::{CONNECT_TIMEOUT, IFACE, RCVBUF, SNDBUF};
use crate::error::{Result, TransportError};
use crate::fabric::TIMEOUT;

const MAGIC: &[u8; 8] = b"FABTCP01";
const HELLO_LEN: usize = 8 + 32 + 4 + 4;
/// Time for a connection's whole hello, from accept.
const GREETING_TIME: Duration = Duration::from_secs(2);
/// Connections whose hello is awaited at once.
const MAX_PENDING: usize = 128;
/// Refusals logged one by one; the rest are counted.
const SHOWN_REFUSALS: u64 = 10;
/// Connections accepted between two reads of the pending greetings.
const ACCEPT_SLICE: usize = 16;

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
pub(super) fn named_ip(spec: &str) -> std::result::Result<IpAddr, String> {
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
/// The first bytes on a connection: magic, the job token zero-padded to 32 bytes, the
/// connecting rank and the job size as u32 in network order. Public for the fuzz target.
pub fn hello(token: &str, rank: usize, size: usize) -> [u8; HELLO_LEN] {
    let mut h = [0u8; HELLO_LEN];
    h[..8].copy_from_slice(MAGIC);
    let t = token.as_bytes();
    h[8..8 + t.len().min(32)].copy_from_slice(&t[..t.len().min(32)]);
    h[40..44].copy_from_slice(&(rank as u32).to_be_bytes());
    h[44..48].copy_from_slice(&(size as u32).to_be_bytes());
    h
}

/// Checks a hello: the rank it claims, or why it is refused.
pub(super) fn check_hello(
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

/// [`check_hello`] on bytes as received (any length): what a listener makes of a peer's
/// first bytes. Public for the fuzz target.
pub fn decode_hello(
    bytes: &[u8],
    token: &str,
    me: usize,
    size: usize,
) -> std::result::Result<usize, String> {
    let h: &[u8; HELLO_LEN] = bytes
        .try_into()
        .map_err(|_| format!("a hello is {HELLO_LEN} bytes, not {}", bytes.len()))?;
    check_hello(h, token, me, size)
}

/// A connection whose hello is being read.
struct Greeting {
    sock: TcpStream,
    from: SocketAddr,
    got: Vec<u8>,
    until: Instant,
}

/// What became of a greeting after a read.
enum Greeted {
    Waiting,
    Rank(usize),
    Refused(String),
}

impl Greeting {
    fn new(sock: TcpStream, from: SocketAddr) -> Greeting {
        Greeting {
            sock,
            from,
            got: Vec::with_capacity(HELLO_LEN),
            until: Instant::now() + GREETING_TIME,
        }
    }

    /// Reads what has arrived (never past the hello) and decides if it can.
    fn poll(&mut self, token: &str, me: usize, size: usize) -> Greeted {
        let mut buf = [0u8; HELLO_LEN];
        let want = HELLO_LEN - self.got.len();
        match (&self.sock).read(&mut buf[..want]) {
            Ok(0) => return Greeted::Refused("closed before its hello".into()),
            Ok(n) => self.got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Greeted::Refused(format!("no hello: {e}")),
        }
        if self.got.len() == HELLO_LEN {
            return match decode_hello(&self.got, token, me, size) {
                Ok(r) => Greeted::Rank(r),
                Err(why) => Greeted::Refused(why),
            };
        }
        if Instant::now() >= self.until {
            return Greeted::Refused(format!(
                "no whole hello within {}",
                humantime::format_duration(GREETING_TIME)
            ));
        }
        Greeted::Waiting
    }

    /// Answers a good hello; the socket is then the peer's.
    fn accept(self) -> std::result::Result<Peer, String> {
        let mut s = &self.sock;
        s.set_nonblocking(false).map_err(|e| e.to_string())?;
        s.set_write_timeout(Some(GREETING_TIME))
            .map_err(|e| e.to_string())?;
        s.write_all(b"K").map_err(|e| e.to_string())?;
        s.set_write_timeout(None).map_err(|e| e.to_string())?;
        Ok(Peer::new(self.sock, self.from))
    }
}

/// The log of refused connections: one line each for the first [`SHOWN_REFUSALS`], then a
/// count.
#[derive(Default)]
struct Refusals {
    count: u64,
}

impl Refusals {
    fn note(&mut self, from: SocketAddr, why: &str) {
        self.count += 1;
        if self.count <= SHOWN_REFUSALS {
            tracing::warn!("tcp: refused a connection from {from}: {why}");
        }
        if self.count == SHOWN_REFUSALS {
            tracing::warn!("tcp: further refused connections are counted, not shown");
        }
    }
}
impl TcpWire {
    pub fn connect(boot: &dyn Bootstrap, s: &Settings) -> Result<TcpWire> {
        let rank = boot.rank();
        let size = boot.size();
        let timeout = s.get(TIMEOUT);
        let connect_timeout = s.get(CONNECT_TIMEOUT);
        let ip = listen_ip(s.get(IFACE), boot)?;
        let bufs = Buffers {
            snd: s.get(SNDBUF) as usize,
            rcv: s.get(RCVBUF) as usize,
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
        let mut refusals = Refusals::default();
        let mut greetings: Vec<Greeting> = Vec::new();
        let deadline = Instant::now() + connect_timeout;
        listener
            .set_nonblocking(true)
            .map_err(|e| TransportError::Setup(format!("tcp: {e}")))?;
        while peers[rank + 1..].iter().any(Option::is_none) {
            let mut idle = true;
            // A burst is taken a slice at a time, with the greetings read in between: garbage
            // is refused (and its place freed) before the next slice is held against the cap.
            for _ in 0..ACCEPT_SLICE {
                match listener.accept() {
                    Ok((sock, from)) => {
                        idle = false;
                        if greetings.len() >= MAX_PENDING {
                            refusals.note(
                                from,
                                &format!("{MAX_PENDING} connections are already waiting to say hello; closed at once"),
                            );
                        } else if let Err(e) = sock.set_nonblocking(true) {
                            refusals.note(from, &e.to_string());
                        } else {
                            greetings.push(Greeting::new(sock, from));
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    // One connection that failed between arriving and being accepted (reset)
                    // is that connection's problem, not the listener's.
                    Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => {}
                    Err(e) => {
                        return Err(TransportError::Setup(format!(
                            "tcp: accept on {local}: {e}"
                        )))
                    }
                }
            }
            let mut i = 0;
            while i < greetings.len() {
                match greetings[i].poll(&token, rank, size) {
                    Greeted::Waiting => i += 1,
                    outcome => {
                        idle = false;
                        let g = greetings.swap_remove(i);
                        let from = g.from;
                        match outcome {
                            Greeted::Rank(r) if peers[r].is_none() => match g.accept() {
                                Ok(p) => peers[r] = Some(p),
                                Err(why) => refusals.note(from, &why),
                            },
                            Greeted::Rank(r) => refusals
                                .note(from, &format!("a second connection claiming rank {r}")),
                            Greeted::Refused(why) => refusals.note(from, &why),
                            Greeted::Waiting => unreachable!(),
                        }
                    }
                }
            }
            if !peers[rank + 1..].iter().any(Option::is_none) {
                break;
            }
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
            if idle {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        if refusals.count > SHOWN_REFUSALS {
            tracing::warn!("tcp: refused {} connections in all", refusals.count);
        }
        let rejected = refusals.count;
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
                    // Closed without an answer: the peer had as many connections waiting to
                    // say hello as it takes (strangers, perhaps) and closed ours at once.
                    Err(e)
                        if start.elapsed() < timeout
                            && matches!(
                                e.kind(),
                                io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset
                            ) =>
                    {
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    }
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
