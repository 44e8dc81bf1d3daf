//! The bootstrap service over TCP: a line protocol the frontend serves and ranks speak.
//!
//! Every line is `VERB arg...` with arguments escaped by [`super::escape`]. A connection opens
//! with `HELLO rank token`; a wrong token is refused and reported, never served. Requests are
//! `PUT key value` (reply `OK`), `GET key timeout_ms` (`VAL value` or `ERR reason`),
//! `FENCE name timeout_ms` (`OK` or `ERR reason`); `STAGE text` and `EVENT json` are one-way.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

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

struct State {
    kv: HashMap<String, String>,
    /// fence name -> (generation, ranks arrived in this generation)
    fences: HashMap<String, (u64, BTreeSet<usize>)>,
}

struct Shared {
    size: usize,
    token: String,
    state: Mutex<State>,
    changed: Condvar,
    events: Mutex<mpsc::Sender<ServerEvent>>,
    closed: AtomicBool,
}

/// The frontend's bootstrap server. Dropping it stops accepting connections.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    events: mpsc::Receiver<ServerEvent>,
}

impl Server {
    /// Listens on `bind` (e.g. "127.0.0.1:0") for a job of `size` ranks.
    pub fn start(bind: &str, size: usize, token: &str) -> Result<Server, BootstrapError> {
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
            token: token.to_string(),
            state: Mutex::new(State {
                kv: HashMap::new(),
                fences: HashMap::new(),
            }),
            changed: Condvar::new(),
            events: Mutex::new(tx),
            closed: AtomicBool::new(false),
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
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        self.shared.changed.notify_all();
        // Wake the blocking accept so its thread sees the flag and ends.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.closed.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else { continue };
        let s = shared.clone();
        let _ = thread::Builder::new()
            .name("bootstrap-conn".into())
            .spawn(move || serve(stream, s));
    }
}

fn emit(shared: &Shared, ev: ServerEvent) {
    let _ = shared.events.lock().unwrap().send(ev);
}

fn serve(stream: TcpStream, shared: Arc<Shared>) {
    let peer = stream
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "?".into());
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    // The greeting must come promptly; a silent connection is not allowed to hold a thread.
    let _ = reader
        .get_ref()
        .set_read_timeout(Some(Duration::from_secs(10)));
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let rank = match parse_hello(&line) {
        Some((rank, token)) if token == shared.token => match rank.parse::<usize>() {
            Ok(r) if r < shared.size => r,
            _ => {
                let _ = writeln!(writer, "ERR bad rank");
                emit(
                    &shared,
                    ServerEvent::Rejected {
                        peer,
                        reason: format!("rank {rank} out of range"),
                    },
                );
                return;
            }
        },
        _ => {
            let _ = writeln!(writer, "ERR bad token");
            emit(
                &shared,
                ServerEvent::Rejected {
                    peer,
                    reason: "wrong or missing job token".into(),
                },
            );
            return;
        }
    };
    let _ = reader.get_ref().set_read_timeout(None);
    if writeln!(writer, "OK").is_err() {
        return;
    }
    emit(&shared, ServerEvent::Hello { rank });
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
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

/// A connection's greeting, `HELLO rank token`: the rank as sent (the server checks it against
/// the job's size) and the unescaped token; `None` for any other line.
pub fn parse_hello(line: &str) -> Option<(&str, String)> {
    match line.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["HELLO", rank, token] => Some((rank, unescape(token))),
        _ => None,
    }
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

impl Client {
    /// Connects to `url` (`tcp://HOST:PORT`) and introduces itself as `rank`, retrying for up
    /// to `patience` while the server is not listening yet (rank 0 may start last).
    pub fn connect(
        url: &str,
        rank: usize,
        size: usize,
        token: &str,
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
        let stream = loop {
            let attempt = addrs.iter().find_map(|a| {
                let left = patience.saturating_sub(start.elapsed());
                TcpStream::connect_timeout(a, left.clamp(MIN_ATTEMPT, MAX_ATTEMPT)).ok()
            });
            match attempt {
                Some(s) => break s,
                None if start.elapsed() < patience => thread::sleep(Duration::from_millis(50)),
                None => {
                    return Err(server_err(format!(
                        "unreachable for {} (stage: bootstrap connect, rank {rank})",
                        humantime::format_duration(patience)
                    )))
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let local_ip = stream.local_addr().ok().map(|a| a.ip());
        let writer = stream.try_clone().map_err(|e| server_err(e.to_string()))?;
        let mut conn = Conn {
            reader: BufReader::new(stream),
            writer,
        };
        let reply = conn
            .request(
                &format!("HELLO {rank} {}", escape(token)),
                Duration::from_secs(10),
            )
            .map_err(server_err)?;
        if reply != "OK" {
            return Err(server_err(format!("refused this rank: {reply}")));
        }
        Ok(Client {
            local_ip,
            rank,
            size,
            token: token.to_string(),
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
        let server = Server::start("127.0.0.1:0", size, "secret").unwrap();
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
        let server = Server::start("127.0.0.1:0", 2, "secret").unwrap();
        let sock = TcpStream::connect(server.addr()).unwrap();
        let mut w = sock.try_clone().unwrap();
        let mut r = BufReader::new(sock);
        let mut say = |line: &[u8]| {
            w.write_all(line).unwrap();
            let mut reply = String::new();
            r.read_line(&mut reply).unwrap();
            reply
        };
        assert_eq!(say(b"HELLO 1 secret\n"), "OK\n");
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
        let server = Server::start("127.0.0.1:0", 2, "secret").unwrap();
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
        assert_eq!(
            parse_hello("HELLO 3 a%20b\n"),
            Some(("3", "a b".to_string()))
        );
        assert_eq!(parse_hello("HELLO 3"), None);
    }

    #[test]
    fn bad_addresses_are_reported() {
        assert!(matches!(
            Client::connect("udp://x", 0, 1, "t", "j", SECS10),
            Err(BootstrapError::BadAddress(_))
        ));
    }
}
