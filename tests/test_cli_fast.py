"""``advisor recommend`` without typer (advisor.cli.recommend): the same arguments, output,
errors and exit codes as the typer app, and the typer app for whatever it does not take."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, REPO

import advisor.cli.commands
from advisor.cli import main
from advisor.cli.recommend import RecommendArgs, read_arguments

PARIS = str(EXAMPLES / "paris-frankfurt" / "topology.yaml")
US_EU = str(EXAMPLES / "us-eu" / "topology.yaml")

TAKEN = [
    ["recommend", PARIS],
    ["recommend", PARIS, "--format", "json"],
    ["recommend", PARIS, US_EU, "-f", "jsonl", "-j", "2"],
    ["recommend", "--format=markdown", PARIS, "--jobs=3"],
    ["recommend", PARIS, "-f", "json", "--format", "text"],  # the last one wins
    ["recommend", PARIS, "--require", "grouped_clusters", "--fail-on", "warning"],
    ["recommend", PARIS, "--rules", "a", "--rules=b", "--measurements-root", "m"],
    ["recommend", PARIS, "--max-file-mb", "0.5", "--max-file-mb=12"],
    ["recommend", PARIS, "--max-file-mb", "0.001"],
    ["recommend", ""],  # an empty name is Path("") in both
    [
        "recommend",
        "東京.yaml",
        "caf\udce9.yaml",
        "--rules",
        " r ",
    ],  # non-UTF-8 bytes as argv has them
]
LEFT_TO_TYPER = [
    [],
    ["--help"],
    ["validate", PARIS],
    ["recommend"],
    ["recommend", "--help"],
    ["recommend", PARIS, "-h"],
    ["recommend", PARIS, "--format", "yaml"],
    ["recommend", PARIS, "--format"],
    ["recommend", PARIS, "--format", "--jobs"],
    ["recommend", PARIS, "-fjson"],
    ["recommend", PARIS, "-f=json"],
    ["recommend", PARIS, "--format="],
    ["recommend", PARIS, "--frobnicate"],
    ["recommend", "--", PARIS],
    ["recommend", "-"],
    ["recommend", PARIS, "--jobs", "0"],
    ["recommend", PARIS, "--jobs", "007"],
    ["recommend", PARIS, "--max-file-mb", "0.0001"],
    ["recommend", PARIS, "--max-file-mb", "1e3"],
    ["recommend", PARIS, "--max-file-mb", " 5"],
    ["recommend", PARIS, "--require", "Single_Cluster"],
    ["recommend", PARIS, "--fail-on", "info"],
]


def _typer_reads(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> RecommendArgs:
    """What the typer app hands the command for ``argv``."""
    seen: list[RecommendArgs] = []
    monkeypatch.setattr(advisor.cli.commands, "run_recommend", lambda a, echo: seen.append(a))
    from typer.testing import CliRunner

    result = CliRunner().invoke(advisor.cli.commands.app, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen[0]


@pytest.mark.parametrize("argv", TAKEN, ids=" ".join)
def test_the_reader_takes_what_typer_takes_alike(argv, monkeypatch):
    assert read_arguments(argv) == _typer_reads(argv, monkeypatch)


@pytest.mark.parametrize("argv", LEFT_TO_TYPER, ids=" ".join)
def test_the_reader_leaves_everything_else_to_typer(argv):
    assert read_arguments(argv) is None


def _process(*argv: str) -> subprocess.CompletedProcess[str]:
    """``advisor`` as a process, saying on stderr's last line whether typer was imported."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('typer' in sys.modules, file=sys.stderr))\n"
        "from advisor.cli import main\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "100", "PYTHONIOENCODING": "utf-8"},
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["recommend", PARIS, "--format", "json"],
        ["recommend", PARIS, US_EU, "--format", "jsonl", "--jobs", "1"],
        ["recommend", PARIS, "--require", "single_cluster"],  # exit 1
        ["recommend", PARIS, "missing.yaml"],  # exit 2, one line
        ["recommend", PARIS, "--format", "yaml"],  # typer's usage error
    ],
    ids=" ".join,
)
def test_the_process_prints_what_the_typer_app_prints(argv, cli):
    fast = _process(*argv)
    *stderr, typer_imported = fast.stderr.splitlines(keepends=True)
    expected = cli(*argv)
    assert (fast.returncode, fast.stdout) == (expected.exit_code, expected.stdout)
    assert "".join(stderr) == expected.stderr
    usage_error = argv[-1] == "yaml"
    assert typer_imported == f"{usage_error}\n"


@pytest.mark.parametrize(
    ("encoding", "plain"), [("utf-8", True), ("latin-1", True), ("ascii", False)]
)
def test_an_ascii_stream_is_left_to_click(encoding, plain):
    """click writes UTF-8 to a stream set to ASCII: the typer app keeps doing that."""
    result = subprocess.run(
        [sys.executable, "-c", "from advisor.cli.output import plain_streams as p; print(p())"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": encoding},
    )
    assert result.stdout == f"{plain}\n"


@pytest.fixture
def collector():
    """The collector's state restored after the test (main() freezes the start-up)."""
    was_enabled = gc.isenabled()
    yield
    gc.unfreeze()
    (gc.enable if was_enabled else gc.disable)()


@pytest.mark.parametrize(
    "argv", [["recommend", PARIS, "-f", "json"], ["recommend", PARIS, "-fjson"]]
)
def test_the_collector_is_paused_for_the_start_up_only(argv, monkeypatch, capsys, collector):
    """Stopped while main() imports, running again when the engine runs, on the fast path
    and the typer app's alike, and after main() returns."""
    seen = []

    def engine(*args, **kwargs):
        seen.append((gc.isenabled(), gc.get_freeze_count() > 0))
        return []

    monkeypatch.setattr("advisor.fleet.recommend_many", engine)
    monkeypatch.setattr(sys, "argv", ["advisor", *argv])
    gc.enable()
    with pytest.raises(SystemExit) as end:
        main()
    assert end.value.code == 0 and capsys.readouterr().out == "[]\n"
    assert seen == [(True, True)]
    assert gc.isenabled()


def test_a_collector_the_caller_stopped_stays_stopped(monkeypatch, capsys, collector):
    monkeypatch.setattr(sys, "argv", ["advisor", "recommend", "missing.yaml"])
    gc.disable()
    with pytest.raises(SystemExit) as end:
        main()
    assert end.value.code == 2 and "topology file not found" in capsys.readouterr().err
    assert not gc.isenabled() and gc.get_freeze_count() == 0


def test_startup_turns_off_pydantic_plugin_discovery_unless_the_user_chose(monkeypatch):
    import pydantic.plugin._loader as loader

    from advisor.cli import startup

    monkeypatch.setitem(sys.modules, "pydantic.plugin._loader", loader)  # no stand-in here
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    startup.pause()
    startup.resume()
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__"
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "logfire")
    startup.pause()
    startup.resume()
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "logfire"


def test_pydantics_plugin_loader_answers_as_its_stand_in(monkeypatch):
    """advisor.cli.startup puts a loader that finds no plugins in place of pydantic's when
    plugins are disabled: pydantic's own answers the same under those settings, and
    ``get_plugins`` is all pydantic takes from it (an upgrade that changes either fails)."""
    import pydantic
    import pydantic.plugin._loader as loader

    from advisor.cli import startup

    for setting in startup._NO_PLUGINS:
        monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", setting)
        assert tuple(loader.get_plugins()) == ()
    assert tuple(startup._no_plugins_loader().get_plugins()) == ()
    uses = {
        str(path.relative_to(Path(pydantic.__file__).parent)): line.strip()
        for path in Path(pydantic.__file__).parent.rglob("*.py")
        if path.name != "_loader.py"
        for line in path.read_text(encoding="utf-8").splitlines()
        if "_loader" in line
    }
    assert uses == {"plugin/_schema_validator.py": "from ._loader import get_plugins"}


def test_a_name_the_stand_in_lacks_comes_from_pydantics_own_loader(monkeypatch):
    """A pydantic release that asks the loader for more than get_plugins gets the real
    loader's names (imported in the stand-in's place), not an AttributeError."""
    from advisor.cli import startup

    monkeypatch.delitem(sys.modules, startup._PLUGIN_LOADER, raising=False)
    stand_in = startup._no_plugins_loader()
    monkeypatch.setitem(sys.modules, startup._PLUGIN_LOADER, stand_in)
    group = stand_in.PYDANTIC_ENTRY_POINT_GROUP
    assert group == "pydantic"
    assert sys.modules[startup._PLUGIN_LOADER] is not stand_in  # the real one, now


@pytest.mark.parametrize(
    ("setting", "discovered"), [(None, False), ("true", False), ("logfire", True)]
)
def test_plugin_discovery_is_imported_only_when_plugins_may_load(setting, discovered):
    """With plugins off, the command imports no importlib.metadata (pydantic's loader would);
    a user's own setting that lets some plugins load keeps pydantic's loader."""
    code = (
        "import sys\n"
        "from advisor.cli import startup\n"
        "startup.pause()\n"
        "from advisor.inputs.loading import load_topology\n"
        f"load_topology({PARIS!r})\n"
        "print('importlib.metadata' in sys.modules)\n"
    )
    env = {"PATH": "/usr/bin:/bin"}
    if setting is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = setting
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{discovered}\n", "")
