//! The shared driver with an adaptive schedule: rank 0 chooses each next point from the points
//! measured so far, every rank measures the same points in the same order, and the run ends
//! when the chooser says so. Ranks are threads of an emulated fabric, so the values the chooser
//! sees are exact and the choices reproducible.

mod common;

use std::sync::{Arc, Mutex};

use common::run_on_rapidio;

use bench_core::measure::{Layout, Metric, Point, PointKey};
use suites::{
    Adaptive, Bench, Measure, OptionDef, ParamError, RankRule, Schedule, Suite, SuiteArgs,
    SuiteError,
};
use transports::comm::Comm;

/// Bisects between 0 and 64 KiB wherever neighbouring latencies differ by more than 20 %.
struct Bisect {
    /// How many points each call was shown.
    calls: Arc<Mutex<Vec<usize>>>,
}

impl Adaptive for Bisect {
    fn next(&mut self, done: &[Point]) -> Option<PointKey> {
        self.calls.lock().unwrap().push(done.len());
        if self.calls.lock().unwrap().len() > 100 {
            return None; // a driver that loses points must not make the test run forever
        }
        for start in [0u64, 65536] {
            if !done.iter().any(|p| p.key.size == Some(start)) {
                return Some(PointKey::size(start));
            }
        }
        let mut pts: Vec<(u64, f64)> = done.iter().map(|p| (p.size(), p.headline())).collect();
        pts.sort_by_key(|p| p.0);
        pts.windows(2)
            .find(|w| w[1].0 - w[0].0 > 1024 && w[1].1 > w[0].1 * 1.2)
            .map(|w| PointKey::size((w[0].0 + w[1].0) / 2))
    }
}

/// A ping-pong whose points a [`Bisect`] chooses; it notes every point each rank measures.
struct Probe {
    seen: Mutex<Vec<(usize, PointKey)>>,
    calls: Arc<Mutex<Vec<usize>>>,
}

struct ProbeBench<'c> {
    suite: &'c Probe,
    comm: &'c Comm,
    buf: Vec<u8>,
    n: usize,
}

impl Bench for ProbeBench<'_> {
    fn at(&mut self, key: &PointKey) -> Result<Measure, SuiteError> {
        self.suite
            .seen
            .lock()
            .unwrap()
            .push((self.comm.rank(), key.clone()));
        self.n = key.size.unwrap_or(0) as usize;
        Ok(Measure {
            iterations: 3,
            warmup: 1,
            validate: false,
            metrics: vec![Metric::latency_us(2.0)],
            across_ranks: false,
        })
    }

    fn iteration(&mut self, _i: u64) -> Result<(), SuiteError> {
        let (c, n) = (self.comm, self.n);
        let peer = 1 - c.rank();
        if c.rank() == 0 {
            c.send(&self.buf[..n], peer, 1)?;
            c.recv(&mut self.buf[..n], peer, 1)?;
        } else {
            c.recv(&mut self.buf[..n], peer, 1)?;
            c.send(&self.buf[..n], peer, 1)?;
        }
        Ok(())
    }
}

impl Suite for Probe {
    type Params = ();
    type Bench<'c> = ProbeBench<'c>;

    fn name(&self) -> &'static str {
        "probe"
    }
    fn summary(&self) -> &'static str {
        "a test suite with an adaptive schedule"
    }
    fn ranks(&self) -> RankRule {
        RankRule::Exactly(2)
    }
    fn options(&self) -> &'static [OptionDef] {
        &[]
    }
    fn params(&self, _args: &SuiteArgs) -> Result<(), ParamError> {
        Ok(())
    }
    fn layout(&self, _p: &()) -> Layout {
        Layout::Osu {
            title: "probe".into(),
            column: "Latency(us)".into(),
            tail: false,
            tail_at: Vec::new(),
            validation: false,
        }
    }
    fn schedule(&self, _p: &()) -> Schedule {
        Schedule::Adaptive(Box::new(Bisect {
            calls: self.calls.clone(),
        }))
    }
    fn start<'c>(&'c self, comm: &'c Comm, _p: &'c ()) -> Result<ProbeBench<'c>, SuiteError> {
        Ok(ProbeBench {
            suite: self,
            comm,
            buf: vec![0u8; 65536],
            n: 0,
        })
    }
}

#[test]
fn every_rank_measures_the_points_rank_0_chooses() {
    let probe = Probe {
        seen: Mutex::new(Vec::new()),
        calls: Arc::new(Mutex::new(Vec::new())),
    };
    let report = run_on_rapidio(&probe);
    let chosen: Vec<PointKey> = report.measured.iter().map(|p| p.key.clone()).collect();
    assert_eq!(report.started, chosen);
    assert_eq!(chosen[..2], [PointKey::size(0), PointKey::size(65536)]);
    assert!(chosen.len() > 3, "it refined between the ends: {chosen:?}");
    assert!(chosen.len() < 40, "and stopped: {chosen:?}");
    // The chooser saw every point measured before it chose, and was asked once more to stop.
    let calls = probe.calls.lock().unwrap().clone();
    assert_eq!(calls, (0..=chosen.len()).collect::<Vec<_>>());
    // Both ranks measured exactly those points, in that order.
    let seen = probe.seen.lock().unwrap();
    for rank in 0..2 {
        let mine: Vec<PointKey> = seen
            .iter()
            .filter(|(r, _)| *r == rank)
            .map(|(_, k)| k.clone())
            .collect();
        assert_eq!(mine, chosen, "rank {rank}");
    }
    // Exact in virtual time: a second run chooses the same points.
    let again = run_on_rapidio(&Probe {
        seen: Mutex::new(Vec::new()),
        calls: Arc::new(Mutex::new(Vec::new())),
    });
    let chosen_again: Vec<PointKey> = again.measured.iter().map(|p| p.key.clone()).collect();
    assert_eq!(chosen_again, chosen);
}
