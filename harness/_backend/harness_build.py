"""A minimal PEP 517 / PEP 660 build backend using only the standard library.

It builds a pure-Python wheel of `diligence_harness` (modules and the JSON
schema), an sdist, and an editable wheel (a .pth file pointing at this
checkout). Metadata comes from pyproject.toml via tomllib.
"""

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "diligence_harness"
PACKAGE_FILES = (".py", ".json")
WHEEL_FILE = (
    b"Wheel-Version: 1.0\nGenerator: harness_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
)
WHEEL_FILE = (
    b"Wheel-Version: 1.0\nGenerator: harness_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
)


def _project() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as handle:
        return tomllib.load(handle)["project"]


def _dist_name(project: dict) -> str:
    return project["name"].replace("-", "_")


def _metadata(project: dict) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '')}",
    ]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {req}; extra == "{extra}"' for req in requirements]
    readme = os.path.join(ROOT, project.get("readme", "README.md"))
    body = ""
    if os.path.exists(readme):
        with open(readme, encoding="utf-8") as handle:
            body = handle.read()
    return "\n".join(lines) + "\nDescription-Content-Type: text/markdown\n\n" + body


def _entry_points(project: dict) -> str:
    scripts = project.get("scripts", {})
    return "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())


def _package_files() -> list[tuple[str, str]]:
    found = []
    for directory, dirnames, filenames in os.walk(os.path.join(ROOT, PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(PACKAGE_FILES):
                path = os.path.join(directory, name)
                found.append((path, os.path.relpath(path, ROOT).replace(os.sep, "/")))
    return found


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _write_wheel(directory: str, members: list[tuple[str, bytes]]) -> str:
    project = _project()
    name, version = _dist_name(project), project["version"]
    dist_info = f"{name}-{version}.dist-info"
    members = members + [
        (f"{dist_info}/METADATA", _metadata(project).encode()),
        (f"{dist_info}/WHEEL", WHEEL_FILE),
        (f"{dist_info}/entry_points.txt", _entry_points(project).encode()),
    ]
    record = [_record_line(arcname, data) for arcname, data in members]
    record.append(f"{dist_info}/RECORD,,")
    members.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for arcname, data in members:
            wheel.writestr(zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    members = []
    for path, arcname in _package_files():
        with open(path, "rb") as handle:
            members.append((arcname, handle.read()))
    return _write_wheel(wheel_directory, members)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    pth = (ROOT + "\n").encode()
    return _write_wheel(wheel_directory, [(f"_{_dist_name(_project())}.pth", pth)])


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    filename = f"{base}.tar.gz"
    paths = [p for p, _ in _package_files()]
    for extra in ("pyproject.toml", "README.md", "build_zipapp.py", "_backend/harness_build.py"):
        if os.path.exists(os.path.join(ROOT, extra)):
            paths.append(os.path.join(ROOT, extra))
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as sdist:
        for path in paths:
            sdist.add(path, arcname=f"{base}/{os.path.relpath(path, ROOT)}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata(project).encode()
        info.size = len(data)
        sdist.addfile(info, io.BytesIO(data))
    return filename
