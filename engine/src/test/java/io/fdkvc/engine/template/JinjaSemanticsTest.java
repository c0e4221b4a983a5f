package io.fdkvc.engine.template;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The points where Jinja's semantics differ from Jinjava's own, each on a one-line template; every
 * expected value is what Jinja2 3.1.6 renders in Hugging Face's configuration (sandboxed,
 * trim_blocks, lstrip_blocks), e.g. {@code python3 -c "import jinja2; print(repr(
 * jinja2.Environment(trim_blocks=True, lstrip_blocks=True).from_string(T).render()))"}.
 */
class JinjaSemanticsTest {

    private static String render(String template, Map<String, Object> variables) {
        return JinjaRenderer.of(template, "", "", Clock.systemUTC()).render(List.of(), false, new HashMap<>(variables));
    }

    private static String render(String template) {
        return render(template, Map.of());
    }

    @Test
    void plusAddsAsPythonDoes() {
        assertThat(render("{{ 'a' + 'b' }}")).isEqualTo("ab");
        assertThat(render("{{ 1 + 2 }}|{{ 1.5 + 1 }}|{{ true + 1 }}")).isEqualTo("3|2.5|2");
        assertThat(render("{{ [1] + [2, 3] }}")).isEqualTo("[1, 2, 3]");
    }

    @Test
    void plusRefusesWhatPythonRefuses() {
        // UndefinedError: 'x' is undefined
        assertThatThrownBy(() -> render("{{ 'a' + x }}")).isInstanceOf(InputException.class)
                .hasMessageContaining("unsupported operand type(s) for +: 'str' and None");
        Map<String, Object> none = new HashMap<>();
        none.put("x", null);
        // TypeError: can only concatenate str (not "NoneType") to str
        assertThatThrownBy(() -> render("{{ 'a' + x }}", none)).isInstanceOf(InputException.class);
        // TypeError: can only concatenate str (not "dict") to str
        assertThatThrownBy(() -> render("{{ 'a' + d }}", Map.of("d", Map.of("k", 1)))).isInstanceOf(InputException.class)
                .hasMessageContaining("'str' and 'dict'");
        // TypeError: can only concatenate str (not "int") to str
        assertThatThrownBy(() -> render("{{ 'n' + 1 }}")).isInstanceOf(InputException.class)
                .hasMessageContaining("'str' and 'int'");
    }

    @Test
    void undefinedStillPrintsEmptyAndJoinsWithTilde() {
        assertThat(render("{{ x ~ 'a' }}{{ x }}|")).isEqualTo("a|");
    }

    @Test
    void markupEscapesThePlainStringAddedToIt() {
        assertThat(render("{{ '<b>'|safe + '\"x\" & \\'y\\' <z>' }}")).isEqualTo("<b>&#34;x&#34; &amp; &#39;y&#39; &lt;z&gt;");
        assertThat(render("{{ '<i>' + '<b>'|safe }}")).isEqualTo("&lt;i&gt;<b>");
        // the sum is Markup again, so the next plain string is escaped too
        assertThat(render("{{ ('a'|safe + '<') + '>' }}")).isEqualTo("a&lt;&gt;");
        // '~' joins as plain strings (no autoescape)
        assertThat(render("{{ 'a'|safe ~ '<' }}")).isEqualTo("a<");
    }

    @Test
    void aGeneratorIsReadLikeAListButNotSerialised() {
        assertThat(render("{{ [1, 2]|map('string')|list|tojson }}")).isEqualTo("[\"1\", \"2\"]");
        assertThat(render("{{ [1, 2]|select('odd')|join(',') }}")).isEqualTo("1");
        // TypeError: Object of type generator is not JSON serializable
        assertThatThrownBy(() -> render("{{ [1, 2]|map('string')|tojson }}")).isInstanceOf(InputException.class)
                .hasMessageContaining("Object of type generator is not JSON serializable");
    }

    @Test
    void commentsControlWhitespaceAsBlockTagsDo() {
        // a '-%}' before a comment strips only up to the comment
        assertThat(render("{%- if true -%}\n{# c #}\n    x\n{% endif %}")).isEqualTo("    x\n");
        assertThat(render("a {#- c -#}   b")).isEqualTo("ab");
        assertThat(render("a\n  {# c #}\nb")).isEqualTo("a\nb");
        assertThat(render("a {# c #} b")).isEqualTo("a  b");
        assertThat(render("a\n  {#+ c #}\nb")).isEqualTo("a\n  b");
        // a raw block keeps comments and tags as text
        assertThat(render("{% raw %}{# x #} {{ y }}{% endraw %}")).isEqualTo("{# x #} {{ y }}");
    }

    @Test
    void lstripBlocksStripsOnlyTheIndentationOpeningALine() {
        assertThat(render("a {% if true %} b{% endif %}")).isEqualTo("a  b");
        assertThat(render("a\n  {% if true %}x{% endif %}")).isEqualTo("a\nx");
        assertThat(render("a\n  {%+ if true %}x{% endif %}")).isEqualTo("a\n  x");
        assertThat(render("  {% if true %}x{% endif %}\n  {{ 'y' }}")).isEqualTo("x  y");
    }
}
