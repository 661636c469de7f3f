"""`schedlab netperf -t UDP_RR`: netperf's request/response test over loopback
(HewlettPackard/netperf src/nettest_omni.c), printed in netperf's own table, with the
lock_stat lines of the run in its JSON."""

from __future__ import annotations

import json
import re

SMALL = ("--machine", "topo(1,1,4,1)")


def _np(cli, *flags: str) -> dict:
    r = cli("netperf", "-t", "UDP_RR", "-l", "0.05", *SMALL, *flags, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_netperf_prints_its_table_one_block_per_instance(cli):
    r = cli("netperf", "-t", "UDP_RR", "-6", "-n", "2", "-l", "0.05", *SMALL)
    assert r.exit_code == 0, r.output
    assert r.stdout.count("MIGRATED UDP REQUEST/RESPONSE TEST") == 2
    assert "AF_INET6" in r.stdout
    rows = re.findall(r"^212992 212992 1\s+1\s+0\.05\s+([0-9.]+)", r.stdout, re.M)
    assert len(rows) == 2 and all(float(x) > 0 for x in rows), r.stdout


def test_a_transaction_is_a_round_trip_of_two_wakeups(cli):
    doc = _np(cli)
    w = doc["workload"]
    # One request and one response each way: every transaction wakes both sides.
    done = w["trans_per_s"] * w["elapsed_s"]
    assert abs(doc["summary"]["wakeups"] - 2 * done) <= 4, (doc["summary"]["wakeups"], done)
    # Larger payloads copy more: fewer transactions per second.
    big = _np(cli, "-r", "65000,65000")["workload"]["trans_per_s"]
    assert big < w["trans_per_s"]


def test_more_instances_than_cpus_share_them(cli):
    one = _np(cli)["workload"]["trans_per_s_per_instance"]
    many = _np(cli, "-n", "16")
    assert many["workload"]["trans_per_s_per_instance"] < one
    assert any(lock["class"] == "&rq->__lock" and lock["acquisitions"] > 0 for lock in many["lock_stat"])


def test_bad_flags_are_one_line_errors(cli):
    for flags in (["-t", "TCP_STREAM"], ["-n", "0"], ["-r", "x"], ["-l", "0"]):
        r = cli("netperf", *flags, *SMALL)
        assert r.exit_code == 2, (flags, r.output)
        assert "Traceback" not in r.output
