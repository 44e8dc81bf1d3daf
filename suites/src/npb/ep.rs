//! NPB EP (placeholder until the kernel is written).

use transports::comm::Comm;

use super::class::Class;
use super::kernel::{Kernel, Meter, Problem, Verification};
use crate::ranks::RankRule;
use crate::suite::SuiteError;

pub struct Ep;

impl Kernel for Ep {
    const NAME: &'static str = "EP";
    const OPERATION: &'static str = "floating point";
    fn ranks() -> RankRule {
        RankRule::PowerOfTwo
    }
    fn problem(_class: Class) -> Problem {
        Problem {
            size: String::new(),
            iterations: 0,
        }
    }
    fn operations(_class: Class) -> f64 {
        0.0
    }
    fn new(_comm: &Comm, _class: Class) -> Result<Self, SuiteError> {
        Err(SuiteError::Check("EP is not written yet".into()))
    }
    fn reset(&mut self, _comm: &Comm) -> Result<(), SuiteError> {
        Ok(())
    }
    fn run(&mut self, _comm: &Comm, _meter: &mut Meter<'_>) -> Result<(), SuiteError> {
        Ok(())
    }
    fn verify(&mut self, _comm: &Comm) -> Result<Verification, SuiteError> {
        Ok(Verification {
            passed: false,
            lines: vec![],
        })
    }
}
