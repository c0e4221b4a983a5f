package io.fdkvc.engine.tokenizer;

import java.util.Arrays;

/**
 * An open-addressing hash map from non-negative long keys to int values, filled once when a
 * tokenizer is built and then only read. Encoding looks up every adjacent token pair and every
 * character here; a {@code HashMap<Long, Integer>} would box on each of those lookups.
 */
final class LongIntTable {
    private static final long EMPTY = -1L;

    private long[] keys;
    private int[] values;
    private int size;

    LongIntTable(int expected) {
        int capacity = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
        keys = new long[capacity];
        values = new int[capacity];
        Arrays.fill(keys, EMPTY);
    }

    /** The key of an ordered pair of non-negative ints. */
    static long pair(int left, int right) {
        return ((long) left << 32) | (right & 0xFFFFFFFFL);
    }

    /** The value for {@code key}, or -1 when absent. */
    int get(long key) {
        int mask = keys.length - 1;
        for (int slot = slot(key, mask); ; slot = (slot + 1) & mask) {
            long k = keys[slot];
            if (k == key) {
                return values[slot];
            }
            if (k == EMPTY) {
                return -1;
            }
        }
    }

    /** Stores {@code value} unless the key is already present (the first entry wins). */
    void putIfAbsent(long key, int value) {
        if (key < 0) {
            throw new IllegalArgumentException("negative key " + key);
        }
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        int mask = keys.length - 1;
        for (int slot = slot(key, mask); ; slot = (slot + 1) & mask) {
            long k = keys[slot];
            if (k == key) {
                return;
            }
            if (k == EMPTY) {
                keys[slot] = key;
                values[slot] = value;
                size++;
                return;
            }
        }
    }

    int size() {
        return size;
    }

    private static int slot(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }

    private void grow() {
        long[] oldKeys = keys;
        int[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new int[oldKeys.length * 2];
        Arrays.fill(keys, EMPTY);
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != EMPTY) {
                putIfAbsent(oldKeys[i], oldValues[i]);
            }
        }
    }
}
