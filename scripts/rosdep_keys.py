#!/usr/bin/env python3
"""Record where ros/rosdistro defines every dependency key of package.xml and robokin_interfaces/package.xml.

    python3 scripts/rosdep_keys.py /path/to/rosdistro            # a checkout or a bare git dir (HEAD)
    python3 scripts/rosdep_keys.py /path/to/rosdistro.git --rev <commit> --out test/data/rosdep_keys.yaml

A key resolves for a distro when the distro's distribution.yaml releases a package of that name (with a release
version), or when rosdep/base.yaml or rosdep/python.yaml has a rule for the distro's Ubuntu release (noble for
Jazzy and Kilted). Keys that resolve nowhere are written with `null`, so test/test_dependencies.py names them.
The output is what that test reads; regenerate it whenever a dependency is added.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
MANIFESTS = ("package.xml", "robokin_interfaces/package.xml")
DISTROS = {"jazzy": "noble", "kilted": "noble"}       # distro -> the Ubuntu release it targets
RULE_FILES = ("rosdep/base.yaml", "rosdep/python.yaml")


class _PlainDumper(yaml.SafeDumper):
    """No YAML anchors: every entry reads on its own."""

    def ignore_aliases(self, data) -> bool:
        return True


class Rosdistro:
    """Read files of a rosdistro checkout, or of a bare git directory at one revision."""

    def __init__(self, path: Path, rev: str) -> None:
        self.path = path
        self.work_tree = (path / "rosdep").is_dir()
        git = ["git", "-C", str(path)]
        self.commit = subprocess.run([*git, "rev-parse", "HEAD" if self.work_tree else rev], check=True,
                                     capture_output=True, text=True).stdout.strip()
        self._git = git

    def load(self, name: str) -> dict:
        if self.work_tree:
            text = (self.path / name).read_text()
        else:
            text = subprocess.run([*self._git, "show", f"{self.commit}:{name}"], check=True, capture_output=True,
                                  text=True).stdout
        return yaml.safe_load(text)


def manifest_keys() -> list[str]:
    keys = set()
    for manifest in MANIFESTS:
        root = ET.parse(REPO / manifest).getroot()
        keys |= {element.text.strip() for element in root if element.tag.endswith("depend")}
    own = {ET.parse(REPO / manifest).getroot().findtext("name") for manifest in MANIFESTS}
    return sorted(keys - own)


def released_packages(distribution: dict) -> dict[str, dict]:
    """package name -> {repository, version} for every released package of a distribution.yaml."""
    packages = {}
    for repo_name, repo in distribution["repositories"].items():
        release = repo.get("release") or {}
        if not release.get("version"):
            continue
        for package in release.get("packages", [repo_name]):
            packages[package] = {"repository": repo_name, "version": release["version"]}
    return packages


def ubuntu_rule(rule: dict | None, codename: str):
    """What a rosdep rule installs on Ubuntu `codename` (a list of apt names or {pip: [...]}); None if nothing."""
    ubuntu = (rule or {}).get("ubuntu")
    if isinstance(ubuntu, dict) and not {"pip", "apt"} & set(ubuntu):
        ubuntu = ubuntu.get(codename, ubuntu.get("*"))
    if isinstance(ubuntu, list):
        return ubuntu or None
    if isinstance(ubuntu, dict):
        for installer in ("apt", "pip"):
            if installer in ubuntu:
                packages = ubuntu[installer].get("packages") if isinstance(ubuntu[installer], dict) else None
                return {installer: packages} if packages else None
    return None


def resolve(keys: list[str], rosdistro: Rosdistro) -> dict:
    rules = [(name, rosdistro.load(name)) for name in RULE_FILES]
    found: dict[str, dict] = {key: {} for key in keys}
    for distro, codename in DISTROS.items():
        packages = released_packages(rosdistro.load(f"{distro}/distribution.yaml"))
        for key in keys:
            entry = None
            if key in packages:
                entry = {"source": f"{distro}/distribution.yaml", **packages[key]}
            else:
                for name, content in rules:
                    installs = ubuntu_rule(content.get(key), codename)
                    if installs:
                        entry = {"source": name, f"ubuntu_{codename}": installs}
                        break
            found[key][distro] = entry
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rosdistro", type=Path, help="a ros/rosdistro checkout or bare git directory")
    parser.add_argument("--rev", default="HEAD", help="revision to read from a bare git directory")
    parser.add_argument("--out", type=Path, default=REPO / "test" / "data" / "rosdep_keys.yaml")
    args = parser.parse_args(argv)
    rosdistro = Rosdistro(args.rosdistro, args.rev)
    document = {"rosdistro_commit": rosdistro.commit, "distros": DISTROS,
                "keys": resolve(manifest_keys(), rosdistro)}
    header = ("# Where ros/rosdistro defines each dependency key of this repository's package.xml files.\n"
              "# Generated by scripts/rosdep_keys.py (see test/data/README.md); do not edit by hand.\n")
    body = yaml.dump(document, Dumper=_PlainDumper, sort_keys=False, default_flow_style=None, width=120)
    args.out.write_text(header + body)
    missing = [key for key, per_distro in document["keys"].items() if not all(per_distro.values())]
    print(f"{args.out}: {len(document['keys'])} keys at rosdistro {rosdistro.commit[:12]}"
          + (f"; unresolved: {missing}" if missing else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
