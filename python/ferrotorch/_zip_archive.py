"""``torch.PyTorchFileWriter`` / ``torch.PyTorchFileReader``: the record-level
interface to PyTorch's zip checkpoint container (what ``torch.save`` writes and
``torch.load`` reads), over the same record writer ``ferrotorch.save`` uses.

Records are stored uncompressed under ``<archive name>/`` and start on 64-byte
boundaries; ``write_end_of_file`` adds ``version``, ``byteorder`` and
``.data/serialization_id`` as PyTorch's writer does.
"""

import io
import os
import sys
import zipfile

__all__ = ["PyTorchFileWriter", "PyTorchFileReader"]

_DEFAULT_VERSION = 3


def _as_bytes(data, size):
    if isinstance(data, str):
        data = data.encode()
    mv = memoryview(data).cast("B")
    if size > len(mv):
        raise RuntimeError(f"write_record: size {size} is larger than the {len(mv)} bytes given")
    return bytes(mv[:size])


class PyTorchFileWriter:
    """Writes records into a PyTorch zip container at ``file_name`` (a path) or into
    a writable binary buffer."""

    def __init__(self, file_name, compute_crc32=True, storage_alignment=64):
        from .serialization import _archive_name
        self._owns = isinstance(file_name, (str, os.PathLike))
        self._fh = open(file_name, "wb") if self._owns else file_name
        self._target = self._fh if getattr(self._fh, "seekable", lambda: False)() else io.BytesIO()
        self._zf = zipfile.ZipFile(self._target, "w", compression=zipfile.ZIP_STORED, allowZip64=True)
        self._name = _archive_name(file_name)
        self._written = set()
        self._version = _DEFAULT_VERSION
        self._finalized = False
        self._sid = "".join(str(b % 10) for b in os.urandom(40))

    def archive_name(self):
        """The directory the records live in: the file's stem, or ``archive`` for a buffer."""
        return self._name

    def serialization_id(self):
        """The random id written with the end of the file (empty before it)."""
        return self._sid if self._finalized else ""

    def set_min_version(self, version):
        """Raises the ``version`` record written at the end to at least ``version``."""
        self._version = max(self._version, int(version))

    def get_all_written_records(self):
        """The names of the records written so far."""
        return set(self._written)

    def write_record(self, name, data, size):
        """Writes the first ``size`` bytes of ``data`` (bytes-like or str) as record ``name``."""
        from .serialization import _write_record
        if self._finalized:
            raise RuntimeError("PyTorchFileWriter: cannot write a record after write_end_of_file()")
        if name in self._written:
            raise RuntimeError(f"Tried to serialize file twice: {name}")
        _write_record(self._zf, f"{self._name}/{name}", _as_bytes(data, size))
        self._written.add(name)

    def write_end_of_file(self):
        """Writes the closing records (``version``, ``byteorder``, ``.data/serialization_id``)
        and the zip directory."""
        if self._finalized:
            return
        from .serialization import _write_record
        for name, data in (("version", f"{self._version}\n".encode()), ("byteorder", sys.byteorder.encode()),
                           (".data/serialization_id", self._sid.encode())):
            if name not in self._written:
                _write_record(self._zf, f"{self._name}/{name}", data)
        self._zf.close()
        self._finalized = True
        if self._target is not self._fh:
            self._fh.write(self._target.getvalue())
        if self._owns:
            self._fh.close()
        elif hasattr(self._fh, "flush"):
            self._fh.flush()


class PyTorchFileReader:
    """Reads records of a PyTorch zip container from a path or a readable binary buffer."""

    def __init__(self, file_name):
        self._fh = open(file_name, "rb") if isinstance(file_name, (str, os.PathLike)) else file_name
        try:
            self._zf = zipfile.ZipFile(self._fh)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}") from None
        names = self._zf.namelist()
        self._prefix = names[0].split("/", 1)[0] + "/" if names and "/" in names[0] else ""
        self._infos = {i.filename[len(self._prefix):]: i for i in self._zf.infolist()
                       if i.filename.startswith(self._prefix)}

    def _info(self, name):
        info = self._infos.get(name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        return info

    def get_all_records(self):
        """The names of the records, in archive order, without the archive directory."""
        return list(self._infos)

    def has_record(self, name):
        """Whether the archive holds record ``name``."""
        return name in self._infos

    def get_record(self, name):
        """The bytes of record ``name``."""
        return self._zf.read(self._info(name))

    def get_record_size(self, name):
        """The size in bytes of record ``name``."""
        return self._info(name).file_size

    def get_record_header_offset(self, name):
        """Where record ``name``'s local header starts in the file."""
        return self._info(name).header_offset

    def get_record_offset(self, name):
        """Where record ``name``'s data starts in the file (after its local header)."""
        info = self._info(name)
        pos = self._fh.tell()
        try:
            self._fh.seek(info.header_offset + 26)
            head = self._fh.read(4)
        finally:
            self._fh.seek(pos)
        name_len = int.from_bytes(head[:2], "little")
        extra_len = int.from_bytes(head[2:], "little")
        return info.header_offset + 30 + name_len + extra_len

    def serialization_id(self):
        """The archive's serialization id, or "" when it has none."""
        return self.get_record(".data/serialization_id").decode() if self.has_record(".data/serialization_id") else ""
