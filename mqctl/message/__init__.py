"""One message's story (read-only): find it, track it across the groups of its topic, and a
group's dead letters.

* :mod:`.ids`: the ids a message is known by: the offset message id
  (``MessageDecoder.decodeMessageId``) and the unique key (``MessageClientIDSetter``);
* :mod:`.find`: ``message find`` by key, unique key, offset message id or time range, on every
  broker of the topic, de-duplicated and bounded (``MQAdminImpl.queryMessage``'s requests);
* :mod:`.track` (pure rules) and :mod:`.track_capture` (the reads): ``message track``, one
  row per group; :mod:`.mqadmin_track`: mqadmin's ``MessageTrack`` rules, kept apart to
  compare with;
* :mod:`.dlq`: ``group dlq``, what ``%DLQ%<group>`` holds;
* :mod:`.rows`: the rows and notes of the three commands (pure).

Its ``__init__`` imports nothing: a command loads only what it shows.
"""
