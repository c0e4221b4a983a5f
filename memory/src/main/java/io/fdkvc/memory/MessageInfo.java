package io.fdkvc.memory;

import java.util.List;
import java.util.Objects;

/**
 * What the selection needs to know of one transcript message, whatever chat framework it comes
 * from: its role, the words its embedding is computed from and, for tool messages, the ids that
 * tie results to their request.
 *
 * @param role     how the conventions treat it
 * @param text     the words its embedding and its lexical features are computed from (may be blank)
 * @param typeName the framework's name of its type, embedded instead of blank text (an image)
 * @param toolIds  for {@link Role#TOOL_REQUEST} the ids of the requested calls, for
 *                 {@link Role#TOOL_RESULT} the ids of the calls it answers (null elements: a
 *                 provider without ids); empty otherwise
 */
public record MessageInfo(Role role, String text, String typeName, List<String> toolIds) {
    public MessageInfo {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(typeName, "typeName");
        toolIds = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(toolIds)); // null ids allowed
    }

    /** A message without tool ids. */
    public static MessageInfo of(Role role, String text, String typeName) {
        return new MessageInfo(role, text, typeName, List.of());
    }

    /** How the memory's conventions treat a message. */
    public enum Role {
        /** Starts an exchange; what a reply answers. */
        USER,
        /** A reply, or any other message that is neither a user message nor a tool message. */
        ASSISTANT,
        /** An assistant message asking for tool calls: one entry with the results that follow it. */
        TOOL_REQUEST,
        /** The result of tool calls: joins the open request it answers, else is an entry of its own. */
        TOOL_RESULT
    }
}
