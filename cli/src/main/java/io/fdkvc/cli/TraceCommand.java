package io.fdkvc.cli;

import io.fdkvc.cli.trace.Trace;
import io.fdkvc.cli.trace.TraceReader;
import io.fdkvc.cli.trace.TraceReplay;
import io.fdkvc.core.InputException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** Replays a policy on a trace (shared/spec/trace-format.md) and prints one JSON line per turn. */
@Command(name = "trace", mixinStandardHelpOptions = true,
        description = {"Replay a policy turn by turn on given vectors (shared/spec/trace-format.md).",
                "Prints one JSON object per turn (JSON Lines). Bad input: one line on stderr, nothing on stdout, exit 2."})
public final class TraceCommand implements Callable<Integer> {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Parameters(paramLabel = "FILE", description = "the trace, or - for standard input")
    String file;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        Trace trace = TraceReader.read(readAll(file), file.equals("-") ? "<stdin>" : file);
        List<TraceReplay.TurnState> states = TraceReplay.replay(trace);
        // Everything is computed before the first line is written: no partial output on failure.
        StringBuilder sb = new StringBuilder();
        for (TraceReplay.TurnState st : states) sb.append(JSON.writeValueAsString(toJson(st))).append('\n');
        PrintWriter out = spec.commandLine().getOut();
        out.print(sb);
        out.flush();
        return 0;
    }

    private static ObjectNode toJson(TraceReplay.TurnState st) {
        ObjectNode o = JSON.createObjectNode();
        o.put("turn", st.turn());
        o.put("alpha", st.alpha());
        o.put("loss", st.loss());
        ArrayNode ev = o.putArray("evicted");
        for (Object id : st.evicted()) putId(ev, id);
        ArrayNode es = o.putArray("entries");
        for (TraceReplay.EntryState e : st.entries()) {
            ObjectNode eo = es.addObject();
            if (e.id() instanceof Long l) eo.put("id", l); else eo.put("id", (String) e.id());
            eo.put("position", e.position());
            eo.put("c", e.c());
            eo.put("rho", e.rho());
            eo.put("h", e.h());
            eo.put("weight", e.weight());
        }
        return o;
    }

    private static void putId(ArrayNode a, Object id) {
        if (id instanceof Long l) a.add(l); else a.add((String) id);
    }

    static String readAll(String file) {
        try {
            if (file.equals("-")) {
                InputStream in = System.in;
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            return Files.readString(Path.of(file), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new InputException(file + ": no such file");
        } catch (java.nio.charset.MalformedInputException e) {
            throw new InputException(file + ": not UTF-8 text");
        } catch (IOException e) {
            throw new InputException(file + ": cannot read: " + e.getMessage());
        }
    }
}
