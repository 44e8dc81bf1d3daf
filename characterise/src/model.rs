//! The LogGP model with protocol segments, as the `loggp` fabric runs it: what one message
//! costs the sender, the wire and the receiver, and from that what the measured patterns
//! should take. The fit inverts these formulas and the report checks them against the
//! measurements, so they are written once, here.
//!
//! For a message of `s` bytes under one segment's parameters:
//! - the sender's CPU is busy `o_s(s) = send_ns + s * send_per_byte_ns`;
//! - the NIC puts it on the wire in `s * G` and it lands `L` later; the NIC can start the next
//!   message `g + s * (G + G+)` after this one started (`G+`, 0 in LogGP, is the gap per byte
//!   a stream shows beyond one message's: a host's copies contending, say);
//! - the receiver's CPU is busy `o_r(s) = recv_ns + s * recv_per_byte_ns` taking it.
//!
//! So a ping-pong's half round trip is `o_s(s) + s*G + L + o_r(s)`, and a stream of back-to-back
//! sends moves one message per `max(o_s(s), o_r(s), g + s*(G + G+))` once it runs.

use serde::Serialize;

/// One segment's parameters, in nanoseconds (per byte where named so).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct LogGp {
    /// L: time of flight, after the sender's overhead and the bytes' injection.
    pub latency_ns: f64,
    /// o_s, fixed part.
    pub send_ns: f64,
    /// o_s, per byte (a copy into a buffer, say).
    pub send_per_byte_ns: f64,
    /// o_r, fixed part.
    pub recv_ns: f64,
    /// o_r, per byte.
    pub recv_per_byte_ns: f64,
    /// g: least time between two messages' starts at the NIC.
    pub gap_ns: f64,
    /// G: time per byte on the wire.
    pub gap_per_byte_ns: f64,
    /// G+: the NIC's gap per byte between messages beyond G (0 in LogGP): it paces a stream
    /// and leaves one message's way alone.
    pub extra_gap_per_byte_ns: f64,
}

impl LogGp {
    pub fn send(&self, s: u64) -> f64 {
        self.send_ns + s as f64 * self.send_per_byte_ns
    }

    pub fn recv(&self, s: u64) -> f64 {
        self.recv_ns + s as f64 * self.recv_per_byte_ns
    }

    /// One message from call to delivery, nobody else on the wire: half a ping-pong.
    pub fn one_way(&self, s: u64) -> f64 {
        self.send(s) + s as f64 * self.gap_per_byte_ns + self.latency_ns + self.recv(s)
    }

    /// What each message of a long stream costs once it runs: the slowest of the sender's CPU,
    /// the NIC and the receiver's CPU.
    pub fn per_message(&self, s: u64) -> f64 {
        self.send(s)
            .max(self.recv(s))
            .max(self.gap_ns + s as f64 * self.nic_per_byte())
    }

    /// The NIC's time per byte between two messages' starts: G + G+.
    pub fn nic_per_byte(&self) -> f64 {
        self.gap_per_byte_ns + self.extra_gap_per_byte_ns
    }

    /// The bandwidth a long stream of large messages approaches, MB/s (bytes per us).
    pub fn asymptotic_mbs(&self) -> Option<f64> {
        let per_byte = self
            .send_per_byte_ns
            .max(self.recv_per_byte_ns)
            .max(self.nic_per_byte());
        (per_byte > 0.0).then(|| 1e3 / per_byte)
    }
}

/// The bytes of the stream pattern's acknowledgement (osu_bw's).
pub const ACK_BYTES: u64 = 1;

/// A fabric's model: segments by the size they start at (the first at 0).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    pub segments: Vec<(u64, LogGp)>,
}

impl Model {
    /// The parameters that apply to a message of `s` bytes.
    pub fn at(&self, s: u64) -> &LogGp {
        let i = self.segments.partition_point(|(from, _)| *from <= s);
        &self.segments[i.saturating_sub(1)].1
    }

    /// Half a ping-pong's round trip, ns.
    pub fn pingpong(&self, s: u64) -> f64 {
        self.at(s).one_way(s)
    }

    /// The stream pattern's time per message, ns, with `window` messages before each
    /// acknowledgement: the first message's whole one-way time, the rest one stream step
    /// each, then the acknowledgement's one-way time, shared by the window.
    pub fn stream(&self, s: u64, window: u64) -> f64 {
        let w = window.max(1) as f64;
        (self.pingpong(s) + (w - 1.0) * self.at(s).per_message(s) + self.pingpong(ACK_BYTES)) / w
    }

    /// The steady stream step a measured stream time stands for: the inverse of
    /// [`Model::stream`] given the ping-pong times it involves.
    pub fn steady_step(stream_ns: f64, pingpong_ns: f64, ack_ns: f64, window: u64) -> f64 {
        let w = window.max(2) as f64;
        (w * stream_ns - pingpong_ns - ack_ns) / (w - 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn bxi_like() -> LogGp {
        LogGp {
            latency_ns: 710.0,
            send_ns: 300.0,
            send_per_byte_ns: 0.0,
            recv_ns: 600.0,
            recv_per_byte_ns: 1.0 / 15.0,
            gap_ns: 310.0,
            gap_per_byte_ns: 0.08,
            extra_gap_per_byte_ns: 0.0,
        }
    }

    #[test]
    fn one_way_and_stream_follow_the_formulas() {
        let p = bxi_like();
        assert!((p.one_way(1000) - (300.0 + 80.0 + 710.0 + 600.0 + 1000.0 / 15.0)).abs() < 1e-9);
        // 1 MB: the receiver's copy (66.7 us) is slower than the wire (80 us)? No: the wire.
        assert!((p.per_message(1_000_000) - (310.0 + 80_000.0)).abs() < 1e-6);
        assert!((p.asymptotic_mbs().unwrap() - 12_500.0).abs() < 1e-6);
        let m = Model {
            segments: vec![
                (0, p),
                (
                    40_000,
                    LogGp {
                        latency_ns: 3000.0,
                        ..p
                    },
                ),
            ],
        };
        assert_eq!(m.at(39_999).latency_ns, 710.0);
        assert_eq!(m.at(40_000).latency_ns, 3000.0);
        let st = m.stream(65_536, 64);
        let back = Model::steady_step(st, m.pingpong(65_536), m.pingpong(ACK_BYTES), 64);
        assert!((back - m.at(65_536).per_message(65_536)).abs() < 1e-6);
    }
}
