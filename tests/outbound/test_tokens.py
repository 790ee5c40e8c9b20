"""Offline token counting: stock tiktoken, o200k_base, with the vocabulary from bpe-openai."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fastpad.outbound import tokens
from fastpad.outbound.tokens import VOCABULARIES, cache_file_name, count_tokens, encoding, ensure_vocabulary

SAMPLE = "Fastpad notes are made of blocks {#01JB2K7Q9XN4M8YV3TD0FZ5ERW}. Ünïcödé, 中文, emoji 🎉 and code: `x = 1`."


def test_counts_are_real_bpe_counts() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert encoding().name == "o200k_base"
    assert encoding().decode(encoding().encode_ordinary(SAMPLE)) == SAMPLE


@pytest.mark.filterwarnings("ignore::DeprecationWarning")   # bpe-openai uses a deprecated importlib call
def test_counts_agree_with_an_independent_implementation() -> None:
    import bpe_openai   # the Rust tokenizer from the package that ships the vocabulary

    other = bpe_openai.get_encoding("o200k_base")
    for text in (SAMPLE, "The quick brown fox " * 50, "def f(x):\n    return x ** 2\n"):
        assert count_tokens(text) == len(other.encode(text))


def test_special_token_text_counts_as_ordinary_text() -> None:
    assert count_tokens("<|endoftext|>") > 1


def test_cache_file_is_named_as_tiktoken_expects() -> None:
    url, expected = VOCABULARIES["o200k_base"]
    directory = ensure_vocabulary("o200k_base")
    path = directory / hashlib.sha1(url.encode()).hexdigest()
    assert path.name == cache_file_name("o200k_base")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == expected


def test_default_cache_is_inside_the_virtualenv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setattr(sys, "prefix", "/venv")
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    assert tokens._candidate_dirs()[0] == Path("/venv/share/fastpad/tiktoken")
    monkeypatch.setattr(sys, "prefix", "/usr")
    monkeypatch.setenv("XDG_CACHE_HOME", "/tmp/xdg")
    assert tokens._candidate_dirs() == [Path("/tmp/xdg/fastpad/tiktoken")]
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/chosen")
    assert tokens._candidate_dirs() == [Path("/chosen")]


def test_a_corrupt_cache_file_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    target = tmp_path / cache_file_name("cl100k_base")
    target.write_bytes(b"corrupt")
    assert ensure_vocabulary("cl100k_base") == tmp_path
    assert hashlib.sha256(target.read_bytes()).hexdigest() == VOCABULARIES["cl100k_base"][1]


def test_first_use_on_a_clean_machine_works_with_the_network_cut_off(tmp_path: Path) -> None:
    """A fresh process, an empty cache folder, every socket refused: the vocabulary comes from the package."""
    cache = tmp_path / "fresh-cache"
    script = textwrap.dedent(
        """
        import socket
        def refuse(*args, **kwargs):
            raise OSError("network use during offline token counting")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from fastpad.outbound.tokens import count_tokens
        print(count_tokens("hello world"))
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    env["TIKTOKEN_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"
    assert (cache / cache_file_name("o200k_base")).exists()


def test_unknown_vocabulary_is_refused() -> None:
    with pytest.raises(ValueError):
        ensure_vocabulary("p50k_base")
