package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.engine.cache.KvCache;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Prefill's paired scores kernel ({@link Llama#scoresPair}) must give each query exactly the
 * scores the one-query kernel gives (the same FMA chains), so that pairing the tokens of a chunk
 * changes no bit of the logits; and it must not write outside the two rows' whole tiles.
 */
class AttentionScoresTest {
    @Property(tries = 200)
    void pairedScoresAreTheSingleScoresBitForBit(@ForAll @IntRange(min = 1, max = 300) int count,
                                                 @ForAll @IntRange(min = 1, max = 3) int hdPairs,
                                                 @ForAll long seed) {
        int hd = 2 * hdPairs * 8, T = KvCache.KEY_TILE;
        int tiles = (count + T - 1) / T, row = tiles * T;
        Random r = new Random(seed);
        float[] keys = new float[tiles * T * hd];
        for (int i = 0; i < keys.length; i++) keys[i] = (float) (r.nextGaussian() * Math.pow(2, r.nextInt(8) - 4));
        float[] q = gaussian(r, hd), q2 = gaussian(r, hd);
        // rows at offsets that are not tile-aligned, with a guard band around them
        int so = 3, so2 = so + row + 5, len = so2 + row + 7;
        float[] single = new float[len], single2 = new float[len], paired = new float[len];
        java.util.Arrays.fill(paired, Float.NaN);
        Llama.scores(q, keys, hd, count, single, so);
        Llama.scores(q2, keys, hd, count, single2, so2);
        Llama.scoresPair(q, q2, keys, hd, count, paired, so, so2);
        for (int i = 0; i < count; i++) {
            assertThat(Float.floatToRawIntBits(paired[so + i])).as("query 1, key %d of %d", i, count)
                    .isEqualTo(Float.floatToRawIntBits(single[so + i]));
            assertThat(Float.floatToRawIntBits(paired[so2 + i])).as("query 2, key %d of %d", i, count)
                    .isEqualTo(Float.floatToRawIntBits(single2[so2 + i]));
        }
        for (int i = 0; i < len; i++) {
            boolean inRow = i >= so && i < so + row || i >= so2 && i < so2 + row;
            if (!inRow) assertThat(paired[i]).as("index %d outside both rows' tiles", i).isNaN();
        }
    }

    private static float[] gaussian(Random r, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) r.nextGaussian();
        return a;
    }
}
