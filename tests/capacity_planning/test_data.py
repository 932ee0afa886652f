"""Google's MALT example ships inside the package, with its licence and notice."""
from netarena_gym.capacity_planning.data import example_path
from netarena_gym.capacity_planning.topology import TopologySpec, generate


def test_example_ships_with_its_licence_and_notice():
    path = example_path()
    assert path.is_file()
    assert "Apache License" in (path.parent / "LICENSE").read_text(encoding="utf-8")
    assert "google/malt-example-models" in (path.parent / "NOTICE").read_text(encoding="utf-8")


def test_shipped_example_is_googles_unmodified_file():
    # generate(TopologySpec()) is Google's model byte for byte; NetArena's five edits are not in it
    assert generate(TopologySpec()).to_textproto() == example_path().read_text(encoding="utf-8")
