package io.fdkvc.spring.boot;

import io.fdkvc.core.InputException;
import io.fdkvc.spring.ai.FdkvcSpringChatMemory;
import io.fdkvc.spring.ai.FdkvcSpringChatModel;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.memory.InMemoryChatMemoryRepository;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The fdkvc {@link ChatMemory} (over the application's {@link ChatMemoryRepository}, e.g. the one
 * Spring AI's JDBC starter configures, else an in-memory one) and, when {@code fdkvc.model.path}
 * is set, the in-process {@link ChatModel}. Both back off when the application defines its own
 * bean of the type. Runs before Spring AI's chat memory auto-configuration, whose
 * {@code MessageWindowChatMemory} then backs off.
 */
@AutoConfiguration(beforeName = "org.springframework.ai.model.chat.memory.autoconfigure.ChatMemoryAutoConfiguration",
        afterName = "org.springframework.ai.model.chat.memory.repository.jdbc.autoconfigure.JdbcChatMemoryRepositoryAutoConfiguration")
@EnableConfigurationProperties({FdkvcMemoryProperties.class, FdkvcModelProperties.class})
public class FdkvcAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(ChatMemory.class)
    FdkvcSpringChatMemory fdkvcChatMemory(FdkvcMemoryProperties p, ObjectProvider<ChatMemoryRepository> repository) {
        return FdkvcSpringChatMemory.builder()
                .maxTokens(p.getMaxTokens())
                .policy(p.getPolicy())
                .policyParameters(p.getParams())
                .temperature(p.getTemperature())
                .packing(p.isPacking())
                .chatMemoryRepository(repository.getIfAvailable(InMemoryChatMemoryRepository::new))
                .build();
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(prefix = "fdkvc.model", name = "path")
    @ConditionalOnMissingBean(ChatModel.class)
    FdkvcSpringChatModel fdkvcChatModel(FdkvcModelProperties p) {
        FdkvcSpringChatModel.Builder b = FdkvcSpringChatModel.builder().modelPath(p.getPath()).policy(p.getPolicy())
                .cacheBudget(p.getCacheBudget()).maxTurnTokens(p.getMaxTurnTokens()).maxConversations(p.getMaxConversations())
                .seed(p.getSeed()).temperature(p.getTemperature()).topP(p.getTopP()).maxTokens(p.getMaxTokens())
                .stopSequences(p.getStopSequences());
        p.getParams().forEach(b::policyParameter);
        if (p.getTemplate() != null) b.template(p.getTemplate());
        if (p.getThreads() != null) b.threads(p.getThreads());
        try {
            return b.build();
        } catch (InputException e) {
            // the builder names its option (cacheBudget: ...): say which property that is
            throw new InputException("fdkvc.model: " + e.getMessage());
        }
    }
}
