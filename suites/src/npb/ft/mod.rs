//! NPB FT: a 3-D diffusion equation solved spectrally. A complex field of NPB's random numbers
//! is transformed forward once; then every iteration multiplies the spectrum by the decay
//! factors exp(-4 alpha pi^2 |k|^2 t), transforms it back and takes a checksum of 1024 fixed
//! points, which NPB compares with its reference values per iteration. The FFTs are NPB's own
//! algorithm ([`fft`]), so the checksums agree with NPB's to its 1e-12 tolerance.
//!
//! Distribution follows NPB's layouts for up to nz ranks: one rank holds the whole grid and
//! transforms along x, y and z in place (layout 0D); more ranks each hold a slab of z-planes,
//! transform along x and y, and exchange the grid by one all-to-all into slabs of y with z
//! running fastest for the z transforms (layout 1D). The inverse runs the same way back.

mod fft;

use transports::comm::{Comm, Complex64, ReduceOp};

use self::fft::{Direction, Fft, Strided};
use super::class::Class;
use super::kernel::{Kernel, Meter, Problem, Verification};
use super::random::{power, randlc, vranlc};
use crate::ranks::RankRule;
use crate::suite::{ParamError, SuiteError};

/// NPB's seed and multiplier (5^13) for the initial field.
const SEED: f64 = 314_159_265.0;
const MULTIPLIER: f64 = 1_220_703_125.0;
/// The diffusion constant.
const ALPHA: f64 = 1.0e-6;
/// NPB's relative tolerance on every checksum.
const EPSILON: f64 = 1.0e-12;
/// Side of the tiles the local transposes move, so both sides of a tile stay in cache.
const TILE: usize = 32;

/// Grid (nx, ny, nz) and iterations per class.
fn dims(class: Class) -> (usize, usize, usize, usize) {
    class.pick([
        (64, 64, 64, 6),
        (128, 128, 32, 6),
        (256, 256, 128, 6),
        (512, 256, 256, 20),
        (512, 512, 512, 20),
    ])
}

/// NPB's reference checksums (real, imaginary) after each iteration.
fn references(class: Class) -> &'static [(f64, f64)] {
    match class {
        Class::S => &[
            (5.546087004964e+02, 4.845363331978e+02),
            (5.546385409189e+02, 4.865304269511e+02),
            (5.546148406171e+02, 4.883910722336e+02),
            (5.545423607415e+02, 4.901273169046e+02),
            (5.544255039624e+02, 4.917475857993e+02),
            (5.542683411902e+02, 4.932597244941e+02),
        ],
        Class::W => &[
            (5.673612178944e+02, 5.293246849175e+02),
            (5.631436885271e+02, 5.282149986629e+02),
            (5.594024089970e+02, 5.270996558037e+02),
            (5.560698047020e+02, 5.260027904925e+02),
            (5.530898991250e+02, 5.249400845633e+02),
            (5.504159734538e+02, 5.239212247086e+02),
        ],
        Class::A => &[
            (5.046735008193e+02, 5.114047905510e+02),
            (5.059412319734e+02, 5.098809666433e+02),
            (5.069376896287e+02, 5.098144042213e+02),
            (5.077892868474e+02, 5.101336130759e+02),
            (5.085233095391e+02, 5.104914655194e+02),
            (5.091487099959e+02, 5.107917842803e+02),
        ],
        Class::B => &[
            (5.177643571579e+02, 5.077803458597e+02),
            (5.154521291263e+02, 5.088249431599e+02),
            (5.146409228649e+02, 5.096208912659e+02),
            (5.142378756213e+02, 5.101023387619e+02),
            (5.139626667737e+02, 5.103976610617e+02),
            (5.137423460082e+02, 5.105948019802e+02),
            (5.135547056878e+02, 5.107404165783e+02),
            (5.133910925466e+02, 5.108576573661e+02),
            (5.132470705390e+02, 5.109577278523e+02),
            (5.131197729984e+02, 5.110460304483e+02),
            (5.130070319283e+02, 5.111252433800e+02),
            (5.129070537032e+02, 5.111968077718e+02),
            (5.128182883502e+02, 5.112616233064e+02),
            (5.127393733383e+02, 5.113203605551e+02),
            (5.126691062020e+02, 5.113735928093e+02),
            (5.126064276004e+02, 5.114218460548e+02),
            (5.125504076570e+02, 5.114656139760e+02),
            (5.125002331720e+02, 5.115053595966e+02),
            (5.124551951846e+02, 5.115415130407e+02),
            (5.124146770029e+02, 5.115744692211e+02),
        ],
        Class::C => &[
            (5.195078707457e+02, 5.149019699238e+02),
            (5.155422171134e+02, 5.127578201997e+02),
            (5.144678022222e+02, 5.122251847514e+02),
            (5.140150594328e+02, 5.121090289018e+02),
            (5.137550426810e+02, 5.121143685824e+02),
            (5.135811056728e+02, 5.121496764568e+02),
            (5.134569343165e+02, 5.121870921893e+02),
            (5.133651975661e+02, 5.122193250322e+02),
            (5.132955192805e+02, 5.122454735794e+02),
            (5.132410471738e+02, 5.122663649603e+02),
            (5.131971141679e+02, 5.122830879827e+02),
            (5.131605205716e+02, 5.122965869718e+02),
            (5.131290734194e+02, 5.123075927445e+02),
            (5.131012720314e+02, 5.123166486553e+02),
            (5.130760908195e+02, 5.123241541685e+02),
            (5.130528295923e+02, 5.123304037599e+02),
            (5.130310107773e+02, 5.123356167976e+02),
            (5.130103090133e+02, 5.123399592211e+02),
            (5.129905029333e+02, 5.123435588985e+02),
            (5.129714421109e+02, 5.123465164008e+02),
        ],
    }
}

/// The grid and this rank's part of it.
#[derive(Debug, Clone, Copy)]
struct Grid {
    nx: usize,
    ny: usize,
    nz: usize,
    niter: usize,
    ranks: usize,
    /// z-planes per rank before the exchange, y-planes after it.
    nz_local: usize,
    ny_local: usize,
    /// This rank's first z-plane (before the exchange) and y-plane (after it).
    z0: usize,
    y0: usize,
}

impl Grid {
    fn new(class: Class, ranks: usize, rank: usize) -> Grid {
        let (nx, ny, nz, niter) = dims(class);
        Grid {
            nx,
            ny,
            nz,
            niter,
            ranks,
            nz_local: nz / ranks,
            ny_local: ny / ranks,
            z0: rank * nz / ranks,
            y0: rank * ny / ranks,
        }
    }

    fn total(&self) -> usize {
        self.nx * self.ny * self.nz
    }

    fn local(&self) -> usize {
        self.total() / self.ranks
    }

    /// Lines along y of the (x, y, z-slab) layout.
    fn along_y(&self) -> Strided {
        Strided {
            len: self.ny,
            stride: self.nx,
            width: self.nx,
            groups: self.nz_local,
            group_step: self.nx * self.ny,
        }
    }

    /// Lines along z of the whole (x, y, z) grid (one rank).
    fn along_z(&self) -> Strided {
        Strided {
            len: self.nz,
            stride: self.nx * self.ny,
            width: self.nx,
            groups: self.ny,
            group_step: self.nx,
        }
    }
}

/// NPB's wave-number folding: grid index 0, 1, .., n-1 as frequency 0, 1, .., n/2-1, -n/2,
/// .., -1.
fn frequency(index: usize, n: usize) -> i64 {
    ((index + n / 2) % n) as i64 - (n / 2) as i64
}

/// The largest |k|^2 on the grid, the decay table's last entry.
fn max_wave_number(g: &Grid) -> usize {
    [g.nx, g.ny, g.nz].iter().map(|n| (n / 2) * (n / 2)).sum()
}

/// NPB's `compute_indexmap`: the decay factor exp(-4 alpha pi^2 |k|^2) at every point this
/// rank holds in spectral space, (x, y, z) on one rank, (z, x, y-slab) on several. |k|^2 is
/// an integer, so the factors come from a table of exp over its values: the very numbers
/// NPB's exp per point gives, for a fraction of the exp calls.
fn decay_factors(g: &Grid, table: &mut [f64], twiddle: &mut [f64]) {
    let ap = -4.0 * ALPHA * std::f64::consts::PI * std::f64::consts::PI;
    for (k2, t) in table.iter_mut().enumerate() {
        *t = (ap * k2 as f64).exp();
    }
    let square = |i: usize, n: usize| (frequency(i, n) * frequency(i, n)) as usize;
    if g.ranks == 1 {
        for (z, plane) in twiddle.chunks_exact_mut(g.nx * g.ny).enumerate() {
            let kz = square(z, g.nz);
            for (y, line) in plane.chunks_exact_mut(g.nx).enumerate() {
                let kyz = kz + square(y, g.ny);
                for (x, t) in line.iter_mut().enumerate() {
                    *t = table[kyz + square(x, g.nx)];
                }
            }
        }
    } else {
        for (y, plane) in twiddle.chunks_exact_mut(g.nz * g.nx).enumerate() {
            let ky = square(g.y0 + y, g.ny);
            for (x, line) in plane.chunks_exact_mut(g.nz).enumerate() {
                let kxy = ky + square(x, g.nx);
                for (z, t) in line.iter_mut().enumerate() {
                    *t = table[kxy + square(z, g.nz)];
                }
            }
        }
    }
}

/// NPB's `compute_initial_conditions`: the field is one stream of random numbers over the
/// whole grid in (x, y, z) order, real and imaginary parts alternating; this rank jumps to its
/// first z-plane and draws its slab a line at a time.
fn initial_conditions(g: &Grid, numbers: &mut [f64], u: &mut [Complex64]) {
    let mut seed = SEED;
    let skipped = 2 * (g.nx * g.ny * g.z0) as u64;
    randlc(&mut seed, power(MULTIPLIER, skipped));
    for line in u.chunks_exact_mut(g.nx) {
        vranlc(&mut seed, MULTIPLIER, numbers);
        for (v, pair) in line.iter_mut().zip(numbers.chunks_exact(2)) {
            *v = Complex64::new(pair[0], pair[1]);
        }
    }
}

/// NPB's `evolve`: u0 decays one time step, and u1 gets a copy for the inverse transform
/// to consume.
fn evolve(u0: &mut [Complex64], u1: &mut [Complex64], twiddle: &[f64]) {
    for ((a, b), t) in u0.iter_mut().zip(u1.iter_mut()).zip(twiddle) {
        a.re *= t;
        a.im *= t;
        *b = *a;
    }
}

/// This rank's share of NPB's checksum: the sum of the field at points j (mod nx), 3j (mod
/// ny), 5j (mod nz) for j = 1..1024 that lie in its slab, over the grid size.
fn checksum(g: &Grid, u: &[Complex64]) -> Complex64 {
    let mut sum = Complex64::default();
    for j in 1..=1024 {
        let (x, y, z) = (j % g.nx, (3 * j) % g.ny, (5 * j) % g.nz);
        if (g.z0..g.z0 + g.nz_local).contains(&z) {
            let v = u[x + g.nx * (y + g.ny * (z - g.z0))];
            sum.re += v.re;
            sum.im += v.im;
        }
    }
    let n = g.total() as f64;
    Complex64::new(sum.re / n, sum.im / n)
}

/// `dst` (n2 x n1, n2 fastest) = `src` (n1 x n2, n1 fastest) transposed, a tile at a time
/// (NPB's `transpose2_local`). Within a tile the inner loop runs along whichever array has
/// the longer rows: their power-of-two stride would make the other order evict each cache
/// line between its four writes (or reads).
fn transpose(src: &[Complex64], n1: usize, n2: usize, dst: &mut [Complex64]) {
    assert!(src.len() == n1 * n2 && dst.len() == n1 * n2);
    for j0 in (0..n2).step_by(TILE) {
        let j1 = (j0 + TILE).min(n2);
        for i0 in (0..n1).step_by(TILE) {
            let i1 = (i0 + TILE).min(n1);
            if n1 >= n2 {
                for j in j0..j1 {
                    let row = &src[j * n1 + i0..j * n1 + i1];
                    for (i, v) in (i0..i1).zip(row) {
                        dst[i * n2 + j] = *v;
                    }
                }
            } else {
                for i in i0..i1 {
                    let row = &mut dst[i * n2 + j0..i * n2 + j1];
                    for (j, v) in (j0..j1).zip(row) {
                        *v = src[j * n1 + i];
                    }
                }
            }
        }
    }
}

/// After the all-to-all, `src` holds one block of `runs` runs of `run` values from each rank
/// in turn; `dst` gets, for each run index, the runs of all ranks side by side (NPB's
/// `transpose2_finish`): the exchanged dimension becomes whole again.
fn interleave_blocks(src: &[Complex64], run: usize, runs: usize, dst: &mut [Complex64]) {
    let ranks = src.len() / (run * runs);
    for (p, block) in src.chunks_exact(run * runs).enumerate() {
        for (j, piece) in block.chunks_exact(run).enumerate() {
            let at = (j * ranks + p) * run;
            dst[at..at + run].copy_from_slice(piece);
        }
    }
}

/// The forward 3-D FFT (NPB's `fft(1, x1, x2)`): from `x1` in (x, y, z-slab) into `x2` in
/// spectral layout; `x1` is spent.
fn forward(
    comm: &Comm,
    meter: &mut Meter<'_>,
    g: &Grid,
    fft: &mut Fft,
    x1: &mut [Complex64],
    x2: &mut [Complex64],
) -> Result<(), SuiteError> {
    let dir = Direction::Forward;
    if g.ranks == 1 {
        return meter.compute(|| {
            fft.contiguous(dir, g.nx, x1, None);
            fft.strided(dir, g.along_y(), x1, None);
            fft.strided(dir, g.along_z(), x1, Some(x2));
        });
    }
    meter.compute(|| {
        fft.contiguous(dir, g.nx, x1, None);
        fft.strided(dir, g.along_y(), x1, None);
        transpose(x1, g.nx * g.ny, g.nz_local, x2);
    })?;
    comm.alltoall(x2, x1)?;
    meter.compute(|| {
        interleave_blocks(x1, g.nz_local, g.nx * g.ny_local, x2);
        fft.contiguous(dir, g.nz, x2, None);
    })
}

/// The inverse 3-D FFT (NPB's `fft(-1, x1, x2)`): from `x1` in spectral layout into `x2` in
/// (x, y, z-slab); `x1` is spent.
fn inverse(
    comm: &Comm,
    meter: &mut Meter<'_>,
    g: &Grid,
    fft: &mut Fft,
    x1: &mut [Complex64],
    x2: &mut [Complex64],
) -> Result<(), SuiteError> {
    let dir = Direction::Inverse;
    if g.ranks == 1 {
        return meter.compute(|| {
            fft.strided(dir, g.along_z(), x1, None);
            fft.strided(dir, g.along_y(), x1, None);
            fft.contiguous(dir, g.nx, x1, Some(x2));
        });
    }
    meter.compute(|| {
        fft.contiguous(dir, g.nz, x1, None);
        transpose(x1, g.nz, g.nx * g.ny_local, x2);
    })?;
    comm.alltoall(x2, x1)?;
    meter.compute(|| {
        interleave_blocks(x1, g.nx * g.ny_local, g.nz_local, x2);
        fft.strided(dir, g.along_y(), x2, None);
        fft.contiguous(dir, g.nx, x2, None);
    })
}

/// Why FT cannot run `class` on `ranks` ranks, if it cannot.
fn refusal(class: Class, ranks: usize) -> Option<String> {
    let (_, _, nz, _) = dims(class);
    (ranks == 0 || ranks > nz || !ranks.is_power_of_two()).then(|| {
        format!(
            "FT class {class} splits its {nz} z-planes over the ranks: run it on a power of two \
             of ranks up to {nz}"
        )
    })
}

/// NPB FT on this rank.
pub struct Ft {
    class: Class,
    grid: Grid,
    fft: Fft,
    /// The spectrum (evolving), the copy the inverse transform consumes, and the field.
    u0: Vec<Complex64>,
    u1: Vec<Complex64>,
    u2: Vec<Complex64>,
    /// Decay factor per spectral point, and exp per value of |k|^2 behind it.
    twiddle: Vec<f64>,
    decay_table: Vec<f64>,
    /// One x-line of random numbers.
    numbers: Vec<f64>,
    /// The checksum after each iteration (complete on rank 0 after run(), everywhere after
    /// verify()).
    sums: Vec<Complex64>,
}

impl Ft {
    /// Everything before the iterations, timed or not: NPB's index map, initial conditions,
    /// FFT tables and forward transform, into u0.
    fn set_up_spectrum(&mut self, comm: &Comm, meter: &mut Meter<'_>) -> Result<(), SuiteError> {
        let Ft {
            grid,
            fft,
            u0,
            u1,
            twiddle,
            decay_table,
            numbers,
            ..
        } = self;
        meter.compute(|| {
            decay_factors(grid, decay_table, twiddle);
            initial_conditions(grid, numbers, u1);
            fft.init();
        })?;
        forward(comm, meter, grid, fft, u1, u0)
    }
}

impl Kernel for Ft {
    const NAME: &'static str = "FT";
    const OPERATION: &'static str = "floating point";

    fn ranks() -> RankRule {
        RankRule::PowerOfTwo
    }

    fn check(class: Class, ranks: usize) -> Result<(), ParamError> {
        match refusal(class, ranks) {
            Some(why) => Err(ParamError(why)),
            None => Ok(()),
        }
    }

    fn problem(class: Class) -> Problem {
        let (nx, ny, nz, niter) = dims(class);
        Problem {
            size: format!("{nx:>3}x{ny:>3}x{nz:>3}").trim_start().to_string(),
            iterations: niter as u32,
        }
    }

    fn operations(class: Class) -> f64 {
        let (nx, ny, nz, niter) = dims(class);
        let n = (nx * ny * nz) as f64;
        // NPB writes the coefficients as default (single precision) reals.
        let c = |v: f32| v as f64;
        n * (c(14.8157) + c(7.19641) * n.ln() + (c(5.23518) + c(7.21113) * n.ln()) * niter as f64)
    }

    fn new(comm: &Comm, class: Class) -> Result<Self, SuiteError> {
        if let Some(why) = refusal(class, comm.size()) {
            return Err(SuiteError::Check(why));
        }
        let grid = Grid::new(class, comm.size(), comm.rank());
        let local = grid.local();
        Ok(Ft {
            class,
            grid,
            fft: Fft::new(grid.nx.max(grid.ny).max(grid.nz)),
            u0: vec![Complex64::default(); local],
            u1: vec![Complex64::default(); local],
            u2: vec![Complex64::default(); local],
            twiddle: vec![0.0; local],
            decay_table: vec![0.0; max_wave_number(&grid) + 1],
            numbers: vec![0.0; 2 * grid.nx],
            sums: vec![Complex64::default(); grid.niter],
        })
    }

    /// NPB runs set-up and the forward transform once untimed first, so every page is
    /// touched before its timer starts.
    fn reset(&mut self, comm: &Comm) -> Result<(), SuiteError> {
        let mut untimed = Meter::new(comm);
        self.set_up_spectrum(comm, &mut untimed)?;
        self.sums.fill(Complex64::default());
        Ok(())
    }

    /// NPB's timer covers all of it: index map, initial conditions, FFT tables, the forward
    /// transform and every iteration with its checksum (reduced to rank 0, as NPB does).
    fn run(&mut self, comm: &Comm, meter: &mut Meter<'_>) -> Result<(), SuiteError> {
        self.set_up_spectrum(comm, meter)?;
        let Ft {
            grid,
            fft,
            u0,
            u1,
            u2,
            twiddle,
            sums,
            ..
        } = self;
        for sum in sums.iter_mut() {
            meter.compute(|| evolve(u0, u1, twiddle))?;
            inverse(comm, meter, grid, fft, u1, u2)?;
            let local = meter.compute(|| checksum(grid, u2))?;
            let mut total = [Complex64::default()];
            comm.reduce(&[local], &mut total, ReduceOp::Sum, 0)?;
            *sum = total[0];
        }
        Ok(())
    }

    fn verify(&mut self, comm: &Comm) -> Result<Verification, SuiteError> {
        comm.bcast_values(&mut self.sums, 0)?;
        let mut passed = true;
        let mut lines = Vec::with_capacity(self.sums.len() + 1);
        for (i, (sum, &(re, im))) in self.sums.iter().zip(references(self.class)).enumerate() {
            let error = (sum.re - re).hypot(sum.im - im) / re.hypot(im);
            // A NaN fails too.
            passed &= error <= EPSILON;
            lines.push(format!(
                "T = {:>3}  checksum = {:.12e} {:.12e}  reference {re:.12e} {im:.12e}  \
                 error {error:.3e}",
                i + 1,
                sum.re,
                sum.im
            ));
        }
        lines.push(format!(
            "Result verification {}",
            if passed { "successful" } else { "failed" }
        ));
        Ok(Verification { passed, lines })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_facts_are_npbs() {
        assert_eq!(Ft::problem(Class::S).size, "64x 64x 64");
        assert_eq!(Ft::problem(Class::B).size, "512x256x256");
        assert_eq!(Ft::problem(Class::C).iterations, 20);
        let n = 256.0 * 256.0 * 128.0f64;
        let ops = n * (14.8157 + 7.19641 * n.ln() + (5.23518 + 7.21113 * n.ln()) * 6.0);
        assert!((Ft::operations(Class::A) / ops - 1.0).abs() < 1e-6);
        assert!(Ft::check(Class::W, 32).is_ok());
        let refused = Ft::check(Class::W, 64).unwrap_err();
        assert!(refused.0.contains("up to 32"), "{}", refused.0);
    }

    #[test]
    fn a_slab_of_initial_conditions_continues_the_whole_grid() {
        let whole = Grid::new(Class::S, 1, 0);
        let mut numbers = vec![0.0; 2 * whole.nx];
        let mut field = vec![Complex64::default(); whole.local()];
        initial_conditions(&whole, &mut numbers, &mut field);
        for rank in 0..4 {
            let g = Grid::new(Class::S, 4, rank);
            let mut slab = vec![Complex64::default(); g.local()];
            initial_conditions(&g, &mut numbers, &mut slab);
            assert_eq!(slab[..], field[rank * g.local()..(rank + 1) * g.local()]);
        }
    }

    #[test]
    fn decay_factors_are_npbs_exp_per_point() {
        let g = Grid::new(Class::S, 2, 1);
        let mut table = vec![0.0; max_wave_number(&g) + 1];
        let mut twiddle = vec![0.0; g.local()];
        decay_factors(&g, &mut table, &mut twiddle);
        let ap = -4.0 * ALPHA * std::f64::consts::PI * std::f64::consts::PI;
        let (x, y, z) = (5, 3, 40);
        let (kx, ky, kz) = (frequency(x, 64), frequency(g.y0 + y, 64), frequency(z, 64));
        assert_eq!((frequency(63, 64), frequency(32, 64)), (-1, -32));
        let expect = (ap * (kx * kx + ky * ky + kz * kz) as f64).exp();
        assert_eq!(twiddle[z + g.nz * (x + g.nx * y)], expect);
    }

    #[test]
    fn transpose_and_interleave_reassemble_the_exchanged_axis() {
        // 3 x 5 transposed.
        let src: Vec<Complex64> = (0..15).map(|i| Complex64::new(i as f64, 0.0)).collect();
        let mut dst = vec![Complex64::default(); 15];
        transpose(&src, 3, 5, &mut dst);
        assert_eq!(dst[1].re, 3.0);
        assert_eq!(dst[5].re, 1.0);
        // Two ranks' blocks of 2 runs of 3: runs of rank 0 and 1 alternate.
        let src: Vec<Complex64> = (0..12).map(|i| Complex64::new(i as f64, 0.0)).collect();
        let mut dst = vec![Complex64::default(); 12];
        interleave_blocks(&src, 3, 2, &mut dst);
        let order: Vec<f64> = dst.iter().map(|v| v.re).collect();
        assert_eq!(order, [0., 1., 2., 6., 7., 8., 3., 4., 5., 9., 10., 11.]);
    }

    crate::npb::testing::kernel_tests!(Ft);
}
