//! The collective checks every fabric must pass, on any number of ranks: each collective, for
//! each element type it applies to, against a value this module computes itself from what
//! every rank contributed. Shared by the conformance test (ranks as threads on every fabric)
//! and the MPI test (ranks as processes under mpirun), which include this file as a module.
#![allow(dead_code)]

use transports::comm::{Comm, Complex64, Element, ReduceOp};

/// Fails with the fabric, rank count, rank and what differs.
macro_rules! check {
    ($ctx:expr, $what:expr, $got:expr, $want:expr) => {{
        let (got, want) = (&$got, &$want);
        assert!(
            got == want,
            "{}: {} differs on rank {}\n got: {:?}\nwant: {:?}",
            $ctx.0,
            $what,
            $ctx.1,
            got,
            want
        );
    }};
}

/// A value rank `r` contributes at position `i`, chosen so that sums, products, maxima and
/// minima over up to 8 ranks are exact in every type.
trait Sample: Element {
    fn at(r: usize, i: usize) -> Self;
    /// Values whose product over 8 ranks stays exact and in range.
    fn small(r: usize, i: usize) -> Self;
    const OPS: &'static [ReduceOp];
}

impl Sample for i32 {
    fn at(r: usize, i: usize) -> i32 {
        (r as i32 + 1) * ((i % 7) as i32 - 3)
    }
    fn small(r: usize, i: usize) -> i32 {
        ((r + i) % 3) as i32 - 1
    }
    const OPS: &'static [ReduceOp] = &[ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod];
}

impl Sample for i64 {
    fn at(r: usize, i: usize) -> i64 {
        (r as i64 - 2) * 1_000_000_007 + i as i64
    }
    fn small(r: usize, i: usize) -> i64 {
        if (r + i).is_multiple_of(4) {
            -2
        } else {
            1
        }
    }
    const OPS: &'static [ReduceOp] = &[ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod];
}

impl Sample for f64 {
    fn at(r: usize, i: usize) -> f64 {
        (r as f64 + 1.0) * 0.5 - i as f64
    }
    fn small(r: usize, i: usize) -> f64 {
        1.0 + ((r + i) % 2) as f64
    }
    const OPS: &'static [ReduceOp] = &[ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod];
}

impl Sample for u8 {
    // Sums stay under 256 over 8 ranks: what an overflowing byte sum gives is the MPI
    // library's business (Open MPI's AVX ops saturate, open-mpi/ompi#8045), and fabbench's own
    // wrapping is checked by its element tests.
    fn at(r: usize, i: usize) -> u8 {
        (r * 3 + i % 5) as u8
    }
    fn small(r: usize, i: usize) -> u8 {
        1 + ((r + i) % 2) as u8
    }
    const OPS: &'static [ReduceOp] = &[ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod];
}

impl Sample for Complex64 {
    fn at(r: usize, i: usize) -> Complex64 {
        Complex64::new(r as f64 - i as f64, (r * i) as f64 * 0.25)
    }
    fn small(r: usize, i: usize) -> Complex64 {
        // 1, i, -1, -i ...: products of unit steps stay exact.
        [
            Complex64::new(1.0, 0.0),
            Complex64::new(0.0, 1.0),
            Complex64::new(1.0, 1.0),
        ][(r + i) % 3]
    }
    const OPS: &'static [ReduceOp] = &[ReduceOp::Sum, ReduceOp::Prod];
}

/// Rank `r`'s contribution of `len` values for `op`.
fn contribution<T: Sample>(op: ReduceOp, r: usize, len: usize) -> Vec<T> {
    (0..len)
        .map(|i| {
            if op == ReduceOp::Prod {
                T::small(r, i)
            } else {
                T::at(r, i)
            }
        })
        .collect()
}

/// The reduction over ranks `0..upto` of their contributions, in rank order.
fn expected<T: Sample>(op: ReduceOp, upto: usize, len: usize) -> Vec<T> {
    let mut acc = contribution::<T>(op, 0, len);
    for r in 1..upto {
        for (a, b) in acc.iter_mut().zip(contribution::<T>(op, r, len)) {
            *a = T::combine(*a, b, op);
        }
    }
    acc
}

fn reductions<T: Sample>(c: &Comm, ctx: (&str, usize)) {
    let (n, me) = (c.size(), c.rank());
    for &op in T::OPS {
        let what = format!("{:?} {op:?}", T::KIND);
        let len = 5;
        let mine = contribution::<T>(op, me, len);
        let want = expected::<T>(op, n, len);
        for root in [0, n - 1] {
            let mut got = vec![T::default(); len];
            c.reduce(&mine, &mut got, op, root).unwrap();
            if me == root {
                check!(ctx, format!("reduce {what} to {root}"), got, want);
            }
        }
        let mut got = vec![T::default(); len];
        c.allreduce(&mine, &mut got, op).unwrap();
        check!(ctx, format!("allreduce {what}"), got, want);
        let mut got = vec![T::default(); len];
        c.scan(&mine, &mut got, op).unwrap();
        check!(
            ctx,
            format!("scan {what}"),
            got,
            expected::<T>(op, me + 1, len)
        );
        // reduce_scatter: rank r gets r + 1 elements of the result.
        let counts: Vec<usize> = (0..n).map(|r| r + 1).collect();
        let total: usize = counts.iter().sum();
        let mine = contribution::<T>(op, me, total);
        let all = expected::<T>(op, n, total);
        let from: usize = counts[..me].iter().sum();
        let mut got = vec![T::default(); counts[me]];
        c.reduce_scatter(&mine, &mut got, &counts, op).unwrap();
        check!(
            ctx,
            format!("reduce_scatter {what}"),
            got,
            all[from..from + counts[me]].to_vec()
        );
    }
}

fn movement<T: Sample>(c: &Comm, ctx: (&str, usize)) {
    let (n, me) = (c.size(), c.rank());
    let kind = format!("{:?}", T::KIND);
    let block = |r: usize, len: usize| -> Vec<T> { (0..len).map(|i| T::at(r, i)).collect() };
    // gather and allgather: 3 elements each.
    let all: Vec<T> = (0..n).flat_map(|r| block(r, 3)).collect();
    for root in [0, n / 2] {
        let mut got = vec![T::default(); if me == root { 3 * n } else { 0 }];
        c.gather(&block(me, 3), &mut got, root).unwrap();
        if me == root {
            check!(ctx, format!("gather {kind} to {root}"), got, all);
        }
        let mut got = vec![T::default(); 3];
        c.scatter(if me == root { &all } else { &[] }, &mut got, root)
            .unwrap();
        check!(
            ctx,
            format!("scatter {kind} from {root}"),
            got,
            block(me, 3)
        );
    }
    let mut got = vec![T::default(); 3 * n];
    c.allgather(&block(me, 3), &mut got).unwrap();
    check!(ctx, format!("allgather {kind}"), got, all);
    // v-variants: rank r has r + 1 elements, placed in reverse rank order with a gap of 2.
    let counts: Vec<usize> = (0..n).map(|r| r + 1).collect();
    let mut displs = vec![0; n];
    let mut at = 0;
    for r in (0..n).rev() {
        displs[r] = at;
        at += counts[r] + 2;
    }
    let mut want = vec![T::default(); at];
    for r in 0..n {
        want[displs[r]..displs[r] + counts[r]].copy_from_slice(&block(r, counts[r]));
    }
    let root = n - 1;
    let mut got = vec![T::default(); if me == root { at } else { 0 }];
    c.gatherv(&block(me, me + 1), &mut got, &counts, &displs, root)
        .unwrap();
    if me == root {
        check!(ctx, format!("gatherv {kind}"), got, want);
    }
    let mut got = vec![T::default(); me + 1];
    c.scatterv(
        if me == root { &want } else { &[] },
        &counts,
        &displs,
        &mut got,
        root,
    )
    .unwrap();
    check!(ctx, format!("scatterv {kind}"), got, block(me, me + 1));
    let mut got = vec![T::default(); at];
    c.allgatherv(&block(me, me + 1), &mut got, &counts, &displs)
        .unwrap();
    check!(ctx, format!("allgatherv {kind}"), got, want);
    // alltoall: block d of rank r's send is what r sends d.
    let piece = |from: usize, to: usize, len: usize| -> Vec<T> {
        (0..len).map(|i| T::at(from * 10 + to, i)).collect()
    };
    let send: Vec<T> = (0..n).flat_map(|d| piece(me, d, 2)).collect();
    let want: Vec<T> = (0..n).flat_map(|s| piece(s, me, 2)).collect();
    let mut got = vec![T::default(); 2 * n];
    c.alltoall(&send, &mut got).unwrap();
    check!(ctx, format!("alltoall {kind}"), got, want);
    // alltoallv: rank s sends (s + d) % 3 elements to rank d.
    let len = |s: usize, d: usize| (s + d) % 3;
    let sc: Vec<usize> = (0..n).map(|d| len(me, d)).collect();
    let rc: Vec<usize> = (0..n).map(|s| len(s, me)).collect();
    let (sd, rd) = (prefix(&sc), prefix(&rc));
    let send: Vec<T> = (0..n).flat_map(|d| piece(me, d, len(me, d))).collect();
    let want: Vec<T> = (0..n).flat_map(|s| piece(s, me, len(s, me))).collect();
    let mut got = vec![T::default(); want.len()];
    c.alltoallv(&send, &sc, &sd, &mut got, &rc, &rd).unwrap();
    check!(ctx, format!("alltoallv {kind}"), got, want);
}

fn prefix(counts: &[usize]) -> Vec<usize> {
    let mut at = 0;
    counts
        .iter()
        .map(|c| {
            let d = at;
            at += c;
            d
        })
        .collect()
}

fn broadcasts(c: &Comm, ctx: (&str, usize)) {
    let (n, me) = (c.size(), c.rank());
    // Small enough to go eagerly and large enough for rendezvous on every fabric.
    for len in [0usize, 3000, 100_000] {
        for root in [0, n - 1] {
            let want: Vec<u8> = (0..len).map(|i| (i * 7 + root) as u8).collect();
            let mut b = if me == root {
                want.clone()
            } else {
                vec![0u8; len]
            };
            c.bcast(&mut b, root).unwrap();
            check!(ctx, format!("bcast of {len} bytes from {root}"), b, want);
        }
    }
    let want: Vec<f64> = (0..10).map(|i| i as f64 / 3.0).collect();
    let mut b = if me == 0 { want.clone() } else { vec![0.0; 10] };
    c.bcast_values(&mut b, 0).unwrap();
    check!(ctx, "bcast_values f64", b, want);
}

fn ring(c: &Comm, ctx: (&str, usize)) {
    let (n, me) = (c.size(), c.rank());
    let out = vec![me as u8; 5000];
    let mut got = vec![0u8; 5000];
    let st = c
        .sendrecv(&out, (me + 1) % n, 9, &mut got, (me + n - 1) % n, 9)
        .unwrap();
    check!(ctx, "sendrecv source", st.source, (me + n - 1) % n);
    check!(
        ctx,
        "sendrecv data",
        got,
        vec![((me + n - 1) % n) as u8; 5000]
    );
}

fn splits(c: &Comm, ctx: (&str, usize)) {
    let (n, me) = (c.size(), c.rank());
    // Even and odd ranks, each half numbered in reverse.
    let half = c
        .split(Some((me % 2) as u32), -(me as i32))
        .unwrap()
        .unwrap();
    let mates: Vec<usize> = (0..n).filter(|r| r % 2 == me % 2).rev().collect();
    check!(ctx, "split size", half.size(), mates.len());
    check!(
        ctx,
        "split rank",
        half.rank(),
        mates.iter().position(|r| *r == me).unwrap()
    );
    let mut sum = [0i64];
    half.allreduce(&[me as i64], &mut sum, ReduceOp::Sum)
        .unwrap();
    check!(
        ctx,
        "allreduce on a split",
        sum[0],
        mates.iter().sum::<usize>() as i64
    );
    let mut members = vec![0i32; half.size()];
    half.allgather(&[me as i32], &mut members).unwrap();
    check!(
        ctx,
        "allgather on a split (members in key order)",
        members,
        mates.iter().map(|r| *r as i32).collect::<Vec<_>>()
    );
    movement::<i32>(&half, ctx);
    // A rank that gives no colour joins none; the others form one.
    let some = c
        .split(if me == 0 && n > 1 { None } else { Some(7) }, 0)
        .unwrap();
    check!(
        ctx,
        "split without a colour",
        some.is_none(),
        me == 0 && n > 1
    );
    if let Some(rest) = &some {
        // A split of a split.
        let inner = rest.split(Some(0), 0).unwrap().unwrap();
        check!(ctx, "nested split size", inner.size(), rest.size());
        inner.barrier().unwrap();
    }
    // Traffic stays in its communicator: rank 1 has a receive for any source with tag 7 posted
    // on the world while ranks 0 and 1 talk with tag 7 in a communicator of their own.
    let pair = c
        .split(Some(u32::from(me < 2)), me as i32)
        .unwrap()
        .unwrap();
    if n >= 2 && me < 2 {
        if me == 1 {
            let mut world_msg = [0u8; 5];
            let r = c.irecv(&mut world_msg, 0, 7).unwrap();
            let mut sub_msg = [0u8; 3];
            pair.recv(&mut sub_msg, 0, 7).unwrap();
            check!(ctx, "message on the split", &sub_msg, b"sub");
            r.wait().unwrap();
            check!(ctx, "message on the world", &world_msg, b"world");
        } else {
            pair.send(b"sub", 1, 7).unwrap();
            c.send(b"world", 1, 7).unwrap();
        }
    }
    pair.barrier().unwrap();
}

fn refusals(c: &Comm, ctx: (&str, usize)) {
    let z = [Complex64::new(1.0, 1.0)];
    let mut out = [Complex64::default()];
    let e = c.allreduce(&z, &mut out, ReduceOp::Max).unwrap_err();
    check!(
        ctx,
        "max of complex numbers is refused",
        e.to_string().contains("not defined on C64"),
        true
    );
    let e = c
        .allreduce(&[1.0f64, 2.0], &mut [0.0], ReduceOp::Sum)
        .unwrap_err();
    check!(
        ctx,
        "mismatched lengths are refused",
        e.to_string().contains("must match"),
        true
    );
}

/// Every check, on `c`; `fabric` names the fabric in failures.
pub fn all(c: &Comm, fabric: &str) {
    let label = format!("{fabric}, {} ranks", c.size());
    let ctx = (label.as_str(), c.rank());
    c.barrier().unwrap();
    broadcasts(c, ctx);
    reductions::<i32>(c, ctx);
    reductions::<i64>(c, ctx);
    reductions::<f64>(c, ctx);
    reductions::<u8>(c, ctx);
    reductions::<Complex64>(c, ctx);
    movement::<u8>(c, ctx);
    movement::<i32>(c, ctx);
    movement::<f64>(c, ctx);
    movement::<Complex64>(c, ctx);
    ring(c, ctx);
    splits(c, ctx);
    refusals(c, ctx);
    c.barrier().unwrap();
}
