package io.fdkvc.langchain4j;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ChatMessageDeserializer;
import dev.langchain4j.data.message.ChatMessageSerializer;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.TokenCountEstimator;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.output.Response;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Deterministic stand-ins for the ONNX models, and a store that keeps JSON as real stores do. */
final class Fakes {
    private Fakes() {}

    static final int DIM = 8;

    /** Bag of words hashed into 8 dimensions, plus a constant so that no vector is zero. */
    static final class WordEmbeddings implements EmbeddingModel {
        int calls;

        @Override
        public Response<List<Embedding>> embedAll(List<TextSegment> segments) {
            List<Embedding> out = new ArrayList<>();
            for (TextSegment s : segments) {
                calls++;
                float[] v = new float[DIM];
                v[0] = 0.25f;
                for (String w : s.text().toLowerCase().split("\\W+")) {
                    if (!w.isEmpty()) v[Math.floorMod(w.hashCode(), DIM)] += 1;
                }
                out.add(Embedding.from(v));
            }
            return Response.from(out);
        }

        @Override
        public int dimension() {
            return DIM;
        }
    }

    /** One token per word of the memory's text of a message, at least one. */
    static final class WordCount implements TokenCountEstimator {
        @Override
        public int estimateTokenCountInText(String text) {
            int n = 0;
            for (String w : text.trim().split("\\s+")) if (!w.isEmpty()) n++;
            return Math.max(1, n);
        }

        @Override
        public int estimateTokenCountInMessage(ChatMessage message) {
            return estimateTokenCountInText(FdkvcChatMemory.text(message));
        }

        @Override
        public int estimateTokenCountInMessages(Iterable<ChatMessage> messages) {
            int n = 0;
            for (ChatMessage m : messages) n += estimateTokenCountInMessage(m);
            return n;
        }
    }

    /** Keeps each id's messages as LangChain4j JSON, so a round trip loses what JSON loses. */
    static final class JsonStore implements ChatMemoryStore {
        final Map<Object, String> json = new HashMap<>();

        @Override
        public List<ChatMessage> getMessages(Object id) {
            String s = json.get(id);
            return s == null ? List.of() : ChatMessageDeserializer.messagesFromJson(s);
        }

        @Override
        public void updateMessages(Object id, List<ChatMessage> messages) {
            json.put(id, ChatMessageSerializer.messagesToJson(messages));
        }

        @Override
        public void deleteMessages(Object id) {
            json.remove(id);
        }
    }
}
