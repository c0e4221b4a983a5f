package io.fdkvc.engine.chat;

import java.util.Arrays;

/** A growable list of ints (token ids), without boxing. */
final class IntList {
    private int[] a;
    private int n;

    IntList(int capacity) {
        a = new int[Math.max(capacity, 4)];
    }

    IntList(int[] values) {
        a = values.length == 0 ? new int[4] : values.clone();
        n = values.length;
    }

    void add(int v) {
        if (n == a.length) a = Arrays.copyOf(a, 2 * n);
        a[n++] = v;
    }

    void addAll(int[] v) {
        addAll(v, v.length);
    }

    void addAll(int[] v, int len) {
        if (n + len > a.length) a = Arrays.copyOf(a, Math.max(2 * a.length, n + len));
        System.arraycopy(v, 0, a, n, len);
        n += len;
    }

    int size() { return n; }

    int get(int i) { return a[i]; }

    int[] toArray() { return Arrays.copyOf(a, n); }
}
