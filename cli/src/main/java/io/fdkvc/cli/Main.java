package io.fdkvc.cli;

import io.fdkvc.core.Untrusted;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code fdkvc} command: one subcommand per job. */
@Command(name = "fdkvc", mixinStandardHelpOptions = true, version = "fdkvc 0.1.0",
        description = "Bounded, topic-aware KV caches for multi-turn dialogue (FD-KVC) on the JVM.",
        subcommands = {
                EvalCommand.class,
                io.fdkvc.cli.eval.TuneCommand.class,
                TraceCommand.class,
                PoliciesCommand.class,
                GenerateCommand.class,
                TokenizeCommand.class,
                TemplateCommand.class,
                ChatCommand.class,
                BenchCommand.class,
                ServeCommand.class,
                FidelityCommand.class,
                CommandLine.HelpCommand.class
        })
public final class Main implements Runnable {
    /** Exit status for bad input: a parameter, a file, a trace. */
    public static final int BAD_INPUT = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    public static void main(String[] args) {
        int status;
        try {
            status = run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true));
        } catch (Throwable t) { // run handles everything; this is the last resort if printing itself failed
            status = 1;
        }
        System.out.flush();
        // exit (not return) so that no leftover worker thread keeps the JVM alive; the shutdown hooks
        // still run (a temporary report folder is removed there)
        System.exit(status);
    }

    /**
     * Runs the command line with the given streams; returns the exit status (tests call this).
     * Nothing escapes: every {@link Throwable} becomes one line on {@code err} (see {@link Failure}).
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new Main());
        // "--prompt @/etc/hostname" is a prompt, not a file to read: no picocli @-files
        cl.setExpandAtFiles(false);
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) ->
                report(ex, commandLine.getCommandSpec(), err));
        cl.setParameterExceptionHandler((ex, args1) -> {
            CommandLine where = ex.getCommandLine();
            String name = where.getCommandSpec().qualifiedName();
            err.println(name + ": " + Untrusted.line(ex.getMessage()) + " (see '" + name + " --help')");
            err.flush();
            return BAD_INPUT;
        });
        try {
            return cl.execute(args);
        } catch (Throwable t) { // Errors (OutOfMemoryError, InternalError, ...) pass picocli's handlers
            return report(t, command(cl), err);
        }
    }

    /** The (sub)command that ran when the command line parsed that far, else the top command. */
    private static CommandLine.Model.CommandSpec command(CommandLine cl) {
        try {
            CommandLine.ParseResult pr = cl.getParseResult();
            while (pr != null && pr.subcommand() != null) pr = pr.subcommand();
            return pr == null ? cl.getCommandSpec() : pr.commandSpec();
        } catch (RuntimeException e) {
            return cl.getCommandSpec();
        }
    }

    /** Prints {@code t} as one line, prefixed with the command, and returns the exit status. */
    static int report(Throwable t, CommandLine.Model.CommandSpec command, PrintWriter err) {
        String where = command.qualifiedName();
        Failure f = Failure.of(t, command);
        if (f.status() != BAD_INPUT && System.getenv("FDKVC_DEBUG") != null) t.printStackTrace(err);
        err.println(where + ": " + Untrusted.line(f.message()));
        err.flush();
        return f.status();
    }
}
