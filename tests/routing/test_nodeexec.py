"""The Mininet node sandbox: the node's network namespace, a read-only host, a private
/tmp, and only that namespace's /proc/sys/net writable (needs root)."""
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from netarena_gym.routing.backends import nodeexec

pytestmark = [pytest.mark.mininet,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root (the node exec helper enters network namespaces)")]


@pytest.fixture(scope="module")
def netns_pid():
    holder = subprocess.Popen(["unshare", "-n", "sleep", "300"])
    time.sleep(0.3)
    yield holder.pid
    holder.kill()
    holder.wait()


def test_commands_run_in_the_node_namespace(netns_pid):
    p = nodeexec.run_argv(netns_pid, ["ip", "-o", "link"], 10)
    assert p.returncode == 0 and p.stdout.count("\n") == 1 and ": lo:" in p.stdout


def test_host_is_read_only_and_tmp_private(netns_pid):
    name = f"netarena-nodeexec-{uuid.uuid4().hex[:8]}"
    p = nodeexec.run_argv(netns_pid, ["touch", f"/root/{name}"], 10)
    assert p.returncode == 1 and "Read-only file system" in p.stdout
    assert nodeexec.run_argv(netns_pid, ["touch", f"/tmp/{name}"], 10).returncode == 0
    assert not Path("/tmp", name).exists() and not Path("/root", name).exists()


def test_only_the_namespace_sysctls_are_writable(netns_pid):
    burst = Path("/proc/sys/kernel/printk_ratelimit_burst").read_text()
    p = nodeexec.run_argv(netns_pid, ["sysctl", "-w", "kernel.printk_ratelimit_burst=77"], 10)
    assert p.returncode != 0
    assert nodeexec.write_file(netns_pid, "/proc/sys/kernel/printk_ratelimit_burst", "77\n",
                               False) == ("open", 30)  # EROFS
    assert Path("/proc/sys/kernel/printk_ratelimit_burst").read_text() == burst
    host = Path("/proc/sys/net/ipv4/icmp_echo_ignore_all").read_text()
    assert nodeexec.write_file(netns_pid, "/proc/sys/net/ipv4/icmp_echo_ignore_all", "1\n",
                               False) is None
    p = nodeexec.run_argv(netns_pid, ["sysctl", "-n", "net.ipv4.icmp_echo_ignore_all"], 10)
    assert p.stdout == "1\n"
    assert Path("/proc/sys/net/ipv4/icmp_echo_ignore_all").read_text() == host
    assert nodeexec.write_file(netns_pid, "/proc/sys/net/ipv4/ip_forward", "abc\n",
                               False) == ("write", 22)
    assert nodeexec.write_file(netns_pid, "/proc/sys/net/ipv4/nope", "1\n", False) == ("open", 2)


def test_name_lookups_fail_at_once_with_the_private_files(netns_pid):
    """The host's resolver may wait on a nameserver the node cannot reach; in the sandbox
    the bound files answer from ``files`` only, at once (and the host's stay untouched)."""
    host_resolv = Path("/etc/resolv.conf").read_bytes()
    for path, text in nodeexec.ETC_FILES.items():
        assert nodeexec.run_argv(netns_pid, ["cat", path], 10).stdout == text
    t = time.monotonic()
    p = nodeexec.run_argv(netns_pid, ["ping", "-c", "1", "-W", "1", "netarena-nosuchhost"], 10)
    assert (p.returncode, p.stdout) == (2, "ping: netarena-nosuchhost: Name or service not known\n")
    p = nodeexec.run_argv(netns_pid, ["arp", "netarena-nosuchhost"], 10)
    assert (p.returncode, p.stdout) == (255, "netarena-nosuchhost: Unknown host\n")
    assert time.monotonic() - t < 2
    p = nodeexec.run_argv(netns_pid, ["getent", "networks", "link-local"], 10)
    assert p.stdout.split() == ["link-local", "169.254.0.0"]
    p = nodeexec.run_argv(netns_pid, ["touch", "/etc/hosts"], 10)
    assert p.returncode == 1 and "Read-only file system" in p.stdout
    assert Path("/etc/resolv.conf").read_bytes() == host_resolv
