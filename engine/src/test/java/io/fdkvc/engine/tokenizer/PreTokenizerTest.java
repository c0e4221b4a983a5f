package io.fdkvc.engine.tokenizer;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PreTokenizerTest {

    @Test
    void namesMapAsLlamaCppDoes() {
        assertThat(PreTokenizer.forName("llama-bpe")).isEqualTo(PreTokenizer.LLAMA3);
        assertThat(PreTokenizer.forName("llama3")).isEqualTo(PreTokenizer.LLAMA3);
        assertThat(PreTokenizer.forName("qwen2")).isEqualTo(PreTokenizer.QWEN2);
        assertThat(PreTokenizer.forName("smollm")).isEqualTo(PreTokenizer.STARCODER);
        assertThat(PreTokenizer.forName("gpt2")).isEqualTo(PreTokenizer.GPT2);
        assertThat(PreTokenizer.forName("default")).isEqualTo(PreTokenizer.GPT2);
        assertThat(PreTokenizer.forName(null)).isEqualTo(PreTokenizer.GPT2);
        // unknown names fall back to GPT-2, and say so through isKnown
        assertThat(PreTokenizer.forName("made-up")).isEqualTo(PreTokenizer.GPT2);
        assertThat(PreTokenizer.isKnown("made-up")).isFalse();
        assertThat(PreTokenizer.isKnown("qwen2")).isTrue();
    }

    /*
     * GPT-2 on "Hello world's 12345 test!!  \n": letters with one optional leading space, the
     * lowercase contraction "'s", a number run with its space, a symbol run, and the trailing
     * whitespace run (followed by the end, so \s+(?!\S) takes all of it).
     */
    @Test
    void gpt2() {
        assertThat(PreTokenizer.GPT2.split("Hello world's 12345 test!!  \n"))
                .containsExactly("Hello", " world", "'s", " 12345", " test", "!!", "  \n");
        // "a  b": the first space stays alone (\s+(?!\S) backs off one), the second joins the word
        assertThat(PreTokenizer.GPT2.split("a  b")).containsExactly("a", " ", " b");
        // contractions are lowercase only; the apostrophe then is a symbol of its own
        assertThat(PreTokenizer.GPT2.split("I'M")).containsExactly("I", "'", "M");
        assertThat(PreTokenizer.GPT2.split("x\n\ny")).containsExactly("x", "\n", "\n", "y");
        assertThat(PreTokenizer.GPT2.split("(hello")).containsExactly("(", "hello");
        assertThat(PreTokenizer.GPT2.split("héllo wörld")).containsExactly("héllo", " wörld");
    }

    /*
     * Llama 3 on the same text: the space before a digit is no letter prefix and no symbol, so it
     * stands alone (last alternative \s+), digits go in threes, the final "  \n" is \s*[\r\n]+.
     */
    @Test
    void llama3() {
        assertThat(PreTokenizer.LLAMA3.split("Hello world's 12345 test!!  \n"))
                .containsExactly("Hello", " world", "'s", " ", "123", "45", " test", "!!", "  \n");
        assertThat(PreTokenizer.LLAMA3.split("I'M")).containsExactly("I", "'M");
        assertThat(PreTokenizer.LLAMA3.split("x\n\ny")).containsExactly("x", "\n\n", "y");
        // a letter run takes one leading non-letter, non-digit that is no newline
        assertThat(PreTokenizer.LLAMA3.split("(hello")).containsExactly("(hello");
        assertThat(PreTokenizer.LLAMA3.split("a\nb")).containsExactly("a", "\n", "b");
        // a symbol run takes the newlines after it
        assertThat(PreTokenizer.LLAMA3.split("ok.\n\nNext")).containsExactly("ok", ".\n\n", "Next");
        // Unicode whitespace (U+3000) counts as whitespace, Unicode letters as letters
        assertThat(PreTokenizer.LLAMA3.split("日本\u3000語")).containsExactly("日本", "\u3000語");
    }

    @Test
    void qwen2SplitsSingleDigits() {
        assertThat(PreTokenizer.QWEN2.split("x 12345")).containsExactly("x", " ", "1", "2", "3", "4", "5");
    }

    /*
     * SmolLM splits digits out first, then applies GPT-2 to what is left: "a  1" becomes "a  " and
     * "1", and GPT-2 on "a  " keeps the two spaces together because they end their piece. GPT-2
     * alone gives "a", " ", " 1".
     */
    @Test
    void smollmSplitsDigitsBeforeGpt2() {
        assertThat(PreTokenizer.STARCODER.split("a  1")).containsExactly("a", "  ", "1");
        assertThat(PreTokenizer.GPT2.split("a  1")).containsExactly("a", " ", " 1");
        assertThat(PreTokenizer.STARCODER.split("v12 ok")).containsExactly("v", "1", "2", " ok");
    }

    @Property(tries = 300)
    void wordsConcatenateToTheText(@ForAll String s) {
        for (PreTokenizer p : PreTokenizer.values()) {
            assertThat(String.join("", p.split(s))).isEqualTo(s);
            assertThat(p.split(s)).allSatisfy(w -> assertThat(w).isNotEmpty());
        }
    }
}
