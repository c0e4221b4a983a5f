package io.fdkvc.engine.cache;

import io.fdkvc.core.Untrusted;
import io.fdkvc.core.param.ParameterException;
import java.util.Locale;

/**
 * Which position the rotary embedding gives a cached entry. Keys are stored before RoPE and
 * rotated when they are attended to, so the choice is made at attention time and switching it
 * needs no rewrite of the cache.
 */
public enum PositionMode {
    /**
     * The entry's true position in the conversation. Faithful to the model while the conversation
     * stays within its trained context; beyond it the model sees distances it was never trained on.
     */
    ORIGINAL,
    /**
     * The entry's slot index in its stream (0 .. size-1), as StreamingLLM does: after an eviction
     * the survivors close ranks, so every distance the model sees is below budget + turn length and
     * a conversation can run far past the trained context.
     */
    CACHE,
    /**
     * {@link #ORIGINAL} while the conversation is within the model's trained context, then
     * {@link #CACHE}: the bounded cache is then exactly an attention mask over the model's own
     * computation for as long as that is faithful, and every distance stays below budget + turn
     * after. A chunk never straddles the context's end (the cache's headroom stops at it), and the
     * next token past it finds the survivors renumbered to their slots. A {@link KvCache} learns
     * the context from the {@code Session} that drives it
     * ({@link KvCache#limitOriginalPositions}); without one it keeps original positions.
     */
    AUTO;

    /** The mode {@code chat}, {@code serve} and {@code fidelity} use unless told otherwise (docs/fidelity.md says why). */
    public static final PositionMode DEFAULT = AUTO;
    /** {@link #DEFAULT}'s {@link #label()}, a constant for option defaults. */
    public static final String DEFAULT_LABEL = "auto";

    /**
     * Parses "auto", "original" or "cache", ignoring case.
     *
     * @throws ParameterException naming the parameter {@code positions}
     */
    public static PositionMode parse(String s) {
        if (s != null) {
            for (PositionMode m : values()) if (m.name().equalsIgnoreCase(s.trim())) return m;
        }
        throw new ParameterException("positions", "must be 'auto', 'original' or 'cache', got '" + Untrusted.excerpt(String.valueOf(s)) + "'");
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
