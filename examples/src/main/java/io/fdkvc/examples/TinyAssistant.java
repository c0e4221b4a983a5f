package io.fdkvc.examples;

import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.memory.ChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.SystemMessage;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import io.fdkvc.langchain4j.FdkvcChatMemory;
import io.fdkvc.langchain4j.FdkvcChatModel;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;

/**
 * A LangChain4j assistant ({@link AiServices}) whose prompt is chosen by {@link FdkvcChatMemory}
 * and answered by {@link FdkvcChatModel}: a GGUF model run in-process over a policy-bounded KV
 * cache. With the tiny stories260K model the answers are children's-story fragments; the point is
 * the wiring, which is the same for a real model.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp ... io.fdkvc.examples.TinyAssistant [MODEL.gguf] [--openai BASE_URL]
 * </pre>
 *
 * With {@code --openai BASE_URL} the same memory sits in front of an OpenAI-compatible endpoint
 * instead (e.g. {@code fdkvc serve}: {@code --openai http://localhost:8080/v1}).
 */
public final class TinyAssistant {

    /** What the application calls; AiServices implements it. */
    interface Assistant {
        @SystemMessage("You are a storyteller.")
        String chat(String message);
    }

    static final List<String> QUESTIONS = List.of("Once upon a time there was a cat.", "What did the cat do?",
            "Tell me about the dog.", "Where did they go?");

    private TinyAssistant() {}

    public static void main(String[] args) {
        Path model = Path.of(System.getProperty("fdkvc.shared", "../shared"), "models", "stories260K", "stories260K.gguf");
        String openAi = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--openai") && i + 1 < args.length) openAi = args[++i];
            else model = Path.of(args[i]);
        }
        ChatMemoryStore store = new InMemoryChatMemoryStore();
        if (openAi != null) {
            run(openAiCompatible(openAi), memory(store), System.out);
            return;
        }
        try (FdkvcChatModel local = localModel(model)) {
            run(local, memory(store), System.out);
        }
    }

    /** The in-process model: greedy, short replies, a 128-token FD-KVC cache per conversation. */
    static FdkvcChatModel localModel(Path gguf) {
        return FdkvcChatModel.builder()
                .modelPath(gguf)
                .policy("fdkvc").cacheBudget(128)
                .temperature(0).maxOutputTokens(24)
                .threads(1)
                .build();
    }

    /**
     * The memory: at most 48 tokens of prompt (MiniLM's WordPiece count), chosen by the default
     * policy, {@code fdkvc-dialogue}, over MiniLM embeddings and the words of the messages; the
     * whole transcript stays in {@code store}.
     */
    static FdkvcChatMemory memory(ChatMemoryStore store) {
        return FdkvcChatMemory.builder()
                .id("example")
                .maxTokens(48)
                .chatMemoryStore(store)
                .build();
    }

    /**
     * The same memory in front of any OpenAI-compatible endpoint, e.g. {@code fdkvc serve} (once
     * the server is merged: {@code baseUrl = "http://localhost:8080/v1"}).
     */
    static ChatModel openAiCompatible(String baseUrl) {
        return OpenAiChatModel.builder()
                .baseUrl(baseUrl)
                .apiKey("not-needed")
                .modelName("stories260K")
                .temperature(0.0)
                .maxTokens(24)
                .build();
    }

    /** Asks {@link #QUESTIONS} through an assistant on {@code model} and {@code memory}; prints each exchange. */
    static void run(ChatModel model, ChatMemory memory, PrintStream out) {
        Assistant assistant = AiServices.builder(Assistant.class).chatModel(model).chatMemory(memory).build();
        for (String q : QUESTIONS) {
            String answer = assistant.chat(q);
            List<ChatMessage> prompt = memory.messages();
            out.println("> " + q);
            out.println(answer);
            out.println("  [memory shows " + prompt.size() + " messages]");
        }
    }
}
