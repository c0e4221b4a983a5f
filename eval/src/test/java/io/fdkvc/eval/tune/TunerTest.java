package io.fdkvc.eval.tune;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import io.fdkvc.eval.synthetic.GeneratorConfig;
import io.fdkvc.eval.synthetic.Progress;
import io.fdkvc.eval.synthetic.Scenario;
import java.util.List;
import org.junit.jupiter.api.Test;

class TunerTest {
    @Test
    void theSearchNeverEndsBelowItsStartAndSweepsEveryGridValue() {
        Tuner.Config cfg = new Tuner.Config(GeneratorConfig.DEFAULTS.withTurns(6), List.of(Scenario.TOPIC_SHIFT, Scenario.MIXED_TOPICS), 3, 1001, 2, 1);
        Tuner.Result r = Tuner.tune(cfg, Progress.NONE);
        assertThat(r.best().alignment()).isGreaterThanOrEqualTo(r.spec().alignment());
        assertThat(r.spec().params()).isEqualTo(Tuner.specDefaults());
        int grid = 0;
        for (double[] g : Tuner.GRID.values()) grid += g.length;
        assertThat(r.sensitivity()).hasSize(grid);
        // the sweep around the chosen point contains the chosen point itself, with its score
        for (Tuner.Sensitivity s : r.sensitivity()) {
            if (s.point().params().equals(r.best().params())) assertThat(s.point().alignment()).isEqualTo(r.best().alignment());
        }
        assertThat(r.baselines()).containsKeys("h2o", "h2o-paper");
        assertThat(TuneReport.markdown(cfg, r, "fdkvc tune")).contains("**chosen**");
    }

    @Test
    void theEvaluationSeedIsRefused() {
        assertThatThrownBy(() -> new Tuner.Config(GeneratorConfig.DEFAULTS, List.of(Scenario.TOPIC_SHIFT), 3, 1, 1, 1))
                .isInstanceOf(InputException.class).hasMessageStartingWith("seed: 1 is the evaluation's seed");
    }

    /**
     * Every wc of the grid becomes a valid FD-KVC configuration (FdkvcParams refuses wc + wrho != 1)
     * whose wrho is 1 - wc, with every other parameter as the point says; the spec's own wrho (0.5)
     * would make all but wc = 0.5 invalid, so a point that forgot wrho fails here.
     */
    @Test
    void wrhoFollowsWc() {
        for (double wc : Tuner.GRID.get("wc")) {
            var point = new java.util.LinkedHashMap<>(Tuner.specDefaults());
            point.put("wc", wc);
            var spec = io.fdkvc.core.policy.PolicyRegistry.spec("fdkvc", 64, Tuner.policyParams(point));
            var bound = (io.fdkvc.core.policy.fdkvc.FdkvcParams) spec.params();
            assertThat(bound.wc()).isEqualTo(wc);
            assertThat(bound.wrho()).isEqualTo(1 - wc);
            assertThat(bound.gamma()).isEqualTo(point.get("gamma"));
        }
        assertThat(Tuner.GRID.get("wc")).contains(0.0, 1.0); // both ends, where a forgotten wrho is refused
    }
}
