package io.fdkvc.engine.chat;

import io.fdkvc.core.InputException;
import java.util.List;

/**
 * How to generate one reply.
 *
 * @param maxTokens   most reply tokens, at least 1
 * @param temperature 0 for greedy, else a finite number &gt; 0
 * @param topP        nucleus mass in (0, 1]
 * @param seed        seed of the sampler's random stream
 * @param stop        extra texts that end the reply (besides the chat format's own), each non-empty
 */
public record GenerationParams(int maxTokens, float temperature, float topP, long seed, List<String> stop) {
    public GenerationParams {
        if (maxTokens < 1) throw new InputException("max_tokens: must be >= 1, got " + maxTokens);
        if (!(temperature >= 0) || Float.isInfinite(temperature)) {
            throw new InputException("temperature: must be a finite number >= 0, got " + temperature);
        }
        if (!(topP > 0 && topP <= 1)) throw new InputException("top_p: must be in (0, 1], got " + topP);
        stop = List.copyOf(stop);
        for (String s : stop) if (s.isEmpty()) throw new InputException("stop: entries must be non-empty");
    }

    /** Greedy, no extra stop texts. */
    public static GenerationParams greedy(int maxTokens) {
        return new GenerationParams(maxTokens, 0f, 1f, 0, List.of());
    }
}
