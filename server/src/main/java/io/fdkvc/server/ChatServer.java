package io.fdkvc.server;

import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.chat.FinishReason;
import io.fdkvc.server.ui.WebUi;
import io.fdkvc.engine.chat.Reply;
import io.javalin.Javalin;
import io.javalin.compression.CompressionStrategy;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.javalin.http.HttpResponseException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.UUID;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code fdkvc serve}: an OpenAI-compatible chat server whose conversations each run on a
 * bounded, policy-managed KV cache. HTTP is Javalin 7 (Jetty 12) on virtual threads: each request
 * blocks its own virtual thread while the {@link Scheduler}'s single model thread does the work.
 *
 * <p>The server listens as soon as it is constructed ({@code /health} answers 503) and serves
 * chat once {@link #ready} hands it the loaded model.
 */
public final class ChatServer implements AutoCloseable {
    /**
     * @param host             address to bind (127.0.0.1 by default in the CLI)
     * @param port             0 for an ephemeral port
     * @param sessions         sessions held in memory at most (LRU beyond, to disk with a session dir)
     * @param sessionDir       where sessions are stored after every turn, or null
     * @param apiKey           required bearer token on every endpoint but /health, or null
     * @param parallel         requests processed at once (their decode steps batched)
     * @param queue            requests waiting beyond those; more get 429
     * @param defaultMaxTokens reply limit when a request gives none
     * @param maxBodyBytes     larger request bodies get 413
     * @param defaultTemperature temperature for requests without one
     * @param defaultTopP      top_p for requests without one
     * @param storeMode        "strict" (a turn whose session cannot be stored fails) or "best-effort"
     * @param maxBudget        largest budget a request may choose for its conversation ({@link PolicyChoice})
     * @param maxPromptTokens  a request whose new prompt tokens (those not already cached) exceed this gets 400
     * @param readTimeoutSeconds longest silence while a request's headers or body arrive (and while a write is blocked)
     * @param maxConnections   connections held at once; beyond, new ones wait to be accepted
     * @param sessionStore     a store shared with other servers ({@code redis://HOST:PORT[/DB]}, {@code rediss://}), or null
     * @param leaseSeconds     how long a shared store's session lease lives unless renewed (a dead server's expire after it)
     */
    public record Options(String host, int port, int sessions, Path sessionDir, String apiKey, int parallel, int queue,
                          int defaultMaxTokens, int maxBodyBytes, float defaultTemperature, float defaultTopP, String storeMode,
                          int maxBudget, int maxPromptTokens, int readTimeoutSeconds, int maxConnections, String sessionStore,
                          int leaseSeconds) {
        /** {@code --max-budget}'s default. */
        public static final int DEFAULT_MAX_BUDGET = 4096;
        public static final int DEFAULT_MAX_PROMPT_TOKENS = 8192;
        public static final int DEFAULT_READ_TIMEOUT_SECONDS = 30;
        public static final int DEFAULT_MAX_CONNECTIONS = 1024;
        public static final int DEFAULT_LEASE_SECONDS = 10;

        /** Options without a shared session store. */
        public Options(String host, int port, int sessions, Path sessionDir, String apiKey, int parallel, int queue,
                       int defaultMaxTokens, int maxBodyBytes, float defaultTemperature, float defaultTopP, String storeMode,
                       int maxBudget, int maxPromptTokens, int readTimeoutSeconds, int maxConnections) {
            this(host, port, sessions, sessionDir, apiKey, parallel, queue, defaultMaxTokens, maxBodyBytes, defaultTemperature,
                    defaultTopP, storeMode, maxBudget, maxPromptTokens, readTimeoutSeconds, maxConnections, null, DEFAULT_LEASE_SECONDS);
        }

        /** Options with the defaults of the fault-handling bounds (strict store mode) and of {@code --max-budget}. */
        public Options(String host, int port, int sessions, Path sessionDir, String apiKey, int parallel, int queue,
                       int defaultMaxTokens, int maxBodyBytes, float defaultTemperature, float defaultTopP) {
            this(host, port, sessions, sessionDir, apiKey, parallel, queue, defaultMaxTokens, maxBodyBytes, defaultTemperature,
                    defaultTopP, "strict", DEFAULT_MAX_BUDGET);
        }

        /** Options with the default {@code --max-budget}. */
        public Options(String host, int port, int sessions, Path sessionDir, String apiKey, int parallel, int queue,
                       int defaultMaxTokens, int maxBodyBytes, float defaultTemperature, float defaultTopP, String storeMode) {
            this(host, port, sessions, sessionDir, apiKey, parallel, queue, defaultMaxTokens, maxBodyBytes, defaultTemperature,
                    defaultTopP, storeMode, DEFAULT_MAX_BUDGET);
        }

        /** Options with the default connection and prompt bounds. */
        public Options(String host, int port, int sessions, Path sessionDir, String apiKey, int parallel, int queue,
                       int defaultMaxTokens, int maxBodyBytes, float defaultTemperature, float defaultTopP, String storeMode,
                       int maxBudget) {
            this(host, port, sessions, sessionDir, apiKey, parallel, queue, defaultMaxTokens, maxBodyBytes, defaultTemperature,
                    defaultTopP, storeMode, maxBudget, DEFAULT_MAX_PROMPT_TOKENS, DEFAULT_READ_TIMEOUT_SECONDS, DEFAULT_MAX_CONNECTIONS);
        }

        public Options {
            SessionManager.StoreMode.parse(storeMode);
            Limits.check("--max-budget", maxBudget, 1, Limits.MAX_BUDGET);
            Limits.check("--max-prompt-tokens", maxPromptTokens, 1, Limits.MAX_NEW_TOKENS);
            Limits.check("--read-timeout", readTimeoutSeconds, 1, 3600);
            Limits.check("--max-connections", maxConnections, 16, 1 << 20);
            Limits.check("--session-lease", leaseSeconds, 1, 3600);
            if (sessionDir != null && sessionStore != null) {
                throw new InputException("--session-dir and --session-store name two stores; give one");
            }
            if (sessionStore != null) RedisStore.Address.parse(sessionStore);
            if (port < 0 || port > 65535) throw new InputException("--port must be in 0..65535, got " + port);
            if (sessions < 1) throw new InputException("--sessions must be >= 1, got " + sessions);
            if (parallel < 1) throw new InputException("--parallel must be >= 1, got " + parallel);
            if (queue < 0) throw new InputException("--queue must be >= 0, got " + queue);
            if (defaultMaxTokens < 1) throw new InputException("--max-tokens must be >= 1, got " + defaultMaxTokens);
            if (maxBodyBytes < 1024) throw new InputException("--max-body must be >= 1024 bytes, got " + maxBodyBytes);
            if (apiKey != null && apiKey.isBlank()) throw new InputException("--api-key must not be blank");
            if (!(defaultTemperature >= 0 && defaultTemperature <= 2)) {
                throw new InputException("--temperature must be in [0, 2] for the server, got " + defaultTemperature);
            }
            if (!(defaultTopP > 0 && defaultTopP <= 1)) throw new InputException("--top-p must be in (0, 1], got " + defaultTopP);
        }

        /** Refuses a server policy whose budget is beyond what its requests may ask ({@code --max-budget}). */
        public void checkDefaultPolicy(PolicySpec p) {
            if (!p.kind().unbounded() && p.budget() > maxBudget) {
                throw new InputException("--budget " + p.budget() + " exceeds --max-budget " + maxBudget);
            }
        }
    }

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final Options options;
    private final PrintStream log;
    private final Metrics metrics = new Metrics();
    private final Javalin app;
    private final byte[] apiKey;
    private final java.util.concurrent.Semaphore bodies; // request bodies being received at once
    private final int maxBodiesReading;
    private volatile ServedModel model;
    private volatile SessionManager sessions;
    private volatile Scheduler scheduler;

    public ChatServer(Options options, PrintStream log) {
        this.options = options;
        this.log = log;
        this.apiKey = options.apiKey() == null ? null : ("Bearer " + options.apiKey()).getBytes(StandardCharsets.UTF_8);
        this.maxBodiesReading = bodiesReading(options.maxConnections());
        this.bodies = new java.util.concurrent.Semaphore(maxBodiesReading);
        this.app = Javalin.create(cfg -> {
            cfg.concurrency.useVirtualThreads = true;
            cfg.http.maxRequestSize = options.maxBodyBytes();
            cfg.http.prefer405over404 = true;
            cfg.http.compressionStrategy = CompressionStrategy.NONE;
            cfg.startup.showJavalinBanner = false;
            // Jetty's idle timeout bounds the silence while headers or a body arrive, or while a write
            // is blocked; a request waiting in the queue or being prefilled has no read or write
            // pending, and Jetty does not time it out
            cfg.jetty.modifyHttpConfiguration(hc -> hc.setIdleTimeout(options.readTimeoutSeconds() * 1000L));
            cfg.jetty.modifyServer(server -> server.addBean(new org.eclipse.jetty.server.NetworkConnectionLimit(options.maxConnections(), server)));
            cfg.requestLogger.http((ctx, ms) -> metrics.request(Boolean.TRUE.equals(ctx.attribute(GONE)) ? Metrics.CLIENT_GONE : ctx.statusCode()));
            cfg.routes.addHttpHandler(HandlerType.BEFORE, "/*", this::authorize);
            cfg.routes.get("/health", this::health);
            cfg.routes.get("/metrics", this::metrics);
            cfg.routes.get("/v1/models", this::models);
            cfg.routes.get("/v1/policies", this::policies);
            cfg.routes.get("/", WebUi::page);
            cfg.routes.get("/ui/{asset}", WebUi::asset);
            cfg.routes.post("/v1/chat/completions", this::chat);
            cfg.routes.get("/v1/sessions", this::listSessions);
            cfg.routes.get("/v1/sessions/{id}", this::getSession);
            cfg.routes.get("/v1/sessions/{id}/cache", this::sessionCache);
            cfg.routes.delete("/v1/sessions/{id}", this::deleteSession);
            cfg.routes.exception(ApiError.class, (e, ctx) -> error(ctx, e));
            cfg.routes.exception(InputException.class, (e, ctx) -> error(ctx, ApiError.invalid(null, e.getMessage())));
            cfg.routes.exception(HttpResponseException.class, (e, ctx) -> error(ctx, fromJavalin(e.getStatus())));
            cfg.routes.exception(Exception.class, (e, ctx) -> {
                log.println("fdkvc serve: internal error: " + e);
                error(ctx, new ApiError(500, "server_error", null, "internal_error", "internal error"));
            });
            cfg.routes.error(404, "*", ctx -> {
                if (!ctx.res().isCommitted() && !isError(ctx)) error(ctx, ApiError.notFound("no route " + ctx.method() + " " + ApiError.excerpt(ctx.path())));
            });
            cfg.routes.error(405, "*", ctx -> {
                if (!isError(ctx)) error(ctx, new ApiError(405, "invalid_request_error", null, "method_not_allowed",
                        "method " + ctx.method() + " is not allowed on " + ApiError.excerpt(ctx.path())));
            });
        });
        app.start(options.host(), options.port());
    }

    /** Set on a request whose client left before its answer: counted as {@link Metrics#CLIENT_GONE}, not by its status. */
    private static final String GONE = "fdkvc.gone";

    /** Request bodies received at once: an eighth of the connections, at least 16. */
    static int bodiesReading(int maxConnections) {
        return Math.max(16, maxConnections / 8);
    }

    private static boolean isError(Context ctx) {
        return Boolean.TRUE.equals(ctx.attribute("fdkvc.error"));
    }

    private static ApiError fromJavalin(int status) {
        return switch (status) {
            case 413 -> new ApiError(413, "invalid_request_error", null, "request_too_large", "request body too large");
            case 404 -> ApiError.notFound("not found");
            case 405 -> new ApiError(405, "invalid_request_error", null, "method_not_allowed", "method not allowed");
            default -> new ApiError(status, status >= 500 ? "server_error" : "invalid_request_error", null, null, "HTTP " + status);
        };
    }

    /** The served model, once ready (package-private for tests). */
    ServedModel servedModel() {
        return model;
    }

    /** The model thread (package-private for tests). */
    Scheduler scheduler() {
        return scheduler;
    }

    /** The bound port (the ephemeral one when 0 was asked). */
    public int port() {
        return app.port();
    }

    /** Starts serving chat with {@code m}: opens the session store and starts the model thread. */
    public void ready(ServedModel m) {
        SessionStore store = null;
        if (options.sessionStore() != null) store = SessionManager.redis(m, options.sessionStore(), options.leaseSeconds());
        else if (options.sessionDir() != null) store = SessionManager.directory(m, options.sessionDir());
        ready(m, store);
    }

    /** Where the session store is (a directory or a Redis URL without credentials), or null; for the ready line. */
    public String storeWhere() {
        SessionManager sm = sessions;
        return sm == null ? null : sm.storeWhere();
    }

    /** Starts serving chat with {@code m} over {@code store} (null: none); tests pass a store that fails on demand. */
    void ready(ServedModel m, SessionStore store) {
        options.checkDefaultPolicy(m.policy());
        SessionManager sm = new SessionManager(m, store, SessionManager.StoreMode.parse(options.storeMode()), options.sessions(), log,
                metrics);
        scheduler = new Scheduler(m, options.parallel(), options.queue(), sm.persistent(), metrics);
        sessions = sm;
        model = m;
    }

    // ---- handlers -------------------------------------------------------------------------------

    private void authorize(Context ctx) {
        // the page and its assets load without the key: the page asks for it
        if (apiKey == null || ctx.path().equals("/health") || WebUi.isPublic(ctx.path())) return;
        String h = ctx.header("Authorization");
        if (h == null || !MessageDigest.isEqual(h.getBytes(StandardCharsets.UTF_8), apiKey)) throw ApiError.unauthorized();
    }

    private ServedModel requireModel() {
        ServedModel m = model;
        if (m == null) throw ApiError.loading();
        return m;
    }

    /**
     * 503 while loading; with a session store that cannot take writes, 503 in strict mode (every
     * turn would fail) and "degraded" in best-effort mode, which also reports sessions whose
     * latest turn is not stored.
     */
    private void health(Context ctx) {
        SessionManager sm = sessions;
        ObjectNode root = JSON.createObjectNode();
        if (model == null || sm == null) {
            ctx.status(503);
            root.put("status", "loading");
        } else {
            String problem = sm.storeProblem();
            int unstored = sm.unstoredCount();
            if (problem != null && sm.mode() == SessionManager.StoreMode.STRICT) {
                ctx.status(503);
                root.put("status", "store_unavailable");
            } else {
                root.put("status", problem == null && unstored == 0 ? "ok" : "degraded");
            }
            if (problem != null) root.put("store", problem);
            if (unstored > 0) root.put("unstoredSessions", unstored);
        }
        json(ctx, root);
    }

    private void metrics(Context ctx) {
        SessionManager sm = sessions;
        Scheduler sc = scheduler;
        long[] cache = sm == null ? new long[2] : sm.liveCacheFigures();
        Metrics.Gauges g = new Metrics.Gauges(sm == null ? 0 : sm.liveCount(), sm == null ? 0 : sm.storedCount(), cache[0], cache[1],
                sc == null ? 0 : sc.queueDepth(), sc == null ? 0 : sc.activeCount(), sm == null ? 0 : sm.unstoredCount(),
                maxBodiesReading - bodies.availablePermits());
        ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(metrics.render(g));
    }

    private void models(Context ctx) {
        ServedModel m = requireModel();
        ObjectNode root = JSON.createObjectNode();
        root.put("object", "list");
        ObjectNode e = root.putArray("data").addObject();
        e.put("id", m.id());
        e.put("object", "model");
        e.put("created", 0);
        e.put("owned_by", "fdkvc");
        json(ctx, root);
    }

    private void chat(Context ctx) throws InterruptedException, IOException {
        ServedModel m = requireModel();
        String length = ctx.header("Content-Length");
        if (length != null) {
            try {
                long declared = Long.parseLong(length.strip());
                if (declared > options.maxBodyBytes()) {
                    discardBody(ctx, declared);
                    throw fromJavalin(413);
                }
            } catch (NumberFormatException e) {
                throw ApiError.invalid(null, "bad Content-Length");
            }
        }
        byte[] body = readBody(ctx);
        if (body == null) return; // refused and closed
        if (body.length > options.maxBodyBytes()) throw fromJavalin(413);
        ChatRequest req = ChatRequest.parse(JSON, body, options.defaultMaxTokens(), options.defaultTemperature(),
                options.defaultTopP(), UUID.randomUUID().getLeastSignificantBits());
        try {
            m.format().validate(req.messages());
        } catch (InputException e) {
            throw ApiError.invalid("messages", e.getMessage());
        }
        PolicySpec choice = PolicyChoice.parse(req.fdkvc(), m.policy(), options.maxBudget());
        SessionManager.Entry entry = sessions.acquire(ctx.header("X-Session-Id"), req.messages(), choice);
        Job job = new Job(entry);
        sessions.hold(entry, job);
        ClientWatch watch = null;
        try {
            try {
                job.reply = entry.conversation.begin(req.messages(), req.params(), job::text);
            } catch (InputException e) {
                throw ApiError.invalid("messages", e.getMessage());
            }
            int fresh = job.reply.prefillRemaining();
            if (fresh > options.maxPromptTokens()) {
                job.reply.rollback();
                throw new ApiError(400, "invalid_request_error", "messages", "context_length_exceeded", "the messages add " + fresh
                        + " prompt tokens to feed, more than --max-prompt-tokens " + options.maxPromptTokens());
            }
            if (!scheduler.submit(job)) {
                job.reply.rollback();
                ctx.header("Retry-After", "1");
                throw ApiError.busy("the server is busy (" + options.parallel() + " requests in progress and " + options.queue()
                        + " waiting); retry later");
            }
            // a client that closes its connection from now on cancels the reply at the next chunk or step
            watch = ClientWatch.start(ctx, job::abandon);
            ctx.header("X-Session-Id", entry.id);
            if (req.stream()) stream(ctx, m, job, req);
            else complete(ctx, m, job);
        } finally {
            if (watch != null) watch.stop();
            sessions.release(entry, job);
        }
    }

    /**
     * Answers {@code e} and closes the connection at once. Jetty would otherwise shut only its
     * output and keep the connection until the client closes it or the read timeout passes, which
     * is what a slow sender must not be able to count on.
     */
    private static void refuseAndClose(Context ctx, ApiError e) {
        ctx.attribute("fdkvc.error", true);
        ctx.status(e.status()).contentType("application/json");
        ctx.header("Connection", "close");
        ctx.header("Retry-After", "1");
        byte[] b = JSON.writeValueAsBytes(errorJson(e));
        try {
            ctx.res().setContentLength(b.length);
            ctx.res().getOutputStream().write(b);
            ctx.res().flushBuffer();
        } catch (IOException | RuntimeException ignored) {
            // the client is gone already
        }
        ClientWatch.close(ctx);
    }

    /**
     * Receives the body: at most {@link #bodiesReading} at once (more get 503 and their connection
     * closed, so slow senders cannot hold every descriptor), each bounded by the read timeout (408).
     * A client that closes its connection mid-body is counted as gone, not as a server error.
     */
    /**
     * Reads and drops an oversized body of at most twice {@code --max-body} before the 413
     * goes out: a server that answers and closes while the client is still sending leaves unread
     * bytes in its socket, the close then resets the connection, and the client sees a broken pipe
     * instead of the 413. A larger body (or one while every body slot is busy) is not read: the
     * connection is closed after the answer.
     */
    private void discardBody(Context ctx, long declared) {
        if (declared > 2L * options.maxBodyBytes() || !bodies.tryAcquire()) {
            ctx.header("Connection", "close");
            return;
        }
        try (var in = ctx.req().getInputStream()) {
            byte[] sink = new byte[8192];
            while (in.read(sink) >= 0) { /* dropped */ }
        } catch (IOException e) {
            ctx.header("Connection", "close"); // the client left or stalled: nothing more to read
        } finally {
            bodies.release();
        }
    }

    private byte[] readBody(Context ctx) {
        if (!bodies.tryAcquire()) {
            metrics.bodyRefused();
            refuseAndClose(ctx, new ApiError(503, "server_error", null, "too_many_uploads", maxBodiesReading
                    + " request bodies are being received already; retry later"));
            return null;
        }
        try {
            return ctx.bodyAsBytes();
        } catch (HttpResponseException e) {
            throw e;
        } catch (Exception e) { // Javalin passes Jetty's IOExceptions through unchecked
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof java.util.concurrent.TimeoutException) {
                    metrics.bodyTimedOut();
                    ctx.header("Connection", "close");
                    throw new ApiError(408, "invalid_request_error", null, "request_timeout", "the request body did not arrive within "
                            + options.readTimeoutSeconds() + " s (--read-timeout)");
                }
            }
            metrics.bodyIncomplete();
            ctx.attribute(GONE, true);
            log.println("fdkvc serve: a client closed its connection before sending the whole request body");
            throw new ApiError(400, "invalid_request_error", null, "incomplete_body", "the request body ended early");
        } finally {
            bodies.release();
        }
    }

    /** Waits for the whole reply and answers one JSON object. */
    private void complete(Context ctx, ServedModel m, Job job) throws InterruptedException {
        while (job.events.take() != Job.END) {
            // text arrives piece by piece; the reply keeps the whole content
        }
        if (job.gone && !job.committed) {
            ctx.attribute(GONE, true);
            return; // nobody to answer
        }
        failIfFailed(job);
        sessions.commit(job.session, job); // durable, and the session free, before the answer goes out
        Reply r = job.reply;
        metrics.turn(r.promptTokens(), r.cachedTokens(), r.completionTokens(), job.evicted);
        ObjectNode root = JSON.createObjectNode();
        root.put("id", "chatcmpl-" + UUID.randomUUID());
        root.put("object", "chat.completion");
        root.put("created", System.currentTimeMillis() / 1000);
        root.put("model", m.id());
        ObjectNode choice = root.putArray("choices").addObject();
        choice.put("index", 0);
        ObjectNode msg = choice.putObject("message");
        msg.put("role", "assistant");
        msg.put("content", r.content());
        choice.putNull("logprobs");
        choice.put("finish_reason", finish(r));
        usage(root, r);
        json(ctx, root);
    }

    private void failIfFailed(Job job) {
        if (job.failure != null || !job.committed) {
            if (job.failure != null) log.println("fdkvc serve: request failed: " + job.failure);
            throw new ApiError(500, "server_error", null, "generation_failed", "the reply could not be generated; the session is unchanged");
        }
    }

    private static String finish(Reply r) {
        FinishReason f = r.finishReason();
        return (f == null ? FinishReason.STOP : f).id();
    }

    private static void usage(ObjectNode root, Reply r) {
        ObjectNode u = root.putObject("usage");
        u.put("prompt_tokens", r.promptTokens());
        u.put("completion_tokens", r.completionTokens());
        u.put("total_tokens", r.promptTokens() + r.completionTokens());
        u.putObject("prompt_tokens_details").put("cached_tokens", r.cachedTokens());
    }

    /**
     * Server-Sent Events: a first chunk with the role, one chunk per released piece of text, a
     * last chunk with the finish reason (and usage when asked), then {@code data: [DONE]}. A
     * write that fails means the client left: the reply is cancelled and rolled back.
     */
    private void stream(Context ctx, ServedModel m, Job job, ChatRequest req) throws InterruptedException, IOException {
        ctx.status(200);
        ctx.contentType("text/event-stream; charset=utf-8");
        ctx.header("Cache-Control", "no-cache");
        String id = "chatcmpl-" + UUID.randomUUID();
        long created = System.currentTimeMillis() / 1000;
        OutputStream out = ctx.res().getOutputStream();
        boolean gone = false;
        ObjectNode first = chunk(id, created, m);
        ObjectNode d0 = ((ObjectNode) first.get("choices").get(0)).putObject("delta");
        d0.put("role", "assistant");
        d0.put("content", "");
        gone = !send(out, first);
        Object ev;
        while ((ev = job.events.take()) != Job.END) {
            if (gone) continue;
            ObjectNode c = chunk(id, created, m);
            ((ObjectNode) c.get("choices").get(0)).putObject("delta").put("content", (String) ev);
            if (!send(out, c)) {
                gone = true;
                job.abandon();
            }
        }
        gone |= job.gone;
        if (gone) ctx.attribute(GONE, true);
        ApiError failed = null;
        if (job.failure != null || !job.committed) {
            if (gone) return;
            log.println("fdkvc serve: request failed: " + job.failure);
            failed = new ApiError(500, "server_error", null, "generation_failed", "the reply could not be generated; the session is unchanged");
        } else {
            try {
                sessions.commit(job.session, job); // durable, and the session free, before [DONE]
            } catch (ApiError e) {
                failed = e;
            }
        }
        if (gone) return;
        if (failed != null) {
            // the status line went out with the first chunk: the failure is the stream's last event
            send(out, errorJson(failed));
            sendRaw(out, "data: [DONE]\n\n");
            return;
        }
        Reply r = job.reply;
        metrics.turn(r.promptTokens(), r.cachedTokens(), r.completionTokens(), job.evicted);
        ObjectNode last = chunk(id, created, m);
        ObjectNode ch = (ObjectNode) last.get("choices").get(0);
        ch.putObject("delta");
        ch.put("finish_reason", finish(r));
        if (req.includeUsage()) usage(last, r);
        send(out, last);
        sendRaw(out, "data: [DONE]\n\n");
    }

    private static ObjectNode chunk(String id, long created, ServedModel m) {
        ObjectNode c = JSON.createObjectNode();
        c.put("id", id);
        c.put("object", "chat.completion.chunk");
        c.put("created", created);
        c.put("model", m.id());
        ObjectNode choice = c.putArray("choices").addObject();
        choice.put("index", 0);
        choice.putNull("finish_reason");
        return c;
    }

    private static boolean send(OutputStream out, ObjectNode event) {
        return sendRaw(out, "data: " + JSON.writeValueAsString(event) + "\n\n");
    }

    private static boolean sendRaw(OutputStream out, String s) {
        try {
            out.write(s.getBytes(StandardCharsets.UTF_8));
            out.flush();
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** Most sessions one page of {@code GET /v1/sessions} lists, and the default. */
    static final int MAX_LIST_LIMIT = 1000, DEFAULT_LIST_LIMIT = 100;

    /** {@code GET /v1/sessions[?after=ID&limit=N]}: one page by id, with OpenAI's list fields ({@code has_more}, {@code last_id}). */
    private void listSessions(Context ctx) {
        ServedModel m = requireModel();
        int limit = queryInt(ctx, "limit", DEFAULT_LIST_LIMIT, 1, MAX_LIST_LIMIT);
        String after = ctx.queryParam("after");
        if (after != null && after.isEmpty()) after = null;
        SessionManager.Listing page = sessions.list(after, limit);
        ObjectNode root = JSON.createObjectNode();
        root.put("object", "list");
        ArrayNode data = root.putArray("data");
        for (SessionManager.Info e : page.items()) data.add(sessionJson(m, e));
        if (page.items().isEmpty()) {
            root.putNull("first_id");
            root.putNull("last_id");
        } else {
            root.put("first_id", page.items().getFirst().id());
            root.put("last_id", page.items().getLast().id());
        }
        root.put("has_more", page.more());
        json(ctx, root);
    }

    private void getSession(Context ctx) {
        ServedModel m = requireModel();
        json(ctx, sessionJson(m, sessions.describe(ctx.pathParam("id"))));
    }

    private void policies(Context ctx) {
        json(ctx, PolicyCatalog.of(requireModel().policy(), options.maxBudget()));
    }

    private void sessionCache(Context ctx) {
        requireModel();
        int from = queryInt(ctx, "from", 0, 0, Integer.MAX_VALUE);
        int limit = queryInt(ctx, "limit", CacheView.MAX_LIMIT, 1, CacheView.MAX_LIMIT);
        json(ctx, sessions.cacheView(ctx.pathParam("id"), from, limit, queryBool(ctx, "layers"), queryBool(ctx, "messages")));
    }

    private static boolean queryBool(Context ctx, String name) {
        String v = ctx.queryParam(name);
        if (v == null || v.equals("false")) return false;
        if (v.equals("true")) return true;
        throw ApiError.invalid(name, "'" + name + "' must be true or false");
    }

    private static int queryInt(Context ctx, String name, int dflt, int min, int max) {
        String v = ctx.queryParam(name);
        if (v == null) return dflt;
        try {
            int k = Integer.parseInt(v.strip());
            if (k >= min && k <= max) return k;
        } catch (NumberFormatException e) {
            // refused below
        }
        throw ApiError.invalid(name, "'" + name + "' must be an integer in " + min + ".." + max + ", got " + ApiError.excerpt(v));
    }

    private void deleteSession(Context ctx) {
        requireModel();
        String id = ctx.pathParam("id");
        sessions.delete(id);
        ObjectNode root = JSON.createObjectNode();
        root.put("id", id);
        root.put("object", "session");
        root.put("deleted", true);
        json(ctx, root);
    }

    private static ObjectNode sessionJson(ServedModel m, SessionManager.Info e) {
        ObjectNode o = JSON.createObjectNode();
        o.put("id", e.id());
        o.put("object", "session");
        o.put("live", e.live());
        o.put("busy", e.busy());
        o.put("turns", e.turns());
        o.put("messages", e.messages());
        o.put("tokens", e.tokens());
        o.put("largestStreamEntries", e.largest());
        o.put("totalEntries", e.totalEntries());
        o.put("evictions", e.evictions());
        o.put("kvBytes", e.kvBytes());
        if (e.policy() == null) {
            // a stored value whose figures cannot be read: listed with the reason
            o.putNull("policy");
            o.putNull("policySpec");
            o.putNull("budget");
            o.put("problem", e.problem());
        } else {
            o.put("policy", e.policy().name());
            o.put("policySpec", e.policy().toString());
            o.put("budget", e.policy().budget());
        }
        o.put("maxTurnTokens", m.maxTurnTokens());
        // the policy manages the global layers; sliding-window layers keep their own window
        io.fdkvc.engine.model.Blocks blocks = m.llama().config().blocks();
        o.put("globalLayers", blocks.layers().size() - blocks.slidingLayers());
        o.put("slidingLayers", blocks.slidingLayers());
        o.put("slidingWindow", blocks.maxWindow());
        return o;
    }

    private static void json(Context ctx, ObjectNode root) {
        ctx.contentType("application/json").result(JSON.writeValueAsString(root));
    }

    private static void error(Context ctx, ApiError e) {
        ctx.attribute("fdkvc.error", true);
        if (e.retryAfterSeconds() > 0) ctx.header("Retry-After", Integer.toString(e.retryAfterSeconds()));
        ctx.status(e.status()).contentType("application/json").result(JSON.writeValueAsString(errorJson(e)));
    }

    private static ObjectNode errorJson(ApiError e) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode o = root.putObject("error");
        o.put("message", e.getMessage());
        o.put("type", e.type());
        if (e.param() == null) o.putNull("param");
        else o.put("param", e.param());
        if (e.code() == null) o.putNull("code");
        else o.put("code", e.code());
        return root;
    }

    @Override
    public void close() {
        app.stop();
        Scheduler s = scheduler;
        if (s != null) s.close();
        SessionManager sm = sessions;
        if (sm != null) sm.close();
    }
}
