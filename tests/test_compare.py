"""schedlab compare: the paired t-interval (checked against tabulated quantiles) and the
command on two example scenarios, or one scenario with --set twice."""

from __future__ import annotations

import json
import math

import pytest

from schedlab.variants import diff_figures, paired_t_interval, t_cdf, t_quantile


@pytest.mark.parametrize("df,q975", [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (30, 2.0423), (1000, 1.9623)])
def test_t_quantile_matches_tables(df, q975):
    assert t_quantile(0.975, df) == pytest.approx(q975, abs=1e-4)
    assert t_quantile(0.025, df) == pytest.approx(-q975, abs=1e-4)
    assert t_cdf(q975, df) == pytest.approx(0.975, abs=1e-5)


def test_paired_interval_by_hand():
    # diffs 1, 2, 3: mean 2, sd 1, half-width t(0.975, 2) / sqrt(3).
    m, lo, hi = paired_t_interval([1.0, 2.0, 3.0])
    half = 4.302652729749752 / math.sqrt(3)
    assert (m, lo, hi) == pytest.approx((2.0, 2.0 - half, 2.0 + half))
    assert paired_t_interval([5.0]) == (5.0, None, None)


def test_pairing_uses_the_same_seed():
    # B = A + 1 exactly in each seed, while A itself varies a lot: paired -> a zero-width interval.
    a = [{"x": v} for v in (10.0, 50.0, 90.0)]
    b = [{"x": v + 1} for v in (10.0, 50.0, 90.0)]
    [d] = diff_figures(a, b)
    assert (d.diff, d.low, d.high, d.significant) == (1.0, 1.0, 1.0, True)
    assert d.relative == pytest.approx(1 / 50)


def test_compare_two_example_files(cli):
    r = cli("compare", "examples/bandwidth_whatif.toml", "examples/bandwidth_whatif_burst.toml",
            "--seeds", "3", "--set", "run.warmup_s=0", "--set", "run.duration_s=3", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["seeds"] == [1, 2, 3] and doc["method"].startswith("paired Student t")
    m = {d["metric"]: d for d in doc["metrics"]}
    share = m["group.svc.throttled_share"]
    # Burst (5.14) against expiring slices (5.3): far fewer throttled periods, same usage.
    assert share["diff"] < -0.3 and share["significant"] and share["ci_high"] < 0
    assert abs(m["group.svc.usage_of_quota"]["relative"]) < 0.02


def test_compare_one_file_set_twice(cli):
    r = cli("compare", "examples/throttled_group.toml", "--set", "kernel.features.BW_SLICE_EXPIRY=false",
            "--set", "kernel.features.BW_SLICE_EXPIRY=true", "-n", "2")
    assert r.exit_code == 0, r.output
    assert "A = kernel.features.BW_SLICE_EXPIRY = false" in r.stdout
    assert "B = kernel.features.BW_SLICE_EXPIRY = true" in r.stdout
    assert "95 % paired t-interval" in r.stdout


@pytest.mark.parametrize("args,words", [
    (["examples/throttled_group.toml"], "the two variants are the same scenario"),
    (["examples/throttled_group.toml", "--set", "run.duration_s=1", "--set", "run.duration_s=2",
      "--set", "run.duration_s=3"], "given 3 times"),
    (["examples/throttled_group.toml", "--set", "groups.nope.cpu_max=1"], "no element named 'nope'"),
    (["examples/throttled_group.toml", "--set", "novalue"], "expected KEY=VALUE"),
])
def test_compare_errors(cli, args, words):
    r = cli("compare", *args)
    assert r.exit_code == 2 and words in r.stderr and r.stderr.count("\n") == 1, r.stderr
