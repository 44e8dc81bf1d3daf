//! NPB's pseudo-random generator: the linear congruential sequence x_{k+1} = a * x_k mod 2^46,
//! returning x_{k+1} / 2^46 in (0, 1). NPB specifies it in double precision (`randlc`,
//! `vranlc`), splitting the operands into 23-bit halves so every product is exact; the
//! sequence is therefore a sequence of integers below 2^46, and the low 46 bits of a 64-bit
//! integer product are exactly those NPB computes. Working on integers gives bit-identical
//! numbers at a fraction of the cost, which matters for EP (2^25 to 2^33 numbers per run).
//!
//! Seeds and multipliers keep NPB's form: integer values held in `f64`.

/// 2^46 - 1: the modulus's mask.
const MASK: u64 = (1 << 46) - 1;
/// 2^-46, exact in f64.
pub const R46: f64 = 1.0 / (1u64 << 46) as f64;

/// An integer-valued f64 below 2^46 as the integer.
#[inline(always)]
fn int(x: f64) -> u64 {
    debug_assert!((0.0..(1u64 << 46) as f64).contains(&x) && x.fract() == 0.0);
    x as u64
}

/// One step: advances the seed `x` by multiplier `a` and returns the new value over 2^46
/// (NPB's `randlc`).
#[inline]
pub fn randlc(x: &mut f64, a: f64) -> f64 {
    let next = int(a).wrapping_mul(int(*x)) & MASK;
    *x = next as f64;
    next as f64 * R46
}

/// Fills `y` with the next `y.len()` numbers of the sequence and leaves `x` at the last seed
/// (NPB's `vranlc`).
#[inline]
pub fn vranlc(x: &mut f64, a: f64, y: &mut [f64]) {
    let a = int(a);
    let mut s = int(*x);
    for v in y.iter_mut() {
        s = a.wrapping_mul(s) & MASK;
        *v = s as f64 * R46;
    }
    *x = s as f64;
}

/// a^n mod 2^46, as a multiplier: jumping n steps ahead is one multiplication by it (how each
/// rank finds its part of a shared sequence).
pub fn power(a: f64, mut n: u64) -> f64 {
    let mut base = int(a);
    let mut acc: u64 = 1;
    while n > 0 {
        if n & 1 == 1 {
            acc = acc.wrapping_mul(base) & MASK;
        }
        base = base.wrapping_mul(base) & MASK;
        n >>= 1;
    }
    acc as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NPB's randlc as its specification writes it: 23-bit halves in double precision.
    fn randlc_spec(x: &mut f64, a: f64) -> f64 {
        let r23 = 0.5f64.powi(23);
        let t23 = 2f64.powi(23);
        let r46 = r23 * r23;
        let t46 = t23 * t23;
        let t1 = r23 * a;
        let a1 = t1.trunc();
        let a2 = a - t23 * a1;
        let t1 = r23 * *x;
        let x1 = t1.trunc();
        let x2 = *x - t23 * x1;
        let t1 = a1 * x2 + a2 * x1;
        let t2 = (r23 * t1).trunc();
        let z = t1 - t23 * t2;
        let t3 = t23 * z + a2 * x2;
        let t4 = (r46 * t3).trunc();
        *x = t3 - t46 * t4;
        r46 * *x
    }

    #[test]
    fn integer_steps_equal_the_double_precision_specification() {
        let a = 1220703125.0; // 5^13, NPB's multiplier
        let (mut x, mut y) = (271828183.0, 271828183.0);
        for _ in 0..100_000 {
            assert_eq!(randlc(&mut x, a), randlc_spec(&mut y, a));
        }
        assert_eq!(x, y);
        let mut v = vec![0.0; 1000];
        let mut z = x;
        vranlc(&mut z, a, &mut v);
        for w in &v {
            assert_eq!(*w, randlc_spec(&mut y, a));
        }
        assert_eq!(z, y);
    }

    #[test]
    fn a_power_jumps_ahead() {
        let a = 1220703125.0;
        let mut x = 314159265.0;
        let mut y = x;
        for _ in 0..12345 {
            randlc(&mut x, a);
        }
        randlc(&mut y, power(a, 12345));
        assert_eq!(x, y);
        assert_eq!(power(a, 0), 1.0);
    }
}
