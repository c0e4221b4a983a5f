package io.fdkvc.cli;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParameterException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import picocli.CommandLine.Model.CommandSpec;

/**
 * What the user is told about a {@link Throwable} that reached the top: one message and an exit
 * status. Bad input (an {@link InputException} anywhere in the cause chain, including a model
 * file truncated while it is mapped) is status 2; a lack of memory or an I/O failure is status 1
 * with what to do about it; anything else is an internal fault, status 1, with a request to
 * report it. The caller escapes and caps the message ({@link io.fdkvc.core.Untrusted}).
 */
record Failure(int status, String message) {
    static final String REPORT = " (this is a bug in fdkvc: please report it; FDKVC_DEBUG=1 prints the stack trace)";

    static Failure of(Throwable t) {
        return of(t, null);
    }

    /**
     * @param command the command that ran, or null: a library {@link ParameterException} is
     *                reported under the command's option for that parameter
     */
    static Failure of(Throwable t, CommandSpec command) {
        for (Throwable c = t; c != null; c = next(c)) {
            if (c instanceof ParameterException pe) {
                String option = optionOf(pe.parameter(), command);
                if (option != null) return new Failure(Main.BAD_INPUT, option + ": " + pe.problem());
            }
            if (c instanceof InputException ie) return new Failure(Main.BAD_INPUT, String.valueOf(ie.getMessage()));
        }
        for (Throwable c = t; c != null; c = next(c)) {
            if (c instanceof OutOfMemoryError) {
                long mib = Runtime.getRuntime().maxMemory() >> 20;
                return new Failure(1, "out of memory (this JVM may use " + mib + " MiB): choose smaller sizes or give the JVM "
                        + "more, e.g. FDKVC_JAVA_OPTS=-Xmx8g; see docs/limits.md");
            }
            // the JVM's answer to touching a mapped page whose file has shrunk since it was mapped
            if (c instanceof InternalError && String.valueOf(c.getMessage()).contains("unsafe memory access")) {
                return new Failure(Main.BAD_INPUT, "a memory-mapped input file (the model) was truncated or changed while in use");
            }
            if (c instanceof StackOverflowError) {
                return new Failure(1, "internal error: stack overflow" + REPORT);
            }
        }
        for (Throwable c = t; c != null; c = next(c)) {
            if (c instanceof IOException) return new Failure(1, "input/output error: " + c.getMessage());
        }
        for (Throwable c = t; c != null; c = next(c)) {
            if (c instanceof UncheckedIOException) return new Failure(1, "input/output error: " + c.getMessage());
        }
        return new Failure(1, "internal error: " + t.getClass().getSimpleName()
                + (t.getMessage() == null ? "" : ": " + t.getMessage()) + REPORT);
    }

    /**
     * The command-line spelling of a library parameter: the parameter itself when it is already
     * an option ("--budget"); {@code --kebab-case} of a camelCase name when the command has that
     * option (maxTurnTokens: --max-turn-tokens); null when the message is best left as the library
     * wrote it.
     */
    static String optionOf(String parameter, CommandSpec command) {
        if (parameter == null || parameter.isEmpty()) return null;
        if (parameter.startsWith("-")) return parameter;
        if (command == null) return null;
        String kebab = "--" + parameter.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
        if (command.findOption(kebab) != null) return kebab;
        return null; // policy parameters are named -p NAME where they are bound (PolicyOptions.withOptionNames)
    }

    private static Throwable next(Throwable t) {
        Throwable c = t.getCause();
        return c == t ? null : c;
    }
}
