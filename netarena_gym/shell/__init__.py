"""The shell front end every task shares: the strict POSIX-shell parser
(:mod:`~netarena_gym.shell.parser`), the read-only text filters agents pipe into
(:mod:`~netarena_gym.shell.filters`), and the result type every command returns."""
from netarena_gym.shell.parser import (
    ERROR, INVALID, OK, REFUSED, TIMEOUT, CommandLine, CommandResult, Pipeline, ShellSyntaxError,
    SimpleCommand, parse_command_line, run_command_line)

__all__ = ["ERROR", "INVALID", "OK", "REFUSED", "TIMEOUT", "CommandLine", "CommandResult",
           "Pipeline", "ShellSyntaxError", "SimpleCommand", "parse_command_line",
           "run_command_line"]
