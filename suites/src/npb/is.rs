//! NPB IS, the integer sort: every rank holds an equal share of 2^TOTAL_KEYS_LOG_2 keys (each
//! the scaled sum of four of NPB's uniform numbers, so roughly Gaussian), and each of ten
//! iterations ranks all of them. A rank first sorts its keys into buckets by their high bits;
//! an allreduce of the bucket sizes lets every rank cut the buckets into one contiguous range
//! per rank of about equal key count; an alltoall of counts and an alltoallv of keys move every
//! key to its range's owner, which counts its keys' values and turns the counts into ranks.
//!
//! Verification is NPB's: each iteration checks the ranks of five test keys against the
//! published values (shifted per class and iteration), and after the last one every rank
//! sorts its keys by their ranks and checks the order locally and across the boundary with its
//! left neighbour. The run passes when the passes add up to 5 x 10 + the rank count.

use transports::comm::{Comm, ReduceOp};

use super::class::Class;
use super::kernel::{Kernel, Meter, Problem, Verification};
use super::random::{power, randlc};
use crate::ranks::RankRule;
use crate::suite::{ParamError, SuiteError};

const MAX_ITERATIONS: i32 = 10;
const TEST_KEYS: usize = 5;
/// NPB's generator: seed and multiplier for the keys.
const SEED: f64 = 314_159_265.0;
const MULTIPLIER: f64 = 1_220_703_125.0;
const TAG_BOUNDARY: i32 = 1000;

/// Log2 of the total keys, of the key range, and of the bucket count per class.
fn logs(class: Class) -> (u32, u32, u32) {
    class.pick([
        (16, 11, 9),
        (20, 16, 10),
        (23, 19, 10),
        (25, 21, 10),
        (27, 23, 10),
    ])
}

/// NPB's partial verification table: the positions of the five test keys in the global key
/// sequence and their ranks (before the per-iteration shift).
fn test_keys(class: Class) -> ([i64; TEST_KEYS], [i64; TEST_KEYS]) {
    class.pick([
        (
            [48427, 17148, 23627, 62548, 4431],
            [0, 18, 346, 64917, 65463],
        ),
        (
            [357773, 934767, 875723, 898999, 404505],
            [1249, 11698, 1039987, 1043896, 1048018],
        ),
        (
            [2112377, 662041, 5336171, 3642833, 4250760],
            [104, 17523, 123928, 8288932, 8388264],
        ),
        (
            [41869, 812306, 5102857, 18232239, 26860214],
            [33422937, 10244, 59149, 33135281, 99],
        ),
        (
            [44172927, 72999161, 74326391, 129606274, 21736814],
            [61147, 882988, 266290, 133997595, 133525895],
        ),
    ])
}

/// The rank test key `i` must have in `iteration`: NPB's table value moved by the keys that
/// iteration plants at both ends of the range, which lie on one side or the other of it.
fn expected_rank(class: Class, i: usize, table: i64, iteration: i32) -> i64 {
    let it = i64::from(iteration);
    match class {
        Class::S | Class::C if i <= 2 => table + it,
        Class::S | Class::C => table - it,
        Class::W if i < 2 => table + it - 2,
        Class::W => table - it,
        Class::A if i <= 2 => table + it - 1,
        Class::A => table - (it - 1),
        Class::B if matches!(i, 1 | 2 | 4) => table + it,
        Class::B => table - it,
    }
}

/// The most ranks NPB runs a class on.
fn max_ranks(class: Class) -> usize {
    if class == Class::S {
        128
    } else {
        1024
    }
}

/// Room NPB gives the keys a rank receives, over the keys it starts with: the first and last
/// ranks rank the wide, thin tails of the distribution and get more than their share.
fn buffer_len(keys_per_rank: usize, ranks: usize) -> usize {
    match ranks {
        0..256 => 3 * keys_per_rank / 2,
        256..512 => 5 * keys_per_rank / 2,
        512..1024 => 4 * keys_per_rank,
        _ => 13 * keys_per_rank / 2,
    }
}

/// NPB's `find_my_seed`: where rank `rank`'s stretch of the key generator's sequence starts,
/// each rank taking `4 * keys_per_rank` numbers (rounded down to a power of two, as NPB does).
fn my_seed(rank: usize, ranks: usize, total_numbers: u64) -> f64 {
    let per_rank = total_numbers / ranks as u64;
    let stride = 1u64 << per_rank.max(1).ilog2();
    let mut seed = SEED;
    randlc(&mut seed, power(MULTIPLIER, stride * rank as u64));
    seed
}

/// NPB's `create_seq`: each key is max_key/4 times the sum of four uniform numbers.
fn generate_keys(mut seed: f64, max_key: i32, keys: &mut [i32]) {
    let quarter = f64::from(max_key / 4);
    for key in keys {
        let mut x = randlc(&mut seed, MULTIPLIER);
        x += randlc(&mut seed, MULTIPLIER);
        x += randlc(&mut seed, MULTIPLIER);
        x += randlc(&mut seed, MULTIPLIER);
        *key = (quarter * x) as i32;
    }
}

/// Counts `keys` per bucket (`key >> shift`) into `counted`, in four tallies per bucket taken
/// by turns and summed at the end: two keys in a row in one bucket then do not wait on each
/// other's increment (the count was about a quarter faster so on 2^23 class A keys here).
fn count_buckets(keys: &[i32], shift: u32, lanes: &mut [i32], counted: &mut [i32]) {
    let buckets = counted.len();
    let lanes = &mut lanes[..4 * buckets];
    lanes.fill(0);
    let (l0, rest) = lanes.split_at_mut(buckets);
    let (l1, rest) = rest.split_at_mut(buckets);
    let (l2, l3) = rest.split_at_mut(buckets);
    let quads = keys.chunks_exact(4);
    for &key in quads.remainder() {
        l0[(key >> shift) as usize] += 1;
    }
    for q in quads {
        l0[(q[0] >> shift) as usize] += 1;
        l1[(q[1] >> shift) as usize] += 1;
        l2[(q[2] >> shift) as usize] += 1;
        l3[(q[3] >> shift) as usize] += 1;
    }
    for (b, c) in counted.iter_mut().enumerate() {
        *c = l0[b] + l1[b] + l2[b] + l3[b];
    }
}

pub struct Is {
    class: Class,
    rank: usize,
    ranks: usize,
    max_key: i32,
    /// Key value bits dropped to get a bucket number.
    shift: u32,
    buckets: usize,
    keys_per_rank: usize,
    /// This rank's keys (the first `keys_per_rank`; full verification sorts into all of it).
    keys: Vec<i32>,
    /// The keys in bucket order; the block this rank keeps for itself stays here.
    work: Vec<i32>,
    /// Where in `work` the keys this rank keeps are.
    kept: std::ops::Range<usize>,
    /// The key populations, then ranks, of this rank's key range (NPB's key_buff1 after the
    /// exchange).
    counts: Vec<i32>,
    /// The keys the other ranks sent this rank, in rank order (NPB's key_buff2 without the
    /// block a rank sends itself: that one is ranked where it is, not copied first).
    received: Vec<i32>,
    received_len: usize,
    /// Keys per bucket on this rank, then the five test keys (carried by the allreduce).
    bucket_sizes: Vec<i32>,
    bucket_totals: Vec<i32>,
    bucket_next: Vec<usize>,
    /// Four tallies per bucket (see `count_buckets`).
    bucket_lanes: Vec<i32>,
    /// Each rank's first and last bucket after the redistribution.
    first_bucket: Vec<usize>,
    last_bucket: Vec<usize>,
    send_counts: Vec<usize>,
    send_displs: Vec<usize>,
    recv_counts: Vec<usize>,
    recv_displs: Vec<usize>,
    /// The counts as the alltoall carries them.
    send_counts_wire: Vec<u64>,
    recv_counts_wire: Vec<u64>,
    /// Smallest key value of this rank's range in the last iteration.
    min_key: i32,
    test_index: [i64; TEST_KEYS],
    test_rank: [i64; TEST_KEYS],
    /// NPB's passed_verification on this rank.
    passed: i64,
    /// Failed partial verifications on this rank, as NPB reports them.
    failures: Vec<String>,
}

impl Is {
    /// One of NPB's `rank(iteration)`: buckets, redistribution, ranking, partial verification.
    fn rank_keys(
        &mut self,
        comm: &Comm,
        meter: &mut Meter<'_>,
        iteration: i32,
    ) -> Result<(), SuiteError> {
        let (me, ranks, keys_per_rank) = (self.rank, self.ranks, self.keys_per_rank);
        let (shift, buckets) = (self.shift, self.buckets);

        // Bucket the local keys.
        meter.compute(|| {
            // Scalars and slices in locals: read through the closure's captures they would be
            // reloaded on every key, since the stores below might alias them.
            let (shift, buckets, keys_per_rank) = (shift, buckets, keys_per_rank);
            let keys = &mut self.keys[..keys_per_rank];
            // Each iteration plants a small and a large key, so the ranks change.
            if me == 0 {
                let it = iteration as usize;
                keys[it] = iteration;
                keys[it + MAX_ITERATIONS as usize] = self.max_key - iteration;
            }
            let sizes = &mut self.bucket_sizes;
            sizes.fill(0);
            self.bucket_totals.fill(0);
            // The test keys ride on the allreduce, from the rank that holds each.
            for (i, &index) in self.test_index.iter().enumerate() {
                let index = index as usize;
                if index / keys_per_rank == me {
                    sizes[buckets + i] = keys[index % keys_per_rank];
                }
            }
            let counted = &mut sizes[..buckets];
            count_buckets(keys, shift, &mut self.bucket_lanes, counted);
            let next_of = &mut self.bucket_next[..buckets];
            let mut at = 0;
            for (next, &size) in next_of.iter_mut().zip(counted.iter()) {
                *next = at;
                at += size as usize;
            }
            let bucketed = &mut self.work[..keys_per_rank];
            for &key in keys.iter() {
                let next = &mut next_of[(key >> shift) as usize];
                bucketed[*next] = key;
                *next += 1;
            }
        })?;

        comm.allreduce(&self.bucket_sizes, &mut self.bucket_totals, ReduceOp::Sum)?;

        // Cut the buckets into ranges: a rank's range ends at the first bucket where the
        // running total reaches its multiple of keys_per_rank.
        meter.compute(|| {
            let (sizes, totals) = (&self.bucket_sizes, &self.bucket_totals);
            self.first_bucket.fill(0);
            self.last_bucket.fill(0);
            let mut running_total = 0i64;
            let mut running_local = 0usize;
            let mut displ = 0;
            let mut owner = 0;
            for bucket in 0..buckets {
                running_total += i64::from(totals[bucket]);
                running_local += sizes[bucket] as usize;
                if owner < ranks && running_total >= ((owner + 1) * keys_per_rank) as i64 {
                    self.send_counts[owner] = running_local;
                    self.send_displs[owner] = displ;
                    displ += running_local;
                    if owner > 0 {
                        self.first_bucket[owner] = self.last_bucket[owner - 1] + 1;
                    }
                    self.last_bucket[owner] = bucket;
                    owner += 1;
                    running_local = 0;
                }
            }
            // With nearly as many ranks as buckets, the last ranks may get none: an empty
            // range, first bucket after last.
            for rest in owner..ranks {
                self.send_counts[rest] = 0;
                self.send_displs[rest] = displ;
                self.first_bucket[rest] = 1;
            }
            for (wire, &count) in self.send_counts_wire.iter_mut().zip(&self.send_counts) {
                *wire = count as u64;
            }
            // This rank's own block is ranked where it lies: the alltoallv moves the others'.
            self.kept = self.send_displs[me]..self.send_displs[me] + self.send_counts[me];
            self.send_counts[me] = 0;
        })?;

        comm.alltoall(&self.send_counts_wire, &mut self.recv_counts_wire)?;

        let received_len = meter.compute(|| {
            let mut displ = 0;
            for (r, ((count, at), &wire)) in self
                .recv_counts
                .iter_mut()
                .zip(self.recv_displs.iter_mut())
                .zip(&self.recv_counts_wire)
                .enumerate()
            {
                *count = if r == me { 0 } else { wire as usize };
                *at = displ;
                displ += *count;
            }
            displ
        })?;
        if received_len > self.received.len() {
            return Err(SuiteError::Check(format!(
                "IS: rank {me} receives {received_len} keys, more than NPB's buffer of {}",
                self.received.len()
            )));
        }
        comm.alltoallv(
            &self.work[..keys_per_rank],
            &self.send_counts,
            &self.send_displs,
            &mut self.received,
            &self.recv_counts,
            &self.recv_displs,
        )?;
        self.received_len = received_len;

        // Rank the received keys: count each value's keys, then accumulate, so that entry v
        // holds the number of this rank's keys up to v.
        let shift_bucket = |b: usize| (b << shift) as i64;
        let min_key = shift_bucket(self.first_bucket[me]);
        let max_key = shift_bucket(self.last_bucket[me] + 1) - 1;
        let span = (max_key - min_key + 1).max(0) as usize;
        if span > self.counts.len() {
            return Err(SuiteError::Check(format!(
                "IS: rank {me} ranks {span} key values, more than NPB's buffer of {}",
                self.counts.len()
            )));
        }
        self.min_key = min_key as i32;
        let class = self.class;
        meter.compute(|| {
            let totals = &self.bucket_totals;
            let owned = |r: usize| self.first_bucket[r]..=self.last_bucket[r];
            // Keys held by the ranks before this one: they all rank below this rank's keys.
            let lesser: i64 = (0..me)
                .flat_map(|r| owned(r).map(|b| i64::from(totals[b])))
                .sum();
            let counts = &mut self.counts[..span];
            counts.fill(0);
            let base = min_key as i32;
            for part in [&self.work[self.kept.clone()], &self.received[..received_len]] {
                for &key in part {
                    counts[(key - base) as usize] += 1;
                }
            }
            let mut running = 0;
            for c in counts.iter_mut() {
                running += *c;
                *c = running;
            }
            for i in 0..TEST_KEYS {
                let key = i64::from(totals[buckets + i]);
                if (min_key..=max_key).contains(&key) {
                    // Keys below this one: NPB reads the entry before the key's.
                    let below = if key > min_key {
                        i64::from(counts[(key - 1 - min_key) as usize])
                    } else {
                        0
                    };
                    let rank = below + lesser;
                    if rank == expected_rank(class, i, self.test_rank[i], iteration) {
                        self.passed += 1;
                    } else {
                        self.failures.push(format!(
                            "Failed partial verification: iteration {iteration}, processor {me}, test key {i}, key rank {rank}"
                        ));
                    }
                }
            }
        })?;
        Ok(())
    }
}

impl Kernel for Is {
    const NAME: &'static str = "IS";
    const OPERATION: &'static str = "keys ranked";

    fn ranks() -> RankRule {
        RankRule::PowerOfTwo
    }

    fn check(class: Class, ranks: usize) -> Result<(), ParamError> {
        let most = max_ranks(class);
        if !ranks.is_power_of_two() || ranks > most {
            return Err(ParamError(format!(
                "IS class {class} runs on a power of two of ranks from 1 to {most}"
            )));
        }
        Ok(())
    }

    fn problem(class: Class) -> Problem {
        Problem {
            size: (1u64 << logs(class).0).to_string(),
            iterations: MAX_ITERATIONS as u32,
        }
    }

    fn operations(class: Class) -> f64 {
        f64::from(MAX_ITERATIONS) * (1u64 << logs(class).0) as f64
    }

    fn new(comm: &Comm, class: Class) -> Result<Self, SuiteError> {
        let (rank, ranks) = (comm.rank(), comm.size());
        Self::check(class, ranks)?;
        let (total_log2, max_key_log2, buckets_log2) = logs(class);
        let keys_per_rank = (1usize << total_log2) / ranks;
        let len = buffer_len(keys_per_rank, ranks);
        let buckets = 1usize << buckets_log2;
        let (test_index, test_rank) = test_keys(class);
        Ok(Is {
            class,
            rank,
            ranks,
            max_key: 1 << max_key_log2,
            shift: max_key_log2 - buckets_log2,
            buckets,
            keys_per_rank,
            keys: vec![0; len],
            work: vec![0; len],
            kept: 0..0,
            counts: vec![0; 1 << max_key_log2],
            received: vec![0; len],
            received_len: 0,
            bucket_sizes: vec![0; buckets + TEST_KEYS],
            bucket_totals: vec![0; buckets + TEST_KEYS],
            bucket_next: vec![0; buckets],
            bucket_lanes: vec![0; 4 * buckets],
            first_bucket: vec![0; ranks],
            last_bucket: vec![0; ranks],
            send_counts: vec![0; ranks],
            send_displs: vec![0; ranks],
            recv_counts: vec![0; ranks],
            recv_displs: vec![0; ranks],
            send_counts_wire: vec![0; ranks],
            recv_counts_wire: vec![0; ranks],
            min_key: 0,
            test_index,
            test_rank,
            passed: 0,
            failures: Vec::new(),
        })
    }

    /// Generates the keys afresh (full verification sorted them in place), then does NPB's
    /// untimed first ranking and clears the verification count.
    fn reset(&mut self, comm: &Comm) -> Result<(), SuiteError> {
        let total_numbers = 4 * (1u64 << logs(self.class).0);
        let seed = my_seed(self.rank, self.ranks, total_numbers);
        generate_keys(seed, self.max_key, &mut self.keys[..self.keys_per_rank]);
        let mut untimed = Meter::new(comm);
        self.rank_keys(comm, &mut untimed, 1)?;
        self.passed = 0;
        self.failures.clear();
        Ok(())
    }

    fn run(&mut self, comm: &Comm, meter: &mut Meter<'_>) -> Result<(), SuiteError> {
        for iteration in 1..=MAX_ITERATIONS {
            self.rank_keys(comm, meter, iteration)?;
        }
        Ok(())
    }

    /// NPB's full_verify, then the verification count summed over the ranks.
    fn verify(&mut self, comm: &Comm) -> Result<Verification, SuiteError> {
        let (me, ranks) = (self.rank, self.ranks);
        let n = self.kept.len() + self.received_len;
        // Place every key at its rank (the counts say how many keys are at or below it).
        let base = self.min_key;
        for &key in self.work[self.kept.clone()]
            .iter()
            .chain(&self.received[..self.received_len])
        {
            let slot = &mut self.counts[(key - base) as usize];
            *slot -= 1;
            self.keys[*slot as usize] = key;
        }
        let sorted = &self.keys[..n];
        // The largest key goes right; a rank with none passes on one that cannot be out of
        // order (NPB would send a stale value).
        let largest = [sorted.last().copied().unwrap_or(i32::MIN)];
        let mut left_largest = [i32::MIN];
        match (me > 0, me + 1 < ranks) {
            (true, true) => {
                comm.sendrecv_values(
                    &largest,
                    me + 1,
                    TAG_BOUNDARY,
                    &mut left_largest,
                    me - 1,
                    TAG_BOUNDARY,
                )?;
            }
            (false, true) => comm.send_values(&largest, me + 1, TAG_BOUNDARY)?,
            (true, false) => {
                comm.recv_values(&mut left_largest, me - 1, TAG_BOUNDARY)?;
            }
            (false, false) => {}
        }
        let boundary_wrong = sorted.first().is_some_and(|&first| left_largest[0] > first);
        let out_of_order =
            usize::from(boundary_wrong) + sorted.windows(2).filter(|w| w[0] > w[1]).count();
        let mut lines = std::mem::take(&mut self.failures);
        if out_of_order == 0 {
            self.passed += 1;
        } else {
            lines.push(format!(
                "Processor {me}:  Full_verify: number of keys out of sort: {out_of_order}"
            ));
        }
        let mut total = [0i64];
        comm.allreduce(&[self.passed], &mut total, ReduceOp::Sum)?;
        let expected = i64::from(TEST_KEYS as i32 * MAX_ITERATIONS) + ranks as i64;
        lines.push(format!(
            "Verifications passed: {} of {expected} (5 test keys x {MAX_ITERATIONS} iterations, and the order on each of {ranks} ranks)",
            total[0]
        ));
        Ok(Verification {
            passed: total[0] == expected,
            lines,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::on_ranks;
    use super::*;

    #[test]
    fn problem_operations_and_rank_limits() {
        assert_eq!(Is::problem(Class::S).size, "65536");
        assert_eq!(Is::problem(Class::A).iterations, 10);
        assert_eq!(Is::operations(Class::A), 10.0 * 8_388_608.0);
        assert!(Is::check(Class::S, 128).is_ok());
        assert!(Is::check(Class::S, 256).is_err());
        assert!(Is::check(Class::A, 1024).is_ok());
        assert!(Is::check(Class::A, 6).is_err());
    }

    #[test]
    fn seeds_jump_to_each_ranks_stretch() {
        // Rank 1 of 2 starts where rank 0's 4 * 2^15 numbers end.
        let mut seed = SEED;
        for _ in 0..4 << 15 {
            randlc(&mut seed, MULTIPLIER);
        }
        assert_eq!(my_seed(1, 2, 4 << 16), seed);
        assert_eq!(my_seed(0, 4, 4 << 16), SEED);
    }

    /// Timed twice in a row, as the suite does: reset must bring back the starting keys.
    #[test]
    fn a_second_timed_section_verifies_too() {
        let verdicts = on_ranks("shm", 2, |comm| {
            let mut is = Is::new(comm, Class::S).expect("set-up");
            (0..2)
                .map(|_| {
                    is.reset(comm).expect("reset");
                    let mut meter = Meter::new(comm);
                    is.run(comm, &mut meter).expect("run");
                    is.verify(comm).expect("verify").passed
                })
                .collect::<Vec<_>>()
        });
        assert!(verdicts.iter().flatten().all(|p| *p), "{verdicts:?}");
    }

    crate::npb::testing::kernel_tests!(Is);
}
