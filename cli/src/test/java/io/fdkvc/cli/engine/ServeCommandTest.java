package io.fdkvc.cli.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import io.fdkvc.cli.CliRun;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.tokenizer.Tokenizers;
import io.fdkvc.server.ChatServer;
import io.fdkvc.server.ModelFingerprint;
import io.fdkvc.server.ServedModel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Real OpenAI clients (LangChain4j's {@code OpenAiChatModel} and {@code OpenAiStreamingChatModel})
 * hold a multi-turn conversation with the server on stories260K; their greedy replies equal
 * {@code fdkvc chat}'s for the same turns and the same cache options.
 */
class ServeCommandTest {
    static final List<String> TURNS = List.of("Once upon a time there was a cat.", "What did the cat do?",
            "Tell me about the dog.", "Where did they go?");
    static final String[] CACHE = {"--policy", "fdkvc", "--budget", "48", "--max-turn-tokens", "32", "--positions", "cache"};

    static Path model() {
        return GenerateCommandTest.dir().resolve("stories260K.gguf");
    }

    /** {@code fdkvc chat}'s replies, one per turn. */
    static List<String> chatReplies(int maxTokens) {
        List<String> args = new ArrayList<>(List.of("chat", "--model", model().toString(), "--temperature", "0", "--threads", "1",
                "--max-tokens", Integer.toString(maxTokens)));
        args.addAll(List.of(CACHE));
        CliRun r = CliRun.withStdin(String.join("\n", TURNS) + "\n", args.toArray(String[]::new));
        assertThat(r.status()).as(r.err()).isZero();
        List<String> replies = List.of(r.out().split("\n", -1));
        assertThat(replies).hasSize(TURNS.size() + 1); // each reply ends with a newline
        return replies.subList(0, TURNS.size());
    }

    record Served(ChatServer server, LoadedModel model, Llama llama) implements AutoCloseable {
        String baseUrl() {
            return "http://127.0.0.1:" + server.port() + "/v1";
        }

        @Override
        public void close() {
            server.close();
            llama.close();
            model.close();
        }
    }

    /** The server as {@code fdkvc serve} builds it, with the same cache options as the chat above. */
    static Served serve() throws Exception {
        LoadedModel m = GgufModelLoader.load(model());
        Llama llama = new Llama(m.config(), m.weights(), 64, 1);
        ChatFormat format = new ChatFormat(ChatTemplate.detect(null, m.vocabulary()), Tokenizers.from(m.vocabulary()));
        ChatServer server = new ChatServer(new ChatServer.Options("127.0.0.1", 0, 8, null, null, 4, 8, 256, 1 << 20, 0f, 1f), System.err);
        server.ready(new ServedModel("stories260K", ModelFingerprint.of(model(), m.config()), llama, format,
                PolicyRegistry.spec("fdkvc", 48), 32, PositionMode.CACHE));
        return new Served(server, m, llama);
    }

    @Test
    void langChain4jClientsGetTheRepliesOfFdkvcChat() throws Exception {
        List<String> expected = chatReplies(24);
        try (Served s = serve()) {
            OpenAiChatModel blocking = OpenAiChatModel.builder().baseUrl(s.baseUrl()).apiKey("unused").modelName("stories260K")
                    .temperature(0.0).maxTokens(24).build();
            List<ChatMessage> history = new ArrayList<>();
            List<String> replies = new ArrayList<>();
            for (String turn : TURNS) {
                history.add(UserMessage.from(turn));
                ChatResponse r = blocking.chat(history);
                history.add(r.aiMessage());
                replies.add(r.aiMessage().text());
            }
            assertThat(replies).isEqualTo(expected);

            OpenAiStreamingChatModel streaming = OpenAiStreamingChatModel.builder().baseUrl(s.baseUrl()).apiKey("unused")
                    .modelName("stories260K").temperature(0.0).maxTokens(24).build();
            List<ChatMessage> h2 = new ArrayList<>();
            List<String> streamed = new ArrayList<>();
            for (String turn : TURNS) {
                h2.add(UserMessage.from(turn));
                StringBuilder partial = new StringBuilder();
                CompletableFuture<ChatResponse> done = new CompletableFuture<>();
                streaming.chat(h2, new StreamingChatResponseHandler() {
                    @Override
                    public void onPartialResponse(String text) {
                        partial.append(text);
                    }

                    @Override
                    public void onCompleteResponse(ChatResponse response) {
                        done.complete(response);
                    }

                    @Override
                    public void onError(Throwable error) {
                        done.completeExceptionally(error);
                    }
                });
                ChatResponse r = done.get(60, TimeUnit.SECONDS);
                assertThat(r.aiMessage().text()).isEqualTo(partial.toString());
                assertThat(r.tokenUsage().outputTokenCount()).isPositive();
                h2.add(AiMessage.from(r.aiMessage().text()));
                streamed.add(partial.toString());
            }
            assertThat(streamed).isEqualTo(expected);
        }
    }

    @Test
    void badServeOptionsExitWithStatus2() {
        CliRun r = CliRun.of("serve", "--model", model().toString(), "--port", "70000");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("--port must be in 0..65535");
        r = CliRun.of("serve", "--model", model().toString(), "--parallel", "9", "--batch", "8");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("--parallel must be <= --batch");
        r = CliRun.of("serve", "--model", model().toString(), "--sessions", "0");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("--sessions must be >= 1");
        for (String w : new String[] {"-1", "NaN", "3601"}) {
            r = CliRun.of("serve", "--model", model().toString(), "--warmup", w);
            assertThat(r.status()).as("--warmup %s", w).isEqualTo(2);
            assertThat(r.err()).contains("--warmup must be between 0 and 3600 seconds, got");
        }
    }
}
