package io.fdkvc.server;

import static io.fdkvc.server.Http.get;
import static io.fdkvc.server.Http.json;
import static io.fdkvc.server.Http.post;
import static io.fdkvc.server.StoreFaultsTest.metric;
import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.server.SessionsTest.Client;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Clients that leave, stall or send too much, on a real server over raw loopback sockets:
 * abandoned work cancelled at the next chunk, the prompt bound, half-sent bodies bounded in
 * number and time, a body cut short counted apart from server errors, lone surrogates refused.
 */
class ConnectionFaultsTest {
    /** Longest any wait here may take before the test calls it a hang (never a speed assertion). */
    static final long HANG_MS = 120_000;

    static ChatServer.Options options(int maxPromptTokens, int readTimeout, int maxConnections, int maxBody) {
        var d = TestServers.options(8, null, null, 4, 8);
        return TestServers.with(d, "strict", maxPromptTokens, readTimeout, maxConnections, maxBody);
    }

    static void until(String what, java.util.function.BooleanSupplier done) throws InterruptedException {
        long deadline = System.currentTimeMillis() + HANG_MS;
        while (!done.getAsBoolean()) {
            if (System.currentTimeMillis() > deadline) throw new AssertionError("hang: never " + what);
            Thread.sleep(20);
        }
    }

    static Socket open(String base) throws Exception {
        URI u = URI.create(base);
        Socket s = new Socket(u.getHost(), u.getPort());
        s.setSoTimeout((int) HANG_MS);
        return s;
    }

    static byte[] request(String body, int declaredLength) {
        return ("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                + declaredLength + "\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8);
    }

    /** The status code of the response on {@code s}. */
    static int status(Socket s) throws Exception {
        InputStream in = s.getInputStream();
        StringBuilder line = new StringBuilder();
        for (int c; (c = in.read()) != -1 && c != '\n'; ) line.append((char) c);
        assertThat(line.toString()).startsWith("HTTP/1.1 ");
        return Integer.parseInt(line.substring(9, 12));
    }

    /** About 1 MB of story text as one user message. */
    static String longPrompt(boolean stream) {
        StringBuilder b = new StringBuilder(1 << 20);
        while (b.length() < 1 << 20) b.append("Once upon a time there was a little cat who liked to play in the garden. ");
        return Http.chat(8, stream, "user", b.toString());
    }

    @Test
    void anAbandonedLongPromptIsCancelledAndAShortRequestBehindItCompletes() throws Exception {
        try (var s = TestServers.start(options(1 << 24, 30, 1024, 4 << 20), "fdkvc", 40, 16)) {
            long spared = 0;
            for (boolean stream : new boolean[] {false, true}) {
                long prefilledBefore = metric(s.base(), "fdkvc_prefill_tokens_total");
                long cancelledBefore = metric(s.base(), "fdkvc_cancelled_total");
                String body = longPrompt(stream);
                try (Socket sock = open(s.base())) {
                    byte[] req = request(body, body.getBytes(StandardCharsets.UTF_8).length);
                    sock.getOutputStream().write(req);
                    sock.getOutputStream().flush();
                    // the model is working on it
                    until("prefill started", () -> metric(s.base(), "fdkvc_prefill_tokens_total") > prefilledBefore);
                } // the client leaves without reading a byte
                until("cancelled", () -> metric(s.base(), "fdkvc_cancelled_total") == cancelledBefore + 1);
                long prefilledAtCancel = metric(s.base(), "fdkvc_prefill_tokens_total");
                long sparedNow = metric(s.base(), "fdkvc_cancelled_prefill_tokens_total") - spared;
                spared += sparedNow;
                // most of the prompt was never fed
                assertThat(sparedNow).as("streamed: %s", stream).isGreaterThan(prefilledAtCancel - prefilledBefore);
                // a short request afterwards: only its own prompt is fed, the cancelled one no more
                HttpResponse<String> r = post(s.base() + "/v1/chat/completions", Http.chat(4, false, "user", "Hi."));
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                JsonNode u = json(r).get("usage");
                long fed = u.get("prompt_tokens").asLong() - u.get("prompt_tokens_details").get("cached_tokens").asLong();
                assertThat(metric(s.base(), "fdkvc_prefill_tokens_total") - prefilledAtCancel).isEqualTo(fed);
            }
            assertThat(get(s.base() + "/metrics").body()).contains("fdkvc_requests_total{status=\"499\"} 2")
                    .doesNotContain("status=\"500\"");
            // nothing of the cancelled requests stayed: no session was kept for them
            assertThat(json(get(s.base() + "/v1/sessions")).get("data").size()).isEqualTo(2); // the two short ones
        }
    }

    @Test
    void aShortRequestIsServedWhileALongPromptIsPrefilled() throws Exception {
        try (var s = TestServers.start(options(1 << 24, 30, 1024, 4 << 20), "fdkvc", 40, 16)) {
            String body = longPrompt(false);
            long before = metric(s.base(), "fdkvc_prefill_tokens_total");
            try (Socket sock = open(s.base())) {
                sock.getOutputStream().write(request(body, body.getBytes(StandardCharsets.UTF_8).length));
                sock.getOutputStream().flush();
                until("prefill started", () -> metric(s.base(), "fdkvc_prefill_tokens_total") > before);
                HttpResponse<String> r = post(s.base() + "/v1/chat/completions", Http.chat(4, false, "user", "Hi."));
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                // the long one is still being prefilled: the short one did not wait for it
                assertThat(metric(s.base(), "fdkvc_active_requests")).isEqualTo(1);
                assertThat(metric(s.base(), "fdkvc_cancelled_total")).isZero();
            }
        }
    }

    @Test
    void aPromptOverMaxPromptTokensGets400AndLeavesNothing() throws Exception {
        try (var s = TestServers.start(options(64, 30, 1024, 64 * 1024), "fdkvc", 40, 16)) {
            String url = s.base() + "/v1/chat/completions";
            String longer = "Once upon a time there was a little cat who liked to play in the garden. ".repeat(20);
            JsonNode e = ErrorsTest.assertError(post(url, Http.chat(4, false, "user", longer)), 400, "messages", "--max-prompt-tokens 64");
            assertThat(e.get("code").asString()).isEqualTo("context_length_exceeded");
            assertThat(json(get(s.base() + "/v1/sessions")).get("data").size()).isZero();
            // a conversation continued turn by turn is bounded by what each turn adds, not by its length
            Client c = new Client(s.base(), null);
            for (int t = 0; t < 6; t++) c.say("The cat played.", 8);
            assertThat(c.last.get("usage").get("prompt_tokens").asInt()).isGreaterThan(64);
        }
    }

    @Test
    void loneSurrogatesAreRefusedAndPairsSurviveARestart(@TempDir Path dir) throws Exception {
        Client first;
        try (var s = TestServers.start(TestServers.options(4, dir, null, 4, 8), "fdkvc", 40, 16)) {
            String url = s.base() + "/v1/chat/completions";
            ErrorsTest.assertError(post(url, "{\"messages\":[{\"role\":\"user\",\"content\":\"a\\ud800b\"}]}"), 400, "messages[0].content",
                    "lone UTF-16 surrogate at character 1");
            ErrorsTest.assertError(post(url, "{\"messages\":[{\"role\":\"user\",\"content\":\"ab\\udc00\"}]}"), 400, "messages[0].content",
                    "at character 2");
            first = new Client(s.base(), "emoji");
            first.say("A cat \ud83d\ude00 in the garden.", 6);
        }
        try (var s = TestServers.start(TestServers.options(4, dir, null, 4, 8), "fdkvc", 40, 16)) {
            assertThat(json(get(s.base() + "/v1/sessions/emoji")).get("turns").asInt()).isEqualTo(1);
            // the stored transcript equals the resent history character for character: the turn continues it
            Client c = new Client(s.base(), "emoji");
            c.history.addAll(first.history);
            c.say("Go on.", 6);
            assertThat(c.last.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt()).isPositive();
            assertThat(json(get(s.base() + "/v1/sessions/emoji")).get("turns").asInt()).isEqualTo(2);
        }
    }

    @Test
    void aBodyCutShortIsCountedApartAndAStalledBodyTimesOut() throws Exception {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        try (var s = TestServers.start(options(8192, 1, 1024, 64 * 1024), "fdkvc", 40, 16, new PrintStream(log, true, StandardCharsets.UTF_8))) {
            String body = Http.chat(4, false, "user", "Hi.");
            try (Socket sock = open(s.base())) {
                sock.getOutputStream().write(request(body.substring(0, 10), body.length()));
                sock.getOutputStream().flush();
                Thread.sleep(100);
            } // gone mid-body
            until("counted", () -> metric(s.base(), "fdkvc_bodies_incomplete_total") + metric(s.base(), "fdkvc_bodies_timed_out_total") == 1);
            // a body that stalls past --read-timeout 1 gets 408
            try (Socket sock = open(s.base())) {
                sock.getOutputStream().write(request(body.substring(0, 10), body.length()));
                sock.getOutputStream().flush();
                assertThat(status(sock)).isEqualTo(408);
            }
            assertThat(metric(s.base(), "fdkvc_bodies_timed_out_total")).isGreaterThanOrEqualTo(1);
            String m = get(s.base() + "/metrics").body();
            assertThat(m).doesNotContain("status=\"500\"");
            assertThat(log.toString(StandardCharsets.UTF_8)).doesNotContain("internal error");
            // the read timeout does not cut a request that waits for the model: a paused model thread for 3 s.
            // On a connection of its own: the shared client's pooled one may have sat idle past the
            // 1 s read timeout during the 408 above, and the server closing it just as a POST goes
            // out ends that POST with no response (the client retries only idempotent requests)
            s.server().scheduler().pause(true);
            try (var fresh = java.net.http.HttpClient.newHttpClient()) {
                var pending = fresh.sendAsync(HttpRequest.newBuilder(URI.create(s.base() + "/v1/chat/completions"))
                        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                        HttpResponse.BodyHandlers.ofString());
                Thread.sleep(3000);
                s.server().scheduler().pause(false);
                assertThat(pending.get().statusCode()).isEqualTo(200);
            }
        }
    }

    @Test
    void keptAliveConnectionsServeOneRequestAfterAnother() throws Exception {
        try (var s = TestServers.start(options(8192, 30, 1024, 64 * 1024), "fdkvc", 40, 16);
             Socket sock = open(s.base())) {
            String body = Http.chat(4, false, "user", "Hi.");
            for (int i = 0; i < 3; i++) {
                sock.getOutputStream().write(request(body, body.length()));
                sock.getOutputStream().flush();
                assertThat(status(sock)).isEqualTo(200);
                // skip to the end of this response: headers, then Content-Length bytes
                InputStream in = sock.getInputStream();
                int length = -1;
                StringBuilder line = new StringBuilder();
                for (int c; (c = in.read()) != -1; ) {
                    if (c != '\n') {
                        if (c != '\r') line.append((char) c);
                        continue;
                    }
                    if (line.isEmpty()) break;
                    if (line.toString().toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                        length = Integer.parseInt(line.substring(15).strip());
                    }
                    line.setLength(0);
                }
                assertThat(length).isPositive();
                assertThat(in.readNBytes(length)).hasSize(length);
            }
        }
    }

    /** The soft limit on open files of this process. */
    static long openFileLimit() throws Exception {
        for (String l : Files.readAllLines(Path.of("/proc/self/limits"))) {
            if (l.startsWith("Max open files")) return Long.parseLong(l.substring(26).strip().split("\\s+")[0]);
        }
        return 1024;
    }

    @Test
    void fiveThousandHalfSentBodiesDoNotStopHealth() throws Exception {
        // client and server are one process here: each connection costs two descriptors
        int n = (int) Math.min(5000, (openFileLimit() - 1000) / 2);
        if (n < 5000) System.err.println("*** NOTE: only " + n + " half-sent bodies: the open-file limit is " + openFileLimit() + " ***");
        assertThat(n).isGreaterThan(ChatServer.bodiesReading(1024));
        // the read timeout outlasts the test: on a slow machine, opening 5000 connections can take
        // longer than 30 s, and held bodies timing out (408) would free slots before the busy check
        try (var s = TestServers.start(options(8192, 600, 1024, 64 * 1024), "fdkvc", 40, 16)) {
            String body = Http.chat(4, false, "user", "Hi.");
            byte[] half = request(body.substring(0, 10), body.length());
            List<Socket> open = new ArrayList<>();
            long deadline = System.currentTimeMillis() + HANG_MS;
            try {
                long t0 = System.nanoTime();
                for (int i = 0; i < n && System.currentTimeMillis() < deadline; i++) {
                    Socket sock = open(s.base());
                    open.add(sock);
                    OutputStream o = sock.getOutputStream();
                    o.write(half);
                    o.flush();
                }
                System.err.printf("%d half-sent bodies opened in %.1f s%n", n, (System.nanoTime() - t0) / 1e9);
                assertThat(open).hasSize(n);
                HttpResponse<String> h = Http.CLIENT.send(HttpRequest.newBuilder(URI.create(s.base() + "/health"))
                        .timeout(Duration.ofMillis(HANG_MS)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(h.statusCode()).isEqualTo(200);
                int reading = ChatServer.bodiesReading(1024);
                // all but the bounded number being received were answered 503 and closed at once; none timed out
                until("every body accounted for", () -> metric(s.base(), "fdkvc_bodies_refused_total")
                        + metric(s.base(), "fdkvc_bodies_timed_out_total") + metric(s.base(), "fdkvc_bodies_receiving") == n);
                assertThat(metric(s.base(), "fdkvc_bodies_timed_out_total")).isZero();
                assertThat(metric(s.base(), "fdkvc_bodies_receiving")).isEqualTo(reading);
                HttpResponse<String> busy = post(s.base() + "/v1/chat/completions", body);
                ErrorsTest.assertError(busy, 503, null, "request bodies are being received already");
            } finally {
                for (Socket sock : open) sock.close();
            }
            // once they are gone, chat is served again
            until("the held bodies counted as cut short", () -> metric(s.base(), "fdkvc_bodies_receiving") == 0);
            assertThat(get(s.base() + "/metrics").body()).doesNotContain("status=\"500\"");
            assertThat(post(s.base() + "/v1/chat/completions", body).statusCode()).isEqualTo(200);
        }
    }
}
