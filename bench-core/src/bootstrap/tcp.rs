//! The bootstrap service over TCP: a line protocol the frontend serves and ranks speak.
//!
//! Every line is `VERB arg...` with arguments escaped by [`super::escape`]. The server opens a
//! connection with `NONCE hex`; the rank answers `HELLO rank proof` (see [`super::auth`]: an
//! HMAC of the nonce under the job's secret, which never travels). A wrong proof, a rank that is
//! already connected, or anything else is refused, reported and closed. Requests are
//! `PUT key value` (reply `OK`), `GET key timeout_ms` (`VAL value` or `ERR reason`),
//! `FENCE name timeout_ms` (`OK` or `ERR reason`); `STAGE text` and `EVENT json` are one-way.
//!
//! A stranger can reach the port, so what it can cost is bounded ([`Limits`]): greetings are
//! read concurrently, each within a deadline for the whole line and a few KiB, and at most
//! `pending` connections wait to be authenticated (more are closed at once). Refusals are
//! reported one by one only up to [`SHOWN_REFUSALS`]; the rest are counted.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::auth;
use super::line::{read_line, LineError};
use super::{escape, unescape, Bootstrap, BootstrapError};

/// What the frontend learns from ranks through the server.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEvent {
    Hello { rank: usize },
    Stage { rank: usize, text: String },
    Event { rank: usize, json: String },
    Closed { rank: usize },
    Rejected { peer: String, reason: String },
}

/// How many refusals are reported one by one; the rest are only counted
/// ([`Server::refused`]), so a flood cannot fill the terminal.
pub const SHOWN_REFUSALS: u64 = 10;

/// What an unauthenticated peer may cost the server.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The longest greeting line (a HELLO is about 80 bytes).
    pub greeting_line: usize,
    /// The longest line after authentication (EVENT lines carry a point's samples).
    pub line: usize,
    /// Time for a connection's whole greeting, from accept to the end of its HELLO.
    pub greeting_deadline: Duration,
    /// Connections waiting to be authenticated at once; more are closed at once.
    pub pending: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            greeting_line: 4 << 10,
            line: 64 << 20,
            greeting_deadline: Duration::from_secs(5),
            pending: 128,
        }
    }
}

struct State {
    kv: HashMap<String, String>,
    /// fence name -> (generation, ranks arrived in this generation)
    fences: HashMap<String, (u64, BTreeSet<usize>)>,
    /// Ranks that have been accepted: each only once in the job's life.
    joined: BTreeSet<usize>,
}

struct Shared {
    size: usize,
    secret: String,
    job: String,
    limits: Limits,
    state: Mutex<State>,
    changed: Condvar,
    events: Mutex<mpsc::Sender<ServerEvent>>,
    closed: AtomicBool,
    pending: AtomicUsize,
    refused: AtomicU64,
}

/// The frontend's bootstrap server. Dropping it stops accepting connections.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    events: mpsc::Receiver<ServerEvent>,
}

impl Server {
    /// Listens on `bind` (e.g. "127.0.0.1:0") for job `job` of `size` ranks, whose ranks
    /// prove they hold `secret`.
    pub fn start(
        bind: &str,
        size: usize,
        secret: &str,
        job: &str,
    ) -> Result<Server, BootstrapError> {
        Server::start_with(bind, size, secret, job, Limits::default())
    }

    /// [`Server::start`] with other limits.
    pub fn start_with(
        bind: &str,
        size: usize,
        secret: &str,
        job: &str,
        limits: Limits,
    ) -> Result<Server, BootstrapError> {
        let listener = TcpListener::bind(bind).map_err(|e| BootstrapError::Server {
            addr: bind.to_string(),
            reason: format!("cannot listen: {e}"),
        })?;
        let addr = listener.local_addr().map_err(|e| BootstrapError::Server {
            addr: bind.to_string(),
            reason: e.to_string(),
        })?;
        let (tx, rx) = mpsc::channel();
        let shared = Arc::new(Shared {
            size,
            secret: secret.to_string(),
            job: job.to_string(),
            limits,
            state: Mutex::new(State {
                kv: HashMap::new(),
                fences: HashMap::new(),
                joined: BTreeSet::new(),
            }),
            changed: Condvar::new(),
            events: Mutex::new(tx),
            closed: AtomicBool::new(false),
            pending: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
        });
        let acceptor = shared.clone();
        thread::Builder::new()
            .name("bootstrap-accept".into())
            .spawn(move || accept_loop(listener, acceptor))
            .expect("spawn bootstrap acceptor");
        Ok(Server {
            addr,
            shared,
            events: rx,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address ranks are given, `tcp://HOST:PORT`.
    pub fn url(&self) -> String {
        format!("tcp://{}", self.addr)
    }

    /// The next event, waiting at most `timeout`.
    pub fn next_event(&self, timeout: Duration) -> Option<ServerEvent> {
        self.events.recv_timeout(timeout).ok()
    }

    /// Connections refused so far, including those past [`SHOWN_REFUSALS`] not reported.
    pub fn refused(&self) -> u64 {
        self.shared.refused.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        self.shared.changed.notify_all();
        // Wake the blocking accept so its thread sees the flag and ends.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// Holds one of the `pending` places until the greeting is over, however it ends.
struct Pending<'a>(&'a AtomicUsize);

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.closed.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else { continue };
        // Each greeting has its own thread (a silent peer must not hold up the others), so
        // their number is what bounds the threads strangers can make us hold.
        if shared.pending.fetch_add(1, Ordering::SeqCst) >= shared.limits.pending {
            shared.pending.fetch_sub(1, Ordering::SeqCst);
            let peer = peer_of(&stream);
            drop(stream);
            refuse(
                &shared,
                peer,
                format!(
                    "{} connections are already waiting to authenticate; closed at once",
                    shared.limits.pending
                ),
            );
            continue;
        }
        let s = shared.clone();
        let spawned = thread::Builder::new()
            .name("bootstrap-conn".into())
            .stack_size(256 << 10)
            .spawn(move || serve(stream, s));
        if spawned.is_err() {
            shared.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

fn emit(shared: &Shared, ev: ServerEvent) {
    let _ = shared.events.lock().unwrap().send(ev);
}

/// Counts a refusal and reports it if it is among the first [`SHOWN_REFUSALS`].
fn refuse(shared: &Shared, peer: String, reason: String) {
    if shared.refused.fetch_add(1, Ordering::SeqCst) < SHOWN_REFUSALS {
        emit(shared, ServerEvent::Rejected { peer, reason });
    }
}

fn peer_of(stream: &TcpStream) -> String {
    stream
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The greeting: a nonce out, a proof back. The rank on success; `None` once the connection
/// has been refused (and reported, unless it closed without a word).
fn authenticate(
    reader: &mut BufReader<TcpStream>,
    writer: &mut TcpStream,
    shared: &Shared,
    peer: &str,
) -> Option<usize> {
    let limits = &shared.limits;
    let deadline = Instant::now() + limits.greeting_deadline;
    let nonce = auth::nonce();
    let _ = writer.set_write_timeout(Some(limits.greeting_deadline));
    if writeln!(writer, "NONCE {nonce}").is_err() {
        return None;
    }
    let mut refused = |reply: &str, reason: String| {
        let _ = writeln!(writer, "ERR {reply}");
        refuse(shared, peer.to_string(), reason);
        None
    };
    let line = match read_line(reader, limits.greeting_line, Some(deadline)) {
        Ok(l) => l,
        // A port scan or a health check: nothing to report.
        Err(LineError::Closed) => return None,
        Err(LineError::Deadline) => {
            return refused(
                "timeout",
                format!(
                    "no greeting within {}",
                    humantime::format_duration(limits.greeting_deadline)
                ),
            )
        }
        Err(e) => return refused("bad greeting", format!("before authenticating, {e}")),
    };
    let Some((rank, proof)) = auth::parse_hello(&line) else {
        return refused(
            "bad greeting",
            format!(
                "sent a {}-byte line that is not `HELLO rank proof`",
                line.len()
            ),
        );
    };
    if !auth::verify(&shared.secret, &nonce, rank, &shared.job, proof) {
        return refused(
            "bad proof",
            format!("claimed rank {rank} without proof of this job's secret (an impostor, or a rank of another job or with another key)"),
        );
    }
    if rank >= shared.size {
        return refused(
            "bad rank",
            format!("rank {rank} out of range (the job has {})", shared.size),
        );
    }
    if !shared.state.lock().unwrap().joined.insert(rank) {
        return refused(
            "rank already connected",
            format!("rank {rank} is already connected; a second HELLO for it is refused"),
        );
    }
    Some(rank)
}

fn serve(stream: TcpStream, shared: Arc<Shared>) {
    let pending = Pending(&shared.pending);
    let peer = peer_of(&stream);
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let Some(rank) = authenticate(&mut reader, &mut writer, &shared, &peer) else {
        return;
    };
    drop(pending);
    let _ = reader.get_ref().set_read_timeout(None);
    let _ = writer.set_write_timeout(None);
    if writeln!(writer, "OK").is_err() {
        return;
    }
    emit(&shared, ServerEvent::Hello { rank });
    loop {
        let line = match read_line(&mut reader, shared.limits.line, None) {
            Ok(l) => l,
            Err(LineError::Closed) => break,
            Err(e) => {
                // An authenticated rank is not an attacker; a broken one is reported.
                refuse(&shared, peer.clone(), format!("rank {rank} {e}"));
                break;
            }
        };
        let reply = match Request::parse(&line) {
            Request::Put { key, value } => {
                let mut st = shared.state.lock().unwrap();
                st.kv.insert(key, value);
                shared.changed.notify_all();
                Some("OK".to_string())
            }
            Request::Get { key, wait } => Some(get(&shared, &key, wait)),
            Request::Fence { name, wait } => Some(fence(&shared, rank, &name, wait)),
            Request::Stage(text) => {
                emit(&shared, ServerEvent::Stage { rank, text });
                None
            }
            Request::Event(json) => {
                emit(&shared, ServerEvent::Event { rank, json });
                None
            }
            Request::Unknown(verb) => Some(format!("ERR unknown request {}", escape(&verb))),
        };
        if let Some(r) = reply {
            if writeln!(writer, "{r}").is_err() {
                break;
            }
        }
    }
    emit(&shared, ServerEvent::Closed { rank });
}

/// The longest wait a request may ask for. A peer's number is capped here rather than trusted:
/// `Instant::now() + u64::MAX ms` overflows and would panic the connection's thread.
pub const MAX_WAIT: Duration = Duration::from_secs(7 * 24 * 3600);

fn parse_ms(text: &str) -> Duration {
    Duration::from_millis(text.trim().parse().unwrap_or(0)).min(MAX_WAIT)
}

/// One request line after the greeting, decoded (arguments unescaped). Every line decodes to
/// something: an unknown verb is answered with an error, and a missing or unreadable timeout
/// is no wait at all.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Put {
        key: String,
        value: String,
    },
    /// `wait` is at most [`MAX_WAIT`].
    Get {
        key: String,
        wait: Duration,
    },
    /// `wait` is at most [`MAX_WAIT`].
    Fence {
        name: String,
        wait: Duration,
    },
    Stage(String),
    /// The JSON text as sent (the collector decodes it).
    Event(String),
    Unknown(String),
}

impl Request {
    pub fn parse(line: &str) -> Request {
        let trimmed = line.trim_end_matches(['\n', '\r']);
        let (verb, rest) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
        match verb {
            "PUT" => {
                let (k, v) = rest.split_once(' ').unwrap_or((rest, ""));
                Request::Put {
                    key: unescape(k),
                    value: unescape(v),
                }
            }
            "GET" => {
                let (k, ms) = rest.split_once(' ').unwrap_or((rest, "0"));
                Request::Get {
                    key: unescape(k),
                    wait: parse_ms(ms),
                }
            }
            "FENCE" => {
                let (name, ms) = rest.split_once(' ').unwrap_or((rest, "0"));
                Request::Fence {
                    name: unescape(name),
                    wait: parse_ms(ms),
                }
            }
            "STAGE" => Request::Stage(unescape(rest)),
            "EVENT" => Request::Event(rest.to_string()),
            other => Request::Unknown(other.to_string()),
        }
    }
}

fn get(shared: &Shared, key: &str, timeout: Duration) -> String {
    let deadline = Instant::now() + timeout;
    let mut st = shared.state.lock().unwrap();
    loop {
        if let Some(v) = st.kv.get(key) {
            return format!("VAL {}", escape(v));
        }
        let now = Instant::now();
        if now >= deadline || shared.closed.load(Ordering::SeqCst) {
            return "ERR timeout".to_string();
        }
        st = shared.changed.wait_timeout(st, deadline - now).unwrap().0;
    }
}

fn fence(shared: &Shared, rank: usize, name: &str, timeout: Duration) -> String {
    let deadline = Instant::now() + timeout;
    let mut st = shared.state.lock().unwrap();
    let entry = st
        .fences
        .entry(name.to_string())
        .or_insert_with(|| (0, BTreeSet::new()));
    let my_gen = entry.0;
    entry.1.insert(rank);
    if entry.1.len() == shared.size {
        entry.0 += 1;
        entry.1.clear();
        shared.changed.notify_all();
        return "OK".to_string();
    }
    loop {
        let (gen, arrived) = &st.fences[name];
        if *gen != my_gen {
            return "OK".to_string();
        }
        let now = Instant::now();
        if now >= deadline || shared.closed.load(Ordering::SeqCst) {
            let missing: Vec<String> = (0..shared.size)
                .filter(|r| !arrived.contains(r))
                .map(|r| r.to_string())
                .collect();
            return format!("ERR timeout missing {}", missing.join(","));
        }
        st = shared.changed.wait_timeout(st, deadline - now).unwrap().0;
    }
}

struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

/// A rank's connection to the bootstrap server.
pub struct Client {
    local_ip: Option<std::net::IpAddr>,
    rank: usize,
    size: usize,
    token: String,
    job_id: String,
    addr: String,
    conn: Mutex<Conn>,
}

/// Bounds of one connection attempt to the bootstrap server.
const MIN_ATTEMPT: Duration = Duration::from_millis(10);
const MAX_ATTEMPT: Duration = Duration::from_secs(2);
/// How long a rank waits for the server's greeting and its answer to the HELLO.
const GREETING_WAIT: Duration = Duration::from_secs(10);

impl Client {
    /// Connects to `url` (`tcp://HOST:PORT`) and introduces itself as `rank`, proving it holds
    /// the job's `secret`, retrying for up to `patience` while the server is not listening yet
    /// (rank 0 may start last).
    pub fn connect(
        url: &str,
        rank: usize,
        size: usize,
        secret: &str,
        job_id: &str,
        patience: Duration,
    ) -> Result<Client, BootstrapError> {
        let hostport = url
            .strip_prefix("tcp://")
            .ok_or_else(|| BootstrapError::BadAddress(url.to_string()))?;
        let addrs: Vec<SocketAddr> = hostport
            .to_socket_addrs()
            .map_err(|_| BootstrapError::BadAddress(url.to_string()))?
            .collect();
        let server_err = |reason: String| BootstrapError::Server {
            addr: hostport.to_string(),
            reason,
        };
        let start = Instant::now();
        // A server at its cap of pending greetings closes new connections before greeting
        // them: like one not listening yet, that is worth another try within the patience.
        let (conn, local_ip, nonce) = loop {
            let attempt = addrs.iter().find_map(|a| {
                let left = patience.saturating_sub(start.elapsed());
                TcpStream::connect_timeout(a, left.clamp(MIN_ATTEMPT, MAX_ATTEMPT)).ok()
            });
            let greeted = match attempt {
                Some(stream) => Some(greeting(stream).map_err(&server_err)?),
                None => None,
            };
            match greeted {
                Some(Some(g)) => break g,
                _ if start.elapsed() < patience => thread::sleep(Duration::from_millis(50)),
                _ => {
                    return Err(server_err(format!(
                        "unreachable for {} (stage: bootstrap connect, rank {rank})",
                        humantime::format_duration(patience)
                    )))
                }
            }
        };
        let mut conn = conn;
        let reply = conn
            .request(
                &format!("HELLO {rank} {}", auth::proof(secret, &nonce, rank, job_id)),
                GREETING_WAIT,
            )
            .map_err(server_err)?;
        if reply != "OK" {
            return Err(server_err(format!("refused this rank: {reply}")));
        }
        Ok(Client {
            local_ip,
            rank,
            size,
            token: secret.to_string(),
            job_id: job_id.to_string(),
            addr: hostport.to_string(),
            conn: Mutex::new(conn),
        })
    }

    fn server_err(&self, reason: String) -> BootstrapError {
        BootstrapError::Server {
            addr: self.addr.clone(),
            reason,
        }
    }
}

/// The server's greeting on a fresh connection: the connection, its local address and the
/// nonce; `None` if the server closed it without a word (it had too many pending).
#[allow(clippy::type_complexity)]
fn greeting(stream: TcpStream) -> Result<Option<(Conn, Option<std::net::IpAddr>, String)>, String> {
    let _ = stream.set_nodelay(true);
    let local_ip = stream.local_addr().ok().map(|a| a.ip());
    let writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let line = match read_line(
        &mut reader,
        Limits::default().greeting_line,
        Some(Instant::now() + GREETING_WAIT),
    ) {
        Ok(l) => l,
        Err(LineError::Closed) => return Ok(None),
        Err(LineError::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionReset => {
            return Ok(None)
        }
        Err(e) => return Err(format!("no greeting: the server {e}")),
    };
    let nonce = auth::parse_nonce(&line)
        .ok_or("is not a fabbench bootstrap (or an older one): it sent no NONCE greeting")?
        .to_string();
    Ok(Some((Conn { reader, writer }, local_ip, nonce)))
}

impl Conn {
    fn send(&mut self, line: &str) -> Result<(), String> {
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .map_err(|e| format!("connection lost: {e}"))
    }

    fn request(&mut self, line: &str, wait: Duration) -> Result<String, String> {
        self.send(line)?;
        // The server answers within `wait`; allow slack for a loaded machine, never forever.
        let _ = self
            .reader
            .get_ref()
            .set_read_timeout(Some(wait + Duration::from_secs(5)));
        let mut reply = String::new();
        match self.reader.read_line(&mut reply) {
            Ok(0) => Err("closed the connection (the frontend has gone)".into()),
            Ok(_) => Ok(reply.trim_end().to_string()),
            Err(e) => Err(format!("no reply: {e}")),
        }
    }
}

impl Bootstrap for Client {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn token(&self) -> &str {
        &self.token
    }
    fn job_id(&self) -> &str {
        &self.job_id
    }

    fn put(&self, key: &str, value: &str) -> Result<(), BootstrapError> {
        let mut c = self.conn.lock().unwrap();
        let reply = c
            .request(
                &format!("PUT {} {}", escape(key), escape(value)),
                Duration::from_secs(10),
            )
            .map_err(|r| self.server_err(r))?;
        if reply == "OK" {
            Ok(())
        } else {
            Err(self.server_err(format!("PUT {key}: {reply}")))
        }
    }

    fn get(&self, key: &str, timeout: Duration) -> Result<String, BootstrapError> {
        let mut c = self.conn.lock().unwrap();
        let reply = c
            .request(
                &format!("GET {} {}", escape(key), timeout.as_millis()),
                timeout,
            )
            .map_err(|r| self.server_err(r))?;
        match reply.strip_prefix("VAL ") {
            Some(v) => Ok(unescape(v)),
            None if reply == "VAL" => Ok(String::new()),
            None => Err(BootstrapError::Timeout {
                what: format!("key '{key}'"),
                after: timeout,
            }),
        }
    }

    fn fence(&self, name: &str, timeout: Duration) -> Result<(), BootstrapError> {
        let mut c = self.conn.lock().unwrap();
        let reply = c
            .request(
                &format!("FENCE {} {}", escape(name), timeout.as_millis()),
                timeout,
            )
            .map_err(|r| self.server_err(r))?;
        if reply == "OK" {
            return Ok(());
        }
        let missing = reply
            .strip_prefix("ERR timeout missing ")
            .map(|m| format!(" (rank {m} never arrived)"))
            .unwrap_or_default();
        Err(BootstrapError::Timeout {
            what: format!("fence '{name}'{missing}"),
            after: timeout,
        })
    }

    fn report_stage(&self, stage: &str) {
        let mut c = self.conn.lock().unwrap();
        let _ = c.send(&format!("STAGE {}", escape(stage)));
    }

    fn local_ip(&self) -> Option<std::net::IpAddr> {
        self.local_ip
    }

    fn send_event(&self, json: &str) -> Result<(), BootstrapError> {
        debug_assert!(!json.contains('\n'), "events are one line of JSON");
        let mut c = self.conn.lock().unwrap();
        c.send(&format!("EVENT {json}"))
            .map_err(|r| self.server_err(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECS10: Duration = Duration::from_secs(10);

    fn pair(size: usize) -> (Server, Vec<Client>) {
        let server = Server::start("127.0.0.1:0", size, "secret", "job").unwrap();
        let clients = (0..size)
            .map(|r| Client::connect(&server.url(), r, size, "secret", "job", SECS10).unwrap())
            .collect();
        (server, clients)
    }

    #[test]
    fn put_get_and_waiting_get() {
        let (_server, clients) = pair(2);
        clients[0].put("a key", "v a l\n").unwrap();
        assert_eq!(
            clients[1].get("a key", Duration::from_secs(1)).unwrap(),
            "v a l\n"
        );
        let c1 = &clients[1];
        thread::scope(|s| {
            s.spawn(|| {
                thread::sleep(Duration::from_millis(50));
                clients[0].put("late", "x").unwrap();
            });
            assert_eq!(c1.get("late", Duration::from_secs(5)).unwrap(), "x");
        });
    }

    /// The protocol is text lines (numbers in decimal, values escaped), so it carries no
    /// byte order; these are its exact bytes as a rank sends and the server answers them.
    #[test]
    fn the_protocol_has_its_golden_lines() {
        let server = Server::start("127.0.0.1:0", 2, "secret", "job").unwrap();
        let sock = TcpStream::connect(server.addr()).unwrap();
        let mut w = sock.try_clone().unwrap();
        let mut r = BufReader::new(sock);
        let mut greeting = String::new();
        r.read_line(&mut greeting).unwrap();
        let nonce = greeting.strip_prefix("NONCE ").unwrap().trim_end();
        assert_eq!(nonce.len(), 32, "{greeting}");
        let proof = auth::proof("secret", nonce, 1, "job");
        let mut say = |line: &[u8]| {
            w.write_all(line).unwrap();
            let mut reply = String::new();
            r.read_line(&mut reply).unwrap();
            reply
        };
        assert_eq!(say(format!("HELLO 1 {proof}\n").as_bytes()), "OK\n");
        assert_eq!(say(b"PUT tcp/1/addr 10.0.0.2:4711\n"), "OK\n");
        assert_eq!(say(b"PUT a%20key v%0Aal\n"), "OK\n");
        assert_eq!(say(b"GET a%20key 1000\n"), "VAL v%0Aal\n");
        assert_eq!(say(b"GET tcp/1/addr 0\n"), "VAL 10.0.0.2:4711\n");
        assert_eq!(say(b"GET missing 10\n"), "ERR timeout\n");
        assert_eq!(say(b"NOPE\n"), "ERR unknown request NOPE\n");
    }

    #[test]
    fn get_times_out_naming_the_key() {
        let (_server, clients) = pair(1);
        let err = clients[0]
            .get("never", Duration::from_millis(50))
            .unwrap_err();
        assert!(err.to_string().contains("key 'never'"), "{err}");
    }

    #[test]
    fn fence_releases_all_and_can_be_reused() {
        let (_server, clients) = pair(3);
        for _round in 0..2 {
            thread::scope(|s| {
                for c in &clients {
                    s.spawn(move || c.fence("f", Duration::from_secs(5)).unwrap());
                }
            });
        }
    }

    #[test]
    fn fence_timeout_names_missing_ranks() {
        let (_server, clients) = pair(3);
        let err = thread::scope(|s| {
            let h = s.spawn(|| clients[0].fence("g", Duration::from_millis(100)));
            clients[2]
                .fence("g", Duration::from_millis(100))
                .unwrap_err();
            h.join().unwrap().unwrap_err()
        });
        assert!(err.to_string().contains("rank 1 never arrived"), "{err}");
    }

    #[test]
    fn wrong_token_is_refused_and_reported() {
        let server = Server::start("127.0.0.1:0", 2, "secret", "job").unwrap();
        let err = Client::connect(&server.url(), 0, 2, "guess", "job", SECS10)
            .err()
            .expect("refused");
        assert!(err.to_string().contains("refused"), "{err}");
        let ev = server.next_event(Duration::from_secs(2)).unwrap();
        assert!(matches!(ev, ServerEvent::Rejected { .. }), "{ev:?}");
    }

    #[test]
    fn stages_and_events_reach_the_frontend() {
        let (server, clients) = pair(1);
        assert_eq!(
            server.next_event(Duration::from_secs(2)),
            Some(ServerEvent::Hello { rank: 0 })
        );
        clients[0].report_stage("osu_bw size 8");
        clients[0].send_event("{\"k\":1}").unwrap();
        assert_eq!(
            server.next_event(Duration::from_secs(2)),
            Some(ServerEvent::Stage {
                rank: 0,
                text: "osu_bw size 8".into()
            })
        );
        assert_eq!(
            server.next_event(Duration::from_secs(2)),
            Some(ServerEvent::Event {
                rank: 0,
                json: "{\"k\":1}".into()
            })
        );
        drop(clients);
        assert_eq!(
            server.next_event(Duration::from_secs(2)),
            Some(ServerEvent::Closed { rank: 0 })
        );
    }

    #[test]
    fn a_huge_timeout_is_capped_so_the_deadline_can_be_computed() {
        // A peer's u64::MAX milliseconds: the server's `Instant::now() + wait` panicked.
        for line in [
            "GET k 18446744073709551615",
            "FENCE f 18446744073709551615\n",
        ] {
            let wait = match Request::parse(line) {
                Request::Get { wait, .. } | Request::Fence { wait, .. } => wait,
                other => panic!("{other:?}"),
            };
            assert!(Instant::now().checked_add(wait).is_some(), "{line}");
        }
    }

    #[test]
    fn request_lines_decode() {
        assert_eq!(
            Request::parse("PUT a%20key v%0A\n"),
            Request::Put {
                key: "a key".into(),
                value: "v\n".into()
            }
        );
        assert_eq!(
            Request::parse("GET k"),
            Request::Get {
                key: "k".into(),
                wait: Duration::ZERO
            }
        );
        assert_eq!(Request::parse(""), Request::Unknown(String::new()));
    }

    #[test]
    fn bad_addresses_are_reported() {
        assert!(matches!(
            Client::connect("udp://x", 0, 1, "t", "j", SECS10),
            Err(BootstrapError::BadAddress(_))
        ));
    }
}
