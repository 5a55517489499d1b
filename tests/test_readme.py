"""The README runs: every ```python block, in order, in one namespace, in a fresh interpreter.

A block can be left out only with a first line ``# readme-test: skip (<reason>)``.
The README's commands are checked too: the test command is the one CI runs, and
every ``counterfact ...`` line parses with the real argument parser.
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
SKIP = re.compile(r"^#\s*readme-test:\s*skip\s*\((.+)\)\s*$")
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


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


def test_readme_python_blocks_run(tmp_path):
    run, _skipped = runnable(blocks(README.read_text(), "python"))
    assert len(run) >= 2, "the README should have its quick start and the own-data example"
    script = tmp_path / "readme_blocks.py"
    parts = []
    for k, body in enumerate(run):
        parts.append(f"# ---- README python block {k}\n{body}")
    script.write_text("\n".join(parts))
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
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

    text = README.read_text()
    joined = "\n".join(blocks(text, "bash")).replace("\\\n", " ")
    lines = [ln.split("#")[0].strip() for ln in joined.splitlines()]
    commands = [ln for ln in lines if ln.startswith("counterfact ")]
    assert len(commands) >= 5
    parser = build_parser()
    for line in commands:
        argv = shlex.split(line)[1:]
        if argv in (["--help"], ["--version"]):
            continue
        parser.parse_args(argv)  # unknown options or choices exit with status 2


def test_the_methods_table_is_the_registry():
    """The README's methods table is ``counterfact methods --markdown``: a registered
    method, or a change of its tags, shows up there (regenerate the table)."""
    from counterfact.cli._methods import methods_table

    assert methods_table() in README.read_text(), (
        "run `counterfact methods --markdown` and paste it into the README"
    )
