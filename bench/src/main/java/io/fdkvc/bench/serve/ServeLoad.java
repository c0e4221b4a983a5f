package io.fdkvc.bench.serve;

import io.fdkvc.cli.engine.SyntheticModels;
import io.fdkvc.core.InputException;
import io.fdkvc.core.Untrusted;
import io.fdkvc.core.param.Check;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The load generator behind {@code scripts/serve-bench}: starts {@code fdkvc serve} as a child
 * process on a loopback ephemeral port, runs C concurrent conversations of T turns (streamed
 * requests that resend the whole history, as OpenAI clients do), and reports requests/s,
 * generated tokens/s, time to first token, latency percentiles, per-turn latency, errors and the
 * server's resident memory over the turns. Bounded: C x T requests and a wall-clock cap; it only
 * ever talks to the server it started, or, with {@code --url}, to one already running on a
 * loopback address (llama.cpp's {@code llama-server}, say: the same load against another
 * OpenAI-compatible server, for a side-by-side).
 *
 * <p>Usage: {@code ServeLoad JAR C T MAX_TOKENS MAX_SECONDS ((--model FILE | --synthetic NAME) [serve options...] | --url
 * http://127.0.0.1:PORT [--pid PID])};
 * {@code -DserveBench.warmup=N} turns of min(C, 4) unmeasured conversations first (default 30:
 * enough for the JIT to compile the paths one conversation takes on the SmolLM2 shape, so that
 * the measured turns are in steady state);
 * {@code -DserveBench.message=TEXT} the user messages' text;
 * {@code -DserveBench.historyChars=N} (default 0: the whole history) resends only the most recent
 * turns whose messages hold at most N characters together, besides the new message, as a client
 * of a server with a bounded context must (llama-server refuses a prompt longer than its slot's
 * context); the oldest user and assistant pair goes first (the script's {@code SERVE_BENCH_WARMUP},
 * {@code SERVE_BENCH_MESSAGE} and {@code SERVE_BENCH_HISTORY_CHARS});
 * {@code -DserveBench.slotPerConversation=true} adds {@code "id_slot": c} to conversation c's
 * requests, so that llama-server keeps each conversation in its own slot (its default picks a slot
 * by prompt similarity, and a client that drops the oldest turn changes the prompt's prefix every
 * turn, so conversations trade slots and are prefilled again; the script's
 * {@code SERVE_BENCH_SLOT_PER_CONVERSATION});
 * {@code -DserveBench.retrySeconds=S} sends a failed turn again (every 250 ms, for at most S seconds
 * from its first failure) instead of ending the conversation, and reports how long failed turns
 * took to be answered and whether every acknowledged turn is in the server's session (the
 * scale-out script's failover run).
 */
public final class ServeLoad {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    /**
     * What every user message says after its "Conversation c, turn k: " prefix
     * ({@code -DserveBench.message=TEXT}): the prompt tokens a turn feeds follow from it.
     */
    private static final String USER_TEXT = System.getProperty("serveBench.message",
            "tell me what the little cat did next in the garden.");

    private static final long RETRY_NANOS = (long) (Double.parseDouble(System.getProperty("serveBench.retrySeconds", "0")) * 1e9);
    /** {@code -DserveBench.historyChars}: characters of earlier turns resent with each message; 0 for all of them. */
    private static final String HISTORY_CHARS = System.getProperty("serveBench.historyChars", "0");
    /** {@code -DserveBench.slotPerConversation}: whether conversation c asks for llama-server's slot c. */
    private static final String SLOT_PER_CONVERSATION = System.getProperty("serveBench.slotPerConversation", "false");

    private ServeLoad() {}

    public static void main(String[] args) throws Exception {
        // bad input (arguments, SERVE_BENCH_* settings, a server that refuses its options): one
        // line and status 2, never a stack trace
        try {
            bench(args);
        } catch (InputException e) {
            System.err.println("serve-bench: " + Untrusted.line(e.getMessage()));
            System.exit(2);
        } catch (Exception e) {
            System.err.println("serve-bench: " + Untrusted.line(String.valueOf(e.getMessage())));
            System.exit(1);
        }
    }

    private static void bench(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("--write-synthetic")) {
            // the scale-out script's replicas all serve one model file
            SyntheticModels.writeGguf(SyntheticModels.model(args[1], null), Path.of(args[2]));
            return;
        }
        if (args.length < 6) {
            throw new InputException("usage: scripts/serve-bench C T MAX_TOKENS MAX_SECONDS "
                    + "((--model FILE | --synthetic NAME) [serve options...] | --url http://127.0.0.1:PORT [--pid PID])");
        }
        int warmup = count(System.getProperty("serveBench.warmup", "30"), "SERVE_BENCH_WARMUP", 0);
        slotPerConversation();   // a bad setting is refused before any server starts
        Path jar = Path.of(args[0]);
        int c = positive(args[1], "C"), t = positive(args[2], "T"), maxTokens = positive(args[3], "MAX_TOKENS");
        long maxSeconds = positive(args[4], "MAX_SECONDS");
        List<String> serve = new ArrayList<>(Arrays.asList(args).subList(5, args.length));
        if (serve.getFirst().equals("--url")) {
            External server = External.parse(serve);
            server.check();
            if (warmup > 0) drive(server.base(), server.pid(), Math.min(c, 4), warmup, maxTokens, maxSeconds, WARMUP_PREFIX);
            System.out.println("serve-bench: measured run starts");
            System.out.flush();
            drive(server.base(), server.pid(), c, t, maxTokens, maxSeconds, MEASURED_PREFIX).print(c, t, maxTokens, String.join(" ", serve));
            return;
        }
        Path synthetic = null;
        int s = serve.indexOf("--synthetic");
        if (s >= 0) {
            if (s + 1 >= serve.size()) throw new InputException("--synthetic needs a model name");
            SyntheticModels.Model model = SyntheticModels.model(serve.get(s + 1), null);
            synthetic = Files.createTempFile("fdkvc-serve-bench-", ".gguf");
            SyntheticModels.writeGguf(model, synthetic);
            serve.set(s, "--model");
            serve.set(s + 1, synthetic.toString());
        }
        try {
            run(jar, c, t, maxTokens, maxSeconds, warmup, serve);
        } finally {
            if (synthetic != null) Files.deleteIfExists(synthetic);
        }
    }

    private static boolean slotPerConversation() {
        return switch (SLOT_PER_CONVERSATION) {
            case "true", "1" -> true;
            case "false", "0", "" -> false;
            default -> throw new InputException("SERVE_BENCH_SLOT_PER_CONVERSATION must be 1 or 0, not '" + SLOT_PER_CONVERSATION + "'");
        };
    }

    private static int positive(String v, String what) {
        return count(v, what, 1);
    }

    /** v as a whole number >= min, or an InputException naming {@code what}. */
    private static int count(String v, String what, int min) {
        return Check.wholeNumber(what, v, min, Integer.MAX_VALUE);
    }

    static void run(Path jar, int conversations, int turns, int maxTokens, long maxSeconds, int warmup, List<String> serveArgs)
            throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx2g", "-jar", jar.toString(),
                "serve", "--host", "127.0.0.1", "--port", "0", "--parallel", Integer.toString(Math.min(conversations, 16)),
                "--sessions", Integer.toString(conversations + 1), "--queue", Integer.toString(conversations)));
        cmd.addAll(serveArgs);
        Process server = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            String base = awaitReady(server);
            // warm-up, not measured: min(C, 4) conversations of WARMUP turns (compiles the hot
            // paths, the batched decode too, so that the per-turn figures compare turns and not
            // the JIT), then their sessions are deleted
            if (warmup > 0) {
                drive(base, server.pid(), Math.min(conversations, 4), warmup, maxTokens, maxSeconds, WARMUP_PREFIX);
                deleteAll(base);
            }
            Result r = drive(base, server.pid(), conversations, turns, maxTokens, maxSeconds, MEASURED_PREFIX);
            r.print(conversations, turns, maxTokens, String.join(" ", serveArgs));
        } finally {
            server.destroy();
            server.waitFor();
        }
    }

    private static void deleteAll(String base) throws Exception {
        try (HttpClient c = HttpClient.newHttpClient()) {
            JsonNode list = JSON.readTree(c.send(HttpRequest.newBuilder(URI.create(base + "/v1/sessions")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            for (JsonNode e : list.get("data")) {
                c.send(HttpRequest.newBuilder(URI.create(base + "/v1/sessions/" + e.get("id").asString())).DELETE().build(),
                        HttpResponse.BodyHandlers.discarding());
            }
        }
    }

    private static String awaitReady(Process p) throws IOException, InterruptedException {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String base = null;
        for (String line; (line = r.readLine()) != null; ) {
            int i = line.indexOf("listening on http://127.0.0.1:");
            if (i >= 0) base = line.substring(i + "listening on ".length()).split(" ")[0];
            if (line.contains("ready:")) {
                Thread.ofVirtual().start(() -> drain(r));
                return base;
            }
        }
        // the server has printed why on the shared stderr; status 2 is its "bad input"
        int status = p.waitFor();
        if (status == 2) throw new InputException("fdkvc serve refused its options (its message is above)");
        throw new IllegalStateException("fdkvc serve ended with status " + status + " before it was ready");
    }

    private static void drain(BufferedReader r) {
        try {
            while (r.readLine() != null) {
                // keep the child's stdout flowing
            }
        } catch (IOException ignored) {
            // the server is gone
        }
    }

    /** What a run measured. */
    record Result(double seconds, int requests, int errors, long generated, long[] ttftNanos, long[] latencyNanos,
                  double[] meanLatencyByTurn, long[] rssAtTurn, List<String> errorSamples, long[] early, long[] late,
                  double[] fedByTurn) {
        void print(int c, int t, int maxTokens, String serveArgs) {
            System.out.printf(Locale.ROOT, "serve-bench: C=%d T=%d max_tokens=%d  server: %s%n", c, t, maxTokens, serveArgs);
            System.out.printf(Locale.ROOT, "requests %d in %.1f s: %.2f req/s; generated %d tokens: %.1f tok/s; errors %d%n",
                    requests, seconds, requests / seconds, generated, generated / seconds, errors);
            System.out.printf(Locale.ROOT, "time to first token ms: p50 %.0f p95 %.0f p99 %.0f%n", pct(ttftNanos, 50), pct(ttftNanos, 95),
                    pct(ttftNanos, 99));
            System.out.printf(Locale.ROOT, "latency ms: p50 %.0f p95 %.0f p99 %.0f%n", pct(latencyNanos, 50), pct(latencyNanos, 95),
                    pct(latencyNanos, 99));
            StringBuilder lat = new StringBuilder("mean latency ms by turn:");
            StringBuilder rss = new StringBuilder("server RSS MiB when every conversation finished turn:");
            for (int k : new int[] {1, 5, 10, 20, 30, 40, 50}) {
                if (k > t) continue;
                lat.append(String.format(Locale.ROOT, " t%d=%.0f", k, meanLatencyByTurn[k - 1]));
                rss.append(String.format(Locale.ROOT, " t%d=%.0f", k, rssAtTurn[k - 1] / 1048576.0));
            }
            System.out.println(lat);
            // a server named by --url without --pid: no process to read
            System.out.println(Arrays.stream(rssAtTurn).allMatch(v -> v == 0) ? "server RSS: not measured (no process id)" : rss);
            StringBuilder fed = new StringBuilder("prompt tokens fed (not cached) per request, mean by turn:");
            for (int k : new int[] {1, 2, 5, 10, 20, 30, 40, 50}) {
                if (k <= t) fed.append(String.format(Locale.ROOT, " t%d=%.1f", k, fedByTurn[k - 1]));
            }
            System.out.println(fed);
            System.out.printf(Locale.ROOT, "median latency ms, turns 3-7: %.0f (n=%d); turns %d-%d: %.0f (n=%d)%n", pct(early, 50),
                    early.length, Math.max(1, t - 4), t, pct(late, 50), late.length);
            for (String e : errorSamples) System.out.println("error: " + e);
        }

        private static double pct(long[] v, int p) {
            if (v.length == 0) return Double.NaN;
            long[] s = v.clone();
            Arrays.sort(s);
            int i = (int) Math.ceil(p / 100.0 * s.length) - 1;
            return s[Math.max(0, Math.min(s.length - 1, i))] / 1e6;
        }
    }

    /**
     * A server that is already running, named by {@code --url} (loopback only: the load generator
     * never reaches past this machine), and optionally its process id for the RSS column.
     */
    record External(String base, long pid) {
        static External parse(List<String> args) {
            if (args.size() != 2 && args.size() != 4) throw new InputException("--url takes a URL, then at most --pid PID");
            URI uri;
            try {
                uri = new URI(args.get(1));
            } catch (java.net.URISyntaxException e) {
                throw new InputException("--url: not a URL: " + Untrusted.excerpt(args.get(1)));
            }
            String host = uri.getHost() == null ? null : uri.getHost().toLowerCase(java.util.Locale.ROOT);
            if (!"http".equals(uri.getScheme()) || host == null || uri.getPort() < 1 || uri.getPort() > 65535) {
                throw new InputException("--url must be http://HOST:PORT, got " + Untrusted.excerpt(args.get(1)));
            }
            if (!host.equals("127.0.0.1") && !host.equals("localhost") && !host.equals("[::1]")) {
                throw new InputException("--url must name a loopback host (127.0.0.1, localhost or [::1]), got " + Untrusted.excerpt(host));
            }
            long pid = 0;
            if (args.size() == 4) {
                if (!args.get(2).equals("--pid")) throw new InputException("after --url URL only --pid PID is accepted, got " + Untrusted.excerpt(args.get(2)));
                pid = Check.wholeNumber("--pid", args.get(3), 1, Integer.MAX_VALUE);
            }
            String path = uri.getPath() == null ? "" : uri.getPath().replaceAll("/+$", "");
            if (path.endsWith("/v1")) path = path.substring(0, path.length() - 3);
            return new External("http://" + host + ":" + uri.getPort() + path, pid);
        }

        /** Fails with a line naming the URL unless an OpenAI-compatible server answers {@code GET /v1/models} there. */
        void check() throws InterruptedException {
            String why;
            try (HttpClient c = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
                HttpResponse<Void> r = c.send(HttpRequest.newBuilder(URI.create(base + "/v1/models")).timeout(Duration.ofSeconds(30)).build(),
                        HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) return;
                why = "HTTP " + r.statusCode();
            } catch (IOException e) {
                why = e.getClass().getSimpleName();
            }
            throw new InputException("--url: no OpenAI-compatible server answers at " + base + " (GET /v1/models: " + why + ")");
        }
    }

    /** A streamed reply as its Server-Sent Events arrive: the text, and the usage the server reports. */
    static final class StreamedReply {
        final StringBuilder text = new StringBuilder();
        long completionTokens, fed;

        /**
         * Takes one event's JSON; true when it carried reply text. OpenAI sends the usage in a last
         * chunk with no choices (and {@code "usage": null} before it); ours puts it on the chunk
         * with the finish reason: both are read. A server that does not report cached tokens
         * counts as feeding the whole prompt.
         */
        boolean accept(JsonNode ev) throws IOException {
            if (ev.has("error")) throw new IOException("stream error: " + Untrusted.excerpt(ev.get("error").toString()));
            JsonNode usage = ev.path("usage");
            if (usage.isObject()) {
                completionTokens = usage.path("completion_tokens").asLong();
                JsonNode cached = usage.path("prompt_tokens_details").path("cached_tokens");
                fed = usage.path("prompt_tokens").asLong() - (cached.isNumber() ? cached.asLong() : 0);
            }
            JsonNode content = ev.path("choices").path(0).path("delta").path("content");
            if (!content.isString() || content.asString().isEmpty()) return false;
            text.append(content.asString());
            return true;
        }
    }

    /**
     * Removes the oldest user and assistant pairs of {@code messages} until those before its last
     * (the new user message) hold at most {@code chars} characters of content.
     */
    static void dropOldestTurns(ArrayNode messages, int chars) {
        long held = 0;
        for (int i = 0; i < messages.size() - 1; i++) held += messages.get(i).get("content").asString().length();
        while (held > chars && messages.size() > 2) {
            held -= messages.get(0).get("content").asString().length() + messages.get(1).get("content").asString().length();
            messages.remove(0);
            messages.remove(0);
        }
    }

    /** How the measured conversations' user messages start, and the warm-up's (distinct, so that no server's prefix cache carries a warm-up turn into a measured one). */
    static final String MEASURED_PREFIX = "Conversation", WARMUP_PREFIX = "Warm-up conversation";

    static Result drive(String base, long pid, int conversations, int turns, int maxTokens, long maxSeconds, String prefix) throws Exception {
        int historyChars = count(HISTORY_CHARS, "SERVE_BENCH_HISTORY_CHARS", 0);
        boolean slotPerConversation = slotPerConversation();
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
        long deadline = System.nanoTime() + maxSeconds * 1_000_000_000L;
        int total = conversations * turns;
        long[] ttft = new long[total], latency = new long[total];
        long[] latencySumByTurn = new long[turns];
        long[][] latencyAt = new long[conversations][turns];   // 0: not completed
        long[] fedSumByTurn = new long[turns];
        int[] countByTurn = new int[turns];
        AtomicInteger done = new AtomicInteger(), errors = new AtomicInteger();
        AtomicLong generated = new AtomicLong();
        AtomicInteger[] finishedTurn = new AtomicInteger[turns];
        for (int k = 0; k < turns; k++) finishedTurn[k] = new AtomicInteger();
        long[] rssAtTurn = new long[turns];
        List<String> errorSamples = java.util.Collections.synchronizedList(new ArrayList<>());
        String[] sessionIds = new String[conversations];
        int[] acknowledged = new int[conversations];
        AtomicInteger retried = new AtomicInteger();
        AtomicLong longestGap = new AtomicLong();
        long t0 = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int ci = 0; ci < conversations; ci++) {
            final int conv = ci;
            threads.add(Thread.ofVirtual().start(() -> {
                ObjectNode body = JSON.createObjectNode();
                body.put("max_tokens", maxTokens);
                body.put("temperature", 0);
                body.put("stream", true);
                body.putObject("stream_options").put("include_usage", true);
                if (slotPerConversation) body.put("id_slot", conv);
                ArrayNode messages = body.putArray("messages");
                long failedSince = 0;
                for (int k = 0; k < turns && System.nanoTime() < deadline; k++) {
                    messages.addObject().put("role", "user").put("content", prefix + " " + conv + ", turn " + k + ": " + USER_TEXT);
                    if (historyChars > 0) dropOldestTurns(messages, historyChars);
                    long start = System.nanoTime();
                    try {
                        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(Math.max(1, maxSeconds)))
                                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build();
                        HttpResponse<InputStream> r;
                        try {
                            r = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
                        } catch (IOException stale) {
                            // a kept-alive connection that the server closed as the request went out
                            // (llama-server's, now and then) fails before any response; the JDK's
                            // client resends some such requests itself, not all: sent again once. Not
                            // a request that timed out, nor past the deadline: the run stays bounded.
                            if (stale instanceof java.net.http.HttpTimeoutException || System.nanoTime() >= deadline) throw stale;
                            r = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
                        }
                        if (r.statusCode() != 200) throw new IOException("HTTP " + r.statusCode() + ": " + new String(r.body().readAllBytes()));
                        StreamedReply reply = new StreamedReply();
                        long first = 0;
                        boolean finished = false;
                        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                            for (String line; (line = in.readLine()) != null; ) {
                                if (line.equals("data: [DONE]")) {
                                    finished = true;
                                    break;
                                }
                                if (!line.startsWith("data: ")) continue;
                                if (reply.accept(JSON.readTree(line.substring(6))) && first == 0) first = System.nanoTime();
                            }
                        }
                        // a stream cut before [DONE] (the replica died mid-reply) is not an answered turn:
                        // the server commits the turn before it sends [DONE]
                        if (!finished) throw new IOException("the stream ended before data: [DONE]");
                        long tokens = reply.completionTokens, fed = reply.fed;
                        long end = System.nanoTime();
                        int i = done.getAndIncrement();
                        ttft[i] = (first == 0 ? end : first) - start;
                        latency[i] = end - start;
                        synchronized (latencySumByTurn) {
                            latencySumByTurn[k] += end - start;
                            fedSumByTurn[k] += fed;
                            countByTurn[k]++;
                        }
                        latencyAt[conv][k] = end - start;
                        generated.addAndGet(tokens);
                        messages.addObject().put("role", "assistant").put("content", reply.text.toString());
                        sessionIds[conv] = r.headers().firstValue("X-Session-Id").orElse(sessionIds[conv]);
                        acknowledged[conv] = k + 1;
                        if (failedSince != 0) {
                            long gap = end - failedSince;
                            longestGap.accumulateAndGet(gap, Math::max);
                            failedSince = 0;
                        }
                    } catch (Exception e) {
                        errors.incrementAndGet();
                        if (errorSamples.size() < 5) errorSamples.add(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
                        long now = System.nanoTime();
                        if (failedSince == 0) {
                            failedSince = now;
                            if (RETRY_NANOS > 0) retried.incrementAndGet();
                        }
                        if (now - failedSince >= RETRY_NANOS || now >= deadline) return;
                        // the same turn again: the server rolled it back (or never saw it)
                        messages.remove(messages.size() - 1);
                        k--;
                        try {
                            Thread.sleep(250);
                        } catch (InterruptedException x) {
                            return;
                        }
                        continue;
                    }
                    if (finishedTurn[k].incrementAndGet() == conversations) rssAtTurn[k] = rss(pid);
                }
            }));
        }
        for (Thread th : threads) th.join();
        if (RETRY_NANOS > 0 && prefix.equals(MEASURED_PREFIX)) {
            // every acknowledged turn must be in the session the server holds for the conversation
            long stored = 0, acked = 0;
            int missing = 0;
            for (int ci = 0; ci < conversations; ci++) {
                acked += acknowledged[ci];
                if (sessionIds[ci] == null) continue;
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(base + "/v1/sessions/" + sessionIds[ci])).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    missing++;
                    continue;
                }
                stored += Math.min(acknowledged[ci], JSON.readTree(r.body()).path("turns").asInt());
            }
            System.out.printf(Locale.ROOT, "failover: %d turns failed and were sent again, the longest until answered %.0f ms;"
                    + " turns acknowledged %d, in the stored sessions %d, lost %d; sessions not found %d%n", retried.get(),
                    longestGap.get() / 1e6, acked, stored, acked - stored, missing);
        }
        client.close();
        double seconds = (System.nanoTime() - t0) / 1e9;
        int n = done.get();
        double[] meanByTurn = new double[turns];
        for (int k = 0; k < turns; k++) meanByTurn[k] = countByTurn[k] == 0 ? Double.NaN : latencySumByTurn[k] / 1e6 / countByTurn[k];
        double[] fedByTurn = new double[turns];
        for (int k = 0; k < turns; k++) fedByTurn[k] = countByTurn[k] == 0 ? Double.NaN : fedSumByTurn[k] / (double) countByTurn[k];
        return new Result(seconds, n + errors.get(), errors.get(), generated.get(), Arrays.copyOf(ttft, n), Arrays.copyOf(latency, n),
                meanByTurn, rssAtTurn, errorSamples, window(latencyAt, 3, 7), window(latencyAt, turns - 4, turns), fedByTurn);
    }

    /** Latencies of turns [from, to] (1-based) of every conversation, where completed. */
    private static long[] window(long[][] at, int from, int to) {
        List<Long> v = new ArrayList<>();
        for (long[] conv : at) {
            for (int k = Math.max(1, from); k <= Math.min(to, conv.length); k++) if (conv[k - 1] > 0) v.add(conv[k - 1]);
        }
        return v.stream().mapToLong(Long::longValue).toArray();
    }

    /** Resident set size of a process, from /proc (0 where unavailable). */
    static long rss(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        } catch (IOException | NumberFormatException ignored) {
            // not Linux, or the process is gone
        }
        return 0;
    }
}
