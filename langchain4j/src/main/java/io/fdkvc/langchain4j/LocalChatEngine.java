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
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.chat.Conversation;
import io.fdkvc.engine.chat.GenerationParams;
import io.fdkvc.engine.chat.Reply;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.template.ChatTemplate.Message;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The engine behind {@link FdkvcChatModel} and {@link FdkvcStreamingChatModel}: one loaded model
 * and up to {@code maxConversations} conversations, each with its own policy-bounded KV cache
 * (engine {@link Conversation}). A request whose messages extend a conversation's transcript
 * continues it, feeding only the new messages; any other request starts a new conversation
 * (the least recently used one is dropped when there are too many). One request at a time: the
 * forward pass is not re-entrant.
 */
final class LocalChatEngine implements AutoCloseable {
    private final LoadedModel model;
    private final Llama llama;
    private final ChatFormat format;
    private final PolicySpec spec;
    private final int maxTurnTokens;
    private final PositionMode positions;
    private final int maxConversations;
    private final String modelName;
    private final long seed;
    /** Least recently used first. */
    private final LinkedList<Conversation> conversations = new LinkedList<>();
    private boolean closed;

    LocalChatEngine(LoadedModel model, Llama llama, ChatFormat format, PolicySpec spec, int maxTurnTokens,
                    PositionMode positions, int maxConversations, String modelName, long seed) {
        this.model = model;
        this.llama = llama;
        this.format = format;
        this.spec = spec;
        this.maxTurnTokens = maxTurnTokens;
        this.positions = positions;
        this.maxConversations = maxConversations;
        this.modelName = modelName;
        this.seed = seed;
    }

    String modelName() {
        return modelName;
    }

    PolicySpec policySpec() {
        return spec;
    }

    /** Conversations held now (each with its own cache). */
    synchronized int conversations() {
        return conversations.size();
    }

    /**
     * Answers {@code request} on the calling thread; {@code onText} receives the reply's text as
     * it is released. The merged defaults are already in the request's parameters.
     */
    synchronized ChatResponse chat(ChatRequest request, Consumer<String> onText) {
        if (closed) throw new IllegalStateException("the model is closed");
        GenerationParams params = params(request.parameters(), seed);
        List<Message> messages = toEngine(request.messages());
        format.validate(messages);
        Conversation c = conversationFor(messages);
        Reply reply = c.begin(messages, params, onText);
        try {
            reply.runToEnd();
        } catch (RuntimeException | Error e) {
            reply.rollback(); // the conversation stays as it was before the request (a handler may have thrown)
            throw e;
        }
        reply.commit();
        FinishReason finish = switch (reply.finishReason()) {
            case STOP -> FinishReason.STOP;
            case LENGTH -> FinishReason.LENGTH;
        };
        return ChatResponse.builder()
                .aiMessage(AiMessage.from(reply.content()))
                .tokenUsage(new TokenUsage(reply.promptTokens(), reply.completionTokens()))
                .finishReason(finish)
                .modelName(modelName)
                .build();
    }

    private Conversation conversationFor(List<Message> messages) {
        Conversation best = null;
        for (Conversation c : conversations) {
            if (c.continuedBy(messages) && (best == null || c.messages().size() > best.messages().size())) best = c;
        }
        if (best == null) {
            if (conversations.size() == maxConversations) conversations.removeFirst(); // its cache goes with it
            best = new Conversation(new Session(llama, llama.newCache(spec, maxTurnTokens, positions)), format);
        } else {
            conversations.remove(best);
        }
        conversations.addLast(best);
        return best;
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
            Message last = out.isEmpty() ? null : out.getLast();
            if (last != null && last.role() == next.role()) {
                out.set(out.size() - 1, new Message(last.role(), last.content() + "\n\n" + next.content()));
            } else {
                out.add(next);
            }
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
    public synchronized void close() {
        if (closed) return;
        closed = true;
        conversations.clear();
        llama.close();
        model.close();
    }
}
