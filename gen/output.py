"""Writing rendered files: every file or none (temporaries renamed into place)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import GenError


def write_files(files: dict[str, str], out_dir: str | Path) -> list[Path]:
    """Write every file or none: render to temporaries in out_dir, then rename into place."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise GenError(f"cannot create output folder {out}: {e.strerror}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise GenError(f"output folder {out} is not writable")
    temps: list[tuple[str, Path]] = []
    umask = os.umask(0)
    os.umask(umask)
    try:
        for name, text in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=out)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.chmod(tmp, 0o666 & ~umask)      # mkstemp makes 0600; give the usual file mode
            temps.append((tmp, out / name))
        for tmp, final in temps:
            os.replace(tmp, final)
    except OSError as e:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise GenError(f"cannot write into {out}: {e.strerror or e}") from None
    return [final for _, final in temps]
