package io.fdkvc.engine.model;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.gguf.GgufValueType;
import io.fdkvc.engine.session.Session;
import java.nio.file.Path;

/**
 * Writes a random-weight qwen3 GGUF (the shape of {@link Qwen3Test}, wider, with a byte-level GPT-2
 * vocabulary that llama.cpp accepts) and prints our greedy ids after a prompt of ids, for the
 * side-by-side with llama.cpp in {@code bench/llamacpp-qwen3/README.md}. Arguments: FILE N SEED id...
 */
public class Qwen3Greedy {
    public static void main(String[] a) {
        Path file = Path.of(a[0]);
        int n = Integer.parseInt(a[1]);
        LlamaConfig c = new LlamaConfig("qwen3", 64, 128, 2, 4, 2, 32, 257, 4096, 1e-6f, 1_000_000f, "none", 1f, 0, true, false);
        LlamaWeights w = NaiveLlama.randomWeights(c, Long.parseLong(a[2]), false);
        String[] tokens = new String[257];
        int[] bs = new int[256];
        int k = 0;
        for (int b = '!'; b <= '~'; b++) bs[k++] = b;
        for (int b = 0xA1; b <= 0xAC; b++) bs[k++] = b;
        for (int b = 0xAE; b <= 0xFF; b++) bs[k++] = b;
        boolean[] seen = new boolean[256];
        for (int i = 0; i < k; i++) seen[bs[i]] = true;
        String[] map = new String[256];
        for (int i = 0; i < k; i++) map[bs[i]] = String.valueOf((char) bs[i]);
        int extra = 0;
        for (int b = 0; b < 256; b++) if (!seen[b]) map[b] = String.valueOf((char) (256 + extra++));
        for (int b = 0; b < 256; b++) tokens[b] = map[b];
        tokens[256] = map[' '] + "t";
        var g = Qwen3Test.gguf(c, w, x -> { });
        g.putArray("tokenizer.ggml.tokens", GgufValueType.STRING, tokens)
                .putArray("tokenizer.ggml.token_type", GgufValueType.INT32, new int[257])
                .putArray("tokenizer.ggml.merges", GgufValueType.STRING, new String[] {map[' '] + " t"});
        g.write(file);
        int[] prompt = new int[a.length - 3];
        for (int i = 0; i < prompt.length; i++) prompt[i] = Integer.parseInt(a[3 + i]);
        try (LoadedModel m = GgufModelLoader.load(file); Llama llama = new Llama(m.config(), m.weights(), 64, 1)) {
            Session s = new Session(llama, llama.newCache(PolicyRegistry.spec("full", 8), 512, PositionMode.ORIGINAL));
            float[] logits = s.feed(prompt, 0, prompt.length);
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < n; i++) {
                int best = 0;
                for (int j = 1; j < logits.length; j++) if (logits[j] > logits[best]) best = j;
                out.append(i == 0 ? "" : " ").append(best);
                logits = s.feed(best);
            }
            System.out.println(out);
        }
    }
}
