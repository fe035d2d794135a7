from mqctl.interrupt import hold_signals

hold_signals()  # a signal during the imports below is an interrupt, not a silent kill

from mqctl.cli import entrypoint  # noqa: E402

entrypoint()
