package io.fdkvc.engine.chat;

/** Why a reply ended: a stop token or stop text ({@code stop}), or the token limit ({@code length}). */
public enum FinishReason {
    STOP("stop"), LENGTH("length");

    private final String id;

    FinishReason(String id) {
        this.id = id;
    }

    /** The name OpenAI's API uses. */
    public String id() { return id; }
}
