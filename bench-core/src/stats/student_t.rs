//! Student's t distribution, for the t-tests that confirm change points in a history.
//!
//! A history's change-point search (Apache Otava's method) proposes where a series may have
//! moved to a new level and keeps a proposal only if the entries on either side differ by a
//! two-sample Student's t-test. Entries are headline values of whole runs (means of many
//! samples), so they are close to normal, unlike the raw per-iteration samples that
//! [`super::two_sample`] tests by ranks. The distribution function comes from the regularized
//! incomplete beta function, I_x(df/2, 1/2) with x = df / (df + t^2), evaluated by its continued
//! fraction so that the tiny p-values of clear steps keep their relative precision.

/// `P(T <= t)` for Student's t with `df` degrees of freedom (`df > 0`, not necessarily whole).
/// NaN for a NaN `t` or a `df` that is not positive.
pub fn cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    let tail = two_sided_p(t, df) / 2.0;
    if t > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// `P(|T| >= |t|)`: the two-sided p-value of a t statistic with `df` degrees of freedom.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    // x = df / (df + t^2) written so that a huge t does not overflow t^2 before dividing.
    let x = 1.0 / (1.0 + (t / df.sqrt()).powi(2));
    regularized_beta(x, df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The outcome of a two-sample t-test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    /// (mean(a) - mean(b)) over its standard error; infinite when both samples have no spread
    /// and their means differ.
    pub t: f64,
    /// Degrees of freedom: n_a + n_b - 2.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Student's two-sample t-test with pooled variance (equal variances assumed), two-sided: as
/// `scipy.stats.ttest_ind(a, b)` with its defaults. None when there are fewer than three
/// values in all (no degree of freedom) or either side is empty. Two samples without any
/// spread give p = 0 when their means differ and p = 1 when they are equal.
pub fn t_test(a: &[f64], b: &[f64]) -> Option<TTest> {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    if a.is_empty() || b.is_empty() || na + nb < 3.0 {
        return None;
    }
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let (ma, mb) = (mean(a), mean(b));
    let squares = |xs: &[f64], m: f64| xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
    let df = na + nb - 2.0;
    let pooled = (squares(a, ma) + squares(b, mb)) / df;
    let se = (pooled * (1.0 / na + 1.0 / nb)).sqrt();
    let diff = ma - mb;
    if se == 0.0 {
        let (t, p) = if diff == 0.0 {
            (0.0, 1.0)
        } else {
            (diff.signum() * f64::INFINITY, 0.0)
        };
        return Some(TTest { t, df, p });
    }
    let t = diff / se;
    Some(TTest {
        t,
        df,
        p: two_sided_p(t, df),
    })
}

/// ln Γ(x) for x > 0 by Lanczos' approximation (g = 7, nine coefficients, the set Numerical
/// Recipes and Boost publish), good to about 15 significant digits; the reflection formula is
/// not needed since every argument here is a positive half-integer or more.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let mut sum = COEFFICIENTS[0];
    for (i, c) in COEFFICIENTS.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularized incomplete beta function I_x(a, b), for 0 <= x <= 1 and a, b > 0.
pub fn regularized_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    // x^a (1 - x)^b / (a B(a, b)), in logarithms so large a and b do not overflow.
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast for x below the mean (a + 1) / (a + b + 2); above
    // it, I_x(a, b) = 1 - I_{1-x}(b, a) puts the argument back in that range.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function, by the modified Lentz method.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPSILON: f64 = 1e-16;
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..=1000 {
        let m = f64::from(m);
        // The even step: d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m)).
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / nonzero(1.0 + even * d);
        c = nonzero(1.0 + even / c);
        h *= d * c;
        // The odd step: d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / nonzero(1.0 + odd * d);
        c = nonzero(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < EPSILON {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64, relative: f64) -> bool {
        (actual - expected).abs() <= relative * expected.abs()
    }

    // Reference values are scipy.stats.t.cdf's definition, 1 - I_x(df/2, 1/2) / 2 for t > 0,
    // evaluated with mpmath's betainc at 40 digits (scipy is not on the machine these were
    // written on); df = 1 and 2 also have closed forms, checked below.

    #[test]
    fn cdf_matches_reference_values() {
        let reference = [
            (2.0, 5.0, 0.949_030_260_585_070_8),
            (-1.5, 10.0, 0.082_253_663_222_720_09),
            (0.5, 3.7, 0.677_332_183_340_034),
            (2.228_138_851_986_274, 10.0, 0.975),
            (0.0, 7.0, 0.5),
            (-6.0, 100.0, 1.586_245_751_401_428_3e-8),
        ];
        for (t, df, expected) in reference {
            let got = cdf(t, df);
            assert!(close(got, expected, 1e-12), "cdf({t}, {df}) = {got}");
        }
        // A million degrees of freedom (near the normal): ln Γ of arguments near 5e5 cancel
        // in the prefactor, costing digits; histories never have that many entries.
        let got = cdf(1.96, 1e6);
        assert!(close(got, 0.975_001_966_207_365_1, 1e-9), "{got}");
    }

    #[test]
    fn cdf_of_one_and_two_degrees_matches_closed_forms() {
        // df = 1 is Cauchy: 1/2 + atan(t)/pi. df = 2: 1/2 + t / (2 sqrt(2 + t^2)).
        for t in [-3.0, -0.4, 0.0, 1.0, 7.5] {
            let cauchy = 0.5 + f64::atan(t) / std::f64::consts::PI;
            assert!(close(cdf(t, 1.0), cauchy, 1e-13), "t = {t}");
            let two = 0.5 + t / (2.0 * (2.0 + t * t).sqrt());
            assert!(close(cdf(t, 2.0), two, 1e-13), "t = {t}");
        }
    }

    #[test]
    fn tiny_two_sided_p_values_keep_their_precision() {
        // A step of many standard errors: 1 - cdf would round to 0; the tail must not.
        let p = two_sided_p(10.0, 30.0);
        assert!(close(p, 4.575_251_408_229_613e-11, 1e-10), "p = {p}");
        let p = two_sided_p(40.0, 38.0);
        assert!(close(p, 1.142_760_266_816_130_8e-32, 1e-9), "p = {p}");
        assert_eq!(two_sided_p(f64::INFINITY, 5.0), 0.0);
        assert_eq!(two_sided_p(0.0, 5.0), 1.0);
        assert!(close(
            two_sided_p(-2.0, 5.0),
            0.101_939_478_829_858_36,
            1e-12
        ));
    }

    #[test]
    fn nonsense_arguments_give_nan() {
        assert!(cdf(f64::NAN, 3.0).is_nan());
        assert!(cdf(1.0, 0.0).is_nan());
        assert!(two_sided_p(1.0, -1.0).is_nan());
    }

    #[test]
    fn ln_gamma_of_known_values() {
        // Γ(1) = Γ(2) = 1, Γ(1/2) = sqrt(pi), Γ(10) = 9! = 362880.
        assert!(ln_gamma(1.0).abs() < 1e-14);
        assert!(ln_gamma(2.0).abs() < 1e-14);
        let half = 0.5 * std::f64::consts::PI.ln();
        assert!(close(ln_gamma(0.5), half, 1e-14));
        assert!(close(ln_gamma(10.0), 362_880f64.ln(), 1e-14));
    }

    #[test]
    fn two_sample_t_test_matches_reference_values() {
        // scipy.stats.ttest_ind(a, b) (pooled variance, two-sided), as above with mpmath.
        // (a, b, t, df, p)
        type Case<'a> = (&'a [f64], &'a [f64], f64, f64, f64);
        let cases: [Case; 3] = [
            (
                &[19.0, 22.0, 16.0, 29.0, 24.0],
                &[20.0, 11.0, 17.0, 12.0],
                2.239_334_696_520_584,
                7.0,
                0.060_136_882_191_515_93,
            ),
            (
                &[1.0, 2.0, 3.0, 4.0, 5.0],
                &[3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                -2.361_887_464_866_651,
                9.0,
                0.042_469_819_619_446_47,
            ),
            (
                &[10.0, 10.1, 9.9, 10.2, 9.8, 10.0],
                &[10.5, 10.6, 10.4, 10.7, 10.5],
                -6.862_107_310_907_619,
                9.0,
                7.372_651_678_830_77e-5,
            ),
        ];
        for (a, b, t, df, p) in cases {
            let got = t_test(a, b).unwrap();
            assert!(close(got.t, t, 1e-12), "{got:?}");
            assert_eq!(got.df, df);
            assert!(close(got.p, p, 1e-10), "{got:?}");
        }
    }

    #[test]
    fn t_test_without_spread_or_degrees_of_freedom() {
        assert_eq!(t_test(&[5.0, 5.0], &[5.0, 5.0]).unwrap().p, 1.0);
        let apart = t_test(&[5.0, 5.0], &[6.0, 6.0]).unwrap();
        assert_eq!((apart.p, apart.t), (0.0, f64::NEG_INFINITY));
        assert!(t_test(&[1.0], &[2.0]).is_none());
        assert!(t_test(&[], &[1.0, 2.0, 3.0]).is_none());
        // One value on a side is enough with spread on the other: a single later value is
        // compared with the earlier ones' spread.
        assert!(t_test(&[1.0, 1.1, 0.9], &[1.5]).unwrap().p < 0.05);
    }
}
