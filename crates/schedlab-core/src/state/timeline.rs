//! The ordered runqueue of the fair class: queued entities by vruntime, each subtree
//! knowing its earliest deadline.
//!
//! Mirrors: struct cfs_rq's `tasks_timeline` (an rb-tree keyed by vruntime, cached
//! leftmost) with EEVDF's augmentation (6.6: each node carries the subtree's
//! `min_deadline`, and pick_eevdf() descends the tree along the eligible prefix).
//! Model: a treap instead of an rb-tree (the same order and the same O(log n) bounds;
//! node priorities are a fixed hash of the entity id, so runs stay deterministic). One
//! arena serves every runqueue: an entity is queued on at most one, so node `p` is
//! entity `p`: a task's id, or a group entity's index with [`GROUP_SE`] set (those live
//! in a second arena). Keys are (vruntime, id), as the pick's tie-break was before (a
//! task before a group entity at equal vruntime); a queued entity's vruntime and
//! deadline must not change while it is in the tree (they change only for the running
//! entities, which are not queued).

/// An entity id: a task id, or `GROUP_SE | index` for a group scheduling entity.
pub type EntityId = usize;

/// The bit that marks a group entity's id.
pub const GROUP_SE: usize = 1 << 31;

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    left: u32,
    right: u32,
    prio: u32,
    vruntime: u64,
    deadline: u64,
    /// Earliest (deadline, task) in this subtree.
    min_deadline: (u64, u32),
}

impl Default for Node {
    fn default() -> Self {
        Node { left: NIL, right: NIL, prio: 0, vruntime: 0, deadline: 0, min_deadline: (u64::MAX, NIL) }
    }
}

/// One runqueue's tree: its root and its leftmost node (rb_root_cached), both NIL-able.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimelineRoot {
    root: u32,
    leftmost: u32,
}

impl Default for TimelineRoot {
    fn default() -> Self {
        TimelineRoot { root: NIL, leftmost: NIL }
    }
}

impl TimelineRoot {
    /// Tells whether the tree is empty.
    pub fn is_empty(self) -> bool {
        self.root == NIL
    }
}

/// The arenas of tree nodes, one per task and one per group entity.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    nodes: Vec<Node>,
    group_nodes: Vec<Node>,
}

/// splitmix64's finalizer: a fixed, well-spread priority per task.
fn priority(p: u32) -> u32 {
    let mut z = (p as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

impl Timeline {
    #[inline]
    fn nd(&self, n: u32) -> &Node {
        let n = n as usize;
        if n & GROUP_SE == 0 {
            &self.nodes[n]
        } else {
            &self.group_nodes[n & !GROUP_SE]
        }
    }

    #[inline]
    fn nd_mut(&mut self, n: u32) -> &mut Node {
        let n = n as usize;
        if n & GROUP_SE == 0 {
            &mut self.nodes[n]
        } else {
            &mut self.group_nodes[n & !GROUP_SE]
        }
    }

    fn key(&self, n: u32) -> (u64, u32) {
        (self.nd(n).vruntime, n)
    }

    fn min_deadline(&self, n: u32) -> (u64, u32) {
        if n == NIL {
            (u64::MAX, NIL)
        } else {
            self.nd(n).min_deadline
        }
    }

    fn update(&mut self, n: u32) {
        let node = *self.nd(n);
        let own = (node.deadline, n);
        let m = own.min(self.min_deadline(node.left)).min(self.min_deadline(node.right));
        self.nd_mut(n).min_deadline = m;
    }

    /// Splits `t` into keys < `key` and keys >= `key`.
    fn split(&mut self, t: u32, key: (u64, u32)) -> (u32, u32) {
        if t == NIL {
            return (NIL, NIL);
        }
        if self.key(t) < key {
            let (l, r) = self.split(self.nd(t).right, key);
            self.nd_mut(t).right = l;
            self.update(t);
            (t, r)
        } else {
            let (l, r) = self.split(self.nd(t).left, key);
            self.nd_mut(t).left = r;
            self.update(t);
            (l, t)
        }
    }

    /// Joins two trees whose keys are all ordered `a` < `b`.
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.nd(a).prio > self.nd(b).prio {
            let r = self.merge(self.nd(a).right, b);
            self.nd_mut(a).right = r;
            self.update(a);
            a
        } else {
            let l = self.merge(a, self.nd(b).left);
            self.nd_mut(b).left = l;
            self.update(b);
            b
        }
    }

    /// Inserts entity `p` with its current vruntime and deadline.
    pub fn insert(&mut self, root: &mut TimelineRoot, p: EntityId, vruntime: u64, deadline: u64) {
        let n = p as u32;
        let (arena, i) = if p & GROUP_SE == 0 { (&mut self.nodes, p) } else { (&mut self.group_nodes, p & !GROUP_SE) };
        if arena.len() <= i {
            arena.resize(i + 1, Node::default());
        }
        arena[i] = Node { left: NIL, right: NIL, prio: priority(n), vruntime, deadline, min_deadline: (deadline, n) };
        if root.leftmost == NIL || (vruntime, n) < self.key(root.leftmost) {
            root.leftmost = n;
        }
        root.root = self.insert_below(root.root, n);
    }

    /// Treap insertion: descend by key while the nodes outrank `n`, then split the rest
    /// under it. Each node passed gains `n` in its subtree, so its minimum only narrows
    /// (done on the way down: only the link to `n` changes below the root). Left or
    /// right is a coin toss for a branch predictor: a conditional move picks the child.
    fn insert_below(&mut self, root: u32, n: u32) -> u32 {
        let new = *self.nd(n);
        let key = (new.vruntime, n);
        let (mut parent, mut went_left) = (NIL, false);
        let mut t = root;
        while t != NIL && new.prio <= self.nd(t).prio {
            let node = self.nd_mut(t);
            node.min_deadline = node.min_deadline.min((new.deadline, n));
            went_left = key < (node.vruntime, t);
            parent = t;
            t = std::hint::select_unpredictable(went_left, node.left, node.right);
        }
        let sub = if t == NIL {
            n
        } else {
            let (l, r) = self.split(t, key);
            let node = self.nd_mut(n);
            node.left = l;
            node.right = r;
            self.update(n);
            n
        };
        if parent == NIL {
            return sub;
        }
        let p = self.nd_mut(parent);
        if went_left {
            p.left = sub;
        } else {
            p.right = sub;
        }
        root
    }

    /// Removes entity `p`, which must be in the tree under `root`.
    pub fn remove(&mut self, root: &mut TimelineRoot, p: EntityId) {
        let key = self.key(p as u32);
        root.root = self.remove_below(root.root, key);
        if root.leftmost == p as u32 {
            root.leftmost = self.leftmost_below(root.root);
        }
    }

    /// Descends to the node with `key`, puts its children's merge in its place, and
    /// recomputes the minimum on the way back up.
    fn remove_below(&mut self, t: u32, key: (u64, u32)) -> u32 {
        debug_assert_ne!(t, NIL, "removed entity is not in this tree");
        let k = self.key(t);
        if k == key {
            let node = *self.nd(t);
            return self.merge(node.left, node.right);
        }
        if key < k {
            let l = self.remove_below(self.nd(t).left, key);
            self.nd_mut(t).left = l;
        } else {
            let r = self.remove_below(self.nd(t).right, key);
            self.nd_mut(t).right = r;
        }
        self.update(t);
        t
    }

    fn leftmost_below(&self, mut n: u32) -> u32 {
        if n != NIL {
            while self.nd(n).left != NIL {
                n = self.nd(n).left;
            }
        }
        n
    }

    /// The queued entity with the smallest (vruntime, id): the cached leftmost.
    #[inline]
    pub fn leftmost(&self, root: TimelineRoot) -> Option<EntityId> {
        (root.leftmost != NIL).then_some(root.leftmost as EntityId)
    }

    /// The leftmost's vruntime, read from its node (equal to the entity's while queued).
    #[inline]
    pub fn leftmost_vruntime(&self, root: TimelineRoot) -> Option<u64> {
        (root.leftmost != NIL).then(|| self.nd(root.leftmost).vruntime)
    }

    /// The earliest (deadline, id) among queued tasks whose vruntime is eligible, given
    /// that eligibility holds for every vruntime up to some bound and none beyond it
    /// (vruntime <= V): the descent pick_eevdf() makes.
    pub fn earliest_eligible(&self, root: TimelineRoot, eligible: impl Fn(u64) -> bool) -> Option<(u64, EntityId)> {
        use std::hint::select_unpredictable as pick;
        let mut best = (u64::MAX, NIL);
        let mut n = root.root;
        while n != NIL {
            let node = self.nd(n);
            // Eligible or not is a coin toss for a branch predictor: both outcomes are
            // computed and conditional moves keep one (a missing left child reads this
            // node's own figures, then stands for "nothing").
            let e = eligible(node.vruntime);
            let no_left = node.left == NIL;
            let left_min = pick(no_left, (u64::MAX, NIL), self.nd(pick(no_left, n, node.left)).min_deadline);
            best = pick(e, best.min(left_min).min((node.deadline, n)), best);
            n = pick(e, node.right, node.left);
        }
        (best.1 != NIL).then_some((best.0, best.1 as EntityId))
    }

    /// The entities in the tree under `root` (a walk: for invariant checks).
    pub fn count(&self, root: TimelineRoot) -> usize {
        let mut stack = vec![root.root];
        let mut n = 0;
        while let Some(x) = stack.pop() {
            if x != NIL {
                n += 1;
                stack.push(self.nd(x).left);
                stack.push(self.nd(x).right);
            }
        }
        n
    }

    /// Calls `f` on every entity in the tree under `root` (a walk).
    pub fn for_each(&self, root: TimelineRoot, mut f: impl FnMut(EntityId)) {
        let mut stack = vec![root.root];
        while let Some(x) = stack.pop() {
            if x != NIL {
                f(x as EntityId);
                stack.push(self.nd(x).left);
                stack.push(self.nd(x).right);
            }
        }
    }

    /// The vruntime and deadline a queued entity was inserted with.
    pub fn keys(&self, p: EntityId) -> (u64, u64) {
        let n = self.nd(p as u32);
        (n.vruntime, n.deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The tree answers as a scan of the queue would, through random inserts and removals.
        #[test]
        fn matches_a_scan(ops in proptest::collection::vec((0usize..40, 0u64..50, 0u64..80, 0u64..60), 1..300)) {
            let mut tl = Timeline::default();
            let mut root = TimelineRoot::default();
            let mut queued: std::collections::BTreeMap<usize, (u64, u64)> = Default::default();
            for (p, v, d, bound) in ops {
                // Ids 20..40 stand for group entities 0..20.
                let p = if p >= 20 { GROUP_SE | (p - 20) } else { p };
                if let std::collections::btree_map::Entry::Vacant(e) = queued.entry(p) {
                    tl.insert(&mut root, p, v, d);
                    e.insert((v, d));
                } else {
                    tl.remove(&mut root, p);
                    queued.remove(&p);
                }
                let left = queued.iter().map(|(&p, &(v, _))| (v, p)).min().map(|(_, p)| p);
                prop_assert_eq!(tl.leftmost(root), left);
                let want = queued.iter().filter(|(_, &(v, _))| v <= bound).map(|(&p, &(_, d))| (d, p)).min();
                prop_assert_eq!(tl.earliest_eligible(root, |v| v <= bound), want);
                prop_assert_eq!(root.is_empty(), queued.is_empty());
                prop_assert_eq!(tl.count(root), queued.len());
            }
        }
    }
}
