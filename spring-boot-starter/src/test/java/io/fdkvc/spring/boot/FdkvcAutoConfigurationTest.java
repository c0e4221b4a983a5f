package io.fdkvc.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.memory.MemoryConfig;
import io.fdkvc.spring.ai.FdkvcSpringChatMemory;
import io.fdkvc.spring.ai.FdkvcSpringChatModel;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.memory.InMemoryChatMemoryRepository;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.memory.repository.jdbc.JdbcChatMemoryRepository;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.model.chat.memory.autoconfigure.ChatMemoryAutoConfiguration;
import org.springframework.ai.model.chat.memory.repository.jdbc.autoconfigure.JdbcChatMemoryRepositoryAutoConfiguration;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;

/** The starter's auto-configuration: beans present, back-off, properties bound and validated. */
class FdkvcAutoConfigurationTest {
    static final String GGUF = Path.of(System.getProperty("fdkvc.shared", "../../shared"), "models", "stories260K", "stories260K.gguf").toString();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    /** A whole Spring Boot application with the starter and two properties. */
    @Nested
    @SpringBootTest(classes = App.class, properties = {"fdkvc.memory.max-tokens=300", "fdkvc.memory.policy=fdkvc-dialogue",
            "fdkvc.memory.params.recent=0.5"})
    class InAnApplication {
        @Autowired
        ChatMemory memory;
        @Autowired
        FdkvcMemoryProperties properties;

        @Test
        void theChatMemoryIsFdkvcsWithTheProperties() {
            assertThat(memory).isInstanceOf(FdkvcSpringChatMemory.class);
            MemoryConfig c = ((FdkvcSpringChatMemory) memory).config();
            assertThat(c.maxTokens()).isEqualTo(300);
            assertThat(c.policy()).isEqualTo("fdkvc-dialogue");
            assertThat(c.parameters()).containsEntry("recent", "0.5");
            assertThat(c.packing()).isTrue();
            assertThat(c.temperature()).isEqualTo(MemoryConfig.DEFAULT_TEMPERATURE);
            memory.add("c", new UserMessage("hello there"));
            assertThat(memory.get("c")).hasSize(1);
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FdkvcAutoConfiguration.class, ChatMemoryAutoConfiguration.class));

    @Test
    void theDefaultsAreTheMemorysDefaults() {
        FdkvcMemoryProperties p = new FdkvcMemoryProperties();
        assertThat(p.getPolicy()).isEqualTo(MemoryConfig.DEFAULT_POLICY);
        assertThat(p.getTemperature()).isEqualTo(MemoryConfig.DEFAULT_TEMPERATURE);
        runner.withPropertyValues("fdkvc.memory.max-tokens=50").run(ctx -> {
            assertThat(ctx).hasSingleBean(ChatMemory.class).getBean(ChatMemory.class).isInstanceOf(FdkvcSpringChatMemory.class);
            assertThat(ctx).hasSingleBean(InMemoryChatMemoryRepository.class); // Spring AI's repository, which the memory uses
            assertThat(ctx).doesNotHaveBean(ChatModel.class); // no fdkvc.model.path
        });
    }

    @Test
    void anApplicationsOwnChatMemoryWins() {
        runner.withPropertyValues("fdkvc.memory.max-tokens=50").withUserConfiguration(OwnMemory.class)
                .run(ctx -> assertThat(ctx).hasSingleBean(ChatMemory.class).getBean(ChatMemory.class).isInstanceOf(MessageWindowChatMemory.class));
    }

    static class OwnMemory {
        @Bean
        ChatMemory chatMemory() {
            return MessageWindowChatMemory.builder().maxMessages(4).build();
        }
    }

    @Test
    void theMemoryStoresThroughTheJdbcRepository() {
        runner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
                        JdbcChatMemoryRepositoryAutoConfiguration.class))
                .withPropertyValues("fdkvc.memory.max-tokens=50", "spring.datasource.url=jdbc:h2:mem:starter;DB_CLOSE_DELAY=-1",
                        "spring.ai.chat.memory.repository.jdbc.initialize-schema=always")
                .run(ctx -> {
                    assertThat(ctx).hasSingleBean(ChatMemoryRepository.class).getBean(ChatMemoryRepository.class).isInstanceOf(JdbcChatMemoryRepository.class);
                    ChatMemory m = ctx.getBean(ChatMemory.class);
                    m.add("c", new UserMessage("hello there"));
                    // the message and, last, the memory's state
                    assertThat(ctx.getBean(ChatMemoryRepository.class).findByConversationId("c")).hasSize(2);
                });
    }

    @Test
    void badPropertiesFailTheStartNamingTheProperty() {
        Map<String, String> cases = Map.of(
                "fdkvc.memory.policy=window", "fdkvc.memory.max-tokens: is required",
                "fdkvc.memory.max-tokens=0", "fdkvc.memory.max-tokens: must be >= 1, got 0",
                "fdkvc.memory.max-tokens=50,fdkvc.memory.temperature=-1", "fdkvc.memory.temperature: must be > 0",
                "fdkvc.memory.max-tokens=50,fdkvc.memory.policy=nope", "fdkvc.memory.policy: unknown policy 'nope'",
                "fdkvc.memory.max-tokens=50,fdkvc.memory.policy=fdkvc,fdkvc.memory.params.gamma=7", "fdkvc.memory.params.gamma:");
        cases.forEach((props, message) -> runner.withPropertyValues(props.split(",")).run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining(message);
        }));
    }

    @Test
    void theModelBeanComesWithFdkvcModelPath() {
        runner.withPropertyValues("fdkvc.memory.max-tokens=50", "fdkvc.model.path=" + GGUF, "fdkvc.model.cache-budget=64",
                "fdkvc.model.threads=1").run(ctx -> {
            assertThat(ctx).hasSingleBean(ChatModel.class);
            FdkvcSpringChatModel m = ctx.getBean(FdkvcSpringChatModel.class);
            assertThat(m.cachePolicy().budget()).isEqualTo(64);
            assertThat(m.call("Once upon a time")).isNotBlank();
        });
        runner.withPropertyValues("fdkvc.memory.max-tokens=50", "fdkvc.model.path=" + GGUF, "fdkvc.model.cache-budget=0").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("fdkvc.model: cacheBudget: must be >= 1, got 0");
        });
    }
}
