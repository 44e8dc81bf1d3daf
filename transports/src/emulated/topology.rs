//! Where an emulated fabric's nodes sit and which links a message between two of them
//! crosses: a ring (Hyperlink), one switch (RapidIO) or a fat tree (BXI). Every directed link
//! is a [`Resource`], so messages that cross the same link queue for it in virtual time while
//! messages on disjoint links do not. Transfers are cut-through: one holds every link of its
//! route for its serialisation time, from when the last of them is free. Building a topology
//! and routing in it cost O(nodes x levels) memory and O(route length) time, never a table of
//! node pairs, so jobs of a thousand nodes stay cheap.
//!
//! Ranks map onto nodes by `rank / ranks_per_node` ([`node_of`]); two ranks of one node reach
//! each other through their NIC without crossing a link (an empty route).

use bench_core::des::Ps;

use super::Resource;

/// The node rank `r` runs on when `per_node` ranks share one.
pub fn node_of(rank: usize, per_node: usize) -> usize {
    rank / per_node.max(1)
}

/// Nodes a job of `ranks` ranks occupies.
pub fn nodes_for(ranks: usize, per_node: usize) -> usize {
    ranks.div_ceil(per_node.max(1)).max(1)
}

/// The shape the nodes are linked in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Each node linked to both neighbours; a message goes the shortest way round, clockwise
    /// (towards higher node numbers) when both ways are as long.
    Ring,
    /// Every node on one switch by a port pair: a message holds the sender's port into the
    /// switch and the receiver's port out of it.
    Switch,
    /// A fat tree of `levels` levels of switches with `radix` ports each (a folded Clos, as
    /// k-ary n-trees are built, k = radix / 2): below the top a switch has k ports down and k
    /// up; a top switch has all `radix` down. It holds 2 k^levels nodes. Up/down routing: up
    /// to the lowest level where source and destination share a subtree, then down; the
    /// up-link at each level is chosen by the destination (d-mod-k), so every destination has
    /// one way down and sources spread over the up-links.
    FatTree { radix: usize, levels: usize },
}

/// The links a message crosses, in order, and what it passes between them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Route {
    /// Indices of the directed links crossed, in the order crossed.
    pub links: Vec<usize>,
    /// On a ring, the nodes passed through, in order (empty elsewhere).
    pub via: Vec<usize>,
    /// Switches or nodes passed beyond the first, each adding the per-hop latency.
    pub extra_hops: u64,
}

/// Nodes linked in a [`Shape`], with a [`Resource`] per directed link.
#[derive(Debug, Clone)]
pub struct Topology {
    shape: Shape,
    nodes: usize,
    links: Vec<Resource>,
    /// The latency each hop beyond the first switch (or intermediate node) adds.
    hop_latency: Ps,
}

/// A job larger than its topology holds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a fat tree of {radix}-port switches in {levels} levels holds {capacity} nodes, and the job needs {nodes}")]
pub struct TooLarge {
    pub radix: usize,
    pub levels: usize,
    pub capacity: usize,
    pub nodes: usize,
}

impl Topology {
    /// `nodes` nodes in `shape`; a fat tree refuses more nodes than it holds.
    pub fn new(shape: Shape, nodes: usize, hop_latency: Ps) -> Result<Topology, TooLarge> {
        let nodes = nodes.max(1);
        let links = match shape {
            Shape::Ring | Shape::Switch => 2 * nodes,
            Shape::FatTree { radix, levels } => {
                let capacity = fat_tree_capacity(radix, levels);
                if nodes > capacity {
                    return Err(TooLarge {
                        radix,
                        levels,
                        capacity,
                        nodes,
                    });
                }
                // Per level boundary, up-links (ids below 2 x nodes, see `tree_route`) then
                // down-links (ids below nodes).
                levels * 3 * nodes
            }
        };
        Ok(Topology {
            shape,
            nodes,
            links: vec![Resource::default(); links],
            hop_latency,
        })
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// The links from node `a` to node `b` (none within one node).
    pub fn route(&self, a: usize, b: usize) -> Route {
        assert!(
            a < self.nodes && b < self.nodes,
            "route {a}->{b} outside {} nodes",
            self.nodes
        );
        if a == b {
            return Route::default();
        }
        match self.shape {
            Shape::Ring => self.ring_route(a, b),
            Shape::Switch => Route {
                links: vec![a, self.nodes + b],
                via: Vec::new(),
                extra_hops: 0,
            },
            Shape::FatTree { radix, levels } => self.tree_route(radix / 2, levels, a, b),
        }
    }

    /// Clockwise link i is i -> i+1, anticlockwise link n+i is i -> i-1.
    fn ring_route(&self, a: usize, b: usize) -> Route {
        let n = self.nodes;
        let cw = (b + n - a) % n;
        let (steps, forward) = if cw <= n - cw {
            (cw, true)
        } else {
            (n - cw, false)
        };
        let mut links = Vec::with_capacity(steps);
        let mut via = Vec::with_capacity(steps.saturating_sub(1));
        let mut at = a;
        for i in 0..steps {
            if forward {
                links.push(at);
                at = (at + 1) % n;
            } else {
                links.push(n + at);
                at = (at + n - 1) % n;
            }
            if i + 1 < steps {
                via.push(at);
            }
        }
        let extra_hops = via.len().saturating_sub(1) as u64;
        Route {
            links,
            via,
            extra_hops,
        }
    }

    /// Up from `a` to the lowest level whose subtree holds both, then down to `b`. The link
    /// between a level-l subtree s (a node at l = 0) and its parent's replica C has id
    /// s * A_l + C, A_l being the nodes a level-l subtree holds (k^l); going up towards `b`
    /// the replica is b mod A_l (d-mod-k), so the way down to `b` is the links of id `b`.
    fn tree_route(&self, k: usize, levels: usize, a: usize, b: usize) -> Route {
        let n = self.nodes;
        let mut span = 1usize; // A_l
        let mut up = Vec::with_capacity(levels);
        for l in 0..levels {
            if l > 0 && a / span == b / span {
                break;
            }
            up.push(l * 3 * n + (a / span) * span + b % span);
            span = span.saturating_mul(k);
        }
        let h = up.len();
        let down = (0..h).rev().map(|l| l * 3 * n + 2 * n + b);
        let links: Vec<usize> = up.into_iter().chain(down).collect();
        Route {
            links,
            via: Vec::new(),
            extra_hops: 2 * (h as u64 - 1),
        }
    }

    /// Holds every link of `links` for `dur` from when the last of them is free, no earlier
    /// than `at` (cut-through); returns (start, end).
    pub fn reserve(&mut self, links: &[usize], at: Ps, dur: Ps) -> (Ps, Ps) {
        let start = links
            .iter()
            .fold(at, |t, &l| t.max(self.links[l].free_at()));
        for &l in links {
            self.links[l].reserve(start, dur);
        }
        (start, start + dur)
    }

    /// The latency the hops of `route` beyond the first add.
    pub fn hop_latency(&self, route: &Route) -> Ps {
        route.extra_hops * self.hop_latency
    }

    /// The shape in words, for a model's `describe`.
    pub fn describe(&self) -> String {
        match self.shape {
            Shape::Ring => format!(
                "{}-node ring, shortest way round (clockwise on a tie)",
                self.nodes
            ),
            Shape::Switch => format!("{} nodes on one switch", self.nodes),
            Shape::FatTree { radix, levels } => format!(
                "{} nodes in a fat tree of {radix}-port switches, {levels} levels (holds {})",
                self.nodes,
                fat_tree_capacity(radix, levels)
            ),
        }
    }
}

/// Nodes a fat tree of `levels` levels of `radix`-port switches holds: 2 (radix/2)^levels
/// (saturating; 0 for a radix below 2).
pub fn fat_tree_capacity(radix: usize, levels: usize) -> usize {
    let k = radix / 2;
    (0..levels.saturating_sub(1))
        .fold(2 * k, |c, _| c.saturating_mul(k))
        .min(if levels == 0 { 0 } else { usize::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: usize) -> Topology {
        Topology::new(Shape::Ring, n, 100).unwrap()
    }

    fn tree(radix: usize, levels: usize, n: usize) -> Topology {
        Topology::new(Shape::FatTree { radix, levels }, n, 100).unwrap()
    }

    #[test]
    fn a_ring_goes_the_shortest_way_round_clockwise_on_a_tie() {
        let r = ring(8);
        // 1 -> 3 clockwise through 2; 3 -> 1 anticlockwise through 2.
        assert_eq!(r.route(1, 3).links, vec![1, 2]);
        assert_eq!(r.route(1, 3).via, vec![2]);
        assert_eq!(r.route(3, 1).links, vec![8 + 3, 8 + 2]);
        // Round the end: 7 -> 1 clockwise, 1 -> 7 anticlockwise.
        assert_eq!(r.route(7, 1).links, vec![7, 0]);
        assert_eq!(r.route(1, 7).links, vec![8 + 1, 8]);
        // 0 -> 4 and 4 -> 0 are as long either way: clockwise both.
        assert_eq!(r.route(0, 4).links, vec![0, 1, 2, 3]);
        assert_eq!(r.route(4, 0).links, vec![4, 5, 6, 7]);
        assert_eq!(r.route(0, 4).via, vec![1, 2, 3]);
        assert_eq!(r.route(0, 4).extra_hops, 2);
        assert_eq!(r.route(0, 1).extra_hops, 0);
        assert_eq!(r.route(2, 2), Route::default());
    }

    #[test]
    fn the_four_ring_keeps_hyperlinks_diagonals() {
        // fabrics.md: diagonals 1->3 via 2, 3->1 via 4, 2->4 via 3, 4->2 via 1 (nodes from 1).
        let r = ring(4);
        for (a, via) in [(0, 1), (2, 3), (1, 2), (3, 0)] {
            assert_eq!(r.route(a, (a + 2) % 4).via, vec![via], "{a}");
        }
        // Two nodes: one link each way.
        let two = ring(2);
        assert_eq!(two.route(0, 1).links, vec![0]);
        assert_eq!(two.route(1, 0).links, vec![1]);
    }

    #[test]
    fn a_switch_holds_the_senders_port_in_and_the_receivers_port_out() {
        let s = Topology::new(Shape::Switch, 5, 100).unwrap();
        assert_eq!(s.route(1, 4).links, vec![1, 5 + 4]);
        assert_eq!(s.route(4, 1).links, vec![4, 5 + 1]);
        assert_eq!(s.route(1, 4).extra_hops, 0);
    }

    #[test]
    fn a_fat_tree_goes_up_to_the_common_subtree_and_down() {
        // 4-port switches (k = 2), 3 levels: 16 nodes, leaves of 2, level-2 subtrees of 4.
        let t = tree(4, 3, 16);
        let n = 16;
        let up = |l: usize, id: usize| l * 3 * n + id;
        let down = |l: usize, id: usize| l * 3 * n + 2 * n + id;
        // The radix's edge: 0 and 1 share a leaf; 1 and 2 do not.
        assert_eq!(t.route(0, 1).links, vec![up(0, 0), down(0, 1)]);
        assert_eq!(t.route(0, 1).extra_hops, 0);
        assert_eq!(
            t.route(1, 2).links,
            vec![up(0, 1), up(1, 0), down(1, 2), down(0, 2)]
        );
        assert_eq!(t.route(1, 2).extra_hops, 2);
        // To the other half: up to the top through the up-links 5's digits choose.
        let r = t.route(0, 13);
        assert_eq!(r.links.len(), 6);
        assert_eq!(r.links[..3], [up(0, 0), up(1, 1), up(2, 1)]);
        assert_eq!(r.links[3..], [down(2, 13), down(1, 13), down(0, 13)]);
        assert_eq!(r.extra_hops, 4);
        // Up-links are shared by destinations alike modulo k, not by others.
        assert_eq!(t.route(0, 2).links[1], t.route(1, 4).links[1]);
        assert_ne!(t.route(0, 2).links[1], t.route(1, 3).links[1]);
        // Every link id stays inside the topology, for every pair.
        for a in 0..n {
            for b in 0..n {
                assert!(t.route(a, b).links.iter().all(|&l| l < t.links.len()));
            }
        }
    }

    #[test]
    fn a_one_level_tree_is_one_switch_of_radix_ports() {
        let t = tree(8, 1, 8);
        assert_eq!(t.route(0, 7).links.len(), 2);
        assert_eq!(t.route(0, 7).extra_hops, 0);
        assert_eq!(fat_tree_capacity(8, 1), 8);
        assert_eq!(fat_tree_capacity(48, 3), 2 * 24 * 24 * 24);
        assert_eq!(fat_tree_capacity(4, 0), 0);
        assert_eq!(fat_tree_capacity(1 << 20, 8), usize::MAX);
    }

    #[test]
    fn a_job_larger_than_the_tree_is_refused() {
        let e = Topology::new(
            Shape::FatTree {
                radix: 4,
                levels: 2,
            },
            9,
            0,
        )
        .unwrap_err();
        assert_eq!(
            e,
            TooLarge {
                radix: 4,
                levels: 2,
                capacity: 8,
                nodes: 9
            }
        );
        assert!(Topology::new(
            Shape::FatTree {
                radix: 4,
                levels: 2
            },
            8,
            0
        )
        .is_ok());
    }

    #[test]
    fn transfers_on_one_link_queue_and_on_disjoint_links_do_not() {
        let mut t = tree(4, 2, 8);
        let (a, b) = (t.route(0, 2), t.route(1, 6));
        assert_eq!(a.links[1], b.links[1], "both take leaf 0's up-link 0");
        assert_eq!(t.reserve(&a.links, 0, 1000), (0, 1000));
        assert_eq!(t.reserve(&b.links, 0, 1000), (1000, 2000));
        let c = t.route(4, 7);
        assert_eq!(t.reserve(&c.links, 0, 1000), (0, 1000));
        assert_eq!(t.hop_latency(&a), 200);
    }

    #[test]
    fn ranks_share_nodes_in_blocks() {
        assert_eq!(node_of(5, 2), 2);
        assert_eq!(node_of(5, 1), 5);
        assert_eq!(nodes_for(5, 2), 3);
        assert_eq!(nodes_for(1024, 1), 1024);
    }
}
