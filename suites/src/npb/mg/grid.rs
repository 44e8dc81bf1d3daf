//! NPB MG's processor grid and the levels of the V-cycle on this rank: each level's extent, its
//! place in the grid, and which ranks along each axis hold points of it.

/// NPB's processor grid for a power-of-two rank count: axis 0 gets a third of the doublings
/// (rounded down), axis 1 half of the rest, axis 2 what remains.
pub(super) fn proc_grid(ranks: usize) -> [usize; 3] {
    let log_p = ranks.trailing_zeros() as usize;
    let dx = log_p / 3;
    let dy = (log_p - dx) / 2;
    [1 << dx, 1 << dy, ranks >> (dx + dy)]
}

/// One level of the hierarchy as this rank holds it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Level {
    /// Local points per axis including both ghost layers (NPB's m1, m2, m3).
    pub(super) dims: [usize; 3],
    /// No points along some axis: the level stays zero and exchanges nothing.
    pub(super) dead: bool,
    /// Ranks of the lower and upper live neighbour per axis.
    pub(super) nbr: [[usize; 2]; 3],
    /// After `interp` onto this level, per axis: hand points to dead neighbours of the coarser
    /// level (give), or take this rank's points from a live one (take).
    pub(super) give_ex: [bool; 3],
    pub(super) take_ex: [bool; 3],
}

/// The levels of an `n`^3 grid (index 0 the coarsest, 2^3 points; the last one `n`^3) for
/// the rank at `coords` of the processor grid `grid`, as NPB's `setup` lays them out.
pub(super) fn levels(n: usize, grid: [usize; 3], coords: [usize; 3]) -> Vec<Level> {
    let lt = n.trailing_zeros() as usize;
    let mut out = vec![Level::default(); lt];
    // Spacing to the nearest live neighbour; it doubles on levels where ranks die out.
    let mut next = [1usize; 3];
    for k in (0..lt).rev() {
        let ng = n >> (lt - 1 - k);
        for ax in 0..3 {
            let count = |c: usize| ((c + 1) * ng) / grid[ax] - (c * ng) / grid[ax];
            let mine = 2 + count(coords[ax]);
            let theirs = 2 + count(coords[ax] + next[ax]);
            if mine == 2 || theirs == 2 {
                next[ax] *= 2;
            }
            if k + 1 < lt {
                out[k + 1].give_ex[ax] = theirs == 2 && mine == 3;
                out[k + 1].take_ex[ax] = theirs == 3 && mine == 2;
            }
            out[k].dims[ax] = mine;
        }
        out[k].dead = out[k].dims.contains(&2);
        for ax in 0..3 {
            let step = next[ax] % grid[ax];
            let below = (coords[ax] + grid[ax] - step) % grid[ax];
            let above = (coords[ax] + step) % grid[ax];
            out[k].nbr[ax] = [below, above].map(|c| {
                let mut at = coords;
                at[ax] = c;
                at[0] + grid[0] * (at[1] + grid[1] * at[2])
            });
        }
    }
    out
}
