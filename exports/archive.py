"""One download of a whole release: its folder as a ``.tar.gz`` (every file and ``SHA256SUMS``), streamed.

The tar stream is written block by block (headers from ``tarfile``, the files' bytes in 1 MiB reads) through
one gzip compressor, so a large release is never held in memory; ``tar -xzf`` then ``sha256sum -c
SHA256SUMS`` inside the unpacked folder checks it.
"""

from __future__ import annotations

import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from django.http import StreamingHttpResponse

from .models import Release, ReleaseFile

_READ = 1 << 20
_TAR_BLOCK = 512


def archive_name(release: Release) -> str:
    return f"{Path(release.out_dir).name}.tar.gz"


def _members(release: Release) -> list[tuple[str, Path]]:
    """(name in the archive, file) of every recorded file that is inside the release folder."""
    folder = Path(release.out_dir).resolve()
    members = []
    for relative in ReleaseFile.objects.filter(release=release).order_by("path").values_list("path", flat=True):
        path = (folder / relative).resolve()
        if path.is_relative_to(folder) and path.is_file():
            members.append((f"{folder.name}/{relative}", path))
    return members


def stream_archive(release: Release) -> Iterator[bytes]:
    """The gzip-compressed tar of the release folder, in pieces."""
    gzip = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    for name, path in _members(release):
        stat = path.stat()
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.mode = stat.st_size, int(stat.st_mtime), 0o444
        if piece := gzip.compress(info.tobuf(format=tarfile.PAX_FORMAT)):
            yield piece
        with open(path, "rb") as stream:
            while block := stream.read(_READ):
                if piece := gzip.compress(block):
                    yield piece
        if piece := gzip.compress(b"\0" * (-stat.st_size % _TAR_BLOCK)):
            yield piece
    yield gzip.compress(b"\0" * (2 * _TAR_BLOCK)) + gzip.flush()


def archive_response(release: Release) -> StreamingHttpResponse:
    response = StreamingHttpResponse(stream_archive(release), content_type="application/gzip")
    response["Content-Disposition"] = f'attachment; filename="{archive_name(release)}"'
    return response
