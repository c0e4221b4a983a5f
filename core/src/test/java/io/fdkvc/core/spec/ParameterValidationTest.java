package io.fdkvc.core.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.reference.SpecReference;
import io.fdkvc.core.reference.Traces;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The spec's table "Hyper-parameters and defaults" and "Special cases", through PolicyRegistry.spec. */
class ParameterValidationTest {

    static String refusedParameter(String policy, int budget, Map<String, ?> params) {
        ParameterException e = catchThrowableOfType(ParameterException.class,
                () -> PolicyRegistry.spec(policy, budget, params));
        assertThat(e).as("%s(budget=%d, %s) must be refused", policy, budget, params).isNotNull();
        return e.parameter();
    }

    static Stream<Arguments> outOfRange() {
        return Stream.of(
                // gamma in (0, 1]
                Arguments.of("gamma", 0.0), Arguments.of("gamma", -0.5), Arguments.of("gamma", 1.0000001),
                // alpha0 >= 0
                Arguments.of("alpha0", -1e-9), Arguments.of("alpha0", -3.0),
                // mu >= 0
                Arguments.of("mu", -0.001),
                // tau in [0, 1)
                Arguments.of("tau", -0.01), Arguments.of("tau", 1.0), Arguments.of("tau", 1.5),
                // beta >= 0
                Arguments.of("beta", -0.1));
    }

    @ParameterizedTest(name = "{0} = {1}")
    @MethodSource("outOfRange")
    void fdkvcValueOutOfRangeIsRefusedNamingIt(String name, double value) {
        assertThat(refusedParameter("fdkvc", 8, Map.of(name, value))).isEqualTo(name);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"gamma", "alpha0", "mu", "tau", "beta", "wc", "wrho"})
    void nanAndInfinitiesAreRefusedNamingTheParameter(String name) {
        for (Object bad : List.of(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, "NaN", "Infinity")) {
            assertThat(refusedParameter("fdkvc", 8, Map.of(name, bad))).as("%s = %s", name, bad).isEqualTo(name);
        }
    }

    @Test
    void channelWeightsOutOfRangeAreRefusedNamingTheWeight() {
        // wc = 1.2 with wrho = -0.2 sums to 1 but both are outside [0, 1]
        assertThat(refusedParameter("fdkvc", 8, Map.of("wc", 1.2, "wrho", -0.2))).isIn("wc", "wrho");
        assertThat(refusedParameter("fdkvc", 8, Map.of("wc", -0.2, "wrho", 1.2))).isIn("wc", "wrho");
    }

    @Test
    void channelWeightsMustSumToOneWithinOneMillionth() {
        assertThat(refusedParameter("fdkvc", 8, Map.of("wc", 0.5, "wrho", 0.6))).isIn("wc", "wrho");
        assertThat(refusedParameter("fdkvc", 8, Map.of("wc", 0.5))).isIn("wc", "wrho"); // 0.5 + 0.55
        assertThat(refusedParameter("fdkvc", 8, Map.of("wc", 0.45, "wrho", 0.550002))).isIn("wc", "wrho");
        // 0.45 + 0.5500005 = 1.0000005: inside the 1e-6 tolerance
        assertThatCode(() -> PolicyRegistry.spec("fdkvc", 8, Map.of("wc", 0.45, "wrho", 0.5500005))).doesNotThrowAnyException();
        assertThatCode(() -> PolicyRegistry.spec("fdkvc", 8, Map.of("wc", 0.3, "wrho", 0.7))).doesNotThrowAnyException();
    }

    @Test
    void sinksMustBeBelowTheBudget() {
        assertThat(refusedParameter("fdkvc", 4, Map.of("sinks", 4))).isEqualTo("sinks");
        assertThat(refusedParameter("fdkvc", 4, Map.of("sinks", 9))).isEqualTo("sinks");
        assertThat(refusedParameter("fdkvc", 4, Map.of("sinks", -1))).isEqualTo("sinks");
        assertThat(refusedParameter("fdkvc", 4, Map.of("sinks", 1.5))).isEqualTo("sinks");
        assertThat(refusedParameter("streaming", 4, Map.of("sinks", 4))).isEqualTo("sinks");
        assertThat(refusedParameter("streaming", 4, Map.of("sinks", -1))).isEqualTo("sinks");
        assertThatCode(() -> PolicyRegistry.spec("fdkvc", 4, Map.of("sinks", 3))).doesNotThrowAnyException();
        assertThatCode(() -> PolicyRegistry.spec("streaming", 4, Map.of("sinks", 0))).doesNotThrowAnyException();
    }

    @Test
    void snapkvWindowAndKernel() {
        assertThat(refusedParameter("snapkv", 8, Map.of("window", 0))).isEqualTo("window");
        assertThat(refusedParameter("snapkv", 8, Map.of("kernel", 0))).isEqualTo("kernel");
        assertThat(refusedParameter("snapkv", 8, Map.of("kernel", 4))).isEqualTo("kernel");
    }

    @Test
    void unknownParameterIsRefusedNamingIt() {
        assertThat(refusedParameter("fdkvc", 8, Map.of("gama", 0.9))).isEqualTo("gama");
        assertThat(refusedParameter("window", 8, Map.of("sinks", 2))).isEqualTo("sinks");
        assertThat(refusedParameter("h2o-paper", 8, Map.of("eps", 1e-6))).isEqualTo("eps");
    }

    @Test
    void unknownPolicyIsRefusedNamingPolicy() {
        assertThat(refusedParameter("lru", 8, Map.of())).isEqualTo("policy");
    }

    @Test
    void budgetBelowOneIsRefused() {
        for (String name : PolicyRegistry.names()) {
            if (name.equals("full")) continue; // ignores the budget
            Map<String, Object> params = acceptsSinks(name) ? Map.of("sinks", 0) : Map.of();
            assertThat(refusedParameter(name, 0, params)).as(name).isEqualTo("budget");
            assertThat(refusedParameter(name, -3, params)).as(name).isEqualTo("budget");
        }
    }

    private static boolean acceptsSinks(String name) {
        return name.equals("streaming") || SpecReference.isFdkvcVariant(name);
    }

    static Stream<Arguments> contradictions() {
        return Stream.of(
                Arguments.of("fdkvc-no-decay", "gamma", 0.9),
                Arguments.of("fdkvc-no-reinforce", "alpha0", 0.5),
                Arguments.of("fdkvc-fixed-lr", "mu", 2.0),
                Arguments.of("fdkvc-no-modulation", "beta", 1.0),
                Arguments.of("fdkvc-no-threshold", "tau", 0.05),
                Arguments.of("fdkvc-recency-only", "wc", 0.45),
                Arguments.of("fdkvc-recency-only", "wrho", 0.55),
                Arguments.of("h2o-paper", "wc", 0.5),
                Arguments.of("h2o-paper", "wrho", 0.5),
                Arguments.of("h2o-paper", "beta", 1.0),
                Arguments.of("h2o-paper", "tau", 0.05));
    }

    @ParameterizedTest(name = "{0} with {1} = {2}")
    @MethodSource("contradictions")
    void valueContradictingAPinnedOneIsRefused(String policy, String name, double value) {
        assertThat(refusedParameter(policy, 8, Map.of(name, value))).isEqualTo(name);
    }

    @Test
    void restatingAPinnedValueIsAccepted() {
        assertThatCode(() -> PolicyRegistry.spec("fdkvc-no-decay", 8, Map.of("gamma", 1.0))).doesNotThrowAnyException();
        assertThatCode(() -> PolicyRegistry.spec("h2o-paper", 8, Map.of("wc", 1, "wrho", 0, "beta", 0, "tau", 0)))
                .doesNotThrowAnyException();
    }

    /** Every FD-KVC variant: the spec's defaults with exactly the spec's pinned values. */
    @Test
    void presetsPinExactlyTheSpecsValues() {
        Map<String, Map<String, Double>> expectedPins = new LinkedHashMap<>();
        expectedPins.put("fdkvc", Map.of());
        expectedPins.put("h2o-paper", Map.of("wc", 1.0, "wrho", 0.0, "beta", 0.0, "tau", 0.0));
        expectedPins.put("fdkvc-no-decay", Map.of("gamma", 1.0));
        expectedPins.put("fdkvc-no-reinforce", Map.of("alpha0", 0.0));
        expectedPins.put("fdkvc-fixed-lr", Map.of("mu", 0.0));
        expectedPins.put("fdkvc-no-modulation", Map.of("beta", 0.0));
        expectedPins.put("fdkvc-no-threshold", Map.of("tau", 0.0));
        expectedPins.put("fdkvc-recency-only", Map.of("wc", 0.0, "wrho", 1.0));
        assertThat(expectedPins.keySet()).containsExactlyInAnyOrderElementsOf(Traces.FDKVC_VARIANTS);
        for (var e : expectedPins.entrySet()) {
            String name = e.getKey();
            Map<String, Double> pins = new HashMap<>();
            PolicyRegistry.kind(name).pinned().forEach((k, v) -> pins.put(k, ((Number) v).doubleValue()));
            assertThat(pins).as(name + " pins").isEqualTo(e.getValue());

            // the bound parameters: the spec's defaults (gamma 0.85, alpha0 0.5, mu 2, tau 0.05,
            // beta 1, wc 0.45, wrho 0.55, sinks 0) overridden by exactly the pins
            Map<String, Double> expected = new HashMap<>(Map.of("gamma", 0.85, "alpha0", 0.5, "mu", 2.0, "tau", 0.05,
                    "beta", 1.0, "wc", 0.45, "wrho", 0.55, "sinks", 0.0));
            expected.putAll(e.getValue());
            Map<String, Double> bound = new HashMap<>();
            PolicyRegistry.spec(name, 8).parameterValues().forEach((k, v) -> bound.put(k, ((Number) v).doubleValue()));
            assertThat(bound).as(name + " parameters").isEqualTo(expected);
            assertThat(SpecReference.pinned(name)).as("the reference's table").isEqualTo(e.getValue());
        }
    }

    @Test
    void baselineDefaults() {
        assertThat(PolicyRegistry.spec("streaming", 8).parameterValues().get("sinks")).isEqualTo(4);
        PolicySpec snap = PolicyRegistry.spec("snapkv", 8);
        assertThat(snap.parameterValues()).containsEntry("window", 32).containsEntry("kernel", 7);
        for (String name : List.of("full", "window", "h2o", "tova")) {
            assertThat(PolicyRegistry.spec(name, 8).parameterValues()).as(name).isEmpty();
        }
        assertThatCode(() -> PolicyRegistry.spec("random", 8, Map.of("seed", -7L))).doesNotThrowAnyException();
    }

    @Test
    void rangeEdgesAreAccepted() {
        Map<String, Object> edges = Map.of("gamma", 1.0, "alpha0", 0.0, "mu", 0.0, "tau", 0.0, "beta", 0.0,
                "wc", 1.0, "wrho", 0.0, "sinks", 7);
        assertThatCode(() -> PolicyRegistry.spec("fdkvc", 8, edges)).doesNotThrowAnyException();
        assertThatCode(() -> PolicyRegistry.spec("fdkvc", 1, Map.of("gamma", 1e-9, "tau", 0.999999, "wc", 0.0, "wrho", 1.0)))
                .doesNotThrowAnyException();
    }
}
