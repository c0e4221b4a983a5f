package io.fdkvc.engine.model;

/**
 * A model file's metadata as an {@link Architecture} reads it while describing its blocks: typed
 * values of the architecture's keys ({@code {arch}.suffix}), with defaults, each failure one
 * {@link io.fdkvc.engine.ModelFormatException} naming the file and the key.
 */
public interface ModelMetadata {
    /** Whether key {@code {arch}.suffix} is present. */
    boolean has(String suffix);

    /** A positive 32-bit integer, or {@code def} when absent ({@code def < 0}: required). */
    int positiveInt(String suffix, int def);

    /** A number, or {@code def} when absent. */
    double number(String suffix, double def);

    /** A boolean per layer ({@code {arch}.suffix} stored as an array), or null when absent or not an array. */
    boolean[] flags(String suffix);

    /** A failure naming the file, to throw. */
    RuntimeException fail(String problem);
}
