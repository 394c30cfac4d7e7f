"""No code from data: YAML, rule packs and templates are read, never executed.

Protections, each named where its test would fail without it: the loader's safe-tag check,
``yaml.safe_load`` for rule files, ``rules._check_template`` (plain field names only), the
Jinja2 sandbox of ``report_env`` (and its search path), and the absence of eval/exec/shell
sinks in ``advisor/`` (an AST scan).
"""

from __future__ import annotations

import ast
import dataclasses
import textwrap
from pathlib import Path
from typing import Any

import pytest

from advisor.analysis import analyse
from advisor.documents.context import document_context
from advisor.documents.render import Limits, render_documents, write_documents
from advisor.errors import AdvisorError
from advisor.inputs.loading import parse_topology
from advisor.rules.pack import load_rules

PACKAGE = Path(__file__).resolve().parent.parent / "advisor"
TOPOLOGY = """\
name: t
sites:
  - {name: a, location: {lat: 48.85, lon: 2.35}}
  - {name: b, location: {lat: 50.11, lon: 8.68}}
links:
  - {sites: [a, b], measurements: [{method: icmp, samples_ms: [9.8, 9.9, 10.4]}]}
"""


class NotRefused(AssertionError):
    """Hostile data was accepted."""


# ---------------------------------------------------------------------------------------------
# YAML


@pytest.mark.parametrize(
    "payload",
    [
        "!!python/object/apply:os.system ['touch {canary}']",
        "!!python/object/apply:subprocess.check_call [['touch', '{canary}']]",
        "!!python/object/new:os.system ['touch {canary}']",
    ],
)
def test_a_python_tag_in_a_topology_is_refused_not_run(tmp_path, payload):
    # Protection: loading._SAFE_TAGS (and composing with the safe loader, which builds nothing).
    canary = tmp_path / "pwned"
    text = f"name: t\nsites:\n  - name: a\ndescription: {payload.format(canary=canary)}\n"
    with pytest.raises(AdvisorError) as caught:
        parse_topology(text, source=Path("t.yaml"))
    tag = payload.split()[0].replace("!!", "tag:yaml.org,2002:")
    assert str(caught.value) == (
        f"t.yaml:4:14: the YAML tag {tag!r} is not allowed: a topology is plain data"
    )
    assert not canary.exists()


def test_a_python_tag_in_a_rule_file_is_refused_not_run(tmp_path):
    # Protection: rules._read_rule uses yaml.safe_load.
    canary = tmp_path / "pwned"
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "x.yaml").write_text(
        f"id: !!python/object/apply:os.system ['touch {canary}']\n"
    )
    with pytest.raises(AdvisorError) as caught:
        load_rules([tmp_path / "rules"])
    assert str(caught.value).startswith(
        f"{tmp_path / 'rules' / 'x.yaml'}:1: YAML syntax error: "
        "could not determine a constructor for the tag"
    )
    assert not canary.exists()


# ---------------------------------------------------------------------------------------------
# Rule message templates: plain field names only


def rule_file(tmp_path: Path, message: str) -> Path:
    folder = tmp_path / "rules"
    folder.mkdir(exist_ok=True)
    (folder / "RTT-ESTIMATED.yaml").write_text(f"id: RTT-ESTIMATED\nmessage: {message!r}\n")
    return folder


@pytest.mark.parametrize(
    "field", ["0.__class__", "sites.__class__.__mro__", "x.__globals__", "sites[0]", "0", ""]
)
def test_a_rule_template_cannot_reach_into_objects(tmp_path, field):
    # Protection: rules._check_template refuses every field that is not a plain name.
    folder = rule_file(tmp_path, f"leak {{{field}}}")
    with pytest.raises(AdvisorError) as caught:
        load_rules([folder])
    assert str(caught.value) == (
        f"{folder / 'RTT-ESTIMATED.yaml'}: message template field {{{field}}} must be a plain "
        "name (no attribute access, indexing or positional fields)"
    )


@pytest.mark.parametrize(
    "message",
    [
        "{sites:{sites.__class__.__mro__}}",
        "{sites:{sites.__init__.__globals__}}",
        "{sites:>{rtt_p50_ms[0]}}",
    ],
)
def test_a_field_hidden_in_a_format_spec_is_refused_too(tmp_path, message):
    folder = rule_file(tmp_path, message)
    try:
        load_rules([folder])
    except AdvisorError as error:
        assert "must be a plain name" in str(error)
        return
    raise NotRefused(message)


# ---------------------------------------------------------------------------------------------
# User templates: the sandbox, the search path and the limits

PAYLOADS = {
    # attribute walks to Python internals: refused by the sandbox
    "{{ ''.__class__.__mro__[1].__subclasses__() }}": "template refused by the sandbox: access to attribute '__class__' of 'str' object is "
    "unsafe.",
    "{{ rec.__class__.__init__.__globals__ }}": "template refused by the sandbox: access to attribute '__init__' of 'StrictUndefined' "
    "object is unsafe.",
    "{{ rec['__class__'] }}": "template refused by the sandbox: access to attribute '__class__' of 'Recommendation' "
    "object is unsafe.",
    "{{ ''|attr('__class__') }}": "template refused by the sandbox: access to attribute '__class__' of 'str' object is "
    "unsafe.",
    "{{ self.__init__.__globals__ }}": "template refused by the sandbox: access to attribute '__init__' of "
    "'TemplateReference' object is unsafe.",
    "{{ namespace.__init__.__globals__['os'] }}": "template refused by the sandbox: access to attribute '__init__' of 'type' object is "
    "unsafe.",
    "{{ rec.model_copy.__func__.__globals__ }}": "template refused by the sandbox: access to attribute '__func__' of 'method' object is "
    "unsafe.",
    # The immutable sandbox refuses a mutating method itself, before its __self__.
    "{{ [].pop.__self__ }}": "template refused by the sandbox: access to attribute 'pop' of 'list' object is unsafe.",
    "{{ dict.mro() }}": "template refused by the sandbox: access to attribute 'mro' of 'type' object is unsafe.",
    # str.format inside a template goes through the sandbox's formatter
    "{{ '{0.__class__}'.format(rec) }}": "template refused by the sandbox: access to attribute '__class__' of 'Recommendation' "
    "object is unsafe.",
    # the usual SSTI entry points are not defined
    "{{ lipsum.__globals__['os'].popen('id').read() }}": "template uses an undefined value: 'lipsum' is undefined",
    "{{ cycler.__init__ }}": "template refused by the sandbox: access to attribute '__init__' of 'StrictUndefined' "
    "object is unsafe.",
    "{{ config.items() }}": "template uses an undefined value: 'config' is undefined",
}


@pytest.fixture(scope="module")
def analysis() -> Any:
    return analyse(parse_topology(TOPOLOGY, source=Path("t.yaml")))


@pytest.mark.parametrize("body", list(PAYLOADS))
def test_a_user_template_cannot_reach_python_internals(tmp_path, analysis, body):
    # Protection: report_env uses jinja2's SandboxedEnvironment (a plain Environment renders
    # every one of these) and drops lipsum/cycler/joiner from the globals.
    (tmp_path / "design.md.j2").write_text(body)
    with pytest.raises(AdvisorError) as caught:
        render_documents(analysis, formats=("md",), templates_dir=tmp_path)
    assert str(caught.value) == f"{tmp_path / 'design.md.j2'}:1: {PAYLOADS[body]}"


@pytest.mark.parametrize(
    "statement",
    [
        "{% include '/etc/passwd' %}",
        "{% include '../../../../../../../etc/passwd' %}",
        "{% extends '/etc/hostname' %}",
        "{% import 'os' as os %}",
    ],
)
def test_a_user_template_cannot_read_files_off_the_search_path(tmp_path, analysis, statement):
    # Protection: FileSystemLoader refuses absolute and '..' names (search path only).
    (tmp_path / "design.md.j2").write_text(statement)
    name = statement.split("'")[1]
    with pytest.raises(AdvisorError) as caught:
        render_documents(analysis, formats=("md",), templates_dir=tmp_path)
    assert str(caught.value) == f"design.md.j2: template not found: {name}"


def test_a_runaway_user_template_stops_and_writes_nothing(tmp_path, analysis):
    # Protections: the render deadline, and render-everything-before-writing.
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / "design.md.j2").write_text(
        "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"
    )
    with pytest.raises(AdvisorError) as caught:
        write_documents(
            analysis,
            tmp_path / "out",
            formats=("md",),
            templates_dir=tmp_path / "tpl",
            limits=Limits(time_s=0.2),
        )
    assert str(caught.value) == (
        f"{tmp_path / 'tpl' / 'design.md.j2'}:1: template stopped: it "
        "took longer than 0.2 s (render limit)"
    )
    assert not (tmp_path / "out").exists()


def test_templates_see_plain_data_only(analysis):
    # Protection: report_context hands templates values, not live objects (no Path to write
    # through, no Analysis or loader to call into). A new type here needs a look first.
    allowed_modules = {"builtins", "advisor.result", "advisor.config.model"}
    # Looked at: frozen records of text and numbers, no Path, no method that reaches outside.
    allowed_types = {
        "advisor.rules.pack.Reference",
        "advisor.config.alerts.AlertsPlan",
        "advisor.config.alerts.AlertGroup",
        "advisor.config.alerts.AlertRule",
    }
    found: set[str] = set()

    def walk(value: Any, depth: int = 0) -> None:
        assert depth < 40, "the context nests too deep (a cycle?)"
        kind = type(value)
        found.add(f"{kind.__module__}.{kind.__qualname__}")
        if isinstance(value, dict):
            for key, item in value.items():
                walk(key, depth + 1)
                walk(item, depth + 1)
        elif isinstance(value, list | tuple | set | frozenset):
            for item in value:
                walk(item, depth + 1)
        elif dataclasses.is_dataclass(value):
            for item in dataclasses.fields(value):
                walk(getattr(value, item.name), depth + 1)
        elif hasattr(type(value), "model_fields"):
            for name in type(value).model_fields:
                walk(getattr(value, name), depth + 1)

    walk(document_context(analysis))
    strange = sorted(
        name
        for name in found
        if name.rsplit(".", 1)[0] not in allowed_modules and name not in allowed_types
    )
    assert not strange
    builtins = {name.rsplit(".", 1)[1] for name in found if name.startswith("builtins.")}
    assert builtins <= {"dict", "list", "tuple", "str", "int", "float", "bool", "NoneType"}


# ---------------------------------------------------------------------------------------------
# No execution sinks in the package


def _calls(tree: ast.AST) -> list[tuple[str, ast.Call]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found.append((ast.unparse(node.func), node))
    return found


FORBIDDEN_CALLS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "os.system",
    "os.popen",
    "os.execv",
    "os.execvp",
    "os.spawnl",
    "pty.spawn",
    "yaml.load",
    "yaml.load_all",
    "yaml.unsafe_load",
    "yaml.full_load",
    "yaml.unsafe_load_all",
    "jinja2.Environment",
    "jinja2.Template",
    "Environment",
    "Template",
    "pickle.loads",
    "pickle.load",
    "marshal.loads",
    "shelve.open",
}
FORBIDDEN_IMPORTS = {"pickle", "marshal", "shelve", "dill", "cloudpickle", "code", "pty"}
# importlib is used for lazy attribute loading from fixed name tables, nothing else.
IMPORT_MODULE_ALLOWED = {"_lazy.py"}


# yaml.load and yaml.load_all build only plain data when given a safe loader class
# (yaml.SafeLoader, or libyaml's yaml.CSafeLoader: the same safe constructor, PyYAML docs).
SAFE_WITH_A_SAFE_LOADER = {"yaml.load", "yaml.load_all"}


def _safe_loader(call: ast.Call, safe_names: set[str]) -> bool:
    for keyword in call.keywords:
        if keyword.arg == "Loader":
            loader = ast.unparse(keyword.value)
            return ("Safe" in loader and "Unsafe" not in loader) or loader in safe_names
    return False


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_input_reaches_eval_exec_a_shell_or_an_unsafe_loader(path):
    # Protection: this scan. Adding eval(...) or subprocess.run(..., shell=True) to any
    # module fails it; so does yaml.load without a safe loader, or a plain jinja2 Environment.
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = str(path.relative_to(PACKAGE))
    safe_names = {  # loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and "Safe" in ast.unparse(node.value)
        and "Unsafe" not in ast.unparse(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for name, call in _calls(tree):
        if name not in SAFE_WITH_A_SAFE_LOADER or not _safe_loader(call, safe_names):
            assert name not in FORBIDDEN_CALLS, f"{where}:{call.lineno}: {name}(...)"
        for keyword in call.keywords:
            if keyword.arg == "shell":
                assert isinstance(keyword.value, ast.Constant) and keyword.value.value is False, (
                    f"{where}:{call.lineno}: {name}(..., shell=...)"
                )
            if keyword.arg == "Loader":
                loader = ast.unparse(keyword.value)
                assert ("Safe" in loader and "Unsafe" not in loader) or loader in safe_names, (
                    f"{where}:{call.lineno}: Loader={loader}"
                )
        if name.endswith("import_module"):
            assert where in IMPORT_MODULE_ALLOWED, f"{where}:{call.lineno}: {name}(...)"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            for module in modules:
                assert module.split(".")[0] not in FORBIDDEN_IMPORTS, f"{where}: import {module}"


def test_the_scan_sees_what_it_forbids():
    # The scan above must fail on the sinks it names (a scan that matches nothing is no test).
    bad = textwrap.dedent("""
        import pickle
        eval(text)
        subprocess.run(cmd, shell=True)
        yaml.load(text, Loader=yaml.Loader)
        jinja2.Environment().from_string(text)
    """)
    names = {name for name, _ in _calls(ast.parse(bad))}
    assert {"eval", "jinja2.Environment", "yaml.load"} <= names & FORBIDDEN_CALLS
    unsafe = next(c for n, c in _calls(ast.parse(bad)) if n == "yaml.load")
    assert not _safe_loader(unsafe, set())
    safe = ast.parse("yaml.load(text, Loader=yaml.CSafeLoader)").body[0].value  # type: ignore[attr-defined]
    assert _safe_loader(safe, set())
    shell = next(c for n, c in _calls(ast.parse(bad)) if n == "subprocess.run")
    assert [k.arg for k in shell.keywords] == ["shell"]


def test_a_user_template_cannot_change_what_later_templates_see(tmp_path):
    # Protection: ImmutableSandboxedEnvironment. With the plain sandbox, {{ rec.links.clear() }}
    # in design.md.j2 emptied the links that the later templates of the same run render.
    from advisor.analysis import analyse
    from advisor.documents.render import render_documents
    from advisor.errors import AdvisorError

    (tmp_path / "design.md.j2").write_text("{{ rec.links.clear() }}")
    example = Path(__file__).resolve().parent.parent / "examples" / "us-eu" / "topology.yaml"
    analysis = analyse(example)
    with pytest.raises(AdvisorError, match="attribute 'clear' of 'list' object is unsafe"):
        render_documents(analysis, ("md",), tmp_path)
