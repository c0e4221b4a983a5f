package io.fdkvc.examples;

import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.tokenizer.Tokenizers;
import io.fdkvc.langchain4j.FdkvcChatMemory;
import io.fdkvc.server.ChatServer;
import io.fdkvc.server.ModelFingerprint;
import io.fdkvc.server.ServedModel;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The example's second set-up: the same {@link FdkvcChatMemory} in front of LangChain4j's own
 * {@code OpenAiChatModel}, talking to a real {@code fdkvc serve} on a loopback port. The memory
 * chooses the prompt; the server keeps its own bounded cache per conversation.
 */
class TinyAssistantOverServeTest {

    @Test
    void theMemoryWorksInFrontOfAnOpenAiCompatibleEndpoint() throws Exception {
        Path gguf = Path.of(System.getProperty("fdkvc.shared", "../../shared"), "models", "stories260K", "stories260K.gguf");
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        try (LoadedModel m = GgufModelLoader.load(gguf);
             Llama llama = new Llama(m.config(), m.weights(), 32, 1);
             ChatServer server = new ChatServer(new ChatServer.Options("127.0.0.1", 0, 4, null, null, 1, 0, 32, 64 * 1024, 0f, 1f),
                     new PrintStream(log, true, StandardCharsets.UTF_8))) {
            ChatFormat format = new ChatFormat(ChatTemplate.select(null, m.vocabulary(), w -> { }), Tokenizers.from(m.vocabulary()));
            server.ready(new ServedModel("stories260K", ModelFingerprint.of(gguf, m.config()), llama, format,
                    PolicyRegistry.spec("fdkvc", 64), 64, PositionMode.CACHE));

            InMemoryChatMemoryStore store = new InMemoryChatMemoryStore();
            FdkvcChatMemory memory = TinyAssistant.memory(store);
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            TinyAssistant.run(TinyAssistant.openAiCompatible("http://127.0.0.1:" + server.port() + "/v1"), memory,
                    new PrintStream(bytes, true, StandardCharsets.UTF_8));

            TinyAssistantTest.assertAnsweredWithinBudget(memory, bytes.toString(StandardCharsets.UTF_8));
        }
    }
}
