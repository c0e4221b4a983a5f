package io.fdkvc.bench.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The load generator's {@code --url} mode: which servers it accepts, and a run against a live one. */
class ServeLoadTest {
    @Test
    void aLoopbackUrlIsAcceptedWithOrWithoutItsApiPath() {
        assertThat(ServeLoad.External.parse(List.of("--url", "http://127.0.0.1:8080"))).isEqualTo(new ServeLoad.External("http://127.0.0.1:8080", 0));
        assertThat(ServeLoad.External.parse(List.of("--url", "http://localhost:9/v1/", "--pid", "42")))
                .isEqualTo(new ServeLoad.External("http://localhost:9", 42));
        assertThat(ServeLoad.External.parse(List.of("--url", "http://[::1]:8081/v1")).base()).isEqualTo("http://[::1]:8081");
        assertThat(ServeLoad.External.parse(List.of("--url", "http://LocalHost:65535")).base()).isEqualTo("http://localhost:65535");
    }

    @Test
    void anythingButALoopbackHttpUrlIsRefusedByName() {
        assertThatThrownBy(() -> ServeLoad.External.parse(List.of("--url", "http://10.0.0.1:8080")))
                .isInstanceOf(InputException.class).hasMessageContaining("--url must name a loopback host").hasMessageContaining("10.0.0.1");
        assertThatThrownBy(() -> ServeLoad.External.parse(List.of("--url", "https://127.0.0.1:8080")))
                .isInstanceOf(InputException.class).hasMessageContaining("--url must be http://HOST:PORT");
        assertThatThrownBy(() -> ServeLoad.External.parse(List.of("--url", "http://127.0.0.1")))
                .isInstanceOf(InputException.class).hasMessageContaining("--url must be http://HOST:PORT");
        assertThatThrownBy(() -> ServeLoad.External.parse(List.of("--url", "http://127.0.0.1:99999")))
                .isInstanceOf(InputException.class).hasMessageContaining("--url must be http://HOST:PORT");
        assertThatThrownBy(() -> ServeLoad.External.parse(List.of("--url", "http://127.0.0.1:8080 x")))
                .isInstanceOf(InputException.class).hasMessageContaining("--url: not a URL");
        assertThatThrownBy(() -> ServeLoad.External.parse(List.of("--url")))
                .isInstanceOf(InputException.class).hasMessageContaining("--url takes a URL");
        assertThatThrownBy(() -> ServeLoad.External.parse(List.of("--url", "http://127.0.0.1:8080", "--pid", "-3")))
                .isInstanceOf(InputException.class).hasMessageContaining("--pid");
        assertThatThrownBy(() -> ServeLoad.External.parse(List.of("--url", "http://127.0.0.1:8080", "--policy", "h2o")))
                .isInstanceOf(InputException.class).hasMessageContaining("only --pid PID");
    }

    private static ServeLoad.StreamedReply read(String... events) throws Exception {
        tools.jackson.databind.json.JsonMapper json = tools.jackson.databind.json.JsonMapper.builder().build();
        ServeLoad.StreamedReply r = new ServeLoad.StreamedReply();
        for (String e : events) r.accept(json.readTree(e));
        return r;
    }

    @Test
    void readsOpenAisUsageChunkAndOurs() throws Exception {
        // OpenAI (and llama-server): "usage": null on each chunk, then a last chunk with no choices
        ServeLoad.StreamedReply openAi = read(
                "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}],\"usage\":null}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}],\"usage\":null}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"length\"}],\"usage\":null}",
                "{\"choices\":[],\"usage\":{\"completion_tokens\":2,\"prompt_tokens\":40,\"total_tokens\":42,"
                        + "\"prompt_tokens_details\":{\"cached_tokens\":31}}}");
        assertThat(openAi.text.toString()).isEqualTo("Hello");
        assertThat(openAi.completionTokens).isEqualTo(2);
        assertThat(openAi.fed).isEqualTo(9);
        // ours: the usage rides on the chunk with the finish reason; a server without cached tokens fed it all
        ServeLoad.StreamedReply ours = read("{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
                "{\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"completion_tokens\":1,\"prompt_tokens\":7}}");
        assertThat(ours.text.toString()).isEqualTo("a");
        assertThat(ours.completionTokens).isEqualTo(1);
        assertThat(ours.fed).isEqualTo(7);
        assertThatThrownBy(() -> read("{\"error\":{\"message\":\"boom\"}}")).isInstanceOf(java.io.IOException.class).hasMessageContaining("boom");
    }

    @Test
    void aUrlWhereNoServerAnswersIsRefusedBeforeTheRun() throws Exception {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            port = free.getLocalPort();
        }
        ServeLoad.External nobody = ServeLoad.External.parse(List.of("--url", "http://127.0.0.1:" + port));
        assertThatThrownBy(nobody::check).isInstanceOf(InputException.class)
                .hasMessage("--url: no OpenAI-compatible server answers at http://127.0.0.1:" + port + " (GET /v1/models: ConnectException)");
    }

    /**
     * Forwards loopback connections to {@code port}; the first is closed when a second request
     * arrives on it, with no response: what llama-server does now and then to a kept-alive
     * connection (the client reads no bytes).
     */
    private static java.net.ServerSocket closingKeptAliveConnection(int port) throws java.io.IOException {
        java.net.ServerSocket proxy = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            try {
                for (int n = 0; ; n++) {
                    java.net.Socket client = proxy.accept();
                    java.net.Socket server = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port);
                    java.util.concurrent.atomic.AtomicBoolean answered = new java.util.concurrent.atomic.AtomicBoolean();
                    boolean closeOnSecond = n == 0;
                    Thread.ofVirtual().start(() -> {
                        try (client; server) {
                            byte[] buf = new byte[8192];
                            for (int k; (k = client.getInputStream().read(buf)) > 0; ) {
                                if (closeOnSecond && answered.get()) return;   // a second request: closed unanswered
                                server.getOutputStream().write(buf, 0, k);
                            }
                        } catch (java.io.IOException gone) {
                            // either side closed
                        }
                    });
                    Thread.ofVirtual().start(() -> {
                        try {
                            byte[] buf = new byte[8192];
                            for (int k; (k = server.getInputStream().read(buf)) > 0; ) {
                                client.getOutputStream().write(buf, 0, k);
                                answered.set(true);
                            }
                        } catch (java.io.IOException gone) {
                            // either side closed
                        }
                    });
                }
            } catch (java.io.IOException closed) {
                // the test is over
            }
        });
        return proxy;
    }

    /**
     * The run survives a kept-alive connection that the server closes unanswered. In this form
     * (the close comes as the request arrives) the JDK's client resends the request itself; the
     * load generator's own resend covers the closes it does not (with llama-server, 4 of 5 runs
     * lost a conversation to "header parser received no bytes" before it, 0 of 8 after).
     */
    @Test
    void aRequestThatAConnectionDropsBeforeAnyResponseIsSentOnceMore() throws Exception {
        try (InProcessServer s = InProcessServer.start(); java.net.ServerSocket proxy = closingKeptAliveConnection(s.server().port())) {
            ServeLoad.Result r = ServeLoad.drive("http://127.0.0.1:" + proxy.getLocalPort(), 0, 1, 3, 4, 120, ServeLoad.MEASURED_PREFIX);
            assertThat(r.errors()).as(String.join("; ", r.errorSamples())).isZero();
            assertThat(r.requests()).isEqualTo(3);
        }
    }

    /** A request that times out is an error, not sent again: the run stays within MAX_SECONDS. */
    @Test
    void aRequestThatTimesOutIsNotSentAgain() throws Exception {
        java.util.concurrent.atomic.AtomicInteger accepted = new java.util.concurrent.atomic.AtomicInteger();
        List<java.net.Socket> held = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            Thread.ofVirtual().start(() -> {
                try {
                    while (true) {
                        held.add(silent.accept());   // read nothing, answer nothing
                        accepted.incrementAndGet();
                    }
                } catch (java.io.IOException closed) {
                    // the test is over
                }
            });
            ServeLoad.Result r = ServeLoad.drive("http://127.0.0.1:" + silent.getLocalPort(), 0, 1, 1, 4, 1, ServeLoad.MEASURED_PREFIX);
            assertThat(r.errors()).isEqualTo(1);
            assertThat(accepted.get()).isEqualTo(1);
        } finally {
            for (java.net.Socket h : held) h.close();
        }
    }

    @Test
    void drivesARunningServerAndSeesItsPrefixCache() throws Exception {
        try (InProcessServer s = InProcessServer.start()) {
            ServeLoad.External server = ServeLoad.External.parse(List.of("--url", s.baseUrl()));
            server.check();
            ServeLoad.Result r = ServeLoad.drive(server.base(), server.pid(), 2, 3, 8, 120, ServeLoad.MEASURED_PREFIX);
            assertThat(r.errors()).as(String.join("; ", r.errorSamples())).isZero();
            assertThat(r.requests()).isEqualTo(6);
            assertThat(r.generated()).isPositive().isLessThanOrEqualTo(6 * 8);
            // a later turn feeds only its new message: the server kept the history
            assertThat(r.fedByTurn()[2]).isPositive().isLessThan(r.fedByTurn()[0] + r.fedByTurn()[1]);
            assertThat(r.ttftNanos()).hasSize(6);
            assertThat(java.util.Arrays.stream(r.ttftNanos()).min().orElseThrow()).isPositive();
        }
    }
}
