"""The loopback API server's launcher (`netarena_gym.k8s.backends.apiserver`): what it may
replace on disk. The binaries are stand-ins (`true`), so these run anywhere."""
import shutil
from pathlib import Path

import pytest

from netarena_gym.k8s.backends import apiserver


@pytest.fixture
def stand_in_binaries(monkeypatch):
    true = shutil.which("true")
    monkeypatch.setattr(apiserver, "apiserver_binary", lambda build=False: Path(true))
    monkeypatch.setattr(apiserver.shutil, "which", lambda name: true)


def test_start_refuses_a_folder_it_did_not_make(stand_in_binaries, tmp_path, capsys):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="not a state folder of this server"):
        apiserver.Server(d).start()
    assert (d / "notes.txt").read_text() == "keep me" and sorted(p.name for p in d.iterdir()) == ["notes.txt"]
    assert apiserver.main(["start", "--dir", str(d)]) == 1
    assert "not a state folder" in capsys.readouterr().err
    assert (d / "notes.txt").read_text() == "keep me"


def test_start_replaces_its_own_state_folder_and_uses_an_empty_one(stand_in_binaries, tmp_path):
    d = tmp_path / "state"
    d.mkdir()
    (d / apiserver.MARKER).write_text("")
    (d / "etcd.log").write_text("an earlier start's")
    with pytest.raises(RuntimeError, match="etcd"):  # the stand-in etcd exits at once
        apiserver.Server(d).start(timeout=5)
    assert (d / apiserver.MARKER).is_file() and (d / "etcd.log").read_text() != "an earlier start's"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RuntimeError, match="etcd"):
        apiserver.Server(empty).start(timeout=5)
    assert (empty / apiserver.MARKER).is_file()


def test_a_state_folder_of_a_version_before_the_marker_is_still_replaced(stand_in_binaries, tmp_path):
    d = tmp_path / "old"
    (d / "certs").mkdir(parents=True)
    for name in ("tokens.csv", "sa.key", "etcd.log"):
        (d / name).write_text("old")
    with pytest.raises(RuntimeError, match="etcd"):
        apiserver.Server(d).start(timeout=5)
    assert (d / apiserver.MARKER).is_file() and (d / "tokens.csv").read_text() != "old"
