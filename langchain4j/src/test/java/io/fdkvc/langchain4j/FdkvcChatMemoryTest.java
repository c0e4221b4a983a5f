package io.fdkvc.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.CustomMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParameterException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Hand-computed selections (window policy, one token per word) and the error paths. */
class FdkvcChatMemoryTest {

    static FdkvcChatMemory.Builder memory(String policy, int maxTokens) {
        return FdkvcChatMemory.builder().policy(policy).maxTokens(maxTokens)
                .tokenCountEstimator(new Fakes.WordCount()).embeddingModel(new Fakes.WordEmbeddings());
    }

    @Test
    void windowKeepsTheNewestThatFitBesideTheSystemMessage() {
        FdkvcChatMemory m = memory("window", 10).build();
        SystemMessage sys = SystemMessage.from("be brief");                 // 2 tokens: policy budget 8
        UserMessage u1 = UserMessage.from("a b c");                          // 3
        AiMessage a1 = AiMessage.from("d e");                                // 2
        UserMessage u2 = UserMessage.from("f g h");                          // 3
        AiMessage a2 = AiMessage.from("i j k l");                            // 4
        m.add(sys);
        m.add(u1);
        m.add(a1);
        assertThat(m.messages()).containsExactly(sys, u1, a1);
        m.add(u2);
        m.add(a2);
        // window keeps 4 + 3 = 7 <= 8; adding a1's 2 would make 9
        assertThat(m.messages()).containsExactly(sys, u2, a2);
        UserMessage u3 = UserMessage.from("m");                              // 1: 1 + 4 + 3 = 8 fits exactly
        m.add(u3);
        assertThat(m.messages()).containsExactly(sys, u2, a2, u3);
        assertThat(m.transcript()).containsExactly(sys, u1, a1, u2, a2, u3);
    }

    @Test
    void aNewSystemMessageReplacesTheOldAndShrinksTheBudget() {
        FdkvcChatMemory m = memory("window", 10).build();
        UserMessage u2 = UserMessage.from("f g h");
        AiMessage a2 = AiMessage.from("i j k l");
        UserMessage u3 = UserMessage.from("m");
        m.add(SystemMessage.from("be brief"));
        for (ChatMessage x : List.of(UserMessage.from("a b c"), AiMessage.from("d e"), u2, a2, u3)) m.add(x);
        SystemMessage sys2 = SystemMessage.from("be very very brief");      // 4 tokens: budget 6
        m.add(sys2);
        // window under budget 6 keeps u3 (1) + a2 (4) = 5; a2 answers u2, which is gone: orphan, dropped.
        // The 4 tokens it freed refill with the newest message that fits and is no orphan: u2 (3), 4 + 3 + 1 = 8 <= 10
        assertThat(m.messages()).containsExactly(sys2, u2, u3);
        assertThat(m.transcript()).first().isEqualTo(sys2);
        assertThat(m.transcript()).filteredOn(x -> x instanceof SystemMessage).hasSize(1);
        m.add(SystemMessage.from("be very very brief")); // the same one again: nothing changes
        assertThat(m.messages()).containsExactly(sys2, u2, u3);
        assertThat(m.policySpec().budget()).isEqualTo(6);
    }

    @Test
    void aToolRequestAndItsResultsAreOneEntry() {
        FdkvcChatMemory m = memory("window", 12).build();
        UserMessage u1 = UserMessage.from("weather in paris");                                       // 3
        ToolExecutionRequest req = ToolExecutionRequest.builder().id("t1").name("getWeather").arguments("{\"city\":\"paris\"}").build();
        AiMessage call = AiMessage.from(req);                                                         // 2
        ToolExecutionResultMessage result = ToolExecutionResultMessage.from(req, "sunny 20 degrees"); // 4
        AiMessage a1 = AiMessage.from("it is sunny");                                                 // 3
        m.add(u1);
        m.add(call);
        assertThat(m.messages()).containsExactly(u1, call); // the open group is shown while results arrive
        m.add(result);
        assertThat(m.messages()).containsExactly(u1, call, result);
        m.add(a1);
        assertThat(m.messages()).containsExactly(u1, call, result, a1); // 12 tokens, all fit
        UserMessage u2 = UserMessage.from("and in rome");                                             // 3
        m.add(u2);
        // window evicts u1 (3) to fit 12; the group and a1 then answer a user message that is gone: dropped,
        // and the 9 tokens they freed refill with u1 (3), the newest message that fits and is no orphan
        assertThat(m.messages()).containsExactly(u1, u2);
        UserMessage u3 = UserMessage.from("x");                                                        // 1
        m.add(u3);
        // window keeps u3, u2, a1 and the 6-token group (1 + 3 + 3 + 6 = 13 > 12): the group goes whole;
        // a1 is an orphan first reply again, u1 refills (3 + 3 + 1 = 7)
        assertThat(m.messages()).containsExactly(u1, u2, u3);
        FdkvcChatMemory plain = memory("window", 12).packing(false).build();
        for (ChatMessage x : List.of(u1, call, result, a1, u2, u3)) plain.add(x);
        assertThat(plain.messages()).containsExactly(u2, u3); // no packing: no refill
    }

    @Test
    void theBudgetBeatsTheCurrentExchange() {
        FdkvcChatMemory m = memory("window", 6).build();
        UserMessage hi = UserMessage.from("hi");
        UserMessage big = UserMessage.from("one two three four five");
        m.add(hi);
        m.add(big);
        assertThat(m.messages()).containsExactly(hi, big); // 1 + 5 = 6
        SystemMessage sys = SystemMessage.from("s t");
        m.add(sys);
        // budget 4: window evicts both, packing readmits hi (1); the exchange (5) beside the system
        // message (2) and hi exceeds 6: hi goes first (outside the exchange), then the exchange;
        // the refill then takes back hi, which fits alone (2 + 1)
        assertThat(m.messages()).containsExactly(sys, hi);
        UserMessage small = UserMessage.from("ok");
        m.add(small);
        assertThat(m.messages()).containsExactly(sys, hi, small); // the policy still holds hi: 2 + 1 + 1

        FdkvcChatMemory plain = memory("window", 6).packing(false).build();
        plain.add(hi);
        plain.add(big);
        plain.add(sys);
        plain.add(small);
        assertThat(plain.messages()).containsExactly(sys, small); // without packing hi was evicted for good
    }

    @Test
    void aGreetingBeforeAnyUserMessageIsNoOrphan() {
        FdkvcChatMemory m = memory("window", 10).build();
        AiMessage hello = AiMessage.from("hello how can I help");
        m.add(hello);
        UserMessage u = UserMessage.from("tea");
        m.add(u);
        assertThat(m.messages()).containsExactly(hello, u);
    }

    @Test
    void rebuildFromTheStoreUsesTheStoredNumbersAndAdoptsForeignStores() {
        Fakes.JsonStore store = new Fakes.JsonStore();
        FdkvcChatMemory a = memory("fdkvc", 14).id("c1").chatMemoryStore(store).build();
        a.add(SystemMessage.from("you are a travel agent"));
        for (String s : List.of("book a hotel in paris", "which dates", "june first to third", "done the hotel is booked",
                "also a train to lyon", "which time", "morning please", "booked the 8am train")) {
            a.add(s.startsWith("which") || s.startsWith("done") || s.startsWith("booked") ? AiMessage.from(s) : UserMessage.from(s));
        }
        Fakes.WordEmbeddings fresh = new Fakes.WordEmbeddings();
        FdkvcChatMemory b = FdkvcChatMemory.builder().policy("fdkvc").maxTokens(14).id("c1").chatMemoryStore(store)
                .tokenCountEstimator(new Fakes.WordCount()).embeddingModel(fresh).build();
        assertThat(b.messages()).isEqualTo(a.messages());
        assertThat(b.transcript()).isEqualTo(a.transcript());
        assertThat(fresh.calls).isZero(); // replayed from stored embeddings
        assertThat(store.getMessages("c1").getLast()).isInstanceOf(CustomMessage.class);

        // a store written by LangChain4j's own memory: adopted, counted and embedded
        InMemoryChatMemoryStore foreign = new InMemoryChatMemoryStore();
        MessageWindowChatMemory window = MessageWindowChatMemory.builder().id("w").maxMessages(100).chatMemoryStore(foreign).build();
        window.add(UserMessage.from("hello there"));
        window.add(AiMessage.from("hi"));
        Fakes.WordEmbeddings adopt = new Fakes.WordEmbeddings();
        FdkvcChatMemory c = FdkvcChatMemory.builder().policy("window").maxTokens(20).id("w").chatMemoryStore(foreign)
                .tokenCountEstimator(new Fakes.WordCount()).embeddingModel(adopt).build();
        assertThat(c.messages()).containsExactly(UserMessage.from("hello there"), AiMessage.from("hi"));
        assertThat(adopt.calls).isEqualTo(2);
    }

    @Test
    void aStoredSelectionThatTheReplayDoesNotReproduceIsAnError() {
        InMemoryChatMemoryStore store = new InMemoryChatMemoryStore();
        FdkvcChatMemory a = memory("window", 10).chatMemoryStore(store).build();
        a.add(UserMessage.from("a b c"));
        a.add(AiMessage.from("d e"));
        List<ChatMessage> stored = new ArrayList<>(store.getMessages("default"));
        Map<String, Object> attributes = new LinkedHashMap<>(((CustomMessage) stored.getLast()).attributes());
        attributes.put("selection", List.of(1));
        stored.set(stored.size() - 1, CustomMessage.from(attributes));
        store.updateMessages("default", stored);
        assertThatThrownBy(() -> memory("window", 10).chatMemoryStore(store).build().messages())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("selects [0, 1]").hasMessageContaining("recorded [1]");

        attributes.put("costs", List.of("x", 2));
        stored.set(stored.size() - 1, CustomMessage.from(attributes));
        store.updateMessages("default", stored);
        assertThatThrownBy(() -> memory("window", 10).chatMemoryStore(store).build().messages())
                .isInstanceOf(InputException.class).hasMessageContaining("'costs' must be a number");
    }

    @Test
    void aChangedConfigurationReplaysUnderTheNewOne() {
        InMemoryChatMemoryStore store = new InMemoryChatMemoryStore();
        FdkvcChatMemory a = memory("window", 10).chatMemoryStore(store).build();
        for (String s : List.of("a b c", "d e f", "g h i")) a.add(UserMessage.from(s));
        assertThat(a.messages()).hasSize(3);
        FdkvcChatMemory b = memory("window", 6).chatMemoryStore(store).build();
        assertThat(b.messages()).containsExactly(UserMessage.from("d e f"), UserMessage.from("g h i"));
    }

    @Test
    void badConfigurationIsRefusedNamingTheField() {
        assertThatThrownBy(() -> memory("window", 0).build()).isInstanceOf(ParameterException.class).hasMessageStartingWith("maxTokens:");
        assertThatThrownBy(() -> memory("window", 10).temperature(0).build()).hasMessageStartingWith("temperature:");
        assertThatThrownBy(() -> memory("nope", 10).build()).isInstanceOf(InputException.class).hasMessageContaining("unknown policy 'nope'");
        assertThatThrownBy(() -> memory("fdkvc", 10).policyParameter("gamma", 7).build()).hasMessageStartingWith("gamma:");
        FdkvcChatMemory m = memory("window", 4).build();
        assertThatThrownBy(() -> m.add(SystemMessage.from("far too long a system message"))).isInstanceOf(InputException.class)
                .hasMessageContaining("system message alone has 6 tokens, maxTokens is 4");
    }

    @Test
    void theDefaultPolicyIsFdkvcDialogueWithPacking() {
        FdkvcChatMemory m = FdkvcChatMemory.builder().maxTokens(20).tokenCountEstimator(new Fakes.WordCount())
                .embeddingModel(new Fakes.WordEmbeddings()).build();
        m.add(SystemMessage.from("x y"));
        m.add(UserMessage.from("a table for two at sushi bistro"));
        assertThat(m.policySpec().name()).isEqualTo("fdkvc-dialogue");
        assertThat(m.policySpec().budget()).isEqualTo(18);
        assertThat(m.messages()).hasSize(2);
    }

    @Test
    void clearForgetsEverything() {
        InMemoryChatMemoryStore store = new InMemoryChatMemoryStore();
        FdkvcChatMemory m = memory("window", 10).chatMemoryStore(store).build();
        m.add(UserMessage.from("a"));
        m.clear();
        assertThat(m.messages()).isEmpty();
        assertThat(store.getMessages("default")).isEmpty();
        m.add(UserMessage.from("b"));
        assertThat(m.messages()).containsExactly(UserMessage.from("b"));
    }
}
