package io.fdkvc.server;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.chat.Conversation;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.session.Session;

/**
 * The model a server runs and how each conversation's cache is built.
 *
 * @param id                the name {@code /v1/models} lists and responses carry
 * @param modelFingerprint  identifies the weights (stored sessions from other weights are refused)
 * @param llama             the forward pass (used only from the scheduler's thread)
 * @param format            messages to tokens
 * @param policy            the cache policy and budget of conversations that do not choose their own
 * @param maxTurnTokens     turn headroom (chunk size of a long turn)
 * @param positions         RoPE positions of cached entries
 */
public record ServedModel(String id, String modelFingerprint, Llama llama, ChatFormat format, PolicySpec policy,
                          int maxTurnTokens, PositionMode positions) {

    /**
     * What a stored session's cache depends on besides the weights and its own policy: headroom,
     * positions, template. (Files of the first format, written when the whole server ran one
     * policy, carry {@link #policyFingerprint}.)
     */
    public String cacheFingerprint() {
        return "maxTurnTokens=" + maxTurnTokens + ";positions=" + positions + ";template=" + format.template().id();
    }

    /** The cache fingerprint with the server's default policy in front, as the first session format wrote it. */
    public String policyFingerprint() {
        return policy + ";" + cacheFingerprint();
    }

    public Conversation newConversation() {
        return newConversation(policy);
    }

    /** A conversation whose cache runs {@code spec}. */
    public Conversation newConversation(PolicySpec spec) {
        return new Conversation(new Session(llama, llama.newCache(spec, maxTurnTokens, positions)), format);
    }
}
