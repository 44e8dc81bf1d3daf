//! MG's operators on one rank's block, over contiguous rows with NPB's precomputed
//! neighbour-row sums and NPB's operand order: the residual, the smoother, restriction,
//! interpolation and the interior norms.

/// The residual operator's coefficients. The stencil leaves out a[1] (zero), as NPB does.
const RESIDUAL: [f64; 4] = [-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0];

/// `out[i] = a[i] + b[i] + c[i] + d[i]`, added in that order.
#[inline(always)]
pub(super) fn sum4(out: &mut [f64], a: &[f64], b: &[f64], c: &[f64], d: &[f64]) {
    let n = out.len();
    let (a, b, c, d) = (&a[..n], &b[..n], &c[..n], &d[..n]);
    for i in 0..n {
        out[i] = a[i] + b[i] + c[i] + d[i];
    }
}

/// Offsets of the rows (i2, i3) of a grid, for the 3x3 neighbourhood of a row.
#[derive(Clone, Copy)]
pub(super) struct Rows {
    pub(super) n1: usize,
    pub(super) plane: usize,
}

impl Rows {
    pub(super) fn new(dims: [usize; 3]) -> Rows {
        Rows {
            n1: dims[0],
            plane: dims[0] * dims[1],
        }
    }
    #[inline(always)]
    pub(super) fn at(self, i2: usize, i3: usize) -> usize {
        i3 * self.plane + i2 * self.n1
    }
    #[inline(always)]
    pub(super) fn row(self, a: &[f64], i2: usize, i3: usize) -> &[f64] {
        &a[self.at(i2, i3)..][..self.n1]
    }
    /// Sums of the four edge neighbours (i2±1, i3±1 one at a time) and of the four corner
    /// neighbours of row (i2, i3), in NPB's order.
    #[inline(always)]
    pub(super) fn cross_sums(
        self,
        a: &[f64],
        i2: usize,
        i3: usize,
        edges: &mut [f64],
        corners: &mut [f64],
    ) {
        let r = |j2, j3| self.row(a, j2, j3);
        sum4(
            edges,
            r(i2 - 1, i3),
            r(i2 + 1, i3),
            r(i2, i3 - 1),
            r(i2, i3 + 1),
        );
        sum4(
            corners,
            r(i2 - 1, i3 - 1),
            r(i2 + 1, i3 - 1),
            r(i2 - 1, i3 + 1),
            r(i2 + 1, i3 + 1),
        );
    }
}

/// Defines `$name` to run `$body_fn` compiled for AVX2 where the CPU has it (checked once per
/// call, a cached flag), and as compiled for the baseline otherwise. The operations and their
/// order are the same, element by element, so the results are identical to the bit; only the
/// vectors are wider. The stencils did a quarter of their work per instruction otherwise: x86-64's
/// baseline has 128-bit vectors.
macro_rules! widened {
    ($(#[$doc:meta])* $name:ident => $body_fn:ident ($($arg:ident : $ty:ty),*)) => {
        $(#[$doc])*
        pub(super) fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                #[target_feature(enable = "avx2")]
                unsafe fn wide($($arg: $ty),*) {
                    $body_fn($($arg),*)
                }
                // SAFETY: the CPU has AVX2 (checked just above).
                return unsafe { wide($($arg),*) };
            }
            $body_fn($($arg),*)
        }
    };
}

widened!(
    /// r = v - A u on the interior (NPB's `resid`); `v` is `None` when it is `r` itself.
    resid => resid_body(u: &[f64], v: Option<&[f64]>, r: &mut [f64], dims: [usize; 3], scratch: &mut Scratch)
);

widened!(
    /// u = u + C r on the interior (NPB's `psinv`).
    psinv => psinv_body(r: &[f64], u: &mut [f64], dims: [usize; 3], c: [f64; 4], scratch: &mut Scratch)
);

#[inline(always)]
fn resid_body(
    u: &[f64],
    v: Option<&[f64]>,
    r: &mut [f64],
    dims: [usize; 3],
    scratch: &mut Scratch,
) {
    let rows = Rows::new(dims);
    let [n1, n2, n3] = dims;
    let (u1, u2) = (&mut scratch.a[..n1], &mut scratch.b[..n1]);
    let [a0, _, a2, a3] = RESIDUAL;
    for i3 in 1..n3 - 1 {
        for i2 in 1..n2 - 1 {
            rows.cross_sums(u, i2, i3, u1, u2);
            let at = rows.at(i2, i3);
            let m = n1 - 2;
            let uc = &u[at + 1..][..m];
            let (u1m, u1p) = (&u1[..m], &u1[2..][..m]);
            let (u2m, u2c, u2p) = (&u2[..m], &u2[1..][..m], &u2[2..][..m]);
            let out = &mut r[at + 1..][..m];
            let minus_au = |i: usize, vi: f64| {
                vi - a0 * uc[i] - a2 * (u2c[i] + u1m[i] + u1p[i]) - a3 * (u2m[i] + u2p[i])
            };
            match v {
                Some(v) => {
                    let v = &v[at + 1..][..m];
                    for i in 0..m {
                        out[i] = minus_au(i, v[i]);
                    }
                }
                None => {
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = minus_au(i, *o);
                    }
                }
            }
        }
    }
}

#[inline(always)]
fn psinv_body(r: &[f64], u: &mut [f64], dims: [usize; 3], c: [f64; 4], scratch: &mut Scratch) {
    let rows = Rows::new(dims);
    let [n1, n2, n3] = dims;
    let (r1, r2) = (&mut scratch.a[..n1], &mut scratch.b[..n1]);
    let [c0, c1, c2, _] = c;
    for i3 in 1..n3 - 1 {
        for i2 in 1..n2 - 1 {
            rows.cross_sums(r, i2, i3, r1, r2);
            let at = rows.at(i2, i3);
            let m = n1 - 2;
            let (rm, rc, rp) = (&r[at..][..m], &r[at + 1..][..m], &r[at + 2..][..m]);
            let (r1m, r1c, r1p) = (&r1[..m], &r1[1..][..m], &r1[2..][..m]);
            let r2c = &r2[1..][..m];
            let out = &mut u[at + 1..][..m];
            for i in 0..m {
                out[i] = out[i]
                    + c0 * rc[i]
                    + c1 * (rm[i] + rp[i] + r1c[i])
                    + c2 * (r2c[i] + r1m[i] + r1p[i]);
            }
        }
    }
}

/// s = P r: the trilinear projection of fine grid `r` onto coarse grid `s` (NPB's `rprj3`).
pub(super) fn rprj3(
    r: &[f64],
    fine: [usize; 3],
    s: &mut [f64],
    coarse: [usize; 3],
    scratch: &mut Scratch,
) {
    if coarse.contains(&2) {
        return;
    }
    // A fine axis of one point lines up with the coarse one differently.
    let shift = fine.map(|m| if m == 3 { 2 } else { 1 });
    let (fr, cr) = (Rows::new(fine), Rows::new(coarse));
    let (x, y) = (&mut scratch.a[..fine[0]], &mut scratch.b[..fine[0]]);
    let count = coarse[0] - 2;
    // The fine column left of coarse column 1's image.
    let w = 2 - shift[0];
    for j3 in 1..coarse[2] - 1 {
        let i3 = 2 * j3 + 1 - shift[2];
        for j2 in 1..coarse[1] - 1 {
            let i2 = 2 * j2 + 1 - shift[1];
            let f = |j2, j3| fr.row(r, j2, j3);
            sum4(
                x,
                f(i2 - 1, i3),
                f(i2 + 1, i3),
                f(i2, i3 - 1),
                f(i2, i3 + 1),
            );
            sum4(
                y,
                f(i2 - 1, i3 - 1),
                f(i2 - 1, i3 + 1),
                f(i2 + 1, i3 - 1),
                f(i2 + 1, i3 + 1),
            );
            let rc = f(i2, i3);
            let out = &mut s[cr.at(j2, j3) + 1..][..count];
            // Each coarse point sees fine columns i1-1, i1, i1+1.
            let columns = |a| fine_columns(a, w, count);
            let points = out
                .iter_mut()
                .zip(columns(rc))
                .zip(columns(x))
                .zip(columns(y));
            for (((o, r), x), y) in points {
                *o = 0.5 * r[1]
                    + 0.25 * (r[0] + r[2] + x[1])
                    + 0.125 * (x[0] + x[2] + y[1])
                    + 0.0625 * (y[0] + y[2]);
            }
        }
    }
}

/// The fine columns (i1-1, i1, i1+1) under coarse columns 1..=count of a row, the first
/// starting at column `w`.
#[inline(always)]
pub(super) fn fine_columns(a: &[f64], w: usize, count: usize) -> impl Iterator<Item = &[f64]> {
    a[w..][..2 * count + 1].windows(3).step_by(2)
}

/// fine[2i] += w_even z[i], fine[2i+1] += w_odd (z[i] + z[i+1]): one fine row of `interp`.
#[inline(always)]
pub(super) fn interp_row(fine: &mut [f64], w_even: f64, w_odd: f64, z: &[f64]) {
    for (f, zw) in fine.chunks_exact_mut(2).zip(z.windows(2)) {
        f[0] += w_even * zw[0];
        f[1] += w_odd * (zw[0] + zw[1]);
    }
}

/// u = u + Q z: adds the trilinear interpolation of coarse grid `z` to fine grid `u` (NPB's
/// `interp`), ghosts included.
pub(super) fn interp(
    z: &[f64],
    coarse: [usize; 3],
    u: &mut [f64],
    fine: [usize; 3],
    scratch: &mut Scratch,
) {
    if fine.contains(&3) {
        return interp_thin(z, coarse, u, fine);
    }
    let [mm1, mm2, mm3] = coarse;
    let (cr, fr) = (Rows::new(coarse), Rows::new(fine));
    let (z1, z2, z3) = (
        &mut scratch.a[..mm1],
        &mut scratch.b[..mm1],
        &mut scratch.c[..mm1],
    );
    let span = 2 * (mm1 - 1);
    for i3 in 0..mm3 - 1 {
        let (lower, upper) = u[2 * i3 * fr.plane..][..2 * fr.plane].split_at_mut(fr.plane);
        for i2 in 0..mm2 - 1 {
            let z00 = cr.row(z, i2, i3);
            let z10 = cr.row(z, i2 + 1, i3);
            let z01 = cr.row(z, i2, i3 + 1);
            let z11 = cr.row(z, i2 + 1, i3 + 1);
            for i in 0..mm1 {
                z1[i] = z10[i] + z00[i];
                z2[i] = z01[i] + z00[i];
                z3[i] = z11[i] + z01[i] + z1[i];
            }
            let (a, b) = lower[2 * i2 * fr.n1..][..2 * fr.n1].split_at_mut(fr.n1);
            let (c, d) = upper[2 * i2 * fr.n1..][..2 * fr.n1].split_at_mut(fr.n1);
            interp_row(&mut a[..span], 1.0, 0.5, z00);
            interp_row(&mut b[..span], 0.5, 0.25, z1);
            interp_row(&mut c[..span], 0.5, 0.25, z2);
            interp_row(&mut d[..span], 0.25, 0.125, z3);
        }
    }
}

/// `interp` when the fine level holds a single point along some axis (many ranks on a small
/// grid): NPB's general form, in its 1-based indices.
pub(super) fn interp_thin(z: &[f64], coarse: [usize; 3], u: &mut [f64], fine: [usize; 3]) {
    let [mm1, mm2, mm3] = coarse;
    let [n1, n2, _] = fine;
    let zc = |i1: usize, i2: usize, i3: usize| z[(i1 - 1) + mm1 * ((i2 - 1) + mm2 * (i3 - 1))];
    let ui = |i1: usize, i2: usize, i3: usize| (i1 - 1) + n1 * ((i2 - 1) + n2 * (i3 - 1));
    // Per axis: the offset of coarse points' fine images (d) and of the midpoints (t).
    let d = fine.map(|n| if n == 3 { 2 } else { 1 });
    let t = fine.map(|n| if n == 3 { 1 } else { 0 });
    for i3 in d[2]..mm3 {
        for i2 in d[1]..mm2 {
            for i1 in d[0]..mm1 {
                u[ui(2 * i1 - d[0], 2 * i2 - d[1], 2 * i3 - d[2])] += zc(i1, i2, i3);
            }
            for i1 in 1..mm1 {
                u[ui(2 * i1 - t[0], 2 * i2 - d[1], 2 * i3 - d[2])] +=
                    0.5 * (zc(i1 + 1, i2, i3) + zc(i1, i2, i3));
            }
        }
        for i2 in 1..mm2 {
            for i1 in d[0]..mm1 {
                u[ui(2 * i1 - d[0], 2 * i2 - t[1], 2 * i3 - d[2])] +=
                    0.5 * (zc(i1, i2 + 1, i3) + zc(i1, i2, i3));
            }
            for i1 in 1..mm1 {
                u[ui(2 * i1 - t[0], 2 * i2 - t[1], 2 * i3 - d[2])] += 0.25
                    * (zc(i1 + 1, i2 + 1, i3)
                        + zc(i1 + 1, i2, i3)
                        + zc(i1, i2 + 1, i3)
                        + zc(i1, i2, i3));
            }
        }
    }
    for i3 in 1..mm3 {
        for i2 in d[1]..mm2 {
            for i1 in d[0]..mm1 {
                u[ui(2 * i1 - d[0], 2 * i2 - d[1], 2 * i3 - t[2])] +=
                    0.5 * (zc(i1, i2, i3 + 1) + zc(i1, i2, i3));
            }
            for i1 in 1..mm1 {
                u[ui(2 * i1 - t[0], 2 * i2 - d[1], 2 * i3 - t[2])] += 0.25
                    * (zc(i1 + 1, i2, i3 + 1)
                        + zc(i1, i2, i3 + 1)
                        + zc(i1 + 1, i2, i3)
                        + zc(i1, i2, i3));
            }
        }
        for i2 in 1..mm2 {
            for i1 in d[0]..mm1 {
                u[ui(2 * i1 - d[0], 2 * i2 - t[1], 2 * i3 - t[2])] += 0.25
                    * (zc(i1, i2 + 1, i3 + 1)
                        + zc(i1, i2, i3 + 1)
                        + zc(i1, i2 + 1, i3)
                        + zc(i1, i2, i3));
            }
            for i1 in 1..mm1 {
                u[ui(2 * i1 - t[0], 2 * i2 - t[1], 2 * i3 - t[2])] += 0.125
                    * (zc(i1 + 1, i2 + 1, i3 + 1)
                        + zc(i1 + 1, i2, i3 + 1)
                        + zc(i1, i2 + 1, i3 + 1)
                        + zc(i1, i2, i3 + 1)
                        + zc(i1 + 1, i2 + 1, i3)
                        + zc(i1 + 1, i2, i3)
                        + zc(i1, i2 + 1, i3)
                        + zc(i1, i2, i3));
            }
        }
    }
}

/// Sum of squares and largest magnitude over this rank's interior. Four partial sums let the
/// loop vectorise; NPB's single running sum differs from it only by rounding.
pub(super) fn interior_norms(r: &[f64], dims: [usize; 3]) -> (f64, f64) {
    const LANES: usize = 4;
    let rows = Rows::new(dims);
    let [n1, n2, n3] = dims;
    let (mut sum, mut max) = ([0.0f64; LANES], [0.0f64; LANES]);
    for i3 in 1..n3 - 1 {
        for i2 in 1..n2 - 1 {
            let interior = &rows.row(r, i2, i3)[1..n1 - 1];
            let chunks = interior.chunks_exact(LANES);
            for (i, &x) in chunks.remainder().iter().enumerate() {
                sum[i] += x * x;
                max[i] = max[i].max(x.abs());
            }
            for c in chunks {
                for l in 0..LANES {
                    sum[l] += c[l] * c[l];
                    max[l] = max[l].max(c[l].abs());
                }
            }
        }
    }
    (
        (sum[0] + sum[1]) + (sum[2] + sum[3]),
        max.into_iter().fold(0.0, f64::max),
    )
}

/// Scratch rows of the stencils, as long as the finest grid's rows.
pub(super) struct Scratch {
    pub(super) a: Vec<f64>,
    pub(super) b: Vec<f64>,
    pub(super) c: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(dims: [usize; 3], seed: u64) -> Vec<f64> {
        let mut x = seed;
        (0..dims.iter().product::<usize>())
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect()
    }

    fn scratch(n1: usize) -> Scratch {
        Scratch {
            a: vec![0.0; n1],
            b: vec![0.0; n1],
            c: vec![0.0; n1],
        }
    }

    /// The widened operators (AVX2 where the CPU has it) give the baseline's results to the
    /// bit: MG's norms, and so its verification, do not depend on the CPU.
    #[test]
    fn widened_stencils_match_the_baseline_to_the_bit() {
        let dims = [34, 18, 10];
        let (u, v) = (grid(dims, 1), grid(dims, 2));
        let bits = |a: &[f64]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let (mut wide, mut base) = (grid(dims, 3), grid(dims, 3));
        resid(&u, Some(&v), &mut wide, dims, &mut scratch(dims[0]));
        resid_body(&u, Some(&v), &mut base, dims, &mut scratch(dims[0]));
        assert_eq!(bits(&wide), bits(&base), "resid");
        assert_ne!(
            bits(&wide),
            bits(&grid(dims, 3)),
            "resid wrote the interior"
        );
        let c = [-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0];
        psinv(&v, &mut wide, dims, c, &mut scratch(dims[0]));
        psinv_body(&v, &mut base, dims, c, &mut scratch(dims[0]));
        assert_eq!(bits(&wide), bits(&base), "psinv");
    }
}
