//! The right-hand side's charges: the ten largest and ten smallest of NPB's random numbers a
//! rank has seen, kept as NPB's `bubble` keeps them.

/// How many charges of each sign zran3 places.
pub(super) const CHARGES: usize = 10;

/// The ten largest (or smallest) values a rank has seen and where, kept sorted with the
/// weakest first as NPB's `bubble` keeps them.
pub(super) struct Extremes {
    pub(super) largest: bool,
    pub(super) values: [f64; CHARGES],
    pub(super) at: [Option<usize>; CHARGES],
}

impl Extremes {
    pub(super) fn new(largest: bool) -> Extremes {
        Extremes {
            largest,
            values: [if largest { 0.0 } else { 1.0 }; CHARGES],
            at: [None; CHARGES],
        }
    }

    pub(super) fn beats(&self, a: f64, b: f64) -> bool {
        if self.largest {
            a > b
        } else {
            a < b
        }
    }

    pub(super) fn offer(&mut self, value: f64, at: usize) {
        if !self.beats(value, self.values[0]) {
            return;
        }
        self.values[0] = value;
        self.at[0] = Some(at);
        for i in 0..CHARGES - 1 {
            if !self.beats(self.values[i], self.values[i + 1]) {
                break;
            }
            self.values.swap(i, i + 1);
            self.at.swap(i, i + 1);
        }
    }

    /// The strongest value not yet placed, of the `left` strongest; one that can never win if
    /// none is left.
    pub(super) fn proposal(&self, left: usize) -> f64 {
        match left.checked_sub(1).filter(|&i| self.at[i].is_some()) {
            Some(i) => self.values[i],
            None if self.largest => f64::NEG_INFINITY,
            None => f64::INFINITY,
        }
    }
}
