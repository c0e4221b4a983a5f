package io.fdkvc.engine.tokenizer;

import java.util.Arrays;

/**
 * Greedy pair merging over a sequence of token ids: repeatedly merge the adjacent pair whose rule
 * has the lowest priority value, the leftmost such pair on ties, until no adjacent pair has a rule.
 *
 * <p>This is the loop of llama2.c's {@code encode} (scan all pairs, take the strictly best,
 * leftmost first), done with a linked list and a binary heap instead of a rescan per merge, so a
 * long prompt costs O(n log n) instead of O(n²). The two agree: symbols keep their original index
 * when merged into from the right, the list keeps them in text order, so "lowest index" in the
 * heap is "leftmost" in the current sequence; heap entries made stale by an earlier merge are
 * recognised (a symbol died, changed id, or is no longer the right neighbour) and skipped.
 *
 * <p>One merger serves one encode call (it is not thread-safe); its arrays are reused across the
 * words of that call and grow as needed.
 */
final class SymbolMerger {
    private final MergeRules rules;

    private int[] ids = new int[64];
    private int[] next = new int[64];
    private int[] prev = new int[64];
    private int count;

    private float[] heapPriority = new float[64];
    private int[] heapLeft = new int[64];
    private int[] heapRight = new int[64];
    private int[] heapRule = new int[64];
    private int heapSize;

    SymbolMerger(MergeRules rules) {
        this.rules = rules;
    }

    void reset() {
        count = 0;
        heapSize = 0;
    }

    void add(int tokenId) {
        if (count == ids.length) {
            int capacity = count * 2;
            ids = Arrays.copyOf(ids, capacity);
            next = Arrays.copyOf(next, capacity);
            prev = Arrays.copyOf(prev, capacity);
        }
        ids[count] = tokenId;
        prev[count] = count - 1;
        next[count] = -1;
        if (count > 0) {
            next[count - 1] = count;
        }
        count++;
    }

    /** Merges until no rule applies, then appends the resulting ids to {@code out} in order. */
    void mergeInto(IntBuffer out) {
        if (count == 0) {
            return;
        }
        for (int i = 0; i + 1 < count; i++) {
            offer(i, i + 1);
        }
        while (heapSize > 0) {
            int left = heapLeft[0];
            int right = heapRight[0];
            int rule = heapRule[0];
            pop();
            // Stale: one side was merged away (id -1), took part in another merge (new id), or the
            // right symbol is no longer adjacent.
            if (next[left] != right || ids[left] != rules.left(rule) || ids[right] != rules.right(rule)) {
                continue;
            }
            ids[left] = rules.merged(rule);
            ids[right] = -1;
            int after = next[right];
            next[left] = after;
            if (after >= 0) {
                prev[after] = left;
            }
            if (prev[left] >= 0) {
                offer(prev[left], left);
            }
            if (after >= 0) {
                offer(left, after);
            }
        }
        for (int i = 0; i >= 0; i = next[i]) {
            out.add(ids[i]);
        }
    }

    private void offer(int left, int right) {
        int rule = rules.find(ids[left], ids[right]);
        if (rule < 0) {
            return;
        }
        if (heapSize == heapLeft.length) {
            int capacity = heapSize * 2;
            heapPriority = Arrays.copyOf(heapPriority, capacity);
            heapLeft = Arrays.copyOf(heapLeft, capacity);
            heapRight = Arrays.copyOf(heapRight, capacity);
            heapRule = Arrays.copyOf(heapRule, capacity);
        }
        int i = heapSize++;
        float p = rules.priority(rule);
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!before(p, left, heapPriority[parent], heapLeft[parent])) {
                break;
            }
            move(parent, i);
            i = parent;
        }
        put(i, p, left, right, rule);
    }

    private void pop() {
        int last = --heapSize;
        if (last == 0) {
            return;
        }
        float p = heapPriority[last];
        int left = heapLeft[last];
        int right = heapRight[last];
        int rule = heapRule[last];
        int i = 0;
        while (true) {
            int child = 2 * i + 1;
            if (child >= last) {
                break;
            }
            if (child + 1 < last && before(heapPriority[child + 1], heapLeft[child + 1], heapPriority[child], heapLeft[child])) {
                child++;
            }
            if (!before(heapPriority[child], heapLeft[child], p, left)) {
                break;
            }
            move(child, i);
            i = child;
        }
        put(i, p, left, right, rule);
    }

    /** Plain float comparison on purpose: -0.0 and 0.0 tie, as with C's {@code >} in run.c. */
    private static boolean before(float p1, int left1, float p2, int left2) {
        return p1 < p2 || (p1 == p2 && left1 < left2);
    }

    private void move(int from, int to) {
        put(to, heapPriority[from], heapLeft[from], heapRight[from], heapRule[from]);
    }

    private void put(int i, float p, int left, int right, int rule) {
        heapPriority[i] = p;
        heapLeft[i] = left;
        heapRight[i] = right;
        heapRule[i] = rule;
    }
}
