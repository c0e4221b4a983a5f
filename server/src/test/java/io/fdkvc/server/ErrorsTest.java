package io.fdkvc.server;

import static io.fdkvc.server.Http.chat;
import static io.fdkvc.server.Http.get;
import static io.fdkvc.server.Http.json;
import static io.fdkvc.server.Http.post;
import static io.fdkvc.server.Http.send;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** Every error status in OpenAI's error shape, over raw HTTP. */
class ErrorsTest {
    static TestServers.Running server;
    static String chatUrl;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start(TestServers.options(4, null, null, 1, 0), "fdkvc", 64, 32);
        chatUrl = server.base() + "/v1/chat/completions";
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** The body is OpenAI's error object with the given status, type, param and a message containing {@code text}. */
    static JsonNode assertError(HttpResponse<String> r, int status, String param, String text) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
        JsonNode e = json(r).get("error");
        assertThat(e).as(r.body()).isNotNull();
        assertThat(e.has("message") && e.has("type") && e.has("param") && e.has("code")).as(r.body()).isTrue();
        if (param == null) assertThat(e.get("param").isNull()).as(r.body()).isTrue();
        else assertThat(e.get("param").asString()).isEqualTo(param);
        assertThat(e.get("message").asString()).contains(text);
        return e;
    }

    @Test
    void malformedRequestsGet400NamingTheField() {
        assertError(post(chatUrl, "{\"messages\": [ {"), 400, null, "not valid JSON");
        assertError(post(chatUrl, "[1, 2]"), 400, null, "JSON object");
        assertError(post(chatUrl, "{}"), 400, "messages", "'messages' is required");
        assertError(post(chatUrl, "{\"messages\": []}"), 400, "messages", "non-empty");
        assertError(post(chatUrl, chat(4, false, "wizard", "hi")), 400, "messages[0].role", "unknown role 'wizard'");
        assertError(post(chatUrl, chat(4, false, "assistant", "hi")), 400, "messages", "messages[0].role: expected user");
        assertError(post(chatUrl, chat(4, false, "user", "a", "assistant", "b")), 400, "messages", "last message must be from the user");
        assertError(post(chatUrl, "{\"messages\":[{\"role\":\"user\"}]}"), 400, "messages[0].content", "required");
        String one = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
        assertError(post(chatUrl, "{" + one + ",\"temperature\":2.5}"), 400, "temperature", "[0.0, 2.0]");
        assertError(post(chatUrl, "{" + one + ",\"temperature\":\"hot\"}"), 400, "temperature", "number");
        assertError(post(chatUrl, "{" + one + ",\"top_p\":0}"), 400, "top_p", "top_p");
        assertError(post(chatUrl, "{" + one + ",\"max_tokens\":0}"), 400, "max_tokens", "1..");
        assertError(post(chatUrl, "{" + one + ",\"max_completion_tokens\":1.5}"), 400, "max_completion_tokens", "integer");
        assertError(post(chatUrl, "{" + one + ",\"n\":2}"), 400, "n", "must be 1");
        assertError(post(chatUrl, "{" + one + ",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}"), 400, "stop", "up to 4");
        assertError(post(chatUrl, "{" + one + ",\"stream\":\"yes\"}"), 400, "stream", "true or false");
        assertError(post(chatUrl, "{" + one + "}", "X-Session-Id", "../../etc/passwd"), 400, "X-Session-Id", "1-128 characters");
    }

    @Test
    void errorsQuoteOnlyAShortSanitisedExcerpt() {
        String role = "<script>" + "x".repeat(5000) + "\u0000\"";
        JsonNode e = assertError(post(chatUrl, chat(4, false, role, "hi")), 400, "messages[0].role", "unknown role");
        String msg = e.get("message").asString();
        assertThat(msg.length()).isLessThan(ApiError.EXCERPT + 100);
        assertThat(msg).doesNotContain("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").doesNotContain("\u0000");
        assertThat(ApiError.excerpt("a\u0000b\"c\nd")).isEqualTo("'a?bc?d'");
    }

    @Test
    void unknownRoutesMethodsAndSessions() {
        assertError(get(server.base() + "/v1/nothing"), 404, null, "");
        assertError(get(server.base() + "/v1/sessions/no-such-session"), 404, null, "no session 'no-such-session'");
        assertError(send("DELETE", server.base() + "/v1/sessions/no-such-session", null), 404, null, "no session");
        assertError(send("PUT", server.base() + "/v1/models", "{}"), 405, null, "");
        assertError(get(chatUrl), 405, null, "");
    }

    @Test
    void bodiesOverTheLimitGet413() {
        String big = chat(4, false, "user", "y".repeat(70 * 1024));
        assertError(post(chatUrl, big), 413, null, "too large");
    }

    /**
     * With one request in progress and no queue, another gets 429 with Retry-After. The model
     * thread is held so that the first request is certainly still in progress.
     */
    @Test
    void aFullQueueGets429WithRetryAfter() throws Exception {
        server.server().scheduler().pause(true);
        CompletableFuture<HttpResponse<String>> first;
        try {
            first = Http.CLIENT.sendAsync(HttpRequest.newBuilder(URI.create(chatUrl))
                    .POST(HttpRequest.BodyPublishers.ofString(chat(4, false, "user", "first"))).build(), HttpResponse.BodyHandlers.ofString());
            // wait until the first request holds the only slot
            while (server.server().scheduler().queueDepth() + server.server().scheduler().activeCount() == 0) Thread.sleep(5);
            HttpResponse<String> second = post(chatUrl, chat(4, false, "user", "second"));
            assertError(second, 429, null, "busy");
            assertThat(second.headers().firstValue("Retry-After")).hasValue("1");
        } finally {
            server.server().scheduler().pause(false);
        }
        assertThat(first.get().statusCode()).isEqualTo(200);
    }

    @Test
    void healthModelsAndMetrics() {
        assertThat(get(server.base() + "/health").statusCode()).isEqualTo(200);
        JsonNode models = json(get(server.base() + "/v1/models"));
        assertThat(models.get("data").get(0).get("id").asString()).isEqualTo("stories260K");
        post(chatUrl, chat(3, false, "user", "metrics please"));
        String m = get(server.base() + "/metrics").body();
        assertThat(m).contains("fdkvc_requests_total{status=\"200\"}", "fdkvc_generated_tokens_total", "fdkvc_live_sessions",
                "fdkvc_cache_entries", "fdkvc_evictions_total", "fdkvc_kv_bytes", "fdkvc_queue_depth",
                "fdkvc_generated_tokens_per_second", "fdkvc_stored_sessions", "fdkvc_prompt_tokens_total");
    }

    /** Before the model is ready: /health and chat answer 503. */
    @Test
    void loadingServerAnswers503() {
        try (ChatServer loading = new ChatServer(TestServers.options(1, null, null, 1, 0), System.err)) {
            String base = "http://127.0.0.1:" + loading.port();
            assertThat(get(base + "/health").statusCode()).isEqualTo(503);
            assertError(post(base + "/v1/chat/completions", chat(4, false, "user", "hi")), 503, null, "loading");
        }
    }

    @Test
    void apiKeyIsRequiredWhenSet() throws Exception {
        try (var s = TestServers.start(TestServers.options(1, null, "s3cret", 1, 0), "window", 32, 16)) {
            String url = s.base() + "/v1/chat/completions";
            assertError(post(url, chat(2, false, "user", "hi")), 401, null, "API key");
            assertError(post(url, chat(2, false, "user", "hi"), "Authorization", "Bearer wrong"), 401, null, "API key");
            assertError(get(s.base() + "/v1/models"), 401, null, "API key");
            assertThat(post(url, chat(2, false, "user", "hi"), "Authorization", "Bearer s3cret").statusCode()).isEqualTo(200);
            assertThat(get(s.base() + "/health").statusCode()).isEqualTo(200);
        }
    }

    static String readAll(InputStream in) throws java.io.IOException {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
}
