"""The apimachinery rules for names and label values (``k8s.io/apimachinery/pkg/util/validation``)
that the API server and kubectl apply: qualified names, label values, RFC 1123 subdomains,
port names, with their messages."""
from __future__ import annotations

import re
from functools import lru_cache

# ------------------------------------------------------------------ apimachinery rules
_QNAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
# matched with fullmatch: Go's ``$`` is the end of the text, Python's also matches before a
# final newline ("frontend\n" is not a label value)
_QNAME_RX = re.compile(_QNAME)
_LABEL_VALUE_RX = re.compile("(" + _QNAME + ")?")
_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUB = _DNS1123_LABEL + "(\\." + _DNS1123_LABEL + ")*"
_DNS1123_SUB_RX = re.compile(_DNS1123_SUB)
_PORT_NAME_CHARS = re.compile("[-a-z0-9]+")
_HAS_LETTER = re.compile("[a-z]")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    ex = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {ex}regex used for validation is '{fmt}')"


_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and "
              "end with an alphanumeric character")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an "
                    "alphanumeric character")
_DNS_SUB_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character")


def _size(value: str) -> int:
    """Go's ``len`` of a string: its bytes in UTF-8, not its characters."""
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


def dns1123_subdomain_errors(value: str) -> list[str]:
    errs = []
    if _size(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUB_RX.fullmatch(value):
        errs.append(_regex_error(_DNS_SUB_MSG, _DNS1123_SUB, "example.com"))
    return errs


def qualified_name_errors(value: str) -> list[str]:
    return list(_qualified_name_errors(value))


@lru_cache(maxsize=4096)
def _qualified_name_errors(value: str) -> tuple[str, ...]:
    errs = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    else:
        return ("a qualified name " + _regex_error(_QNAME_MSG, _QNAME, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",)
    if not name:
        errs.append("name part must be non-empty")
    elif _size(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QNAME_RX.fullmatch(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME, "MyName", "my.name", "123-abc"))
    return tuple(errs)


def label_value_errors(value: str) -> list[str]:
    return list(_label_value_errors(value))


@lru_cache(maxsize=4096)
def _label_value_errors(value: str) -> tuple[str, ...]:
    errs = []
    if _size(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RX.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, "(" + _QNAME + ")?", "MyValue", "my_value", "12345"))
    return tuple(errs)


def port_name_errors(port: str) -> list[str]:
    errs = []
    if _size(port) > 15:
        errs.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.fullmatch(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _HAS_LETTER.search(port):
        errs.append("must contain at least one letter or number (a-z, 0-9)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs
