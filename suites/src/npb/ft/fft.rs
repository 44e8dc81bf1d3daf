//! The one-dimensional FFTs FT is made of, as NPB specifies them: Swarztrauber's variant of the
//! Stockham radix-2 FFT (NPB's `cfftz`/`fftz2`), with the roots of unity NPB's `fft_init`
//! tabulates, applied to many lines at once. A pass gathers [`BLOCK`] lines of the 3-D array
//! into a small scratch block, transforms them side by side (every butterfly then runs over a
//! run of consecutive values, which vectorises), and scatters them back. The scratch holds
//! real and imaginary parts apart so the butterflies need no shuffles, and the stages run two
//! at a time: the same butterflies with the same roots as NPB's, so the same numbers, with half
//! the trips through the block.
//!
//! The forward transform uses the roots exp(+i pi t / ln) and the inverse their conjugates;
//! neither scales, as in NPB (FT's checksum divides by the grid size instead).

use transports::comm::Complex64;

/// How many lines one pass transforms together (NPB's `fftblock`): enough to fill the vector
/// units, few enough that a block of the longest line (512) stays in the L2 cache.
pub const BLOCK: usize = 16;

/// Which way a transform goes: NPB's `is = 1` (forward) or `is = -1` (inverse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Inverse,
}

/// Lines that run across the array: `len` values `stride` apart, in `groups` groups of `width`
/// neighbouring lines; group `g` starts at `g * group_step`. Lines along y of an (x, y, z)
/// array are `len = ny, stride = nx, width = nx, groups = nz, group_step = nx * ny`.
#[derive(Debug, Clone, Copy)]
pub struct Strided {
    pub len: usize,
    pub stride: usize,
    pub width: usize,
    pub groups: usize,
    pub group_step: usize,
}

/// NPB's roots of unity and the scratch block, sized for lines up to `max_len` long.
pub struct Fft {
    /// `roots[ln + t] = exp(i pi t / ln)` for every stage width `ln = 1, 2, 4, .. max_len / 2`
    /// and `t < ln`: each stage reads its roots as one consecutive run (`roots[0]` is unused).
    roots: Vec<Complex64>,
    max_len: usize,
    /// Two copies of a block (real and imaginary parts apart): the Stockham stages go back and
    /// forth between them.
    a_re: Vec<f64>,
    a_im: Vec<f64>,
    b_re: Vec<f64>,
    b_im: Vec<f64>,
}

impl Fft {
    /// Allocates the tables for lines of up to `max_len` values (a power of two); the roots
    /// are filled by [`Fft::init`], which NPB counts as part of the benchmark.
    pub fn new(max_len: usize) -> Fft {
        assert!(
            max_len.is_power_of_two(),
            "FFT length {max_len} is a power of two"
        );
        let block = BLOCK * max_len;
        Fft {
            roots: vec![Complex64::default(); max_len],
            max_len,
            a_re: vec![0.0; block],
            a_im: vec![0.0; block],
            b_re: vec![0.0; block],
            b_im: vec![0.0; block],
        }
    }

    /// Tabulates the roots of unity (NPB's `fft_init`).
    pub fn init(&mut self) {
        let pi = std::f64::consts::PI;
        let mut ln = 1;
        while ln < self.max_len {
            let step = pi / ln as f64;
            for (t, root) in self.roots[ln..2 * ln].iter_mut().enumerate() {
                let angle = t as f64 * step;
                *root = Complex64::new(angle.cos(), angle.sin());
            }
            ln *= 2;
        }
    }

    /// Transforms every line of `data` taken as consecutive lines of `len` values (NPB's
    /// `cffts1`), in place or, given `out`, into `out`.
    pub fn contiguous(
        &mut self,
        dir: Direction,
        len: usize,
        data: &mut [Complex64],
        mut out: Option<&mut [Complex64]>,
    ) {
        assert!(len.is_power_of_two() && len <= self.max_len && data.len().is_multiple_of(len));
        let lines = data.len() / len;
        let mut first = 0;
        while first < lines {
            let width = BLOCK.min(lines - first);
            let span = first * len..(first + width) * len;
            // A line's values go down a column of the block.
            let (a_re, a_im) = (&mut self.a_re[..len * width], &mut self.a_im[..len * width]);
            gather_columns(&data[span.clone()], len, a_re, a_im);
            let in_a = self.transform(dir, len, width);
            let (re, im) = if in_a {
                (&self.a_re, &self.a_im)
            } else {
                (&self.b_re, &self.b_im)
            };
            let target = match out.as_deref_mut() {
                Some(o) => &mut o[span],
                None => &mut data[span],
            };
            scatter_columns(&re[..len * width], &im[..len * width], len, target);
            first += width;
        }
    }

    /// Transforms every line `lines` describes (NPB's `cffts2` and `cffts3`), in place or,
    /// given `out`, into `out`.
    pub fn strided(
        &mut self,
        dir: Direction,
        lines: Strided,
        data: &mut [Complex64],
        mut out: Option<&mut [Complex64]>,
    ) {
        let Strided {
            len,
            stride,
            width: group_width,
            groups,
            group_step,
        } = lines;
        assert!(len.is_power_of_two() && len <= self.max_len);
        for g in 0..groups {
            let base = g * group_step;
            let mut first = 0;
            while first < group_width {
                let width = BLOCK.min(group_width - first);
                let start = base + first;
                // Each point along the line brings `width` neighbouring values: a block row.
                let rows = self.a_re[..len * width]
                    .chunks_exact_mut(width)
                    .zip(self.a_im[..len * width].chunks_exact_mut(width));
                for (t, (re, im)) in rows.enumerate() {
                    let at = start + t * stride;
                    for ((v, r), i) in data[at..at + width].iter().zip(re).zip(im) {
                        *r = v.re;
                        *i = v.im;
                    }
                }
                let in_a = self.transform(dir, len, width);
                let (re, im) = if in_a {
                    (&self.a_re, &self.a_im)
                } else {
                    (&self.b_re, &self.b_im)
                };
                let target: &mut [Complex64] = match out.as_deref_mut() {
                    Some(o) => o,
                    None => data,
                };
                let rows = re[..len * width]
                    .chunks_exact(width)
                    .zip(im[..len * width].chunks_exact(width));
                for (t, (re, im)) in rows.enumerate() {
                    let at = start + t * stride;
                    for ((v, r), i) in target[at..at + width].iter_mut().zip(re).zip(im) {
                        *v = Complex64::new(*r, *i);
                    }
                }
                first += width;
            }
        }
    }

    /// Transforms the `width` lines of length `len` in block `a` (NPB's `cfftz`); returns
    /// whether the result is in `a` (else it is in `b`: NPB copies it back, the caller here
    /// reads it where it is). Stages go two at a time, which computes exactly NPB's stages
    /// but keeps the intermediate in registers.
    fn transform(&mut self, dir: Direction, len: usize, width: usize) -> bool {
        let m = len.trailing_zeros();
        let n = len * width;
        let (mut src_re, mut src_im) = (&mut self.a_re[..n], &mut self.a_im[..n]);
        let (mut dst_re, mut dst_im) = (&mut self.b_re[..n], &mut self.b_im[..n]);
        let mut in_a = true;
        let mut l = 1;
        while l <= m {
            let src = (&*src_re, &*src_im);
            let dst = (&mut *dst_re, &mut *dst_im);
            if l < m {
                stage_pair(&self.roots, dir, l, m, width, src, dst);
                l += 2;
            } else {
                stage(&self.roots, dir, l, m, width, src, dst);
                l += 1;
            }
            std::mem::swap(&mut src_re, &mut dst_re);
            std::mem::swap(&mut src_im, &mut dst_im);
            in_a = !in_a;
        }
        in_a
    }
}

/// Rows of the block a gather or scatter handles at a time: its lines' pieces and rows stay
/// in L1 together.
const TILE_ROWS: usize = 32;

/// Lines of `len` values from `lines` into the columns of a block (real and imaginary parts
/// apart). Lines go in pairs, so each row gets two neighbouring values per store.
fn gather_columns(lines: &[Complex64], len: usize, re: &mut [f64], im: &mut [f64]) {
    let width = lines.len() / len;
    if !width.is_multiple_of(2) {
        for (j, line) in lines.chunks_exact(len).enumerate() {
            for (t, v) in line.iter().enumerate() {
                re[t * width + j] = v.re;
                im[t * width + j] = v.im;
            }
        }
        return;
    }
    let tile = TILE_ROWS.min(len);
    for t0 in (0..len).step_by(tile) {
        for (pair, two) in lines.chunks_exact(2 * len).enumerate() {
            let (first, second) = two.split_at(len);
            let pieces = first[t0..t0 + tile].iter().zip(&second[t0..t0 + tile]);
            for (t, (a, b)) in (t0..).zip(pieces) {
                let at = t * width + 2 * pair;
                re[at..at + 2].copy_from_slice(&[a.re, b.re]);
                im[at..at + 2].copy_from_slice(&[a.im, b.im]);
            }
        }
    }
}

/// The columns of a block back into lines of `len` values, as [`gather_columns`] took them.
fn scatter_columns(re: &[f64], im: &[f64], len: usize, lines: &mut [Complex64]) {
    let width = lines.len() / len;
    if !width.is_multiple_of(2) {
        for (j, line) in lines.chunks_exact_mut(len).enumerate() {
            for (t, v) in line.iter_mut().enumerate() {
                *v = Complex64::new(re[t * width + j], im[t * width + j]);
            }
        }
        return;
    }
    let tile = TILE_ROWS.min(len);
    for t0 in (0..len).step_by(tile) {
        for (pair, two) in lines.chunks_exact_mut(2 * len).enumerate() {
            let (first, second) = two.split_at_mut(len);
            let pieces = first[t0..t0 + tile]
                .iter_mut()
                .zip(&mut second[t0..t0 + tile]);
            for (t, (a, b)) in (t0..).zip(pieces) {
                let at = t * width + 2 * pair;
                let (r, i) = (&re[at..at + 2], &im[at..at + 2]);
                *a = Complex64::new(r[0], i[0]);
                *b = Complex64::new(r[1], i[1]);
            }
        }
    }
}

/// A root of unity as `dir` uses it: conjugated for the inverse.
#[inline(always)]
fn root(roots: &[Complex64], at: usize, dir: Direction) -> (f64, f64) {
    let w = roots[at];
    match dir {
        Direction::Forward => (w.re, w.im),
        Direction::Inverse => (w.re, -w.im),
    }
}

/// A block cut into its four quarters.
fn quarters(v: &[f64]) -> [&[f64]; 4] {
    let quarter = v.len() / 4;
    let (a, b) = v.split_at(2 * quarter);
    let (q0, q1) = a.split_at(quarter);
    let (q2, q3) = b.split_at(quarter);
    [q0, q1, q2, q3]
}

/// Stages `l` and `l + 1` of `m` in one pass: each group of four rows a quarter of the
/// block apart goes through NPB's two radix-2 butterflies of stage `l` and then the two of
/// stage `l + 1` that consume their results, with the same roots in the same order.
fn stage_pair(
    roots: &[Complex64],
    dir: Direction,
    l: u32,
    m: u32,
    width: usize,
    (src_re, src_im): (&[f64], &[f64]),
    (dst_re, dst_im): (&mut [f64], &mut [f64]),
) {
    let lk = 1usize << (l - 1);
    let li = 1usize << (m - l);
    let run = lk * width;
    let (re, im) = (quarters(src_re), quarters(src_im));
    let targets = dst_re
        .chunks_exact_mut(4 * run)
        .zip(dst_im.chunks_exact_mut(4 * run));
    for (i, (z_re, z_im)) in targets.enumerate() {
        let w1 = root(roots, li + i, dir);
        let w2 = root(roots, li + li / 2 + i, dir);
        let w3 = root(roots, li / 2 + i, dir);
        let at = i * run..(i + 1) * run;
        let x_re = [
            &re[0][at.clone()],
            &re[1][at.clone()],
            &re[2][at.clone()],
            &re[3][at.clone()],
        ];
        let x_im = [
            &im[0][at.clone()],
            &im[1][at.clone()],
            &im[2][at.clone()],
            &im[3][at],
        ];
        let (z01_re, z23_re) = z_re.split_at_mut(2 * run);
        let (z0_re, z1_re) = z01_re.split_at_mut(run);
        let (z2_re, z3_re) = z23_re.split_at_mut(run);
        let (z01_im, z23_im) = z_im.split_at_mut(2 * run);
        let (z0_im, z1_im) = z01_im.split_at_mut(run);
        let (z2_im, z3_im) = z23_im.split_at_mut(run);
        let n = run;
        let (x0r, x1r, x2r, x3r) = (&x_re[0][..n], &x_re[1][..n], &x_re[2][..n], &x_re[3][..n]);
        let (x0i, x1i, x2i, x3i) = (&x_im[0][..n], &x_im[1][..n], &x_im[2][..n], &x_im[3][..n]);
        let (z0r, z1r, z2r, z3r) = (
            &mut z0_re[..n],
            &mut z1_re[..n],
            &mut z2_re[..n],
            &mut z3_re[..n],
        );
        let (z0i, z1i, z2i, z3i) = (
            &mut z0_im[..n],
            &mut z1_im[..n],
            &mut z2_im[..n],
            &mut z3_im[..n],
        );
        for k in 0..n {
            // Stage l: rows half a line apart, (x0, x2) and (x1, x3).
            let (ar, ai) = (x0r[k] + x2r[k], x0i[k] + x2i[k]);
            let (dr, di) = (x0r[k] - x2r[k], x0i[k] - x2i[k]);
            let (br, bi) = (w1.0 * dr - w1.1 * di, w1.0 * di + w1.1 * dr);
            let (cr, ci) = (x1r[k] + x3r[k], x1i[k] + x3i[k]);
            let (er, ei) = (x1r[k] - x3r[k], x1i[k] - x3i[k]);
            let (fr, fi) = (w2.0 * er - w2.1 * ei, w2.0 * ei + w2.1 * er);
            // Stage l + 1: (a, c) and (b, f).
            z0r[k] = ar + cr;
            z0i[k] = ai + ci;
            z1r[k] = br + fr;
            z1i[k] = bi + fi;
            let (gr, gi) = (ar - cr, ai - ci);
            z2r[k] = w3.0 * gr - w3.1 * gi;
            z2i[k] = w3.0 * gi + w3.1 * gr;
            let (hr, hi) = (br - fr, bi - fi);
            z3r[k] = w3.0 * hr - w3.1 * hi;
            z3i[k] = w3.0 * hi + w3.1 * hr;
        }
    }
}

/// Stage `l` of `m` of the Stockham FFT (NPB's `fftz2`) on a block of lines `width` wide:
/// element pairs half a line apart combine into pairs `2^(l-1)` rows apart, the second
/// rotated by a root of unity.
fn stage(
    roots: &[Complex64],
    dir: Direction,
    l: u32,
    m: u32,
    width: usize,
    (src_re, src_im): (&[f64], &[f64]),
    (dst_re, dst_im): (&mut [f64], &mut [f64]),
) {
    let lk = 1usize << (l - 1);
    let li = 1usize << (m - l);
    let run = lk * width;
    let half = src_re.len() / 2;
    let (lo_re, hi_re) = src_re.split_at(half);
    let (lo_im, hi_im) = src_im.split_at(half);
    let sources = lo_re
        .chunks_exact(run)
        .zip(hi_re.chunks_exact(run))
        .zip(lo_im.chunks_exact(run).zip(hi_im.chunks_exact(run)));
    let targets = dst_re
        .chunks_exact_mut(2 * run)
        .zip(dst_im.chunks_exact_mut(2 * run));
    for ((((x1_re, x2_re), (x1_im, x2_im)), (y_re, y_im)), w) in
        sources.zip(targets).zip(&roots[li..2 * li])
    {
        let (w_re, w_im) = match dir {
            Direction::Forward => (w.re, w.im),
            Direction::Inverse => (w.re, -w.im),
        };
        let (y1_re, y2_re) = y_re.split_at_mut(run);
        let (y1_im, y2_im) = y_im.split_at_mut(run);
        butterflies(
            (w_re, w_im),
            (x1_re, x1_im),
            (x2_re, x2_im),
            (y1_re, y1_im),
            (y2_re, y2_im),
        );
    }
}

/// `y1 = x1 + x2`, `y2 = w (x1 - x2)` over runs of equal length.
#[inline(always)]
fn butterflies(
    (w_re, w_im): (f64, f64),
    (x1_re, x1_im): (&[f64], &[f64]),
    (x2_re, x2_im): (&[f64], &[f64]),
    (y1_re, y1_im): (&mut [f64], &mut [f64]),
    (y2_re, y2_im): (&mut [f64], &mut [f64]),
) {
    let n = x1_re.len();
    let (x1_im, x2_re, x2_im) = (&x1_im[..n], &x2_re[..n], &x2_im[..n]);
    let (y1_re, y1_im) = (&mut y1_re[..n], &mut y1_im[..n]);
    let (y2_re, y2_im) = (&mut y2_re[..n], &mut y2_im[..n]);
    for k in 0..n {
        let (ar, ai, br, bi) = (x1_re[k], x1_im[k], x2_re[k], x2_im[k]);
        y1_re[k] = ar + br;
        y1_im[k] = ai + bi;
        let (dr, di) = (ar - br, ai - bi);
        y2_re[k] = w_re * dr - w_im * di;
        y2_im[k] = w_re * di + w_im * dr;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DFT with NPB's sign: forward sums x_j exp(+2 pi i jk / n).
    fn dft(x: &[Complex64], dir: Direction) -> Vec<Complex64> {
        let n = x.len();
        let sign = if dir == Direction::Forward { 1.0 } else { -1.0 };
        (0..n)
            .map(|k| {
                let mut s = Complex64::default();
                for (j, v) in x.iter().enumerate() {
                    let a = sign * 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                    s.re += v.re * a.cos() - v.im * a.sin();
                    s.im += v.re * a.sin() + v.im * a.cos();
                }
                s
            })
            .collect()
    }

    fn signal(n: usize, seed: usize) -> Vec<Complex64> {
        (0..n)
            .map(|i| {
                let t = (i * 7 + seed * 13) as f64;
                Complex64::new((t * 0.37).sin(), (t * 0.11).cos())
            })
            .collect()
    }

    fn close(a: &[Complex64], b: &[Complex64]) {
        for (x, y) in a.iter().zip(b) {
            assert!(
                (x.re - y.re).abs() < 1e-9 && (x.im - y.im).abs() < 1e-9,
                "{x:?} != {y:?}"
            );
        }
    }

    #[test]
    fn contiguous_lines_match_the_dft_both_ways() {
        for len in [2, 4, 8, 32, 64] {
            let mut fft = Fft::new(64);
            fft.init();
            // 21 lines: a full block and a partial one of odd width.
            let lines: Vec<Vec<Complex64>> = (0..21).map(|s| signal(len, s)).collect();
            let mut data: Vec<Complex64> = lines.concat();
            for dir in [Direction::Forward, Direction::Inverse] {
                let mut out = vec![Complex64::default(); data.len()];
                fft.contiguous(dir, len, &mut data, Some(&mut out));
                for (line, got) in lines.iter().zip(out.chunks_exact(len)) {
                    close(got, &dft(line, dir));
                }
            }
            fft.contiguous(Direction::Forward, len, &mut data, None);
            fft.contiguous(Direction::Inverse, len, &mut data, None);
            let scaled: Vec<Complex64> = lines
                .concat()
                .iter()
                .map(|v| Complex64::new(v.re * len as f64, v.im * len as f64))
                .collect();
            close(&data, &scaled);
        }
    }

    #[test]
    fn strided_lines_match_the_dft() {
        // An (x, y, z) = (20, 8, 3) array, transformed along y.
        let (nx, ny, nz) = (20, 8, 3);
        let mut data = signal(nx * ny * nz, 5);
        let original = data.clone();
        let mut fft = Fft::new(8);
        fft.init();
        let along_y = Strided {
            len: ny,
            stride: nx,
            width: nx,
            groups: nz,
            group_step: nx * ny,
        };
        fft.strided(Direction::Inverse, along_y, &mut data, None);
        for z in 0..nz {
            for x in 0..nx {
                let at = |y: usize| x + nx * (y + ny * z);
                let line: Vec<Complex64> = (0..ny).map(|y| original[at(y)]).collect();
                let got: Vec<Complex64> = (0..ny).map(|y| data[at(y)]).collect();
                close(&got, &dft(&line, Direction::Inverse));
            }
        }
    }
}
