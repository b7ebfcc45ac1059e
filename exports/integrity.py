"""Checksums, read-only files, and verification of a release folder (its atomic move into place is the storage's:
``config.storage.StoredFolder.publish``).

Verification reads the folder through its storage (config/storage.py), on disk or in a bucket alike.
``SHA256SUMS`` uses the ``sha256sum`` layout (``<hex>  <path>``, sorted by path), so
``sha256sum -c SHA256SUMS`` checks a downloaded release without Goldset.
"""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

from config.storage import SUMS_NAME, StoredFolder

_BLOCK = 1 << 20


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def folder_files(folder: Path) -> list[str]:
    """Every regular file under ``folder`` as a POSIX path relative to it, sorted."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def write_sums(folder: Path) -> dict[str, str]:
    """Hash every file (except the sums file itself) and write ``SHA256SUMS``; return {path: sha256}."""
    sums = {name: sha256_file(folder / name) for name in folder_files(folder) if name != SUMS_NAME}
    (folder / SUMS_NAME).write_text("".join(f"{digest}  {name}\n" for name, digest in sums.items()),
                                    encoding="utf-8")
    return sums


def _stored(folder: Path | StoredFolder) -> StoredFolder:
    return folder if isinstance(folder, StoredFolder) else StoredFolder.of(str(Path(folder).resolve()))


def _sha256_stored(folder: StoredFolder, name: str) -> str:
    digest = hashlib.sha256()
    with folder.open(name) as stream:
        while block := stream.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def read_sums(folder: Path | StoredFolder) -> dict[str, str]:
    with _stored(folder).open(SUMS_NAME) as stream:
        text = stream.read().decode("utf-8")
    sums: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ValueError(f"{SUMS_NAME} line {number} is not '<sha256>  <path>'")
        sums[name] = digest
    return sums


def verify_folder(folder: Path | StoredFolder) -> dict[str, object]:
    """Re-hash a release folder (on disk or in a bucket) against its ``SHA256SUMS``, reading each file in
    blocks through its storage.

    ``ok`` only when every listed file exists with its hash and no unlisted file was added.
    """
    place = _stored(folder)
    if not place.exists():
        return {"ok": False, "folder": str(place), "error": "no such folder"}
    if not place.has(SUMS_NAME):
        return {"ok": False, "folder": str(place), "error": f"{SUMS_NAME} is missing"}
    try:
        listed = read_sums(place)
    except ValueError as error:
        return {"ok": False, "folder": str(place), "error": str(error)}
    present = set(place.files()) - {SUMS_NAME}
    missing = sorted(set(listed) - present)
    unlisted = sorted(present - set(listed))
    changed = sorted(name for name in set(listed) & present if _sha256_stored(place, name) != listed[name])
    return {"ok": not (missing or unlisted or changed), "folder": str(place), "files": len(listed),
            "missing": missing, "changed": changed, "unlisted": unlisted}


def make_read_only(folder: Path) -> None:
    """Files r--r--r--, folders r-xr-xr-x: a published release cannot be edited in place by accident."""
    read_only = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
    for path in sorted(folder.rglob("*"), reverse=True):
        path.chmod(read_only | (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH if path.is_dir() else 0))
    folder.chmod(read_only | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
