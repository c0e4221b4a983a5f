package io.fdkvc.cli;

import io.fdkvc.core.InputException;
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
                ChatCommand.class,
                BenchCommand.class,
                ServeCommand.class,
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
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line with the given streams; returns the exit status (tests call this). */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new Main());
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> report(ex, commandLine, err));
        cl.setParameterExceptionHandler((ex, args1) -> {
            err.println(ex.getCommandLine().getCommandName() + ": " + ex.getMessage());
            err.println("Try '" + ex.getCommandLine().getCommandSpec().qualifiedName() + " --help'.");
            err.flush();
            return BAD_INPUT;
        });
        return cl.execute(args);
    }

    private static int report(Exception ex, CommandLine commandLine, PrintWriter err) {
        String where = commandLine.getCommandSpec().qualifiedName();
        Throwable t = ex;
        while (!(t instanceof InputException) && t.getCause() != null && t.getCause() != t) t = t.getCause();
        if (t instanceof InputException) {
            err.println(where + ": " + t.getMessage());
            err.flush();
            return BAD_INPUT;
        }
        if (System.getenv("FDKVC_DEBUG") != null) ex.printStackTrace(err);
        err.println(where + ": internal error: " + ex + " (set FDKVC_DEBUG=1 for the stack trace)");
        err.flush();
        return 1;
    }
}
