package io.fdkvc.engine.model;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.sampling.Sampler;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The shared stories260K model and llama2.c's reference outputs, for the engine's tests. */
public final class Stories260K {
    private Stories260K() {}

    public static Path dir() {
        String shared = System.getProperty("fdkvc.shared");
        if (shared == null) throw new IllegalStateException("system property fdkvc.shared is not set (run the tests through Maven)");
        return Path.of(shared, "models", "stories260K");
    }

    public static Path bin() { return dir().resolve("stories260K.bin"); }
    public static Path gguf() { return dir().resolve("stories260K.gguf"); }
    public static Path tokenizer() { return dir().resolve("tok512.bin"); }

    public static String reference(String name) {
        try {
            return Files.readString(dir().resolve(name), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Greedy generation as llama2.c's run.c does it for {@code steps} steps: BOS at position 0,
     * the prompt forced, then argmax tokens, stopping at BOS; returns the text run.c prints (the
     * tokens after BOS, then a newline).
     */
    public static String runc(LoadedModel m, String prompt, int steps, PolicySpec spec, PositionMode mode,
                              int maxTurnTokens, int maxBatch) {
        Tokenizer tok = Tokenizers.from(m.vocabulary());
        int[] enc = tok.encode(prompt);
        int[] tokens = new int[enc.length + 1];
        tokens[0] = tok.bos();
        System.arraycopy(enc, 0, tokens, 1, enc.length);
        try (Llama llama = new Llama(m.config(), m.weights(), maxBatch, 2)) {
            KvCache cache = llama.newCache(spec, maxTurnTokens, mode);
            Session s = new Session(llama, cache);
            s.feed(tokens, 0, tokens.length);
            List<Integer> out = new ArrayList<>();
            for (int t : tokens) out.add(t);
            int bos = tok.bos();
            s.generate(Sampler.greedy(m.config().vocabSize()), steps - tokens.length + 1, t -> t == bos, out::add);
            int[] ids = out.stream().mapToInt(Integer::intValue).toArray();
            return tok.decode(ids) + "\n";
        }
    }

    public static String runc(LoadedModel m, String prompt, int steps) {
        return runc(m, prompt, steps, PolicyRegistry.spec("full", 256), PositionMode.CACHE, 512, 64);
    }
}
