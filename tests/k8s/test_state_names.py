"""netarena_gym.k8s.state_names: apimachinery's name and label rules as Go applies them."""
import pytest

from netarena_gym.k8s.state_names import (
    dns1123_subdomain_errors, label_value_errors, port_name_errors, qualified_name_errors)


# Go's regexp "$" is the end of the text; Python's also matches before a final newline
@pytest.mark.parametrize("check, value", [
    (label_value_errors, "frontend\n"), (qualified_name_errors, "app\n"),
    (qualified_name_errors, "example.com\n/app"), (dns1123_subdomain_errors, "frontend\n"),
    (port_name_errors, "http\n")])
def test_a_final_newline_is_not_allowed(check, value):
    assert check(value)
    assert not check(value.rstrip("\n").replace("\n", ""))


def test_lengths_are_go_bytes_not_characters():
    # len() of a Go string counts UTF-8 bytes: 32 two-byte characters are 64 bytes
    assert "must be no more than 63 characters" in label_value_errors("é" * 32)
    assert "name part must be no more than 63 characters" in qualified_name_errors("é" * 32)
    assert "must be no more than 15 characters" in port_name_errors("é" * 8)
    assert label_value_errors("a" * 63) == []
