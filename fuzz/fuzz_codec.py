"""Coverage-guided fuzz target (atheris) for the codec: frames, headers, fastjson, hex captures.

    pip install -e '.[fuzz]'
    python fuzz/fuzz_codec.py -runs=1000000 -max_len=4096 fuzz/corpus    # see fuzz/README.md

The only exceptions allowed to escape the codec are its own typed errors
(:class:`mqctl.errors.ProtocolError` and subclasses). Anything else is a crash: atheris stops
and writes the input to ``crash-<sha>``; copy it to ``fuzz/regressions/`` so that
``tests/test_fuzz_regressions.py`` replays it forever (with the seed corpus, through
:func:`targets.one_input`, the same dispatch).
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from targets import one_input  # fuzz/targets.py: the dispatch, importable without atheris


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
