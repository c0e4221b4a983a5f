package io.fdkvc.core.policy;

import io.fdkvc.core.cache.KvStream;
import java.util.Arrays;

/**
 * The one place where entries are ranked and evicted: every policy fills a tier and a score per
 * entry, and the ranker removes the {@code count} entries that are lowest by (tier, score,
 * position). A higher tier is always kept before a lower one (sinks, the recent window, the turn
 * in progress); within a tier the lowest score goes first; ties go to the lower position, which
 * is the lower index because streams are kept in position order.
 *
 * <p>Scratch arrays grow with the stream and are reused, so a turn allocates nothing.
 */
public final class Ranker {
    /** Tier of an entry that must never be evicted. */
    public static final int NEVER = Integer.MAX_VALUE;

    private int[] tier = new int[0];
    private double[] score = new double[0];
    private int[] order = new int[0];
    private int[] tmp = new int[0];
    private boolean[] remove = new boolean[0];
    private boolean packing = true;

    /** Makes room for {@code n} entries. */
    public void ensure(int n) {
        if (tier.length < n) {
            int cap = Math.max(n, tier.length * 2);
            tier = new int[cap];
            score = new double[cap];
            order = new int[cap];
            tmp = new int[cap];
            remove = new boolean[cap];
        }
    }

    public int[] tier() { return tier; }
    public double[] score() { return score; }

    /**
     * Evicts the lowest entries of {@code s} by (tier, score, position) until the stream's total
     * cost is within {@code budget} (with unit costs: the size - budget lowest), logging them on
     * the stream from the lowest up, or in position order when {@code logInPositionOrder}.
     * Entries of tier {@link #NEVER} are never chosen. With {@linkplain #setPacking packing} on
     * (the default), the evicted entries are then offered back, best-ranked first: each one whose
     * cost fits in the room left below the budget is readmitted.
     *
     * <p>Why packing: with costed entries (an utterance of many tokens), "evict the lowest until
     * the total fits" overshoots by up to one entry's cost, and the gap stays empty although a
     * smaller evicted entry would fit in it. Packing fills it by the policy's own ranking, so it
     * changes no policy's preferences, only how tightly the budget is used; every policy that
     * evicts through the ranker gets the same packing. With unit costs the overshoot is zero and
     * packing never readmits anything (the spec's setting is unchanged). Readmission scans the
     * evicted entries from the best-ranked down and takes each that fits (greedy, first fit by
     * rank): it never evicts an entry the ranking alone would have kept, and it never exceeds the
     * budget.
     *
     * @throws IllegalStateException if protected entries alone exceed the budget
     */
    public void evictToBudget(KvStream s, long budget, boolean logInPositionOrder) {
        long excess = s.totalCost() - budget;
        if (excess <= 0) return;
        int n = s.size();
        // Every entry costs at least 1, so at most `excess` entries go: rank only that many.
        int ranked = selectLowest(n, (int) Math.min(n, excess));
        Arrays.fill(remove, 0, n, false);
        int[] cost = s.costs();
        int removed = 0;
        for (int k = 0; k < ranked && excess > 0; k++) {
            int i = order[k];
            if (tier[i] == NEVER) throw new IllegalStateException("cannot meet budget " + budget + ": protected entries fill it");
            remove[i] = true;
            excess -= cost[i];
            removed++;
        }
        if (packing) {
            // order[0, removed) are the evicted entries, lowest first: offer them back from the best-ranked down.
            long room = -excess;
            for (int k = removed - 1; k >= 0 && room > 0; k--) {
                int i = order[k];
                if (cost[i] <= room) {
                    remove[i] = false;
                    room -= cost[i];
                }
            }
        }
        if (logInPositionOrder) {
            for (int i = 0; i < n; i++) if (remove[i]) s.logEviction(i);
        } else {
            for (int k = 0; k < removed; k++) if (remove[order[k]]) s.logEviction(order[k]);
        }
        s.compact(remove);
    }

    /**
     * Turns packing (readmitting evicted entries that still fit, see {@link #evictToBudget}) on
     * or off; on by default. Off reproduces the paper's plain "evict the lowest until it fits".
     */
    public void setPacking(boolean on) {
        packing = on;
    }

    public boolean packing() {
        return packing;
    }

    /** Evicts every entry whose flag is set in {@link #removeFlags()}, logging in position order. */
    public void evictFlagged(KvStream s) {
        int n = s.size();
        boolean any = false;
        for (int i = 0; i < n; i++) {
            if (remove[i]) {
                s.logEviction(i);
                any = true;
            }
        }
        if (any) s.compact(remove);
    }

    /** Flags for {@link #evictFlagged}; cleared by {@link #clearFlags(int, int)}. */
    public boolean[] removeFlags() { return remove; }

    public void clearFlags(int from, int to) {
        Arrays.fill(remove, from, to, false);
    }

    /**
     * Puts the {@code k} lowest entries, in ascending (tier, score, position) order, into
     * {@code order[0, k)} and returns k. A turn usually evicts a few entries from a large cache,
     * so a bounded heap (O(n log k)) replaces the full sort, which dominated the update.
     */
    private int selectLowest(int n, int k) {
        if ((long) k * 4 >= n) {
            for (int i = 0; i < n; i++) order[i] = i;
            mergeSort(0, n);
            return n;
        }
        // Max-heap (by the total order with position tie-break) of the k lowest seen so far.
        int size = 0;
        for (int i = 0; i < n; i++) {
            if (size < k) {
                order[size] = i;
                siftUp(size++);
            } else if (lessTotal(i, order[0])) {
                order[0] = i;
                siftDown(0, size);
            }
        }
        Arrays.sort(order, 0, k); // position order first, so that the stable sort breaks ties by position
        mergeSort(0, k);
        return k;
    }

    private boolean lessTotal(int a, int b) {
        if (less(a, b)) return true;
        if (less(b, a)) return false;
        return a < b;
    }

    private void siftUp(int i) {
        int x = order[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!lessTotal(order[parent], x)) break;
            order[i] = order[parent];
            i = parent;
        }
        order[i] = x;
    }

    private void siftDown(int i, int size) {
        int x = order[i];
        while (true) {
            int child = 2 * i + 1;
            if (child >= size) break;
            if (child + 1 < size && lessTotal(order[child], order[child + 1])) child++;
            if (!lessTotal(x, order[child])) break;
            order[i] = order[child];
            i = child;
        }
        order[i] = x;
    }

    private boolean less(int a, int b) {
        if (tier[a] != tier[b]) return tier[a] < tier[b];
        int cmp = Double.compare(score[a], score[b]);
        return cmp < 0; // equal scores keep index order (stable sort): lower position first
    }

    // Stable bottom-up merge sort of order[lo, hi) using tmp; no recursion, no allocation.
    private void mergeSort(int lo, int hi) {
        int n = hi - lo;
        int[] src = order;
        int[] dst = tmp;
        for (int width = 1; width < n; width *= 2) {
            for (int left = lo; left < hi; left += 2 * width) {
                int mid = Math.min(left + width, hi);
                int right = Math.min(left + 2 * width, hi);
                int i = left, j = mid, k = left;
                while (i < mid && j < right) dst[k++] = less(src[j], src[i]) ? src[j++] : src[i++];
                while (i < mid) dst[k++] = src[i++];
                while (j < right) dst[k++] = src[j++];
            }
            int[] t = src;
            src = dst;
            dst = t;
        }
        if (src != order) System.arraycopy(src, lo, order, lo, n);
    }
}
