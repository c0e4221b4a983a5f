package io.fdkvc.server;

import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.chat.Conversation;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.tokenizer.TokenDecoder;
import java.util.Locale;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code GET /v1/sessions/{id}/cache}: what a conversation's cache still holds, token by token.
 * For each token of the transcript in the window {@code [from, from + limit)}: its position, id,
 * text, turn, role, and {@code held}, how many of the model's {@code layers x kvHeads} streams
 * still hold it (0: evicted everywhere), per layer on request; and the positions the last policy
 * update (the end of the last turn) evicted from at least one stream, with how many.
 *
 * <p>With {@code messages}, the transcript's messages too ({@code role}, {@code content}), so that
 * a client can resume a conversation it did not start (the chat page's session list).
 *
 * <p>Turns count from 1; a token's role is {@code user} for its turn's prompt (the request's
 * messages and the template around them) and {@code assistant} for the reply. Tokens of turns
 * stored by an older server, which did not keep where turns begin, have turn 0 and role
 * {@code unknown}.
 */
final class CacheView {
    /** Most tokens one call returns ({@code limit}'s bound and default). */
    static final int MAX_LIMIT = 4096;

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private CacheView() {}

    /** The view of a conversation between turns. */
    static ObjectNode of(Conversation c, long evictionsSoFar, int from, int limit, boolean perLayer, boolean messages) {
        KvCache cache = c.cache();
        int[] tokens = c.tokens();
        int total = tokens.length;
        int start = Math.min(from, total);
        int n = Math.min(limit, total - start);
        int layers = cache.layers();
        int[] held = new int[n], layerHeld = perLayer ? new int[layers * n] : null, evicted = new int[n];
        cache.heldCounts(start, held, layerHeld);
        cache.evictedCounts(start, evicted);

        ObjectNode root = JSON.createObjectNode();
        root.put("object", "session.cache");
        root.put("streams", cache.streamCount());
        root.put("layers", layers);
        root.put("kvHeads", cache.kvHeads());
        root.put("policy", cache.spec().name());
        root.put("budget", cache.spec().budget());
        root.put("totalTokens", total);
        root.put("from", start);
        root.put("count", n);
        root.put("turns", c.turns());
        root.put("totalEntries", cache.totalEntries());
        root.put("largestStreamEntries", cache.maxEntries());
        // the policy manages the global layers; sliding-window layers keep their own window
        root.put("globalLayers", layers - cache.slidingLayers());
        root.put("slidingLayers", cache.slidingLayers());
        root.put("slidingWindow", cache.maxWindow());
        root.put("largestGlobalStreamEntries", cache.maxGlobalEntries());
        root.put("kvBytes", cache.bytes());
        root.put("evictions", evictionsSoFar);

        int[] marks = c.turnMarks();
        int firstTurn = c.unmarkedTurns() + 1;
        // the mark pair at or before `start`
        int m = 0;
        while (m + 2 < marks.length && marks[m + 2] <= start) m += 2;
        TokenDecoder decoder = c.format().tokenizer().decoder(false, true);
        ArrayNode out = root.putArray("tokens");
        for (int i = 0; i < n; i++) {
            int p = start + i;
            while (m + 2 < marks.length && marks[m + 2] <= p) m += 2;
            ObjectNode t = out.addObject();
            t.put("position", p);
            t.put("id", tokens[p]);
            t.put("text", decoder.next(tokens[p]));
            if (marks.length == 0 || p < marks[0]) {
                t.put("turn", 0);
                t.put("role", "unknown");
            } else {
                t.put("turn", firstTurn + m / 2);
                t.put("role", p < marks[m + 1] ? "user" : "assistant");
            }
            t.put("held", held[i]);
            if (perLayer) {
                ArrayNode l = t.putArray("layers");
                for (int k = 0; k < layers; k++) l.add(layerHeld[k * n + i]);
            }
        }
        ArrayNode ev = root.putArray("evictedLastTurn");
        for (int i = 0; i < n; i++) {
            if (evicted[i] > 0) ev.addObject().put("position", start + i).put("streams", evicted[i]);
        }
        if (messages) {
            ArrayNode ms = root.putArray("messages");
            for (Message msg : c.messages()) {
                ms.addObject().put("role", msg.role().name().toLowerCase(Locale.ROOT)).put("content", msg.content());
            }
        }
        return root;
    }
}
