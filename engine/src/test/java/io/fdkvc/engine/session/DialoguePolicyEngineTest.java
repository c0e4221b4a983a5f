package io.fdkvc.engine.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.dialogue.DialogueParams;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.Llama2cLoader;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.sampling.Sampler;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * fdkvc-dialogue as a token-level KV-cache policy in the engine: entries are tokens (cost 1),
 * embeddings are the keys and the queries are the model's. Over a 30-turn conversation on
 * stories260K every stream stays within the budget, the most recent tokens (its protected share)
 * are always held, the replies are tokens of the vocabulary, and a second run makes the same
 * tokens (the policy is deterministic).
 */
class DialoguePolicyEngineTest {
    static Path dir() {
        return Path.of(System.getProperty("fdkvc.shared"), "models", "stories260K");
    }

    private static List<Integer> conversation(boolean check) {
        List<Integer> out = new ArrayList<>();
        try (LoadedModel m = Llama2cLoader.load(dir().resolve("stories260K.bin"), dir().resolve("tok512.bin"));
             Llama llama = new Llama(m.config(), m.weights(), 32, 1)) {
            Tokenizer tok = Tokenizers.from(m.vocabulary());
            int budget = 80;
            KvCache cache = llama.newCache(PolicyRegistry.spec("fdkvc-dialogue", budget), 64, PositionMode.CACHE);
            Session s = new Session(llama, cache);
            Sampler sampler = new Sampler(m.config().vocabSize(), 0.9f, 0, 0.95f, 5);
            for (int turn = 0; turn < 30; turn++) {
                int[] user = tok.encode("Tom saw a red ball number " + turn + ".");
                int[] prompt = new int[user.length + (turn == 0 ? 1 : 0)];
                if (turn == 0) prompt[0] = tok.bos();
                System.arraycopy(user, 0, prompt, prompt.length - user.length, user.length);
                s.feed(prompt, 0, prompt.length);
                s.generate(sampler, 24, t -> false, t -> {
                    assertThat(t).isBetween(0, 511);
                    out.add(t);
                });
                s.append(s.lastSampled());
                s.endTurn();
                if (!check) continue;
                long newest = s.position() - 1;
                for (int l = 0; l < m.config().layers(); l++) {
                    for (int h = 0; h < m.config().kvHeads(); h++) {
                        KvStream stream = cache.stream(l, h);
                        assertThat(stream.totalCost()).isLessThanOrEqualTo(budget);
                        // the protected share: the floor(recent * budget) newest positions are always held
                        int recent = (int) Math.floor(DialogueParams.DEFAULTS.recent() * budget);
                        long[] pos = stream.positions();
                        assertThat(stream.size()).isGreaterThanOrEqualTo(recent);
                        assertThat(pos[stream.size() - 1]).isEqualTo(newest);
                        if (recent > 0) assertThat(pos[stream.size() - recent]).isEqualTo(newest - recent + 1);
                    }
                }
            }
        }
        return out;
    }

    @Test
    void runsThroughTheEngineWithinBudgetAndDeterministically() {
        List<Integer> a = conversation(true);
        assertThat(a).isNotEmpty();
        assertThat(conversation(false)).isEqualTo(a);
    }
}
