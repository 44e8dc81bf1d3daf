//! The tcp wire's socket options that must be set before a connection exists: the send and
//! receive buffer sizes, and whether reads re-arm quick ACKs because of them.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use socket2::{Domain, Protocol as SockProto, Socket, Type};

/// `tcp.sndbuf` and `tcp.rcvbuf` (0: the kernel's default and autotuning).
///
/// They are set on a socket before listen(2) or connect(2), as tcp(7) requires (the window
/// scale is agreed in the handshake). A receive buffer shrunk on an open connection made the
/// receiver advertise a zero window over and over (nstat's TCPToZeroWindowAdv), and each piece
/// of a message waited on a TCP timer: on loopback with a 4 KiB receive buffer, 16 KiB one way
/// took 418 ms set afterwards (a Python ping-pong: 135 ms), 55-60 us set before. Accepted
/// sockets inherit the listener's buffers.
#[derive(Clone, Copy)]
pub(super) struct Buffers {
    pub(super) snd: usize,
    pub(super) rcv: usize,
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
    pub(super) fn quickack(self) -> bool {
        self.snd > 0
    }

    pub(super) fn listen(self, addr: SocketAddr) -> io::Result<TcpListener> {
        let sock = self.socket(&addr)?;
        sock.bind(&addr.into())?;
        sock.listen(128)?;
        Ok(sock.into())
    }

    pub(super) fn connect(self, addr: &SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
        let sock = self.socket(addr)?;
        sock.connect_timeout(&(*addr).into(), timeout)?;
        Ok(sock.into())
    }
}
