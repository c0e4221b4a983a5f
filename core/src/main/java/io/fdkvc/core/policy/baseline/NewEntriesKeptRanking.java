package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.cache.KvStream;

/**
 * The ranking shared by TOVA and SnapKV, named for what it does: the turn's new entries are kept
 * before any scored one (a higher tier, ordered by position, so the oldest of them would go
 * first), and the scored entries rank by their {@code c}, the score each policy keeps there.
 */
final class NewEntriesKeptRanking {
    private NewEntriesKeptRanking() {}

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
