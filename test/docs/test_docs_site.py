"""The docs site builds: `mkdocs build --strict` on mkdocs.yml, offline, once per session.

mkdocs.yml's `validation` turns a link to a missing page, picture or anchor into a warning, and strict mode turns
every warning into a failed build; the second test shows, on a two-page site with the same settings, that a broken
link and a broken anchor do fail it. mkdocs and mkdocs-material are test tools (requirements/docs.txt, installed by
scripts/setup.sh), not package dependencies: without them the tests skip, saying so, except under CI=true, where
the README's test command must have installed them. mkdocs runs in a subprocess (no import here), with every proxy
pointed at a closed port, so a build that reached for the network would fail.
"""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "mkdocs.yml"
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
           "https_proxy": "http://127.0.0.1:9", "NO_PROXY": "", "no_proxy": "", "NO_MKDOCS_2_WARNING": "1"}


def need_mkdocs() -> None:
    missing = [name for name in ("mkdocs", "material") if importlib.util.find_spec(name) is None]
    if not missing:
        return
    reason = f"needs {' and '.join(missing)} (pip install -r requirements/docs.txt)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI=true: the README's test command installs it)", pytrace=False)
    pytest.skip(reason)


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    # no --quiet: it hides the warnings, and then --strict has nothing to count
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **OFFLINE})


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    need_mkdocs()
    built = tmp_path_factory.mktemp("site")
    result = mkdocs_build(CONFIG, built)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}{result.stderr}"
    return built


def nav_pages(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return [page for item in nav for page in nav_pages(item)]


def test_the_site_builds_strictly_with_every_page_in_the_nav_and_every_picture(site):
    config = yaml.safe_load(CONFIG.read_text())
    pages = nav_pages(config["nav"])
    assert sorted(pages) == sorted(p.name for p in (REPO / "docs").glob("*.md")), "a page is missing from the nav"
    for page in pages:
        html = site / ("index.html" if page == "index.md" else f"{page.removesuffix('.md')}/index.html")
        assert html.is_file(), f"{page} was not rendered"
    for picture in (REPO / "docs").glob("*.png"):
        assert (site / picture.name).is_file(), f"{picture.name} is not in the site"
    assert "https://fonts.googleapis.com" not in (site / "index.html").read_text(), "the site must work offline"


def test_a_broken_link_or_anchor_fails_the_build(tmp_path):
    need_mkdocs()
    config = yaml.safe_load(CONFIG.read_text())
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[there](other.md#a-heading)\n")
    (docs / "other.md").write_text("# Other\n\n## A heading\n")
    small = {key: config[key] for key in ("site_name", "theme", "markdown_extensions", "validation")}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump({**small, "docs_dir": "docs"}))
    assert mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site").returncode == 0      # the control: it builds
    broken = ("missing.md", "other.md#no-such-heading", "missing.png")
    (docs / "index.md").write_text(f"# Home\n\n[a]({broken[0]}) [b]({broken[1]}) ![c]({broken[2]})\n")
    result = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0, f"broken links did not fail the build:\n{result.stderr}"
    for link in broken:
        assert f"'{link.split('#')[0]}" in result.stderr and link.split("#")[-1] in result.stderr, result.stderr
