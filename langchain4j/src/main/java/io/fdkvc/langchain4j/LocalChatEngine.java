package io.fdkvc.langchain4j;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.exception.UnsupportedFeatureException;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.ResponseFormat;
import dev.langchain4j.model.chat.request.ResponseFormatType;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.output.TokenUsage;
import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.chat.GenerationParams;
import io.fdkvc.engine.chat.LocalChat;
import io.fdkvc.engine.template.ChatTemplate.Message;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The engine behind {@link FdkvcChatModel} and {@link FdkvcStreamingChatModel}: engine
 * {@link LocalChat} (one loaded model, a policy-bounded KV cache per conversation, a request
 * matched to the conversation whose transcript it extends) with LangChain4j's messages and
 * parameters.
 */
final class LocalChatEngine implements AutoCloseable {
    private final LocalChat chat;
    private final long seed;

    LocalChatEngine(LocalChat chat, long seed) {
        this.chat = chat;
        this.seed = seed;
    }

    String modelName() {
        return chat.modelName();
    }

    PolicySpec policySpec() {
        return chat.policySpec();
    }

    /** Conversations held now (each with its own cache). */
    int conversations() {
        return chat.conversations();
    }

    /**
     * Answers {@code request} on the calling thread; {@code onText} receives the reply's text as
     * it is released. The merged defaults are already in the request's parameters.
     */
    ChatResponse chat(ChatRequest request, Consumer<String> onText) {
        GenerationParams params = params(request.parameters(), seed);
        LocalChat.Answer reply = chat.chat(null, toEngine(request.messages()), params, onText);
        FinishReason finish = switch (reply.finishReason()) {
            case STOP -> FinishReason.STOP;
            case LENGTH -> FinishReason.LENGTH;
        };
        return ChatResponse.builder()
                .aiMessage(AiMessage.from(reply.content()))
                .tokenUsage(new TokenUsage(reply.promptTokens(), reply.completionTokens()))
                .finishReason(finish)
                .modelName(chat.modelName())
                .build();
    }

    /**
     * Sampling options from LangChain4j's parameters. Options the engine has no counterpart for
     * are refused, not ignored.
     */
    static GenerationParams params(ChatRequestParameters p, long seed) {
        if (p.toolSpecifications() != null && !p.toolSpecifications().isEmpty()) {
            throw new UnsupportedFeatureException("tools are not supported by the fdkvc engine's chat formats");
        }
        ResponseFormat rf = p.responseFormat();
        if (rf != null && rf.type() == ResponseFormatType.JSON) {
            throw new UnsupportedFeatureException("JSON response format is not supported by the fdkvc engine");
        }
        if (p.topK() != null) throw new UnsupportedFeatureException("topK is not supported (use topP)");
        if (p.frequencyPenalty() != null) throw new UnsupportedFeatureException("frequencyPenalty is not supported");
        if (p.presencePenalty() != null) throw new UnsupportedFeatureException("presencePenalty is not supported");
        double temperature = p.temperature() == null ? 0 : p.temperature();
        double topP = p.topP() == null ? 1 : p.topP();
        int maxTokens = p.maxOutputTokens() == null ? FdkvcModelBuilder.DEFAULT_MAX_OUTPUT_TOKENS : p.maxOutputTokens();
        List<String> stop = p.stopSequences() == null ? List.of() : p.stopSequences();
        return new GenerationParams(maxTokens, (float) temperature, (float) topP, seed, stop);
    }

    /**
     * LangChain4j messages as the engine's: the system message first, then user and assistant
     * turns. Consecutive messages of one role (a memory that dropped the reply between two
     * questions) become one turn, their texts joined by a blank line.
     */
    static List<Message> toEngine(List<ChatMessage> messages) {
        List<Message> out = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            ChatMessage m = messages.get(i);
            Message next = switch (m) {
                case SystemMessage s -> {
                    if (!out.isEmpty()) throw new InputException("messages[" + i + "]: a system message is only allowed first");
                    yield Message.system(s.text());
                }
                case UserMessage u -> Message.user(userText(u, i));
                case AiMessage a -> {
                    if (a.hasToolExecutionRequests()) {
                        throw new UnsupportedFeatureException("messages[" + i + "]: tool execution requests are not supported");
                    }
                    yield Message.assistant(a.text() == null ? "" : a.text());
                }
                default -> throw new UnsupportedFeatureException("messages[" + i + "]: " + m.type() + " messages are not supported");
            };
            LocalChat.append(out, next);
        }
        return out;
    }

    private static String userText(UserMessage u, int i) {
        StringBuilder sb = new StringBuilder();
        for (Content c : u.contents()) {
            if (!(c instanceof TextContent t)) {
                throw new UnsupportedFeatureException("messages[" + i + "]: " + c.type() + " content is not supported (text only)");
            }
            if (!sb.isEmpty()) sb.append('\n');
            sb.append(t.text());
        }
        return sb.toString();
    }

    @Override
    public void close() {
        chat.close();
    }
}
