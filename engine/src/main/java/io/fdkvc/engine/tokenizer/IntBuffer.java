package io.fdkvc.engine.tokenizer;

import java.util.Arrays;

/** A growable int array: token ids collect here without boxing. */
final class IntBuffer {
    private int[] data;
    private int size;

    IntBuffer(int capacity) {
        data = new int[Math.max(4, capacity)];
    }

    void add(int value) {
        if (size == data.length) {
            data = Arrays.copyOf(data, data.length * 2);
        }
        data[size++] = value;
    }

    int get(int index) {
        return data[index];
    }

    int size() {
        return size;
    }

    void clear() {
        size = 0;
    }

    int[] toArray() {
        return Arrays.copyOf(data, size);
    }
}
