package io.fdkvc.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.tokenizer.Tokenizers;
import io.fdkvc.server.ChatServer;
import io.fdkvc.server.ModelFingerprint;
import io.fdkvc.server.ServedModel;
import io.fdkvc.spring.ai.FdkvcSpringChatMemory;
import io.fdkvc.spring.ai.FdkvcSpringChatModel;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The example application end to end: the in-process model, a restart on the JDBC repository, and OpenAI's client against fdkvc serve. */
class SpringAssistantTest {
    static final Path GGUF = Path.of(System.getProperty("fdkvc.shared", "../../shared"), "models", "stories260K", "stories260K.gguf");

    @TempDir
    Path dir;

    /** Starts the application with {@code properties} as command-line arguments (which override application.properties). */
    private ConfigurableApplicationContext start(String... properties) {
        List<String> args = new java.util.ArrayList<>();
        args.add("--spring.datasource.url=jdbc:h2:file:" + dir.resolve("memory").toAbsolutePath());
        for (String p : properties) args.add("--" + p);
        return new SpringApplicationBuilder(SpringAssistant.class).run(args.toArray(String[]::new));
    }

    @Test
    void theInProcessModelAnswersAndARestartContinuesWithTheSameSelection() {
        List<String> shown;
        int stored;
        try (ConfigurableApplicationContext app = start("fdkvc.model.path=" + GGUF.toAbsolutePath(), "fdkvc.model.threads=1")) {
            assertThat(app.getBean(ChatModel.class)).isInstanceOf(FdkvcSpringChatModel.class);
            ChatMemory memory = app.getBean(ChatMemory.class);
            assertThat(memory).isInstanceOf(FdkvcSpringChatMemory.class);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            SpringAssistant.run(app.getBean(ChatClient.class), "lily", SpringAssistant.QUESTIONS, new PrintStream(out, true, StandardCharsets.UTF_8));
            assertThat(out.toString(StandardCharsets.UTF_8)).contains("> " + SpringAssistant.QUESTIONS.getLast());
            FdkvcSpringChatMemory m = (FdkvcSpringChatMemory) memory;
            stored = m.transcript("lily").size();
            assertThat(stored).isEqualTo(2 * SpringAssistant.QUESTIONS.size()); // every question and reply kept in the repository
            shown = texts(memory.get("lily"));
            assertThat(shown.size()).as("48 tokens cannot show all of it").isLessThan(stored);
            assertThat(tokens(m, memory.get("lily"))).isLessThanOrEqualTo(48);
        }
        try (ConfigurableApplicationContext app = start("fdkvc.model.path=" + GGUF.toAbsolutePath(), "fdkvc.model.threads=1")) {
            ChatMemory memory = app.getBean(ChatMemory.class);
            assertThat(texts(memory.get("lily"))).as("the same selection after the restart").isEqualTo(shown);
            SpringAssistant.ask(app.getBean(ChatClient.class), "lily", "And then?");
            assertThat(((FdkvcSpringChatMemory) memory).transcript("lily")).hasSize(stored + 2);
        }
    }

    @Test
    void openAisClientWorksAgainstFdkvcServe() throws Exception {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        try (LoadedModel m = GgufModelLoader.load(GGUF);
             Llama llama = new Llama(m.config(), m.weights(), 32, 1);
             ChatServer server = new ChatServer(new ChatServer.Options("127.0.0.1", 0, 4, null, null, 1, 0, 32, 64 * 1024, 0f, 1f),
                     new PrintStream(log, true, StandardCharsets.UTF_8))) {
            ChatFormat format = new ChatFormat(ChatTemplate.select(null, m.vocabulary(), w -> { }), Tokenizers.from(m.vocabulary()));
            server.ready(new ServedModel("stories260K", ModelFingerprint.of(GGUF, m.config()), llama, format,
                    PolicyRegistry.spec("fdkvc", 64), 64, PositionMode.CACHE));
            try (ConfigurableApplicationContext app = start("spring.ai.model.chat=openai", "spring.ai.openai.api-key=none",
                    "spring.ai.openai.base-url=http://127.0.0.1:" + server.port() + "/v1", "spring.ai.openai.chat.model=stories260K",
                    "spring.ai.openai.chat.max-tokens=24")) {
                assertThat(app.getBean(ChatModel.class)).isNotInstanceOf(FdkvcSpringChatModel.class);
                ChatClient client = app.getBean(ChatClient.class);
                for (String q : SpringAssistant.QUESTIONS.subList(0, 3)) assertThat(SpringAssistant.ask(client, "tom", q)).isNotBlank();
                FdkvcSpringChatMemory memory = (FdkvcSpringChatMemory) app.getBean(ChatMemory.class);
                assertThat(memory.transcript("tom")).hasSize(6);
                assertThat(tokens(memory, memory.get("tom"))).isLessThanOrEqualTo(48);
            }
        }
    }

    private static List<String> texts(List<Message> messages) {
        return messages.stream().map(x -> x.getMessageType() + ":" + x.getText()).toList();
    }

    /** Tokens shown, by the memory's default count (WordPiece of all-MiniLM-L6-v2). */
    private static int tokens(FdkvcSpringChatMemory memory, List<Message> messages) {
        int n = 0;
        for (Message x : messages) n += Math.max(1, io.fdkvc.memory.MiniLm.tokenCounter().applyAsInt(x.getText()));
        return n;
    }
}
