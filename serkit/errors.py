"""The errors serkit raises, all under one root so callers can catch them together."""

from __future__ import annotations


class SerkitError(Exception):
    """Root of every error serkit raises on purpose."""


class UnknownCodec(SerkitError, KeyError):
    """No codec is registered under that id."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class CodecNotInstalled(SerkitError):
    """The library behind a codec is missing or lacks the part the codec needs."""


class CodecConflict(SerkitError):
    """A second registration tried to replace an existing codec."""


class EncodeError(SerkitError):
    """The library failed to encode an object; the library's error is the __cause__."""


class DecodeError(SerkitError):
    """The library failed to decode a payload; the library's error is the __cause__."""


class UnknownFixture(SerkitError, KeyError):
    """No fixture is registered under that id."""

    def __str__(self) -> str:
        return str(self.args[0])


class FixtureSourceError(SerkitError):
    """A fetched fixture source is missing, unreachable or fails its sha256 check."""


class DocumentError(SerkitError):
    """A user's document is missing, too large, refused (a pickle), or no reader can read it."""


class BadLimit(DocumentError):
    """A limit the person set (a --max-* flag, a SERKIT_MAX_* variable) is not a size or a
    count serkit can use: a usage error (exit 2), as argparse's own."""


class FixtureChanged(SerkitError):
    """A declared document no longer has the content hash it was declared with."""


class DocumentLimitError(DocumentError):
    """A user's document crosses a limit (bytes, nodes, depth, aliases) or holds itself."""


class RefusedFile(DocumentError):
    """A file refused before or while it is read: outside its folder, not a regular file,
    over its size cap, or nesting deeper than its depth cap. `rule` is the line without
    the file's name, for a caller that names the file itself."""

    def __init__(self, message: str, rule: str) -> None:
        super().__init__(message)
        self.rule = rule


class RefusedFileLimit(RefusedFile, DocumentLimitError):
    """A file over its size cap, or nesting past its depth cap."""


class RefusedTarget(SerkitError):
    """A place serkit was to write holds a symbolic link, a FIFO, a device or a folder,
    or a folder on the way is a link: refused, nothing written there."""


class NoSchema(SerkitError):
    """No record type fits the document (mixed types in one list, bytes...), or a schema
    codec cannot express the one that does (Avro maps with int keys): the reason says which."""


class SchemaChanged(SerkitError):
    """A fixture's derived schema no longer has the hash it is pinned to: the inference changed."""
