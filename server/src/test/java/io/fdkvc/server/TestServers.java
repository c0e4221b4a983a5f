package io.fdkvc.server;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;

/** Servers on stories260K for the tests, on ephemeral loopback ports. */
final class TestServers {
    private TestServers() {}

    static Path model() {
        return Path.of(System.getProperty("fdkvc.shared", "../../shared"), "models", "stories260K", "stories260K.gguf");
    }

    /** A started server with its model; closing it closes both. */
    record Running(ChatServer server, LoadedModel loaded, Llama llama) implements AutoCloseable {
        String base() {
            return "http://127.0.0.1:" + server.port();
        }

        @Override
        public void close() {
            server.close();
            llama.close();
            loaded.close();
        }
    }

    static ChatServer.Options options(int sessions, Path dir, String apiKey, int parallel, int queue) {
        return new ChatServer.Options("127.0.0.1", 0, sessions, dir, apiKey, parallel, queue, 32, 64 * 1024, 0f, 1f);
    }

    /** {@code o} with other store mode, fault bounds and body limit. */
    static ChatServer.Options with(ChatServer.Options o, String storeMode, int maxPromptTokens, int readTimeoutSeconds, int maxConnections,
                                   int maxBodyBytes) {
        return new ChatServer.Options(o.host(), o.port(), o.sessions(), o.sessionDir(), o.apiKey(), o.parallel(), o.queue(),
                o.defaultMaxTokens(), maxBodyBytes, o.defaultTemperature(), o.defaultTopP(), storeMode, o.maxBudget(), maxPromptTokens,
                readTimeoutSeconds, maxConnections);
    }

    /** {@code o} over the shared session store at {@code url} with leases of {@code leaseSeconds}. */
    static ChatServer.Options shared(ChatServer.Options o, String url, int leaseSeconds) {
        return new ChatServer.Options(o.host(), o.port(), o.sessions(), null, o.apiKey(), o.parallel(), o.queue(), o.defaultMaxTokens(),
                o.maxBodyBytes(), o.defaultTemperature(), o.defaultTopP(), o.storeMode(), o.maxBudget(), o.maxPromptTokens(),
                o.readTimeoutSeconds(), o.maxConnections(), url, leaseSeconds);
    }

    static Running start(ChatServer.Options o, String policy, int budget, int maxTurnTokens) throws IOException {
        return start(o, policy, budget, maxTurnTokens, System.err);
    }

    static Running start(ChatServer.Options o, String policy, int budget, int maxTurnTokens, PrintStream log) throws IOException {
        return start(o, policy, budget, maxTurnTokens, log, null);
    }

    /** A server whose session store is {@code store} applied to the model (null: the options' directory, if any). */
    static Running start(ChatServer.Options o, String policy, int budget, int maxTurnTokens, PrintStream log,
                         java.util.function.Function<ServedModel, SessionStore> store) throws IOException {
        LoadedModel m = GgufModelLoader.load(model());
        Llama llama = new Llama(m.config(), m.weights(), 32, 1);
        ChatFormat format = new ChatFormat(ChatTemplate.detect(null, m.vocabulary()), Tokenizers.from(m.vocabulary()));
        ServedModel sm = new ServedModel("stories260K", ModelFingerprint.of(model(), m.config()), llama, format,
                PolicyRegistry.spec(policy, budget), maxTurnTokens, PositionMode.CACHE);
        ChatServer s = new ChatServer(o, log);
        if (store == null) s.ready(sm);
        else s.ready(sm, store.apply(sm));
        return new Running(s, m, llama);
    }
}
