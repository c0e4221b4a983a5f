package io.fdkvc.cli;

import io.fdkvc.core.InputException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the generate command lands; refuses to run rather than pretend. */
@Command(name = "generate", mixinStandardHelpOptions = true, description = "(not built yet)")
public final class GenerateCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new InputException("'generate' is not built yet");
    }
}
