"""Reading the text observations the envs write (for scripted agents such as the experts):
the output of the last command, between ``\\nOutput:\\n`` and the first trailer that
follows it."""
from __future__ import annotations

OUTPUT_HEADER = "\nOutput:\n"


def last_output(observation: str, trailers: tuple[str, ...] = ("\n\nSteps left:",)) -> str:
    """The last command's output in ``observation`` ('' when there is none). ``trailers``
    are the sections an env writes after the output (the earliest one found ends it)."""
    i = observation.rfind(OUTPUT_HEADER)
    if i < 0:
        return ""
    body = observation[i + len(OUTPUT_HEADER):]
    ends = [j for j in (body.rfind(t) for t in trailers) if j >= 0]
    return body[:min(ends)] if ends else body
