package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.engine.cache.KvCache;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The paired and eight-query scores kernels ({@link AttentionKernels#scoresPair}, {@link
 * AttentionKernels#scoresEight}) must give each query exactly the scores the one-query kernel
 * gives (the same FMA chains), so that grouping the queries of a chunk changes no bit of the
 * logits; and they must not write outside their rows' whole tiles. The same for the values: two
 * heads of a group through {@link AttentionKernels#weightedValuesPair} get the bits that {@link
 * AttentionKernels#weightedValues} gives each alone. The vectorised scale, bias and max ({@link
 * AttentionKernels#scaleBiasMax}) give the scalar loop's floats.
 */
class AttentionScoresTest {
    @Property(tries = 200)
    void pairedScoresAreTheSingleScoresBitForBit(@ForAll @IntRange(min = 1, max = 300) int count,
                                                 @ForAll @IntRange(min = 1, max = 3) int hdPairs,
                                                 @ForAll long seed) {
        int hd = 2 * hdPairs * 8, row = tiledLength(count);
        Random r = new Random(seed);
        float[] keys = spread(r, row * hd);
        float[] q = gaussian(r, hd), q2 = gaussian(r, hd);
        // rows at offsets that are not tile-aligned, with a guard band around them
        int so = 3, so2 = so + row + 5, len = so2 + row + 7;
        float[] single = new float[len], single2 = new float[len], paired = new float[len];
        java.util.Arrays.fill(paired, Float.NaN);
        AttentionKernels.scores(q, keys, hd, count, single, so);
        AttentionKernels.scores(q2, keys, hd, count, single2, so2);
        AttentionKernels.scoresPair(q, q2, keys, hd, count, paired, so, so2);
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

    @Property(tries = 200)
    void pairedValuesAreTheSingleValuesBitForBit(@ForAll @IntRange(min = 1, max = 300) int count,
                                                 @ForAll @IntRange(min = 1, max = 2) int blocks,
                                                 @ForAll long seed) {
        // heads of whole blocks of four vectors, as Llama pairs them (64 and 128 floats at 16 lanes)
        int hd = blocks * 4 * io.fdkvc.engine.tensor.Simd.L;
        Random r = new Random(seed);
        float[] vals = spread(r, count * hd);
        // both heads' weights in one scratch, at offsets that are not vector-aligned
        int po = 5, po2 = po + count + 3;
        float[] p = new float[po2 + count];
        for (int i = 0; i < p.length; i++) p[i] = r.nextFloat();
        float scale = 1f / (1 + r.nextFloat()), scale2 = 1f / (1 + r.nextFloat());
        // the two heads' outputs side by side (head 2 at o + hd), with a guard band around them
        int o = 7, len = o + 2 * hd + 9;
        float[] single = new float[len], paired = new float[len];
        java.util.Arrays.fill(paired, Float.NaN);
        AttentionKernels.weightedValues(p, po, count, scale, vals, hd, single, o);
        AttentionKernels.weightedValues(p, po2, count, scale2, vals, hd, single, o + hd);
        AttentionKernels.weightedValuesPair(p, po, po2, count, scale, scale2, vals, hd, paired, o);
        for (int i = 0; i < len; i++) {
            if (i < o || i >= o + 2 * hd) {
                assertThat(paired[i]).as("index %d outside both heads' outputs", i).isNaN();
            } else {
                assertThat(Float.floatToRawIntBits(paired[i])).as("head %d, component %d, %d entries", (i - o) / hd + 1, (i - o) % hd, count)
                        .isEqualTo(Float.floatToRawIntBits(single[i]));
            }
        }
    }

    @Property(tries = 200)
    void eightQueriesScoresAreTheSingleScoresBitForBit(@ForAll @IntRange(min = 1, max = 300) int count,
                                                       @ForAll @IntRange(min = 1, max = 3) int hdPairs,
                                                       @ForAll long seed) {
        int hd = 2 * hdPairs * 8, row = tiledLength(count);
        Random r = new Random(seed);
        float[] keys = spread(r, row * hd);
        // eight queries side by side, as Llama rotates them into its scratch
        float[] q = gaussian(r, 8 * hd);
        // the eight rows in a shuffled order at offsets that are not tile-aligned, guard bands between them
        int[] rows = new int[8], order = {5, 2, 7, 0, 3, 6, 1, 4};
        int len = 3;
        for (int j : order) {
            rows[j] = len;
            len += row + 1 + r.nextInt(5);
        }
        float[] single = new float[len], eight = new float[len];
        java.util.Arrays.fill(eight, Float.NaN);
        for (int j = 0; j < 8; j++) AttentionKernels.scores(java.util.Arrays.copyOfRange(q, j * hd, (j + 1) * hd), keys, hd, count, single, rows[j]);
        AttentionKernels.scoresEight(q, keys, hd, count, eight, rows);
        for (int j = 0; j < 8; j++) {
            for (int i = 0; i < count; i++) {
                assertThat(Float.floatToRawIntBits(eight[rows[j] + i])).as("query %d, key %d of %d", j, i, count)
                        .isEqualTo(Float.floatToRawIntBits(single[rows[j] + i]));
            }
        }
        for (int i = 0; i < len; i++) {
            boolean inRow = false;
            for (int j = 0; j < 8; j++) inRow |= i >= rows[j] && i < rows[j] + row;
            if (!inRow) assertThat(eight[i]).as("index %d outside the rows' tiles", i).isNaN();
        }
    }

    @Property(tries = 300)
    void scaleBiasMaxIsTheScalarLoop(@ForAll @IntRange(min = 0, max = 100) int count, @ForAll boolean biased, @ForAll long seed) {
        Random r = new Random(seed);
        int so = r.nextInt(7), len = so + count + 5;
        float[] sc = new float[len], bias = biased ? new float[count] : null;
        for (int i = 0; i < len; i++) {
            // signed zeros and infinities among the scores: the max of a row must not depend on their order
            int kind = r.nextInt(12);
            sc[i] = kind == 0 ? 0f : kind == 1 ? -0f : kind == 2 ? Float.NEGATIVE_INFINITY : (float) (r.nextGaussian() * 30);
        }
        if (biased) for (int i = 0; i < count; i++) bias[i] = r.nextInt(4) == 0 ? 0f : (float) r.nextGaussian();
        float scale = 0.125f + r.nextFloat();
        float[] want = sc.clone();
        float wantMax = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            float z = want[so + i] * scale;
            if (biased) z += bias[i];
            want[so + i] = z;
            wantMax = Math.max(wantMax, z);
        }
        float max = AttentionKernels.scaleBiasMax(sc, so, count, scale, bias);
        assertThat(max).isEqualTo(wantMax);
        for (int i = 0; i < len; i++) {
            assertThat(Float.floatToRawIntBits(sc[i])).as("index %d (row at %d, %d scores)", i, so, count).isEqualTo(Float.floatToRawIntBits(want[i]));
        }
    }

    /** The entries of whole key tiles that hold {@code count} keys. */
    private static int tiledLength(int count) {
        int T = KvCache.KEY_TILE;
        return (count + T - 1) / T * T;
    }

    /** n Gaussian floats scaled by powers of two from 2^-4 to 2^3, so that the sums round at different places. */
    private static float[] spread(Random r, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) (r.nextGaussian() * Math.pow(2, r.nextInt(8) - 4));
        return a;
    }

    private static float[] gaussian(Random r, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) r.nextGaussian();
        return a;
    }
}
