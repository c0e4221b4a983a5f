package io.fdkvc.cli.engine;

import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.Llama2cLoader;
import io.fdkvc.engine.model.LoadedModel;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Opens a model file of either format the engine reads. */
public final class ModelFiles {
    private ModelFiles() {}

    /**
     * A GGUF file (by its magic "GGUF", whatever the extension) carries its tokenizer; a file
     * named .gguf without the magic is refused as such; anything else is read as a llama2.c
     * checkpoint, which needs {@code tokenizer}.
     */
    public static LoadedModel load(Path model, Path tokenizer) {
        if (model == null) throw new ModelFormatException("--model is required");
        if (Files.isDirectory(model)) throw new ModelFormatException(model + ": is a directory, not a model file");
        boolean magic = isGguf(model);
        if (magic) return loadGguf(model);
        if (model.getFileName().toString().toLowerCase(java.util.Locale.ROOT).endsWith(".gguf")) {
            throw new ModelFormatException(model + ": not a GGUF file (it does not start with the magic 'GGUF')");
        }
        if (tokenizer == null) {
            throw new ModelFormatException(model + ": not a GGUF file, so read as a llama2.c checkpoint, which needs --tokenizer FILE");
        }
        return Llama2cLoader.load(model, tokenizer);
    }

    private static LoadedModel loadGguf(Path model) {
        return GgufModelLoader.load(model);
    }

    static boolean isGguf(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] m = in.readNBytes(4);
            return m.length == 4 && m[0] == 'G' && m[1] == 'G' && m[2] == 'U' && m[3] == 'F';
        } catch (NoSuchFileException e) {
            throw new ModelFormatException(file + ": no such model file");
        } catch (IOException e) {
            throw new ModelFormatException(file + ": cannot read: " + e.getMessage(), e);
        }
    }
}
