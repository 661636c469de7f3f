"""``schedlab netperf``: netperf's request/response test over loopback, run on a
simulated machine and printed as netperf prints it. Registered on the app of
:mod:`schedlab.cli.base` by :mod:`schedlab.cli.entry`; beside :mod:`schedlab.cli.tools_cmd`
(hackbench, schbench), whose options it shares.

Mirrors: HewlettPackard/netperf ``src/nettest_omni.c`` (send_omni_inner() / recv_omni(),
the "MIGRATED ... TEST" banner of print_omni_init() and the classic request/response
table ``netperf -t UDP_RR`` prints by default)."""

from __future__ import annotations

import sys

import typer

from .base import app, errors, fail
from .flags import check_machine
from .tools_cmd import FEATURE, JSON, PROFILE, SEED, TUNABLE, _nothing_done, _run

__all__ = ["netperf", "netperf_text"]

# declared: Linux's net.core.wmem_default / rmem_default, what a UDP socket gets when
# netperf sets no -s/-S: netperf prints them as the socket sizes.
SOCKET_BYTES = 212992


def netperf_text(raw: dict, params: dict, length: float, ipv6: bool) -> str:
    """netperf's UDP_RR report, one block per instance (each netperf prints its own), as
    ``for i in $(seq N); do netperf -t UDP_RR & done`` shows them, then their sum."""
    w = raw.get("workload", {})
    fam = "AF_INET6" if ipv6 else "AF_INET"
    local = "::" if ipv6 else "0.0.0.0"
    peer = "::1" if ipv6 else "localhost"
    req, rsp = params["request_size"], params["response_size"]
    elapsed = w.get("elapsed_s", length)
    out = []
    for i in range(params["instances"]):
        rate = w.get(f"instance{i}_trans_per_s", 0.0)
        out.append(
            f"MIGRATED UDP REQUEST/RESPONSE TEST from {local} ({local}) port 0 {fam} to {peer} () port 0 {fam} : first burst 0\n"
            "Local /Remote\n"
            "Socket Size   Request  Resp.   Elapsed  Trans.\n"
            "Send   Recv   Size     Size    Time     Rate         \n"
            "bytes  Bytes  bytes    bytes   secs.    per sec   \n\n"
            f"{SOCKET_BYTES:<6d} {SOCKET_BYTES:<6d} {req:<8d} {rsp:<7d} {elapsed:<8.2f} {rate:<10.2f}   \n"
            f"{SOCKET_BYTES:<6d} {SOCKET_BYTES:<6d}\n\n")
    n = params["instances"]
    out.append(f"# {n} instance{'s' if n != 1 else ''}: {w.get('trans_per_s', 0.0):.2f} trans/s in all, "
               f"{w.get('trans_per_s_per_instance', 0.0):.2f} per instance, CPU {w.get('cpu_util_pct', 0.0):.1f} %\n")
    return "".join(out)


@app.command()
def netperf(
    test: str = typer.Option("UDP_RR", "-t", "--test", help="The test; UDP_RR is the one modeled."),
    length: float = typer.Option(10.0, "-l", "--length", help="Test length, seconds (simulated)."),
    rr_sizes: str = typer.Option("1,1", "-r", "--rr-size", help="Request,response sizes in bytes (test-specific -r)."),
    instances: int = typer.Option(1, "-n", "--instances", help="Concurrent netperf instances, each with its netserver."),
    ipv6: bool = typer.Option(False, "-6", "--ipv6", help="AF_INET6 (the banner; the path costs are the same)."),
    machine: str = typer.Option("ryzen-7950x", "--machine", callback=check_machine, help="Preset or topo(S,L,C,T)."),
    profile: str = PROFILE,
    feature: list[str] | None = FEATURE,
    tunable: list[str] | None = TUNABLE,
    seed: int = SEED,
    json_out: bool = JSON,
) -> None:
    """netperf -t UDP_RR over loopback on a simulated machine; prints netperf's report per instance."""
    if test != "UDP_RR":
        fail(f"-t {test}: only UDP_RR is modeled")
    if not (length > 0):
        fail(f"-l {length}: expected a positive number of seconds")
    if instances < 1:
        fail(f"-n {instances}: expected at least 1 instance")
    parts = rr_sizes.split(",")
    try:
        req = int(parts[0])
        rsp = int(parts[1]) if len(parts) > 1 and parts[1] != "" else req
    except ValueError:
        fail(f"-r {rr_sizes}: expected REQ[,RSP] in bytes")
    if req < 1 or rsp < 1:
        fail(f"-r {rr_sizes}: sizes must be at least 1 byte")
    params = {"test": test, "instances": instances, "request_size": req, "response_size": rsp}
    with errors():
        raw = _run("netperf", params, {"duration_s": length}, machine, profile, feature, tunable, seed, json_out)
    if raw is not None:
        sys.stdout.write(netperf_text(raw, params, length, ipv6))
        if not raw.get("workload", {}).get("trans_per_s"):
            _nothing_done(f"no transaction completed in {length:g} s", "the rates are 0")
