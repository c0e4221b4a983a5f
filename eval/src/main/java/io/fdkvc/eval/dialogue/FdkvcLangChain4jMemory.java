package io.fdkvc.eval.dialogue;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.output.Response;
import io.fdkvc.langchain4j.FdkvcChatMemory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link FdkvcChatMemory} (the library class, as an application runs it) as a
 * {@link ConversationMemory}: utterances become {@link UserMessage}s (user turns) and
 * {@link AiMessage}s (system turns; TIAGE, which has no speakers, alternates starting with the
 * user), exactly as for LangChain4j's own memories ({@link LangChain4jMemory}), and what
 * {@link FdkvcChatMemory#messages()} returns is what it keeps.
 *
 * <p>It gets the evaluation's numbers, not its own: the token count of an utterance is the one the
 * evaluation charges ({@link LangChain4jMemory.Counts}), and its embedding model returns the
 * utterance's precomputed unit embedding ({@link EmbeddedDialogue#embeddings()}). So the row
 * differs from the policy's row only by what the memory adds: its conventions (the current
 * exchange is always shown, no orphaned reply first, the budget they free refilled from the
 * transcript) and, on TIAGE, speakers taken from the message types instead of "unknown".
 */
public final class FdkvcLangChain4jMemory {
    /** Label of the row: FdkvcChatMemory with its defaults (fdkvc-dialogue, packing on). */
    public static final String LABEL = "fdkvc-chat-memory";

    private FdkvcLangChain4jMemory() {}

    /** The memory with its default policy ({@value FdkvcChatMemory#DEFAULT_POLICY}) at the evaluation's budget and temperature. */
    public static ConversationMemory.Factory factory() {
        return factory(FdkvcChatMemory.DEFAULT_POLICY);
    }

    /** The memory with the named policy (its defaults, packing on). */
    public static ConversationMemory.Factory factory(String policy) {
        return factory(policy, true);
    }

    /** The memory with the named policy (its defaults), packing (and the memory's refill) on or off. */
    public static ConversationMemory.Factory factory(String policy, boolean packing) {
        return (d, budget, temperature) -> LangChain4jMemory.of(d, FdkvcChatMemory.builder()
                .maxTokens(budget)
                .policy(policy)
                .packing(packing)
                .temperature(temperature)
                .tokenCountEstimator(new LangChain4jMemory.Counts(d))
                .embeddingModel(new Precomputed(d))
                .build());
    }

    /** The dialogue's precomputed embeddings, looked up by utterance text. */
    static final class Precomputed implements EmbeddingModel {
        private final EmbeddedDialogue d;
        private final Map<String, Integer> byText = new HashMap<>();

        Precomputed(EmbeddedDialogue d) {
            this.d = d;
            for (int t = 0; t < d.size(); t++) byText.putIfAbsent(d.dialogue().turn(t).text(), t);
        }

        @Override
        public Response<List<Embedding>> embedAll(List<TextSegment> segments) {
            List<Embedding> out = new ArrayList<>(segments.size());
            for (TextSegment s : segments) out.add(Embedding.from(vector(s.text())));
            return Response.from(out);
        }

        /** The precomputed unit embedding of the utterance whose text is {@code text}. */
        float[] vector(String text) {
            Integer t = byText.get(text);
            if (t == null) throw new IllegalArgumentException("not an utterance of dialogue " + d.dialogue().id() + ": " + text);
            int dim = d.dimension();
            float[] v = new float[dim];
            System.arraycopy(d.embeddings(), t * dim, v, 0, dim);
            return v;
        }

        @Override
        public int dimension() {
            return d.dimension();
        }
    }
}
