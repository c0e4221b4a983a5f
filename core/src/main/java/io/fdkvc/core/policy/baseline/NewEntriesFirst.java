package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.cache.KvStream;

/**
 * The ranking shared by TOVA and SnapKV: scored entries by their {@code c}, the turn's new entries
 * in a higher tier (kept first) ordered by position (the oldest of them goes first).
 */
final class NewEntriesFirst {
    private NewEntriesFirst() {}

    static void rank(KvStream s, int[] tier, double[] score) {
        int m = s.scored();
        double[] c = s.c();
        for (int i = 0; i < s.size(); i++) {
            boolean isNew = i >= m;
            tier[i] = isNew ? 1 : 0;
            score[i] = isNew ? i : c[i];
        }
    }
}
