package io.fdkvc.engine.tokenizer;

import io.fdkvc.engine.ModelFormatException;

import java.util.Arrays;
import java.util.function.ToIntFunction;

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

    /**
     * The rules of a GGUF merge list ({@code tokenizer.ggml.merges}: "a b", highest priority
     * first), the rank as priority. Merges whose parts or result are not tokens can never apply and
     * are skipped.
     *
     * @param tokenId a token's id, or -1
     * @param what    the tokenizer's name, for the error message
     * @throws ModelFormatException for an entry that is not two tokens separated by one space
     */
    static MergeRules ranked(String[] merges, ToIntFunction<String> tokenId, String what) {
        MergeRules rules = new MergeRules(merges.length);
        for (int rank = 0; rank < merges.length; rank++) {
            String m = merges[rank];
            int space = m == null ? -1 : m.indexOf(' ');
            if (space <= 0 || space == m.length() - 1 || m.indexOf(' ', space + 1) >= 0) {
                throw new ModelFormatException(what + " merge " + rank + " is not two tokens separated by one space: '"
                        + m + "' (tokenizer.ggml.merges)");
            }
            String a = m.substring(0, space);
            String b = m.substring(space + 1);
            int left = tokenId.applyAsInt(a);
            int right = tokenId.applyAsInt(b);
            int merged = tokenId.applyAsInt(a + b);
            if (left >= 0 && right >= 0 && merged >= 0) {
                rules.add(left, right, merged, rank);
            }
        }
        return rules;
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
