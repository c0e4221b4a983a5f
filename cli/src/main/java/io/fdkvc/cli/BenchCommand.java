package io.fdkvc.cli;

import io.fdkvc.core.InputException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the bench command lands; refuses to run rather than pretend. */
@Command(name = "bench", mixinStandardHelpOptions = true, description = "(not built yet)")
public final class BenchCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new InputException("'bench' is not built yet");
    }
}
