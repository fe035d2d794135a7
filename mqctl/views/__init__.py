"""The read views of a live cluster, one module per thing they show (read-only).

Each view is its types and pure rules, the capture that reads it over
:class:`mqctl.admin.Admin` (read-only requests only), and the pure building of its command's
rows and notes (``*_rows.py``), which returns a :class:`mqctl.render.Result`:

* :mod:`~mqctl.views.members`: a group's members as every broker sees them, and the
  consistency check (``mqctl consumers``); :mod:`~mqctl.views.members_rows` its rows;
* :mod:`~mqctl.views.progress`: a group's per-queue progress, its types and rules;
  :mod:`~mqctl.views.progress_capture` reads it, :mod:`~mqctl.views.progress_rows` builds the
  rows and notes of ``mqctl group progress`` and ``mqctl offsets show``;
* :mod:`~mqctl.views.dlq`: the ``%DLQ%<group>`` topic's queues;
* :mod:`~mqctl.views.existence`: whether the cluster knows a group;
* :mod:`~mqctl.views.groups`: every group of the cluster, one summary each (``mqctl groups``);
  :mod:`~mqctl.views.groups_rows` its rows;
* :mod:`~mqctl.views.topics`: the system-topic rule and the topic list (``mqctl topics``);
* :mod:`~mqctl.views.route`: a topic's route and the cluster's brokers (``mqctl route``,
  ``mqctl cluster``);
* :mod:`~mqctl.views.topic`: ``mqctl topic status`` and ``mqctl topic consumers``;
  :mod:`~mqctl.views.topic_rows` their rows;
* :mod:`~mqctl.views.message`: one stored message (``mqctl message show``);
  :mod:`~mqctl.views.message_rows` its rows;
* :mod:`~mqctl.views.group_config`: a group's subscription config on every broker
  (``mqctl group config``); :mod:`~mqctl.views.group_config_rows` its rows.

This ``__init__`` imports nothing: a command imports only the view it shows, so that
``mqctl --help`` and every other command start light.
"""
