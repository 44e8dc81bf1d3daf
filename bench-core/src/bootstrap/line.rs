//! Reading one line from a peer with bounds a stranger cannot stretch: a longest line (the
//! bytes held for it never exceed it) and, for a greeting, a deadline for the whole line (not
//! for each read, which a peer sending one byte a second would never hit).

use std::io::{BufRead, BufReader, ErrorKind};
use std::net::TcpStream;
use std::time::Instant;

/// Why no line was read.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error("closed the connection")]
    Closed,
    #[error("closed the connection in the middle of a line")]
    Cut,
    #[error("sent more than {0} bytes without a newline")]
    TooLong(usize),
    #[error("did not send a whole line in time")]
    Deadline,
    #[error("sent a line that is not UTF-8 text")]
    NotUtf8,
    #[error("{0}")]
    Io(std::io::Error),
}

/// Reads one line (without its newline) of at most `max` bytes, by `deadline` if one is given.
pub fn read_line(
    r: &mut BufReader<TcpStream>,
    max: usize,
    deadline: Option<Instant>,
) -> Result<String, LineError> {
    let mut line = Vec::new();
    loop {
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(LineError::Deadline);
            }
            r.get_ref()
                .set_read_timeout(Some(left))
                .map_err(LineError::Io)?;
        }
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if deadline.is_some() {
                    continue; // the loop's top decides whether time is up
                }
                return Err(LineError::Io(e));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(LineError::Io(e)),
        };
        if chunk.is_empty() {
            return Err(if line.is_empty() {
                LineError::Closed
            } else {
                LineError::Cut
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if line.len() + take > max {
            return Err(LineError::TooLong(max));
        }
        line.extend_from_slice(&chunk[..take]);
        r.consume(take + usize::from(done));
        if done {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return String::from_utf8(line).map_err(|_| LineError::NotUtf8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;
    use std::time::Duration;

    /// A connected pair: what the test writes on the first arrives on the second's reader.
    fn pair() -> (TcpStream, BufReader<TcpStream>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let w = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (r, _) = l.accept().unwrap();
        (w, BufReader::new(r))
    }

    #[test]
    fn lines_within_bounds_are_read() {
        let (mut w, mut r) = pair();
        w.write_all(b"HELLO 1 x\r\nsecond\n").unwrap();
        assert_eq!(read_line(&mut r, 16, None).unwrap(), "HELLO 1 x");
        assert_eq!(read_line(&mut r, 16, None).unwrap(), "second");
        drop(w);
        assert!(matches!(
            read_line(&mut r, 16, None),
            Err(LineError::Closed)
        ));
    }

    #[test]
    fn a_long_line_is_cut_at_its_cap() {
        let (mut w, mut r) = pair();
        w.write_all(&[b'a'; 100]).unwrap();
        w.write_all(b"\n").unwrap();
        assert!(matches!(
            read_line(&mut r, 64, None),
            Err(LineError::TooLong(64))
        ));
    }

    #[test]
    fn bytes_that_are_not_text_are_refused() {
        let (mut w, mut r) = pair();
        w.write_all(b"\xff\xfe\n").unwrap();
        assert!(matches!(
            read_line(&mut r, 64, None),
            Err(LineError::NotUtf8)
        ));
    }

    /// A byte every 50 ms never trips a per-read timeout; the whole-line deadline cuts it.
    #[test]
    fn a_trickle_is_cut_at_the_deadline() {
        let (w, mut r) = pair();
        let trickler = std::thread::spawn(move || {
            let mut w = w;
            for _ in 0..40 {
                if w.write_all(b"x").is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let start = Instant::now();
        let got = read_line(&mut r, 4096, Some(start + Duration::from_millis(300)));
        assert!(matches!(got, Err(LineError::Deadline)), "{got:?}");
        assert!(start.elapsed() < Duration::from_secs(1));
        drop(r);
        trickler.join().unwrap();
    }
}
