"""Every fenced code block of README.md runs, or is checked against the code, or is skipped
by name with a reason.

- ```python blocks run in the repository root, each in a fresh namespace.
- ```sh blocks: each ``advisor ...`` command runs through ``advisor.cli.app``; the set-up
  commands CI runs anyway are skipped by an explicit list; the synopsis under "## Commands"
  is documentation: every subcommand and option it names must exist.
- ```text blocks that start with ``$ advisor ...`` run the command; the shown output, up to
  the first ``...``, must be what the command prints.
- ```yaml blocks: the topology must validate (model, JSON Schema, and loaded with its
  measurement files); a rule override must load with ``load_rules`` and change what it says.

A broken example in the README fails here; a block of an unknown kind fails too, so that a
new example cannot escape the test.
"""

from __future__ import annotations

import ast
import io
import json
import re
import shlex
import shutil
import tokenize
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main
import yaml
from conftest import EXAMPLES, REPO
from typer.testing import CliRunner

from advisor.cli import app

README = REPO / "README.md"
KINDS = {"python", "sh", "text", "yaml"}
SYNOPSIS_HEADING = "## Commands"  # its ```sh block lists usages with placeholders

# Command lines of ```sh blocks that cannot run here, each with the reason. Keys are the
# commands as shlex.join spells them; a key no longer in the README fails the test below.
NOT_RUN = {
    "python3 -m venv .venv": "set-up: creates the virtualenv the tests already run in (CI runs it)",
    ".venv/bin/pip install .": "set-up: installs the package from the network (CI runs it)",
    ".venv/bin/pip install '.[test]'": "set-up: installs test dependencies (CI runs it)",
    ".venv/bin/python -m pytest": "the whole test suite: running it from inside it would recurse",
}


@dataclass(frozen=True)
class Block:
    kind: str
    text: str
    line: int  # 1-based line of the opening fence
    heading: str  # the nearest "## " heading above it

    @property
    def id(self) -> str:
        return f"{self.kind}-line{self.line}"


def _blocks() -> list[Block]:
    blocks: list[Block] = []
    heading = ""
    lines = README.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("## "):
            heading = line.strip()
        fence = re.fullmatch(r"```(\S*)\s*", line)
        if fence:
            start = index
            index += 1
            body: list[str] = []
            while index < len(lines) and lines[index].strip() != "```":
                body.append(lines[index])
                index += 1
            assert index < len(lines), f"README.md:{start + 1}: code block never closed"
            blocks.append(Block(fence.group(1), "\n".join(body) + "\n", start + 1, heading))
        index += 1
    return blocks


BLOCKS = _blocks()


def _of(kind: str) -> list[Block]:
    return [block for block in BLOCKS if block.kind == kind]


def _params(blocks: list[Block]) -> list[object]:
    return [pytest.param(block, id=block.id) for block in blocks]


def _run(*args: str) -> object:
    """Run the real CLI app (cwd is set by the caller), as the ``cli`` fixture does."""
    return CliRunner().invoke(
        app, list(args), catch_exceptions=False, env={"COLUMNS": "100", "NO_COLOR": "1"}
    )


def _commands(line: str) -> list[list[str]]:
    """The simple commands of a shell line joined by ``&&``; other operators are refused."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands: list[list[str]] = [[]]
    for token in lexer:
        if token == "&&":
            commands.append([])
        elif token and set(token) <= set("();<>|&"):
            pytest.fail(f"shell operator {token!r} in README command {line!r}: not supported here")
        else:
            commands[-1].append(token)
    return [command for command in commands if command]


def _command_lines(block: Block) -> list[str]:
    text = block.text.replace("\\\n", " ")
    return [
        line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]


def test_the_readme_has_examples_of_every_kind():
    assert {block.kind for block in BLOCKS} == KINDS
    assert len(_of("python")) >= 2 and len(_of("yaml")) >= 2 and len(_of("sh")) >= 3


def test_every_block_is_of_a_kind_this_test_checks():
    unknown = [f"README.md:{b.line}: ```{b.kind}" for b in BLOCKS if b.kind not in KINDS]
    assert not unknown, f"code blocks no test runs (give them a known kind): {unknown}"


# --- ```python -------------------------------------------------------------------------------


def _first_print_comment(source: str) -> str | None:
    """The trailing comment of the block's first top-level ``print(...)``, if it has one.

    The README's convention: such a comment shows what that print writes.
    """
    tree = ast.parse(source)
    comments = {
        token.start[0]: token.string.lstrip("#").strip()
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }
    for statement in tree.body:
        call = getattr(statement, "value", None)
        if (
            isinstance(statement, ast.Expr)
            and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "print"
        ):
            return comments.get(statement.end_lineno or statement.lineno)
    return None


@pytest.mark.parametrize("block", _params(_of("python")))
def test_python_block_runs(block, monkeypatch):
    monkeypatch.chdir(REPO)
    # Leading newlines so that a traceback names the README's own line numbers.
    code = compile("\n" * block.line + block.text, str(README), "exec")
    out = io.StringIO()
    with redirect_stdout(out):
        exec(code, {"__name__": "__readme__"})
    expected = _first_print_comment(block.text)
    if expected is not None:
        assert out.getvalue().splitlines()[0] == expected, (
            f"README.md:{block.line}: the comment on the first print() is not what it prints"
        )


# --- ```sh -----------------------------------------------------------------------------------


def _runnable_sh_blocks() -> list[Block]:
    return [b for b in _of("sh") if b.heading != SYNOPSIS_HEADING]


@pytest.mark.parametrize("block", _params(_runnable_sh_blocks()))
def test_sh_block_commands_run(block, monkeypatch):
    monkeypatch.chdir(REPO)
    for line in _command_lines(block):
        for command in _commands(line):
            spelled = shlex.join(command)
            if Path(command[0]).name == "advisor":
                result = _run(*command[1:])
                assert result.exit_code == 0, (
                    f"README.md:{block.line}: {spelled!r} exited {result.exit_code}: "
                    f"{result.stderr}"
                )
                assert result.stdout.strip(), f"README.md:{block.line}: {spelled!r} printed nothing"
            else:
                assert spelled in NOT_RUN, (
                    f"README.md:{block.line}: {spelled!r} is neither an advisor command nor in "
                    "NOT_RUN (add it there with the reason it cannot run here)"
                )


def test_the_not_run_list_has_no_stale_entries():
    seen = {
        shlex.join(command)
        for block in _runnable_sh_blocks()
        for line in _command_lines(block)
        for command in _commands(line)
    }
    assert set(NOT_RUN) <= seen, f"no longer in the README: {sorted(set(NOT_RUN) - seen)}"


def test_at_least_one_readme_sh_line_runs_advisor():
    runnable = [
        command
        for block in _runnable_sh_blocks()
        for line in _command_lines(block)
        for command in _commands(line)
        if Path(command[0]).name == "advisor"
    ]
    assert runnable, "the set-up block should end by running advisor on an example"


def _synopsis() -> Block:
    found = [b for b in _of("sh") if b.heading == SYNOPSIS_HEADING]
    assert len(found) == 1, f"expected one ```sh block under {SYNOPSIS_HEADING!r}"
    return found[0]


def test_the_synopsis_names_existing_subcommands_and_options():
    """The usages under "## Commands" have placeholders (FILE..., A:B): not run, but every
    subcommand, option and listed choice they name must exist in the app."""
    group = typer.main.get_command(app)
    commands = group.commands  # type: ignore[attr-defined]
    named = []
    for line in _command_lines(_synopsis()):
        words = line.split("#", 1)[0].split()
        assert words[0] == "advisor", f"synopsis line not an advisor usage: {line!r}"
        name = words[1]
        named.append(name)
        assert name in commands, f"synopsis names {name!r}; the app has {sorted(commands)}"
        options = {opt for p in commands[name].params for opt in (*p.opts, *p.secondary_opts)}
        help_text = _run(name, "--help")
        assert help_text.exit_code == 0
        for index, word in enumerate(words[2:], start=2):
            bare = word.strip("[]")
            if re.fullmatch(r"--?[a-z][\w-]*", bare):
                assert bare in options, f"advisor {name}: no option {bare} (synopsis: {line!r})"
                following = words[index + 1].strip("[]") if index + 1 < len(words) else ""
                if re.fullmatch(r"[\w-]+(\|[\w-]+)+", following):
                    for choice in following.split("|"):
                        assert re.search(
                            rf"(?<![\w-]){re.escape(choice)}(?![\w-])", help_text.stdout
                        ), f"advisor {name} {bare}: choice {choice!r} not in its --help"
    assert set(named) == set(commands), "the synopsis should list every command of the app"


# --- ```text ---------------------------------------------------------------------------------


def _session_blocks() -> list[Block]:
    return [b for b in _of("text") if b.text.startswith("$ ")]


def test_text_sessions_are_advisor_commands():
    assert _session_blocks(), "the README's tour shows a report"
    for block in _session_blocks():
        assert block.text.startswith("$ advisor "), f"README.md:{block.line}: not advisor"


@pytest.mark.parametrize("block", _params(_session_blocks()))
def test_text_block_shows_what_the_command_prints(block, monkeypatch):
    monkeypatch.chdir(REPO)
    first, *shown = block.text.splitlines()
    command = shlex.split(first[2:])
    result = _run(*command[1:])
    assert result.exit_code == 0, result.stderr
    real = result.stdout.splitlines()
    cut = next((i for i, line in enumerate(shown) if "..." in line), len(shown))
    assert cut > 0, "the shown output should begin with lines of real output"
    for number, (want, got) in enumerate(zip(shown[:cut], real, strict=False)):
        assert got.rstrip() == want.rstrip(), (
            f"README.md:{block.line + 2 + number}: shows {want!r}, {first[2:]} prints {got!r}"
        )
    assert len(real) > cut
    if cut < len(shown):  # the line with the first "...": what comes before it
        head = shown[cut].split("...", 1)[0]
        assert real[cut].startswith(head.rstrip()), (
            f"README.md:{block.line + 2 + cut}: shows {head!r}..., the command prints {real[cut]!r}"
        )


# --- ```yaml ---------------------------------------------------------------------------------


def _yaml_blocks(key: str) -> list[Block]:
    return [b for b in _of("yaml") if key in (yaml.safe_load(b.text) or {})]


def test_every_yaml_block_is_a_topology_or_a_rule_override():
    for block in _of("yaml"):
        data = yaml.safe_load(block.text)
        assert isinstance(data, dict) and ("sites" in data or "id" in data), (
            f"README.md:{block.line}: a yaml block that is neither a topology nor a rule file"
        )
    assert _yaml_blocks("sites") and _yaml_blocks("id")


@pytest.mark.parametrize("block", _params(_yaml_blocks("sites")))
def test_yaml_topology_is_valid(block):
    from advisor.inputs.loading import parse_topology
    from advisor.inputs.schema import topology_schema_json

    loaded = parse_topology(block.text, source=README)
    data = yaml.safe_load(block.text)
    assert loaded.topology.name == data["name"]
    assert [site.name for site in loaded.topology.sites] == [s["name"] for s in data["sites"]]
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(data, json.loads(topology_schema_json()))


def test_a_yaml_block_is_the_bundled_file_it_names_or_says_it_is_a_sketch():
    """The YAML under "The input" once bore an example's name and was not that file."""
    text = README.read_text(encoding="utf-8")
    for block in _yaml_blocks("sites"):
        intro = "\n".join(text.splitlines()[max(block.line - 4, 0) : block.line - 1])
        named = re.search(r"`(examples/[\w.-]+/topology\.yaml)`", intro)
        if named:
            bundled = (REPO / named.group(1)).read_text(encoding="utf-8")
            assert block.text == bundled, f"README.md:{block.line}: not {named.group(1)} as shipped"
        else:
            assert "sketch" in intro, (
                f"README.md:{block.line}: say it is a sketch, or name the file"
            )


def test_the_what_if_snippet_derives_a_variant_with_the_public_api():
    whatifs = [b for b in _of("python") if "parse_topology(" in b.text and "source=" in b.text]
    assert whatifs, "the README shows how to vary a loaded topology (issue 24)"


def _example_measurement(fmt: str) -> Path:
    found = sorted(EXAMPLES.glob(f"*/measurements/*.{fmt}.txt"))
    assert found, f"no example measurement file of format {fmt!r} to stand in"
    return found[0]


@pytest.mark.parametrize("block", _params(_yaml_blocks("sites")))
def test_yaml_topology_loads_and_runs_with_its_measurement_files(block, tmp_path, monkeypatch):
    """The files it names do not ship; stand-ins of the same format from examples/ do."""
    from advisor.inputs.loading import load_topology

    data = yaml.safe_load(block.text)
    for link in data.get("links", []):
        for measurement in link.get("measurements", []):
            if "file" in measurement:
                target = tmp_path / measurement["file"]
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(_example_measurement(measurement["format"]), target)
    path = tmp_path / "topology.yaml"
    path.write_text(block.text, encoding="utf-8")
    loaded = load_topology(path)
    assert loaded.topology.name == data["name"]
    monkeypatch.chdir(tmp_path)
    result = _run("recommend", "topology.yaml", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["topology"] == data["name"]


def _override_files(block: Block, root: Path) -> Path:
    """Write the block where its first-line comment says (``# my-rules/x.yaml``)."""
    first = block.text.splitlines()[0]
    named = re.fullmatch(r"#\s*(\S+\.ya?ml)\s*", first)
    relative = Path(named.group(1)) if named else Path("rules") / "override.yaml"
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(block.text, encoding="utf-8")
    return path.parent


@pytest.mark.parametrize("block", _params(_yaml_blocks("id")))
def test_yaml_rule_override_loads_and_changes_what_it_says(block, tmp_path, monkeypatch):
    from advisor.rules.pack import load_rules

    folder = _override_files(block, tmp_path)
    data = yaml.safe_load(block.text)
    shipped = load_rules()[data["id"]]
    rule = load_rules([folder])[data["id"]]
    changed = {key: value for key, value in data.items() if key != "id"}
    assert changed, "an override that changes nothing shows nothing"
    for key, value in changed.items():
        if key == "parameters":
            for name, number in value.items():
                assert rule.parameters[name] == number
                assert shipped.parameters[name] != number, f"{name} is already {number}"
        else:
            assert getattr(rule, key) == value
            assert getattr(shipped, key) != value, f"{key} is already {value!r}"
    monkeypatch.chdir(REPO)
    result = _run("rules", data["id"], "--rules", str(folder))
    assert result.exit_code == 0, result.stderr
    if "severity" in data:
        assert result.stdout.startswith(f"{data['id']} ({data['severity']})")
