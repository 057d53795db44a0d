"""The `robokin` command: every subcommand is reachable with its --help, and bad input gets a message and exit 2."""
import pytest

from robokin_ros.tools.robokin_cli import SUBCOMMANDS, main


def test_top_level_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert all(name in text for name in SUBCOMMANDS)


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_each_subcommand_has_help(name, capsys):
    with pytest.raises(SystemExit) as done:
        main([name, "--help"])
    assert done.value.code == 0 and "usage: robokin " + name in capsys.readouterr().out


def test_dispatch_runs_a_subcommand_and_reports_bad_input(capsys):
    assert main(["ik", "--robot", "2r", "--l1", "1", "--l2", "1", "--pose", "1", "1"]) == 0
    assert "elbow" in capsys.readouterr().out
    assert main(["fk", "--dh", "no_such_table"]) == 2
    assert "no_such_table" in capsys.readouterr().err
