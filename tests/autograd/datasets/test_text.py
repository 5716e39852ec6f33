"""autograd.datasets.load_text: the bundled corpora load whole and unchanged, and bad names or
damaged files raise ValueError naming the function."""

import gzip
import hashlib

import pytest

from autograd.datasets import load_text, text


def test_tinyshakespeare_is_the_documented_file():
    corpus = load_text("tinyshakespeare")
    assert isinstance(corpus, str)
    assert len(corpus) == 1_115_394
    # the sha256 written in tinyshakespeare_LICENSE.txt
    assert hashlib.sha256(corpus.encode()).hexdigest() == (
        "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed")
    assert corpus.startswith("First Citizen:\nBefore we proceed any further, hear me speak.")
    assert len(set(corpus)) == 65


def test_unknown_name_raises():
    with pytest.raises(ValueError, match=r"load_text\(\): unknown corpus 'shakespeare'.*"
                                         r"tinyshakespeare"):
        load_text("shakespeare")


# (mtime=0: the same bytes in every process, so pytest-xdist's workers collect the same ids)
@pytest.mark.parametrize("payload, what", [(b"not gzip at all", "corrupted"),
                                           (gzip.compress(b"too short", mtime=0), "9 characters")],
                         ids=["not-gzip", "too-short"])
def test_damaged_file_raises(monkeypatch, tmp_path, payload, what):
    (tmp_path / "bad.txt.gz").write_bytes(payload)
    monkeypatch.setattr(text.resources, "files", lambda package: tmp_path)
    monkeypatch.setitem(text.TEXTS, "bad", ("bad.txt.gz", 100))
    text.load_text.cache_clear()
    try:
        with pytest.raises(ValueError, match=f"load_text\\(\\): the bundled bad.txt.gz.*{what}"):
            load_text("bad")
    finally:
        text.load_text.cache_clear()
