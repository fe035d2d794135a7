from mqctl.cli import entrypoint

entrypoint()
