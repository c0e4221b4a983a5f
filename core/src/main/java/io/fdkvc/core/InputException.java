package io.fdkvc.core;

/**
 * A problem with what the user gave (a parameter, a file, a trace): its message names the field,
 * the file or the parameter. The command line reports it as one line and exits with status 2.
 * Every module throws a subclass of this for bad input and nothing else.
 */
public class InputException extends RuntimeException {
    public InputException(String message) {
        super(message);
    }

    public InputException(String message, Throwable cause) {
        super(message, cause);
    }
}
