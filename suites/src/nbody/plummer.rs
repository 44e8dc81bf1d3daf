//! nbody's initial conditions: a Plummer sphere in Hénon units drawn from NPB's generator with
//! arithmetic and square roots only, so every rank and every host draws the same bodies.

use crate::npb::random::randlc;

/// A point uniform in the open unit ball (not the centre) and its squared distance from it.
pub(super) fn in_ball(uniform: &mut impl FnMut() -> f64) -> ([f64; 3], f64) {
    loop {
        let p = [
            2.0 * uniform() - 1.0,
            2.0 * uniform() - 1.0,
            2.0 * uniform() - 1.0,
        ];
        let s = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
        if s > 0.0 && s < 1.0 {
            return (p, s);
        }
    }
}

/// Draws the Plummer sphere (Aarseth, Hénon & Wielen 1974) with only arithmetic and square
/// roots, so every host draws the same bodies: a point p uniform in the unit ball has
/// |p|^3 uniform, which is the mass fraction inside the Plummer radius r = |p| / sqrt(1 - |p|^2);
/// the speed is rejection-sampled from q^2 (1 - q^2)^(7/2) times the escape speed. Scaled to
/// Hénon units, centre of mass at rest at the origin. Returns (x, y, z, vx, vy, vz) per body.
pub(super) fn plummer(bodies: usize) -> Vec<[f64; 6]> {
    const SEED: f64 = 271_828_183.0;
    const MULTIPLIER: f64 = 1_220_703_125.0;
    /// Bodies beyond 10 Plummer radii (1.5 % of the mass) are redrawn.
    const MAX_RADIUS: f64 = 10.0;
    let mut seed = SEED;
    let mut uniform = move || randlc(&mut seed, MULTIPLIER);
    let max_s = MAX_RADIUS * MAX_RADIUS / (1.0 + MAX_RADIUS * MAX_RADIUS);
    // Plummer's scale length in units where E = -1/4 with G = M = 1.
    let scale = 3.0 * std::f64::consts::PI / 16.0;
    let mut out: Vec<[f64; 6]> = (0..bodies)
        .map(|_| {
            let (p, s) = loop {
                let (p, s) = in_ball(&mut uniform);
                if s <= max_s {
                    break (p, s);
                }
            };
            let stretch = 1.0 / (1.0 - s).sqrt();
            let r2 = s / (1.0 - s);
            let q = loop {
                let (q, g) = (uniform(), 0.1 * uniform());
                let w = 1.0 - q * q;
                if g < q * q * w * w * w * w.sqrt() {
                    break q;
                }
            };
            let speed = q * (2.0 / (1.0 + r2).sqrt()).sqrt();
            let (d, ds) = in_ball(&mut uniform);
            let along = speed / ds.sqrt();
            let vs = 1.0 / scale.sqrt();
            [
                p[0] * stretch * scale,
                p[1] * stretch * scale,
                p[2] * stretch * scale,
                d[0] * along * vs,
                d[1] * along * vs,
                d[2] * along * vs,
            ]
        })
        .collect();
    let mut centre = [0.0; 6];
    for body in &out {
        for (c, v) in centre.iter_mut().zip(body) {
            *c += v;
        }
    }
    for c in &mut centre {
        *c /= bodies as f64;
    }
    for body in &mut out {
        for (v, c) in body.iter_mut().zip(&centre) {
            *v -= c;
        }
    }
    out
}
