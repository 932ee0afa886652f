"""Label selectors (``-l``) as kube-apiserver 1.20 parses and matches them
(``k8s.io/apimachinery/pkg/labels``: its lexer, its parser with one token of lookahead, its
error messages, ``NewRequirement``'s checks, and ``Requirement.Matches``). A selector the
server cannot parse is its 400, which :class:`SelectorError` carries."""
from __future__ import annotations

from netarena_gym.k8s.state_names import label_value_errors, qualified_name_errors

_TOKENS = {")": "closedpar", ",": "comma", "!": "doesnotexist", "==": "doubleequals", "=": "equals",
           ">": "gt", "in": "in", "<": "lt", "!=": "notequals", "notin": "notin", "(": "openpar"}
_SPECIAL = set("=!(),><")
_WHITE = set(" \t\r\n")
_OPS = {"equals": "=", "doubleequals": "==", "notequals": "!=", "in": "in", "notin": "notin",
        "gt": "gt", "lt": "lt", "doesnotexist": "!"}


class SelectorError(Exception):
    """A selector the server refuses (``str()``: the reason, without the server's prefix)."""


def _lex(text: str) -> list[tuple[str, str]]:
    out, i, n = [], 0, len(text)
    while True:
        while i < n and text[i] in _WHITE:
            i += 1
        if i >= n:
            out.append(("end", ""))
            return out
        if text[i] in _SPECIAL:
            buf, last = "", None
            while i < n and text[i] in _SPECIAL:
                buf += text[i]
                if buf in _TOKENS:
                    last = (_TOKENS[buf], buf)
                elif last is not None:
                    break
                i += 1
            if last is None:
                out.append(("error", f"error expected: keyword found '{buf}'"))
            else:
                out.append(last)
            continue
        j = i
        while j < n and text[j] not in _WHITE and text[j] not in _SPECIAL:
            j += 1
        word = text[i:j]
        i = j
        out.append((_TOKENS.get(word, "identifier") if word in ("in", "notin") else "identifier", word))


class _Parser:
    def __init__(self, text: str):
        self.items = _lex(text)
        self.pos = 0

    def look(self, values: bool = True):
        tok, lit = self.items[self.pos]
        if values and tok in ("in", "notin"):
            tok = "identifier"
        return tok, lit

    def take(self, values: bool = True):
        item = self.look(values)
        if self.pos < len(self.items) - 1:
            self.pos += 1
        return item

    def parse(self) -> list:
        reqs = []
        while True:
            tok, lit = self.look()
            if tok in ("identifier", "doesnotexist"):
                try:
                    reqs.append(self.requirement())
                except SelectorError as e:
                    raise SelectorError(f"unable to parse requirement: {e}") from None
                t, lit2 = self.take()
                if t == "end":
                    return reqs
                if t == "comma":
                    t2, l2 = self.look()
                    if t2 not in ("identifier", "doesnotexist"):
                        raise SelectorError(f"found '{l2}', expected: identifier after ','")
                    continue
                raise SelectorError(f"found '{lit2}', expected: ',' or 'end of string'")
            if tok == "end":
                return reqs
            raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> tuple:
        op = None
        tok, lit = self.take()
        if tok == "doesnotexist":
            op = "!"
            tok, lit = self.take()
        if tok != "identifier":
            raise SelectorError(f"found '{lit}', expected: identifier")
        key = lit
        _check_key(key)
        if self.look()[0] in ("end", "comma"):
            return _requirement(key, op or "exists", [])
        if op == "!":
            return _requirement(key, op, [])
        tok, lit = self.take(values=False)
        if tok not in _OPS or tok == "doesnotexist":
            raise SelectorError(f"found '{lit}', expected: '=', '!=', '==', 'in', notin'")
        op = _OPS[tok]
        values = self.values() if op in ("in", "notin") else self.exact_value()
        return _requirement(key, op, sorted(set(values)))

    def values(self) -> list:
        tok, lit = self.take()
        if tok != "openpar":
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.look()
        if tok in ("identifier", "comma"):
            out = self.identifiers()
            tok, lit2 = self.take()
            if tok != "closedpar":
                raise SelectorError(f"found '{lit}', expected: ')'")
            return out
        if tok == "closedpar":
            self.take()
            return [""]
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def identifiers(self) -> list:
        out: list = []
        while True:
            tok, lit = self.take()
            if tok == "identifier":
                out.append(lit)
                t2, l2 = self.look()
                if t2 == "comma":
                    continue
                if t2 == "closedpar":
                    return out
                raise SelectorError(f"found '{l2}', expected: ',' or ')'")
            if tok == "comma":
                if not out:
                    out.append("")
                t2, _ = self.look()
                if t2 == "closedpar":
                    out.append("")
                    return out
                if t2 == "comma":
                    self.take()
                    out.append("")
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> list:
        tok, lit = self.look()
        if tok in ("end", "comma"):
            return [""]
        tok, lit = self.take()
        if tok == "identifier":
            return [lit]
        raise SelectorError(f"found '{lit}', expected: identifier")


def _check_key(key: str) -> None:
    errs = qualified_name_errors(key)
    if errs:
        raise SelectorError(f'invalid label key "{key}": {"; ".join(errs)}')


def _requirement(key: str, op: str, values: list) -> tuple:
    """NewRequirement's checks."""
    if op in ("gt", "lt"):
        if len(values) != 1:
            raise SelectorError("for 'Gt', 'Lt' operators, exactly one value is required")
        try:
            int(values[0], 10)
        except ValueError:
            raise SelectorError("for 'Gt', 'Lt' operators, the value must be an integer") from None
    for v in values:
        errs = label_value_errors(v)
        if errs:
            raise SelectorError(f'invalid label value: "{v}": at key: "{key}": {"; ".join(errs)}')
    return key, op, values


def parse_label_selector(text: str) -> list:
    """[(key, op, values)], op one of = == != in notin exists ! gt lt."""
    return _Parser(text).parse()


def label_selector_matches(reqs: list, labels: dict) -> bool:
    for key, op, values in reqs:
        has = key in labels
        v = labels.get(key)
        if op in ("=", "==", "in"):
            ok = has and v in values
        elif op in ("!=", "notin"):
            ok = not has or v not in values
        elif op == "exists":
            ok = has
        elif op == "!":
            ok = not has
        else:  # gt, lt: both sides integers
            try:
                a, b = int(v, 10), int(values[0], 10)
            except (TypeError, ValueError):
                return False
            ok = a > b if op == "gt" else a < b
        if not ok:
            return False
    return True
