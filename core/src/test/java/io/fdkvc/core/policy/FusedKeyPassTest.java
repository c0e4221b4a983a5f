package io.fdkvc.core.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.cache.KvStream;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * FD-KVC reads the keys once when the embeddings are the keys (a stream built without separate
 * embeddings). That fast path must give exactly the numbers of the general path, where the same
 * vectors are stored as separate embeddings.
 */
class FusedKeyPassTest {

    @Property(tries = 50)
    void fusedAndSeparateEmbeddingsAgreeExactly(@ForAll long seed, @ForAll @IntRange(min = 1, max = 24) int d,
                                                @ForAll @IntRange(min = 1, max = 12) int budget) {
        SplittableRandom r = new SplittableRandom(seed);
        KvStream fused = new KvStream(d, 0, 0, budget + 6, false);
        KvStream separate = new KvStream(d, 0, d, budget + 6, false);
        Policy pf = PolicyRegistry.spec("fdkvc", budget).newPolicy();
        Policy ps = PolicyRegistry.spec("fdkvc", budget).newPolicy();
        long pos = 0;
        for (int turn = 0; turn < 8; turn++) {
            int n = 1 + r.nextInt(6);
            for (int j = 0; j < n; j++) {
                float[] k = new float[d];
                for (int i = 0; i < d; i++) k[i] = (float) r.nextGaussian();
                fused.append(pos, k, 0, null, 0);
                separate.append(pos, k, 0, null, 0, k, 0);
                pos++;
            }
            float[] q = new float[2 * d];
            for (int i = 0; i < q.length; i++) q[i] = (float) r.nextGaussian();
            pf.endTurn(fused, Turn.of(q, 2, d, null));
            ps.endTurn(separate, Turn.of(q, 2, d, null));
            assertThat(fused.size()).isEqualTo(separate.size());
            for (int i = 0; i < fused.size(); i++) {
                assertThat(fused.position(i)).isEqualTo(separate.position(i));
                assertThat(fused.c()[i]).isEqualTo(separate.c()[i]);
                assertThat(fused.rho()[i]).isEqualTo(separate.rho()[i]);
                assertThat(fused.h()[i]).isEqualTo(separate.h()[i]);
            }
            assertThat(pf.alpha()).isEqualTo(ps.alpha());
        }
    }
}
