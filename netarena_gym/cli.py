"""``netarena-gym``: the command-line entry point.

    netarena-gym eval --env NetArena-Routing-v0 --agent expert --level 1 2 3 --episodes 1000 \\
        --seed 1 --workers 2 --out runs/expert
    netarena-gym eval --env NetArena-Routing-v0 --agent llm --model qwen2.5-7b-instruct \\
        --base-url http://127.0.0.1:8000/v1 --prompt cot --out runs/qwen
    netarena-gym report runs/expert runs/qwen --out report/
    netarena-gym generate --env NetArena-Routing-v0 --level 1 --episodes 500 --out data/
    netarena-gym serve-a2a --port 9999
    netarena-gym train ppo --env NetArena-Routing-v0 --level 1 --out runs/ppo-l1
    netarena-gym train sft --preset cpu-smoke --model tiny --out runs/sft-smoke
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import netarena_gym
from netarena_gym.compat import replay as compat_replay
from netarena_gym.eval.spec import parse_level
from netarena_gym.serve import cli as serve_cli

PROMPTS = ("zeroshot", "fewshot", "cot", "fewshot_cot")


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
                   help="one or more levels: 1 2 3 compat (default 1)")
    p.add_argument("--episodes", type=int, default=100, help="episodes per level")
    p.add_argument("--seed", type=int, default=0, help="episode i uses seed + i")
    p.add_argument("--backend", default="sim")
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--env-option", action="append", type=_kv, default=[], metavar="KEY=VALUE",
                   help="extra gym.make keyword (VALUE parsed as JSON when it can be)")


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
    g.add_argument("--prompt", default="zeroshot", choices=PROMPTS)
    g.add_argument("--history", type=int, default=6,
                   help="past turns (observation + reply) kept in the conversation")
    g.add_argument("--temperature", type=float, default=0.0)
    g.add_argument("--max-tokens", type=int, default=512)
    g.add_argument("--timeout", type=float, default=60.0, help="seconds per model call")
    g.add_argument("--max-retries", type=int, default=3,
                   help="retries of a failed call (timeouts, 429, 5xx) with backoff")
    g = p.add_argument_group("A2A agent (--agent a2a)")
    g.add_argument("--a2a-url", default=None, help="the agent's A2A base URL")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="netarena-gym", description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=netarena_gym.__version__)
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("eval", help="run episodes, write records and print a summary")
    _add_env_args(e)
    e.add_argument("--agent", default="expert",
                   help="expert | random | llm | hf | a2a | module:Class")
    e.add_argument("--interface", default="text",
                   help="text (default), discrete, or another the env offers (e.g. code)")
    e.add_argument("--format", default="table", choices=("table", "json"))
    e.add_argument("--out", default=None,
                   help="run directory: episodes.jsonl (one record per episode), summary.json, "
                        "run.json; an interrupted run resumes there (a path ending in .jsonl "
                        "is the records file itself)")
    e.add_argument("--overwrite", action="store_true", help="discard records already in --out")
    e.add_argument("--workers", type=int, default=1, help="parallel local processes")
    e.add_argument("--ray", action="store_true", help="run episodes as tasks on a local Ray")
    e.add_argument("--ray-address", default=None,
                   help="join a Ray cluster (\"auto\" or ray://HOST:10001)")
    e.add_argument("--quiet", action="store_true", help="no progress line")
    _add_llm_args(e)

    r = sub.add_parser("report", help="compare runs: PNG figures and an HTML page")
    r.add_argument("runs", nargs="+", help="run directories written by eval --out")
    r.add_argument("--out", default="report", help="output directory")
    r.add_argument("--label", action="append", default=[],
                   help="a name per run, in order (default: agent/model and directory)")
    r.add_argument("--no-figures", action="store_true",
                   help="tables only (no matplotlib needed)")
    r.add_argument("--subsamples", type=int, default=200,
                   help="random subsamples per N in the overlap analysis")

    g = sub.add_parser("generate", help="export seeded query sets and expert demonstrations")
    _add_env_args(g)
    g.add_argument("--out", required=True, help="output directory")
    g.add_argument("--interface", default="text", help="a text interface of the env")
    g.add_argument("--prompt", default="zeroshot", choices=PROMPTS,
                   help="prompt style of the demonstrations' system message")
    g.add_argument("--history", type=int, default=6)
    g.add_argument("--no-demos", action="store_true", help="queries only")
    g.add_argument("--no-hf", action="store_true",
                   help="JSONL only (no Hugging Face datasets copy)")

    s = sub.add_parser("serve-a2a", help="serve the NetArena evaluator (or an agent) over A2A")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=9999)
    s.add_argument("--card-url", default=None, help="public URL in the agent card")
    s.add_argument("--agent", default=None,
                   help="serve this agent (expert | random | llm | module:Class) instead of "
                        "the evaluator, for an env given with --env")
    s.add_argument("--env", default=None, choices=sorted(netarena_gym.ENV_IDS))
    s.add_argument("--out", default=None, help="evaluator: directory for run records")
    _add_llm_args(s)

    serve_cli.add_arguments(sub.add_parser("serve", help="serve one env over OpenEnv or MCP"))
    from netarena_gym.train.cli import TRAINERS, trainer_module
    t = sub.add_parser("train", help="train agents: ppo | grpo | sft | cross-level "
                                     "(see docs/training.md)")
    tsub = t.add_subparsers(dest="trainer", required=True, metavar="TRAINER")
    for name in TRAINERS:
        mod = trainer_module(name)
        doc = (mod.__doc__ or "").strip()
        tsub.add_parser(name, parents=[mod.build_parser(add_help=False)],
                        help=doc.split("\n\n")[0].replace("\n", " "), description=doc,
                        formatter_class=mod.HelpFormatter)
    compat_replay.add_arguments(sub.add_parser("compat-replay", help=compat_replay.HELP))
    return p


# --------------------------------------------------------------------- eval
def llm_options(a) -> dict:
    opts = {"provider": a.provider, "prompt": a.prompt, "history": a.history,
            "temperature": a.temperature, "max_tokens": a.max_tokens, "timeout": a.timeout,
            "max_retries": a.max_retries}
    model = a.model or os.environ.get("NETARENA_MODEL")
    if model:
        opts["model"] = model
    if a.base_url:
        opts["base_url"] = a.base_url
    if a.api_key:
        opts["api_key"] = a.api_key
    if getattr(a, "a2a_url", None):
        opts["url"] = a.a2a_url
    return opts


def _agent_options(a) -> dict:
    if a.agent == "llm":
        opts = llm_options(a)
        if opts["provider"] == "openai":
            from netarena_gym.llm.client import resolve_settings

            resolve_settings(opts)  # fail fast: no model or base URL
        elif "model" not in opts:
            raise ValueError("--provider transformers needs --model PATH")
        return opts
    if a.agent == "hf":
        model = a.model or os.environ.get("NETARENA_MODEL")
        if not model:
            raise ValueError("--agent hf needs --model PATH")
        return {"model": model, "max_tokens": a.max_tokens, "temperature": a.temperature}
    if a.agent == "a2a":
        if not a.a2a_url:
            raise ValueError("--agent a2a needs --a2a-url URL")
        return {"url": a.a2a_url, "timeout": a.timeout, "prompt": a.prompt}
    return {}


def cmd_eval(a) -> int:
    from netarena_gym.agents.factory import check_agent_spec
    from netarena_gym.eval.run import evaluate
    from netarena_gym.eval.spec import EvalSpec
    from netarena_gym.eval.store import RunMismatch

    if a.episodes < 1:
        return _fail("--episodes must be >= 1")
    if a.workers < 1:
        return _fail("--workers must be >= 1")
    try:
        check_agent_spec(a.agent)
        spec = EvalSpec(env=a.env, levels=tuple(a.levels or (1,)), episodes=a.episodes,
                        seed=a.seed, agent=a.agent, agent_options=_agent_options(a),
                        backend=a.backend, interface=a.interface, max_steps=a.max_steps,
                        env_options=dict(a.env_option))
        _check_env(spec)
        summary = evaluate(spec, out=a.out, workers=a.workers, ray=a.ray,
                           ray_address=a.ray_address, overwrite=a.overwrite,
                           progress=False if a.quiet else None)
    except (ValueError, RunMismatch, RuntimeError, ImportError) as e:
        return _fail(str(e))
    except KeyboardInterrupt:
        print("\nnetarena-gym: interrupted; rerun the same command to resume"
              + (f" in {a.out}" if a.out else ""), file=sys.stderr)
        return 130
    if a.format == "json":
        print(json.dumps(summary))
    else:
        print_table(summary)
    return 0


def _check_env(spec) -> None:
    """Build each level's env once here so a bad level, backend or option fails with one
    clear message instead of once per worker."""
    import gymnasium as gym

    for lv in spec.levels:
        env = gym.make(spec.env, **spec.env_kwargs(lv))
        try:
            if (spec.agent in ("expert", "llm", "hf", "a2a")
                    and env.unwrapped.interface == "discrete"):
                raise ValueError(f"the {spec.agent} agent acts on text observations; use "
                                 "--interface text")
        finally:
            env.close()


def _fail(msg: str) -> int:
    print(f"netarena-gym: {msg}", file=sys.stderr)
    return 2


def _pct(x: float) -> str:
    return f"{100 * x:6.2f}%"


def print_table(s: dict) -> None:
    print(f"{s['env']}  level={s['level']}  backend={s['backend']}  agent={s['agent']}  "
          f"episodes={s['episodes']}")
    for name, key in (("correctness", "correctness"), ("safety", "safety"),
                      ("safety_compat", "safety_compat")):
        lo, hi = s[f"{key}_ci95"]
        print(f"{name:13s} {_pct(s[key])}  [{_pct(lo)}, {_pct(hi)}]")
    print(f"mean steps    {s['mean_steps']:.2f}   mean agent s {s['mean_agent_seconds']:.5f}")
    up = s["upstream"]
    print(f"upstream      correctness {_pct(up['avg_correctness'])}  safety "
          f"{_pct(up['avg_safety'])}  iterations {up['avg_iterations']:.2f}  "
          f"score {up['score']:.2f}")
    if "llm" in s:
        m = s["llm"]
        print(f"llm           calls {m['calls']}  mean latency {m['mean_latency_s']:.3f}s  "
              f"tokens {m['prompt_tokens']}+{m['completion_tokens']}  "
              f"unparsed {m['unparsed_replies']}  failed {m['failed_calls']}")
    if s.get("episodes_with_errors"):
        print(f"episodes with errors: {s['episodes_with_errors']}")
    print()
    w = max([8] + [len(k) for b in s["by_level"].values() for k in b["by_category"]])
    print(f"{'level':7s} {'category':{w}s} {'n':>5s} {'correct':>8s} {'safe':>8s} {'steps':>6s}")
    for lv, b in s["by_level"].items():
        for k, c in list(b["by_category"].items()) + [("(all)", b)]:
            print(f"{lv:7s} {k:{w}s} {c['episodes']:5d} {_pct(c['correctness'])} "
                  f"{_pct(c['safety'])} {c['mean_steps']:6.2f}")


# ------------------------------------------------------------------- report
def cmd_report(a) -> int:
    from netarena_gym.errors import DependencyNotInstalled
    from netarena_gym.eval.report import build_report

    try:
        res = build_report(a.runs, a.out, labels=a.label or None, figures=not a.no_figures,
                           subsamples=a.subsamples)
    except DependencyNotInstalled as e:
        return _fail(str(e))
    except (OSError, ValueError) as e:
        return _fail(str(e))
    print(f"wrote {res['html']}")
    for f in res["figures"]:
        print(f"wrote {f}")
    return 0


# ----------------------------------------------------------------- generate
def cmd_generate(a) -> int:
    from netarena_gym.eval.generate import generate

    try:
        res = generate(a.env, levels=tuple(a.levels or (1,)), episodes=a.episodes, seed=a.seed,
                       out=a.out, backend=a.backend, interface=a.interface,
                       max_steps=a.max_steps,
                       env_options=dict(a.env_option), demos=not a.no_demos,
                       prompt=a.prompt, history=a.history, hf=not a.no_hf)
    except (ValueError, ImportError, RuntimeError) as e:
        return _fail(str(e))
    for k, v in res.items():
        print(f"{k}: {v}")
    return 0


# ---------------------------------------------------------------- serve-a2a
def cmd_serve_a2a(a) -> int:
    try:
        from netarena_gym.a2a.server import serve_agent, serve_evaluator
    except ImportError as e:
        return _fail(f"serve-a2a needs a2a-sdk and uvicorn: pip install 'a2a-sdk[http-server]' "
                     f"uvicorn ({e})")
    if a.agent:
        if not a.env:
            return _fail("serving an agent needs --env (its prompts and actions are per env)")
        opts = llm_options(a) if a.agent == "llm" else {}
        serve_agent(a.agent, a.env, host=a.host, port=a.port, options=opts,
                    card_url=a.card_url)
    else:
        serve_evaluator(host=a.host, port=a.port, card_url=a.card_url, out=a.out)
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
                     f"'netarena-gym[train]', see docs/training.md): {e}")
    return 0


COMMANDS = {"eval": cmd_eval, "report": cmd_report, "generate": cmd_generate,
            "serve-a2a": cmd_serve_a2a, "train": cmd_train, "serve": serve_cli.main}
COMMANDS["compat-replay"] = compat_replay.run


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return COMMANDS[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
