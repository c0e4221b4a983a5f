package io.fdkvc.cli;

import io.fdkvc.cli.engine.EngineOptions;
import io.fdkvc.cli.engine.ModelOptions;
import io.fdkvc.core.InputException;
import io.fdkvc.core.Limits;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.sampling.Sampler;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.tokenizer.TokenDecoder;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Generates text from a prompt, as llama2.c's run.c does: BOS, the prompt, then sampled tokens
 * until EOS (or BOS, with which a llama2.c story model starts the next story) or the token limit.
 * Prints the prompt and the continuation on stdout as they come, statistics on stderr; with
 * {@code --output ids}, only the generated ids, on one line. BOS goes first when the vocabulary
 * asks for it ({@code tokenizer.ggml.add_bos_token}, else llama.cpp's default: SentencePiece yes,
 * Qwen2 no), as llama.cpp's tools do. Control tokens print nothing unless {@code --special}, and a
 * character split across tokens prints when complete (U+FFFD for bytes that never complete one).
 */
@Command(name = "generate", mixinStandardHelpOptions = true,
        description = {"Generate text from a prompt with a model (GGUF, or llama2.c checkpoint plus --tokenizer).",
                "Prints the prompt followed by the generated text on stdout; statistics on stderr."})
public final class GenerateCommand implements Callable<Integer> {
    @Option(names = "--prompt", paramLabel = "TEXT", defaultValue = "",
            description = "the prompt; strings of special tokens in it (\"<|im_start|>\") become those tokens, "
                    + "as in llama.cpp's tools; default: none")
    String prompt;

    @Option(names = "--max-tokens", paramLabel = "N", defaultValue = "256",
            description = "most tokens to generate; default: ${DEFAULT-VALUE}")
    int maxTokens;

    @Option(names = "--output", paramLabel = "FORMAT", defaultValue = "text",
            description = "text: the prompt and the generated text as they come; ids: only the generated token ids, "
                    + "space-separated on one line at the end (as llama.cpp's tools print them); default: ${DEFAULT-VALUE}")
    String output;

    @Option(names = "--special", description = "print control tokens of the generated text as their strings "
            + "(llama-cli --special); default: they print nothing")
    boolean special;

    @Mixin
    ModelOptions options;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        Limits.check("--max-tokens", maxTokens, 0, Limits.MAX_NEW_TOKENS);
        boolean ids = switch (output) {
            case "text" -> false;
            case "ids" -> true;
            default -> throw new InputException("--output must be text or ids, got '" + output + "'");
        };
        EngineOptions engine = options.engine;
        engine.validate();
        PolicySpec ps = engine.policy.spec();
        PrintWriter out = spec.commandLine().getOut(), err = spec.commandLine().getErr();
        try (LoadedModel m = options.load()) {
            Tokenizer tok = Tokenizers.from(m.vocabulary());
            Sampler sampler = options.sampling.newSampler(m.config().vocabSize());
            int[] text = tok.encodeWithSpecials(prompt);
            int bos = tok.bos(), eos = tok.eos();
            boolean addBos = bos >= 0 && tok.addBos();
            int[] tokens = new int[text.length + (addBos ? 1 : 0)];
            if (addBos) tokens[0] = bos;
            System.arraycopy(text, 0, tokens, tokens.length - text.length, text.length);
            if (tokens.length == 0) throw new InputException("--prompt is empty and the model starts no sequence with BOS");
            engine.checkCacheMemory(m, ps);
            try (Llama llama = engine.newModel(m)) {
                Session session = engine.newSession(llama, ps);
                TokenDecoder dec = tok.decoder(true, special);
                StringBuilder sb = new StringBuilder();
                if (!ids) {
                    for (int t : tokens) dec.next(t, sb);
                    out.print(sb);
                    out.flush();
                }
                StringBuilder idLine = new StringBuilder();
                long t0 = System.nanoTime();
                session.feed(tokens, 0, tokens.length);
                long t1 = System.nanoTime(), fed = session.position();
                int produced = session.generate(sampler, maxTokens, id -> id == eos || id == bos, id -> {
                    if (ids) {
                        if (!idLine.isEmpty()) idLine.append(' ');
                        idLine.append(id);
                        return;
                    }
                    sb.setLength(0);
                    dec.next(id, sb);
                    out.print(sb);
                    out.flush();
                });
                long t2 = System.nanoTime(), decoded = session.position() - fed;
                out.println(ids ? idLine : dec.flush());
                out.flush();
                Session.TurnStats st = session.endTurn();
                double prefill = (t1 - t0) / 1e9, decode = (t2 - t1) / 1e9;
                err.println(String.format(Locale.ROOT,
                        "generate: %d prompt tokens in %.3f s (%.1f tok/s), %d generated, %d decode steps in %.3f s (%.1f tok/s), "
                                + "%s, %s positions, max %d entries per stream, KV %.1f KiB, %d threads, seed %d",
                        tokens.length, prefill, tokens.length / prefill, produced, decoded, decode,
                        decoded > 0 ? decoded / decode : 0.0, ps, engine.positionMode().label(),
                        st.cacheEntries(), st.kvBytes() / 1024.0, llama.threads(), options.sampling.seed()));
                err.flush();
            }
        }
        return 0;
    }
}
