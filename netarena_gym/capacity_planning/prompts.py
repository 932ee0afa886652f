"""The instructions agents read: the topology model, the definitions the ground truth
uses, and what to return. One block per interface and graph scheme (``CODE``, ``COMPAT``,
``TOOLS``, shown in the observation), and ``SYSTEM``, the briefing a language agent's system
prompt starts with (dispatched by :mod:`netarena_gym.agents.prompts`)."""
from __future__ import annotations

from netarena_gym.capacity_planning.commands.sandbox_runtime import ALLOWED_MODULES
from netarena_gym.capacity_planning.commands.tools import HELP

SCHEMA = """The topology follows Google's MALT model. Kinds: EK_JUPITER, EK_SUPERBLOCK,
EK_SPINEBLOCK, EK_AGG_BLOCK, EK_PACKET_SWITCH, EK_PORT, EK_CHASSIS, EK_CONTROL_POINT,
EK_RACK, EK_CONTROL_DOMAIN. Every node has "name" and "type" (a list holding its kind);
ports have "physical_capacity_bps" (an int, bits per second), packet switches have
"switch_loc" ({"stage": n}). A packet switch, its chassis and its control point share a name.
Edges have "type" RK_CONTAINS or RK_CONTROLS. RK_CONTAINS may go jupiter -> superblock and
spine block; superblock -> aggregation block; aggregation block and spine block -> packet
switch; packet switch -> port; rack -> chassis; chassis -> packet switch and control point;
control domain -> control point. RK_CONTROLS goes control point -> packet switch."""

DEFINITIONS = """Definitions:
- The direct child nodes of X are its RK_CONTAINS successors.
- The total physical capacity of X is the sum of physical_capacity_bps over the distinct
  ports reachable from X through RK_CONTAINS and RK_CONTROLS edges (a port's own value).
- Counting the <kind>s in X counts the distinct nodes of that kind reachable the same way.
- A ranking is a list of [name, total capacity] pairs, highest capacity first.
- The least-loaded packet switch of a block is its child switch with the lowest total
  capacity; ties go to fewer ports, then to the smaller name in natural order (s2c9 < s2c10).
- Every change must leave the topology valid. Removing a node also removes the nodes that
  would be left without any edge (a switch takes its ports with it). A new node gets "name",
  "type" = [kind] and the attributes its kind needs; a new port needs physical_capacity_bps.
- Draining a switch removes the switch, its ports, its chassis and its control point; the
  drained capacity is the switch's total capacity before the drain."""

CODE = f"""NetArena capacity planning (MALT). Interface: code.
Write a Python function process_graph(graph) that answers the question below.
`graph` is a networkx.DiGraph; each node is keyed by a (kind, name) tuple.
{SCHEMA}
{DEFINITIONS}
process_graph must return {{"type": "text" | "list" | "graph", "data": <the answer>,
"updated_graph": <the graph after your changes, or networkx.node_link_data of it>}}.
Numbers and names go in "data" as numbers or text, lists and rankings as Python lists; for
questions that return the updated graph, "data" is ignored. You may modify `graph` in place.
Allowed imports: {", ".join(ALLOWED_MODULES)}. Reply with one Python code block."""

COMPAT = """NetArena capacity planning (MALT). Interface: code.
Write a Python function process_graph(graph_data) that answers the question below.
`graph_data` is a networkx.DiGraph in Google's MALT model, keyed by node name. Each node
has "name" and "type", a list of its kinds (EK_JUPITER, EK_SUPERBLOCK, EK_SPINEBLOCK,
EK_AGG_BLOCK, EK_PACKET_SWITCH, EK_PORT, EK_CHASSIS, EK_CONTROL_POINT, EK_RACK,
EK_CONTROL_DOMAIN; a switch, its chassis and its control point are one node). Ports have
"physical_capacity_bps". Edges have "type" RK_CONTAINS or RK_CONTROLS. Hierarchy:
jupiter contains superblocks and spine blocks, superblocks contain aggregation blocks,
blocks contain packet switches, packet switches contain ports; racks, chassis and control
domains contain switches too. A node's total physical capacity is the sum of the
physical_capacity_bps of the ports it contains.
Match nodes by their "name" attribute. Return {"type": "text" | "list" | "table" | "graph",
"data": <the answer>, "updated_graph": nx.node_link_data(<the updated graph>)}.
`nx` (networkx), `json` and `copy` are already imported; do not import anything (lines
starting with "import" are dropped). Reply with one Python code block holding only the
function."""

TOOLS = f"""NetArena capacity planning (MALT). Interface: tools.
Answer the question below with tool calls on the live topology.
{SCHEMA}
{DEFINITIONS}
{HELP}
Answers: a number, a name, a list of names, or a list of [name, capacity] pairs; for
questions that return the updated graph, answer "done" after your changes."""

SYSTEM = """\
You are a datacenter capacity planner working on a MALT topology graph (a directed \
networkx graph of entities such as chassis, switches, ports, aggregation blocks and \
superblocks, with containment relations). Each episode asks one question: look something \
up, count or aggregate capacity, or change the topology safely. Answer it by acting \
through the env's action format below; keep the graph consistent (do not break \
containment, keep names unique, copy before you modify)."""
