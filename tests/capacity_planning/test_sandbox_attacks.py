"""Attacks on the MALT code sandbox (issue #11): each escape gadget, then each thing an
escaped agent would try. Every test checks the host afterwards: no file created, no
listener reached, no secret in what came back. The Python guard is bypassed in every case
(the gadgets work; the guard-off box runs the rest), so what holds is the OS containment."""
import os
import socket
import threading
import uuid

import pytest

from netarena_gym.capacity_planning.commands.sandbox import Limits, Sandbox
from netarena_gym.capacity_planning.state import base_graph
from netarena_gym.capacity_planning.topology import TopologySpec

SPEC = TopologySpec(superblocks=1, aggs_per_superblock=1, spineblocks=1, agg_switches=(2, 1),
                    spine_switches=(1, 0), ports_per_switch=2)
SOURCE = os.path.abspath(Sandbox.__module__.replace(".", "/") + ".py")
SECRET_SOURCE = "class SandboxResult"  # a line of the project source

# gadgets that hand the agent the real __import__ past the Python guard
GUARDED_GADGETS = {
    "attrgetter_globals": "import operator, json\n"
                          "imp = operator.attrgetter('__globals__')(json.dumps)['__builtins__']['__import__']",
    "formatter_get_field": "import string, json\n"
                           "imp = string.Formatter().get_field('0.__globals__[__builtins__]', "
                           "[json.dumps], {})[0]['__import__']",
    "typing_get_type_hints": "import typing, json\n"
                             "def f(x: \"json.dumps.__globals__['__builtins__']['__import__']\"): pass\n"
                             "imp = typing.get_type_hints(f, None, {'json': json})['x']",
}
RAW_GADGETS = {
    "plain_import": "imp = __import__",
    "subclasses_walk": "imp = next(c.__init__.__globals__['__builtins__']['__import__'] "
                       "for c in object.__subclasses__() if '__globals__' in dir(c.__init__) "
                       "and '__builtins__' in c.__init__.__globals__)\n"
                       "imp = imp if callable(imp) else __import__",
    "gc_get_objects": "import gc\n"
                      "imp = next(o['__import__'] for o in gc.get_objects() "
                      "if isinstance(o, dict) and callable(o.get('__import__')))",
    "frame_f_back_globals": "import sys\n"
                            "f = sys._getframe()\n"
                            "while 'select' not in f.f_globals:\n"
                            "    f = f.f_back\n"  # up to the worker's own module globals
                            "imp = lambda n, m=f.f_globals['sys'].modules: m.get(n) or __import__(n)",
    "importlib": "imp = __import__('importlib').import_module",
}


@pytest.fixture(scope="module")
def base():
    return base_graph(SPEC)


def _box(guard):
    return Sandbox(Limits(cpu_seconds=1.0, wall_seconds=3.0, memory_mb=256,
                          output_bytes=1 << 20), python_guard=guard)


@pytest.fixture(scope="module")
def guarded():
    sb = _box(True)
    yield sb
    sb.close()


@pytest.fixture(scope="module")
def raw():
    sb = _box(False)
    yield sb
    sb.close()


class Listeners:
    """Loopback TCP, UDP and AF_UNIX listeners on the host that record whatever reaches them."""

    def __init__(self, tag):
        self.hits = []
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = f"/tmp/{tag}.sock"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        self.unix.listen(8)
        for s in (self.tcp, self.udp, self.unix):
            s.settimeout(0.05)
        self.stop = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stop:
            for s in (self.tcp, self.unix):
                try:
                    c, _ = s.accept()
                    self.hits.append(("accept", s.family))
                    c.close()
                except OSError:
                    pass
            try:
                self.hits.append(("udp", self.udp.recvfrom(100)[0]))
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.thread.join(2)
        for s in (self.tcp, self.udp, self.unix):
            s.close()
        os.unlink(self.unix_path)


@pytest.fixture
def host():
    tag = "netarena-attack-" + uuid.uuid4().hex[:8]
    lis = Listeners(tag)
    paths = [f"/tmp/{tag}", f"/dev/shm/{tag}", f"/var/tmp/{tag}",
             os.path.join(os.path.expanduser("~"), tag), f"/tmp/{tag}.dir", f"/tmp/{tag}.fifo",
             f"/tmp/{tag}.link", f"/dev/shm/{tag}.fifo", f"/dev/shm/{tag}.link"]
    yield tag, lis, paths
    lis.close()
    made = [p for p in paths if os.path.lexists(p)]
    for p in made:
        os.rmdir(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
    assert made == [], f"the sandboxed code created host files: {made}"
    assert lis.hits == [], f"the sandboxed code reached a host listener: {lis.hits}"


def attacks(tag, lis):
    """name -> body (uses ``imp``, the real __import__); fds 0-2 are closed first so that the
    fd limit is not what stops a socket or a file."""
    o = "o = imp('os')\nfor fd in (0, 1, 2):\n    o.close(fd)\nout = []\n"
    sock = "s = imp('socket')\n"
    return {
        "tcp_loopback": o + sock + f"c = s.socket()\nc.connect(('127.0.0.1', {lis.tcp.getsockname()[1]}))\n"
                                   "c.sendall(b'x')",
        "tcp_outbound": o + sock + "s.socket().connect(('1.1.1.1', 80))",
        "udp_loopback": o + sock + "u = s.socket(s.AF_INET, s.SOCK_DGRAM)\n"
                                   f"u.sendto(b'x', ('127.0.0.1', {lis.udp.getsockname()[1]}))",
        "af_unix": o + sock + f"u = s.socket(s.AF_UNIX)\nu.connect('{lis.unix_path}')",
        "af_netlink": o + sock + "s.socket(s.AF_NETLINK, s.SOCK_RAW, 0)",
        "write_tmp": o + f"imp('builtins').open('/tmp/{tag}', 'w').write('x')",
        "write_dev_shm": o + f"imp('builtins').open('/dev/shm/{tag}', 'w').write('x')",
        "write_var_tmp": o + f"imp('builtins').open('/var/tmp/{tag}', 'w').write('x')",
        "write_home": o + f"imp('builtins').open(o.path.expanduser('~/{tag}'), 'w')",
        "mkdir_tmp": o + f"o.mkdir('/tmp/{tag}.dir')",
        "mkfifo_tmp": o + f"o.mkfifo('/tmp/{tag}.fifo')",
        "mkfifo_dev_shm": o + f"o.mkfifo('/dev/shm/{tag}.fifo')",
        "symlink_tmp": o + f"o.symlink('/etc/shadow', '/tmp/{tag}.link')",
        "symlink_dev_shm": o + f"o.symlink('/etc/shadow', '/dev/shm/{tag}.link')",
        "os_system": o + f"out.append(o.system('touch /tmp/{tag}'))",
        "subprocess": o + f"imp('subprocess').run(['touch', '/tmp/{tag}'])",
        "ctypes_system": o + f"out.append(imp('ctypes').CDLL(None).system(b'touch /tmp/{tag}'))\n"
                             "return {'type': 'text', 'data': out}",
        "ctypes_socket_syscall": o + "lc = imp('ctypes').CDLL(None, use_errno=True)\n"
                                     "out.append(lc.syscall(41, 2, 1, 0))\n"  # socket(AF_INET, STREAM)
                                     "return {'type': 'text', 'data': out}",
        "ctypes_ptrace": o + "lc = imp('ctypes').CDLL(None)\n"
                             "out.append(lc.ptrace(16, o.getppid(), 0, 0))\n"  # PTRACE_ATTACH
                             "return {'type': 'text', 'data': out}",
        "read_etc_passwd": o + "return {'type': 'text', 'data': imp('builtins').open('/etc/passwd').read()}",
        "read_etc_shadow": o + "return {'type': 'text', 'data': imp('builtins').open('/etc/shadow').read()}",
        "read_project_source": o + f"return {{'type': 'text', 'data': imp('builtins').open({SOURCE!r}).read()}}",
        "read_proc_1_environ": o + "return {'type': 'text', 'data': imp('builtins').open('/proc/1/environ').read()}",
        "list_root": "return {'type': 'text', 'data': sorted(imp('os').listdir('/'))}",
    }


SECRETS = ("root:x:0:0", "root:*", "root:!", "root:$", SECRET_SOURCE, "NETARENA_ATTACK_SECRET")
ATTACKS = sorted(attacks("t", type("L", (), {"tcp": socket.socket(), "udp": socket.socket(),
                                              "unix_path": "/x"})()))


def body(preamble, attack):
    lines = (preamble + "\n" + attack + "\nreturn {'type': 'text', 'data': out}").splitlines()
    return "def process_graph(graph):\n" + "\n".join("    " + ln for ln in lines) + "\n"


def check(r):
    text = f"{r.message}\n{r.data!r}\n{r.stdout}"
    for s in SECRETS:
        assert s not in text, f"secret {s!r} leaked: {text[:500]}"
    assert ".pyenv" not in r.message and "site-packages" not in r.message, r.message


@pytest.fixture(autouse=True)
def secret_env(monkeypatch):
    monkeypatch.setenv("NETARENA_ATTACK_SECRET", "s3cr3t")


@pytest.mark.parametrize("gadget", sorted(GUARDED_GADGETS))
def test_the_gadgets_do_bypass_the_python_guard(guarded, base, gadget):
    """A control: the guard is escaped, so the other tests exercise the OS containment."""
    r = guarded.run(base, body(GUARDED_GADGETS[gadget], "out = imp('os').getcwd()"))
    assert r.ok, r.message
    assert r.data == "/sandbox/scratch"


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("gadget", sorted(GUARDED_GADGETS))
def test_guard_escapes_are_contained(guarded, base, host, gadget, attack):
    tag, lis, _ = host
    check(guarded.run(base, body(GUARDED_GADGETS[gadget], attacks(tag, lis)[attack])))


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("gadget", sorted(RAW_GADGETS))
def test_attacks_are_contained_without_the_guard(raw, base, host, gadget, attack):
    tag, lis, _ = host
    check(raw.run(base, body(RAW_GADGETS[gadget], attacks(tag, lis)[attack])))


def test_the_file_tree_is_minimal(raw, base):
    r = raw.run(base, body("imp = __import__", "o = imp('os')\no.close(0)\nout = [sorted(o.listdir('/')), "
                           "o.path.exists('/etc'), o.path.exists('/work'), "
                           "o.path.exists(" + repr(SOURCE) + ")]"))
    assert r.ok, r.message
    listing, etc, work, source = r.data
    assert set(listing) <= {"bin", "dev", "lib", "lib64", "proc", "root", "sandbox", "tmp", "usr"}
    assert (etc, work, source) == (False, False, False)


def test_only_loopback_in_the_network_namespace(raw, base):
    r = raw.run(base, body("imp = __import__", "o = imp('os')\no.close(0)\n"
                           "out = imp('builtins').open('/proc/net/dev').read().split()[20:]"))
    assert r.ok, r.message
    assert [w for w in r.data if w.endswith(":")] == ["lo:"]


@pytest.mark.parametrize("attack", [
    "o = imp('os')\nwhile True:\n    o.fork()",
    "x = []\nwhile True:\n    x.append(' ' * (1 << 24))",
    "while True:\n    pass",
    "print('x' * (1 << 26))\nout = 'x' * (1 << 26)",
])
def test_resource_bombs_are_stopped_and_the_worker_survives(raw, base, attack):
    r = raw.run(base, body("imp = __import__", attack))
    assert not r.ok
    assert r.seconds < 10
    ok = raw.run(base, body("", "out = 1"))
    assert ok.ok and ok.data == 1


def test_tracebacks_name_no_host_path(raw, base):
    r = raw.run(base, body("import networkx as nx", "nx.shortest_path(graph, 'nope', 'nada')"))
    assert r.status == "error" and 'File "<agent>"' in r.message
    assert "/root" not in r.message and "site-packages" not in r.message and "/usr" not in r.message
    assert "NodeNotFound" in r.message
    # the agent's own frames only: no worker, library or project file is named (issue 13.8)
    assert ".py" not in r.message and "sandbox_worker" not in r.message and "/" not in r.message


def test_legitimate_code_still_works(guarded, base):
    r = guarded.run(base, body("import networkx as nx",
                               "out = nx.number_weakly_connected_components(graph)"))
    assert r.ok and r.data >= 1


def test_without_bwrap_code_mode_refuses_unless_unsafe(monkeypatch, base):
    from netarena_gym.capacity_planning.commands import sandbox_bwrap
    DependencyNotInstalled = sandbox_bwrap.DependencyNotInstalled
    monkeypatch.setenv("PATH", "/nonexistent")
    sandbox_bwrap.probe.cache_clear()
    try:
        with pytest.raises(DependencyNotInstalled, match="bubblewrap"):
            Sandbox()
        sb = Sandbox(unsafe=True)  # trusted code: a plain process
        try:
            r = sb.run(base, body("", "out = 2"))
            assert r.ok and r.data == 2
        finally:
            sb.close()
    finally:
        sandbox_bwrap.probe.cache_clear()
