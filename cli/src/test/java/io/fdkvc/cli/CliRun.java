package io.fdkvc.cli;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;

/** Runs the fdkvc command line in-process and captures its exit status, stdout and stderr. */
public record CliRun(int status, String out, String err) {

    public static CliRun of(String... args) {
        return withStdin(null, args);
    }

    public static CliRun withStdin(String stdin, String... args) {
        return withStdinBytes(stdin == null ? null : stdin.getBytes(StandardCharsets.UTF_8), args);
    }

    /** Standard input as raw bytes (which need not be valid UTF-8). */
    public static synchronized CliRun withStdinBytes(byte[] stdin, String... args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        InputStream saved = System.in;
        try {
            if (stdin != null) System.setIn(new ByteArrayInputStream(stdin));
            int status = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
            return new CliRun(status, out.toString(), err.toString());
        } finally {
            System.setIn(saved);
        }
    }

    public String[] errLines() {
        return err.isEmpty() ? new String[0] : err.split("\n");
    }
}
