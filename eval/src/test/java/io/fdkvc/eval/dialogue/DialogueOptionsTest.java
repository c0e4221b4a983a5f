package io.fdkvc.eval.dialogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.fdkvc.FdkvcParams;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DialogueOptionsTest {
    @TempDir
    Path dir;
    DialogueOptions base;

    @BeforeEach
    void file() {
        base = DialogueOptions.defaults(Dataset.TIAGE, Fixtures.gz(dir, "t.jsonl.gz", "{'dialogue_id': '1', 'turns': [{'utterance': 'hi', 'shift': -1}]}"));
    }

    @Test
    void badValuesNameTheirOption() {
        assertThatThrownBy(() -> base.withBudgetTokens(0)).isInstanceOf(InputException.class).hasMessage("budgetTokens: must be >= 1, got 0");
        assertThatThrownBy(() -> base.withSweep(List.of(0.3, 0.0))).hasMessageStartingWith("sweep: ");
        assertThatThrownBy(() -> base.withSweep(List.of(0.3, 0.3))).hasMessageStartingWith("sweep: share 0.3 is given twice");
        assertThatThrownBy(() -> base.withTemperature(0)).hasMessageStartingWith("temperature: ");
        assertThatThrownBy(() -> base.withTemperature(Double.NaN)).hasMessageStartingWith("temperature: ");
        assertThatThrownBy(() -> base.withMaxDialogues(-1)).hasMessageStartingWith("maxDialogues: ");
        assertThatThrownBy(() -> base.withThreads(-2)).hasMessageStartingWith("threads: ");
        assertThatThrownBy(() -> DialogueOptions.defaults(Dataset.SGD, dir.resolve("none.gz"))).hasMessageStartingWith("data: no such file");
        assertThatThrownBy(() -> base.withPolicies(List.of("fdkvc", "lru"), Map.of())).isInstanceOf(ParameterException.class).hasMessageContaining("unknown policy 'lru'");
        assertThatThrownBy(() -> base.withPolicies(List.of("window", "window"), Map.of())).hasMessage("policy: 'window' is given twice");
    }

    @Test
    void parametersGoToThePoliciesThatTakeThemAndPinnedOnesAreLeftAlone() {
        DialogueOptions o = base.withPolicies(List.of("fdkvc", "fdkvc-no-decay", "h2o", "random"), Map.of("gamma", "0.7", "seed", "5"));
        assertThat(o.paramsOf("fdkvc")).containsExactly(Map.entry("gamma", "0.7"));
        assertThat(o.paramsOf("fdkvc-no-decay")).isEmpty(); // gamma is pinned to 1 there
        assertThat(o.paramsOf("h2o")).isEmpty();
        assertThat(o.paramsOf("random")).containsExactly(Map.entry("seed", "5"));
        assertThat(((FdkvcParams) o.template("fdkvc").params()).gamma()).isEqualTo(0.7);
        assertThat(((FdkvcParams) o.template("fdkvc-no-decay").params()).gamma()).isEqualTo(1.0);
    }

    @Test
    void aParameterNoSelectedPolicyTakesOrABadValueIsRefused() {
        assertThatThrownBy(() -> base.withPolicies(List.of("h2o-paper", "window"), Map.of("wc", "0.5")))
                .isInstanceOf(InputException.class).hasMessageStartingWith("wc: no selected policy takes this parameter");
        assertThatThrownBy(() -> base.withPolicies(List.of("fdkvc"), Map.of("gama", "0.5"))).hasMessageStartingWith("gama: ");
        assertThatThrownBy(() -> base.withPolicies(List.of("fdkvc"), Map.of("gamma", "1.5"))).isInstanceOf(ParameterException.class).hasMessageStartingWith("gamma: ");
    }

    @Test
    void theTunedVariantTakesTheTrainSplitValuesAndNoCommandLineParameter() {
        DialogueOptions o = base.withPolicies(List.of("fdkvc", DialogueOptions.TUNED), Map.of("gamma", "0.6"));
        assertThat(o.paramsOf(DialogueOptions.TUNED)).isEmpty();
        FdkvcParams tuned = (FdkvcParams) o.template(DialogueOptions.TUNED).params();
        FdkvcParams expected = (FdkvcParams) io.fdkvc.core.policy.PolicyRegistry.spec("fdkvc", 10, TunedParams.of(Dataset.TIAGE)).params();
        assertThat(tuned).isEqualTo(expected);
        assertThat(((FdkvcParams) o.template("fdkvc").params()).gamma()).isEqualTo(0.6);
        // a parameter only the tuned variant could take is still one no selected policy takes
        assertThatThrownBy(() -> base.withPolicies(List.of(DialogueOptions.TUNED, "window"), Map.of("gamma", "0.6")))
                .hasMessageStartingWith("gamma: no selected policy takes this parameter");
    }

    @Test
    void defaultsAreDocumentedValues() {
        assertThat(base.policies()).isEqualTo(DialogueOptions.DEFAULT_POLICIES);
        assertThat(base.sweepFractions()).isEqualTo(DialogueOptions.DEFAULT_SWEEP);
        assertThat(base.embeddingCache()).isEqualTo(EmbeddingCache.defaultDir());
        assertThat(base.threads()).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThat(base.budgetTokens()).isNull();
    }
}
