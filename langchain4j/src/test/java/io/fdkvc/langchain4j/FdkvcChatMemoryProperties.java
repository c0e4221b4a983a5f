package io.fdkvc.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * The memory's conventions over generated conversations, every policy: checked after every
 * message, then a memory rebuilt from a JSON store must show exactly the same messages.
 */
class FdkvcChatMemoryProperties {

    /** One step of a conversation: kind 0 system, 1 user, 2 AI, 3 a tool call with {@code results} results. */
    record Step(int kind, String text, int results) {}

    private static final Fakes.WordCount TOKENS = new Fakes.WordCount();

    @Provide
    Arbitrary<List<Step>> conversations() {
        Arbitrary<String> word = Arbitraries.of("paris", "rome", "hotel", "train", "june", "price", "yes", "no", "book", "time",
                "cheap", "room", "seat", "city");
        Arbitrary<String> text = word.list().ofMinSize(1).ofMaxSize(7).map(l -> String.join(" ", l));
        Arbitrary<Step> step = Combinators.combine(Arbitraries.of(0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3),
                text, Arbitraries.integers().between(1, 3)).as(Step::new);
        return step.list().ofMinSize(1).ofMaxSize(30);
    }

    /**
     * Every policy except {@code streaming}: its sinks are the first entries whatever they cost,
     * so a costed first message larger than the budget makes it throw (core's limit, not the memory's).
     */
    @Provide
    Arbitrary<String> policies() {
        return Arbitraries.of("fdkvc-dialogue", "window", "fdkvc", "h2o", "tova", "snapkv", "random", "full", "fdkvc-no-decay", "h2o-paper");
    }

    @Property(tries = 150)
    void conventionsHoldAndRebuildIsIdentical(@ForAll("conversations") List<Step> steps, @ForAll("policies") String policy,
                                              @ForAll @IntRange(min = 8, max = 60) int maxTokens, @ForAll boolean packing) {
        Fakes.JsonStore store = new Fakes.JsonStore();
        FdkvcChatMemory m = FdkvcChatMemoryTest.memory(policy, maxTokens).packing(packing).chatMemoryStore(store).id("p").build();
        List<ChatMessage> transcript = new ArrayList<>();
        SystemMessage system = null;
        int call = 0;
        for (Step s : steps) {
            List<ChatMessage> adds = new ArrayList<>();
            switch (s.kind()) {
                case 0 -> adds.add(SystemMessage.from(firstWords(s.text(), 3)));
                case 1 -> adds.add(UserMessage.from(s.text()));
                case 2 -> adds.add(AiMessage.from(s.text()));
                default -> {
                    List<ToolExecutionRequest> reqs = new ArrayList<>();
                    for (int r = 0; r < s.results(); r++) {
                        reqs.add(ToolExecutionRequest.builder().id("c" + call + "." + r).name("lookup").arguments(s.text()).build());
                    }
                    call++;
                    adds.add(AiMessage.from(reqs));
                    for (ToolExecutionRequest r : reqs) adds.add(ToolExecutionResultMessage.from(r, "found " + s.text()));
                }
            }
            for (ChatMessage x : adds) {
                m.add(x);
                if (x instanceof SystemMessage sm) system = sm;
                else transcript.add(x);
                check(m.messages(), system, transcript, maxTokens);
            }
        }
        FdkvcChatMemory rebuilt = FdkvcChatMemoryTest.memory(policy, maxTokens).packing(packing).chatMemoryStore(store).id("p").build();
        assertThat(rebuilt.messages()).isEqualTo(m.messages());
        assertThat(rebuilt.transcript()).isEqualTo(m.transcript());
        // and the rebuilt memory goes on exactly like the original
        UserMessage next = UserMessage.from("one more question");
        m.add(next);
        rebuilt.add(next);
        assertThat(rebuilt.messages()).isEqualTo(m.messages());
    }

    @Provide
    Arbitrary<List<String>> texts() {
        return Arbitraries.of("paris", "rome", "hotel", "train", "june", "price", "room").list().ofMinSize(1).ofMaxSize(9)
                .map(l -> String.join(" ", l)).list().ofMinSize(1).ofMaxSize(25);
    }

    /**
     * LangChain4j's own TokenWindowChatMemory as the oracle: the window policy without packing
     * shows exactly what it shows, except a first AI reply whose question it dropped (our
     * no-orphan convention).
     */
    @Property(tries = 100)
    void windowWithoutPackingIsTokenWindowChatMemory(@ForAll("texts") List<String> texts, @ForAll @IntRange(min = 4, max = 40) int maxTokens,
                                                     @ForAll boolean withSystem) {
        FdkvcChatMemory m = FdkvcChatMemoryTest.memory("window", maxTokens).packing(false).build();
        dev.langchain4j.memory.chat.TokenWindowChatMemory tw = dev.langchain4j.memory.chat.TokenWindowChatMemory.builder()
                .maxTokens(maxTokens, TOKENS).build();
        if (withSystem) {
            m.add(SystemMessage.from("be brief"));
            tw.add(SystemMessage.from("be brief"));
        }
        for (int i = 0; i < texts.size(); i++) {
            ChatMessage x = i % 2 == 0 ? UserMessage.from(texts.get(i)) : AiMessage.from(texts.get(i));
            m.add(x);
            tw.add(x);
            List<ChatMessage> expected = new ArrayList<>(tw.messages());
            int first = withSystem ? 1 : 0;
            if (expected.size() > first && expected.get(first) instanceof AiMessage) expected.remove(first); // alternating: its question came before
            assertThat(m.messages()).isEqualTo(expected);
        }
    }

    private static String firstWords(String text, int n) {
        String[] w = text.split(" ");
        return String.join(" ", java.util.Arrays.copyOf(w, Math.min(n, w.length)));
    }

    private static void check(List<ChatMessage> shown, SystemMessage system, List<ChatMessage> transcript, int maxTokens) {
        // budget
        int total = 0;
        for (ChatMessage x : shown) total += TOKENS.estimateTokenCountInMessage(x);
        assertThat(total).as("tokens shown").isLessThanOrEqualTo(maxTokens);
        // the system message: first, the latest one, once
        List<ChatMessage> rest = shown;
        if (system != null) {
            assertThat(shown).first().isEqualTo(system);
            rest = shown.subList(1, shown.size());
        }
        assertThat(rest).noneMatch(x -> x instanceof SystemMessage);
        // original order: indices into the transcript increase (messages are compared by identity)
        List<Integer> idx = new ArrayList<>();
        int from = 0;
        for (ChatMessage x : rest) {
            int i = indexOfIdentity(transcript, x, from);
            assertThat(i).as("shown message in transcript order").isGreaterThanOrEqualTo(0);
            idx.add(i);
            from = i + 1;
        }
        // tool calls: a request is shown with all of its results, a result only with its request
        for (int j = 0; j < rest.size(); j++) {
            ChatMessage x = rest.get(j);
            int i = idx.get(j);
            if (x instanceof AiMessage a && a.hasToolExecutionRequests()) {
                int results = 0;
                for (int t = i + 1; t < transcript.size() && transcript.get(t) instanceof ToolExecutionResultMessage; t++) results++;
                for (int t = 1; t <= results; t++) {
                    assertThat(j + t < rest.size() && idx.get(j + t) == i + t).as("result %d of a shown request", t).isTrue();
                }
            }
            if (x instanceof ToolExecutionResultMessage) {
                assertThat(j).as("a result is never first").isGreaterThan(0);
                ChatMessage before = rest.get(j - 1);
                assertThat(idx.get(j - 1) == i - 1 && (before instanceof ToolExecutionResultMessage
                        || before instanceof AiMessage a && a.hasToolExecutionRequests())).as("result follows its call").isTrue();
            }
        }
        // no orphaned reply first
        if (!rest.isEmpty()) {
            ChatMessage first = rest.getFirst();
            assertThat(first).isNotInstanceOf(ToolExecutionResultMessage.class);
            if (first instanceof AiMessage) {
                for (int t = 0; t < idx.getFirst(); t++) assertThat(transcript.get(t)).as("a user message before a first AI reply").isNotInstanceOf(UserMessage.class);
            }
        }
        // the current exchange is shown whenever it fits beside the system message
        int lastUser = -1;
        for (int t = transcript.size() - 1; t >= 0; t--) {
            if (transcript.get(t) instanceof UserMessage) {
                lastUser = t;
                break;
            }
        }
        if (lastUser >= 0) {
            int need = system == null ? 0 : TOKENS.estimateTokenCountInMessage(system);
            for (int t = lastUser; t < transcript.size(); t++) need += TOKENS.estimateTokenCountInMessage(transcript.get(t));
            if (need <= maxTokens) {
                List<ChatMessage> exchange = transcript.subList(lastUser, transcript.size());
                assertThat(rest.size()).isGreaterThanOrEqualTo(exchange.size());
                for (int t = 0; t < exchange.size(); t++) {
                    assertThat(rest.get(rest.size() - exchange.size() + t)).isSameAs(exchange.get(t));
                }
            }
        }
    }

    private static int indexOfIdentity(List<ChatMessage> l, ChatMessage x, int from) {
        for (int i = from; i < l.size(); i++) if (l.get(i) == x) return i;
        return -1;
    }
}
