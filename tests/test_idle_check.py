"""`schedlab reproduce --idle-check`: effects that come from the idle states are flagged."""

from schedlab.reproduce.compare import Row
from schedlab.reproduce.runner import halt_state, idle_check


def row(config: str, mean: float, std: float = 0.0, n: int = 3) -> Row:
    return Row("exp", "m", config, "ops_per_s", "", None, mean, std, n, False, None, None)


def test_effects_that_flip_or_shrink_with_idle_capped_are_flagged():
    rows = [row("b vs a", 1.5), row("c vs a", 1.5), row("d vs a", 1.5), row("e vs a", 1.015), row("a", 100.0),
            row("f vs a", 1.06, 0.06, 2), row("g vs a", 1.06, 0.001, 2)]
    capped = [row("b vs a", 0.8), row("c vs a", 1.1), row("d vs a", 1.4), row("e vs a", 0.985), row("a", 50.0),
              row("f vs a", 1.02, 0.06, 2), row("g vs a", 1.02, 0.001, 2)]
    got = {r.config: (r.idle_dependent, r.idle_capped_mean) for r in idle_check(rows, capped)}
    assert got["b vs a"] == ("sign", 0.8)  # the effect changes sign
    assert got["c vs a"][0] == "x2"  # ln 1.5 / ln 1.1 > 2
    assert got["d vs a"][0] == "no"
    assert got["e vs a"][0] == "no"  # under 2 % either way (the verdict's "no effect")
    # +6 % against +2 %: x3, but within two standard errors of two noisy seeds; flagged
    # only when the seeds agree.
    assert got["f vs a"][0] == "no" and got["g vs a"][0] == "x2"
    assert got["a"] == (None, 50.0)  # levels are not judged


def test_the_cap_is_the_halt_state():
    assert halt_state({"preset": "epyc-9654-2s"}) == 1  # POLL, then C1
    assert halt_state({"preset": "pixel6"}) == 0  # WFI first
    # Synthetic machines too (swap-sweep's families, not presets): each arch has its own
    # table, WFI first on arm64, POLL then C1 on x86.
    topo = {"sockets": 1, "llcs": 1, "cores": 2, "smt": 1}
    assert halt_state({"topo": {**topo, "arch": "arm64"}}) == 0
    assert halt_state({"topo": {**topo, "arch": "x86_64"}}) == 1
