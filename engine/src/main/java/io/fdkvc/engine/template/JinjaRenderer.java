package io.fdkvc.engine.template;

import io.fdkvc.core.InputException;

import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One Jinja chat template, rendered as Hugging Face's {@code apply_chat_template} renders it
 * ({@link JinjaEnvironment}) and nothing more: no probe conversation, no incremental pieces
 * ({@link JinjaChatTemplate} builds those on top). The template sees {@code messages} as given,
 * {@code add_generation_prompt}, {@code bos_token}, {@code eos_token} and the caller's variables;
 * {@code strftime_now} reads this renderer's clock.
 */
public final class JinjaRenderer {
    private final String source;
    private final String prepared;
    private final String bosToken;
    private final String eosToken;
    private final Clock clock;

    private JinjaRenderer(String source, String bosToken, String eosToken, Clock clock) {
        this.source = Objects.requireNonNull(source, "template");
        this.prepared = PythonMethodResolver.rewriteSlices(source);
        this.bosToken = bosToken == null ? "" : bosToken;
        this.eosToken = eosToken == null ? "" : eosToken;
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * A renderer with these {@code bos_token} and {@code eos_token} strings (null: "") whose
     * {@code strftime_now} reads {@code clock} (its zone is the "local time" Python's
     * {@code datetime.now()} would give; a fixed clock makes renderings reproducible).
     */
    public static JinjaRenderer of(String source, String bosToken, String eosToken, Clock clock) {
        return new JinjaRenderer(source, bosToken, eosToken, clock);
    }

    /** The template text as given. */
    public String source() {
        return source;
    }

    /**
     * The conversation as given, each message a map (parsed JSON: maps, lists, strings, numbers,
     * booleans, null), as Hugging Face passes message dicts: keys the {@link ChatTemplate.Message}
     * record does not know ({@code name}, content parts, ...) reach the template too.
     * {@code variables} go to the template as they are ({@code tools}, {@code enable_thinking},
     * {@code bos_token} to override this renderer's, ...).
     *
     * @throws InputException when the template raises ({@code raise_exception}: its message) or
     *                        fails on the conversation
     */
    public String render(List<? extends Map<String, ?>> messages, boolean addGenerationPrompt, Map<String, Object> variables) {
        Map<String, Object> context = new HashMap<>();
        if (variables != null) {
            variables.forEach((name, value) -> context.put(name, PythonValues.of(value)));
        }
        context.put("messages", PythonValues.of(messages));
        context.put("add_generation_prompt", addGenerationPrompt);
        context.putIfAbsent("bos_token", bosToken);
        context.putIfAbsent("eos_token", eosToken);
        return JinjaEnvironment.render(prepared, context, clock);
    }
}
