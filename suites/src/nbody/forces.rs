//! How nbody sums forces so that every rank count gives the same bits: bodies in contiguous
//! blocks (one per rank), cut into at most 32 tiles whose sources are added in global order,
//! four target bodies at a time (lanes), in the widest vectors the CPU has.

use std::ops::Range;

/// Bodies whose forces are computed side by side (one lane each): the force loop vectorises
/// across bodies, so each body's own sum keeps its order.
pub(super) const LANES: usize = 4;
pub(super) type Lanes = [f64; LANES];

/// The fewest bodies in a tile; bodies are cut into at most [`MAX_TILES`] tiles.
pub(super) const MIN_TILE: usize = 64;
pub(super) const MAX_TILES: usize = 32;

/// The contiguous blocks of bodies, as even as possible (the first bodies % ranks one longer).
#[derive(Debug, Clone)]
pub(super) struct Blocks {
    pub(super) starts: Vec<usize>,
}

impl Blocks {
    pub(super) fn even(bodies: usize, ranks: usize) -> Blocks {
        let (base, extra) = (bodies / ranks, bodies % ranks);
        let mut starts = Vec::with_capacity(ranks + 1);
        let mut at = 0;
        starts.push(0);
        for b in 0..ranks {
            at += base + usize::from(b < extra);
            starts.push(at);
        }
        Blocks { starts }
    }

    pub(super) fn count(&self) -> usize {
        self.starts.len() - 1
    }

    pub(super) fn range(&self, b: usize) -> Range<usize> {
        self.starts[b]..self.starts[b + 1]
    }

    /// Where block `b`'s x, y and z lie in the packed positions (x of the block, then y, z).
    pub(super) fn packed(&self, b: usize) -> Range<usize> {
        3 * self.starts[b]..3 * self.starts[b + 1]
    }

    pub(super) fn owner(&self, j: usize) -> usize {
        self.starts.partition_point(|&s| s <= j) - 1
    }
}

/// A run of consecutive bodies of one tile inside one block.
#[derive(Debug, Clone)]
pub(super) struct Segment {
    pub(super) block: usize,
    /// Offset of the run's x in the packed positions; y and z follow the block's length on.
    pub(super) x: usize,
    /// The block's length: the stride from x to y and from y to z.
    pub(super) stride: usize,
    /// Global index of the run's first body (into the masses).
    pub(super) first: usize,
    pub(super) len: usize,
}

/// The fixed summation tiles and how the blocks cut them.
#[derive(Debug, Clone)]
pub(super) struct Tiles {
    /// Bodies in a tile (the last may be shorter).
    pub(super) len: usize,
    pub(super) segments: Vec<Segment>,
    /// Each tile's segments, in ascending body order.
    pub(super) of_tile: Vec<Range<usize>>,
}

impl Tiles {
    pub(super) fn new(bodies: usize, blocks: &Blocks) -> Tiles {
        Tiles::of_len(bodies, blocks, MIN_TILE.max(bodies.div_ceil(MAX_TILES)))
    }

    pub(super) fn of_len(bodies: usize, blocks: &Blocks, len: usize) -> Tiles {
        let mut segments = Vec::new();
        let mut of_tile = Vec::new();
        for lo in (0..bodies).step_by(len) {
            let hi = (lo + len).min(bodies);
            let begin = segments.len();
            let mut j = lo;
            while j < hi {
                let block = blocks.owner(j);
                let range = blocks.range(block);
                let end = hi.min(range.end);
                segments.push(Segment {
                    block,
                    x: 3 * range.start + (j - range.start),
                    stride: range.len(),
                    first: j,
                    len: end - j,
                });
                j = end;
            }
            of_tile.push(begin..segments.len());
        }
        Tiles {
            len,
            segments,
            of_tile,
        }
    }

    pub(super) fn count(&self) -> usize {
        self.of_tile.len()
    }
}

/// The accelerations that one tile of sources gives `LANES` bodies at (`xi`, `yi`, `zi`): j
/// ascending through the tile's segments.
#[inline(always)]
pub(super) fn tile_sum(
    target: &[Lanes; 3],
    eps2: f64,
    tiles: &Tiles,
    tile: usize,
    all: &[f64],
    mass: &[f64],
) -> [Lanes; 3] {
    let [xi, yi, zi] = target;
    let mut acc = [[0.0; LANES]; 3];
    for seg in &tiles.segments[tiles.of_tile[tile].clone()] {
        let xs = &all[seg.x..seg.x + seg.len];
        let ys = &all[seg.x + seg.stride..seg.x + seg.stride + seg.len];
        let zs = &all[seg.x + 2 * seg.stride..seg.x + 2 * seg.stride + seg.len];
        let ms = &mass[seg.first..seg.first + seg.len];
        for (((&xj, &yj), &zj), &mj) in xs.iter().zip(ys).zip(zs).zip(ms) {
            // The body's own term is 0 (dx = dy = dz = 0, softening > 0): no branch.
            for l in 0..LANES {
                let dx = xj - xi[l];
                let dy = yj - yi[l];
                let dz = zj - zi[l];
                let r2 = dx * dx + dy * dy + dz * dz + eps2;
                let s = mj / (r2 * r2.sqrt());
                acc[0][l] += dx * s;
                acc[1][l] += dy * s;
                acc[2][l] += dz * s;
            }
        }
    }
    acc
}

/// [`tile_sum`] in the widest vectors the CPU has: AVX holds the four lanes in one register
/// where the x86-64 baseline (SSE2) needs two. The operations are the same IEEE additions,
/// multiplications, divisions and square roots, so the bits are too, whichever a rank runs.
#[inline]
pub(super) fn tile_sum_fastest(
    target: &[Lanes; 3],
    eps2: f64,
    tiles: &Tiles,
    tile: usize,
    all: &[f64],
    mass: &[f64],
) -> [Lanes; 3] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX, checked just above.
        return unsafe { tile_sum_avx(target, eps2, tiles, tile, all, mass) };
    }
    tile_sum(target, eps2, tiles, tile, all, mass)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
pub(super) fn tile_sum_avx(
    target: &[Lanes; 3],
    eps2: f64,
    tiles: &Tiles,
    tile: usize,
    all: &[f64],
    mass: &[f64],
) -> [Lanes; 3] {
    tile_sum(target, eps2, tiles, tile, all, mass)
}

/// Bodies `chunk * LANES ..` of a packed block of `len` bodies, the lanes past its end filled
/// with its last body (their results are dropped).
#[inline(always)]
pub(super) fn lanes_of(pos: &[f64], len: usize, chunk: usize) -> [Lanes; 3] {
    let mut out = [[0.0; LANES]; 3];
    for l in 0..LANES {
        let i = (chunk * LANES + l).min(len - 1);
        for (c, o) in out.iter_mut().enumerate() {
            o[l] = pos[c * len + i];
        }
    }
    out
}
