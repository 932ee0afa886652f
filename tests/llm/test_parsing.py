"""Reply parsing: the many shapes a model answers in, into env actions."""
from __future__ import annotations

import pytest

from netarena_gym.llm.parsing import ReplyParseError, parse_reply

R = ("machine", "command")


@pytest.mark.parametrize("reply, want, how", [
    ('{"machine": "r0", "command": "ip addr show"}', ("r0", "ip addr show"), "json"),
    ('```json\n{"machine": "r1", "command": "ip route"}\n```', ("r1", "ip route"), "json"),
    ('Looking at {"machine": "x"} first.\nFinal: {"Machine": "r2", "Command": "ip rule"}',
     ("r2", "ip rule"), "json"),
    ("{'machine': 'r0', 'command': 'ip -br link'}", ("r0", "ip -br link"), "json"),
    ('{"machine": "r0", "command": ["ip a", "ip r"]}', ("r0", "ip a; ip r"), "json"),
    ("Machine: r0\nCommand: sysctl -w net.ipv4.ip_forward=1",
     ("r0", "sysctl -w net.ipv4.ip_forward=1"), "labels"),
    ("**Machine:** r3\n**Command:** `iptables -S`", ("r3", "iptables -S"), "labels"),
    ("```bash\nr0: ip link set r0-eth1 up\n```", ("r0", "ip link set r0-eth1 up"), "fence"),
    ("```\n# machine: r1\nip addr show\n```", ("r1", "ip addr show"), "fence"),
    ("```ip neigh```\nr0$ ip neigh", ("r0", "ip neigh"), "bare"),
    ("r0$ ip route show", ("r0", "ip route show"), "bare"),
    ("[h1] ip route", ("h1", "ip route"), "bare"),
    ('<think>maybe {"machine": "r9", "command": "reboot"}</think>\n{"machine": "r0", '
     + '"command": "ip a"}', ("r0", "ip a"), "json"),
    ('{"machine": "r0", "command": "echo \\"{x}\\" | grep x"}', ("r0", 'echo "{x}" | grep x'),
     "json"),
])
def test_replies_in_many_shapes_parse(reply, want, how):
    act, got_how = parse_reply(reply, R)
    assert (act["machine"], act["command"]) == want and got_how == how


@pytest.mark.parametrize("reply", [
    "", "   ", "I am not sure what to do.", "ip addr show", '{"machine": "r0"}',
    '{"machine": "r0", "command": ""}', "```\n```", "ip: not a machine", "{{{{",
    '{"machine": "r0", "command": {"nested": 1}}',
])
def test_unparseable_replies_raise(reply):
    with pytest.raises(ReplyParseError):
        parse_reply(reply, R)


def test_other_fields_of_a_json_action_are_kept():
    act, _ = parse_reply('{"command": "kubectl apply -f -", "stdin": "kind: X"}', ("command",))
    assert act == {"command": "kubectl apply -f -", "stdin": "kind: X"}
    act, _ = parse_reply('I will answer.\n{"tool": "answer", "answer": [1, 2]}', ())
    assert act == {"tool": "answer", "answer": [1, 2]}
    with pytest.raises(ReplyParseError):
        parse_reply("no json here", ())


def test_single_key_envs_take_the_fenced_or_bare_command():
    assert parse_reply("```bash\nkubectl get networkpolicy -A\n```", ("command",))[0] == {
        "command": "kubectl get networkpolicy -A"}
    assert parse_reply("kubectl get pods -n frontend", ("command",))[0] == {
        "command": "kubectl get pods -n frontend"}
    code = "```python\ndef process_graph(g):\n    return {'type': 'text'}\n```"
    assert parse_reply(code, ("code",))[0]["code"].startswith("def process_graph(g):\n    ")


def test_parsed_replies_are_valid_env_actions():
    import gymnasium as gym

    env = gym.make("NetArena-Routing-v0")
    env.reset(seed=0)
    act, _ = parse_reply("Machine: r0\nCommand: ip -br addr", env.unwrapped.text_keys)
    _, _, _, _, info = env.step(act)
    assert info["command_kind"] == "ok"
