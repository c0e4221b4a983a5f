package io.fdkvc.langchain4j;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import io.fdkvc.core.policy.PolicySpec;

/**
 * A LangChain4j {@link ChatModel} running a GGUF model in-process on the fdkvc engine, whose
 * attention reads a policy-bounded KV cache: memory per conversation stays at the cache budget
 * however long the conversation gets.
 *
 * <p>Each conversation keeps its own cache and transcript. A request whose messages extend a
 * conversation's transcript (the previous request's messages and the reply as written) continues
 * it and feeds only the new messages; any other request starts a new conversation. In front of a
 * memory that drops old messages ({@link FdkvcChatMemory}, a window) the prompt changes from the
 * front, so such requests are new conversations and their prompt is read again; behind a memory
 * that keeps everything (the cache policy does the forgetting) every turn costs only its own
 * tokens.
 *
 * <p>Sampling options come from the request's {@code ChatRequestParameters} (temperature, topP,
 * maxOutputTokens, stopSequences), defaulted by the builder's; the seed is the builder's. Tools,
 * JSON response formats, topK and penalties are refused with {@code UnsupportedFeatureException}.
 * Consecutive messages of one role are joined into one turn.
 *
 * <p>Requests are served one at a time on the calling thread. {@link #close()} releases the
 * model's memory mapping.
 */
public final class FdkvcChatModel implements ChatModel, AutoCloseable {
    private final LocalChatEngine engine;
    private final ChatRequestParameters defaults;

    private FdkvcChatModel(Builder b) {
        this.defaults = b.defaults();
        this.engine = b.engine();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public ChatResponse doChat(ChatRequest request) {
        return engine.chat(request, null);
    }

    @Override
    public ChatRequestParameters defaultRequestParameters() {
        return defaults;
    }

    /** The KV cache policy of every conversation. */
    public PolicySpec cachePolicy() {
        return engine.policySpec();
    }

    /** Conversations held now, each with its own cache. */
    public int conversations() {
        return engine.conversations();
    }

    @Override
    public void close() {
        engine.close();
    }

    /** Builds an {@link FdkvcChatModel}; only {@code modelPath} is required. */
    public static final class Builder extends FdkvcModelBuilder<Builder> {
        private Builder() {}

        /** Loads the model. */
        public FdkvcChatModel build() {
            return new FdkvcChatModel(this);
        }
    }
}
