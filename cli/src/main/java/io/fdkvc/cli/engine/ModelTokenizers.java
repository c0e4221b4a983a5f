package io.fdkvc.cli.engine;

import io.fdkvc.engine.gguf.GgufFile;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.tokenizer.GgufVocabulary;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import io.fdkvc.engine.tokenizer.Vocabulary;

/** The tokenizer of a loaded model, with the flags its GGUF file stores (add_bos_token, add_space_prefix). */
public final class ModelTokenizers {
    private ModelTokenizers() {}

    /** The model's vocabulary; for a GGUF model with the file's add_bos_token and add_space_prefix. */
    public static Vocabulary vocabulary(LoadedModel m) {
        return m.resource() instanceof GgufFile f ? GgufVocabulary.withFlags(m.vocabulary(), f) : m.vocabulary();
    }

    public static Tokenizer tokenizer(LoadedModel m) {
        return Tokenizers.from(vocabulary(m));
    }
}
