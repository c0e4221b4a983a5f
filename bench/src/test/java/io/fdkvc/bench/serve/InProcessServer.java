package io.fdkvc.bench.serve;

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

/**
 * A real {@code fdkvc serve} on stories260K in this JVM (an ephemeral loopback port, FD-KVC at
 * budget 48), for the load generator to drive.
 */
record InProcessServer(ChatServer server, LoadedModel model, Llama llama) implements AutoCloseable {
    static Path modelFile() {
        return Path.of(System.getProperty("fdkvc.shared", "../../shared"), "models", "stories260K", "stories260K.gguf");
    }

    static InProcessServer start() throws Exception {
        LoadedModel m = GgufModelLoader.load(modelFile());
        Llama llama = new Llama(m.config(), m.weights(), 64, 1);
        ChatFormat format = new ChatFormat(ChatTemplate.detect(null, m.vocabulary()), Tokenizers.from(m.vocabulary()));
        ChatServer server = new ChatServer(new ChatServer.Options("127.0.0.1", 0, 8, null, null, 4, 8, 256, 1 << 20, 0f, 1f), System.err);
        server.ready(new ServedModel("stories260K", ModelFingerprint.of(modelFile(), m.config()), llama, format,
                PolicyRegistry.spec("fdkvc", 48), 32, PositionMode.CACHE));
        return new InProcessServer(server, m, llama);
    }

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
