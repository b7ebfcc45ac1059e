"""One download of a whole release: its folder as a ``.tar.gz`` (every file and ``SHA256SUMS``), streamed.

The tar stream is written block by block (headers from ``tarfile``, the files' bytes in 1 MiB reads) through
one gzip compressor, so a large release is never held in memory; ``tar -xzf`` then ``sha256sum -c
SHA256SUMS`` inside the unpacked folder checks it. Files are read through the release's storage, so the
archive streams from a bucket just as from a folder on disk.
"""

from __future__ import annotations

import tarfile
import zlib
from collections.abc import Iterator
from pathlib import PurePosixPath

from django.http import StreamingHttpResponse

from . import selectors
from .models import Release, ReleaseFile

_READ = 1 << 20
_TAR_BLOCK = 512


def archive_name(release: Release) -> str:
    return f"{PurePosixPath(release.out_dir).name}.tar.gz"


def _members(release: Release) -> list[tuple[str, str]]:
    """(name in the archive, path in the folder) of every recorded file that is in the release folder."""
    folder = selectors.release_folder(release)
    present = set(folder.files())
    top = PurePosixPath(release.out_dir).name
    return [(f"{top}/{relative}", relative)
            for relative in ReleaseFile.objects.filter(release=release).order_by("path").values_list("path", flat=True)
            if relative in present]


def stream_archive(release: Release) -> Iterator[bytes]:
    """The gzip-compressed tar of the release folder, in pieces, each file read in blocks through its storage."""
    folder = selectors.release_folder(release)
    gzip = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    for name, relative in _members(release):
        size = folder.size(relative)
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.mode = size, folder.modified(relative), 0o444
        if piece := gzip.compress(info.tobuf(format=tarfile.PAX_FORMAT)):
            yield piece
        with folder.open(relative) as stream:
            while block := stream.read(_READ):
                if piece := gzip.compress(block):
                    yield piece
        if piece := gzip.compress(b"\0" * (-size % _TAR_BLOCK)):
            yield piece
    yield gzip.compress(b"\0" * (2 * _TAR_BLOCK)) + gzip.flush()


def archive_response(release: Release) -> StreamingHttpResponse:
    response = StreamingHttpResponse(stream_archive(release), content_type="application/gzip")
    response["Content-Disposition"] = f'attachment; filename="{archive_name(release)}"'
    return response
