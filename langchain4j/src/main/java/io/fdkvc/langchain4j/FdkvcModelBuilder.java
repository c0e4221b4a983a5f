package io.fdkvc.langchain4j;

import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.DefaultChatRequestParameters;
import io.fdkvc.core.InputException;
import io.fdkvc.engine.chat.LocalChat;
import io.fdkvc.engine.chat.LocalChatBuilder;
import java.util.List;

/**
 * What {@link FdkvcChatModel} and {@link FdkvcStreamingChatModel} share: the GGUF model, the KV
 * cache policy and its budget, the engine's options and the default sampling options (each
 * request's {@code ChatRequestParameters} override them).
 *
 * @param <B> the concrete builder
 */
public abstract class FdkvcModelBuilder<B extends FdkvcModelBuilder<B>> extends LocalChatBuilder<B> {
    /** Reply tokens when neither the builder nor the request sets {@code maxOutputTokens}. */
    public static final int DEFAULT_MAX_OUTPUT_TOKENS = 256;

    private Double temperature = 0.0;
    private Double topP = 1.0;
    private Integer maxOutputTokens = DEFAULT_MAX_OUTPUT_TOKENS;
    private List<String> stopSequences = List.of();

    FdkvcModelBuilder() {}

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /** Default sampling temperature, 0 for greedy (default 0). */
    public B temperature(double temperature) {
        this.temperature = temperature;
        return self();
    }

    /** Default nucleus mass in (0, 1] (default 1). */
    public B topP(double topP) {
        this.topP = topP;
        return self();
    }

    /** Default most reply tokens (default {@value #DEFAULT_MAX_OUTPUT_TOKENS}). */
    public B maxOutputTokens(int tokens) {
        this.maxOutputTokens = tokens;
        return self();
    }

    /** Default texts that end a reply, besides the chat format's own. */
    public B stopSequences(List<String> stops) {
        this.stopSequences = List.copyOf(stops);
        return self();
    }

    ChatRequestParameters defaults() {
        return DefaultChatRequestParameters.builder().temperature(temperature).topP(topP).maxOutputTokens(maxOutputTokens)
                .stopSequences(stopSequences).build();
    }

    /**
     * Validates everything, then loads the model.
     *
     * @throws InputException naming the option or the file at fault
     */
    LocalChatEngine engine() {
        LocalChat.Options options = options();
        LocalChatEngine.params(defaults(), seed()); // the default sampling options are checked now, not at the first request
        LocalChat chat = LocalChat.open(options, warning -> System.getLogger("io.fdkvc.langchain4j").log(System.Logger.Level.WARNING, warning));
        return new LocalChatEngine(chat, seed());
    }
}
