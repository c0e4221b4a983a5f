package io.fdkvc.examples.policy;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.param.Check;
import io.fdkvc.core.param.Doc;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyProvider;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.RankingPolicy;
import io.fdkvc.core.policy.Turn;
import java.util.List;
import java.util.Map;

/**
 * A user's own policy, complete: "example-keep-oldest" keeps the oldest entries and the
 * {@code recent} most recent ones. It reaches every command ({@code policies}, {@code trace},
 * {@code eval}, {@code chat}, {@code serve}) and the libraries through the {@link PolicyProvider}
 * service with no change to core: this jar lists it in
 * {@code META-INF/services/io.fdkvc.core.policy.PolicyProvider}, and putting the jar on the class
 * path is all a user does.
 *
 * <p>The three parts of a policy: its parameters as a record (defaults, {@code @Doc} help and
 * ranges for {@code fdkvc policies}, validation in the compact constructor, errors naming the
 * parameter), a {@link PolicyRegistry.Kind} naming it with a factory, and the policy itself. A
 * ranking policy extends {@link RankingPolicy} and writes only {@link RankingPolicy#score}: a tier
 * and a score per entry, the lowest evicted first; the template does the rest (the budget, the
 * eviction log, packing, compaction).
 */
public final class KeepOldestPolicies implements PolicyProvider {
    public static final String NAME = "example-keep-oldest";

    /** Its parameters: validated in the compact constructor, documented for 'fdkvc policies'. */
    public record Params(@Doc(value = "most recent entries kept besides the oldest", range = "0..budget-1") int recent) {
        public static final Params DEFAULTS = new Params(1);

        public Params {
            Check.atLeast("recent", recent, 0);
        }
    }

    @Override
    public List<PolicyRegistry.Kind> kinds() {
        return List.of(new PolicyRegistry.Kind(NAME, "example: the oldest entries plus the most recent ones", Params.DEFAULTS, Map.of(),
                (name, budget, params) -> new KeepOldest(name, budget, (Params) params)));
    }

    static final class KeepOldest extends RankingPolicy {
        private final int recent;

        KeepOldest(String name, int budget, Params p) {
            super(name, budget);
            if (p.recent() >= budget) throw new ParameterException("recent", "must be < budget " + budget + ", got " + p.recent());
            this.recent = p.recent();
        }

        @Override
        protected void score(KvStream s, Turn t, int[] tier, double[] score) {
            int n = s.size();
            for (int i = 0; i < n; i++) {
                tier[i] = i >= n - recent ? 1 : 0;
                score[i] = -s.position(i); // older scores higher: the newest of the rest go first
            }
        }
    }
}
