package io.fdkvc.spring.ai;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.TokenCountEstimator;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.output.Response;
import io.fdkvc.langchain4j.FdkvcChatMemory;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.memory.InMemoryChatMemoryRepository;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;

/**
 * The Spring memory over generated conversations, every policy: it shows exactly what
 * fdkvc-langchain4j's FdkvcChatMemory shows for the same conversation (whose conventions that
 * module's properties check), a memory rebuilt from the repository shows exactly the same, and
 * Spring AI's own MessageWindowChatMemory is the oracle for {@code window} without packing.
 */
class FdkvcSpringChatMemoryProperties {

    /** One step of a conversation: kind 0 system, 1 user, 2 assistant, 3 a tool call with {@code results} responses. */
    record Step(int kind, String text, int results) {}

    @Provide
    Arbitrary<List<Step>> conversations() {
        Arbitrary<String> word = Arbitraries.of("paris", "rome", "hotel", "train", "june", "price", "yes", "no", "book", "time",
                "cheap", "room", "seat", "city");
        Arbitrary<String> text = word.list().ofMinSize(1).ofMaxSize(7).map(l -> String.join(" ", l));
        Arbitrary<Step> step = Combinators.combine(Arbitraries.of(0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3),
                text, Arbitraries.integers().between(1, 3)).as(Step::new);
        return step.list().ofMinSize(1).ofMaxSize(30);
    }

    @Provide
    Arbitrary<String> policies() {
        return Arbitraries.of("fdkvc-dialogue", "window", "fdkvc", "h2o", "tova", "snapkv", "random", "full", "fdkvc-no-decay", "h2o-paper");
    }

    @Property(tries = 120)
    void selectsWhatTheLangChain4jMemorySelectsAndRebuildsIdentically(@ForAll("conversations") List<Step> steps, @ForAll("policies") String policy,
                                                                      @ForAll @IntRange(min = 8, max = 60) int maxTokens, @ForAll boolean packing) {
        ChatMemoryRepository repo = new InMemoryChatMemoryRepository();
        FdkvcSpringChatMemory spring = FdkvcSpringChatMemoryTest.memory(policy, maxTokens).packing(packing).chatMemoryRepository(repo).build();
        FdkvcChatMemory lc4j = FdkvcChatMemory.builder().policy(policy).maxTokens(maxTokens).packing(packing)
                .tokenCountEstimator(new Lc4jWordCount()).embeddingModel(new Lc4jWordEmbeddings()).build();
        int call = 0;
        for (Step s : steps) {
            List<Message> adds = new ArrayList<>();
            List<ChatMessage> lcAdds = new ArrayList<>();
            switch (s.kind()) {
                case 0 -> {
                    String t = String.join(" ", java.util.Arrays.copyOf(s.text().split(" "), Math.min(3, s.text().split(" ").length)));
                    adds.add(new SystemMessage(t));
                    lcAdds.add(dev.langchain4j.data.message.SystemMessage.from(t));
                }
                case 1 -> {
                    adds.add(new UserMessage(s.text()));
                    lcAdds.add(dev.langchain4j.data.message.UserMessage.from(s.text()));
                }
                case 2 -> {
                    adds.add(new AssistantMessage(s.text()));
                    lcAdds.add(AiMessage.from(s.text()));
                }
                default -> {
                    // Spring AI sends all of a call's responses in one message, LangChain4j one message per result
                    List<AssistantMessage.ToolCall> calls = new ArrayList<>();
                    List<ToolResponseMessage.ToolResponse> responses = new ArrayList<>();
                    List<ToolExecutionRequest> reqs = new ArrayList<>();
                    for (int r = 0; r < s.results(); r++) {
                        String id = "c" + call + "." + r;
                        calls.add(new AssistantMessage.ToolCall(id, "function", "lookup", s.text()));
                        responses.add(new ToolResponseMessage.ToolResponse(id, "lookup", "found " + s.text()));
                        reqs.add(ToolExecutionRequest.builder().id(id).name("lookup").arguments(s.text()).build());
                    }
                    call++;
                    adds.add(AssistantMessage.builder().content("").toolCalls(calls).build());
                    adds.add(ToolResponseMessage.builder().responses(responses).build());
                    lcAdds.add(AiMessage.from(reqs));
                    for (ToolExecutionRequest r : reqs) lcAdds.add(ToolExecutionResultMessage.from(r, "found " + s.text()));
                }
            }
            spring.add("p", adds);
            for (ChatMessage x : lcAdds) lc4j.add(x);
            assertThat(texts(spring.get("p"))).isEqualTo(lc4jTexts(lc4j.messages()));
        }
        FdkvcSpringChatMemory rebuilt = FdkvcSpringChatMemoryTest.memory(policy, maxTokens).packing(packing).chatMemoryRepository(repo).build();
        assertThat(rebuilt.get("p")).isEqualTo(spring.get("p"));
        rebuilt.add("p", new UserMessage("one more question"));
        spring.add("p", new UserMessage("one more question"));
        assertThat(rebuilt.get("p")).isEqualTo(spring.get("p"));
    }

    private static final java.util.concurrent.atomic.AtomicInteger DATABASES = new java.util.concurrent.atomic.AtomicInteger();

    @Provide
    Arbitrary<List<String>> texts() {
        return Arbitraries.of("paris", "rome", "hotel", "train", "june", "price", "room").list().ofMinSize(1).ofMaxSize(9)
                .map(l -> String.join(" ", l)).list().ofMinSize(1).ofMaxSize(25);
    }

    /** Through the JDBC repository on H2 (text and type only), a rebuilt memory selects exactly what the first selected. */
    @Property(tries = 15)
    void aRebuildFromTheJdbcRepositoryIsIdentical(@ForAll("texts") List<String> texts, @ForAll("policies") String policy,
                                                  @ForAll @IntRange(min = 6, max = 40) int maxTokens) {
        DataSource db = Fakes.h2Memory("p" + DATABASES.incrementAndGet());
        FdkvcSpringChatMemory m = FdkvcSpringChatMemoryTest.memory(policy, maxTokens).chatMemoryRepository(Fakes.jdbc(db)).build();
        m.add("j", new SystemMessage("be brief"));
        for (int i = 0; i < texts.size(); i++) m.add("j", i % 2 == 0 ? new UserMessage(texts.get(i)) : new AssistantMessage(texts.get(i)));
        FdkvcSpringChatMemory rebuilt = FdkvcSpringChatMemoryTest.memory(policy, maxTokens).chatMemoryRepository(Fakes.jdbc(db)).build();
        assertThat(texts(rebuilt.get("j"))).isEqualTo(texts(m.get("j")));
    }

    /**
     * Spring AI's MessageWindowChatMemory as the oracle: with one token per message, the window
     * policy without packing at maxTokens = maxMessages shows exactly what it shows (it, too, starts
     * the window at a user message) for conversations of exchanges (a question and one or two
     * replies) that fit its window.
     */
    @Property(tries = 100)
    void windowWithoutPackingIsMessageWindowChatMemory(@ForAll("texts") List<String> texts, @ForAll @IntRange(min = 4, max = 20) int maxMessages,
                                                       @ForAll boolean withSystem, @ForAll long seed) {
        FdkvcSpringChatMemory m = FdkvcSpringChatMemory.builder().policy("window").maxTokens(maxMessages).packing(false)
                .tokenCountEstimator(new OneTokenEach()).embeddingModel(new Fakes.WordEmbeddings()).build();
        MessageWindowChatMemory oracle = MessageWindowChatMemory.builder().maxMessages(maxMessages).build();
        if (withSystem) {
            m.add("w", new SystemMessage("be brief"));
            oracle.add("w", new SystemMessage("be brief"));
        }
        java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
        int repliesLeft = 0;
        for (String text : texts) {
            Message x;
            if (repliesLeft == 0) {
                x = new UserMessage(text);
                repliesLeft = 1 + random.nextInt(2);
            } else {
                x = new AssistantMessage(text);
                repliesLeft--;
            }
            m.add("w", x);
            oracle.add("w", x);
            assertThat(m.get("w")).isEqualTo(oracle.get("w"));
        }
    }

    /** One token per message: MessageWindowChatMemory's unit. */
    static final class OneTokenEach extends Fakes.WordCount {
        @Override
        public int estimate(String text) {
            return 1;
        }
    }

    private static List<String> texts(List<Message> messages) {
        return messages.stream().map(x -> x.getMessageType() + ":" + FdkvcSpringChatMemory.text(x)).toList();
    }

    /** The LangChain4j messages as the Spring ones would read (a tool group's results joined as Spring AI sends them). */
    private static List<String> lc4jTexts(List<ChatMessage> messages) {
        List<String> out = new ArrayList<>();
        for (ChatMessage x : messages) {
            switch (x) {
                case dev.langchain4j.data.message.SystemMessage s -> out.add("SYSTEM:" + s.text());
                case dev.langchain4j.data.message.UserMessage u -> out.add("USER:" + u.singleText());
                case AiMessage a -> {
                    StringBuilder sb = new StringBuilder(a.text() == null ? "" : a.text());
                    if (a.hasToolExecutionRequests()) {
                        for (ToolExecutionRequest r : a.toolExecutionRequests()) sb.append(sb.isEmpty() ? "" : "\n").append(r.name()).append(' ').append(r.arguments());
                    }
                    out.add("ASSISTANT:" + sb);
                }
                case ToolExecutionResultMessage t -> {
                    String line = "lookup: " + t.text();
                    if (!out.isEmpty() && out.getLast().startsWith("TOOL:")) out.set(out.size() - 1, out.getLast() + "\n" + line);
                    else out.add("TOOL:" + line);
                }
                default -> throw new IllegalStateException(x.toString());
            }
        }
        return out;
    }

    /** The LangChain4j side of {@link Fakes#wordCount}: the same text of each message, so the same count. */
    static final class Lc4jWordCount implements TokenCountEstimator {
        @Override
        public int estimateTokenCountInText(String text) {
            return Fakes.wordCount(text);
        }

        @Override
        public int estimateTokenCountInMessage(ChatMessage message) {
            return switch (message) {
                case AiMessage a -> Fakes.wordCount(a.text() == null ? "" : a.text());
                case ToolExecutionResultMessage t -> Fakes.wordCount(t.text());
                case dev.langchain4j.data.message.UserMessage u -> Fakes.wordCount(u.singleText());
                case dev.langchain4j.data.message.SystemMessage s -> Fakes.wordCount(s.text());
                default -> throw new IllegalStateException(message.toString());
            };
        }

        @Override
        public int estimateTokenCountInMessages(Iterable<ChatMessage> messages) {
            int n = 0;
            for (ChatMessage m : messages) n += estimateTokenCountInMessage(m);
            return n;
        }
    }

    static final class Lc4jWordEmbeddings implements EmbeddingModel {
        @Override
        public Response<List<Embedding>> embedAll(List<TextSegment> segments) {
            List<Embedding> out = new ArrayList<>();
            for (TextSegment s : segments) out.add(Embedding.from(Fakes.words(s.text())));
            return Response.from(out);
        }

        @Override
        public int dimension() {
            return Fakes.DIM;
        }
    }
}
