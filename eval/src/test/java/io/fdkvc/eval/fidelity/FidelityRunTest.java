package io.fdkvc.eval.fidelity;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The runner on the real stories260K: a cache that never has to evict is the full cache, bit for bit. */
class FidelityRunTest {
    static LoadedModel model;
    static List<TokenizedConversation> conversations;

    @BeforeAll
    static void load() {
        model = GgufModelLoader.load(Path.of(System.getProperty("fdkvc.shared"), "models", "stories260K", "stories260K.gguf"));
        Tokenizer tok = Tokenizers.from(model.vocabulary());
        try (Llama llama = new Llama(model.config(), model.weights(), 16, 1)) {
            List<ConversationScript> scripts = ConversationGenerator.generate(llama, tok,
                    new ConversationGenerator.Options(2, 7, 2, 4, 24, 36, true));
            conversations = new ArrayList<>();
            for (ConversationScript s : scripts) conversations.add(TokenizedConversation.of(s, tok, null, model.config().vocabSize(), s.id()));
        }
    }

    @AfterAll
    static void close() {
        model.close();
    }

    private static FidelityResults run(List<Student> students, int batch) {
        int longest = 0;
        for (TokenizedConversation c : conversations) longest = Math.max(longest, c.longestTurn());
        return FidelityRun.run(new FidelityRun.Setup(model.config(), model.weights(), batch, 2, 1, longest), conversations, students,
                (d, t) -> { });
    }

    /** FD-KVC's eq. 9 bias changes attention without evicting, and its threshold evicts below the budget. */
    private static boolean changesAttentionWithoutEviction(PolicySpec spec) {
        Map<String, Object> p = spec.parameterValues();
        return spec.newPolicy().modulatesAttention() || p.containsKey("tau") && ((Number) p.get("tau")).doubleValue() > 0;
    }

    @Test
    void aBudgetCoveringTheConversationGivesExactlyTheFullCachesLogits() {
        int budget = 0;
        for (TokenizedConversation c : conversations) budget = Math.max(budget, c.tokens().length);
        List<Student> all = FidelityPolicies.build(FidelityPolicies.defaults(), List.of(budget), List.of(PositionMode.CACHE, PositionMode.ORIGINAL),
                Map.of());
        List<Student> exact = new ArrayList<>(), changed = new ArrayList<>();
        for (Student s : all) (changesAttentionWithoutEviction(s.spec()) ? changed : exact).add(s);
        assertThat(exact).extracting(Student::policy).contains("window", "streaming", "h2o", "tova", "snapkv", "random", "fdkvc-dialogue",
                "h2o-paper");
        FidelityResults r = run(exact, 16);
        for (int s = 0; s < exact.size(); s++) {
            for (int c = 0; c < conversations.size(); c++) {
                ConversationScore sc = r.scores()[c][s];
                String what = exact.get(s) + " on " + conversations.get(c).id();
                assertThat(sc.kl()).as(what).isEqualTo(0.0);
                assertThat(sc.top1()).as(what).isEqualTo(1.0);
                assertThat(sc.nll()).as(what).isEqualTo(sc.nllFull());
                if (!conversations.get(c).probes().isEmpty()) assertThat(sc.probeNllIncrease()).as(what).isEqualTo(0.0);
            }
        }
        // FD-KVC at the spec's defaults (eq. 9 modulation, threshold) drifts from it with no budget pressure
        List<Student> fdkvc = changed.stream().filter(s -> s.policy().equals("fdkvc")).toList();
        assertThat(fdkvc).hasSize(2);
        FidelityResults m = run(fdkvc, 16);
        for (int s = 0; s < fdkvc.size(); s++) assertThat(m.interval(s, FidelityResults.Metric.KL).mean()).isPositive();
    }

    @Test
    void aSmallBudgetDriftsAndTheChunkSizeDoesNotChangeIt() {
        List<Student> students = FidelityPolicies.build(List.of("window", "h2o"), List.of(8), List.of(PositionMode.ORIGINAL), Map.of());
        FidelityResults a = run(students, 16), b = run(students, 5);
        for (int s = 0; s < students.size(); s++) {
            double kl = a.interval(s, FidelityResults.Metric.KL).mean();
            assertThat(kl).isPositive();
            assertThat(b.interval(s, FidelityResults.Metric.KL).mean()).isCloseTo(kl, org.assertj.core.api.Assertions.within(1e-4));
        }
    }
}
