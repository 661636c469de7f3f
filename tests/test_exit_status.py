"""Exit status per error class: bad input 2 with its one line; an exception from
schedlab's own code 70 with one line, the traceback only behind --debug or
SCHEDLAB_DEBUG=1 (schedlab.cli.base.errors and schedlab.cli.entry.main)."""

from __future__ import annotations

import pytest

from schedlab.cli import catalog_cmd, run_cmd
from test_error_catalogue import run_cli  # main() in this process: (status, stdout, stderr)

BUG_LINE = "this is a bug in schedlab (run with --debug for the traceback)"


class _Raising:
    """Stands in for the bindings: workloads() raises what a bug would."""

    def __init__(self, exc: BaseException):
        self.exc = exc

    def workloads(self) -> str:
        raise self.exc


@pytest.fixture(autouse=True)
def _no_debug_env(monkeypatch):
    monkeypatch.delenv("SCHEDLAB_DEBUG", raising=False)


@pytest.mark.parametrize("args, line", [
    (["workloads", "nope"], "error: unknown workload generator 'nope': expected one of "),
    (["features", "--profile", "9.9"], "error: Invalid value for '--profile' / '-p': '9.9' is not a kernel version "
                                       "like \"6.5\" or \"6.18.35\" (3.x to 7.x) (see 'schedlab features -h')"),
    (["machines", "nope"], "error: unknown preset 'nope': expected one of "),
    (["run", "examples/pipe_pingpong.toml", "--max-sim-time", "-3"],
     "error: Invalid value for '--max-sim-time': '-3' is not a duration like 30s, 500ms or 2min (see 'schedlab run -h')"),
    (["reproduce", "no_such_experiment", "--list"], "error: unknown experiment 'no_such_experiment': expected one of "),
])
def test_bad_input_exits_2_with_one_line(args, line):
    code, _, err = run_cli(args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(line), err
    assert "Traceback" not in err and "internal error" not in err


@pytest.mark.parametrize("exc", [KeyError("task_id"), ValueError("bad state"), AttributeError("no field"),
                                 OSError("a socket went away")])
def test_internal_error_exits_70_without_traceback(monkeypatch, exc):
    monkeypatch.setattr(catalog_cmd, "_core", _Raising(exc))
    code, _, err = run_cli(["workloads"])
    assert code == 70
    assert err.count("\n") == 1, err
    assert err.startswith(f"internal error: {type(exc).__name__}: ") and err.rstrip().endswith(BUG_LINE), err
    assert "Traceback" not in err


@pytest.mark.parametrize("how", ["flag", "env"])
def test_internal_error_traceback_behind_debug(monkeypatch, how):
    monkeypatch.setattr(catalog_cmd, "_core", _Raising(KeyError("task_id")))
    if how == "env":
        monkeypatch.setenv("SCHEDLAB_DEBUG", "1")
    code, _, err = run_cli(["--debug", "workloads"] if how == "flag" else ["workloads"])
    assert code == 70
    assert "Traceback (most recent call last)" in err and "def workloads" not in err
    assert "in workloads" in err  # the frame that raised is shown
    assert err.rstrip().splitlines()[-1].startswith("internal error: KeyError: 'task_id'")


def test_internal_error_outside_the_guard_is_70(monkeypatch):
    """An exception raised after a command's errors() block (printing) reaches main()."""
    def broken(*a, **k):
        raise TypeError("unsupported format")

    monkeypatch.setattr(run_cmd, "_print_run", broken)
    code, _, err = run_cli(["run", "examples/pipe_pingpong.toml", "-s", "1", "--max-events", "2000"])
    assert code == 70
    assert err.strip().splitlines()[-1].startswith("internal error: TypeError: unsupported format")
    assert "Traceback" not in err


def test_missing_file_is_input_not_bug():
    code, _, err = run_cli(["report", "no/such/sweep"])
    assert code == 2 and err.startswith("error: ") and "internal error" not in err


def test_backend_is_a_deprecated_alias_of_executor():
    args = ["run", "examples/pipe_pingpong.toml", "-s", "1", "-s", "2", "--max-events", "2000", "--json"]
    code_new, out_new, err_new = run_cli(args + ["--executor", "serial"])
    code_old, out_old, err_old = run_cli(args + ["--backend", "serial"])
    assert code_new == code_old == 3  # both stopped at --max-events
    assert out_new == out_old
    assert "deprecated" not in err_new
    assert "warning: --backend is deprecated, use --executor" in err_old


def test_host_that_cannot_run_it_is_input_not_bug(monkeypatch):
    """validate-host on a machine without the tool or the rights: the user's to fix (2)."""
    import schedlab.validate_host as vh
    from schedlab.validate_host.probe import ProbeError

    def no_tool(**kw):
        raise ProbeError("rt-app is not installed (Debian: apt-get install rt-app)")

    monkeypatch.setattr(vh, "validate_host", no_tool)
    code, _, err = run_cli(["validate-host", "--sim-only"])
    assert code == 2
    assert err == "error: rt-app is not installed (Debian: apt-get install rt-app)\n"
