//! loggp: the patterns a LogGP fit needs, between ranks 0 and 1 (other ranks only join the
//! driver's barriers). Per message size, each a point keyed by size and `pattern`, its sample
//! the time per message:
//!
//! - `pingpong`: osu_latency's iteration; half the round trip.
//! - `stream`: osu_bw's iteration (a window of nonblocking sends, a 1-byte acknowledgement);
//!   the iteration over the window.
//! - `send`: rank 0's time in `isend` and `wait` with a delay between them long enough for the
//!   message and its protocol to finish (three round trips and a microsecond): the sender's
//!   overhead o_s, as Netgauge measures it. Rank 1's receive is posted first (it says so).
//! - `recv`: rank 0 posts `irecv`, tells rank 1 to send, waits the delay, then `wait`s: its time
//!   in the two calls is the receiver's overhead o_r. A rendezvous without asynchronous
//!   progress still moves its data inside the wait, which the fit recognises.
//!
//! The delay is `Comm::delay` (spun on a real clock, exact in virtual time) and the driver
//! takes it off the sample (`Bench::excluded_ns`). `fabbench characterise` runs this suite and
//! reads its points by `PointKey { size, params: {"pattern": NAME} }`.

mod params;
mod patterns;

pub use params::{LoggpParams, Pattern, DEFAULT_WINDOW, OPTIONS};
pub use patterns::{delay_ns, LoggpBench};

use bench_core::measure::{Layout, PointKey};
use transports::comm::Comm;

use crate::options::{OptionDef, SuiteArgs};
use crate::ranks::RankRule;
use crate::suite::{ParamError, Schedule, Suite, SuiteError};
use crate::work::{PointWork, Work};

/// The loggp suite.
pub struct Loggp;

/// The loggp suite as registered.
pub static LOGGP: Loggp = Loggp;

/// The point of `pattern` at `size`, as the suite measures and reports it.
pub fn point_key(pattern: Pattern, size: u64) -> PointKey {
    let mut k = PointKey::size(size);
    k.params.insert("pattern".into(), pattern.name().into());
    k
}

impl Suite for Loggp {
    type Params = LoggpParams;
    type Bench<'c> = LoggpBench<'c>;

    fn name(&self) -> &'static str {
        "loggp"
    }

    fn summary(&self) -> &'static str {
        "the patterns a LogGP fit needs: ping-pong, stream, send and receive overheads (fabbench characterise runs it)"
    }

    fn ranks(&self) -> RankRule {
        RankRule::AtLeast(2)
    }

    fn options(&self) -> &'static [OptionDef] {
        OPTIONS
    }

    fn params(&self, args: &SuiteArgs) -> Result<LoggpParams, ParamError> {
        LoggpParams::from_args(args)
    }

    fn check(&self, p: &LoggpParams, _ranks: usize) -> Result<(), ParamError> {
        p.check()
    }

    /// OSU's table (so osu.txt, plots and OSU parsers read it), its rows in blocks: every size
    /// of the first pattern, then of the next, in the order the title names them.
    fn layout(&self, p: &LoggpParams) -> Layout {
        let order: Vec<&str> = p.patterns.iter().map(|p| p.name()).collect();
        Layout::Osu {
            title: format!(
                "fabbench LogGP patterns: time per message, one block of sizes per pattern ({})",
                order.join(", ")
            ),
            column: "Time(us)".into(),
            tail: false,
            tail_at: Vec::new(),
            validation: p.validate,
        }
    }

    fn work(&self, p: &LoggpParams, _ranks: usize) -> Option<Work> {
        let sizes = p.size_list();
        let points = p
            .patterns
            .iter()
            .flat_map(|&pat| sizes.iter().map(move |&s| (pat, s)))
            .map(|(pat, size)| {
                let (timed, warmup) = p.counts(pat, size);
                let n = timed + warmup;
                // The stream sends a window and its acknowledgement; the other patterns a
                // message each way (the overheads' delays are left out: an estimate).
                let (messages, bytes) = match pat {
                    Pattern::Stream => (p.window + 1, p.window * size + 1),
                    _ => (2, 2 * size),
                };
                PointWork::repeated(n, messages, bytes)
            })
            .collect();
        Some(Work { points })
    }

    fn longer(&self) -> Option<&'static str> {
        Some("-i N (more timed iterations)")
    }

    fn schedule(&self, p: &LoggpParams) -> Schedule {
        let sizes = p.size_list();
        Schedule::Fixed(
            p.patterns
                .iter()
                .flat_map(|&pat| sizes.iter().map(move |&s| point_key(pat, s)))
                .collect(),
        )
    }

    fn start<'c>(
        &'c self,
        comm: &'c Comm,
        params: &'c LoggpParams,
    ) -> Result<LoggpBench<'c>, SuiteError> {
        LoggpBench::new(comm, params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(p: &LoggpParams) -> Vec<(String, u64)> {
        let Schedule::Fixed(k) = LOGGP.schedule(p) else {
            panic!("loggp's points are fixed")
        };
        k.into_iter()
            .map(|k| (k.params["pattern"].clone(), k.size.unwrap()))
            .collect()
    }

    #[test]
    fn points_are_every_size_of_each_pattern_in_turn() {
        let p = LoggpParams {
            sizes: vec![8, 1024],
            ..Default::default()
        };
        let want: Vec<(String, u64)> = ["pingpong", "stream", "send", "recv"]
            .iter()
            .flat_map(|n| [(n.to_string(), 8), (n.to_string(), 1024)])
            .collect();
        assert_eq!(keys(&p), want);
        let p = LoggpParams {
            min_size: Some(1),
            max_size: Some(4),
            patterns: vec![Pattern::Recv, Pattern::Send],
            ..Default::default()
        };
        assert_eq!(
            keys(&p),
            [("recv", 1), ("recv", 2), ("recv", 4), ("send", 1)]
                .into_iter()
                .chain([("send", 2), ("send", 4)])
                .map(|(n, s)| (n.to_string(), s))
                .collect::<Vec<_>>()
        );
        let k = point_key(Pattern::Stream, 64);
        assert_eq!(k.to_string(), "size 64 pattern=stream");
        assert_eq!(k.params_text(), "pattern=stream");
    }

    #[test]
    fn the_layout_is_osu_s_table_naming_the_blocks() {
        let p = LoggpParams {
            patterns: vec![Pattern::Send, Pattern::Recv],
            validate: true,
            ..Default::default()
        };
        assert_eq!(
            LOGGP.layout(&p),
            Layout::Osu {
                title: "fabbench LogGP patterns: time per message, one block of sizes per pattern (send, recv)".into(),
                column: "Time(us)".into(),
                tail: false,
                tail_at: Vec::new(),
                validation: true,
            }
        );
    }
}
