"""kubectl's JSONPath template dialect (netarena_gym.k8s.commands.jsonpath): the outputs and
error texts of client-go's jsonpath as kubectl 1.32 prints them (checked against the real
kubectl in tests/k8s/test_kubectl_reads.py)."""
import re

import pytest

from netarena_gym.k8s.commands import jsonpath


def test_jsonpath_dialect():
    data = {"items": [{"n": "a", "v": 1, "m": {"k": "x"}}, {"n": "b", "v": 2}, {"n": "c", "v": 3}]}
    assert jsonpath.render("{.items[*].n}", data) == "a b c"
    assert jsonpath.render('{range .items[*]}{.n}={.v}{"\\n"}{end}', data) == "a=1\nb=2\nc=3\n"
    assert jsonpath.render('{.items[?(@.v>=2)].n}', data) == "b c"
    assert jsonpath.render('{.items[?(@.n=="a")].m}', data) == '{"k":"x"}'
    assert jsonpath.render("{.items[?(@.m)].n}", data) == "a"
    assert jsonpath.render("{.items[-1:].n} {.items[0].nosuch}", data) == "c "
    assert jsonpath.render("{..k}", data) == "x"
    assert jsonpath.render("{.items[0,2].n}", data) == "a c"
    assert jsonpath.render("x{.items[1]['n']}y", data) == "xby"
    for bad, msg in (("{.items[", "unterminated array"), ("{.a", "unclosed action"),
                     ("{.items[x]}", "invalid array index x")):
        with pytest.raises(jsonpath.JSONPathError, match=msg):
            jsonpath.parse(bad)
    for bad, msg in (("{.items[5]}", "array index out of bounds: index 5, length 3"),
                     ('{.items[?(@.v=="1")].n}', "incompatible types for comparison"),
                     ("{.items[0].n[0]}", "string is not array or slice"),
                     ("{.items[?(@.v==x)].n}", "unrecognized identifier x"),
                     ("{.items[0].n}{end}", "not in range, nothing to end")):
        with pytest.raises(jsonpath.JSONPathError, match=re.escape(msg)):
            jsonpath.render(bad, data)
    assert jsonpath.render('{.items[?(@.n<"b")].n}', data) == "a"
    assert jsonpath.render('{.a}', {"a": "<&>"}) == "<&>" and jsonpath.render('{.a}', {"a": ["<"]}) == '["\\u003c"]'


def test_custom_columns_cells_are_go_values():
    cols = jsonpath.parse_columns("N:.n,M:.m,L:{.l[*]},X:x")
    out = jsonpath.custom_columns(cols, [{"n": "a", "m": {"k": "v", "a": 1}, "l": [1, 2]}, {"n": "b"}])
    assert out == ("N   M              L        X\n"
                   "a   map[a:1 k:v]   1,2      <none>\n"
                   "b   <none>         <none>   <none>\n")
    with pytest.raises(jsonpath.JSONPathError, match="expected <header>:<json-path-expr>"):
        jsonpath.parse_columns("NAME")
