package io.fdkvc.spring.ai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.MessageChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

/** The in-process model on stories260K (the trained test model) through Spring AI's own ChatClient and advisors. */
class FdkvcSpringChatModelTest {
    static final Path GGUF = Path.of(System.getProperty("fdkvc.shared", "../../shared"), "models", "stories260K", "stories260K.gguf");
    static FdkvcSpringChatModel model;

    @BeforeAll
    static void load() {
        model = FdkvcSpringChatModel.builder().modelPath(GGUF).cacheBudget(64).maxTokens(12).threads(1).build();
    }

    @AfterAll
    static void close() {
        model.close();
    }

    @Test
    void callAndStreamGiveTheSameGreedyReply() {
        Prompt p = new Prompt(List.of(new UserMessage("Once upon a time")));
        ChatResponse r = model.call(p);
        String text = r.getResult().getOutput().getText();
        assertThat(text).isNotBlank();
        assertThat(r.getResult().getMetadata().getFinishReason()).isIn("STOP", "LENGTH");
        assertThat(r.getMetadata().getUsage().getCompletionTokens()).isBetween(1, 12);
        assertThat(r.getMetadata().getModel()).isEqualTo("stories260K.gguf");
        List<ChatResponse> chunks = model.stream(new Prompt(List.of(new UserMessage("Once upon a time")))).collectList().block();
        StringBuilder streamed = new StringBuilder();
        for (ChatResponse c : chunks) streamed.append(c.getResult().getOutput().getText());
        assertThat(streamed.toString()).isEqualTo(text);
        assertThat(chunks.getLast().getResult().getMetadata().getFinishReason()).isEqualTo(r.getResult().getMetadata().getFinishReason());
    }

    @Test
    void aChatClientWithTheMemoryKeepsOneCachePerConversation() {
        FdkvcSpringChatMemory memory = FdkvcSpringChatMemory.builder().maxTokens(40).policy("window")
                .tokenCountEstimator(new Fakes.WordCount()).embeddingModel(new Fakes.WordEmbeddings()).build();
        try (FdkvcSpringChatModel m = FdkvcSpringChatModel.builder().modelPath(GGUF).cacheBudget(64).maxTokens(8).threads(1).build()) {
            ChatClient client = ChatClient.builder(m)
                    .defaultAdvisors(MessageChatMemoryAdvisor.builder(memory).build(), new FdkvcConversationAdvisor()).build();
            for (String id : List.of("lily", "tom")) {
                String reply = client.prompt().user("Once upon a time").advisors(a -> a.param(ChatMemory.CONVERSATION_ID, id)).call().content();
                assertThat(reply).isNotBlank();
                assertThat(memory.transcript(id)).hasSize(2).last().extracting(x -> x.getText()).isEqualTo(reply);
            }
            assertThat(m.conversations()).isEqualTo(2);
            // the second turn of one conversation continues its cache: still two conversations
            client.prompt().user("Lily was happy").advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "lily")).call().content();
            assertThat(m.conversations()).isEqualTo(2);
            assertThat(memory.transcript("lily")).hasSize(4);
            // keyed by the advisor's id: a prompt for lily that does not extend her transcript replaces her cache
            Prompt unrelated = new Prompt(List.of(new UserMessage("Tom had a dog")),
                    ToolCallingChatOptions.builder().toolContext(Map.of(ChatMemory.CONVERSATION_ID, "lily")).build());
            m.call(unrelated);
            assertThat(m.conversations()).isEqualTo(2);
            m.call(new Prompt(List.of(new UserMessage("Tom had a dog")))); // no id, extends nothing: a conversation of its own
            assertThat(m.conversations()).isEqualTo(3);
        }
    }

    @Test
    void unsupportedOptionsAndBadInputAreRefused() {
        assertThatThrownBy(() -> model.call(new Prompt(List.of(new UserMessage("hi")), ChatOptions.builder().topK(5).build())))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("topK");
        assertThatThrownBy(() -> model.call(new Prompt(List.of(new UserMessage("hi")), ChatOptions.builder().temperature(-1.0).build())))
                .isInstanceOf(InputException.class).hasMessageStartingWith("temperature:");
        assertThatThrownBy(() -> model.call(new Prompt(List.of(new UserMessage("hi"), new SystemMessage("late")))))
                .isInstanceOf(InputException.class).hasMessageStartingWith("messages[1]: a system message is only allowed first");
        assertThatThrownBy(() -> FdkvcSpringChatModel.builder().modelPath(Path.of("nope.gguf")).build())
                .isInstanceOf(InputException.class).hasMessageStartingWith("modelPath:");
        assertThatThrownBy(() -> FdkvcSpringChatModel.builder().modelPath(GGUF).cacheBudget(0).build()).hasMessageStartingWith("cacheBudget:");
        // runs of one role are one turn
        assertThat(FdkvcSpringChatModel.toEngine(List.of(new UserMessage("a"), new UserMessage("b"), new AssistantMessage("c"))))
                .extracting(x -> x.content()).containsExactly("a\n\nb", "c");
    }
}
