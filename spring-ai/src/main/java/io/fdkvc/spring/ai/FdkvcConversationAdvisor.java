package io.fdkvc.spring.ai;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.client.advisor.api.AdvisorChain;
import org.springframework.ai.chat.client.advisor.api.BaseAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

/**
 * Hands the advisor context's conversation id ({@link ChatMemory#CONVERSATION_ID}, the one
 * {@code MessageChatMemoryAdvisor} reads) to the chat model, as the same entry of the prompt's
 * tool context: a {@link FdkvcSpringChatModel} then keeps that conversation's cache apart from
 * the others'. A request without a conversation id passes unchanged; other chat models ignore
 * the entry (it is read only by tools, and the fdkvc model has none).
 */
public final class FdkvcConversationAdvisor implements BaseAdvisor {
    private final int order;

    /** At order 0: anywhere in the chain does, the model is called after every advisor. */
    public FdkvcConversationAdvisor() {
        this(0);
    }

    public FdkvcConversationAdvisor(int order) {
        this.order = order;
    }

    @Override
    public int getOrder() {
        return order;
    }

    @Override
    public ChatClientRequest before(ChatClientRequest request, AdvisorChain chain) {
        Object id = request.context().get(ChatMemory.CONVERSATION_ID);
        if (id == null) return request;
        ChatOptions o = request.prompt().getOptions();
        Map<String, Object> context = new LinkedHashMap<>();
        ToolCallingChatOptions.Builder<?> b;
        if (o instanceof ToolCallingChatOptions t) {
            b = t.mutate();
            if (t.getToolContext() != null) context.putAll(t.getToolContext());
        } else {
            b = ToolCallingChatOptions.builder();
            if (o != null) {
                b.model(o.getModel()).temperature(o.getTemperature()).topP(o.getTopP()).topK(o.getTopK()).maxTokens(o.getMaxTokens())
                        .stopSequences(o.getStopSequences()).frequencyPenalty(o.getFrequencyPenalty()).presencePenalty(o.getPresencePenalty());
            }
        }
        context.put(ChatMemory.CONVERSATION_ID, id);
        ToolCallingChatOptions options = b.toolContext(context).build();
        return request.mutate().prompt(request.prompt().mutate().chatOptions(options).build()).build();
    }

    @Override
    public ChatClientResponse after(ChatClientResponse response, AdvisorChain chain) {
        return response;
    }
}
