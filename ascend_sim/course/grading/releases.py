"""Lab versions: a released lab carries ``metadata.course.version``; a submission is graded against its version.

When an instructor releases a lab to learners, ``ascend-sim release LAB`` copies the template, as it is, to
``releases/<lab>@<version>.ipynb`` next to it. Learners' copies carry the version in their metadata. If the
lab is edited afterwards (an exercise added, a setup cell changed) and its version raised, a submission of an
earlier version is rebuilt from, and graded against, the release it was made from: what that version asked,
its exercises and points, with no "tampered" setup or check cells. The checks module must keep the
exercises of every released version (an exercise can be added or changed compatibly, never removed).
"""
from __future__ import annotations

import re
from pathlib import Path

from nbformat import NotebookNode

from ascend_sim.course.grading.notebook import LabTemplate, course, load_template

__all__ = ["RELEASES", "version_of", "release_path", "release", "template_for"]

RELEASES = "releases"
VERSION_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,31}$")


def version_of(nb: NotebookNode) -> str:
    """The notebook's ``metadata.course.version`` as text ('' when it has none or it is malformed)."""
    v = course(nb).get("version", "")
    text = str(v).strip() if isinstance(v, (str, int, float)) and not isinstance(v, bool) else ""
    return text if VERSION_RE.match(text) else ""


def release_path(template: LabTemplate, version: str) -> Path:
    """Where version ``version`` of ``template``'s lab is kept."""
    return template.path.parent / RELEASES / f"{template.name}@{version}.ipynb"


def release(template_path: str | Path) -> Path:
    """Keep the template as released: ``releases/<lab>@<version>.ipynb``; an existing, different copy is an error."""
    template = load_template(template_path)
    version = version_of(template.nb)
    if not version:
        raise ValueError(f"{template.path} has no metadata course.version: set one (e.g. \"1\") before releasing")
    target = release_path(template, version)
    data = template.path.read_bytes()
    if target.exists() and target.read_bytes() != data:
        raise FileExistsError(f"{target} already holds a different version {version}: raise course.version in "
                              f"{template.path.name} for the edited lab")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def template_for(template: LabTemplate, learner: NotebookNode) -> tuple[LabTemplate, list[str]]:
    """The template ``learner`` was released as, and what to tell the instructor about it."""
    theirs, ours = version_of(learner), version_of(template.nb)
    if not theirs or not ours or theirs == ours:
        return template, []
    path = release_path(template, theirs)
    if not path.is_file():
        return template, [f"this submission is version {theirs} of {template.name}, the lab is version {ours}, and "
                          f"no release {path.parent.name}/{path.name} exists: graded against version {ours} "
                          "(cells changed since are restored and reported as tampered)"]
    older = load_template(path)
    return older, [f"this submission is version {theirs} of {template.name} (the lab is now version {ours}): "
                   f"graded against what version {theirs} asked ({RELEASES}/{path.name})"]
