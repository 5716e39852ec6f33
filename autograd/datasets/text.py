"""Text corpora bundled with autograd (no download), for language-model examples.

    text = load_text("tinyshakespeare")     # 1,115,394 characters of Shakespeare's plays

Each corpus is a gzip-compressed UTF-8 file next to this module, with its source and licence in
<name>_LICENSE.txt.
"""

import functools
import gzip
from importlib import resources

__all__ = ["load_text", "TEXTS"]

# name -> (file, exact length in characters): the length check catches a truncated copy.
TEXTS = {
    "tinyshakespeare": ("tinyshakespeare.txt.gz", 1_115_394),
}


@functools.lru_cache(maxsize=None)
def load_text(name):
    """The whole text of the bundled corpus `name` as a str (see TEXTS for the names).
    ValueError for an unknown name or a corrupted file."""
    if name not in TEXTS:
        raise ValueError(f"load_text(): unknown corpus {name!r}; expected one of "
                         f"{sorted(TEXTS)}")
    file, length = TEXTS[name]
    try:
        text = gzip.decompress(resources.files(__package__).joinpath(file).read_bytes())
        text = text.decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise ValueError(f"load_text(): the bundled {file} is corrupted ({e}); reinstall the "
                         f"package") from e
    if len(text) != length:
        raise ValueError(f"load_text(): the bundled {file} has {len(text)} characters, expected "
                         f"{length}; reinstall the package")
    return text
