"""One inspect_ai `.eval` log written a sample at a time (`evalkit export inspect`), in bounded memory.

The archive is inspect_ai's (the members its reader reads: `samples/<id>_epoch_<n>.json`,
`summaries.json`, `header.json`), each member made by inspect_ai's own pydantic types. evalkit writes
the zip itself because inspect_ai's writer takes a whole `EvalLog` in memory (`write_eval_log`), and its
recorder keeps every sample's summary and, written through, rescans them for each sample added: 1.36 GB
for 20,000 runs, and a MemoryError at 100,000 (issue 36). Here a sample is written as it is read, its
summary goes to a temporary file that becomes `summaries.json` at the end, and what stays in memory is
the set of entry names (to refuse a second sample under one name) and zipfile's directory.

Nothing reaches the output folder half-made or through a link: the log is written to a temporary file
beside its target (`mkstemp`: a new file, never an existing name or a link) and renamed onto it at the
end, which replaces a directory entry and never writes through a link. `check_target` refuses a link, a
file that exists (unless `--overwrite`; a results file even then), before anything is read or written.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import IO, Any

from evalkit.errors import OutputError, ResultsError
from evalkit.results.output_file import check_output

__all__ = ["LogArchive", "check_target"]

_SAMPLES = "samples/"


def check_target(path: Path, *, option: str, overwrite: bool) -> None:
    """`path` as a log `option` may write: not a link, not an existing file unless `overwrite`, and never a
    results file or a folder (`check_output`)."""
    where = f"{option} {path.parent}: {path.name}"
    # a link could point anywhere (a results file, another user's file): never written through
    if path.is_symlink():
        raise OutputError(f"{where} is a symbolic link: export never writes through one (remove it)")
    if path.exists() and not overwrite:
        raise OutputError(f"{where} exists: pass --overwrite to replace it")
    check_output(path, option=option)
    if path.exists() and not path.is_file():
        raise OutputError(f"{where} is not a regular file")


def _json(model: Any) -> bytes:
    return model.model_dump_json(exclude_none=True).encode()  # type: ignore[no-any-return]


class LogArchive:
    """One log being written: `add` each sample, then `close`; `publish` renames it onto its target."""

    def __init__(self, target: Path, *, option: str, expected: int) -> None:
        self.target, self.option, self.expected = target, option, expected
        self.written = 0
        self._names: set[str] = set()
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:60]}.", suffix=".tmp", dir=target.parent)
        except OSError as exc:
            raise self._failed(exc) from exc
        self.tmp = Path(tmp)
        self._file: IO[bytes] = os.fdopen(fd, "w+b")
        # deflate: what every inspect viewer reads (inspect_ai's own writer now uses zstandard)
        self._zip = zipfile.ZipFile(self._file, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=5)
        self._summaries: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  # closed by `close` or `discard`

    def add(self, sample: Any, run_id: str) -> None:
        """Write `sample` (an `EvalSample`) and its summary; a `ResultsError` if its entry is taken."""
        name = f"{_SAMPLES}{sample.id}_epoch_{sample.epoch}.json"
        # a zip may hold one name twice, and a viewer would show one of them: refused instead
        if name in self._names:
            raise ResultsError(
                f"run {run_id!r}: another run of its column has scenario {sample.metadata['scenario']!r} "
                f"and index {sample.epoch - 1}: an inspect log holds one sample per scenario and epoch"
            )
        self._names.add(name)
        try:
            self._zip.writestr(name, _json(sample))
            # the summaries go to a temporary file as one JSON list, written a sample at a time
            self._summaries.write(b"," if self.written else b"[")
            self._summaries.write(_json(sample.summary()))
        except OSError as exc:
            raise self._failed(exc) from exc
        self.written += 1

    def close(self, header: Any) -> None:
        """Write `summaries.json` and `header.json` (an `EvalLog` without samples) and check that the
        archive holds a distinct sample for each of the `expected` runs: none is lost silently."""
        try:
            self._summaries.write(b"]" if self.written else b"[]")
            self._summaries.seek(0)
            # zip64 up front: the member's size is not known until it is written, and may pass 4 GB
            with self._zip.open("summaries.json", "w", force_zip64=True) as member:
                shutil.copyfileobj(self._summaries, member, 1 << 20)
            self._zip.writestr("header.json", _json(header))
            stored = {i.filename for i in self._zip.infolist() if i.filename.startswith(_SAMPLES)}
            self._zip.close()
            self._file.close()
        except OSError as exc:
            raise self._failed(exc) from exc
        finally:
            self._summaries.close()
        if self.written != self.expected:
            raise ResultsError(
                f"{self.target.name}: {self.written} runs read of {self.expected} the first read counted: "
                "the results changed while they were exported"
            )
        if len(stored) != self.written:
            raise OutputError(f"{self.target.name}: {self.written} samples written, {len(stored)} stored: samples lost")
        os.chmod(self.tmp, 0o644)  # mkstemp's 0600 would hide the log from a viewer run by another user

    def publish(self, *, overwrite: bool) -> Path:
        """Rename the finished log onto its target (checked again: a link may have appeared meanwhile)."""
        check_target(self.target, option=self.option, overwrite=overwrite)
        try:
            os.replace(self.tmp, self.target)
        except OSError as exc:
            raise self._failed(exc) from exc
        return self.target

    def discard(self) -> None:
        """Remove the temporary file (after a failure): nothing half-made stays in the folder."""
        for handle in (self._zip, self._file, self._summaries):
            with contextlib.suppress(OSError, ValueError):  # closed already, or its last write failed
                handle.close()
        self.tmp.unlink(missing_ok=True)

    def _failed(self, exc: OSError) -> OutputError:
        return OutputError(
            f"{self.option} {self.target.parent}: cannot write {self.target.name}: {exc.strerror or exc}"
        )
