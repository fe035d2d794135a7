"""Files mqctl writes and reads, one mechanism for each direction, and one check of every
path a user gives (:class:`PathRule`, :func:`path_error`).

Every path argument of every command is declared with a :class:`PathRule` (what it names,
read or written, a file or a directory) and checked by :func:`path_error` before any work
starts: its length (a component longer than the file system's ``NAME_MAX``, a path longer
than ``PATH_MAX``), what is there (a file, a directory, a FIFO, a device, a socket), its
symlinks (a loop, a dangling link, a link as the final component of an output path) and the
directories above it. ``tests/cli/test_path_arguments.py`` walks the command tree and fails on a
path
parameter that is not declared through it.

Writes are atomic (a reader, or a killed run, never sees half a file) and never destroy or
redirect what is at the path: a symlink as the final component of an output path is refused
(a link planted there could point at any file: as root from cron it would clobber it), while
links among the directories above it are followed (node_exporter's textfile directory may be
a link); anything there that is not a regular file (a device such as ``/dev/null`` or
``/dev/full``, a FIFO, a socket, a directory) is refused, exit 2. :func:`atomic_writer`
checks again when it writes. An existing file that is not mqctl's own is replaced only with
``--force`` (:func:`overwrite_error`).

Reads of small input files (config, plan, rollback, topology, scenario, TLS files) go through
:func:`read_text_capped`: a regular file of at most the documented cap of its kind
(:data:`INPUT_CAPS`, docs/errors.md), never a FIFO or device that would block or never end
(``/dev/zero``, ``/dev/urandom``, a named pipe), and text: a gzip, bzip2, xz or zip file, a
UTF-16 or UTF-32 file and a binary file are named as such, never a ``UnicodeDecodeError``.

The parts: :mod:`.files` (what is at a path, and opening it safely), :mod:`.paths` (the check of
a user's path), :mod:`.inputs` (capped reads, JSON, YAML), :mod:`.outputs` (atomic writes and
where they may go) and :mod:`.locks` (lock files); everything is named here.
"""

from __future__ import annotations

# the modules the writes go through (tests make their functions fail: os.fdopen, os.statvfs,
# tempfile.mkstemp)
import os as os
import tempfile as tempfile

from mqctl.fsutil.files import (
    DANGLING_HINT,
    LINK_HINT,
    NOT_REGULAR_HINT,
    PATH_HINTS,
    NotRegularFileError,
    dangling_parent,
    file_kind,
    link_text,
    local_path_error,
    nofollow_flags,
    nonblocking_flags,
    open_regular,
    shown_path,
    write_target,
)
from mqctl.fsutil.inputs import (
    INPUT_CAPS,
    MAX_INT_DIGITS,
    YAML_EXPANSION,
    decode_text,
    input_file_error,
    load_json,
    load_yaml,
    read_stream_capped,
    read_stream_text,
    read_text_capped,
    too_large,
)
from mqctl.fsutil.locks import (
    LockHolder,
    dir_lock,
    owned_lock,
)
from mqctl.fsutil.outputs import (
    MIN_FREE_BYTES,
    atomic_write_text,
    atomic_writer,
    check_output_file,
    default_mode,
    dir_is_own,
    dir_overwrite_error,
    file_bytes,
    fsync_dir,
    holds_text,
    open_append,
    output_file_error,
    output_location_error,
    overwrite_error,
)
from mqctl.fsutil.paths import (
    GLOB_CHARS,
    NAME_MAX,
    PATH_MAX,
    PathRule,
    check_path,
    path_error,
)

__all__ = [
    "fsync_dir",
    "INPUT_CAPS",
    "DANGLING_HINT",
    "GLOB_CHARS",
    "LINK_HINT",
    "LockHolder",
    "MAX_INT_DIGITS",
    "MIN_FREE_BYTES",
    "NAME_MAX",
    "NOT_REGULAR_HINT",
    "NotRegularFileError",
    "PATH_HINTS",
    "PATH_MAX",
    "PathRule",
    "YAML_EXPANSION",
    "atomic_write_text",
    "atomic_writer",
    "check_output_file",
    "check_path",
    "dangling_parent",
    "decode_text",
    "default_mode",
    "dir_is_own",
    "dir_lock",
    "dir_overwrite_error",
    "file_bytes",
    "file_kind",
    "holds_text",
    "input_file_error",
    "link_text",
    "load_json",
    "load_yaml",
    "local_path_error",
    "nofollow_flags",
    "nonblocking_flags",
    "open_append",
    "open_regular",
    "output_file_error",
    "output_location_error",
    "overwrite_error",
    "owned_lock",
    "path_error",
    "read_stream_capped",
    "read_stream_text",
    "read_text_capped",
    "shown_path",
    "too_large",
    "write_target",
]
