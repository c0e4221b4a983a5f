package io.fdkvc.cli;

import io.fdkvc.core.InputException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the eval command lands; refuses to run rather than pretend. */
@Command(name = "eval", mixinStandardHelpOptions = true, description = "(not built yet)")
public final class EvalCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new InputException("'eval' is not built yet");
    }
}
