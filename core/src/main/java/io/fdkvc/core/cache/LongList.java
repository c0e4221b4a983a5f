package io.fdkvc.core.cache;

import java.util.Arrays;

/** A growable list of primitive longs that is cleared and reused instead of reallocated. */
public final class LongList {
    private long[] data;
    private int size;

    public LongList(int initialCapacity) {
        data = new long[Math.max(4, initialCapacity)];
    }

    public void add(long v) {
        if (size == data.length) data = Arrays.copyOf(data, data.length * 2);
        data[size++] = v;
    }

    public long get(int i) {
        if (i < 0 || i >= size) throw new IndexOutOfBoundsException(i);
        return data[i];
    }

    public int size() {
        return size;
    }

    public void clear() {
        size = 0;
    }

    public long[] toArray() {
        return Arrays.copyOf(data, size);
    }

    /** Bytes held by the backing array. */
    public long bytes() {
        return 8L * data.length;
    }
}
