package io.fdkvc.cli.engine;

import io.fdkvc.engine.model.LoadedModel;
import java.nio.file.Path;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The options of a command that runs one model file: the file, how to sample, and the engine options. */
public final class ModelOptions {
    @Option(names = "--model", paramLabel = "FILE", required = true, description = "model file: .gguf or llama2.c .bin")
    public Path model;

    @Mixin
    public SamplingOptions sampling;

    @Mixin
    public EngineOptions engine;

    /** Opens --model (with --tokenizer for a llama2.c checkpoint). */
    public LoadedModel load() {
        return engine.load(model);
    }
}
