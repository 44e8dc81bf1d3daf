//! Runs a test suite through the shared driver on two thread-ranks of emulated rapidio (exact
//! virtual time) and keeps what rank 0 handed over.
#![allow(dead_code)]

use std::sync::Arc;

use bench_core::bootstrap::{local, Bootstrap};
use bench_core::measure::{Point, PointKey};
use suites::{drive, PointSink, Suite, SuiteError};
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::in_process::run_ranks;
use transports::registry;

/// Rank 0's report: the points started and measured, in the order handed over.
#[derive(Default)]
pub struct Points {
    pub started: Vec<PointKey>,
    pub measured: Vec<Point>,
}

impl PointSink for Points {
    fn starting(&mut self, key: &PointKey) -> Result<(), SuiteError> {
        self.started.push(key.clone());
        Ok(())
    }
    fn measured(&mut self, point: Point) -> Result<(), SuiteError> {
        self.measured.push(point);
        Ok(())
    }
    fn note(&mut self, _text: &str) -> Result<(), SuiteError> {
        Ok(())
    }
}

/// Drives `suite` on two rapidio ranks; rank 0's report (and checks that rank 1 reported
/// nothing).
pub fn run_on_rapidio<S: Suite<Params = ()>>(suite: &S) -> Points {
    let registry = registry::registry(&[]);
    let settings = registry.defaults();
    let def = registry::find("rapidio").unwrap();
    let (boots, _events) = local::group(2);
    let reports: Vec<Points> = run_ranks(def.kind, boots, |b| {
        let boot: Arc<dyn Bootstrap> = Arc::new(b);
        let ctx = FabricContext {
            boot,
            settings: &settings,
        };
        let comm = Comm::new((def.connect)(&ctx).unwrap());
        let mut report = Points::default();
        drive(suite, &comm, &(), &mut report).unwrap();
        comm.finish().unwrap();
        report
    });
    assert!(
        reports[1].measured.is_empty() && reports[1].started.is_empty(),
        "only rank 0 hands points over"
    );
    reports.into_iter().next().unwrap()
}
