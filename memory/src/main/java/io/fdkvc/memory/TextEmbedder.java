package io.fdkvc.memory;

/** Turns the text of a transcript entry into a sentence embedding (any length, any norm: the selection normalises it). */
@FunctionalInterface
public interface TextEmbedder {
    float[] embed(String text);
}
