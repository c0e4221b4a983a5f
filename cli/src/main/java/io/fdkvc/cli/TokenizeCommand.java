package io.fdkvc.cli;

import io.fdkvc.cli.engine.ModelFiles;
import io.fdkvc.core.InputException;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.tokenizer.GgufVocabulary;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import io.fdkvc.engine.tokenizer.Vocabulary;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Token ids of texts, one input per line of standard input, one line of space-separated ids per
 * input on standard output (as llama.cpp's {@code llama-tokenize --ids} prints them, without BOS).
 * A GGUF file is read for its tokenizer only, so a tokenizer-only GGUF works too. All input is
 * read and checked before anything is printed.
 */
@Command(name = "tokenize", mixinStandardHelpOptions = true,
        description = {"Print the token ids of texts read from stdin: one text per line (or, with --jsonl, one JSON "
                + "string per line, so any text fits), one line of space-separated ids per text. No BOS is added."})
public final class TokenizeCommand implements Callable<Integer> {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Option(names = "--model", paramLabel = "FILE", required = true,
            description = "GGUF file (only its tokenizer is read), or a llama2.c checkpoint with --tokenizer")
    Path model;

    @Option(names = "--tokenizer", paramLabel = "FILE", description = "llama2.c tokenizer file (for a .bin model)")
    Path tokenizer;

    @Option(names = "--special", description = "strings of special tokens (\"<|im_start|>\", \"<s>\") become those tokens; "
            + "default: they are plain text")
    boolean special;

    @Option(names = "--jsonl", description = "each line is a JSON string (\"a\\nb\"), not the text itself")
    boolean jsonl;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        Tokenizer tok = Tokenizers.from(load());
        List<String> texts = readTexts(System.in);
        StringBuilder sb = new StringBuilder();
        for (String text : texts) {
            int[] ids = special ? tok.encodeWithSpecials(text) : tok.encode(text);
            for (int i = 0; i < ids.length; i++) {
                if (i > 0) sb.append(' ');
                sb.append(ids[i]);
            }
            sb.append('\n');
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(sb);
        out.flush();
        return 0;
    }

    /** A GGUF file's tokenizer alone (no weights mapped as tensors); a llama2.c checkpoint with its --tokenizer. */
    private Vocabulary load() {
        if (tokenizer == null) return GgufVocabulary.load(model);
        try (LoadedModel m = ModelFiles.load(model, tokenizer)) {
            return m.vocabulary();
        }
    }

    /**
     * Every input text: lines end at '\n' (a '\r' before it goes too); a last line without one
     * counts. Bad UTF-8 or (with --jsonl) a line that is not one JSON string is refused with its
     * line number. Lines are decoded one by one so that the number is the line's own.
     */
    List<String> readTexts(InputStream in) throws IOException {
        byte[] all = in.readAllBytes();
        var decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        List<String> texts = new ArrayList<>();
        int lineNo = 0;
        for (int start = 0; start < all.length; ) {
            int nl = start;
            while (nl < all.length && all[nl] != '\n') nl++;
            int end = nl > start && nl <= all.length && all[nl - 1] == '\r' ? nl - 1 : nl;
            lineNo++;
            String line;
            try {
                line = decoder.decode(ByteBuffer.wrap(all, start, end - start)).toString();
            } catch (CharacterCodingException e) {
                throw new InputException("standard input, line " + lineNo + ": not valid UTF-8");
            }
            texts.add(jsonl ? jsonString(line, lineNo) : line);
            start = nl + 1;
        }
        return texts;
    }

    private static String jsonString(String line, int lineNo) {
        JsonNode node;
        try {
            node = JSON.readTree(line);
        } catch (JacksonException e) {
            throw new InputException("standard input, line " + lineNo + ": not JSON: " + e.getOriginalMessage());
        }
        if (node == null || !node.isString()) {
            throw new InputException("standard input, line " + lineNo + ": expected a JSON string, got "
                    + (node == null || node.isMissingNode() ? "nothing" : node.getNodeType().toString().toLowerCase(java.util.Locale.ROOT)));
        }
        return node.asString();
    }
}
