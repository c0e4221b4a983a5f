package io.fdkvc.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.embedding.onnx.HuggingFaceTokenCountEstimator;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import io.fdkvc.langchain4j.FdkvcChatMemory;
import io.fdkvc.langchain4j.FdkvcChatModel;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Runs the example end to end on stories260K, with the memory's real defaults (MiniLM embeddings and token count). */
class TinyAssistantTest {

    @Test
    void theAssistantAnswersEveryQuestionWithinTheMemorysBudget() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        InMemoryChatMemoryStore store = new InMemoryChatMemoryStore();
        FdkvcChatMemory memory = TinyAssistant.memory(store);
        Path gguf = Path.of(System.getProperty("fdkvc.shared", "../../shared"), "models", "stories260K", "stories260K.gguf");
        try (FdkvcChatModel model = TinyAssistant.localModel(gguf)) {
            TinyAssistant.run(model, memory, out);
        }
        List<ChatMessage> shown = assertAnsweredWithinBudget(memory, bytes.toString(StandardCharsets.UTF_8));

        // a restart: a memory rebuilt from the store shows the same prompt
        assertThat(TinyAssistant.memory(store).messages()).isEqualTo(shown);
    }

    /**
     * What both set-ups must show: every question asked and answered, the whole transcript in the
     * memory, and a prompt (returned) of at most 48 tokens that starts with the system message and
     * holds fewer messages than the transcript.
     */
    static List<ChatMessage> assertAnsweredWithinBudget(FdkvcChatMemory memory, String printed) {
        for (String q : TinyAssistant.QUESTIONS) assertThat(printed).contains("> " + q);

        // the transcript holds everything: the system message, then each question and its answer
        List<ChatMessage> transcript = memory.transcript();
        assertThat(transcript).hasSize(1 + 2 * TinyAssistant.QUESTIONS.size());
        assertThat(transcript.getFirst()).isEqualTo(SystemMessage.from("You are a storyteller."));
        for (int i = 0; i < TinyAssistant.QUESTIONS.size(); i++) {
            assertThat(transcript.get(1 + 2 * i)).isEqualTo(UserMessage.from(TinyAssistant.QUESTIONS.get(i)));
            assertThat(transcript.get(2 + 2 * i)).isInstanceOf(AiMessage.class);
            assertThat(((AiMessage) transcript.get(2 + 2 * i)).text()).isNotBlank();
        }
        // the prompt: the system message first, within 48 tokens, fewer messages than the transcript
        List<ChatMessage> shown = memory.messages();
        HuggingFaceTokenCountEstimator tokens = new HuggingFaceTokenCountEstimator();
        int total = 0;
        for (ChatMessage m : shown) total += tokens.estimateTokenCountInMessage(m);
        assertThat(total).isLessThanOrEqualTo(48);
        assertThat(shown.getFirst()).isEqualTo(transcript.getFirst());
        assertThat(shown.size()).isLessThan(transcript.size());
        assertThat(shown.getLast()).isEqualTo(transcript.getLast());

        return shown;
    }
}
