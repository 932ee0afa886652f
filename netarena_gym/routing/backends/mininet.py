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

Lifecycle: everything this run creates in the root namespace (bridges and their ports) is
named with a run-unique prefix ``nxXXXX``; routers' and hosts' interfaces live in their own
namespaces. The names, node PIDs, their start times (``/proc/PID/stat`` field 22) and owner uids are
recorded in ``/run/netarena-gym/<run>.json``;
``close()``, exceptions, SIGINT/SIGTERM and garbage collection tear the network down, and a
new run removes what a crashed run left, by those recorded names; a recorded PID is signalled only while its start time and uid still
match (a reused PID is left alone). Nothing else is touched (Mininet's global clean-up is
never called, nothing is killed by name).

The network stays up across episodes with the same topology: ``reset`` restores every
node's baseline configuration instead of rebuilding.
"""
from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import weakref
from typing import Mapping
from pathlib import Path

import numpy as np

from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.core.scenario import Scenario
from netarena_gym.errors import BackendUnavailable
from netarena_gym.shell.parser import ERROR, TIMEOUT, CommandResult
from netarena_gym.shell.policy import run_pipeline
from netarena_gym.routing.backends import nodeexec
from netarena_gym.routing.commands.allowlist import ALLOWED, redirect_target
from netarena_gym.routing.commands.executor import classify, not_found, precheck
from netarena_gym.routing.commands.files import echo_cmd
from netarena_gym.routing.commands.sysctl_conf import reset_command
from netarena_gym.routing.faults import Fault
from netarena_gym.routing.topology import Layout, TopologySpec, labels_for

STATE_DIR = Path(os.environ.get("NETARENA_STATE_DIR", "/run/netarena-gym"))
# networks of more nodes than this are probed twice for the pairs that did not answer: one
# source then sends more echo requests than the kernel queues for a neighbour it has not
# resolved yet (see NamespaceProber.matrix)
RETRY_ABOVE = 128

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


def baseline_script(lay: Layout, node: str, labels: bool = True) -> str:
    """Shell commands that bring ``node`` to its healthy configuration from any state
    (``labels``: set the interface aliases, else clear them). A handful of processes per
    node, however many interfaces and routes it has: the ``ip`` and ``tc`` commands run
    as one batch each (a spine of a 64-router leaf-spine has 60 interfaces and 300
    routes), the filter table is reset by one ``iptables-restore``, the sysctls by one
    ``sysctl``."""
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
        links += [f"addr flush dev {itf}", f"link set dev {itf} up mtu 1500 promisc off arp on"]
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
        "iptables-restore <<'NXEOF'\n*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
        ":OUTPUT ACCEPT [0:0]\nCOMMIT\nNXEOF",  # policies ACCEPT, no rules, no user chains
        # `ip rule flush` keeps every pref-0 rule: delete all but `lookup local` by spec
        "ip rule show | sed -n 's/^0:\t//p' | grep -vx 'from all lookup local' | "
        "while read -r spec; do ip rule del pref 0 $spec; done",
        sysctl,
        _batch("tc", [f"qdisc del dev {itf} root" for itf in [*ifaces, "lo"]], quiet=True),
        "ip -4 addr flush dev lo",
        _batch("ip", links), ipv6, _batch("ip", ip),
        # an MTU under 1280 took ::1 away; a down/up of lo brings it back
        "ip -6 addr show dev lo | grep -q '::1/128' || "
        "{ ip link set dev lo down; ip link set dev lo up; }"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def process_identity(pid: int) -> list[int] | None:
    """[start time in clock ticks since boot, owner uid] of a live process, or None. The
    start time is field 22 of ``/proc/PID/stat``, counted after the parenthesised command
    name (which may itself hold spaces and parentheses)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2:].split()
    return [int(fields[19]), uid]  # fields[0] is field 3 (state)


def _kill_if_same(pid: int, ident) -> bool:
    """SIGKILL ``pid`` only while it is still the process recorded as ``ident`` (start
    time, uid), through a pidfd so that the check and the kill address one process."""
    if not ident:
        return False
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        if process_identity(pid) != list(ident):
            return False
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def reap_leftovers(state_dir: Path = STATE_DIR) -> list[str]:
    """Remove what crashed runs recorded and left behind (their bridges and node shells),
    by the names and PIDs in their state files. Returns the run ids cleaned. A run whose
    owner is still the recorded live process is left alone; a node PID is killed only while
    its start time and uid are those recorded at creation."""
    cleaned = []
    if not state_dir.is_dir():
        return cleaned
    for f in state_dir.glob("*.json"):
        try:
            rec = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        owner = int(rec.get("owner", 0))
        ident = rec.get("owner_ident")
        if _alive(owner) and (ident is None or process_identity(owner) == list(ident)):
            continue
        for pid, pid_ident in rec.get("node_idents", []):
            _kill_if_same(int(pid), pid_ident)
        for br in rec.get("bridges", []):
            subprocess.run(["ip", "link", "del", br], capture_output=True, timeout=10)
        for port in rec.get("ports", []):
            subprocess.run(["ip", "link", "del", port], capture_output=True, timeout=10)
        f.unlink(missing_ok=True)
        cleaned.append(rec.get("run", f.stem))
    return cleaned


class MininetBackend:
    """Routing backend on Mininet. Same protocol as :class:`~netarena_gym.routing.backends.sim.SimBackend`."""

    name = "mininet"
    capabilities: frozenset[str] = frozenset()  # probed per instance in __init__

    def __init__(self, *, probe_timeout: float = 0.2, command_timeout: float = 10.0,
                 state_dir: Path | None = None, probe: str = "socket",
                 interface_labels: bool | None = None,
                 missing_programs: frozenset[str] = frozenset()):
        """``probe="socket"`` sends the echo requests from raw sockets opened in each node's
        namespace (one process, fast); ``probe="ping"`` runs ``ping -c1 -W<t>`` per pair.
        ``interface_labels``: router interface aliases (None: off in compat, on otherwise).
        ``missing_programs``: tools treated as not installed (a compat profile), for the
        faults and the agent alike."""
        self.missing_programs = frozenset(missing_programs)
        if probe not in ("socket", "ping"):
            raise ValueError("probe must be 'socket' or 'ping'")
        self.probe = probe
        self._prober = None
        missing = requirements_missing()
        if missing:
            raise BackendUnavailable("the mininet backend needs: " + ", ".join(missing))
        self.probe_timeout = probe_timeout
        self.command_timeout = command_timeout
        self.interface_labels = interface_labels
        self._labels = True
        self.capabilities = detect_capabilities()
        self.state_dir = Path(state_dir or STATE_DIR)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        reap_leftovers(self.state_dir)
        self.run_id = f"nx{secrets.token_hex(2)}"
        self.net = None
        self.spec: TopologySpec | None = None
        self.layout: Layout | None = None
        self.scenario: Scenario | None = None
        self.names: list[str] = []
        self._pids: dict[str, int] = {}
        self._idents: dict[int, tuple | None] = {}
        self._shells: dict = {}
        self._switches: frozenset[str] = frozenset()
        self.builds = 0
        # runs on garbage collection and at interpreter exit
        self._finalizer = weakref.finalize(self, _teardown, self.__dict__)
        self._install_signal_handlers()

    # ------------------------------------------------------------- lifecycle
    def _install_signal_handlers(self) -> None:
        ref = weakref.ref(self)
        for sig in (signal.SIGINT, signal.SIGTERM):
            prev = signal.getsignal(sig)

            def handler(signum, frame, prev=prev):
                b = ref()
                if b is not None:
                    b.close()
                if callable(prev):
                    prev(signum, frame)
                elif prev == signal.SIG_DFL:
                    signal.signal(signum, signal.SIG_DFL)
                    os.kill(os.getpid(), signum)
            try:
                signal.signal(sig, handler)
            except ValueError:  # not the main thread: rely on atexit and finalize
                pass

    def _record(self) -> None:
        pids = list(self._pids.values())
        rec = {"run": self.run_id, "owner": os.getpid(),
               "owner_ident": process_identity(os.getpid()), "node_pids": pids,
               "node_idents": [[p, process_identity(p)] for p in pids],
               "bridges": sorted(self._bridge_names()), "ports": []}
        (self.state_dir / f"{self.run_id}.json").write_text(json.dumps(rec))

    def _bridge_names(self) -> list[str]:
        return [self._bridge(s.switch) for s in self.layout.subnets] if self.layout else []

    def _bridge(self, switch: str) -> str:
        return f"{self.run_id}{switch}"

    def close(self) -> None:
        _teardown(self.__dict__)

    # --------------------------------------------------------------- building
    def _build(self, spec: TopologySpec) -> None:
        from mininet.net import Mininet
        from mininet.node import Node
        from mininet.nodelib import LinuxBridge

        self.close()
        lay = Layout(spec)
        net = Mininet(topo=None, controller=None, switch=LinuxBridge, build=False,
                      autoSetMacs=False, autoStaticArp=False, waitConnected=False,
                      cleanup=False)
        self.layout, self.spec, self.net = lay, spec, net
        self._record()  # names are known before anything exists: a crash here is reapable
        nodes = {}
        for r in lay.routers:
            nodes[r] = net.addHost(r, cls=Node, ip=None, inNamespace=True)
        for s in lay.subnets:
            br = net.addSwitch(self._bridge(s.switch), cls=LinuxBridge)
            net.addLink(nodes[s.router], br, intfName1=s.iface,
                        intfName2=f"{self._bridge(s.switch)}-eth1")
            for j, hn in enumerate(s.hosts, start=2):
                nodes[hn] = net.addHost(hn, cls=Node, ip=None, inNamespace=True)
                net.addLink(nodes[hn], br, intfName1=f"{hn}-eth0",
                            intfName2=f"{self._bridge(s.switch)}-eth{j}")
        for ln in lay.links:
            net.addLink(nodes[ln.a], nodes[ln.b], intfName1=ln.a_iface, intfName2=ln.b_iface)
        net.build()
        for sw in net.switches:
            sw.start([])
        self._pids = {name: n.pid for name, n in nodes.items()}
        self._idents = {p: process_identity(p) for p in self._pids.values()}
        self._shells = nodes
        self._record()
        self._switches = frozenset(s.switch for s in lay.subnets)
        self.names = self._probe_order()
        self._probe_ips = [self._probe_ip(n) for n in self.names]
        if self.probe == "socket":
            from netarena_gym.routing.backends.nsprobe import NamespaceProber
            self._prober = NamespaceProber([self._pids[n] for n in self.names], self._probe_ips)
        self.builds += 1

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
        procs = [subprocess.Popen(["mnexec", "-a", str(self._pids[n]), "bash", "-c",
                                   baseline_script(self.layout, n, self._labels)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True) for n in self._pids]
        for p in procs:
            p.wait(timeout=60)

    # -------------------------------------------------------------- protocol
    def apply(self, scenario: Scenario, prebuilt=None) -> None:
        """``prebuilt`` (the generator's in-memory state, a simulator hint) is ignored."""
        spec = TopologySpec.from_dict(scenario.params["topology"])
        if self.net is None or spec != self.spec:
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
            self.restore_baseline()

    def run(self, action: Mapping[str, str]) -> CommandResult:
        """``action``: ``{"machine": <node name>, "command": <shell line>}``."""
        machine, command = action["machine"], action["command"]
        cl, early = precheck(self._pids, self._switches, machine, command)
        if early is not None:
            return early
        pid = self._pids[machine]
        return run_pipeline(cl, lambda cmd, data: self._one(pid, cmd))

    def _one(self, pid: int, cmd) -> CommandResult:
        """One allow-listed simple command (not a filter) in the node's sandbox."""
        prog = cmd.argv[0]
        if prog == "echo":
            res = echo_cmd(None, list(cmd.argv), "")
        elif prog not in ALLOWED or prog in self.missing_programs or shutil.which(prog) is None:
            return not_found(prog)
        else:
            try:
                p = nodeexec.run_argv(pid, list(cmd.argv), self.command_timeout,
                                      drop_stderr=cmd.stderr == "null")
            except subprocess.TimeoutExpired as e:
                out = e.stdout or b""
                out = out.decode(errors="replace") if isinstance(out, bytes) else out
                return CommandResult(out + f"netarena: command timed out after "
                                     f"{self.command_timeout:g} s (killed)\n", 124, TIMEOUT)
            res = CommandResult(p.stdout or "", p.returncode,
                                classify(prog, p.returncode, p.stdout or ""))
        if cmd.redirect is None or res.status != 0:
            return res
        return self._redirect(pid, cmd, res)

    def _redirect(self, pid: int, cmd, res: CommandResult) -> CommandResult:
        """``cmd > PATH``: the resolved, allow-listed path written in the node's sandbox,
        with bash's messages."""
        path = redirect_target(cmd.redirect[1])
        if path == "/dev/null":
            return CommandResult("")
        err = nodeexec.write_file(pid, path, res.output, cmd.redirect[0] == ">>")
        if err is None:
            return CommandResult("")
        what, code = err
        if what == "open":
            return CommandResult(f"bash: {path}: {nodeexec.strerror(code)}\n", 1, ERROR)
        prog = cmd.argv[0]
        who = f"bash: {prog}" if prog in ("echo", "printf") else prog
        return CommandResult(f"{who}: write error: {nodeexec.strerror(code)}\n", 1, ERROR)

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
        n = len(self.names)
        w = f"{self.probe_timeout:g}"
        procs = []
        for i, src in enumerate(self.names):
            targets = " ".join(ip for j, ip in enumerate(self._probe_ips) if j != i)
            script = (f"for d in {targets}; do (ping -n -q -c1 -W{w} $d >/dev/null 2>&1 "
                      f"&& echo $d) & done; wait")
            procs.append(subprocess.Popen(["mnexec", "-a", str(self._pids[src]), "sh", "-c",
                                           script], stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, text=True,
                                          start_new_session=True))
        m = np.zeros((n, n), dtype=bool)
        index = {ip: j for j, ip in enumerate(self._probe_ips)}
        for i, p in enumerate(procs):
            out, _ = p.communicate(timeout=60)
            for line in out.split():
                j = index.get(line.strip())
                if j is not None:
                    m[i, j] = True
        np.fill_diagonal(m, True)
        m.flags.writeable = False
        return m

    def node_pid(self, machine: str) -> int:
        """The PID of ``machine``'s namespace shell (whose namespaces commands join)."""
        return self._pids[machine]

    def state_token(self, machine: str) -> None:
        return None  # unknown: callers re-inspect


def _teardown(state: dict) -> None:
    """Stop this run's network and remove its state file (idempotent)."""
    prober = state.get("_prober")
    if prober is not None:
        state["_prober"] = None
        prober.close()
    net = state.get("net")
    if net is not None:
        state["net"] = None
        try:
            net.stop()
        except Exception:  # pragma: no cover - best effort, then remove by name
            pass
        for br in [f"{state['run_id']}{s.switch}" for s in state["layout"].subnets]:
            subprocess.run(["ip", "link", "del", br], capture_output=True, timeout=10)
        idents = state.get("_idents", {})
        for pid in state.get("_pids", {}).values():
            _kill_if_same(pid, idents.get(pid))
    run_id = state.get("run_id")
    sd = state.get("state_dir")
    if run_id and sd is not None:
        (Path(sd) / f"{run_id}.json").unlink(missing_ok=True)
