"""The README runs: every ```python block, in order, in one namespace, in a fresh interpreter.

A block can be left out only with a first line ``# readme-test: skip (<reason>)``.
The README's commands are checked too: the test command is the one CI runs, and
every ``counterfact ...`` line parses with the real argument parser.

Every page of ``docs/`` is held to the same: its ```python blocks run (one page, one
fresh interpreter, in a temporary folder) and its ``counterfact ...`` lines parse.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").rglob("*.md"))  # docs/papers/ too
SKIP = re.compile(r"^#\s*readme-test:\s*skip\s*\((.+)\)\s*$")
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def _rel(page: Path) -> str:
    """``docs/papers/mace.md``: a page's path from the repository's root."""
    return page.relative_to(ROOT).as_posix()


def blocks(text: str, lang: str) -> list[str]:
    """The fenced blocks of ``text`` in language ``lang``, in order."""
    return [body for tag, body in FENCE.findall(text) if tag == lang]


def runnable(python_blocks: list[str]) -> tuple[list[str], list[str]]:
    """(blocks to run, reasons of the skipped ones); a skip marker needs a reason."""
    run, skipped = [], []
    for body in python_blocks:
        first = body.lstrip().splitlines()[0] if body.strip() else ""
        if "readme-test" in first:
            m = SKIP.match(first.strip())
            if not m or not m.group(1).strip():
                raise AssertionError(
                    f"malformed skip marker {first!r}: use '# readme-test: skip (reason)'"
                )
            skipped.append(m.group(1))
        else:
            run.append(body)
    return run, skipped


def cli_lines(text: str) -> list[str]:
    """The ``counterfact ...`` command lines of ``text``: lines of shell blocks (``bash``,
    ``sh``, ``shell``, ``console`` or no language), and ``$ counterfact ...`` lines of any
    of these or of a ``text`` block; continuation lines joined."""
    commands = []
    for tag, body in FENCE.findall(text):
        if tag not in ("bash", "sh", "shell", "console", "", "text"):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line.startswith("$ "):
                line = line[2:].lstrip()
            elif tag == "text":
                continue
            if line.startswith("counterfact "):
                commands.append(line)
    return commands


def parse_cli_line(parser, line: str, where: str) -> None:
    """Parse one ``counterfact ...`` line with the real parser; fail naming the line."""
    argv = shlex.split(line, comments=True)[1:]
    if argv in (["--help"], ["--version"]):
        return
    try:
        parser.parse_args(argv)  # unknown options or choices exit with status 2
    except SystemExit as exc:
        pytest.fail(f"{where}: {line!r} does not parse (exit status {exc.code}; why: in stderr)")


def run_blocks(run: list[str], name: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run the python blocks ``run`` of page ``name`` in order, in one namespace, in a
    fresh interpreter whose working folder is ``tmp_path``."""
    parts = [f"# ---- {name} python block {k + 1}\n{body}" for k, body in enumerate(run)]
    # a name no example imports (a script named after a module would shadow it)
    script = tmp_path / "_blocks_under_test.py"
    script.write_text("\n".join(parts))
    return subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )


def failed_block(proc: subprocess.CompletedProcess, run: list[str]) -> str:
    """Which block a failed run stopped in, from the last frame of the script in its
    traceback ("python block k of the n run: <its first line>"), or "" when unknown."""
    frames = re.findall(r'_blocks_under_test\.py", line (\d+)', proc.stderr)
    if not frames:
        return ""
    line, start = int(frames[-1]), 1
    for k, body in enumerate(run):
        end = start + 2 + body.count("\n")  # its header line, its lines, a blank line
        if line < end:
            first = next((ln for ln in body.splitlines() if ln.strip()), "")
            return f"python block {k + 1} of the {len(run)} run: {first.strip()!r}"
        start = end
    return ""


def test_fence_parser_and_skip_marker():
    text = (
        "x\n```python\na = 1\n```\n```bash\nls\n```\n"
        "```python\n# readme-test: skip (needs a GPU)\nb = 2\n```\n"
    )
    py = blocks(text, "python")
    assert py == ["a = 1\n", "# readme-test: skip (needs a GPU)\nb = 2\n"]
    assert runnable(py) == (["a = 1\n"], ["needs a GPU"])
    with pytest.raises(AssertionError):
        runnable(["# readme-test: skip\nc = 3\n"])


def test_cli_lines():
    text = (
        "```bash\ncounterfact explain --dataset adult \\\n    --rows 2  # two rows\n"
        "pip install counterfact\n```\n"
        "```\ncounterfact audit --dataset adult\n```\n"
        "```text\n$ counterfact demo --rows 1\ncounterfact 1.0 (an output line)\n```\n"
        "```python\ncounterfact = 1\n```\n"
    )
    assert cli_lines(text) == [
        "counterfact explain --dataset adult      --rows 2  # two rows",
        "counterfact audit --dataset adult",
        "counterfact demo --rows 1",
    ]


def test_a_broken_block_fails_and_is_named(tmp_path):
    run = ["a = 1\n", "\nb = a + 1\nprint(undefined)\n", "c = 3\n"]
    proc = run_blocks(run, "page", tmp_path)
    assert proc.returncode != 0 and "NameError" in proc.stderr
    assert failed_block(proc, run) == "python block 2 of the 3 run: 'b = a + 1'"
    proc = run_blocks(["import json\n", "print(json.dumps(1))\n"], "page", tmp_path)
    assert proc.returncode == 0 and proc.stdout == "1\n"


def test_readme_python_blocks_run(tmp_path):
    run, _skipped = runnable(blocks(README.read_text(), "python"))
    assert len(run) >= 2, "the README should have its quick start and the own-data example"
    proc = run_blocks(run, "README", tmp_path)
    assert proc.returncode == 0, (
        f"README block failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    )
    out = proc.stdout
    # the quick start explains rejected applicants only, and prints readable changes
    m = re.search(r"(\d+) of (\d+) test applicants are rejected", out)
    assert m and 0 < int(m.group(1)) < int(m.group(2))
    assert "->" in out
    # the audit example ran on the same method and rows
    assert re.search(r"AuditResult\(method='mace', rows=\d+, rejected=\d+", out)
    # progress was shown (verbose=1) on stderr, not mixed into stdout
    assert "query" in proc.stderr


def test_readme_commands_match_ci():
    text = README.read_text()
    bash = "\n".join(blocks(text, "bash"))
    ci = (ROOT / ".ci" / "run").read_text()
    test_cmd = 'pip install ".[all,test]" && python -m pytest -n 2 -q'
    assert test_cmd in bash and test_cmd in ci
    ci_lines = [
        ln.strip() for ln in ci.splitlines() if "pytest" in ln and not ln.strip().startswith("#")
    ]
    assert ci_lines == [test_cmd]
    assert "pip install . && counterfact demo" in bash


def test_readme_cli_lines_parse():
    from counterfact.cli import build_parser

    commands = cli_lines(README.read_text())
    assert len(commands) >= 5
    parser = build_parser()
    for line in commands:
        parse_cli_line(parser, line, "README.md")


def test_docs_are_found():
    assert DOCS, "docs/*.md not found"
    assert [p for p in DOCS if blocks(p.read_text(), "python")], "no page of docs/ has python"


@pytest.mark.parametrize(
    "page", [p for p in DOCS if blocks(p.read_text(), "python")], ids=lambda p: _rel(p)
)
def test_docs_python_blocks_run(page, tmp_path):
    """A page's python blocks run in order, in one namespace: an example that needs the
    setting of an earlier block on the same page has it; one that cannot run here (a
    server that runs until stopped, a fragment of another page's example) says why with
    ``# readme-test: skip (<reason>)``."""
    run, _skipped = runnable(blocks(page.read_text(), "python"))
    if not run:
        return  # every block is marked, each with its reason (checked by runnable)
    proc = run_blocks(run, f"{_rel(page)}", tmp_path)
    assert proc.returncode == 0, (
        f"{_rel(page)}: {failed_block(proc, run) or 'a python block'} failed:\n"
        f"{proc.stdout[-2000:]}\n{proc.stderr[-5000:]}"
    )


@pytest.mark.parametrize(
    "page", [p for p in DOCS if cli_lines(p.read_text())], ids=lambda p: _rel(p)
)
def test_docs_cli_lines_parse(page):
    from counterfact.cli import build_parser

    parser = build_parser()
    for line in cli_lines(page.read_text()):
        parse_cli_line(parser, line, f"{_rel(page)}")


def test_the_methods_table_is_the_registry():
    """The README's methods table is ``counterfact methods --markdown``: a registered
    method, or a change of its tags, shows up there (regenerate the table)."""
    from counterfact.cli._methods import methods_table

    assert methods_table() in README.read_text(), (
        "run `counterfact methods --markdown` and paste it into the README"
    )
