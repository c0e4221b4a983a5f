package io.fdkvc.cli;

import io.fdkvc.cli.trace.Trace;
import io.fdkvc.cli.trace.TraceReader;
import io.fdkvc.core.Limits;
import io.fdkvc.core.replay.TraceReplay;
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
        List<TraceReplay.TurnState> states = TraceReplay.run(trace.policy(), trace.dim(), trace.turns());
        // Everything is computed before the first line is written: no partial output on failure.
        StringBuilder sb = new StringBuilder();
        for (TraceReplay.TurnState st : states) sb.append(JSON.writeValueAsString(toJson(st, trace.idNodes()))).append('\n');
        PrintWriter out = spec.commandLine().getOut();
        out.print(sb);
        out.flush();
        return 0;
    }

    private static ObjectNode toJson(TraceReplay.TurnState st, List<Object> ids) {
        ObjectNode o = JSON.createObjectNode();
        o.put("turn", st.turn());
        o.put("alpha", st.alpha());
        o.put("loss", st.loss());
        ArrayNode ev = o.putArray("evicted");
        for (long p : st.evicted()) putId(ev, ids.get((int) p));
        ArrayNode es = o.putArray("entries");
        for (TraceReplay.EntryState e : st.entries()) {
            ObjectNode eo = es.addObject();
            Object id = ids.get((int) e.position());
            if (id instanceof Long l) eo.put("id", l); else eo.put("id", (String) id);
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

    /** The whole trace as text, refused beyond {@link Limits#MAX_TRACE_BYTES} before it is held. */
    static String readAll(String file) {
        try {
            byte[] bytes;
            if (file.equals("-")) {
                InputStream in = System.in;
                bytes = in.readNBytes((int) Limits.MAX_TRACE_BYTES + 1);
            } else {
                Path p = Path.of(file);
                if (Files.isDirectory(p)) throw new InputException(file + ": is a directory, not a trace");
                try (InputStream in = Files.newInputStream(p)) {
                    bytes = in.readNBytes((int) Limits.MAX_TRACE_BYTES + 1);
                }
            }
            if (bytes.length > Limits.MAX_TRACE_BYTES) {
                throw new InputException((file.equals("-") ? "<stdin>" : file) + ": a trace is at most " + Limits.MAX_TRACE_BYTES
                        + " bytes (docs/limits.md)");
            }
            // a parsed trace takes several times its text: refuse what this JVM cannot hold
            Limits.checkMemory((file.equals("-") ? "<stdin>" : file) + ": a trace of " + bytes.length + " bytes", 12.0 * bytes.length);
            var decoder = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT);
            return decoder.decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new InputException(file + ": not UTF-8 text");
        } catch (java.nio.file.InvalidPathException e) {
            throw new InputException(file + ": not a valid path");
        } catch (NoSuchFileException e) {
            throw new InputException(file + ": no such file");
        } catch (IOException e) {
            throw new InputException(file + ": cannot read: " + e.getMessage());
        }
    }
}
