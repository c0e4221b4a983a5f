package io.fdkvc.engine;

import io.fdkvc.core.InputException;

/** A model, tokenizer or GGUF file that is missing, broken or unsupported; the message names the file and the problem. */
public class ModelFormatException extends InputException {
    public ModelFormatException(String message) {
        super(message);
    }

    public ModelFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
