package io.fdkvc.cli;

import io.fdkvc.cli.engine.EngineOptions;
import io.fdkvc.cli.engine.ModelOptions;
import io.fdkvc.engine.chat.ReplyText;
import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.sampling.Sampler;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A multi-turn chat over a bounded cache: each line of standard input is a user turn, each reply
 * goes to standard output. The context is built incrementally with the model's chat template and
 * never re-encoded; the cache policy runs once after each reply (user message + reply = one
 * turn), so memory stays at budget + one turn however long the conversation gets.
 */
@Command(name = "chat", mixinStandardHelpOptions = true,
        description = {"Chat with a model: user turns line by line from stdin, replies on stdout.",
                "The cache policy runs after every reply; --stats-json FILE gets one JSON line per turn."})
public final class ChatCommand implements Callable<Integer> {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Mixin
    TemplateOption template;

    @Option(names = "--system", paramLabel = "TEXT", description = "system prompt; default: none")
    String system;

    @Option(names = "--max-tokens", paramLabel = "N", defaultValue = "256",
            description = "most tokens per reply; default: ${DEFAULT-VALUE}")
    int maxTokens;

    @Option(names = "--stats-json", paramLabel = "FILE",
            description = "append one JSON object per turn: turn, promptTokens, generatedTokens, cacheEntries "
                    + "(largest stream after the update), evicted, kvBytes, ms, updateMs")
    Path statsJson;

    @Mixin
    ModelOptions options;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        Limits.check("--max-tokens", maxTokens, 1, Limits.MAX_NEW_TOKENS);
        EngineOptions engine = options.engine;
        engine.validate();
        PolicySpec ps = engine.policy.spec();
        template.check();
        PrintWriter out = spec.commandLine().getOut();
        BufferedWriter stats = null;
        try (LoadedModel m = options.load();
             Llama llama = engine.newModel(m)) {
            engine.checkCacheMemory(m, ps);
            stats = openStats(); // only once the model loaded: a bad model leaves the file as it was
            Tokenizer tok = Tokenizers.from(m.vocabulary());
            PrintWriter err = spec.commandLine().getErr();
            ChatTemplate tpl = template.select(m.vocabulary(), err, "chat");
            String scope = m.config().blocks().policyScope();
            if (scope != null) err.println("chat: " + scope);
            String longRope = m.config().longRopeChoice(engine.context(m, ps));
            if (longRope != null) err.println("chat: " + longRope);
            int[] stopIds = tpl.stopTokens(tok);
            Sampler sampler = options.sampling.newSampler(m.config().vocabSize());
            Session session = engine.newSession(llama, ps);
            boolean interactive = System.console() != null && System.console().isTerminal();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (true) {
                if (interactive) {
                    out.print("> ");
                    out.flush();
                }
                String line = in.readLine();
                if (line == null) break;
                if (line.isBlank()) continue;
                long t0 = System.nanoTime();
                boolean first = session.turns() == 0;
                int[] prompt = promptTokens(tok, tpl, first, line);
                session.feed(prompt, 0, prompt.length);
                int generated = reply(session, sampler, tok, tpl, stopIds, out);
                Session.TurnStats st = session.endTurn();
                long ms = (System.nanoTime() - t0) / 1_000_000;
                if (stats != null) writeStats(stats, st, prompt.length, generated, ms);
            }
        } finally {
            if (stats != null) stats.close();
        }
        return 0;
    }

    private BufferedWriter openStats() {
        if (statsJson == null) return null;
        try {
            return Files.newBufferedWriter(statsJson, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                    StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new InputException("--stats-json: " + statsJson + ": cannot append: " + e.getMessage());
        }
    }

    private int[] promptTokens(Tokenizer tok, ChatTemplate tpl, boolean first, String line) {
        if (!first) return tok.encodeWithSpecials(tpl.nextTurn(line), false);
        int[] text = tok.encodeWithSpecials(tpl.firstTurn(system, line), true);
        if (!tpl.addBos() || tok.bos() < 0) return text;
        int[] t = new int[text.length + 1];
        t[0] = tok.bos();
        System.arraycopy(text, 0, t, 1, text.length);
        return t;
    }

    /**
     * Samples the reply after the prompt, printing it as it grows. A stop token ends it without
     * entering the context (the next turn's text closes the reply); the token that reaches the
     * limit or completes a stop string enters the cache without logits.
     */
    private int reply(Session session, Sampler sampler, Tokenizer tok, ChatTemplate tpl, int[] stopIds, PrintWriter out) {
        ReplyText text = new ReplyText(tok.decoder(false), tpl.stopStrings());
        float[] logits = session.logits();
        int n = 0;
        // the generation prompt ends without the reply's leading space ("Assistant:"): drop the
        // space the reply's first word carries so that the printed reply starts with the word
        boolean atStart = true;
        while (n < maxTokens) {
            int next = sampler.sample(logits);
            if (contains(stopIds, next)) break;
            n++;
            String piece = text.add(next);
            if (atStart && !piece.isEmpty()) {
                piece = piece.stripLeading();
                atStart = piece.isEmpty();
            }
            out.print(piece);
            out.flush();
            if (text.stopped() || n == maxTokens) {
                session.append(next);
                break;
            }
            logits = session.feed(next);
        }
        String rest = text.finish();
        if (atStart) rest = rest.stripLeading();
        out.println(rest);
        out.flush();
        return n;
    }

    private static boolean contains(int[] a, int v) {
        for (int x : a) if (x == v) return true;
        return false;
    }

    private static void writeStats(BufferedWriter w, Session.TurnStats st, int promptTokens, int generated, long ms)
            throws IOException {
        ObjectNode o = JSON.createObjectNode();
        o.put("turn", st.turn());
        o.put("promptTokens", promptTokens);
        o.put("generatedTokens", generated);
        o.put("cacheEntries", st.cacheEntries());
        o.put("evicted", st.evicted());
        o.put("kvBytes", st.kvBytes());
        o.put("ms", ms);
        o.put("updateMs", st.updateNanos() / 1e6);
        w.write(JSON.writeValueAsString(o));
        w.newLine();
        w.flush();
    }
}
