package io.fdkvc.spring.ai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParameterException;
import java.nio.file.Path;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.memory.InMemoryChatMemoryRepository;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;

/** Hand-computed selections (window policy, one token per word), persistence and the error paths. */
class FdkvcSpringChatMemoryTest {

    static FdkvcSpringChatMemory.Builder memory(String policy, int maxTokens) {
        return FdkvcSpringChatMemory.builder().policy(policy).maxTokens(maxTokens)
                .tokenCountEstimator(new Fakes.WordCount()).embeddingModel(new Fakes.WordEmbeddings());
    }

    @Test
    void windowKeepsTheNewestThatFitBesideTheSystemMessage() {
        FdkvcSpringChatMemory m = memory("window", 10).build();
        SystemMessage sys = new SystemMessage("be brief");                    // 2 tokens: policy budget 8
        UserMessage u1 = new UserMessage("a b c");                             // 3
        AssistantMessage a1 = new AssistantMessage("d e");                     // 2
        UserMessage u2 = new UserMessage("f g h");                             // 3
        AssistantMessage a2 = new AssistantMessage("i j k l");                 // 4
        m.add("c", List.of(sys, u1, a1));
        assertThat(m.get("c")).containsExactly(sys, u1, a1);
        m.add("c", u2);
        m.add("c", a2);
        // window keeps 4 + 3 = 7 <= 8; adding a1's 2 would make 9
        assertThat(m.get("c")).containsExactly(sys, u2, a2);
        UserMessage u3 = new UserMessage("m");                                 // 1: 1 + 4 + 3 = 8 fits exactly
        m.add("c", u3);
        assertThat(m.get("c")).containsExactly(sys, u2, a2, u3);
        assertThat(m.transcript("c")).containsExactly(sys, u1, a1, u2, a2, u3);
        assertThat(m.get("other")).isEmpty(); // conversations are apart
    }

    @Test
    void aNewSystemMessageReplacesTheOldAndShrinksTheBudget() {
        FdkvcSpringChatMemory m = memory("window", 10).build();
        UserMessage u2 = new UserMessage("f g h");
        UserMessage u3 = new UserMessage("m");
        m.add("c", List.of(new SystemMessage("be brief"), new UserMessage("a b c"), new AssistantMessage("d e"), u2,
                new AssistantMessage("i j k l"), u3));
        SystemMessage sys2 = new SystemMessage("be very very brief");         // 4 tokens: budget 6
        m.add("c", sys2);
        // window under budget 6 keeps u3 (1) + a2 (4); a2's question is gone: orphan, dropped; u2 (3) refills
        assertThat(m.get("c")).containsExactly(sys2, u2, u3);
        assertThat(m.policySpec("c").budget()).isEqualTo(6);
    }

    @Test
    void aToolCallAndItsResponsesAreOneEntry() {
        FdkvcSpringChatMemory m = memory("window", 12).build();
        UserMessage u1 = new UserMessage("weather in paris");                                          // 3
        AssistantMessage call = AssistantMessage.builder().content("")
                .toolCalls(List.of(new AssistantMessage.ToolCall("t1", "function", "getWeather", "{\"city\":\"paris\"}"))).build(); // 2
        ToolResponseMessage result = ToolResponseMessage.builder()
                .responses(List.of(new ToolResponseMessage.ToolResponse("t1", "getWeather", "sunny 20 degrees"))).build(); // 3
        AssistantMessage a1 = new AssistantMessage("it is sunny");                                      // 3
        m.add("c", u1);
        m.add("c", call);
        assertThat(m.get("c")).containsExactly(u1, call); // the open group is shown while responses arrive
        m.add("c", List.of(result, a1));
        assertThat(m.get("c")).containsExactly(u1, call, result, a1); // 3 + 1 + 3 + 3 = 10 <= 12
        UserMessage u2 = new UserMessage("and in rome");                                                // 3
        m.add("c", u2);
        // 13 > 12: window evicts u1; the group and a1 answer a question that is gone: dropped; u1 refills
        assertThat(m.get("c")).containsExactly(u1, u2);
        FdkvcSpringChatMemory plain = memory("window", 12).packing(false).build();
        plain.add("c", List.of(u1, call, result, a1, u2));
        assertThat(plain.get("c")).containsExactly(u2); // no packing: no refill
    }

    @Test
    void aGreetingBeforeAnyUserMessageIsNoOrphan() {
        FdkvcSpringChatMemory m = memory("window", 10).build();
        AssistantMessage hello = new AssistantMessage("hello how can I help");
        UserMessage u = new UserMessage("tea");
        m.add("c", List.of(hello, u));
        assertThat(m.get("c")).containsExactly(hello, u);
    }

    @Test
    void theJdbcRepositoryKeepsTheConversationAcrossARestart(@TempDir Path dir) {
        DataSource db = Fakes.h2(dir);
        Fakes.WordEmbeddings embeddings = new Fakes.WordEmbeddings();
        FdkvcSpringChatMemory before = FdkvcSpringChatMemory.builder().maxTokens(12).tokenCountEstimator(new Fakes.WordCount())
                .embeddingModel(embeddings).chatMemoryRepository(Fakes.jdbc(db)).build(); // fdkvc-dialogue, packing
        String[] turns = {"i need a hotel in paris", "which dates", "june the fifth", "how many nights", "three nights please",
                "the ritz has a room", "and a train from rome", "what time", "in the morning"};
        before.add("trip", new SystemMessage("be brief"));
        for (int i = 0; i < turns.length; i++) {
            before.add("trip", i % 2 == 0 ? new UserMessage(turns[i]) : new AssistantMessage(turns[i]));
        }
        List<String> shown = texts(before.get("trip"));
        assertThat(shown.size()).isLessThan(turns.length + 1); // it chose: not everything fits 12 tokens

        int calls = embeddings.calls;
        FdkvcSpringChatMemory after = FdkvcSpringChatMemory.builder().maxTokens(12).tokenCountEstimator(new Fakes.WordCount())
                .embeddingModel(embeddings).chatMemoryRepository(Fakes.jdbc(db)).build();
        assertThat(texts(after.get("trip"))).isEqualTo(shown);
        assertThat(embeddings.calls).as("replayed from the stored embeddings").isEqualTo(calls);
        assertThat(texts(after.transcript("trip"))).hasSize(turns.length + 1);
        // and both go on alike
        before.add("trip", new UserMessage("a window seat"));
        after.add("trip", new UserMessage("a window seat"));
        assertThat(texts(after.get("trip"))).isEqualTo(texts(before.get("trip")));
        assertThat(Fakes.jdbc(db).findConversationIds()).containsExactly("trip");
    }

    @Test
    void aConversationWrittenByAnotherMemoryIsAdopted() {
        ChatMemoryRepository repo = new InMemoryChatMemoryRepository();
        UserMessage u1 = new UserMessage("a b c");
        AssistantMessage a1 = new AssistantMessage("d e f g");
        UserMessage u2 = new UserMessage("h");
        repo.saveAll("c", List.of(u1, a1, u2)); // as MessageWindowChatMemory leaves it: no state
        Fakes.WordEmbeddings embeddings = new Fakes.WordEmbeddings();
        FdkvcSpringChatMemory m = memory("window", 6).embeddingModel(embeddings).chatMemoryRepository(repo).build();
        // counted and embedded afresh: window keeps u2 (1) + a1 (4); a1's question u1 is gone: orphan,
        // dropped; u1 (3) refills: 3 + 1 <= 6
        assertThat(m.get("c")).containsExactly(u1, u2);
        assertThat(embeddings.calls).isEqualTo(3);
        assertThat(repo.findByConversationId("c")).hasSize(3); // reading writes nothing
    }

    @Test
    void clearForgetsTheConversation() {
        ChatMemoryRepository repo = new InMemoryChatMemoryRepository();
        FdkvcSpringChatMemory m = memory("window", 10).chatMemoryRepository(repo).build();
        m.add("c", new UserMessage("hello"));
        m.add("d", new UserMessage("other"));
        m.clear("c");
        assertThat(m.get("c")).isEmpty();
        assertThat(repo.findConversationIds()).containsExactly("d");
    }

    @Test
    void badInputIsRefusedNamingTheField() {
        assertThatThrownBy(() -> memory("window", 0).build()).isInstanceOf(ParameterException.class).hasMessageStartingWith("maxTokens:");
        assertThatThrownBy(() -> memory("window", 10).temperature(0).build()).hasMessageStartingWith("temperature:");
        assertThatThrownBy(() -> memory("nope", 10).build()).isInstanceOf(InputException.class).hasMessageContaining("unknown policy 'nope'");
        assertThatThrownBy(() -> memory("fdkvc", 10).policyParameter("gamma", 7).build()).hasMessageStartingWith("gamma:");
        FdkvcSpringChatMemory m = memory("window", 4).build();
        assertThatThrownBy(() -> m.add("c", new SystemMessage("far too long a system message"))).isInstanceOf(InputException.class)
                .hasMessageContaining("system message alone has 6 tokens, maxTokens is 4");
        assertThatThrownBy(() -> m.get(" ")).hasMessageStartingWith("conversationId:");
        ChatMemoryRepository repo = new InMemoryChatMemoryRepository();
        repo.saveAll("c", List.of(new UserMessage("x"), new SystemMessage(FdkvcSpringChatMemory.STATE_PREFIX + " 1, oops")));
        assertThatThrownBy(() -> memory("window", 4).chatMemoryRepository(repo).build().get("c")).isInstanceOf(InputException.class)
                .hasMessageContaining("conversation 'c', state message: not JSON");
    }

    private static List<String> texts(List<Message> messages) {
        return messages.stream().map(x -> x.getMessageType() + ":" + x.getText()).toList();
    }
}
