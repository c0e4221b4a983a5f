package io.fdkvc.eval.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicySpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EvalPoliciesTest {
    @Test
    void userParametersReachTheFamilyButNotWhatAnAblationPins() {
        List<PolicySpec> specs = EvalPolicies.build(List.of("fdkvc", "fdkvc-no-decay", "h2o", "h2o-paper"), 64,
                Map.of("gamma", "0.7", "beta", "2"), EvalPolicies.Defaults.SPEC);
        assertThat(specs.get(0).parameterValues()).containsEntry("gamma", 0.7).containsEntry("beta", 2.0);
        assertThat(specs.get(1).parameterValues()).containsEntry("gamma", 1.0).containsEntry("beta", 2.0); // pinned gamma
        assertThat(specs.get(2).parameterValues()).isEmpty();
        assertThat(specs.get(3).parameterValues()).containsEntry("beta", 0.0).containsEntry("gamma", 0.7);
    }

    @Test
    void tunedDefaultsApplyUnlessSpecIsAsked() {
        List<PolicySpec> tuned = EvalPolicies.build(List.of("fdkvc"), 64, Map.of(), EvalPolicies.Defaults.TUNED);
        for (Map.Entry<String, Object> e : TunedDefaults.FDKVC.entrySet()) {
            assertThat(((Number) tuned.get(0).parameterValues().get(e.getKey())).doubleValue()).isEqualTo(((Number) e.getValue()).doubleValue());
        }
        List<PolicySpec> spec = EvalPolicies.build(List.of("fdkvc"), 64, Map.of(), EvalPolicies.Defaults.SPEC);
        assertThat(spec.get(0).parameterValues()).containsEntry("gamma", 0.85).containsEntry("alpha0", 0.5);
    }

    @Test
    void badInputNamesTheParameter() {
        assertThatThrownBy(() -> EvalPolicies.build(List.of("nope"), 64, Map.of(), EvalPolicies.Defaults.SPEC))
                .isInstanceOf(InputException.class).hasMessageStartingWith("policy: unknown policy 'nope'");
        assertThatThrownBy(() -> EvalPolicies.build(List.of("h2o", "h2o"), 64, Map.of(), EvalPolicies.Defaults.SPEC))
                .isInstanceOf(InputException.class).hasMessageStartingWith("policy: 'h2o' is given twice");
        assertThatThrownBy(() -> EvalPolicies.build(List.of("fdkvc"), 64, Map.of("gamma", "2"), EvalPolicies.Defaults.SPEC))
                .isInstanceOf(InputException.class).hasMessageStartingWith("gamma:");
        assertThatThrownBy(() -> EvalPolicies.build(List.of("fdkvc"), 64, Map.of("zeta", "2"), EvalPolicies.Defaults.SPEC))
                .isInstanceOf(InputException.class).hasMessageStartingWith("zeta: no selected policy takes this parameter");
        assertThatThrownBy(() -> EvalPolicies.build(List.of("h2o"), 64, Map.of("gamma", "0.5"), EvalPolicies.Defaults.SPEC))
                .isInstanceOf(InputException.class).hasMessageStartingWith("gamma: no selected policy takes this parameter (h2o: none)");
        assertThatThrownBy(() -> EvalPolicies.build(List.of("streaming"), 3, Map.of(), EvalPolicies.Defaults.SPEC))
                .isInstanceOf(InputException.class).hasMessageStartingWith("policy streaming at budget 3: sinks:");
        assertThatThrownBy(() -> EvalPolicies.build(List.of("h2o"), 0, Map.of(), EvalPolicies.Defaults.SPEC))
                .isInstanceOf(InputException.class).hasMessageStartingWith("budget:");
    }

    @Test
    void generatorConfigNamesTheComponent() {
        assertThatThrownBy(() -> new GeneratorConfig(2, 16, 4, 64, 64, 1, 4)).hasMessageStartingWith("turns: must be >= 3");
        assertThatThrownBy(() -> new GeneratorConfig(24, 0, 4, 64, 64, 1, 4)).hasMessageStartingWith("entriesPerTurn:");
        assertThatThrownBy(() -> new GeneratorConfig(24, 16, 0, 64, 64, 1, 4)).hasMessageStartingWith("queries:");
        assertThatThrownBy(() -> new GeneratorConfig(24, 16, 4, 1, 64, 1, 4)).hasMessageStartingWith("dim:");
        assertThatThrownBy(() -> new GeneratorConfig(24, 16, 4, 64, 0, 1, 4)).hasMessageStartingWith("budget:");
        assertThatThrownBy(() -> new GeneratorConfig(24, 16, 4, 64, 64, -1, 4)).hasMessageStartingWith("noise:");
        assertThatThrownBy(() -> new GeneratorConfig(24, 16, 4, 64, 64, Double.NaN, 4)).hasMessageStartingWith("noise:");
        assertThatThrownBy(() -> new GeneratorConfig(24, 16, 4, 64, 64, 1, 0)).hasMessageStartingWith("sharpness:");
        assertThatThrownBy(() -> Scenario.fromId("nope", "--scenario")).hasMessageStartingWith("--scenario: unknown scenario 'nope'");
        assertThatThrownBy(() -> new GeneratorConfig(100_000, 16, 4, 64, 64, 1, 4)).hasMessageStartingWith("turns: turns x entries per turn x dim");
        GeneratorConfig g = GeneratorConfig.DEFAULTS;
        var specs = EvalPolicies.build(List.of("h2o"), g.budget(), Map.of(), EvalPolicies.Defaults.SPEC);
        assertThatThrownBy(() -> new EvalConfig(g, List.of(Scenario.values()), 1_000_000, specs, 1, 1)).hasMessageStartingWith("dialogues:");
        assertThatThrownBy(() -> new EvalConfig(g, List.of(Scenario.values()), 10, specs, 1, 0)).hasMessageStartingWith("threads:");
        assertThatThrownBy(() -> new EvalConfig(g, List.of(Scenario.TOPIC_SHIFT, Scenario.TOPIC_SHIFT), 10, specs, 1, 1))
                .hasMessageStartingWith("scenario:");
    }
}
