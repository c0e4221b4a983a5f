package io.fdkvc.langchain4j;

import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import io.fdkvc.core.policy.PolicySpec;

/**
 * The streaming twin of {@link FdkvcChatModel} (same engine, options and conversation handling):
 * the reply's text goes to {@link StreamingChatResponseHandler#onPartialResponse(String)} as it
 * is decoded, then {@code onCompleteResponse} gets the whole reply with its token usage and
 * finish reason. The reply runs on the calling thread; {@code chat} returns after the handler's
 * last call. An error (including one thrown by the handler) goes to {@code onError}, and the
 * conversation is left as it was before the request.
 */
public final class FdkvcStreamingChatModel implements StreamingChatModel, AutoCloseable {
    private final LocalChatEngine engine;
    private final ChatRequestParameters defaults;

    private FdkvcStreamingChatModel(Builder b) {
        this.defaults = b.defaults();
        this.engine = b.engine();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
        ChatResponse response;
        try {
            response = engine.chat(request, handler::onPartialResponse);
        } catch (RuntimeException e) {
            handler.onError(e);
            return;
        }
        handler.onCompleteResponse(response);
    }

    @Override
    public ChatRequestParameters defaultRequestParameters() {
        return defaults;
    }

    /** The KV cache policy of every conversation. */
    public PolicySpec cachePolicy() {
        return engine.policySpec();
    }

    @Override
    public void close() {
        engine.close();
    }

    /** Builds an {@link FdkvcStreamingChatModel}; only {@code modelPath} is required. */
    public static final class Builder extends FdkvcModelBuilder<Builder> {
        private Builder() {}

        /** Loads the model. */
        public FdkvcStreamingChatModel build() {
            return new FdkvcStreamingChatModel(this);
        }
    }
}
