package io.fdkvc.cli;

import io.fdkvc.core.InputException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the chat command lands; refuses to run rather than pretend. */
@Command(name = "chat", mixinStandardHelpOptions = true, description = "(not built yet)")
public final class ChatCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new InputException("'chat' is not built yet");
    }
}
