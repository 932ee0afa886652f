"""The ``netarena-gym`` command line: eval, report, generate, serve-a2a, train.

Every subcommand's ``--help`` shows the defaults and examples (:data:`EXAMPLES`). A bad
value is one line on stderr naming the option and the valid values, with exit status 2
(argparse's convention); no user error prints a traceback. Long commands show a ``rich``
progress bar on a terminal (:mod:`netarena_gym.eval.progress`).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys

import netarena_gym
from netarena_gym.compat import replay as compat_replay
from netarena_gym.eval.agent_options import agent_options, llm_options
from netarena_gym.eval.spec import parse_level
from netarena_gym.eval.validate import UsageError, number
from netarena_gym.serve import cli as serve_cli
from netarena_gym.train.cli.common import CliParser, HelpFormatter, examples, fail, plain

PROG = "netarena-gym"
DESCRIPTION = ("netarena-gym: evaluate, compare and train agents on the NetArena\n"
               "environments (routing, Kubernetes NetworkPolicy, capacity planning).")
PROMPTS = ("zeroshot", "fewshot", "cot", "fewshot_cot")
#: eval --agent-timeout's default, seconds: above an LLM call's own --timeout and retries
AGENT_TIMEOUT = 600.0
BY_HELP = ("rows of the table: category (the set of fault types, or the query template), "
           "type (each fault type), level; rows of fewer than 5 episodes fold into "
           "'other (n<5)'")

#: the examples each subcommand's --help ends with
EXAMPLES = {
    "eval": """
    netarena-gym eval --env NetArena-Routing-v0 --agent expert --level 1 2 3 --episodes 50 \\
        --out runs/expert
    netarena-gym eval --env NetArena-K8sPolicy-v0 --agent random --episodes 20 --by type
    netarena-gym eval --env NetArena-Routing-v0 --agent llm --model qwen2.5-7b-instruct \\
        --base-url http://127.0.0.1:8000/v1 --prompt cot --out runs/qwen
""",
    "report": """
    netarena-gym report runs/expert runs/qwen --out report
    netarena-gym report runs/expert runs/random --by type --no-figures --out report-types
""",
    "generate": """
    netarena-gym generate --env NetArena-Routing-v0 --level 1 --episodes 500 --out data
    netarena-gym generate --env NetArena-Routing-v0 --level 1 2 --format sft --out sft-data
    netarena-gym generate --env NetArena-K8sPolicy-v0 --episodes 100 --no-demos --no-hf \\
        --out queries
    netarena-gym generate --env NetArena-Routing-v0 --level 3 --episodes 5000 --yes --out big
""",
    "serve-a2a": """
    netarena-gym serve-a2a --port 9999
    netarena-gym serve-a2a --agent expert --env NetArena-Routing-v0 --port 9998
""",
    "serve": """
    netarena-gym serve --protocol openenv --env NetArena-Routing-v0 --port 8000 --max-sessions 8
    netarena-gym serve --protocol mcp --env NetArena-K8sPolicy-v0
""",
    "compat-replay": """
    netarena-gym compat-replay results.json --out replay
""",
    "train": """
    netarena-gym train ppo --env NetArena-Routing-v0 --level 1 --out runs/ppo-l1
    netarena-gym train sft --preset cpu-smoke --model tiny --out runs/sft-smoke
    netarena-gym train cross-level --method ppo --train 1 --train 1,2 --out runs/cross
""",
}


def _kv(s: str) -> tuple[str, object]:
    k, sep, v = s.partition("=")
    if not sep or not k:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {s!r}")
    try:
        return k, json.loads(v)
    except json.JSONDecodeError:
        return k, v


def _add_env_args(p: argparse.ArgumentParser, *, levels_default=None) -> None:
    p.add_argument("--env", required=True, choices=sorted(netarena_gym.ENV_IDS))
    p.add_argument("--level", "--levels", dest="levels", nargs="+", type=parse_level,
                   default=levels_default, metavar="LEVEL",
                   help="one or more levels, e.g. 1 2 3 compat (default: 1)")
    p.add_argument("--episodes", type=number(int, at_least=1), default=100,
                   help="episodes per level")
    # Gymnasium's seeding takes no negative seed
    p.add_argument("--seed", type=number(int, at_least=0), default=0,
                   help="episode i uses seed + i")
    p.add_argument("--backend", default="sim", help="sim, or the env's real backend "
                   "(mininet, kubernetes)")
    p.add_argument("--max-steps", type=number(int, at_least=1), default=None,
                   help="step budget per episode (default: the level's)")
    p.add_argument("--env-option", action="append", type=_kv, default=[], metavar="KEY=VALUE",
                   help="another option of the env's config (VALUE parsed as JSON when it "
                        "can be); an unknown key lists the valid ones")


def _add_progress_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", action="store_true",
                   help="show the progress bar even when stderr is not a terminal")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _progress(a) -> bool | None:
    return False if a.quiet else (True if a.progress else None)


def _add_llm_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("LLM agent (--agent llm)")
    g.add_argument("--provider", default="openai", choices=("openai", "transformers"),
                   help="openai: any server speaking the OpenAI chat API; transformers: a "
                        "local model directory")
    g.add_argument("--model", default=None,
                   help="model name (openai) or local path (transformers, --agent hf); env "
                        "NETARENA_MODEL")
    g.add_argument("--base-url", default=None, help="e.g. http://127.0.0.1:8000/v1; "
                   "env OPENAI_BASE_URL")
    g.add_argument("--api-key", default=None, help="env OPENAI_API_KEY")
    g.add_argument("--prompt", default="zeroshot", choices=PROMPTS, help="prompt style")
    g.add_argument("--history", type=number(int, at_least=0), default=6,
                   help="past turns (observation + reply) kept in the conversation")
    g.add_argument("--temperature", type=number(float, at_least=0), default=0.0,
                   help="sampling temperature")
    g.add_argument("--max-tokens", type=number(int, at_least=1), default=512,
                   help="tokens per reply")
    g.add_argument("--timeout", type=number(float, above=0), default=60.0,
                   help="seconds per model call")
    g.add_argument("--max-retries", type=number(int, at_least=0), default=3,
                   help="retries of a failed call (timeouts, 429, 5xx) with backoff")
    g = p.add_argument_group("A2A agent (--agent a2a)")
    g.add_argument("--a2a-url", default=None, help="the agent's A2A base URL")


def _sub(sub, name: str, help: str, **kw) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help, description=kw.pop("description", help),
                          epilog=examples(EXAMPLES.get(name)), formatter_class=HelpFormatter,
                          **kw)


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(prog=PROG, description=DESCRIPTION, formatter_class=HelpFormatter,
                  epilog="examples:\n" + "\n".join(
                      "  " + examples(EXAMPLES[c]).splitlines()[1].strip() for c in EXAMPLES)
                  + f"\n\n'{PROG} COMMAND --help' shows a command's options and examples.")
    p.add_argument("--version", action="version", version=netarena_gym.__version__,
                   help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    e = _sub(sub, "eval", "run episodes, write records and print a summary")
    _add_env_args(e)
    e.add_argument("--agent", default="expert",
                   help="expert | random | llm | hf | a2a | module:Class")
    e.add_argument("--interface", default="text",
                   help="text, discrete, or another the env offers (e.g. code)")
    e.add_argument("--format", default="table", choices=("table", "json"),
                   help="stdout: a table, or the summary as JSON")
    e.add_argument("--by", default="category", choices=("category", "type", "level"),
                   help=BY_HELP)
    e.add_argument("--out", default=None,
                   help="run directory (created if its parent exists): episodes.jsonl (one "
                        "record per episode), summary.json, run.json; an interrupted run "
                        "resumes there (a path ending in .jsonl is the records file itself)")
    e.add_argument("--overwrite", action="store_true", help="discard records already in --out")
    e.add_argument("--workers", type=number(int, at_least=1), default=None,
                   help="parallel local processes (default 1), or Ray actors with --ray or "
                        "--ray-address (default: the cluster's CPUs)")
    e.add_argument("--agent-timeout", type=number(float, at_least=0, at_most=86400),
                   default=AGENT_TIMEOUT, metavar="SECONDS",
                   help="the most one call into the agent (act, reset, its construction, "
                        "close) may take; past it the episode is recorded as timed out and "
                        "its worker process replaced; 0: no limit, and with one worker the "
                        "episodes run in this process")
    e.add_argument("--ray", action="store_true", help="run episodes as tasks on a local Ray")
    e.add_argument("--ray-address", default=None,
                   help="join a Ray cluster (\"auto\" or ray://HOST:10001)")
    _add_progress_args(e)
    _add_llm_args(e)

    r = _sub(sub, "report", "compare runs: PNG figures and an HTML page")
    r.add_argument("runs", nargs="+", help="run directories written by eval --out")
    r.add_argument("--out", default="report", help="output directory (created if its "
                   "parent exists)")
    r.add_argument("--label", action="append", default=[],
                   help="a name per run, in order (default: agent/model and directory)")
    r.add_argument("--by", default="category", choices=("category", "type", "level"),
                   help=BY_HELP)
    r.add_argument("--no-figures", action="store_true",
                   help="tables only (no matplotlib needed)")
    r.add_argument("--subsamples", type=number(int, at_least=1), default=200,
                   help="random subsamples per N in the overlap analysis")

    g = _sub(sub, "generate", "export seeded query sets and expert demonstrations")
    _add_env_args(g)
    g.add_argument("--out", required=True, help="output directory (created if its parent "
                   "exists)")
    g.add_argument("--interface", default="text", help="a text interface of the env")
    g.add_argument("--prompt", default="zeroshot", choices=PROMPTS,
                   help="prompt style of the demonstrations' system message")
    g.add_argument("--history", type=number(int, at_least=0), default=6,
                   help="past turns in each demonstration")
    g.add_argument("--no-demos", action="store_true", help="queries only")
    g.add_argument("--format", dest="demo_format", default="chat", choices=("chat", "sft"),
                   help="demos.jsonl: 'sft', one tool-calling conversation per solved episode "
                        "(what train sft trains on); 'chat', one JSON-reply chat per step")
    g.add_argument("--no-hf", action="store_true",
                   help="JSONL only (no Hugging Face datasets copy)")
    g.add_argument("--yes", action="store_true",
                   help="go ahead when the estimated output exceeds --size-limit")
    g.add_argument("--size-limit", type=number(float, at_least=0), default=100.0, metavar="MB",
                   help="ask for --yes above this estimated output size")
    _add_progress_args(g)

    s = _sub(sub, "serve-a2a", "serve the NetArena evaluator (or an agent) over A2A")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on")
    s.add_argument("--port", type=number(int, at_least=0, at_most=65535), default=9999,
                   help="port to listen on")
    s.add_argument("--card-url", default=None, help="public URL in the agent card")
    s.add_argument("--agent", default=None,
                   help="serve this agent (expert | random | llm | module:Class) instead of "
                        "the evaluator, for an env given with --env")
    s.add_argument("--env", default=None, choices=sorted(netarena_gym.ENV_IDS),
                   help="the env of the served agent")
    s.add_argument("--out", default=None, help="evaluator: directory for run records")
    s.add_argument("--allow-backend", dest="allow_backends", action="append",
                   choices=("sim", "mininet", "kubernetes"), default=None, metavar="NAME",
                   help="evaluator: a backend remote requesters may pick (repeat for more; "
                        "default: sim only). A real backend runs their agents' commands on "
                        "this machine's emulator or cluster")
    _add_llm_args(s)

    serve_cli.add_arguments(_sub(sub, "serve", "serve one env over OpenEnv or MCP"))
    from netarena_gym.train.cli import TRAINERS, trainer_module
    t = _sub(sub, "train", "train agents: ppo | grpo | sft | cross-level "
                           "(see docs/training.md)")
    tsub = t.add_subparsers(dest="trainer", required=True, metavar="TRAINER")
    for name in TRAINERS:
        mod = trainer_module(name)
        doc = (mod.__doc__ or "").strip()
        tsub.add_parser(name, parents=[mod.build_parser(add_help=False)],
                        help=plain(doc.split("\n\n")[0]).replace("\n", " "),
                        description=plain(doc), epilog=examples(doc),
                        formatter_class=HelpFormatter)
    compat_replay.add_arguments(_sub(sub, "compat-replay", compat_replay.HELP))
    return p


# --------------------------------------------------------------------- eval
def _env_checks(a) -> tuple[tuple, dict]:
    """``(levels, env options)`` of an eval or generate command, checked against the env
    (one-line UsageError naming the option and the valid values)."""
    from netarena_gym.eval.validate import check_env_options, check_levels, env_class

    levels = check_levels(a.env, a.levels or (1,))
    interfaces = tuple(env_class(a.env).interfaces)
    if a.interface not in interfaces:
        raise UsageError(f"argument --interface: invalid interface {a.interface!r} for "
                         f"{a.env}; valid: {', '.join(interfaces)}")
    return levels, check_env_options(a.env, a.env_option)


def cmd_eval(a) -> int:
    from netarena_gym.agents.factory import check_agent_spec
    from netarena_gym.eval.run import evaluate
    from netarena_gym.eval.spec import EvalSpec
    from netarena_gym.eval.store import RunMismatch, RunStore
    from netarena_gym.eval.table import format_table

    levels, env_options = _env_checks(a)
    try:
        check_agent_spec(a.agent)
    except ValueError as e:
        raise UsageError(f"argument --agent: {e}") from None
    try:
        spec = EvalSpec(env=a.env, levels=levels, episodes=a.episodes,
                        seed=a.seed, agent=a.agent, agent_options=agent_options(a),
                        backend=a.backend, interface=a.interface, max_steps=a.max_steps,
                        env_options=env_options)
        _check_env(spec)
        summary = evaluate(spec, out=a.out, workers=a.workers, ray=a.ray,
                           ray_address=a.ray_address, overwrite=a.overwrite,
                           progress=_progress(a), agent_timeout=a.agent_timeout or None)
    except (ValueError, RunMismatch, RuntimeError, ImportError, OSError, gym_error()) as e:
        return _fail(str(e), "eval")
    except ray_errors() as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        return _fail(f"Ray failed ({type(e).__name__}): {first}; the records written so far "
                     "are kept: rerun the same command to resume", "eval")
    except KeyboardInterrupt:
        print("\nnetarena-gym: interrupted; rerun the same command to resume"
              + (f" in {a.out}" if a.out else ""), file=sys.stderr)
        return 130
    if a.format == "json":
        print(json.dumps(summary))
    else:
        print(format_table(summary, a.by))
    if a.out:
        st = RunStore(a.out)
        print(f"wrote {st.records_path} ({summary['episodes']} episodes), "
              f"{st.summary_path}, {st.meta_path}", file=sys.stderr)
    return 0


def ray_errors() -> tuple:
    """Ray's error root where Ray was imported (the run used it), else nothing to catch."""
    ray_exceptions = sys.modules.get("ray.exceptions")
    return (ray_exceptions.RayError,) if ray_exceptions is not None else ()


def gym_error() -> type:
    """Gymnasium's error root (``DependencyNotInstalled`` and the env checks derive it)."""
    import gymnasium

    return gymnasium.error.Error


def _check_env(spec) -> None:
    """Build each level's env once here so a bad level, backend or option fails with one
    clear message instead of once per worker."""
    from netarena_gym.eval.validate import check_env_builds

    for lv in spec.levels:
        env = check_env_builds(spec.env, **spec.env_kwargs(lv))
        try:
            if (spec.agent in ("expert", "llm", "hf", "a2a")
                    and env.unwrapped.interface == "discrete"):
                raise UsageError(f"argument --interface: the {spec.agent} agent acts on text "
                                 "observations; use --interface text")
        finally:
            env.close()


def _fail(msg: str, command: str | None = None) -> int:
    return fail(f"{PROG} {command}" if command else PROG, msg)


# ------------------------------------------------------------------- report
def cmd_report(a) -> int:
    from netarena_gym.errors import DependencyNotInstalled
    from netarena_gym.eval.report import build_report

    try:
        res = build_report(a.runs, a.out, labels=a.label or None, figures=not a.no_figures,
                           subsamples=a.subsamples, by=a.by)
    except (DependencyNotInstalled, OSError, ValueError) as e:
        return _fail(str(e), "report")
    print(f"wrote {res['html']}")
    print(f"wrote {res['json']}")
    for f in res["figures"]:
        print(f"wrote {f}")
    return 0


# ----------------------------------------------------------------- generate
def _size_check(a):
    """The ``confirm`` of :func:`~netarena_gym.eval.generate.generate`: above
    ``--size-limit`` it asks on a terminal, and refuses elsewhere unless ``--yes``."""
    from netarena_gym.eval.validate import human_size

    def confirm(nbytes: int) -> bool:
        size = human_size(nbytes)
        if not a.quiet:
            print(f"{PROG} generate: estimated output about {size}", file=sys.stderr)
        if nbytes <= a.size_limit * 1e6 or a.yes:
            return True
        if sys.stdin.isatty() and sys.stderr.isatty():
            reply = input(f"write about {size} to {a.out}? [y/N] ")
            if reply.strip().lower() in ("y", "yes"):
                return True
        raise UsageError(f"argument --yes: the output would be about {size}, over "
                         f"--size-limit {a.size_limit:g} MB; pass --yes to write it (or use "
                         f"fewer --episodes, --no-demos, --no-hf)")
    return confirm


def cmd_generate(a) -> int:
    from netarena_gym.eval.generate import generate

    levels, env_options = _env_checks(a)
    try:
        res = generate(a.env, levels=levels, episodes=a.episodes, seed=a.seed,
                       out=a.out, backend=a.backend, interface=a.interface,
                       max_steps=a.max_steps, env_options=env_options, demos=not a.no_demos,
                       prompt=a.prompt, history=a.history, demo_format=a.demo_format,
                       hf=not a.no_hf,
                       confirm=_size_check(a), progress=_progress(a))
    except UsageError:
        raise
    except (ValueError, ImportError, RuntimeError, OSError, gym_error()) as e:
        return _fail(str(e), "generate")
    for k, v in res.items():
        print(f"{k}: {v}")
    from netarena_gym.eval.validate import human_size

    print(f"wrote {a.out} ({human_size(res['bytes'])})", file=sys.stderr)
    return 0


# ---------------------------------------------------------------- serve-a2a
def cmd_serve_a2a(a) -> int:
    try:
        from netarena_gym.a2a.server import serve_agent, serve_evaluator
    except ImportError as e:
        return _fail(f"serve-a2a needs a2a-sdk and uvicorn: pip install "
                     f"\"netarena-gym[a2a]\" ({e})", "serve-a2a")
    if a.agent:
        if not a.env:
            raise UsageError("argument --env: serving an agent needs --env (its prompts and "
                             "actions are per env)")
        if a.allow_backends:
            raise UsageError("argument --allow-backend: only the evaluator runs envs (not "
                             "with --agent)")
        opts = llm_options(a) if a.agent == "llm" else {}
        serve_agent(a.agent, a.env, host=a.host, port=a.port, options=opts,
                    card_url=a.card_url)
    else:
        serve_evaluator(host=a.host, port=a.port, card_url=a.card_url, out=a.out,
                        backends=tuple(dict.fromkeys(a.allow_backends or ("sim",))))
    return 0


# -------------------------------------------------------------------- train
def cmd_train(a) -> int:
    from netarena_gym.train.cli import trainer_module

    from gymnasium.error import DependencyNotInstalled

    args = {k: v for k, v in vars(a).items() if k not in ("command", "trainer")}
    try:
        trainer_module(a.trainer).run(argparse.Namespace(**args))
    except (ImportError, DependencyNotInstalled) as e:
        return _fail(f"train {a.trainer} needs the training libraries (pip install "
                     f"\"netarena-gym[train]\", see docs/training.md#install): {e}", "train")
    except (ValueError, FileNotFoundError) as e:
        return _fail(str(e), f"train {a.trainer}")
    return 0


COMMANDS = {"eval": cmd_eval, "report": cmd_report, "generate": cmd_generate,
            "serve-a2a": cmd_serve_a2a, "train": cmd_train, "serve": serve_cli.main}
COMMANDS["compat-replay"] = compat_replay.run


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit status (2 for a usage error, with one line on
    stderr; 0 for ``--help``; 141, as a process killed by SIGPIPE, when stdout is a pipe
    whose reader has gone)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # --help, --version, or argparse's one-line error
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    try:
        rc = COMMANDS[args.command](args)
        sys.stdout.flush()  # a closed pipe shows here, not at the interpreter's exit
        return rc
    except UsageError as e:
        return _fail(str(e), args.command)
    except BrokenPipeError:  # `eval ... | head`: the reader left; end quietly, as CLIs do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the exit's flush does not fail again
        return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
