package io.fdkvc.server;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A small java.net.http client for the raw tests. */
final class Http {
    static final JsonMapper JSON = JsonMapper.builder().build();
    static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private Http() {}

    static HttpResponse<String> send(String method, String url, String body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) b.header("Content-Type", "application/json");
        for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
        try {
            return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    static HttpResponse<String> post(String url, String body, String... headers) {
        return send("POST", url, body, headers);
    }

    static HttpResponse<String> get(String url, String... headers) {
        return send("GET", url, null, headers);
    }

    static JsonNode json(HttpResponse<String> r) {
        return JSON.readTree(r.body());
    }

    /** A chat request body: messages as alternating role, content pairs. */
    static String chat(int maxTokens, boolean stream, String... roleContent) {
        var root = JSON.createObjectNode();
        root.put("model", "stories260K");
        root.put("temperature", 0);
        root.put("max_tokens", maxTokens);
        if (stream) {
            root.put("stream", true);
            root.putObject("stream_options").put("include_usage", true);
        }
        var ms = root.putArray("messages");
        for (int i = 0; i < roleContent.length; i += 2) ms.addObject().put("role", roleContent[i]).put("content", roleContent[i + 1]);
        return JSON.writeValueAsString(root);
    }
}
