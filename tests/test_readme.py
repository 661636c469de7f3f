"""The README cannot go stale: every output it quotes is checked here.

The one place that says which command produced which quoted figure is the README
itself: a quoted output is a ```text block whose first line is ``$ schedlab ...``, the
command that prints the rest of the block. This test runs each such command (in
process, output as piped: no terminal, 160 columns, no trailing blanks) and compares
its output with the block, line by line. After a change that moves results:

    python tests/test_readme.py --update     # rewrites every quoted output in README.md

and review the diff. Keep quoted commands small (seconds): this runs with the tests.
The README's test command is also the one .ci/run runs.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(r"```text\n\$ (schedlab [^\n]*)\n(.*?)```", re.S)


def quoted_blocks(text: str) -> list[tuple[str, str, tuple[int, int]]]:
    """(command, quoted output, span of the output in the text) per checked block."""
    return [(m.group(1), m.group(2), m.span(2)) for m in BLOCK.finditer(text)]


def current_output(command: str) -> str:
    """What ``command`` prints (stdout, then stderr), as the README quotes it."""
    import os

    from typer.testing import CliRunner

    from schedlab.cli import app

    args = shlex.split(command)[1:]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        r = CliRunner().invoke(app, args, catch_exceptions=False)
    finally:
        os.chdir(cwd)
    text = r.stdout + (r.stderr if r.stderr and r.stderr not in r.stdout else "")
    lines = [line.rstrip() for line in text.splitlines()]
    return "\n".join(line for line in lines if not line.startswith("[")) + "\n"  # progress log lines


def _normal(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


BLOCKS = quoted_blocks(README.read_text(encoding="utf-8"))


def test_readme_quotes_outputs():
    assert len(BLOCKS) >= 4, "the README's quoted outputs are gone: this test checks nothing"


@pytest.mark.parametrize("command,quoted", [(c, q) for c, q, _ in BLOCKS], ids=[c[:60] for c, _, _ in BLOCKS])
def test_quoted_output_is_what_the_command_prints(command, quoted):
    got = current_output(command)
    assert _normal(got) == _normal(quoted), (
        f"README.md quotes another output for `{command}`: run `python tests/test_readme.py --update` "
        f"and review the diff\n--- now ---\n{got}")


def test_ci_runs_the_readme_test_command():
    text = README.read_text(encoding="utf-8")
    cmd = next(line for line in text.splitlines() if "cargo test" in line and "pytest" in line)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for part in ("-m venv", "pip install", "cargo test --release --workspace", "python -m pytest"):
        assert part in cmd and part in ci, part


def update() -> int:
    text = README.read_text(encoding="utf-8")
    out, last, changed = [], 0, 0
    for command, quoted, (a, b) in quoted_blocks(text):
        got = current_output(command)
        changed += _normal(got) != _normal(quoted)
        out += [text[last:a], got]
        last = b
        print(f"{'updated' if _normal(got) != _normal(quoted) else 'same   '}  $ {command}", file=sys.stderr)
    out.append(text[last:])
    README.write_text("".join(out), encoding="utf-8")
    print(f"{changed} of {len(quoted_blocks(text))} quoted outputs changed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/test_readme.py --update")
    sys.exit(update())
