"""Go's JSON syntax errors and quoting (netarena_gym.k8s.commands.go_json). Texts as Go 1.15's
encoding/json gives them (kube-apiserver 1.20.2), taken from the API server's answers."""
import json

import pytest

from netarena_gym.k8s.commands.go_json import (first_value_end, go_quote, quote_char,
                                              syntax_error)


@pytest.mark.parametrize("text, whole, stream", [
    ('{"a": [1, 2}', "invalid character '}' after array element", None),
    ('{"a" 1}', "invalid character '1' after object key", None),
    ('{"a": 1 "b": 2}', "invalid character '\"' after object key:value pair", None),
    ('{a: 1}', "invalid character 'a' looking for beginning of object key string", None),
    ('{"a": {,}}', "invalid character ',' looking for beginning of object key string", None),
    ('{"a": [1,]}', "invalid character ']' looking for beginning of value", None),
    ('{"a": fals}', "invalid character '}' in literal false (expecting 'e')", None),
    ('{"a": "\\u12"}', "invalid character '\"' in \\u hexadecimal character escape", None),
    ('{"a": 1e}', "invalid character '}' in exponent of numeric literal", None),
    ('{"a": 01}', "invalid character '1' after object key:value pair", None),
    ('{"a": 1', "unexpected end of JSON input", "unexpected EOF"),
    ('{"a": "x', "unexpected end of JSON input", "unexpected EOF"),
    ("", "unexpected end of JSON input", "EOF"),
    ('{"a": 1} x', "invalid character 'x' after top-level value", ""),
    ('{}}', "invalid character '}' after top-level value", ""),
])
def test_syntax_errors_in_go_words(text, whole, stream):
    """The whole input (json.Unmarshal) or its first value (json.Decoder); ``None`` in the
    table: the same error both ways, ``""``: the stream reads no error."""
    assert syntax_error(text) == whole
    assert syntax_error(text, stream=True) == (whole if stream is None else stream or None)


def test_valid_json_has_no_error_and_python_reads_it_the_same():
    text = ' {"a": [[], {}, {"b": [1, -0.5e+3, 0, 1E2, true, false, null, "\\u00e9\\n\\/"]}]} '
    assert syntax_error(text) is None and syntax_error(text, stream=True) is None
    assert json.loads(text)["a"][2]["b"][-1] == "é\n/"


def test_what_python_takes_and_go_refuses():
    for text in ('{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}', "[1.]", "[.5]", "[+1]"):
        json.loads(text.replace("[1.]", "[1.0]").replace("[.5]", "[0.5]").replace("[+1]", "[1]"))
        assert syntax_error(text) is not None


def test_a_stream_stops_after_its_first_value():
    assert first_value_end('{"a": 1}} x') == 8
    assert first_value_end('  {"é": "ü"} {') == 12  # characters, not bytes


def test_nesting_has_go_s_limit_and_no_recursion():
    assert syntax_error("[" * 10_001) == "invalid character '[' exceeded max depth"
    assert syntax_error("[" * 10_000 + "]" * 10_000) is None
    assert syntax_error('{"a":' * 9_000 + "1" + "}" * 9_000) is None


def test_characters_quoted_as_go_quotes_them():
    assert quote_char(ord("'")) == "'\\''"
    assert quote_char(ord('"')) == "'\"'"
    assert quote_char(9) == "'\\t'" and quote_char(1) == "'\\x01'"
    assert quote_char(0xC3) == "'Ã'"  # one byte of UTF-8 "é", read as a rune
    assert quote_char(0x85) == "'\\u0085'"
    assert go_quote('a"b\\c\nd\x7fé\u00a0\U0001F600') == 'a\\"b\\\\c\\nd\\x7fé\\u00a0😀'
