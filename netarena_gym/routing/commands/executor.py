"""Runs one agent command line on a simulated node: parse and allow-list (cached, shared
with the real backend through :func:`precheck`), text filters in-process
(:func:`netarena_gym.shell.policy.run_pipeline`), every other simple command to its
handler, then redirects.

:func:`classify` is the one classification of a tool's result (``ok``/``error``/
``invalid``) that every backend applies to what the tool printed and its exit status, so
that the reward never depends on the backend. It follows the tools' own conventions
(pinned on iproute2 6.1.0, iptables 1.8.9 (nf_tables), net-tools 2.10, procps-ng 4.0.2
sysctl, iputils 20221126 ping):

* exit 0 is ``ok``, unless the tool printed its usage text and did nothing (``tc qdisc
  help``, ``sysctl`` without arguments exit 0);
* ping's 1 (no reply) is ``ok`` too: the tool answered the question it was asked (unless
  ping itself complained, ``ping: sendmsg: Operation not permitted``);
* 127 (bash: command not found) is ``invalid``;
* otherwise ``invalid`` when the output is the tool's complaint about the command line
  itself (:data:`USAGE_MARKERS`: usage text, unknown objects and options, malformed or
  duplicate arguments, bad option values), else ``error``: the tool understood the
  command and the system said no (``RTNETLINK answers: File exists``, the kernel's
  ``Error: Invalid prefsrc address.``, ``Cannot find device``, ``Bad rule``).

Messages of the simulator itself (``netarena: ...``) keep the kind their handler gave.

Which text a tool wrote to stderr (:attr:`~netarena_gym.shell.parser.CommandResult.err`,
what ``2>/dev/null`` drops and a pipe does not carry): ``ping``, ``traceroute``,
``sysctl``, ``cat`` and ``route``'s usage mark it themselves (their output mixes both
streams); every other tool here prints nothing on stdout when it fails
(:data:`STDERR_WHEN_FAILED`; ``tc``'s usage too, :data:`USAGE_ON_STDERR`), so :func:`classified` puts such a result on stderr whole.
The kind is read from the whole text, whatever the command line's redirections.
Pinned against the same tools on Mininet (``tests/routing/test_mininet_streams.py``).
"""
from __future__ import annotations

import logging

from netarena_gym.shell.parser import ERROR, INVALID, OK, REFUSED, TIMEOUT, CommandResult
from netarena_gym.shell.policy import ParseCache, parse, refused, run_pipeline
from netarena_gym.routing.commands.allowlist import (
    check_command_line, machine_refusal, redirect_target)
from netarena_gym.routing.commands import CommandContext, get_handler
from netarena_gym.routing.state import Network

log = logging.getLogger(__name__)

__all__ = ["STDERR_WHEN_FAILED", "USAGE_MARKERS", "classified", "classify", "not_found",
           "precheck", "refused", "run"]


def _parse_and_check(command: str):
    """Parse and allow-list one command line (pure, so memoised by its text)."""
    cl, early = parse(command)
    if early is not None:
        return None, early
    why = check_command_line(cl)
    if why:
        return None, refused(why)
    return cl, None


_CHECKED = ParseCache(_parse_and_check)


# The tools' wording for a malformed command line (never for a refusal by the kernel).
USAGE_MARKERS = (
    "Usage:", "usage:", "Try `", 'Try "', "try \"ip help\"", "is unknown",
    "is a garbage", "is duplicate", "is wrong:", "Command line is not complete",
    "is expected rather than", "invalid option", "unknown option", "unrecognized option",
    "requires an argument", "Bad option", "Bad argument", "bad argument", "Unknown host",
    "need host name", "invalid regex", "Unknown command", "unknown command",
    "Argument list too long", "option requires", "Illegal", "illegal",
    "requires arguments", "Not enough information", "Host name lookup failure")
# tools whose failures and usage complaints are all on stderr, and nothing on stdout
STDERR_WHEN_FAILED = frozenset({"ip", "ifconfig", "route", "arp", "iptables", "iptables-save",
                                "tc", "echo"})
# ... and those whose usage text is on stderr even when they exit 0 (``tc qdisc help``;
# ``iptables -h`` prints its help on stdout)
USAGE_ON_STDERR = frozenset({"tc"})
# exit statuses that report an answer, not a failure: ping's 1 is "no reply"
ANSWER_STATUSES = {"ping": frozenset({1})}


def _printed_usage(output: str) -> bool:
    """A tool that exits 0 after complaining about its command line (``tc qdisc help``,
    net-tools ``route -z``)."""
    return any(ln.lstrip().startswith(("Usage:", "usage:")) or ": invalid option -- " in ln
               or ": unrecognized option" in ln for ln in output.splitlines()[:3])


def classify(prog: str, status: int, output: str) -> str:
    """The kind of ``prog``'s result from its exit status and output (see the module doc)."""
    answered = status in ANSWER_STATUSES.get(prog, ()) and not any(
        ln.startswith(f"{prog}: ") for ln in output.splitlines())  # "ping: sendmsg: ..." failed
    if status == 0 or answered:
        return INVALID if _printed_usage(output) else OK
    if status == 127:
        return INVALID
    return INVALID if any(m in output for m in USAGE_MARKERS) else ERROR


def classified(prog: str, res: CommandResult) -> CommandResult:
    """``res`` with the kind :func:`classify` gives (the simulator's own messages, refusals
    and timeouts unchanged), on stderr whole where ``prog`` failed or complained and is
    one of :data:`STDERR_WHEN_FAILED`."""
    if res.kind in (REFUSED, TIMEOUT) or res.output.startswith("netarena:"):
        return res
    kind = classify(prog, res.status, res.output)
    if (prog in STDERR_WHEN_FAILED and not res.err
            and (res.status != 0 or kind == INVALID and prog in USAGE_ON_STDERR)):
        return CommandResult.stderr(res.output, res.status, kind)
    return res if kind == res.kind else CommandResult(res.output, res.status, kind, res.err)


def not_found(prog: str) -> CommandResult:
    """What bash prints for a program that is not installed (every backend)."""
    return CommandResult.stderr(f"bash: {prog}: command not found\n", 127, INVALID)


def precheck(machines, switches, machine: str, command: str):
    """Shared by every backend: returns (parsed command line, None) or (None, result)."""
    bad = machine_refusal(machine, machines, switches)
    if bad is not None:
        msg, is_refusal = bad
        return None, (refused(msg) if is_refusal
                      else CommandResult(f"netarena: {msg}\n", 2, INVALID))
    return _CHECKED(command)


def run(net: Network, switches, machine: str, command: str, timeout_s: float,
        missing: frozenset[str] = frozenset()) -> CommandResult:
    """``missing``: programs absent from the image (a compat profile), answered as bash
    answers a program that is not installed."""
    cl, early = precheck(net.nodes, switches, machine, command)
    if early is not None:
        return early
    ctx = CommandContext(net, net.nodes[machine], timeout_s)

    def one(cmd, stdin: str) -> CommandResult:
        handler = None if cmd.argv[0] in missing else get_handler(cmd.argv[0])
        if handler is None:
            return not_found(cmd.argv[0])
        try:
            return classified(cmd.argv[0], handler(ctx, list(cmd.argv), stdin))
        except Exception:  # a simulator bug must never crash an episode
            log.exception("simulator error running %r on %s", cmd.argv, machine)
            return CommandResult(f"netarena: simulator error running {cmd.argv[0]}\n", 1, ERROR)

    def write(cmd, text: str) -> CommandResult:
        from netarena_gym.routing.commands.files import write_redirect
        return write_redirect(ctx, redirect_target(cmd.redirect[1]), text,
                              cmd.redirect[0] == ">>", prog=cmd.argv[0])

    return run_pipeline(cl, one, write)
