#!/usr/bin/env python3
"""Renders every chat template of ../shared/templates through every case of
engine/src/test/resources/templates/conversations.json as Hugging Face's apply_chat_template
does, and writes what it gives (the text, or the exception it raises) as golden files:
engine/src/test/resources/templates/golden/NAME.json, one per template.

The environment is the one transformers builds in chat_template_utils (see the templates README):
an ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and the loop-controls extension,
a `generation` block that renders its body, the globals raise_exception and strftime_now (here a
fixed clock: the conversations file's "now"), and tojson as json.dumps(ensure_ascii=False) with
indent, separators and sort_keys. The render call passes messages, tools (None when the case
gives none, as transformers does), documents=None, add_generation_prompt, bos_token, eos_token.

Usage (Jinja2 3.1; no other dependency): python3 bench/templates/render_goldens.py
The Java test JinjaTemplateGoldenTest compares our renderer with these files; CI does not run this.
"""
import datetime
import json
import os
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEMPLATES = os.path.join(ROOT, "..", "shared", "templates")
RESOURCES = os.path.join(ROOT, "engine", "src", "test", "resources", "templates")


class GenerationBlock(jinja2.ext.Extension):
    """{% generation %}...{% endgeneration %}: transformers marks assistant text with it; renders its body."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def environment(now):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return now.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationBlock, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, source, spec, case, generation_prompt):
    messages = spec["conversations"][case["conversation"]]
    tools = spec["tools"] if case.get("tools") else None
    try:
        text = env.from_string(source).render(messages=json.loads(json.dumps(messages)), tools=tools, documents=None,
                                              add_generation_prompt=generation_prompt,
                                              bos_token=spec["bos_token"], eos_token=spec["eos_token"])
        return {"output": text}
    except Exception as e:  # what apply_chat_template would raise
        return {"error": str(e), "error_type": type(e).__name__}


def main():
    with open(os.path.join(RESOURCES, "conversations.json"), encoding="utf-8") as f:
        spec = json.load(f)
    env = environment(datetime.datetime.fromisoformat(spec["now"]))
    out_dir = os.path.join(RESOURCES, "golden")
    os.makedirs(out_dir, exist_ok=True)
    names = sorted(n for n in os.listdir(TEMPLATES) if n.endswith(".jinja"))
    errors = 0
    for name in names:
        with open(os.path.join(TEMPLATES, name), encoding="utf-8") as f:
            source = f.read()
        results = {}
        for case in spec["cases"]:
            for generation_prompt in (False, True):
                key = case["name"] + ("+generation-prompt" if generation_prompt else "")
                results[key] = render(env, source, spec, case, generation_prompt)
                errors += "error" in results[key]
        with open(os.path.join(out_dir, name[:-len(".jinja")] + ".json"), "w", encoding="utf-8") as f:
            json.dump({"template": name, "jinja2": jinja2.__version__, "cases": results}, f, ensure_ascii=False, indent=1)
            f.write("\n")
    print(f"{len(names)} templates x {2 * len(spec['cases'])} cases written to {out_dir} ({errors} raise)", file=sys.stderr)


if __name__ == "__main__":
    main()
