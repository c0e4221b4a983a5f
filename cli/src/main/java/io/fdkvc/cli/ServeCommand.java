package io.fdkvc.cli;

import io.fdkvc.cli.engine.EngineOptions;
import io.fdkvc.cli.engine.ModelOptions;
import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.session.JitWarmup;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.tokenizer.Tokenizers;
import io.fdkvc.server.ChatServer;
import io.fdkvc.server.ModelFingerprint;
import io.fdkvc.server.ServedModel;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * An OpenAI-compatible chat server: every conversation runs on its own bounded cache chosen by
 * the policy options; see {@link ChatServer}. Listens at once ({@code /health} says 503 until the
 * model is loaded) and runs until interrupted.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Serve the model over OpenAI's chat completions API (POST /v1/chat/completions, streaming too),",
                "one bounded, policy-managed KV cache per conversation. Also GET /v1/models, /health, /metrics,",
                "GET /v1/sessions[/ID[/cache]], DELETE /v1/sessions/ID, GET /v1/policies, and a chat page at GET /.",
                "Sampling options and the policy are the defaults for requests that omit them."})
public final class ServeCommand implements Callable<Integer> {
    @Option(names = "--host", paramLabel = "ADDR", defaultValue = "127.0.0.1", description = "address to bind; default: ${DEFAULT-VALUE}")
    String host;

    @Option(names = "--port", paramLabel = "N", defaultValue = "8080", description = "port (0: any free one); default: ${DEFAULT-VALUE}")
    int port;

    @Mixin
    TemplateOption template;

    @Option(names = "--sessions", paramLabel = "N", defaultValue = "64",
            description = "conversations held in memory; beyond, the least recently used go to --session-dir (or are forgotten); default: ${DEFAULT-VALUE}")
    int sessions;

    @Option(names = "--session-dir", paramLabel = "DIR",
            description = "store every conversation here after each turn (atomic writes) and restore them on restart")
    Path sessionDir;

    @Option(names = "--session-store", paramLabel = "URL",
            description = {"store every conversation in Redis or Valkey, shared with other replicas: redis://HOST:PORT[/DB] or",
                    "rediss://HOST:PORT[/DB] (TLS, the certificate checked against the CA certificates in the PEM file named by",
                    "FDKVC_REDIS_CA, or the JVM's trust store); the password comes from the environment variable",
                    "FDKVC_REDIS_PASSWORD (and an ACL user from FDKVC_REDIS_USER), never from the command line; not with --session-dir"})
    String sessionStore;

    @Option(names = "--session-lease", paramLabel = "SECONDS", defaultValue = "" + ChatServer.Options.DEFAULT_LEASE_SECONDS,
            description = {"with --session-store: how long a replica's lease on a conversation lives unless renewed (renewed while",
                    "a request runs; after a replica dies its conversations move on after this); default: ${DEFAULT-VALUE}"})
    int sessionLease;

    @Option(names = "--session-store-mode", paramLabel = "MODE", defaultValue = "strict",
            description = {"what a failed session store write does: strict (the turn fails with 507 or 503, the session stays",
                    "at its stored turn) or best-effort (the turn stands, the session stays in memory, /health says degraded);",
                    "default: ${DEFAULT-VALUE}"})
    String sessionStoreMode;

    @Option(names = "--api-key", paramLabel = "KEY", description = "require 'Authorization: Bearer KEY' (all endpoints but /health)")
    String apiKey;

    @Option(names = "--parallel", paramLabel = "N", defaultValue = "4",
            description = "requests processed at once, their decode steps batched (at most --batch); default: ${DEFAULT-VALUE}")
    int parallel;

    @Option(names = "--queue", paramLabel = "N", defaultValue = "64",
            description = "requests waiting beyond --parallel; more get 429 with Retry-After; default: ${DEFAULT-VALUE}")
    int queue;

    @Option(names = "--max-tokens", paramLabel = "N", defaultValue = "256",
            description = "reply limit for requests without max_tokens; default: ${DEFAULT-VALUE}")
    int maxTokens;

    @Option(names = "--max-body", paramLabel = "BYTES", defaultValue = "4194304",
            description = "largest request body (413 beyond); default: ${DEFAULT-VALUE}")
    int maxBody;

    @Option(names = "--max-prompt-tokens", paramLabel = "N", defaultValue = "" + ChatServer.Options.DEFAULT_MAX_PROMPT_TOKENS,
            description = "most prompt tokens one request may add (those not already cached; 400 beyond), so that one request"
                    + " cannot hold the model for minutes; default: ${DEFAULT-VALUE}")
    int maxPromptTokens;

    @Option(names = "--read-timeout", paramLabel = "SECONDS", defaultValue = "" + ChatServer.Options.DEFAULT_READ_TIMEOUT_SECONDS,
            description = "longest silence while a request's headers or body arrive (408 for a body) or a write is blocked;"
                    + " default: ${DEFAULT-VALUE}")
    int readTimeout;

    @Option(names = "--max-connections", paramLabel = "N", defaultValue = "" + ChatServer.Options.DEFAULT_MAX_CONNECTIONS,
            description = "connections held at once (more wait to be accepted); an eighth of them, at least 16, may be sending"
                    + " a request body at once (more get 503); default: ${DEFAULT-VALUE}")
    int maxConnections;

    @Option(names = "--max-budget", paramLabel = "N", defaultValue = "" + ChatServer.Options.DEFAULT_MAX_BUDGET,
            description = {"largest budget a request may choose for its conversation (\"fdkvc\": {\"policy\", \"budget\", \"params\"}",
                    "in the request body); must be >= --budget; default: ${DEFAULT-VALUE}"})
    int maxBudget;

    @Option(names = "--warmup", paramLabel = "SECONDS", defaultValue = "5",
            description = {"before it reports ready, run throwaway conversations for this long so that the JIT has compiled",
                    "the forward pass, batched decoding and the policy (a fresh JVM's first request is several times slower);",
                    "0: none; default: ${DEFAULT-VALUE}"})
    double warmup;

    @Mixin
    ModelOptions options;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
        EngineOptions engine = options.engine;
        PolicySpec ps = engine.policy.spec();
        template.check();
        if (parallel > engine.batch) throw new InputException("--parallel must be <= --batch (" + engine.batch + "), got " + parallel);
        if (!(warmup >= 0 && warmup <= 3600)) throw new InputException("--warmup must be between 0 and 3600 seconds, got " + warmup);
        ChatServer.Options o = new ChatServer.Options(host, port, sessions, sessionDir, apiKey, parallel, queue, maxTokens, maxBody,
                options.sampling.temperature, options.sampling.topP, sessionStoreMode, maxBudget, maxPromptTokens, readTimeout,
                maxConnections, sessionStore, sessionLease);
        o.checkDefaultPolicy(ps);
        PrintWriter out = spec.commandLine().getOut();
        CountDownLatch stop = new CountDownLatch(1);
        try (ChatServer server = startServer(o)) {
            out.println("fdkvc serve: listening on http://" + host + ":" + server.port() + " (loading " + options.model + ")");
            out.flush();
            try (LoadedModel m = options.load();
                 // requests choose their own policies, growing ones too: any position up to the trained context
                 Llama llama = engine.newModel(m, m.config().contextLength())) {
                // the model's own Jinja template when it renders, else a built-in format, as in chat
                PrintWriter err = spec.commandLine().getErr();
                ChatTemplate tpl = template.select(m.vocabulary(), err, "serve");
                ChatFormat format = new ChatFormat(tpl, Tokenizers.from(m.vocabulary()));
                String id = options.model.getFileName().toString();
                if (warmup > 0) {
                    JitWarmup.Result w = JitWarmup.run(llama, ps, engine.maxTurnTokens, engine.positionMode(), parallel,
                            Duration.ofNanos((long) (warmup * 1e9)));
                    out.printf(Locale.ROOT, "fdkvc serve: warm-up: %d throwaway conversations, turns: %d, tokens: %d, %.1f s%n",
                            w.conversations(), w.turns(), w.tokens(), w.nanos() / 1e9);
                    out.flush();
                }
                server.ready(new ServedModel(id, ModelFingerprint.of(options.model, m.config()), llama, format, ps,
                        engine.maxTurnTokens, engine.positionMode()));
                out.println("fdkvc serve: ready: " + id + ", policy " + ps + ", template " + tpl.id()
                        + (server.storeWhere() == null ? "" : ", sessions in " + server.storeWhere()));
                String scope = m.config().blocks().policyScope();
                if (scope != null) out.println("fdkvc serve: " + scope);
                String longRope = m.config().longRopeChoice(m.config().contextLength());
                if (longRope != null) out.println("fdkvc serve: " + longRope);
                out.flush();
                Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
                stop.await();
            }
        }
        return 0;
    }

    private static ChatServer startServer(ChatServer.Options o) {
        try {
            return new ChatServer(o, System.err);
        } catch (RuntimeException e) {
            // Jetty reports a taken port as a nested BindException
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof java.net.BindException) {
                    throw new InputException("--port " + o.port() + " on " + o.host() + ": cannot bind (" + t.getMessage() + ")");
                }
            }
            throw e;
        }
    }
}
