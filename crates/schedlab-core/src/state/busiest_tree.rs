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

/// One domain's tournament (shared by every CPU whose domain has this group list).
#[derive(Clone, Debug)]
pub struct BusiestTree {
    /// Leaves (a power of two); leaf `i` is the list's `i`-th group. Leaf `size` is "no
    /// group", ranked below every group (a match against it needs no test).
    size: usize,
    /// Node `n` (1 = root): the winning leaf below it, or `size` (no group with tasks).
    win: Vec<u32>,
    /// Each leaf's rank as of its last refresh, as one number ordered as ranks are:
    /// 0 for no tasks, else (1 + type, avg_load).
    key: Vec<u128>,
    /// Leaves whose group changed since the last refresh.
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
}

fn key_of(rank: Rank) -> u128 {
    rank.map_or(0, |(kind, load)| (1 + kind as u128) << 64 | load as u128)
}

impl BusiestTree {
    /// A tree over `n` groups, all to be ranked at the first refresh.
    pub fn new(n: usize) -> Self {
        let size = n.next_power_of_two().max(1);
        BusiestTree {
            size,
            win: vec![size as u32; 2 * size],
            key: vec![0; size + 1],
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

    /// The better of two leaves: the higher rank, the earlier leaf among equals. Which
    /// wins is a coin toss for a branch predictor: a conditional move picks it.
    #[inline]
    fn better(&self, a: u32, b: u32) -> u32 {
        std::hint::select_unpredictable(self.key[b as usize] > self.key[a as usize], b, a)
    }

    /// Replays the matches above `leaf`.
    fn replay(&mut self, leaf: usize) {
        let mut n = self.size + leaf;
        self.win[n] = std::hint::select_unpredictable(self.key[leaf] != 0, leaf as u32, self.size as u32);
        while n > 1 {
            n >>= 1;
            self.win[n] = self.better(self.win[2 * n], self.win[2 * n + 1]);
        }
    }

    /// Re-ranks the changed groups (`rank_of(leaf)`) and replays their matches.
    pub fn refresh(&mut self, mut rank_of: impl FnMut(usize) -> Rank) {
        // Replaying each changed leaf's path costs log2(size) matches a leaf; once most
        // leaves changed (a busy flat LLC between two passes), playing every match once
        // (size - 1 of them) costs less. Both leave the same tree: every node is the
        // better of its two children.
        let levels = self.size.trailing_zeros() as usize;
        if self.dirty.len() * levels <= self.size {
            while let Some(leaf) = self.dirty.pop() {
                let leaf = leaf as usize;
                self.is_dirty[leaf] = false;
                self.key[leaf] = key_of(rank_of(leaf));
                self.replay(leaf);
            }
            return;
        }
        while let Some(leaf) = self.dirty.pop() {
            let leaf = leaf as usize;
            self.is_dirty[leaf] = false;
            self.key[leaf] = key_of(rank_of(leaf));
            self.win[self.size + leaf] = std::hint::select_unpredictable(self.key[leaf] != 0, leaf as u32, self.size as u32);
        }
        for n in (1..self.size).rev() {
            self.win[n] = self.better(self.win[2 * n], self.win[2 * n + 1]);
        }
    }

    /// The best leaf other than `except` (the balancing CPU's own group), if any group
    /// has tasks. The tree must be refreshed.
    pub fn best_except(&self, except: usize) -> Option<usize> {
        // The tournament without `except`: the winners of the subtrees beside its path,
        // met in leaf order (the earlier leaf wins among equals, as in the tree).
        let mut n = self.size + except;
        let mut best = self.size as u32;
        while n > 1 {
            let beside = self.win[n ^ 1];
            best = if n & 1 == 1 { self.better(beside, best) } else { self.better(best, beside) };
            n >>= 1;
        }
        (best as usize != self.size).then_some(best as usize)
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

    /// A refresh of a few changed leaves replays their paths, one of most leaves plays
    /// every match again: the picks are the scan's either way.
    #[test]
    fn both_refresh_paths_pick_as_the_scan() {
        let n = 100;
        let mut ranks: Vec<Rank> = (0..n).map(|i| (i % 3 != 0).then_some(((i % 2) as u8, (i * 7 % 11) as u64))).collect();
        let mut t = BusiestTree::new(n);
        t.refresh(|i| ranks[i]); // all n leaves changed: the rebuild
        for except in 0..n {
            assert_eq!(t.best_except(except), scan(&ranks, except));
        }
        for round in 0..20usize {
            let changed = if round % 2 == 0 { 3 } else { 90 };
            for k in 0..changed {
                let leaf = (round * 31 + k * 17) % n;
                ranks[leaf] = (k % 4 != 0).then_some(((k % 3) as u8, ((round + k) % 5) as u64));
                t.mark(leaf as u32);
            }
            t.refresh(|i| ranks[i]);
            for except in 0..n {
                assert_eq!(t.best_except(except), scan(&ranks, except), "round {round}");
            }
        }
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
