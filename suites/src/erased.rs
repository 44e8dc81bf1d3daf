//! Suites behind one object-safe face, so a registry can list suites with different parameter
//! types and a job spec can carry any suite's parameters to every rank. Parameters cross as
//! JSON and are decoded into the suite's own type at each end: typed where they are made and
//! used, untyped only in transit.

use bench_core::measure::{Layout, PointKey};
use serde_json::Value;
use transports::comm::Comm;

use crate::driver::{drive_from, PointSink};
use crate::options::{OptionDef, SuiteArgs};
use crate::ranks::RankRule;
use crate::suite::{ParamError, Suite, SuiteError};
use crate::work::Work;

/// Any [`Suite`], with its parameters as JSON.
pub trait DynSuite: Sync {
    fn name(&self) -> &'static str;
    fn summary(&self) -> &'static str;
    fn ranks(&self) -> RankRule;
    fn options(&self) -> &'static [OptionDef];
    /// Parameters from the command line's options, as JSON.
    fn parse(&self, args: &SuiteArgs) -> Result<Value, ParamError>;
    /// Decodes `params` and checks them against the rank count.
    fn check(&self, params: &Value, ranks: usize) -> Result<(), ParamError>;
    fn layout(&self, params: &Value) -> Result<Layout, ParamError>;
    /// How many points the run will measure, when known up front.
    fn planned(&self, params: &Value) -> Result<Option<usize>, ParamError>;
    /// The parameters of a first look (`run --quick`), as JSON; None when the suite has no
    /// quicker form.
    fn quick(&self, params: &Value) -> Result<Option<Value>, ParamError>;
    /// The communication a run at `ranks` ranks asks for, when known up front.
    fn work(&self, params: &Value, ranks: usize) -> Result<Option<Work>, ParamError>;
    /// The option that lengthens a too-short timed section.
    fn longer(&self) -> Option<&'static str>;
    /// Runs on every rank, leaving out the points in `done` of a fixed schedule (a resumed
    /// run's); rank 0 reports each point.
    fn run(
        &self,
        comm: &Comm,
        params: &Value,
        done: &[PointKey],
        report: &mut dyn PointSink,
    ) -> Result<(), SuiteError>;
}

fn decode<S: Suite>(suite: &S, params: &Value) -> Result<S::Params, ParamError> {
    serde_json::from_value(params.clone())
        .map_err(|e| ParamError(format!("parameters of {}: {e}", suite.name())))
}

/// A suite's typed parameters as the JSON a [`DynSuite`] takes.
pub fn encode<S: Suite>(params: &S::Params) -> Value {
    serde_json::to_value(params).expect("suite parameters serialise")
}

impl<S: Suite> DynSuite for S {
    fn name(&self) -> &'static str {
        Suite::name(self)
    }
    fn summary(&self) -> &'static str {
        Suite::summary(self)
    }
    fn ranks(&self) -> RankRule {
        Suite::ranks(self)
    }
    fn options(&self) -> &'static [OptionDef] {
        Suite::options(self)
    }
    fn parse(&self, args: &SuiteArgs) -> Result<Value, ParamError> {
        Ok(encode::<S>(&self.params(args)?))
    }
    fn check(&self, params: &Value, ranks: usize) -> Result<(), ParamError> {
        Suite::check(self, &decode(self, params)?, ranks)
    }
    fn layout(&self, params: &Value) -> Result<Layout, ParamError> {
        Ok(Suite::layout(self, &decode(self, params)?))
    }
    fn planned(&self, params: &Value) -> Result<Option<usize>, ParamError> {
        Ok(self.schedule(&decode(self, params)?).planned())
    }
    fn quick(&self, params: &Value) -> Result<Option<Value>, ParamError> {
        Ok(Suite::quick(self, &decode(self, params)?).map(|q| encode::<S>(&q)))
    }
    fn work(&self, params: &Value, ranks: usize) -> Result<Option<Work>, ParamError> {
        Ok(Suite::work(self, &decode(self, params)?, ranks))
    }
    fn longer(&self) -> Option<&'static str> {
        Suite::longer(self)
    }
    fn run(
        &self,
        comm: &Comm,
        params: &Value,
        done: &[PointKey],
        report: &mut dyn PointSink,
    ) -> Result<(), SuiteError> {
        let p = decode(self, params)?;
        drive_from(self, comm, &p, done, report)
    }
}
