package io.fdkvc.server;

import java.nio.file.Path;

/** A server in its own process (for the kill -9 test): args DIR POLICY BUDGET MAX_TURN_TOKENS; prints "PORT n". */
public final class TestServerMain {
    private TestServerMain() {}

    public static void main(String[] args) throws Exception {
        var s = TestServers.start(TestServers.options(4, Path.of(args[0]), null, 4, 8), args[1], Integer.parseInt(args[2]),
                Integer.parseInt(args[3]));
        System.out.println("PORT " + s.server().port());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
