package io.fdkvc.examples.spring;

import io.fdkvc.spring.ai.FdkvcConversationAdvisor;
import java.io.PrintStream;
import java.util.List;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.MessageChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Boot chat assistant on the fdkvc memory: the starter configures the
 * {@link ChatMemory} from {@code fdkvc.memory.*} (application.properties) over Spring AI's JDBC
 * repository on an embedded H2 database, so a restarted application continues its conversations
 * with the same memory selection. The chat model is the in-process one ({@code fdkvc.model.path})
 * or any Spring AI model, e.g. OpenAI's against an {@code fdkvc serve}
 * ({@code spring.ai.model.chat=openai}, {@code spring.ai.openai.base-url}).
 */
@SpringBootApplication
public class SpringAssistant {

    /** Stories for a tiny story model: each question continues the conversation. */
    static final List<String> QUESTIONS = List.of("Once upon a time there was a girl named Lily.", "What did Lily find in the park?",
            "Who was her friend?", "What happened at the end?");

    @Bean
    ChatClient chatClient(ChatClient.Builder builder, ChatMemory memory) {
        return builder.defaultAdvisors(MessageChatMemoryAdvisor.builder(memory).build(), new FdkvcConversationAdvisor()).build();
    }

    /** Asks {@code question} in {@code conversation}; the memory chooses what of it the model sees. */
    public static String ask(ChatClient client, String conversation, String question) {
        return client.prompt().user(question).advisors(a -> a.param(ChatMemory.CONVERSATION_ID, conversation)).call().content();
    }

    /** Asks the questions in one conversation, printing each exchange. */
    public static void run(ChatClient client, String conversation, List<String> questions, PrintStream out) {
        for (String q : questions) {
            out.println("> " + q);
            out.println(ask(client, conversation, q));
        }
    }

    public static void main(String[] args) {
        try (var context = SpringApplication.run(SpringAssistant.class, args)) {
            run(context.getBean(ChatClient.class), "story", QUESTIONS, System.out);
        }
    }
}
