"""The shell front end every task shares: the strict POSIX-shell parser
(:mod:`~netarena_gym.shell.parser`), the read-only text filters agents pipe into
(:mod:`~netarena_gym.shell.filters`, regexes on RE2 in :mod:`~netarena_gym.shell.regex`),
the allow-list mechanics, parse cache, refusal results and pipeline runner
(:mod:`~netarena_gym.shell.policy`), and the result type every command returns."""
from netarena_gym.shell.parser import (
    ERROR, INVALID, OK, REFUSED, TIMEOUT, CommandLine, CommandResult, Pipeline, ShellSyntaxError,
    SimpleCommand, parse_command_line, run_command_line)

__all__ = ["ERROR", "INVALID", "OK", "REFUSED", "TIMEOUT", "CommandLine", "CommandResult",
           "Pipeline", "ShellSyntaxError", "SimpleCommand", "parse_command_line",
           "run_command_line"]
