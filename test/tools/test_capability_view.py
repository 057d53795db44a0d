"""capability_view: writes a PNG and an STL, prints the measures, refuses bad input with a reason."""
import numpy as np

from robokin_ros.tools import capability_view as view


def test_arm_polyline_ends_at_the_tool(panda):
    q = panda.home()
    points = view.arm_points(panda, q)
    np.testing.assert_allclose(points[0], 0.0)
    np.testing.assert_allclose(points[-1], panda.fk(q).translation, atol=1e-12)
    assert len(points) >= panda.n


def test_cli_writes_png_and_stl(tmp_path, capsys):
    png, stl = tmp_path / "cap.png", tmp_path / "cap.stl"
    code = view.main(["--robot", "panda", "--q", "0,-0.785,0,-2.356,0,1.571,0.785", "--out", str(png),
                      "--views", "iso,top", "--stl", str(stl)])
    out = capsys.readouterr().out
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and stl.stat().st_size > 84
    assert "force semi-axes, torque-weighted" in out and "yoshikawa" in out and str(png) in out


def test_cli_names_bad_input(tmp_path, capsys):
    assert view.main(["--views", "iso,bottom", "--out", str(tmp_path / "x.png")]) == 2
    assert "unknown views ['bottom']" in capsys.readouterr().err
    assert view.main(["--q", "0,1", "--out", str(tmp_path / "x.png")]) == 2
    assert "7 entries" in capsys.readouterr().err
    assert view.main(["--pose", "relaxed", "--out", str(tmp_path / "x.png")]) == 2
    assert "unknown pose 'relaxed'" in capsys.readouterr().err
