//! What a characterisation is asked to do, checked before anything runs: one-line refusals
//! that say what is valid.

use std::path::PathBuf;

use bench_core::size::parse_size;
use curves::Tolerance;
use transports::fabric::FabricKind;

use crate::error::CharacteriseError;

/// A request as a caller states it.
#[derive(Debug, Clone)]
pub struct Request {
    /// The fabric label ("shm", "bxi", "tcp").
    pub fabric: String,
    pub ranks: usize,
    /// "MIN:MAX" byte sizes.
    pub sizes: String,
    /// Timed iterations per size and pattern; None: the suite's rule (fewer on emulated
    /// fabrics, which are exact).
    pub iterations: Option<u64>,
    /// Sizes measured inside each switch's interval (0: none).
    pub refine: u64,
    /// Rounds, each measuring every size and pattern once; None: [`DEFAULT_ROUNDS`] on a real
    /// fabric, one on an emulated fabric (virtual time is exact: its rounds are identical).
    pub rounds: Option<usize>,
    /// `NAME=VALUE` settings of the fabric measured.
    pub sets: Vec<String>,
    /// A model card for the fabric measured.
    pub model: Option<PathBuf>,
    /// Where the measured runs are written (None: kept in memory only).
    pub runs_out: Option<PathBuf>,
    /// The rank program for fabrics that start processes (a library caller's built binary).
    pub rank_program: Option<PathBuf>,
    pub command_line: Vec<String>,
    /// How closely a protocol segment must follow its line; None: 5 % on an emulated fabric
    /// (exact data), 10 % on a real one (a busy host's noise is not a protocol).
    pub tolerance: Option<Tolerance>,
}

impl Request {
    pub fn new(fabric: &str) -> Request {
        Request {
            fabric: fabric.to_string(),
            ranks: 2,
            sizes: "1:4M".into(),
            iterations: None,
            refine: 7,
            rounds: None,
            sets: Vec::new(),
            model: None,
            runs_out: None,
            rank_program: None,
            command_line: Vec::new(),
            tolerance: None,
        }
    }
}

/// A request that passed its checks.
#[derive(Debug, Clone)]
pub struct Checked {
    pub fabric: String,
    pub ranks: usize,
    pub min_size: u64,
    pub max_size: u64,
    pub iterations: Option<u64>,
    pub refine: u64,
    pub rounds: usize,
    pub sets: Vec<String>,
    pub model: Option<PathBuf>,
    pub runs_out: Option<PathBuf>,
    pub rank_program: Option<PathBuf>,
    pub command_line: Vec<String>,
    pub tolerance: Tolerance,
    pub emulated: bool,
}

/// The most sizes refinement may add per switch.
pub const MAX_REFINE: u64 = 64;

/// Rounds on a real fabric when none are asked for: a median of three is the fewest that a
/// single disturbed round cannot move, and their range is a first measure of the spread.
pub const DEFAULT_ROUNDS: usize = 5;

/// The most rounds: each is a whole sweep.
pub const MAX_ROUNDS: usize = 100;

impl Request {
    pub fn check(&self) -> Result<Checked, CharacteriseError> {
        let bad = |m: String| Err(CharacteriseError::Request(m));
        let resolved = transports::registry::resolve(&self.fabric)
            .map_err(|r| CharacteriseError::Request(r.to_string()))?;
        let emulated = resolved.def.kind == FabricKind::Emulated;
        if self.ranks < 2 {
            return bad(format!(
                "-n {}: the patterns need 2 ranks or more",
                self.ranks
            ));
        }
        let Some((lo, hi)) = self.sizes.split_once(':') else {
            return bad(format!(
                "--sizes {}: give MIN:MAX, such as 1:4M",
                self.sizes
            ));
        };
        let parse = |t: &str| {
            parse_size(t)
                .map_err(|e| CharacteriseError::Request(format!("--sizes {}: {e}", self.sizes)))
        };
        let (min_size, max_size) = (parse(lo)?, parse(hi)?);
        if min_size == 0 || max_size < min_size.saturating_mul(4) {
            return bad(format!(
                "--sizes {}: MIN must be at least 1 byte and MAX at least 4 x MIN (a fit needs sizes to fit over)",
                self.sizes
            ));
        }
        if max_size > 1 << 30 {
            return bad(format!("--sizes {}: at most 1G", self.sizes));
        }
        if self.iterations == Some(0) {
            return bad("-i 0: at least one timed iteration".into());
        }
        if self.refine > MAX_REFINE {
            return bad(format!(
                "--refine {}: at most {MAX_REFINE} sizes per switch",
                self.refine
            ));
        }
        if let Some(r) = self.rounds {
            if r == 0 || r > MAX_ROUNDS {
                return bad(format!(
                    "--rounds {r}: give 1 to {MAX_ROUNDS} (each round measures every size once)"
                ));
            }
        }
        Ok(Checked {
            fabric: self.fabric.clone(),
            ranks: self.ranks,
            min_size,
            max_size,
            iterations: self.iterations,
            refine: self.refine,
            rounds: self
                .rounds
                .unwrap_or(if emulated { 1 } else { DEFAULT_ROUNDS }),
            sets: self.sets.clone(),
            model: self.model.clone(),
            runs_out: self.runs_out.clone(),
            rank_program: self.rank_program.clone(),
            command_line: self.command_line.clone(),
            tolerance: self.tolerance.unwrap_or(if emulated {
                Tolerance::default()
            } else {
                Tolerance {
                    relative: 0.10,
                    ..Tolerance::default()
                }
            }),
            emulated,
        })
    }
}

impl Checked {
    /// Powers of two from MIN to MAX, with both ends.
    pub fn sweep(&self) -> Vec<u64> {
        let mut sizes = vec![self.min_size];
        let mut s = self.min_size.next_power_of_two();
        while s <= self.max_size {
            sizes.push(s);
            s *= 2;
        }
        sizes.push(self.max_size);
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }
}
