//! The busiest group of a large domain without classifying every group on every pass.
//!
//! Mirrors: the pick of update_sd_lb_stats() / update_sd_pick_busiest() (the group with
//! the highest type, then the highest avg_load, the first of equals in the domain's
//! group order; groups without tasks never picked) for domains of many groups, where the
//! kernel re-reads every CPU (a flat LLC of 1024 CPUs is 1024 single-CPU groups).
//! Model: a tournament tree over the domain's groups in their order. A group whose sums
//! change is only marked; the next pass re-ranks the marked groups and replays their
//! matches, so a pass costs O(changed x log groups) instead of O(groups). The ranks are
//! computed by the balancer (`balance.rs`), so the pick is the linear scan's, exactly.

/// A group's rank: (group type, avg_load); `None`: the group has no tasks.
pub type Rank = Option<(u8, u64)>;

const NONE: u32 = u32::MAX;

/// One domain's tournament (shared by every CPU whose domain has this group list).
#[derive(Clone, Debug)]
pub struct BusiestTree {
    /// Leaves (a power of two); leaf `i` is the list's `i`-th group.
    size: usize,
    /// Node `n` (1 = root): the winning leaf below it, or NONE.
    win: Vec<u32>,
    /// Each leaf's rank as of its last refresh.
    rank: Vec<Rank>,
    /// Leaves whose group changed since the last refresh.
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
}

impl BusiestTree {
    /// A tree over `n` groups, all to be ranked at the first refresh.
    pub fn new(n: usize) -> Self {
        let size = n.next_power_of_two().max(1);
        BusiestTree {
            size,
            win: vec![NONE; 2 * size],
            rank: vec![None; size],
            dirty: (0..n as u32).collect(),
            is_dirty: (0..size).map(|i| i < n).collect(),
        }
    }

    /// Group `leaf`'s sums changed.
    #[inline]
    pub fn mark(&mut self, leaf: u32) {
        if !self.is_dirty[leaf as usize] {
            self.is_dirty[leaf as usize] = true;
            self.dirty.push(leaf);
        }
    }

    /// The better of two leaves: the higher rank, the earlier leaf among equals.
    #[inline]
    fn better(&self, a: u32, b: u32) -> u32 {
        match (a, b) {
            (NONE, _) => b,
            (_, NONE) => a,
            _ if self.rank[b as usize] > self.rank[a as usize] => b,
            _ => a,
        }
    }

    /// Replays the matches above `leaf`.
    fn replay(&mut self, leaf: usize) {
        let mut n = self.size + leaf;
        self.win[n] = if self.rank[leaf].is_some() { leaf as u32 } else { NONE };
        while n > 1 {
            n >>= 1;
            self.win[n] = self.better(self.win[2 * n], self.win[2 * n + 1]);
        }
    }

    /// Re-ranks the changed groups (`rank_of(leaf)`) and replays their matches.
    pub fn refresh(&mut self, mut rank_of: impl FnMut(usize) -> Rank) {
        while let Some(leaf) = self.dirty.pop() {
            let leaf = leaf as usize;
            self.is_dirty[leaf] = false;
            self.rank[leaf] = rank_of(leaf);
            self.replay(leaf);
        }
    }

    /// The best leaf other than `except` (the balancing CPU's own group), if any group
    /// has tasks. The tree must be refreshed.
    pub fn best_except(&mut self, except: usize) -> Option<usize> {
        let kept = self.rank[except].take();
        self.replay(except);
        let best = self.win[1];
        self.rank[except] = kept;
        self.replay(except);
        (best != NONE).then_some(best as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The linear scan it replaces: the first of the highest ranks, `except` skipped.
    fn scan(ranks: &[Rank], except: usize) -> Option<usize> {
        let mut best: Option<(usize, (u8, u64))> = None;
        for (i, r) in ranks.iter().enumerate() {
            let Some(r) = *r else { continue };
            if i != except && best.is_none_or(|(_, b)| r > b) {
                best = Some((i, r));
            }
        }
        best.map(|(i, _)| i)
    }

    proptest! {
        /// After any sequence of changes and refreshes, the tree picks what the scan picks
        /// (ranks drawn from a small range, so ties are common).
        #[test]
        fn picks_as_the_linear_scan(
            n in 1usize..70,
            steps in proptest::collection::vec((0usize..70, proptest::option::of((0u8..4, 0u64..6)), 0usize..70, any::<bool>()), 1..200),
        ) {
            let mut ranks: Vec<Rank> = vec![None; n];
            let mut t = BusiestTree::new(n);
            for (leaf, rank, except, query) in steps {
                let (leaf, except) = (leaf % n, except % n);
                ranks[leaf] = rank;
                t.mark(leaf as u32);
                if query {
                    t.refresh(|i| ranks[i]);
                    prop_assert_eq!(t.best_except(except), scan(&ranks, except));
                }
            }
            t.refresh(|i| ranks[i]);
            for except in 0..n {
                prop_assert_eq!(t.best_except(except), scan(&ranks, except));
            }
        }
    }
}
