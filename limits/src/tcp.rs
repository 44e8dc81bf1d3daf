//! A plain TCP ping-pong of 64 B over loopback between two processes pinned to two CPUs, with
//! TCP_NODELAY: the floor under fabbench's tcp fabric on one host. Two variants on one
//! connection, one after the other: both ends block in read, so every message wakes a
//! sleeping process; then both ends spin on a non-blocking read, so none sleeps. The gap
//! between the two is the cost of a wake-up. Each sample is one round trip; one way is half.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use bench_core::measure::{Metric, Point, PointKey};

use crate::process::{spawn, Child, Pinned, CALL_FAILED, GAVE_UP};
use crate::wait::{Spin, PEER_TIMEOUT};
use crate::LimitsError;

/// The suites the two variants are recorded under, each its own series (see
/// `cacheline::SUITE_ONE`).
pub const SUITE_BLOCK: &str = "limits_tcp_block";
pub const SUITE_SPIN: &str = "limits_tcp_spin";
/// The message size.
pub const MESSAGE: usize = 64;
/// The point parameter that tells the variants apart.
pub const PARAM: &str = "wait";

/// Round trips per variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub blocking: usize,
    pub spinning: usize,
    pub warmup: usize,
}

/// How each end waits for the next message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    Block,
    Spin,
}

impl Wait {
    /// The point parameter's value.
    pub fn word(self) -> &'static str {
        match self {
            Wait::Block => "block",
            Wait::Spin => "spin",
        }
    }
}

/// Both variants, this process on `cpus.0` and its peer on `cpus.1`.
pub fn measure(cpus: (usize, usize), c: Counts) -> Result<Vec<Point>, LimitsError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(LimitsError::io("listening on loopback"))?;
    let addr = listener
        .local_addr()
        .map_err(LimitsError::io("the listener's address"))?;
    let _pinned = Pinned::to(cpus.0)?;
    let phases = [
        (Wait::Block, c.warmup + c.blocking),
        (Wait::Spin, c.warmup + c.spinning),
    ];
    let mut child = spawn("TCP peer", cpus.1, || match echo(addr, &phases) {
        Ok(()) => 0,
        Err(e) if is_timeout(&e) => GAVE_UP,
        Err(_) => CALL_FAILED,
    })?;
    let mut stream = accept(&listener, &mut child)?;
    stream
        .set_nodelay(true)
        .and_then(|()| stream.set_read_timeout(Some(PEER_TIMEOUT)))
        .and_then(|()| stream.set_write_timeout(Some(PEER_TIMEOUT)))
        .map_err(LimitsError::io("setting up the accepted connection"))?;
    let mut points = Vec::new();
    for (wait, count) in [(Wait::Block, c.blocking), (Wait::Spin, c.spinning)] {
        stream
            .set_nonblocking(wait == Wait::Spin)
            .map_err(LimitsError::io("switching the connection's blocking mode"))?;
        let stage = format!("TCP round trips ({} on read)", wait.word());
        let mut message = [0u8; MESSAGE];
        let mut samples = Vec::with_capacity(count);
        for n in 0..c.warmup + count {
            message[0] = n as u8;
            let start = Instant::now();
            let sent = send(&mut stream, &message, wait);
            let got = sent.and_then(|()| receive(&mut stream, &mut message, wait));
            let ns = start.elapsed().as_nanos() as u64;
            match got {
                Ok(()) => {}
                Err(e) if is_timeout(&e) => return Err(child.timeout(&stage, PEER_TIMEOUT)),
                Err(e) => return Err(LimitsError::io(stage)(e)),
            }
            if message[0] != n as u8 {
                return Err(LimitsError::Wrong(format!(
                    "the TCP peer answered round trip {n} with message {}",
                    message[0]
                )));
            }
            if n >= c.warmup {
                samples.push(ns.max(1));
            }
        }
        points.push(Point {
            key: PointKey {
                size: Some(MESSAGE as u64),
                params: [(PARAM.to_string(), wait.word().to_string())].into(),
            },
            metrics: vec![Metric::latency_us(2.0)],
            samples_ns: samples,
            validated: None,
            batches: Vec::new(),
            split: None,
            warmup: Some(c.warmup as u64),
        });
    }
    drop(stream);
    child.finish("the TCP ping-pong")?;
    Ok(points)
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Accepts the peer's connection, waiting at most [`PEER_TIMEOUT`].
fn accept(listener: &TcpListener, child: &mut Child) -> Result<TcpStream, LimitsError> {
    listener
        .set_nonblocking(true)
        .map_err(LimitsError::io("the listener"))?;
    let start = Instant::now();
    loop {
        match listener.accept() {
            Ok((stream, _)) => return Ok(stream),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(LimitsError::io("accepting the TCP peer")(e)),
        }
        if start.elapsed() > PEER_TIMEOUT {
            return Err(child.timeout("its TCP connection", start.elapsed()));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The peer: connects, then answers every message of each phase with the message itself.
fn echo(addr: SocketAddr, phases: &[(Wait, usize)]) -> std::io::Result<()> {
    let mut stream = TcpStream::connect_timeout(&addr, PEER_TIMEOUT)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(PEER_TIMEOUT))?;
    stream.set_write_timeout(Some(PEER_TIMEOUT))?;
    let mut message = [0u8; MESSAGE];
    for &(wait, count) in phases {
        stream.set_nonblocking(wait == Wait::Spin)?;
        for _ in 0..count {
            receive(&mut stream, &mut message, wait)?;
            send(&mut stream, &message, wait)?;
        }
    }
    Ok(())
}

/// Reads exactly `buf.len()` bytes: blocking (bounded by the socket's read timeout), or
/// spinning on a non-blocking socket (bounded by [`PEER_TIMEOUT`]).
fn receive(stream: &mut TcpStream, buf: &mut [u8], wait: Wait) -> std::io::Result<()> {
    whole(buf.len(), wait, ErrorKind::UnexpectedEof, |done| {
        stream.read(&mut buf[done..])
    })
}

/// Writes all of `buf`; on a non-blocking socket a full buffer is spun on, bounded likewise.
fn send(stream: &mut TcpStream, buf: &[u8], wait: Wait) -> std::io::Result<()> {
    whole(buf.len(), wait, ErrorKind::WriteZero, |done| {
        stream.write(&buf[done..])
    })
}

/// Repeats `io(bytes done so far)` until `len` bytes are done: a return of 0 is the error
/// `ended`, WouldBlock is spun on (bounded by [`PEER_TIMEOUT`]) when spinning.
fn whole(
    len: usize,
    wait: Wait,
    ended: ErrorKind,
    mut io: impl FnMut(usize) -> std::io::Result<usize>,
) -> std::io::Result<()> {
    let mut done = 0;
    let mut spin = Spin::new(PEER_TIMEOUT);
    while done < len {
        match io(done) {
            Ok(0) => return Err(ended.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock && wait == Wait::Spin => {
                if !spin.turn() {
                    return Err(ErrorKind::TimedOut.into());
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
