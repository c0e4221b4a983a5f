package io.fdkvc.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.exception.UnsupportedFeatureException;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.output.FinishReason;
import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.chat.Conversation;
import io.fdkvc.engine.chat.GenerationParams;
import io.fdkvc.engine.chat.Reply;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The chat models end to end on the real stories260K model, against the engine's own conversation. */
class FdkvcChatModelTest {
    static final Path MODEL = Path.of(System.getProperty("fdkvc.shared", "../../shared"), "models", "stories260K", "stories260K.gguf");
    static final List<String> USERS = List.of("Once upon a time there was a cat.", "What did the cat do?", "Tell me about the dog.");
    static final int MAX = 24;

    static FdkvcChatModel model;
    static FdkvcStreamingChatModel streaming;

    @BeforeAll
    static void load() {
        model = FdkvcChatModel.builder().modelPath(MODEL).policy("fdkvc").cacheBudget(48).maxTurnTokens(32).threads(1)
                .maxOutputTokens(MAX).build();
        streaming = FdkvcStreamingChatModel.builder().modelPath(MODEL).policy("fdkvc").cacheBudget(48).maxTurnTokens(32).threads(1)
                .maxOutputTokens(MAX).build();
    }

    @AfterAll
    static void close() {
        model.close();
        streaming.close();
    }

    /** The same turns straight on the engine: a Conversation over the same policy, greedy. */
    static List<Reply> engineReplies(String system) {
        try (LoadedModel m = GgufModelLoader.load(MODEL); Llama llama = new Llama(m.config(), m.weights(), 64, 1)) {
            ChatFormat format = new ChatFormat(ChatTemplate.detect(null, m.vocabulary()), Tokenizers.from(m.vocabulary()));
            Conversation c = new Conversation(new Session(llama, llama.newCache(PolicyRegistry.spec("fdkvc", 48), 32, PositionMode.DEFAULT)), format);
            List<Message> messages = new ArrayList<>();
            if (system != null) messages.add(Message.system(system));
            List<Reply> replies = new ArrayList<>();
            for (String u : USERS) {
                messages.add(Message.user(u));
                Reply r = c.begin(messages, GenerationParams.greedy(MAX), null);
                r.runToEnd();
                r.commit();
                replies.add(r);
                messages.add(Message.assistant(r.content()));
            }
            return replies;
        }
    }

    @Test
    void greedyRepliesEqualTheEnginesAndContinueOneConversation() {
        List<Reply> expected = engineReplies("You tell stories.");
        try (FdkvcChatModel model = FdkvcChatModel.builder().modelPath(MODEL).policy("fdkvc").cacheBudget(48).maxTurnTokens(32)
                .threads(1).maxOutputTokens(MAX).build()) {
            converse(model, expected);
            assertThat(model.conversations()).as("three requests, one conversation").isEqualTo(1);
        }
        assertThat(expected.get(1).cachedTokens()).isPositive();
        assertThat(expected).allMatch(r -> !r.content().isBlank());
    }

    private static void converse(FdkvcChatModel model, List<Reply> expected) {
        List<ChatMessage> messages = new ArrayList<>(List.of(SystemMessage.from("You tell stories.")));
        for (int u = 0; u < USERS.size(); u++) {
            messages.add(UserMessage.from(USERS.get(u)));
            ChatResponse r = model.chat(messages);
            Reply e = expected.get(u);
            assertThat(r.aiMessage().text()).isEqualTo(e.content());
            assertThat(r.tokenUsage().inputTokenCount()).isEqualTo(e.promptTokens());
            assertThat(r.tokenUsage().outputTokenCount()).isEqualTo(e.completionTokens());
            assertThat(r.finishReason()).isEqualTo(e.finishReason() == io.fdkvc.engine.chat.FinishReason.STOP ? FinishReason.STOP : FinishReason.LENGTH);
            messages.add(r.aiMessage());
        }
    }

    @Test
    void streamingEmitsTheSameTextThenTheResponseWithUsageAndFinishReason() {
        List<Reply> expected = engineReplies(null);
        List<ChatMessage> messages = new ArrayList<>();
        for (int u = 0; u < USERS.size(); u++) {
            messages.add(UserMessage.from(USERS.get(u)));
            StringBuilder partial = new StringBuilder();
            List<String> pieces = new ArrayList<>();
            AtomicReference<ChatResponse> done = new AtomicReference<>();
            streaming.chat(messages, new StreamingChatResponseHandler() {
                @Override
                public void onPartialResponse(String text) {
                    pieces.add(text);
                    partial.append(text);
                }

                @Override
                public void onCompleteResponse(ChatResponse response) {
                    done.set(response);
                }

                @Override
                public void onError(Throwable error) {
                    throw new AssertionError(error);
                }
            });
            ChatResponse r = done.get();
            assertThat(r).isNotNull();
            assertThat(partial.toString()).isEqualTo(r.aiMessage().text()).isEqualTo(expected.get(u).content());
            assertThat(pieces).allMatch(p -> !p.isEmpty());
            assertThat(r.tokenUsage().inputTokenCount()).isEqualTo(expected.get(u).promptTokens());
            assertThat(r.tokenUsage().outputTokenCount()).isEqualTo(expected.get(u).completionTokens());
            assertThat(r.finishReason()).isIn(FinishReason.STOP, FinishReason.LENGTH);
            messages.add(r.aiMessage());
        }
    }

    @Test
    void samplingOptionsComeFromTheRequest() {
        ChatRequest five = ChatRequest.builder().messages(UserMessage.from("Once upon a time")).maxOutputTokens(5).build();
        ChatResponse r = model.chat(five);
        assertThat(r.finishReason()).isEqualTo(FinishReason.LENGTH);
        assertThat(r.tokenUsage().outputTokenCount()).isEqualTo(5);

        // a stop sequence cuts the reply where it appears (the text up to it, as the engine's chat does)
        ChatResponse full = model.chat(ChatRequest.builder().messages(UserMessage.from("Tell me a story.")).build());
        String text = full.aiMessage().text();
        String[] words = text.split(" ");
        assertThat(words.length).isGreaterThan(3);
        ChatResponse cut = model.chat(ChatRequest.builder().messages(UserMessage.from("Tell me a story.")).stopSequences(List.of(words[2])).build());
        assertThat(cut.finishReason()).isEqualTo(FinishReason.STOP);
        assertThat(text).startsWith(cut.aiMessage().text().strip());
        assertThat(cut.aiMessage().text().length()).isLessThan(text.length());

        // sampling: the builder's seed makes a tempered draw reproducible
        ChatRequest hot = ChatRequest.builder().messages(UserMessage.from("The dog")).temperature(1.0).topP(0.9).maxOutputTokens(16).build();
        assertThat(model.chat(hot).aiMessage().text()).isEqualTo(model.chat(hot).aiMessage().text());

        assertThatThrownBy(() -> model.chat(ChatRequest.builder().messages(UserMessage.from("x")).topK(5).build()))
                .isInstanceOf(UnsupportedFeatureException.class).hasMessageContaining("topK");
        assertThatThrownBy(() -> model.chat(ChatRequest.builder().messages(UserMessage.from("x")).temperature(-1.0).build()))
                .isInstanceOf(InputException.class).hasMessageContaining("temperature");
    }

    @Test
    void messagesAreMappedToTurns() {
        List<Message> m = LocalChatEngine.toEngine(List.of(SystemMessage.from("s"), UserMessage.from("a"), UserMessage.from("b"),
                AiMessage.from("c"), UserMessage.from("d")));
        assertThat(m).containsExactly(Message.system("s"), Message.user("a\n\nb"), Message.assistant("c"), Message.user("d"));
        assertThatThrownBy(() -> LocalChatEngine.toEngine(List.of(UserMessage.from("a"), SystemMessage.from("s"))))
                .isInstanceOf(InputException.class).hasMessageContaining("messages[1]: a system message is only allowed first");
        assertThatThrownBy(() -> model.chat(AiMessage.from("hello"), UserMessage.from("hi")))
                .isInstanceOf(InputException.class).hasMessageContaining("messages[0].role: expected user");
    }

    @Test
    void badOptionsAreRefusedNamingThem() {
        assertThatThrownBy(() -> FdkvcChatModel.builder().build()).hasMessageStartingWith("modelPath:");
        assertThatThrownBy(() -> FdkvcChatModel.builder().modelPath(Path.of("nope.gguf")).build()).hasMessageContaining("nope.gguf is not a file");
        assertThatThrownBy(() -> FdkvcChatModel.builder().modelPath(MODEL).cacheBudget(0).build()).hasMessageStartingWith("cacheBudget:");
        assertThatThrownBy(() -> FdkvcChatModel.builder().modelPath(MODEL).policy("nope").build()).hasMessageContaining("unknown policy 'nope'");
        assertThatThrownBy(() -> FdkvcChatModel.builder().modelPath(MODEL).topP(0).build()).hasMessageContaining("top_p");
    }
}
