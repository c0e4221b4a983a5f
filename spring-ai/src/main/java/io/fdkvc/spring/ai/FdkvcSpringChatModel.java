package io.fdkvc.spring.ai;

import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.chat.GenerationParams;
import io.fdkvc.engine.chat.LocalChat;
import io.fdkvc.engine.chat.LocalChatBuilder;
import io.fdkvc.engine.template.ChatTemplate;
import java.util.ArrayList;
import java.util.List;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.metadata.ChatGenerationMetadata;
import org.springframework.ai.chat.metadata.ChatResponseMetadata;
import org.springframework.ai.chat.metadata.DefaultUsage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * A Spring AI {@link ChatModel} (streaming too) running a GGUF model in-process on the fdkvc
 * engine, whose attention reads a policy-bounded KV cache: memory per conversation stays at the
 * cache budget however long the conversation gets.
 *
 * <p>Each conversation keeps its own cache (engine {@link LocalChat}). A prompt names its
 * conversation by the tool context entry {@link ChatMemory#CONVERSATION_ID} of its
 * {@link ToolCallingChatOptions} (the key {@code MessageChatMemoryAdvisor} reads;
 * {@link FdkvcConversationAdvisor} copies it there from the advisor context); a prompt without one is
 * matched to the held conversation whose transcript it extends. A prompt that extends its
 * conversation's transcript feeds only its new messages; in front of a memory that drops old
 * messages the prompt changes from the front and is read afresh.
 *
 * <p>Sampling comes from the prompt's {@link ChatOptions} (temperature, topP, maxTokens,
 * stopSequences), defaulted by the builder's; the seed is the builder's. Tool callbacks, topK
 * and penalties are refused ({@link UnsupportedOperationException}), not ignored; consecutive
 * messages of one role are joined into one turn. Requests are served one at a time.
 * {@link #close()} releases the model's memory mapping.
 */
public final class FdkvcSpringChatModel implements ChatModel, AutoCloseable {
    /** Reply tokens when neither the builder nor the prompt sets {@code maxTokens}. */
    public static final int DEFAULT_MAX_TOKENS = 256;

    private final LocalChat chat;
    private final ChatOptions defaults;
    private final long seed;

    private FdkvcSpringChatModel(LocalChat chat, ChatOptions defaults, long seed) {
        this.chat = chat;
        this.defaults = defaults;
        this.seed = seed;
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public ChatResponse call(Prompt prompt) {
        LocalChat.Answer a = chat.chat(conversationId(prompt), toEngine(prompt.getInstructions()), params(prompt.getOptions()), null);
        return response(a.content(), a);
    }

    @Override
    public Flux<ChatResponse> stream(Prompt prompt) {
        Object key = conversationId(prompt);
        List<ChatTemplate.Message> messages = toEngine(prompt.getInstructions());
        GenerationParams params = params(prompt.getOptions());
        return Flux.<ChatResponse>create(sink -> {
            try {
                LocalChat.Answer a = chat.chat(key, messages, params, text -> sink.next(response(text, null)));
                sink.next(response("", a)); // the finish reason and usage, no text: aggregators join the chunks' texts
                sink.complete();
            } catch (RuntimeException e) {
                sink.error(e);
            }
        }).subscribeOn(Schedulers.boundedElastic());
    }

    @Override
    public ChatOptions getDefaultOptions() {
        return defaults;
    }

    /** The KV cache policy of every conversation. */
    public PolicySpec cachePolicy() {
        return chat.policySpec();
    }

    /** Conversations held now, each with its own cache. */
    public int conversations() {
        return chat.conversations();
    }

    @Override
    public void close() {
        chat.close();
    }

    private ChatResponse response(String text, LocalChat.Answer answer) {
        ChatGenerationMetadata.Builder meta = ChatGenerationMetadata.builder();
        ChatResponseMetadata.Builder responseMeta = ChatResponseMetadata.builder().model(chat.modelName());
        if (answer != null) {
            meta.finishReason(answer.finishReason().name());
            responseMeta.usage(new DefaultUsage(answer.promptTokens(), answer.completionTokens()));
        }
        return new ChatResponse(List.of(new Generation(new AssistantMessage(text), meta.build())), responseMeta.build());
    }

    private static Object conversationId(Prompt prompt) {
        if (prompt.getOptions() instanceof ToolCallingChatOptions t && t.getToolContext() != null) {
            return t.getToolContext().get(ChatMemory.CONVERSATION_ID);
        }
        return null;
    }

    /** Sampling options: the prompt's, else the defaults'. Options the engine has no counterpart for are refused. */
    GenerationParams params(ChatOptions o) {
        if (o instanceof ToolCallingChatOptions t && t.getToolCallbacks() != null && !t.getToolCallbacks().isEmpty()) {
            throw new UnsupportedOperationException("tool callbacks are not supported by the fdkvc engine's chat formats");
        }
        if (o != null && o.getTopK() != null) throw new UnsupportedOperationException("topK is not supported (use topP)");
        if (o != null && o.getFrequencyPenalty() != null) throw new UnsupportedOperationException("frequencyPenalty is not supported");
        if (o != null && o.getPresencePenalty() != null) throw new UnsupportedOperationException("presencePenalty is not supported");
        Double temperature = pick(o == null ? null : o.getTemperature(), defaults.getTemperature());
        Double topP = pick(o == null ? null : o.getTopP(), defaults.getTopP());
        Integer maxTokens = pick(o == null ? null : o.getMaxTokens(), defaults.getMaxTokens());
        List<String> stop = pick(o == null ? null : o.getStopSequences(), defaults.getStopSequences());
        return new GenerationParams(maxTokens, temperature.floatValue(), topP.floatValue(), seed, stop);
    }

    private static <T> T pick(T value, T fallback) {
        return value != null ? value : fallback;
    }

    /** Spring AI's messages as the engine's: the system message first, then user and assistant turns (runs of one role joined). */
    static List<ChatTemplate.Message> toEngine(List<Message> messages) {
        List<ChatTemplate.Message> out = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            Message m = messages.get(i);
            ChatTemplate.Message next = switch (m) {
                case SystemMessage s -> {
                    if (!out.isEmpty()) throw new InputException("messages[" + i + "]: a system message is only allowed first");
                    yield ChatTemplate.Message.system(s.getText());
                }
                case UserMessage u -> {
                    if (!u.getMedia().isEmpty()) throw new UnsupportedOperationException("messages[" + i + "]: media is not supported (text only)");
                    yield ChatTemplate.Message.user(u.getText());
                }
                case AssistantMessage a -> {
                    if (a.hasToolCalls()) throw new UnsupportedOperationException("messages[" + i + "]: tool calls are not supported");
                    yield ChatTemplate.Message.assistant(a.getText() == null ? "" : a.getText());
                }
                default -> throw new UnsupportedOperationException("messages[" + i + "]: " + m.getMessageType() + " messages are not supported");
            };
            LocalChat.append(out, next);
        }
        return out;
    }

    /** Builds a {@link FdkvcSpringChatModel}; only {@code modelPath} is required. */
    public static final class Builder extends LocalChatBuilder<Builder> {
        private double temperature = 0;
        private double topP = 1;
        private int maxTokens = DEFAULT_MAX_TOKENS;
        private List<String> stopSequences = List.of();

        private Builder() {}

        /** Default sampling temperature, 0 for greedy (default 0). */
        public Builder temperature(double temperature) {
            this.temperature = temperature;
            return this;
        }

        /** Default nucleus mass in (0, 1] (default 1). */
        public Builder topP(double topP) {
            this.topP = topP;
            return this;
        }

        /** Default most reply tokens (default {@value #DEFAULT_MAX_TOKENS}). */
        public Builder maxTokens(int tokens) {
            this.maxTokens = tokens;
            return this;
        }

        /** Default texts that end a reply, besides the chat format's own. */
        public Builder stopSequences(List<String> stops) {
            this.stopSequences = List.copyOf(stops);
            return this;
        }

        /**
         * Validates everything, then loads the model.
         *
         * @throws InputException naming the option or the file at fault
         */
        public FdkvcSpringChatModel build() {
            LocalChat.Options options = options();
            ChatOptions defaults = ChatOptions.builder().temperature(temperature).topP(topP).maxTokens(maxTokens).stopSequences(stopSequences).build();
            new GenerationParams(maxTokens, (float) temperature, (float) topP, seed(), stopSequences); // checked now, not at the first request
            LocalChat chat = LocalChat.open(options, w -> System.getLogger("io.fdkvc.spring.ai").log(System.Logger.Level.WARNING, w));
            return new FdkvcSpringChatModel(chat, defaults, seed());
        }
    }
}
