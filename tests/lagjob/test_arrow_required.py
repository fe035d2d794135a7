"""The lag report's kernel runs on PySpark's Arrow path: without pyarrow, numpy or pandas the
job stops before the JVM starts and says what to install."""

from __future__ import annotations

import pytest


def test_a_run_without_the_arrow_modules_says_what_to_install(monkeypatch):
    from mqctl.errors import ExitCode, UsageError
    from mqctl.lagjob import session
    from mqctl.lagjob.session import require_arrow

    require_arrow()  # (this checkout installs them)
    real = session.find_spec
    monkeypatch.setattr(session, "find_spec",
                        lambda name, *a: None if name == "pyarrow" else real(name, *a))
    with pytest.raises(UsageError) as e:
        require_arrow()
    assert "pyarrow" in str(e.value) and "numpy" not in str(e.value)
    assert "mqctl[job]" in (e.value.hint or "") and e.value.exit_code == ExitCode.USAGE
