package io.fdkvc.eval.dialogue;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.memory.ChatMemory;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.memory.chat.TokenWindowChatMemory;
import dev.langchain4j.model.TokenCountEstimator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A LangChain4j {@link ChatMemory} (the library's own class, run as an application runs it) as a
 * {@link ConversationMemory}: each utterance is added as a {@link UserMessage} (user turns) or an
 * {@link AiMessage} (system turns; TIAGE, which has no speakers, alternates starting with the
 * user), and what {@link ChatMemory#messages()} returns is what it keeps.
 *
 * <p>Token counts: the memory's {@link TokenCountEstimator} returns, for a message, the token
 * count the evaluation charges the utterance ({@link EmbeddedDialogue#tokens()}: WordPiece
 * tokens of all-MiniLM-L6-v2's tokenizer), and the sum over messages for a list, so that its
 * budget counts exactly what the policies' budgets count.
 */
public final class LangChain4jMemory implements ConversationMemory {
    /** Label of {@link MessageWindowChatMemory}'s row. */
    public static final String MESSAGE_WINDOW = "lc4j-message-window";
    /** Label of {@link TokenWindowChatMemory}'s row. */
    public static final String TOKEN_WINDOW = "lc4j-token-window";

    private final EmbeddedDialogue d;
    private final ChatMemory memory;
    private final Map<ChatMessage, Integer> turnOf = new IdentityHashMap<>();

    private LangChain4jMemory(EmbeddedDialogue d, ChatMemory memory) {
        this.d = d;
        this.memory = memory;
    }

    /** Any LangChain4j memory (LangChain4j's own, or fdkvc's {@code FdkvcChatMemory}) run on {@code d}. */
    static ConversationMemory of(EmbeddedDialogue d, ChatMemory memory) {
        return new LangChain4jMemory(d, memory);
    }

    /** {@link TokenWindowChatMemory} with {@code maxTokens} = the budget. */
    public static ConversationMemory.Factory tokenWindow() {
        return (d, budget, temperature) -> new LangChain4jMemory(d, TokenWindowChatMemory.withMaxTokens(budget, new Counts(d)));
    }

    /**
     * {@link MessageWindowChatMemory}, which counts messages, not tokens: {@code maxMessages} =
     * the budget over the mean tokens per utterance of the evaluated file, rounded down (at least
     * 1), the way an application sizes it. Its cache_fill shows how far that misses the budget.
     */
    public static ConversationMemory.Factory messageWindow(double meanTokensPerUtterance) {
        if (!(meanTokensPerUtterance > 0)) throw new IllegalArgumentException("mean tokens per utterance must be > 0, got " + meanTokensPerUtterance);
        return (d, budget, temperature) -> new LangChain4jMemory(d,
                MessageWindowChatMemory.withMaxMessages(Math.max(1, (int) Math.floor(budget / meanTokensPerUtterance))));
    }

    /** Mean tokens per utterance over {@code dialogues}. */
    public static double meanTokens(List<EmbeddedDialogue> dialogues) {
        long tokens = 0, n = 0;
        for (EmbeddedDialogue d : dialogues) {
            tokens += d.totalTokens();
            n += d.size();
        }
        return n == 0 ? 1 : (double) tokens / n;
    }

    @Override
    public void add(int t) {
        Utterance u = d.dialogue().turn(t);
        boolean user = u.speaker() == null ? t % 2 == 0 : u.speaker().equals("USER");
        ChatMessage m = user ? UserMessage.from(u.text()) : AiMessage.from(u.text());
        turnOf.put(m, t);
        memory.add(m);
    }

    @Override
    public void kept(boolean[] kept) {
        for (ChatMessage m : memory.messages()) {
            Integer t = turnOf.get(m);
            if (t == null) throw new IllegalStateException(memory.getClass().getSimpleName() + " returned a message it was not given: " + m);
            kept[t] = true;
        }
    }

    /** The evaluation's token counts, looked up by the utterance text of the dialogue. */
    static final class Counts implements TokenCountEstimator {
        private final EmbeddedDialogue d;
        private final Map<String, Integer> byText = new java.util.HashMap<>();

        Counts(EmbeddedDialogue d) {
            this.d = d;
            for (int t = 0; t < d.size(); t++) byText.put(d.dialogue().turn(t).text(), d.tokens()[t]);
        }

        @Override
        public int estimateTokenCountInText(String text) {
            Integer n = byText.get(text);
            if (n == null) throw new IllegalArgumentException("not an utterance of dialogue " + d.dialogue().id() + ": " + text);
            return n;
        }

        @Override
        public int estimateTokenCountInMessage(ChatMessage message) {
            return switch (message) {
                case UserMessage u -> estimateTokenCountInText(u.singleText());
                case AiMessage a -> estimateTokenCountInText(a.text());
                default -> throw new IllegalArgumentException("unexpected message type " + message.type());
            };
        }

        @Override
        public int estimateTokenCountInMessages(Iterable<ChatMessage> messages) {
            int sum = 0;
            for (ChatMessage m : messages) sum += estimateTokenCountInMessage(m);
            return sum;
        }
    }
}
