package io.fdkvc.engine.modelwriter;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.modelwriter.LlamaCppChecks.Form;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine's greedy ids against llama.cpp's on the same files: each architecture's
 * {@link LlamaCppChecks} model, written again by our {@link GgufModelWriter} for every weight seed
 * and type, read by the engine, fed the prompt, then llama.cpp's 32 greedy ids one at a time (so
 * that a difference names its step and the steps after it are still compared). At every step the
 * engine's argmax must be llama.cpp's next id, except at a near-tie: where llama.cpp's own choice
 * was within {@link #tie} of its runner-up and the engine's logit for llama.cpp's id is within
 * {@link #tie} of its maximum, both orders are correct to the precision the two engines share
 * (llama.cpp quantises activations to 8 bits for Q8_0 weights and sums in another order; the
 * engine does neither alike). Near-ties must stay rare: at most one step in ten. Each check runs
 * in every {@link LlamaCppChecks.Form}; the third compares the engine's Q8_0 file with llama.cpp
 * on the same weight values without its 8-bit activations, at F32's tie. The goldens
 * ({@code llamacpp-greedy/NAME.txt}) are llama.cpp's output, {@code bench/llamacpp/greedy-goldens.sh}.
 */
class LlamaCppGreedyTest {
    @TempDir
    Path dir;

    /** One golden line: the weights' form and seed, llama.cpp's context, its greedy ids and each one's lead over the runner-up. */
    record Golden(Form form, long seed, int context, int[] ids, float[] gaps) {}

    /**
     * The logit distance below which two tokens are a tie: 0.05 where llama.cpp rounds activations
     * to 8 bits (Q8_0), else 0.002.
     */
    static float tie(Form form) {
        return form == Form.Q8_0 ? 0.05f : 0.002f;
    }

    static List<Golden> goldens(String name) throws IOException {
        List<Golden> all = new ArrayList<>();
        try (InputStream in = LlamaCppGreedyTest.class.getResourceAsStream("/llamacpp-greedy/" + name + ".txt")) {
            assertThat(in).as("golden llamacpp-greedy/%s.txt", name).isNotNull();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) continue;
                String[] f = line.trim().split("\\s+");
                int[] ids = new int[f.length - 3];
                float[] gaps = new float[ids.length];
                for (int i = 0; i < ids.length; i++) {
                    String[] idGap = f[3 + i].split("/");
                    ids[i] = Integer.parseInt(idGap[0]);
                    gaps[i] = Float.parseFloat(idGap[1]);
                }
                all.add(new Golden(Form.valueOf(f[0]), Long.parseLong(f[1]), Integer.parseInt(f[2]), ids, gaps));
            }
        }
        return all;
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama", "qwen3", "gemma3", "phi3", "mistral3", "smollm3"})
    void greedyIdsAreLlamaCpps(String name) throws IOException {
        LlamaCppChecks.Check check = LlamaCppChecks.check(name);
        List<Golden> goldens = goldens(name);
        // every type, seed and context of the check has its golden line
        assertThat(goldens).hasSize(Form.values().length * LlamaCppChecks.SEEDS.length * check.contexts().length);
        int steps = 0, ties = 0;
        for (Golden g : goldens) {
            assertThat(g.ids()).hasSize(LlamaCppChecks.TOKENS);
            // Not compared: phi3's Q8_0 lines with LongRoPE's long factors (context 512), where a step's
            // logits differ by more than the tie (up to 0.1) while llama.cpp's lead is below it. That
            // difference is llama.cpp's 8-bit rounding of activations, not the long factors: on the same
            // weights in F32 (the Q8_0_VALUES_IN_F32 lines, compared below at F32's tie, long factors
            // included) llama.cpp's logits stay within 0.008 of the engine's at every step, while its
            // Q8_0 logits differ from its own F32 ones by 0.03 to 0.1 from the first step on, with the
            // short factors as with the long ones (bench/llamacpp/README.md, "logits.c").
            if (name.equals("phi3") && g.form() == Form.Q8_0 && g.context() > 256) continue;
            Path file = dir.resolve(LlamaCppChecks.fileName(check, g.form().engineType, g.seed()));
            LlamaCppChecks.write(check, g.form().engineType, g.seed(), file);
            // llama.cpp's context decides LongRoPE's factors (phi3): the same context here
            try (LoadedModel m = GgufModelLoader.load(file); Llama llama = new Llama(m.config().forContext(g.context()), m.weights(), 64, 1)) {
                Session s = new Session(llama, llama.newCache(PolicyRegistry.spec("full", 8), g.context(), PositionMode.ORIGINAL));
                int[] prompt = LlamaCppChecks.PROMPT;
                float[] logits = s.feed(prompt, 0, prompt.length);
                for (int i = 0; i < g.ids().length; i++) {
                    int ours = argmax(logits), theirs = g.ids()[i];
                    steps++;
                    if (ours != theirs) {
                        float behind = logits[ours] - logits[theirs];
                        assertThat(g.gaps()[i] < tie(g.form()) && behind < tie(g.form()))
                                .as("%s %s seed %d context %d, step %d: ours %d, llama.cpp's %d (llama.cpp's lead %.6f, %.6f behind ours) in %s",
                                        name, g.form(), g.seed(), g.context(), i, ours, theirs, g.gaps()[i], behind, Arrays.toString(g.ids()))
                                .isTrue();
                        ties++;
                    }
                    logits = s.feed(theirs);
                }
            }
        }
        System.out.printf("%s: %d steps, %d near-ties%n", name, steps, ties);
        assertThat(ties).as("near-ties of %d steps", steps).isLessThanOrEqualTo(steps / 10);
    }

    static int argmax(float[] logits) {
        int best = 0;
        for (int j = 1; j < logits.length; j++) if (logits[j] > logits[best]) best = j;
        return best;
    }
}
