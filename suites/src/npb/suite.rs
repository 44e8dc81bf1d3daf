//! `fabbench run npb`: the NPB kernels as one suite. Each kernel chosen is one point, keyed by
//! its class and name (`class=A;kernel=cg`), measured through the shared driver: untimed
//! set-up when the point starts, NPB's timed section as the timed iteration (`--repeat` runs
//! it again from the initial state), the time reported as NPB reports it (the longest any rank
//! took), Mop/s by NPB's formula, the compute/communication split of every run, and NPB's
//! verification after each run. A verification that fails ends the run with its values.

use bench_core::measure::{Derivation, Layout, Metric, NpbKernel, NpbLayout, PointKey};
use serde::{Deserialize, Serialize};
use transports::comm::Comm;

use super::class::Class;
use super::kernel::{Kernel, Meter, Problem, Verification};
use super::{cg, ep, ft, is, mg};
use crate::options::{Dash, OptionDef, OptionKind, SuiteArgs, REPEAT};
use crate::ranks::RankRule;
use crate::suite::{Bench, Measure, ParamError, Schedule, Suite, SuiteError};

/// A kernel with its type erased, so one bench can hold any of them.
trait AnyKernel {
    fn reset(&mut self, comm: &Comm) -> Result<(), SuiteError>;
    fn run(&mut self, comm: &Comm, meter: &mut Meter<'_>) -> Result<(), SuiteError>;
    fn verify(&mut self, comm: &Comm) -> Result<Verification, SuiteError>;
}

impl<K: Kernel> AnyKernel for K {
    fn reset(&mut self, comm: &Comm) -> Result<(), SuiteError> {
        Kernel::reset(self, comm)
    }
    fn run(&mut self, comm: &Comm, meter: &mut Meter<'_>) -> Result<(), SuiteError> {
        Kernel::run(self, comm, meter)
    }
    fn verify(&mut self, comm: &Comm) -> Result<Verification, SuiteError> {
        Kernel::verify(self, comm)
    }
}

/// Sets a kernel up for a class on this rank's communicator.
type Constructor = fn(&Comm, Class) -> Result<Box<dyn AnyKernel>, SuiteError>;

/// The kernel of the point being measured, with its registry entry.
type Current = (&'static KernelDef, Box<dyn AnyKernel>);

/// A kernel's facts and constructor, as the registry holds them.
pub struct KernelDef {
    /// The name `--kernel` takes and the point key carries: "cg".
    pub key: &'static str,
    /// NPB's name: "CG".
    pub name: &'static str,
    pub operation: &'static str,
    pub ranks: fn() -> RankRule,
    pub check: fn(Class, usize) -> Result<(), ParamError>,
    pub problem: fn(Class) -> Problem,
    pub operations: fn(Class) -> f64,
    new: Constructor,
}

fn boxed<K: Kernel + 'static>(comm: &Comm, class: Class) -> Result<Box<dyn AnyKernel>, SuiteError> {
    Ok(Box::new(K::new(comm, class)?))
}

const fn def<K: Kernel + 'static>(key: &'static str) -> KernelDef {
    KernelDef {
        key,
        name: K::NAME,
        operation: K::OPERATION,
        ranks: K::ranks,
        check: K::check,
        problem: K::problem,
        operations: K::operations,
        new: boxed::<K>,
    }
}

/// Every kernel, in NPB's order. A new kernel is one module and one line here.
pub static KERNELS: &[KernelDef] = &[
    def::<ep::Ep>("ep"),
    def::<is::Is>("is"),
    def::<cg::Cg>("cg"),
    def::<mg::Mg>("mg"),
    def::<ft::Ft>("ft"),
];

pub fn kernel(key: &str) -> Option<&'static KernelDef> {
    KERNELS.iter().find(|k| k.key == key)
}

fn kernel_names() -> String {
    KERNELS.iter().map(|k| k.key).collect::<Vec<_>>().join(", ")
}

/// The suite's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NpbParams {
    /// Keys of the kernels to run, in the order given.
    pub kernels: Vec<String>,
    pub class: Class,
    /// Timed runs of each kernel.
    pub repeat: u64,
}

/// The largest `--repeat`: each run of a class C kernel takes minutes.
const MAX_REPEAT: u64 = 1000;

static OPTIONS: &[OptionDef] = &[
    OptionDef {
        long: "kernel",
        short: None,
        dash: Dash::Two,
        kind: OptionKind::Text,
        value_name: "LIST",
        help: "NPB kernels to run, comma-separated: ep, is, cg, mg, ft (default: all five)",
    },
    OptionDef {
        long: "class",
        short: None,
        dash: Dash::Two,
        kind: OptionKind::Text,
        value_name: "S|W|A|B|C",
        help: "NPB problem class (default S, the smallest)",
    },
    REPEAT,
];

pub struct Npb;

/// The NPB suite as registered.
pub static NPB: Npb = Npb;

impl Suite for Npb {
    type Params = NpbParams;
    type Bench<'c> = NpbBench<'c>;

    fn name(&self) -> &'static str {
        "npb"
    }

    fn summary(&self) -> &'static str {
        "NAS Parallel Benchmarks 3.4 kernels EP, IS, CG, MG, FT: verified, Mop/s, compute/comm split (EP any ranks; the others powers of two)"
    }

    fn ranks(&self) -> RankRule {
        RankRule::AtLeast(1)
    }

    fn options(&self) -> &'static [OptionDef] {
        OPTIONS
    }

    fn params(&self, args: &SuiteArgs) -> Result<NpbParams, ParamError> {
        let kernels = match args.get("kernel") {
            None => KERNELS.iter().map(|k| k.key.to_string()).collect(),
            Some(list) => {
                let mut out: Vec<String> = Vec::new();
                for name in list.split(',').map(str::trim) {
                    let k = kernel(&name.to_ascii_lowercase()).ok_or_else(|| {
                        ParamError(format!(
                            "--kernel {name}: not an NPB kernel; valid: {}",
                            kernel_names()
                        ))
                    })?;
                    if out.iter().any(|o| o == k.key) {
                        return Err(ParamError(format!(
                            "--kernel {list}: {} is named twice; name each kernel once",
                            k.key
                        )));
                    }
                    out.push(k.key.to_string());
                }
                out
            }
        };
        let class = match args.get("class") {
            None => Class::S,
            Some(c) => c
                .parse()
                .map_err(|e: String| ParamError(format!("--class {c}: {e}")))?,
        };
        let repeat = args.count("repeat")?.unwrap_or(1);
        if !(1..=MAX_REPEAT).contains(&repeat) {
            return Err(ParamError(format!(
                "--repeat {repeat}: give 1 to {MAX_REPEAT} timed runs"
            )));
        }
        Ok(NpbParams {
            kernels,
            class,
            repeat,
        })
    }

    fn check(&self, p: &NpbParams, ranks: usize) -> Result<(), ParamError> {
        for key in &p.kernels {
            let k = kernel(key).ok_or_else(|| {
                ParamError(format!("kernel {key} is not one of {}", kernel_names()))
            })?;
            let rule = (k.ranks)();
            if !rule.allows(ranks) {
                return Err(ParamError(format!(
                    "npb {}: -n {ranks}: {} runs on {}",
                    k.key,
                    k.name,
                    rule.describe()
                )));
            }
            (k.check)(p.class, ranks)?;
        }
        Ok(())
    }

    fn layout(&self, p: &NpbParams) -> Layout {
        Layout::Npb(NpbLayout {
            class: p.class.to_string(),
            kernels: p
                .kernels
                .iter()
                .filter_map(|key| kernel(key))
                .map(|k| {
                    let problem = (k.problem)(p.class);
                    NpbKernel {
                        kernel: k.key.to_string(),
                        name: k.name.to_string(),
                        size: problem.size,
                        iterations: problem.iterations,
                        operation: k.operation.to_string(),
                    }
                })
                .collect(),
        })
    }

    fn longer(&self) -> Option<&'static str> {
        Some("--class A (a larger problem; S < W < A < B < C)")
    }

    fn schedule(&self, p: &NpbParams) -> Schedule {
        Schedule::Fixed(p.kernels.iter().map(|k| key(k, p.class)).collect())
    }

    fn start<'c>(
        &'c self,
        comm: &'c Comm,
        params: &'c NpbParams,
    ) -> Result<NpbBench<'c>, SuiteError> {
        Ok(NpbBench {
            comm,
            params,
            current: None,
            compute_ns: 0,
            notes: Vec::new(),
        })
    }
}

/// The point key of a kernel at a class.
pub fn key(kernel: &str, class: Class) -> PointKey {
    PointKey::params([("class", class.to_string()), ("kernel", kernel.to_string())])
}

/// Seconds of the longest rank, and NPB's Mop/s total.
fn metrics(k: &KernelDef, class: Class) -> Vec<Metric> {
    vec![
        Metric {
            name: "time".into(),
            unit: "s".into(),
            better: bench_core::measure::Better::Lower,
            derive: Derivation::Time {
                divisor: 1.0,
                unit_ns: 1e9,
            },
        },
        Metric {
            name: "mops".into(),
            unit: "Mop/s".into(),
            better: bench_core::measure::Better::Higher,
            derive: Derivation::Rate {
                amount: (k.operations)(class),
                unit: 1e6,
            },
        },
    ]
}

/// One rank's state: the kernel of the point being measured.
pub struct NpbBench<'c> {
    comm: &'c Comm,
    params: &'c NpbParams,
    current: Option<Current>,
    compute_ns: u64,
    notes: Vec<String>,
}

impl NpbBench<'_> {
    fn kernel(&mut self) -> Result<&mut Current, SuiteError> {
        self.current
            .as_mut()
            .ok_or_else(|| SuiteError::Check("npb: no kernel set up".into()))
    }
}

impl Bench for NpbBench<'_> {
    fn at(&mut self, key: &PointKey) -> Result<Measure, SuiteError> {
        let name = key.params.get("kernel").map(String::as_str).unwrap_or("");
        let k = kernel(name)
            .ok_or_else(|| ParamError(format!("kernel {name} is not one of {}", kernel_names())))?;
        // The previous kernel's memory goes before the next one's is allocated.
        self.current = None;
        self.comm
            .set_stage(&format!("npb {} class {} set-up", k.key, self.params.class));
        let kernel = (k.new)(self.comm, self.params.class)?;
        self.current = Some((k, kernel));
        Ok(Measure {
            iterations: self.params.repeat,
            warmup: 0,
            // Set-up before each run and verification after it, both untimed.
            validate: true,
            metrics: metrics(k, self.params.class),
            across_ranks: true,
        })
    }

    fn prepare(&mut self, _i: u64) -> Result<(), SuiteError> {
        let comm = self.comm;
        let (_, k) = self.kernel()?;
        k.reset(comm)
    }

    fn iteration(&mut self, _i: u64) -> Result<(), SuiteError> {
        let comm = self.comm;
        let mut meter = Meter::new(comm);
        let (_, k) = self.kernel()?;
        k.run(comm, &mut meter)?;
        self.compute_ns = meter.compute_ns();
        Ok(())
    }

    fn check(&mut self, i: u64) -> Result<(), SuiteError> {
        let comm = self.comm;
        let class = self.params.class;
        let (def, k) = self.kernel()?;
        let name = def.name;
        let v = k.verify(comm)?;
        if !v.passed {
            return Err(SuiteError::Check(format!(
                "{name} class {class}: verification UNSUCCESSFUL (run {}): {}",
                i + 1,
                v.lines
                    .iter()
                    .map(|l| l.trim())
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }
        if i == 0 {
            self.notes = v
                .lines
                .iter()
                .map(|l| format!("{name}: {}", l.trim()))
                .collect();
        }
        Ok(())
    }

    fn compute_ns(&self) -> Option<u64> {
        Some(self.compute_ns)
    }

    fn notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }
}
