package io.fdkvc.spring.ai;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.springframework.ai.chat.memory.repository.jdbc.JdbcChatMemoryRepository;
import org.springframework.ai.content.MediaContent;
import org.springframework.ai.document.Document;
import org.springframework.ai.embedding.Embedding;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.ai.embedding.EmbeddingRequest;
import org.springframework.ai.embedding.EmbeddingResponse;
import org.springframework.ai.tokenizer.TokenCountEstimator;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/** Deterministic stand-ins for the ONNX models, and Spring AI's JDBC repository on an H2 file database. */
final class Fakes {
    private Fakes() {}

    static final int DIM = 8;

    /** Bag of words hashed into 8 dimensions, plus a constant so that no vector is zero. */
    static float[] words(String text) {
        float[] v = new float[DIM];
        v[0] = 0.25f;
        for (String w : text.toLowerCase().split("\\W+")) {
            if (!w.isEmpty()) v[Math.floorMod(w.hashCode(), DIM)] += 1;
        }
        return v;
    }

    /** One token per word, at least one. */
    static int wordCount(String text) {
        int n = 0;
        for (String w : text.trim().split("\\s+")) if (!w.isEmpty()) n++;
        return Math.max(1, n);
    }

    static final class WordEmbeddings implements EmbeddingModel {
        int calls;

        @Override
        public EmbeddingResponse call(EmbeddingRequest request) {
            List<Embedding> out = new ArrayList<>();
            for (String s : request.getInstructions()) out.add(new Embedding(embed(s), out.size()));
            return new EmbeddingResponse(out);
        }

        @Override
        public float[] embed(String text) {
            calls++;
            return words(text);
        }

        @Override
        public float[] embed(Document document) {
            return embed(document.getText());
        }

        @Override
        public int dimensions() {
            return DIM;
        }
    }

    static class WordCount implements TokenCountEstimator {
        @Override
        public int estimate(String text) {
            return wordCount(text);
        }

        @Override
        public int estimate(MediaContent content) {
            return wordCount(content.getText());
        }

        @Override
        public int estimate(Iterable<MediaContent> messages) {
            int n = 0;
            for (MediaContent m : messages) n += estimate(m);
            return n;
        }
    }

    /** An H2 database in a file under {@code dir}, with Spring AI's chat memory table. */
    static DataSource h2(Path dir) {
        return h2("jdbc:h2:file:" + dir.resolve("memory").toAbsolutePath());
    }

    /** An H2 database in memory (kept until the JVM ends), with Spring AI's chat memory table. */
    static DataSource h2Memory(String name) {
        return h2("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1");
    }

    private static DataSource h2(String url) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(url);
        new ResourceDatabasePopulator(new ClassPathResource("org/springframework/ai/chat/memory/repository/jdbc/schema-h2.sql")).execute(ds);
        return ds;
    }

    /** A new JDBC repository on {@code ds}: what an application restarted on the same database gets. */
    static JdbcChatMemoryRepository jdbc(DataSource ds) {
        return JdbcChatMemoryRepository.builder().dataSource(ds).build();
    }
}
