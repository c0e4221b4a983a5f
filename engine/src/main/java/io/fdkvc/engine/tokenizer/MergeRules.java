package io.fdkvc.engine.tokenizer;

import java.util.Arrays;

/**
 * Which adjacent token pairs merge into which token, and how urgently: the rule with the lowest
 * priority value merges first. SentencePiece uses minus the merged token's score, byte-level BPE
 * the merge's rank. Pairs are keyed by token ids, so merging never builds a string.
 */
final class MergeRules {
    private final LongIntTable index;
    private int[] left = new int[64];
    private int[] right = new int[64];
    private int[] merged = new int[64];
    private float[] priority = new float[64];
    private int count;

    MergeRules(int expected) {
        index = new LongIntTable(expected);
    }

    /** Adds a rule unless the pair already has one (the first rule for a pair wins). */
    void add(int leftId, int rightId, int mergedId, float prio) {
        long key = LongIntTable.pair(leftId, rightId);
        if (index.get(key) >= 0) {
            return;
        }
        if (count == left.length) {
            int capacity = count * 2;
            left = Arrays.copyOf(left, capacity);
            right = Arrays.copyOf(right, capacity);
            merged = Arrays.copyOf(merged, capacity);
            priority = Arrays.copyOf(priority, capacity);
        }
        left[count] = leftId;
        right[count] = rightId;
        merged[count] = mergedId;
        priority[count] = prio;
        index.putIfAbsent(key, count);
        count++;
    }

    /** The rule for the pair, or -1. */
    int find(int leftId, int rightId) {
        return index.get(LongIntTable.pair(leftId, rightId));
    }

    int left(int rule) {
        return left[rule];
    }

    int right(int rule) {
        return right[rule];
    }

    int merged(int rule) {
        return merged[rule];
    }

    float priority(int rule) {
        return priority[rule];
    }

    int size() {
        return count;
    }
}
