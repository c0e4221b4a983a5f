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
     * Entries of tier {@link #NEVER} are never chosen.
     *
     * @throws IllegalStateException if protected entries alone exceed the budget
     */
    public void evictToBudget(KvStream s, long budget, boolean logInPositionOrder) {
        long excess = s.totalCost() - budget;
        if (excess <= 0) return;
        int n = s.size();
        for (int i = 0; i < n; i++) order[i] = i;
        mergeSort(0, n);
        Arrays.fill(remove, 0, n, false);
        int[] cost = s.costs();
        for (int k = 0; k < n && excess > 0; k++) {
            int i = order[k];
            if (tier[i] == NEVER) throw new IllegalStateException("cannot meet budget " + budget + ": protected entries fill it");
            remove[i] = true;
            excess -= cost[i];
            if (!logInPositionOrder) s.logEviction(i);
        }
        if (logInPositionOrder) {
            for (int i = 0; i < n; i++) if (remove[i]) s.logEviction(i);
        }
        s.compact(remove);
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
