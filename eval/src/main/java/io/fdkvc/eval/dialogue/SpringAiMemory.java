package io.fdkvc.eval.dialogue;

import io.fdkvc.spring.ai.FdkvcSpringChatMemory;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.content.MediaContent;
import org.springframework.ai.document.Document;
import org.springframework.ai.embedding.Embedding;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.ai.embedding.EmbeddingRequest;
import org.springframework.ai.embedding.EmbeddingResponse;
import org.springframework.ai.tokenizer.TokenCountEstimator;

/**
 * A Spring AI {@link ChatMemory} (the library's class, run as an application runs it) as a
 * {@link ConversationMemory}: each utterance is added to one conversation as a
 * {@link UserMessage} (user turns) or an {@link AssistantMessage} (system turns; TIAGE, which has
 * no speakers, alternates starting with the user), exactly as {@link LangChain4jMemory} feeds
 * LangChain4j's memories, and what {@link ChatMemory#get(String)} returns is what it keeps.
 *
 * <p>Two rows: Spring AI's own {@link MessageWindowChatMemory} (sized in messages like
 * LangChain4j's), and fdkvc-spring-ai's {@link FdkvcSpringChatMemory} given the evaluation's token
 * counts and embeddings as the LangChain4j memory's row is ({@link FdkvcLangChain4jMemory}): the
 * two share their selection, so the rows must be equal.
 */
public final class SpringAiMemory implements ConversationMemory {
    /** Label of {@link MessageWindowChatMemory}'s row. */
    public static final String MESSAGE_WINDOW = "spring-message-window";
    /** Label of {@link FdkvcSpringChatMemory}'s row (its defaults: fdkvc-dialogue, packing on). */
    public static final String FDKVC = "fdkvc-spring-memory";
    private static final String CONVERSATION = "dialogue";

    private final EmbeddedDialogue d;
    private final ChatMemory memory;
    private final Map<Message, Integer> turnOf = new IdentityHashMap<>();

    private SpringAiMemory(EmbeddedDialogue d, ChatMemory memory) {
        this.d = d;
        this.memory = memory;
    }

    /**
     * {@link MessageWindowChatMemory}: {@code maxMessages} = the budget over the mean tokens per
     * utterance of the evaluated file, rounded down (at least 1), as for LangChain4j's.
     */
    public static ConversationMemory.Factory messageWindow(double meanTokensPerUtterance) {
        if (!(meanTokensPerUtterance > 0)) throw new IllegalArgumentException("mean tokens per utterance must be > 0, got " + meanTokensPerUtterance);
        return (d, budget, temperature) -> new SpringAiMemory(d,
                MessageWindowChatMemory.builder().maxMessages(Math.max(1, (int) Math.floor(budget / meanTokensPerUtterance))).build());
    }

    /** {@link FdkvcSpringChatMemory} with its defaults at the evaluation's budget and temperature. */
    public static ConversationMemory.Factory fdkvc() {
        return (d, budget, temperature) -> new SpringAiMemory(d, FdkvcSpringChatMemory.builder()
                .maxTokens(budget)
                .temperature(temperature)
                .tokenCountEstimator(new Counts(new LangChain4jMemory.Counts(d)))
                .embeddingModel(new Precomputed(new FdkvcLangChain4jMemory.Precomputed(d)))
                .build());
    }

    @Override
    public void add(int t) {
        Utterance u = d.dialogue().turn(t);
        boolean user = u.speaker() == null ? t % 2 == 0 : u.speaker().equals("USER");
        Message m = user ? new UserMessage(u.text()) : new AssistantMessage(u.text());
        turnOf.put(m, t);
        memory.add(CONVERSATION, m);
    }

    @Override
    public void kept(boolean[] kept) {
        for (Message m : memory.get(CONVERSATION)) {
            Integer t = turnOf.get(m);
            if (t == null) throw new IllegalStateException(memory.getClass().getSimpleName() + " returned a message it was not given: " + m);
            kept[t] = true;
        }
    }

    /** The evaluation's token counts by utterance text, as Spring AI's estimator. */
    private record Counts(LangChain4jMemory.Counts counts) implements TokenCountEstimator {
        @Override
        public int estimate(String text) {
            return counts.estimateTokenCountInText(text);
        }

        @Override
        public int estimate(MediaContent content) {
            return estimate(content.getText());
        }

        @Override
        public int estimate(Iterable<MediaContent> contents) {
            int n = 0;
            for (MediaContent c : contents) n += estimate(c);
            return n;
        }
    }

    /** The dialogue's precomputed embeddings by utterance text, as Spring AI's embedding model. */
    private record Precomputed(FdkvcLangChain4jMemory.Precomputed vectors) implements EmbeddingModel {
        @Override
        public EmbeddingResponse call(EmbeddingRequest request) {
            List<Embedding> out = new ArrayList<>();
            for (String s : request.getInstructions()) out.add(new Embedding(vectors.vector(s), out.size()));
            return new EmbeddingResponse(out);
        }

        @Override
        public float[] embed(String text) {
            return vectors.vector(text);
        }

        @Override
        public float[] embed(Document document) {
            return embed(document.getText());
        }

        @Override
        public int dimensions() {
            return vectors.dimension();
        }
    }
}
