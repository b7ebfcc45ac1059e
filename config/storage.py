"""Where uploads and release folders live: Django's ``uploads`` and ``releases`` storages (``STORAGES``).

The embedded default keeps both on the local disk (``MEDIA_ROOT/imports``, ``GOLDSET_RELEASE_ROOT`` or
``MEDIA_ROOT/releases``); with ``AWS_STORAGE_BUCKET_NAME`` set they are prefixes of one S3-compatible bucket,
so a web process and a worker on different machines share nothing but the database, the broker and the
bucket (docs/deployment.md).

A stored location is kept in the database as a string: an absolute path is a file or folder on this machine's
disk (what a local storage gives, and ``build_release --out``); anything else is a name in the storage. Either
way it is read, listed and deleted through a :class:`~django.core.files.storage.Storage` — a
``FileSystemStorage`` over the path's parent for a local one.
"""

from __future__ import annotations

import errno
import io
import logging
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import IO, Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages

logger = logging.getLogger(__name__)

UPLOADS = "uploads"
RELEASES = "releases"
#: Bytes moved per read when copying between a storage and a local file: memory stays at this, whatever the size.
COPY_BLOCK = 1 << 20
#: The checksums file of a release folder (``exports.integrity``), written last: a folder without it is unfinished.
SUMS_NAME = "SHA256SUMS"


def bucket_storages(bucket: str, **options: Any) -> dict[str, dict[str, Any]]:
    """``STORAGES`` entries putting uploads and releases in an S3-compatible ``bucket`` (django-storages), under
    the prefixes ``uploads/`` and ``releases/``; ``options`` are S3Storage's (``endpoint_url``, …)."""
    common = {"bucket_name": bucket, "default_acl": None, **options,
              # A file read from the bucket is buffered in memory up to this size, beyond it in a temporary file.
              "max_memory_size": 8 << 20}
    backend = "storages.backends.s3.S3Storage"
    return {
        UPLOADS: {"BACKEND": backend, "OPTIONS": {**common, "location": "uploads", "file_overwrite": False}},
        # A retried build uploads its release again over what a cut-short upload left.
        RELEASES: {"BACKEND": backend, "OPTIONS": {**common, "location": "releases", "file_overwrite": True}},
    }


class ReleaseFolderStorage(FileSystemStorage):
    """The embedded default of ``releases``: ``GOLDSET_RELEASE_ROOT``, else ``MEDIA_ROOT/releases``, read when
    first used and again after either setting changes (as ``FileSystemStorage`` does for ``MEDIA_ROOT``)."""

    @cached_property
    def base_location(self) -> str:
        root = settings.GOLDSET_RELEASE_ROOT or Path(settings.MEDIA_ROOT) / "releases"
        return self._value_or_setting(self._location, str(root))

    def _clear_cached_properties(self, setting: str, **kwargs: Any) -> None:
        super()._clear_cached_properties(setting, **kwargs)
        if setting == "GOLDSET_RELEASE_ROOT":
            self.__dict__.pop("base_location", None)
            self.__dict__.pop("location", None)


def local_path(storage: Storage, name: str) -> Path | None:
    """The file ``name`` of ``storage`` on this machine's disk, or ``None`` for a remote storage."""
    try:
        return Path(storage.path(name))
    except NotImplementedError:
        return None


def describe(storage: Storage, name: str) -> str:
    """Where ``name`` is, for people: its local path, else ``s3://bucket/key`` (or ``alias:name``)."""
    path = local_path(storage, name)
    if path is not None:
        return str(path)
    bucket = getattr(storage, "bucket_name", None)
    prefix = getattr(storage, "location", "") or ""
    key = "/".join(part.strip("/") for part in (prefix, name) if part)
    return f"s3://{bucket}/{key}" if bucket else key


def resolve(location: str, alias: str) -> tuple[Storage, str]:
    """The storage and name of a recorded location (see the module's docstring)."""
    if os.path.isabs(location):
        path = Path(location)
        return FileSystemStorage(location=str(path.parent)), path.name
    return storages[alias], location


def record(storage: Storage, name: str) -> str:
    """The string to keep for ``name`` in ``storage``: its absolute local path, else the name itself."""
    path = local_path(storage, name)
    return str(path) if path is not None else name


# -- uploads ----------------------------------------------------------------------------------------


class UploadTooLarge(Exception):
    """The upload passed the size limit while it was being stored."""


#: ``OSError`` numbers meaning the storage has no room left (disk full, quota reached): 507 Insufficient Storage.
FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


class StorageError(Exception):
    """A file could not be stored: the storage is full (``full``) or failing (read-only, I/O error, the bucket
    unreachable). Whatever was written of it has been removed. ``config.middleware`` and the API's exception
    handler answer it with 507 (full) or 503 (failing) and a message for people."""

    def __init__(self, cause: BaseException) -> None:
        self.full = isinstance(cause, OSError) and cause.errno in FULL
        detail = os.strerror(cause.errno) if isinstance(cause, OSError) and cause.errno else type(cause).__name__
        super().__init__(f"the file could not be stored: {detail.lower()}")
        self.status = 507 if self.full else 503
        self.code = "storage_full" if self.full else "storage_unavailable"


def storage_error(error: BaseException) -> StorageError | None:
    """``error`` as a :class:`StorageError` when it is one, or an ``OSError`` of the disk rather than of the
    program (full, over quota, read-only, I/O error); ``None`` otherwise."""
    if isinstance(error, StorageError):
        return error
    if isinstance(error, OSError) and error.errno in (*FULL, errno.EROFS, errno.EIO):
        return StorageError(error)
    return None


class _Capped(io.RawIOBase):
    """A reader over ``source`` that raises :class:`UploadTooLarge` once more than ``limit`` bytes came."""

    def __init__(self, source: IO[bytes], limit: int) -> None:
        self._source, self.limit, self.read_bytes = source, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._source.read(len(buffer))
        self.read_bytes += len(data)
        if self.read_bytes > self.limit:
            raise UploadTooLarge
        buffer[: len(data)] = data
        return len(data)


def upload_save(upload: IO[bytes], folder: str, suffix: str, limit: int) -> tuple[str, int]:
    """Store ``upload`` in the ``uploads`` storage as ``folder/<random hex><suffix>``, streamed in blocks, and
    return (its recorded location, its size). Raises :class:`UploadTooLarge` past ``limit`` bytes (nothing is
    kept then); an empty upload is kept and its size, 0, returned for the caller to refuse."""
    storage = storages[UPLOADS]
    name = f"{folder}/{secrets.token_hex(16)}{suffix}"
    if hasattr(upload, "seek"):
        upload.seek(0)
    capped = _Capped(upload, limit)
    try:
        name = storage.save(name, File(io.BufferedReader(capped, COPY_BLOCK), name=name))
    except BaseException as error:
        # Nothing half-written stays: a partial file on a full disk would keep it full for every later upload.
        _delete_quietly(storage, name)
        if not isinstance(error, (OSError, *_bucket_errors())):
            raise
        if not isinstance(error, OSError):
            logger.warning("could not store %s", describe(storage, name), exc_info=True)
        raise StorageError(error) from error
    return record(storage, name), capped.read_bytes


def _bucket_errors() -> tuple[type[Exception], ...]:
    """The errors of an S3-compatible bucket's client (the bucket unreachable, a request refused), when installed."""
    try:
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError:
        return ()
    return BotoCoreError, ClientError


def _delete_quietly(storage: Storage, name: str) -> None:
    """Delete ``name`` if it is there; a storage failing again only leaves it where it was (the failure that
    brought us here is the one to report)."""
    try:
        storage.delete(name)
    except Exception:
        logger.warning("could not remove the partly stored %s", describe(storage, name), exc_info=True)


def upload_delete(location: str) -> None:
    """Delete a stored upload; one already gone is no error (a job may end twice)."""
    if location:
        storage, name = resolve(location, UPLOADS)
        storage.delete(name)


@contextmanager
def upload_local(location: str) -> Iterator[Path]:
    """The stored upload as a file on this machine: its own path for a local storage, else a temporary copy
    streamed from the storage in blocks (removed on leaving, whatever happened)."""
    storage, name = resolve(location, UPLOADS)
    path = local_path(storage, name)
    if path is not None:
        yield path
        return
    folder = tempfile.mkdtemp(prefix="goldset-upload-")
    try:
        copy = Path(folder) / PurePosixPath(name).name
        with storage.open(name, "rb") as source, open(copy, "wb") as target:
            shutil.copyfileobj(source, target, COPY_BLOCK)
        yield copy
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- release folders ---------------------------------------------------------------------------------


def move_into_place(temporary: Path, final: Path) -> None:
    """Rename the finished temporary folder to its final name in one step (same file system)."""
    if final.exists():
        raise FileExistsError(f"{final} already exists")
    os.rename(temporary, final)


@dataclass(frozen=True)
class StoredFolder:
    """A release folder: ``name`` in ``storage`` (a folder of a local storage, or a key prefix in a bucket)."""

    storage: Storage
    name: str

    @classmethod
    def of(cls, location: str) -> StoredFolder:
        return cls(*resolve(location, RELEASES))

    @property
    def local(self) -> Path | None:
        """The folder on this machine's disk, or ``None`` when it lives in object storage."""
        return local_path(self.storage, self.name)

    def key(self, relative: str) -> str:
        """The storage name of a file of the folder; refuses paths that would leave it."""
        parts = PurePosixPath(relative).parts
        if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
            raise FileNotFoundError(relative)
        return f"{self.name}/{relative}"

    def __str__(self) -> str:
        return describe(self.storage, self.name)

    def exists(self) -> bool:
        local = self.local
        return local.is_dir() if local is not None else bool(self.files())

    def files(self) -> list[str]:
        """Every file of the folder as a POSIX path relative to it, sorted."""
        local = self.local
        if local is not None:
            return sorted(p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file()) \
                if local.is_dir() else []
        found: list[str] = []
        pending = [""]
        while pending:
            sub = pending.pop()
            folders, names = self.storage.listdir(f"{self.name}/{sub}".rstrip("/"))
            found += [f"{sub}{name}" for name in names]
            pending += [f"{sub}{folder}/" for folder in folders]
        return sorted(found)

    def has(self, relative: str) -> bool:
        return self.storage.exists(self.key(relative))

    def open(self, relative: str) -> File:
        """A file of the folder, opened for reading in binary (``FileNotFoundError`` when missing)."""
        name = self.key(relative)
        if not self.storage.exists(name):
            raise FileNotFoundError(relative)
        return self.storage.open(name, "rb")

    def size(self, relative: str) -> int:
        return self.storage.size(self.key(relative))

    def modified(self, relative: str) -> int:
        return int(self.storage.get_modified_time(self.key(relative)).timestamp())

    def publish(self, folder: Path) -> None:
        """Put the finished local ``folder`` in place: renamed in one step on a local storage (same file
        system); uploaded file by file to a bucket, ``SHA256SUMS`` last, so a folder without it is an upload
        that was cut short."""
        local = self.local
        if local is not None:
            move_into_place(folder, local)
            return
        names = sorted((p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()),
                       key=lambda name: name == SUMS_NAME)
        for relative in names:
            with open(folder / relative, "rb") as stream:
                self.storage.save(self.key(relative), File(stream, name=relative))

    def delete(self) -> None:
        """Remove the folder and everything in it (read-only files of a local folder included)."""
        local = self.local
        if local is None:
            for relative in self.files():
                self.storage.delete(self.key(relative))
            return
        if local.exists():
            for path in [local, *local.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)
            shutil.rmtree(local)

    def staging(self) -> tuple[Path, Path, Path | None]:
        """(a folder to write the release into, a scratch file for its records, a temporary folder to remove
        afterwards), all on this machine: next to the final folder on a local storage (so the move into place is
        a rename; nothing to remove), else in a new folder of the temporary directory. Nothing is created here:
        the build creates the folder, where a full or read-only disk is recorded as its error."""
        local = self.local
        if local is not None:
            return local.parent / f".{local.name}.partial", local.parent / f".{local.name}.records", None
        scratch = Path(tempfile.gettempdir()) / f"goldset-release-{secrets.token_hex(8)}"
        return scratch / self.name, scratch / f".{self.name}.records", scratch
