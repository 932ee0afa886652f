"""The real backend of the routing task: the topology in Mininet (routers are Linux hosts
with forwarding, subnets are Linux bridges, no controller), faults injected with the real
commands, agent commands run in the node's network namespace.

Needs root, Debian's ``mininet`` (for ``mnexec``), ``bridge-utils``, ``iputils-ping``,
``iproute2`` and ``iptables``, and the ``mininet`` Python package (``pip install
'netarena-gym[mininet]'``).

Agent commands never reach a shell on the host: the line is parsed and allow-listed
(:func:`~netarena_gym.routing.commands.executor.precheck`, the same check as the simulator's),
each simple command's argv is exec'd in the node's network namespace inside a private
read-only mount namespace (:mod:`.nodeexec`: only a private ``/tmp``/``/run`` and that
namespace's ``/proc/sys/net`` are writable), pipes into the text filters run in-process on
the captured output, ``echo`` is the simulator's (bash's builtin), and a redirect is written
by the backend to the resolved ``/proc/sys/net/...`` path in the same sandbox. The baseline
and fault scripts are the env's own (never the agent's) and still run through ``bash``.

Lifecycle (:mod:`.mininet_lifecycle`): what a run creates in the root namespace (bridges
and their ports, named ``nxXXXX...``) and every node process are recorded before they exist;
``close()``, exceptions, SIGINT/SIGTERM and garbage collection tear the network down, and a
new run removes what a crashed run left, each thing only while it is provably the run's.
Mininet's global clean-up is never called.

The network stays up across episodes with the same topology: ``reset`` restores every
node's baseline configuration instead of rebuilding. The baseline resets what an agent may
change (addresses, routes of every IPv4 table, rules, neighbours, links' state, qdiscs,
sysctls, every iptables table the node has); what the allow-list keeps fixed (the links
themselves) is checked instead: each node's links (names and indexes) are compared with
those it had when built, and the network is rebuilt when they differ.

Each command line has a wall-clock budget (``step_timeout``): a command runs at most
``command_timeout`` or what is left of the budget, whichever is less; past it the command is
killed, the result is a ``timeout`` and the rest of the line is not run.
"""
from __future__ import annotations

import contextlib
import logging
import os
import shlex
import shutil
import subprocess
import weakref
from typing import Mapping
from pathlib import Path

import numpy as np

from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.core.scenario import Scenario
from netarena_gym.errors import BackendUnavailable
from netarena_gym.shell.parser import ERROR, CommandResult
from netarena_gym.shell.policy import LineBudget, line_budget_seconds, run_pipeline
from netarena_gym.routing.backends import nodeexec
from netarena_gym.routing.backends.mininet_lifecycle import (  # noqa: F401 (re-exported)
    STATE_DIR, RunRecord, ended_on_exit, new_run_id, node_classes, process_identity,
    reap_leftovers, remove_run, signals_held, teardown, teardown_handler, track)
from netarena_gym.routing.backends.nsprobe import link_indexes, ping_matrix
from netarena_gym.routing.commands.allowlist import ALLOWED, redirect_target
from netarena_gym.routing.commands.executor import classify, not_found, precheck
from netarena_gym.routing.commands.files import echo_cmd
from netarena_gym.routing.commands.sysctl_conf import reset_command
from netarena_gym.routing.faults import Fault
from netarena_gym.routing.topology import Layout, TopologySpec, labels_for

# networks of more nodes than this are probed twice for the pairs that did not answer: one
# source then sends more echo requests than the kernel queues for a neighbour it has not
# resolved yet (see NamespaceProber.matrix)
RETRY_ABOVE = 128
# every iptables table and its built-in chains: the baseline empties those a node has
IPTABLES_TABLES = {"raw": "PREROUTING OUTPUT", "mangle": "PREROUTING INPUT FORWARD OUTPUT "
                   "POSTROUTING", "nat": "PREROUTING INPUT OUTPUT POSTROUTING",
                   "security": "INPUT FORWARD OUTPUT"}
log = logging.getLogger(__name__)


def requirements_missing() -> list[str]:
    """What this machine lacks for the Mininet backend (empty when it can run)."""
    missing = []
    if os.geteuid() != 0:
        missing.append("root")
    for prog in ("mnexec", "ping", "brctl", "ip", "iptables", "tc"):
        if shutil.which(prog) is None:
            missing.append(prog)
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        missing.append("python package mininet")
    return missing


def detect_capabilities() -> frozenset[str]:
    """Probe the kernel in a throwaway network namespace (``unshare -n``)."""
    caps = set()
    r = subprocess.run(["unshare", "-n", "tc", "qdisc", "add", "dev", "lo", "root", "netem",
                        "delay", "1ms"], capture_output=True, text=True, timeout=10)
    if r.returncode == 0:
        caps.add("netem")
    return frozenset(caps)


def _batch(prog: str, lines: list[str], quiet: bool = False) -> str:
    """``lines`` through one ``prog -force -batch -`` process (a here-document)."""
    return (f"{prog} -force -batch - {'2>/dev/null ' if quiet else ''}<<'NXEOF'\n"
            + "".join(f"{ln}\n" for ln in lines) + "NXEOF")


# IPv6 off on every veth (lo keeps ::1): no link-local address or fe80::/64 route that would
# come and go with link flaps; the simulator's ``ip -6`` (commands/ip_inet6.py) shows this.
# An MTU below 1280 drops a device's IPv6 state and restoring it recreates that state from
# ``default``: so ``default`` is off too, and each device is set after its MTU.


def iptables_reset() -> str:
    """Shell commands that empty every iptables table a node has, in one
    ``iptables-restore``: ``filter`` always (policies ACCEPT, no rules, no user chains),
    ``raw``, ``mangle``, ``nat`` and ``security`` when ``iptables-save`` lists them (a
    table that does not exist is not created: with nf_tables a ``nat`` table would turn
    connection tracking on)."""
    cases = " ".join(f"{t}) c='{chains}';;" for t, chains in IPTABLES_TABLES.items())
    return ("{ printf '*filter\\n:INPUT ACCEPT [0:0]\\n:FORWARD ACCEPT [0:0]\\n"
            ":OUTPUT ACCEPT [0:0]\\nCOMMIT\\n'; "
            "for t in $(iptables-save 2>/dev/null | sed -n 's/^\\*//p'); do "
            f"case $t in {cases} *) continue;; esac; "
            "echo \"*$t\"; for x in $c; do echo \":$x ACCEPT [0:0]\"; done; echo COMMIT; "
            "done; } | iptables-restore")


def baseline_script(lay: Layout, node: str, labels: bool = True) -> str:
    """Shell commands that bring ``node`` to its healthy configuration from any state
    (``labels``: set the interface aliases, else clear them). A handful of processes per
    node, however many interfaces and routes it has: the ``ip`` and ``tc`` commands run
    as one batch each (a spine of a 64-router leaf-spine has 60 interfaces and 300
    routes), every iptables table by one ``iptables-restore`` (:func:`iptables_reset`),
    the sysctls by one ``sysctl``."""
    router = node.startswith("r")
    if router:
        addrs = {}
        for s in lay.subnets:
            if s.router == node:
                addrs[s.iface] = f"{int_to_ip(s.gateway)}/24"
        for ln in lay.links:
            if ln.a == node:
                addrs[ln.a_iface] = f"{int_to_ip(ln.a_ip)}/30"
            if ln.b == node:
                addrs[ln.b_iface] = f"{int_to_ip(ln.b_ip)}/30"
        ifaces = list(lay.router_ifaces[node])
    else:
        s = lay.subnet_of_host[node]
        ifaces = [f"{node}-eth0"]
        addrs = {ifaces[0]: f"{int_to_ip(s.net + 100 + s.hosts.index(node))}/24"}
    # a change of ip_forward resets every device's forwarding (inet_forward_change); the
    # toggle comes before the per-device keys
    toggle = "0 net.ipv4.ip_forward=1" if router else "1 net.ipv4.ip_forward=0"
    sysctl = reset_command([*ifaces, "lo"]).replace(
        "sysctl -q -w ", f"sysctl -q -w net.ipv4.ip_forward={toggle} "
        "net.ipv4.icmp_echo_ignore_all=0 net.ipv6.conf.default.disable_ipv6=1 ", 1)
    links = ["rule flush", "rule add pref 32766 lookup main",
             "rule add pref 32767 lookup default", "route flush table main",
             "route flush table default", "neigh flush all nud all"]  # permanent entries too
    ip = []
    for itf in ifaces:
        # the flags and queue length too (a veth's defaults): the allow-list refuses setting
        # them, and this undoes a spelling it might miss
        links += [f"addr flush dev {itf}", f"link set dev {itf} up mtu 1500 promisc off arp on "
                  "multicast on allmulticast off txqueuelen 1000"]
        if router:
            ip.append(f"link set dev {itf} alias "
                      + shlex.quote(lay.iface_alias(node, itf) if labels else ""))
        ip.append(f"addr add {addrs[itf]} brd + dev {itf}")
    # lo too: an agent may have added addresses to it or changed its MTU or ARP flag
    links.append("link set dev lo up mtu 65536 arp on")
    # each device's IPv6 off after its MTU is set (see above); lo keeps ::1
    ipv6 = ("sysctl -q -w " + " ".join(f"net.ipv6.conf.{itf}.disable_ipv6=1" for itf in ifaces)
            + " net.ipv6.conf.lo.disable_ipv6=0")
    if router:
        ip += [f"route add {int_to_ip(net)}/{plen} via {int_to_ip(gw)} dev {dev}"
               for net, plen, dev, gw in lay.intended_routes(node) if gw is not None]
    else:
        ip.append(f"route add default via {int_to_ip(s.gateway)} dev {ifaces[0]}")
    ip.append("addr add 127.0.0.1/8 dev lo")
    return "\n".join([
        iptables_reset(),
        # `ip rule flush` keeps every pref-0 rule: delete all but `lookup local` by spec
        "ip rule show | sed -n 's/^0:\t//p' | grep -vx 'from all lookup local' | "
        "while read -r spec; do ip rule del pref 0 $spec; done",
        sysctl,
        _batch("tc", [f"qdisc del dev {itf} {q}" for itf in [*ifaces, "lo"]
                      for q in ("root", "ingress", "clsact")], quiet=True),
        "ip -4 addr flush dev lo",
        # routes of every IPv4 table (table 100 too); the local ones come back with the
        # addresses (-4: the local table's ::1 stays)
        "ip -4 route flush table all",
        _batch("ip", links), ipv6, _batch("ip", ip),
        # an MTU under 1280 took ::1 away; a down/up of lo brings it back
        "ip -6 addr show dev lo | grep -q '::1/128' || "
        "{ ip link set dev lo down; ip link set dev lo up; }"])


class MininetBackend:
    """Routing backend on Mininet. Same protocol as :class:`~netarena_gym.routing.backends.sim.SimBackend`."""

    name = "mininet"
    capabilities: frozenset[str] = frozenset()  # probed per instance in __init__

    def __init__(self, *, probe_timeout: float = 0.2, command_timeout: float = 10.0,
                 step_timeout: float | None = None,
                 state_dir: Path | None = None, probe: str = "socket",
                 interface_labels: bool | None = None,
                 missing_programs: frozenset[str] = frozenset()):
        """``probe="socket"`` sends the echo requests from raw sockets opened in each node's
        namespace (one process, fast); ``probe="ping"`` runs ``ping -c1 -W<t>`` per pair.
        ``interface_labels``: router interface aliases (None: off in compat, on otherwise).
        ``missing_programs``: tools treated as not installed (a compat profile), for the
        faults and the agent alike. ``step_timeout``: the wall-clock budget of one command
        line (None: :data:`~netarena_gym.shell.policy.STEP_TIMEOUT` or ``command_timeout``, whichever is longer)."""
        self.missing_programs = frozenset(missing_programs)
        if probe not in ("socket", "ping"):
            raise ValueError("probe must be 'socket' or 'ping'")
        step_timeout = line_budget_seconds(step_timeout, command_timeout)
        self.probe = probe
        self._prober = None
        missing = requirements_missing()
        if missing:
            raise BackendUnavailable("the mininet backend needs: " + ", ".join(missing))
        self.probe_timeout = probe_timeout
        self.command_timeout = command_timeout
        self.step_timeout = step_timeout
        self.interface_labels = interface_labels
        self._labels = True
        self.capabilities = detect_capabilities()
        self.state_dir = Path(state_dir or STATE_DIR)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        reap_leftovers(self.state_dir)
        self.run_id = new_run_id(self.state_dir)
        self.net = None
        self.spec: TopologySpec | None = None
        self.layout: Layout | None = None
        self.scenario: Scenario | None = None
        self.names: list[str] = []
        self._pids: dict[str, int] = {}
        self._shells: dict = {}
        self._switches: frozenset[str] = frozenset()
        self._gen = 0  # counts teardowns: a build that sees it change stops
        self._rec: RunRecord | None = None  # the write-ahead record of the current build
        self._nodes: list = []  # (Mininet node, its shell's Popen) as forked
        self._stale: list[RunRecord] = []  # records of ours not fully removed yet
        self._links: dict[str, dict[str, int]] = {}  # each node's links as built
        self.builds = 0
        # runs on garbage collection and at interpreter exit
        self._finalizer = weakref.finalize(self, teardown, self.__dict__)
        # SIGINT/SIGTERM tear it down (one module-level handler for every backend)
        track(self)

    # ------------------------------------------------------------- lifecycle
    def _bridge(self, switch: str) -> str:
        return f"{self.run_id}{switch}"

    def close(self) -> None:
        teardown(self.__dict__)

    # --------------------------------------------------------------- building
    @contextlib.contextmanager
    def _step(self, gen: int):
        """One creation step of a build: signals held (a handler's teardown runs between
        steps, never inside one) and the build stopped if the network was torn down."""
        with signals_held():
            if self._gen != gen:
                raise BackendUnavailable("the mininet network was torn down while building")
            yield

    def _started(self, node, popen) -> None:
        """A node's shell was just forked: record it before anything else runs."""
        self._nodes.append((node, popen))
        self._rec.add_process(popen.pid)

    def _build(self, spec: TopologySpec) -> None:
        from mininet.net import Mininet

        recorded_node, owned_bridge = node_classes()
        self.close()
        if self._stale:  # names of ours may still exist: the new network gets new ones
            self.run_id = new_run_id(self.state_dir)
        lay, gen = Layout(spec), self._gen
        bridges = [self._bridge(s.switch) for s in lay.subnets]
        ports = [f"{br}-eth{j}" for br, s in zip(bridges, lay.subnets)
                 for j in range(1, len(s.hosts) + 2)]
        with self._step(gen):  # write-ahead: every root-namespace name before it exists
            self._rec = rec = RunRecord(self.state_dir, self.run_id)
            macs = rec.plan(bridges, ports)
        net = Mininet(topo=None, controller=None, switch=owned_bridge, build=False,
                      autoSetMacs=False, autoStaticArp=False, waitConnected=False,
                      cleanup=False)
        self.layout, self.spec, self.net = lay, spec, net
        try:
            self._populate(net, lay, gen, macs, recorded_node, owned_bridge)
            with self._step(gen):
                self._prober = None
                if self.probe == "socket":
                    from netarena_gym.routing.backends.nsprobe import NamespaceProber
                    self._prober = NamespaceProber([self._pids[n] for n in self.names],
                                                   self._probe_ips)
                self._links = {n: link_indexes(pid) for n, pid in self._pids.items()}
        except BaseException:  # an exception or a signal mid-build: nothing stays up
            teardown(self.__dict__)
            if rec not in self._stale and remove_run(rec.data, settle=0.5):
                # made after a teardown that ran concurrently (the build in another thread)
                rec.write()
                self._stale.append(rec)
            raise
        self.builds += 1

    def _populate(self, net, lay: Layout, gen: int, macs: dict, recorded_node,
                  owned_bridge) -> None:
        """Create the nodes, bridges and links of ``lay``, one recorded step at a time."""
        nodes = {}

        def host(name):
            with self._step(gen):
                nodes[name] = net.addHost(name, cls=recorded_node, ip=None, inNamespace=True,
                                          started=self._started)

        def link(a, b, ia, ib):
            with self._step(gen):
                net.addLink(a, b, intfName1=ia, intfName2=ib)

        for r in lay.routers:
            host(r)
        for s in lay.subnets:
            name = self._bridge(s.switch)
            with self._step(gen):
                br = net.addSwitch(name, cls=owned_bridge, bridge_mac=macs[name],
                                   started=self._started)
            link(nodes[s.router], br, s.iface, f"{name}-eth1")
            for j, hn in enumerate(s.hosts, start=2):
                host(hn)
                link(nodes[hn], br, f"{hn}-eth0", f"{name}-eth{j}")
        for ln in lay.links:
            link(nodes[ln.a], nodes[ln.b], ln.a_iface, ln.b_iface)
        with self._step(gen):
            net.build()
        for sw in net.switches:
            with self._step(gen):
                sw.start([])
        self._pids = {name: n.pid for name, n in nodes.items()}
        self._shells = nodes
        self._switches = frozenset(s.switch for s in lay.subnets)
        self.names = self._probe_order()
        self._probe_ips = [self._probe_ip(n) for n in self.names]

    def _probe_order(self) -> list[str]:
        from netarena_gym.routing.state import natural_key
        hosts = sorted((h for s in self.layout.subnets for h in s.hosts), key=natural_key)
        return hosts + sorted(self.layout.routers, key=natural_key)

    def _probe_ip(self, name: str) -> str:
        if name.startswith("r"):  # its first LAN's gateway, a spine its first transit address
            lay = self.layout
            ip = next((s.gateway for s in lay.subnets if s.router == name), None)
            if ip is None:
                ln = next(ln for ln in lay.links if name in (ln.a, ln.b))
                ip = ln.a_ip if ln.a == name else ln.b_ip
            return int_to_ip(ip)
        s = self.layout.subnet_of_host[name]
        return int_to_ip(s.net + 100 + s.hosts.index(name))

    def restore_baseline(self) -> None:
        """Every node back to its healthy configuration (network stays up)."""
        with ended_on_exit() as procs:
            for n in self._pids:
                procs.append(subprocess.Popen(
                    ["mnexec", "-a", str(self._pids[n]), "bash", "-c",
                     baseline_script(self.layout, n, self._labels)],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    start_new_session=True))
            for p in procs:
                p.wait(timeout=60)

    # -------------------------------------------------------------- protocol
    def apply(self, scenario: Scenario, prebuilt=None) -> None:
        """``prebuilt`` (the generator's in-memory state, a simulator hint) is ignored."""
        spec = TopologySpec.from_dict(scenario.params["topology"])
        if self.net is None or spec != self.spec or self._damaged():
            self._build(spec)
        self._labels = labels_for(scenario.level, self.interface_labels)
        self.restore_baseline()
        self.scenario = scenario
        for fd in scenario.faults:
            f = Fault.from_dict(fd)
            for cmd in f.commands():
                self.run({"machine": f.router, "command": cmd})

    def reset_to_baseline(self) -> None:
        if self.net is not None:
            if self._damaged():
                self._build(self.spec)
            self.restore_baseline()

    def _damaged(self) -> list[str]:
        """The nodes whose links (names and indexes) are not those they had when built: a
        link renamed, deleted, or made (again) is logged and the caller rebuilds."""
        bad = []
        for n, pid in self._pids.items():
            try:
                now = link_indexes(pid)
            except OSError:  # the node's process is gone
                now = None
            if now != self._links.get(n):
                bad.append(n)
        if bad:
            log.warning("mininet run %s: the links of %s changed since the build; rebuilding "
                        "the network", self.run_id, ", ".join(bad))
        return bad

    def run(self, action: Mapping[str, str]) -> CommandResult:
        """``action``: ``{"machine": <node name>, "command": <shell line>}``."""
        machine, command = action["machine"], action["command"]
        cl, early = precheck(self._pids, self._switches, machine, command)
        if early is not None:
            return early
        pid = self._pids[machine]
        budget = LineBudget(self.step_timeout, self.command_timeout)
        return run_pipeline(cl, lambda cmd, data: self._one(pid, cmd, budget),
                            lambda cmd, text: self._redirect(pid, cmd, text))

    def _one(self, pid: int, cmd, budget: LineBudget) -> CommandResult:
        """One allow-listed simple command (not a filter) in the node's sandbox, within
        what is left of the line's ``budget``."""
        prog = cmd.argv[0]
        spent = budget.spent(prog)
        if spent is not None:
            return spent
        if prog == "echo":
            res = echo_cmd(None, list(cmd.argv), "")
        elif prog not in ALLOWED or prog in self.missing_programs or shutil.which(prog) is None:
            return not_found(prog)
        else:
            limit = budget.limit()
            # stdout and stderr are read apart only where they go apart (the order in which
            # a tool mixed them is kept where both reach the terminal); stderr is read even
            # for 2>/dev/null, since the result's kind depends on the whole text
            apart = cmd.stderr in ("null", "channel") or (
                cmd.stderr is None and cmd.stdout is None
                and (cmd.piped or cmd.redirect is not None))
            try:
                p = nodeexec.run_argv(pid, list(cmd.argv), limit, merge_stderr=not apart)
            except subprocess.TimeoutExpired as e:
                out = e.stdout or b""
                return budget.timed_out(limit, out.decode(errors="replace")
                                        if isinstance(out, bytes) else out)
            out, err = p.stdout or "", (p.stderr or "") if apart else ""
            # read together, stderr (unbuffered) comes first: the kind reads it so
            text = err + out
            res = CommandResult(text, p.returncode, classify(prog, p.returncode, text),
                                ((0, len(err)),) if err else ())
        return res

    def _redirect(self, pid: int, cmd, text: str | None) -> CommandResult:
        """``cmd > PATH``: ``text`` written to the resolved, allow-listed path in the node's
        sandbox, with bash's messages (on stderr); None: only opened, as bash does first."""
        path = redirect_target(cmd.redirect[1])
        if path == "/dev/null":
            return CommandResult("")
        err = nodeexec.write_file(pid, path, text or "", cmd.redirect[0] == ">>")
        if err is None:
            return CommandResult("")
        what, code = err
        if what == "open":
            return CommandResult.stderr(f"bash: {path}: {nodeexec.strerror(code)}\n", 1, ERROR)
        prog = cmd.argv[0]
        who = f"bash: {prog}" if prog in ("echo", "printf") else prog
        return CommandResult.stderr(f"{who}: write error: {nodeexec.strerror(code)}\n", 1, ERROR)

    def _fresh_neighbours(self) -> None:
        """Forget every neighbour entry before probing, so the probe sees the network's
        steady state, as the simulator does, not an ARP entry still INCOMPLETE or FAILED
        from before the last change (the kernel retries those only on its timers)."""
        shells = list(self._shells.values())
        for sh in shells:
            sh.sendCmd("ip neigh flush all >/dev/null 2>&1")
        for sh in shells:
            sh.waitOutput()

    def observe(self) -> np.ndarray:
        """The all-pairs reachability matrix (``ping -c1 -W<t>`` semantics)."""
        self._fresh_neighbours()
        if self._prober is not None:
            m = self._prober.matrix(self.probe_timeout,
                                    attempts=2 if len(self.names) > RETRY_ABOVE else 1)
            m.flags.writeable = False
            return m
        return self._ping_matrix()

    def _ping_matrix(self) -> np.ndarray:
        """One shell per source node firing ``ping -c1 -W<t>`` at every other node."""
        m = ping_matrix([self._pids[n] for n in self.names], self._probe_ips,
                        self.probe_timeout)
        m.flags.writeable = False
        return m

    def node_pid(self, machine: str) -> int:
        """The PID of ``machine``'s namespace shell (whose namespaces commands join)."""
        return self._pids[machine]

    def state_token(self, machine: str) -> None:
        return None  # unknown: callers re-inspect
