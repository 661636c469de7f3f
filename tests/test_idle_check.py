"""`schedlab reproduce --idle-check`: effects that come from the idle states are flagged."""

from schedlab.reproduce.compare import Row
from schedlab.reproduce.runner import halt_state, idle_check


def row(config: str, mean: float) -> Row:
    return Row("exp", "m", config, "ops_per_s", "", None, mean, 0.0, 3, False, None, None)


def test_effects_that_flip_or_shrink_with_idle_capped_are_flagged():
    rows = [row("b vs a", 1.5), row("c vs a", 1.5), row("d vs a", 1.5), row("e vs a", 1.004), row("a", 100.0)]
    capped = [row("b vs a", 0.8), row("c vs a", 1.1), row("d vs a", 1.4), row("e vs a", 0.996), row("a", 50.0)]
    got = {r.config: (r.idle_dependent, r.idle_capped_mean) for r in idle_check(rows, capped)}
    assert got["b vs a"] == ("sign", 0.8)  # the effect changes sign
    assert got["c vs a"][0] == "x2"  # ln 1.5 / ln 1.1 > 2
    assert got["d vs a"][0] == "no"
    assert got["e vs a"][0] == "no"  # under 1 % either way
    assert got["a"] == (None, 50.0)  # levels are not judged


def test_the_cap_is_the_halt_state():
    assert halt_state({"preset": "epyc-9654-2s"}) == 1  # POLL, then C1
    assert halt_state({"preset": "pixel6"}) == 0  # WFI first
    # Synthetic machines too (swap-sweep's families, not presets): a topo() machine keeps
    # the x86 table (POLL, C1, C2) whatever its arch, so C1 on both.
    topo = {"sockets": 1, "llcs": 1, "cores": 2, "smt": 1}
    assert halt_state({"topo": {**topo, "arch": "arm64"}}) == 1
    assert halt_state({"topo": {**topo, "arch": "x86_64"}}) == 1
