package io.fdkvc.cli;

import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.tokenizer.Vocabulary;
import java.io.PrintWriter;
import picocli.CommandLine.Option;

/** {@code --template} of the commands that hold a conversation (chat, serve): one option, one rule. */
public final class TemplateOption {
    @Option(names = "--template", paramLabel = "NAME",
            description = "chat format: chatml, llama3, llama2, plain, or jinja:FILE (a Jinja chat template); "
                    + "default: the model's own template (tokenizer.chat_template), else one detected from its vocabulary")
    String template;

    /** Refuses an unknown built-in name before the model is loaded. */
    void check() {
        if (template != null && !template.startsWith("jinja:")) ChatTemplate.byName(template);
    }

    /**
     * The model's own Jinja template when it renders, else a built-in format (or the one asked
     * for); warnings go to {@code err} as "fdkvc CMD: ...".
     */
    ChatTemplate select(Vocabulary vocabulary, PrintWriter err, String command) {
        return ChatTemplate.select(template, vocabulary, warning -> {
            err.println("fdkvc " + command + ": " + warning);
            err.flush();
        });
    }
}
