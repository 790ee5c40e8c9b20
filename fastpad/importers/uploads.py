"""Where uploaded archives wait for their import: one file per import in a spool folder.

Parts are written at their offset (not appended), so a part re-sent after a
lost acknowledgement overwrites the same bytes instead of duplicating them.
The file is removed once its import finished, was cancelled or refused.
"""

from __future__ import annotations

import os
from pathlib import Path


class UploadSpool:
    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def path(self, import_id: str) -> Path:
        return self.folder / f"{import_id}.zip"

    def create(self, import_id: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path(import_id), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.close(fd)

    def write(self, import_id: str, offset: int, data: bytes) -> None:
        with open(self.path(import_id), "r+b") as handle:
            handle.seek(offset)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())

    def discard(self, import_id: str) -> None:
        self.path(import_id).unlink(missing_ok=True)
