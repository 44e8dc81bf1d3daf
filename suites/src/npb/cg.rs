//! NPB CG: the inverse power method on NPB's random sparse symmetric matrix, each outer step
//! solving with 25 unpreconditioned conjugate-gradient iterations, as NPB 3.4's MPI version
//! distributes it. The ranks form NPB's 2D grid (nprows x npcols, npcols = nprows or
//! 2 * nprows); each holds one block of the matrix in CSR and the vectors of its column block.
//! A matrix-vector product is summed across the process row by NPB's exchanges with partners
//! at halving distances, then moved to the transpose rank; dot products are summed by pairwise
//! exchanges within the row. So every rank sends what NPB's rank would, to the same partner, in
//! the same order. The matrix is NPB's `makea` bit for bit (the same random sequence,
//! duplicates summed in the same order); the vector arithmetic follows NPB's loop for loop,
//! except that each row of a product is summed in four partial sums. On one rank the timed
//! section runs with no communication at all.

use transports::comm::Comm;

use super::class::Class;
use super::kernel::{Kernel, Meter, Problem, Verification};
use super::random::randlc;
use crate::ranks::RankRule;
use crate::suite::{ParamError, SuiteError};

/// CG iterations per outer step of the power method (NPB's `cgitmax`).
const CG_ITERATIONS: usize = 25;
/// Reciprocal condition number NPB gives the matrix, the same for every class.
const RCOND: f64 = 0.1;
/// Seed and multiplier of the matrix's random sequence (NPB's `tran`, `amult`).
const SEED: f64 = 314_159_265.0;
const MULTIPLIER: f64 = 1_220_703_125.0;
/// NPB's verification tolerance on zeta, relative.
const EPSILON: f64 = 1e-10;

/// Tags: one per exchange kind and step, so no message can be taken for another's.
const TAG_ROW_SUM: i32 = 10;
const TAG_DOT: i32 = 40;
const TAG_TRANSPOSE: i32 = 70;

/// One class's problem, from NPB's `setparams` and the reference zeta from `cg.f`.
#[derive(Debug, Clone, Copy)]
struct Params {
    na: usize,
    nonzer: usize,
    niter: usize,
    shift: f64,
    zeta_ref: f64,
}

impl Params {
    fn of(class: Class) -> Params {
        let (na, nonzer, niter, shift, zeta_ref) = class.pick([
            (1400, 7, 15, 10.0, 8.597_177_507_864_8),
            (7000, 8, 15, 12.0, 10.362_595_087_124),
            (14000, 11, 15, 20.0, 17.130_235_054_029),
            (75000, 13, 75, 60.0, 22.712_745_482_631),
            (150000, 15, 75, 110.0, 28.973_605_592_845),
        ]);
        Params {
            na,
            nonzer,
            niter,
            shift,
            zeta_ref,
        }
    }
}

/// One step of the row-wise sum of a matrix-vector product: send a piece of this rank's
/// partial result to `partner`, receive the partner's matching piece and add it in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RowStep {
    partner: usize,
    send_start: usize,
    send_len: usize,
    /// Where the received piece lands and how long it is.
    recv_start: usize,
    recv_len: usize,
}

/// This rank's place in NPB's process grid (NPB's `setup_proc_info` and
/// `setup_submatrix_info`), with indices from 0.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Grid {
    rank: usize,
    nprows: usize,
    npcols: usize,
    first_row: usize,
    rows: usize,
    first_col: usize,
    cols: usize,
    /// The part of the summed rows this rank hands to its transpose rank.
    send_start: usize,
    send_len: usize,
    transpose_partner: usize,
    /// Dot-product partners within the row, farthest first (NPB's `reduce_exch_proc`).
    dot_partners: Vec<usize>,
    /// The matrix-vector sum's steps in the order NPB makes them, nearest partner first.
    row_steps: Vec<RowStep>,
}

/// The `part`-th of `parts` nearly equal pieces of 0..n, the first `n % parts` one longer:
/// (start, length).
fn piece(n: usize, parts: usize, part: usize) -> (usize, usize) {
    let (base, extra) = (n / parts, n % parts);
    if part < extra {
        (part * (base + 1), base + 1)
    } else {
        (extra * (base + 1) + (part - extra) * base, base)
    }
}

impl Grid {
    fn new(na: usize, nprocs: usize, rank: usize) -> Grid {
        let log_p = nprocs.trailing_zeros();
        let nprows = 1usize << (log_p / 2);
        let npcols = 1usize << (log_p - log_p / 2);
        let square = nprows == npcols;
        let (proc_row, proc_col) = (rank / npcols, rank % npcols);
        // Where two ranks share one block's columns, the even one takes the first half.
        let even = rank.is_multiple_of(2);

        let (first_row, rows) = piece(na, nprows, proc_row);
        let (first_col, cols) = if square {
            piece(na, npcols, proc_col)
        } else {
            // Two neighbouring columns of ranks split one row-sized block between them, so
            // the transpose partner's half of its rows is exactly this rank's columns.
            let (start, size) = piece(na, npcols / 2, proc_col / 2);
            let first_half = size.div_ceil(2);
            if even {
                (start, first_half)
            } else {
                (start + first_half, size / 2)
            }
        };

        let (send_start, send_len) = if square {
            (0, rows)
        } else if even {
            (0, rows.div_ceil(2))
        } else {
            (rows.div_ceil(2), rows / 2)
        };

        let transpose_partner = if square {
            (rank % nprows) * nprows + rank / nprows
        } else {
            2 * (((rank / 2) % nprows) * nprows + rank / 2 / nprows) + rank % 2
        };

        let steps = npcols.trailing_zeros() as usize;
        let dot_partners: Vec<usize> = (0..steps)
            .map(|i| {
                let span = npcols >> i;
                let col = (proc_col + span / 2) % span + proc_col / span * span;
                proc_row * npcols + col
            })
            .collect();

        let row_steps = (0..steps)
            .rev()
            .map(|i| {
                let partner = dot_partners[i];
                if square {
                    RowStep {
                        partner,
                        send_start,
                        send_len,
                        recv_start: send_start,
                        recv_len: rows,
                    }
                } else if i == steps - 1 {
                    // The first step halves: each neighbour keeps one half and gets the
                    // other's contribution to it.
                    RowStep {
                        partner,
                        send_start: if even { send_len } else { 0 },
                        send_len: rows - send_len,
                        recv_start: send_start,
                        recv_len: send_len,
                    }
                } else {
                    RowStep {
                        partner,
                        send_start,
                        send_len,
                        recv_start: send_start,
                        recv_len: send_len,
                    }
                }
            })
            .collect();

        Grid {
            rank,
            nprows,
            npcols,
            first_row,
            rows,
            first_col,
            cols,
            send_start,
            send_len,
            transpose_partner,
            dot_partners,
            row_steps,
        }
    }

    fn single(&self) -> bool {
        self.nprows * self.npcols == 1
    }
}

/// This rank's block of the matrix in CSR, columns relative to the block's first.
#[derive(Debug, Clone, PartialEq)]
struct Csr {
    row_start: Vec<usize>,
    col: Columns,
    value: Vec<f64>,
}

/// NPB's random sparse vectors, one per row of the outer-product sum: for outer step `i`,
/// `entries[starts[i]..starts[i + 1]]` holds (index, value) pairs (NPB's `sprnvc` followed by
/// `vecset`, setting element `i` to 0.5).
struct OuterVectors {
    entries: Vec<(usize, f64)>,
    starts: Vec<usize>,
}

impl OuterVectors {
    fn generate(na: usize, nonzer: usize) -> OuterVectors {
        let mut seed = SEED;
        // NPB draws one number (its initial zeta) before generating the matrix.
        randlc(&mut seed, MULTIPLIER);
        let scale = na.next_power_of_two() as f64;
        let mut marked = vec![false; na];
        let mut entries = Vec::with_capacity(na * (nonzer + 1));
        let mut starts = Vec::with_capacity(na + 1);
        starts.push(0);
        for outer in 0..na {
            let first = entries.len();
            while entries.len() - first < nonzer {
                let value = randlc(&mut seed, MULTIPLIER);
                let index = (scale * randlc(&mut seed, MULTIPLIER)) as usize;
                if index < na && !marked[index] {
                    marked[index] = true;
                    entries.push((index, value));
                }
            }
            let vector = &mut entries[first..];
            for &(index, _) in vector.iter() {
                marked[index] = false;
            }
            match vector.iter_mut().find(|(index, _)| *index == outer) {
                Some(entry) => entry.1 = 0.5,
                None => entries.push((outer, 0.5)),
            }
            starts.push(entries.len());
        }
        OuterVectors { entries, starts }
    }

    /// Calls `element(row, col, value)` for every term of the sum of scaled outer products
    /// that falls in the block, in NPB's order (outer step, then column, then row).
    fn for_each_in_block(
        &self,
        na: usize,
        grid: &Grid,
        mut element: impl FnMut(usize, usize, f64),
    ) {
        let ratio = RCOND.powf(1.0 / na as f64);
        let rows = grid.first_row..grid.first_row + grid.rows;
        let cols = grid.first_col..grid.first_col + grid.cols;
        let mut size = 1.0;
        for bounds in self.starts.windows(2) {
            let vector = &self.entries[bounds[0]..bounds[1]];
            for &(col, col_value) in vector {
                if cols.contains(&col) {
                    let scale = size * col_value;
                    for &(row, row_value) in vector {
                        if rows.contains(&row) {
                            element(row, col, row_value * scale);
                        }
                    }
                }
            }
            size *= ratio;
        }
    }
}

impl Csr {
    /// NPB's `makea` and `sparse` for this rank's block: the scaled outer products, then
    /// (rcond - shift) on the diagonal, bucketed by row in generation order, duplicates summed
    /// in that order and kept in order of first appearance.
    fn make(params: &Params, grid: &Grid) -> Csr {
        let vectors = OuterVectors::generate(params.na, params.nonzer);
        let diagonal = grid.first_row.max(grid.first_col)
            ..(grid.first_row + grid.rows).min(grid.first_col + grid.cols);

        let mut row_start = vec![0usize; grid.rows + 1];
        vectors.for_each_in_block(params.na, grid, |row, _, _| {
            row_start[row - grid.first_row + 1] += 1;
        });
        for i in diagonal.clone() {
            row_start[i - grid.first_row + 1] += 1;
        }
        for j in 0..grid.rows {
            row_start[j + 1] += row_start[j];
        }

        let terms = row_start[grid.rows];
        let mut col = vec![0u32; terms];
        let mut value = vec![0.0; terms];
        let mut next = row_start.clone();
        let mut place = |row: usize, c: usize, v: f64| {
            let slot = &mut next[row - grid.first_row];
            col[*slot] = (c - grid.first_col) as u32;
            value[*slot] = v;
            *slot += 1;
        };
        vectors.for_each_in_block(params.na, grid, &mut place);
        for i in diagonal {
            place(i, i, RCOND - params.shift);
        }

        // Sum duplicates in place: a row's output never starts after its input does.
        let mut sum = vec![0.0; grid.cols];
        let mut seen = vec![false; grid.cols];
        let mut order: Vec<usize> = Vec::new();
        let mut kept = 0;
        for j in 0..grid.rows {
            let terms = row_start[j]..row_start[j + 1];
            order.clear();
            for k in terms {
                let c = col[k] as usize;
                sum[c] += value[k];
                if !seen[c] && sum[c] != 0.0 {
                    seen[c] = true;
                    order.push(c);
                }
            }
            row_start[j] = kept;
            for &c in &order {
                seen[c] = false;
                let v = std::mem::take(&mut sum[c]);
                if v != 0.0 {
                    col[kept] = c as u32;
                    value[kept] = v;
                    kept += 1;
                }
            }
        }
        row_start[grid.rows] = kept;
        col.truncate(kept);
        value.truncate(kept);
        value.shrink_to_fit();
        let col = if grid.cols <= 1 << 16 {
            Columns::Narrow(col.into_iter().map(|c| c as u16).collect())
        } else {
            col.shrink_to_fit();
            Columns::Wide(col)
        };
        Csr {
            row_start,
            col,
            value,
        }
    }

    /// out = A v.
    #[inline]
    fn multiply(&self, v: &[f64], out: &mut [f64]) {
        match &self.col {
            Columns::Narrow(col) => multiply_rows(&self.row_start, col, &self.value, v, out),
            Columns::Wide(col) => multiply_rows(&self.row_start, col, &self.value, v, out),
        }
    }

    /// The column of the `k`-th stored element.
    #[cfg(test)]
    fn column(&self, k: usize) -> usize {
        match &self.col {
            Columns::Narrow(col) => col[k].position(),
            Columns::Wide(col) => col[k].position(),
        }
    }
}

/// A block's column indices in the narrowest type that holds them: the product streams the
/// whole matrix from memory every time, and 2-byte indices cut its bytes by a sixth.
#[derive(Debug, Clone, PartialEq)]
enum Columns {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

trait ColumnIndex: Copy {
    fn position(self) -> usize;
}

impl ColumnIndex for u16 {
    #[inline(always)]
    fn position(self) -> usize {
        self as usize
    }
}

impl ColumnIndex for u32 {
    #[inline(always)]
    fn position(self) -> usize {
        self as usize
    }
}

/// out = A v over CSR rows. Each row is summed in four interleaved partial sums rather than
/// NPB's single running sum, so the additions overlap instead of waiting on each other; the
/// rounding differs in the last bits and zeta still matches NPB's reference to about 1e-14.
#[inline]
fn multiply_rows<I: ColumnIndex>(
    row_start: &[usize],
    col: &[I],
    value: &[f64],
    v: &[f64],
    out: &mut [f64],
) {
    for (o, bounds) in out.iter_mut().zip(row_start.windows(2)) {
        let (cols, vals) = (&col[bounds[0]..bounds[1]], &value[bounds[0]..bounds[1]]);
        let (cols4, vals4) = (cols.chunks_exact(4), vals.chunks_exact(4));
        let (cols_rest, vals_rest) = (cols4.remainder(), vals4.remainder());
        let mut partial = [0.0f64; 4];
        for (c, a) in cols4.zip(vals4) {
            for i in 0..4 {
                partial[i] += a[i] * v[c[i].position()];
            }
        }
        let mut sum = (partial[0] + partial[1]) + (partial[2] + partial[3]);
        for (c, a) in cols_rest.iter().zip(vals_rest) {
            sum += a * v[c.position()];
        }
        *o = sum;
    }
}

/// The vectors of the CG iteration: x, z, p, q, r over this rank's columns, w (the partial
/// product) and `incoming` (a partner's part of it) over its rows.
struct Vectors {
    x: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    q: Vec<f64>,
    r: Vec<f64>,
    w: Vec<f64>,
    incoming: Vec<f64>,
}

impl Vectors {
    fn new(grid: &Grid) -> Vectors {
        let cols = || vec![0.0; grid.cols];
        Vectors {
            x: vec![1.0; grid.cols],
            z: cols(),
            p: cols(),
            q: cols(),
            r: cols(),
            w: vec![0.0; grid.rows],
            incoming: vec![0.0; grid.rows],
        }
    }
}

#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |s, (x, y)| s + x * y)
}

/// The start of a CG solve: z = 0, r = p = x; returns this rank's part of r.r.
fn cg_start(x: &[f64], z: &mut [f64], r: &mut [f64], p: &mut [f64]) -> f64 {
    z.fill(0.0);
    r.copy_from_slice(x);
    p.copy_from_slice(x);
    dot(r, r)
}

/// z += alpha p, r -= alpha q; returns this rank's part of the new r.r.
#[inline]
fn cg_update(alpha: f64, p: &[f64], q: &[f64], z: &mut [f64], r: &mut [f64]) -> f64 {
    let mut rr = 0.0;
    for (((zj, rj), pj), qj) in z.iter_mut().zip(r.iter_mut()).zip(p).zip(q) {
        *zj += alpha * pj;
        *rj -= alpha * qj;
        rr += *rj * *rj;
    }
    rr
}

/// p = r + beta p.
#[inline]
fn cg_direction(beta: f64, r: &[f64], p: &mut [f64]) {
    for (pj, rj) in p.iter_mut().zip(r) {
        *pj = rj + beta * *pj;
    }
}

/// This rank's part of ||x - A z||^2, with A z in `az`.
fn residual_part(x: &[f64], az: &[f64]) -> f64 {
    x.iter().zip(az).fold(0.0, |s, (a, b)| {
        let d = a - b;
        s + d * d
    })
}

/// x = z / ||z||, from the summed ||z||^2.
fn normalise(zz: f64, z: &[f64], x: &mut [f64]) {
    let scale = 1.0 / zz.sqrt();
    for (xj, zj) in x.iter_mut().zip(z) {
        *xj = scale * zj;
    }
}

/// One outer step on a single rank: the CG solve and the new x; returns (zeta, ||r||).
fn power_step_alone(a: &Csr, v: &mut Vectors, shift: f64) -> (f64, f64) {
    let Vectors { x, z, p, q, r, .. } = v;
    let mut rho = cg_start(x, z, r, p);
    for _ in 0..CG_ITERATIONS {
        a.multiply(p, q);
        let alpha = rho / dot(p, q);
        let rho0 = rho;
        rho = cg_update(alpha, p, q, z, r);
        cg_direction(rho / rho0, r, p);
    }
    a.multiply(z, r);
    let rnorm = residual_part(x, r).sqrt();
    let (xz, zz) = (dot(x, z), dot(z, z));
    normalise(zz, z, x);
    (shift + 1.0 / xz, rnorm)
}

/// Sums `local` over the process row by NPB's pairwise exchanges (an allreduce in the row).
fn row_total<const N: usize>(
    comm: &Comm,
    grid: &Grid,
    mut local: [f64; N],
) -> Result<[f64; N], SuiteError> {
    let mut incoming = [0.0; N];
    for (step, &partner) in grid.dot_partners.iter().enumerate() {
        let tag = TAG_DOT + step as i32;
        comm.sendrecv_values(&local, partner, tag, &mut incoming, partner, tag)?;
        for (l, i) in local.iter_mut().zip(&incoming) {
            *l += i;
        }
    }
    Ok(local)
}

/// Sums the partial products `w` across the process row and hands the rank's piece to its
/// transpose rank, receiving this rank's columns of the product into `out`.
fn sum_and_transpose(
    comm: &Comm,
    meter: &mut Meter<'_>,
    grid: &Grid,
    w: &mut [f64],
    incoming: &mut [f64],
    out: &mut [f64],
) -> Result<(), SuiteError> {
    for (step, s) in grid.row_steps.iter().enumerate() {
        let tag = TAG_ROW_SUM + step as i32;
        let received = &mut incoming[s.recv_start..s.recv_start + s.recv_len];
        comm.sendrecv_values(
            &w[s.send_start..s.send_start + s.send_len],
            s.partner,
            tag,
            received,
            s.partner,
            tag,
        )?;
        let target = &mut w[s.recv_start..s.recv_start + s.recv_len];
        meter.compute(|| {
            for (t, r) in target.iter_mut().zip(received.iter()) {
                *t += r;
            }
        })?;
    }
    let piece = &w[grid.send_start..grid.send_start + grid.send_len];
    if grid.transpose_partner == grid.rank {
        // A rank on the grid's diagonal is its own transpose (NPB's MPI sends to itself).
        meter.compute(|| out.copy_from_slice(piece))?;
    } else {
        let p = grid.transpose_partner;
        comm.sendrecv_values(piece, p, TAG_TRANSPOSE, out, p, TAG_TRANSPOSE)?;
    }
    Ok(())
}

/// One outer step over the grid (NPB's `conj_grad` and the normalisation after it); returns
/// (zeta, ||r||).
fn power_step_grid(
    comm: &Comm,
    meter: &mut Meter<'_>,
    grid: &Grid,
    a: &Csr,
    v: &mut Vectors,
    shift: f64,
) -> Result<(f64, f64), SuiteError> {
    let Vectors {
        x,
        z,
        p,
        q,
        r,
        w,
        incoming,
    } = v;
    let part = meter.compute(|| cg_start(x, z, r, p))?;
    let [mut rho] = row_total(comm, grid, [part])?;
    for _ in 0..CG_ITERATIONS {
        meter.compute(|| a.multiply(p, w))?;
        sum_and_transpose(comm, meter, grid, w, incoming, q)?;
        let part = meter.compute(|| dot(p, q))?;
        let [pq] = row_total(comm, grid, [part])?;
        let alpha = rho / pq;
        let rho0 = rho;
        let part = meter.compute(|| cg_update(alpha, p, q, z, r))?;
        [rho] = row_total(comm, grid, [part])?;
        let beta = rho / rho0;
        meter.compute(|| cg_direction(beta, r, p))?;
    }
    meter.compute(|| a.multiply(z, w))?;
    sum_and_transpose(comm, meter, grid, w, incoming, r)?;
    let part = meter.compute(|| residual_part(x, r))?;
    let [rr] = row_total(comm, grid, [part])?;

    let parts = meter.compute(|| [dot(x, z), dot(z, z)])?;
    let [xz, zz] = row_total(comm, grid, parts)?;
    meter.compute(|| normalise(zz, z, x))?;
    Ok((shift + 1.0 / xz, rr.sqrt()))
}

/// NPB's CG on this rank's block.
pub struct Cg {
    params: Params,
    grid: Grid,
    matrix: Csr,
    vectors: Vectors,
    zeta: f64,
    rnorm: f64,
}

impl Cg {
    /// One outer step of the power method, on the fast path when there is one rank.
    fn power_step(&mut self, comm: &Comm, meter: &mut Meter<'_>) -> Result<(), SuiteError> {
        let (a, v, shift) = (&self.matrix, &mut self.vectors, self.params.shift);
        (self.zeta, self.rnorm) = if self.grid.single() {
            meter.compute(|| power_step_alone(a, v, shift))?
        } else {
            power_step_grid(comm, meter, &self.grid, a, v, shift)?
        };
        Ok(())
    }
}

impl Kernel for Cg {
    const NAME: &'static str = "CG";
    const OPERATION: &'static str = "floating point";

    fn ranks() -> RankRule {
        RankRule::PowerOfTwo
    }

    fn check(class: Class, ranks: usize) -> Result<(), ParamError> {
        let na = Params::of(class).na;
        // Every rank needs at least a row and a column of its own (two rows where two
        // neighbours split one block's columns).
        let npcols = 1usize << (ranks.trailing_zeros() - ranks.trailing_zeros() / 2);
        if npcols > na / 2 {
            return Err(ParamError(format!(
                "CG class {class} (na = {na}) runs on at most {} ranks",
                na / 2
            )));
        }
        Ok(())
    }

    fn problem(class: Class) -> Problem {
        let p = Params::of(class);
        Problem {
            size: p.na.to_string(),
            iterations: p.niter as u32,
        }
    }

    fn operations(class: Class) -> f64 {
        let p = Params::of(class);
        let nz = (p.nonzer * (p.nonzer + 1)) as f64;
        2.0 * p.niter as f64 * p.na as f64 * (3.0 + nz + CG_ITERATIONS as f64 * (5.0 + nz) + 3.0)
    }

    fn new(comm: &Comm, class: Class) -> Result<Self, SuiteError> {
        Self::check(class, comm.size()).map_err(|e| SuiteError::Check(e.0))?;
        let params = Params::of(class);
        let grid = Grid::new(params.na, comm.size(), comm.rank());
        let matrix = Csr::make(&params, &grid);
        let vectors = Vectors::new(&grid);
        Ok(Cg {
            params,
            grid,
            matrix,
            vectors,
            zeta: 0.0,
            rnorm: 0.0,
        })
    }

    fn reset(&mut self, comm: &Comm) -> Result<(), SuiteError> {
        // NPB runs one untimed step to touch code and data, then starts again from x = 1.
        self.vectors.x.fill(1.0);
        let mut untimed = Meter::new(comm);
        self.power_step(comm, &mut untimed)?;
        self.vectors.x.fill(1.0);
        self.zeta = 0.0;
        self.rnorm = 0.0;
        comm.barrier()?;
        Ok(())
    }

    fn run(&mut self, comm: &Comm, meter: &mut Meter<'_>) -> Result<(), SuiteError> {
        for _ in 0..self.params.niter {
            self.power_step(comm, meter)?;
        }
        Ok(())
    }

    fn verify(&mut self, comm: &Comm) -> Result<Verification, SuiteError> {
        // NPB verifies rank 0's zeta; every rank takes it so all give one verdict.
        let mut zeta = [self.zeta];
        comm.bcast_values(&mut zeta, 0)?;
        let [zeta] = zeta;
        let reference = self.params.zeta_ref;
        let err = (zeta - reference).abs() / reference;
        let passed = err <= EPSILON;
        let lines = if passed {
            vec![
                format!("Zeta is    {zeta:20.13e}"),
                format!("Error is   {err:20.13e}"),
            ]
        } else {
            vec![
                format!("Zeta                {zeta:20.13e}"),
                format!("The correct zeta is {reference:20.13e}"),
                format!("Error is            {err:20.13e}"),
            ]
        };
        Ok(Verification { passed, lines })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_follow_npb_shapes_and_pair_up() {
        for na in [1400, 7000, 14000, 1401, 999] {
            for nprocs in [1usize, 2, 4, 8, 16, 32, 64] {
                let grids: Vec<Grid> = (0..nprocs).map(|r| Grid::new(na, nprocs, r)).collect();
                let g0 = &grids[0];
                assert_eq!(g0.nprows * g0.npcols, nprocs);
                assert!(g0.npcols == g0.nprows || g0.npcols == 2 * g0.nprows);
                for g in &grids {
                    // The transpose partner's piece of its rows is exactly this rank's columns.
                    let t = &grids[g.transpose_partner];
                    assert_eq!(t.transpose_partner, g.rank, "na {na} p {nprocs}");
                    assert_eq!(
                        t.first_row + t.send_start,
                        g.first_col,
                        "na {na} p {nprocs}"
                    );
                    assert_eq!(t.send_len, g.cols, "na {na} p {nprocs} rank {}", g.rank);
                    // Row exchanges are symmetric, within the row, and sizes match.
                    for (k, s) in g.row_steps.iter().enumerate() {
                        let other = &grids[s.partner];
                        assert_eq!(other.first_row, g.first_row);
                        let back = other.row_steps[k];
                        assert_eq!(back.partner, g.rank);
                        assert_eq!(back.send_len, s.recv_len);
                        assert_eq!(back.send_start, s.recv_start);
                    }
                }
                // Every column is owned by exactly one rank of each process row.
                for row in 0..g0.nprows {
                    let mut cols: Vec<(usize, usize)> = grids[row * g0.npcols..][..g0.npcols]
                        .iter()
                        .map(|g| (g.first_col, g.cols))
                        .collect();
                    cols.sort();
                    let mut next = 0;
                    for (start, len) in cols {
                        assert_eq!(start, next);
                        next += len;
                    }
                    assert_eq!(next, na);
                }
            }
        }
    }

    /// The whole matrix as (row, col) -> value, gathered from every block's CSR.
    fn entries(params: &Params, nprocs: usize) -> Vec<(usize, usize, u64)> {
        let mut all = Vec::new();
        for rank in 0..nprocs {
            let g = Grid::new(params.na, nprocs, rank);
            let a = Csr::make(params, &g);
            for (j, b) in a.row_start.windows(2).enumerate() {
                for k in b[0]..b[1] {
                    let c = a.column(k) + g.first_col;
                    all.push((j + g.first_row, c, a.value[k].to_bits()));
                }
            }
        }
        all.sort_unstable();
        all
    }

    #[test]
    fn blocks_tile_the_one_rank_matrix_bit_for_bit() {
        let params = Params::of(Class::S);
        let whole = entries(&params, 1);
        for nprocs in [2, 4, 8] {
            assert_eq!(entries(&params, nprocs), whole, "{nprocs} ranks");
        }
        // Symmetric up to rounding, with the shifted diagonal on every row.
        let lookup: std::collections::HashMap<(usize, usize), f64> = whole
            .iter()
            .map(|&(r, c, v)| ((r, c), f64::from_bits(v)))
            .collect();
        for (&(r, c), &v) in &lookup {
            let t = lookup[&(c, r)];
            assert!((v - t).abs() <= 1e-14 * v.abs().max(1.0), "({r},{c})");
        }
        assert!((0..params.na).all(|i| lookup.contains_key(&(i, i))));
    }

    #[test]
    fn products_match_a_plain_row_sum_with_either_index_width() {
        let params = Params::of(Class::S);
        let grid = Grid::new(params.na, 1, 0);
        let narrow = Csr::make(&params, &grid);
        let Columns::Narrow(col) = &narrow.col else {
            panic!("class S indices fit in 2 bytes");
        };
        let wide = Csr {
            col: Columns::Wide(col.iter().map(|&c| c as u32).collect()),
            ..narrow.clone()
        };
        let v: Vec<f64> = (0..params.na).map(|i| 1.0 / (1 + i % 13) as f64).collect();
        let (mut a, mut b) = (vec![0.0; params.na], vec![0.0; params.na]);
        narrow.multiply(&v, &mut a);
        wide.multiply(&v, &mut b);
        assert_eq!(a, b);
        for (j, bounds) in narrow.row_start.windows(2).enumerate() {
            let plain: f64 = (bounds[0]..bounds[1])
                .map(|k| narrow.value[k] * v[narrow.column(k)])
                .sum();
            assert!(
                (a[j] - plain).abs() <= 1e-12 * plain.abs().max(1.0),
                "row {j}"
            );
        }
    }

    #[test]
    fn operations_follow_npb_formula() {
        // 2 * 15 * 14000 * (3 + 132 + 25 * 137 + 3)
        assert_eq!(Cg::operations(Class::A), 2.0 * 15.0 * 14000.0 * 3563.0);
        assert_eq!(Cg::problem(Class::B).size, "75000");
        assert_eq!(Cg::problem(Class::C).iterations, 75);
        assert!(Cg::check(Class::S, 1024).is_ok());
        assert!(Cg::check(Class::S, 1 << 22).is_err());
    }

    #[test]
    fn eight_ranks_make_a_two_by_four_grid_and_verify() {
        crate::npb::testing::assert_verifies::<Cg>("shm", 8, Class::S);
    }

    crate::npb::testing::kernel_tests!(Cg);
}
