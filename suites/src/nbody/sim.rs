//! The nbody simulation: direct-summation softened gravity on a Plummer sphere, leapfrog
//! (kick-drift-kick) in time, the bodies split over the ranks in contiguous blocks. Each step
//! every rank needs every position: either one allgatherv of the blocks, or a ring pipeline in
//! which the blocks travel rank to rank+1 while each rank computes the forces of the block it
//! holds (the systolic scheme of TI's Hyperlink nbody test).
//!
//! A distributed run reproduces the one-rank run ([`Nbody::reference`]) bit for bit, in both
//! exchange modes and on any rank count. The initial conditions use only IEEE arithmetic and
//! square roots (no libm), so every rank of any host draws the same bodies. The forces on a
//! body are summed over fixed tiles of the global body order: within a tile j ascending, then
//! the tiles' sums in ascending tile order. The tiles depend on the body count alone, so the
//! order of every addition is the same whoever owns which block and in whatever order the
//! blocks arrive; the ring keeps each tile's sum until the tiles before it are done.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use transports::comm::Comm;

use crate::npb::kernel::Meter;
use crate::suite::SuiteError;

use super::forces::{lanes_of, tile_sum_fastest, Blocks, Tiles, LANES};
use super::plummer::plummer;

/// How the ranks share the positions every step.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Exchange {
    /// One allgatherv of the position blocks, then all the forces.
    Allgather,
    /// n-1 passes of one block to rank+1, the forces of each block computed as it comes.
    Ring,
}

impl Exchange {
    pub fn name(self) -> &'static str {
        match self {
            Exchange::Allgather => "allgather",
            Exchange::Ring => "ring",
        }
    }
}

/// The default run: the size of TI's Hyperlink test (`./nbody 1000`).
pub const DEFAULT_BODIES: usize = 1000;
/// About 1/280 of the Plummer sphere's crossing time (2 sqrt 2 in these units): the energy
/// drift of 1000 bodies over 100 steps stays near 2e-6 (see [`ENERGY_DRIFT_BOUND`]).
pub const DEFAULT_DT: f64 = 0.01;
/// Plummer softening length: a fraction of the mean interparticle distance of 1000 bodies in
/// the core, long enough that close encounters stay resolved at [`DEFAULT_DT`] (0.02 drifts
/// ten times more).
pub const DEFAULT_SOFTENING: f64 = 0.05;
/// One time unit, about a third of a crossing time.
pub const DEFAULT_STEPS: u64 = 100;

/// What to simulate. G = 1, total mass 1 (Hénon units: the sphere's energy is about -1/4).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub bodies: usize,
    pub dt: f64,
    pub softening: f64,
    pub exchange: Exchange,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            bodies: DEFAULT_BODIES,
            dt: DEFAULT_DT,
            softening: DEFAULT_SOFTENING,
            exchange: Exchange::Allgather,
        }
    }
}

impl Config {
    /// Refuses what cannot run on `ranks` ranks, in one line saying what is valid.
    pub fn check(&self, ranks: usize) -> Result<(), SuiteError> {
        let valid = self.bodies >= 2
            && self.bodies >= ranks
            && self.dt > 0.0
            && self.dt.is_finite()
            && self.softening > 0.0
            && self.softening.is_finite();
        if valid {
            return Ok(());
        }
        Err(SuiteError::Check(format!(
            "nbody needs at least 2 bodies and at least one per rank, a positive finite time step \
             and a positive finite softening; got {} bodies on {ranks} ranks, dt {}, softening {}",
            self.bodies, self.dt, self.softening
        )))
    }
}

/// Pairwise interactions per step (bodies * (bodies - 1)), for interactions per second.
pub fn interactions(bodies: usize) -> f64 {
    bodies as f64 * bodies.saturating_sub(1) as f64
}

/// Largest relative difference ([`max_relative_difference`]) a distributed run's final state
/// may have from the one-rank run. This code reproduces the one-rank run bit for bit, on any
/// rank count and with either exchange (the tests hold it to exactly 0 on uneven blocks), so
/// any difference at all is a fault; the tolerance is not 0 only so the check survives a
/// correct change of rounding (summing in another order, an explicit FMA, a rank built
/// differently). Measured on the default sphere: summing in tiles of 50 instead of 64 moves
/// the state by 6e-16 after 100 steps and 3e-13 after 1000; one ulp on one body's x, by 1.5e-16
/// and 1e-13. Moving one body by 1e-6 moves it by 3.5e-7 after 100 steps, and a block taken
/// from the wrong rank by far more. 1e-9 sits between the two for runs of up to ~1000 steps
/// (rounding differences grow about a thousandfold per thousand steps).
pub const STATE_TOLERANCE: f64 = 1e-9;

/// Bound on the relative energy drift |E_end - E_0| / |E_0| at [`DEFAULT_DT`] and
/// [`DEFAULT_SOFTENING`], for the default run ([`DEFAULT_BODIES`] bodies, [`DEFAULT_STEPS`]
/// steps) and for any run of 256 bodies or more and up to 1000 steps. Leapfrog is symplectic:
/// its energy error oscillates with an amplitude ~ (dt / encounter time)^2 instead of growing
/// step by step. Measured: 1000 bodies 2.6e-6 after 10 steps, 2.1e-6 after 100, 4.1e-6 after
/// 1000; 256 bodies 4.8e-6 after 100, 2.2e-5 after 1000 (the worst case, 5 times below the
/// bound); 4000 bodies 1.5e-7 after 100. (64 bodies reach 7.6e-5: few, heavy bodies meet
/// closely; the bound does not promise them.) A force 10 % wrong drifts by 2e-3 in 40 steps.
pub const ENERGY_DRIFT_BOUND: f64 = 1e-4;

/// Max over bodies of the difference in position relative to the largest radius of `b`,
/// or in velocity relative to its largest speed, whichever is larger. Infinite when the states
/// differ in length or either holds a value that is not finite.
pub fn max_relative_difference(a: &[[f64; 6]], b: &[[f64; 6]]) -> f64 {
    let finite = |s: &[[f64; 6]]| s.iter().flatten().all(|v| v.is_finite());
    if a.len() != b.len() || !finite(a) || !finite(b) {
        return f64::INFINITY;
    }
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let distance = |p: &[f64], q: &[f64]| {
        p.iter()
            .zip(q)
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            .sqrt()
    };
    let scale = |part: Range<usize>| {
        let largest = b.iter().map(|s| norm(&s[part.clone()])).fold(0.0, f64::max);
        if largest > 0.0 {
            largest
        } else {
            1.0
        }
    };
    let (radius, speed) = (scale(0..3), scale(3..6));
    a.iter()
        .zip(b)
        .map(|(x, y)| (distance(&x[..3], &y[..3]) / radius).max(distance(&x[3..], &y[3..]) / speed))
        .fold(0.0, f64::max)
}

const RING_TAG: i32 = 41;

/// This rank's block of bodies and every body's position.
pub struct Nbody {
    cfg: Config,
    rank: usize,
    blocks: Blocks,
    tiles: Tiles,
    /// Every body's mass, in global order.
    mass: Vec<f64>,
    /// Every body's position, block by block, each block packed x..., y..., z....
    all: Vec<f64>,
    /// This rank's bodies, packed as a block of `all` is.
    pos: Vec<f64>,
    vel: Vec<f64>,
    acc: Vec<f64>,
    initial_pos: Vec<f64>,
    initial_vel: Vec<f64>,
    /// The blocks' extents in `all`, for allgatherv.
    counts: Vec<usize>,
    displs: Vec<usize>,
    /// Ring: which blocks have come by this step, and each tile's sums kept until the tiles
    /// before it are done (tile, component, body; bodies padded to whole lanes).
    arrived: Vec<bool>,
    partials: Vec<f64>,
}

impl Nbody {
    /// Draws the same sphere on every rank and keeps this rank's block; ends with the initial
    /// accelerations computed, ready to step.
    pub fn new(comm: &Comm, cfg: &Config) -> Result<Nbody, SuiteError> {
        cfg.check(comm.size())?;
        let mut sim = Nbody::local(cfg, comm.size(), comm.rank());
        sim.reset(comm)?;
        Ok(sim)
    }

    /// The state of rank `rank` of `ranks` without communicating (the caller has checked `cfg`).
    fn local(cfg: &Config, ranks: usize, rank: usize) -> Nbody {
        let bodies = cfg.bodies;
        let blocks = Blocks::even(bodies, ranks);
        let tiles = Tiles::new(bodies, &blocks);
        let mine = blocks.range(rank);
        let len = mine.len();
        let sphere = plummer(bodies);
        let mut initial_pos = vec![0.0; 3 * len];
        let mut initial_vel = vec![0.0; 3 * len];
        for (i, body) in sphere[mine].iter().enumerate() {
            for c in 0..3 {
                initial_pos[c * len + i] = body[c];
                initial_vel[c * len + i] = body[3 + c];
            }
        }
        let padded = len.div_ceil(LANES) * LANES;
        let partials = match cfg.exchange {
            Exchange::Ring => vec![0.0; tiles.count() * 3 * padded],
            Exchange::Allgather => Vec::new(),
        };
        Nbody {
            cfg: *cfg,
            rank,
            counts: (0..ranks).map(|b| blocks.packed(b).len()).collect(),
            displs: (0..ranks).map(|b| blocks.packed(b).start).collect(),
            arrived: vec![false; ranks],
            blocks,
            tiles,
            mass: vec![1.0 / bodies as f64; bodies],
            all: vec![0.0; 3 * bodies],
            pos: initial_pos.clone(),
            vel: initial_vel.clone(),
            acc: vec![0.0; 3 * len],
            initial_pos,
            initial_vel,
            partials,
        }
    }

    fn len(&self) -> usize {
        self.pos.len() / 3
    }

    /// Back to the initial conditions (untimed): positions shared, accelerations computed.
    pub fn reset(&mut self, comm: &Comm) -> Result<(), SuiteError> {
        self.pos.copy_from_slice(&self.initial_pos);
        self.vel.copy_from_slice(&self.initial_vel);
        comm.allgatherv(&self.pos, &mut self.all, &self.counts, &self.displs)?;
        self.forces_from_all();
        Ok(())
    }

    /// One leapfrog step: half kick, drift, positions exchanged, forces, half kick.
    pub fn step(&mut self, comm: &Comm, meter: &mut Meter<'_>) -> Result<(), SuiteError> {
        meter.compute(|| self.kick_drift())?;
        match self.cfg.exchange {
            Exchange::Allgather => {
                comm.allgatherv(&self.pos, &mut self.all, &self.counts, &self.displs)?;
                meter.compute(|| {
                    self.forces_from_all();
                    self.kick();
                })?;
            }
            Exchange::Ring => self.ring(comm, meter)?,
        }
        Ok(())
    }

    fn kick_drift(&mut self) {
        self.kick();
        let dt = self.cfg.dt;
        for (p, v) in self.pos.iter_mut().zip(&self.vel) {
            *p += dt * v;
        }
    }

    fn kick(&mut self) {
        let half = 0.5 * self.cfg.dt;
        for (v, a) in self.vel.iter_mut().zip(&self.acc) {
            *v += half * a;
        }
    }

    /// The forces on this rank's bodies from every position in `all`, tile after tile.
    fn forces_from_all(&mut self) {
        let len = self.len();
        let eps2 = self.cfg.softening * self.cfg.softening;
        let (ax, rest) = self.acc.split_at_mut(len);
        let (ay, az) = rest.split_at_mut(len);
        let out = ax
            .chunks_mut(LANES)
            .zip(ay.chunks_mut(LANES))
            .zip(az.chunks_mut(LANES));
        for (chunk, ((ax, ay), az)) in out.enumerate() {
            let target = lanes_of(&self.pos, len, chunk);
            let mut total = [[0.0; LANES]; 3];
            for tile in 0..self.tiles.count() {
                let part =
                    tile_sum_fastest(&target, eps2, &self.tiles, tile, &self.all, &self.mass);
                for (t, p) in total.iter_mut().zip(&part) {
                    for (t, p) in t.iter_mut().zip(p) {
                        *t += p;
                    }
                }
            }
            for (a, t) in [ax, ay, az].into_iter().zip(&total) {
                a.copy_from_slice(&t[..a.len()]);
            }
        }
    }

    /// The ring: pass the block held to rank+1 and take the next from rank-1, then sum every
    /// tile the block held completes; n-1 passes, the last block summed after them.
    fn ring(&mut self, comm: &Comm, meter: &mut Meter<'_>) -> Result<(), SuiteError> {
        let ranks = self.blocks.count();
        let right = (self.rank + 1) % ranks;
        let left = (self.rank + ranks - 1) % ranks;
        meter.compute(|| {
            let mine = self.blocks.packed(self.rank);
            self.all[mine].copy_from_slice(&self.pos);
            self.arrived.fill(false);
        })?;
        for pass in 0..ranks {
            let held = (self.rank + ranks - pass) % ranks;
            if pass + 1 < ranks {
                let next = (held + ranks - 1) % ranks;
                let (send, recv) = split_blocks(
                    &mut self.all,
                    self.blocks.packed(held),
                    self.blocks.packed(next),
                );
                let got = comm.sendrecv_values(send, right, RING_TAG, recv, left, RING_TAG)?;
                if got.len != std::mem::size_of_val(recv) {
                    return Err(SuiteError::Check(format!(
                        "nbody ring: rank {left} sent {} bytes of block {next}, expected {}",
                        got.len,
                        std::mem::size_of_val(recv)
                    )));
                }
            }
            meter.compute(|| self.sum_completed_tiles(held))?;
        }
        meter.compute(|| {
            self.fold_partials();
            self.kick();
        })
    }

    /// Sums, for this rank's bodies, every tile whose last missing block is `block`.
    fn sum_completed_tiles(&mut self, block: usize) {
        self.arrived[block] = true;
        let range = self.blocks.range(block);
        let tile_len = self.tiles.len;
        let len = self.len();
        let padded = len.div_ceil(LANES) * LANES;
        let eps2 = self.cfg.softening * self.cfg.softening;
        for tile in range.start / tile_len..=(range.end - 1) / tile_len {
            let segs = &self.tiles.segments[self.tiles.of_tile[tile].clone()];
            if !segs.iter().all(|s| self.arrived[s.block]) {
                continue;
            }
            let out = &mut self.partials[tile * 3 * padded..(tile + 1) * 3 * padded];
            for chunk in 0..padded / LANES {
                let target = lanes_of(&self.pos, len, chunk);
                let part =
                    tile_sum_fastest(&target, eps2, &self.tiles, tile, &self.all, &self.mass);
                for (c, p) in part.iter().enumerate() {
                    let at = c * padded + chunk * LANES;
                    out[at..at + LANES].copy_from_slice(p);
                }
            }
        }
    }

    /// The accelerations: the tiles' sums added in ascending tile order (as `forces_from_all`).
    fn fold_partials(&mut self) {
        let len = self.len();
        let padded = len.div_ceil(LANES) * LANES;
        self.acc.fill(0.0);
        for tile in self.partials.chunks_exact(3 * padded) {
            for (acc, part) in self
                .acc
                .chunks_exact_mut(len)
                .zip(tile.chunks_exact(padded))
            {
                for (a, p) in acc.iter_mut().zip(part) {
                    *a += p;
                }
            }
        }
    }

    /// Total energy, kinetic plus softened potential (-m_i m_j / sqrt(r^2 + eps^2) a pair):
    /// each rank's part gathered and added in rank order, so every rank gets the same value.
    pub fn energy(&mut self, comm: &Comm) -> Result<f64, SuiteError> {
        let len = self.len();
        let first = self.blocks.range(self.rank).start;
        let eps2 = self.cfg.softening * self.cfg.softening;
        let mut kinetic = 0.0;
        let mut potential = 0.0;
        for i in 0..len {
            let m = self.mass[first + i];
            let v2: f64 = (0..3).map(|c| self.vel[c * len + i].powi(2)).sum();
            kinetic += 0.5 * m * v2;
            for b in 0..self.blocks.count() {
                let range = self.blocks.range(b);
                let n = range.len();
                let block = &self.all[self.blocks.packed(b)];
                for (k, j) in range.enumerate() {
                    if j == first + i {
                        continue;
                    }
                    let r2: f64 = (0..3)
                        .map(|c| (block[c * n + k] - self.pos[c * len + i]).powi(2))
                        .sum();
                    potential -= 0.5 * m * self.mass[j] / (r2 + eps2).sqrt();
                }
            }
        }
        let mut parts = vec![0.0; 2 * self.blocks.count()];
        comm.allgather(&[kinetic, potential], &mut parts)?;
        Ok(parts.iter().sum())
    }

    /// Every body's (x, y, z, vx, vy, vz) in global order, on every rank.
    pub fn state(&self, comm: &Comm) -> Result<Vec<[f64; 6]>, SuiteError> {
        let len = self.len();
        let mut mine = Vec::with_capacity(6 * len);
        for i in 0..len {
            mine.extend((0..3).map(|c| self.pos[c * len + i]));
            mine.extend((0..3).map(|c| self.vel[c * len + i]));
        }
        let ranks = self.blocks.count();
        let counts: Vec<usize> = (0..ranks).map(|b| 6 * self.blocks.range(b).len()).collect();
        let displs: Vec<usize> = (0..ranks).map(|b| 6 * self.blocks.range(b).start).collect();
        let mut every = vec![0.0; 6 * self.cfg.bodies];
        comm.allgatherv(&mine, &mut every, &counts, &displs)?;
        Ok(every
            .chunks_exact(6)
            .map(|b| std::array::from_fn(|c| b[c]))
            .collect())
    }

    /// The same simulation on one rank without communication: the final state after `steps`.
    /// An invalid `cfg` (see [`Config::check`]) gives an empty state.
    pub fn reference(cfg: &Config, steps: u64) -> Vec<[f64; 6]> {
        if cfg.check(1).is_err() {
            return Vec::new();
        }
        Nbody::local(cfg, 1, 0).run_alone(steps)
    }

    /// Steps a one-rank simulation from its initial conditions `steps` times.
    fn run_alone(mut self, steps: u64) -> Vec<[f64; 6]> {
        self.pos.copy_from_slice(&self.initial_pos);
        self.vel.copy_from_slice(&self.initial_vel);
        self.all.copy_from_slice(&self.pos);
        self.forces_from_all();
        for _ in 0..steps {
            self.kick_drift();
            self.all.copy_from_slice(&self.pos);
            self.forces_from_all();
            self.kick();
        }
        let len = self.len();
        (0..len)
            .map(|i| {
                std::array::from_fn(|c| {
                    let part = if c < 3 { &self.pos } else { &self.vel };
                    part[(c % 3) * len + i]
                })
            })
            .collect()
    }
}

/// Block `send` of `buf` to read and block `recv` to write, two disjoint ranges.
fn split_blocks(buf: &mut [f64], send: Range<usize>, recv: Range<usize>) -> (&[f64], &mut [f64]) {
    if send.start < recv.start {
        let (low, high) = buf.split_at_mut(recv.start);
        (&low[send], &mut high[..recv.len()])
    } else {
        let (low, high) = buf.split_at_mut(send.start);
        (&high[..send.len()], &mut low[recv])
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::nbody::forces::{tile_sum, MAX_TILES, MIN_TILE};
    use crate::npb::testing::on_ranks;

    /// Steps in the distributed tests: a few hundred thousand interactions each keep the whole
    /// set quick, and 40 steps are enough for a wrong force to show in the state and energy.
    const TEST_STEPS: u64 = 40;

    fn config(bodies: usize, exchange: Exchange) -> Config {
        Config {
            bodies,
            exchange,
            ..Config::default()
        }
    }

    type State = Vec<[f64; 6]>;

    /// The one-rank reference, computed once per body count and step count.
    fn reference(bodies: usize, steps: u64) -> State {
        static CACHE: Mutex<Vec<((usize, u64), State)>> = Mutex::new(Vec::new());
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, s)) = cache.iter().find(|(k, _)| *k == (bodies, steps)) {
            return s.clone();
        }
        let s = Nbody::reference(&config(bodies, Exchange::Allgather), steps);
        cache.push(((bodies, steps), s.clone()));
        s
    }

    struct Outcome {
        state: Vec<[f64; 6]>,
        drift: f64,
    }

    /// Runs `steps` steps on `ranks` ranks of `fabric`; every rank's view of the final state
    /// and energy drift, in rank order.
    fn run(fabric: &str, ranks: usize, cfg: Config, steps: u64) -> Vec<Outcome> {
        on_ranks(fabric, ranks, |comm| {
            let mut sim = Nbody::new(comm, &cfg).expect("set-up");
            let mut meter = Meter::new(comm);
            // Twice, so reset is exercised: the second run must start from the same sphere.
            for _ in 0..2 {
                sim.reset(comm).expect("reset");
                for _ in 0..steps {
                    sim.step(comm, &mut meter).expect("step");
                }
            }
            let e_end = sim.energy(comm).expect("energy");
            let state = sim.state(comm).expect("state");
            sim.reset(comm).expect("reset");
            let e0 = sim.energy(comm).expect("energy");
            Outcome {
                state,
                drift: ((e_end - e0) / e0).abs(),
            }
        })
    }

    /// Runs and checks a distributed run against the one-rank reference: the same state and
    /// energy on every rank, the state within tolerance, the drift within bound.
    fn check(fabric: &str, ranks: usize, bodies: usize, exchange: Exchange) -> f64 {
        let out = run(fabric, ranks, config(bodies, exchange), TEST_STEPS);
        let want = reference(bodies, TEST_STEPS);
        for (rank, o) in out.iter().enumerate() {
            assert_eq!(o.state, out[0].state, "rank {rank} sees another state");
            assert_eq!(o.drift, out[0].drift, "rank {rank} sees another energy");
        }
        let diff = max_relative_difference(&out[0].state, &want);
        assert!(
            diff <= STATE_TOLERANCE,
            "{fabric} {ranks} ranks {exchange:?} {bodies} bodies: {diff:e} from the one-rank run"
        );
        assert!(
            out[0].drift < ENERGY_DRIFT_BOUND,
            "{fabric} {ranks} ranks {exchange:?}: energy drift {:e}",
            out[0].drift
        );
        diff
    }

    #[test]
    fn shm_matches_the_one_rank_run_on_1_2_and_4_ranks() {
        for exchange in [Exchange::Allgather, Exchange::Ring] {
            for ranks in [1, 2, 4] {
                check("shm", ranks, DEFAULT_BODIES, exchange);
            }
        }
    }

    #[test]
    fn hyperlink_matches_the_one_rank_run_on_2_3_and_4_ranks() {
        for exchange in [Exchange::Allgather, Exchange::Ring] {
            for ranks in [2, 3, 4] {
                check("hyperlink", ranks, DEFAULT_BODIES, exchange);
            }
        }
    }

    #[test]
    fn uneven_blocks_reproduce_the_one_rank_run_bit_for_bit() {
        for exchange in [Exchange::Allgather, Exchange::Ring] {
            assert_eq!(check("shm", 4, 1001, exchange), 0.0, "{exchange:?}");
            assert_eq!(check("hyperlink", 4, 1001, exchange), 0.0, "{exchange:?}");
            // Blocks shorter than a lane and than a tile, a tile across all four blocks.
            assert_eq!(check("shm", 4, 7, exchange), 0.0, "{exchange:?}");
        }
    }

    #[test]
    fn default_run_keeps_energy_within_bound() {
        let out = run("shm", 2, Config::default(), DEFAULT_STEPS);
        assert!(
            out[0].drift < ENERGY_DRIFT_BOUND,
            "drift {:e}",
            out[0].drift
        );
    }

    #[test]
    fn config_check_refuses_what_cannot_run() {
        let good = Config::default();
        assert!(good.check(4).is_ok());
        let bad = [
            Config { bodies: 1, ..good },
            Config { bodies: 3, ..good },
            Config { dt: 0.0, ..good },
            Config {
                dt: f64::NAN,
                ..good
            },
            Config {
                softening: 0.0,
                ..good
            },
        ];
        for cfg in bad {
            let err = cfg.check(4).expect_err("invalid config accepted");
            assert!(!err.to_string().contains('\n'));
        }
        assert!(Nbody::reference(&Config { bodies: 1, ..good }, 1).is_empty());
    }

    #[test]
    fn exchange_names_are_lower_case_in_serde() {
        for e in [Exchange::Allgather, Exchange::Ring] {
            let json = serde_json::to_string(&e).unwrap();
            assert_eq!(json, format!("\"{}\"", e.name()));
            assert_eq!(serde_json::from_str::<Exchange>(&json).unwrap(), e);
        }
    }

    #[test]
    fn blocks_and_tiles_cover_every_body_once_in_order() {
        for (bodies, ranks) in [(1001, 4), (7, 4), (1000, 3), (5000, 2), (2, 2)] {
            let blocks = Blocks::even(bodies, ranks);
            let lens: Vec<usize> = (0..ranks).map(|b| blocks.range(b).len()).collect();
            assert_eq!(lens.iter().sum::<usize>(), bodies);
            assert!(lens.iter().max().unwrap() - lens.iter().min().unwrap() <= 1);
            for j in 0..bodies {
                assert!(blocks.range(blocks.owner(j)).contains(&j));
            }
            let tiles = Tiles::new(bodies, &blocks);
            assert!(tiles.count() <= MAX_TILES.max(bodies.div_ceil(MIN_TILE)));
            let mut next = 0;
            for t in 0..tiles.count() {
                for seg in &tiles.segments[tiles.of_tile[t].clone()] {
                    assert_eq!(seg.first, next);
                    let range = blocks.range(seg.block);
                    assert_eq!(seg.x, 3 * range.start + (seg.first - range.start));
                    next += seg.len;
                }
            }
            assert_eq!(next, bodies);
        }
    }

    #[test]
    fn plummer_sphere_is_centred_and_bound() {
        let sphere = plummer(DEFAULT_BODIES);
        for c in 0..6 {
            let mean: f64 = sphere.iter().map(|b| b[c]).sum::<f64>() / DEFAULT_BODIES as f64;
            assert!(mean.abs() < 1e-15, "component {c} mean {mean:e}");
        }
        let e = on_ranks("shm", 1, |comm| {
            Nbody::new(comm, &Config::default())
                .unwrap()
                .energy(comm)
                .unwrap()
        })[0];
        // Hénon units: -1/4, less the softening's shallower wells and sampling noise.
        assert!((-0.27..-0.22).contains(&e), "energy {e}");
    }

    #[test]
    fn widest_vectors_give_the_same_bits_as_the_baseline() {
        let cfg = Config::default();
        let sim = Nbody::local(&cfg, 1, 0);
        let all = sim.pos.clone();
        let eps2 = cfg.softening * cfg.softening;
        for chunk in [0, 7, cfg.bodies / LANES - 1] {
            let target = lanes_of(&sim.pos, cfg.bodies, chunk);
            for tile in 0..sim.tiles.count() {
                let base = tile_sum(&target, eps2, &sim.tiles, tile, &all, &sim.mass);
                let fast = tile_sum_fastest(&target, eps2, &sim.tiles, tile, &all, &sim.mass);
                assert_eq!(
                    base.map(|l| l.map(f64::to_bits)),
                    fast.map(|l| l.map(f64::to_bits))
                );
            }
        }
    }

    #[test]
    fn relative_difference_scales_and_flags_what_cannot_compare() {
        let a = vec![
            [1.0, 0.0, 0.0, 0.0, 2.0, 0.0],
            [0.0, -2.0, 0.0, 1.0, 0.0, 0.0],
        ];
        assert_eq!(max_relative_difference(&a, &a), 0.0);
        let mut b = a.clone();
        b[1][0] = 2e-6;
        assert!((max_relative_difference(&b, &a) - 1e-6).abs() < 1e-18);
        b[0][4] = 2.0 + 4e-3;
        assert!((max_relative_difference(&b, &a) - 2e-3).abs() < 1e-15);
        b[0][0] = f64::NAN;
        assert_eq!(max_relative_difference(&b, &a), f64::INFINITY);
        assert_eq!(max_relative_difference(&a[..1], &a), f64::INFINITY);
    }

    /// Measurements for the constants' documentation: energy drift for candidate time steps and
    /// softenings, how one ulp grows, and time per step. `cargo test --release -p suites
    /// nbody::sim::tests::measure -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn measure() {
        for bodies in [64, 256, 1000, 4000] {
            for (dt, eps) in [(0.01, 0.05), (0.01, 0.02), (0.02, 0.05)] {
                let cfg = Config {
                    bodies,
                    dt,
                    softening: eps,
                    exchange: Exchange::Allgather,
                };
                let steps: &[u64] = if bodies > 1000 {
                    &[100]
                } else {
                    &[10, 100, 1000]
                };
                for &steps in steps {
                    let d = run("shm", 1, cfg, steps)[0].drift;
                    println!("bodies {bodies} dt {dt} eps {eps} steps {steps}: drift {d:.2e}");
                }
            }
        }
        let cfg = Config::default();
        for steps in [DEFAULT_STEPS, 1000] {
            let want = Nbody::reference(&cfg, steps);
            let mut nudged = Nbody::local(&cfg, 1, 0);
            nudged.initial_pos[0] = f64::from_bits(nudged.initial_pos[0].to_bits() + 1);
            let ulp = max_relative_difference(&nudged.run_alone(steps), &want);
            let mut reordered = Nbody::local(&cfg, 1, 0);
            reordered.tiles = Tiles::of_len(cfg.bodies, &reordered.blocks, 50);
            let order = max_relative_difference(&reordered.run_alone(steps), &want);
            let mut moved = Nbody::local(&cfg, 1, 0);
            moved.initial_pos[0] += 1e-6;
            let micro = max_relative_difference(&moved.run_alone(steps), &want);
            println!("after {steps} steps: one ulp on body 0 {ulp:e}, tiles of 50 {order:e}, 1e-6 on body 0 {micro:e}");
        }
        let runs = [
            ("shm", 1),
            ("shm", 2),
            ("shm", 4),
            ("hyperlink", 2),
            ("hyperlink", 4),
        ];
        for exchange in [Exchange::Allgather, Exchange::Ring] {
            for (fabric, ranks) in runs {
                let cfg = Config {
                    exchange,
                    ..Config::default()
                };
                let per_step = on_ranks(fabric, ranks, |comm| {
                    let mut sim = Nbody::new(comm, &cfg).unwrap();
                    let mut meter = Meter::new(comm);
                    comm.barrier().unwrap();
                    let t0 = comm.now();
                    for _ in 0..DEFAULT_STEPS {
                        sim.step(comm, &mut meter).unwrap();
                    }
                    comm.barrier().unwrap();
                    let ns = (comm.now() - t0) as f64 / DEFAULT_STEPS as f64;
                    (ns, meter.compute_ns() as f64 / DEFAULT_STEPS as f64)
                })[0];
                println!(
                    "{fabric} {ranks} ranks {}: {:.3} ms/step ({:.3} ms compute), {:.1} M interactions/s",
                    exchange.name(),
                    per_step.0 / 1e6,
                    per_step.1 / 1e6,
                    interactions(DEFAULT_BODIES) / per_step.0 * 1e3
                );
            }
        }
    }
}
